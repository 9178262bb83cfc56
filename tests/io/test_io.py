"""Every input format, a table of bad inputs with their exact messages, and the fast path."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragreport
from ragreport.core.stream import evaluate_stream
from ragreport.data import Qrels, Run
from ragreport.errors import InputError, MeasureError, RagReportError
from ragreport.io import trec as trec_io
from ragreport.io.common import Source, materialize

RUN_LINES = "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag\nq2 Q0 d3 1 0.5 tag\n"
QRELS_LINES = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return p


def _rows(obj: Run | Qrels) -> list[tuple[str, str, float]]:
    values = obj.scores if isinstance(obj, Run) else obj.grades
    return list(zip(obj.query_ids.to_pylist(), obj.doc_ids.to_pylist(), values.tolist(),
                    strict=True))


def _lines(obj: Run | Qrels) -> list[int] | None:
    return None if obj.lines is None else obj.lines.tolist()


EXPECTED_RUN = [("q1", "d1", 2.5), ("q1", "d2", 1.5), ("q2", "d3", 0.5)]
EXPECTED_QRELS = [("q1", "d1", 1.0), ("q1", "d2", 0.0), ("q2", "d3", 2.0)]


# ---- TREC runs and qrels --------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (RUN_LINES, [1, 2, 3]),
        (RUN_LINES.replace(" ", "\t"), [1, 2, 3]),
        # trec_eval's results.test: tab-separated with the score padded by spaces
        ("q1\tQ0\td1\t104\t  2.5\ttag\nq1\tQ0\td2\t414\t  1.5\ttag\nq2\tQ0\td3\t1\t  0.5\ttag\n",
         [1, 2, 3]),
        (" q1  Q0 d1\t1 2.5   tag  \nq1 Q0 d2 2 1.5 tag\n\tq2 Q0 d3 1 0.5 tag", [1, 2, 3]),
        ("# a comment\n" + RUN_LINES.replace("\nq2", "\n\n# another\nq2"), [2, 3, 6]),
        (RUN_LINES.replace("\n", "\r\n"), [1, 2, 3]),
        ("\n" + RUN_LINES.replace("\n", "\r\n", 1).replace("\nq2", "\n\r\nq2"), [2, 3, 5]),
        (RUN_LINES.replace("tag\n", "tag extra fields 1 2\n"), [1, 2, 3]),
        (RUN_LINES.replace("\nq2", "\n \t \nq2"), [1, 2, 4]),
    ],
    ids=["space", "tab", "trec_eval-results.test", "irregular", "comments-blank", "crlf",
         "crlf-blank-lines", "fields-after-tag", "whitespace-line"],
)
def test_trec_run_variants(tmp_path: Path, text: str, lines: list[int]) -> None:
    run = ragreport.load_run(_write(tmp_path, "x.run", text))
    assert _rows(run) == EXPECTED_RUN
    assert _lines(run) == lines
    assert run.name == "tag"
    assert run.has_scores


def test_trec_run_gzip_and_name(tmp_path: Path) -> None:
    p = _write(tmp_path, "bm25.run.gz", gzip.compress(RUN_LINES.encode()))
    run = ragreport.load_run(p)
    assert _rows(run) == EXPECTED_RUN
    assert run.name == "tag"
    assert ragreport.load_run(p, name="mine").name == "mine"
    assert ragreport.load_run(run, name="other").name == "other"


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (QRELS_LINES, [1, 2, 3]),
        (QRELS_LINES.replace(" ", "\t"), [1, 2, 3]),
        ("# judged by hand\n" + QRELS_LINES.replace("\nq2", "\n\nq2"), [2, 3, 5]),
        (QRELS_LINES.replace("\n", "\r\n"), [1, 2, 3]),
        ("q1  0\td1   1\nq1 0 d2 0\n q2 0 d3 2 \n", [1, 2, 3]),
    ],
    ids=["space", "tab", "comments-blank", "crlf", "irregular"],
)
def test_trec_qrels_variants(tmp_path: Path, text: str, lines: list[int]) -> None:
    qrels = ragreport.load_qrels(_write(tmp_path, "x.qrels", text))
    assert _rows(qrels) == EXPECTED_QRELS
    assert _lines(qrels) == lines


def test_trec_qrels_gzip(tmp_path: Path) -> None:
    qrels = ragreport.load_qrels(_write(tmp_path, "q.txt.gz", gzip.compress(QRELS_LINES.encode())))
    assert _rows(qrels) == EXPECTED_QRELS


def test_trec_files_evaluate(tmp_path: Path) -> None:
    # q1: d1 (2.5, grade 1) d2 (1.5, grade 0) -> ranks: 1 0 ; q2: d3 (grade 2) -> ranks: 1
    r = ragreport.evaluate(_write(tmp_path, "a.qrels", QRELS_LINES),
                           _write(tmp_path, "a.run", RUN_LINES), ["P@2", "RR"])
    assert r.run_name == "tag"
    assert r.per_query("P@2") == {"q1": 0.5, "q2": 0.5}


def test_beir_qrels(tmp_path: Path) -> None:
    text = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\r\n\nq2\td3\t2\n"
    qrels = ragreport.load_qrels(_write(tmp_path, "test.tsv", text))
    assert _rows(qrels) == EXPECTED_QRELS
    assert _lines(qrels) == [2, 3, 5]


def test_beir_file_is_not_a_run(tmp_path: Path) -> None:
    p = _write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    with pytest.raises(InputError, match="looks like a BEIR qrels file, not a run"):
        ragreport.load_run(p)


# ---- JSONL and JSON -------------------------------------------------------------------------

def test_jsonl_run_list_and_map(tmp_path: Path) -> None:
    text = (json.dumps({"query_id": "q1", "query": "what is a list", "retrieved": ["a", "b"]})
            + "\n\n"
            + json.dumps({"query_id": "q2", "retrieved": {"x": 0.5, "y": 0.7}}) + "\n")
    run = ragreport.load_run(_write(tmp_path, "dense.jsonl", text))
    # a ranked list gets decreasing scores that reproduce the order
    assert _rows(run) == [("q1", "a", 2.0), ("q1", "b", 1.0), ("q2", "x", 0.5),
                          ("q2", "y", 0.7)]
    assert run.query_texts == {"q1": "what is a list"}
    assert run.name == "dense"
    assert _lines(run) == [1, 1, 3, 3]
    assert not run.has_scores


def test_jsonl_qrels_list_and_map(tmp_path: Path) -> None:
    text = (json.dumps({"query_id": "q1", "relevant": ["a", "b"]}) + "\n"
            + json.dumps({"query_id": "q2", "relevant": {"x": 2, "y": 0}}) + "\n")
    qrels = ragreport.load_qrels(_write(tmp_path, "gold.jsonl", text))
    assert _rows(qrels) == [("q1", "a", 1.0), ("q1", "b", 1.0), ("q2", "x", 2.0),
                            ("q2", "y", 0.0)]


def test_jsonl_evaluate_captures_query_text(tmp_path: Path) -> None:
    rec = {"query_id": "q1", "query": "how to sort", "retrieved": ["b", "a"], "relevant": ["a"]}
    p = _write(tmp_path, "both.jsonl", json.dumps(rec) + "\n")
    r = ragreport.evaluate(p, p, ["RR"])
    # ranks: 0 1 -> RR 1/2
    assert r.mean("RR") == 0.5
    assert r.query_texts == {"q1": "how to sort"}


def test_json_list_document(tmp_path: Path) -> None:
    data = [{"query_id": "q1", "retrieved": ["a"], "relevant": {"a": 3}}]
    p = _write(tmp_path, "cases.json", json.dumps(data, indent=2))
    assert _rows(ragreport.load_qrels(p)) == [("q1", "a", 3.0)]
    assert _rows(ragreport.load_run(p)) == [("q1", "a", 1.0)]


# ---- Python objects -------------------------------------------------------------------------

def test_seed_list_of_dicts() -> None:
    cases = [
        {"query": "Python installation", "retrieved": [1, 3, 5, 7, 9], "relevant": [3, 7, 12]},
        {"query": "List comprehensions", "retrieved": [2, 4, 6, 8, 10], "relevant": [4, 6]},
    ]
    qrels = ragreport.load_qrels(cases)
    run = ragreport.load_run(cases)
    assert _rows(qrels)[:3] == [("1", "3", 1.0), ("1", "7", 1.0), ("1", "12", 1.0)]
    assert run.query_ids.to_pylist()[5] == "2"
    assert run.doc_ids.to_pylist()[:5] == ["1", "3", "5", "7", "9"]
    assert run.query_texts == {"1": "Python installation", "2": "List comprehensions"}
    assert qrels.source == "qrels (list)"
    assert run.lines is None
    # q1 ranks: 0 1 0 1 0 (R = 3) -> R@5 2/3 ; q2 ranks: 0 1 1 0 0 (R = 2) -> R@5 1
    r = ragreport.evaluate(cases, cases, ["R@5"], order="given")
    assert r.per_query("R@5") == pytest.approx({"1": 2 / 3, "2": 1.0})


def test_dict_of_dicts_pytrec_eval_style() -> None:
    qrels = ragreport.load_qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}})
    run = ragreport.load_run({"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d3": 0.5}})
    assert _rows(qrels) == EXPECTED_QRELS
    assert _rows(run) == EXPECTED_RUN
    assert run.has_scores
    assert run.source == "run (dict)"


def test_dict_of_lists() -> None:
    run = ragreport.load_run({"q1": ["d2", "d1"], "q2": ["d3"]})
    assert _rows(run) == [("q1", "d2", 2.0), ("q1", "d1", 1.0), ("q2", "d3", 1.0)]
    assert not run.has_scores
    qrels = ragreport.load_qrels({"q1": ["d1"]})
    assert _rows(qrels) == [("q1", "d1", 1.0)]


def test_loaded_objects_pass_through() -> None:
    q = ragreport.load_qrels({"q1": {"d1": 1}})
    r = ragreport.load_run({"q1": ["d1"]})
    assert ragreport.load_qrels(q) is q
    assert ragreport.load_run(r) is r
    with pytest.raises(InputError, match=r"^got a Run where qrels were expected$"):
        ragreport.load_qrels(r)
    with pytest.raises(InputError, match=r"^got Qrels where a run was expected$"):
        ragreport.load_run(q)


def test_pandas_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    qrels = ragreport.load_qrels(pd.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3"], "relevance": [1, 0, 2]}))
    run = ragreport.load_run(pd.DataFrame(
        {"q_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3"], "score": [2.5, 1.5, 0.5]}))
    assert _rows(qrels) == EXPECTED_QRELS
    assert _rows(run) == EXPECTED_RUN
    with pytest.raises(InputError, match="DataFrame has no score column"):
        ragreport.load_run(pd.DataFrame({"qid": ["q1"], "doc_id": ["d1"]}))


# ---- query and document texts ---------------------------------------------------------------

def test_load_texts_tsv_with_header(tmp_path: Path) -> None:
    p = _write(tmp_path, "queries.tsv", "query-id\ttext\nq1\thow do I sort\r\nq2\ta\tb\n\n")
    assert ragreport.load_queries(p) == {"q1": "how do I sort", "q2": "a\tb"}
    assert ragreport.load_texts(_write(tmp_path, "plain.tsv", "q9\tnine\n")) == {"q9": "nine"}


def test_load_texts_beir_corpus_jsonl(tmp_path: Path) -> None:
    text = (json.dumps({"_id": "d1", "title": "Lists", "text": "A list is mutable."}) + "\n"
            + json.dumps({"_id": "d2", "title": "", "text": "No title."}) + "\n")
    assert ragreport.load_docs(_write(tmp_path, "corpus.jsonl", text)) == {
        "d1": "Lists\nA list is mutable.", "d2": "No title."}
    q = json.dumps({"query_id": "q1", "query": "sort a list"}) + "\n"
    assert ragreport.load_queries(_write(tmp_path, "queries.jsonl", q)) == {"q1": "sort a list"}


def test_load_texts_dict_and_none() -> None:
    assert ragreport.load_texts({1: "one"}) == {"1": "one"}
    assert ragreport.load_texts(None) == {}
    with pytest.raises(InputError, match=r"^queries must be a path or a dict, got int$"):
        ragreport.load_queries(5)


def test_load_texts_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        ragreport.load_texts(_write(tmp_path, "q.tsv", "q1\tok\nq2 no tab\n"))
    assert str(info.value) == f"{tmp_path / 'q.tsv'}:2: expected 'id<TAB>text'"
    assert info.value.line == 2
    with pytest.raises(InputError) as info:
        ragreport.load_texts(_write(tmp_path, "d.jsonl", '{"_id": "d1"}\n'))
    assert str(info.value) == (f"{tmp_path / 'd.jsonl'}:1: record needs an id (_id, id, doc_id "
                               "or query_id) and a text")


# ---- the table of bad inputs ----------------------------------------------------------------

def _load_run(p: Path) -> Any:
    return ragreport.load_run(p)


def _load_qrels(p: Path) -> Any:
    return ragreport.load_qrels(p)


def _eval_run(p: Path) -> Any:
    return ragreport.evaluate({"q1": {"d1": 1}}, p, ["P@1"])


def _eval_qrels(p: Path) -> Any:
    return ragreport.evaluate(p, {"q1": ["d1"]}, ["P@1"])


RUN_OK = "q1 Q0 d1 1 2.5 tag\n"
DUP_MSG = ("document 'd1' appears twice for query 'q1' (first at line 1); pass "
           "duplicates='first' (--keep-first-duplicate) to keep the first occurrence")

BAD_FILES: list[tuple[str, str, Callable[[Path], Any], str | bytes, str, int | None]] = [
    # (id, file name, loader, content, message after "<path>:<line>: ", line)
    ("run-too-few-fields", "r.run", _load_run, RUN_OK + "q1 Q0 d2 2 1.5\n",
     "expected 6 fields (qid Q0 docid rank score tag), got 5: 'q1 Q0 d2 2 1.5'", 2),
    ("qrels-too-few-fields", "q.qrels", _load_qrels, "q1 0 d1 1\nq1 0 d2\n",
     "expected 4 fields (qid iter docid grade), got 3: 'q1 0 d2'", 2),
    ("qrels-with-6-fields", "q.qrels", _load_qrels, "q1 0 d1 1\nq1 Q0 d2 2 1.5 tag\n",
     "expected 4 fields (qid iter docid grade), got 6 (is this a run file?): "
     "'q1 Q0 d2 2 1.5 tag'", 2),
    ("qrels-with-5-fields", "q.qrels", _load_qrels, "q1 0 d1 1\nq1 0 d2 1 x\n",
     "expected 4 fields (qid iter docid grade), got 5: 'q1 0 d2 1 x'", 2),
    ("score-not-a-number", "r.run", _load_run, RUN_OK + "q1 Q0 d2 2 abc tag\n",
     "score 'abc' is not a number", 2),
    ("grade-not-a-number", "q.qrels", _load_qrels, "q1 0 d1 1\nq1 0 d2 x\n",
     "grade 'x' is not a number", 2),
    ("nan-score", "r.run", _load_run, RUN_OK + "q1 Q0 d2 2 nan tag\n",
     "score 'nan' is not a finite number", 2),
    ("inf-score", "r.run", _load_run, RUN_OK + "q1 Q0 d2 2 inf tag\n",
     "score 'inf' is not a finite number", 2),
    ("minus-inf-score-tabs", "r.run", _load_run, "q1\tQ0\td1\t1\t-inf\ttag\n",
     "score '-inf' is not a finite number", 1),
    ("nan-grade", "q.qrels", _load_qrels, "q1 0 d1 1\nq1 0 d2 NaN\n",
     "grade 'NaN' is not a finite number", 2),
    ("duplicate-doc-in-run", "r.run", _eval_run,
     RUN_OK + "q1 Q0 d2 2 1.5 tag\n# note\nq1 Q0 d1 3 0.5 tag\n", DUP_MSG, 4),
    ("duplicate-doc-in-run-crlf-blank", "r.run", _eval_run,
     "q1 Q0 d1 1 2 t\r\n\r\nq1 Q0 d1 2 1 t\r\n",
     DUP_MSG, 3),
    ("duplicate-doc-in-run-leading-blank", "r.run", _eval_run,
     "\nq1 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\n", DUP_MSG.replace("line 1", "line 2"), 3),
    ("duplicate-qrels-entry", "q.qrels", _eval_qrels, "q1 0 d1 1\nq1 0 d2 1\nq1 0 d1 0\n",
     "document 'd1' is judged twice for query 'q1' (first at line 1)", 3),
    ("empty-file", "r.run", _load_run, "", "the file is empty", None),
    ("whitespace-only", "r.run", _load_run, "  \n\t\r\n\n", "the file is empty", None),
    ("comments-only", "q.qrels", _load_qrels, "# nothing\n# here\n",
     "the file is empty (no data lines)", None),
    ("binary-file", "r.run", _load_run, RUN_OK.encode() + b"\x00\x01\x02\x03",
     "not a text file (binary data found)", 2),
    ("invalid-utf8", "r.run", _load_run, RUN_OK.encode() + b"q1 Q0 d\xff 2 1.5 tag\n",
     "not valid UTF-8 text (invalid start byte at column 8)", 2),
    ("invalid-json-line", "r.jsonl", _load_run,
     '{"query_id": "q1", "retrieved": ["a"]}\n{"query_id": \n',
     "invalid JSON: Expecting value (column 14)", 2),
    ("jsonl-missing-retrieved", "r.jsonl", _load_run,
     '{"query_id": "q1", "retrieved": ["a"]}\n{"query_id": "q2", "relevant": ["a"]}\n',
     "record for query 'q2' has no 'retrieved' field (keys: query_id, relevant)", 2),
    ("jsonl-missing-relevant", "q.jsonl", _load_qrels, '{"query_id": "q1", "docs": ["a"]}\n',
     "record for query 'q1' has no 'relevant' field (keys: query_id, docs)", 1),
    ("jsonl-grade-not-a-number", "q.jsonl", _load_qrels,
     '{"query_id": "q1", "relevant": {"a": 1}}\n{"query_id": "q2", "relevant": {"b": "x"}}\n',
     "grade 'x' of document 'b' (query 'q2') is not a number", 2),
    ("jsonl-nan-score", "r.jsonl", _load_run, '{"query_id": "q1", "retrieved": {"a": NaN}}\n',
     "score nan of document 'a' (query 'q1') is not a finite number", 1),
    ("beir-too-few-fields", "b.tsv", _load_qrels,
     "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\n",
     "expected 3 tab-separated fields (query-id corpus-id score), got 2", 3),
    ("beir-grade-not-a-number", "b.tsv", _load_qrels,
     "query-id\tcorpus-id\tscore\nq1\td1\tyes\n", "grade 'yes' is not a number", 2),
    ("corrupt-gzip", "r.run.gz", _load_run, b"\x1f\x8b\x08\x00garbage",
     "corrupt gzip data", None),
]


@pytest.mark.parametrize(("name", "loader", "content", "message", "line"),
                         [case[1:] for case in BAD_FILES], ids=[case[0] for case in BAD_FILES])
def test_bad_files(tmp_path: Path, name: str, loader: Callable[[Path], Any],
                   content: str | bytes, message: str, line: int | None) -> None:
    p = _write(tmp_path, name, content)
    with pytest.raises(InputError) as info:
        loader(p)
    err = info.value
    assert isinstance(err, RagReportError)
    assert isinstance(err, ValueError)
    assert err.source == str(p)
    assert err.line == line
    where = f"{p}:{line}: " if line is not None else f"{p}: "
    if name.endswith(".gz"):  # the zlib detail after the reason varies between versions
        assert str(err).startswith(where + message)
    else:
        assert str(err) == where + message


def test_bad_line_deep_in_a_large_file_is_named(tmp_path: Path) -> None:
    lines = [f"q{i // 100} Q0 d{i} {i % 100 + 1} {1000 - i % 100} run" for i in range(5000)]
    lines[3999] = "q39 Q0 dX 100 nan run"
    p = _write(tmp_path, "big.run", "\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        ragreport.load_run(p)
    assert str(info.value) == f"{p}:4000: score 'nan' is not a finite number"


def test_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.run"
    with pytest.raises(InputError) as info:
        ragreport.load_run(p)
    assert str(info.value) == f"{p}: no such file"
    assert info.value.source == str(p)
    assert info.value.line is None
    with pytest.raises(InputError, match="is a directory, not a file"):
        ragreport.load_qrels(tmp_path)


def test_no_query_in_common(tmp_path: Path) -> None:
    q = _write(tmp_path, "a.qrels", "q1 0 d1 1\nq2 0 d1 1\n")
    r = _write(tmp_path, "a.run", "z1 Q0 d1 1 1 t\n")
    with pytest.raises(InputError) as info:
        ragreport.evaluate(q, r, ["P@1"])
    assert str(info.value) == (f"the run ({r}) and the qrels ({q}) have no query in common "
                               "(run has 'z1'...; qrels have 'q1', 'q2'...)")
    assert isinstance(info.value, ValueError)


def test_bad_format_name(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^format must be one of auto, trec, beir, jsonl, json, "
                       r"parquet, got 'csv'$"):
        ragreport.load_run(_write(tmp_path, "a.run", RUN_OK), format="csv")


def test_bad_object_inputs() -> None:
    with pytest.raises(InputError, match=r"^run \(int\): cannot read run from a int"):
        ragreport.load_run(5)
    with pytest.raises(InputError, match=r"^qrels \(dict\): grade 'x' of document 'a' "
                       r"\(query 'q'\) is not a number$"):
        ragreport.load_qrels({"q": {"a": "x"}})
    with pytest.raises(InputError, match=r"^run \(dict\): score inf of document 'a' "
                       r"\(query 'q'\) is not a finite number$"):
        ragreport.load_run({"q": {"a": float("inf")}})
    with pytest.raises(InputError, match=r"^run \(dict\): no retrieved documents found$"):
        ragreport.load_run({})
    with pytest.raises(InputError, match=r"^run \(list\): record for query '1' has no "
                       r"'retrieved' field \(keys: relevant\)$"):
        ragreport.load_run([{"relevant": ["a"]}])


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"k_max": 0}, RagReportError, r"^k_max must be >= 1, got 0$"),
        ({"k_max": "10"}, RagReportError, r"^k_max must be an integer >= 1, got '10'$"),
        ({"k_max": 3}, MeasureError, r"^k_max \(3\) is smaller than the cutoff of P@5$"),
        ({"measures": ["P@5", "bogus"]}, MeasureError, r"^unknown measure 'bogus'; valid"),
        ({"measures": "P@0"}, MeasureError,
         r"^cutoff must be (>= 1|between 1 and \S+), got 0 in 'P@0'$"),
        ({"order": "rank"}, RagReportError,
         r"^order must be one of 'score', 'given', got 'rank'$"),
        ({"max_depth": 0}, RagReportError, r"^max_depth must be >= 1, got 0$"),
        ({"max_depth": 2.5}, RagReportError, r"^max_depth must be an integer >= 1, got 2\.5$"),
    ],
    ids=["k_max-0", "k_max-str", "k_max-below-cutoff", "measure-unknown", "measure-P@0",
         "order", "max_depth-0", "max_depth-float"],
)
def test_bad_options_through_evaluate(tmp_path: Path, kwargs: dict[str, Any],
                                      error: type[RagReportError], message: str) -> None:
    args: dict[str, Any] = {"measures": ["P@5"], **kwargs}
    q = _write(tmp_path, "a.qrels", "q1 0 d1 1\n")
    r = _write(tmp_path, "a.run", RUN_OK)
    with pytest.raises(error, match=message) as info:
        ragreport.evaluate(q, r, **args)
    assert isinstance(info.value, ValueError)


# ---- the fast (pyarrow) path ----------------------------------------------------------------

def _generated_run(seed: int, sep: Callable[[random.Random], str]) -> bytes:
    rng = random.Random(seed)
    out = []
    for q in range(60):
        for rank in range(1, 61):
            score = rng.choice([1.0, 0.5, 0.25, 2.0, round(rng.random(), 3)])  # heavy ties
            doc = f"d{rng.randrange(10_000)}-{q}-{rank}"
            fields = [f"q{q}", "Q0", doc, str(rank), repr(score), "gen"]
            out.append(sep(rng).join(fields))
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize(
    "sep",
    [lambda rng: " ", lambda rng: "\t", lambda rng: rng.choice([" ", "\t", "  ", "\t  "])],
    ids=["space", "tab", "irregular"],
)
def test_large_file_takes_the_fast_path_with_the_slow_paths_result(
        monkeypatch: pytest.MonkeyPatch, sep: Callable[[random.Random], str]) -> None:
    data = _generated_run(7, sep)
    slow = trec_io._parse_slow(data, "gen.run", "run")

    def refuse(*args: Any) -> Any:
        raise AssertionError("the fast path fell back to the line-by-line reader")

    monkeypatch.setattr(trec_io, "_parse_slow", refuse)
    fast = trec_io.parse_trec(data, "gen.run", "run")
    assert fast[0].to_pylist() == slow[0].to_pylist()
    assert fast[1].to_pylist() == slow[1].to_pylist()
    np.testing.assert_array_equal(fast[2], slow[2])
    np.testing.assert_array_equal(fast[3], slow[3])
    assert fast[4] == slow[4] == "gen"
    assert len(fast[2]) == 3600


def test_fast_and_slow_path_give_the_same_evaluation(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _generated_run(11, lambda rng: " ")
    rng = random.Random(3)
    run_rows = [line.split() for line in data.decode().splitlines()]
    qrels: dict[str, dict[str, int]] = {}
    for q, _, doc, *_ in run_rows:
        if rng.random() < 0.2:
            qrels.setdefault(q, {})[doc] = rng.choice([0, 1, 2, 3])

    def build(parsed: tuple[Any, ...]) -> Run:
        return Run(parsed[0], parsed[1], "gen.run", parsed[3], parsed[2], "gen")

    slow = build(trec_io._parse_slow(data, "gen.run", "run"))
    fast = build(trec_io.parse_trec(data, "gen.run", "run"))
    measures = ["P@10", "R@50", "nDCG@10", "nDCG(gain=exp)@20", "AP", "RR", "Rprec"]
    a = ragreport.evaluate(qrels, slow, measures)
    b = ragreport.evaluate(qrels, fast, measures)
    assert a.means() == b.means()
    assert a.means()["nDCG@10"] > 0


def test_trec_qrels_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    text = "".join(f"q{rng.randrange(50)} 0 doc{i} {rng.choice([-1, 0, 1, 2])}\n"
                   for i in range(3000))
    data = ("# header\n" + text).encode()
    slow = trec_io._parse_slow(data, "q.txt", "qrels")
    monkeypatch.setattr(trec_io, "_parse_slow", None)  # calling it would fail
    fast = trec_io.parse_trec(data, "q.txt", "qrels")
    assert fast[0].to_pylist() == slow[0].to_pylist()
    np.testing.assert_array_equal(fast[2], slow[2])
    np.testing.assert_array_equal(fast[3], slow[3])
    assert fast[3][0] == 2


@pytest.mark.parametrize("sep, odd", [
    (" ", "q Q0 a\t1 2 0.5 t"),                  # a tab in a space-separated run
    ("\t", "q\tQ0 a\t1\t2\t0.5\tt"),            # a space in a tab-separated run
])
@pytest.mark.parametrize("first", [False, True], ids=["late", "first"])
def test_a_line_splits_on_white_space_wherever_it_is(
        tmp_path: Path, sep: str, odd: str, first: bool) -> None:
    """trec_eval reads ``a 1 2 0.5``: doc a, rank 1, score 2 (the tag 0.5), on every path."""
    plain = "".join(sep.join(["f", "Q0", f"z{i}", "1", "1", "t"]) + "\n" for i in range(60))
    body = sep.join(["q", "Q0", "x", "1", "3", "t"]) + "\n" + odd + "\n"
    run = _write(tmp_path, "r.txt", body + plain if first else plain + body)
    qrels = {"q": {"a": 1}}
    want = {"RR": 0.5, "P@1": 0.0}  # a (score 2) after x (score 3)
    assert ragreport.evaluate(qrels, run, list(want)).means() == want
    assert ragreport.evaluate(qrels, Source("r.txt", run.read_bytes()),
                              list(want)).means() == want
    for block in (1 << 20, 64):  # one block, and lines cut into many blocks
        got = evaluate_stream(qrels, run, list(want), block_bytes=block)
        assert got.means() == want


@pytest.mark.parametrize("sep, odd", [
    (" ", "q 0 a\t 1"),      # "a\t" would be the id with the delimiter " "
    ("\t", "q \t0\ta\t1"),  # "q " would be the query id with the delimiter TAB
])
def test_a_late_qrels_line_splits_on_white_space(tmp_path: Path, sep: str, odd: str) -> None:
    plain = "".join(sep.join(["f", "0", f"z{i}", "1"]) + "\n" for i in range(60))
    qrels = _write(tmp_path, "q.txt", plain + odd + "\n")
    loaded = ragreport.load_qrels(qrels)
    assert _rows(loaded)[-1] == ("q", "a", 1.0)
    run = {"q": {"a": 1.0}, "f": {"z1": 1.0}}
    assert ragreport.evaluate(qrels, run, ["RR"]).means() == {"RR": 1.0}


# ---- inputs read once: Source, "-", FIFOs (issue 12) ----------------------------------------

def _fifo(tmp_path: Path, name: str, data: bytes) -> tuple[Path, threading.Thread]:
    """A FIFO and the thread that writes ``data`` into it once a reader opens it."""
    path = tmp_path / name
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as fh:  # blocks until the reader opens the FIFO
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return path, thread


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


#: more than the 64 KiB format detection looks at, so that nothing may be lost to it
PADDED_RUN = "# padding\n" * 8000 + RUN_LINES
PADDED_LINES = [8001, 8002, 8003]


def test_loaders_take_a_source() -> None:
    run = ragreport.load_run(Source("<run>", gzip.compress(RUN_LINES.encode())))
    assert _rows(run) == EXPECTED_RUN and run.source == "<run>" and run.name == "tag"
    qrels = ragreport.load_qrels(Source("<q>", QRELS_LINES.encode()))
    assert _rows(qrels) == EXPECTED_QRELS and _lines(qrels) == [1, 2, 3]
    assert ragreport.load_queries(Source("<t>", b"q1\tone\n")) == {"q1": "one"}
    with pytest.raises(InputError, match=r"^<run>:2: score 'x' is not a number$"):
        ragreport.load_run(Source("<run>", (RUN_OK + "q1 Q0 d2 2 x t\n").encode()))
    with pytest.raises(InputError, match=r"^<q>: the file is empty$"):
        ragreport.load_qrels(Source("<q>", b""))


def test_dash_is_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, PADDED_RUN.encode())
    run = ragreport.load_run("-")
    assert _rows(run) == EXPECTED_RUN and _lines(run) == PADDED_LINES
    assert run.source == "<stdin>"
    _stdin(monkeypatch, gzip.compress(QRELS_LINES.encode()))
    assert _rows(ragreport.load_qrels("-")) == EXPECTED_QRELS
    _stdin(monkeypatch, b"q1 Q0 d1 1 1_000 t\n")
    with pytest.raises(InputError, match=r"^<stdin>:1: score '1_000' is not a plain decimal"):
        ragreport.load_run("-")


@pytest.mark.parametrize("gz", [False, True])
def test_fifo_is_read_once_and_whole(tmp_path: Path, gz: bool) -> None:
    data = PADDED_RUN.encode()
    path, thread = _fifo(tmp_path, "run.fifo", gzip.compress(data) if gz else data)
    run = ragreport.load_run(path)
    thread.join(10)
    assert _rows(run) == EXPECTED_RUN and _lines(run) == PADDED_LINES
    assert run.source == str(path)
    path, thread = _fifo(tmp_path, "q.fifo", QRELS_LINES.encode())
    assert _rows(ragreport.load_qrels(path)) == EXPECTED_QRELS
    path, thread = _fifo(tmp_path, "t.fifo", b"\xef\xbb\xbfq1\tone\n")
    assert ragreport.load_docs(path) == {"q1": "one"}


def test_materialized_input_evaluates_like_the_file(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    q = _write(tmp_path, "a.qrels", QRELS_LINES)
    r = _write(tmp_path, "a.run", RUN_LINES)
    _stdin(monkeypatch, RUN_LINES.encode())
    src = materialize("-")
    assert isinstance(src, Source)
    assert ragreport.evaluate(q, src, ["P@2", "RR"]).means() == \
        ragreport.evaluate(q, r, ["P@2", "RR"]).means()
    assert materialize(r) == r  # a regular file stays a path


# ---- the byte order mark never becomes part of an id ----------------------------------------

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("plain.run", BOM + RUN_LINES.encode()),                              # fast path
        ("irregular.run", BOM + RUN_LINES.replace(" ", "  ").encode()),       # pyarrow on bytes
        ("comment.run", BOM + b"# c\n" + RUN_LINES.encode()),                 # comment first
        ("extra.run", BOM + RUN_LINES.replace("tag\n", "tag x\n").encode()),  # exact reader
        ("bom.run.gz", gzip.compress(BOM + RUN_LINES.encode(), mtime=0)),              # gzip
        ("tab.run", BOM + RUN_LINES.replace(" ", "\t").encode()),
    ],
)
def test_bom_is_dropped_from_runs(tmp_path: Path, name: str, data: bytes) -> None:
    run = ragreport.load_run(_write(tmp_path, name, data))
    assert _rows(run) == EXPECTED_RUN
    assert run.name == "tag"


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("plain.qrels", BOM + QRELS_LINES.encode()),
        ("slow.qrels", BOM + QRELS_LINES.replace("\nq2", "\n\tq2").encode()),
        ("q.qrels.gz", gzip.compress(BOM + QRELS_LINES.encode(), mtime=0)),
        ("beir.tsv", BOM + b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td3\t2\n"),
        ("q.jsonl", BOM + b'{"query_id": "q1", "relevant": {"d1": 1, "d2": 0}}\n'
                          b'{"query_id": "q2", "relevant": {"d3": 2}}\n'),
    ],
)
def test_bom_is_dropped_from_qrels(tmp_path: Path, name: str, data: bytes) -> None:
    assert _rows(ragreport.load_qrels(_write(tmp_path, name, data))) == EXPECTED_QRELS


@pytest.mark.parametrize("data", [BOM + b"q1\tone\nq2\ttwo\n",
                                  BOM + b'{"_id": "q1", "text": "one"}\n{"_id": "q2", '
                                        b'"text": "two"}\n',
                                  gzip.compress(BOM + b"id\ttext\nq1\tone\nq2\ttwo\n", mtime=0)])
def test_bom_is_dropped_from_texts(tmp_path: Path, data: bytes) -> None:
    assert ragreport.load_queries(_write(tmp_path, "t.txt", data)) == {"q1": "one", "q2": "two"}


# ---- numbers: plain decimals, finite; grades as trec_eval reads them -------------------------

def _as_run(score: str, layout: str) -> str:
    line = f"q1 Q0 d2 2 {score} tag\n"
    text = RUN_OK + line
    return {"plain": text, "tab": text.replace(" ", "\t"), "irregular": text.replace(" ", "  "),
            "extra": text.replace("tag\n", "tag more\n")}[layout]


BAD_SCORES = [
    ("1_000", "is not a plain decimal number"),
    ("0x10", "is not a number"),
    ("nan", "is not a finite number"),
    ("-Infinity", "is not a finite number"),
    ("1e400", "is not a finite number (too large for a float64)"),
    ("1" * 400, "is not a finite number (too large for a float64)"),
    ("1e", "is not a number"),
    ("\u0661", "is not a plain decimal number"),  # an Arabic-Indic digit: float() takes it
]


@pytest.mark.parametrize("layout", ["plain", "tab", "irregular", "extra"])
@pytest.mark.parametrize(("score", "reason"), BAD_SCORES, ids=[s[:8] for s, _ in BAD_SCORES])
def test_bad_scores_name_the_line_on_every_path(tmp_path: Path, layout: str, score: str,
                                                reason: str) -> None:
    p = _write(tmp_path, "r.run", _as_run(score, layout))
    shown = repr(score) if len(score) < 30 else repr(score)[:30] + "... (400 characters)"
    for src in (p, _write(tmp_path, "r.run.gz", gzip.compress(p.read_bytes()))):
        with pytest.raises(InputError) as info:
            ragreport.load_run(src)
        assert str(info.value) == f"{src}:2: score {shown} {reason}"


@pytest.mark.parametrize("score,value", [("+1", 1.0), (".5", 0.5), ("1E5", 1e5), ("-2.", -2.0),
                                         ("1e-400", 0.0), ("007", 7.0), ("+.5e+1", 5.0)])
@pytest.mark.parametrize("layout", ["plain", "irregular", "extra"])
def test_plain_decimal_scores_are_read(tmp_path: Path, score: str, value: float,
                                       layout: str) -> None:
    run = ragreport.load_run(_write(tmp_path, "r.run", _as_run(score, layout)))
    assert run.scores.tolist() == [2.5, value]


@pytest.mark.parametrize("layout", ["plain", "irregular", "beir"])
def test_grades_are_read_as_trec_eval_reads_them(tmp_path: Path, layout: str) -> None:
    grades = ["1.7", "-2.5", "2.0", "-0.5", "3", "+1.99"]
    if layout == "beir":
        text = "query-id\tcorpus-id\tscore\n" + "".join(
            f"q1\td{i}\t{g}\n" for i, g in enumerate(grades))
    else:
        sep = " " if layout == "plain" else " \t "
        text = "".join(f"q1{sep}0{sep}d{i}{sep}{g}\n" for i, g in enumerate(grades))
    p = _write(tmp_path, "q.txt", text)
    assert ragreport.load_qrels(p).grades.tolist() == [1.0, -2.0, 2.0, 0.0, 3.0, 1.0]
    assert ragreport.load_qrels(p, fractional_grades=True).grades.tolist() == \
        [1.7, -2.5, 2.0, -0.5, 3.0, 1.99]


BAD_GRADES = [
    ("1e3", False, "grade '1e3' is in exponent notation, which trec_eval reads as the digits "
                   "before the 'e'; write the grade as a plain number"),
    (str(2**53), False, "grade '9007199254740992' is too large for a grade (|grade| must be "
                        "below 2**53)"),
    ("-1e16", True, "grade '-1e16' is too large for a grade (|grade| must be below 2**53)"),
    ("NaN", True, "grade 'NaN' is not a finite number"),
    ("1_0", False, "grade '1_0' is not a plain decimal number"),
    ("0x1", True, "grade '0x1' is not a number"),
]


@pytest.mark.parametrize("layout", ["plain", "irregular", "beir", "gz"])
@pytest.mark.parametrize(("grade", "fractional", "message"), BAD_GRADES,
                         ids=[g for g, _, _ in BAD_GRADES])
def test_bad_grades_name_the_line(tmp_path: Path, layout: str, grade: str, fractional: bool,
                                  message: str) -> None:
    if layout == "beir":
        text, line = f"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t{grade}\n", 3
    else:
        text, line = f"q1 0 d1 1\nq1 0 d2 {grade}\n", 2
        text = text.replace(" ", " \t ") if layout == "irregular" else text
    data = gzip.compress(text.encode()) if layout == "gz" else text.encode()
    p = _write(tmp_path, "q.txt", data)
    with pytest.raises(InputError) as info:
        ragreport.load_qrels(p, fractional_grades=fractional)
    assert str(info.value) == f"{p}:{line}: {message}"


def test_fractional_grades_must_be_a_bool(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^fractional_grades must be True or False, got 'yes'"):
        ragreport.load_qrels(_write(tmp_path, "q.txt", QRELS_LINES), fractional_grades="yes")


# ---- format detection never depends on what an id looks like --------------------------------

@pytest.mark.parametrize("qid", ["qid", "query_id", "query-id", "QID7", "qid\u00e9"])
def test_tab_trec_files_with_header_like_ids_are_trec(tmp_path: Path, qid: str) -> None:
    run = ragreport.load_run(_write(tmp_path, "r.run", f"{qid}\tQ0\td1\t1\t2.5\ttag\n"
                                                       f"{qid}\tQ0\td2\t2\t1.5\ttag\n"))
    assert run.query_ids.to_pylist() == [qid, qid] and run.scores.tolist() == [2.5, 1.5]
    qrels = ragreport.load_qrels(_write(tmp_path, "q.txt", f"{qid}\t0\td1\t1\n{qid}\t0\td2\t0\n"))
    assert qrels.query_ids.to_pylist() == [qid, qid] and qrels.grades.tolist() == [1.0, 0.0]
    # a 3-field tab file whose first id looks like a header name is no BEIR header either
    with pytest.raises(InputError, match=r"q3\.txt:1: expected 4 fields"):
        ragreport.load_qrels(_write(tmp_path, "q3.txt", f"{qid}\td1\t1\n"))


@pytest.mark.parametrize("header", ["query-id\tcorpus-id\tscore", "query_id\tcorpus_id\tscore",
                                    "qid\tdocid\trelevance", "Query-ID\tDoc-ID\tScore\r",
                                    "query-id\tcorpus-id\tlabel"])
def test_beir_is_recognised_by_its_exact_header(tmp_path: Path, header: str) -> None:
    p = _write(tmp_path, "q.tsv", f"{header}\nq1\td1\t1\nq1\td2\t0\nq2\td3\t2\n")
    assert _rows(ragreport.load_qrels(p)) == EXPECTED_QRELS
    with pytest.raises(InputError, match="looks like a BEIR qrels file, not a run"):
        ragreport.load_run(p)


@pytest.mark.parametrize("qid", ["{q1}", "[q1]", "[", "{"])
def test_trec_ids_starting_like_json_are_trec(tmp_path: Path, qid: str) -> None:
    run = ragreport.load_run(_write(tmp_path, "r.run", f"{qid} Q0 d1 1 -1 t\n{qid} Q0 d2 2 -2 t\n"))
    assert run.query_ids.to_pylist() == [qid, qid] and run.scores.tolist() == [-1.0, -2.0]
    qrels = ragreport.load_qrels(_write(tmp_path, "q.txt", f"{qid}\t0\td1\t1\n"))
    assert qrels.query_ids.to_pylist() == [qid]


def test_a_beir_header_must_be_the_first_line(tmp_path: Path) -> None:
    p = _write(tmp_path, "q.tsv", "# judged\nquery-id\tcorpus-id\tscore\nq1\td1\t1\n")
    with pytest.raises(InputError, match=r"q\.tsv:2: expected 4 fields \(qid iter docid grade\), "
                                         r"got 3: 'query-id\\tcorpus-id\\tscore'"):
        ragreport.load_qrels(p)


def test_process_substitution_path_is_read_once() -> None:
    # what bash's <(...) gives: /dev/fd/N, a pipe
    read_fd, write_fd = os.pipe()
    data = gzip.compress(PADDED_RUN.encode())

    def write() -> None:
        with os.fdopen(write_fd, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    try:
        run = ragreport.load_run(f"/dev/fd/{read_fd}")
    finally:
        os.close(read_fd)
    thread.join(10)
    assert _rows(run) == EXPECTED_RUN and _lines(run) == PADDED_LINES


def test_one_block_is_read_without_pyarrow_threads(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    """A TREC input of one block is parsed in the calling thread: pyarrow's pool left with
    tasks by a failed read aborted the interpreter at a quick error exit under load
    (exit 134, 'terminate called without an active exception': 4 of 150 runs of
    ``evaluate q.txt - < run-with-a-bad-score`` with 4 busy cores, 0 of 150 after). Inputs of
    several blocks keep the pool."""
    import pyarrow.csv as pacsv

    from ragreport.io import trec

    seen: list[bool] = []
    real = pacsv.ReadOptions

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("use_threads", True))
        return real(*args, **kwargs)

    monkeypatch.setattr(pacsv, "ReadOptions", spy)
    data = b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\n"
    path = tmp_path / "r.txt"
    path.write_bytes(data)
    trec._arrow_read(data, trec.RUN_COLUMNS, "score", " ")
    trec._arrow_read(str(path), trec.RUN_COLUMNS, "score", " ", block_size=1 << 20)
    trec._arrow_read(data * 100, trec.RUN_COLUMNS, "score", " ", block_size=64)
    trec._arrow_read(str(path), trec.RUN_COLUMNS, "score", " ", block_size=16)
    assert seen == [False, False, True, True]
