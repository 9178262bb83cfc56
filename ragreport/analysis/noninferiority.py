"""Non-inferiority with three outcomes: can a gate decide at all?

A drop check with margin ``D`` (``--max-drop D``) asks whether the run is at most ``D`` below
its baseline. The interval of the mean paired difference (run - baseline, over the queries
both evaluated) answers it in one of three ways:

- **pass**: the interval lies above ``-D`` (its lower end > -D): the run is not worse by more
  than ``D``, at the interval's level;
- **fail**: the interval lies below ``-D`` (its upper end < -D): the run is worse by more
  than ``D``;
- **inconclusive**: the interval holds ``-D``: these queries cannot tell. With few queries,
  most checks are; :func:`queries_to_decide` says about how many would decide one.

Both ends are compared as shown (rounded to the report's digits), as every target check
decides on the value the reader sees. What an inconclusive check does to the exit code is the
caller's stated policy (:data:`ON_INCONCLUSIVE`; by default it fails).

>>> [outcome(lo, hi, 0.02) for lo, hi in ((-0.01, 0.03), (-0.09, -0.03), (-0.05, 0.01))]
['pass', 'fail', 'inconclusive']
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ..errors import RagReportError
from ..present import DISPLAY_DIGITS, shown

__all__ = ["FAIL", "INCONCLUSIVE", "MIN_QUERIES", "ON_INCONCLUSIVE", "OUTCOMES", "PASS",
           "check_on_inconclusive", "gate_fails", "outcome", "queries_to_decide"]

PASS = "pass"
FAIL = "fail"
INCONCLUSIVE = "inconclusive"
#: The three outcomes of a check on an interval.
OUTCOMES = (PASS, FAIL, INCONCLUSIVE)
#: Fewest queries whose interval decides anything (fewer: inconclusive whatever the interval,
#: as a few identical deltas give an interval of one point); a slice's too
#: (:mod:`ragreport.analysis.slices`).
MIN_QUERIES = 10
#: What an inconclusive check does to the exit code: fail (``fail``, the default: a check
#: passes only when its interval shows it, as a target on the interval's lower bound does)
#: or nothing (``pass``: the gate fails only on evidence of a drop).
ON_INCONCLUSIVE = ("fail", "pass")


def check_on_inconclusive(policy: object) -> str:
    """``policy`` if it is one of :data:`ON_INCONCLUSIVE`, else a RagReportError."""
    if policy not in ON_INCONCLUSIVE:
        raise RagReportError(f"on_inconclusive must be one of {', '.join(ON_INCONCLUSIVE)}, "
                             f"got {policy!r}")
    return str(policy)


def _as_shown(x: float, digits: int) -> float:
    return float(shown(x, digits))


def outcome(lower: float, upper: float, margin: float, digits: int = DISPLAY_DIGITS, *,
            n: int | None = None) -> str:
    """The outcome of a non-inferiority check: ``pass`` when the interval [lower, upper] of
    the mean difference lies above ``-margin``, ``fail`` when it lies below, ``inconclusive``
    when it holds ``-margin`` (an end on it included), is not defined (NaN), or comes from
    fewer than :data:`MIN_QUERIES` queries (``n``, when given). Both ends are compared as
    shown (``digits`` decimals).

    >>> outcome(-0.0199, 0.01, 0.02), outcome(-0.02, 0.01, 0.02), outcome(-0.03, -0.02, 0.02)
    ('pass', 'inconclusive', 'inconclusive')
    >>> outcome(-0.03, -0.02001, 0.02), outcome(-0.03, -0.02006, 0.02)
    ('inconclusive', 'fail')
    >>> outcome(float("nan"), float("nan"), 0.02), outcome(-0.01, 0.03, 0.02, n=9)
    ('inconclusive', 'inconclusive')
    """
    if not (math.isfinite(lower) and math.isfinite(upper)) \
            or (n is not None and n < MIN_QUERIES):
        return INCONCLUSIVE
    if _as_shown(lower, digits) > -margin:
        return PASS
    if _as_shown(upper, digits) < -margin:
        return FAIL
    return INCONCLUSIVE


def gate_fails(result: str, on_inconclusive: str) -> bool:
    """Whether a check's outcome fails the gate under the stated policy.

    >>> [gate_fails(o, p) for p in ON_INCONCLUSIVE for o in OUTCOMES]
    [False, True, True, False, True, False]
    """
    check_on_inconclusive(on_inconclusive)
    return result == FAIL or (result == INCONCLUSIVE and on_inconclusive == "fail")


def queries_to_decide(deltas: npt.ArrayLike, margin: float, level: float) -> int | None:
    """About how many queries in all would decide a check, from the observed per-query
    differences: the normal interval's half-width ``z * sd / sqrt(n)`` falls below the
    distance from the mean difference to ``-margin`` once ``n >= (z * sd / gap) ** 2``
    (the mean and the spread as observed). None when no number of queries would (the mean
    on the margin) or the spread is unknown (fewer than 2 queries, or none: every query
    differs alike).

    >>> queries_to_decide([0.1, -0.1] * 10, 0.02, 0.95)  # sd 0.1026, gap 0.02: 1.96^2 * 26.3
    102
    >>> queries_to_decide([-0.02, -0.02], 0.02, 0.95) is None
    True
    """
    from scipy.stats import norm

    d = np.asarray(deltas, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2:
        return None
    sd = float(d.std(ddof=1))
    gap = abs(float(d.mean()) + margin)
    if not (sd > 0 and gap > 0 and math.isfinite(sd)):
        return None
    z = float(norm.ppf(1 - (1 - level) / 2))
    return max(math.ceil((z * sd / gap) ** 2), len(d) + 1)
