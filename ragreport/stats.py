"""Confidence intervals and paired significance tests over queries (numpy only).

- :func:`bootstrap_ci`: percentile bootstrap of the mean over queries, for many columns at
  once (every measure, or every K of a curve), vectorised as weight-matrix products.
- :func:`paired_randomization_test`: two-sided sign-flip test on per-query deltas (exact
  enumeration when it is small enough, else Monte Carlo with a fixed seed), as
  ``scipy.stats.permutation_test(..., permutation_type="samples")`` computes it.
- :func:`paired_t_test`: Student's paired t-test (``scipy.stats.ttest_rel``), with the t
  distribution computed here so scipy is not a runtime dependency.
- :func:`holm`: Holm's step-down correction of several p-values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .errors import RagReportError

__all__ = [
    "BootstrapCI",
    "PairedTest",
    "bootstrap_ci",
    "holm",
    "paired_randomization_pvalues",
    "paired_randomization_test",
    "paired_t_test",
    "student_t_sf",
]

FloatArray = npt.NDArray[np.float64]
_CHUNK_CELLS = 4_000_000  # resamples x queries per weight block (~32 MB of float64)


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap interval of the mean, one entry per column."""

    mean: FloatArray
    lower: FloatArray
    upper: FloatArray
    level: float
    resamples: int
    seed: int


@dataclass(frozen=True)
class PairedTest:
    """Result of a paired test of B against A on the same queries."""

    test: str
    mean_delta: float
    statistic: float
    p_value: float
    n: int


def _check(level: float, resamples: int) -> None:
    if not 0.0 < level < 1.0:
        raise RagReportError(f"confidence level must be between 0 and 1, got {level!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise RagReportError(f"resamples must be an integer >= 1, got {resamples!r}")


def bootstrap_ci(values: npt.ArrayLike, level: float = 0.95, resamples: int = 10_000,
                 seed: int = 0) -> BootstrapCI:
    """Percentile bootstrap confidence interval of the mean over queries.

    Parameters
    ----------
    values : array, shape (queries,) or (queries, columns)
        Per-query values; each column (a measure, or one K of a curve) gets its interval.
        All columns use the same resampled query sets.
    level : float
        Confidence level (0.95 gives the 2.5th and 97.5th percentiles).
    resamples : int
        Number of bootstrap resamples of the queries (with replacement).
    seed : int
        Seed of the generator; the same seed gives the same interval.

    Returns
    -------
    BootstrapCI
        ``mean``, ``lower``, ``upper`` with shape (columns,) (or () for 1-d input).
        With no query, all are NaN; with one query, the interval is that value.

    Examples
    --------
    >>> ci = bootstrap_ci([0.0, 1.0, 1.0, 1.0], resamples=2000)
    >>> float(ci.mean), float(ci.lower) <= 0.75 <= float(ci.upper)
    (0.75, True)
    """
    _check(level, resamples)
    v = np.asarray(values, dtype=np.float64)
    one_d = v.ndim == 1
    if one_d:
        v = v[:, None]
    if v.ndim != 2:
        raise RagReportError(f"values must be 1-d or 2-d, got shape {v.shape}")
    n, cols = v.shape
    if n == 0:
        nan = np.full(cols, np.nan)
        return BootstrapCI(nan, nan, nan, level, resamples, seed)
    rng = np.random.default_rng(seed)
    means = np.empty((resamples, cols))
    chunk = max(1, min(resamples, _CHUNK_CELLS // n))
    for start in range(0, resamples, chunk):
        b = min(chunk, resamples - start)
        idx = rng.integers(0, n, size=(b, n))
        weights = np.empty((b, n))
        for row in range(b):  # one small bincount per resample stays in cache
            weights[row] = np.bincount(idx[row], minlength=n)
        means[start:start + b] = weights @ v / n
    alpha = (1.0 - level) / 2.0
    lower = np.quantile(means, alpha, axis=0)
    upper = np.quantile(means, 1.0 - alpha, axis=0)
    mean = v.mean(axis=0)
    if one_d:
        return BootstrapCI(mean[0], lower[0], upper[0], level, resamples, seed)
    return BootstrapCI(mean, lower, upper, level, resamples, seed)


def paired_randomization_test(a: npt.ArrayLike, b: npt.ArrayLike, resamples: int = 10_000,
                              seed: int = 0) -> PairedTest:
    """Two-sided paired randomization (sign-flip) test of mean(b - a) = 0.

    Under the null hypothesis each query's two values are exchangeable, so the sign of each
    delta is flipped at random. When ``2**n <= resamples`` every sign pattern is enumerated
    (exact p-value, ``count / 2**n``); otherwise ``resamples`` random patterns give
    ``(count + 1) / (resamples + 1)``, as scipy does. A pattern counts when its
    ``|mean|`` is at least the observed one (up to a relative 1e-14 for rounding).

    >>> t = paired_randomization_test([0.1, 0.2, 0.3], [0.2, 0.4, 0.6])
    >>> t.p_value   # 2 of the 8 sign patterns are as extreme (all +, all -)
    0.25
    """
    a1 = np.asarray(a, dtype=np.float64)
    b1 = np.asarray(b, dtype=np.float64)
    if a1.ndim != 1 or a1.shape != b1.shape:
        raise RagReportError("paired values must be 1-d arrays of the same length")
    p = paired_randomization_pvalues(a1[:, None], b1[:, None], resamples, seed)
    observed = float((b1 - a1).mean())
    return PairedTest("paired randomization", observed, observed, float(p[0]), len(a1))


def paired_randomization_pvalues(a: npt.ArrayLike, b: npt.ArrayLike, resamples: int = 10_000,
                                 seed: int = 0) -> FloatArray:
    """Randomization-test p-values for every column of (queries, columns) arrays at once.

    The same sign patterns serve every column (each column's test is the one
    :func:`paired_randomization_test` describes).
    """
    _check(0.5, resamples)
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if d.ndim != 2:
        raise RagReportError("paired values must be (queries, columns) arrays of one shape")
    n, cols = d.shape
    if n == 0:
        raise RagReportError("no query in common to compare")
    thresh = np.abs(d.mean(axis=0)) * (1 - 1e-14)
    if n < 63 and 2 ** n <= resamples:
        patterns = (((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2 - 1).astype(float)
        stats = np.abs(patterns @ d) / n
        exact: FloatArray = np.minimum(1.0, (stats >= thresh).sum(axis=0) / 2 ** n)
        return exact
    rng = np.random.default_rng(seed)
    count = np.zeros(cols)
    chunk = max(1, min(resamples, _CHUNK_CELLS // n))
    for start in range(0, resamples, chunk):
        m = min(chunk, resamples - start)
        signs = (rng.integers(0, 2, size=(m, n), dtype=np.int8) * 2 - 1).astype(np.float64)
        count += (np.abs(signs @ d) / n >= thresh).sum(axis=0)
    return np.minimum(1.0, (count + 1) / (resamples + 1))


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (Lentz's method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
          + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(ln)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom.

    >>> round(student_t_sf(2.0, 10), 6)
    0.036694
    """
    if math.isnan(t):
        return math.nan
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return tail if t > 0 else 1.0 - tail


def paired_t_test(a: npt.ArrayLike, b: npt.ArrayLike) -> PairedTest:
    """Two-sided paired t-test of mean(b - a) = 0 (``scipy.stats.ttest_rel(b, a)``).

    When every delta is equal, the p-value is 1 if they are all 0 and 0 otherwise (no
    variance); with fewer than two queries it is NaN.

    >>> t = paired_t_test([0.1, 0.2, 0.3, 0.4], [0.2, 0.2, 0.5, 0.5])
    >>> round(t.statistic, 4), round(t.p_value, 4)
    (2.4495, 0.0917)
    """
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = len(d)
    if n == 0:
        raise RagReportError("no query in common to compare")
    mean = float(d.mean())
    if n < 2:
        return PairedTest("paired t-test", mean, math.nan, math.nan, n)
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        p = 1.0 if mean == 0.0 else 0.0
        t = 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
        return PairedTest("paired t-test", mean, t, p, n)
    t = mean / (sd / math.sqrt(n))
    p = min(1.0, 2.0 * student_t_sf(abs(t), n - 1))
    return PairedTest("paired t-test", mean, t, p, n)


def holm(p_values: npt.ArrayLike) -> FloatArray:
    """Holm-Bonferroni adjusted p-values (same order as given).

    >>> holm([0.01, 0.04, 0.03]).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adj
    return out
