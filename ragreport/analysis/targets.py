"""Targets checked on results: per query (which queries fall short) and overall (the
decision the report and ``ragreport check`` make).

Every decision compares the value *as shown* (rounded to
:data:`~ragreport.targets.DISPLAY_DIGITS` decimals), the rule of
:func:`ragreport.targets.passes`, here vectorised over queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure
from ..targets import DISPLAY_DIGITS, OPERATORS, Target, TargetCheck, check_targets, passes

__all__ = [
    "passes_array",
    "run_checks",
    "target_passes",
    "target_values",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def passes_array(values: npt.ArrayLike, op: str, threshold: float) -> BoolArray:
    """:func:`ragreport.targets.passes` for a whole array (the same decision, vectorised).

    Values are rounded with numpy; the rare value within 1e-6 of a rounding tie is decided by
    :func:`~ragreport.targets.passes` itself, so the result always matches the shown value.
    NaN never passes.

    Parameters
    ----------
    values : array_like
        The values checked.
    op : str
        Comparison operator (``>=``, ``>``, ``<=``, ``<``).
    threshold : float
        The target's threshold.

    Returns
    -------
    numpy.ndarray
        Boolean, one per value.

    >>> passes_array([0.84996, 0.85004, 0.9, float("nan")], ">", 0.85).tolist()
    [False, False, True, False]
    >>> passes_array([0.84996], ">=", 0.85).tolist()   # shown as 0.8500
    [True]
    """
    if op not in OPERATORS:
        raise RagReportError(f"operator must be one of {', '.join(OPERATORS)}, got {op!r}")
    v = np.asarray(values, dtype=np.float64)
    scaled = v * 10.0 ** DISPLAY_DIGITS
    compare: Any = OPERATORS[op]
    out: BoolArray = np.asarray(compare(np.round(v, DISPLAY_DIGITS), threshold), dtype=np.bool_)
    with np.errstate(invalid="ignore"):
        tie = np.flatnonzero(np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6)
    for i in tie.tolist():
        out[i] = passes(float(v[i]), op, threshold)
    return out


def target_values(result: EvaluationResult, target: Target) -> FloatArray | None:
    """Every query's value of the target's measure (at the target's own cutoff); None when
    the result cannot give it (a measure it was not evaluated with and cannot derive).

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.
    target : Target
        The target.

    Returns
    -------
    numpy.ndarray or None
        Per-query values, or None when the measure is not available.

    >>> from ragreport import evaluate
    >>> from ragreport.targets import parse_targets
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}}, {"a": ["x"], "b": ["y", "x"]}, ["P@1"])
    >>> target_values(r, parse_targets({"P@2": 0.5})[0]).tolist()
    [0.5, 0.5]
    """
    try:
        return np.asarray(result.values(target.measure), dtype=np.float64)
    except RagReportError:
        return None


def target_passes(result: EvaluationResult, target: Target) -> BoolArray:
    """Per query: does its value of the target's measure meet the target (on the shown
    value, as :func:`ragreport.targets.passes` decides)? All False when the result lacks
    the measure.

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.
    target : Target
        The target.

    Returns
    -------
    numpy.ndarray
        Boolean, per query.

    >>> from ragreport import evaluate
    >>> from ragreport.targets import parse_targets
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}}, {"a": ["x"], "b": ["y", "x"]}, ["P@1"])
    >>> target_passes(r, parse_targets({"P@1": "> 0.5"})[0]).tolist()
    [True, False]
    """
    v = target_values(result, target)
    if v is None:
        return np.zeros(result.n_queries, dtype=np.bool_)
    return passes_array(v, target.op, target.threshold)


def run_checks(results: Sequence[EvaluationResult], targets: Sequence[Target],
               lower: Mapping[str, Mapping[Measure, float]] | None = None,
               ppi_lower: Mapping[str, Mapping[Measure, float]] | None = None,
               upper: Mapping[str, Mapping[Measure, float]] | None = None,
               on_inconclusive: str = "fail") -> list[TargetCheck]:
    """The overall check: every target against every run's mean (or against the lower bound
    of its interval, ``lower[run][measure]``, for a target ``on = "ci_lower"``: with the
    upper bounds ``upper``, pass, fail or inconclusive, see
    :func:`ragreport.targets.check_targets`), in target order, then run order.

    Parameters
    ----------
    results : sequence of EvaluationResult
        The evaluated runs.
    targets : sequence of Target
        The targets.
    lower : mapping or None
        ``lower[run][measure]``: lower bound of the mean's interval, for the targets
        ``on = "ci_lower"``.
    ppi_lower : mapping or None
        ``ppi_lower[run][measure]``: lower bound of the prediction-powered interval, for the
        targets ``on = "ppi_lower"`` (:mod:`ragreport.analysis.ppi`).

    Returns
    -------
    list of TargetCheck
        Target-major, then run order.

    >>> from ragreport import evaluate
    >>> from ragreport.targets import parse_targets
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}}, {"a": ["x"], "b": ["y", "x"]}, ["P@1"])
    >>> [(c.shown, c.passed) for c in run_checks([r], parse_targets({"P@1": 0.5}))]
    [('0.5000', True)]
    """
    means = {r.run_name: {t.measure: r.mean(t.measure) for t in targets} for r in results}
    return check_targets(list(targets), means, lower, ppi_lower, upper, on_inconclusive)
