"""GitHub-flavoured Markdown for pull-request comments and ``$GITHUB_STEP_SUMMARY``.

The document starts with a hidden ``<!-- ragreport -->`` marker (so a CI job can find and update
its own "sticky" comment), then the title, one status line, the runs and query counts, the
targets table (with, per run, the target measures exposed to ties, ``TieCheck.exposed``:
how many queries, the interval of the mean over all tie orders; and the warnings when that
interval straddles a threshold), the ``--max-drop`` gate (when set), the summary table
with deltas against the baseline, the worst queries of each run (folded in ``<details>``),
the 11-point precision-recall table (folded), the dataset health and the conventions
(statistics included).

Two guarantees:

* **Every user string is escaped** for Markdown tables *and* HTML (see :func:`escape_md`), so a
  run name, query id or query text cannot break a table, start a link or inject a tag, and it
  is **inert on GitHub**: it never mentions a user or a team (``@user``, ``@org/team``), never
  references an issue or pull request (``#123``, ``GH-123``, ``owner/repo#123``) and never
  becomes a link (``https://github.com/o/r/issues/1``, ``www.example.com``).
* **The document never exceeds** ``max_chars`` (counted in UTF-16 code units, which is never less
  than the number of characters, so it also holds for code points). When the full document is
  too long, the least important parts go first -- the confidence intervals (the bold
  significant deltas stay), then the precision-recall table, then worst-query rows, then long
  names are shortened, then the details, conventions and provenance, then summary/target rows
  and run columns (and drop-gate rows) -- and a visible line says what was left out.

>>> escape_md("a|b <i>*x*</i>")
'a\\\\|b &lt;i&gt;\\\\*x\\\\*&lt;/i&gt;'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import RagReportError
from ..present import BREAK, md_escape, md_html_escape
from .mdparts import (
    SHORT_NAME_CHARS,
    Esc,
    Opts,
    chart_section,
    document_section,
    drift_section,
    drop_section,
    has_chart,
    health_text,
    judgments_section,
    latency_section,
    plural,
    pr_section,
    shown_runs,
    slices_section,
    stats_text,
    status,
    summary_cell,
    table_row,
    target_cell,
    tie_table,
    tie_warnings,
    unjudged_warnings,
    worst_section,
)
from .model import NO_RANKINGS_NOTE, Report

__all__ = ["BREAK", "MARKER", "MIN_CHARS", "escape_html", "escape_md", "render_markdown"]


__all__ = ["BREAK", "MARKER", "MIN_CHARS", "escape_html", "escape_md", "render_markdown"]


#: First line of every Markdown report: lets a CI job find its own comment.
MARKER = "<!-- ragreport -->"


#: Smallest ``max_chars`` accepted: enough for the marker, the title and the status line.
MIN_CHARS = 1000


#: Markdown escaping lives in :mod:`ragreport.present` (one formatting module).
escape_md = md_escape


escape_html = md_html_escape


def _length(text: str) -> int:
    """Length in UTF-16 code units (what a browser counts; >= the number of code points)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


@dataclass
class _Dropped:
    rows: int = 0
    intervals: bool = False
    names: bool = False
    details: bool = False
    extras: bool = False
    runs: int = 0
    measures: int = 0
    targets: int = 0
    drops: int = 0
    pr: bool = False
    chart: bool = False

    def notice(self, max_chars: int) -> str:
        parts = []
        if self.intervals:
            parts.append("confidence intervals not shown")
        if self.rows:
            parts.append(f"{self.rows} worst {plural(self.rows, 'query', 'queries')} not shown")
        if self.pr:
            parts.append("precision-recall table not shown")
        if self.details:
            parts.append("worst-query details not shown")
        if self.names:
            parts.append(f"long names cut to {SHORT_NAME_CHARS} characters")
        if self.measures:
            parts.append(f"{self.measures} summary {plural(self.measures, 'row')} not shown")
        if self.targets:
            parts.append(f"{self.targets} target {plural(self.targets, 'row')} not shown")
        if self.drops:
            parts.append(f"{self.drops} drop {plural(self.drops, 'check')} not shown")
        if self.runs:
            parts.append(f"{self.runs} {plural(self.runs, 'run')} not shown")
        if self.extras:
            parts.append("conventions and inputs not shown")
        if self.chart:
            parts.append("chart not shown")
        if not parts:
            return ""
        return (f"> ✂️ truncated: {'; '.join(parts)}; see the HTML/JSON report (this comment "
                f"is limited to {max_chars:,} characters)")


def _render(report: Report, opts: Opts, notice: str) -> str:
    esc = Esc(opts.names)
    runs = shown_runs(report, opts.cap)
    run_names = {r: esc.md(r) for r in report.runs}
    lines = [MARKER, f"## {esc.md(report.title) or 'Retrieval evaluation'}", "", status(report),
             ""]
    lines += _runs_line(report, runs, run_names)
    if notice:
        lines += [notice, ""]
    lines += drift_section(report, esc)
    lines += _targets_section(report, runs, run_names, opts, esc)
    lines += drop_section(report, runs, opts.cap, esc)
    lines += _summary_section(report, runs, run_names, opts, esc)
    if opts.chart and report.chart:
        lines += chart_section(report, esc)
    lines += latency_section(report, runs, run_names)
    if report.slices is not None:  # --slices
        lines += slices_section(report, runs, opts, esc)
    if report.document is not None:
        lines += document_section(report, report.document, runs, opts, esc)
    if opts.details and report.worst:
        lines += ["### Worst queries", ""]
        if not report.rankings:
            lines += [NO_RANKINGS_NOTE, ""]
        for w in report.worst:
            if w.run in runs:
                lines += worst_section(w, opts.rows, w.run, esc)
    if opts.pr and report.pr_curve is not None:
        lines += pr_section(report, runs, run_names)
    lines += _health_line(report, runs, run_names)
    if report.judgments is not None:
        lines += judgments_section(report, report.judgments, runs, esc)
    if opts.extras:
        lines += _extras(report, esc)
    return "\n".join(lines)


def _runs_line(report: Report, runs: list[str], run_names: dict[str, str]) -> list[str]:
    """The runs shown (and how many more) and the queries evaluated."""
    listed = ", ".join(run_names[r] + (" (baseline)" if r == report.baseline and
                                       len(report.runs) > 1 else "") for r in runs)
    if len(runs) < len(report.runs):
        listed += f" and {len(report.runs) - len(runs)} more"
    evaluated = sorted({h.evaluated for h in report.health})
    if len(evaluated) == 1:
        ev = f"{evaluated[0]} evaluated" + (" per run" if len(report.runs) > 1 else "")
    else:
        ev = "evaluated: " + ", ".join(f"{run_names[h.run]} {h.evaluated}"
                                       for h in report.health if h.run in runs)
    return [f"**{plural(len(report.runs), 'Run')}:** {listed} · **Queries:** "
            f"{report.qrels_queries} in qrels, {ev}", ""]


def _targets_section(report: Report, runs: list[str], run_names: dict[str, str], opts: Opts,
                     esc: Esc) -> list[str]:
    """The targets table (a row per target, a value and margin per run), its tie exposure."""
    lines = ["### Targets" + (" (document level)" if report.document is not None and
                              report.document.target_level == "document" else ""), ""]
    if not report.targets:
        return [*lines, "No targets set.", ""]
    targets = report.targets if opts.cap is None else report.targets[: opts.cap]
    head = ["Measure", "Target"]
    align = ["|:--|:--"]
    for r in runs:
        head += [run_names[r], "Margin"]
        align.append("|:--|--:")
    lines += [table_row(head), "".join(align) + "|"]
    for t in targets:
        cells = {c.run: c for c in t.cells}
        on = next((c.on for c in t.cells), "mean")
        row = [esc.md(t.measure), esc.md(f"{t.op} {t.threshold_text}")
               + {"ci_lower": " (CI lower bound)", "ppi_lower": " (PPI lower bound)"}.get(on, "")]
        for r in runs:
            row += target_cell(cells[r]) if r in cells else ["", ""]
        lines.append(table_row(row))
    lines.append("")
    if len(targets) < len(report.targets):
        n = len(report.targets) - len(targets)
        lines += [f"{n} more target {plural(n, 'row')} not shown.", ""]
    lines += tie_table(report, runs, [t.measure for t in targets], esc)
    lines += tie_warnings(report, runs, esc)
    lines += unjudged_warnings(report, runs, esc)
    return lines


def _summary_section(report: Report, runs: list[str], run_names: dict[str, str], opts: Opts,
                     esc: Esc) -> list[str]:
    """Each measure's value per run (deltas against the baseline), the statistics line."""
    lines = ["### Summary", ""]
    if len(report.runs) > 1:
        lines += [f"Deltas against the baseline {run_names[report.baseline]}: ▲ higher, "
                  "▼ lower.", ""]
    summary = report.summary if opts.cap is None else report.summary[: opts.cap]
    head = ["Measure"] + [run_names[r] + (" (baseline)" if r == report.baseline and
                                          len(report.runs) > 1 else "") for r in runs]
    lines += [table_row(head), "|:--" + "|--:" * len(runs) + "|"]
    for s in summary:
        cells_by_run = {c.run: c for c in s.cells}
        lines.append(table_row([esc.md(s.measure)] + [
            summary_cell(cells_by_run[r], opts.intervals) if r in cells_by_run else ""
            for r in runs]))
    lines.append("")
    stats_line = stats_text(report, opts.intervals)
    if stats_line:
        lines += [stats_line, ""]
    if len(summary) < len(report.summary):
        n = len(report.summary) - len(summary)
        lines += [f"{n} more summary {plural(n, 'row')} not shown.", ""]
    return lines


def _health_line(report: Report, runs: list[str], run_names: dict[str, str]) -> list[str]:
    """Dataset health: one line for every run when they agree, else one part per run."""
    health = [h for h in report.health if h.run in runs]
    texts = [health_text(h) for h in health]
    if texts and len(set(texts)) == 1:
        scope = " (every run)" if len(report.runs) > 1 else ""
        return [f"**Dataset health:** {texts[0]}{scope}.", ""]
    if texts:
        return ["**Dataset health:** " + "; ".join(
            f"{run_names[h.run]}: {t}" for h, t in zip(health, texts, strict=True)) + ".", ""]
    return []


def _extras(report: Report, esc: Esc) -> list[str]:
    """The conventions and the footer (version, time, command, inputs' fingerprints)."""
    lines: list[str] = []
    if report.conventions:
        lines += ["**Conventions**", ""]
        lines += [f"- {esc.md(k)}: {esc.md(v)}" for k, v in report.conventions.items()]
        if report.stats is not None:
            lines.append(f"- statistics: {esc.md(report.stats.describe())}")
        lines.append("")
    foot = [f"ragreport {esc.md(report.version)}", f"generated {esc.md(report.generated_at)}"]
    if report.command:
        foot.append(esc.md(report.command))
    if report.inputs:
        foot.append("inputs: " + ", ".join(f"{esc.md(f.name)} (sha256 {esc.md(f.sha256[:12])})"
                                           for f in report.inputs))
    return [*lines, "<sub>" + " · ".join(foot) + "</sub>", ""]


def _fits(text: str, max_chars: int) -> bool:
    return _length(text) <= max_chars


def _largest(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """Largest n in [lo, hi] with ok(n), assuming ok is monotone (true then false); else None."""
    if not ok(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def render_markdown(report: Report, max_chars: int = 60_000) -> str:
    """The report as GitHub-flavoured Markdown, at most ``max_chars`` long (see module doc).

    The same report always gives the same text. ``max_chars`` must be at least
    :data:`MIN_CHARS`; GitHub's comment limit is 65,536.
    """
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < MIN_CHARS:
        raise RagReportError(f"max_chars must be an integer >= {MIN_CHARS}, got {max_chars!r}")
    full = _render(report, Opts(), "")
    if _fits(full, max_chars):
        return full

    max_rows = max((len(w.queries) for w in report.worst), default=0)

    def attempt(opts: Opts) -> str:
        opts = replace(opts, chart=False)  # the chart goes first (the tables hold its data)
        dropped = _Dropped()
        dropped.chart = report.chart and has_chart(report)
        dropped.intervals = not opts.intervals and any(c.ci_text for s in report.summary
                                                       for c in s.cells)
        runs = shown_runs(report, opts.cap)
        if opts.details:
            shown = sum(min(len(w.queries), opts.rows if opts.rows is not None else max_rows)
                        for w in report.worst if w.run in runs)
            dropped.rows = sum(len(w.queries) for w in report.worst if w.run in runs) - shown
        else:
            dropped.details = bool(report.worst)
        dropped.names = opts.names is not None
        dropped.pr = not opts.pr and report.pr_curve is not None
        dropped.extras = not opts.extras and (bool(report.conventions) or bool(report.inputs))
        if opts.cap is not None:
            dropped.runs = len(report.runs) - len(runs)
            dropped.measures = max(len(report.summary) - opts.cap, 0)
            dropped.targets = max(len(report.targets) - opts.cap, 0)
            dropped.drops = max(len([d for d in report.drops if d.run in runs]) - opts.cap, 0)
        return _render(report, opts, dropped.notice(max_chars))

    # 0. no chart (every attempt leaves it out), then no confidence intervals (significance
    # stays: the bold deltas), then no precision-recall table (the HTML and JSON reports
    # have the curve)
    for opts in (Opts(), Opts(intervals=False), Opts(intervals=False, pr=False)):
        text = attempt(opts)
        if _fits(text, max_chars):
            return text
    # 1. fewer worst-query rows, 2. the same with long names cut
    for names in (None, SHORT_NAME_CHARS):
        base = Opts(intervals=False, names=names, pr=False)

        def fits_rows(k: int, base: Opts = base) -> bool:
            return _fits(attempt(replace(base, rows=k)), max_chars)

        n = _largest(0, max_rows, fits_rows)
        if n is not None:
            return attempt(replace(base, rows=n))
    # 3. no worst-query details, 4. no conventions / provenance footer
    for opts in (Opts(intervals=False, names=SHORT_NAME_CHARS, details=False, pr=False),
                 Opts(intervals=False, names=SHORT_NAME_CHARS, details=False, extras=False,
                       pr=False)):
        text = attempt(opts)
        if _fits(text, max_chars):
            return text
    # 5. at most n runs, summary rows and target rows
    base = Opts(intervals=False, names=SHORT_NAME_CHARS, details=False, extras=False,
                 pr=False)
    biggest = max(len(report.runs), len(report.summary), len(report.targets),
                  len(report.drops), 1)
    n = _largest(1, biggest, lambda k: _fits(attempt(replace(base, cap=k)), max_chars))
    if n is not None:
        return attempt(replace(base, cap=n))
    # 6. the bare minimum (cannot exceed MIN_CHARS: every user string is cut)
    minimal = "\n".join([
        MARKER, f"## {escape_md(report.title, SHORT_NAME_CHARS) or 'Retrieval evaluation'}", "",
        status(report), "",
        f"> ✂️ truncated: the tables do not fit in {max_chars:,} characters; see the HTML/JSON "
        "report", ""])
    if not _fits(minimal, max_chars):  # cannot happen: every user string above is cut
        raise RagReportError(f"cannot fit the Markdown summary in {max_chars} characters")
    return minimal
