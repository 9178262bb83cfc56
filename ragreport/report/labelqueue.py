"""Writing a label queue (:class:`ragreport.analysis.labelqueue.LabelQueue`) for the people
who judge: JSON Lines, CSV, or Label Studio's import format (a JSON list of tasks whose
``data`` holds the pair and its texts). Every format carries the same fields per pair, in
the queue's order: ``query_id``, ``doc_id``, ``query`` and ``passage`` (the texts, ``""``
when unknown), ``gain``, ``rank`` (the best rank), ``ranks`` (per run) and ``effects`` (per
measure); CSV flattens the last two into JSON text and keeps a spreadsheet from running a
text cell as a formula (a leading ``'``)."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from typing import Any

from ..analysis.labelqueue import LabelQueue
from ..errors import RagReportError
from ..fileio import write_outputs

__all__ = ["QUEUE_FORMATS", "queue_format", "render_label_queue", "write_label_queue"]

#: The formats a label queue is written in, by name.
QUEUE_FORMATS = ("jsonl", "csv", "label-studio")

_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".json": "label-studio"}


def queue_format(path: str | os.PathLike[str], given: str | None = None) -> str:
    """The format to write: ``given``, else by the path's suffix (``.jsonl``, ``.csv``,
    ``.json`` for Label Studio), else an error naming the choices."""
    if given is not None:
        if given not in QUEUE_FORMATS:
            raise RagReportError(f"format must be one of {', '.join(QUEUE_FORMATS)}, "
                                 f"got {given!r}")
        return given
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in _SUFFIXES:
        raise RagReportError(f"cannot tell the format of {os.fspath(path)!r} from its suffix: "
                             "name it .jsonl, .csv or .json (Label Studio), or give the format")
    return _SUFFIXES[suffix]


def _records(queue: LabelQueue) -> list[dict[str, Any]]:
    return [{"query_id": i.query_id, "doc_id": i.doc_id,
             "query": queue.query_texts.get(i.query_id, ""),
             "passage": queue.doc_texts.get(i.doc_id, ""), "gain": i.gain,
             "rank": i.best_rank, "ranks": i.ranks, "effects": i.effects}
            for i in queue.items]


def render_label_queue(queue: LabelQueue, fmt: str) -> str:
    """The queue as text in ``fmt`` (one of :data:`QUEUE_FORMATS`).

    >>> from ragreport.analysis.labelqueue import LabelItem, LabelQueue
    >>> q = LabelQueue([LabelItem("q1", "x", 0.5, {"P@1": 0.5}, {"run": 1})], ["P@1"],
    ...                ["run"], 1.0, 1, 1, 200, None, {"q1": "what?"}, {})
    >>> print(render_label_queue(q, "csv"), end="")
    query_id,doc_id,query,passage,gain,rank,ranks,effects
    q1,x,what?,,0.5,1,"{""run"": 1}","{""P@1"": 0.5}"
    """
    records = _records(queue)
    if queue_format("", fmt) == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["query_id", "doc_id", "query", "passage", "gain", "rank", "ranks",
                    "effects"])
        for r in records:
            w.writerow([r["query_id"], r["doc_id"], _inert(r["query"]), _inert(r["passage"]),
                        repr(r["gain"]),
                        r["rank"], json.dumps(r["ranks"], ensure_ascii=False),
                        json.dumps(r["effects"], ensure_ascii=False)])
        return out.getvalue()
    return json.dumps([{"data": r} for r in records], ensure_ascii=False, indent=1) + "\n"


def _inert(text: str) -> str:
    """A text cell a spreadsheet will not run as a formula (a leading ``=``, ``+``, ``-``,
    ``@``, tab or carriage return gets a ``'`` before it); the ids are written as they are.

    >>> _inert("=HYPERLINK(1)"), _inert("plain")
    ("'=HYPERLINK(1)", 'plain')
    """
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_label_queue(queue: LabelQueue, path: str | os.PathLike[str],
                      fmt: str | None = None,
                      inputs: Sequence[str | os.PathLike[str]] = ()) -> str:
    """Write ``queue`` to ``path`` (``-``: standard output; a file is replaced whole, never
    half-written, and never one of ``inputs``) in ``fmt`` (default by the suffix, JSON Lines
    on standard output); returns the format written."""
    fmt = queue_format(path, fmt if fmt is not None or os.fspath(path) != "-" else "jsonl")
    write_outputs([(path, render_label_queue(queue, fmt))], inputs)
    return fmt
