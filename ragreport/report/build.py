"""Building the report data: :func:`build_report` turns evaluation results (one per run) into a
:class:`~ragreport.report.model.Report` (the summary, targets, comparisons, worst queries, drop
checks); the document level and the slices are built by :mod:`.documents` and :mod:`.slicing`.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._version import __version__
from ..analysis.compare import baseline_tests, common_queries, outcomes, paired_columns
from ..analysis.curves import curve_families, run_intervals
from ..analysis.failures import FAILURE_KINDS, judged_at, unjudged_in_top, worst_queries
from ..analysis.targets import drop_beyond, drop_fails, run_checks
from ..errors import RagReportError
from ..measures import Measure, parse_measure
from ..perquery import unjudged_in_top as stored_unjudged_in_top
from ..present import (
    p_clause,
    pct,
    shown,
    signed,
    snippet,
    target_rule,
    threshold_text,
)
from ..result import EvaluationResult
from ..settings import StatsSettings, is_number
from ..targets import Target
from ..ties import TieCheck, tie_checks

if TYPE_CHECKING:
    from ..parallel import Mapper

__all__ = ["build_report", "drop_checks", "generated_at_from_env", "run_latencies"]

from ..present import curve_title, direction_mark, total_text
from .documents import document_cis, document_report, document_results
from .model import (
    RANK_ROWS,
    Comparison,
    Curve,
    Distribution,
    DropCheck,
    InputFile,
    PRCurve,
    QueryDetail,
    RankRow,
    Report,
    RunHealth,
    RunLatency,
    StatsInfo,
    SummaryCell,
    SummaryRow,
    TargetCell,
    TargetRow,
    WorstQueries,
)
from .slicing import slice_report

_EPOCH = re.compile(r"[+-]?[0-9]{1,4000}")


def _utc_text(t: _dt.datetime, what: str, given: object) -> str:
    try:
        u = (t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)).astimezone(
            _dt.timezone.utc)
    except (OverflowError, ValueError):
        raise RagReportError(f"{what} is out of range (years 1 to 9999 in UTC), got "
                             f"{given!r}") from None
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


def generated_at_from_env(when: str | _dt.datetime | None = None) -> str:
    """ISO time for the report: ``when``, else ``SOURCE_DATE_EPOCH``, else now (UTC).

    ``when`` is an ISO 8601 date or date and time (a time without an offset is UTC).
    ``SOURCE_DATE_EPOCH`` is whole seconds since 1970 (negative: before), as ``date +%s``
    prints them. Either must fall within the years 1 to 9999 once in UTC.

    Raises
    ------
    RagReportError
        ``when`` or ``SOURCE_DATE_EPOCH`` is not such a time (the message says what it got).

    >>> generated_at_from_env("2026-01-02T03:04:05Z")
    '2026-01-02T03:04:05Z'
    >>> generated_at_from_env("9999-12-31")
    '9999-12-31T00:00:00Z'
    """
    if isinstance(when, _dt.datetime):
        return _utc_text(when, "generated-at", when.isoformat())
    if when is not None and not isinstance(when, str):
        raise RagReportError(f"generated-at must be an ISO date/time, got {when!r}")
    if when:
        try:
            parsed = _dt.datetime.fromisoformat(when.replace("Z", "+00:00"))
        except (ValueError, OverflowError):
            raise RagReportError("generated-at must be an ISO date/time (years 1 to 9999), "
                                 f"got {when!r}") from None
        return _utc_text(parsed, "generated-at", when)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        if not _EPOCH.fullmatch(epoch.strip()):
            raise RagReportError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970, got "
                                 f"{epoch!r}")
        try:
            t = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(
                seconds=int(epoch))
        except (OverflowError, ValueError):
            raise RagReportError("SOURCE_DATE_EPOCH is out of range (years 1 to 9999), got "
                                 f"{epoch!r}") from None
        return _utc_text(t, "SOURCE_DATE_EPOCH", epoch)
    return _utc_text(_dt.datetime.now(_dt.timezone.utc), "the clock", "now")


def _grade_text(g: float | None) -> str:
    if g is None:
        return "unjudged"
    return f"{g:g}"


def build_report(
    results: Sequence[EvaluationResult],
    targets: Sequence[Target] = (),
    *,
    baseline: str | None = None,
    queries: Mapping[str, str] | None = None,
    docs: Mapping[str, str] | None = None,
    title: str = "Retrieval evaluation",
    generated_at: str | _dt.datetime | None = None,
    command: str = "",
    inputs: Sequence[InputFile] = (),
    worst_measure: str | Measure | None = None,
    worst_n: int = 20,
    per_query: bool = False,
    stats: bool = True,
    ci_level: float = 0.95,
    resamples: int = 10_000,
    curve_resamples: int = 1_000,
    seed: int = 0,
    alpha: float = 0.05,
    settings: StatsSettings | None = None,
    max_drop: float | None = None,
    workers: Mapper | None = None,
    target_level: str = "chunk",
    slices: Any = None,
    slice_targets: Mapping[str, Sequence[Target]] | None = None,
    slice_min_queries: int | None = None,
) -> Report:
    """Build the report data from one :class:`EvaluationResult` per run.

    Parameters
    ----------
    results : list of EvaluationResult
        One per run, with distinct run names; the first is the default baseline.
    targets : list of Target
        Checked against every run's mean (see :mod:`ragreport.targets`).
    baseline : str, optional
        Name of the run the others are compared with.
    queries, docs : dict, optional
        Query and document texts, shown next to ids.
    worst_measure : str, optional
        Measure that ranks the worst queries; default the first target's measure, else the
        first summary measure with a cutoff.
    worst_n : int
        How many worst queries per run get a detailed ranking.
    per_query : bool
        Keep every per-query value (for JSON ``--per-query``).
    stats : bool
        Compute bootstrap intervals and paired tests (see :mod:`ragreport.stats`).
    ci_level, resamples, curve_resamples, seed : float, int, int, int
        Confidence level, bootstrap resamples for the summary measures and for the curves'
        bands, and the seed (same seed, same numbers).
    alpha : float
        Significance level for the Holm-corrected paired tests.
    settings : StatsSettings, optional
        All of the above in one object (:class:`ragreport.analysis.settings.StatsSettings`,
        what the CLI and the explorer use), instead of ``ci_level``, ``resamples``,
        ``curve_resamples``, ``seed`` and ``alpha``.
    max_drop : float, optional
        Fail (``Report.all_passed`` False) when a run's mean on a target measure is below the
        baseline's by more than this *and* the drop is significant.
    target_level : {"chunk", "document"}
        With results evaluated with a doc map (``doc_map=``): check the targets and
        ``max_drop`` on the chunk-level means (default) or on the document-level ones.
        Either way :attr:`Report.document` holds both levels side by side.
    slices : QuerySlices, mapping or path, optional
        Query id -> slice names (:func:`ragreport.io.slices.load_slices` reads any of its
        forms): :attr:`Report.slices` holds the numbers per slice.
    slice_targets : mapping, optional
        Slice name -> its targets (:func:`ragreport.targets.load_slice_targets`); a failing
        one fails the report (``Report.all_passed``).
    slice_min_queries : int, optional
        Fewest queries of a slice for an interval or a test (default
        :data:`ragreport.analysis.slices.MIN_QUERIES`).
    workers : Workers, optional
        Worker processes for the bootstrap (:mod:`ragreport.parallel`); the numbers do not
        depend on them.
    """
    if not results:
        raise RagReportError("no run to report on")
    given = StatsSettings(ci_level, resamples, curve_resamples, seed, alpha)
    if settings is not None and given != StatsSettings():
        raise RagReportError("give the statistics settings either as settings= or as "
                             "ci_level=, resamples=, curve_resamples=, seed=, alpha=, not both")
    settings = given if settings is None else settings
    ci_level, resamples, curve_resamples = (settings.level, settings.resamples,
                                            settings.curve_resamples)
    seed, alpha = settings.seed, settings.alpha
    _check_max_drop(max_drop)
    names = [r.run_name for r in results]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RagReportError(f"run names must be distinct, {dupes[0]!r} is used twice; "
                             "name the runs with --name")
    base_name = baseline if baseline is not None else names[0]
    if base_name not in names:
        raise RagReportError(f"baseline {base_name!r} is not one of the runs "
                             f"({', '.join(map(repr, names))})")
    if isinstance(worst_n, bool) or not isinstance(worst_n, int) or worst_n < 0:
        raise RagReportError(f"worst_n must be an integer >= 0, got {worst_n!r}")
    if target_level == "document" and any(slice_targets.values() if slice_targets else ()):
        # the slices are analysed on the chunk-level results: a slice target would be checked
        # at the level the option does not name
        raise RagReportError("per-slice targets are checked at chunk level, not at the "
                             "document level target_level='document' (--target-level "
                             "document) names; check the slices without it, or drop the "
                             "[targets.slices] tables")
    base = results[names.index(base_name)]
    # the curves' width: every run's curves stop at its deepest ranking (at least 20) and at
    # what its input holds; measures at larger cutoffs come from the whole rankings
    k_max = min(r.k_max for r in results)

    # measures: the union of the summary measures, then the targets' measures
    measures: list[Measure] = []
    for r in results:
        measures += [m for m in r.measures if m not in measures]
    measures += [t.measure for t in targets if t.measure not in measures]
    means = {r.run_name: {m: r.mean(m) for m in measures} for r in results}

    bounded = [m for m in measures if m.bounded]
    from ..stats import bootstrap_scheme  # the resampling the intervals used, as stated

    scheme = " / ".join(sorted({bootstrap_scheme(r.n_queries) for r in results}))
    info = (StatsInfo(ci_level, resamples, curve_resamples, seed, alpha, interval=scheme)
            if stats else None)
    families = curve_families(results, measures)

    # a run's summary intervals and its curves' bands share one sequence of resampled query
    # sets (the bands use its first curve_resamples): every family and K of a run together
    cis: dict[str, dict[Measure, tuple[float, float]]] = {}
    all_bands: dict[str, dict[Measure, tuple[list[float], list[float]]]] = {}
    if info is not None:
        for r in results:
            got = run_intervals(r, bounded, families, k_max, level=ci_level,
                                resamples=resamples, curve_resamples=curve_resamples,
                                seed=seed, workers=workers)
            cis[r.run_name] = got.measures
            if families:
                all_bands[r.run_name] = got.bands
    if any(t.on == "ci_lower" for t in targets) and info is None:
        raise RagReportError("a target is on the confidence interval; do not disable stats")
    lower = {run: {m: lo for m, (lo, _) in c.items()} for run, c in cis.items()}
    tests = baseline_tests(results, base, bounded, resamples=info.resamples, seed=info.seed
                           ) if info is not None else {}
    doc_results = document_results(results, target_level)  # None without a doc map
    doc_cis = document_cis(doc_results, bounded, info, workers)
    t_results: Sequence[EvaluationResult] = results
    t_lower = lower
    if target_level == "document" and doc_results is not None:
        t_results = doc_results
        t_lower = {run: {m: lo for m, (lo, _) in c.items()} for run, c in doc_cis.items()}
    checks = run_checks(t_results, targets, t_lower if info is not None else None)
    # tie exposure of the target measures, on the results the targets are checked on
    ranked = all(r.has_rankings for r in results)  # per-query results hold no rankings
    tie_rows = tie_checks(doc_results if target_level == "document" and doc_results
                          is not None else results, targets, checks) if ranked else []
    target_rows = []
    for t in targets:
        cells = [TargetCell(c.run, c.value, c.shown, c.passed, c.margin, signed(c.margin),
                            t.on, c.mean)
                 for c in checks if c.target is t]
        target_rows.append(TargetRow(str(t.measure), t.op, t.threshold, threshold_text(t.threshold),
                                     t.source, cells))

    summary = []
    for m in measures:
        scells: list[SummaryCell] = []
        for r in results:
            v = means[r.run_name][m]
            lo, hi = cis.get(r.run_name, {}).get(m, (None, None))
            ci_text = f"[{shown(lo)}, {shown(hi)}]" if lo is not None and hi is not None else ""
            total = _total(r, m)
            if r is base:
                scells.append(SummaryCell(r.run_name, v, shown(v), None, "", "", lo, hi,
                                          ci_text, total=total, total_text=total_text(total)))
            else:
                d = v - means[base_name][m]
                p, tp = tests.get((r.run_name, m), (None, None))
                scells.append(SummaryCell(r.run_name, v, shown(v), d, signed(d),
                                          direction_mark(d), lo, hi, ci_text, p, tp,
                                          p is not None and p < alpha, total,
                                          total_text(total)))
        summary.append(SummaryRow(str(m), m.family.title, scells))

    chunk_targets = doc_results is None or target_level == "chunk"
    curves = []
    for fam in families:
        series = {r.run_name: [float(x) for x in r.mean_curve(fam)[:k_max]] for r in results}
        # the target marks go on the curves of the level the targets are checked at
        marks = [(t.measure.cutoff, t.threshold, target_rule(t.op, t.threshold)) for t in targets
                 if t.measure.curve_key == fam] if chunk_targets else []
        bands = {run: fams[fam] for run, fams in all_bands.items()}
        curves.append(Curve(str(fam), curve_title(fam),
                            list(range(1, k_max + 1)), series, marks, bands))

    distributions = [Distribution(str(m), {r.run_name: r.values(m).tolist() for r in results})
                     for m in measures if m.bounded]

    wm = parse_measure(worst_measure) if worst_measure is not None else next(
        (t.measure for t in targets), next((m for m in measures if m.cutoff), measures[0]))
    k_worst = wm.cutoff or k_max
    texts = dict(queries or {})
    worst = [_worst_queries(r, wm, k_worst, worst_n, texts, docs or {}) for r in results]
    worst = _tie_badges(worst, tie_rows)

    comparisons = []
    for r in results:
        if r is base or not bounded:
            continue
        ia, ib = common_queries(r, base)
        wins, losses, ties = outcomes(
            np.column_stack([base.values(m)[ib] for m in bounded]),
            np.column_stack([r.values(m)[ia] for m in bounded]))
        comparisons += [Comparison(r.run_name, base_name, str(m), int(w), int(lo), int(t))
                        for m, w, lo, t in zip(bounded, wins, losses, ties, strict=True)]

    health = []
    for r in results:
        c = r.counts
        health.append(RunHealth(r.run_name, c.evaluated, c.run_only, c.qrels_only, c.no_relevant,
                                c.empty_retrievals, c.duplicates_dropped, c.skipped_no_relevant,
                                r.ranking.run_only_ids[:10], r.ranking.qrels_only_ids[:10],
                                c.identical_ids_dropped if r.conventions.ignore_identical_ids
                                else None))

    drop_on, drop_base = results, base
    if target_level == "document" and doc_results is not None:
        drop_on, drop_base = doc_results, doc_results[names.index(base_name)]
    drops = drop_checks(drop_on, drop_base, targets, info, max_drop) \
        if max_drop is not None else []

    pq: dict[str, dict[str, dict[str, float]]] = {}
    judged_k: tuple[int, dict[str, float]] | None = None
    if per_query:
        for r in results:
            cols = {str(m): r.values(m).tolist() for m in measures}
            pq[r.run_name] = {q: {k: v[i] for k, v in cols.items()}
                              for i, q in enumerate(r.query_ids)}
        judged_k = (k_worst, {r.run_name: float(judged_at(r, k_worst).mean())
                              if r.n_queries else 0.0 for r in results})

    return Report(
        title=title,
        generated_at=generated_at_from_env(generated_at),
        version=__version__,
        command=command,
        inputs=list(inputs),
        runs=names,
        baseline=base_name,
        measures=[str(m) for m in measures],
        k_max=k_max,
        qrels_queries=base.counts.qrels_queries,
        targets=target_rows,
        summary=summary,
        curves=curves,
        distributions=distributions,
        worst=worst,
        comparisons=comparisons,
        health=health,
        conventions=base.conventions.describe(),
        per_query=pq,
        stats=info,
        drops=drops,
        ties=tie_rows,
        pr_curve=_pr_curve(results, targets if chunk_targets else ()),
        judged_at_k=judged_k,
        latency=run_latencies(results),
        rankings=ranked,
        document=None if doc_results is None else document_report(
            results, doc_results, measures, families, k_max, means, doc_cis, target_level,
            worst, wm, per_query, () if chunk_targets else targets),
        slices=None if slices is None and not slice_targets else slice_report(
            results, base, slices, slice_targets or {}, measures, targets, k_max, info,
            slice_min_queries, workers),
    )


def _check_max_drop(max_drop: float | None) -> None:
    """A ``max_drop`` that would switch the check off silently (NaN) is an error."""
    if max_drop is not None and (not is_number(max_drop) or not 0 <= float(max_drop) < 1):
        raise RagReportError(f"max_drop must be a number >= 0 and < 1, got {max_drop!r}")


def drop_checks(results: Sequence[EvaluationResult], base: EvaluationResult,
                 targets: Sequence[Target], info: StatsInfo | None, max_drop: float
                 ) -> list[DropCheck]:
    """Target measures on which a run is worse than the baseline by more than ``max_drop``."""
    from ..stats import holm

    if info is None:
        raise RagReportError("--max-drop needs the significance tests; do not disable stats")
    if isinstance(max_drop, bool) or not isinstance(max_drop, (int, float)) or max_drop < 0:
        raise RagReportError(f"max-drop must be a number >= 0, got {max_drop!r}")
    measures = list(dict.fromkeys(t.measure for t in targets if t.measure.bounded))
    rows: list[tuple[str, Measure, float, float, float, float, int]] = []
    pvals: list[float] = []
    for r in results:
        if r is base or not measures:
            continue
        ia, ib = common_queries(r, base)
        if len(ia) == 0:
            raise RagReportError(f"run {r.run_name!r} has no query in common with the "
                                 f"baseline {base.run_name!r}")
        a = np.column_stack([base.values(m)[ib] for m in measures])
        b = np.column_stack([r.values(m)[ia] for m in measures])
        got = paired_columns(a, b, resamples=info.resamples, seed=info.seed, level=info.level)
        pvals += [c.p_rand for c in got]
        rows += [(r.run_name, m, c.delta, c.lo, c.hi, 0.0, c.n)
                 for m, c in zip(measures, got, strict=True)]
    adj = holm(pvals) if pvals else np.zeros(0)
    out = []
    for (run, m, d, lo, hi, _, n), p in zip(rows, adj.tolist(), strict=True):
        significant = p < info.alpha
        too_big = drop_beyond(d, max_drop)
        failed = drop_fails(d, max_drop, significant)
        where = f"{shown(-d)} below" if d < 0 else f"{shown(d)} above"
        msg = (f"{m}: run {run!r} is {where} baseline {base.run_name!r} "
               f"({pct(info.level)} CI of the delta [{shown(lo)}, {shown(hi)}], "
               f"{p_clause(p)} {info.test}, Holm-corrected, {n} queries); allowed drop "
               f"{max_drop:g}"
               + ("; beyond it but not significant, so no failure"
                  if too_big and not significant else ""))
        out.append(DropCheck(run, base.run_name, str(m), d, lo, hi, float(p), max_drop,
                             significant, failed, msg))
    return out


def _worst_queries(r: EvaluationResult, m: Measure, k: int, n: int, queries: Mapping[str, str],
                   docs: Mapping[str, str]) -> WorstQueries:
    """The report's view of :func:`ragreport.analysis.failures.worst_queries`: each worst
    query with its ranking (at least :data:`RANK_ROWS` rows, through K up to 1,000), the
    relevant documents it missed, and texts."""
    sel = worst_queries(r, m, k, n)
    values, kinds = sel.values, sel.kinds
    level = r.conventions.rel_level
    n_rel = r.ranking.n_relevant(float(level))
    texts = {**r.query_texts, **queries}
    judged = judged_at(r, k) if len(sel.indices) else np.zeros(0)
    details = []
    ranked = r.has_rankings  # per-query results (ragreport.perquery): no ranked lists
    for i in sel.indices.tolist():
        q = r.query_ids[i]
        rows = [RankRow(d.rank, d.doc_id, "" if d.score is None else f"{d.score:g}",
                        _grade_text(d.grade), d.relevant, d.grade is not None, d.rank <= k,
                        snippet(docs.get(d.doc_id)), d.score, d.grade)
                for d in r.ranked_list(q, limit=max(RANK_ROWS, min(k, 1000)))] if ranked else []
        missing = [(d, f"{g:g}", snippet(docs.get(d))) for d, g in r.missing_relevant(q)] \
            if ranked else []
        top, unjudged = unjudged_in_top(r, i, k) if ranked else stored_unjudged_in_top(r, i, k)
        details.append(QueryDetail(q, texts.get(q, ""), r.run_name, float(values[i]),
                                   shown(float(values[i])), FAILURE_KINDS[int(kinds[i])],
                                   int(r.ranking.n_ret[i]), int(n_rel[i]), rows, missing,
                                   top, unjudged, float(judged[i])))
    return WorstQueries(r.run_name, str(m), k, r.n_queries, details, sel.counts,
                        sel.no_judged_relevant)


def _total(r: EvaluationResult, m: Measure) -> float | None:
    """The sum over the queries of a count trec_eval sums (``Family.aggregate == "sum"``:
    NumQ, NumRet, NumRel, NumRelRet), else None: the report shows it beside the mean."""
    if m.family.aggregate != "sum":
        return None
    return float(np.sum(r.values(m)))


def _pr_curve(results: Sequence[EvaluationResult], targets: Sequence[Target] = ()) -> PRCurve:
    """Mean 11-point interpolated precision of each run (:func:`ragreport.engine.pr_curve`),
    with the targets on ``IPrec@r`` (at the curve's relevance level) to mark on it."""
    from ..engine import pr_curve
    from ..metrics import PR_LEVELS

    series = {}
    for r in results:
        per_query = pr_curve(r)
        # column by column: the same sums (bit for bit) as the mean of IPrec@r alone
        series[r.run_name] = [float(np.ascontiguousarray(per_query[:, j]).mean())
                              if len(per_query) else 0.0 for j in range(len(PR_LEVELS))]
    rel = int(results[0].conventions.rel_level)
    marks = [(float(t.measure.recall), t.threshold, target_rule(t.op, t.threshold))
             for t in targets if t.measure.family.at == "recall" and t.measure.recall is not None
             and t.measure.rel in (None, rel)]
    note = ""
    if any(r.conventions.ties == "average" for r in results):
        note = ("Computed in trec_eval's tie order (document id descending), not averaged "
                "over tie orders: interpolated precision has no exact expected value over "
                "them (IPrec is refused under ties='average').")
    return PRCurve(list(PR_LEVELS), series, rel, {r.run_name: r.n_queries for r in results},
                   marks, note)


def _tie_badges(worst: list[WorstQueries], ties: list[TieCheck]) -> list[WorstQueries]:
    """The drill-down's queries with the target measures that depend on their tie order."""
    from dataclasses import replace

    out = []
    for w in worst:
        rows = [t for t in ties if t.run == w.run and t.dependent]
        queries = [replace(q, tie_ranges={t.measure: t.dependent_queries[q.query_id]
                                          for t in rows if q.query_id in t.dependent_queries})
                   for q in w.queries]
        out.append(replace(w, queries=queries))
    return out


def run_latencies(results: Sequence[EvaluationResult]) -> list[RunLatency]:
    """The latency of each run that carries one (:attr:`EvaluationResult.latency_ms`).

    >>> from ragreport import evaluate, load_run
    >>> run = load_run([{"query_id": "q", "retrieved": ["a"], "latency_ms": 12.5}])
    >>> run_latencies([evaluate({"q": {"a": 1}}, run, ["RR"])])[0].texts
    ('12.5', '12.5', '12.5')
    """
    from ..analysis.latency import latency_summary

    out = []
    for r in results:
        s = latency_summary(r.latency_ms)
        if s is not None:
            out.append(RunLatency(r.run_name, s.queries, s.p50_ms, s.p95_ms, s.max_ms))
    return out
