"""Tied groups of a ranking: which rows tie, which cuts they straddle, their tie orders.

A *tied group* is a maximal run of equal scores within one query's ranking (contiguous in the
ranking, since it is sorted by score). These are pure transforms of a :class:`Ranking`; what
they mean for a measure is :mod:`ragreport.core.ties` (the interval over all tie orders) and
:mod:`ragreport.core.expected` (the expected value over them, ``ties="average"``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from ..errors import RagReportError
from ..metrics import BoolArray, FloatArray, IntArray
from .ranking import Ranking

__all__ = ["Groups", "attach_uncut", "cut_at", "depth_to_cut", "groups", "has_ties",
           "mixed_rows", "spans", "straddles", "straddles_at_k", "subset", "tie_orders",
           "tied_with_previous"]


# ---- tied groups ---------------------------------------------------------------------------

def tied_with_previous(ranking: Ranking) -> BoolArray:
    """(rows,) bool in ranking order: the row's score equals the previous row's, same query.

    All False for a run without scores. The ranking must be ordered by score (``order=
    "score"``, the default); under ``order="given"`` equal neighbours are not ties.

    >>> from ragreport.core.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"a": 1}, "p": {"a": 1}}),
    ...            load_run({"q": {"a": 2.0, "b": 1.0, "c": 1.0}, "p": {"a": 1.0}}))
    >>> tied_with_previous(rk).tolist()        # p: a; q: a, c, b
    [False, False, False, True]
    """
    cache: dict[str, Any] = ranking.memo
    got = cache.get("tied")
    if got is None:
        n = len(ranking.run_rows)
        got = np.zeros(n, dtype=bool)
        if n > 1 and ranking.run.has_scores:
            s = ranking.run.scores[ranking.run_rows]
            got[1:] = s[1:] == s[:-1]
            got[ranking.ret_offsets[:-1][ranking.n_ret > 0]] = False  # first row of a query
        cache["tied"] = got
    return cast(BoolArray, got)


def has_ties(ranking: Ranking) -> bool:
    """Whether any query of the ranking has two documents with the same score."""
    return bool(tied_with_previous(ranking).any())


@dataclass(frozen=True)
class Groups:
    """Tied groups of a ranking, per row (flat, ranking order)."""

    gid: IntArray     # group of each row
    start: IntArray   # first row of each group
    size: IntArray    # rows of each group
    qi: IntArray      # query of each row
    pos: IntArray     # 0-based rank of each row


def groups(ranking: Ranking) -> Groups:
    cache: dict[str, Any] = ranking.memo
    got = cache.get("groups")
    if got is None:
        tied = tied_with_previous(ranking)
        n = len(tied)
        start = np.flatnonzero(~tied).astype(np.int64)
        size = np.diff(np.append(start, n)).astype(np.int64)
        gid = (np.cumsum(~tied) - 1).astype(np.int64)
        qi = np.repeat(np.arange(ranking.n_queries, dtype=np.int64), ranking.n_ret)
        pos = np.arange(n, dtype=np.int64) - ranking.ret_offsets[:-1][qi]
        got = Groups(gid, start, size, qi, pos)
        cache["groups"] = got
    return cast(Groups, got)


def straddles(ranking: Ranking, k: int | IntArray) -> BoolArray:
    """(queries,) bool: a tied group holds ranks K and K + 1 (it straddles the cut at K).

    ``k`` is one cutoff or one per query (R-precision cuts at each query's R).

    >>> from ragreport.core.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"a": 1}}),
    ...            load_run({"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}}))
    >>> [straddles(rk, k).tolist() for k in (1, 2, 3)]
    [[False], [True], [False]]
    """
    tied = tied_with_previous(ranking)
    kk = np.broadcast_to(np.asarray(k, dtype=np.float64), (ranking.n_queries,))
    ok = (kk >= 1) & (kk < ranking.n_ret)
    out = np.zeros(ranking.n_queries, dtype=bool)
    q = np.flatnonzero(ok)
    out[q] = tied[ranking.ret_offsets[q] + kk[q].astype(np.int64)]
    return out


def mixed_rows(ranking: Ranking, key: str) -> tuple[IntArray, IntArray, FloatArray]:
    """(row, group, ordering key) of every row of a tied group whose keys differ (the only
    rows a tie order can move), in ranking order."""
    if key not in ("grade", "judged"):
        raise RagReportError(f"key must be 'grade' or 'judged', got {key!r}")
    tied = tied_with_previous(ranking)
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    t = np.flatnonzero(tied)  # rows tied with the row before them
    if not len(t):
        return none
    g = ranking.ret_grades

    def keys(at: IntArray) -> FloatArray:
        v = g[at]
        return np.where(np.isnan(v), 0.0, v) if key == "grade" else (~np.isnan(v)).astype(float)

    seeds = t[keys(t) != keys(t - 1)]  # a row whose key differs from its tied neighbour's
    if not len(seeds):
        return none
    starts = np.flatnonzero(~tied)
    groups = np.unique(np.searchsorted(starts, seeds, side="right") - 1)
    first = starts[groups]
    sizes = np.append(starts, len(tied))[groups + 1] - first
    rows = spans(first, sizes)
    return rows, np.repeat(groups, sizes).astype(np.int64), keys(rows)


def spans(starts: IntArray, lens: IntArray) -> IntArray:
    """Every position of the spans ``[start, start + len)``, in order."""
    return np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))


def subset(ranking: Ranking, queries: IntArray) -> Ranking:
    """The ranking of some of its queries only (their rows and judgments, in order)."""
    sizes = ranking.n_ret[queries]
    rows = spans(ranking.ret_offsets[queries], sizes)
    qsizes = np.diff(ranking.qrels_offsets)[queries]
    qrows = spans(ranking.qrels_offsets[queries], qsizes)
    return replace(ranking, query_ids=[ranking.query_ids[i] for i in queries.tolist()],
                   ret_grades=ranking.ret_grades[rows], n_ret=sizes,
                   run_rows=ranking.run_rows[rows],
                   ret_offsets=np.concatenate(([0], np.cumsum(sizes))).astype(np.int64),
                   qrels_rows=ranking.qrels_rows[qrows],
                   qrels_offsets=np.concatenate(([0], np.cumsum(qsizes))).astype(np.int64),
                   qrels_grades=ranking.qrels_grades[qrows])


def straddles_at_k(ranking: Ranking, width: int) -> BoolArray:
    """(queries, width) bool: column K - 1 says whether a tied group straddles the cut at K
    (ranks K and K + 1 tied), for every K = 1..width at once.

    >>> from ragreport.core.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"a": 1}}),
    ...            load_run({"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}}))
    >>> straddles_at_k(rk, 5).astype(int).tolist()
    [[0, 1, 0, 0, 0]]
    """
    w = max(int(width), 1)
    out = np.zeros((ranking.n_queries, w), dtype=bool)
    tied = tied_with_previous(ranking)
    gr = groups(ranking) if tied.any() else None
    if gr is not None:
        at = np.flatnonzero(tied & (gr.pos <= w))  # row at rank K + 1 tied with rank K
        out[gr.qi[at], gr.pos[at] - 1] = True
    return out


def tie_orders(ranking: Ranking, key: str = "grade") -> tuple[Ranking, Ranking]:
    """The pessimistic and the optimistic tie orders of a ranking, as permuted Rankings.

    Within every tied group: ``key="grade"`` puts the lowest grade first (pessimistic) or the
    highest first (optimistic), an unjudged document counting as grade 0 (it stays
    unjudged); ``key="judged"`` puts unjudged documents first (pessimistic) or judged ones
    first. Documents of equal key keep trec_eval's order. Only the rows of groups whose keys
    differ move; a ranking without such a group is returned as it is.

    >>> from ragreport.core.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"a": 2, "b": 1}}),
    ...            load_run({"q": {"a": 1.0, "b": 1.0, "c": 1.0}}))
    >>> low, high = tie_orders(rk)
    >>> rk.ret_grades.tolist(), low.ret_grades.tolist(), high.ret_grades.tolist()
    ([nan, 1.0, 2.0], [nan, 1.0, 2.0], [2.0, 1.0, nan])
    """
    rows, gid, kr = mixed_rows(ranking, key)
    if not len(rows):
        return ranking, ranking
    tied = tied_with_previous(ranking)
    g = ranking.ret_grades

    def permuted(order: IntArray) -> Ranking:
        src = rows[order]
        grades = g.copy()
        grades[rows] = g[src]
        run_rows = ranking.run_rows.copy()
        run_rows[rows] = ranking.run_rows[src]
        out = replace(ranking, ret_grades=grades, run_rows=run_rows)
        out.memo["tied"] = tied  # same scores, same groups
        return out

    return (permuted(np.lexsort((rows, kr, gid))), permuted(np.lexsort((rows, -kr, gid))))


def attach_uncut(cut: Ranking, full: Ranking, depth: int) -> None:
    """Remember, on a ranking cut at ``max_depth``, the same ranking uncut (its tie groups
    are the uncut ranking's; :func:`uncut`)."""
    full.memo["depth"] = int(depth)
    cut.memo["uncut"] = (full, int(depth))


def depth_to_cut(ranking: Ranking) -> int | None:
    """The ``max_depth`` cut still to be made on an uncut ranking (:func:`attach_uncut`)."""
    got = ranking.memo.get("depth")
    return None if got is None else int(got)


def cut_at(ranking: Ranking, depth: int) -> Ranking:
    """The ranking with each query's first ``depth`` rows only (the tie marks kept: a group
    across the cut stays a group)."""
    sizes = np.minimum(ranking.n_ret, int(depth))
    rows = spans(ranking.ret_offsets[:-1], sizes)
    tied = tied_with_previous(ranking)[rows]
    out = replace(ranking, ret_grades=ranking.ret_grades[rows], n_ret=sizes,
                  run_rows=ranking.run_rows[rows],
                  ret_offsets=np.concatenate(([0], np.cumsum(sizes))).astype(np.int64))
    out.memo["tied"] = tied
    return out
