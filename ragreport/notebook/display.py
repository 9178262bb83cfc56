"""The display helpers a generated notebook calls (:func:`summary_table`,
:func:`targets_table`, :func:`curves_figure`, :func:`worst_queries_table`): objects with
``_repr_html_`` / ``_repr_png_`` and a plain-text ``repr``, so their outputs are static and
survive nbconvert; matplotlib is imported inside the functions that need it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.result import EvaluationResult
from ..errors import RagReportError

__all__ = ["Figure", "Table", "curves_figure", "printable", "summary_table", "targets_table",
           "worst_queries_table"]


# ---- display helpers (used by the generated notebook) -------------------------------------
class Table:
    """A small table that shows as HTML in notebooks and as text elsewhere."""

    def __init__(self, header: Sequence[str], rows: Sequence[Sequence[object]],
                 caption: str = "") -> None:
        self.header = [str(h) for h in header]
        self.rows = [[str(c) for c in r] for r in rows]
        self.caption = caption

    def _repr_html_(self) -> str:
        from ..present import html_escape as esc

        cap = f"<caption>{esc(self.caption)}</caption>" if self.caption else ""
        head = "".join(f"<th>{esc(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>"
                       for r in self.rows)
        return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __repr__(self) -> str:
        widths = [max([len(h), *(len(r[i]) for r in self.rows)])
                  for i, h in enumerate(self.header)]
        lines = [self.caption] if self.caption else []
        lines.append("  ".join(h.ljust(w) for h, w in zip(self.header, widths, strict=True)))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
                  for r in self.rows]
        return "\n".join(lines)


class Figure:
    """A matplotlib figure that shows as an inline PNG (no pyplot, no backend set-up)."""

    def __init__(self, figure: Any, description: str = "") -> None:
        self.figure = figure
        self.description = description

    def _repr_png_(self) -> bytes:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(self.figure)
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=96, bbox_inches="tight")
        return buf.getvalue()

    def __repr__(self) -> str:
        return f"<figure: {self.description}>"


def printable(text: str) -> str:
    """``text`` with what is not printable escaped: control characters, lone surrogates
    (undecodable bytes of a file name), which no font draws and no line should hold."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def _as_list(results: EvaluationResult | Sequence[EvaluationResult]) -> list[EvaluationResult]:
    return [results] if isinstance(results, EvaluationResult) else list(results)


def summary_table(results: EvaluationResult | Sequence[EvaluationResult]) -> Table:
    """Mean of every summary measure, one column per run."""
    from ..present import shown

    rs = _as_list(results)
    measures: list[str] = []
    for r in rs:
        measures += [str(m) for m in r.measures if str(m) not in measures]
    rows = [[m, *(shown(r.mean(m)) for r in rs)] for m in measures]
    rows.append(["queries evaluated", *(str(r.counts.evaluated) for r in rs)])
    return Table(["measure", *(r.run_name for r in rs)], rows, "Mean over the evaluated queries")


def targets_table(results: EvaluationResult | Sequence[EvaluationResult],
                  targets: Sequence[Any] | None = None) -> Table:
    """Every target checked against every run, as the report checks it
    (:func:`ragreport.analysis.targets.run_checks`): on the mean, or for a target
    ``on = "ci_lower"`` on the lower bound of the mean's interval, computed as the report
    does (:func:`ragreport.analysis.curves.run_intervals`, its level, resamples and seed).
    Each cell shows the value compared and the verdict (default targets: the typical ones)."""
    from ..analysis.curves import run_intervals
    from ..analysis.targets import run_checks
    from ..present import target_rule
    from ..targets import default_targets

    rs = _as_list(results)
    ts = list(targets) if targets is not None else default_targets()
    on_ci = list(dict.fromkeys(t.measure for t in ts if t.on == "ci_lower"))
    lower = ({r.run_name: {m: lo for m, (lo, _) in run_intervals(r, on_ci).measures.items()}
              for r in rs} if on_ci else None)
    checks = run_checks(rs, ts, lower)
    rows = []
    for i, t in enumerate(ts):
        cells = [f"{c.shown} {'✔ pass' if c.passed else '✘ fail'}"
                 for c in checks[i * len(rs):(i + 1) * len(rs)]]
        on = " on the interval's lower bound" if t.on == "ci_lower" else ""
        rows.append([str(t.measure), f"{target_rule(t.op, t.threshold)}{on}", *cells])
    return Table(["measure", "target", *(r.run_name for r in rs)], rows, "Targets")


def curves_figure(results: EvaluationResult | Sequence[EvaluationResult],
                  families: Sequence[str] = ("P", "R", "nDCG", "RR"),
                  targets: Sequence[Any] | None = None) -> Figure:
    """Mean metric vs K (K = 1..k_max) for each family, every run overlaid, targets marked."""
    from matplotlib.figure import Figure as MplFigure

    from ..analysis.curves import mean_curve
    from ..palette import SURFACES, run_color
    from ..present import measure_title, target_rule
    from ..targets import default_targets

    rs = _as_list(results)
    ts = list(targets) if targets is not None else default_targets()
    fams = [f for f in families if all(f in {str(k) for k in r.curves} for r in rs)]
    if not fams:
        raise RagReportError("none of the families has a curve in these results")
    cols = min(2, len(fams))
    nrows = (len(fams) + cols - 1) // cols
    fig = MplFigure(figsize=(5.2 * cols, 3.4 * nrows))
    styles = ("-", "--", "-.", ":")
    markers = ("o", "s", "^", "D")
    for n, fam in enumerate(fams):
        ax = fig.add_subplot(nrows, cols, n + 1)
        lines = []
        width = 1
        for j, r in enumerate(rs):
            c = mean_curve(r, fam)
            width = max(width, len(c))
            lines += ax.plot(range(1, len(c) + 1), c, linestyle=styles[j % 4],
                             marker=markers[j % 4], markersize=3, color=run_color(j))
        for t in ts:
            if t.measure.name == fam:
                # a target past the curves' end (P@1000000000) is a line, not a point that
                # would stretch the axis to its K
                if t.measure.cutoff is not None and t.measure.cutoff <= width:
                    ax.plot([t.measure.cutoff], [t.threshold], marker="x", color=SURFACES["fg"][0],
                            markersize=8, linestyle="none")
                    ax.annotate(f"target {target_rule(t.op, t.threshold)}",
                                (t.measure.cutoff, t.threshold), fontsize=8,
                                textcoords="offset points", xytext=(4, 4), parse_math=False)
                else:
                    ax.axhline(t.threshold, color=SURFACES["fg"][0], linestyle=":", linewidth=1)
        ax.set_title(f"{fam}@K ({measure_title(fam)})", parse_math=False)
        ax.set_xlabel("K")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        # run names shown as given: handles and labels passed explicitly, so a name starting
        # with "_" is listed (an automatic legend leaves it out), never read as mathtext, and
        # what no font draws escaped
        legend = ax.legend(lines, [printable(r.run_name) for r in rs], fontsize=8)
        for text in legend.get_texts():
            text.set_parse_math(False)
    fig.tight_layout()
    return Figure(fig, "mean " + ", ".join(fams) + " vs K")


def worst_queries_table(result: EvaluationResult, measure: str = "nDCG@10", n: int = 15,
                        queries: Mapping[str, str] | None = None) -> Table:
    """The ``n`` lowest-scoring queries for a measure, with their failure kind at its K
    (:func:`ragreport.analysis.failures.worst_queries`: queries without a judged relevant
    document are not listed, the caption counts them)."""
    from ..analysis.failures import FAILURE_KINDS, worst_queries
    from ..present import shown, snippet

    w = worst_queries(result, measure, n=n)
    texts = {**result.query_texts, **(queries or {})}
    rows = []
    for i in w.indices.tolist():
        q = result.query_ids[i]
        rows.append([q, snippet(texts.get(q, ""), 80), shown(float(w.values[i])),
                     FAILURE_KINDS[int(w.kinds[i])] if w.kinds[i] else ""])
    apart = (f"; not listed: {w.no_judged_relevant} without a judged relevant document"
             if w.no_judged_relevant else "")
    return Table(["query", "text", str(w.measure), "failure"], rows,
                 f"Worst {len(rows)} of {result.n_queries} queries of {result.run_name} by "
                 f"{w.measure}{apart}")
