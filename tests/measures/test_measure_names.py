"""Every peer's spelling of a measure, read with that peer's meaning (issue 13, "Names").

Sources of the meanings (read from the peers' code, not guessed):

- ir_measures 0.4.3 (installed): ``ir_measures/measures/*.py`` and ``util.parse_measure`` /
  ``parse_trec_measure``; values compared below with ``ir_measures.calc_aggregate``.
- trec_eval / pytrec_eval (installed): measure names and default cutoffs.
- ranx (github.com/AmenRa/ranx, ``ranx/metrics/*.py``, ``ranx/meta/evaluate.py``):
  ``extract_metric_and_params`` reads ``name@k-lN`` (N: relevance level) and ``rbp.95`` as
  persistence 0.95; k = 0 (no ``@k``) is the whole ranking; ``ndcg_burges`` has gain
  2^grade - 1; ``rbp`` weights each rank by the grade of a document of grade >= rel_lvl
  (ranx 0.3.21 ``_rank_biased_precision``: ``weighted_hit_list[i] = qrels[j, 1]``; its
  docstring says 0/1).
- ir_measures' ``RBP`` without ``rel`` is graded (provider trectools, ``get_rbp(...,
  binary_topical_relevance=False)``: the weight times the grade); ``RBP(rel=N)`` is binary
  (provider cwl_eval).
- MTEB (github.com/embeddings-benchmark/mteb, ``mteb/_evaluators/retrieval_metrics.py``):
  ``ndcg_at_k``, ``map_at_k``, ``recall_at_k``, ``precision_at_k``, ``hit_rate_at_k`` are
  pytrec_eval's ``ndcg_cut_k``, ``map_cut_k``, ``recall_k``, ``P_k``, ``success_k``;
  ``mrr_at_k`` is 1 / rank of the first document with grade > 0 in the top k; ``R_cap_at_k``
  is relevant in the top k / min(k, relevant); ``accuracy`` is Recall@1.
- BEIR (github.com/beir-cellar/beir, ``beir/retrieval/evaluation.py``, ``custom_metrics.py``):
  ``NDCG@k``, ``MAP@k``, ``Recall@k``, ``P@k`` from pytrec_eval; ``MRR@k``, ``R_cap@k``,
  ``Accuracy@k`` (top-k accuracy: success@k), ``Hole@k``.
- LlamaIndex (``llama_index/core/evaluation/retrieval/metrics.py``): ``precision`` is
  |retrieved ∩ expected| / |retrieved| (set_P), ``recall`` is set recall, ``hit_rate`` is 1 if
  any expected id is retrieved (granular mode: set recall).
"""

from __future__ import annotations

import math
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import user_docs

import ragreport
from ragreport.errors import MeasureError
from ragreport.measures import (
    FAMILIES,
    TREC_DEFAULT_CUTOFFS,
    Measure,
    parse_family,
    parse_measure,
    parse_measures,
)

TREC_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
LEVELS = ["IPrec@0.0", "IPrec@0.1", "IPrec@0.2", "IPrec@0.3", "IPrec@0.4", "IPrec@0.5",
          "IPrec@0.6", "IPrec@0.7", "IPrec@0.8", "IPrec@0.9", "IPrec@1.0"]

# (peer, spelling, what ragreport reads: canonical names)
SPELLINGS = [
    # --- ir_measures (names, aliases and parameters of ir_measures/measures/*.py) ---------------
    ("ir_measures", "nDCG(dcg=exp-log2)@10", ["nDCG(gain=exp)@10"]),
    ("ir_measures", "nDCG(dcg='exp-log2')@10", ["nDCG(gain=exp)@10"]),  # as its repr prints it
    ("ir_measures", 'nDCG(dcg="exp-log2")', ["nDCG(gain=exp)"]),
    ("ir_measures", "nDCG(dcg=log2)@10", ["nDCG@10"]),
    ("ir_measures", "nDCG(dcg=log2,judged_only=False)@10", ["nDCG@10"]),
    ("ir_measures", "NDCG@10", ["nDCG@10"]),
    ("ir_measures", "NumRet(rel=1)", ["NumRelRet(rel=1)"]),  # retrieved with grade >= 1
    ("ir_measures", "NumRet(rel=2)", ["NumRelRet(rel=2)"]),
    ("ir_measures", "NumRet", ["NumRet"]),
    ("ir_measures", "NumRelRet", ["NumRelRet"]),
    ("ir_measures", "NumRel", ["NumRel"]),
    ("ir_measures", "NumRel(rel=2)", ["NumRel(rel=2)"]),
    ("ir_measures", "NumQ", ["NumQ"]),
    ("ir_measures", "SetP(rel=2)", ["SetP(rel=2)"]),
    ("ir_measures", "SetP(relative=False)", ["SetP"]),
    ("ir_measures", "SetR", ["SetR"]),
    ("ir_measures", "SetF", ["SetF"]),
    ("ir_measures", "SetF(beta=1.0)", ["SetF"]),
    ("ir_measures", "Judged@10", ["Judged@10"]),
    ("ir_measures", "Judged", ["Judged"]),
    ("ir_measures", "ERR@20", ["ERR@20"]),
    ("ir_measures", "RBP(p=0.8)", ["RBP(p=0.8)"]),
    ("ir_measures", "RBP(rel=1)", ["RBP(p=0.8,rel=1)"]),
    ("ir_measures", "RBP(p=0.5,rel=2)", ["RBP(p=0.5,rel=2)"]),
    ("ir_measures", "RBP@10", ["RBP(p=0.8)@10"]),
    ("ir_measures", "IPrec@0.5", ["IPrec@0.5"]),
    ("ir_measures", "IPrec(recall=0.5)", ["IPrec@0.5"]),
    ("ir_measures", "IPrec(rel=2)@0.25", ["IPrec(rel=2)@0.25"]),
    ("ir_measures", "Bpref", ["Bpref"]),
    ("ir_measures", "BPref(rel=2)", ["Bpref(rel=2)"]),
    ("ir_measures", "Success@5", ["HitRate@5"]),
    ("ir_measures", "P@5", ["P@5"]),
    ("ir_measures", "Precision@5", ["P@5"]),
    ("ir_measures", "P(cutoff=5)", ["P@5"]),
    ("ir_measures", "R@5", ["R@5"]),
    ("ir_measures", "Recall@5", ["R@5"]),
    ("ir_measures", "R(rel=2)@5", ["R(rel=2)@5"]),
    ("ir_measures", "RR", ["RR"]),
    ("ir_measures", "MRR@10", ["RR@10"]),
    ("ir_measures", "AP", ["AP"]),
    ("ir_measures", "MAP@100", ["AP@100"]),
    ("ir_measures", "AP(rel=2)@10", ["AP(rel=2)@10"]),
    ("ir_measures", "Rprec", ["Rprec"]),
    ("ir_measures", "RPrec(rel=2)", ["Rprec(rel=2)"]),
    # --- trec_eval (-m names, cutoff lists, printed names, bare names) -----------------------
    ("trec_eval", "set_P", ["SetP"]),
    ("trec_eval", "set_recall", ["SetR"]),
    ("trec_eval", "set_F", ["SetF"]),
    ("trec_eval", "set_F.1", ["SetF"]),  # beta = 1
    ("trec_eval", "num_q", ["NumQ"]),
    ("trec_eval", "num_ret", ["NumRet"]),
    ("trec_eval", "num_rel", ["NumRel"]),
    ("trec_eval", "num_rel_ret", ["NumRelRet"]),
    ("trec_eval", "iprec_at_recall_0.10", ["IPrec@0.1"]),
    ("trec_eval", "iprec_at_recall_1.00", ["IPrec@1.0"]),
    ("trec_eval", "iprec_at_recall.0.1,0.5", ["IPrec@0.1", "IPrec@0.5"]),
    ("trec_eval", "iprec_at_recall", LEVELS),
    ("trec_eval", "bpref", ["Bpref"]),
    ("trec_eval", "ndcg_cut_10", ["nDCG@10"]),
    ("trec_eval", "ndcg_cut.10,20", ["nDCG@10", "nDCG@20"]),
    ("trec_eval", "P_5", ["P@5"]),
    ("trec_eval", "recall_5", ["R@5"]),
    ("trec_eval", "recall.5,10", ["R@5", "R@10"]),
    ("trec_eval", "map_cut_10", ["AP@10"]),
    ("trec_eval", "success_1", ["HitRate@1"]),
    ("trec_eval", "recip_rank", ["RR"]),
    ("trec_eval", "Rprec", ["Rprec"]),
    ("trec_eval", "map", ["AP"]),
    ("trec_eval", "ndcg", ["nDCG"]),
    ("trec_eval", "P", [f"P@{k}" for k in TREC_CUTS]),
    ("trec_eval", "ndcg_cut", [f"nDCG@{k}" for k in TREC_CUTS]),
    ("trec_eval", "map_cut", [f"AP@{k}" for k in TREC_CUTS]),
    ("trec_eval", "success", ["HitRate@1", "HitRate@5", "HitRate@10"]),
    # --- ranx (metric_switch names, name@k, name@k-lN) ---------------------------------------
    ("ranx", "ndcg_burges@10", ["nDCG(gain=exp)@10"]),
    ("ranx", "ndcg_burges", ["nDCG(gain=exp)"]),
    ("ranx", "ndcg@10", ["nDCG@10"]),
    ("ranx", "ndcg", ["nDCG"]),
    ("ranx", "r-precision", ["Rprec"]),
    ("ranx", "r_precision", ["Rprec"]),
    ("ranx", "hits@3", ["Hits@3"]),
    ("ranx", "hits", ["Hits"]),
    ("ranx", "hit_rate@5", ["HitRate@5"]),
    ("ranx", "mrr@10", ["RR@10"]),
    ("ranx", "mrr", ["RR"]),
    ("ranx", "map@10", ["AP@10"]),
    ("ranx", "map", ["AP"]),
    ("ranx", "f1@5", ["F1@5"]),
    ("ranx", "precision@5", ["P@5"]),
    ("ranx", "recall@5", ["R@5"]),
    ("ranx", "precision", ["SetP"]),   # k = 0: the whole ranking, relevant retrieved / retrieved
    ("ranx", "f1", ["SetF"]),          # k = 0: 2PR/(P+R) of the whole ranking
    ("ranx", "bpref", ["Bpref"]),
    ("ranx", "precision@5-l2", ["P(rel=2)@5"]),
    ("ranx", "map-l2", ["AP(rel=2)"]),
    ("ranx", "precision-l2", ["SetP(rel=2)"]),
    ("ranx", "r-precision-l3", ["Rprec(rel=3)"]),
    # --- MTEB (score keys) and BEIR (result keys, evaluate_custom names) ---------------------
    ("MTEB", "ndcg_at_10", ["nDCG@10"]),
    ("MTEB", "map_at_10", ["AP@10"]),
    ("MTEB", "recall_at_100", ["R@100"]),
    ("MTEB", "precision_at_1", ["P@1"]),
    ("MTEB", "mrr_at_10", ["RR@10"]),
    ("MTEB", "hit_rate_at_10", ["HitRate@10"]),
    ("MTEB", "r_cap_at_10", ["R_cap@10"]),
    ("MTEB", "R_cap_at_10", ["R_cap@10"]),
    ("BEIR", "NDCG@10", ["nDCG@10"]),
    ("BEIR", "MAP@10", ["AP@10"]),
    ("BEIR", "Recall@10", ["R@10"]),
    ("BEIR", "P@10", ["P@10"]),
    ("BEIR", "MRR@10", ["RR@10"]),
    ("BEIR", "R_cap@10", ["R_cap@10"]),
    ("BEIR", "r_cap@10", ["R_cap@10"]),
    ("BEIR", "recall_cap@10", ["R_cap@10"]),
    # --- LlamaIndex's metric names ------------------------------------------------------------
    ("LlamaIndex", "mrr", ["RR"]),
    ("LlamaIndex", "ap", ["AP"]),
    ("LlamaIndex", "precision", ["SetP"]),
]


@pytest.mark.parametrize(("peer", "spelling", "canonical"), SPELLINGS,
                         ids=[f"{p}:{s}" for p, s, _ in SPELLINGS])
def test_peer_spelling(peer: str, spelling: str, canonical: list[str]) -> None:
    found = parse_measures(spelling)
    assert [str(m) for m in found] == canonical
    # and what ragreport prints reads back as the same measures
    assert [parse_measure(c) for c in canonical] == found


def test_ir_measures_reads_its_spellings_as_we_do() -> None:
    """The ir_measures rows of the table are ir_measures' own names: it parses each, and its
    repr, read by ragreport, is the same measure (ir_measures writes string values quoted)."""
    import ir_measures

    for peer, spelling, canonical in SPELLINGS:
        if peer != "ir_measures" or re.search(r"dcg=[a-z]", spelling):
            continue  # an unquoted value (the spelling) is no Python for ir_measures
        theirs = ir_measures.parse_measure(spelling)
        # ir_measures' rel defaults to 1 (its NumRelRet is NumRet(rel=1)); ragreport's to
        # the evaluation's rel_level, 1 unless changed
        assert [_rel1(m) for m in parse_measures(repr(theirs))] == [
            _rel1(parse_measure(c)) for c in canonical], spelling


def _rel1(m: Measure) -> Measure:
    return Measure(m.name, m.cutoff, 1, m.gain, m.p, m.recall) if m.rel is None and "rel" in \
        m.family.params else m


def test_trec_eval_reads_its_spellings_as_we_do() -> None:
    """ir_measures' parse_trec_measure (trec_eval's names) gives as many measures, in order."""
    import ir_measures

    for peer, spelling, canonical in SPELLINGS:
        if peer == "trec_eval":
            theirs = ir_measures.parse_trec_measure(spelling)
            assert len(theirs) == len(canonical), spelling


# (spelling, patterns that must all appear in the message: each reading)
CLASHES = [
    ("recall", [r"trec_eval and ir_measures' parse_trec_measure read 'recall' as recall_5",
                r"ranx and LlamaIndex read it as the recall of the whole ranking",
                r"write SetR"]),
    ("Recall", [r"recall_5, recall_10", r"ranx and LlamaIndex"]),
    ("recall-l2", [r"recall_5, recall_10", r"ranx and LlamaIndex"]),
    ("hit_rate", [r"ranx and LlamaIndex read 'hit_rate' without k as 1 if any relevant",
                  r"LlamaIndex's granular hit rate is relevant retrieved / relevant",
                  r"trec_eval's success means success_1, success_5, success_10"]),
    ("accuracy", [r"MTEB's 'accuracy' is recall@1", r"BEIR's Accuracy@k \(top_k_accuracy\) is "
                  r"success@k", r"ir_measures' Accuracy is the share of \(relevant, "
                  r"non-relevant\) pairs"]),
    ("Accuracy@10", [r"MTEB's", r"BEIR's", r"ir_measures'"]),
    ("accuracy_at_1", [r"MTEB's", r"BEIR's", r"ir_measures'"]),
    ("rbp.95", [r"ranx reads the number after rbp as the persistence \(rbp\.95: p = 0\.95\) "
                r"and weights each rank by the grade of a document of grade >= 1",
                r"ir_measures' RBP@K is a cutoff, graded RBP with p = 0\.8",
                r"write RBP\(p=0\.95\) for ranx's or RBP\(p=0\.8\)@95 for ir_measures'"]),
    ("rbp.8-l2", [r"grade >= 2", r"write RBP\(p=0\.8\) with compat='ranx' and rel_level=2 "
                  r"\(--compat ranx -l 2\) for ranx's"]),
    ("rbp@95", [r"ranx reads", r"ir_measures' RBP@K is a cutoff"]),
    ("ndcg@10-l2", [r"ranx's -l2 leaves grades below 2 out of nDCG's gains",
                    r"ragreport's nDCG has no relevance level",
                    r"even with compat='ranx': for ranx's number ask for 'ndcg@10' with "
                    r"compat='ranx' and rel_level=2 \(--compat ranx -l 2 -m 'ndcg@10'\)"]),
]


@pytest.mark.parametrize(("spelling", "readings"), CLASHES, ids=[c[0] for c in CLASHES])
def test_clash_refused_naming_the_readings(spelling: str, readings: list[str]) -> None:
    with pytest.raises(MeasureError) as info:
        parse_measures(spelling)
    for pattern in readings:
        assert re.search(pattern, str(info.value)), (pattern, str(info.value))


def test_ranx_level_on_ndcg_is_compat_ranx() -> None:
    """What the refusal of ndcg@10-l2 points to computes ranx's number: grades below the
    level are no gain (ranx's clean_qrels), the others their grade."""
    qrels, run = {"q": {"a": 1, "b": 2}}, {"q": {"a": 2.0, "b": 1.0}}
    r = ragreport.evaluate(qrels, run, ["ndcg@2"], compat="ranx", rel_level=2)
    # ranx: DCG = 0 (a: grade 1 < 2) + 2 / log2(3); IDCG = 2 (b first)
    assert r.mean("nDCG@2") == pytest.approx((2 / 1.584962500721156) / 2, abs=1e-15)


def _ranx_rbp(qrels: dict[str, int], ranked: list[str], p: float, rel_lvl: int) -> float:
    """ranx 0.3.21 ``_rank_biased_precision``, transcribed: (1 - p) * sum over ranks of
    p^(i-1) times the grade of a document of grade >= rel_lvl (0 otherwise)."""
    kept = {d: g for d, g in qrels.items() if g >= rel_lvl}
    if not kept:
        return 0.0
    return (1 - p) * sum(kept.get(d, 0) * p ** i for i, d in enumerate(ranked))


@pytest.mark.parametrize("rel_lvl", [1, 2])
def test_ranx_rbp_is_ragreports_graded_rbp(rel_lvl: int) -> None:
    """ranx's rbp.8 weights a rank by the grade (the issue's case: grade 2 at rank 1 gives
    0.4, not 0.2): ragreport's RBP(p=0.8) under compat='ranx' at ranx's level, as the
    refusal of 'rbp.8' advises."""
    qrels = {"q": {"d": 2}, "r": {"a": 1, "b": 3, "c": 0, "e": 2}}
    run = {"q": {"d": 1.0}, "r": {"a": 0.9, "x": 0.8, "b": 0.7, "e": 0.6, "c": 0.5}}
    r = ragreport.evaluate(qrels, run, ["RBP(p=0.8)"], compat="ranx", rel_level=rel_lvl)
    want = [_ranx_rbp(qrels[q], sorted(run[q], key=run[q].__getitem__, reverse=True), 0.8,
                      rel_lvl) for q in r.query_ids]
    assert r.values("RBP(p=0.8)").tolist() == pytest.approx(want, abs=1e-15)
    if rel_lvl == 1:
        assert r.values("RBP(p=0.8)")[0] == pytest.approx(0.4)
        # the former advice, RBP(p=0.8,rel=1), is binary: 0.2 on the same query
        assert ragreport.evaluate(qrels, run, ["RBP(p=0.8,rel=1)"]).values(
            "RBP(p=0.8,rel=1)")[0] == pytest.approx(0.2)


def test_ir_measures_rbp_is_graded_without_rel_and_binary_with_it() -> None:
    # grades by rank 2 0 1: ir_measures' RBP (trectools) 0.2·(2 + 0.64·1) ; RBP(rel=1)
    # (cwl_eval) 0.2·(1 + 0.64) ; RBP(rel=2) 0.2
    qrels, run = {"q": {"a": 2, "b": 0, "c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    r = ragreport.evaluate(qrels, run, ["RBP(p=0.8)", "RBP(rel=1)", "RBP(p=0.8,rel=2)"])
    assert r.means() == pytest.approx({"RBP(p=0.8)": 0.528, "RBP(p=0.8,rel=1)": 0.328,
                                       "RBP(p=0.8,rel=2)": 0.2}, abs=1e-15)
    ir_measures = pytest.importorskip("ir_measures")
    assert "rel" not in ir_measures.parse_measure("RBP(p=0.8)").params  # graded: trectools
    cwl = {str(m.measure): m.value for m in ir_measures.cwl_eval.iter_calc(
        [ir_measures.RBP(rel=1), ir_measures.RBP(rel=2)], qrels, run)}
    assert [cwl["RBP(rel=1)"], cwl["RBP(rel=2)"]] == pytest.approx([0.328, 0.2], abs=1e-12)


def test_ir_measures_rbp_is_a_cutoff_and_case_tells_ranx_apart() -> None:
    assert str(parse_measure("RBP@95")) == "RBP(p=0.8)@95"
    # ragreport's own trec layout writes rbp_K(p=...): the parameter says the number is K
    assert str(parse_measure("rbp_10(p=0.8)")) == "RBP(p=0.8)@10"


NOT_IMPLEMENTED = [
    ("infAP", r"inferred AP \(trec_eval's and ir_measures' infAP\)"),
    ("infAP(rel=2)", r"inferred AP"),
    ("gm_map", r"trec_eval's gm_map"),
    ("11pt_avg", r"trec_eval's 11pt_avg"),
    ("set_map", r"trec_eval's set_map"),
    ("SetAP", r"ir_measures' SetAP"),
    ("SetRelP", r"ir_measures' SetRelP"),
    ("set_relative_P", r"trec_eval's set_relative_P"),
    ("Rprec_mult_0.20", r"trec_eval's Rprec_mult"),
    ("dcg@10", r"ranx's dcg"),
    ("dcg_burges@10", r"ranx's dcg_burges"),
    ("Hole@10", r"BEIR's and MTEB's Hole@k"),
    ("alpha_nDCG@10", r"ir_measures' alpha_nDCG"),
    ("α_nDCG@10", r"ir_measures' α_nDCG"),
    ("NERR8(max_rel=3)@10", r"ir_measures' NERR8"),
    ("SDCG(max_rel=3)@10", r"ir_measures' SDCG"),
    ("p-MRR", r"MTEB's p-MRR"),
]


@pytest.mark.parametrize(("spelling", "what"), NOT_IMPLEMENTED, ids=[n[0] for n in NOT_IMPLEMENTED])
def test_peer_measure_not_implemented(spelling: str, what: str) -> None:
    with pytest.raises(MeasureError, match=rf"^'{re.escape(spelling)}' is {what}"
                                           r".*, which ragreport does not compute; valid "
                                           r"measures: "):
        parse_measures(spelling)


BAD_PARAMETERS = [
    ("nDCG(dcg=exp)@10", r"^dcg must be 'log2' \(gain = grade\) or 'exp-log2' \(gain = "
                         r"2\^grade - 1\), got 'exp' in"),
    ("P(dcg=log2)@5", r"^P takes no 'dcg' parameter \(nDCG does\)$"),
    ("nDCG(gain=exp,dcg=log2)@5", r"^parameter 'dcg' is given twice in"),
    ("ndcg_burges(gain=linear)@10", r"^ndcg_burges has gain=exp; got"),
    ("nDCG(judged_only=True)@10", r"^judged_only=True \(ir_measures: unjudged documents are "
                                  r"dropped before scoring\) is not implemented"),
    ("P(judged_only=maybe)@5", r"^judged_only must be True or False, got 'maybe'"),
    ("nDCG(gains={0:0,1:1,2:3})@10", r"^custom gains \(ir_measures' gains=\{\.\.\.\}\) are "
                                     r"not implemented"),
    ("SetF(beta=0.5)", r"^only SetF takes beta, and only beta = 1 is implemented"),
    ("P(beta=1)@5", r"^only SetF takes beta"),
    ("set_F.0.5", r"^trec_eval's 'set_F\.0\.5' is set_F with beta = 0\.5; only beta = 1"),
    ("SetP(relative=True)", r"^relative=True \(ir_measures' SetRelP, trec_eval's "
                            r"set_relative_P\) is not implemented"),
    ("P(rel=2)@5-l3", r"^parameter 'rel' is given twice in 'P\(rel=2\)@5-l3'$"),
    ("P(cutoff=5)@10", r"^the cutoff is given twice in"),
    ("IPrec(cutoff=5)", r"^IPrec takes a recall level, not a cutoff"),
    ("IPrec(recall=0.5)@0.3", r"^the recall level is given twice in"),
    ("IPrec@1e-1", r"^recall level must be a decimal number between 0 and 1, got '1e-1'"),
    ("iprec", r"^IPrec needs a recall level in \[0, 1\], e\.g\. IPrec@0\.5, or "
              r"'iprec_at_recall' for trec_eval's 11 levels"),
    ("P(cutoff=0)", r"^cutoff must be between 1 and 2\*\*53, got 0"),
    ("Precision", r"^P needs a cutoff, e\.g\. P@5, or 'P' for trec_eval's default cutoffs "
                  r"\(got 'Precision'\); ranx's bare 'precision' \(the whole ranking\) is SetP$"),
    ("F1", r"^F1 needs a cutoff, e\.g\. F1@5 \(got 'F1'\); ranx's bare 'f1' \(the whole "
           r"ranking\) is SetF$"),
    ("r_cap", r"^R_cap needs a cutoff, e\.g\. R_cap@5"),
    ("ndcg_at_", r"^unknown measure 'ndcg_at_'"),
    ("P_5@10", r"^malformed measure 'P_5@10'"),
    ("NumRet(rel=x)", r"^rel must be a whole number between 0 and 2\*\*53, got 'x'"),
]


@pytest.mark.parametrize(("spelling", "message"), BAD_PARAMETERS,
                         ids=[b[0] for b in BAD_PARAMETERS])
def test_bad_parameters(spelling: str, message: str) -> None:
    with pytest.raises(MeasureError, match=message):
        parse_measures(spelling)


# --- every family: canonical and trec_eval-style names read back ------------------------------

@st.composite
def family_measures(draw: st.DrawFn, name: str) -> Measure:
    fam = FAMILIES[name]
    cutoff: int | None = None
    if fam.at == "cutoff" and fam.cutoff != "none":
        big = st.integers(1, 2**53)
        cutoff = draw(big if fam.cutoff == "required" else st.none() | big)
    rel = draw(st.none() | st.integers(0, 2**53)) if "rel" in fam.params else None
    gain = draw(st.sampled_from(["linear", "exp"])) if "gain" in fam.params else "linear"
    p = draw(st.none() | st.floats(0.0, 1.0, exclude_min=True, exclude_max=True)) \
        if "p" in fam.params else None
    recall = draw(st.floats(0.0, 1.0)) if fam.at == "recall" else None
    return Measure(fam.name, cutoff, rel, gain, p, recall)


@pytest.mark.parametrize("name", sorted(FAMILIES))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_family_round_trips(name: str, data: st.DataObject) -> None:
    m = data.draw(family_measures(name))
    assert parse_measure(str(m)) == m
    assert parse_measure(m.trec_name) == m  # the --format trec name reads back
    assert parse_family(str(m)) == m.curve_key


def test_every_family_has_a_row_in_the_peer_table() -> None:
    named = {parse_measures(s)[0].name for _, s, _ in SPELLINGS}
    assert set(FAMILIES) <= named


def test_trec_default_cutoffs_are_the_peers() -> None:
    import ir_measures

    for name, (_, cuts) in TREC_DEFAULT_CUTOFFS.items():
        theirs = ir_measures.parse_trec_measure(name)
        assert [m["cutoff"] for m in theirs] == list(cuts)


def test_curves_by_peer_names() -> None:
    r = ragreport.evaluate({"q": {"a": 2, "b": 1}}, {"q": ["b", "a", "c"]},
                           ["nDCG(dcg=exp-log2)@3", "r_cap_at_2", "ndcg_at_2", "P(rel=2)@1"],
                           order="given")
    assert r.curve("ndcg_burges").tolist() == r.curve("nDCG(gain=exp)").tolist()
    assert r.curve("nDCG(dcg='exp-log2')")[0, 2] == r.mean("ndcg_burges@3")
    assert r.curve("recall_cap")[0, :2].tolist() == [1.0, 1.0]  # b (1), then a (2)
    assert r.curve("ndcg")[0, 1] == r.mean("ndcg_at_2")
    assert r.curve("P(rel=2)")[0, 0] == 0.0
    assert r.curve("recall").tolist() == r.curve("R").tolist()  # the family: no clash
    with pytest.raises(MeasureError, match=r"^SetP has no cutoff, so no metric-vs-K curve$"):
        r.curve("set_P")


# --- the values: ragreport's number under a peer's name is the peer's number ------------------

def _dataset(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Numeric query ids (gdeval wants them), graded labels 0-3, distinct scores (the peers
    agree on score order; tie orders are tested elsewhere), unjudged documents retrieved."""
    rnd = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(1, 9):
        docs = [f"d{i}" for i in range(40)]
        judged = rnd.sample(docs, rnd.randint(3, 20))
        qrels[str(q)] = {d: (rnd.choice([1, 2, 3]) if i == 0 else rnd.choice([0, 0, 1, 2, 3]))
                         for i, d in enumerate(judged)}
        ret = rnd.sample(docs, rnd.randint(1, 30))
        scores = rnd.sample(range(10_000), len(ret))
        run[str(q)] = {d: float(s) for d, s in zip(ret, scores, strict=True)}
    return qrels, run


# (ragreport spelling, ir_measures measure): equal per the peer's own code
IR_MEASURES_PAIRS = [
    ("P@5", "P@5"), ("R(rel=2)@5", "R(rel=2)@5"), ("AP", "AP"), ("AP@10", "AP@10"),
    ("RR", "RR"), ("RR@3", "RR@3"), ("nDCG@10", "nDCG@10"), ("nDCG", "nDCG"),
    ("Rprec", "Rprec"), ("SetP", "SetP"), ("SetP(rel=2)", "SetP(rel=2)"), ("SetR", "SetR"),
    ("SetF", "SetF"), ("NumRet", "NumRet"), ("NumRet(rel=1)", "NumRet(rel=1)"),
    ("NumRet(rel=2)", "NumRet(rel=2)"), ("NumRelRet", "NumRelRet"), ("NumRel", "NumRel"),
    ("NumQ", "NumQ"), ("Success@5", "Success@5"), ("Bpref", "Bpref"), ("Judged@10", "Judged@10"),
    ("Judged@3", "Judged@3"), ("Judged", "Judged"), ("RBP(rel=1)", "RBP(rel=1)"),
    ("Rprec(rel=2)", "Rprec(rel=2)"), ("Bpref(rel=2)", "Bpref(rel=2)"),
    ("SetF(rel=2)", "SetF(rel=2)"), ("R@1000", "R@1000"),
    ("P@1000", "P@1000"), ("SetR(rel=3)", "SetR(rel=3)"),
    ("RBP(p=0.5,rel=2)", "RBP(p=0.5,rel=2)"), ("ERR@10", "ERR@10"), ("ERR@20", "ERR@20"),
    ("nDCG(dcg=exp-log2)@10", "nDCG(dcg='exp-log2')@10"),
    # ranx's and MTEB/BEIR's spellings against the same ir_measures measure
    ("ndcg_burges@5", "nDCG(dcg='exp-log2')@5"), ("r-precision", "Rprec"),
    ("precision", "SetP"), ("f1", "SetF"), ("precision-l2", "SetP(rel=2)"),
    ("map-l2", "AP(rel=2)"), ("mrr@5", "RR@5"), ("hit_rate@5", "Success@5"),
    ("precision@5-l2", "P(rel=2)@5"), ("ndcg_at_10", "nDCG@10"), ("map_at_10", "AP@10"),
    ("recall_at_100", "R@100"), ("precision_at_1", "P@1"), ("mrr_at_10", "RR@10"),
    ("hit_rate_at_10", "Success@10"), ("MAP@10", "AP@10"), ("Recall@10", "R@10"),
    # trec_eval's names (ir_measures.parse_trec_measure gives the reference)
    ("set_P", "SetP"), ("set_recall", "SetR"), ("set_F", "SetF"), ("num_q", "NumQ"),
    ("num_rel_ret", "NumRelRet"), ("bpref", "Bpref"),
]
# IPrec is left out: ragreport rounds the recall level's rank as trec_eval 10 does
# (lround(r x R)); pytrec_eval and so ir_measures (and ranx) round as trec_eval 9 did
# ((long)(r x R + 0.9)). tests/measures/test_measures_new.py compares both roundings.


@pytest.mark.parametrize("seed", [0, 1])
def test_values_equal_ir_measures(seed: int) -> None:
    import ir_measures

    qrels, run = _dataset(seed)
    names = [ours for ours, _ in IR_MEASURES_PAIRS]
    r = ragreport.evaluate(qrels, run, names)
    theirs = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(t) for _, t in IR_MEASURES_PAIRS], qrels, run)
    for ours, their in IR_MEASURES_PAIRS:
        m = parse_measure(ours)
        value = r.mean(m) * (r.n_queries if m.family.aggregate == "sum" else 1)
        # gdeval (ERR, exp-log2 nDCG) prints 5 decimals per query
        tol = 6e-6 if their.startswith(("ERR", "nDCG(dcg")) else 1e-12
        assert value == pytest.approx(theirs[ir_measures.parse_measure(their)], abs=tol), ours


def test_trec_eval_lists_equal_ir_measures() -> None:
    import ir_measures

    qrels, run = _dataset(2)
    for name in ("P", "ndcg_cut", "map_cut", "success"):
        ours = parse_measures(name)
        theirs = ir_measures.parse_trec_measure(name)
        r = ragreport.evaluate(qrels, run, ours)
        ref = ir_measures.calc_aggregate(theirs, qrels, run)
        assert [r.mean(m) for m in ours] == pytest.approx([ref[t] for t in theirs], abs=1e-12)


def beir_recall_cap(qrels: dict[str, int], ranking: list[str], k: int) -> float:
    """BEIR's ``recall_cap`` (beir/retrieval/custom_metrics.py) for one query, transcribed:
    the documents with grade > 0 in the top k over min(relevant, k)."""
    relevant = [d for d, g in qrels.items() if g > 0]
    retrieved = [d for d in ranking[:k] if qrels.get(d, 0) > 0]
    return len(retrieved) / min(len(relevant), k)


def mteb_mrr(qrels: dict[str, int], ranking: list[str], k: int) -> float:
    """MTEB's ``mrr`` (mteb/_evaluators/retrieval_metrics.py) for one query, transcribed."""
    relevant = {d for d, g in qrels.items() if g > 0}
    return next((1.0 / (i + 1) for i, d in enumerate(ranking[:k]) if d in relevant), 0.0)


@pytest.mark.parametrize("k", [1, 3, 10, 100])
def test_r_cap_and_mrr_at_k_equal_beir_and_mteb(k: int) -> None:
    qrels, run = _dataset(3)
    r = ragreport.evaluate(qrels, run, [f"r_cap_at_{k}", f"mrr_at_{k}", f"R_cap@{k}"])
    for i, q in enumerate(r.query_ids):
        ranking = sorted(run[q], key=lambda d: (run[q][d], d), reverse=True)
        assert r.values(f"r_cap_at_{k}")[i] == pytest.approx(
            beir_recall_cap(qrels[q], ranking, k), abs=1e-15)
        assert r.values(f"mrr_at_{k}")[i] == mteb_mrr(qrels[q], ranking, k)


# --- ranx's own definitions, transcribed from ranx/metrics/*.py (github.com/AmenRa/ranx) -------

def ranx_precision_f1(qrels: dict[str, int], ranking: list[str], rel_lvl: int) -> tuple[
        float, float]:
    """``_precision`` and ``_f1`` with k = 0 (the whole ranking): hits / len(run), and the
    harmonic mean with hits / relevant (0 without a relevant document or a retrieved one)."""
    rel = {d for d, g in qrels.items() if g >= rel_lvl}
    hits = sum(1 for d in ranking if d in rel)
    precision = hits / len(ranking) if ranking else 0.0
    if not rel or not ranking:
        return precision, 0.0
    recall = hits / len(rel)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, f1


def ranx_ndcg(qrels: dict[str, int], ranking: list[str], k: int, burges: bool) -> float:
    """``_ndcg`` (rel_lvl 1): DCG over the first k retrieved (all when k = 0 or past the end),
    gain = grade (jarvelin) or 2^grade - 1 (burges), over the same on the judged relevant
    documents best first; an IDCG of 0 is read as 1."""
    rel = {d: g for d, g in qrels.items() if g >= 1}
    if not rel:
        return 0.0

    def dcg(grades: list[int]) -> float:
        n = len(grades) if k == 0 or k > len(grades) else k
        return sum((g if not burges else 2**g - 1) / math.log2(i + 2)
                   for i, g in enumerate(grades[:n]))

    ideal = dcg(sorted(rel.values(), reverse=True))
    return dcg([rel.get(d, 0) for d in ranking]) / (ideal if ideal != 0.0 else 1.0)


def ranx_r_precision(qrels: dict[str, int], ranking: list[str]) -> float:
    """``_r_precision``: hits in the top R / R, R = relevant judged (0 when R = 0)."""
    rel = {d for d, g in qrels.items() if g >= 1}
    return sum(1 for d in ranking[:len(rel)] if d in rel) / len(rel) if rel else 0.0


def ranx_bpref(qrels: dict[str, int], ranking: list[str]) -> float:
    """``_bpref`` (rel_lvl 1): unjudged documents dropped, then for each relevant one
    1 - min(non-relevant above, R) / min(R, N), summed, / R; N counts every judged document
    below the level (negative grades too), and N = 0 gives NaN (0 / 0)."""
    n_rels = sum(1 for g in qrels.values() if g >= 1)
    n_non = sum(1 for g in qrels.values() if g < 1)
    judged = [qrels[d] >= 1 for d in ranking if d in qrels]
    total, above = 0.0, 0
    for is_rel in judged:
        if is_rel:
            denominator = min(n_rels, n_non)
            total += 1.0 - (min(above, n_rels) / denominator if denominator else math.nan)
        else:
            above += 1
    return total / n_rels


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_ranx_names_give_ranx_numbers(seed: int) -> None:
    qrels, run = _dataset(seed)
    names = ["precision", "f1", "precision-l2", "ndcg@5", "ndcg_burges@5", "ndcg_burges",
             "r-precision", "bpref"]
    r = ragreport.evaluate(qrels, run, names)
    for i, q in enumerate(r.query_ids):
        ranking = sorted(run[q], key=lambda d: run[q][d], reverse=True)  # distinct scores
        precision, f1 = ranx_precision_f1(qrels[q], ranking, 1)
        assert r.values("precision")[i] == pytest.approx(precision, abs=1e-15)
        assert r.values("f1")[i] == pytest.approx(f1, abs=1e-15)
        assert r.values("precision-l2")[i] == pytest.approx(
            ranx_precision_f1(qrels[q], ranking, 2)[0], abs=1e-15)
        assert r.values("ndcg@5")[i] == pytest.approx(ranx_ndcg(qrels[q], ranking, 5, False),
                                                       abs=1e-12)
        assert r.values("ndcg_burges@5")[i] == pytest.approx(
            ranx_ndcg(qrels[q], ranking, 5, True), abs=1e-12)
        assert r.values("ndcg_burges")[i] == pytest.approx(
            ranx_ndcg(qrels[q], ranking, 0, True), abs=1e-12)
        assert r.values("r-precision")[i] == pytest.approx(ranx_r_precision(qrels[q], ranking),
                                                           abs=1e-15)
        if any(g < 1 for g in qrels[q].values()):  # ranx: NaN without a judged non-relevant
            assert r.values("bpref")[i] == pytest.approx(ranx_bpref(qrels[q], ranking),
                                                         abs=1e-15)


def test_ranx_bpref_differs_only_where_the_readme_says() -> None:
    """A query without a judged non-relevant document: ranx's bpref is NaN, trec_eval's (and
    ragreport's) counts each relevant document retrieved as 1."""
    qrels, ranking = {"a": 1, "b": 1}, ["x", "a", "b"]
    assert math.isnan(ranx_bpref(qrels, ranking))
    r = ragreport.evaluate({"q": qrels}, {"q": ranking}, ["bpref"], order="given")
    assert r.values("bpref").tolist() == [1.0]


def _table_measure(name: str) -> Measure:
    """A name of the measure table's first column as a measure (K stands for a cutoff, r for
    a recall level, N for a relevance level)."""
    return parse_measures(re.sub(r"@(K|r)\b", "@0.1" if "IPrec" in name else "@10",
                                 name.replace("rel=N", "rel=1")))[0]


def test_measure_table_matches_the_parser() -> None:
    """The measure table of docs/measures.md (generated from each family's rows, see
    scripts/gen_docs.py): every name of a row's first column reads as the row's family, and
    each peer's name in it reads as the row's measure (K and k stand for a cutoff; a name
    marked ¹ is refused, see the page)."""
    for fam in FAMILIES.values():
        for row in fam.doc_rows:
            names = re.findall(r"`([^`]+)`", row.shown)
            assert names, (fam.name, row)
            ours = _table_measure(names[0])
            assert ours.name == fam.name, row.shown
            for name in names[1:]:
                m = _table_measure(name)
                assert (m.name, m.gain, m.rel) == (ours.name, ours.gain, ours.rel), row.shown
            for _, cell in row.peers:
                for token in re.findall(r"`([^`]+)`", cell):
                    if "¹" in cell or token.startswith("--"):
                        continue
                    spelled = re.sub(r"(?<=[@_.])K\b|(?<=@)k\b", "10", token)
                    theirs = parse_measures(spelled.replace("rel=N", "rel=1"))[0]
                    assert (theirs.name, theirs.gain) == (ours.name, ours.gain), (token, row)
                    if ours.name == "RBP":  # graded without rel, binary with it (ir_measures)
                        assert theirs.rel == ours.rel, (token, row.shown)


def test_readme_judged_divisor_is_the_codes() -> None:
    """The README's Judged@K row divides by min(K, retrieved), as judged_at_k and ir_measures
    do: qrels {a, b, c}, run [a, b, x] gives Judged@10 = 2/3, not 2/10."""

    text = user_docs()
    row = next(line for line in text.splitlines() if line.startswith("| `Judged@K`"))
    definition = row.split("|")[2]
    assert "min(K, retrieved)" in definition, definition
    r = ragreport.evaluate({"q": {"a": 1, "b": 1, "c": 1}}, {"q": {"a": 3, "b": 2, "x": 1}},
                           ["Judged@10"])
    assert r.values("Judged@10").tolist() == pytest.approx([2 / 3])


@pytest.mark.parametrize("seed", [4, 5])
def test_ranx_level_suffix_refusal_under_compat_ranx_says_what_to_do(seed: int) -> None:
    """``--compat ranx -m ndcg@10-l2``: the message does not send the user to --compat ranx
    (already given) but to what is missing, and doing what it says gives ranx's ndcg@10-l2
    (ranx's _dcg: clean_qrels(qrels, rel_lvl) drops grades below the level, gain = grade)."""
    qrels, run = _dataset(seed)
    with pytest.raises(MeasureError) as info:
        ragreport.evaluate(qrels, run, ["ndcg@10-l2"], compat="ranx")
    text = str(info.value)
    assert "even with compat='ranx'" in text
    advice = re.search(r"--compat ranx -l (\d+) -m '([^']+)'", text)
    assert advice is not None, text
    level, name = int(advice.group(1)), advice.group(2)
    r = ragreport.evaluate(qrels, run, [name], compat="ranx", rel_level=level)
    for i, q in enumerate(r.query_ids):
        ranking = sorted(run[q], key=lambda d: run[q][d], reverse=True)  # distinct scores
        kept = {d: g for d, g in qrels[q].items() if g >= level}
        assert r.values(name)[i] == pytest.approx(ranx_ndcg(kept, ranking, 10, False),
                                                  abs=1e-12), q


def test_every_parameter_of_the_table_is_read_and_listed() -> None:
    """The parameter table (measures.names.PARAMS) is what the parser reads and what its
    message lists: one row per key, each read into the measure."""
    from ragreport.measures.names import PARAMS

    written = {"rel": ("P(rel=2)@5", "rel", 2), "gain": ("nDCG(gain=exp)@5", "gain", "exp"),
               "p": ("RBP(p=0.5)", "p", 0.5), "dcg": ("nDCG(dcg=exp-log2)@5", "gain", "exp"),
               "cutoff": ("P(cutoff=7)", "cutoff", 7),
               "recall": ("IPrec(recall=0.5)", "recall", 0.5),
               "judged_only": ("P(judged_only=False)@5", "cutoff", 5),
               "beta": ("SetF(beta=1)", "name", "SetF"),
               "relative": ("SetP(relative=False)", "name", "SetP")}
    assert set(written) == set(PARAMS)
    for text, attr, want in written.values():
        assert getattr(parse_measure(text), attr) == want, text
    with pytest.raises(MeasureError) as err:
        parse_measure("P(bogus=1)@5")
    assert all(PARAMS[key].shown in str(err.value) for key in PARAMS)
