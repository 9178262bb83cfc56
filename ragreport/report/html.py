"""The self-contained HTML report: Jinja2 templates, tables and inline SVG plots.

:func:`render_html` reads only the :class:`~ragreport.report.model.Report` it is given: the
version and the time come from the report, never from the clock, so the same report renders to
the same bytes. The page loads nothing (no CDN, no web font, no remote image); it reads fully
with JavaScript disabled, and a few lines of inline JavaScript add table sorting and a filter.

Templates come from ``templates/`` (shipped in the wheel as ``ragreport/templates``), or from
``template_dir``: that directory must hold ``report.html.j2``; the partials it includes
(``report.css``, ``report.js``, ...) are looked up there first, then in the default templates.
Autoescaping is on for every template and undefined names are errors. The plots' SVG, made by
:mod:`ragreport.report.plots`, is the only markup passed through unescaped.

>>> from ragreport import evaluate
>>> from ragreport.report import build_report
>>> r = evaluate({"q1": {"a": 1}}, {"q1": ["b", "a"]}, ["P@1", "RR"], name="<b>run</b>")
>>> page = build_report([r], generated_at="2026-01-01T00:00:00Z").to_html()
>>> "&lt;b&gt;run&lt;/b&gt;" in page and "<b>run</b>" not in page
True
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..present import (
    byte_size,
    html_finalize,
    p_clause,
    p_pair_text,
    p_text,
    pct,
    shown,
    signed,
)
from ..present.phrases import no_relevant_text, tie_summary
from .breakdowns import (
    DocumentReport,
    DocumentRun,
    LevelCell,
    LevelRow,
    Slice,
    SliceCell,
    SliceReport,
    SliceRow,
)
from .cells import (
    Comparison,
    Curve,
    Distribution,
    DropCheck,
    PRCurve,
    StatsInfo,
    SummaryCell,
    WorstQueries,
    agreement_text,
    by_source_rows,
    ppi_rows,
)
from .drilldown import MAX_MISSING, MAX_RANK_ROWS, MAX_TEXT_CHARS, QueryView, query_view
from .model import NO_RANKINGS_NOTE, Report

if TYPE_CHECKING:
    from ..parallel import Mapper

__all__ = [
    "MAX_DETAILS_PER_RUN",
    "MAX_MISSING",
    "MAX_RANK_ROWS",
    "MAX_TEXT_CHARS",
    "TEMPLATE_NAME",
    "default_template_dir",
    "render_html",
]

TEMPLATE_NAME = "report.html.j2"
#: Caps on the per-query details, so the page stays small whatever the number of queries
#: (the JSON output keeps everything).
MAX_DETAILS_PER_RUN = 50



def default_template_dir() -> Path:
    """The packaged templates (``ragreport/templates`` in a wheel), else the repository's.

    >>> (default_template_dir() / TEMPLATE_NAME).is_file()
    True
    """
    packaged = resources.files("ragreport") / "templates"
    if packaged.is_dir():
        return Path(str(packaged))
    # a source checkout: templates/ beside the package (ragreport/report/html.py -> the root)
    return Path(__file__).resolve().parents[2] / "templates"


def render_html(report: Report, template_dir: str | os.PathLike[str] | None = None, *,
                workers: Mapper | None = None) -> str:
    """Render ``report`` as one self-contained HTML page.

    Parameters
    ----------
    report : Report
        The report data (see :func:`ragreport.report.build_report`).
    template_dir : path, optional
        A directory holding ``report.html.j2`` to use instead of the packaged template.
    workers : Workers, optional
        Worker processes that draw the plots (:mod:`ragreport.parallel`); the page is the
        same byte for byte.

    Raises
    ------
    ConfigError
        The template directory or template is missing, or the template is invalid.
    """
    import jinja2

    default = default_template_dir()
    if template_dir is None:
        main = default
        search = [str(default)]
    else:
        main = Path(template_dir)
        if not main.is_dir():
            raise ConfigError(f"template directory not found: {main}")
        search = [str(main), str(default)]
    if not (main / TEMPLATE_NAME).is_file():
        raise ConfigError(f"template not found: {main / TEMPLATE_NAME}")

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search, encoding="utf-8"),
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html", "htm", "xml", "svg", "j2"),
            default_for_string=True, default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
        cache_size=0,
        finalize=html_finalize,
    )
    try:  # compiled before the plots are drawn: a broken template fails at once
        template = env.get_template(TEMPLATE_NAME)
    except Exception as exc:
        raise _template_error(exc, main, search) from None
    context = _context(report, workers)
    try:
        return template.render(**context)
    except Exception as exc:
        raise _template_error(exc, main, search) from None


def _template_error(exc: Exception, main: Path, search: Sequence[str]) -> Exception:
    """The one-line error for a template that fails (a custom template may do anything).

    Returns ``exc`` itself when it is not the template's doing.
    """
    import jinja2

    where = main / TEMPLATE_NAME
    if isinstance(exc, jinja2.TemplateNotFound):
        return ConfigError(f"template not found: {exc.name} (searched {', '.join(search)})")
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return ConfigError(f"{exc.filename or exc.name}:{exc.lineno}: template error: "
                           f"{exc.message}")
    if isinstance(exc, jinja2.UndefinedError):
        return ConfigError(f"{where}: template uses an unknown name: {exc}")
    if isinstance(exc, UnicodeDecodeError):
        return ConfigError(f"{where}: a template is not UTF-8 text ({exc.reason} at byte "
                           f"{exc.start})")
    if isinstance(exc, OSError):
        return ConfigError(f"{where}: cannot read a template: {exc.strerror or exc}")
    if isinstance(exc, ConfigError):
        return exc
    if isinstance(exc, (jinja2.TemplateError, ArithmeticError, LookupError, TypeError,
                        ValueError, AttributeError, RecursionError)):
        return ConfigError(f"{where}: the template failed: {type(exc).__name__}: {exc}")
    return exc


# -- the view data the template reads (everything explicit, nothing global) --------------------


@dataclass(frozen=True)
class RunView:
    name: str
    index: int
    color: str
    css_var: str
    dasharray: str
    marker: str
    baseline: bool


@dataclass(frozen=True)
class PlotView:
    id: str
    title: str
    caption: str
    svg: Any  # markupsafe.Markup
    stats: list[tuple[RunView, dict[str, str]]] = field(default_factory=list)


@dataclass(frozen=True)
class CellView:
    """A summary cell with its interval and significance, as shown."""

    cell: SummaryCell
    ci_title: str  # title of the interval: the level and the method
    sig: str  # "sig", "ns" or "" (baseline, no test, or no statistics)
    test_title: str  # the p-values and the test, for the delta's title
    p_text: str  # the raw and the corrected p-values as shown, "" when there is none

    def __getattr__(self, name: str) -> Any:
        # templates written for the bare SummaryCell (c.shown, c.direction...) keep working
        if name == "cell":
            raise AttributeError(name)
        return getattr(self.cell, name)


@dataclass(frozen=True)
class DropView:
    drop: DropCheck
    delta: str
    interval: str
    p: str


@dataclass(frozen=True)
class WorstView:
    worst: WorstQueries
    run: RunView
    queries: list[QueryView]
    omitted: int


def _ties_and_health(report: Report) -> dict[str, Any]:
    """The tie exposure (:mod:`ragreport.core.ties`: rows, one line, the decisions tie order
    could flip), what health says of the queries without a relevant document, and the
    judgment sources' agreement and measures from each alone (texts; escaped by Jinja2)."""
    return {"tie_rows": [t for t in report.ties if t.exposed],
            "tie_summary": tie_summary(report.ties_exposed, report.tie_flips),
            "tie_warnings": [t for t in report.ties if t.note],
            "unjudged_warnings": [u for u in report.unjudged if u.note],
            "unjudged_fails": report.unjudged_policy == "fail",
            "no_relevant_texts": {h.run: no_relevant_text(h.no_relevant, h.skipped_no_relevant)
                                  for h in report.health},
            "judgment_agreements": [agreement_text(g) for g in report.judgments.agreements]
            if report.judgments is not None else [],
            "judgment_by_source": by_source_rows(report.judgments, report.runs, report.means)
            if report.judgments is not None and report.judgments.by_source else [],
            "judgment_ppi": ppi_rows(report.judgments) if report.judgments is not None
            else []}


def _context(report: Report, workers: Mapper | None = None) -> dict[str, Any]:
    from markupsafe import Markup

    from ..palette import css_variables
    from ..parallel import map_with
    from .plots import draw_plot, run_style

    runs = []
    for i, name in enumerate(report.runs):
        st = run_style(i)
        runs.append(RunView(name, i, st["color"], st["css_var"], st["dasharray"], st["marker"],
                            name == report.baseline))
    by_name = {r.name: r for r in runs}

    # every plot is a pure function of its data: drawn by the workers when there are some
    jobs: list[tuple[Curve | Distribution | PRCurve, Sequence[str], str]] = [
        *((c, report.runs, f"rrc{i}") for i, c in enumerate(report.curves)),
        *((d, report.runs, f"rrd{i}") for i, d in enumerate(report.distributions))]
    doc_curves = report.document.curves if report.document is not None else []
    jobs += [(c, report.runs, f"rrdoc{i}") for i, c in enumerate(doc_curves)]
    if report.pr_curve is not None:  # the precision-recall curve: the last job
        jobs.append((report.pr_curve, report.runs, "rrpr"))
    svgs = map_with(workers, draw_plot, jobs)
    pr_view = None if report.pr_curve is None else _pr_view(report.pr_curve, runs, svgs[-1])
    curves = [PlotView(f"curve-{i}", c.title, _curve_caption(c, report.stats),
                       Markup(svgs[i]))
              for i, c in enumerate(report.curves)]
    dists = [PlotView(f"dist-{i}", d.measure, _dist_caption(d),
                      Markup(svgs[len(report.curves) + i]),
                      [(r, _stats(d.values[r.name])) for r in runs if r.name in d.values])
             for i, d in enumerate(report.distributions)]

    worst = [WorstView(w, by_name[w.run] if w.run in by_name else runs[0],
                       [query_view(q, w.k) for q in w.queries[:MAX_DETAILS_PER_RUN]],
                       max(0, len(w.queries) - MAX_DETAILS_PER_RUN))
             for w in report.worst]

    comparisons: dict[str, list[Comparison]] = {}
    for c in report.comparisons:
        comparisons.setdefault(c.run, []).append(c)

    targets = []
    for t in report.targets:
        cells = {c.run: c for c in t.cells}
        targets.append((t, [(r, cells.get(r.name)) for r in runs]))
    sources = sorted({t.source for t in report.targets if t.source})
    stats = report.stats
    summary = []
    for row in report.summary:
        scells = {c.run: c for c in row.cells}
        summary.append((row, [(r, _cell_view(scells[r.name], stats) if r.name in scells
                                else None) for r in runs]))
    any_sig = any(v is not None and v.sig for _, cells in summary for _, v in cells)
    on_ci = any(c.on == "ci_lower" for t in report.targets for c in t.cells)
    drops = [DropView(d, signed(d.delta), f"[{shown(d.delta_lower)}, {shown(d.delta_upper)}]",
                      p_pair_text(d.p_raw, d.p_value, len(report.drops))) for d in report.drops]

    document = _document_view(report, runs, [
        PlotView(f"doc-curve-{i}", c.title, _curve_caption(c) + " Documents: each query's "
                 "chunk ranking collapsed to documents.",
                 Markup(svgs[len(report.curves) + len(report.distributions) + i]))
        for i, c in enumerate(doc_curves)])

    verdict = report.verdict  # the slices' checks count in the banner too
    slices = _slices_view(report, runs, workers)
    evaluated = {h.run: h.evaluated for h in report.health}
    return {
        "report": report,
        "palette_css": Markup(css_variables()),  # the --rr-* colours (ragreport.palette)
        "title": report.title,
        "version": report.version,
        "generated_at": report.generated_at,
        "command": report.command,
        "runs": runs,
        "several_runs": len(runs) > 1,
        "baseline": by_name.get(report.baseline),
        # no size for what was stated, not read (per-query results' qrels: no path)
        "inputs": [{"file": f, "short": f.sha256[:12], "size": byte_size(f.size) if f.path else ""}
                   for f in report.inputs],
        "evaluated": evaluated,
        "targets": targets,
        "target_sources": sources,
        "summary": summary,
        "shown": shown,
        "stats": stats,
        "stats_text": stats.describe() if stats is not None else "",
        "level": pct(stats.level) if stats is not None else "",
        "any_sig": any_sig,
        "targets_on_ci": on_ci,
        "drops": drops,
        "drops_failed": verdict.drops_failed, "drops_inconclusive": verdict.drops_inconclusive,
        "max_drop": f"{verdict.max_drop:g}" if verdict.max_drop is not None else "",
        "n_checks": verdict.checks + verdict.slice_checks,
        "n_failed": verdict.failed + verdict.slice_failed,
        "curves": curves,
        "distributions": dists,
        "worst": worst,
        "worst_caps": {"queries": MAX_DETAILS_PER_RUN, "rows": MAX_RANK_ROWS,
                       "missing": MAX_MISSING},
        "worst_note": _worst_note(report.worst),
        "no_rankings_note": "" if report.rankings else NO_RANKINGS_NOTE,  # ragreport.core.perquery
        "chunk_level_note": "" if report.document is None else (
            "Chunk level (the rankings as retrieved); the document level is under Chunks and "
            "documents" + (", with the target marks, as the targets are checked there."
                           if report.document.target_level == "document" else ".")),
        "comparisons": comparisons,
        "conventions": list(report.conventions.items()),
        "pr_curve": pr_view,
        "document": document,
        "document_queries": report.document.queries if report.document is not None else {},
        "slices": slices,
    } | _ties_and_health(report)


def _worst_note(worst: Sequence[WorstQueries]) -> str:
    """How many worst queries the page shows and the JSON output holds, from the report's
    own numbers.

    >>> from ragreport.report.cells import WorstQueries
    >>> _worst_note([WorstQueries("a", "P@5", 5, 30, [None] * 20, {})])  # type: ignore[list-item]
    'at most 20 per run; the JSON output holds the same 20'
    >>> _worst_note([WorstQueries("a", "P@5", 5, 80, [None] * 80, {})])  # type: ignore[list-item]
    'at most 50 per run; the JSON output holds all 80 queries'
    >>> w = WorstQueries("a", "P@5", 5, 82, [None] * 80, {}, 2)  # type: ignore[list-item]
    >>> _worst_note([w])  # 2 of the 82 queries have no judged relevant document
    'at most 50 per run; the JSON output holds all 80 queries with a judged relevant document'
    """
    held = max((len(w.queries) for w in worst), default=0)
    shown_n = min(held, MAX_DETAILS_PER_RUN)
    # every query that can be listed: all but those without a judged relevant document
    if all(len(w.queries) == w.total - w.no_judged_relevant for w in worst):
        judged = " with a judged relevant document" if any(w.no_judged_relevant
                                                            for w in worst) else ""
        json_part = (f"all {held} queries{judged}"
                     if len({w.total - w.no_judged_relevant for w in worst}) == 1
                     else f"every query{judged}")
    elif held <= MAX_DETAILS_PER_RUN:
        json_part = f"the same {held}"
    else:
        json_part = f"at most {held} per run"
    return f"at most {shown_n} per run; the JSON output holds {json_part}"


@dataclass(frozen=True)
class DocumentView:
    """Chunk and document level side by side (``--doc-map``), as the template reads it."""

    doc: DocumentReport
    rows: list[tuple[LevelRow, list[tuple[RunView, LevelCell | None]]]]
    runs: list[tuple[RunView, DocumentRun]]
    curves: list[PlotView]


def _document_view(report: Report, runs: list[RunView], curves: list[PlotView]
                   ) -> DocumentView | None:
    doc = report.document
    if doc is None:
        return None
    by_name = {r.name: r for r in runs}
    rows = []
    for row in doc.summary:
        cells = {c.run: c for c in row.cells}
        rows.append((row, [(r, cells.get(r.name)) for r in runs]))
    return DocumentView(doc, rows, [(by_name[d.run], d) for d in doc.runs if d.run in by_name],
                        curves)


@dataclass(frozen=True)
class PRView:
    """The precision-recall curve: its plot and the 11 means of each run as a table."""

    plot: PlotView
    runs: list[RunView]
    rows: list[tuple[str, list[str]]]  # (recall level, each run's mean shown)


def _pr_view(pr: PRCurve, runs: list[RunView], svg: str) -> PRView:
    from markupsafe import Markup

    shown_runs = [r for r in runs if r.name in pr.series]
    values = {r.name: pr.shown(r.name) for r in shown_runs}
    rows = [(f"{level:.1f}", [values[r.name][j] for r in shown_runs])
            for j, level in enumerate(pr.levels)]
    caption = (f"Mean over each run's queries of the interpolated precision at recall 0.0, "
               f"0.1, …, 1.0 (relevant: grade ≥ {pr.rel}). Interpolated precision at recall "
               "r is the highest precision at any rank holding at least lround(r·R) of the R "
               "relevant documents (trec_eval's iprec_at_recall; IPrec@r in ragreport), so "
               "each line only goes down; a level "
               "a query never reaches counts 0 for that query."
               + ("".join(f" Target IPrec@{r:g} {label}: hollow diamond."
                          for r, _, label in pr.targets))
               + (f" {pr.tie_note}" if pr.tie_note else ""))
    return PRView(PlotView("pr-plot", "Precision-recall curve (11-point, interpolated)",
                           caption, Markup(svg)), shown_runs, rows)


def _cell_view(c: SummaryCell, stats: StatsInfo | None) -> CellView:
    """Interval title and significance of one summary cell (nothing without statistics)."""
    if stats is None:
        return CellView(c, "", "", "vs baseline", "")
    ci_title = f"{pct(stats.level)} confidence interval of the mean ({stats.interval})"
    if c.delta is None or c.p_value is None or c.p_value != c.p_value:
        return CellView(c, ci_title, "", "vs baseline", "")
    word = "significant" if c.significant else "not significant"
    t = "" if c.t_p_value is None or c.t_p_value != c.t_p_value else (
        f"; {stats.also}: {p_clause(c.t_p_value)}")
    raw = c.shown_raw_p
    title = (f"vs baseline: {word} at alpha {stats.alpha:g} ({stats.test}: raw "
             f"{p_clause(raw)}, {stats.correction}-corrected {p_clause(c.p_value)} over "
             f"{c.family} comparison{'s' if c.family != 1 else ''}{t})")
    return CellView(c, ci_title, "sig" if c.significant else "ns", title,
                    p_pair_text(raw, c.p_value, c.family))


def _curve_caption(c: Curve, stats: StatsInfo | None = None) -> str:
    band = ""
    if c.bands and stats is not None:
        band = (f" Bands: {pct(stats.level)} bootstrap interval of each run's mean "
                f"({stats.curve_resamples} resamples over queries, seed {stats.seed}), "
                "outlined in the run's colour" + (", every second run's hatched"
                                                  if len(c.bands) > 1 else "") + ".")
    if not c.targets:
        return (f"Mean {c.family}@K for K = 1 to {len(c.ks)}; no target on this measure."
                + band)
    marks = "; ".join(f"{c.family}{'' if k is None else f'@{k}'} {label}"
                      for k, _, label in c.targets)
    how = ("dashed line, and a diamond at the target's K"
           if any(k is not None for k, _, _ in c.targets) else "dashed line (all K)")
    return f"Mean {c.family}@K for K = 1 to {len(c.ks)}. Target {marks}: {how}.{band}"


def _dist_caption(d: Distribution) -> str:
    n = max((len(v) for v in d.values.values()), default=0)
    return f"{n} {'query' if n == 1 else 'queries'} per run."


def _stats(values: list[float]) -> dict[str, str]:
    """Mean, median and the shares of queries at 0 and at 1, as shown.

    >>> _stats([0.0, 0.5, 1.0, 1.0])
    {'n': '4', 'mean': '0.6250', 'median': '0.7500', 'zero': '25%', 'one': '50%'}
    """
    import numpy as np

    a = np.asarray(values, dtype=np.float64)
    a = a[np.isfinite(a)]
    if not len(a):
        return {"n": "0", "mean": "–", "median": "–", "zero": "–", "one": "–"}
    return {"n": str(len(a)), "mean": shown(float(a.mean())),
            "median": shown(float(np.median(a))),
            "zero": pct(float((a == 0).mean())), "one": pct(float((a == 1).mean()))}


#: The most slices with their own metric-vs-K plots in the HTML report (the failing slices
#: first, then the input order); every slice is in the slice table and the JSON output.
MAX_SLICE_PLOTS = 12


@dataclass(frozen=True)
class SlicePlots:
    """One slice's metric-vs-K plots (the slice selector of the curves shows them)."""

    index: int
    slice: Slice
    plots: list[PlotView]


@dataclass(frozen=True)
class SlicesView:
    """Query slices (``--slices``) as the template reads them."""

    report: SliceReport
    rows: list[tuple[Slice, SliceRow, bool, list[tuple[RunView, SliceCell | None, str]]]]
    """(slice, row, first row of its slice, per run: its cell and the slice target's verdict
    on it, "pass", "fail" or "")."""
    plots: list[SlicePlots]
    plots_omitted: int
    failing: list[str]
    reasons: list[str]

    @staticmethod
    def p_text(p: float) -> str:
        """A p-value as every output shows it (:func:`ragreport.present.p_text`)."""
        return p_text(p)


def _slices_view(report: Report, runs: list[RunView], workers: Mapper | None
                 ) -> SlicesView | None:
    """The slice table's rows (the failing slices first) and each slice's curves, drawn by
    the workers as the report's own curves are."""
    from markupsafe import Markup

    from ..parallel import map_with
    from .plots import draw_plot

    sl = report.slices
    if sl is None:
        return None
    ordered = sl.ordered
    rows = []
    for s in ordered:
        for j, row in enumerate(sl.rows_shown(s)):
            cells = {c.run: c for c in row.cells}
            verdict = {c.run: "pass" if c.passed else "fail"
                       for c in (row.target.cells if row.target is not None else [])}
            rows.append((s, row, j == 0, [(r, cells.get(r.name), verdict.get(r.name, ""))
                                          for r in runs]))
    plotted = [s for s in ordered if s.curves][:MAX_SLICE_PLOTS]
    jobs = [(c, report.runs, f"rrs{i}x{j}") for i, s in enumerate(plotted)
            for j, c in enumerate(s.curves)]
    svgs = iter(map_with(workers, draw_plot, jobs))
    plots = [SlicePlots(i + 1, s, [
        PlotView(f"slice-{i + 1}-curve-{j}", c.title,
                 _curve_caption(c, report.stats if not s.few else None)
                 + (f" Fewer than {sl.min_queries} queries: no band." if s.few else ""),
                 Markup(next(svgs))) for j, c in enumerate(s.curves)])
        for i, s in enumerate(plotted)]
    reasons = sorted({c.reason for s in sl.slices for t in s.targets for c in t.cells
                      if c.reason})
    return SlicesView(sl, rows, plots, len([s for s in ordered if s.curves]) - len(plotted),
                      [s.name for s in ordered if not s.passed], reasons)
