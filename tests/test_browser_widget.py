"""The explorer in a real JupyterLab, in headless Chromium (../shared/guides/browser-testing.md).

JupyterLab runs on 127.0.0.1 (free port, no token, temporary config/runtime/IPython/home
folders), opens a notebook that shows the explorer on the embedded example, runs it, and the
test moves the K slider and picks another query; each change travels to the kernel, whose
observers re-render the ranking view, and comes back to the page. When Chromium, Playwright or
JupyterLab cannot run, the test fails; it never skips.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from browser import launch

pytestmark = pytest.mark.browser

NOTEBOOK_CODE = """\
import ragreport
from ragreport.examples import example_files

files = example_files()
results = [ragreport.evaluate(files.qrels, run) for run in files.runs]
explorer = ragreport.Explorer(results, queries=files.queries, docs=files.docs)
explorer.set_measure("nDCG@5")
explorer
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(url: str, method: str = "GET") -> bytes:
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=5) as resp:
        return bytes(resp.read())


@pytest.fixture()
def lab(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "lab"
    root.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(NOTEBOOK_CODE)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, root / "explorer.ipynb")
    env = dict(os.environ)
    for var, name in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                      ("IPYTHONDIR", "ipython"), ("HOME", "home")):
        (tmp_path / name).mkdir()
        env[var] = str(tmp_path / name)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "lab.log").open("wb")
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", "--allow-root", "--ServerApp.token=", "--ServerApp.password=",
           "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root}",
           "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    try:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    except OSError as exc:
        pytest.fail(f"could not start JupyterLab: {exc}", pytrace=False)
    try:
        deadline = time.monotonic() + 45
        while True:
            if proc.poll() is not None:
                pytest.fail("JupyterLab exited early:\n"
                            + (tmp_path / "lab.log").read_text(errors="replace")[-3000:],
                            pytrace=False)
            try:
                json.loads(_request(f"{base}/api/status"))
                break
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                if time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not answer /api/status within 45 s:\n"
                                + (tmp_path / "lab.log").read_text(errors="replace")[-3000:],
                                pytrace=False)
                time.sleep(0.3)
        yield base, tmp_path / "lab.log"
    finally:
        try:
            for k in json.loads(_request(f"{base}/api/kernels")):
                _request(f"{base}/api/kernels/{k['id']}", method="DELETE")
            _request(f"{base}/api/shutdown", method="POST")
        except (urllib.error.URLError, OSError, ValueError):
            pass
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()  # by PID, never by name
            proc.wait(timeout=10)
        log.close()


KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const s = w && w.sessionContext && w.sessionContext.session;
  return !!(s && s.kernel && s.kernel.status === 'idle');
}"""


def test_explorer_round_trip_in_jupyterlab(lab: tuple[str, Path]) -> None:
    base, log_path = lab
    with launch() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page_errors: list[str] = []
        page.on("pageerror", lambda e: page_errors.append(str(e)))
        try:
            page.goto(f"{base}/lab/tree/explorer.ipynb?reset", timeout=30_000)
            page.wait_for_function(KERNEL_IDLE, timeout=40_000)
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")

            # the widgets render (the widget manager is there and the kernel answered)
            page.wait_for_selector(".widget-slider", timeout=40_000)
            ranking = page.locator(".widget-html .rrx-ranking").first
            ranking.wait_for(timeout=20_000)
            assert page.locator(".widget-html").count() >= 4
            assert ranking.get_attribute("data-k") == "5"
            assert "cut at K=5" in ranking.inner_text()
            readout = page.locator(".rrx-k-slider .widget-readout").first
            assert readout.inner_text().strip() == "5"
            # the unjudged documents of the top K are counted, with Judged@K (issue 13)
            assert re.search(r"\d+ of the top [1-5] unjudged · Judged@5 = \d\.\d{4}",
                             ranking.inner_text())
            first_qid = ranking.get_attribute("data-qid")
            assert first_qid

            # move the K slider with the keyboard: the kernel re-renders the ranking
            handle = page.locator(".rrx-k-slider .noUi-handle").first
            handle.focus()
            page.keyboard.press("ArrowRight")
            page.wait_for_selector(".widget-html .rrx-ranking[data-k='6']", timeout=20_000)
            assert "cut at K=6" in page.locator(".widget-html .rrx-ranking").first.inner_text()
            assert "cut at K=5" not in page.locator(".widget-html .rrx-ranking").first.inner_text()
            assert "Judged@6 = " in page.locator(".widget-html .rrx-ranking").first.inner_text()
            assert readout.inner_text().strip() == "6"
            assert "nDCG@6" in page.locator(".widget-html .rrx-list").first.inner_text()

            # pick another query in the selector: its ranking comes back from the kernel
            select = page.locator(".rrx-query-select select").first
            labels = [o.strip() for o in select.locator("option").all_inner_texts()]
            target = next(lbl for lbl in labels[3:] if lbl.split()[0] != first_qid)
            qid = target.split()[0]
            select.select_option(label=target)
            page.wait_for_selector(f".widget-html .rrx-ranking[data-qid='{qid}']",
                                   timeout=20_000)
            view = page.locator(".widget-html .rrx-ranking").first
            assert view.get_attribute("data-k") == "6"
            assert view.locator("h4").first.inner_text().startswith(qid)
            assert page.locator(f".widget-html .rrx-panel[data-qid='{qid}']").count() == 1
            assert page.locator(f".widget-html .rrx-compare[data-qid='{qid}']").count() == 1
        except Exception:
            shot = log_path.parent / "failure.png"
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot: {shot}\nlab log:\n"
                  + log_path.read_text(errors="replace")[-3000:])
            raise
        assert page_errors == [], page_errors
