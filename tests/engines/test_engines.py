"""ragreport.spark / .dask / .ray on local clusters: the same numbers as one ``evaluate`` of the
same rows (every curve value at every K, every scalar, every count), with queries split across
the input partitions on purpose, ties and graded labels; the readers' one-line errors for bad
rows; Parquet written by each engine read back (and by ``ragreport report``).

One Spark session (``local[2]``) and one Ray instance (2 CPUs) serve the whole module; Dask runs
with the synchronous scheduler.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ragreport
from ragreport import perquery
from ragreport.errors import InputError

MEASURES = ["nDCG@10", "P@5", "R@30", "AP", "RR", "Rprec", "bpref", "P(rel=2)@3"]
K_MAX = 30


def _data(seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame]:
    """40 queries: graded judgments (0-3), runs up to 40 deep with scores on a coarse grid
    (many ties), 4 run-only and 3 qrels-only queries, a query with no relevant document, rows
    shuffled so every query's rows sit in several input partitions."""
    rng = np.random.default_rng(seed)
    q_rows, r_rows = [], []
    for i in range(47):
        qid = f"q{i}" if i % 3 else str(i)  # numeric and text ids together
        docs = [f"d{j}" for j in range(60)]
        if i < 43:  # judged
            judged = rng.choice(60, size=int(rng.integers(1, 15)), replace=False)
            grades = rng.integers(0, 4, size=len(judged)) if i != 5 else np.zeros(len(judged))
            q_rows += [(qid, docs[j], int(g)) for j, g in zip(judged, grades, strict=True)]
        if i < 40 or i >= 43:  # retrieved (40..42 are qrels-only, 43..46 run-only)
            depth = int(rng.integers(1, 41))
            ret = rng.choice(60, size=depth, replace=False)
            scores = np.round(rng.random(depth) * 4) / 2  # 0, 0.5, ... 2: ties everywhere
            r_rows += [(qid, docs[j], float(s)) for j, s in zip(ret, scores, strict=True)]
    qrels = pd.DataFrame(q_rows, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(r_rows, columns=["query_id", "doc_id", "score"])
    return (qrels.sample(frac=1, random_state=1).reset_index(drop=True),
            run.sample(frac=1, random_state=2).reset_index(drop=True))


QRELS, RUN = _data()


@pytest.fixture(scope="module")
def whole() -> Any:
    return ragreport.evaluate(QRELS, RUN, MEASURES, K_MAX, name="run")


def _same(got: Any, want: Any, measures: list[str] = MEASURES) -> None:
    """Every value of ``got`` (merged from partitions) equals ``want``'s, bit for bit."""
    assert got.query_ids == want.query_ids
    assert got.counts == want.counts
    # the partitions' curves are k_max wide; merged, they stop where one evaluation's stop
    # (at its deepest ranking when that is shorter, at least 20): the same width
    assert got.k_max == want.k_max and got.conventions == want.conventions
    assert set(want.curves) <= set(got.curves)  # and Judged@K, kept for the health checks
    assert all(np.shape(c) == (len(want.query_ids), want.k_max) for c in got.curves.values())
    for key in want.curves:
        a, b = np.asarray(got.curves[key]), np.asarray(want.curves[key])
        assert a.shape == b.shape and np.array_equal(a, b), key
    assert set(got.scalars) == set(want.scalars)
    for key in want.scalars:
        assert np.array_equal(got.scalars[key], want.scalars[key]), key
    for m in measures:
        assert np.array_equal(got.values(m), want.values(m)), m
    assert got.means() == want.means()


def _reader_reason(qrels: pd.DataFrame, run: pd.DataFrame) -> str:
    """The message ``evaluate`` gives for the same rows as pandas frames, without the row
    (a distributed frame's rows have no order) and its source."""
    with pytest.raises(InputError) as info:
        ragreport.evaluate(qrels, run, ["P@5"])
    return re.sub(r" \(first at row \d+\)", "", info.value.reason)


BAD_SCORE = RUN.copy()
BAD_SCORE["score"] = BAD_SCORE["score"].astype(object)
BAD_SCORE.loc[7, "score"] = "abc"
DUPLICATE = pd.concat([RUN, RUN.iloc[[3]]], ignore_index=True)


# ---- Spark ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("ragreport-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.memory", "1g").getOrCreate())
    session.sparkContext.setLogLevel("OFF")
    yield session
    session.stop()


def _sdf(spark: Any, df: pd.DataFrame, parts: int = 3) -> Any:
    return spark.createDataFrame(df).repartition(parts)  # round robin: queries split


def test_spark_same_numbers_and_parquet(spark: Any, whole: Any, tmp_path: Path) -> None:
    from ragreport import spark as rs

    df = rs.evaluate(_sdf(spark, QRELS), _sdf(spark, RUN), MEASURES, K_MAX, partitions=3)
    assert df.count() == whole.n_queries
    [got] = rs.results(df)
    _same(got, whole)
    out = tmp_path / "spark"
    df.write.parquet(str(out))  # the metadata travels in Spark's schema of each file
    assert len(list(out.glob("*.parquet"))) > 1
    [back] = perquery.read(out)
    _same(back, whole)
    done = subprocess.run([sys.executable, "-m", "ragreport", "report", "--per-query-in",
                           str(out), "--json", "-"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "SOURCE_DATE_EPOCH": "0"})
    assert done.returncode == 0, done.stderr
    assert '"nDCG@10"' in done.stdout


def test_the_docs_spark_example_runs(spark: Any, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The Spark example of docs/guides/large-runs.md, as written, in a folder holding the
    qrels and a run as Parquet folders (``qrels/``, ``run/``): its result is evaluate's.
    (Spark resolves a relative path against its JVM's folder, not Python's: the example's
    folders are named by their full path here.)"""
    from paths import DOCS

    text = (DOCS / "guides" / "large-runs.md").read_text(encoding="utf-8")
    [code] = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "pyspark" in b]
    monkeypatch.chdir(tmp_path)
    for folder in ("qrels/", "run/", "per-query/bm25"):
        assert f'"{folder}"' in code, folder
        code = code.replace(f'"{folder}"', repr(f"{tmp_path}/{folder}"))
    _sdf(spark, QRELS).write.parquet(str(tmp_path / "qrels"))
    _sdf(spark, RUN).write.parquet(str(tmp_path / "run"))
    exec(compile(code, "large-runs.md", "exec"), {})
    assert (tmp_path / "per-query" / "bm25").is_dir()
    want = ragreport.evaluate(QRELS, RUN, ["nDCG@10", "P@5", "AP"], 20, name="bm25")
    printed = capsys.readouterr().out
    assert printed.strip() == str(want.means())


def test_spark_other_column_names_and_integer_ids(spark: Any) -> None:
    from ragreport import spark as rs

    qrels = pd.DataFrame({"qid": [1, 1, 2], "docno": ["a", "b", "c"], "label": [2, 0, 1]})
    run = pd.DataFrame({"qid": [1, 1, 2, 2], "docno": ["b", "a", "c", "x"],
                        "sim": [1.0, 1.0, 0.5, 0.9]})
    cols = {"qid": "qid", "docid": "docno", "relevance": "label", "score": "sim"}
    df = rs.evaluate(spark.createDataFrame(qrels), spark.createDataFrame(run),
                     ["nDCG@2", "RR"], columns=cols, partitions=2)
    [got] = rs.results(df)
    ref = ragreport.evaluate({"1": {"a": 2, "b": 0}, "2": {"c": 1}},
                             {"1": {"b": 1.0, "a": 1.0}, "2": {"c": 0.5, "x": 0.9}},
                             ["nDCG@2", "RR"])
    assert got.query_ids == ["1", "2"]
    assert got.means() == ref.means()


@pytest.mark.parametrize("case", ["score", "duplicate"])
def test_spark_bad_rows_give_the_readers_error(spark: Any, case: str) -> None:
    from ragreport import spark as rs

    run = BAD_SCORE if case == "score" else DUPLICATE
    reason = _reader_reason(QRELS, run)
    with pytest.raises(InputError) as info:
        rs.evaluate(_sdf(spark, QRELS), _sdf(spark, run, 2), ["P@5"], partitions=2)
    assert str(info.value) == reason or str(info.value) == f"run (Spark DataFrame): {reason}"
    assert "\n" not in str(info.value)


def test_spark_refuses_a_float_id_column_on_the_driver(spark: Any) -> None:
    from ragreport import spark as rs

    run = spark.createDataFrame(pd.DataFrame({"query_id": [1.0], "doc_id": ["a"],
                                              "score": [1.0]}))
    with pytest.raises(InputError, match=r"query id column 'query_id' holds double values; "
                                         r"ids must be text or integers"):
        rs.evaluate(_sdf(spark, QRELS), run)


# ---- Dask -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dask_sync() -> Iterator[None]:
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield


def _ddf(df: pd.DataFrame, parts: int = 3) -> Any:
    import dask.dataframe as dd

    return dd.from_pandas(df, npartitions=parts, sort=False)


def test_dask_score_precision(dask_sync: None) -> None:
    """The engines pass score_precision on: 0.5 + 1e-9 and 0.5 tie in float32 (beir's)."""
    from ragreport import dask as rd

    qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
                        "score": [0.5 + 1e-9, 0.5]})
    for options, rr, precision in (({}, 1.0, "float64"), ({"compat": "beir"}, 0.5, "float32"),
                                   ({"score_precision": "float32"}, 0.5, "float32")):
        [r] = rd.results(rd.evaluate(_ddf(qrels, 1), _ddf(run, 2), ["RR"], **options))
        assert (r.mean("RR"), r.conventions.score_precision) == (rr, precision), options


def test_dask_same_numbers_and_parquet(dask_sync: None, whole: Any, tmp_path: Path) -> None:
    from ragreport import dask as rd

    df = rd.evaluate(_ddf(QRELS), _ddf(RUN, 4), MEASURES, K_MAX, partitions=3)
    [got] = rd.results(df)
    _same(got, whole)
    rd.write(df, str(tmp_path / "dask"))
    [back] = perquery.read(tmp_path / "dask")
    _same(back, whole)


@pytest.mark.parametrize("case", ["score", "duplicate"])
def test_dask_bad_rows_give_the_readers_error(dask_sync: None, case: str) -> None:
    from ragreport import dask as rd

    run = BAD_SCORE if case == "score" else DUPLICATE
    reason = _reader_reason(QRELS, run)
    with pytest.raises(InputError) as info:
        rd.evaluate(_ddf(QRELS), _ddf(run), ["P@5"], partitions=2)
    assert str(info.value) == f"run (Dask DataFrame): {reason}"


def test_dask_null_query_id(dask_sync: None) -> None:
    from ragreport import dask as rd

    run = RUN.copy()
    run["query_id"] = run["query_id"].astype(object)
    run.loc[4, "query_id"] = None
    with pytest.raises(InputError, match=r"^run \(Dask DataFrame\): query id is"):
        rd.evaluate(_ddf(QRELS), _ddf(run), ["P@5"])


# ---- Ray --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    yield ray
    ray.shutdown()


def _rds(ray: Any, df: pd.DataFrame, parts: int = 3) -> Any:
    bounds = np.linspace(0, len(df), parts + 1).astype(int)
    return ray.data.from_pandas([df.iloc[a:b] for a, b in pairwise(bounds)])


def test_ray_same_numbers_and_parquet(ray_local: Any, whole: Any, tmp_path: Path) -> None:
    from ragreport import ray as rr

    ds = rr.evaluate(_rds(ray_local, QRELS), _rds(ray_local, RUN, 4), MEASURES, K_MAX,
                     partitions=4)
    [got] = rr.results(ds)
    _same(got, whole)
    ds.write_parquet(str(tmp_path / "ray"))
    [back] = perquery.read(tmp_path / "ray")
    _same(back, whole)


def test_ray_bad_rows_give_the_readers_error(ray_local: Any) -> None:
    from ragreport import ray as rr

    # one evaluation (a Ray job costs seconds here): a text score column with a bad value
    # (a column of one type, as a Parquet file's; the duplicate case is the kernel's, tested
    # with Spark and Dask)
    run = RUN.astype({"score": str})
    run.loc[7, "score"] = "abc"
    reason = _reader_reason(QRELS, run)
    with pytest.raises(InputError) as info:
        rr.evaluate(_rds(ray_local, QRELS), _rds(ray_local, run, 2), ["P@5"], partitions=2)
    assert str(info.value) == f"run (Ray Dataset): {reason}"
    assert "abc" in reason


# ---- no engine needed -------------------------------------------------------------------------
def test_importing_the_engine_modules_imports_no_engine() -> None:
    code = ("import sys, ragreport.spark, ragreport.dask, ragreport.ray; "
            "print([m for m in ('pyspark', 'dask', 'ray') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("options", [
    {}, {"complete": True}, {"no_relevant": "skip"}, {"ties": "average"},
    {"max_depth": 7, "rel_level": 2}, {"compat": "beir"}, {"duplicates": "first"},
    {"k_max": 100}, {"k_max": 100, "ties": "average", "complete": True},
], ids=["default", "complete", "skip", "ties-average", "depth-level", "beir", "dup-first",
        "k-beyond-depth", "k-beyond-depth-average"])
def test_shards_of_one_partition_function_merge_to_the_whole(options: dict[str, Any]) -> None:
    """The partition kernel alone (what every engine runs), on queries hashed to 5 parts,
    under each option that changes which queries count or how: the same as one evaluate."""
    import pyarrow as pa

    from ragreport.core.perquery import table_meta
    from ragreport.engines._shard import check_options, evaluate_part
    from ragreport.engines.common import finish

    options = dict(options)
    k_max = options.pop("k_max", K_MAX)  # 100: deeper than any ranking (40); the curves of
    # one evaluation stop at 40, the partitions' at 100: merged, they stop at 40 too
    measures = [m for m in MEASURES if not (options.get("ties") and m == "bpref")]
    measures += ["R@100", "P@60"] if k_max == 100 else []
    run = DUPLICATE if options.get("duplicates") else RUN
    whole = ragreport.evaluate(QRELS, run, measures, k_max, **options)
    spec, probe = check_options(measures, k_max, None, options, "test")
    metas, tables = [], []
    for part in range(5):
        q = QRELS[QRELS["query_id"].map(lambda s: hash(s) % 5) == part]
        r = run[run["query_id"].map(lambda s: hash(s) % 5) == part]
        out, meta = evaluate_part(pa.Table.from_pandas(q, preserve_index=False),
                                  pa.Table.from_pandas(r, preserve_index=False), spec,
                                  table_meta(probe, "probe"))
        metas.append(meta)
        if out is not None:
            tables.append(out)
    merged = finish(metas, "test")
    from ragreport.engines.common import meta_strings

    [got] = perquery.from_tables([pa.concat_tables(tables).replace_schema_metadata(
        meta_strings(merged))])
    _same(got, whole, measures)


# ---- hostile rows: the readers' message through a whole engine (Dask: cheapest to start) ----
def _hostile(kind: str, column: str, value: Any, row: int = 4) -> tuple[pd.DataFrame, ...]:
    qrels, run = QRELS.copy(), RUN.copy()
    frame = qrels if kind == "qrels" else run
    if not isinstance(value, float):
        frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    return qrels, run


HOSTILE = {
    "null query id": _hostile("run", "query_id", None),
    "blank document id": _hostile("run", "doc_id", "  "),
    "NaN score": _hostile("run", "score", float("nan")),
    "infinite score": _hostile("run", "score", float("inf")),
    "text score": _hostile("run", "score", "1.5x"),
    "text grade": _hostile("qrels", "relevance", "high"),
    "judged twice": (pd.concat([QRELS, QRELS.iloc[[2]]], ignore_index=True), RUN),
    # not here: a boolean score or a float id among text in an object column: Dask itself
    # turns object columns into text ("True", "1.5") before ragreport sees them (its
    # dataframe.convert-string); a float id column is refused by Spark's driver-side check
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_dask_hostile_rows_give_the_readers_message(dask_sync: None, case: str) -> None:
    from ragreport import dask as rd

    qrels, run = HOSTILE[case]
    reason = _reader_reason(qrels, run)
    with pytest.raises(InputError) as info:
        rd.evaluate(_ddf(qrels), _ddf(run), ["P@5"], partitions=2)
    got = str(info.value)
    assert "\n" not in got and "Traceback" not in got
    assert got.endswith(reason), (got, reason)
    assert got.startswith(("run (Dask DataFrame): ", "qrels (Dask DataFrame): "))


@pytest.mark.parametrize(("engine", "package"), [("spark", "pyspark"), ("dask", "dask"),
                                                 ("ray", "ray[data]")])
def test_a_missing_engine_names_its_extra(engine: str, package: str) -> None:
    from ragreport.engines.common import need
    from ragreport.errors import RagReportError

    with pytest.raises(RagReportError) as got:
        need("ragreport_no_such_engine_module", engine, package)
    assert str(got.value) == \
        f"ragreport.{engine} needs {package}: pip install 'ragreport[{engine}]'"
