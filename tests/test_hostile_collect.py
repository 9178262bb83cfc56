"""Hostile-input catalogue: a run's per-query latency (``latency_ms`` in a JSONL run, as
:func:`ragreport.collect_run` writes it) through the command line (issue 15).

A valid latency reaches the report (terminal table, JSON ``latency``) and changes no measure;
a latency that is not a finite number of milliseconds >= 0 is an error naming the file, the
line and the query.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile import Case, CaseResult, run_case

QRELS = "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\nq3 0 d7 1\n"
RECORDS = [
    {"query_id": "q1", "query": "first", "latency_ms": 10.0,
     "retrieved": [{"doc_id": "d1", "score": 3.0}, {"doc_id": "d9", "score": 1.0}]},
    {"query_id": "q2", "query": "second", "latency_ms": 30.0, "retrieved": ["d5", "d3"]},
    {"query_id": "q3", "query": "third", "latency_ms": 20.0, "retrieved": []},
]
PLAIN = "q1 Q0 d1 1 3.0 t\nq1 Q0 d9 2 1.0 t\nq2 Q0 d5 1 2.0 t\nq2 Q0 d3 2 1.0 t\n"


def jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def with_latency(i: int, value: Any) -> str:
    """RECORDS with query ``i``'s latency_ms replaced by ``value`` (written as JSON text)."""
    lines = jsonl(RECORDS).splitlines()
    rec = json.loads(lines[i])
    rec["latency_ms"] = "@@"
    lines[i] = json.dumps(rec).replace('"@@"', value)
    return "\n".join(lines) + "\n"


def report_json_has(run: str, queries: int, p50: float, mx: float,
                    others: tuple[str, ...] = ()) -> Callable[[CaseResult], None]:
    def check(res: CaseResult) -> None:
        doc = json.loads((res.tmp / "out.json").read_text("utf-8"))
        lat = doc["latency"]
        assert set(lat) == {run}, lat
        assert lat[run]["queries"] == queries
        assert lat[run]["p50_ms"] == p50 and lat[run]["max_ms"] == mx
        for name in others:
            assert name not in lat
        assert "Latency per query (ms)" in res.stdout
    return check


def same_numbers(res: CaseResult) -> None:
    # AP: q1 1/2 (d1 at 1, d2 never), q2 1/2 (d3 at 2), q3 0 (nothing retrieved): map 1/3
    got = res.stdout.splitlines()
    assert any(line.split() == ["map", "all", "0.3333"] for line in got), res.stdout
    assert any(line.split() == ["num_q", "all", "3"] for line in got), res.stdout


CASES = [
    Case("latency-in-report", ["report", "q.txt", "live.jsonl", "plain.txt", "--no-stats",
                               "--json", "out.json", "--html", "out.html"],
         {"q.txt": QRELS, "live.jsonl": jsonl(RECORDS), "plain.txt": PLAIN}, exit=0,
         check=report_json_has("live", 3, 20.0, 30.0, ("plain",))),
    Case("latency-some-queries-only", ["report", "q.txt", "live.jsonl", "--no-stats", "--json",
                                       "out.json"],
         {"q.txt": QRELS, "live.jsonl": jsonl([RECORDS[0], {**RECORDS[1], "latency_ms": 4},
                                               {k: v for k, v in RECORDS[2].items()
                                                if k != "latency_ms"}])}, exit=0,
         check=report_json_has("live", 2, 7.0, 10.0)),
    Case("latency-zero", ["report", "q.txt", "live.jsonl", "--no-stats", "--json", "out.json"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, "0")}, exit=0,
         check=report_json_has("live", 3, 20.0, 30.0)),
    Case("latency-changes-no-measure", ["evaluate", "--format", "trec", "-m", "map", "q.txt",
                                        "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": jsonl(RECORDS)}, exit=0, check=same_numbers),
    Case("latency-negative", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(1, "-1")},
         stderr=r"^ragreport: error: live\.jsonl:2: latency_ms -1 of query 'q2' is negative$"),
    Case("latency-nan-text", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, '"nan"')},
         stderr=r"live\.jsonl:1: latency_ms 'nan' of query 'q1' is not a finite number"),
    Case("latency-nan-literal", ["check", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, "NaN")},
         stderr=r"live\.jsonl:1: latency_ms nan of query 'q1' is not a finite number"),
    Case("latency-overflow", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(2, "1e400")},
         stderr=r"live\.jsonl:3: latency_ms inf of query 'q3' is not a finite number"),
    Case("latency-bool", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, "true")},
         stderr=r"live\.jsonl:1: latency_ms True of query 'q1' is not a number \(a boolean\)"),
    Case("latency-null", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, "null")},
         stderr=r"live\.jsonl:1: latency_ms None of query 'q1' is not a number"),
    Case("latency-list", ["evaluate", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(1, "[1, 2]")},
         stderr=r"live\.jsonl:2: latency_ms \[1, 2\] of query 'q2' is not a number"),
    Case("latency-underscore-text", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, '"1_000"')},
         stderr=r"live\.jsonl:1: latency_ms '1_000' of query 'q1' is not a plain decimal"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)
