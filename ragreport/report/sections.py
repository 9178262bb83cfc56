"""The report's sections built from the runs' numbers: intervals, the target table, the
summary, the mean curves, the distributions, wins and losses, and dataset health. A stored
baseline (:class:`~ragreport.report.baseline.StoredBaseline`) comes first in each, with its
stored numbers; :func:`ragreport.report.build_report` puts them together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..analysis.compare import BaselineTest, PerQueryValues, common_queries, outcomes
from ..analysis.curves import run_intervals
from ..analysis.targets import run_checks
from ..analysis.unjudged import bounds_of
from ..analysis.unjudged_checks import (
    UnjudgedCheck,
    check_policy,
    gate_passes,
    unjudged_checks,
)
from ..core.result import EvaluationResult
from ..core.ties import TieCheck, tie_checks
from ..data import Qrels
from ..measures import Measure
from ..present import (
    curve_title,
    direction_mark,
    shown,
    signed,
    target_rule,
    threshold_text,
    total_text,
)
from ..targets import Target, TargetCheck
from .baseline import StoredBaseline, stored_health
from .cells import (
    Comparison,
    Curve,
    Distribution,
    JudgmentSources,
    RunHealth,
    StatsInfo,
    SummaryCell,
    SummaryRow,
    TargetCell,
    TargetRow,
)

if TYPE_CHECKING:
    from ..parallel import Mapper

__all__ = ["comparisons", "curves", "distributions", "health_rows", "judgment_sources",
           "per_query_values", "run_cis", "summary_rows", "target_rows"]

Bands = dict[Measure, tuple[list[float], list[float]]]


def run_cis(results: Sequence[EvaluationResult], bounded: list[Measure],
            families: list[Measure], k_max: int, info: StatsInfo | None,
            workers: Mapper | None
            ) -> tuple[dict[str, dict[Measure, tuple[float, float]]], dict[str, Bands]]:
    """Each run's summary intervals and curve bands. They share one sequence of resampled
    query sets (the bands use its first ``curve_resamples``): every family and K of a run
    together."""
    cis: dict[str, dict[Measure, tuple[float, float]]] = {}
    all_bands: dict[str, Bands] = {}
    if info is None:
        return cis, all_bands
    for r in results:
        got = run_intervals(r, bounded, families, k_max, level=info.level,
                            resamples=info.resamples, curve_resamples=info.curve_resamples,
                            seed=info.seed, workers=workers)
        cis[r.run_name] = got.measures
        if families:
            all_bands[r.run_name] = got.bands
    return cis, all_bands


def target_rows(results: Sequence[EvaluationResult],
                doc_results: list[EvaluationResult] | None, targets: Sequence[Target],
                target_level: str, cis: Mapping[str, Mapping[Measure, tuple[float, float]]],
                doc_cis: Mapping[str, Mapping[Measure, tuple[float, float]]],
                info: StatsInfo | None, unjudged: str = "warn", grade: float | None = None,
                ppi_lower: Mapping[str, Mapping[Measure, float]] | None = None,
                on_inconclusive: str = "fail"
                ) -> tuple[list[TargetRow], list[TieCheck], list[UnjudgedCheck]]:
    """The target table, on the level the targets are checked at, the tie exposure of the
    target measures and their unjudged documents (neither without rankings: per-query
    results; no unjudged bounds with a doc map), unjudged documents read as relevant at
    ``grade`` (default the qrels' largest). Under ``unjudged="fail"`` a pass that
    depends on unjudged documents is a failure in the table (and so in every gate)."""
    check_policy(unjudged)
    on_documents = target_level == "document" and doc_results is not None
    t_results: Sequence[EvaluationResult] = doc_results if on_documents and doc_results \
        else results
    intervals = doc_cis if on_documents else cis
    lower = {run: {m: lo for m, (lo, _) in c.items()} for run, c in intervals.items()}
    upper = {run: {m: hi for m, (_, hi) in c.items()} for run, c in intervals.items()}
    checks = run_checks(t_results, targets, lower if info is not None else None, ppi_lower,
                        upper if info is not None else None, on_inconclusive)
    ranked = all(r.has_rankings for r in results)
    tie_rows = tie_checks(t_results, targets, checks) if ranked else []
    # one run at a time (its filled reading freed before the next), target measures only
    wanted = list(dict.fromkeys(t.measure for t in targets))
    unj = [u for r in t_results for u in unjudged_checks(
        [bounds_of(r, grade=grade, measures=wanted, curves=False)], targets, checks)] \
        if ranked and doc_results is None and wanted and unjudged != "off" else []
    depends = {(u.run, u.measure) for u in unj if u.depends}
    rows = []
    for t in targets:
        cells = [_target_cell(c, gate_passes(c.passed, (c.run, str(t.measure)) in depends,
                                             unjudged))
                 for c in checks if c.target is t]
        rows.append(TargetRow(str(t.measure), t.op, t.threshold, threshold_text(t.threshold),
                              t.source, cells))
    return rows, tie_rows, unj


def _target_cell(c: TargetCheck, gate: bool) -> TargetCell:
    """A target check as the table shows it; ``gate``: its decision under the unjudged
    policy (False for a pass that depends on unjudged documents under ``"fail"``)."""
    return TargetCell(c.run, c.value, c.shown, gate, c.margin, signed(c.margin), c.target.on,
                      c.mean, unjudged=c.passed and not gate, outcome=c.outcome)


def summary_rows(results: Sequence[EvaluationResult], measures: list[Measure],
                 means: Mapping[str, Mapping[Measure, float]],
                 cis: Mapping[str, Mapping[Measure, tuple[float, float]]],
                 tests: Mapping[tuple[str, Measure], BaselineTest],
                 base: PerQueryValues, stored: StoredBaseline | None,
                 info: StatsInfo | None) -> list[SummaryRow]:
    """Each measure's row: every run's mean and interval, and its delta and Holm-corrected
    p-values against the baseline's mean (the stored mean of a stored baseline; no delta
    where it has none)."""
    rows = []
    for m in measures:
        cells: list[SummaryCell] = []
        bv = stored.means.get(str(m)) if stored is not None else means[base.run_name][m]
        if stored is not None and bv is not None:
            lo, hi = stored.intervals.get(str(m), (None, None)) if info is not None \
                else (None, None)  # no stats: no interval for today's runs either
            cells.append(_cell(stored.run_name, bv, lo, hi, stored.totals.get(str(m))))
        for r in results:
            v = means[r.run_name][m]
            lo, hi = cis.get(r.run_name, {}).get(m, (None, None))
            if r is base or bv is None:
                cells.append(_cell(r.run_name, v, lo, hi, _total(r, m)))
                continue
            d = v - bv
            test = tests.get((r.run_name, m))
            cells.append(_cell(r.run_name, v, lo, hi, _total(r, m), d, test,
                               test is not None and info is not None and test.p < info.alpha))
        rows.append(SummaryRow(str(m), m.family.title, cells))
    return rows


def _cell(run: str, v: float, lo: float | None, hi: float | None, total: float | None,
          d: float | None = None, test: BaselineTest | None = None,
          significant: bool = False) -> SummaryCell:
    ci_text = f"[{shown(lo)}, {shown(hi)}]" if lo is not None and hi is not None else ""
    if d is None:
        return SummaryCell(run, v, shown(v), None, "", "", lo, hi, ci_text, total=total,
                           total_text=total_text(total))
    if test is None:
        return SummaryCell(run, v, shown(v), d, signed(d), direction_mark(d), lo, hi, ci_text,
                           total=total, total_text=total_text(total))
    return SummaryCell(run, v, shown(v), d, signed(d), direction_mark(d), lo, hi, ci_text,
                       test.p, test.t_p, significant, total, total_text(total), test.p_raw,
                       test.t_p_raw, test.family)


def curves(results: Sequence[EvaluationResult], families: list[Measure], k_max: int,
            targets: Sequence[Target], all_bands: Mapping[str, Bands],
            stored: StoredBaseline | None) -> tuple[list[Curve], int]:
    """Each family's mean curve of every run, with its band and the targets to mark, and the
    curves' width: a stored baseline's curves (first) may stop sooner."""
    width = min([k_max, *(len(stored.curves[str(f)]) for f in families
                          if str(f) in stored.curves)]) if stored is not None else k_max
    out = []
    for fam in families:
        key = str(fam)
        series = {stored.run_name: stored.curves[key][:width]} \
            if stored is not None and key in stored.curves else {}
        series |= {r.run_name: [float(x) for x in r.mean_curve(fam)[:width]] for r in results}
        marks = [(t.measure.cutoff, t.threshold, target_rule(t.op, t.threshold))
                 for t in targets if t.measure.curve_key == fam]
        bands = {run: (fams[fam][0][:width], fams[fam][1][:width])
                 for run, fams in all_bands.items()}
        if stored is not None and key in stored.bands and bands:
            lo, hi = stored.bands[key]
            bands = {stored.run_name: (lo[:width], hi[:width])} | bands
        out.append(Curve(key, curve_title(fam), list(range(1, width + 1)), series, marks,
                         bands))
    return out, width


def distributions(results: Sequence[EvaluationResult], bounded: list[Measure],
                  stored: StoredBaseline | None) -> list[Distribution]:
    """Every run's per-query values of each bounded measure (the stored run's first, when
    its report holds them)."""
    out = []
    for m in bounded:
        values = {stored.run_name: list(stored.per_query[str(m)])} \
            if stored is not None and str(m) in stored.per_query else {}
        out.append(Distribution(str(m), values | {r.run_name: r.values(m).tolist()
                                                  for r in results}))
    return out


def comparisons(results: Sequence[EvaluationResult], base: PerQueryValues,
                bounded: list[Measure]) -> list[Comparison]:
    """Wins, losses and ties of each run against the baseline, per bounded measure, on the
    queries both evaluated (none for a run that has no query in common with it)."""
    out = []
    for r in results:
        if r is base or not bounded:
            continue
        ia, ib = common_queries(r, base)
        if len(ia) == 0:
            continue
        wins, losses, ties = outcomes(
            np.column_stack([base.values(m)[ib] for m in bounded]),
            np.column_stack([r.values(m)[ia] for m in bounded]))
        out += [Comparison(r.run_name, base.run_name, str(m), int(w), int(lo), int(t))
                for m, w, lo, t in zip(bounded, wins, losses, ties, strict=True)]
    return out


def health_rows(results: Sequence[EvaluationResult], stored: StoredBaseline | None
                ) -> list[RunHealth]:
    """Dataset health: how each run met the qrels (the stored run's counts first)."""
    h = stored_health(stored) if stored is not None else None
    out = [h] if h is not None else []
    for r in results:
        c = r.counts
        out.append(RunHealth(r.run_name, c.evaluated, c.run_only, c.qrels_only, c.no_relevant,
                             c.empty_retrievals, c.duplicates_dropped, c.skipped_no_relevant,
                             r.ranking.run_only_ids[:10], r.ranking.qrels_only_ids[:10],
                             c.identical_ids_dropped if r.conventions.ignore_identical_ids
                             else None))
    return out


def judgment_sources(first: EvaluationResult, results: Sequence[EvaluationResult],
                     measures: Sequence[Measure], info: StatsInfo | None = None
                     ) -> JudgmentSources | None:
    """Who judged, when the qrels ``first`` was evaluated against say (every judgment read,
    :mod:`ragreport.io.judgments`): the counts, the sources' agreement and, with two
    sources or more, every run's ``measures`` from each source alone; None without sources
    or rankings."""
    from ..analysis.agreement import agreements, per_source, source_results, sources_of
    from ..analysis.ppi import ppi_estimates
    from ..io.judgments import source_counts

    qrels = first.require_ranking().qrels if first.has_rankings else None
    if qrels is None or qrels.sources is None or qrels.judgments is None:
        return None
    ranked = [r for r in results if r.has_rankings]
    evaluated = source_results(ranked, qrels, measures) if len(sources_of(qrels)) > 1 else {}
    by_source = per_source(ranked, qrels, measures, evaluated) if evaluated else {}
    bounded = [m for m in measures if m.bounded]
    ppi = ppi_estimates(ranked, qrels, bounded, level=info.level if info else 0.95,
                        evaluated=evaluated) if evaluated and bounded else []
    return JudgmentSources(qrels.rule or "human-first", source_counts(qrels),
                           len(qrels.judgments), _several(qrels.judgments),
                           agreements(qrels, rel_level=first.conventions.rel_level),
                           by_source, ppi)


def _several(judgments: Qrels) -> int:
    """Pairs judged more than once."""
    from ..io.columns import pair_keys

    _, counts = np.unique(pair_keys(judgments.query_ids, judgments.doc_ids),
                          return_counts=True)
    return int(np.count_nonzero(counts > 1))


def per_query_values(results: Sequence[EvaluationResult], measures: list[Measure]
                     ) -> dict[str, dict[str, dict[str, float]]]:
    """Run -> query -> measure -> value (JSON ``--per-query``)."""
    out = {}
    for r in results:
        cols = {str(m): r.values(m).tolist() for m in measures}
        out[r.run_name] = {q: {k: v[i] for k, v in cols.items()}
                           for i, q in enumerate(r.query_ids)}
    return out


def _total(r: EvaluationResult, m: Measure) -> float | None:
    """The sum over the queries of a count trec_eval sums (``Family.aggregate == "sum"``:
    NumQ, NumRet, NumRel, NumRelRet), else None: the report shows it beside the mean."""
    if m.family.aggregate != "sum":
        return None
    return float(np.sum(r.values(m)))
