"""The explorer widget: an anywidget shell over :class:`~.state.ExplorerState`.

The front end (``static/explorer.js``, an ES module, and ``static/explorer.css``) draws what
the traits hold and asks for more rows, passages and the report with custom messages; this
module only maps the state to traits and messages. Every trait is small and JSON-able, so a
notebook saved with its widget state shows the last view again without a kernel; the MIME
bundle also carries a one-line ``text/plain`` and a static ``text/html`` snapshot (for
nbconvert, GitHub and hosts without a widget manager).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets as t

from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..settings import StatsSettings
from . import limits
from .background import StatsWorker
from .snapshot import render_snapshot
from .state import ExplorerState

__all__ = ["DEFAULT_REPORT", "Explorer"]

_STATIC = Path(__file__).parent / "static"
#: Where the report button writes when no path is given (in the working folder).
DEFAULT_REPORT = "ragreport-report.html"
#: The thread that writes the report the button asked for.
REPORT_THREAD = "ragreport-explorer-report"


def _css() -> str:
    from .. import palette

    return palette.css_variables() + "\n" + (_STATIC / "explorer.css").read_text("utf-8")


class Explorer(anywidget.AnyWidget):
    """Interactive per-query explorer of one or several runs (an anywidget).

    The parameters (``results``, ``targets``, ``queries``, ``docs``, ``measure``, ``k``,
    ``slices``, ``settings``, ``judgments``, ``judge_grades``) are those of
    :class:`~ragreport.explorer.state.ExplorerState`, which holds the state. With
    ``judgments="labels.jsonl"`` an unjudged document of the ranking can be judged in place
    (its grade's key, or a click on a grade): each judgment is appended to that file
    (source ``human``) and the values, intervals and badges follow.

    Display the object in a notebook. The plain methods (``set_k(5)``, ``select_query(q)``,
    ``swap_runs()``...) update the traits, and so the view; the view sets the same traits.
    """

    _esm = _STATIC / "explorer.js"
    _css = _css()

    meta = t.Dict().tag(sync=True)
    measure = t.Unicode("").tag(sync=True)
    k = t.Int(1).tag(sync=True)
    run_a = t.Int(0).tag(sync=True)
    run_b = t.Int(-1).tag(sync=True)
    sort = t.Unicode("worst").tag(sync=True)
    filter_text = t.Unicode("").tag(sync=True)
    category = t.Unicode("").tag(sync=True)
    #: The query slice the list shows (``""``: all; ``meta["slices"]`` lists them).
    slice = t.Unicode("").tag(sync=True)
    fails_only = t.Bool(False).tag(sync=True)
    selected = t.Unicode("").tag(sync=True)
    #: The first row of the list on screen, set by the view (sent with its next change), so
    #: that ``head`` after an order change holds the rows the view will draw there.
    view_top = t.Int(0).tag(sync=True)
    order_version = t.Int(0).tag(sync=True)
    n_visible = t.Int(0).tag(sync=True)
    selected_pos = t.Int(-1).tag(sync=True)
    head = t.Dict().tag(sync=True)
    summary = t.Dict().tag(sync=True)
    ranking = t.Dict().tag(sync=True)
    panel = t.Dict().tag(sync=True)
    compare = t.Dict().tag(sync=True)
    report = t.Dict().tag(sync=True)
    error = t.Unicode("").tag(sync=True)
    #: marks the snapshot output shown beside the live view (which hides it)
    snapshot_id = t.Unicode("").tag(sync=True)

    _INPUTS = ("measure", "k", "run_a", "run_b", "sort", "filter_text", "category",
               "slice", "fails_only", "selected")

    def __init__(self, results: EvaluationResult | Sequence[EvaluationResult],
                 targets: Any = None, queries: Any = None, docs: Any = None, *,
                 measure: str | None = None, k: int | None = None,
                 slices: Any = None, settings: StatsSettings | None = None,
                 judgments: str | os.PathLike[str] | None = None,
                 judge_grades: Sequence[int] | None = None) -> None:
        state = ExplorerState(results, targets=targets, queries=queries, docs=docs,
                              measure=measure, k=k, slices=slices, settings=settings,
                              judgments=judgments, judge_grades=judge_grades)
        super().__init__()
        self._state = state
        self._syncing = False
        #: held while a change is applied and while the background publishes: the worker
        #: thread never reads the state halfway through a change (nor the list's version)
        self._lock = threading.RLock()
        self._stats = StatsWorker(state, self._stats_ready, self._stats_failed)
        self._report_thread: threading.Thread | None = None
        with self.hold_sync():
            self._syncing = True
            try:
                self.meta = state.meta()
                self.snapshot_id = str(self.model_id)
                self.report = {"state": "idle", "path": "", "url": "", "message": ""}
                self._push_inputs()
                self._push_view(everything=True)
            finally:
                self._syncing = False
        self.observe(self._on_input, names=list(self._INPUTS))
        self.on_msg(self._on_msg)
        self._start_stats()

    # ---- state -> traits -----------------------------------------------------------------
    @property
    def state(self) -> ExplorerState:
        """The plain state (selection and analysis) behind the widget."""
        return self._state

    def _push_inputs(self) -> None:
        s = self._state
        self.measure = str(s.family)
        self.k = s.k
        self.run_a = s.a
        self.run_b = s.b
        self.sort = s.sort
        self.filter_text = s.filter_text
        self.category = s.category
        self.slice = s.slice
        self.fails_only = s.fails_only
        self.selected = s.selected

    def _push_view(self, everything: bool = False, *, order: bool = True,
                   selection: bool = True) -> None:
        s = self._state
        if order or everything:
            s.order()
            self.order_version = s.order_version
            self.n_visible = s.n_visible
            self.head = s.head(self.view_top)  # clamped there
        self.selected_pos = s.selected_pos
        if selection or everything:
            self.ranking = s.ranking()
            self.panel = s.panel()
        if everything:
            self.summary = s.summary()
            self.compare = s.compare()

    def _apply(self, action: Callable[[], Any], *, everything: bool = True,
               order: bool = True, selection: bool = True, quiet: bool = False) -> Any:
        """Run a state change, then put the state into the traits; a refused change leaves
        the state as it was and sets :attr:`error` (then raises; ``quiet``: only raises, for
        a request whose error reply says it)."""
        with self._lock:
            return self._apply_locked(action, everything=everything, order=order,
                                      selection=selection, quiet=quiet)

    def _apply_locked(self, action: Callable[[], Any], *, everything: bool, order: bool,
                      selection: bool, quiet: bool) -> Any:
        self._busy()
        try:
            out = action()
        except RagReportError as exc:
            if quiet:
                raise
            with self.hold_sync():
                self._syncing = True
                try:
                    self._push_inputs()
                    self.error = str(exc)
                finally:
                    self._syncing = False
            raise
        with self.hold_sync():
            self._syncing = True
            try:
                self._push_inputs()
                self._push_view(everything, order=order, selection=selection)
                self.error = ""
            finally:
                self._syncing = False
        if everything:
            self._start_stats()
        return out

    # ---- the public methods --------------------------------------------------------------
    def set_measure(self, family: str) -> None:
        """Choose the measure family (``"nDCG"``; ``"nDCG@10"`` sets K too)."""
        self._apply(lambda: self._state.set_measure(family))

    def set_k(self, k: int) -> None:
        """Choose the cutoff K (1 to the deepest ranking)."""
        self._apply(lambda: self._state.set_k(k))

    def select_query(self, qid: str) -> None:
        """Select a query of run A (visible in the list or not)."""
        self._apply(lambda: self._state.select_query(qid), everything=False, order=False)

    def next_query(self) -> str:
        """Select the next query of the list (an error at the end); returns its id."""
        out: str = self._apply(self._state.next_query, everything=False, order=False)
        return out

    def prev_query(self) -> str:
        """Select the previous query of the list (an error at the start); returns its id."""
        out: str = self._apply(self._state.prev_query, everything=False, order=False)
        return out

    def set_filter(self, text: str) -> None:
        """Show only queries whose id or text contains ``text`` (case-insensitive)."""
        self._apply(lambda: self._state.set_filter(text), everything=False, selection=False)

    def set_category(self, category: str | int | None) -> None:
        """Show one category of queries (see ``meta["categories"]``; ``""`` for all)."""
        self._apply(lambda: self._state.set_category(category), everything=False,
                    selection=False)

    set_kind = set_category

    def set_slice(self, name: str | None) -> None:
        """Show only the queries of one slice (see ``meta["slices"]``; ``""`` for all)."""
        self._apply(lambda: self._state.set_slice(name), everything=False, selection=False)

    def set_fails_target(self, on: bool) -> None:
        """Show only queries failing at least one configured target."""
        self._apply(lambda: self._state.set_fails_target(on), everything=False,
                    selection=False)

    def set_sort(self, sort: str) -> None:
        """Sort the list: ``worst``, ``best``, ``id``, ``delta_desc`` or ``delta_asc``."""
        self._apply(lambda: self._state.set_sort(sort), everything=False, selection=False)

    def set_runs(self, a: int | str, b: int | str | None = None) -> None:
        """Choose run A and run B (-1: none; None: the first other run); A = B is refused."""
        self._apply(lambda: self._state.set_runs(a, b))

    def swap_runs(self) -> None:
        """Exchange run A and run B."""
        self._apply(self._state.swap_runs)

    def judge(self, qid: str, doc_id: str, grade: int) -> None:
        """Judge an unjudged document of a query (source ``human``; needs ``judgments=``):
        the judgment is appended to the file, every run is evaluated again with it, and the
        values, intervals and badges the view shows follow."""
        self._judge(qid, doc_id, grade, quiet=False)

    def _judge(self, qid: Any, doc_id: Any, grade: Any, *, quiet: bool) -> None:
        """A judgment applied (``quiet``: a refusal only raises, for the view's request)."""
        self._apply(lambda: self._state.judge(qid, doc_id, grade), quiet=quiet)
        self.meta = self._state.meta()  # the count of judgments

    def query_order(self, limit: int | None = None) -> list[str]:
        """The visible query ids, in list order."""
        return self._state.query_order(limit)

    def write_report(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the HTML report of these results (default ``ragreport-report.html`` in the
        working folder); the ``report`` trait goes busy, then done (with a link) or error.
        The front end gets the written HTML in a message and links to it as a ``blob:`` URL
        (a link that opens the report in any host: JupyterLab, Notebook, VS Code)."""
        written = self._write_report(path)
        self.send(self._report_message(None))
        return written

    def _report_message(self, mid: Any) -> dict[str, Any]:
        """The ``report`` reply: the trait's fields, and the HTML written (when done)."""
        out: dict[str, Any] = {"type": "report", "id": mid, **self.report}
        if self.report.get("state") == "done":
            with contextlib.suppress(OSError):  # removed meanwhile: the path stays as text
                out["html"] = Path(self.report["path"]).read_text(encoding="utf-8")
        return out

    def _write_report(self, path: str | os.PathLike[str] | None = None) -> Path:
        target = Path(path if path else DEFAULT_REPORT)
        self.report = {"state": "busy", "path": str(target), "url": "",
                       "message": "Writing report…"}
        try:
            written = self._state.write_report(target)
        except (RagReportError, OSError) as exc:
            self.report = {"state": "error", "path": str(target), "url": "",
                           "message": f"could not write the report: {exc}"}
            raise
        self.report = {"state": "done", "path": str(written.resolve()),
                       "url": _url(written), "message": f"wrote {written}"}
        return written

    # ---- traits set by the front end -------------------------------------------------------
    def _on_input(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        name, new = change["name"], change["new"]
        s = self._state
        if name in ("run_a", "run_b") and (s.a, s.b) == (self.run_a, self.run_b):
            return  # the second observer of a swap (both set in one message): already applied
        actions: dict[str, tuple[Callable[[], Any], dict[str, bool]]] = {
            "measure": (lambda: s.set_measure(new), {}),
            "k": (lambda: s.set_k(new), {}),
            # both traits as they are now: a swap from the view sets run_a and run_b in one
            # message, and the observers run after both are set
            "run_a": (lambda: s.set_runs(self.run_a, self.run_b), {}),
            "run_b": (lambda: s.set_runs(self.run_a, self.run_b), {}),
            "sort": (lambda: s.set_sort(new), {"everything": False, "selection": False}),
            "filter_text": (lambda: s.set_filter(new),
                            {"everything": False, "selection": False}),
            "category": (lambda: s.set_category(new),
                         {"everything": False, "selection": False}),
            "slice": (lambda: s.set_slice(new), {"everything": False, "selection": False}),
            "fails_only": (lambda: s.set_fails_target(new),
                           {"everything": False, "selection": False}),
            "selected": (lambda: s.select_query(new), {"everything": False, "order": False}),
        }
        action, how = actions[name]
        with contextlib.suppress(RagReportError):  # reverted, and shown in `error`
            self._apply(action, **how)

    # ---- custom messages -------------------------------------------------------------------
    def handle_message(self, msg: Any) -> list[dict[str, Any]]:
        """The replies to one message of the front end (protocol: docs/guides/explorer.md).

        ``{type: "rows", id, start, end}``, ``{type: "passage", id, qid, doc_id}``,
        ``{type: "report", id, path?}`` and ``{type: "judge", id, qid, doc_id, grade}``;
        anything else gets ``{type: "error", id, message}``.
        """
        if not isinstance(msg, dict):
            return [_error(None, f"a message must be an object, got {type(msg).__name__}")]
        mid = msg.get("id")
        if isinstance(mid, bool) or not isinstance(mid, (str, int, float)):
            mid = None
        kind = msg.get("type")
        try:
            if kind == "rows":
                return [self._rows_reply(mid, msg)]
            if kind == "passage":
                return [self._passage_reply(mid, msg)]
            if kind == "report":
                return [self._report_reply(mid, msg)]
            if kind == "judge":
                return [self._judge_reply(mid, msg)]
        except RagReportError as exc:
            return [_error(mid, str(exc))]
        return [_error(mid, f"unknown message type {str(kind)[:40]!r}; expected rows, "
                            "passage, report or judge")]

    def _rows_reply(self, mid: Any, msg: dict[str, Any]) -> dict[str, Any]:
        start, end = msg.get("start"), msg.get("end")
        for name, v in (("start", start), ("end", end)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v \
                    or abs(v) > 2**53:
                raise RagReportError(f"rows: {name} must be an integer, got {v!r:.40}")
        s = self._state
        lo = max(0, int(start))  # type: ignore[arg-type]
        hi = max(lo, min(int(end), lo + limits.ROWS_MAX))  # type: ignore[arg-type]
        rows = s.rows(lo, hi)
        return {"type": "rows", "id": mid, "order_version": s.order_version,
                "start": rows["start"], "total": s.n_visible, "rows": rows}

    def _passage_reply(self, mid: Any, msg: dict[str, Any]) -> dict[str, Any]:
        qid, doc = msg.get("qid", ""), msg.get("doc_id")
        if not isinstance(doc, str):
            raise RagReportError(f"passage: doc_id must be text, got {doc!r:.40}")
        if not isinstance(qid, str):
            raise RagReportError(f"passage: qid must be text, got {qid!r:.40}")
        return {"type": "passage", "id": mid, "qid": qid, "doc_id": doc,
                "text": self._state.passage(qid, doc)}

    def _judge_reply(self, mid: Any, msg: dict[str, Any]) -> dict[str, Any]:
        """A judgment from the view: appended, the runs evaluated again, the traits pushed;
        the reply says it was taken (an error reply says why not: nothing was written)."""
        qid, doc, grade = msg.get("qid"), msg.get("doc_id"), msg.get("grade")
        self._judge(qid, doc, grade, quiet=True)  # the state checks each
        return {"type": "judge", "id": mid, "qid": qid, "doc_id": doc, "grade": grade,
                "count": self.meta["judging"]["count"]}

    def _report_reply(self, mid: Any, msg: dict[str, Any]) -> dict[str, Any]:
        """The report button: the report is written in a thread, so the kernel keeps
        answering the view meanwhile; the reply says busy, and the ``report`` trait and a
        message (with the HTML, as :meth:`write_report` sends it) follow when it is done."""
        path = msg.get("path")
        if path is not None and not isinstance(path, str):
            raise RagReportError(f"report: path must be text, got {path!r:.40}")
        if self._report_thread is not None and self._report_thread.is_alive():
            return {"type": "report", "id": mid, **self.report}  # one write at a time
        self.report = {"state": "busy", "path": str(Path(path or DEFAULT_REPORT)),
                       "url": "", "message": "Writing report…"}
        reply = {"type": "report", "id": mid, **self.report}  # before the thread changes it
        self._report_thread = threading.Thread(
            target=self._write_in_background, args=(path or None,), name=REPORT_THREAD,
            daemon=True)
        self._report_thread.start()
        return reply

    def _write_in_background(self, path: str | None) -> None:
        try:
            self._write_report(path)
        except (RagReportError, OSError):  # the report trait says so
            pass
        except Exception as exc:  # a bug must not leave the button busy
            self.report = {"state": "error", "path": str(Path(path or DEFAULT_REPORT)),
                           "url": "", "message": f"could not write the report: "
                                                 f"{type(exc).__name__}: {exc}"}
        with contextlib.suppress(Exception):  # the comm may be closed meanwhile
            self.send(self._report_message(None))

    def wait_report(self, timeout: float | None = None) -> None:
        """Wait until the report the button asked for is written (at once when none is)."""
        thread = self._report_thread
        if thread is not None:
            thread.join(timeout)

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        self._busy()
        with self._lock:
            replies = self.handle_message(content)
        for reply in replies:
            self.send(reply)

    # ---- intervals and tests of large evaluations, off the interaction path ----------------
    def _start_stats(self) -> None:
        self._stats.start()

    def _busy(self) -> None:
        """An interaction has just been handled: background work waits a moment."""
        self._stats.busy()

    def _stats_ready(self) -> None:
        s = self._state
        with self._lock, self.hold_sync():
            self.summary = s.summary()
            self.compare = s.compare()
            self.panel = s.panel()
            if s.new_tags():  # the list's rows now carry the unjudged tags: the same order
                self.order_version = s.order_version
                self.head = {**s.head(self.view_top), "same_order": True}

    def _stats_failed(self, exc: BaseException) -> None:
        """A failure of the background statistics: the ``error`` trait says it on one line,
        and the summary and the comparison stop saying "pending"."""
        first = (str(exc).strip().splitlines() or [""])[0]
        message = f"could not compute the intervals and tests: {type(exc).__name__}"
        message += f": {first[:200]}" if first else ""
        with self._lock, self.hold_sync():
            self.summary = {**self.summary, "pending": False}
            if self.compare:
                self.compare = {**self.compare, "pending": False}
            self.error = message

    def wait_stats(self, timeout: float | None = None) -> None:
        """Wait for the background intervals and tests of the current view (large
        evaluations only; returns at once otherwise, or after ``timeout`` seconds)."""
        self._stats.wait(timeout)

    @property
    def stats_running(self) -> bool:
        """Whether the background worker thread is alive (False after :meth:`close`)."""
        return self._stats.running

    def close(self) -> None:
        """Close the widget (its comm) and stop the background worker."""
        if hasattr(self, "_stats"):  # else __init__ did not get that far
            self._stats.close()
        super().close()

    # ---- display -------------------------------------------------------------------------
    def __repr__(self) -> str:
        return self._state.summary_text()

    def snapshot_html(self, *, marked: bool = False) -> str:
        """The static HTML snapshot of the last view (summary, the first rows of the list,
        the selected ranking through K), from the traits; ``marked``: carrying the
        ``snapshot_id`` by which the live view hides it."""
        return render_snapshot(self.meta, self.summary, self.head, self.ranking, self.panel,
                               self.compare, k=self.k, n_visible=self.n_visible,
                               filter_text=self.filter_text,
                               snapshot_id=self.snapshot_id if marked else "")

    def _ipython_display_(self) -> None:
        """In a notebook kernel, two outputs: the static snapshot, then the live view, which
        hides the snapshot. Where the view cannot come back (the kernel restarted and no
        widget state was saved, or an HTML export read offline), the snapshot stands in its
        place instead of "model not found" or an empty box. Elsewhere, the one bundle."""
        import IPython.display

        display: Any = IPython.display.display  # (untyped)
        if not _in_kernel():
            got = self._repr_mimebundle_()
            if got is not None:
                display(got[0], metadata=got[1], raw=True)
            return
        got = self._view_bundle()
        if got is None:
            return
        display({"text/html": self.snapshot_html(marked=True)}, raw=True)
        display(got[0], metadata=got[1], raw=True)

    def _view_bundle(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The widget view's bundle with the one-line ``text/plain`` (no snapshot)."""
        got = super()._repr_mimebundle_(**kwargs)
        if got is None:
            return None
        data, meta = got if isinstance(got, tuple) else (got, {})
        return {**data, "text/plain": repr(self)}, dict(meta)

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        got = self._view_bundle(**kwargs)
        if got is None:
            return None
        data, meta = got
        return {**data, "text/html": self.snapshot_html()}, meta


def _in_kernel() -> bool:
    """Whether this is an IPython kernel (JupyterLab, Notebook, VS Code, Colab), not a
    terminal."""
    import IPython.core.getipython

    get_ipython: Any = IPython.core.getipython.get_ipython  # (untyped)
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _error(mid: Any, message: str) -> dict[str, Any]:
    return {"type": "error", "id": mid, "message": message}


def _url(path: Path) -> str:
    """A link to a written file: ``files/<path relative to the working folder>`` (what
    JupyterLab serves, when the kernel runs in the server's root), else a ``file://`` URL."""
    full = path.resolve()
    try:
        rel = full.relative_to(Path.cwd().resolve())
    except ValueError:
        return full.as_uri()
    from urllib.parse import quote

    return "files/" + quote(rel.as_posix())
