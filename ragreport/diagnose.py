"""Why a query scores low: its failure kind at a cutoff K, for every query at once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .result import EvaluationResult

__all__ = ["FAILURE_KINDS", "NO_RELEVANT_RANK", "failure_kinds", "first_relevant_rank"]

#: code -> label. Code 0 means the query has a relevant document in its top K.
FAILURE_KINDS: dict[int, str] = {
    0: "ok",
    1: "no judged relevant document",
    2: "empty retrieval",
    3: "no relevant document retrieved",
    4: "relevant only beyond K",
}


#: :func:`first_relevant_rank` of a query without a relevant document retrieved.
NO_RELEVANT_RANK = np.iinfo(np.int64).max


def first_relevant_rank(result: EvaluationResult) -> npt.NDArray[np.int64]:
    """1-based rank of each query's first relevant retrieved document (grade >= the
    evaluation's ``rel_level``); :data:`NO_RELEVANT_RANK` when there is none (also for an
    empty ranking). Computed from the relevant ranks only: memory proportional to the input.

    >>> from ragreport import evaluate
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}}, {"a": ["y", "x"], "b": ["y"]}, ["P@1"])
    >>> first_relevant_rank(r).tolist() == [2, NO_RELEVANT_RANK]
    True
    """
    qi, pos = result.ranking.relevant_ranks(float(result.conventions.rel_level))
    out = np.full(result.n_queries, NO_RELEVANT_RANK, dtype=np.int64)
    q, at = np.unique(qi, return_index=True)
    out[q] = pos[at] + 1
    return out


def failure_kinds(result: EvaluationResult, k: int) -> npt.NDArray[np.int8]:
    """Failure kind code of every query at cutoff ``k`` (see :data:`FAILURE_KINDS`).

    Checked in that order: a query with no judged relevant document is kind 1 whatever it
    retrieved; then an empty ranking (2); then no relevant document anywhere in the ranking
    (3); then relevant documents only below rank K (4). Any K >= 1 (up to 2**53) works in
    memory proportional to the input.

    >>> from ragreport import evaluate
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}, "c": {"x": 0}},
    ...              {"a": ["y", "x"], "b": ["y"], "c": ["x"]}, ["P@1"])
    >>> [FAILURE_KINDS[int(c)] for c in failure_kinds(r, 1)]
    ['relevant only beyond K', 'no relevant document retrieved', 'no judged relevant document']
    """
    rk = result.ranking
    level = float(result.conventions.rel_level)
    first = first_relevant_rank(result)
    n_rel = rk.n_relevant(level)
    any_rel = first < NO_RELEVANT_RANK
    codes = np.zeros(result.n_queries, dtype=np.int8)
    codes[first > k] = 4
    codes[~any_rel] = 3
    codes[rk.n_ret == 0] = 2
    codes[n_rel == 0] = 1
    return codes
