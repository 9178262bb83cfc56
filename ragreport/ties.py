"""Tied scores: which cuts they straddle, the interval over all tie orders, and their average.

trec_eval breaks a tie of scores by document id (descending), an order that means nothing: a
constant scorer that happens to list a relevant document's id last scores MRR@10 = 1.0.
A *tied group* is a maximal run of equal scores within one query's ranking (contiguous in
the ranking, since it is sorted by score). This module measures how much the numbers depend
on the order inside those groups.

Straddles
    A tied group *straddles the cut* at K when ranks K and K + 1 are in it: which of its
    documents count for a measure @K depends on the tie order (:func:`straddles`).

Interval over all tie orders
    The *pessimistic* order puts, within every tied group, the lowest grade first (an
    unjudged document counts as grade 0 for this purpose, and stays unjudged); the
    *optimistic* order the highest grade first; ties of grade keep trec_eval's order
    (:func:`tie_orders`). They are evaluated by the engine's own functions
    (:func:`measure_values`), never by another implementation of a measure. Tied groups of
    different queries are independent, so the mean over queries of the pessimistic values is
    the smallest mean any combination of tie orders gives, and the optimistic one the
    largest, for every measure that never decreases when a document moves ahead of an
    adjacent one of lower grade: P, R, F1, HitRate, Hits, RR, nDCG (linear or exponential
    gain: rearrangement inequality), AP, Rprec, R_cap, ERR, RBP, Bpref and IPrec
    (:data:`MONOTONE`). For them the interval is exact (both ends are reached). Measures of
    the retrieved set (SetP, SetR, SetF, NumRet, NumRel, NumRelRet, NumQ) do not depend on
    the order (:data:`ORDER_FREE`). ``Judged@K`` is about judged vs unjudged documents, not
    grades: its interval uses its own orders (unjudged first / judged first), also exact.
    Any other family is evaluated on the grade orders and flagged ``exact=False``.

``ties="average"``
    McSherry and Najork (ECIR 2008, "Computing information retrieval performance measures
    efficiently in the presence of tied scores"): the expected value over all orders of
    every tied group (each order equally likely), computed exactly and vectorised by
    :func:`average_curve` and :func:`average_values` (used by
    ``ragreport.evaluate(..., ties="average")``):

    * measures linear in the per-rank relevance or gain (P, R, F1 = 2 hits / (K + R),
      Hits, Rprec, nDCG, R_cap, RBP, Judged): each rank's relevance (gain, judged flag)
      replaced by its tied group's mean;
    * HitRate and RR: a group lies wholly before or after any other, so what precedes the
      first group holding a relevant document is fixed; within it, the first relevant
      document is at offset j with the hypergeometric probability
      C(n - 1 - j, r - 1) / C(n, r) (n documents, r relevant);
    * AP: sum over ranks t of E[rel_t · hits(t)] / t, where E[rel_t rel_s] is r/n (s = t),
      r(r - 1) / (n(n - 1)) (s before t in the same group) or a product of independent means;
    * measures of the retrieved set are the same in every order.

    Other families (ERR, Bpref, IPrec ...) are refused with a
    :class:`~ragreport.errors.MeasureError` rather than approximated.

With ``max_depth`` M (trec_eval ``-M``) the tied groups are those of the *uncut* ranking:
the depth is one more cut, made after the tie order. A group across rank M straddles the
depth cut (for a measure at K, the cut is at min(K, M); for a measure of the whole ranking,
at M), and every order of the whole group is considered before the top M are kept: which of
its documents are evaluated at all depends on the order. The interval's orders are the same
(the pessimistic order then keeps the lowest grades); each end is exact for the monotone
families and for the set measures, which then depend on the order too (SetP, SetR, SetF,
NumRelRet: more relevant documents kept never lowers them). ``ties="average"`` replaces
each rank's contribution by its expectation over the whole group, then keeps ranks < M.

Document level (``doc_map``): the document ranking lists each document at its best chunk's
rank, with that chunk's score. Documents whose best scores are equal are tied: every order
of them is reached by some order of the tied chunks, so they are analysed like tied chunks
(the interval is over all orders of the tied documents). With ``max_depth`` the document
list is that of the chunk ranking cut in trec_eval's order; when a chunk tie straddles the
depth cut, which documents are listed depends on the order too: such a query is *not
analysed* (``TieExposure.unresolved``; counting every order of the chunks is combinatorial),
the interval is flagged ``exact=False`` and reports show it as not analysed, with a "may
depend on tie order" note on a target on the mean. ``ties="average"`` is not available
with a doc map.

>>> from ragreport import evaluate
>>> r = evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}, ["RR"])
>>> r.mean("RR")                                       # trec_eval: c, b, a
0.3333333333333333
>>> round(evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}, ["RR"],
...                ties="average").mean("RR"), 4)      # (1 + 1/2 + 1/3) / 3
0.6111
>>> e = exposure(r, parse_measure("RR"))
>>> e.low, e.high, e.dependent.tolist()
(0.3333333333333333, 1.0, [True])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .align import Ranking
from .errors import MeasureError, RagReportError
from .measures import Measure, parse_measure
from .metrics import BoolArray, FloatArray, IntArray

if TYPE_CHECKING:
    from .engine import Context
    from .result import EvaluationResult
    from .targets import Target, TargetCheck

__all__ = [
    "AVERAGE_EXACT",
    "MONOTONE",
    "ORDER_FREE",
    "TIES",
    "TieCheck",
    "TieExposure",
    "attach_uncut",
    "average_curve",
    "average_values",
    "check_average",
    "cut_at",
    "depends_on_ties",
    "exposure",
    "has_ties",
    "measure_values",
    "straddles",
    "straddles_at_k",
    "tie_checks",
    "tie_orders",
    "tied_with_previous",
    "uncut",
]

#: Values of ``evaluate(..., ties=...)``.
TIES = ("trec_eval", "average")

#: Families whose value never decreases when a document moves ahead of an adjacent one of
#: lower grade: their interval over all tie orders is [pessimistic, optimistic], exactly.
MONOTONE = frozenset({"P", "R", "F1", "HitRate", "Hits", "RR", "nDCG", "AP", "Rprec",
                      "R_cap", "ERR", "RBP", "Bpref", "IPrec"})
#: Families of the retrieved set: the same in every order.
ORDER_FREE = frozenset({"SetP", "SetR", "SetF", "NumRet", "NumRel", "NumRelRet", "NumQ"})
#: Families (with a cutoff where they take one) that ``ties="average"`` computes exactly.
AVERAGE_EXACT = frozenset({"P", "R", "F1", "HitRate", "Hits", "RR", "nDCG", "AP", "Rprec",
                           "R_cap", "Judged", "RBP"}) | ORDER_FREE


# ---- tied groups ---------------------------------------------------------------------------

def tied_with_previous(ranking: Ranking) -> BoolArray:
    """(rows,) bool in ranking order: the row's score equals the previous row's, same query.

    All False for a run without scores. The ranking must be ordered by score (``order=
    "score"``, the default); under ``order="given"`` equal neighbours are not ties.

    >>> from ragreport.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"a": 1}, "p": {"a": 1}}),
    ...            load_run({"q": {"a": 2.0, "b": 1.0, "c": 1.0}, "p": {"a": 1.0}}))
    >>> tied_with_previous(rk).tolist()        # p: a; q: a, c, b
    [False, False, False, True]
    """
    cache: dict[str, Any] = ranking.__dict__.setdefault("_tie_cache", {})
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
class _Groups:
    """Tied groups of a ranking, per row (flat, ranking order)."""

    gid: IntArray     # group of each row
    start: IntArray   # first row of each group
    size: IntArray    # rows of each group
    qi: IntArray      # query of each row
    pos: IntArray     # 0-based rank of each row


def _groups(ranking: Ranking) -> _Groups:
    cache: dict[str, Any] = ranking.__dict__.setdefault("_tie_cache", {})
    got = cache.get("groups")
    if got is None:
        tied = tied_with_previous(ranking)
        n = len(tied)
        start = np.flatnonzero(~tied).astype(np.int64)
        size = np.diff(np.append(start, n)).astype(np.int64)
        gid = (np.cumsum(~tied) - 1).astype(np.int64)
        qi = np.repeat(np.arange(ranking.n_queries, dtype=np.int64), ranking.n_ret)
        pos = np.arange(n, dtype=np.int64) - ranking.ret_offsets[:-1][qi]
        got = _Groups(gid, start, size, qi, pos)
        cache["groups"] = got
    return cast(_Groups, got)


def straddles(ranking: Ranking, k: int | IntArray) -> BoolArray:
    """(queries,) bool: a tied group holds ranks K and K + 1 (it straddles the cut at K).

    ``k`` is one cutoff or one per query (R-precision cuts at each query's R).

    >>> from ragreport.align import align
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


def _mixed_rows(ranking: Ranking, key: str) -> tuple[IntArray, IntArray, FloatArray]:
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
    rows = _spans(first, sizes)
    return rows, np.repeat(groups, sizes).astype(np.int64), keys(rows)


def _spans(starts: IntArray, lens: IntArray) -> IntArray:
    """Every position of the spans ``[start, start + len)``, in order."""
    return np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))


def _subset(ranking: Ranking, queries: IntArray) -> Ranking:
    """The ranking of some of its queries only (their rows and judgments, in order)."""
    sizes = ranking.n_ret[queries]
    rows = _spans(ranking.ret_offsets[queries], sizes)
    qsizes = np.diff(ranking.qrels_offsets)[queries]
    qrows = _spans(ranking.qrels_offsets[queries], qsizes)
    return replace(ranking, query_ids=[ranking.query_ids[i] for i in queries.tolist()],
                   ret_grades=ranking.ret_grades[rows], n_ret=sizes,
                   run_rows=ranking.run_rows[rows],
                   ret_offsets=np.concatenate(([0], np.cumsum(sizes))).astype(np.int64),
                   qrels_rows=ranking.qrels_rows[qrows],
                   qrels_offsets=np.concatenate(([0], np.cumsum(qsizes))).astype(np.int64),
                   qrels_grades=ranking.qrels_grades[qrows])


def _sub_orders(ranking: Ranking, key: str) -> tuple[IntArray, Ranking, Ranking]:
    """(the queries a tie order can change, their pessimistic and optimistic orders): only
    those queries are evaluated again, whatever the size of the ranking."""
    rows, _, _ = _mixed_rows(ranking, key)
    queries = np.unique(np.searchsorted(ranking.ret_offsets, rows, side="right") - 1)
    sub = _subset(ranking, queries.astype(np.int64))
    return (queries.astype(np.int64), *tie_orders(sub, key))


def straddles_at_k(ranking: Ranking, width: int) -> BoolArray:
    """(queries, width) bool: column K - 1 says whether a tied group straddles the cut at K
    (ranks K and K + 1 tied), for every K = 1..width at once.

    >>> from ragreport.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"a": 1}}),
    ...            load_run({"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}}))
    >>> straddles_at_k(rk, 5).astype(int).tolist()
    [[0, 1, 0, 0, 0]]
    """
    w = max(int(width), 1)
    out = np.zeros((ranking.n_queries, w), dtype=bool)
    tied = tied_with_previous(ranking)
    gr = _groups(ranking) if tied.any() else None
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

    >>> from ragreport.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"a": 2, "b": 1}}),
    ...            load_run({"q": {"a": 1.0, "b": 1.0, "c": 1.0}}))
    >>> low, high = tie_orders(rk)
    >>> rk.ret_grades.tolist(), low.ret_grades.tolist(), high.ret_grades.tolist()
    ([nan, 1.0, 2.0], [nan, 1.0, 2.0], [2.0, 1.0, nan])
    """
    rows, gid, kr = _mixed_rows(ranking, key)
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
        out.__dict__["_tie_cache"] = {"tied": tied}  # same scores, same groups
        return out

    return (permuted(np.lexsort((rows, kr, gid))), permuted(np.lexsort((rows, -kr, gid))))


def attach_uncut(cut: Ranking, full: Ranking, depth: int) -> None:
    """Remember, on a ranking cut at ``max_depth``, the same ranking uncut (its tie groups
    are the uncut ranking's; :func:`uncut`)."""
    full.__dict__.setdefault("_tie_cache", {})["depth"] = int(depth)
    cut.__dict__.setdefault("_tie_cache", {})["uncut"] = (full, int(depth))


def uncut(result: EvaluationResult) -> tuple[Ranking, int | None]:
    """(the ranking before the ``max_depth`` cut, the depth), or (the ranking, None) when
    nothing was cut. The uncut ranking is aligned again with the result's conventions (once;
    it is remembered on the result's ranking)."""
    from .align import align

    rk = result.ranking
    c = result.conventions
    cache: dict[str, Any] = rk.__dict__.setdefault("_tie_cache", {})
    got = cache.get("uncut")
    if got is not None:
        return cast(tuple[Ranking, int], got)
    if c.max_depth is None or c.order != "score" or int(rk.n_ret.max(initial=0)) < c.max_depth:
        return rk, None
    full = align(rk.qrels, rk.run, order="score", complete=c.complete, max_depth=None,
                 rel_level=c.rel_level, no_relevant=c.no_relevant, duplicates=c.duplicates,
                 ignore_identical_ids=c.ignore_identical_ids)
    if full.query_ids != rk.query_ids:
        raise RagReportError("the uncut ranking does not have the evaluated queries")
    attach_uncut(rk, full, c.max_depth)
    return full, c.max_depth


def cut_at(ranking: Ranking, depth: int) -> Ranking:
    """The ranking with each query's first ``depth`` rows only (the tie marks kept: a group
    across the cut stays a group)."""
    sizes = np.minimum(ranking.n_ret, int(depth))
    rows = _spans(ranking.ret_offsets[:-1], sizes)
    tied = tied_with_previous(ranking)[rows]
    out = replace(ranking, ret_grades=ranking.ret_grades[rows], n_ret=sizes,
                  run_rows=ranking.run_rows[rows],
                  ret_offsets=np.concatenate(([0], np.cumsum(sizes))).astype(np.int64))
    out.__dict__["_tie_cache"] = {"tied": tied}
    return out


def _scored(result: EvaluationResult) -> tuple[bool, BoolArray | None]:
    """(whether the result's ranking is in score order, so equal scores are ties; the
    queries its interval cannot analyse, or None). A document-level result (``doc_map``) is
    listed in its chunk ranking's order, which is a score order when the chunk level's is;
    a query whose chunk ranking has a tie across the chunk level's depth cut is not
    analysed: which documents are listed depends on the tie order."""
    chunk = result.__dict__.get("_chunk_level")
    if chunk is None:
        return result.conventions.order == "score", None
    if chunk.conventions.order != "score":
        return False, None
    full, depth = uncut(chunk)
    if depth is None:
        return True, None
    across = straddles(full, depth)
    if not across.any():
        return True, None
    at = dict(zip(chunk.query_ids, across.tolist(), strict=True))
    return True, np.array([at.get(q, False) for q in result.query_ids], dtype=bool)


def measure_values(ranking: Ranking, measure: Measure, rel_level: float,
                   context: Context | None = None) -> FloatArray:
    """(queries,) values of one measure on a ranking, by the engine's own functions.

    A measure with a cutoff uses the engine's sparse form at that cutoff (any K), else its
    dense curve at width K; one without a cutoff the engine's whole-ranking form.
    ``context`` (an ``engine.Context`` of this ranking) shares its caches between measures.
    """
    from . import engine

    ctx = context if context is not None else engine.Context(ranking, float(rel_level))
    name = measure.name
    if measure.cutoff is not None:
        at: dict[str, Any] = engine.AT_K
        if name in at:
            return cast(FloatArray, at[name](ctx, measure, measure.cutoff))
        curves: dict[str, Any] = engine.CURVES
        if name in curves:
            wide = engine.Context(ranking, ctx.rel_level, measure.cutoff)
            return cast(FloatArray, curves[name](wide, measure, measure.cutoff)[:, -1])
    else:
        scalars: dict[str, Any] = engine.SCALARS
        if name in scalars:
            return cast(FloatArray, scalars[name](ctx, measure))
    raise MeasureError(f"no way to compute {measure} on a reordered ranking")


# ---- exposure: the interval over all tie orders ----------------------------------------------

@dataclass(frozen=True)
class TieExposure:
    """How one measure of one run depends on the order of tied scores.

    Attributes
    ----------
    measure : Measure
    cut : str
        The cut examined: ``"K=5"``, ``"K=R"`` (R-precision), or ``""`` (whole ranking).
    straddling : int
        Queries whose ranking has a tied group across the cut (0 without a cut).
    dependent : ndarray of bool
        (queries,) the query's value differs between the pessimistic and optimistic orders
        (analysed queries only).
    low, high : float
        Mean over the pessimistic and over the optimistic tie order: the interval of the
        mean over all tie orders.
    value : float
        The mean as evaluated (trec_eval's order, or the average over orders).
    low_values, high_values : ndarray
        (queries,) the per-query ends.
    exact : bool
        Whether [low, high] is exactly the range over all tie orders (see the module).
    unresolved : ndarray of bool or None
        (queries,) document level under ``max_depth``: the query's chunk ranking has a tie
        across the depth cut, so which documents are listed depends on the tie order; its
        range is not analysed (its ends are those of the listed documents only, and the
        interval is not exact). None when every query is analysed.
    """

    measure: Measure
    cut: str
    straddling: int
    dependent: BoolArray
    low: float
    high: float
    value: float
    low_values: FloatArray
    high_values: FloatArray
    exact: bool = True
    unresolved: BoolArray | None = None

    @property
    def n_dependent(self) -> int:
        """Queries whose value depends on the tie order (among the analysed ones)."""
        return int(self.dependent.sum())

    @property
    def n_unresolved(self) -> int:
        """Queries whose range over tie orders is not analysed (see ``unresolved``)."""
        return 0 if self.unresolved is None else int(self.unresolved.sum())


def _mean(v: FloatArray) -> float:
    return float(v.mean()) if len(v) else 0.0


def exposure(result: EvaluationResult, measure: str | Measure,
             _orders: dict[str, tuple[IntArray, Ranking, Ranking]] | None = None,
             _contexts: dict[tuple[str, int], Context] | None = None) -> TieExposure:
    """The interval over all tie orders of one measure of an evaluated run.

    Nothing depends on ties under ``order="given"`` or without scores.
    """
    from . import engine

    m = parse_measure(measure)
    scored, unresolved = _scored(result)
    whole = unresolved is None
    rk, depth = uncut(result) if scored else (result.ranking, None)
    value = result.values(m)
    n = len(value)
    level = float(result.conventions.rel_level)
    cut = f"K={m.cutoff}" if m.cutoff is not None else ("K=R" if m.name == "Rprec" else "")
    if depth is not None:
        cut = f"{cut}, depth M={depth}" if cut else f"depth M={depth}"
    if not scored or (m.name in ORDER_FREE and depth is None) or not has_ties(rk):
        free = m.name in ("NumQ", "NumRel")  # the same whatever documents are listed
        return TieExposure(m, cut, 0, np.zeros(n, dtype=bool), _mean(value), _mean(value),
                           _mean(value), value, value, whole or free,
                           None if free else unresolved)
    kk: int | IntArray | None = m.cutoff
    if m.name == "Rprec":
        kk = rk.n_relevant(level if m.rel is None else float(m.rel))
    if depth is not None:  # the depth is one more cut, after the tie order
        kk = depth if kk is None else np.minimum(kk, depth)
    straddling = 0 if kk is None else int(straddles(rk, kk).sum())
    key = "judged" if m.name == "Judged" else "grade"
    orders = _orders if _orders is not None else {}
    if key not in orders:
        q_, lo_, hi_ = _sub_orders(rk, key)
        if depth is not None:
            lo_, hi_ = cut_at(lo_, depth), cut_at(hi_, depth)
        orders[key] = (q_, lo_, hi_)
    queries, *sub = orders[key]
    contexts = _contexts if _contexts is not None else {}
    lo, hi = value.copy(), value.copy()  # the other queries: the same in every tie order
    for i, (ranking, end) in enumerate(zip(sub, (lo, hi), strict=True)):
        if (key, i) not in contexts:
            contexts[(key, i)] = engine.Context(ranking, level)
        if len(queries):
            end[queries] = measure_values(ranking, m, level, contexts[(key, i)])
    dependent = lo != hi if unresolved is None else (lo != hi) & ~unresolved
    exact = whole and (m.name in MONOTONE or m.name in ORDER_FREE or m.name == "Judged")
    return TieExposure(m, cut, straddling, dependent, _mean(lo), _mean(hi), _mean(value),
                       lo, hi, exact, unresolved)


def depends_on_ties(low: float, high: float, op: str, threshold: float) -> bool:
    """Whether the target decision differs between the ends of the tie interval, compared as
    :func:`ragreport.targets.passes` compares (on the value as reports show it).

    >>> depends_on_ties(0.84, 0.86, ">=", 0.85), depends_on_ties(0.849996, 0.85, ">=", 0.85)
    (True, False)
    """
    from .targets import passes

    return passes(low, op, threshold) != passes(high, op, threshold)


@dataclass(frozen=True)
class TieCheck:
    """One target measure of one run, seen through its ties (report data; nothing rendered).

    ``note`` is ``"this pass depends on tie order"`` / ``"this failure depends on tie order"``
    when the interval over all tie orders straddles the target's threshold, else ``""``.
    ``dependent_queries`` maps the id of every query whose value depends on the tie order to
    its (pessimistic, optimistic) values. ``unresolved`` counts the queries whose range is
    not analysed (document level, a chunk tie across the ``max_depth`` cut): the interval is
    then unknown, shown as not analysed, and a target on the mean gets the note ``"this
    pass may depend on tie order"`` / ``"this failure may depend on tie order"``.

    Whether the tie-exposure tables of every output show the row is decided here, once
    (:attr:`exposed`).
    """

    run: str
    measure: str
    cut: str
    queries: int
    straddling: int
    dependent: int
    low: float
    high: float
    value: float
    low_text: str
    high_text: str
    exact: bool
    op: str
    threshold: float
    threshold_text: str
    on: str
    passed: bool
    note: str
    dependent_queries: dict[str, tuple[float, float]] = field(default_factory=dict)
    unresolved: int = 0

    @property
    def straddles_threshold(self) -> bool:
        return bool(self.note)

    @property
    def exposed(self) -> bool:
        """Whether the tie-exposure tables show this row (terminal, HTML and Markdown alike):
        some query has a tie across the cut, depends on the tie order, or is not analysed."""
        return bool(self.straddling or self.dependent or self.unresolved)

    @property
    def interval_text(self) -> str:
        """``[low, high]``, or ``"not analysed"`` when some query's range is unknown."""
        if self.unresolved:
            return "not analysed"
        return f"[{self.low_text}, {self.high_text}]"

    @property
    def interval_cell(self) -> str:
        """The interval as a table shows it (marked when approximate)."""
        return self.interval_text + ("" if self.exact or self.unresolved else " (approximate)")

    @property
    def dependent_text(self) -> str:
        """``"3 of 8"`` tie-dependent queries, and how many were not analysed."""
        extra = f", {self.unresolved} not analysed" if self.unresolved else ""
        return f"{self.dependent} of {self.queries}{extra}"

    @property
    def summary_text(self) -> str:
        """Counts and interval in words (plain text: the run name is not in it)."""
        cut = f"{self.straddling} of {self.queries} queries tie across the cut at {self.cut}; " \
            if self.cut else ""
        if self.unresolved:
            return (f"{cut}{self.unresolved} of {self.queries} queries list their documents "
                    "from chunks tied across the max_depth cut, so which documents are "
                    "listed depends on the tie order: their range over tie orders is not "
                    "analysed, and the mean may depend on the tie order" + (
                        f" (of the other queries, {self.dependent} depend on it)"
                        if self.unresolved < self.queries else ""))
        exact = "" if self.exact else " (approximate: the measure is not monotone)"
        return (f"{cut}{self.dependent} of {self.queries} queries depend on the tie order; "
                f"mean over all tie orders in {self.interval_text}{exact}")

    @property
    def message(self) -> str:
        """The warning line (plain text holding the run name: escape it where shown)."""
        return (f"{self.measure} {self.op} {self.threshold_text} (run {self.run!r}): "
                f"{self.note or 'does not depend on tie order'}: {self.summary_text}")


def tie_checks(results: Sequence[EvaluationResult], targets: Sequence[Target],
               checks: Sequence[TargetCheck]) -> list[TieCheck]:
    """Every target measure of every run through its ties: counts, interval, verdict.

    Only the target measures are analysed; each run's two tie orders are built once. A
    target on the confidence interval's lower bound (``on = "ci_lower"``) gets its interval
    of the mean but no verdict (its decision is not on the mean).
    """
    from .present import threshold_text
    from .targets import shown

    out = []
    for r in results:
        orders: dict[str, tuple[IntArray, Ranking, Ranking]] = {}
        contexts: dict[tuple[str, int], Context] = {}
        done: dict[Measure, TieExposure] = {}
        for t in targets:
            e = done.get(t.measure)
            if e is None:
                e = done[t.measure] = exposure(r, t.measure, orders, contexts)
            c = next((c for c in checks if c.target is t and c.run == r.run_name), None)
            passed = bool(c.passed) if c is not None else True
            note = ""
            if t.on == "mean" and e.n_unresolved:  # the interval is not known
                note = ("this pass may depend on tie order" if passed
                        else "this failure may depend on tie order")
            elif t.on == "mean" and depends_on_ties(e.low, e.high, t.op, t.threshold):
                note = ("this pass depends on tie order" if passed
                        else "this failure depends on tie order")
            dep = np.flatnonzero(e.dependent)
            ids = dict(zip([r.query_ids[i] for i in dep.tolist()],
                           zip(e.low_values[dep].tolist(), e.high_values[dep].tolist(),
                               strict=True), strict=True))
            out.append(TieCheck(r.run_name, str(t.measure), e.cut, r.n_queries, e.straddling,
                                e.n_dependent, e.low, e.high, e.value, shown(e.low),
                                shown(e.high), e.exact, t.op, t.threshold,
                                threshold_text(t.threshold), t.on, passed, note, ids,
                                e.n_unresolved))
    return out


# ---- ties="average": the expected value over all tie orders ----------------------------------

def check_average(measure: Measure) -> None:
    """Raise :class:`~ragreport.errors.MeasureError` when ``ties="average"`` has no exact
    expectation for the measure (it is never approximated)."""
    if measure.name not in AVERAGE_EXACT:
        raise MeasureError(
            f"ties='average' has no exact expected value for {measure} (it is computed "
            f"exactly for {', '.join(sorted(AVERAGE_EXACT - ORDER_FREE))} and the set "
            f"measures); evaluate {measure} with ties='trec_eval'")


def _log_factorials(n: int) -> FloatArray:
    return np.array([math.lgamma(x + 1.0) for x in range(n + 1)])


@dataclass(frozen=True)
class _Sparse:
    """Per-row contributions (query, 0-based rank, weight), by query then rank."""

    qi: IntArray
    pos: IntArray
    w: FloatArray


def _depth(ranking: Ranking) -> int | None:
    """The ``max_depth`` cut still to be made on an uncut ranking (:func:`attach_uncut`)."""
    got = ranking.__dict__.get("_tie_cache", {}).get("depth")
    return None if got is None else int(got)


def _rows(ranking: Ranking, w: FloatArray) -> _Sparse:
    """The nonzero contributions, at ranks above the depth cut only (if any)."""
    gr = _groups(ranking)
    depth = _depth(ranking)
    keep = np.flatnonzero((w != 0) if depth is None else (w != 0) & (gr.pos < depth))
    return _Sparse(gr.qi[keep], gr.pos[keep], w[keep])


def _deep(ctx: Context) -> Context:
    """The context to average on: that of the uncut ranking when ``ctx``'s was cut at
    ``max_depth`` (its contributions are then kept above the depth only), else ``ctx``."""
    from .engine import Context as Ctx

    cache: dict[Any, Any] = ctx.ranking.__dict__.get("_tie_cache", {})
    got = cache.get("uncut")
    if got is None:
        return ctx
    key = ("deep", ctx.rel_level, ctx.width)
    if key not in cache:
        cache[key] = Ctx(got[0], ctx.rel_level, ctx.width)
    return cast("Context", cache[key])


def _n_ret(ctx: Context) -> IntArray:
    """Documents retrieved per query, after the depth cut."""
    depth = _depth(ctx.ranking)
    n = ctx.ranking.n_ret
    return n if depth is None else np.minimum(n, depth)


def _relevant(ranking: Ranking, level: float) -> FloatArray:
    with np.errstate(invalid="ignore"):
        return (ranking.ret_grades >= level).astype(np.float64)


def _group_mean(ranking: Ranking, x: FloatArray) -> FloatArray:
    gr = _groups(ranking)
    total = np.bincount(gr.gid, weights=x, minlength=len(gr.start)).astype(np.float64)
    return (total / gr.size)[gr.gid]


def _cached(ctx: Context, key: tuple[Any, ...], make: Any) -> Any:
    cache: dict[tuple[Any, ...], Any] = ctx.ranking.__dict__.setdefault("_tie_cache", {})
    if key not in cache:
        cache[key] = make()
    return cache[key]


def _mean_rel(ctx: Context, m: Measure) -> _Sparse:
    """Each rank's relevance replaced by its tied group's mean (P, R, F1, Hits, Rprec)."""
    lv = ctx.level(m)
    rk = ctx.ranking
    return cast(_Sparse, _cached(ctx, ("rel", lv),
                                 lambda: _rows(rk, _group_mean(rk, _relevant(rk, lv)))))


def _mean_judged(ctx: Context) -> _Sparse:
    rk = ctx.ranking
    return cast(_Sparse, _cached(ctx, ("judged",), lambda: _rows(
        rk, _group_mean(rk, (~np.isnan(rk.ret_grades)).astype(np.float64)))))


def _mean_gain(ctx: Context, m: Measure) -> _Sparse:
    rk = ctx.ranking

    def make() -> _Sparse:
        qi, pos, g = ctx.gain_ranks(m)
        flat = np.zeros(len(rk.run_rows))
        flat[rk.ret_offsets[qi] + pos] = g
        return _rows(rk, _group_mean(rk, flat))

    return cast(_Sparse, _cached(ctx, ("gain", m.gain), make))


@dataclass(frozen=True)
class _First:
    """Per query with a relevant document retrieved: the first tied group holding one."""

    q: IntArray    # the query
    a: IntArray    # 0-based rank where the group starts
    n: IntArray    # its documents
    r: IntArray    # its relevant documents (>= 1)
    lf: FloatArray  # log(x!) for x = 0..max n
    rr: _Sparse    # P(the first relevant document is at this rank) / rank

    def none_in(self, m: IntArray) -> FloatArray:
        """P(none of the group's first m ranks is relevant) (m broadcast against the
        queries, clipped to [0, n]): C(n - r, m) / C(n, m)."""
        extra = (1,) * (np.ndim(m) - self.n.ndim)  # per query: one row of m each
        n, r = self.n.reshape(self.n.shape + extra), self.r.reshape(self.r.shape + extra)
        shape = np.broadcast_shapes(np.shape(m), n.shape)
        n = np.broadcast_to(n, shape)
        free = n - np.broadcast_to(r, shape)
        mm = np.clip(m, 0, n)
        ok = mm <= free
        mm = np.where(ok, mm, 0)
        lf = self.lf
        return np.where(ok, np.exp(lf[free] - lf[free - mm] - lf[n] + lf[n - mm]), 0.0)


def _first_relevant(ctx: Context, m: Measure) -> _First:
    """The first tied group holding a relevant document, per query (HitRate and RR): what
    precedes it is fixed in every order; within it, the first relevant document is at offset
    j with probability C(n - 1 - j, r - 1) / C(n, r) = none_in(j) - none_in(j + 1)."""
    lv = ctx.level(m)
    rk = ctx.ranking

    def make() -> _First:
        gr = _groups(rk)
        qi, pos = ctx.ranks(m)
        q, first = np.unique(qi, return_index=True)
        g = gr.gid[rk.ret_offsets[q] + pos[first]]
        rel = _relevant(rk, lv)
        r = np.bincount(gr.gid, weights=rel, minlength=len(gr.start))[g].astype(np.int64)
        n = gr.size[g]
        lf = _log_factorials(int(n.max()) if len(n) else 1)
        f = _First(q.astype(np.int64), gr.pos[gr.start[g]], n, r, lf,
                   _Sparse(q[:0], q[:0], np.zeros(0)))
        rows = np.repeat(gr.start[g] - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
        j = rows - np.repeat(gr.start[g], n)
        each = _First(q, f.a, np.repeat(n, n), np.repeat(r, n), lf, f.rr)
        p = each.none_in(j) - each.none_in(j + 1)
        depth = _depth(rk)
        if depth is not None:  # the first relevant document is past the depth: RR 0
            above = gr.pos[rows] < depth
            rows, p = rows[above], p[above]
        return replace(f, rr=_Sparse(gr.qi[rows], gr.pos[rows], p / (gr.pos[rows] + 1.0)))

    return cast(_First, _cached(ctx, ("first", lv), make))


def _hit_rate(ctx: Context, m: Measure, ks: IntArray | None) -> FloatArray:
    """E[HitRate@K] = 1 - P(none of the first group's ranks before K is relevant), (queries,
    len(ks)) (``ks`` None: the whole ranking, (queries, 1))."""
    f = _first_relevant(ctx, m)
    width = 1 if ks is None else len(ks)
    out = np.zeros((ctx.n, width))
    depth = _depth(ctx.ranking)
    if depth is not None:  # nothing past the depth counts
        ks = np.minimum(np.array([depth], dtype=np.int64) if ks is None else ks, depth)
    if ks is None:
        out[f.q] = 1.0
    else:
        out[f.q] = 1.0 - f.none_in(ks[None, :] - f.a[:, None])
    return out


def _ap_terms(ctx: Context, m: Measure) -> _Sparse:
    """E[rel_t · relevant in the top t] / t for each rank t (AP's sum, before / R)."""
    lv = ctx.level(m)
    rk = ctx.ranking

    def make() -> _Sparse:
        gr = _groups(rk)
        rel = _relevant(rk, lv)
        r = np.bincount(gr.gid, weights=rel, minlength=len(gr.start)).astype(np.float64)
        n = gr.size.astype(np.float64)
        mean = (r / n)[gr.gid]
        both = np.divide(r * (r - 1), n * (n - 1), out=np.zeros_like(r), where=n > 1)[gr.gid]
        hits = np.concatenate(([0], np.cumsum(rel)))
        start = gr.start[gr.gid]
        before = hits[start] - hits[rk.ret_offsets[gr.qi]]  # relevant before the group
        j = np.arange(len(rel)) - start
        w = (mean * (before + 1.0) + j * both) / (gr.pos + 1.0)
        return _rows(rk, np.where(mean > 0, w, 0.0))

    return cast(_Sparse, _cached(ctx, ("ap", lv), make))


def _rbp_terms(ctx: Context, m: Measure) -> _Sparse:
    """(1 - p) p^(rank - 1) times each rank's mean relevance (RBP(rel=r), binary) or mean
    gain (RBP without rel, graded), as the engine."""
    from .engine import rbp_persistence

    s = _mean_rel(ctx, m) if m.rel is not None else _mean_gain(ctx, m)
    p = rbp_persistence(m)
    return _Sparse(s.qi, s.pos, (1.0 - p) * np.power(p, s.pos.astype(np.float64)) * s.w)


def _sums(ctx: Context, s: _Sparse, k: int | IntArray | None) -> FloatArray:
    """Per-query sums of the contributions at ranks < k (k: one cutoff, per query, None)."""
    if k is None:
        sel: Any = slice(None)
    elif isinstance(k, np.ndarray):
        sel = s.pos < k[s.qi]
    else:
        sel = s.pos < k
    return np.bincount(s.qi[sel], weights=s.w[sel], minlength=ctx.n).astype(np.float64)


def _dense_sums(ctx: Context, s: _Sparse, width: int) -> FloatArray:
    """(queries, width) cumulative sums of the contributions at ranks 1..K."""
    out = np.zeros((ctx.n, width))
    keep = s.pos < width
    out[s.qi[keep], s.pos[keep]] = s.w[keep]
    return np.cumsum(out, axis=1)


def _dense(ctx: Context, s: _Sparse, width: int) -> FloatArray:
    out = np.zeros((ctx.n, width))
    keep = s.pos < width
    out[s.qi[keep], s.pos[keep]] = s.w[keep]
    return out


def average_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    """(queries, width) expected value over all tie orders of a family at K = 1..width."""
    from . import metrics

    check_average(m)
    ctx = _deep(ctx)
    name = m.name
    ks = np.arange(1, width + 1, dtype=np.float64)
    if name in ("P", "R", "F1", "Hits"):
        x = cast(BoolArray, _dense(ctx, _mean_rel(ctx, m), width))  # fractional relevance
        if name == "P":
            return metrics.precision_at_k(x, width)
        if name == "R":
            return metrics.recall_at_k(x, ctx.n_rel(m), width)
        if name == "F1":
            return metrics.f1_at_k(x, ctx.n_rel(m), width)
        return metrics.hits_at_k(x, width)
    if name == "nDCG":
        return metrics.ndcg_at_k(_dense(ctx, _mean_gain(ctx, m), width), ctx.ideal(m, width),
                                 width)
    if name == "HitRate":
        return _hit_rate(ctx, m, np.arange(1, width + 1, dtype=np.int64))
    if name == "RR":
        return _dense_sums(ctx, _first_relevant(ctx, m).rr, width)
    if name == "AP":
        return metrics.safe_div(_dense_sums(ctx, _ap_terms(ctx, m), width),
                                 ctx.n_rel(m)[:, None])
    if name == "R_cap":
        hits = _dense_sums(ctx, _mean_rel(ctx, m), width)
        return metrics.safe_div(hits, np.minimum(ks[None, :], ctx.n_rel(m)[:, None]))
    if name == "Judged":  # judged in the top K / min(K, retrieved)
        return metrics.safe_div(_dense_sums(ctx, _mean_judged(ctx), width),
                                 np.minimum(ks[None, :], _n_ret(ctx)[:, None]))
    if name == "RBP":
        return _dense_sums(ctx, _rbp_terms(ctx, m), width)
    raise MeasureError(f"{m} has no metric-vs-K curve under ties='average'")


def average_values(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    """(queries,) expected value over all tie orders of a measure at cutoff ``k`` (any K;
    ``None``: the whole ranking)."""
    from . import metrics

    check_average(m)
    cut_ctx, ctx = ctx, _deep(ctx)
    name = m.name
    whole = name in ORDER_FREE or (name in ("Hits", "Judged") and k is None)
    if whole and (ctx is cut_ctx or name in ("NumRet", "NumRel", "NumQ")):
        return measure_values(cut_ctx.ranking, m if k is None else m.at(k), ctx.rel_level,
                              cut_ctx)
    if whole:  # cut at max_depth: which documents are kept depends on the tie order
        if name == "Judged":
            return metrics.safe_div(_sums(ctx, _mean_judged(ctx), None), _n_ret(ctx))
        h = _sums(ctx, _mean_rel(ctx, m), None)  # expected relevant retrieved above the depth
        if name in ("Hits", "NumRelRet"):
            return h
        if name == "SetP":
            return metrics.set_precision(h, _n_ret(ctx))
        if name == "SetR":
            return metrics.set_recall(h, ctx.n_rel(m))
        if name == "SetF":  # 2 h / (retrieved + relevant): linear in h
            return metrics.set_f(h, _n_ret(ctx), ctx.n_rel(m))
        raise MeasureError(f"no expected value for {m} under ties='average' with max_depth")
    if name in ("P", "R", "F1", "Hits", "R_cap"):
        h = _sums(ctx, _mean_rel(ctx, m), k)
        if name == "Hits":
            return h
        n_rel = ctx.n_rel(m)
        kk = np.float64(cast(int, k))
        if name == "P":
            return h / kk
        if name == "R":
            return metrics.safe_div(h, n_rel)
        if name == "R_cap":
            return metrics.safe_div(h, np.minimum(kk, n_rel))
        p, r = h / kk, metrics.safe_div(h, n_rel)
        return metrics.safe_div(2.0 * p * r, p + r)
    if name == "Rprec":
        return metrics.safe_div(_sums(ctx, _mean_rel(ctx, m), ctx.n_rel(m)), ctx.n_rel(m))
    if name == "nDCG":
        s = _mean_gain(ctx, m)
        return metrics.ndcg_at(ctx.n, s.qi, s.pos, s.w, *ctx.ideal_ranks(m), k)
    if name == "HitRate":
        ks = None if k is None else np.array([min(k, ctx.ranking.depth + 1)], dtype=np.int64)
        return _hit_rate(ctx, m, ks)[:, 0]
    if name == "RR":
        return _sums(ctx, _first_relevant(ctx, m).rr, k)
    if name == "AP":
        return metrics.safe_div(_sums(ctx, _ap_terms(ctx, m), k), ctx.n_rel(m))
    if name == "Judged":
        return metrics.safe_div(_sums(ctx, _mean_judged(ctx), k),
                                 np.minimum(_n_ret(ctx), cast(int, k)))
    if name == "RBP":
        return _sums(ctx, _rbp_terms(ctx, m), k)
    raise MeasureError(f"no expected value for {m} under ties='average'")
