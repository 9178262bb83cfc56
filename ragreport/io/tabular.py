"""Qrels, runs and texts from tables: Parquet files, pyarrow Tables and RecordBatches, polars
and pandas DataFrames, Hugging Face ``datasets.Dataset`` objects, iterables of ir_datasets-style
named tuples (``TrecQrel``, ``ScoredDoc``, ``GenericQuery``, ``GenericDoc``) and ir_datasets ids
(``irds:msmarco-passage/dev/small``).

A table has one row per judgment or retrieved document. Its columns are found by name from the
common layouts (:data:`LAYOUTS`; case, ``-`` and ``_`` do not matter) or named with
``columns={"qid": ..., "docid": ..., "score": ..., "relevance": ...}``. Columns are converted at
once with pyarrow (ids: text, or integers written in decimal; scores and grades: numbers, read
as the text readers read them, grades truncated toward zero unless fractional); a Python loop
runs only for values that pyarrow cannot type (mixed types in one column) or text numbers that
fail the check, to name the first bad row. Every error names the source and the row (1-based).

polars, datasets and ir_datasets are never imported here: an object is recognised by its type's
module and name (or, for named tuples, by their field names), and ir_datasets is imported only
to read an ``irds:`` id.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from ..data import Qrels, Run, TableRows
from ..errors import InputError
from .common import DECIMAL, GRADE_LIMIT, PLAIN_RE2, Source, source_name
from .objects import ident_text, read_number, show_value

__all__ = ["IRDS_PREFIX", "LAYOUTS", "TableInput", "is_parquet", "is_table_like",
           "parquet_columns", "parse_columns", "qrels_table", "run_table", "table_input",
           "texts_table"]

#: The layouts whose column names are recognised (shown in messages).
LAYOUTS = ("TREC (qid, docid, score or relevance), MTEB/BEIR (query-id, corpus-id, score), "
           "ir_measures/ir_datasets (query_id, doc_id, score or relevance), "
           "ranx (q_id, doc_id, score), PyTerrier (qid, docno, score or label)")

#: An ir_datasets id is given as ``irds:<id>``.
IRDS_PREFIX = "irds:"

_DECIMAL_RE2 = "^" + DECIMAL.pattern + "$"

# Column names by role, normalised (lower case, '-' and ' ' as '_'). Two names of one tuple in
# one table make it ambiguous; a "weak" name counts only when no strong one is there.
_QID = ("qid", "query_id", "q_id", "queryid", "topic_id")
_QID_WEAK = ("query", "topic")
_DOC = ("docid", "doc_id", "corpus_id", "docno", "document_id", "passage_id", "pid")
_DOC_WEAK = ("doc", "document", "corpus", "passage")
_SCORE = ("score", "similarity", "sim")
_GRADE = ("relevance", "rel", "grade", "label", "judgment", "judgement", "score")
_TAG = ("tag", "run_id", "runid")
_TEXT_ID = ("_id", "id", "doc_id", "docid", "query_id", "qid", "docno", "pid", "corpus_id")
_TEXT = ("text", "contents", "body", "passage", "content")
_TEXT_WEAK = ("query",)
_TITLE = ("title",)

# Keys of ``columns=`` / ``--columns`` and the role each names.
_KEYS = {"qid": "qid", "query_id": "qid", "query": "qid",
         "docid": "docid", "doc_id": "docid", "doc": "docid",
         "score": "score",
         "relevance": "relevance", "rel": "relevance", "grade": "relevance",
         "id": "id", "text": "text", "title": "title"}
_KEYS_SHOWN = "qid, docid, score, relevance (or rel), and for texts id, text, title"


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def parse_columns(spec: str | Mapping[str, str] | None) -> dict[str, str] | None:
    """A column mapping, from ``"qid=query-id,docid=corpus-id"`` or a dict, checked.

    Keys: ``qid`` (or ``query_id``), ``docid`` (or ``doc_id``), ``score``, ``relevance`` (or
    ``rel``, ``grade``) for qrels and runs; ``id``, ``text``, ``title`` for texts.

    >>> parse_columns("qid=query-id, docid=corpus-id,rel=score")
    {'qid': 'query-id', 'docid': 'corpus-id', 'relevance': 'score'}
    >>> parse_columns("qid")
    Traceback (most recent call last):
    ...
    ragreport.errors.InputError: columns: expected NAME=COLUMN, got 'qid'
    """
    if spec is None:
        return None
    if isinstance(spec, str):
        pairs: list[tuple[str, str]] = []
        for part in spec.split(","):
            if not part.strip():
                continue
            key, sep, value = part.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise InputError(f"columns: expected NAME=COLUMN, got {part.strip()!r}")
            pairs.append((key.strip(), value.strip()))
    elif isinstance(spec, Mapping):
        pairs = list(spec.items())
    else:
        raise InputError(f"columns must be a mapping such as {{'qid': 'query-id'}}, got "
                         f"{type(spec).__name__}")
    out: dict[str, str] = {}
    for key, value in pairs:
        role = _KEYS.get(_norm(str(key))) if isinstance(key, str) else None
        if role is None:
            raise InputError(f"columns: unknown key {key!r}; the keys are {_KEYS_SHOWN}")
        if not isinstance(value, str) or not value:
            raise InputError(f"columns: the column for {key!r} must be a name, got {value!r}")
        if role in out:
            raise InputError(f"columns: {role!r} is given twice")
        out[role] = value
    return out


# ---- what a table is --------------------------------------------------------------------------

@dataclass
class TableInput:
    """A table as the readers see it: its column names and a getter for one column.

    ``get(name)`` returns a pyarrow Array or ChunkedArray, or a Python list (named tuples, a
    pandas column pyarrow cannot type). ``container`` names it in messages ("the file",
    "DataFrame"...); ``source`` is what an error starts with. ``first(name)``, when given,
    returns the first values of a column without reading all of it (a Parquet row group).
    """

    names: list[str]
    get: Callable[[str], Any]
    source: str
    container: str
    first: Callable[[str], Any] | None = None


def is_parquet(path: Any) -> bool:
    """Whether a path or :class:`Source` holds a Parquet file (its magic bytes ``PAR1``)."""
    if isinstance(path, Source):
        return path.data[:4] == b"PAR1"
    try:  # a regular file only: a FIFO or standard input would be consumed
        if not os.path.isfile(path):
            return False
        with open(path, "rb") as fh:
            return fh.read(4) == b"PAR1"
    except (OSError, TypeError, ValueError):
        return False


def parquet_columns(path: Any) -> list[str]:
    """The column names of a Parquet file (a path or :class:`Source`)."""
    return _parquet(path).names


def _type_of(obj: Any) -> tuple[str, str]:
    t = type(obj)
    return t.__module__.split(".", 1)[0], t.__name__


def _is_named_tuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and isinstance(getattr(obj, "_fields", None), tuple)


def is_table_like(obj: Any) -> bool:
    """Whether ``obj`` is read by this module (a table, a dataset, named tuples, ``irds:``).

    A plain list or dict is not (it is read by :mod:`ragreport.io.objects`), unless it is a
    list of named tuples.
    """
    module = _type_of(obj)[0]
    if module in ("pyarrow", "polars", "datasets", "pandas") or hasattr(obj, "qrels_iter") \
            or hasattr(obj, "scoreddocs_iter") or hasattr(obj, "docs_iter"):
        return True
    if isinstance(obj, str):
        return obj.startswith(IRDS_PREFIX) and not os.path.exists(obj)
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        return len(obj) > 0 and _is_named_tuple(obj[0])
    return False


def is_iterator_input(obj: Any) -> bool:
    """An iterable that is not a collection the object reader knows (a generator, a map)."""
    return isinstance(obj, Iterable) and not isinstance(
        obj, (str, bytes, Mapping, Sequence, set, frozenset, os.PathLike, Source))


def _from_arrow(table: Any, source: str, container: str) -> TableInput:
    return TableInput([str(n) for n in table.column_names], table.column, source, container)


def _named_tuples(items: Iterable[Any], source: str) -> TableInput:
    rows = list(items)
    fields = rows[0]._fields
    for i, row in enumerate(rows):
        if not _is_named_tuple(row) or row._fields != fields:
            raise InputError(f"every item must be a named tuple with the fields "
                             f"{', '.join(fields)}, got {show_value(row)}", source, row=i + 1)
    columns = dict(zip(fields, (list(c) for c in zip(*rows, strict=True)), strict=True))
    return TableInput(list(fields), columns.__getitem__, source, "the named tuples")


def pandas_input(df: Any, source: str) -> TableInput:
    import pyarrow as pa

    by_name = {str(c): c for c in df.columns}

    def get(name: str) -> Any:
        series = df[by_name[name]]
        try:
            return pa.array(series, from_pandas=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError,
                ValueError, OverflowError):
            return series.tolist()  # mixed types: read one by one (names the row)

    return TableInput([str(c) for c in df.columns], get, source, "DataFrame")


def _irds(ident: str, attr: str, what: str) -> Any:
    """The iterator ``attr`` (``qrels_iter``...) of the ir_datasets dataset ``irds:<id>``."""
    name = ident[len(IRDS_PREFIX):]
    try:
        import ir_datasets  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise InputError(f"reading {ident!r} needs ir_datasets: pip install ir_datasets") \
            from None
    try:
        dataset = ir_datasets.load(name)
    except KeyError:
        raise InputError(f"ir_datasets has no dataset {name!r}", ident) from None
    except Exception as exc:  # ir_datasets' own failures (a download, a registry)
        raise _irds_failed(exc, what, ident) from None
    return _dataset_iter(dataset, attr, what, ident)


def _irds_failed(exc: BaseException, what: str, ident: str) -> InputError:
    return InputError(f"ir_datasets could not read the {what}: {type(exc).__name__}: "
                      f"{_first_line(exc)}", ident)


def _dataset_iter(dataset: Any, attr: str, what: str, source: str) -> Any:
    has = getattr(dataset, "has_" + attr.removesuffix("_iter"), None)
    if not hasattr(dataset, attr) or (callable(has) and not has()):
        raise InputError(f"the dataset has no {what}", source)
    return getattr(dataset, attr)()


_IRDS_ATTR = {"qrels": ("qrels_iter", "qrels"), "run": ("scoreddocs_iter", "scored documents"),
              "queries": ("queries_iter", "queries"), "docs": ("docs_iter", "documents")}


def table_input(obj: Any, kind: str, source: str | None = None) -> TableInput:
    """The :class:`TableInput` of a Parquet path or :class:`Source`, an Arrow table or batch,
    a polars, pandas or Hugging Face table, named tuples, an ir_datasets dataset or id.

    ``kind`` is ``qrels``, ``run``, ``queries`` or ``docs`` (for ir_datasets: which iterator).
    """
    import pyarrow as pa

    module, name = _type_of(obj)
    shown = source or f"{kind} ({name})"
    if isinstance(obj, str) and obj.startswith(IRDS_PREFIX) and not os.path.exists(obj):
        attr, what = _IRDS_ATTR[kind]
        try:
            return _iterable_input(_irds(obj, attr, what), obj, kind)
        except InputError:
            raise
        except Exception as exc:  # while iterating: the download happens in ir_datasets
            raise _irds_failed(exc, what, obj) from None
    if isinstance(obj, (str, os.PathLike, Source)):
        return _parquet(obj)
    if module == "pyarrow":
        if isinstance(obj, pa.RecordBatch):
            obj = pa.Table.from_batches([obj])
        elif isinstance(obj, pa.RecordBatchReader):
            obj = obj.read_all()
        if isinstance(obj, pa.Table):
            return _from_arrow(obj, shown, "Table")
        raise InputError(f"cannot read {kind} from a pyarrow {name}; give a Table or a "
                         "RecordBatch", shown)
    if module == "polars":
        if name == "Series":
            raise InputError(f"cannot read {kind} from a polars Series; give a DataFrame",
                             shown)
        try:
            table = (obj.collect() if name == "LazyFrame" else obj).to_arrow()
        except Exception as exc:  # polars' own errors (an Object column, a failing query)
            raise InputError(f"cannot read the polars {name} as a table: "
                             f"{type(exc).__name__}: {_first_line(exc)}", shown) from None
        return _from_arrow(table, shown, "DataFrame")
    if module == "pandas":
        if name != "DataFrame":
            raise InputError(f"cannot read {kind} from a pandas {name}; give a DataFrame", shown)
        return pandas_input(obj, shown)
    if module == "datasets":
        if name in ("DatasetDict", "IterableDatasetDict"):
            splits = ", ".join(map(str, obj))
            raise InputError(f"a {name} holds several splits ({splits}); give one, e.g. "
                             f"dataset[{next(iter(obj), 'test')!r}]", shown)
        if name == "IterableDataset":
            raise InputError("a streaming IterableDataset cannot be read as a table; load it "
                             "without streaming=True", shown)
        return _from_arrow(obj.with_format("arrow")[:], shown, "Dataset")
    attr, what = _IRDS_ATTR[kind]
    if hasattr(obj, attr):  # an ir_datasets dataset object
        return _iterable_input(_dataset_iter(obj, attr, what, shown), shown, kind)
    return _iterable_input(obj, shown, kind)


def _iterable_input(items: Any, source: str, kind: str) -> TableInput:
    it = iter(items)
    first = next(it, None)
    if first is None:
        what = {"run": "retrieved documents", "qrels": "judgments"}.get(kind, "texts")
        raise InputError(f"no {what} found", source)
    if not _is_named_tuple(first):
        raise InputError(f"expected named tuples (query_id, doc_id, ...), got {show_value(first)}",
                         source, row=1)
    return _named_tuples(chain([first], it), source)


def _parquet(path: str | os.PathLike[str] | Source) -> TableInput:
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = source_name(path)
    try:
        if isinstance(path, Source):
            pf = pq.ParquetFile(pa.BufferReader(path.data))
        else:
            pf = pq.ParquetFile(os.fspath(path))
        names = [str(n) for n in pf.schema_arrow.names]
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"cannot read as Parquet: {_first_line(exc)}", name) from None
    cache: dict[str, Any] = {}

    def get(column: str) -> Any:
        if column not in cache:
            try:
                cache[column] = pf.read(columns=[column]).column(0)
            except (OSError, pa.ArrowException) as exc:
                raise InputError(f"cannot read column {column!r}: {_first_line(exc)}",
                                 name) from None
        return cache.pop(column)

    def first(column: str) -> Any:
        if pf.metadata.num_row_groups == 0:
            return []
        try:
            return pf.read_row_group(0, columns=[column]).column(0)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"cannot read column {column!r}: {_first_line(exc)}",
                             name) from None

    return TableInput(names, get, name, "the file", first)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# ---- which column is which --------------------------------------------------------------------

def _find(table: TableInput, role: str, strong: tuple[str, ...], weak: tuple[str, ...],
          columns: Mapping[str, str] | None, key: str) -> str:
    """The column of ``role``: named in ``columns[key]``, else found by name."""
    found = _find_optional(table, role, strong, weak, columns, key, True)
    if found is None:  # not reached: required
        raise InputError(f"{table.container} has no {role} column", table.source)
    return found


def _once(table: TableInput, name: str) -> str:
    if table.names.count(name) > 1:
        raise InputError(f"{table.container} has {table.names.count(name)} columns named "
                         f"{name!r}", table.source)
    return name


def _find_optional(table: TableInput, role: str, strong: tuple[str, ...],
                   weak: tuple[str, ...], columns: Mapping[str, str] | None, key: str,
                   required: bool = False) -> str | None:
    """:func:`_find`, or None when no column is there and ``required`` is False."""
    names = table.names
    if columns and key in columns:
        wanted = columns[key]
        if wanted in names:
            return _once(table, wanted)
        raise InputError(f"{table.container} has no column {wanted!r} (given as {key}=...); "
                         f"its columns: {_list(names)}", table.source)
    by_norm: dict[str, list[str]] = {}
    for n in names:
        by_norm.setdefault(_norm(n), []).append(n)
    for group in (strong, weak):
        found = [n for option in group for n in by_norm.get(option, [])]
        if {_norm(n) for n in found} == {"docid", "docno"} and len(found) == 2:
            # PyTerrier's results: docid is its index's internal number, docno the document
            found = [n for n in found if _norm(n) == "docno"]
        if len(found) == 1:
            return found[0]
        if len(set(found)) == 1:
            return _once(table, found[0])
        if len(found) > 1:
            raise InputError(
                f"{table.container} has several {role} columns ({_list(found)}); name the one "
                f"to read with --columns {key}=NAME (columns={{'{key}': NAME}} in Python); "
                f"its columns: {_list(names)}", table.source)
    if not required:
        return None
    raise InputError(f"{table.container} has no {role} column (its columns: {_list(names)}; "
                     f"layouts read: {LAYOUTS}; or name it with --columns {key}=NAME, "
                     f"columns={{'{key}': NAME}} in Python)", table.source)


def _list(names: Sequence[str]) -> str:
    shown = [repr(n) if len(n) <= 40 else repr(n[:30]) + "..." for n in names[:30]]
    more = f" and {len(names) - 30} more" if len(names) > 30 else ""
    return (", ".join(shown) or "none") + more


# ---- converting columns -----------------------------------------------------------------------

def _contiguous(col: Any) -> Any:
    import pyarrow as pa

    if isinstance(col, pa.ChunkedArray):
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col


def _first(mask: Any) -> int:
    """The index of the first True of a boolean pyarrow array (nulls are False)."""
    arr = np.asarray(mask.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
    return int(np.flatnonzero(arr)[0])


def ids_column(col: Any, what: str, column: str, source: str) -> Any:
    """A column of ids as a pyarrow string array: text, or integers written in decimal.

    Null and blank ids are refused naming the row; so are other types (a float id is
    ambiguous: ``1.0`` or ``1``?).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, list):
        try:
            col = pa.array(col)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
            return _ids_one_by_one(col, what, source)
    col = _contiguous(col)
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.dictionary_decode(), t.value_type
    if pa.types.is_null(t) and len(col):
        raise InputError(f"{what} is null", source, row=1)
    if pa.types.is_integer(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        col = pc.cast(col, pa.string())
    elif not pa.types.is_string(t) and len(col):
        if pa.types.is_floating(t):  # pandas: an integer column with a missing value is float
            missing = pc.or_(col.is_null(), pc.is_nan(col))
            if pc.any(missing).as_py():
                raise InputError(f"{what} is missing (null or NaN; column {column!r})", source,
                                 row=_first(missing) + 1)
        raise InputError(f"{what} column {column!r} holds {t} values; ids must be text or "
                         "integers", source)
    elif not pa.types.is_string(t):
        col = pa.array([], pa.string())
    if col.null_count:
        raise InputError(f"{what} is null", source, row=_first(col.is_null()) + 1)
    blank = pc.equal(pc.utf8_trim_whitespace(col), "")
    if pc.any(blank).as_py():
        raise InputError(f"{what} is empty", source, row=_first(blank) + 1)
    return col


def _ids_one_by_one(values: list[Any], what: str, source: str) -> Any:
    import pyarrow as pa

    out = []
    for i, v in enumerate(values):
        if v is None:
            raise InputError(f"{what} is null", source, row=i + 1)
        try:
            out.append(ident_text(v, what, source, None))
        except InputError as exc:
            raise InputError(exc.reason, source, row=i + 1) from None
    return pa.array(out, pa.string())


def _bad_value(value: Any, what: str, row: int, qids: Any, docs: Any, source: str,
               fractional: bool) -> InputError:
    """The error for the value of ``row`` (0-based), worded as the object reader words it."""
    qid, doc = qids[row].as_py(), docs[row].as_py()
    if value is None:
        reason = "is missing (null)"
    else:
        try:
            read_number(value, what, fractional)
            reason = "is not a number ragreport reads"
        except ValueError as exc:
            reason = str(exc)
    return InputError(f"{what} {show_value(value)} of document {doc!r} (query {qid!r}) {reason}",
                      source, row=row + 1)


def numbers_column(col: Any, what: str, column: str, source: str, qids: Any, docs: Any,
                   fractional: bool = False) -> np.ndarray:
    """A score or grade column as float64, read as :func:`~ragreport.io.objects.read_number`
    reads each value (numbers; text that is a plain decimal number), at once.

    Grades (``what == "grade"``) are truncated toward zero unless ``fractional``; a value that
    is null, not finite, a boolean or, for a grade, at least 2**53 in size is refused naming
    the row.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    grade = what == "grade"
    if isinstance(col, list):
        try:
            col = pa.array(col)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
            out = np.empty(len(col), dtype=np.float64)
            for i, v in enumerate(col):
                try:
                    out[i] = read_number(v, what, fractional)
                except ValueError:
                    raise _bad_value(v, what, i, qids, docs, source, fractional) from None
            return out
    col = _contiguous(col)
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.dictionary_decode(), t.value_type
    if col.null_count:
        row = _first(col.is_null())
        raise _bad_value(None, what, row, qids, docs, source, fractional)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        col, t = pc.cast(col, pa.string()), pa.string()
    if pa.types.is_string(t):
        pattern = PLAIN_RE2 if grade and not fractional else _DECIMAL_RE2
        ok = pc.match_substring_regex(col, pattern)
        if not pc.all(ok).as_py():
            row = _first(pc.invert(ok))
            raise _bad_value(col[row].as_py(), what, row, qids, docs, source, fractional)
        col = pc.cast(col, pa.float64())
    elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        col = pc.cast(col, pa.float64(), safe=False)
    elif len(col):
        raise InputError(f"{what} column {column!r} holds {t} values; {what}s must be "
                         "numbers", source)
    values = np.ascontiguousarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    bad = ~np.isfinite(values)
    if grade:
        bad |= np.abs(values) >= GRADE_LIMIT
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise _bad_value(float(values[row]), what, row, qids, docs, source, fractional)
    if grade and not fractional:
        values = np.trunc(values) + 0.0  # atol: toward zero (+ 0.0: no negative zero)
    return values


# ---- readers ----------------------------------------------------------------------------------

def _rows_for(table: TableInput, kind: str, columns: Mapping[str, str] | None,
              fractional: bool) -> tuple[Any, Any, np.ndarray, bool]:
    """(query ids, document ids, values, whether the values are scores): a run without a
    score column but with a ``rank`` column is ranked by it (scores ``-rank``)."""
    import pyarrow as pa

    qcol = _find(table, "query id", _QID, _QID_WEAK, columns, "qid")
    dcol = _find(table, "document id", _DOC, _DOC_WEAK, columns, "docid")
    by_rank = False
    if kind == "run":
        rank = next((n for n in table.names if _norm(n) == "rank"), None)
        found = _find_optional(table, "score", _SCORE, (), columns, "score",
                               required=rank is None or bool(columns and "score" in columns))
        by_rank = found is None
        vcol = found if found is not None else _once(table, rank or "rank")
    elif columns and "relevance" in columns:
        vcol = _find(table, "grade", _GRADE, (), columns, "relevance")
    else:
        found = _find_optional(table, "grade", _GRADE, (), None, "relevance",
                               required=not (columns and "score" in columns))
        # else the qrels' grades named as score= (MTEB's name for them)
        vcol = found if found is not None else _find(table, "grade", _GRADE, (), columns,
                                                     "score")
    if len({qcol, dcol, vcol}) < 3:
        raise InputError(f"one column is read for two roles (query id {qcol!r}, document id "
                         f"{dcol!r}, {'score' if kind == 'run' else 'grade'} {vcol!r})",
                         table.source)
    qids = ids_column(table.get(qcol), "query id", qcol, table.source)
    docs = ids_column(table.get(dcol), "document id", dcol, table.source)
    if len(qids) != len(docs):
        raise InputError("the columns have different lengths", table.source)
    what = "rank" if by_rank else "score" if kind == "run" else "grade"
    if kind == "qrels" and not fractional and _norm(vcol) in _SCORE:
        _refuse_scores_as_grades(table, vcol, qids, docs)
    values = numbers_column(table.get(vcol), what, vcol, table.source, qids, docs, fractional)
    if by_rank:
        values = 0.0 - values  # rank 1 first; equal ranks are tied scores
    if not len(qids):
        raise InputError(f"no {'retrieved documents' if kind == 'run' else 'judgments'} found",
                         table.source)
    return (pa.array(qids, pa.string()) if isinstance(qids, list) else qids, docs, values,
            not by_rank)


def _refuse_scores_as_grades(table: TableInput, column: str, qids: Any, docs: Any) -> None:
    """Qrels whose grades are named like scores (MTEB's ``score``): a value that is not a
    whole number means a run was given as the qrels (both have query-id, corpus-id and
    score; a run and its qrels swapped on the command line): refused naming the row, never
    truncated to grade 0 and evaluated as a run without a relevant document."""
    import pyarrow as pa

    col = table.get(column)
    if not isinstance(col, (pa.Array, pa.ChunkedArray)) or not pa.types.is_floating(col.type):
        return
    col = _contiguous(col)
    with np.errstate(invalid="ignore"):
        values = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
        frac = np.isfinite(values) & (values != np.trunc(values))
    if not frac.any():
        return
    row = int(np.flatnonzero(frac)[0])
    qid = qids[row].as_py() if hasattr(qids[row], "as_py") else qids[row]
    doc = docs[row].as_py() if hasattr(docs[row], "as_py") else docs[row]
    raise InputError(f"the qrels' grade column {column!r} holds {float(values[row])!r} "
                     f"(document {doc!r}, query {qid!r}), not a whole number: is this the run? "
                     "give the qrels first, then the run (ragreport evaluate QRELS RUN); "
                     "--fractional-grades keeps fractional grades", table.source, row=row + 1)


def qrels_table(obj: Any, *, source: str | None = None, columns: Mapping[str, str] | None = None,
                fractional: bool = False) -> Qrels:
    """:class:`~ragreport.data.Qrels` from a table (see :func:`table_input`).

    >>> import pyarrow as pa
    >>> q = qrels_table(pa.table({"query-id": [1, 1], "corpus-id": ["d1", "d2"],
    ...                           "score": [2, 0]}))
    >>> q.query_ids.to_pylist(), q.grades.tolist()
    (['1', '1'], [2.0, 0.0])
    """
    table = table_input(obj, "qrels", source)
    qids, docs, grades, _ = _rows_for(table, "qrels", columns, fractional)
    return Qrels(qids, docs, table.source, TableRows(len(qids)), grades)


def run_table(obj: Any, *, source: str | None = None, columns: Mapping[str, str] | None = None,
              name: str | None = None, stem: str | None = None) -> Run:
    """:class:`~ragreport.data.Run` from a table (see :func:`table_input`).

    The run's name is ``name``, else the first value of a ``tag`` column (as the TREC
    reader takes the tag of the first line), else ``stem`` (a file's name), else ``run``.
    A table without a score column but with a ``rank`` column is a ranked list: rank 1
    first (scores ``-rank``, :attr:`~ragreport.data.Run.has_scores` False).

    >>> import pyarrow as pa
    >>> r = run_table(pa.table({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [2, 1.5]}))
    >>> r.doc_ids.to_pylist(), r.scores.tolist(), r.name
    (['a', 'b'], [2.0, 1.5], 'run')
    """
    table = table_input(obj, "run", source)
    qids, docs, scores, has_scores = _rows_for(table, "run", columns, False)
    tag = None
    if name is None:
        tcol = next((n for n in table.names if _norm(n) in _TAG), None)
        if tcol is not None:
            values = (table.first or table.get)(tcol)
            first: Any = values[0] if len(values) else None
            value = first.as_py() if hasattr(first, "as_py") else first
            tag = value if isinstance(value, str) and value.strip() else None
    return Run(qids, docs, table.source, TableRows(len(qids)), scores,
               name or tag or stem or "run", has_scores)


def texts_table(obj: Any, what: str, *, source: str | None = None,
                columns: Mapping[str, str] | None = None) -> dict[str, str]:
    """id -> text from a table: an id column (``_id``, ``id``, ``doc_id``, ``query_id``...),
    a text column (``text``, ``contents``, ``body``...; ``query`` for queries) and an optional
    ``title``, joined as the JSONL reader joins them (``title\\ntext`` when the title is not
    empty). An id given twice keeps its last text, as the file readers do.

    >>> import pyarrow as pa
    >>> texts_table(pa.table({"_id": ["d1", "d2"], "title": ["Lists", ""],
    ...                       "text": ["mutable", "no title"]}), "docs")
    {'d1': 'Lists\\nmutable', 'd2': 'no title'}
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = what if what in ("queries", "docs") else "docs"
    table = table_input(obj, kind, source)
    icol = _find(table, "id", _TEXT_ID, (), columns, "id")
    tcol = _find(table, "text", _TEXT, _TEXT_WEAK, columns, "text")
    title_col = _find_optional(table, "title", _TITLE, (), columns, "title")
    ids = ids_column(table.get(icol), "id", icol, table.source)
    texts = _contiguous(_as_arrow(table.get(tcol), table.source))
    if pa.types.is_dictionary(texts.type):
        texts = texts.dictionary_decode()
    if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)
            or pa.types.is_string_view(texts.type)):
        raise InputError(f"text column {tcol!r} holds {texts.type} values; texts must be text",
                         table.source)
    if texts.null_count:
        raise InputError("text is null", table.source, row=_first(texts.is_null()) + 1)
    texts = pc.cast(texts, pa.large_string())
    if title_col is not None:
        titles = _contiguous(_as_arrow(table.get(title_col), table.source))
        if pa.types.is_dictionary(titles.type):
            titles = titles.dictionary_decode()
        if pa.types.is_string(titles.type) or pa.types.is_large_string(titles.type) \
                or pa.types.is_string_view(titles.type):
            titles = pc.cast(titles, pa.large_string())
            has = pc.fill_null(pc.not_equal(titles, ""), False)
            joined = pc.binary_join_element_wise(titles, texts, pa.scalar("\n",
                                                                          pa.large_string()))
            texts = pc.if_else(has, joined, texts)
    return dict(zip(ids.to_pylist(), texts.to_pylist(), strict=True))


def _as_arrow(col: Any, source: str) -> Any:
    import pyarrow as pa

    if isinstance(col, list):
        if any(v is not None and not isinstance(v, str) for v in col):
            bad = next(i for i, v in enumerate(col) if v is not None and not isinstance(v, str))
            raise InputError(f"text must be a string, got {show_value(col[bad])}", source,
                             row=bad + 1)
        return pa.array(col, pa.large_string())
    return col
