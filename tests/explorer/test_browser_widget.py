"""The explorer in a real JupyterLab, in headless Chromium, driven as a user would.

JupyterLab runs on 127.0.0.1 (``tests/labserver.py``: free port, no token, temporary config,
runtime, IPython and home folders, "save widget state" on, stopped by PID in any case). One
notebook shows ``ragreport.Explorer(results, queries=..., docs=...)`` on the embedded example
(two runs: A/B view). The tests, in file order on the same page, click a query row, use the
arrow keys and ``j``/``k``, type in the filter (live narrowing, the empty state), move K, swap
the runs and refuse A = B, write the report and follow its link; after each step they read what
is visible and ask the kernel (a silent execute request, queued behind the widget's comm
messages) for the explorer's state. Then screenshots at 1,400 x 900 and 700 px wide in the
light and dark themes, each with a WCAG contrast check of every text of the widget against the
background it is drawn on; the layout at 1,400 x 900 (query list, cut line and panel on screen
together); persistence: the saved notebook reopened after the kernel is gone, an untrusted copy
(the ``text/html`` snapshot) and ``jupyter nbconvert --to html`` read offline; the README
screenshot (``scripts/screenshot_explorer.py``) regenerates.

When Chromium, Playwright or JupyterLab cannot run, these tests fail; they never skip.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from browser import PageLog, launch
from labserver import (
    CONTRAST_JS,
    JupyterLab,
    LabError,
    kernel_run,
    open_notebook,
    run_all_cells,
    set_theme,
)
from paths import ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

pytestmark = pytest.mark.browser



def _script() -> Any:
    """``scripts/screenshot_explorer.py`` as a module (it writes the notebook and frames the
    view for the README screenshot; the tests reuse both)."""
    path = ROOT / "scripts" / "screenshot_explorer.py"
    spec = importlib.util.spec_from_file_location("screenshot_explorer", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("screenshot_explorer", mod)
    spec.loader.exec_module(mod)
    return mod


shots = _script()

NOTEBOOK_CODE = """\
import ragreport
from ragreport.examples import example_files

files = example_files()
results = [ragreport.evaluate(files.qrels, run) for run in files.runs]
explorer = ragreport.Explorer(results, queries=files.queries, docs=files.docs)
explorer
"""
STATE_CODE = ("import json as _j; print(_j.dumps({_n: getattr(explorer, _n) for _n in "
              "('selected', 'k', 'measure', 'run_a', 'run_b', 'filter_text', 'n_visible', "
              "'error', 'selected_pos', 'report')}))")
OPTION = "[data-role=query-list] [role=option][data-query-id]"
SAVE_STATE = {"@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True}}


@dataclass
class View:
    """The notebook page with the explorer, its log, the server, where screenshots go."""

    page: Page
    log: PageLog
    lab: JupyterLab
    shots: Path
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Locator:
        return self.page.locator(".rr-explorer").first

    def outside_requests(self, log: PageLog | None = None) -> list[str]:
        """Requests that went anywhere but this JupyterLab (or data:/blob:)."""
        host = self.lab.base.split("//", 1)[1]
        return [u for u in (log or self.log).requests
                if not u.startswith((self.lab.base, f"ws://{host}", "data:", "blob:"))]

    def role(self, name: str) -> Locator:
        return self.root.locator(f"[data-role={name}]")

    def state(self) -> dict[str, Any]:
        out = kernel_run(self.page, STATE_CODE).strip().splitlines()
        return dict(json.loads(out[-1]))

    def kernel_has(self, name: str, want: Any, timeout: float = 15.0) -> None:
        """Until the kernel's trait ``name`` equals ``want`` (asserted at the deadline).

        The page's trait changes reach the kernel through ipywidgets' sync, which holds a
        change back while an earlier one is still being processed; a state read sent at once
        can overtake it. So the kernel following is awaited, never read once."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.state()[name]
            if got == want or time.monotonic() > deadline:
                break
            self.page.wait_for_timeout(100)
        assert got == want, f"the kernel's {name} is {got!r} after {timeout} s, want {want!r}"

    def options(self) -> Locator:
        return self.root.locator(OPTION)

    def selected_option(self) -> Locator:
        return self.root.locator(f"{OPTION}[aria-selected=true]")

    def wait(self, js: str, arg: Any = None, timeout: float = 15_000) -> None:
        self.page.wait_for_function(js, arg=arg, timeout=timeout)

    def wait_ranking(self, qid: str) -> None:
        """Until the ranking column shows ``qid``'s ranking (it came back from the kernel)."""
        self.wait("""q => {
            const r = document.querySelector('.rr-explorer [data-role=ranking]');
            const id = r && r.querySelector('[data-role=ranking-qid]');
            return id && id.textContent === q && r.getAttribute('aria-busy') !== 'true'
              && r.querySelectorAll('[role=row][data-doc-id]').length > 0;
        }""", qid)


def save_notebook(view: View) -> Path:
    """Save the notebook from JupyterLab (with the widget state: "save widget state" is on)."""
    view.page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
    view.wait("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    return view.lab.root / "explorer.ipynb"


def _fail(exc: Exception) -> None:
    pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    work = tmp_path_factory.mktemp("lab")
    root = work / "root"
    root.mkdir()
    shots.write_notebook(root / "explorer.ipynb", NOTEBOOK_CODE)
    server = JupyterLab(root, work, settings=SAVE_STATE)
    try:
        server.start()
    except LabError as exc:
        _fail(exc)
    try:
        yield server
    finally:
        server.stop()  # kernels deleted, /api/shutdown, then kill by PID


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch() as b:
        yield b


@pytest.fixture(scope="module")
def view(lab: JupyterLab, browser: Browser) -> Iterator[View]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    log = PageLog.attach(page)
    out = lab.work / "screenshots"
    out.mkdir()
    v = View(page, log, lab, out)
    try:
        open_notebook(page, lab.base, "explorer.ipynb")
        run_all_cells(page)
        page.wait_for_selector(f".rr-explorer {OPTION}", timeout=30_000)
    except Exception:
        page.screenshot(path=str(out / "failure-open.png"))
        print(f"screenshot: {out / 'failure-open.png'}\nlab log:\n{lab.log_tail()}")
        raise
    yield v
    page.screenshot(path=str(out / "last.png"))
    ctx.close()


# ---- the contrast checker itself, on colours whose ratios are known ----------------------
def test_contrast_checker_on_known_colours(browser: Browser) -> None:
    page = browser.new_page()
    page.set_content("""<body style="margin:0;background:#fff"><div id=r>
      <p id=a style="color:#000">black on white</p>
      <p style="color:#777">grey 777 on white</p>
      <p style="color:#767676">grey 767676 on white</p>
      <div style="background:#111"><span style="color:#fff">white on 111</span></div>
      <div style="background:rgba(0,0,0,.5)">
        <span style="color:#fff">white on half black</span></div>
      <p style="color:rgba(0,0,0,.5)">half black text</p>
      <p style="display:none;color:#fff">hidden</p>
      <button disabled style="color:#ccc">disabled</button>
      <input value="typed" style="color:#767676;background:#fff">
      <svg width=90 height=20><text x=0 y=15 fill="#ff0000">svg red</text></svg>
      <h1 style="font-size:30px;color:#949494">large grey</h1></div></body>""")
    got = {i["text"]: i for i in page.evaluate(CONTRAST_JS, "#r")["items"]}
    page.close()
    expect = {"black on white": 21.0, "grey 777 on white": 4.48, "grey 767676 on white": 4.54,
              "white on 111": 18.88, "white on half black": 3.95, "half black text": 3.95,
              "typed": 4.54, "svg red": 4.0, "large grey": 3.03}
    assert set(got) == set(expect)  # hidden and disabled text left out
    for text, ratio in expect.items():
        assert got[text]["ratio"] == pytest.approx(ratio, abs=0.06), (text, got[text])
    assert got["large grey"]["need"] == 3 and got["black on white"]["need"] == 4.5


# ---- the explorer in JupyterLab -----------------------------------------------------------
def test_renders_with_roles_and_state(view: View) -> None:
    root = view.root
    assert root.get_attribute("data-lm-suppress-shortcuts") is not None
    listbox = view.role("query-list")
    assert listbox.get_attribute("role") == "listbox" and listbox.get_attribute("aria-label")
    st = view.state()
    assert st["n_visible"] == 41 and st["run_a"] == 0 and st["run_b"] == 1
    opts = view.options()
    assert opts.count() >= 8
    first = opts.first
    assert first.get_attribute("aria-setsize") == "41"
    assert first.get_attribute("aria-posinset") == "1"
    # the list is virtualised: not every one of the 41 rows is in the DOM at once... or all
    # are (41 rows fit the overscan); either way each row carries its query id
    qids = [o.get_attribute("data-query-id") for o in opts.all()]
    assert all(q and re.fullmatch(r"q\d\d", q) for q in qids), qids
    # the selected query (Python's default) is marked and its ranking shown
    assert view.selected_option().count() == 1
    assert view.selected_option().get_attribute("data-query-id") == st["selected"]
    view.wait_ranking(st["selected"])
    # measure labels carry K; K goes to the deepest ranking (50 here), not 20
    k = st["k"]
    labels = view.role("measure").locator("option").all_inner_texts()
    assert labels and all(lbl.endswith(f"@{k}") or "@" not in lbl for lbl in labels), labels
    assert f"nDCG@{k}" in labels
    assert view.role("k-slider").get_attribute("max") == "50"
    # the static snapshot is an output of its own before the view: hidden while the view lives
    snap = view.page.locator("[data-rr-snapshot]")
    assert snap.count() == 1 and not snap.is_visible()
    assert view.role("k-input").input_value() == str(k)
    # the ranking: a grid, the cut line after row K with its text, unjudged rows marked
    grid = view.role("ranking").locator("[role=grid]").first
    assert grid.count() == 1
    cut = view.role("ranking").locator("[data-role=cut]").first
    assert f"cut-off at K = {k}" in (cut.get_attribute("aria-label") or "") + cut.inner_text()
    # the panel: the configured targets and the measures at K, the curve with ticks
    panel = view.role("panel")
    text = panel.inner_text()
    assert "Targets (this query)" in text and f"Measures at K = {k}" in text
    assert panel.locator("svg").count() >= 1
    assert panel.locator("svg text").count() >= 4  # axis tick labels
    assert view.log.page_errors == [], view.log.page_errors
    assert view.outside_requests() == []


def test_click_a_row_then_arrow_keys_and_j_k(view: View) -> None:
    page = view.page
    cells_before = page.locator(".jp-Notebook .jp-Cell").count()
    row = view.options().nth(3)
    qid = row.get_attribute("data-query-id")
    assert qid
    row.click()
    assert row.get_attribute("aria-selected") == "true"
    assert view.selected_option().count() == 1
    view.wait_ranking(qid)
    view.kernel_has("selected", qid)  # the kernel followed

    def pos_of(q: str) -> int:
        return int(view.root.locator(f"{OPTION}[data-query-id='{q}']").get_attribute(
            "data-pos") or -1)

    p0 = pos_of(qid)
    order: list[str] = json.loads(kernel_run(
        page, "import json as _j; print(_j.dumps(explorer.query_order()))").strip())
    # at a reading pace (each key after the previous one reached the kernel)
    for key, want in (("ArrowDown", p0 + 1), ("j", p0 + 2), ("j", p0 + 3), ("k", p0 + 2)):
        page.keyboard.press(key)
        assert view.selected_option().get_attribute("data-query-id") == order[want], key
        page.wait_for_timeout(150)
    view.wait_ranking(order[p0 + 2])
    view.kernel_has("selected", order[p0 + 2])
    # End: the last query, selected and scrolled into view inside the list
    page.keyboard.press("End")
    last = view.selected_option()
    assert last.get_attribute("data-query-id") == order[-1]
    view.wait_ranking(order[-1])
    box, lb = last.bounding_box(), view.role("query-list").bounding_box()
    assert box and lb and lb["y"] - 1 <= box["y"] and box["y"] + box["height"] <= lb["y"] + \
        lb["height"] + 1, (box, lb)
    view.kernel_has("selected", order[-1])
    page.keyboard.press("Home")
    assert view.selected_option().get_attribute("data-query-id") == order[0]
    view.wait_ranking(order[0])
    # j, k, a, b, d went to the widget, not to JupyterLab's command mode
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells_before


def test_keys_pressed_fast_land_on_the_right_query(view: View) -> None:
    """A held-down arrow key (auto-repeat, ~30 ms apart): the selection moves one row per
    key and never jumps back when the kernel echoes an earlier selection."""
    page = view.page
    order: list[str] = json.loads(kernel_run(
        page, "import json as _j; print(_j.dumps(explorer.query_order()))").strip())
    view.options().nth(1).click()
    view.wait_ranking(order[1])
    seen = []
    keys = ["ArrowDown", "j"] * 5 + ["k", "ArrowUp"]
    for key in keys:
        page.keyboard.press(key)
        seen.append(view.selected_option().get_attribute("data-query-id"))
        page.wait_for_timeout(25)
    want = [order[p] for p in (*range(2, 12), 10, 9)]
    assert seen == want, (seen, order[:12])
    page.wait_for_timeout(600)  # every echo back
    assert view.selected_option().get_attribute("data-query-id") == order[9]
    view.wait_ranking(order[9])
    view.kernel_has("selected", order[9])


def test_filter_narrows_as_you_type_and_says_when_nothing_matches(view: View) -> None:
    page = view.page
    box = view.role("filter")
    box.click()
    page.keyboard.type("list", delay=40)  # no Enter: the filter applies as you type
    view.wait("""() => {
        const opts = document.querySelectorAll('.rr-explorer [data-role=query-list] [role=option]');
        return opts.length > 0 && opts.length < 41
          && [...opts].every(o => o.textContent.toLowerCase().includes('list'));
    }""")
    view.kernel_has("filter_text", "list")
    st = view.state()
    expected = json.loads(kernel_run(
        page, "import json as _j; print(_j.dumps(explorer.query_order()))").strip())
    shown = [o.get_attribute("data-query-id") for o in view.options().all()]
    assert shown == expected and 0 < len(shown) == st["n_visible"] < 41
    assert view.options().first.get_attribute("aria-setsize") == str(len(shown))
    # a filter that matches nothing: an explicit empty state, no stale query list
    page.keyboard.type("zzq", delay=40)
    empty = view.role("empty")
    empty.wait_for(state="visible", timeout=10_000)
    view.wait("() => document.querySelector('.rr-explorer [data-role=empty]').textContent"
              ".includes('listzzq')")  # the last keystroke applied too
    assert "No query matches “listzzq”" in empty.inner_text()
    assert view.options().count() == 0 or not view.role("query-list").is_visible()
    view.kernel_has("n_visible", 0)
    # cleared: everything back
    box.fill("")
    view.wait("() => document.querySelectorAll("
              "'.rr-explorer [data-role=query-list] [role=option][data-query-id]').length >= 8"
              " && document.querySelector('.rr-explorer [data-role=empty]').hidden")
    view.kernel_has("n_visible", 41)


def test_k_slider_and_number_input_move_the_cut_line(view: View) -> None:
    page = view.page
    k0 = view.state()["k"]
    slider = view.role("k-slider")
    slider.focus()
    page.keyboard.press("ArrowRight")
    k1 = k0 + 1
    assert view.role("k-input").input_value() == str(k1)
    view.wait("""k => {
        const cut = document.querySelector('.rr-explorer [data-role=ranking] [data-role=cut]');
        const panel = document.querySelector('.rr-explorer [data-role=panel]');
        return cut && (cut.getAttribute('aria-label') || '').includes(`K = ${k}`)
          && panel.textContent.includes(`Measures at K = ${k}`);
    }""", k1)
    view.kernel_has("k", k1)
    labels = view.role("measure").locator("option").all_inner_texts()
    assert f"nDCG@{k1}" in labels and f"nDCG@{k0}" not in labels
    # the number input: K = 12, beyond the old 20-row limit's half, cut line after rank 12
    inp = view.role("k-input")
    inp.fill("12")
    inp.press("Enter")
    view.wait("""() => {
        const cut = document.querySelector('.rr-explorer [data-role=ranking] [data-role=cut]');
        return cut && (cut.getAttribute('aria-label') || '').includes('K = 12');
    }""")
    assert slider.input_value() == "12"
    view.kernel_has("k", 12)
    grid = view.role("ranking").locator("[role=grid]").first
    cut_y = grid.locator("[data-role=cut]").bounding_box()
    r12 = grid.locator("[role=row][data-index='11']").bounding_box()
    r13 = grid.locator("[role=row][data-index='12']").bounding_box()
    assert cut_y and r12 and r13
    assert r12["y"] + r12["height"] <= cut_y["y"] + 2 <= r13["y"] + 4, (r12, cut_y, r13)
    # K up to the deepest ranking: 50
    inp.fill("50")
    inp.press("Enter")
    view.wait("() => document.querySelector('.rr-explorer [data-role=k-slider]').value === '50'")
    view.kernel_has("k", 50)
    inp.fill(str(k0))
    inp.press("Enter")
    view.wait("k => document.querySelector('.rr-explorer [data-role=k-slider]').value === k",
              str(k0))
    view.kernel_has("k", k0)


def test_ab_swap_and_a_equals_b_refused(view: View) -> None:
    page = view.page
    st = view.state()
    assert (st["run_a"], st["run_b"]) == (0, 1)
    compare = view.role("compare")
    assert compare.is_visible()
    assert "Paired test" in compare.inner_text() and "p = " in compare.inner_text()
    grids = view.role("ranking").locator("[role=grid]")
    assert grids.count() == 2
    assert "A: bm25" in view.role("ranking").inner_text()
    # moves coloured by what they did: a relevant document moving up helps, a non-relevant
    # one moving up hurts
    marks = page.evaluate("""() => [...document.querySelectorAll(
        '.rr-explorer [data-role=ranking] [role=grid]')[1]
        .querySelectorAll('[role=row][data-doc-id]')]
        .map(r => ({rel: r.classList.contains('rr-rel'), unj: r.classList.contains('rr-unjudged'),
                    move: (r.querySelector('.rr-c-move') || {}).textContent || '',
                    good: !!r.querySelector('.rr-c-move.rr-good'),
                    bad: !!r.querySelector('.rr-c-move.rr-bad')}))""")
    moved = [m for m in marks if m["move"][:1] in ("▲", "▼") and not m["unj"]]
    assert moved, marks
    for m in moved:
        up = m["move"].startswith("▲")
        assert m["good"] == (m["rel"] == up) and m["bad"] == (m["rel"] != up), m
    # swap: one click
    view.role("swap").click()
    view.wait("""() => document.querySelector('.rr-explorer [data-role=run-a]').value === '1'
        && document.querySelector('.rr-explorer [data-role=run-b]').value === '0'
        && document.querySelector('.rr-explorer [data-role=ranking]').textContent
             .includes('A: tfidf')
        && document.querySelector('.rr-explorer [data-role=ranking]')
             .getAttribute('aria-busy') !== 'true'""")
    view.kernel_has("run_a", 1)
    view.kernel_has("run_b", 0)
    assert view.state()["error"] == ""
    # A = B: refused, said, nothing changed
    view.role("run-b").select_option("1")
    err = view.role("error")
    err.wait_for(state="visible", timeout=30_000)  # a kernel round trip
    assert "run A and run B must differ" in err.inner_text()
    # a result Python sends late (as the background statistics of the swapped view do) is
    # not a new view: the refusal stays said (CI once saw it vanish under a late update)
    kernel_run(page, "explorer.compare = {**explorer.compare, 'pending': False, 'probe': 1}\n"
                     "explorer.summary = {**explorer.summary, 'probe': 1}")
    view.wait("() => document.querySelector('.rr-explorer').isConnected")
    page.wait_for_timeout(300)
    assert err.is_visible() and "run A and run B must differ" in err.inner_text()
    assert view.role("run-b").input_value() == "0"
    st = view.state()
    assert (st["run_a"], st["run_b"]) == (1, 0)
    view.role("swap").click()
    view.wait("() => document.querySelector('.rr-explorer [data-role=run-a]').value === '0'")
    view.kernel_has("run_a", 0)
    view.kernel_has("run_b", 1)
    assert not err.is_visible()


def test_passage_of_a_ranked_document_in_the_ab_view(view: View) -> None:
    """Click a row of run B's ranking: the side panel shows the document's full passage,
    fetched from the kernel by a custom message."""
    page = view.page
    # A = bm25, B = tfidf whatever the test before left (it ends there when it passes)
    kernel_run(page, "explorer.set_runs(0, 1)")
    view.wait("""() => document.querySelector('.rr-explorer [data-role=run-b]').value === '1'
        && document.querySelector('.rr-explorer [data-role=ranking]').textContent
             .includes('B: tfidf')""")
    grid_b = view.role("ranking").locator(".rr-grid-b [role=grid]")
    row = grid_b.locator("[role=row][data-doc-id]").first
    doc = row.get_attribute("data-doc-id")
    assert doc
    row.click()
    passage = view.role("passage")
    passage.wait_for(state="visible", timeout=30_000)  # a kernel round trip: slow under load
    view.wait("() => !document.querySelector('.rr-explorer [data-role=passage]')"
              ".textContent.includes('loading the full text')")
    text = passage.inner_text()
    assert doc in text and "in tfidf" in text
    full = json.loads(kernel_run(page, "import json as _j\n"
                                 f"print(_j.dumps(explorer.state.passage(explorer.selected, "
                                 f"{doc!r})))").strip())
    flat = " ".join(text.split())
    assert len(full) > 200 and " ".join(full.split())[:200] in flat  # more than the snippet
    # the passage column is readable: at least 250 px wide (~40 characters a line)
    box = passage.bounding_box()
    passage.get_by_role("button", name="close passage").click()
    assert not passage.is_visible()
    assert box and box["width"] >= 250, f"passage panel {box['width'] if box else 0} px wide"


def test_report_button_busy_then_a_link_to_the_file(view: View) -> None:
    page, lab = view.page, view.lab
    # record every state the button and the link go through
    page.evaluate("""() => {
        const root = document.querySelector('.rr-explorer');
        const btn = root.querySelector('[data-role=report-button]');
        window.__rrReport = [];
        const rec = () => window.__rrReport.push({text: btn.textContent, disabled: btn.disabled});
        new MutationObserver(rec).observe(btn, {attributes: true, childList: true,
                                                characterData: true, subtree: true});
    }""")
    view.role("report-button").click()
    link = view.role("report-link")
    link.wait_for(state="visible", timeout=60_000)
    states = page.evaluate("window.__rrReport")
    assert {"text": "Writing report…", "disabled": True} in states, states
    assert view.role("report-button").is_enabled()
    written = lab.root / "ragreport-report.html"
    assert written.is_file() and written.stat().st_size > 10_000
    assert view.state()["report"]["state"] == "done"
    # the link opens THE report (not JupyterLab's own page, which a relative files/ link
    # resolves to from /lab/tree/...): fetched from the page, its content is the file written
    got = page.evaluate('''async (sel) => { const a = document.querySelector(sel);
      const r = await fetch(a.href); return {href: a.href, download: a.getAttribute('download'),
      target: a.target, status: r.status, type: r.headers.get('content-type'),
      text: await r.text()}; }''', ".rr-explorer [data-role=report-link]")
    assert got["href"].startswith("blob:"), got["href"]
    assert got["download"] is None and got["target"] == "_blank"  # opens, never downloads
    assert got["status"] == 200, got["status"]
    assert got["text"] == written.read_text(encoding="utf-8")
    assert "<title>" in got["text"] and "· ragreport</title>" in got["text"]
    assert "JupyterLab" not in got["text"].split("</title>")[0]
    assert str(written.resolve()) in (view.role("report-path").text_content() or "")


@pytest.mark.parametrize(("dark", "width"), [(False, 1400), (True, 1400), (False, 700),
                                             (True, 700)],
                         ids=["light-1400", "dark-1400", "light-700", "dark-700"])
def test_screenshots_and_contrast(view: View, dark: bool, width: int) -> None:
    page = view.page
    page.set_viewport_size({"width": width, "height": 900})
    try:
        set_theme(page, dark)
        shots.frame(page)  # the widget's top at the top of the notebook panel
        name = f"explorer-{'dark' if dark else 'light'}-{width}.png"
        page.screenshot(path=str(view.shots / name))
        print(f"screenshot: {view.shots / name}")
        problems = check_view(view, dark, width, name)
    finally:
        page.set_viewport_size({"width": 1400, "height": 900})
        if dark:
            set_theme(page, False)
    assert problems == [], "\n".join(problems)


def check_view(view: View, dark: bool, width: int, name: str) -> list[str]:
    """Everything wrong with the explorer as it is on screen now (theme, contrast, clipped
    text, layout); empty when all is well."""
    page = view.page
    problems: list[str] = []
    # the theme reached the widget: its background follows JupyterLab's
    bg = page.evaluate("() => getComputedStyle(document.querySelector('.rr-explorer'))"
                       ".backgroundColor")
    lum = sum(int(x) for x in re.findall(r"\d+", bg)[:3])
    if not ((lum < 200) if dark else (lum > 600)):
        problems.append(f"background {bg} does not follow the {'dark' if dark else 'light'} "
                        "theme")
    res = page.evaluate(CONTRAST_JS, ".rr-explorer")
    items = res["items"]
    assert len(items) > 40, res
    low = [i for i in items if i["ratio"] < i["need"]]
    view.notes[name] = min(i["ratio"] for i in items)
    print(f"{name}: {len(items)} texts, lowest contrast ratio {view.notes[name]}")
    problems += [f"contrast below WCAG AA: {i}" for i in low[:20]]
    # texts that must be read whole do not overflow their box (buttons, the cut line's
    # "cut-off at K = ..." label, headings, the error line)
    cut_off = page.evaluate("""() => [...document.querySelectorAll(
          '.rr-explorer button, .rr-explorer [data-role=cut], .rr-explorer .rr-h,'
          + ' .rr-explorer [data-role=error]')]
        .filter(e => e.getClientRects().length && !e.closest('[hidden]') && e.clientWidth > 0
                && e.scrollWidth > e.clientWidth + 1)
        .map(e => `${e.dataset.role || e.className}: "${e.textContent.trim().slice(0, 40)}" `
                  + `needs ${e.scrollWidth} px, has ${e.clientWidth}`)""")
    problems += [f"text cut off at {width} px: {c}" for c in cut_off]
    # no control or table cell clipped: each inside the area its clipping ancestors leave
    over = page.evaluate("""(area) => {
        const visibleArea = new Function('return ' + area)();
        const root = document.querySelector('.rr-explorer');
        return [...root.querySelectorAll('input, select, button, a, th, td, [data-role]')]
          .filter(e => e.getClientRects().length && !e.closest('[hidden]'))
          .map(e => [e.dataset.role || e.tagName + ' ' + e.textContent.trim().slice(0, 20),
                     e.getBoundingClientRect(), visibleArea(e)])
          .filter(([, b, r]) => b.width > 0 && b.height > 0 && b.height < 200
                  && b.top < r.bottom && b.bottom > r.top
                  && (b.left < r.left - 1 || b.right > r.right + 1))
          .map(([n, b, r]) => `${n} ${Math.round(b.left)}..${Math.round(b.right)} `
                              + `(visible ${Math.round(r.left)}..${Math.round(r.right)})`);
    }""", shots.VISIBLE_AREA_JS)
    if width == 1400:
        try:
            shots.assert_three_columns_in_view(page)
        except AssertionError as exc:
            problems.append(str(exc))
        problems += [f"clipped at {width} px: {o}" for o in over]
        return problems
    # stacked: the columns one under the other, nothing cut off sideways
    cols = [view.role(r).bounding_box() for r in ("query-list", "ranking", "panel")]
    if not (all(cols) and cols[0]["y"] < cols[1]["y"] < cols[2]["y"]):  # type: ignore[index]
        problems.append(f"not stacked at {width} px: {cols}")
    problems += [f"clipped at {width} px: {o}" for o in over]
    slider = view.role("k-slider").bounding_box()
    if not (slider and slider["width"] >= 80):
        problems.append(f"K slider collapsed at {width} px: {slider}")
    return problems


def test_saved_notebook_reopened_without_its_kernel(view: View, browser: Browser) -> None:
    lab = view.lab
    # a chosen query, then save (widget state saved with the notebook), then the kernel goes
    row = view.options().nth(2)
    qid = row.get_attribute("data-query-id")
    assert qid
    row.click()
    view.wait_ranking(qid)
    view.kernel_has("selected", qid)
    path = save_notebook(view)
    saved = nbformat.read(path, as_version=4)
    assert "widgets" in saved.metadata
    lab.delete_kernels()
    assert lab.kernels() == []
    # reopened: the last view comes back from the saved state, no "model not found"
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    p2 = ctx.new_page()
    log2 = PageLog.attach(p2)
    try:
        open_notebook(p2, lab.base, "explorer.ipynb")
        p2.wait_for_selector(".rr-explorer [data-role=ranking-qid]", timeout=30_000)
        out = p2.locator(".jp-OutputArea-output").first
        assert "Error displaying widget" not in out.inner_text()
        assert p2.locator(".rr-explorer [data-role=ranking-qid]").inner_text() == qid
        assert p2.locator(f".rr-explorer {OPTION}").count() >= 8
        assert p2.locator(f".rr-explorer {OPTION}[aria-selected=true]").get_attribute(
            "data-query-id") == qid
        p2.screenshot(path=str(view.shots / "reopened.png"))
        assert view.outside_requests(log2) == []
        # an untrusted copy (a notebook from someone else): JupyterLab shows the text/html
        # snapshot (sanitised) instead of a widget error
        copy = nbformat.read(path, as_version=4)
        copy.cells[0].metadata["from"] = "a colleague"
        nbformat.write(copy, lab.root / "copy.ipynb")
        p2.close()
        p2 = ctx.new_page()
        open_notebook(p2, lab.base, "copy.ipynb")
        p2.wait_for_selector(".jp-OutputArea-output", timeout=30_000)
        out = p2.locator(".jp-OutputArea-output").first
        out.wait_for(timeout=10_000)
        text = out.inner_text()
        assert "Error displaying widget" not in text
        assert "bm25" in text and "tfidf" in text, text[:500]
        # (the sanitiser drops data-* attributes: find the ranking's title by its text). The
        # snapshot is the view when the cell ran (Python's default query), not the query
        # chosen later in the page: text/html is fixed when the output is written
        shown = re.findall(r"^(q\d\d): .*\(run \w+, \d+ retrieved", text, re.M)
        assert len(shown) == 1, text[:800]
        assert "cut-off at K = " in text and "static snapshot" in text
        p2.screenshot(path=str(view.shots / "untrusted-snapshot.png"))
    finally:
        ctx.close()


def test_restarted_without_widget_state_shows_the_snapshot_not_an_error(
        view: View, browser: Browser) -> None:
    """JupyterLab's default saves no widget state. The trusted notebook reopened with a new
    kernel (what a restart gives) shows the static snapshot where the view was, never
    "Error displaying widget: model not found"."""
    lab = view.lab
    nb = nbformat.read(save_notebook(view), as_version=4)
    nb.metadata.pop("widgets", None)
    path = lab.root / "nostate.ipynb"
    nbformat.write(nb, path)
    subprocess.run([sys.executable, "-m", "jupyter", "trust", str(path)], env=lab.env,
                   check=True, capture_output=True, timeout=60)
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    log = PageLog.attach(page)
    try:
        open_notebook(page, lab.base, "nostate.ipynb")
        # the widget manager gives up on the model (the text JupyterLab writes)...
        page.wait_for_function("""() => [...document.querySelectorAll('.jp-OutputArea-output')]
            .some(e => e.textContent.includes('model not found'))""", timeout=30_000)
        # ...and that output is hidden, the snapshot shown in its place
        assert not page.get_by_text("Error displaying widget").is_visible()
        snap = page.locator("[data-rr-snapshot]")
        assert snap.count() == 1 and snap.is_visible()
        text = snap.inner_text()
        assert "static snapshot" in text and "bm25" in text and "tfidf" in text
        assert page.locator(".rr-explorer").count() == 0  # no live view
        page.screenshot(path=str(view.shots / "restarted-no-state.png"))
        assert view.outside_requests(log) == []
        assert log.page_errors == [], log.page_errors
    finally:
        ctx.close()


@pytest.mark.parametrize("state", [False, True], ids=["no-widget-state", "widget-state"])
def test_nbconvert_html_has_the_snapshot_and_reads_offline(view: View, browser: Browser,
                                                           tmp_path: Path, state: bool) -> None:
    """The notebook as JupyterLab saves it by default (no widget state), and with the widget
    state: ``jupyter nbconvert --to html`` keeps the explorer's ``text/html`` snapshot,
    readable with every outside request refused (the widget manager of an export with state
    comes from a CDN: offline, its view stays empty, and the snapshot stands instead)."""
    nb = nbformat.read(save_notebook(view), as_version=4)
    if state:
        assert "widgets" in nb.metadata
    else:
        nb.metadata.pop("widgets", None)  # JupyterLab's default: widget state not saved
    src = tmp_path / "explorer.ipynb"
    nbformat.write(nb, src)
    html = tmp_path / "explorer.html"
    proc = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html",
                           "--output", str(html), str(src)], capture_output=True, text=True,
                          timeout=120, env=view.lab.env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    body = html.read_text(encoding="utf-8")
    assert 'data-role="snapshot"' in body
    page = browser.new_page()
    log = PageLog.attach(page)
    page.route("**/*", lambda route: route.abort() if not route.request.url.startswith(
        ("file:", "data:")) else route.continue_())  # offline: every outside request fails
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    snap = page.locator("[data-role=snapshot]")
    assert snap.count() == 1 and snap.is_visible()
    # nothing else where the view would be: no empty box, no widget error
    view_out = page.locator(".jupyter-widgets.jp-OutputArea-output")
    assert view_out.count() == (1 if state else 0)
    if state:
        assert not view_out.first.is_visible()
    text = snap.inner_text()
    assert "static snapshot" in text and "bm25" in text and "tfidf" in text
    assert "cut-off at K = " in text
    rows = snap.locator("tr[data-query-id]")
    assert rows.count() == 41  # the list (up to 50 rows)
    # readable: numbers and headers are never broken over lines, text is left-aligned
    broken = page.evaluate("""() => [...document.querySelectorAll(
            '[data-role=snapshot] td.num, [data-role=snapshot] th')]
        .filter(e => { const r = document.createRange(); r.selectNodeContents(e);
                       const tops = new Set([...r.getClientRects()].map(b => Math.round(b.top)));
                       return tops.size > 1; })
        .map(e => e.textContent.trim())""")
    assert broken == [], f"numbers or headers broken over lines: {broken[:10]}"
    align = page.evaluate("() => getComputedStyle(document.querySelector("
                          "'[data-role=snapshot] tr[data-query-id] td:nth-child(3)')).textAlign")
    assert align in ("left", "start"), align
    page.screenshot(path=str(view.shots / f"nbconvert-{'state' if state else 'plain'}.png"),
                    full_page=True)
    page.close()
    assert log.page_errors == [], log.page_errors


def test_readme_screenshot_regenerates(view: View, browser: Browser, tmp_path: Path) -> None:
    out = tmp_path / "explorer.png"
    shots.capture(browser, view.lab, out)
    committed = ROOT / "docs" / "explorer.png"
    assert committed.is_file(), "docs/explorer.png is committed"
    new, old = shots.png_info(out), shots.png_info(committed)
    assert new["size"] == old["size"] == (1400, 900), (new, old)
    assert new["distinct"] > 200 and new["dark_fraction"] < 0.5, new  # not blank, light theme
