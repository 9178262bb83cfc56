"""One set of statistics settings for every interval and paired test, wherever it is shown.

The report (:func:`ragreport.report.build_report`), the CLI (``--ci-level``, ``--resamples``,
``--seed``, ``--alpha``), the notebook helpers and the explorer read the same
:class:`StatsSettings`, so one comparison gives one interval and one p-value in all of them.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from .errors import RagReportError

__all__ = ["MAX_RESAMPLES", "StatsSettings", "is_int", "is_number"]

#: The most bootstrap resamples (and randomization-test samples) a report may ask for: the
#: intervals are kept per resample and measure, so memory grows with this number.
MAX_RESAMPLES = 1_000_000


def is_int(x: object) -> bool:
    """An integer (numpy's too), not a bool."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def is_number(x: object) -> bool:
    """A finite real number (numpy's too), not a bool."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(float(x))


@dataclass(frozen=True)
class StatsSettings:
    """Confidence level, resamples, seed and significance level of intervals and tests.

    Attributes
    ----------
    level : float
        Confidence level of every interval (in (0, 1)).
    resamples : int
        Bootstrap resamples of the summary intervals and of a paired comparison's delta, and
        sign patterns of the paired randomization test (1 to :data:`MAX_RESAMPLES`), whatever
        the number of queries.
    curve_resamples : int
        Bootstrap resamples of the metric-vs-K bands (the first of the same resampled sets).
    seed : int
        Seed of the resampling (0 to 2**63 - 1): same seed, same numbers.
    alpha : float
        Significance level of the (Holm-corrected) paired tests (in (0, 1)).

    A value that would switch a check off silently (``alpha=-1``) is an error naming what
    was received.

    >>> StatsSettings()
    StatsSettings(level=0.95, resamples=10000, curve_resamples=1000, seed=0, alpha=0.05)
    >>> StatsSettings(alpha=1.5)
    Traceback (most recent call last):
    ...
    ragreport.errors.RagReportError: alpha must be a number > 0 and < 1, got 1.5
    """

    level: float = 0.95
    resamples: int = 10_000
    curve_resamples: int = 1_000
    seed: int = 0
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if not is_number(self.level) or not 0 < float(self.level) < 1:
            raise RagReportError(f"ci_level must be a number > 0 and < 1, got {self.level!r}")
        if not is_number(self.alpha) or not 0 < float(self.alpha) < 1:
            raise RagReportError(f"alpha must be a number > 0 and < 1, got {self.alpha!r}")
        for name, n in (("resamples", self.resamples),
                        ("curve_resamples", self.curve_resamples)):
            if not is_int(n) or not 1 <= int(n) <= MAX_RESAMPLES:
                raise RagReportError(f"{name} must be an integer from 1 to {MAX_RESAMPLES}, "
                                     f"got {n!r}")
        if not is_int(self.seed) or not 0 <= int(self.seed) < 2**63:
            raise RagReportError(f"seed must be an integer from 0 to 2**63 - 1, got "
                                 f"{self.seed!r}")
