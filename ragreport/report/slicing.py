"""The report's numbers per query slice (``slices=``, ``--slices``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.curves import curve_families
from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure
from ..present import (
    shown,
    signed,
    target_rule,
    threshold_text,
)
from ..targets import Target

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..analysis.compare import PerQueryValues
    from ..analysis.slices import SliceComparison, SliceRun
    from ..parallel import Mapper

    IntArray = npt.NDArray[np.int64]

__all__ = ["MAX_SLICE_FAMILIES", "MAX_SLICE_MEASURES", "slice_report"]

from ..present import curve_title, direction_mark
from .baseline import StoredBaseline
from .breakdowns import Slice, SliceCell, SliceReport, SliceRow, SliceTargetCell, SliceTargetRow
from .cells import Curve, StatsInfo

# ---- query slices (slices=, --slices: ragreport.analysis.slices) ---------------------------

#: The most measures a slice table shows (the JSON output holds every bounded measure).
MAX_SLICE_MEASURES = 6
#: Families with a per-slice metric-vs-K curve (the first ones of the report's order, the
#: measures of the targets first): each is a plot per slice in the HTML report.
MAX_SLICE_FAMILIES = 2


def slice_report(results: Sequence[EvaluationResult], base: PerQueryValues | None,
                 slices: Any, slice_targets: Mapping[str, Sequence[Target]],
                 measures: list[Measure], targets: Sequence[Target], k_max: int,
                 info: StatsInfo | None, min_queries: int | None, workers: Mapper | None
                 ) -> SliceReport:
    """The report's view of :func:`ragreport.analysis.slices.analyse_slices`, comparing with
    ``base`` (None: no comparison). A stored baseline comes first, with its mean per slice
    (no interval: its report keeps none per slice)."""
    from ..analysis.slices import (
        MIN_QUERIES,
        analyse_slices,
        describe_rule,
        none_evaluated,
        slice_indices,
    )
    from ..io.slices import load_slices

    if slices is None:
        raise RagReportError("slice targets need slices (slices=, --slices)")
    qs = load_slices(slices)
    stored = base if isinstance(base, StoredBaseline) else None
    evaluated = set().union(*(r.query_ids for r in results))
    if not any(q in evaluated for q in qs.tags):  # say which file (analyse_slices cannot)
        raise RagReportError(f"{qs.source}: {none_evaluated(len(qs.tags))}")
    if info is None and any(t.on == "ci_lower" for ts in slice_targets.values() for t in ts):
        raise RagReportError("a slice target is on the confidence interval; do not disable "
                             "stats")
    minimum = MIN_QUERIES if min_queries is None else min_queries
    wanted = [m for m in measures if m.bounded]
    for ts in slice_targets.values():
        wanted += [t.measure for t in ts if t.measure not in wanted]
    head = list(dict.fromkeys([*(t.measure for ts in slice_targets.values() for t in ts),
                               *(t.measure for t in targets if t.measure in wanted)]))
    head = (head or wanted[:3])[:MAX_SLICE_MEASURES]
    families = curve_families(results, head)[:MAX_SLICE_FAMILIES]
    got = analyse_slices(
        results, qs.tags, wanted, base=base, families=families, k_max=k_max,
        targets=slice_targets, stats=info is not None,
        level=info.level if info else 0.95, resamples=info.resamples if info else 1,
        curve_resamples=info.curve_resamples if info else 1, seed=info.seed if info else 0,
        alpha=info.alpha if info else 0.05, min_queries=minimum, workers=workers,
        on_inconclusive=info.on_inconclusive if info else "fail")
    comp = {(c.slice, c.run, c.measure): c for c in got.comparisons}
    out = []
    for name in got.names:
        per = got.runs[name]
        trows = _target_rows(got.checks, name, slice_targets.get(name, ()))
        idx = slice_indices(stored.query_ids, [q for q, t in qs.tags.items() if name in t]) \
            if stored is not None else None
        rows = []
        for m in wanted:
            cells_ = [_stored_cell(stored, m, idx)] \
                if stored is not None and idx is not None else []
            cells_ += [_cell(r.run_name, per[r.run_name], m, comp.get((name, r.run_name, m)))
                       for r in results]
            target = next((t for t in trows if t.measure == str(m)), None)
            rows.append(SliceRow(str(m), m.family.title, cells_, target))
        curves = _slice_curves(results, per, families, slice_targets.get(name, ()))
        queries = {r: sr.n for r, sr in per.items()}
        few = got.few(name)
        if stored is not None and idx is not None:
            queries = {stored.run_name: len(idx)} | queries
            few = few or len(idx) < minimum
        out.append(Slice(name, queries, few, rows, trows, curves))
    return SliceReport(qs.source, minimum, describe_rule(minimum), out,
                       [str(m) for m in head], len(got.unknown), got.unknown[:10],
                       dict(got.untagged), qs.duplicates)


def _target_rows(checks: Sequence[Any], name: str, targets: Sequence[Target]
                 ) -> list[SliceTargetRow]:
    """The slice's targets, each with its check per run."""
    trows = []
    for t in targets:
        cells = []
        for sc in (x for x in checks if x.slice == name and x.check.target is t):
            ch = sc.check
            ok = math.isfinite(ch.value)
            cells.append(SliceTargetCell(
                ch.run, ch.value if ok else None, ch.shown, ch.passed,
                signed(ch.margin) if ok else "–", t.on,
                ch.mean if math.isfinite(ch.mean) else None, sc.reason,
                ch.margin if ok else None, ch.outcome))
        trows.append(SliceTargetRow(str(t.measure), t.op, t.threshold,
                                    threshold_text(t.threshold), t.source, cells))
    return trows


def _slice_curves(results: Sequence[EvaluationResult], per: Mapping[str, SliceRun],
                  families: Sequence[Measure], targets: Sequence[Target]) -> list[Curve]:
    """The slice's mean curves per family (with bands, and the slice targets' marks)."""
    curves = []
    for fam in families:
        series = {r.run_name: per[r.run_name].curves[fam] for r in results
                  if per[r.run_name].curves.get(fam)}
        if not series:
            continue
        marks = [(t.measure.cutoff, t.threshold, target_rule(t.op, t.threshold))
                 for t in targets if t.measure.curve_key == fam]
        bands = {r.run_name: per[r.run_name].bands[fam] for r in results
                 if fam in per[r.run_name].bands}
        width = len(next(iter(series.values())))
        curves.append(Curve(str(fam), curve_title(fam), list(range(1, width + 1)),
                            series, marks, bands))
    return curves


def _cell(run: str, sr: SliceRun, m: Measure, c: SliceComparison | None) -> SliceCell:
    """One run's cell of a slice row: its mean and interval, and its comparison with the
    baseline (``c``; None for the baseline itself or a single run)."""
    v = sr.means[m]
    has = math.isfinite(v)
    lo, hi = sr.intervals.get(m, (None, None))
    ci_text = f"[{shown(lo)}, {shown(hi)}]" if lo is not None and hi is not None else ""
    value = v if has else None
    text = shown(v) if has else "–"
    if c is None:
        return SliceCell(run, sr.n, value, text, lo, hi, ci_text)
    if c.n == 0:
        return SliceCell(run, sr.n, value, text, lo, hi, ci_text, wins=0, losses=0, ties=0)
    return SliceCell(run, sr.n, value, text, lo, hi, ci_text, c.delta, signed(c.delta),
                     direction_mark(c.delta), c.p_value, c.t_p_value, c.significant, c.wins,
                     c.losses, c.ties, c.n)


def _stored_cell(stored: StoredBaseline, m: Measure, idx: IntArray) -> SliceCell:
    """The stored baseline's mean of ``m`` over a slice's queries (``idx``), as stored."""
    has = str(m) in stored.per_query and len(idx) > 0
    v = float(stored.values(m)[idx].mean()) if has else None
    return SliceCell(stored.run_name, len(idx), v, shown(v) if v is not None else "–")
