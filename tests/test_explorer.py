"""The explorer, driven like a person would: set widget values, click buttons, read the HTML."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest

import ragreport
from ragreport.diagnose import FAILURE_KINDS, failure_kinds
from ragreport.examples import example_files
from ragreport.explorer.state import ExplorerState, passes_array
from ragreport.targets import parse_targets, passes


@pytest.fixture(scope="module")
def results() -> list[ragreport.EvaluationResult]:
    f = example_files()
    return [ragreport.evaluate(f.qrels, r) for r in f.runs]


@pytest.fixture()
def explorer(results: list[ragreport.EvaluationResult]) -> ragreport.Explorer:
    f = example_files()
    return ragreport.Explorer(results, queries=f.queries, docs=f.docs)


def _list_ids(list_html: str) -> list[str]:
    return [html.unescape(q) for q in re.findall(r"<tr[^>]*data-qid='([^']*)'", list_html)]


def _cut_k(fragment: str) -> list[int]:
    return [int(k) for k in re.findall(r"cut at K=(\d+)", fragment)]


def _ranking_rows(ranking_html: str) -> list[str]:
    """Rank numbers and the cut marker, in page order, of the ranked-list table."""
    table = ranking_html.split("Relevant documents not retrieved")[0]
    return re.findall(r"<tr><td class='num'>(\d+)</td>|(cut at K=\d+)", table)  # type: ignore


def _worst_first(result: ragreport.EvaluationResult, family: str, k: int) -> list[str]:
    v = result.curve(family)[:, k - 1]
    return [result.query_ids[i] for i in np.argsort(v, kind="stable")]


def test_public_api_and_explore(results: list[ragreport.EvaluationResult]) -> None:
    ex = ragreport.Explorer(results[0], targets=[])
    assert isinstance(ex, ragreport.Explorer)
    # the result knows nothing of widgets (the import contract in pyproject.toml)
    assert not hasattr(results[0], "explore")
    assert ex.run_names == ["bm25"]
    assert "Explorer" in ragreport.__all__


def test_query_order_worst_first_follows_measure_and_slider(
        explorer: ragreport.Explorer, results: list[ragreport.EvaluationResult]) -> None:
    bm25 = results[0]
    for family, k in (("nDCG", 3), ("P", 1), ("R", 10), ("RR", 7)):
        explorer.measure_dropdown.value = family
        explorer.k_slider.value = k
        expected = _worst_first(bm25, family, k)
        assert explorer.query_order() == expected
        shown_ids = _list_ids(explorer.list_html.value)
        assert shown_ids == expected[: len(shown_ids)] and len(shown_ids) == len(expected)
        assert f"{family}@{k}" in explorer.list_html.value
        # the first listed value is the minimum
        first = re.search(r"<td class='num'>(\d\.\d{4})</td>", explorer.list_html.value)
        assert first is not None
        assert float(first.group(1)) == pytest.approx(bm25.curve(family)[:, k - 1].min(),
                                                      abs=1e-4)
    # sorts
    explorer.sort_dropdown.value = "best"
    v = bm25.curve("RR")[:, 6]
    assert explorer.query_order() == [bm25.query_ids[i]
                                      for i in np.argsort(-v, kind="stable")]
    explorer.sort_dropdown.value = "id"
    assert explorer.query_order() == sorted(bm25.query_ids)


def test_values_match_result_values(explorer: ragreport.Explorer,
                                    results: list[ragreport.EvaluationResult]) -> None:
    explorer.measure_dropdown.value = "nDCG"
    explorer.k_slider.value = 10
    np.testing.assert_array_equal(explorer.values(), results[0].values("nDCG@10"))


def test_cut_line_moves_with_slider(explorer: ragreport.Explorer) -> None:
    explorer.select_query("q01")
    for k in (1, 4, 9, 20):
        explorer.k_slider.value = k
        page = explorer.ranking_html.value
        assert _cut_k(page) == [k]
        assert f"data-k='{k}'" in page
        rows = _ranking_rows(page)
        labels = [r[0] or r[1] for r in rows]
        cut = labels.index(f"cut at K={k}")
        assert labels[cut - 1] == str(k)  # the line sits right below rank K
        assert labels[:cut] == [str(i) for i in range(1, k + 1)]
        assert "K=" + str(k) in explorer.panel_html.value
        assert _cut_k(explorer.compare_html.value) == [k, k]


def test_grades_have_symbol_and_colour(explorer: ragreport.Explorer,
                                       results: list[ragreport.EvaluationResult]) -> None:
    explorer.select_query("q01")
    page = explorer.ranking_html.value
    ranked = results[0].ranked_list("q01", limit=20)
    rel = sum(d.relevant for d in ranked)
    non = sum(d.grade is not None and not d.relevant for d in ranked)
    assert page.count("class='g-rel' title='relevant'>●") >= rel > 0
    assert page.count("class='g-non' title='judged not relevant'>○") == non
    assert ".rrx .g-rel{color:" in page


def test_missing_relevant_listed(explorer: ragreport.Explorer,
                                 results: list[ragreport.EvaluationResult]) -> None:
    bm25 = results[0]
    with_missing = [q for q in bm25.query_ids if bm25.missing_relevant(q)]
    assert with_missing, "the example should have a query with unretrieved relevant documents"
    q = with_missing[0]
    explorer.select_query(q)
    page = explorer.ranking_html.value
    missing = bm25.missing_relevant(q)
    assert f"Relevant documents not retrieved ({len(missing)})" in page
    tail = page.split("Relevant documents not retrieved")[1]
    for doc, _g in missing:
        assert html.escape(doc) in tail
    complete = next(q for q in bm25.query_ids if not bm25.missing_relevant(q))
    explorer.select_query(complete)
    assert "Relevant documents not retrieved (0)" in explorer.ranking_html.value


def test_snippets_with_full_text_on_demand(explorer: ragreport.Explorer) -> None:
    explorer.select_query("q01")
    page = explorer.ranking_html.value
    assert "<details><summary>" in page and "<div class='full'>" in page


def test_query_selector_and_buttons(explorer: ragreport.Explorer) -> None:
    explorer.measure_dropdown.value = "nDCG"
    explorer.k_slider.value = 5
    order = explorer.query_order()
    assert explorer.selected == order[0]
    explorer.next_button.click()
    assert explorer.selected == order[1]
    assert f"data-qid='{order[1]}'" in explorer.ranking_html.value
    assert explorer.query_dropdown.value == order[1]
    explorer.next_button.click()
    explorer.prev_button.click()
    assert explorer.selected == order[1]
    explorer.query_dropdown.value = order[7]
    assert explorer.selected == order[7]
    assert re.search(rf"<tr class='sel' data-qid='{order[7]}'>", explorer.list_html.value)
    explorer.prev_button.click()
    assert explorer.selected == order[6]


def test_text_filter(explorer: ragreport.Explorer) -> None:
    explorer.filter_box.value = "EXCEPTION"
    texts = explorer.queries
    expected = [q for q in explorer.result_a.query_ids
                if "exception" in (q + "\t" + texts.get(q, "")).lower()]
    assert expected
    assert sorted(explorer.query_order()) == sorted(expected)
    assert _list_ids(explorer.list_html.value) == explorer.query_order()
    assert explorer.selected in expected
    assert "text contains “EXCEPTION”" in explorer.list_html.value
    explorer.filter_box.value = "q07"
    assert explorer.query_order() == ["q07"]
    explorer.filter_box.value = "no query has this text"
    assert explorer.query_order() == []
    assert "no query matches" in explorer.list_html.value
    explorer.filter_box.value = ""
    assert len(explorer.query_order()) == explorer.result_a.n_queries


def test_kind_filter_matches_diagnose(explorer: ragreport.Explorer,
                                      results: list[ragreport.EvaluationResult]) -> None:
    for k in (1, 3, 10):
        explorer.k_slider.value = k
        codes = failure_kinds(results[0], k)
        np.testing.assert_array_equal(explorer.kinds(), codes)
        for code in (2, 3, 4):
            explorer.kind_dropdown.value = FAILURE_KINDS[code]
            expected = {results[0].query_ids[i] for i in np.flatnonzero(codes == code)}
            assert set(explorer.query_order()) == expected
        explorer.kind_dropdown.value = ""
    explorer.k_slider.value = 1
    explorer.kind_dropdown.value = "relevant only beyond K"
    assert explorer.query_order(), "at K=1 some queries have relevant documents only lower"
    assert "relevant only beyond K" in explorer.list_html.value


def test_fails_target_filter(results: list[ragreport.EvaluationResult]) -> None:
    targets = parse_targets({"R@5": "> 0.5", "RR": ">= 0.5"})
    ex = ragreport.Explorer(results[0], targets=targets)
    ex.k_slider.value = 3
    ex.fails_checkbox.value = True
    r3 = results[0].curve("R")[:, 2]
    rr = results[0].values("RR")
    expected = {q for i, q in enumerate(results[0].query_ids)
                if not passes(float(r3[i]), ">", 0.5) or not passes(float(rr[i]), ">=", 0.5)}
    assert 0 < len(expected) < results[0].n_queries
    assert set(ex.query_order()) == expected
    assert "fails a target" in ex.list_html.value
    # the panel agrees: the selected query fails at least one target
    assert "✘ fail" in ex.panel_html.value
    assert "R@3" in ex.panel_html.value
    ex.fails_checkbox.value = False
    assert len(ex.query_order()) == results[0].n_queries


def test_passes_array_matches_passes() -> None:
    rng = np.random.default_rng(1)
    vals = np.concatenate([rng.random(2000), np.array([0.84995, 0.85005, 0.85, 0.849949999])])
    for op in (">", ">=", "<", "<="):
        got = passes_array(vals, op, 0.85)
        assert got.tolist() == [passes(float(v), op, 0.85) for v in vals]


def test_panel_targets_and_svg(explorer: ragreport.Explorer,
                               results: list[ragreport.EvaluationResult]) -> None:
    explorer.measure_dropdown.value = "nDCG"
    explorer.k_slider.value = 5
    explorer.select_query("q02")
    panel = explorer.panel_html.value
    i = results[0].query_ids.index("q02")
    assert f"{results[0].curve('nDCG')[i, 4]:.4f}" in panel
    assert f"{results[0].mean_curve('nDCG')[4]:.4f}" in panel
    assert panel.count("<polyline") == 2 and "<svg" in panel and "K=5" in panel
    assert ("✔ pass" in panel) or ("✘ fail" in panel)
    assert "matplotlib" not in panel


def test_compare_view_and_delta_sort(explorer: ragreport.Explorer,
                                     results: list[ragreport.EvaluationResult]) -> None:
    bm25, tfidf = results
    explorer.measure_dropdown.value = "nDCG"
    explorer.k_slider.value = 10
    explorer.sort_dropdown.value = "delta"
    d = tfidf.values("nDCG@10") - bm25.values("nDCG@10")
    np.testing.assert_allclose(explorer.deltas(), d)
    expected = [bm25.query_ids[i] for i in np.argsort(d, kind="stable")]
    assert explorer.query_order() == expected
    q = expected[0]
    assert d[bm25.query_ids.index(q)] < 0  # biggest loss first
    explorer.select_query(q)
    page = explorer.compare_html.value
    assert f"Δ (B − A) <strong>▼ {d[bm25.query_ids.index(q)]:+.4f}</strong>" in page
    assert "A bm25 vs B tfidf" in page
    assert re.search(r"<tr class='(up|down|new)'>", page)
    assert re.search(r"[↑↓]\d+ \(A: \d+\)", page)
    # the list shows the deltas too
    assert f"{d[bm25.query_ids.index(q)]:+.4f}" in explorer.list_html.value
    # swap runs with the dropdowns: the delta changes sign
    explorer.run_a_dropdown.value = 1
    explorer.run_b_dropdown.value = 0
    assert explorer.a == 1 and explorer.b == 0
    np.testing.assert_allclose(explorer.deltas(), -d)
    assert "A tfidf vs B bm25" in explorer.compare_html.value


def test_single_run_has_no_delta(results: list[ragreport.EvaluationResult]) -> None:
    ex = ragreport.Explorer(results[0], targets=[])
    assert "delta" not in [v for _l, v in ex.sort_dropdown.options]
    assert "needs two runs" in ex.render_compare()
    with pytest.raises(ragreport.RagReportError):
        ex.set_sort("delta")


HOSTILE = "<script>alert(1)</script>"


def test_hostile_strings_are_escaped(tmp_path: Path) -> None:
    qrels = {f"q{HOSTILE}": {f"d{HOSTILE}": 2, "d2": 1, f"m{HOSTILE}": 1}, "q2": {"d2": 1}}
    run_a = {f"q{HOSTILE}": {f"d{HOSTILE}": 3.0, "x": 2.0, "d2": 1.0}, "q2": {"d2": 1.0}}
    run_b = {f"q{HOSTILE}": {"d2": 3.0, f"d{HOSTILE}": 1.0}, "q2": {"x": 1.0}}
    a = ragreport.evaluate(qrels, run_a, name=f"A{HOSTILE}")
    b = ragreport.evaluate(qrels, run_b, name=f"B{HOSTILE}")
    ex = ragreport.Explorer([a, b], queries={f"q{HOSTILE}": f"text {HOSTILE}"},
                            docs={f"d{HOSTILE}": f"passage {HOSTILE} " + "word " * 80})
    ex.select_query(f"q{HOSTILE}")
    ex.filter_box.value = "<script>"
    views = [ex.list_html.value, ex.ranking_html.value, ex.panel_html.value,
             ex.compare_html.value, ex.summary_html(), ex._repr_mimebundle_()["text/html"]]
    for page in views:
        assert "<script>" not in page
    joined = "".join(views)
    assert html.escape(f"q{HOSTILE}") in joined          # query id
    assert html.escape(f"text {HOSTILE}") in joined      # query text
    assert html.escape(f"passage {HOSTILE}") in joined   # doc text
    assert html.escape(f"d{HOSTILE}") in joined          # doc id
    assert html.escape(f"m{HOSTILE}") in ex.ranking_html.value  # missing relevant doc id
    assert html.escape(f"A{HOSTILE}") in joined          # run name
    assert html.escape(f"B{HOSTILE}") in ex.compare_html.value
    assert "&lt;script&gt;" in ex.list_html.value        # the filter text itself


def test_write_report_button(explorer: ragreport.Explorer, tmp_path: Path) -> None:
    out = tmp_path / "explorer-report.html"
    explorer.report_path.value = str(out)
    explorer.report_button.click()
    assert out.is_file() and out.stat().st_size > 1000
    text = out.read_text(encoding="utf-8")
    assert "bm25" in text and "tfidf" in text
    assert "wrote" in explorer.status_html.value
    explorer.report_path.value = str(tmp_path / "missing-folder" / "r.html")
    explorer.report_button.click()
    assert "could not write" in explorer.status_html.value


def test_mime_bundle_has_static_fallbacks(explorer: ragreport.Explorer,
                                          results: list[ragreport.EvaluationResult]) -> None:
    explorer.k_slider.value = 5
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == \
        explorer.widget.model_id
    assert "bm25" in bundle["text/plain"] and "tfidf" in bundle["text/plain"]
    assert f"nDCG@5={results[0].mean('nDCG@5'):.4f}" in bundle["text/plain"]
    assert f"{results[1].mean('R@5'):.4f}" in bundle["text/html"]
    assert "<table>" in bundle["text/html"]
    assert "<table>" in results[0]._repr_html_()


def test_plain_methods_drive_the_controls(explorer: ragreport.Explorer) -> None:
    explorer.set_k(7)
    assert explorer.k_slider.value == 7 and _cut_k(explorer.ranking_html.value) == [7]
    explorer.set_measure("P@3")
    assert explorer.measure_dropdown.value == "P" and explorer.k_slider.value == 3
    with pytest.raises(ragreport.RagReportError):
        explorer.set_k(explorer.k_max + 1)
    explorer.k_slider.value = 4  # the widget still works after an error
    assert explorer.k == 4


def test_state_without_widgets_and_list_cap() -> None:
    n = 450
    qrels = {f"q{i}": {"a": 1} for i in range(n)}
    run = {f"q{i}": (["a", "b"] if i % 3 else ["b", "a"]) for i in range(n)}
    r = ragreport.evaluate(qrels, run, ["P@1"])
    s = ExplorerState(r, targets=[], list_limit=200)
    page = s.render_list()
    assert f"showing 200 of {n} queries" in page
    assert len(_list_ids(page)) == 200
    assert len(s.query_options()) == 200
    s.select_query("q449")  # beyond the cap: still offered in the selector
    assert ("q449" in [v for _l, v in s.query_options()])


def test_runs_with_different_queries() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    a = ragreport.evaluate(qrels, {"q1": ["a"], "q2": ["b"], "q3": ["a"]}, ["P@1"], name="A")
    b = ragreport.evaluate(qrels, {"q3": ["b"], "q2": ["a"]}, ["P@1"], name="B")
    ex = ragreport.Explorer([a, b], targets=[])
    ex.measure_dropdown.value = "P"
    ex.k_slider.value = 1
    assert ex.b_index().tolist() == [-1, 0, 1]
    np.testing.assert_allclose(ex.deltas(), [np.nan, 1.0, -1.0])
    ex.sort_dropdown.value = "delta"
    assert ex.query_order() == ["q3", "q2", "q1"]  # losses first, missing last
    assert "not in B" in ex.list_html.value
    ex.select_query("q1")
    assert "did not evaluate query q1" in ex.compare_html.value


# ---- intervals and paired tests ------------------------------------------------------------

def _p_values(page: str) -> tuple[str, str]:
    rand = re.search(r"paired randomization test p = (\d\.\d{4})", page)
    t = re.search(r"paired t-test p = (\d\.\d{4})", page)
    assert rand is not None and t is not None
    return rand.group(1), t.group(1)


def test_panel_svg_has_mean_interval_band(explorer: ragreport.Explorer,
                                          results: list[ragreport.EvaluationResult]) -> None:
    from ragreport.stats import bootstrap_ci

    explorer.measure_dropdown.value = "nDCG"
    explorer.k_slider.value = 5
    explorer.select_query("q02")
    panel = explorer.panel_html.value
    svg = panel.split("<svg")[1].split("</svg>")[0]
    assert svg.count("<polygon class='rrx-band'") == 1
    assert "95% bootstrap interval of the mean" in panel
    points = re.search(r"<polygon class='rrx-band'[^>]*points='([^']*)'", svg)
    assert points is not None
    assert len(points.group(1).split()) == 2 * results[0].k_max
    band = explorer.mean_band(explorer.a, explorer.family)
    ci = bootstrap_ci(results[0].curve("nDCG"), level=0.95, resamples=1000, seed=0)
    np.testing.assert_allclose(band.lower, ci.lower)
    np.testing.assert_allclose(band.upper, ci.upper)
    assert np.all(band.lower <= results[0].mean_curve("nDCG") + 1e-12)


def test_band_is_computed_once_per_run_and_family(
        results: list[ragreport.EvaluationResult], monkeypatch: pytest.MonkeyPatch) -> None:
    import ragreport.explorer.state as st

    calls: list[tuple[int, ...]] = []
    real = st.bootstrap_ci

    def counting(values, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(np.shape(values))
        return real(values, *args, **kwargs)

    monkeypatch.setattr(st, "bootstrap_ci", counting)
    ex = ExplorerState(results, targets=[])
    ex.compute_tests = False
    assert calls == []  # nothing at construction
    ex.set_measure("nDCG")
    ex.render_panel()
    assert len(calls) == 1
    for k in (1, 3, 7):
        ex.set_k(k)
        ex.render_panel()
        ex.next_query()
        ex.render_panel()
    assert len(calls) == 1
    ex.set_measure("R")
    ex.render_panel()
    ex.set_measure("nDCG")
    ex.render_panel()
    assert len(calls) == 2


def test_compare_view_p_values_match_stats(explorer: ragreport.Explorer,
                                           results: list[ragreport.EvaluationResult]) -> None:
    from ragreport.stats import bootstrap_ci, paired_randomization_test, paired_t_test

    bm25, tfidf = results
    explorer.measure_dropdown.value = "nDCG"
    explorer.k_slider.value = 5
    page = explorer.compare_html.value
    assert bm25.query_ids == tfidf.query_ids  # every query is common
    a, b = bm25.values("nDCG@5"), tfidf.values("nDCG@5")
    rand = paired_randomization_test(a, b, resamples=10000, seed=0)
    t = paired_t_test(a, b)
    assert _p_values(page) == (f"{rand.p_value:.4f}", f"{t.p_value:.4f}")
    assert rand.p_value > 0.05 and t.p_value > 0.05
    assert "not significant" in page
    assert f"mean A (bm25) {a.mean():.4f}" in page and f"mean B (tfidf) {b.mean():.4f}" in page
    ci = bootstrap_ci(b - a, level=0.95, resamples=1000, seed=0)
    assert f"[{float(ci.lower):+.4f}, {float(ci.upper):+.4f}]" in page
    assert f"all {bm25.n_queries} common queries" in page and "10000 resamples" in page


def _constructed() -> list[ragreport.EvaluationResult]:
    qrels = {f"q{i:02d}": {f"rel{i}": 1} for i in range(60)}
    run_a = {f"q{i:02d}": [f"rel{i}", "x1", "x2", "x3", "x4"] for i in range(60)}
    run_b = {f"q{i:02d}": ([f"rel{i}", "x1", "x2", "x3", "x4"] if i % 3 else
                           ["x1", "x2", "x3", "x4", "x5"]) for i in range(60)}
    return [ragreport.evaluate(qrels, run_a, name="A"),
            ragreport.evaluate(qrels, run_b, name="B")]


def test_compare_view_significant_for_constructed_case() -> None:
    from ragreport.stats import paired_randomization_test, paired_t_test

    a, b = _constructed()
    ex = ragreport.Explorer([a, b], targets=[])
    ex.measure_dropdown.value = "nDCG"
    ex.k_slider.value = 5
    page = ex.compare_html.value
    va, vb = a.values("nDCG@5"), b.values("nDCG@5")
    assert int((va != vb).sum()) == 20
    rand = paired_randomization_test(va, vb, resamples=10000, seed=0)
    t = paired_t_test(va, vb)
    assert rand.p_value < 0.05 and t.p_value < 0.05
    assert _p_values(page) == (f"{rand.p_value:.4f}", f"{t.p_value:.4f}")
    assert "significant at 0.05" in page and "not significant" not in page
    assert "Δ (B − A) <strong>-0.3333</strong>" in page


def test_compare_stats_cached_per_measure_k_and_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import ragreport.explorer.state as st

    counts = {"rand": 0, "t": 0}
    real_rand, real_t = st.paired_randomization_test, st.paired_t_test

    def rand(*args, **kwargs):  # type: ignore[no-untyped-def]
        counts["rand"] += 1
        return real_rand(*args, **kwargs)

    def ttest(*args, **kwargs):  # type: ignore[no-untyped-def]
        counts["t"] += 1
        return real_t(*args, **kwargs)

    monkeypatch.setattr(st, "paired_randomization_test", rand)
    monkeypatch.setattr(st, "paired_t_test", ttest)
    a, b = _constructed()
    ex = ragreport.Explorer([a, b], targets=[])
    ex.set_measure("nDCG@5")
    first = ex.render_compare()
    n = counts["rand"]
    assert n >= 1 and counts["t"] == n
    assert ex.render_compare() == first
    ex.next_query()  # another query, same measure and K: no new test
    ex.render_compare()
    assert counts["rand"] == n
    ex.set_k(3)
    assert counts["rand"] == n + 1
    ex.set_k(5)
    ex.set_runs(1, 0)
    assert counts["rand"] == n + 2
    ex.set_runs(0, 1)
    assert counts["rand"] == n + 2 and counts["t"] == n + 2


def test_tests_on_request_when_turned_off() -> None:
    a, b = _constructed()
    ex = ragreport.Explorer([a, b], targets=[])
    ex.tests_checkbox.value = False
    ex.set_measure("P@2")
    assert "not computed yet" in ex.compare_html.value
    assert ex.compare_stats(compute=False) is None
    ex.tests_checkbox.value = True
    assert "paired randomization test p = " in ex.compare_html.value
    assert ex.compare_stats(compute=False) is not None


def test_summaries_show_mean_intervals(explorer: ragreport.Explorer,
                                       results: list[ragreport.EvaluationResult]) -> None:
    from ragreport.stats import bootstrap_ci

    explorer.k_slider.value = 5
    bundle = explorer._repr_mimebundle_()
    ci = bootstrap_ci(results[1].values("R@5"), level=0.95, resamples=1000, seed=0)
    interval = f"[{float(ci.lower):.4f}, {float(ci.upper):.4f}]"
    assert f"R@5={results[1].mean('R@5'):.4f} {interval}" in bundle["text/plain"]
    assert interval in bundle["text/html"]
    for text in (bundle["text/plain"], bundle["text/html"]):
        assert "95% bootstrap interval of the mean" in text and "1000 resamples" in text


def test_large_single_run_band_only_on_request(results: list[ragreport.EvaluationResult],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Above BAND_AUTO_QUERIES queries no interaction waits for a bootstrap: the widget
    offers the checkbox, and the band appears once it is ticked."""
    import ragreport.explorer.state as state_mod
    import ragreport.explorer.widget as widget_mod

    monkeypatch.setattr(state_mod, "BAND_AUTO_QUERIES", 10)
    monkeypatch.setattr(widget_mod, "BAND_AUTO_QUERIES", 10)
    ex = ragreport.Explorer(results[0])
    assert ex.compute_tests is False and not ex._bands
    assert "interval of the mean not computed for 41 queries" in ex.panel_html.value
    assert "<polygon" not in ex.panel_html.value
    ex.tests_checkbox.value = True
    assert ex._bands and "<polygon" in ex.panel_html.value
    assert "bootstrap interval of the mean" in ex.panel_html.value


def test_unjudged_marked_and_counted() -> None:
    # q: x (unjudged) a (grade 2) y (unjudged) b (grade 0: judged, not relevant) c (grade 1)
    from ragreport.report.model import judged_at

    qrels = {"q": {"a": 2, "b": 0, "c": 1}, "p": {"d": 1}}
    run = {"q": {"x": 6.0, "a": 5.0, "y": 4.0, "b": 3.0, "c": 2.0, "z": 1.0}, "p": {"d": 1.0}}
    r = ragreport.evaluate(qrels, run, ["P@5"], k_max=6)
    state = ExplorerState(r)
    state.select_query("q")
    state.set_k(5)
    page = state.render_ranking()
    # text, not only colour: the unjudged cells say so, the judged non-relevant one does not
    assert page.count("<span>? unjudged</span>") == 3
    assert page.count("class='g-non' title='judged not relevant'>○ 0") == 1
    assert "2 of the top 5 unjudged" in page
    judged = judged_at(r, 5)
    assert judged is not None
    assert f"Judged@5 = {float(judged[r.ranking.query_index('q')]):.4f}" in page
    assert "Judged@5 = 0.6000" in page
    state.set_k(1)
    assert "1 of the top 1 unjudged" in state.render_ranking()
    state.set_k(6)
    assert "3 of the top 6 unjudged" in state.render_ranking()
    state.select_query("p")
    assert "0 of the top 1 unjudged" in state.render_ranking()
