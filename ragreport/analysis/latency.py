"""Latency of a retriever: percentiles of the per-query times a run carries.

A run collected by :func:`ragreport.collect_run` (or read from a JSONL file whose
records carry ``latency_ms``) knows how long the retriever took for each query;
:func:`latency_summary` reduces those times to what the report shows beside the quality
numbers: the median (p50), the 95th percentile and the maximum, in milliseconds.

Percentiles are linearly interpolated between the sorted times (numpy's default, the
"inclusive" definition of spreadsheets: p50 of 1, 2, 3, 4 is 2.5), over every timed query of
the run, whether it is evaluated (in the qrels) or not: the latency is a property of the calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import RagReportError

__all__ = ["LatencySummary", "latency_summary"]


@dataclass(frozen=True)
class LatencySummary:
    """The per-query latency of one run, in milliseconds."""

    queries: int
    """How many queries were timed."""
    p50_ms: float
    p95_ms: float
    max_ms: float
    mean_ms: float


def latency_summary(latency_ms: Mapping[str, float]) -> LatencySummary | None:
    """p50, p95, max and mean of the per-query times (milliseconds); None when none is known.

    Parameters
    ----------
    latency_ms : mapping of str to float
        Query id -> time in milliseconds (:attr:`ragreport.Run.latency_ms`,
        :attr:`ragreport.EvaluationResult.latency_ms`).

    Returns
    -------
    LatencySummary or None
        None for an empty mapping (a run without latency).

    Raises
    ------
    RagReportError
        A time is negative, NaN or infinite.

    Examples
    --------
    >>> s = latency_summary({"q1": 10.0, "q2": 20.0, "q3": 30.0, "q4": 40.0})
    >>> s.queries, s.p50_ms, s.p95_ms, s.max_ms, s.mean_ms
    (4, 25.0, 38.5, 40.0, 25.0)
    >>> latency_summary({}) is None
    True
    """
    if not latency_ms:
        return None
    times = np.fromiter(latency_ms.values(), dtype=np.float64, count=len(latency_ms))
    if not np.isfinite(times).all() or (times < 0).any():
        bad = next(q for q, t in latency_ms.items() if not 0 <= t < float("inf"))
        raise RagReportError(f"latency of query {bad!r} is {latency_ms[bad]!r}; a time is a "
                             "finite number of milliseconds >= 0")
    p50, p95 = np.percentile(times, [50, 95]).tolist()
    return LatencySummary(len(times), float(p50), float(p95), float(times.max()),
                          float(times.mean()))
