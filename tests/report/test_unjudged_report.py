"""The report's targets through their unjudged documents: JSON, Markdown, terminal and HTML
say when a decision depends on them, and ``unjudged="fail"`` fails such a pass."""

from __future__ import annotations

import json

import pytest

import ragreport
from ragreport.errors import ConfigError
from ragreport.report.jsonout import render_json
from ragreport.report.markdown import render_markdown
from ragreport.report.terminal import render_failures, render_terminal
from ragreport.targets import parse_targets

QRELS = {"q1": {"d1": 1, "d2": 2, "d4": 0}, "q2": {"d3": 1, "d8": 3}, "q3": {"d7": 1}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d9": 1.0}, "q2": {"d5": 1.0, "d3": 0.5, "d8": 0.5},
       "q3": {"d6": 1.0, "d7": 0.25}}
NAME = "<b>run</b>"  # shown everywhere, escaped in HTML and Markdown


def report(policy: str = "warn", table: dict[str, object] | None = None) -> ragreport.Report:
    result = ragreport.evaluate(QRELS, RUN, ["P@1"], name=NAME)
    targets = parse_targets(table or {"P@1": "<= 0.5", "RR": 0.1})
    return ragreport.build_report([result], targets, stats=False, unjudged=policy)


def test_json_lists_every_check_with_its_interval() -> None:
    doc = json.loads(render_json(report()))
    assert doc["unjudged"]["policy"] == "warn"
    p1, rr = doc["unjudged"]["checks"]
    assert (p1["measure"], p1["low"], p1["high"], p1["unjudged_documents"]) == \
        ("P@1", pytest.approx(1 / 3), 1.0, 3)
    assert p1["depends_on_unjudged_documents"] is True and p1["passed"] is True
    assert p1["note"] == "this pass depends on unjudged documents" and p1["dependent"] == 2
    assert rr["depends_on_unjudged_documents"] is False and rr["note"] == ""


def test_warn_keeps_the_pass_and_says_so_everywhere() -> None:
    r = report()
    assert r.all_passed and r.unjudged_flips == 1
    md = render_markdown(r)
    assert "**this pass depends on unjudged documents**" in md and "&lt;b&gt;run" in md
    assert "(a failure under" not in md
    term = render_terminal(r)
    assert "WARNING P@1 <= 0.5 (run '<b>run</b>'): this pass depends on unjudged documents: " \
           "2 of 3 queries change when the 3 unjudged documents of their rankings are read " \
           "as relevant (grade 3); mean in [0.3333, 1.0000]" in term
    html = r.to_html()
    assert 'data-role="unjudged-warning"' in html and "<b>run</b>" not in html
    assert "&lt;b&gt;run&lt;/b&gt;" in html


def test_fail_fails_the_dependent_pass_only() -> None:
    r = report("fail")
    assert not r.all_passed and r.verdict.failed == 1
    (row_p1, row_rr) = r.targets
    assert row_p1.cells[0].passed is False and row_p1.cells[0].unjudged is True
    assert row_rr.cells[0].passed is True
    assert render_failures(r) == ("FAILED P@1: 0.3333 is <= 0.5 but depends on unjudged "
                                  "documents (--unjudged fail) (run '<b>run</b>')\n")
    assert "(a failure under `--unjudged fail`)" in render_markdown(r)
    # a failure that depends on them stays a failure, said, not doubled
    r = report("fail", {"P@1": 0.5})
    assert r.targets[0].cells[0].unjudged is False
    assert "this failure depends on unjudged documents" in render_terminal(r)


def test_the_grade_of_an_unjudged_document_is_stated_and_configurable() -> None:
    result = ragreport.evaluate(QRELS, RUN, ["nDCG@3"], name=NAME)
    targets = parse_targets({"nDCG@3": 0.1})

    def check(grade: float | None) -> dict[str, object]:
        r = ragreport.build_report([result], targets, stats=False, unjudged_grade=grade)
        return json.loads(render_json(r))["unjudged"]["checks"][0]

    top, one = check(None), check(1)
    assert top["grade"] == 3 and one["grade"] == 1  # default: the largest grade in the qrels
    expected = ragreport.unjudged_bounds(QRELS, RUN, ["nDCG@3"], grade=1).interval("nDCG@3")
    assert (one["low"], one["high"]) == pytest.approx(expected)
    assert one["high"] != pytest.approx(top["high"])
    with pytest.raises(ragreport.RagReportError, match=r"grade must be at least rel_level "
                       r"\(1\) .*got 0\.5"):
        check(0.5)


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ConfigError, match="unjudged must be one of warn, fail, off, got 'x'"):
        report("x")


def test_off_looks_at_nothing() -> None:
    r = report("off")
    assert r.all_passed and r.unjudged == [] and r.unjudged_policy == "off"
    assert "unjudged" not in render_terminal(r)
    assert json.loads(render_json(r))["unjudged"] == {"policy": "off", "checks": []}


def test_the_drill_down_badges_the_queries_that_change() -> None:
    r = report()
    (w,) = r.worst
    badged = {q.query_id: q.unjudged_badge for q in w.queries if q.unjudged_ranges}
    both = "P@1 0.0000–1.0000; RR 0.5000–1.0000"  # the unjudged document ranked first
    assert badged == {"q2": both, "q3": both}
    doc = json.loads(render_json(r))
    ranges = {q["query_id"]: q["unjudged_ranges"] for q in doc["worst_queries"][NAME]}
    assert ranges["q2"] == {"P@1": [0.0, 1.0], "RR": [0.5, 1.0]} and ranges["q1"] == {}
    html = r.to_html()
    assert html.count('data-role="unjudged-badge"') == 2
    assert f"unjudged: {both}" in html
