"""New judgments back into the qrels: a judged label queue (CSV, JSONL) or a Label Studio
export read with its source, merged without replacing anything, written with every source,
and the next unjudged interval narrower."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragreport

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}}
RUN = {"q1": ["x", "a"], "q2": ["b", "y"]}  # x and y are unjudged


def judged_queue(tmp: Path, suffix: str, grades: dict[tuple[str, str], object]) -> Path:
    """The label queue of RUN written as ``suffix``, with ``grades`` filled in."""
    queue = ragreport.label_queue(QRELS, RUN, "P@2", budget=10)
    path = tmp / f"queue{suffix}"
    ragreport.write_label_queue(queue, path)
    if suffix == ".csv":
        lines = path.read_text("utf-8").splitlines()
        pairs = queue.pairs()
        lines = [lines[0] + ",grade"] + [
            line + "," + str(grades.get(pairs[i], "")) for i, line in enumerate(lines[1:])]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif suffix == ".jsonl":
        rows = [json.loads(x) for x in path.read_text("utf-8").splitlines()]
        for r in rows:
            r["grade"] = grades.get((r["query_id"], r["doc_id"]))
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:  # Label Studio: each task annotated in the tool, exported
        tasks = json.loads(path.read_text("utf-8"))
        for t in tasks:
            g = grades.get((t["data"]["query_id"], t["data"]["doc_id"]))
            t["annotations"] = [] if g is None else [
                {"was_cancelled": True, "result": [{"value": {"choices": ["3"]}}]},
                {"result": [{"value": {"choices": [str(g)]}}]}]
        path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_a_judged_queue_narrows_the_next_interval(tmp_path: Path, suffix: str) -> None:
    path = judged_queue(tmp_path, suffix, {("q1", "x"): 1})  # y left blank
    new = ragreport.read_labels(path)
    assert list(zip(new.query_ids.to_pylist(), new.doc_ids.to_pylist(), new.grades.tolist(),
                    new.sources.to_pylist(), strict=True)) == [("q1", "x", 1.0, "human")]
    merged = ragreport.merge_judgments(ragreport.load_qrels(QRELS), new)
    assert merged.added == 1 and merged.conflicts == []
    out = tmp_path / "merged.tsv"
    assert ragreport.write_qrels(merged.qrels, out) == "tsv"
    assert out.read_text("utf-8") == ("query-id\tcorpus-id\tscore\tsource\nq1\ta\t1\tqrels\n"
                                      "q2\tb\t1\tqrels\nq1\tx\t1\thuman\n")
    before = ragreport.unjudged_bounds(QRELS, RUN, ["P@2"]).interval("P@2")
    after = ragreport.unjudged_bounds(out, RUN, ["P@2"]).interval("P@2")
    assert before == (0.5, 1.0) and after == (0.75, 1.0)


def test_nothing_is_replaced_and_a_disagreement_is_not_silent(tmp_path: Path) -> None:
    base = ragreport.load_qrels(QRELS)
    path = tmp_path / "labels.csv"
    path.write_text("query_id,doc_id,grade\nq1,a,0\n", encoding="utf-8")
    new = ragreport.read_labels(path)
    with pytest.raises(ragreport.RagReportError, match=r"query 'q1', document 'a': human says "
                                                       r"0, qrels said 1; keep both"):
        ragreport.merge_judgments(base, new)
    merged = ragreport.merge_judgments(base, new, on_conflict="keep")
    assert [c.text for c in merged.conflicts] == ["query 'q1', document 'a': human says 0, "
                                                  "qrels said 1"]
    q = merged.qrels
    used = {d: (g, s) for d, g, s in zip(q.doc_ids.to_pylist(), q.grades.tolist(),
                                         q.sources.to_pylist(), strict=True)}
    assert len(q.judgments) == 3 and used == {"a": (0.0, "human"), "b": (1.0, "qrels")}
    latest = ragreport.merge_judgments(base, new, on_conflict="keep", rule="latest").qrels
    assert dict(zip(latest.doc_ids.to_pylist(), latest.sources.to_pylist(), strict=True)) \
        == {"a": "human", "b": "qrels"}  # the person's is the latest too
    again = ragreport.merge_judgments(q, new)  # merged twice: nothing added
    assert again.added == 0 and len(again.qrels.judgments) == 3


def test_written_qrels_read_back_with_every_source(tmp_path: Path) -> None:
    base = ragreport.load_qrels(QRELS)
    new = ragreport.read_labels(judged_queue(tmp_path, ".csv", {("q1", "x"): 2,
                                                               ("q2", "y"): 0}),
                                source="llm:judge")
    merged = ragreport.merge_judgments(base, new, existing_source="human").qrels
    for suffix in (".tsv", ".jsonl", ".parquet"):
        path = tmp_path / f"m{suffix}"
        ragreport.write_qrels(merged, path)
        back = ragreport.load_qrels(path)
        assert sorted(zip(back.judgments.query_ids.to_pylist(),
                          back.judgments.doc_ids.to_pylist(), back.judgments.grades.tolist(),
                          back.judgments.sources.to_pylist(), strict=True)) == [
            ("q1", "a", 1.0, "human"), ("q1", "x", 2.0, "llm:judge"),
            ("q2", "b", 1.0, "human"), ("q2", "y", 0.0, "llm:judge")]


@pytest.mark.parametrize("text, suffix, message", [
    ("query_id,doc_id,grade\nq1,x,\n", ".csv", "no pair has a grade yet"),
    ("query_id,doc_id\nq1,x\n", ".csv", "no grade column"),
    ("query_id,doc_id,grade\nq1,x,high\n", ".csv", "grade"),
    ('{"query_id": "q1", "doc_id": "x", "grade": 1}\n[1]\n', ".jsonl",
     r"labels\.jsonl:2: expected an object per line"),
    ('[{"data": {"query_id": "q1"}}]', ".json", "task 0 has no data.query_id and data.doc_id"),
    ('[{"data": {"query_id": "q1", "doc_id": "x"}, "annotations": [{"result": [{"value": '
     '{"choices": ["very"]}}]}]}]', ".json", r"task 0: the grade 'very' is not a number"),
    ('{"a": 1}', ".json", "expected Label Studio's export"),
])
def test_bad_labels_are_refused(tmp_path: Path, text: str, suffix: str, message: str) -> None:
    path = tmp_path / f"labels{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ragreport.RagReportError, match=message):
        ragreport.read_labels(path)


def test_qrels_without_sources_are_not_written_as_if_they_had_some(tmp_path: Path) -> None:
    with pytest.raises(ragreport.RagReportError, match="no sources"):
        ragreport.write_qrels(ragreport.load_qrels(QRELS), tmp_path / "q.tsv")
    merged = ragreport.merge_judgments(ragreport.load_qrels({"q\t1": {"a": 1}}),
                                       ragreport.read_labels(_csv(tmp_path))).qrels
    with pytest.raises(ragreport.RagReportError, match="holds a tab or a line break"):
        ragreport.write_qrels(merged, tmp_path / "q.tsv")
    with pytest.raises(ragreport.RagReportError, match=r"name it \.tsv, \.jsonl or \.parquet"):
        ragreport.write_qrels(merged, tmp_path / "q.txt")


def _csv(tmp: Path) -> Path:
    path = tmp / "l.csv"
    path.write_text("query_id,doc_id,grade\nq2,b,1\n", encoding="utf-8")
    return path
