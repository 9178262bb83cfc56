"""One query evaluated alone, for the panel: its curves through K = k_max, exactly the
values of the full evaluation (checked), a few queries at a time."""

from __future__ import annotations

import numpy as np

from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure
from . import limits
from ._data import floats
from .arrays import RunArrays
from .memo import evict

__all__ = ["QueryCurves"]


class QueryCurves:
    """Queries evaluated alone (at most :data:`~.limits.QUERY_RESULTS` kept)."""

    def __init__(self, arrays: RunArrays) -> None:
        self.arrays = arrays
        self.inputs = arrays.inputs
        self.kept: dict[tuple[int, str], EvaluationResult | bool] = {}

    def result(self, run: int, qid: str) -> EvaluationResult | None:
        """The query evaluated alone, with curves through K = k_max (exactly the values of
        the full evaluation: checked on the evaluated curves; None when they differ or the
        evaluation cannot be redone for one query, e.g. with a doc map)."""
        key = (run, qid)
        got = self.kept.get(key)
        if got is None:  # a few at a time: each holds curves through k_max
            got = self.kept[key] = self._evaluate(run, qid) or False
            evict(self.kept, limits.QUERY_RESULTS)
        return got if isinstance(got, EvaluationResult) else None

    def _evaluate(self, run: int, qid: str) -> EvaluationResult | None:
        from ..core.engine import evaluate

        r = self.inputs.results[run]
        c = r.conventions
        if r.doc_map is not None or c.doc_map is not None or c.order != "score" \
                or c.ties != "trec_eval":
            return None
        rk = r.require_ranking()
        i = self.arrays.position(run, qid)
        lo, hi = int(rk.ret_offsets[i]), int(rk.ret_offsets[i + 1])
        docs = rk.run.doc_ids.take(rk.run_rows[lo:hi]).to_pylist()
        jlo, jhi = int(rk.qrels_offsets[i]), int(rk.qrels_offsets[i + 1])
        jdocs = rk.qrels.doc_ids.take(rk.qrels_rows[jlo:jhi]).to_pylist()
        judged = dict(zip(jdocs, rk.qrels_grades[jlo:jhi].tolist(), strict=True))
        if not judged:
            return None
        k_max, families = self.inputs.k_max, self.inputs.families
        fams = [*families, Measure("Judged")]
        try:
            one = evaluate({qid: judged}, {qid: docs}, [f.at(1) for f in fams],
                           k_max=k_max, order="given", rel_level=c.rel_level,
                           fractional_grades=c.fractional_grades, no_relevant="zero",
                           _curve_width=k_max)
        except RagReportError:
            return None
        w = min(r.k_max, k_max)
        for f in families:  # the same values as the full evaluation, or not used
            full, alone = r.curves[f][i, :w], one.curves[f][0, :w]
            if full.shape != alone.shape or not np.array_equal(full, alone):
                return None
        return one

    def values(self, run: int, i: int, qid: str, family: Measure, ks: list[int]
               ) -> list[float | None]:
        """One query's values of ``family`` at ``ks`` (``i``: its index in the run)."""
        one = self.result(run, qid)
        if one is not None and family in one.curves:
            return floats(one.curves[family][0, np.asarray(ks, dtype=np.int64) - 1])
        r = self.inputs.results[run]
        w = min(r.k_max, self.inputs.k_max)  # fall back: the evaluated curve, then K by K
        return floats([float(r.curves[family][i, k - 1]) if k <= w else
                       float(self.arrays.values(run, family, k)[i]) for k in ks])
