"""Why a query scores low: its failure kind at a cutoff K, and the worst queries of a run.

A query without any judged relevant document (kind 1) is not a failure of retrieval: nothing
could have been found. It is a category of its own, counted apart and never listed among the
worst queries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure, parse_measure

__all__ = [
    "FAILURE_KINDS",
    "NO_JUDGED_RELEVANT",
    "NO_RELEVANT_RANK",
    "WorstSelection",
    "check_cutoff",
    "failure_counts",
    "failure_kinds",
    "first_relevant_rank",
    "judged_at",
    "kinds_at",
    "unjudged_in_top",
    "worst_order",
    "worst_queries",
]

IntArray = npt.NDArray[np.int64]
KindArray = npt.NDArray[np.int8]
FloatArray = npt.NDArray[np.float64]

#: code -> label. Code 0 means the query has a relevant document in its top K; code 1
#: (:data:`NO_JUDGED_RELEVANT`) is a query without a judged relevant document, which is a
#: separate category, not a failure of retrieval.
FAILURE_KINDS: dict[int, str] = {
    0: "ok",
    1: "no judged relevant document",
    2: "empty retrieval",
    3: "no relevant document retrieved",
    4: "relevant only beyond K",
}

#: The kind of a query without a judged relevant document (excluded from the worst queries).
NO_JUDGED_RELEVANT = 1

#: :func:`first_relevant_rank` of a query without a relevant document retrieved.
NO_RELEVANT_RANK = np.iinfo(np.int64).max


def first_relevant_rank(result: EvaluationResult) -> IntArray:
    """1-based rank of each query's first relevant retrieved document (grade >= the
    evaluation's ``rel_level``); :data:`NO_RELEVANT_RANK` when there is none (also for an
    empty ranking). Computed from the relevant ranks only: memory proportional to the input.

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.

    Returns
    -------
    numpy.ndarray
        Shape (queries,): the rank of the first relevant document, or
        :data:`NO_RELEVANT_RANK` when none was retrieved.

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


def check_cutoff(k: object, name: str = "k") -> int:
    """``k`` as an ``int`` if it is a whole number >= 1, else a :class:`RagReportError`
    saying what was received.

    Parameters
    ----------
    k : object
        The cutoff to check.
    name : str
        Its name in the message.

    Returns
    -------
    int
        ``k``.

    >>> check_cutoff(5), check_cutoff(np.int64(2))
    (5, 2)
    >>> check_cutoff(0)
    Traceback (most recent call last):
    ...
    ragreport.errors.RagReportError: k must be an integer >= 1, got 0
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise RagReportError(f"{name} must be an integer >= 1, got {k!r}")
    return int(k)


def failure_kinds(result: EvaluationResult, k: int) -> KindArray:
    """Failure kind code of every query at cutoff ``k`` (see :data:`FAILURE_KINDS`).

    Checked in that order: a query with no judged relevant document is kind 1 whatever it
    retrieved; then an empty ranking (2); then no relevant document anywhere in the ranking
    (3); then relevant documents only below rank K (4). Any K >= 1 (up to 2**53) works in
    memory proportional to the input.

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.
    k : int
        The cutoff (>= 1).

    Returns
    -------
    numpy.ndarray
        Shape (queries,), int8 codes of :data:`FAILURE_KINDS` (0: no failure).

    >>> from ragreport import evaluate
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}, "c": {"x": 0}},
    ...              {"a": ["y", "x"], "b": ["y"], "c": ["x"]}, ["P@1"])
    >>> [FAILURE_KINDS[int(c)] for c in failure_kinds(r, 1)]
    ['relevant only beyond K', 'no relevant document retrieved', 'no judged relevant document']
    >>> failure_kinds(r, 2).tolist()
    [0, 3, 1]
    """
    k = check_cutoff(k)
    rk = result.ranking
    level = float(result.conventions.rel_level)
    first = first_relevant_rank(result)
    n_rel = rk.n_relevant(level)
    any_rel = first < NO_RELEVANT_RANK
    codes = np.zeros(result.n_queries, dtype=np.int8)
    codes[~any_rel] = 3
    codes[rk.n_ret == 0] = 2
    codes[n_rel == 0] = 1
    return kinds_at(codes, first, k)


def kinds_at(deepest: KindArray, first: IntArray, k: int) -> KindArray:
    """The failure kinds at cutoff ``k`` from the K-independent parts: ``deepest``, the kinds
    with no cutoff (0, 1, 2 or 3), and ``first``, :func:`first_relevant_rank`; a query of
    kind 0 whose first relevant document is below rank ``k`` is kind 4 (what
    :func:`failure_kinds` decides).

    Parameters
    ----------
    deepest : numpy.ndarray
        The kinds without a cutoff (0, 1, 2 or 3) per query.
    first : numpy.ndarray
        :func:`first_relevant_rank` per query.
    k : int
        The cutoff.

    Returns
    -------
    numpy.ndarray
        The kinds at ``k``.

    >>> kinds_at(np.array([0, 0, 3], dtype=np.int8), np.array([1, 5, 9]), 2).tolist()
    [0, 4, 3]
    """
    out = deepest.copy()
    out[(deepest == 0) & (first > k)] = 4
    return out


def judged_at(result: EvaluationResult, k: int) -> FloatArray:
    """Per query, ``Judged@k``: the share of its top ``k`` documents that are judged (the
    measure itself: its curve when the evaluation has it, else computed from the ranking).

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.
    k : int
        The cutoff.

    Returns
    -------
    numpy.ndarray
        Shape (queries,): the judged fraction of each query's top ``k``.

    >>> from ragreport import evaluate
    >>> r = evaluate({"q": {"a": 1, "b": 0}}, {"q": ["x", "a", "b", "y"]}, ["P@1"])
    >>> judged_at(r, 2).tolist(), judged_at(r, 4).tolist()
    ([0.5], [0.5])
    """
    m = Measure("Judged", int(k))
    if m.curve_key in result.curves:
        return np.asarray(result.values(m), dtype=np.float64)
    from ..core.kernel import cutoff_values

    return cutoff_values(result.require_ranking(), m, float(result.conventions.rel_level),
                         ties=result.conventions.ties)


def unjudged_in_top(result: EvaluationResult, i: int, k: int) -> tuple[int, int]:
    """(documents in the top ``k`` of the query at index ``i``, how many are unjudged).

    Unjudged: no qrels line for the query and document (NaN grade in the ranking), which
    is distinct from a judged non-relevant document (a grade below the relevance level).

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.
    i : int
        Index of the query.
    k : int
        The cutoff.

    Returns
    -------
    tuple of int
        ``(ranked, unjudged)``: documents in the top ``k`` and how many of them are unjudged.

    >>> from ragreport import evaluate
    >>> r = evaluate({"q": {"a": 1, "b": 0}}, {"q": ["x", "a", "b", "y"]}, ["P@1"])
    >>> unjudged_in_top(r, 0, 3), unjudged_in_top(r, 0, 10)
    ((3, 1), (4, 2))
    """
    rk = result.require_ranking()
    lo = int(rk.ret_offsets[i])
    top = min(int(k), int(rk.n_ret[i]))
    return top, int(np.isnan(rk.ret_grades[lo:lo + top]).sum())


def failure_counts(kinds: npt.ArrayLike) -> dict[str, int]:
    """How many queries have each failure kind (2, 3, 4: failures of retrieval), by label.
    Queries without a judged relevant document are not in it (count them apart:
    ``(kinds == NO_JUDGED_RELEVANT).sum()``).

    Parameters
    ----------
    kinds : array_like
        Failure kind codes per query.

    Returns
    -------
    dict
        Label -> number of queries, for each failure of retrieval (kinds 2, 3, 4).

    >>> failure_counts([0, 4, 4, 1, 3])
    {'empty retrieval': 0, 'no relevant document retrieved': 1, 'relevant only beyond K': 2}
    """
    codes = np.asarray(kinds)
    return {FAILURE_KINDS[c]: int((codes == c).sum()) for c in FAILURE_KINDS
            if c not in (0, NO_JUDGED_RELEVANT)}


def worst_order(values: npt.ArrayLike, kinds: npt.ArrayLike) -> IntArray:
    """Query indices, worst first: ascending value, ties in index order (a result holds its
    queries sorted by id, so ties go by query id); NaN values last. Queries of kind
    :data:`NO_JUDGED_RELEVANT` (nothing to find) are left out.

    Parameters
    ----------
    values : array_like
        Per-query values of a measure.
    kinds : array_like
        Per-query failure kind codes.

    Returns
    -------
    numpy.ndarray
        Query indices, worst first.

    >>> worst_order([0.5, 0.0, 0.0, 0.2, 0.0], [0, 3, 1, 4, 3]).tolist()
    [1, 4, 3, 0]
    """
    v = np.asarray(values, dtype=np.float64)
    codes = np.asarray(kinds)
    if v.shape != codes.shape or v.ndim != 1:
        raise RagReportError(f"values and kinds must be 1-d arrays of one length, got shapes "
                             f"{v.shape} and {codes.shape}")
    keep = np.flatnonzero(codes != NO_JUDGED_RELEVANT)
    order = keep[np.argsort(v[keep], kind="stable")]
    return order.astype(np.int64)


@dataclass(frozen=True)
class WorstSelection:
    """The worst queries of a run for one measure, and the failure kinds at K."""

    measure: Measure
    k: int
    indices: IntArray
    """Query indices of the worst queries, worst first (at most ``n``; no kind-1 query)."""
    values: FloatArray
    """Every query's value of ``measure``."""
    kinds: KindArray
    """Every query's failure kind at ``k`` (see :data:`FAILURE_KINDS`)."""
    counts: dict[str, int]
    """:func:`failure_counts`: queries of each failure kind (2 to 4), by label."""
    no_judged_relevant: int
    """Queries without a judged relevant document (kind 1: not failures, not listed)."""

    @property
    def total(self) -> int:
        """Queries of the run."""
        return len(self.values)


def worst_queries(result: EvaluationResult, measure: str | Measure, k: int | None = None,
                  n: int = 20) -> WorstSelection:
    """The ``n`` worst queries of ``result`` by ``measure`` (see :func:`worst_order`), with
    the failure kinds at ``k`` (default: the measure's cutoff, else the result's ``k_max``).

    Parameters
    ----------
    result : EvaluationResult
        The evaluated run.
    measure : str or Measure
        The measure the queries are ranked by.
    k : int or None
        Cutoff of the failure kinds (>= 1).
    n : int
        How many queries (>= 0).

    Returns
    -------
    WorstSelection
        The order, values, kinds and counts.

    >>> from ragreport import evaluate
    >>> r = evaluate({"a": {"x": 1}, "b": {"x": 1}, "c": {"x": 0}, "d": {"x": 1}},
    ...              {"a": ["y", "x"], "b": ["y"], "c": ["x"], "d": ["x"]}, ["P@1"])
    >>> w = worst_queries(r, "P@1", n=2)
    >>> [r.query_ids[i] for i in w.indices], w.no_judged_relevant
    (['a', 'b'], 1)
    >>> w.counts["relevant only beyond K"], w.counts["no relevant document retrieved"]
    (1, 1)
    """
    m = parse_measure(measure)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise RagReportError(f"n must be an integer >= 0, got {n!r}")
    kk = check_cutoff(k) if k is not None else (m.cutoff or result.k_max)
    values = np.asarray(result.values(m), dtype=np.float64)
    kinds = failure_kinds(result, kk)
    order = worst_order(values, kinds)[:n]
    return WorstSelection(m, kk, order, values, kinds, failure_counts(kinds),
                          int((kinds == NO_JUDGED_RELEVANT).sum()))
