"""The targets file (TOML): its targets (:func:`load_targets`), its per-slice targets
(:func:`load_slice_targets`) and the evaluation settings written beside them
(:func:`load_settings`), each read from ``[tool.ragreport.targets]`` or a file of its own;
what a target is and the pass/fail decision are :mod:`ragreport.targets`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..targets import SETTINGS, SLICES_KEY, Target, default_targets, parse_targets, shortened

__all__ = ["load_settings", "load_slice_targets", "load_targets", "read_toml", "toml_kind"]


def _load_toml(path: Path) -> dict[str, Any]:
    return read_toml(path)[0]


def read_toml(path: Path, shown: str | None = None) -> tuple[dict[str, Any], str]:
    """A TOML file's table and its text; an unreadable or invalid file is a ConfigError
    naming it (as ``shown``, else its path) and, where TOML says it, the line."""
    name = str(path) if shown is None else shown
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{name}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{name}: line {line}: not UTF-8 text (byte {exc.start}); TOML "
                          "files are UTF-8") from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{name}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{name}: invalid TOML: nested too deeply") from None
    except ValueError as exc:  # an integer longer than Python converts
        detail = "a number of more digits than Python reads (4300)" if "digits" in str(exc) \
            else str(exc).splitlines()[0]
        raise ConfigError(f"{name}: invalid TOML: {detail}") from None
    _check_tool_table(data, name)
    return data, text


def _check_tool_table(data: Mapping[str, Any], path: str) -> None:
    """``[tool.ragreport]`` written as something else than a table (``[tool]`` with
    ``ragreport = "x"``) is an error, never a configuration silently ignored; so are
    per-slice targets beside a ``[targets]`` table instead of in it."""
    tool = data.get("tool")  # not a table: no [tool.ragreport] (another tool's concern)
    ours = tool.get("ragreport") if isinstance(tool, Mapping) else None
    if isinstance(tool, Mapping) and "ragreport" in tool and not isinstance(ours, Mapping):
        raise ConfigError(f"{path}: tool.ragreport must be a table ([tool.ragreport] with "
                          f"settings, [tool.ragreport.targets] with targets), got "
                          f"{toml_kind(ours)}")
    for where, holder, key in (("", data, "targets"), ("tool.ragreport.", ours, "targets")):
        if isinstance(holder, Mapping) and key in holder and SLICES_KEY in holder:
            slices = holder[SLICES_KEY]
            first = next(iter(slices), "NAME") if isinstance(slices, Mapping) else "NAME"
            raise ConfigError(f"{path}: [{where}{SLICES_KEY}.{first}] is beside "
                              f"[{where}targets], where no per-slice target is read: write "
                              f"[{where}targets.{SLICES_KEY}.{first}]")


def toml_kind(value: Any) -> str:
    """What a TOML value is, as a refusal says it (``"a string"``, ``"a table"``)."""
    return {str: "a string", bool: "a boolean", int: "a number", float: "a number",
            list: "an array"}.get(type(value), "a table" if isinstance(value, Mapping)
                                  else type(value).__name__)


def _nested(data: Mapping[str, Any], *keys: str) -> Any:
    """``data[k1][k2]...``, or None where a level is missing or is not a table."""
    node: Any = data
    for k in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(k)
    return node


def _targets_table(data: Mapping[str, Any], skip: Collection[str] = ()) -> Any:
    """The targets table of a targets file (given, or ``./ragreport.toml`` found): under
    ``[tool.ragreport.targets]``, else under ``[targets]``, else the top level without the
    keys in ``skip`` (a configuration's options beside the targets)."""
    table = _nested(data, "tool", "ragreport", "targets")
    if table is not None:
        return table
    if "targets" in data:
        return data["targets"]
    return {k: v for k, v in data.items()
            if not (k == "tool" and isinstance(v, Mapping))
            and (k not in skip or (k == SLICES_KEY and isinstance(v, Mapping)))}


def load_targets(path: str | os.PathLike[str] | None = None,
                 cwd: str | os.PathLike[str] | None = None,
                 skip: Collection[str] = ()) -> list[Target]:
    """Targets from ``path``, else ``[tool.ragreport.targets]`` in ``cwd/pyproject.toml``, else
    ``cwd/ragreport.toml``, else the defaults.

    A targets file may hold the table at the top level, under ``[targets]`` or under
    ``[tool.ragreport.targets]``; at the top level, the keys in ``skip`` are no target (the
    command line's options, :func:`ragreport.cli.resolve.reserved_keys`).
    """
    if path is not None:
        p = Path(path)
        return parse_targets(_targets_table(_load_toml(p), skip), str(p))
    base = Path(cwd) if cwd is not None else Path.cwd()
    pyproject = base / "pyproject.toml"
    if pyproject.is_file():
        data = _load_toml(pyproject)
        table = _nested(data, "tool", "ragreport", "targets")
        if table is not None:
            return parse_targets(table, f"{pyproject} [tool.ragreport.targets]")
    rr = base / "ragreport.toml"
    if rr.is_file():
        return parse_targets(_targets_table(_load_toml(rr), skip), str(rr))
    return default_targets()


def load_slice_targets(path: str | os.PathLike[str] | None = None,
                       cwd: str | os.PathLike[str] | None = None,
                       skip: Collection[str] = ()) -> dict[str, list[Target]]:
    """Per-slice targets: slice name -> its targets, from the ``slices`` table of the targets
    table :func:`load_targets` reads (``[targets.slices.NAME]``, ``[slices.NAME]`` in a file
    whose targets are at the top level, or ``[tool.ragreport.targets.slices.NAME]`` in
    ``pyproject.toml``); each ``NAME`` table is a targets table (:func:`parse_targets`).
    Empty when there is none.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "t.toml").write_text('[targets]\\n"R@5" = 0.8\\n'
    ...                               '[targets.slices."multi hop"]\\n"R@5" = 0.6\\n')
    >>> {k: [str(t) for t in v] for k, v in load_slice_targets(d / "t.toml").items()}
    {'multi hop': ['R@5 >= 0.6']}
    """
    where = ""
    table: Any = None
    if path is not None:
        p = Path(path)
        table = _targets_table(_load_toml(p), skip)
        where = str(p)
    else:
        base = Path(cwd) if cwd is not None else Path.cwd()
        pyproject = base / "pyproject.toml"
        rr = base / "ragreport.toml"
        if pyproject.is_file() and _nested(_load_toml(pyproject), "tool", "ragreport",
                                           "targets") is not None:
            table = _nested(_load_toml(pyproject), "tool", "ragreport", "targets")
            where = f"{pyproject} [tool.ragreport.targets]"
        elif rr.is_file():
            table = _targets_table(_load_toml(rr), skip)
            where = str(rr)
    if not isinstance(table, Mapping) or SLICES_KEY not in table:
        return {}
    slices = table[SLICES_KEY]
    if not isinstance(slices, Mapping):
        raise ConfigError(f"{where}: 'slices' must be a table of [targets.slices.NAME] "
                          f"tables, got {type(slices).__name__}")
    out: dict[str, list[Target]] = {}
    for name, sub in slices.items():
        label = f"{where} [targets.slices.{name}]"
        if not isinstance(sub, Mapping):
            raise ConfigError(f"{label}: expected a table of measure = target, got "
                              f"{type(sub).__name__}")
        unknown = [k for k in sub if k in SETTINGS or k == SLICES_KEY]
        if unknown:
            raise ConfigError(f"{label}: {unknown[0]!r} cannot be set per slice")
        out[str(name)] = parse_targets(sub, label)
    return out


def _settings_tables(path: str | os.PathLike[str] | None,
                     cwd: str | os.PathLike[str] | None) -> tuple[str, list[tuple[str, Any]]]:
    """The file :func:`load_settings` reads and the tables of it that may hold settings."""
    def of_file(p: Path) -> tuple[str, list[tuple[str, Any]]]:
        data = _load_toml(p)
        return str(p), [("the top level", data),
                        ("[tool.ragreport]", _nested(data, "tool", "ragreport")),
                        ("[targets]", data.get("targets")),
                        ("[tool.ragreport.targets]", _nested(data, "tool", "ragreport",
                                                             "targets"))]

    if path is not None:
        return of_file(Path(path))
    base = Path(cwd) if cwd is not None else Path.cwd()
    pyproject = base / "pyproject.toml"
    if pyproject.is_file():
        tool = _nested(_load_toml(pyproject), "tool", "ragreport")
        if isinstance(tool, Mapping) and ("targets" in tool or any(k in tool for k in SETTINGS)):
            return str(pyproject), [("[tool.ragreport]", tool),
                                    ("[tool.ragreport.targets]", tool.get("targets"))]
    rr = base / "ragreport.toml"
    if rr.is_file():
        return of_file(rr)
    return "", []


def load_settings(path: str | os.PathLike[str] | None = None,
                  cwd: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Settings written beside the targets: ``compat``, ``ignore_identical_ids``, ``ties``,
    ``score_precision`` and ``on_inconclusive`` (see :data:`SETTINGS`), read
    from the file :func:`load_targets` reads (``path``, else ``[tool.ragreport]`` in
    ``cwd/pyproject.toml``, else ``cwd/ragreport.toml``), at its top level, under
    ``[tool.ragreport]`` or in the targets table itself. A setting given twice with different
    values, an unknown preset, a non-boolean ``ignore_identical_ids`` or an unknown ``ties``
    or ``score_precision`` is a ConfigError naming the file. When a setting is
    found, ``"source"`` names the file.
    """
    from ..compat import SCORE_PRECISIONS, check_compat
    from ..errors import RagReportError

    source, tables = _settings_tables(path, cwd)
    found: dict[str, tuple[Any, str]] = {}
    for where, table in tables:
        if not isinstance(table, Mapping):
            continue
        for key in SETTINGS:
            if key not in table:
                continue
            if key in found and found[key][0] != table[key]:
                first, second = shortened(repr(found[key][0])), shortened(repr(table[key]))
                raise ConfigError(f"{source}: {key} is set twice, to {first} in "
                                  f"{found[key][1]} and to {second} in {where}")
            found[key] = (table[key], where)
    out: dict[str, Any] = {}
    if "compat" in found:
        try:
            out["compat"] = check_compat(found["compat"][0], f"{source}: compat")
        except RagReportError as exc:
            raise ConfigError(str(exc)) from None
    if "ignore_identical_ids" in found:
        value = found["ignore_identical_ids"][0]
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: ignore_identical_ids must be true or false, got "
                              f"{shortened(repr(value))}")
        out["ignore_identical_ids"] = value
    # ragreport.core.ties, ragreport.compat, ragreport.analysis.noninferiority
    choices = {"ties": ("trec_eval", "average"), "score_precision": SCORE_PRECISIONS,
               "on_inconclusive": ("fail", "pass")}
    for key, allowed in choices.items():
        if key in found:
            value = found[key][0]
            if value not in allowed:
                said = " or ".join(f'"{a}"' for a in allowed)
                raise ConfigError(f"{source}: {key} must be {said}, got "
                                  f"{shortened(repr(value))}")
            out[key] = value
    return out | ({"source": source} if out else {})
