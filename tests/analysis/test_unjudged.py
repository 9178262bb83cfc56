"""Unjudged bounds: a run evaluated with its unjudged documents read as not relevant (trec_eval)
and as relevant at a grade, exactly as each measure defines itself."""

from __future__ import annotations

import random

import numpy as np
import pytest

import ragreport
from ragreport.analysis.unjudged import unjudged_bounds
from ragreport.errors import RagReportError
from ragreport.measures import model, parse_measure


def registry_measures() -> list[str]:
    """One measure of every family of the registry (at K = 3 where it takes a cutoff)."""
    names = []
    for family in model.FAMILIES:
        for name in (f"{family}@3", family, f"{family}@0.5", f"{family}(p=0.8)@3"):
            try:
                parse_measure(name)
            except RagReportError:
                continue
            names.append(name)
            break
        else:
            raise AssertionError(f"no measure of family {family} parses")
    return names


def naive_filled(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]],
                 grade: int, depth: int | None) -> dict[str, dict[str, int]]:
    """The filled qrels built by hand: each judged query's ranking in trec_eval's order
    (score descending, document id descending), cut at ``depth``, its unjudged documents
    added at ``grade``."""
    out = {q: dict(j) for q, j in qrels.items()}
    for q, docs in run.items():
        if q not in qrels:
            continue
        ranked = sorted(sorted(docs, reverse=True), key=lambda d: -docs[d])
        for d in ranked[:depth]:
            out[q].setdefault(d, grade)
    return out


def random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(12)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in ("q1", "q2", "q3", "q4"):
        judged = rng.sample(pool, rng.randint(1, 6))
        qrels[q] = {d: rng.choice([0, 0, 1, 2, 3]) for d in judged}
        retrieved = rng.sample(pool, rng.randint(0, 9))
        run[q] = {d: float(rng.choice([1, 2, 3, 3, 4])) for d in retrieved}  # with ties
    run["q_run_only"] = {"d1": 1.0}
    return qrels, run


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("depth", [None, 4])
def test_every_measure_equals_the_hand_filled_qrels(seed: int, depth: int | None) -> None:
    qrels, run = random_case(seed)
    names = registry_measures()
    b = unjudged_bounds(qrels, run, names, max_depth=depth)
    grade = max(g for j in qrels.values() for g in j.values()) or 1
    assert b.grade == max(grade, 1)
    want_filled = ragreport.evaluate(naive_filled(qrels, run, int(b.grade), depth), run,
                                     names, max_depth=depth)
    want_judged = ragreport.evaluate(qrels, run, names, max_depth=depth)
    assert b.query_ids == want_judged.query_ids
    for name in names:
        a = want_judged.values(name)
        f = want_filled.values(name)[[want_filled.query_ids.index(q) for q in b.query_ids]]
        lo, hi = b.values(name)
        np.testing.assert_array_equal(lo, np.minimum(a, f), err_msg=name)
        np.testing.assert_array_equal(hi, np.maximum(a, f), err_msg=name)
        assert b.interval(name) == pytest.approx((lo.mean(), hi.mean()))
    # the unjudged documents counted are those of the evaluated (cut) rankings
    for i, q in enumerate(b.query_ids):
        ranked = sorted(sorted(run.get(q, {}), reverse=True), key=lambda d, q=q: -run[q][d])
        assert b.n_unjudged[i] == sum(d not in qrels[q] for d in ranked[:depth])


def test_hand_derived_precision_and_an_ndcg_that_goes_down() -> None:
    # P@2: d1 relevant, d2 unjudged: 1/2 read as not relevant, 2/2 read as relevant
    b = unjudged_bounds({"q": {"d1": 1, "d3": 1}}, {"q": ["d1", "d2", "d3"]}, ["P@2"])
    assert b.interval("P@2") == (0.5, 1.0)
    # nDCG@4: the one relevant document (grade 3) first, then two judged 0 and one unjudged.
    # Read as relevant at grade 3, the unjudged document enters the ideal ranking at rank 2:
    # DCG = 3 + 3/log2(5), IDCG = 3 + 3/log2(3), so nDCG falls from 1 to 0.8772
    b = unjudged_bounds({"q": {"d1": 3, "x": 0, "y": 0}}, {"q": ["d1", "x", "y", "u"]},
                        ["nDCG@4"])
    want = (3 + 3 / np.log2(5)) / (3 + 3 / np.log2(3))
    assert b.judged.values("nDCG@4")[0] == 1.0
    assert b.filled.values("nDCG@4")[0] == pytest.approx(want)
    assert b.interval("nDCG@4") == pytest.approx((want, 1.0))
    assert b.grade == 3.0 and b.n_unjudged.tolist() == [1]
    # the curves: the same ends at every K
    lo, hi = b.curves("nDCG")
    assert lo[0, 3] == pytest.approx(want) and hi[0, 3] == 1.0 and lo.shape == hi.shape


def test_a_stated_grade_and_max_depth() -> None:
    qrels = {"q": {"a": 2, "b": 0}}
    run = {"q": ["a", "u1", "b", "u2"]}
    b = unjudged_bounds(qrels, run, ["P@4"], grade=1)
    assert b.grade == 1.0 and b.n_unjudged.tolist() == [2]
    assert b.interval("P@4") == (0.25, 0.75)
    cut = unjudged_bounds(qrels, run, ["P@4"], max_depth=2)
    assert cut.n_unjudged.tolist() == [1]  # u2 is beyond the depth: never filled
    assert cut.interval("P@4") == (0.25, 0.5)


def test_a_query_skipped_without_relevant_judgments_is_left_out_of_both() -> None:
    qrels = {"q": {"a": 1}, "none": {"x": 0}}
    run = {"q": ["a", "u"], "none": ["x", "u"]}
    b = unjudged_bounds(qrels, run, ["P@2"], no_relevant="skip")
    assert b.query_ids == ["q"] and b.filled.query_ids == ["q"]
    assert b.interval("P@2") == (0.5, 1.0)


@pytest.mark.parametrize(("grade", "message"), [
    (0, "grade must be at least rel_level (1) to read an unjudged document as relevant, got 0"),
    (True, "grade must be a number, got True"),
    (float("nan"), "grade must be a number, got nan"),
])
def test_bad_grades_are_refused(grade: object, message: str) -> None:
    with pytest.raises(RagReportError, match=message.replace("(", r"\(").replace(")", r"\)")):
        unjudged_bounds({"q": {"a": 1}}, {"q": ["a"]}, grade=grade)  # type: ignore[arg-type]


def test_doc_map_is_refused() -> None:
    with pytest.raises(RagReportError, match="not available with doc_map"):
        unjudged_bounds({"q": {"a": 1}}, {"q": ["a#1"]}, doc_map={"a#1": "a"})


def test_the_facade_names_it() -> None:
    assert ragreport.unjudged_bounds is unjudged_bounds
    assert ragreport.UnjudgedBounds.__name__ == "UnjudgedBounds"


@pytest.mark.parametrize("compat", ["trec_eval", "beir", "ranx", "llamaindex", "mteb"])
def test_a_peer_preset_reads_both_the_same_way(compat: str) -> None:
    """The filled reading is evaluated again from the result's rankings under its resolved
    conventions: a preset's grades, order and precision apply to both readings alike."""
    qrels, run = random_case(5)
    qrels["q1"]["d0"] = 3
    names = ["P@3", "nDCG@3", "RR", "AP"]
    b = unjudged_bounds(qrels, run, names, compat=compat)
    grade = int(b.grade)
    want = ragreport.evaluate(naive_filled(qrels, run, grade if compat != "llamaindex" else 3,
                                           None), run, names, compat=compat)
    for name in names:
        f = want.values(name)[[want.query_ids.index(q) for q in b.query_ids]]
        np.testing.assert_allclose(b.filled.values(name), f, err_msg=name)


def test_bounds_of_a_result() -> None:
    from ragreport.analysis.unjudged import bounds_of

    r = ragreport.evaluate({"q": {"d1": 1, "d3": 1}}, {"q": ["d1", "d2", "d3"]}, ["P@2"])
    assert bounds_of(r).interval("P@2") == (0.5, 1.0)
    assert bounds_of(r, grade=2).grade == 2.0
