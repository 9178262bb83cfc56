"""Tie exposure (ragreport.core.ties): straddles, the interval over all tie orders, ties="average".

The interval ends and the averages are compared with brute force: every order of every tied
group enumerated, each evaluated by the engine's trec_eval path.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragreport
from ragreport.core import kernel, tiegroups, ties
from ragreport.core.ranking import Ranking
from ragreport.errors import MeasureError, RagReportError
from ragreport.measures import parse_measure
from ragreport.report import Report

MEASURES = ["P@1", "P@3", "R@2", "F1@3", "HitRate@1", "HitRate@3", "Hits@2", "RR", "RR@2",
            "nDCG@3", "nDCG", "nDCG(gain=exp)@2", "AP", "AP@3", "Rprec", "P(rel=2)@2",
            "R_cap@2", "Judged@2", "RBP(p=0.8)", "RBP(p=0.5)@3", "SetP", "NumRelRet"]
#: Measures whose interval the brute force checks, but which ties="average" refuses.
NOT_AVERAGED = ["ERR@3", "Bpref", "IPrec@0.5"]


def _group_bounds(rk: Ranking, q: int) -> list[tuple[int, int]]:
    """(start, end) flat rows of each tied group of query q with at least 2 rows."""
    tied = tiegroups.tied_with_previous(rk)
    lo, hi = int(rk.ret_offsets[q]), int(rk.ret_offsets[q + 1])
    out, start = [], lo
    for i in range(lo + 1, hi + 1):
        if i == hi or not tied[i]:
            if i - start > 1:
                out.append((start, i))
            start = i
    return out


def _orders(rk: Ranking, q: int) -> list[Ranking]:
    """Every ranking obtained by reordering query q's tied groups (others as evaluated)."""
    groups = _group_bounds(rk, q)
    perms = [list(itertools.permutations(range(a, b))) for a, b in groups]
    out = []
    for choice in itertools.product(*perms):
        src = np.arange(len(rk.run_rows))
        for (a, b), p in zip(groups, choice, strict=True):
            src[a:b] = p
        out.append(replace(rk, ret_grades=rk.ret_grades[src], run_rows=rk.run_rows[src]))
    return out


def _brute(result: ragreport.EvaluationResult, measure: str) -> tuple[np.ndarray, ...]:
    """Per query: (min, max, mean) over all tie orders of the query's value."""
    rk = result.ranking
    m = parse_measure(measure)
    lo, hi, mean = (np.zeros(rk.n_queries) for _ in range(3))
    for q in range(rk.n_queries):
        vals = [kernel.measure_values(o, m, 1.0)[q] for o in _orders(rk, q)]
        lo[q], hi[q], mean[q] = min(vals), max(vals), sum(vals) / len(vals)
    return lo, hi, mean


GRADES = st.sampled_from([None, None, 0, 1, 1, 2, -1])


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, 7))
        scores = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=n, max_size=n))
        run[f"q{q}"] = {f"d{i}": s for i, s in enumerate(scores)}
        judged = {f"d{i}": g for i in range(n) if (g := draw(GRADES)) is not None}
        judged |= {f"x{i}": 1 for i in range(draw(st.integers(0, 2)))}  # never retrieved
        judged.setdefault("x9", 0)
        qrels[f"q{q}"] = judged
    # keep brute force small: at most 6! orders per query
    return qrels, run


def _small(run: dict[str, dict[str, float]]) -> bool:
    for docs in run.values():
        counts: dict[float, int] = {}
        for s in docs.values():
            counts[s] = counts.get(s, 0) + 1
        if math.prod(math.factorial(c) for c in counts.values()) > 720:
            return False
    return True


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_interval_and_average_equal_brute_force(
        case: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]) -> None:
    qrels, run = case
    if not _small(run):
        return
    trec = ragreport.evaluate(qrels, run, MEASURES + NOT_AVERAGED)
    avg = ragreport.evaluate(qrels, run, MEASURES, ties="average")
    for name in NOT_AVERAGED:
        lo, hi, _ = _brute(trec, name)
        e = ties.exposure(trec, name)
        np.testing.assert_allclose(e.low_values, lo, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(e.high_values, hi, atol=1e-12, err_msg=name)
    for name in MEASURES:
        lo, hi, mean = _brute(trec, name)
        e = ties.exposure(trec, name)
        np.testing.assert_allclose(e.low_values, lo, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(e.high_values, hi, atol=1e-12, err_msg=name)
        assert e.low == pytest.approx(lo.mean()) and e.high == pytest.approx(hi.mean())
        assert (e.dependent == (lo != hi)).all(), name
        np.testing.assert_allclose(avg.values(name), mean, atol=1e-9, err_msg=name)
        # trec_eval's order and the average lie inside the interval
        v = trec.values(name)
        assert (lo - 1e-12 <= v).all() and (v <= hi + 1e-12).all()
        m = parse_measure(name)
        if m.cutoff is not None:  # the curve's column is the same expectation
            np.testing.assert_allclose(avg.curve(m)[:, m.cutoff - 1], mean, atol=1e-9,
                                       err_msg=name)


@settings(max_examples=30, deadline=None)
@given(cases())
def test_average_curves_are_columnwise_expectations(
        case: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]) -> None:
    qrels, run = case
    if not _small(run):
        return
    fams = ["P@1", "R_cap@1", "Judged@1", "RBP@1"]
    avg = ragreport.evaluate(qrels, run, fams, ties="average", k_max=8)
    trec = ragreport.evaluate(qrels, run, fams, k_max=8)
    for fam in ("P", "R", "F1", "HitRate", "RR", "nDCG", "AP", "R_cap", "Judged", "RBP"):
        for k in range(1, avg.k_max + 1):
            _, _, mean = _brute(trec, f"{fam}@{k}")
            np.testing.assert_allclose(avg.curve(fam)[:, k - 1], mean, atol=1e-9,
                                       err_msg=f"{fam}@{k}")
            # and past the curves' width, from the sparse forms
        np.testing.assert_allclose(avg.values(f"{fam}@50"), _brute(trec, f"{fam}@50")[2],
                                   atol=1e-9)


def _brute_depth(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]],
                 measure: str, depth: int) -> tuple[np.ndarray, ...]:
    """Per query (min, max, mean) over every order of the UNCUT ranking's tied groups, each
    order cut at ``depth`` afterwards (trec_eval -M on that order)."""
    rk = ragreport.evaluate(qrels, run, ["P@1"]).ranking
    m = parse_measure(measure)
    lo, hi, mean = (np.zeros(rk.n_queries) for _ in range(3))
    for q in range(rk.n_queries):
        vals = [kernel.measure_values(tiegroups.cut_at(o, depth), m, 1.0)[q]
                for o in _orders(rk, q)]
        lo[q], hi[q], mean[q] = min(vals), max(vals), sum(vals) / len(vals)
    return lo, hi, mean


DEPTH_MEASURES = [*MEASURES, "SetR", "SetF", "NumRet", "Hits", "Judged", "P@5", "nDCG@5",
                  "RR@5", "AP@5", "HitRate@5", "R_cap@5", "Judged@5"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.integers(1, 4))
def test_max_depth_cuts_after_the_tie_order(
        case: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]],
        depth: int) -> None:
    qrels, run = case
    if not _small(run):
        return
    trec = ragreport.evaluate(qrels, run, DEPTH_MEASURES + NOT_AVERAGED, max_depth=depth)
    avg = ragreport.evaluate(qrels, run, DEPTH_MEASURES, ties="average", max_depth=depth,
                             k_max=8)
    for name in DEPTH_MEASURES + NOT_AVERAGED:
        lo, hi, mean = _brute_depth(qrels, run, name, depth)
        e = ties.exposure(trec, name)
        np.testing.assert_allclose(e.low_values, lo, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(e.high_values, hi, atol=1e-12, err_msg=name)
        assert (e.dependent == (lo != hi)).all() and e.exact, name
        if name not in NOT_AVERAGED:
            np.testing.assert_allclose(avg.values(name), mean, atol=1e-9, err_msg=name)
    for fam in ("P", "R", "F1", "HitRate", "RR", "nDCG", "AP", "R_cap", "Judged", "RBP"):
        for k in (1, depth, depth + 1, 8):
            np.testing.assert_allclose(avg.curve(fam)[:, k - 1],
                                       _brute_depth(qrels, run, f"{fam}@{k}", depth)[2],
                                       atol=1e-9, err_msg=f"{fam}@{k}")


def test_max_depth_examples_from_the_review() -> None:
    # the -M cut was made in document-id order before the tie analysis
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    for rel in ("a", "z"):
        q = {"q": {rel: 1}}
        r = {"q": {rel if d == "a" else d: s for d, s in run["q"].items()}}
        avg = ragreport.evaluate(q, r, ["P@1", "NumRelRet"], ties="average", max_depth=1)
        assert avg.mean("P@1") == pytest.approx(1 / 3)
        assert avg.mean("NumRelRet") == pytest.approx(1 / 3)
    trec = ragreport.evaluate(qrels, run, ["P@1", "SetP"], max_depth=1)
    e = ties.exposure(trec, "P@1")
    assert (e.low, e.high, e.straddling, e.n_dependent) == (0.0, 1.0, 1, 1)
    s = ties.exposure(trec, "SetP")  # which document is kept depends on the order
    assert (s.low, s.high, s.straddling) == (0.0, 1.0, 1) and s.exact
    assert "depth M=1" in e.cut


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_document_level_ties_equal_brute_force(
        case: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]) -> None:
    # chunks d0..d6 of documents D0..D2; a document's score is its best chunk's
    qrels, run = case
    if not _small(run):
        return
    dm = {f"d{i}": f"D{i % 3}" for i in range(7)} | {f"x{i}": f"X{i}" for i in range(10)}
    r = ragreport.evaluate(qrels, run, MEASURES + NOT_AVERAGED, doc_map=dm)
    doc = r.document
    assert doc is not None
    for name in MEASURES + NOT_AVERAGED:
        lo, hi, _ = _brute(doc, name)
        e = ties.exposure(doc, name)
        np.testing.assert_allclose(e.low_values, lo, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(e.high_values, hi, atol=1e-12, err_msg=name)
        assert (e.dependent == (lo != hi)).all() and e.exact, name


def test_document_level_ties_from_the_review(tmp_path: Path) -> None:
    from ragreport.cli.app import main

    # two chunks of two documents tie: the documents tie (equal best scores)
    (tmp_path / "q").write_text("q 0 c1 1\n")
    (tmp_path / "r").write_text("q Q0 c1 1 1.0 r\nq Q0 c2 2 1.0 r\n")
    (tmp_path / "m").write_text("c1\tD1\nc2\tD2\n")
    (tmp_path / "t").write_text('[targets]\n"P@1" = 0.5\n')
    argv = [str(tmp_path / x) for x in "qr"] + [
        "--targets", str(tmp_path / "t"), "--doc-map", str(tmp_path / "m"),
        "--target-level", "document", "--json", str(tmp_path / "o.json")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["check", *argv])
    assert code == 1
    assert "this failure depends on tie order" in out.getvalue()
    (t,) = json.loads((tmp_path / "o.json").read_text())["ties"]
    assert (t["straddling"], t["dependent"], t["low"], t["high"], t["exact"]) == (
        1, 1, 0.0, 1.0, True)
    # order='given' at chunk level: nothing ties at either level
    given_order = ragreport.evaluate({"q": {"c1": 1}}, {"q": {"c1": 1.0, "c2": 1.0}}, ["P@1"],
                                     doc_map={"c1": "D1", "c2": "D2"}, order="given")
    assert given_order.document is not None
    assert ties.exposure(given_order.document, "P@1").n_dependent == 0
    # a chunk tie across the depth cut: which documents are listed depends on it
    deep = ragreport.evaluate({"q": {"c1": 1}}, {"q": {"c0": 2.0, "c1": 1.0, "c2": 1.0}},
                              ["P@2"], doc_map={"c0": "D0", "c1": "D1", "c2": "D2"},
                              max_depth=2)
    assert deep.document is not None and not ties.exposure(deep.document, "P@2").exact


def _doc_brute(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]],
               dm: dict[str, str], depth: int, measure: str) -> tuple[float, float]:
    """The range of the document-level mean over every order of every chunk tie: each
    order of the chunks (score descending), cut at ``depth`` chunks, collapsed to
    documents (first chunk of each), evaluated as a given list."""
    per_query: list[list[float]] = []
    for q, chunks in run.items():
        groups = [sorted(c for c in chunks if chunks[c] == s)
                  for s in sorted(set(chunks.values()), reverse=True)]
        vals = []
        for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
            kept = list(dict.fromkeys(dm[c] for c in [c for g in combo for c in g][:depth]))
            vals.append(ragreport.evaluate({q: qrels[q]}, {q: kept}, [measure],
                                           order="given").mean(measure))
        per_query.append(vals)
    return (float(np.mean([min(v) for v in per_query])),
            float(np.mean([max(v) for v in per_query])))


def test_document_level_under_max_depth_is_never_a_false_point(tmp_path: Path) -> None:
    from ragreport.cli.app import main
    from ragreport.report import build_report
    from ragreport.report.terminal import render_terminal
    from ragreport.targets import parse_targets

    # q: c0 (D0) above three tied chunks c1 (D1, relevant), c2 (D2), c3 (D0 again); M = 2:
    # the one tied chunk kept decides the second document (D1, D2 or none)
    qrels = {"q": {"D1": 1}, "p": {"D1": 1}}
    run = {"q": {"c0": 2.0, "c1": 1.0, "c2": 1.0, "c3": 1.0},
           "p": {"c1": 3.0, "c2": 2.0, "c0": 1.0}}  # no tie: the same in every order
    dm = {"c0": "D0", "c1": "D1", "c2": "D2", "c3": "D0"}
    targets = parse_targets({"P@2": ">= 0.4", "RR": 0.6}, "t.toml")
    for measure, brute in (("P@2", (0.25, 0.5)), ("RR", (0.5, 0.75))):
        assert _doc_brute(qrels, run, dm, 2, measure) == pytest.approx(brute)
    r = ragreport.evaluate(qrels, run, ["P@2", "RR"], doc_map=dm, max_depth=2)
    assert r.document is not None
    assert r.document.mean("P@2") == 0.25  # trec_eval keeps c3: documents D0 only
    for measure in ("P@2", "RR"):
        e = ties.exposure(r.document, measure)
        assert not e.exact and e.n_unresolved == 1 and e.n_dependent == 0
    rep = build_report([r], targets, stats=False, target_level="document",
                       generated_at="2026-01-01T00:00:00Z")
    assert [t.measure for t in rep.ties if t.exposed] == ["P@2", "RR"]
    for t in rep.ties:  # never the false point [0.25, 0.25]
        assert t.interval_text == "not analysed" and t.unresolved == 1
        assert t.note == "this failure may depend on tie order"
    doc = json.loads(rep.to_json())
    assert [(t["low"], t["high"], t["unresolved"], t["exact"], t["depends_on_tie_order"])
            for t in doc["ties"]] == [(None, None, 1, False, True)] * 2
    html, md, text = rep.to_html(), rep.to_markdown(), render_terminal(rep)
    for out in (html, md, text):
        assert "not analysed" in out and "may depend on tie order" in out
        assert "[0.2500, 0.2500]" not in out.replace("\\", "")
    # no chunk tie across the depth cut: exact, and equal to the brute force
    for depth in (1, 4):
        deep = ragreport.evaluate(qrels, run, ["P@2", "RR"], doc_map=dm, max_depth=depth)
        assert deep.document is not None
        for measure in ("P@2", "RR"):
            e = ties.exposure(deep.document, measure)
            assert e.exact and e.n_unresolved == 0
            assert (e.low, e.high) == pytest.approx(_doc_brute(qrels, run, dm, depth,
                                                               measure))
    # the CLI says it on the terminal too
    (tmp_path / "q").write_text("q 0 D1 1\np 0 D1 1\n")
    (tmp_path / "r").write_text("".join(f"{q} Q0 {c} 0 {s} x\n" for q, cs in run.items()
                                        for c, s in cs.items()))
    (tmp_path / "m").write_text("".join(f"{c}\t{d}\n" for c, d in dm.items()))
    (tmp_path / "t").write_text('[targets]\n"P@2" = ">= 0.4"\n')
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["check", str(tmp_path / "q"), str(tmp_path / "r"), "--doc-map",
                     str(tmp_path / "m"), "--target-level", "document", "--targets",
                     str(tmp_path / "t"), "--no-stats", "-M", "2"])
    assert code == 1
    assert "WARNING P@2 >= 0.4 (run 'x'): this failure may depend on tie order" in \
        out.getvalue()


def test_constant_scorer_mrr_interval() -> None:
    # an MTEB task where a constant scorer got MRR@10 = 1.0: every document scores 0, the
    # relevant one's id happens to sort first under trec_eval's rule (id descending)
    qrels = {f"q{i}": {"z": 1} for i in range(4)}
    run = {f"q{i}": {d: 0.0 for d in "abcdefghyz"} for i in range(4)}
    r = ragreport.evaluate(qrels, run, ["RR@10"])
    assert r.mean("RR@10") == 1.0
    e = ties.exposure(r, "RR@10")
    assert e.high == 1.0 and e.low == pytest.approx(0.1)
    assert e.n_dependent == 4 and e.straddling == 0  # 10 documents: nothing past the cut
    assert ties.exposure(r, "P@5").straddling == 4
    avg = ragreport.evaluate(qrels, run, ["RR@10"], ties="average")
    assert avg.mean("RR@10") == pytest.approx(sum(1 / k for k in range(1, 11)) / 10)


def test_straddles() -> None:
    r = ragreport.evaluate({"q": {"a": 1}, "p": {"a": 1}},
                           {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0},
                            "p": {"a": 1.0, "b": 0.5}})
    rk = r.ranking
    assert [tiegroups.straddles(rk, k).tolist() for k in (1, 2, 3, 4, 5, 10**15)] == [
        [False, False], [False, True], [False, True], [False, False], [False, False],
        [False, False]]
    assert tiegroups.straddles(rk, np.array([1, 2])).tolist() == [False, True]
    assert ties.exposure(r, "P@2").straddling == 1
    every_k = tiegroups.straddles_at_k(rk, 6)
    assert [every_k[:, k - 1].tolist() for k in range(1, 7)] == [
        tiegroups.straddles(rk, k).tolist() for k in range(1, 7)]
    assert ties.exposure(r, "P@4").straddling == 0


def test_no_ties_under_given_order_or_without_scores() -> None:
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    given_order = ragreport.evaluate(qrels, run, ["RR"], order="given")
    e = ties.exposure(given_order, "RR")
    assert e.low == e.high == e.value and not e.dependent.any()
    listed = ragreport.evaluate(qrels, {"q": ["b", "a"]}, ["RR"])
    assert not tiegroups.has_ties(listed.ranking)
    assert ties.exposure(listed, "RR").n_dependent == 0


def test_judged_uses_its_own_orders() -> None:
    r = ragreport.evaluate({"q": {"a": 0, "z": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}},
                           ["P@1"])
    lo, hi = tiegroups.tie_orders(r.ranking, "judged")
    assert np.isnan(lo.ret_grades[0]) and not np.isnan(hi.ret_grades[0])
    # grade order: a (grade 0) ties with unjudged b, c (grade 0 for ordering): nothing moves
    g_lo, g_hi = tiegroups.tie_orders(r.ranking)
    assert g_lo is r.ranking and g_hi is r.ranking


def test_orders_keep_trec_order_among_equal_keys() -> None:
    r = ragreport.evaluate({"q": {"b": 1, "d": 1}},
                           {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}}, ["P@1"])
    docs = r.ranking.run.doc_ids
    lo, hi = tiegroups.tie_orders(r.ranking)
    assert docs.take(lo.run_rows).to_pylist() == ["c", "a", "d", "b"]
    assert docs.take(hi.run_rows).to_pylist() == ["d", "b", "c", "a"]


def test_the_tie_decision_uses_the_rounded_comparison() -> None:
    from ragreport.targets import decision_flips  # what tie_checks decides with

    assert decision_flips(0.5, 0.9, ">=", 0.85)
    assert not decision_flips(0.849996, 0.9, ">=", 0.85)  # both shown >= 0.8500
    assert not decision_flips(0.5, 0.85004, ">", 0.85)    # both fail
    assert decision_flips(0.5, 0.9, "<", 0.85)


def test_average_refuses_what_it_cannot_compute_exactly() -> None:
    with pytest.raises(RagReportError, match="ties must be one of"):
        ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ties="mean")
    with pytest.raises(RagReportError, match="order='given'"):
        ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, order="given", ties="average")
    for m in NOT_AVERAGED:
        with pytest.raises(MeasureError, match="no exact expected value"):
            ragreport.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [m], ties="average")


def test_average_without_ties_is_trec_eval() -> None:
    qrels = {"q": {"a": 1, "c": 2}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    a = ragreport.evaluate(qrels, run, MEASURES, ties="average")
    t = ragreport.evaluate(qrels, run, MEASURES)
    assert a.means() == t.means()
    assert a.conventions.ties == "average"
    assert "McSherry" in a.conventions.describe()["ties"]
    order = a.conventions.describe()["order"]  # no "ties broken by id" beside "averaged"
    assert "averaged over every order of tied scores" in order
    assert not order.startswith("score descending, ties broken")
    assert t.conventions.describe()["order"].startswith("score descending, ties broken by")


def test_average_with_max_depth_and_order_free_measures() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}}
    r = ragreport.evaluate(qrels, run, ["NumRet", "NumRelRet", "Hits", "P@2"],
                           ties="average", max_depth=3)
    assert r.values("NumRet").tolist() == [3.0]
    # every order of the four tied documents, then the top 3 kept: 2 relevant in 4
    assert r.values("P@2").tolist() == pytest.approx([1 / 2])
    assert r.values("NumRelRet").tolist() == pytest.approx([3 / 2])
    assert r.values("Hits").tolist() == pytest.approx([3 / 2])


# ---- reports: warning lines exactly when the interval straddles a threshold ----------------

def _report(threshold: str, run_name: str = "bm25", qid: str = "q1") -> Report:
    from ragreport.report import build_report
    from ragreport.targets import parse_targets

    # q1: a, b, c tied, a relevant; q2: b relevant under d: RR in [0.4167, 0.75]
    qrels = {qid: {"a": 1}, "q2": {"b": 1}}
    run = {qid: {"a": 1.0, "b": 1.0, "c": 1.0}, "q2": {"d": 2.0, "b": 1.0}}
    r = ragreport.evaluate(qrels, run, ["RR"], name=run_name)
    return build_report([r], parse_targets({"RR": threshold}, "t.toml"), stats=False,
                        generated_at="2026-01-01T00:00:00Z", per_query=True)


@pytest.mark.parametrize(("threshold", "note"), [
    (">= 0.5", "this failure depends on tie order"),   # trec_eval: (1/3 + 1/2) / 2 = 0.4167
    (">= 0.4", ""),                                     # passes in every order
    (">= 0.8", ""),                                     # fails in every order
    (">= 0.75", "this failure depends on tie order"),   # the optimistic end reaches it
    ("> 0.75", ""),
    ("<= 0.5", "this pass depends on tie order"),
])
def test_warning_lines_exactly_when_the_interval_straddles(threshold: str, note: str) -> None:
    from ragreport.report.terminal import render_terminal

    rep = _report(threshold)
    (t,) = rep.ties
    assert (t.low_text, t.high_text) == ("0.4167", "0.7500")
    assert t.note == note and t.dependent == 1 and t.straddling == 0
    html, md, text = rep.to_html(), rep.to_markdown(), render_terminal(rep)
    doc = json.loads(rep.to_json())
    for out in (html, md, text):
        assert ("depends on tie order" in out) == bool(note)
        if note:
            assert note in out
    assert doc["ties"][0]["depends_on_tie_order"] == bool(note)
    assert doc["ties"][0]["dependent_queries"] == {"q1": [1 / 3, 1.0]}
    # the tie exposure is shown (and the badge) whatever the verdict; with nothing to say
    # (no decision flips) it is one line, its table folded under it
    assert "<h3>Tie exposure</h3>" in html and 'class="tie-badge"' in html
    section = html[html.index('<div class="ties" id="ties">'):].split("</summary>")[0]
    assert ("<details open>" in section) == bool(note)
    assert ("no target decision depends on the order" in section) == (not note)
    assert ("<details><summary>Tie exposure: no target decision" in md) == (not note)
    assert "Tie exposure" in text
    worst = {q["query_id"]: q for q in doc["worst_queries"]["bm25"]}
    assert worst["q1"]["tie_ranges"] == {"RR": [1 / 3, 1.0]}
    assert worst["q2"]["tie_ranges"] == {}


def test_no_tie_section_without_ties() -> None:
    from ragreport.report import build_report
    from ragreport.report.terminal import render_terminal
    from ragreport.targets import parse_targets

    r = ragreport.evaluate({"q": {"a": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["RR"])
    rep = build_report([r], parse_targets({"RR": 0.5}), stats=False)
    assert rep.ties[0].dependent == 0 and rep.ties[0].note == ""
    html = rep.to_html()
    assert "<h3>Tie exposure</h3>" not in html and 'class="tie-badge"' not in html
    assert "Tie exposure" not in render_terminal(rep) and "tie order" not in rep.to_markdown()


HOSTILE_ID = "<script>alert(1)</script>|**x**"


def test_badges_and_warnings_escape_user_strings() -> None:
    rep = _report(">= 0.5", run_name=HOSTILE_ID, qid=HOSTILE_ID)
    html, md = rep.to_html(), rep.to_markdown()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    badge = re.search(r'<span class="tie-badge"[^>]*>([^<]*)</span>', html)
    assert badge is not None and badge.group(1) == "tie order: RR 0.3333–1.0000"
    assert "<script>" not in md and "this failure depends on tie order" in md
    warn = next(line for line in md.splitlines() if "depends on tie order" in line)
    assert "|" not in warn.replace("\\|", "") and "**x**" not in warn
    from ragreport.report.terminal import render_terminal

    text = render_terminal(rep)
    assert "WARNING RR >= 0.5" in text


def test_markdown_tie_table_per_run_for_exposed_targets() -> None:
    from ragreport.report import build_report
    from ragreport.report.terminal import render_terminal
    from ragreport.targets import parse_targets

    qrels = {HOSTILE_ID: {"a": 1}, "q2": {"b": 1}}
    run = {HOSTILE_ID: {"a": 1.0, "b": 1.0, "c": 1.0}, "q2": {"d": 2.0, "b": 1.0}}
    results = [ragreport.evaluate(qrels, run, ["RR", "P@1", "P@3"], name=n)
               for n in (HOSTILE_ID, "plain")]
    rep = build_report(results, parse_targets({"P@1": 0.9, "RR": 0.4, "P@3": 0.5}, "t.toml"),
                       stats=False, generated_at="2026-01-01T00:00:00Z")
    md = rep.to_markdown()
    rows = [line for line in md.splitlines() if " at K=" in line and line.startswith("|")]
    assert len(rows) == 2 and all(r.startswith("| P@1 |") for r in rows)  # one per run
    for row, name in zip(rows, ("<script>", "plain"), strict=True):
        # five cells: every user string escaped, no raw pipe inside a cell
        assert row.replace("\\|", "").count("|") == 6, row
        assert "1 of 2 at K=1" in row and "\\[0.0000, 0.5000\\]" in row
        assert (name == "plain") == ("plain" in row)
    assert "<script>" not in md and "&lt;script&gt;" in md
    # RR has no cut but tie-dependent queries: shown, as in the terminal and HTML tables;
    # P@3 (every document of each query above the cut, nothing depends on the order) is not
    rr = [line for line in md.splitlines() if line.startswith("| RR |")
          and "1 of 2" in line]
    assert len(rr) == 2 and all("| 0 of 2 | 1 of 2 | \\[0.4167, 0.7500\\] |" in r for r in rr)
    assert not any(line.startswith("| P@3 |") and " of 2" in line for line in md.splitlines())
    # one rule for every output, decided in the model
    shown = [(t.measure, t.run) for t in rep.ties if t.exposed]
    assert sorted(m for m, _ in shown) == ["P@1", "P@1", "RR", "RR"]
    text = render_terminal(rep)
    table = text[text.index("Tie exposure"):].split("\n\n")[0]
    assert ("P@3" in table, "RR" in table, "P@1" in table) == (False, True, True)
    html = rep.to_html()
    ties_html = html[html.index('<table class="ties-table">'):]
    ties_html = ties_html[:ties_html.index("</table>")]
    assert ties_html.count("<tr class=") == 4 and "P@3" not in ties_html
    # a tie-dependent target without a cut still gets the table
    rep2 = build_report(results, parse_targets({"RR": 0.4}), stats=False)
    assert "Tie exposure" in rep2.to_markdown()
    rep3 = build_report(results, parse_targets({"P@3": 0.4}), stats=False)
    assert "Tie exposure" not in rep3.to_markdown()


def test_pr_curve_is_labelled_with_its_tie_order_under_average() -> None:
    from ragreport.report import build_report
    from ragreport.targets import parse_targets

    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    note = "Computed in trec_eval's tie order"
    for t, labelled in (("trec_eval", False), ("average", True)):
        r = ragreport.evaluate(qrels, run, ["RR"], ties=t)
        rep = build_report([r], parse_targets({"RR": 0.4}), stats=False)
        assert rep.pr_curve is not None and bool(rep.pr_curve.tie_note) == labelled
        html, md = rep.to_html(), rep.to_markdown()
        section = md[md.index("Precision-recall curve"):]
        section = section[:section.index("</details>")]
        assert ("Computed in trec\\_eval's tie order" in section) == labelled
        assert ("Computed in trec_eval&#39;s tie order" in html
                or "Computed in trec_eval&#x27;s tie order" in html
                or note in html) == labelled


def test_check_prints_the_warning(tmp_path: Path) -> None:
    from ragreport.cli.app import main

    (tmp_path / "q.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 1.0 x\nq1 Q0 b 2 1.0 x\nq1 Q0 c 3 1.0 x\n"
                                    "q2 Q0 d 1 2.0 x\nq2 Q0 b 2 1.0 x\n")
    (tmp_path / "t.toml").write_text('"RR" = 0.5\n')
    argv = [str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "--targets",
            str(tmp_path / "t.toml"), "--no-stats", "--json", str(tmp_path / "o.json")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["check", *argv])
    assert code == 1
    assert "WARNING RR >= 0.5 (run 'x'): this failure depends on tie order" in out.getvalue()
    # the average over tie orders: ((1 + 1/2 + 1/3) / 3 + 1/2) / 2 passes
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["check", *argv, "--ties", "average"])
    assert code == 0, out.getvalue()
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["means"]["x"]["RR"] == pytest.approx((11 / 18 + 1 / 2) / 2)
    assert "McSherry" in doc["conventions"]["ties"]
