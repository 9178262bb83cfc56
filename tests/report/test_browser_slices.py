"""The HTML report's query slices in a real headless Chromium: the slice table, the slice
selector of the metric-vs-K curves (offline, no error), and the page without JavaScript.

Needs Chromium and Playwright (see tests/browser.py): when either is missing these tests fail
with a message saying what to install; they never skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageLog, launch

import ragreport
from ragreport.examples import example_files
from ragreport.report import build_report
from ragreport.targets import parse_targets

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch() as b:
        yield b


@pytest.fixture(scope="module")
def report_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = example_files()
    results = [ragreport.evaluate(files.qrels, p) for p in files.runs]
    tags = {f"q{i:02d}": (["odd"] if i % 2 else ["even"]) + ([HOSTILE] if i <= 3 else [])
            for i in range(1, 42)}
    report = build_report(results, parse_targets({"R@5": 0.3}), slices=tags,
                          slice_targets={"even": parse_targets({"R@5": 0.99})},
                          resamples=300, curve_resamples=100,
                          generated_at="2026-01-01T00:00:00Z")
    path = tmp_path_factory.mktemp("slices") / "report.html"
    path.write_text(report.to_html(), encoding="utf-8")
    return path


def _open(browser: Browser, path: Path, **context: object) -> tuple[Page, PageLog]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, **context)  # type: ignore[arg-type]
    page = ctx.new_page()
    log = PageLog.attach(page)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, log


def _visible_plots(page: Page) -> list[str]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('#curves figure'))
        .filter(f => f.getBoundingClientRect().height > 0).map(f => f.id)""")


def test_slice_selector_swaps_the_curves(browser: Browser, report_path: Path) -> None:
    page, log = _open(browser, report_path)
    assert log.requests == [report_path.as_uri()]  # offline: the file itself, nothing else
    table = page.locator("table.slices")
    table.scroll_into_view_if_needed()
    assert table.is_visible()
    first = table.locator("tbody tr").first.inner_text()
    assert "even" in first  # the failing slice first
    assert page.locator("#slice-status").inner_text().startswith("✘ Failing slice")
    assert HOSTILE in page.locator("table.slices").inner_text()  # shown as text
    select = page.locator("#slice-select")
    assert select.is_visible()
    options = select.locator("option").all_inner_texts()
    assert options[0] == "all queries" and options[1] == "slice even"
    assert f"slice {HOSTILE}" in options
    all_plots = _visible_plots(page)
    assert all_plots and all(p.startswith("curve-") for p in all_plots)
    select.select_option(label="slice odd")
    shown = _visible_plots(page)
    assert shown and all(p.startswith("slice-") for p in shown)
    group = page.locator("details.slice-group:not([hidden])")
    assert group.count() == 1 and group.get_attribute("data-name") == "odd"
    svg = group.locator("svg.plot").first
    svg.scroll_into_view_if_needed()
    box = svg.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 100
    select.select_option(value="")
    assert _visible_plots(page) == all_plots
    log.assert_clean()  # no console error, no dialog (the hostile name never ran)
    page.context.close()


def test_without_javascript_every_slice_is_listed(browser: Browser, report_path: Path) -> None:
    page, log = _open(browser, report_path, java_script_enabled=False)
    assert page.locator("#slice-select").count() == 0
    groups = page.locator("details.slice-group")
    assert groups.count() == 3 and all(groups.nth(i).is_visible() for i in range(3))
    groups.nth(0).locator("summary").click()
    svg = groups.nth(0).locator("svg.plot").first
    svg.scroll_into_view_if_needed()
    assert svg.is_visible()
    assert page.locator("#curves-all svg.plot").first.is_visible()
    assert log.requests == [report_path.as_uri()]
    page.context.close()
