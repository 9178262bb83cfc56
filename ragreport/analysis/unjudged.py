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
from ..measures import Measure

__all__ = ["UnjudgedBounds", "bounds_of", "filled_qrels", "unjudged_bounds", "unjudged_documents"]


@dataclass(frozen=True)
class UnjudgedBounds:
    """A run evaluated with its unjudged documents read as not relevant and as relevant.

    Attributes
    ----------
    judged : EvaluationResult
        The unjudged documents read as not relevant (trec_eval's reading).
    filled : EvaluationResult
        The unjudged documents of each evaluated ranking, to its depth, read as relevant at
        :attr:`grade`.
    grade : float
        The grade given to the unjudged documents in :attr:`filled`.
    n_unjudged : numpy.ndarray
        (queries,) unjudged documents in each evaluated ranking (to its depth).
    filled_rows : numpy.ndarray
        (queries,) the row of each of :attr:`judged`'s queries in :attr:`filled`.
    """

    judged: EvaluationResult
    filled: EvaluationResult
    grade: float
    n_unjudged: IntArray
    filled_rows: IntArray

    @property
    def query_ids(self) -> list[str]:
        return self.judged.query_ids

    def values(self, measure: str | Measure) -> tuple[FloatArray, FloatArray]:
        """(lower, upper): (queries,) per-query ends of the interval of ``measure``.

        Each end is the smaller (larger) of the two readings' values, whichever reading gives
        it (for nDCG the filled reading can be the lower one).
        """
        a, b = self.judged.values(measure), self.filled.values(measure)[self.filled_rows]
        return np.minimum(a, b), np.maximum(a, b)

    def curves(self, measure: str | Measure) -> tuple[FloatArray, FloatArray]:
        """(lower, upper): (queries, K) per-query ends for a family at K = 1..k_max."""
        a, b = self.judged.curve(measure), self.filled.curve(measure)[self.filled_rows]
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
    from ..core.engine import evaluate

    if judged.doc_map_info is not None or judged.document is not None:
        raise RagReportError("unjudged bounds are not available with doc_map")
    ranking = _ranking(judged)
    c = judged.conventions
    fill = _fill_grade(ranking.qrels, grade, c.rel_level)
    extra_q, extra_d = unjudged_documents(judged)
    filled = evaluate(filled_qrels(ranking.qrels, extra_q, extra_d, fill), ranking.run,
                      list(judged.measures if measures is None else measures), c.k_max,
                      order=c.order, rel_level=c.rel_level,
                      complete=c.complete, max_depth=c.max_depth, no_relevant=c.no_relevant,
                      duplicates=c.duplicates, name=judged.run_name,
                      fractional_grades=c.fractional_grades, ties=c.ties,
                      ignore_identical_ids=c.ignore_identical_ids,
                      score_precision=c.score_precision,
                      _curve_width=judged.k_max if curves else 1)
    n = np.zeros(len(judged.query_ids), dtype=np.int64)
    index = {q: i for i, q in enumerate(judged.query_ids)}
    for q in extra_q:
        n[index[q]] += 1
    return UnjudgedBounds(judged, filled, fill, n, _rows_of(judged, filled))


def _ranking(result: EvaluationResult) -> Any:
    from ..core.ranking import Ranking

    rk = result.ranking
    if not isinstance(rk, Ranking):
        raise RagReportError("unjudged bounds need the rankings in memory "
                             "(a result of ragreport.evaluate)")
    return rk


def unjudged_documents(result: EvaluationResult) -> tuple[list[str], list[str]]:
    """(query ids, document ids) of the unjudged documents of each evaluated ranking."""
    rk = _ranking(result)
    qi = np.repeat(np.arange(rk.n_queries), rk.n_ret)
    where = np.flatnonzero(np.isnan(rk.ret_grades))
    rows = rk.run_rows[where]
    docs = rk.run.doc_ids.take(rows).to_pylist()
    return [rk.query_ids[i] for i in qi[where]], docs


def filled_qrels(qrels: Qrels, query_ids: list[str], doc_ids: list[str],
                 grade: float) -> Qrels:
    """``qrels`` with a judgment of ``grade`` added for each (query, document) given."""
    import pyarrow as pa

    if not query_ids:
        return qrels
    return Qrels(query_ids=pa.concat_arrays([qrels.query_ids, pa.array(query_ids, pa.string())]),
                 doc_ids=pa.concat_arrays([qrels.doc_ids, pa.array(doc_ids, pa.string())]),
                 source=qrels.source, lines=None,
                 grades=np.concatenate([qrels.grades, np.full(len(query_ids), grade)]))


def _fill_grade(qrels: Qrels, grade: float | None, rel_level: int) -> float:
    if grade is None:
        top = float(qrels.grades.max()) if len(qrels.grades) else 1.0
        return max(top, float(rel_level), 1.0)
    if isinstance(grade, bool) or not isinstance(grade, (int, float)) or grade != grade:
        raise RagReportError(f"grade must be a number, got {grade!r}")
    if grade < rel_level:
        raise RagReportError(f"grade must be at least rel_level ({rel_level}) to read an "
                             f"unjudged document as relevant, got {grade}")
    return float(grade)


def _rows_of(judged: EvaluationResult, filled: EvaluationResult) -> IntArray:
    """The row of each of ``judged``'s queries in ``filled`` (filling adds judgments only,
    so every query evaluated in one reading is evaluated in the other)."""
    if filled.query_ids == judged.query_ids:
        return np.arange(len(judged.query_ids), dtype=np.int64)
    index = {q: i for i, q in enumerate(filled.query_ids)}
    return np.array([index[q] for q in judged.query_ids], dtype=np.int64)
