"""The explorer widget's Python side: traits after every method and trait change, the custom
messages (``handle_message``), the state rules of issue 14 and the static snapshot.

The front end is tested in a browser (tests/test_browser_*.py); here the widget is driven as
the front end drives it (setting traits, sending messages) and as a notebook user does (the
public methods), and every trait is checked against ``ragreport.analysis``.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragreport
from ragreport.analysis.compare import paired
from ragreport.analysis.failures import FAILURE_KINDS, failure_kinds, worst_order
from ragreport.analysis.targets import passes_array, target_values
from ragreport.core.kernel import cutoff_values
from ragreport.examples import example_files
from ragreport.explorer import limits
from ragreport.explorer import stats as stats_mod
from ragreport.explorer.alone import QueryCurves
from ragreport.explorer.arrays import RunArrays
from ragreport.explorer.limits import HEAD_ROWS, ROWS_MAX, ROWS_WINDOW
from ragreport.explorer.state import ExplorerState
from ragreport.explorer.widget import Explorer
from ragreport.measures import Measure, parse_measure
from ragreport.targets import default_targets, parse_targets

TRAITS = ("meta", "measure", "k", "run_a", "run_b", "sort", "filter_text", "category",
          "fails_only", "selected", "order_version", "n_visible", "selected_pos", "head",
          "summary", "ranking", "panel", "compare", "report", "error")


@pytest.fixture(scope="module")
def results() -> list[ragreport.EvaluationResult]:
    f = example_files()
    return [ragreport.evaluate(f.qrels, r) for r in f.runs]


@pytest.fixture()
def ex(results: list[ragreport.EvaluationResult]) -> Explorer:
    f = example_files()
    return Explorer(results, queries=f.queries, docs=f.docs)


def _texts(what: str) -> dict[str, str]:
    return ragreport.load_texts(getattr(example_files(), what))


def _json(widget: Explorer) -> dict[str, Any]:
    """Every trait, through strict JSON (no NaN): what the front end receives."""
    return json.loads(json.dumps({t: getattr(widget, t) for t in TRAITS}, allow_nan=False))


def _value(r: ragreport.EvaluationResult, family: str, k: int) -> np.ndarray:
    m = Measure(family).at(k)
    if k <= r.k_max:
        return r.curve(family)[:, k - 1]
    return cutoff_values(r.ranking, m, float(r.conventions.rel_level))


def _expected_order(r: ragreport.EvaluationResult, family: str, k: int) -> list[str]:
    kinds = failure_kinds(r, k)
    head = worst_order(_value(r, family, k), kinds).tolist()
    rest = [i for i in range(r.n_queries) if kinds[i] == 1]
    return [r.query_ids[i] for i in head + rest]


# ---- construction ------------------------------------------------------------------------
def test_every_trait_filled_and_json(ex: Explorer,
                                     results: list[ragreport.EvaluationResult]) -> None:
    got = _json(ex)
    meta = got["meta"]
    assert meta["runs"] == ["bm25", "tfidf"]
    assert meta["n_queries"] == 41 and meta["has_docs"] and meta["has_queries"]
    assert meta["version"] == ragreport.__version__
    assert {f["id"] for f in meta["families"]} >= {"nDCG", "R", "P", "RR", "AP"}
    ndcg = next(f for f in meta["families"] if f["id"] == "nDCG")
    assert ndcg["title"] == "normalised discounted cumulative gain"
    assert [s["id"] for s in meta["sorts"]] == ["worst", "best", "id", "delta_desc",
                                                "delta_asc"]
    cats = {c["id"]: c for c in meta["categories"]}
    assert cats["no_judged"]["label"] == "no judged relevant document"
    assert cats["no_judged"]["code"] == 1 and cats["beyond_k"]["code"] == 4
    # K goes to the deepest ranking, not to the curves' width (20)
    assert results[0].k_max == 20
    assert meta["k_max"] == max(int(r.ranking.n_ret.max()) for r in results) == 50
    assert got["run_a"] == 0 and got["run_b"] == 1 and got["error"] == ""
    assert got["selected"] == got["head"]["qid"][0] and got["selected_pos"] == 0
    assert got["n_visible"] == 41 and got["order_version"] >= 1
    assert got["report"] == {"state": "idle", "path": "", "url": "", "message": ""}
    for key in ("summary", "ranking", "panel", "compare"):
        assert got[key], key


def test_default_measure_is_the_first_targets(results: list[ragreport.EvaluationResult]
                                              ) -> None:
    first = default_targets()[0].measure  # R@5 > 0.85
    ex = Explorer(results)
    assert (ex.measure, ex.k) == (first.name, first.cutoff) == ("R", 5)
    assert ex.summary["label"] == "R@5"
    ex2 = Explorer(results, targets={"nDCG@10": 0.6, "P@3": 0.5})
    assert (ex2.measure, ex2.k) == ("nDCG", 10)
    assert ex2.summary["label"] == "nDCG@10" and ex2.compare["label"] == "nDCG@10"
    ex3 = Explorer(results, targets=[])
    assert (ex3.measure, ex3.k) == ("nDCG", 10)
    ex4 = Explorer(results, targets={"RR": 0.5})  # no cutoff: RR@10
    assert (ex4.measure, ex4.k) == ("RR", 10)
    ex5 = Explorer(results, measure="P", k=3)
    assert (ex5.measure, ex5.k) == ("P", 3)
    ex6 = Explorer(results, measure="AP@7")
    assert (ex6.measure, ex6.k) == ("AP", 7)


def test_labels_carry_k(ex: Explorer) -> None:
    ex.set_measure("nDCG")
    ex.set_k(10)
    assert ex.summary["label"] == "nDCG@10"
    assert ex.summary["title"] == "normalised discounted cumulative gain"
    assert [m["label"] for m in ex.panel["measures"]][:3] == ["nDCG@10", "R@10", "P@10"]
    assert all(m["label"].endswith("@10") for m in ex.panel["measures"])
    assert ex.panel["curve"]["label"] == "nDCG"  # one name, no "nDCG (nDCG)"
    assert ex.compare["label"] == "nDCG@10"


# ---- the list ----------------------------------------------------------------------------
def test_order_worst_first_and_no_judged_last(ex: Explorer,
                                              results: list[ragreport.EvaluationResult]
                                              ) -> None:
    bm25 = results[0]
    for family, k in (("nDCG", 3), ("P", 1), ("R", 10), ("RR", 7), ("AP", 37)):
        ex.set_measure(family)
        ex.set_k(k)
        expected = _expected_order(bm25, family, k)
        assert ex.query_order() == expected
        assert ex.head["qid"] == expected[:HEAD_ROWS]
        assert ex.head["a"] == pytest.approx(
            [float(_value(bm25, family, k)[bm25.query_ids.index(q)]) for q in expected])
        kinds = failure_kinds(bm25, k)
        assert ex.head["kind"] == [int(kinds[bm25.query_ids.index(q)]) for q in expected]
    # queries without a judged relevant document: never "worst", listed last
    no_judged = [q for i, q in enumerate(bm25.query_ids) if failure_kinds(bm25, 5)[i] == 1]
    assert no_judged == ["q40", "q41"]
    ex.set_k(5)
    assert ex.query_order()[-2:] == no_judged
    assert ex.head["kind"][:5] == [k for k in ex.head["kind"][:5] if k != 1]
    ex.set_sort("best")
    assert ex.query_order()[-2:] == no_judged
    ex.set_category("no_judged")
    assert ex.query_order() == no_judged and ex.category == "no_judged"
    assert ex.head["kind"] == [1, 1]


def test_sorts_and_order_version(ex: Explorer, results: list[ragreport.EvaluationResult]
                                 ) -> None:
    bm25, tfidf = results
    v0 = ex.order_version
    ex.set_sort("id")
    assert ex.query_order() == sorted(bm25.query_ids)
    assert ex.order_version > v0 and ex.sort == "id"
    v1 = ex.order_version
    ex.set_sort("id")  # nothing changed
    assert ex.order_version == v1
    ex.set_sort("delta_asc")
    va = _value(bm25, ex.measure, ex.k)
    vb = _value(tfidf, ex.measure, ex.k)
    d = dict(zip(bm25.query_ids, (vb - va).tolist(), strict=True))
    order = ex.query_order()
    deltas = [d[q] for q in order if q not in ("q40", "q41")]
    assert deltas == sorted(deltas)
    assert ex.head["delta"][0] == pytest.approx(min(deltas))
    ex.set_sort("delta_desc")
    deltas = [d[q] for q in ex.query_order() if q not in ("q40", "q41")]
    assert deltas == sorted(deltas, reverse=True)
    # ties by query id
    for a, b in zip(ex.query_order(), ex.query_order()[1:], strict=False):
        if a not in ("q40", "q41") and b not in ("q40", "q41") and d[a] == d[b]:
            assert a < b
    ex.set_sort("delta")  # the old name: losses first
    assert ex.sort == "delta_asc"
    with pytest.raises(ragreport.RagReportError, match="sort must be one of"):
        ex.set_sort("random")
    assert ex.sort == "delta_asc" and "sort must be one of" in ex.error


def test_filter_as_you_type_and_stale_selection(ex: Explorer) -> None:
    queries = _texts("queries")
    sel = ex.selected
    full = ex.query_order()
    # the front end sets the trait on every key
    ex.filter_text = "d"
    ex.filter_text = "de"
    ex.filter_text = "dec"
    match = [q for q in full if "dec" in (q + "\t" + queries[q]).lower()]
    assert ex.n_visible == len(match) > 0 and ex.query_order() == match
    assert ex.head["qid"] == match
    if sel not in match:
        assert ex.selected == sel and ex.selected_pos == -1
    # no match: the selection stays the same query, hidden (not a stale "shown" query)
    ex.filter_text = "no such query text at all"
    assert ex.n_visible == 0 and ex.head["qid"] == [] and ex.selected_pos == -1
    assert ex.selected == sel and ex.error == ""
    with pytest.raises(ragreport.RagReportError, match="no query matches"):
        ex.next_query()
    ex.filter_text = ""
    assert ex.selected == sel and ex.selected_pos == ex.query_order().index(sel)
    # the text stays as typed (a trailing space is not taken away while typing)
    ex.filter_text = "dec "
    assert ex.filter_text == "dec " and ex.query_order() == match
    # case-insensitive, on ids too
    ex.set_filter("Q0")
    assert all(q.startswith("q0") for q in ex.query_order()) and ex.n_visible == 9


def test_category_and_fails_only(ex: Explorer, results: list[ragreport.EvaluationResult]
                                 ) -> None:
    bm25 = results[0]
    ex.set_k(3)
    kinds = failure_kinds(bm25, 3)
    ex.category = "beyond_k"
    assert set(ex.query_order()) == {q for i, q in enumerate(bm25.query_ids) if kinds[i] == 4}
    assert ex.category == "beyond_k" and set(ex.head["kind"]) == {4}
    ex.set_category("relevant only beyond K")  # by label
    assert ex.category == "beyond_k"
    ex.set_kind(3)  # by code
    assert ex.category == "not_retrieved"
    ex.category = "bogus"
    assert ex.category == "not_retrieved" and "category must be one of" in ex.error
    ex.category = ""
    assert ex.n_visible == 41
    # fails a CONFIGURED target (at its own K), whatever the slider says
    targets = parse_targets({"R@5": "> 0.85", "RR": 0.5})
    ex2 = Explorer(results, targets=targets)
    fails = np.zeros(bm25.n_queries, dtype=bool)
    for t in targets:
        v = target_values(bm25, t)
        assert v is not None
        fails |= ~passes_array(v, t.op, t.threshold)
    want = {q for i, q in enumerate(bm25.query_ids) if fails[i]}
    for k in (1, 5, 40):
        ex2.set_k(k)
        ex2.fails_only = True
        assert set(ex2.query_order()) == want
        assert all(ex2.head["fails"])
        ex2.fails_only = False
    assert ex2.n_visible == 41


# ---- measure and K -----------------------------------------------------------------------
def test_k_beyond_the_curves_and_refusals(ex: Explorer,
                                          results: list[ragreport.EvaluationResult]) -> None:
    bm25 = results[0]
    ex.set_measure("P")
    ex.k = 37  # beyond the evaluated curves (20), within the deepest ranking (50)
    assert ex.k == 37 and ex.error == "" and ex.summary["label"] == "P@37"
    want = float(bm25.values("P@37").mean())
    assert ex.summary["runs"][0]["mean"] == pytest.approx(want)
    # past the end of a ranking, precision keeps its denominator K
    i = bm25.query_ids.index(ex.selected)
    n_ret = int(bm25.ranking.n_ret[i])
    ex.k = 50
    p50 = next(m["a"] for m in ex.panel["measures"] if m["id"] == "P")
    assert p50 == pytest.approx(float(bm25.values("P@50")[i]))
    assert ex.ranking["n_ret"] == n_ret
    v = ex.order_version
    for bad in (0, 51, -1):
        ex.k = bad
        assert ex.k == 50 and f"K must be an integer from 1 to 50, got {bad}" in ex.error
    assert ex.order_version == v
    with pytest.raises(ragreport.RagReportError, match="K must be"):
        ex.set_k(True)
    with pytest.raises(ragreport.RagReportError, match="K must be"):
        ex.set_k(2.5)  # type: ignore[arg-type]
    ex.measure = "zzz"
    assert ex.measure == "P" and "zzz" in ex.error
    ex.measure = "nDCG@4"  # the measure with its K
    assert (ex.measure, ex.k, ex.error) == ("nDCG", 4, "")
    ex.set_measure("recall")  # any spelling of a family
    assert ex.measure == "R"
    with pytest.raises(ragreport.RagReportError, match="no curve"):
        ex.set_measure("Rprec")
    assert ex.measure == "R"


def test_error_cleared_by_the_next_good_change(ex: Explorer) -> None:
    ex.k = 0
    assert ex.error
    ex.k = 3
    assert ex.error == ""


# ---- selection, ranking, panel -----------------------------------------------------------
def test_a_new_k_resends_no_ranking(ex: Explorer) -> None:
    """The view draws the cut line at K itself: a K change leaves the ranking trait as it
    was, so the update carries no ranking and the grids are not redrawn from it."""
    changed: list[str] = []
    ex.select_query("q03")
    ex.observe(lambda c: changed.append(c["name"]), names=["ranking", "panel", "summary"])
    ex.set_k(7)
    assert "ranking" not in changed and {"panel", "summary"} <= set(changed)


def test_ranking_is_the_whole_list(ex: Explorer, results: list[ragreport.EvaluationResult]
                                   ) -> None:
    bm25, tfidf = results
    docs = _texts("docs")
    ex.set_k(5)
    for q in ("q03", "q12", "q40"):
        ex.select_query(q)
        rk = ex.ranking
        ranked = bm25.ranked_list(q)
        assert rk["qid"] == q and "k" not in rk and rk["run"] == "bm25"
        assert rk["n_ret"] == len(ranked) == len(rk["rows"]["rank"])
        assert rk["rows"]["rank"] == list(range(1, len(ranked) + 1))
        assert rk["rows"]["doc_id"] == [d.doc_id for d in ranked]
        assert rk["rows"]["grade"] == [d.grade for d in ranked]  # None = unjudged
        assert rk["rows"]["relevant"] == [d.relevant for d in ranked]
        assert rk["rows"]["score"] == [d.score for d in ranked]
        for d, text in zip(ranked, rk["rows"]["text"], strict=True):
            assert text == ragreport.present.snippet(docs.get(d.doc_id), 300)
            assert len(text) <= 300
        assert rk["missing_relevant"] == [d for d, _g in bm25.missing_relevant(q)]
        assert rk["n_rel"] == sum(g >= 1 for _d, g in bm25.judged(q))
        assert rk["query_text"] == _texts("queries")[q]
        b = rk["b"]
        assert b["run"] == "tfidf" and b["rows"]["doc_id"] == [d.doc_id
                                                               for d in tfidf.ranked_list(q)]
        rank_a = {d: n for n, d in enumerate(rk["rows"]["doc_id"], start=1)}
        assert b["move"] == [None if d not in rank_a else rank_a[d] - n
                             for n, d in enumerate(b["rows"]["doc_id"], start=1)]
    # relevant documents beyond the first 20 ranks are in the list
    deep = [(q, d.rank) for q in bm25.query_ids for d in bm25.ranked_list(q)
            if d.relevant and d.rank > 20]
    assert deep
    q, rank = deep[0]
    ex.select_query(q)
    assert ex.ranking["rows"]["relevant"][rank - 1] is True


def test_select_next_prev(ex: Explorer) -> None:
    order = ex.query_order()
    ex.selected = order[3]  # as the front end does
    assert ex.selected_pos == 3 and ex.ranking["qid"] == order[3]
    assert ex.panel["qid"] == order[3]
    assert ex.next_query() == order[4] and ex.selected == order[4]
    assert ex.prev_query() == order[3]
    ex.select_query(order[-1])
    with pytest.raises(ragreport.RagReportError, match="already at the last"):
        ex.next_query()
    assert ex.selected == order[-1] and "already at the last" in ex.error
    ex.select_query(order[0])
    assert ex.error == ""
    with pytest.raises(ragreport.RagReportError, match="already at the first"):
        ex.prev_query()
    ex.selected = "no-such-query"
    assert ex.selected == order[0] and "was not evaluated" in ex.error
    # a hidden selection: next goes to the first visible query
    ex.select_query(order[0])
    ex.set_filter(order[5])
    assert ex.selected_pos == -1 or order[0] == order[5]
    assert ex.next_query() == ex.query_order()[0]
    ex.select_query("")
    assert ex.ranking == {} and ex.panel == {} and ex.selected_pos == -1


def test_panel_targets_are_the_configured_ones(results: list[ragreport.EvaluationResult]
                                               ) -> None:
    targets = parse_targets({"nDCG@10": ">= 0.5", "R@5": "> 0.85", "RR": 0.5})
    ex = Explorer(results, targets=targets)
    bm25 = results[0]
    q = "q05"
    ex.select_query(q)
    i = bm25.query_ids.index(q)
    for k in (1, 7, 33):
        ex.set_k(k)
        got = ex.panel["targets"]
        assert [t["label"] for t in got] == ["nDCG@10 >= 0.5", "R@5 > 0.85", "RR >= 0.5"]
        for t, row in zip(targets, got, strict=True):
            v = target_values(bm25, t)
            assert v is not None
            assert row["value"] == pytest.approx(float(v[i]))
            assert row["pass"] == bool(passes_array(v[i:i + 1], t.op, t.threshold)[0])
    # the summary's targets: run A's and run B's means
    labels = [(t["label"], t["run"]) for t in ex.summary["targets"]]
    assert labels[:3] == [("nDCG@10 >= 0.5", "bm25"), ("R@5 > 0.85", "bm25"),
                          ("RR >= 0.5", "bm25")]
    assert labels[3:] == [("nDCG@10 >= 0.5", "tfidf"), ("R@5 > 0.85", "tfidf"),
                          ("RR >= 0.5", "tfidf")]


def test_panel_measures_and_curve(ex: Explorer, results: list[ragreport.EvaluationResult]
                                  ) -> None:
    bm25, tfidf = results
    ex.set_measure("R")
    q = "q07"
    ex.select_query(q)
    i = bm25.query_ids.index(q)
    for k in (3, 20, 21, 44):
        ex.set_k(k)
        p = ex.panel
        for m in p["measures"]:
            assert m["a"] == pytest.approx(float(_value(bm25, m["id"], k)[i]), abs=1e-12)
            assert m["b"] == pytest.approx(float(_value(tfidf, m["id"], k)[i]), abs=1e-12)
        judged = cutoff_values(bm25.ranking, parse_measure(f"Judged@{k}"), 1.0)[i]
        assert p["judged_at_k"] == pytest.approx(float(judged))
        assert p["judged_label"] == f"Judged@{k}"
        assert p["kind"] == FAILURE_KINDS[int(failure_kinds(bm25, k)[i])] or \
            (p["kind_code"] == 0 and p["kind"] == "relevant document in the top K")
    c = ex.panel["curve"]
    assert c["family"] == "R" and c["ks"] == list(range(1, 51))
    want_q = [float(_value(bm25, "R", k)[i]) for k in c["ks"]]
    want_mean = [float(_value(bm25, "R", k).mean()) for k in c["ks"]]
    assert c["query_a"] == pytest.approx(want_q, abs=1e-12)
    assert c["mean_a"] == pytest.approx(want_mean, abs=1e-12)
    assert c["query_b"] == pytest.approx([float(_value(tfidf, "R", k)[i]) for k in c["ks"]],
                                         abs=1e-12)
    assert len(c["mean_b"]) == 50


# ---- runs A and B ------------------------------------------------------------------------
def test_a_equals_b_refused_and_swap(ex: Explorer, results: list[ragreport.EvaluationResult]
                                     ) -> None:
    ex.run_b = 0  # the front end picks A = B
    assert (ex.run_a, ex.run_b) == (0, 1) and ex.error == "run A and run B must differ"
    ex.run_a = 1
    assert (ex.run_a, ex.run_b) == (0, 1) and ex.error == "run A and run B must differ"
    with pytest.raises(ragreport.RagReportError, match="run A and run B must differ"):
        ex.set_runs(1, 1)
    before = dict(ex.compare)
    ex.swap_runs()
    assert (ex.run_a, ex.run_b) == (1, 0) and ex.error == ""
    after = ex.compare
    assert after["mean_a"] == before["mean_b"] and after["mean_b"] == before["mean_a"]
    assert after["delta"] == pytest.approx(-before["delta"])
    assert (after["wins"], after["losses"]) == (before["losses"], before["wins"])
    assert ex.summary["runs"][0]["name"] == "bm25"  # every run, in order
    assert ex.ranking["run"] == "tfidf" and ex.ranking["b"]["run"] == "bm25"
    assert ex.head["a"][0] == pytest.approx(
        float(_value(results[1], ex.measure, ex.k)[results[1].query_ids.index(
            ex.head["qid"][0])]))
    ex.run_b = -1  # no B: no comparison, no delta column, delta sorts refused
    assert ex.compare == {} and "b" not in ex.head and "delta" not in ex.head
    assert "b" not in ex.ranking and "query_b" not in ex.panel["curve"]
    ex.sort = "delta_asc"
    assert ex.sort == "worst" and "needs a run B" in ex.error
    with pytest.raises(ragreport.RagReportError, match="swapping needs a run B"):
        ex.swap_runs()
    ex.set_runs("bm25", "tfidf")
    assert (ex.run_a, ex.run_b) == (0, 1)


def test_compare_is_the_analysis_paired_test(ex: Explorer,
                                             results: list[ragreport.EvaluationResult]
                                             ) -> None:
    bm25, tfidf = results
    ex.set_measure("nDCG")
    ex.set_k(10)
    c = ex.compare
    want = paired(_value(bm25, "nDCG", 10), _value(tfidf, "nDCG", 10), resamples=10_000,
                  seed=0)
    assert c["n"] == 41 and c["label"] == "nDCG@10"
    assert c["mean_a"] == pytest.approx(want.mean_a) and c["mean_b"] == pytest.approx(
        want.mean_b)
    assert c["delta"] == pytest.approx(want.delta)
    assert (c["lo"], c["hi"]) == pytest.approx((want.lo, want.hi))
    assert c["p_rand"] == pytest.approx(want.p_rand) and c["p_t"] == pytest.approx(want.p_t)
    assert (c["wins"], c["losses"], c["ties"]) == (want.wins, want.losses, want.ties)
    assert c["significant"] is want.significant() and c["pending"] is False


def test_runs_with_different_queries() -> None:
    qrels = {"a": {"x": 1}, "b": {"x": 1}, "c": {"y": 1}}
    r1 = ragreport.evaluate(qrels, {"a": ["x"], "b": ["y"], "c": ["y"]}, name="one")
    r2 = ragreport.evaluate(qrels, {"a": ["y"], "c": ["y", "z"]}, name="two")
    ex = Explorer([r1, r2], targets=[])
    assert ex.meta["n_queries"] == 3 and ex.compare["n"] == 2
    ex.select_query("b")
    assert ex.ranking["b"] == {"run": "two", "missing": True}
    assert ex.panel["measures"][0]["b"] is None
    row = ex.head["qid"].index("b")
    assert ex.head["b"][row] is None and ex.head["delta"][row] is None
    ex.swap_runs()  # "b" is not in run A any more: the first visible query is selected
    assert ex.run_a == 1 and ex.selected in r2.query_ids and ex.selected_pos == 0


def test_single_run(results: list[ragreport.EvaluationResult]) -> None:
    ex = Explorer(results[0], targets=[])
    assert ex.run_b == -1 and ex.compare == {}
    assert [s["id"] for s in ex.meta["sorts"]] == ["worst", "best", "id"]
    ex.run_b = 0
    assert ex.run_b == -1 and ex.error == "run A and run B must differ"
    ex.run_a = 3
    assert ex.run_a == 0 and "run A must be a run name or an index below 1" in ex.error


# ---- messages ----------------------------------------------------------------------------
def test_rows_message(ex: Explorer) -> None:
    order = ex.query_order()
    [reply] = ex.handle_message({"type": "rows", "id": 7, "start": 10, "end": 20})
    assert reply["type"] == "rows" and reply["id"] == 7
    assert reply["order_version"] == ex.order_version and reply["total"] == 41
    assert reply["start"] == 10 and reply["rows"]["qid"] == order[10:20]
    # no "fails": the default targets fail every query of the example, so it tells nothing
    assert set(reply["rows"]) == {"start", "qid", "text", "a", "b", "delta", "kind",
                                  "unjudged"}
    json.dumps(reply, allow_nan=False)
    # clamped: past the end, negative start, end before start, huge windows
    [r] = ex.handle_message({"type": "rows", "id": "w", "start": 40, "end": 90})
    assert r["rows"]["qid"] == order[40:] and r["id"] == "w"
    [r] = ex.handle_message({"type": "rows", "id": 1, "start": -5, "end": 2})
    assert r["start"] == 0 and r["rows"]["qid"] == order[:2]
    [r] = ex.handle_message({"type": "rows", "id": 1, "start": 9, "end": 3})
    assert r["rows"]["qid"] == [] and r["start"] == 9
    [r] = ex.handle_message({"type": "rows", "id": 1, "start": 0, "end": 10**9})
    assert len(r["rows"]["qid"]) == min(ROWS_MAX, 41)
    [r] = ex.handle_message({"type": "rows", "id": 1, "start": 3.0, "end": 5.0})
    assert r["rows"]["qid"] == order[3:5]
    # the reply follows the order it was computed for
    ex.set_sort("id")
    [r] = ex.handle_message({"type": "rows", "id": 2, "start": 0, "end": 3})
    assert r["order_version"] == ex.order_version and r["rows"]["qid"] == sorted(order)[:3]


def test_rows_window_is_capped_for_large_lists() -> None:
    n = 1200
    qrels = {f"q{i:04d}": {"d": 1} for i in range(n)}
    run = {f"q{i:04d}": ["d"] if i % 3 else ["x", "d"] for i in range(n)}
    ex = Explorer(ragreport.evaluate(qrels, run), targets=[])
    assert len(ex.head["qid"]) == HEAD_ROWS == 200
    [r] = ex.handle_message({"type": "rows", "id": 1, "start": 100, "end": 1100})
    assert len(r["rows"]["qid"]) == ROWS_MAX == 500 and r["total"] == n
    assert r["rows"]["qid"] == ex.query_order()[100:600]


@pytest.mark.parametrize("msg, pattern", [
    (None, "a message must be an object, got NoneType"),
    ([1, 2], "a message must be an object, got list"),
    ("rows", "a message must be an object, got str"),
    ({}, "unknown message type 'None'"),
    ({"type": "nope", "id": 3}, "unknown message type 'nope'"),
    ({"type": 5, "id": 3}, "unknown message type '5'"),
    ({"type": "rows", "id": 3}, "rows: start must be an integer, got None"),
    ({"type": "rows", "id": 3, "start": "0", "end": 5}, "rows: start must be an integer"),
    ({"type": "rows", "id": 3, "start": 0, "end": True}, "rows: end must be an integer"),
    ({"type": "rows", "id": 3, "start": float("nan"), "end": 5}, "start must be an integer"),
    ({"type": "rows", "id": 3, "start": 0, "end": float("inf")}, "end must be an integer"),
    ({"type": "rows", "id": 3, "start": 0, "end": 10**30}, "end must be an integer"),
    ({"type": "passage", "id": 3, "qid": "q01"}, "passage: doc_id must be text, got None"),
    ({"type": "passage", "id": 3, "qid": 1, "doc_id": "x"}, "passage: qid must be text"),
    ({"type": "report", "id": 3, "path": ["x"]}, "report: path must be text"),
])
def test_malformed_messages(ex: Explorer, msg: Any, pattern: str) -> None:
    before = _json(ex)
    [reply] = ex.handle_message(msg)
    assert reply["type"] == "error" and pattern in reply["message"]
    want_id = msg.get("id") if isinstance(msg, dict) else None
    assert reply["id"] == want_id
    assert "\n" not in reply["message"] and len(reply["message"]) < 200
    json.dumps(reply, allow_nan=False)
    assert _json(ex) == before  # nothing changed


def test_message_ids_echoed_or_dropped(ex: Explorer) -> None:
    for mid in ("abc", 12, 1.5):
        [r] = ex.handle_message({"type": "rows", "id": mid, "start": 0, "end": 1})
        assert r["id"] == mid
    for mid in (True, [1], {"a": 1}, None):
        [r] = ex.handle_message({"type": "rows", "id": mid, "start": 0, "end": 1})
        assert r["id"] is None


def test_passage_message(ex: Explorer) -> None:
    docs = _texts("docs")
    long_doc = max(ex.ranking["rows"]["doc_id"], key=lambda d: len(docs.get(d, "")))
    [r] = ex.handle_message({"type": "passage", "id": 4, "qid": ex.selected,
                             "doc_id": long_doc})
    assert r == {"type": "passage", "id": 4, "qid": ex.selected, "doc_id": long_doc,
                 "text": docs[long_doc]}
    assert len(r["text"]) > 300  # the full text, not the snippet
    [r] = ex.handle_message({"type": "passage", "id": 5, "qid": "", "doc_id": "unknown"})
    assert r["text"] == ""


def test_comm_callback_sends_the_replies(ex: Explorer, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    sent: list[Any] = []
    monkeypatch.setattr(ex, "send", lambda msg, buffers=None: sent.append(msg))
    ex._on_msg(ex, {"type": "rows", "id": 9, "start": 0, "end": 2}, [])
    ex._on_msg(ex, "junk", [])
    assert [m["type"] for m in sent] == ["rows", "error"] and sent[0]["id"] == 9


def test_report_message_and_method(ex: Explorer, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    states: list[str] = []
    sent: list[dict[str, Any]] = []
    ex.observe(lambda ch: states.append(ch["new"]["state"]), names="report")
    monkeypatch.setattr(ex, "send", lambda msg, buffers=None: sent.append(msg))

    def asked(mid: int, path: str | None = None) -> dict[str, Any]:
        """The button's request: a busy reply at once, the report written in a thread,
        then the report message (with the HTML when written)."""
        [r] = ex.handle_message({"type": "report", "id": mid}
                                | ({"path": path} if path else {}))
        assert r["type"] == "report" and r["id"] == mid and r["state"] == "busy"
        ex.wait_report(60)
        done = sent.pop()
        assert done["type"] == "report" and done["id"] is None and not sent
        return done

    r = asked(11)
    assert states == ["busy", "done"]
    written = tmp_path / "ragreport-report.html"
    assert written.is_file() and "<html" in written.read_text("utf-8")[:500].lower()
    assert r["state"] == "done" and r["html"] == written.read_text("utf-8")
    assert ex.report["path"] == str(written) and ex.report["url"] == "files/ragreport-report.html"
    r = asked(12, "out dir/my report.html")
    assert r["state"] == "error" and "could not write" in r["message"]
    (tmp_path / "out dir").mkdir()
    r = asked(13, "out dir/my report.html")
    assert r["state"] == "done" and r["url"] == "files/out%20dir/my%20report.html"
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere.html"
    try:
        assert ex.write_report(outside) == outside
        assert ex.report["url"] == outside.resolve().as_uri()
    finally:
        outside.unlink(missing_ok=True)
    with pytest.raises(ragreport.RagReportError, match="does not exist"):
        ex.write_report(tmp_path / "missing" / "x.html")
    assert ex.report["state"] == "error"


# ---- display -----------------------------------------------------------------------------
def test_repr_and_mimebundle(ex: Explorer) -> None:
    text = repr(ex)
    assert text == "ragreport Explorer: 2 runs, 41 queries, R@5 mean " \
        f"{ragreport.targets.shown(ex.summary['runs'][0]['mean'])} (run bm25)"
    data, _meta = ex._repr_mimebundle_()
    assert data["text/plain"] == text and "\n" not in text
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.model_id
    page = data["text/html"]
    # its own root class: the live view's selectors (.rr-explorer) never reach the snapshot
    assert page.startswith('<div class="rr-snapshot"')
    assert "--rr-good" in page and "R@5" in page
    first = ex.head["qid"][0]
    assert f'data-query-id="{first}"' in page
    assert page.count("<tr data-query-id=") == min(50, ex.n_visible)
    # the ranking through K, then the cut line
    assert page.count("cut-off at K = 5") == 1
    ranking = page.split('data-role="ranking"')[1]
    assert len(re.findall(r"<tr><td class=\"num\">\d+</td>", ranking)) == 5
    ex.set_filter("nothing matches this")
    assert "No query matches" in ex._repr_mimebundle_()[0]["text/html"]


def _displayed(ex: Explorer, monkeypatch: pytest.MonkeyPatch, *, kernel: bool) -> list[Any]:
    import IPython.display

    from ragreport.explorer import widget

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display",
                        lambda data, metadata=None, raw=False: shown.append((data, raw)))
    monkeypatch.setattr(widget, "_in_kernel", lambda: kernel)
    ex._ipython_display_()
    return shown


def test_in_a_kernel_the_snapshot_is_its_own_output_before_the_view(
        ex: Explorer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The live view hides the snapshot marked with its model id; without the view (no
    kernel, no saved state) the snapshot stands where the view would be."""
    shown = _displayed(ex, monkeypatch, kernel=True)
    assert [raw for _, raw in shown] == [True, True]
    (snapshot, _), (view, _) = shown
    assert list(snapshot) == ["text/html"]
    assert f'data-rr-snapshot="{ex.model_id}"' in snapshot["text/html"]
    assert ex.snapshot_id == ex.model_id
    assert view["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.model_id
    assert "text/html" not in view and view["text/plain"] == repr(ex)
    # the snapshot's own rules hide it beside a live view, and the dead view beside it
    assert ":has(+ .jp-OutputArea-child .rr-explorer){display:none}" \
        in snapshot["text/html"]


def test_outside_a_kernel_one_bundle_is_displayed(ex: Explorer,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _displayed(ex, monkeypatch, kernel=False)
    assert len(shown) == 1
    data, _ = shown[0]
    assert data["text/plain"] == repr(ex)
    assert "data-rr-snapshot" not in data["text/html"] and ":has(" not in data["text/html"]


def test_hostile_texts_are_escaped_in_the_snapshot() -> None:
    evil = '<script>alert("x")</script>'
    qrels = {evil: {"<img src=x onerror=alert(1)>": 1, "d&2": 0}, "q\"2": {"d": 1}}
    run = {evil: ["d&2", "<img src=x onerror=alert(1)>"], "q\"2": ["d"]}
    r1 = ragreport.evaluate(qrels, run, name="<b>run</b>")
    r2 = ragreport.evaluate(qrels, {evil: ["<img src=x onerror=alert(1)>"], "q\"2": []},
                            name="run'2")
    ex = Explorer([r1, r2], targets=[], queries={evil: evil + "\n" + "x" * 5000},
                  docs={"d&2": "</td></tr><script>bad()</script>"})
    ex.select_query(evil)
    page = ex._repr_mimebundle_()[0]["text/html"]
    assert "<script>" not in page and "<img" not in page and "<b>run" not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;b&gt;run&lt;/b&gt;" in page
    assert "d&amp;2" in page
    assert "x" * 300 not in page  # query texts are snippets (120 in the list, 300 above)
    json.dumps(_json(ex), allow_nan=False)
    assert ex.ranking["qid"] == evil  # the data itself is not altered (the DOM escapes)
    assert repr(ex).startswith("ragreport Explorer: 2 runs, 2 queries")


# ---- large evaluations: intervals and tests off the interaction path ---------------------
def test_background_stats_match_inline(results: list[ragreport.EvaluationResult],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    inline = Explorer(results, targets=[], measure="P", k=25)
    monkeypatch.setattr(limits, "INLINE_STATS_QUERIES", 0)
    monkeypatch.setattr(limits, "MEAN_ALL_CELLS", 0)
    big = Explorer(results, targets=[], measure="P", k=25)
    assert big.state.stats_inline is False
    big.wait_stats(30)
    assert big.summary["pending"] is False and big.compare["pending"] is False
    # the same resamples in the background as inline (the report's): the same p-value
    assert big.compare["resamples"] == inline.compare["resamples"] == 10_000
    want = paired(_value(results[0], "P", 25), _value(results[1], "P", 25),
                  resamples=10_000, seed=0)
    assert big.compare["p_rand"] == want.p_rand == inline.compare["p_rand"]
    assert big.summary["runs"][0]["mean"] == inline.summary["runs"][0]["mean"]
    assert big.summary["runs"][0]["lo"] is not None
    # the mean curve past the evaluated Ks: computed at a few Ks (and K), None elsewhere
    c = big.panel["curve"]
    have = [k for k, m in zip(c["ks"], c["mean_a"], strict=True) if m is not None]
    assert set(range(1, 21)) < set(have) and 25 in have and 50 in have
    for k, m in zip(c["ks"], c["mean_a"], strict=True):
        if m is not None:
            assert m == pytest.approx(float(_value(results[0], "P", k).mean()))
    # a change: pending at once (the interaction does not wait), filled afterwards
    big.set_k(30)
    assert big.summary["label"] == "P@30"
    big.wait_stats(30)
    assert big.summary["pending"] is False and big.compare["p_rand"] is not None


def test_swap_from_the_view_applied_once(ex: Explorer, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    calls: list[str] = []
    real = ex._apply

    def counting(action: Any, **how: Any) -> Any:
        calls.append("apply")
        return real(action, **how)

    monkeypatch.setattr(ex, "_apply", counting)
    with ex.hold_trait_notifications():  # as a comm message setting both traits does
        ex.run_a, ex.run_b = 1, 0
    assert calls == ["apply"] and (ex.state.a, ex.state.b) == (1, 0) and ex.error == ""
    assert ex.ranking["run"] == "tfidf"


def test_background_stats_one_worker_superseded_and_closed(
        results: list[ragreport.EvaluationResult], monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.setattr(limits, "INLINE_STATS_QUERIES", 0)
    big = Explorer(results, targets=[], measure="P", k=25)
    started: list[int] = []
    real = big.state.stats_job

    def counting(stale: Any = None) -> Any:
        job = real(stale)

        def run() -> bool:
            started.append(big.state.k)
            return bool(job())
        return run

    monkeypatch.setattr(big.state, "stats_job", counting)
    # a dragged slider: ten views, one worker, only the last computed. The worker's lock is
    # held meanwhile: on a loaded machine a set_k taking over STATS_DELAY (the quiet moment)
    # would let a middle view start, which is right but not what this test is about
    with big._stats.cond:
        for k in range(2, 12):
            big.set_k(k)
    big.wait_stats(30)
    workers = [t for t in threading.enumerate() if t.name == "ragreport-explorer-stats"]
    assert len(workers) >= 1 and all(t.daemon for t in workers)
    assert started == [11] and big.summary["label"] == "P@11"
    assert big.summary["pending"] is False
    assert big.stats_running
    big.set_k(12)  # waiting for its quiet moment when the widget closes
    big.close()
    assert not big.stats_running
    big.wait_stats(1)  # returns at once once closed
    assert started == [11]


def test_state_alone_is_plain_python(results: list[ragreport.EvaluationResult]) -> None:
    s = ExplorerState(results, targets=[], measure="nDCG", k=10)
    assert s.meta()["k_max"] == 50 and s.head()["qid"] == s.query_order()
    assert math.isfinite(s.summary()["runs"][0]["mean"])
    s.set_runs(1, 0)
    assert s.compare()["run_a"] == "tfidf"
    assert not hasattr(s, "_repr_html_") and not hasattr(results[0], "explore")
    with pytest.raises(ragreport.RagReportError, match="at least one"):
        ExplorerState([])
    with pytest.raises(ragreport.RagReportError, match="distinct"):
        ExplorerState([results[0], results[0]])


def test_kinds_equal_failure_kinds_at_every_k(results: list[ragreport.EvaluationResult]
                                              ) -> None:
    s = ExplorerState(results, targets=[])
    for run, r in enumerate(results):
        for k in range(1, s.k_max + 2):
            assert s.kinds(run, k).tolist() == failure_kinds(r, k).tolist(), (run, k)


def test_values_past_the_curves_equal_cutoff_values(results: list[ragreport.EvaluationResult]
                                                    ) -> None:
    s = ExplorerState(results, targets=[])
    for run, r in enumerate(results):
        for fam in [*s.families, Measure("Judged")]:
            for k in (21, 30, 50, 51, 1000):
                want = cutoff_values(r.ranking, fam.at(k), float(r.conventions.rel_level))
                assert s.arrays.cutoff(run, fam.at(k)).tolist() == want.tolist(), (fam, k)


def test_targets_on_the_lower_bound(results: list[ragreport.EvaluationResult]) -> None:
    targets = parse_targets({"nDCG@10": {"min": 0.3, "on": "ci_lower"}, "R@5": 0.3})
    ex = Explorer(results, targets=targets)
    from ragreport.stats import bootstrap_ci

    v = target_values(results[0], targets[0])
    assert v is not None
    lower = float(bootstrap_ci(v, level=0.95, resamples=10_000, seed=0).lower)
    row = ex.summary["targets"][0]
    assert row["on"] == "ci_lower" and row["value"] == pytest.approx(lower)
    assert row["value"] < float(v.mean())
    assert row["pass"] == (round(lower, 4) >= 0.3)
    assert ex.summary["targets"][1]["value"] == pytest.approx(
        float(results[0].values("R@5").mean()))


@pytest.mark.parametrize("sort", ["worst", "best", "id", "delta_desc", "delta_asc"])
def test_filtered_order_is_the_full_order_restricted(
        results: list[ragreport.EvaluationResult], sort: str) -> None:
    queries = _texts("queries")
    ref = ExplorerState(results, queries=queries, targets=[])  # never filtered
    ref.set_sort(sort)
    for needle in ("how", "q0", "q4", "list", "zz"):
        ex = Explorer(results, queries=queries, targets=[])
        ex.set_filter(needle)  # set first: the sorts below see only what it keeps
        ex.set_sort(sort)
        for k in (2, 30, 7):
            ex.set_k(k)
            ref.set_k(k)
            want = [q for q in ref.query_order() if needle in (q + "\t" + queries[q]).lower()]
            assert ex.query_order() == want, (sort, k, needle)
            assert ex.head["qid"] == want
            assert ("sorted", 0, 1, ex.state.family, k, sort) not in ex.state.arrays.memo.cache \
                or 4 * len(want) > 41
    ex = Explorer(results, queries=queries, targets=[])
    ex.set_category("beyond_k")
    ex.set_filter("q1")
    ex.set_sort(sort)
    ex.set_k(3)
    ref.set_k(3)
    kinds = dict(zip(ref.result_a.query_ids, failure_kinds(ref.result_a, 3).tolist(),
                     strict=True))
    assert ex.query_order() == [q for q in ref.query_order()
                                if q.startswith("q1") and kinds[q] == 4]


def test_caches_are_bounded_and_keep_the_view_independent_arrays(
        results: list[ragreport.EvaluationResult]) -> None:
    s = ExplorerState(results, targets=[])
    s.kinds(0, 3)
    deepest = s.arrays.memo.fixed[("kinds-deepest", 0)]
    for _ in range(3):
        for q in results[0].query_ids:
            s.select_query(q)
            s.panel()
        for k in range(1, s.k_max + 1):
            s.set_k(k)
            s.head()
    assert len(s.arrays.memo.cache) <= 4 * limits.CACHE_MAX
    assert len(s.arrays.values_cache) <= limits.CACHE_MAX
    assert s.arrays.memo.fixed[("kinds-deepest", 0)] is deepest  # never dropped
    assert s.kinds(0, 3).tolist() == failure_kinds(results[0], 3).tolist()


def test_deep_rankings_sample_the_curve() -> None:
    qrels = {"q1": {"d10": 1, "d4000": 2}, "q2": {"d3": 1}}
    run = {"q1": [f"d{i}" for i in range(5000)], "q2": ["d1", "d3"]}
    r = ragreport.evaluate(qrels, run)
    ex = Explorer(r, targets=[], measure="R")
    assert ex.meta["k_max"] == 5000
    c = ex.panel["curve"]
    ks = c["ks"]
    assert ks[:20] == list(range(1, 21)) and ks[-1] == 5000 and len(ks) <= 1000
    assert ks == sorted(set(ks)) and 10 in ks  # K itself is drawn
    ex.select_query("q1")
    ex.set_k(4500)
    c = ex.panel["curve"]
    assert 4500 in c["ks"]
    i = r.query_ids.index("q1")
    for k, v in zip(c["ks"], c["query_a"], strict=True):
        if k in (1, 20, 21, 4000, 4001, 4500, 5000):
            assert v == _value(r, "R", k)[i], k
    means = {k: m for k, m in zip(c["ks"], c["mean_a"], strict=True) if m is not None}
    assert 4500 in means and 5000 in means
    assert means[4500] == pytest.approx(float(_value(r, "R", 4500).mean()))
    assert ex.ranking["n_ret"] == 5000 and ex.ranking["rows"]["relevant"][4000] is True


def test_panel_without_the_single_query_evaluation(results: list[ragreport.EvaluationResult],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. a doc-map evaluation: the panel falls back to the full evaluation's arrays
    monkeypatch.setattr(QueryCurves, "_evaluate", lambda self, run, qid: None)
    ex = Explorer(results, targets=[], measure="nDCG", k=30)
    ex.select_query("q05")
    i = results[0].query_ids.index("q05")
    p = ex.panel
    for m in p["measures"]:
        assert m["a"] == pytest.approx(float(_value(results[0], m["id"], 30)[i]))
    c = p["curve"]
    assert c["query_a"] == pytest.approx([float(_value(results[0], "nDCG", k)[i])
                                          for k in c["ks"]])
    judged = cutoff_values(results[0].ranking, parse_measure("Judged@30"), 1.0)[i]
    assert p["judged_at_k"] == pytest.approx(float(judged))


def test_id_lookups_without_sorted_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels = {"a": {"x": 1}, "b": {"x": 1}, "c": {"y": 1}, "d": {"y": 1}}
    r1 = ragreport.evaluate(qrels, {"a": ["x"], "b": ["y"], "c": ["y"], "d": []}, name="one")
    r2 = ragreport.evaluate(qrels, {"a": ["y"], "c": ["y", "z"], "d": ["y"]}, name="two")
    sorted_state = ExplorerState([r1, r2], targets=[])
    monkeypatch.setattr(RunArrays, "ids_sorted", lambda self, run: False)
    s = ExplorerState([r1, r2], targets=[])  # the pyarrow look-ups
    for q in ("a", "b", "c", "d", "zz", ""):
        for run, ids in ((0, r1.query_ids), (1, r2.query_ids)):
            want = ids.index(q) if q in ids else -1
            assert s.position(run, q) == want and sorted_state.position(run, q) == want
    assert s.b_index().tolist() == sorted_state.b_index().tolist() == [0, -1, 1, 2]
    assert s.query_order() == sorted_state.query_order()


def test_kinds_of_large_evaluations(results: list[ragreport.EvaluationResult],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "INLINE_STATS_QUERIES", 0)
    s = ExplorerState(results, targets=[])
    assert ("kinds-deepest", 0) not in s.arrays.memo.fixed  # the first K: one pass of failure_kinds
    assert s.kinds(0, 4).tolist() == failure_kinds(results[0], 4).tolist()
    s.warm()
    assert ("kinds-deepest", 1) in s.arrays.memo.fixed
    for k in (1, 7, 50):
        assert s.kinds(1, k).tolist() == failure_kinds(results[1], k).tolist()


def test_summary_intervals_and_targets_are_the_reports() -> None:
    """The summary's intervals and the targets' verdicts (also on the lower bound of the
    interval, near the bound) are ``build_report``'s own numbers: same function, level,
    resamples and seed."""
    import inspect

    from ragreport.report import build_report
    from ragreport.settings import StatsSettings

    defaults = inspect.signature(build_report).parameters
    s = StatsSettings()
    assert (defaults["ci_level"].default, defaults["resamples"].default,
            defaults["curve_resamples"].default, defaults["seed"].default,
            defaults["alpha"].default) == (s.level, s.resamples, s.curve_resamples, s.seed,
                                           s.alpha)
    f = example_files()
    res = [ragreport.evaluate(f.qrels, p, ["nDCG@10", "R@5"]) for p in f.runs]
    targets = parse_targets({"R@5": {"min": 0.307, "on": "ci_lower"},
                             "nDCG@10": {"min": 0.3}})
    rep = build_report(res, targets, generated_at="2020-01-01T00:00:00")
    lower = {c.run: c.value for row in rep.targets for c in row.cells if c.on == "ci_lower"}
    # a second ci_lower target exactly at run A's shown lower bound, and one just above it
    at = float(ragreport.targets.shown(lower[res[0].run_name]))
    targets += parse_targets({"R@5": {"min": at, "on": "ci_lower"}})
    targets += parse_targets({"R@5": {"min": at + 0.0001, "on": "ci_lower"}})
    rep = build_report(res, targets, generated_at="2020-01-01T00:00:00")
    want = {(c.run, row.measure, row.threshold, c.on): (c.value, c.passed)
            for row in rep.targets for c in row.cells}
    s = ExplorerState(res, targets=targets)
    s.set_runs(0, 1)
    got = {(t["run"], str(targets[i % len(targets)].measure),
            targets[i % len(targets)].threshold, t["on"]): (t["value"], t["pass"])
           for i, t in enumerate(s.summary(force=True)["targets"])}
    assert got == {k: v for k, v in want.items() if k[0] in (res[0].run_name, res[1].run_name)}
    verdicts = [v[1] for v in got.values()]
    assert True in verdicts and False in verdicts
    for label in ("nDCG@10", "R@5"):
        s.set_measure(label)
        rows = {r.measure: r for r in rep.summary}
        for cell, run in zip(rows[label].cells, s.summary(force=True)["runs"], strict=True):
            assert (run["lo"], run["hi"]) == (cell.ci_lower, cell.ci_upper), (label, cell.run)


def test_kinds_at_is_failure_kinds(results: list[ragreport.EvaluationResult]) -> None:
    from ragreport.analysis.failures import NO_RELEVANT_RANK, first_relevant_rank, kinds_at

    r = results[0]
    deepest = failure_kinds(r, NO_RELEVANT_RANK - 1)
    for k in (1, 3, 10, 100):
        assert kinds_at(deepest, first_relevant_rank(r), k).tolist() == \
            failure_kinds(r, k).tolist()
    assert ExplorerState([r], targets=[]).summary_text().endswith(
        f"mean {ragreport.targets.shown(float(r.values(parse_measure('nDCG@10')).mean()))} "
        f"(run {r.run_name})")


def test_background_stats_failure_is_shown(results: list[ragreport.EvaluationResult],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure in the statistics thread does not vanish: ``error`` says it on one line and
    nothing stays pending."""
    monkeypatch.setattr(limits, "INLINE_STATS_QUERIES", 0)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no memory for the resamples\nsecond line")

    monkeypatch.setattr(stats_mod, "run_intervals", broken)
    big = Explorer(results, targets=[], measure="P", k=5)
    big.set_runs(0, 1)
    big.wait_stats(60)
    assert big.error == ("could not compute the intervals and tests: RuntimeError: "
                         "no memory for the resamples")
    assert big.summary["pending"] is False and big.compare.get("pending") is False
    assert big.summary["runs"][0]["lo"] is None  # no interval made up
    big.close()


def _many(n: int) -> list[ragreport.EvaluationResult]:
    rng = np.random.default_rng(3)
    qrels = {f"q{i:05d}": {f"d{j}": 1 for j in rng.choice(20, 2, replace=False)}
             for i in range(n)}
    return [ragreport.evaluate(qrels, {q: {f"d{j}": float(-r) for r, j in
                                           enumerate(rng.permutation(20)[:10])} for q in qrels},
                               name=name) for name in ("x", "y")]


def test_head_near_holds_the_windows_the_view_draws_next() -> None:
    """``head["near"]``: the aligned windows around the selected query and around the view's
    first row, beyond the head; each block the rows reply would give, at most ROWS_MAX."""
    s = ExplorerState(_many(3_000), targets=[], measure="RR", k=5)
    n = s.n_visible
    order = s.query_order()
    s.select_query(order[1_600])
    h = s.head(view_top=2_990)
    assert h["qid"] == order[:HEAD_ROWS]
    covered: set[int] = set()
    for block in h["near"]:
        start, m = block["start"], len(block["qid"])
        assert start % ROWS_WINDOW == 0 and 0 < m <= ROWS_MAX
        assert block == s.rows(start, start + m)
        covered.update(range(start, start + m))
    assert set(range(1_600 - 60, 1_600 + 61)) <= covered  # the selection's new place
    assert set(range(2_970, n)) <= covered  # the scroll position, clamped to the list
    assert len(covered) <= 4 * ROWS_WINDOW
    # near the top: nothing beyond the head is needed
    s.select_query(order[3])
    assert s.head()["near"] == [] and s.head(view_top=10)["near"] == []
    # no selection, a list shorter than the scroll position: the end of the list
    s.select_query("")
    s.set_filter("q0000")  # ten queries
    assert s.n_visible == 10 and s.head(view_top=2_000)["near"] == []


def test_view_top_from_the_view_sends_the_rows_there_with_the_change() -> None:
    ex = Explorer(_many(3_000), targets=[], measure="RR", k=5)
    try:
        ex.select_query("")
        version = ex.order_version
        ex.set_state({"view_top": 1_700, "k": 2})  # one comm message, as the view sends
        assert ex.order_version != version
        blocks = ex.head["near"]
        assert any(b["start"] <= 1_700 and b["start"] + len(b["qid"]) > 1_760 for b in blocks)
        assert ex.set_state({"view_top": -5}) is None and ex.head["qid"]  # clamped, harmless
    finally:
        ex.close()


def test_the_view_and_the_state_agree_on_the_window() -> None:
    js = (Path(limits.__file__).parent / "static" / "explorer.js").read_text("utf-8")
    got = re.search(r"^const WINDOW = (\d+);", js, re.M)
    assert got and int(got.group(1)) == ROWS_WINDOW and 2 * ROWS_WINDOW == ROWS_MAX


def test_background_stats_run_in_a_worker_process(results: list[ragreport.EvaluationResult],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the inline limit the resamples and tests run in a worker process (the kernel's
    GIL stays free); the numbers are those computed here."""
    import os

    from ragreport.parallel import Workers

    inline = ExplorerState(results, targets=[], measure="P", k=25)
    monkeypatch.setattr(limits, "INLINE_STATS_QUERIES", 0)
    big = Explorer(results, targets=[], measure="P", k=25)
    try:
        big.set_runs(0, 1)
        assert isinstance(big.state.workers, Workers)
        big.wait_stats(60)
        assert big.summary["pending"] is False
        inline.set_runs(0, 1)
        want = inline.summary(force=True)
        assert [(r["lo"], r["hi"]) for r in big.summary["runs"]] == \
            [(r["lo"], r["hi"]) for r in want["runs"]]
        assert big.compare["p_rand"] == inline.compare(force=True)["p_rand"]
        # the work really leaves the process
        from test_parallel import square_and_pid

        assert big.state.workers.map(square_and_pid, [3])[0] != (9, os.getpid())
    finally:
        big.close()
    assert big.state.workers is None


def test_control_characters_are_escaped_in_the_snapshot() -> None:
    """A run tag or an id with ESC, BEL or a bidirectional control reaches the static
    snapshot as escapes (as the terminal shows them), never as raw control bytes."""
    qrels = {"q\x1b[2J": {"d\x07": 1}, "q\u202e2": {"d": 1}}
    run = {"q\x1b[2J": ["d\x07"], "q\u202e2": ["d"]}
    ex = Explorer([ragreport.evaluate(qrels, run, name="t\x1b[31mred")], targets=[])
    ex.select_query("q\x1b[2J")
    page = ex._repr_mimebundle_()[0]["text/html"]
    raw = re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", page)
    assert raw is None, raw
    assert "t\\x1b[31mred" in page and "q\\x1b[2J" in page and "q\\u202e2" in page


def _synthetic(n: int, seed: int) -> list[ragreport.EvaluationResult]:
    rng = np.random.default_rng(seed)
    qrels = {f"q{i}": {f"d{j}": 1 for j in rng.choice(30, 3, replace=False)} for i in range(n)}
    out = []
    for name, skill in (("A", 0.0), ("B", 0.4)):
        run = {f"q{i}": {f"d{j}": float(rng.random() + skill * (f"d{j}" in qrels[f"q{i}"]))
                         for j in range(30)} for i in range(n)}
        out.append(ragreport.evaluate(qrels, run, ["nDCG@10"], name=name))
    return out


@pytest.mark.parametrize(("n", "settings"), [
    (600, None),  # past 500 queries the explorer drew 1,000 sign patterns, the report 10,000
    (120, {"level": 0.9, "resamples": 2_000, "seed": 7, "alpha": 0.1}),
])
def test_a_comparison_shows_the_reports_interval_and_p_value(n: int, settings: Any) -> None:
    """The explorer's paired comparison of B against A and the report's (its --max-drop
    check: the delta's interval and the p-value, Holm over one test) are one computation
    with one set of statistics settings, whatever the number of queries."""
    from ragreport.report import build_report
    from ragreport.settings import StatsSettings

    res = _synthetic(n, n)
    s = StatsSettings(**settings) if settings else StatsSettings()
    rep = build_report(res, parse_targets({"nDCG@10": {"min": 0.0}}), max_drop=0.5,
                       generated_at="2020-01-01T00:00:00", settings=s)
    [drop] = rep.drops
    state = ExplorerState(res, targets=[], measure="nDCG", k=10,
                          settings=None if settings is None else s)
    state.b = 1  # a choice can be assigned (unchecked), as before the state had parts
    got = state.compare(force=True)
    assert (got["lo"], got["hi"], got["p_rand"]) == (
        drop.delta_lower, drop.delta_upper, drop.p_value)
    # the summary's p of the one target: the same raw p-value, and Holm over a family of one
    # (the target) leaves it as it is, however many other measures the report shows
    [cell] = [c for row in rep.summary if row.measure == "nDCG@10" for c in row.cells
              if c.delta is not None]
    assert cell.family == 1 and cell.p_raw == cell.p_value == got["p_rand"] == drop.p_raw
    assert (got["level"], got["alpha"], got["resamples"]) == (s.level, s.alpha, s.resamples)
    summary = state.summary(force=True)
    assert summary["level"] == s.level and summary["resamples"] == s.resamples


def test_the_report_refuses_two_sets_of_statistics_settings() -> None:
    from ragreport.errors import RagReportError
    from ragreport.report import build_report
    from ragreport.settings import StatsSettings

    res = _synthetic(5, 1)
    with pytest.raises(RagReportError, match="either as settings= or as"):
        build_report(res, [], settings=StatsSettings(), resamples=100)
    with pytest.raises(RagReportError, match="settings must be a StatsSettings"):
        ExplorerState(res, settings={"resamples": 100})  # type: ignore[arg-type]


def test_per_query_results_give_rank_measures_past_their_curves() -> None:
    """Read from per-query files (no rankings), the explorer still moves K past the stored
    curves for the measures of the ranks (P, R, RR, AP...), with the values of the full
    result; a measure that needs the grades says the rankings are not there."""
    from ragreport.core.perquery import from_tables, to_table
    from ragreport.errors import RagReportError

    qrels = {"a": {"x": 1, "z": 2}, "b": {"y": 1}, "c": {"w": 1}}
    run = {"a": ["p", "x", "q", "r", "z"], "b": ["y", "s"], "c": ["t", "u", "v", "s", "w"]}
    full = ragreport.evaluate(qrels, run, ["P@1", "nDCG@3"], k_max=3)
    [back] = from_tables([to_table(full)])
    state = ExplorerState([back], targets=[], measure="P", k=5)  # past the 3 stored
    for fam in ("P", "R", "F1", "HitRate", "RR", "AP"):
        assert state.values(0, Measure(fam), 5).tolist() == \
            full.values(f"{fam}@5").tolist()
    with pytest.raises(RagReportError, match="per-query results hold no rankings"):
        state.values(0, Measure("nDCG"), 5)


def test_the_states_parts_share_its_inputs_and_choices(results: list[ragreport.EvaluationResult]
                                                       ) -> None:
    """Assigning a choice or ``stats_inline`` reaches every part; the inputs are read-only
    (the parts share them)."""
    s = ExplorerState(results, targets=[], measure="P", k=5)
    s.k = 7
    assert s.selection.k == 7 and s.summary()["label"] == "P@7"
    s.stats_inline = False
    s.set_k(9)  # an interval not computed yet: left for the background
    assert s.stats.inline is False and s.summary()["pending"] is True
    s.stats_inline = True
    assert s.summary()["pending"] is False
    with pytest.raises(AttributeError):
        s.docs = {"d": "x"}  # type: ignore[misc]
    assert s.results is s.inputs.results and s.settings is s.stats.settings


def test_a_script_that_builds_a_large_explorer_and_exits_prints_nothing(tmp_path: Path) -> None:
    """Above the inline limit the explorer starts its statistics worker; a script that exits
    right away ends without a traceback from the thread starting the worker processes."""
    script = tmp_path / "build.py"
    script.write_text(
        "import numpy as np\nimport ragreport\n"
        "rng = np.random.default_rng(3)\n"
        "qrels = {f'q{i:05d}': {f'd{j}': 1 for j in rng.choice(20, 2, replace=False)}\n"
        "         for i in range(800)}\n"
        "runs = [ragreport.evaluate(qrels, {q: {f'd{j}': float(-r) for r, j in\n"
        "        enumerate(rng.permutation(20)[:10])} for q in qrels}, name=n) for n in 'xy']\n"
        "ex = ragreport.Explorer(runs)\nex.set_k(5)\nprint('built')\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=False, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "built\n", done.stderr
    assert done.stderr == ""


def test_the_pending_comparison_already_counts_wins_losses_and_ties(
        results: list[ragreport.EvaluationResult], monkeypatch: pytest.MonkeyPatch) -> None:
    """While the paired tests of a large evaluation are pending, the comparison's counts are
    the real ones (the view said "B better on 0, worse on 0, tied on 0" as if it were data):
    they need no resampling, and equal the test's once it ran."""
    monkeypatch.setattr(limits, "INLINE_STATS_QUERIES", 0)
    s = ExplorerState(results, targets=[], measure="P", k=5)
    pending = s.compare()
    assert pending["pending"] is True and pending["p_rand"] is None
    done = s.compare(force=True)
    assert (pending["wins"], pending["losses"], pending["ties"]) == (
        done["wins"], done["losses"], done["ties"])
    assert pending["wins"] + pending["losses"] + pending["ties"] == pending["n"] > 0


def test_no_fails_column_when_every_query_fails() -> None:
    """A "fails a target" mark on every row tells nothing: the rows carry none and the head
    says so (the list's filter is then off); with targets some queries pass, they do."""
    files = example_files()
    results = [ragreport.evaluate(files.qrels, r) for r in files.runs]
    s = ExplorerState(results)  # the seed's targets: every query of the example fails one
    assert bool(s.fails().all()) and s.head()["fails_all"] is True
    assert "fails" not in s.rows(0, 10) and "fails" not in s.head()
    mixed = ExplorerState(results, targets=files.targets)
    rows = mixed.rows(0, 41)
    assert mixed.head()["fails_all"] is False and 0 < sum(rows["fails"]) < len(rows["fails"])


def test_a_report_that_fails_unexpectedly_never_leaves_the_button_busy(
        ex: Explorer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Written in a thread: any error, not only a refused path, ends in the error state the
    view shows (and a message), never a button busy for ever."""
    monkeypatch.chdir(tmp_path)
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(ex, "send", lambda msg, buffers=None: sent.append(msg))

    def broken(path: Any) -> Any:
        raise ValueError("a template that does not render")

    monkeypatch.setattr(ex.state, "write_report", broken)
    [r] = ex.handle_message({"type": "report", "id": 5})
    assert r["state"] == "busy"
    ex.wait_report(60)
    assert ex.report["state"] == "error"
    assert "ValueError: a template that does not render" in ex.report["message"]
    assert sent and sent[-1]["state"] == "error"


def test_rows_carry_the_unjudged_range_of_the_queries_it_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each row's [lower, upper] at the current measure and K when its unjudged documents
    change the value (the exact bounds: nDCG can go down), null otherwise; for a large run of
    a large evaluation, once the background computed them (the list's version moves on)."""
    from ragreport.explorer import limits

    qrels = {"q1": {"a": 1}, "q2": {"a": 1, "b": 0}, "q3": {"a": 2, "b": 1}}
    run = {"q1": ["x", "a"], "q2": ["a", "b"], "q3": ["a", "y", "b"]}
    results = [ragreport.evaluate(qrels, run, name="r")]
    s = ExplorerState(results, targets=[], measure="nDCG", k=3)
    rows = s.rows(0, 3)
    got = dict(zip(rows["qid"], rows["unjudged"], strict=True))
    bounds = ragreport.unjudged_bounds(qrels, run, ["nDCG@3"])
    lo, hi = bounds.values("nDCG@3")
    want = {q: [float(a), float(b)] if a != b else None
            for q, a, b in zip(bounds.query_ids, lo.tolist(), hi.tolist(), strict=True)}
    assert got == want and got["q2"] is None and got["q1"] is not None
    monkeypatch.setattr(limits, "UNJUDGED_ROWS", 2)
    monkeypatch.setattr(limits, "INLINE_STATS_QUERIES", 2)
    big = ExplorerState(results, targets=[], measure="nDCG", k=3)
    assert "unjudged" not in big.rows(0, 3) and not big.new_tags()
    version = big.order_version
    big.compute_stats()  # what the background does
    assert big.new_tags() and big.order_version == version + 1 and not big.new_tags()
    assert dict(zip(big.rows(0, 3)["qid"], big.rows(0, 3)["unjudged"], strict=True)) == want
    ex = Explorer(results, targets=[], measure="nDCG", k=3)
    assert "unjudged" not in ex.head
    ex.wait_stats(60)
    assert dict(zip(ex.head["qid"], ex.head["unjudged"], strict=True)) == want
    ex.close()
