"""Evaluate Ray Datasets with ragreport's kernel (``pip install 'ragreport[ray]'``).

The qrels and the run are put in one dataset (ids as text, checked as the table readers check
them), grouped by a bucket of the query id (every document of a query in one group: the tie
rule needs them together; many queries per group, so the kernel runs vectorised) and each
group is evaluated by :func:`ragreport.evaluate` in ``groupby(...).map_groups`` with the Arrow
batch format. The result is a materialized ``ray.data.Dataset`` in the per-query schema of
:mod:`ragreport.core.perquery`, one row per query, whose blocks carry the evaluation's metadata:
``ds.write_parquet(path)`` writes files that ``ragreport report --per-query-in path`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import InputError, RagReportError
from ._shard import PartSpec, evaluate_part, marked, readable_errors
from .common import META_COLUMN, columns_for, finish, meta_strings, missing_column, need

__all__ = ["evaluate", "results"]

_ENGINE = "Ray Dataset"
_BUCKET = "_ragreport_bucket"


def _need() -> Any:
    return need("ray.data", "ray", "ray[data]")


@marked
def _normalise(t: Any, kind: str, cols: tuple[str, str, str], other: Any,
               buckets: int) -> Any:
    """A batch of the qrels or the run in the common columns, ids as text (checked with the
    table readers' messages), with the bucket of its query."""
    import pyarrow as pa

    from ..core.keys import string_fingerprints
    from ..io.columns import ids_column

    q, d, v = cols
    src = f"{kind} ({_ENGINE})"
    try:
        qids = ids_column(t.column(q), "query id", q, src)
        docs = ids_column(t.column(d), "document id", d, src)
    except InputError as exc:
        raise InputError(exc.reason, src) from None
    n = t.num_rows
    value = t.column(v)
    none = pa.nulls(n, other)
    grade, score = (value, none) if kind == "qrels" else (none, value)
    bucket = (string_fingerprints(qids) % np.uint64(buckets)).astype(np.int64) if n \
        else np.zeros(0, np.int64)
    return pa.table({"query_id": qids, "doc_id": docs, "relevance": grade, "score": score,
                     "side": pa.array(np.full(n, 0 if kind == "qrels" else 1, np.int8)),
                     _BUCKET: pa.array(bucket)})


def _group(t: Any, spec: PartSpec, probe_meta: Mapping[str, Any], out_schema: Any) -> Any:
    import pyarrow as pa

    from ._shard import split

    out, meta = evaluate_part(*split(t), spec, probe_meta)
    names = [f.name for f in out_schema]
    parts = []
    if out is not None and out.num_rows:
        parts.append(out.append_column(META_COLUMN, pa.nulls(out.num_rows, pa.string()))
                     .select(names).cast(out_schema))
    row = {f.name: pa.nulls(1, f.type) for f in out_schema}
    row[META_COLUMN] = pa.array([json.dumps(meta, allow_nan=False)], pa.string())
    parts.append(pa.table(row).cast(out_schema))
    return pa.concat_tables(parts)


def _metas(t: Any) -> Any:
    import pyarrow.compute as pc

    return t.filter(pc.is_valid(t.column(META_COLUMN))).select([META_COLUMN])


def _rows(t: Any, schema: Any, meta: Mapping[str, str]) -> Any:
    import pyarrow.compute as pc

    rows = t.filter(pc.is_null(t.column(META_COLUMN))).drop_columns([META_COLUMN])
    return rows.cast(schema).replace_schema_metadata(dict(meta))


def evaluate(qrels_ds: Any, run_ds: Any, measures: Any = None, k_max: int | None = None, *,
             columns: Any = None, name: str | None = None, partitions: int | None = None,
             **options: Any) -> Any:
    """Evaluate a run against qrels given as Ray Datasets, every query in one group.

    Parameters and errors as for :func:`ragreport.spark.evaluate`; ``partitions``: the
    number of query buckets (groups) the rows are spread over (default 16).

    Returns
    -------
    ray.data.Dataset
        One row per evaluated query, in the per-query schema, materialized here (so a bad
        row raises now); every block carries the evaluation's metadata, so
        ``ds.write_parquet(path)`` feeds ``ragreport report --per-query-in path``.

    Examples
    --------
    Run by ``tests/engines/test_engines.py`` on a local Ray (a doctest would start one)::

        import ray
        qrels = ray.data.from_items([{"query_id": "q1", "doc_id": "d1", "relevance": 1}])
        run = ray.data.from_items([{"query_id": "q1", "doc_id": "d0", "score": 2.0},
                                   {"query_id": "q1", "doc_id": "d1", "score": 1.0}])
        ds = ragreport.ray.evaluate(qrels, run, ["P@2", "RR"])
        ragreport.ray.results(ds)[0].means()        # {'P@2': 0.5, 'RR': 0.5}
        ds.write_parquet("per-query/")              # ragreport report --per-query-in per-query/
    """
    rd = _need()
    import pyarrow as pa

    from ._shard import check_options
    from .spark import read_probe_meta

    spec, probe = check_options(measures, k_max, name, options, _ENGINE)
    probe_meta = read_probe_meta(probe)
    buckets = int(partitions or 16)
    if buckets < 1:
        raise RagReportError(f"partitions must be at least 1, got {partitions!r}")
    value_types = {}
    for ds, kind in ((qrels_ds, "qrels"), (run_ds, "run")):
        if not isinstance(ds, rd.Dataset):
            raise InputError(f"expected a Ray Dataset, got {type(ds).__name__}",
                             f"{kind} ({_ENGINE})")
        cols = columns_for(kind, columns)
        schema = ds.schema()
        names = list(schema.names) if schema is not None else []
        value_key = "relevance" if kind == "qrels" else "score"
        for col, what, key in ((cols[0], "query id", "qid"), (cols[1], "document id", "docid"),
                               (cols[2], "grade" if kind == "qrels" else "score", value_key)):
            if col not in names:
                raise missing_column(kind, what, col, names, _ENGINE, key)
        t = schema.types[names.index(cols[2])]
        value_types[kind] = t if isinstance(t, pa.DataType) else pa.float64()
    parts = []
    for ds, kind in ((qrels_ds, "qrels"), (run_ds, "run")):
        other = value_types["run" if kind == "qrels" else "qrels"]
        parts.append(ds.map_batches(_normalise, batch_format="pyarrow", fn_args=(
            kind, columns_for(kind, columns), other, buckets)))
    both = parts[0].union(parts[1])
    from .spark import arrow_32bit

    out_schema = pa.schema([*(pa.field(f.name, arrow_32bit(f.type))
                              for f in probe.schema.remove_metadata()),
                            pa.field(META_COLUMN, pa.string())])
    rows_schema = pa.schema([f for f in out_schema if f.name != META_COLUMN])
    with readable_errors():
        import inspect

        # as many shuffle partitions as buckets (Ray's default, 200, is slow on few cores)
        by = both.groupby(_BUCKET, num_partitions=min(buckets, 64)) \
            if "num_partitions" in inspect.signature(both.groupby).parameters \
            else both.groupby(_BUCKET)
        mapped = by.map_groups(
            marked(_group), batch_format="pyarrow",
            fn_args=(spec, probe_meta, out_schema)).materialize()
        metas = [r[META_COLUMN] for r in mapped.map_batches(
            _metas, batch_format="pyarrow").take_all()]
    merged = finish([json.loads(m) for m in metas], _ENGINE)
    return mapped.map_batches(_rows, batch_format="pyarrow",
                              fn_args=(rows_schema, meta_strings(merged))).materialize()


def results(ds: Any) -> list[Any]:
    """The :class:`~ragreport.EvaluationResult` of a dataset :func:`evaluate` returned (its
    rows brought to the driver: one per query)."""
    _need()
    import pyarrow as pa
    import ray

    from ..core.perquery import from_tables

    tables = [t for t in ray.get(ds.to_arrow_refs()) if t.schema.metadata]
    if not tables:
        raise InputError("the dataset carries no ragreport metadata (give the dataset "
                         "ragreport.ray.evaluate returned)", _ENGINE)
    meta = tables[0].schema.metadata
    whole = pa.concat_tables([t.replace_schema_metadata(meta) for t in tables])
    return from_tables([whole], [_ENGINE])
