"""Measure names: canonical round trip, aliases, trec_eval names, and errors."""

from __future__ import annotations

import pytest
from hypothesis import given
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
    return Measure(fam.name, cutoff, rel, gain)


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


VALID = (r"valid measures: P@K, R@K, F1@K, HitRate@K, RR\[@K\], nDCG\[@K\], AP\[@K\], Rprec, "
         r"NumRet, NumRel, NumRelRet; parameters: P\(rel=2\)@5, nDCG\(gain=exp\)@10; aliases")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo", r"^unknown measure 'foo'; " + VALID),
        ("foo@5", r"^unknown measure 'foo@5'; " + VALID),
        ("P", r"^P needs a cutoff, e\.g\. P@5 \(got 'P'\)$"),
        ("recall", r"^R needs a cutoff, e\.g\. R@5 \(got 'recall'\)$"),
        ("P@0", r"^cutoff must be >= 1, got 0 in 'P@0'$"),
        ("P@-1", r"^cutoff must be >= 1, got -1 in 'P@-1'$"),
        ("P@x", r"^cutoff must be a whole number >= 1, got 'x' in 'P@x'$"),
        ("P.0", r"^cutoff must be >= 1, got 0 in 'P.0'$"),
        ("P(foo=1)@5", r"^unknown parameter 'foo' in 'P\(foo=1\)@5'; valid: rel, gain$"),
        ("P(rel)@5", r"^parameter must be key=value, got 'rel' in 'P\(rel\)@5'$"),
        ("P(rel=x)@5", r"^rel must be an integer, got 'x' in 'P\(rel=x\)@5'$"),
        ("Rprec@5", r"^Rprec takes no cutoff, got Rprec@5$"),
        ("nDCG(gain=foo)@10",
         r"^gain must be 'linear' or 'exp', got 'foo' in 'nDCG\(gain=foo\)@10'$"),
        ("P(gain=exp)@5", r"^P takes no 'gain' parameter$"),
        ("nDCG(rel=2)@5", r"^nDCG takes no 'rel' parameter$"),
        ("", r"^a measure name must be a non-empty string, got ''$"),
        ("P.", r"^malformed measure 'P\.'; " + VALID),
    ],
    ids=["unknown", "unknown-cutoff", "P-no-cutoff", "recall-no-cutoff", "P@0", "P@-1", "P@x",
         "trec-cutoff-0", "unknown-param", "param-no-value", "rel-not-int", "Rprec@5",
         "gain=foo", "gain-on-P", "rel-on-nDCG", "empty", "malformed"],
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
    with pytest.raises(MeasureError, match=r"^expected one measure, 'P\.5,10' names 2$"):
        parse_measure("P.5,10")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("X",), r"^unknown measure family 'X'; valid measures"),
        (("P", 0), r"^cutoff must be >= 1, got 0 in P$"),
        (("P", True), r"^cutoff must be an integer, got True$"),
        (("Rprec", 5), r"^Rprec takes no cutoff, got Rprec@5$"),
        (("NumRet", None, 2), r"^NumRet takes no 'rel' parameter$"),
        (("nDCG", 5, None, "log"), r"^gain must be 'linear' or 'exp', got 'log'$"),
    ],
    ids=["family", "cutoff-0", "cutoff-bool", "Rprec-cutoff", "rel-on-NumRet", "gain"],
)
def test_measure_constructor_errors(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(MeasureError, match=message):
        Measure(*args)  # type: ignore[arg-type]
