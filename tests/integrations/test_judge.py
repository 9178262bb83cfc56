"""ragreport.judge: a deterministic local judge over pairs, a label queue and its file; the
grades, the source, latency, concurrency, resume after a failure, and refusals (a judge
that raises or returns nonsense) that name the pair."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

import ragreport

QUERIES = {"q1": "red fox", "q2": "blue whale"}
DOCS = {"d1": "a red car", "d2": "the blue sea whale", "d3": "green grass", "d4": "fox den"}
PAIRS = [("q1", "d1"), ("q1", "d3"), ("q2", "d2"), ("q1", "d4")]


def overlap(query: str, passage: str) -> int:
    """Words in common: a deterministic stand-in for an LLM."""
    return len(set(query.split()) & set(passage.split()))


def grades(got: ragreport.Judged) -> dict[tuple[str, str], float]:
    q = got.qrels
    return dict(zip(zip(q.query_ids.to_pylist(), q.doc_ids.to_pylist(), strict=True),
                    q.grades.tolist(), strict=True))


def test_pairs_are_judged_with_their_source_and_latency() -> None:
    got = ragreport.judge(overlap, PAIRS, queries=QUERIES, docs=DOCS, progress=False)
    assert got.source == "llm:overlap"
    assert grades(got) == {("q1", "d1"): 1.0, ("q1", "d3"): 0.0, ("q2", "d2"): 2.0,
                           ("q1", "d4"): 1.0}
    assert got.qrels.sources.to_pylist() == ["llm:overlap"] * 4
    assert set(got.latency_ms) == set(PAIRS) and all(v >= 0 for v in got.latency_ms.values())
    # they merge into qrels like any other source
    merged = ragreport.merge_judgments(ragreport.load_qrels({"q1": {"d1": 1}}), got.qrels)
    assert merged.added == 4 and merged.conflicts == []


def test_concurrency_gives_the_same_judgments() -> None:
    live, peak = [0], [0]
    lock = threading.Lock()

    def slow(query: str, passage: str) -> int:
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.05)
        with lock:
            live[0] -= 1
        return overlap(query, passage)

    got = ragreport.judge(slow, PAIRS, queries=QUERIES, docs=DOCS, max_concurrency=4,
                          progress=False, name="slow")
    assert peak[0] > 1 and grades(got) == grades(ragreport.judge(
        overlap, PAIRS, queries=QUERIES, docs=DOCS, progress=False))


def test_a_label_queue_and_its_file(tmp_path: Path) -> None:
    queue = ragreport.label_queue({"q1": {"zz": 1}, "q2": {"zz": 1}},
                                  {"q1": ["d1", "d3"], "q2": ["d2"]}, "P@2",
                                  queries=QUERIES, docs=DOCS)
    by_queue = ragreport.judge(overlap, queue, progress=False)
    assert set(grades(by_queue)) == set(queue.pairs())
    for suffix in (".jsonl", ".csv"):
        path = tmp_path / f"queue{suffix}"
        ragreport.write_label_queue(queue, path)
        assert grades(ragreport.judge(overlap, path, progress=False)) == grades(by_queue)


def test_resume_after_a_failure_judges_only_the_rest(tmp_path: Path) -> None:
    resume = tmp_path / "judged.jsonl"
    calls: list[tuple[str, str]] = []
    down = [True]  # the model is down for the first call on d2

    def flaky(query: str, passage: str) -> int:
        calls.append((query, passage))
        if passage == DOCS["d2"] and down[0]:
            raise TimeoutError("the model did not answer")
        return overlap(query, passage)

    with pytest.raises(ragreport.RagReportError, match=r"judge_fn raised TimeoutError: the "
                       r"model did not answer \(query 'q2', document 'd2'\)"):
        ragreport.judge(flaky, PAIRS, queries=QUERIES, docs=DOCS, resume=resume,
                        progress=False, name="m")
    kept = [json.loads(x) for x in resume.read_text("utf-8").splitlines()]
    assert [(r["query_id"], r["doc_id"]) for r in kept] == [("q1", "d1"), ("q1", "d3")]
    calls.clear()
    down[0] = False
    got = ragreport.judge(flaky, PAIRS, queries=QUERIES, docs=DOCS, resume=resume,
                          progress=False, name="m")
    assert len(calls) == 2 and grades(got)[("q2", "d2")] == 2.0 and len(got.latency_ms) == 4
    with pytest.raises(ragreport.InputError, match=r"holds judgments by 'llm:m', not "
                                                   r"'llm:other'"):
        ragreport.judge(overlap, PAIRS, queries=QUERIES, docs=DOCS, resume=resume,
                        progress=False, name="other")


@pytest.mark.parametrize("answer, shown", [
    ("very relevant", "'very relevant'"), (None, "None"), (float("nan"), "nan"),
    (True, "True"), ([1], r"\[1\]")])
def test_nonsense_is_refused_naming_the_pair(answer: object, shown: str) -> None:
    with pytest.raises(ragreport.RagReportError, match=rf"judge_fn returned {shown} for query "
                                                       r"'q1', document 'd1': a grade must be"):
        ragreport.judge(lambda q, p: answer, PAIRS[:1], queries=QUERIES, docs=DOCS,
                        progress=False)


def test_grades_given_as_text_are_read() -> None:
    got = ragreport.judge(lambda q, p: " 2\n", PAIRS[:1], queries=QUERIES, docs=DOCS,
                          progress=False)
    assert got.qrels.grades.tolist() == [2.0] and got.source == "llm:judge"


@pytest.mark.parametrize("kwargs, message", [
    ({"pairs": [("q1", "d9")]}, r"no passage for document 'd9' \(give docs=\)"),
    ({"pairs": [("q9", "d1")]}, r"no text for query 'q9'"),
    ({"pairs": [("q1",)]}, r"pair 0 must be \(query_id, doc_id\)"),
    ({"max_concurrency": 0}, "max_concurrency must be a whole number"),
    ({"name": "bad name\n"}, "bad judge name"),
])
def test_bad_arguments_are_refused(kwargs: dict, message: str) -> None:
    kw = {"pairs": PAIRS, "queries": QUERIES, "docs": DOCS, "progress": False, **kwargs}
    with pytest.raises(ragreport.RagReportError, match=message):
        ragreport.judge(overlap, **kw)
    with pytest.raises(ragreport.RagReportError, match="judge_fn must be callable"):
        ragreport.judge("gpt", PAIRS)  # type: ignore[arg-type]
