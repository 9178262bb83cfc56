"""Dense forms: every query at every cutoff K = 1..k_max at once, shape (queries, k_max)."""

from __future__ import annotations

import numpy as np

from .base import BoolArray, FloatArray, IntArray, discount, fit, hits, ranks, safe_div
from .sparse import average_precision_at, ndcg_at, r_precision_sparse

__all__ = ["average_precision", "average_precision_at_k", "dcg_at_k", "f1_at_k",
           "hit_rate_at_k", "hits_at_k", "ndcg", "ndcg_at_k", "precision_at_k", "r_precision",
           "recall_at_k", "reciprocal_rank", "reciprocal_rank_at_k"]


def precision_at_k(rel: BoolArray, k_max: int) -> FloatArray:
    """Precision@K = (relevant documents in the top K) / K.

    The denominator is K even when fewer than K documents were retrieved (trec_eval ``P_k``).

    Examples
    --------
    Relevance by rank: 0 1 0 1 0 (the seed tutorial's example)

    >>> rel = np.array([[False, True, False, True, False]])
    >>> precision_at_k(rel, 5).round(3).tolist()
    [[0.0, 0.5, 0.333, 0.5, 0.4]]
    """
    return hits(rel, k_max) / ranks(k_max)


def recall_at_k(rel: BoolArray, n_rel: IntArray, k_max: int) -> FloatArray:
    """Recall@K = (relevant documents in the top K) / n_rel; 0 when ``n_rel == 0``.

    Examples
    --------
    Relevance by rank: 0 1 0 1 0, three relevant documents judged

    >>> rel = np.array([[False, True, False, True, False]])
    >>> recall_at_k(rel, np.array([3]), 5).round(3).tolist()
    [[0.0, 0.333, 0.333, 0.667, 0.667]]
    """
    return safe_div(hits(rel, k_max), n_rel[:, None])


def f1_at_k(rel: BoolArray, n_rel: IntArray, k_max: int) -> FloatArray:
    """F1@K = 2·P@K·R@K / (P@K + R@K); 0 when P@K + R@K == 0.

    Equivalently 2·hits / (K + n_rel).

    Examples
    --------
    Relevance by rank: 0 1 0 1 0, three relevant judged: P@5 = 0.4, R@5 = 2/3

    >>> rel = np.array([[False, True, False, True, False]])
    >>> round(float(f1_at_k(rel, np.array([3]), 5)[0, 4]), 3)
    0.5
    """
    p = precision_at_k(rel, k_max)
    r = recall_at_k(rel, n_rel, k_max)
    return safe_div(2.0 * p * r, p + r)


def hit_rate_at_k(rel: BoolArray, k_max: int) -> FloatArray:
    """HitRate@K (trec_eval ``success_k``) = 1 if a relevant document is in the top K, else 0.

    >>> hit_rate_at_k(np.array([[False, True, False]]), 3).tolist()
    [[0.0, 1.0, 1.0]]
    """
    return (hits(rel, k_max) > 0).astype(np.float64)


def hits_at_k(rel: BoolArray, k_max: int) -> FloatArray:
    """Hits@K (ranx ``hits@k``) = number of relevant documents in the top K (a count, not a
    rate; ranx and ragreport average it over queries).

    >>> hits_at_k(np.array([[False, True, True]]), 4).tolist()
    [[0.0, 1.0, 2.0, 2.0]]
    """
    return hits(rel, k_max)


def _first_rank(rel: BoolArray) -> FloatArray:
    """1-based rank of the first relevant document, ``inf`` when there is none."""
    if rel.shape[1] == 0:
        return np.full(rel.shape[0], np.inf)
    any_rel = rel.any(axis=1)
    return np.where(any_rel, np.argmax(rel, axis=1) + 1.0, np.inf)


def reciprocal_rank(rel: BoolArray) -> FloatArray:
    """RR = 1 / rank of the first relevant document over the whole ranking; 0 if none.

    The mean over queries is MRR (trec_eval ``recip_rank``).

    >>> reciprocal_rank(np.array([[False, True, False], [False, False, False]])).tolist()
    [0.5, 0.0]
    """
    return 1.0 / _first_rank(rel)


def reciprocal_rank_at_k(rel: BoolArray, k_max: int) -> FloatArray:
    """RR@K = 1 / rank of the first relevant document if it is within the top K, else 0.

    >>> reciprocal_rank_at_k(np.array([[False, False, True]]), 4).round(3).tolist()
    [[0.0, 0.0, 0.333, 0.333]]
    """
    first = _first_rank(rel)
    return np.where(first[:, None] <= ranks(k_max), 1.0 / first[:, None], 0.0)


def dcg_at_k(gains: FloatArray, k_max: int) -> FloatArray:
    """DCG@K = sum over ranks i <= K of gain_i / log2(i + 1).

    >>> dcg_at_k(np.array([[0.0, 1.0, 0.0, 1.0, 0.0]]), 5).round(3).tolist()
    [[0.0, 0.631, 0.631, 1.062, 1.062]]
    """
    fitted = np.asarray(fit(gains, k_max), dtype=np.float64)
    return np.cumsum(fitted * discount(k_max), axis=1)


def ndcg_at_k(gains: FloatArray, ideal: FloatArray, k_max: int) -> FloatArray:
    """nDCG@K = DCG@K / IDCG@K; 0 where IDCG@K == 0.

    IDCG@K is the DCG@K of ``ideal``: all judged gains of the query, best first, so a relevant
    document that was never retrieved still lowers nDCG (trec_eval ``ndcg_cut_k``).

    Examples
    --------
    Relevance by rank: 0 1 0 1 0 with two relevant documents (the seed's exercise 2):
    DCG@5 = 1/log2(3) + 1/log2(5) = 1.062, IDCG@5 = 1 + 1/log2(3) = 1.631

    >>> g = np.array([[0.0, 1.0, 0.0, 1.0, 0.0]])
    >>> round(float(ndcg_at_k(g, np.array([[1.0, 1.0]]), 5)[0, 4]), 3)
    0.651
    """
    return safe_div(dcg_at_k(gains, k_max), dcg_at_k(ideal, k_max))


def ndcg(gains: FloatArray, ideal: FloatArray) -> FloatArray:
    """nDCG over the whole ranking (trec_eval ``ndcg``): DCG of the ranking / DCG of ``ideal``.

    Computed from the non-zero gains only (:func:`ndcg_at` with ``k=None``); equal, bit for
    bit, to the last column of :func:`ndcg_at_k` at the full depth. 0 where the ideal DCG is 0.

    >>> ndcg(np.array([[1.0, 0.0]]), np.array([[1.0]])).tolist()
    [1.0]
    """
    qi, pos = np.nonzero(gains)
    iqi, ipos = np.nonzero(ideal)
    return ndcg_at(gains.shape[0], qi, pos, gains[qi, pos], iqi, ipos, ideal[iqi, ipos], None)


def average_precision_at_k(rel: BoolArray, n_rel: IntArray, k_max: int) -> FloatArray:
    """AP@K = (sum of P@i over relevant ranks i <= K) / n_rel; 0 when ``n_rel == 0``.

    The denominator is all relevant documents judged (trec_eval ``map_cut_k``).

    >>> rel = np.array([[True, False, True]])   # relevant at ranks 1 and 3, 2 judged
    >>> average_precision_at_k(rel, np.array([2]), 3).round(4).tolist()
    [[0.5, 0.5, 0.8333]]
    """
    r = fit(rel, k_max)
    contrib = np.where(r, np.cumsum(r, axis=1, dtype=np.float64) / ranks(k_max), 0.0)
    return safe_div(np.cumsum(contrib, axis=1), n_rel[:, None])


def average_precision(rel: BoolArray, n_rel: IntArray) -> FloatArray:
    """AP over the whole ranking (trec_eval ``map`` per query).

    Computed from the relevant ranks only (:func:`average_precision_at` with ``k=None``);
    equal, bit for bit, to the last column of :func:`average_precision_at_k` at the full
    depth. 0 when ``n_rel == 0``.

    >>> average_precision(np.array([[False, True]]), np.array([2])).tolist()
    [0.25]
    """
    qi, pos = np.nonzero(rel)
    return average_precision_at(rel.shape[0], qi, pos, n_rel, None)


def r_precision(rel: BoolArray, n_rel: IntArray) -> FloatArray:
    """R-precision = (relevant in the top R) / R, with R = ``n_rel``; 0 when R == 0.

    >>> r_precision(np.array([[True, False, True]]), np.array([2])).tolist()
    [0.5]
    """
    qi, pos = np.nonzero(rel)
    return r_precision_sparse(rel.shape[0], qi, pos, n_rel)
