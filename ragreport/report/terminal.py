"""Plain-text rendering of a report for the terminal (``ragreport check`` / ``report``)."""

from __future__ import annotations

from .model import Report

__all__ = ["render_failures", "render_terminal"]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, r in enumerate(rows):
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def render_terminal(report: Report) -> str:
    """Targets table (with PASS/FAIL words) and the summary table, as aligned text."""
    lines = [f"{report.title}: {len(report.runs)} run(s), "
             f"{report.health[0].evaluated if report.health else 0} queries evaluated"]
    if report.targets:
        rows = [["measure", "target", *(f"{r}" for r in report.runs), "result"]]
        for t in report.targets:
            cells = [f"{c.shown} {'PASS' if c.passed else 'FAIL'}" for c in t.cells]
            rows.append([t.measure, f"{t.op} {t.threshold_text}", *cells,
                         "pass" if t.passed else "FAIL"])
        lines += ["", "Targets", *_table(rows)]
    rows = [["measure", *report.runs]]
    for s in report.summary:
        rows.append([s.measure, *(f"{c.shown} {c.delta_text}".rstrip() for c in s.cells)])
    lines += ["", f"Summary (baseline: {report.baseline})", *_table(rows)]
    return "\n".join(lines) + "\n"


def render_failures(report: Report) -> str:
    """One line per failed target check: measure, value, target and run."""
    return "".join(
        f"FAILED {t.measure}: {c.shown} is not {t.op} {t.threshold_text} (run {c.run!r})\n"
        for t, c in report.failed_checks
    )
