"""The explorer's state and analysis, without any widget or HTML.

:class:`ExplorerState` holds what the person chose (measure family, K, filter, category, sort,
selected query, runs A and B) and produces the small, JSON-able dicts the front end draws
(``meta``, ``head``, ``summary``, ``ranking``, ``panel``, ``compare``; windows of rows on
request). Numbers come from :mod:`ragreport.analysis` over the results; per-(run, measure, K)
arrays are computed once and cached, so changing the measure, K or a filter re-indexes and
re-sorts numpy arrays (no Python loop over the queries). Text is cut with
:mod:`ragreport.present`; nothing here builds HTML.

>>> from ragreport import evaluate
>>> r = evaluate({"a": {"x": 1}, "b": {"y": 1}}, {"a": ["x"], "b": ["x", "y"]}, ["P@1"])
>>> s = ExplorerState(r, targets=[], measure="P", k=1)
>>> s.query_order(), s.selected, s.meta()["k_max"]
(['b', 'a'], 'b', 2)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from .._version import __version__
from ..analysis.compare import paired
from ..analysis.curves import mean_curve, run_intervals
from ..analysis.failures import (
    FAILURE_KINDS,
    NO_JUDGED_RELEVANT,
    NO_RELEVANT_RANK,
    failure_kinds,
    first_relevant_rank,
    kinds_at,
    worst_order,
)
from ..analysis.targets import passes_array, run_checks, target_values
from ..core.kernel import cutoff_values, kernel_of
from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..io.slices import QuerySlices
from ..io.targets import load_targets
from ..measures import Measure, parse_measure
from ..parallel import Mapper, map_with
from ..present import measure_label, measure_title, shown, snippet, target_rule
from ..settings import StatsSettings
from ..stats import bootstrap_ci
from ..targets import Target, default_targets, parse_targets, passes
from ._data import contains, floats, haystack, number

__all__ = ["CATEGORIES", "HEAD_ROWS", "ROWS_MAX", "SORTS", "ExplorerState"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: Sort orders of the query list: id -> label (the delta sorts need a run B).
SORTS: dict[str, str] = {
    "worst": "worst first",
    "best": "best first",
    "id": "query id",
    "delta_desc": "Δ B − A, gains first",
    "delta_asc": "Δ B − A, losses first",
}

#: Categories of the list's filter: id -> failure-kind code (see ``FAILURE_KINDS``).
#: "no_judged" (no judged relevant document) is not a retrieval failure: it is never in
#: the worst-first order's failures, and shown last in the value sorts.
CATEGORIES: dict[str, int] = {
    "beyond_k": 4,
    "not_retrieved": 3,
    "empty": 2,
    "ok": 0,
    "no_judged": 1,
}
_CATEGORY_LABELS = {0: "relevant document in the top K"}
BEYOND_K = CATEGORIES["beyond_k"]

#: Characters of the filter text kept.
FILTER_MAX = 1000
#: Rows of the visible order sent in the ``head`` trait, and at most per ``rows`` reply.
HEAD_ROWS = 200
ROWS_MAX = 500
#: The view caches the list in aligned windows of this many rows (``WINDOW`` in
#: ``static/explorer.js``; two windows fit in a ``rows`` reply).
ROWS_WINDOW = 250
#: Rows around a position that the view may draw there: the rows on screen and the view's
#: overscan (``head`` sends the windows holding them, see :meth:`ExplorerState.head`).
NEAR_ROWS = 60
#: Characters of a query text in the list, and of a passage in the ranking.
LIST_TEXT_CHARS = 120
PASSAGE_CHARS = 300
#: The ranking sent for a query stops here (the rest is counted in ``truncated``).
RANKING_MAX = 10_000
#: Up to this many queries the intervals and tests are computed on every change; above, the
#: widget computes them in the background (:meth:`ExplorerState.compute_stats`): the report's
#: 10,000 resamples take about 0.2 s a run at 500 queries.
INLINE_STATS_QUERIES = 500
#: Points of the curves (1..k_max when it is at most this), and points of the mean curve
#: past the evaluated width (each a pass over the rankings; computed with the intervals).
CURVE_POINTS = 1000
MEAN_POINTS = 12
#: ... or at every K of the curve when there are at most MEAN_ALL_POINTS of them past the
#: width and queries x those Ks stays below MEAN_ALL_CELLS.
MEAN_ALL_POINTS = 200
MEAN_ALL_CELLS = 2_000_000
_CACHE_MAX = 64
#: Queries evaluated alone (for the panel) kept at a time.
QUERY_RESULTS = 8

_FAMILY_ORDER = ("nDCG", "R", "P", "F1", "HitRate", "RR", "AP")
#: The curve the explorer opens on when no target names one (if the runs have it).
_OPENING_FAMILY = Measure("nDCG")


#: Cached arrays that do not depend on the view (kept; see ``ExplorerState._memo``).
_FIXED = frozenset({"engine-context", "first-rel", "kinds-deepest", "target", "target-mean",
                    "target-lower", "fails", "idorder", "bindex", "bindex-identity", "ids",
                    "hay", "curveband", "mean", "ids-array", "ids-sorted"})


def _evict(store: dict[Any, Any], bound: int) -> None:
    """Drop the oldest entries of ``store`` past ``bound`` (another thread may be adding)."""
    while len(store) > bound:
        try:
            del store[next(iter(store))]
        except (KeyError, RuntimeError, StopIteration):  # changed meanwhile: try again
            continue


def _paired_view(task: tuple[FloatArray, FloatArray, StatsSettings]) -> dict[str, Any]:
    """The paired comparison of B against A as the view shows it, with ``resamples``
    randomizations (a picklable task: it runs in the widget's worker process)."""
    va, vb, settings = task
    c = paired(va, vb, resamples=settings.resamples, seed=settings.seed, level=settings.level)
    lo, hi, p_t, p_rand = floats([c.lo, c.hi, c.p_t, c.p_rand])
    return {"lo": lo, "hi": hi, "p_t": p_t, "p_rand": p_rand, "wins": c.wins,
            "losses": c.losses, "ties": c.ties, "significant": c.significant(settings.alpha)}


def _coerce_targets(targets: Any) -> list[Target]:
    if targets is None:
        return default_targets()
    if isinstance(targets, (str, os.PathLike)):
        return load_targets(targets)
    if isinstance(targets, Mapping):
        return parse_targets(targets, "targets")
    if isinstance(targets, (bytes, Target)) or not isinstance(targets, Sequence):
        raise RagReportError(f"targets must be a list of Target objects, a mapping or a path; "
                             f"got {type(targets).__name__}")
    out = list(targets)
    for t in out:
        if not isinstance(t, Target):
            raise RagReportError(f"targets must be Target objects, a mapping or a path; got "
                                 f"{type(t).__name__}")
    return out


def _coerce_texts(texts: Any, what: str) -> dict[str, str]:
    from ..io import load_texts

    if texts is None:
        return {}
    if isinstance(texts, dict) and set(map(type, texts)) <= {str} \
            and set(map(type, texts.values())) <= {str}:
        return texts  # already id -> text (read, not changed)
    return load_texts(texts, what=what)


def _target_label(t: Target) -> str:
    return f"{t.measure} {target_rule(t.op, t.threshold)}"


class ExplorerState:
    """Plain, testable state of the explorer (no widget, no HTML).

    Parameters
    ----------
    results : EvaluationResult or list of EvaluationResult
        One run, or several (distinct run names) to compare as run A and run B.
    targets : list of Target, mapping, path or None
        Targets checked per query (default: the seed tutorial's typical targets).
    queries, docs : dict or path, optional
        Query and document texts (see :func:`ragreport.load_texts`).
    measure : str, optional
        Initial measure family (default: the first target's, else nDCG); ``"nDCG@10"`` sets K.
    k : int, optional
        Initial K (default: the first target's cutoff, else 10; 1 to :attr:`k_max`, the
        deepest ranking).
    slices : mapping, path or QuerySlices, optional
        Query id -> slice names (:func:`ragreport.io.slices.load_slices`): the list can show
        one slice (:meth:`set_slice`), and the report button's report has the slices.
    settings : StatsSettings, optional
        Level, resamples, seed and alpha of the intervals and the paired test
        (:class:`ragreport.settings.StatsSettings`; default: the report's defaults), so a
        comparison shows the interval and p-value the report built with them shows.
    """

    def __init__(self, results: EvaluationResult | Sequence[EvaluationResult],
                 targets: Any = None, queries: Any = None, docs: Any = None, *,
                 measure: str | None = None, k: int | None = None,
                 slices: Any = None, settings: StatsSettings | None = None) -> None:
        if isinstance(results, EvaluationResult):
            runs = [results]
        elif isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
            raise RagReportError(f"the explorer needs EvaluationResult objects, got "
                                 f"{type(results).__name__}")
        else:
            runs = list(results)
        if not runs:
            raise RagReportError("the explorer needs at least one evaluation result")
        for r in runs:
            if not isinstance(r, EvaluationResult):
                raise RagReportError(f"expected EvaluationResult objects, got {type(r).__name__}")
        names = [r.run_name for r in runs]
        if len(set(names)) != len(names):
            raise RagReportError(f"run names must be distinct, got {names}; evaluate with name=")
        self.results: list[EvaluationResult] = runs
        self.run_names: list[str] = names
        #: Level, resamples, seed and alpha of every interval and test: the report's
        #: (:class:`ragreport.settings.StatsSettings`), whatever the number of queries.
        if settings is not None and not isinstance(settings, StatsSettings):
            raise RagReportError(f"settings must be a StatsSettings, got "
                                 f"{type(settings).__name__}")
        self.settings: StatsSettings = settings if settings is not None else StatsSettings()
        self.targets: list[Target] = _coerce_targets(targets)
        self.queries: dict[str, str] = {}
        for r in runs:
            self.queries.update(r.query_texts)
        self.queries.update(_coerce_texts(queries, "queries"))
        self.docs: dict[str, str] = _coerce_texts(docs, "docs")
        self.slices: QuerySlices | None = None
        if slices is not None:
            from ..io.slices import load_slices

            self.slices = load_slices(slices)  # errors name the file and the line
        #: K goes up to the deepest ranking of the runs (at least 1).
        self.k_max: int = max(max(r.ranking.depth for r in runs), 1)

        keys = [f for f in runs[0].curves if all(f in r.curves for r in runs)
                and not f.family.health]
        fams = [f for name in _FAMILY_ORDER for f in keys if f.name == name]
        fams += [f for f in keys if f not in fams]
        if not fams:
            raise RagReportError("the results hold no metric-vs-K curve")
        self.families: list[Measure] = fams

        #: Where the bootstrap resamples and the paired tests run (None: here). The widget
        #: gives a worker process, so that the kernel stays free for the interactions.
        self.workers: Mapper | None = None
        self._cache: dict[tuple[Any, ...], Any] = {}
        self._texts: dict[str, str] = {}
        self._fixed: dict[tuple[Any, ...], Any] = {}
        self._values: dict[tuple[int, Measure, int], FloatArray] = {}
        self._means: dict[tuple[int, Measure, int], float] = {}
        self._positions: dict[tuple[int, str], int] = {}
        self._queries: dict[tuple[int, str], EvaluationResult | bool] = {}
        self._order_key: tuple[Any, ...] | None = None
        self._order: IntArray = np.zeros(0, dtype=np.int64)
        self._filter_hits: tuple[tuple[int, str], BoolArray] | None = None
        self.order_version = 0

        self.a = 0
        self.b = 1 if len(runs) > 1 else -1
        first = next((t.measure for t in self.targets if t.measure.has_curve
                      and t.measure.curve_key in fams), None)
        self.family: Measure = first.curve_key if first is not None else next(
            (f for f in fams if f == _OPENING_FAMILY), fams[0])
        cut = first.cutoff if first is not None and first.cutoff else 10
        self.k = max(1, min(self.k_max, cut))
        self.sort = "worst"
        self.filter_text = ""
        self.category = ""
        self.slice = ""
        self.fails_only = False
        self.selected = ""
        self.stats_inline = all(r.n_queries <= INLINE_STATS_QUERIES for r in runs)
        if measure is not None:
            self.set_measure(measure)
        if k is not None:
            self.set_k(k)
        order = self.order()
        self.selected = self.results[self.a].query_ids[int(order[0])] if len(order) else ""

    # ---- arrays (cached) -----------------------------------------------------------------
    def _memo(self, key: tuple[Any, ...], make: Any) -> Any:
        """``make()``, computed once per key. Arrays that do not depend on the view (ids,
        failure kinds at the deepest K, target values, the engine's context...) are kept;
        the others (per K, per query, per view) are dropped oldest first past a bound."""
        store = self._fixed if key[0] in _FIXED else self._cache
        got = store.get(key)
        if got is None:
            got = make()
            store[key] = got
            if store is self._cache:
                _evict(self._cache, 4 * _CACHE_MAX)
        return got

    def _has(self, key: tuple[Any, ...]) -> bool:
        return key in (self._fixed if key[0] in _FIXED else self._cache)

    @property
    def result_a(self) -> EvaluationResult:
        return self.results[self.a]

    @property
    def result_b(self) -> EvaluationResult | None:
        return None if self.b < 0 else self.results[self.b]

    @property
    def measure(self) -> Measure:
        """The chosen family at the chosen K (``nDCG@10``)."""
        return self.family.at(self.k)

    def values(self, run: int | None = None, family: Measure | None = None,
               k: int | None = None) -> FloatArray:
        """(queries,) values of a family at K for a run (default: run A, the chosen measure
        and K): a column of the curve up to its width, the measure itself beyond it."""
        i = self.a if run is None else run
        fam = self.family if family is None else family
        kk = self.k if k is None else k
        key = (i, fam, kk)
        got = self._values.get(key)
        if got is None:
            r = self.results[i]
            got = r.curves[fam][:, kk - 1] if kk <= r.k_max else self._cutoff(i, fam.at(kk))
            self._values[key] = got
            _evict(self._values, _CACHE_MAX)
        return got

    def _cutoff(self, run: int, m: Measure) -> FloatArray:
        """(queries,) values of ``m`` past the curves (:func:`~.core.kernel.cutoff_values`),
        one pass over the relevant ranks (stored ones too, read from per-query files) per K."""
        from ..core.context import Context

        r = self.results[run]
        level, at = float(r.conventions.rel_level), kernel_of(m).at
        if r.conventions.ties != "trec_eval" or at is None or m.cutoff is None:
            return cutoff_values(r.require_ranking(), m, level, ties=r.conventions.ties)
        ctx = self._memo(("engine-context", run), lambda: Context(cast(Any, r.ranking), level))
        try:
            return np.asarray(at(ctx, m, m.cutoff), dtype=np.float64)
        except AttributeError:  # gains or grades, which per-query files do not hold
            raise RagReportError(f"per-query results hold no rankings ({m} needs the grades "
                                 "of the documents); use the qrels and run files") from None

    def _kinds_parts(self, i: int) -> tuple[npt.NDArray[np.int8], IntArray]:
        """Run ``i``'s failure kinds at the deepest K and first relevant ranks (once)."""
        r = self.results[i]
        deepest: npt.NDArray[np.int8] = self._memo(
            ("kinds-deepest", i), lambda: failure_kinds(r, NO_RELEVANT_RANK - 1))
        first: IntArray = self._memo(("first-rel", i), lambda: first_relevant_rank(r))
        return deepest, first

    def kinds(self, run: int | None = None, k: int | None = None) -> npt.NDArray[np.int8]:
        """Failure-kind code of every query of a run at K (see ``FAILURE_KINDS``)."""
        i = self.a if run is None else run
        kk = self.k if k is None else k

        def make() -> npt.NDArray[np.int8]:
            # failure_kinds at the deepest K and first_relevant_rank are K-independent
            # (computed once); at K, "relevant only beyond K" is the first relevant rank
            # past K (as failure_kinds decides: equal to failure_kinds(result, K))
            r = self.results[i]
            if not self._has(("kinds-deepest", i)) and r.n_queries > INLINE_STATS_QUERIES:
                # a large evaluation's first K: one pass (warm() prepares the others)
                return failure_kinds(r, kk)
            deepest, first = self._kinds_parts(i)
            return kinds_at(deepest, first, kk)

        got: npt.NDArray[np.int8] = self._memo(("kinds", i, kk), make)
        return got

    def target_values(self, t: Target, run: int | None = None) -> FloatArray | None:
        """(queries,) values of a target's measure as configured (its own K), or None when
        the result lacks the measure."""
        i = self.a if run is None else run

        def make() -> Any:
            got = target_values(self.results[i], t)
            return False if got is None else got

        got = self._memo(("target", i, t), make)
        return None if got is False else np.asarray(got)

    def fails(self, run: int | None = None) -> BoolArray:
        """(queries,) True where the query fails at least one configured target."""
        i = self.a if run is None else run

        def make() -> BoolArray:
            out = np.zeros(self.results[i].n_queries, dtype=bool)
            for t in self.targets:
                v = self.target_values(t, i)
                if v is not None:
                    out |= ~passes_array(v, t.op, t.threshold)
            return out

        got: BoolArray = self._memo(("fails", i), make)
        return got

    def _id_order(self, run: int) -> IntArray:
        """Query indices by query id (a result holds its queries sorted by id already)."""
        def make() -> IntArray:
            if self._ids_sorted(run):
                return np.arange(self.results[run].n_queries, dtype=np.int64)
            return np.argsort(self._ids_array(run), kind="stable").astype(np.int64)

        got: IntArray = self._memo(("idorder", run), make)
        return got

    def b_index(self) -> IntArray:
        """For each query of run A, its position in run B (-1 when B did not evaluate it)."""
        if self.b < 0:
            raise RagReportError("comparing needs two runs")
        a, b = self.a, self.b
        got: IntArray = self._memo(("bindex", a, b), lambda: self._b_index(a, b))
        return got

    def _b_index(self, a: int, b: int) -> IntArray:
        if self.results[a].query_ids == self.results[b].query_ids:
            return np.arange(self.results[a].n_queries, dtype=np.int64)
        ids_a, ids_b = self._ids_array(a), self._ids_array(b)
        if self._ids_sorted(b) and len(ids_b):
            j = np.minimum(np.searchsorted(ids_b, ids_a), len(ids_b) - 1)
            return np.where(ids_b[j] == ids_a, j, -1).astype(np.int64)
        import pyarrow.compute as pc

        found = pc.index_in(self._ids(a), value_set=self._ids(b))
        return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)

    def _ids(self, run: int) -> Any:
        """The run's query ids as a pyarrow array (look-ups when they are not sorted)."""
        import pyarrow as pa

        return self._memo(("ids", run), lambda: pa.array(self.results[run].query_ids,
                                                         pa.string()))

    def _ids_array(self, run: int) -> npt.NDArray[np.object_]:
        """The run's query ids as a numpy array of str objects (no copy of the text)."""
        got: npt.NDArray[np.object_] = self._memo(
            ("ids-array", run), lambda: np.array(self.results[run].query_ids, dtype=object))
        return got

    def _ids_sorted(self, run: int) -> bool:
        """Are the run's query ids in sorted order (as evaluate leaves them)?"""
        def make() -> bool:
            ids = self._ids_array(run)
            return len(ids) < 2 or bool((ids[:-1] <= ids[1:]).all())

        got: bool = self._memo(("ids-sorted", run), make)
        return got

    def position(self, run: int, qid: str) -> int:
        """Index of a query id among a run's queries; -1 when the run did not evaluate it.

        Found with a vectorised search (no per-query dict is built for 100,000 queries)."""
        import pyarrow.compute as pc

        if not isinstance(qid, str) or not qid:
            return -1
        key = (run, qid)
        got = self._positions.get(key)
        if got is None:
            if self._ids_sorted(run):  # a binary search
                ids = self._ids_array(run)
                j = int(np.searchsorted(ids, qid))
                got = j if j < len(ids) and ids[j] == qid else -1
            else:
                found = pc.index(self._ids(run), qid).as_py()
                got = -1 if found is None else int(found)
            self._positions[key] = got
            _evict(self._positions, 16 * _CACHE_MAX)
        return got

    def deltas(self) -> FloatArray:
        """(queries of A,) value of B minus value of A at K (NaN where B lacks the query)."""
        idx = self.b_index()
        vb = self.values(self.b)
        va = self.values()
        return np.where(idx >= 0, vb[np.maximum(idx, 0)] if len(vb) else np.nan, np.nan) - va

    def _hay(self, run: int) -> Any:
        return self._memo(("hay", run), lambda: haystack(self.results[run].query_ids,
                                                          self.queries))

    def _filter_mask(self) -> BoolArray:
        text = self._needle()
        prev = self._filter_hits
        hay = self._hay(self.a)
        if prev is not None and prev[0][0] == self.a and prev[0][1] and prev[0][1] in text:
            base = prev[1]  # typing on: search only among the previous matches
            idx = np.flatnonzero(base)
            mask = np.zeros(len(base), dtype=bool)
            mask[idx[contains(hay[idx], text)]] = True
        else:
            mask = contains(hay, text)
        self._filter_hits = ((self.a, text), mask)
        return mask

    # ---- the visible order ---------------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        return (self.a, self.b, self.family, self.k, self._needle(), self.category,
                self.slice, self.fails_only, self.sort)

    def order(self) -> IntArray:
        """Indices (into run A's queries) of the visible list, in order."""
        key = self._key()
        if key == self._order_key:
            return self._order
        base_key = (self.a, self.b, self.family, self.k, self.sort)
        mask: BoolArray | None = None
        if self._needle():
            mask = self._filter_mask()
        if self.category:
            cat = self.kinds() == CATEGORIES[self.category]
            mask = cat if mask is None else mask & cat
        if self.slice:
            sl = self.slice_mask()
            mask = sl if mask is None else mask & sl
        if self.fails_only:
            f = self.fails()
            mask = f if mask is None else mask & f
        if mask is None:
            self._order = self._sorted(base_key)
        elif self._has(("sorted", *base_key)) or 4 * int(mask.sum()) > len(mask):
            full = self._sorted(base_key)
            self._order = full[mask[full]]
        else:  # a narrow filter: sort only the queries it keeps
            self._order = self._sort(np.flatnonzero(mask))
        self._order_key = key
        self.order_version += 1
        return self._order

    def _sorted(self, base_key: tuple[Any, ...]) -> IntArray:
        got: IntArray = self._memo(("sorted", *base_key), lambda: self._sort(None))
        return got

    def _sort(self, keep: IntArray | None) -> IntArray:
        """The queries ``keep`` (increasing indices; all when None) in the chosen order."""
        by_id = self._id_order(self.a)
        if keep is not None and not np.array_equal(by_id, np.arange(len(by_id))):
            keep = None  # query ids not in index order (never from evaluate): sort them all
        if self.sort == "id":
            return by_id if keep is None else keep
        kinds = self.kinds()
        v = self.values() if self.sort in ("worst", "best") else self.deltas()
        if self.sort in ("best", "delta_desc"):
            v = -v
        # worst_order: ascending value, ties in query-id (index) order, NaN last; queries
        # without a judged relevant document are not in it: they follow, by id
        if keep is None:
            head = worst_order(v, kinds)
            rest = by_id[kinds[by_id] == NO_JUDGED_RELEVANT]
        else:
            head = keep[worst_order(v[keep], kinds[keep])]
            rest = keep[kinds[keep] == NO_JUDGED_RELEVANT]
        return np.concatenate([head, rest]).astype(np.int64)

    def query_order(self, limit: int | None = None) -> list[str]:
        """The visible query ids, in list order (all of them by default)."""
        order = self.order()
        if limit is not None:
            order = order[:limit]
        ids = self.result_a.query_ids
        return [ids[i] for i in order.tolist()]

    @property
    def n_visible(self) -> int:
        return len(self.order())

    @property
    def selected_pos(self) -> int:
        """Position of the selected query in the visible list; -1 when hidden or none."""
        if not self.selected:
            return -1
        i = self.position(self.a, self.selected)
        if i < 0:
            return -1
        hits = np.flatnonzero(self.order() == i)
        return int(hits[0]) if len(hits) else -1

    # ---- the plain methods ---------------------------------------------------------------
    def set_measure(self, family: str | Measure) -> None:
        """Choose the measure family (``"nDCG"``; ``"nDCG@10"`` sets K too)."""
        if isinstance(family, Measure):
            m = family
        elif isinstance(family, str) and family.strip():
            try:
                m = parse_measure(family) if "@" in family else \
                    self.result_a._family(family)
            except RagReportError as exc:
                raise RagReportError(f"unknown measure {family!r}: {exc}") from None
        else:
            raise RagReportError(f"measure must be a family name such as 'nDCG', got "
                                 f"{family!r}")
        key = m.curve_key if m.has_curve else m
        if key not in self.families:
            raise RagReportError(f"no curve for {m}; choose one of "
                                 f"{', '.join(map(str, self.families))}")
        if m.cutoff is not None:
            self.set_k(m.cutoff)
        self.family = key

    def set_k(self, k: int) -> None:
        """Choose the cutoff K (1..k_max)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) \
                or not 1 <= int(k) <= self.k_max:
            raise RagReportError(f"K must be an integer from 1 to {self.k_max}, got {k!r}")
        self.k = int(k)

    def select_query(self, qid: str) -> None:
        """Select a query of run A (visible or not); ``""`` clears the selection."""
        if not isinstance(qid, str):
            raise RagReportError(f"query id must be text, got {type(qid).__name__}")
        if qid and self.position(self.a, qid) < 0:
            raise RagReportError(f"query {qid!r} was not evaluated in run "
                                 f"{self.result_a.run_name!r}")
        self.selected = qid

    def _step(self, step: int) -> str:
        order = self.order()
        if len(order) == 0:
            raise RagReportError("no query matches: nothing to select")
        cur = self.selected_pos
        if cur < 0:
            nxt = 0
        else:
            nxt = cur + step
            if not 0 <= nxt < len(order):
                raise RagReportError("already at the " + ("last" if step > 0 else "first")
                                     + " query of the list")
        self.selected = self.result_a.query_ids[int(order[nxt])]
        return self.selected

    def next_query(self) -> str:
        """Select the next query of the visible list; returns its id."""
        return self._step(1)

    def prev_query(self) -> str:
        """Select the previous query of the visible list; returns its id."""
        return self._step(-1)

    def set_filter(self, text: str) -> None:
        """Show only queries whose id or text contains ``text`` (case-insensitive)."""
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise RagReportError(f"filter must be text, got {type(text).__name__}")
        self.filter_text = text[:FILTER_MAX]  # as typed (the box keeps its spaces)

    def _needle(self) -> str:
        """What the filter searches: the text without surrounding spaces, lower-cased."""
        return self.filter_text.strip().lower()

    def set_category(self, category: str | int | None) -> None:
        """Show only one category (an id of :data:`CATEGORIES`, a failure-kind code or
        label); ``""`` or None for all."""
        if category is None or category == "":
            self.category = ""
            return
        if isinstance(category, str):
            if category in CATEGORIES:
                self.category = category
                return
            by_label = [c for c, code in CATEGORIES.items() if self._category_label(code)
                        == category]
            if by_label:
                self.category = by_label[0]
                return
        elif isinstance(category, (int, np.integer)) and not isinstance(category, bool):
            by_code = [c for c, code in CATEGORIES.items() if code == int(category)]
            if by_code:
                self.category = by_code[0]
                return
        raise RagReportError(f"category must be one of {', '.join(CATEGORIES)} (or empty), "
                             f"got {category!r}")

    set_kind = set_category

    def set_slice(self, name: str | None) -> None:
        """Show only the queries of one slice (a name of ``meta()["slices"]``); ``""`` or
        None for all."""
        if name is None or name == "":
            self.slice = ""
            return
        names = self.slices.names if self.slices is not None else ()
        if not isinstance(name, str) or name not in names:
            shown_names = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5
                                                                   else "")
            raise RagReportError(f"slice must be one of {shown_names} (or empty), got {name!r}"
                                 if names else "no slices were given (slices=)")
        self.slice = name

    def slice_mask(self, run: int | None = None) -> BoolArray:
        """(queries,) of a run (default A): is the query in the chosen slice?"""
        i = self.a if run is None else run
        name = self.slice
        ids = self.results[i].query_ids

        def make() -> BoolArray:
            members = set(self.slices.queries(name)) if self.slices is not None else set()
            return np.fromiter((q in members for q in ids), dtype=bool, count=len(ids))

        got: BoolArray = self._memo(("slice", i, name), make)
        return got

    @staticmethod
    def _category_label(code: int) -> str:
        return _CATEGORY_LABELS.get(code, FAILURE_KINDS[code])

    def set_fails_target(self, on: bool) -> None:
        """Show only queries that fail at least one configured target."""
        if not isinstance(on, (bool, np.bool_)):
            raise RagReportError(f"fails_only must be true or false, got {on!r}")
        self.fails_only = bool(on)

    def set_sort(self, sort: str) -> None:
        """One of :data:`SORTS` (the delta sorts need a run B); ``"delta"`` = losses first."""
        if sort == "delta":
            sort = "delta_asc"
        if not isinstance(sort, str) or sort not in SORTS:
            raise RagReportError(f"sort must be one of {', '.join(SORTS)}, got {sort!r}")
        if sort.startswith("delta") and self.b < 0:
            raise RagReportError("sorting by delta needs a run B")
        self.sort = sort

    def _run_index(self, run: int | str, what: str) -> int:
        if isinstance(run, str):
            if run not in self.run_names:
                raise RagReportError(f"unknown {what} {run!r}; runs: "
                                     f"{', '.join(self.run_names)}")
            return self.run_names.index(run)
        if isinstance(run, bool) or not isinstance(run, (int, np.integer)) \
                or not 0 <= int(run) < len(self.results):
            raise RagReportError(f"{what} must be a run name or an index below "
                                 f"{len(self.results)}, got {run!r}")
        return int(run)

    def set_runs(self, a: int | str, b: int | str | None = None) -> None:
        """Choose run A (listed and ranked) and run B (compared with A; -1 for none; None:
        the first other run). A = B is refused."""
        ia = self._run_index(a, "run A")
        if b is None:
            ib = next((i for i in range(len(self.results)) if i != ia), -1)
        elif isinstance(b, (int, np.integer)) and not isinstance(b, bool) and int(b) == -1:
            ib = -1
        else:
            ib = self._run_index(b, "run B")
        if ia == ib:
            raise RagReportError("run A and run B must differ")
        old_a = self.a
        self.a, self.b = ia, ib
        if ib < 0 and self.sort.startswith("delta"):
            self.sort = "worst"
        if ia != old_a and self.selected and \
                self.position(ia, self.selected) < 0:
            order = self.order()
            self.selected = self.results[ia].query_ids[int(order[0])] if len(order) else ""

    def swap_runs(self) -> None:
        """Exchange run A and run B (needs a run B)."""
        if self.b < 0:
            raise RagReportError("swapping needs a run B")
        self.set_runs(self.b, self.a)

    # ---- the dicts the front end draws -----------------------------------------------------
    def meta(self) -> dict[str, Any]:
        """What does not change with the view: runs, families, K range, categories, sorts."""
        sorts = [s for s in SORTS if not s.startswith("delta") or len(self.results) > 1]
        return {
            "runs": list(self.run_names),
            "families": [{"id": str(f), "label": str(f), "title": measure_title(f)}
                         for f in self.families],
            "k_max": self.k_max,
            "n_queries": self.result_a.n_queries,
            "has_docs": bool(self.docs),
            "has_queries": bool(self.queries),
            "version": __version__,
            "categories": [{"id": c, "code": code, "label": self._category_label(code)}
                           for c, code in CATEGORIES.items()],
            "slices": [{"id": n, "label": n, "n": len(self.slices.queries(n))}
                       for n in self.slices.names] if self.slices is not None else [],
            "sorts": [{"id": s, "label": SORTS[s]} for s in sorts],
        }

    def rows(self, start: int, end: int) -> dict[str, Any]:
        """Columns of the visible rows ``start:end`` (at most :data:`ROWS_MAX`; clamped)."""
        order = self.order()
        start = max(0, min(int(start), len(order)))
        end = max(start, min(int(end), start + ROWS_MAX, len(order)))
        idx = order[start:end]
        ids = self.result_a.query_ids
        qids = [ids[i] for i in idx.tolist()]
        va = self.values()[idx]
        out: dict[str, Any] = {
            "start": start,
            "qid": qids,
            "text": [self._list_text(q) for q in qids],
            "a": floats(va),
        }
        if self.b >= 0:
            bi = self.b_index()[idx]
            vb = np.where(bi >= 0, self.values(self.b)[np.maximum(bi, 0)]
                          if self.result_b and self.result_b.n_queries else np.nan, np.nan)
            out["b"] = floats(vb)
            out["delta"] = floats(vb - va)
        out["kind"] = self.kinds()[idx].astype(int).tolist()
        out["fails"] = self.fails()[idx].tolist()
        return out

    def _list_text(self, qid: str) -> str:
        """The query's text as the list shows it (cut once, then kept)."""
        got = self._texts.get(qid)
        if got is None:
            got = self._texts[qid] = snippet(self.queries.get(qid), LIST_TEXT_CHARS)
        return got

    def head(self, view_top: int = 0) -> dict[str, Any]:
        """The first :data:`HEAD_ROWS` rows of the visible list, and in ``near`` the windows
        (aligned on :data:`ROWS_WINDOW`, at most :data:`ROWS_MAX` rows each) that the view
        will draw next beyond them: around the selected query's position (the view scrolls
        to it after an order change) and around ``view_top``, the first row the view shows
        (where the list stays when the order changes under it).

        So an order change never needs a second round trip for rows: its one update holds
        everything the view draws.

        >>> from ragreport import evaluate
        >>> r = evaluate({f"q{i}": {"d": 1} for i in range(700)},
        ...              {f"q{i}": ["d"] for i in range(700)}, ["RR"])
        >>> s = ExplorerState(r, measure="RR", k=1)
        >>> h = s.head(view_top=600)
        >>> len(h["qid"]), [(b["start"], len(b["qid"])) for b in h["near"]]
        (200, [(500, 200)])
        >>> s.head()["near"]  # the selected query (the first) and the view are in the head
        []
        """
        out = self.rows(0, HEAD_ROWS)
        n = self.n_visible
        wins: set[int] = set()
        pos = self.selected_pos
        top = max(0, min(int(view_top), n - 1))
        spans = [(top - NEAR_ROWS // 3, top + NEAR_ROWS)]
        if pos >= 0:
            spans.append((pos - NEAR_ROWS, pos + NEAR_ROWS))
        for lo, hi in spans:
            lo, hi = max(lo, HEAD_ROWS), min(hi, n - 1)
            if lo <= hi:
                wins.update(range(lo // ROWS_WINDOW, hi // ROWS_WINDOW + 1))
        runs: list[list[int]] = []  # [first, end) windows; contiguous ones share a block
        for w in sorted(wins):  # of at most ROWS_MAX rows
            if runs and runs[-1][1] == w and (w + 1 - runs[-1][0]) * ROWS_WINDOW <= ROWS_MAX:
                runs[-1][1] = w + 1
            else:
                runs.append([w, w + 1])
        out["near"] = [self.rows(a * ROWS_WINDOW, b * ROWS_WINDOW) for a, b in runs]
        return out

    def _mean(self, run: int) -> float | None:
        v = self.values(run)
        return number(v.mean()) if len(v) else None

    def _band(self, run: int, family: Measure, k: int, force: bool = False
              ) -> tuple[float | None, float | None]:
        """Bootstrap interval of run ``run``'s mean of ``family`` at ``k`` (cached); (None,
        None) when not computed yet and not ``force`` (large evaluations)."""
        def make() -> tuple[float | None, float | None]:
            r = self.results[run]
            if not r.n_queries:
                return None, None
            lo, hi = self._interval(run, family.at(k), lambda: self.values(run, family, k))
            return floats([lo])[0], floats([hi])[0]

        key = ("band", run, family, k)
        if not (self.stats_inline or force) and not self._has(key):
            return None, None
        got: tuple[float | None, float | None] = self._memo(key, make)
        return got

    def summary(self, force: bool = False) -> dict[str, Any]:
        """Mean (and interval) of the measure at K per run; the targets for run A (and B).

        Above :data:`INLINE_STATS_QUERIES` queries the intervals are left out (``lo``/``hi``
        None, ``pending`` true) until computed: ``force=True``, or :meth:`compute_stats`.
        """
        runs = []
        pending = False
        for i, r in enumerate(self.results):
            lo, hi = self._band(i, self.family, self.k, force)
            pending |= lo is None and r.n_queries > 0
            runs.append({"name": r.run_name, "mean": self._mean(i), "lo": lo, "hi": hi,
                         "n": r.n_queries})
        targets = []
        for run in [self.a] + ([self.b] if self.b >= 0 else []):
            r = self.results[run]
            for t in self.targets:
                v = self.target_values(t, run)
                value = self._memo(("target-mean", run, t), lambda v=v: number(v.mean())
                                   if v is not None and len(v) else None)
                on_lower = t.on == "ci_lower"
                passed: bool | None = None
                if on_lower and value is not None:  # the lower bound must clear it
                    value = self._target_lower(run, t, force)
                    pending |= value is None
                if value is not None:  # the report's check (analysis.targets.run_checks)
                    check = self._memo(
                        ("target-check", run, t, value),
                        lambda r=r, t=t, value=value, on_lower=on_lower: run_checks(
                            [r], [t], {r.run_name: {t.measure: value}} if on_lower else None
                        )[0])
                    passed = check.passed
                targets.append({"label": _target_label(t), "run": r.run_name,
                                "title": f"{measure_title(t.measure)} "
                                         f"{target_rule(t.op, t.threshold)}"
                                         + (" (on the lower bound of the interval)"
                                            if on_lower else ""),
                                "on": t.on, "value": value,
                                "pass": passed})
        return {"label": measure_label(self.family, self.k), "title": measure_title(self.family),
                "level": self.settings.level, "resamples": self.settings.resamples,
                "pending": pending, "runs": runs, "targets": targets}

    def _target_lower(self, run: int, t: Target, force: bool) -> float | None:
        """Lower bound of the bootstrap interval of the mean of a target's measure."""
        key = ("target-lower", run, t)
        if not (self.stats_inline or force) and not self._has(key):
            return None

        def make() -> float | None:
            v = self.target_values(t, run)
            if v is None or not len(v):
                return None
            return number(self._interval(run, t.measure, lambda: v)[0])

        got: float | None = self._memo(key, make)
        return got

    def _interval(self, run: int, m: Measure, values: Callable[[], FloatArray]
                  ) -> tuple[float, float]:
        """The interval of run ``run``'s mean of ``m`` as the report computes it
        (:func:`ragreport.analysis.curves.run_intervals`, the report's level, resamples and
        seed); a measure the result cannot give (past its width) from ``values()``, with the
        same resampled query sets (:func:`ragreport.stats.bootstrap_ci`)."""
        r = self.results[run]
        try:
            s = self.settings
            return run_intervals(r, [m], level=s.level, resamples=s.resamples, seed=s.seed,
                                 workers=self.workers).measures[m]
        except RagReportError:
            s = self.settings
            ci = bootstrap_ci(values(), level=s.level, resamples=s.resamples, seed=s.seed,
                              workers=self.workers)
            return float(ci.lower), float(ci.upper)

    def _ranked(self, run: int, qid: str) -> dict[str, Any]:
        r = self.results[run]
        rk = r.require_ranking()
        i = self.position(run, qid)
        lo, hi = int(rk.ret_offsets[i]), int(rk.ret_offsets[i + 1])
        n_ret = hi - lo
        top = min(hi, lo + RANKING_MAX)
        rows = rk.run_rows[lo:top]
        docs: list[str] = rk.run.doc_ids.take(rows).to_pylist() if len(rows) else []
        grades = rk.ret_grades[lo:top]
        level = float(r.conventions.rel_level)
        with np.errstate(invalid="ignore"):
            rel = (grades >= level).tolist()
        texts = [snippet(self.docs.get(d), PASSAGE_CHARS) for d in docs] if self.docs else \
            [""] * len(docs)
        scores = floats(rk.run.scores[rows]) if rk.run.has_scores else [None] * len(docs)
        # the judged documents of the query, and which relevant ones were not retrieved
        jlo, jhi = int(rk.qrels_offsets[i]), int(rk.qrels_offsets[i + 1])
        jgrades = rk.qrels_grades[jlo:jhi]
        relevant = np.flatnonzero(jgrades >= level)
        missing: list[tuple[str, float]] = []
        if len(relevant):
            jdocs = rk.qrels.doc_ids.take(rk.qrels_rows[jlo:jhi][relevant]).to_pylist()
            retrieved = set(docs) if top == hi else \
                set(rk.run.doc_ids.take(rk.run_rows[lo:hi]).to_pylist())
            missing = [(d, float(g)) for d, g in zip(jdocs, jgrades[relevant].tolist(),
                                                     strict=True) if d not in retrieved]
        return {
            "run": r.run_name,
            "n_ret": n_ret,
            "n_rel": len(relevant),
            "truncated": n_ret - len(docs),
            "rows": {"rank": list(range(1, len(docs) + 1)), "doc_id": docs, "score": scores,
                     "grade": floats(grades), "relevant": rel, "text": texts},
            "missing_relevant": [d for d, _g in missing],
            "missing_grades": [g for _d, g in missing],
        }

    def ranking(self) -> dict[str, Any]:
        """The selected query's whole ranking in run A (and run B, with each row's move)."""
        q = self.selected
        if not q:
            return {}
        # K is not in it: the view draws the cut line itself, so a new K resends no ranking
        out: dict[str, Any] = {"qid": q, "query_text": self.queries.get(q, "")}
        out |= self._ranked(self.a, q)
        rb = self.result_b
        if rb is not None:
            if self.position(self.b, q) >= 0:
                b = self._ranked(self.b, q)
                rank_a = {d: n for n, d in enumerate(out["rows"]["doc_id"], start=1)}
                b["move"] = [None if d not in rank_a else rank_a[d] - n
                             for n, d in enumerate(b["rows"]["doc_id"], start=1)]
                out["b"] = b
            else:
                out["b"] = {"run": rb.run_name, "missing": True}
        return out

    def passage(self, qid: str, doc_id: str) -> str:
        """Full text of a document (``""`` when none was given)."""
        if not isinstance(doc_id, str):
            raise RagReportError(f"doc_id must be text, got {type(doc_id).__name__}")
        return self.docs.get(doc_id, "")

    def _curve_width(self) -> int:
        """Ks 1..this are columns of every run's evaluated curves."""
        return min(self.k_max, *(r.k_max for r in self.results))

    def _curve_ks(self) -> list[int]:
        """The K values the curves are drawn at: 1..k_max (above :data:`CURVE_POINTS` Ks:
        every K of the evaluated curves, then Ks spread evenly on a log scale, and K)."""
        if self.k_max <= CURVE_POINTS:
            return list(range(1, self.k_max + 1))
        w = self._curve_width()
        extra = np.unique(np.geomspace(w + 1, self.k_max, CURVE_POINTS - w).astype(np.int64))
        return sorted({*range(1, w + 1), *extra.tolist(), self.k_max, self.k})

    def mean_ks(self) -> list[int]:
        """The Ks past the evaluated curves at which the mean curve is computed (each costs a
        pass over the rankings): :data:`MEAN_POINTS` spread on a log scale, and K."""
        w = self._curve_width()
        if self.k_max <= w:
            return []
        beyond = [k for k in self._curve_ks() if k > w]
        if len(beyond) <= MEAN_ALL_POINTS and \
                sum(r.n_queries for r in self.results) * len(beyond) <= MEAN_ALL_CELLS:
            return beyond
        pts = np.geomspace(w + 1, self.k_max, MEAN_POINTS).astype(np.int64)
        return sorted({*pts.tolist(), self.k_max} | ({self.k} if self.k > w else set()))

    def _mean_curve(self, run: int, ks: list[int]) -> list[float | None]:
        """Run ``run``'s mean curve of the family at ``ks``: the evaluated mean curve, then
        the Ks computed so far (None elsewhere; see :meth:`mean_ks`)."""
        r = self.results[run]
        fam = self.family
        mean = self._memo(("mean", run, fam), lambda: mean_curve(r, fam))
        out: list[float] = []
        for k in ks:
            if k <= len(mean):
                out.append(float(mean[k - 1]))
                continue
            m = self._means.get((run, fam, k))
            if m is None:
                v = self._values.get((run, fam, k))
                m = float(v.mean()) if v is not None and len(v) else np.nan
            out.append(m)
        return floats(out)

    def _mean_at(self, run: int, family: Measure, k: int) -> None:
        if (run, family, k) not in self._means:
            v = self._values.get((run, family, k))
            if v is None:
                v = self._cutoff(run, family.at(k))
            self._means[(run, family, k)] = float(v.mean()) if len(v) else np.nan

    def compute_means(self) -> None:
        """Compute the mean curve at :meth:`mean_ks` for every run (the current family)."""
        for run in range(len(self.results)):
            for k in self.mean_ks():
                self._mean_at(run, self.family, k)

    def query_result(self, run: int, qid: str) -> EvaluationResult | None:
        """The query evaluated alone, with curves through K = k_max (exactly the values of
        the full evaluation: checked on the evaluated curves; None when they differ or the
        evaluation cannot be redone for one query, e.g. with a doc map)."""
        key = (run, qid)
        got = self._queries.get(key)
        if got is None:  # a few at a time: each holds curves through k_max
            got = self._queries[key] = self._evaluate_query(run, qid) or False
            _evict(self._queries, QUERY_RESULTS)
        return got if isinstance(got, EvaluationResult) else None

    def _evaluate_query(self, run: int, qid: str) -> EvaluationResult | None:
        from ..core.engine import evaluate

        r = self.results[run]
        c = r.conventions
        if r.doc_map is not None or c.doc_map is not None or c.order != "score" \
                or c.ties != "trec_eval":
            return None
        rk = r.require_ranking()
        i = self.position(run, qid)
        lo, hi = int(rk.ret_offsets[i]), int(rk.ret_offsets[i + 1])
        docs = rk.run.doc_ids.take(rk.run_rows[lo:hi]).to_pylist()
        jlo, jhi = int(rk.qrels_offsets[i]), int(rk.qrels_offsets[i + 1])
        jdocs = rk.qrels.doc_ids.take(rk.qrels_rows[jlo:jhi]).to_pylist()
        judged = dict(zip(jdocs, rk.qrels_grades[jlo:jhi].tolist(), strict=True))
        if not judged:
            return None
        fams = [*self.families, Measure("Judged")]
        try:
            one = evaluate({qid: judged}, {qid: docs}, [f.at(1) for f in fams],
                           k_max=self.k_max, order="given", rel_level=c.rel_level,
                           fractional_grades=c.fractional_grades, no_relevant="zero",
                           _curve_width=self.k_max)
        except RagReportError:
            return None
        w = min(r.k_max, self.k_max)
        for f in self.families:  # the same values as the full evaluation, or not used
            full, alone = r.curves[f][i, :w], one.curves[f][0, :w]
            if full.shape != alone.shape or not np.array_equal(full, alone):
                return None
        return one

    def _query_values(self, run: int, i: int, qid: str, fam: Measure, ks: list[int]
                      ) -> list[float | None]:
        """One query's values of ``fam`` at ``ks``."""
        one = self.query_result(run, qid)
        if one is not None and fam in one.curves:
            return floats(one.curves[fam][0, np.asarray(ks, dtype=np.int64) - 1])
        r = self.results[run]
        w = min(r.k_max, self.k_max)  # fall back: the evaluated curve, then K by K
        return floats([float(r.curves[fam][i, k - 1]) if k <= w else
                       float(self.values(run, fam, k)[i]) for k in ks])

    def panel(self) -> dict[str, Any]:
        """The selected query: the configured targets, the measures at K, its curve against
        the mean curve, its failure kind and Judged@K."""
        q = self.selected
        if not q:
            return {}
        ia = self.position(self.a, q)
        rb = self.result_b
        pos_b = self.position(self.b, q) if rb is not None else -1
        ib = None if pos_b < 0 else pos_b
        targets = []
        for t in self.targets:
            v = self.target_values(t)
            value = None if v is None else number(v[ia])
            targets.append({"label": _target_label(t), "title": measure_title(t.measure),
                            "value": value,
                            "pass": None if value is None else passes(value, t.op,
                                                                      t.threshold)})
        measures = []
        for fam in self.families:
            row: dict[str, Any] = {"id": str(fam), "label": measure_label(fam, self.k),
                                   "title": measure_title(fam),
                                   "a": self._query_values(self.a, ia, q, fam, [self.k])[0]}
            if rb is not None:
                row["b"] = None if ib is None else \
                    self._query_values(self.b, ib, q, fam, [self.k])[0]
            measures.append(row)
        ks = self._curve_ks()
        fam = self.family
        if self.stats_inline:
            self.compute_means()
        curve: dict[str, Any] = {"family": str(fam), "label": str(fam),
                                 "title": measure_title(fam), "ks": ks,
                                 "query_a": self._query_values(self.a, ia, q, fam, ks),
                                 "mean_a": self._mean_curve(self.a, ks)}
        if rb is not None:
            curve["mean_b"] = self._mean_curve(self.b, ks)
            if ib is not None:
                curve["query_b"] = self._query_values(self.b, ib, q, fam, ks)
        code = int(self.kinds()[ia])
        one = self.query_result(self.a, q)
        judged = float(one.curves[Measure("Judged")][0, self.k - 1]) if one is not None \
            else float(self._memo(("judged", self.a, self.k),
                                  lambda: self._judged_at(self.k))[ia])
        return {"qid": q, "targets": targets, "measures": measures, "curve": curve,
                "kind": self._category_label(code), "kind_code": code,
                "judged_at_k": floats([judged])[0], "judged_label": f"Judged@{self.k}"}

    def _judged_at(self, k: int) -> FloatArray:
        r = self.result_a
        m = Measure("Judged", int(k))
        if m.curve_key in r.curves and k <= r.k_max:
            return np.asarray(r.values(m), dtype=np.float64)
        return self._cutoff(self.a, m)

    def common_values(self) -> tuple[FloatArray, FloatArray]:
        """Values of the measure at K in run A and run B on their common queries."""
        idx = self.b_index()
        if self._memo(("bindex-identity", self.a, self.b),
                      lambda: bool(np.array_equal(idx, np.arange(len(idx))))):
            return self.values(), self.values(self.b)
        common = idx >= 0
        return self.values()[common], self.values(self.b)[idx[common]]

    def compare(self, force: bool = False) -> dict[str, Any]:
        """The paired comparison of B against A for the measure at K ({} without a run B);
        above :data:`INLINE_STATS_QUERIES` queries the test is left out (``pending``) unless
        ``force`` (or once :meth:`compute_stats` ran)."""
        if self.b < 0:
            return {}
        va, vb = self.common_values()
        n = len(va)
        d = vb - va
        out: dict[str, Any] = {
            "label": measure_label(self.family, self.k), "run_a": self.run_names[self.a],
            "run_b": self.run_names[self.b], "n": n,
            "mean_a": number(va.mean()) if n else None,
            "mean_b": number(vb.mean()) if n else None,
            "delta": number(d.mean()) if n else None,
            "wins": None, "losses": None, "ties": None, "level": self.settings.level,
            "alpha": self.settings.alpha,
            "lo": None, "hi": None, "p_t": None, "p_rand": None, "significant": None,
            "resamples": self.settings.resamples, "pending": False,
        }
        if n == 0:
            return out
        key = ("paired", self.a, self.b, self.family, self.k)
        if not (self.stats_inline or force) and not self._has(key):
            out["pending"] = True
            return out
        out |= self._memo(key, lambda: self._paired(va, vb))
        return out

    def _paired_key(self, a: int, b: int, family: Measure, k: int) -> None:
        key = ("paired", a, b, family, k)
        if self._has(key):
            return
        idx = self._memo(("bindex", a, b), lambda: self._b_index(a, b))
        common = idx >= 0
        va = self.values(a, family, k)[common]
        vb = self.values(b, family, k)[idx[common]]
        if len(va):
            self._memo(key, lambda: self._paired(va, vb))

    def _paired(self, va: FloatArray, vb: FloatArray) -> dict[str, Any]:
        """The paired test of the view, computed by :attr:`workers` (or here)."""
        task = (va, vb, self.settings)
        got: dict[str, Any] = map_with(self.workers, _paired_view, [task])[0]
        return got

    def compute_stats(self) -> None:
        """Compute the intervals and the paired test of the current view (the slow part for
        large evaluations), so that :meth:`summary` and :meth:`compare` include them."""
        self.stats_job()()

    def warm(self) -> None:
        """Compute what the next interactions may need and that does not depend on the view:
        every run's failure kinds and id order, run A's search haystack (the widget calls
        this off the interaction path for large evaluations)."""
        for run in range(len(self.results)):
            self._kinds_parts(run)
            self.kinds(run, self.k)
            self._id_order(run)
        self._hay(self.a)

    def stats_job(self, stale: Callable[[], bool] | None = None) -> Callable[[], bool]:
        """A function computing the intervals and the paired test of the view as it is now
        (runs, measure, K captured), safe to run in another thread while the view moves on;
        afterwards :meth:`summary` and :meth:`compare` of that view include them. It stops
        between two steps once ``stale()`` says the view has moved on, and returns whether
        it finished."""
        a, b, family, k = self.a, self.b, self.family, self.k
        runs = len(self.results)
        ks = self.mean_ks()

        def moved() -> bool:
            return stale is not None and stale()

        def job() -> bool:
            self.warm()
            for run in range(runs):
                for t in self.targets:
                    if t.on == "ci_lower":
                        self._target_lower(run, t, True)
                for kk in ks:
                    if moved():
                        return False
                    self._mean_at(run, family, kk)
                if moved():
                    return False
                self._band(run, family, k, force=True)
            if b >= 0 and not moved():
                self._paired_key(a, b, family, k)
            return not moved()

        return job

    # ---- report --------------------------------------------------------------------------
    def write_report(self, path: str | os.PathLike[str]) -> Path:
        """Write the HTML report (as ``ragreport report`` does) for these results."""
        from ..report import build_report

        rep = build_report(self.results, self.targets, queries=self.queries or None,
                           docs=self.docs or None, slices=self.slices, settings=self.settings)
        written = rep.save(html=path)
        return Path(written[0])

    # ---- text ----------------------------------------------------------------------------
    def summary_text(self) -> str:
        """One line: runs, queries, the measure at K and run A's mean."""
        mean = self._mean(self.a)
        shown_mean = "n/a" if mean is None else shown(mean)
        n_runs = len(self.results)
        return (f"ragreport Explorer: {n_runs} run{'s' if n_runs != 1 else ''}, "
                f"{self.result_a.n_queries} queries, {measure_label(self.family, self.k)} mean "
                f"{shown_mean} (run {self.result_a.run_name})")
