"""Statistics: agreement with scipy, bootstrap coverage, reproducibility, Holm."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.stats as ss

from ragreport.errors import RagReportError
from ragreport.stats import (
    bootstrap_ci,
    bootstrap_cis,
    holm,
    paired_randomization_test,
    paired_t_test,
    student_t_sf,
)


@pytest.mark.parametrize("seed", range(5))
def test_t_test_equals_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 200))
    a = rng.random(n)
    b = np.clip(a + rng.normal(0.02, 0.15, n), 0, 1)
    ours = paired_t_test(a, b)
    ref = ss.ttest_rel(b, a)
    assert ours.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(("t", "df"), [(0.0, 3), (0.5, 1), (2.0, 10), (-1.3, 7), (5.0, 200),
                                       (12.0, 4)])
def test_student_t_sf_equals_scipy(t: float, df: int) -> None:
    assert student_t_sf(t, df) == pytest.approx(float(ss.t.sf(t, df)), rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("seed", range(20))
def test_t_test_p_values_are_scipys(seed: int) -> None:
    """The t distribution is scipy's: p-values equal ``ttest_rel`` on random data."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 5_000))
    a = rng.random(n)
    b = a + rng.normal(rng.normal(0, 0.02), rng.uniform(0.01, 0.3), n)
    ours = paired_t_test(a, b)
    ref = ss.ttest_rel(b, a)
    assert ours.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-12, abs=1e-300)


def test_stats_module_does_not_import_scipy() -> None:
    """scipy is imported when a t-test is computed, not by ``import ragreport.stats``."""
    code = ("import sys, ragreport, ragreport.stats, ragreport.cli.app; "
            "assert 'scipy' not in sys.modules, 'scipy imported'; "
            "ragreport.stats.paired_t_test([0.1, 0.2, 0.4], [0.2, 0.2, 0.5]); "
            "assert 'scipy' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def _scipy_perm(d: np.ndarray, resamples: int, seed: int = 0) -> float:
    res = ss.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis),
                              permutation_type="samples", n_resamples=resamples,
                              alternative="two-sided", random_state=seed)
    return float(res.pvalue)


@pytest.mark.parametrize("seed", range(4))
def test_exact_randomization_test_equals_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    a, b = rng.random(n), rng.random(n)
    ours = paired_randomization_test(a, b, resamples=10_000)
    assert ours.p_value == pytest.approx(_scipy_perm(b - a, 10_000), rel=1e-12)


def test_monte_carlo_randomization_test_close_to_scipy() -> None:
    rng = np.random.default_rng(7)
    a = rng.random(80)
    b = np.clip(a + rng.normal(0.03, 0.2, 80), 0, 1)
    ours = paired_randomization_test(a, b, resamples=20_000, seed=3).p_value
    ref = _scipy_perm(b - a, 20_000)
    assert abs(ours - ref) < 0.02  # two Monte Carlo estimates of the same p-value
    assert 0 < ours < 1


def test_randomization_no_difference_gives_p_one() -> None:
    a = np.array([0.1, 0.5, 0.9, 0.3])
    assert paired_randomization_test(a, a).p_value == 1.0
    assert paired_t_test(a, a).p_value == 1.0


def test_bootstrap_close_to_scipy_percentile() -> None:
    rng = np.random.default_rng(0)
    v = rng.beta(2, 5, 300)
    ours = bootstrap_ci(v, resamples=20_000, seed=1)
    ref = ss.bootstrap((v,), np.mean, method="percentile", n_resamples=20_000,
                       random_state=2).confidence_interval
    width = float(ref.high - ref.low)
    assert float(ours.lower) == pytest.approx(float(ref.low), abs=0.03 * width)
    assert float(ours.upper) == pytest.approx(float(ref.high), abs=0.03 * width)
    assert float(ours.mean) == pytest.approx(float(v.mean()))


def test_bootstrap_coverage_is_about_95_percent() -> None:
    """Of 1,000 simulated experiments, about 95% of intervals contain the true mean."""
    rng = np.random.default_rng(12345)
    a, b = 2.0, 3.0
    true_mean = a / (a + b)
    hits = 0
    for i in range(1000):
        sample = rng.beta(a, b, 100)
        ci = bootstrap_ci(sample, level=0.95, resamples=1000, seed=i)
        hits += float(ci.lower) <= true_mean <= float(ci.upper)
    assert 0.925 <= hits / 1000 <= 0.975, hits


def test_bootstrap_reproducible_and_seed_dependent() -> None:
    v = np.random.default_rng(0).random((50, 3))
    a, b = bootstrap_ci(v, seed=5), bootstrap_ci(v, seed=5)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)
    c = bootstrap_ci(v, seed=6)
    assert not np.array_equal(a.lower, c.lower)
    assert a.lower.shape == (3,) and np.all(a.lower <= a.mean) and np.all(a.mean <= a.upper)


def test_bootstrap_columns_match_one_at_a_time() -> None:
    """Columns share resamples, and each column equals its own 1-d bootstrap."""
    v = np.random.default_rng(3).random((40, 2))
    both = bootstrap_ci(v, resamples=500, seed=9)
    first = bootstrap_ci(v[:, 0], resamples=500, seed=9)
    assert float(first.lower) == both.lower[0] and float(first.upper) == both.upper[0]


def test_bootstrap_degenerate_inputs() -> None:
    one = bootstrap_ci([0.4])
    assert float(one.lower) == float(one.upper) == 0.4
    empty = bootstrap_ci(np.zeros((0, 2)))
    assert np.isnan(empty.mean).all()
    with pytest.raises(RagReportError, match="confidence level must be between 0 and 1"):
        bootstrap_ci([1.0], level=1.5)
    with pytest.raises(RagReportError, match="resamples must be an integer >= 1, got 0"):
        bootstrap_ci([1.0], resamples=0)


def test_holm() -> None:
    # sorted p: 0.01 (x3) = 0.03, 0.03 (x2) = 0.06, 0.04 (x1) = 0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]).tolist() == pytest.approx([1.0, 1.0])
    assert holm([]).tolist() == []


def test_bootstrap_blocks_share_a_prefix_of_one_sequence() -> None:
    """A block with fewer resamples uses the first ones of the longest block's sequence."""
    rng = np.random.default_rng(7)
    v = rng.random((300, 4))  # 4M // 300 = 13,333 resamples per generator block
    w = rng.random((300, 2))
    many, few = bootstrap_cis([(v, 20_000), (w, 1_000)], seed=11)
    alone_few = bootstrap_ci(w, resamples=1_000, seed=11)
    alone_many = bootstrap_ci(v, resamples=20_000, seed=11)
    np.testing.assert_array_equal(few.lower, alone_few.lower)
    np.testing.assert_array_equal(few.upper, alone_few.upper)
    np.testing.assert_array_equal(many.lower, alone_many.lower)
    assert few.resamples == 1_000 and many.resamples == 20_000
    # 20,000 resamples span two generator blocks: not the first 13,333 repeated
    assert not np.allclose(bootstrap_ci(v, resamples=13_333, seed=11).lower, many.lower)
    with pytest.raises(RagReportError, match="same queries"):
        bootstrap_cis([(v, 10), (w[:5], 10)])


class _FakeWorkers:
    """Splits the work like Workers.map but runs it here, recording the split."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.calls: list[int] = []

    def map(self, fn, items):  # type: ignore[no-untyped-def]
        items = list(items)
        self.calls.append(len(items))
        return [fn(x) for x in items]


@pytest.mark.parametrize("jobs", [2, 3, 7])
def test_bootstrap_does_not_depend_on_the_split(jobs: int) -> None:
    v = np.random.default_rng(1).random((2_000, 3))  # 2,000 resamples per generator block
    alone = bootstrap_cis([(v, 9_000), (v[:, :1], 2_500)], seed=2)
    fake = _FakeWorkers(jobs)
    split = bootstrap_cis([(v, 9_000), (v[:, :1], 2_500)], seed=2, workers=fake)
    # 9,000 resamples = 5 generator blocks, in about two parts per worker, never an empty one
    assert len(fake.calls) == 1 and 1 < fake.calls[0] <= min(2 * jobs + 1, 5)
    for a, b in zip(alone, split, strict=True):
        np.testing.assert_array_equal(a.lower, b.lower)
        np.testing.assert_array_equal(a.upper, b.upper)


def test_bootstrap_sums_are_exact_whatever_the_order() -> None:
    """Resample means do not depend on how BLAS orders the additions (fixed-point sums)."""
    from ragreport.stats import _fixed_point

    rng = np.random.default_rng(4)
    v = np.column_stack([rng.random(7_000), -rng.random(7_000) * 1e6, np.zeros(7_000)])
    q, scale = _fixed_point(v)
    assert np.all(q == np.rint(q)) and np.abs(q).max() <= 2.0 ** 40
    np.testing.assert_allclose(q * scale, v, rtol=0, atol=4.6e-13 * 1e6)
    assert np.abs(q[:, 0] * scale[0] - v[:, 0]).max() <= 2.0 ** -41
    w = rng.integers(0, 4, size=(50, 7_000)).astype(np.float64)
    forward = w @ q
    backward = w[:, ::-1] @ q[::-1]  # another summation order
    blocks = sum(w[:, i:i + 997] @ q[i:i + 997] for i in range(0, 7_000, 997))
    np.testing.assert_array_equal(forward, backward)
    np.testing.assert_array_equal(forward, blocks)
    # a NaN makes its own column's interval NaN, not the others'
    v[3, 1] = np.nan
    ci = bootstrap_ci(v, resamples=200)
    assert np.isnan(ci.lower[1]) and np.isfinite(ci.lower[0]) and ci.lower[2] == 0.0


def test_poisson_weights_are_poisson_and_prefix_stable() -> None:
    """From 1,000 queries on, the weights are Poisson(1), read in row-major order."""
    from ragreport.stats import _poisson_weights

    w = _poisson_weights(np.random.default_rng(1), np.random.default_rng(2), 40, 100_000)
    freq = np.bincount(w.ravel(), minlength=12)[:12] / w.size
    pmf = ss.poisson.pmf(np.arange(12), 1.0)
    sd = np.sqrt(pmf * (1 - pmf) / w.size)
    assert np.all(np.abs(freq - pmf) <= 5 * sd + 1e-12), (freq, pmf)
    assert w.max() <= 12
    # the first rows do not depend on how many rows are drawn (refinement bits included)
    few = _poisson_weights(np.random.default_rng(1), np.random.default_rng(2), 3, 100_000)
    np.testing.assert_array_equal(few, w[:3])


def test_poisson_bootstrap_agrees_with_the_multinomial_one(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """The two schemes are bootstraps of the same mean: their intervals agree."""
    import ragreport.stats as st

    rng = np.random.default_rng(8)
    v = np.column_stack([rng.beta(2, 5, 3_000), rng.random(3_000) < 0.1,
                         rng.exponential(1.0, 3_000)])
    assert st.uses_poisson(3_000) and not st.uses_poisson(999)
    poisson = bootstrap_ci(v, resamples=10_000, seed=4)
    again = bootstrap_ci(v, resamples=10_000, seed=4)
    np.testing.assert_array_equal(poisson.lower, again.lower)
    np.testing.assert_array_equal(poisson.upper, again.upper)
    monkeypatch.setattr(st, "POISSON_MIN_QUERIES", 10**9)
    multinomial = bootstrap_ci(v, resamples=10_000, seed=4)
    width = multinomial.upper - multinomial.lower
    np.testing.assert_allclose(poisson.lower, multinomial.lower, rtol=0, atol=0.05 * width.max())
    np.testing.assert_allclose(poisson.upper, multinomial.upper, rtol=0, atol=0.05 * width.max())
    assert np.all(np.abs((poisson.upper - poisson.lower) / width - 1) < 0.05)
    # against the normal approximation of the mean's sampling distribution as well
    se = v.std(axis=0, ddof=1) / np.sqrt(len(v))
    np.testing.assert_allclose(poisson.upper - poisson.lower, 2 * 1.96 * se, rtol=0.05)


def test_bootstrap_scheme_is_stated() -> None:
    from ragreport.stats import bootstrap_scheme

    assert bootstrap_scheme(999) == "percentile bootstrap over queries"
    assert bootstrap_scheme(1_000) == "percentile Poisson bootstrap over queries"


def test_poisson_blocks_share_a_prefix_of_one_sequence() -> None:
    rng = np.random.default_rng(9)
    v = rng.random((1_500, 3))  # 4M // 1,500 = 2,666 resamples per generator block
    many, few = bootstrap_cis([(v, 6_000), (v[:, :1], 700)], seed=3)
    alone = bootstrap_ci(v[:, 0], resamples=700, seed=3)
    assert float(alone.lower) == few.lower[0] and float(alone.upper) == few.upper[0]
    alone_many = bootstrap_ci(v, resamples=6_000, seed=3)
    np.testing.assert_array_equal(many.lower, alone_many.lower)
    np.testing.assert_array_equal(many.upper, alone_many.upper)


def test_tiled_products_equal_the_whole_products() -> None:
    """The Poisson sums are computed a tile of queries at a time: exactly the whole product,
    the resample sizes included (a column of ones beside the narrowest full block); each
    part rounds its blocks to fixed point itself, on the grid the values alone decide."""
    import ragreport.stats as st

    n = 5_003  # not a multiple of the tile width or of 8
    rng = np.random.default_rng(11)
    v = [rng.random((n, 3)), rng.random((n, 5)) * 7.0]
    fixed = [st._fixed_point(x, True) for x in v]
    q = [f[0] for f in fixed]
    counts = [2_000, 700]
    per_chunk = st._chunk_rows(n)
    chunks = -(-max(counts) // per_chunk)
    sums, sizes, scales = st._resample_sums((v, counts, 9, n, 0, chunks))
    for got, (_, want) in zip(scales, fixed, strict=True):
        np.testing.assert_array_equal(got, want)
    whole = []
    for c in range(chunks):
        b = min(per_chunk, max(counts) - c * per_chunk)
        first = np.random.default_rng(np.random.SeedSequence(9, spawn_key=(c,)))
        refine = np.random.default_rng(np.random.SeedSequence(9, spawn_key=(c, 1)))
        whole.append(st._poisson_weights(first, refine, b, n).astype(np.float64))
    w = np.concatenate(whole)
    np.testing.assert_array_equal(sizes, w.sum(axis=1))
    np.testing.assert_array_equal(sums[0], w @ q[0])
    np.testing.assert_array_equal(sums[1], w[:700] @ q[1])
    # a part that starts past the second block's resamples gets none of them
    late = st._resample_sums(([v[0], v[1][:, :0]], counts, 9, n, chunks - 1, chunks))
    assert late[0][1].shape == (0, 0)
    np.testing.assert_array_equal(late[0][0], (w @ q[0])[(chunks - 1) * per_chunk:])


def test_split_sends_the_curve_blocks_to_one_part() -> None:
    """The chunks that reach the blocks with fewer resamples (the curves' bands) make one
    part when they are no more than two parts' share of the work; the parts cover every
    chunk once, in order, none empty."""
    from ragreport.stats import _split

    wide = _split(40, 250, 4, [(11, 10_000), (140, 1_000)], 30.0)  # 100,000 queries
    assert wide[:2] == [0, 25] and wide[-1] == 250 and len(wide) == 6
    sizes = np.diff(wide[1:])
    assert sizes.max() - sizes.min() <= 1
    # the curves' chunks are most of the work: split evenly instead
    heavy = _split(40, 250, 4, [(11, 10_000), (5_000, 1_000)], 30.0)
    assert heavy[1] < 25 and len(heavy) == 5
    for bounds in (wide, heavy, _split(2_000, 5, 14, [(3, 9_000), (1, 2_500)], 30.0),
                   _split(1, 3, 4, [(1, 3)]), _split(40, 250, 2, [(11, 10_000), (140, 1_000)])):
        assert bounds[0] == 0 and np.all(np.diff(bounds) > 0)
