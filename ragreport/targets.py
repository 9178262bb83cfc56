"""Targets: where they come from (TOML), and the pure pass/fail decision.

A target says "measure OP threshold" (``R@5 > 0.85``). The decision compares the value *as the
report shows it* (rounded to :data:`DISPLAY_DIGITS` decimals) so that a report can never show
0.8500 next to "failed" for a target of ">= 0.85".
"""

from __future__ import annotations

import math
import operator
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError, MeasureError
from .measures import Measure, parse_measure
from .present import DISPLAY_DIGITS, shown, target_rule, threshold_text

__all__ = [
    "DEFAULT_TARGETS",
    "DISPLAY_DIGITS",
    "Target",
    "TargetCheck",
    "check_targets",
    "default_targets",
    "load_settings",
    "load_slice_targets",
    "load_targets",
    "parse_targets",
    "passes",
    "shown",
]

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}

#: Evaluation options a targets file may set beside its targets (``compat = "beir"``,
#: ``ignore_identical_ids = true``; :mod:`ragreport.compat`): keys that are not targets.
SETTINGS: tuple[str, ...] = ("compat", "ignore_identical_ids", "ties", "score_precision")

#: The key of the targets table that holds per-slice targets (``[targets.slices.NAME]``,
#: :func:`load_slice_targets`): not a measure.
SLICES_KEY = "slices"

#: The seed tutorial's "typical targets".
DEFAULT_TARGETS: dict[str, str] = {
    "R@5": "> 0.85",
    "P@3": "> 0.80",
    "F1@5": "> 0.75",
    "RR": "> 0.8",
    "nDCG@5": "> 0.85",
}


@dataclass(frozen=True)
class Target:
    """One target: ``measure op threshold``, with where it was written."""

    measure: Measure
    op: str
    threshold: float
    source: str = "defaults"
    key: str = ""
    on: str = "mean"
    """``"mean"``, or ``"ci_lower"``: the lower bound of the bootstrap interval must clear it."""

    def __str__(self) -> str:
        where = " (CI lower bound)" if self.on == "ci_lower" else ""
        return f"{self.measure} {target_rule(self.op, self.threshold)}{where}"


@dataclass(frozen=True)
class TargetCheck:
    """A target checked against one run's mean."""

    target: Target
    run: str
    value: float
    shown: str
    passed: bool
    margin: float
    mean: float = float("nan")
    """The run's mean (``value`` is the CI lower bound when the target is on it)."""


def passes(value: float, op: str, threshold: float, digits: int = DISPLAY_DIGITS) -> bool:
    """The pass/fail decision on the displayed (rounded) value.

    >>> passes(0.84996, ">=", 0.85)     # shown as 0.8500
    True
    >>> passes(0.84996, ">", 0.85)
    False
    >>> passes(0.85004, ">", 0.85)      # also shown as 0.8500: not above the target
    False
    """
    if op not in OPERATORS:
        raise ConfigError(f"operator must be one of {', '.join(OPERATORS)}, got {op!r}")
    return OPERATORS[op](float(shown(value, digits)), threshold)


#: ``"> 0.85"``: an optional operator and a plain decimal number in ASCII digits (``re.ASCII``:
#: ``\d`` would also take other scripts' digits, which ``float`` reads).
_SPEC = re.compile(r"^\s*(>=|<=|>|<)?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$",
                   re.ASCII)


def _parse_one(key: str, value: Any, source: str) -> Target:
    try:
        measure = parse_measure(key)
    except MeasureError as exc:
        raise ConfigError(f"{source}: target {key!r}: {exc}") from None
    op = ">="
    on = "mean"
    if isinstance(value, Mapping):
        value, op, on = _parse_table(key, value, source)
    if isinstance(value, bool):
        raise ConfigError(f"{source}: target {key!r}: expected a number or a string such as "
                          f"'> 0.85', got {value!r}")
    if isinstance(value, (int, float)):
        threshold = _finite(value, key, source)
    elif isinstance(value, str):
        m = _SPEC.match(value)
        if not m:
            raise ConfigError(f"{source}: target {key!r}: expected a number or a string such as "
                              f"'> 0.85' or '>= 0.5', got {_short(value)!r}")
        op = m.group(1) or op
        threshold = _finite(m.group(2), key, source)
    else:
        raise ConfigError(f"{source}: target {key!r}: expected a number or a string such as "
                          f"'> 0.85', got {type(value).__name__}")
    if measure.bounded and not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"{source}: target {key!r}: threshold must be between 0 and 1, got "
                          f"{threshold_text(threshold)}")
    if on == "ci_lower" and not measure.bounded:
        raise ConfigError(f"{source}: target {key!r}: on = \"ci_lower\" needs a confidence "
                          f"interval, which is computed for measures between 0 and 1 only, not "
                          f"for {measure}, whose values are not bounded by 1")
    return Target(measure, op, threshold, source, key, on)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _finite(value: Any, key: str, source: str) -> float:
    """A threshold as a finite float (NaN would switch the check off, inf is no target)."""
    try:
        threshold = float(value)
    except OverflowError:  # an integer beyond float64 (TOML integers are unbounded here)
        threshold = math.inf
    if not math.isfinite(threshold):
        shown_value = _short(str(value))
        raise ConfigError(f"{source}: target {key!r}: threshold must be a finite number, got "
                          f"{shown_value}")
    return threshold


_TABLE_OPS = {"min": ">=", "gt": ">", "max": "<=", "lt": "<"}


def _parse_table(key: str, table: Mapping[str, Any], source: str) -> tuple[Any, str, str]:
    """``{ min = 0.85, on = "ci_lower" }`` -> (0.85, ">=", "ci_lower")."""
    unknown = sorted(set(table) - {*_TABLE_OPS, "on"})
    if unknown:
        raise ConfigError(f"{source}: target {key!r}: unknown key {unknown[0]!r}; valid: "
                          f"{', '.join(_TABLE_OPS)}, on")
    bounds = [k for k in _TABLE_OPS if k in table]
    if len(bounds) != 1:
        raise ConfigError(f"{source}: target {key!r}: give exactly one of "
                          f"{', '.join(_TABLE_OPS)}")
    on = table.get("on", "mean")
    if on not in ("mean", "ci_lower"):
        raise ConfigError(f"{source}: target {key!r}: 'on' must be \"mean\" or \"ci_lower\", "
                          f"got {on!r}")
    value = table[bounds[0]]
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ConfigError(f"{source}: target {key!r}: {bounds[0]} must be a number, got "
                          f"{_short(repr(value))}")
    return _finite(value, key, source), _TABLE_OPS[bounds[0]], str(on)


def parse_targets(table: Mapping[str, Any], source: str = "targets") -> list[Target]:
    """Targets from a ``{measure: spec}`` mapping.

    A number means ``>=``; a string gives the operator (``"> 0.85"``, ``">= 0.5"``); a table
    ``{ min = 0.85, on = "ci_lower" }`` (also ``gt``, ``max``, ``lt``) can require the lower
    bound of the confidence interval, not the mean, to clear the threshold.

    >>> [str(t) for t in parse_targets({"nDCG@10": 0.6, "R@5": "> 0.85"})]
    ['nDCG@10 >= 0.6', 'R@5 > 0.85']
    """
    if not isinstance(table, Mapping):
        raise ConfigError(f"{source}: targets must be a table of measure = target")
    out = [_parse_one(str(k), v, source) for k, v in table.items()
           if k not in SETTINGS and k != SLICES_KEY]
    seen: dict[Measure, str] = {}
    for t in out:
        if t.measure in seen:
            raise ConfigError(f"{source}: targets {seen[t.measure]!r} and {t.key!r} name the "
                              f"same measure {t.measure}")
        seen[t.measure] = t.key
    return out


def default_targets() -> list[Target]:
    """The seed tutorial's typical targets."""
    return parse_targets(DEFAULT_TARGETS, "defaults (seed tutorial)")


def _load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path}: line {line}: not UTF-8 text (byte {exc.start}); TOML "
                          "files are UTF-8") from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except ValueError as exc:  # an integer longer than Python converts
        detail = "a number of more digits than Python reads (4300)" if "digits" in str(exc) \
            else str(exc).splitlines()[0]
        raise ConfigError(f"{path}: invalid TOML: {detail}") from None
    _check_tool_table(data, path)
    return data


def _check_tool_table(data: Mapping[str, Any], path: Path) -> None:
    """``[tool.ragreport]`` written as something else than a table (``[tool]`` with
    ``ragreport = "x"``) is an error, never a configuration silently ignored; so are
    per-slice targets beside a ``[targets]`` table instead of in it."""
    tool = data.get("tool")  # not a table: no [tool.ragreport] (another tool's concern)
    ours = tool.get("ragreport") if isinstance(tool, Mapping) else None
    if isinstance(tool, Mapping) and "ragreport" in tool and not isinstance(ours, Mapping):
        raise ConfigError(f"{path}: tool.ragreport must be a table ([tool.ragreport] with "
                          f"settings, [tool.ragreport.targets] with targets), got "
                          f"{_kind(ours)}")
    for where, holder, key in (("", data, "targets"), ("tool.ragreport.", ours, "targets")):
        if isinstance(holder, Mapping) and key in holder and SLICES_KEY in holder:
            slices = holder[SLICES_KEY]
            first = next(iter(slices), "NAME") if isinstance(slices, Mapping) else "NAME"
            raise ConfigError(f"{path}: [{where}{SLICES_KEY}.{first}] is beside "
                              f"[{where}targets], where no per-slice target is read: write "
                              f"[{where}targets.{SLICES_KEY}.{first}]")


def _kind(value: Any) -> str:
    return {str: "a string", bool: "a boolean", int: "a number", float: "a number",
            list: "an array"}.get(type(value), type(value).__name__)


def _nested(data: Mapping[str, Any], *keys: str) -> Any:
    """``data[k1][k2]...``, or None where a level is missing or is not a table."""
    node: Any = data
    for k in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(k)
    return node


def _targets_table(data: Mapping[str, Any]) -> Any:
    """The targets table of a targets file (given, or ``./ragreport.toml`` found): under
    ``[tool.ragreport.targets]``, else under ``[targets]``, else the top level."""
    table = _nested(data, "tool", "ragreport", "targets")
    return data.get("targets", data) if table is None else table


def load_targets(path: str | os.PathLike[str] | None = None,
                 cwd: str | os.PathLike[str] | None = None) -> list[Target]:
    """Targets from ``path``, else ``[tool.ragreport.targets]`` in ``cwd/pyproject.toml``, else
    ``cwd/ragreport.toml``, else the defaults.

    A targets file may hold the table at the top level, under ``[targets]`` or under
    ``[tool.ragreport.targets]``.
    """
    if path is not None:
        p = Path(path)
        return parse_targets(_targets_table(_load_toml(p)), str(p))
    base = Path(cwd) if cwd is not None else Path.cwd()
    pyproject = base / "pyproject.toml"
    if pyproject.is_file():
        data = _load_toml(pyproject)
        table = _nested(data, "tool", "ragreport", "targets")
        if table is not None:
            return parse_targets(table, f"{pyproject} [tool.ragreport.targets]")
    rr = base / "ragreport.toml"
    if rr.is_file():
        return parse_targets(_targets_table(_load_toml(rr)), str(rr))
    return default_targets()


def load_slice_targets(path: str | os.PathLike[str] | None = None,
                       cwd: str | os.PathLike[str] | None = None) -> dict[str, list[Target]]:
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
        table = _targets_table(_load_toml(p))
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
            table = _targets_table(_load_toml(rr))
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
    """Evaluation settings written beside the targets: ``compat``,
    ``ignore_identical_ids``, ``ties`` and ``score_precision`` (see :data:`SETTINGS`), read
    from the file :func:`load_targets` reads (``path``, else ``[tool.ragreport]`` in
    ``cwd/pyproject.toml``, else ``cwd/ragreport.toml``), at its top level, under
    ``[tool.ragreport]`` or in the targets table itself. A setting given twice with different
    values, an unknown preset, a non-boolean ``ignore_identical_ids`` or an unknown ``ties``
    or ``score_precision`` is a ConfigError naming the file. When a setting is
    found, ``"source"`` names the file.
    """
    from .compat import SCORE_PRECISIONS, check_compat
    from .errors import RagReportError

    source, tables = _settings_tables(path, cwd)
    found: dict[str, tuple[Any, str]] = {}
    for where, table in tables:
        if not isinstance(table, Mapping):
            continue
        for key in SETTINGS:
            if key not in table:
                continue
            if key in found and found[key][0] != table[key]:
                raise ConfigError(f"{source}: {key} is set twice, to {_short(repr(found[key][0]))} "
                                  f"in {found[key][1]} and to {_short(repr(table[key]))} in "
                                  f"{where}")
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
                              f"{_short(repr(value))}")
        out["ignore_identical_ids"] = value
    if "ties" in found:  # ragreport.core.ties: "trec_eval" or "average"
        value = found["ties"][0]
        if value not in ("trec_eval", "average"):
            raise ConfigError(f"{source}: ties must be \"trec_eval\" or \"average\", got "
                              f"{_short(repr(value))}")
        out["ties"] = value
    if "score_precision" in found:  # ragreport.compat: "float64" or "float32"
        value = found["score_precision"][0]
        if value not in SCORE_PRECISIONS:
            raise ConfigError(f"{source}: score_precision must be \"float64\" or \"float32\", "
                              f"got {_short(repr(value))}")
        out["score_precision"] = value
    return out | ({"source": source} if out else {})


def check_targets(targets: list[Target], means: Mapping[str, Mapping[Measure, float]],
                  lower: Mapping[str, Mapping[Measure, float]] | None = None
                  ) -> list[TargetCheck]:
    """Check every target against every run's mean (``means[run][measure]``), or against the
    lower bound of its interval (``lower[run][measure]``) for targets ``on = "ci_lower"``."""
    out = []
    for t in targets:
        for run, values in means.items():
            mean = float(values[t.measure])
            v = mean
            if t.on == "ci_lower":
                if lower is None:
                    raise ConfigError(f"{t.source}: target {t.key or t.measure!s} is on the "
                                      "confidence interval, but intervals were not computed")
                v = float(lower[run][t.measure])
            out.append(TargetCheck(t, run, v, shown(v), passes(v, t.op, t.threshold),
                                   float(shown(v)) - t.threshold, mean))
    return out
