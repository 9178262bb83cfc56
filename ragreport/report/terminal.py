"""Plain-text rendering of a report for the terminal (``ragreport check`` / ``report``).

Every user string (title, run names, measure names, messages that quote them) goes through
:func:`ragreport.textout.terminal_safe`: no control character reaches the terminal and no line
can be read by a CI runner as a workflow command.
"""

from __future__ import annotations

from ..present import p_pair_text, plural
from ..textout import terminal_safe
from .breakdowns import DocumentReport
from .cells import JudgmentSources, agreement_text, by_source_rows, ppi_rows
from .model import Report

__all__ = ["render_failures", "render_terminal"]


def _table(rows: list[list[str]]) -> list[str]:
    rows = [[terminal_safe(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, r in enumerate(rows):
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def render_terminal(report: Report) -> str:
    """Targets table (with PASS/FAIL words) and the summary table, as aligned text."""
    evaluated = report.health[0].evaluated if report.health else 0
    lines = [f"{terminal_safe(report.title)}: {plural(len(report.runs), 'run')}, "
             f"{plural(evaluated, 'query', 'queries')} evaluated"]
    if report.targets:
        rows = [["measure", "target", *(f"{r}" for r in report.runs), "result"]]
        for t in report.targets:
            by_run = {c.run: c for c in t.cells}  # a stored baseline has no target cell
            cells = [f"{c.shown} {'PASS' if c.passed else 'FAIL'}"
                     + (" (inconclusive)" if c.inconclusive else "") if c is not None else "-"
                     for c in (by_run.get(r) for r in report.runs)]
            rows.append([t.measure, f"{t.op} {t.threshold_text}", *cells,
                         "pass" if t.passed else "FAIL"])
        level = (" (document level)" if report.document is not None
                 and report.document.target_level == "document" else "")
        lines += ["", "Targets" + level, *_table(rows)]
        lines += _tie_lines(report)
        lines += _unjudged_lines(report)
    lines += _drift_lines(report)
    if report.judgments is not None:
        lines += _judgment_lines(report, report.judgments)
    rows = [["measure", *report.runs]]
    for s in report.summary:
        by = {c.run: c for c in s.cells}
        rows.append([s.measure, *(f"{c.shown}{f' (total {c.total_text})' if c.total_text else ''}"
                                  f" {c.delta_text}".rstrip() if c is not None else "-"
                                  for c in (by.get(r) for r in report.runs))])
    lines += ["", f"Summary (baseline: {terminal_safe(report.baseline)})", *_table(rows)]
    lines += _latency_lines(report)
    if report.stats is not None:
        lines += ["", "Intervals and tests: " + report.stats.describe()]
        rows = [["measure", *report.runs]]
        for s in report.summary:
            cells = []
            by = {c.run: c for c in s.cells}
            for c in (by.get(r) for r in report.runs):
                if c is None:
                    cells.append("-")
                    continue
                mark = " *" if c.significant else ""
                p = "" if c.p_value is None else \
                    f" p = {p_pair_text(c.shown_raw_p, c.p_value, c.family)}{mark}"
                cells.append(f"{c.ci_text}{p}")
            rows.append([s.measure, *cells])
        lines += _table(rows)
    if report.document is not None:
        lines += _document_lines(report, report.document)
    if report.drops:
        lines += ["", f"Drop checks (max drop {report.drops[0].max_drop:g})"]
        for d in report.drops:
            lines.append(("FAIL " if d.failed else "?    " if d.inconclusive else "ok   ")
                         + terminal_safe(d.message))
            if d.unjudged is not None and d.unjudged.depends:
                lines.append(f"     WARNING {terminal_safe(d.unjudged.text)}")
    lines += _slice_lines(report)
    return "\n".join(lines) + "\n"


#: What a target is checked on, as a failure line names it (nothing for the mean).
_ON = {"ci_lower": "CI lower bound ", "ppi_lower": "PPI lower bound "}


def render_failures(report: Report) -> str:
    """One line per failed target check (measure, value, target, run) and per failed
    ``--max-drop`` check (measure, drop, its interval, p-value)."""
    level = (", document level" if report.document is not None
             and report.document.target_level == "document" else "")
    lines = [
        f"FAILED {terminal_safe(t.measure)}: {_ON.get(c.on, '')}"
        + (f"{c.shown} is {t.op} {t.threshold_text} but depends on unjudged documents "
           "(--unjudged fail)" if c.unjudged else f"{c.shown} is not {t.op} {t.threshold_text}"
           + ("; inconclusive: the interval holds the threshold (on_inconclusive fail)"
              if c.inconclusive else ""))
        + f" (run {terminal_safe(repr(c.run))}{level})\n"
        for t, c in report.failed_checks
    ]
    lines += [f"FAILED drop {terminal_safe(d.message)}"
              + (f"; {terminal_safe(d.unjudged.text)} (--unjudged fail)"
                 if d.unjudged_failed and d.unjudged is not None else "")
              + (" (on_inconclusive fail)" if d.inconclusive and not d.unjudged_failed
                 else "") + "\n"
              for d in report.drops if d.failed]
    if report.slices is not None:  # --slices: a failed slice target names the slice
        lines += [
            f"FAILED slice {terminal_safe(repr(s.name))}: {terminal_safe(t.measure)}: "
            f"{_ON.get(c.on, '')}"
            + (f"{c.shown} is not {t.op} {t.threshold_text}" if c.value is not None
               else f"not checked against {t.op} {t.threshold_text} ({c.reason})")
            + f" (run {terminal_safe(repr(c.run))}, "
              f"{plural(s.queries.get(c.run, 0), 'query', 'queries')})\n"
            for s, t, c in report.slices.failed_checks]
    return "".join(lines)


def _document_lines(report: Report, doc: DocumentReport) -> list[str]:
    """Chunk and document level side by side, and the redundancy at K (``--doc-map``)."""
    rows = [["measure", *(f"{r} chunks / documents" for r in report.runs)]]
    for row in doc.summary:
        rows.append([row.measure, *(f"{c.chunk_shown} / {c.document_shown}" for c in row.cells)])
    lines = ["", f"Chunks and documents ({plural(doc.chunks, 'chunk')} of "
                 f"{plural(doc.documents, 'document')}; judgments per {doc.judgment_level})",
             *_table(rows)]
    lines += [f"redundancy@{d.k} ({terminal_safe(d.run)}): {d.shown} of the top {d.k} chunks "
              f"belong to a document ranked above (mean; {d.queries_affected} of "
              f"{plural(d.queries, 'query', 'queries')})" for d in doc.runs]
    return lines


def _tie_lines(report: Report) -> list[str]:
    """A warning per target decision that the order of tied scores could flip, and the tie
    exposure of the target measures when some query depends on it (:mod:`ragreport.core.ties`)."""
    exposed = [t for t in report.ties if t.exposed]
    if not exposed:
        return []
    rows = [["measure", "run", "cut", "ties across cut", "tie-dependent", "over tie orders"]]
    rows += [[t.measure, t.run, t.cut or "-", str(t.straddling), t.dependent_text,
              t.interval_cell] for t in exposed]
    out = ["", "Tie exposure (queries of each run; mean over all orders of tied scores)",
           *_table(rows)]
    return out + [f"WARNING {terminal_safe(t.message)}" for t in report.ties if t.note]


def _judgment_lines(report: Report, j: JudgmentSources) -> list[str]:
    """Who judged, the sources' agreement and the measures from each source alone."""
    lines = ["", f"Judgments: {terminal_safe(j.text)}"]
    lines += [f"Agreement: {terminal_safe(agreement_text(g))}" for g in j.agreements]
    if j.by_source:
        rows = by_source_rows(j, report.runs, report.means)
        lines += ["", "Measures from each source alone",
                  *_table([[terminal_safe(c) for c in r] for r in rows])]
    if j.ppi:
        lines += ["", "Prediction-powered intervals (people's judgments corrected by a model's)",
                  *_table([[terminal_safe(c) for c in r] for r in ppi_rows(j)])]
    return lines


def _unjudged_lines(report: Report) -> list[str]:
    """A warning per target decision that the unjudged documents could flip
    (:mod:`ragreport.analysis.unjudged_checks`), after a blank line."""
    lines = [f"WARNING {terminal_safe(u.message)}" for u in report.unjudged if u.note]
    return ["", *lines] if lines else []


def _latency_lines(report: Report) -> list[str]:
    """The retriever's latency per query (p50, p95, max in ms) of the runs that carry it."""
    if not report.latency:
        return []
    by = {t.run: t.texts for t in report.latency}
    rows = [["latency (ms)", *report.runs]]
    for i, label in enumerate(("p50", "p95", "max")):
        rows.append([label, *(by[r][i] if r in by else "-" for r in report.runs)])
    return ["", "Latency per query (ms)", *_table(rows)]

def _slice_lines(report: Report) -> list[str]:
    """Query slices (``--slices``): the failing slices first, each slice's queries and the
    shown measures per run (``*``: significantly different from the baseline)."""
    sl = report.slices
    if sl is None:
        return []
    rows = [["slice", "queries", *(f"{m} {r}" for m in sl.measures[:3] for r in report.runs),
             "targets"]]
    for s in sl.ordered:
        by = {row.measure: {c.run: c for c in row.cells} for row in s.rows}
        cells = []
        for m in sl.measures[:3]:
            for r in report.runs:
                c = by.get(m, {}).get(r)
                cells.append("-" if c is None else f"{c.shown}{' *' if c.significant else ''}")
        verdict = "-" if not s.targets else ("pass" if s.passed else "FAIL")
        rows.append([s.name, f"{s.n}{' (few)' if s.few else ''}", *cells, verdict])
    failing = len(report.verdict.failing_slices)
    head = (f"Slices ({plural(len(sl.slices), 'slice')} from {sl.source}"
            + (f"; {failing} failing" if failing else "") + ")")
    notes = []
    if any(s.few for s in sl.slices):
        notes.append(f"(few): fewer than {plural(sl.min_queries, 'query', 'queries')}, "
                     "no interval or test")
    if sl.unknown:
        notes.append(f"{plural(sl.unknown, 'query id')} of the slices "
                     f"{'was' if sl.unknown == 1 else 'were'} not evaluated")
    return ["", terminal_safe(head), *_table(rows), *(terminal_safe(n) for n in notes)]


def _drift_lines(report: Report) -> list[str]:
    """The stored baseline (``--baseline-report``) and each drift check, measured values and
    thresholds (:mod:`ragreport.analysis.drift`)."""
    d = report.drift
    if d is None:
        return []
    head = (f"Baseline drift: baseline {terminal_safe(repr(d.run))} from the stored report "
            f"{terminal_safe(d.source)} ({terminal_safe(d.generated_at)})"
            + (": DRIFT, compared anyway (--allow-drift)" if d.drifted else ": none"))
    return ["", head] + [
        f"{'DRIFT' if c.drifted else 'ok   '} {c.check}"
        f"{' (' + terminal_safe(c.run) + ')' if c.run else ''}: {terminal_safe(c.measured)} "
        f"[needs {c.threshold}]" for c in d.checks]
