"""Hostile-input catalogue, area "ties": ``--ties``, ``ties = ...`` in a targets file, and
the tie-exposure lines of ``check`` (see ``tests/hostile.py`` and :mod:`ragreport.core.ties`).

A refusal exits 2 with one stderr line saying what was received; ``--ties average`` is never
an approximation (a measure without an exact expectation is refused, streamed or not); the
warning lines print user text inert.
"""

from __future__ import annotations

import pytest
from hostile import QRELS, RUN, Case, CaseResult, run_case

FILES = {"qrels.txt": QRELS, "run.txt": RUN}
EVAL = ["evaluate", "qrels.txt", "run.txt"]

# q1: three documents tied, "a" relevant (trec_eval ranks it last: c, b, a); q2: "b" relevant
# ranked second behind "d" (no tie that matters): RR in [(1/3 + 1/2)/2, (1 + 1/2)/2]
TIED_QRELS = "q1 0 a 1\nq2 0 b 1\n"
TIED_RUN = ("q1 Q0 a 1 1.0 {tag}\nq1 Q0 b 2 1.0 {tag}\nq1 Q0 c 3 1.0 {tag}\n"
            "q2 Q0 d 1 2.0 {tag}\nq2 Q0 b 2 1.0 {tag}\n")
TIED = {"qrels.txt": TIED_QRELS, "run.txt": TIED_RUN.format(tag="x")}
CHECK = ["check", "qrels.txt", "run.txt", "--no-stats", "--jobs", "1", "--targets", "t.toml"]
NO_EXACT = r"ties='average' has no exact expected value for {}"


def _no_workflow_command(result: CaseResult) -> None:
    assert not any(line.lstrip().startswith("::") for line in result.stdout.splitlines())
    assert "\x1b" not in result.stdout


def _no_warning(result: CaseResult) -> None:
    assert "WARNING" not in result.stdout and "depends on tie order" not in result.stdout
    assert "Tie exposure" in result.stdout  # the counts are shown all the same


CASES = [
    # --- the option itself -----------------------------------------------------------------
    Case("ties-unknown", [*EVAL, "--ties", "avg"], FILES,
         stderr=r"argument --ties: invalid choice: 'avg' \(choose from 'trec_eval', 'average'\)"),
    Case("ties-upper", [*EVAL, "--ties", "AVERAGE"], FILES, stderr=r"invalid choice: 'AVERAGE'"),
    Case("ties-empty", [*EVAL, "--ties="], FILES, stderr=r"invalid choice: ''"),
    Case("ties-missing-value", [*EVAL, "--ties"], FILES, stderr=r"expected one argument"),
    Case("ties-given-order", [*EVAL, "--ties", "average", "--order", "given"], FILES,
         stderr=r"ties='average' averages over the orders of tied scores; with order='given'"),
    Case("ties-average-doc-map", [*EVAL, "--ties", "average", "--doc-map", "map.tsv"],
         {**TIED, "map.tsv": "a\tA\nb\tB\nc\tC\nd\tD\n"},
         stderr=r"ties='average' is not supported with doc_map"),
    # --- measures without an exact expectation: refused, never approximated -----------------
    Case("ties-average-ERR", [*EVAL, "--ties", "average", "-m", "ERR@10"], FILES,
         stderr=NO_EXACT.format("ERR@10")),
    Case("ties-average-Bpref", [*EVAL, "--ties", "average", "-m", "bpref"], FILES,
         stderr=NO_EXACT.format("Bpref")),
    Case("ties-average-IPrec", [*EVAL, "--ties", "average", "-m", "IPrec@0.5"], FILES,
         stderr=NO_EXACT.format(r"IPrec@0\.5")),
    Case("ties-average-stream-ERR", [*EVAL, "--ties", "average", "--stream", "-m", "ERR@5"],
         FILES, stderr=NO_EXACT.format("ERR@5")),
    Case("ties-average-check-target-ERR",
         [*CHECK, "--ties", "average"], {**TIED, "t.toml": '"ERR@5" = 0.5\n'},
         stderr=NO_EXACT.format("ERR@5")),
    # --- the average, file and stream alike --------------------------------------------------
    Case("ties-average-RR", [*EVAL, "--ties", "average", "-m", "RR"], TIED, exit=0,
         stdout=r"RR\s+0\.5556\b"),
    Case("ties-average-RR-stream", [*EVAL, "--ties", "average", "--stream", "-m", "RR"], TIED,
         exit=0, stdout=r"RR\s+0\.5556\b"),
    Case("ties-trec-RR", [*EVAL, "-m", "RR"], TIED, exit=0, stdout=r"RR\s+0\.4167\b"),
    Case("ties-average-trec-format", [*EVAL, "--ties", "average", "-m", "RR", "--format",
                                      "trec"], TIED, exit=0,
         stdout=r"recip_rank\s+\tall\t0\.5556"),
    Case("ties-average-max-depth", [*EVAL, "--ties", "average", "-M", "2", "-m", "P@2"], TIED,
         exit=0, stdout=r"P@2\s+0\.4167\b"),  # q1: every order of a, b, c, then the top 2
    # (E = 1/3; trec_eval's cut keeps c, b, 0): (1/3 + 1/2) / 2
    # --- the targets file ----------------------------------------------------------------------
    Case("ties-toml-unknown", CHECK, {**TIED, "t.toml": '"RR" = 0.5\nties = "avg"\n'},
         stderr=r't\.toml: ties must be "trec_eval" or "average", got \'avg\''),
    Case("ties-toml-bool", CHECK, {**TIED, "t.toml": '"RR" = 0.5\nties = true\n'},
         stderr=r"ties must be \"trec_eval\" or \"average\", got True"),
    # the command line wins over the file: trec_eval's 0.4167 fails the target, where the
    # file's average (0.5556) would pass it
    Case("ties-toml-flag-wins", [*CHECK, "--ties", "trec_eval"],
         {**TIED, "t.toml": '"RR" = 0.5\nties = "average"\n'}, exit=1,
         stdout=r"RR\s+>= 0\.5\s+0\.4167 FAIL"),
    Case("ties-toml-applies", CHECK, {**TIED, "t.toml": '"RR" = 0.5\nties = "average"\n'},
         exit=0, stdout=r"RR\s+>= 0\.5\s+0\.5556 PASS"),
    Case("ties-toml-twice", CHECK,
         {**TIED, "t.toml": 'ties = "average"\n[targets]\n"RR" = 0.5\nties = "trec_eval"\n'},
         stderr=r"ties is set twice"),
    Case("ties-toml-average-passes", CHECK,
         {**TIED, "t.toml": '"RR" = 0.5\nties = "average"\n'}, exit=0,
         stdout=r"all targets passed"),
    # --- the warning lines ----------------------------------------------------------------------
    Case("ties-warning-failure", CHECK, {**TIED, "t.toml": '"RR" = 0.5\n'}, exit=1,
         stdout=r"WARNING RR >= 0\.5 \(run 'x'\): this failure depends on tie order: 1 of 2 "
                r"queries depend on the tie order; mean over all tie orders in "
                r"\[0\.4167, 0\.7500\]"),
    Case("ties-warning-pass", CHECK, {**TIED, "t.toml": '"RR" = "<= 0.5"\n'}, exit=0,
         stdout=r"WARNING RR <= 0\.5 \(run 'x'\): this pass depends on tie order"),
    Case("ties-no-warning", CHECK, {**TIED, "t.toml": '"RR" = 0.4\n'}, exit=0,
         check=lambda r: _no_warning(r)),
    Case("ties-warning-hostile-run-name", CHECK,
         {"qrels.txt": TIED_QRELS, "run.txt": TIED_RUN.format(tag="::error::pwned\x1b[31m"),
          "t.toml": '"RR" = 0.5\n'}, exit=1,
         stdout=r"WARNING RR >= 0\.5 \(run '", check=_no_workflow_command),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]
