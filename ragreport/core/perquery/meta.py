"""The metadata of per-query tables: read from a table, checked, merged over shards."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ..result import EvaluationResult

if TYPE_CHECKING:
    import pyarrow as pa

from .schema import EXAMPLES, KEY, SCHEMA_NAME, SCHEMA_VERSION

__all__ = ["common_value", "merge_meta", "sorted_ids", "stated_qrels", "table_meta"]


# ---- reading and merging ------------------------------------------------------------------
def table_meta(table: pa.Table, source: str) -> dict[str, Any]:
    raw = table.schema.metadata or {}
    got: dict[str, Any] = {}
    for k, v in raw.items():
        key = k.decode("utf-8", "replace") if isinstance(k, bytes) else str(k)
        if key.startswith(KEY):
            try:
                got[key[len(KEY):]] = json.loads(v)
            except ValueError:
                raise InputError(f"metadata {key} is not JSON", source) from None
    if not got:  # a file Spark wrote: the metadata is its run column's (ragreport.spark)
        got = _spark_meta(raw, source)
    if got.get("schema") != SCHEMA_NAME:
        raise InputError(f"not a ragreport per-query table (no {KEY}schema = "
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
            raise InputError(f"metadata {KEY}{key} is missing or malformed", source)
    return got


def _spark_meta(raw: Mapping[Any, Any], source: str) -> dict[str, Any]:
    """The ``ragreport.*`` metadata of a column of the Spark schema Spark writes in its Parquet
    files (``org.apache.spark.sql.parquet.row.metadata``); empty when there is none."""
    text = raw.get(b"org.apache.spark.sql.parquet.row.metadata")
    try:
        spark = json.loads(text) if text else {}
        for f in spark.get("fields", []) if isinstance(spark, dict) else []:
            meta = f.get("metadata") if isinstance(f, dict) else None
            if isinstance(meta, dict) and (KEY + "schema") in meta:
                return {k[len(KEY):]: json.loads(v) for k, v in meta.items()
                        if isinstance(k, str) and k.startswith(KEY) and isinstance(v, str)}
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


def common_value(values: Iterable[Any]) -> Any:
    """The one value every item of ``values`` is; None when they differ (or there are none).
    A fingerprint stated by some shards only is None among the values: unknown."""
    got = set(values)
    return got.pop() if len(got) == 1 else None


def stated_qrels(results: Sequence[EvaluationResult]) -> tuple[str | None, str | None]:
    """The qrels fingerprints every run of per-query ``results`` states: the qrels file's
    SHA-256 and the judgments' own fingerprint, each None when unknown (a run states none,
    the runs differ, or a result is not per-query)."""
    return (common_value(getattr(r, "qrels_sha256", None) for r in results),
            common_value(getattr(r, "qrels_judgments_sha256", None) for r in results))


def _curve_columns(columns: Sequence[Any]) -> list[Any]:
    """The columns of a shard's metadata but its scalar columns of measures with a cutoff
    (a cutoff beyond the curves of one shard and within those of another)."""
    return [d for d in columns if not (isinstance(d, dict) and d.get("kind") == "scalar"
                                       and isinstance(d.get("measure"), dict)
                                       and d["measure"].get("cutoff") is not None)]


def merge_meta(metas: Sequence[dict[str, Any]], sources: Sequence[str]) -> dict[str, Any]:
    """One metadata for shards that agree; a one-line InputError naming two that do not."""
    _check_same_qrels(metas, sources)
    _check_same_evaluation(metas, sources)
    first = metas[0]
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
    judgments = common_value(m["fingerprints"].get("qrels_judgments") for m in metas)
    if judgments is not None:
        out["fingerprints"]["qrels_judgments"] = judgments
    out["id_order"] = "numeric" if all(m["id_order"] == "numeric" for m in metas) else "bytes"
    runs = _merged_runs(metas, sources)
    for rm in runs.values():
        for key in ("run_only_ids", "qrels_only_ids"):
            ids = sorted_ids(list(dict.fromkeys(rm[key])), out["id_order"])
            # shared qrels: shortened once the queries evaluated in other shards are left out
            rm[key] = ids if rm.get("shared_qrels") is True else ids[:EXAMPLES]
    out["runs"] = runs
    return out


def _check_same_qrels(metas: Sequence[dict[str, Any]], sources: Sequence[str]) -> None:
    """Every shard states the qrels the first shard stating each kind of fingerprint
    states (a first shard that states none, an engine's, must not let any qrels through)."""
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


def _check_same_evaluation(metas: Sequence[dict[str, Any]], sources: Sequence[str]) -> None:
    """Every shard has the first one's conventions (but k_max), measures and curve
    columns."""
    first = metas[0]
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


def _merged_runs(metas: Sequence[dict[str, Any]], sources: Sequence[str]) -> dict[str, Any]:
    """Each run's metadata over the shards: counts summed (an engine evaluation's once),
    curve widths reconciled, the example ids and latencies gathered."""
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
            _add_run(runs[name], rm, name, sources[0], src_of[id(m)],
                     _same_qrels(qrels_of[name], m))
    return runs


def _add_run(got: dict[str, Any], rm: dict[str, Any], name: str, first: str, src: str,
             same: tuple[Any, ...] | None) -> None:
    """Add a shard's metadata of run ``name`` (``rm``) to the merged one (``got``)."""
    wa: Any = got.get("curve_width")
    wb: Any = rm.get("curve_width")
    if wa != wb and all(isinstance(w, int) and not isinstance(w, bool) and w >= 0
                        for w in (wa, wb)):
        # shards evaluated apart stop their curves at their own deepest ranking:
        # merged, the curves stop at the narrowest (the rest stays in the files)
        got["curve_width"] = min(wa, wb)
        got["mixed_widths"] = True
    elif wa != wb:
        raise InputError(
            f"{first} and {src} hold run {name!r} with curves of different widths "
            f"({got.get('curve_width')} vs {rm.get('curve_width')}); evaluate every shard "
            "with the same curve width", src)
    summed = {k: int(got["counts"].get(k, 0)) + int(rm["counts"].get(k, 0))
              for k in set(got["counts"]) | set(rm["counts"])}
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


def sorted_ids(ids: Sequence[str], id_order: str) -> list[str]:
    """``ids`` in the order an evaluation lists queries (as :func:`ragreport.core.align.id_rank`
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
