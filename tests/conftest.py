"""Shared fixtures: the read-only reference data in ../shared, the embedded example.

The test modules live in folders that mirror the package (``tests/core/``, ``tests/report/``,
``tests/hostile/``...) and import the shared helpers (``hostile``, ``browser``, ``paths``...)
and each other's fixtures by module name: ``tests/`` and every folder of it are put on
``sys.path`` here, before any test module is collected, whatever the collection order.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_TESTS = Path(__file__).resolve().parent
for _folder in [_TESTS, *sorted(p for p in _TESTS.iterdir()
                                if p.is_dir() and p.name not in ("gold", "__pycache__"))]:
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))
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
