"""The report carries its verdict (Report.verdict): every view shows the model's counts."""

from __future__ import annotations

import json

import pytest

import ragreport
from ragreport.examples import example_files
from ragreport.report import build_report
from ragreport.targets import parse_targets


@pytest.fixture(scope="module")
def report() -> ragreport.Report:
    files = example_files()
    results = [ragreport.evaluate(files.qrels, p) for p in files.runs]
    tags = {f"q{i:02d}": ["odd"] if i % 2 else ["even"] for i in range(1, 42)}
    # R@5 >= 0.3 on two runs, P@5 >= 0.99 fails on both; the even slice's R@5 >= 0.99 fails
    return build_report(results, parse_targets({"R@5": 0.3, "P@5": 0.99}), slices=tags,
                        slice_targets={"even": parse_targets({"R@5": 0.99}),
                                       "odd": parse_targets({"R@5": 0.0})},
                        resamples=200, curve_resamples=50, max_drop=0.9,
                        generated_at="2026-01-01T00:00:00Z")


def test_the_verdict_counts_every_check(report: ragreport.Report) -> None:
    v = report.verdict
    cells = [c for t in report.targets for c in t.cells]
    assert (v.checks, v.failed) == (len(cells), sum(not c.passed for c in cells)) == (4, 2)
    assert (v.slice_checks, v.slice_failed, v.failing_slices) == (4, 2, ["even"])
    assert (v.drops, v.drops_failed, v.max_drop) == (2, 0, 0.9)
    assert v.passed is report.all_passed is False
    assert not v.nothing_checked


def test_every_view_shows_the_verdicts_numbers(report: ragreport.Report) -> None:
    v = report.verdict
    md = report.to_markdown()
    assert f"**{v.failed} of {v.checks} target checks fail**" in md
    assert f"**{v.slice_failed} of {v.slice_checks} slice target checks fail** (slice even)" \
        in md
    html = report.to_html()
    assert f"{v.failed + v.slice_failed} of {v.checks + v.slice_checks} target checks fail" \
        in html
    doc = json.loads(report.to_json())
    assert doc["all_targets_passed"] is (v.failed == 0) is False
    assert doc["slices"]["failing"] == v.failing_slices
    from ragreport.report.terminal import render_terminal

    assert "; 1 failing)" in render_terminal(report)
