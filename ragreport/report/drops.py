"""The drop gate (``--max-drop``): is a run worse than the baseline on a target measure by
more than allowed, and significantly so? One :class:`~ragreport.report.cells.DropCheck` per
run and target measure, the p-values Holm-corrected over all of them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..analysis.compare import PerQueryValues, common_queries, paired_columns
from ..analysis.targets import drop_beyond, drop_fails
from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure
from ..present import p_clause, p_text, pct, shown
from ..targets import Target
from .cells import DropCheck, StatsInfo

__all__ = ["drop_checks"]


def drop_checks(results: Sequence[EvaluationResult], base: PerQueryValues,
                 targets: Sequence[Target], info: StatsInfo | None, max_drop: float
                 ) -> list[DropCheck]:
    """Target measures on which a run is worse than the baseline by more than ``max_drop``."""
    from ..stats import holm

    if info is None:
        raise RagReportError("--max-drop needs the significance tests; do not disable stats")
    if isinstance(max_drop, bool) or not isinstance(max_drop, (int, float)) or max_drop < 0:
        raise RagReportError(f"max-drop must be a number >= 0, got {max_drop!r}")
    measures = list(dict.fromkeys(t.measure for t in targets if t.measure.bounded))
    rows: list[tuple[str, Measure, float, float, float, float, int]] = []
    pvals: list[float] = []
    for r in results:
        if r is base or not measures:
            continue
        ia, ib = common_queries(r, base)
        if len(ia) == 0:
            raise RagReportError(f"run {r.run_name!r} has no query in common with the "
                                 f"baseline {base.run_name!r}")
        a = np.column_stack([base.values(m)[ib] for m in measures])
        b = np.column_stack([r.values(m)[ia] for m in measures])
        got = paired_columns(a, b, resamples=info.resamples, seed=info.seed, level=info.level)
        pvals += [c.p_rand for c in got]
        rows += [(r.run_name, m, c.delta, c.lo, c.hi, 0.0, c.n)
                 for m, c in zip(measures, got, strict=True)]
    adj = holm(pvals) if pvals else np.zeros(0)
    out = []
    for (run, m, d, lo, hi, _, n), p, raw in zip(rows, adj.tolist(), pvals, strict=True):
        significant = p < info.alpha
        too_big = drop_beyond(d, max_drop)
        failed = drop_fails(d, max_drop, significant)
        where = f"{shown(-d)} below" if d < 0 else f"{shown(d)} above"
        msg = (f"{m}: run {run!r} is {where} baseline {base.run_name!r} "
               f"({pct(info.level)} CI of the delta [{shown(lo)}, {shown(hi)}], "
               f"{p_clause(p)} {info.test}, Holm-corrected over the target measures, raw "
               f"{p_text(raw)}, {n} queries); allowed drop "
               f"{max_drop:g}"
               + ("; beyond it but not significant, so no failure"
                  if too_big and not significant else ""))
        out.append(DropCheck(run, base.run_name, str(m), d, lo, hi, float(p), max_drop,
                             significant, failed, msg, raw))
    return out
