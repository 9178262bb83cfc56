"""A Mermaid ``xychart-beta`` line chart of the headline measure against K, for Markdown.

GitHub renders a fenced ```` ```mermaid ```` block in comments and step summaries as a diagram.
:func:`mermaid_chart` draws the headline curve (the first target's measure family, else the
first curve) for every run, overlaid, and each target on that family as a horizontal line at
its threshold.

Mermaid's ``xychart-beta`` has no legend and names no line. The lines take the colours of
``plotColorPalette`` (set in the block's ``%%{init}%%`` directive) in the order they are drawn:
the runs in report order, in the report's run colours (:mod:`ragreport.palette`), then the
targets in grey. :func:`chart_legend` is the line printed under the chart that says which is
which (a coloured square, the colour's name, the run), so a reader who sees no colour still
reads the order.

Only text written here reaches the chart: the title and the axis titles (from the measure's
name) and numbers. Run names and target labels, which a user chooses, appear only in the
legend line, Markdown-escaped by the caller. The titles still go through
:func:`mermaid_text`, which makes any text safe inside a Mermaid quoted string.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..palette import LIGHT_RUNS, ROLES
from ..present import shown, threshold_text
from .cells import Curve
from .model import Report

__all__ = ["MAX_POINTS", "ChartLine", "chart_legend", "headline_curve", "mermaid_chart",
           "mermaid_text"]

#: At most this many K values on the x axis (beyond, every n-th K: 1, 1 + n, 1 + 2n... and
#: always the deepest K).
MAX_POINTS = 50
#: Chart titles are cut to this many characters.
MAX_TITLE = 80

#: Colour names of :data:`ragreport.palette.LIGHT_RUNS` and a square of about that colour.
_RUN_SWATCHES = (("🟦", "blue"), ("🟧", "vermilion"), ("🟩", "green"), ("🟪", "purple"),
                 ("🟫", "ochre"), ("🔵", "sky blue"), ("🟨", "yellow"))
_TARGET_COLOR = ROLES["neutral"][0]

#: Characters that mean something to Mermaid or to a Markdown fence, and what replaces them.
_REPLACE = {'"': "'", "`": "'", "[": "(", "]": ")", "{": "(", "}": ")", ";": ",",
            "#": "＃", "&": "＆", "<": "‹", ">": "›", "%": "％", "\\": "/", "|": "/"}


def mermaid_text(text: str, limit: int = MAX_TITLE) -> str:
    """``text`` safe inside a Mermaid quoted string (a chart or axis title).

    Mermaid has no escape inside ``"..."``: quotes, backticks, brackets, braces, ``;``,
    ``#``, ``&``, ``<``, ``>``, ``%``, ``|`` and backslashes are replaced by look-alikes,
    every control or format character (newlines, bidirectional overrides) by a space,
    ``-->`` (an axis range arrow) by ``-›``; the result is cut to ``limit`` characters.

    >>> mermaid_text('a "b" [c]\\n`d` --> e')
    "a 'b' (c) 'd' -› e"
    >>> mermaid_text("%%{init: x}%%")
    '％％(init: x)％％'
    """
    out = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch
                  for ch in text)
    while "-->" in out:
        out = out.replace("-->", "->")
    out = "".join(_REPLACE.get(ch, ch) for ch in out)
    out = re.sub(r"\s+", " ", out).strip()
    if len(out) > limit:
        out = out[: limit - 1].rstrip() + "…"
    return out


@dataclass(frozen=True)
class ChartLine:
    """One drawn line: a run's curve or a target's threshold, in drawing order."""

    kind: str  # "run" or "target"
    name: str  # the run's name, or the target's label ("R@5 > 0.85"): user text, unescaped
    color: str
    swatch: str
    color_name: str


def headline_curve(report: Report) -> Curve | None:
    """The curve the chart shows: the first target's measure family when it has a curve,
    else the first curve; None when the report has none.

    >>> headline_curve(_empty_report()) is None
    True
    """
    if not report.curves:
        return None
    by_family = {c.family: c for c in report.curves}
    from ..measures import parse_measure

    for t in report.targets:
        try:
            key = str(parse_measure(t.measure).curve_key)
        except ValueError:
            continue
        if key in by_family:
            return by_family[key]
    return report.curves[0]


def _empty_report() -> Report:
    return Report("", "", "", "", [], [], "", [], 0, 0, [], [], [], [], [], [], [], {})


def _ks(n: int) -> list[int]:
    """The K values shown: all of 1..n up to :data:`MAX_POINTS`, else every step-th from 1,
    and always ``n`` itself (the deepest K, the one a reader looks for), so at most
    :data:`MAX_POINTS` values; only the last gap may be shorter than the others.

    >>> _ks(5), _ks(120)[:4], _ks(120)[-2:], len(_ks(120))
    ([1, 2, 3, 4, 5], [1, 4, 7, 10], [118, 120], 41)
    >>> _ks(100)[-2:], len(_ks(100)), _ks(1), _ks(0)
    ([97, 100], 34, [1], [])
    """
    if n <= MAX_POINTS:
        return list(range(1, n + 1))
    step = math.ceil((n - 1) / (MAX_POINTS - 1))
    out = list(range(1, n + 1, step))
    if out[-1] != n:
        out.append(n)
    return out


def _lines(report: Report, curve: Curve) -> list[ChartLine]:
    out = []
    for i, run in enumerate(r for r in report.runs if r in curve.series):
        swatch, name = _RUN_SWATCHES[i % len(_RUN_SWATCHES)]
        out.append(ChartLine("run", run, LIGHT_RUNS[i % len(LIGHT_RUNS)], swatch, name))
    for k, threshold, label in curve.targets:
        family = curve.family
        at = f"{family}@{k}" if k is not None else family
        text = f"{at} {label}" if label else f"{at} {threshold_text(threshold)}"
        out.append(ChartLine("target", text,
                             _TARGET_COLOR, "⬛", "grey"))
    return out


def _num(x: float) -> str:
    """A value as the chart gets it (4 decimals, no trailing zeros: ``0.5``, ``0.3716``)."""
    text = shown(x).rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def mermaid_chart(report: Report) -> tuple[str, list[ChartLine]] | None:
    """The fenced ```` ```mermaid ```` block and the lines it draws (in drawing order, for
    :func:`chart_legend`), or None when the report has no curve.

    The x axis is K (every K up to :data:`MAX_POINTS` values, else every n-th and the deepest
    K), the y axis
    runs from 0 to 1 for a bounded measure (else from 0 to the largest value), one ``line``
    per run in report order, then one flat ``line`` per target on the family.
    """
    curve = headline_curve(report)
    if curve is None:
        return None
    lines = _lines(report, curve)
    runs = [ln for ln in lines if ln.kind == "run"]
    if not runs:
        return None
    ks = [k for k in _ks(len(curve.ks))]
    series = [[curve.series[ln.name][k - 1] for k in ks] for ln in runs]
    targets = [t for t in curve.targets]
    values = [v for s in series for v in s] + [t[1] for t in targets]
    top = 1.0 if all(0.0 <= v <= 1.0 for v in values) else max([1.0, *values]) * 1.05
    palette = ", ".join(ln.color for ln in lines)
    title = mermaid_text(f"{curve.title}: mean over queries")
    ytitle = mermaid_text(curve.family + "@K")
    block = [
        "```mermaid",
        '%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "' + palette + '"}}}}%%',
        "xychart-beta",
        f'    title "{title}"',
        f'    x-axis "K" [{", ".join(str(curve.ks[k - 1]) for k in ks)}]',
        f'    y-axis "{ytitle}" 0 --> {_num(top)}',
    ]
    block += [f"    line [{', '.join(_num(v) for v in s)}]" for s in series]
    block += [f"    line [{', '.join(_num(t[1]) for _ in ks)}]" for t in targets]
    block.append("```")
    return "\n".join(block), lines


def chart_legend(lines: Sequence[ChartLine], names: Sequence[str]) -> str:
    """The line under the chart: which line is which, in drawing order. ``names`` are the
    lines' names as the caller escaped them for Markdown.

    >>> ln = [ChartLine("run", "bm25", "#0072b2", "🟦", "blue"),
    ...       ChartLine("target", "R@5 > 0.85", "#57606a", "⬛", "grey")]
    >>> chart_legend(ln, ["bm25", "R@5 &gt; 0.85"])
    'Lines, in drawing order: 🟦 bm25 (blue) · ⬛ target R@5 &gt; 0.85 (grey)'
    """
    parts = [f"{ln.swatch} {'target ' if ln.kind == 'target' else ''}{name} ({ln.color_name})"
             for ln, name in zip(lines, names, strict=True)]
    return "Lines, in drawing order: " + " · ".join(parts)
