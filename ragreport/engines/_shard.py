"""The work of one partition, the same for every engine: a table of qrels and run rows of some
queries (every row of each of them) in, their per-query table (:mod:`ragreport.core.perquery`) out.

The engines put the qrels and the run into one frame with the columns ``query_id``,
``doc_id``, ``relevance``, ``score`` and ``side`` (0: a judgment, 1: a retrieved document),
partition it by query and call :func:`evaluate_part` on each partition. It reads the rows with
the table readers (the same checks and messages as for a Parquet file), evaluates them with
:func:`ragreport.evaluate` and returns the partition's per-query table and metadata: the
metadata of every partition, merged on the driver (:func:`merge`), is that of one evaluation
of the whole input (the counts are summed).

An error a partition raises is a :class:`~ragreport.errors.RagReportError`: on an executor it
is wrapped in :class:`PartError`, whose text carries the class and the message between
markers, so the driver can raise the same one-line error whatever the engine wrapped it in
(:func:`reraise`).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import errors
from ..core.evaluated import NOTHING_LEFT
from ..errors import InputError, RagReportError

__all__ = ["COLUMNS", "PartError", "PartSpec", "check_options", "empty_meta", "evaluate_part",
           "merge", "readable_errors", "reraise", "split"]

#: The columns of the frame the engines partition (query and document ids as text).
COLUMNS = ("query_id", "doc_id", "relevance", "score", "side")
#: The options of :func:`ragreport.evaluate` that the engines pass on.
OPTIONS = ("order", "rel_level", "complete", "max_depth", "no_relevant", "duplicates",
           "fractional_grades", "ties", "compat", "ignore_identical_ids", "score_precision")

_START, _END = "<<ragreport:", ":ragreport>>"
_MARKED = re.compile(re.escape(_START) + r"(\w+):(.*?)" + re.escape(_END), re.S)


class PartError(RuntimeError):
    """A ragreport error raised on an executor, in a form that survives the engine's
    wrapping (its text holds the class and the message between markers)."""


@dataclass(frozen=True)
class PartSpec:
    """What every partition needs to know (pickled to the executors)."""

    measures: tuple[str, ...]
    k_max: int
    name: str
    qrels_source: str
    run_source: str
    complete: bool
    duplicates: str
    options: Mapping[str, Any] = field(default_factory=dict)


def check_options(measures: Any, k_max: int | None, name: str | None,
                  options: Mapping[str, Any], engine: str) -> tuple[PartSpec, Any]:
    """Check the options on the driver (one evaluation of a one-query input, so a bad
    measure or option fails at once with its usual message) and return the partitions'
    :class:`PartSpec` and the per-query table of that probe (for its schema and metadata)."""
    from ..core.engine import evaluate
    from ..core.perquery import to_table

    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise RagReportError(f"{engine}.evaluate() got an unknown option {unknown[0]!r}; "
                             f"the options are {', '.join(OPTIONS)}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise RagReportError(f"name must be a non-empty string, got {name!r}")
    one = ({"q": {"d": 1}}, {"q": ["d"]})
    k = evaluate(*one, measures, k_max, **options).conventions.k_max  # the k_max resolved
    # every partition's curves are k_max wide (as wide as one evaluation's can be)
    probe = evaluate(*one, measures, k, name=name or "run", _curve_width=k, **options)
    spec = PartSpec(tuple(str(m) for m in probe.measures), k, name or "run",
                    f"qrels ({engine})", f"run ({engine})", probe.conventions.complete,
                    probe.conventions.duplicates, dict(options))
    return spec, to_table(probe)


def _no_row(exc: InputError) -> InputError:
    """The same error without the row number: a row of a partition means nothing to the
    user (the message names the query and the document where it matters)."""
    reason = re.sub(r" \(first at row \d+\)", "", exc.reason)
    return InputError(reason, exc.source)


def _side(table: Any, side: int, columns: Sequence[str]) -> Any:
    import pyarrow.compute as pc

    sel = table.filter(pc.equal(table.column("side"), side))
    return sel.select(list(columns))


def _distinct(ids: Any) -> Any:
    import pyarrow.compute as pc

    return pc.unique(ids)


def _run_duplicates(run: Any, duplicates: str) -> int:
    """Later occurrences of a (query, document) pair in a run none of whose queries is
    evaluated here: refused as :func:`ragreport.core.align.align` refuses them, or counted."""
    import pyarrow as pa

    if len(run) < 2:
        return 0
    counts = pa.table({"q": run.query_ids, "d": run.doc_ids}).group_by(["q", "d"]) \
        .aggregate([([], "count_all")])
    n = counts.column("count_all").to_numpy()
    if not (n > 1).any():
        return 0
    if duplicates == "error":
        i = int(np.flatnonzero(n > 1)[0])
        raise InputError(f"document {counts.column('d')[i].as_py()!r} appears twice for query "
                         f"{counts.column('q')[i].as_py()!r}; pass duplicates='first' "
                         "(--keep-first-duplicate) to keep the first occurrence", run.source)
    return int((n - 1).sum())


def empty_meta(probe_meta: Mapping[str, Any], name: str, counts: Mapping[str, int],
               run_only: list[str], qrels_only: list[str], id_order: str) -> dict[str, Any]:
    """The metadata of a partition that evaluates no query (its counts still count)."""
    from ..core.ranking import Counts

    meta: dict[str, Any] = json.loads(json.dumps(probe_meta))
    full = {f.name: int(counts.get(f.name, 0)) for f in dataclasses.fields(Counts)}
    (run_meta,) = meta["runs"].values()  # the probe's: its curve width and any other key
    run_meta.update({"counts": full, "run_only_ids": run_only[:10],
                     "qrels_only_ids": qrels_only[:10], "latency_other": {}})
    meta["runs"] = {name: run_meta}
    meta["fingerprints"] = {"qrels": None, "runs": {}}
    meta["id_order"] = id_order
    return meta


def _id_order(*id_arrays: Any) -> str:
    ids = [q for a in id_arrays for q in a.to_pylist()]
    ok = all(1 <= len(q) <= 18 and q.isascii() and q.isdigit() for q in ids)
    return "numeric" if ok else "bytes"


def split(table: Any) -> tuple[Any, Any]:
    """The qrels rows and the run rows of a partition's table (:data:`COLUMNS`)."""
    return (_side(table, 0, ("query_id", "doc_id", "relevance")),
            _side(table, 1, ("query_id", "doc_id", "score")))


def evaluate_part(qt: Any, rt: Any, spec: PartSpec, probe_meta: Mapping[str, Any]
                  ) -> tuple[Any, dict[str, Any]]:
    """The per-query table (without metadata; None when no query is evaluated) and the
    metadata of one partition: ``qt`` and ``rt`` (tables the table readers read: Arrow or
    pandas) hold every judgment and retrieved document of its queries."""
    from ..core.align import check_qrels
    from ..core.engine import evaluate
    from ..core.perquery import table_meta, to_table
    from ..io.tabular import qrels_table, run_table

    opts = dict(spec.options)
    complete = spec.complete
    try:
        qrels = qrels_table(qt, source=spec.qrels_source,
                            fractional=bool(opts.get("fractional_grades", False))) \
            if len(qt) else None
        run = run_table(rt, source=spec.run_source, name=spec.name) if len(rt) else None
    except InputError as exc:
        raise _no_row(exc) from None
    # rows of a partition have no place the user knows: errors name the query and document
    if qrels is not None:
        qrels = dataclasses.replace(qrels, lines=None)
    if run is not None:
        run = dataclasses.replace(run, lines=None)
    qids: Any = _distinct(qrels.query_ids) if qrels is not None else None
    rids: Any = _distinct(run.query_ids) if run is not None else None
    common = 0
    if qids is not None and rids is not None:
        import pyarrow.compute as pc

        common = int(pc.sum(pc.is_in(rids, value_set=qids)).as_py() or 0)
    if qrels is not None and (common or complete):
        if run is None:
            import pyarrow as pa

            from ..data import Run

            run = Run(pa.array([], pa.string()), pa.array([], pa.string()), spec.run_source,
                      None, np.zeros(0), spec.name)
        try:
            result = evaluate(qrels, run, list(spec.measures), spec.k_max,
                              _curve_width=spec.k_max, name=spec.name, **opts)
        except InputError as exc:
            if not exc.reason.startswith(NOTHING_LEFT):
                raise _no_row(exc) from None
            # every evaluated query of this partition was skipped (no_relevant='skip')
            n_eval = len(qids) if complete else common
            return None, empty_meta(probe_meta, spec.name, {
                "skipped_no_relevant": n_eval, "run_queries": len(rids or []),
                "qrels_queries": len(qids), "run_only": len(rids or []) - common,
                "qrels_only": len(qids) - common}, [], [],
                _id_order(qids, *([rids] if rids is not None else [])))
        out = to_table(result)
        return out.replace_schema_metadata(None), table_meta(out, "partition")
    # nothing evaluated here: the rows are still checked as evaluate() checks them
    dropped = 0
    if qrels is not None:
        check_qrels(qrels)
    if run is not None:
        dropped = _run_duplicates(run, spec.duplicates)
    run_only = sorted(rids.to_pylist()) if rids is not None else []
    qrels_only = sorted(qids.to_pylist()) if qids is not None else []
    arrays = [a for a in (qids, rids) if a is not None]
    return None, empty_meta(probe_meta, spec.name, {
        "run_only": len(run_only), "qrels_only": len(qrels_only),
        "run_queries": len(run_only), "qrels_queries": len(qrels_only),
        "duplicates_dropped": dropped}, run_only, qrels_only,
        _id_order(*arrays) if arrays else "numeric")


def marked(fn: Any) -> Any:
    """``fn`` with every ragreport error it raises turned into a :class:`PartError`."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            out = fn(*args, **kwargs)
        except RagReportError as exc:
            raise PartError(f"{_START}{type(exc).__name__}:{exc}{_END}") from None
        return _marked_iter(out) if inspect.isgenerator(out) else out
    return wrapper


def _marked_iter(gen: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from gen
    except RagReportError as exc:
        raise PartError(f"{_START}{type(exc).__name__}:{exc}{_END}") from None


def reraise(exc: BaseException) -> None:
    """Raise the ragreport error carried by ``exc`` (an engine's wrapper of a
    :class:`PartError`, or the error itself), as one line; return when it carries none."""
    if isinstance(exc, RagReportError):
        raise exc.with_traceback(None) from None
    found = _MARKED.search(str(exc))
    if found is None:
        cause = exc.__cause__ or exc.__context__
        if cause is not None and cause is not exc:
            reraise(cause)
        return
    cls = getattr(errors, found.group(1), RagReportError)
    if not (isinstance(cls, type) and issubclass(cls, RagReportError)):
        cls = RagReportError
    error = cls.__new__(cls)
    RagReportError.__init__(error, found.group(2))
    if isinstance(error, InputError):  # the attributes the CLI and callers read
        error.reason, error.source, error.line, error.row = found.group(2), None, None, None
    raise error from None


@contextmanager
def readable_errors() -> Iterator[None]:
    """Turn an engine's wrapped ragreport error back into the one-line error it was."""
    try:
        yield
    except RagReportError:
        raise
    except Exception as exc:
        reraise(exc)
        raise


def merge(metas: Sequence[Mapping[str, Any]], evaluation: str) -> dict[str, Any]:
    """The metadata of one evaluation from its partitions' (counts summed), stamped with an
    ``evaluation`` id: files written from one frame carry it, so reading several of them
    counts the evaluation once."""
    from ..core.perquery import merge_meta

    merged = merge_meta([dict(m) for m in metas],
                         [f"partition {i + 1}" for i in range(len(metas))])
    merged["evaluation"] = evaluation
    return merged
