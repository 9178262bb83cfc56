"""The drop gate through the unjudged documents: each ``--max-drop`` check decided again
with every unjudged document of the compared runs read as relevant, for all runs alike."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ragreport
from ragreport.analysis.unjudged import filled_together
from ragreport.report.jsonout import render_json
from ragreport.report.markdown import render_markdown
from ragreport.report.terminal import render_failures, render_terminal
from ragreport.targets import parse_targets

N = 30
# every query: "rel" relevant, "non" judged not relevant, "u<i>" unjudged
QRELS = {f"q{i}": {"rel": 1, "non": 0} for i in range(N)}
# the baseline ranks its unjudged document first; the candidate a judged non-relevant one
BASE = {f"q{i}": {f"u{i}": 3.0, "rel": 2.0} for i in range(N)}
CAND = {f"q{i}": {"non": 3.0, "rel": 2.0} for i in range(N)}
BASE_NAME, CAND_NAME = "<i>base</i>", "cand & co"


def build(policy: str = "warn", base: dict = BASE, cand: dict = CAND,
          **kw: object) -> ragreport.Report:
    results = [ragreport.evaluate(QRELS, base, ["P@1"], name=BASE_NAME),
               ragreport.evaluate(QRELS, cand, ["P@1"], name=CAND_NAME)]
    return ragreport.build_report(results, parse_targets({"P@1": 0.0}), max_drop=0.1,
                                  resamples=2000, unjudged=policy, **kw)


def test_a_pass_that_depends_on_unjudged_documents_is_said_and_kept() -> None:
    r = build()
    (d,) = r.drops
    assert d.delta == 0.0 and not d.failed and d.unjudged is not None
    u = d.unjudged
    # read as relevant, the baseline's first document is relevant in every query: P@1 1 vs 0
    assert (u.delta, u.low, u.high, u.dependent, u.grade) == (-1.0, -1.0, 0.0, N, 1.0)
    assert u.failed and u.p_value < 0.05 and u.note == "this pass depends on unjudged documents"
    assert r.all_passed and r.unjudged_flips == 1
    assert "this pass depends on unjudged documents: with the unjudged documents read as " \
           "relevant (grade 1) the delta is −1.0000 (interval [-1.0000, -1.0000], " \
           in render_terminal(r)
    assert (u.outcome, u.delta_lower, u.delta_upper) == ("fail", -1.0, -1.0)
    md = render_markdown(r)
    assert "✅ pass ⚠️ depends on unjudged documents" in md
    assert "- ⚠️ drop check P@1, run cand &amp; co against &lt;i&gt;base&lt;/i&gt;: " \
           "**this pass depends on unjudged documents**: with the unjudged" in md
    html = r.to_html()
    assert html.count('data-role="unjudged-warning"') == 1 and "<i>base</i>" not in html
    doc = json.loads(render_json(r))["drops"][0]["unjudged"]
    assert doc["depends_on_unjudged_documents"] is True and doc["delta"] == -1.0
    assert doc["failed"] is True and doc["failed_by_policy"] is False
    assert (doc["outcome"], doc["delta_lower"], doc["delta_upper"]) == ("fail", -1.0, -1.0)


def test_another_run_changes_nothing() -> None:
    results = [ragreport.evaluate(QRELS, BASE, ["P@1"], name=BASE_NAME),
               ragreport.evaluate(QRELS, CAND, ["P@1"], name=CAND_NAME),
               ragreport.evaluate(QRELS, {"q0": {"rel": 1.0}}, ["P@1"], name="one query")]
    r = ragreport.build_report(results, parse_targets({"P@1": 0.0}), max_drop=0.1,
                               resamples=2000)
    (d, _) = r.drops
    assert d.run == CAND_NAME and d.unjudged is not None
    assert d.unjudged.delta == -1.0 and d.unjudged.dependent == N and d.unjudged.depends


def test_under_fail_such_a_pass_fails_the_gate() -> None:
    r = build("fail")
    (d,) = r.drops
    assert d.failed and d.unjudged_failed and not r.all_passed
    assert render_failures(r).startswith("FAILED drop P@1: run 'cand & co'")
    assert render_failures(r).rstrip().endswith("(--unjudged fail)")
    assert "❌ fail (depends on unjudged documents)" in render_markdown(r)
    assert json.loads(render_json(r))["drops"][0]["unjudged"]["failed_by_policy"] is True


def test_a_failure_that_depends_on_unjudged_documents() -> None:
    # the candidate's drop (rel first -> an unjudged document first) vanishes when read as
    # relevant: the failure depends on unjudged documents, and stays a failure
    base = {f"q{i}": {"rel": 3.0} for i in range(N)}
    cand = {f"q{i}": {f"u{i}": 3.0, "rel": 2.0} for i in range(N)}
    (d,) = build("fail", base, cand).drops
    assert d.failed and not d.unjudged_failed and d.unjudged is not None
    assert d.unjudged.delta == 0.0 and not d.unjudged.failed
    assert d.unjudged.note == "this failure depends on unjudged documents"


def test_no_unjudged_reading_when_off_or_nothing_depends() -> None:
    assert build("off").drops[0].unjudged is None
    judged = {f"q{i}": {"non": 3.0, "rel": 2.0} for i in range(N)}
    (d,) = build("warn", judged, CAND).drops
    assert d.unjudged is not None and not d.unjudged.depends and d.unjudged.dependent == 0
    assert "unjudged" not in d.message  # the message is the drop check's own, always


def test_one_reading_for_every_run_checked_by_hand() -> None:
    # a document unjudged in run a only is relevant for run b too: b's recall goes down
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    a = {"q1": ["x", "d1"], "q2": ["d2", "y"]}
    b = {"q1": ["d1"], "q2": ["z", "d2"]}
    ra, rb = (ragreport.evaluate(qrels, r, ["R@1", "nDCG@2"]) for r in (a, b))
    got = filled_together([ra, rb], grade=2)
    assert got is not None and got[1] == 2.0
    fa, fb = got[0]
    full = {"q1": {"d1": 1, "x": 2}, "q2": {"d2": 1, "y": 2, "z": 2}}
    for filled, run in ((fa, a), (fb, b)):
        expected = ragreport.evaluate(full, run, ["R@1", "nDCG@2"])
        for m in ("R@1", "nDCG@2"):
            np.testing.assert_allclose(filled.values(m), expected.values(m))
    assert fb.values("R@1").tolist() == [0.5, pytest.approx(1 / 3)]  # q1: x is a's


def test_different_judgments_are_not_filled_together() -> None:
    r1 = ragreport.evaluate({"q": {"d1": 1}}, {"q": ["d1", "d2"]}, ["P@1"])
    r2 = ragreport.evaluate({"q": {"d1": 1, "d3": 1}}, {"q": ["d1", "d2"]}, ["P@1"])
    assert filled_together([r1, r2]) is None


def test_a_stored_baseline_has_no_unjudged_reading(tmp_path) -> None:
    path = tmp_path / "base.json"
    path.write_text(render_json(ragreport.build_report(
        [ragreport.evaluate(QRELS, BASE, ["P@1"], name=BASE_NAME)],
        parse_targets({"P@1": 0.0}), per_query=True)), encoding="utf-8")
    stored = ragreport.load_baseline_report(path)
    r = ragreport.build_report([ragreport.evaluate(QRELS, CAND, ["P@1"], name=CAND_NAME)],
                               parse_targets({"P@1": 0.0}), baseline=stored, max_drop=0.1,
                               resamples=2000)
    assert r.drops and r.drops[0].unjudged is None


@pytest.mark.parametrize("grade", [1, 3])
def test_the_grade_is_the_one_given(grade: int) -> None:
    (d,) = build(unjudged_grade=grade).drops
    assert d.unjudged is not None and d.unjudged.grade == grade


def test_unjudged_fail_fails_only_a_gate_decision_that_differs() -> None:
    """Under --unjudged fail, a check fails when the filled reading's gate decision is a
    failure; an outcome that merely differs (inconclusive on one reading, a pass on the
    other, both passing under on_inconclusive = "pass") is said, not failed."""
    from ragreport.examples import example_files
    from ragreport.targets import default_targets

    f = example_files()
    results = [ragreport.evaluate(f.qrels, p) for p in f.runs]
    r = ragreport.build_report(results, default_targets(), max_drop=0.02,
                               resamples=1000, on_inconclusive="pass", unjudged="fail")
    differ = [d for d in r.drops if d.unjudged is not None and d.unjudged.depends]
    assert differ  # the example has checks whose outcome depends on unjudged documents
    for d in r.drops:
        assert d.unjudged_failed == (d.unjudged is not None and d.unjudged.failed
                                     and d.outcome != "fail")
        assert d.failed == (d.outcome == "fail" or d.unjudged_failed)
