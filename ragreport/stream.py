"""Evaluate a run file larger than memory, one block of queries at a time.

The run must be grouped by query (every line of a query together), as TREC runs are. Blocks
are read with pyarrow's streaming CSV reader; the query cut by the end of a block is carried
over to the next one; each block of whole queries is evaluated by the same engine as
:func:`ragreport.evaluate`, so the numbers are the same. A query that appears again after its
group ended is an error naming it and the fix (sort the file, or use ``evaluate``): never a
wrong number.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InputError, RagReportError
from .measures import Measure, normalize_measures
from .metrics import FloatArray

__all__ = ["StreamResult", "evaluate_stream"]

BLOCK_BYTES = 32 << 20


@dataclass
class StreamResult:
    """Per-query values of the requested measures, mean curves and counts."""

    run_name: str
    query_ids: list[str]
    measures: tuple[Measure, ...]
    per_query_values: dict[Measure, FloatArray]
    mean_curves: dict[Measure, FloatArray]
    k_max: int
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def values(self, measure: str | Measure) -> FloatArray:
        from .measures import parse_measure

        m = parse_measure(measure)
        if m not in self.per_query_values:
            raise RagReportError(f"{m} was not computed; computed: "
                                 f"{', '.join(map(str, self.measures))}")
        return self.per_query_values[m]

    def mean(self, measure: str | Measure) -> float:
        v = self.values(measure)
        return float(v.mean()) if len(v) else 0.0

    def means(self) -> dict[str, float]:
        return {str(m): self.mean(m) for m in self.measures}


def _batches(path: str, block_bytes: int) -> Iterator[tuple[Any, Any, np.ndarray, str]]:
    """(qids, docids, scores, tag) record batches of a TREC run file."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from .io.trec import RUN_COLUMNS, _guess_delimiter

    opener = gzip.open if _is_gzip(path) else open
    with opener(path, "rb") as probe:
        head = probe.read(65536)
    if not head.strip():
        raise InputError("the file is empty", path)
    delim = _guess_delimiter(head)
    if delim is None or head.startswith(b"#") or b"\n#" in head:
        raise InputError("streaming needs a run with one space or one tab between fields and "
                         "no comment lines; evaluate it with evaluate() instead", path)
    types = {c: pa.string() for c in RUN_COLUMNS}
    types["score"] = pa.float64()
    stream = opener(path, "rb")
    try:
        reader = pacsv.open_csv(
            stream,
            read_options=pacsv.ReadOptions(column_names=list(RUN_COLUMNS),
                                           block_size=block_bytes),
            parse_options=pacsv.ParseOptions(delimiter=delim, quote_char=False,
                                             escape_char=False),
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=[],
                                                 strings_can_be_null=False,
                                                 include_columns=["qid", "docid", "score",
                                                                  "tag"]),
        )
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except (pa.ArrowInvalid, ValueError) as exc:
                raise InputError(f"malformed line ({exc}); evaluate() names the exact line",
                                 path) from None
            scores = batch.column("score").to_numpy(zero_copy_only=False)
            if not np.isfinite(scores).all():
                raise InputError("a score is NaN or infinite; evaluate() names the line", path)
            tag = batch.column("tag")[0].as_py() if batch.num_rows else ""
            yield batch.column("qid"), batch.column("docid"), scores, tag
    finally:
        stream.close()


def _qrels_of(q: Any, query_ids: Any) -> Any:
    """The rows of ``q`` judging one of ``query_ids`` (same source, same line numbers)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .data import Qrels, RowLines

    sel = np.flatnonzero(np.asarray(pc.is_in(q.query_ids, value_set=query_ids)
                                    .to_numpy(zero_copy_only=False), dtype=bool))
    if q.lines is None:
        lines = None
    elif isinstance(q.lines, RowLines):
        lines = sel + 1
    else:
        lines = np.asarray(q.lines)[sel]
    take = pa.array(sel)
    return Qrels(q.query_ids.take(take), q.doc_ids.take(take), q.source, lines, q.grades[sel])


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def evaluate_stream(
    qrels: Any,
    run_path: str | os.PathLike[str],
    measures: str | Measure | Iterable[str | Measure] | None = None,
    k_max: int | None = None,
    *,
    block_bytes: int = BLOCK_BYTES,
    complete: bool = False,
    **options: Any,
) -> StreamResult:
    """Evaluate a TREC run file grouped by query in bounded memory.

    Parameters are those of :func:`ragreport.evaluate`; ``block_bytes`` sets how much of the
    file is parsed at a time. Returns per-query values of ``measures`` (in file order of the
    queries) and the mean curves of every family, equal to what ``evaluate`` gives.

    Raises
    ------
    InputError
        When a query's lines are not contiguous (the file is not grouped by query).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from .align import check_qrels
    from .data import Run
    from .engine import evaluate
    from .io import load_qrels

    path = str(run_path)
    if not os.path.isfile(path):
        raise InputError("no such file", path)
    q = load_qrels(qrels)
    check_qrels(q)  # blocks see only their own judgments: check them all once here
    wanted = normalize_measures(measures)
    if k_max is None:
        k_max = max([20, *(m.cutoff for m in wanted if m.cutoff)])
    if complete and any(not m.family.bounded for m in wanted):
        raise RagReportError("complete=True in streaming mode supports rate measures only, "
                             "not counts")
    judged_ids = pc.unique(q.query_ids)
    done: set[str] = set()
    per_query: dict[Measure, list[FloatArray]] = {m: [] for m in wanted}
    curve_sums: dict[Measure, FloatArray] = {}
    qids_out: list[str] = []
    counts = {"evaluated": 0, "run_only": 0, "qrels_only": 0, "no_relevant": 0,
              "empty_retrievals": 0, "duplicates_dropped": 0}
    pending: tuple[Any, Any, np.ndarray] | None = None
    name = ""

    def flush(qid: Any, doc: Any, score: np.ndarray) -> None:
        if len(qid) == 0:
            return
        # grouping check: each query id of this block forms one contiguous run
        codes = pc.dictionary_encode(qid).indices.to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
        ids = qid.take(pa.array(starts)).to_pylist()
        if len(set(ids)) != len(ids) or not done.isdisjoint(ids):
            again = next(i for i in ids if i in done or ids.count(i) > 1)
            raise InputError(f"the run is not grouped by query: query {again!r} appears again "
                             "after other queries; sort it by query (e.g. sort -s -k1,1) or "
                             "use evaluate(), which reads it whole", path)
        done.update(ids)
        mask = pc.is_in(qid, value_set=judged_ids)
        in_qrels = np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
        run_only = set(ids) - set(qid.filter(mask).unique().to_pylist())
        counts["run_only"] += len(run_only)
        if not in_qrels.any():
            return
        sel = np.flatnonzero(in_qrels)
        run = Run(qid.take(pa.array(sel)), doc.take(pa.array(sel)), path, None, score[sel], name)
        # only this block's judgments: the per-block work does not grow with the whole qrels
        res = evaluate(_qrels_of(q, pa.array(ids, pa.string())), run, wanted, k_max, **options)
        qids_out.extend(res.query_ids)
        for m in wanted:
            per_query[m].append(res.values(m))
        for key, c in res.curves.items():
            curve_sums[key] = curve_sums.get(key, 0) + c.sum(axis=0)
        for k in ("evaluated", "no_relevant", "empty_retrievals", "duplicates_dropped"):
            counts[k] += int(getattr(res.counts, k))

    for qid, doc, score, tag in _batches(path, block_bytes):
        name = name or tag
        if pending is not None:
            qid = pa.concat_arrays([pending[0], qid])
            doc = pa.concat_arrays([pending[1], doc])
            score = np.concatenate([pending[2], score])
        if len(qid) == 0:
            continue
        last = qid[len(qid) - 1]
        same = np.asarray(pc.equal(qid, last).to_numpy(zero_copy_only=False), dtype=bool)
        tail_start = len(qid) - int(np.argmin(same[::-1])) if not same.all() else 0
        flush(qid.slice(0, tail_start), doc.slice(0, tail_start), score[:tail_start])
        pending = (qid.slice(tail_start), doc.slice(tail_start), score[tail_start:])
    if pending is not None:
        flush(*pending)

    all_judged = set(judged_ids.to_pylist())
    missing = sorted(all_judged - done)
    counts["qrels_only"] = len(missing)
    if complete and missing:
        from .engine import CURVE_FAMILIES

        zeros = np.zeros(len(missing))
        qids_out.extend(missing)
        for m in wanted:
            per_query[m].append(zeros)
        counts["evaluated"] += len(missing)
        counts["empty_retrievals"] += len(missing)
        for f in CURVE_FAMILIES:
            curve_sums.setdefault(Measure(f), np.zeros(k_max))
    if not qids_out:
        raise InputError(f"the run ({path}) and the qrels have no query in common")
    n = len(qids_out)
    values = {m: np.concatenate(per_query[m]) for m in wanted}
    curves = {k: np.asarray(v, dtype=np.float64) / n for k, v in curve_sums.items()}
    return StreamResult(name or os.path.basename(path), qids_out, tuple(wanted), values, curves,
                        k_max, counts)

