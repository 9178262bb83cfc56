"""Tied scores: which cuts they straddle, the interval over all tie orders, and their average.

trec_eval breaks a tie of scores by document id (descending), an order that means nothing: a
constant scorer that happens to list a relevant document's id last scores MRR@10 = 1.0.
A *tied group* is a maximal run of equal scores within one query's ranking (contiguous in
the ranking, since it is sorted by score). This module measures how much the numbers depend
on the order inside those groups.

Straddles
    A tied group *straddles the cut* at K when ranks K and K + 1 are in it: which of its
    documents count for a measure @K depends on the tie order
    (:func:`ragreport.core.tiegroups.straddles`).

Interval over all tie orders
    The *pessimistic* order puts, within every tied group, the lowest grade first (an
    unjudged document counts as grade 0 for this purpose, and stays unjudged); the
    *optimistic* order the highest grade first; ties of grade keep trec_eval's order
    (:func:`ragreport.core.tiegroups.tie_orders`). They are evaluated by the measure registry's
    own forms (:func:`ragreport.core.kernel.measure_values`), never by another implementation of
    a measure. Tied groups of different queries are independent, so the mean over queries
    of the pessimistic values is the smallest mean any combination of tie orders gives, and
    the optimistic one the largest, for every measure that never decreases when a document
    moves ahead of an adjacent one of lower grade: P, R, F1, HitRate, Hits, RR, nDCG (linear
    or exponential gain: rearrangement inequality), AP, Rprec, R_cap, ERR, RBP, Bpref and
    IPrec (``Kernel.monotone``, :data:`ragreport.core.kernel.MONOTONE`, which also holds Judged,
    monotone in its own orders below). For them the interval is
    exact (both ends are reached). Measures of the retrieved set (SetP, SetR, SetF, NumRet,
    NumRel, NumRelRet, NumQ) do not depend on the order (``Kernel.order_free``).
    ``Judged@K`` is about judged vs unjudged documents, not grades: its interval uses its
    own orders (unjudged first / judged first, ``Kernel.tie_key``), also exact.
    Any other family is evaluated on the grade orders and flagged ``exact=False``.

``ties="average"``
    McSherry and Najork (ECIR 2008, "Computing information retrieval performance measures
    efficiently in the presence of tied scores"): the expected value over all orders of
    every tied group (each order equally likely), computed exactly and vectorised by each
    family's ``expected_curve`` and ``expected_at`` forms (:mod:`ragreport.core.expected`,
    dispatched by :func:`ragreport.core.kernel.expected_values`; used by
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

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import RagReportError
from ..measures import Measure, parse_measure
from ..metrics import BoolArray, FloatArray, IntArray
from .context import Context
from .kernel import kernel_of, measure_values
from .ranking import Ranking
from .result import ChunkLevel
from .tiegroups import attach_uncut, cut_at, has_ties, mixed_rows, straddles, subset, tie_orders

if TYPE_CHECKING:
    from ..targets import Target, TargetCheck
    from .result import EvaluationResult

__all__ = [
    "TIES",
    "TieCheck",
    "TieExposure",
    "exposure",
    "tie_checks",
    "uncut",
]

#: Values of ``evaluate(..., ties=...)``.
TIES = ("trec_eval", "average")

def _sub_orders(ranking: Ranking, key: str) -> tuple[IntArray, Ranking, Ranking]:
    """(the queries a tie order can change, their pessimistic and optimistic orders): only
    those queries are evaluated again, whatever the size of the ranking."""
    rows, _, _ = mixed_rows(ranking, key)
    queries = np.unique(np.searchsorted(ranking.ret_offsets, rows, side="right") - 1)
    sub = subset(ranking, queries.astype(np.int64))
    return (queries.astype(np.int64), *tie_orders(sub, key))


def uncut(result: EvaluationResult | ChunkLevel) -> tuple[Ranking, int | None]:
    """(the ranking before the ``max_depth`` cut, the depth), or (the ranking, None) when
    nothing was cut. The uncut ranking is aligned again with the result's conventions (once;
    it is remembered on the result's ranking)."""
    from .align import align

    rk = result.ranking if isinstance(result, ChunkLevel) else result.require_ranking()
    c = result.conventions
    cache: dict[str, Any] = rk.memo
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


def _scored(result: EvaluationResult) -> tuple[bool, BoolArray | None]:
    """(whether the result's ranking is in score order, so equal scores are ties; the
    queries its interval cannot analyse, or None). A document-level result (``doc_map``) is
    listed in its chunk ranking's order, which is a score order when the chunk level's is;
    a query whose chunk ranking has a tie across the chunk level's depth cut is not
    analysed: which documents are listed depends on the tie order."""
    chunk = result.chunk_level
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
    m = parse_measure(measure)
    kern = kernel_of(m)
    scored, unresolved = _scored(result)
    whole = unresolved is None
    rk, depth = uncut(result) if scored else (result.require_ranking(), None)
    value = result.values(m)
    n = len(value)
    level = float(result.conventions.rel_level)
    cut = f"K={m.cutoff}" if m.cutoff is not None else ("K=R" if kern.cut_at_r else "")
    if depth is not None:
        cut = f"{cut}, depth M={depth}" if cut else f"depth M={depth}"
    if not scored or (kern.order_free and depth is None) or not has_ties(rk):
        free = kern.run_free  # the same whatever documents are listed
        return TieExposure(m, cut, 0, np.zeros(n, dtype=bool), _mean(value), _mean(value),
                           _mean(value), value, value, whole or free,
                           None if free else unresolved)
    kk: int | IntArray | None = m.cutoff
    if kern.cut_at_r:
        kk = rk.n_relevant(level if m.rel is None else float(m.rel))
    if depth is not None:  # the depth is one more cut, after the tie order
        kk = depth if kk is None else np.minimum(kk, depth)
    straddling = 0 if kk is None else int(straddles(rk, kk).sum())
    key = kern.tie_key
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
            contexts[(key, i)] = Context(ranking, level)
        if len(queries):
            end[queries] = measure_values(ranking, m, level, contexts[(key, i)])
    dependent = lo != hi if unresolved is None else (lo != hi) & ~unresolved
    exact = whole and (kern.monotone or kern.order_free)
    return TieExposure(m, cut, straddling, dependent, _mean(lo), _mean(hi), _mean(value),
                       lo, hi, exact, unresolved)


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
    from ..present import threshold_text
    from ..targets import decision_flips, shown

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
            elif t.on == "mean" and decision_flips(e.low, e.high, t.op, t.threshold):
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
