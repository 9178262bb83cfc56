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

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import RagReportError
from ..present import BREAK, md_escape, md_html_escape, p_text, pct, shown, signed
from .model import (
    NO_RANKINGS_NOTE,
    DocumentReport,
    QueryDetail,
    Report,
    RunHealth,
    SliceCell,
    SliceTargetCell,
    SummaryCell,
    TargetCell,
    WorstQueries,
)

__all__ = ["BREAK", "MARKER", "MIN_CHARS", "escape_html", "escape_md", "render_markdown"]

#: First line of every Markdown report: lets a CI job find its own comment.
MARKER = "<!-- ragreport -->"

#: Smallest ``max_chars`` accepted: enough for the marker, the title and the status line.
MIN_CHARS = 1000

#: Query texts in the worst-query tables are cut to this many characters.
QUERY_TEXT_CHARS = 80

#: The most slices (``--slices``) the Markdown shows, the failing ones first.
MAX_SLICES = 20

#: When names must be shortened to fit, user strings are cut to this many characters.
SHORT_NAME_CHARS = 40

ARROWS = {"up": "▲", "down": "▼", "same": "", "": ""}

#: Markdown escaping lives in :mod:`ragreport.present` (one formatting module).
escape_md = md_escape
escape_html = md_html_escape


def _length(text: str) -> int:
    """Length in UTF-16 code units (what a browser counts; >= the number of code points)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


@dataclass(frozen=True)
class _Opts:
    """How much of the report to show; each field is a way to make the document shorter."""

    rows: int | None = None       # worst-query rows per run (None: all)
    intervals: bool = True        # confidence intervals in the summary table
    names: int | None = None      # cut user strings (title, run names, ids...) to this many chars
    details: bool = True          # the worst-query section
    extras: bool = True           # conventions and provenance footer
    cap: int | None = None        # at most this many runs, summary rows and target rows
    pr: bool = True               # the precision-recall table
    chart: bool = True            # the Mermaid chart of the headline measure against K


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
            parts.append(f"{self.rows} worst {_plural(self.rows, 'query', 'queries')} not shown")
        if self.pr:
            parts.append("precision-recall table not shown")
        if self.details:
            parts.append("worst-query details not shown")
        if self.names:
            parts.append(f"long names cut to {SHORT_NAME_CHARS} characters")
        if self.measures:
            parts.append(f"{self.measures} summary {_plural(self.measures, 'row')} not shown")
        if self.targets:
            parts.append(f"{self.targets} target {_plural(self.targets, 'row')} not shown")
        if self.drops:
            parts.append(f"{self.drops} drop {_plural(self.drops, 'check')} not shown")
        if self.runs:
            parts.append(f"{self.runs} {_plural(self.runs, 'run')} not shown")
        if self.extras:
            parts.append("conventions and inputs not shown")
        if self.chart:
            parts.append("chart not shown")
        if not parts:
            return ""
        return (f"> ✂️ truncated: {'; '.join(parts)}; see the HTML/JSON report (this comment "
                f"is limited to {max_chars:,} characters)")


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return word if n == 1 else (plural or word + "s")


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _target_cell(c: TargetCell) -> list[str]:
    word = "✅ pass" if c.passed else "❌ fail"
    extra = f" (mean {shown(c.mean)})" if c.on == "ci_lower" and math.isfinite(c.mean) else ""
    return [f"{word} {c.shown}{extra}", c.margin_text]


def _drop_section(report: Report, runs: list[str], cap: int | None, esc: _Esc) -> list[str]:
    drops = [d for d in report.drops if d.run in runs]
    if not drops:
        return []
    level = f"{pct(report.stats.level)} " if report.stats is not None else ""
    shown_drops = drops if cap is None else drops[:cap]
    out = [f"### Drop gate (max drop {drops[0].max_drop:g})", "",
           _row(["Run", "Measure", "Δ vs baseline", f"{level}CI of Δ", "p (Holm)", "Result"]),
           "|:--|:--|--:|--:|--:|:--|"]
    for d in shown_drops:
        result = "❌ fail" if d.failed else "✅ pass"
        out.append(_row([esc.md(d.run), esc.md(d.measure),
                         signed(d.delta), f"[{shown(d.delta_lower)}, {shown(d.delta_upper)}]",
                         p_text(d.p_value), result]))
    out.append("")
    if len(shown_drops) < len(drops):
        n = len(drops) - len(shown_drops)
        out += [f"{n} more drop {_plural(n, 'check')} not shown.", ""]
    return out


def _summary_cell(c: SummaryCell, intervals: bool = True) -> str:
    """Mean, interval (optional), then the delta: in bold only where it is significant.

    >>> from ragreport.report.model import SummaryCell
    >>> c = SummaryCell("b", 0.5, "0.5000", -0.02, "−0.0200", "down", 0.4, 0.6,
    ...                 "[0.4000, 0.6000]", 0.003, 0.002, True)
    >>> _summary_cell(c), _summary_cell(c, intervals=False)
    ('0.5000 [0.4000, 0.6000] **▼ −0.0200**', '0.5000 **▼ −0.0200**')
    """
    value = f"{c.shown} {c.ci_text}" if intervals and c.ci_text else c.shown
    if c.total_text:  # a count trec_eval sums (NumRet...): the total beside the mean
        value = f"{value} (total {c.total_text})"
    if c.delta is None:
        return value
    arrow = ARROWS.get(c.direction, "")
    delta = f"{arrow} {c.delta_text}" if arrow else c.delta_text
    return f"{value} **{delta}**" if c.significant else f"{value} {delta}"


def _stats_line(report: Report, intervals: bool) -> str:
    """The line under the summary table: what the intervals and the bold deltas mean."""
    if report.stats is None:
        return ""
    parts = []
    if intervals and any(c.ci_text for s in report.summary for c in s.cells):
        parts.append(f"in brackets: {pct(report.stats.level)} confidence interval of the mean")
    if len(report.runs) > 1:
        parts.append(f"**bold** delta: significant ({report.stats.correction}-corrected "
                     f"p &lt; {report.stats.alpha:g})")
    head = ("; ".join(parts) + ". ") if parts else ""
    return f"<sub>{head}Statistics: {escape_md(report.stats.describe())}.</sub>"


def _health_text(h: RunHealth) -> str:
    return (f"{h.evaluated} evaluated, {h.run_only} run-only, {h.qrels_only} qrels-only, "
            f"{h.no_relevant} without relevant documents, {h.empty_retrievals} empty "
            f"{_plural(h.empty_retrievals, 'retrieval')}, {h.duplicates_dropped} "
            f"{_plural(h.duplicates_dropped, 'duplicate')} dropped"
            + (f", {h.skipped_no_relevant} skipped (no relevant document)"
               if h.skipped_no_relevant else "")
            + (f", {h.identical_ids_dropped} identical "
               f"{_plural(h.identical_ids_dropped, 'id')} dropped"
               if h.identical_ids_dropped is not None else ""))


def _status(report: Report) -> str:
    v = report.verdict
    if v.nothing_checked:
        return "ℹ️ **No targets set** (give them with `--targets` or `[tool.ragreport.targets]`)"
    if v.passed:
        parts = []
        if v.checks:
            parts.append(f"{v.checks} target {_plural(v.checks, 'check')}")
        if v.slice_checks:
            parts.append(f"{v.slice_checks} slice target {_plural(v.slice_checks, 'check')}")
        if v.drops:
            parts.append(f"no significant drop beyond {v.max_drop:g}")
        return f"✅ **All checks pass** ({', '.join(parts)})"
    bad = []
    if v.failed:
        verb = "fails" if v.checks == 1 else "fail"
        bad.append(f"**{v.failed} of {v.checks} target {_plural(v.checks, 'check')} {verb}**")
    if v.drops_failed:
        bad.append(f"**{v.drops_failed} significant {_plural(v.drops_failed, 'drop')} beyond "
                   f"{v.max_drop:g}**")
    if v.slice_failed:
        names = v.failing_slices
        listed = ", ".join(escape_md(n, SHORT_NAME_CHARS) for n in names[:3]) + (
            f" and {len(names) - 3} more" if len(names) > 3 else "")
        verb = "fails" if v.slice_checks == 1 else "fail"
        bad.append(f"**{v.slice_failed} of {v.slice_checks} slice target "
                   f"{_plural(v.slice_checks, 'check')} {verb}** "
                   f"({_plural(len(names), 'slice')} {listed})")
    return "❌ " + " · ".join(bad)


def _shown_runs(report: Report, cap: int | None) -> list[str]:
    if cap is None or cap >= len(report.runs):
        return list(report.runs)
    keep = {report.baseline}
    for r in report.runs:
        if len(keep) >= cap:
            break
        keep.add(r)
    return [r for r in report.runs if r in keep]


def _no_judged_text(n: int) -> str:
    """``"2 queries without a judged relevant document"`` (nothing to find: not failures).

    >>> _no_judged_text(1)
    '1 query without a judged relevant document'
    """
    return f"{n} {_plural(n, 'query', 'queries')} without a judged relevant document"


def _worst_section(w: WorstQueries, rows: int | None, name: str, esc: _Esc) -> list[str]:
    queries = w.queries if rows is None else w.queries[:rows]
    summary = (f"{esc.html(name)}: {len(w.queries)} worst of {w.total} "
               f"{_plural(w.total, 'query', 'queries')} by {esc.html(w.measure)} (K={w.k})")
    out = [f"<details><summary>{summary}</summary>", ""]
    kinds = [f"{esc.md(k)} ({n})" for k, n in w.failure_counts.items() if n]
    out.append(f"Failure kinds at K={w.k}: " + (" · ".join(kinds) if kinds else "none") + "."
               + (f" Not listed: {_no_judged_text(w.no_judged_relevant)}."
                  if w.no_judged_relevant else ""))
    out.append("")
    if queries:
        # unjudged documents (no qrels line) in the top K: a column only when there are some
        unjudged = any(q.unjudged_top_k for q in queries)
        out.append(_row(["Query", "Text", esc.md(w.measure), "Failure"]
                        + ([f"Unjudged in top {w.k}"] if unjudged else [])))
        out.append("|:--|:--|--:|:--|" + ("--:|" if unjudged else ""))
        for q in queries:
            out.append(_row([esc.md(q.query_id), escape_md(q.text, QUERY_TEXT_CHARS),
                             q.shown, "—" if q.failure == "ok" else esc.md(q.failure)]
                            + ([_unjudged_cell(q)] if unjudged else [])))
        out.append("")
        if unjudged:
            out += [f"Unjudged: documents in a query's top {w.k} with no judgment (no qrels "
                    "line); every measure counts them as not relevant.", ""]
    if len(queries) < len(w.queries):
        n = len(w.queries) - len(queries)
        out += [f"{n} more {_plural(n, 'query', 'queries')} not shown.", ""]
    out += ["</details>", ""]
    return out


def _pr_section(report: Report, runs: list[str], names: dict[str, str]) -> list[str]:
    """The 11-point interpolated precision-recall curve as a table, folded."""
    pr = report.pr_curve
    if pr is None:
        return []
    shown_runs = [r for r in runs if r in pr.series]
    values = {r: pr.shown(r) for r in shown_runs}
    out = ["<details><summary>Precision-recall curve (11-point interpolated precision)"
           "</summary>", "",
           _row(["Recall"] + [names[r] for r in shown_runs]),
           "|--:" + "|--:" * len(shown_runs) + "|"]
    out += [_row([f"{level:.1f}"] + [values[r][j] for r in shown_runs])
            for j, level in enumerate(pr.levels)]
    out += ["", "Mean over the queries of the highest precision at any rank holding at least "
            "lround(r·R) of the R relevant documents (trec_eval's iprec_at_recall)."
            + (f" {escape_md(pr.tie_note)}" if pr.tie_note else ""), "", "</details>", ""]
    return out


def _unjudged_cell(q: QueryDetail) -> str:
    """``2 of 5`` (and ``Judged@K`` when known), ``—`` when nothing was retrieved."""
    if q.top_k == 0:
        return "—"
    text = f"{q.unjudged_top_k} of {q.top_k}"
    return text if q.judged_at_k is None else f"{text} (Judged {shown(q.judged_at_k)})"


@dataclass(frozen=True)
class _Esc:
    limit: int | None

    def md(self, text: str) -> str:
        return escape_md(text, self.limit)

    def html(self, text: str) -> str:
        return escape_html(text, self.limit)


def _render(report: Report, opts: _Opts, notice: str) -> str:
    esc = _Esc(opts.names)
    runs = _shown_runs(report, opts.cap)
    run_names = {r: esc.md(r) for r in report.runs}
    lines = [MARKER, f"## {esc.md(report.title) or 'Retrieval evaluation'}", "", _status(report),
             ""]

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
    lines += [f"**{_plural(len(report.runs), 'Run')}:** {listed} · **Queries:** "
              f"{report.qrels_queries} in qrels, {ev}", ""]
    if notice:
        lines += [notice, ""]
    lines += _drift_section(report, esc)

    # targets
    lines += ["### Targets" + (" (document level)" if report.document is not None and
                               report.document.target_level == "document" else ""), ""]
    if not report.targets:
        lines += ["No targets set.", ""]
    else:
        targets = report.targets if opts.cap is None else report.targets[: opts.cap]
        head = ["Measure", "Target"]
        align = ["|:--|:--"]
        for r in runs:
            head += [run_names[r], "Margin"]
            align.append("|:--|--:")
        lines += [_row(head), "".join(align) + "|"]
        for t in targets:
            cells = {c.run: c for c in t.cells}
            on_ci = any(c.on == "ci_lower" for c in t.cells)
            row = [esc.md(t.measure), esc.md(f"{t.op} {t.threshold_text}")
                   + (" (CI lower bound)" if on_ci else "")]
            for r in runs:
                row += _target_cell(cells[r]) if r in cells else ["", ""]
            lines.append(_row(row))
        lines.append("")
        if len(targets) < len(report.targets):
            n = len(report.targets) - len(targets)
            lines += [f"{n} more target {_plural(n, 'row')} not shown.", ""]
        lines += _tie_table(report, runs, [t.measure for t in targets], esc)
        lines += _tie_warnings(report, runs, esc)

    lines += _drop_section(report, runs, opts.cap, esc)

    # summary
    lines += ["### Summary", ""]
    if len(report.runs) > 1:
        lines += [f"Deltas against the baseline {run_names[report.baseline]}: ▲ higher, "
                  "▼ lower.", ""]
    summary = report.summary if opts.cap is None else report.summary[: opts.cap]
    head = ["Measure"] + [run_names[r] + (" (baseline)" if r == report.baseline and
                                          len(report.runs) > 1 else "") for r in runs]
    lines += [_row(head), "|:--" + "|--:" * len(runs) + "|"]
    for s in summary:
        cells_by_run = {c.run: c for c in s.cells}
        lines.append(_row([esc.md(s.measure)] + [
            _summary_cell(cells_by_run[r], opts.intervals) if r in cells_by_run else ""
            for r in runs]))
    lines.append("")
    stats_line = _stats_line(report, opts.intervals)
    if stats_line:
        lines += [stats_line, ""]
    if len(summary) < len(report.summary):
        n = len(report.summary) - len(summary)
        lines += [f"{n} more summary {_plural(n, 'row')} not shown.", ""]
    if opts.chart and report.chart:
        lines += _chart_section(report, esc)
    lines += _latency_section(report, runs, run_names)

    if report.slices is not None:  # --slices
        lines += _slices_section(report, runs, opts, esc)

    if report.document is not None:
        lines += _document_section(report, report.document, runs, opts, esc)

    # worst queries
    if opts.details and report.worst:
        lines += ["### Worst queries", ""]
        if not report.rankings:
            lines += [NO_RANKINGS_NOTE, ""]
        for w in report.worst:
            if w.run in runs:
                lines += _worst_section(w, opts.rows, w.run, esc)

    if opts.pr and report.pr_curve is not None:
        lines += _pr_section(report, runs, run_names)

    # dataset health
    health = [h for h in report.health if h.run in runs]
    texts = [_health_text(h) for h in health]
    if texts and len(set(texts)) == 1:
        scope = " (every run)" if len(report.runs) > 1 else ""
        lines += [f"**Dataset health:** {texts[0]}{scope}.", ""]
    elif texts:
        lines += ["**Dataset health:** " + "; ".join(
            f"{run_names[h.run]}: {t}" for h, t in zip(health, texts, strict=True)) + ".", ""]

    if opts.extras:
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
        lines += ["<sub>" + " · ".join(foot) + "</sub>", ""]
    return "\n".join(lines)


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
    full = _render(report, _Opts(), "")
    if _fits(full, max_chars):
        return full

    max_rows = max((len(w.queries) for w in report.worst), default=0)

    def attempt(opts: _Opts) -> str:
        opts = replace(opts, chart=False)  # the chart goes first (the tables hold its data)
        dropped = _Dropped()
        dropped.chart = report.chart and _has_chart(report)
        dropped.intervals = not opts.intervals and any(c.ci_text for s in report.summary
                                                       for c in s.cells)
        runs = _shown_runs(report, opts.cap)
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
    for opts in (_Opts(), _Opts(intervals=False), _Opts(intervals=False, pr=False)):
        text = attempt(opts)
        if _fits(text, max_chars):
            return text
    # 1. fewer worst-query rows, 2. the same with long names cut
    for names in (None, SHORT_NAME_CHARS):
        base = _Opts(intervals=False, names=names, pr=False)

        def fits_rows(k: int, base: _Opts = base) -> bool:
            return _fits(attempt(replace(base, rows=k)), max_chars)

        n = _largest(0, max_rows, fits_rows)
        if n is not None:
            return attempt(replace(base, rows=n))
    # 3. no worst-query details, 4. no conventions / provenance footer
    for opts in (_Opts(intervals=False, names=SHORT_NAME_CHARS, details=False, pr=False),
                 _Opts(intervals=False, names=SHORT_NAME_CHARS, details=False, extras=False,
                       pr=False)):
        text = attempt(opts)
        if _fits(text, max_chars):
            return text
    # 5. at most n runs, summary rows and target rows
    base = _Opts(intervals=False, names=SHORT_NAME_CHARS, details=False, extras=False,
                 pr=False)
    biggest = max(len(report.runs), len(report.summary), len(report.targets),
                  len(report.drops), 1)
    n = _largest(1, biggest, lambda k: _fits(attempt(replace(base, cap=k)), max_chars))
    if n is not None:
        return attempt(replace(base, cap=n))
    # 6. the bare minimum (cannot exceed MIN_CHARS: every user string is cut)
    minimal = "\n".join([
        MARKER, f"## {escape_md(report.title, SHORT_NAME_CHARS) or 'Retrieval evaluation'}", "",
        _status(report), "",
        f"> ✂️ truncated: the tables do not fit in {max_chars:,} characters; see the HTML/JSON "
        "report", ""])
    if not _fits(minimal, max_chars):  # cannot happen: every user string above is cut
        raise RagReportError(f"cannot fit the Markdown summary in {max_chars} characters")
    return minimal


def _document_section(report: Report, doc: DocumentReport, runs: list[str], opts: _Opts,
                      esc: _Esc) -> list[str]:
    """Chunk and document level side by side, redundancy, the worst queries' document
    level (``--doc-map``)."""
    names = {r: esc.md(r) for r in report.runs}
    out = ["### Chunks and documents", "",
           f"{doc.chunks} {_plural(doc.chunks, 'chunk')} of {doc.documents} "
           f"{_plural(doc.documents, 'document')}; judgments given per "
           f"{doc.judgment_level}; targets checked at {doc.target_level} level. A document's "
           "rank is its best chunk's rank.", ""]
    head = ["Measure"]
    for r in runs:
        head += [f"{names[r]} chunks", f"{names[r]} documents"]
    out += [_row(head), "|:--" + "|--:" * (2 * len(runs)) + "|"]
    rows = doc.summary if opts.cap is None else doc.summary[: opts.cap]
    for row in rows:
        cells = {c.run: c for c in row.cells}
        line = [esc.md(row.measure)]
        for r in runs:
            c = cells.get(r)
            line += [c.chunk_shown, c.document_shown] if c is not None else ["", ""]
        out.append(_row(line))
    out.append("")
    if len(rows) < len(doc.summary):
        n = len(doc.summary) - len(rows)
        out += [f"{n} more {_plural(n, 'row')} not shown.", ""]
    for d in doc.runs:
        if d.run in runs:
            out.append(f"- {names[d.run]}: redundancy@{d.k} {d.shown} (top-{d.k} chunks of a "
                       f"document already ranked above, mean per query; "
                       f"{d.queries_affected} of {d.queries} "
                       f"{_plural(d.queries, 'query', 'queries')} "
                       f"{'has' if d.queries_affected == 1 else 'have'} some)")
    out.append("")
    if opts.details and opts.rows != 0:
        for w in report.worst:
            per = doc.queries.get(w.run, {})
            by_id = {q.query_id: q for q in w.queries}
            shown_q = [by_id[q] for q in per if q in by_id]  # by the document-level value
            shown_q = shown_q if opts.rows is None else shown_q[: opts.rows]
            if w.run not in runs or not shown_q:
                continue
            out += [f"<details><summary>{esc.html(w.run)}: the worst queries at document "
                    f"level</summary>", "",
                    _row(["Query", f"{esc.md(w.measure)} chunks",
                          f"{esc.md(w.measure)} documents", f"Redundant in top {w.k}"]),
                    "|:--|--:|--:|--:|"]
            out += [_row([esc.md(q.query_id), q.shown, per[q.query_id].shown,
                          str(per[q.query_id].redundant)]) for q in shown_q]
            out += ["", "</details>", ""]
    return out


def _tie_table(report: Report, runs: list[str], measures: list[str], esc: _Esc) -> list[str]:
    """Per run and shown target measure exposed to ties (a tie across its cut or a
    tie-dependent query: ``TieCheck.exposed``, the rule of every output): how many queries,
    and the interval of the mean over all tie orders (:mod:`ragreport.core.ties`)."""
    seen: set[tuple[str, str]] = set()
    rows = []
    for r in runs:
        for t in report.ties:
            if t.run != r or not t.exposed or t.measure not in measures \
                    or (r, t.measure) in seen:
                continue
            seen.add((r, t.measure))
            at = f" at {esc.md(t.cut)}" if t.cut else ""
            rows.append(_row([esc.md(t.measure), esc.md(r),
                              f"{t.straddling} of {t.queries}{at}",
                              esc.md(t.dependent_text), esc.md(t.interval_cell)]))
    if not rows:
        return []
    return ["Tie exposure: queries with tied scores across the target's cut, and the mean "
            "over all orders of tied scores.", "",
            _row(["Measure", "Run", "Ties across the cut", "Tie-dependent",
                  "Mean over all tie orders"]), "|:--|:--|--:|--:|:--|", *rows, ""]


def _tie_warnings(report: Report, runs: list[str], esc: _Esc) -> list[str]:
    """A line per target decision that the order of tied scores could flip
    (:mod:`ragreport.core.ties`): the interval of the mean over all tie orders straddles it."""
    warn = [t for t in report.ties if t.note and t.run in runs]
    lines = [f"- ⚠️ {esc.md(t.measure)} {esc.md(f'{t.op} {t.threshold_text}')}, run "
             f"{esc.md(t.run)}: **{t.note}**: {esc.md(t.summary_text)}" for t in warn]
    return [*lines, ""] if lines else []


def _latency_section(report: Report, runs: list[str], names: dict[str, str]) -> list[str]:
    """The retriever's latency per query (p50, p95, max in ms), beside the summary, for the
    runs that carry it (``collect_run``); nothing when none does."""
    by = {t.run: t.texts for t in report.latency if t.run in runs}
    if not by:
        return []
    out = [_row(["Latency (ms)", *(names[r] for r in runs)]), "|:--" + "|--:" * len(runs) + "|"]
    for i, label in enumerate(("p50", "p95", "max")):
        out.append(_row([label, *(by[r][i] if r in by else "–" for r in runs)]))
    return [*out, ""]


def _slice_cell(c: SliceCell, target: SliceTargetCell | None, intervals: bool) -> str:
    """Mean, interval, the slice target's verdict, the delta (bold where significant) and
    the wins / losses against the baseline on the slice."""
    value = f"{c.shown} {c.ci_text}" if intervals and c.ci_text else c.shown
    if target is not None:
        value = f"{'✅' if target.passed else '❌'} {value}" + (
            " (target not checked)" if target.reason else "")
    if c.delta is not None:
        arrow = ARROWS.get(c.direction, "")
        delta = f"{arrow} {c.delta_text}" if arrow else c.delta_text
        value += f" **{delta}**" if c.significant else f" {delta}"
    if c.wins is not None:
        value += f" (W {c.wins}, L {c.losses})"
    return value


def _slices_section(report: Report, runs: list[str], opts: _Opts, esc: _Esc) -> list[str]:
    """The query slices (``--slices``): the failing slices first; per slice the shown
    measures, each run's mean (interval, slice target, delta and wins / losses)."""
    sl = report.slices
    if sl is None:
        return []
    ordered = sl.ordered
    limit = MAX_SLICES if opts.cap is None else min(opts.cap, MAX_SLICES)
    shown_slices = ordered[:limit]
    names = {r: esc.md(r) + (" (baseline)" if r == report.baseline and len(report.runs) > 1
                             else "") for r in runs}
    out = ["### Slices", ""]
    failing = [s for s in sl.slices if not s.passed]
    n_targets = sum(len(s.targets) for s in sl.slices)
    what = (f"{len(sl.slices)} {_plural(len(sl.slices), 'slice')} from "
            f"{esc.md(sl.source)}; a query may be in several")
    if n_targets:
        what += (f"; {len(failing)} failing {_plural(len(failing), 'slice')}, shown first"
                 if failing else "; every slice target passes")
    out += [what + ".", ""]
    head = ["Slice", "Queries", "Measure", "Target"] + [names[r] for r in runs]
    out += [_row(head), "|:--|--:|:--|:--" + "|--:" * len(runs) + "|"]
    for s in shown_slices:
        rows = sl.rows_shown(s)
        rows = rows if opts.cap is None else rows[: opts.cap]
        for j, row in enumerate(rows):
            cells = {c.run: c for c in row.cells}
            tcells = {c.run: c for c in row.target.cells} if row.target is not None else {}
            first = j == 0
            mark = "" if not s.targets else ("❌ " if not s.passed else "✅ ")
            label = f"{mark}{esc.md(s.name)}" if first else ""
            count = (f"{s.n}" + (" (few)" if s.few else "")) if first else ""
            target = (esc.md(f"{row.target.op} {row.target.threshold_text}")
                      + (" (CI lower bound)" if row.target.cells and
                         row.target.cells[0].on == "ci_lower" else "")
                      if row.target is not None else "")
            out.append(_row([label, count, esc.md(row.measure), target] + [
                _slice_cell(cells[r], tcells.get(r), opts.intervals) if r in cells else ""
                for r in runs]))
        unshown = [t for t in s.targets if t.measure not in {r.measure for r in rows}]
        for t in unshown:  # a slice target on a measure the table does not show
            out.append(_row([esc.md(s.name) if not rows else "", "", esc.md(t.measure),
                             esc.md(f"{t.op} {t.threshold_text}")] + [
                ("✅ " if c.passed else "❌ ") + c.shown for c in t.cells if c.run in runs]))
    out.append("")
    notes = []
    if len(shown_slices) < len(ordered):
        n = len(ordered) - len(shown_slices)
        notes.append(f"{n} more {_plural(n, 'slice')} not shown (every slice is in the "
                     "HTML and JSON reports).")
    reasons = sorted({c.reason for s in sl.slices for t in s.targets for c in t.cells
                      if c.reason})
    if reasons:
        notes.append("Not checked (counted as failing): " + "; ".join(reasons) + ".")
    if any(s.few for s in sl.slices):
        notes.append(f"(few): {escape_md(sl.rule)}")
    if len(report.runs) > 1 and report.stats is not None:
        notes.append(f"W, L: queries of the slice the run wins and loses against the "
                     f"baseline; **bold** delta: significant ({report.stats.correction}-"
                     "corrected over runs, slices and measures together).")
    if sl.unknown:
        notes.append(f"{sl.unknown} query {_plural(sl.unknown, 'id')} of the slices "
                     f"{'was' if sl.unknown == 1 else 'were'} not evaluated by any run.")
    if notes:
        out += ["<sub>" + " ".join(notes) + "</sub>", ""]
    return out


def _has_chart(report: Report) -> bool:
    from .mermaid import headline_curve

    return headline_curve(report) is not None


def _chart_section(report: Report, esc: _Esc) -> list[str]:
    """The Mermaid chart of the headline measure against K (:mod:`.mermaid`) and the line
    under it saying which line is which (Mermaid's xychart has no legend)."""
    from .mermaid import chart_legend, mermaid_chart

    got = mermaid_chart(report)
    if got is None:
        return []
    block, lines = got
    return [block, "", chart_legend(lines, [esc.md(ln.name) for ln in lines]), ""]


def _drift_section(report: Report, esc: _Esc) -> list[str]:
    """The stored baseline (``--baseline-report``) and each drift check, with the measured
    values and thresholds (:mod:`ragreport.analysis.drift`)."""
    d = report.drift
    if d is None:
        return []
    head = ("⚠️ **The baseline drifted; compared anyway (`--allow-drift`)**" if d.drifted
            else "No drift found.")
    out = ["### Baseline drift", "",
           f"Baseline {esc.md(d.run)} from the stored report {esc.md(d.source)} (generated "
           f"{esc.md(d.generated_at)}). {head}", "",
           _row(["Check", "Run", "Measured", "Threshold", "Result"]), "|:--|:--|:--|:--|:--|"]
    out += [_row([esc.md(c.check), esc.md(c.run) if c.run else "all", esc.md(c.measured),
                  esc.md(c.threshold), "⚠️ drift" if c.drifted else "✅ ok"])
            for c in d.checks]
    return [*out, ""]
