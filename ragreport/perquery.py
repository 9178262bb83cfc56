"""Per-query results as a first-class, mergeable artefact: an Arrow table (Parquet shards).

:func:`to_table` turns an :class:`~ragreport.result.EvaluationResult` into an Arrow table with
one row per (run, query); :func:`from_tables` merges any set of such tables (shards evaluated
apart, e.g. by Spark, Dask or Ray partitions, or by ``ragreport evaluate --per-query-out``)
back into one :class:`EvaluationResult` per run whose values equal, bit for bit, those of one
evaluation of the whole input. :func:`write` and :func:`read` store and load them as Parquet
(files, a directory or a glob of shards).

Schema (version :data:`SCHEMA_VERSION`)
---------------------------------------
Columns, in this order:

- ``run`` (string) and ``query_id`` (string): one row per evaluated query of a run;
- ``retrieved`` (int64): documents ranked for the query (after ``max_depth``);
  ``relevant`` (int64): judged documents with a grade >= the relevance level; ``judged``
  (int64): judged documents of the query;
- ``relevant_ranks`` and ``judged_ranks`` (large_list<int64>): the 0-based ranks of the
  retrieved documents that are relevant, and that are judged (any grade), in the ranking's
  order (trec_eval's: score descending, then document id descending); what the failure
  kinds, the 11-point precision-recall curve and the unjudged counts of the report need,
  in memory proportional to the judged documents, not the run;
- one **list column per curve family**, named ``<family>@K`` (``nDCG@K``, ``P@K``,
  ``P(rel=2)@K``...): ``list<float64>`` of length ``k_max`` (the curves' width), element
  ``K - 1`` is the value at K. Every family ragreport computes curves for is stored
  (P, R, F1, HitRate, RR, nDCG, AP and those of the measures asked for), plus ``Judged@K``
  (the share of the top K that is judged, for the report's health and drift checks);
- one **float64 column per scalar measure**, named as the measure (``AP``, ``RR``,
  ``Rprec``, ``nDCG``, ``ERR@5``...): the measures without a cutoff, and the summary measures
  whose cutoff is beyond the curves' width (``P@1000`` when the curves stop at 20);
- ``latency_ms`` (float64, null when the run has no time for the query).

List columns (rather than one column per K) keep the schema the same for every ``k_max``
and the table narrow; every engine (Spark, Dask, Ray, DuckDB, pandas) reads them.

Schema metadata (``ragreport.*`` keys, each a JSON string): ``ragreport.schema``
(:data:`SCHEMA_NAME`), ``ragreport.version`` (:data:`SCHEMA_VERSION`), ``ragreport.k_max``
(the ``k_max`` asked for), ``ragreport.conventions`` (:class:`~ragreport.result.Conventions`
as a dict, ``curve_width`` null: it is per run), ``ragreport.measures`` (the summary
measures, in order), ``ragreport.columns`` (each measure column: its name, its kind --
``curve``, ``scalar`` or ``judged``, the Judged@K curve kept for the health checks -- and the
exact measure), ``ragreport.id_order`` (``"numeric"`` or ``"bytes"``: how the queries are
listed), ``ragreport.fingerprints`` (``{"qrels": sha256 or null, "runs": {run: sha256}}``,
and ``"qrels_judgments"``, the judgments' own fingerprint, when known)
and ``ragreport.runs`` (per run: its ``curve_width``, the dataset counts of
:class:`~ragreport.ranking.Counts`, the first 10 run-only and qrels-only query ids, and the
latency of timed queries that were not evaluated). Merging sums the counts (but shards of a
run that state the same qrels fingerprint were each evaluated against the whole qrels: its
queries count once, and the qrels-only ones are those no shard evaluated); shards must agree
on everything else (the fingerprints only when both state one); a run's curves stop at its
narrowest shard's width.

What a table cannot hold: the rankings themselves (documents, scores, grades). A result read
back has no rankings (:attr:`PerQueryResult.has_rankings` is False): the report built from it
omits the worst queries' ranked lists and the tie exposure (which need the scores), and says
so; every number it does show is the one the raw files give.

>>> from ragreport import evaluate
>>> r = evaluate({"q1": {"a": 2, "b": 1}, "q2": {"c": 1}},
...              {"q1": ["b", "x", "a"], "q2": ["y"]}, ["nDCG@3", "P@1"])
>>> t = to_table(r)
>>> t.num_rows, t.column("query_id").to_pylist(), t.column("P@K").type
(2, ['q1', 'q2'], ListType(list<item: double>))
>>> [back] = from_tables([t])
>>> back.values("nDCG@3").tolist() == r.values("nDCG@3").tolist(), back.counts == r.counts
(True, True)
"""

from __future__ import annotations

import glob as _glob
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .context import Context
from .errors import InputError, MeasureError, RagReportError
from .kernel import kernel_of
from .measures import Measure
from .ranking import Counts
from .result import Conventions, EvaluationResult

if TYPE_CHECKING:
    import pyarrow as pa

    from .metrics import BoolArray, FloatArray

__all__ = ["SCHEMA_NAME", "SCHEMA_VERSION", "PerQueryResult", "from_tables", "has_rankings",
           "is_per_query", "read", "shard_files", "stated_qrels", "to_table", "unjudged_in_top",
           "write"]

#: The schema's name, in the metadata key ``ragreport.schema``.
SCHEMA_NAME = "ragreport.per_query"
#: The schema's version, in ``ragreport.version``; a newer one is refused when read.
SCHEMA_VERSION = 1

_KEY = "ragreport."
_FIXED = ("run", "query_id", "retrieved", "relevant", "judged", "relevant_ranks",
          "judged_ranks")
_EXAMPLES = 10  # run-only / qrels-only ids kept per run (the report shows 10)
_JUDGED = Measure("Judged")


# ---- writing ------------------------------------------------------------------------------
def _measure_dict(m: Measure) -> dict[str, Any]:
    return {f.name: getattr(m, f.name) for f in fields(m)}


def _measure_from(d: Any, source: str) -> Measure:
    if not isinstance(d, dict):
        raise InputError("ragreport.columns: a measure must be a JSON object", source)
    try:
        return Measure(**d)
    except (TypeError, ValueError) as e:
        raise InputError(f"ragreport.columns: bad measure {d!r} ({e})", source) from None


def _judged_curve(result: EvaluationResult) -> FloatArray:
    if _JUDGED in result.curves:
        return np.asarray(result.curves[_JUDGED], dtype=np.float64)
    from .kernel import cutoff_values

    if result.n_queries == 0 or result.k_max == 0:
        return np.zeros((result.n_queries, result.k_max))
    level = float(result.conventions.rel_level)
    cols = [cutoff_values(result.ranking, Measure("Judged", k), level,
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
        kind = "judged" if key == _JUDGED and key not in asked else "curve"
        described.append({"column": name, "kind": kind, "measure": _measure_dict(key)})
    if _JUDGED not in result.curves:  # for the report's Judged@K (health, drift checks)
        cols["Judged@K"] = _curve_column("Judged@K", _judged_curve(result), k)
        described.append({"column": "Judged@K", "kind": "judged",
                          "measure": _measure_dict(_JUDGED)})
    scalars: dict[Measure, FloatArray] = dict(result.scalars)
    for m in result.measures:
        if m.cutoff is not None and m.cutoff > k and m not in scalars:
            scalars[m] = result.values(m)  # beyond the curves: from the whole rankings
    for m, v in scalars.items():
        name = str(m)
        if name in cols:
            raise RagReportError(f"per-query column {name!r} would be written twice")
        cols[name] = pa.array(np.asarray(v, dtype=np.float64), pa.float64())
        described.append({"column": name, "kind": "scalar", "measure": _measure_dict(m)})
    lat = result.latency_ms
    cols["latency_ms"] = pa.array([lat.get(q) for q in result.query_ids], pa.float64())
    evaluated = set(result.query_ids)
    run_meta = {
        "curve_width": k,
        "counts": asdict(result.counts),
        "run_only_ids": list(rk.run_only_ids[:_EXAMPLES]),
        "qrels_only_ids": list(rk.qrels_only_ids[:_EXAMPLES]),
        "latency_other": {q: t for q, t in lat.items() if q not in evaluated},
    }
    fp = dict(fingerprints or {})
    meta = {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "k_max": result.conventions.k_max,
        "conventions": asdict(replace(result.conventions, curve_width=None)),
        "measures": [_measure_dict(m) for m in result.measures],
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
        {(_KEY + k): json.dumps(v, sort_keys=True, allow_nan=False) for k, v in meta.items()})


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
    >>> [back] = read(p)
    >>> back.mean("P@1")
    1.0
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .fileio import write_atomic

    table = to_table(results, qrels_sha256=qrels_sha256, run_sha256=run_sha256,
                     qrels_judgments_sha256=qrels_judgments_sha256)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return write_atomic(path, sink.getvalue().to_pybytes(), inputs)


# ---- reading and merging ------------------------------------------------------------------
def table_meta(table: pa.Table, source: str) -> dict[str, Any]:
    raw = table.schema.metadata or {}
    got: dict[str, Any] = {}
    for k, v in raw.items():
        key = k.decode("utf-8", "replace") if isinstance(k, bytes) else str(k)
        if key.startswith(_KEY):
            try:
                got[key[len(_KEY):]] = json.loads(v)
            except ValueError:
                raise InputError(f"metadata {key} is not JSON", source) from None
    if not got:  # a file Spark wrote: the metadata is its run column's (ragreport.spark)
        got = _spark_meta(raw, source)
    if got.get("schema") != SCHEMA_NAME:
        raise InputError(f"not a ragreport per-query table (no {_KEY}schema = "
                         f"{SCHEMA_NAME!r} in its schema metadata); write one with "
                         "ragreport evaluate --per-query-out", source)
    version = got.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"bad schema version {version!r}", source)
    if version > SCHEMA_VERSION:
        raise InputError(f"per-query schema version {version} is newer than this ragreport "
                         f"reads ({SCHEMA_VERSION}); upgrade ragreport", source)
    for key, kind in (("k_max", int), ("conventions", dict), ("measures", list),
                      ("columns", list), ("runs", dict), ("fingerprints", dict),
                      ("id_order", str)):
        if not isinstance(got.get(key), kind):
            raise InputError(f"metadata {_KEY}{key} is missing or malformed", source)
    return got


def _spark_meta(raw: Mapping[Any, Any], source: str) -> dict[str, Any]:
    """The ``ragreport.*`` metadata of a column of the Spark schema Spark writes in its Parquet
    files (``org.apache.spark.sql.parquet.row.metadata``); empty when there is none."""
    text = raw.get(b"org.apache.spark.sql.parquet.row.metadata")
    try:
        spark = json.loads(text) if text else {}
        for f in spark.get("fields", []) if isinstance(spark, dict) else []:
            meta = f.get("metadata") if isinstance(f, dict) else None
            if isinstance(meta, dict) and (_KEY + "schema") in meta:
                return {k[len(_KEY):]: json.loads(v) for k, v in meta.items()
                        if isinstance(k, str) and k.startswith(_KEY) and isinstance(v, str)}
    except ValueError:
        raise InputError("the Spark metadata is not JSON", source) from None
    return {}


def _same_qrels(a: Mapping[str, Any], b: Mapping[str, Any]
                ) -> tuple[bool, str, Any, Any] | None:
    """Whether two shards state the same qrels: by the judgments' own fingerprint when both
    state one (the same judgments in a gzipped or reordered file are the same qrels), else by
    the qrels files' SHA-256; None when they cannot tell (a shard states neither).
    Returns (same, which fingerprint, a's, b's)."""
    fa, fb = a["fingerprints"], b["fingerprints"]
    for key, what in (("qrels_judgments", "judgments sha256"), ("qrels", "sha256")):
        va, vb = fa.get(key), fb.get(key)
        if va is not None and vb is not None:
            return va == vb, what, va, vb
    return None


def _common(values: Iterable[Any]) -> Any:
    """The one value every item of ``values`` is; None when they differ (or there are none).
    A fingerprint stated by some shards only is None among the values: unknown."""
    got = set(values)
    return got.pop() if len(got) == 1 else None


def stated_qrels(results: Sequence[EvaluationResult]) -> tuple[str | None, str | None]:
    """The qrels fingerprints every run of per-query ``results`` states: the qrels file's
    SHA-256 and the judgments' own fingerprint, each None when unknown (a run states none,
    the runs differ, or a result is not per-query)."""
    return (_common(getattr(r, "qrels_sha256", None) for r in results),
            _common(getattr(r, "qrels_judgments_sha256", None) for r in results))


def _curve_columns(columns: Sequence[Any]) -> list[Any]:
    """The columns of a shard's metadata but its scalar columns of measures with a cutoff
    (a cutoff beyond the curves of one shard and within those of another)."""
    return [d for d in columns if not (isinstance(d, dict) and d.get("kind") == "scalar"
                                       and isinstance(d.get("measure"), dict)
                                       and d["measure"].get("cutoff") is not None)]


def merge_meta(metas: Sequence[dict[str, Any]], sources: Sequence[str]) -> dict[str, Any]:
    """One metadata for shards that agree; a one-line InputError naming two that do not."""
    first = metas[0]
    # the first shard stating each kind of qrels fingerprint: every shard is compared with
    # them (a first shard that states none, an engine's, must not let any qrels through)
    stating: list[tuple[dict[str, Any], str]] = []
    for key in ("qrels_judgments", "qrels"):
        found = next(((m, s) for m, s in zip(metas, sources, strict=True)
                      if m["fingerprints"].get(key) is not None), None)
        if found is not None and all(found[0] is not m for m, _ in stating):
            stating.append(found)
    for meta, src in zip(metas, sources, strict=True):
        for ref, ref_src in stating:
            same = _same_qrels(ref, meta)
            if same is not None and not same[0]:
                _, what, qa, qb = same
                raise InputError(f"{ref_src} and {src} were evaluated on different qrels "
                                 f"({what} {str(qa)[:12]}... vs {str(qb)[:12]}...); evaluate "
                                 "every shard against the same (whole) qrels file", src)
    for meta, src in zip(metas[1:], sources[1:], strict=True):
        for key, what in (("conventions", "conventions"), ("measures", "measures")):
            a, b = first[key], meta[key]
            if key == "conventions" and isinstance(a, dict) and isinstance(b, dict):
                # k_max only sets how wide the curves may be: no value depends on it
                a, b = ({k: v for k, v in c.items() if k != "k_max"} for c in (a, b))
            if a != b:
                diff = ""
                if key == "conventions":
                    bad = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
                    diff = f" ({', '.join(f'{k}: {a.get(k)!r} vs {b.get(k)!r}' for k in bad[:3])})"
                raise InputError(f"{sources[0]} and {src} have different {what}{diff}; "
                                 "only shards of one evaluation merge", src)
        if _curve_columns(meta["columns"]) != _curve_columns(first["columns"]):
            raise InputError(f"{sources[0]} and {src} have different measure columns; only "
                             "shards of one evaluation merge", src)
    out = dict(first)
    # a cutoff beyond one shard's curves is a column of its own there, a curve point in a
    # deeper shard: the merge lists every such column (read from the curve where missing)
    out["columns"] = list({json.dumps(d, sort_keys=True): d
                           for m in metas for d in m["columns"]}.values())
    out["k_max"] = min(m["k_max"] for m in metas)
    if isinstance(out["conventions"], dict):
        out["conventions"] = {**out["conventions"], "k_max": out["k_max"]}
    out["fingerprints"] = {
        "qrels": next((m["fingerprints"].get("qrels") for m in metas
                       if m["fingerprints"].get("qrels")), None),
        "runs": {k: v for m in metas for k, v in (m["fingerprints"].get("runs") or {}).items()},
    }
    judgments = _common(m["fingerprints"].get("qrels_judgments") for m in metas)
    if judgments is not None:
        out["fingerprints"]["qrels_judgments"] = judgments
    out["id_order"] = "numeric" if all(m["id_order"] == "numeric" for m in metas) else "bytes"
    runs: dict[str, Any] = {}
    src_of = {id(m): s for m, s in zip(metas, sources, strict=True)}
    counted: set[str] = set()
    qrels_of: dict[str, Any] = {}  # run -> the qrels fingerprint its first shard states
    for m in metas:
        # the files of one engine evaluation (ragreport.spark / dask / ray) each carry the
        # whole evaluation's counts, under one evaluation id: counted once
        evaluation = m.get("evaluation")
        if isinstance(evaluation, str):
            if evaluation in counted:
                continue
            counted.add(evaluation)
        for name, rm in m["runs"].items():
            if name not in runs:
                runs[name] = json.loads(json.dumps(rm))
                qrels_of[name] = m
                continue
            got = runs[name]
            wa, wb = got.get("curve_width"), rm.get("curve_width")
            if wa != wb and all(isinstance(w, int) and not isinstance(w, bool) and w >= 0
                                for w in (wa, wb)):
                # shards evaluated apart stop their curves at their own deepest ranking:
                # merged, the curves stop at the narrowest (the rest stays in the files)
                got["curve_width"] = min(wa, wb)
                got["mixed_widths"] = True
            elif wa != wb:
                raise InputError(
                    f"{sources[0]} and {src_of[id(m)]} hold run {name!r} with curves of "
                    f"different widths ({got.get('curve_width')} vs {rm.get('curve_width')}); "
                    "evaluate every shard with the same curve width", src_of[id(m)])
            summed = {k: int(got["counts"].get(k, 0)) + int(rm["counts"].get(k, 0))
                      for k in set(got["counts"]) | set(rm["counts"])}
            same = _same_qrels(qrels_of[name], m)
            if same is not None and same[0]:
                # shards of a run evaluated against the same (whole) qrels file: its queries
                # were counted by each shard; those of no shard's run are the qrels-only ones
                whole = int(rm["counts"].get("qrels_queries", 0))
                summed["qrels_queries"] = whole
                summed["qrels_only"] = max(summed.get("qrels_only", 0) - whole, 0)
                got["shared_qrels"] = True
            got["counts"] = summed
            for key in ("run_only_ids", "qrels_only_ids"):
                got[key] = got[key] + rm[key]
            got["latency_other"] = {**got["latency_other"], **rm["latency_other"]}
    for rm in runs.values():
        for key in ("run_only_ids", "qrels_only_ids"):
            ids = _sorted_ids(list(dict.fromkeys(rm[key])), out["id_order"])
            # shared qrels: shortened once the queries evaluated in other shards are left out
            rm[key] = ids if rm.get("shared_qrels") is True else ids[:_EXAMPLES]
    out["runs"] = runs
    return out


def _sorted_ids(ids: Sequence[str], id_order: str) -> list[str]:
    """``ids`` in the order an evaluation lists queries (as :func:`ragreport.align.id_rank`
    sorts them): numerically (ties by the string) or in byte order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(list(ids), pa.string())
    keys: dict[str, Any] = {"s": arr}
    if id_order == "numeric":
        try:
            keys = {"n": pc.cast(arr, pa.int64()), "s": arr}
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InputError("metadata ragreport.id_order is 'numeric' but a query id is "
                             "not a number") from None
    order = pc.sort_indices(pa.table(keys), sort_keys=[(k, "ascending") for k in keys])
    return [str(x) for x in arr.take(order).to_pylist()]


class _NoRanking:
    """What the analysis and report read of a ranking, for a result read from per-query
    tables: the query index, per-query counts and the run-only / qrels-only examples. Any
    other use (documents, scores, grades) is an error saying the rankings are not there."""

    def __init__(self, query_ids: list[str], n_ret: Any, n_rel: Any, judged: Any,
                 level: float, counts: Counts, run_only_ids: list[str],
                 qrels_only_ids: list[str], id_order: str, rel_ranks: tuple[Any, Any],
                 judged_ranks: tuple[Any, Any]) -> None:
        self.query_ids = query_ids
        self._rel_ranks = rel_ranks
        self._judged_ranks = judged_ranks
        self._index = {q: i for i, q in enumerate(query_ids)}
        self.n_ret = n_ret
        self._n_rel = n_rel
        self.judged = judged
        self._level = level
        self.counts = counts
        self.run_only_ids = run_only_ids
        self.qrels_only_ids = qrels_only_ids
        self.id_order = id_order

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def depth(self) -> int:
        return max(int(self.n_ret.max()) if len(self.n_ret) else 0, 1)

    def query_index(self, qid: str) -> int:
        try:
            return self._index[qid]
        except KeyError:
            raise RagReportError(f"query {qid!r} was not evaluated") from None

    def _at_level(self, rel_level: float) -> None:
        if float(rel_level) != self._level:
            raise RagReportError("per-query results hold the relevant documents at the "
                                 f"evaluation's level {self._level:g} only")

    def n_relevant(self, rel_level: float) -> Any:
        self._at_level(rel_level)
        return self._n_rel

    def relevant_ranks(self, rel_level: float) -> tuple[Any, Any]:
        """(query, 0-based rank) of every relevant retrieved document (stored)."""
        self._at_level(rel_level)
        return self._rel_ranks

    def judged_ranks(self) -> tuple[Any, Any]:
        """(query, 0-based rank) of every judged retrieved document (stored)."""
        return self._judged_ranks

    def judged_counts(self) -> Any:
        """Judgments per query (stored)."""
        return self.judged

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise RagReportError(f"per-query results hold no rankings ({name} is not stored); "
                             "use the qrels and run files for this")


class PerQueryResult(EvaluationResult):
    """An :class:`EvaluationResult` read back from per-query tables: every value, curve and
    count of the evaluation, without the rankings (:attr:`has_rankings` is False)."""

    has_rankings = False

    def __init__(self, *, wide_curves: Mapping[Measure, FloatArray] | None = None,
                 qrels_sha256: str | None = None, qrels_judgments_sha256: str | None = None,
                 **fields: Any) -> None:
        super().__init__(**fields)
        #: Curves stored wider than one evaluation of these queries has (an engine's
        #: partitions), for values past the cut.
        self.wide_curves: dict[Measure, FloatArray] = dict(wide_curves or {})
        #: The qrels' fingerprint every shard of this run states (``evaluate
        #: --per-query-out`` writes the qrels file's SHA-256); None when a shard states none
        #: (the engines).
        self.qrels_sha256 = qrels_sha256
        #: The same for the judgments' fingerprint
        #: (:func:`~ragreport.analysis.drift.judgments_sha256`).
        self.qrels_judgments_sha256 = qrels_judgments_sha256

    def values(self, measure: str | Measure) -> FloatArray:
        m = self._measure(measure)
        if m.cutoff is None and m not in self.scalars:  # said as for a curve beyond the files
            raise MeasureError(f"{m} is not in the per-query results (stored: "
                               f"{', '.join(map(str, self.scalars)) or 'none'}); evaluate "
                               "with it among the measures")
        return super().values(m)

    def _beyond(self, m: Measure) -> FloatArray:
        cache = self._beyond_values
        if m in cache:
            return cache[m]
        wide = self.wide_curves
        if m.cutoff is not None and m.curve_key in wide \
                and m.cutoff <= wide[m.curve_key].shape[1]:  # stored beyond the cut
            cache[m] = np.ascontiguousarray(wide[m.curve_key][:, m.cutoff - 1])
            return cache[m]
        at = kernel_of(m).at
        if m.family.health and at is not None and m.cutoff is not None \
                and self.conventions.ties != "average":  # from the stored judged ranks
            level = float(self.conventions.rel_level)
            cache[m] = at(Context(self.ranking, level), m, m.cutoff)
            return cache[m]
        raise RagReportError(f"{m} is not in the per-query results (the curves stop at K = "
                             f"{self.k_max}); evaluate with it among the measures")

    def ranked_list(self, query_id: str, limit: int | None = None) -> Any:
        raise RagReportError("per-query results hold no rankings; use the qrels and run files")

    def judged(self, query_id: str) -> list[tuple[str, float]]:
        raise RagReportError("per-query results hold no rankings; use the qrels and run files")


def has_rankings(result: EvaluationResult) -> bool:
    """Whether ``result`` carries its rankings (False when read from per-query tables)."""
    return bool(getattr(result, "has_rankings", True))


def _column(table: pa.Table, name: str, source: str) -> Any:
    if name not in table.column_names:
        raise InputError(f"column {name!r} is missing", source)
    return table.column(name)


def _nulls(arr: Any, name: str, take: Any, source: str, rows: Any, what: str = "") -> None:
    """An error at the first selected row where ``arr`` is null."""
    if not arr.null_count:
        return
    mask = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)[take]
    if mask.any():
        raise InputError(f"column {name!r} is null{what}", source,
                         row=int(rows[int(np.flatnonzero(mask)[0])]) + 1)


def _numbers(arr: Any, name: str, source: str, integer: bool) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    ok = pa.types.is_integer(arr.type) or (not integer and pa.types.is_floating(arr.type))
    if not ok:
        kind = "integers" if integer else "numbers"
        raise InputError(f"column {name!r} must hold {kind}, not {arr.type}", source)
    target = pa.int64() if integer else pa.float64()
    if arr.type != target:
        arr = pc.cast(arr, target)
    if arr.null_count:
        arr = arr.fill_null(0)  # the nulls were refused where selected
    return np.asarray(arr.to_numpy(zero_copy_only=False),
                      dtype=np.int64 if integer else np.float64)


def _ints(arr: Any, name: str, take: Any, source: str, rows: Any) -> Any:
    _nulls(arr, name, take, source, rows)
    a = _numbers(arr, name, source, True)[take]
    if len(a) and int(a.min()) < 0:
        raise InputError(f"column {name!r} is negative", source,
                         row=int(rows[int(np.argmin(a))]) + 1)
    return a


def _floats(arr: Any, name: str, take: Any, source: str, rows: Any) -> FloatArray:
    _nulls(arr, name, take, source, rows)
    return np.asarray(_numbers(arr, name, source, False)[take], dtype=np.float64)


def _lists(arr: Any, name: str, take: Any, source: str, rows: Any, integer: bool
           ) -> tuple[Any, Any, Any]:
    """(start, length) of each selected row's list in ``values``, and ``values`` (numpy)."""
    import pyarrow as pa

    t = arr.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)):
        kind = "integers" if integer else "numbers"
        raise InputError(f"column {name!r} must be a list of {kind}, not {t}", source)
    _nulls(arr, name, take, source, rows)
    if pa.types.is_fixed_size_list(t):
        values = arr.flatten()
        offsets = np.arange(len(arr) + 1, dtype=np.int64) * t.list_size
    else:
        values = arr.values
        offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    if values.null_count:
        raise InputError(f"column {name!r} holds a null value", source)
    starts = offsets[take]
    return starts, offsets[take + 1] - starts, _numbers(values, name, source, integer)


def _curve(arr: Any, name: str, k_max: int, take: Any, source: str, rows: Any,
           longer: bool = False) -> FloatArray:
    """The selected rows' curves, ``k_max`` values each (the first ``k_max`` of longer lists
    when ``longer``: shards of wider curves merged with narrower ones)."""
    starts, lengths, values = _lists(arr, name, take, source, rows, False)
    n = len(take)
    short = (lengths < k_max) if longer else (lengths != k_max)
    if n and short.any():
        i = int(np.flatnonzero(short)[0])
        raise InputError(f"column {name!r} holds {int(lengths[i])} values, not k_max = "
                         f"{k_max}", source, row=int(rows[i]) + 1)
    if n == 0 or k_max == 0:
        return np.zeros((n, k_max))
    step = np.arange(n, dtype=np.int64) * k_max
    if np.array_equal(starts - int(starts[0]), step):  # every row in order: one slice
        lo = int(starts[0])
        flat = values[lo:lo + n * k_max]
    else:
        flat = values[(starts[:, None] + np.arange(k_max, dtype=np.int64)).reshape(-1)]
    return np.ascontiguousarray(flat, dtype=np.float64).reshape(n, k_max)


#: Slack for a bounded measure's value computed in floating point (never above 1 by more).
_BOUND_SLACK = 1e-9


def _check_values(values: FloatArray, m: Measure, name: str, whole: bool,
                  where: Any) -> None:
    """An InputError at the first value a measure cannot take: NaN or infinite, outside
    [0, 1] for a bounded measure, negative, or a count that is not a whole number (when
    ``whole``). ``where(i)`` gives the (shard, row) of the ``i``-th selected query."""
    if values.size == 0:
        return
    v = values.reshape(len(values), -1)
    checks: list[tuple[Callable[[FloatArray], BoolArray], str]] = [
        (lambda x: ~np.isfinite(x), "is not a finite number"),
        (lambda x: x < 0, "is negative"),
    ]
    if m.bounded:
        checks.append((lambda x: x > 1 + _BOUND_SLACK,
                       f"is above 1, outside {m.name}'s range [0, 1]"))
    if whole and m.family.counts:
        checks.append((lambda x: x != np.floor(x), f"is not a whole number ({m.name} counts)"))
    with np.errstate(invalid="ignore"):
        for test, what in checks:
            bad = test(v)
            if not bad.any():
                continue
            i, j = np.unravel_index(int(np.flatnonzero(bad)[0]), bad.shape)
            at = f" (K = {int(j) + 1})" if values.ndim > 1 else ""
            source, row = where(int(i))
            raise InputError(f"column {name!r}{at}: value {float(v[i, j])!r} {what}", source,
                             row=row)


def _ranks(arr: Any, name: str, n_ret: Any, take: Any, source: str, rows: Any
           ) -> tuple[Any, Any]:
    """A list<int64> column of 0-based ranks back to (query, rank) pairs, checked: each
    query's ranks increase and stay below its ``retrieved``."""
    starts, lengths, values = _lists(arr, name, take, source, rows, True)
    n = len(take)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    qi = np.repeat(np.arange(n, dtype=np.int64), lengths)
    first = np.cumsum(lengths) - lengths
    pos = values[np.repeat(starts, lengths) + np.arange(len(qi), dtype=np.int64)
                 - np.repeat(first, lengths)]
    bad = (pos < 0) | (pos >= np.asarray(n_ret)[qi])
    if len(pos) > 1:
        bad[1:] |= (qi[1:] == qi[:-1]) & (pos[1:] <= pos[:-1])
    if bad.any():
        raise InputError(f"column {name!r}: ranks must increase, from 0 to retrieved - 1",
                         source, row=int(rows[int(qi[np.flatnonzero(bad)[0]])]) + 1)
    return qi, np.asarray(pos, dtype=np.int64)


def _with_points(table: pa.Table, source: str, columns: Sequence[tuple[str, str, Measure]],
                 curve_of: Mapping[Measure, str]) -> pa.Table:
    """``table`` with each scalar column of a measure with a cutoff that it lacks, taken
    from its curve (a shard whose curves reach the cutoff stores it as a curve point)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for name, kind, m in columns:
        if kind != "scalar" or name in table.column_names:
            continue
        curve = curve_of.get(m.curve_key) if m.cutoff is not None else None
        k = int(m.cutoff or 0)
        arr = table.column(curve) if curve is not None and curve in table.column_names \
            else None
        if arr is None or not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)
                               or pa.types.is_fixed_size_list(arr.type)):
            raise InputError(f"column {name!r} is missing", source)
        lengths = np.asarray(pc.fill_null(pc.list_value_length(arr), 0)
                             .to_numpy(zero_copy_only=False), dtype=np.int64)
        if len(lengths) and int(lengths.min()) < k:
            raise InputError(f"column {name!r} is missing and the curve {curve!r} stops "
                             f"before K = {k}", source,
                             row=int(np.argmin(lengths >= k)) + 1)
        point = pc.list_element(arr, k - 1) if len(lengths) else pa.array([], pa.float64())
        table = table.append_column(name, pa.chunked_array(point.chunks, pa.float64())
                                    if isinstance(point, pa.ChunkedArray) else point)
    return table


def unjudged_in_top(result: EvaluationResult, i: int, k: int) -> tuple[int, int]:
    """(documents in the top ``k`` of the query at index ``i``, how many are unjudged), as
    :func:`ragreport.analysis.failures.unjudged_in_top`, for a result with or without its
    rankings.

    >>> from ragreport import evaluate
    >>> r = evaluate({"q": {"a": 1, "b": 0}}, {"q": ["x", "a", "b", "y"]}, ["P@1"])
    >>> [back] = from_tables([to_table(r)])
    >>> unjudged_in_top(back, 0, 3), unjudged_in_top(back, 0, 10)
    ((3, 1), (4, 2))
    """
    qi, pos = result.ranking.judged_ranks()
    top = min(int(k), int(result.ranking.n_ret[i]))
    return top, top - int(np.count_nonzero((qi == i) & (pos < top)))


def from_tables(tables: Sequence[pa.Table], sources: Sequence[str] | None = None
                ) -> list[EvaluationResult]:
    """Merge per-query tables (shards) into one :class:`EvaluationResult` per run.

    The shards must come from one evaluation: the same conventions, measures and qrels
    fingerprint (when both state one), and no query of a run in two shards. The queries are
    listed as one evaluation lists them, and the dataset counts are summed, so the result
    equals (every value, curve and count) that of evaluating the whole input; the curves stop
    where that evaluation's stop, or at the narrowest shard's width when that is less.

    Parameters
    ----------
    tables : list of pyarrow.Table
        Tables written by :func:`to_table` (or read from Parquet files it wrote).
    sources : list of str, optional
        A name for each table in error messages (default ``shard 1``, ``shard 2``...).

    Returns
    -------
    list of EvaluationResult
        One per run, in the order the runs first appear; without rankings
        (:class:`PerQueryResult`).

    Raises
    ------
    InputError
        A table that is not a per-query table, a newer schema version, shards that disagree,
        or a query of a run in two shards (one line naming the shards).

    >>> from ragreport import evaluate
    >>> qrels = {"1": {"a": 1}, "2": {"b": 1}, "10": {"c": 1}}
    >>> run = {"1": ["a"], "2": ["x", "b"], "10": ["c"]}
    >>> whole = evaluate(qrels, run, ["P@1"])
    >>> a = evaluate({q: qrels[q] for q in ("1", "10")}, {q: run[q] for q in ("1", "10")},
    ...              ["P@1"], k_max=20)
    >>> b = evaluate({"2": qrels["2"]}, {"2": run["2"]}, ["P@1"], k_max=20)
    >>> [merged] = from_tables([to_table(b), to_table(a)])
    >>> merged.query_ids, merged.values("P@1").tolist() == whole.values("P@1").tolist()
    (['1', '2', '10'], True)
    """
    import pyarrow as pa

    if not tables:
        raise InputError("no per-query table to read")
    names = list(sources) if sources is not None else [f"shard {i + 1}"
                                                       for i in range(len(tables))]
    if len(names) != len(tables):
        raise RagReportError("sources must name every table")
    metas = [table_meta(t, s) for t, s in zip(tables, names, strict=True)]
    meta = merge_meta(metas, names)
    shared = _conventions(meta["conventions"], names[0])
    measures = tuple(_measure_from(d, names[0]) for d in meta["measures"])
    columns: list[tuple[str, str, Measure]] = []
    for d in meta["columns"]:
        name, kind = (d.get("column"), d.get("kind")) if isinstance(d, dict) else (None, None)
        if not isinstance(name, str) or kind not in ("curve", "scalar", "judged"):
            raise InputError(f"metadata {_KEY}columns is malformed", names[0])
        columns.append((name, str(kind), _measure_from(d.get("measure"), names[0])))

    # every row of every shard, with the shard it came from (for errors)
    run_col: list[str] = []
    qid_col: list[str] = []
    shard_of: list[int] = []
    row_of: list[int] = []
    for i, (t, src) in enumerate(zip(tables, names, strict=True)):
        for c in _FIXED:
            _column(t, c, src)
        for c, kind, m in columns:
            if kind != "scalar" or m.cutoff is None:  # else: read from the curve if missing
                _column(t, str(c), src)
        ids: dict[str, list[str]] = {}
        for c in ("run", "query_id"):
            col = t.column(c)
            if pa.types.is_dictionary(col.type) and (
                    pa.types.is_string(col.type.value_type)
                    or pa.types.is_large_string(col.type.value_type)):
                col = col.cast(col.type.value_type)  # categorical (pandas, Spark)
            if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
                raise InputError(f"column {c!r} must hold strings, not {col.type}", src)
            if col.null_count:
                nulls = np.asarray(col.is_null().to_numpy(), dtype=bool)
                raise InputError(f"column {c!r} is null", src,
                                 row=int(np.flatnonzero(nulls)[0]) + 1)
            ids[c] = col.to_pylist()
        run_col += ids["run"]
        qid_col += ids["query_id"]
        shard_of += [i] * t.num_rows
        row_of += range(t.num_rows)
    unknown = sorted(set(run_col) - set(meta["runs"]))
    if unknown:
        raise InputError(f"run {unknown[0]!r} has rows but no counts in the metadata",
                         names[shard_of[run_col.index(unknown[0])]])
    wanted = [*_FIXED[2:], *(str(c) for c, _, _ in columns)]  # run, query_id: read above
    curve_of = {m: c for c, kind, m in columns if kind != "scalar"}
    tables = [_with_points(t, src, columns, curve_of) for t, src in
              zip(tables, names, strict=True)]
    try:
        full = pa.concat_tables([t.select(wanted) for t in tables],
                                promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise InputError(f"the shards' columns do not match ({str(e).splitlines()[0]})",
                         names[0]) from None
    cols = {c: full.column(c).chunk(0) if full.column(c).num_chunks == 1
            else full.column(c).combine_chunks() for c in wanted}
    latency_col = [x for t in tables for x in (t.column("latency_ms").to_pylist()
                                                if "latency_ms" in t.column_names
                                                else [None] * t.num_rows)]

    out: list[EvaluationResult] = []
    for run in meta["runs"]:
        idx = [j for j, r in enumerate(run_col) if r == run]
        seen: dict[str, int] = {}
        for j in idx:
            q = qid_col[j]
            if q in seen:
                a, b = names[shard_of[seen[q]]], names[shard_of[j]]
                where = f"{a} and {b}" if a != b else f"{a} (twice)"
                hint = ""
                if meta["runs"][run].get("shared_qrels") is True and shared.complete:
                    hint = (" (with -c each shard evaluated every query of the whole qrels: "
                            "such shards do not merge)")
                raise InputError(f"query {q!r} of run {run!r} is in {where}; each query "
                                 f"must be in one shard{hint}", b, row=row_of[j] + 1)
            seen[q] = j
        order = _sorted_ids([qid_col[j] for j in idx], meta["id_order"])
        take = np.array([seen[q] for q in order], dtype=np.int64)
        where = names[0] if len(tables) == 1 else "per-query shards"
        shown_rows = np.array([row_of[j] for j in take.tolist()], dtype=np.int64)

        def place(i: int, take: Any = take) -> tuple[str, int]:
            j = int(take[i])
            return names[shard_of[j]], row_of[j] + 1
        rm = meta["runs"][run]
        k_max = rm.get("curve_width")
        if isinstance(k_max, bool) or not isinstance(k_max, int) or k_max < 0:
            raise InputError(f"metadata {_KEY}runs: bad curve_width for run {run!r}", where)
        conv = replace(shared, curve_width=k_max)
        curves: dict[Measure, FloatArray] = {}
        scalars: dict[Measure, FloatArray] = {}
        beyond: dict[Measure, FloatArray] = {}
        whole = shared.ties != "average"  # expected counts over tie orders are fractional
        for (name, kind, m) in columns:
            if kind in ("curve", "judged"):  # judged: Judged@K, kept for the health checks
                curves[m] = _curve(cols[name], name, k_max, take, where, shown_rows,
                                   rm.get("mixed_widths") is True)
                _check_values(curves[m], m, name, whole, place)
            else:
                v = _floats(cols[name], name, take, where, shown_rows)
                _check_values(v, m, name, whole, place)
                if m.cutoff is not None:
                    beyond[m] = v
                else:
                    scalars[m] = v
        counts = _counts(rm.get("counts"), where)
        if counts.evaluated != len(order):
            raise InputError(f"run {run!r}: {len(order)} query rows but the counts say "
                             f"{counts.evaluated} evaluated queries (a shard is missing or "
                             "was filtered)", where)
        n_ret = _ints(cols["retrieved"], "retrieved", take, where, shown_rows)
        n_rel = _ints(cols["relevant"], "relevant", take, where, shown_rows)
        judged = _ints(cols["judged"], "judged", take, where, shown_rows)
        wide: dict[Measure, FloatArray] = {}
        width = _whole_width(int(shared.k_max), n_ret, judged)
        if width < k_max:  # e.g. an engine's partitions: curves k_max wide, cut as one
            wide, k_max = curves, width  # evaluation of these queries cuts them
            curves = {m: np.ascontiguousarray(c[:, :width]) for m, c in wide.items()}
            conv = replace(shared, curve_width=k_max)
        rel_ranks = _ranks(cols["relevant_ranks"], "relevant_ranks", n_ret, take, where,
                           shown_rows)
        judged_ranks = _ranks(cols["judged_ranks"], "judged_ranks", n_ret, take, where,
                              shown_rows)
        qrels_only_ids = [str(x) for x in rm.get("qrels_only_ids", [])]
        if rm.get("shared_qrels") is True:  # a query of the whole qrels evaluated elsewhere
            qrels_only_ids = [q for q in qrels_only_ids if q not in seen][:_EXAMPLES]
        ranking = _NoRanking(order, n_ret, n_rel, judged, float(conv.rel_level), counts,
                             [str(x) for x in rm.get("run_only_ids", [])],
                             qrels_only_ids,
                             meta["id_order"], rel_ranks, judged_ranks)
        latency = {qid_col[j]: float(latency_col[j]) for j in take.tolist()
                   if latency_col[j] is not None}
        latency.update({str(q): float(t) for q, t in (rm.get("latency_other") or {}).items()})
        prints = {attr: _common(m["fingerprints"].get(key) for m in metas if run in m["runs"])
                  for attr, key in (("qrels_sha256", "qrels"),
                                    ("qrels_judgments_sha256", "qrels_judgments"))}
        out.append(PerQueryResult(
            run_name=run, query_ids=order, measures=measures, k_max=k_max, curves=curves,
            scalars=scalars, counts=counts, conventions=conv, ranking=ranking,
            query_texts={}, latency_ms=latency, beyond=beyond, wide_curves=wide, **prints))
    return out


def _whole_width(k_max: int, n_ret: Any, judged: Any) -> int:
    """The curves' width one evaluation of these queries has
    (:func:`ragreport.engine.curve_width`, from the per-query counts: the ranked rows are
    the retrieved documents, the qrels rows the judged ones)."""
    from .context import CURVE_CELLS, DEFAULT_K_MAX

    n = len(n_ret)
    depth = max(int(n_ret.max()) if n else 0, 1)
    budget = max(CURVE_CELLS, int(np.sum(n_ret)) + int(np.sum(judged)))
    return min(k_max, max(DEFAULT_K_MAX, min(depth, budget // max(n, 1))))


def _conventions(d: Mapping[str, Any], source: str) -> Conventions:
    names = {f.name for f in fields(Conventions)}
    extra = sorted(set(d) - names)
    if extra:
        raise InputError(f"unknown convention {extra[0]!r} (written by a newer ragreport?)",
                         source)
    try:
        args = dict(d)
        if "compat_exceptions" in args:
            args["compat_exceptions"] = tuple(args["compat_exceptions"])
        return Conventions(**args)
    except TypeError as e:
        raise InputError(f"metadata {_KEY}conventions is malformed ({e})", source) from None


def _counts(d: Any, source: str) -> Counts:
    names = [f.name for f in fields(Counts)]
    if not isinstance(d, dict) or any(not isinstance(d.get(k, 0), int) for k in names):
        raise InputError(f"metadata {_KEY}runs: malformed counts", source)
    return Counts(**{k: int(d.get(k, 0)) for k in names})


# ---- files ----------------------------------------------------------------------------------
def is_per_query(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a Parquet file holding a ragreport per-query table (its schema
    metadata names :data:`SCHEMA_NAME`); False for anything else, never an error."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        with open(p, "rb") as f:
            head = f.read(4)
        if head != b"PAR1":
            return False
        import pyarrow.parquet as pq

        meta = pq.read_schema(p).metadata or {}
    except (OSError, ValueError, ImportError):
        return False
    return meta.get((_KEY + "schema").encode()) == json.dumps(SCHEMA_NAME).encode()


def shard_files(spec: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The Parquet files ``spec`` names: files as given, every ``*.parquet`` under a
    directory (recursively, in name order; hidden and ``_``-prefixed entries such as Spark's
    ``_SUCCESS`` left out), the files a glob pattern matches (and those of the directories it
    matches, as for a directory); each once.

    Raises
    ------
    InputError
        Nothing given, a missing path, a directory without Parquet files, a pattern that
        matches nothing.
    """
    items = [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
    if not items:
        raise InputError("no per-query file given")

    def in_dir(p: Path) -> list[Path]:
        return sorted(q for q in p.rglob("*.parquet") if q.is_file()
                      and not any(part.startswith((".", "_")) for part in
                                  q.relative_to(p).parts))

    out: list[Path] = []
    for item in items:
        text = os.fspath(item)
        p = Path(text)
        if p.is_dir():
            found = in_dir(p)
            if not found:
                raise InputError("directory holds no .parquet file", text)
            out += found
        elif p.exists():
            out.append(p)
        elif any(ch in text for ch in "*?["):
            # the files it matches, and those of the directories it matches (Spark writes
            # df.write.parquet("bm25.parquet") as a directory of that name)
            found = [f for x in sorted(_glob.glob(text, recursive=True))
                     for f in ([Path(x)] if Path(x).is_file() else
                               in_dir(Path(x)) if Path(x).is_dir() else [])]
            if not found:
                raise InputError("the pattern matches no file", text)
            out += found
        else:
            raise InputError("no such file or directory", text)
    uniq = list(dict.fromkeys(q.resolve() for q in out))
    return uniq


def read(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
         ) -> list[EvaluationResult]:
    """Read per-query Parquet files (files, directories of shards, glob patterns) and merge
    them (:func:`from_tables`): one :class:`EvaluationResult` per run.

    Raises
    ------
    InputError
        A missing file, an empty directory, a pattern matching nothing, a file that is not
        Parquet or not a per-query table, or shards that do not merge (one line each).
    """
    import pyarrow.parquet as pq

    from .fileio import shown_path

    files = shard_files(paths)
    tables = []
    for f in files:
        try:
            tables.append(pq.read_table(f))
        except (OSError, ValueError) as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise InputError(f"not a readable Parquet file ({msg})", shown_path(f)) from None
    return from_tables(tables, [shown_path(f) for f in files])
