"""Expected values over all orders of tied scores, family by family (``ties="average"``).

McSherry and Najork (ECIR 2008): the expected value of a measure over all orders of every
tied group (each order equally likely), computed exactly and vectorised. Each function here
is one family's form, referenced by its entry in the measure registry
(:mod:`ragreport.core.kernel`: ``expected_curve`` for K = 1..width, ``expected_at`` for one
cutoff K or, with ``k=None``, the whole ranking); :func:`ragreport.core.kernel.expected_values`
decides when the plain value already is the expectation. Each receives the context of the
ranking to average on (:func:`deep`: the uncut ranking under ``max_depth``, whose
contributions are then kept above the depth only).

* measures linear in the per-rank relevance or gain (P, R, F1 = 2 hits / (K + R), Hits,
  Rprec, nDCG, R_cap, RBP, Judged): each rank's relevance (gain, judged flag) replaced by
  its tied group's mean;
* HitRate and RR: a group lies wholly before or after any other, so what precedes the first
  group holding a relevant document is fixed; within it, the first relevant document is at
  offset j with the hypergeometric probability C(n - 1 - j, r - 1) / C(n, r) (n documents,
  r relevant);
* AP: sum over ranks t of E[rel_t · hits(t)] / t, where E[rel_t rel_s] is r/n (s = t),
  r(r - 1) / (n(n - 1)) (s before t in the same group) or a product of independent means;
* measures of the retrieved set are the same in every order, unless ``max_depth`` cuts
  through a group: then linear in the expected relevant documents kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from .. import metrics
from ..measures import Measure
from ..metrics import BoolArray, FloatArray, IntArray
from .context import Context, rbp_persistence
from .ranking import Ranking
from .tiegroups import depth_to_cut, groups

__all__ = [
    "ap_at", "ap_curve", "deep", "f1_at", "f1_curve", "hit_rate_at", "hit_rate_curve",
    "hits_at", "hits_curve", "judged_at", "judged_curve", "ndcg_at", "ndcg_curve",
    "precision_at", "precision_curve", "r_cap_at", "r_cap_curve", "rbp_at", "rbp_curve",
    "recall_at", "recall_curve", "rprec_at", "rr_at", "rr_curve", "set_f_at", "set_p_at",
    "set_r_at",
]


def _log_factorials(n: int) -> FloatArray:
    return np.array([math.lgamma(x + 1.0) for x in range(n + 1)])


@dataclass(frozen=True)
class _Sparse:
    """Per-row contributions (query, 0-based rank, weight), by query then rank."""

    qi: IntArray
    pos: IntArray
    w: FloatArray


def _rows(ranking: Ranking, w: FloatArray) -> _Sparse:
    """The nonzero contributions, at ranks above the depth cut only (if any)."""
    gr = groups(ranking)
    depth = depth_to_cut(ranking)
    keep = np.flatnonzero((w != 0) if depth is None else (w != 0) & (gr.pos < depth))
    return _Sparse(gr.qi[keep], gr.pos[keep], w[keep])


def deep(ctx: Context) -> Context:
    """The context to average on: that of the uncut ranking when ``ctx``'s was cut at
    ``max_depth`` (its contributions are then kept above the depth only), else ``ctx``."""
    cache: dict[Any, Any] = ctx.ranking.memo
    got = cache.get("uncut")
    if got is None:
        return ctx
    key = ("deep", ctx.rel_level, ctx.width)
    if key not in cache:
        cache[key] = Context(got[0], ctx.rel_level, ctx.width)
    return cast(Context, cache[key])


def _n_ret(ctx: Context) -> IntArray:
    """Documents retrieved per query, after the depth cut."""
    depth = depth_to_cut(ctx.ranking)
    n = ctx.ranking.n_ret
    return n if depth is None else np.minimum(n, depth)


def _relevant(ranking: Ranking, level: float) -> FloatArray:
    with np.errstate(invalid="ignore"):
        return (ranking.ret_grades >= level).astype(np.float64)


def _group_mean(ranking: Ranking, x: FloatArray) -> FloatArray:
    gr = groups(ranking)
    total = np.bincount(gr.gid, weights=x, minlength=len(gr.start)).astype(np.float64)
    return (total / gr.size)[gr.gid]


def _cached(ctx: Context, key: tuple[Any, ...], make: Any) -> Any:
    cache: dict[tuple[Any, ...], Any] = ctx.ranking.memo
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
        gr = groups(rk)
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
        depth = depth_to_cut(rk)
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
    depth = depth_to_cut(ctx.ranking)
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
        gr = groups(rk)
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


# ---- one family's form each: curves (queries, width), values at K (queries,) ----------------

def _ks(width: int) -> FloatArray:
    return np.arange(1, width + 1, dtype=np.float64)


def _rel(ctx: Context, m: Measure, width: int) -> BoolArray:
    """(queries, width) fractional relevance: each rank's tied group's mean."""
    return cast(BoolArray, _dense(ctx, _mean_rel(ctx, m), width))


def precision_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    return metrics.precision_at_k(_rel(ctx, m, width), width)


def recall_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    return metrics.recall_at_k(_rel(ctx, m, width), ctx.n_rel(m), width)


def f1_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    return metrics.f1_at_k(_rel(ctx, m, width), ctx.n_rel(m), width)


def hits_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    return metrics.hits_at_k(_rel(ctx, m, width), width)


def ndcg_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    return metrics.ndcg_at_k(_dense(ctx, _mean_gain(ctx, m), width), ctx.ideal(m, width),
                             width)


def hit_rate_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    return _hit_rate(ctx, m, np.arange(1, width + 1, dtype=np.int64))


def rr_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    return _dense_sums(ctx, _first_relevant(ctx, m).rr, width)


def ap_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    return metrics.safe_div(_dense_sums(ctx, _ap_terms(ctx, m), width), ctx.n_rel(m)[:, None])


def r_cap_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    hits = _dense_sums(ctx, _mean_rel(ctx, m), width)
    return metrics.safe_div(hits, np.minimum(_ks(width)[None, :], ctx.n_rel(m)[:, None]))


def judged_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    """Judged in the top K / min(K, retrieved)."""
    return metrics.safe_div(_dense_sums(ctx, _mean_judged(ctx), width),
                            np.minimum(_ks(width)[None, :], _n_ret(ctx)[:, None]))


def rbp_curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    return _dense_sums(ctx, _rbp_terms(ctx, m), width)


def _hits(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    """Expected relevant documents in the top k (None: above the depth cut)."""
    return _sums(ctx, _mean_rel(ctx, m), k)


def precision_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    return _hits(ctx, m, k) / np.float64(cast(int, k))


def recall_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    return metrics.safe_div(_hits(ctx, m, k), ctx.n_rel(m))


def r_cap_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    n_rel = ctx.n_rel(m)
    return metrics.safe_div(_hits(ctx, m, k), np.minimum(np.float64(cast(int, k)), n_rel))


def f1_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    h = _hits(ctx, m, k)
    p, r = h / np.float64(cast(int, k)), metrics.safe_div(h, ctx.n_rel(m))
    return metrics.safe_div(2.0 * p * r, p + r)


def hits_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    """Hits@K; also NumRelRet and Hits of the whole ranking when ``max_depth`` cuts a group."""
    return _hits(ctx, m, k)


def set_p_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    return metrics.set_precision(_hits(ctx, m, None), _n_ret(ctx))


def set_r_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    return metrics.set_recall(_hits(ctx, m, None), ctx.n_rel(m))


def set_f_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    """2 h / (retrieved + relevant): linear in h."""
    return metrics.set_f(_hits(ctx, m, None), _n_ret(ctx), ctx.n_rel(m))


def rprec_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    return metrics.safe_div(_sums(ctx, _mean_rel(ctx, m), ctx.n_rel(m)), ctx.n_rel(m))


def ndcg_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    s = _mean_gain(ctx, m)
    return metrics.ndcg_at(ctx.n, s.qi, s.pos, s.w, *ctx.ideal_ranks(m), k)


def hit_rate_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    ks = None if k is None else np.array([min(k, ctx.ranking.depth + 1)], dtype=np.int64)
    return _hit_rate(ctx, m, ks)[:, 0]


def rr_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    return _sums(ctx, _first_relevant(ctx, m).rr, k)


def ap_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    return metrics.safe_div(_sums(ctx, _ap_terms(ctx, m), k), ctx.n_rel(m))


def judged_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    """Judged in the top K / min(K, retrieved) (the whole ranking when ``k`` is None)."""
    n_ret = _n_ret(ctx)
    return metrics.safe_div(_sums(ctx, _mean_judged(ctx), k),
                            n_ret if k is None else np.minimum(n_ret, k))


def rbp_at(ctx: Context, m: Measure, k: int | None) -> FloatArray:
    return _sums(ctx, _rbp_terms(ctx, m), k)
