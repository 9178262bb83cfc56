"""The explorer's front end (``static/explorer.js``) in headless Chromium, end to end.

Each test renders the real ES module on a blank page whose fake anywidget model is bridged to a
real Python ``ragreport.Explorer`` (``tests/explorer_page.py``): clicks and keys change traits
that the Python widget validates, and its replies come back into the page. No kernel, no
JupyterLab, no network. A browser that cannot start fails the tests (``tests/browser.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser import launch
from explorer_page import ExplorerPage

import ragreport
from ragreport.examples import example_files

pytestmark = pytest.mark.browser

OPTION = ".rr-explorer [role=listbox] [role=option]"
CUT = ".rr-explorer [data-role=ranking] .rr-grid-a [data-role=cut]"
HOSTILE_Q = '<img src=x onerror="window.__pwned=1">'
HOSTILE_DOC = "<b>d1</b>"
LONG_ID = "L" * 400
LONG_TEXT = "z" * 3000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launch() as b:
        yield b


@pytest.fixture(scope="module")
def example() -> tuple[Any, list[Any]]:
    files = example_files()
    return files, [ragreport.evaluate(files.qrels, run) for run in files.runs]


def make_example(example: tuple[Any, list[Any]], **kwargs: Any) -> Any:
    files, results = example
    return ragreport.Explorer(results, queries=files.queries, docs=files.docs, **kwargs)


def deep_explorer() -> Any:
    """Query "deep": 40 retrieved, the relevant documents at ranks 27 and 28 only."""
    docs = [f"d{i:02d}" for i in range(1, 41)]
    run = {"deep": {d: 100.0 - i for i, d in enumerate(docs)},
           "other": {"x1": 2.0, "x2": 1.0}}
    qrels = {"deep": {"d27": 1, "d28": 2, "gone": 1}, "other": {"x1": 1}}
    result = ragreport.evaluate(qrels, run, name="deep")
    texts = {d: f"passage of {d}" for d in docs}
    return ragreport.Explorer(result, queries={"deep": "a deep query", "other": "other"},
                              docs=texts, measure="R", k=5)


def hostile_explorer() -> Any:
    qrels = {HOSTILE_Q: {HOSTILE_DOC: 1, LONG_ID: 1}, "q2": {"d1": 1}}
    run_a = {HOSTILE_Q: {HOSTILE_DOC: 3.0, LONG_ID: 2.0, "d3": 1.0}, "q2": {"d1": 1.0}}
    run_b = {HOSTILE_Q: {LONG_ID: 3.0, HOSTILE_DOC: 2.0}, "q2": {"d2": 1.0}}
    results = [ragreport.evaluate(qrels, run_a, name="<i>run a</i>"),
               ragreport.evaluate(qrels, run_b, name="<script>b</script>")]
    queries = {HOSTILE_Q: "<script>window.__pwned=2</script>" + LONG_TEXT, "q2": "plain"}
    docs = {HOSTILE_DOC: '<img src=x onerror="window.__pwned=3">', LONG_ID: LONG_TEXT}
    return ragreport.Explorer(results, queries=queries, docs=docs)


def many_explorer(n: int, depth: int = 10, seed: int = 7) -> Any:
    """``n`` queries, two runs ``depth`` deep, three judged documents each (TREC files)."""
    rng = np.random.default_rng(seed)
    qids = np.array([f"q{i:06d}" for i in range(n)])
    pool = 30
    rel = np.argsort(rng.random((n, pool)), axis=1)[:, :3]
    qrels = {str(q): {f"d{j}": 1 + int(j % 2) for j in row}
             for q, row in zip(qids, rel, strict=True)}
    results = []
    for name in ("bm25", "dense"):
        ranked = np.argsort(rng.random((n, pool)), axis=1)[:, :depth]
        run = {str(q): {f"d{j}": float(depth - r) for r, j in enumerate(row)}
               for q, row in zip(qids, ranked, strict=True)}
        results.append(ragreport.evaluate(qrels, run, name=name))
    texts = {str(q): f"question {i} about topic {i % 97}" for i, q in enumerate(qids)}
    return ragreport.Explorer(results, queries=texts)


def clean(ep: ExplorerPage) -> None:
    """No console error, no page error, no outside request, nothing failed in Python."""
    assert ep.bridge.errors == []
    ep.log.assert_clean()


def box(ep: ExplorerPage, selector: str) -> dict[str, float]:
    b = ep.page.locator(selector).first.bounding_box()
    assert b is not None, f"{selector} is not rendered"
    return {"x": b["x"], "y": b["y"], "width": b["width"], "height": b["height"]}


# ---- layout --------------------------------------------------------------------------------
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_three_columns_at_1400x900(browser: Any, example: Any, theme: str,
                                   tmp_path: Path) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex, width=1400, height=900, theme=theme)
    page = ep.page
    ep.screenshot(tmp_path / f"explorer-1400-{theme}.png")
    root = box(ep, ".rr-explorer")
    assert 740 <= root["height"] <= 830
    assert root["y"] + root["height"] <= 900
    # the page itself does not scroll
    size = page.evaluate("() => [document.scrollingElement.scrollWidth, "
                         "document.scrollingElement.scrollHeight]")
    assert size[0] <= 1400 and size[1] <= 900
    lst = box(ep, ".rr-explorer [data-role=query-list]")
    rank = box(ep, ".rr-explorer [data-role=ranking]")
    panel = box(ep, ".rr-explorer [data-role=panel]")
    cut = box(ep, CUT)
    # side by side, left to right, inside the viewport
    assert lst["x"] + lst["width"] <= rank["x"] <= rank["x"] + rank["width"] <= panel["x"]
    for b in (lst, rank, panel, cut):
        assert b["x"] >= 0 and b["x"] + b["width"] <= 1400
        assert b["y"] >= 0 and b["y"] + b["height"] <= 900
    assert rank["width"] >= 500 and lst["width"] >= 240 and panel["width"] >= 260
    # the cut line sits inside the ranking's visible box
    assert rank["y"] < cut["y"] < rank["y"] + rank["height"]
    # the per-query panel shows its targets and the curve without scrolling
    curve = box(ep, ".rr-explorer [data-role=panel] svg.rr-curve")
    assert curve["y"] + curve["height"] <= 900
    # every control is whole: inside the root, not collapsed
    controls = ["measure", "k-slider", "k-input", "swap", "report-button", "filter"]
    for name in controls:
        b = box(ep, f".rr-explorer [data-role={name}]")
        assert b["width"] >= 24 and b["x"] + b["width"] <= root["x"] + root["width"], name
    assert box(ep, ".rr-explorer [data-role=k-slider]")["width"] >= 120
    # columns scroll inside themselves
    assert page.evaluate("() => getComputedStyle(document.querySelector("
                         "'.rr-explorer [role=listbox]')).overflowY") == "auto"
    # WCAG AA for every text in this theme
    items = ep.contrast()["items"]
    assert len(items) > 100
    low = [i for i in items if i["ratio"] < i["need"]]
    assert low == [], low[:5]
    clean(ep)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_stacks_at_700px(browser: Any, example: Any, theme: str, tmp_path: Path) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex, width=700, height=900, theme=theme)
    page = ep.page
    page.screenshot(path=str(tmp_path / f"explorer-700-{theme}.png"), full_page=True)
    assert "rr-narrow" in (ep.root.get_attribute("class") or "")
    lst = box(ep, ".rr-explorer [data-role=query-list]")
    rank = box(ep, ".rr-explorer [data-role=ranking]")
    panel = box(ep, ".rr-explorer [data-role=panel]")
    assert lst["y"] + lst["height"] <= rank["y"] < rank["y"] + rank["height"] <= panel["y"]
    for b in (lst, rank, panel):
        assert b["x"] >= 0 and b["x"] + b["width"] <= 700
    overflow = page.evaluate("""() => {
      const out = [];
      if (document.scrollingElement.scrollWidth > 700) out.push('page');
      for (const el of document.querySelectorAll('.rr-explorer, .rr-explorer *')) {
        if (el instanceof SVGElement || !el.getClientRects().length) continue;
        const r = el.getBoundingClientRect();
        if (r.right > 700.5 || r.left < -0.5) out.push(el.className || el.tagName);
      }
      return out; }""")
    assert overflow == []
    low = [i for i in ep.contrast()["items"] if i["ratio"] < i["need"]]
    assert low == [], low[:5]
    # widened again, it goes back to three columns
    page.set_viewport_size({"width": 1400, "height": 900})
    page.wait_for_function("() => !document.querySelector('.rr-explorer')"
                           ".classList.contains('rr-narrow')")
    clean(ep)


def test_medium_width_keeps_the_ranking_readable(browser: Any, example: Any) -> None:
    """1,000 px (JupyterLab with a side panel open): still three columns, the ranking keeps
    the room, nothing sticks out of the widget, the passage stays readable."""
    ex = make_example(example)
    ex.set_runs(0, 1)
    ep = ExplorerPage.open(browser, ex, width=1000, height=900)
    page = ep.page
    assert "rr-narrow" not in (ep.root.get_attribute("class") or "")
    root = box(ep, ".rr-explorer")
    lst = box(ep, ".rr-explorer [data-role=query-list]")
    rank = box(ep, ".rr-explorer [data-role=ranking]")
    panel = box(ep, ".rr-explorer [data-role=panel]")
    assert lst["x"] + lst["width"] <= rank["x"] < panel["x"]
    assert rank["width"] >= 440 and panel["x"] + panel["width"] <= root["x"] + root["width"]
    for side in ("a", "b"):
        assert box(ep, f".rr-grid-{side} .rr-grid-scroll")["width"] >= 200
        assert box(ep, f".rr-grid-{side} [data-role=cut]")["y"] + 22 <= 900
    page.locator(".rr-grid-a [data-index='1']").click()
    ep.settle()
    assert box(ep, ".rr-explorer [data-role=passage]")["width"] >= 250
    out = page.evaluate("""() => {
      const r = document.querySelector('.rr-explorer').getBoundingClientRect();
      return [...document.querySelectorAll('.rr-explorer *')]
        .filter(e => !(e instanceof SVGElement) && e.getClientRects().length
                && !e.closest('.rr-measures-wrap'))
        .filter(e => e.getBoundingClientRect().right > r.right + 0.5)
        .map(e => e.className); }""")
    assert out == []
    low = [i for i in ep.contrast()["items"] if i["ratio"] < i["need"]]
    assert low == [], low[:5]
    clean(ep)


# ---- query list: click, keys, filter --------------------------------------------------------
def test_click_a_row_selects_the_query(browser: Any, example: Any) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    opts = ep.page.locator(OPTION)
    third = opts.nth(2)
    qid = third.get_attribute("data-query-id")
    assert qid and qid != ex.selected
    assert opts.first.get_attribute("aria-setsize") == str(ex.n_visible)
    assert third.get_attribute("aria-posinset") == "3"
    third.click()
    ep.settle()
    assert ex.selected == qid
    assert ep.ranking_qid() == qid
    assert ep.page.locator(".rr-explorer [data-role=ranking] .rr-q-text").text_content() \
        == ex.ranking["query_text"] != ""
    sel = ep.selected_option()
    assert sel is not None and sel["qid"] == qid and sel["inView"] and sel["active"]
    # the first rank row of the grid is the first document Python ranked for that query
    assert ep.page.locator(".rr-grid-a [data-index='0']").get_attribute("data-doc-id") \
        == ex.ranking["rows"]["doc_id"][0]
    clean(ep)


def test_arrow_keys_j_k_home_end(browser: Any, example: Any) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    order = ex.query_order()
    ep.page.locator(OPTION).first.click()
    ep.settle()
    assert ex.selected == order[0]
    kb = ep.page.keyboard
    for key, pos in (("ArrowDown", 1), ("j", 2), ("j", 3), ("k", 2), ("ArrowUp", 1)):
        kb.press(key)
        sel = ep.selected_option()
        assert sel is not None and sel["pos"] == pos + 1, key  # moved at once, locally
        ep.settle()
        assert ex.selected == order[pos], key
        assert ep.ranking_qid() == order[pos]
    kb.press("End")
    ep.settle()
    assert ex.selected == order[-1]
    sel = ep.selected_option()
    assert sel is not None and sel["qid"] == order[-1] and sel["inView"]
    kb.press("ArrowDown")  # at the end: stays there, and says so
    assert "this is the last query" in (ep.page.locator(".rr-explorer .rr-count")
                                        .text_content() or "")
    ep.settle()
    assert ex.selected == order[-1]
    kb.press("Home")
    ep.settle()
    assert ex.selected == order[0]
    # a selection made in Python (explorer.select_query) shows in the list, in view
    ex.select_query(order[33])
    ep.push()
    sel = ep.selected_option()
    assert sel is not None and sel["qid"] == order[33] and sel["inView"]
    assert ep.ranking_qid() == order[33]
    kb.press("Home")
    ep.settle()
    # a run of presses keeps the selection in view
    for _ in range(20):
        kb.press("ArrowDown")
    ep.settle()
    sel = ep.selected_option()
    assert sel is not None and sel["qid"] == order[20] and sel["inView"]
    assert ex.selected == order[20]
    clean(ep)


def test_keys_stay_inside_the_widget(browser: Any, example: Any) -> None:
    ep = ExplorerPage.open(browser, make_example(example))
    assert ep.root.get_attribute("data-lm-suppress-shortcuts") is not None
    ep.page.evaluate("() => { window.__keys = 0; document.addEventListener('keydown', "
                     "() => { window.__keys += 1; }); }")
    ep.page.locator(OPTION).first.click()
    for key in ("j", "k", "ArrowDown", "a", "b", "d"):
        ep.page.keyboard.press(key)
    ep.role("filter").press("x")
    ep.settle()
    assert ep.page.evaluate("() => window.__keys") == 0
    # the cleanup anywidget calls on removal drops every model listener and the DOM
    assert ep.page.evaluate("() => window.__rr.handlerCount()") > 0
    ep.page.evaluate("() => window.__rr.cleanup()")
    assert ep.page.evaluate("() => window.__rr.handlerCount()") == 0
    assert ep.root.count() == 0
    clean(ep)


def test_filter_applies_as_you_type_and_empty_state(browser: Any, example: Any) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    n_all = ex.n_visible
    f = ep.role("filter")
    f.click()
    ep.page.keyboard.type("decorat", delay=30)  # no Enter
    ep.page.wait_for_function("() => document.querySelectorAll("
                              "'.rr-explorer [role=option][data-query-id]').length < 5")
    ep.settle()
    assert ex.filter_text == "decorat"
    shown = ep.page.locator(OPTION).evaluate_all("os => os.map(o => o.dataset.queryId)")
    assert 0 < len(shown) == ex.n_visible < n_all
    texts = ep.page.locator(OPTION + " .rr-opt-text").all_text_contents()
    assert len(texts) == len(shown)
    for qid, text in zip(shown, texts, strict=True):
        assert "decorat" in (qid + " " + text).lower()
    assert ep.role("empty").is_hidden()
    assert re.search(rf"{ex.n_visible} of {n_all} queries",
                     ep.page.locator(".rr-explorer .rr-count").text_content() or "")
    # no match: an explicit empty state, no stale rows
    f.fill("zzqqxx-nothing")
    ep.page.wait_for_function("() => !document.querySelector("
                              "'.rr-explorer [data-role=empty]').hidden")
    ep.settle()
    assert ex.n_visible == 0
    assert ep.role("empty").text_content().startswith(  # type: ignore[union-attr]
        "No query matches \u201czzqqxx-nothing\u201d")
    assert ep.page.locator(OPTION).count() == 0
    # clearing brings every query back
    ep.role("empty").get_by_role("button", name="Clear filters").click()
    ep.settle()
    assert ex.filter_text == "" and ex.n_visible == n_all
    assert ep.page.locator(OPTION).count() > 5
    clean(ep)


def test_category_sort_and_fails_only(browser: Any, example: Any) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    ep.role("sort").select_option("id")
    ep.settle()
    assert ex.sort == "id"
    shown = ep.visible_qids()
    assert shown == sorted(shown) and shown == ex.query_order()[:len(shown)]
    ep.role("sort").select_option("delta_desc")
    ep.settle()
    order = ex.query_order()
    # the selection stays in view; every row shown is the row of its position
    shown_pos = ep.page.locator(OPTION + "[data-query-id]").evaluate_all(
        "os => os.map(o => [Number(o.getAttribute('aria-posinset')) - 1, o.dataset.queryId])")
    assert shown_pos and all(order[p] == q for p, q in shown_pos)
    ep.page.evaluate("() => { document.querySelector('.rr-explorer [role=listbox]')"
                     ".scrollTop = 0; }")
    ep.settle()
    assert ep.visible_qids() == order[:len(ep.visible_qids())]
    deltas = ep.page.locator(".rr-explorer [role=option] .rr-delta").all_text_contents()
    values = [float(d.replace("\u2212", "-").replace("\u00b1", "")) for d in deltas]
    assert values == sorted(values, reverse=True) and values[0] > 0
    ep.role("sort").select_option("delta_asc")
    ep.settle()
    ep.page.evaluate("() => { document.querySelector('.rr-explorer [role=listbox]')"
                     ".scrollTop = 0; }")
    ep.settle()
    deltas = ep.page.locator(".rr-explorer [role=option] .rr-delta").all_text_contents()
    values = [float(d.replace("\u2212", "-").replace("\u00b1", "")) for d in deltas]
    assert values == sorted(values) and values[0] < 0
    # the most common failure kind among the queries
    codes = [c for c in ex.head["kind"] if c not in (0,)]
    code = max(set(codes), key=codes.count)
    cat = next(c["id"] for c in ex.meta["categories"] if c["code"] == code)
    ep.role("category").select_option(cat)
    ep.settle()
    assert ex.category == cat
    assert 0 < ex.n_visible < ex.meta["n_queries"]
    assert ep.page.locator(OPTION).count() == ex.n_visible
    ep.role("category").select_option("")
    ep.role("fails-only").check()
    ep.settle()
    assert ex.fails_only is True and ep.page.locator(OPTION).count() > 0
    clean(ep)


# ---- measure and K ----------------------------------------------------------------------------
def test_k_input_and_slider_move_the_cut_line(browser: Any, example: Any) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    page = ep.page
    kmax = ex.meta["k_max"]
    assert ep.role("k-slider").get_attribute("max") == str(kmax) == \
        ep.role("k-input").get_attribute("max")
    assert kmax == 50
    top0 = box(ep, CUT)["y"]
    ep.role("k-input").fill("3")
    ep.role("k-input").press("Enter")
    ep.settle()
    assert ex.k == 3
    assert page.locator(CUT).text_content() == "cut-off at K = 3"
    row3 = box(ep, ".rr-grid-a [data-index='2']")
    cut = box(ep, CUT)
    assert abs(cut["y"] - (row3["y"] + row3["height"])) <= 2 and cut["y"] < top0
    # labels carry K, titles the full name
    opts = ep.role("measure").locator("option")
    labels = opts.all_text_contents()
    assert all(label.endswith("@3") for label in labels), labels
    assert opts.first.get_attribute("title") == ex.meta["families"][0]["title"]
    assert ep.page.locator(".rr-explorer .rr-measures tbody th").first.text_content() \
        .endswith("@3")  # type: ignore[union-attr]
    # the slider: keyboard steps
    ep.role("k-slider").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    ep.settle()
    assert ex.k == 5 and ep.role("k-input").input_value() == "5"
    assert page.locator(CUT).text_content() == "cut-off at K = 5"
    # the deepest K is the deepest ranking, beyond 20
    ep.role("k-input").fill("999")
    ep.role("k-input").press("Enter")
    ep.settle()
    assert ex.k == kmax and ep.role("k-input").input_value() == str(kmax)
    # the grid scrolled to the new cut line
    grid = box(ep, ".rr-grid-a .rr-grid-scroll")
    cut = box(ep, CUT)
    assert grid["y"] <= cut["y"] and cut["y"] + cut["height"] <= grid["y"] + grid["height"]
    assert page.locator(CUT).text_content() == f"cut-off at K = {kmax}"
    # the measure select
    ep.role("measure").select_option("nDCG")
    ep.settle()
    assert ex.measure == "nDCG"
    assert (ep.role("summary").text_content() or "").startswith(f"nDCG@{kmax} mean")
    clean(ep)


def test_relevant_beyond_the_visible_range_is_announced(browser: Any) -> None:
    ex = deep_explorer()
    ep = ExplorerPage.open(browser, ex)
    ep.page.locator(OPTION + "[data-query-id=deep]").click()
    ep.settle()
    beyond = ep.page.locator(".rr-grid-a [data-role=beyond]")
    assert beyond.text_content() == "Relevant beyond the visible range: ranks 27, 28"
    missing = ep.page.locator(".rr-grid-a [data-role=missing]").text_content() or ""
    assert "not retrieved (1)" in missing and "gone" in missing
    # the rows are marked: relevant by text, unjudged by text
    assert ep.page.locator(".rr-grid-a [data-index='0'] .rr-c-grade").text_content() \
        == "unjudged"
    beyond.get_by_role("button", name="27").click()
    ep.settle()
    row = ep.page.locator(".rr-grid-a [data-index='26']")
    assert "relevant" in (row.locator(".rr-c-grade").text_content() or "")
    assert "rr-rel" in (row.get_attribute("class") or "")
    grid = box(ep, ".rr-grid-a .rr-grid-scroll")
    b = row.bounding_box()
    assert b is not None and grid["y"] <= b["y"] and b["y"] + b["height"] <= \
        grid["y"] + grid["height"] + 1
    assert beyond.is_hidden() or "27" not in (beyond.text_content() or "")
    clean(ep)


def test_long_unbroken_text_wraps_and_hostile_strings_are_text(browser: Any) -> None:
    ex = hostile_explorer()
    ep = ExplorerPage.open(browser, ex)
    page = ep.page
    page.locator(OPTION).filter(has_text="<img").click()
    ep.settle()
    assert ex.selected == HOSTILE_Q
    assert ep.ranking_qid() == HOSTILE_Q
    assert page.evaluate("() => window.__pwned") is None
    root = ep.root
    assert root.locator("img, script, b, i").count() == 0
    assert (root.locator("[data-query-id]").first.get_attribute("data-query-id")
            in (HOSTILE_Q, "q2"))
    assert HOSTILE_DOC in (page.locator(".rr-grid-a").text_content() or "")
    # open the passage of the long document: full text, wrapped
    page.locator(f".rr-grid-a [data-doc-id={LONG_ID}]").click()
    ep.settle()
    passage = ep.role("passage")
    assert (passage.locator(".rr-passage-text").text_content() or "") == LONG_TEXT
    page.locator(".rr-grid-a [data-index='0']").click()
    ep.settle()
    assert "onerror" in (passage.text_content() or "")
    assert root.locator("img").count() == 0 and page.evaluate("() => window.__pwned") is None
    page.locator(f".rr-grid-a [data-doc-id={LONG_ID}]").click()
    ep.settle()
    over = page.evaluate("""() => [...document.querySelectorAll(
        '.rr-explorer .rr-c-doc, .rr-explorer .rr-q-title, .rr-explorer .rr-passage-text, '
        + '.rr-explorer .rr-col, .rr-explorer .rr-grid-row, .rr-explorer .rr-opt, '
        + '.rr-explorer .rr-summary, .rr-explorer')]
        .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1)
        .map(e => e.className)""")
    assert over == []
    col = box(ep, ".rr-explorer [data-role=ranking]")
    assert col["x"] + col["width"] <= box(ep, ".rr-explorer [data-role=panel]")["x"]
    # run names with markup are text in the selects and titles
    assert ep.role("run-a").locator("option").first.text_content() == "<i>run a</i>"
    clean(ep)


# ---- A/B ----------------------------------------------------------------------------------
def test_swap_and_a_equals_b(browser: Any, example: Any) -> None:
    ex = make_example(example)
    ex.set_runs(0, 1)
    ep = ExplorerPage.open(browser, ex)
    runs = ex.meta["runs"]
    title_a = ep.page.locator(".rr-grid-a .rr-grid-title")
    assert runs[0] in (title_a.text_content() or "")
    swap = ep.page.get_by_role("button", name="swap runs A and B")
    swap.click()
    ep.settle()
    assert (ex.run_a, ex.run_b) == (1, 0)
    assert ep.role("run-a").input_value() == "1" and ep.role("run-b").input_value() == "0"
    assert runs[1] in (title_a.text_content() or "")
    assert ex.ranking["run"] == runs[1]
    # A = B is refused: the error is shown, the runs stay as they were
    ep.role("run-b").select_option("1")
    ep.settle()
    err = ep.role("error")
    assert err.is_visible() and "run A and run B must differ" in (err.text_content() or "")
    assert (ex.run_a, ex.run_b) == (1, 0) and ep.role("run-b").input_value() == "0"
    # Python refuses A = B too (a view that sent it anyway): its values come back
    ep.page.evaluate("() => { window.__rr.model.set('run_b', 1); "
                     "window.__rr.model.save_changes(); }")
    ep.settle()
    assert (ex.run_a, ex.run_b) == (1, 0) and ep.role("run-b").input_value() == "0"
    assert "run A and run B must differ" in (err.text_content() or "")
    # an error from Python (an invalid K sent by the view) is shown too
    ep.page.evaluate("() => { window.__rr.model.set('k', 100000); "
                     "window.__rr.model.save_changes(); }")
    ep.settle()
    assert ex.k <= ex.meta["k_max"] and ex.error != ""
    assert err.is_visible() and ex.error in (err.text_content() or "")
    # the paired test line for the shown measure and K
    cmp_text = ep.role("compare").text_content() or ""
    assert cmp_text.startswith(f"Paired test{ex.compare['label']}") or \
        ex.compare["label"] in cmp_text
    assert "t-test p =" in cmp_text and "randomisation p =" in cmp_text
    clean(ep)


def test_b_moves_are_coloured_by_what_they_did(browser: Any, example: Any) -> None:
    ex = make_example(example)
    ex.set_runs(0, 1)
    ep = ExplorerPage.open(browser, ex)
    ep.role("sort").select_option("delta_desc")
    ep.settle()
    ep.page.locator(OPTION).first.click()
    ep.settle()
    rows = ep.page.locator(".rr-grid-b [role=row][data-index]").evaluate_all(
        """rs => rs.map(r => ({rel: r.classList.contains('rr-rel'),
                                unjudged: r.classList.contains('rr-unjudged'),
                                move: r.querySelector('.rr-c-move').textContent,
                                cls: r.querySelector('.rr-c-move').className}))""")
    assert rows
    checked = 0
    for r in rows:
        mv = r["move"]
        if mv.startswith("\u25b2") or mv.startswith("\u25bc"):
            up = mv.startswith("\u25b2")
            if r["unjudged"]:
                assert "rr-neutral" in r["cls"]
            else:
                assert ("rr-good" if r["rel"] == up else "rr-bad") in r["cls"], r
            checked += 1
    assert checked > 0
    # B's rows open passages too
    ep.page.locator(".rr-grid-b [data-index='0']").click()
    ep.settle()
    assert ep.role("passage").is_visible()
    doc = ep.page.locator(".rr-grid-b [data-index='0']").get_attribute("data-doc-id") or "?"
    # after a swap the passage follows its document into the other grid
    ep.page.get_by_role("button", name="swap runs A and B").click()
    ep.settle()
    active = ep.page.locator(".rr-grid-a [role=row][aria-selected=true]")
    assert active.count() == 1 and active.get_attribute("data-doc-id") == doc
    assert doc in (ep.role("passage").locator(".rr-passage-title").text_content() or "")
    assert "tfidf" in (ep.role("passage").text_content() or "") or \
        ex.meta["runs"][ex.run_b] in (ep.role("passage").text_content() or "")
    clean(ep)


# ---- passage, panel, report ---------------------------------------------------------------
def test_passage_side_panel_and_panel(browser: Any, example: Any) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    row = ep.page.locator(".rr-grid-a [data-index='1']")
    doc = row.get_attribute("data-doc-id")
    row.click()
    ep.settle()
    full = ex.handle_message({"type": "passage", "id": 1, "qid": ex.selected,
                              "doc_id": doc})[0]["text"]
    assert len(full) > 300  # more than the snippet
    assert ep.role("passage").locator(".rr-passage-text").text_content() == full
    # the arrow keys in the ranking move to the next document's passage
    ep.page.keyboard.press("ArrowDown")
    ep.settle()
    nxt = ep.page.locator(".rr-grid-a [data-index='2']")
    assert nxt.get_attribute("aria-selected") == "true"
    assert (nxt.get_attribute("data-doc-id") or "?") in (ep.role("passage").text_content()
                                                         or "")
    ep.page.get_by_role("button", name="close passage").click()
    assert ep.role("passage").is_hidden()
    panel = ep.role("panel")
    targets = panel.locator(".rr-targets li")
    assert targets.count() == len(ex.panel["targets"]) > 0
    first = ex.panel["targets"][0]
    assert first["label"] in (targets.first.text_content() or "")
    assert ("pass" if first["pass"] else "fails") in (targets.first.text_content() or "")
    # the curve: axis ticks, the query and the mean
    svg = panel.locator("svg.rr-curve")
    ticks = svg.locator("text.rr-tick").all_text_contents()
    assert "0" in ticks and "1" in ticks and str(ex.meta["k_max"]) in ticks
    assert svg.locator("path.rr-line-mean").count() >= 1
    assert svg.locator("path.rr-line:not(.rr-line-mean)").count() >= 1
    clean(ep)


def test_report_button_busy_then_link(browser: Any, example: Any, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    btn = ep.role("report-button")
    state = ep.page.evaluate("""() => {
      const b = document.querySelector('.rr-explorer [data-role=report-button]');
      b.click();
      return [b.disabled, b.textContent]; }""")
    assert state == [True, "Writing report\u2026"]
    ep.settle(timeout=60_000)
    link = ep.role("report-link")
    link.wait_for(state="visible", timeout=60_000)
    written = Path(ex.report["path"])
    assert ex.report["state"] == "done" and written.is_file()
    assert written.parent == tmp_path.resolve()
    assert str(written) in (link.text_content() or "") or written.name in (
        link.text_content() or "")
    assert link.get_attribute("href") == ex.report["url"]
    assert btn.is_enabled() and btn.text_content() == "Write HTML report"
    # Python said busy before done, and the page saw both
    states = [v["state"] for n, v in ep.page.evaluate(
        "() => window.__rr.trace || []") if n == "report"]
    assert states == ["busy", "done"]
    clean(ep)


def test_report_error_is_shown(browser: Any, example: Any, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragreport-report.html").mkdir()  # the default path cannot be written
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    ep.role("report-button").click()
    ep.settle(timeout=60_000)
    assert ex.report["state"] == "error"
    err = ep.role("error")
    assert err.is_visible() and ex.report["message"] in (err.text_content() or "")
    assert ep.role("report-link").is_hidden()
    assert ep.role("report-button").is_enabled()
    clean(ep)


def test_without_a_kernel_the_view_says_so(browser: Any) -> None:
    """Saved widget state, no kernel: requests get no answer; the view says so."""
    ex = many_explorer(1_000)
    ep = ExplorerPage.open(browser, ex)
    page = ep.page
    page.evaluate("() => { window.rrSend = () => new Promise(() => {}); }")
    page.evaluate("() => { document.querySelector('.rr-explorer [role=listbox]').scrollTop = "
                  "600 * 42; }")
    page.locator(".rr-explorer [data-role=report-button]").click()
    assert ep.role("report-button").is_disabled()
    page.locator(OPTION).filter(has_text="waiting for the kernel").first.wait_for(
        timeout=10_000)
    err = ep.role("error")
    err.wait_for(state="visible", timeout=10_000)
    assert "kernel did not answer" in (err.text_content() or "")
    assert ep.role("report-button").is_enabled()
    clean(ep)


# ---- stale windows and speed ----------------------------------------------------------------
def test_stale_rows_are_dropped(browser: Any) -> None:
    ex = many_explorer(1_000)
    ep = ExplorerPage.open(browser, ex)
    page = ep.page
    # hold every rows reply 300 ms after Python answered, so the filter overtakes it
    page.evaluate("""() => { const orig = window.rrSend;
      window.rrSend = (m) => { const p = orig(m);
        return m.type === 'rows' ? p.then(r => new Promise(res => setTimeout(() => res(r), 300)))
                                 : p; }; }""")
    page.evaluate("() => { document.querySelector('.rr-explorer [role=listbox]').scrollTop = "
                  "600 * 42; }")
    page.wait_for_function("() => window.__rr.sends.some(m => m.type === 'rows')")
    ep.role("filter").fill("topic 1")
    ep.settle()
    page.wait_for_timeout(400)
    ep.settle()
    order = ex.query_order()
    shown = page.locator(OPTION + "[data-query-id]").evaluate_all(
        "os => os.map(o => [Number(o.getAttribute('aria-posinset')) - 1, o.dataset.queryId])")
    assert shown and all(order[pos] == qid for pos, qid in shown)
    assert ex.n_visible < 250
    # back to every query: the list scrolled into rows not fetched for this order gets them
    ep.role("filter").fill("")
    ep.settle()
    page.evaluate("() => { document.querySelector('.rr-explorer [role=listbox]').scrollTop = "
                  "250 * 42; }")
    page.wait_for_function("() => document.querySelector('.rr-explorer [role=option]"
                           "[aria-posinset=\"251\"][data-query-id]') !== null")
    assert page.locator(OPTION + '[aria-posinset="251"]').get_attribute("data-query-id") \
        == ex.query_order()[250]
    # windows already fetched for this order are cached: scrolling back asks for nothing
    ep.settle()
    sent = page.evaluate("() => window.__rr.sends.length")
    for pos in (0, 250, 0, 250):
        page.evaluate("(y) => { document.querySelector('.rr-explorer [role=listbox]')"
                      ".scrollTop = y; }", pos * 42)
        ep.settle()
    assert page.evaluate("() => window.__rr.sends.length") == sent
    assert page.locator(OPTION + '[aria-posinset="251"]').get_attribute("data-query-id") \
        == ex.query_order()[250]
    clean(ep)


_TIME = """async ([what, arg]) => {
  const q = (s) => document.querySelector(s);
  const lb = q('.rr-explorer [role=listbox]');
  const tick = () => new Promise(r => setTimeout(r, 0));
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  const until = async (cond) => { const t = performance.now();
    while (!cond()) {
      if (performance.now() - t > 5000) throw new Error('timeout ' + what);
      await tick();
    } };
  const rankingShows = (qid) => q('[data-role=ranking-qid]').textContent === qid &&
    !q('.rr-explorer [data-role=ranking]').classList.contains('rr-stale');
  const selected = () => lb.querySelector('[aria-selected=true]');
  let t0, local, qid;
  const py0 = window.__rr.pyMs;
  if (what === 'click') {
    const opt = lb.querySelector(`[aria-posinset="${arg}"]`); qid = opt.dataset.queryId;
    t0 = performance.now(); opt.click();
    await until(() => selected() && selected().dataset.queryId === qid); await frame();
    local = performance.now() - t0;
    await until(() => rankingShows(qid));
  } else if (what === 'key') {
    const pos = Number(selected().getAttribute('aria-posinset'));
    t0 = performance.now();
    lb.dispatchEvent(new KeyboardEvent('keydown', {key: arg, bubbles: true}));
    await until(() => selected() && Number(selected().getAttribute('aria-posinset')) === pos + 1);
    await frame(); local = performance.now() - t0;
    qid = selected().dataset.queryId;
    await until(() => rankingShows(qid));
  } else if (what === 'scroll') {
    t0 = performance.now(); lb.scrollTop = arg * 42;
    await frame(); local = performance.now() - t0;
    await until(() => { const o = lb.querySelector(`[aria-posinset="${arg + 3}"]`);
                        return o && o.dataset.queryId; });
  } else if (what === 'type') {
    const f = q('.rr-explorer [data-role=filter]');
    const applied = window.__rr.applied;
    f.focus(); t0 = performance.now();
    f.value = f.value + arg; f.dispatchEvent(new Event('input', {bubbles: true}));
    await frame(); local = performance.now() - t0;
    // the filter was saved at once (the first key after a pause) and Python's answer drawn
    await until(() => window.__rr.applied > applied && window.__rr.inflight === 0);
    const n = window.__rr.model.get('n_visible');
    const count = n.toLocaleString('en-US');
    await until(() => q('.rr-explorer .rr-count').textContent.startsWith(count));
  } else if (what === 'k') {
    const input = q('.rr-explorer [data-role=k-input]');
    t0 = performance.now(); input.value = String(arg);
    input.dispatchEvent(new Event('change', {bubbles: true}));
    await until(() => q('.rr-grid-a [data-role=cut]')?.textContent === `cut-off at K = ${arg}`);
    await frame(); local = performance.now() - t0;
    await until(() => window.__rr.inflight === 0 &&
                      q('.rr-explorer .rr-measures tbody th')?.textContent.endsWith(`@${arg}`));
  }
  await frame();
  return {local, full: performance.now() - t0, python: window.__rr.pyMs - py0};
}"""


@pytest.mark.slow
def test_interactions_under_100_ms_with_100000_queries(browser: Any) -> None:
    ex = many_explorer(100_000)
    ex.wait_stats()  # the intervals of a large evaluation are computed in a thread
    ep = ExplorerPage.open(browser, ex)
    page = ep.page
    assert ex.meta["n_queries"] == 100_000
    # only the visible rows are in the DOM
    assert page.locator(OPTION).count() < 60
    times: dict[str, list[dict[str, float]]] = {}

    def run(what: str, arg: Any) -> None:
        out = page.evaluate(_TIME, [what, arg])
        times.setdefault(what, []).append(out)
        ep.settle()

    for pos in (4, 7, 2, 9, 5):
        run("click", pos)
    for _ in range(5):
        run("key", "ArrowDown")
    for pos in (50_000, 99_950, 1_234, 77_777, 20_000):
        run("scroll", pos)
    for ch in "topic 12":
        run("type", ch)
        page.wait_for_timeout(150)  # a pause between keystrokes: each one goes at once
    for k in (3, 7, 10, 4, 6):
        run("k", k)
    def median(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    # the harness's own transport: a message Python answers at once, page -> Python -> page
    bridge = median(page.evaluate("""async () => { const out = [];
      for (let i = 0; i < 7; i++) { const t = performance.now();
        JSON.parse(await window.rrSend({type: 'ping', id: 'ping'}));
        out.push(performance.now() - t); }
      return out; }"""))
    report = {w: {"local median": round(median([t["local"] for t in ts]), 1),
                  "local max": round(max(t["local"] for t in ts), 1),
                  "full median": round(median([t["full"] for t in ts]), 1),
                  "python median": round(median([t["python"] for t in ts]), 1)}
              for w, ts in times.items()}
    print(f"\ninteraction times (ms; harness round trip {bridge:.1f} ms):", report)
    # medians of five: this machine's load makes single frames slow now and then
    for what, r in report.items():
        # the view answers every interaction at once: drawn in the same frame or the next
        assert r["local median"] < 100, (what, times[what])
        # the rest of the round trip, but for Python's work (the widget's state) and the
        # harness's transport, is the view drawing the answer: under 100 ms as well
        assert r["full median"] - r["python median"] - bridge < 100, (what, bridge, times[what])
    clean(ep)
