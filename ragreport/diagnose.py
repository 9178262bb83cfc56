"""Why a query scores low: its failure kind at a cutoff K, for every query at once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .result import EvaluationResult

__all__ = ["FAILURE_KINDS", "failure_kinds"]

#: code -> label. Code 0 means the query has a relevant document in its top K.
FAILURE_KINDS: dict[int, str] = {
    0: "ok",
    1: "no judged relevant document",
    2: "empty retrieval",
    3: "no relevant document retrieved",
    4: "relevant only beyond K",
}


def failure_kinds(result: EvaluationResult, k: int) -> npt.NDArray[np.int8]:
    """Failure kind code of every query at cutoff ``k`` (see :data:`FAILURE_KINDS`).

    Checked in that order: a query with no judged relevant document is kind 1 whatever it
    retrieved; then an empty ranking (2); then no relevant document anywhere in the ranking
    (3); then relevant documents only below rank K (4).

    >>> from ragreport import evaluate
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}, "c": {"x": 0}},
    ...              {"a": ["y", "x"], "b": ["y"], "c": ["x"]}, ["P@1"])
    >>> [FAILURE_KINDS[int(c)] for c in failure_kinds(r, 1)]
    ['relevant only beyond K', 'no relevant document retrieved', 'no judged relevant document']
    """
    rk = result.ranking
    level = float(result.conventions.rel_level)
    rel = rk.relevance(level)
    n_rel = rk.n_relevant(level)
    any_rel = rel.any(axis=1)
    first = np.where(any_rel, np.argmax(rel, axis=1) + 1, np.iinfo(np.int64).max)
    codes = np.zeros(result.n_queries, dtype=np.int8)
    codes[first > k] = 4
    codes[~any_rel] = 3
    codes[rk.n_ret == 0] = 2
    codes[n_rel == 0] = 1
    return codes
