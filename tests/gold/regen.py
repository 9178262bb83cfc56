"""Rewrite the gold Markdown and JSON reports of the embedded example.

Run ``python tests/gold/regen.py`` after an *intended* change to the Markdown or JSON output, then
review ``git diff tests/gold`` before committing. ``tests/report/test_report_markdown.py`` and
``tests/report/test_report_json.py`` build the same report with :func:`gold_outputs` and compare it
byte for byte with the files written here.

The report is the example's two runs (BM25 baseline, TF-IDF), the default targets, the query and
document texts, a fixed time and command, and the input files named by their path relative to the
package directory, so the gold files do not depend on the checkout location.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragreport.report import Report

GOLD_DIR = Path(__file__).resolve().parent
GENERATED_AT = "2026-01-01T00:00:00Z"
COMMAND = "ragreport report --example"
FILES = {"example.md": "markdown", "example.json": "json"}
#: The slices gold report (``--slices``): the example with ``example_slices.tsv`` and the
#: targets of ``example_slices_targets.toml`` (``[targets.slices.NAME]``).
SLICES_FILES = {"example_slices.md": "markdown", "example_slices.json": "json"}
SLICES_COMMAND = ("ragreport report --example --slices tests/gold/example_slices.tsv "
                  "--targets tests/gold/example_slices_targets.toml")


def example_report() -> Report:
    """The report the gold files hold (a :class:`ragreport.report.Report`)."""
    import ragreport
    from ragreport.examples import example_files
    from ragreport.io import load_docs, load_queries
    from ragreport.report import InputFile, build_report
    from ragreport.targets import default_targets

    files = example_files()
    package = Path(ragreport.__file__).resolve().parent

    def stable(role: str, path: Path) -> InputFile:
        f = InputFile.from_path(role, path)
        rel = Path(path).resolve().relative_to(package).as_posix()
        return InputFile(f.role, f.name, rel, f.sha256, f.size)

    inputs = [stable("qrels", files.qrels), *(stable("run", p) for p in files.runs),
              stable("queries", files.queries), stable("docs", files.docs)]
    results = [ragreport.evaluate(files.qrels, p) for p in files.runs]
    return build_report(results, default_targets(), queries=load_queries(files.queries),
                        docs=load_docs(files.docs), generated_at=GENERATED_AT, command=COMMAND,
                        inputs=inputs)


def example_slices_report() -> Report:
    """The slices gold report: :func:`example_report`'s inputs, the slices of
    ``example_slices.tsv`` and the targets (whole run and per slice) of
    ``example_slices_targets.toml``."""
    import ragreport
    from ragreport.examples import example_files
    from ragreport.io import load_docs, load_queries
    from ragreport.io.slices import load_slices
    from ragreport.io.targets import load_slice_targets, load_targets
    from ragreport.report import build_report

    files = example_files()
    targets_path = GOLD_DIR / "example_slices_targets.toml"
    # the file names relative to this folder, so that no message depends on the checkout
    slices = load_slices(_relative(GOLD_DIR / "example_slices.tsv"))
    targets = load_targets(_relative(targets_path))
    slice_targets = load_slice_targets(_relative(targets_path))
    results = [ragreport.evaluate(files.qrels, p) for p in files.runs]
    return build_report(results, targets, queries=load_queries(files.queries),
                        docs=load_docs(files.docs), generated_at=GENERATED_AT,
                        command=SLICES_COMMAND, slices=slices, slice_targets=slice_targets)


def _relative(path: Path) -> str:
    """``path`` as ``tests/gold/NAME`` (the current folder is moved to the repository root
    while it is read: see :func:`_at_root`)."""
    return f"tests/gold/{path.name}"


def gold_outputs() -> dict[str, str]:
    """File name -> text, as the current code renders the example."""
    report = example_report()
    out = {"example.md": report.to_markdown(), "example.json": report.to_json()}
    with _at_root():
        sliced = example_slices_report()
    return {**out, "example_slices.md": sliced.to_markdown(),
            "example_slices.json": sliced.to_json()}


class _at_root:
    """The repository root as the current folder, for a block (the slices gold report names
    its inputs ``tests/gold/...`` as the command line would)."""

    def __enter__(self) -> None:
        import os

        self.saved = os.getcwd()
        os.chdir(GOLD_DIR.parent.parent)

    def __exit__(self, *exc: object) -> None:
        import os

        os.chdir(self.saved)


def main() -> int:
    for name, text in gold_outputs().items():
        path = GOLD_DIR / name
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        # newline="" keeps "\n" on every platform: the comparison is byte for byte
        with path.open("w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        print(f"{'unchanged' if old == text else 'rewrote'} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
