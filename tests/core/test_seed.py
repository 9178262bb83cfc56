"""The seed tutorial's API and every number it prints."""

from __future__ import annotations

import re

import pytest

from ragreport import RetrievalEvaluator, evaluate_multiple_queries
from ragreport.errors import RagReportError

SINGLE = {"recall@k": "0.667", "precision@k": "0.400", "f1@k": "0.500", "mrr": "0.500",
          "ndcg@k": "0.498"}
AVERAGE = {"recall@k": "0.889", "precision@k": "0.400", "f1@k": "0.548", "mrr": "0.667",
           "ndcg@k": "0.704"}

TEST_CASES = [
    {"query": "Python installation", "retrieved": [1, 3, 5, 7, 9], "relevant": [3, 7, 12]},
    {"query": "List comprehensions", "retrieved": [2, 4, 6, 8, 10], "relevant": [4, 6]},
    {"query": "Django tutorial", "retrieved": [1, 2, 3, 4, 5], "relevant": [1, 3]},
]


def test_single_example_matches_tutorial_output() -> None:
    metrics = RetrievalEvaluator(k=5).evaluate_all([1, 3, 5, 7, 9, 11, 13], [3, 7, 12])
    assert list(metrics) == ["recall@k", "precision@k", "f1@k", "mrr", "ndcg@k"]
    assert {k: f"{v:.3f}" for k, v in metrics.items()} == SINGLE


def test_three_queries_average_matches_tutorial_output() -> None:
    avg = evaluate_multiple_queries(RetrievalEvaluator(k=5), TEST_CASES)
    assert {k: f"{v:.3f}" for k, v in avg.items()} == AVERAGE


def test_numbers_are_the_ones_printed_in_the_tutorial(seed_tutorial: str) -> None:
    """Guard against the tutorial and the constants above drifting apart."""
    for key, value in SINGLE.items():
        assert re.search(rf"{re.escape(key)}: {value}\b", seed_tutorial), key
    block = seed_tutorial.split("Average metrics (3 queries):", 2)[2]
    for key, value in AVERAGE.items():
        assert re.search(rf"{re.escape(key)}: {value}\b", block), key


def test_exercises() -> None:
    ev = RetrievalEvaluator(k=5)
    assert f"{ev.recall_at_k([1, 2, 3, 4, 5], [3, 6, 9]):.2f}" == "0.33"
    assert f"{ev.ndcg_at_k([1, 3, 5, 7, 9], [3, 7]):.3f}" == "0.651"


def test_mrr_examples_from_the_tutorial() -> None:
    ev = RetrievalEvaluator(k=5)
    rr = [ev.mrr([1, 3, 5, 7, 9], [3, 7]), ev.mrr([2, 4, 6, 8, 10], [6]),
          ev.mrr([1, 3, 5, 7, 9], [1])]
    assert rr == pytest.approx([0.5, 1 / 3, 1.0])
    assert f"{sum(rr) / 3:.2f}" == "0.61"


def test_individual_methods_agree_with_evaluate_all() -> None:
    ev = RetrievalEvaluator(k=3)
    ret, rel = ["a", "b", "c", "d"], ["c", "z"]
    all_ = ev.evaluate_all(ret, rel)
    assert ev.recall_at_k(ret, rel) == all_["recall@k"] == 0.5
    assert ev.precision_at_k(ret, rel) == all_["precision@k"] == pytest.approx(1 / 3)
    assert ev.f1_at_k(ret, rel) == all_["f1@k"] == pytest.approx(0.4)
    assert ev.mrr(ret, rel) == all_["mrr"] == pytest.approx(1 / 3)


def test_empty_inputs_score_zero_like_the_tutorial() -> None:
    ev = RetrievalEvaluator(k=5)
    assert ev.evaluate_all([1, 2], []) == dict.fromkeys(SINGLE, 0.0)
    assert ev.evaluate_all([], [1]) == dict.fromkeys(SINGLE, 0.0)
    avg = evaluate_multiple_queries(ev, [*TEST_CASES, {"retrieved": [1], "relevant": []}])
    assert avg["precision@k"] == pytest.approx(0.4 * 3 / 4)


def test_mrr_has_no_cutoff() -> None:
    assert RetrievalEvaluator(k=2).mrr([1, 2, 3, 4], [4]) == 0.25


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "5"])
def test_bad_k_is_rejected(k: object) -> None:
    with pytest.raises(RagReportError, match="k must be an integer >= 1"):
        RetrievalEvaluator(k=k)  # type: ignore[arg-type]


def test_bad_test_cases() -> None:
    with pytest.raises(RagReportError, match="test case 0"):
        evaluate_multiple_queries(RetrievalEvaluator(), [{"retrieved": [1]}])
    with pytest.raises(RagReportError, match="empty"):
        evaluate_multiple_queries(RetrievalEvaluator(), [])


def test_an_empty_retrieved_list_counts_like_evaluate_counts_it() -> None:
    """An empty ``retrieved`` list scores 0 and stays in the mean, in the seed API and in
    :func:`ragreport.evaluate` alike (it is an evaluated query there, an empty retrieval)."""
    import ragreport

    cases = [{**c, "query_id": str(i)} for i, c in enumerate(TEST_CASES)]
    cases[1] = {**cases[1], "retrieved": []}
    avg = evaluate_multiple_queries(RetrievalEvaluator(k=5), cases)
    r = ragreport.evaluate(cases, cases, ["R@5", "P@5", "F1@5", "RR", "nDCG@5"], order="given")
    assert r.counts.evaluated == 3 and r.counts.empty_retrievals == 1
    assert list(avg.values()) == pytest.approx(list(r.means().values()), abs=1e-15)
    # the tutorial's first and third cases, and a zero
    assert avg["precision@k"] == pytest.approx((0.4 + 0 + 0.4) / 3)


@pytest.mark.parametrize("retrieved", [{1, 3}, frozenset({1})], ids=["set", "frozenset"])
def test_a_retrieved_set_is_refused(retrieved: object) -> None:
    ev = RetrievalEvaluator(k=5)
    with pytest.raises(RagReportError, match="whose order is undefined; give a list"):
        ev.mrr(retrieved, [1])  # type: ignore[arg-type]
    with pytest.raises(RagReportError, match=r"^test case 0: 'retrieved' is a"):
        evaluate_multiple_queries(ev, [{"retrieved": retrieved, "relevant": [1]}])
    # relevant documents have no order: a set is fine
    assert ev.mrr([2, 1], {1, 3}) == 0.5
