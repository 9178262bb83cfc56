"""The drop gate (``--max-drop``): is a run worse than the baseline on a target measure by
more than allowed? One :class:`~ragreport.report.cells.DropCheck` per run and target
measure, a non-inferiority check with three outcomes on the bootstrap interval of the paired
delta (:mod:`ragreport.analysis.noninferiority`: pass, fail or inconclusive, with about how
many queries would decide an inconclusive one; fewer than its ``MIN_QUERIES`` queries are
inconclusive; ``on_inconclusive`` says what an inconclusive check does to the gate). The
paired test's p-values (Holm-corrected over all checks) are reported beside it, for
information.

Each check is decided again with the unjudged documents read as relevant
(:func:`ragreport.analysis.unjudged.filled_together` on the run and the baseline: every
document that either retrieves and the qrels do not judge, relevant for both alike, on the
queries both evaluated), on its own interval; a check whose outcome differs between the two
readings depends on unjudged documents (:class:`~ragreport.report.cells.DropUnjudged`), and
under ``unjudged="fail"`` one that did not fail fails when the filled reading's gate
decision does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..analysis.compare import PerQueryValues, common_queries, paired_columns
from ..analysis.noninferiority import (
    FAIL,
    INCONCLUSIVE,
    MIN_QUERIES,
    PASS,
    check_on_inconclusive,
    gate_fails,
    outcome,
    queries_to_decide,
)
from ..analysis.unjudged import filled_together
from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure
from ..present import p_clause, p_text, pct, shown
from ..targets import Target
from .cells import DropCheck, DropUnjudged, StatsInfo

__all__ = ["drop_checks"]


@dataclass(frozen=True)
class _Paired:
    """One run against the baseline on one measure: the paired test's numbers and the
    per-query deltas."""

    run: str
    measure: Measure
    delta: float
    lo: float
    hi: float
    n: int
    deltas: np.ndarray


def drop_checks(results: Sequence[EvaluationResult], base: PerQueryValues,
                 targets: Sequence[Target], info: StatsInfo | None, max_drop: float,
                 unjudged: str = "warn", grade: float | None = None,
                 on_inconclusive: str = "fail") -> list[DropCheck]:
    """Whether each run is worse than the baseline by more than ``max_drop`` on each target
    measure (pass, fail or inconclusive), each also decided with the unjudged documents read
    as relevant at ``grade`` (not with ``unjudged="off"``, a stored baseline, per-query
    results or a doc map)."""
    check_on_inconclusive(on_inconclusive)
    if info is None:
        raise RagReportError("--max-drop needs the significance tests; do not disable stats")
    if isinstance(max_drop, bool) or not isinstance(max_drop, (int, float)) or max_drop < 0:
        raise RagReportError(f"max-drop must be a number >= 0, got {max_drop!r}")
    measures = list(dict.fromkeys(t.measure for t in targets if t.measure.bounded))
    compared = [(r, base) for r in results if r.run_name != base.run_name] if measures else []
    pairs, p, raw = _tests(compared, measures, info)
    filled = _filled(compared, measures, grade) if unjudged != "off" and compared else None
    readings: list[DropUnjudged | None] = [None] * len(pairs)
    if filled is not None:
        fill, f_compared = filled
        f_pairs, f_p, _ = _tests(f_compared, measures, info)
        readings = [_reading(a, b, fp, fill, info, max_drop, on_inconclusive)
                    for a, b, fp in zip(pairs, f_pairs, f_p, strict=True)]
    out = []
    for c, adj, r, u in zip(pairs, p, raw, readings, strict=True):
        result = outcome(c.lo, c.hi, max_drop, n=c.n)
        failed = gate_fails(result, on_inconclusive)
        needed = queries_to_decide(c.deltas, max_drop, info.level) \
            if result == INCONCLUSIVE else None
        if needed is not None:
            needed = max(needed, MIN_QUERIES)
        if u is not None:
            u = _noted(u, result)
        # the policy fails a check whose gate decision differs on the filled reading (a
        # different outcome alone, e.g. inconclusive and pass, is said, not failed)
        by_policy = u is not None and u.failed and not failed and unjudged == "fail"
        msg = _message(c, base.run_name, adj, r, info, max_drop, result, needed)
        out.append(DropCheck(c.run, base.run_name, str(c.measure), c.delta, c.lo, c.hi, adj,
                             max_drop, adj < info.alpha, failed or by_policy, msg, r, u,
                             by_policy, result, needed, on_inconclusive, c.n))
    return out


def _tests(compared: Sequence[tuple[PerQueryValues, PerQueryValues]],
           measures: list[Measure], info: StatsInfo
           ) -> tuple[list[_Paired], list[float], list[float]]:
    """Each (run, baseline) on each measure (queries both evaluated): the comparisons, their
    Holm-adjusted and raw p-values."""
    from ..stats import holm

    pairs: list[_Paired] = []
    pvals: list[float] = []
    for r, base in compared:
        ia, ib = common_queries(r, base)
        if len(ia) == 0:
            raise RagReportError(f"run {r.run_name!r} has no query in common with the "
                                 f"baseline {base.run_name!r}")
        a = np.column_stack([base.values(m)[ib] for m in measures])
        b = np.column_stack([r.values(m)[ia] for m in measures])
        got = paired_columns(a, b, resamples=info.resamples, seed=info.seed, level=info.level)
        pvals += [c.p_rand for c in got]
        pairs += [_Paired(r.run_name, m, c.delta, c.lo, c.hi, c.n, b[:, j] - a[:, j])
                  for j, (m, c) in enumerate(zip(measures, got, strict=True))]
    adj = holm(pvals).tolist() if pvals else []
    return pairs, [float(x) for x in adj], pvals


def _filled(compared: Sequence[tuple[PerQueryValues, PerQueryValues]],
            measures: list[Measure], grade: float | None
            ) -> tuple[float, list[tuple[PerQueryValues, PerQueryValues]]] | None:
    """The grade and each (run, baseline) evaluated again with one filled reading of their
    unjudged documents (both runs', on the queries both evaluated: a comparison needs one
    reading of each document, whatever other runs retrieve); None where it is not defined
    (a stored baseline, no rankings, a doc map, different qrels)."""
    out: list[tuple[PerQueryValues, PerQueryValues]] = []
    fill = 0.0
    for r, base in compared:
        if not all(isinstance(x, EvaluationResult) and x.has_rankings
                   and x.doc_map_info is None and x.document is None for x in (r, base)):
            return None
        got = filled_together([r, base], grade=grade, measures=measures)  # type: ignore[list-item]
        if got is None:
            return None
        (fr, fb), fill = got
        out.append((fr, fb))
    return fill, out


def _reading(judged: _Paired, filled: _Paired, p: float, grade: float, info: StatsInfo,
             max_drop: float, on_inconclusive: str) -> DropUnjudged:
    """The filled reading of one check: its outcome and the interval of the mean delta
    (the means of the per-query lower and upper ends of the two readings)."""
    lo = np.minimum(judged.deltas, filled.deltas)
    hi = np.maximum(judged.deltas, filled.deltas)
    result = outcome(filled.lo, filled.hi, max_drop, n=filled.n)
    return DropUnjudged(grade, float(lo.mean()), float(hi.mean()), filled.delta, p,
                        gate_fails(result, on_inconclusive), int(np.count_nonzero(lo != hi)),
                        "", result, filled.lo, filled.hi)


#: How a note names an outcome ("this pass depends on unjudged documents").
_NAMED = {PASS: "pass", FAIL: "failure", INCONCLUSIVE: "inconclusive outcome"}


def _noted(u: DropUnjudged, result: str) -> DropUnjudged:
    """``u`` with its note: whether the outcome on trec_eval's reading (``result``) holds."""
    from dataclasses import replace

    if u.outcome == result:
        return u
    return replace(u, note=f"this {_NAMED[result]} depends on unjudged documents")


def _message(c: _Paired, base: str, p: float, raw: float, info: StatsInfo, max_drop: float,
             result: str, needed: int | None) -> str:
    where = f"{shown(-c.delta)} below" if c.delta < 0 else f"{shown(c.delta)} above"
    margin = f"-{max_drop:g}"
    said = {PASS: f"pass: the interval lies above {margin}",
            FAIL: f"fail: the interval lies below {margin}"}.get(result)
    if said is None:
        said = (f"inconclusive: the interval holds {margin}; " if c.n >= MIN_QUERIES else
                f"inconclusive: fewer than {MIN_QUERIES} queries decide nothing; ") + (
            f"about {needed - c.n:,} more {'query' if needed - c.n == 1 else 'queries'} "
            f"would decide a {max_drop:g} drop" if needed is not None
            else "more queries would not decide it (the delta sits on the margin)"
            if c.n >= 2 else "one query cannot decide it")
    return (f"{c.measure}: run {c.run!r} is {where} baseline {base!r} "
            f"({pct(info.level)} CI of the delta [{shown(c.lo)}, {shown(c.hi)}], "
            f"{p_clause(p)} {info.test}, Holm-corrected over the target measures, raw "
            f"{p_text(raw)}, {c.n} queries); allowed drop {max_drop:g}: {said}")
