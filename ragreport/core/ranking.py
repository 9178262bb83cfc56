"""A run joined to its qrels and ordered: the :class:`Ranking` every measure reads.

:func:`ragreport.core.align.align` builds it (join, trec_eval's order, the depth cut); this module
holds the type and what it derives from itself (relevant ranks, gains, ideal gains, dense
forms at a width), in sparse (ragged) form.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Qrels, Run
from ..errors import RagReportError

__all__ = ["Counts", "QueryIndexed", "Ranking", "StoredRanks", "position"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class QueryIndexed:
    """The per-query index both :class:`Ranking` and :class:`StoredRanks` answer from their
    ``query_ids``, ``n_ret`` and ``memo``."""

    query_ids: list[str]
    n_ret: IntArray
    memo: dict[Any, Any]

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def depth(self) -> int:
        """Length of the deepest ranking (at least 1)."""
        return max(int(self.n_ret.max()) if len(self.n_ret) else 0, 1)

    def query_index(self, qid: str) -> int:
        """Position of a query id among the evaluated queries."""
        i = position(self.query_ids, self.memo, qid)
        if i is None:
            raise RagReportError(f"query {qid!r} was not evaluated")
        return i


def position(query_ids: list[str], memo: dict[Any, Any], qid: str) -> int | None:
    """Position of ``qid`` in ``query_ids`` (None when absent), from an index built once and
    kept in ``memo`` under ``"index"``."""
    index: dict[str, int] | None = memo.get("index")
    if index is None:
        index = memo["index"] = {q: i for i, q in enumerate(query_ids)}
    return index.get(qid)


@dataclass(frozen=True)
class Counts:
    """How the inputs met: which queries were evaluated and what was dropped."""

    evaluated: int
    run_only: int
    qrels_only: int
    no_relevant: int
    empty_retrievals: int
    duplicates_dropped: int
    skipped_no_relevant: int
    run_queries: int
    qrels_queries: int
    identical_ids_dropped: int = 0
    """Retrieved documents of evaluated queries whose id equals their query's id, dropped
    before ranking (``ignore_identical_ids=True``, BEIR/MTEB); 0 when the option is off."""


@dataclass(frozen=True, eq=False)
class Ranking(QueryIndexed):
    """A run ordered per query and joined to the qrels, kept in sparse (ragged) form.

    ``ret_grades[ret_offsets[q] + i]`` is the grade of the document at rank ``i + 1`` of query
    ``q`` (NaN when it is unjudged); query ``q`` retrieved ``n_ret[q]`` documents. Memory is
    proportional to the input: nothing is sized by the deepest ranking times the number of
    queries unless asked for with a width (:meth:`relevance`, :meth:`gains`). The sparse
    accessors give (query, 0-based rank) pairs in ranking order (ties were broken before:
    score descending, then document id descending); an empty ranking contributes no pair.

    >>> from ragreport.core.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"a": {"x": 2, "z": 1}, "b": {"x": 1}}),
    ...            load_run({"a": ["y", "x"], "b": ["x"]}))
    >>> rk.ret_grades.tolist(), rk.n_ret.tolist()
    ([nan, 2.0, 1.0], [2, 1])
    >>> [p.tolist() for p in rk.relevant_ranks(2)]
    [[0], [1]]
    >>> [p.tolist() for p in rk.ideal_ranks("exp")]
    [[0, 0, 1], [0, 1, 0], [3.0, 1.0, 1.0]]
    >>> rk.relevance(1, width=3).astype(int).tolist()
    [[0, 1, 0], [1, 0, 0]]
    """

    query_ids: list[str]
    ret_grades: FloatArray
    n_ret: IntArray
    run_rows: IntArray
    ret_offsets: IntArray
    qrels_rows: IntArray
    qrels_offsets: IntArray
    qrels_grades: FloatArray
    counts: Counts
    run: Run
    qrels: Qrels
    run_only_ids: list[str]
    qrels_only_ids: list[str]
    #: Arrays derived from this ranking once and kept (the query index, its tied groups,
    #: the same ranking before its ``max_depth`` cut: :mod:`ragreport.core.tiegroups`). Not
    #: copied by ``dataclasses.replace``: a new ranking derives its own.
    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def _positions(self) -> tuple[IntArray, IntArray]:
        """(query, 0-based rank) of every ranked row, in ranking order."""
        qi = np.repeat(np.arange(self.n_queries), self.n_ret)
        return qi, np.arange(len(qi)) - self.ret_offsets[:-1][qi]

    def _dense(self, flat: npt.NDArray[Any], width: int, fill: Any) -> npt.NDArray[Any]:
        out = np.full((self.n_queries, width), fill, dtype=flat.dtype)
        qi, pos = self._positions()
        keep = pos < width
        out[qi[keep], pos[keep]] = flat[keep]
        return out

    def n_relevant(self, rel_level: float) -> IntArray:
        """Relevant documents judged per query (grade >= rel_level)."""
        qidx = np.repeat(np.arange(self.n_queries), np.diff(self.qrels_offsets))
        w = (self.qrels_grades >= rel_level).astype(np.float64)
        return np.bincount(qidx, weights=w, minlength=self.n_queries).astype(np.int64)

    def relevant_ranks(self, rel_level: float) -> tuple[IntArray, IntArray]:
        """(query, 0-based rank) of every relevant retrieved document, by query then rank."""
        with np.errstate(invalid="ignore"):
            rows = np.flatnonzero(self.ret_grades >= rel_level)
        qi = (np.searchsorted(self.ret_offsets, rows, side="right") - 1).astype(np.int64)
        return qi, rows - self.ret_offsets[qi]

    def judged_counts(self) -> IntArray:
        """Judgments per query (any grade)."""
        return np.diff(self.qrels_offsets)

    @property
    def id_order(self) -> str:
        """How the queries are listed: ``"numeric"`` when every query id of the run and the
        qrels is a number of at most 18 digits (as :func:`align` lists them), else
        ``"bytes"`` (byte order)."""
        got: str | None = self.memo.get("id_order")
        if got is None:
            got = self.memo["id_order"] = self._id_order()
        return got

    def _id_order(self) -> str:
        import pyarrow as pa
        import pyarrow.compute as pc

        ids = [*self.query_ids, *self.run_only_ids, *self.qrels_only_ids]
        if not all(1 <= len(q) <= 18 and q.isascii() and q.isdigit() for q in ids):
            return "bytes"
        for arr in (self.qrels.query_ids, self.run.query_ids,
                    pa.array(list(self.run.empty_queries), pa.string())):
            if len(arr) and not pc.all(pc.match_substring_regex(
                    pc.unique(arr), r"^[0-9]{1,18}$")).as_py():
                return "bytes"
        return "numeric"

    def with_judgments(self, qpos: IntArray, doc_ids: Any, grades: FloatArray, rows: IntArray,
                       rel_level: float, source: str | list[str] | None = None) -> Ranking:
        """This ranking with judgments added, without aligning the run again: judgment ``j``
        grades document ``doc_ids[j]`` (a pyarrow string array) of the query at position
        ``qpos[j]`` at ``grades[j]``; ``rows[j]`` is its ranked row (an index into
        :attr:`ret_grades`) when the query's ranking holds it, else -1. The pairs must be
        unjudged here (a ranked one already judged is an error). The qrels gain the
        judgments at their end (with ``source``, one label or one per judgment, when given:
        the qrels' rows without one are then ``qrels``); the counts follow (queries without
        a relevant document).

        >>> import pyarrow as pa
        >>> from ragreport.core.align import align
        >>> from ragreport.io import load_qrels, load_run
        >>> rk = align(load_qrels({"a": {"x": 1}}), load_run({"a": ["y", "x"]}))
        >>> more = rk.with_judgments(np.array([0]), pa.array(["y"]), np.array([2.0]),
        ...                          np.array([0]), 1)
        >>> more.ret_grades.tolist(), more.qrels_grades.tolist()
        ([2.0, 1.0], [2.0, 1.0])
        """
        import pyarrow as pa

        from ..io.columns import contiguous

        qpos = np.asarray(qpos, dtype=np.int64)
        grades = np.asarray(grades, dtype=np.float64)
        rows = np.asarray(rows, dtype=np.int64)
        ret = self.ret_grades.copy()
        at = rows[rows >= 0]
        if (len(at) and not np.isnan(ret[at]).all()) \
                or self._judged_already(qpos[rows < 0], doc_ids, rows < 0):
            raise RagReportError("with_judgments adds judgments to unjudged documents only")
        ret[at] = grades[rows >= 0]
        n_old = len(self.qrels)
        qids = pa.array(self.query_ids, pa.string()).take(pa.array(qpos))
        old_src = self.qrels.sources
        sources = None
        if source is not None or old_src is not None:
            base = contiguous(old_src) if old_src is not None \
                else pa.array(["qrels"] * n_old, pa.string())
            added = [source or "qrels"] * len(qpos) if source is None or isinstance(source, str) \
                else list(source)
            sources = pa.concat_arrays([base.cast(pa.string()), pa.array(added, pa.string())])
        qrels = Qrels(
            pa.concat_arrays([contiguous(self.qrels.query_ids).cast(pa.string()), qids]),
            pa.concat_arrays([contiguous(self.qrels.doc_ids).cast(pa.string()),
                              contiguous(doc_ids).cast(pa.string())]),
            self.qrels.source, None, np.concatenate([self.qrels.grades, grades]),
            sources=sources, rule=self.qrels.rule)
        # each query's judgments: by query, best grade first (as the alignment lists them)
        q_all = np.concatenate([np.repeat(np.arange(self.n_queries),
                                          np.diff(self.qrels_offsets)), qpos])
        r_all = np.concatenate([self.qrels_rows, n_old + np.arange(len(qpos))])
        g_all = np.concatenate([self.qrels_grades, grades])
        perm = np.lexsort((-g_all, q_all))
        sizes = np.bincount(q_all, minlength=self.n_queries)
        out = replace(self, ret_grades=ret, qrels_rows=r_all[perm].astype(np.int64),
                      qrels_offsets=np.concatenate(([0], np.cumsum(sizes))).astype(np.int64),
                      qrels_grades=g_all[perm], qrels=qrels)
        no_rel = int((out.n_relevant(rel_level) == 0).sum())
        return replace(out, counts=replace(self.counts, no_relevant=no_rel))

    def _judged_already(self, qpos: IntArray, doc_ids: Any, where: Any) -> bool:
        """Whether a pair (the query at ``qpos[j]``, the ``j``-th of ``doc_ids[where]``) has
        a judgment here."""
        import pyarrow as pa

        from ..io.columns import contiguous, pair_keys

        if not len(qpos):
            return False
        added = contiguous(doc_ids).filter(pa.array(np.asarray(where, dtype=bool)))
        qids = pa.array(self.query_ids, pa.string())
        q_old = qids.take(pa.array(np.repeat(np.arange(self.n_queries),
                                             np.diff(self.qrels_offsets))))
        d_old = contiguous(self.qrels.doc_ids).take(pa.array(self.qrels_rows))
        keys = pair_keys(pa.chunked_array([q_old, qids.take(pa.array(qpos))]),
                         pa.chunked_array([d_old.cast(pa.string()), added.cast(pa.string())]))
        n_old = len(self.qrels_rows)
        return bool(np.isin(keys[n_old:], keys[:n_old]).any())

    def judged_ranks(self) -> tuple[IntArray, IntArray]:
        """(query, 0-based rank) of every retrieved document that has a judgment (any grade,
        negative ones too), by query then rank."""
        rows = np.flatnonzero(~np.isnan(self.ret_grades))
        qi = (np.searchsorted(self.ret_offsets, rows, side="right") - 1).astype(np.int64)
        return qi, rows - self.ret_offsets[qi]

    def relevance(self, rel_level: float, width: int | None = None) -> BoolArray:
        """(queries, width) bool: is the document at each rank relevant (default width: the
        deepest ranking)."""
        qi, pos = self.relevant_ranks(rel_level)
        w = self.depth if width is None else max(int(width), 1)
        out = np.zeros((self.n_queries, w), dtype=bool)
        keep = pos < w
        out[qi[keep], pos[keep]] = True
        return out

    def gain_shift(self, gain: str) -> FloatArray:
        """Per-query power-of-two scale of the gains (see :func:`ragreport.metrics.gain_of`)."""
        from ..metrics import gain_shift

        return gain_shift(self.qrels_grades, self.qrels_offsets, gain)

    def gain_ranks(self, gain: str) -> tuple[IntArray, IntArray, FloatArray]:
        """(query, 0-based rank, gain) of every retrieved document with a non-zero gain."""
        from ..metrics import gain_of

        with np.errstate(invalid="ignore"):
            rows = np.flatnonzero(self.ret_grades > 0)
        qi = (np.searchsorted(self.ret_offsets, rows, side="right") - 1).astype(np.int64)
        g = gain_of(self.ret_grades[rows], self.gain_shift(gain)[qi], gain)
        return qi, rows - self.ret_offsets[qi], g

    def gains(self, gain: str, width: int | None = None) -> FloatArray:
        """(queries, width) gains by rank: the positive grades (linear) or 2^grade - 1 (exp)
        scaled per query as :meth:`gain_shift` says, else 0 (default width: the deepest
        ranking)."""
        qi, pos, g = self.gain_ranks(gain)
        w = self.depth if width is None else max(int(width), 1)
        out = np.zeros((self.n_queries, w))
        keep = pos < w
        out[qi[keep], pos[keep]] = g[keep]
        return out

    def ideal_ranks(self, gain: str) -> tuple[IntArray, IntArray, FloatArray]:
        """(query, 0-based ideal rank, gain) of every judged document with a positive grade:
        each query's judged gains best first."""
        sizes = np.diff(self.qrels_offsets)
        qidx = np.repeat(np.arange(self.n_queries), sizes)
        pos = np.arange(len(self.qrels_grades)) - np.repeat(self.qrels_offsets[:-1], sizes)
        keep = np.flatnonzero(self.qrels_grades > 0)
        qi = qidx[keep].astype(np.int64)
        from ..metrics import gain_of

        g = gain_of(self.qrels_grades[keep], self.gain_shift(gain)[qi], gain)
        return qi, pos[keep].astype(np.int64), g

    def ideal(self, gain: str, k: int | None = None) -> FloatArray:
        """(queries, k) judged gains best first, zero-padded (all of them when k is None)."""
        sizes = np.diff(self.qrels_offsets)
        width = int(sizes.max()) if len(sizes) and k is None else (k or 0)
        width = max(width, 1)
        out = np.zeros((self.n_queries, width))
        qi, pos, g = self.ideal_ranks(gain)
        keep = pos < width
        out[qi[keep], pos[keep]] = g[keep]
        return out


@dataclass(frozen=True, eq=False)
class StoredRanks(QueryIndexed):
    """What a result read from per-query tables keeps of its rankings: per query, the
    documents retrieved, the relevant ones (at the evaluation's level) and the judged ones,
    their ranks, and the counts and examples of the alignment; no documents, scores or
    grades (:attr:`ragreport.core.result.EvaluationResult.has_rankings` is then False).

    It answers the part of :class:`Ranking`'s interface that needs no document: the query
    index, ``n_ret``, ``n_relevant`` and ``relevant_ranks`` (at ``level`` only),
    ``judged_ranks``, ``judged_counts``, ``depth``, ``counts``, the run-only and
    qrels-only ids and ``id_order``.
    """

    query_ids: list[str]
    n_ret: IntArray
    n_rel: IntArray
    judged: IntArray
    level: float
    counts: Counts
    run_only_ids: list[str]
    qrels_only_ids: list[str]
    id_order: str
    rel_ranks: tuple[IntArray, IntArray]
    stored_judged_ranks: tuple[IntArray, IntArray]
    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def _at_level(self, rel_level: float) -> None:
        if float(rel_level) != self.level:
            raise RagReportError("per-query results hold the relevant documents at the "
                                 f"evaluation's level {self.level:g} only")

    def n_relevant(self, rel_level: float) -> IntArray:
        self._at_level(rel_level)
        return self.n_rel

    def relevant_ranks(self, rel_level: float) -> tuple[IntArray, IntArray]:
        """(query, 0-based rank) of every relevant retrieved document (stored)."""
        self._at_level(rel_level)
        return self.rel_ranks

    def judged_ranks(self) -> tuple[IntArray, IntArray]:
        """(query, 0-based rank) of every judged retrieved document (stored)."""
        return self.stored_judged_ranks

    def judged_counts(self) -> IntArray:
        """Judgments per query (stored)."""
        return self.judged
