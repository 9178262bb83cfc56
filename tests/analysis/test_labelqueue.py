"""The label queue: each candidate's gain checked by brute force (the runs evaluated with that
one document read as relevant), the order, the budget and the per-query cap, and the three
file formats."""

from __future__ import annotations

import csv
import io
import json
import random

import numpy as np
import pytest

import ragreport
from ragreport.analysis.labelqueue import label_queue_of
from ragreport.report.labelqueue import queue_format, render_label_queue

MEASURES = ["P@3", "nDCG@5", "R@4", "RR", "AP", "F1@2", "HitRate@3"]


def random_case(seed: int) -> tuple[dict, list[dict]]:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(9)]
    qrels = {f"q{q}": {d: rng.choice([0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 4))}
             for q in range(4)}
    runs = [{q: {d: float(rng.randint(0, 4)) for d in rng.sample(docs, rng.randint(1, 7))}
             for q in qrels} for _ in range(2)]
    return qrels, runs


def brute_gain(qrels: dict, runs: list[dict], q: str, d: str, grade: float,
               measures: list[str]) -> tuple[dict[str, float], float]:
    """Per measure the change of the runs' means with (q, d) read as relevant, summed over
    the runs; and the sum of the changes' sizes over runs and measures."""
    filled = {k: dict(v) for k, v in qrels.items()}
    filled[q][d] = grade
    out = dict.fromkeys(measures, 0.0)
    size = 0.0
    for run in runs:
        before = ragreport.evaluate(qrels, run, measures)
        after = ragreport.evaluate(filled, run, measures)
        for m in measures:
            out[m] += after.mean(m) - before.mean(m)
            size += abs(after.mean(m) - before.mean(m))
    return out, size


@pytest.mark.parametrize("seed", range(25))
def test_every_gain_is_the_brute_force_change_of_the_means(seed: int) -> None:
    qrels, runs = random_case(seed)
    results = [ragreport.evaluate(qrels, r, MEASURES, name=f"r{i}") for i, r in enumerate(runs)]
    queue = label_queue_of(results, [ragreport.parse_measure(m) for m in MEASURES],
                           budget=10_000, max_rank=9)
    grade = max(g for j in qrels.values() for g in j.values())
    assert queue.grade == max(grade, 1)
    seen = set()
    for item in queue.items:
        want, size = brute_gain(qrels, runs, item.query_id, item.doc_id, queue.grade,
                                MEASURES)
        assert item.effects == pytest.approx(want, abs=1e-12)
        assert item.gain == pytest.approx(size, abs=1e-12) and item.gain > 0
        seen.add((item.query_id, item.doc_id))
    # every unjudged retrieved document left out changes nothing (RR and AP see all depths)
    for run in runs:
        for q, ranked in run.items():
            for d in ranked:
                if d not in qrels[q] and (q, d) not in seen:
                    assert brute_gain(qrels, runs, q, d, queue.grade,
                                      MEASURES)[1] == pytest.approx(0, abs=1e-12)
    gains = [i.gain for i in queue.items]
    assert gains == sorted(gains, reverse=True)


def test_budget_per_query_cap_and_order() -> None:
    qrels = {f"q{i}": {"rel": 1} for i in range(3)}
    run = {"q0": ["a", "b", "c", "rel"], "q1": ["rel", "x", "y"], "q2": ["z", "rel"]}
    queue = ragreport.label_queue(qrels, run, "P@3", budget=3)
    # P@3: each unjudged document in the top 3 moves the mean by 1/3/3
    assert queue.pairs() == [("q0", "a"), ("q2", "z"), ("q0", "b")]  # ties: rank, then id
    assert queue.candidates == 6 and queue.useful == 6 and len(queue) == 3
    capped = ragreport.label_queue(qrels, run, "P@3", budget=10, per_query=1)
    assert capped.pairs() == [("q0", "a"), ("q2", "z"), ("q1", "x")]


def test_a_document_below_every_cutoff_is_never_proposed() -> None:
    queue = ragreport.label_queue({"q": {"a": 1}}, {"q": ["a", "b", "c"]}, ["P@1", "P@2"])
    assert queue.pairs() == [("q", "b")] and queue.candidates == 1  # c: rank 3
    # b read as relevant at rank 2 leaves nDCG@2 at 1 (the ideal gains it too): no gain
    assert len(ragreport.label_queue({"q": {"a": 1}}, {"q": ["a", "b"]}, "nDCG@2")) == 0


def test_max_rank_limits_where_candidates_are_looked_for(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ragreport.analysis import labelqueue

    qrels = {"q": {"rel": 1}}
    run = {"q": [f"u{i}" for i in range(30)] + ["rel"]}
    assert len(ragreport.label_queue(qrels, run, "AP", budget=100)) == 20  # the default
    assert len(ragreport.label_queue(qrels, run, "AP", budget=100, max_rank=25)) == 25
    # in chunks of any size: the same queue
    whole = ragreport.label_queue(qrels, run, ["AP", "RR"], budget=100, max_rank=30)
    monkeypatch.setattr(labelqueue, "CHUNK_ROWS", 40)
    chunked = ragreport.label_queue(qrels, run, ["AP", "RR"], budget=100, max_rank=30)
    assert chunked.items == whole.items and len(whole) == 30


def test_a_run_with_no_unjudged_document_gives_an_empty_queue() -> None:
    queue = ragreport.label_queue({"q": {"a": 1, "b": 0}}, {"q": ["a", "b"]}, "P@2")
    assert len(queue) == 0 and queue.candidates == 0


def test_texts_from_the_queries_and_docs() -> None:
    queue = ragreport.label_queue({"q": {"a": 1}}, {"q": ["x", "a"]}, "P@1",
                                  queries={"q": "what is x?"}, docs={"x": "x is <b>"})
    assert queue.query_texts == {"q": "what is x?"} and queue.doc_texts == {"x": "x is <b>"}


@pytest.mark.parametrize("kwargs, message", [
    ({"budget": 0}, r"budget must be an integer >= 1, got 0"),
    ({"budget": 1.5}, r"budget must be an integer >= 1, got 1\.5"),
    ({"per_query": 0}, r"per_query must be an integer >= 1, got 0"),
    ({"max_rank": -1}, r"max_rank must be an integer >= 1, got -1"),
    ({"measures": "NumRet"}, r"at least one bounded measure"),
    ({"grade": 0}, r"grade must be at least rel_level \(1\)"),
    ({"names": ["a", "b"]}, r"names must name every run: 2 names for 1 runs"),
])
def test_bad_arguments_are_refused(kwargs: dict, message: str) -> None:
    kw = {"measures": "P@1", **kwargs}
    with pytest.raises(ragreport.RagReportError, match=message):
        ragreport.label_queue({"q": {"a": 1}}, {"q": ["x", "a"]}, **kw)


def test_runs_against_different_qrels_are_refused() -> None:
    a = ragreport.evaluate({"q": {"a": 1}}, {"q": ["x"]}, ["P@1"])
    b = ragreport.evaluate({"q": {"b": 1}}, {"q": ["x"]}, ["P@1"])
    with pytest.raises(ragreport.RagReportError, match="different qrels"):
        label_queue_of([a, b], list(a.measures))


def sample_queue() -> ragreport.LabelQueue:
    return ragreport.label_queue({"q1": {"a": 1}, "q,2": {"b": 1}},
                                 [{"q1": ["x", "a"], "q,2": ["y\n", "b"]},
                                  {"q1": ["a", "x"], "q,2": ["y\n", "b"]}], "P@1",
                                 names=["one", "two"], queries={"q1": 'say "hi"'},
                                 docs={"y\n": "ünïcode, \"quoted\"\nline"})


def test_jsonl_csv_and_label_studio_hold_the_same_records() -> None:
    queue = sample_queue()
    assert queue.pairs() == [("q,2", "y\n"), ("q1", "x")]
    lines = [json.loads(x) for x in render_label_queue(queue, "jsonl").splitlines()]
    assert lines[0] == {"query_id": "q,2", "doc_id": "y\n", "query": "",
                        "passage": "ünïcode, \"quoted\"\nline", "gain": 1.0, "rank": 1,
                        "ranks": {"one": 1, "two": 1}, "effects": {"P@1": 1.0}}
    # ranks within reach only: run two has x at rank 2, beyond P@1
    assert lines[1]["ranks"] == {"one": 1} and lines[1]["query"] == 'say "hi"'
    rows = list(csv.DictReader(io.StringIO(render_label_queue(queue, "csv"))))
    assert [(r["query_id"], r["doc_id"], r["passage"]) for r in rows] == \
        [(x["query_id"], x["doc_id"], x["passage"]) for x in lines]
    assert [json.loads(r["ranks"]) for r in rows] == [x["ranks"] for x in lines]
    assert [float(r["gain"]) for r in rows] == [x["gain"] for x in lines]
    tasks = json.loads(render_label_queue(queue, "label-studio"))
    assert [t["data"] for t in tasks] == lines


@pytest.mark.parametrize("path, given, fmt", [
    ("q.jsonl", None, "jsonl"), ("q.CSV", None, "csv"), ("q.json", None, "label-studio"),
    ("q.txt", "csv", "csv")])
def test_the_format_comes_from_the_option_or_the_suffix(path: str, given: str | None,
                                                        fmt: str) -> None:
    assert queue_format(path, given) == fmt


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ragreport.RagReportError, match=r"cannot tell the format of 'q\.txt'"):
        queue_format("q.txt")
    with pytest.raises(ragreport.RagReportError, match=r"format must be one of jsonl, csv, "
                                                        r"label-studio, got 'xml'"):
        queue_format("q.jsonl", "xml")


def test_write_replaces_the_file_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "queue.csv"
    path.write_text("old", encoding="utf-8")
    assert ragreport.write_label_queue(sample_queue(), path) == "csv"
    assert path.read_text(encoding="utf-8").startswith("query_id,doc_id,")
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert [(r["query_id"], r["doc_id"]) for r in rows] == sample_queue().pairs()
    assert all(np.isfinite(float(r["gain"])) for r in rows)


def test_a_run_with_an_empty_ranking_for_the_query() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    runs = [{"q1": ["x", "a"], "q2": ["b"]}, {"q1": [], "q2": ["b"]}]
    queue = ragreport.label_queue(qrels, runs, ["P@1", "R@2"])
    item = queue.items[0]
    assert (item.query_id, item.doc_id) == ("q1", "x")
    want, size = brute_gain(qrels, runs, "q1", "x", 1.0, ["P@1", "R@2"])
    assert item.effects == pytest.approx(want) and item.gain == pytest.approx(size)


@pytest.mark.parametrize("measures", [["P@1"], ["nDCG@3"], ["P@2", "RR"]])
def test_gains_under_averaged_ties_are_the_brute_force_ones(measures: list[str]) -> None:
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    run = {"q1": {"x": 1.0, "a": 1.0, "b": 0.5}, "q2": {"c": 1.0, "y": 0.5}}
    queue = ragreport.label_queue(qrels, run, measures, ties="average")
    assert queue.items
    for item in queue.items:
        filled = {k: dict(v) for k, v in qrels.items()}
        filled[item.query_id][item.doc_id] = queue.grade
        before = ragreport.evaluate(qrels, run, measures, ties="average")
        after = ragreport.evaluate(filled, run, measures, ties="average")
        assert item.gain == pytest.approx(sum(abs(after.mean(m) - before.mean(m))
                                              for m in measures))


def test_runs_of_one_name_keep_their_own_ranks() -> None:
    runs = [{"q": ["x", "a"]}, {"q": ["a", "x"]}]
    queue = ragreport.label_queue({"q": {"a": 1}}, runs, "P@2", names=["r", "r"])
    assert queue.runs == ["r (1)", "r (2)"]
    assert queue.items[0].ranks == {"r (1)": 1, "r (2)": 2} and queue.items[0].best_rank == 1


def test_max_rank_reaches_below_the_cutoffs() -> None:
    # y at rank 3 moves R@1 (it joins the relevant documents): found with max_rank=3 only
    qrels, run = {"q1": {"a": 1}}, {"q1": ["a", "x", "y"]}
    assert len(ragreport.label_queue(qrels, run, "R@1")) == 0
    deep = ragreport.label_queue(qrels, run, "R@1", max_rank=3)
    assert deep.pairs() == [("q1", "x"), ("q1", "y")]
    assert [i.effects["R@1"] for i in deep.items] == [-0.5, -0.5]
