"""Reading per-query tables back into results (every value and count, no rankings)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import InputError, RagReportError
from ...measures import Measure
from ..ranking import Counts, StoredRanks
from ..result import Conventions, EvaluationResult

if TYPE_CHECKING:
    import pyarrow as pa

    from ...metrics import BoolArray, FloatArray
from .meta import common_value, merge_meta, sorted_ids, table_meta
from .schema import EXAMPLES, FIXED, KEY, measure_from

__all__ = ["from_tables", "unjudged_in_top"]


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
    >>> from ragreport.core.perquery import to_table
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
        (an :class:`~ragreport.core.result.EvaluationResult` whose ranking is a
        :class:`~ragreport.core.ranking.StoredRanks`).

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
    >>> from ragreport.core.perquery import to_table
    >>> [merged] = from_tables([to_table(b), to_table(a)])
    >>> merged.query_ids, merged.values("P@1").tolist() == whole.values("P@1").tolist()
    (['1', '2', '10'], True)
    """
    if not tables:
        raise InputError("no per-query table to read")
    names = list(sources) if sources is not None else [f"shard {i + 1}"
                                                       for i in range(len(tables))]
    if len(names) != len(tables):
        raise RagReportError("sources must name every table")
    metas = [table_meta(t, s) for t, s in zip(tables, names, strict=True)]
    meta = merge_meta(metas, names)
    shared = _conventions(meta["conventions"], names[0])
    measures = tuple(measure_from(d, names[0]) for d in meta["measures"])
    columns = _declared_columns(meta, names[0])
    rows = _Rows.read(tables, names, columns)
    unknown = sorted(set(rows.run) - set(meta["runs"]))
    if unknown:
        raise InputError(f"run {unknown[0]!r} has rows but no counts in the metadata",
                         names[rows.shard[rows.run.index(unknown[0])]])
    merged = _Merged(names, metas, meta, shared, measures, columns, rows,
                     *_gathered(tables, names, columns))
    return [merged.result(run) for run in meta["runs"]]


def _declared_columns(meta: Mapping[str, Any], source: str) -> list[tuple[str, str, Measure]]:
    """The value columns the metadata declares: (column, kind, measure)."""
    columns: list[tuple[str, str, Measure]] = []
    for d in meta["columns"]:
        name, kind = (d.get("column"), d.get("kind")) if isinstance(d, dict) else (None, None)
        if not isinstance(name, str) or kind not in ("curve", "scalar", "judged"):
            raise InputError(f"metadata {KEY}columns is malformed", source)
        columns.append((name, str(kind), measure_from(d.get("measure"), source)))
    return columns


@dataclass
class _Rows:
    """Every row of every shard: its run, its query, the shard and the row in it (errors)."""

    run: list[str]
    qid: list[str]
    shard: list[int]
    row: list[int]

    @classmethod
    def read(cls, tables: Sequence[pa.Table], names: list[str],
             columns: list[tuple[str, str, Measure]]) -> _Rows:
        out = cls([], [], [], [])
        for i, (t, src) in enumerate(zip(tables, names, strict=True)):
            for c in FIXED:
                _column(t, c, src)
            for c, kind, m in columns:
                if kind != "scalar" or m.cutoff is None:  # else: read from the curve if missing
                    _column(t, str(c), src)
            out.run += _id_column(t, "run", src)
            out.qid += _id_column(t, "query_id", src)
            out.shard += [i] * t.num_rows
            out.row += range(t.num_rows)
        return out


def _id_column(t: pa.Table, c: str, src: str) -> list[str]:
    """A column of ids as strings (a categorical one too); refuses other types and nulls."""
    import pyarrow as pa

    col = t.column(c)
    if pa.types.is_dictionary(col.type) and (
            pa.types.is_string(col.type.value_type)
            or pa.types.is_large_string(col.type.value_type)):
        col = col.cast(col.type.value_type)  # categorical (pandas, Spark)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        raise InputError(f"column {c!r} must hold strings, not {col.type}", src)
    if col.null_count:
        nulls = np.asarray(col.is_null().to_numpy(), dtype=bool)
        raise InputError(f"column {c!r} is null", src, row=int(np.flatnonzero(nulls)[0]) + 1)
    ids: list[str] = col.to_pylist()
    return ids


def _gathered(tables: Sequence[pa.Table], names: list[str],
              columns: list[tuple[str, str, Measure]]
              ) -> tuple[dict[str, Any], list[float | None]]:
    """The value columns of every shard, one after the other (arrays by name), and the
    latency of every row (None where a shard has none)."""
    import pyarrow as pa

    wanted = [*FIXED[2:], *(str(c) for c, _, _ in columns)]  # run, query_id: read apart
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
    latency = [x for t in tables for x in (t.column("latency_ms").to_pylist()
                                           if "latency_ms" in t.column_names
                                           else [None] * t.num_rows)]
    return cols, latency


@dataclass
class _Merged:
    """The shards read and checked as one; :meth:`result` builds one run's result."""

    names: list[str]
    metas: list[dict[str, Any]]
    meta: dict[str, Any]
    shared: Conventions
    measures: tuple[Measure, ...]
    columns: list[tuple[str, str, Measure]]
    rows: _Rows
    cols: dict[str, Any]
    latency: list[float | None]

    def _order(self, run: str) -> tuple[list[str], dict[str, int]]:
        """The run's query ids in evaluation order, and each one's row (refuses a query in
        two shards)."""
        rows, names = self.rows, self.names
        seen: dict[str, int] = {}
        for j in (j for j, r in enumerate(rows.run) if r == run):
            q = rows.qid[j]
            if q in seen:
                a, b = names[rows.shard[seen[q]]], names[rows.shard[j]]
                where = f"{a} and {b}" if a != b else f"{a} (twice)"
                hint = ""
                if self.meta["runs"][run].get("shared_qrels") is True and self.shared.complete:
                    hint = (" (with -c each shard evaluated every query of the whole qrels: "
                            "such shards do not merge)")
                raise InputError(f"query {q!r} of run {run!r} is in {where}; each query "
                                 f"must be in one shard{hint}", b, row=rows.row[j] + 1)
            seen[q] = j
        return sorted_ids(list(seen), self.meta["id_order"]), seen

    def _values(self, k_max: int, take: Any, where: str, shown_rows: Any, mixed: bool
                ) -> tuple[dict[Measure, FloatArray], dict[Measure, FloatArray],
                           dict[Measure, FloatArray]]:
        """The run's curves, whole-ranking values and values past the curves."""
        names, rows = self.names, self.rows

        def place(i: int) -> tuple[str, int]:
            j = int(take[i])
            return names[rows.shard[j]], rows.row[j] + 1

        curves: dict[Measure, FloatArray] = {}
        scalars: dict[Measure, FloatArray] = {}
        beyond: dict[Measure, FloatArray] = {}
        whole = self.shared.ties != "average"  # expected counts over tie orders are fractional
        for (name, kind, m) in self.columns:
            if kind in ("curve", "judged"):  # judged: Judged@K, kept for the health checks
                curves[m] = _curve(self.cols[name], name, k_max, take, where, shown_rows, mixed)
                _check_values(curves[m], m, name, whole, place)
            else:
                v = _floats(self.cols[name], name, take, where, shown_rows)
                _check_values(v, m, name, whole, place)
                if m.cutoff is not None:
                    beyond[m] = v
                else:
                    scalars[m] = v
        return curves, scalars, beyond

    def result(self, run: str) -> EvaluationResult:
        """One run's result, equal to that of evaluating its queries at once."""
        order, seen = self._order(run)
        take = np.array([seen[q] for q in order], dtype=np.int64)
        where = self.names[0] if len(self.metas) == 1 else "per-query shards"
        shown_rows = np.array([self.rows.row[j] for j in take.tolist()], dtype=np.int64)
        rm = self.meta["runs"][run]
        k_max = rm.get("curve_width")
        if isinstance(k_max, bool) or not isinstance(k_max, int) or k_max < 0:
            raise InputError(f"metadata {KEY}runs: bad curve_width for run {run!r}", where)
        conv = replace(self.shared, curve_width=k_max)
        curves, scalars, beyond = self._values(k_max, take, where, shown_rows,
                                               rm.get("mixed_widths") is True)
        counts = _counts(rm.get("counts"), where)
        if counts.evaluated != len(order):
            raise InputError(f"run {run!r}: {len(order)} query rows but the counts say "
                             f"{counts.evaluated} evaluated queries (a shard is missing or "
                             "was filtered)", where)
        cols = self.cols
        n_ret = _ints(cols["retrieved"], "retrieved", take, where, shown_rows)
        n_rel = _ints(cols["relevant"], "relevant", take, where, shown_rows)
        judged = _ints(cols["judged"], "judged", take, where, shown_rows)
        wide: dict[Measure, FloatArray] = {}
        width = _whole_width(int(self.shared.k_max), n_ret, judged)
        if width < k_max:  # e.g. an engine's partitions: curves k_max wide, cut as one
            wide, k_max = curves, width  # evaluation of these queries cuts them
            curves = {m: np.ascontiguousarray(c[:, :width]) for m, c in wide.items()}
            conv = replace(self.shared, curve_width=k_max)
        rel_ranks = _ranks(cols["relevant_ranks"], "relevant_ranks", n_ret, take, where,
                           shown_rows)
        judged_ranks = _ranks(cols["judged_ranks"], "judged_ranks", n_ret, take, where,
                              shown_rows)
        qrels_only_ids = [str(x) for x in rm.get("qrels_only_ids", [])]
        if rm.get("shared_qrels") is True:  # a query of the whole qrels evaluated elsewhere
            qrels_only_ids = [q for q in qrels_only_ids if q not in seen][:EXAMPLES]
        ranking = StoredRanks(order, n_ret, n_rel, judged, float(conv.rel_level), counts,
                              [str(x) for x in rm.get("run_only_ids", [])], qrels_only_ids,
                              self.meta["id_order"], rel_ranks, judged_ranks)
        latency = {self.rows.qid[j]: float(t) for j in take.tolist()
                   if (t := self.latency[j]) is not None}
        latency.update({str(q): float(t) for q, t in (rm.get("latency_other") or {}).items()})
        prints = {attr: common_value(m["fingerprints"].get(key) for m in self.metas
                                     if run in m["runs"])
                  for attr, key in (("qrels_sha256", "qrels"),
                                    ("qrels_judgments_sha256", "qrels_judgments"))}
        return EvaluationResult(
            run_name=run, query_ids=order, measures=self.measures, k_max=k_max, curves=curves,
            scalars=scalars, counts=counts, conventions=conv, ranking=ranking,
            query_texts={}, latency_ms=latency, beyond=beyond, wide_curves=wide, **prints)


def _whole_width(k_max: int, n_ret: Any, judged: Any) -> int:
    """The curves' width one evaluation of these queries has
    (:func:`ragreport.core.engine.curve_width`, from the per-query counts: the ranked rows are
    the retrieved documents, the qrels rows the judged ones)."""
    from ..context import CURVE_CELLS, DEFAULT_K_MAX

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
        raise InputError(f"metadata {KEY}conventions is malformed ({e})", source) from None


def _counts(d: Any, source: str) -> Counts:
    names = [f.name for f in fields(Counts)]
    if not isinstance(d, dict) or any(not isinstance(d.get(k, 0), int) for k in names):
        raise InputError(f"metadata {KEY}runs: malformed counts", source)
    return Counts(**{k: int(d.get(k, 0)) for k in names})
