"""Target checks seen through the unjudged documents: does the decision survive them?

A target on a run's mean passes or fails on trec_eval's reading (unjudged documents not
relevant). :func:`unjudged_checks` gives, for every target measure of every run, the interval
of the mean between that reading and the one with every unjudged document of the evaluated
rankings relevant (:mod:`.unjudged`), and says when the decision differs between the two ends:
"this pass depends on unjudged documents" (or "this failure ..."). What such a check does to
the gate is a stated policy, decided by :func:`gate_passes`: ``"warn"`` (the default) keeps
the decision and says so; ``"fail"`` fails a pass that depends on unjudged documents;
``"off"`` does not look (the report then shows no unjudged check).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from ..present import threshold_text
from ..targets import Target, TargetCheck, decision_flips, shown
from .unjudged import UnjudgedBounds

__all__ = ["UNJUDGED_POLICIES", "UnjudgedCheck", "check_policy", "gate_passes",
           "unjudged_checks"]

#: What a target check that depends on unjudged documents does to the gate ("off": the
#: unjudged reading is not computed at all, as before; it costs one more evaluation per run).
UNJUDGED_POLICIES = ("warn", "fail", "off")


@dataclass(frozen=True)
class UnjudgedCheck:
    """One target measure of one run through its unjudged documents (data; nothing rendered).

    ``low`` and ``high`` are the means of the per-query lower and upper ends; ``note`` is
    ``"this pass depends on unjudged documents"`` / ``"this failure depends on unjudged
    documents"`` when the target's decision differs between them (targets on the mean only),
    else ``""``. ``dependent_queries`` maps each query whose value differs between the two
    readings to its (lower, upper) values; ``grade`` the grade of an unjudged document read
    as relevant.
    """

    run: str
    measure: str
    queries: int
    unjudged: int
    low: float
    high: float
    value: float
    low_text: str
    high_text: str
    op: str
    threshold: float
    threshold_text: str
    on: str
    passed: bool
    note: str
    dependent_queries: dict[str, tuple[float, float]] = field(default_factory=dict)
    grade: float = 1.0

    @property
    def dependent(self) -> int:
        """Queries whose value differs between the two readings."""
        return len(self.dependent_queries)

    @property
    def depends(self) -> bool:
        """Whether the decision differs between the two ends of the interval."""
        return bool(self.note)

    @property
    def interval_text(self) -> str:
        return f"[{self.low_text}, {self.high_text}]"

    @property
    def summary_text(self) -> str:
        """Counts and interval in words (plain text: the run name is not in it)."""
        return (f"{self.dependent} of {self.queries} queries change when the "
                f"{self.unjudged:,} unjudged documents of their rankings are read as relevant "
                f"(grade {self.grade:g}); "
                f"mean in {self.interval_text}")

    @property
    def message(self) -> str:
        """The warning line (plain text holding the run name: escape it where shown)."""
        return (f"{self.measure} {self.op} {self.threshold_text} (run {self.run!r}): "
                f"{self.note or 'does not depend on unjudged documents'}: {self.summary_text}")


def check_policy(policy: str) -> str:
    """``policy`` if it is one of :data:`UNJUDGED_POLICIES`, else a ConfigError."""
    if policy not in UNJUDGED_POLICIES:
        raise ConfigError(f"unjudged must be one of {', '.join(UNJUDGED_POLICIES)}, "
                          f"got {policy!r}")
    return policy


def gate_passes(passed: bool, depends: bool, policy: str = "warn") -> bool:
    """The gate's decision for one target check: ``passed`` on trec_eval's reading, unless
    the policy is ``"fail"`` and the decision depends on unjudged documents.

    >>> [gate_passes(p, d, pol) for pol in UNJUDGED_POLICIES
    ...  for p, d in ((True, False), (True, True), (False, True))]
    [True, True, False, True, False, False, True, True, False]
    """
    return passed and not (depends and check_policy(policy) == "fail")


def unjudged_checks(bounds: Sequence[UnjudgedBounds], targets: Sequence[Target],
                    checks: Sequence[TargetCheck]) -> list[UnjudgedCheck]:
    """Every target measure of every run through its unjudged documents.

    A target on the interval's lower bound (``on = "ci_lower"``) gets its interval of the
    mean but no note (its decision is not on the mean).
    """
    out = []
    for b in bounds:
        run = b.judged.run_name
        for t in targets:
            lo, hi = b.values(t.measure)
            value = b.judged.values(t.measure)
            low, high = (float(lo.mean()), float(hi.mean())) if len(lo) else (0.0, 0.0)
            c = next((c for c in checks if c.target is t and c.run == run), None)
            passed = bool(c.passed) if c is not None else True
            note = ""
            if t.on == "mean" and decision_flips(low, high, t.op, t.threshold):
                note = ("this pass depends on unjudged documents" if passed
                        else "this failure depends on unjudged documents")
            dep = np.flatnonzero(lo != hi)
            ids = {b.query_ids[i]: (float(lo[i]), float(hi[i])) for i in dep.tolist()}
            out.append(UnjudgedCheck(run, str(t.measure), len(lo), int(b.n_unjudged.sum()),
                                     low, high, float(value.mean()) if len(value) else 0.0,
                                     shown(low), shown(high), t.op, t.threshold,
                                     threshold_text(t.threshold), t.on, passed, note, ids,
                                     b.grade))
    return out
