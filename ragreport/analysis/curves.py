"""Metric-vs-K curves of a run: the mean over queries at every K, and its bootstrap band."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..measures import Measure
from ..result import EvaluationResult
from ..stats import BootstrapCI

__all__ = ["curve_families", "mean_band", "mean_curve"]

FloatArray = npt.NDArray[np.float64]


def mean_curve(result: EvaluationResult, family: str | Measure) -> FloatArray:
    """(K,) mean over the queries of a family at K = 1..``result.k_max`` (zeros without a
    query).

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
