"""The explorer's front end on a blank Chromium page, bridged to a real Python ``Explorer``.

No JupyterLab and no kernel: the page imports the widget's ES module (``Explorer._esm``, as
anywidget does, from a Blob URL) and renders it with a fake anywidget model
``{get, set, on, off, send, save_changes}``. The fake model is bridged to a real
``ragreport.Explorer`` through Playwright's ``expose_function``:

- ``save_changes()`` sends the traits the page changed; Python applies them with the widget's
  own ``set_state`` (what the Jupyter comm calls), so the widget's observers validate them;
- ``send(msg)`` calls ``Explorer.handle_message(msg)``;
- every trait change Python makes (recorded by an observer, in order, without the echo of the
  page's own values) comes back with the replies, firing ``change:<name>`` and then
  ``msg:custom`` on the page, as the widget manager would. The answer crosses as one JSON
  string (Playwright's own serialisation of nested values costs ~100 ms per 30 kB).

So a test drives the real view with the real state, end to end, in a few hundred ms. Usage::

    with launch() as browser:
        ep = ExplorerPage.open(browser, explorer, width=1400)
        ep.page.locator("[data-role=query-list] [role=option]").nth(2).click()
        ep.settle()
        ep.log.assert_clean()
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from browser import PageLog

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

__all__ = ["CONTRAST_JS", "SYNC_TRAITS", "THEMES", "Bridge", "ExplorerPage"]

#: The traits of the explorer protocol (brief-issue14b section B).
SYNC_TRAITS = ("meta", "measure", "k", "run_a", "run_b", "sort", "filter_text", "category",
               "fails_only", "selected", "view_top", "order_version", "n_visible",
               "selected_pos", "head",
               "summary", "ranking", "panel", "compare", "report", "error")

#: JupyterLab 4's own theme variables (light and dark), as its theme extensions set them.
THEMES = {
    "light": """
      --jp-layout-color0: white; --jp-layout-color1: white; --jp-layout-color2: #eee;
      --jp-ui-font-color0: #000; --jp-ui-font-color1: rgba(0,0,0,.87);
      --jp-ui-font-color2: rgba(0,0,0,.54); --jp-ui-font-color3: rgba(0,0,0,.38);
      --jp-border-color0: #bdbdbd; --jp-border-color1: #bdbdbd; --jp-border-color2: #e0e0e0;
      --jp-brand-color1: #1976d2;
      --jp-ui-font-family: system-ui, -apple-system, "Segoe UI", helvetica, arial, sans-serif;
      --jp-code-font-family: monospace;
      background: white; color: rgba(0,0,0,.87); color-scheme: light;""",
    "dark": """
      --jp-layout-color0: #111; --jp-layout-color1: #212121; --jp-layout-color2: #424242;
      --jp-ui-font-color0: #fff; --jp-ui-font-color1: rgba(255,255,255,.87);
      --jp-ui-font-color2: rgba(255,255,255,.54); --jp-ui-font-color3: rgba(255,255,255,.38);
      --jp-border-color0: #616161; --jp-border-color1: #616161; --jp-border-color2: #424242;
      --jp-brand-color1: #2196f3;
      --jp-ui-font-family: system-ui, -apple-system, "Segoe UI", helvetica, arial, sans-serif;
      --jp-code-font-family: monospace;
      background: #111; color: rgba(255,255,255,.87); color-scheme: dark;""",
}

#: WCAG contrast of every text under a root (tests/contrast.js, shared with the lab tests).
CONTRAST_JS = (Path(__file__).parent / "contrast.js").read_text("utf-8")

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>explorer</title>
<style>body {{ margin: 0; {theme} }} #host {{ {width} }}</style></head>
<body data-jp-theme-light="{light}" data-jp-theme-name="JupyterLab {Name}">
<div id="host"></div></body></html>"""

# The fake anywidget model: Backbone-like get/set/on/off, save_changes/send through the bridge.
_BOOT = """async ({esm, state}) => {
  const attrs = Object.assign({}, state);
  const handlers = new Map();
  const dirty = new Set();
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const fire = (ev, ...args) => { for (const cb of [...(handlers.get(ev) || [])]) cb(...args); };
  const rr = window.__rr = {attrs, saves: [], sends: [], replies: [], trace: [], inflight: 0,
                            applied: 0, last: 0, pyMs: 0,
                            handlerCount: () => [...handlers.values()]
                              .reduce((n, s) => n + s.size, 0)};
  rr.apply = ({events, replies, ms}) => {
    rr.last = performance.now();
    rr.pyMs += ms || 0;
    for (const [name, value] of events) {
      rr.trace.push([name, name === "report" ? value : null]);
      const changed = !same(attrs[name], value);
      attrs[name] = value;
      if (changed) fire(`change:${name}`, model, value);
    }
    for (const r of replies) { rr.replies.push(r); fire("msg:custom", r, []); }
    rr.applied += 1;
  };
  const call = (fn, arg) => {
    rr.inflight += 1; rr.last = performance.now();
    fn(arg).then((out) => { rr.inflight -= 1; rr.apply(JSON.parse(out)); },
                 (err) => { rr.inflight -= 1; console.error(`bridge: ${err}`); });
  };
  const kernelSend = window.rrSend;
  const model = {
    get: (name) => attrs[name],
    set: (name, value) => {
      rr.last = performance.now();
      const changed = !same(attrs[name], value);
      attrs[name] = value; dirty.add(name);
      if (changed) fire(`change:${name}`, model, value);
    },
    on: (ev, cb) => {
      if (!handlers.has(ev)) handlers.set(ev, new Set());
      handlers.get(ev).add(cb);
    },
    off: (ev, cb) => {
      if (!ev) handlers.clear();
      else if (!cb) handlers.delete(ev);
      else handlers.get(ev)?.delete(cb);
    },
    save_changes: () => {
      const changes = {};
      for (const name of dirty) changes[name] = attrs[name];
      dirty.clear();
      if (Object.keys(changes).length === 0) return;
      rr.saves.push(changes);
      call(window.rrSave, changes);
    },
    send: (msg) => {
      // a kernel sets ``report`` busy and the comm delivers it at once, before the write
      // ends; the bridge returns Python's changes only with its reply, so the page would see
      // the request unanswered and idle for the whole write (its watchdog gives up after 4 s
      // under load). Mark it busy here as the kernel's first update would (not traced: the
      // reply carries Python's own busy, then done).
      // (Only with the bridge as the kernel: a test replacing rrSend has no kernel.)
      if (msg && msg.type === "report" && window.rrSend === kernelSend) {
        attrs.report = {...(attrs.report || {}), state: "busy"};
      }
      rr.sends.push(msg); call(window.rrSend, msg);
    },
  };
  // what the user does counts as movement for settle(): a keystroke that only restarts a
  // throttle's timer (the filter's trailing send) touches no model call
  for (const ev of ["input", "keydown", "change", "pointerdown"]) {
    document.addEventListener(ev, () => { rr.last = performance.now(); }, true);
  }
  rr.model = model;
  const url = URL.createObjectURL(new Blob([esm], {type: "text/javascript"}));
  const mod = await import(url);
  URL.revokeObjectURL(url);
  const host = document.getElementById("host");
  rr.cleanup = mod.default.render({model, el: host});
  return true;
}"""


def _json(value: Any) -> Any:
    """The value as the comm would carry it: strict JSON (no NaN, no numpy scalars)."""
    return json.loads(json.dumps(value, allow_nan=False))


@dataclass
class Bridge:
    """The Python end: applies the page's changes and messages to the widget, records what
    Python changed in reply. Anything that goes wrong is kept in :attr:`errors` (and re-raised,
    so the page sees a rejected promise and logs a console error)."""

    widget: Any
    errors: list[str] = field(default_factory=list)
    calls: list[tuple[str, Any]] = field(default_factory=list)
    _events: list[tuple[str, Any]] = field(default_factory=list)
    _sent: list[Any] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.widget.observe(self._record, names=list(SYNC_TRAITS))
        # the messages Python sends on its own (a report written in a thread): delivered with
        # the next reply or push, as the comm would deliver them
        self.widget.send = self._sent_by_python

    def _sent_by_python(self, content: Any, buffers: Any = None) -> None:
        with self._lock:
            self._sent.append(_json(content))

    def sent(self) -> list[Any]:
        """The messages Python sent on its own since the last call."""
        with self._lock:
            out, self._sent = self._sent, []
        return out

    def _record(self, change: dict[str, Any]) -> None:
        with self._lock:
            self._events.append((change["name"], change["new"]))

    def state(self) -> dict[str, Any]:
        """The protocol traits, as JSON."""
        return {name: _json(getattr(self.widget, name)) for name in SYNC_TRAITS}

    def take(self, echo: dict[str, Any] | None = None) -> list[list[Any]]:
        """Trait changes since the last call, in order, minus the page's own values."""
        echo = echo or {}
        with self._lock:
            events, self._events = self._events, []
        out: list[list[Any]] = []
        for name, value in events:
            if name in echo and _json(value) == echo[name]:
                continue
            out.append([name, _json(value)])
        return out

    def save(self, changes: dict[str, Any]) -> str:
        self.calls.append(("save", changes))
        t0 = time.perf_counter()
        try:
            self.widget.set_state(changes)
            return json.dumps({"events": self.take(changes), "replies": [],
                               "ms": (time.perf_counter() - t0) * 1000})
        except Exception as exc:
            self.errors.append(f"save {changes!r:.200}: {type(exc).__name__}: {exc}")
            raise

    def send(self, msg: dict[str, Any]) -> str:
        self.calls.append(("send", msg))
        t0 = time.perf_counter()
        try:
            replies = [_json(r) for r in self.widget.handle_message(msg)]
            return json.dumps({"events": self.take(), "replies": replies + self.sent(),
                               "ms": (time.perf_counter() - t0) * 1000})
        except Exception as exc:
            self.errors.append(f"send {msg!r:.200}: {type(exc).__name__}: {exc}")
            raise


@dataclass
class ExplorerPage:
    """A page showing one explorer view, with its bridge and log."""

    page: Page
    bridge: Bridge
    log: PageLog

    @classmethod
    def open(cls, browser: Browser, widget: Any, *, width: int = 1400, height: int = 900,
             host_width: int | None = None, theme: str = "light") -> ExplorerPage:
        """A new page of ``width`` x ``height`` rendering ``widget``'s view."""
        page = browser.new_page(viewport={"width": width, "height": height})
        log = PageLog.attach(page)
        bridge = Bridge(widget)
        page.expose_function("rrSave", bridge.save)
        page.expose_function("rrSend", bridge.send)
        html = _PAGE.format(theme=THEMES[theme], light="true" if theme == "light" else "false",
                            Name=theme.title(),
                            width=f"width: {host_width}px;" if host_width else "")
        page.set_content(html)
        state = widget.get_state(["_esm", "_css"])
        page.add_style_tag(content=state["_css"])
        bridge.take()  # whatever happened before the view existed is in the first state
        page.evaluate(_BOOT, {"esm": state["_esm"], "state": bridge.state()})
        ep = cls(page, bridge, log)
        ep.settle()
        return ep

    # ---- waiting -----------------------------------------------------------------------
    def settle(self, timeout: float = 5000, quiet: float = 200) -> None:
        """Wait until no bridge call is in flight and nothing moved for ``quiet`` ms (longer
        than the view's debounces: a keyboard selection or K saved a little later), then
        for two frames."""
        self.page.wait_for_function(
            "(quiet) => window.__rr && window.__rr.inflight === 0 && "
            "performance.now() - window.__rr.last > quiet", arg=quiet, timeout=timeout)
        self.page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                           "requestAnimationFrame(() => r(true))))")
        self.page.wait_for_function("window.__rr.inflight === 0", timeout=timeout)

    def push(self) -> None:
        """Send the changes Python made on its own (a method called by the test, a thread)."""
        self.page.evaluate("(b) => window.__rr.apply(b)",
                           {"events": self.bridge.take(), "replies": self.bridge.sent()})
        self.settle()

    # ---- reading ------------------------------------------------------------------------
    def role(self, name: str) -> Locator:
        return self.page.locator(f".rr-explorer [data-role={name}]")

    @property
    def root(self) -> Locator:
        return self.page.locator(".rr-explorer")

    def options(self) -> Locator:
        return self.page.locator(".rr-explorer [role=listbox] [role=option]")

    def option(self, qid: str) -> Locator:
        return self.page.locator(f".rr-explorer [role=option][data-query-id={json.dumps(qid)}]")

    def visible_qids(self) -> list[str]:
        """Query ids of the option rows inside the list's visible box, top to bottom."""
        return list(self.page.evaluate("""() => {
          const lb = document.querySelector('.rr-explorer [role=listbox]');
          const box = lb.getBoundingClientRect();
          return [...lb.querySelectorAll('[role=option][data-query-id]')]
            .filter(o => { const r = o.getBoundingClientRect();
                           return r.top >= box.top - 1 && r.bottom <= box.bottom + 1; })
            .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
            .map(o => o.dataset.queryId); }"""))

    def selected_option(self) -> dict[str, Any] | None:
        """The option shown selected: its query id and whether it is inside the list's box."""
        out: dict[str, Any] | None = self.page.evaluate("""() => {
          const lb = document.querySelector('.rr-explorer [role=listbox]');
          const o = lb.querySelector('[role=option][aria-selected=true]');
          if (!o) return null;
          const b = lb.getBoundingClientRect(), r = o.getBoundingClientRect();
          return {qid: o.dataset.queryId || null, pos: Number(o.getAttribute('aria-posinset')),
                  inView: r.top >= b.top - 1 && r.bottom <= b.bottom + 1,
                  active: lb.getAttribute('aria-activedescendant') === o.id}; }""")
        return out

    def ranking_qid(self) -> str:
        return str(self.role("ranking-qid").text_content())

    def contrast(self) -> dict[str, Any]:
        out: dict[str, Any] = self.page.evaluate(CONTRAST_JS, ".rr-explorer")
        return out

    def screenshot(self, path: Path) -> Path:
        self.page.screenshot(path=str(path))
        return path
