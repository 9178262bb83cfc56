"""What the person chose in the explorer: runs A and B, the measure family and K, the list's
filter, category, slice and sort, and the selected query; each choice checked on the way in.

>>> from ragreport import evaluate
>>> from ragreport.explorer.inputs import ExplorerInputs
>>> r = evaluate({"a": {"x": 1}}, {"a": ["x", "y"]}, ["P@1", "nDCG@1"])
>>> sel = Selection(ExplorerInputs.build(r, targets=[]))
>>> sel.set_measure("P@2")
>>> str(sel.measure), sel.key()[:4]
('P@2', (0, -1, Measure('P'), 2))
"""

from __future__ import annotations

import numpy as np

from ..analysis.failures import FAILURE_KINDS
from ..errors import RagReportError
from ..measures import Measure, parse_family, parse_measure
from . import limits
from .inputs import ExplorerInputs

__all__ = ["Selection", "category_label"]

#: The curve the explorer opens on when no target names one (if the runs have it).
OPENING_FAMILY = Measure("nDCG")


def category_label(code: int) -> str:
    """The label of a failure-kind code in the list's category menu."""
    return limits.CATEGORY_LABELS.get(code, FAILURE_KINDS[code])


class Selection:
    """The explorer's choices (plain attributes, set through the checking ``set_*``)."""

    def __init__(self, inputs: ExplorerInputs) -> None:
        self.inputs = inputs
        fams = inputs.families
        self.a = 0
        self.b = 1 if len(inputs.results) > 1 else -1
        first = next((t.measure for t in inputs.targets if t.measure.has_curve
                      and t.measure.curve_key in fams), None)
        self.family: Measure = first.curve_key if first is not None else next(
            (f for f in fams if f == OPENING_FAMILY), fams[0])
        cut = first.cutoff if first is not None and first.cutoff else 10
        self.k = max(1, min(inputs.k_max, cut))
        self.sort = "worst"
        self.filter_text = ""
        self.category = ""
        self.slice = ""
        self.fails_only = False
        self.selected = ""

    @property
    def measure(self) -> Measure:
        """The chosen family at the chosen K (``nDCG@10``)."""
        return self.family.at(self.k)

    def key(self) -> tuple[object, ...]:
        """Everything the visible list depends on."""
        return (self.a, self.b, self.family, self.k, self.needle(), self.category,
                self.slice, self.fails_only, self.sort)

    def set_measure(self, family: str | Measure) -> None:
        """Choose the measure family (``"nDCG"``; ``"nDCG@10"`` sets K too)."""
        if isinstance(family, Measure):
            m = family
        elif isinstance(family, str) and family.strip():
            try:
                m = parse_measure(family) if "@" in family else parse_family(family)
            except RagReportError as exc:
                raise RagReportError(f"unknown measure {family!r}: {exc}") from None
        else:
            raise RagReportError(f"measure must be a family name such as 'nDCG', got "
                                 f"{family!r}")
        key = m.curve_key if m.has_curve else m
        families = self.inputs.families
        if key not in families:
            raise RagReportError(f"no curve for {m}; choose one of "
                                 f"{', '.join(map(str, families))}")
        if m.cutoff is not None:
            self.set_k(m.cutoff)
        self.family = key

    def set_k(self, k: int) -> None:
        """Choose the cutoff K (1..k_max)."""
        k_max = self.inputs.k_max
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) \
                or not 1 <= int(k) <= k_max:
            raise RagReportError(f"K must be an integer from 1 to {k_max}, got {k!r}")
        self.k = int(k)

    def set_filter(self, text: str) -> None:
        """Show only queries whose id or text contains ``text`` (case-insensitive)."""
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise RagReportError(f"filter must be text, got {type(text).__name__}")
        self.filter_text = text[:limits.FILTER_MAX]  # as typed (the box keeps its spaces)

    def needle(self) -> str:
        """What the filter searches: the text without surrounding spaces, lower-cased."""
        return self.filter_text.strip().lower()

    def set_category(self, category: str | int | None) -> None:
        """Show only one category (an id of :data:`~.limits.CATEGORIES`, a failure-kind code
        or label); ``""`` or None for all."""
        cats = limits.CATEGORIES
        if category is None or category == "":
            self.category = ""
            return
        if isinstance(category, str):
            if category in cats:
                self.category = category
                return
            by_label = [c for c, code in cats.items() if category_label(code) == category]
            if by_label:
                self.category = by_label[0]
                return
        elif isinstance(category, (int, np.integer)) and not isinstance(category, bool):
            by_code = [c for c, code in cats.items() if code == int(category)]
            if by_code:
                self.category = by_code[0]
                return
        raise RagReportError(f"category must be one of {', '.join(cats)} (or empty), "
                             f"got {category!r}")

    def set_slice(self, name: str | None) -> None:
        """Show only the queries of one slice; ``""`` or None for all."""
        if name is None or name == "":
            self.slice = ""
            return
        slices = self.inputs.slices
        names = slices.names if slices is not None else ()
        if not isinstance(name, str) or name not in names:
            shown_names = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5
                                                                   else "")
            raise RagReportError(f"slice must be one of {shown_names} (or empty), got {name!r}"
                                 if names else "no slices were given (slices=)")
        self.slice = name

    def set_fails_target(self, on: bool) -> None:
        """Show only queries that fail at least one configured target."""
        if not isinstance(on, (bool, np.bool_)):
            raise RagReportError(f"fails_only must be true or false, got {on!r}")
        self.fails_only = bool(on)

    def set_sort(self, sort: str) -> None:
        """One of :data:`~.limits.SORTS` (the delta sorts need a run B); ``"delta"`` =
        losses first."""
        if sort == "delta":
            sort = "delta_asc"
        if not isinstance(sort, str) or sort not in limits.SORTS:
            raise RagReportError(f"sort must be one of {', '.join(limits.SORTS)}, got "
                                 f"{sort!r}")
        if sort.startswith("delta") and self.b < 0:
            raise RagReportError("sorting by delta needs a run B")
        self.sort = sort

    def run_index(self, run: int | str, what: str) -> int:
        """A run given by name or index, checked."""
        names = self.inputs.run_names
        if isinstance(run, str):
            if run not in names:
                raise RagReportError(f"unknown {what} {run!r}; runs: {', '.join(names)}")
            return names.index(run)
        if isinstance(run, bool) or not isinstance(run, (int, np.integer)) \
                or not 0 <= int(run) < len(names):
            raise RagReportError(f"{what} must be a run name or an index below "
                                 f"{len(names)}, got {run!r}")
        return int(run)

    def set_runs(self, a: int | str, b: int | str | None = None) -> None:
        """Choose run A and run B (-1 for none; None: the first other run); A = B is
        refused. A delta sort without a run B becomes worst first."""
        ia = self.run_index(a, "run A")
        if b is None:
            ib = next((i for i in range(len(self.inputs.results)) if i != ia), -1)
        elif isinstance(b, (int, np.integer)) and not isinstance(b, bool) and int(b) == -1:
            ib = -1
        else:
            ib = self.run_index(b, "run B")
        if ia == ib:
            raise RagReportError("run A and run B must differ")
        self.a, self.b = ia, ib
        if ib < 0 and self.sort.startswith("delta"):
            self.sort = "worst"
