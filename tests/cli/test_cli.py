"""``ragreport evaluate``: in-process through ``main`` and as real subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

import ragreport
from ragreport.cli.app import EXIT_BAD_INPUT, EXIT_OK, EXIT_TARGET_FAILED, main
from ragreport.examples import example_files

# q1: d1 (3.0, grade 1) d2 (2.0, grade 2) d9 (1.0, unjudged) -> ranks: 1 1 0 ; R = 2
# q2: d5 (1.0, unjudged) d3 (0.5, grade 1) -> ranks: 0 1 ; R = 1
# q3: qrels only (d7 grade 1) ; q4: run only
QRELS = "q1 0 d1 1\nq1 0 d2 2\nq1 0 d4 0\nq2 0 d3 1\nq3 0 d7 1\n"
RUN = ("q1 Q0 d1 1 3.0 mytag\nq1 Q0 d2 2 2.0 mytag\nq1 Q0 d9 3 1.0 mytag\n"
       "q2 Q0 d5 1 1.0 mytag\nq2 Q0 d3 2 0.5 mytag\nq4 Q0 d1 1 1.0 mytag\n")


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    q = tmp_path / "test.qrels"
    r = tmp_path / "test.run"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _trec_rows(out: str) -> dict[tuple[str, str], str]:
    rows = {}
    for line in out.splitlines():
        name, qid, value = line.split("\t")
        rows[(name.rstrip(), qid)] = value
    return rows


def test_table_format(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["evaluate", *files, "-m", "P@2", "-m", "RR"], capsys)
    assert code == EXIT_OK
    assert err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["measure", "mytag"]
    # P@2: q1 2/2, q2 1/2 -> 0.75 ; RR: q1 1, q2 1/2 -> 0.75
    assert lines[1].split() == ["P@2", "0.7500"]
    assert lines[2].split() == ["RR", "0.7500"]
    assert ("queries evaluated: 2; run-only (ignored): 1; qrels-only: 1; no relevant "
            "document: 0; empty retrievals: 0; duplicates dropped: 0") in out


def test_table_per_query(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["evaluate", *files, "-m", "P@2", "-q"], capsys)
    assert code == EXIT_OK
    rows = [line.split() for line in out.splitlines()]
    assert ["query", "P@2"] in rows
    assert ["q1", "1.0000"] in rows
    assert ["q2", "0.5000"] in rows


def test_json_format(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["evaluate", *files, "-m", "P@2", "--format", "json", "-q"], capsys)
    assert code == EXIT_OK
    doc = json.loads(out)
    assert doc["schema"] == "ragreport.evaluate/1"
    assert doc["run"] == "mytag"
    assert doc["queries"] == 2
    assert doc["means"] == {"P@2": 0.75}
    assert doc["counts"]["run_only"] == 1
    assert doc["counts"]["qrels_only"] == 1
    assert doc["per_query"] == {"q1": {"P@2": 1.0}, "q2": {"P@2": 0.5}}
    assert doc["conventions"]["order"] == "score"


def test_trec_format_layout(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["evaluate", *files, "-m", "P.1,2", "-m", "recip_rank",
                         "-m", "num_rel_ret", "--format", "trec"], capsys)
    assert code == EXIT_OK
    assert out.splitlines() == [
        "runid                 \tall\tmytag",
        "num_q                 \tall\t2",
        "P_1                   \tall\t0.5000",   # q1 1, q2 0
        "P_2                   \tall\t0.7500",
        "recip_rank            \tall\t0.7500",
        "num_rel_ret           \tall\t3",        # a count: summed, 2 + 1
    ]


def test_trec_format_per_query_and_default_measures(
        files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["evaluate", *files, "--format", "trec", "-q"], capsys)
    assert code == EXIT_OK
    rows = _trec_rows(out)
    assert rows[("num_ret", "q1")] == "3"
    assert rows[("num_rel", "all")] == "3"
    assert rows[("map", "q1")] == "1.0000"
    assert rows[("P_5", "q2")] == "0.2000"
    assert rows[("recall_5", "all")] == "1.0000"
    assert rows[("success_1", "all")] == "0.5000"
    assert ("ndcg_cut_1000", "all") in rows
    assert ("recip_rank", "q3") not in rows  # qrels-only query, not evaluated without -c


def test_complete_option(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    # -c: q3 (qrels only) counts as an empty ranking -> P@2 = (1 + 1/2 + 0) / 3
    code, out, _ = _run(["evaluate", *files, "-c", "-m", "P@2", "--format", "trec", "-q"],
                        capsys)
    assert code == EXIT_OK
    rows = _trec_rows(out)
    assert rows[("P_2", "q3")] == "0.0000"
    assert rows[("num_q", "all")] == "3"
    assert rows[("P_2", "all")] == "0.5000"


def test_max_depth_option(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    # -M 1: q2 keeps only d5 (unjudged) -> RR 0 ; q1 RR 1 -> mean 0.5
    code, out, _ = _run(["evaluate", *files, "-M", "1", "-m", "RR", "-m", "num_ret",
                         "--format", "trec"], capsys)
    assert code == EXIT_OK
    rows = _trec_rows(out)
    assert rows[("recip_rank", "all")] == "0.5000"
    assert rows[("num_ret", "all")] == "2"


def test_rel_level_option(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    # -l 2: q1 only d2 relevant (rank 2) -> RR 1/2 ; q2 none relevant -> 0
    code, out, _ = _run(["evaluate", *files, "-l", "2", "-m", "RR", "-m", "num_rel",
                         "--format", "trec"], capsys)
    assert code == EXIT_OK
    rows = _trec_rows(out)
    assert rows[("recip_rank", "all")] == "0.2500"
    assert rows[("num_rel", "all")] == "1"


def test_order_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = tmp_path / "q.txt"
    r = tmp_path / "r.txt"
    q.write_text("q1 0 a 1\n")
    r.write_text("q1 Q0 a 1 0.1 t\nq1 Q0 b 2 0.9 t\n")
    # by score: b a -> RR 1/2 ; as given: a b -> RR 1
    _, out, _ = _run(["evaluate", str(q), str(r), "-m", "RR", "--format", "trec"], capsys)
    assert _trec_rows(out)[("recip_rank", "all")] == "0.5000"
    _, out, _ = _run(["evaluate", str(q), str(r), "-m", "RR", "--format", "trec",
                      "--order", "given"], capsys)
    assert _trec_rows(out)[("recip_rank", "all")] == "1.0000"


def test_k_max_option(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["evaluate", *files, "-m", "P@2", "--k-max", "2", "--format", "json"],
                        capsys)
    assert code == EXIT_OK
    assert json.loads(out)["k_max"] == 2
    code, out, err = _run(["evaluate", *files, "-m", "P@5", "--k-max", "2"], capsys)
    assert code == EXIT_BAD_INPUT
    assert out == ""
    assert err == "ragreport: error: k_max (2) is smaller than the cutoff of P@5\n"


def test_measures_repeated_and_trec_lists(files: tuple[str, str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["evaluate", *files, "-m", "ndcg_cut.1,2", "-m", "mrr", "-m", "P_1",
                         "--format", "json"], capsys)
    assert code == EXIT_OK
    assert list(json.loads(out)["means"]) == ["nDCG@1", "nDCG@2", "RR", "P@1"]


def test_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["evaluate", "--example", "-m", "nDCG@10", "--format", "json"], capsys)
    assert code == EXIT_OK
    doc = json.loads(out)
    files = example_files()
    expected = ragreport.evaluate(files.qrels, files.runs[0], ["nDCG@10"])
    assert doc["run"] == expected.run_name == "bm25"
    assert doc["means"]["nDCG@10"] == pytest.approx(expected.mean("nDCG@10"))
    assert doc["queries"] >= 30


def test_example_with_positional_arguments_is_an_error(
        files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["evaluate", "--example", *files], capsys)
    assert code == EXIT_BAD_INPUT
    assert err == "ragreport: error: --example takes no QRELS or RUN arguments\n"


def test_missing_run_argument(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["evaluate", files[0]], capsys)
    assert code == EXIT_BAD_INPUT
    assert err == "ragreport: error: evaluate needs QRELS and RUN (or --example)\n"


@pytest.mark.parametrize(
    ("run_text", "extra", "message"),
    [
        ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 x t\n", [],
         "{run}:2: score 'x' is not a number"),
        ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2\n", [],
         "{run}:2: expected 6 fields (qid Q0 docid rank score tag), got 4: 'q1 Q0 d2 2'"),
        ("q1 Q0 d1 1 3.0 t\nq1 Q0 d1 2 2.0 t\n", [],
         "{run}:2: document 'd1' appears twice for query 'q1' (first at line 1); pass "
         "duplicates='first' (--keep-first-duplicate) to keep the first occurrence"),
        ("q1 Q0 d1 1 3.0 t\n", ["-m", "bogus"], None),
    ],
    ids=["score", "fields", "duplicate", "measure"],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         run_text: str, extra: list[str],
                                         message: str | None) -> None:
    q = tmp_path / "q.qrels"
    r = tmp_path / "r.run"
    q.write_text("q1 0 d1 1\n")
    r.write_text(run_text)
    code, out, err = _run(["evaluate", str(q), str(r), *extra], capsys)
    assert code == EXIT_BAD_INPUT
    assert out == ""
    assert err.endswith("\n")
    assert len(err.splitlines()) == 1
    assert err.startswith("ragreport: error: ")
    assert "Traceback" not in err
    if message is not None:
        assert err == "ragreport: error: " + message.format(run=r) + "\n"
    else:
        assert err.startswith("ragreport: error: unknown measure 'bogus'; valid measures:")


def test_keep_first_duplicate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = tmp_path / "q.qrels"
    r = tmp_path / "r.run"
    q.write_text("q1 0 d2 1\n")
    r.write_text("q1 Q0 d1 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq1 Q0 d2 3 1.0 t\n")
    # first d1 kept: d1 d2 -> RR 1/2
    code, out, _ = _run(["evaluate", str(q), str(r), "-m", "RR", "--keep-first-duplicate",
                         "--format", "json"], capsys)
    assert code == EXIT_OK
    doc = json.loads(out)
    assert doc["means"] == {"RR": 0.5}
    assert doc["counts"]["duplicates_dropped"] == 1


def test_unknown_option_and_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["evaluate", "--bogus"], capsys)
    assert code == EXIT_BAD_INPUT
    assert err == ("ragreport: error: unrecognized arguments: --bogus "
                   "(see 'ragreport --help')\n")
    code, out, err = _run([], capsys)
    assert code == EXIT_BAD_INPUT
    assert "usage: ragreport" in out
    assert err == ("ragreport: error: a command is required: evaluate, report, check, "
                   "label-queue, merge-labels, notebook or config\n")


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_exit_0(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run([flag], capsys)
    assert code == 0
    assert ("usage: ragreport" in out) if flag == "--help" else (
        out == f"ragreport {ragreport.__version__}\n")


def test_evaluate_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["evaluate", "--help"], capsys)
    assert code == 0
    for option in ("--format", "--k-max", "--order", "-M", "-l", "-c", "-q", "--example",
                   "--fractional-grades", "--debug"):
        assert option in out


# ---- real processes -------------------------------------------------------------------------

def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(ROOT)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_python_dash_m(files: tuple[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "ragreport", "evaluate", *files, "-m", "P@2",
                           "--format", "trec"], capture_output=True, text=True, env=_env(),
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "P_2                   \tall\t0.7500\n" in proc.stdout
    assert proc.stderr == ""


def test_python_dash_m_bad_input(tmp_path: Path) -> None:
    q = tmp_path / "q.qrels"
    r = tmp_path / "r.run"
    q.write_text("q1 0 d1 1\n")
    r.write_text("q1 Q0 d1 1 nan t\n")
    proc = subprocess.run([sys.executable, "-m", "ragreport", "evaluate", str(q), str(r)],
                          capture_output=True, text=True, env=_env(), check=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"ragreport: error: {r}:1: score 'nan' is not a finite number\n"
    assert "Traceback" not in proc.stderr


def _console_script() -> str:
    found = Path(sys.executable).with_name("ragreport")
    if found.exists():
        return str(found)
    which = shutil.which("ragreport")
    assert which is not None, "the ragreport console script is not installed"
    return which


def test_console_script(files: tuple[str, str]) -> None:
    exe = _console_script()
    proc = subprocess.run([exe, "evaluate", *files, "-m", "RR", "--format", "json"],
                          capture_output=True, text=True, env=_env(), check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["means"] == {"RR": 0.75}
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, env=_env(),
                             check=False)
    assert version.returncode == 0
    assert version.stdout.strip() == f"ragreport {ragreport.__version__}"


def test_console_script_bad_input(tmp_path: Path) -> None:
    q = tmp_path / "q.qrels"
    q.write_text("q1 0 d1 1\nq1 0 d2\n")
    proc = subprocess.run([_console_script(), "evaluate", str(q), str(q)], capture_output=True,
                          text=True, env=_env(), check=False)
    assert proc.returncode == 2
    assert proc.stderr == (f"ragreport: error: {q}:2: expected 4 fields (qid iter docid "
                           "grade), got 3: 'q1 0 d2'\n")
    unknown = subprocess.run([_console_script(), "evaluate", "--nope"], capture_output=True,
                             text=True, env=_env(), check=False)
    assert unknown.returncode == 2
    assert "Traceback" not in unknown.stderr
    none = subprocess.run([_console_script()], capture_output=True, text=True, env=_env(),
                          check=False)
    assert none.returncode == 2


def test_the_command_does_not_import_pandas(files: tuple[str, str], tmp_path: Path) -> None:
    """pyarrow imports pandas when it is installed; the command tells it not to bother.

    A stand-in ``pandas`` package records every import of it in a file.
    """
    fake = tmp_path / "site" / "pandas"
    fake.mkdir(parents=True)
    marker = tmp_path / "imported"
    (fake / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write('x')\n"
                                      "raise ImportError('stand-in pandas')\n")
    env = _env()
    env["PYTHONPATH"] = str(fake.parent) + os.pathsep + env["PYTHONPATH"]
    # control: pyarrow on its own does look for pandas
    subprocess.run([sys.executable, "-c", "import pyarrow as pa; pa.array([1]).to_numpy()"],
                   env=env, check=True)
    assert marker.read_text().startswith("x")
    marker.unlink()
    for cmd in ([_console_script()], [sys.executable, "-m", "ragreport"]):
        proc = subprocess.run([*cmd, "evaluate", *files, "-m", "RR", "--format", "json"],
                              capture_output=True, text=True, env=env, check=False)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["means"] == {"RR": 0.75}
        report = subprocess.run([*cmd, "report", "--example", "--jobs", "1", "--json",
                                 str(tmp_path / "r.json")], capture_output=True, text=True,
                                env=env, cwd=tmp_path, check=False)
        assert report.returncode == 0, report.stderr
    assert not marker.exists()
    # in someone else's process, main() leaves pyarrow's pandas interop alone
    code = ("import sys, pyarrow as pa; from ragreport.cli.app import main; "
            f"main(['evaluate', {files[0]!r}, {files[1]!r}, '-m', 'RR']); pa.array([1])")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    assert marker.read_text().startswith("x")


# ---- one meaning per exit code; errors are one line --------------------------------------------

def _boom(exc: BaseException) -> object:
    def command(args: object) -> int:
        raise exc

    return command


@pytest.mark.parametrize(("exc", "code", "line"), [
    (ZeroDivisionError("division by zero"), 2,
     r"^ragreport: error: internal error \(a bug in ragreport .*--debug.*\): "
     r"ZeroDivisionError: division by zero$"),
    (KeyError("x"), 2, r"^ragreport: error: internal error .*KeyError"),
    (PermissionError(13, "Permission denied", "some/file"), 2,
     r"^ragreport: error: some/file: Permission denied$"),
    (MemoryError(), 2, r"^ragreport: error: out of memory$"),
    (KeyboardInterrupt(), 130, r"^ragreport: interrupted$"),
    (ragreport.errors.RagReportError("bad\nthing\x1b[31m"), 2,
     r"^ragreport: error: bad thing\\x1b\[31m$"),
])
def test_any_exception_is_one_line_and_never_exit_1(
        files: tuple[str, str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, exc: BaseException, code: int, line: str) -> None:
    import re

    from ragreport.cli import app as cli

    monkeypatch.setitem(cli._COMMANDS, "evaluate", _boom(exc))
    got, _, err = _run(["evaluate", *files], capsys)
    assert got == code
    assert len(err.splitlines()) == 1 and re.search(line, err.rstrip("\n")), err
    assert "Traceback" not in err
    # --debug (global or the command's) adds the traceback before the line
    for argv in (["--debug", "evaluate", *files], ["evaluate", *files, "--debug"]):
        got, _, err = _run(argv, capsys)
        assert got == code
        assert err.startswith("Traceback (most recent call last):")
        assert re.search(line, err.splitlines()[-1]), err


def test_exit_constants() -> None:
    from ragreport import cli

    assert (cli.EXIT_OK, cli.EXIT_TARGET_FAILED, cli.EXIT_BAD_INPUT, cli.EXIT_INTERRUPTED,
            cli.EXIT_TERMINATED) == (0, 1, 2, 130, 143)


def test_main_never_raises_system_exit(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--nope"], ["evaluate", "--k-max", "nan"], ["report", "--jobs"]):
        code, _, err = _run(argv, capsys)
        assert code == EXIT_BAD_INPUT
        assert len(err.splitlines()) == 1 and err.startswith("ragreport: error: "), err


@pytest.mark.parametrize(("option", "value", "says"), [
    ("--alpha", "nan", "expected a decimal number, got 'nan'"),
    ("--alpha", "1e-400", "must be > 0 and < 1, got 1e-400"),
    ("--max-drop", "inf", "expected a decimal number, got 'inf'"),
    ("--max-drop", "1.5", "must be >= 0 and < 1, got 1.5"),
    ("--ci-level", "0", "must be > 0 and < 1, got 0"),
    ("--seed", "-3", "must be >= 0, got -3"),
    ("--resamples", "2000000", "must be at most 1000000, got 2000000"),
    ("--worst", "x", "expected a whole number, got 'x'"),
    ("--k-max", " 0x10", "expected a whole number, got ' 0x10'"),
])
def test_numeric_options_say_what_they_got(files: tuple[str, str],
                                           capsys: pytest.CaptureFixture[str], option: str,
                                           value: str, says: str) -> None:
    code, _, err = _run(["check", *files, option, value], capsys)
    assert code == EXIT_BAD_INPUT
    assert says in err and option in err and len(err.splitlines()) == 1, err


def test_fractional_grades_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--fractional-grades`` is ``fractional_grades=True`` of the library, on every path."""
    from ragreport import evaluate

    q = tmp_path / "q.txt"
    r = tmp_path / "r.txt"
    q.write_text("q1 0 d1 0.5\nq1 0 d2 1.5\nq2 0 d3 2.7\n")
    r.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 1.0 t\n")
    means = {}
    for extra in ([], ["--fractional-grades"], ["--fractional-grades", "--stream"]):
        code, out, err = _run(["evaluate", str(q), str(r), "-m", "nDCG", "--format", "json",
                               *extra], capsys)
        assert code == EXIT_OK, err
        means[" ".join(extra)] = json.loads(out)["means"]["nDCG"]
    assert means[""] == evaluate(str(q), str(r), ["nDCG"]).mean("nDCG")
    kept = evaluate(str(q), str(r), ["nDCG"], fractional_grades=True).mean("nDCG")
    assert means["--fractional-grades"] == means["--fractional-grades --stream"] == kept
    assert kept != means[""]
    code, _, err = _run(["check", str(q), str(r), "--fractional-grades", "--no-stats",
                         "--jobs", "1", "--json", str(tmp_path / "o.json")], capsys)
    assert code in (EXIT_OK, EXIT_TARGET_FAILED), err
    doc = json.loads((tmp_path / "o.json").read_text())
    assert "fractional" in json.dumps(doc["conventions"])


# ---- outputs: all or nothing ------------------------------------------------------------------

def test_write_outputs_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder that cannot take a temporary file (read-only, full): nothing replaced."""
    import tempfile

    from ragreport import fileio
    from ragreport.errors import RagReportError

    ro = tmp_path / "ro"
    ro.mkdir()
    for p in (tmp_path / "a.md", ro / "b.json"):
        p.write_text("old")
    real = tempfile.mkstemp

    def mkstemp(*args: object, dir: str | os.PathLike[str] | None = None,
                **kw: object) -> tuple[int, str]:
        if dir is not None and Path(dir) == ro:
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kw)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    with pytest.raises(RagReportError, match=r"cannot write .*b\.json: Permission denied"):
        fileio.write_outputs([(tmp_path / "a.md", "new"), (ro / "b.json", "new")])
    assert (tmp_path / "a.md").read_text() == "old"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.md", "b.json", "ro"]


def test_write_outputs_rename_only_after_every_write(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from ragreport import fileio
    from ragreport.errors import RagReportError

    order: list[str] = []
    real = os.replace

    def replace(a: str, b: str) -> None:
        order.append("rename")
        real(a, b)

    monkeypatch.setattr(os, "replace", replace)
    (tmp_path / "full").symlink_to("/dev/full")
    with pytest.raises(RagReportError, match="No space left"):
        fileio.write_outputs([(tmp_path / "a.md", "new"), (tmp_path / "full", "x")])
    assert order == []  # the device is written before anything is renamed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]


def test_new_files_respect_the_umask_and_old_ones_keep_their_mode(tmp_path: Path) -> None:
    import stat

    from ragreport.fileio import write_outputs

    old = tmp_path / "old.md"
    old.write_text("old")
    old.chmod(0o640)
    mask = os.umask(0o027)
    try:
        write_outputs([(tmp_path / "new.md", "n"), (old, "o")])
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o640
    assert stat.S_IMODE(old.stat().st_mode) == 0o640
    assert old.read_text() == "o"


def test_dash_is_stdout_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ragreport.errors import RagReportError
    from ragreport.fileio import write_outputs

    assert write_outputs([("-", "to stdout\n"), (tmp_path / "f", "file")]) == [
        "-", str(tmp_path / "f")]
    assert capsys.readouterr().out == "to stdout\n"
    with pytest.raises(RagReportError, match="one output only"):
        write_outputs([("-", "a"), ("-", "b")])


def test_threads_never_print_a_traceback(files: tuple[str, str], tmp_path: Path) -> None:
    """The ``ragreport`` command silences a background thread's unexpected error (the main
    thread reports what it causes); ``--debug`` shows it."""
    code = ("import sys, threading; from ragreport.cli import app as cli; "
            "orig = cli.main\n"
            "def main(argv=None):\n"
            "    t = threading.Thread(target=lambda: 1 / 0); t.start(); t.join()\n"
            "    return orig(argv)\n"
            "cli.main = main; sys.argv = ['ragreport'] + sys.argv[1:]; "
            "raise SystemExit(cli.run())\n")
    for extra, shown in (([], False), (["--debug"], True)):
        proc = subprocess.run([sys.executable, "-c", code, "evaluate", *files, "-m", "RR",
                               *extra], capture_output=True, text=True, env=_env(),
                              check=False)
        assert proc.returncode == 0, proc.stderr
        assert ("ZeroDivisionError" in proc.stderr) is shown, proc.stderr


def test_the_command_ends_without_the_interpreter_teardown(files: tuple[str, str],
                                                          tmp_path: Path) -> None:
    """The ``ragreport`` process ends with os._exit after Python's exit handlers and a flush
    of its streams: the teardown, where pyarrow's pools, still busy after a failed read,
    abort it (exit 134 instead of 2, apache/arrow#34314), is skipped. Here: the atexit
    handler runs, the piped output is all there, the exit code is main's, and an object
    only the teardown would delete is never deleted."""
    code = ("import atexit, sys\nfrom ragreport.cli import app as cli\n"
            "class Late:\n"
            "    def __del__(self): print('teardown', flush=True)\n"
            "keep = Late()\n"
            "atexit.register(lambda: print('atexit handler', flush=True))\n"
            "sys.argv = ['ragreport'] + sys.argv[1:]\ncli.run()\n")
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 x1 r\n")
    for argv, want in (([*files, "-m", "RR"], EXIT_OK), ([files[0], str(bad)], EXIT_BAD_INPUT)):
        proc = subprocess.run([sys.executable, "-c", code, "evaluate", *argv],
                              capture_output=True, text=True, env=_env(), check=False)
        assert proc.returncode == want, proc.stderr
        assert proc.stdout.endswith("atexit handler\n"), proc.stdout
        assert "teardown" not in proc.stdout
        if want == EXIT_OK:
            assert proc.stdout.startswith("measure") and "RR " in proc.stdout
        else:
            assert proc.stderr.count("\n") == 1 and "bad.run" in proc.stderr, proc.stderr


def test_closed_stdout_is_an_error_not_a_crash(files: tuple[str, str], tmp_path: Path) -> None:
    for argv in (["evaluate", *files], ["check", *files, "--no-stats", "--jobs", "1",
                                        "--json", "-"]):
        proc = subprocess.run([sys.executable, "-m", "ragreport", *argv], stdout=None,
                              stderr=subprocess.PIPE, text=True, env=_env(), cwd=tmp_path,
                              check=False, preexec_fn=lambda: os.close(1))
        assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
        assert proc.stderr.splitlines()[-1].startswith("ragreport: error: "), proc.stderr
        assert "standard output" in proc.stderr and "Traceback" not in proc.stderr


def test_dev_stdout_redirected_to_a_file_is_appended_not_replaced(files: tuple[str, str],
                                                                  tmp_path: Path) -> None:
    """``--markdown /dev/stdout > out.md``: the Markdown goes through standard output (the
    file is neither truncated under the shell's feet nor replaced); the tables go to stderr."""
    out = tmp_path / "out.md"
    with open(out, "wb") as fh:
        fh.write(b"kept\n")
        fh.flush()
        proc = subprocess.run([sys.executable, "-m", "ragreport", "check", *files,
                               "--no-stats", "--jobs", "1", "--markdown", "/dev/stdout"],
                              stdout=fh, stderr=subprocess.PIPE, text=True, env=_env(),
                              cwd=tmp_path, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("kept\n<!-- ragreport -->")
    assert "Summary (baseline: mytag)" in proc.stderr and "baseline: mytag" not in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.md", "test.qrels", "test.run"]


def test_table_header_wider_than_every_measure(files: tuple[str, str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["evaluate", *files, "-m", "RR"], capsys)
    assert code == EXIT_OK
    head, row = out.splitlines()[:2]
    assert head.startswith("measure  ") and row.startswith("RR       ")
    assert head.index("mytag") == row.index("0.7500")  # the value under the run's name


def test_one_function_named_shown() -> None:
    """The CLI's ``shown`` is the display rule of :mod:`ragreport.present`; the command-line
    text helper is named for what it does (undecodable bytes escaped)."""
    from ragreport import present
    from ragreport.cli import args as cliargs
    from ragreport.cli import evaluate as cli

    assert cli.shown is present.shown
    assert not hasattr(cliargs, "shown")
    assert cliargs.escape_undecodable("a\udcffb") == "a\\xffb"


@pytest.mark.parametrize("command", ["evaluate", "report", "check"])
def test_help_in_sections_with_examples_and_what_it_writes(command: str) -> None:
    """--help: usage lines where QRELS and RUN look required (or --example stands for
    them), the options in titled sections, examples, and what the command writes."""
    from ragreport.cli.args import build_parser, commands

    sub = commands(build_parser())[command]
    text = sub.format_help()
    assert f"usage: ragreport {command} [options] QRELS RUN" in text
    assert f"ragreport {command} [options] --example" in text
    assert "[qrels]" not in text and "[RUN ...]" not in text.split("\n\n")[0].replace(
        "RUN [RUN ...]", "")
    sections = [line[:-1] for line in text.splitlines() if line.endswith(":")
                and not line.startswith(" ")]
    want = ["inputs", "measures and conventions", "outputs"]
    if command != "evaluate":
        want += ["targets and gates", "statistics", "baseline report", "tracking"]
    assert set(want) <= set(sections), sections
    assert f"\n  ragreport {command} " in text.split("examples:", 1)[1]
    assert "writes:" in text


def test_the_command_line_offers_the_judgment_rules_the_reader_knows() -> None:
    """cli.args keeps its own copy (it imports neither numpy nor pyarrow): the same rules."""
    from ragreport.cli.args import JUDGMENT_RULES as OFFERED
    from ragreport.io.judgments import JUDGMENT_RULES

    assert OFFERED == JUDGMENT_RULES
