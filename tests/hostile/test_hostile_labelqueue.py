"""Hostile-input catalogue, area "label queue": ``ragreport label-queue`` (see
``tests/hostile.py`` and :mod:`ragreport.analysis.labelqueue`).

A refusal exits 2 with one stderr line saying what was received, before anything is written;
an input is never overwritten; a run with no unjudged document writes an empty queue (exit 0).
"""

from __future__ import annotations

import json

import pytest
from hostile import QRELS, RUN, Case, CaseResult, run_case

FILES = {"q.txt": QRELS, "r.txt": RUN}
LQ = ["label-queue", "q.txt", "r.txt"]


def _queue(result: CaseResult) -> list[dict]:
    return [json.loads(x) for x in (result.tmp / "out.jsonl").read_text("utf-8").splitlines()]


def _two_pairs(result: CaseResult) -> None:
    # P@1: d5 (q2) and d6 (q3) are unjudged and ranked first; d9 (q1) is third
    assert [(x["query_id"], x["doc_id"]) for x in _queue(result)] == [("q2", "d5"),
                                                                       ("q3", "d6")]
    assert "wrote 2 of 2 pairs that move P@1" in result.stderr


def _empty(result: CaseResult) -> None:
    assert (result.tmp / "out.jsonl").read_text("utf-8") == ""


def _csv_header(result: CaseResult) -> None:
    text = (result.tmp / "out.txt").read_text("utf-8")
    assert text.startswith("query_id,doc_id,query,passage,gain,rank,ranks,effects\n")


CASES = [
    Case("label-queue-two-pairs", [*LQ, "-m", "P@1", "-o", "out.jsonl"], FILES, exit=0,
         check=_two_pairs),
    Case("label-queue-nothing-unjudged", [*LQ, "-m", "P@1", "-o", "out.jsonl"],
         {"q.txt": "q1 0 a 1\nq1 0 b 0\n", "r.txt": "q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\n"},
         exit=0, check=_empty),
    Case("label-queue-format-over-suffix", [*LQ, "-o", "out.txt", "--format", "csv"], FILES,
         exit=0, check=_csv_header),
    Case("label-queue-no-output", [*LQ], FILES, stderr=r"label-queue needs -o/--output PATH"),
    Case("label-queue-unknown-suffix", [*LQ, "-o", "out.xml"], FILES,
         stderr=r"cannot tell the format of 'out\.xml' from its suffix"),
    Case("label-queue-bad-format", [*LQ, "-o", "out.jsonl", "--format", "xml"], FILES,
         stderr=r"argument --format: invalid choice: 'xml'"),
    Case("label-queue-budget-0", [*LQ, "-o", "out.jsonl", "--budget", "0"], FILES,
         stderr=r"argument --budget: .*0"),
    Case("label-queue-per-query-minus", [*LQ, "-o", "out.jsonl", "--max-per-query", "-1"],
         FILES, stderr=r"argument --max-per-query: .*-1"),
    Case("label-queue-max-rank-text", [*LQ, "-o", "out.jsonl", "--max-rank", "ten"], FILES,
         stderr=r"argument --max-rank: .*ten"),
    Case("label-queue-grade-below-level", [*LQ, "-o", "out.jsonl", "-l", "2",
                                           "--unjudged-grade", "1"], FILES,
         stderr=r"grade must be at least rel_level \(2\)"),
    Case("label-queue-unbounded-measure", [*LQ, "-o", "out.jsonl", "-m", "NumRet"], FILES,
         stderr=r"a label queue needs at least one bounded measure"),
    Case("label-queue-doc-map", [*LQ, "-o", "out.jsonl", "--doc-map", "m.tsv"],
         {**FILES, "m.tsv": "d1\tD1\n"}, stderr=r"label-queue does not take --doc-map"),
    Case("label-queue-too-many-names", [*LQ, "-o", "out.jsonl", "--name", "a", "--name", "b"],
         FILES, stderr=r"--name given 2 times for 1 runs"),
    Case("label-queue-output-is-an-input", [*LQ, "-m", "P@1", "-o", "r.txt", "--format",
                                            "jsonl"], FILES, stderr=r"r\.txt"),
    Case("label-queue-missing-run", ["label-queue", "q.txt", "-o", "out.jsonl"], FILES,
         stderr=r"label-queue needs QRELS and at least one RUN"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]


# ---- merge-labels: judgments back into the qrels ---------------------------------------------
ML = ["merge-labels", "q.txt", "l.csv", "-o", "m.tsv"]
LABELS = {**FILES, "l.csv": "query_id,doc_id,grade\nq1,d9,1\nq2,d5,\n"}


def _merged(result: CaseResult) -> None:
    assert (result.tmp / "m.tsv").read_text("utf-8").endswith("q1\td9\t1\thuman\n")
    assert "1 new judgments added" in result.stderr


MERGE_CASES = [
    Case("merge-labels-adds-with-source", ML, LABELS, exit=0, check=_merged),
    Case("merge-labels-conflict-refused", ML,
         {**FILES, "l.csv": "query_id,doc_id,grade\nq1,d1,0\n"},
         stderr=r"a new judgment disagrees with the one used today: query 'q1', document "
                r"'d1': human says 0, qrels said 1"),
    Case("merge-labels-conflict-kept", [*ML, "--on-conflict", "keep"],
         {**FILES, "l.csv": "query_id,doc_id,grade\nq1,d1,0\n"}, exit=0,
         stderr=r"1 disagreeing with the grade used before \(kept both"),
    Case("merge-labels-bad-source", [*ML, "--source", "llm:"], LABELS,
         stderr=r"bad source: 'llm:' names no model"),
    Case("merge-labels-nothing-judged", ML,
         {**FILES, "l.csv": "query_id,doc_id,grade\nq1,d9,\n"},
         stderr=r"no pair has a grade yet"),
    Case("merge-labels-trec-output", ["merge-labels", "q.txt", "l.csv", "-o", "m.txt"],
         LABELS, stderr=r"name it \.tsv, \.jsonl or \.parquet \(TREC qrels hold no source\)"),
    Case("merge-labels-output-is-the-qrels", ["merge-labels", "q.tsv", "l.csv", "-o", "q.tsv"],
         {"q.tsv": "query-id\tcorpus-id\tscore\n", "l.csv": "query_id,doc_id,grade\nq,d,1\n"},
         stderr=r"q\.tsv"),
    Case("merge-labels-no-labels", ["merge-labels", "q.txt", "-o", "m.tsv"], FILES,
         stderr=r"merge-labels needs QRELS and at least one LABELS file"),
    Case("merge-labels-stdin", ["merge-labels", "-", "l.csv", "-o", "m.tsv"], LABELS,
         stderr=r"merge-labels reads files, not standard input"),
    Case("merge-labels-latin1-jsonl", ["merge-labels", "q.txt", "l.jsonl", "-o", "m.tsv"],
         {**FILES, "l.jsonl": '{"query_id": "q1", "doc_id": "d9", "grade": 1}\n'
                              '{"query_id": "q1", "doc_id": "caf\xe9", "grade": 1}\n'
                              .encode("latin-1")},
         stderr=r"l\.jsonl:2: not valid UTF-8 text"),
    Case("merge-labels-missing-labels", ["merge-labels", "q.txt", "l.jsonl", "-o", "m.tsv"],
         FILES, stderr=r"l\.jsonl"),
]


@pytest.mark.parametrize("case", MERGE_CASES, ids=[c.id for c in MERGE_CASES])
def test_hostile_merge(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]
