"""Qrels and runs from Python objects and JSON: dict-of-dicts (pytrec_eval, ranx), ranked lists,
the seed tutorial's list of ``{"query", "retrieved", "relevant"}`` dicts, JSONL records, and
pandas DataFrames (when pandas is installed; it is not a dependency)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError


@dataclass
class Columns:
    """Rows accumulated from objects before they become a Qrels or Run."""

    qids: list[str] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    has_scores: bool = True
    texts: dict[str, str] = field(default_factory=dict)


def _number(value: Any, what: str, source: str, line: int | None, qid: str, doc: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise InputError(f"{what} {value!r} of document {doc!r} (query {qid!r}) "
                                 "is not a number", source, line) from None
        else:
            raise InputError(f"{what} {value!r} of document {doc!r} (query {qid!r}) "
                             "is not a number", source, line)
    f = float(value)
    if not math.isfinite(f):
        raise InputError(f"{what} {value!r} of document {doc!r} (query {qid!r}) "
                         "is not a finite number", source, line)
    return f


def _ident(value: Any, what: str, source: str, line: int | None) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, np.integer)):
        raise InputError(f"{what} must be a string or an integer, got {value!r}", source, line)
    text = str(value)
    if not text.strip():
        raise InputError(f"{what} is empty", source, line)
    return text


def add_entries(cols: Columns, qid: str, entries: Any, kind: str, source: str,
                line: int | None) -> None:
    """Add one query's documents: a {doc: value} map or a ranked list of ids (or of dicts)."""
    what = "score" if kind == "run" else "grade"
    if isinstance(entries, Mapping):
        for doc, value in entries.items():
            d = _ident(doc, "document id", source, line)
            cols.qids.append(qid)
            cols.docs.append(d)
            cols.values.append(_number(value, what, source, line, qid, d))
            cols.lines.append(line or 0)
        return
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Iterable):
        raise InputError(f"documents of query {qid!r} must be a list of ids or a "
                         f"{{doc_id: {what}}} map, got {type(entries).__name__}", source, line)
    items = list(entries)
    for pos, item in enumerate(items):
        if isinstance(item, Mapping):
            d = _ident(item.get("doc_id", item.get("id", item.get("_id"))), "document id",
                       source, line)
            value = item.get("score" if kind == "run" else "grade", item.get("relevance"))
            if value is None:
                value = (len(items) - pos) if kind == "run" else 1
                if kind == "run":
                    cols.has_scores = False
            cols.values.append(_number(value, what, source, line, qid, d))
        else:
            d = _ident(item, "document id", source, line)
            if kind == "run":
                cols.has_scores = False
            cols.values.append(float(len(items) - pos) if kind == "run" else 1.0)
        cols.qids.append(qid)
        cols.docs.append(d)
        cols.lines.append(line or 0)


_RECORD_QID = ("query_id", "qid", "query-id", "id", "_id")


def add_record(cols: Columns, record: Any, index: int, kind: str, source: str,
               line: int | None) -> None:
    """One JSONL record or seed dict: ``query_id``, ``query``, ``retrieved``, ``relevant``."""
    if not isinstance(record, Mapping):
        raise InputError(f"expected an object with 'retrieved' and/or 'relevant', got "
                         f"{type(record).__name__}", source, line)
    raw_qid = next((record[k] for k in _RECORD_QID if k in record), None)
    qid = _ident(raw_qid, "query_id", source, line) if raw_qid is not None else str(index + 1)
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
    add_entries(cols, qid, record[key], kind, source, line)


def from_object(obj: Any, kind: str, source: str) -> Columns:
    """Rows from a dict-of-dicts, dict of lists, list of records, or DataFrame."""
    cols = Columns()
    if _is_dataframe(obj):
        return _from_dataframe(obj, kind, source)
    if isinstance(obj, Mapping):
        for raw_qid, entries in obj.items():
            qid = _ident(raw_qid, "query id", source, None)
            add_entries(cols, qid, entries, kind, source, None)
    elif isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        for i, record in enumerate(obj):
            add_record(cols, record, i, kind, source, None)
    else:
        raise InputError(f"cannot read {kind} from a {type(obj).__name__}; give a path, a "
                         "{query: {doc: value}} dict, a list of records or a DataFrame", source)
    return cols


def from_jsonl(data: bytes, kind: str, source: str) -> Columns:
    """A JSONL file (one record per query) or a JSON document (list of records or a dict)."""
    text = _decode(data, source)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", source, exc.lineno) from None
        cols = from_object(obj, kind, source)
        return cols
    cols = Columns()
    index = 0
    lines = text.split("\n")
    if stripped.startswith("{") and len([ln for ln in lines if ln.strip()]) > 1:
        # a pretty-printed single JSON object spans several lines
        first = next(ln for ln in lines if ln.strip()).strip()
        if first == "{":
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON: {exc.msg}", source, exc.lineno) from None
            return from_object(obj, kind, source)
    for no, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", source,
                             no) from None
        if isinstance(record, Mapping) and not any(
                k in record for k in ("retrieved", "relevant", "results", "ranking", "docs",
                                      "qrels", "relevance", "judgments", "query_id", "qid")):
            # a {qid: {doc: value}} map on one line
            for raw_qid, entries in record.items():
                add_entries(cols, _ident(raw_qid, "query id", source, no), entries, kind,
                            source, no)
            continue
        add_record(cols, record, index, kind, source, no)
        index += 1
    return cols


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"not valid UTF-8 text ({exc.reason})", source, line) from None


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


_DF_QID = ("q_id", "qid", "query_id", "query-id", "query")
_DF_DOC = ("doc_id", "docid", "corpus-id", "corpus_id", "doc", "document")
_DF_SCORE = ("score", "similarity")
_DF_GRADE = ("relevance", "grade", "rel", "label", "score", "judgment")


def _from_dataframe(df: Any, kind: str, source: str) -> Columns:
    names = [str(c) for c in df.columns]

    def pick(options: tuple[str, ...], what: str) -> str:
        for o in options:
            if o in names:
                return o
        raise InputError(f"DataFrame has no {what} column (looked for {', '.join(options)}; "
                         f"it has {', '.join(names)})", source)

    qcol = pick(_DF_QID, "query id")
    dcol = pick(_DF_DOC, "document id")
    vcol = pick(_DF_SCORE if kind == "run" else _DF_GRADE, "score" if kind == "run" else "grade")
    cols = Columns()
    what = "score" if kind == "run" else "grade"
    for i, (q, d, v) in enumerate(zip(df[qcol].tolist(), df[dcol].tolist(), df[vcol].tolist(),
                                      strict=True)):
        qid = _ident(q, "query id", source, None)
        doc = _ident(d, "document id", source, None)
        cols.qids.append(qid)
        cols.docs.append(doc)
        cols.values.append(_number(v, what, source, None, qid, doc))
        cols.lines.append(i + 1)
    return cols
