"""Qrels and runs from Python objects and JSON: dict-of-dicts (pytrec_eval, ranx), ranked lists,
the seed tutorial's list of ``{"query", "retrieved", "relevant"}`` dicts and JSONL records.
Tables (pandas and polars DataFrames, Arrow, Parquet, datasets) are read by
:mod:`ragreport.io.tabular`, with the id and number checks defined here.

Every query is listed once: a query twice (two JSONL lines, a repeated key of a JSON object,
two records with one ``query_id``, the keys ``1`` and ``"1"`` of one dict) is an error naming
both places. A query listed with an empty result list is kept in :attr:`Columns.empty`: it is
an evaluated query that scores 0. A ranked list must have an order, so a ``set`` is refused
as a run's list (a set of relevant ids is fine). Numbers follow :func:`read_number`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from .common import GRADE_LIMIT, decimal_value, grade_value

_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass
class Columns:
    """Rows accumulated from objects before they become a Qrels or Run."""

    qids: list[str] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    has_scores: bool = True
    texts: dict[str, str] = field(default_factory=dict)
    empty: list[str] = field(default_factory=list)
    """Queries listed with an empty result list (runs only), in input order."""
    seen: dict[str, str] = field(default_factory=dict)
    """Query id -> where it was listed (``line 3``, ``record 0``, ``key 'q1'``)."""
    latency_ms: dict[str, float] = field(default_factory=dict)
    """Query id -> the retriever's time in milliseconds (a run record's ``latency_ms``)."""
    sources: list[Any] = field(default_factory=list)
    """Who judged each row (a qrels record's ``source``); empty when no record says."""


class _Num(str):
    """A JSON number literal kept as written: every float, and integers of 19 digits or more
    (Python would build those at any size, or refuse past 4300 digits)."""

    __slots__ = ()


class _Pairs(list[tuple[str, Any]]):
    """A JSON object in which a key appears more than once: its (key, value) pairs in order."""

    __slots__ = ()


def _json_int(text: str) -> int | _Num:
    return int(text) if len(text) <= 18 else _Num(text)


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Pairs:
    d = dict(pairs)
    return d if len(d) == len(pairs) else _Pairs(pairs)


def _loads(text: str, literal_floats: bool = False) -> Any:
    """``json.loads`` keeping repeated keys (as :class:`_Pairs`) and long integers as
    written; floats too with ``literal_floats`` (for grades, where ``1e3`` is refused)."""
    return json.loads(text, object_pairs_hook=_pairs_hook,
                      parse_float=_Num if literal_floats else None, parse_int=_json_int)


def show_value(value: Any) -> str:
    """``repr`` of a value for a message, shortened (a huge integer has no usable repr)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"(an integer of {len(str(value)) if value.bit_length() < 14000 else 'over 4000'}" \
            " digits)"
    if isinstance(value, _Num):  # a JSON number, shown as written
        digits = value.lstrip("+-")
        if _INTEGER.fullmatch(value) and len(digits) > 30:
            return f"(an integer of {len(digits)} digits)"
        return str(value) if len(value) <= 40 else f"{value[:30]}... ({len(value)} characters)"
    if isinstance(value, str) and len(value) > 40:
        return f"{value[:30]!r}... ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:50]}... ({len(text)} characters)"


def read_number(value: Any, what: str = "score", fractional: bool = False) -> float:
    """A score or grade given as a Python value, a numpy scalar, text or a JSON literal.

    Text must be a plain decimal number (``[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?``) and
    every value must be finite as a float64; ``True`` is not a number. A grade (``what ==
    "grade"``) is read as trec_eval reads it (C ``atol``): truncated toward zero (``1.7`` -> 1);
    a grade written with an exponent is refused, as ``atol`` and its value disagree. With
    ``fractional=True`` a grade is kept as it is. ``|grade| >= 2**53`` is refused.

    Raises ``ValueError`` (a :class:`~ragreport.io.common.NumberError` for text) with the
    reason; the caller names the place. Text is read by :func:`~ragreport.io.common.decimal_value`,
    as the text readers read it.

    >>> read_number("1.7", "grade"), read_number(2.9, "grade", fractional=True)
    (1.0, 2.9)
    >>> read_number(np.float32(0.5)), read_number("-.5e1")
    (0.5, -5.0)
    >>> read_number("1_000")
    Traceback (most recent call last):
    ...
    ragreport.io.common.NumberError: is not a plain decimal number
    """
    grade = what == "grade"
    if isinstance(value, (bool, np.bool_)):
        raise ValueError("is not a number (a boolean)")
    if isinstance(value, str):
        f = decimal_value(value, grade, fractional)
    elif isinstance(value, (int, np.integer)):
        try:
            f = float(value)
        except OverflowError:
            raise ValueError("is not a finite number (too large for a float64)") from None
    elif isinstance(value, (float, np.floating)):
        f = float(value)
    else:
        raise ValueError("is not a number")
    if not math.isfinite(f):
        raise ValueError("is not a finite number")
    return grade_value(f, fractional) if grade else f


def _number(value: Any, what: str, source: str, line: int | None, qid: str, doc: str,
            fractional: bool = False) -> float:
    try:
        return read_number(value, what, fractional)
    except ValueError as exc:
        raise InputError(f"{what} {show_value(value)} of document {doc!r} (query {qid!r}) {exc}",
                         source, line) from None


def ident_text(value: Any, what: str, source: str, line: int | None) -> str:
    if isinstance(value, _Num):
        if _INTEGER.fullmatch(value) is None:
            raise InputError(f"{what} must be a string or an integer, got {show_value(value)}",
                             source, line)
        return str(value)
    if isinstance(value, (_Pairs, bool, np.bool_)) or \
            not isinstance(value, (str, int, np.integer)):
        raise InputError(f"{what} must be a string or an integer, got {show_value(value)}", source,
                         line)
    try:
        text = str(value)
    except ValueError:  # an integer past Python's 4300-digit limit
        raise InputError(f"{what} must be a string or an integer of at most 4300 digits, got "
                         f"{show_value(value)}", source, line) from None
    if not text.strip():
        raise InputError(f"{what} is empty", source, line)
    return text


def _repeated(pairs: _Pairs) -> str:
    keys = [k for k, _ in pairs]
    return next(k for i, k in enumerate(keys) if k in keys[:i])


def _listed(cols: Columns, qid: str, place: str, source: str, line: int | None) -> None:
    """Note that ``qid`` is listed at ``place``; raise if it was listed before."""
    first = cols.seen.get(qid)
    if first is not None:
        where = f"on {place}" if first == place else f"({first} and {place})"
        raise InputError(f"query {qid!r} is listed twice {where}; list each query once",
                         source, line)
    cols.seen[qid] = place


def add_entries(cols: Columns, qid: str, entries: Any, kind: str, source: str,
                line: int | None, place: str | None = None, fractional: bool = False) -> None:
    """Add one query's documents: a {doc: value} map or a ranked list of ids (or of dicts).

    ``place`` (``line 3``, ``record 0``...) is where the query is listed, for the error that
    names both places when it is listed twice. An empty list or map makes ``qid`` one of
    :attr:`Columns.empty` (runs; for qrels an empty list judges nothing, as in pytrec_eval).
    """
    what = "score" if kind == "run" else "grade"
    _listed(cols, qid, place or (f"line {line}" if line is not None else f"query {qid!r}"),
            source, line)
    n_before = len(cols.qids)
    if isinstance(entries, (Mapping, _Pairs)):
        if isinstance(entries, Mapping):
            keys, vals = list(entries.keys()), list(entries.values())
        else:
            keys, vals = [k for k, _ in entries], [v for _, v in entries]
        fast = _fast_ids(keys)
        values = _fast_values(vals, what, fractional) if fast is not None else None
        if fast is None or values is None:  # one by one, to name what is wrong
            fast = [ident_text(k, "document id", source, line) for k in keys]
            values = [_number(v, what, source, line, qid, d, fractional)
                      for d, v in zip(fast, vals, strict=True)]
        _extend(cols, qid, fast, values, line)
    else:
        if isinstance(entries, (str, bytes)) or not isinstance(entries, Iterable):
            raise InputError(f"documents of query {qid!r} must be a list of ids or a "
                             f"{{doc_id: {what}}} map, got {type(entries).__name__}", source,
                             line)
        if kind == "run" and isinstance(entries, (set, frozenset)):
            raise InputError(f"the ranked list of query {qid!r} is a {type(entries).__name__}, "
                             "whose order is undefined; give a list (best first) or a "
                             "{doc_id: score} map", source, line)
        items = list(entries)
        docs = _fast_ids(items)
        if docs is not None:  # plain ids: ranks as scores (runs), grade 1 (qrels)
            if kind == "run" and docs:
                cols.has_scores = False
            n = len(docs)
            _extend(cols, qid, docs, [float(n - i) for i in range(n)] if kind == "run"
                    else [1.0] * n, line)
        else:
            _add_items(cols, qid, items, kind, what, source, line, fractional)
    if kind == "run" and len(cols.qids) == n_before:
        cols.empty.append(qid)


def _extend(cols: Columns, qid: str, docs: list[str], values: list[float],
            line: int | None) -> None:
    n = len(docs)
    cols.qids.extend([qid] * n)
    cols.docs.extend(docs)
    cols.values.extend(values)
    cols.lines.extend([line or 0] * n)


def _add_items(cols: Columns, qid: str, items: list[Any], kind: str, what: str, source: str,
               line: int | None, fractional: bool) -> None:
    """A ranked list one item at a time: ids, or dicts with an id and a score or grade."""
    for pos, item in enumerate(items):
        if isinstance(item, _Pairs):
            raise InputError(f"a document entry of query {qid!r} has the field "
                             f"{_repeated(item)!r} twice", source, line)
        if isinstance(item, Mapping):
            d = ident_text(item.get("doc_id", item.get("id", item.get("_id"))), "document id",
                       source, line)
            value = item.get("score" if kind == "run" else "grade", item.get("relevance"))
            if value is None:
                value = (len(items) - pos) if kind == "run" else 1
                if kind == "run":
                    cols.has_scores = False
            cols.values.append(_number(value, what, source, line, qid, d, fractional))
        else:
            d = ident_text(item, "document id", source, line)
            if kind == "run":
                cols.has_scores = False
            cols.values.append(float(len(items) - pos) if kind == "run" else 1.0)
        cols.qids.append(qid)
        cols.docs.append(d)
        cols.lines.append(line or 0)


def _fast_ids(ids: list[Any]) -> list[str] | None:
    """``ids`` as text when every one is a non-blank ``str`` (or every one a plain ``int``),
    checked without a Python loop; None when they must be checked one by one."""
    types = set(map(type, ids))
    if types == {str}:
        return None if "" in ids or any(map(str.isspace, ids)) else ids
    if types == {int}:
        try:
            return list(map(str, ids))
        except ValueError:  # past Python's 4300-digit limit
            return None
    return [] if not ids else None


_PLAIN = frozenset({float, int})


def _fast_values(values: list[Any], what: str, fractional: bool) -> list[float] | None:
    """``values`` read as :func:`read_number` reads them, for plain Python floats and ints,
    checked at once; None when they must be read one by one (or one is wrong)."""
    if not set(map(type, values)) <= _PLAIN:
        return None
    try:
        arr = np.array(values, dtype=np.float64)
    except OverflowError:
        return None
    if not np.isfinite(arr).all():
        return None
    if what == "grade":
        if not (np.abs(arr) < GRADE_LIMIT).all():
            return None
        if not fractional:
            arr = np.trunc(arr) + 0.0  # + 0.0: no negative zero
    out: list[float] = arr.tolist()
    return out


_RECORD_QID = ("query_id", "qid", "query-id", "id", "_id")
_RECORD_KEYS = ("retrieved", "relevant", "results", "ranking", "docs", "qrels", "relevance",
                "judgments", "query_id", "qid")


def add_record(cols: Columns, record: Any, index: int, kind: str, source: str,
               line: int | None, place: str | None = None, fractional: bool = False) -> None:
    """One JSONL record or seed dict: ``query_id``, ``query``, ``retrieved``, ``relevant``.

    A record without an id is query ``index + 1``.
    """
    if isinstance(record, _Pairs):
        raise InputError(f"a record has the field {_repeated(record)!r} twice", source, line)
    if not isinstance(record, Mapping):
        raise InputError(f"expected an object with 'retrieved' and/or 'relevant', got "
                         f"{type(record).__name__}", source, line)
    raw_qid = next((record[k] for k in _RECORD_QID if k in record), None)
    qid = ident_text(raw_qid, "query_id", source, line) if raw_qid is not None else str(index + 1)
    text = record.get("query", record.get("text"))
    if isinstance(text, str):
        cols.texts[qid] = text
    key = "retrieved" if kind == "run" else "relevant"
    if key not in record:
        alt = ("results", "ranking", "docs") if kind == "run" else ("qrels", "relevance",
                                                                     "judgments")
        found = next((k for k in alt if k in record), None)
        if found is None:
            raise InputError(f"record for query {qid!r} has no {key!r} field "
                             f"(keys: {', '.join(map(str, record))})", source, line)
        key = found
    before = len(cols.qids)
    if kind == "qrels" and cols.sources and "source" not in record:
        raise InputError("a judgment has no source (once one judgment has a source, each "
                         "needs one)", source, line)
    if kind == "qrels" and "source" in record:  # one record per query and source: allowed
        cols.seen.pop(qid, None)
    add_entries(cols, qid, record[key], kind, source, line, place, fractional)
    if kind == "qrels" and ("source" in record or cols.sources):
        cols.sources += [None] * (before - len(cols.sources))  # rows of earlier records
        cols.sources += [record.get("source")] * (len(cols.qids) - before)
    if kind == "run" and "latency_ms" in record:  # written by ragreport.collect_run
        cols.latency_ms[qid] = read_latency(record["latency_ms"], qid, source, line)


def read_latency(value: Any, qid: str, source: str, line: int | None) -> float:
    """A query's ``latency_ms``: a finite number of milliseconds, at least 0.

    >>> read_latency(12.5, "q1", "run.jsonl", 3)
    12.5
    >>> read_latency(-1, "q1", "run.jsonl", 3)
    Traceback (most recent call last):
    ...
    ragreport.errors.InputError: run.jsonl:3: latency_ms -1 of query 'q1' is negative
    """
    try:
        ms = read_number(value, "latency_ms")
    except ValueError as exc:
        raise InputError(f"latency_ms {show_value(value)} of query {qid!r} {exc}", source,
                         line) from None
    if ms < 0:
        raise InputError(f"latency_ms {show_value(value)} of query {qid!r} is negative", source,
                         line)
    return ms


def from_object(obj: Any, kind: str, source: str, *, fractional: bool = False,
                lines: Callable[[int], int | None] | None = None) -> Columns:
    """Rows from a dict-of-dicts, dict of lists or list of records.

    ``lines(i)``, when given (a JSON document), is the line of the top-level entry ``i``.
    """
    cols = Columns()

    def at(i: int, name: str, in_array: bool) -> tuple[str, int | None]:
        line = lines(i) if lines is not None else None
        if line is None:
            return name, None
        return (f"{name} (line {line})" if in_array else f"line {line}"), line

    if isinstance(obj, (Mapping, _Pairs)):
        pairs = obj.items() if isinstance(obj, Mapping) else obj
        for i, (raw_qid, entries) in enumerate(pairs):
            place, line = at(i, f"key {show_value(raw_qid)}", False)
            qid = ident_text(raw_qid, "query id", source, line)
            add_entries(cols, qid, entries, kind, source, line, place, fractional)
    elif isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        for i, record in enumerate(obj):
            place, line = at(i, f"record {i}", True)
            add_record(cols, record, i, kind, source, line, place, fractional)
    else:
        raise InputError(f"cannot read {kind} from a {type(obj).__name__}; give a path, a "
                         "{query: {doc: value}} dict, a list of records or a table", source)
    return cols


def _looks_like_record(obj: Any) -> bool:
    """A record (``query_id``, ``retrieved``...) rather than a ``{qid: documents}`` map."""
    if isinstance(obj, _Pairs):
        return any(k in _RECORD_KEYS for k, _ in obj)
    return isinstance(obj, Mapping) and any(k in obj for k in _RECORD_KEYS)


def _json_error(exc: Exception, source: str, line: int | None = None) -> InputError:
    if isinstance(exc, json.JSONDecodeError):
        col = f" (column {exc.colno})" if line is not None else ""
        return InputError(f"invalid JSON: {exc.msg}{col}", source,
                          line if line is not None else exc.lineno)
    if isinstance(exc, RecursionError):
        return InputError("invalid JSON: nested too deeply", source, line)
    return InputError(f"invalid JSON: {exc}", source, line)


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]|-?[0-9][-+.eE0-9]*|true|false|null|NaN|'
                    r"-?Infinity")
_COLON = re.compile(r"\s*:")
_NONBLANK = re.compile(r"\S")


def _entry_lines(text: str) -> Callable[[int], int | None]:
    """For a JSON document: the line of each entry of its top-level object (the line of the
    key) or array (the line where the element starts), computed when first asked."""
    cache: list[int] = []

    def find() -> None:
        depth = 0
        top_is_array = False
        for m in _TOKEN.finditer(text):
            tok = m.group()
            if tok in "{[":
                if depth == 0:
                    top_is_array = tok == "["
                elif depth == 1 and top_is_array:
                    cache.append(m.start())
                depth += 1
            elif tok in "}]":
                depth -= 1
            elif depth == 1 and (top_is_array or (tok[0] == '"' and _COLON.match(text, m.end()))):
                cache.append(m.start())

    def line(i: int) -> int | None:
        if not cache:
            find()
        if i >= len(cache):
            return None
        return text.count("\n", 0, cache[i]) + 1

    return line


def from_jsonl(data: bytes, kind: str, source: str, *, fractional: bool = False) -> Columns:
    """A JSONL file (one record per query) or a JSON document (list of records or a dict).

    A text whose first value is followed by more values is JSONL; a text that is one JSON
    value spread over several lines is a JSON document.
    """
    text = _decode(data, source)
    literal = kind == "qrels" and not fractional  # grades: see how each was written
    stripped = text.lstrip()
    first_nl = stripped.find("\n")
    multi_line = first_nl >= 0 and _NONBLANK.search(stripped, first_nl) is not None
    if stripped.startswith("[") or (stripped.startswith("{") and multi_line):
        try:
            obj = _loads(text, literal)
        except json.JSONDecodeError as exc:
            jsonl = stripped.startswith("{") and (exc.msg == "Extra data"
                                                  or _first_line_parses(text))
            if not jsonl:
                raise _json_error(exc, source) from None
            obj = None  # JSONL: several values, one per line (an error is on a later line)
        except (ValueError, RecursionError) as exc:
            raise _json_error(exc, source) from None
        if obj is not None and not _looks_like_record(obj):
            try:
                return from_object(obj, kind, source, fractional=fractional)
            except InputError:
                # say where: read again knowing the line of each entry (found only now, as
                # it takes a pass over the whole text); the same error is raised with it
                from_object(obj, kind, source, fractional=fractional, lines=_entry_lines(text))
                raise
        if obj is not None:
            return _records_of_lines([(_first_line_no(text), obj)], kind, source, fractional)
    return _records_of_lines(_jsonl_values(text, source, literal), kind, source, fractional)


def _first_line_no(text: str) -> int:
    return next(no for no, ln in enumerate(text.split("\n"), start=1) if ln.strip())


def _first_line_parses(text: str) -> bool:
    first = text.split("\n")[_first_line_no(text) - 1]
    try:
        _loads(first)
    except (ValueError, RecursionError):
        return False
    return True


def _jsonl_values(text: str, source: str, literal: bool) -> Iterable[tuple[int, Any]]:
    for no, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            yield no, _loads(line, literal)
        except (ValueError, RecursionError) as exc:
            raise _json_error(exc, source, no) from None


def _records_of_lines(values: Iterable[tuple[int, Any]], kind: str, source: str,
                      fractional: bool) -> Columns:
    cols = Columns()
    index = 0
    for no, record in values:
        if isinstance(record, (Mapping, _Pairs)) and not _looks_like_record(record):
            # a {qid: {doc: value}} map on one line
            pairs = record.items() if isinstance(record, Mapping) else record
            for raw_qid, entries in pairs:
                add_entries(cols, ident_text(raw_qid, "query id", source, no), entries, kind,
                            source, no, f"line {no}", fractional)
            continue
        add_record(cols, record, index, kind, source, no, f"line {no}", fractional)
        index += 1
    return cols


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"not valid UTF-8 text ({exc.reason})", source, line) from None
