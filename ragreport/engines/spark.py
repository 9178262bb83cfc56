"""Evaluate Spark DataFrames with ragreport's kernel (``pip install 'ragreport[spark]'``).

The qrels and the run are put in one frame, repartitioned by query (every document of a query
in one partition: the tie rule needs them together) and each partition is evaluated by
:func:`ragreport.evaluate` inside ``mapInArrow`` (Spark 3.5 and later). The result is a
DataFrame in the per-query schema of :mod:`ragreport.core.perquery`, one row per query, whose
``run`` column carries the evaluation's metadata: ``df.write.parquet(path)`` writes files that
``ragreport report --per-query-in path`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..errors import InputError
from ._shard import COLUMNS, PartSpec, evaluate_part, marked, readable_errors, split
from .common import (
    META_COLUMN,
    bad_id_type,
    columns_for,
    finish,
    meta_strings,
    missing_column,
    need,
)

__all__ = ["evaluate", "results"]

_ENGINE = "Spark DataFrame"
_INTEGRAL = ("ByteType", "ShortType", "IntegerType", "LongType")


def _need() -> Any:
    return need("pyspark.sql.functions", "spark", "pyspark")


def _side(df: Any, kind: str, columns: Any, other_type: Any, side: int) -> Any:
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    if not isinstance(df, DataFrame):
        raise InputError(f"expected a Spark DataFrame, got {type(df).__name__}",
                         f"{kind} ({_ENGINE})")
    q, d, v = columns_for(kind, columns)
    value_key = "relevance" if kind == "qrels" else "score"
    for col, what, key in ((q, "query id", "qid"), (d, "document id", "docid"),
                           (v, "grade" if kind == "qrels" else "score", value_key)):
        if col not in df.columns:
            raise missing_column(kind, what, col, df.columns, _ENGINE, key)
    for col, what in ((q, "query id"), (d, "document id")):
        t = df.schema[col].dataType
        if type(t).__name__ not in (*_INTEGRAL, "StringType", "VarcharType", "CharType"):
            raise bad_id_type(kind, what, col, t.simpleString(), _ENGINE)
    value = F.col(v)
    other = F.lit(None).cast(other_type)
    grade, score = (value, other) if kind == "qrels" else (other, value)
    return df.select(F.col(q).cast("string").alias("query_id"),
                     F.col(d).cast("string").alias("doc_id"), grade.alias("relevance"),
                     score.alias("score"), F.lit(side).cast("byte").alias("side"))


def _partition_fn(spec: PartSpec, probe_meta: Mapping[str, Any], out_schema: Any) -> Any:
    """The function mapInArrow runs on each partition (pickled with its arguments)."""

    @marked
    def run(batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa

        got = list(batches)
        if not got or not sum(b.num_rows for b in got):
            return
        table = pa.Table.from_batches(got).select(list(COLUMNS))
        out, meta = evaluate_part(*split(table), spec, probe_meta)
        names = [f.name for f in out_schema]
        rows = []
        if out is not None and out.num_rows:
            out = out.append_column(META_COLUMN, pa.nulls(out.num_rows, pa.string()))
            rows.append(out.select(names).cast(out_schema))
        meta_row = {f.name: pa.nulls(1, f.type) for f in out_schema}
        meta_row[META_COLUMN] = pa.array([json.dumps(meta, allow_nan=False)], pa.string())
        rows.append(pa.table(meta_row).cast(out_schema))
        yield from pa.concat_tables(rows).to_batches()

    return run


def evaluate(qrels_df: Any, run_df: Any, measures: Any = None, k_max: int | None = None, *,
             columns: Any = None, name: str | None = None, partitions: int | None = None,
             **options: Any) -> Any:
    """Evaluate a run against qrels given as Spark DataFrames, every query in its partition.

    Parameters
    ----------
    qrels_df, run_df : pyspark.sql.DataFrame
        One row per judgment (``query_id``, ``doc_id``, ``relevance``) and per retrieved
        document (``query_id``, ``doc_id``, ``score``). Ids are text or integers; grades and
        scores numbers (or text holding one), read as the table readers read them.
    measures, k_max
        As for :func:`ragreport.evaluate`. The curves are ``k_max`` wide in every partition.
    columns : mapping or str, optional
        Other column names: ``{"qid": ..., "docid": ..., "score": ..., "relevance": ...}``
        (the keys of ``--columns``), used for both frames.
    name : str, optional
        The run's name (default ``run``).
    partitions : int, optional
        Partitions of the query-partitioned frame (default: ``spark.sql.shuffle.partitions``).
    **options
        ``order``, ``rel_level``, ``complete``, ``max_depth``, ``no_relevant``,
        ``duplicates``, ``fractional_grades``, ``ties``, ``compat``,
        ``ignore_identical_ids``, ``score_precision``: as for :func:`ragreport.evaluate`.

    Returns
    -------
    pyspark.sql.DataFrame
        One row per evaluated query, in the per-query schema, cached (the evaluation runs
        once, here, so a bad row raises now; ``df.unpersist()`` frees it). Its ``run``
        column's metadata holds the evaluation's; :func:`results` turns it into an
        :class:`~ragreport.EvaluationResult`.

    Raises
    ------
    InputError
        A bad row (a document twice in a query, a score that is not a number, a null id...):
        the one-line error of the file readers (naming the query and document, not a row:
        a distributed frame's rows have no order).

    Examples
    --------
    Run by ``tests/engines/test_engines.py`` on ``local[2]`` (a doctest would start a JVM)::

        from pyspark.sql import SparkSession
        spark = SparkSession.builder.master("local[2]").getOrCreate()
        qrels = spark.createDataFrame([("q1", "d1", 1)], ["query_id", "doc_id", "relevance"])
        run = spark.createDataFrame([("q1", "d0", 2.0), ("q1", "d1", 1.0)],
                                    ["query_id", "doc_id", "score"])
        df = ragreport.spark.evaluate(qrels, run, ["P@2", "RR"])
        ragreport.spark.results(df)[0].means()      # {'P@2': 0.5, 'RR': 0.5}
        df.write.parquet("per-query/")              # ragreport report --per-query-in per-query/
    """
    F = _need()
    from pyspark import StorageLevel
    from pyspark.sql.pandas.types import from_arrow_schema

    from ._shard import check_options

    spec, probe = check_options(measures, k_max, name, options, "Spark DataFrame")
    probe_meta = read_probe_meta(probe)
    qc, rc = columns_for("qrels", columns), columns_for("run", columns)
    for df, kind, cols in ((qrels_df, "qrels", qc), (run_df, "run", rc)):
        if hasattr(df, "columns") and cols[2] not in df.columns:
            key = "relevance" if kind == "qrels" else "score"
            raise missing_column(kind, "grade" if kind == "qrels" else "score", cols[2],
                                 list(df.columns), _ENGINE, key)
    score_t = run_df.schema[rc[2]].dataType
    grade_t = qrels_df.schema[qc[2]].dataType
    both = _side(qrels_df, "qrels", columns, score_t, 0).unionByName(
        _side(run_df, "run", columns, grade_t, 1))
    both = both.repartition(partitions, "query_id") if partitions else \
        both.repartition("query_id")
    import pyarrow as pa

    out_schema = pa.schema([*(pa.field(f.name, arrow_32bit(f.type))
                              for f in probe.schema.remove_metadata()),
                            pa.field(META_COLUMN, pa.string())])
    mapped = both.mapInArrow(_partition_fn(spec, probe_meta, out_schema),
                             from_arrow_schema(out_schema)).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        with readable_errors():
            rows = mapped.where(F.col(META_COLUMN).isNotNull()).select(META_COLUMN).collect()
        merged = finish([json.loads(r[0]) for r in rows], _ENGINE)
    except BaseException:
        mapped.unpersist()
        raise
    out = mapped.where(F.col(META_COLUMN).isNull()).drop(META_COLUMN) \
        .withMetadata("run", meta_strings(merged)).persist(StorageLevel.MEMORY_AND_DISK)
    out.count()  # from the cached partitions' output; then only the rows stay cached
    mapped.unpersist()
    return out


def arrow_32bit(t: Any) -> Any:
    """The type with 32-bit offsets (Spark's Arrow types have no large lists or strings)."""
    import pyarrow as pa

    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(arrow_32bit(t.value_type))
    if pa.types.is_large_string(t):
        return pa.string()
    return t


def read_probe_meta(probe: Any) -> dict[str, Any]:
    from ..core.perquery import table_meta

    return table_meta(probe, "probe")


def results(df: Any) -> list[Any]:
    """The :class:`~ragreport.EvaluationResult` of a frame :func:`evaluate` returned (its rows
    collected to the driver: one per query), as ``ragreport.core.perquery.read`` gives it."""
    _need()
    import pyarrow as pa

    from ..core.perquery import from_tables

    meta = dict(df.schema["run"].metadata or {})
    if "ragreport.schema" not in meta:
        raise InputError("the DataFrame's run column carries no ragreport metadata (give the "
                         "frame ragreport.spark.evaluate returned)", _ENGINE)
    table = df.toArrow() if hasattr(df, "toArrow") else pa.Table.from_pandas(
        df.toPandas(), preserve_index=False)
    return from_tables([table.replace_schema_metadata(meta)], [_ENGINE])
