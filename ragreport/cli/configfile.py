"""The configuration file, found and read (:func:`find_config`): ``[tool.ragreport]`` in
``./pyproject.toml``, or ``./ragreport.toml``, or the file ``--config`` names.

Its keys are the long options of the commands (:mod:`ragreport.cli.resolve` checks and
applies them); a table named after a command holds that command's own keys; the targets table
(``[tool.ragreport.targets]``, ``[targets]``) holds the targets, and the settings written in it
(``compat`` ...) count as keys of the file. In a ``ragreport.toml`` without a ``[targets]``
table, a top-level key that names a measure is a target (the file is a targets file).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["COMMANDS", "ConfigFile", "find_config"]

#: The commands that read the configuration file (each may have a table of its own).
COMMANDS = ("evaluate", "report", "check", "label-queue", "merge-labels", "notebook")

#: Settings written beside the targets (:data:`ragreport.targets.SETTINGS`).
_SETTINGS = ("compat", "ignore_identical_ids", "ties", "score_precision", "on_inconclusive")


@dataclass(frozen=True)
class ConfigFile:
    """The configuration file found (``path`` None: there is none)."""

    path: Path | None = None
    label: str = ""
    """How messages name it: ``pyproject.toml [tool.ragreport]``, ``ragreport.toml``."""
    header: str = ""
    """The TOML table holding the keys (``tool.ragreport``; "" for the top level)."""
    shared: Mapping[str, Any] = field(default_factory=dict)
    """Every command's keys."""
    sections: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each command's own keys (``[tool.ragreport.report]``)."""
    targets_at_top: bool = False
    """A targets file: its targets at the top level, beside the keys."""
    targets_table: bool = False
    """It has a targets table (``[targets]``, ``[tool.ragreport.targets]``)."""
    text: str = ""

    def where(self, key: str, section: str | None = None) -> str:
        """``label``, with the table and the line that sets ``key`` when it is found."""
        head = self.label
        if section is not None:
            head = f"{head[:-1]}.{section}]" if head.endswith("]") else f"{head} [{section}]"
        table = ".".join(t for t in (self.header, section) if t)
        line = _line_of(self.text, key, table)
        return head + (f", line {line}" if line else "")


def _line_of(text: str, key: str, table: str) -> int | None:
    """The line of table ``table`` ("" the top level) that sets ``key`` (with ``_`` or ``-``,
    bare or quoted), if exactly one does."""
    headers = list(re.finditer(r"^\s*\[\[?\s*([^\]]*?)\s*\]\]?", text, re.M))
    spans = [(0, headers[0].start() if headers else len(text), "")]
    spans += [(h.end(), headers[i + 1].start() if i + 1 < len(headers) else len(text),
               re.sub(r"\s*\.\s*", ".", h.group(1)).replace('"', "").replace("'", ""))
              for i, h in enumerate(headers)]
    spelled = "|".join(re.escape(k) for k in {key, key.replace("_", "-")})
    pattern = re.compile(rf"^\s*(?:{spelled}|\"(?:{spelled})\"|'(?:{spelled})')\s*=", re.M)
    hits = [m.start() for start, end, name in spans if name == table
            for m in pattern.finditer(text, start, end)]
    return text.count("\n", 0, hits[0]) + 1 if len(hits) == 1 else None


def find_config(explicit: str | None = None, cwd: str | os.PathLike[str] | None = None
                ) -> ConfigFile:
    """The file ``--config`` names, else ``[tool.ragreport]`` in ``cwd/pyproject.toml``, else
    ``cwd/ragreport.toml``, else none (both at once is an error: which one applies would be
    a guess). A file with a ``[tool.ragreport]`` table is read there, any other at its top
    level."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    if explicit is not None:
        if explicit in ("", "-"):
            raise ConfigError(f"--config must name a TOML file, got {explicit!r}")
        path = Path(explicit).expanduser()
        path = path if path.is_absolute() else base / path
        if path.is_dir():
            raise ConfigError(f"{explicit}: is a folder; --config names a TOML file")
        found = _read(path, explicit, explicit=True)
        if found is None:
            raise ConfigError(f"{explicit}: no [tool.ragreport] table")
        return found
    ours = _read(base / "pyproject.toml", "pyproject.toml") \
        if (base / "pyproject.toml").is_file() else None
    rr = base / "ragreport.toml"
    if ours is not None and rr.is_file():
        raise ConfigError("both ./pyproject.toml [tool.ragreport] and ./ragreport.toml "
                          "configure ragreport: keep one, or name it with --config")
    if ours is not None:
        return ours
    return _read(rr, "ragreport.toml") or ConfigFile() if rr.is_file() else ConfigFile()


def _read(path: Path, shown: str, explicit: bool = False) -> ConfigFile | None:
    """The file's configuration; None for a pyproject.toml without ``[tool.ragreport]``."""
    from ..io.targets import read_toml

    data, text = read_toml(path, shown)
    tool = data.get("tool")
    ours = tool.get("ragreport") if isinstance(tool, Mapping) else None
    if isinstance(ours, Mapping):
        return _of_table(path, f"{shown} [tool.ragreport]", "tool.ragreport", ours, text)
    if path.name == "pyproject.toml":
        return None
    return _of_table(path, shown, "", {k: v for k, v in data.items() if k != "tool"}, text)


def _of_table(path: Path, label: str, header: str, table: Mapping[str, Any],
              text: str) -> ConfigFile:
    shared: dict[str, Any] = {}
    sections: dict[str, Mapping[str, Any]] = {}
    for key, value in table.items():
        if key in COMMANDS:
            if not isinstance(value, Mapping):
                from ..io.targets import toml_kind

                raise ConfigError(f"{label}: {key} must be a table ([{key}] with the options "
                                  f"of 'ragreport {key}'), got {toml_kind(value)}")
            sections[key] = value
        elif key == "targets" or (key == "slices" and isinstance(value, Mapping)):
            continue  # the targets, and the per-slice targets of a targets file
        else:
            shared[key] = value
    targets = table.get("targets")
    if isinstance(targets, Mapping):
        _settings_of_targets(shared, targets, label)
    return ConfigFile(path, label, header, shared, sections, not header and "targets" not in table,
                      "targets" in table, text)


def _settings_of_targets(shared: dict[str, Any], targets: Mapping[str, Any],
                         label: str) -> None:
    """The settings written in the targets table are keys of the file; set twice to two
    values, they are refused."""
    from ..targets import shortened

    name, outer = label.split(" [", 1) if label.endswith("]") else (label, "")
    outer = f"[{outer}" if outer else "the top level"
    inner = f"{outer[:-1]}.targets]" if outer.endswith("]") else "[targets]"
    for key in _SETTINGS:
        if key not in targets:
            continue
        if key in shared and shared[key] != targets[key]:
            raise ConfigError(f"{name}: {key} is set twice, to "
                              f"{shortened(repr(shared[key]))} in {outer} and to "
                              f"{shortened(repr(targets[key]))} in {inner}")
        shared[key] = targets[key]
