"""``ragreport config``: a command's effective configuration as TOML, each value with where it
came from (:func:`show_config`); the values are :func:`ragreport.cli.resolve.resolve`'s."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from .args import build_parser, commands
from .resolve import given_options, option_keys, reserved_keys, resolve

__all__ = ["show_config"]

_NO_FILE = "none (no [tool.ragreport] in ./pyproject.toml, no ./ragreport.toml)"


def show_config(command: str, args: Sequence[str],
                cwd: str | os.PathLike[str] | None = None) -> str:
    """The configuration ``ragreport COMMAND ARGS`` would run with: every key of the command
    (by its --help section) with its value and source, then the targets (report, check).

    Options without a value are shown commented out (``# k_max =``): TOML has no "none".
    """
    argv = [command, *args]
    ns = build_parser().parse_args(argv)
    resolved = resolve(command, vars(ns), given_options(argv), cwd)
    values = resolved.values
    label = resolved.file.label or _NO_FILE
    lines = [f"# ragreport {command}: the effective configuration",
             f"# configuration file: {label}",
             "# each value's source: the command line, the --targets file, the configuration "
             "file, or the default"]
    for title, keys in _sections(command):
        rows = [(_assignment(key, values.get(key)), resolved.sources.get(key, "default"))
                for key in keys]
        width = max(len(text) for text, _ in rows)
        lines += ["", f"# ---- {title}"]
        lines += [f"{text:<{width}}  # {source}" for text, source in rows]
    if command in ("report", "check"):
        lines += ["", *_targets(values.get("targets"), bool(values.get("example")), cwd)]
    return "\n".join(lines) + "\n"


def _sections(command: str) -> list[tuple[str, list[str]]]:
    """The command's keys, by the sections of its --help."""
    parser = commands(build_parser())[command]
    keys = option_keys()[command]
    out: list[tuple[str, list[str]]] = []
    for group in parser._action_groups:
        mine = [a.dest for a in group._group_actions if a.dest in keys]
        if mine:
            title = "options" if group.title in (None, "options", "optional arguments") \
                else group.title
            out.append((title, mine))
    return out


def _assignment(key: str, value: Any) -> str:
    """``key = value`` in TOML; ``# key =`` when there is no value."""
    if value is None:
        return f"# {key} ="
    return f"{key} = {_toml(value)}"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")


def _targets(path: Any, example: bool, cwd: str | os.PathLike[str] | None) -> list[str]:
    """The targets the command checks, commented (their file keeps their own syntax): with
    ``--example`` and none configured, the example's."""
    from ..io.targets import load_targets
    from .inputs import example_targets

    if path == "-":
        return ["# targets: read from standard input"]
    if example:
        path = example_targets(path, cwd)
    targets = load_targets(path, cwd, skip=reserved_keys())
    source = targets[0].source if targets else "none"
    return [f"# ---- targets ({source})", *(f"# {t}" for t in targets)] if targets else \
        ["# ---- targets: none"]
