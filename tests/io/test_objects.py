"""Python objects and JSON/JSONL inputs: empty result lists, a query listed twice, sets as
ranked lists, and the reading of numbers (issue 12).

Legal inputs are compared with pytrec_eval, query by query.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragreport
from ragreport import RetrievalEvaluator, evaluate_multiple_queries
from ragreport.diagnose import FAILURE_KINDS, failure_kinds
from ragreport.errors import InputError, RagReportError
from ragreport.io.objects import read_number
from ragreport.textout import format_trec

pytrec_eval = pytest.importorskip("pytrec_eval")

#: ragreport measure -> pytrec_eval (trec_eval) measure
PEERS = {"AP": "map", "nDCG": "ndcg", "RR": "recip_rank", "Rprec": "Rprec", "P@5": "P_5",
         "nDCG@10": "ndcg_cut_10", "R@5": "recall_5", "NumRet": "num_ret",
         "NumRel": "num_rel", "NumRelRet": "num_rel_ret"}

QRELS = {"q1": {"d1": 1, "d2": 2, "d4": 0}, "q2": {"d3": 1, "d8": 3}, "q3": {"d7": 1}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d9": 1.0}, "q2": {}, "q3": {"d6": 1.0, "d7": 0.25}}


def peer(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
         ) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values, keyed by ragreport's measure names."""
    families = {v.rsplit("_", 1)[0] if v[-1].isdigit() else v for v in PEERS.values()}
    out = pytrec_eval.RelevanceEvaluator(qrels, families).evaluate(run)
    return {q: {m: vals[p] for m, p in PEERS.items()} for q, vals in out.items()}


def assert_like_peer(result: ragreport.EvaluationResult,
                     qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> None:
    expected = peer(qrels, run)
    assert sorted(result.query_ids) == sorted(expected)
    for m in PEERS:
        got = result.per_query(m)
        for q, values in expected.items():
            assert got[q] == pytest.approx(values[m], abs=1e-12), (m, q)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# ---- a query listed with an empty result list --------------------------------------------------

def _records(empty: Any) -> list[dict[str, Any]]:
    return [{"query_id": q, "retrieved": (empty if q == "q2" else
                                          [d for d, _ in sorted(docs.items(),
                                                                key=lambda x: -x[1])])}
            for q, docs in RUN.items()]


EMPTY_FORMS: dict[str, Callable[[Path], Any]] = {
    "dict-empty-dict": lambda tmp: {**RUN, "q2": {}},
    "dict-empty-list": lambda tmp: {**RUN, "q2": []},
    "dict-empty-tuple": lambda tmp: {**RUN, "q2": ()},
    "seed-records": lambda tmp: _records([]),
    "jsonl-empty-list": lambda tmp: _write(tmp, "r.jsonl", _jsonl(_records([]))),
    "jsonl-empty-map": lambda tmp: _write(tmp, "r.jsonl", _jsonl(_records({}))),
    "jsonl-map-lines": lambda tmp: _write(tmp, "r.jsonl", "".join(
        json.dumps({q: d}) + "\n" for q, d in RUN.items())),
    "json-document": lambda tmp: _write(tmp, "r.json", json.dumps(RUN, indent=2)),
    "json-records": lambda tmp: _write(tmp, "r.json", json.dumps(_records([]), indent=1)),
}


@pytest.mark.parametrize("form", list(EMPTY_FORMS), ids=list(EMPTY_FORMS))
def test_an_empty_result_list_is_an_evaluated_query_scoring_zero(form: str,
                                                                 tmp_path: Path) -> None:
    run = EMPTY_FORMS[form](tmp_path)
    loaded = ragreport.load_run(run)
    assert loaded.empty_queries == ("q2",)
    r = ragreport.evaluate(QRELS, run, list(PEERS))
    assert r.query_ids == ["q1", "q2", "q3"]
    assert r.counts.evaluated == 3
    assert r.counts.empty_retrievals == 1
    assert r.counts.run_only == 0 and r.counts.qrels_only == 0
    assert all(r.per_query(m)["q2"] == 0.0 for m in PEERS if m != "NumRel")
    assert r.per_query("NumRel")["q2"] == 2
    # the mean counts it (it used to be dropped, which raised the mean)
    assert r.mean("RR") == pytest.approx((1 + 0 + 1 / 2) / 3)
    assert_like_peer(r, QRELS, RUN)


def test_every_consumer_sees_the_empty_query() -> None:
    r = ragreport.evaluate(QRELS, RUN, ["P@5", "nDCG@10", "AP"])
    assert r.ranked_list("q2") == []
    assert r.ranked_list("q2", limit=3) == []
    assert sorted(r.missing_relevant("q2")) == [("d3", 1.0), ("d8", 3.0)]
    assert r.query("q2") == {"P@5": 0.0, "nDCG@10": 0.0, "AP": 0.0}
    assert r.to_dict(per_query=True)["per_query"]["q2"] == {"P@5": 0.0, "nDCG@10": 0.0,
                                                            "AP": 0.0}
    assert r.to_dict()["counts"]["empty_retrievals"] == 1
    kinds = [FAILURE_KINDS[int(c)] for c in failure_kinds(r, 5)]
    assert kinds[1] == "empty retrieval"
    assert r.curve("P")[1].tolist() == [0.0] * r.k_max
    # trec_eval layout: pytrec_eval evaluates the query (test_empty), so -q prints its rows
    rows = [ln.split("\t") for ln in format_trec(r, per_query=True).splitlines()]
    assert [(m.strip(), v) for m, q, v in rows if q == "q2"] == [
        ("P_5", "0.0000"), ("ndcg_cut_10", "0.0000"), ("map", "0.0000")]
    assert ("num_q", "3") in [(m.strip(), v) for m, q, v in rows if q == "all"]


def test_a_run_whose_queries_are_all_empty_is_legal(tmp_path: Path) -> None:
    run: dict[str, Any] = {"q1": [], "q2": {}, "q3": []}
    r = ragreport.evaluate(QRELS, run, list(PEERS))
    assert r.counts.evaluated == 3 and r.counts.empty_retrievals == 3
    assert_like_peer(r, QRELS, {q: {} for q in run})
    assert all(v == 0 for m in PEERS if m != "NumRel" for v in r.values(m))
    p = _write(tmp_path, "r.jsonl", '{"query_id": "q1", "retrieved": []}\n')
    r = ragreport.evaluate(QRELS, p, ["P@5", "RR"])
    assert r.query_ids == ["q1"] and r.means() == {"P@5": 0.0, "RR": 0.0}
    assert r.ranking.run.doc_ids.to_pylist() == []


def test_an_empty_query_the_qrels_do_not_know_is_run_only() -> None:
    r = ragreport.evaluate(QRELS, {**RUN, "q9": [], "q0": {}}, ["P@5"])
    assert r.query_ids == ["q1", "q2", "q3"]
    assert r.counts.run_only == 2 and r.counts.run_queries == 5
    assert r.ranking.run_only_ids == ["q0", "q9"]
    with pytest.raises(InputError, match=r"no query in common \(run has 'q9'"):
        ragreport.evaluate(QRELS, {"q9": []}, ["P@5"])


def test_empty_queries_with_complete_max_depth_and_no_relevant() -> None:
    run = {"q1": RUN["q1"], "q2": {}}  # q3 is qrels-only
    r = ragreport.evaluate(QRELS, run, ["P@5", "AP"], complete=True)
    assert r.query_ids == ["q1", "q2", "q3"]
    assert r.counts.empty_retrievals == 2 and r.counts.qrels_only == 1
    assert r.per_query("AP") == {"q1": 1.0, "q2": 0.0, "q3": 0.0}
    r = ragreport.evaluate(QRELS, run, ["P@5", "AP"], max_depth=1)
    assert r.per_query("P@5") == {"q1": 0.2, "q2": 0.0}
    assert r.counts.empty_retrievals == 1
    # an empty query without a relevant judgment: scored 0 or skipped, as any such query
    qrels = {**QRELS, "q4": {"d1": 0}}
    run = {**RUN, "q4": {}}
    r = ragreport.evaluate(qrels, run, ["AP"])
    assert r.per_query("AP")["q4"] == 0.0 and r.counts.no_relevant == 1
    assert_like_peer(ragreport.evaluate(qrels, run, list(PEERS)), qrels, run)
    r = ragreport.evaluate(qrels, run, ["AP"], no_relevant="skip")
    assert "q4" not in r.query_ids and r.counts.skipped_no_relevant == 1
    assert r.counts.empty_retrievals == 1


def test_an_empty_judgment_list_judges_nothing_like_pytrec_eval() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {}}
    run = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
    r = ragreport.evaluate(qrels, run, list(PEERS))
    assert r.query_ids == ["q1"] and r.counts.run_only == 1
    assert_like_peer(r, qrels, run)
    with pytest.raises(InputError, match="no judgments found"):
        ragreport.load_qrels({"q1": {}})


def test_seed_api_and_evaluate_agree_on_empty_retrieved_lists() -> None:
    cases = [{"query_id": "a", "retrieved": [1, 3, 5, 7, 9], "relevant": [3, 7, 12]},
             {"query_id": "b", "retrieved": [], "relevant": [4, 6]},
             {"query_id": "c", "retrieved": [1, 2, 3, 4, 5], "relevant": [1, 3]}]
    ev = RetrievalEvaluator(k=5)
    seed = evaluate_multiple_queries(ev, cases)
    r = ragreport.evaluate(cases, cases, ["R@5", "P@5", "F1@5", "RR", "nDCG@5"],
                           order="given")
    assert r.counts.empty_retrievals == 1
    assert list(seed.values()) == pytest.approx(list(r.means().values()), abs=1e-15)
    assert seed["mrr"] == pytest.approx((1 / 2 + 0 + 1) / 3)
    assert ev.evaluate_all([], [1, 2]) == dict.fromkeys(seed, 0.0)


# ---- a query listed twice ----------------------------------------------------------------------

def test_a_query_twice_in_python_objects_names_both_places() -> None:
    with pytest.raises(InputError) as info:
        ragreport.load_run({1: ["a"], "1": ["b"]})
    assert str(info.value) == ("run (dict): query '1' is listed twice (key 1 and key '1'); "
                               "list each query once")
    with pytest.raises(InputError) as info:
        ragreport.load_run([{"query_id": "a", "retrieved": ["x"]},
                            {"query_id": "b", "retrieved": []},
                            {"query_id": "a", "retrieved": []}])
    assert str(info.value) == ("run (list): query 'a' is listed twice (record 0 and record 2); "
                               "list each query once")
    with pytest.raises(InputError, match=r"query 'q' is listed twice \(record 0 and record 1"):
        ragreport.load_qrels([{"qid": "q", "relevant": ["x"]}, {"qid": "q", "relevant": []}])


def test_a_query_twice_in_jsonl_names_both_lines(tmp_path: Path) -> None:
    text = ('{"query_id": "q1", "retrieved": ["a"]}\n{"query_id": "q2", "retrieved": []}\n\n'
            '{"query_id": "q1", "retrieved": []}\n')
    p = _write(tmp_path, "r.jsonl", text)
    with pytest.raises(InputError) as info:
        ragreport.load_run(p)
    assert str(info.value) == (f"{p}:4: query 'q1' is listed twice (line 1 and line 4); "
                               "list each query once")
    assert info.value.line == 4
    p = _write(tmp_path, "q.jsonl", '{"q1": {"a": 1}}\n{"query_id": "q1", "relevant": ["b"]}\n')
    with pytest.raises(InputError, match=r"q.jsonl:2: query 'q1' is listed twice \(line 1 and "
                                         r"line 2\)"):
        ragreport.load_qrels(p)
    p = _write(tmp_path, "m.jsonl", '{"q1": ["a"], "q2": [], "q1": ["b"]}\n')
    with pytest.raises(InputError, match=r"m.jsonl:1: query 'q1' is listed twice on line 1;"):
        ragreport.load_run(p)


def test_a_query_twice_in_a_json_document_names_both_lines(tmp_path: Path) -> None:
    p = _write(tmp_path, "r.json", '{\n "q1": {"a": 1},\n "q2": {"q1": 1},\n "q1": {"c": 2}\n}\n')
    with pytest.raises(InputError) as info:
        ragreport.load_run(p)
    assert str(info.value) == (f"{p}:4: query 'q1' is listed twice (line 2 and line 4); "
                               "list each query once")
    p = _write(tmp_path, "r2.json", '[\n {"query_id": "q1", "retrieved": ["a"]},\n'
               ' {"query_id": "q2",\n  "retrieved": []},\n {"query_id": "q1", "retrieved": []}\n]')
    with pytest.raises(InputError) as info:
        ragreport.load_run(p)
    assert str(info.value) == (f"{p}:5: query 'q1' is listed twice (record 0 (line 2) and "
                               "record 2 (line 5)); list each query once")


def test_repeated_keys_below_the_query_are_never_merged(tmp_path: Path) -> None:
    p = _write(tmp_path, "r.jsonl", '{"query_id": "q1", "retrieved": {"a": 2, "b": 3, "a": 1}}\n')
    with pytest.raises(InputError, match=r"r.jsonl:1: document 'a' appears twice for query "
                                         r"'q1' \(first at line 1\)"):
        ragreport.evaluate({"q1": {"a": 1}}, p, ["P@1"])
    r = ragreport.evaluate({"q1": {"a": 1}}, p, ["P@1"], duplicates="first")
    assert [(d.doc_id, d.score) for d in r.ranked_list("q1")] == [("b", 3.0), ("a", 2.0)]
    p = _write(tmp_path, "q.jsonl", '{"q1": {"a": 1, "a": 0}}\n')
    with pytest.raises(InputError, match="document 'a' is judged twice for query 'q1'"):
        ragreport.evaluate(p, {"q1": ["a"]}, ["P@1"])
    p = _write(tmp_path, "f.jsonl", '{"query_id": "q1", "query_id": "q2", "retrieved": ["a"]}\n')
    with pytest.raises(InputError, match=r"f.jsonl:1: a record has the field 'query_id' twice"):
        ragreport.load_run(p)


# ---- sets ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("ranked", [{"a", "b"}, frozenset({"a"})], ids=["set", "frozenset"])
def test_a_set_is_not_a_ranked_list(ranked: Any) -> None:
    kind = type(ranked).__name__
    with pytest.raises(InputError, match=rf"^run \(dict\): the ranked list of query 'q1' is a "
                                         rf"{kind}, whose order is undefined"):
        ragreport.load_run({"q1": ranked})
    with pytest.raises(InputError, match=rf"is a {kind}, whose order is undefined"):
        ragreport.load_run([{"query_id": "q1", "retrieved": ranked}])
    with pytest.raises(RagReportError, match=rf"^retrieved is a {kind}, whose order"):
        RetrievalEvaluator(k=2).evaluate_all(ranked, ["a"])
    with pytest.raises(RagReportError, match=rf"^test case 1: 'retrieved' is a {kind}"):
        evaluate_multiple_queries(RetrievalEvaluator(k=2), [
            {"retrieved": ["a"], "relevant": ["a"]}, {"retrieved": ranked, "relevant": ["a"]}])


def test_a_set_of_relevant_ids_is_fine() -> None:
    as_set = ragreport.evaluate({"q1": {"a", "c"}}, {"q1": ["b", "c", "a"]}, ["AP", "P@2"])
    as_list = ragreport.evaluate({"q1": ["a", "c"]}, {"q1": ["b", "c", "a"]}, ["AP", "P@2"])
    assert as_set.means() == as_list.means() == {"AP": pytest.approx((1 / 2 + 2 / 3) / 2),
                                                 "P@2": 0.5}
    ev = RetrievalEvaluator(k=3)
    assert ev.evaluate_all(["b", "c", "a"], {"a", "c"}) == ev.evaluate_all(["b", "c", "a"],
                                                                          ["a", "c"])
    with pytest.raises(RagReportError, match="relevant must be a list of ids, got str"):
        ev.evaluate_all(["a"], "a")


# ---- numbers ------------------------------------------------------------------------------------

BAD_SCORES = [
    (float("nan"), "score nan of document 'd1' (query 'q1') is not a finite number"),
    (float("-inf"), "score -inf of document 'd1' (query 'q1') is not a finite number"),
    (np.float64("nan"), "is not a finite number"),
    (True, "score True of document 'd1' (query 'q1') is not a number (a boolean)"),
    (np.bool_(False), "is not a number (a boolean)"),
    ("1_000", "score '1_000' of document 'd1' (query 'q1') is not a plain decimal number"),
    ("0x10", "score '0x10' of document 'd1' (query 'q1') is not a number"),
    ("nan", "score 'nan' of document 'd1' (query 'q1') is not a finite number"),
    ("1e400", "score '1e400' of document 'd1' (query 'q1') is not a finite number"),
    ("١٢", "is not a plain decimal number"),  # Arabic-Indic digits: float() reads them
    (" 4", "score ' 4' of document 'd1' (query 'q1') is not a plain decimal number"),
    (10 ** 400, "score (an integer of 401 digits) of document 'd1' (query 'q1') is not a "
                "finite number (too large for a float64)"),
    (10 ** 5000, "score (an integer of over 4000 digits) of document 'd1'"),
    (None, "score None of document 'd1' (query 'q1') is not a number"),
    ([1], "score [1] of document 'd1' (query 'q1') is not a number"),
]


@pytest.mark.parametrize(("value", "message"), BAD_SCORES, ids=[str(i) for i in
                                                                range(len(BAD_SCORES))])
def test_bad_scores_in_python_objects(value: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        ragreport.load_run({"q1": {"d1": value}})
    assert str(info.value).startswith("run (dict): ")
    assert message in str(info.value)


@pytest.mark.parametrize("value", [True, "1_000", float("nan"), "inf", 2 ** 53, -(2.0 ** 53),
                                   "9007199254740993", "1e3", None])
def test_bad_grades_in_python_objects(value: Any) -> None:
    with pytest.raises(InputError, match=r"^qrels \(dict\): grade .* of document 'd1' "
                                         r"\(query 'q1'\) (is|is not) "):
        ragreport.load_qrels({"q1": {"d1": value}})


@pytest.mark.parametrize(("value", "score"), [
    (np.float32(0.5), 0.5), (np.int64(3), 3.0), (np.uint8(7), 7.0), ("2.5", 2.5), ("-.5", -0.5),
    ("+3.", 3.0), ("1E5", 1e5), (10 ** 20, 1e20), (-7, -7.0)])
def test_legal_scores(value: Any, score: float) -> None:
    assert ragreport.load_run({"q1": {"d1": value}}).scores.tolist() == [score]


@pytest.mark.parametrize(("value", "default", "fractional"), [
    (1.7, 1.0, 1.7), (-1.7, -1.0, -1.7), ("2.0", 2.0, 2.0), ("1.9", 1.0, 1.9), (0.5, 0.0, 0.5),
    (np.float32(2.5), 2.0, 2.5), (3, 3.0, 3.0), (1e3, 1000.0, 1000.0), ("-0.5", 0.0, -0.5)])
def test_grades_are_read_as_trec_eval_reads_them(value: Any, default: float,
                                                 fractional: float) -> None:
    assert ragreport.load_qrels({"q1": {"d1": value}}).grades.tolist() == [default]
    assert ragreport.load_qrels({"q1": {"d1": value}},
                                fractional_grades=True).grades.tolist() == [fractional]


def test_read_number_directly() -> None:
    assert read_number("7") == 7.0
    assert read_number("1e3", "grade", fractional=True) == 1000.0
    with pytest.raises(ValueError, match="exponent notation"):
        read_number("1e3", "grade")
    with pytest.raises(ValueError, match="below 2\\*\\*53"):
        read_number(2.0 ** 60, "grade", fractional=True)


JSONL_BAD = [
    ('{"query_id": "q1", "retrieved": {"a": 1, "b": "1_000"}}',
     "score '1_000' of document 'b' (query 'q1') is not a plain decimal number"),
    ('{"query_id": "q1", "retrieved": {"a": "0x10"}}', "score '0x10' of document 'a'"),
    ('{"query_id": "q1", "retrieved": {"a": Infinity}}',
     "score inf of document 'a' (query 'q1') is not a finite number"),
    ('{"query_id": "q1", "retrieved": {"a": 1e400}}',
     "score inf of document 'a' (query 'q1') is not a finite number"),
    ('{"query_id": "q1", "retrieved": {"a": 1' + "0" * 400 + "}}",
     "score (an integer of 401 digits) of document 'a' (query 'q1') is not a finite number"),
    ('{"query_id": "q1", "retrieved": {"a": true}}',
     "score True of document 'a' (query 'q1') is not a number (a boolean)"),
    ('{"query_id": "q1", "retrieved": [{"doc_id": "a", "score": [2]}, "b"]}',
     "score [2] of document 'a' (query 'q1') is not a number"),
    ('{"query_id": "q1", "retrieved": [1.5, 2]}',
     "document id must be a string or an integer, got 1.5"),
]


@pytest.mark.parametrize(("line", "message"), JSONL_BAD, ids=[str(i) for i in
                                                              range(len(JSONL_BAD))])
def test_bad_numbers_in_jsonl_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    p = _write(tmp_path, "r.jsonl", '{"query_id": "q0", "retrieved": ["x"]}\n' + line + "\n")
    with pytest.raises(InputError) as info:
        ragreport.load_run(p)
    assert str(info.value).startswith(f"{p}:2: ")
    assert message in str(info.value)


def test_json_grades(tmp_path: Path) -> None:
    p = _write(tmp_path, "q.jsonl", '{"query_id": "q1", "relevant": {"a": 1.9, "b": 2.0, '
                                    '"c": -1.5, "d": 12345678901234567890}}\n')
    with pytest.raises(InputError, match=r"q.jsonl:1: grade 12345678901234567890 of document "
                                         r"'d' \(query 'q1'\) is too large for a grade"):
        ragreport.load_qrels(p)
    p = _write(tmp_path, "q.jsonl", '{"query_id": "q1", "relevant": {"a": 1.9, "b": 2.0, '
                                    '"c": -1.5, "d": 1e1}}\n')
    with pytest.raises(InputError, match=r"grade 1e1 of document 'd' \(query 'q1'\) is in "
                                         r"exponent notation"):
        ragreport.load_qrels(p)
    p = _write(tmp_path, "q.jsonl", '{"query_id": "q1", "relevant": {"a": 1.9, "b": 2.0, '
                                    '"c": -1.5, "d": 3}}\n')
    assert ragreport.load_qrels(p).grades.tolist() == [1.0, 2.0, -1.0, 3.0]
    assert ragreport.load_qrels(p, fractional_grades=True).grades.tolist() == [1.9, 2.0, -1.5,
                                                                              3.0]


def test_fractional_grades_through_evaluate_and_conventions() -> None:
    qrels = {"q1": {"a": 1.5, "b": 0.5, "c": 2.7}}
    run = {"q1": ["b", "a", "c"]}
    r = ragreport.evaluate(qrels, run, ["nDCG", "P@3"])
    # grades 1, 0, 2 as trec_eval reads them: the same numbers as pytrec_eval's integers
    ints = {"q1": {"a": 1, "b": 0, "c": 2}}
    expected = pytrec_eval.RelevanceEvaluator(ints, {"ndcg", "P"}).evaluate(
        {"q1": {"b": 3.0, "a": 2.0, "c": 1.0}})["q1"]
    assert r.mean("nDCG") == pytest.approx(expected["ndcg"], abs=1e-12)
    assert r.mean("P@3") == pytest.approx(2 / 3)
    assert r.conventions.fractional_grades is False
    assert "as trec_eval reads them" in r.conventions.describe()["grades"]
    f = ragreport.evaluate(qrels, run, ["nDCG", "P@3"], fractional_grades=True)
    assert f.conventions.fractional_grades is True
    assert "fractional" in f.conventions.describe()["grades"]
    assert f.mean("P@3") == pytest.approx(2 / 3)  # b (0.5) is below rel_level 1
    gains = [0.5, 1.5, 2.7]
    dcg = sum(g / np.log2(i + 2) for i, g in enumerate(gains))
    idcg = sum(g / np.log2(i + 2) for i, g in enumerate(sorted(gains, reverse=True)))
    assert f.mean("nDCG") == pytest.approx(dcg / idcg, abs=1e-12)
    assert f.to_dict()["conventions"]["fractional_grades"] is True
    with pytest.raises(RagReportError, match="fractional_grades must be True or False"):
        ragreport.evaluate(qrels, run, ["P@3"], fractional_grades="yes")  # type: ignore[arg-type]


def test_errors_in_a_json_document_name_the_line_of_the_entry(tmp_path: Path) -> None:
    p = _write(tmp_path, "r.json", '[\n {"query_id": "q1", "retrieved": ["a"]},\n'
               ' "q2",\n {"query_id": "q3", "retrieved": []}\n]\n')
    with pytest.raises(InputError) as info:
        ragreport.load_run(p)
    assert str(info.value) == (f"{p}:3: expected an object with 'retrieved' and/or 'relevant', "
                               "got str")
    p = _write(tmp_path, "q.json", '{\n "q1": {"a": 1},\n "q2": {"a": 2,\n   "b": true}\n}\n')
    with pytest.raises(InputError) as info:
        ragreport.load_qrels(p)
    # the line where the query's entry starts
    assert str(info.value) == (f"{p}:3: grade True of document 'b' (query 'q2') is not a "
                               "number (a boolean)")
    # the same documents read without an error: no line lookup, same rows
    p = _write(tmp_path, "ok.json", '{\n "q1": {"a": 1},\n "q2": {"a": 2,\n   "b": 0}\n}\n')
    assert ragreport.load_qrels(p).grades.tolist() == [1.0, 2.0, 0.0]
