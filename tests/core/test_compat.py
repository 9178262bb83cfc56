"""``compat`` presets and ``ignore_identical_ids``: each preset gives the peer's own numbers on
the peer's own test cases (transcribed, with their source), the identical-ids rule equals
dropping the rows by hand (and pytrec_eval on the filtered run), and the preset is named
wherever conventions are shown.

Sources (inputs and expected values copied as the peers wrote them):

- MTEB: embeddings-benchmark/mteb tests/test_evaluators/test_RetrievalEvaluator.py and
  tests/test_evaluators/test_evaluation_metrics.py @ a905523d0111f999360b312bd4a601a0a97a0e1c
  https://github.com/embeddings-benchmark/mteb/blob/a905523d0111f999360b312bd4a601a0a97a0e1c/tests/test_evaluators/test_RetrievalEvaluator.py
- BEIR ships no test of its evaluation (beir-cellar/beir @ ef83d29307061c65d04b035b4f4e7c18bd8374af
  has no tests folder): :func:`beir_evaluate` below is its ``EvaluateRetrieval.evaluate``
  (beir/retrieval/evaluation.py) step by step on pytrec_eval, and MTEB's cases above, whose
  evaluator is BEIR's code, are checked with ``compat="beir"`` too.
- ranx: AmenRa/ranx tests/unit/ranx/metrics_test.py @ 2cae52f00c2c15136a07d573027744109792604d
  https://github.com/AmenRa/ranx/blob/2cae52f00c2c15136a07d573027744109792604d/tests/unit/ranx/metrics_test.py
- LlamaIndex: run-llama/llama_index llama-index-core/tests/evaluation/test_metrics.py
  @ 0f3f958281abdffb18e2ef543460a93b31195a35
  https://github.com/run-llama/llama_index/blob/0f3f958281abdffb18e2ef543460a93b31195a35/llama-index-core/tests/evaluation/test_metrics.py
"""

from __future__ import annotations

import json
import re
from math import log2
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytrec_eval

import ragreport
from ragreport import evaluate
from ragreport.compat import PRESETS, check_compat, resolve
from ragreport.errors import ConfigError, RagReportError

# ---- MTEB ------------------------------------------------------------------------------

MTEB_QRELS = {"0": {"0": 1, "1": 1}, "1": {"1": 1}}
MTEB_RESULTS = {"0": {"0": 1.0, "1": 0.9, "2": 0.8}, "1": {"0": 0.0, "1": 1.0, "2": 0.0}}
MTEB_CASES = [
    (False, {"NDCG@1": 1.0, "NDCG@2": 1.0, "NDCG@3": 1.0},
     {"MAP@1": 0.75, "MAP@2": 1.0, "MAP@3": 1.0},
     {"Recall@1": 0.75, "Recall@2": 1.0, "Recall@3": 1.0},
     {"P@1": 1.0, "P@2": 0.75, "P@3": 0.5}),
    # "Test no self retrieval"
    (True, {"NDCG@1": 0.5, "NDCG@2": 0.30657, "NDCG@3": 0.30657},
     {"MAP@1": 0.25, "MAP@2": 0.25, "MAP@3": 0.25},
     {"Recall@1": 0.25, "Recall@2": 0.25, "Recall@3": 0.25},
     {"P@1": 0.5, "P@2": 0.25, "P@3": 0.16667}),
]
_OURS = {"NDCG": "nDCG", "MAP": "AP", "Recall": "R", "P": "P"}


def _as_ours(expected: dict[str, float]) -> dict[str, float]:
    out = {}
    for k, v in expected.items():
        fam, cut = k.split("@")
        out[f"{_OURS[fam]}@{cut}"] = v
    return out


@pytest.mark.parametrize("compat", ["mteb", "beir"])
@pytest.mark.parametrize("ignore, ndcg, map_, recall, precision", MTEB_CASES)
def test_mteb_metrics_at_k(compat: str, ignore: bool, ndcg: dict[str, float],
                           map_: dict[str, float], recall: dict[str, float],
                           precision: dict[str, float]) -> None:
    expected = _as_ours({**ndcg, **map_, **recall, **precision})
    r = evaluate(MTEB_QRELS, MTEB_RESULTS, list(expected), compat=compat,
                 ignore_identical_ids=ignore)
    assert r.means() == expected  # exactly: the peers round to 5 decimals
    assert r.counts.identical_ids_dropped == (2 if ignore else 0)


def test_mteb_mrr_tie_break_matches_pytrec_eval() -> None:
    # test_mrr_tiebreak_matches_pytrec_eval and ..._independent_of_insertion_order (#5092)
    qrels = {"q1": {"d_a": 1}}
    tied = {"d_a": 0.5, "d_x": 0.5, "d_y": 0.5}
    forward = evaluate(qrels, {"q1": tied}, ["RR@10"], compat="mteb").mean("RR@10")
    backward = evaluate(qrels, {"q1": dict(reversed(tied.items()))}, ["RR@10"],
                        compat="mteb").mean("RR@10")
    assert forward == backward == 1 / 3  # MTEB's mrr is not rounded


def test_mteb_recall_cap_counts_capped_relevant_hits() -> None:
    # test_recall_cap_counts_capped_relevant_hits
    qrels = {"q1": {"d1": 1, "d2": 1, "d3": 0}}
    results = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}
    assert evaluate(qrels, results, ["R_cap@10"], compat="mteb").means() == {"R_cap@10": 1.0}


def test_mteb_empty_results_count_as_zero(tmp_path: Path) -> None:
    # MTEB's search returns {qid: {} for every query} (mteb/models/search_wrappers.py): a query
    # with nothing retrieved scores 0 in every mean (pytrec_eval evaluates it, mrr appends 0)
    qrels = {"a": {"x": 1}, "b": {"y": 1}}
    results: dict[str, dict[str, float]] = {"a": {"x": 1.0}, "b": {}}
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(results)
    mteb = round(sum(v["ndcg_cut_10"] for v in scores.values()) / len(scores), 5)
    assert mteb == 0.5
    assert evaluate(qrels, results, ["nDCG@10"], compat="mteb").means() == {"nDCG@10": 0.5}
    # the same results written as a TREC run lose the empty query: still 0 under "mteb"
    (tmp_path / "run.txt").write_text("a Q0 x 1 1.0 t\n")
    r = evaluate(qrels, str(tmp_path / "run.txt"), ["nDCG@10", "RR@10"], compat="mteb")
    assert r.means() == {"nDCG@10": 0.5, "RR@10": 0.5} and r.conventions.complete
    from ragreport.core.stream import evaluate_stream

    s = evaluate_stream(qrels, tmp_path / "run.txt", ["nDCG@10"], compat="mteb")
    assert s.means() == {"nDCG@10": 0.5}
    plain = evaluate(qrels, str(tmp_path / "run.txt"), ["nDCG@10"])
    assert plain.means() == {"nDCG@10": 1.0}
    r = evaluate(qrels, str(tmp_path / "run.txt"), ["nDCG@10"], compat="mteb", complete=False)
    assert r.means() == {"nDCG@10": 1.0}
    assert "except complete=False" in r.conventions.describe()["compat"]


def test_mteb_defaults_and_rounding() -> None:
    r = evaluate(MTEB_QRELS, MTEB_RESULTS, compat="mteb")
    names = [str(m) for m in r.measures]
    assert names[:7] == [f"nDCG@{k}" for k in (1, 3, 5, 10, 20, 100, 1000)]
    assert "RR@10" in names and "HitRate@1000" in names and len(names) == 42
    # MRR is a plain mean in MTEB; nDCG is rounded to 5 decimals
    qrels = {"a": {"x": 1}, "b": {"y": 1}, "c": {"z": 1}}
    run = {"a": ["w", "v", "x"], "b": ["y"], "c": ["y", "z"]}
    r = evaluate(qrels, run, ["RR@10", "nDCG@10"], compat="mteb", order="score")
    rr = evaluate(qrels, run, ["RR@10", "nDCG@10"])
    assert r.mean("RR@10") == rr.mean("RR@10") == (1 / 3 + 1 + 1 / 2) / 3
    assert r.mean("nDCG@10") == round(rr.mean("nDCG@10"), 5) != rr.mean("nDCG@10")
    np.testing.assert_array_equal(r.values("nDCG@10"), rr.values("nDCG@10"))  # never rounded


# ---- BEIR ------------------------------------------------------------------------------


def beir_evaluate(qrels: dict[str, dict[str, int]], results: dict[str, dict[str, float]],
                  k_values: list[int], ignore_identical_ids: bool = True) -> dict[str, float]:
    """beir/retrieval/evaluation.py EvaluateRetrieval.evaluate @ ef83d29, step by step."""
    results = {q: dict(d) for q, d in results.items()}
    if ignore_identical_ids:
        for qid, rels in results.items():
            for pid in list(rels):
                if qid == pid:
                    results[qid].pop(pid)
    strings = {f"{m}." + ",".join(map(str, k_values)) for m in ("map_cut", "ndcg_cut",
                                                                "recall", "P")}
    scores = pytrec_eval.RelevanceEvaluator(qrels, strings).evaluate(results)
    out: dict[str, float] = {}
    for ours, theirs in (("nDCG", "ndcg_cut_"), ("AP", "map_cut_"), ("R", "recall_"),
                         ("P", "P_")):
        for k in k_values:
            total = 0.0
            for query_id in scores:
                total += scores[query_id][theirs + str(k)]
            out[f"{ours}@{k}"] = round(total / len(scores), 5)
    return out


def _generated(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Queries whose ids are also document ids (retrieved, sometimes judged), ties, graded
    labels, a query retrieving only itself, run-only and qrels-only queries."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(30)] + [f"q{i}" for i in range(12)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(12):
        q = f"q{i}"
        if i != 11:
            judged = rng.choice(docs, size=int(rng.integers(1, 8)), replace=False)
            qrels[q] = {str(d): int(rng.choice([0, 1, 1, 2, 3])) for d in judged}
            if i % 3 == 0:
                qrels[q][q] = 1  # its own id judged relevant: still dropped from the run
        if i != 10:
            got = rng.choice(docs, size=int(rng.integers(1, 15)), replace=False)
            run[q] = {str(d): float(rng.choice([0.1, 0.2, 0.5, 1.0])) for d in got}
            if i % 2 == 0:
                run[q][q] = 2.0
    run["q4"] = {"q4": 1.0}  # nothing left after the drop: an empty result, scoring 0
    return qrels, run


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ignore", [True, False])
def test_beir_evaluate_reproduced(seed: int, ignore: bool) -> None:
    qrels, run = _generated(seed)
    ks = [1, 3, 5, 10, 100, 1000]
    expected = beir_evaluate(qrels, run, ks, ignore)
    kwargs: dict[str, Any] = {} if ignore else {"ignore_identical_ids": False}
    r = evaluate(qrels, run, compat="beir", **kwargs)  # BEIR's measures and cutoffs
    assert r.means() == expected
    assert r.conventions.ignore_identical_ids is ignore


def test_beir_convention_lines() -> None:
    r = evaluate(MTEB_QRELS, MTEB_RESULTS, ["nDCG@3"], compat="beir")
    lines = r.conventions.describe()
    assert lines["compat"].startswith("beir: BEIR EvaluateRetrieval.evaluate")
    assert "rounded to 5 decimals" in lines["compat"] and "ef83d29" in lines["compat"]
    assert "identical ids" in lines
    r = evaluate(MTEB_QRELS, MTEB_RESULTS, ["nDCG@3"], compat="beir", ignore_identical_ids=False)
    assert "except ignore_identical_ids=False (given explicitly)" in \
        r.conventions.describe()["compat"]
    assert "identical ids" not in r.conventions.describe()


# ---- ranx ------------------------------------------------------------------------------


def _ranx(y_true: list[list[list[int]]], y_pred: list[list[list[int]]]
          ) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    """ranx's typed lists ([[doc, grade]], [[doc, score]] already ranked) as qrels and ranked
    lists (the order is the one ranx's metric functions read)."""
    qrels = {f"q{i}": {str(d): g for d, g in t} for i, t in enumerate(y_true)}
    run = {f"q{i}": [str(d) for d, _ in p] for i, p in enumerate(y_pred)}
    return qrels, run


RANX = [  # (test, measure, y_true, y_pred, mean)
    ("test_hits", "Hits@5", [[[1, 1], [4, 1], [5, 1], [6, 1]], [[1, 1], [4, 1], [6, 1]]],
     [[[1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [7, 1]],
      [[1, 1], [2, 1], [4, 1], [3, 1], [5, 1], [7, 1]]], 2.5),
    # ranx's y_t_1 lists [6, 1] twice; a qrels entry is judged once here
    ("test_hit_rate", "HitRate@5", [[[9, 1], [6, 1], [8, 1]], [[1, 1], [2, 1], [4, 1]]],
     [[[1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [7, 1]],
      [[1, 1], [2, 1], [4, 1], [3, 1], [5, 1], [7, 1]]], 0.5),
    ("test_reciprocal_rank", "RR@5", [[[3, 1]], [[1, 1]], [[3, 1]]],
     [[[2, 1], [3, 1], [1, 1], [4, 1], [5, 1]], [[1, 1], [2, 1], [3, 1], [4, 1], [5, 1]],
      [[1, 1], [4, 1], [5, 1]]], 0.5),  # ranx's third list repeats doc 1 three times
    ("test_r_precision", "Rprec", [[[1, 1], [2, 1], [3, 1]], [[1, 1], [2, 1]]],
     [[[2, 1], [4, 1], [3, 1], [1, 1], [5, 1], [6, 1], [7, 1]]] * 2, (2 / 3 + 1 / 2) / 2),
    ("test_recall", "R@2", [[[1, 1], [2, 1], [3, 1]], [[1, 1], [2, 1]]],
     [[[2, 1], [4, 1], [3, 1], [1, 1], [5, 1], [6, 1], [7, 1]]] * 2, (1 / 3 + 1 / 2) / 2),
]
_J = [[[2, 5], [4, 4], [5, 3], [10, 2]]]
_P1 = [[[1, 1], [2, 1], [3, 1], [4, 1], [5, 1]]]
_P2 = [[[10, 1], [5, 1], [2, 1], [4, 1], [3, 1]]]
_P3 = [[[1, 1], [3, 1], [6, 1], [7, 1], [8, 1]]]
_IDCG = 5 / log2(2) + 4 / log2(3) + 3 / log2(4) + 2 / log2(5)
_IDCG_B = 31 / log2(2) + 15 / log2(3) + 7 / log2(4) + 3 / log2(5)
RANX += [
    ("test_ndcg_jarvelin", "nDCG@10", _J, _P1,
     (5 / log2(3) + 4 / log2(5) + 3 / log2(6)) / _IDCG),
    ("test_ndcg_jarvelin", "nDCG@10", _J, _P2,
     (2 / log2(2) + 3 / log2(3) + 5 / log2(4) + 4 / log2(5)) / _IDCG),
    ("test_ndcg_jarvelin", "nDCG@10", _J, _P3, 0.0),
    ("test_ndcg_burges", "nDCG(gain=exp)@10", _J, _P1,
     (31 / log2(3) + 15 / log2(5) + 7 / log2(6)) / _IDCG_B),
    ("test_ndcg_burges", "nDCG(gain=exp)@10", _J, _P2,
     (3 / log2(2) + 7 / log2(3) + 31 / log2(4) + 15 / log2(5)) / _IDCG_B),
]


@pytest.mark.parametrize("test, measure, y_true, y_pred, mean", RANX,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(RANX)])
def test_ranx_metrics(test: str, measure: str, y_true: Any, y_pred: Any, mean: float) -> None:
    qrels, run = _ranx(y_true, y_pred)
    r = evaluate(qrels, run, [measure], compat="ranx")
    assert r.mean(measure) == pytest.approx(mean, abs=1e-15)


def test_ranx_ndcg_counts_gains_from_the_level() -> None:
    # ranx's _dcg keeps only qrels with grade >= rel_lvl (clean_qrels), for the run and the
    # ideal: at rel_lvl 2 a grade-1 document adds nothing
    qrels = {"q": {"a": 2, "b": 1, "c": 3}}
    run = {"q": ["b", "a", "c"]}
    ranx = (2 / log2(3) + 3 / log2(4)) / (3 / log2(2) + 2 / log2(3))
    trec = (1 / log2(2) + 2 / log2(3) + 3 / log2(4)) / (3 / log2(2) + 2 / log2(3) + 1 / log2(4))
    assert evaluate(qrels, run, ["nDCG@3"], compat="ranx", rel_level=2).mean("nDCG@3") == \
        pytest.approx(ranx, abs=1e-15)
    assert evaluate(qrels, run, ["nDCG@3"], rel_level=2).mean("nDCG@3") == \
        pytest.approx(trec, abs=1e-15)


# ---- LlamaIndex ------------------------------------------------------------------------

LLAMA = [  # (expected_ids, retrieved_ids) of test_precision/recall/ap/ndcg, in their order
    (["id1", "id2", "id3"], ["id3", "id1", "id2", "id4"]),
    (["id1", "id2", "id3", "id4"], ["id5", "id1"]),
    (["id1", "id2"], ["id3", "id4"]),
    (["id1", "id2"], ["id2", "id1", "id7"]),
    (["id1", "id2", "id3"], ["id3", "id1", "id2", "id4"]),
    (["id1", "id2", "id3", "id4"], ["id1", "id2", "id5"]),
    (["id1", "id2"], ["id1", "id7", "id15", "id2"]),
]
LLAMA_PRECISION = [3 / 4, 1 / 2, 0 / 2, 2 / 3, 3 / 4, 2 / 3, 2 / 4]
LLAMA_RECALL = [3 / 3, 1 / 4, 0 / 2, 2 / 2, 3 / 3, 2 / 4, 2 / 2]
LLAMA_AP = [(1 / 1 + 2 / 2 + 3 / 3 + 0) / 3, (0 + 1 / 2) / 4, (0 + 0) / 2,
            (1 / 1 + 2 / 2 + 0) / 2, (1 / 1 + 2 / 2 + 3 / 3 + 0) / 3, (1 / 1 + 2 / 2 + 0) / 4,
            (1 / 1 + 0 + 0 + 2 / 4) / 2]
_D = [1 / log2(i + 1) for i in range(1, 6)]
LLAMA_NDCG = [  # test_ndcg's cases (linear, then exponential: equal for binary relevance)
    (0, (_D[0] + _D[1] + _D[2]) / (_D[0] + _D[1] + _D[2])),
    (1, _D[1] / (_D[0] + _D[1] + _D[2] + _D[3])),
    (2, 0.0),
    (3, (_D[0] + _D[1]) / (_D[0] + _D[1])),
    (4, (_D[0] + _D[1] + _D[2]) / (_D[0] + _D[1] + _D[2])),
    (5, (_D[0] + _D[1]) / (_D[0] + _D[1] + _D[2] + _D[3])),
    (6, (_D[0] + _D[3]) / (_D[0] + _D[1])),
]
# test_hit_rate and test_mrr (use_granular=False rows; the granular variants are not
# reproduced)
LLAMA_HIT = [((["id1", "id2", "id3"], ["id3", "id1", "id2", "id4"]), 1.0),
             ((["id1", "id2"], ["id3", "id4"]), 0.0)]
LLAMA_MRR = [((["id1", "id2", "id3"], ["id3", "id1", "id2", "id4"]), 1.0),
             ((["id1", "id2", "id3", "id4"], ["id5", "id1"]), 1 / 2),
             ((["id1", "id2"], ["id3", "id4"]), 0.0),
             ((["id1", "id2"], ["id2", "id1", "id7"]), 1.0)]


def _llama(case: tuple[list[str], list[str]], measures: list[str], **kw: Any
           ) -> ragreport.EvaluationResult:
    expected, retrieved = case
    # the retrieved list as a LlamaIndex retriever returns it: scored, in its order (scores
    # that would re-sort it, to show the order given is kept)
    run = {"q": {d: float(i) for i, d in enumerate(retrieved)}}
    return evaluate({"q": {e: 1 for e in expected}}, run, measures, compat="llamaindex", **kw)


@pytest.mark.parametrize("i", range(len(LLAMA)))
def test_llamaindex_precision_recall_ap_ndcg(i: int) -> None:
    r = _llama(LLAMA[i], ["SetP", "SetR", "AP", "nDCG", "nDCG(gain=exp)"])
    assert r.mean("SetP") == pytest.approx(LLAMA_PRECISION[i], abs=1e-15)
    assert r.mean("SetR") == pytest.approx(LLAMA_RECALL[i], abs=1e-15)
    assert r.mean("AP") == pytest.approx(LLAMA_AP[i], abs=1e-15)
    assert r.mean("nDCG") == pytest.approx(LLAMA_NDCG[i][1], abs=1e-15)
    assert r.mean("nDCG(gain=exp)") == pytest.approx(LLAMA_NDCG[i][1], abs=1e-15)


@pytest.mark.parametrize("case, hit", LLAMA_HIT)
def test_llamaindex_hit_rate(case: tuple[list[str], list[str]], hit: float) -> None:
    k = len(case[1])  # hit_rate reads the whole list: HitRate@K with K its length
    assert _llama(case, [f"HitRate@{k}"]).mean(f"HitRate@{k}") == hit


@pytest.mark.parametrize("case, mrr", LLAMA_MRR)
def test_llamaindex_mrr(case: tuple[list[str], list[str]], mrr: float) -> None:
    assert _llama(case, ["RR"]).mean("RR") == mrr


def test_llamaindex_graded_qrels_read_as_binary() -> None:
    # LlamaIndex's expected ids carry no grade: a grade-3 document counts as much as grade 1
    qrels = {"q": {"a": 3, "b": 1, "c": 0}}
    run = {"q": ["b", "c", "a"]}
    r = evaluate(qrels, run, ["nDCG"], compat="llamaindex")
    assert r.mean("nDCG") == pytest.approx((_D[0] + _D[2]) / (_D[0] + _D[1]), abs=1e-15)
    assert evaluate(qrels, run, ["nDCG"]).mean("nDCG") != r.mean("nDCG")
    assert r.conventions.order == "given"
    assert [str(m) for m in evaluate(qrels, run, compat="llamaindex").measures] == \
        ["RR", "SetP", "SetR", "AP", "nDCG"]


def test_llamaindex_order_given_and_explicit_order() -> None:
    qrels = {"q": {"a": 1}}
    run = {"q": {"b": 1.0, "a": 2.0}}  # a retriever's list, in its order: b first
    assert evaluate(qrels, run, ["RR"], compat="llamaindex").mean("RR") == 0.5
    r = evaluate(qrels, run, ["RR"], compat="llamaindex", order="score")
    assert r.mean("RR") == 1.0
    assert "except order='score' (given explicitly)" in r.conventions.describe()["compat"]


# ---- trec_eval -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_trec_eval_preset_is_the_default(seed: int) -> None:
    qrels, run = _generated(seed)
    ms = ["P@5", "R@10", "nDCG@10", "AP", "RR", "Rprec", "nDCG"]
    a = evaluate(qrels, run, ms)
    b = evaluate(qrels, run, ms, compat="trec_eval")
    assert a.means() == b.means()
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"P.5", "ndcg_cut.10", "map"}).evaluate(run)
    qids = b.query_ids
    np.testing.assert_allclose(b.values("P@5"), [trec[q]["P_5"] for q in qids], atol=1e-15)
    np.testing.assert_allclose(b.values("AP"), [trec[q]["map"] for q in qids], atol=1e-15)
    assert b.conventions.describe()["compat"].startswith("trec_eval: ")


@pytest.mark.parametrize("case", ["out.test.aq", "out.test.aqc", "out.test.aqcM",
                                  "out.test.aql"])
def test_trec_eval_preset_on_trec_eval_suite(conformance_dir: Path, case: str) -> None:
    """trec_eval's own test suite (../shared/conformance/trec_eval), under compat="trec_eval"
    with its options (-c, -M, -l): every value of the measures ragreport implements."""
    from test_conformance import CASES, our_measures, parse_expected

    expected, qrels, run, options = next(c for c in CASES if c[0] == case)
    exp = parse_expected(conformance_dir / expected)
    measures = our_measures(list(exp))
    r = evaluate(conformance_dir / qrels, conformance_dir / run, list(measures.values()),
                 compat="trec_eval", **options)  # type: ignore[arg-type]
    assert r.conventions.compat == "trec_eval" and r.conventions.compat_exceptions == ()
    checked = 0
    for name, m in measures.items():
        values = r.per_query(m)
        for qid, want in exp[name].items():
            if qid == "all":
                got = str(round(sum(values.values()))) if not m.family.bounded \
                    else f"{r.mean(m):.4f}"
            else:
                got = str(round(values[qid])) if not m.family.bounded \
                    else f"{values[qid]:.4f}"
            assert got == want, (name, qid)
            checked += 1
    assert checked > 100


# ---- ignore_identical_ids --------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_identical_ids_equal_dropping_rows_by_hand(seed: int) -> None:
    qrels, run = _generated(seed)
    by_hand = {q: {d: s for d, s in docs.items() if d != q} for q, docs in run.items()}
    dropped = sum(q in docs for q, docs in run.items() if q in qrels)
    ms = ["P@5", "R@10", "nDCG@10", "AP", "RR", "Rprec", "NumRet", "HitRate@3"]
    a = evaluate(qrels, run, ms, ignore_identical_ids=True)
    b = evaluate(qrels, by_hand, ms)
    assert a.query_ids == b.query_ids
    for m in ms:
        np.testing.assert_array_equal(a.values(m), b.values(m))
    assert a.counts.identical_ids_dropped == dropped > 0
    assert a.counts.empty_retrievals == b.counts.empty_retrievals >= 1  # q4
    # pytrec_eval on the filtered run
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recip_rank", "num_ret"}
                                          ).evaluate(by_hand)
    np.testing.assert_allclose(a.values("nDCG@10"), [trec[q]["ndcg_cut_10"]
                                                     for q in a.query_ids], atol=1e-15)
    np.testing.assert_allclose(a.values("NumRet"), [trec[q]["num_ret"] for q in a.query_ids])


def test_identical_ids_before_depth_and_with_given_order() -> None:
    qrels = {"q": {"a": 1, "q": 1}}
    run = {"q": ["q", "b", "a"]}
    r = evaluate(qrels, run, ["P@1", "NumRel"], ignore_identical_ids=True, max_depth=2,
                 order="given")
    assert r.mean("P@1") == 0.0 and r.values("NumRel").tolist() == [2.0]  # qrels unchanged
    assert [d.doc_id for d in r.ranked_list("q")] == ["b", "a"]  # dropped, then cut at 2
    assert r.counts.identical_ids_dropped == 1
    assert evaluate(qrels, run, ["P@1"], order="given").mean("P@1") == 1.0


def test_identical_ids_of_unevaluated_queries_not_counted() -> None:
    qrels = {"q": {"a": 1}}
    run = {"q": ["a"], "z": ["z", "y"]}  # z is run-only
    assert evaluate(qrels, run, ignore_identical_ids=True).counts.identical_ids_dropped == 0


def test_identical_ids_every_document() -> None:
    qrels = {"a": {"a": 1}, "b": {"b": 1}}
    run = {"a": ["a"], "b": ["b"]}
    r = evaluate(qrels, run, ["P@1", "nDCG@10"], ignore_identical_ids=True)
    assert r.means() == {"P@1": 0.0, "nDCG@10": 0.0}
    assert r.counts.identical_ids_dropped == 2 and r.counts.empty_retrievals == 2


@pytest.mark.parametrize("no_relevant", ["zero", "skip"])
def test_identical_ids_streamed(tmp_path: Path, no_relevant: str) -> None:
    from ragreport.core.stream import evaluate_stream

    qrels, run = _generated(2)
    lines = [f"{q} Q0 {d} {i + 1} {s} t" for q, docs in run.items()
             for i, (d, s) in enumerate(docs.items())]
    (tmp_path / "run.txt").write_text("\n".join(lines) + "\n")
    ms = ["P@5", "nDCG@10", "RR"]
    for kw in ({"ignore_identical_ids": True}, {"compat": "beir"}):
        s = evaluate_stream(qrels, tmp_path / "run.txt", ms, block_bytes=40,
                            no_relevant=no_relevant, **kw)
        e = evaluate(qrels, str(tmp_path / "run.txt"), ms, no_relevant=no_relevant, **kw)
        assert s.counts == e.counts_dict()
        assert s.means() == pytest.approx(e.means(), abs=1e-12)
        if "compat" in kw:
            assert s.means() == e.means()  # rounded to 5 decimals, both
            assert all(v == round(v, 5) for v in s.means().values())


# ---- score precision: pytrec_eval's float32 scores -------------------------------------


def _close_scores(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Dense-retrieval-like runs: groups of scores 1e-9 apart (equal in float32, not in
    float64), graded labels, relevant and non-relevant documents inside each group."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(15):
        q = f"q{i}"
        docs = [f"d{j:02d}" for j in rng.choice(60, size=25, replace=False)]
        qrels[q] = {d: int(rng.choice([0, 0, 1, 2])) for d in docs[:12]}
        qrels[q][docs[0]] = 1  # at least one relevant document
        bases = rng.uniform(0.2, 0.9, size=5)
        run[q] = {d: float(bases[j % 5] + int(rng.integers(0, 4)) * 1e-9)
                  for j, d in enumerate(docs)}
    return qrels, run


def _float64_differs(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]],
                     measure: str, asked: str, theirs: str) -> bool:
    """Whether ragreport's float64 order gives another value than pytrec_eval somewhere."""
    trec = pytrec_eval.RelevanceEvaluator(qrels, {asked}).evaluate(run)
    r = evaluate(qrels, run, [measure], score_precision="float64")
    return bool(np.any(r.values(measure) != [trec[q][theirs] for q in r.query_ids]))


@pytest.mark.parametrize("seed", range(4))
def test_beir_preset_orders_scores_as_pytrec_eval(seed: int) -> None:
    qrels, run = _close_scores(seed)
    ks = [1, 3, 5, 10, 100, 1000]
    r = evaluate(qrels, run, compat="beir")
    assert r.conventions.score_precision == "float32"
    assert r.means() == beir_evaluate(qrels, run, ks)
    # the same run at full precision is another ranking: the case is not vacuous
    assert _float64_differs(qrels, run, "nDCG@10", "ndcg_cut.10", "ndcg_cut_10")


@pytest.mark.parametrize("seed", range(4))
def test_mteb_preset_orders_scores_as_pytrec_eval(seed: int) -> None:
    qrels, run = _close_scores(seed)
    r = evaluate(qrels, run, ["nDCG@10", "AP@10", "P@3", "R@5", "RR@10", "HitRate@1"],
                 compat="mteb")
    trec = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut.10", "map_cut.10", "P.3", "recall.5", "success.1"}).evaluate(run)
    for ours, theirs in (("nDCG@10", "ndcg_cut_10"), ("AP@10", "map_cut_10"), ("P@3", "P_3"),
                         ("R@5", "recall_5"), ("HitRate@1", "success_1")):
        np.testing.assert_array_equal(r.values(ours), [trec[q][theirs] for q in r.query_ids])
    # MTEB's mrr_at_k: the first relevant document among the top 10 in pytrec_eval's order
    # (score as float32 descending, then document id descending)
    rr = []
    for q in r.query_ids:
        ranked = sorted(run[q], key=lambda d: (np.float32(run[q][d]), d), reverse=True)[:10]
        rr.append(next((1 / (i + 1) for i, d in enumerate(ranked) if qrels[q].get(d, 0) >= 1),
                       0.0))
    np.testing.assert_array_equal(r.values("RR@10"), rr)
    assert _float64_differs(qrels, run, "RR", "recip_rank", "recip_rank")


@pytest.mark.parametrize("seed", range(2))
def test_default_compares_full_precision(seed: int) -> None:
    qrels, run = _close_scores(seed)
    r = evaluate(qrels, run, ["RR", "P@1"])
    assert r.conventions.score_precision == "float64"
    assert r.conventions.describe()["scores"].startswith("compared as 64-bit doubles")
    # the order by the float64 value, ties (exact) by document id descending
    want = []
    for q in r.query_ids:
        ranked = sorted(run[q], key=lambda d: (run[q][d], d), reverse=True)
        want.append(next(1 / (i + 1) for i, d in enumerate(ranked) if qrels[q].get(d, 0) >= 1))
    np.testing.assert_array_equal(r.values("RR"), want)
    # explicit float32 gives pytrec_eval's numbers without a preset; float64 under beir is
    # named as an exception
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    r32 = evaluate(qrels, run, ["RR"], score_precision="float32")
    np.testing.assert_array_equal(r32.values("RR"), [trec[q]["recip_rank"] for q in r.query_ids])
    assert "32-bit floats" in r32.conventions.describe()["scores"]
    b = evaluate(qrels, run, ["RR"], compat="beir", score_precision="float64")
    assert b.conventions.compat_exceptions == ("score_precision='float64'",)
    np.testing.assert_array_equal(b.values("RR"), r.values("RR"))


def test_score_precision_reaches_ties_and_streaming(tmp_path: Path) -> None:
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 0.5 + 1e-9, "b": 0.5}}  # one tie in float32 only
    assert evaluate(qrels, run, ["RR"]).mean("RR") == 1.0
    # ties="average": the expected value over both orders of the float32 tie
    assert evaluate(qrels, run, ["RR"], ties="average",
                    score_precision="float32").mean("RR") == pytest.approx(0.75)
    assert evaluate(qrels, run, ["RR"], ties="average").mean("RR") == 1.0
    # tie exposure sees the same tie
    from ragreport.core.stream import evaluate_stream
    from ragreport.core.ties import exposure

    exp32 = exposure(evaluate(qrels, run, ["RR"], score_precision="float32"), "RR")
    exp64 = exposure(evaluate(qrels, run, ["RR"]), "RR")
    assert (exp32.low, exp32.high) == (0.5, 1.0) and (exp64.low, exp64.high) == (1.0, 1.0)
    # the streamed evaluation reads the same option
    (tmp_path / "q.txt").write_text("q 0 a 1\nq 0 b 0\n")
    (tmp_path / "r.txt").write_text(f"q Q0 a 1 {0.5 + 1e-9!r} t\nq Q0 b 2 0.5 t\n")
    s = evaluate_stream(tmp_path / "q.txt", tmp_path / "r.txt", ["RR"], compat="beir")
    assert s.means()["RR"] == 0.5
    with pytest.raises(RagReportError, match=r"score_precision must be 'float64' or "
                                             r"'float32', got 'float16'"):
        evaluate(qrels, run, ["RR"], score_precision="float16")


# ---- rounding at a half: decided on the exact mean ---------------------------------------

#: Relevant documents in the top 1000 of each of 152 queries (P@1000 = k / 1000): their exact
#: mean is a hair above 0.004875, and numpy's pairwise mean a hair below (found by a seeded
#: search for such a case).
HALF_CASE = [2, 5, 0, 1, 8, 3, 9, 5, 2, 2, 5, 8, 2, 2, 1, 9, 4, 7, 4, 1, 4, 5, 7, 0, 1, 1, 7, 3,
             6, 7, 7, 6, 3, 5, 2, 2, 10, 3, 0, 7, 10, 5, 6, 3, 3, 0, 1, 0, 2, 10, 10, 4, 5, 9, 6,
             2, 6, 6, 3, 2, 10, 9, 0, 2, 6, 6, 0, 10, 2, 8, 10, 6, 7, 4, 0, 5, 4, 0, 9, 1, 8, 3, 0,
             0, 8, 2, 8, 4, 10, 9, 10, 10, 1, 0, 2, 5, 8, 7, 4, 8, 3, 1, 8, 0, 5, 2, 9, 3, 7, 2,
             10, 2, 7, 7, 10, 2, 3, 2, 8, 2, 8, 5, 9, 2, 5, 5, 0, 10, 4, 9, 5, 8, 6, 10, 0, 10,
             10, 6, 7, 7, 7, 3, 7, 5, 8, 10, 1, 5, 0, 4, 0, 7]


def test_rounding_at_a_half_as_beir_and_mteb() -> None:
    from fractions import Fraction

    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i, k in enumerate(HALF_CASE):
        q = f"q{i:03d}"
        qrels[q] = {f"r{j}": 1 for j in range(k)} | {"missed": 1, "n": 0}
        run[q] = {f"r{j}": 2.0 - j / 100 for j in range(k)} | {"n": 0.5}
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"P.1000"}).evaluate(run)
    values = [trec[q]["P_1000"] for q in trec]
    total = 0.0
    for v in values:  # BEIR: for query_id in scores: total += ...
        total += v
    beir = round(total / len(values), 5)
    mteb = round(sum(values) / len(values), 5)  # MTEB: round(sum(list) / len(scores), 5)
    exact = sum(map(Fraction, values), Fraction(0)) / len(values)
    assert beir == mteb == 0.00488 and exact > Fraction(4875, 10**6)
    for compat in ("beir", "mteb"):
        r = evaluate(qrels, run, ["P@1000"], compat=compat)
        assert r.mean("P@1000") == beir, compat
        # the plain floating-point mean lands below the half: the case is not vacuous
        assert round(float(r.values("P@1000").mean()), 5) == 0.00487


# ---- options, errors, reports ----------------------------------------------------------


def test_resolve_and_check() -> None:
    assert set(PRESETS) == {"trec_eval", "beir", "mteb", "ranx", "llamaindex"}
    with pytest.raises(RagReportError, match=r"compat must be one of trec_eval, beir, mteb, "
                                             r"ranx, llamaindex, got 'BEIR'"):
        check_compat("BEIR")
    with pytest.raises(RagReportError, match="got int"):
        check_compat(3)
    with pytest.raises(RagReportError, match="ignore_identical_ids must be True or False"):
        evaluate(MTEB_QRELS, MTEB_RESULTS, ignore_identical_ids="yes")  # type: ignore[arg-type]
    r = resolve("mteb", order=None, ignore_identical_ids=True)
    assert r.exceptions == ()  # MTEB's tasks decide it: not an exception
    assert resolve("beir", order=None, ignore_identical_ids=None,
                   explicit={"rel_level": 2}).exceptions == ("rel_level=2",)
    assert resolve(None, order=None, ignore_identical_ids=None).order == "score"


def test_report_names_the_preset_and_counts(tmp_path: Path) -> None:
    from ragreport.report import build_report
    from ragreport.targets import parse_targets

    results = [evaluate(MTEB_QRELS, MTEB_RESULTS, ["nDCG@3", "P@1"], compat="beir",
                        name="beir run")]
    report = build_report(results, parse_targets({"nDCG@3": 0.3}), stats=False)
    doc = json.loads(report.to_json())
    assert doc["conventions"]["compat"].startswith("beir: BEIR")
    assert doc["means"]["beir run"]["nDCG@3"] == 0.30657
    assert doc["counts"]["beir run"]["identical_ids_dropped"] == 2
    md = report.to_markdown()
    assert "beir: BEIR EvaluateRetrieval.evaluate" in md and "2 identical ids dropped" in md
    html = report.to_html()
    assert "beir: BEIR EvaluateRetrieval.evaluate" in html
    assert "2 retrieved documents whose id equals the query&#39;s id dropped" in html or \
        "2 retrieved documents whose id equals the query's id dropped" in html
    plain = build_report([evaluate(MTEB_QRELS, MTEB_RESULTS, ["nDCG@3"])],
                         parse_targets({"nDCG@3": 0.3}), stats=False)
    assert "identical_ids_dropped" not in json.loads(plain.to_json())["counts"]["run"]
    assert "compat" not in json.loads(plain.to_json())["conventions"]


# ---- CLI and targets file --------------------------------------------------------------

QRELS = "0 0 0 1\n0 0 1 1\n1 0 1 1\n"
RUN = "0 Q0 0 1 1.0 t\n0 Q0 1 2 0.9 t\n0 Q0 2 3 0.8 t\n1 Q0 1 1 1.0 t\n1 Q0 0 2 0.0 t\n" \
      "1 Q0 2 3 0.0 t\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from ragreport.cli.app import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_flags(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, r = str(files / "qrels.txt"), str(files / "run.txt")
    code, out, _ = _cli(["evaluate", q, r, "--compat", "beir", "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["means"]["nDCG@3"] == 0.30657 and doc["means"]["P@3"] == 0.16667
    assert doc["counts"]["identical_ids_dropped"] == 2 and doc["conventions"]["compat"] == "beir"
    code, out, _ = _cli(["evaluate", q, r, "--compat", "beir", "--no-ignore-identical-ids",
                         "-m", "P@1", "--format", "json"], capsys)
    assert json.loads(out)["means"]["P@1"] == 1.0
    code, out, _ = _cli(["evaluate", q, r, "--ignore-identical-ids", "-m", "P@1"], capsys)
    assert re.search(r"^P@1 +0\.5000$", out, re.M) and "identical ids dropped: 2" in out
    code, out, _ = _cli(["evaluate", q, r, "--compat", "mteb", "--stream"], capsys)
    assert "ndcg" not in out and "nDCG@1000" in out and "RR@20" in out
    code, out, _ = _cli(["evaluate", q, r, "--compat", "beir", "--format", "trec"], capsys)
    assert "\nndcg_cut_1 " in out and "\nP_1000 " in out and "\nmap_cut_100 " in out
    args = __import__("ragreport.cli.args", fromlist=["x"]).build_parser().parse_args(
        ["report", q, r, "--compat", "llamaindex"])
    assert args.compat == "llamaindex" and args.order is None and \
        args.ignore_identical_ids is None


def test_targets_file_compat(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ragreport.io.targets import load_settings, load_targets

    t = files / "targets.toml"
    t.write_text('compat = "beir"\n"nDCG@3" = 0.3\n')
    assert [str(x.measure) for x in load_targets(t)] == ["nDCG@3"]
    assert load_settings(t) == {"compat": "beir", "source": str(t)}
    out = files / "r.json"
    code, _, _ = _cli(["check", str(files / "qrels.txt"), str(files / "run.txt"), "--targets",
                       str(t), "--json", str(out), "--no-stats", "--jobs", "1"], capsys)
    doc = json.loads(out.read_text())
    assert code == 0 and doc["targets"][0]["results"][0]["value"] == 0.30657
    assert doc["conventions"]["compat"].startswith("beir")
    assert "nDCG@1000" in doc["measures"]  # BEIR's measures: none given with -m
    # [tool.ragreport] in pyproject.toml, with the targets table
    (files / "pyproject.toml").write_text('[tool.ragreport]\ncompat = "mteb"\n'
                                          'ignore_identical_ids = true\n'
                                          '[tool.ragreport.targets]\n"P@1" = 0.1\n')
    assert load_settings(cwd=files) == {"compat": "mteb", "ignore_identical_ids": True,
                                        "source": str(files / "pyproject.toml")}
    # in the targets table itself
    t.write_text('[targets]\ncompat = "ranx"\n"P@1" = 0.5\n')
    assert load_settings(t)["compat"] == "ranx" and len(load_targets(t)) == 1
    t.write_text('compat = "beir"\n[targets]\ncompat = "ranx"\n"P@1" = 0.5\n')
    with pytest.raises(ConfigError, match="compat is set twice"):
        load_settings(t)
    # ignore_identical_ids on its own, from the file
    t.write_text('ignore_identical_ids = true\n"P@1" = 0.4\n')
    code, _, _ = _cli(["check", str(files / "qrels.txt"), str(files / "run.txt"), "--targets",
                       str(t), "--json", str(out), "--no-stats", "--jobs", "1", "-m", "P@1"],
                      capsys)
    doc = json.loads(out.read_text())
    assert code == 0 and doc["means"]["t"]["P@1"] == 0.5
    assert doc["counts"]["t"]["identical_ids_dropped"] == 2
    assert "identical ids" in doc["conventions"] and "compat" not in doc["conventions"]
    t.write_text('ignore_identical_ids = "yes"\n')
    with pytest.raises(ConfigError, match="ignore_identical_ids must be true or false"):
        load_settings(t)
