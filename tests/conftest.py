"""Shared fixtures: the read-only reference data in ../shared, the embedded example."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("RAGREPORT_SHARED", ROOT.parent / "shared"))
CONFORMANCE = SHARED / "conformance" / "trec_eval"


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    """trec_eval's test suite. Missing data is a failure, never a skip."""
    if not (CONFORMANCE / "out.test").is_file():
        pytest.fail(f"trec_eval conformance data not found at {CONFORMANCE} "
                    "(set RAGREPORT_SHARED to the shared/ folder)")
    return CONFORMANCE


@pytest.fixture(scope="session")
def seed_tutorial() -> str:
    path = SHARED / "seed" / "retrieval-metrics-tutorial.txt"
    if not path.is_file():
        pytest.fail(f"seed tutorial not found at {path}")
    return path.read_text(encoding="utf-8")
