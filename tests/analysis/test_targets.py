"""Targets: the pass/fail boundary table, parsing, sources, and ``ragreport check`` exit codes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragreport.cli.app import EXIT_BAD_INPUT, EXIT_OK, EXIT_TARGET_FAILED, main
from ragreport.errors import ConfigError
from ragreport.io.targets import load_settings, load_slice_targets, load_targets
from ragreport.measures import Measure
from ragreport.targets import (
    DEFAULT_TARGETS,
    check_targets,
    default_targets,
    parse_targets,
    passes,
    shown,
)

# value, operator, threshold, expected: the decision uses the value as shown (4 decimals)
BOUNDARY = [
    (0.85, ">=", 0.85, True),
    (0.85, ">", 0.85, False),
    (0.849949, ">=", 0.85, False),   # shown 0.8499
    (0.84995, ">=", 0.85, False),    # binary value is just below ...95: shown 0.8499
    (0.849951, ">=", 0.85, True),    # shown 0.8500
    (0.849951, ">", 0.85, False),    # shown 0.8500, not above
    (0.85004, ">", 0.85, False),     # shown 0.8500
    (0.85005, ">", 0.85, False),     # binary value is just below ...05: shown 0.8500
    (0.85006, ">", 0.85, True),      # shown 0.8501
    (0.0, ">=", 0.0, True),
    (0.0, ">", 0.0, False),
    (1.0, ">=", 1.0, True),
    (1.0, ">", 1.0, False),
    (0.8, "<", 0.8, False),
    (0.79996, "<", 0.8, False),     # shown 0.8000
    (0.79994, "<", 0.8, True),      # shown 0.7999
    (0.8, "<=", 0.8, True),
]


@pytest.mark.parametrize(("value", "op", "threshold", "expected"), BOUNDARY)
def test_boundary_table(value: float, op: str, threshold: float, expected: bool) -> None:
    assert passes(value, op, threshold) is expected
    # the decision agrees with what a reader sees
    assert passes(float(shown(value)), op, threshold) is expected


def test_unknown_operator() -> None:
    with pytest.raises(ConfigError, match="operator must be one of"):
        passes(0.5, "==", 0.5)


def test_defaults_are_the_seed_tutorials_typical_targets() -> None:
    got = {str(t.measure): (t.op, t.threshold) for t in default_targets()}
    assert got == {"R@5": (">", 0.85), "P@3": (">", 0.80), "F1@5": (">", 0.75),
                   "RR": (">", 0.8), "nDCG@5": (">", 0.85)}
    assert len(DEFAULT_TARGETS) == 5


@pytest.mark.parametrize(("spec", "op", "threshold"), [
    (0.6, ">=", 0.6), (1, ">=", 1.0), ("> 0.85", ">", 0.85), (">=0.5", ">=", 0.5),
    ("0.7", ">=", 0.7), (" < 0.2 ", "<", 0.2), ("<= .3", "<=", 0.3),
])
def test_spec_forms(spec: object, op: str, threshold: float) -> None:
    (t,) = parse_targets({"nDCG@10": spec}, "t.toml")
    assert (t.measure, t.op, t.threshold) == (Measure("nDCG", 10), op, threshold)


@pytest.mark.parametrize(("table", "message"), [
    ({"nDCG@x": 0.5}, r"t.toml: target 'nDCG@x': cutoff must be a whole number"),
    ({"foo@5": 0.5}, r"t.toml: target 'foo@5': unknown measure"),
    ({"R@5": "about 0.8"}, r"t.toml: target 'R@5': expected a number or a string"),
    ({"R@5": True}, r"t.toml: target 'R@5': expected a number"),
    ({"R@5": [0.5]}, r"t.toml: target 'R@5': expected a number or a string"),
    ({"R@5": 1.5}, r"t.toml: target 'R@5': threshold must be between 0 and 1, got 1.5"),
    ({"R@5": 0.5, "recall@5": 0.6}, r"targets 'R@5' and 'recall@5' name the same measure"),
    # thresholds: finite numbers only (NaN would switch the check off)
    ({"R@5": float("nan")}, r"t.toml: target 'R@5': threshold must be a finite number, got nan"),
    ({"R@5": float("inf")}, r"target 'R@5': threshold must be a finite number, got inf"),
    ({"hits@3": float("nan")}, r"target 'hits@3': threshold must be a finite number, got nan"),
    ({"hits@3": float("-inf")}, r"target 'hits@3': threshold must be a finite number, got -inf"),
    ({"hits@3": 10**400}, r"target 'hits@3': threshold must be a finite number, got 1000"),
    ({"hits@3": "> 1e400"}, r"target 'hits@3': threshold must be a finite number, got 1e400"),
    ({"R@5": "> nan"}, r"target 'R@5': expected a number or a string such as '> 0.85'"),
    ({"R@5": "> inf"}, r"target 'R@5': expected a number or a string such as '> 0.85'"),
    ({"R@5": {"min": float("nan")}}, r"target 'R@5': threshold must be a finite number"),
    ({"R@5": {"min": True}}, r"target 'R@5': min must be a number, got True"),
    ({"R@5": "x" * 500}, r"got 'x{59}…'$"),
    # measures: every name the CLI refuses is a configuration error naming the key
    ({"P@0": 0.5}, r"t.toml: target 'P@0': cutoff must be between 1 and 2\*\*53, got 0"),
    ({"P@10^23": 0.5}, r"target 'P@10\^23': cutoff must be a whole number between 1 and 2"),
    ({"P": 0.5}, r"target 'P': expected one measure, 'P' names 9 \(P@5, P@10, P@15, \.\.\.\)"),
    ({"recall": 0.5}, r"target 'recall': 'recall' is ambiguous without a cutoff"),
    # a count has no confidence interval
    ({"hits@3": {"min": 1, "on": "ci_lower"}},
     r"target 'hits@3': on = \"ci_lower\" needs a confidence interval"),
    # graded RBP is not bounded by 1 (a grade-2 document at rank 1 gives 0.4 at p = 0.8)
    ({"RBP(p=0.8)": {"min": 0.5, "on": "ci_lower"}},
     r"needs a confidence interval.*RBP\(p=0.8\), whose values are not bounded by 1"),
    ({"RBP(p=0.8,rel=1)": 1.5}, r"threshold must be between 0 and 1, got 1.5"),
])
def test_bad_targets(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_targets(table, "t.toml")


@pytest.mark.parametrize(("key", "spec", "expected"), [
    ("nDCG", 0.5, "nDCG >= 0.5"),
    ("P(rel=2)@5", 0.3, "P(rel=2)@5 >= 0.3"),
    ("nDCG(gain=exp)@10", "> 0.2", "nDCG(gain=exp)@10 > 0.2"),
    ("AP@5", 0.1, "AP@5 >= 0.1"),
    ("hits@3", 2, "Hits@3 >= 2"),          # a count: any finite threshold
    ("hits", "< 7.5", "Hits < 7.5"),
    ("map_cut_5", 0.1, "AP@5 >= 0.1"),
    ("NumRet", {"min": 3}, "NumRet >= 3"),
    ("RBP(p=0.8)", 1.5, "RBP(p=0.8) >= 1.5"),          # graded: not bounded by 1
    ("RBP(p=0.8,rel=1)", {"min": 0.5, "on": "ci_lower"},  # binary: in [0, 1], has a CI
     "RBP(p=0.8,rel=1) >= 0.5 (CI lower bound)"),
])
def test_any_measure_is_a_target(key: str, spec: object, expected: str) -> None:
    (t,) = parse_targets({key: spec}, "t.toml")
    assert str(t) == expected


@pytest.mark.parametrize("toml", ['tool = "x"\n', '[tool]\nragreport = 3\n',
                                  '[tool.ragreport]\ntargets = 3\n'])
def test_pyproject_odd_tool_tables(tmp_path: Path, toml: str) -> None:
    (tmp_path / "pyproject.toml").write_text(toml)
    if "targets = 3" in toml:
        with pytest.raises(ConfigError, match=r"pyproject.toml \[tool.ragreport.targets\]: "
                                               r"targets must be a table"):
            load_targets(cwd=tmp_path)
    elif "ragreport = 3" in toml:  # [tool.ragreport] that is not a table: never ignored
        for load in (load_targets, load_slice_targets, load_settings):
            with pytest.raises(ConfigError, match=r"pyproject.toml: tool.ragreport must be a "
                                                   r"table \(\[tool.ragreport\] with settings, "
                                                   r"\[tool.ragreport.targets\] with targets\), "
                                                   r"got a number"):
                load(cwd=tmp_path)
    else:  # no [tool.ragreport.targets] table: the defaults
        assert len(load_targets(cwd=tmp_path)) == 5
    other = tmp_path / "gate.toml"
    other.write_text(toml)
    with pytest.raises(ConfigError, match=r"gate.toml"):
        load_targets(other)


def test_sources_in_order(tmp_path: Path) -> None:
    assert [str(t.measure) for t in load_targets(cwd=tmp_path)] == list(DEFAULT_TARGETS)
    (tmp_path / "ragreport.toml").write_text('[targets]\n"P@1" = 0.5\n')
    assert [str(t) for t in load_targets(cwd=tmp_path)] == ["P@1 >= 0.5"]
    (tmp_path / "pyproject.toml").write_text('[tool.ragreport.targets]\n"RR" = "> 0.7"\n')
    assert [str(t) for t in load_targets(cwd=tmp_path)] == ["RR > 0.7"]
    other = tmp_path / "gate.toml"
    other.write_text('"nDCG@10" = 0.6\n')
    assert [str(t) for t in load_targets(other, cwd=tmp_path)] == ["nDCG@10 >= 0.6"]


@pytest.mark.parametrize("layout", ["top", "targets", "tool"])
def test_a_found_ragreport_toml_reads_every_layout_a_given_file_does(
        tmp_path: Path, layout: str) -> None:
    """``./ragreport.toml`` found in the folder is read like the same file given with
    ``--targets``: the table at the top level, under ``[targets]`` or under
    ``[tool.ragreport.targets]`` (the README shows the last; it was read as a measure 'tool'),
    with its slice targets."""
    head = {"top": "", "targets": "[targets]\n", "tool": "[tool.ragreport.targets]\n"}[layout]
    sub = {"top": "slices", "targets": "targets.slices", "tool": "tool.ragreport.targets.slices"}
    text = f'{head}"nDCG@10" = 0.5\n[{sub[layout]}.hard]\n"R@5" = 0.4\n'
    (tmp_path / "ragreport.toml").write_text(text)
    found = [str(t) for t in load_targets(cwd=tmp_path)]
    assert found == [str(t) for t in load_targets(tmp_path / "ragreport.toml")]
    assert found == ["nDCG@10 >= 0.5"]
    from ragreport.io.targets import load_slice_targets

    assert {k: [str(t) for t in v] for k, v in load_slice_targets(cwd=tmp_path).items()} == {
        "hard": ["R@5 >= 0.4"]}


def test_pyproject_without_section_falls_through(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert len(load_targets(cwd=tmp_path)) == 5


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('"R@5" = \n')
    with pytest.raises(ConfigError, match=r"bad.toml: invalid TOML"):
        load_targets(bad)


def test_check_targets_every_run() -> None:
    (t,) = parse_targets({"R@5": "> 0.5"})
    checks = check_targets([t], {"a": {t.measure: 0.50004}, "b": {t.measure: 0.6}})
    assert [(c.run, c.shown, c.passed) for c in checks] == [("a", "0.5000", False),
                                                            ("b", "0.6000", True)]
    assert checks[1].margin == pytest.approx(0.1)


# ---- ragreport check: exit codes ------------------------------------------------------------

def _write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.fixture()
def tiny(tmp_path: Path) -> tuple[str, str]:
    # q1: relevant d1 at rank 1 -> P@1 = 1 ; q2: relevant d5 at rank 2 -> P@1 = 0 ; mean 0.5
    qrels = _write(tmp_path, "qrels.txt", "q1 0 d1 1\nq2 0 d5 1\n")
    run = _write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\n"
                                      "q2 Q0 d4 1 2.0 sys\nq2 Q0 d5 2 1.0 sys\n")
    return qrels, run


@pytest.mark.parametrize(("spec", "code"), [
    ('"P@1" = 0.5', EXIT_OK),            # 0.5000 >= 0.5
    ('"P@1" = "> 0.5"', EXIT_TARGET_FAILED),
    ('"P@1" = 0.51', EXIT_TARGET_FAILED),
    ('"RR" = 0.75', EXIT_OK),            # (1 + 1/2) / 2 = 0.75
    ('"P@1" = "bad"', EXIT_BAD_INPUT),
    ('"Q@1" = 0.5', EXIT_BAD_INPUT),
])
def test_check_exit_codes(tmp_path: Path, tiny: tuple[str, str], spec: str, code: int,
                          capsys: pytest.CaptureFixture[str]) -> None:
    targets = _write(tmp_path, "targets.toml", spec + "\n")
    assert main(["check", *tiny, "--targets", targets]) == code
    out, err = capsys.readouterr()
    if code == EXIT_TARGET_FAILED:
        failed = [line for line in out.splitlines() if line.startswith("FAILED")]
        assert len(failed) == 1
        assert failed[0].startswith("FAILED P@1: 0.5000 is not")
        assert failed[0].endswith("(run 'sys')")
    if code == EXIT_BAD_INPUT:
        assert err.count("\n") == 1 and "targets.toml" in err and "Traceback" not in err


def test_check_bad_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = _write(tmp_path, "qrels.txt", "q1 0 d1 one\n")
    run = _write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 sys\n")
    assert main(["check", qrels, run]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err == f"ragreport: error: {qrels}:1: grade 'one' is not a number\n"


def test_check_uses_pyproject_targets(tmp_path: Path, tiny: tuple[str, str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.ragreport.targets]\n"P@1" = 0.5\n')
    assert main(["check", *tiny]) == EXIT_OK
    os.remove(tmp_path / "pyproject.toml")
    assert main(["check", *tiny]) == EXIT_TARGET_FAILED  # the defaults fail on this data
