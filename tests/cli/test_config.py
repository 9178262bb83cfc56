"""The command's options: one typed, frozen object read once from argv; no function of the
CLI receives argparse's Namespace or changes the options it was given."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from paths import ROOT

from ragreport.cli.config import Options, parse_options


def test_options_are_read_once_and_typed() -> None:
    opts = parse_options(["report", "q.txt", "a.txt", "b.txt", "--name", "x", "-m", "P@5",
                          "--max-drop", "0.02"])
    assert opts is not None
    assert opts.command == "report" and opts.qrels == "q.txt"
    assert opts.runs == ("a.txt", "b.txt") and opts.names == ("x",)
    assert opts.measures == ("P@5",) and opts.max_drop == 0.02
    assert opts.argv[0] == "report" and opts.outputs == []
    one = parse_options(["evaluate", "q.txt", "a.txt"])
    assert one is not None and one.runs == ("a.txt",)  # evaluate's one RUN, as a tuple too
    assert one.html is None and one.title == "Retrieval evaluation"  # report's defaults


def test_options_are_frozen() -> None:
    opts = parse_options(["check", "q.txt", "a.txt"])
    assert opts is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.html = "x.html"  # type: ignore[misc]
    assert dataclasses.replace(opts, html="x.html").html == "x.html" and opts.html is None


def test_no_command_gives_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_options([]) is None
    assert "usage: ragreport" in capsys.readouterr().out


def _cli_functions() -> list[tuple[str, ast.FunctionDef]]:
    out = []
    for path in sorted((ROOT / "ragreport" / "cli").glob("*.py")):
        if path.name in ("args.py", "config.py"):  # the parser and the one conversion
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out += [(path.name, f) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)]
    return out


def test_no_function_takes_a_namespace_or_changes_its_options() -> None:
    bad = []
    for name, f in _cli_functions():
        for a in f.args.args:
            if a.annotation is not None and "Namespace" in ast.unparse(a.annotation):
                bad.append(f"{name}:{f.name}: takes a Namespace")
        for node in ast.walk(f):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                        and t.value.id in ("opts", "args"):
                    bad.append(f"{name}:{f.name}: assigns {ast.unparse(t)}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "setattr":
                bad.append(f"{name}:{f.name}: setattr")
    assert bad == []
    assert len(_cli_functions()) > 40  # the check looked at the commands


def test_every_parser_option_is_a_field() -> None:
    """Each option of every command lands in a field (none is dropped on the way)."""
    import argparse

    from ragreport.cli.args import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    dests = {a.dest for p in sub.choices.values() for a in p._actions} - {"help", "debug"}
    assert dests <= {f.name for f in dataclasses.fields(Options)}


def test_an_empty_run_is_no_run(capsys: pytest.CaptureFixture[str]) -> None:
    """evaluate's one RUN given as "" is no run (as report's none), not a file named ""."""
    from ragreport.cli import main

    opts = parse_options(["evaluate", "q.txt", ""])
    assert opts is not None and opts.runs == ()
    capsys.readouterr()
    assert main(["evaluate", "q.txt", ""]) == 2
    assert "evaluate needs QRELS and RUN (or --example)" in capsys.readouterr().err


def test_the_configuration_example_of_the_docs_runs_as_shown(tmp_path: Path) -> None:
    """The guide's ``[tool.ragreport]`` example, written to a pyproject.toml, and its
    ``ragreport config`` command: every line the guide shows is printed (``...`` elides),
    and ``check --example`` then writes the PR comment the check table names."""
    import re
    import subprocess
    import sys

    text = (ROOT / "docs" / "guides" / "command-line.md").read_text(encoding="utf-8")
    section = text[text.index("### Configuration file"):]
    toml = re.search(r"```toml\n(.*?)```", section, re.S)
    console = re.search(r"```console\n\$ (.*?)\n(.*?)```", section, re.S)
    assert toml is not None and console is not None
    (tmp_path / "pyproject.toml").write_text(toml.group(1), encoding="utf-8")
    command = console.group(1).split()
    assert command[0] == "ragreport"
    done = subprocess.run([sys.executable, "-m", "ragreport", *command[1:]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=True)
    printed = [" ".join(line.split()) for line in done.stdout.splitlines()]
    shown = [" ".join(line.split()) for line in console.group(2).splitlines()]
    assert [line for line in shown if line != "..." and line not in printed] == []
    subprocess.run([sys.executable, "-m", "ragreport", "check", "--example", "--no-stats",
                    "--jobs", "1"], cwd=tmp_path, capture_output=True, timeout=300, check=False)
    assert "nDCG@10" in (tmp_path / "ragreport-comment.md").read_text(encoding="utf-8")


def test_a_file_value_and_its_source(tmp_path: Path) -> None:
    (tmp_path / "ragreport.toml").write_text("k_max = 7\n[report]\nseed = 4\n")
    opts = parse_options(["report", "q.txt", "r.txt", "--alpha", "0.1"], cwd=tmp_path)
    assert opts is not None and (opts.k_max, opts.seed, opts.alpha) == (7, 4, 0.1)
    assert opts.file_source("k_max") == "ragreport.toml, line 1"
    assert opts.file_source("seed") == "ragreport.toml [report], line 3"
    assert opts.file_source("alpha") is None and dict(opts.sources)["alpha"] == "--alpha"
    other = parse_options(["check", "q.txt", "r.txt"], cwd=tmp_path)
    assert other is not None and (other.k_max, other.seed) == (7, 0)  # [report] is report's


def test_config_prints_toml_that_reads_back_as_the_same_configuration(tmp_path: Path) -> None:
    """``ragreport config``'s output, comments aside, is TOML; given back with --config it
    is the same configuration, every value now from that file."""
    import tomllib

    from ragreport.cli.configshow import show_config

    (tmp_path / "ragreport.toml").write_text(
        'title = "Ré\\u007fsumé \\"x\\""\nk_max = 30\nmeasures = ["P@5", "RR"]\n'
        '[check]\nalpha = 0.01\n[targets]\n"RR" = 0.5\n', encoding="utf-8")
    shown = show_config("check", ["--seed", "3"], cwd=tmp_path)
    data = tomllib.loads(shown)
    assert data["title"] == 'Ré\x7fsumé "x"' and data["k_max"] == 30
    assert data["measures"] == ["P@5", "RR"] and data["alpha"] == 0.01 and data["seed"] == 3
    assert "# ---- targets (" in shown and "# RR >= 0.5" in shown
    (tmp_path / "eff.toml").write_text(shown, encoding="utf-8")
    again = tomllib.loads(show_config("check", ["--config", "eff.toml"], cwd=tmp_path))
    assert again == data
