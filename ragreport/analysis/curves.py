"""Metric-vs-K curves of a run: the mean over queries at every K, and its bootstrap band."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..core.result import EvaluationResult
from ..measures import Measure
from ..stats import BootstrapCI

if TYPE_CHECKING:
    from ..parallel import Mapper

__all__ = ["RunIntervals", "curve_families", "mean_band", "mean_curve", "run_intervals"]

FloatArray = npt.NDArray[np.float64]


def mean_curve(result: EvaluationResult, family: str | Measure) -> FloatArray:
    """(K,) mean over the queries of a family at K = 1..``result.k_max`` (zeros without a
    query).

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.
    family : str or Measure
        The measure family (``"nDCG"``).

    Returns
    -------
    numpy.ndarray
        Shape (K,): the mean over queries at K = 1..k_max.

    >>> from ragreport import evaluate
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}}, {"a": ["x"], "b": ["y", "x"]}, ["P@2"])
    >>> mean_curve(r, "P")[:2].tolist()     # P@1: (1 + 0) / 2; P@2: (1/2 + 1/2) / 2
    [0.5, 0.5]
    """
    return np.asarray(result.mean_curve(family), dtype=np.float64)


def mean_band(result: EvaluationResult, family: str | Measure, *, level: float = 0.95,
              resamples: int = 1_000, seed: int = 0) -> BootstrapCI:
    """Percentile bootstrap interval of the mean curve at every K (``lower`` and ``upper``
    of shape (K,)), every K from the same resampled query sets
    (:func:`ragreport.stats.bootstrap_ci` of the (queries, K) curve).

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.
    family : str or Measure
        The measure family.
    level : float
        Confidence level.
    resamples : int
        Resampled query sets.
    seed : int
        Seed of the resampling.

    Returns
    -------
    BootstrapCI
        Lower and upper bound of the mean at every K.

    >>> from ragreport import evaluate
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}}, {"a": ["x"], "b": ["x"]}, ["P@2"])
    >>> band = mean_band(r, "P", resamples=50)
    >>> band.lower[:2].tolist(), band.upper[:2].tolist()   # every query alike: no spread
    ([1.0, 0.5], [1.0, 0.5])
    """
    from ..stats import bootstrap_ci

    return bootstrap_ci(result.curve(family), level, resamples, seed)


def curve_families(results: Sequence[EvaluationResult], measures: Sequence[Measure] = ()
                   ) -> list[Measure]:
    """The families (with parameters) that have a curve in every result: those of
    ``measures`` first, then P, R, nDCG and RR, in that order, each once.

    Parameters
    ----------
    results : sequence of EvaluationResult
        The evaluated runs.
    measures : sequence of Measure
        The measures of the report (their families come first).

    Returns
    -------
    list of Measure
        The families every run has a curve of.

    >>> from ragreport import evaluate
    >>> r = evaluate({"a": {"x": 1}}, {"a": ["x"]}, ["nDCG@5", "AP"])
    >>> [str(f) for f in curve_families([r], list(r.measures))]
    ['nDCG', 'AP', 'P', 'R', 'RR']
    """
    out: list[Measure] = []
    for m in [*measures, *(Measure(f) for f in ("P", "R", "nDCG", "RR"))]:
        if m.has_curve and m.curve_key not in out and all(m.curve_key in r.curves
                                                           for r in results):
            out.append(m.curve_key)
    return out


@dataclass(frozen=True)
class RunIntervals:
    """Bootstrap intervals of one run: of the mean of each measure, and of each family's
    mean curve at every K (its band)."""

    measures: dict[Measure, tuple[float, float]]
    """measure -> (lower, upper) of the interval of its mean."""
    bands: dict[Measure, tuple[list[float], list[float]]] = field(default_factory=dict)
    """family -> (lower, upper) at K = 1..k_max."""


def run_intervals(result: EvaluationResult, measures: Sequence[Measure],
                  families: Sequence[Measure] = (), k_max: int | None = None, *,
                  level: float = 0.95, resamples: int = 10_000, curve_resamples: int = 1_000,
                  seed: int = 0, workers: Mapper | None = None,
                  queries: npt.NDArray[np.int64] | None = None) -> RunIntervals:
    """The intervals of a run's means and the bands of its curves (K = 1..``k_max``), from
    one sequence of resampled query sets (:func:`ragreport.stats.bootstrap_cis`): the
    measures use its first ``resamples``, the bands its first ``curve_resamples``, so each
    equals its own :func:`~ragreport.stats.bootstrap_ci` (and :func:`mean_band`) and the
    draws are paid once.

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.
    measures : sequence of Measure
        The measures whose mean gets an interval.
    families : sequence of Measure
        The families whose curve gets a band.
    k_max : int or None
        Width of the bands (default: the result's ``k_max``).
    level : float
        Confidence level.
    resamples : int
        Resampled query sets for the measures.
    curve_resamples : int
        Resampled query sets for the bands.
    seed : int
        Seed of the resampling.
    workers : Mapper or None
        Runs the chunks of the bootstrap in parallel.
    queries : numpy.ndarray or None
        Indices of the queries resampled (a slice of the run's queries,
        :mod:`ragreport.analysis.slices`); default: all of them.

    Returns
    -------
    RunIntervals
        ``measures``: measure -> (lower, upper); ``bands``: family -> (lower, upper) lists.

    >>> from ragreport import evaluate
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}}, {"a": ["x"], "b": ["y"]}, ["P@1"])
    >>> got = run_intervals(r, [Measure("P", 1)], [Measure("P")], 2, resamples=200,
    ...                     curve_resamples=50)
    >>> lo, hi = got.measures[Measure("P", 1)]
    >>> 0.0 <= lo <= 0.5 <= hi <= 1.0, len(got.bands[Measure("P")][0])
    (True, 2)
    """
    from ..stats import bootstrap_cis

    width = result.k_max if k_max is None else int(k_max)
    rows: Any = slice(None) if queries is None else np.asarray(queries, dtype=np.int64)
    n = result.n_queries if queries is None else len(rows)

    def columns(parts: list[Any]) -> Any:
        """The per-query blocks of columns side by side.

        Parameters
        ----------
        parts : list of numpy.ndarray
            (queries, w) blocks.

        Returns
        -------
        numpy.ndarray
            The blocks side by side; (queries, 0) when there is none.
        """
        return np.hstack(parts) if parts else np.empty((n, 0))

    blocks: list[tuple[Any, int]] = [
        (columns([result.values(m)[rows, None] for m in measures]), resamples)]
    if families:
        blocks.append((columns([result.curve(f)[rows, :width] for f in families]),
                       curve_resamples))
    got = bootstrap_cis(blocks, level, seed, workers=workers)
    ci = got[0]
    out = {m: (float(ci.lower[j]), float(ci.upper[j])) for j, m in enumerate(measures)}
    bands = {}
    if families:
        band = got[1]
        bands = {f: (band.lower[i * width:(i + 1) * width].tolist(),
                     band.upper[i * width:(i + 1) * width].tolist())
                 for i, f in enumerate(families)}
    return RunIntervals(out, bands)
