"""Gains: linear (the grade) or exponential (2^grade - 1), shifted so nothing overflows."""

from __future__ import annotations

import numpy as np

from .base import FloatArray, IntArray

__all__ = ["EXP_HEADROOM", "gain_of", "gain_shift"]


# ---- gains ------------------------------------------------------------------------------------

#: Largest grade whose exponential gain is used unscaled: 2^900 summed over any number of
#: documents a ranking can hold stays far below the float64 maximum (about 2^1024).
EXP_HEADROOM = 900


def gain_shift(grades: FloatArray, offsets: IntArray, gain: str) -> FloatArray:
    """Per-query exponent ``s``: exponential gains of the query are scaled by 2^-s.

    ``grades`` are the judged grades grouped by query (``offsets``, length queries + 1), best
    first. ``s = ceil(largest grade) - EXP_HEADROOM`` when that is positive, else 0; always 0
    for linear gains (a grade is below 2^53, so linear sums never overflow). Queries without
    judgments get 0.

    >>> gain_shift(np.array([2000.0, 1.0, 3.0]), np.array([0, 2, 3]), "exp").tolist()
    [1100.0, 0.0]
    """
    n = len(offsets) - 1
    out = np.zeros(max(n, 0))
    if gain != "exp" or n <= 0:
        return out
    sizes = np.diff(offsets)
    has = np.flatnonzero(sizes > 0)
    top = np.maximum.reduceat(grades, offsets[:-1][has]) if len(has) else np.zeros(0)
    with np.errstate(invalid="ignore"):
        out[has] = np.maximum(np.ceil(top) - EXP_HEADROOM, 0.0)
    return out


def gain_of(grades: FloatArray, shift: FloatArray, gain: str) -> FloatArray:
    """Gains of positive ``grades``: the grade (``"linear"``) or 2^grade - 1 (``"exp"``),
    times 2^-shift (``shift`` per grade, from :func:`gain_shift`; 0 leaves the gain exact).

    Scaling by a power of two is exact, so the nDCG of a query (a ratio of sums of its
    gains) does not depend on it; it only keeps 2^grade from overflowing (a grade of 2000
    gives inf, and inf / inf is NaN).

    >>> gain_of(np.array([1.0, 3.0]), np.array([0.0, 0.0]), "exp").tolist()
    [1.0, 7.0]
    >>> gain_of(np.array([2000.0]), np.array([1100.0]), "exp").tolist() == [2.0 ** 900]
    True
    """
    g = np.asarray(grades, dtype=np.float64)
    if gain != "exp":
        return g.copy()
    out = np.empty_like(g)
    plain = shift == 0
    out[plain] = np.exp2(g[plain]) - 1.0
    s = shift[~plain]
    out[~plain] = np.exp2(g[~plain] - s) - np.exp2(-s)
    return out
