"""Judgments from several sources: one grade per (query, document), by a stated rule.

Qrels may say who judged (a ``source`` column in Parquet, tables and BEIR-style TSV, a
``source`` field in a JSONL record): ``human``, ``llm:<name>``, ``click`` or any other
label. A pair judged by several sources (or more than once) keeps every judgment
(:attr:`ragreport.Qrels.judgments`); the grade used is chosen by :func:`resolve`'s rule:

- ``"human-first"`` (the default): the latest ``human`` judgment, else the latest of all;
- ``"latest"``: the latest judgment, whoever gave it.

"Latest" is the last in input order (a file appended to keeps its history in order). Qrels
without sources keep trec_eval's rule: a pair judged twice is an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..data import IntArray, Qrels
from ..errors import InputError, RagReportError
from .columns import contiguous, pair_keys

__all__ = ["HUMAN", "JUDGMENT_RULES", "check_rule", "check_source", "resolve",
           "source_counts"]

#: The label of people's judgments, preferred by the default rule.
HUMAN = "human"
#: The rules that choose one judgment per (query, document).
JUDGMENT_RULES = ("human-first", "latest")

_BAD_LABEL = re.compile(r"[\x00-\x1f\x7f]")


def check_rule(rule: str) -> str:
    """``rule`` if it is one of :data:`JUDGMENT_RULES`, else a RagReportError."""
    if rule not in JUDGMENT_RULES:
        raise RagReportError(f"judgment rule must be one of {', '.join(JUDGMENT_RULES)}, "
                             f"got {rule!r}")
    return rule


def check_source(label: Any) -> str | None:
    """What is wrong with a source label, or None: a label is a non-empty text without
    control characters or surrounding spaces, and ``llm:`` names its model.

    >>> [check_source(x) for x in ("human", "llm:gpt-4o", "click")]
    [None, None, None]
    >>> check_source("llm:")
    "'llm:' names no model (write llm:<name>)"
    >>> check_source(" human")
    "' human' has spaces around it"
    """
    if not isinstance(label, str):
        return f"a source must be a text label, got {type(label).__name__}"
    if not label:
        return "a source label is empty"
    if _BAD_LABEL.search(label):
        return f"{label!r} holds a control character"
    if label != label.strip():
        return f"{label!r} has spaces around it"
    if label.lower().startswith("llm:") and not label[4:].strip():
        return f"{label!r} names no model (write llm:<name>)"
    return None


def resolve(qrels: Qrels, sources: Sequence[Any] | Any, rule: str = "human-first") -> Qrels:
    """``qrels`` (every judgment, in input order) with one judgment per (query, document)
    chosen by ``rule``; the result keeps every judgment in :attr:`~Qrels.judgments` and the
    source of each kept one in :attr:`~Qrels.sources`.

    >>> import pyarrow as pa
    >>> rows = Qrels(pa.array(["q", "q", "q"]), pa.array(["a", "a", "b"]), "q", None,
    ...              np.array([2.0, 0.0, 1.0]))
    >>> r = resolve(rows, ["human", "llm:x", "llm:x"])
    >>> r.doc_ids.to_pylist(), r.grades.tolist(), r.sources.to_pylist()
    (['a', 'b'], [2.0, 1.0], ['human', 'llm:x'])
    >>> resolve(rows, ["human", "llm:x", "llm:x"], "latest").grades.tolist()
    [0.0, 1.0]
    """
    import pyarrow as pa

    check_rule(rule)
    if not isinstance(sources, (pa.Array, pa.ChunkedArray)):
        sources = list(sources)
        bad = next((i for i, s in enumerate(sources) if s is not None and not isinstance(s, str)),
                   None)
        if bad is not None:
            raise InputError(f"bad source: {check_source(sources[bad])}", qrels.source,
                             **qrels.place(bad))
    labels = sources if isinstance(sources, (pa.Array, pa.ChunkedArray)) \
        else pa.array(sources, pa.string())
    labels = contiguous(labels)
    if len(labels) != len(qrels):
        raise RagReportError(f"{len(labels)} sources for {len(qrels)} judgments")
    _check_labels(qrels, labels)
    keep = _chosen(qrels, labels, rule)
    every = Qrels(qrels.query_ids, qrels.doc_ids, qrels.source, qrels.lines, qrels.grades,
                  sources=labels)
    take = pa.array(keep)
    return Qrels(qrels.query_ids.take(take), qrels.doc_ids.take(take), qrels.source,
                 None if qrels.lines is None else _lines(qrels.lines, keep), qrels.grades[keep],
                 sources=labels.take(take), judgments=every, rule=rule)


def _lines(lines: Any, keep: IntArray) -> Any:
    from ..data import TableRows

    if isinstance(lines, TableRows):
        return np.asarray([int(lines[i]) for i in keep.tolist()], dtype=np.int64)
    return np.asarray(lines)[keep]


def _check_labels(qrels: Qrels, labels: Any) -> None:
    """Every label valid (the first bad one named with its row)."""
    import pyarrow.compute as pc

    nulls = np.flatnonzero(labels.is_null().to_numpy(zero_copy_only=False))
    if len(nulls):
        raise InputError("a judgment has no source (once one judgment has a source, each needs "
                         "one)", qrels.source,
                         **qrels.place(int(nulls[0])))
    for value in pc.unique(labels).to_pylist():
        problem = check_source(value)
        if problem is not None:
            row = int(np.flatnonzero(np.asarray(labels.to_pylist(), dtype=object) == value)[0])
            raise InputError(f"bad source: {problem}", qrels.source, **qrels.place(row))


def _chosen(qrels: Qrels, labels: Any, rule: str) -> IntArray:
    """Row of the judgment kept for each (query, document), in input order."""
    import pyarrow.compute as pc

    keys = pair_keys(qrels.query_ids, qrels.doc_ids)
    human = (pc.equal(labels, HUMAN).to_numpy(zero_copy_only=False).astype(np.int64)
             if rule == "human-first" else np.zeros(len(keys), np.int64))
    rows = np.arange(len(keys))
    order = np.lexsort((rows, human, keys))  # by key, then human last, then row last
    last = np.flatnonzero(np.append(keys[order][1:] != keys[order][:-1], True))
    return np.sort(order[last])


def source_counts(qrels: Qrels) -> dict[str, int]:
    """Judgments used per source (the chosen ones), most first; ``{}`` without sources."""
    import pyarrow.compute as pc

    if qrels.sources is None:
        return {}
    got = pc.value_counts(qrels.sources).to_pylist()
    return dict(sorted(((g["values"], int(g["counts"])) for g in got),
                       key=lambda kv: (-kv[1], kv[0])))
