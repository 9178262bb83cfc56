"""Comparing two runs query by query: their common queries and the paired statistics (mean
delta with its bootstrap interval, the paired randomization test and the paired t-test,
wins / losses / ties). One implementation for the report, the explorer and the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure

__all__ = [
    "BaselineTest",
    "PairedComparison",
    "PerQueryValues",
    "baseline_tests",
    "common_queries",
    "outcomes",
    "paired",
    "paired_columns",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

#: Per-query differences are rounded to this many decimals before wins / losses / ties are
#: counted (two values equal but for float noise are a tie).
TIE_DECIMALS = 12


class PerQueryValues(Protocol):
    """What a comparison reads of a run: its name, its query ids, their positions and its
    per-query values. An :class:`~ragreport.core.result.EvaluationResult` is one; so is a run read
    back from a stored report (:class:`ragreport.report.baseline.StoredBaseline`), which has
    nothing else."""

    @property
    def run_name(self) -> str: ...

    @property
    def query_ids(self) -> list[str]: ...

    def query_index(self, qid: str) -> int: ...

    def values(self, measure: str | Measure) -> FloatArray: ...


@dataclass(frozen=True)
class PairedComparison:
    """Run B against run A on the same queries (``delta`` = mean of B - A)."""

    mean_a: float
    mean_b: float
    delta: float
    lo: float
    """Lower bound of the bootstrap interval of the delta (NaN when not computed)."""
    hi: float
    p_t: float
    """Two-sided paired t-test p-value (NaN below two queries)."""
    p_rand: float
    """Two-sided paired randomization (sign-flip) test p-value."""
    n: int
    wins: int
    """Queries where B is above A."""
    losses: int
    ties: int
    level: float = 0.95
    resamples: int = 0
    seed: int = 0

    def significant(self, alpha: float = 0.05) -> bool:
        """The randomization test's p-value is below ``alpha``.

        Parameters
        ----------
        alpha : float
            The significance level.

        Returns
        -------
        bool
            Whether the randomization p-value is below ``alpha``.

        >>> paired([0.0] * 4, [1.0] * 4, resamples=100).significant()
        False
        """
        return bool(self.p_rand < alpha)


def common_queries(a: PerQueryValues, b: PerQueryValues) -> tuple[IntArray, IntArray]:
    """Index arrays ``(ia, ib)`` of the queries both results evaluated, sorted by query id:
    ``a.query_ids[ia[j]] == b.query_ids[ib[j]]``.

    Parameters
    ----------
    a, b : EvaluationResult or PerQueryValues
        The two evaluated runs.

    Returns
    -------
    tuple of numpy.ndarray
        ``(ia, ib)``: indices into ``a`` and ``b`` of the queries both have, aligned
        (query ``a.query_ids[ia[j]]`` is ``b.query_ids[ib[j]]``).

    >>> from ragreport import evaluate
    >>> ra = evaluate({"q1": {"x": 1}, "q2": {"x": 1}}, {"q1": ["x"], "q2": ["x"]}, ["P@1"])
    >>> rb = evaluate({"q2": {"x": 1}, "q3": {"x": 1}}, {"q2": ["x"], "q3": ["x"]}, ["P@1"])
    >>> [x.tolist() for x in common_queries(ra, rb)]
    [[1], [0]]
    """
    common = sorted(set(a.query_ids) & set(b.query_ids))
    ia = np.array([a.query_index(q) for q in common], dtype=np.int64)
    ib = np.array([b.query_index(q) for q in common], dtype=np.int64)
    return ia, ib


def outcomes(a_values: npt.ArrayLike, b_values: npt.ArrayLike
             ) -> tuple[IntArray, IntArray, IntArray]:
    """Per column of two (queries,) or (queries, columns) arrays: how many queries B wins
    (above A), loses and ties (equal once the difference is rounded to 12 decimals).

    Parameters
    ----------
    a_values, b_values : array_like
        Per-query values of A and B, (queries,) or (queries, columns).

    Returns
    -------
    tuple of numpy.ndarray
        ``(wins, losses, ties)`` of B per column (0-d for 1-d input).

    >>> [x.tolist() for x in outcomes([0.1, 0.5, 0.3], [0.2, 0.5, 0.1 + 0.2])]
    [1, 0, 2]
    """
    diff = np.round(np.asarray(b_values, dtype=np.float64)
                    - np.asarray(a_values, dtype=np.float64), TIE_DECIMALS)
    return ((diff > 0).sum(axis=0).astype(np.int64), (diff < 0).sum(axis=0).astype(np.int64),
            (diff == 0).sum(axis=0).astype(np.int64))


def _check_finite(values: FloatArray, name: str) -> None:
    """Refuse a NaN or infinite value: it would pass silently through the tests (a NaN delta
    never beats the observed one, so the randomization p-value would read 0)."""
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        i = int(bad[0][0])
        raise RagReportError(f"{name} must be finite numbers, got {float(values[tuple(bad[0])])} "
                             f"at query index {i} ({len(bad)} non-finite value(s))")


def _t_pvalues(a: FloatArray, b: FloatArray) -> list[float]:
    from ..stats import paired_t_test

    return [paired_t_test(a[:, j], b[:, j]).p_value for j in range(a.shape[1])]


def paired_columns(a_values: npt.ArrayLike, b_values: npt.ArrayLike, *, resamples: int = 10_000,
                   seed: int = 0, level: float = 0.95, interval: bool = True
                   ) -> list[PairedComparison]:
    """:func:`paired` for every column of two (queries, columns) arrays at once: the same
    resampled query sets and sign patterns serve every column, so column ``j`` gets exactly
    ``paired(a[:, j], b[:, j])``. ``interval=False`` skips the bootstrap of the delta (``lo``
    and ``hi`` are then NaN).

    Parameters
    ----------
    a_values, b_values : array_like
        (queries, columns) values of A and B, finite; row ``i`` is one query.
    resamples : int
        Resampled query sets and sign patterns (>= 1).
    seed : int
        Seed of the resampling (>= 0).
    level : float
        Confidence level of the delta's interval.
    interval : bool
        Compute the bootstrap interval of the delta.

    Returns
    -------
    list of PairedComparison
        One per column.

    >>> a = np.array([[0.0, 1.0], [0.5, 1.0], [1.0, 0.0]])
    >>> b = a[:, ::-1]      # column 0: deltas +1, +0.5, -1; column 1: -1, -0.5, +1
    >>> [(c.wins, c.losses, c.ties) for c in paired_columns(a, b, interval=False)]
    [(2, 1, 0), (1, 2, 0)]
    """
    from ..stats import bootstrap_ci, paired_randomization_pvalues

    a = np.asarray(a_values, dtype=np.float64)
    b = np.asarray(b_values, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape:
        raise RagReportError(f"paired values must be (queries, columns) arrays of one shape, "
                             f"got {a.shape} and {b.shape}")
    n, cols = a.shape
    if n == 0:
        raise RagReportError("no query in common to compare")
    _check_finite(a, "a_values")
    _check_finite(b, "b_values")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise RagReportError(f"seed must be an integer >= 0, got {seed!r}")
    d = b - a
    p_rand = paired_randomization_pvalues(a, b, resamples, seed)
    p_t = _t_pvalues(a, b)
    if interval:
        ci = bootstrap_ci(d, level, resamples, seed)
        lo, hi = ci.lower.tolist(), ci.upper.tolist()
    else:
        lo = hi = [math.nan] * cols
    wins, losses, ties = outcomes(a, b)
    mean_a, mean_b, delta = a.mean(axis=0), b.mean(axis=0), d.mean(axis=0)
    return [PairedComparison(float(mean_a[j]), float(mean_b[j]), float(delta[j]),
                             float(lo[j]), float(hi[j]), float(p_t[j]), float(p_rand[j]), n,
                             int(wins[j]), int(losses[j]), int(ties[j]), level,
                             resamples, seed)
            for j in range(cols)]


def paired(a_values: npt.ArrayLike, b_values: npt.ArrayLike, *, resamples: int = 10_000,
           seed: int = 0, level: float = 0.95) -> PairedComparison:
    """Paired comparison of B against A on the same queries (row ``i`` of both is one
    query): means, the mean delta B - A and its percentile bootstrap interval
    (:func:`ragreport.stats.bootstrap_ci` of the deltas), the paired randomization test
    (:func:`~ragreport.stats.paired_randomization_test`) and the paired t-test
    (:func:`~ragreport.stats.paired_t_test`), and the queries B wins, loses and ties.

    Parameters
    ----------
    a_values, b_values : array_like
        (queries,) values of A and B, finite; element ``i`` is one query.
    resamples : int
        Resampled query sets and sign patterns (>= 1).
    seed : int
        Seed of the resampling (>= 0).
    level : float
        Confidence level of the delta's interval.

    Returns
    -------
    PairedComparison
        Means, delta and its interval, both p-values, wins, losses and ties.

    >>> c = paired([0.1, 0.2, 0.3], [0.2, 0.4, 0.3], resamples=1000)
    >>> round(c.delta, 4), c.p_rand, (c.wins, c.losses, c.ties)
    (0.1, 0.5, (2, 0, 1))
    """
    a = np.asarray(a_values, dtype=np.float64)
    b = np.asarray(b_values, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise RagReportError("paired values must be 1-d arrays of the same length")
    return paired_columns(a[:, None], b[:, None], resamples=resamples, seed=seed,
                          level=level)[0]


@dataclass(frozen=True)
class BaselineTest:
    """One run against the baseline on one measure: the raw and the Holm-adjusted p-values
    of the randomization test and of the t-test, and the size of the Holm family."""

    p: float
    """Holm-adjusted randomization-test p-value."""
    t_p: float
    """Holm-adjusted paired t-test p-value (NaN where the test is undefined)."""
    p_raw: float
    t_p_raw: float
    family: int
    """Comparisons (runs x measures) in the Holm family: 1 leaves the p-value as it is."""


def baseline_tests(results: Sequence[EvaluationResult], base: PerQueryValues,
                   measures: Sequence[Measure], *, resamples: int, seed: int,
                   families: Sequence[Sequence[Measure]] | None = None
                   ) -> dict[tuple[str, Measure], BaselineTest]:
    """Paired tests of every other run against ``base`` for every measure, on their common
    queries, with Holm's correction run within each family: every run compared with the
    baseline on every measure of the family (``families``; default one family of all the
    ``measures``; a measure in none is a family of its own). t-test p-values that are NaN
    are left out of the correction.

    Parameters
    ----------
    results : sequence of EvaluationResult
        The runs compared with the baseline (the baseline itself is skipped).
    base : EvaluationResult or PerQueryValues
        The baseline run (it need not be among ``results``).
    measures : sequence of Measure
        The measures tested.
    resamples : int
        Sign patterns of the randomization test.
    seed : int
        Seed of the sign patterns.
    families : sequence of sequences of Measure, optional
        The Holm families, as groups of measures.

    Returns
    -------
    dict
        ``(run name, measure) -> BaselineTest``.

    >>> from ragreport import evaluate
    >>> q = {"a": {"x": 1}, "b": {"x": 1}}
    >>> r1 = evaluate(q, {"a": ["x"], "b": ["x"]}, ["P@1"], name="one")
    >>> r2 = evaluate(q, {"a": ["y"], "b": ["y"]}, ["P@1"], name="two")
    >>> baseline_tests([r1, r2], r1, r1.measures, resamples=100, seed=0)
    {('two', Measure('P@1')): BaselineTest(p=0.5, t_p=0.0, p_raw=0.5, t_p_raw=0.0, family=1)}
    """
    raw = _raw_tests(results, base, measures, resamples, seed)
    groups = [list(f) for f in families] if families is not None else [list(measures)]
    grouped = {m for f in groups for m in f}
    groups += [[m] for m in measures if m not in grouped]
    out: dict[tuple[str, Measure], BaselineTest] = {}
    for group in groups:
        keys = [k for k in raw if k[1] in group]
        out.update(_holm_family(keys, raw))
    return {k: out[k] for k in raw}


def _raw_tests(results: Sequence[EvaluationResult], base: PerQueryValues,
               measures: Sequence[Measure], resamples: int, seed: int
               ) -> dict[tuple[str, Measure], tuple[float, float]]:
    """``(run, measure) -> (randomization p, t-test p)``, uncorrected."""
    out: dict[tuple[str, Measure], tuple[float, float]] = {}
    if not measures:
        return out
    for r in results:
        if r is base:
            continue
        ia, ib = common_queries(r, base)
        if len(ia) == 0:
            continue
        a = np.column_stack([base.values(m)[ib] for m in measures])
        b = np.column_stack([r.values(m)[ia] for m in measures])
        got = paired_columns(a, b, resamples=resamples, seed=seed, interval=False)
        out.update({(r.run_name, m): (c.p_rand, c.p_t)
                    for m, c in zip(measures, got, strict=True)})
    return out


def _holm_family(keys: Sequence[tuple[str, Measure]],
                 raw: dict[tuple[str, Measure], tuple[float, float]]
                 ) -> dict[tuple[str, Measure], BaselineTest]:
    from ..stats import holm

    if not keys:
        return {}
    perm = np.array([raw[k][0] for k in keys])
    t_raw = np.array([raw[k][1] for k in keys])
    t_adj = np.full(len(t_raw), np.nan)
    ok = ~np.isnan(t_raw)
    t_adj[ok] = holm(t_raw[ok])
    return {k: BaselineTest(float(p), float(t), float(pr), float(tr), len(keys))
            for k, p, t, pr, tr in zip(keys, holm(perm), t_adj, perm, t_raw, strict=True)}
