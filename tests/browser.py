"""Headless Chromium for the browser tests (see ../shared/guides/browser-testing.md).

Debian's Chromium driven by Playwright's sync API, launched with ``executable_path``: never
``playwright install`` (it downloads, which fails offline). A missing browser or Playwright is a
test *failure* with a clear message, never a skip.

Use :func:`launch` as a context manager, then :class:`PageLog` to record what a page does::

    with launch() as browser:
        page = browser.new_page()
        log = PageLog.attach(page)
        page.goto(path.as_uri())
        log.assert_clean()
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

__all__ = ["CHROMIUM_ARGS", "LOCAL_SCHEMES", "PageLog", "chromium_path", "launch"]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
#: URL schemes a self-contained page may load from.
LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:")


def chromium_path() -> str:
    """Path of the Chromium binary (``RAGREPORT_CHROMIUM``, else ``chromium`` on PATH)."""
    path = os.environ.get("RAGREPORT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).is_file():
        pytest.fail(f"Chromium not found (looked for {path}); install it, e.g. "
                    "`apt-get install chromium`, or set RAGREPORT_CHROMIUM. Browser tests never "
                    "skip.", pytrace=False)
    return path


@contextmanager
def launch(**kwargs: Any) -> Iterator[Browser]:
    """A headless Chromium; extra keyword arguments go to ``chromium.launch``."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.fail(f"playwright is not installed ({exc}); `pip install playwright` "
                    "(no `playwright install`: the system Chromium is used)", pytrace=False)
    exe = chromium_path()
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True,
                                        **kwargs)
        except Exception as exc:  # playwright raises its own Error type
            pytest.fail(f"could not launch Chromium at {exe}: {exc}", pytrace=False)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class PageLog:
    """Requests, console messages, page errors and dialogs seen by one page."""

    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    @classmethod
    def attach(cls, page: Page) -> PageLog:
        log = cls()
        page.on("request", lambda r: log.requests.append(r.url))
        page.on("console",
                lambda m: log.console_errors.append(f"{m.type}: {m.text}")
                if m.type in ("error", "assert") else None)
        page.on("pageerror", lambda e: log.page_errors.append(str(e)))

        def _dialog(d: Any) -> None:
            log.dialogs.append(f"{d.type}: {d.message}")
            d.dismiss()

        page.on("dialog", _dialog)
        return log

    @property
    def outside_requests(self) -> list[str]:
        return [u for u in self.requests if not u.startswith(LOCAL_SCHEMES)]

    def assert_clean(self) -> None:
        """No request left the file, no console error, no page error, no dialog."""
        assert self.outside_requests == [], f"requests left the page: {self.outside_requests}"
        assert self.console_errors == [], f"console errors: {self.console_errors}"
        assert self.page_errors == [], f"page errors: {self.page_errors}"
        assert self.dialogs == [], f"dialogs opened: {self.dialogs}"
