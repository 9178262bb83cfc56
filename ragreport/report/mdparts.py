"""The sections of the Markdown report (:mod:`.markdown` puts them together and fits them to
``max_chars``): each takes the report data and how much of it to show (:class:`Opts`), and
returns lines; every user string goes through :class:`Esc`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..present import (
    md_escape,
    md_html_escape,
    no_relevant_text,
    p_pair_text,
    pct,
    shown,
    signed,
    tie_summary,
)
from .breakdowns import DocumentReport, SliceCell, SliceTargetCell
from .cells import (
    JudgmentSources,
    QueryDetail,
    RunHealth,
    SummaryCell,
    TargetCell,
    WorstQueries,
    agreement_text,
    by_source_rows,
    ppi_rows,
)
from .model import Report

__all__ = [
    "ARROWS",
    "MAX_SLICES",
    "QUERY_TEXT_CHARS",
    "SHORT_NAME_CHARS",
    "Esc",
    "Opts",
    "chart_section",
    "document_section",
    "drift_section",
    "drop_section",
    "has_chart",
    "health_text",
    "judgments_section",
    "latency_section",
    "no_judged_text",
    "plural",
    "pr_section",
    "shown_runs",
    "slice_cell",
    "slices_section",
    "stats_text",
    "status",
    "summary_cell",
    "table_row",
    "target_cell",
    "tie_table",
    "tie_warnings",
    "unjudged_cell",
    "worst_section",
]


#: Query texts in the worst-query tables are cut to this many characters.
QUERY_TEXT_CHARS = 80


#: The most slices (``--slices``) the Markdown shows, the failing ones first.
MAX_SLICES = 20


#: When names must be shortened to fit, user strings are cut to this many characters.
SHORT_NAME_CHARS = 40


ARROWS = {"up": "▲", "down": "▼", "same": "", "": ""}


@dataclass(frozen=True)
class Opts:
    """How much of the report to show; each field is a way to make the document shorter."""

    rows: int | None = None       # worst-query rows per run (None: all)
    intervals: bool = True        # confidence intervals in the summary table
    names: int | None = None      # cut user strings (title, run names, ids...) to this many chars
    details: bool = True          # the worst-query section
    extras: bool = True           # conventions and provenance footer
    cap: int | None = None        # at most this many runs, summary rows and target rows
    pr: bool = True               # the precision-recall table
    chart: bool = True            # the Mermaid chart of the headline measure against K


def plural(n: int, word: str, plural: str | None = None) -> str:
    return word if n == 1 else (plural or word + "s")


def table_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def target_cell(c: TargetCell) -> list[str]:
    word = ("❔ inconclusive" if c.passed else "❌ inconclusive") if c.inconclusive \
        else "✅ pass" if c.passed else "❌ fail"
    extra = f" (mean {shown(c.mean)})" if c.on in ("ci_lower", "ppi_lower") \
        and math.isfinite(c.mean) else ""
    return [f"{word} {c.shown}{extra}", c.margin_text]


def drop_section(report: Report, runs: list[str], cap: int | None, esc: Esc) -> list[str]:
    drops = [d for d in report.drops if d.run in runs]
    if not drops:
        return []
    level = f"{pct(report.stats.level)} " if report.stats is not None else ""
    shown_drops = drops if cap is None else drops[:cap]
    out = [f"### Drop gate (max drop {drops[0].max_drop:g})", "",
           table_row(["Run", "Measure", "Δ vs baseline", f"{level}CI of Δ", "p, Holm", "Result"]),
           "|:--|:--|--:|--:|--:|:--|"]
    for d in shown_drops:
        result = ("❌ fail (depends on unjudged documents)" if d.unjudged_failed
                  else "❌ inconclusive (fails: on_inconclusive = fail)"
                  if d.failed and d.inconclusive
                  else "❌ fail" if d.failed else "❔ inconclusive" if d.inconclusive
                  else "✅ pass")
        if d.inconclusive and d.more_queries is not None:
            result += f" (about {d.more_queries:,} more queries would decide it)"
        if d.unjudged is not None and d.unjudged.depends and not d.unjudged_failed:
            result += " ⚠️ depends on unjudged documents"
        out.append(table_row([esc.md(d.run), esc.md(d.measure),
                         signed(d.delta), f"[{shown(d.delta_lower)}, {shown(d.delta_upper)}]",
                         p_pair_text(d.p_raw, d.p_value, len(report.drops)), result]))
    out.append("")
    if len(shown_drops) < len(drops):
        n = len(drops) - len(shown_drops)
        out += [f"{n} more drop {plural(n, 'check')} not shown.", ""]
    return out


def summary_cell(c: SummaryCell, intervals: bool = True) -> str:
    """Mean, interval (optional), then the delta: in bold only where it is significant.

    >>> from ragreport.report.cells import SummaryCell
    >>> c = SummaryCell("b", 0.5, "0.5000", -0.02, "−0.0200", "down", 0.4, 0.6,
    ...                 "[0.4000, 0.6000]", 0.003, 0.002, True)
    >>> summary_cell(c), summary_cell(c, intervals=False)
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


def stats_text(report: Report, intervals: bool) -> str:
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
    return f"<sub>{head}Statistics: {md_escape(report.stats.describe())}.</sub>"


def health_text(h: RunHealth) -> str:
    return (f"{h.evaluated} evaluated, {h.run_only} run-only, {h.qrels_only} qrels-only, "
            f"no relevant document: {no_relevant_text(h.no_relevant, h.skipped_no_relevant)}"
            f", {h.empty_retrievals} empty {plural(h.empty_retrievals, 'retrieval')}, "
            f"{h.duplicates_dropped} {plural(h.duplicates_dropped, 'duplicate')} dropped"
            + (f", {h.identical_ids_dropped} identical "
               f"{plural(h.identical_ids_dropped, 'id')} dropped"
               if h.identical_ids_dropped is not None else ""))


def status(report: Report) -> str:
    v = report.verdict
    if v.nothing_checked:
        return "ℹ️ **No targets set** (give them with `--targets` or `[tool.ragreport.targets]`)"
    if v.passed:
        parts = []
        if v.checks:
            parts.append(f"{v.checks} target {plural(v.checks, 'check')}")
        if v.slice_checks:
            parts.append(f"{v.slice_checks} slice target {plural(v.slice_checks, 'check')}")
        if v.drops:
            parts.append(f"no drop beyond {v.max_drop:g} shown"
                         + (f"; {v.drops_inconclusive} drop "
                            f"{plural(v.drops_inconclusive, 'check')} inconclusive"
                            if v.drops_inconclusive else ""))
        return f"✅ **All checks pass** ({', '.join(parts)})"
    bad = []
    if v.failed:
        verb = "fails" if v.checks == 1 else "fail"
        bad.append(f"**{v.failed} of {v.checks} target {plural(v.checks, 'check')} {verb}**")
    if v.drops_failed:
        bad.append(f"**{v.drops_failed} of {v.drops} drop {plural(v.drops, 'check')} "
                   f"{'fails' if v.drops_failed == 1 else 'fail'}** (max drop {v.max_drop:g}"
                   + (f"; {v.drops_inconclusive} inconclusive" if v.drops_inconclusive else "")
                   + ")")
    elif v.drops_inconclusive:
        bad.append(f"{v.drops_inconclusive} drop {plural(v.drops_inconclusive, 'check')} "
                   "inconclusive")
    if v.slice_failed:
        names = v.failing_slices
        listed = ", ".join(md_escape(n, SHORT_NAME_CHARS) for n in names[:3]) + (
            f" and {len(names) - 3} more" if len(names) > 3 else "")
        verb = "fails" if v.slice_checks == 1 else "fail"
        bad.append(f"**{v.slice_failed} of {v.slice_checks} slice target "
                   f"{plural(v.slice_checks, 'check')} {verb}** "
                   f"({plural(len(names), 'slice')} {listed})")
    return "❌ " + " · ".join(bad)


def shown_runs(report: Report, cap: int | None) -> list[str]:
    if cap is None or cap >= len(report.runs):
        return list(report.runs)
    keep = {report.baseline}
    for r in report.runs:
        if len(keep) >= cap:
            break
        keep.add(r)
    return [r for r in report.runs if r in keep]


def no_judged_text(n: int) -> str:
    """``"2 queries without a judged relevant document"`` (nothing to find: not failures).

    >>> no_judged_text(1)
    '1 query without a judged relevant document'
    """
    return f"{n} {plural(n, 'query', 'queries')} without a judged relevant document"


def worst_section(w: WorstQueries, rows: int | None, name: str, esc: Esc) -> list[str]:
    queries = w.queries if rows is None else w.queries[:rows]
    summary = (f"{esc.html(name)}: {len(w.queries)} worst of {w.total} "
               f"{plural(w.total, 'query', 'queries')} by {esc.html(w.measure)} (K={w.k})")
    out = [f"<details><summary>{summary}</summary>", ""]
    kinds = [f"{esc.md(k)} ({n})" for k, n in w.failure_counts.items() if n]
    out.append(f"Failure kinds at K={w.k}: " + (" · ".join(kinds) if kinds else "none") + "."
               + (f" Not listed: {no_judged_text(w.no_judged_relevant)}."
                  if w.no_judged_relevant else ""))
    out.append("")
    if queries:
        # unjudged documents (no qrels line) in the top K: a column only when there are some
        unjudged = any(q.unjudged_top_k for q in queries)
        out.append(table_row(["Query", "Text", esc.md(w.measure), "Failure"]
                        + ([f"Unjudged in top {w.k}"] if unjudged else [])))
        out.append("|:--|:--|--:|:--|" + ("--:|" if unjudged else ""))
        for q in queries:
            out.append(table_row([esc.md(q.query_id), md_escape(q.text, QUERY_TEXT_CHARS),
                             q.shown, "—" if q.failure == "ok" else esc.md(q.failure)]
                            + ([unjudged_cell(q)] if unjudged else [])))
        out.append("")
        if unjudged:
            out += [f"Unjudged: documents in a query's top {w.k} with no judgment (no qrels "
                    "line); every measure counts them as not relevant.", ""]
    if len(queries) < len(w.queries):
        n = len(w.queries) - len(queries)
        out += [f"{n} more {plural(n, 'query', 'queries')} not shown.", ""]
    out += ["</details>", ""]
    return out


def pr_section(report: Report, runs: list[str], names: dict[str, str]) -> list[str]:
    """The 11-point interpolated precision-recall curve as a table, folded."""
    pr = report.pr_curve
    if pr is None:
        return []
    shown_runs = [r for r in runs if r in pr.series]
    values = {r: pr.shown(r) for r in shown_runs}
    out = ["<details><summary>Precision-recall curve (11-point interpolated precision)"
           "</summary>", "",
           table_row(["Recall"] + [names[r] for r in shown_runs]),
           "|--:" + "|--:" * len(shown_runs) + "|"]
    out += [table_row([f"{level:.1f}"] + [values[r][j] for r in shown_runs])
            for j, level in enumerate(pr.levels)]
    out += ["", "Mean over the queries of the highest precision at any rank holding at least "
            "lround(r·R) of the R relevant documents (trec_eval's iprec_at_recall)."
            + (f" {md_escape(pr.tie_note)}" if pr.tie_note else ""), "", "</details>", ""]
    return out


def unjudged_cell(q: QueryDetail) -> str:
    """``2 of 5`` (and ``Judged@K`` when known), ``—`` when nothing was retrieved."""
    if q.top_k == 0:
        return "—"
    text = f"{q.unjudged_top_k} of {q.top_k}"
    return text if q.judged_at_k is None else f"{text} (Judged {shown(q.judged_at_k)})"


@dataclass(frozen=True)
class Esc:
    limit: int | None

    def md(self, text: str) -> str:
        return md_escape(text, self.limit)

    def html(self, text: str) -> str:
        return md_html_escape(text, self.limit)


def document_section(report: Report, doc: DocumentReport, runs: list[str], opts: Opts,
                      esc: Esc) -> list[str]:
    """Chunk and document level side by side, redundancy, the worst queries' document
    level (``--doc-map``)."""
    names = {r: esc.md(r) for r in report.runs}
    out = ["### Chunks and documents", "",
           f"{doc.chunks} {plural(doc.chunks, 'chunk')} of {doc.documents} "
           f"{plural(doc.documents, 'document')}; judgments given per "
           f"{doc.judgment_level}; targets checked at {doc.target_level} level. A document's "
           "rank is its best chunk's rank.", ""]
    head = ["Measure"]
    for r in runs:
        head += [f"{names[r]} chunks", f"{names[r]} documents"]
    out += [table_row(head), "|:--" + "|--:" * (2 * len(runs)) + "|"]
    rows = doc.summary if opts.cap is None else doc.summary[: opts.cap]
    for row in rows:
        cells = {c.run: c for c in row.cells}
        line = [esc.md(row.measure)]
        for r in runs:
            c = cells.get(r)
            line += [c.chunk_shown, c.document_shown] if c is not None else ["", ""]
        out.append(table_row(line))
    out.append("")
    if len(rows) < len(doc.summary):
        n = len(doc.summary) - len(rows)
        out += [f"{n} more {plural(n, 'row')} not shown.", ""]
    for d in doc.runs:
        if d.run in runs:
            out.append(f"- {names[d.run]}: redundancy@{d.k} {d.shown} (top-{d.k} chunks of a "
                       f"document already ranked above, mean per query; "
                       f"{d.queries_affected} of {d.queries} "
                       f"{plural(d.queries, 'query', 'queries')} "
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
                    table_row(["Query", f"{esc.md(w.measure)} chunks",
                          f"{esc.md(w.measure)} documents", f"Redundant in top {w.k}"]),
                    "|:--|--:|--:|--:|"]
            out += [table_row([esc.md(q.query_id), q.shown, per[q.query_id].shown,
                          str(per[q.query_id].redundant)]) for q in shown_q]
            out += ["", "</details>", ""]
    return out


def tie_table(report: Report, runs: list[str], measures: list[str], esc: Esc) -> list[str]:
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
            rows.append(table_row([esc.md(t.measure), esc.md(r),
                              f"{t.straddling} of {t.queries}{at}",
                              esc.md(t.dependent_text), esc.md(t.interval_cell)]))
    if not rows:
        return []
    table = [table_row(["Measure", "Run", "Ties across the cut", "Tie-dependent",
                        "Mean over all tie orders"]), "|:--|:--|--:|--:|:--|", *rows, ""]
    line = f"Tie exposure: {tie_summary(report.ties_exposed, report.tie_flips)}"
    if not report.tie_flips:  # nothing to say: one line, the table folded under it
        return [f"<details><summary>{line}</summary>", "", *table, "</details>", ""]
    return [f"{line}: queries with tied scores across the target's cut, and the mean over "
            "all orders of tied scores.", "", *table]


def tie_warnings(report: Report, runs: list[str], esc: Esc) -> list[str]:
    """A line per target decision that the order of tied scores could flip
    (:mod:`ragreport.core.ties`): the interval of the mean over all tie orders straddles it."""
    warn = [t for t in report.ties if t.note and t.run in runs]
    lines = [f"- ⚠️ {esc.md(t.measure)} {esc.md(f'{t.op} {t.threshold_text}')}, run "
             f"{esc.md(t.run)}: **{t.note}**: {esc.md(t.summary_text)}" for t in warn]
    return [*lines, ""] if lines else []


def unjudged_warnings(report: Report, runs: list[str], esc: Esc) -> list[str]:
    """A line per target decision that the unjudged documents could flip
    (:mod:`ragreport.analysis.unjudged_checks`); under ``unjudged="fail"`` a pass among them
    failed."""
    warn = [u for u in report.unjudged if u.note and u.run in runs]
    fails = " (a failure under `--unjudged fail`)" if report.unjudged_policy == "fail" else ""
    lines = [f"- ⚠️ {esc.md(u.measure)} {esc.md(f'{u.op} {u.threshold_text}')}, run "
             f"{esc.md(u.run)}: **{u.note}**{fails if u.passed else ''}: "
             f"{esc.md(u.summary_text)}" for u in warn]
    lines += [f"- ⚠️ drop check {esc.md(d.measure)}, run {esc.md(d.run)} against "
              f"{esc.md(d.baseline)}: **{d.unjudged.note}**"
              f"{fails if d.unjudged_failed else ''}: {esc.md(d.unjudged.reading_text)}"
              for d in report.drops if d.run in runs and d.unjudged is not None
              and d.unjudged.depends]
    return [*lines, ""] if lines else []


def judgments_section(report: Report, j: JudgmentSources, runs: list[str],
                      esc: Esc) -> list[str]:
    """Who judged, each pair of sources' agreement, and the runs' measures from each source
    alone (a table, with two sources or more)."""
    out = [f"**Judgments:** {esc.md(j.text)}.", ""]
    out += [f"- Agreement: {esc.md(agreement_text(g))}" for g in j.agreements]
    if j.agreements:
        out.append("")
    if j.by_source:
        rows = by_source_rows(j, [r for r in report.runs if r in runs], report.means)
        out += [table_row([esc.md(c) for c in rows[0]]),
                "|:--|:--|" + "--:|" * (len(rows[0]) - 2)]
        out += [table_row([esc.md(c) for c in r]) for r in rows[1:]]
        out.append("")
    rows = ppi_rows(j)
    if rows:
        out += ["Prediction-powered intervals (people's judgments corrected by a model's):",
                "", table_row([esc.md(c) for c in rows[0]]), "|:--|:--|--:|--:|--:|"]
        out += [table_row([esc.md(c) for c in r]) for r in rows[1:]]
        out.append("")
    return out


def latency_section(report: Report, runs: list[str], names: dict[str, str]) -> list[str]:
    """The retriever's latency per query (p50, p95, max in ms), beside the summary, for the
    runs that carry it (``collect_run``); nothing when none does."""
    by = {t.run: t.texts for t in report.latency if t.run in runs}
    if not by:
        return []
    out = [table_row(["Latency (ms)", *(names[r] for r in runs)]),
           "|:--" + "|--:" * len(runs) + "|"]
    for i, label in enumerate(("p50", "p95", "max")):
        out.append(table_row([label, *(by[r][i] if r in by else "–" for r in runs)]))
    return [*out, ""]


def slice_cell(c: SliceCell, target: SliceTargetCell | None, intervals: bool) -> str:
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


def slices_section(report: Report, runs: list[str], opts: Opts, esc: Esc) -> list[str]:
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
    what = (f"{len(sl.slices)} {plural(len(sl.slices), 'slice')} from "
            f"{esc.md(sl.source)}; a query may be in several")
    if n_targets:
        what += (f"; {len(failing)} failing {plural(len(failing), 'slice')}, shown first"
                 if failing else "; every slice target passes")
    out += [what + ".", ""]
    head = ["Slice", "Queries", "Measure", "Target"] + [names[r] for r in runs]
    out += [table_row(head), "|:--|--:|:--|:--" + "|--:" * len(runs) + "|"]
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
            out.append(table_row([label, count, esc.md(row.measure), target] + [
                slice_cell(cells[r], tcells.get(r), opts.intervals) if r in cells else ""
                for r in runs]))
        unshown = [t for t in s.targets if t.measure not in {r.measure for r in rows}]
        for t in unshown:  # a slice target on a measure the table does not show
            out.append(table_row([esc.md(s.name) if not rows else "", "", esc.md(t.measure),
                             esc.md(f"{t.op} {t.threshold_text}")] + [
                ("✅ " if c.passed else "❌ ") + c.shown
                + (" (inconclusive)" if c.outcome == "inconclusive" else "")
                for c in t.cells if c.run in runs]))
    out.append("")
    notes = []
    if len(shown_slices) < len(ordered):
        n = len(ordered) - len(shown_slices)
        notes.append(f"{n} more {plural(n, 'slice')} not shown (every slice is in the "
                     "HTML and JSON reports).")
    reasons = sorted({c.reason for s in sl.slices for t in s.targets for c in t.cells
                      if c.reason})
    if reasons:
        notes.append("Not checked (counted as failing): " + "; ".join(reasons) + ".")
    if any(s.few for s in sl.slices):
        notes.append(f"(few): {md_escape(sl.rule)}")
    if len(report.runs) > 1 and report.stats is not None:
        notes.append(f"W, L: queries of the slice the run wins and loses against the "
                     f"baseline; **bold** delta: significant ({report.stats.correction}-"
                     "corrected over runs, slices and measures together).")
    if sl.unknown:
        notes.append(f"{sl.unknown} query {plural(sl.unknown, 'id')} of the slices "
                     f"{'was' if sl.unknown == 1 else 'were'} not evaluated by any run.")
    if notes:
        out += ["<sub>" + " ".join(notes) + "</sub>", ""]
    return out


def has_chart(report: Report) -> bool:
    from .mermaid import headline_curve

    return headline_curve(report) is not None


def chart_section(report: Report, esc: Esc) -> list[str]:
    """The Mermaid chart of the headline measure against K (:mod:`.mermaid`) and the line
    under it saying which line is which (Mermaid's xychart has no legend)."""
    from .mermaid import chart_legend, mermaid_chart

    got = mermaid_chart(report)
    if got is None:
        return []
    block, lines = got
    return [block, "", chart_legend(lines, [esc.md(ln.name) for ln in lines]), ""]


def drift_section(report: Report, esc: Esc) -> list[str]:
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
           table_row(["Check", "Run", "Measured", "Threshold", "Result"]), "|:--|:--|:--|:--|:--|"]
    out += [table_row([esc.md(c.check), esc.md(c.run) if c.run else "all", esc.md(c.measured),
                  esc.md(c.threshold), "⚠️ drift" if c.drifted else "✅ ok"])
            for c in d.checks]
    return [*out, ""]
