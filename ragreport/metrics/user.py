"""User-model measures (ERR, RBP) and BEIR's capped recall."""

from __future__ import annotations

import numpy as np

from .base import BoolArray, FloatArray, IntArray, fit, hits, ranks, row_sums, safe_div
from .sparse import hits_at, within

__all__ = ["ERR_MAX_GRADE", "capped_recall_at", "capped_recall_at_k", "err_at", "err_at_k",
           "err_stop", "err_terms", "rbp_at", "rbp_at_k"]


#: gdeval's ``$MAX_JUDGMENT``: ERR's stopping probability is (2^grade - 1) / 2^4, and gdeval
#: refuses a qrels line with a larger grade.
ERR_MAX_GRADE = 4


def err_stop(grades: FloatArray) -> FloatArray:
    """ERR's stopping probability of each grade, as gdeval computes it: (2^g - 1) / 2^4 for
    g > 0, else 0 (zero and negative grades, and unjudged documents given as 0 or NaN).

    >>> err_stop(np.array([0.0, 1.0, 4.0, -1.0, np.nan])).tolist()
    [0.0, 0.0625, 0.9375, 0.0, 0.0]
    """
    g = np.asarray(grades, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        pos = g > 0
    out = np.zeros_like(g)
    out[pos] = (np.exp2(g[pos]) - 1.0) / float(2**ERR_MAX_GRADE)
    return out


def err_at_k(grades: FloatArray, k_max: int) -> FloatArray:
    """ERR@K (Chapelle, Metzler, Zhang and Grinspan, CIKM 2009), as gdeval computes it
    (ir_measures' ``ERR@K``):

    ERR@K = sum over ranks i <= K of R_i / i · prod over j < i of (1 - R_j),
    R = (2^grade - 1) / 2^4 (:func:`err_stop`; gdeval's maximum grade is 4).

    ``grades`` is (queries, depth), 0 for unjudged documents and padding. The products and
    sums are taken rank by rank, in gdeval's order. An empty ranking scores 0; the ideal
    ranking plays no part (ERR is not normalised).

    Examples
    --------
    Grades by rank: 4 0 2: R = 15/16, 0, 3/16; ERR@1 = 0.9375, ERR@3 = 0.9375 + 3/16 ·
    (1/16) / 3 = 0.94140625

    >>> err_at_k(np.array([[4.0, 0.0, 2.0]]), 3).tolist()
    [[0.9375, 0.9375, 0.94140625]]
    """
    r = err_stop(np.asarray(fit(grades, k_max), dtype=np.float64))
    decay = np.ones_like(r)
    np.cumprod(1.0 - r[:, :-1], axis=1, out=decay[:, 1:])
    return np.cumsum(r * decay / ranks(k_max), axis=1)


def err_terms(n: int, qi: IntArray, pos: IntArray, grades: FloatArray) -> FloatArray:
    """Each positive-grade document's term of ERR, R_i / i · prod over j < i of (1 - R_j),
    from the (query, 0-based rank, grade) triples of the positive grades (by query, then
    rank). Documents of grade <= 0 have R = 0: they add nothing and multiply by 1, so they
    are not needed. The products run in ranking order, as gdeval's loop (and
    :func:`err_at_k`) multiplies.

    >>> err_terms(1, np.array([0, 0]), np.array([0, 2]), np.array([4.0, 2.0])).tolist()
    [0.9375, 0.00390625]
    """
    r = err_stop(grades)
    first = np.searchsorted(qi, np.arange(n))
    lengths = np.bincount(qi, minlength=n)
    decay = np.ones(len(qi))
    # a segmented running product, exact and in order: queries with the same number of
    # positive grades are stacked into one matrix and multiplied along its rows (there are
    # at most about sqrt(2 · rows) distinct lengths)
    for length in np.unique(lengths[lengths > 1]).tolist():
        qs = np.flatnonzero(lengths == length)
        cells = first[qs][:, None] + np.arange(length - 1)
        decay[cells + 1] = np.cumprod(1.0 - r[cells], axis=1)
    return r * decay / (pos + 1.0)


def err_at(n: int, qi: IntArray, pos: IntArray, terms: FloatArray, k: int | None) -> FloatArray:
    """ERR@K from the terms of :func:`err_terms` (``k=None``: the whole ranking); 0 for a
    query without a positive grade retrieved. Bit-identical to column ``k - 1`` of
    :func:`err_at_k`.

    >>> err_at(1, np.array([0, 0]), np.array([0, 2]), np.array([0.9375, 0.00390625]), 2).tolist()
    [0.9375]
    """
    sel = within(pos, k)
    return row_sums(n, qi[sel], terms[sel])


def rbp_at_k(rel: BoolArray | FloatArray, p: float, k_max: int) -> FloatArray:
    """RBP@K (rank-biased precision, Moffat and Zobel, TOIS 2008), binary or graded:

    RBP@K = (1 - p) · sum over ranks i <= K of g_i · p^(i - 1).

    ``rel`` bool (binary, ir_measures' ``RBP(rel=r)``): g_i = 1 at a relevant rank, else 0.
    ir_measures computes it with cwl_eval, which spreads the weights over its first 1000
    ranks (each weight times 1 / (1 - p^1000), a difference below 1e-15 for p = 0.8) and
    reads no document past rank 1000.

    ``rel`` float (graded, ir_measures' ``RBP`` without ``rel``): the gains by rank, g_i = the
    grade when it is positive, else 0 (unjudged: 0). ir_measures computes it with trectools'
    ``TrecEval.get_rbp(p, depth, binary_topical_relevance=False)``, which multiplies each
    rank's weight (1 - p) p^(i - 1) by the judged grade of every document with grade > 0
    (https://github.com/joaopalotti/trectools/blob/master/trectools/trec_eval.py). With
    grades above 1 the value can exceed 1 (at most the largest grade); with grades 0/1 it is
    the binary RBP.

    The residual (what unjudged documents could add) is not part of the value. ``p`` in
    (0, 1).

    Examples
    --------
    Relevance by rank: 1 0 1, p = 0.5: 0.5 · (1 + 0.25) = 0.625

    >>> rbp_at_k(np.array([[True, False, True]]), 0.5, 3).tolist()
    [[0.5, 0.5, 0.625]]

    Grades by rank: 2 0 1, p = 0.5: 0.5 · (2 + 0.25 · 1) = 1.125

    >>> rbp_at_k(np.array([[2.0, 0.0, 1.0]]), 0.5, 3).tolist()
    [[1.0, 1.0, 1.125]]
    """
    w = np.power(p, np.arange(k_max, dtype=np.float64))
    g = fit(rel, k_max)
    terms = np.where(g, w, 0.0) if g.dtype == np.bool_ else g * w
    return (1.0 - p) * np.cumsum(terms, axis=1)


def rbp_at(n: int, qi: IntArray, pos: IntArray, p: float, k: int | None,
           gains: FloatArray | None = None) -> FloatArray:
    """RBP@K from the relevant ranks (``k=None``: the whole ranking); bit-identical to
    column ``k - 1`` of :func:`rbp_at_k`. 0 for a query without a relevant document retrieved.

    ``gains`` (graded RBP): the gain of each of those ranks (default: 1 each, binary).

    >>> rbp_at(2, np.array([0, 0]), np.array([0, 2]), 0.5, None).tolist()
    [0.625, 0.0]
    >>> rbp_at(2, np.array([0, 0]), np.array([0, 2]), 0.5, None, np.array([2.0, 1.0])).tolist()
    [1.125, 0.0]
    """
    sel = within(pos, k)
    w = np.power(p, pos[sel].astype(np.float64))
    if gains is not None:
        w = gains[sel] * w
    return (1.0 - p) * row_sums(n, qi[sel], w)


def capped_recall_at_k(rel: BoolArray, n_rel: IntArray, k_max: int) -> FloatArray:
    """R_cap@K (BEIR and MTEB's capped recall) = relevant in the top K / min(K, R), R =
    relevant judged; 0 when R = 0 (BEIR divides by zero there).

    Equals 1 for a perfect ranking at every K, unlike recall, whose best value at K < R is
    K / R.

    >>> capped_recall_at_k(np.array([[True, False, True]]), np.array([3]), 4).round(4).tolist()
    [[1.0, 0.5, 0.6667, 0.6667]]
    """
    return safe_div(hits(rel, k_max), np.minimum(ranks(k_max), n_rel[:, None]))


def capped_recall_at(n: int, qi: IntArray, pos: IntArray, n_rel: IntArray,
                     k: int) -> FloatArray:
    """R_cap@K from the relevant ranks, any K >= 1; bit-identical to column ``k - 1`` of
    :func:`capped_recall_at_k`.

    >>> capped_recall_at(1, np.array([0, 0]), np.array([0, 2]), np.array([3]), 2).tolist()
    [0.5]
    """
    return safe_div(hits_at(n, qi, pos, k), np.minimum(n_rel, k))
