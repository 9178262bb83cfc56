"""The configuration file: every long option of a command is also a key of ``[tool.ragreport]``
in ``./pyproject.toml``, or of ``./ragreport.toml`` (or of the file ``--config`` names).

Each value comes from one place, the first of (:func:`resolve`):

1. the command line;
2. the settings written beside the targets in the ``--targets`` file (``compat``,
   ``ignore_identical_ids``, ``ties``, ``score_precision``);
3. the configuration file: ``[tool.ragreport.COMMAND]`` (one command's keys), then
   ``[tool.ragreport]`` (every command's; a key a command does not have is not its concern);
4. the option's default.

A key is the option's long name with ``_`` for ``-`` (``k_max`` for ``--k-max``; ``k-max`` is
read too); its value is checked as the option's is (``k_max = 0`` is refused as ``--k-max 0``
is). A key no command has is an error that suggests the nearest one; so is a wrong type.
Relative paths are read from the configuration file's folder. ``ragreport config`` prints
every value and where it came from.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .args import build_parser, commands

__all__ = ["COMMANDS", "ConfigFile", "Resolved", "find_config", "option_keys", "resolve"]

#: The commands that read the configuration file (each may have a section of its own).
COMMANDS = ("evaluate", "report", "check", "notebook")

#: Options that are no key: the inputs (positionals), the file itself, and ``targets``, whose
#: key is the targets table (``[tool.ragreport.targets]``), not a file name.
_NOT_KEYS = frozenset({"help", "version", "debug", "config", "qrels", "runs", "targets"})

#: Tables of the configuration that hold no option (the targets and their slices).
_TABLES = frozenset({"targets", "slices"})

#: Keys whose value is a path, read from the configuration file's folder.
_PATHS = frozenset({"queries", "docs", "doc_map", "slices", "per_query_in", "html",
                    "markdown", "json", "output", "template_dir", "baseline_report",
                    "per_query_out"})


@dataclass(frozen=True)
class ConfigFile:
    """The configuration file found (``path`` None: there is none)."""

    path: Path | None = None
    label: str = ""
    """How messages name it: ``pyproject.toml [tool.ragreport]``, ``ragreport.toml``."""
    shared: Mapping[str, Any] = field(default_factory=dict)
    """Every command's keys."""
    sections: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each command's own keys (``[tool.ragreport.report]``)."""
    legacy_targets: bool = False
    """A ``ragreport.toml`` with its targets at the top level: a key that is no option there
    is a target's measure, not an error."""
    text: str = ""

    def where(self, key: str, section: str | None = None) -> str:
        """``label``, with the section and the line that sets ``key`` when it is found."""
        head = self.label
        if section is not None:
            head = f"{head[:-1]}.{section}]" if head.endswith("]") else f"{head} [{section}]"
        line = _line_of(self.text, key)
        return head + (f", line {line}" if line else "")


def _line_of(text: str, key: str) -> int | None:
    """The line that sets ``key`` (with ``_`` or ``-``, bare or quoted), if exactly one."""
    spelled = "|".join(re.escape(k) for k in {key, key.replace("_", "-")})
    pattern = re.compile(rf"^\s*(?:{spelled}|\"(?:{spelled})\"|'(?:{spelled})')\s*=", re.M)
    hits = [m.start() for m in pattern.finditer(text)]
    return text.count("\n", 0, hits[0]) + 1 if len(hits) == 1 else None


def find_config(explicit: str | None = None, cwd: str | os.PathLike[str] | None = None
                ) -> ConfigFile:
    """The file ``--config`` names, else ``[tool.ragreport]`` in ``cwd/pyproject.toml``, else
    ``cwd/ragreport.toml``, else none. A ``pyproject.toml`` is read at ``[tool.ragreport]``,
    any other file at its top level."""
    from ..io.targets import read_toml

    base = Path(cwd) if cwd is not None else Path.cwd()
    if explicit is not None:
        path = Path(explicit)
        candidates = [path if path.is_absolute() else base / path]
    else:
        candidates = [base / "pyproject.toml", base / "ragreport.toml"]
    for path in candidates:
        if explicit is None and not path.is_file():
            continue
        shown = explicit if explicit is not None else path.name
        data, text = read_toml(path, shown)
        if path.name == "pyproject.toml":
            tool = data.get("tool")
            ours = tool.get("ragreport") if isinstance(tool, Mapping) else None
            if isinstance(ours, Mapping):
                return _of_table(path, f"{shown} [tool.ragreport]", ours, text, legacy=False)
            if explicit is not None:
                raise ConfigError(f"{shown}: no [tool.ragreport] table")
            continue
        return _of_table(path, shown, data, text, legacy="targets" not in data)
    return ConfigFile()


def _of_table(path: Path, label: str, table: Mapping[str, Any], text: str, *,
              legacy: bool) -> ConfigFile:
    shared: dict[str, Any] = {}
    sections: dict[str, Mapping[str, Any]] = {}
    for key, value in table.items():
        if key in COMMANDS:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{label}: {key} must be a table ([{key}] with the options "
                                  f"of 'ragreport {key}'), got {_kind(value)}")
            sections[key] = value
        elif key not in _TABLES:
            shared[key] = value
    return ConfigFile(path, label, shared, sections, legacy, text)


def _kind(value: Any) -> str:
    return {str: "a string", bool: "a boolean", int: "a number", float: "a number",
            list: "an array"}.get(type(value), "a table" if isinstance(value, Mapping)
                                  else type(value).__name__)


def option_keys() -> dict[str, dict[str, argparse.Action]]:
    """Each command's keys: command -> key -> the option's argparse action."""
    out: dict[str, dict[str, argparse.Action]] = {}
    for name, parser in commands(build_parser()).items():
        if name in COMMANDS:
            out[name] = {a.dest: a for a in parser._actions
                         if a.option_strings and a.dest not in _NOT_KEYS}
    return out


@dataclass(frozen=True)
class Resolved:
    """One command's option values once every source was read, and where each value came from
    (key -> ``"--k-max"``, ``"pyproject.toml [tool.ragreport], line 3"``, ``"default"``)."""

    values: Mapping[str, Any]
    sources: Mapping[str, str]
    file: ConfigFile


def resolve(command: str, parsed: Mapping[str, Any], given: set[str],
            cwd: str | os.PathLike[str] | None = None) -> Resolved:
    """The values argparse ``parsed`` (defaults included) with the configuration file's
    values for the options not in ``given`` (those on the command line), then the
    ``--targets`` file's settings; checks every key of the file, for every command."""
    cfg = find_config(parsed.get("config"), cwd)
    keys = option_keys()
    _check_keys(cfg, keys)
    mine = keys[command]
    values = dict(parsed)
    sources = {dest: (max(action.option_strings, key=len) if dest in given else "default")
               for dest, action in mine.items()}
    for section in (None, command):
        table = cfg.shared if section is None else cfg.sections.get(section, {})
        for raw_key, raw in table.items():
            dest = _dest(raw_key)
            if dest not in mine or dest in given:
                continue
            where = cfg.where(raw_key, section)
            values[dest] = _value(mine[dest], raw, dest, where, cfg)
            sources[dest] = where
    _targets_of_config(values, given, cfg)
    _targets_settings(values, given, sources, cfg, mine)
    return Resolved(values, sources, cfg)


def _dest(key: str) -> str:
    return key.replace("-", "_")


def _check_keys(cfg: ConfigFile, keys: Mapping[str, Mapping[str, argparse.Action]]) -> None:
    """Every key of the file is an option of some command (of its section's command)."""
    every = {k for per in keys.values() for k in per}
    for section in (None, *cfg.sections):
        table = cfg.shared if section is None else cfg.sections[section]
        valid = every if section is None else set(keys[section])
        seen: dict[str, str] = {}
        for key in table:
            dest = _dest(str(key))
            if dest in seen:
                raise ConfigError(f"{cfg.where(str(key), section)}: {seen[dest]!r} and "
                                  f"{key!r} are the same key; give it once")
            seen[dest] = str(key)
            if dest in valid or (section is None and cfg.legacy_targets and dest not in every):
                continue
            raise ConfigError(_unknown(cfg, str(key), section, valid, every))


def _unknown(cfg: ConfigFile, key: str, section: str | None, valid: set[str],
             every: set[str]) -> str:
    head = f"{cfg.where(key, section)}: unknown key {key!r}"
    if section is not None and _dest(key) in every:
        return f"{head}: 'ragreport {section}' has no such option (put it under another command)"
    near = difflib.get_close_matches(_dest(key), sorted(valid), n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]!r}?" if near else \
        "; a key is a long option's name (k_max for --k-max): 'ragreport config' lists them"
    return head + hint


def _value(action: argparse.Action, raw: Any, dest: str, where: str, cfg: ConfigFile) -> Any:
    """The file's ``raw`` value checked and converted as the option's own would be."""
    try:
        value = _converted(action, raw)
    except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: {dest}: {exc}") from None
    if dest in _PATHS and cfg.path is not None:
        return _relative_to(cfg.path.parent, value)
    return value


def _converted(action: argparse.Action, raw: Any) -> Any:
    if isinstance(action, (argparse._StoreTrueAction, argparse.BooleanOptionalAction)):
        if not isinstance(raw, bool):
            raise ValueError(f"must be true or false, got {_shown(raw)}")
        return raw
    if isinstance(action, argparse._AppendAction):
        items = [raw] if isinstance(raw, str) else raw
        if not isinstance(items, list) or not items or \
                not all(isinstance(x, str) for x in items):
            raise ValueError(f"must be a string or an array of strings, got {_shown(raw)}")
        return [_one(action, x) for x in items]
    return _one(action, raw)


def _one(action: argparse.Action, raw: Any) -> Any:
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise ValueError(f"must be {_expected(action)}, got {_shown(raw)}")
    if action.type is None and not isinstance(raw, str):
        raise ValueError(f"must be {_expected(action)}, got {_shown(raw)}")
    value = action.type(str(raw)) if callable(action.type) else raw
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(f'"{c}"' for c in action.choices)
        raise ValueError(f"must be one of {choices}, got {_shown(raw)}")
    return value


def _expected(action: argparse.Action) -> str:
    if action.choices is not None:
        return "one of " + ", ".join(f'"{c}"' for c in action.choices)
    return "a number" if action.type is not None else "a string"


def _shown(raw: Any) -> str:
    from ..targets import shortened

    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, Mapping):
        return "a table"
    return shortened(repr(raw))


def _relative_to(folder: Path, value: Any) -> Any:
    """A relative path of the file read from its folder (``-``, standard output, as is)."""
    if isinstance(value, list):
        return [_relative_to(folder, v) for v in value]
    if not isinstance(value, str) or value == "-" or os.path.isabs(value) or \
            folder == Path.cwd():
        return value
    return os.path.join(os.path.relpath(folder), value)


def _targets_of_config(values: dict[str, Any], given: set[str], cfg: ConfigFile) -> None:
    """The file ``--config`` names holds the targets when ``--targets`` is not given."""
    if "targets" in values and "targets" not in given and values.get("config") is not None \
            and cfg.path is not None:
        values["targets"] = values["config"]


def _targets_settings(values: dict[str, Any], given: set[str], sources: dict[str, str],
                      cfg: ConfigFile, mine: Mapping[str, argparse.Action]) -> None:
    """The settings written beside the targets (``compat`` ...), where the command line does
    not give them."""
    from ..io.targets import load_settings

    path = values.get("targets")
    if path == "-":  # standard input: refused later, naming --targets
        return
    if path is None and cfg.path is not None:
        path = str(cfg.path)
    if path is None:
        return
    settings = load_settings(path)
    source = settings.pop("source", "")
    for key, value in settings.items():
        if key in mine and key not in given:
            if sources.get(key, "default") == "default" or values.get(key) != value:
                sources[key] = source
            values[key] = value


def given_options(argv: Sequence[str]) -> set[str]:
    """The options (their dests) the command line gives: argv read once more with every
    default suppressed."""
    parser = build_parser()
    for sub in commands(parser).values():
        for action in sub._actions:
            if action.option_strings:
                action.default = argparse.SUPPRESS
    ns = parser.parse_args(list(argv))
    return set(vars(ns)) - {"command", "debug"}
