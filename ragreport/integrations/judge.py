"""Judgments from a model: call the user's judge function on (query, document) pairs.

:func:`judge` calls ``judge_fn(query_text, passage)`` (the user's LLM call, or anything that
returns a grade) for every pair, with a thread pool, a progress bar and a resume file, and
returns qrels whose judgments carry their source (``llm:<name>``) and the time each call
took. The pairs come from a label queue (:func:`ragreport.label_queue`, or its JSONL / CSV
file) or a list of ``(query_id, doc_id)``; the texts from the queue or ``queries=`` /
``docs=``.

A grade is a finite number (an int, a float, or a text holding one, as models answer: ``"2"``,
``" 1.0 "``); anything else, or an exception from ``judge_fn``, stops the work with an error
naming the pair and what came back. The judgments finished before it are in the resume file,
so calling again with the same ``resume=`` continues where it stopped.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..data import Qrels
from ..errors import ConfigError, InputError, RagReportError
from .collect import call_and_record, check_workers, progress_bar

__all__ = ["Judged", "judge"]


@dataclass(frozen=True)
class Judged:
    """What :func:`judge` returns: the judgments as qrels (each with its source), the time
    each call took in milliseconds (resumed judgments keep theirs), and the source."""

    qrels: Qrels
    source: str
    latency_ms: dict[tuple[str, str], float] = field(default_factory=dict)

    @property
    def p95_ms(self) -> float:
        """The 95th percentile of the calls' latency (NaN without calls)."""
        values = list(self.latency_ms.values())
        return float(np.percentile(values, 95)) if values else float("nan")


def judge(judge_fn: Callable[[str, str], Any], pairs: Any, *, queries: Any = None,
          docs: Any = None, name: str | None = None, max_concurrency: int = 1,
          progress: bool | None = None,
          resume: str | os.PathLike[str] | None = None) -> Judged:
    """Judge every pair with ``judge_fn(query_text, passage) -> grade``.

    Parameters
    ----------
    judge_fn : callable
        Called with the query's text and the document's passage; returns the grade.
    pairs : LabelQueue, path or sequence of (query_id, doc_id)
        What to judge: a label queue (its texts are used), its JSONL or CSV file, or pairs.
    queries, docs : mapping or path, optional
        Query and document texts (they win over the queue's).
    name : str, optional
        The judgments' source is ``llm:<name>``; default the function's name.
    max_concurrency : int
        Calls at once (threads; default 1).
    progress : bool, optional
        Show a progress bar (tqdm): True, False, or None (after two seconds).
    resume : path, optional
        A JSONL file each judgment is appended to as it comes; pairs it already holds (from
        the same source) are not judged again.

    Returns
    -------
    Judged

    Examples
    --------
    >>> def overlap(query, passage):  # a stand-in for an LLM call
    ...     return int(bool(set(query.split()) & set(passage.split())))
    >>> got = judge(overlap, [("q1", "d1"), ("q1", "d2")], queries={"q1": "red fox"},
    ...             docs={"d1": "a red car", "d2": "blue sky"}, progress=False)
    >>> got.source, got.qrels.grades.tolist()
    ('llm:overlap', [1.0, 0.0])
    """
    from ..io.judgments import check_source

    if not callable(judge_fn):
        raise ConfigError(f"judge_fn must be callable (query text, passage) -> grade, got "
                          f"{type(judge_fn).__name__}")
    workers = check_workers(max_concurrency)
    source = f"llm:{name if name is not None else _fn_name(judge_fn)}"
    problem = check_source(source)
    if problem is not None:
        raise ConfigError(f"bad judge name: {problem}")
    todo, qtexts, dtexts = _pairs(pairs)
    qtexts |= _texts(queries, "queries")
    dtexts |= _texts(docs, "docs")
    for q, d in todo:
        if q not in qtexts:
            raise ConfigError(f"no text for query {q!r} (give queries=)")
        if d not in dtexts:
            raise ConfigError(f"no passage for document {d!r} (give docs=)")
    done: dict[tuple[str, str], tuple[float, float]] = {}
    if resume is not None and Path(resume).exists():
        done = _read_resume(Path(resume), source)
    rest = [p for p in dict.fromkeys(todo) if p not in done]
    out = open(resume, "a", encoding="utf-8") if resume is not None else None  # noqa: SIM115

    def work(pair: tuple[str, str]) -> tuple[tuple[str, str], float, float]:
        start = time.perf_counter()
        try:
            raw = judge_fn(qtexts[pair[0]], dtexts[pair[1]])
        except Exception as exc:
            raise RagReportError(f"judge_fn raised {type(exc).__name__}: {exc} (query "
                                 f"{pair[0]!r}, document {pair[1]!r})") from exc
        ms = (time.perf_counter() - start) * 1000.0
        return pair, _grade(raw, pair), ms

    def keep(got: tuple[tuple[str, str], float, float]) -> str:
        pair, grade, ms = got
        done[pair] = (grade, ms)
        return json.dumps({"query_id": pair[0], "doc_id": pair[1], "grade": grade,
                           "source": source, "latency_ms": ms}, ensure_ascii=False)

    total = len(set(todo))
    call_and_record(work, rest, workers, keep, out, resume,
                    lambda: progress_bar(progress, total, total - len(rest), source, "pair")
                    if rest else None)
    return _result(todo, done, source)


def _fn_name(fn: Any) -> str:
    own = getattr(fn, "__name__", None)
    return own if isinstance(own, str) and own.isidentifier() and own != "<lambda>" \
        else "judge"


def _grade(raw: Any, pair: tuple[str, str]) -> float:
    """A finite grade from what ``judge_fn`` returned, else an error naming the pair."""
    value: float | None = None
    if isinstance(raw, (int, float, np.integer, np.floating)) and not isinstance(raw, bool):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            value = None
    if value is None or not math.isfinite(value):
        shown = repr(raw) if len(repr(raw)) <= 80 else repr(raw)[:77] + "..."
        raise RagReportError(f"judge_fn returned {shown} for query {pair[0]!r}, document "
                             f"{pair[1]!r}: a grade must be a finite number (or a text "
                             "holding one)")
    return value


def _pairs(pairs: Any) -> tuple[list[tuple[str, str]], dict[str, str], dict[str, str]]:
    """(pairs, query texts, passages) from a label queue, its file, or (query, doc) pairs."""
    from ..analysis.labelqueue import LabelQueue

    if isinstance(pairs, LabelQueue):
        return pairs.pairs(), dict(pairs.query_texts), dict(pairs.doc_texts)
    if isinstance(pairs, (str, os.PathLike)):
        return _queue_file(Path(pairs))
    if not isinstance(pairs, Sequence) or isinstance(pairs, (str, bytes)):
        raise ConfigError(f"pairs must be a label queue, its file, or (query_id, doc_id) "
                          f"pairs, got {type(pairs).__name__}")
    out = []
    for i, p in enumerate(pairs):
        if not (isinstance(p, (tuple, list)) and len(p) == 2
                and all(isinstance(x, str) for x in p)):
            raise ConfigError(f"pair {i} must be (query_id, doc_id) as two texts, got {p!r}")
        out.append((p[0], p[1]))
    return out, {}, {}


def _queue_file(path: Path) -> tuple[list[tuple[str, str]], dict[str, str], dict[str, str]]:
    """The pairs and texts of a label queue file (JSONL or CSV)."""
    if path.suffix.lower() == ".csv":
        import csv

        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
    else:
        rows = []
        for no, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InputError(f"not JSON ({exc.msg})", str(path), no) from None
    pairs, qt, dt = [], {}, {}
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not r.get("query_id") or not r.get("doc_id"):
            raise InputError(f"row {i + 1} has no query_id and doc_id", str(path))
        q, d = str(r["query_id"]), str(r["doc_id"])
        pairs.append((q, d))
        if r.get("query"):
            qt[q] = str(r["query"]).removeprefix("'")  # CSV: a cell made inert
        if r.get("passage"):
            dt[d] = str(r["passage"]).removeprefix("'")
    return pairs, qt, dt


def _texts(given: Any, what: str) -> dict[str, str]:
    if given is None:
        return {}
    from ..io import load_docs, load_queries

    return dict(load_queries(given) if what == "queries" else load_docs(given))


def _read_resume(path: Path, source: str) -> dict[tuple[str, str], tuple[float, float]]:
    """The judgments a resume file holds (those of ``source``; another source is an error)."""
    done = {}
    for no, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            key, grade, ms = (str(r["query_id"]), str(r["doc_id"])), float(r["grade"]), \
                float(r.get("latency_ms", float("nan")))
            src = r["source"]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            raise InputError("not a judgment of a resume file (query_id, doc_id, grade, "
                             "source)", str(path), no) from None
        if src != source:
            raise InputError(f"the resume file holds judgments by {src!r}, not {source!r}: "
                             "give another file (or name=)", str(path), no)
        done[key] = (grade, ms)
    return done


def _result(todo: list[tuple[str, str]], done: dict[tuple[str, str], tuple[float, float]],
            source: str) -> Judged:
    import pyarrow as pa

    pairs = list(dict.fromkeys(todo))
    qrels = Qrels(pa.array([q for q, _ in pairs], pa.string()),
                  pa.array([d for _, d in pairs], pa.string()), source, None,
                  np.array([done[p][0] for p in pairs], dtype=np.float64),
                  sources=pa.array([source] * len(pairs), pa.string()))
    return Judged(qrels, source, {p: done[p][1] for p in pairs})
