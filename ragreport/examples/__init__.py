"""The embedded example: Python documentation passages, graded judgments, two real runs.

Made by ``scripts/build_example.py`` from CPython's ``pydoc_data.topics`` (see
``ragreport/examples/pydoc/README.md``). Used by ``--example``, the notebooks and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["EXAMPLE_DIR", "ExampleFiles", "example_files"]

EXAMPLE_DIR = Path(__file__).resolve().parent / "pydoc"


@dataclass(frozen=True)
class ExampleFiles:
    """Paths of the embedded example's files."""

    qrels: Path
    runs: tuple[Path, ...]
    queries: Path
    docs: Path
    targets: Path
    """The example's targets: one both runs pass, one both fail, one only BM25 passes."""


def example_files() -> ExampleFiles:
    """Paths of the embedded example (qrels, the BM25 and TF-IDF runs, query and doc texts,
    and its targets).

    Examples
    --------
    >>> files = example_files()
    >>> [p.name for p in files.runs]
    ['run_bm25.txt', 'run_tfidf.txt']
    """
    return ExampleFiles(
        qrels=EXAMPLE_DIR / "qrels.txt",
        runs=(EXAMPLE_DIR / "run_bm25.txt", EXAMPLE_DIR / "run_tfidf.txt"),
        queries=EXAMPLE_DIR / "queries.tsv",
        docs=EXAMPLE_DIR / "docs.jsonl",
        targets=EXAMPLE_DIR / "targets.toml",
    )
