"""The resume file of :func:`ragreport.collect_run` (``resume=``): one JSON line per query
collected, after a header that states the run's identity (run, k, id_key); a file written
for another run, or damaged, is refused without being changed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from ..errors import InputError
from .retrieved import Collected, kind

__all__ = ["header_line", "open_resume", "read_resume", "record_line", "run_identity"]

# The first line of a resume file starts so; a JSON object follows: the run's identity.
_RESUME_HEADER = "# ragreport resume file "

_IDENTITY = ("run", "k", "id_key")  # the header's keys, in the order written


def run_identity(run: str, k: int | None, id_key: str | None) -> dict[str, Any]:
    """What a resume file must state to be resumed by this call: the run's name and the
    settings that change what is collected (the depth ``k``, the id read, ``id_key``)."""
    return {"run": run, "k": k, "id_key": id_key}


def header_line(identity: Mapping[str, Any]) -> str:
    """The resume file's first line: a ``#`` comment, which every reader of a run skips."""
    return _RESUME_HEADER + json.dumps(dict(identity), ensure_ascii=True) + "\n"


def record_line(got: Collected, text: str, run: str) -> str:
    """One line of the resume file: a JSONL run record :func:`ragreport.load_run` reads
    (which ignores ``run``: the run's name, checked when the collection is resumed)."""
    retrieved: list[Any] = list(got.docs) if got.scores is None else [
        {"doc_id": d, "score": s} for d, s in zip(got.docs, got.scores, strict=True)]
    rec: dict[str, Any] = {"query_id": got.qid, "query": text, "run": run}
    if got.latency_ms is not None:
        rec["latency_ms"] = got.latency_ms
    rec["retrieved"] = retrieved
    return json.dumps(rec, ensure_ascii=True, allow_nan=False)


def open_resume(path: Path, header: str | None) -> TextIO:
    """The resume file opened for appending; ``header`` (a new or empty file) written
    first."""
    try:
        if header is not None:
            with open(path, "a", encoding="ascii") as fh:
                fh.write(header)
        return open(path, "a", encoding="ascii")  # closed by collect_run
    except OSError as exc:
        raise InputError(f"cannot write the resume file: {exc.strerror or exc}",
                         str(path)) from None


_ELSE = ("nothing was read or changed: give another resume= path (or delete the file to "
         "collect into it)")


def _refuse(what: str, path: Path, line: int | None = 1) -> InputError:
    return InputError(f"{what}; {_ELSE}", str(path), line)


def _shown(raw: bytes) -> str:
    """A line of an unknown file for a message: decoded, escaped, shortened."""
    text = repr(raw.decode("utf-8", "replace").rstrip("\r"))
    return text if len(text) <= 60 else text[:50] + "...'"


def _check_header(data: bytes, path: Path, expected: Mapping[str, Any]) -> None:
    """Refuse a file whose first line is not the header of this run with these settings."""
    end = data.find(b"\n")
    first = data if end < 0 else data[:end]
    prefix = _RESUME_HEADER.encode("ascii")
    spelled = header_line(expected).strip()
    if not first.startswith(prefix):
        found = f"its first line is {_shown(first)}"
        try:
            value = json.loads(first)
        except (ValueError, RecursionError):
            value = None
        else:
            found = ("its first line is a run record, not the header (a run written by "
                     "write_run, or by collect_run before resume files stated their "
                     "settings, records neither the run's name nor its k)"
                     if isinstance(value, dict) and "query_id" in value else
                     "its first line is a JSON value, not the header")
        raise _refuse(f"not a resume file of collect_run: {found}; a resume file starts with "
                      f"the line {spelled!r}", path)
    if end < 0:
        raise _refuse("the resume file's header line is unfinished (no newline): this is not "
                      "a file collect_run finished writing", path)
    try:
        stated = json.loads(first[len(prefix):])
    except (ValueError, RecursionError):
        stated = None
    why = _header_problem(stated)
    if why or not isinstance(stated, dict):
        raise _refuse(f"the resume file's header is not one collect_run writes ({why}): "
                      f"expected {spelled!r}", path)
    if stated["run"] != expected["run"]:
        raise _refuse(f"this resume file holds the run {stated['run']!r:.60}, not "
                      f"{expected['run']!r}: resuming would take its rankings as this "
                      "retriever's; use one resume file per run (name= the run it holds to "
                      "resume that one)", path)
    for key in _IDENTITY[1:]:
        if stated[key] != expected[key]:
            mixed = "two depths" if key == "k" else "two kinds of document id"
            raise _refuse(f"this resume file was collected with {_setting(key, stated[key])}, "
                          f"not {_setting(key, expected[key])}: resuming would mix {mixed} in "
                          f"one run; call with {key}={stated[key]!r} to resume it", path)


def _setting(key: str, value: Any) -> str:
    return f"{key}={value!r:.60}" + (" (every result)" if key == "k" and value is None else "")


def _header_problem(stated: Any) -> str:
    """Why a header's JSON is not one collect_run writes ("" when it is)."""
    if not isinstance(stated, dict):
        return "not a JSON object"
    unknown = [key for key in stated if key not in _IDENTITY]
    if unknown:
        return f"unknown setting {unknown[0]!r:.60}"
    missing = [key for key in _IDENTITY if key not in stated]
    if missing:
        return f"no {missing[0]!r}"
    run, k, id_key = (stated[key] for key in _IDENTITY)
    if not isinstance(run, str) or not run.strip():
        return "the run is not a non-empty string"
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        return f"k is {k!r:.60}, not a whole number >= 1 or null"
    if id_key is not None and (not isinstance(id_key, str) or not id_key):
        return f"id_key is {id_key!r:.60}, not a non-empty string or null"
    return ""


def read_resume(path: Path, texts: Mapping[str, str], k: int | None, id_key: str | None,
                 run: str) -> tuple[dict[str, Collected], bool]:
    """The queries a resume file already holds (those of ``texts``), and whether the file
    is new (missing or empty: the header is still to be written).

    Everything is checked before anything is changed: the first line must be the header of
    ``run`` with these ``k`` and ``id_key``, and every complete line a record of this run
    (texts as in ``texts``, at most ``k`` results). Only then is an unfinished last line (no
    newline: the write was cut short) removed from the file.
    """
    from ..io.objects import from_jsonl

    if path.is_dir():
        raise InputError("resume= names a directory, not a resume file; give another "
                         "resume= path (a file, created if missing)", str(path))
    identity = run_identity(run, k, id_key)
    try:
        with open(path, "rb") as fh:
            # the header first: a mistyped path to a big file is refused without reading it
            data = fh.read(max(65536, 4 * len(header_line(identity))))
            if data:
                _check_header(data, path, identity)
                data += fh.read()
    except FileNotFoundError:
        return {}, True
    except OSError as exc:
        raise InputError(f"cannot read the resume file: {exc.strerror or exc}",
                         str(path)) from None
    if not data:
        return {}, True
    complete = data.rfind(b"\n") + 1
    body = data[:complete]
    try:  # as load_run reads it (the header is a comment); errors name the line
        cols = from_jsonl(body, "run", str(path))
    except InputError as exc:
        raise InputError(f"{exc.reason}; the file is unchanged: repair that line, or give "
                         "another resume= path", exc.source, exc.line, row=exc.row) from None
    unscored: set[str] = set()
    for no, raw in enumerate(body.split(b"\n"), start=1):
        if not raw.strip() or raw.lstrip().startswith(b"#"):
            continue
        rec = json.loads(raw)
        if not isinstance(rec, dict) or "query_id" not in rec:
            raise _refuse("not a line of a resume file (a record with query_id, query, "
                          "latency_ms and retrieved)", path, no)
        qid = str(rec["query_id"])
        if "run" in rec and rec["run"] != run:
            raise _refuse(f"this line was collected for the run {rec['run']!r:.60}, not "
                          f"{run!r} (the header's): resuming would take its rankings as this "
                          "retriever's", path, no)
        if qid in texts and rec.get("query") != texts[qid]:
            raise _refuse(f"query {qid!r} was collected with another text "
                          f"({kind(rec.get('query'))}); a resume file is for one set of "
                          "queries", path, no)
        got = rec.get("retrieved")
        if k is not None and isinstance(got, (list, dict)) and len(got) > k:
            raise _refuse(f"query {qid!r} has {len(got)} results, more than the k={k} the "
                          "header states: this is not a file collect_run wrote", path, no)
        if isinstance(got, list) and any(not isinstance(x, dict) or "score" not in x
                                         for x in got):
            unscored.add(qid)
    if complete < len(data):  # proven this run's file: cut the unfinished last line
        try:
            with open(path, "r+b") as fh:
                fh.truncate(complete)
        except OSError as exc:
            raise InputError(f"cannot remove the unfinished last line of the resume file: "
                             f"{exc.strerror or exc}", str(path)) from None
    rows: dict[str, list[int]] = {q: [] for q in cols.empty}
    for i, q in enumerate(cols.qids):
        rows.setdefault(q, []).append(i)
    out: dict[str, Collected] = {}
    for q, idx in rows.items():
        if q not in texts:
            continue
        out[q] = Collected(q, [cols.docs[i] for i in idx],
                            None if q in unscored else [cols.values[i] for i in idx],
                            cols.latency_ms.get(q))
    return out, False
