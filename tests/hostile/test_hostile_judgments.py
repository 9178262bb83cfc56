"""Hostile-input catalogue, area "judgment sources": qrels that say who judged (see
``tests/hostile.py`` and :mod:`ragreport.io.judgments`).

Conflicting sources are kept and resolved by the stated rule (never an error); a bad label
(``llm:`` without a model, spaces, control characters, a number, a missing source among
given ones) is refused naming the file and line; ``--judgment-rule`` takes two values.
"""

from __future__ import annotations

import pytest
from hostile import Case, CaseResult, run_case

# q1/a: the model says 1, a person 0, the model again 1: human-first reads 0, latest 1
TSV = ("query-id\tcorpus-id\tscore\tsource\n"
       "q1\ta\t1\tllm:gpt\nq1\ta\t0\thuman\nq1\ta\t1\tllm:gpt\nq1\tb\t1\tllm:gpt\n")
RUN = "q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\n"
FILES = {"q.tsv": TSV, "r.txt": RUN}
EVAL = ["evaluate", "q.tsv", "r.txt", "-m", "P@1"]


def _p1(value: str) -> object:
    def check(result: CaseResult) -> None:
        assert f"P@1      {value}" in result.stdout

    return check


def _jsonl(*records: str) -> dict[str, str]:
    return {"q.jsonl": "".join(r + "\n" for r in records), "r.txt": RUN}


CASES = [
    Case("sources-conflict-human-first", EVAL, FILES, exit=0, check=_p1("0.0000")),
    Case("sources-conflict-latest", [*EVAL, "--judgment-rule", "latest"], FILES, exit=0,
         check=_p1("1.0000")),
    Case("sources-conflict-latest-stream", [*EVAL, "--judgment-rule", "latest", "--stream"],
         FILES, exit=0, stdout=r"P@1  1\.0000"),
    Case("sources-rule-unknown", [*EVAL, "--judgment-rule", "oldest"], FILES,
         stderr=r"argument --judgment-rule: invalid choice: 'oldest'"),
    Case("sources-llm-without-model", ["evaluate", "q.jsonl", "r.txt"],
         _jsonl('{"query_id": "q1", "relevant": {"a": 1}, "source": "llm:"}'),
         stderr=r"q\.jsonl:1: bad source: 'llm:' names no model"),
    Case("sources-label-with-spaces", ["evaluate", "q.jsonl", "r.txt"],
         _jsonl('{"query_id": "q1", "relevant": {"a": 1}, "source": "human "}'),
         stderr=r"q\.jsonl:1: bad source: 'human ' has spaces around it"),
    Case("sources-tsv-cell-padded", ["evaluate", "q.tsv", "r.txt", "-m", "P@1"],
         {"q.tsv": "query-id\tcorpus-id\tscore\tsource\nq1\ta\t1\t human \n", "r.txt": RUN},
         exit=0, check=_p1("1.0000")),  # a TSV cell is stripped, as the other three are
    Case("sources-sourced-then-not", ["evaluate", "q.jsonl", "r.txt"],
         _jsonl('{"query_id": "q1", "relevant": {"a": 1}, "source": "human"}',
                '{"query_id": "q1", "relevant": {"b": 1}}'),
         stderr=r"q\.jsonl:2: a judgment has no source"),
    Case("sources-label-control-char", ["evaluate", "q.jsonl", "r.txt"],
         _jsonl('{"query_id": "q1", "relevant": {"a": 1}, "source": "hu\\u001bman"}'),
         stderr=r"q\.jsonl:1: bad source: .* holds a control character"),
    Case("sources-label-number", ["evaluate", "q.jsonl", "r.txt"],
         _jsonl('{"query_id": "q1", "relevant": {"a": 1}, "source": 7}'),
         stderr=r"q\.jsonl:1: bad source: a source must be a text label, got int"),
    Case("sources-missing-among-given", ["evaluate", "q.jsonl", "r.txt"],
         _jsonl('{"query_id": "q1", "relevant": {"a": 1}, "source": "human"}',
                '{"query_id": "q2", "relevant": {"a": 1}}'),
         stderr=r"q\.jsonl:2: a judgment has no source"),
    Case("sources-tsv-missing-field", ["evaluate", "q.tsv", "r.txt"],
         {"q.tsv": "query-id\tcorpus-id\tscore\tsource\nq1\ta\t1\n", "r.txt": RUN},
         stderr=r"q\.tsv:2: expected 4 tab-separated fields \(query-id corpus-id score "
                r"source\), got 3"),
    Case("sources-unknown-label-accepted", ["check", "q.jsonl", "r.txt", "--no-stats",
                                            "--jobs", "1", "--targets", "t.toml"],
         {**_jsonl('{"query_id": "q1", "relevant": {"a": 1}, "source": "crowd:mturk"}'),
          "t.toml": '"P@1" = 0.5\n'}, exit=0,
         stdout=r"Judgments: 1 crowd:mturk \(1 used of 1 read; 0 pairs judged more than once"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]
