"""The explorer's front end (``static/explorer.js``) in headless Chromium, end to end.

Each test renders the real ES module on a blank page whose fake anywidget model is bridged to a
real Python ``ragreport.Explorer`` (``tests/explorer_page.py``): clicks and keys change traits
that the Python widget validates, and its replies come back into the page. No kernel, no
JupyterLab, no network. A browser that cannot start fails the tests (``tests/browser.py``).

Speed (interactions under 100 ms with 100,000 queries) is not a timed test here: it is measured
by ``benchmarks/explorer_speed.py`` in JupyterLab (see ``benchmarks/README.md``).
"""

from __future__ import annotations

import re
import time
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
    # the last keystroke's trailing send, not only a prefix's narrowing, reached Python
    ep.page.wait_for_function("() => window.__rr.attrs.filter_text === 'decorat'")
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
    # the means and the paired test stay over every query, and the summary says so
    scope = ep.role("summary-scope")
    assert scope.text_content() == (f"over all {n_all} queries of run A, not only the "
                                    f"{ex.n_visible} listed")
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
    ex = make_example(example, targets=example[0].targets)  # some queries pass them all
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


def test_no_fails_tag_when_every_query_fails(browser: Any, example: Any) -> None:
    """The seed's default targets fail every query of the example: a "fails" tag on every row
    would tell nothing, so no row carries it, and the filter says why it is off; with the
    example's own targets, the failing rows carry it and the filter keeps them."""
    ex = make_example(example)  # the default targets
    ep = ExplorerPage.open(browser, ex)
    assert ex.head["fails_all"] is True and "fails" not in ex.head
    assert ep.page.locator(OPTION).count() > 0
    assert ep.page.locator(".rr-explorer [role=option] .rr-tag-fail").count() == 0
    box = ep.role("fails-only")
    assert box.is_disabled() and "every query fails a target" in (box.get_attribute("title") or "")
    clean(ep)
    ex = make_example(example, targets=example[0].targets)
    ep = ExplorerPage.open(browser, ex)
    tagged = ep.page.locator(".rr-explorer [role=option] .rr-tag-fail").count()
    shown = ep.page.locator(OPTION).count()
    assert tagged == sum(ex.head["fails"][:shown]) > 0 and not all(ex.head["fails"])
    assert ep.role("fails-only").is_enabled()
    clean(ep)


def test_the_mean_curve_reaches_the_deepest_k(browser: Any) -> None:
    """Rankings of 400 documents evaluated to K = 20: past the evaluated curves the mean is
    computed at a few Ks spread to K = 400, and its line is drawn through them to the end,
    as far as the query's own line (it stopped at K = 20)."""
    import random

    rng = random.Random(1)
    qrels = {f"q{i}": {f"d{j}": 1 for j in rng.sample(range(400), 30)} for i in range(50)}
    run = {f"q{i}": [f"d{j}" for j in range(400)] for i in range(50)}
    results = [ragreport.evaluate(qrels, run, name="a"),
               ragreport.evaluate(qrels, {q: v[::-1] for q, v in run.items()}, name="b")]
    ex = ragreport.Explorer(results, measure="R", targets=[])
    ep = ExplorerPage.open(browser, ex)
    ep.page.locator(OPTION).first.click()
    ep.settle()
    assert ex.meta["k_max"] == 400 and results[0].k_max == 20
    ends = ep.page.evaluate("""() => [...document.querySelectorAll(
        '.rr-explorer svg.rr-curve path.rr-line')].map((p) => {
          const b = p.getBBox(); return [p.getAttribute('class'), b.x + b.width]; })""")
    query = max(x for cls, x in ends if "rr-line-mean" not in cls)
    means = [x for cls, x in ends if "rr-line-mean" in cls]
    assert len(means) == 2 and all(x >= query - 1 for x in means), ends
    clean(ep)


def test_scores_and_tie_marks_in_both_rankings(browser: Any) -> None:
    """Each ranking shows the retriever's score, in the A/B view too, and marks the scores
    tied with another document's: their order (trec_eval's, by document id) decides the
    values, so a reader must see it."""
    qrels = {"t": {"a": 1, "c": 1}, "u": {"x": 1}}
    run_a = {"t": {"a": 2.0, "b": 2.0, "c": 1.5, "d": 1.0}, "u": {"x": 1.0}}
    run_b = {"t": {"a": 3.0, "b": 1.0, "c": 1.0, "d": 1.0}, "u": {"x": 1.0}}
    results = [ragreport.evaluate(qrels, run_a, name="A"),
               ragreport.evaluate(qrels, run_b, name="B")]
    ex = ragreport.Explorer(results, targets=[], measure="P", k=2)
    ex.run_b = 1
    ep = ExplorerPage.open(browser, ex)
    ep.page.locator(OPTION + "[data-query-id=t]").click()
    ep.settle()
    for grid, tied in ((".rr-grid-a", {0: "1\u20132", 1: "1\u20132"}),
                       (".rr-grid-b", {1: "2\u20134", 2: "2\u20134", 3: "2\u20134"})):
        for i in range(4):
            cell = ep.page.locator(f"{grid} [data-index='{i}'] .rr-c-score")
            title = cell.get_attribute("title") or ""
            if i in tied:
                assert cell.locator(".rr-tie-mark").count() == 1
                assert f"tied with ranks {tied[i]}" in title, (grid, i, title)
            else:
                assert cell.locator(".rr-tie-mark").count() == 0 and title == ""
    assert ep.page.locator(".rr-grid-a [data-index='2'] .rr-c-score").text_content() \
        == " score 1.5"  # the A/B grids are compact: the score is a tag of the row
    clean(ep)
    ex.run_b = -1  # one ranking, wide: a column of its own
    ep = ExplorerPage.open(browser, ex)
    ep.page.locator(OPTION + "[data-query-id=t]").click()
    ep.settle()
    head = ep.page.locator(".rr-grid-a [role=columnheader]").all_text_contents()
    assert "score" in head, head
    cell = ep.page.locator(".rr-grid-a [data-index='0'] .rr-c-score")
    assert cell.text_content() == "\u2261 2" and "ranks 1\u20132" in (cell.get_attribute("title")
                                                                  or "")
    clean(ep)


def test_passage_shows_both_ranks_and_focus_stays_in_the_widget(browser: Any) -> None:
    """In the A/B view the passage says the document's rank in both runs; its close button
    and the "relevant beyond" links hand the keys back to the ranking, never to the page."""
    qrels = {"t": {"a": 1, "z": 1}, "u": {"x": 1}}
    docs = [f"d{i:02d}" for i in range(40)]
    run_a = {"t": {"a": 9.0, **{d: 5.0 - i / 100 for i, d in enumerate(docs)}, "z": 0.1},
             "u": {"x": 1.0}}
    run_b = {"t": {"c": 3.0, "a": 2.0}, "u": {"x": 1.0}}
    results = [ragreport.evaluate(qrels, run_a, name="A"),
               ragreport.evaluate(qrels, run_b, name="B")]
    ex = ragreport.Explorer(results, targets=[], measure="P", k=2)
    ex.run_b = 1
    ep = ExplorerPage.open(browser, ex)
    ep.page.locator(OPTION + "[data-query-id=t]").click()
    ep.settle()
    ep.page.locator(".rr-grid-a [data-index='0']").click()
    ep.settle()
    meta = ep.role("passage-meta").text_content() or ""
    assert meta.startswith("rank 1 in A, rank 2 in B \u00b7 relevant"), meta
    ep.page.locator(".rr-grid-a [data-index='1']").click()
    ep.settle()
    assert ", not retrieved by B \u00b7" in (ep.role("passage-meta").text_content() or "")
    ep.page.get_by_role("button", name="close passage").click()
    inside = "() => !!document.activeElement?.closest('.rr-explorer')"
    assert ep.page.evaluate(inside)
    ep.page.keyboard.press("ArrowDown")
    ep.settle()
    assert ep.page.locator(".rr-grid-a .rr-active").count() == 1  # the keys reached it
    ep.page.get_by_role("button", name="close passage").click()
    beyond = ep.page.locator(".rr-grid-a [data-role=beyond]")
    beyond.get_by_role("button", name="42").click()
    assert ep.page.evaluate(inside)
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
    # the report is written in a thread: the kernel answers the view meanwhile (a slow write
    # here, 1.5 s, so the test sees it busy)
    real = ex.state.write_report

    def slow(path: Any) -> Any:
        time.sleep(1.5)
        return real(path)

    monkeypatch.setattr(ex.state, "write_report", slow)
    t0 = time.perf_counter()
    state = ep.page.evaluate("""() => {
      const b = document.querySelector('.rr-explorer [data-role=report-button]');
      b.click();
      return [b.disabled, b.textContent]; }""")
    assert state == [True, "Writing report\u2026"]
    ep.settle()
    assert time.perf_counter() - t0 < 1.4 and ex.report["state"] == "busy"
    ep.page.locator(OPTION).nth(2).click()  # the view still gets its answers
    ep.settle()
    assert ex.selected == ep.ranking_qid() and ex.report["state"] == "busy"
    assert btn.is_disabled()
    ex.wait_report(60)
    ep.push()
    link = ep.role("report-link")
    link.wait_for(state="visible", timeout=60_000)
    written = Path(ex.report["path"])
    assert ex.report["state"] == "done" and written.is_file()
    assert written.parent == tmp_path.resolve()
    # the written path as text beside the link; the link opens THE report (a blob: URL of
    # the HTML written, whatever the host: a relative files/ link breaks in JupyterLab)
    assert str(written) in (ep.role("report-path").text_content() or "")
    got = ep.page.evaluate('''async (sel) => { const a = document.querySelector(sel);
      const r = await fetch(a.href); return {href: a.href, download: a.getAttribute('download'),
      target: a.target, status: r.status, type: r.headers.get('content-type'),
      text: await r.text()}; }''', ".rr-explorer [data-role=report-link]")
    assert got["href"].startswith("blob:"), got["href"]
    assert got["download"] is None and got["target"] == "_blank"  # opens, never downloads
    assert got["status"] == 200 and got["type"].startswith("text/html")
    assert got["text"] == written.read_text(encoding="utf-8")
    assert re.search(r"<title>[^<]*· ragreport</title>", got["text"])
    # a second report: a new blob, the old one revoked
    first = got["href"]
    ep.page.evaluate("""() => { window.__revoked = []; const real = URL.revokeObjectURL;
        URL.revokeObjectURL = (u) => { window.__revoked.push(u); real.call(URL, u); }; }""")
    ep.role("report-button").click()
    ep.settle(timeout=60_000)
    ex.wait_report(60)
    ep.push()
    ep.page.wait_for_function("(h) => document.querySelector("
                              "'.rr-explorer [data-role=report-link]').href !== h", arg=first,
                              timeout=60_000)
    assert ep.page.evaluate("() => window.__revoked") == [first]
    assert btn.is_enabled() and btn.text_content() == "Write HTML report"
    # Python said busy before done, and the page saw both
    states = [v["state"] for n, v in ep.page.evaluate(
        "() => window.__rr.trace || []") if n == "report"]
    assert states == ["busy", "done", "busy", "done"]  # two reports
    clean(ep)


def test_report_error_is_shown(browser: Any, example: Any, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragreport-report.html").mkdir()  # the default path cannot be written
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    ep.role("report-button").click()
    ep.settle(timeout=60_000)
    ex.wait_report(60)
    ep.push()
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


# ---- issue 14 trial: narrow columns, labelled chips, errors, hidden selection, no kernel ----
LONG_A = "bm25-with-a-rather-long-run-name"
LONG_B = "dense-retriever-with-a-long-name"


def narrow_explorer() -> Any:
    """Two runs with long names; "deep": A retrieves 40, B 3 (the cut line past B's end);
    six judged relevant documents never retrieved; ids like ``customization#17``."""
    ids = [f"attribute-references#{i}" if i % 3 == 0 else f"customization#{i}"
           for i in range(1, 41)]
    missing = [f"comparisons_section/part-{i}#14" for i in range(6)]
    qrels = {"deep": {ids[1]: 1, ids[26]: 2, **{m: 1 for m in missing}},
             "q2": {"x1": 1}, "q3": {"x2": 1}}
    run_a = {"deep": {d: 100.0 - i for i, d in enumerate(ids)}, "q2": {"x1": 1.0},
             "q3": {"x2": 1.0}}
    run_b = {"deep": {ids[26]: 3.0, ids[1]: 2.0, ids[5]: 1.0}, "q2": {"x3": 1.0},
             "q3": {"x2": 1.0}}
    results = [ragreport.evaluate(qrels, run_a, name=LONG_A),
               ragreport.evaluate(qrels, run_b, name=LONG_B)]
    ex = ragreport.Explorer(results, queries={"deep": "a deep query", "q2": "two",
                                              "q3": "three"},
                            measure="R", k=30)
    ex.set_runs(0, 1)
    ex.select_query("deep")
    return ex


GRID_OVERFLOW = """() => [...document.querySelectorAll('.rr-explorer .rr-grids *')]
  .filter(e => !(e instanceof SVGElement) && e.getClientRects().length
          && e.scrollWidth > e.clientWidth + 0.5)
  .map(e => `${e.className}: ${e.scrollWidth} > ${e.clientWidth}`)"""


@pytest.mark.parametrize("width", [700, 1000])
def test_narrow_rankings_keep_ids_labels_and_missing_readable(browser: Any, width: int,
                                                              tmp_path: Path) -> None:
    ex = narrow_explorer()
    if width == 700:
        ep = ExplorerPage.open(browser, ex, width=700, height=900)
    else:
        ep = ExplorerPage.open(browser, ex, width=1400, height=900, host_width=1000)
    page = ep.page
    page.screenshot(path=str(tmp_path / f"narrow-{width}.png"), full_page=True)
    # nothing in the grids is cut at its right edge
    assert page.evaluate(GRID_OVERFLOW) == []
    # each document id has a line of its own, never shared with the judgment
    same_line = page.evaluate("""() => [...document.querySelectorAll(
        '.rr-explorer .rr-rank-row')].filter(r => {
          const id = r.querySelector('.rr-doc-id').getBoundingClientRect();
          const g = r.querySelector('.rr-c-grade').getBoundingClientRect();
          return g.top < id.bottom - 1 && g.left < id.right && g.right > id.left; })
        .map(r => r.dataset.docId)""")
    assert same_line == []
    # an id breaks only after '#', '/', '_' or '-'
    ids = page.locator(".rr-grid-b .rr-rank-row .rr-doc-id")
    assert ids.count() >= 3
    for i in range(ids.count()):
        assert ids.nth(i).locator("wbr").count() >= 1
    # the B header and the cut line's label wrap instead of being cut
    for side, name in (("a", LONG_A), ("b", LONG_B)):
        title = page.locator(f".rr-grid-{side} .rr-grid-title .rr-run-name")
        assert name in (title.text_content() or "")
        assert page.evaluate("(e) => e.scrollWidth <= e.clientWidth + 0.5",
                             title.element_handle())
    cut_b = page.locator(".rr-grid-b [data-role=cut]")
    assert "only 3 retrieved" in (cut_b.text_content() or "")
    cb = box(ep, ".rr-grid-b [data-role=cut] span")
    gb = box(ep, ".rr-grid-b .rr-grid-scroll")
    assert cb["x"] + cb["width"] <= gb["x"] + gb["width"] + 0.5
    # the missing relevant documents: both blocks visible, with a count and room for ids
    for side in ("a", "b"):
        miss = page.locator(f".rr-grid-{side} [data-role=missing]")
        assert miss.is_visible()
        assert "(6)" in (miss.text_content() or "")
        assert box(ep, f".rr-grid-{side} [data-role=missing]")["height"] >= 36
    a, b = box(ep, ".rr-grid-a"), box(ep, ".rr-grid-b")
    if width == 700:
        # stacked: A above B, one per row, each full width; the summary wraps inside
        assert a["y"] + a["height"] <= b["y"] + 0.5 and abs(a["x"] - b["x"]) < 1
        assert a["width"] > 600 and b["width"] > 600
        for side in ("a", "b"):  # each shows its whole list or at least 200 px of it
            h = page.evaluate(f"""() => {{ const s = document.querySelector(
                '.rr-grid-{side} .rr-grid-scroll'); return [s.clientHeight,
                s.firstChild.offsetHeight]; }}""")
            assert h[0] >= min(200, h[1] - 1), (side, h)
        out = page.evaluate("""() => [...document.querySelectorAll(
            '.rr-explorer .rr-summary, .rr-explorer .rr-summary *')]
            .filter(e => e.getBoundingClientRect().right > 700.5).map(e => e.className)""")
        assert out == []
    else:
        assert a["x"] + a["width"] <= b["x"] + 0.5  # side by side at 1,000 px
    clean(ep)


def test_target_chips_name_their_runs_in_the_mean_line_order(browser: Any,
                                                             example: Any) -> None:
    ex = make_example(example)
    ex.set_runs(0, 1)
    ep = ExplorerPage.open(browser, ex)
    runs = ex.meta["runs"]

    def order() -> tuple[list[str], list[str]]:
        mean = ep.page.locator(".rr-summary .rr-sum-run .rr-run-name").all_text_contents()
        chip = ep.page.locator(".rr-summary .rr-chip").first
        vals = chip.locator(".rr-chip-val")
        named = [vals.nth(i).get_attribute("data-run") or "" for i in range(vals.count())]
        for i, name in enumerate(named):
            assert name[:13] in (vals.nth(i).locator(".rr-chip-run-name").text_content() or "")
            assert name in (vals.nth(i).get_attribute("title") or "")
            assert vals.nth(i).locator(".rr-swatch").count() == 1
        return mean, named

    mean, named = order()
    assert named == [runs[0], runs[1]] and mean[:2] == named
    assert "run A" in (ep.page.locator(".rr-chip-val").first.get_attribute("title") or "")
    ep.role("swap").click()
    ep.settle()
    mean, named = order()
    assert named == [runs[1], runs[0]] and mean[:2] == named
    clean(ep)


def test_error_clears_on_the_next_change_and_can_be_dismissed(browser: Any,
                                                              example: Any) -> None:
    ex = make_example(example)
    ex.set_runs(0, 1)
    ep = ExplorerPage.open(browser, ex)
    err = ep.role("error")
    ep.role("run-b").select_option("0")
    ep.settle()
    assert err.is_visible() and "must differ" in (err.text_content() or "")
    # an unrelated action that Python accepts: the error goes
    ep.page.locator(OPTION).nth(2).click()
    ep.settle()
    assert err.is_hidden()
    # an error from Python, then a change that Python accepts
    ep.page.evaluate("() => { window.__rr.model.set('k', 100000); "
                     "window.__rr.model.save_changes(); }")
    ep.settle()
    assert err.is_visible() and ex.error != ""
    ep.role("k-input").fill("7")
    ep.role("k-input").press("Enter")
    ep.settle()
    assert ex.k == 7 and err.is_hidden()
    # the dismiss button
    ep.role("run-a").select_option("1")
    ep.settle()
    assert err.is_visible()
    ep.page.get_by_role("button", name="dismiss error").click()
    assert err.is_hidden()
    clean(ep)


def test_a_selection_hidden_by_the_filter_says_so(browser: Any, example: Any) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    ep.page.locator(OPTION).nth(1).click()
    ep.settle()
    qid = ex.selected
    note = ep.role("hidden-note")
    assert note.count() == 0
    ep.role("filter").fill("no query has this text")
    ep.settle()
    assert ex.selected == qid and ex.selected_pos == -1
    assert note.is_visible() and note.text_content() == f"{qid} is hidden by the current filter"
    assert ep.ranking_qid() == qid
    ep.role("filter").fill("")
    ep.settle()
    assert ex.selected_pos >= 0 and note.count() == 0
    clean(ep)


def test_a_ranking_that_never_comes_says_the_kernel_did_not_answer(browser: Any,
                                                                    example: Any) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    page = ep.page
    before = ep.ranking_qid()
    page.evaluate("() => { window.rrSave = () => new Promise(() => {}); }")  # kernel gone
    target = page.locator(OPTION).nth(3)
    qid = target.get_attribute("data-query-id")
    assert qid and qid != before
    target.click()
    # meanwhile: the new id over a dimmed, busy ranking and panel (no fresh-looking old numbers)
    assert ep.ranking_qid() == qid
    assert "rr-stale" in (ep.role("panel").get_attribute("class") or "")
    silent = ep.role("ranking-silent")
    silent.wait_for(state="visible", timeout=8000)
    assert silent.text_content() == "The kernel did not answer: rerun the cell"
    assert "loading" not in (ep.role("ranking").text_content() or "")
    hidden = page.evaluate("""() => [
        getComputedStyle(document.querySelector('.rr-explorer .rr-grids')).visibility,
        getComputedStyle(document.querySelector('.rr-explorer .rr-panel')).visibility]""")
    assert hidden == ["hidden", "hidden"]
    ep.log.assert_clean()


def test_escape_closes_the_passage_and_otherwise_reaches_jupyterlab(browser: Any,
                                                                    example: Any) -> None:
    ex = make_example(example)
    ep = ExplorerPage.open(browser, ex)
    page = ep.page
    page.evaluate("() => { window.__esc = 0; document.addEventListener('keydown', "
                  "(e) => { if (e.key === 'Escape') window.__esc += 1; }); }")
    page.locator(".rr-grid-a [data-index='1']").click()
    ep.settle()
    assert ep.role("passage").is_visible()
    page.keyboard.press("Escape")
    assert ep.role("passage").is_hidden()
    assert page.evaluate("() => window.__esc") == 0
    page.keyboard.press("Escape")  # no panel open: JupyterLab gets it (command mode)
    assert page.evaluate("() => window.__esc") == 1
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


def test_numbers_are_shown_as_the_report_shows_them(browser: Any, example: Any) -> None:
    """Values, differences and p-values in the DOM are ``present.shown`` / ``signed`` /
    ``p_text`` of the same numbers (exact halves to even, as Python formats them), and a
    difference is coloured only when it is not a tie (``analysis.compare.outcomes``: zero
    once rounded to 12 decimals)."""
    from ragreport.present import p_text, shown, signed

    ex = make_example(example)
    ex.set_runs(0, 1)
    ep = ExplorerPage.open(browser, ex)
    values = [0.15625, 0.00005, -0.00005, 1e-12, 0.0625, 0.84375]
    deltas = [0.15625, -0.00005, 1e-12, -4e-13, -0.03125, 0.00005]
    head = dict(ex.head)
    n = len(values)
    head["a"] = values + list(head["a"][n:])
    head["delta"] = deltas + list(head["delta"][n:])
    cmp = dict(ex.compare) | {"p_t": 0.0478, "p_rand": 0.000012, "delta": 0.125}
    ex.head = head
    ex.compare = cmp
    ep.push()
    rows = ep.page.evaluate("""(n) => [...document.querySelectorAll(
        '.rr-explorer [role=listbox] [role=option]')].filter(
        (o) => Number(o.getAttribute('aria-posinset')) <= n).sort(
        (x, y) => x.getAttribute('aria-posinset') - y.getAttribute('aria-posinset')).map((o) => {
          const d = o.querySelector('.rr-delta');
          return [o.querySelector('.rr-val').textContent, d.textContent, d.className]; })""", n)
    assert [r[0] for r in rows] == [shown(v) for v in values]
    assert [r[0] for r in rows][:3] == ["0.1562", "0.0001", "-0.0001"]
    assert [r[1] for r in rows] == [signed(d) for d in deltas]
    tie = [round(d, 12) == 0 for d in deltas]
    assert tie == [False, False, False, True, False, False]
    for (_, _, cls), d, t in zip(rows, deltas, tie, strict=True):
        want = "rr-muted" if t else "rr-good" if d > 0 else "rr-bad"
        assert want in cls.split(), (d, cls)
    text = ep.role("compare").text_content() or ""
    assert re.search(r"t-test p = 0\.048(?![0-9])", text) and p_text(0.0478) == "0.048"
    assert f"randomisation p = {p_text(0.000012)}" in text
    assert signed(0.125) in text and signed(0.125) == "+0.1250"
    for p in (0.0625, 0.125, 0.0996, 0.01, 0.5):
        ex.compare = dict(cmp) | {"p_t": p}
        ep.push()
        got = ep.role("compare").text_content() or ""
        assert re.search(rf"t-test p = {re.escape(p_text(p))}(?![0-9])", got), (p, got)
    clean(ep)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_selected_and_active_rows_keep_contrast(browser: Any, example: Any, theme: str) -> None:
    """WCAG AA (4.5:1) for every text on the selection tint: every list row selected and
    every ranking row active at once (the relevant grade, the "no judged" tag, the deltas,
    the moves), both themes."""
    ex = make_example(example)
    ex.set_runs(0, 1)
    ep = ExplorerPage.open(browser, ex, theme=theme)
    marked = ep.page.evaluate("""() => {
      const o = [...document.querySelectorAll('.rr-explorer [role=option]')];
      const r = [...document.querySelectorAll('.rr-explorer .rr-rank-row')];
      o.forEach((e) => e.classList.add('rr-selected'));
      r.forEach((e) => e.classList.add('rr-active'));
      return [o.length, r.length,
              document.querySelectorAll('.rr-active.rr-rel .rr-c-grade').length]; }""")
    assert marked[0] > 5 and marked[1] > 5 and marked[2] >= 1, marked
    items = ep.contrast()["items"]
    on_tint = [i for i in items if "rr-selected" in i["path"] or "rr-active" in i["path"]
               or "rr-rank-row" in i["path"] or "rr-opt" in i["path"]]
    assert len(on_tint) > 50
    low = [i for i in items if i["ratio"] < i["need"]]
    assert low == [], low[:5]
    clean(ep)


def _rows_requests(page: Any) -> int:
    return int(page.evaluate("() => window.__rr.sends.filter(m => m.type === 'rows').length"))


def _shown_match_order(ep: ExplorerPage, ex: Any) -> list[tuple[int, str]]:
    shown = ep.page.locator(OPTION + "[data-query-id]").evaluate_all(
        "os => os.map(o => [Number(o.getAttribute('aria-posinset')) - 1, o.dataset.queryId])")
    order = ex.query_order()
    assert shown and all(order[pos] == qid for pos, qid in shown)
    return [(int(p), str(q)) for p, q in shown]


def test_an_order_change_needs_no_second_round_trip(browser: Any) -> None:
    """After a K change, a swap or a filter, the one update holds every row the view draws:
    the rows around the scroll position (sent as ``view_top``) and around the selected
    query's new position come in ``head["near"]``; no ``rows`` request follows."""
    ex = many_explorer(3_000)
    ex.set_runs(0, 1)
    ep = ExplorerPage.open(browser, ex)
    page = ep.page
    listbox = ".rr-explorer [role=listbox]"
    # no selection, the list scrolled far: K changes the worst-first order under it
    ex.select_query("")
    ep.settle()
    page.evaluate("(y) => { document.querySelector('.rr-explorer [role=listbox]')"
                  ".scrollTop = y; }", 1_500 * 42)
    ep.settle()
    page.wait_for_timeout(200)
    ep.settle()
    assert ex.view_top == 0  # noted in the page, not sent alone
    before, version = _rows_requests(page), ex.order_version
    ep.role("k-input").fill("3")
    ep.role("k-input").press("Enter")
    ep.settle()
    assert ex.k == 3 and ex.order_version != version
    assert 1_450 <= ex.view_top <= 1_510  # sent with the change
    assert any(b["start"] <= 1_500 < b["start"] + len(b["qid"]) for b in ex.head["near"])
    page.wait_for_timeout(200)
    ep.settle()
    assert _rows_requests(page) == before
    assert min(p for p, _ in _shown_match_order(ep, ex)) >= 1_400
    # a selected query far down: after a swap the list scrolls to its new position, drawn
    # from the same update
    far = ex.query_order()[2_200]
    ex.select_query(far)
    ep.settle()
    page.wait_for_timeout(200)
    ep.settle()
    before = _rows_requests(page)
    page.get_by_role("button", name="swap runs A and B").click()
    ep.settle()
    page.wait_for_timeout(200)
    ep.settle()
    assert (ex.run_a, ex.run_b) == (1, 0)
    new_pos = ex.query_order().index(far)
    assert new_pos != 2_200
    assert _rows_requests(page) == before
    sel = page.locator(OPTION + '[aria-selected="true"]')
    assert sel.get_attribute("data-query-id") == far
    assert sel.get_attribute("aria-posinset") == str(new_pos + 1)
    _shown_match_order(ep, ex)
    # a new filter shows its list from the top: rows 0-199 are in the head
    ex.select_query("")
    ep.settle()
    page.evaluate("(y) => { document.querySelector('.rr-explorer [role=listbox]')"
                  ".scrollTop = y; }", 2_500 * 42)
    ep.settle()
    page.wait_for_timeout(200)
    ep.settle()
    before = _rows_requests(page)
    ep.role("filter").fill("topic 5")
    ep.settle()
    page.wait_for_timeout(300)
    ep.settle()
    assert 0 < ex.n_visible <= 40 * 11 + 40 and ex.filter_text == "topic 5"
    assert page.evaluate(f"() => document.querySelector('{listbox}').scrollTop") == 0
    assert _rows_requests(page) == before
    assert min(p for p, _ in _shown_match_order(ep, ex)) == 0
    clean(ep)


def test_unjudged_tags_mark_the_queries_their_unjudged_documents_change(browser: Any) -> None:
    """A query whose value at K changes when its unjudged documents are read as relevant
    carries an "unjudged" tag in the list, with both values in its title; a query judged to
    K (or whose unjudged documents sit below K) carries none."""
    qrels = {"q1": {"a": 1}, "q2": {"a": 1, "b": 0}, "q3": {"a": 1, "b": 0}}
    run = {"q1": ["x", "a"], "q2": ["a", "b"], "q3": ["a", "b", "y"]}  # x, y unjudged
    results = [ragreport.evaluate(qrels, run, name="r")]
    for k, tagged in ((1, {"q1"}), (3, {"q1", "q3"})):
        ex = ragreport.Explorer(results, measure="P", k=k, targets=[])
        ep = ExplorerPage.open(browser, ex)
        tags = ep.page.locator(f"{OPTION} [data-role=unjudged-tag]")
        got = {ep.page.locator(OPTION).nth(i).get_attribute("data-query-id")
               for i in range(ep.page.locator(OPTION).count())
               if ep.page.locator(OPTION).nth(i).locator("[data-role=unjudged-tag]").count()}
        assert got == tagged and tags.count() == len(tagged)
        title = ep.page.locator(f"{OPTION}[data-query-id=q1] [data-role=unjudged-tag]"
                                ).get_attribute("title") or ""
        low, high = (0.0, 1.0) if k == 1 else (1 / 3, 2 / 3)
        assert title.startswith(f"{low:.4f}\u2013{high:.4f} with its unjudged documents")
        clean(ep)
