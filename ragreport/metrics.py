"""Vectorised retrieval metrics: every query, every cutoff K = 1..k_max, in one pass.

Inputs are rankings already ordered and cut (see :mod:`ragreport.align`):

``rel``
    bool array (queries, depth): ``rel[q, i]`` is True when the document at rank ``i + 1`` of
    query ``q`` is relevant. Padding beyond what was retrieved is False.
``gains``
    float array (queries, depth): the gain of the document at each rank (0 for padding).
``n_rel``
    int array (queries,): number of relevant documents judged for the query (retrieved or
    not).
``ideal``
    float array (queries, >= k): the query's judged gains sorted descending, zero-padded.

Every ``*_at_k`` function returns a float64 array of shape (queries, k_max) whose column
``k - 1`` holds the value at cutoff K = k. Functions without a cutoff return shape (queries,).
Degenerate cases are handled by masks: a query with no relevant document (``n_rel == 0``) or an
ideal DCG of 0 scores 0, as in trec_eval; an empty ranking scores 0 everywhere. Precision@K
divides by K even when fewer than K documents were retrieved.

Ties in scores never reach these functions: the ranking order is fixed before (trec_eval's
rule: score descending, then document id descending).

Sparse forms (memory proportional to the input, any cutoff K)
-------------------------------------------------------------
The ``*_at`` functions take a ranking as the (query, 0-based rank) pairs of its relevant
documents (``qi``, ``pos``, sorted by query then rank, as ``np.nonzero`` of ``rel`` gives
them), or of its non-zero gains with their values, and return one value per query at one
cutoff ``k`` (an int, any size up to 2**53, or ``None`` for the whole ranking). They add the
same numbers in the same order as the dense ``*_at_k`` curves, so a value is bit-identical to
the curve's column ``k - 1`` (``tests/measures/test_metrics.py``). Past the end of every ranking:
P@K = relevant retrieved / K, R@K, HitRate@K, RR@K and AP@K are constant, and nDCG@K =
DCG of the whole ranking / IDCG@min(K, judged relevant) (IDCG still grows while judged
documents remain); Judged@K = judged / retrieved, R_cap@K = relevant retrieved / R, ERR@K
and RBP@K are constant.

Issue 13's measures and their sources
-------------------------------------
Set measures (:func:`set_precision`, :func:`set_recall`, :func:`set_f`), :func:`bpref` and
:func:`interpolated_precision` follow trec_eval's C code (``m_set_P.c``, ``m_bpref.c``,
``m_iprec_at_recall.c``); :func:`judged_at_k` follows ir_measures' Judged provider;
:func:`err_at_k` follows gdeval.pl (Chapelle et al. 2009, as ir_measures runs it);
:func:`rbp_at_k` is Moffat and Zobel's RBP (2008), binary as cwl_eval computes it for
ir_measures' ``RBP(rel=r)``, graded as trectools computes it for ir_measures' ``RBP``;
:func:`capped_recall_at_k` is BEIR's ``R_cap@k``.

Gains
-----
:func:`gain_of` computes linear gains (the grade) or exponential gains (2^grade - 1). For
exponential gains a query whose largest grade exceeds :data:`EXP_HEADROOM` has all its gains
scaled by 2^-shift (:func:`gain_shift`), an exact power of two, so DCG and IDCG never overflow
and their ratio, nDCG, is unchanged; for every other query the gains are exactly 2^grade - 1.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "ERR_MAX_GRADE",
    "EXP_HEADROOM",
    "IPREC_ROUNDINGS",
    "PR_LEVELS",
    "average_precision",
    "average_precision_at",
    "average_precision_at_k",
    "bpref",
    "capped_recall_at",
    "capped_recall_at_k",
    "dcg_at",
    "dcg_at_k",
    "err_at",
    "err_at_k",
    "err_stop",
    "err_terms",
    "f1_at",
    "f1_at_k",
    "gain_of",
    "gain_shift",
    "hit_rate_at",
    "hit_rate_at_k",
    "hits_at",
    "hits_at_k",
    "interpolated_precision",
    "judged_at",
    "judged_at_k",
    "ndcg",
    "ndcg_at",
    "ndcg_at_k",
    "precision_at",
    "precision_at_k",
    "r_precision",
    "r_precision_sparse",
    "rbp_at",
    "rbp_at_k",
    "recall_at",
    "recall_at_k",
    "reciprocal_rank",
    "reciprocal_rank_at",
    "reciprocal_rank_at_k",
    "set_f",
    "set_precision",
    "set_recall",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def _fit(a: npt.NDArray[np.generic], k_max: int) -> npt.NDArray[np.generic]:
    """Truncate or zero-pad the columns of ``a`` to exactly ``k_max``."""
    n, depth = a.shape
    if depth >= k_max:
        return a[:, :k_max]
    out = np.zeros((n, k_max), dtype=a.dtype)
    out[:, :depth] = a
    return out


def _hits(rel: BoolArray, k_max: int) -> FloatArray:
    return np.cumsum(_fit(rel, k_max), axis=1, dtype=np.float64)


def _ranks(k_max: int) -> FloatArray:
    return np.arange(1, k_max + 1, dtype=np.float64)


def safe_div(num: FloatArray, den: npt.NDArray[np.generic]) -> FloatArray:
    """num / den, 0 where den == 0 (``den`` broadcasts against ``num``)."""
    den_f = np.asarray(den, dtype=np.float64)
    ok = den_f != 0
    return np.divide(num, np.where(ok, den_f, 1.0), out=np.zeros_like(num),
                     where=np.broadcast_to(ok, num.shape))


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
    return _hits(rel, k_max) / _ranks(k_max)


def recall_at_k(rel: BoolArray, n_rel: IntArray, k_max: int) -> FloatArray:
    """Recall@K = (relevant documents in the top K) / n_rel; 0 when ``n_rel == 0``.

    Examples
    --------
    Relevance by rank: 0 1 0 1 0, three relevant documents judged

    >>> rel = np.array([[False, True, False, True, False]])
    >>> recall_at_k(rel, np.array([3]), 5).round(3).tolist()
    [[0.0, 0.333, 0.333, 0.667, 0.667]]
    """
    return safe_div(_hits(rel, k_max), n_rel[:, None])


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
    return (_hits(rel, k_max) > 0).astype(np.float64)


def hits_at_k(rel: BoolArray, k_max: int) -> FloatArray:
    """Hits@K (ranx ``hits@k``) = number of relevant documents in the top K (a count, not a
    rate; ranx and ragreport average it over queries).

    >>> hits_at_k(np.array([[False, True, True]]), 4).tolist()
    [[0.0, 1.0, 2.0, 2.0]]
    """
    return _hits(rel, k_max)


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
    return np.where(first[:, None] <= _ranks(k_max), 1.0 / first[:, None], 0.0)


def _discount(k: int) -> FloatArray:
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def dcg_at_k(gains: FloatArray, k_max: int) -> FloatArray:
    """DCG@K = sum over ranks i <= K of gain_i / log2(i + 1).

    >>> dcg_at_k(np.array([[0.0, 1.0, 0.0, 1.0, 0.0]]), 5).round(3).tolist()
    [[0.0, 0.631, 0.631, 1.062, 1.062]]
    """
    fitted = np.asarray(_fit(gains, k_max), dtype=np.float64)
    return np.cumsum(fitted * _discount(k_max), axis=1)


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


def _row_sums(n: int, rows: IntArray, values: FloatArray) -> FloatArray:
    """Per-row sums of sparse values, added in the order given (as a cumulative sum would)."""
    return np.bincount(rows, weights=values, minlength=n).astype(np.float64)


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
    r = _fit(rel, k_max)
    contrib = np.where(r, np.cumsum(r, axis=1, dtype=np.float64) / _ranks(k_max), 0.0)
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


# ---- sparse forms: one cutoff, any K --------------------------------------------------------

def _within(pos: IntArray, k: int | None) -> BoolArray | slice:
    return slice(None) if k is None else pos < k


def hits_at(n: int, qi: IntArray, pos: IntArray, k: int | None) -> FloatArray:
    """Relevant documents in the top ``k`` of each of ``n`` queries (``k=None``: all).

    ``qi``, ``pos``: query and 0-based rank of each relevant retrieved document. Empty input
    gives zeros.

    >>> hits_at(2, np.array([0, 0, 1]), np.array([1, 3, 0]), 2).tolist()
    [1.0, 1.0]
    """
    sel = _within(pos, k)
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
    sel = _within(pos, k)
    qi, pos = qi[sel], pos[sel]
    first = np.searchsorted(qi, np.arange(n))
    hits = (np.arange(len(qi)) - first[qi] + 1).astype(np.float64)
    return safe_div(_row_sums(n, qi, hits / (pos + 1.0)), n_rel)


def r_precision_sparse(n: int, qi: IntArray, pos: IntArray, n_rel: IntArray) -> FloatArray:
    """R-precision from the relevant ranks: relevant in the top R / R, R = ``n_rel``; 0 when
    R == 0.

    >>> r_precision_sparse(1, np.array([0, 0]), np.array([0, 2]), np.array([2])).tolist()
    [0.5]
    """
    top = (pos < n_rel[qi]).astype(np.float64)
    return safe_div(_row_sums(n, qi, top), n_rel)


def dcg_at(n: int, qi: IntArray, pos: IntArray, g: FloatArray, k: int | None) -> FloatArray:
    """DCG@K = sum over ranks i <= K of gain_i / log2(i + 1), from the non-zero gains ``g``
    at (``qi``, ``pos``); ``k=None``: the whole ranking. Empty rankings give 0.

    >>> dcg_at(1, np.array([0, 0]), np.array([1, 3]), np.array([1.0, 1.0]), 5).round(3)
    array([1.062])
    """
    sel = _within(pos, k)
    qi, pos, g = qi[sel], pos[sel], g[sel]
    disc = _discount(int(pos.max()) + 1 if len(pos) else 1)
    return _row_sums(n, qi, g * disc[pos])


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


# ---- issue 13: set measures, judged share, bpref, interpolated precision, ERR, RBP, R_cap ------

#: trec_eval's recall levels of ``iprec_at_recall`` (the 11-point precision-recall curve), the
#: same doubles as its ``double_cutoff_array`` (``0.3`` is the literal 0.3, not 3 * 0.1).
PR_LEVELS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

#: gdeval's ``$MAX_JUDGMENT``: ERR's stopping probability is (2^grade - 1) / 2^4, and gdeval
#: refuses a qrels line with a larger grade.
ERR_MAX_GRADE = 4


def set_precision(n_rel_ret: FloatArray, n_ret: IntArray) -> FloatArray:
    """SetP (trec_eval ``set_P``) = relevant retrieved / retrieved; 0 when nothing was
    retrieved.

    Over the whole ranking (after ``max_depth``), however long it is: what LlamaIndex's
    precision and RAGAS's ID-based context precision compute. No cutoff, so no tie rule
    matters.

    >>> set_precision(np.array([2.0, 0.0]), np.array([5, 0])).tolist()
    [0.4, 0.0]
    """
    return safe_div(np.asarray(n_rel_ret, dtype=np.float64), n_ret)


def set_recall(n_rel_ret: FloatArray, n_rel: IntArray) -> FloatArray:
    """SetR (trec_eval ``set_recall``) = relevant retrieved / relevant judged; 0 when the
    query has no relevant document.

    >>> set_recall(np.array([2.0]), np.array([3])).round(4).tolist()
    [0.6667]
    """
    return safe_div(np.asarray(n_rel_ret, dtype=np.float64), n_rel)


def set_f(n_rel_ret: FloatArray, n_ret: IntArray, n_rel: IntArray) -> FloatArray:
    """SetF (trec_eval ``set_F`` with beta = 1) = 2·SetP·SetR / (SetP + SetR); 0 when no
    relevant document was retrieved (trec_eval computes ``(x + 1)·P·R / (x·P + R)``, x = 1:
    the same operations).

    Two relevant among 5 retrieved, 3 judged: P = 0.4, R = 2/3, F = 2·0.4·(2/3) / (0.4 + 2/3)
    = 0.5.

    >>> set_f(np.array([2.0, 0.0]), np.array([5, 4]), np.array([3, 2])).tolist()
    [0.5, 0.0]
    """
    p = set_precision(n_rel_ret, n_ret)
    r = set_recall(n_rel_ret, n_rel)
    return safe_div(2.0 * p * r, p + r)


def judged_at_k(judged: BoolArray, n_ret: IntArray, k_max: int) -> FloatArray:
    """Judged@K = documents with a judgment (any grade: 0 and negative grades too) in the top
    K / min(K, retrieved); 0 for an empty ranking.

    As ir_measures' ``Judged`` provider computes it (from OpenNIR): the divisor is the number
    of documents in the top K, so a ranking shorter than K is not penalised for its length,
    and Judged@K stays constant past its end. ``judged`` is (queries, depth), True where the
    document at that rank appears in the qrels. Ties are broken before (the evaluation's
    rule; ir_measures' provider breaks ties by document id ascending, so a tie across the cut
    may differ).

    Examples
    --------
    Judged by rank: 1 0 1 (three retrieved): K=1: 1/1, K=2: 1/2, K=3: 2/3, K=4: 2/3

    >>> judged_at_k(np.array([[True, False, True]]), np.array([3]), 4).round(4).tolist()
    [[1.0, 0.5, 0.6667, 0.6667]]
    """
    return safe_div(_hits(judged, k_max), np.minimum(_ranks(k_max), n_ret[:, None]))


def judged_at(n: int, qi: IntArray, pos: IntArray, n_ret: IntArray,
              k: int | None) -> FloatArray:
    """Judged@K from the (query, 0-based rank) pairs of the judged retrieved documents: judged
    in the top K / min(K, retrieved) (``k=None``: judged / retrieved); 0 for an empty ranking.

    Bit-identical to column ``k - 1`` of :func:`judged_at_k`.

    >>> judged_at(2, np.array([0, 0]), np.array([0, 2]), np.array([3, 0]), 10).round(4).tolist()
    [0.6667, 0.0]
    """
    den = n_ret if k is None else np.minimum(n_ret, k)
    return safe_div(hits_at(n, qi, pos, k), den)


def bpref(grades: FloatArray, offsets: IntArray, n_rel: IntArray, n_nonrel: IntArray,
          rel_level: float) -> FloatArray:
    """Bpref (trec_eval ``bpref``; Buckley and Voorhees, SIGIR 2004), per query.

    bpref = 1/R · sum over the relevant retrieved documents d of
    (1 - min(n_d, R) / min(N, R)), the term being 1 when n_d = 0, where R = relevant judged
    (grade >= ``rel_level``), N = judged non-relevant (0 <= grade < ``rel_level``, retrieved
    or not) and n_d = judged non-relevant documents ranked above d. Unjudged documents and
    negative grades (trec_eval's "in the pool but unjudged") are skipped: they neither count
    as non-relevant nor move anything. 0 when R = 0 or nothing relevant was retrieved.

    Parameters
    ----------
    grades : float array
        Grades of the retrieved documents in ranking order, all queries one after the other
        (NaN = unjudged), as :attr:`ragreport.ranking.Ranking.ret_grades`.
    offsets : int array
        Query ``q`` holds ``grades[offsets[q]:offsets[q + 1]]`` (length queries + 1).
    n_rel, n_nonrel : int arrays
        R and N per query.
    rel_level : float
        Smallest relevant grade.

    Examples
    --------
    Grades by rank: 0 2 ? 1 with R = 2 and N = 3 (two non-relevant judged documents were not
    retrieved): the document at rank 2 has one non-relevant above it, 1 - 1/min(3, 2) = 0.5;
    the one at rank 4 also (the unjudged rank 3 is skipped): bpref = (0.5 + 0.5) / 2 = 0.5.

    >>> g = np.array([0.0, 2.0, np.nan, 1.0])
    >>> bpref(g, np.array([0, 4]), np.array([2]), np.array([3]), 1.0).tolist()
    [0.5]
    """
    n = len(offsets) - 1
    with np.errstate(invalid="ignore"):
        nonrel = (grades >= 0) & (grades < rel_level)
        rel_rows = np.flatnonzero(grades >= rel_level)
    # judged non-relevant documents before each row, counted from the start of its query
    before = np.concatenate(([0], np.cumsum(nonrel, dtype=np.int64)))
    qi = (np.searchsorted(offsets, rel_rows, side="right") - 1).astype(np.int64)
    above = before[rel_rows] - before[offsets[:-1]][qi]
    r = n_rel[qi]
    frac = safe_div(np.minimum(above, r).astype(np.float64), np.minimum(n_nonrel[qi], r))
    contrib = np.where(above > 0, 1.0 - frac, 1.0)
    return safe_div(_row_sums(n, qi, contrib), n_rel)


def _lround(x: FloatArray) -> FloatArray:
    """C's ``lround`` for x >= 0 (halves away from zero), exactly: ``floor(x + 0.5)`` is not
    (0.49999999999999994 + 0.5 rounds to 1.0)."""
    t = np.trunc(x)
    return t + (x - t >= 0.5)


#: How a recall level becomes a number of relevant documents in :func:`interpolated_precision`.
IPREC_ROUNDINGS = ("lround", "trec_eval9")


def interpolated_precision(n: int, qi: IntArray, pos: IntArray, n_rel: IntArray,
                           levels: tuple[float, ...] = PR_LEVELS,
                           rounding: str = "lround") -> FloatArray:
    """Interpolated precision at recall levels (trec_eval ``iprec_at_recall``), (queries,
    len(levels)).

    IPrec@r = the largest precision at any rank holding at least c of the R relevant
    documents, computed as trec_eval does (so not "whose recall is >= r": with R = 6 and one
    relevant document retrieved first, IPrec@0.2 = 1, since lround(1.2) = 1): the level is
    turned into a number of relevant documents c (R = relevant judged); IPrec@r = max over
    m >= max(c, 1) of m / p_m, where p_m is the rank of the m-th relevant retrieved document;
    0 when c exceeds the relevant retrieved (the level is never reached), or nothing
    relevant was retrieved, or R = 0. ``qi``, ``pos``: query and 0-based rank of each
    relevant retrieved document (by query, then rank). No cutoff, so the tie
    rule matters only through the order of the ranking.

    ``rounding`` says how c is computed: ``"lround"``, c = lround(r · R), is trec_eval 10.0's
    (``m_iprec_at_recall.c`` since December 2023, and its test suite's); ``"trec_eval9"``,
    c = (long)(r · R + 0.9), is trec_eval 9.x's, which pytrec_eval 0.5 and so ir_measures
    run. They differ when the fraction of r · R is in [0.1, 0.5): R = 4, r = 0.3 gives c = 1
    or 2.

    Examples
    --------
    Relevant at ranks 1 and 3 of 5, R = 4: precisions 1/1 and 2/3; c = lround(r·4):
    r = 0, 0.1 -> c = 0 -> max(1, 2/3) = 1; r = 0.5 -> c = 2 -> 2/3; r = 0.7 -> c = 3 > 2 -> 0

    >>> interpolated_precision(1, np.array([0, 0]), np.array([0, 2]), np.array([4]),
    ...                        (0.0, 0.1, 0.5, 0.7)).round(4).tolist()
    [[1.0, 1.0, 0.6667, 0.0]]

    With trec_eval 9's rounding, r = 0.1 needs c = (long)(0.4 + 0.9) = 1 and r = 0.5 needs
    (long)(2.9) = 2: the same here, but r = 0.3 needs (long)(2.1) = 2 (lround(1.2) = 1):

    >>> [interpolated_precision(1, np.array([0, 0]), np.array([0, 2]), np.array([4]),
    ...                         (0.3,), rounding=x).round(4).tolist() for x in IPREC_ROUNDINGS]
    [[[1.0]], [[0.6667]]]
    """
    if rounding not in IPREC_ROUNDINGS:
        from .errors import MeasureError

        raise MeasureError(f"rounding must be 'lround' or 'trec_eval9', got {rounding!r}")
    first = np.searchsorted(qi, np.arange(n))
    n_rr = np.bincount(qi, minlength=n)
    hits = (np.arange(len(qi)) - first[qi] + 1).astype(np.float64)
    prec = np.concatenate((hits / (pos + 1.0), [0.0]))  # one spare slot for reduceat's ends
    out = np.zeros((n, len(levels)))
    for j, level in enumerate(levels):
        x = float(level) * n_rel.astype(np.float64)
        c = _lround(x) if rounding == "lround" else np.floor(x + 0.9)
        cut = np.maximum(c, 1.0).astype(np.int64)
        ok = np.flatnonzero(cut <= n_rr)
        if not len(ok):
            continue
        # the suffix of each query's precisions from its c-th relevant document: one
        # [start, end) pair per query, every other reduceat slot (the gaps) thrown away
        bounds = np.empty(2 * len(ok), dtype=np.int64)
        bounds[0::2] = first[ok] + cut[ok] - 1
        bounds[1::2] = first[ok] + n_rr[ok]
        out[ok, j] = np.maximum.reduceat(prec, bounds)[0::2]
    return out


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
    r = err_stop(np.asarray(_fit(grades, k_max), dtype=np.float64))
    decay = np.ones_like(r)
    np.cumprod(1.0 - r[:, :-1], axis=1, out=decay[:, 1:])
    return np.cumsum(r * decay / _ranks(k_max), axis=1)


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
    sel = _within(pos, k)
    return _row_sums(n, qi[sel], terms[sel])


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
    g = _fit(rel, k_max)
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
    sel = _within(pos, k)
    w = np.power(p, pos[sel].astype(np.float64))
    if gains is not None:
        w = gains[sel] * w
    return (1.0 - p) * _row_sums(n, qi[sel], w)


def capped_recall_at_k(rel: BoolArray, n_rel: IntArray, k_max: int) -> FloatArray:
    """R_cap@K (BEIR and MTEB's capped recall) = relevant in the top K / min(K, R), R =
    relevant judged; 0 when R = 0 (BEIR divides by zero there).

    Equals 1 for a perfect ranking at every K, unlike recall, whose best value at K < R is
    K / R.

    >>> capped_recall_at_k(np.array([[True, False, True]]), np.array([3]), 4).round(4).tolist()
    [[1.0, 0.5, 0.6667, 0.6667]]
    """
    return safe_div(_hits(rel, k_max), np.minimum(_ranks(k_max), n_rel[:, None]))


def capped_recall_at(n: int, qi: IntArray, pos: IntArray, n_rel: IntArray,
                     k: int) -> FloatArray:
    """R_cap@K from the relevant ranks, any K >= 1; bit-identical to column ``k - 1`` of
    :func:`capped_recall_at_k`.

    >>> capped_recall_at(1, np.array([0, 0]), np.array([0, 2]), np.array([3]), 2).tolist()
    [0.5]
    """
    return safe_div(hits_at(n, qi, pos, k), np.minimum(n_rel, k))
