"""Query slices: query id -> one or more slice names (tags), read once and validated.

A slice is a named group of queries ("multi-hop", "long queries", "customer X"); a query may
be in several slices, or in none. :func:`load_slices` reads them from

- a text file, one query per line, ``qid<TAB>tag[,tag...]`` (or ``qid tag`` separated by
  white space; the rest of the line after the id is the tag list, so a tag may hold spaces),
  or one line per (query, tag) pair; ``#`` comment lines, blank lines and a header line
  (``query_id<TAB>slices``) are skipped;
- JSON ``{"qid": ["tag", ...]}`` (or ``{"qid": "tag"}``) or JSONL records
  ``{"query_id": "q1", "slices": ["tag", ...]}``;
- CSV with a header, or Parquet (detected by its magic bytes), with an id column
  (``query_id``, ``query-id``, ``qid``, ``_id`` or ``id``) and a tag column (``slices``,
  ``slice``, ``tags`` or ``tag``, or the one named by ``column=``);
- a mapping ``{qid: [tags]}``, a pyarrow Table, or a pandas / polars DataFrame.

``column=`` names the tag column of a table (CSV, Parquet, JSONL records, a DataFrame): this is
how the slices come out of a queries file that has a column for them
(``--slices-column NAME``).

Rules (the same for every format): a tag is text (or a whole number, read as text) without
control characters (nor bidirectional controls, nor line separators), at most
:data:`MAX_NAME_CHARS` characters, surrounding white space removed; an empty tag inside a list
(``a,,b``) or a text line with an id and no tag is an error naming the file and the line; an
empty cell of a table means "in no slice"; the same (query, tag) given twice counts once; at
most :data:`MAX_SLICES` distinct slices (a column with one value per query is not a slicing).
Which query ids were evaluated is decided later (:mod:`ragreport.analysis.slices`).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from .common import (
    Source,
    gzip_error,
    is_input,
    json_failure,
    jsonl_objects,
    read_once,
    source_name,
    strip_bom,
)

__all__ = ["ID_COLUMNS", "MAX_NAME_CHARS", "MAX_SLICES", "TAG_COLUMNS", "QuerySlices",
           "load_slices"]

#: Column (or JSON key) names read as the query id, first found wins.
ID_COLUMNS = ("query_id", "query-id", "qid", "_id", "id")
#: Column (or JSON key) names read as the tags when ``column=`` is not given.
TAG_COLUMNS = ("slices", "slice", "tags", "tag")
#: The most distinct slices one input may define.
MAX_SLICES = 200
#: The longest slice name.
MAX_NAME_CHARS = 200


@dataclass(frozen=True)
class QuerySlices:
    """Query id -> slice names, in the order first seen (both the ids and the names).

    >>> s = load_slices({"q1": ["short", "code"], "q2": "code"})
    >>> s.names, s.queries("code"), s.tags["q1"]
    (('short', 'code'), ('q1', 'q2'), ('short', 'code'))
    """

    tags: dict[str, tuple[str, ...]]
    source: str
    names: tuple[str, ...] = ()
    duplicates: int = 0
    """(query, tag) pairs given more than once (each counted once)."""
    _members: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False,
                                                 compare=False)

    def queries(self, name: str) -> tuple[str, ...]:
        """The ids of the queries tagged ``name`` (empty for an unknown name)."""
        if not self._members:
            members: dict[str, list[str]] = {n: [] for n in self.names}
            for q, tags in self.tags.items():
                for t in tags:
                    members[t].append(q)
            self._members.update({n: tuple(v) for n, v in members.items()})
        return self._members.get(name, ())

    def __len__(self) -> int:
        return len(self.names)


#: Refused in a slice name with the control characters: the bidirectional controls (a
#: U+202E reverses the text after it, up to the end of its element: the rest of the Markdown
#: status line naming the failing slices) and the line and paragraph separators.
_INVISIBLE = frozenset("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e"
                       "\u2066\u2067\u2068\u2069")


class _Builder:
    """Collects (query, tag) pairs, checking each where it was read."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tags: dict[str, dict[str, None]] = {}
        self.names: dict[str, None] = {}
        self.duplicates = 0

    def where(self, line: int | None, row: int | None) -> tuple[str, int | None]:
        if row is not None:
            return f"{self.source}: row {row}", None
        return self.source, line

    def error(self, message: str, line: int | None = None, row: int | None = None
              ) -> InputError:
        source, at = self.where(line, row)
        return InputError(message, source, at)

    def query(self, value: Any, line: int | None = None, row: int | None = None) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.error(f"the query id must be text, got {_kind(value)}", line, row)
        qid = str(value).strip()
        if not qid:
            raise self.error("empty query id", line, row)
        return qid

    def name(self, value: Any, qid: str, line: int | None, row: int | None) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.error(f"query {qid!r}: a slice name must be text, got {_kind(value)}",
                             line, row)
        name = str(value).strip()
        if not name:
            raise self.error(f"query {qid!r}: empty slice name", line, row)
        if len(name) > MAX_NAME_CHARS:
            raise self.error(f"query {qid!r}: slice name of {len(name)} characters (at most "
                             f"{MAX_NAME_CHARS})", line, row)
        bad = next((ch for ch in name if ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0
                    or ch in _INVISIBLE), None)
        if bad is not None:
            raise self.error(f"query {qid!r}: slice name {name[:40]!r} holds a control "
                             f"character ({bad!r})", line, row)
        return name

    def add(self, qid_value: Any, tags: Any, line: int | None = None, row: int | None = None,
            *, split: bool = True, empty_ok: bool = True) -> None:
        qid = self.query(qid_value, line, row)
        if tags is None or (isinstance(tags, str) and not tags.strip()):
            if not empty_ok:
                raise self.error(f"query {qid!r}: no slice name after the query id", line, row)
            self.tags.setdefault(qid, {})
            return
        if isinstance(tags, str):
            items: list[Any] = tags.split(",") if split else [tags]
        elif isinstance(tags, (list, tuple)):
            items = list(tags)
        else:
            items = [tags]
        got = self.tags.setdefault(qid, {})
        for item in items:
            name = self.name(item, qid, line, row)
            if name in got:
                self.duplicates += 1
                continue
            got[name] = None
            if name not in self.names:
                self.names[name] = None
                if len(self.names) > MAX_SLICES:
                    raise self.error(f"more than {MAX_SLICES} distinct slices (a slice is a "
                                     "group of queries: is this a column with one value per "
                                     "query?)", line, row)

    def done(self) -> QuerySlices:
        if not self.names:
            raise InputError("no slice found (no query has a slice name)", self.source)
        return QuerySlices({q: tuple(t) for q, t in self.tags.items()}, self.source,
                           tuple(self.names), self.duplicates)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def load_slices(slices: Any, *, column: str | None = None) -> QuerySlices:
    """Read query slices (see the module's documentation for the formats).

    Parameters
    ----------
    slices : path, Source, mapping, QuerySlices, pyarrow.Table or DataFrame
        Where the slices are. ``-`` is standard input.
    column : str, optional
        The tag column of a table (CSV, Parquet, JSONL records, Arrow, DataFrame); default:
        the first of :data:`TAG_COLUMNS` present.

    Returns
    -------
    QuerySlices
        Query id -> slice names.

    Raises
    ------
    InputError
        Naming the file, the line (or row) and what was wrong.

    >>> s = load_slices({"q1": "long, code", "q2": ["short"]})
    >>> s.tags
    {'q1': ('long', 'code'), 'q2': ('short',)}
    """
    if isinstance(slices, QuerySlices):
        return slices
    if column is not None and (not isinstance(column, str) or not column.strip()):
        raise InputError(f"the slices column must be a non-empty name, got {column!r}")
    if is_input(slices):
        return _from_file(read_once(slices), column)
    if isinstance(slices, Mapping):
        if column is not None:
            raise InputError("column= names a column of a table; a mapping is already "
                             "{query id: tags}")
        b = _Builder(f"slices ({type(slices).__name__})")
        for q, tags in slices.items():
            b.add(q, tags)
        return b.done()
    table = _arrow_table(slices)
    if table is None:
        raise InputError(f"slices must be a path, a mapping {{query id: tags}}, a pyarrow "
                         f"Table or a DataFrame, got {type(slices).__name__}")
    return _from_records(table.to_pylist(), list(table.column_names),
                         f"slices ({type(slices).__name__})", column, rows=True)


def _arrow_table(obj: Any) -> Any:
    """A pyarrow Table from a Table, a polars or a pandas DataFrame; None otherwise."""
    import pyarrow as pa

    if isinstance(obj, pa.Table):
        return obj
    if hasattr(obj, "to_arrow") and callable(obj.to_arrow):  # polars
        got = obj.to_arrow()
        return got if isinstance(got, pa.Table) else None
    if type(obj).__module__.startswith("pandas") and hasattr(obj, "columns"):
        return pa.Table.from_pandas(obj, preserve_index=False)
    return None


def _raw(src: str | Source) -> bytes:
    name = source_name(src)
    if isinstance(src, Source):
        return src.data
    try:
        return Path(src).read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", name) from None


def _from_file(src: str | Source, column: str | None) -> QuerySlices:
    import gzip
    import zlib

    name = source_name(src)
    data = _raw(src)
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise gzip_error(exc, name) from None
    if data[:4] == b"PAR1":
        return _from_parquet(data, name, column)
    data = strip_bom(data)
    if not data.strip():
        raise InputError("the file is empty", name)
    nul = data.find(b"\x00")
    if nul != -1:
        raise InputError("not a text file (binary data found)", name,
                         data.count(b"\n", 0, nul) + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 text ({exc.reason})", name,
                         data.count(b"\n", 0, exc.start) + 1) from None
    lower = os.fspath(name).lower()
    if lower.endswith((".csv", ".csv.gz")):
        return _from_csv(text, name, column)
    if text.lstrip()[:1] in ("{", "["):
        return _from_json(text, name, column)
    if column is not None:
        raise InputError(f"a column ({column!r}) was named, but this is a text file of "
                         "'query_id<TAB>tags' lines, not a table (JSONL, CSV or Parquet)",
                         name)
    return _from_lines(text, name)


def _from_lines(text: str, name: str) -> QuerySlices:
    b = _Builder(name)
    first = True
    for no, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        if "\t" in line:
            qid, _, rest = line.partition("\t")
        else:
            parts = line.strip().split(None, 1)
            qid, rest = parts[0], parts[1] if len(parts) > 1 else ""
        if first:
            first = False
            if qid.strip().lower() in (*ID_COLUMNS, "query") and \
                    rest.strip().lower() in (*TAG_COLUMNS, "tags", "slice_names"):
                continue  # a header line
        b.add(qid, rest, no, empty_ok=False)
    return b.done()


def _from_json(text: str, name: str, column: str | None) -> QuerySlices:
    objects: list[list[tuple[str, Any]]] = []  # every object's pairs, the outermost last

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        objects.append(items)
        return dict(items)

    try:
        whole = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError:
        whole = None
    except RecursionError:
        raise InputError("JSON nested too deeply", name) from None
    except ValueError as exc:  # an integer longer than Python converts
        raise InputError(f"invalid JSON: {json_failure(exc)}", name) from None
    if isinstance(whole, dict) and not any(k in whole for k in ID_COLUMNS):
        if column is not None:
            raise InputError(f"a column ({column!r}) was named, but this is a JSON object "
                             "{query id: tags}, not a table", name)
        b = _Builder(name)
        for q, tags in objects[-1]:  # a query id given twice: both its lists (not the last)
            b.add(q, tags, _line_of(text, q))
        return b.done()
    if isinstance(whole, list):
        bad = next((i for i, r in enumerate(whole) if not isinstance(r, dict)), None)
        if bad is not None:
            raise InputError(f"record {bad + 1} is not a JSON object", name)
        keys = list(dict.fromkeys(k for r in whole for k in r))
        return _from_records(whole, keys, name, column, rows=True)
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    for no, rec in jsonl_objects(text, name):
        records.append(rec)
        lines.append(no)
    keys = list(dict.fromkeys(k for r in records for k in r))
    return _from_records(records, keys, name, column, lines=lines)


def _line_of(text: str, key: str) -> int | None:
    """The line of a key of a JSON object (for messages), or None."""
    at = text.find(json.dumps(key, ensure_ascii=False))
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _from_records(records: Iterable[Mapping[str, Any]], keys: Sequence[str], name: str,
                  column: str | None, *, rows: bool = False,
                  lines: Sequence[int] | None = None, first_row: int = 1) -> QuerySlices:
    id_col = next((c for c in ID_COLUMNS if c in keys), None)
    if id_col is None:
        raise InputError(f"no query id column (one of {', '.join(ID_COLUMNS)}); columns: "
                         f"{_names(keys)}", name)
    if column is not None:
        if column not in keys:
            raise InputError(f"no column {column!r}; columns: {_names(keys)}", name)
        tag_col = column
    else:
        found = next((c for c in TAG_COLUMNS if c in keys), None)
        if found is None:
            raise InputError(f"no slices column (one of {', '.join(TAG_COLUMNS)}, or name it "
                             f"with --slices-column); columns: {_names(keys)}", name)
        tag_col = found
    b = _Builder(name)
    for i, rec in enumerate(records):
        line = lines[i] if lines is not None else None
        row = i + first_row if rows and lines is None else None
        if id_col not in rec:
            raise b.error(f"no {id_col!r} in this record", line, row)
        b.add(rec[id_col], rec.get(tag_col), line, row)
    return b.done()


def _names(keys: Sequence[str]) -> str:
    shown = ", ".join(repr(k) for k in list(keys)[:10])
    return shown + (f" and {len(keys) - 10} more" if len(keys) > 10 else "") if keys else "none"


def _from_csv(text: str, name: str, column: str | None) -> QuerySlices:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("the file is empty", name) from None
    except csv.Error as exc:
        raise InputError(f"invalid CSV: {exc}", name, 1) from None
    header = [h.strip() for h in header]
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    try:
        for fields in reader:
            if not any(f.strip() for f in fields):
                continue
            if len(fields) != len(header):
                raise InputError(f"expected {len(header)} fields (as the header), got "
                                 f"{len(fields)}", name, reader.line_num)
            records.append(dict(zip(header, fields, strict=True)))
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise InputError(f"invalid CSV: {exc}", name, reader.line_num) from None
    return _from_records(records, header, name, column, lines=lines)


def _from_parquet(data: bytes, name: str, column: str | None) -> QuerySlices:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"cannot read Parquet: {str(exc).splitlines()[0] if str(exc) else exc}",
                         name) from None
    return _from_records(table.to_pylist(), list(table.column_names), name, column,
                         rows=True)
