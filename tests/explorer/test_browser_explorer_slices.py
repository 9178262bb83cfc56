"""The explorer's slice filter (``Explorer(..., slices=...)``) in headless Chromium, end to end:
the slice select appears only with slices, choosing one shows its queries (validated by the
Python widget), "Clear filters" resets it, and a hostile slice name stays text.

Uses the fake anywidget page of ``tests/explorer_page.py`` (no kernel, no JupyterLab, no
network). A browser that cannot start fails the tests (``tests/browser.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser import launch
from explorer_page import ExplorerPage

import ragreport
from ragreport.examples import example_files

pytestmark = pytest.mark.browser

OPTION = ".rr-explorer [role=listbox] [role=option]"
HOSTILE = '<img src=x onerror="window.__pwned=1">'


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launch() as b:
        yield b


def _explorer(**kwargs: Any) -> Any:
    files = example_files()
    results = [ragreport.evaluate(files.qrels, run) for run in files.runs]
    return ragreport.Explorer(results, queries=files.queries, docs=files.docs, **kwargs)


def test_slice_select_filters_the_list(browser: Any) -> None:
    tags = {f"q{i:02d}": (["odd"] if i % 2 else ["even"]) + ([HOSTILE] if i <= 3 else [])
            for i in range(1, 42)}
    ex = _explorer(slices=tags)
    ep = ExplorerPage.open(browser, ex)
    sel = ep.role("slice")
    assert sel.is_visible()
    labels = sel.locator("option").all_text_contents()
    assert labels == ["every slice", "slice: odd (21)", f"slice: {HOSTILE} (3)",
                      "slice: even (20)"]  # in the order first seen
    sel.select_option("odd")
    ep.settle()
    assert ex.slice == "odd" and ex.n_visible == 21
    shown = ep.visible_qids()
    assert shown and all(int(q[1:]) % 2 == 1 for q in shown)
    assert ep.page.locator(OPTION).count() <= 21  # a virtualised list: the rows in view
    assert "21 of 41 queries" in ep.page.locator(".rr-explorer .rr-count").inner_text()
    sel.select_option(HOSTILE)
    ep.settle()
    assert ex.slice == HOSTILE and sorted(ep.visible_qids()) == ["q01", "q02", "q03"]
    # a filter with nothing left names the slice; "Clear filters" resets it too
    ep.page.locator(".rr-explorer [data-role=filter]").fill("q04")
    ep.page.locator(".rr-explorer [data-role=filter]").press("Enter")
    ep.settle()
    empty = ep.page.locator(".rr-explorer [data-role=empty]")
    assert empty.is_visible() and HOSTILE in empty.inner_text()
    empty.locator("button").click()
    ep.settle()
    assert ex.slice == "" and ex.n_visible == 41 and sel.input_value() == ""
    assert ep.page.evaluate("() => window.__pwned === undefined")
    assert ep.bridge.errors == []
    ep.log.assert_clean()


def test_no_slices_no_select(browser: Any) -> None:
    ep = ExplorerPage.open(browser, _explorer())
    assert ep.role("slice").count() == 1 and not ep.role("slice").is_visible()
    assert ep.bridge.errors == []
    ep.log.assert_clean()
