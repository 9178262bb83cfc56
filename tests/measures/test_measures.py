"""Measure names: canonical round trip, aliases, trec_eval names, and errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragreport.errors import MeasureError, RagReportError
from ragreport.measures import (
    DEFAULT_MEASURES,
    FAMILIES,
    TREC_DEFAULT_MEASURES,
    Measure,
    normalize_measures,
    parse_measure,
    parse_measures,
)

CANONICAL = [
    "P@5", "R@10", "F1@5", "HitRate@5", "RR", "RR@10", "nDCG@10", "nDCG(gain=exp)@10",
    "nDCG", "nDCG(gain=exp)", "AP", "AP@100", "Rprec", "P(rel=2)@5", "R(rel=3)@1",
    "AP(rel=2)", "RR(rel=2)@3", "Rprec(rel=2)", "NumRet", "NumRel", "NumRelRet",
    "Hits@3", "Hits", "Hits(rel=2)@5", "P@9007199254740992",
]


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_names_round_trip(name: str) -> None:
    m = parse_measure(name)
    assert str(m) == name
    assert str(parse_measure(str(m))) == str(m)
    assert parse_measure(str(m)) == m
    assert repr(m) == f"Measure({name!r})"


def test_canonical_fields() -> None:
    assert parse_measure("nDCG(gain=exp)@10") == Measure("nDCG", 10, gain="exp")
    assert parse_measure("P(rel=2)@5") == Measure("P", 5, rel=2)
    assert parse_measure("AP") == Measure("AP")
    assert parse_measure("AP@100").cutoff == 100
    assert parse_measure(Measure("RR")) == Measure("RR")


@st.composite
def measures(draw: st.DrawFn) -> Measure:
    fam = FAMILIES[draw(st.sampled_from(sorted(FAMILIES)))]
    if fam.cutoff == "required":
        cutoff: int | None = draw(st.integers(1, 10_000))
    elif fam.cutoff == "optional":
        cutoff = draw(st.none() | st.integers(1, 10_000))
    else:
        cutoff = None
    rel = draw(st.none() | st.integers(0, 10)) if "rel" in fam.params else None
    gain = draw(st.sampled_from(["linear", "exp"])) if "gain" in fam.params else "linear"
    p = draw(st.none() | st.floats(0.0, 1.0, exclude_min=True, exclude_max=True)) \
        if "p" in fam.params else None
    recall = draw(st.floats(0.0, 1.0)) if fam.at == "recall" else None
    return Measure(fam.name, cutoff, rel, gain, p, recall)


@given(measures())
def test_round_trip_generated(m: Measure) -> None:
    text = str(m)
    back = parse_measure(text)
    assert back == m
    assert str(back) == text
    assert hash(back) == hash(m)


def test_measures_are_hashable_and_equal_by_value() -> None:
    table = {parse_measure("P@5"): 1, parse_measure("nDCG(gain=exp)@10"): 2}
    assert table[Measure("P", 5)] == 1
    assert table[Measure("nDCG", 10, gain="exp")] == 2
    assert parse_measure("precision@5") == Measure("P", 5)
    assert Measure("P", 5) != Measure("P", 10)
    assert Measure("P", 5) != Measure("P", 5, rel=2)
    assert len({Measure("RR"), parse_measure("mrr"), parse_measure("recip_rank")}) == 1


def test_at_and_curve_key() -> None:
    m = parse_measure("P(rel=2)@5")
    assert str(m.at(10)) == "P(rel=2)@10"
    assert str(m.curve_key) == "P(rel=2)"
    assert m.has_curve
    assert not Measure("Rprec").has_curve


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        # ranx
        ("ndcg@10", ["nDCG@10"]),
        ("mrr", ["RR"]),
        ("recall@5", ["R@5"]),
        ("precision@3", ["P@3"]),
        ("hit_rate@5", ["HitRate@5"]),
        ("hits@3", ["Hits@3"]),      # the NUMBER of relevant documents in the top 3
        ("hits", ["Hits"]),          # ... in the whole ranking
        ("r-precision", ["Rprec"]),
        ("map", ["AP"]),
        ("map@100", ["AP@100"]),
        ("MRR@10", ["RR@10"]),
        # ir_measures
        ("Success@5", ["HitRate@5"]),
        ("nDCG@10", ["nDCG@10"]),
        ("R@1000", ["R@1000"]),
        # trec_eval, with cutoff lists
        ("P.5,10", ["P@5", "P@10"]),
        ("recall.5", ["R@5"]),
        ("ndcg_cut.10,20", ["nDCG@10", "nDCG@20"]),
        ("success.1,5", ["HitRate@1", "HitRate@5"]),
        ("recip_rank", ["RR"]),
        ("map_cut.100", ["AP@100"]),
        ("Rprec", ["Rprec"]),
        ("ndcg", ["nDCG"]),
        ("num_ret", ["NumRet"]),
        ("num_rel", ["NumRel"]),
        ("num_rel_ret", ["NumRelRet"]),
        # trec_eval, as printed
        ("P_5", ["P@5"]),
        ("ndcg_cut_10", ["nDCG@10"]),
        ("recall_10", ["R@10"]),
        ("success_5", ["HitRate@5"]),
        ("recip_rank_10", ["RR@10"]),
        ("F1_5", ["F1@5"]),
        ("F1.5,10", ["F1@5", "F1@10"]),
        ("hits_3", ["Hits@3"]),
        # trec_eval's bare names: its default cutoffs (trec_eval -m P; ir_measures'
        # parse_trec_measure reads them the same way)
        ("P", [f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("ndcg_cut", [f"nDCG@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("map_cut", [f"AP@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("success", ["HitRate@1", "HitRate@5", "HitRate@10"]),
        # white space around the name is ignored
        (" P@5 ", ["P@5"]),
        ("P@05", ["P@5"]),
    ],
)
def test_aliases(alias: str, canonical: list[str]) -> None:
    assert [str(m) for m in parse_measures(alias)] == canonical


@pytest.mark.parametrize(
    ("name", "trec"),
    [
        ("P@5", "P_5"), ("R@10", "recall_10"), ("F1@5", "F1_5"), ("HitRate@5", "success_5"),
        ("RR", "recip_rank"), ("RR@10", "recip_rank_10"), ("nDCG@10", "ndcg_cut_10"),
        ("nDCG", "ndcg"), ("AP", "map"), ("AP@100", "map_cut_100"), ("Rprec", "Rprec"),
        ("NumRet", "num_ret"), ("NumRel", "num_rel"), ("NumRelRet", "num_rel_ret"),
        ("Hits@3", "hits_3"), ("Hits", "hits"),
    ],
)
def test_trec_name(name: str, trec: str) -> None:
    assert parse_measure(name).trec_name == trec
    # and trec_eval's printed name parses back to the same measure
    assert parse_measure(trec) == parse_measure(name)


def test_normalize_measures_dedups_and_defaults() -> None:
    assert [str(m) for m in normalize_measures(["P@5", "precision@5", "P.5,10", "mrr"])] == [
        "P@5", "P@10", "RR"]
    assert [str(m) for m in normalize_measures(None)] == list(DEFAULT_MEASURES)
    assert [str(m) for m in normalize_measures("nDCG@10")] == ["nDCG@10"]
    trec = normalize_measures(list(TREC_DEFAULT_MEASURES))
    assert [m.trec_name for m in trec][:6] == [
        "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank"]
    with pytest.raises(MeasureError, match=r"^no measure given$"):
        normalize_measures([])


VALID = (r"valid measures: P@K, R@K, F1@K, HitRate@K, Hits\[@K\], RR\[@K\], nDCG\[@K\], "
         r"AP\[@K\], Rprec, NumRet, NumRel, NumRelRet, NumQ, SetP, SetR, SetF, Judged\[@K\], "
         r"Bpref, IPrec@r, ERR\[@K\], RBP\[@K\], R_cap@K; parameters: P\(rel=2\)@5, "
         r"nDCG\(gain=exp\)@10, RBP\(p=0\.8\)@10 \(r: a recall level in \[0, 1\], "
         r"IPrec@0\.5\); aliases")
BOUND = r"cutoff must be between 1 and 2\*\*53"
WHOLE = r"cutoff must be a whole number between 1 and 2\*\*53"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo", r"^unknown measure 'foo'; " + VALID),
        ("foo@5", r"^unknown measure 'foo@5'; " + VALID),
        ("p", r"^P needs a cutoff, e\.g\. P@5, or 'P' for trec_eval's default cutoffs "
              r"\(got 'p'\); ranx's bare 'precision' \(the whole ranking\) is SetP$"),
        ("Recall", r"^'Recall' is ambiguous without a cutoff: trec_eval and ir_measures' "
                   r"parse_trec_measure read 'recall' as"),
        ("R", r"^R needs a cutoff, e\.g\. R@5, or 'recall\.5,10,15,20,30,100,200,500,1000' "
              r"for trec_eval's default cutoffs \(got 'R'\)$"),
        ("Success", r"^HitRate needs a cutoff, e\.g\. HitRate@5, or 'success' for trec_eval"),
        ("P@0", rf"^{BOUND}, got 0 in 'P@0'$"),
        ("P@-1", rf"^{BOUND}, got -1 in 'P@-1'$"),
        ("P@x", rf"^{WHOLE}, got 'x' in 'P@x'$"),
        ("P@ 5", rf"^{WHOLE}, got ' 5' in 'P@ 5'$"),
        ("P @5", r"^malformed measure 'P @5'; "),
        ("P@10^23", rf"^{WHOLE}, got '10\^23' in 'P@10\^23'$"),
        ("P@1e3", rf"^{WHOLE}, got '1e3' in 'P@1e3'$"),
        ("P@5.0", rf"^{WHOLE}, got '5\.0' in 'P@5\.0'$"),
        ("P@1_000", rf"^{WHOLE}, got '1_000' in 'P@1_000'$"),
        ("P@\u0665", rf"^{WHOLE}, got '\u0665' in"),  # ARABIC-INDIC DIGIT FIVE: int() takes it
        ("P@9007199254740993", rf"^{BOUND}, got 9007199254740993 in "),
        ("P@" + "9" * 5000, rf"^{BOUND}, got 9{{39}}… in 'P@9{{77}}…'$"),
        ("P.0", rf"^{BOUND}, got 0 in 'P\.0'$"),
        ("P.5,,10", r"^empty cutoff in the list '5,,10' of 'P\.5,,10'$"),
        ("P(foo=1)@5", r"^unknown parameter 'foo' in 'P\(foo=1\)@5'; valid: rel, gain, p, "
                       r"and ir_measures' dcg, cutoff, recall, judged_only=False, beta=1, "
                       r"relative=False$"),
        ("P(rel)@5", r"^parameter must be key=value, got 'rel' in 'P\(rel\)@5'$"),
        ("P(rel=x)@5", r"^rel must be a whole number between 0 and 2\*\*53, got 'x' in "
                       r"'P\(rel=x\)@5'$"),
        ("P(rel=-1)@5", r"^rel must be a whole number between 0 and 2\*\*53, got '-1'"),
        ("Rprec@5", r"^Rprec takes no cutoff, got Rprec@5$"),
        ("nDCG(gain=foo)@10",
         r"^gain must be 'linear' or 'exp', got 'foo' in 'nDCG\(gain=foo\)@10'$"),
        ("P(gain=exp)@5", r"^P takes no 'gain' parameter$"),
        ("nDCG(rel=2)@5", r"^nDCG takes no 'rel' parameter$"),
        ("", r"^a measure name must be a non-empty string, got ''$"),
        ("P.", r"^malformed measure 'P\.'; " + VALID),
        # names the peers read differently without a cutoff: refused, naming the readings
        ("recall", r"^'recall' is ambiguous without a cutoff: trec_eval and ir_measures' "
                   r"parse_trec_measure read 'recall' as recall_5, recall_10, \.\.\. "
                   r"recall_1000 .*; ranx and LlamaIndex read it as the recall of the whole "
                   r"ranking \(write SetR, trec_eval's set_recall\)$"),
        ("hit_rate", r"^'hit_rate' is ambiguous without a cutoff: ranx and LlamaIndex read "
                     r"'hit_rate' without k as 1 if any relevant document is retrieved .*"
                     r"trec_eval's success means success_1, success_5, success_10"),
    ],
    ids=["unknown", "unknown-cutoff", "p-no-cutoff", "Recall-no-cutoff", "R-no-cutoff",
         "Success-no-cutoff",
         "P@0", "P@-1", "P@x", "P@space5", "P-space@5", "P@10^23", "P@1e3", "P@5.0", "P@1_000",
         "P@arabic-5", "P@2**53+1", "P@huge", "trec-cutoff-0", "empty-in-list",
         "unknown-param", "param-no-value", "rel-not-int", "rel-negative", "Rprec@5",
         "gain=foo", "gain-on-P", "rel-on-nDCG", "empty", "malformed", "recall-bare",
         "hit_rate-bare"],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(MeasureError, match=message) as info:
        parse_measures(text)
    assert isinstance(info.value, RagReportError)
    assert isinstance(info.value, ValueError)


def test_unknown_name_lists_aliases_and_trec_names() -> None:
    with pytest.raises(MeasureError) as info:
        parse_measure("bogus")
    text = str(info.value)
    for hint in ("ndcg@10", "mrr", "recall@5", "hit_rate@5", "map", "Success@5", "P.5,10",
                 "ndcg_cut.10,20"):
        assert hint in text


def test_parse_measure_wants_exactly_one() -> None:
    with pytest.raises(MeasureError, match=r"^expected one measure, 'P\.5,10' names 2 "
                                           r"\(P@5, P@10\)$"):
        parse_measure("P.5,10")
    with pytest.raises(MeasureError, match=r"^expected one measure, 'P' names 9 "
                                           r"\(P@5, P@10, P@15, \.\.\.\)$"):
        parse_measure("P")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("X",), r"^unknown measure family 'X'; valid measures"),
        (("P", 0), r"^cutoff must be between 1 and 2\*\*53, got 0 in P$"),
        (("P", 2**53 + 1), r"^cutoff must be between 1 and 2\*\*53, got 9007199254740993 in P$"),
        (("P", 10**400), r"^cutoff must be between 1 and 2\*\*53, got an integer of about "
                         r"400 digits in P$"),
        (("P", -(10**5000)), r"^cutoff must be between 1 and 2\*\*53, got a negative integer of "
                             r"about 5000 digits in P$"),
        (("P", 5, 2**53 + 1), r"^rel must be at most 2\*\*53, got 9007199254740993$"),
        (("P", True), r"^cutoff must be an integer, got True$"),
        (("Rprec", 5), r"^Rprec takes no cutoff, got Rprec@5$"),
        (("NumRet", None, 2), r"^NumRet takes no 'rel' parameter$"),
        (("nDCG", 5, None, "log"), r"^gain must be 'linear' or 'exp', got 'log'$"),
    ],
    ids=["family", "cutoff-0", "cutoff-2**53+1", "cutoff-huge", "cutoff-5000-digits",
         "rel-2**53+1", "cutoff-bool",
         "Rprec-cutoff", "rel-on-NumRet", "gain"],
)
def test_measure_constructor_errors(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(MeasureError, match=message):
        Measure(*args)  # type: ignore[arg-type]


# --- Hits@K: ranx's hits@k, a count ---------------------------------------------------------

def ranx_hits(relevant: dict[str, int], ranking: list[str], k: int, rel_lvl: int) -> float:
    """ranx 0.3's ``_hits`` (ranx/metrics/hits.py), transcribed: the judged documents with a
    grade >= rel_lvl found in the first k retrieved (k = 0 or k > len: all retrieved)."""
    rel = {d for d, g in relevant.items() if g >= rel_lvl}
    if not rel:
        return 0.0
    if k == 0 or k > len(ranking):
        k = len(ranking)
    return float(sum(1 for d in ranking[:k] if d in rel))


@st.composite
def hits_cases(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    docs = [f"d{i}" for i in range(12)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[str]] = {}
    for q in range(draw(st.integers(1, 5))):
        judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=8, unique=True))
        qrels[f"q{q}"] = {d: draw(st.integers(0, 3)) for d in judged}
        run[f"q{q}"] = draw(st.lists(st.sampled_from(docs), max_size=10, unique=True))
    return qrels, run


@settings(max_examples=60, deadline=None)
@given(hits_cases(), st.integers(1, 12), st.integers(1, 3))
def test_hits_is_ranx_hits(case: tuple[dict[str, dict[str, int]], dict[str, list[str]]],
                           k: int, level: int) -> None:
    import numpy as np

    import ragreport

    qrels, run = case
    r = ragreport.evaluate(qrels, run, [f"hits(rel={level})@{k}", f"hits(rel={level})"],
                           order="given", complete=True)
    for i, q in enumerate(r.query_ids):
        assert r.values(f"Hits(rel={level})@{k}")[i] == ranx_hits(qrels[q], run.get(q, []), k,
                                                                   level)
        assert r.values(f"Hits(rel={level})")[i] == ranx_hits(qrels[q], run.get(q, []), 0,
                                                              level)
    # averaged over the queries, as ranx's evaluate() does
    expected = np.mean([ranx_hits(qrels[q], run.get(q, []), k, level) for q in r.query_ids])
    assert r.mean(f"Hits(rel={level})@{k}") == pytest.approx(expected, abs=1e-15)


def test_hits_counts_by_hand_and_differs_from_hit_rate() -> None:
    import ragreport

    qrels = {"q1": {"a": 1, "b": 2, "c": 0, "z": 1}, "q2": {"x": 1}}
    run = {"q1": ["a", "c", "b", "d"], "q2": ["y", "w"]}
    r = ragreport.evaluate(qrels, run, ["hits@1", "hits@3", "hits", "HitRate@3",
                                        "Hits(rel=2)@3"], order="given")
    assert r.per_query("Hits@1") == {"q1": 1.0, "q2": 0.0}
    assert r.per_query("Hits@3") == {"q1": 2.0, "q2": 0.0}  # a and b
    assert r.per_query("Hits") == {"q1": 2.0, "q2": 0.0}
    assert r.per_query("HitRate@3") == {"q1": 1.0, "q2": 0.0}
    assert r.per_query("Hits(rel=2)@3") == {"q1": 1.0, "q2": 0.0}
    assert r.means()["Hits@3"] == 1.0
    assert not FAMILIES["Hits"].bounded and FAMILIES["Hits"].aggregate == "mean"
    assert FAMILIES["NumRelRet"].aggregate == "sum"
    # a cutoff past the end of every ranking counts the whole ranking
    assert ragreport.evaluate(qrels, run, ["hits@100000"], order="given").per_query(
        "Hits@100000") == {"q1": 2.0, "q2": 0.0}


def ranx_map_at_k(relevant: dict[str, int], ranking: list[str], k: int, rel_lvl: int) -> float:
    """ranx 0.3's ``_average_precision`` (ranx/metrics/average_precision.py), transcribed:
    the precision at each relevant rank within k, summed, divided by ALL the relevant judged
    documents (not min(k, relevant)): trec_eval's map_cut_k."""
    rel = {d for d, g in relevant.items() if g >= rel_lvl}
    if not rel:
        return 0.0
    if k == 0 or k > len(ranking):
        k = len(ranking)
    hits = [d in rel for d in ranking[:k]]
    return sum(sum(hits[: r + 1]) / (r + 1) for r in range(k) if hits[r]) / len(rel)


@settings(max_examples=60, deadline=None)
@given(hits_cases(), st.integers(1, 12))
def test_ranx_map_at_k_is_ap_at_k(case: tuple[dict[str, dict[str, int]], dict[str, list[str]]],
                                  k: int) -> None:
    import ragreport

    qrels, run = case
    assert [str(m) for m in parse_measures(f"map@{k}")] == [f"AP@{k}"]
    r = ragreport.evaluate(qrels, run, [f"map@{k}"], order="given", complete=True)
    for i, q in enumerate(r.query_ids):
        assert r.values(f"AP@{k}")[i] == pytest.approx(
            ranx_map_at_k(qrels[q], run.get(q, []), k, 1), abs=1e-15)
