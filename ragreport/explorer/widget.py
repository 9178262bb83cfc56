"""The explorer widget: a thin ipywidgets shell over :class:`~.state.ExplorerState`.

Standard ipywidgets only (no custom JavaScript), so it runs in JupyterLab, Notebook 7, VS Code
and Colab. Every control's observer calls one plain method of the state, then the views are
re-rendered into the ``value`` of ``HTML`` widgets. The plain methods can be called directly
too (``explorer.set_k(5)``): the controls follow.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as w

from ..errors import RagReportError
from ..result import EvaluationResult
from .state import BAND_AUTO_QUERIES, KIND_FILTERS, SORTS, TEST_RESAMPLES, ExplorerState

__all__ = ["Explorer"]

#: The paired tests run on every change by default only while queries x resamples stays
#: below this (about 50 ms); above it they run once "paired tests" is ticked.
TESTS_AUTO_CELLS = 2_000_000

_SORT_LABELS = {"worst": "worst first", "best": "best first", "id": "query id",
                "delta": "Δ B − A (losses first)"}


class Explorer(ExplorerState):
    """Interactive per-query explorer of one or several runs (ipywidgets).

    Parameters are those of :class:`~ragreport.explorer.state.ExplorerState`. Display the
    object (or :attr:`widget`) in a notebook. The views are ``HTML`` widgets:
    :attr:`list_html`, :attr:`ranking_html`, :attr:`panel_html`, :attr:`compare_html`.
    """

    def __init__(self, results: EvaluationResult | Sequence[EvaluationResult],
                 targets: Any = None, queries: Any = None, docs: Any = None,
                 **kwargs: Any) -> None:
        self._syncing = True
        super().__init__(results, targets=targets, queries=queries, docs=docs, **kwargs)
        if self.b is not None:
            self.compute_tests = \
                int((self.b_index() >= 0).sum()) * TEST_RESAMPLES <= TESTS_AUTO_CELLS
        elif self.result_a.n_queries > BAND_AUTO_QUERIES:
            self.compute_tests = False  # large single run: intervals on request
        self._build()
        self._syncing = False
        self._refresh()

    # ---- construction --------------------------------------------------------------------
    def _build(self) -> None:
        lay = w.Layout
        self.measure_dropdown = w.Dropdown(
            options=[(str(f), str(f)) for f in self.families], value=str(self.family),
            description="measure", layout=lay(width="190px"))
        self.k_slider = w.IntSlider(value=self.k, min=1, max=self.k_max, step=1,
                                    description="K", continuous_update=False,
                                    layout=lay(width="320px"))
        sorts = [s for s in SORTS if s != "delta" or self.b is not None]
        self.sort_dropdown = w.Dropdown(options=[(_SORT_LABELS[s], s) for s in sorts],
                                        value=self.sort, description="sort",
                                        layout=lay(width="250px"))
        self.filter_box = w.Text(value="", placeholder="query id or text", description="filter",
                                 continuous_update=False, layout=lay(width="260px"))
        self.kind_dropdown = w.Dropdown(
            options=[("any", "")] + [(label, label) for label in KIND_FILTERS.values()],
            value="", description="failure", layout=lay(width="300px"))
        self.fails_checkbox = w.Checkbox(value=False, description="fails a target at K",
                                         indent=False, layout=lay(width="170px"))
        self.query_dropdown = w.Dropdown(options=self.query_options(), value=self.selected,
                                         description="query", layout=lay(width="520px"))
        self.query_dropdown.add_class("rrx-query-select")
        self.k_slider.add_class("rrx-k-slider")
        self.prev_button = w.Button(description="◀ prev", layout=lay(width="80px"))
        self.next_button = w.Button(description="next ▶", layout=lay(width="80px"))
        names = [(n, i) for i, n in enumerate(self.run_names)]
        self.run_a_dropdown = w.Dropdown(options=names, value=self.a, description="run A",
                                         layout=lay(width="240px"))
        self.run_b_dropdown = w.Dropdown(options=names, value=self.b if self.b is not None
                                         else 0, description="run B",
                                         layout=lay(width="240px"))
        self.tests_checkbox = w.Checkbox(value=self.compute_tests,
                                         description="paired tests & intervals",
                                         indent=False, layout=lay(width="200px"))
        self.report_path = w.Text(value="ragreport-report.html", description="report",
                                  layout=lay(width="360px"))
        self.report_button = w.Button(description="write HTML report", icon="save",
                                      layout=lay(width="170px"))
        self.status_html = w.HTML(value="")
        self.list_html = w.HTML(layout=lay(max_height="420px", overflow="auto"))
        self.ranking_html = w.HTML()
        self.panel_html = w.HTML()
        self.compare_html = w.HTML()

        self._observe(self.measure_dropdown, lambda v: self.set_measure(v))
        self._observe(self.k_slider, lambda v: self.set_k(int(v)))
        self._observe(self.sort_dropdown, lambda v: self.set_sort(v))
        self._observe(self.filter_box, lambda v: self.set_filter(v))
        self._observe(self.kind_dropdown, lambda v: self.set_kind(v or None))
        self._observe(self.fails_checkbox, lambda v: self.set_fails_target(bool(v)))
        self._observe(self.query_dropdown, self._query_picked)
        self._observe(self.run_a_dropdown, lambda v: self._set_runs_from_controls())
        self._observe(self.run_b_dropdown, lambda v: self._set_runs_from_controls())
        self._observe(self.tests_checkbox, lambda v: self.set_compute_tests(bool(v)))
        self.prev_button.on_click(lambda _b: self.prev_query())
        self.next_button.on_click(lambda _b: self.next_query())
        self.report_button.on_click(lambda _b: self._write_report_clicked())

        rows: list[w.Widget] = [
            w.HBox([self.measure_dropdown, self.k_slider, self.sort_dropdown]),
            w.HBox([self.filter_box, self.kind_dropdown, self.fails_checkbox]),
        ]
        if len(self.results) > 1:
            rows.append(w.HBox([self.run_a_dropdown, self.run_b_dropdown,
                                self.tests_checkbox]))
        elif not self.compute_tests:  # a large single run: intervals on request
            rows.append(w.HBox([self.tests_checkbox]))
        rows += [
            w.HBox([self.prev_button, self.query_dropdown, self.next_button]),
            w.HBox([w.VBox([self.list_html], layout=lay(width="48%")),
                    w.VBox([self.ranking_html], layout=lay(width="52%"))]),
            self.panel_html,
        ]
        if len(self.results) > 1:
            rows.append(self.compare_html)
        rows.append(w.HBox([self.report_path, self.report_button, self.status_html]))
        self.widget = w.VBox(rows)

    def _observe(self, control: w.Widget, action: Callable[[Any], Any]) -> None:
        def handler(change: dict[str, Any]) -> None:
            if self._syncing:
                return
            try:
                action(change["new"])
            except RagReportError as exc:
                self.status_html.value = f"<span style='color:#d55e00'>{html.escape(str(exc))}"\
                                         "</span>"

        control.observe(handler, names="value")

    def _query_picked(self, qid: str | None) -> None:
        if qid is not None:
            self.select_query(qid)

    def _set_runs_from_controls(self) -> None:
        a, b = int(self.run_a_dropdown.value), int(self.run_b_dropdown.value)
        self.set_runs(a, b)

    def _write_report_clicked(self) -> None:
        path = self.report_path.value.strip()
        try:
            written = self.write_report(path)
        except (RagReportError, OSError) as exc:
            self.status_html.value = (f"<span style='color:#d55e00'>could not write the report: "
                                      f"{html.escape(str(exc))}</span>")
            return
        self.status_html.value = f"wrote <code>{html.escape(str(written))}</code>"

    # ---- sync ----------------------------------------------------------------------------
    def _changed(self) -> None:
        if not hasattr(self, "widget"):
            return
        self._refresh()

    def _refresh(self) -> None:
        """Put the state into the controls (without firing observers), then re-render."""
        prev, self._syncing = self._syncing, True
        try:
            self.measure_dropdown.value = str(self.family)
            self.k_slider.value = self.k
            sorts = [s for s in SORTS if s != "delta" or self.b is not None]
            if [v for _l, v in self.sort_dropdown.options] != sorts:
                self.sort_dropdown.options = [(_SORT_LABELS[s], s) for s in sorts]
            self.sort_dropdown.value = self.sort
            self.filter_box.value = self.filter_text
            self.kind_dropdown.value = "" if self.kind is None else KIND_FILTERS[self.kind]
            self.fails_checkbox.value = self.fails_target
            self.run_a_dropdown.value = self.a
            self.tests_checkbox.value = self.compute_tests
            if self.b is not None:
                self.run_b_dropdown.value = self.b
            options = self.query_options()
            if list(self.query_dropdown.options) != options:
                self.query_dropdown.options = options
            self.query_dropdown.value = self.selected
            self.list_html.value = self.render_list()
            self.ranking_html.value = self.render_ranking()
            self.panel_html.value = self.render_panel()
            if len(self.results) > 1:
                self.compare_html.value = self.render_compare()
        finally:
            self._syncing = prev

    # ---- display -------------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.summary_text()
        bundle["text/html"] = self.summary_html()
        return bundle

    def __repr__(self) -> str:
        return self.summary_text()
