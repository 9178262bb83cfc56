"""Gates that use the statistics: targets on the CI lower bound, and --max-drop."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragreport import evaluate
from ragreport.cli.app import EXIT_OK, EXIT_TARGET_FAILED, main
from ragreport.errors import ConfigError
from ragreport.report import build_report
from ragreport.report.terminal import render_failures, render_terminal
from ragreport.targets import parse_targets


def _data(tmp_path: Path, n: int, worse: int) -> tuple[str, str, str]:
    """n queries; run A finds the relevant doc at rank 1 everywhere, run B misses it
    (rank 2) on the first ``worse`` queries."""
    qrels = tmp_path / "qrels.txt"
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    qrels.write_text("".join(f"q{i} 0 rel{i} 1\n" for i in range(n)))
    a.write_text("".join(f"q{i} Q0 rel{i} 1 2.0 A\nq{i} Q0 x{i} 2 1.0 A\n" for i in range(n)))
    b.write_text("".join(
        (f"q{i} Q0 x{i} 1 2.0 B\nq{i} Q0 rel{i} 2 1.0 B\n" if i < worse
         else f"q{i} Q0 rel{i} 1 2.0 B\nq{i} Q0 x{i} 2 1.0 B\n") for i in range(n)))
    return str(qrels), str(a), str(b)


def _targets(tmp_path: Path, text: str) -> str:
    p = tmp_path / "targets.toml"
    p.write_text(text)
    return str(p)


def test_target_on_ci_lower_bound(tmp_path: Path) -> None:
    qrels, _a, b = _data(tmp_path, 40, 4)  # B: P@1 = 0.9, its CI lower bound is below 0.85
    res = evaluate(qrels, b, ["P@1"])
    (on_mean,) = parse_targets({"P@1": 0.85})
    (on_ci,) = parse_targets({"P@1": {"min": 0.85, "on": "ci_lower"}})
    rep = build_report([res], [on_mean, on_ci])
    mean_cell, ci_cell = rep.targets[0].cells[0], rep.targets[1].cells[0]
    assert mean_cell.passed and mean_cell.shown == "0.9000"
    assert not ci_cell.passed and ci_cell.on == "ci_lower"
    assert ci_cell.value < 0.85 < ci_cell.mean
    assert ci_cell.value == pytest.approx(rep.summary[0].cells[0].ci_lower)


@pytest.mark.parametrize(("table", "message"), [
    ({"min": 0.5, "on": "median"}, "'on' must be \"mean\", \"ci_lower\" or \"ppi_lower\""),
    ({"min": 0.5, "gt": 0.4}, "give exactly one of"),
    ({"at_least": 0.5}, "unknown key 'at_least'"),
    ({"min": "high"}, "min must be a number"),
])
def test_bad_table_targets(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_targets({"R@5": table}, "t.toml")


@pytest.mark.parametrize(("n", "worse", "max_drop", "code"), [
    (60, 20, 0.02, EXIT_TARGET_FAILED),  # drop 0.3333, significant: fails
    (60, 20, 0.5, EXIT_OK),              # drop within the allowed 0.5
    (60, 1, 0.01, EXIT_TARGET_FAILED),   # drop 0.0167, interval holds -0.01: inconclusive
    (4, 2, 0.02, EXIT_TARGET_FAILED),    # drop 0.5 but 4 queries: inconclusive
    (60, 0, 0.01, EXIT_OK),              # no drop at all: the interval [0, 0] lies above
])
def test_max_drop_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int,
                             worse: int, max_drop: float, code: int) -> None:
    qrels, a, b = _data(tmp_path, n, worse)
    targets = _targets(tmp_path, '"P@1" = 0.0\n')
    got = main(["check", qrels, a, b, "--targets", targets, "--baseline", "A",
                "--max-drop", str(max_drop), "--resamples", "2000"])
    assert got == code
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.startswith("FAILED drop")]
    if code == EXIT_TARGET_FAILED and worse == 20:
        (line,) = failed
        assert "P@1: run 'B' is 0.3333 below baseline 'A'" in line
        # p = 1/2001 shown as every p-value is (ragreport.present.p_clause)
        assert "CI of the delta [" in line and "p < 0.001 " in line and "Holm" in line
    elif code == EXIT_TARGET_FAILED:
        (line,) = failed
        assert ": inconclusive: " in line and " would decide a " in line
        assert line.endswith("(on_inconclusive fail)")
    else:
        assert not failed


@pytest.mark.parametrize(("where", "code"), [
    ("default", EXIT_TARGET_FAILED), ("flag", EXIT_OK), ("targets", EXIT_OK),
    ("config", EXIT_OK), ("flag-fail-over-targets", EXIT_TARGET_FAILED),
])
def test_an_inconclusive_drop_fails_unless_the_policy_says_pass(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        where: str, code: int) -> None:
    """60 queries, one worse: the delta (-0.0167) has an interval holding -0.01, which fails
    by default. The policy comes from --on-inconclusive, the targets file or the
    configuration file (the command line first)."""
    monkeypatch.chdir(tmp_path)
    qrels, a, b = _data(tmp_path, 60, 1)
    policy = '\non_inconclusive = "pass"\n' if where in ("targets", "flag-fail-over-targets") \
        else ""
    targets = _targets(tmp_path, '"P@1" = 0.0' + policy)
    if where == "config":
        (tmp_path / "ragreport.toml").write_text('on_inconclusive = "pass"\n', "utf-8")
    argv = ["check", qrels, a, b, "--targets", targets, "--baseline", "A", "--max-drop",
            "0.01", "--resamples", "2000"]
    argv += {"flag": ["--on-inconclusive", "pass"],
             "flag-fail-over-targets": ["--on-inconclusive", "fail"]}.get(where, [])
    assert main(argv) == code
    out = capsys.readouterr().out
    mark = "FAIL " if code == EXIT_TARGET_FAILED else "?    "
    assert f"{mark}P@1: run 'B' is 0.0167 below baseline 'A'" in out
    assert "inconclusive: the interval holds -0.01; about " in out
    failed = [line for line in out.splitlines() if line.startswith("FAILED drop")]
    assert len(failed) == (code == EXIT_TARGET_FAILED)
    if failed:
        assert failed[0].endswith("(on_inconclusive fail)")


def test_a_bad_on_inconclusive_is_an_error(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, b = _data(tmp_path, 10, 1)
    targets = _targets(tmp_path, '"P@1" = 0.0\non_inconclusive = "maybe"\n')
    assert main(["check", qrels, a, b, "--targets", targets, "--max-drop", "0.01"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'on_inconclusive must be "fail" or "pass", got \'maybe\'' in err[0]
    assert main(["check", qrels, a, b, "--max-drop", "0.01", "--on-inconclusive", "x"]) == 2
    assert "invalid choice: 'x'" in capsys.readouterr().err


def test_significance_is_reproducible_with_the_seed(tmp_path: Path) -> None:
    qrels, a, b = _data(tmp_path, 30, 8)  # 8 sign flips: p = 2 / 2**8
    ra, rb = evaluate(qrels, a, ["P@1"]), evaluate(qrels, b, ["P@1"])
    one = build_report([ra, rb], resamples=3000, seed=4)
    two = build_report([ra, rb], resamples=3000, seed=4)
    c1, c2 = one.summary[0].cells[1], two.summary[0].cells[1]
    assert (c1.ci_lower, c1.ci_upper, c1.p_value) == (c2.ci_lower, c2.ci_upper, c2.p_value)
    assert c1.p_value is not None and c1.p_value < 0.05 and c1.significant
    assert one.stats is not None and "Holm" in one.stats.describe()


@pytest.mark.parametrize(("option", "value", "says"), [
    ("alpha", -1.0, "alpha must be a number > 0 and < 1, got -1.0"),
    ("alpha", float("nan"), "alpha must be a number > 0 and < 1, got nan"),
    ("alpha", True, "alpha must be a number > 0 and < 1, got True"),
    ("ci_level", 1.0, "ci_level must be a number > 0 and < 1, got 1.0"),
    ("max_drop", float("nan"), "max_drop must be a number >= 0 and < 1, got nan"),
    ("max_drop", 1.0, "max_drop must be a number >= 0 and < 1, got 1.0"),
    ("max_drop", -0.5, "max_drop must be a number >= 0 and < 1, got -0.5"),
    ("resamples", 0, "resamples must be an integer from 1 to 1000000, got 0"),
    ("resamples", 10**8, "resamples must be an integer from 1 to 1000000, got 100000000"),
    ("curve_resamples", 2.0, "curve_resamples must be an integer from 1 to 1000000, got 2.0"),
    ("seed", -1, "seed must be an integer from 0 to 2**63 - 1, got -1"),
    ("seed", 2**63, "seed must be an integer from 0 to 2**63 - 1"),
])
def test_build_report_refuses_options_that_switch_checks_off(option: str, value: object,
                                                             says: str) -> None:
    """Validated before any work, in the Python API as on the command line."""
    import re

    from ragreport.errors import RagReportError

    r = evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["RR"], name="r")
    with pytest.raises(RagReportError, match=re.escape(says)):
        build_report([r], **{option: value})  # type: ignore[arg-type]


def test_cli_and_api_resample_bounds_agree() -> None:
    from ragreport import settings
    from ragreport.cli import args as cliargs
    from ragreport.errors import RagReportError

    assert cliargs.MAX_RESAMPLES is settings.MAX_RESAMPLES  # one definition
    settings.StatsSettings(resamples=settings.MAX_RESAMPLES)
    with pytest.raises(RagReportError, match="resamples must be an integer from 1 to"):
        settings.StatsSettings(resamples=settings.MAX_RESAMPLES + 1)


def test_an_inconclusive_drop_says_how_many_queries_would_decide_it() -> None:
    """A drop larger than --max-drop whose interval holds -max_drop is inconclusive, not a
    pass: the line says so and about how many more queries would decide it (from the
    observed spread of the per-query deltas); it fails only under on_inconclusive="fail"."""
    import math

    from ragreport.examples import example_files

    f = example_files()
    results = [evaluate(f.qrels, p, ["P@3"]) for p in f.runs]
    for policy in ("pass", "fail"):
        rep = build_report(results, parse_targets({"P@3": 0.0}), max_drop=0.0001,
                           resamples=500, generated_at="2026-01-01T00:00:00Z",
                           on_inconclusive=policy)
        [check] = rep.drops
        assert check.delta < 0 and not check.significant and check.outcome == "inconclusive"
        assert check.failed == (policy == "fail") and rep.all_passed == (policy == "pass")
        d = results[1].values("P@3") - results[0].values("P@3")
        need = math.ceil((1.959964 * d.std(ddof=1) / abs(d.mean() + 0.0001)) ** 2)
        assert check.queries_to_decide == need and check.more_queries == need - len(d)
        assert check.message.endswith(f"allowed drop 0.0001: inconclusive: the interval holds "
                                      f"-0.0001; about {need - len(d)} more queries would "
                                      "decide a 0.0001 drop")


def test_a_target_on_the_interval_has_three_outcomes() -> None:
    """``on = "ci_lower"``: pass when the whole interval clears the threshold, fail when none
    of it does, inconclusive otherwise (failing unless on_inconclusive = "pass"); every view
    says which."""
    from ragreport.examples import example_files

    f = example_files()
    results = [evaluate(f.qrels, p, ["P@3"]) for p in f.runs]
    cis = {}
    for policy in ("fail", "pass"):
        rep = build_report(results[:1], parse_targets({"P@3": {"min": 0.55, "on": "ci_lower"}}),
                           resamples=1000, generated_at="2026-01-01T00:00:00Z",
                           on_inconclusive=policy)
        [[cell]] = [t.cells for t in rep.targets]
        [row] = [s for s in rep.summary if s.measure == "P@3"]
        cis[policy] = (row.cells[0].ci_lower, row.cells[0].ci_upper)
        assert cis[policy][0] < 0.55 < cis[policy][1]  # the interval holds the threshold
        assert cell.outcome == "inconclusive" and cell.passed == (policy == "pass")
        assert rep.all_passed == (policy == "pass")
        md = rep.to_markdown()
        assert ("❔ inconclusive" if policy == "pass" else "❌ inconclusive") in md
        js = rep.to_json()
        assert '"outcome": "inconclusive"' in js
        html = rep.to_html()
        assert 'data-outcome="inconclusive"' in html
        assert ("? inconclusive" in html) == (policy == "pass")
        assert cell.shown in render_terminal(rep)
        assert f"{'PASS' if policy == 'pass' else 'FAIL'} (inconclusive)" in render_terminal(rep)
        failed = render_failures(rep)
        assert ("inconclusive: the interval holds the threshold (on_inconclusive fail)"
                in failed) == (policy == "fail")
    for threshold, want in ((0.3, "pass"), (0.9, "fail")):
        rep = build_report(results[:1],
                           parse_targets({"P@3": {"min": threshold, "on": "ci_lower"}}),
                           resamples=1000, generated_at="2026-01-01T00:00:00Z")
        [[cell]] = [t.cells for t in rep.targets]
        assert cell.outcome == want and cell.passed == (want == "pass")


def test_a_slice_target_on_the_interval_follows_the_policy() -> None:
    """The slices' targets on the interval have the same three outcomes and the same policy
    as the whole run's (it used to be the lower-bound rule only)."""
    from ragreport.examples import example_files

    f = example_files()
    r = evaluate(f.qrels, f.runs[0], ["P@3"])
    slices = {q: ["all"] for q in r.query_ids}
    for policy in ("fail", "pass"):
        rep = build_report([r], slices=slices,
                           slice_targets={"all": parse_targets({"P@3": {"min": 0.55,
                                                                         "on": "ci_lower"}})},
                           resamples=1000, on_inconclusive=policy,
                           generated_at="2026-01-01T00:00:00Z")
        assert rep.slices is not None
        [[cell]] = [t.cells for s in rep.slices.slices for t in s.targets]
        assert cell.outcome == "inconclusive" and cell.passed == (policy == "pass")
        assert '"outcome": "inconclusive"' in rep.to_json()
