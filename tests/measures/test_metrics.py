"""Hand-derived values for every metric, directly and through ``ragreport.evaluate``.

Each case writes the relevance at each rank in a comment and shows the arithmetic. Notation:
``ranks: 0 1 0 1 0`` is the relevance of the documents at ranks 1..5 (grades when graded);
``R`` is the number of relevant documents judged for the query.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import ragreport
from ragreport import metrics
from ragreport.core.result import EvaluationResult
from ragreport.errors import InputError, MeasureError, RagReportError

L2 = math.log2


def _rel(*rows: list[int]) -> npt.NDArray[np.bool_]:
    return np.array(rows, dtype=bool)


def _f(*rows: list[float]) -> npt.NDArray[np.float64]:
    return np.array(rows, dtype=np.float64)


# The tutorial's query: retrieved d1 d3 d5 d7 d9, relevant d3 d7 d12 (R = 3)
# ranks: 0 1 0 1 0
TUT_QRELS = {"q1": {"d3": 1, "d7": 1, "d12": 1}}
TUT_RUN = {"q1": ["d1", "d3", "d5", "d7", "d9"]}
TUT_REL = _rel([0, 1, 0, 1, 0])
TUT_NREL = np.array([3])
# second query for batched checks -- ranks: 1 0 1 ; R = 2
B_REL = _rel([1, 0, 1, 0, 0])
B_NREL = np.array([2])


# ---- metric functions, one at a time --------------------------------------------------------

def test_precision_at_k() -> None:
    # ranks: 0 1 0 1 0 ; P@K = hits(K) / K = 0/1, 1/2, 1/3, 2/4, 2/5
    # ranks: 1 0 1 0 0 ;                     1/1, 1/2, 2/3, 2/4, 2/5
    got = metrics.precision_at_k(np.vstack([TUT_REL, B_REL]), 5)
    assert got.shape == (2, 5)
    np.testing.assert_allclose(got, [[0, 1 / 2, 1 / 3, 2 / 4, 2 / 5],
                                     [1, 1 / 2, 2 / 3, 2 / 4, 2 / 5]])


def test_precision_divides_by_k_beyond_the_ranking() -> None:
    # ranks: 1 (only one document retrieved) ; P@3 = 1/3, not 1/1
    got = metrics.precision_at_k(_rel([1]), 3)
    np.testing.assert_allclose(got, [[1, 1 / 2, 1 / 3]])


def test_recall_at_k() -> None:
    # ranks: 0 1 0 1 0, R = 3 ; R@K = hits / 3 = 0, 1/3, 1/3, 2/3, 2/3
    got = metrics.recall_at_k(TUT_REL, TUT_NREL, 5)
    np.testing.assert_allclose(got, [[0, 1 / 3, 1 / 3, 2 / 3, 2 / 3]])


def test_recall_is_zero_without_relevant_documents() -> None:
    # ranks: 0 0, R = 0 ; 0 by convention, not 0/0
    got = metrics.recall_at_k(_rel([0, 0]), np.array([0]), 2)
    assert got.tolist() == [[0.0, 0.0]]


def test_f1_at_k() -> None:
    # ranks: 0 1 0 1 0, R = 3 ; F1@K = 2·hits / (K + R)
    # K=1: 0 ; K=2: 2/5 ; K=3: 2/6 ; K=4: 4/7 ; K=5: 4/8 = 0.5
    got = metrics.f1_at_k(TUT_REL, TUT_NREL, 5)
    np.testing.assert_allclose(got, [[0, 2 / 5, 2 / 6, 4 / 7, 4 / 8]])
    # P@5 = 0.4, R@5 = 2/3: 2·0.4·(2/3) / (0.4 + 2/3) = 0.5
    assert got[0, 4] == pytest.approx(2 * 0.4 * (2 / 3) / (0.4 + 2 / 3))


def test_hit_rate_at_k() -> None:
    # ranks: 0 1 0 1 0 ; first relevant at 2 -> 0 for K=1, 1 from K=2 on
    got = metrics.hit_rate_at_k(TUT_REL, 5)
    assert got.tolist() == [[0.0, 1.0, 1.0, 1.0, 1.0]]


def test_reciprocal_rank() -> None:
    # ranks: 0 1 0 1 0 -> 1/2 ; ranks: 0 0 0 0 0 -> 0 ; ranks: 1 0 1 0 0 -> 1/1
    got = metrics.reciprocal_rank(np.vstack([TUT_REL, _rel([0, 0, 0, 0, 0]), B_REL]))
    assert got.tolist() == [0.5, 0.0, 1.0]


def test_reciprocal_rank_of_empty_ranking() -> None:
    # no rank at all (shape (1, 0)) -> 0
    assert metrics.reciprocal_rank(np.zeros((1, 0), dtype=bool)).tolist() == [0.0]


def test_reciprocal_rank_at_k() -> None:
    # ranks: 0 0 1 0 ; first relevant at 3 -> 0, 0, 1/3, 1/3
    got = metrics.reciprocal_rank_at_k(_rel([0, 0, 1, 0]), 4)
    np.testing.assert_allclose(got, [[0, 0, 1 / 3, 1 / 3]])


def test_dcg_at_k() -> None:
    # gains: 0 1 0 1 0 ; DCG@K = sum gain_i / log2(i+1)
    # K=2: 1/log2(3) ; K=4: 1/log2(3) + 1/log2(5)
    got = metrics.dcg_at_k(_f([0, 1, 0, 1, 0]), 5)
    a, b = 1 / L2(3), 1 / L2(5)
    np.testing.assert_allclose(got, [[0, a, a, a + b, a + b]])


def test_ndcg_at_k_binary() -> None:
    # ranks: 0 1 0 1 0, R = 3 (ideal gains 1 1 1)
    # DCG@5 = 1/log2(3) + 1/log2(5) ; IDCG@5 = 1/log2(2) + 1/log2(3) + 1/log2(4)
    got = metrics.ndcg_at_k(_f([0, 1, 0, 1, 0]), _f([1, 1, 1, 0, 0]), 5)
    expected = (1 / L2(3) + 1 / L2(5)) / (1 + 1 / L2(3) + 1 / L2(4))
    assert got[0, 4] == pytest.approx(expected)
    assert round(float(got[0, 4]), 3) == 0.498  # the tutorial's number
    # K=1: DCG = 0 -> 0 ; K=2: (1/log2(3)) / (1 + 1/log2(3))
    assert got[0, 0] == 0.0
    assert got[0, 1] == pytest.approx((1 / L2(3)) / (1 + 1 / L2(3)))


def test_ndcg_at_k_graded_and_zero_ideal() -> None:
    # grades by rank: 1 0 3 2 ; ideal (judged grades best first): 3 2 1
    # DCG@4 = 1/log2(2) + 3/log2(4) + 2/log2(5) ; IDCG@4 = 3/log2(2) + 2/log2(3) + 1/log2(4)
    # second query: nothing judged relevant -> IDCG = 0 -> nDCG 0
    got = metrics.ndcg_at_k(_f([1, 0, 3, 2], [1, 0, 0, 0]), _f([3, 2, 1], [0, 0, 0]), 4)
    dcg = 1 + 3 / L2(4) + 2 / L2(5)
    idcg = 3 + 2 / L2(3) + 1 / L2(4)
    assert got[0, 3] == pytest.approx(dcg / idcg)
    assert got[1].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_ndcg_without_cutoff_uses_every_judged_document() -> None:
    # ranks: 1 (one document retrieved), ideal 1 1 1 (R = 3)
    # DCG = 1 ; IDCG = 1 + 1/log2(3) + 1/log2(4) -> nDCG < 1 although nDCG@1 = 1
    got = metrics.ndcg(_f([1]), _f([1, 1, 1]))
    assert got[0] == pytest.approx(1 / (1 + 1 / L2(3) + 1 / L2(4)))
    assert metrics.ndcg_at_k(_f([1]), _f([1]), 1)[0, 0] == 1.0


def test_average_precision_at_k() -> None:
    # ranks: 0 1 0 1 0, R = 3 ; P at the relevant ranks: P@2 = 1/2, P@4 = 2/4
    # AP@1 = 0 ; AP@2 = AP@3 = (1/2)/3 ; AP@4 = AP@5 = (1/2 + 2/4)/3 = 1/3
    got = metrics.average_precision_at_k(TUT_REL, TUT_NREL, 5)
    np.testing.assert_allclose(got, [[0, 1 / 6, 1 / 6, 1 / 3, 1 / 3]])


def test_average_precision() -> None:
    # ranks: 1 0 1 0 0, R = 2 ; (1/1 + 2/3) / 2 = 5/6
    # ranks: 0 1 0 1 0, R = 3 ; (1/2 + 2/4) / 3 = 1/3
    got = metrics.average_precision(np.vstack([B_REL, TUT_REL]), np.array([2, 3]))
    np.testing.assert_allclose(got, [5 / 6, 1 / 3])


def test_average_precision_without_relevant_is_zero() -> None:
    # ranks: 1 0 with R = 0 (cannot happen from real data, but must not divide by zero)
    assert metrics.average_precision(_rel([1, 0]), np.array([0])).tolist() == [0.0]


def test_r_precision() -> None:
    # ranks: 0 1 0 1 0, R = 3 ; top 3 = 0 1 0 -> 1/3
    # ranks: 1 0 1 0 0, R = 2 ; top 2 = 1 0 -> 1/2
    # ranks: 1 (1 retrieved), R = 4 ; top 4 = 1 . . . -> 1/4
    rel = np.vstack([TUT_REL, B_REL, _rel([1, 0, 0, 0, 0])])
    got = metrics.r_precision(rel, np.array([3, 2, 4]))
    np.testing.assert_allclose(got, [1 / 3, 1 / 2, 1 / 4])


def test_r_precision_beyond_depth_and_no_relevant() -> None:
    # ranks: 1 0 (depth 2), R = 5 -> hits in top 5 = 1 -> 1/5 ; R = 0 -> 0
    got = metrics.r_precision(_rel([1, 0], [1, 0]), np.array([5, 0]))
    np.testing.assert_allclose(got, [1 / 5, 0.0])


def test_curves_fit_k_max_larger_and_smaller_than_depth() -> None:
    # ranks: 0 1 0 1 0 evaluated at k_max = 2 (truncated) and 7 (padded with non-relevant)
    assert metrics.precision_at_k(TUT_REL, 2).shape == (1, 2)
    wide = metrics.recall_at_k(TUT_REL, TUT_NREL, 7)
    np.testing.assert_allclose(wide[0, 5:], [2 / 3, 2 / 3])


# ---- through ragreport.evaluate -------------------------------------------------------------

ALL = ["P@5", "R@5", "F1@5", "HitRate@1", "HitRate@2", "RR", "RR@1", "RR@2", "nDCG@5",
       "nDCG", "AP", "AP@3", "Rprec", "NumRet", "NumRel", "NumRelRet"]


def test_evaluate_tutorial_query_every_measure() -> None:
    # ranks: 0 1 0 1 0, R = 3
    r = ragreport.evaluate(TUT_QRELS, TUT_RUN, ALL)
    idcg = 1 + 1 / L2(3) + 1 / L2(4)
    expected = {
        "P@5": 2 / 5,                       # 2 relevant in the top 5
        "R@5": 2 / 3,                       # 2 of 3 relevant
        "F1@5": 2 * 2 / (5 + 3),            # 2·hits / (K + R) = 0.5
        "HitRate@1": 0.0,                   # rank 1 is not relevant
        "HitRate@2": 1.0,
        "RR": 1 / 2,                        # first relevant at rank 2
        "RR@1": 0.0,
        "RR@2": 1 / 2,
        "nDCG@5": (1 / L2(3) + 1 / L2(5)) / idcg,
        "nDCG": (1 / L2(3) + 1 / L2(5)) / idcg,  # the ranking is 5 long, IDCG over all 3
        "AP": (1 / 2 + 2 / 4) / 3,          # P@2 and P@4 over R
        "AP@3": (1 / 2) / 3,                # only the relevant rank 2 is within 3
        "Rprec": 1 / 3,                     # top R=3: 0 1 0
        "NumRet": 5.0,
        "NumRel": 3.0,
        "NumRelRet": 2.0,
    }
    assert r.means() == pytest.approx(expected)
    assert list(r.means()) == ALL


def test_evaluate_ndcg_graded_linear_and_exp() -> None:
    # judged: a=3 b=2 c=1 z=0 ; ranking c x a b -> grades by rank: 1 . 3 2 (x unjudged)
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "z": 0}}
    run = {"q": ["c", "x", "a", "b"]}
    r = ragreport.evaluate(qrels, run, ["nDCG@2", "nDCG@4", "nDCG(gain=exp)@4", "nDCG",
                                        "nDCG(gain=exp)"])
    # linear gain = grade
    # DCG@4 = 1/log2(2) + 3/log2(4) + 2/log2(5) ; IDCG@4 = 3 + 2/log2(3) + 1/log2(4)
    dcg4 = 1 + 3 / 2 + 2 / L2(5)
    idcg4 = 3 + 2 / L2(3) + 1 / 2
    # DCG@2 = 1 ; IDCG@2 = 3 + 2/log2(3)
    # exp gain = 2^grade - 1: c=1 a=7 b=3
    # DCG@4 = 1 + 7/log2(4) + 3/log2(5) ; IDCG@4 = 7 + 3/log2(3) + 1/log2(4)
    dcg4e = 1 + 7 / 2 + 3 / L2(5)
    idcg4e = 7 + 3 / L2(3) + 1 / 2
    assert r.means() == pytest.approx({
        "nDCG@2": 1 / (3 + 2 / L2(3)),
        "nDCG@4": dcg4 / idcg4,
        "nDCG(gain=exp)@4": dcg4e / idcg4e,
        "nDCG": dcg4 / idcg4,             # ranking ends at 4, IDCG over the 3 positive grades
        "nDCG(gain=exp)": dcg4e / idcg4e,
    })


def test_evaluate_ndcg_without_cutoff_differs_from_cutoff() -> None:
    # ranks: 1 (one document retrieved), R = 3
    # nDCG@1 = 1/1 ; nDCG = 1 / (1 + 1/log2(3) + 1/log2(4))
    r = ragreport.evaluate({"q": {"a": 1, "b": 1, "c": 1}}, {"q": ["a"]}, ["nDCG@1", "nDCG"])
    assert r.mean("nDCG@1") == 1.0
    assert r.mean("nDCG") == pytest.approx(1 / (1 + 1 / L2(3) + 1 / L2(4)))


def test_evaluate_rprec_ap_rr_on_a_second_ranking() -> None:
    # judged relevant a b c (R = 3) ; ranking a x b c -> ranks: 1 0 1 1
    r = ragreport.evaluate({"q": {"a": 1, "b": 1, "c": 1}}, {"q": ["a", "x", "b", "c"]},
                           ["Rprec", "AP", "AP@2", "RR", "RR@1", "P@4", "R@2"])
    assert r.means() == pytest.approx({
        "Rprec": 2 / 3,                       # top 3: 1 0 1
        "AP": (1 / 1 + 2 / 3 + 3 / 4) / 3,    # P@1, P@3, P@4 over R
        "AP@2": (1 / 1) / 3,
        "RR": 1.0,
        "RR@1": 1.0,
        "P@4": 3 / 4,
        "R@2": 1 / 3,
    })


def test_means_average_over_queries() -> None:
    # q1 ranks: 0 1 0 1 0 (R=3) -> P@5 0.4, RR 1/2 ; q2 ranks: 1 0 (R=1) -> P@5 1/5, RR 1
    qrels = {**TUT_QRELS, "q2": {"e": 1}}
    run = {**TUT_RUN, "q2": ["e", "f"]}
    r = ragreport.evaluate(qrels, run, ["P@5", "RR"])
    assert r.per_query("P@5") == pytest.approx({"q1": 0.4, "q2": 0.2})
    assert r.mean("P@5") == pytest.approx((0.4 + 0.2) / 2)
    assert r.mean("RR") == pytest.approx((0.5 + 1.0) / 2)


# ---- conventions ----------------------------------------------------------------------------

def test_ties_broken_by_doc_id_descending_string_order() -> None:
    # scores: d3 2.0, d2 1.0, d10 1.0 ; tie d2/d10 broken by id descending as strings:
    # "d2" > "d10", so the order is d3 d2 d10 -> relevant d10 at rank 3 -> RR = 1/3
    # (a numeric order would put d10 before d2 and give RR = 1/2)
    r = ragreport.evaluate({"q": {"d10": 1}}, {"q": {"d10": 1.0, "d2": 1.0, "d3": 2.0}},
                           ["RR"])
    assert [d.doc_id for d in r.ranked_list("q")] == ["d3", "d2", "d10"]
    assert r.mean("RR") == pytest.approx(1 / 3)


def test_rank_order_ignores_listing_order_by_default_and_given_keeps_it() -> None:
    # listed a (0.1) then b (0.9), a relevant.
    # order="score": b a -> ranks: 0 1 -> RR 1/2 ; order="given": a b -> ranks: 1 0 -> RR 1
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 0.1, "b": 0.9}}
    assert ragreport.evaluate(qrels, run, ["RR"]).mean("RR") == 0.5
    given = ragreport.evaluate(qrels, run, ["RR"], order="given")
    assert given.mean("RR") == 1.0
    assert [d.doc_id for d in given.ranked_list("q")] == ["a", "b"]


def test_rel_level_and_rel_parameter() -> None:
    # grades by rank: 1 2 (both judged) ; rel_level 1 -> ranks: 1 1 ; level 2 -> ranks: 0 1
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": ["a", "b"]}
    r = ragreport.evaluate(qrels, run, ["P@2", "P(rel=2)@2", "RR", "NumRel", "R(rel=2)@1"])
    assert r.means() == pytest.approx({
        "P@2": 2 / 2, "P(rel=2)@2": 1 / 2, "RR": 1.0, "NumRel": 2.0, "R(rel=2)@1": 0.0})
    hi = ragreport.evaluate(qrels, run, ["P@2", "RR", "NumRel", "nDCG@2"], rel_level=2)
    # nDCG keeps the raw grades as gains whatever rel_level is:
    # DCG@2 = 1 + 2/log2(3) ; IDCG@2 = 2 + 1/log2(3)
    assert hi.means() == pytest.approx({
        "P@2": 1 / 2, "RR": 1 / 2, "NumRel": 1.0,
        "nDCG@2": (1 + 2 / L2(3)) / (2 + 1 / L2(3))})


def test_rel_parameter_curve_exists() -> None:
    # grades by rank: 1 2 ; P(rel=2)@K: ranks: 0 1 -> 0/1, 1/2, 1/3
    r = ragreport.evaluate({"q": {"a": 1, "b": 2}}, {"q": ["a", "b"]}, ["P(rel=2)@3"], k_max=3)
    np.testing.assert_allclose(r.curve("P(rel=2)@3"), [[0, 1 / 2, 1 / 3]])
    np.testing.assert_allclose(r.curve("P"), [[1, 1, 2 / 3]])


def test_negative_grades_are_judged_but_never_relevant() -> None:
    # grades by rank: -1 1 -> ranks: 0 1 ; the -1 has gain 0 in nDCG and is not counted in R
    r = ragreport.evaluate({"q": {"a": -1, "b": 1}}, {"q": ["a", "b"]},
                           ["P@2", "R@2", "NumRel", "nDCG@2", "RR"])
    # DCG@2 = 0 + 1/log2(3) ; IDCG@2 = 1 (ideal: 1, 0)
    assert r.means() == pytest.approx({"P@2": 1 / 2, "R@2": 1.0, "NumRel": 1.0,
                                       "nDCG@2": 1 / L2(3), "RR": 1 / 2})
    # judged, so listed among the judged documents with its grade
    assert ("a", -1.0) in r.judged("q")
    # rel_level=0: grade 0 becomes relevant, -1 still does not
    r0 = ragreport.evaluate({"q": {"a": -1, "b": 0}}, {"q": ["a", "b"]}, ["P@2", "NumRel"],
                            rel_level=0)
    assert r0.means() == pytest.approx({"P@2": 1 / 2, "NumRel": 1.0})


def test_query_without_relevant_document_scores_zero() -> None:
    # q1: grades 0 -> no relevant document -> every measure 0 ; q2 ranks: 1 -> 1
    qrels = {"q1": {"a": 0}, "q2": {"a": 1}}
    run = {"q1": ["a"], "q2": ["a"]}
    r = ragreport.evaluate(qrels, run, ["P@1", "R@1", "nDCG@1", "AP", "RR", "Rprec"])
    assert r.query("q1") == {"P@1": 0.0, "R@1": 0.0, "nDCG@1": 0.0, "AP": 0.0, "RR": 0.0,
                             "Rprec": 0.0}
    assert r.mean("P@1") == 0.5
    assert r.counts.no_relevant == 1
    assert r.counts.evaluated == 2


def test_query_without_relevant_document_skip() -> None:
    qrels = {"q1": {"a": 0}, "q2": {"a": 1}}
    run = {"q1": ["a"], "q2": ["a"]}
    r = ragreport.evaluate(qrels, run, ["P@1"], no_relevant="skip")
    assert r.query_ids == ["q2"]
    assert r.mean("P@1") == 1.0
    assert r.counts.evaluated == 1
    assert r.counts.skipped_no_relevant == 1


def test_query_without_relevant_document_raise() -> None:
    qrels = {"q1": {"a": 0}, "q2": {"a": 1}}
    run = {"q1": ["a"], "q2": ["a"]}
    with pytest.raises(InputError, match=r"^qrels \(dict\): 1 evaluated queries have no "
                       r"relevant document \(grade >= 1\), e\.g\. 'q1'$"):
        ragreport.evaluate(qrels, run, ["P@1"], no_relevant="raise")


def test_skip_with_nothing_left_is_an_error() -> None:
    with pytest.raises(InputError, match="no query left to evaluate"):
        ragreport.evaluate({"q1": {"a": 0}}, {"q1": ["a"]}, ["P@1"], no_relevant="skip")


def test_complete_counts_qrels_only_queries_as_empty_rankings() -> None:
    # q1 ranks: 1 -> P@1 = 1 ; q2 in qrels only ; q3 in the run only (ignored)
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a"], "q3": ["x"]}
    default = ragreport.evaluate(qrels, run, ["P@1", "NumRet"])
    assert default.query_ids == ["q1"]
    assert default.mean("P@1") == 1.0
    c = default.counts
    assert (c.evaluated, c.run_only, c.qrels_only, c.empty_retrievals) == (1, 1, 1, 0)

    full = ragreport.evaluate(qrels, run, ["P@1", "NumRet", "RR", "nDCG"], complete=True)
    # q2: empty ranking -> 0 everywhere ; mean P@1 = (1 + 0) / 2
    assert full.query_ids == ["q1", "q2"]
    assert full.query("q2") == {"P@1": 0.0, "NumRet": 0.0, "RR": 0.0, "nDCG": 0.0}
    assert full.mean("P@1") == 0.5
    c = full.counts
    assert (c.evaluated, c.run_only, c.qrels_only, c.empty_retrievals) == (2, 1, 1, 1)
    assert full.ranked_list("q2") == []
    assert full.missing_relevant("q2") == [("b", 1.0)]


def test_max_depth_cuts_each_ranking() -> None:
    # ranking x y a, a relevant -> ranks: 0 0 1 ; RR = 1/3
    # max_depth=2 -> ranks: 0 0 -> RR = 0, NumRet = 2
    qrels = {"q": {"a": 1}}
    run = {"q": ["x", "y", "a"]}
    assert ragreport.evaluate(qrels, run, ["RR"]).mean("RR") == pytest.approx(1 / 3)
    cut = ragreport.evaluate(qrels, run, ["RR", "NumRet", "P@3"], max_depth=2)
    assert cut.means() == {"RR": 0.0, "NumRet": 2.0, "P@3": 0.0}
    assert [d.doc_id for d in cut.ranked_list("q")] == ["x", "y"]
    assert cut.missing_relevant("q") == [("a", 1.0)]


def test_precision_divides_by_k_when_fewer_retrieved() -> None:
    # ranks: 1 (one document) ; P@5 = 1/5, P@1 = 1
    r = ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["P@1", "P@5"])
    assert r.means() == pytest.approx({"P@1": 1.0, "P@5": 1 / 5})


def test_duplicates_error_and_first() -> None:
    # retrieved b a b, a relevant
    qrels = {"q": {"a": 1}}
    run = [{"query_id": "q", "retrieved": ["b", "a", "b"]}]
    with pytest.raises(InputError, match="document 'b' appears twice for query 'q'"):
        ragreport.evaluate(qrels, run, ["RR"])
    # duplicates="first": ranking b a -> ranks: 0 1 -> RR = 1/2, P@2 = 1/2
    r = ragreport.evaluate(qrels, run, ["RR", "P@2", "NumRet"], duplicates="first")
    assert r.means() == pytest.approx({"RR": 1 / 2, "P@2": 1 / 2, "NumRet": 2.0})
    assert r.counts.duplicates_dropped == 1
    assert [d.doc_id for d in r.ranked_list("q")] == ["b", "a"]


def test_counts_object() -> None:
    # q1 both ; q2 qrels only ; q3 run only ; q4 both, no relevant document
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q4": {"a": 0}}
    run = {"q1": ["a", "a2"], "q3": ["a"], "q4": ["a"]}
    r = ragreport.evaluate(qrels, run, ["P@1"])
    assert r.counts_dict() == {
        "evaluated": 2, "run_only": 1, "qrels_only": 1, "no_relevant": 1,
        "empty_retrievals": 0, "duplicates_dropped": 0, "skipped_no_relevant": 0,
        "run_queries": 3, "qrels_queries": 3, "identical_ids_dropped": 0,
    }


def test_k_max_default_and_explicit() -> None:
    qrels, run = {"q": {"a": 1}, "r": {"b": 1}}, {"q": ["a"], "r": ["c", "b"]}
    assert ragreport.evaluate(qrels, run, ["P@5"]).k_max == 20
    big = ragreport.evaluate(qrels, run, ["P@5", "nDCG@30"])
    # k_max 30 asked (the largest cutoff), but the rankings are 2 deep: the curves stop at 20
    # (never wider than the deepest ranking, at least 20) and say so; nDCG@30 is still there
    assert big.k_max == 20 and big.conventions.k_max == 30
    assert big.conventions.curve_width == 20
    assert big.curve("nDCG").shape == (2, 20)
    assert "curves" in big.conventions.describe()
    assert big.values("nDCG@30").tolist() == big.curve("nDCG")[:, -1].tolist()
    assert "curves" not in ragreport.evaluate(qrels, run, ["P@5"]).conventions.describe()
    small = ragreport.evaluate(qrels, run, ["P@3"], k_max=3)
    assert small.k_max == 3
    assert small.curve("P").shape == (2, 3)
    # q ranks: 1 ; r ranks: 0 1 -> P@K rows: [1, 1/2, 1/3], [0, 1/2, 1/3]
    np.testing.assert_allclose(small.curve("P"), [[1, 1 / 2, 1 / 3], [0, 1 / 2, 1 / 3]])
    np.testing.assert_allclose(small.mean_curve("P"), [1 / 2, 1 / 2, 1 / 3])


def test_k_max_smaller_than_a_cutoff_is_an_error() -> None:
    with pytest.raises(MeasureError, match=r"^k_max \(10\) is smaller than the cutoff of P@30$"):
        ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["P@30"], k_max=10)


def test_curve_shapes_and_families() -> None:
    r = ragreport.evaluate(TUT_QRELS, TUT_RUN, ["P@5"], k_max=6)
    for fam in ("P", "R", "F1", "HitRate", "RR", "nDCG", "AP"):
        assert r.curve(fam).shape == (1, 6), fam
    # ranks: 0 1 0 1 0 ; RR@K = 0, 1/2, 1/2, ...
    np.testing.assert_allclose(r.curve("RR")[0], [0, 0.5, 0.5, 0.5, 0.5, 0.5])
    np.testing.assert_allclose(r.curve("R@5")[0], [0, 1 / 3, 1 / 3, 2 / 3, 2 / 3, 2 / 3])
    with pytest.raises(MeasureError, match="Rprec has no cutoff, so no metric-vs-K curve"):
        r.curve("Rprec")


# ---- the result object ----------------------------------------------------------------------

@pytest.fixture
def result() -> EvaluationResult:
    # q1 ranks: 0 1 0 1 0 (R = 3: d3 d7 d12, d12 never retrieved) ; q2 ranks: 1 (R = 2)
    qrels = {"q1": {"d3": 1, "d7": 2, "d12": 1, "d5": 0}, "q2": {"e": 1, "f": 1}}
    run = {"q1": {"d1": 5.0, "d3": 4.0, "d5": 3.0, "d7": 2.0, "d9": 1.0}, "q2": {"e": 1.5}}
    return ragreport.evaluate(qrels, run, ["P@5", "RR", "AP"], name="<b>bm25</b> & co")


def test_result_values_and_means(result: EvaluationResult) -> None:
    assert result.query_ids == ["q1", "q2"]
    assert result.n_queries == 2
    # P@5: q1 2/5, q2 1/5 ; RR: 1/2, 1 ; AP: (1/2 + 2/4)/3, (1/1)/2
    np.testing.assert_allclose(result.values("P@5"), [2 / 5, 1 / 5])
    np.testing.assert_allclose(result.values("precision@5"), [2 / 5, 1 / 5])  # alias
    assert result.mean("RR") == pytest.approx(0.75)
    assert result.means() == pytest.approx({"P@5": 0.3, "RR": 0.75, "AP": (1 / 3 + 1 / 2) / 2})
    assert result.means(["HitRate@1"]) == {"HitRate@1": 0.5}
    assert result.per_query("AP") == pytest.approx({"q1": 1 / 3, "q2": 1 / 2})
    assert result.query("q2") == pytest.approx({"P@5": 0.2, "RR": 1.0, "AP": 0.5})


def test_result_errors(result: EvaluationResult) -> None:
    with pytest.raises(RagReportError, match="query 'nope' was not evaluated"):
        result.query("nope")
    # beyond the curves: computed from the whole rankings (q1: 2 relevant retrieved, q2: 1)
    assert result.values("P@30").tolist() == [2 / 30, 1 / 30]
    with pytest.raises(MeasureError, match="NumRet was not computed; pass it in measures="):
        result.values("NumRet")


def test_result_ranked_list(result: EvaluationResult) -> None:
    ranked = result.ranked_list("q1")
    assert [(d.rank, d.doc_id, d.score, d.grade, d.relevant) for d in ranked] == [
        (1, "d1", 5.0, None, False),
        (2, "d3", 4.0, 1.0, True),
        (3, "d5", 3.0, 0.0, False),
        (4, "d7", 2.0, 2.0, True),
        (5, "d9", 1.0, None, False),
    ]
    assert [d.doc_id for d in result.ranked_list("q1", limit=2)] == ["d1", "d3"]


def test_result_ranked_list_without_scores() -> None:
    r = ragreport.evaluate({"q": {"a": 1}}, {"q": ["b", "a"]}, ["RR"])
    assert [(d.doc_id, d.score) for d in r.ranked_list("q")] == [("b", None), ("a", None)]


def test_result_judged_and_missing_relevant(result: EvaluationResult) -> None:
    judged = result.judged("q1")
    assert judged[0] == ("d7", 2.0)  # best grade first
    assert sorted(judged) == [("d12", 1.0), ("d3", 1.0), ("d5", 0.0), ("d7", 2.0)]
    assert result.missing_relevant("q1") == [("d12", 1.0)]
    assert result.missing_relevant("q2") == [("f", 1.0)]


def test_result_to_dict(result: EvaluationResult) -> None:
    d = result.to_dict()
    assert d["run"] == "<b>bm25</b> & co"
    assert d["queries"] == 2
    assert d["k_max"] == 20
    assert d["means"] == pytest.approx({"P@5": 0.3, "RR": 0.75, "AP": 5 / 12})
    assert d["counts"]["evaluated"] == 2
    assert d["conventions"]["order"] == "score"
    assert "per_query" not in d
    pq = result.to_dict(per_query=True)["per_query"]
    assert pq["q2"] == pytest.approx({"P@5": 0.2, "RR": 1.0, "AP": 0.5})


def test_result_repr_html_escapes_run_name(result: EvaluationResult) -> None:
    html = result._repr_html_()
    assert "&lt;b&gt;bm25&lt;/b&gt; &amp; co" in html
    assert "<b>bm25</b>" not in html
    assert "<td>P@5</td><td style='text-align:right'>0.3000</td>" in html
    assert "2 queries evaluated" in html


def test_result_repr(result: EvaluationResult) -> None:
    assert repr(result).startswith("<EvaluationResult run='<b>bm25</b> & co' queries=2 ")
    assert "P@5=0.3000" in repr(result)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"order": "rank"}, "order must be one of 'score', 'given', got 'rank'"),
        ({"no_relevant": "drop"}, "no_relevant must be one of 'zero', 'skip', 'raise', "
                                  "got 'drop'"),
        ({"duplicates": "last"}, "duplicates must be one of 'error', 'first', got 'last'"),
        ({"max_depth": 0}, "max_depth must be >= 1, got 0"),
        ({"k_max": 0}, "k_max must be >= 1, got 0"),
        ({"rel_level": 1.5}, "rel_level must be an integer >= 0, got 1.5"),
        ({"rel_level": -1}, "rel_level must be >= 0, got -1"),
    ],
    ids=["order", "no_relevant", "duplicates", "max_depth", "k_max", "rel_level",
         "rel_level_negative"],
)
def test_invalid_options(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(RagReportError) as info:
        ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["P@1"], **kwargs)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


# ---- memory bounded by the input: sparse forms, any cutoff, curves' width --------------------

def _random_inputs(seed: int, n_q: int = 12, depth: int = 15) -> tuple[
        dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_q):
        judged = rng.choice(40, int(rng.integers(0, 25)), replace=False)
        qrels[f"q{q}"] = {f"d{d}": int(rng.integers(-1, 4)) for d in judged}
        n = int(rng.integers(0 if q else depth, depth + 1))  # q0 is the deepest
        docs = rng.choice(40, n, replace=False)
        run[f"q{q}"] = {f"d{d}": float(np.round(rng.random(), 1)) for d in docs}
    qrels["q0"].setdefault("d0", 1)
    return qrels, run


CUT_FAMILIES = ("P", "R", "F1", "HitRate", "RR", "nDCG", "AP")


@pytest.mark.parametrize("seed", range(6))
def test_cutoffs_beyond_the_curves_equal_wide_curves_bit_for_bit(seed: int) -> None:
    """Values at K past the curves (from the sparse forms) are the columns that curves
    computed that wide would hold: same bits, for every family, rel level and gain."""
    qrels, run = _random_inputs(seed)
    measures = [f"{f}{p}@{k}" for f in CUT_FAMILIES for k in (1, 7, 15, 16, 23, 40)
                for p in ("", "(rel=2)" if f != "nDCG" else "(gain=exp)")]
    narrow = ragreport.evaluate(qrels, run, measures, k_max=40, _curve_width=5)
    wide = ragreport.evaluate(qrels, run, measures, k_max=40, _curve_width=40)
    assert narrow.k_max == 5 and wide.k_max == 40
    for m in measures:
        assert narrow.values(m).tobytes() == wide.values(m).tobytes(), m
    # whole-ranking measures (sparse) = the last column of curves wider than every ranking
    # and every query's judged documents (15 and at most 26 here)
    for f in ("RR", "AP", "nDCG", "nDCG(gain=exp)"):
        a = ragreport.evaluate(qrels, run, [f], k_max=40, _curve_width=5).values(f)
        assert a.tobytes() == wide.curve(f)[:, -1].tobytes(), f


@pytest.mark.parametrize("seed", range(4))
def test_sparse_functions_equal_the_dense_curves(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rel = rng.random((7, 9)) < 0.35
    rel[3] = False  # a query without a relevant document retrieved
    n_rel = rel.sum(axis=1) + rng.integers(0, 3, 7)
    gains = np.where(rng.random((7, 9)) < 0.4, rng.integers(1, 4, (7, 9)), 0).astype(float)
    ideal = -np.sort(-np.concatenate([gains, rng.integers(0, 4, (7, 5)).astype(float)],
                                     axis=1), axis=1)
    qi, pos = np.nonzero(rel)
    gq, gp = np.nonzero(gains)
    iq, ip = np.nonzero(ideal)
    k_max = 20
    dense = {
        "P": metrics.precision_at_k(rel, k_max),
        "R": metrics.recall_at_k(rel, n_rel, k_max),
        "F1": metrics.f1_at_k(rel, n_rel, k_max),
        "HitRate": metrics.hit_rate_at_k(rel, k_max),
        "RR": metrics.reciprocal_rank_at_k(rel, k_max),
        "AP": metrics.average_precision_at_k(rel, n_rel, k_max),
        "nDCG": metrics.ndcg_at_k(gains, ideal, k_max),
    }
    for k in range(1, k_max + 1):
        sparse = {
            "P": metrics.precision_at(7, qi, pos, k),
            "R": metrics.recall_at(7, qi, pos, n_rel, k),
            "F1": metrics.f1_at(7, qi, pos, n_rel, k),
            "HitRate": metrics.hit_rate_at(7, qi, pos, k),
            "RR": metrics.reciprocal_rank_at(7, qi, pos, k),
            "AP": metrics.average_precision_at(7, qi, pos, n_rel, k),
            "nDCG": metrics.ndcg_at(7, gq, gp, gains[gq, gp], iq, ip, ideal[iq, ip], k),
        }
        for name, values in sparse.items():
            assert values.tobytes() == dense[name][:, k - 1].tobytes(), (name, k)


def test_past_the_end_of_every_ranking() -> None:
    # ranks: 1 0 1 (R = 4 judged relevant, grades 3 2 1 1) ; depth 3, K = 10**15 and 2**53
    qrels = {"q": {"a": 1, "b": 0, "c": 3, "x": 2, "y": 1}}
    run = {"q": ["a", "b", "c"]}
    r = ragreport.evaluate(qrels, run, ["P@3", "nDCG"], k_max=2**53)
    assert r.k_max == 20 and r.conventions.k_max == 2**53
    for k in (10**15, 2**53):
        assert r.values(f"P@{k}").tolist() == [2 / k]
        assert r.values(f"R@{k}").tolist() == [2 / 4]
        assert r.values(f"HitRate@{k}").tolist() == [1.0]
        assert r.values(f"RR@{k}").tolist() == [1.0]
        assert r.values(f"AP@{k}").tolist() == r.values("AP").tolist()
        assert r.values(f"nDCG@{k}").tolist() == r.values("nDCG").tolist()
    # nDCG past the depth: DCG of the whole ranking / IDCG@min(K, judged relevant); IDCG still
    # grows at K = 4 and 5 (judged relevant documents remain) though the ranking ends at 3
    dcg = 1 / L2(2) + 3 / L2(4)
    ideal = [3, 2, 1, 1]
    for k in (3, 4, 5, 6):
        idcg = sum(g / L2(i + 2) for i, g in enumerate(ideal[:k]))
        assert r.values(f"nDCG@{k}")[0] == pytest.approx(dcg / idcg, rel=1e-15)
    assert r.values("nDCG@4")[0] < r.values("nDCG@3")[0]


def test_values_beyond_the_curves_need_the_family() -> None:
    r = ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["P@1"])
    with pytest.raises(MeasureError, match=r"no curve for P\(rel=2\)"):
        r.values("P(rel=2)@30")


def test_curve_width_stops_at_the_deepest_ranking_and_the_input() -> None:
    from ragreport.core.align import align
    from ragreport.core.engine import curve_width
    from ragreport.io import load_qrels, load_run

    def width(depths: list[int], k_max: int) -> int:
        run = {f"q{i}": [f"d{j}" for j in range(n)] for i, n in enumerate(depths)}
        qrels = {f"q{i}": {"d0": 1} for i in range(len(depths))}
        return curve_width(k_max, align(load_qrels(qrels), load_run(run)))

    assert width([3, 5], 10**9) == 20          # at least 20
    assert width([3, 5], 7) == 7               # k_max when smaller
    assert width([300, 5], 10**9) == 300       # the deepest ranking
    assert width([300, 5], 100) == 100
    # one deep query among many short ones: queries x width stays within max(2**20, rows)
    assert width([3000] + [1] * 2000, 10**9) == (1 << 20) // 2001


def test_skewed_input_allocates_by_the_input_not_queries_times_depth() -> None:
    """2,000 queries, one 30,000 deep: a (queries x depth) float matrix would be 480 MB; the
    curves are 524 wide (2**20 cells each, 8 MB)."""
    import tracemalloc

    run = {f"q{i}": [f"d{j}" for j in range(30_000 if i == 7 else 5)] for i in range(2000)}
    qrels = {f"q{i}": {"d1": 1, "d4": 2} for i in range(2000)}
    qrels["q11"] = {f"d{j}": 1 for j in range(0, 60_000, 2)}  # 30,000 judged
    loaded_q, loaded_r = ragreport.load_qrels(qrels), ragreport.load_run(run)
    tracemalloc.start()
    try:
        r = ragreport.evaluate(loaded_q, loaded_r, ["P@10", "nDCG@1000000000", "AP", "nDCG",
                                                   "RR", "Rprec", "R@100000"], k_max=10**9)
        means = r.means()
        curves = {f: r.mean_curve(f) for f in CUT_FAMILIES}
        from ragreport.diagnose import failure_kinds

        failure_kinds(r, 10**9)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 160 << 20, peak
    assert r.k_max == (1 << 20) // 2000 and all(len(c) == r.k_max for c in curves.values())
    # q11 retrieves d0 d2 d4 of its 30,000 judged ; every other query both of its 2
    assert means["R@100000"] == pytest.approx((1999 + 3 / 30_000) / 2000, rel=1e-12)
    assert means["P@10"] == pytest.approx((1999 * 0.2 + 0.3) / 2000, rel=1e-12)


# ---- gains never overflow --------------------------------------------------------------------

def _exact_ndcg(ranked: list[int], judged: list[int], k: int | None, exp: bool) -> float:
    """nDCG with exact rational gains; the discounts 1/log2(i+1) as exact fractions of the
    float64 values the metric uses."""
    from fractions import Fraction

    def gain(g: int) -> Fraction:
        return Fraction(2) ** g - 1 if exp else Fraction(g)

    def disc(i: int) -> Fraction:
        return Fraction(float(1.0 / np.log2(np.float64(i + 2))))

    top = ranked if k is None else ranked[:k]
    ideal = sorted((g for g in judged if g > 0), reverse=True)
    ideal = ideal if k is None else ideal[:k]
    dcg = sum((gain(g) * disc(i) for i, g in enumerate(top) if g > 0), Fraction(0))
    idcg = sum((gain(g) * disc(i) for i, g in enumerate(ideal)), Fraction(0))
    return float(dcg / idcg) if idcg else 0.0


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("top", [2000, 1023, 1025, 901, 5000, 2**53 - 1])
def test_exp_gain_with_huge_grades_is_finite_and_exact(top: int) -> None:
    # ranks: grades top-1, 1, top, 0 (unjudged), 2 ; judged also a grade-top document never
    # retrieved
    qrels = {"q": {"a": top - 1, "b": 1, "c": top, "d": 2, "e": top, "z": 0},
             "small": {"a": 1, "b": 3}}
    run = {"q": ["a", "b", "c", "u", "d"], "small": ["a", "b"]}
    r = ragreport.evaluate(qrels, run, ["nDCG(gain=exp)", "nDCG(gain=exp)@3", "nDCG@3"])
    ranked = [top - 1, 1, top, 0, 2]
    judged = list(qrels["q"].values())
    for name, k in (("nDCG(gain=exp)", None), ("nDCG(gain=exp)@3", 3)):
        v = r.values(name)
        assert np.all(np.isfinite(v)) and np.all((v >= 0) & (v <= 1)), (name, v)
        if top <= 5000:  # exact rationals of 2^top: small enough to compute
            assert v[0] == pytest.approx(_exact_ndcg(ranked, judged, k, True), rel=1e-12)
        else:  # in units of 2^top only grades top and top - 1 count (the rest vanish):
            # DCG = 1/2 / log2 2 + 1 / log2 4 ; IDCG = 1 + 1 / log2 3 + (1/2) / log2 4
            assert v[0] == pytest.approx(1.0 / (1 + 1 / L2(3) + 0.25), rel=1e-12)
        assert v[1] == pytest.approx(_exact_ndcg([1, 3], [1, 3], k, True), rel=1e-15)
    curve = r.curve("nDCG(gain=exp)")
    assert np.all(np.isfinite(curve)) and np.all((curve >= 0) & (curve <= 1 + 1e-12))
    assert r.values("nDCG@3")[0] == pytest.approx(_exact_ndcg(ranked, judged, 3, False))


def test_exp_gain_of_ordinary_grades_is_unchanged() -> None:
    """Grades up to EXP_HEADROOM are unscaled: exactly 2^grade - 1, as before."""
    grades = np.array([1.0, 2.0, 3.0, 10.0, 900.0])
    shift = metrics.gain_shift(-np.sort(-grades), np.array([0, 5]), "exp")
    assert shift.tolist() == [0.0]
    assert metrics.gain_of(grades, np.zeros(5), "exp").tobytes() == \
        (np.exp2(grades) - 1.0).tobytes()
    assert metrics.gain_shift(np.array([901.0]), np.array([0, 1]), "exp").tolist() == [1.0]
    assert metrics.gain_shift(np.array([5000.0]), np.array([0, 1]), "linear").tolist() == [0.0]


@pytest.mark.filterwarnings("error")
def test_linear_gain_near_2_53_over_200000_documents_stays_finite() -> None:
    big = 2**53 - 1
    n = 200_000
    qrels = {"q": {f"d{i}": big - i for i in range(n)}}
    run = {"q": [f"d{i}" for i in range(n - 1, -1, -1)]}  # worst order first
    r = ragreport.evaluate(qrels, run, ["nDCG", "nDCG@100000", "nDCG(gain=exp)"])
    for m in ("nDCG", "nDCG@100000", "nDCG(gain=exp)"):
        v = r.values(m)
        assert np.all(np.isfinite(v)) and 0 < v[0] <= 1, (m, v)
    assert np.all(np.isfinite(r.curve("nDCG")))
