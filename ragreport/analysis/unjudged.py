"""How much a number depends on the unjudged documents of the evaluated rankings.

trec_eval reads a retrieved document that the qrels do not judge as not relevant. The
opposite reading, every unjudged document of the evaluated ranking (to its depth, after
``max_depth``) relevant at a stated grade, gives the other end: :func:`unjudged_bounds`
evaluates the run under both readings, exactly as each measure defines itself (the filled
documents are judgments like any other: they count in the ideal ranking too, so nDCG can go
down), and keeps the two results side by side. Per query, the interval spans the two values;
for the run, it spans the means of the per-query lower and upper ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.result import EvaluationResult
from ..data import FloatArray, IntArray, Qrels
from ..errors import RagReportError
from ..io.columns import contiguous, pair_keys
from ..measures import Measure

__all__ = ["UnjudgedBounds", "bounds_of", "fill_grade", "filled_qrels", "filled_together",
           "same_qrels", "unjudged_bounds", "unjudged_documents"]


@dataclass(frozen=True)
class UnjudgedBounds:
    """A run evaluated with its unjudged documents read as not relevant and as relevant.

    Attributes
    ----------
    judged : EvaluationResult
        The unjudged documents read as not relevant (trec_eval's reading).
    filled : EvaluationResult
        The unjudged documents of each evaluated ranking, to its depth, read as relevant at
        :attr:`grade`; the same queries, in the same order, as :attr:`judged`.
    grade : float
        The grade given to the unjudged documents in :attr:`filled`.
    n_unjudged : numpy.ndarray
        (queries,) unjudged documents in each evaluated ranking (to its depth).
    """

    judged: EvaluationResult
    filled: EvaluationResult
    grade: float
    n_unjudged: IntArray

    @property
    def query_ids(self) -> list[str]:
        return self.judged.query_ids

    def values(self, measure: str | Measure) -> tuple[FloatArray, FloatArray]:
        """(lower, upper): (queries,) per-query ends of the interval of ``measure``.

        Each end is the smaller (larger) of the two readings' values, whichever reading gives
        it (for nDCG the filled reading can be the lower one).
        """
        a, b = self.judged.values(measure), self.filled.values(measure)
        return np.minimum(a, b), np.maximum(a, b)

    def curves(self, measure: str | Measure) -> tuple[FloatArray, FloatArray]:
        """(lower, upper): (queries, K) per-query ends for a family at K = 1..k_max."""
        a, b = self.judged.curve(measure), self.filled.curve(measure)
        width = min(a.shape[1], b.shape[1])
        return np.minimum(a[:, :width], b[:, :width]), np.maximum(a[:, :width], b[:, :width])

    def interval(self, measure: str | Measure) -> tuple[float, float]:
        """(lower, upper) of the run: the means of the per-query lower and upper ends."""
        lo, hi = self.values(measure)
        if len(lo) == 0:
            return 0.0, 0.0
        return float(lo.mean()), float(hi.mean())


def unjudged_bounds(qrels: Any, run: Any, measures: Any = None, k_max: int | None = None, *,
                    grade: float | None = None, **options: Any) -> UnjudgedBounds:
    """Evaluate ``run`` with its unjudged documents read as not relevant, then as relevant.

    Parameters
    ----------
    qrels, run, measures, k_max
        As for :func:`ragreport.evaluate`.
    grade : float, optional
        The grade of an unjudged document in the filled reading; default the largest grade
        in the qrels (1 when none is positive). Must be at least ``rel_level`` (else the
        filled reading would equal trec_eval's).
    **options
        Any other option of :func:`ragreport.evaluate` (``max_depth``, ``rel_level``,
        ``ties``, ``compat``...), used for both readings. ``doc_map`` is refused (a chunk's
        unjudged reading is not defined yet).

    Returns
    -------
    UnjudgedBounds

    Notes
    -----
    The documents filled are those of the evaluated ranking of each query: after the order
    (ties broken as configured), the identical-id rule and the ``max_depth`` cut. Queries are
    those of trec_eval's reading; a query that reading leaves out (``no_relevant="skip"``
    and no relevant judgment) is left out of both.

    Examples
    --------
    Two relevant documents are judged, ``d2`` is retrieved but unjudged:

    >>> b = unjudged_bounds({"q": {"d1": 1, "d3": 1}}, {"q": ["d1", "d2", "d3"]}, ["P@2"])
    >>> b.interval("P@2"), b.n_unjudged.tolist()
    ((0.5, 1.0), [1])
    """
    from ..core.engine import evaluate

    if options.get("doc_map") is not None:
        raise RagReportError("unjudged bounds are not available with doc_map")
    return bounds_of(evaluate(qrels, run, measures, k_max, **options), grade=grade)


def bounds_of(judged: EvaluationResult, *, grade: float | None = None,
              measures: Sequence[Measure] | None = None,
              curves: bool = True) -> UnjudgedBounds:
    """The unjudged bounds of a result of :func:`ragreport.evaluate` (trec_eval's reading):
    its rankings are evaluated again with their unjudged documents filled at ``grade``,
    under the conventions the result was evaluated with (resolved: its order, relevance
    level, depth, tie rule, identical-id rule and score precision).

    ``measures`` (default the result's) are those the filled reading evaluates;
    ``curves=False`` leaves its curves out (one column: a measure at any K then comes from
    the rankings' sparse form, with the same value), for a caller that needs only
    :meth:`UnjudgedBounds.values`, such as the report's target checks.
    """
    ranking = _ranking(judged)
    fill = fill_grade(ranking.qrels, grade, judged.conventions.rel_level)
    at, docs, rows = _unjudged_rows(judged)
    filled = _evaluate_filled(judged, at, docs, np.full(len(at), fill), rows, measures, curves)
    n = np.bincount(at, minlength=len(judged.query_ids)).astype(np.int64)
    return UnjudgedBounds(judged, filled, fill, n)


def filled_together(results: Sequence[EvaluationResult], *, grade: float | None = None,
                    measures: Sequence[Measure] | None = None
                    ) -> tuple[list[EvaluationResult], float] | None:
    """Every result evaluated again with one set of filled judgments: each document that
    any of their evaluated rankings retrieves and the qrels do not judge reads as relevant at
    ``grade`` (default the qrels' largest), for all of them alike (a comparison between runs
    needs one reading of each document), on the queries all of them evaluated (the others
    are not compared). Returns the filled results (in order, without curves) and the grade;
    None when the results were not evaluated against the same judgments.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    rankings = [_ranking(r) for r in results]
    qrels = rankings[0].qrels
    if any(not same_qrels(qrels, rk.qrels) for rk in rankings[1:]):
        return None
    fill = fill_grade(qrels, grade, results[0].conventions.rel_level)
    found = [_unjudged_rows(r) for r in results]
    pairs = [pa.table({"q": _strings(r.query_ids).take(at).cast(pa.large_string()),
                       "d": contiguous(docs).cast(pa.large_string())})
             for r, (at, docs, _rows) in zip(results, found, strict=True)]
    table = _distinct_pairs(pa.concat_tables(pairs))
    common = set(results[0].query_ids).intersection(*(r.query_ids for r in results[1:]))
    table = table.filter(pc.is_in(table["q"], value_set=pa.array(sorted(common),
                                                                  pa.large_string())))
    grades = np.full(table.num_rows, fill)
    out = []
    for r, mine, (_at, _docs, rows) in zip(results, pairs, found, strict=True):
        qpos = np.asarray(pc.index_in(table["q"], value_set=_strings(r.query_ids).cast(
            pa.large_string())).to_numpy(zero_copy_only=False), dtype=np.int64)
        out.append(_evaluate_filled(r, qpos, table["d"], grades,
                                    _ranked_rows(mine, rows, table), measures, False))
    return out, fill


def _ranked_rows(mine: Any, rows: IntArray, table: Any) -> IntArray:
    """For each (q, d) pair of ``table`` (unjudged), its ranked row in a result's rankings,
    or -1 where the query's ranking does not hold the document; ``mine``: the result's own
    unjudged (q, d) pairs, ``rows`` their ranked rows (:func:`_unjudged_rows`). Both tables
    hold large strings."""
    import pyarrow as pa

    keys = pair_keys(pa.chunked_array([contiguous(table["q"]), contiguous(mine["q"])]),
                     pa.chunked_array([contiguous(table["d"]), contiguous(mine["d"])]))
    wanted, have = keys[:table.num_rows], keys[table.num_rows:]
    out = np.full(table.num_rows, -1, dtype=np.int64)
    if len(have):
        order = np.argsort(have, kind="stable")
        at_sorted = np.minimum(np.searchsorted(have[order], wanted), len(have) - 1)
        hit = have[order][at_sorted] == wanted
        out[hit] = rows[order[at_sorted[hit]]]
    return out


def _distinct_pairs(table: Any) -> Any:
    """The rows of a (q, d) table without repeats, first occurrence kept, in order (by
    :func:`~ragreport.io.columns.pair_keys`: an Arrow group-by on two string columns is
    about ten times slower).

    >>> import pyarrow as pa
    >>> _distinct_pairs(pa.table({"q": ["a", "a", "b", "a"], "d": ["x", "y", "x", "x"]})
    ...                 ).to_pydict()
    {'q': ['a', 'a', 'b'], 'd': ['x', 'y', 'x']}
    """
    import pyarrow as pa

    if table.num_rows == 0:
        return table
    _, first = np.unique(pair_keys(table["q"], table["d"]), return_index=True)
    return table.take(pa.array(np.sort(first)))


def same_qrels(a: Qrels, b: Qrels) -> bool:
    """The same judgments (the same object, or equal ids and grades)."""
    return a is b or (len(a.grades) == len(b.grades) and np.array_equal(a.grades, b.grades)
                      and contiguous(a.query_ids).equals(contiguous(b.query_ids))
                      and contiguous(a.doc_ids).equals(contiguous(b.doc_ids)))


def _evaluate_filled(judged: EvaluationResult, qpos: IntArray, docs: Any, grades: FloatArray,
                     rows: IntArray, measures: Sequence[Measure] | None,
                     curves: bool) -> EvaluationResult:
    """``judged``'s rankings evaluated under its resolved conventions with judgments added
    (document ``docs[j]`` of the query at position ``qpos[j]``, at ``grades[j]``; ``rows[j]``
    its ranked row or -1): the rankings given new grades where the result allows it
    (:func:`~ragreport.core.engine.rejudged`), else the run aligned again with the qrels."""
    import pyarrow as pa

    from ..core.engine import reevaluate, rejudgeable, rejudged

    if judged.doc_map_info is not None or judged.document is not None:
        raise RagReportError("unjudged bounds are not available with doc_map")
    rk = _ranking(judged)
    if rejudgeable(judged):
        more = rk.with_judgments(qpos, docs, grades, rows, judged.conventions.rel_level)
        return rejudged(judged, more, measures, curves=curves)
    qids = _strings(judged.query_ids).take(pa.array(np.asarray(qpos, dtype=np.int64)))
    filled = reevaluate(judged, filled_qrels(rk.qrels, qids, docs, grades), measures,
                        curves=curves)
    if filled.query_ids != judged.query_ids:  # filling adds judgments to evaluated queries only
        raise RagReportError("the filled reading evaluated other queries than trec_eval's")
    return filled


def _ranking(result: EvaluationResult) -> Any:
    from ..core.ranking import Ranking

    rk = result.ranking
    if not isinstance(rk, Ranking):
        raise RagReportError("unjudged bounds need the rankings in memory "
                             "(a result of ragreport.evaluate)")
    return rk


def unjudged_documents(result: EvaluationResult) -> tuple[IntArray, Any]:
    """(query positions in ``result.query_ids``, document ids as a pyarrow array) of the
    unjudged documents of each evaluated ranking, in ranking order."""
    at, docs, _rows = _unjudged_rows(result)
    return at, docs


def _unjudged_rows(result: EvaluationResult) -> tuple[IntArray, Any, IntArray]:
    """:func:`unjudged_documents` and each one's ranked row (an index of ``ret_grades``)."""
    rk = _ranking(result)
    qi = np.repeat(np.arange(rk.n_queries), rk.n_ret)
    where = np.flatnonzero(np.isnan(rk.ret_grades))
    return qi[where], rk.run.doc_ids.take(rk.run_rows[where]), where


def filled_qrels(qrels: Qrels, query_ids: Any, doc_ids: Any, grade: float | FloatArray
                 ) -> Qrels:
    """``qrels`` with a judgment of ``grade`` (one, or one per pair) added for each (query,
    document) given (pyarrow arrays or sequences of strings)."""
    import pyarrow as pa

    if not len(query_ids):
        return qrels

    def joined(old: Any, new: Any) -> Any:
        new = _strings(new)
        return pa.concat_arrays([contiguous(old), contiguous(new).cast(contiguous(old).type)])

    return Qrels(query_ids=joined(qrels.query_ids, query_ids),
                 doc_ids=joined(qrels.doc_ids, doc_ids), source=qrels.source, lines=None,
                 grades=np.concatenate([qrels.grades, np.broadcast_to(
                     np.asarray(grade, dtype=np.float64), (len(query_ids),))]))


def _strings(values: Any) -> Any:
    """A pyarrow string array of ``values`` (already one: as it is)."""
    import pyarrow as pa

    return values if isinstance(values, (pa.Array, pa.ChunkedArray)) \
        else pa.array(values, pa.string())


def fill_grade(qrels: Qrels, grade: float | None, rel_level: int) -> float:
    if grade is None:
        top = float(qrels.grades.max()) if len(qrels.grades) else 1.0
        return max(top, float(rel_level), 1.0)
    if isinstance(grade, bool) or not isinstance(grade, (int, float)) or grade != grade:
        raise RagReportError(f"grade must be a number, got {grade!r}")
    if grade < rel_level:
        raise RagReportError(f"grade must be at least rel_level ({rel_level}) to read an "
                             f"unjudged document as relevant, got {grade}")
    return float(grade)
