"""Each option's value from the one place it comes from (:func:`resolve`), the first of:

1. the command line;
2. the settings written beside the targets in the ``--targets`` file (``compat``,
   ``ignore_identical_ids``, ``ties``, ``score_precision``), when it is not the
   configuration file itself;
3. the configuration file (:mod:`ragreport.cli.configfile`): the command's own table
   (``[tool.ragreport.check]``), then the keys every command shares (``[tool.ragreport]``; a
   key a command does not have is not its concern);
4. the option's default.

A key is the option's long name with ``_`` for ``-`` (``k_max`` for ``--k-max``; ``k-max`` is
read too; the repeatable ``-m``, ``--name`` and ``--per-query-in`` are ``measures``, ``names``
and ``per_query_in``); its value is checked as the option's is (``k_max = 0`` is refused as
``--k-max 0`` is). A key no command has is an error that suggests the nearest one; so is a
value of the wrong type. Relative paths are read from the configuration file's folder.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ConfigError, RagReportError
from .args import build_parser, commands
from .configfile import COMMANDS, ConfigFile, find_config

__all__ = ["Resolved", "given_options", "option_keys", "reserved_keys", "resolve"]

#: Options that are no key: the inputs (positionals, --example), the file itself, and
#: ``targets``, whose key is the targets table (``[tool.ragreport.targets]``).
_NOT_KEYS = frozenset({"help", "version", "debug", "config", "qrels", "runs", "targets",
                       "example"})

#: Keys whose value is a path, read from the configuration file's folder.
_PATHS = frozenset({"queries", "docs", "doc_map", "slices", "per_query_in", "html",
                    "markdown", "json", "output", "template_dir", "baseline_report",
                    "per_query_out"})

#: Keys a command reads only from its own table: the shared key means something else there
#: (``html``: the report's HTML, but the notebook's export).
_OWN_TABLE_ONLY = {"notebook": frozenset({"html"})}


@cache
def option_keys() -> dict[str, dict[str, argparse.Action]]:
    """Each command's keys: command -> key -> the option's argparse action."""
    out: dict[str, dict[str, argparse.Action]] = {}
    for name, parser in commands(build_parser()).items():
        if name in COMMANDS:
            out[name] = {a.dest: a for a in parser._actions
                         if a.option_strings and a.dest not in _NOT_KEYS}
    return out


def reserved_keys() -> frozenset[str]:
    """The keys of a targets file that are no target: the options and the commands' tables
    (:func:`ragreport.io.targets.load_targets` leaves them out of the targets)."""
    every = {k for per in option_keys().values() for k in per}
    return frozenset(every | {k.replace("_", "-") for k in every} | set(COMMANDS))


@dataclass(frozen=True)
class Resolved:
    """One command's option values once every source was read, and where each value came
    from (key -> ``"--k-max"``, ``"pyproject.toml [tool.ragreport], line 3"``, ``"default"``)."""

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
    has_targets = _check_keys(cfg, keys)
    mine = keys[command]
    values = dict(parsed)
    sources = {dest: (_flag(action) if dest in given else "default")
               for dest, action in mine.items()}
    for section in (None, command):
        table = cfg.shared if section is None else cfg.sections.get(section, {})
        for raw_key, raw in table.items():
            dest = _dest(raw_key)
            if dest not in mine or dest in given or (
                    section is None and dest in _OWN_TABLE_ONLY.get(command, ())):
                continue
            where = cfg.where(raw_key, section)
            values[dest] = _value(mine[dest], raw, dest, where, cfg)
            sources[dest] = where
    if "targets" in values and "targets" not in given and has_targets \
            and parsed.get("config") is not None:
        values["targets"] = parsed["config"]  # --config's file holds the targets too
    _targets_settings(values, given, sources, cfg, mine)
    return Resolved(values, sources, cfg)


def _flag(action: argparse.Action) -> str:
    """The option's long name (``--measure`` for ``-m``; the positive form of ``--no-x``)."""
    return next((s for s in action.option_strings if s.startswith("--")),
                action.option_strings[0])


def _dest(key: str) -> str:
    return key.replace("-", "_")


def _check_keys(cfg: ConfigFile, keys: Mapping[str, Mapping[str, argparse.Action]]) -> bool:
    """Every key of the file is an option of some command (of its table's command); in a
    targets file, a top-level key that names a measure is a target. True when the file
    holds targets."""
    every = {k for per in keys.values() for k in per}
    has_targets = cfg.targets_table
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
            if dest in valid:
                continue
            if section is None and cfg.targets_at_top and _measure(key):
                has_targets = True
                continue
            raise ConfigError(_unknown(cfg, str(key), section, valid, every))
    return has_targets


def _measure(key: str) -> bool:
    from ..measures import parse_measure

    try:
        parse_measure(key)
    except (RagReportError, ValueError):  # not a measure's name
        return False
    return True


def _unknown(cfg: ConfigFile, key: str, section: str | None, valid: set[str],
             every: set[str]) -> str:
    head = f"{cfg.where(key, section)}: unknown key {key!r}"
    near = difflib.get_close_matches(_dest(key), sorted(valid), n=1, cutoff=0.6)
    if near:
        return f"{head}; did you mean {near[0]!r}?"
    if section is not None and _dest(key) in every:
        return f"{head}: 'ragreport {section}' has no such option"
    return (f"{head}; a key is a long option's name (k_max for --k-max): 'ragreport config' "
            "lists them")


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
    if isinstance(raw, (datetime.date, datetime.time)) and action.type is None:
        raw = raw.isoformat()  # a TOML date-time, for --generated-at
    numeric = action.type is not None and action.choices is None
    ok = (int, float) if numeric else (str,)
    if isinstance(raw, bool) or not isinstance(raw, ok):
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
    """A path of the file (``~`` expanded) read from its folder; ``-``, standard output, as
    is."""
    if isinstance(value, list):
        return [_relative_to(folder, v) for v in value]
    if not isinstance(value, str) or value == "-":
        return value
    value = os.path.expanduser(value)
    if os.path.isabs(value) or folder == Path.cwd():
        return value
    return os.path.join(os.path.relpath(folder), value)


def _targets_settings(values: dict[str, Any], given: set[str], sources: dict[str, str],
                      cfg: ConfigFile, mine: Mapping[str, argparse.Action]) -> None:
    """The settings written beside the targets in the ``--targets`` file (``compat`` ...),
    where the command line does not give them; the configuration file's own are its keys."""
    from ..io.targets import load_settings

    path = values.get("targets") if "targets" in given else None
    if path is None or path == "-":  # standard input: refused later, naming --targets
        return
    if cfg.path is not None and _same_file(path, cfg.path):
        return
    settings = load_settings(path)
    source = settings.pop("source", "")
    for key, value in settings.items():
        if key in mine and key not in given:
            values[key] = value
            sources[key] = source


def _same_file(path: str, other: Path) -> bool:
    try:
        return Path(path).resolve() == other.resolve()
    except OSError:
        return False


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
