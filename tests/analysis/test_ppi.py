"""Prediction-powered intervals: coverage by simulation (1,000 seeded trials), narrower than
the people-only interval when the model agrees, unbiased when the model is biased, and the
estimates of evaluated runs from qrels with people's and a model's judgments."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragreport
from ragreport.analysis.ppi import people_mean, ppi_estimates, ppi_mean

TRIALS = 1000


def population(rng: np.random.Generator, size: int, bias: float, noise: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values by people (y, in [0, 1]) and by a model (f: y, shifted and noisy)."""
    y = rng.beta(2.0, 3.0, size)
    f = np.clip(y + bias + rng.normal(0.0, noise, size), 0.0, 1.0)
    return y, f


@pytest.mark.parametrize("bias, noise", [(0.0, 0.05), (0.15, 0.05), (-0.1, 0.2)])
def test_coverage_is_nominal(bias: float, noise: float) -> None:
    rng = np.random.default_rng(20261207)
    y_pop, f_pop = population(rng, 200_000, bias, noise)
    truth = float(y_pop.mean())  # the people's mean over the population
    covered = 0
    for _ in range(TRIALS):
        idx = rng.choice(len(y_pop), 400, replace=False)
        labeled, unlabeled = idx[:80], idx[80:]
        got = ppi_mean(f_pop[unlabeled], f_pop[labeled], y_pop[labeled])
        covered += got.low <= truth <= got.high
    # nominal 95%: 93-97% of 1,000 trials (the binomial sd is 0.7 points)
    assert 0.93 <= covered / TRIALS <= 0.97


def test_narrower_than_people_only_when_the_model_agrees() -> None:
    rng = np.random.default_rng(7)
    y_pop, f_pop = population(rng, 100_000, 0.05, 0.03)
    ratios = []
    for _ in range(200):
        idx = rng.choice(len(y_pop), 500, replace=False)
        labeled, unlabeled = idx[:50], idx[50:]
        ppi = ppi_mean(f_pop[unlabeled], f_pop[labeled], y_pop[labeled])
        people = people_mean(y_pop[labeled])
        ratios.append(ppi.width / people.width)
    assert max(ratios) < 1.0 and float(np.median(ratios)) < 0.5


def test_the_model_only_mean_is_biased_and_ppi_is_not() -> None:
    rng = np.random.default_rng(11)
    y_pop, f_pop = population(rng, 100_000, 0.2, 0.05)
    truth = float(y_pop.mean())
    ppi, model = [], []
    for _ in range(300):
        idx = rng.choice(len(y_pop), 300, replace=False)
        ppi.append(ppi_mean(f_pop[idx[60:]], f_pop[idx[:60]], y_pop[idx[:60]]).mean)
        model.append(people_mean(f_pop[idx]).mean)
    assert abs(np.mean(ppi) - truth) < 0.005 and np.mean(model) - truth > 0.15


def test_too_few_queries_give_no_interval() -> None:
    got = ppi_mean([0.5], [0.4], [0.5])
    assert got.mean == pytest.approx(0.6) and math.isnan(got.low)
    assert math.isnan(ppi_mean([], [0.4], [0.5]).mean)
    with pytest.raises(ragreport.RagReportError, match="2 model values for 1 people's"):
        ppi_mean([0.5], [0.4, 0.3], [0.5])
    with pytest.raises(ragreport.RagReportError, match="level must be > 0 and < 1"):
        people_mean([0.5], level=1.0)


def test_estimates_of_a_run_by_hand() -> None:
    # the model judged q1..q4; people judged q1 and q2 (and disagree on q2)
    rows = [{"query_id": f"q{i}", "relevant": {"a": 1, "b": 0}, "source": "llm:judge"}
            for i in range(1, 5)]
    rows += [{"query_id": "q1", "relevant": {"a": 1, "b": 0}, "source": "human"},
             {"query_id": "q2", "relevant": {"a": 0, "b": 1}, "source": "human"}]
    qrels = ragreport.load_qrels(rows)
    run = {"q1": ["a", "b"], "q2": ["a", "b"], "q3": ["b", "a"], "q4": ["a", "b"]}
    r = ragreport.evaluate(qrels, run, ["P@1"], name="run")
    (e,) = ppi_estimates([r], qrels, r.measures)
    assert (e.people, e.model, e.run, e.measure) == ("human", "llm:judge", "run", "P@1")
    # model: P@1 = 1, 1, 0, 1; people: 1, 0 on q1, q2. PPI: mean_U(f) = (0 + 1) / 2 over
    # q3, q4, plus mean_L(y - f) = (0 + -1) / 2
    assert e.ppi.mean == pytest.approx(0.0) and e.ppi.n == 4
    assert e.people_only.mean == 0.5 and e.model_only.mean == 0.75
    assert ppi_estimates([r], ragreport.load_qrels(rows[:4]), r.measures) == []


def _people_and_model() -> tuple[ragreport.Qrels, dict[str, list[str]]]:
    """A model judged 40 queries; people judged every fourth one and agree with it."""
    rows = [{"query_id": f"q{i}", "relevant": {"a": 1, "b": 0} if i % 3 else {"a": 0, "b": 1},
             "source": "llm:judge"} for i in range(40)]
    rows += [{"query_id": f"q{i}", "relevant": dict(rows[i]["relevant"]), "source": "human"}
             for i in range(0, 40, 4)]
    return ragreport.load_qrels(rows), {f"q{i}": ["a", "b"] for i in range(40)}


def test_the_report_shows_ppi_and_a_target_gates_on_it() -> None:
    import json

    from ragreport.report.jsonout import render_json
    from ragreport.report.markdown import render_markdown
    from ragreport.report.terminal import render_failures, render_terminal
    from ragreport.targets import parse_targets

    qrels, run = _people_and_model()
    r = ragreport.evaluate(qrels, run, ["P@1"], name="run")
    passing = parse_targets({"P@1": {"min": 0.3, "on": "ppi_lower"}})
    report = ragreport.build_report([r], passing, resamples=200)
    (e,) = [e for e in report.judgments.ppi if e.measure == "P@1"]
    assert e.people_only.n == 10 and e.model_only.n == 40 and e.ppi.n == 40
    assert e.ppi.width < e.people_only.width  # the model agrees: narrower
    assert report.all_passed and report.targets[0].cells[0].value == pytest.approx(e.ppi.low)
    assert "Prediction-powered intervals" in render_terminal(report)
    md = render_markdown(report)
    assert "| run | P@1 | 0." in md and "| P@1 | &gt;= 0.3 (PPI lower bound) |" in md
    html = report.to_html()
    assert 'data-role="ppi"' in html and "on PPI lower bound" in html
    doc = json.loads(render_json(report))["judgments"]["ppi"]
    assert {d["measure"] for d in doc} >= {"P@1"} and doc[0]["people"] == "human"
    failing = ragreport.build_report([r], parse_targets({"P@1": {"min": 0.9,
                                                                 "on": "ppi_lower"}}),
                                     resamples=200)
    assert not failing.all_passed
    assert render_failures(failing).startswith("FAILED P@1: PPI lower bound 0.")


def test_a_ppi_target_without_both_kinds_of_judgment_is_refused() -> None:
    from ragreport.targets import parse_targets

    r = ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["P@1"])
    with pytest.raises(ragreport.ConfigError, match="prediction-powered interval, which needs "
                                                    "qrels with people's"):
        ragreport.build_report([r], parse_targets({"P@1": {"min": 0.5, "on": "ppi_lower"}}),
                               stats=False)
    with pytest.raises(ragreport.ConfigError, match=r"'on' must be \"mean\", \"ci_lower\" or "
                                                    r"\"ppi_lower\", got 'ppi'"):
        parse_targets({"P@1": {"min": 0.5, "on": "ppi"}})
