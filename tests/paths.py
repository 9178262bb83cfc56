"""Where the tests find the repository's files, wherever in ``tests/`` a test module lives."""

from __future__ import annotations

from pathlib import Path

#: The repository (README.md, templates/, notebooks/, pyproject.toml).
ROOT = Path(__file__).resolve().parent.parent
#: ``tests/`` itself: the shared helpers (hostile.py, browser.py...) and the gold files.
TESTS = ROOT / "tests"
#: The gold outputs the report renderers are compared with (``python tests/gold/regen.py``).
GOLD = TESTS / "gold"
#: The user documentation: the README and the pages of the site (``mkdocs.yml``).
DOCS = ROOT / "docs"


def user_docs() -> str:
    """The README and every page of ``docs/``, one after the other (sections are found by
    their headings wherever they live)."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return "\n\n".join(p.read_text(encoding="utf-8") for p in pages)
