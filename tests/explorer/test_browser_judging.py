"""Judging in place in the explorer's front end (issue 26 §4), in headless Chromium on the page
bridged to a real Python ``Explorer`` (tests/explorer_page.py): keys on the active row, the
grade buttons of a row and of the open passage, the refusal of a document the qrels judge, and
the view evaluated again (grade, list badge, summary, the note's count) without re-running
anything. The same flow runs in a real JupyterLab in test_browser_lab_traps.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import launch
from explorer_page import ExplorerPage

import ragreport

pytestmark = pytest.mark.browser

QRELS = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
RUN = {"q1": ["u", "a", "v", "b"], "q2": ["w", "c"]}
DOCS = {"u": "the passage of u", "a": "the passage of a", "v": "v's passage"}
ROW = ".rr-explorer .rr-grid-a [data-index='{}']"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launch() as b:
        yield b


def _grades(path: Path) -> list[tuple[str, str, int]]:
    if not path.exists():
        return []
    return [(x["query_id"], x["doc_id"], x["grade"])
            for x in map(json.loads, path.read_text("utf-8").splitlines())]


def test_keys_and_clicks_judge_unjudged_documents_and_the_view_follows(
        browser: Any, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    ex = ragreport.Explorer([ragreport.evaluate(QRELS, RUN, ["P@1"], 4, name="r")],
                            targets=[], measure="P@1", docs=DOCS, judgments=labels)
    ep = ExplorerPage.open(browser, ex)
    page = ep.page
    ep.option("q1").click()
    ep.settle()
    note = ep.role("judging-note")
    assert "key 0/1/2" in note.inner_text() and "0 judgments in" in note.inner_text()
    assert ep.option("q1").locator("[data-role=unjudged-tag]").count() == 1
    # u (rank 1) and v (rank 3) are unjudged: grade buttons; a and b are judged: none
    assert [page.locator(ROW.format(i)).locator("[data-role=judge]").count()
            for i in range(4)] == [3, 0, 3, 0]
    summary = ep.role("summary").inner_text()

    # a key judges the active row (a click made it active and opened its passage)
    page.locator(ROW.format(0)).locator(".rr-c-doc").click()
    ep.settle()
    assert ep.role("passage-judge").locator("button").count() == 3
    page.keyboard.press("1")
    ep.settle()
    assert _grades(labels) == [("q1", "u", 1)]
    assert page.locator(ROW.format(0)).locator(".rr-grade-text").inner_text() \
        == "relevant (1) \u00b7 judged here"
    assert page.locator(ROW.format(0)).locator("[data-grade='1']").get_attribute(
        "aria-pressed") == "true"
    assert ep.option("q1").locator("[data-role=unjudged-tag]").count() == 0
    assert ep.role("summary").inner_text() != summary
    assert ex.summary["runs"][0]["mean"] == 0.5  # q1 now 1, q2 0
    assert "1 judgment in" in note.inner_text()

    # a document the qrels judge is refused, nothing written
    page.keyboard.press("ArrowDown")
    page.keyboard.press("0")
    ep.settle()
    assert "a is judged in the qrels" in ep.root.locator(".rr-error, [data-role=error]"
                                                         ).first.inner_text()
    assert len(_grades(labels)) == 1

    # a row's grade button, then the passage's: a correction of the judgment made here
    page.locator(ROW.format(2)).locator("[data-grade='0']").click()
    ep.settle()
    assert _grades(labels)[-1] == ("q1", "v", 0)
    page.locator(ROW.format(0)).locator(".rr-c-doc").click()
    ep.settle()
    ep.role("passage-judge").locator("[data-grade='2']").click()
    ep.settle()
    assert _grades(labels)[-1] == ("q1", "u", 2)
    assert page.locator(ROW.format(0)).locator(".rr-grade-text").inner_text() \
        == "relevant (2) \u00b7 judged here"
    assert "3 judgments in" in note.inner_text()
    assert ep.bridge.errors == []
    ep.log.assert_clean()
    page.close()


def test_without_a_judgments_file_nothing_can_be_judged(browser: Any) -> None:
    ex = ragreport.Explorer([ragreport.evaluate(QRELS, RUN, ["P@1"], 4, name="r")],
                            targets=[], measure="P@1")
    ep = ExplorerPage.open(browser, ex)
    ep.option("q1").click()
    ep.settle()
    assert ep.role("judging-note").count() == 0
    assert ep.page.locator(".rr-explorer [data-role=judge]").count() == 0
    ep.page.locator(ROW.format(0)).locator(".rr-c-doc").click()
    ep.page.keyboard.press("1")
    ep.settle()
    assert ex.summary["runs"][0]["mean"] == 0.0
    ep.log.assert_clean()
    ep.page.close()


def test_tags_computed_in_the_background_appear_where_the_list_is(
        browser: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large run's "unjudged" tags come with the background statistics: the rows are
    fetched again under a new version and the list stays where the person scrolled it (no
    jump back to the selected query)."""
    from ragreport.explorer import limits

    monkeypatch.setattr(limits, "UNJUDGED_ROWS", 10)
    monkeypatch.setattr(limits, "INLINE_STATS_QUERIES", 10)
    qrels = {f"q{i:03d}": {"a": 1} for i in range(300)}
    run = {q: ["x", "a"] if i % 2 else ["a", "b"] for i, q in enumerate(qrels)}  # x, b unjudged
    ex = ragreport.Explorer([ragreport.evaluate(qrels, run, ["P@1"], 2, name="r")],
                            targets=[], measure="P@1", k=1)
    ex._stats.close()  # the test runs the background's work itself, after the scroll
    ep = ExplorerPage.open(browser, ex)
    assert ep.page.locator(".rr-explorer [data-role=unjudged-tag]").count() == 0
    ep.page.evaluate("() => { const lb = document.querySelector('.rr-explorer "
                     "[role=listbox]'); lb.scrollTop = 3000; }")
    ep.settle()
    before = ep.visible_qids()
    assert before and ex.selected not in before  # the selected query is far above
    ex.state.compute_stats()
    ex._stats_ready()
    ep.push()
    assert ep.visible_qids() == before  # where it was
    tagged = {q for q in before if ep.option(q).locator("[data-role=unjudged-tag]").count()}
    assert tagged == {q for q in before if int(q[1:]) % 2}  # the unjudged x at rank 1
    ep.log.assert_clean()
    ep.page.close()
