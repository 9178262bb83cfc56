"""Writing per-query results: an EvaluationResult as an Arrow table, or Parquet files."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import RagReportError
from ...measures import Measure
from ..result import EvaluationResult

if TYPE_CHECKING:
    import pyarrow as pa

    from ...metrics import FloatArray
from .meta import merge_meta
from .schema import EXAMPLES, JUDGED, KEY, SCHEMA_NAME, SCHEMA_VERSION, measure_dict

__all__ = ["to_table", "write"]


# ---- writing ------------------------------------------------------------------------------
def _judged_curve(result: EvaluationResult) -> FloatArray:
    if JUDGED in result.curves:
        return np.asarray(result.curves[JUDGED], dtype=np.float64)
    from ..kernel import cutoff_values

    if result.n_queries == 0 or result.k_max == 0:
        return np.zeros((result.n_queries, result.k_max))
    level = float(result.conventions.rel_level)
    cols = [cutoff_values(result.require_ranking(), Measure("Judged", k), level,
                          ties=result.conventions.ties) for k in range(1, result.k_max + 1)]
    return np.column_stack(cols)


def _curve_column(name: str, values: FloatArray, k_max: int) -> pa.Array:
    import pyarrow as pa

    flat = pa.array(np.ascontiguousarray(values, dtype=np.float64).reshape(-1), pa.float64())
    offsets = pa.array(np.arange(0, values.shape[0] * k_max + 1, k_max, dtype=np.int32)
                       if k_max else np.zeros(values.shape[0] + 1, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, flat)


def _one_table(result: EvaluationResult,
               fingerprints: Mapping[str, Any] | None) -> tuple[pa.Table, dict[str, Any]]:
    import pyarrow as pa

    if result.document is not None:
        raise RagReportError("per-query results of an evaluation with a doc map (doc_map=, "
                             "--doc-map) are not supported; evaluate without it")
    n, k = result.n_queries, result.k_max
    rk = result.ranking
    level = float(result.conventions.rel_level)
    cols: dict[str, pa.Array] = {
        "run": pa.array([result.run_name] * n, pa.string()),
        "query_id": pa.array(result.query_ids, pa.string()),
        "retrieved": pa.array(np.asarray(rk.n_ret, dtype=np.int64)),
        "relevant": pa.array(np.asarray(rk.n_relevant(level), dtype=np.int64)),
        "judged": pa.array(np.asarray(rk.judged_counts(), dtype=np.int64)),
        "relevant_ranks": _ragged(*rk.relevant_ranks(level), n),
        "judged_ranks": _ragged(*rk.judged_ranks(), n),
    }
    described: list[dict[str, Any]] = []
    asked = {m.curve_key for m in result.measures if m.has_curve}
    for key in result.curves:
        name = f"{key}@K"
        cols[name] = _curve_column(name, np.asarray(result.curves[key]), k)
        kind = "judged" if key == JUDGED and key not in asked else "curve"
        described.append({"column": name, "kind": kind, "measure": measure_dict(key)})
    if JUDGED not in result.curves:  # for the report's Judged@K (health, drift checks)
        cols["Judged@K"] = _curve_column("Judged@K", _judged_curve(result), k)
        described.append({"column": "Judged@K", "kind": "judged",
                          "measure": measure_dict(JUDGED)})
    scalars: dict[Measure, FloatArray] = dict(result.scalars)
    for m in result.measures:
        if m.cutoff is not None and m.cutoff > k and m not in scalars:
            scalars[m] = result.values(m)  # beyond the curves: from the whole rankings
    for m, v in scalars.items():
        name = str(m)
        if name in cols:
            raise RagReportError(f"per-query column {name!r} would be written twice")
        cols[name] = pa.array(np.asarray(v, dtype=np.float64), pa.float64())
        described.append({"column": name, "kind": "scalar", "measure": measure_dict(m)})
    lat = result.latency_ms
    cols["latency_ms"] = pa.array([lat.get(q) for q in result.query_ids], pa.float64())
    evaluated = set(result.query_ids)
    run_meta = {
        "curve_width": k,
        "counts": asdict(result.counts),
        "run_only_ids": list(rk.run_only_ids[:EXAMPLES]),
        "qrels_only_ids": list(rk.qrels_only_ids[:EXAMPLES]),
        "latency_other": {q: t for q, t in lat.items() if q not in evaluated},
    }
    fp = dict(fingerprints or {})
    meta = {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "k_max": result.conventions.k_max,
        "conventions": asdict(replace(result.conventions, curve_width=None)),
        "measures": [measure_dict(m) for m in result.measures],
        "columns": described,
        "id_order": result.ranking.id_order,
        "fingerprints": {"qrels": fp.get("qrels"),
                         "runs": {result.run_name: fp["run"]} if fp.get("run") else {},
                         **({"qrels_judgments": fp["qrels_judgments"]}
                            if fp.get("qrels_judgments") else {})},
        "runs": {result.run_name: run_meta},
    }
    return pa.table(cols), meta


def _ragged(qi: Any, pos: Any, n: int) -> pa.Array:
    """(query, 0-based rank) pairs, by query then rank, as one list<int64> per query."""
    import pyarrow as pa

    offsets = np.concatenate(([0], np.cumsum(np.bincount(np.asarray(qi, dtype=np.int64),
                                                          minlength=n)))).astype(np.int64)
    return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()),
                                         pa.array(np.asarray(pos, dtype=np.int64)))


def _with_meta(table: pa.Table, meta: Mapping[str, Any]) -> pa.Table:
    return table.replace_schema_metadata(
        {(KEY + k): json.dumps(v, sort_keys=True, allow_nan=False) for k, v in meta.items()})


def to_table(result: EvaluationResult | Sequence[EvaluationResult], *,
             qrels_sha256: str | None = None,
             run_sha256: Mapping[str, str] | None = None,
             qrels_judgments_sha256: str | None = None) -> pa.Table:
    """The per-query results of one run (or several) as an Arrow table (schema in the
    module docstring): one row per (run, query).

    Parameters
    ----------
    result : EvaluationResult or list of EvaluationResult
        Evaluated runs, with distinct names and the same conventions and measures.
    qrels_sha256 : str, optional
        The qrels' fingerprint (``ragreport evaluate`` writes the file's SHA-256); shards
        with different fingerprints are refused when merged.
    run_sha256 : mapping, optional
        Run name -> the run file's fingerprint, stated in the metadata.
    qrels_judgments_sha256 : str, optional
        The fingerprint of the judgments themselves
        (:func:`ragreport.analysis.drift.judgments_sha256`; ``evaluate --per-query-out``
        writes it): ``--baseline-report`` compares the qrels by it when the stored report
        has one too.

    Returns
    -------
    pyarrow.Table

    >>> from ragreport import evaluate
    >>> t = to_table(evaluate({"q": {"a": 1}}, {"q": ["b", "a"]}, ["P@2"]))
    >>> t.column("P@K").to_pylist()[0][:3], t.column("RR").to_pylist()
    ([0.0, 0.5, 0.3333333333333333], [0.5])
    """
    import pyarrow as pa

    results = [result] if isinstance(result, EvaluationResult) else list(result)
    if not results:
        raise RagReportError("no result to write")
    parts = [_one_table(r, {"qrels": qrels_sha256, "qrels_judgments": qrels_judgments_sha256,
                            "run": (run_sha256 or {}).get(r.run_name)}) for r in results]
    if len(parts) == 1:
        return _with_meta(*parts[0])
    merged = merge_meta([p[1] for p in parts], [f"run {r.run_name!r}" for r in results])
    return _with_meta(pa.concat_tables([p[0] for p in parts]), merged)


def write(results: EvaluationResult | Sequence[EvaluationResult], path: str | os.PathLike[str],
          *, inputs: Sequence[str | os.PathLike[str]] = (), qrels_sha256: str | None = None,
          run_sha256: Mapping[str, str] | None = None,
          qrels_judgments_sha256: str | None = None) -> Path:
    """Write the per-query results as one Parquet file, atomically (a temporary file renamed
    into place; never over one of ``inputs``).

    >>> import tempfile, os
    >>> from ragreport import evaluate
    >>> r = evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["P@1"])
    >>> d = tempfile.mkdtemp()
    >>> p = write(r, os.path.join(d, "q.parquet"))
    >>> from ragreport.core.perquery import read
    >>> [back] = read(p)
    >>> back.mean("P@1")
    1.0
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ...fileio import write_atomic

    table = to_table(results, qrels_sha256=qrels_sha256, run_sha256=run_sha256,
                     qrels_judgments_sha256=qrels_judgments_sha256)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return write_atomic(path, sink.getvalue().to_pybytes(), inputs)
