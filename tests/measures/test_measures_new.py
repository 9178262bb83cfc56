"""Issue 13's measures: SetP, SetR, SetF, NumQ, Judged, Bpref, IPrec, ERR, RBP, R_cap.

Each is checked three ways:

* hand-derived values (the arithmetic is in the comments; ``ranks: 0 1 0`` is the grade or
  relevance at ranks 1, 2, 3; ``?`` is an unjudged document; R = relevant judged, N = judged
  non-relevant);
* against the peers on generated data (seeded numpy: tied scores, grades -1..4, unjudged
  documents, queries without a relevant document, empty rankings, depths 0..25): pytrec_eval
  (trec_eval's C code) for the set measures, the counts, bpref and iprec_at_recall;
  ir_measures' providers for Judged (``judged``), ERR (``gdeval``, perl) and binary RBP
  (``cwl_eval``); graded RBP against trectools' values (transcribed; checked on generated
  data when trectools is installed); BEIR's ``recall_cap`` transcribed for R_cap; trec_eval's
  own test suite;
* the engine's own invariants: every curve column equals the sparse value at that K bit for
  bit, past the end of the rankings too; canonical names round-trip; ``--format trec``
  prints trec_eval's names; the streaming evaluator gives the same numbers.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paths import user_docs

from ragreport import evaluate, metrics
from ragreport.core.engine import pr_curve
from ragreport.core.kernel import cutoff_values
from ragreport.core.stream import evaluate_stream
from ragreport.errors import MeasureError
from ragreport.measures import FAMILIES, Measure, parse_measure
from ragreport.textout import format_trec

Qrels = dict[str, dict[str, int]]
RunDict = dict[str, dict[str, float]]

LEVELS = metrics.PR_LEVELS
IPREC = [Measure("IPrec", recall=r) for r in LEVELS]
TREC_SET = {"SetP": "set_P", "SetR": "set_recall", "SetF": "set_F", "NumQ": "num_q",
            "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret",
            "Bpref": "bpref"}


def _vals(result: Any, measure: str | Measure) -> list[float]:
    return [float(v) for v in result.values(measure)]


# ---- hand-derived values ---------------------------------------------------------------------

def test_set_measures_by_hand() -> None:
    # retrieved (given order): x a b c ; grades: ? 1 0 2 ; judged also d:1 -> R = 3 at rel 1
    qrels = {"q": {"a": 1, "b": 0, "c": 2, "d": 1}, "e": {"a": 1}}
    run = {"q": ["x", "a", "b", "c"], "e": []}
    r = evaluate(qrels, run, ["SetP", "SetR", "SetF", "SetP(rel=2)", "SetR(rel=2)",
                              "SetF(rel=2)", "NumQ"], order="given")
    # SetP = 2/4, SetR = 2/3, SetF = 2·(1/2)·(2/3) / (1/2 + 2/3) = 4/7 ; the empty ranking: 0
    assert r.per_query("SetP") == {"q": 0.5, "e": 0.0}
    assert r.per_query("SetR")["q"] == pytest.approx(2 / 3, abs=1e-15)
    assert r.per_query("SetF") == {"q": pytest.approx(4 / 7, abs=1e-15), "e": 0.0}
    # rel=2: only c is relevant (R = 1): SetP = 1/4, SetR = 1, SetF = 2·0.25 / 1.25 = 0.4
    assert r.per_query("SetP(rel=2)")["q"] == 0.25
    assert r.per_query("SetR(rel=2)")["q"] == 1.0
    assert r.per_query("SetF(rel=2)")["q"] == pytest.approx(0.4, abs=1e-15)
    assert _vals(r, "NumQ") == [1.0, 1.0]


def test_set_precision_differs_from_precision_at_k_when_fewer_are_retrieved() -> None:
    # ranks: 1 1 (two retrieved) ; SetP = 2/2 = 1, P@5 = 2/5
    r = evaluate({"q": {"a": 1, "b": 1}}, {"q": ["a", "b"]}, ["SetP", "P@5"])
    assert r.means() == {"SetP": 1.0, "P@5": 0.4}


def test_judged_by_hand() -> None:
    # ranks: ? 1 0 -1 ? (x, y unjudged; a negative grade is a judgment too, as ir_measures reads
    # "did in qrels") ; Judged@K = judged in top K / min(K, 5 retrieved)
    qrels = {"q": {"a": 1, "b": 0, "c": -1}}
    r = evaluate(qrels, {"q": ["x", "a", "b", "c", "y"]}, ["Judged@1", "Judged", "Judged@10"],
                 order="given", k_max=10)
    assert r.curve("Judged")[0, :6].tolist() == [0.0, 0.5, 2 / 3, 0.75, 0.6, 0.6]
    assert _vals(r, "Judged@10") == [0.6]  # divisor 5, the number retrieved, not 10
    assert _vals(r, "Judged") == [0.6]
    assert _vals(r, "Judged@1") == [0.0]


def test_bpref_by_hand() -> None:
    g = np.array
    # ranks: 0 1 0 1 1, R = 3, N = 2 (min(N, R) = 2): rank 2 has 1 non-relevant above:
    # 1 - 1/2; ranks 4 and 5 have 2: 1 - 2/2 = 0 ; bpref = 0.5 / 3
    got = metrics.bpref(g([0.0, 1, 0, 1, 1]), g([0, 5]), g([3]), g([2]), 1.0)
    assert got.tolist() == [0.5 / 3]
    # ranks: 0 0 0 1, R = 1, N = 3: min(3, 1) / min(3, 1) = 1 -> 0
    assert metrics.bpref(g([0.0, 0, 0, 1]), g([0, 4]), g([1]), g([3]), 1.0).tolist() == [0.0]
    # ranks: ? -1 1, R = 2, N = 0: the unjudged and the negative grade are skipped -> 1 / 2
    got = metrics.bpref(g([np.nan, -1.0, 1.0]), g([0, 3]), g([2]), g([0]), 1.0)
    assert got.tolist() == [0.5]
    # through evaluate: a judged non-relevant document never retrieved still counts in N.
    # ranks: 0 2 1 ; judged non-relevant: b (retrieved), z (not) -> N = 2, R = 2
    # rank 2: 1 - 1/2 ; rank 3: 1 - 1/2 ; bpref = 1/2 ; rel=2: R = 1, N = 3 (grade 1 is
    # non-relevant now): rank 2 has 1 above: 1 - min(1,1)/min(3,1) = 0
    qrels = {"q": {"a": 2, "b": 0, "c": 1, "z": 0}, "e": {"a": 0}}
    r = evaluate(qrels, {"q": ["b", "a", "c"], "e": ["a"]}, ["Bpref", "Bpref(rel=2)"],
                 order="given")
    assert r.per_query("Bpref") == {"q": 0.5, "e": 0.0}
    assert _vals(r, "Bpref(rel=2)") == [0.0, 0.0]


def test_iprec_by_hand() -> None:
    # ranks: 1 0 1 0 0, R = 4 ; precision at the relevant ranks: 1/1, 2/3 ; the level r is
    # c = lround(r·4) relevant documents: c <= 1 -> max(1, 2/3) = 1 ; c = 2 -> 2/3 ; c > 2 -> 0
    r = evaluate({"q": {"a": 1, "b": 1, "c": 1, "d": 1}}, {"q": ["a", "x", "b", "y", "z"]},
                 [*IPREC, Measure("IPrec", recall=0.25)], order="given")
    want = [1.0, 1.0, 1.0, 1.0, 2 / 3, 2 / 3, 2 / 3, 0.0, 0.0, 0.0, 0.0]
    assert [float(r.values(m)[0]) for m in IPREC] == want
    assert pr_curve(r).tolist() == [want]
    assert _vals(r, "IPrec@0.25") == [1.0]  # 0.25·4 = 1
    # a higher precision further down wins (interpolation): ranks 0 1 1, R = 2: P = 1/2, 2/3
    r = evaluate({"q": {"a": 1, "b": 1}}, {"q": ["x", "a", "b"]}, ["IPrec@0.0", "IPrec@1"],
                 order="given")
    assert _vals(r, "IPrec@0") == [2 / 3] and _vals(r, "IPrec@1.0") == [2 / 3]


def test_lround_is_c_lround() -> None:
    x = np.array([0.49999999999999994, 0.5, 1.5, 2.5, 2.4999999999999996, 0.0])
    from ragreport.metrics import setwise

    assert setwise._lround(x).tolist() == [0.0, 1.0, 2.0, 3.0, 2.0, 0.0]


def test_err_by_hand() -> None:
    # grades by rank: 4 0 2 ; R = (2^g - 1) / 16: 15/16, 0, 3/16
    # ERR@1 = 15/16 ; ERR@3 = 15/16 + (3/16)·(1/16) / 3
    qrels = {"q": {"a": 4, "b": 0, "c": 2, "d": -1}}
    r = evaluate(qrels, {"q": ["a", "b", "c", "d", "x"]}, ["ERR@1", "ERR@3", "ERR"],
                 order="given")
    assert _vals(r, "ERR@1") == [0.9375]
    assert _vals(r, "ERR@3") == [0.9375 + (3 / 16) * (1 / 16) / 3]
    assert _vals(r, "ERR") == _vals(r, "ERR@3")  # the -1 and the unjudged add nothing
    # ranks: 1 1 : 1/16 + (1/16)(15/16)/2
    r = evaluate({"q": {"a": 1, "b": 1}}, {"q": ["a", "b"]}, ["ERR"], order="given")
    assert _vals(r, "ERR") == [1 / 16 + (1 / 16) * (15 / 16) / 2]


def test_err_refuses_grades_above_four_as_gdeval_does() -> None:
    with pytest.raises(MeasureError, match=r"gdeval.*grades up to 4; query 'q' has a "
                                           r"judgment of grade 5 \(1 judgments above 4\)"):
        evaluate({"q": {"a": 5, "b": 1}}, {"q": ["a"]}, ["ERR@10"])
    with pytest.raises(MeasureError, match="grade 7"):
        evaluate({"q": {"a": 7}}, {"q": ["a"]}, ["ERR"])
    # other measures are unaffected
    assert evaluate({"q": {"a": 5}}, {"q": ["a"]}, ["nDCG@10"]).means() == {"nDCG@10": 1.0}


def test_rbp_by_hand() -> None:
    # grades by rank: 1 0 2. Graded (no rel, ir_measures' RBP): p = 0.5: 0.5·(1 + 0.25·2) =
    # 0.75 ; p = 0.8: 0.2·(1 + 0.64·2) = 0.456. Binary at rel 1: 0.2·(1 + 0.64) = 0.328,
    # p = 0.5: 0.5·(1 + 0.25) = 0.625 ; at rel 2: 0.2·0.64
    qrels = {"q": {"a": 1, "c": 2}}
    run = {"q": ["a", "b", "c"]}
    r = evaluate(qrels, run, ["RBP(p=0.5)", "RBP", "RBP@1", "RBP(rel=2)", "RBP(p=0.5)@2",
                              "RBP(rel=1)", "RBP(p=0.5,rel=1)"], order="given", rel_level=2)
    assert _vals(r, "RBP(p=0.5)") == [0.75]
    assert _vals(r, "RBP(p=0.8)") == [pytest.approx(0.456, abs=1e-15)]
    assert _vals(r, "RBP(p=0.8)@1") == [pytest.approx(0.2, abs=1e-15)]
    assert _vals(r, "RBP(p=0.8,rel=2)") == [pytest.approx(0.2 * 0.64, abs=1e-15)]
    assert _vals(r, "RBP(p=0.5)@2") == [0.5]
    assert _vals(r, "RBP(p=0.8,rel=1)") == [pytest.approx(0.328, abs=1e-15)]
    assert _vals(r, "RBP(p=0.5,rel=1)") == [0.625]
    # graded RBP exceeds 1 with grades above 1 (at most the largest grade): not a rate
    big = evaluate({"q": {"a": 3, "b": 3}}, {"q": ["a", "b"]}, ["RBP(p=0.5)", "RBP(p=0.5,rel=1)"],
                   order="given")
    assert _vals(big, "RBP(p=0.5)") == [0.5 * (3 + 0.5 * 3)]
    assert _vals(big, "RBP(p=0.5,rel=1)") == [0.75]
    assert not FAMILIES["RBP"].bounded


# trectools 0.0.50's TrecEval.get_rbp(p, depth, binary_topical_relevance=False), as ir_measures
# 0.4.3 runs it for RBP without rel (providers/trectools_provider.py), on these inputs; values
# transcribed (trectools is not a test dependency: it pulls matplotlib and scikit-learn).
# Source: https://github.com/joaopalotti/trectools/blob/master/trectools/trec_eval.py (get_rbp):
# each rank's weight (1 - p) p^(rank - 1) times the grade of a document with grade > 0, summed;
# the weights of equal scores in adjacent rows averaged (average_ties=True).
RBP_QRELS: Qrels = {"q1": {"a": 2, "b": 0, "c": 3, "d": 1, "e": -1}, "q2": {"x": 1, "y": 4},
                    "q3": {"z": 0}, "q4": {"a": 2, "b": 0, "c": 1}}
RBP_RUN: RunDict = {"q1": {"a": 6.0, "b": 5.0, "c": 4.0, "e": 3.0, "f": 2.0, "d": 1.0},
                    "q2": {"y": 13.0, "w": 12.0, "x": 11.0}, "q3": {"z": 21.0},
                    "q4": {"a": 31.0, "b": 31.0, "c": 30.0}}  # q4: a and b tied
RBP_TRECTOOLS = {  # per query q1, q2, q3, q4
    "RBP(p=0.8)": [0.8495359999999998, 0.9279999999999998, 0.0, 0.4879999999999999],
    "RBP(p=0.8)@3": [0.7839999999999998, 0.9279999999999998, 0.0, 0.4879999999999999],
    "RBP(p=0.5)": [1.390625, 2.125, 0.0, 0.875],
    "RBP(p=0.5)@2": [1.0, 2.0, 0.0, 0.75],
}


def test_graded_rbp_equals_trectools() -> None:
    # by hand, q1 (grades by rank 2 0 3 -1 ? 1), p = 0.8: 0.2·(2 + 3·0.64 + 1·0.8^5) = 0.849536;
    # q4: a (2) and b (0) tied at ranks 1-2: trectools gives both the mean weight (0.2 + 0.16)
    # / 2, as ties="average" gives the mean grade (2 + 0) / 2 to both ranks: 0.36 + 0.2·0.64
    res = evaluate(RBP_QRELS, RBP_RUN, list(RBP_TRECTOOLS), ties="average")
    for name, want in RBP_TRECTOOLS.items():
        assert _vals(res, name) == pytest.approx(want, abs=1e-15, rel=0), name
    # trec_eval's tie order (document id descending: b, a) reads q4 as 0 2 1: 0.2·(1.6 + 0.64)
    assert _vals(evaluate(RBP_QRELS, RBP_RUN, ["RBP"]), "RBP(p=0.8)")[3] == pytest.approx(
        0.448, abs=1e-15)


def test_capped_recall_by_hand() -> None:
    # ranks: 1 0 1, R = 3: R_cap@1 = 1/1, @2 = 1/2, @3 = 2/3, @10 = 2/3 (min(10, 3) = 3)
    qrels = {"q": {"a": 1, "c": 1, "d": 1}, "z": {"a": 0}}
    r = evaluate(qrels, {"q": ["a", "b", "c"], "z": ["a"]}, ["R_cap@1", "R_cap@10", "R@1"],
                 order="given")
    assert r.curve("R_cap")[0, :4].tolist() == [1.0, 0.5, 2 / 3, 2 / 3]
    assert r.per_query("R_cap@10") == {"q": 2 / 3, "z": 0.0}  # no relevant document: 0
    assert r.per_query("R_cap@1")["q"] == 1.0 and r.per_query("R@1")["q"] == 1 / 3


# ---- generated data ---------------------------------------------------------------------------

def generate(seed: int, negatives: bool = True, max_grade: int = 4) -> tuple[Qrels, RunDict]:
    """Queries "1".."n" (numeric, for gdeval); docs d0..d24 (d2 and d10 sort differently as
    strings and numbers); scores from 5 values (heavy ties) or continuous; grades 0..4 and
    -1; queries without relevant documents, run-only and qrels-only queries, empty rankings."""
    rng = np.random.default_rng(seed)
    grades = [0, 0, 1, 1, 2, 3, max_grade] + ([-1] if negatives else [])
    docs = [f"d{i}" for i in range(25)]
    qrels: Qrels = {}
    run: RunDict = {}
    n = int(rng.integers(4, 14))
    for q in range(1, n + 1):
        qid = str(q)
        role = rng.choice(["both"] * 6 + ["run_only", "qrels_only", "empty"])
        if role != "run_only":
            judged = rng.choice(docs, size=int(rng.integers(1, 14)), replace=False)
            # about one query in seven has no relevant document
            qgrades = [g for g in grades if g <= 0] if rng.random() < 0.15 else grades
            qrels[qid] = {str(d): int(rng.choice(qgrades)) for d in judged}
        if role == "empty":
            run[qid] = {}
        elif role != "qrels_only":
            depth = int(rng.integers(1, 26))
            ret = rng.choice(docs, size=depth, replace=False)
            if rng.random() < 0.7:
                sc = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0], size=depth)
            else:
                sc = rng.random(depth)
            run[qid] = {str(d): float(s) for d, s in zip(ret, sc, strict=True)}
    if not any(q in run and run[q] and q in qrels for q in qrels):
        qrels["1"] = {"d1": 1, "d2": 0}
        run["1"] = {"d1": 0.5, "d10": 0.5, "d2": 1.0}
    return qrels, run


def trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, then document id descending."""
    return [d for _, d in sorted(((-s, d) for d, s in docs.items()),
                                 key=lambda t: (t[0], _Desc(t[1])))]


class _Desc:
    def __init__(self, s: str) -> None:
        self.s = s

    def __lt__(self, other: _Desc) -> bool:
        return self.s.encode() > other.s.encode()


def distinct(run: RunDict) -> RunDict:
    """The same rankings with distinct scores (for peers that break ties otherwise)."""
    return {q: {d: float(len(docs) - i) for i, d in enumerate(trec_order(docs))}
            for q, docs in run.items()}


SEEDS = range(12)


# ---- pytrec_eval ------------------------------------------------------------------------------

PYTREC_SCRIPT = """
import json, sys, pytrec_eval
cases = json.load(sys.stdin)
out = []
for qrels, run, level in cases:
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"set_P", "set_recall", "set_F", "num_q",
        "num_ret", "num_rel", "num_rel_ret", "bpref", "iprec_at_recall"}, relevance_level=level)
    out.append(ev.evaluate({q: d for q, d in run.items() if d}))
json.dump(out, sys.stdout)
"""


def pytrec_values(cases: list[tuple[Qrels, RunDict, int]]) -> list[dict[str, dict[str, float]]]:
    """pytrec_eval's values, in a child process: pytrec_eval 0.5 can hang on qrels with
    negative grades depending on earlier calls in the same process (test_pytrec_eval.py)."""
    try:
        done = subprocess.run([sys.executable, "-c", PYTREC_SCRIPT], input=json.dumps(cases),
                              capture_output=True, text=True, timeout=120, check=True)
    except subprocess.TimeoutExpired:
        pytest.skip("pytrec_eval hung (a known pytrec_eval 0.5 problem with negative grades)")
    out: list[dict[str, dict[str, float]]] = json.loads(done.stdout)
    return out


def _ours_by_trec_name(qrels: Qrels, run: RunDict, level: int,
                       param: bool) -> tuple[Any, dict[str, Measure]]:
    """Evaluate with rel_level=level, or at rel_level=1 with the measures' rel=level."""
    rel = level if param else None
    names = {trec: Measure(fam, rel=rel if "rel" in FAMILIES[fam].params else None)
             for fam, trec in TREC_SET.items()}
    names |= {m.trec_name: Measure("IPrec", rel=rel, recall=m.recall) for m in IPREC}
    res = evaluate(qrels, run, list(names.values()), rel_level=1 if param else level)
    return res, names


def test_equal_to_pytrec_eval() -> None:
    cases: list[tuple[Qrels, RunDict, int]] = []
    for seed in SEEDS:
        qrels, run = generate(seed)
        cases += [(qrels, run, 1), (qrels, run, 2)]  # pytrec_eval refuses level 0
    expected = pytrec_values(cases)
    checked = differ = 0
    for (qrels, run, level), exp in zip(cases, expected, strict=True):
        for param in (False, True):
            res, names = _ours_by_trec_name(qrels, run, level, param)
            for trec, m in names.items():
                ours = res.per_query(m)
                if m.name == "IPrec":
                    continue  # trec_eval 10's rounding; compared below
                for q, vals in exp.items():
                    # exact: the same operations in the same order as trec_eval's C code
                    assert ours[q] == vals[trec], (trec, m, q, level, param)
                    checked += 1
                # queries pytrec_eval leaves out (empty rankings) score 0 except the counts
                for q in set(ours) - set(exp):
                    assert not run[q]
                    if m.name not in ("NumQ", "NumRel"):
                        assert ours[q] == 0.0, (m, q)
            # pytrec_eval runs trec_eval 9, whose levels round as (long)(r·R + 0.9)
            curve = pr_curve(res, rel=level if param else None, rounding="trec_eval9")
            ours10 = pr_curve(res, rel=level if param else None)
            for j, q in enumerate(res.query_ids):
                assert ours10[j].tolist() == [res.values(m)[j] for m in names.values()
                                              if m.name == "IPrec"]
                if q in exp:
                    assert curve[j].tolist() == [exp[q][m.trec_name] for m in IPREC]
                    differ += curve[j].tolist() != ours10[j].tolist()
    assert checked > 2000 and differ > 10  # the two roundings do differ on this data


SUITE = [
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"complete": True}),
    ("out.test.aqcM", "qrels.test", "results.trunc", {"complete": True, "max_depth": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"rel_level": 2}),
]


@pytest.mark.parametrize(("out", "qrels", "run", "options"), SUITE, ids=[c[0] for c in SUITE])
def test_trec_eval_suite(conformance_dir: Path, out: str, qrels: str, run: str,
                         options: dict[str, Any]) -> None:
    """trec_eval's own expected output: every query and the all row, as printed."""
    expected: dict[str, dict[str, str]] = defaultdict(dict)
    for line in (conformance_dir / out).read_text().splitlines():
        name, qid, value = line.split("\t")
        expected[name.strip()][qid] = value.strip()
    ms = {trec: Measure(fam) for fam, trec in TREC_SET.items()} | {m.trec_name: m for m in IPREC}
    res = evaluate(conformance_dir / qrels, conformance_dir / run, list(ms.values()),
                   **options)
    text = format_trec(res, per_query=True)
    got: dict[str, dict[str, str]] = defaultdict(dict)
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        got[name.strip()][qid] = value.strip()
    for trec in ms:
        assert got[trec] == expected[trec], trec
    assert "bpref" in got and got["num_q"] == {"all": "3"}
    np.testing.assert_allclose(pr_curve(res).mean(axis=0),
                               [float(expected[m.trec_name]["all"]) for m in IPREC],
                               atol=5e-5, rtol=0)


# ---- ir_measures: Judged, ERR (gdeval), RBP (cwl_eval) ---------------------------------------

def test_judged_equals_ir_measures() -> None:
    import ir_measures
    cuts = (1, 3, 5, 10, 30)
    measures = [ir_measures.Judged @ k for k in cuts] + [ir_measures.Judged]
    checked = 0
    for seed in SEEDS:
        qrels, run = generate(seed)
        # ir_measures' judged provider breaks ties by document id ascending (and divides by
        # zero on an empty ranking): it is given the rankings in trec_eval's order
        peer = distinct({q: d for q, d in run.items() if d})
        got = {(str(m.measure), m.query_id): m.value
               for m in ir_measures.judged.iter_calc(measures, qrels, peer)}
        res = evaluate(qrels, run, [f"Judged@{k}" for k in cuts] + ["Judged"])
        for k in (*cuts, None):
            name = "Judged" if k is None else f"Judged@{k}"
            for q, v in res.per_query(name).items():
                if run[q]:
                    assert v == got[(name, q)], (seed, name, q)
                    checked += 1
                else:
                    assert v == 0.0
    assert checked > 300


def test_judged_on_tied_runs_against_ir_measures() -> None:
    """On tied scores (not made distinct): ir_measures' judged provider sorts by score, then
    document id ascending. Given each ranking in that order (order='given'), ragreport equals
    it exactly; in trec_eval's order (document id descending among ties) a value differs only
    on a query whose tied group straddles K (the K-th and the (K+1)-th documents tie)."""
    import ir_measures
    cuts = (1, 2, 3, 5, 10)
    measures = [ir_measures.Judged @ k for k in cuts] + [ir_measures.Judged]
    names = [f"Judged@{k}" for k in cuts] + ["Judged"]
    checked = differing = 0
    for seed in SEEDS:
        qrels, run = generate(seed)
        peer = {q: d for q, d in run.items() if d}  # ir_measures divides by 0 on []
        got = {(str(m.measure), m.query_id): m.value
               for m in ir_measures.judged.iter_calc(measures, qrels, peer)}
        theirs = {q: [d for d, _ in sorted(docs.items(), key=lambda x: (-x[1], x[0]))]
                  for q, docs in peer.items()}
        given = evaluate(qrels, theirs, names, order="given")
        trec = evaluate(qrels, run, names)
        for name, k in zip(names, (*cuts, None), strict=True):
            in_given, in_trec = given.per_query(name), trec.per_query(name)
            for q, v in in_given.items():
                assert v == got[(name, q)], (seed, name, q)
                checked += 1
                scores = sorted(peer[q].values(), reverse=True)
                straddles = k is not None and len(scores) > k and scores[k - 1] == scores[k]
                if in_trec[q] != v:
                    assert straddles, (seed, name, q)
                    differing += 1
    assert checked > 300
    assert differing > 0  # the data has ties across the cut that change the value
    readme = user_docs()
    known = readme[readme.index("## Known differences from the peers"):]
    assert "`Judged@K` on tied scores: ir_measures' judged provider breaks ties by " \
           "document id\n  ascending" in known


def test_err_equals_gdeval() -> None:
    import ir_measures
    cuts = (1, 2, 5, 10, 20, 1000)
    checked = 0
    for seed in range(6):
        qrels, run = generate(seed)
        # ties as they are: gdeval orders them by document id descending, as trec_eval does
        peer = {q: d for q, d in run.items() if d}
        got = {(m.measure["cutoff"], m.query_id): m.value
               for m in ir_measures.gdeval.iter_calc([ir_measures.ERR @ k for k in cuts],
                                                     qrels, peer)}
        res = evaluate(qrels, run, [f"ERR@{k}" for k in cuts] + ["ERR"])
        for k in cuts:
            ours = res.per_query("ERR" if k == 1000 else f"ERR@{k}")
            for q, v in ours.items():
                if (k, q) in got:  # gdeval prints queries with a positive grade only
                    assert v == pytest.approx(got[(k, q)], abs=5.1e-6, rel=0), (seed, k, q)
                    checked += 1
                elif not any(g > 0 for g in qrels[q].values()):
                    assert v == 0.0
    assert checked > 200


def test_rbp_equals_cwl_eval() -> None:
    import cwl  # noqa: F401  (cwl-eval: ir_measures' RBP(rel=N) provider)
    import ir_measures
    checked = 0
    for seed in range(6):
        qrels, run = generate(seed)
        peer = distinct({q: d for q, d in run.items() if d})
        for p, rel in ((0.8, 1), (0.5, 2), (0.95, 1)):
            measure = ir_measures.RBP(p=p, rel=rel)
            got = {m.query_id: float(m.value)
                   for m in ir_measures.cwl_eval.iter_calc([measure], qrels, peer)}
            ours = evaluate(qrels, run, [f"RBP(p={p},rel={rel})"]).per_query(
                f"RBP(p={p},rel={rel})")
            for q, v in ours.items():
                if q in got:
                    # cwl_eval scales the weights by 1 / (1 - p^1000): 1 + 5e-23 for p = 0.95
                    assert v == pytest.approx(got[q], abs=1e-15, rel=1e-12), (seed, p, q)
                    checked += 1
                else:
                    assert v == 0.0
    assert checked > 100


def test_graded_rbp_equals_trectools_on_generated_data() -> None:
    """trectools (a test dependency) through ir_measures' provider: graded RBP agrees."""
    import ir_measures
    import trectools  # noqa: F401  (ir_measures' graded RBP provider)
    checked = 0
    for seed in range(12):
        qrels, run = generate(seed)
        # scores distinct within and across queries: trectools averages the weights of equal
        # scores in adjacent rows, across a query boundary too
        peer = {q: {d: s + 1000.0 * i for d, s in docs.items()}
                for i, (q, docs) in enumerate(sorted(distinct(run).items())) if docs}
        for p in (0.8, 0.5, 0.95):
            for k in (None, 1, 3, 10):
                name = f"RBP(p={p})" + (f"@{k}" if k else "")
                m = ir_measures.RBP(p=p) @ k if k else ir_measures.RBP(p=p)
                # one measure per call: the provider's RBP closure reads the last measure
                got = {r.query_id: r.value for r in ir_measures.trectools.iter_calc([m], qrels,
                                                                                    peer)}
                for q, v in evaluate(qrels, peer, [name]).per_query(name).items():
                    assert v == pytest.approx(got.get(q, 0.0), abs=1e-15, rel=1e-12), (seed, q)
                    checked += 1
    assert checked > 500


def test_rbp_and_err_cutoffs_equal_their_definitions() -> None:
    """RBP@K (graded and binary) and ERR@K from the formulas, rank by rank."""
    for seed in range(4):
        qrels, run = generate(seed)
        res = evaluate(qrels, run, ["RBP(p=0.7)@4", "ERR@4", "RBP(p=0.7)", "RBP(p=0.7,rel=1)"],
                       k_max=30)
        for i, q in enumerate(res.query_ids):
            order = trec_order(run.get(q, {}))
            grades = [qrels[q].get(d, 0) for d in order]
            for k in range(1, res.k_max + 1):
                rbp = 0.3 * sum(g * 0.7 ** j for j, g in enumerate(grades[:k]) if g > 0)
                assert res.curve("RBP(p=0.7)")[i, k - 1] == pytest.approx(rbp, abs=1e-14)
                rbp = 0.3 * sum(0.7 ** j for j, g in enumerate(grades[:k]) if g >= 1)
                assert res.curve("RBP(p=0.7,rel=1)")[i, k - 1] == pytest.approx(rbp, abs=1e-15)
                err, decay = 0.0, 1.0
                for j, g in enumerate(grades[:k]):
                    stop = (2 ** max(g, 0) - 1) / 16
                    err += stop * decay / (j + 1)
                    decay *= 1 - stop
                assert res.curve("ERR")[i, k - 1] == err  # gdeval's loop, exactly


def beir_recall_cap(qrels: Qrels, results: RunDict, k: int) -> dict[str, float]:
    """BEIR's ``recall_cap`` (beir/retrieval/custom_metrics.py), per query, without the
    division by zero of a query without a relevant document (0 here, as in ragreport)."""
    out = {}
    for query_id, doc_scores in results.items():
        top_hits = sorted(doc_scores.items(), key=lambda item: item[1], reverse=True)[0:k]
        query_relevant_docs = [d for d in qrels[query_id] if qrels[query_id][d] > 0]
        retrieved_docs = [row[0] for row in top_hits[0:k] if qrels[query_id].get(row[0], 0) > 0]
        denominator = min(len(query_relevant_docs), k)
        out[query_id] = len(retrieved_docs) / denominator if denominator else 0.0
    return out


def test_capped_recall_equals_beir() -> None:
    for seed in SEEDS:
        qrels, run = generate(seed)
        peer = distinct({q: d for q, d in run.items() if q in qrels})
        res = evaluate(qrels, run, [f"R_cap@{k}" for k in (1, 3, 10, 100)])
        for k in (1, 3, 10, 100):
            want = beir_recall_cap(qrels, peer, k)
            assert res.per_query(f"R_cap@{k}") == pytest.approx(want, abs=0, rel=0)


# ---- curves, sparse forms, names, output, streaming ------------------------------------------

CURVED = ["Judged", "ERR", "RBP", "RBP(p=0.3,rel=2)", "R_cap", "R_cap(rel=2)"]


@pytest.mark.parametrize("seed", range(5))
def test_curves_equal_sparse_values_bit_for_bit(seed: int) -> None:
    qrels, run = generate(seed)
    wide = evaluate(qrels, run, [f"{f}@1" for f in CURVED] + ["Judged", "ERR", "RBP",
                                                               "RBP(p=0.3,rel=2)"],
                    k_max=40)
    narrow = evaluate(qrels, run, [f"{f}@1" for f in CURVED], _curve_width=2, k_max=40)
    rk = wide.ranking
    assert wide.k_max >= rk.depth
    for fam in CURVED:
        curve = wide.curve(fam)
        for k in range(1, wide.k_max + 1):
            m = parse_measure(f"{fam}@{k}")
            sparse = cutoff_values(rk, m, 1.0)
            assert np.array_equal(sparse, curve[:, k - 1]), (fam, k)
            assert np.array_equal(narrow.values(m), curve[:, k - 1]), (fam, k)
        # past the end of every ranking: constant, any K
        for k in (wide.k_max + 1, 10**6, 2**53):
            assert np.array_equal(cutoff_values(rk, parse_measure(f"{fam}@{k}"), 1.0),
                                  curve[:, -1]), (fam, k)
        if FAMILIES[parse_measure(f"{fam}@1").name].cutoff == "optional":  # the whole ranking
            assert np.array_equal(wide.values(fam), curve[:, -1]), fam


def test_new_families_are_not_computed_unless_asked_for() -> None:
    r = evaluate({"q": {"a": 5}}, {"q": ["a"]}, ["P@1"])  # grade 5: ERR would refuse it
    assert not any(m.name in ("Judged", "ERR", "RBP", "R_cap") for m in r.curves)
    assert not set(metrics.__all__) - set(dir(metrics))


@pytest.mark.parametrize("text", [
    "SetP", "SetR(rel=2)", "SetF", "NumQ", "Judged", "Judged@10", "Bpref", "Bpref(rel=3)",
    "IPrec@0.5", "IPrec@0.0", "IPrec@1.0", "IPrec(rel=2)@0.25", "IPrec@0.125", "ERR", "ERR@20",
    "RBP(p=0.8)", "RBP(p=0.8)@10", "RBP(p=0.5,rel=2)@3", "R_cap@10", "R_cap(rel=2)@5",
])
def test_canonical_names_round_trip(text: str) -> None:
    m = parse_measure(text)
    assert str(m) == text
    assert parse_measure(str(m)) == m and hash(parse_measure(str(m))) == hash(m)


@pytest.mark.parametrize(("text", "canonical"), [
    ("RBP", "RBP(p=0.8)"), ("RBP@10", "RBP(p=0.8)@10"), ("RBP(rel=1,p=.5)", "RBP(p=0.5,rel=1)"),
    ("IPrec@1", "IPrec@1.0"), ("IPrec@.5", "IPrec@0.5"), ("IPrec@0.50", "IPrec@0.5"),
])
def test_canonical_forms(text: str, canonical: str) -> None:
    assert str(parse_measure(text)) == canonical


@pytest.mark.parametrize(("text", "message"), [
    ("IPrec", r"^IPrec needs a recall level"),
    ("IPrec@1.5", r"^recall level of IPrec must be between 0 and 1, got 1\.5$"),
    ("IPrec@x", r"^recall level must be a decimal number between 0 and 1, got 'x' in"),
    ("RBP(p=1)", r"^p of RBP must be strictly between 0 and 1, got 1\.0$"),
    ("RBP(p=0)@5", r"^p of RBP must be strictly between 0 and 1, got 0\.0$"),
    ("RBP(p=-0.5)", r"^p must be a decimal number between 0 and 1, got '-0\.5'"),
    ("P(p=0.5)@5", r"^P takes no 'p' parameter$"),
    ("R_cap", r"^R_cap needs a cutoff, e\.g\. R_cap@5"),
    ("SetP@5", r"^SetP takes no cutoff, got SetP@5$"),
    ("NumQ(rel=2)", r"^NumQ takes no 'rel' parameter$"),
    ("Judged(rel=2)@5", r"^Judged takes no 'rel' parameter$"),
    ("ERR(rel=2)@5", r"^ERR takes no 'rel' parameter$"),
])
def test_invalid_new_measures(text: str, message: str) -> None:
    with pytest.raises(MeasureError, match=message):
        parse_measure(text)


def test_measure_fields_are_validated() -> None:
    assert Measure("RBP") == Measure("RBP", p=0.8) and Measure("RBP").p == 0.8
    assert Measure("IPrec", recall=1) == Measure("IPrec", recall=1.0)
    assert str(Measure("IPrec", recall=-0.0)) == "IPrec@0.0"
    assert Measure("RBP", 5, p=0.5).at(7) == Measure("RBP", 7, p=0.5)
    assert Measure("IPrec", recall=0.5).curve_key == Measure("IPrec", recall=0.5)
    assert not Measure("IPrec", recall=0.5).has_curve and Measure("RBP").has_curve
    for bad in ({"name": "RBP", "p": True}, {"name": "RBP", "p": "0.5"},
                {"name": "RBP", "p": math.nan}, {"name": "IPrec", "recall": math.inf},
                {"name": "IPrec", "cutoff": 5, "recall": 0.5}, {"name": "P", "cutoff": 5,
                                                                "recall": 0.5}):
        with pytest.raises(MeasureError):
            Measure(**bad)


def test_trec_names() -> None:
    names = {str(m): m.trec_name for m in map(parse_measure, [
        "SetP", "SetR", "SetF", "NumQ", "Bpref", "IPrec@0.5", "IPrec@0.0", "IPrec@0.125",
        "Judged@10", "Judged", "ERR@20", "ERR", "RBP", "RBP@10", "R_cap@10", "SetP(rel=2)"])}
    assert names == {
        "SetP": "set_P", "SetR": "set_recall", "SetF": "set_F", "NumQ": "num_q",
        "Bpref": "bpref", "IPrec@0.5": "iprec_at_recall_0.50",
        "IPrec@0.0": "iprec_at_recall_0.00", "IPrec@0.125": "iprec_at_recall_0.125",
        "Judged@10": "judged_10", "Judged": "judged", "ERR@20": "err_20", "ERR": "err",
        "RBP(p=0.8)": "rbp(p=0.8)", "RBP(p=0.8)@10": "rbp_10(p=0.8)", "R_cap@10": "r_cap_10",
        "SetP(rel=2)": "set_P(rel=2)"}


def test_format_trec_prints_trec_eval_names_and_sums_counts() -> None:
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 2}, "3": {"a": 1}}
    run = {"1": ["a", "x"], "2": ["c"], "3": []}
    res = evaluate(qrels, run, ["SetP", "NumQ", "NumRet", "Bpref", "IPrec@0.5", "Judged@10",
                                "ERR@20", "RBP", "R_cap@10"], order="given")
    lines = format_trec(res, per_query=True).splitlines()
    rows = [tuple(x.strip() for x in line.split("\t")) for line in lines]
    assert ("set_P", "1", "0.5000") in rows and ("set_P", "all", "0.5000") in rows
    assert [r for r in rows if r[0] == "num_q"] == [("num_q", "all", "3")]  # once, summed
    assert ("num_ret", "all", "3") in rows
    assert ("bpref", "all", "0.6667") in rows
    assert ("iprec_at_recall_0.50", "2", "1.0000") in rows
    assert ("judged_10", "1", "0.5000") in rows
    assert ("err_20", "2", "0.1875") in rows  # (2^2 - 1) / 16
    assert ("rbp(p=0.8)", "1", "0.2000") in rows
    assert ("r_cap_10", "all", "0.6667") in rows


@pytest.mark.parametrize("options", [{}, {"complete": True}, {"max_depth": 3},
                                     {"rel_level": 2}, {"no_relevant": "skip"}],
                         ids=["default", "complete", "max_depth", "rel_level", "skip"])
def test_streaming_gives_the_same_numbers(tmp_path: Path, options: dict[str, Any]) -> None:
    qrels, run = generate(3)
    lines = []
    for q in sorted(run, key=int):
        for i, d in enumerate(trec_order(run[q])):
            lines.append(f"{q} Q0 {d} {i + 1} {run[q][d]} tag\n")
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    ms = ["SetP", "SetF(rel=2)", "Judged@5", "Judged", "Bpref", "IPrec@0.3", "ERR@10", "ERR",
          "RBP(p=0.5)", "RBP@3", "R_cap@5", "Judged@1000000"]
    if not options.get("complete"):
        ms.append("NumQ")  # a count: streaming with complete refuses it
    whole = evaluate(qrels, path, ms, **options)
    streamed = evaluate_stream(qrels, path, ms, block_bytes=64, **options)
    for m in ms:
        assert dict(zip(streamed.query_ids, streamed.values(m).tolist(), strict=True)) == \
            whole.per_query(m), m
    width = min(streamed.k_max, whole.k_max)
    for fam in ("RBP", "Judged", "ERR", "R_cap"):
        np.testing.assert_allclose(streamed.mean_curves[parse_measure(f"{fam}@1").curve_key]
                                   [:width], whole.mean_curve(fam)[:width], rtol=0, atol=1e-15)
    assert format_trec(streamed) == format_trec(whole)


def test_iprec_counts_lround_relevant_documents_not_recall() -> None:
    """IPrec@r is the best precision at a rank holding lround(r·R) relevant documents (as
    trec_eval 10), not at a rank whose recall is >= r: with 6 relevant documents and one
    retrieved first, recall never reaches 0.2, yet IPrec@0.2 = 1 (lround(1.2) = 1) and
    IPrec@0.3 = 0 (lround(1.8) = 2 were never retrieved); the definition says so."""
    from ragreport.measures import FAMILIES

    r = evaluate({"q": {f"d{i}": 1 for i in range(6)}}, {"q": ["d0", "x"]},
                 ["IPrec@0.2", "IPrec@0.3", "R@2"])
    assert r.means() == {"IPrec@0.2": 1.0, "IPrec@0.3": 0.0, "R@2": 1 / 6}
    assert "lround(r·R)" in FAMILIES["IPrec"].definition
    assert "whose recall is" not in FAMILIES["IPrec"].definition
