"""Per-run arrays of the explorer, computed once and cached: values of a family at K,
failure kinds, target values, id orders and look-ups, the search haystack, slice masks and
the mean curve. Nothing here knows the view: every call names the run, measure and K.

>>> from ragreport import evaluate
>>> from ragreport.explorer.inputs import ExplorerInputs
>>> r = evaluate({"a": {"x": 1}, "b": {"y": 1}}, {"a": ["x"], "b": ["x", "y"]}, ["P@1"])
>>> arrays = RunArrays(ExplorerInputs.build(r, targets=[]))
>>> arrays.values(0, list(r.curves)[0], 1)
array([1., 0.])
>>> arrays.position(0, "b"), arrays.position(0, "zzz")
(1, -1)
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ..analysis.curves import mean_curve
from ..analysis.failures import (
    NO_RELEVANT_RANK,
    failure_kinds,
    first_relevant_rank,
    kinds_at,
)
from ..analysis.targets import passes_array, target_values
from ..core.kernel import cutoff_values, kernel_of
from ..errors import RagReportError
from ..measures import Measure
from ..targets import Target
from . import limits
from ._data import BoolArray, FloatArray, IntArray, haystack
from .inputs import ExplorerInputs
from .memo import Memo, evict

__all__ = ["RunArrays"]


class RunArrays:
    """The arrays of every run, computed on first use (see :class:`~.memo.Memo`)."""

    def __init__(self, inputs: ExplorerInputs) -> None:
        self.inputs = inputs
        self.results = inputs.results
        self.memo = Memo()
        self.values_cache: dict[tuple[int, Measure, int], FloatArray] = {}
        self.means: dict[tuple[int, Measure, int], float] = {}
        self.positions: dict[tuple[int, str], int] = {}
        #: Runs whose unjudged readings, left to the background, the list's rows now carry.
        self.tags_sent: set[int] = set()

    def values(self, run: int, family: Measure, k: int) -> FloatArray:
        """(queries,) values of a family at K for a run: a column of the curve up to its
        width, the measure itself beyond it."""
        key = (run, family, k)
        got = self.values_cache.get(key)
        if got is None:
            r = self.results[run]
            got = r.curves[family][:, k - 1] if k <= r.k_max else \
                self.cutoff(run, family.at(k))
            self.values_cache[key] = got
            evict(self.values_cache, limits.CACHE_MAX)
        return got

    def unjudged_later(self, run: int) -> bool:
        """Whether a run's unjudged readings are left to the background (a run over
        :data:`~.limits.UNJUDGED_ROWS` ranked rows: never on the interaction path; the
        background of a large evaluation computes them with the intervals)."""
        r = self.results[run]
        return r.has_rankings and len(r.require_ranking().run_rows) > limits.UNJUDGED_ROWS

    def unjudged_range(self, run: int, family: Measure, k: int, *, now: bool = False
                       ) -> tuple[FloatArray, FloatArray] | None:
        """(lower, upper): each query's value of a family at K with its unjudged documents
        read as not relevant and as relevant (:func:`ragreport.analysis.unjudged.bounds_of`);
        None where that is not computed (no rankings, a doc map, K past the curves, or a run
        left to the background, :meth:`unjudged_later`, until it computed them: ``now``)."""
        from ..analysis.unjudged import bounds_of

        def make() -> Any:
            r = self.results[run]
            if not r.has_rankings or r.doc_map_info is not None or r.document is not None:
                return None
            return bounds_of(r)

        key = ("unjudged", run)
        if not now and not self.memo.has(key) and self.unjudged_later(run):
            return None
        bounds = self.memo.get(key, make)
        if bounds is None or k > bounds.filled.k_max or k > self.results[run].k_max:
            return None
        lo, hi = bounds.curves(family)
        return lo[:, k - 1], hi[:, k - 1]

    def cutoff(self, run: int, m: Measure) -> FloatArray:
        """(queries,) values of ``m`` past the curves (:func:`~.core.kernel.cutoff_values`),
        one pass over the relevant ranks (stored ones too, read from per-query files) per K."""
        from ..core.context import Context

        r = self.results[run]
        level, at = float(r.conventions.rel_level), kernel_of(m).at
        if r.conventions.ties != "trec_eval" or at is None or m.cutoff is None:
            return cutoff_values(r.require_ranking(), m, level, ties=r.conventions.ties)
        ctx = self.memo.get(("engine-context", run),
                            lambda: Context(cast(Any, r.ranking), level))
        try:
            return np.asarray(at(ctx, m, m.cutoff), dtype=np.float64)
        except AttributeError:  # gains or grades, which per-query files do not hold
            raise RagReportError(f"per-query results hold no rankings ({m} needs the grades "
                                 "of the documents); use the qrels and run files") from None

    def kinds_parts(self, run: int) -> tuple[npt.NDArray[np.int8], IntArray]:
        """The run's failure kinds at the deepest K and first relevant ranks (once)."""
        r = self.results[run]
        deepest: npt.NDArray[np.int8] = self.memo.get(
            ("kinds-deepest", run), lambda: failure_kinds(r, NO_RELEVANT_RANK - 1))
        first: IntArray = self.memo.get(("first-rel", run), lambda: first_relevant_rank(r))
        return deepest, first

    def kinds(self, run: int, k: int) -> npt.NDArray[np.int8]:
        """Failure-kind code of every query of a run at K (see ``FAILURE_KINDS``)."""
        def make() -> npt.NDArray[np.int8]:
            # failure_kinds at the deepest K and first_relevant_rank are K-independent
            # (computed once); at K, "relevant only beyond K" is the first relevant rank
            # past K (as failure_kinds decides: equal to failure_kinds(result, K))
            r = self.results[run]
            if not self.memo.has(("kinds-deepest", run)) \
                    and r.n_queries > limits.INLINE_STATS_QUERIES:
                # a large evaluation's first K: one pass (warm() prepares the others)
                return failure_kinds(r, k)
            deepest, first = self.kinds_parts(run)
            return kinds_at(deepest, first, k)

        got: npt.NDArray[np.int8] = self.memo.get(("kinds", run, k), make)
        return got

    def target_values(self, t: Target, run: int) -> FloatArray | None:
        """(queries,) values of a target's measure as configured (its own K), or None when
        the result lacks the measure."""
        def make() -> Any:
            got = target_values(self.results[run], t)
            return False if got is None else got

        got = self.memo.get(("target", run, t), make)
        return None if got is False else np.asarray(got)

    def fails(self, run: int) -> BoolArray:
        """(queries,) True where the query fails at least one configured target."""
        def make() -> BoolArray:
            out = np.zeros(self.results[run].n_queries, dtype=bool)
            for t in self.inputs.targets:
                v = self.target_values(t, run)
                if v is not None:
                    out |= ~passes_array(v, t.op, t.threshold)
            return out

        got: BoolArray = self.memo.get(("fails", run), make)
        return got

    def id_order(self, run: int) -> IntArray:
        """Query indices by query id (a result holds its queries sorted by id already)."""
        def make() -> IntArray:
            if self.ids_sorted(run):
                return np.arange(self.results[run].n_queries, dtype=np.int64)
            return np.argsort(self.ids_array(run), kind="stable").astype(np.int64)

        got: IntArray = self.memo.get(("idorder", run), make)
        return got

    def b_index(self, a: int, b: int) -> IntArray:
        """For each query of run ``a``, its position in run ``b`` (-1 when not there)."""
        got: IntArray = self.memo.get(("bindex", a, b), lambda: self._b_index(a, b))
        return got

    def _b_index(self, a: int, b: int) -> IntArray:
        if self.results[a].query_ids == self.results[b].query_ids:
            return np.arange(self.results[a].n_queries, dtype=np.int64)
        ids_a, ids_b = self.ids_array(a), self.ids_array(b)
        if self.ids_sorted(b) and len(ids_b):
            j = np.minimum(np.searchsorted(ids_b, ids_a), len(ids_b) - 1)
            return np.where(ids_b[j] == ids_a, j, -1).astype(np.int64)
        import pyarrow.compute as pc

        found = pc.index_in(self.ids(a), value_set=self.ids(b))
        return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)

    def ids(self, run: int) -> Any:
        """The run's query ids as a pyarrow array (look-ups when they are not sorted)."""
        import pyarrow as pa

        return self.memo.get(("ids", run), lambda: pa.array(self.results[run].query_ids,
                                                            pa.string()))

    def ids_array(self, run: int) -> npt.NDArray[np.object_]:
        """The run's query ids as a numpy array of str objects (no copy of the text)."""
        got: npt.NDArray[np.object_] = self.memo.get(
            ("ids-array", run), lambda: np.array(self.results[run].query_ids, dtype=object))
        return got

    def ids_sorted(self, run: int) -> bool:
        """Are the run's query ids in sorted order (as evaluate leaves them)?"""
        def make() -> bool:
            ids = self.ids_array(run)
            return len(ids) < 2 or bool((ids[:-1] <= ids[1:]).all())

        got: bool = self.memo.get(("ids-sorted", run), make)
        return got

    def position(self, run: int, qid: str) -> int:
        """Index of a query id among a run's queries; -1 when the run did not evaluate it.

        Found with a vectorised search (no per-query dict is built for 100,000 queries)."""
        import pyarrow.compute as pc

        if not isinstance(qid, str) or not qid:
            return -1
        key = (run, qid)
        got = self.positions.get(key)
        if got is None:
            if self.ids_sorted(run):  # a binary search
                ids = self.ids_array(run)
                j = int(np.searchsorted(ids, qid))
                got = j if j < len(ids) and ids[j] == qid else -1
            else:
                found = pc.index(self.ids(run), qid).as_py()
                got = -1 if found is None else int(found)
            self.positions[key] = got
            evict(self.positions, 16 * limits.CACHE_MAX)
        return got

    def paired_values(self, a: int, b: int, family: Measure, k: int
                      ) -> tuple[FloatArray, FloatArray]:
        """Values of ``family`` at K in runs ``a`` and ``b`` on their common queries."""
        idx = self.b_index(a, b)
        if self.memo.get(("bindex-identity", a, b),
                         lambda: bool(np.array_equal(idx, np.arange(len(idx))))):
            return self.values(a, family, k), self.values(b, family, k)
        common = idx >= 0
        return self.values(a, family, k)[common], self.values(b, family, k)[idx[common]]

    def hay(self, run: int) -> Any:
        """The run's search haystack (:func:`~._data.haystack`)."""
        return self.memo.get(("hay", run), lambda: haystack(self.results[run].query_ids,
                                                            self.inputs.queries))

    def slice_mask(self, run: int, name: str) -> BoolArray:
        """(queries,) of a run: is the query in the slice ``name``?"""
        ids = self.results[run].query_ids
        slices = self.inputs.slices

        def make() -> BoolArray:
            members = set(slices.queries(name)) if slices is not None else set()
            return np.fromiter((q in members for q in ids), dtype=bool, count=len(ids))

        got: BoolArray = self.memo.get(("slice", run, name), make)
        return got

    def judged_at(self, run: int, k: int) -> FloatArray:
        """(queries,) Judged@K of a run."""
        def make() -> FloatArray:
            r = self.results[run]
            m = Measure("Judged", int(k))
            if m.curve_key in r.curves and k <= r.k_max:
                return np.asarray(r.values(m), dtype=np.float64)
            return self.cutoff(run, m)

        got: FloatArray = self.memo.get(("judged", run, k), make)
        return got

    def mean_curve(self, run: int, family: Measure, ks: list[int]) -> list[float]:
        """The run's mean curve of ``family`` at ``ks``: the evaluated mean curve, then the
        Ks computed so far (NaN elsewhere; see :meth:`mean_at`)."""
        r = self.results[run]
        mean = self.memo.get(("mean", run, family), lambda: mean_curve(r, family))
        out: list[float] = []
        for k in ks:
            if k <= len(mean):
                out.append(float(mean[k - 1]))
                continue
            m = self.means.get((run, family, k))
            if m is None:
                v = self.values_cache.get((run, family, k))
                m = float(v.mean()) if v is not None and len(v) else np.nan
            out.append(m)
        return out

    def mean_at(self, run: int, family: Measure, k: int) -> None:
        """Compute the run's mean of ``family`` at ``k`` past its curves (a pass)."""
        if (run, family, k) not in self.means:
            v = self.values_cache.get((run, family, k))
            if v is None:
                v = self.cutoff(run, family.at(k))
            self.means[(run, family, k)] = float(v.mean()) if len(v) else np.nan
