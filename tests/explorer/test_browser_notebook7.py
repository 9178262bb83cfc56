"""The explorer in a real Jupyter Notebook 7, in headless Chromium: it renders, takes clicks,
and the keys reach it.

Notebook 7 runs its shortcuts in the document's capture phase (JupyterLab in the bubbling
phase), so a widget that only stops a key's propagation never sees ArrowDown or ``j``: the
notebook moves its cursor instead and the K slider's ArrowRight is prevented. The explorer
marks each element that takes focus with ``data-lm-suppress-shortcuts``. The server is
``jupyter notebook`` on 127.0.0.1 (``tests/labserver.py`` with ``app="notebook"``). When
Chromium, Playwright or Notebook 7 cannot run, these tests fail; they never skip.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from browser import PageLog, launch
from labserver import JupyterLab, LabError, kernel_run, open_notebook, run_all_cells
from test_browser_widget import NOTEBOOK_CODE, OPTION, shots

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

pytestmark = pytest.mark.browser

CELLS = "() => window.jupyterapp.shell.currentWidget.content.widgets.length"


@dataclass
class Nb7:
    page: Page
    log: PageLog
    server: JupyterLab
    errors: list[str]  # the page's uncaught errors, with their stacks

    def own_errors(self) -> list[str]:
        """Page errors not raised in Notebook 7's own bundles (its shortcuts plugin throws
        "reading 'schema'" on a settings change, with or without the explorer)."""
        def notebooks(error: str) -> bool:
            where = re.findall(r"(?:https?|blob|data):\S+", error)
            return bool(where) and all("/static/notebook/" in w for w in where)

        return [e for e in self.errors if not notebooks(e)]

    @property
    def root(self) -> Locator:
        return self.page.locator(".rr-explorer")

    def kernel(self, name: str) -> Any:
        out = kernel_run(self.page, f"import json as _j; print(_j.dumps(explorer.{name}))")
        return json.loads(out.strip().splitlines()[-1])

    def kernel_has(self, name: str, want: Any, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while (got := self.kernel(name)) != want and time.monotonic() < deadline:
            self.page.wait_for_timeout(100)
        assert got == want, f"the kernel's {name} is {got!r}, want {want!r}"

    def selected(self) -> str | None:
        return self.root.locator(f"{OPTION}[aria-selected=true]").get_attribute(
            "data-query-id")

    def cells(self) -> int:
        return int(self.page.evaluate(CELLS))


@pytest.fixture(scope="module")
def nb7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nb7]:
    work = tmp_path_factory.mktemp("nb7")
    root = work / "root"
    root.mkdir()
    shots.write_notebook(root / "explorer.ipynb", NOTEBOOK_CODE)
    server = JupyterLab(root, work, app="notebook")
    try:
        server.start()
    except LabError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        with launch() as browser:
            yield _open(server, browser)
    finally:
        server.stop()


def _open(server: JupyterLab, browser: Browser) -> Nb7:
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    log = PageLog.attach(page)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"{e.message}\n{e.stack or ''}"))
    open_notebook(page, server.base, "explorer.ipynb", app="notebook")
    run_all_cells(page)
    page.wait_for_selector(f".rr-explorer {OPTION}", timeout=60_000)
    return Nb7(page, log, server, errors)


def test_renders_and_takes_clicks(nb7: Nb7) -> None:
    assert nb7.page.url.endswith("/notebooks/explorer.ipynb")  # Notebook 7, not JupyterLab
    assert nb7.root.count() == 1
    row = nb7.root.locator(OPTION).nth(3)
    qid = row.get_attribute("data-query-id")
    row.click()
    nb7.page.wait_for_function(
        "q => (document.querySelector('.rr-explorer [data-role=ranking-qid]') || {})"
        ".textContent === q", arg=qid, timeout=15_000)
    nb7.kernel_has("selected", qid)
    # the snapshot output is hidden beside the live view, as in JupyterLab
    snap = nb7.page.locator("[data-rr-snapshot]")
    assert snap.count() == 1 and not snap.is_visible()
    assert nb7.own_errors() == []


def test_arrow_keys_and_j_k_move_in_the_list(nb7: Nb7) -> None:
    opts = nb7.root.locator(OPTION)
    opts.nth(1).click()
    first = opts.nth(1).get_attribute("data-query-id")
    nb7.page.wait_for_function(
        "q => { const e = document.querySelector('.rr-explorer [aria-selected=true]');"
        " return e && e.dataset.queryId === q; }", arg=first, timeout=10_000)
    order = opts.evaluate_all("os => os.map(o => o.dataset.queryId)")  # one read
    cells = nb7.cells()
    nb7.page.keyboard.press("ArrowDown")
    nb7.page.wait_for_function(
        "q => { const e = document.querySelector('.rr-explorer [aria-selected=true]');"
        " return e && e.dataset.queryId === q; }", arg=order[2], timeout=10_000)
    nb7.page.keyboard.press("j")
    nb7.page.wait_for_function(
        "q => { const e = document.querySelector('.rr-explorer [aria-selected=true]');"
        " return e && e.dataset.queryId === q; }", arg=order[3], timeout=10_000)
    nb7.page.keyboard.press("k")
    nb7.page.keyboard.press("ArrowUp")
    nb7.page.wait_for_function(
        "q => { const e = document.querySelector('.rr-explorer [aria-selected=true]');"
        " return e && e.dataset.queryId === q; }", arg=order[1], timeout=10_000)
    nb7.kernel_has("selected", order[1])
    # the keys stayed in the widget: the notebook's focus and cells did not move
    assert nb7.page.evaluate("() => !!document.activeElement.closest('.rr-explorer')")
    assert nb7.cells() == cells


def test_k_slider_takes_arrow_right(nb7: Nb7) -> None:
    slider = nb7.root.locator("[data-role=k-slider]")
    slider.focus()
    k = int(slider.input_value())
    nb7.page.keyboard.press("ArrowRight")
    assert int(slider.input_value()) == k + 1
    nb7.kernel_has("k", k + 1)


def test_typing_in_the_filter_filters_and_adds_no_cell(nb7: Nb7) -> None:
    """'a' and 'b' are Notebook 7's insert-cell keys in command mode."""
    cells = nb7.cells()
    box = nb7.root.locator("[data-role=filter]")
    box.click()
    nb7.page.keyboard.type("ab")
    assert box.input_value() == "ab"
    nb7.kernel_has("filter_text", "ab")
    assert nb7.cells() == cells
    box.fill("")
    nb7.kernel_has("filter_text", "")
