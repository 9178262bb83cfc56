"""Sparse forms: one cutoff (any K up to 2**53) from the (query, rank) pairs of a ranking."""

from __future__ import annotations

import numpy as np

from .base import BoolArray, FloatArray, IntArray, discount, row_sums, safe_div

__all__ = ["average_precision_at", "dcg_at", "f1_at", "hit_rate_at", "hits_at", "ndcg_at",
           "precision_at", "r_precision_sparse", "recall_at", "reciprocal_rank_at", "within"]


# ---- sparse forms: one cutoff, any K --------------------------------------------------------

def within(pos: IntArray, k: int | None) -> BoolArray | slice:
    return slice(None) if k is None else pos < k


def hits_at(n: int, qi: IntArray, pos: IntArray, k: int | None) -> FloatArray:
    """Relevant documents in the top ``k`` of each of ``n`` queries (``k=None``: all).

    ``qi``, ``pos``: query and 0-based rank of each relevant retrieved document. Empty input
    gives zeros.

    >>> hits_at(2, np.array([0, 0, 1]), np.array([1, 3, 0]), 2).tolist()
    [1.0, 1.0]
    """
    sel = within(pos, k)
    return np.bincount(qi[sel], minlength=n).astype(np.float64)


def precision_at(n: int, qi: IntArray, pos: IntArray, k: int) -> FloatArray:
    """P@K = hits in the top K / K, for any K >= 1 (K even past the end of the ranking).

    Bit-identical to column ``k - 1`` of :func:`precision_at_k`; queries without a relevant
    document retrieved score 0.

    >>> precision_at(1, np.array([0, 0]), np.array([1, 3]), 10**15).tolist()
    [2e-15]
    """
    return hits_at(n, qi, pos, k) / np.float64(k)


def recall_at(n: int, qi: IntArray, pos: IntArray, n_rel: IntArray, k: int | None) -> FloatArray:
    """R@K = hits in the top K / n_rel; 0 when ``n_rel == 0``.

    >>> recall_at(1, np.array([0, 0]), np.array([1, 3]), np.array([3]), 2).round(3).tolist()
    [0.333]
    """
    return safe_div(hits_at(n, qi, pos, k), n_rel)


def f1_at(n: int, qi: IntArray, pos: IntArray, n_rel: IntArray, k: int) -> FloatArray:
    """F1@K = 2·P@K·R@K / (P@K + R@K); 0 when both are 0 (as :func:`f1_at_k`).

    >>> f1_at(1, np.array([0, 0]), np.array([1, 3]), np.array([3]), 5).tolist()
    [0.5]
    """
    p = precision_at(n, qi, pos, k)
    r = recall_at(n, qi, pos, n_rel, k)
    return safe_div(2.0 * p * r, p + r)


def hit_rate_at(n: int, qi: IntArray, pos: IntArray, k: int | None) -> FloatArray:
    """HitRate@K = 1 when a relevant document is in the top K, else 0.

    >>> hit_rate_at(2, np.array([0]), np.array([4]), 3).tolist()
    [0.0, 0.0]
    """
    return (hits_at(n, qi, pos, k) > 0).astype(np.float64)


def reciprocal_rank_at(n: int, qi: IntArray, pos: IntArray, k: int | None) -> FloatArray:
    """RR@K = 1 / rank of the first relevant document when it is within the top K, else 0
    (``k=None``: the whole ranking, trec_eval ``recip_rank``).

    >>> reciprocal_rank_at(3, np.array([0, 0, 2]), np.array([2, 5, 9]), None).tolist()
    [0.3333333333333333, 0.0, 0.1]
    """
    out = np.zeros(n)
    q, first = np.unique(qi, return_index=True)
    rank = pos[first] + 1.0
    ok = rank <= k if k is not None else np.ones(len(rank), dtype=bool)
    out[q[ok]] = 1.0 / rank[ok]
    return out


def average_precision_at(n: int, qi: IntArray, pos: IntArray, n_rel: IntArray,
                         k: int | None) -> FloatArray:
    """AP@K = sum of P@rank over the relevant ranks <= K, / n_rel; 0 when ``n_rel == 0``
    (``k=None``: the whole ranking, trec_eval ``map``).

    >>> average_precision_at(1, np.array([0, 0]), np.array([0, 2]), np.array([2]), 3).round(4)
    array([0.8333])
    """
    sel = within(pos, k)
    qi, pos = qi[sel], pos[sel]
    first = np.searchsorted(qi, np.arange(n))
    hits = (np.arange(len(qi)) - first[qi] + 1).astype(np.float64)
    return safe_div(row_sums(n, qi, hits / (pos + 1.0)), n_rel)


def r_precision_sparse(n: int, qi: IntArray, pos: IntArray, n_rel: IntArray) -> FloatArray:
    """R-precision from the relevant ranks: relevant in the top R / R, R = ``n_rel``; 0 when
    R == 0.

    >>> r_precision_sparse(1, np.array([0, 0]), np.array([0, 2]), np.array([2])).tolist()
    [0.5]
    """
    top = (pos < n_rel[qi]).astype(np.float64)
    return safe_div(row_sums(n, qi, top), n_rel)


def dcg_at(n: int, qi: IntArray, pos: IntArray, g: FloatArray, k: int | None) -> FloatArray:
    """DCG@K = sum over ranks i <= K of gain_i / log2(i + 1), from the non-zero gains ``g``
    at (``qi``, ``pos``); ``k=None``: the whole ranking. Empty rankings give 0.

    >>> dcg_at(1, np.array([0, 0]), np.array([1, 3]), np.array([1.0, 1.0]), 5).round(3)
    array([1.062])
    """
    sel = within(pos, k)
    qi, pos, g = qi[sel], pos[sel], g[sel]
    disc = discount(int(pos.max()) + 1 if len(pos) else 1)
    return row_sums(n, qi, g * disc[pos])


def ndcg_at(n: int, qi: IntArray, pos: IntArray, g: FloatArray, iqi: IntArray,
            ipos: IntArray, ig: FloatArray, k: int | None) -> FloatArray:
    """nDCG@K = DCG@K / IDCG@K; 0 where IDCG@K == 0 (``k=None``: trec_eval ``ndcg``).

    ``iqi``, ``ipos``, ``ig``: each query's positive judged gains best first (ideal ranks),
    so IDCG@K sums the best min(K, judged relevant) gains, also past the end of the ranking.

    >>> ndcg_at(1, np.array([0, 0]), np.array([1, 3]), np.array([1.0, 1.0]),
    ...         np.array([0, 0]), np.array([0, 1]), np.array([1.0, 1.0]), 5).round(3)
    array([0.651])
    """
    return safe_div(dcg_at(n, qi, pos, g, k), dcg_at(n, iqi, ipos, ig, k))
