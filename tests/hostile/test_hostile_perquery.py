"""Hostile-input catalogue, area "per-query results": ``evaluate --per-query-out`` and
``report`` / ``check --per-query-in`` (:mod:`ragreport.core.perquery`).

Each row runs ``ragreport`` in a fresh folder (see ``tests/hostile.py``): a corrupt Parquet
file, a Parquet file of another schema (a run), a newer schema version, an empty directory, a
glob that matches nothing, a missing path, a query in two shards, shards with different
conventions or measures, a directory mixing a shard and a run, a truncated curve, a target on a
measure the shards lack, evaluation options or QRELS/RUN beside ``--per-query-in``, and
``--per-query-out`` over an input, into a missing folder or with ``--stream``: exit 2 with one
stderr line naming the file (and row) and what was wrong; inputs are never changed; a shard
with zero rows (filtered) is refused as a missing shard. A Spark-like folder
(``part-*.parquet`` beside ``_SUCCESS``) and an engine's folder with an empty part are read.
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import QRELS, RUN, Case, run_case

from ragreport import evaluate
from ragreport.core.perquery import to_table


def _bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _shard(queries: list[str], **options: object) -> pa.Table:
    qrels = {q: docs for q, docs in _nested(QRELS).items() if q in queries}
    run = {q: docs for q, docs in _nested_run(RUN).items() if q in queries}
    return to_table(evaluate(qrels, run, ["P@2", "nDCG@3"], name="tag", **options))


def _nested(text: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        q, _, d, g = line.split()
        out.setdefault(q, {})[d] = int(g)
    return out


def _nested_run(text: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        q, _, d, _, s, _ = line.split()
        out.setdefault(q, {})[d] = float(s)
    return out


WHOLE = _bytes(_shard(["q1", "q2", "q3"]))
PART1 = _bytes(_shard(["q1"]))
PART23 = _bytes(_shard(["q2", "q3"]))
COMPLETE23 = _bytes(_shard(["q2", "q3"], complete=True))
_t = _shard(["q1", "q2", "q3"])
NEWER = _bytes(_t.replace_schema_metadata({**_t.schema.metadata, b"ragreport.version": b"2"}))
SHORT = _bytes(_t.set_column(_t.column_names.index("P@K"), "P@K",
                             pa.array([[0.5], *_t.column("P@K").to_pylist()[1:]],
                                      pa.list_(pa.float64()))))
FEWER = _bytes(to_table(evaluate({q: d for q, d in _nested(QRELS).items() if q != "q1"},
                                 {q: d for q, d in _nested_run(RUN).items() if q != "q1"},
                                 ["P@2"], k_max=3, name="tag")))
OTHER = _bytes(to_table(evaluate(_nested(QRELS), _nested_run(RUN), ["P@2", "nDCG@3"],
                                  name="other")))
ZERO_ROWS = _bytes(_t.slice(0, 0))  # a shard filtered to nothing: its counts say 3
# the files of one engine evaluation: each carries the whole evaluation's metadata (counts
# included) under one evaluation id; a partition without rows writes an empty file
_engine = _t.replace_schema_metadata({**_t.schema.metadata,
                                      b"ragreport.evaluation": b'"e1"'})
ENGINE_PARTS = {f"out/part-{i}.parquet": _bytes(t) for i, t in
                enumerate([_engine.slice(0, 1), _engine.slice(0, 0), _engine.slice(1)])}
RUN_PARQUET = _bytes(pa.table({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}))
# shards with values no evaluation gives (edited by hand or by another tool)
_counted = to_table(evaluate(_nested(QRELS), _nested_run(RUN), ["P@2", "AP", "NumRet",
                                                                 "Hits@2"], name="tag"))
_c2 = to_table(evaluate({q: d for q, d in _nested(QRELS).items() if q != "q1"},
                        {q: d for q, d in _nested_run(RUN).items() if q != "q1"},
                        ["P@2", "AP", "NumRet", "Hits@2"], name="tag"))


def _edited(table: pa.Table, column: str, row: int, value: float) -> bytes:
    values = table.column(column).to_pylist()
    if isinstance(values[row], list):
        values[row] = [value, *values[row][1:]]
    else:
        values[row] = value
    i = table.column_names.index(column)
    return _bytes(table.set_column(i, column, pa.array(values, table.schema.field(column)
                                                       .type)))


def _counted_shards(column: str, value: float) -> dict[str, bytes]:
    """q1 alone and q2, q3 (the value set in q3's row), as two shards of one evaluation."""
    first = to_table(evaluate({"q1": _nested(QRELS)["q1"]}, {"q1": _nested_run(RUN)["q1"]},
                              ["P@2", "AP", "NumRet", "Hits@2"], name="tag"))
    return {"s/a.parquet": _bytes(first), "s/b.parquet": _edited(_c2, column, 1, value)}


FILES = {"qrels.txt": QRELS, "run.txt": RUN}
CHECK = ["check", "--no-stats", "--jobs", "1", "--targets", "t.toml"]
TARGETS = {"t.toml": '"P@2" = 0.1\n'}


def _mkdir(name: str) -> object:
    def make(tmp: Path) -> None:
        (tmp / name).mkdir()
    return make


CASES = [
    # the targets file is read three times (targets, settings, slice targets): not stdin
    # (an internal error before the options object)
    Case("targets-from-stdin", ["check", "--no-stats", "--jobs", "1", "--targets", "-",
                                "--per-query-in", "a.parquet"],
         {"a.parquet": _bytes(to_table(evaluate(_nested(QRELS), _nested_run(RUN), ["P@2"],
                                                name="tag")))},
         stdin=b'"P@2" = 0.1\n', stderr=r"--targets must be a regular file, got <stdin>"),
    Case("corrupt-parquet", [*CHECK, "--per-query-in", "bad.parquet"],
         {**TARGETS, "bad.parquet": b"PAR1" + b"\x00garbage" * 10 + b"PAR1"},
         stderr=r"bad\.parquet: not a readable Parquet file"),
    Case("text-as-parquet", [*CHECK, "--per-query-in", "qrels.txt"], {**TARGETS, **FILES},
         stderr=r"qrels\.txt: not a readable Parquet file"),
    Case("another-schema", [*CHECK, "--per-query-in", "run.parquet"],
         {**TARGETS, "run.parquet": RUN_PARQUET},
         stderr=r"run\.parquet: not a ragreport per-query table .*--per-query-out"),
    Case("newer-version", [*CHECK, "--per-query-in", "new.parquet"],
         {**TARGETS, "new.parquet": NEWER},
         stderr=r"new\.parquet: per-query schema version 2 is newer than this ragreport "
                r"reads \(1\); upgrade ragreport"),
    Case("empty-directory", [*CHECK, "--per-query-in", "shards"], TARGETS,
         setup=_mkdir("shards"),  # type: ignore[arg-type]
         stderr=r"shards: directory holds no \.parquet file"),
    Case("glob-matches-nothing", [*CHECK, "--per-query-in", "shards/*.parquet"], TARGETS,
         setup=_mkdir("shards"),  # type: ignore[arg-type]
         stderr=r"shards/\*\.parquet: the pattern matches no file"),
    Case("missing-path", [*CHECK, "--per-query-in", "nope.parquet"], TARGETS,
         stderr=r"nope\.parquet: no such file or directory"),
    Case("query-in-two-shards", [*CHECK, "--per-query-in", "a.parquet", "--per-query-in",
                                 "b.parquet"], {**TARGETS, "a.parquet": WHOLE,
                                                "b.parquet": PART1},
         stderr=r"b\.parquet: row 1: query 'q1' of run 'tag' is in \S*a\.parquet and "
                r"\S*b\.parquet; each query must be in one shard"),
    Case("different-conventions", [*CHECK, "--per-query-in", "s"],
         {**TARGETS, "s/part-0.parquet": PART1, "s/part-1.parquet": COMPLETE23},
         stderr=r"part-0\.parquet and \S*part-1\.parquet have different conventions "
                r"\(complete: False vs True\)"),
    Case("different-measures", [*CHECK, "--per-query-in", "s/*.parquet"],
         {**TARGETS, "s/part-0.parquet": PART1, "s/part-1.parquet": FEWER},
         stderr=r"have different (measures|conventions)"),
    Case("shard-beside-a-run", [*CHECK, "--per-query-in", "s"],
         {**TARGETS, "s/part-0.parquet": WHOLE, "s/run.parquet": RUN_PARQUET},
         stderr=r"run\.parquet: not a ragreport per-query table"),
    Case("truncated-curve", [*CHECK, "--per-query-in", "short.parquet"],
         {**TARGETS, "short.parquet": SHORT},
         stderr=r"short\.parquet: row 1: column 'P@K' holds 1 values, not k_max = 20"),
    Case("target-not-stored", [*CHECK, "--per-query-in", "w.parquet"],
         {"t.toml": '"ERR@5" = 0.1\n', "w.parquet": WHOLE},
         stderr=r"no curve for ERR"),
    Case("qrels-and-per-query", [*CHECK, "qrels.txt", "run.txt", "--per-query-in",
                                 "w.parquet"], {**TARGETS, **FILES, "w.parquet": WHOLE},
         stderr=r"give --per-query-in or QRELS and RUN \(or --example\), not both"),
    Case("eval-option", [*CHECK, "-c", "--per-query-in", "w.parquet"],
         {**TARGETS, "w.parquet": WHOLE},
         stderr=r"-c does not apply to --per-query-in: the per-query results were "
                r"evaluated with the conventions they state"),
    Case("targets-ties-differ", [*CHECK, "--per-query-in", "w.parquet"],
         {"t.toml": 'ties = "average"\n[targets]\n"P@2" = 0.1\n', "w.parquet": WHOLE},
         stderr=r"t\.toml sets ties = \"average\" but the per-query results were "
                r"evaluated with \"trec_eval\""),
    Case("out-over-input", ["evaluate", "qrels.txt", "run.txt", "--per-query-out",
                            "run.txt"], FILES, stderr=r"run\.txt"),
    Case("out-missing-folder", ["evaluate", "qrels.txt", "run.txt", "--per-query-out",
                                "no/where.parquet"], FILES, stderr=r"no"),
    Case("out-with-stream", ["evaluate", "qrels.txt", "run.txt", "--stream",
                             "--per-query-out", "x.parquet"], FILES,
         stderr=r"--per-query-out needs every per-query value; drop --stream"),
    Case("out-to-stdout", ["evaluate", "qrels.txt", "run.txt", "--per-query-out", "-"],
         FILES, stderr=r"--per-query-out writes Parquet \(binary\): give a file name"),
    # --baseline-report works with --per-query-in (tests/hostile/test_hostile_baseline.py); a bad
    # stored report is refused before any shard is read
    Case("with-a-bad-baseline-report", [*CHECK, "--per-query-in", "w.parquet",
                                        "--baseline-report", "b.json"],
         {**TARGETS, "w.parquet": WHOLE, "b.json": "{}"},
         stderr=r"^ragreport: error: b\.json: not a ragreport JSON report \(schema None"),
    Case("spark-like-folder", [*CHECK, "--per-query-in", "out"],
         {**TARGETS, "out/part-00000.parquet": PART1, "out/part-00001.parquet": PART23,
          "out/_SUCCESS": b"", "out/.part-00000.parquet.crc": b"x"},
         exit=0, stdout=r"all targets passed"),
    Case("two-runs-in-one-folder", [*CHECK, "--per-query-in", "out"],
         {**TARGETS, "out/tag-0.parquet": PART1, "out/tag-1.parquet": PART23,
          "out/other.parquet": OTHER}, exit=0,
         stdout=r"Summary \(baseline: other\)\nmeasure\s+other\s+tag\n"),
    Case("zero-row-shard", [*CHECK, "--per-query-in", "z.parquet"],
         {**TARGETS, "z.parquet": ZERO_ROWS},
         stderr=r"z\.parquet: run 'tag': 0 query rows but the counts say 3 evaluated queries "
                r"\(a shard is missing or was filtered\)"),
    Case("zero-row-shard-beside-its-evaluation", [*CHECK, "--per-query-in", "z.parquet",
                                                  "--per-query-in", "w.parquet"],
         {**TARGETS, "z.parquet": ZERO_ROWS, "w.parquet": WHOLE},
         stderr=r"run 'tag': 3 query rows but the counts say 6 evaluated queries"),
    Case("engine-folder-with-an-empty-part", [*CHECK, "--per-query-in", "out"],
         {**TARGETS, **ENGINE_PARTS}, exit=0,
         stdout=r"3 queries evaluated[\s\S]*all targets passed"),
    Case("per-query-file-as-run", [*CHECK, "qrels.txt", "w.parquet"],
         {**TARGETS, **FILES, "w.parquet": WHOLE},
         stderr=r"w\.parquet holds per-query results \(evaluate --per-query-out\): read it "
                r"with --per-query-in instead of QRELS and RUN"),
    Case("per-query-file-alone", ["report", "--json", "r.json", "w.parquet"],
         {"w.parquet": WHOLE}, stderr=r"w\.parquet holds per-query results"),
    # values no evaluation gives: input errors naming the shard and row, before any output
    # is replaced; never "a target failed" (exit 1)
    Case("nan-scalar", [*CHECK, "--per-query-in", "w.parquet", "--json", "r.json"],
         {"t.toml": '"AP" = 0.5\n', "w.parquet": _edited(_counted, "AP", 1, float("nan")),
          "r.json": "old"},
         stderr=r"w\.parquet: row 2: column 'AP': value nan is not a finite number$"),
    Case("nan-curve", [*CHECK, "--per-query-in", "w.parquet"],
         {**TARGETS, "w.parquet": _edited(_counted, "P@K", 2, float("nan"))},
         stderr=r"w\.parquet: row 3: column 'P@K' \(K = 1\): value nan is not a finite number"),
    Case("infinite-curve", [*CHECK, "--per-query-in", "w.parquet"],
         {**TARGETS, "w.parquet": _edited(_counted, "nDCG@K", 0, float("inf"))},
         stderr=r"row 1: column 'nDCG@K' \(K = 1\): value inf is not a finite number"),
    Case("minus-infinity-scalar", ["report", "--per-query-in", "w.parquet"],
         {"w.parquet": _edited(_counted, "RR", 0, float("-inf"))},
         stderr=r"row 1: column 'RR': value -inf is not a finite number"),
    Case("ap-above-one", [*CHECK, "--per-query-in", "w.parquet", "--markdown", "m.md"],
         {**TARGETS, "w.parquet": _edited(_counted, "AP", 0, 7.5), "m.md": "old"},
         stderr=r"w\.parquet: row 1: column 'AP': value 7\.5 is above 1, outside AP's range "
                r"\[0, 1\]"),
    Case("precision-negative", [*CHECK, "--per-query-in", "w.parquet"],
         {**TARGETS, "w.parquet": _edited(_counted, "P@K", 1, -0.5)},
         stderr=r"row 2: column 'P@K' \(K = 1\): value -0\.5 is negative"),
    Case("count-not-whole", [*CHECK, "--per-query-in", "w.parquet"],
         {**TARGETS, "w.parquet": _edited(_counted, "NumRet", 2, 2.5)},
         stderr=r"row 3: column 'NumRet': value 2\.5 is not a whole number \(NumRet counts\)"),
    Case("hits-curve-not-whole", [*CHECK, "--per-query-in", "w.parquet"],
         {**TARGETS, "w.parquet": _edited(_counted, "Hits@K", 0, 0.25)},
         stderr=r"row 1: column 'Hits@K' \(K = 1\): value 0\.25 is not a whole number"),
    Case("count-negative", [*CHECK, "--per-query-in", "w.parquet"],
         {**TARGETS, "w.parquet": _edited(_counted, "NumRet", 0, -3.0)},
         stderr=r"row 1: column 'NumRet': value -3\.0 is negative"),
    Case("nan-in-the-second-shard", [*CHECK, "--per-query-in", "s"],
         {**TARGETS, **_counted_shards("AP", float("nan"))},
         stderr=r"s/b\.parquet: row 2: column 'AP': value nan is not a finite number"),
    Case("ap-above-one-in-the-second-shard", [*CHECK, "--per-query-in", "s/*.parquet"],
         {**TARGETS, **_counted_shards("AP", 1.5)},
         stderr=r"s/b\.parquet: row 2: column 'AP': value 1\.5 is above 1"),
    Case("failing-gate", [*CHECK, "--per-query-in", "w.parquet"],
         {"t.toml": '"P@2" = 0.99\n', "w.parquet": WHOLE}, exit=1,
         stdout=r"P@2"),
]


def test_catalogue_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]
