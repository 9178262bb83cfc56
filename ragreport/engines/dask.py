"""Evaluate Dask DataFrames with ragreport's kernel (``pip install 'ragreport[dask]'``).

The qrels and the run are put in one frame (ids as text, checked as the table readers check
them), shuffled by query (every document of a query in one partition: the tie rule needs them
together) and each partition is evaluated by :func:`ragreport.evaluate` in ``map_partitions``.
The result is a Dask DataFrame in the per-query schema of :mod:`ragreport.core.perquery`, one row
per query, with the evaluation's metadata in ``df._meta.attrs["ragreport"]``; :func:`write` writes
it as Parquet that ``ragreport report`` reads, :func:`results` gives the
:class:`~ragreport.EvaluationResult`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import InputError
from ._shard import PartSpec, evaluate_part, marked, readable_errors
from .common import META_COLUMN, columns_for, finish, meta_strings, missing_column, need

__all__ = ["evaluate", "results", "write"]

_ENGINE = "Dask DataFrame"


def _need() -> Any:
    return need("dask.dataframe", "dask", "dask")


@marked
def _normalise(pdf: Any, kind: str, cols: tuple[str, str, str]) -> Any:
    """One partition of the qrels or the run in the common columns, ids as text (checked
    with the table readers' messages)."""
    import pandas as pd

    from ..io.columns import ids_column
    from ..io.tableinput import pandas_input

    q, d, v = cols
    src = f"{kind} ({_ENGINE})"
    table = pandas_input(pdf[[q, d]], src)
    try:
        qids = ids_column(table.get(q), "query id", q, src)
        docs = ids_column(table.get(d), "document id", d, src)
    except InputError as exc:
        raise InputError(exc.reason, src) from None
    n = len(pdf)
    # the values as they are (the partition reads them as the readers do: a NaN score is
    # refused as NaN); the other side's column is NaN, which no row of this side reads
    values = pdf[v].reset_index(drop=True)
    nothing = pd.Series(np.full(n, np.nan))
    grade, score = (values, nothing) if kind == "qrels" else (nothing, values)
    return pd.DataFrame({
        # Arrow-backed text (no Python object per row)
        "query_id": qids.to_pandas(types_mapper=pd.ArrowDtype),
        "doc_id": docs.to_pandas(types_mapper=pd.ArrowDtype),
        "relevance": grade, "score": score,
        "side": pd.Series(np.full(n, 0 if kind == "qrels" else 1, dtype=np.int8))})


def _part(pdf: Any, spec: PartSpec, probe_meta: Mapping[str, Any], names: list[str],
          out_schema: Any) -> Any:
    import pyarrow as pa

    side = pdf["side"].to_numpy()
    qt = pdf.loc[side == 0, ["query_id", "doc_id", "relevance"]].reset_index(drop=True)
    rt = pdf.loc[side == 1, ["query_id", "doc_id", "score"]].reset_index(drop=True)
    if not len(qt) and not len(rt):
        return _pandas_of(out_schema.empty_table())
    out, meta = evaluate_part(qt, rt, spec, probe_meta)
    parts = []
    if out is not None and out.num_rows:
        parts.append(out.append_column(META_COLUMN, pa.nulls(out.num_rows, pa.string()))
                     .select(names).cast(out_schema))
    row = {f.name: pa.nulls(1, f.type) for f in out_schema}
    row[META_COLUMN] = pa.array([json.dumps(meta, allow_nan=False)], pa.string())
    parts.append(pa.table(row).cast(out_schema))
    return _pandas_of(pa.concat_tables(parts))


def _pandas_of(table: Any) -> Any:
    """Arrow-backed columns (lists stay lists: Dask turns object columns into text)."""
    import pandas as pd

    return table.to_pandas(types_mapper=pd.ArrowDtype)


def evaluate(qrels_df: Any, run_df: Any, measures: Any = None, k_max: int | None = None, *,
             columns: Any = None, name: str | None = None, partitions: int | None = None,
             **options: Any) -> Any:
    """Evaluate a run against qrels given as Dask DataFrames, every query in one partition.

    Parameters and errors as for :func:`ragreport.spark.evaluate`; ``partitions``: the
    partitions of the query-shuffled frame (default: as many as the larger input has).

    Returns
    -------
    dask.dataframe.DataFrame
        One row per evaluated query, in the per-query schema, computed (persisted) here so a
        bad row raises now; ``df._meta.attrs["ragreport"]`` holds the evaluation's metadata.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> qrels = dd.from_pandas(pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"],
    ...                                      "relevance": [1]}), npartitions=1)
    >>> run = dd.from_pandas(pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d0", "d1"],
    ...                                    "score": [2.0, 1.0]}), npartitions=2)
    >>> df = evaluate(qrels, run, ["P@2", "RR"])
    >>> results(df)[0].means()
    {'P@2': 0.5, 'RR': 0.5}
    """
    dd = _need()
    import pyarrow as pa

    from ._shard import check_options
    from .spark import arrow_32bit, read_probe_meta

    spec, probe = check_options(measures, k_max, name, options, _ENGINE)
    probe_meta = read_probe_meta(probe)
    parts = []
    for df, kind in ((qrels_df, "qrels"), (run_df, "run")):
        if not isinstance(df, dd.DataFrame):
            raise InputError(f"expected a Dask DataFrame, got {type(df).__name__}",
                             f"{kind} ({_ENGINE})")
        cols = columns_for(kind, columns)
        value_key = "relevance" if kind == "qrels" else "score"
        for col, what, key in ((cols[0], "query id", "qid"), (cols[1], "document id", "docid"),
                               (cols[2], "grade" if kind == "qrels" else "score", value_key)):
            if col not in df.columns:
                raise missing_column(kind, what, col, [str(c) for c in df.columns], _ENGINE,
                                     key)

        parts.append(df.map_partitions(_normalise, kind, cols,
                                       meta=_normalise(df._meta, kind, cols)))
    both = dd.concat(parts)
    n = partitions or max(qrels_df.npartitions, run_df.npartitions)
    both = both.shuffle(on="query_id", npartitions=n)
    out_schema = pa.schema([*(pa.field(f.name, arrow_32bit(f.type))
                              for f in probe.schema.remove_metadata()),
                            pa.field(META_COLUMN, pa.string())])
    names = [f.name for f in out_schema]
    empty = _pandas_of(out_schema.empty_table())
    import importlib

    dask: Any = importlib.import_module("dask")  # untyped: used through Any
    mapped = both.map_partitions(marked(_part), spec, probe_meta, names, out_schema, meta=empty,
                                 enforce_metadata=False)
    # the partitions' frames computed once and held (by key: a persisted frame would be
    # tokenized by pickling its data, seconds per million rows)
    with readable_errors():
        done = dask.persist(*mapped.to_delayed())
        metas = dask.compute(*[dask.delayed(_part_meta)(p) for p in done])
    merged = finish([json.loads(m) for m in metas if m is not None], _ENGINE)
    carrier = empty.drop(columns=[META_COLUMN])
    carrier.attrs["ragreport"] = merged  # kept by persist, column selections and filters
    carrier.attrs["ragreport_schema"] = pa.schema(  # as text: dask writes attrs as JSON
        [f for f in out_schema if f.name != META_COLUMN]).serialize().to_pybytes().hex()
    kept = [p for p, m in zip(done, metas, strict=True) if m is not None]  # not empty ones
    return dd.from_delayed([dask.delayed(_part_rows)(p) for p in kept], meta=carrier,
                           verify_meta=False)


def _part_meta(pdf: Any) -> str | None:
    """The metadata row's JSON of a partition's frame (None for an empty partition)."""
    got = pdf[META_COLUMN].dropna()
    return str(got.iloc[0]) if len(got) else None


def _part_rows(pdf: Any) -> Any:
    """A partition's per-query rows: without the metadata row and column."""
    return pdf[pdf[META_COLUMN].isna()].drop(columns=[META_COLUMN])


def _meta_of(df: Any) -> dict[str, Any]:
    meta = getattr(getattr(df, "_meta", None), "attrs", {}).get("ragreport")
    if not isinstance(meta, dict):
        raise InputError("the DataFrame carries no ragreport metadata (give the frame "
                         "ragreport.dask.evaluate returned)", _ENGINE)
    return meta


def _schema(df: Any) -> Any:
    import pyarrow as pa

    return pa.ipc.read_schema(pa.py_buffer(bytes.fromhex(df._meta.attrs["ragreport_schema"])))


def _table(pdf: Any, meta: Mapping[str, Any], schema: Any) -> Any:
    import pyarrow as pa

    return pa.Table.from_pandas(pdf, schema=schema, preserve_index=False).replace_schema_metadata(
        meta_strings(meta))


def results(df: Any) -> list[Any]:
    """The :class:`~ragreport.EvaluationResult` of a frame :func:`evaluate` returned (its rows
    computed to the client: one per query)."""
    from ..core.perquery import from_tables

    meta = _meta_of(df)
    return from_tables([_table(df.compute(), meta, _schema(df))],
                       [_ENGINE])


def write(df: Any, path: str) -> None:
    """Write a frame :func:`evaluate` returned as Parquet files (one per partition, under the
    directory ``path``) that ``ragreport report --per-query-in path`` reads."""
    _need()
    meta = _meta_of(df)
    df.to_parquet(path, write_index=False, schema=_schema(df),
                  custom_metadata={k.encode(): v.encode()
                                   for k, v in meta_strings(meta).items()})
