"""What a table is (:class:`TableInput`): a Parquet file, a pyarrow Table or RecordBatch, a
polars or pandas DataFrame, a Hugging Face ``datasets.Dataset``, an iterable of ir_datasets-style
named tuples or an ``irds:`` id, recognised by type and read into pyarrow columns
(:func:`table_input`); :mod:`.tabular` reads qrels, runs and texts from them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from ..errors import InputError
from .common import Source, source_name
from .objects import show_value

__all__ = ["IRDS_PREFIX", "TableInput", "is_iterator_input", "is_parquet", "is_table_like",
           "pandas_input", "parquet_columns", "table_input"]

#: An ir_datasets id is given as ``irds:<id>``.
IRDS_PREFIX = "irds:"


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
