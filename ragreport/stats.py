"""Confidence intervals and paired significance tests over queries (numpy; scipy for t).

- :func:`bootstrap_ci`: percentile bootstrap of the mean over queries, for many columns at
  once (every measure, or every K of a curve), vectorised as weight-matrix products
  (multinomial counts below 1,000 queries, Poisson(1) weights from there on);
  :func:`bootstrap_cis` does several blocks of columns with shared resamples, optionally
  in worker processes (:mod:`ragreport.parallel`).
- :func:`paired_randomization_test`: two-sided sign-flip test on per-query deltas (exact
  enumeration when it is small enough, else Monte Carlo with a fixed seed), as
  ``scipy.stats.permutation_test(..., permutation_type="samples")`` computes it.
- :func:`paired_t_test`: Student's paired t-test (``scipy.stats.ttest_rel``), with the t
  distribution from ``scipy.special`` (imported when a test is computed, not with the
  module).
- :func:`holm`: Holm's step-down correction of several p-values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .errors import RagReportError
from .parallel import map_with

if TYPE_CHECKING:
    from .parallel import Mapper

__all__ = [
    "BootstrapCI",
    "PairedTest",
    "bootstrap_ci",
    "bootstrap_cis",
    "holm",
    "paired_randomization_pvalues",
    "paired_randomization_test",
    "paired_t_test",
    "student_t_sf",
]

FloatArray = npt.NDArray[np.float64]
_CHUNK_CELLS = 4_000_000  # resamples x queries per weight block (~32 MB of float64)
#: Weights turned into float64 at a time (16 MB). Smaller tiles stay in cache, but each
#: is a BLAS call, and a BLAS with two threads on a busy machine spins at every call:
#: measured on 40 blocks of 40 x 100,000 resamples, 2**17 cells cost 2.8 s of CPU with
#: one BLAS thread and 31 s with two, 2**21 cells 2.3 s and 6.4 s.
_TILE_CELLS = 1 << 21
#: From this many queries on, the bootstrap draws Poisson(1) weights (see :func:`bootstrap_ci`).
POISSON_MIN_QUERIES = 1_000


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap interval of the mean, one entry per column."""

    mean: FloatArray
    lower: FloatArray
    upper: FloatArray
    level: float
    resamples: int
    seed: int


@dataclass(frozen=True)
class PairedTest:
    """Result of a paired test of B against A on the same queries."""

    test: str
    mean_delta: float
    statistic: float
    p_value: float
    n: int


def _check(level: float, resamples: int) -> None:
    if not 0.0 < level < 1.0:
        raise RagReportError(f"confidence level must be between 0 and 1, got {level!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise RagReportError(f"resamples must be an integer >= 1, got {resamples!r}")


def bootstrap_ci(values: npt.ArrayLike, level: float = 0.95, resamples: int = 10_000,
                 seed: int = 0, *, workers: Mapper | None = None) -> BootstrapCI:
    """Percentile bootstrap confidence interval of the mean over queries.

    Parameters
    ----------
    values : array, shape (queries,) or (queries, columns)
        Per-query values; each column (a measure, or one K of a curve) gets its interval.
        All columns use the same resampled query sets.
    level : float
        Confidence level (0.95 gives the 2.5th and 97.5th percentiles).
    resamples : int
        Number of bootstrap resamples of the queries (with replacement).
    seed : int
        Seed of the generator; the same seed gives the same interval.
    workers : Workers, optional
        Worker processes to share the resamples (:mod:`ragreport.parallel`); the result does
        not depend on them.

    Returns
    -------
    BootstrapCI
        ``mean``, ``lower``, ``upper`` with shape (columns,) (or () for 1-d input).
        With no query, all are NaN; with one query, the interval is that value.

    Notes
    -----
    Below 1,000 queries (:data:`POISSON_MIN_QUERIES`) a resample draws ``queries`` queries
    with replacement (multinomial counts); its mean is the mean of its values. From 1,000
    queries on, it is the Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012):
    every query gets an independent Poisson(1) weight, and the resample's mean is
    ``sum(w * v) / sum(w)``. Both are bootstraps of the mean; the Poisson one draws a byte per
    query instead of an index and a count (its weights cost about a third as much, the whole
    bootstrap of 100,000 queries about 35% less), and its intervals agree with the
    multinomial ones to within the resampling noise. The weights
    are the inverse CDF of Poisson(1) on 32-bit uniforms (the top byte decides, except for
    the 5 byte values that hold a CDF step, whose other 24 bits are then drawn).

    The resamples are drawn in blocks of ``max(1, 4_000_000 // queries)``; block ``j`` has its
    own generator, seeded with ``SeedSequence(seed, spawn_key=(j,))`` (and, for the Poisson
    weights' low bits, ``spawn_key=(j, 1)``). So the first ``r``
    resamples are the same whatever ``resamples`` is, and any number of workers gives the
    same interval (see :func:`bootstrap_cis`). A resample's sum is computed exactly: each
    column is first rounded to a fixed-point grid of ``2**(53 - queries.bit_length())`` steps
    of its largest magnitude (a relative 4.5e-13 for 7,000 queries; with Poisson weights,
    which can reach 12, ``2**(53 - (12 * queries).bit_length())`` steps, 7.3e-12 for
    7,000 queries), so the sums are whole numbers that float64 holds exactly, and the
    interval has the same bits whatever BLAS, thread count or worker count computed it.

    Examples
    --------
    >>> ci = bootstrap_ci([0.0, 1.0, 1.0, 1.0], resamples=2000)
    >>> float(ci.mean), float(ci.lower) <= 0.75 <= float(ci.upper)
    (0.75, True)
    """
    v = np.asarray(values, dtype=np.float64)
    one_d = v.ndim == 1
    ci = bootstrap_cis([(v[:, None] if one_d else v, resamples)], level, seed,
                       workers=workers)[0]
    if one_d:
        return BootstrapCI(ci.mean[0], ci.lower[0], ci.upper[0], level, resamples, seed)
    return ci


def bootstrap_cis(blocks: Sequence[tuple[npt.ArrayLike, int]], level: float = 0.95,
                  seed: int = 0, *, workers: Mapper | None = None) -> list[BootstrapCI]:
    """:func:`bootstrap_ci` of several value blocks of the same queries, sharing resamples.

    Each block is ``(values, resamples)`` with ``values`` of shape (queries, columns). Block
    ``i`` is resampled with the first ``resamples_i`` query sets of one common sequence, so its
    interval equals ``bootstrap_ci(values_i, level, resamples_i, seed)``, and the draws are paid
    once for all blocks (the report's summary measures, 10,000 resamples, and its curve bands,
    the first 1,000 of them).

    >>> v = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])
    >>> a, b = bootstrap_cis([(v, 500), (v[:, :1], 100)], seed=3)
    >>> bool(b.lower[0] == bootstrap_ci(v[:, 0], resamples=100, seed=3).lower)
    True
    """
    vals = []
    for values, resamples in blocks:
        _check(level, resamples)
        v = np.asarray(values, dtype=np.float64)
        if v.ndim != 2:
            raise RagReportError(f"values must be 1-d or 2-d, got shape {v.shape}")
        vals.append(v)
    counts = [r for _, r in blocks]
    if not vals:
        return []
    n = vals[0].shape[0]
    if any(v.shape[0] != n for v in vals):
        raise RagReportError("every block must have the same queries (rows), got "
                             f"{[v.shape[0] for v in vals]}")
    if n == 0:
        nans = [np.full(v.shape[1], np.nan) for v in vals]
        return [BootstrapCI(x, x, x, level, r, seed) for x, r in zip(nans, counts, strict=True)]
    per_chunk = _chunk_rows(n)
    n_chunks = -(-max(counts) // per_chunk)
    # twice as many parts as workers: a worker that finishes first (the machine's other
    # load is rarely even) takes the next part instead of waiting for the other
    jobs = workers.jobs if workers is not None else 1
    parts = max(1, min(2 * jobs if jobs > 1 else 1, n_chunks))
    # a chunk's Poisson draws cost about what 30 columns of products cost (a byte and a few
    # comparisons per weight); the multinomial draws (an index per weight, then counting)
    # about 100
    bounds = _split(per_chunk, n_chunks, parts, [(v.shape[1], r) for v, r in
                                                 zip(vals, counts, strict=True)],
                    30.0 if uses_poisson(n) else 100.0)
    parts = len(bounds) - 1
    # a part gets only the blocks its resamples reach (not the curves' after the first ones),
    # and rounds them to fixed point itself (the same grid in every part: a function of the
    # values alone), so the rounding runs beside the other parts' work
    tasks = [([v if r > bounds[i] * per_chunk else v[:, :0] for v, r
               in zip(vals, counts, strict=True)], counts, seed, n, bounds[i], bounds[i + 1])
             for i in range(parts)]
    done = map_with(workers, _resample_sums, tasks)
    alpha = (1.0 - level) / 2.0
    out = []
    for j, (v, r) in enumerate(zip(vals, counts, strict=True)):
        sums = np.concatenate([d[0][j] for d in done if len(d[0][j])])
        scale = done[0][2][j]  # the first part reaches every block
        if uses_poisson(n):  # a resample's mean is its sum over its size (never 0 in practice:
            # with 1,000 queries or more, an empty resample has probability below e**-999)
            sizes = np.concatenate([d[1] for d in done])[:r, None]
            means = sums * scale / np.maximum(sizes, 1.0)
        else:
            means = sums * (scale / n)
        lower = np.quantile(means, alpha, axis=0)
        upper = np.quantile(means, 1.0 - alpha, axis=0)
        out.append(BootstrapCI(v.mean(axis=0), lower, upper, level, r, seed))
    return out


def _chunk_rows(n: int) -> int:
    """Resamples per block for ``n`` queries (a weight block of about 32 MB)."""
    return max(1, _CHUNK_CELLS // n)


def uses_poisson(queries: int) -> bool:
    """Whether :func:`bootstrap_cis` resamples ``queries`` queries with Poisson weights."""
    return queries >= POISSON_MIN_QUERIES


def bootstrap_scheme(queries: int) -> str:
    """How the bootstrap of ``queries`` queries resamples them, as the reports state it."""
    if uses_poisson(queries):
        return "percentile Poisson bootstrap over queries"
    return "percentile bootstrap over queries"


def _poisson_thresholds() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """Inverse CDF of Poisson(1) on 32-bit uniforms: ``T[k] = round(2**32 * P(X <= k))``.

    Returns the thresholds below ``2**32`` and their top bytes (``T >> 24``).
    """
    cdf, term = [], math.exp(-1.0)
    total = 0.0
    for k in range(40):
        total += term
        cdf.append(total)
        term /= k + 1
    t = np.array([round(c * 2.0 ** 32) for c in cdf], dtype=np.uint64)
    t = t[t < 2 ** 32]
    return t, t >> np.uint64(24)


_POISSON_T, _POISSON_TOP = _poisson_thresholds()
_POISSON_TOP_BYTES = sorted(set(_POISSON_TOP.tolist()))
_POISSON_BELOW_255 = [a for a in _POISSON_TOP.tolist() if a < 255]  # 255 is never exceeded
_SLICE = 1 << 18  # bytes compared at a time
#: The largest Poisson weight the 32-bit inverse CDF can give.
_POISSON_MAX = len(_POISSON_T)


def _poisson_weights(first: np.random.Generator, refine: np.random.Generator, b: int,
                     n: int) -> npt.NDArray[np.uint8]:
    """``(b, n)`` Poisson(1) weights: the inverse CDF of 32-bit uniforms, drawn a byte first.

    A weight is ``#{k : T[k] <= u}`` for a uniform 32-bit ``u``. Its top byte decides it
    unless it is the top byte of a threshold (5 of 256 values); only those draw their other
    24 bits, from ``refine``, in row-major order. Both streams are read in row-major order,
    so the first rows are the same whatever ``b`` is. The bytes are compared in slices that
    stay in cache.
    """
    cells = b * n
    raw = np.asarray(first.bit_generator.random_raw(-(-cells // 8)), dtype="<u8")
    top = raw.view(np.uint8)[:cells]
    w = np.empty(cells, dtype=np.uint8)
    step = min(cells, _SLICE)
    scratch, ambiguous = np.empty(step, dtype=bool), np.empty(step, dtype=bool)
    found = []
    for s in range(0, cells, step):
        t, out = top[s:s + step], w[s:s + step]
        tmp, amb = scratch[:len(t)], ambiguous[:len(t)]
        np.greater(t, _POISSON_BELOW_255[0], out=out.view(bool))
        for a in _POISSON_BELOW_255[1:]:  # Python ints: the comparisons stay in uint8
            np.greater(t, a, out=tmp)
            out += tmp.view(np.uint8)
        np.equal(t, _POISSON_TOP_BYTES[0], out=amb)
        for a in _POISSON_TOP_BYTES[1:]:
            np.equal(t, a, out=tmp)
            amb |= tmp
        found.append(np.flatnonzero(amb) + s)
    pos = np.concatenate(found)
    low = np.asarray(refine.bit_generator.random_raw(len(pos)), dtype=np.uint64) >> np.uint64(40)
    u = (top[pos].astype(np.uint64) << np.uint64(24)) | low
    w[pos] = np.searchsorted(_POISSON_T, u, side="right")
    return w.reshape(b, n)


def _fixed_point(v: FloatArray, poisson: bool = False) -> tuple[FloatArray, FloatArray]:
    """``v`` as whole numbers ``q`` (float64) and a scale per column, ``v ~= q * scale``.

    A resample's sum of ``q`` then never leaves the integers float64 holds exactly (every
    partial sum is at most ``n * 2**bits <= 2**53``, with Poisson weights at most
    ``12 * n * 2**bits``), so it is exact whatever the order of the additions: the same bits
    with any BLAS, any number of BLAS threads and any number of worker processes. The
    rounding is relative to the column's largest magnitude, at most
    ``2**-(54 - n.bit_length())`` of it (4.5e-13 for 7,000 queries; with Poisson weights
    ``2**-(54 - (12 n).bit_length())``, 7.3e-12 for 7,000 queries).
    """
    n = v.shape[0]
    bits = 53 - ((_POISSON_MAX * n) if poisson else n).bit_length()
    with np.errstate(invalid="ignore"):
        top = np.max(np.abs(v), axis=0, initial=0.0)
    top = np.where(np.isfinite(top) & (top > 0), top, 1.0)
    scale = top / 2.0 ** bits
    q = np.divide(v, scale)
    return np.rint(q, out=q), scale


def _split(per_chunk: int, n_chunks: int, parts: int, blocks: list[tuple[int, int]],
           draws: float = 100.0) -> list[int]:
    """Chunk bounds of parts of about equal work (any split gives the same sums); a part is
    never empty.

    A chunk costs its draws (about what ``draws`` columns of products cost) and the products
    of the blocks (``(columns, resamples)``) whose resamples it reaches. With more than two
    parts, when the chunks that reach the blocks with fewer resamples (the curves' bands) are
    at most two parts' share of the work, they make one part alone, and the other chunks are
    split in ``parts`` parts: only one part is then sent those blocks (and rounds them), and
    the workers that take the others in turn finish together.
    """
    cost = np.full(n_chunks, draws)
    for cols, r in blocks:
        cost[: -(-r // per_chunk)] += cols
    reach = max((-(-r // per_chunk) for cols, r in blocks
                 if cols and -(-r // per_chunk) < n_chunks), default=0)
    if parts > 2 and reach > 0 and cost[:reach].sum() <= cost.sum() * 2 / parts:
        rest = _split(per_chunk, n_chunks - reach, min(parts, n_chunks - reach), [], draws)
        return [0, *(reach + b for b in rest)]
    ends = np.cumsum(cost)
    cuts = np.searchsorted(ends, ends[-1] * np.arange(1, parts) / parts, side="left") + 1
    return sorted({0, *np.minimum(cuts, n_chunks).tolist(), n_chunks})


def _resample_sums(task: tuple[list[FloatArray], list[int], int, int, int, int]
                   ) -> tuple[list[FloatArray], FloatArray, list[FloatArray]]:
    """Sums of every block rounded to fixed point (:func:`_fixed_point`), the resample sizes
    and the blocks' scales, over the resamples of chunks ``first`` to ``stop - 1`` (of ``n``
    queries)."""
    given, counts, seed, n, first, stop = task
    poisson = uses_poisson(n)
    fixed = [_fixed_point(v, poisson) for v in given]
    vals = [q for q, _ in fixed]
    per_chunk = _chunk_rows(n)
    most = max(counts)
    out: list[list[FloatArray]] = [[] for _ in vals]
    sizes: list[FloatArray] = []
    if poisson:  # the resample sizes come out of the products: a column of ones beside a
        # block drawn for every resample (the narrowest), whose sums are the sizes
        full = min((j for j, r in enumerate(counts) if r == most), key=lambda j: vals[j].shape[1])
        vals = list(vals)
        vals[full] = np.hstack([vals[full], np.ones((n, 1))])
    for c in range(first, stop):
        start = c * per_chunk
        b = min(per_chunk, most - start)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(c,)))
        takes = [min(b, r - start) for r in counts]  # a block's resamples are a prefix
        if poisson:
            refine = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(c, 1)))
            sums = _tiled_products(_poisson_weights(rng, refine, b, n), vals, takes)
            for j, got in enumerate(sums):
                if j == full:
                    sizes.append(got[:, -1])
                    got = got[:, :-1]
                if len(got):
                    out[j].append(got)
            continue
        idx = rng.integers(0, n, size=(b, n))
        weights = np.empty((b, n))
        for row in range(b):  # one small bincount per resample stays in cache
            weights[row] = np.bincount(idx[row], minlength=n)
        del idx
        sizes.append(np.full(b, float(n)))
        for j, (v, take) in enumerate(zip(vals, takes, strict=True)):
            if take > 0:
                out[j].append(weights[:take] @ v)  # exact: whole numbers below 2**53
    return ([np.concatenate(o) if o else np.empty((0, v.shape[1]))
             for o, v in zip(out, given, strict=True)],
            np.concatenate(sizes) if sizes else np.empty(0), [sc for _, sc in fixed])


def _tiled_products(small: npt.NDArray[np.uint8], vals: list[FloatArray], takes: list[int]
                    ) -> list[FloatArray]:
    """``small[:take_j] @ vals[j]`` for every block ``j`` (``take_j <= 0``: an empty result).

    The small integer weights are turned into float64 a tile of queries at a time, which
    every block's product reads while it is fresh, instead of a whole weight matrix written
    to memory and read back once per block. The products are sums of whole
    numbers below ``2**53`` (see :func:`_fixed_point`), so adding the tiles' partial sums
    gives exactly the untiled product, in any order.
    """
    b, n = small.shape
    width = max(64, _TILE_CELLS // max(b, 1))
    acc = [np.zeros((max(t, 0), v.shape[1])) for v, t in zip(vals, takes, strict=True)]
    used = [j for j, t in enumerate(takes) if t > 0 and vals[j].shape[1] > 0]
    buf = np.empty((b, min(width, n)))
    for s in range(0, n, width):
        e = min(n, s + width)
        tile = buf[:, :e - s]
        np.copyto(tile, small[:, s:e], casting="unsafe")
        for j in used:
            acc[j] += tile[:takes[j]] @ vals[j][s:e]
    return acc


def paired_randomization_test(a: npt.ArrayLike, b: npt.ArrayLike, resamples: int = 10_000,
                              seed: int = 0) -> PairedTest:
    """Two-sided paired randomization (sign-flip) test of mean(b - a) = 0.

    Under the null hypothesis each query's two values are exchangeable, so the sign of each
    delta is flipped at random. When ``2**n <= resamples`` every sign pattern is enumerated
    (exact p-value, ``count / 2**n``); otherwise ``resamples`` random patterns give
    ``(count + 1) / (resamples + 1)``, as scipy does. A pattern counts when its
    ``|mean|`` is at least the observed one (up to a relative 1e-14 for rounding).

    >>> t = paired_randomization_test([0.1, 0.2, 0.3], [0.2, 0.4, 0.6])
    >>> t.p_value   # 2 of the 8 sign patterns are as extreme (all +, all -)
    0.25
    """
    a1 = np.asarray(a, dtype=np.float64)
    b1 = np.asarray(b, dtype=np.float64)
    if a1.ndim != 1 or a1.shape != b1.shape:
        raise RagReportError("paired values must be 1-d arrays of the same length")
    p = paired_randomization_pvalues(a1[:, None], b1[:, None], resamples, seed)
    observed = float((b1 - a1).mean())
    return PairedTest("paired randomization", observed, observed, float(p[0]), len(a1))


def paired_randomization_pvalues(a: npt.ArrayLike, b: npt.ArrayLike, resamples: int = 10_000,
                                 seed: int = 0) -> FloatArray:
    """Randomization-test p-values for every column of (queries, columns) arrays at once.

    The same sign patterns serve every column (each column's test is the one
    :func:`paired_randomization_test` describes).
    """
    _check(0.5, resamples)
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if d.ndim != 2:
        raise RagReportError("paired values must be (queries, columns) arrays of one shape")
    n, cols = d.shape
    if n == 0:
        raise RagReportError("no query in common to compare")
    thresh = np.abs(d.mean(axis=0)) * (1 - 1e-14)
    if n < 63 and 2 ** n <= resamples:
        patterns = (((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2 - 1).astype(float)
        stats = np.abs(patterns @ d) / n
        exact: FloatArray = np.minimum(1.0, (stats >= thresh).sum(axis=0) / 2 ** n)
        return exact
    rng = np.random.default_rng(seed)
    count = np.zeros(cols)
    chunk = max(1, min(resamples, _CHUNK_CELLS // n))
    for start in range(0, resamples, chunk):
        m = min(chunk, resamples - start)
        signs = (rng.integers(0, 2, size=(m, n), dtype=np.int8) * 2 - 1).astype(np.float64)
        count += (np.abs(signs @ d) / n >= thresh).sum(axis=0)
    return np.minimum(1.0, (count + 1) / (resamples + 1))


def student_t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (``scipy.special.stdtr``).

    >>> round(student_t_sf(2.0, 10), 6)
    0.036694
    """
    from scipy.special import stdtr  # imported here: ``import ragreport`` stays light

    return float(stdtr(df, -t))


def paired_t_test(a: npt.ArrayLike, b: npt.ArrayLike) -> PairedTest:
    """Two-sided paired t-test of mean(b - a) = 0 (``scipy.stats.ttest_rel(b, a)``).

    When every delta is equal, the p-value is 1 if they are all 0 and 0 otherwise (no
    variance); with fewer than two queries it is NaN.

    >>> t = paired_t_test([0.1, 0.2, 0.3, 0.4], [0.2, 0.2, 0.5, 0.5])
    >>> round(t.statistic, 4), round(t.p_value, 4)
    (2.4495, 0.0917)
    """
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = len(d)
    if n == 0:
        raise RagReportError("no query in common to compare")
    mean = float(d.mean())
    if n < 2:
        return PairedTest("paired t-test", mean, math.nan, math.nan, n)
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        p = 1.0 if mean == 0.0 else 0.0
        t = 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
        return PairedTest("paired t-test", mean, t, p, n)
    t = mean / (sd / math.sqrt(n))
    p = min(1.0, 2.0 * student_t_sf(abs(t), n - 1))
    return PairedTest("paired t-test", mean, t, p, n)


def holm(p_values: npt.ArrayLike) -> FloatArray:
    """Holm-Bonferroni adjusted p-values (same order as given).

    >>> holm([0.01, 0.04, 0.03]).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adj
    return out
