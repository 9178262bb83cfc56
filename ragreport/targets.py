"""Targets: what they are, how a table of them is read, and the pure pass/fail decision (the
targets files are read by :mod:`ragreport.io.targets`).

A target says "measure OP threshold" (``R@5 > 0.85``). The decision compares the value *as the
report shows it* (rounded to :data:`DISPLAY_DIGITS` decimals) so that a report can never show
0.8500 next to "failed" for a target of ">= 0.85".
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError, MeasureError
from .measures import Measure, parse_measure
from .present import DISPLAY_DIGITS, shown, target_rule, threshold_text

__all__ = [
    "DEFAULT_SOURCE",
    "DEFAULT_TARGETS",
    "DISPLAY_DIGITS",
    "Target",
    "TargetCheck",
    "check_targets",
    "decision_flips",
    "default_targets",
    "parse_targets",
    "passes",
    "shortened",
    "shown",
]

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}

#: Options a targets file may set beside its targets (``compat = "beir"``,
#: ``ignore_identical_ids = true``; :mod:`ragreport.compat`; ``on_inconclusive = "pass"``,
#: what an inconclusive drop check or target on the interval does): keys that are not targets.
SETTINGS: tuple[str, ...] = ("compat", "ignore_identical_ids", "ties", "score_precision",
                             "on_inconclusive")

#: The key of the targets table that holds per-slice targets (``[targets.slices.NAME]``,
#: :func:`load_slice_targets`): not a measure.
SLICES_KEY = "slices"

#: Where the default targets come from, as a target states it.
DEFAULT_SOURCE = "defaults (seed tutorial)"

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
    """``"mean"``, or ``"ci_lower"``: the lower bound of the bootstrap interval must clear it;
    ``"ppi_lower"``: the lower bound of the prediction-powered interval (people's and a
    model's judgments: :mod:`ragreport.analysis.ppi`)."""

    def __str__(self) -> str:
        where = {"ci_lower": " (CI lower bound)",
                 "ppi_lower": " (PPI lower bound)"}.get(self.on, "")
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
    outcome: str = ""
    """On ``ci_lower``: ``pass`` when the whole interval clears the threshold, ``fail`` when
    none of it does, ``inconclusive`` otherwise (``passed`` then says what the stated policy
    makes of it); ``""`` for other targets."""


def decision_flips(low: float, high: float, op: str, threshold: float) -> bool:
    """Whether a target's decision differs between the two ends of an interval of its value
    (over tie orders, or between the readings of unjudged documents), compared as
    :func:`passes` compares (on the value as reports show it).

    >>> decision_flips(0.84, 0.86, ">=", 0.85), decision_flips(0.849996, 0.85, ">=", 0.85)
    (True, False)
    """
    return passes(low, op, threshold) != passes(high, op, threshold)


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
                              f"'> 0.85' or '>= 0.5', got {shortened(value)!r}")
        op = m.group(1) or op
        threshold = _finite(m.group(2), key, source)
    else:
        raise ConfigError(f"{source}: target {key!r}: expected a number or a string such as "
                          f"'> 0.85', got {type(value).__name__}")
    if measure.bounded and not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"{source}: target {key!r}: threshold must be between 0 and 1, got "
                          f"{threshold_text(threshold)}")
    if on in ("ci_lower", "ppi_lower") and not measure.bounded:
        raise ConfigError(f"{source}: target {key!r}: on = \"{on}\" needs a confidence "
                          f"interval, which is computed for measures between 0 and 1 only, not "
                          f"for {measure}, whose values are not bounded by 1")
    return Target(measure, op, threshold, source, key, on)


def shortened(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _finite(value: Any, key: str, source: str) -> float:
    """A threshold as a finite float (NaN would switch the check off, inf is no target)."""
    try:
        threshold = float(value)
    except OverflowError:  # an integer beyond float64 (TOML integers are unbounded here)
        threshold = math.inf
    if not math.isfinite(threshold):
        shown_value = shortened(str(value))
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
    if on not in ("mean", "ci_lower", "ppi_lower"):
        raise ConfigError(f"{source}: target {key!r}: 'on' must be \"mean\", \"ci_lower\" or "
                          f"\"ppi_lower\", got {on!r}")
    value = table[bounds[0]]
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ConfigError(f"{source}: target {key!r}: {bounds[0]} must be a number, got "
                          f"{shortened(repr(value))}")
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
    return parse_targets(DEFAULT_TARGETS, DEFAULT_SOURCE)


def check_targets(targets: list[Target], means: Mapping[str, Mapping[Measure, float]],
                  lower: Mapping[str, Mapping[Measure, float]] | None = None,
                  ppi_lower: Mapping[str, Mapping[Measure, float]] | None = None,
                  upper: Mapping[str, Mapping[Measure, float]] | None = None,
                  on_inconclusive: str = "fail") -> list[TargetCheck]:
    """Check every target against every run's mean (``means[run][measure]``), or against the
    lower bound of its interval (``lower[run][measure]``) for targets ``on = "ci_lower"``, or
    of its prediction-powered interval (``ppi_lower[run][measure]``) for ``"ppi_lower"``.

    A ``min`` or ``gt`` target on ``ci_lower`` has three outcomes when the interval's upper
    ends are given (``upper``): pass when the whole interval clears the threshold (its lower
    bound does), fail when none of it does (its upper bound does not), inconclusive
    otherwise, which passes only under ``on_inconclusive="pass"``
    (:mod:`ragreport.analysis.noninferiority`); an interval not computed (NaN) is
    inconclusive. A ``max`` or ``lt`` target on it compares the lower bound, as before.

    >>> from ragreport.measures import parse_measure
    >>> t = parse_targets({"P@1": {"min": 0.5, "on": "ci_lower"}})
    >>> m, iv = parse_measure("P@1"), {"a": (0.55, 0.9), "b": (0.3, 0.7), "c": (0.1, 0.4)}
    >>> got = check_targets(t, {r: {m: 0.6} for r in iv}, {r: {m: lo} for r, (lo, _) in
    ...                     iv.items()}, upper={r: {m: hi} for r, (_, hi) in iv.items()})
    >>> [(c.run, c.outcome, c.passed) for c in got]
    [('a', 'pass', True), ('b', 'inconclusive', False), ('c', 'fail', False)]
    """
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
            elif t.on == "ppi_lower":
                if ppi_lower is None or t.measure not in ppi_lower.get(run, {}):
                    raise ConfigError(f"{t.source}: target {t.key or t.measure!s} is on the "
                                      "prediction-powered interval, which needs qrels with "
                                      "people's (source human) and a model's (llm:<name>) "
                                      "judgments")
                v = float(ppi_lower[run][t.measure])
            ok, outcome = passes(v, t.op, t.threshold), ""
            if t.on == "ci_lower" and upper is not None and t.op in (">=", ">"):
                outcome, ok = _interval_outcome(v, float(upper[run][t.measure]), t,
                                                on_inconclusive)
            out.append(TargetCheck(t, run, v, shown(v), ok, float(shown(v)) - t.threshold,
                                   mean, outcome))
    return out


def _interval_outcome(low: float, high: float, t: Target, on_inconclusive: str
                      ) -> tuple[str, bool]:
    """The outcome of a target on an interval and whether it passes under the policy."""
    ends = (passes(low, t.op, t.threshold), passes(high, t.op, t.threshold))
    outcome = "inconclusive" if not (math.isfinite(low) and math.isfinite(high)) \
        else "pass" if all(ends) else "fail" if not any(ends) else "inconclusive"
    return outcome, outcome == "pass" or (outcome == "inconclusive"
                                          and on_inconclusive == "pass")
