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
from ..analysis.compare import (
    PerQueryValues,
    baseline_tests,
    common_queries,
)
from ..analysis.curves import curve_families
from ..analysis.failures import FAILURE_KINDS, judged_at, unjudged_in_top, worst_queries
from ..analysis.unjudged_checks import UnjudgedCheck
from ..core.perquery import unjudged_in_top as stored_unjudged_in_top
from ..core.result import EvaluationResult
from ..core.ties import TieCheck
from ..errors import RagReportError
from ..measures import Measure, parse_measure
from ..present import (
    shown,
    snippet,
    target_rule,
)
from ..settings import StatsSettings, is_number
from ..targets import Target

if TYPE_CHECKING:
    from ..analysis.drift import DriftCheck
    from ..core.result import RankedDoc
    from ..parallel import Mapper

__all__ = ["build_report", "generated_at_from_env", "run_latencies"]

from . import sections
from .baseline import StoredBaseline, baseline_for
from .breakdowns import RunLatency
from .cells import (
    RANK_ROWS,
    DropCheck,
    InputFile,
    PRCurve,
    QueryDetail,
    RankRow,
    StatsInfo,
    WorstQueries,
)
from .documents import document_cis, document_report, document_results
from .drops import drop_checks
from .model import Report
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
    results: Sequence[EvaluationResult], targets: Sequence[Target] = (), *,
    baseline: str | StoredBaseline | None = None, queries: Mapping[str, str] | None = None,
    docs: Mapping[str, str] | None = None, title: str = "Retrieval evaluation",
    generated_at: str | _dt.datetime | None = None, command: str = "",
    inputs: Sequence[InputFile] = (), worst_measure: str | Measure | None = None,
    worst_n: int = 20, per_query: bool = False, stats: bool = True, ci_level: float = 0.95,
    resamples: int = 10_000, curve_resamples: int = 1_000, seed: int = 0, alpha: float = 0.05,
    settings: StatsSettings | None = None, max_drop: float | None = None,
    workers: Mapper | None = None, target_level: str = "chunk", slices: Any = None,
    slice_targets: Mapping[str, Sequence[Target]] | None = None,
    slice_min_queries: int | None = None, drift: Sequence[DriftCheck] = (),
    allow_drift: bool = False, unjudged: str = "warn", unjudged_grade: float | None = None,
    on_inconclusive: str = "fail",
) -> Report:
    """Build the report data from one :class:`EvaluationResult` per run.

    Parameters
    ----------
    results : list of EvaluationResult
        One per run, with distinct run names; the first is the default baseline.
    targets : list of Target
        Checked against every run's mean (see :mod:`ragreport.targets`).
    baseline : str or StoredBaseline, optional
        Name of the run the others are compared with; or a run read back from a stored
        JSON report (:func:`ragreport.load_baseline_report`), which then comes first among
        the runs: every run of ``results`` is compared with its stored per-query values (by
        the same tests, so with the same numbers as with its run file), and its means,
        intervals, curves and dataset health are the stored ones (it has no rankings: no
        worst queries, tie exposure or target checks).
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
        All of the above in one object (:class:`ragreport.StatsSettings`, what the CLI and
        the explorer use), instead of ``ci_level``, ``resamples``, ``curve_resamples``,
        ``seed`` and ``alpha``.
    max_drop : float, optional
        Check that every run is at most this below the baseline on each target measure
        (:mod:`ragreport.analysis.noninferiority`): a check fails (``Report.all_passed``
        False) when the interval of the paired delta lies below -max_drop, passes when it
        lies above, and is inconclusive otherwise.
    on_inconclusive : {"fail", "pass"}
        What an inconclusive drop check, or target on ``ci_lower``, does: fail (the
        default: a check passes only when its interval shows it) or nothing (the gate
        fails only on evidence against it).
    target_level : {"chunk", "document"}
        With results evaluated with a doc map (``doc_map=``): check the targets and
        ``max_drop`` on the chunk-level means (default) or on the document-level ones.
        Either way :attr:`Report.document` holds both levels side by side.
    slices : QuerySlices, mapping or path, optional
        Query id -> slice names (:func:`ragreport.io.slices.load_slices` reads any of its
        forms): :attr:`Report.slices` holds the numbers per slice.
    slice_targets : mapping, optional
        Slice name -> its targets (:func:`ragreport.io.targets.load_slice_targets`); a failing
        one fails the report (``Report.all_passed``).
    slice_min_queries : int, optional
        Fewest queries of a slice for an interval or a test (default
        :data:`ragreport.analysis.slices.MIN_QUERIES`).
    workers : Workers, optional
        Worker processes for the bootstrap (:mod:`ragreport.parallel`); the numbers do not
        depend on them.
    drift, allow_drift : sequence of DriftCheck, bool
        With a stored baseline: today's runs checked against it
        (:func:`ragreport.report.baseline.drift_checks`); one that drifted refuses the
        report (a RagReportError listing each) unless ``allow_drift``. The report shows them
        (:attr:`Report.drift`).
    unjudged : {"warn", "fail", "off"}
        A target whose decision differs between the unjudged documents read as not relevant
        and as relevant (:mod:`ragreport.analysis.unjudged_checks`) is said (``"warn"``), or
        fails when it passed (``"fail"``); ``"off"``: not looked at (it costs one more
        evaluation of each run). :attr:`Report.unjudged` holds every check.
    unjudged_grade : float, optional
        The grade of an unjudged document read as relevant (default the largest grade in
        the qrels; see :func:`ragreport.unjudged_bounds`).
    """
    settings = _check_arguments(results, baseline, settings, StatsSettings(
        ci_level, resamples, curve_resamples, seed, alpha), max_drop, worst_n, target_level,
        slice_targets, drift)
    names = [r.run_name for r in results]
    stored = _stored_base(baseline, results, drift, allow_drift) \
        if isinstance(baseline, StoredBaseline) else None
    # the baseline's name, the result whose conventions the report states, the baseline
    base_name = stored.run_name if stored is not None \
        else baseline if isinstance(baseline, str) else names[0]
    first = results[0] if stored is not None else results[names.index(base_name)]
    base: PerQueryValues = stored if stored is not None else first
    k_max = min(r.k_max for r in results)  # the curves' width (larger K: from the rankings)
    measures = _measures(results, targets)
    bounded = [m for m in measures if m.bounded]
    _check_measures(stored, bounded, targets, stats)
    holm_groups = holm_families(bounded, targets)
    info = _stats_info(results, settings, holm_groups, base, on_inconclusive) if stats else None
    families = curve_families(results, measures)
    means = {r.run_name: {m: r.mean(m) for m in measures} for r in results}
    cis, all_bands = sections.run_cis(results, bounded, families, k_max, info, workers)
    tests = baseline_tests(results, base, bounded, resamples=info.resamples, seed=info.seed,
                           families=holm_groups) if info is not None else {}
    doc_results = document_results(results, target_level)  # None without a doc map
    doc_cis = document_cis(doc_results, bounded, info, workers)
    judgments = sections.judgment_sources(first, results, measures, info)
    target_rows, tie_rows, unjudged_rows = sections.target_rows(
        results, doc_results, targets, target_level, cis, doc_cis, info, unjudged, unjudged_grade,
        judgments.ppi_lower if judgments is not None else None, on_inconclusive)
    chunk_targets = doc_results is None or target_level == "chunk"
    curves, k_shown = sections.curves(results, families, k_max,
                                      targets if chunk_targets else (), all_bands, stored)
    wm = parse_measure(worst_measure) if worst_measure is not None else next(
        (t.measure for t in targets), next((m for m in measures if m.cutoff), measures[0]))
    k_worst = wm.cutoff or k_max
    worst = _worst(results, wm, k_worst, worst_n, queries, docs, tie_rows, unjudged_rows)
    return Report(
        title=title, generated_at=generated_at_from_env(generated_at), version=__version__,
        command=command,
        inputs=list(inputs) + ([stored.input_file] if stored and stored.input_file else []),
        runs=[base_name, *names] if stored is not None else names, baseline=base_name,
        measures=[str(m) for m in measures], k_max=k_shown,
        qrels_queries=first.counts.qrels_queries, targets=target_rows, curves=curves,
        worst=worst, stats=info, ties=tie_rows, unjudged=unjudged_rows,
        conventions=first.conventions.describe() | _p_value_convention(info),
        summary=sections.summary_rows(results, measures, means, cis, tests, base, stored,
                                      info),
        distributions=sections.distributions(results, bounded, stored),
        comparisons=sections.comparisons(results, base, bounded),
        health=sections.health_rows(results, stored), rankings=all(r.has_rankings for r in results),
        per_query=sections.per_query_values(results, measures) if per_query else {},
        drops=_drops(results, doc_results, base, base_name, target_level, targets, info,
                     max_drop, (unjudged, unjudged_grade, on_inconclusive)),
        pr_curve=_pr_curve(results, targets if chunk_targets else (), stored),
        judged_at_k=_judged_at_k(results, k_worst) if per_query else None,
        latency=run_latencies(results), unjudged_policy=unjudged,
        judgments=judgments,
        document=None if doc_results is None else document_report(
            results, doc_results, measures, families, k_max, means, doc_cis, target_level,
            worst, wm, per_query, () if chunk_targets else targets),
        slices=None if slices is None and not slice_targets else slice_report(
            results, base if stored is not None or len(results) > 1 else None, slices,
            slice_targets or {}, measures, targets, k_max, info, slice_min_queries, workers),
        drift=None if stored is None else stored.drift(drift, allow_drift),
    )


def _drops(results: Sequence[EvaluationResult], doc_results: list[EvaluationResult] | None,
           base: PerQueryValues, base_name: str, target_level: str, targets: Sequence[Target],
           info: StatsInfo | None, max_drop: float | None,
           policies: tuple[str, float | None, str]) -> list[DropCheck]:
    """The ``max_drop`` checks (none without it), at the level the targets are checked at
    (document level: against the baseline's document-level result); ``policies``: the
    unjudged policy, its grade and what an inconclusive check does."""
    unjudged, grade, on_inconclusive = policies
    if max_drop is None:
        return []
    on, base_on = (results, base)
    if target_level == "document" and doc_results:
        on = doc_results
        base_on = doc_results[[r.run_name for r in results].index(base_name)]
    return drop_checks(on, base_on, targets, info, max_drop, unjudged, grade, on_inconclusive)


def _check_arguments(results: Sequence[EvaluationResult], baseline: object,
                     settings: StatsSettings | None, given: StatsSettings,
                     max_drop: float | None, worst_n: int, target_level: str,
                     slice_targets: Mapping[str, Sequence[Target]] | None,
                     drift: Sequence[DriftCheck]) -> StatsSettings:
    """The arguments of :func:`build_report` that are wrong on their own; the statistics
    settings (``settings=``, or the separate keywords: never both)."""
    if not results:
        raise RagReportError("no run to report on")
    if settings is not None and given != StatsSettings():
        raise RagReportError("give the statistics settings either as settings= or as "
                             "ci_level=, resamples=, curve_resamples=, seed=, alpha=, not both")
    _check_max_drop(max_drop)
    names = [r.run_name for r in results]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RagReportError(f"run names must be distinct, {dupes[0]!r} is used twice; "
                             "name the runs with --name")
    _check_baseline(baseline, names, drift)
    if isinstance(worst_n, bool) or not isinstance(worst_n, int) or worst_n < 0:
        raise RagReportError(f"worst_n must be an integer >= 0, got {worst_n!r}")
    if target_level == "document" and any(slice_targets.values() if slice_targets else ()):
        # the slices are analysed on the chunk-level results: a slice target would be checked
        # at the level the option does not name
        raise RagReportError("per-slice targets are checked at chunk level, not at the "
                             "document level target_level='document' (--target-level "
                             "document) names; check the slices without it, or drop the "
                             "[targets.slices] tables")
    return given if settings is None else settings


def _check_baseline(baseline: object, names: list[str], drift: Sequence[DriftCheck]) -> None:
    """A run's name or a stored run; drift checks only with the stored run."""
    if isinstance(baseline, str) and baseline not in names:
        raise RagReportError(f"baseline {baseline!r} is not one of the runs "
                             f"({', '.join(map(repr, names))})")
    if baseline is not None and not isinstance(baseline, (str, StoredBaseline)):
        raise RagReportError("baseline must be a run's name or a stored run "
                             f"(load_baseline_report), got {type(baseline).__name__}")
    if drift and not isinstance(baseline, StoredBaseline):
        raise RagReportError("drift checks compare today's runs with a stored baseline: give "
                             "it as baseline=load_baseline_report(...)")


def _stored_base(stored: StoredBaseline, results: Sequence[EvaluationResult],
                 drift: Sequence[DriftCheck], allow_drift: bool) -> StoredBaseline:
    """The stored baseline under the name the report shows it by, once today's runs may be
    compared with it."""
    from ..analysis.drift import refusal

    message = refusal(drift, stored.source)
    if message and not allow_drift:
        raise RagReportError(message)
    if any(r.document is not None for r in results):
        raise RagReportError("--baseline-report does not work with --doc-map yet (a stored "
                             "report keeps no document-level per-query values): give the "
                             "baseline's run file and --baseline NAME instead")
    return baseline_for(stored, [r.run_name for r in results])


def _worst(results: Sequence[EvaluationResult], wm: Measure, k: int, n: int,
           queries: Mapping[str, str] | None, docs: Mapping[str, str] | None,
           tie_rows: list[TieCheck], unjudged_rows: list[UnjudgedCheck]
           ) -> list[WorstQueries]:
    """Each run's worst queries, badged with the target measures that depend on their tie
    order or on their unjudged documents."""
    return _tie_badges([_worst_queries(r, wm, k, n, dict(queries or {}), docs or {})
                        for r in results], tie_rows, unjudged_rows)


def _judged_at_k(results: Sequence[EvaluationResult], k: int
                 ) -> tuple[int, dict[str, float]]:
    """Each run's mean Judged@K at the worst queries' K (what a stored baseline checks)."""
    return k, {r.run_name: float(judged_at(r, k).mean()) if r.n_queries else 0.0
               for r in results}


def _check_measures(stored: StoredBaseline | None, bounded: list[Measure],
                    targets: Sequence[Target], stats: bool) -> None:
    """Before any work: a measure a stored baseline lacks, a target on an interval without
    the intervals."""
    for m in bounded:
        if stored is not None:
            stored.values(m)  # one clear error naming the stored report
    if any(t.on == "ci_lower" for t in targets) and not stats:
        raise RagReportError("a target is on the confidence interval; do not disable stats")


def _measures(results: Sequence[EvaluationResult], targets: Sequence[Target]) -> list[Measure]:
    """The union of the summary measures, then the targets' measures."""
    measures: list[Measure] = []
    for r in results:
        measures += [m for m in r.measures if m not in measures]
    measures += [t.measure for t in targets if t.measure not in measures]
    return measures


def _stats_info(results: Sequence[EvaluationResult], s: StatsSettings,
                holm_groups: Sequence[Sequence[Measure]], base: PerQueryValues,
                on_inconclusive: str = "fail") -> StatsInfo:
    from ..stats import bootstrap_scheme  # the resampling the intervals used, as stated

    # the runs tested against the baseline: not itself (a stored one is none of the results),
    # none that shares no query with it; no family without a bounded measure
    compared = sum(1 for r in results if r is not base
                   and len(common_queries(r, base)[0])) if holm_groups else 0
    scheme = " / ".join(sorted({bootstrap_scheme(r.n_queries) for r in results}))
    return StatsInfo(s.level, s.resamples, s.curve_resamples, s.seed, s.alpha, interval=scheme,
                     families=families_text(holm_groups, compared),
                     on_inconclusive=on_inconclusive)


def _p_value_convention(info: StatsInfo | None) -> dict[str, str]:
    """The Conventions' line on the p-values, when runs are compared."""
    if info is None or not info.families:
        return {}
    return {"p-values": f"the raw p-value of the {info.test} against the baseline, and "
                        f"{info.correction}'s adjusted value within {info.families}: a gate "
                        "decides on the target measures, so a comparison on one target is not "
                        "corrected for every other measure shown beside it"}


def holm_families(bounded: Sequence[Measure], targets: Sequence[Target]
                  ) -> list[list[Measure]]:
    """The Holm families of the summary's tests, as groups of measures (each with every run
    compared with the baseline): the target measures, the decisions (the family
    ``max_drop`` decides on, too), then the other measures, so that a comparison on one
    target is not corrected for every measure shown beside it.

    >>> from ragreport.targets import parse_targets
    >>> ms = [Measure("P", 5), Measure("RR"), Measure("nDCG", 10)]
    >>> holm_families(ms, parse_targets({"nDCG@10": 0.5}))
    [[Measure('nDCG@10')], [Measure('P@5'), Measure('RR')]]
    """
    aimed = {t.measure for t in targets}
    groups = [[m for m in bounded if m in aimed], [m for m in bounded if m not in aimed]]
    return [g for g in groups if g]


def families_text(holm_groups: Sequence[Sequence[Measure]], compared: int) -> str:
    """What Holm's correction runs over, as the report states it ("" when no run is compared
    with a baseline).

    >>> print(families_text([[Measure("nDCG", 10)], [Measure("P", 5), Measure("RR")]],
    ...                     1))  # doctest: +NORMALIZE_WHITESPACE
    two families, each within itself: the target measure (1 measure × 1 run compared with
    the baseline) and the other measures (2 measures × 1 run)
    """
    runs = f"{compared} run{'s' if compared != 1 else ''}"
    if compared == 0:  # one run: nothing is compared
        return ""
    if len(holm_groups) < 2:
        n = len(holm_groups[0]) if holm_groups else 0
        return f"one family: {n} measure{'s' if n != 1 else ''} × {runs} compared with the " \
               "baseline"
    t, o = (len(g) for g in holm_groups)
    return (f"two families, each within itself: the target measure{'s' if t != 1 else ''} "
            f"({t} measure{'s' if t != 1 else ''} × {runs} compared with the baseline) and "
            f"the other measures ({o} measure{'s' if o != 1 else ''} × {runs})")


def _check_max_drop(max_drop: float | None) -> None:
    """A ``max_drop`` that would switch the check off silently (NaN) is an error."""
    if max_drop is not None and (not is_number(max_drop) or not 0 <= float(max_drop) < 1):
        raise RagReportError(f"max_drop must be a number >= 0 and < 1, got {max_drop!r}")


def _worst_queries(r: EvaluationResult, m: Measure, k: int, n: int, queries: Mapping[str, str],
                   docs: Mapping[str, str]) -> WorstQueries:
    """The report's view of :func:`ragreport.analysis.failures.worst_queries`: each worst
    query with its ranking (at least :data:`RANK_ROWS` rows, through K up to 1,000), the
    relevant documents ranked below those rows, the ones it missed, and texts."""
    sel = worst_queries(r, m, k, n)
    values, kinds = sel.values, sel.kinds
    level = r.conventions.rel_level
    n_rel = r.ranking.n_relevant(float(level))
    texts = {**r.query_texts, **queries}
    judged = judged_at(r, k) if len(sel.indices) else np.zeros(0)
    details = []
    ranked = r.has_rankings  # per-query results (ragreport.core.perquery): no ranked lists
    for i in sel.indices.tolist():
        q = r.query_ids[i]
        ranking = r.ranked_list(q) if ranked else []
        shown_to = max(RANK_ROWS, min(k, 1000))
        rows = [_rank_row(d, k, docs) for d in ranking[:shown_to]]
        later = [_rank_row(d, k, docs) for d in ranking[shown_to:] if d.relevant]
        missing = [(d, f"{g:g}", snippet(docs.get(d))) for d, g in r.missing_relevant(q)] \
            if ranked else []
        top, unjudged = unjudged_in_top(r, i, k) if ranked else stored_unjudged_in_top(r, i, k)
        details.append(QueryDetail(q, texts.get(q, ""), r.run_name, float(values[i]),
                                   shown(float(values[i])), FAILURE_KINDS[int(kinds[i])],
                                   int(r.ranking.n_ret[i]), int(n_rel[i]), rows, missing,
                                   top, unjudged, float(judged[i]), later=later))
    return WorstQueries(r.run_name, str(m), k, r.n_queries, details, sel.counts,
                        sel.no_judged_relevant)


def _rank_row(d: RankedDoc, k: int, docs: Mapping[str, str]) -> RankRow:
    """One ranked document as the drill-downs show it."""
    return RankRow(d.rank, d.doc_id, "" if d.score is None else f"{d.score:g}",
                   _grade_text(d.grade), d.relevant, d.grade is not None, d.rank <= k,
                   snippet(docs.get(d.doc_id)), d.score, d.grade)


def _pr_curve(results: Sequence[EvaluationResult], targets: Sequence[Target] = (),
              stored: StoredBaseline | None = None) -> PRCurve:
    """Mean 11-point interpolated precision of each run (:func:`ragreport.core.engine.pr_curve`),
    with the targets on ``IPrec@r`` (at the curve's relevance level) to mark on it; a stored
    baseline's first, when its report has one."""
    from ..core.engine import pr_curve
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
    queries = {r.run_name: r.n_queries for r in results}
    if stored is not None and stored.pr_curve is not None \
            and len(stored.pr_curve) == len(PR_LEVELS):
        series = {stored.run_name: list(stored.pr_curve)} | series
        queries = {stored.run_name: len(stored.query_ids)} | queries
    return PRCurve(list(PR_LEVELS), series, rel, queries, marks, note)


def _tie_badges(worst: list[WorstQueries], ties: list[TieCheck],
                unjudged: list[UnjudgedCheck]) -> list[WorstQueries]:
    """The drill-down's queries with the target measures that depend on their tie order or
    on their unjudged documents."""
    from dataclasses import replace

    out = []
    for w in worst:
        rows = [t for t in ties if t.run == w.run and t.dependent]
        urows = [u for u in unjudged if u.run == w.run and u.dependent]
        queries = [replace(q, tie_ranges={t.measure: t.dependent_queries[q.query_id]
                                          for t in rows if q.query_id in t.dependent_queries},
                           unjudged_ranges={u.measure: u.dependent_queries[q.query_id]
                                            for u in urows
                                            if q.query_id in u.dependent_queries})
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
