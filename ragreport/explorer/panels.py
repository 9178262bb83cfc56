"""The statistics payloads the front end draws: ``summary`` (means, intervals, targets),
``compare`` (the paired test of B against A) and ``panel`` (the selected query's targets,
measures and curve against the mean curve)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analysis.compare import outcomes
from ..analysis.targets import run_checks
from ..measures import Measure
from ..present import measure_label, measure_title, target_rule
from ..targets import Target, passes
from . import limits
from ._data import floats, number
from .alone import QueryCurves
from .selection import Selection, category_label
from .stats import ViewStats

__all__ = ["PanelView", "target_label"]


def target_label(t: Target) -> str:
    """A target as the explorer lists it (``nDCG@10 ≥ 0.5``)."""
    return f"{t.measure} {target_rule(t.op, t.threshold)}"


class PanelView:
    """Payloads of the summary, the comparison and the query panel for a selection."""

    def __init__(self, stats: ViewStats, curves: QueryCurves, sel: Selection) -> None:
        self.stats = stats
        self.arrays = stats.arrays
        self.inputs = stats.arrays.inputs
        self.curves = curves
        self.sel = sel

    def mean(self, run: int) -> float | None:
        """The run's mean of the chosen measure at K (None without queries)."""
        v = self.arrays.values(run, self.sel.family, self.sel.k)
        return number(v.mean()) if len(v) else None

    def summary(self, force: bool = False) -> dict[str, Any]:
        """Mean (and interval) of the measure at K per run; the targets for run A (and B).

        Above ``INLINE_STATS_QUERIES`` queries the intervals are left out (``lo``/``hi``
        None, ``pending`` true) until computed: ``force=True``, or the statistics job."""
        sel, settings = self.sel, self.inputs.settings
        runs = []
        pending = False
        for i, r in enumerate(self.inputs.results):
            lo, hi = self.stats.band(i, sel.family, sel.k, force)
            pending |= lo is None and r.n_queries > 0
            runs.append({"name": r.run_name, "mean": self.mean(i), "lo": lo, "hi": hi,
                         "n": r.n_queries})
        targets = []
        for run in [sel.a] + ([sel.b] if sel.b >= 0 else []):
            for t in self.inputs.targets:
                row, waiting = self._target_row(run, t, force)
                pending |= waiting
                targets.append(row)
        return {"label": measure_label(sel.family, sel.k), "title": measure_title(sel.family),
                "level": settings.level, "resamples": settings.resamples,
                "pending": pending, "runs": runs, "targets": targets}

    def _target_row(self, run: int, t: Target, force: bool) -> tuple[dict[str, Any], bool]:
        """A target's row for a run, and whether its value waits for an interval."""
        r = self.inputs.results[run]
        memo = self.arrays.memo
        v = self.arrays.target_values(t, run)
        value = memo.get(("target-mean", run, t), lambda: number(v.mean())
                         if v is not None and len(v) else None)
        on_lower = t.on == "ci_lower"
        passed: bool | None = None
        pending = False
        interval: tuple[float | None, float | None] | None = None
        outcome = ""
        if on_lower and value is not None:  # the whole interval must clear it
            interval = self.stats.target_interval(run, t, force)
            value = None if interval is None else interval[0]
            pending = interval is None
        if value is not None:  # the report's check (analysis.targets.run_checks)
            ends = (None, None) if interval is None else interval
            check = memo.get(
                ("target-check", run, t, value, ends[1]),
                lambda: run_checks([r], [t], {r.run_name: {t.measure: value}}
                                   if on_lower else None, None,
                                   {r.run_name: {t.measure: ends[1]}}
                                   if on_lower and ends[1] is not None else None)[0])
            passed, outcome = check.passed, check.outcome
        return {"label": target_label(t), "run": r.run_name,
                "title": f"{measure_title(t.measure)} {target_rule(t.op, t.threshold)}"
                         + (" (on the interval: the whole of it must clear the threshold)"
                            if on_lower else ""),
                "on": t.on, "value": value, "pass": passed,
                "outcome": outcome or None}, pending

    def compare(self, force: bool = False) -> dict[str, Any]:
        """The paired comparison of B against A for the measure at K ({} without a run B);
        above ``INLINE_STATS_QUERIES`` queries the test is left out (``pending``) unless
        ``force`` (or once the statistics job ran)."""
        sel, settings = self.sel, self.inputs.settings
        if sel.b < 0:
            return {}
        va, vb = self.arrays.paired_values(sel.a, sel.b, sel.family, sel.k)
        n = len(va)
        d = vb - va
        out: dict[str, Any] = {
            "label": measure_label(sel.family, sel.k), "run_a": self.inputs.run_names[sel.a],
            "run_b": self.inputs.run_names[sel.b], "n": n,
            "mean_a": number(va.mean()) if n else None,
            "mean_b": number(vb.mean()) if n else None,
            "delta": number(d.mean()) if n else None,
            "wins": None, "losses": None, "ties": None, "level": settings.level,
            "alpha": settings.alpha,
            "lo": None, "hi": None, "p_t": None, "p_rand": None, "significant": None,
            "resamples": settings.resamples, "pending": False,
        }
        if n == 0:
            return out
        # the counts need no resampling: shown at once, also while the tests are pending
        wins, losses, ties = outcomes(va, vb)
        out |= {"wins": int(wins), "losses": int(losses), "ties": int(ties)}
        got = self.stats.compared(sel.a, sel.b, sel.family, sel.k, force)
        if got is None:
            out["pending"] = True
            return out
        return out | got

    def curve_ks(self) -> list[int]:
        """The K values the curves are drawn at: 1..k_max (above ``CURVE_POINTS`` Ks: every
        K of the evaluated curves, then Ks spread evenly on a log scale, and K)."""
        k_max = self.inputs.k_max
        if k_max <= limits.CURVE_POINTS:
            return list(range(1, k_max + 1))
        w = self._curve_width()
        extra = np.unique(np.geomspace(w + 1, k_max, limits.CURVE_POINTS - w)
                          .astype(np.int64))
        return sorted({*range(1, w + 1), *extra.tolist(), k_max, self.sel.k})

    def _curve_width(self) -> int:
        """Ks 1..this are columns of every run's evaluated curves."""
        return min(self.inputs.k_max, *(r.k_max for r in self.inputs.results))

    def mean_ks(self) -> list[int]:
        """The Ks past the evaluated curves at which the mean curve is computed (each costs a
        pass over the rankings): ``MEAN_POINTS`` spread on a log scale, and K."""
        w, k_max, k = self._curve_width(), self.inputs.k_max, self.sel.k
        if k_max <= w:
            return []
        beyond = [kk for kk in self.curve_ks() if kk > w]
        n = sum(r.n_queries for r in self.inputs.results)
        if len(beyond) <= limits.MEAN_ALL_POINTS and n * len(beyond) <= limits.MEAN_ALL_CELLS:
            return beyond
        pts = np.geomspace(w + 1, k_max, limits.MEAN_POINTS).astype(np.int64)
        return sorted({*pts.tolist(), k_max} | ({k} if k > w else set()))

    def compute_means(self) -> None:
        """Compute the mean curve at :meth:`mean_ks` for every run (the current family)."""
        for run in range(len(self.inputs.results)):
            for k in self.mean_ks():
                self.arrays.mean_at(run, self.sel.family, k)

    def panel(self) -> dict[str, Any]:
        """The selected query: the configured targets, the measures at K, its curve against
        the mean curve, its failure kind and Judged@K."""
        sel, arrays, curves = self.sel, self.arrays, self.curves
        q = sel.selected
        if not q:
            return {}
        ia = arrays.position(sel.a, q)
        has_b = sel.b >= 0
        pos_b = arrays.position(sel.b, q) if has_b else -1
        ib = None if pos_b < 0 else pos_b
        targets = []
        for t in self.inputs.targets:
            v = arrays.target_values(t, sel.a)
            value = None if v is None else number(v[ia])
            targets.append({"label": target_label(t), "title": measure_title(t.measure),
                            "value": value,
                            "pass": None if value is None else passes(value, t.op,
                                                                      t.threshold)})
        measures = []
        for fam in self.inputs.families:
            row: dict[str, Any] = {"id": str(fam), "label": measure_label(fam, sel.k),
                                   "title": measure_title(fam),
                                   "a": curves.values(sel.a, ia, q, fam, [sel.k])[0]}
            if has_b:
                row["b"] = None if ib is None else \
                    curves.values(sel.b, ib, q, fam, [sel.k])[0]
            measures.append(row)
        code = int(arrays.kinds(sel.a, sel.k)[ia])
        one = curves.result(sel.a, q)
        judged = float(one.curves[Measure("Judged")][0, sel.k - 1]) if one is not None \
            else float(arrays.judged_at(sel.a, sel.k)[ia])
        return {"qid": q, "targets": targets, "measures": measures,
                "curve": self._curve(ia, ib), "kind": category_label(code), "kind_code": code,
                "judged_at_k": floats([judged])[0], "judged_label": f"Judged@{sel.k}"}

    def _curve(self, ia: int, ib: int | None) -> dict[str, Any]:
        """The selected query's curve of the family against each run's mean curve."""
        sel, arrays, curves = self.sel, self.arrays, self.curves
        q, fam, ks = sel.selected, sel.family, self.curve_ks()
        if self.stats.inline:
            self.compute_means()
        curve: dict[str, Any] = {"family": str(fam), "label": str(fam),
                                 "title": measure_title(fam), "ks": ks,
                                 "query_a": curves.values(sel.a, ia, q, fam, ks),
                                 "mean_a": floats(arrays.mean_curve(sel.a, fam, ks))}
        if sel.b >= 0:
            curve["mean_b"] = floats(arrays.mean_curve(sel.b, fam, ks))
            if ib is not None:
                curve["query_b"] = curves.values(sel.b, ib, q, fam, ks)
        return curve
