"""The measure registry that computes: one :class:`Kernel` per family, every form of it.

:data:`ragreport.measures.FAMILIES` says what a family is (its names, parameters, bounds and
definition); its entry in :data:`KERNELS` says how it is computed and how it behaves under a
change of order:

* ``curve(ctx, m, width)``: the dense (queries, width) values at K = 1..width;
* ``at(ctx, m, k)``: the (queries,) values at one cutoff K from the sparse forms (any K, bit
  for bit column K - 1 of the curve);
* ``scalar(ctx, m)``: the (queries,) values of the whole ranking (no cutoff);
* ``expected_curve`` / ``expected_at``: the expected values over all orders of tied scores
  (``ties="average"``, :mod:`ragreport.core.expected`); a family with neither, unless it is
  order-free (then its plain value is the expectation), has no exact expectation and
  ``ties="average"`` refuses it;
* flags: monotone in its tie orders (the interval over tie orders is exact), order-free,
  and the rest below.

The engine, tie exposure, ``ties="average"``, streaming, per-query shards, the engines and the
explorer all compute through :func:`kernel_of`; adding a measure is one family, one kernel and
their tests. Every form receives a :class:`~ragreport.core.context.Context` (the arrays measures
share, computed once per ranking) and returns float64 arrays; the formulas and degenerate cases
are those of :mod:`ragreport.metrics`.

>>> from ragreport.core.align import align
>>> from ragreport.io import load_qrels, load_run
>>> from ragreport.measures import parse_measure
>>> rk = align(load_qrels({"q": {"a": 1, "c": 1}}), load_run({"q": ["a", "b", "c"]}))
>>> measure_values(rk, parse_measure("P@2"), 1).tolist()
[0.5]
>>> measure_values(rk, parse_measure("AP"), 1).round(4).tolist()   # (1/1 + 2/3) / 2
[0.8333]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import metrics
from ..errors import MeasureError
from ..measures import Measure
from ..metrics import FloatArray
from . import expected as ex
from .context import Context, rbp_persistence
from .ranking import Ranking

__all__ = ["ALWAYS_SCALAR", "AVERAGE_EXACT", "CURVE_FAMILIES", "KERNELS", "MONOTONE",
           "ORDER_FREE", "Kernel", "check_average", "cutoff_values", "expected_curve",
           "expected_values", "kernel_of", "measure_values"]

CurveFn = Callable[[Context, Measure, int], FloatArray]
AtFn = Callable[[Context, Measure, int], FloatArray]
ScalarFn = Callable[[Context, Measure], FloatArray]
ExpectedAtFn = Callable[[Context, Measure, "int | None"], FloatArray]


@dataclass(frozen=True)
class Kernel:
    """How one family (a key of :data:`ragreport.measures.FAMILIES`) is computed.

    Attributes
    ----------
    name : str
        The family.
    curve, at, scalar : callable or None
        Its dense curve ``(ctx, m, width)``, its value at one cutoff ``(ctx, m, k)`` and its
        value of the whole ranking ``(ctx, m)``; None where the family has no such form.
    expected_curve, expected_at : callable or None
        Its expected value over all tie orders at K = 1..width, and at one K (``None``: the
        whole ranking, asked for only when ``max_depth`` cuts through a tied group); None
        when there is none: an order-free family is then its plain value, any other is
        refused by ``ties="average"``.
    monotone : bool
        Never decreases when a document moves ahead of an adjacent one lower in its tie
        orders (by grade; by judged-ness for ``tie_key="judged"``): the interval over tie
        orders is then exactly [pessimistic, optimistic].
    order_free : bool
        A measure of the retrieved set: the same in every order (unless ``max_depth`` cuts
        through a tied group, which decides what is retrieved).
    order_free_uncut : bool
        Without a cutoff, a measure of the retrieved set (Hits, Judged).
    depth_free : bool
        The same in every tie order even when ``max_depth`` cuts through a tied group.
    run_free : bool
        The same whatever documents are listed (NumQ, NumRel).
    tie_key : str
        The key its tie orders sort on: ``"grade"`` or ``"judged"``.
    cut_at_r : bool
        Its cut is each query's number of relevant documents R (R-precision).
    in_every_curve, in_every_scalar : bool
        Computed in every evaluation (its curve at default parameters; its whole-ranking
        value), whatever measures were asked for.
    check : callable or None
        Refuses inputs the family cannot score (``ctx`` -> None or raise), before any value.
    """

    name: str
    curve: CurveFn | None = None
    at: AtFn | None = None
    scalar: ScalarFn | None = None
    expected_curve: CurveFn | None = None
    expected_at: ExpectedAtFn | None = None
    monotone: bool = False
    order_free: bool = False
    order_free_uncut: bool = False
    depth_free: bool = False
    run_free: bool = False
    tie_key: str = "grade"
    cut_at_r: bool = False
    in_every_curve: bool = False
    in_every_scalar: bool = False
    check: Callable[[Context], None] | None = None

    @property
    def average_exact(self) -> bool:
        """Whether ``ties="average"`` computes it exactly."""
        return self.order_free or self.expected_at is not None

    def order_free_at(self, k: int | None) -> bool:
        """Whether the value at cutoff ``k`` (None: the whole ranking) ignores the order."""
        return self.order_free or (k is None and self.order_free_uncut)


def _rbp(c: Context, m: Measure, k: int | None) -> FloatArray:
    """RBP binary at ``m.rel`` (ir_measures' ``RBP(rel=r)``), or graded without ``rel``
    (ir_measures' ``RBP``: each positive grade is the gain, as trectools)."""
    if m.rel is not None:
        return metrics.rbp_at(c.n, *c.ranks(m), rbp_persistence(m), k)
    qi, pos, g = c.gain_ranks(m)  # RBP's gain is "linear": the positive grades
    return metrics.rbp_at(c.n, qi, pos, rbp_persistence(m), k, g)


def _iprec(c: Context, m: Measure) -> FloatArray:
    level = 0.0 if m.recall is None else m.recall
    return metrics.interpolated_precision(c.n, *c.ranks(m), c.n_rel(m), (level,))[:, 0]


#: One entry per family, in :data:`ragreport.measures.FAMILIES` order.
KERNELS: dict[str, Kernel] = {k.name: k for k in (
    Kernel("P",
           curve=lambda c, m, k: metrics.precision_at_k(c.rel(m), k),
           at=lambda c, m, k: metrics.precision_at(c.n, *c.ranks(m), k),
           expected_curve=ex.precision_curve, expected_at=ex.precision_at,
           monotone=True, in_every_curve=True),
    Kernel("R",
           curve=lambda c, m, k: metrics.recall_at_k(c.rel(m), c.n_rel(m), k),
           at=lambda c, m, k: metrics.recall_at(c.n, *c.ranks(m), c.n_rel(m), k),
           expected_curve=ex.recall_curve, expected_at=ex.recall_at,
           monotone=True, in_every_curve=True),
    Kernel("F1",
           curve=lambda c, m, k: metrics.f1_at_k(c.rel(m), c.n_rel(m), k),
           at=lambda c, m, k: metrics.f1_at(c.n, *c.ranks(m), c.n_rel(m), k),
           expected_curve=ex.f1_curve, expected_at=ex.f1_at,
           monotone=True, in_every_curve=True),
    Kernel("HitRate",
           curve=lambda c, m, k: metrics.hit_rate_at_k(c.rel(m), k),
           at=lambda c, m, k: metrics.hit_rate_at(c.n, *c.ranks(m), k),
           expected_curve=ex.hit_rate_curve, expected_at=ex.hit_rate_at,
           monotone=True, in_every_curve=True),
    Kernel("Hits",
           curve=lambda c, m, k: metrics.hits_at_k(c.rel(m), k),
           at=lambda c, m, k: metrics.hits_at(c.n, *c.ranks(m), k),
           scalar=lambda c, m: metrics.hits_at(c.n, *c.ranks(m), None),  # the whole ranking
           expected_curve=ex.hits_curve, expected_at=ex.hits_at,
           monotone=True, order_free_uncut=True),
    Kernel("RR",
           curve=lambda c, m, k: metrics.reciprocal_rank_at_k(c.rel(m), k),
           at=lambda c, m, k: metrics.reciprocal_rank_at(c.n, *c.ranks(m), k),
           scalar=lambda c, m: metrics.reciprocal_rank_at(c.n, *c.ranks(m), None),
           expected_curve=ex.rr_curve, expected_at=ex.rr_at,
           monotone=True, in_every_curve=True, in_every_scalar=True),
    Kernel("nDCG",
           curve=lambda c, m, k: metrics.ndcg_at_k(c.gains(m), c.ideal(m, k), k),
           at=lambda c, m, k: metrics.ndcg_at(c.n, *c.gain_ranks(m), *c.ideal_ranks(m), k),
           scalar=lambda c, m: metrics.ndcg_at(c.n, *c.gain_ranks(m), *c.ideal_ranks(m),
                                               None),
           expected_curve=ex.ndcg_curve, expected_at=ex.ndcg_at,
           monotone=True, in_every_curve=True),
    Kernel("AP",
           curve=lambda c, m, k: metrics.average_precision_at_k(c.rel(m), c.n_rel(m), k),
           at=lambda c, m, k: metrics.average_precision_at(c.n, *c.ranks(m), c.n_rel(m), k),
           scalar=lambda c, m: metrics.average_precision_at(c.n, *c.ranks(m), c.n_rel(m),
                                                            None),
           expected_curve=ex.ap_curve, expected_at=ex.ap_at,
           monotone=True, in_every_curve=True, in_every_scalar=True),
    Kernel("Rprec",
           scalar=lambda c, m: metrics.r_precision_sparse(c.n, *c.ranks(m), c.n_rel(m)),
           expected_at=ex.rprec_at, monotone=True, cut_at_r=True, in_every_scalar=True),
    Kernel("NumRet", scalar=lambda c, m: c.ranking.n_ret.astype(np.float64),
           order_free=True, depth_free=True),
    Kernel("NumRel", scalar=lambda c, m: c.n_rel(m).astype(np.float64),
           order_free=True, depth_free=True, run_free=True),
    Kernel("NumRelRet", scalar=lambda c, m: metrics.hits_at(c.n, *c.ranks(m), None),
           expected_at=ex.hits_at, order_free=True),
    Kernel("NumQ", scalar=lambda c, m: np.ones(c.n),
           order_free=True, depth_free=True, run_free=True),
    Kernel("SetP", scalar=lambda c, m: metrics.set_precision(c.n_rel_ret(m), c.ranking.n_ret),
           expected_at=ex.set_p_at, order_free=True),
    Kernel("SetR", scalar=lambda c, m: metrics.set_recall(c.n_rel_ret(m), c.n_rel(m)),
           expected_at=ex.set_r_at, order_free=True),
    Kernel("SetF",
           scalar=lambda c, m: metrics.set_f(c.n_rel_ret(m), c.ranking.n_ret, c.n_rel(m)),
           expected_at=ex.set_f_at, order_free=True),
    Kernel("Judged",
           curve=lambda c, m, k: metrics.judged_at_k(c.judged(), c.ranking.n_ret, k),
           at=lambda c, m, k: metrics.judged_at(c.n, *c.judged_ranks(), c.ranking.n_ret, k),
           scalar=lambda c, m: metrics.judged_at(c.n, *c.judged_ranks(), c.ranking.n_ret,
                                                 None),
           expected_curve=ex.judged_curve, expected_at=ex.judged_at,
           monotone=True, order_free_uncut=True, tie_key="judged"),
    Kernel("Bpref",
           scalar=lambda c, m: metrics.bpref(c.ranking.ret_grades, c.ranking.ret_offsets,
                                             c.n_rel(m), c.n_nonrel(m), c.level(m)),
           monotone=True),
    Kernel("IPrec", scalar=_iprec, monotone=True),
    Kernel("ERR",
           curve=lambda c, m, k: metrics.err_at_k(c.err_grades(), k),
           at=lambda c, m, k: metrics.err_at(c.n, *c.err_terms(), k),
           scalar=lambda c, m: metrics.err_at(c.n, *c.err_terms(), None),
           monotone=True, check=Context.check_err),
    Kernel("RBP",
           curve=lambda c, m, k: metrics.rbp_at_k(
               c.rel(m) if m.rel is not None else c.gains(m), rbp_persistence(m), k),
           at=_rbp, scalar=lambda c, m: _rbp(c, m, None),
           expected_curve=ex.rbp_curve, expected_at=ex.rbp_at, monotone=True),
    Kernel("R_cap",
           curve=lambda c, m, k: metrics.capped_recall_at_k(c.rel(m), c.n_rel(m), k),
           at=lambda c, m, k: metrics.capped_recall_at(c.n, *c.ranks(m), c.n_rel(m), k),
           expected_curve=ex.r_cap_curve, expected_at=ex.r_cap_at, monotone=True),
)}

#: Families computed for every K = 1..k_max in every evaluation (at default parameters).
CURVE_FAMILIES: tuple[str, ...] = tuple(k.name for k in KERNELS.values() if k.in_every_curve)
#: Families whose whole-ranking value every evaluation holds.
ALWAYS_SCALAR: tuple[str, ...] = tuple(k.name for k in KERNELS.values() if k.in_every_scalar)
#: Families whose interval over all tie orders is [pessimistic, optimistic], exactly.
MONOTONE = frozenset(k.name for k in KERNELS.values() if k.monotone)
#: Families of the retrieved set: the same in every order.
ORDER_FREE = frozenset(k.name for k in KERNELS.values() if k.order_free)
#: Families (with a cutoff where they take one) that ``ties="average"`` computes exactly.
AVERAGE_EXACT = frozenset(k.name for k in KERNELS.values() if k.average_exact)


def kernel_of(m: Measure) -> Kernel:
    """The registry entry of a measure's family."""
    return KERNELS[m.name]


def measure_values(ranking: Ranking, measure: Measure, rel_level: float,
                   context: Context | None = None) -> FloatArray:
    """(queries,) values of one measure on a ranking.

    A measure with a cutoff uses its family's sparse form at that cutoff (any K); one
    without a cutoff the whole-ranking form. ``context`` (a :class:`Context` of this
    ranking) shares its caches between measures.
    """
    ctx = context if context is not None else Context(ranking, float(rel_level))
    kern = kernel_of(measure)
    if measure.cutoff is not None and kern.at is not None:
        return kern.at(ctx, measure, measure.cutoff)
    if measure.cutoff is None and kern.scalar is not None:
        return kern.scalar(ctx, measure)
    raise MeasureError(f"no way to compute {measure} on this ranking")


def check_average(measure: Measure) -> Kernel:
    """The measure's kernel; a :class:`~ragreport.errors.MeasureError` when
    ``ties="average"`` has no exact expectation for it (it is never approximated)."""
    kern = kernel_of(measure)
    if not kern.average_exact:
        raise MeasureError(
            f"ties='average' has no exact expected value for {measure} (it is computed "
            f"exactly for {', '.join(sorted(AVERAGE_EXACT - ORDER_FREE))} and the set "
            f"measures); evaluate {measure} with ties='trec_eval'")
    return kern


def expected_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    """(queries, width) expected value over all tie orders of a family at K = 1..width."""
    kern = check_average(m)
    if kern.expected_curve is None:
        raise MeasureError(f"{m} has no metric-vs-K curve under ties='average'")
    return kern.expected_curve(ex.deep(ctx), m, width)


def expected_values(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    """(queries,) expected value over all tie orders of a measure at cutoff ``k`` (any K;
    ``None``: the whole ranking).

    A measure that ignores the order is its plain value, unless ``max_depth`` cuts through
    a tied group (what is kept then depends on the order) and the measure depends on what
    is kept.
    """
    kern = check_average(m)
    deep = ex.deep(ctx)
    if kern.order_free_at(k) and (deep is ctx or kern.depth_free):
        return measure_values(ctx.ranking, m if k is None else m.at(k), ctx.rel_level, ctx)
    if kern.expected_at is None:
        raise MeasureError(f"no expected value for {m} under ties='average'")
    return kern.expected_at(deep, m, k)


def cutoff_values(ranking: Ranking, measure: Measure, rel_level: float, *,
                  ties: str = "trec_eval") -> FloatArray:
    """(queries,) values of a measure with a cutoff K, from the sparse forms of the ranking.

    Any K (up to 2**53) in memory proportional to the input; equal, bit for bit, to column
    ``K - 1`` of the measure's curve had it been computed that wide. Formulas and the
    degenerate cases are those of :mod:`ragreport.metrics` (a query without a relevant
    document, or with an empty ranking, scores 0).

    >>> from ragreport.core.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> from ragreport.measures import parse_measure
    >>> rk = align(load_qrels({"q": {"a": 1, "c": 1}}), load_run({"q": ["a", "b"]}))
    >>> cutoff_values(rk, parse_measure("P@1000000000000"), 1).tolist()
    [1e-12]
    >>> cutoff_values(rk, parse_measure("nDCG@1000000000000"), 1).round(4).tolist()
    [0.6131]
    """
    kern = kernel_of(measure)
    if measure.cutoff is None or kern.at is None:
        raise MeasureError(f"{measure} has no cutoff")
    ctx = Context(ranking, float(rel_level))
    if ties == "average":  # the expected value over all orders of tied scores
        return expected_values(ctx, measure, measure.cutoff)
    return kern.at(ctx, measure, measure.cutoff)
