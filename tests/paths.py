"""Where the tests find the repository's files, wherever in ``tests/`` a test module lives."""

from __future__ import annotations

from pathlib import Path

#: The repository (README.md, templates/, notebooks/, pyproject.toml).
ROOT = Path(__file__).resolve().parent.parent
#: ``tests/`` itself: the shared helpers (hostile.py, browser.py...) and the gold files.
TESTS = ROOT / "tests"
#: The gold outputs the report renderers are compared with (``python tests/gold/regen.py``).
GOLD = TESTS / "gold"
