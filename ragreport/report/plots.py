"""Inline SVG plots for the HTML report, drawn with matplotlib's object API (no pyplot).

Every plot is a :class:`matplotlib.figure.Figure` saved with the SVG backend under an explicit
``rc_context``, so the output depends neither on the user's ``matplotlibrc`` nor on the time:
ids are hashed with a fixed salt, the date is left out and text stays text (``svg.fonttype =
none``). The SVG is then made fit to sit inside an HTML page:

* the XML prolog, DOCTYPE and RDF metadata are dropped;
* ids nobody references are removed, the referenced ones (clip paths, markers) get a per-plot
  prefix so that several plots in one page never share an id;
* sentinel colours become CSS: text and axes use ``currentColor`` (readable on light and dark
  pages), run colours use ``var(--c0)``… with the light palette as fallback, so the page's
  stylesheet can switch to a dark palette;
* the font family is removed so the text uses the page's system font stack;
* the interval bands' group ids become ``class="band band-N"`` (N the run's index).

matplotlib escapes the text it writes (run names in legends), so user strings cannot inject
markup; :func:`_check_svg` double-checks that the result holds no script or event handler.
Every text is shown as written: mathtext is off (``text.parse_math``), so ``$x$`` or
``$\\undefined$`` in a run name is text, never parsed; a run name that starts with ``_``
(which matplotlib would leave out of an automatic legend) is in the legend.
Matplotlib is imported lazily, inside the functions.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import RagReportError
from ..palette import DARK_RUNS, LIGHT_RUNS
from ..present import escape_controls, shown

if TYPE_CHECKING:
    from .cells import Curve, Distribution, PRCurve

__all__ = [
    "BAND_ALPHA",
    "DARK_PALETTE",
    "LIGHT_PALETTE",
    "LINESTYLES",
    "MARKERS",
    "curve_svg",
    "distribution_svg",
    "draw_plot",
    "pr_curve_svg",
    "run_style",
    "warm_up",
]

#: Okabe–Ito colours for a white page, and the same hues for a dark page: the run colours of
#: :mod:`ragreport.palette` (WCAG AA on both), which the report's CSS variables also hold.
LIGHT_PALETTE = LIGHT_RUNS
DARK_PALETTE = DARK_RUNS
#: Line styles and markers cycle with the colours, so runs differ by more than colour.
LINESTYLES = ("solid", "dashed", "dashdot", "dotted")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_DASHES = {"solid": "", "dashed": "6 3", "dashdot": "6 2 1.5 2", "dotted": "1.5 2"}

# sentinel colours replaced in the SVG text (never used for anything else)
_TEXT = "#010101"
_GRID = "#020202"
_TARGET = "#030303"
# the run colours are drawn with sentinels too, then become var(--cN, light colour)
_RUN_SENTINELS = tuple(f"#0401{i:02x}" for i in range(len(LIGHT_PALETTE)))

_FONT_SIZE = 10.0

#: Opacity of the interval bands drawn behind the curves (readable on light and dark pages).
BAND_ALPHA = 0.16
_BAND_GID = "rrband-"
#: The edges of a band: where two bands overlap, each stays outlined in its run's colour.
_EDGE_GID = "rrbandedge-"


def run_style(index: int) -> dict[str, str]:
    """Colour (CSS), line style, SVG dash array and marker of the run at ``index``.

    >>> run_style(0)["color"], run_style(8)["linestyle"]
    ('var(--c0, #0072b2)', 'solid')
    """
    c = index % len(LIGHT_PALETTE)
    ls = LINESTYLES[index % len(LINESTYLES)]
    return {
        "color": f"var(--c{c}, {LIGHT_PALETTE[c]})",
        "css_var": f"--c{c}",
        "linestyle": ls,
        "dasharray": _DASHES[ls],
        "marker": MARKERS[index % len(MARKERS)],
    }


def _rc() -> dict[str, Any]:
    """Every rcParam the plots depend on, set explicitly."""
    return {
        "svg.hashsalt": "ragreport",
        "svg.fonttype": "none",
        "svg.image_inline": True,
        "text.usetex": False,
        "text.parse_math": False,  # '$' in a run name is text, not mathtext
        "font.family": "sans-serif",
        "font.size": _FONT_SIZE,
        "axes.unicode_minus": True,
        "axes.formatter.use_locale": False,
        "axes.formatter.useoffset": False,
        "path.simplify": True,
        "lines.linewidth": 1.6,
        "lines.markersize": 4.5,
        "legend.fontsize": _FONT_SIZE,
        "xtick.labelsize": _FONT_SIZE * 0.9,
        "ytick.labelsize": _FONT_SIZE * 0.9,
        "hatch.color": _TEXT,
        "figure.dpi": 72,
        "savefig.dpi": 72,
        "savefig.transparent": True,
    }


def _legend_label(name: str, limit: int = 40) -> str:
    """A run's name as a legend shows it: control characters as escapes (matplotlib would
    draw nothing for them, write them raw in the SVG and warn with them on stderr), cut to
    ``limit`` characters."""
    name = escape_controls(name)
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _style_axes(ax: Any) -> None:
    ax.set_facecolor("none")
    for side, spine in ax.spines.items():
        spine.set_color(_TEXT)
        spine.set_visible(side in ("left", "bottom"))
    ax.tick_params(colors=_TEXT, labelcolor=_TEXT)
    ax.xaxis.label.set_color(_TEXT)
    ax.yaxis.label.set_color(_TEXT)
    ax.grid(True, color=_GRID, alpha=0.18, linewidth=0.8)
    ax.set_axisbelow(True)


def _legend_figure(runs: Sequence[str], *, max_cols: int, size: tuple[float, float],
                   left: float, right: float, top_gap: float) -> tuple[Any, Any, int]:
    """A styled Figure and Axes with room below the plot for a legend of ``runs``.

    The legend has up to ``max_cols`` columns (fewer for long run names); the figure is
    ``size`` (inches) plus the legend's height. Returns the figure, its axes and the number of
    legend columns. Call inside :func:`_rc_context`.
    """
    from matplotlib.figure import Figure

    longest = max((len(_legend_label(r)) for r in runs), default=0)
    ncols = min(len(runs), max_cols if longest <= 14 else 2 if longest <= 28 else 1) or 1
    legend_rows = -(-len(runs) // ncols)
    legend_h = 0.12 + 0.2 * legend_rows if runs else 0.0  # inches
    width, height = size[0], size[1] + legend_h
    fig = Figure(figsize=(width, height), facecolor="none")
    fig.subplots_adjust(left=left, right=right, top=1 - top_gap / height,
                        bottom=(legend_h + 0.55) / height)
    ax = fig.add_subplot()
    _style_axes(ax)
    return fig, ax, ncols


def curve_svg(curve: Curve, runs: Sequence[str], *, prefix: str) -> str:
    """Mean of a measure family at K = 1..K_max, one line per run, targets marked.

    A target on a cutoff (``nDCG@5 > 0.85``) is a hollow diamond at (K, threshold) on a thin
    dashed line; a target without cutoff (``RR > 0.8``) is a dashed line across every K.
    A run's interval band (``curve.bands``), when there is one, is a translucent area in the
    run's colour behind the lines (``<g class="band band-N">`` in the SVG, N the run index),
    outlined by dotted edges in the same colour (``band-edge band-edge-N``): where two bands
    overlap, each keeps its outline.
    """
    from matplotlib.ticker import MaxNLocator

    with _rc_context():
        fig, ax, ncols = _legend_figure(runs, max_cols=4, size=(6.4, 2.9), left=0.09,
                                        right=0.98, top_gap=0.1)
        ks = list(curve.ks)
        top = 1.0
        handles: list[Any] = []
        labels: list[str] = []
        for i, run in enumerate(runs):
            ys = curve.series.get(run)
            if ys is None:
                continue
            st = run_style(i)
            top = max(top, *ys) if ys else top
            band = curve.bands.get(run)
            if band is not None and len(band[0]) and len(band[0]) == len(band[1]):
                lo, hi = band
                n = min(len(lo), len(ks))
                # behind every line; the gid becomes class="band band-N" in the SVG, and
                # its edges, dotted in the run's colour, class="band-edge band-edge-N"
                sentinel = _RUN_SENTINELS[i % len(_RUN_SENTINELS)]
                if i % 2 == 0:  # a translucent area; every other run's, hatched: where
                    ax.fill_between(ks[:n], lo[:n], hi[:n], color=sentinel,  # two overlap,
                                    alpha=BAND_ALPHA, linewidth=0, zorder=1,  # both show
                                    gid=f"{_BAND_GID}{i}")
                else:
                    ax.fill_between(ks[:n], lo[:n], hi[:n], facecolor="none",
                                    edgecolor=sentinel, hatchcolor=sentinel, hatch="////",
                                    alpha=0.45, linewidth=0, zorder=1,
                                    gid=f"{_BAND_GID}{i}")
                for edge in (lo[:n], hi[:n]):
                    ax.plot(ks[:n], edge, color=sentinel, linewidth=0.9, alpha=0.7,
                            linestyle=(0, (1.2, 1.6)), zorder=1.5, gid=f"{_EDGE_GID}{i}")
                top = max(top, *hi[:n]) if n else top
            (line,) = ax.plot(ks[: len(ys)], ys, color=_RUN_SENTINELS[i % len(_RUN_SENTINELS)],
                              linestyle=st["linestyle"], marker=st["marker"],
                              markevery=_markevery(len(ys)), zorder=3)
            handles.append(line)
            labels.append(_legend_label(run))
        for k, threshold, label in curve.targets:
            ax.axhline(threshold, color=_TARGET, linestyle=(0, (4, 3)), linewidth=0.9,
                       alpha=0.75, zorder=2)
            text = f"target {label}" + (f" @{k}" if k is not None else " (all K)")
            if k is not None:
                ax.plot([k], [threshold], linestyle="none", marker="D", markersize=8,
                        markerfacecolor="none", markeredgecolor=_TARGET, markeredgewidth=1.6,
                        zorder=4)
                ax.annotate(text, (k, threshold), xytext=(6, 5), textcoords="offset points",
                            color=_TEXT, fontsize=_FONT_SIZE * 0.85, zorder=5)
            else:
                ax.annotate(text, (ks[-1] if ks else 1, threshold), xytext=(0, 5),
                            textcoords="offset points", ha="right", color=_TEXT,
                            fontsize=_FONT_SIZE * 0.85, zorder=5)
        ax.set_xlim(0.5, (ks[-1] if ks else 1) + 0.5)
        ax.set_ylim(0.0, top * 1.05)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=12, integer=True, min_n_ticks=1))
        ax.set_xlabel("K (cutoff)")
        ax.set_ylabel(f"mean {curve.family}@K")
        if handles:
            # handles and labels given explicitly: matplotlib leaves out of an automatic legend
            # every artist whose label starts with '_', which is a legal run name
            fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.0),
                       ncols=ncols, frameon=False, labelcolor=_TEXT, handlelength=2.6,
                       borderaxespad=0.2)
        return _to_svg(fig, prefix, f"{curve.family} at K = 1 to {ks[-1] if ks else 0}")


def pr_curve_svg(pr: PRCurve, runs: Sequence[str], *, prefix: str) -> str:
    """The 11-point interpolated precision-recall curve: one line per run through the mean
    interpolated precision at recall 0.0, 0.1, ..., 1.0 (a marker at each of the 11 points).

    Both axes are [0, 1]. A target on ``IPrec@r`` is a hollow diamond at (r, threshold). The
    SVG has a ``<title>`` and a ``<desc>`` that states every run's 11 values, so a screen
    reader gets the numbers, not only "a chart".
    """
    from matplotlib.ticker import MultipleLocator

    with _rc_context():
        fig, ax, ncols = _legend_figure(runs, max_cols=3, size=(4.8, 3.4), left=0.13,
                                        right=0.97, top_gap=0.12)
        handles: list[Any] = []
        labels: list[str] = []
        for i, run in enumerate(runs):
            ys = pr.series.get(run)
            if ys is None:
                continue
            st = run_style(i)
            (line,) = ax.plot(pr.levels[: len(ys)], ys,
                              color=_RUN_SENTINELS[i % len(_RUN_SENTINELS)],
                              linestyle=st["linestyle"], marker=st["marker"], zorder=3,
                              clip_on=False)
            handles.append(line)
            labels.append(_legend_label(run))
        for r, threshold, label in pr.targets:  # a target on IPrec@r: a hollow diamond
            ax.plot([r], [threshold], linestyle="none", marker="D", markersize=8,
                    markerfacecolor="none", markeredgecolor=_TARGET, markeredgewidth=1.6,
                    zorder=4, clip_on=False)
            # short label (the caption names the measure); right of the point, or left and
            # below near the right edge
            ax.annotate(f"target {label}", (r, threshold),
                        xytext=(-7, -12) if r > 0.6 else (7, 4), textcoords="offset points",
                        ha="right" if r > 0.6 else "left", color=_TEXT,
                        fontsize=_FONT_SIZE * 0.85, zorder=5)
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.0)
        ax.xaxis.set_major_locator(MultipleLocator(0.1))
        ax.yaxis.set_major_locator(MultipleLocator(0.2))
        ax.set_xlabel("recall level r")
        ax.set_ylabel("mean interpolated precision")
        if handles:
            fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.0),
                       ncols=ncols, frameon=False, labelcolor=_TEXT, handlelength=2.6,
                       borderaxespad=0.2)
        desc = "; ".join(
            f"{run}: " + ", ".join(f"{lv:.1f} {shown(v)}" for lv, v in zip(
                pr.levels, pr.series[run], strict=False))
            for run in runs if run in pr.series)
        return _to_svg(fig, prefix, "11-point interpolated precision-recall curve",
                       desc=("Mean interpolated precision at recall 0.0 to 1.0 per run "
                             f"(recall level, precision): {desc}" if desc else
                             "No run to show."))


def draw_plot(job: tuple[Curve | Distribution | PRCurve, Sequence[str], str]) -> str:
    """The SVG of one ``(curve, distribution or P-R curve, runs, prefix)``: a picklable unit
    of work.

    The report's pages hand these to :meth:`ragreport.parallel.Workers.map`.
    """
    from .cells import Curve, PRCurve

    plot, runs, prefix = job
    if isinstance(plot, Curve):
        return curve_svg(plot, runs, prefix=prefix)
    if isinstance(plot, PRCurve):
        return pr_curve_svg(plot, runs, prefix=prefix)
    return distribution_svg(plot, runs, prefix=prefix)


def warm_up() -> None:
    """Draw one small plot and drop it: loads fonts and fills matplotlib's caches.

    A worker process runs this when it starts (:class:`ragreport.parallel.Workers`), while
    the main process is still evaluating, so its first real plot costs no more than the next.
    """
    from .cells import Curve, Distribution

    draw_plot((Curve("P", "P@K", [1, 2], {"r": [0.5, 0.25]}, [(1, 0.4, "> 0.4")],
                     {"r": ([0.4, 0.2], [0.6, 0.3])}), ["r"], "w"))
    draw_plot((Distribution("P@1", {"r": [0.0, 1.0]}), ["r"], "w"))


def _markevery(n: int) -> int:
    return max(1, n // 20)


def distribution_svg(dist: Distribution, runs: Sequence[str], *, prefix: str,
                     bins: int = 10) -> str:
    """Histogram of the per-query values of a bounded measure, runs side by side.

    The values fall in [0, 1], cut in ``bins`` equal bins (1.0 goes in the last one); a dashed
    vertical line marks each run's mean. The SVG size does not depend on the number of queries.
    """
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    with _rc_context():
        fig = Figure(figsize=(4.2, 2.6), facecolor="none")
        fig.subplots_adjust(left=0.15, right=0.97, top=0.95, bottom=0.2)
        ax = fig.add_subplot()
        _style_axes(ax)
        edges = np.linspace(0.0, 1.0, bins + 1)
        present = [(i, r) for i, r in enumerate(runs) if r in dist.values]
        n = max(1, len(present))
        width = (1.0 / bins) * 0.84 / n
        for slot, (i, run) in enumerate(present):
            vals = np.asarray(dist.values[run], dtype=np.float64)
            vals = vals[np.isfinite(vals)]
            counts, _ = np.histogram(np.clip(vals, 0.0, 1.0), bins=edges)
            share = counts / max(1, len(vals)) * 100.0
            left = edges[:-1] + (1.0 / bins) * 0.08 + slot * width
            colour = _RUN_SENTINELS[i % len(_RUN_SENTINELS)]
            ax.bar(left, share, width=width, align="edge", color=colour, linewidth=0, zorder=3)
            if len(vals):
                ax.axvline(float(vals.mean()), color=colour, linewidth=1.4,
                           linestyle=(0, (4, 2)), zorder=4)
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 100.0 if not present else None)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
        ax.set_xlabel(f"per-query {dist.measure}")
        ax.set_ylabel("queries")
        return _to_svg(fig, prefix, f"distribution of per-query {dist.measure}")


def _rc_context() -> Any:
    import matplotlib

    rc: Any = _rc()  # keys checked by matplotlib at run time
    return matplotlib.rc_context(rc)


_PROLOG = re.compile(r"\A\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_ID = re.compile(r'\sid="([^"]*)"')
_REF = re.compile(r'(url\(#|xlink:href="#|href="#)([^)"]+)')
_STYLE = re.compile(r'style="([^"]*)"')
_FONT_FAMILY = re.compile(r"font-family:[^;\"]*;?\s*")
_ROOT_SIZE = re.compile(r'\A<svg([^>]*?)\swidth="[^"]*"\sheight="[^"]*"')
_TAG = re.compile(r"<[^>]*>")
_UNSAFE = re.compile(r"\A</?\s*(?:(?:script|style|foreignObject|iframe|img|image|a|animate|set)\b"
                     r"|use\b[^>]*href=\"[^#])|\son\w+\s*=|javascript:", re.I)
# matplotlib's "*{stroke-linejoin: round; ...}" would style the whole page: the report's
# stylesheet has the same rule scoped to svg.plot
_STYLE_ELEMENT = re.compile(r"\s*<defs>\s*<style[^>]*>[^<]*</style>\s*</defs>")


def _colour_css(style: re.Match[str]) -> str:
    s = style.group(1)
    s = _FONT_FAMILY.sub("", s)
    s = s.replace(_TEXT, "currentColor").replace(_GRID, "currentColor")
    s = s.replace(_TARGET, "currentColor")
    for i, sentinel in enumerate(_RUN_SENTINELS):
        s = s.replace(sentinel, f"var(--c{i}, {LIGHT_PALETTE[i]})")
    return f'style="{s.strip()}"'


def _to_svg(fig: Any, prefix: str, label: str, desc: str = "") -> str:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", prefix):
        raise RagReportError(f"bad SVG id prefix {prefix!r}")
    import warnings

    buf = io.StringIO()
    with warnings.catch_warnings():  # a glyph the font lacks (an emoji in a run name): the
        # text is still in the SVG, drawn by the browser's fonts; no warning with user text
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        fig.savefig(buf, format="svg", metadata={"Date": None}, facecolor="none")
    svg = _PROLOG.sub("", buf.getvalue())
    svg = _METADATA.sub("", svg)
    svg = _STYLE_ELEMENT.sub("", svg)
    referenced = set(m.group(2) for m in _REF.finditer(svg))

    def _id(m: re.Match[str]) -> str:
        if m.group(1).startswith(_BAND_GID):  # an interval band: a class, not an id
            return f' class="band band-{m.group(1)[len(_BAND_GID):]}"'
        if m.group(1).startswith(_EDGE_GID):
            return f' class="band-edge band-edge-{m.group(1)[len(_EDGE_GID):]}"'
        return f' id="{prefix}-{m.group(1)}"' if m.group(1) in referenced else ""

    svg = _ID.sub(_id, svg)
    svg = _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)
    svg = _STYLE.sub(_colour_css, svg)
    svg = _ROOT_SIZE.sub(
        lambda m: f'<svg{m.group(1)} class="plot" role="img" aria-label="{_attr(label)}"', svg)
    if desc:  # an accessible name and description, escaped (run names are user text)
        root_end = svg.index(">") + 1
        svg = (f"{svg[:root_end]}\n <title>{_attr(label)}</title>\n <desc>{_attr(desc)}</desc>"
               f"{svg[root_end:]}")
    svg = svg.strip() + "\n"
    _check_svg(svg)
    return svg


def _attr(text: str) -> str:
    return (escape_controls(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _check_svg(svg: str) -> None:
    """Refuse an SVG that could run code once inlined (defence in depth)."""
    if not svg.startswith("<svg"):
        raise RagReportError("matplotlib produced an unexpected SVG document")
    for tag in _TAG.finditer(svg):  # text content has its '<' and '>' escaped
        bad = _UNSAFE.search(tag.group(0))
        if bad:
            raise RagReportError(f"plot SVG contains unsafe markup near {bad.group(0)!r}")
