"""Power and saturation: can these queries show a change at all?

- :func:`minimum_detectable_effect`: the smallest true mean difference a paired comparison of
  ``n`` queries detects with probability ``power`` at the interval's level (normal
  approximation): ``(z_level + z_power) * sd / sqrt(n)``, ``sd`` the standard deviation of the
  per-query differences (or, before a second run exists, ``sqrt(2)`` times the baseline's own
  per-query standard deviation: two uncorrelated runs; paired runs usually correlate, so the
  true one is smaller).
- :func:`queries_needed`: how many queries detect a given effect with that power.
- :func:`saturation`: the share of queries at a measure's bound (1 or 0): a measure at 1 on
  nearly every query cannot show a gain on them, nor any change that keeps them at 1
  (whatever the retriever does below its cutoff).

>>> round(minimum_detectable_effect(0.2, 100), 4)   # (1.96 + 0.8416) * 0.2 / 10
0.056
>>> queries_needed(0.056, 0.2)
101
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import RagReportError
from ..present import pct

__all__ = ["SATURATED_SHARE", "Saturation", "minimum_detectable_effect", "queries_needed",
           "saturation", "spread"]

#: The share of queries at a bound from which a measure is flagged as saturated.
SATURATED_SHARE = 0.9


def _z(level: float, power: float) -> float:
    from scipy.stats import norm

    if not 0 < level < 1:
        raise RagReportError(f"level must be a number > 0 and < 1, got {level!r}")
    if not 0 < power < 1:
        raise RagReportError(f"power must be a number > 0 and < 1, got {power!r}")
    return float(norm.ppf(1 - (1 - level) / 2) + norm.ppf(power))


def spread(values: npt.ArrayLike, *, paired: bool = True) -> float:
    """The standard deviation of per-query differences (``paired``: ``values`` are the
    differences) or of one run's per-query values (``paired=False``: ``sqrt(2)`` times it,
    the spread of the difference of two uncorrelated runs); NaN with fewer than 2 queries.

    >>> spread([0.1, -0.1, 0.3]), round(spread([0.0, 1.0], paired=False), 4)
    (0.2, 1.0)
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or len(v) < 2:
        return float("nan")
    sd = float(v.std(ddof=1))
    return sd if paired else math.sqrt(2.0) * sd


def minimum_detectable_effect(sd: float, n: int, *, level: float = 0.95,
                              power: float = 0.8) -> float:
    """The smallest true mean difference ``n`` paired queries detect with probability
    ``power`` (its interval at ``level`` excludes 0): ``(z_level + z_power) * sd / sqrt(n)``;
    NaN when ``sd`` is not known, 0 when every query differs alike."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise RagReportError(f"the number of queries must be an integer >= 1, got {n!r}")
    z = _z(level, power)
    return float(z * sd / math.sqrt(n)) if math.isfinite(sd) else float("nan")


def queries_needed(effect: float, sd: float, *, level: float = 0.95,
                   power: float = 0.8) -> int | None:
    """How many paired queries detect a true mean difference of ``effect`` with probability
    ``power``: ``ceil(((z_level + z_power) * sd / effect) ** 2)``; None when no number does
    (an effect of 0) or the spread is unknown; 1 when every query differs alike."""
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) \
            or not math.isfinite(effect):
        raise RagReportError(f"the effect must be a finite number, got {effect!r}")
    if effect == 0 or not math.isfinite(sd):
        return None
    if sd == 0:
        return 1
    return max(1, math.ceil((_z(level, power) * sd / abs(effect)) ** 2))


@dataclass(frozen=True)
class Saturation:
    """How many of ``n`` queries sit at a measure's bounds (``at_top``: 1, ``at_bottom``:
    0); ``saturated`` when one of the two shares reaches :data:`SATURATED_SHARE`."""

    n: int
    at_top: int
    at_bottom: int

    @property
    def top_share(self) -> float:
        return self.at_top / self.n if self.n else float("nan")

    @property
    def bottom_share(self) -> float:
        return self.at_bottom / self.n if self.n else float("nan")

    @property
    def saturated(self) -> bool:
        return self.n > 0 and max(self.at_top, self.at_bottom) >= SATURATED_SHARE * self.n

    @property
    def text(self) -> str:
        """What it means, in words ("" when not saturated)."""
        if not self.saturated:
            return ""
        if self.at_top >= self.at_bottom:
            return (f"at 1 on {pct(self.top_share)} of the queries: it cannot show a gain on "
                    "them, nor a change that keeps them at 1")
        return (f"at 0 on {pct(self.bottom_share)} of the queries: it cannot show a drop on "
                "them, nor a change that keeps them at 0")


def saturation(values: npt.ArrayLike) -> Saturation:
    """The queries of a bounded measure at 1 and at 0.

    >>> s = saturation([1.0] * 97 + [0.5, 0.0, 1.0])
    >>> s.saturated, s.text.split(":")[0]
    (True, 'at 1 on 98% of the queries')
    """
    v = np.asarray(values, dtype=np.float64)
    return Saturation(len(v), int(np.count_nonzero(v >= 1.0)),
                      int(np.count_nonzero(v <= 0.0)))
