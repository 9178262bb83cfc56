"""The analysis layer: what every view of a result shows, computed once.

Pure functions over :class:`~ragreport.core.result.EvaluationResult`, returning numpy arrays of
shape (queries,) or (queries, K), or small frozen dataclasses. The report builder, the
explorer, the notebook helpers and the CLI all read them; none of them recomputes.

- :mod:`.failures`: failure kinds at K, the first relevant rank, the worst queries;
- :mod:`.targets`: targets per query and overall;
- :mod:`.compare`: common queries of two runs and the paired statistics;
- :mod:`.curves`: mean curves and their bootstrap bands;
- :mod:`.latency`: the retriever's per-query latency (p50, p95, max);
- :mod:`.slices`: the report's numbers per query slice (means, intervals, targets, tests).

It sits above :mod:`ragreport.stats` and the evaluation core, below every view (the
import-linter contract in ``pyproject.toml`` says so).
"""

from __future__ import annotations

from .compare import (
    PairedComparison,
    baseline_tests,
    common_queries,
    outcomes,
    paired,
    paired_columns,
)
from .curves import RunIntervals, curve_families, mean_band, mean_curve, run_intervals
from .failures import (
    FAILURE_KINDS,
    NO_JUDGED_RELEVANT,
    NO_RELEVANT_RANK,
    WorstSelection,
    failure_counts,
    failure_kinds,
    first_relevant_rank,
    judged_at,
    unjudged_in_top,
    worst_order,
    worst_queries,
)
from .latency import LatencySummary, latency_summary
from .slices import SliceAnalysis, analyse_slices
from .targets import passes_array, run_checks, target_passes, target_values

__all__ = [
    "FAILURE_KINDS",
    "NO_JUDGED_RELEVANT",
    "NO_RELEVANT_RANK",
    "LatencySummary",
    "PairedComparison",
    "RunIntervals",
    "SliceAnalysis",
    "WorstSelection",
    "analyse_slices",
    "baseline_tests",
    "common_queries",
    "curve_families",
    "failure_counts",
    "failure_kinds",
    "first_relevant_rank",
    "judged_at",
    "latency_summary",
    "mean_band",
    "mean_curve",
    "outcomes",
    "paired",
    "paired_columns",
    "passes_array",
    "run_checks",
    "run_intervals",
    "target_passes",
    "target_values",
    "unjudged_in_top",
    "worst_order",
    "worst_queries",
]
