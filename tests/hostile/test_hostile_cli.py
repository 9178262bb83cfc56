"""Hostile-input catalogue: the CLI's exit codes and options, all-or-nothing outputs, signals
and worker processes (issue 12, sections 2 and 3).

Every row runs the real command (``python -m ragreport``) in a fresh folder; see
``tests/hostile.py`` for what every row asserts (exit code, one stderr line, no traceback,
existing files unchanged, no temporary file, no process left). The signal tests at the end
start the command themselves, wait until its worker processes run, and signal it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile import (
    QRELS,
    RUN,
    Case,
    CaseResult,
    fifo,
    leftover_processes,
    run_case,
    trec_means,
)

# the inputs most rows start from; T passes on them (so ``check`` exits 0), F fails
BASE = {"q.txt": QRELS, "r.txt": RUN}
# the same qrels with a query the run does not have (judged: two relevant, one not)
QRELS4 = QRELS + "q4 0 d1 1\nq4 0 d2 1\nq4 0 d3 0\n"
T = '[targets]\n"RR" = 0.1\n'
F = '[targets]\n"RR" = 0.99\n'
DEPENDS = '[targets]\n"P@1" = "<= 0.5"\n'
# a drop check that passes only as trec_eval reads unjudged documents: the baseline ranks an
# unjudged document first in each of 30 queries, the candidate a judged non-relevant one
DROP = {"q.txt": "".join(f"q{i} 0 rel 1\nq{i} 0 non 0\n" for i in range(30)),
        "base.txt": "".join(f"q{i} Q0 u{i} 1 3 base\nq{i} Q0 rel 2 2 base\n" for i in range(30)),
        "cand.txt": "".join(f"q{i} Q0 non 1 3 cand\nq{i} Q0 rel 2 2 cand\n" for i in range(30)),
        "t.toml": '[targets]\n"P@1" = 0.0\n'}
DROP_CHECK = ["check", "q.txt", "base.txt", "cand.txt", "--targets", "t.toml", "--max-drop",
              "0.1", "--resamples", "2000", "--jobs", "1"]
CHECK = ["check", "q.txt", "r.txt", "--targets", "t.toml", "--no-stats", "--jobs", "1"]
WITH_T = {**BASE, "t.toml": T}
# three existing outputs that a failing command must leave alone
OLD = {"a.html": "old html", "b.md": "old markdown", "c.json": '{"old": true}'}
OUTS = ["--html", "a.html", "--markdown", "b.md", "--json", "c.json"]
XFF = b"\xff".decode("utf-8", "surrogateescape")  # one undecodable byte of argv


def _json(res: CaseResult, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((res.tmp / name).read_text(encoding="utf-8"))
    return data


def _is_json(name: str) -> Callable[[CaseResult], None]:
    def check(res: CaseResult) -> None:
        _json(res, name)

    return check


def _symlink(link: str, target: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / link).symlink_to(target)

    return setup


def _write(name: bytes, text: str) -> Callable[[Path], None]:
    """Create a file whose name is raw bytes (not UTF-8)."""

    def setup(tmp: Path) -> None:
        (tmp / os.fsdecode(name)).write_text(text)

    return setup


def _template(body: str | bytes) -> dict[str, str | bytes]:
    return {"tpl/report.html.j2": body}


def _expected_rr() -> float:
    # RR: q1 d1 relevant at 1 -> 1; q2 d5 no, then d8 (tie, id descending) relevant -> 1/2;
    # q3 d6 no, d7 yes -> 1/2
    return (1 + 0.5 + 0.5) / 3


def _check_rr(res: CaseResult) -> None:
    assert trec_means(res.stdout)["recip_rank"] == pytest.approx(_expected_rr(), abs=5e-5)


def _check_generated(when: str) -> Callable[[CaseResult], None]:
    def check(res: CaseResult) -> None:
        assert _json(res, "out.json")["generated_at"] == when

    return check


def _check_symlink_through(res: CaseResult) -> None:
    link = res.tmp / "link.md"
    assert link.is_symlink()
    assert os.readlink(link) == "real/t.md"
    assert (res.tmp / "real" / "t.md").read_text(encoding="utf-8").startswith(
        "<!-- ragreport -->")


def _check_mode(name: str, mode: int) -> Callable[[CaseResult], None]:
    def check(res: CaseResult) -> None:
        assert stat.S_IMODE((res.tmp / name).stat().st_mode) == mode
        assert (res.tmp / name).read_text(encoding="utf-8") != "old"

    return check


def _chmod(name: str, mode: int) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / name).chmod(mode)

    return setup


def _check_stdin_hash(res: CaseResult) -> None:
    doc = _json(res, "out.json")
    inputs = doc["inputs"]
    assert isinstance(inputs, list)
    qrels = inputs[0]
    assert qrels["sha256"] == hashlib.sha256(QRELS.encode()).hexdigest()
    assert qrels["size"] == len(QRELS.encode())


def _is_html(name: str) -> Callable[[CaseResult], None]:
    def check(res: CaseResult) -> None:
        page = (res.tmp / name).read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and "<svg" in page

    return check


def _check_fractional(res: CaseResult) -> None:
    from ragreport import evaluate

    qrels, run = str(res.tmp / "fq.txt"), str(res.tmp / "r.txt")
    kept = evaluate(qrels, run, ["nDCG@3"], fractional_grades=True).mean("nDCG@3")
    assert json.loads(res.stdout)["means"]["nDCG@3"] == kept
    assert kept != evaluate(qrels, run, ["nDCG@3"]).mean("nDCG@3")


def _check_escaped(res: CaseResult) -> None:
    doc = _json(res, "out.json")
    assert doc["title"] == "caf\\xff"
    assert doc["runs"] == ["run\\xff"]


CASES = [
    # ---- exit codes: 1 only for a failed check, 2 for every error -----------------------------
    Case("check-passes", CHECK, WITH_T, exit=0, stdout="all targets passed"),
    Case("check-fails-exit-1", CHECK, {**BASE, "t.toml": F}, exit=1, stdout="RR"),
    Case("queries-typo-is-2-not-1", [*CHECK, "--queries", "qeuries.tsv"], WITH_T,
         stderr=r"^ragreport: error: .*qeuries\.tsv"),
    Case("docs-missing", [*CHECK, "--docs", "nodocs.jsonl"], WITH_T, stderr=r"nodocs\.jsonl"),
    Case("targets-missing", ["check", "q.txt", "r.txt", "--targets", "nope.toml"], BASE,
         stderr=r"nope\.toml"),
    # configuration files that a parser refuses: one line naming the file (and line)
    Case("targets-not-utf8", [*CHECK, *OUTS], {**BASE, **OLD, "t.toml": b'"RR" = 0.1\n# \xff\n'},
         stderr=r"t\.toml: line 2: not UTF-8 text \(byte 13\); TOML files are UTF-8$"),
    Case("targets-5000-digit-integer", CHECK, {**BASE, "t.toml": '"NumRet" = ' + "1" * 5000},
         stderr=r"t\.toml: invalid TOML: a number of more digits than Python reads \(4300\)"),
    Case("pyproject-not-utf8", ["check", "q.txt", "r.txt", "--no-stats"],
         {**BASE, "pyproject.toml": b"[tool.ragreport.targets]\n\xff = 1\n"},
         stderr=r"pyproject\.toml: line 2: not UTF-8 text"),
    # [tool.ragreport] that is not a table: a configuration error, never ignored
    Case("pyproject-tool-ragreport-string", ["check", "q.txt", "r.txt", "--no-stats"],
         {**BASE, "pyproject.toml": '[tool]\nragreport = "x"\n'},
         stderr=r"pyproject\.toml: tool\.ragreport must be a table \(\[tool\.ragreport\] with "
                r"settings, \[tool\.ragreport\.targets\] with targets\), got a string$"),
    Case("pyproject-tool-ragreport-number", ["report", "q.txt", "r.txt", "--no-stats",
                                             "--json", "o.json"],
         {**BASE, "pyproject.toml": '[tool]\nragreport = 5\n'},
         stderr=r"pyproject\.toml: tool\.ragreport must be a table .*got a number$"),
    # more --name than runs: the message names the option
    Case("two-names-one-run-check", [*CHECK, "--name", "a", "--name", "b"], WITH_T,
         stderr=r"--name given 2 times for 1 run: give one --name per run, in the order of "
                r"the runs$"),
    Case("two-names-one-run-evaluate", ["evaluate", "q.txt", "r.txt", "--name", "a", "--name",
                                        "b"], BASE,
         stderr=r"argument --name: given twice: evaluate reads one run, so it takes one name"),
    Case("qrels-missing", ["evaluate", "missing.txt", "r.txt"], BASE, stderr=r"missing\.txt"),
    Case("qrels-is-a-folder", ["evaluate", "d", "r.txt"], {**BASE, "d/x": "x"},
         stderr=r"ragreport: error: d"),
    Case("unknown-option-one-line", ["evaluate", "q.txt", "r.txt", "--nope"], BASE,
         stderr=r"^ragreport: error: unrecognized arguments: --nope"),
    Case("unknown-command", ["evaluat", "q.txt"], BASE, stderr=r"^ragreport: error: .*evaluat"),
    Case("no-command", [], {}, stderr=r"a command is required"),
    Case("bad-choice-one-line", ["evaluate", "q.txt", "r.txt", "--order", "random"], BASE,
         stderr=r"^ragreport: error: evaluate: argument --order: invalid choice"),
    Case("debug-prints-the-traceback", ["--debug", "evaluate", "missing.txt", "r.txt"], BASE,
         stderr=r"Traceback[\s\S]*ragreport: error: missing\.txt"),
    Case("debug-per-command", ["evaluate", "missing.txt", "r.txt", "--debug"], BASE,
         stderr=r"Traceback[\s\S]*ragreport: error: missing\.txt"),
    # ---- numeric options: what was received, nan/inf refused, nothing silently switched off --
    *(Case(f"option-{opt.strip('-')}-{val}", [*CHECK, opt, val], WITH_T,
           stderr=rf"argument {opt}(/--[a-z-]+)?: .*{re.escape(val)}")
      for opt, val in [
          ("--alpha", "nan"), ("--alpha", "-1"), ("--alpha", "0"), ("--alpha", "1"),
          ("--alpha", "inf"), ("--max-drop", "nan"), ("--max-drop", "inf"),
          ("--max-drop", "-0.1"), ("--max-drop", "1"), ("--ci-level", "1"),
          ("--ci-level", "nan"), ("--seed", "-1"), ("--seed", str(2**64)), ("--seed", "1.5"),
          ("--resamples", "0"), ("--resamples", "10000000000"), ("--resamples", "1_000"),
          ("--jobs", "0"), ("--jobs", "100000"), ("--worst", "-1"), ("--k-max", "0"),
          ("--k-max", "1e3"), ("-M", "0"), ("-l", "1.5"), ("-l", str(2**60)),
          ("--k-max", "٣"), ("--unjudged-grade", "0"), ("--unjudged-grade", "nan"),
          ("--unjudged-grade", "-1")]),
    # ---- --unjudged: a pass that depends on unjudged documents (P@1 = 0.33 read as trec_eval
    # reads it, 1.0 with the three unjudged documents read as relevant) -----------------------
    Case("unjudged-warn-keeps-the-pass", CHECK, {**BASE, "t.toml": DEPENDS}, exit=0,
         stdout=r"WARNING P@1 <= 0\.5 \(run 'tag'\): this pass depends on unjudged documents"),
    Case("unjudged-fail-fails-the-pass", [*CHECK, "--unjudged", "fail"],
         {**BASE, "t.toml": DEPENDS}, exit=1,
         stdout=r"FAILED P@1: 0\.3333 is <= 0\.5 but depends on unjudged documents"),
    Case("unjudged-bad-choice", [*CHECK, "--unjudged", "strict"], WITH_T,
         stderr=r"argument --unjudged: invalid choice: 'strict'"),
    Case("unjudged-bad-config-value", CHECK, {**WITH_T, "ragreport.toml": 'unjudged = "strict"\n'},
         stderr=r"ragreport\.toml, line 1: unjudged: must be one of \"warn\", \"fail\", "
                r"\"off\", got 'strict'"),
    Case("unjudged-drop-warn-keeps-the-pass", DROP_CHECK, DROP, exit=0,
         stdout=r"ok   P@1: run 'cand' .*\n     WARNING this pass depends on unjudged "
                r"documents: with the unjudged documents read as relevant \(grade 1\) the "
                r"delta is −1\.0000"),
    Case("unjudged-drop-fail-fails-the-pass", [*DROP_CHECK, "--unjudged", "fail"], DROP,
         exit=1, stdout=r"FAILED drop P@1: run 'cand' .*this pass depends on unjudged "
                        r"documents.*\(--unjudged fail\)"),
    Case("unjudged-grade-below-the-relevance-level", [*CHECK, "-l", "2", "--unjudged-grade",
                                                      "1"], WITH_T,
         stderr=r"^ragreport: error: grade must be at least rel_level \(2\) to read an "
                r"unjudged document as relevant, got 1\.0$"),
    Case("unjudged-grade-bad-config-value", CHECK,
         {**WITH_T, "ragreport.toml": 'unjudged_grade = "top"\n'},
         stderr=r"ragreport\.toml, line 1: unjudged_grade: "),
    Case("unjudged-grade-stated-in-the-warning", [*CHECK, "--unjudged-grade", "2"],
         {**BASE, "t.toml": DEPENDS}, exit=0,
         stdout=r"unjudged documents of their rankings are read as relevant \(grade 2\)"),
    # ---- --on-inconclusive: what an inconclusive drop check does ----------------------------
    Case("on-inconclusive-bad-choice", [*CHECK, "--on-inconclusive", "maybe"], WITH_T,
         stderr=r"argument --on-inconclusive: invalid choice: 'maybe'"),
    Case("on-inconclusive-bad-config-value", CHECK,
         {**WITH_T, "ragreport.toml": 'on_inconclusive = "warn"\n'},
         stderr=r"ragreport\.toml, line 1: on_inconclusive: must be one of \"fail\", "
                r"\"pass\", got 'warn'"),
    Case("on-inconclusive-bad-targets-value", CHECK,
         {**BASE, "t.toml": '[targets]\n"P@1" = 0.0\non_inconclusive = true\n'},
         stderr=r"t\.toml: on_inconclusive must be \"fail\" or \"pass\", got True"),
    Case("on-inconclusive-fail-with-a-decided-pass", [*DROP_CHECK, "--on-inconclusive",
                                                      "fail", "--unjudged", "off"], DROP,
         exit=0, stdout=r"ok   P@1: run 'cand' is 0\.0000 above baseline 'base' .*: pass: the "
                        r"interval lies above -0\.1"),
    # ---- unusual but valid values ----------------------------------------------------------
    Case("generated-at-year-9999", [*CHECK, "--json", "out.json", "--generated-at",
                                    "9999-12-31T23:59:59Z"], WITH_T, exit=0,
         check=_check_generated("9999-12-31T23:59:59Z")),
    Case("generated-at-year-10000", [*CHECK, "--generated-at", "+10000-01-01"], WITH_T,
         stderr=r"generated-at must be an ISO date/time .*'\+10000-01-01'"),
    Case("generated-at-overflows-utc", [*CHECK, "--generated-at", "9999-12-31T23:00:00-05:00"],
         WITH_T, stderr=r"generated-at is out of range"),
    Case("epoch-1e20", CHECK, WITH_T, env={"SOURCE_DATE_EPOCH": "1e20"},
         stderr=r"SOURCE_DATE_EPOCH must be whole seconds since 1970, got '1e20'"),
    Case("epoch-huge", CHECK, WITH_T, env={"SOURCE_DATE_EPOCH": "9" * 30},
         stderr=r"SOURCE_DATE_EPOCH is out of range"),
    Case("epoch-fraction", CHECK, WITH_T, env={"SOURCE_DATE_EPOCH": "1.5"},
         stderr=r"SOURCE_DATE_EPOCH must be whole seconds"),
    Case("epoch-negative", [*CHECK, "--json", "out.json"], WITH_T, exit=0,
         env={"SOURCE_DATE_EPOCH": "-1"}, check=_check_generated("1969-12-31T23:59:59Z")),
    Case("title-and-name-not-utf8", [*CHECK, "--json", "out.json", "--title", f"caf{XFF}",
                                     "--name", f"run{XFF}"], WITH_T, exit=0,
         check=_check_escaped),
    Case("input-name-not-utf8", ["evaluate", "q.txt", f"r{XFF}.txt", "-m", "RR", "--format",
                                 "trec"], {"q.txt": QRELS}, exit=0,
         setup=_write(b"r\xff.txt", RUN), check=_check_rr),
    Case("missing-input-name-not-utf8", ["evaluate", "q.txt", f"r{XFF}.txt"], {"q.txt": QRELS},
         stderr=r"r\\(xff|udcff)\.txt"),
    Case("output-name-not-utf8", [*CHECK, "--json", f"o{XFF}.json"], WITH_T, exit=0,
         check=lambda res: json.loads((res.tmp / os.fsdecode(b"o\xff.json")).read_bytes())),
    Case("template-syntax-error", [*CHECK, "--html", "x.html", "--template-dir", "tpl"],
         {**WITH_T, **_template("{% if %}")}, stderr=r"tpl/report\.html\.j2:1: template error"),
    Case("template-undefined-name", [*CHECK, "--html", "x.html", "--template-dir", "tpl"],
         {**WITH_T, **_template("{{ nope }}")}, stderr=r"tpl/report\.html\.j2: .*'nope'"),
    Case("template-missing-include", [*CHECK, "--html", "x.html", "--template-dir", "tpl"],
         {**WITH_T, **_template('{% include "gone.j2" %}')}, stderr=r"template not found: gone"),
    Case("template-raises", [*CHECK, "--html", "x.html", "--template-dir", "tpl"],
         {**WITH_T, **_template("{{ 1 // 0 }}")},
         stderr=r"tpl/report\.html\.j2: the template failed: ZeroDivisionError"),
    Case("template-not-utf8", [*CHECK, "--html", "x.html", "--template-dir", "tpl"],
         {**WITH_T, **_template(b"\xff\xfe{{ x }}")}, stderr=r"not UTF-8"),
    Case("template-dir-missing", [*CHECK, "--html", "x.html", "--template-dir", "nodir"],
         WITH_T, stderr=r"template directory not found: nodir"),
    # ---- all or nothing: a failure replaces no existing output -----------------------------
    Case("outputs-missing-folder", [*CHECK, "--html", "a.html", "--markdown", "b.md", "--json",
                                    "nodir/c.json"], {**WITH_T, **OLD},
         stderr=r"cannot write nodir/c\.json: folder nodir does not exist"),
    Case("outputs-disk-full", [*CHECK, *OUTS[:4], "--json", "full.json"], {**WITH_T, **OLD},
         setup=_symlink("full.json", "/dev/full"), stderr=r"cannot write full\.json: No space"),
    Case("outputs-template-error", [*CHECK, *OUTS, "--template-dir", "tpl"],
         {**WITH_T, **OLD, **_template("{{ nope }}")}, stderr=r"'nope'"),
    Case("outputs-one-is-an-input", [*CHECK, *OUTS[:4], "--json", "r.txt"], {**WITH_T, **OLD},
         stderr=r"refusing to write r\.txt: it is one of the inputs"),
    Case("output-symlink-to-an-input", [*CHECK, "--json", "link.json"], WITH_T,
         setup=_symlink("link.json", "r.txt"), stderr=r"refusing to write link\.json"),
    Case("output-hard-link-to-an-input", [*CHECK, "--json", "hard.json"], WITH_T,
         setup=lambda tmp: os.link(tmp / "r.txt", tmp / "hard.json"),
         stderr=r"refusing to write hard\.json"),
    Case("output-dangling-symlink", [*CHECK, "--json", "link.json"], WITH_T,
         setup=_symlink("link.json", "nodir/out.json"),
         stderr=r"cannot write link\.json: folder .*nodir does not exist"),
    Case("output-symlink-loop", [*CHECK, "--json", "loop.json"], WITH_T,
         setup=_symlink("loop.json", "loop.json"), stderr=r"cannot write loop\.json"),
    Case("outputs-one-is-a-folder", [*CHECK, *OUTS[:4], "--json", "d"],
         {**WITH_T, **OLD, "d/x": "x"}, stderr=r"cannot write d: it is a directory"),
    Case("outputs-same-file-twice", [*CHECK, "--markdown", "b.md", "--json", "b.md"],
         {**WITH_T, **OLD}, stderr=r"same"),
    Case("outputs-two-on-stdout", [*CHECK, "--markdown", "-", "--json", "-"], WITH_T,
         stderr=r"standard output \('-'\) can be used for one output only"),
    Case("outputs-check-failure-still-writes", [*CHECK, "--json", "c.json"],
         {**BASE, "t.toml": F, "c.json": "old"}, exit=1, unchanged=["q.txt", "r.txt"],
         check=_is_json("c.json")),
    # ---- '-' and symlinks: written through ------------------------------------------------
    Case("markdown-to-dev-stdout", [*CHECK, "--markdown", "/dev/stdout"], WITH_T, exit=0,
         stdout=r"<!-- ragreport -->"),
    Case("json-to-dash", [*CHECK, "--json", "-"], WITH_T, exit=0,
         check=lambda res: json.loads(res.stdout)),
    Case("symlink-written-through", [*CHECK, "--markdown", "link.md"],
         {**WITH_T, "real/t.md": "old"}, exit=0, unchanged=["q.txt", "r.txt"],
         setup=_symlink("link.md", "real/t.md"), check=_check_symlink_through),
    Case("existing-mode-kept", [*CHECK, "--markdown", "b.md"], {**WITH_T, "b.md": "old"},
         exit=0, unchanged=[], setup=_chmod("b.md", 0o600), check=_check_mode("b.md", 0o600)),
    # ---- inputs read once: '-', FIFOs, /dev/stdin -----------------------------------------
    Case("run-from-stdin", ["evaluate", "q.txt", "-", "-m", "RR", "--format", "trec"],
         {"q.txt": QRELS}, stdin=RUN.encode(), exit=0, check=_check_rr),
    Case("run-from-dev-stdin", ["evaluate", "q.txt", "/dev/stdin", "-m", "RR", "--format",
                                "trec"], {"q.txt": QRELS}, stdin=RUN.encode(), exit=0,
         check=_check_rr),
    Case("run-from-fifo", ["evaluate", "q.txt", "fifo", "-m", "RR", "--format", "trec"],
         {"q.txt": QRELS}, setup=fifo("fifo", RUN.encode()), exit=0, check=_check_rr),
    Case("report-qrels-from-stdin-hashed", ["check", "-", "r.txt", "--targets", "t.toml",
                                            "--no-stats", "--jobs", "1", "--json", "out.json"],
         {"r.txt": RUN, "t.toml": T}, stdin=QRELS.encode(), exit=0, check=_check_stdin_hash),
    Case("report-run-from-fifo", [*CHECK[:2], "fifo", *CHECK[3:], "--json", "out.json"],
         {"q.txt": QRELS, "t.toml": T}, setup=fifo("fifo", RUN.encode()), exit=0,
         check=_is_json("out.json")),
    Case("stdin-for-two-inputs", ["evaluate", "-", "-"], {}, stdin=QRELS.encode(),
         stderr=r"standard input \('-'\) can be read for one input only"),
    Case("stdin-for-two-report-inputs", ["check", "q.txt", "-", "-", "--no-stats"], BASE,
         stdin=RUN.encode(), stderr=r"one input only"),
    Case("stream-run-from-stdin", ["evaluate", "--stream", "q.txt", "-", "-m", "RR", "--format",
                                   "trec"], {"q.txt": QRELS}, stdin=RUN.encode(), exit=0,
         check=_check_rr),
    Case("stream-stdin-twice", ["evaluate", "--stream", "-", "-"], {}, stdin=QRELS.encode(),
         stderr=r"one input only"),
    # complete (-c, or a preset's) with counts: q4 is judged only, so num_q 4 and num_rel 7
    Case("stream-complete-counts", ["evaluate", "q.txt", "r.txt", "-c", "--stream", "-m",
                                    "num_q", "-m", "num_rel", "-m", "num_rel_ret", "--format",
                                    "trec"], {"q.txt": QRELS4, "r.txt": RUN}, exit=0,
         stdout=r"num_q +\tall\t4\nnum_rel +\tall\t7\nnum_rel_ret +\tall\t5\n"),
    Case("stream-complete-trec-defaults", ["evaluate", "q.txt", "r.txt", "-c", "--stream",
                                           "--format", "trec"], {"q.txt": QRELS4, "r.txt": RUN},
         exit=0, stdout=r"num_q +\tall\t4\n"),
    Case("stream-mteb-numq", ["evaluate", "q.txt", "r.txt", "--compat", "mteb", "--stream", "-m",
                              "NumQ"], {"q.txt": QRELS4, "r.txt": RUN}, exit=0,
         stdout=r"NumQ +1\.0000\n.*qrels only: 1"),
    Case("stream-json-conventions", ["evaluate", "q.txt", "r.txt", "--compat", "mteb",
                                     "--stream", "--format", "json"], BASE, exit=0,
         stdout=r'"conventions": \{[^}]*"compat": "mteb"'),
    Case("targets-from-stdin", [*CHECK[:3], "--targets", "-", "--no-stats"], BASE,
         stdin=T.encode(), stderr=r"--targets must be a regular file"),
    Case("output-to-dev-null", [*CHECK, "--json", "/dev/null", "--markdown", "b.md"],
         {**WITH_T, "b.md": "old"}, exit=0, unchanged=["q.txt", "r.txt"],
         check=lambda res: None if (res.tmp / "b.md").read_text() != "old" else pytest.fail()),
    Case("fractional-grades", ["evaluate", "fq.txt", "r.txt", "-m", "nDCG@3", "--format",
                               "json", "--fractional-grades"],
         {"fq.txt": QRELS.replace(" 2\n", " 1.5\n").replace(" 3\n", " 2.5\n"), "r.txt": RUN},
         exit=0, check=_check_fractional),
    # ---- worker processes ------------------------------------------------------------------
    *(Case(f"misspelt-mplbackend-jobs-{jobs}", [*CHECK[:-2], "--jobs", jobs, "--html",
                                                "x.html"], WITH_T, exit=0,
           env={"MPLBACKEND": "bogus"}, check=_is_html("x.html"))
      for jobs in ("1", "2")),
    Case("error-while-the-pool-starts", ["report", "q.txt", "r.txt", "--jobs", "2",
                                         "--baseline", "nope", "--html", "x.html"], BASE,
         stderr=r"^ragreport: error: baseline 'nope' is not one of the runs"),
    # ---- the worst-queries measure is computed like a target's ----------------------------
    Case("worst-measure-not-in-summary", [*CHECK, "-m", "P@1", "--worst-measure", "nDCG",
                                          "--json", "w.json"], WITH_T, exit=0,
         check=lambda res: None if _json(res, "w.json")["worst_queries_by"]["measure"] == "nDCG"
         else pytest.fail("worst queries not ranked by nDCG")),
    # ---- a name as long as the file system allows (255 bytes) ------------------------------
    Case("output-name-of-255-bytes", [*CHECK, "--markdown", "m" * 252 + ".md"], WITH_T, exit=0,
         check=lambda res: None if (res.tmp / ("m" * 252 + ".md")).is_file()
         else pytest.fail("not written")),
    Case("descriptor-not-open", [*CHECK, "--json", "/dev/fd/9"], WITH_T,
         stderr=r"^ragreport: error: cannot write /dev/fd/9: descriptor 9 is not open$"),
    # ---- an error line is inert in a CI log ------------------------------------------------
    Case("workflow-command-in-error-line", ["evaluate", "##[error]x.txt", "r.txt"], BASE,
         stderr=r"^ragreport: error: #\\x23\[error\]x\.txt: no such file$"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)


def test_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 30
    assert len({c.id for c in CASES}) == len(CASES)


# ---- signals: Ctrl-C, SIGTERM, SIGKILL while the workers run ---------------------------------

def _big_inputs(tmp: Path) -> None:
    """Inputs that keep ``report --jobs 2`` busy for a few seconds (bootstrap and plots)."""
    import random

    rng = random.Random(1)
    q: list[str] = []
    runs: dict[str, list[str]] = {"a.txt": [], "b.txt": []}
    for i in range(1500):
        q += [f"q{i} 0 d{rng.randrange(100)}x{j} {rng.randrange(3)}\n" for j in range(10)]
        for name, lines in runs.items():
            docs = rng.sample(range(100), 50)
            lines += [f"q{i} Q0 d{d}x{k % 10} {k + 1} {60 - k} {name[0]}\n"
                      for k, d in enumerate(docs)]
    (tmp / "q.txt").write_text("".join(q))
    for name, lines in runs.items():
        (tmp / name).write_text("".join(lines))
    for name in OLD:
        (tmp / name).write_text(OLD[name])


def _start_busy(tmp: Path, token: str, processes: int = 4,
                settle: float = 0.3) -> subprocess.Popen[bytes]:
    _big_inputs(tmp)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGREPORT_")}
    env.update({"RAGREPORT_HOSTILE_TOKEN": token, "MPLBACKEND": "Agg"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragreport", "report", "q.txt", "a.txt", "b.txt", "--jobs", "2",
         "--resamples", "100000", *OUTS], cwd=tmp, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    # wait until the workers run: the command, the resource tracker, the forkserver and two
    # workers (with fewer, the pool is still starting)
    while len(leftover_processes(token)) < processes:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the workers never started"
        time.sleep(0.05)
    time.sleep(settle)
    assert proc.poll() is None, "the command ended before it could be interrupted"
    return proc


def _no_leftovers(tmp: Path, token: str) -> None:
    deadline = time.monotonic() + 5
    while (left := leftover_processes(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == []
    assert [p.name for p in tmp.iterdir() if p.name.endswith(".tmp")] == []
    for name, text in OLD.items():
        assert (tmp / name).read_text() == text


@pytest.mark.parametrize(("how", "code", "line"), [
    ("sigint-group", 130, "ragreport: interrupted"),
    ("sigint-main", 130, "ragreport: interrupted"),
    ("sigterm-main", 143, "ragreport: terminated"),
    ("sigterm-group", 143, "ragreport: terminated"),
    ("sigint-group-pool-starting", 130, "ragreport: interrupted"),
])
def test_interrupt_mid_work(tmp_path: Path, how: str, code: int, line: str) -> None:
    """Ctrl-C (to the whole process group, as a terminal sends it, or to the command alone)
    and SIGTERM: one line, the exit code, no traceback of any process, no output replaced,
    no temporary file, no process left."""
    token = uuid.uuid4().hex
    # "pool-starting": the forkserver is importing matplotlib, no worker runs yet
    proc = (_start_busy(tmp_path, token, processes=3, settle=0.4)
            if how.endswith("pool-starting") else _start_busy(tmp_path, token))
    sig = signal.SIGINT if how.startswith("sigint") else signal.SIGTERM
    if "group" in how:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    text = err.decode("utf-8", "replace")
    assert proc.returncode == code, text
    assert text.splitlines() == [line], text
    _no_leftovers(tmp_path, token)


@pytest.mark.parametrize("when", ["pool-starting", "workers-running"])
def test_sigkill_leaves_no_process(tmp_path: Path, when: str) -> None:
    """SIGKILL of the command runs no cleanup: its workers, the forkserver and the resource
    tracker must notice it has gone, and exit (also while the forkserver imports its
    preload, before any worker exists)."""
    token = uuid.uuid4().hex
    proc = (_start_busy(tmp_path, token, processes=3, settle=0.0) if when == "pool-starting"
            else _start_busy(tmp_path, token))
    started = time.monotonic()
    proc.kill()
    proc.wait(timeout=10)
    deadline = started + 5
    while (left := leftover_processes(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], left
    proc.communicate(timeout=10)
    for name, text in OLD.items():
        assert (tmp_path / name).read_text() == text


@pytest.mark.parametrize(("targets", "code"), [(F, 1), (T, 0)])
def test_reader_gone_keeps_the_decision(tmp_path: Path, targets: str, code: int) -> None:
    """``ragreport check ... | true``: the reader of stdout has gone before the tables are
    printed; the exit code is still the gate's decision (1 on a failed target), never 0 for
    a failure and never a traceback."""
    for name, text in {**BASE, "t.toml": targets}.items():
        (tmp_path / name).write_text(text)
    read, write = os.pipe()
    os.close(read)  # no reader at all: the first write gets EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "ragreport", *CHECK], cwd=tmp_path,
                              stdout=write, stderr=subprocess.PIPE, timeout=120, check=False)
    finally:
        os.close(write)
    err = proc.stderr.decode()
    assert proc.returncode == code, err
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_descriptor_outputs_append_to_what_they_name(tmp_path: Path) -> None:
    """``--markdown /dev/stderr 2>>log`` and ``--json /dev/fd/3 3>>log3``: written through the
    open descriptor (appended, as the shell opened it), never by replacing the file it names."""
    for name, text in WITH_T.items():
        (tmp_path / name).write_text(text)
    log, log3 = tmp_path / "log.txt", tmp_path / "log3.txt"
    log.write_text("old line\n")
    log3.write_text("old line 3\n")
    command = " ".join([shlex.quote(sys.executable), "-m", "ragreport", *CHECK, "--markdown",
                        "/dev/stderr", "--json", "/dev/fd/3", "2>>log.txt", "3>>log3.txt"])
    proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, stdout=subprocess.DEVNULL,
                          timeout=120, check=False)
    assert proc.returncode == 0, log.read_text()
    text, text3 = log.read_text(), log3.read_text()
    assert text.startswith("old line\n") and "<!-- ragreport -->" in text, text
    assert text3.startswith("old line 3\n"), text3
    assert json.loads(text3.split("\n", 1)[1])["schema"] == "ragreport.report/1"


@pytest.mark.parametrize("stream", [False, True], ids=["evaluate", "stream"])
def test_closed_stdin_is_an_input_error(tmp_path: Path, stream: bool) -> None:
    """``ragreport evaluate q.txt - <&-``: one input-error line, never an internal error."""
    (tmp_path / "q.txt").write_text(QRELS)
    command = " ".join([shlex.quote(sys.executable), "-m", "ragreport", "evaluate", "q.txt", "-",
                        *(["--stream"] if stream else []), "<&-"])
    proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True,
                          timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.decode() == "ragreport: error: <stdin>: standard input is closed\n"
