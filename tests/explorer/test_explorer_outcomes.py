"""The explorer's summary says when a target on the interval cannot be decided (issue 27 §1):
the same outcome the report gives, for the same interval."""

from __future__ import annotations

import ragreport
from ragreport.examples import example_files
from ragreport.explorer.state import ExplorerState
from ragreport.targets import parse_targets


def test_a_target_on_the_interval_is_inconclusive_as_in_the_report() -> None:
    f = example_files()
    results = [ragreport.evaluate(f.qrels, p) for p in f.runs]
    for threshold, want in ((0.3, "pass"), (0.55, "inconclusive"), (0.9, "fail")):
        targets = parse_targets({"P@3": {"min": threshold, "on": "ci_lower"}})
        s = ExplorerState(results[:1], targets=targets)
        [row] = s.summary(force=True)["targets"]
        report = ragreport.build_report(results[:1], targets)
        [[cell]] = [t.cells for t in report.targets]
        assert row["outcome"] == cell.outcome == want
        assert row["pass"] is cell.passed is (want == "pass")
        assert row["value"] == cell.value
    plain = ExplorerState(results[:1], targets=parse_targets({"P@3": 0.5}))
    assert plain.summary(force=True)["targets"][0]["outcome"] is None
