"""Power, saturation and the three outcomes checked by simulation (issue 27 §2): seeded
synthetic paired differences with a known true mean; the interval is the report's own
(paired percentile bootstrap, ``analysis.compare.paired_columns``, every trial a column of
one call). Tolerances: three binomial standard errors of the rate over the trials."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragreport.analysis.compare import paired_columns
from ragreport.analysis.noninferiority import FAIL, INCONCLUSIVE, PASS, outcome
from ragreport.analysis.power import (
    minimum_detectable_effect,
    queries_needed,
    saturation,
    spread,
)
from ragreport.errors import RagReportError

TRIALS = 1000


def _intervals(true_mean: float, sd: float, n: int, seed: int) -> list[tuple[float, float]]:
    rng = np.random.default_rng(seed)
    deltas = rng.normal(true_mean, sd, size=(n, TRIALS))
    got = paired_columns(np.zeros_like(deltas), deltas, resamples=2000, seed=seed)
    return [(c.lo, c.hi) for c in got]


def _near(rate: float, p: float) -> bool:
    return abs(rate - p) <= 3 * math.sqrt(p * (1 - p) / TRIALS) + 0.01


def test_an_effect_of_the_mde_is_detected_with_the_stated_power() -> None:
    sd, n = 0.2, 100
    mde = minimum_detectable_effect(sd, n)
    detected = [lo > 0 for lo, _ in _intervals(mde, sd, n, seed=1)]
    assert _near(float(np.mean(detected)), 0.8), np.mean(detected)


def test_non_inferiority_keeps_its_error_rate_at_the_margin() -> None:
    """At a true drop of exactly D, "pass" (not worse by more than D) is wrong; a two-sided
    95% interval says it on one side only: 2.5% of the time."""
    d = 0.02
    passed = [outcome(lo, hi, d) == PASS for lo, hi in _intervals(-d, 0.2, 100, seed=2)]
    assert _near(float(np.mean(passed)), 0.025), np.mean(passed)


def test_the_inconclusive_rate_follows_the_theory() -> None:
    """No true change, 100 queries, sd 0.2, D = 0.02: pass when the mean clears
    -D + 1.96 * 0.02 (17% of the time), fail almost never, inconclusive otherwise (83%)."""
    got = [outcome(lo, hi, 0.02) for lo, hi in _intervals(0.0, 0.2, 100, seed=3)]
    from scipy.stats import norm

    p_pass = float(norm.sf((-0.02 + 1.959964 * 0.02) / 0.02))
    assert _near(got.count(PASS) / TRIALS, p_pass)
    assert got.count(FAIL) <= 10
    assert _near(got.count(INCONCLUSIVE) / TRIALS, 1 - p_pass)


def test_queries_needed_inverts_the_mde() -> None:
    for sd, n in ((0.2, 100), (0.35, 41), (0.05, 1000)):
        mde = minimum_detectable_effect(sd, n)
        assert queries_needed(mde, sd) in (n, n + 1)
    assert queries_needed(0.0, 0.2) is None  # an effect of 0: no number of queries
    assert queries_needed(0.1, 0.0) == 1 and queries_needed(0.1, float("nan")) is None
    assert queries_needed(-0.05, 0.2) == queries_needed(0.05, 0.2)
    with pytest.raises(RagReportError, match="the effect must be a finite number, got inf"):
        queries_needed(float("inf"), 0.2)
    with pytest.raises(RagReportError, match="power must be a number > 0 and < 1, got 1"):
        minimum_detectable_effect(0.2, 10, power=1)
    with pytest.raises(RagReportError, match="the number of queries must be an integer"):
        minimum_detectable_effect(0.2, 0)


def test_spread_and_saturation() -> None:
    assert spread([0.5]) != spread([0.5])  # NaN with one query
    assert spread([1.0, 0.0], paired=False) == pytest.approx(1.0)
    s = saturation([1.0] * 97 + [0.2, 0.5, 0.0])
    assert (s.n, s.at_top, s.at_bottom, s.saturated) == (100, 97, 1, True)
    assert saturation([0.0] * 95 + [1.0] * 5).text.startswith("at 0 on 95% of the queries")
    assert not saturation([1.0] * 89 + [0.5] * 11).saturated
    assert not saturation([]).saturated
