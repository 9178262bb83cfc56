"""Agreement between judgment sources: Cohen's kappa (plain, weighted, binary) checked by
hand and against scikit-learn's cohen_kappa_score, the confusion matrix, one source's
judgments alone, and the runs' means per source."""

from __future__ import annotations

import math
import random

import pytest
from sklearn.metrics import cohen_kappa_score

import ragreport
from ragreport.analysis.agreement import agreement, agreements, per_source, source_qrels


def qrels_of(rows: list[tuple[str, str, int, str]]) -> ragreport.Qrels:
    return ragreport.load_qrels([{"query_id": q, "relevant": {d: g}, "source": s}
                                 for q, d, g, s in rows])


def test_kappa_by_hand() -> None:
    # 10 pairs: person and model agree on 7 (4 relevant, 3 not)
    human = [1, 1, 1, 1, 0, 0, 0, 1, 0, 0]
    model = [1, 1, 1, 1, 0, 0, 0, 0, 1, 1]
    rows = [("q", f"d{i}", g, "human") for i, g in enumerate(human)] + \
        [("q", f"d{i}", g, "llm:x") for i, g in enumerate(model)]
    g = agreement(qrels_of(rows))
    assert g is not None and (g.a, g.b, g.pairs) == ("human", "llm:x", 10)
    assert g.matrix.tolist() == [[3, 2], [1, 4]]  # rows: the person's grade
    # p_o = 0.7; p_e = 0.5 * 0.4 + 0.5 * 0.6 = 0.5; kappa = 0.2 / 0.5
    assert g.observed == pytest.approx(0.7) and g.kappa == pytest.approx(0.4)
    assert g.binary_kappa == pytest.approx(0.4)  # two grades: the same thing


@pytest.mark.parametrize("seed", range(20))
def test_kappa_equals_scikit_learn(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(5, 60)
    a = [rng.choice([0, 1, 2, 3]) for _ in range(n)]
    b = [min(3, max(0, x + rng.choice([-1, 0, 0, 1]))) for x in a]
    rows = [("q", f"d{i}", g, "human") for i, g in enumerate(a)] + \
        [("q", f"d{i}", g, "llm:x") for i, g in enumerate(b)]
    g = agreement(qrels_of(rows), rel_level=2)
    assert g is not None
    levels = g.levels
    for ours, weights in ((g.kappa, None), (g.weighted_kappa, "quadratic")):
        want = cohen_kappa_score(a, b, labels=levels, weights=weights)
        assert (math.isnan(ours) and math.isnan(want)) or ours == pytest.approx(want)
    lin = agreement(qrels_of(rows), weights="linear")
    assert lin.weighted_kappa == pytest.approx(cohen_kappa_score(a, b, labels=levels,
                                                                 weights="linear"))
    want = cohen_kappa_score([x >= 2 for x in a], [x >= 2 for x in b], labels=[False, True])
    assert (math.isnan(g.binary_kappa) and math.isnan(want)) or \
        g.binary_kappa == pytest.approx(want)


def test_total_chance_agreement_is_nan_and_no_overlap_is_none() -> None:
    same = qrels_of([("q", "a", 1, "human"), ("q", "a", 1, "llm:x")])
    g = agreement(same)
    assert g is not None and g.observed == 1.0 and math.isnan(g.kappa)
    apart = qrels_of([("q", "a", 1, "human"), ("q", "b", 1, "llm:x")])
    assert agreement(apart) is None and agreements(apart) == []
    assert agreement(ragreport.load_qrels({"q": {"a": 1}})) is None  # no sources


def test_each_source_latest_judgment_and_every_pair_of_sources() -> None:
    q = qrels_of([("q", "a", 2, "llm:x"), ("q", "a", 0, "human"), ("q", "a", 1, "llm:x"),
                  ("q", "b", 1, "click"), ("q", "b", 1, "human")])
    assert source_qrels(q, "llm:x").grades.tolist() == [1.0]  # its latest
    with pytest.raises(ragreport.RagReportError, match=r"no judgment has the source 'bot'"):
        source_qrels(q, "bot")
    got = {(g.a, g.b): g.pairs for g in agreements(q)}
    assert got == {("human", "llm:x"): 1, ("human", "click"): 1}
    with pytest.raises(ragreport.RagReportError, match="two different sources"):
        agreement(q, "human", "human")


def test_means_per_source() -> None:
    q = qrels_of([("q1", "a", 1, "human"), ("q1", "b", 0, "human"),
                  ("q1", "a", 0, "llm:x"), ("q1", "b", 1, "llm:x")])
    r = ragreport.evaluate(q, {"q1": ["a", "b"]}, ["P@1", "RR"], name="run")
    got = per_source([r], q, r.measures)
    assert got == {"human": {"run": {"P@1": 1.0, "RR": 1.0}},
                   "llm:x": {"run": {"P@1": 0.0, "RR": 0.5}}}
