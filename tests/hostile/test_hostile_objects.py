"""Hostile-input catalogue: JSONL and JSON inputs through the command line (issue 12).

Empty result lists (evaluated queries scoring 0, as pytrec_eval evaluates them), a query
listed twice (an error naming both places), numbers that are not plain decimals, grades read
as trec_eval reads them. Legal inputs are checked against pytrec_eval's numbers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hostile import Case, CaseResult, pytrec_eval_means, run_case, trec_means

QRELS = {"q1": {"d1": 1, "d2": 2, "d4": 0}, "q2": {"d3": 1, "d8": 3}, "q3": {"d7": 1}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d9": 1.0}, "q2": {}, "q3": {"d6": 1.0, "d7": 0.25}}
TREC_QRELS = "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())
MEASURES = ["P_5", "P_10", "map", "ndcg", "recip_rank", "recall_5", "Rprec"]
M_ARGS = [a for m in MEASURES for a in ("-m", m)]
EVAL = ["evaluate", "--format", "trec", *M_ARGS]


def jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def ranked(docs: Mapping[str, float]) -> list[str]:
    return [d for d, _ in sorted(docs.items(), key=lambda x: -x[1])]


def like_pytrec_eval(qrels: Mapping[str, Mapping[str, int]],
                     run: Mapping[str, Mapping[str, float]],
                     num_q: int | None = None) -> Callable[[CaseResult], None]:
    """Check: every ``all`` value equals pytrec_eval's mean (to trec_eval's 4 decimals)."""
    def check(res: CaseResult) -> None:
        got = trec_means(res.stdout)
        want = pytrec_eval_means(qrels, run, MEASURES)
        for m in MEASURES:
            assert got[m] == pytest.approx(want[m], abs=5.1e-5), m
        if num_q is not None:
            assert got["num_q"] == num_q
    return check


def stdout_has(*patterns: str) -> Callable[[CaseResult], None]:
    def check(res: CaseResult) -> None:
        for p in patterns:
            assert re.search(p, res.stdout, re.M), p
    return check


def all_zero(num_q: int) -> Callable[[CaseResult], None]:
    def check(res: CaseResult) -> None:
        got = trec_means(res.stdout)
        assert got["num_q"] == num_q
        assert all(got[m] == 0.0 for m in MEASURES)
    return check


RECORDS_EMPTY_LIST = [{"query_id": q, "retrieved": ranked(d)} for q, d in RUN.items()]
RECORDS_EMPTY_MAP = [{"query_id": q, "retrieved": d} for q, d in RUN.items()]
GRADED = {"q1": {"a": 1.9, "b": 2.0, "c": -1.5}}

CASES = [
    # ---- a query listed with an empty result list: evaluated, scores 0 (pytrec_eval) ----------
    Case("empty-list-jsonl", [*EVAL, "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": jsonl(RECORDS_EMPTY_LIST)}, exit=0,
         check=like_pytrec_eval(QRELS, RUN, num_q=3)),
    Case("empty-map-jsonl", [*EVAL, "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": jsonl(RECORDS_EMPTY_MAP)}, exit=0,
         check=like_pytrec_eval(QRELS, RUN, num_q=3)),
    Case("empty-in-json-dict", [*EVAL, "q.json", "r.json"],
         {"q.json": json.dumps(QRELS, indent=2), "r.json": json.dumps(RUN, indent=2)}, exit=0,
         check=like_pytrec_eval(QRELS, RUN, num_q=3)),
    Case("empty-in-json-records", [*EVAL, "q.txt", "r.json"],
         {"q.txt": TREC_QRELS, "r.json": json.dumps(RECORDS_EMPTY_LIST, indent=1)}, exit=0,
         check=like_pytrec_eval(QRELS, RUN, num_q=3)),
    Case("empty-in-jsonl-map-lines", [*EVAL, "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": "".join(json.dumps({q: d}) + "\n"
                                                   for q, d in RUN.items())}, exit=0,
         check=like_pytrec_eval(QRELS, RUN, num_q=3)),
    Case("empty-seed-file-both-sides", [*EVAL, "cases.jsonl", "cases.jsonl"],
         {"cases.jsonl": jsonl([{"query_id": q, "retrieved": ranked(RUN[q]),
                                 "relevant": QRELS[q]} for q in QRELS])}, exit=0,
         check=like_pytrec_eval(QRELS, RUN, num_q=3)),
    Case("empty-per-query-rows", [*EVAL, "-q", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": jsonl(RECORDS_EMPTY_LIST)}, exit=0,
         check=stdout_has(r"^P_5\s*\tq2\t0\.0000$", r"^map\s*\tq2\t0\.0000$",
                          r"^num_q\s*\tall\t3$")),
    Case("all-queries-empty", [*EVAL, "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": []}\n'
                                          '{"query_id": "q2", "retrieved": {}}\n'}, exit=0,
         check=all_zero(2)),
    Case("empty-run-only-query-ignored", [*EVAL, "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": jsonl([*RECORDS_EMPTY_LIST,
                                                  {"query_id": "q9", "retrieved": []}])},
         exit=0, check=like_pytrec_eval(QRELS, RUN, num_q=3)),
    Case("empty-with-complete", ["evaluate", "--format", "trec", "-m", "map", "-c", "q.txt",
                                 "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": ["d1", "d2"]}\n'
                                          '{"query_id": "q2", "retrieved": []}\n'}, exit=0,
         check=stdout_has(r"^num_q\s*\tall\t3$", r"^map\s*\tall\t0\.3333$")),
    Case("empty-counted-in-table", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": jsonl(RECORDS_EMPTY_LIST)}, exit=0,
         stdout=r"queries evaluated: 3;.* empty retrievals: 1;"),
    Case("empty-in-report", ["report", "q.txt", "r.jsonl", "--markdown", "out.md",
                             "--no-stats"],
         {"q.txt": TREC_QRELS, "r.jsonl": jsonl(RECORDS_EMPTY_LIST)}, exit=0,
         check=lambda res: _report_names_empty(res.tmp / "out.md")),
    Case("empty-jsonl-on-stdin", [*EVAL, "q.txt", "-"], {"q.txt": TREC_QRELS},
         stdin=jsonl(RECORDS_EMPTY_MAP).encode(), exit=0,
         check=like_pytrec_eval(QRELS, RUN, num_q=3)),
    # the gate sees the zero: RR = (1 + 0 + 1/2) / 3 = 0.5 (0.75 if the empty query were dropped)
    Case("empty-query-fails-the-gate", ["check", "q.txt", "r.jsonl", "--targets", "t.toml",
                                        "--no-stats"],
         {"q.txt": TREC_QRELS, "r.jsonl": jsonl(RECORDS_EMPTY_LIST),
          "t.toml": '[tool.ragreport.targets]\n"RR" = 0.7\n'}, exit=1, stdout=r"FAIL"),
    Case("empty-query-passes-a-lower-gate", ["check", "q.txt", "r.jsonl", "--targets",
                                             "t.toml", "--no-stats"],
         {"q.txt": TREC_QRELS, "r.jsonl": jsonl(RECORDS_EMPTY_LIST),
          "t.toml": '[tool.ragreport.targets]\n"RR" = 0.5\n'}, exit=0),
    # ---- a query listed twice: an error naming both places --------------------------------------
    Case("dup-query-jsonl-on-stdin", ["evaluate", "q.txt", "-"], {"q.txt": TREC_QRELS},
         stdin=b'{"query_id": "q3", "retrieved": []}\n{"query_id": "q3", "retrieved": ["d7"]}\n',
         stderr=r"<stdin>:2: query 'q3' is listed twice \(line 1 and line 2\)"),
    Case("dup-query-jsonl-run", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": ["d1"]}\n\n'
                                          '{"query_id": "q1", "retrieved": []}\n'},
         stderr=r"^ragreport: error: r\.jsonl:3: query 'q1' is listed twice \(line 1 and "
                r"line 3\)"),
    Case("dup-query-jsonl-qrels", ["evaluate", "q.jsonl", "r.jsonl"],
         {"q.jsonl": '{"query_id": "q1", "relevant": ["d1"]}\n'
                     '{"query_id": "q2", "relevant": ["d1"]}\n'
                     '{"query_id": "q1", "relevant": ["d2"]}\n',
          "r.jsonl": jsonl(RECORDS_EMPTY_LIST)},
         stderr=r"q\.jsonl:3: query 'q1' is listed twice \(line 1 and line 3\)"),
    Case("dup-key-json-dict", ["evaluate", "q.txt", "r.json"],
         {"q.txt": TREC_QRELS, "r.json": '{\n  "q1": {"d1": 1},\n  "q1": {"d2": 2}\n}\n'},
         stderr=r"r\.json:3: query 'q1' is listed twice \(line 2 and line 3\)"),
    Case("dup-record-json-array", ["evaluate", "q.txt", "r.json"],
         {"q.txt": TREC_QRELS, "r.json": '[\n{"query_id": "q2", "retrieved": ["d3"]},\n'
                                         '{"query_id": "q2", "retrieved": []}\n]\n'},
         stderr=r"r\.json:3: query 'q2' is listed twice \(record 0 \(line 2\) and record 1 "
                r"\(line 3\)\)"),
    Case("dup-key-one-jsonl-line", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"q1": ["d1"], "q1": ["d2"]}\n'},
         stderr=r"r\.jsonl:1: query 'q1' is listed twice on line 1"),
    Case("dup-doc-key-json", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": '
                                          '{"d1": 2, "d1": 1}}\n'},
         stderr=r"r\.jsonl:1: document 'd1' appears twice for query 'q1'"),
    Case("dup-doc-key-json-keep-first", [*EVAL, "--keep-first-duplicate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": '
                                          '{"d9": 2, "d1": 1, "d9": 0.5}}\n'}, exit=0,
         check=like_pytrec_eval(QRELS, {"q1": {"d9": 2, "d1": 1}}, num_q=1)),
    Case("dup-field-in-record", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": ["d1"], '
                                          '"retrieved": []}\n'},
         stderr=r"r\.jsonl:1: a record has the field 'retrieved' twice"),
    # ---- numbers --------------------------------------------------------------------------------
    Case("score-underscore", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": {"d1": 1}}\n'
                                          '{"query_id": "q2", "retrieved": {"d3": "1_000"}}\n'},
         stderr=r"r\.jsonl:2: score '1_000' of document 'd3' \(query 'q2'\) is not a plain "
                r"decimal number"),
    Case("score-hex", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": {"d1": "0x10"}}\n'},
         stderr=r"r\.jsonl:1: score '0x10' of document 'd1' \(query 'q1'\) is not a number"),
    Case("score-nan-literal", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": {"d1": NaN}}\n'},
         stderr=r"r\.jsonl:1: score nan of document 'd1' \(query 'q1'\) is not a finite"),
    Case("score-nan-string-json-doc", ["evaluate", "q.txt", "r.json"],
         {"q.txt": TREC_QRELS, "r.json": '{\n "q1": {"d1": 1},\n "q2": {"d3": "nan"}\n}\n'},
         stderr=r"r\.json:3: score 'nan' of document 'd3' \(query 'q2'\) is not a finite"),
    Case("score-1e400", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": {"d1": 1e400}}\n'},
         stderr=r"r\.jsonl:1: score inf of document 'd1' \(query 'q1'\) is not a finite"),
    Case("score-400-digits", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": {"d1": 1'
                                          + "0" * 400 + "}}\n"},
         stderr=r"r\.jsonl:1: score \(an integer of 401 digits\) of document 'd1' \(query "
                r"'q1'\) is not a finite number"),
    Case("score-5000-digits", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": {"d1": '
                                          + "9" * 5000 + "}}\n"},
         stderr=r"r\.jsonl:1: score .* of document 'd1' \(query 'q1'\) is not a finite number"),
    Case("score-bool", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": {"d1": true}}\n'},
         stderr=r"r\.jsonl:1: score True of document 'd1' \(query 'q1'\) is not a number "
                r"\(a boolean\)"),
    Case("grade-bool", ["evaluate", "q.jsonl", "r.jsonl"],
         {"q.jsonl": '{"query_id": "q1", "relevant": {"d1": false}}\n',
          "r.jsonl": jsonl(RECORDS_EMPTY_LIST)},
         stderr=r"q\.jsonl:1: grade False of document 'd1' \(query 'q1'\) is not a number"),
    Case("grade-exponent", ["evaluate", "q.jsonl", "r.jsonl"],
         {"q.jsonl": '{"query_id": "q1", "relevant": {"d1": 1e3}}\n',
          "r.jsonl": jsonl(RECORDS_EMPTY_LIST)},
         stderr=r"q\.jsonl:1: grade 1e3 of document 'd1' \(query 'q1'\) is in exponent "
                r"notation"),
    Case("grade-2-to-53", ["evaluate", "q.json", "r.jsonl"],
         {"q.json": '{\n "q1": {"d1": 1},\n "q2": {"d3": 9007199254740992}\n}\n',
          "r.jsonl": jsonl(RECORDS_EMPTY_LIST)},
         stderr=r"q\.json:3: grade 9007199254740992 of document 'd3' \(query 'q2'\) is too "
                r"large for a grade"),
    Case("grade-fraction-truncated", [*EVAL, "q.jsonl", "r.jsonl"],
         {"q.jsonl": '{"query_id": "q1", "relevant": {"a": 1.9, "b": 2.0, "c": -1.5}}\n',
          "r.jsonl": '{"query_id": "q1", "retrieved": ["c", "a", "b"]}\n'}, exit=0,
         check=like_pytrec_eval({"q1": {"a": 1, "b": 2, "c": -1}},
                                {"q1": {"c": 3, "a": 2, "b": 1}}, num_q=1)),
    Case("grade-fraction-kept", ["evaluate", "--format", "json", "-m", "nDCG",
                                 "--fractional-grades", "q.jsonl", "r.jsonl"],
         {"q.jsonl": '{"query_id": "q1", "relevant": {"a": 0.5, "b": 2.5}}\n',
          "r.jsonl": '{"query_id": "q1", "retrieved": ["a", "b"]}\n'}, exit=0,
         check=lambda res: _fractional_ndcg(res, [0.5, 2.5])),
    Case("doc-id-float", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": [1.5, 2]}\n'},
         stderr=r"r\.jsonl:1: document id must be a string or an integer, got 1\.5$"),
    Case("json-nested-too-deep", ["evaluate", "q.txt", "r.json"],
         {"q.txt": TREC_QRELS, "r.json": "[" * 200_000 + "]" * 200_000},
         stderr=r"r\.json: invalid JSON: nested too deeply"),
    Case("retrieved-null", ["evaluate", "q.txt", "r.jsonl"],
         {"q.txt": TREC_QRELS, "r.jsonl": '{"query_id": "q1", "retrieved": null}\n'},
         stderr=r"r\.jsonl:1: documents of query 'q1' must be a list of ids or a "
                r"\{doc_id: score\} map, got NoneType"),
]


def _report_names_empty(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "empty retrieval" in text
    assert "empty result lists: a judged query listed with no result scores 0" in text


def _fractional_ndcg(res: CaseResult, gains: list[float]) -> None:
    import math

    doc = json.loads(res.stdout)
    assert doc["conventions"]["fractional_grades"] is True
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(gains, reverse=True)))
    assert doc["means"]["nDCG"] == pytest.approx(dcg / idcg, abs=1e-12)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)
