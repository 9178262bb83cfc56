"""Query slices: the report's numbers per named group of queries.

A slice is the set of a run's evaluated queries tagged with its name
(:class:`ragreport.io.slices.QuerySlices`); a query may be in several slices or in none. Per
slice and run: the mean of every measure with its bootstrap interval
(:func:`ragreport.analysis.curves.run_intervals` on the slice's queries: the same seed, level
and resamples as the whole run), the mean curves with their bands, the slice's targets
(``[targets.slices.NAME]``, :func:`ragreport.io.targets.load_slice_targets`), and against the
baseline the wins, losses and ties and the paired randomization test
(:func:`ragreport.analysis.compare.paired_columns`), Holm-corrected over every run, slice and
measure together.

**Too few queries.** A slice with fewer than :data:`MIN_QUERIES` queries (of a run; of the
queries both runs evaluated, for a comparison) gets its means, curves and wins / losses, but no
interval and no test: a bootstrap over 3 queries gives an interval that looks like a result
and is not one. Its ``note`` says so. A target on such a slice is checked on the mean as
usual; a target on the lower bound of the interval (``on = "ci_lower"``) fails there, with that
reason (the gate cannot show that the bound clears the threshold). Otherwise a ``min`` target on
the interval has three outcomes, as the whole run's: pass, fail or inconclusive. A slice none
of whose queries the run evaluated has no mean: its targets fail ("no query of the slice
evaluated").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure
from ..targets import Target, TargetCheck, check_targets
from .curves import RunIntervals, run_intervals
from .noninferiority import MIN_QUERIES  # fewest queries for an interval or a test on a slice

if TYPE_CHECKING:
    from ..parallel import Mapper
    from .compare import PerQueryValues

__all__ = [
    "MIN_QUERIES",
    "SliceAnalysis",
    "SliceCheck",
    "SliceComparison",
    "SliceRun",
    "analyse_slices",
    "describe_rule",
    "none_evaluated",
    "slice_comparisons",
    "slice_indices",
]

IntArray = npt.NDArray[np.int64]



@dataclass(frozen=True)
class SliceRun:
    """One run on one slice."""

    run: str
    n: int
    """The slice's queries this run evaluated."""
    means: dict[Measure, float]
    """Measure -> mean over the slice's queries (NaN when ``n`` is 0)."""
    intervals: dict[Measure, tuple[float, float]] = field(default_factory=dict)
    """Measure -> (lower, upper); empty below :data:`MIN_QUERIES` or without statistics."""
    curves: dict[Measure, list[float]] = field(default_factory=dict)
    """Family -> mean at K = 1..k_max over the slice's queries."""
    bands: dict[Measure, tuple[list[float], list[float]]] = field(default_factory=dict)
    """Family -> (lower, upper) at every K; empty as ``intervals`` is."""


@dataclass(frozen=True)
class SliceComparison:
    """A run against the baseline on the queries of one slice both evaluated."""

    slice: str
    run: str
    baseline: str
    measure: Measure
    n: int
    wins: int
    losses: int
    ties: int
    delta: float
    """Mean of run - baseline over the common queries (NaN when there is none)."""
    p_value: float | None = None
    """Holm-adjusted randomization p-value (over every run, slice and measure); None below
    :data:`MIN_QUERIES` common queries or without statistics."""
    t_p_value: float | None = None
    significant: bool = False


@dataclass(frozen=True)
class SliceCheck:
    """One slice target checked on one run."""

    slice: str
    check: TargetCheck
    reason: str = ""
    """Why the check failed without a value ("no query of the slice evaluated", "fewer than
    10 queries: no interval"); empty otherwise."""


@dataclass(frozen=True)
class SliceAnalysis:
    """Everything :func:`analyse_slices` computes."""

    names: list[str]
    runs: dict[str, dict[str, SliceRun]]
    """Slice -> run -> its numbers."""
    comparisons: list[SliceComparison]
    checks: list[SliceCheck]
    min_queries: int
    unknown: list[str]
    """Query ids of the slices that no run evaluated (first seen order)."""
    untagged: dict[str, int]
    """Run -> evaluated queries in no slice."""

    @property
    def passed(self) -> bool:
        """Every slice target passes on every run."""
        return all(c.check.passed for c in self.checks)

    def few(self, name: str) -> bool:
        """Some run has fewer than :attr:`min_queries` queries of the slice."""
        return any(r.n < self.min_queries for r in self.runs[name].values())


def slice_indices(query_ids: Sequence[str], members: Sequence[str]) -> IntArray:
    """Indices into ``query_ids`` of the queries in ``members``, in ``query_ids`` order.

    Parameters
    ----------
    query_ids : sequence of str
        A result's query ids.
    members : sequence of str
        The slice's query ids (any order; ids not in ``query_ids`` are left out).

    Returns
    -------
    numpy.ndarray
        Sorted indices.

    >>> slice_indices(["q1", "q2", "q3"], ["q3", "q9", "q1"]).tolist()
    [0, 2]
    """
    wanted = set(members)
    return np.array([i for i, q in enumerate(query_ids) if q in wanted], dtype=np.int64)


def analyse_slices(results: Sequence[EvaluationResult], slices: Mapping[str, Sequence[str]],
                   measures: Sequence[Measure], *, base: PerQueryValues | None = None,
                   families: Sequence[Measure] = (), k_max: int | None = None,
                   targets: Mapping[str, Sequence[Target]] | None = None,
                   stats: bool = True, level: float = 0.95, resamples: int = 10_000,
                   curve_resamples: int = 1_000, seed: int = 0, alpha: float = 0.05,
                   min_queries: int = MIN_QUERIES, workers: Mapper | None = None,
                   on_inconclusive: str = "fail") -> SliceAnalysis:
    """Per slice: means, intervals, curves, targets and the comparison with the baseline.

    Parameters
    ----------
    results : sequence of EvaluationResult
        The runs.
    slices : mapping
        Query id -> slice names (:attr:`ragreport.io.slices.QuerySlices.tags`).
    measures : sequence of Measure
        The measures of the means (and of the comparisons, those bounded by 1).
    base : EvaluationResult, PerQueryValues or None
        The baseline (no comparison without it); it need not be among ``results`` (a
        stored report's run, :class:`ragreport.report.baseline.StoredBaseline`).
    families : sequence of Measure
        The families whose mean curve (and band) is computed per slice.
    k_max : int or None
        Width of the curves (default: the smallest ``k_max`` of the results).
    targets : mapping or None
        Slice name -> its targets. A name that is not a slice is an error.
    stats : bool
        Compute intervals and tests.
    level, resamples, curve_resamples, seed : float, int, int, int
        As for the whole run (:func:`ragreport.analysis.curves.run_intervals`).
    alpha : float
        Significance level of the Holm-corrected tests.
    min_queries : int
        Fewest queries for an interval or a test.
    workers : Mapper or None
        Worker processes for the bootstrap.
    on_inconclusive : {"fail", "pass"}
        What a ``min`` target on a slice's interval does when the interval holds its
        threshold (:func:`ragreport.targets.check_targets`).

    Returns
    -------
    SliceAnalysis
        Per slice and run, the comparisons and the target checks.

    >>> from ragreport import evaluate
    >>> q = {"a": {"x": 1}, "b": {"x": 1}, "c": {"x": 1}}
    >>> r = evaluate(q, {"a": ["x"], "b": ["y", "x"], "c": ["y"]}, ["RR"], name="r")
    >>> got = analyse_slices([r], {"a": ["easy"], "b": ["hard"], "c": ["hard"]},
    ...                      [Measure("RR")], stats=False)
    >>> {s: got.runs[s]["r"].means[Measure("RR")] for s in got.names}  # (1/2 + 0) / 2
    {'easy': 1.0, 'hard': 0.25}
    """
    if isinstance(min_queries, bool) or not isinstance(min_queries, int) or min_queries < 2:
        raise RagReportError(f"min_queries must be an integer >= 2, got {min_queries!r}")
    names, members = _members(slices)
    if not names:
        raise RagReportError("no slice to report on (no query has a slice name)")
    targets = dict(targets or {})
    stray = [n for n in targets if n not in members]
    if stray:
        where = next((f"{t.source}: " for t in targets[stray[0]] if t.source != "defaults"),
                     "")  # the targets file and its table
        raise RagReportError(f"{where}targets are set for slice {stray[0]!r}, which no query is in "
                             f"(slices: {', '.join(map(repr, names[:10]))}"
                             f"{', ...' if len(names) > 10 else ''})")
    evaluated = set().union(*(r.query_ids for r in results)) if results else set()
    unknown = [q for q in slices if q not in evaluated]
    if len(unknown) == len(slices):
        raise RagReportError(none_evaluated(len(slices)))
    width = min(r.k_max for r in results) if k_max is None else int(k_max)
    tagged = {q for q, tags in slices.items() if tags}
    untagged = {r.run_name: sum(1 for q in r.query_ids if q not in tagged) for r in results}
    bounded = [m for m in measures if m.bounded]

    index = {r.run_name: {n: slice_indices(r.query_ids, members[n]) for n in names}
             for r in results}
    per: dict[str, dict[str, SliceRun]] = {}
    for n in names:
        per[n] = {}
        for r in results:
            idx = index[r.run_name][n]
            k = len(idx)
            means = {m: float(r.values(m)[idx].mean()) if k else math.nan for m in measures}
            curves = {f: [float(x) for x in r.curve(f)[idx, :width].mean(axis=0)] if k
                      else [] for f in families}
            intervals: dict[Measure, tuple[float, float]] = {}
            bands: dict[Measure, tuple[list[float], list[float]]] = {}
            if stats and k >= min_queries:
                got = _intervals(r, bounded, families, width, idx, level, resamples,
                                 curve_resamples, seed, workers)
                intervals, bands = got.measures, got.bands
            per[n][r.run_name] = SliceRun(r.run_name, k, means, intervals, curves, bands)

    comparisons = _comparisons(results, base, names, index, bounded, stats, resamples, seed,
                               alpha, min_queries) if base is not None else []
    checks = _checks(results, names, targets, per, min_queries, stats, on_inconclusive)
    return SliceAnalysis(names, per, comparisons, checks, min_queries, unknown, untagged)


def slice_comparisons(results: Sequence[EvaluationResult], base: PerQueryValues,
                      slices: Mapping[str, Sequence[str]], measures: Sequence[Measure], *,
                      stats: bool = True, resamples: int = 10_000, seed: int = 0,
                      alpha: float = 0.05, min_queries: int = MIN_QUERIES
                      ) -> list[SliceComparison]:
    """Only the comparisons of :func:`analyse_slices`: each run of ``results`` against
    ``base`` on each slice and bounded measure, on the queries both evaluated, Holm-corrected
    across runs, slices and measures. ``base`` need not be among ``results``: it may be any
    :class:`~ragreport.analysis.compare.PerQueryValues` (a stored report's baseline run,
    :class:`ragreport.report.baseline.StoredBaseline`).

    >>> from ragreport import evaluate
    >>> q = {"a": {"x": 1}, "b": {"x": 1}}
    >>> base = evaluate(q, {"a": ["y", "x"], "b": ["x"]}, ["RR"], name="base")
    >>> r = evaluate(q, {"a": ["x"], "b": ["x"]}, ["RR"], name="r")
    >>> [(c.slice, c.wins, c.delta) for c in slice_comparisons(
    ...     [r], base, {"a": ["s"], "b": ["t"]}, [Measure("RR")], stats=False)]
    [('s', 1, 0.5), ('t', 0, 0.0)]
    """
    names, members = _members(slices)
    index = {r.run_name: {n: slice_indices(r.query_ids, members[n]) for n in names}
             for r in results}
    return _comparisons(results, base, names, index, [m for m in measures if m.bounded],
                        stats, resamples, seed, alpha, min_queries)



def _members(slices: Mapping[str, Sequence[str]]) -> tuple[list[str], dict[str, list[str]]]:
    """The slice names in first-seen order, and each slice's query ids in the given order."""
    names: list[str] = []
    members: dict[str, list[str]] = {}
    for q, tags in slices.items():
        for t in tags:
            if t not in members:
                names.append(t)
                members[t] = []
            members[t].append(q)
    return names, members

def _intervals(r: EvaluationResult, bounded: Sequence[Measure], families: Sequence[Measure],
               width: int, idx: IntArray, level: float, resamples: int, curve_resamples: int,
               seed: int, workers: Mapper | None) -> RunIntervals:
    return run_intervals(r, bounded, families, width, level=level, resamples=resamples,
                         curve_resamples=curve_resamples, seed=seed, workers=workers,
                         queries=idx)


def _comparisons(results: Sequence[EvaluationResult], base: PerQueryValues,
                 names: list[str], index: dict[str, dict[str, IntArray]],
                 bounded: Sequence[Measure], stats: bool, resamples: int, seed: int,
                 alpha: float, min_queries: int) -> list[SliceComparison]:
    from ..stats import holm
    from .compare import common_queries, outcomes, paired_columns

    raw: list[tuple[str, str, Measure, int, int, int, int, float, float | None,
                    float | None]] = []
    if not bounded:
        return []
    for r in results:
        if r is base:
            continue
        ia, ib = common_queries(r, base)
        for n in names:
            keep = np.isin(ia, index[r.run_name][n])
            ra, rb = ia[keep], ib[keep]
            a = np.column_stack([base.values(m)[rb] for m in bounded])
            b = np.column_stack([r.values(m)[ra] for m in bounded])
            wins, losses, ties = outcomes(a, b)
            k = len(ra)
            deltas = (b - a).mean(axis=0) if k else np.full(len(bounded), np.nan)
            tests: list[tuple[float | None, float | None]] = [(None, None)] * len(bounded)
            if stats and k >= min_queries:
                got = paired_columns(a, b, resamples=resamples, seed=seed, interval=False)
                tests = [(c.p_rand, c.p_t) for c in got]
            raw += [(n, r.run_name, m, k, int(wins[j]), int(losses[j]), int(ties[j]),
                     float(deltas[j]), tests[j][0], tests[j][1])
                    for j, m in enumerate(bounded)]
    p_raw = {i: row[8] for i, row in enumerate(raw) if row[8] is not None}
    t_raw = {i: row[9] for i, row in enumerate(raw)
             if row[8] is not None and row[9] is not None and not math.isnan(row[9])}
    tested, t_ok = list(p_raw), list(t_raw)
    p_adj = holm(list(p_raw.values())) if tested else np.zeros(0)
    t_adj = holm(list(t_raw.values())) if t_ok else np.zeros(0)
    p_of = {i: float(p) for i, p in zip(tested, p_adj.tolist(), strict=True)}
    t_of = {i: float(p) for i, p in zip(t_ok, t_adj.tolist(), strict=True)}
    out = []
    for i, (n, run, m, k, w, lo, t, d, _, _) in enumerate(raw):
        p = p_of.get(i)
        out.append(SliceComparison(n, run, base.run_name, m, k, w, lo, t, d, p, t_of.get(i),
                                   p is not None and p < alpha))
    return out


def _checks(results: Sequence[EvaluationResult], names: list[str],
            targets: Mapping[str, Sequence[Target]], per: dict[str, dict[str, SliceRun]],
            min_queries: int, stats: bool, on_inconclusive: str = "fail"
            ) -> list[SliceCheck]:
    out: list[SliceCheck] = []
    for n in names:
        for t in targets.get(n, ()):
            for r in results:
                sr = per[n][r.run_name]
                mean = sr.means.get(t.measure, math.nan)
                reason = ""
                if sr.n == 0:
                    reason = "no query of the slice evaluated"
                elif t.on == "ci_lower" and t.measure not in sr.intervals:
                    reason = (f"fewer than {min_queries} queries: no interval" if stats
                              else "no interval (statistics are off)")
                if reason:
                    out.append(SliceCheck(n, TargetCheck(t, r.run_name, math.nan, "–", False,
                                                         math.nan, mean), reason))
                    continue
                lower = {r.run_name: {m: lo for m, (lo, _) in sr.intervals.items()}}
                upper = {r.run_name: {m: hi for m, (_, hi) in sr.intervals.items()}}
                got = check_targets([t], {r.run_name: {t.measure: mean}}, lower, None, upper,
                                    on_inconclusive)[0]
                out.append(SliceCheck(n, got))
    return out


def none_evaluated(n: int) -> str:
    """The error when none of the ``n`` query ids of a slices file was evaluated.

    >>> none_evaluated(1)[:57]
    'the 1 query id of the slices is not an evaluated query (d'
    >>> none_evaluated(2)[:50]
    'none of the 2 query ids of the slices is an evalua'
    """
    head = ("the 1 query id of the slices is not" if n == 1
            else f"none of the {n} query ids of the slices is")
    return f"{head} an evaluated query (do the ids match the qrels and the runs?)"


def describe_rule(min_queries: int = MIN_QUERIES) -> str:
    """The too-few-queries rule in one sentence, as the reports state it.

    >>> describe_rule(10)[:46]
    'A slice with fewer than 10 queries gets its me'
    """
    return (f"A slice with fewer than {min_queries} queries gets its means and wins / losses "
            "but no interval and no test (an interval over so few queries would mean "
            "nothing); a target on its interval's lower bound fails there.")

