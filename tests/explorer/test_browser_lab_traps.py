"""The explorer's traps, each in a real JupyterLab (headless Chromium, a real kernel).

The same traps are checked faster on a bare page bridged to Python
(``test_browser_explorer_view.py``); here each runs where users met it. One notebook, one
cell per trap, each showing an explorer built for it:

- ``deep``: rankings of 400 documents evaluated to K = 20: the mean curve reaches K = 400;
- ``ties``: tied scores, marked in both rankings of the A/B view, with the score shown;
- ``failing``: the seed's default targets fail every query: no row carries "fails";
- ``ab``: the passage gives the document's rank in both runs; closing it keeps the keys;
- ``example``: the filter says the summary covers every query, not the listed ones; changing
  run B or swapping never leaves the rankings blank;
- ``big``: above the inline limit the paired tests run in the background: while they do, the
  line says so and never reads as data ("B better on 0, worse on 0, tied on 0"); the report
  button writes in a thread, the kernel answering meanwhile, and its link opens a new tab;
- ``judging``: an unjudged document judged in place (a key, a click on a grade) is appended
  to the file the cell names, and the view follows without re-running the cell.

When Chromium, Playwright or JupyterLab cannot run, these tests fail; they never skip.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from browser import PageLog, launch
from labserver import JupyterLab, LabError, kernel_run, open_notebook, run_all_cells

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

pytestmark = pytest.mark.browser

OPTION = "[data-role=query-list] [role=option][data-query-id]"

SETUP = """\
import random
import numpy as np
import ragreport
from ragreport.examples import example_files

files = example_files()
results = [ragreport.evaluate(files.qrels, run) for run in files.runs]
"""
CELLS = {
    "deep": """\
rng = random.Random(1)
qrels = {f"q{i}": {f"d{j}": 1 for j in rng.sample(range(400), 30)} for i in range(50)}
run = {f"q{i}": [f"d{j}" for j in range(400)] for i in range(50)}
deep = ragreport.Explorer([ragreport.evaluate(qrels, run, name="a"),
                           ragreport.evaluate(qrels, {q: v[::-1] for q, v in run.items()},
                                              name="b")], measure="R", targets=[])
deep
""",
    "ties": """\
qrels = {"t": {"a": 1, "c": 1}, "u": {"x": 1}}
run_a = {"t": {"a": 2.0, "b": 2.0, "c": 1.5, "d": 1.0}, "u": {"x": 1.0}}
run_b = {"t": {"a": 3.0, "b": 1.0, "c": 1.0, "d": 1.0}, "u": {"x": 1.0}}
ties = ragreport.Explorer([ragreport.evaluate(qrels, run_a, name="A"),
                           ragreport.evaluate(qrels, run_b, name="B")],
                          targets=[], measure="P", k=2)
ties.run_b = 1
ties
""",
    "failing": """\
failing = ragreport.Explorer(results, queries=files.queries, docs=files.docs)
failing
""",
    "ab": """\
qrels = {"t": {"a": 1, "z": 1}, "u": {"x": 1}}
docs = [f"d{i:02d}" for i in range(40)]
run_a = {"t": {"a": 9.0, **{d: 5.0 - i / 100 for i, d in enumerate(docs)}, "z": 0.1},
         "u": {"x": 1.0}}
run_b = {"t": {"c": 3.0, "a": 2.0}, "u": {"x": 1.0}}
ab = ragreport.Explorer([ragreport.evaluate(qrels, run_a, name="A"),
                         ragreport.evaluate(qrels, run_b, name="B")],
                        targets=[], measure="P", k=2)
ab.run_b = 1
ab
""",
    "example": """\
example = ragreport.Explorer(results, queries=files.queries, docs=files.docs,
                             targets=files.targets)
example
""",
    "big": """\
rng = np.random.default_rng(7)
n = 3000
rel = np.argsort(rng.random((n, 30)), axis=1)[:, :3]
qrels = {f"q{i:05d}": {f"d{j}": 1 for j in row} for i, row in enumerate(rel)}
runs = []
for name in ("bm25", "dense"):
    ranked = np.argsort(rng.random((n, 30)), axis=1)[:, :10]
    runs.append(ragreport.evaluate(qrels, {f"q{i:05d}": {f"d{j}": float(10 - r) for r, j in
                                   enumerate(row)} for i, row in enumerate(ranked)}, name=name))
big = ragreport.Explorer(runs, targets=[])
big
""",
    "judging": """\
qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
run = {"q1": ["u", "a", "v", "b"], "q2": ["w", "c"]}
judging = ragreport.Explorer([ragreport.evaluate(qrels, run, ["P@1"], 4, name="r")],
                             targets=[], measure="P@1", judgments="labels.jsonl")
judging
""",
}
NAMES = list(CELLS)


class Lab:
    """The notebook page; ``view(name)`` is the explorer shown by that cell."""

    def __init__(self, page: Page, log: PageLog, server: JupyterLab) -> None:
        self.page, self.log, self.server = page, log, server

    def view(self, name: str) -> Locator:
        cell = self.page.locator(".jp-Notebook .jp-Cell").nth(1 + NAMES.index(name))
        root = cell.locator(".rr-explorer")
        root.scroll_into_view_if_needed()
        return root

    def kernel(self, code: str) -> Any:
        return json.loads(kernel_run(self.page, code).strip().splitlines()[-1])

    def until(self, what: str, fn: Any, want: Any, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while (got := fn()) != want and time.monotonic() < deadline:
            self.page.wait_for_timeout(100)
        assert got == want, f"{what} is {got!r}, want {want!r}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    work = tmp_path_factory.mktemp("lab-traps")
    root = work / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SETUP)] + [
        nbformat.v4.new_code_cell(CELLS[name]) for name in NAMES])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, root / "traps.ipynb")
    server = JupyterLab(root, work)
    try:
        server.start()
    except LabError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        with launch() as browser:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            log = PageLog.attach(page)
            open_notebook(page, server.base, "traps.ipynb")
            run_all_cells(page, timeout=180_000)
            page.locator(f".rr-explorer {OPTION}").first.wait_for(timeout=60_000)
            yield Lab(page, log, server)
            assert log.page_errors == [], log.page_errors
    finally:
        server.stop()


def test_the_mean_curve_reaches_the_deepest_k(lab: Lab) -> None:
    view = lab.view("deep")
    view.locator(OPTION).first.click()
    assert view.locator("[data-role=k-slider]").get_attribute("max") == "400"
    assert lab.kernel("print(deep.state.results[0].k_max)") == 20  # evaluated to K = 20
    lab.until("the curve", lambda: view.locator("svg.rr-curve path.rr-line-mean").count(), 2)
    ends = view.evaluate("""(root) => [...root.querySelectorAll('svg.rr-curve path.rr-line')]
        .map((p) => { const b = p.getBBox(); return [p.getAttribute('class'), b.x + b.width]; })""")
    query = max(x for cls, x in ends if "rr-line-mean" not in cls)
    means = [x for cls, x in ends if "rr-line-mean" in cls]
    assert len(means) == 2 and all(x >= query - 1 for x in means), ends


def test_scores_and_tie_marks_in_both_rankings(lab: Lab) -> None:
    view = lab.view("ties")
    view.locator(OPTION + "[data-query-id=t]").click()
    lab.until("the ranking", lambda: view.locator("[data-role=ranking-qid]").inner_text(), "t")
    for grid, tied in ((".rr-grid-a", {0: "1\u20132", 1: "1\u20132"}),
                       (".rr-grid-b", {1: "2\u20134", 2: "2\u20134", 3: "2\u20134"})):
        for i in range(4):
            cell = view.locator(f"{grid} [data-index='{i}'] .rr-c-score")
            title = cell.get_attribute("title") or ""
            if i in tied:
                assert cell.locator(".rr-tie-mark").count() == 1
                assert f"tied with ranks {tied[i]}" in title, (grid, i, title)
            else:
                assert cell.locator(".rr-tie-mark").count() == 0 and title == ""
    assert view.locator(".rr-grid-a [data-index='2'] .rr-c-score").text_content() \
        == " score 1.5"


def test_no_fails_tag_when_every_query_fails(lab: Lab) -> None:
    view = lab.view("failing")
    assert lab.kernel("import json; print(json.dumps(failing.head['fails_all']))") is True
    assert view.locator(OPTION).count() > 0
    assert view.locator("[role=option] .rr-tag-fail").count() == 0
    box = view.locator("[data-role=fails-only]")
    assert box.is_disabled() and "every query fails a target" in (box.get_attribute("title")
                                                                  or "")
    # with the example's own targets some fail, and only those are tagged
    other = lab.view("example")
    assert other.locator("[role=option] .rr-tag-fail").count() > 0
    assert other.locator("[data-role=fails-only]").is_enabled()


def test_passage_shows_both_ranks_and_focus_stays_in_the_widget(lab: Lab) -> None:
    view = lab.view("ab")
    view.locator(OPTION + "[data-query-id=t]").click()
    lab.until("the ranking", lambda: view.locator("[data-role=ranking-qid]").inner_text(), "t")
    view.locator(".rr-grid-a [data-index='0']").click()
    meta = view.locator("[data-role=passage-meta]")
    lab.until("the passage", lambda: (meta.text_content() or "").startswith(
        "rank 1 in A, rank 2 in B \u00b7 relevant"), True)
    view.locator(".rr-grid-a [data-index='1']").click()
    lab.until("the passage", lambda: ", not retrieved by B \u00b7" in (meta.text_content() or ""),
              True)
    view.get_by_role("button", name="close passage").click()
    inside = "() => !!document.activeElement?.closest('.rr-explorer')"
    assert lab.page.evaluate(inside)
    lab.page.keyboard.press("ArrowDown")
    lab.until("the active row", lambda: view.locator(".rr-grid-a .rr-active").count(), 1)
    view.get_by_role("button", name="close passage").click()
    view.locator(".rr-grid-a [data-role=beyond]").get_by_role("button", name="42").click()
    assert lab.page.evaluate(inside)


def test_the_filter_says_the_summary_covers_every_query(lab: Lab) -> None:
    view = lab.view("example")
    n_all = lab.kernel("print(example.n_visible)")
    view.locator("[data-role=filter]").click()
    lab.page.keyboard.type("decorat", delay=30)
    lab.until("the kernel's filter", lambda: lab.kernel(
        "import json; print(json.dumps(example.filter_text))"), "decorat")
    listed = lab.kernel("print(example.n_visible)")
    assert 0 < listed < n_all
    scope = view.locator("[data-role=summary-scope]")
    lab.until("the scope note", lambda: scope.text_content() if scope.count() else None,
              f"over all {n_all} queries of run A, not only the {listed} listed")
    view.locator("[data-role=filter]").fill("")
    lab.until("the kernel's filter", lambda: lab.kernel(
        "import json; print(json.dumps(example.filter_text))"), "")
    lab.until("the scope note", scope.count, 0)


def test_run_changes_never_leave_the_rankings_blank(lab: Lab) -> None:
    """Every state the ranking column goes through, recorded by a MutationObserver while run B
    changes (to none, then back) and the runs swap: run A's ranking is never empty, and run
    B's is back once B is set."""
    view = lab.view("example")
    view.locator(OPTION).nth(3).click()
    qid = view.locator(OPTION).nth(3).get_attribute("data-query-id")
    lab.until("the ranking", lambda: view.locator("[data-role=ranking-qid]").inner_text(), qid)
    view.evaluate("""(root) => {
        const col = root.querySelector('[data-role=ranking]');
        const count = (side) =>
            col.querySelectorAll(`.rr-grid-${side} [role=row][data-doc-id]`).length;
        window.__rrBlank = [];
        window.__rrObs = new MutationObserver(() => window.__rrBlank.push(
            [count('a'), count('b'), col.querySelector('[data-role=ranking-qid]')?.textContent]));
        window.__rrObs.observe(col, {subtree: true, childList: true});
    }""")
    rows = "(root) => root.querySelectorAll('.rr-grid-{} [role=row][data-doc-id]').length"
    for b in ("-1", "1"):
        view.locator("[data-role=run-b]").select_option(b)
        lab.until("the kernel's run B", lambda b=b: lab.kernel("print(example.run_b)"), int(b))
        lab.page.wait_for_timeout(500)
        assert view.evaluate(rows.format("a")) > 0
        assert (view.evaluate(rows.format("b")) > 0) == (b == "1")
    view.get_by_role("button", name="swap runs A and B").click()
    lab.until("the kernel's runs", lambda: lab.kernel(
        "print([example.run_a, example.run_b])"), [1, 0])
    lab.page.wait_for_timeout(500)
    seen = view.evaluate("() => { window.__rrObs.disconnect(); return window.__rrBlank; }")
    assert seen, "the ranking column never changed"
    assert all(a > 0 for a, _, _ in seen), [s for s in seen if s[0] == 0][:5]
    assert all(q == qid for _, _, q in seen), {q for _, _, q in seen}
    assert view.evaluate(rows.format("a")) > 0 and view.evaluate(rows.format("b")) > 0


def test_pending_tests_never_read_as_data(lab: Lab) -> None:
    """Above the inline limit, a swap leaves the paired tests to the background: while they
    run the line says so, and its counts are the real ones from the start; before Python's
    answer, the line says it is updating (the previous pair's numbers showed, under the
    swapped names)."""
    view = lab.view("big")
    view.evaluate("""(root) => {
        const el = root.querySelector('[data-role=compare]');
        window.__rrCompare = [el.textContent];
        window.__rrCmpObs = new MutationObserver(() => window.__rrCompare.push(el.textContent));
        window.__rrCmpObs.observe(el, {subtree: true, childList: true, characterData: true});
    }""")
    view.get_by_role("button", name="swap runs A and B").click()
    lab.until("the kernel's runs", lambda: lab.kernel("print([big.run_a, big.run_b])"), [1, 0])
    lab.until("the tests", lambda: lab.kernel(
        "import json; print(json.dumps(big.compare.get('pending')))"), False, timeout=60)
    lab.page.wait_for_timeout(500)
    texts = view.evaluate("() => { window.__rrCmpObs.disconnect(); return window.__rrCompare; }")
    want = lab.kernel("import json; c = big.compare; "
                      "print(json.dumps([c['wins'], c['losses'], c['ties'], c['delta']]))")
    delta = f"{want.pop():+.4f}".replace("-", "\u2212")
    assert sum(want) == 3000
    counts = (f"B better on {want[0]:,}, worse on {want[1]:,}, tied on {want[2]:,}")
    after = texts[1:]  # (the first is the line before the swap)
    pending = [t for t in after if "paired tests running" in t]
    assert pending, after[:3]  # the swap's tests ran in the background, and it was said
    assert all(counts in t for t in after if "B better on" in t), after[:5]
    # never the previous pair's numbers under the new pair's names while Python answers
    assert all(f"B \u2212 A = {delta}" in t or "updating for bm25 against dense" in t
               for t in after), after[:5]
    assert "B better on 0, worse on 0, tied on 0" not in " ".join(texts)
    assert "significant" in texts[-1] and "paired tests running" not in texts[-1]


def test_the_kernel_answers_while_the_report_is_written(lab: Lab) -> None:
    """The report button writes in a thread: the kernel answers other requests meanwhile
    (it froze for 4-6 s), and the link opens the report in a new tab."""
    view = lab.view("big")
    view.locator("[data-role=report-button]").click()
    state = "import json; print(json.dumps(big.report['state']))"
    lab.until("the report", lambda: lab.kernel(state), "busy", timeout=10)
    answers: list[float] = []
    while True:
        t0 = time.perf_counter()
        now = lab.kernel(state)
        answers.append(time.perf_counter() - t0)
        if now != "busy" or len(answers) > 600:
            break
    assert now == "done", now
    assert len(answers) >= 2 and max(answers) < 1.5, answers  # answered while writing
    link = view.locator("[data-role=report-link]")
    link.wait_for(state="visible", timeout=30_000)
    assert link.get_attribute("target") == "_blank" and link.get_attribute("download") is None
    with lab.page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab.title().endswith("· ragreport"), tab.title()
    tab.close()


def test_judging_in_place_updates_the_view_without_running_a_cell(lab: Lab) -> None:
    """A key on the active row and a click on a grade judge unjudged documents: each lands in
    the file the cell named (source human), and the row's grade, the list's badge and the
    summary follow; JupyterLab's command-mode keys (2: a heading cell) never see the key."""
    view = lab.view("judging")
    n_cells = lab.page.locator(".jp-Notebook .jp-Cell").count()
    view.locator(OPTION + "[data-query-id=q1]").click()
    lab.until("the ranking", lambda: view.locator("[data-role=ranking-qid]").inner_text(), "q1")
    badge = view.locator(OPTION + "[data-query-id=q1] [data-role=unjudged-tag]")
    assert badge.count() == 1
    summary = view.locator("[data-role=summary]").inner_text()
    view.locator(".rr-grid-a [data-index='0'] .rr-c-doc").click()
    lab.page.keyboard.press("2")
    grade = view.locator(".rr-grid-a [data-index='0'] .rr-grade-text")
    lab.until("the judged row", grade.inner_text, "relevant (2) \u00b7 judged here")
    read = ("import json; print(json.dumps([(x['doc_id'], x['grade'], x['source']) for x in "
            "map(json.loads, open('labels.jsonl'))]))")
    assert lab.kernel(read) == [["u", 2, "human"]]
    lab.until("the badge", badge.count, 0)
    assert view.locator("[data-role=summary]").inner_text() != summary
    assert lab.kernel("print(judging.summary['runs'][0]['mean'])") == 0.5
    view.locator(".rr-grid-a [data-index='2'] [data-grade='0']").click()
    lab.until("the file", lambda: lab.kernel(read), [["u", 2, "human"], ["v", 0, "human"]])
    note = view.locator("[data-role=judging-note]")
    lab.until("the count", lambda: "2 judgments in labels.jsonl" in note.inner_text(), True)
    assert lab.page.locator(".jp-Notebook .jp-Cell").count() == n_cells
    assert lab.page.locator(".jp-Notebook .jp-MarkdownCell").count() == 0
