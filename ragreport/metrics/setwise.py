"""trec_eval's set measures, the judged share, bpref and interpolated precision."""

from __future__ import annotations

import numpy as np

from .base import BoolArray, FloatArray, IntArray, hits, ranks, row_sums, safe_div
from .sparse import hits_at

__all__ = ["IPREC_ROUNDINGS", "PR_LEVELS", "bpref", "interpolated_precision", "judged_at",
           "judged_at_k", "set_f", "set_precision", "set_recall"]


# ---- issue 13: set measures, judged share, bpref, interpolated precision, ERR, RBP, R_cap ------

#: trec_eval's recall levels of ``iprec_at_recall`` (the 11-point precision-recall curve), the
#: same doubles as its ``double_cutoff_array`` (``0.3`` is the literal 0.3, not 3 * 0.1).
PR_LEVELS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)



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
    return safe_div(hits(judged, k_max), np.minimum(ranks(k_max), n_ret[:, None]))


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
        (NaN = unjudged), as :attr:`ragreport.core.ranking.Ranking.ret_grades`.
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
    return safe_div(row_sums(n, qi, contrib), n_rel)


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
        from ..errors import MeasureError

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
