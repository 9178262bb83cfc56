"""Tables in (issue 15): Parquet files, pyarrow Tables and RecordBatches, polars and pandas
DataFrames, Hugging Face datasets, ir_datasets named tuples and ``irds:`` ids (a stand-in
``ir_datasets`` module: no network), query and document texts from them.

Every input path must give exactly the TREC-file path's EvaluationResult: the same query ids,
counts and every per-query value of every measure at every K (compared with
``assert_array_equal``, not means), on the embedded example and on generated data with ties,
graded and negative grades, integer ids and fractional grades. Bad values are refused naming
the source and the row.
"""

from __future__ import annotations

import json
import sys
import types
from collections import namedtuple
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from paths import user_docs

import ragreport
from ragreport.errors import InputError
from ragreport.examples import example_files
from ragreport.io.tabular import parse_columns

MEASURES = ["P@5", "R@10", "nDCG@10", "AP", "RR", "Rprec", "F1@5", "HitRate@5", "nDCG"]

TrecQrel = namedtuple("TrecQrel", ["query_id", "doc_id", "relevance", "iteration"])
ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])
GenericQuery = namedtuple("GenericQuery", ["query_id", "text"])
GenericDoc = namedtuple("GenericDoc", ["doc_id", "text"])
TitledDoc = namedtuple("TitledDoc", ["doc_id", "title", "text"])


def assert_same(a: ragreport.EvaluationResult, b: ragreport.EvaluationResult) -> None:
    """Every per-query value of every measure at every K, the query ids and the counts."""
    assert a.query_ids == b.query_ids
    assert a.counts == b.counts
    assert a.k_max == b.k_max
    assert set(a.curves) == set(b.curves) and set(a.scalars) == set(b.scalars)
    for m in a.curves:
        np.testing.assert_array_equal(a.curves[m], b.curves[m], err_msg=str(m))
    for m in a.scalars:
        np.testing.assert_array_equal(a.scalars[m], b.scalars[m], err_msg=str(m))
    for m in MEASURES:
        np.testing.assert_array_equal(a.values(m), b.values(m), err_msg=m)


def evaluate(qrels: Any, run: Any, **kw: Any) -> ragreport.EvaluationResult:
    return ragreport.evaluate(qrels, run, MEASURES, k_max=40, **kw)


# ---- the data: the embedded example and generated data ---------------------------------------

def _trec_rows(path: Path, kind: str) -> tuple[list[str], list[str], list[float]]:
    """Rows of a TREC file as the text reader reads them (ids, and numbers as written)."""
    q, d, v = [], [], []
    for line in path.read_text().splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        q.append(f[0])
        d.append(f[2])
        v.append(float(f[3] if kind == "qrels" else f[4]))
    return q, d, v


def _generated(tmp: Path, seed: int = 7) -> tuple[Path, Path, pa.Table, pa.Table]:
    """Integer query ids, graded and negative grades, many tied scores, unjudged documents,
    a query only in the run and one only in the qrels; TREC files and the same as tables."""
    rng = np.random.default_rng(seed)
    qrows, rrows = [], []
    for q in range(1, 40):
        docs = rng.choice(300, size=60, replace=False)
        if q != 39:  # query 39: run only
            for d in docs[:25]:
                qrows.append((q, f"d{d}", int(rng.choice([-1, 0, 0, 1, 1, 2, 3]))))
        if q != 38:  # query 38: qrels only
            for d in docs[10:55]:
                rrows.append((q, f"d{d}", float(rng.integers(0, 6)) / 4))  # ties
    qtext = "".join(f"{q} 0 {d} {g}\n" for q, d, g in qrows)
    rtext = "".join(f"{q} Q0 {d} {i} {s!r} gen\n" for i, (q, d, s) in enumerate(rrows))
    qp, rp = tmp / "gen.qrels", tmp / "gen.run"
    qp.write_text(qtext)
    rp.write_text(rtext)
    qt = pa.table({"query-id": pa.array([r[0] for r in qrows], pa.int64()),
                   "corpus-id": [r[1] for r in qrows],
                   "score": pa.array([r[2] for r in qrows], pa.int32())})
    rt = pa.table({"query_id": pa.array([r[0] for r in rrows], pa.int32()),
                   "doc_id": [r[1] for r in rrows], "score": [r[2] for r in rrows]})
    return qp, rp, qt, rt


@pytest.fixture(scope="module")
def example() -> dict[str, Any]:
    files = example_files()
    qrels_t = pa.table(dict(zip(("query-id", "corpus-id", "score"),
                                _trec_rows(files.qrels, "qrels"), strict=True)))
    qrels_t = qrels_t.set_column(2, "score", pa.array(
        [int(x) for x in qrels_t["score"].to_pylist()], pa.int64()))
    runs = []
    for path in files.runs:
        q, d, s = _trec_rows(path, "run")
        runs.append(pa.table({"qid": q, "q0": ["Q0"] * len(q), "docid": d,
                              "rank": list(range(1, len(q) + 1)), "score": s,
                              "tag": [ragreport.load_run(path).name] * len(q)}))
    return {"files": files, "qrels": qrels_t, "runs": runs}


def _write(table: pa.Table, path: Path, **kw: Any) -> Path:
    pq.write_table(table, path, **kw)
    return path


# ---- the same numbers as the TREC file, every input path -------------------------------------

_CONVERT: dict[str, Callable[[pa.Table], Any]] = {
    "arrow-table": lambda t: t,
    "record-batch": lambda t: t.combine_chunks().to_batches()[0],
    "chunked-table": lambda t: pa.Table.from_batches(
        [b for i in range(0, t.num_rows, 7) for b in t.slice(i, 7).to_batches()]),
    "polars": lambda t: pl.from_arrow(t),
    "polars-lazy": lambda t: pl.from_arrow(t).lazy(),
    "pandas": lambda t: t.to_pandas(),
    "hf-dataset": lambda t: datasets.Dataset(t),
    "hf-dataset-shuffled-back": lambda t: datasets.Dataset(t).select(range(t.num_rows)),
}


@pytest.mark.parametrize("kind", list(_CONVERT))
def test_example_objects_same_as_trec_files(example: dict[str, Any], kind: str) -> None:
    files = example["files"]
    convert = _CONVERT[kind]
    for path, table in zip(files.runs, example["runs"], strict=True):
        want = evaluate(files.qrels, path)
        got = evaluate(convert(example["qrels"]), convert(table))
        assert_same(want, got)


def test_example_parquet_files_same_as_trec_files(example: dict[str, Any],
                                                  tmp_path: Path) -> None:
    files = example["files"]
    qp = _write(example["qrels"], tmp_path / "qrels.parquet")
    for path, table in zip(files.runs, example["runs"], strict=True):
        rp = _write(table, tmp_path / f"{path.stem}.parquet", row_group_size=100)
        want, got = evaluate(files.qrels, path), evaluate(qp, rp)
        assert_same(want, got)
        assert got.run_name == want.run_name  # the tag column, as the TREC reader's tag
        assert ragreport.load_run(rp, name="x").name == "x"
        # read from a path object and with format="parquet"
        assert_same(want, evaluate(ragreport.load_qrels(str(qp), format="parquet"),
                                   ragreport.load_run(Path(rp))))


def test_example_named_tuples_same_as_trec_files(example: dict[str, Any]) -> None:
    files = example["files"]
    qrels = [TrecQrel(q, d, int(g), "0")
             for q, d, g in zip(*_trec_rows(files.qrels, "qrels"), strict=True)]
    for path in files.runs:
        run = [ScoredDoc(*row) for row in zip(*_trec_rows(path, "run"), strict=True)]
        want = evaluate(files.qrels, path)
        assert_same(want, evaluate(qrels, run))
        assert_same(want, evaluate(iter(qrels), (r for r in run)))  # generators


def test_generated_ties_and_grades_every_path(tmp_path: Path) -> None:
    qp, rp, qt, rt = _generated(tmp_path)
    want = evaluate(qp, rp)
    assert want.counts.run_only >= 1 and want.counts.qrels_only >= 1
    assert_same(want, evaluate(qp, rp, complete=True) and want)  # sanity of the helper
    for convert in _CONVERT.values():
        assert_same(want, evaluate(convert(qt), convert(rt)))
    qpq, rpq = _write(qt, tmp_path / "q.parquet"), _write(rt, tmp_path / "r.parquet")
    assert_same(want, evaluate(qpq, rpq))
    for extra in ({"complete": True}, {"rel_level": 2}, {"max_depth": 7}):
        assert_same(evaluate(qp, rp, **extra), evaluate(qpq, rpq, **extra))
    # integer ids are read as their decimal text, as the TREC reader reads them
    assert ragreport.load_qrels(qpq).query_ids.to_pylist()[:2] == \
        ragreport.load_qrels(qp).query_ids.to_pylist()[:2]
    # named tuples with integer ids
    qn = [TrecQrel(*r, 0) for r in zip(*(qt[c].to_pylist() for c in qt.column_names),
                                       strict=True)]
    rn = [ScoredDoc(*r) for r in zip(*(rt[c].to_pylist() for c in rt.column_names),
                                     strict=True)]
    assert_same(want, evaluate(qn, rn))


def test_generated_fractional_grades(tmp_path: Path) -> None:
    qrels = "q1 0 a 1.5\nq1 0 b 0.25\nq1 0 c 2.75\nq2 0 a 0.5\nq2 0 d 1\n"
    run = "q1 Q0 a 1 1 t\nq1 Q0 c 2 1 t\nq1 Q0 b 3 0.5 t\nq2 Q0 d 1 3 t\nq2 Q0 a 2 2 t\n"
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    qt = pa.table({"qid": ["q1", "q1", "q1", "q2", "q2"], "docid": list("abcad"),
                   "relevance": [1.5, 0.25, 2.75, 0.5, 1.0]})
    rt = pa.table({"qid": ["q1"] * 3 + ["q2"] * 2, "docid": list("acbda"),
                   "score": [1.0, 1, 0.5, 3, 2]})
    for fractional in (False, True):
        want = evaluate(tmp_path / "q", tmp_path / "r", fractional_grades=fractional)
        assert_same(want, evaluate(qt, rt, fractional_grades=fractional))
        assert_same(want, evaluate(qt.to_pandas(), pl.from_arrow(rt),
                                   fractional_grades=fractional))
    # grades given as text are read as the text reader reads them
    qs = qt.set_column(2, "relevance", pa.array(["1.5", "0.25", "2.75", ".5", "+1"]))
    assert_same(evaluate(tmp_path / "q", tmp_path / "r"), evaluate(qs, rt))


def test_dictionary_large_string_and_decimal_columns(example: dict[str, Any]) -> None:
    files = example["files"]
    qt, rt = example["qrels"], example["runs"][0]
    want = evaluate(files.qrels, files.runs[0])
    q2 = pa.table({"query-id": qt["query-id"].dictionary_encode(),
                   "corpus-id": qt["corpus-id"].cast(pa.large_string()),
                   "score": qt["score"].cast(pa.int8())})
    r2 = pa.table({"qid": rt["qid"].cast(pa.string_view()),
                   "docid": rt["docid"].dictionary_encode(),
                   "score": rt["score"].cast(pa.float32()).cast(pa.float64())})
    r2 = r2.set_column(2, "score", rt["score"])
    assert_same(want, evaluate(q2, r2))
    # polars categoricals
    assert_same(want, evaluate(pl.from_arrow(qt).with_columns(pl.col("query-id").cast(
        pl.Categorical)), pl.from_arrow(rt)))
    # scores given as text
    assert_same(want, evaluate(qt, rt.set_column(4, "score", pa.array(
        [repr(x) for x in rt["score"].to_pylist()]))))


# ---- layouts and columns= ----------------------------------------------------------------------

@pytest.mark.parametrize("names", [
    ("qid", "docid", "score", "relevance"),
    ("query-id", "corpus-id", "score", "score"),
    ("query_id", "doc_id", "score", "relevance"),
    ("q_id", "doc_id", "score", "rel"),
    ("qid", "docno", "score", "label"),
    ("QueryId", "Doc-ID", "Score", "Grade"),
])
def test_layouts_found(names: tuple[str, str, str, str]) -> None:
    q, d, s, g = names
    qrels = ragreport.load_qrels(pa.table({q: ["1", "1"], d: ["a", "b"], g: [1, 0]}))
    run = ragreport.load_run(pa.table({q: ["1"], d: ["a"], s: [0.5], "extra": ["x"]}))
    assert qrels.grades.tolist() == [1.0, 0.0] and run.scores.tolist() == [0.5]


def test_pyterrier_results_frame(example: dict[str, Any]) -> None:
    """PyTerrier's retrieval results carry both ``docid`` (its index's internal number) and
    ``docno`` (the document's id): docno is read, and the numbers are the TREC file's."""
    files = example["files"]
    t = example["runs"][0]
    frame = pd.DataFrame({"qid": t["qid"].to_pylist(), "docid": range(t.num_rows),
                          "docno": t["docid"].to_pylist(),
                          "rank": [r - 1 for r in t["rank"].to_pylist()],
                          "score": t["score"].to_pylist(), "query": "text"})
    run = ragreport.load_run(frame)
    assert run.doc_ids.to_pylist() == t["docid"].to_pylist()
    assert_same(evaluate(files.qrels, frame), evaluate(files.qrels, files.runs[0]))
    # named explicitly, the internal number is read as asked
    assert ragreport.load_run(frame, columns={"docid": "docid"}).doc_ids[0].as_py() == "0"


def test_columns_explicit() -> None:
    t = pa.table({"topic": ["q1", "q1"], "passage": ["a", "b"], "sim": [0.3, 0.9],
                  "qrel": [0, 2]})
    run = ragreport.load_run(t, columns={"qid": "topic", "docid": "passage", "score": "sim"})
    assert run.scores.tolist() == [0.3, 0.9]
    qrels = ragreport.load_qrels(t, columns="qid=topic,docid=passage,rel=qrel")
    assert qrels.grades.tolist() == [0.0, 2.0]
    # score= names the qrels' grade column when no grade column is found (MTEB's name)
    t2 = pa.table({"q": ["q1"], "d": ["a"], "s": [3]})
    assert ragreport.load_qrels(t2, columns="qid=q,docid=d,score=s").grades.tolist() == [3.0]
    assert parse_columns({"query_id": "a", "doc": "b", "grade": "c"}) == {
        "qid": "a", "docid": "b", "relevance": "c"}


def test_columns_errors(tmp_path: Path) -> None:
    t = pa.table({"qid": ["q1"], "query_id": ["q1"], "docid": ["a"], "score": [1.0]})
    p = _write(t, tmp_path / "amb.parquet")
    with pytest.raises(InputError) as info:
        ragreport.load_run(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}: the file has several query id columns ('qid', 'query_id'); ")
    assert "--columns qid=NAME" in msg and "its columns: 'qid', 'query_id', 'docid'" in msg
    assert "\n" not in msg
    assert_same_run = ragreport.load_run(p, columns={"qid": "query_id"})
    assert assert_same_run.query_ids.to_pylist() == ["q1"]
    with pytest.raises(InputError) as info:
        ragreport.load_run(pa.table({"qid": ["q1"], "docid": ["a"]}))
    msg = str(info.value)
    assert msg.startswith("run (Table): Table has no score column (its columns: 'qid', "
                          "'docid'; layouts read: TREC (qid, docid, score or relevance), "
                          "MTEB/BEIR (query-id, corpus-id, score)")
    assert "\n" not in msg
    with pytest.raises(InputError, match=r"^run \(DataFrame\): DataFrame has no score column"):
        ragreport.load_run(pd.DataFrame({"qid": ["q1"], "doc_id": ["d1"]}))
    with pytest.raises(InputError, match=r"has no column 'nope' \(given as docid=\.\.\.\); "
                                         r"its columns: 'qid', 'query_id', 'docid', 'score'$"):
        ragreport.load_run(p, columns={"qid": "qid", "docid": "nope"})
    with pytest.raises(InputError, match=r"^columns: unknown key 'query_text'; the keys are"):
        ragreport.load_run(p, columns={"query_text": "x"})
    with pytest.raises(InputError, match=r"^columns: expected NAME=COLUMN, got 'qid'$"):
        ragreport.load_run(p, columns="qid")
    with pytest.raises(InputError, match=r"one column is read for two roles"):
        ragreport.load_run(p, columns="qid=qid,docid=qid")
    with pytest.raises(InputError, match=r"columns= applies to tables .*, not to this input"):
        ragreport.load_run({"q1": ["a"]}, columns={"qid": "x"})
    trec = tmp_path / "run.txt"
    trec.write_text("q1 Q0 a 1 1 t\n")
    with pytest.raises(InputError, match=r"run.txt: columns= applies to tables"):
        ragreport.load_run(trec, columns={"qid": "x"})


# ---- bad values: one line naming the source and the row ----------------------------------------

@pytest.mark.parametrize(("table", "kind", "message"), [
    ({"qid": ["q1", None], "docid": ["a", "b"], "score": [1.0, 2.0]}, "run",
     r"^{src}: row 2: query id is null$"),
    ({"qid": ["q1", "q1"], "docid": ["a", "  "], "score": [1.0, 2.0]}, "run",
     r"^{src}: row 2: document id is empty$"),
    ({"qid": ["q1", "q1", "q1"], "docid": ["a", "b", "c"], "score": [1.0, float("nan"), 2]},
     "run", r"^{src}: row 2: score nan of document 'b' \(query 'q1'\) is not a finite "
            r"number$"),
    ({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [1.0, float("-inf")]}, "run",
     r"^{src}: row 2: score -inf of document 'b' \(query 'q1'\) is not a finite number$"),
    ({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [1.0, None]}, "run",
     r"^{src}: row 2: score None of document 'b' \(query 'q1'\) is missing \(null\)$"),
    ({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": ["1.5", "high"]}, "run",
     r"^{src}: row 2: score 'high' of document 'b' \(query 'q1'\) is not a number$"),
    ({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": ["1.5", "1_0"]}, "run",
     r"^{src}: row 2: score '1_0' of document 'b' \(query 'q1'\) is not a plain decimal"),
    ({"qid": ["q1"], "docid": ["a"], "score": [True]}, "run",
     r"^{src}: score column 'score' holds bool values; scores must be numbers$"),
    ({"qid": [1.0], "docid": ["a"], "score": [1.0]}, "run",
     r"^{src}: query id column 'qid' holds double values; ids must be text or integers$"),
    ({"qid": ["q1", "q1"], "docid": ["a", "b"], "relevance": [1, 2**60]}, "qrels",
     r"^{src}: row 2: grade 1\.152921504606847e\+18 of document 'b' \(query 'q1'\) is too "
     r"large for a grade"),
    ({"qid": ["q1", "q1"], "docid": ["a", "b"], "relevance": ["1", "1e3"]}, "qrels",
     r"^{src}: row 2: grade '1e3' of document 'b' \(query 'q1'\) is in exponent notation"),
    ({"qid": ["q1", "q1", "q2"], "docid": ["a", "b", "a"], "relevance": [1, 2, 3]}, "qrels",
     None),
])
def test_bad_values_name_the_row(tmp_path: Path, table: dict[str, Any], kind: str,
                                 message: str | None) -> None:
    t = pa.table(table)
    p = _write(t, tmp_path / "bad.parquet")
    load = ragreport.load_run if kind == "run" else ragreport.load_qrels
    if message is None:
        load(p)
        return
    for obj, src in ((p, str(p)), (t, f"{kind} \\(Table\\)"), (pl.from_arrow(t),
                                                               f"{kind} \\(DataFrame\\)")):
        with pytest.raises(InputError, match=message.format(src=src)):
            load(obj)


def test_duplicates_name_rows(tmp_path: Path) -> None:
    qrels = _write(pa.table({"qid": ["q1", "q1", "q1"], "docid": ["a", "b", "a"],
                             "relevance": [1, 0, 2]}), tmp_path / "q.parquet")
    run = _write(pa.table({"qid": ["q1", "q1", "q1"], "docid": ["a", "b", "b"],
                           "score": [3.0, 2, 1]}), tmp_path / "r.parquet")
    good_q = {"q1": {"a": 1}}
    with pytest.raises(InputError, match=rf"^{qrels}: row 3: document 'a' is judged twice for "
                                         r"query 'q1' \(first at row 1\)$"):
        ragreport.evaluate(qrels, {"q1": ["a"]})
    with pytest.raises(InputError, match=rf"^{run}: row 3: document 'b' appears twice for query "
                                         r"'q1' \(first at row 2\); pass duplicates='first'"):
        ragreport.evaluate(good_q, run)
    kept = ragreport.evaluate(good_q, run, duplicates="first")
    assert kept.counts.duplicates_dropped == 1


def test_mixed_types_in_a_pandas_column() -> None:
    """pyarrow cannot type a column of ints and strings: read one by one, naming the row."""
    df = pd.DataFrame({"qid": [1, "q2"], "docid": ["a", "b"], "score": [1.0, 2.0]})
    assert ragreport.load_run(df).query_ids.to_pylist() == ["1", "q2"]
    bad = pd.DataFrame({"qid": ["q1", 2.5], "docid": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match=r"^run \(DataFrame\): row 2: query id must be a string "
                                         r"or an integer, got 2\.5$"):
        ragreport.load_run(bad)
    bad = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [1.0, "x"]})
    with pytest.raises(InputError, match=r"^run \(DataFrame\): row 2: score 'x' of document 'b' "
                                         r"\(query 'q1'\) is not a number$"):
        ragreport.load_run(bad)


def test_empty_and_unreadable(tmp_path: Path) -> None:
    empty = pa.table({"qid": pa.array([], pa.string()), "docid": pa.array([], pa.string()),
                      "score": pa.array([], pa.float64())})
    with pytest.raises(InputError, match=r"^run \(Table\): no retrieved documents found$"):
        ragreport.load_run(empty)
    with pytest.raises(InputError, match=r"^qrels \(list\): no judgments found$"):
        ragreport.load_qrels([])
    with pytest.raises(InputError, match=r"^qrels \(generator\): no judgments found$"):
        ragreport.load_qrels(x for x in ())
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1" + b"\x00" * 20)
    with pytest.raises(InputError, match=rf"^{broken}: cannot read as Parquet: "):
        ragreport.load_run(broken)
    with pytest.raises(InputError, match=r"DatasetDict holds several splits \(test\); give one"):
        ragreport.load_qrels(datasets.DatasetDict({"test": datasets.Dataset(empty)}))
    with pytest.raises(InputError, match=r"^qrels \(list\): row 2: every item must be a named "
                                         r"tuple with the fields query_id, doc_id, relevance"):
        ragreport.load_qrels([TrecQrel("q1", "a", 1, "0"), ("q1", "b", 1)])


def test_parquet_from_standard_input_source(tmp_path: Path, example: dict[str, Any]) -> None:
    from ragreport.io.common import Source

    p = _write(example["runs"][0], tmp_path / "r.parquet")
    run = ragreport.load_run(Source("<stdin>", p.read_bytes()))
    assert run.source == "<stdin>" and len(run) == example["runs"][0].num_rows


# ---- ir_datasets ---------------------------------------------------------------------------------

@pytest.fixture
def fake_ir_datasets(monkeypatch: pytest.MonkeyPatch, example: dict[str, Any]) -> Any:
    """A stand-in ``ir_datasets`` with one dataset: the embedded example."""
    files = example["files"]
    qrels = [TrecQrel(q, d, int(g), "0")
             for q, d, g in zip(*_trec_rows(files.qrels, "qrels"), strict=True)]
    run = [ScoredDoc(*row) for row in zip(*_trec_rows(files.runs[0], "run"), strict=True)]
    queries = [GenericQuery(k, v) for k, v in ragreport.load_queries(files.queries).items()]
    docs = [GenericDoc(k, v) for k, v in ragreport.load_docs(files.docs).items()]

    class Dataset:
        def qrels_iter(self) -> Iterator[TrecQrel]:
            return iter(qrels)

        def scoreddocs_iter(self) -> Iterator[ScoredDoc]:
            return iter(run)

        def queries_iter(self) -> Iterator[GenericQuery]:
            return iter(queries)

        def docs_iter(self) -> Iterator[GenericDoc]:
            return iter(docs)

        def has_scoreddocs(self) -> bool:
            return True

    def load(name: str) -> Dataset:
        if name != "pydoc/example":
            raise KeyError(name)
        return Dataset()

    module = types.ModuleType("ir_datasets")
    module.load = load  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ir_datasets", module)
    return Dataset


def test_irds_ids(fake_ir_datasets: Any, example: dict[str, Any]) -> None:
    files = example["files"]
    want = evaluate(files.qrels, files.runs[0])
    got = evaluate("irds:pydoc/example", "irds:pydoc/example")
    assert_same(want, got)
    assert ragreport.load_qrels("irds:pydoc/example").source == "irds:pydoc/example"
    assert_same(want, evaluate(fake_ir_datasets(), fake_ir_datasets()))  # dataset objects
    assert ragreport.load_queries("irds:pydoc/example") == ragreport.load_queries(files.queries)
    assert ragreport.load_docs("irds:pydoc/example") == ragreport.load_docs(files.docs)
    with pytest.raises(InputError, match=r"^irds:nope: ir_datasets has no dataset 'nope'$"):
        ragreport.load_qrels("irds:nope")


def test_irds_download_failure_is_an_input_error(fake_ir_datasets: Any,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """ir_datasets downloads while its iterator runs: a failure there (offline) is one line
    naming the id, not an internal error of ragreport."""
    def offline(self: Any) -> Iterator[Any]:
        yield TrecQrel("q1", "d1", 1, "0")
        raise ConnectionError("Failed to resolve 'ir-datasets.com'\nsecond line")

    monkeypatch.setattr(fake_ir_datasets, "qrels_iter", offline)
    with pytest.raises(InputError, match=r"^irds:pydoc/example: ir_datasets could not read the "
                                         r"qrels: ConnectionError: Failed to resolve "
                                         r"'ir-datasets\.com'$"):
        ragreport.load_qrels("irds:pydoc/example")
    from ragreport.cli.app import main

    assert main(["evaluate", "irds:pydoc/example", "irds:pydoc/example"]) == 2
    assert capsys.readouterr().err == (
        "ragreport: error: irds:pydoc/example: ir_datasets could not read the qrels: "
        "ConnectionError: Failed to resolve 'ir-datasets.com'\n")


def test_irds_without_ir_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import fails
    with pytest.raises(InputError) as info:
        ragreport.load_qrels("irds:msmarco-passage/dev/small")
    assert str(info.value) == ("reading 'irds:msmarco-passage/dev/small' needs ir_datasets: "
                               "pip install ir_datasets")


def _irds_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from ragreport.cli.app import main

    monkeypatch.chdir(tmp_path)
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["report", "check"])
def test_irds_ids_in_report_and_check(fake_ir_datasets: Any, example: dict[str, Any],
                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str], command: str) -> None:
    """``report`` and ``check`` read ``irds:`` ids as ``evaluate`` does (they tried to hash
    them as files: 'cannot read irds:...: No such file or directory'); the same numbers as the
    TREC files; the inputs record the id and the fingerprint of what was read."""
    from ragreport.analysis.drift import content_sha256, judgments_sha256

    files = example["files"]
    ident = "irds:pydoc/example"
    common = ["--no-stats", "--jobs", "1", "--generated-at", "2026-01-01T00:00:00Z",
              "--per-query", "--name", "r"]
    code, _, err = _irds_cli(tmp_path, monkeypatch, capsys, command, ident, ident,
                             "--queries", ident, "--json", "irds.json", *common)
    assert code in (0, 1) and "error" not in err, err
    code2, _, err = _irds_cli(tmp_path, monkeypatch, capsys, command, str(files.qrels),
                              str(files.runs[0]), "--queries", str(files.queries),
                              "--json", "trec.json", *common)
    assert code2 == code, err
    got = json.loads((tmp_path / "irds.json").read_text())
    want = json.loads((tmp_path / "trec.json").read_text())
    for key in ("means", "per_query", "targets", "curves", "worst_queries", "counts"):
        assert got[key] == want[key], key
    inputs = {f["role"]: f for f in got["inputs"]}
    assert inputs["qrels"]["name"] == inputs["qrels"]["path"] == ident
    assert inputs["qrels"]["sha256"] == judgments_sha256(ragreport.load_qrels(files.qrels))
    assert inputs["run"]["sha256"] == content_sha256(ragreport.load_run(ident))
    assert inputs["queries"]["sha256"] == content_sha256(ragreport.load_queries(files.queries))
    assert inputs["qrels"]["judgments_sha256"] == inputs["qrels"]["sha256"]


@pytest.mark.parametrize("command", ["report", "check"])
def test_irds_ids_hostile_in_report_and_check(
        fake_ir_datasets: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], command: str) -> None:
    """An unknown id, a failed download, ir_datasets not installed: exit 2, one line naming
    the id (and what to install), nothing written."""
    argv = [command, "irds:nope", "irds:nope", "--no-stats", "--jobs", "1", "--json", "o.json"]
    code, _, err = _irds_cli(tmp_path, monkeypatch, capsys, *argv)
    assert (code, err) == (2, "ragreport: error: irds:nope: ir_datasets has no dataset "
                              "'nope'\n")
    assert not (tmp_path / "o.json").exists()

    def offline(self: Any) -> Iterator[Any]:
        raise ConnectionError("Failed to resolve 'ir-datasets.com'\nsecond line")
        yield  # a generator, as ir_datasets' iterators are

    monkeypatch.setattr(fake_ir_datasets, "scoreddocs_iter", offline)
    argv[1:3] = ["irds:pydoc/example", "irds:pydoc/example"]
    code, _, err = _irds_cli(tmp_path, monkeypatch, capsys, *argv)
    assert (code, err) == (2, "ragreport: error: irds:pydoc/example: ir_datasets could not "
                              "read the scored documents: ConnectionError: Failed to resolve "
                              "'ir-datasets.com'\n")
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # not installed
    code, _, err = _irds_cli(tmp_path, monkeypatch, capsys, *argv)
    assert (code, err) == (2, "ragreport: error: reading 'irds:pydoc/example' needs "
                              "ir_datasets: pip install ir_datasets\n")
    assert not (tmp_path / "o.json").exists()


# ---- texts -------------------------------------------------------------------------------------

def test_texts_from_tables(tmp_path: Path, example: dict[str, Any]) -> None:
    files = example["files"]
    queries = ragreport.load_queries(files.queries)
    docs = ragreport.load_docs(files.docs)  # JSONL with titles joined
    qt = pa.table({"_id": list(queries), "text": list(queries.values())})
    p = _write(qt, tmp_path / "queries.parquet")
    assert ragreport.load_queries(p) == queries
    assert ragreport.load_queries(datasets.Dataset(qt)) == queries
    assert ragreport.load_queries(pl.from_arrow(qt)) == queries
    assert ragreport.load_queries(qt.to_pandas()) == queries
    assert ragreport.load_queries([GenericQuery(*kv) for kv in queries.items()]) == queries
    # MTEB's corpus layout: _id, title, text; the title joined as the JSONL reader joins it
    corpus = pa.table({"_id": ["d1", "d2", "d3"], "title": ["Lists", "", None],
                       "text": ["A list is mutable.", "No title.", "Null title."]})
    want = {"d1": "Lists\nA list is mutable.", "d2": "No title.", "d3": "Null title."}
    assert ragreport.load_docs(_write(corpus, tmp_path / "corpus.parquet")) == want
    assert ragreport.load_docs(datasets.Dataset(corpus)) == want
    assert ragreport.load_docs([TitledDoc("d1", "Lists", "A list is mutable.")]) == \
        {"d1": "Lists\nA list is mutable."}
    assert docs == ragreport.load_docs(pa.table({"doc_id": list(docs), "text": list(
        docs.values())}))
    # queries as (query_id, query), integer ids, columns=
    assert ragreport.load_queries(pa.table({"query_id": [1, 2], "query": ["a", "b"]})) == \
        {"1": "a", "2": "b"}
    assert ragreport.load_queries(pa.table({"k": ["q"], "v": ["t"]}),
                                  columns={"id": "k", "text": "v"}) == {"q": "t"}


def test_texts_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^queries \(Table\): row 2: text is null$"):
        ragreport.load_queries(pa.table({"_id": ["a", "b"], "text": ["x", None]}))
    with pytest.raises(InputError, match=r"^docs \(Table\): row 1: id is null$"):
        ragreport.load_docs(pa.table({"_id": [None, "b"], "text": ["x", "y"]}))
    p = _write(pa.table({"_id": ["a"], "body2": ["x"]}), tmp_path / "t.parquet")
    with pytest.raises(InputError, match=rf"^{p}: the file has no text column \(its columns: "
                                         r"'_id', 'body2'; layouts read: "):
        ragreport.load_docs(p)


# ---- the command line ------------------------------------------------------------------------

def test_cli_parquet_and_columns(tmp_path: Path, example: dict[str, Any],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    from ragreport.cli.app import main

    files = example["files"]
    renamed = example["runs"][0].rename_columns(["topic", "q0", "passage", "rank", "sim", "tag"])
    rp = _write(renamed, tmp_path / "run.parquet")
    qp = _write(example["qrels"], tmp_path / "qrels.parquet")
    args = ["evaluate", "--format", "trec", "-m", "ndcg_cut.10", "-m", "P.5", "-m", "map"]
    assert main([*args, str(files.qrels), str(files.runs[0])]) == 0
    want = capsys.readouterr().out
    assert main([*args, str(qp), str(rp), "--columns", "qid=topic,docid=passage,score=sim"]) \
        == 0
    assert capsys.readouterr().out == want
    assert main([*args, str(files.qrels), str(rp), "--columns", "qid=nope"]) == 2
    err = capsys.readouterr().err
    assert err == ("ragreport: error: --columns qid=nope: no Parquet input has a column "
                   f"'nope' (columns of {rp}: 'topic', 'q0', 'passage', 'rank', 'sim', "
                   "'tag')\n")
    # a Parquet qrels beside a TREC run
    assert main([*args, str(qp), str(files.runs[0])]) == 0
    assert capsys.readouterr().out == want
    assert main([*args, str(files.qrels), str(files.runs[0]), "--columns", "qid=x"]) == 2
    assert capsys.readouterr().err == ("ragreport: error: --columns applies to Parquet inputs, "
                                       "and no QRELS or RUN is a Parquet file\n")


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    """The README's Parquet/polars example, as written (its assert: the same numbers)."""
    readme = user_docs()
    section = readme.split("### Parquet, Arrow, polars and Hugging Face inputs", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "qrels.parquet").read_bytes()[:4] == b"PAR1"
    # the command line after it, on the files it wrote: the TREC files' numbers
    import shlex

    from ragreport.examples import example_files

    shell = section.split("```sh\n", 1)[1].split("```", 1)[0]
    (line,) = [ln for ln in shell.splitlines() if "hits.parquet" in ln]
    args = shlex.split(line)
    assert args[0] == "ragreport"
    capsys.readouterr()
    from ragreport.cli.app import main

    assert main([*args[1:], "-m", "nDCG@10", "-m", "R@5", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    files = example_files()
    want = ragreport.evaluate(files.qrels, files.runs[0], ["nDCG@10", "R@5"]).means()
    assert got["run"] == "hits" and got["means"] == want, got


def test_odd_tables(tmp_path: Path, example: dict[str, Any]) -> None:
    files = example["files"]
    table = example["runs"][0]
    want = evaluate(files.qrels, files.runs[0])
    assert_same(want, evaluate(example["qrels"], pa.RecordBatchReader.from_batches(
        table.schema, table.to_batches())))
    with pytest.raises(InputError, match=r"^run \(DataFrame\): DataFrame has 2 columns named "
                                         r"'score'$"):
        ragreport.load_run(pd.DataFrame([["q1", "a", 1.0, 2.0]],
                                        columns=["qid", "docid", "score", "score"]))
    dup = pa.Table.from_arrays([pa.array(["q"]), pa.array(["q"]), pa.array(["a"]),
                                pa.array([1.0])], names=["qid", "qid", "docid", "score"])
    with pytest.raises(InputError, match=r"^run \(Table\): Table has 2 columns named 'qid'$"):
        ragreport.load_run(dup)
    with pytest.raises(InputError, match=r"^run \(LazyFrame\): cannot read the polars LazyFrame "
                                         r"as a table: ColumnNotFoundError: "):
        ragreport.load_run(pl.LazyFrame({"qid": ["q"]}).select(pl.col("nope")))
    with pytest.raises(InputError, match=r"^run \(Series\): cannot read run from a polars Series"):
        ragreport.load_run(pl.Series([1]))
    with pytest.raises(InputError, match=r"^run \(Series\): cannot read run from a pandas Series"):
        ragreport.load_run(pd.Series([1]))
    with pytest.raises(InputError, match=r"run_bm25.txt: cannot read as Parquet: Parquet magic"):
        ragreport.load_run(files.runs[0], format="parquet")


def test_rank_without_score(example: dict[str, Any]) -> None:
    """A run table with a rank column and no score is ranked by rank, as the ranked lists of
    the object reader are (``{q: [d1, d2]}``): the same values, no scores shown."""
    files = example["files"]
    table = example["runs"][0].drop_columns(["score"])
    by_rank = ragreport.load_run(table)
    assert not by_rank.has_scores and by_rank.scores[:2].tolist() == [-1.0, -2.0]
    lists: dict[str, list[str]] = {}
    for q, d in zip(table["qid"].to_pylist(), table["docid"].to_pylist(), strict=True):
        lists.setdefault(q, []).append(d)
    assert_same(evaluate(files.qrels, lists), evaluate(files.qrels, by_rank))
    bad = table.set_column(3, "rank", pa.array([1.0, float("nan")] + [3.0] * (len(table) - 2)))
    with pytest.raises(InputError, match=r"^run \(Table\): row 2: rank nan of document "):
        ragreport.load_run(bad)
    with pytest.raises(InputError, match=r"Table has no score column"):
        ragreport.load_run(table.drop_columns(["rank"]))


def test_irds_queries_and_docs_beside_per_query_results(fake_ir_datasets: Any,
                                                        example: dict[str, Any],
                                                        tmp_path: Path) -> None:
    """``report --per-query-in`` reads the query and document texts from an ``irds:`` id as
    ``report QRELS RUN`` does (it hashed the id as a file: 'No such file or directory')."""
    from ragreport.cli.app import main

    files = example["files"]
    shard = tmp_path / "pq.parquet"
    assert main(["evaluate", str(files.qrels), str(files.runs[0]),
                 "--per-query-out", str(shard)]) == 0
    out = tmp_path / "out.json"
    assert main(["report", "--per-query-in", str(shard), "--queries", "irds:pydoc/example",
                 "--docs", "irds:pydoc/example", "--no-stats", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    roles = {f["role"]: f for f in data["inputs"]}
    for role in ("queries", "docs"):
        assert roles[role]["name"] == "irds:pydoc/example" and len(roles[role]["sha256"]) == 64
    # the same fingerprints as the files with the same texts give through the QRELS RUN path
    direct = tmp_path / "direct.json"
    assert main(["report", "irds:pydoc/example", "irds:pydoc/example", "--queries",
                 "irds:pydoc/example", "--docs", "irds:pydoc/example", "--no-stats",
                 "--json", str(direct)]) == 0
    want = {f["role"]: f["sha256"] for f in json.loads(direct.read_text())["inputs"]}
    assert roles["queries"]["sha256"] == want["queries"]
    assert roles["docs"]["sha256"] == want["docs"]


def test_a_run_given_as_qrels_in_mteb_layout_is_refused() -> None:
    """Qrels and run in MTEB's layout have the same columns (query-id, corpus-id, score): a
    score that is not a whole number in the qrels means they were swapped (it was read as
    grade 0, every query without a relevant document, every measure 0)."""
    run_like = pa.table({"query-id": ["q1", "q1"], "corpus-id": ["a", "b"],
                         "score": [1.0, 0.8312]})
    with pytest.raises(InputError, match=r"row 2: the qrels' grade column 'score' holds "
                                         r"0\.8312 \(document 'b', query 'q1'\), not a whole "
                                         r"number: is this the run\?"):
        ragreport.load_qrels(run_like)
    # whole grades stored as floats, fractional grades asked for, or a relevance column
    assert ragreport.load_qrels(pa.table({"query-id": ["q"], "corpus-id": ["a"],
                                          "score": [2.0]})).grades.tolist() == [2.0]
    assert ragreport.load_qrels(run_like, fractional_grades=True).grades.tolist() == [1.0,
                                                                                      0.8312]
    assert ragreport.load_qrels(pa.table({"qid": ["q"], "docid": ["a"], "relevance": [1.7]})
                                ).grades.tolist() == [1.0]
