"""JupyterLab on 127.0.0.1 for the browser tests, the README screenshot and the benchmark.

No pytest here (``scripts/screenshot_explorer.py`` and ``benchmarks/explorer_speed.py`` use it
too): failures raise :class:`LabError`, which the tests turn into failures (never skips).
See ../shared/guides/browser-testing.md for the recipe.

Use :class:`JupyterLab` as a context manager; it starts the server in its own temporary
folders (config, runtime, IPython, home; no token, no XSRF, the app exposed as
``window.jupyterapp``) and stops it in any case: kernels deleted, ``/api/shutdown``, then the
process waited for and killed by its PID if it lingers (never by name).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

__all__ = ["CONTRAST_JS", "KERNEL_IDLE", "JupyterLab", "LabError", "chromium", "execute",
           "kernel_run", "open_notebook", "run_all_cells", "set_theme"]


class LabError(RuntimeError):
    """JupyterLab or the page did not do what was expected (message says what)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(url: str, method: str = "GET", timeout: float = 5) -> bytes:
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return bytes(resp.read())


class JupyterLab:
    """A JupyterLab server serving ``root``; its config, log, home live under ``work``.

    ``settings`` maps a plugin id (``"@jupyter-widgets/jupyterlab-manager:plugin"``) to user
    settings written before the start (e.g. ``{"saveState": True}``). ``app="notebook"``
    serves Jupyter Notebook 7 instead (the same JupyterLab components in another shell; open
    a notebook with :func:`open_notebook` and ``app="notebook"``).
    """

    def __init__(self, root: Path, work: Path,
                 settings: dict[str, dict[str, Any]] | None = None, *,
                 app: str = "lab") -> None:
        if app not in ("lab", "notebook"):
            raise LabError(f"app must be 'lab' or 'notebook', got {app!r}")
        self.app = app
        self.root = root
        self.work = work
        # no news or update toasts over the page
        self.settings = {"@jupyterlab/apputils-extension:notification":
                         {"fetchNews": "false", "checkForUpdates": False},
                         **(settings or {})}
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = work / "lab.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.env: dict[str, str] = {}

    # -- life cycle -------------------------------------------------------------------------
    def __enter__(self) -> JupyterLab:
        self.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def log_tail(self, n: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return "(no log)"

    def start(self, timeout: float = 60) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        self.root.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        for var, name in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                          ("IPYTHONDIR", "ipython"), ("HOME", "home")):
            (self.work / name).mkdir(exist_ok=True)
            env[var] = str(self.work / name)
        env.pop("JUPYTER_PLATFORM_DIRS", None)
        settings_dir = self.work / "config" / "lab" / "user-settings"
        env["JUPYTERLAB_SETTINGS_DIR"] = str(settings_dir)
        env["JUPYTERLAB_WORKSPACES_DIR"] = str(self.work / "workspaces")
        for plugin, values in self.settings.items():
            package, _, name = plugin.rpartition(":")
            path = settings_dir / package / f"{name}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values), encoding="utf-8")
        self.env = env
        cmd = [sys.executable, "-m", "jupyter", self.app, "--no-browser", "--ip=127.0.0.1",
               f"--port={self.port}", "--allow-root", "--ServerApp.token=",
               "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
               f"--ServerApp.root_dir={self.root}"]
        if self.app == "lab":
            cmd += ["--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
                    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        else:
            cmd += ["--JupyterNotebookApp.expose_app_in_browser=True"]
        log = self.log_path.open("wb")
        try:
            self.proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         cwd=self.root)
        except OSError as exc:
            raise LabError(f"could not start JupyterLab: {exc}") from exc
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise LabError("JupyterLab exited early:\n" + self.log_tail())
            try:
                json.loads(_request(f"{self.base}/api/status"))
                return
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise LabError(f"JupyterLab did not answer /api/status within {timeout} s:\n"
                                   + self.log_tail()) from None
                time.sleep(0.3)

    def delete_kernels(self) -> None:
        for k in json.loads(_request(f"{self.base}/api/kernels")):
            _request(f"{self.base}/api/kernels/{k['id']}", method="DELETE", timeout=15)

    def kernels(self) -> list[dict[str, Any]]:
        return list(json.loads(_request(f"{self.base}/api/kernels")))

    def stop(self) -> None:
        proc = self.proc
        if proc is None:
            return
        try:
            if proc.poll() is None:
                self.delete_kernels()
                _request(f"{self.base}/api/shutdown", method="POST")
        except (urllib.error.URLError, OSError, ValueError):
            pass
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()  # by PID, never by name
            proc.wait(timeout=10)
        self.proc = None


KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const s = w && w.sessionContext && w.sessionContext.session;
  return !!(s && s.kernel && s.kernel.status === 'idle');
}"""

#: true when every code cell of the current notebook has run (an execution count) and the
#: kernel is idle again
ALL_RUN = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!w || !w.content || !w.sessionContext.session) return false;
  const k = w.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') return false;
  return w.content.widgets.every(c => c.model.type !== 'code' || c.model.executionCount);
}"""


def open_notebook(page: Page, base: str, name: str, *, kernel: bool = True,
                  timeout: float = 60_000, app: str = "lab") -> None:
    """Open ``name`` in JupyterLab (fresh workspace), or in Notebook 7 with
    ``app="notebook"``, and wait for an idle kernel (or, with ``kernel=False``, only for the
    notebook panel)."""
    url = f"{base}/lab/tree/{name}?reset" if app == "lab" else f"{base}/notebooks/{name}"
    page.goto(url, timeout=timeout)
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell"
                           " && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.content)",
                           timeout=timeout)
    if kernel:
        page.wait_for_function(KERNEL_IDLE, timeout=timeout)


def run_all_cells(page: Page, timeout: float = 90_000) -> None:
    """Run every cell of the current notebook and wait until all ran and the kernel idles."""
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(ALL_RUN, timeout=timeout)


def execute(page: Page, command: str, args: dict[str, Any] | None = None) -> Any:
    """Run a JupyterLab command and return its (JSON-able) result."""
    return page.evaluate("([c, a]) => window.jupyterapp.commands.execute(c, a)"
                         ".then(r => (r === undefined || typeof r !== 'object') ? r : null)",
                         [command, args or {}])


def set_theme(page: Page, dark: bool) -> None:
    """Switch JupyterLab's theme and wait until the page has it (body data attribute and the
    theme's background variable applied)."""
    theme = "JupyterLab Dark" if dark else "JupyterLab Light"
    page.evaluate("t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})",
                  theme)
    want = "false" if dark else "true"
    page.wait_for_function(
        """([want, name]) => document.body.dataset.jpThemeLight === want
             && document.body.dataset.jpThemeName === name
             && getComputedStyle(document.body).getPropertyValue('--jp-layout-color0').trim()
                  !== ''""",
        arg=[want, theme], timeout=20_000)
    page.wait_for_timeout(300)  # let style recalculation and transitions settle


#: WCAG contrast of every piece of text under a root (see tests/contrast.js):
#: ``page.evaluate(CONTRAST_JS, selector)`` -> ``{items: [{text, ratio, need, fg, bg, ...}]}``
CONTRAST_JS = (Path(__file__).parent / "contrast.js").read_text(encoding="utf-8")


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]


@contextmanager
def chromium() -> Iterator[Browser]:
    """Headless Debian Chromium through Playwright (no pytest; :class:`LabError` if missing)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise LabError(f"playwright is not installed ({exc})") from exc
    exe = os.environ.get("RAGREPORT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(exe).is_file():
        raise LabError(f"Chromium not found (looked for {exe}); apt-get install chromium")
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        except Exception as exc:
            raise LabError(f"could not launch Chromium at {exe}: {exc}") from exc
        try:
            yield browser
        finally:
            browser.close()


KERNEL_RUN_JS = """async (code) => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session.kernel;
  const f = k.requestExecute({code, silent: false, store_history: false});
  let out = '';
  f.onIOPub = m => {
    const t = m.header.msg_type;
    if (t === 'stream') out += m.content.text;
    else if (t === 'error') out += 'KERNEL-ERROR ' + m.content.ename + ': ' + m.content.evalue;
  };
  await f.done;
  return out;
}"""


def kernel_run(page: Page, code: str) -> str:
    """Run ``code`` in the current notebook's kernel (not as a cell) and return its printed
    output. Requests are queued behind the widget's comm messages, so this reads the state
    after the page's changes reached the kernel."""
    out = str(page.evaluate(KERNEL_RUN_JS, code))
    if "KERNEL-ERROR" in out:
        raise LabError(f"kernel code failed: {out}")
    return out
