"""Vectorised retrieval metrics: every query, every cutoff K = 1..k_max, in one pass.

Inputs are rankings already ordered and cut (see :mod:`ragreport.core.align`):

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

from .base import BoolArray, FloatArray, IntArray, safe_div
from .dense import (
    average_precision,
    average_precision_at_k,
    dcg_at_k,
    f1_at_k,
    hit_rate_at_k,
    hits_at_k,
    ndcg,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
    reciprocal_rank_at_k,
)
from .gains import EXP_HEADROOM, gain_of, gain_shift
from .setwise import (
    IPREC_ROUNDINGS,
    PR_LEVELS,
    bpref,
    interpolated_precision,
    judged_at,
    judged_at_k,
    set_f,
    set_precision,
    set_recall,
)
from .sparse import (
    average_precision_at,
    dcg_at,
    f1_at,
    hit_rate_at,
    hits_at,
    ndcg_at,
    precision_at,
    r_precision_sparse,
    recall_at,
    reciprocal_rank_at,
)
from .user import (
    ERR_MAX_GRADE,
    capped_recall_at,
    capped_recall_at_k,
    err_at,
    err_at_k,
    err_stop,
    err_terms,
    rbp_at,
    rbp_at_k,
)

__all__ = [
    "ERR_MAX_GRADE",
    "EXP_HEADROOM",
    "IPREC_ROUNDINGS",
    "PR_LEVELS",
    "BoolArray",
    "FloatArray",
    "IntArray",
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
    "safe_div",
    "set_f",
    "set_precision",
    "set_recall",
]
