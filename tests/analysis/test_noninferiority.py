"""Non-inferiority with three outcomes (issue 27 §1): the decision on the interval's ends as
shown, a boundary table; the gate under each policy; how many queries would decide."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragreport.analysis.noninferiority import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    check_on_inconclusive,
    gate_fails,
    outcome,
    queries_to_decide,
)
from ragreport.errors import RagReportError

NAN = float("nan")


@pytest.mark.parametrize(("lower", "upper", "margin", "want"), [
    (-0.01, 0.05, 0.02, PASS),             # above -D
    (-0.0199, 0.0, 0.02, PASS),            # shown -0.0199 > -0.02
    (-0.01996, 0.0, 0.02, INCONCLUSIVE),   # shown -0.0200: on the margin
    (-0.02, 0.0, 0.02, INCONCLUSIVE),      # an end on -D holds it
    (-0.05, 0.01, 0.02, INCONCLUSIVE),     # holds -D
    (-0.05, -0.02, 0.02, INCONCLUSIVE),    # upper end on -D
    (-0.05, -0.02004, 0.02, INCONCLUSIVE),  # shown -0.0200
    (-0.05, -0.02006, 0.02, FAIL),         # shown -0.0201 < -0.02
    (-0.3, -0.2, 0.02, FAIL),              # below -D
    (0.0, 0.0, 0.0, INCONCLUSIVE),         # D = 0: a delta of exactly 0 cannot pass
    (0.0001, 0.01, 0.0, PASS),             # D = 0: better on the whole interval
    (-0.01, -0.0001, 0.0, FAIL),           # D = 0: worse on the whole interval
    (NAN, NAN, 0.02, INCONCLUSIVE),        # no interval
    (-0.01, NAN, 0.02, INCONCLUSIVE),
])
def test_outcome_boundaries(lower: float, upper: float, margin: float, want: str) -> None:
    assert outcome(lower, upper, margin) == want


@pytest.mark.parametrize(("result", "policy", "fails"), [
    (PASS, "pass", False), (FAIL, "pass", True), (INCONCLUSIVE, "pass", False),
    (PASS, "fail", False), (FAIL, "fail", True), (INCONCLUSIVE, "fail", True),
])
def test_the_gate_under_each_policy(result: str, policy: str, fails: bool) -> None:
    assert gate_fails(result, policy) is fails


@pytest.mark.parametrize("bad", ["warn", "", None, True, "FAIL"])
def test_a_policy_that_is_none_of_them_is_refused(bad: object) -> None:
    with pytest.raises(RagReportError, match="on_inconclusive must be one of fail, pass, got"):
        check_on_inconclusive(bad)


def test_queries_to_decide_by_hand() -> None:
    d = np.array([0.2, -0.3, 0.1, -0.2, 0.0, -0.1])  # mean -0.05, sd 0.1871
    sd, gap = d.std(ddof=1), abs(d.mean() + 0.02)
    want = math.ceil((1.959964 * sd / gap) ** 2)
    assert queries_to_decide(d, 0.02, 0.95) == want == 150
    # a narrower interval level needs fewer queries; the margin's side does not matter
    assert queries_to_decide(d, 0.02, 0.80) < want
    assert queries_to_decide(-d - 0.04, 0.02, 0.95) == want
    # undecidable or unknown: on the margin, no spread, one query
    assert queries_to_decide([-0.02, -0.01, -0.03], 0.02, 0.95) is None
    assert queries_to_decide([0.1, 0.1], 0.02, 0.95) is None
    assert queries_to_decide([0.1], 0.02, 0.95) is None
    # never fewer than one more query than observed
    assert queries_to_decide([0.5, 0.6, 0.4], 0.02, 0.95) == 4
