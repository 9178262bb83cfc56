"""Target checks through the unjudged documents: the note, the dependent queries and the
gate's policy (a boundary table)."""

from __future__ import annotations

import pytest

from ragreport.analysis.unjudged import unjudged_bounds
from ragreport.analysis.unjudged_checks import (
    gate_passes,
    unjudged_checks,
)
from ragreport.errors import ConfigError
from ragreport.targets import check_targets, decision_flips, parse_targets

# q1: d1 relevant, u1 unjudged -> P@2 is 0.5 or 1.0; q2: both judged -> 0.5 either way
QRELS = {"q1": {"d1": 1}, "q2": {"a": 1, "b": 0}}
RUN = {"q1": ["d1", "u1"], "q2": ["a", "b"]}


def checks_for(table: dict[str, object]) -> list:  # type: ignore[type-arg]
    b = unjudged_bounds(QRELS, RUN, ["P@2"])
    targets = parse_targets(table)
    means = {b.judged.run_name: {t.measure: b.judged.mean(t.measure) for t in targets}}
    return unjudged_checks([b], targets, check_targets(targets, means))


@pytest.mark.parametrize(("threshold", "passed", "note"), [
    (0.5, True, ""),                                             # passes at both ends
    (0.6, False, "this failure depends on unjudged documents"),  # 0.5 fails, 0.75 passes
    (0.75, False, "this failure depends on unjudged documents"),  # the upper end exactly
    (0.76, False, ""),                                           # fails at both ends
])
def test_the_note_at_the_interval_s_boundaries(threshold: float, passed: bool,
                                               note: str) -> None:
    (c,) = checks_for({"P@2": threshold})
    assert (c.low, c.high, c.value) == (0.5, 0.75, 0.5)
    assert c.interval_text == "[0.5000, 0.7500]"
    assert c.passed is passed and c.note == note and c.depends is bool(note)
    assert c.dependent_queries == {"q1": (0.5, 1.0)} and c.dependent == 1
    assert c.unjudged == 1 and c.queries == 2


def test_a_pass_that_depends_and_a_target_below_the_mean() -> None:
    (c,) = checks_for({"P@2": "<= 0.6"})  # 0.5 passes, 0.75 does not
    assert c.passed and c.note == "this pass depends on unjudged documents"


@pytest.mark.parametrize(("passed", "depends", "policy", "gate"), [
    (True, False, "warn", True), (True, True, "warn", True), (False, True, "warn", False),
    (False, False, "warn", False),
    (True, False, "fail", True), (True, True, "fail", False), (False, True, "fail", False),
    (False, False, "fail", False),
    (True, True, "off", True), (False, True, "off", False),
])
def test_gate_passes_boundary_table(passed: bool, depends: bool, policy: str,
                                    gate: bool) -> None:
    assert gate_passes(passed, depends, policy) is gate


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ConfigError, match="unjudged must be one of warn, fail, off, got 'strict'"):
        gate_passes(True, True, "strict")


def test_depends_compares_the_shown_values() -> None:
    # 0.849996 is shown as 0.8500: it passes >= 0.85 like 0.86 does
    assert not decision_flips(0.849996, 0.86, ">=", 0.85)
    assert decision_flips(0.8499, 0.86, ">=", 0.85)


def test_a_target_on_the_interval_s_lower_bound_gets_no_note() -> None:
    b = unjudged_bounds(QRELS, RUN, ["P@2"])
    targets = parse_targets({"P@2": {"min": 0.6, "on": "ci_lower"}})
    run = b.judged.run_name
    checks = check_targets(targets, {run: {targets[0].measure: 0.5}},
                           lower={run: {targets[0].measure: 0.4}})
    (c,) = unjudged_checks([b], targets, checks)
    assert (c.low, c.high, c.note, c.on) == (0.5, 0.75, "", "ci_lower")
