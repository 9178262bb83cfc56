"""The explorer in a real marimo notebook, in headless Chromium: ``marimo edit`` (the
notebook as its author works on it) and ``marimo run`` (the app). The cell's last expression
is the Explorer itself, which marimo shows as an anywidget (in a shadow root: Playwright's
CSS locators go through it, ``document.querySelector`` does not).

The server runs on 127.0.0.1 with no token, its home and configuration in a temporary folder
(``auto_instantiate``: the cells run when the page opens); it is stopped by its PID in any
case. When Chromium, Playwright or marimo cannot run, these tests fail; they never skip.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageLog, launch
from test_browser_widget import OPTION

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

pytestmark = pytest.mark.browser

APP = '''\
import marimo

app = marimo.App()


@app.cell
def _():
    import ragreport
    from ragreport.examples import example_files

    files = example_files()
    results = [ragreport.evaluate(files.qrels, run) for run in files.runs]
    explorer = ragreport.Explorer(results, queries=files.queries, docs=files.docs)
    explorer
    return (explorer,)


if __name__ == "__main__":
    app.run()
'''


@dataclass
class Marimo:
    page: Page
    log: PageLog
    mode: str

    @property
    def root(self) -> Locator:
        return self.page.locator(".rr-explorer")

    def selected(self) -> str | None:
        return self.root.locator(f"{OPTION}[aria-selected=true]").get_attribute(
            "data-query-id")

    def ranking_qid(self) -> str:
        return self.root.locator("[data-role=ranking-qid]").inner_text()

    def until(self, what: str, fn: object, want: object, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while (got := fn()) != want and time.monotonic() < deadline:  # type: ignore[operator]
            self.page.wait_for_timeout(100)
        assert got == want, f"{what} is {got!r} in marimo {self.mode}, want {want!r}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(mode: str, work: Path) -> subprocess.Popen[bytes]:
    app = work / "explorer_app.py"
    app.write_text(APP, encoding="utf-8")
    config = work / "config" / "marimo"
    config.mkdir(parents=True)
    (config / "marimo.toml").write_text("[runtime]\nauto_instantiate = true\n",
                                        encoding="utf-8")
    env = dict(os.environ, HOME=str(work), XDG_CONFIG_HOME=str(work / "config"),
               MARIMO_SKIP_UPDATE_CHECK="1")
    port = _free_port()
    cmd = [sys.executable, "-m", "marimo", "-q", mode, str(app), "--headless",
           "--host", "127.0.0.1", "--port", str(port), "--no-token"]
    with (work / "marimo.log").open("wb") as log:
        proc = subprocess.Popen(cmd, env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT)
    proc.url = f"http://127.0.0.1:{port}/"  # type: ignore[attr-defined]
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            pytest.fail("marimo exited early:\n" + (work / "marimo.log").read_text()[-3000:],
                        pytrace=False)
        try:
            urllib.request.urlopen(proc.url, timeout=2)  # type: ignore[attr-defined]
            return proc
        except OSError:
            if time.monotonic() > deadline:
                _stop(proc)
                pytest.fail("marimo did not answer within 60 s", pytrace=False)
            time.sleep(0.3)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()  # by PID, never by name
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture(scope="module", params=["edit", "run"])
def mo(request: pytest.FixtureRequest,
       tmp_path_factory: pytest.TempPathFactory) -> Iterator[Marimo]:
    mode = str(request.param)
    work = tmp_path_factory.mktemp(f"marimo-{mode}")
    proc = _serve(mode, work)
    try:
        with launch() as browser:
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            log = PageLog.attach(page)
            page.goto(proc.url)  # type: ignore[attr-defined]
            try:
                page.locator(f".rr-explorer {OPTION}").first.wait_for(timeout=90_000)
            except Exception:
                page.screenshot(path=str(work / "failure-open.png"))
                raise
            yield Marimo(page, log, mode)
    finally:
        _stop(proc)


def test_renders_and_a_click_loads_the_ranking(mo: Marimo) -> None:
    """The ranking comes from Python by a custom message: marimo's anywidget carries them."""
    assert mo.root.count() == 1
    row = mo.root.locator(OPTION).nth(3)
    qid = row.get_attribute("data-query-id")
    row.click()
    mo.until("the ranking shown", mo.ranking_qid, qid)
    assert mo.root.locator("[data-role=ranking] [role=row][data-doc-id]").count() >= 5
    assert mo.log.page_errors == [], mo.log.page_errors


def test_keys_reach_the_list_and_the_k_slider(mo: Marimo) -> None:
    opts = mo.root.locator(OPTION)
    opts.nth(1).click()
    order = opts.evaluate_all("os => os.map(o => o.dataset.queryId)")  # one read
    mo.until("the selected query", mo.selected, order[1])
    mo.page.keyboard.press("ArrowDown")
    mo.until("the selected query", mo.selected, order[2])
    mo.page.keyboard.press("j")
    mo.until("the selected query", mo.selected, order[3])
    mo.until("the ranking shown", mo.ranking_qid, order[3])
    slider = mo.root.locator("[data-role=k-slider]")
    slider.focus()
    k = int(slider.input_value())
    mo.page.keyboard.press("ArrowRight")
    assert int(slider.input_value()) == k + 1
    # K reached Python: the cut line of the ranking it sends back moved
    cut = mo.root.locator("[data-role=ranking] [data-role=cut]").first
    mo.until("the cut line", lambda: f"K = {k + 1}" in (
        (cut.get_attribute("aria-label") or "") + cut.inner_text()), True)


def test_the_filter_narrows_the_list_through_python(mo: Marimo) -> None:
    box = mo.root.locator("[data-role=filter]")
    box.click()
    mo.page.keyboard.type("q0")
    mo.until("the filter", box.input_value, "q0")
    # (read in one call: the list re-renders under a row-by-row read)
    mo.until("the rows left", lambda: all(q.startswith("q0") for q in mo.root.locator(
        OPTION).evaluate_all("os => os.map(o => o.dataset.queryId || '')")), True)
    box.fill("")
    mo.until("the rows back", lambda: mo.root.locator(OPTION).count() >= 8, True)
