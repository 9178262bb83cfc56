"""The explorer's state and analysis, without any widget or HTML.

:class:`ExplorerState` holds what the person chose (:class:`~.selection.Selection`: measure
family, K, filter, category, sort, selected query, runs A and B) and composes the parts that
answer for it: per-run arrays computed once (:class:`~.arrays.RunArrays`), the visible
list's order (:class:`~.order.ListOrder`), the intervals and tests
(:class:`~.stats.ViewStats`) and the payloads the front end draws (:class:`~.views.ListView`:
``meta``, ``head``, windows of rows, ``ranking``; :class:`~.panels.PanelView`: ``summary``,
``panel``, ``compare``). Changing the measure, K or a filter re-indexes and re-sorts numpy
arrays (no Python loop over the queries); nothing here builds HTML.

>>> from ragreport import evaluate
>>> r = evaluate({"a": {"x": 1}, "b": {"y": 1}}, {"a": ["x"], "b": ["x", "y"]}, ["P@1"])
>>> s = ExplorerState(r, targets=[], measure="P", k=1)
>>> s.query_order(), s.selected, s.meta()["k_max"]
(['b', 'a'], 'b', 2)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure
from ..parallel import Mapper
from ..present import measure_label, shown
from ..settings import StatsSettings
from ..targets import Target
from . import limits
from ._data import BoolArray, FloatArray, IntArray
from .alone import QueryCurves
from .arrays import RunArrays
from .inputs import ExplorerInputs
from .judging import Judging
from .limits import CATEGORIES, SORTS
from .order import ListOrder, deltas
from .panels import PanelView
from .selection import Selection
from .stats import ViewStats
from .views import ListView

__all__ = ["CATEGORIES", "SORTS", "ExplorerState"]


def _chosen(name: str) -> Any:
    """One of the selection's choices (``set_*`` checks a new value; assigning does not)."""
    return property(lambda self: getattr(self.selection, name),
                    lambda self, value: setattr(self.selection, name, value),
                    doc=f"The chosen ``{name}`` (see :class:`~.selection.Selection`).")


def _input(name: str) -> Any:
    """One of the explorer's inputs, read once (read-only: the parts share it)."""
    return property(lambda self: getattr(self.inputs, name),
                    doc=f"The explorer's ``{name}`` (see :class:`~.inputs.ExplorerInputs`).")


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
    judgments : path, optional
        A JSONL file the judgments made in place (:meth:`judge`) are appended to, source
        ``human`` (see :mod:`.judging`); read first when it exists, its judgments counting
        from the start. Without it, nothing can be judged.
    judge_grades : list of int, optional
        The grades a person can give, one key each (0-9; default 0 to the qrels' largest
        grade, at least 0-1).
    """

    a = _chosen("a")
    b = _chosen("b")
    family = _chosen("family")
    k = _chosen("k")
    sort = _chosen("sort")
    filter_text = _chosen("filter_text")
    category = _chosen("category")
    slice = _chosen("slice")
    fails_only = _chosen("fails_only")
    selected = _chosen("selected")
    results = _input("results")
    run_names = _input("run_names")
    settings = _input("settings")
    targets = _input("targets")
    queries = _input("queries")
    docs = _input("docs")
    slices = _input("slices")
    k_max = _input("k_max")
    families = _input("families")

    def __init__(self, results: EvaluationResult | Sequence[EvaluationResult],
                 targets: Any = None, queries: Any = None, docs: Any = None, *,
                 measure: str | None = None, k: int | None = None,
                 slices: Any = None, settings: StatsSettings | None = None,
                 judgments: str | os.PathLike[str] | None = None,
                 judge_grades: Sequence[int] | None = None) -> None:
        inputs = ExplorerInputs.build(results, targets, queries, docs, slices=slices,
                                      settings=settings)
        self.judging: Judging | None = None
        if judgments is not None:
            self.judging = Judging(judgments, inputs.results, judge_grades)
            if self.judging.count:  # the file's earlier judgments count from the start
                inputs = replace(inputs, results=self.judging.evaluate())
        self._build(inputs, Selection(inputs))
        if measure is not None:
            self.set_measure(measure)
        if k is not None:
            self.set_k(k)
        self._select_first()

    def _build(self, inputs: ExplorerInputs, selection: Selection) -> None:
        """The parts over ``inputs``, with ``selection`` (kept when the results change)."""
        self.inputs = inputs
        self.arrays = RunArrays(inputs)
        self.selection = selection
        self.listing = ListOrder(self.arrays)
        self.stats = ViewStats(self.arrays, all(r.n_queries <= limits.INLINE_STATS_QUERIES
                                                for r in inputs.results))
        self.curves = QueryCurves(self.arrays)
        self.list_view = ListView(self.arrays, self.selection, self.listing)
        self.panels = PanelView(self.stats, self.curves, self.selection)

    def use_results(self, results: Sequence[EvaluationResult]) -> None:
        """Show ``results`` (the same runs evaluated again, e.g. with new judgments) with
        everything the person chose kept; the list's order and every value, interval and
        badge are computed again from them."""
        old = self.inputs
        if [r.run_name for r in results] != old.run_names:
            raise RagReportError("use_results needs the same runs, in the same order")
        inputs = replace(old, results=list(results))
        selection = self.selection
        selection.inputs = inputs  # the same runs, families and depth: the choices hold
        inline, workers = self.stats.inline, self.stats.workers
        version = self.listing.version
        self._build(inputs, selection)
        self.stats.inline, self.stats.workers = inline, workers
        # the order is computed again under a new version: the view's cached rows are stale
        self.listing.version = version
        if self.selected and self.position(self.selection.a, self.selected) < 0:
            self._select_first()

    def judge(self, qid: str, doc_id: str, grade: int) -> None:
        """Judge an unjudged document of a query (source ``human``): the judgment is
        appended to the ``judgments`` file, and every run is evaluated again with it."""
        if self.judging is None:
            raise RagReportError("judging needs a judgments file: Explorer(..., "
                                 "judgments=\"labels.jsonl\")")
        self.use_results(self.judging.judge(qid, doc_id, grade))

    def _select_first(self) -> None:
        order = self.order()
        self.selection.selected = self.result_a.query_ids[int(order[0])] if len(order) else ""

    # ---- what the parts hold -------------------------------------------------------------
    @property
    def stats_inline(self) -> bool:
        """Whether the intervals and tests are computed on every change (small evaluations);
        otherwise in the background or when forced."""
        return self.stats.inline

    @stats_inline.setter
    def stats_inline(self, inline: bool) -> None:
        self.stats.inline = bool(inline)

    @property
    def workers(self) -> Mapper | None:
        """Where the resamples and tests run (None: here; the widget gives a process)."""
        return self.stats.workers

    @workers.setter
    def workers(self, workers: Mapper | None) -> None:
        self.stats.workers = workers

    @property
    def order_version(self) -> int:
        """Counts the changes of the visible order."""
        return self.listing.version

    @property
    def result_a(self) -> EvaluationResult:
        return self.inputs.results[self.selection.a]

    @property
    def result_b(self) -> EvaluationResult | None:
        b = self.selection.b
        return None if b < 0 else self.inputs.results[b]

    @property
    def measure(self) -> Measure:
        """The chosen family at the chosen K (``nDCG@10``)."""
        return self.selection.measure

    def values(self, run: int | None = None, family: Measure | None = None,
               k: int | None = None) -> FloatArray:
        """(queries,) values of a family at K for a run (default: run A, the chosen measure
        and K): a column of the curve up to its width, the measure itself beyond it."""
        sel = self.selection
        return self.arrays.values(sel.a if run is None else run,
                                  sel.family if family is None else family,
                                  sel.k if k is None else k)

    def kinds(self, run: int | None = None, k: int | None = None) -> npt.NDArray[np.int8]:
        """Failure-kind code of every query of a run at K (see ``FAILURE_KINDS``)."""
        sel = self.selection
        return self.arrays.kinds(sel.a if run is None else run, sel.k if k is None else k)

    def target_values(self, t: Target, run: int | None = None) -> FloatArray | None:
        """(queries,) values of a target's measure as configured (its own K), or None when
        the result lacks the measure."""
        return self.arrays.target_values(t, self.selection.a if run is None else run)

    def fails(self, run: int | None = None) -> BoolArray:
        """(queries,) True where the query fails at least one configured target."""
        return self.arrays.fails(self.selection.a if run is None else run)

    def slice_mask(self, run: int | None = None) -> BoolArray:
        """(queries,) of a run (default A): is the query in the chosen slice?"""
        sel = self.selection
        return self.arrays.slice_mask(sel.a if run is None else run, sel.slice)

    def b_index(self) -> IntArray:
        """For each query of run A, its position in run B (-1 when B did not evaluate it)."""
        if self.selection.b < 0:
            raise RagReportError("comparing needs two runs")
        return self.arrays.b_index(self.selection.a, self.selection.b)

    def position(self, run: int, qid: str) -> int:
        """Index of a query id among a run's queries; -1 when the run did not evaluate it."""
        return self.arrays.position(run, qid)

    def deltas(self) -> FloatArray:
        """(queries of A,) value of B minus value of A at K (NaN where B lacks the query)."""
        self.b_index()
        return deltas(self.arrays, self.selection)

    def common_values(self) -> tuple[FloatArray, FloatArray]:
        """Values of the measure at K in run A and run B on their common queries."""
        sel = self.selection
        self.b_index()
        return self.arrays.paired_values(sel.a, sel.b, sel.family, sel.k)

    def query_result(self, run: int, qid: str) -> EvaluationResult | None:
        """The query evaluated alone (see :meth:`.alone.QueryCurves.result`)."""
        return self.curves.result(run, qid)

    # ---- the visible order ---------------------------------------------------------------
    def order(self) -> IntArray:
        """Indices (into run A's queries) of the visible list, in order."""
        return self.listing.order(self.selection)

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
        return self.listing.selected_pos(self.selection)

    # ---- the plain methods ---------------------------------------------------------------
    def set_measure(self, family: str | Measure) -> None:
        """Choose the measure family (``"nDCG"``; ``"nDCG@10"`` sets K too)."""
        self.selection.set_measure(family)

    def set_k(self, k: int) -> None:
        """Choose the cutoff K (1..k_max)."""
        self.selection.set_k(k)

    def select_query(self, qid: str) -> None:
        """Select a query of run A (visible or not); ``""`` clears the selection."""
        if not isinstance(qid, str):
            raise RagReportError(f"query id must be text, got {type(qid).__name__}")
        if qid and self.position(self.selection.a, qid) < 0:
            raise RagReportError(f"query {qid!r} was not evaluated in run "
                                 f"{self.result_a.run_name!r}")
        self.selection.selected = qid

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
        self.selection.selected = self.result_a.query_ids[int(order[nxt])]
        return self.selection.selected

    def next_query(self) -> str:
        """Select the next query of the visible list; returns its id."""
        return self._step(1)

    def prev_query(self) -> str:
        """Select the previous query of the visible list; returns its id."""
        return self._step(-1)

    def set_filter(self, text: str) -> None:
        """Show only queries whose id or text contains ``text`` (case-insensitive)."""
        self.selection.set_filter(text)

    def set_category(self, category: str | int | None) -> None:
        """Show only one category (an id of :data:`CATEGORIES`, a failure-kind code or
        label); ``""`` or None for all."""
        self.selection.set_category(category)

    set_kind = set_category

    def set_slice(self, name: str | None) -> None:
        """Show only the queries of one slice (a name of ``meta()["slices"]``); ``""`` or
        None for all."""
        self.selection.set_slice(name)

    def set_fails_target(self, on: bool) -> None:
        """Show only queries that fail at least one configured target."""
        self.selection.set_fails_target(on)

    def set_sort(self, sort: str) -> None:
        """One of :data:`SORTS` (the delta sorts need a run B); ``"delta"`` = losses first."""
        self.selection.set_sort(sort)

    def set_runs(self, a: int | str, b: int | str | None = None) -> None:
        """Choose run A (listed and ranked) and run B (compared with A; -1 for none; None:
        the first other run). A = B is refused."""
        sel = self.selection
        old_a = sel.a
        sel.set_runs(a, b)
        if sel.a != old_a and sel.selected and self.position(sel.a, sel.selected) < 0:
            self._select_first()

    def swap_runs(self) -> None:
        """Exchange run A and run B (needs a run B)."""
        if self.selection.b < 0:
            raise RagReportError("swapping needs a run B")
        self.set_runs(self.selection.b, self.selection.a)

    # ---- the dicts the front end draws -----------------------------------------------------
    def meta(self) -> dict[str, Any]:
        """What does not change with the view: runs, families, K range, categories, sorts."""
        out = self.list_view.meta()
        out["judging"] = self.judging.meta() if self.judging is not None else None
        return out

    def rows(self, start: int, end: int) -> dict[str, Any]:
        """Columns of the visible rows ``start:end`` (at most ``limits.ROWS_MAX``; clamped)."""
        return self.list_view.rows(start, end)

    def head(self, view_top: int = 0) -> dict[str, Any]:
        """The first ``limits.HEAD_ROWS`` rows of the visible list and the windows the view
        draws next (see :meth:`.views.ListView.head`).

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
        return self.list_view.head(view_top)

    def ranking(self) -> dict[str, Any]:
        """The selected query's whole ranking in run A (and run B, with each row's move)."""
        out = self.list_view.ranking()
        if self.judging is not None and out:
            mine = self.judging.mine
            for part in (out, out.get("b") or {}):
                if "rows" in part:
                    part["rows"]["judged_here"] = [(out["qid"], d) in mine
                                                   for d in part["rows"]["doc_id"]]
        return out

    def passage(self, qid: str, doc_id: str) -> str:
        """Full text of a document (``""`` when none was given)."""
        if not isinstance(doc_id, str):
            raise RagReportError(f"doc_id must be text, got {type(doc_id).__name__}")
        return self.inputs.docs.get(doc_id, "")

    def summary(self, force: bool = False) -> dict[str, Any]:
        """Mean (and interval) of the measure at K per run; the targets for run A (and B).

        Above ``INLINE_STATS_QUERIES`` queries the intervals are left out (``lo``/``hi``
        None, ``pending`` true) until computed: ``force=True``, or :meth:`compute_stats`.
        """
        return self.panels.summary(force)

    def compare(self, force: bool = False) -> dict[str, Any]:
        """The paired comparison of B against A for the measure at K ({} without a run B);
        above ``INLINE_STATS_QUERIES`` queries the test is left out (``pending``) unless
        ``force`` (or once :meth:`compute_stats` ran)."""
        return self.panels.compare(force)

    def panel(self) -> dict[str, Any]:
        """The selected query: the configured targets, the measures at K, its curve against
        the mean curve, its failure kind and Judged@K."""
        return self.panels.panel()

    def mean_ks(self) -> list[int]:
        """The Ks past the evaluated curves at which the mean curve is computed."""
        return self.panels.mean_ks()

    def compute_means(self) -> None:
        """Compute the mean curve at :meth:`mean_ks` for every run (the current family)."""
        self.panels.compute_means()

    # ---- statistics off the interaction path ---------------------------------------------
    def compute_stats(self) -> None:
        """Compute the intervals and the paired test of the current view (the slow part for
        large evaluations), so that :meth:`summary` and :meth:`compare` include them."""
        self.stats_job()()

    def warm(self) -> None:
        """Compute what the next interactions may need and that does not depend on the view:
        every run's failure kinds and id order, run A's search haystack (the widget calls
        this off the interaction path for large evaluations)."""
        self.stats.warm(self.selection.a, self.selection.k)

    def stats_job(self, stale: Callable[[], bool] | None = None) -> Callable[[], bool]:
        """A function computing the intervals and the paired test of the view as it is now
        (runs, measure, K captured), safe to run in another thread while the view moves on;
        afterwards :meth:`summary` and :meth:`compare` of that view include them. It stops
        between two steps once ``stale()`` says the view has moved on, and returns whether
        it finished."""
        sel = self.selection
        return self.stats.job((sel.a, sel.b, sel.family, sel.k), self.mean_ks(), stale)

    def new_tags(self) -> bool:
        """Whether run A's "unjudged" tags, left to the background
        (:meth:`.arrays.RunArrays.unjudged_later`), were computed since the list was last
        sent: then its rows change, under a new order version (the view fetches them
        again)."""
        a, arrays = self.selection.a, self.arrays
        if a in arrays.tags_sent or not arrays.unjudged_later(a) \
                or not arrays.memo.has(("unjudged", a)):
            return False
        arrays.tags_sent.add(a)
        self.listing.version += 1
        return True

    # ---- report and text -----------------------------------------------------------------
    def write_report(self, path: str | os.PathLike[str]) -> Path:
        """Write the HTML report (as ``ragreport report`` does) for these results."""
        from ..report import build_report

        i = self.inputs
        rep = build_report(i.results, i.targets, queries=i.queries or None, docs=i.docs or None,
                           slices=i.slices, settings=i.settings)
        written = rep.save(html=path)
        return Path(written[0])

    def summary_text(self) -> str:
        """One line: runs, queries, the measure at K and run A's mean."""
        mean = self.panels.mean(self.selection.a)
        shown_mean = "n/a" if mean is None else shown(mean)
        n_runs = len(self.inputs.results)
        return (f"ragreport Explorer: {n_runs} run{'s' if n_runs != 1 else ''}, "
                f"{self.result_a.n_queries} queries, "
                f"{measure_label(self.selection.family, self.selection.k)} mean "
                f"{shown_mean} (run {self.result_a.run_name})")
