"""The explorer's logic and its HTML views, without any widget.

:class:`ExplorerState` holds what the person chose (measure family, K, filters, sort, selected
query, runs A and B) and renders each view as an HTML string. Every number comes from the
precomputed (queries, k_max) curves of the :class:`~ragreport.result.EvaluationResult` objects:
changing the measure or K re-indexes those arrays (numpy, no Python loop over the queries) and
re-sorts; nothing is re-evaluated. Only the first :attr:`ExplorerState.list_limit` queries of
the visible list are rendered, so a 100,000-query evaluation stays interactive.

Every user string (query and document ids and texts, run names) is escaped with
:func:`html.escape` before it enters the HTML.

>>> from ragreport import evaluate
>>> r = evaluate({"a": {"x": 1}, "b": {"y": 1}}, {"a": ["x"], "b": ["x", "y"]}, ["P@1"])
>>> s = ExplorerState(r, targets=[])
>>> s.set_measure("P"); s.set_k(1)
>>> s.query_order()
['b', 'a']
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..diagnose import FAILURE_KINDS
from ..errors import RagReportError
from ..measures import FAMILIES, Measure, parse_measure
from ..result import EvaluationResult
from ..stats import BootstrapCI, PairedTest, bootstrap_ci, paired_randomization_test, paired_t_test
from ..targets import (
    DISPLAY_DIGITS,
    OPERATORS,
    Target,
    default_targets,
    load_targets,
    parse_targets,
    passes,
    shown,
)

__all__ = ["KIND_FILTERS", "SORTS", "CompareStats", "ExplorerState", "passes_array"]

#: Sort orders of the query list.
SORTS: tuple[str, ...] = ("worst", "best", "id", "delta")

#: Failure kinds the list can be filtered by (code -> label, see :mod:`ragreport.diagnose`).
KIND_FILTERS: dict[int, str] = {c: FAILURE_KINDS[c] for c in (3, 4, 2, 1)}

_FAMILY_ORDER = ("nDCG", "R", "P", "F1", "HitRate", "RR", "AP")
_BIG = np.iinfo(np.int64).max
_SNIPPET = 160
_TEXT_IN_LIST = 80

#: Bootstrap resamples of the interval bands, summaries and the A/B delta interval.
CI_RESAMPLES = 1000
#: Above this many queries x resamples, the bootstrap uses fewer resamples (at least
#: :data:`CI_MIN_RESAMPLES`) so that one interval stays well under a second; the text says so.
CI_CELLS = 10_000_000
CI_MIN_RESAMPLES = 100
#: Randomization-test resamples, and the reduced number used above :data:`TEST_LARGE` queries.
TEST_RESAMPLES = 10_000
TEST_RESAMPLES_LARGE = 2_000
TEST_LARGE = 20_000
#: Significance level named in the A/B view.
ALPHA = 0.05
#: Up to this many queries the mean-curve band is computed without being asked for.
BAND_AUTO_QUERIES = 20_000
CI_LEVEL = 0.95

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_CSS = """<style>
.rrx{font-size:13px;line-height:1.35}
.rrx table{border-collapse:collapse;margin:4px 0}
.rrx th,.rrx td{padding:2px 6px;border-bottom:1px solid rgba(128,128,128,.25);text-align:left;
vertical-align:top}
.rrx td.num,.rrx th.num{text-align:right;font-variant-numeric:tabular-nums}
.rrx .muted{opacity:.7}
.rrx tr.sel{background:rgba(0,114,178,.15);font-weight:600}
.rrx tr.cut td{border-top:3px dashed #d55e00;color:#d55e00;font-weight:600;padding:1px 6px}
.rrx .g-rel{color:#0072b2;font-weight:600}
.rrx .g-non{color:#d55e00}
.rrx .g-unj{color:#808080;font-style:italic}
.rrx .g-unj span{border:1px dashed currentColor;border-radius:8px;padding:0 5px}
.rrx .unj-count{font-style:italic}
.rrx .pass{color:#0072b2;font-weight:600}
.rrx .fail{color:#d55e00;font-weight:600}
.rrx tr.up{background:rgba(0,158,115,.15)}
.rrx tr.down{background:rgba(213,94,0,.13)}
.rrx tr.new{background:rgba(86,180,233,.18)}
.rrx .cols{display:flex;gap:16px;flex-wrap:wrap;align-items:flex-start}
.rrx details>summary{cursor:pointer}
.rrx .full{white-space:pre-wrap;max-width:60em;max-height:18em;overflow:auto}
.rrx h4{margin:6px 0 2px 0}
.rrx .rrx-tests{margin:4px 0 6px 0}
</style>"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _signed(x: float) -> str:
    return f"{x:+.{DISPLAY_DIGITS}f}"


def ci_resamples(n: int) -> int:
    """Bootstrap resamples used for ``n`` queries: :data:`CI_RESAMPLES`, fewer for huge ``n``.

    >>> ci_resamples(5000), ci_resamples(100_000)
    (1000, 100)
    """
    return max(CI_MIN_RESAMPLES, min(CI_RESAMPLES, CI_CELLS // max(n, 1)))


def _resample_note(resamples: int) -> str:
    return "" if resamples == CI_RESAMPLES else f", {resamples} resamples"


@dataclass(frozen=True)
class CompareStats:
    """Paired comparison of run B against run A for one measure at one K (common queries)."""

    measure: Measure
    n: int
    mean_a: float
    mean_b: float
    delta: BootstrapCI
    randomization: PairedTest
    t_test: PairedTest
    resamples: int

    @property
    def significant(self) -> bool:
        """The randomization test's p-value is below :data:`ALPHA`."""
        return bool(self.randomization.p_value < ALPHA)


def passes_array(values: FloatArray, op: str, threshold: float) -> BoolArray:
    """:func:`ragreport.targets.passes` for a whole array (same decision, vectorised).

    Values are rounded with numpy; the rare value within 1e-6 of a rounding tie is decided by
    :func:`~ragreport.targets.passes` itself, so the result always matches the shown value.

    >>> passes_array(np.array([0.84996, 0.85004, 0.9]), ">", 0.85).tolist()
    [False, False, True]
    """
    if op not in OPERATORS:
        raise RagReportError(f"operator must be one of {', '.join(OPERATORS)}, got {op!r}")
    v = np.asarray(values, dtype=np.float64)
    scale = 10.0 ** DISPLAY_DIGITS
    scaled = v * scale
    compare: Any = OPERATORS[op]
    out: BoolArray = np.asarray(compare(np.round(v, DISPLAY_DIGITS), threshold), dtype=np.bool_)
    tie = np.flatnonzero(np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6)
    for i in tie.tolist():
        out[i] = passes(float(v[i]), op, threshold)
    return out


@dataclass
class _RunData:
    """Per-run arrays that do not depend on K (computed once, when the run is first used)."""

    result: EvaluationResult
    first_rel: IntArray   # rank of the first relevant document, or _BIG
    base_kind: npt.NDArray[np.int8]  # 1, 2, 3, or 0 (then 4 when first_rel > K)


def _run_data(r: EvaluationResult) -> _RunData:
    rk = r.ranking
    level = float(r.conventions.rel_level)
    from ..diagnose import NO_RELEVANT_RANK, first_relevant_rank

    first = first_relevant_rank(r)  # sparse: no (queries, depth) matrix
    any_rel = first < NO_RELEVANT_RANK
    first = np.where(any_rel, first, _BIG)
    kind = np.zeros(r.n_queries, dtype=np.int8)
    kind[~any_rel] = 3
    kind[rk.n_ret == 0] = 2
    kind[rk.n_relevant(level) == 0] = 1
    return _RunData(r, first.astype(np.int64), kind)


#: Characters of each query text the filter searches (keeps the search array small).
FILTER_TEXT_CHARS = 256


def _haystack(ids: list[str], texts: Mapping[str, str]) -> Any:
    """Lower-cased ``id<TAB>text`` of every query (text cut at :data:`FILTER_TEXT_CHARS`), as
    a fixed-width numpy string array: a vectorised substring search takes milliseconds."""
    return np.array([f"{q}\t{texts.get(q, '')[:FILTER_TEXT_CHARS]}".lower() for q in ids],
                    dtype=str)


def _contains(hay: Any, needle: str) -> BoolArray:
    strings = getattr(np, "strings", None)
    if strings is not None:
        return np.asarray(strings.find(hay, needle) >= 0)
    return np.asarray(np.char.find(hay, needle) >= 0)  # pragma: no cover - numpy < 2


def _coerce_targets(targets: Any) -> list[Target]:
    if targets is None:
        return default_targets()
    if isinstance(targets, (str, os.PathLike)):
        return load_targets(targets)
    if isinstance(targets, Mapping):
        return parse_targets(targets, "targets")
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
    return load_texts(texts, what=what)


class ExplorerState:
    """Plain, testable state of the explorer (no widgets).

    Parameters
    ----------
    results : EvaluationResult or list of EvaluationResult
        One run, or several (distinct run names) to compare as run A and run B.
    targets : list of Target, mapping, path or None
        Targets to check per query (default: the seed tutorial's typical targets).
    queries, docs : dict or path, optional
        Query and document texts (see :func:`ragreport.load_texts`).
    measure : str, optional
        Initial measure family (default: the first target's, else nDCG).
    k : int, optional
        Initial K (default: the first target's cutoff, else 10; at most k_max).
    list_limit : int
        How many queries of the visible list are rendered (and offered in the selector).
    """

    def __init__(self, results: EvaluationResult | Sequence[EvaluationResult],
                 targets: Any = None, queries: Any = None, docs: Any = None, *,
                 measure: str | None = None, k: int | None = None,
                 list_limit: int = 200) -> None:
        runs = [results] if isinstance(results, EvaluationResult) else list(results)
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
        self.targets: list[Target] = _coerce_targets(targets)
        self.queries: dict[str, str] = {}
        for r in runs:
            self.queries.update(r.query_texts)
        self.queries.update(_coerce_texts(queries, "queries"))
        self.docs: dict[str, str] = _coerce_texts(docs, "docs")
        self.list_limit = int(list_limit)
        self.k_max = min(r.k_max for r in runs)

        fams: list[Measure] = []
        keys = [k for k in runs[0].curves if all(k in r.curves for r in runs)]
        for name in _FAMILY_ORDER:
            fams += [k for k in keys if k.name == name and k not in fams]
        fams += [k for k in keys if k not in fams]
        if not fams:
            raise RagReportError("the results hold no metric-vs-K curve")
        self.families: list[Measure] = fams
        for r in runs:  # curves are computed on first use: pay here, not on a click
            for fam in fams:
                r.curves[fam]

        self._data: dict[int, _RunData] = {}
        self._hay: dict[int, Any] = {}
        self._id_order: dict[int, IntArray] = {}
        self._b_index: dict[tuple[int, int], IntArray] = {}
        self._arrow_ids: dict[int, Any] = {}
        self._cache: dict[tuple[Any, ...], Any] = {}

        self.a = 0
        self.b: int | None = 1 if len(runs) > 1 else None
        first_target = next((t.measure for t in self.targets if t.measure.has_curve), None)
        self.family: Measure = fams[0]
        if first_target is not None and first_target.curve_key in fams:
            self.family = first_target.curve_key
        self.k = min(self.k_max, (first_target.cutoff if first_target is not None and
                                  first_target.cutoff else 10))
        self.filter_text = ""
        self.kind: int | None = None
        self.fails_target = False
        self.sort = "worst"
        self.selected: str | None = None
        self._means: dict[tuple[int, Measure], FloatArray] = {}
        self._bands: dict[tuple[int, Measure], BootstrapCI] = {}
        self._judged: dict[tuple[int, int], FloatArray] = {}  # (run, K) -> Judged@K
        self._summary_ci: dict[tuple[int, int], BootstrapCI] = {}
        self._tests: dict[tuple[Measure, int, int, int], CompareStats] = {}
        #: Whether :meth:`render_compare` computes the paired tests when they are not cached
        #: (the widget turns this off for big evaluations: the tests then run on request).
        self.compute_tests = True
        for i in range(len(runs)):
            self._run(i)  # the K-independent arrays, now rather than on the first click
        self._haystack(self.a)
        if measure is not None:
            self.set_measure(measure, _notify=False)
        if k is not None:
            self.set_k(k, _notify=False)
        self._fix_selection()

    # ---- hooks ---------------------------------------------------------------------------
    def _changed(self) -> None:
        """Called after every change; the widget shell re-renders here."""

    # ---- helpers -------------------------------------------------------------------------
    def _haystack(self, i: int) -> Any:
        hay = self._hay.get(i)
        if hay is None:
            ids = self.results[i].query_ids
            same = next((j for j in self._hay if self.results[j].query_ids == ids), None)
            hay = self._hay[i] = self._hay[same] if same is not None \
                else _haystack(ids, self.queries)
        return hay

    def _ids_arrow(self, i: int) -> Any:
        got = self._arrow_ids.get(i)
        if got is None:
            import pyarrow as pa

            got = self._arrow_ids[i] = pa.array(self.results[i].query_ids, pa.string())
        return got

    def mean_curve(self, run: int, family: Measure) -> FloatArray:
        """(k_max,) mean over queries of a family for a run (cached)."""
        key = (run, family)
        got = self._means.get(key)
        if got is None:
            got = self._means[key] = self.results[run].mean_curve(family)
        return got

    def mean_band(self, run: int, family: Measure) -> BootstrapCI:
        """95% bootstrap interval of the mean curve of a family for a run, at every K.

        Computed on first use and cached per (run, family), with :func:`bootstrap_ci`
        (:data:`CI_RESAMPLES` resamples, seed 0; fewer for huge evaluations, see
        :func:`ci_resamples`).
        """
        key = (run, family)
        got = self._bands.get(key)
        if got is None:
            curve = self.results[run].curve(family)
            got = self._bands[key] = bootstrap_ci(curve, level=CI_LEVEL,
                                                  resamples=ci_resamples(len(curve)), seed=0)
        return got

    def summary_ci(self, run: int) -> BootstrapCI:
        """Bootstrap interval of the mean of every family at the current K (cached)."""
        key = (run, self.k)
        got = self._summary_ci.get(key)
        if got is None:
            r = self.results[run]
            cols = np.stack([r.curves[fam][:, self.k - 1] for fam in self.families], axis=1)
            got = self._summary_ci[key] = bootstrap_ci(
                cols, level=CI_LEVEL, resamples=ci_resamples(len(cols)), seed=0)
        return got

    def common_values(self) -> tuple[FloatArray, FloatArray]:
        """Values of the chosen measure at K in run A and run B on their common queries
        (in run A's order)."""
        idx = self.b_index()
        common = idx >= 0
        va = self.values()[common]
        vb = self.values(self.b)[idx[common]]
        return va, vb

    def compare_stats(self, compute: bool = True) -> CompareStats | None:
        """Paired comparison of B against A for the chosen measure at K (cached per measure,
        K, A and B); None when not cached and ``compute`` is false, or with no common query.

        The delta interval is a bootstrap of the per-query deltas; the randomization test uses
        :data:`TEST_RESAMPLES` resamples (:data:`TEST_RESAMPLES_LARGE` above
        :data:`TEST_LARGE` common queries), seed 0.
        """
        if self.b is None:
            raise RagReportError("comparing needs two runs")
        key = (self.family, self.k, self.a, self.b)
        got = self._tests.get(key)
        if got is not None or not compute:
            return got
        va, vb = self.common_values()
        n = len(va)
        if n == 0:
            return None
        resamples = TEST_RESAMPLES if n <= TEST_LARGE else TEST_RESAMPLES_LARGE
        got = CompareStats(
            self.measure, n, float(va.mean()), float(vb.mean()),
            bootstrap_ci(vb - va, level=CI_LEVEL, resamples=ci_resamples(n), seed=0),
            paired_randomization_test(va, vb, resamples=resamples, seed=0),
            paired_t_test(va, vb), resamples)
        self._tests[key] = got
        return got

    def _run(self, i: int) -> _RunData:
        d = self._data.get(i)
        if d is None:
            d = self._data[i] = _run_data(self.results[i])
        return d

    @property
    def result_a(self) -> EvaluationResult:
        return self.results[self.a]

    @property
    def result_b(self) -> EvaluationResult | None:
        return None if self.b is None else self.results[self.b]

    @property
    def measure(self) -> Measure:
        """The chosen family at the chosen K (``nDCG@5``)."""
        return self.family.at(self.k)

    def _run_index(self, run: int | str) -> int:
        if isinstance(run, str):
            if run not in self.run_names:
                raise RagReportError(f"unknown run {run!r}; runs: {', '.join(self.run_names)}")
            return self.run_names.index(run)
        if isinstance(run, bool) or not isinstance(run, (int, np.integer)) \
                or not 0 <= int(run) < len(self.results):
            raise RagReportError(f"run must be a name or an index below {len(self.results)}, "
                                 f"got {run!r}")
        return int(run)

    def values(self, run: int | str | None = None) -> FloatArray:
        """(queries,) values of the chosen measure at K for a run (default run A)."""
        i = self.a if run is None else self._run_index(run)
        return self.results[i].curve(self.family)[:, self.k - 1]

    def b_index(self) -> IntArray:
        """For each query of run A, its position in run B (-1 when B did not evaluate it)."""
        if self.b is None:
            raise RagReportError("comparing needs two runs")
        key = (self.a, self.b)
        idx = self._b_index.get(key)
        if idx is None:
            import pyarrow.compute as pc

            found = pc.index_in(self._ids_arrow(self.a), value_set=self._ids_arrow(self.b))
            idx = found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            self._b_index[key] = idx
        return idx

    def deltas(self) -> FloatArray:
        """(queries of A,) value of B minus value of A at K (NaN where B lacks the query)."""
        key = ("delta", self.a, self.b, self.family, self.k)
        got = self._cache.get(key)
        if got is None:
            idx = self.b_index()
            vb = self.values(self.b)
            got = np.where(idx >= 0, vb[np.maximum(idx, 0)], np.nan) - self.values()
            self._cache = {k: v for k, v in self._cache.items() if k[0] != "delta"}
            self._cache[key] = got
        return np.asarray(got)

    def kinds(self) -> npt.NDArray[np.int8]:
        """Failure kind code of every query of run A at K (see :data:`FAILURE_KINDS`)."""
        d = self._run(self.a)
        out = d.base_kind.copy()
        out[(out == 0) & (d.first_rel > self.k)] = 4
        return out

    def _target_values(self, t: Target, run: int | None = None) -> FloatArray | None:
        """Values of a target's measure for every query: at K for measures with a cutoff,
        the uncut value otherwise; None when the result lacks it."""
        r = self.results[self.a if run is None else run]
        m = t.measure
        try:
            if m.cutoff is not None and m.has_curve and m.curve_key in r.curves:
                return r.curves[m.curve_key][:, self.k - 1]
            return r.values(m)
        except RagReportError:
            return None

    def target_label(self, t: Target) -> str:
        """How a target is evaluated per query: at K (``R@K=5``) or uncut (``RR``)."""
        m = t.measure
        if m.cutoff is not None and m.has_curve:
            return f"{m.at(None)}@{self.k}"
        return str(m)

    def fails(self) -> BoolArray:
        """(queries of A,) True where the query's value fails at least one target."""
        out = np.zeros(self.result_a.n_queries, dtype=bool)
        for t in self.targets:
            v = self._target_values(t)
            if v is not None:
                out |= ~passes_array(v, t.op, t.threshold)
        return out

    def _order_array(self) -> IntArray:
        key = ("order", self.a, self.b, self.family, self.k, self.filter_text, self.kind,
               self.fails_target, self.sort)
        got = self._cache.get(key)
        if got is not None:
            return np.asarray(got)
        n = self.result_a.n_queries
        if self.sort == "id":
            order = self._id_order.get(self.a)
            if order is None:
                ids = np.array(self.result_a.query_ids, dtype=object)
                order = self._id_order[self.a] = np.argsort(ids, kind="stable").astype(np.int64)
        elif self.sort == "delta":
            d = self.deltas()
            order = np.argsort(np.where(np.isnan(d), np.inf, d), kind="stable")
        elif self.sort == "best":
            order = np.argsort(-self.values(), kind="stable")
        else:
            order = np.argsort(self.values(), kind="stable")
        mask: BoolArray | None = None
        if self.filter_text:
            mask = _contains(self._haystack(self.a), self.filter_text.lower())
        if self.kind is not None:
            m = self.kinds() == self.kind
            mask = m if mask is None else mask & m
        if self.fails_target:
            m = self.fails()
            mask = m if mask is None else mask & m
        if mask is not None and len(order) == n:
            order = order[mask[order]]
        self._cache = {k: v for k, v in self._cache.items() if k[0] != "order"}
        self._cache[key] = order
        return np.asarray(order, dtype=np.int64)

    def _fix_selection(self) -> None:
        """Keep the selected query when it is visible, else select the first visible one."""
        order = self._order_array()
        pos = self.result_a.ranking._index
        if self.selected is not None and self.selected in pos:
            i = pos[self.selected]
            if len(order) == 0 or bool((order == i).any()):
                return
        self.selected = self.result_a.query_ids[int(order[0])] if len(order) else None

    # ---- the plain methods ---------------------------------------------------------------
    def set_measure(self, family: str | Measure, _notify: bool = True) -> None:
        """Choose the measure family (``"nDCG"``, ``"R"``, ``"nDCG@10"`` sets K too)."""
        m = parse_measure(family) if isinstance(family, Measure) or "@" in family \
            else self.result_a._family(family)
        key = m.curve_key
        if key not in self.families:
            raise RagReportError(f"no curve for {key}; choose one of "
                                 f"{', '.join(map(str, self.families))}")
        self.family = key
        if m.cutoff is not None:
            self.set_k(m.cutoff, _notify=False)
        self._fix_selection()
        if _notify:
            self._changed()

    def set_k(self, k: int, _notify: bool = True) -> None:
        """Choose the cutoff K (1..k_max)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) \
                or not 1 <= int(k) <= self.k_max:
            raise RagReportError(f"K must be an integer from 1 to {self.k_max}, got {k!r}")
        self.k = int(k)
        self._fix_selection()
        if _notify:
            self._changed()

    def select_query(self, qid: str) -> None:
        """Select a query (any query evaluated in run A, visible or not)."""
        self.result_a.ranking.query_index(qid)  # raises for an unknown query
        self.selected = qid
        self._changed()

    def _step(self, step: int) -> str | None:
        order = self._order_array()
        if len(order) == 0:
            return self.selected
        cur = -1
        if self.selected is not None:
            hits = np.flatnonzero(order == self.result_a.ranking._index[self.selected])
            cur = int(hits[0]) if len(hits) else -1
        nxt = 0 if cur < 0 else min(max(cur + step, 0), len(order) - 1)
        self.selected = self.result_a.query_ids[int(order[nxt])]
        self._changed()
        return self.selected

    def next_query(self) -> str | None:
        """Select the next query of the visible list (stays on the last); returns its id."""
        return self._step(1)

    def prev_query(self) -> str | None:
        """Select the previous query of the visible list (stays on the first)."""
        return self._step(-1)

    def set_filter(self, text: str) -> None:
        """Show only queries whose id or text contains ``text`` (case-insensitive)."""
        self.filter_text = str(text or "").strip()
        self._fix_selection()
        self._changed()

    def set_kind(self, kind: int | str | None) -> None:
        """Show only queries of one failure kind at K (code, label, or None for all)."""
        if kind is None or kind == "" or kind == "any":
            self.kind = None
        elif isinstance(kind, str):
            codes = [c for c, label in KIND_FILTERS.items() if label == kind]
            if not codes:
                raise RagReportError(f"failure kind must be one of "
                                     f"{', '.join(map(repr, KIND_FILTERS.values()))}, "
                                     f"got {kind!r}")
            self.kind = codes[0]
        elif kind in KIND_FILTERS:
            self.kind = int(kind)
        else:
            raise RagReportError(f"failure kind code must be one of {list(KIND_FILTERS)}, "
                                 f"got {kind!r}")
        self._fix_selection()
        self._changed()

    def set_fails_target(self, on: bool) -> None:
        """Show only queries that fail at least one target at K."""
        self.fails_target = bool(on)
        self._fix_selection()
        self._changed()

    def set_sort(self, sort: str) -> None:
        """``"worst"`` (default), ``"best"``, ``"id"`` or ``"delta"`` (B - A, losses first)."""
        if sort not in SORTS:
            raise RagReportError(f"sort must be one of {', '.join(SORTS)}, got {sort!r}")
        if sort == "delta" and self.b is None:
            raise RagReportError("sorting by delta needs two runs")
        self.sort = sort
        self._fix_selection()
        self._changed()

    def set_runs(self, a: int | str, b: int | str | None = None) -> None:
        """Choose run A (the one listed and ranked) and run B (compared with A)."""
        ia = self._run_index(a)
        ib = None if b is None else self._run_index(b)
        if ib is None and len(self.results) > 1:
            ib = next(i for i in range(len(self.results)) if i != ia)
        if ib is None and self.sort == "delta":
            self.sort = "worst"
        self.a, self.b = ia, ib
        self._fix_selection()
        self._changed()

    def set_compute_tests(self, on: bool) -> None:
        """Compute the A/B view's paired tests (and, for evaluations of more than
        :data:`BAND_AUTO_QUERIES` queries, the mean-curve interval) whenever they are shown
        (on), or show them only once computed (off)."""
        self.compute_tests = bool(on)
        self._changed()

    def query_order(self, limit: int | None = None) -> list[str]:
        """The visible query ids, in list order (sorted, filtered); all of them by default."""
        order = self._order_array()
        if limit is not None:
            order = order[:limit]
        ids = self.result_a.query_ids
        return [ids[i] for i in order.tolist()]

    @property
    def n_visible(self) -> int:
        return len(self._order_array())

    def query_options(self) -> list[tuple[str, str]]:
        """(label, query id) of the rendered part of the list, plus the selection if hidden."""
        order = self._order_array()[: self.list_limit].tolist()
        r = self.result_a
        v = self.values()
        sel = self.selected
        if sel is not None and r.ranking._index[sel] not in order:
            order.append(r.ranking._index[sel])
        out = []
        for i in order:
            q = r.query_ids[i]
            text = _flat(self.queries.get(q, ""), 50)
            out.append((f"{q}  {v[i]:.3f}  {text}".rstrip(), q))
        return out

    # ---- static summary ------------------------------------------------------------------
    def summary_text(self) -> str:
        """Plain-text summary (means at K per run, targets), for front-ends without widgets."""
        lines = [f"ragreport explorer: {len(self.results)} run(s), "
                 f"{self.result_a.n_queries} queries, K={self.k} (1..{self.k_max})"]
        resamples = set()
        for j, r in enumerate(self.results):
            if not r.n_queries:
                lines.append(f"  {r.run_name}: " + ", ".join(f"{fam}@{self.k}=n/a"
                                                           for fam in self.families))
                continue
            ci = self.summary_ci(j)
            resamples.add(ci.resamples)
            parts = [f"{fam}@{self.k}={float(self.mean_curve(j, fam)[self.k - 1]):.4f} "
                     f"[{float(ci.lower[c]):.4f}, {float(ci.upper[c]):.4f}]"
                     for c, fam in enumerate(self.families)]
            lines.append(f"  {r.run_name}: " + ", ".join(parts))
        if resamples:
            lines.append(f"  [lower, upper]: {self._ci_text(resamples)}")
        return "\n".join(lines)

    @staticmethod
    def _ci_text(resamples: set[int]) -> str:
        n = ", ".join(str(x) for x in sorted(resamples))
        return (f"{CI_LEVEL:.0%} bootstrap interval of the mean over queries "
                f"({n} resamples, seed 0)")

    def summary_html(self) -> str:
        """Static HTML summary: mean of every family at K per run, worst queries of run A."""
        head = "".join(f"<th class='num'>{_e(f'{fam}@{self.k}')}</th>" for fam in self.families)
        rows = ""
        resamples = set()
        for j, r in enumerate(self.results):
            if r.n_queries:
                ci = self.summary_ci(j)
                resamples.add(ci.resamples)
                cells = "".join(
                    f"<td class='num'>{float(self.mean_curve(j, fam)[self.k - 1]):.4f}<br>"
                    f"<span class='muted rrx-ci'>[{float(ci.lower[c]):.4f}, "
                    f"{float(ci.upper[c]):.4f}]</span></td>"
                    for c, fam in enumerate(self.families))
            else:
                cells = "".join("<td class='num'>n/a</td>" for _fam in self.families)
            rows += f"<tr><td>{_e(r.run_name)}</td><td class='num'>{r.n_queries}</td>{cells}</tr>"
        note = (f"<div class='muted'>mean, and in brackets its {_e(self._ci_text(resamples))}"
                "</div>") if resamples else ""
        worst = self.query_order(limit=10)
        v = self.values()
        pos = self.result_a.ranking._index
        wrows = "".join(
            f"<tr><td>{_e(q)}</td><td>{_e(_flat(self.queries.get(q, ''), _TEXT_IN_LIST))}</td>"
            f"<td class='num'>{float(v[pos[q]]):.4f}</td></tr>" for q in worst)
        return (f"{_CSS}<div class='rrx rrx-summary'><h4>ragreport explorer (static summary)</h4>"
                f"<table><thead><tr><th>run</th><th class='num'>queries</th>{head}</tr></thead>"
                f"<tbody>{rows}</tbody></table>{note}"
                f"<h4>Worst queries of {_e(self.result_a.run_name)} by "
                f"{_e(str(self.measure))}</h4><table><thead><tr><th>query</th><th>text</th>"
                f"<th class='num'>{_e(str(self.measure))}</th></tr></thead><tbody>{wrows}"
                "</tbody></table></div>")

    # ---- views ---------------------------------------------------------------------------
    def render_list(self) -> str:
        """The query list (first :attr:`list_limit` of the visible queries)."""
        order = self._order_array()
        shown_order = order[: self.list_limit]
        r = self.result_a
        v = self.values()
        kinds = self.kinds()
        two = self.b is not None
        d = self.deltas() if two else None
        vb = self.values(self.b) if two else None
        bidx = self.b_index() if two else None
        m = _e(str(self.measure))
        head = (f"<tr><th class='num'>#</th><th>query</th><th>text</th>"
                f"<th class='num'>{m}<br><span class='muted'>{_e(r.run_name)}</span></th>")
        if two and self.result_b is not None:
            head += (f"<th class='num'>{m}<br><span class='muted'>{_e(self.result_b.run_name)}"
                     "</span></th><th class='num'>Δ (B − A)</th>")
        head += "<th>failure at K</th></tr>"
        rows = []
        sel = r.ranking._index.get(self.selected, -1) if self.selected is not None else -1
        for pos, i in enumerate(shown_order.tolist(), start=1):
            q = r.query_ids[i]
            cls = " class='sel'" if i == sel else ""
            mark = "▶ " if i == sel else ""
            row = (f"<tr{cls} data-qid='{_e(q)}'><td class='num'>{pos}</td><td>{mark}{_e(q)}</td>"
                   f"<td>{_e(_flat(self.queries.get(q, ''), _TEXT_IN_LIST))}</td>"
                   f"<td class='num'>{float(v[i]):.4f}</td>")
            if two and d is not None and vb is not None and bidx is not None:
                if bidx[i] >= 0:
                    row += (f"<td class='num'>{float(vb[bidx[i]]):.4f}</td>"
                            f"<td class='num'>{_signed(float(d[i]))}</td>")
                else:
                    row += "<td class='num muted'>—</td><td class='num muted'>not in B</td>"
            code = int(kinds[i])
            row += f"<td>{_e(FAILURE_KINDS[code]) if code else ''}</td></tr>"
            rows.append(row)
        total = r.n_queries
        filt = []
        if self.filter_text:
            filt.append(f"text contains “{_e(self.filter_text)}”")
        if self.kind is not None:
            filt.append(_e(KIND_FILTERS[self.kind]))
        if self.fails_target:
            filt.append("fails a target")
        what = f" matching {', '.join(filt)}" if filt else ""
        info = (f"showing {len(shown_order)} of {len(order)} queries{what} "
                f"({total} evaluated), sorted by {_e(self._sort_text())}")
        body = "".join(rows) if rows else \
            "<tr><td colspan='7' class='muted'>no query matches</td></tr>"
        return (f"{_CSS}<div class='rrx rrx-list'><div class='muted'>{info}</div>"
                f"<table><thead>{head}</thead><tbody>{body}</tbody></table></div>")

    def _sort_text(self) -> str:
        return {"worst": f"{self.measure}, worst first",
                "best": f"{self.measure}, best first",
                "id": "query id",
                "delta": f"Δ {self.measure} (B − A), biggest losses first"}[self.sort]

    def _grade_cell(self, grade: float | None, relevant: bool) -> str:
        if grade is None:
            return ("<td class='g-unj' title='no judgment (no qrels line): not the same as "
                    "judged not relevant'><span>? unjudged</span></td>")
        if relevant:
            return f"<td class='g-rel' title='relevant'>● {grade:g}</td>"
        return f"<td class='g-non' title='judged not relevant'>○ {grade:g}</td>"

    def _doc_cell(self, doc_id: str) -> str:
        text = self.docs.get(doc_id)
        if not text:
            return "<td class='muted'></td>" if self.docs else ""
        snip = _flat(text, _SNIPPET)
        if snip == " ".join(text.split()):
            return f"<td>{_e(snip)}</td>"
        return (f"<td><details><summary>{_e(snip)}</summary>"
                f"<div class='full'>{_e(text)}</div></details></td>")

    def _cut_row(self, n_ret: int, cols: int) -> str:
        note = f" (only {n_ret} retrieved)" if n_ret < self.k else ""
        return (f"<tr class='cut'><td colspan='{cols}'>✂ cut at K={self.k}{note}: "
                f"documents below do not count for {_e(str(self.measure))}</td></tr>")

    def _judged_text(self, i: int) -> str:
        """``3 of the top 10 unjudged · Judged@10 = 0.7000`` for the query at index ``i``."""
        from ..report.model import judged_at, unjudged_in_top

        r = self.result_a
        top, unjudged = unjudged_in_top(r, i, self.k)
        if top == 0:
            text = "nothing retrieved"
        else:
            text = (f"<span class='unj-count'>{unjudged} of the top {top} unjudged</span>")
        key = (self.a, self.k)
        if key not in self._judged:  # computed once per run and K
            self._judged[key] = judged_at(r, self.k)
        return text + f" · Judged@{self.k} = {float(self._judged[key][i]):.4f}"

    def _rows_limit(self) -> int:
        return max(self.k + 10, 20)

    def render_ranking(self) -> str:
        """Ranked list of the selected query (run A) with the cut line at K and the relevant
        documents that were not retrieved."""
        r = self.result_a
        q = self.selected
        if q is None:
            return f"{_CSS}<div class='rrx rrx-ranking' data-k='{self.k}'>no query selected</div>"
        i = r.ranking._index[q]
        n_ret = int(r.ranking.n_ret[i])
        rows = r.ranked_list(q, limit=self._rows_limit())
        has_docs = bool(self.docs)
        cols = 4 + (1 if has_docs else 0)
        head = ("<tr><th class='num'>rank</th><th>doc id</th><th class='num'>score</th>"
                "<th>grade</th>" + ("<th>passage</th>" if has_docs else "") + "</tr>")
        body = []
        for d in rows:
            score = "" if d.score is None else f"{d.score:g}"
            body.append(f"<tr><td class='num'>{d.rank}</td><td>{_e(d.doc_id)}</td>"
                        f"<td class='num'>{score}</td>{self._grade_cell(d.grade, d.relevant)}"
                        f"{self._doc_cell(d.doc_id) if has_docs else ''}</tr>")
            if d.rank == self.k:
                body.append(self._cut_row(n_ret, cols))
        if n_ret < self.k or not rows:
            body.append(self._cut_row(n_ret, cols))
        more = n_ret - len(rows)
        if more > 0:
            body.append(f"<tr><td colspan='{cols}' class='muted'>… {more} more retrieved "
                        "document(s) not shown</td></tr>")
        missing = r.missing_relevant(q)
        if missing:
            mrows = "".join(
                f"<tr><td>{_e(doc)}</td><td class='g-rel'>● {g:g}</td>"
                f"{self._doc_cell(doc) if has_docs else ''}</tr>" for doc, g in missing)
            miss = (f"<h4>Relevant documents not retrieved ({len(missing)})</h4>"
                    f"<table class='rrx-missing'><thead><tr><th>doc id</th><th>grade</th>"
                    f"{'<th>passage</th>' if has_docs else ''}</tr></thead>"
                    f"<tbody>{mrows}</tbody></table>")
        else:
            miss = ("<h4>Relevant documents not retrieved (0)</h4>"
                    "<div class='muted'>none: every relevant document was retrieved</div>")
        v = float(self.values()[i])
        code = int(self.kinds()[i])
        kind = f" · {_e(FAILURE_KINDS[code])}" if code else ""
        text = self.queries.get(q, "")
        judged = self._judged_text(i)
        return (f"{_CSS}<div class='rrx rrx-ranking' data-qid='{_e(q)}' data-k='{self.k}'>"
                f"<h4>{_e(q)}{': ' + _e(text) if text else ''}</h4>"
                f"<div class='muted'>run {_e(r.run_name)} · {_e(str(self.measure))} = "
                f"{v:.4f} · {n_ret} retrieved{kind} · {judged} · legend: ● relevant, "
                f"○ judged not "
                f"relevant, ? unjudged</div>"
                f"<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>{miss}"
                "</div>")

    def _svg(self, query_curve: FloatArray, mean_curve: FloatArray, title: str,
             band: BootstrapCI | None = None) -> str:
        w, h, left, right, top, bottom = 340, 170, 34, 10, 18, 26
        n = len(query_curve)
        lo = 0.0
        hi = max(1.0, float(np.nanmax(query_curve)) if n else 1.0,
                 float(np.nanmax(mean_curve)) if n else 1.0,
                 float(np.nanmax(band.upper)) if band is not None and n else 1.0)

        def x(k: float) -> float:
            return left + (w - left - right) * ((k - 1) / max(n - 1, 1))

        def y(v: float) -> float:
            return top + (h - top - bottom) * (1 - (v - lo) / (hi - lo))

        def line(c: FloatArray) -> str:
            return " ".join(f"{x(k + 1):.1f},{y(float(v)):.1f}" for k, v in enumerate(c.tolist()))

        kx = x(self.k)
        qv = float(query_curve[self.k - 1])
        poly = ""
        if band is not None and n:
            pts = line(np.asarray(band.upper)) + " " + " ".join(
                f"{x(k + 1):.1f},{y(float(v)):.1f}"
                for k, v in reversed(list(enumerate(np.asarray(band.lower).tolist()))))
            label = (f"{CI_LEVEL:.0%} bootstrap interval of the mean"
                     f"{_resample_note(band.resamples)}")
            poly = (f"<polygon class='rrx-band' fill='#d55e00' fill-opacity='.18' "
                    f"stroke='none' points='{pts}'><title>{_e(label)}</title></polygon>")
        ticks = "".join(
            f"<line x1='{left}' x2='{w - right}' y1='{y(t):.1f}' y2='{y(t):.1f}' "
            f"stroke='currentColor' stroke-opacity='.15'/>"
            f"<text x='{left - 4}' y='{y(t) + 3:.1f}' text-anchor='end' font-size='9' "
            f"fill='currentColor'>{t:.3g}</text>"
            # a count (Hits@K) is not in [0, 1]: its axis is labelled up to its top
            for t in ((0.0, 0.5, 1.0) if hi <= 1.0 else (0.0, hi / 2, hi)))
        return (
            f"<svg class='rrx-curve' width='{w}' height='{h}' viewBox='0 0 {w} {h}' "
            f"role='img' xmlns='http://www.w3.org/2000/svg'><title>{_e(title)}</title>{ticks}"
            f"<text x='{left}' y='11' font-size='10' fill='currentColor'>{_e(title)}</text>"
            f"{poly}<polyline fill='none' stroke='#d55e00' stroke-width='1.5' "
            f"stroke-dasharray='5 3' points='{line(mean_curve)}'/>"
            f"<polyline fill='none' stroke='#0072b2' stroke-width='2' "
            f"points='{line(query_curve)}'/>"
            f"<line x1='{kx:.1f}' x2='{kx:.1f}' y1='{top}' y2='{h - bottom}' stroke='currentColor'"
            f" stroke-dasharray='2 2'/>"
            f"<circle cx='{kx:.1f}' cy='{y(qv):.1f}' r='3.5' fill='#0072b2'/>"
            f"<text x='{kx + 3:.1f}' y='{h - bottom - 3}' font-size='9' fill='currentColor'>"
            f"K={self.k}</text>"
            f"<text x='{left}' y='{h - 8}' font-size='9' fill='currentColor'>K = 1..{n}</text>"
            f"<text x='{w - right}' y='{h - 8}' font-size='9' text-anchor='end' fill='#0072b2'>"
            f"— this query</text>"
            f"<text x='{w - right - 70}' y='{h - 8}' font-size='9' text-anchor='end' "
            f"fill='#d55e00'>- - mean</text></svg>")

    def render_panel(self) -> str:
        """Per-query panel: every family at K (query vs mean), targets pass/fail, and the
        query's metric-vs-K curve beside the mean curve with K marked (inline SVG)."""
        r = self.result_a
        q = self.selected
        if q is None:
            return f"{_CSS}<div class='rrx rrx-panel'>no query selected</div>"
        i = r.ranking._index[q]
        rows = "".join(
            f"<tr><td>{_e(f'{fam}@{self.k}')}</td>"
            f"<td class='num'>{float(r.curves[fam][i, self.k - 1]):.4f}</td>"
            f"<td class='num muted'>{float(self.mean_curve(self.a, fam)[self.k - 1]):.4f}</td>"
            "</tr>"
            for fam in self.families)
        trows = []
        for t in self.targets:
            vals = self._target_values(t)
            if vals is None:
                continue
            v = float(vals[i])
            ok = passes(v, t.op, t.threshold)
            verdict = ("<td class='pass'>✔ pass</td>" if ok else "<td class='fail'>✘ fail</td>")
            trows.append(f"<tr><td>{_e(self.target_label(t))}</td><td class='num'>{shown(v)}"
                         f"</td><td>{_e(t.op)} {t.threshold:g}</td>{verdict}</tr>")
        targets = ("<h4>Targets (this query)</h4><table class='rrx-targets'><thead><tr>"
                   "<th>measure</th><th class='num'>value</th><th>target</th><th>result</th>"
                   f"</tr></thead><tbody>{''.join(trows)}</tbody></table>") if trows else ""
        fam = self.family
        # the band is computed automatically for evaluations of up to BAND_AUTO_QUERIES
        # queries (a few ms); beyond, only once asked for ("paired tests & intervals"), so
        # that no interaction waits for a large bootstrap
        band = self._bands.get((self.a, fam))
        if band is None and (self.compute_tests or r.n_queries <= BAND_AUTO_QUERIES):
            band = self.mean_band(self.a, fam)
        svg = self._svg(r.curves[fam][i], self.mean_curve(self.a, fam),
                        f"{FAMILIES[fam.name].title} ({fam})@K: {q}", band)
        if band is not None:
            svg += (f"<div class='muted rrx-legend'><span style='color:#d55e00'>▮</span> "
                    f"shaded: {CI_LEVEL:.0%} bootstrap interval of the mean "
                    f"({_e(r.run_name)}, {band.resamples} resamples over {r.n_queries} queries,"
                    " seed 0)</div>")
        else:
            svg += (f"<div class='muted rrx-legend'>interval of the mean not computed for "
                    f"{r.n_queries:,} queries: tick “paired tests & intervals”</div>")
        return (f"{_CSS}<div class='rrx rrx-panel' data-qid='{_e(q)}' data-k='{self.k}'>"
                f"<div class='cols'><div><h4>Measures at K={self.k}</h4><table><thead><tr>"
                f"<th>measure</th><th class='num'>this query</th><th class='num'>mean</th></tr>"
                f"</thead><tbody>{rows}</tbody></table>{targets}</div><div>{svg}</div></div>"
                "</div>")

    def render_tests(self) -> str:
        """The paired comparison of B against A for the chosen measure at K, in words
        (computed on demand unless :attr:`compute_tests` is off, then only when cached)."""
        if self.b is None:
            return ""
        ra, rb = self.result_a, self.results[self.b]
        m = _e(str(self.measure))
        st = self.compare_stats(compute=self.compute_tests)
        if st is None:
            if not self.compute_tests:
                n = int((self.b_index() >= 0).sum())
                return (f"<div class='rrx-tests muted'>Paired tests of {m} (B − A) over {n} "
                        "common queries: not computed yet — tick “paired tests” to run them."
                        "</div>")
            return (f"<div class='rrx-tests muted'>Paired tests of {m}: no query in common to "
                    "compare.</div>")
        d, rt, tt = st.delta, st.randomization, st.t_test
        verdict = (f"<strong class='pass'>significant at {ALPHA:g}</strong>" if st.significant
                   else f"<strong>not significant</strong> at {ALPHA:g}")
        note = (f" (reduced from {TEST_RESAMPLES} because there are more than {TEST_LARGE} "
                "common queries)" if st.resamples != TEST_RESAMPLES else "")
        return (f"<div class='rrx-tests'><h4>Paired comparison on {m} (all {st.n} common "
                f"queries)</h4><div>mean A ({_e(ra.run_name)}) {st.mean_a:.4f} · mean B "
                f"({_e(rb.run_name)}) {st.mean_b:.4f} · Δ (B − A) "
                f"<strong>{_signed(st.mean_b - st.mean_a)}</strong>, {CI_LEVEL:.0%} bootstrap "
                f"interval [{_signed(float(d.lower))}, {_signed(float(d.upper))}]"
                f"{_e(_resample_note(d.resamples))}</div>"
                f"<div>paired randomization test p = {rt.p_value:.4f} ({st.resamples} "
                f"resamples{note}, seed 0) · paired t-test p = {tt.p_value:.4f} "
                f"(t = {tt.statistic:.3f}) → {verdict} (randomization test)</div></div>")

    def render_compare(self) -> str:
        """The paired comparison of the runs on the chosen measure at K (see
        :meth:`render_tests`), then run A and run B side by side for the selected query:
        moved documents marked with ↑/↓ and the rank change, and the per-query delta (B − A)."""
        if self.b is None:
            return (f"{_CSS}<div class='rrx rrx-compare muted'>Comparing needs two runs: "
                    "pass a list of results to the explorer.</div>")
        ra, rb = self.result_a, self.results[self.b]
        tests = self.render_tests()
        q = self.selected
        if q is None:
            return f"{_CSS}<div class='rrx rrx-compare'>{tests}no query selected</div>"
        i = ra.ranking._index[q]
        va = float(self.values()[i])
        j = int(self.b_index()[i])
        m = _e(str(self.measure))
        if j < 0:
            return (f"{_CSS}<div class='rrx rrx-compare' data-qid='{_e(q)}'>{tests}Run "
                    f"{_e(rb.run_name)} did not evaluate query {_e(q)} ({m} in "
                    f"{_e(ra.run_name)}: {va:.4f}).</div>")
        vb = float(self.values(self.b)[j])
        delta = vb - va
        limit = self._rows_limit()
        full_a = ra.ranked_list(q)
        full_b = rb.ranked_list(q)
        rank_a = {d.doc_id: d.rank for d in full_a}
        rank_b = {d.doc_id: d.rank for d in full_b}

        def table(rows: list[Any], other: dict[str, int], side: str) -> str:
            out = []
            for d in rows[:limit]:
                o = other.get(d.doc_id)
                if side == "B":
                    if o is None:
                        cls, move = "new", "new (not in A)"
                    elif o > d.rank:
                        cls, move = "up", f"↑{o - d.rank} (A: {o})"
                    elif o < d.rank:
                        cls, move = "down", f"↓{d.rank - o} (A: {o})"
                    else:
                        cls, move = "", "="
                else:
                    if o is None:
                        cls, move = "down", "dropped (not in B)"
                    elif o < d.rank:
                        cls, move = "up", f"→ B: {o} (↑{d.rank - o})"
                    elif o > d.rank:
                        cls, move = "down", f"→ B: {o} (↓{o - d.rank})"
                    else:
                        cls, move = "", "="
                attr = f" class='{cls}'" if cls else ""
                out.append(f"<tr{attr}><td class='num'>{d.rank}</td><td>{_e(d.doc_id)}</td>"
                           f"{self._grade_cell(d.grade, d.relevant)}<td>{move}</td></tr>")
                if d.rank == self.k:
                    out.append(self._cut_row(len(rows), 4))
            if len(rows) < self.k:
                out.append(self._cut_row(len(rows), 4))
            return ("<table><thead><tr><th class='num'>rank</th><th>doc id</th><th>grade</th>"
                    f"<th>moved</th></tr></thead><tbody>{''.join(out)}</tbody></table>")

        arrow = "▲" if delta > 0 else ("▼" if delta < 0 else "=")
        return (f"{_CSS}<div class='rrx rrx-compare' data-qid='{_e(q)}' data-k='{self.k}'>"
                f"{tests}<h4>{_e(q)}: A {_e(ra.run_name)} vs B {_e(rb.run_name)}</h4>"
                f"<div class='rrx-delta'>{m}: A {va:.4f} → B {vb:.4f} · Δ (B − A) "
                f"<strong>{arrow} {_signed(delta)}</strong></div>"
                f"<div class='cols'><div><h4>A: {_e(ra.run_name)}</h4>"
                f"{table(full_a, rank_b, 'A')}</div>"
                f"<div><h4>B: {_e(rb.run_name)}</h4>{table(full_b, rank_a, 'B')}</div></div>"
                "</div>")

    # ---- report --------------------------------------------------------------------------
    def write_report(self, path: str | os.PathLike[str]) -> Path:
        """Write the HTML report (as ``ragreport report`` does) for these results."""
        from ..report import build_report

        rep = build_report(self.results, self.targets, queries=self.queries or None,
                           docs=self.docs or None)
        written = rep.save(html=path)
        return written[0]
