"""The array types every metric reads and the helpers they share (fit to K, hits, safe division)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


__all__ = ["BoolArray", "FloatArray", "IntArray", "discount", "fit", "hits", "ranks", "row_sums",
           "safe_div"]


def fit(a: npt.NDArray[np.generic], k_max: int) -> npt.NDArray[np.generic]:
    """Truncate or zero-pad the columns of ``a`` to exactly ``k_max``."""
    n, depth = a.shape
    if depth >= k_max:
        return a[:, :k_max]
    out = np.zeros((n, k_max), dtype=a.dtype)
    out[:, :depth] = a
    return out


def hits(rel: BoolArray, k_max: int) -> FloatArray:
    return np.cumsum(fit(rel, k_max), axis=1, dtype=np.float64)


def ranks(k_max: int) -> FloatArray:
    return np.arange(1, k_max + 1, dtype=np.float64)


def safe_div(num: FloatArray, den: npt.NDArray[np.generic]) -> FloatArray:
    """num / den, 0 where den == 0 (``den`` broadcasts against ``num``)."""
    den_f = np.asarray(den, dtype=np.float64)
    ok = den_f != 0
    return np.divide(num, np.where(ok, den_f, 1.0), out=np.zeros_like(num),
                     where=np.broadcast_to(ok, num.shape))


def discount(k: int) -> FloatArray:
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def row_sums(n: int, rows: IntArray, values: FloatArray) -> FloatArray:
    """Per-row sums of sparse values, added in the order given (as a cumulative sum would)."""
    return np.bincount(rows, weights=values, minlength=n).astype(np.float64)
