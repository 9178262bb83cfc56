"""One palette for every output: the runs' colours and the colours that carry a meaning.

Each colour has a value for a light page and one for a dark page, and each of them reaches
WCAG AA contrast for text (4.5:1) against the light (:data:`LIGHT_BG`, white) and the dark
(:data:`DARK_BG`, #111111, JupyterLab's dark theme; the report's dark page is
:data:`REPORT_DARK_BG`) background, so it can colour text and thin lines alike. The run
colours are the Okabe–Ito hues (distinct for colour-blind readers), darkened for white and
lightened for black where the original was too pale or too dark.

:func:`css_variables` turns the palette into ``--rr-*`` CSS custom properties, which the HTML
report's stylesheet and the explorer's both read; the report's plots take the same colours
(:func:`run_color`). Nothing is imported here.
"""

from __future__ import annotations

__all__ = [
    "DARK_BG",
    "DARK_RUNS",
    "LIGHT_BG",
    "LIGHT_RUNS",
    "PRINT_SURFACES",
    "REPORT_DARK_BG",
    "ROLES",
    "SURFACES",
    "contrast",
    "css_variables",
    "run_color",
]

#: The backgrounds the colours are checked against.
LIGHT_BG = "#ffffff"
DARK_BG = "#111111"
#: The HTML report's dark page (slightly lighter than :data:`DARK_BG`).
REPORT_DARK_BG = "#15181d"

#: Run colours on a light page: Okabe–Ito blue, vermilion, bluish green, reddish purple,
#: orange, sky blue, and a dark yellow, each darkened until it reads as text on white.
LIGHT_RUNS: tuple[str, ...] = ("#0072b2", "#be5400", "#008360", "#ba4b89", "#9a6a00",
                               "#177ab2", "#8c6d00")
#: The same hues for a dark page (light enough to read on near-black).
DARK_RUNS: tuple[str, ...] = ("#56b4e9", "#e69f00", "#2ec4a0", "#e69fc8", "#f0e442",
                              "#7fb2e5", "#f5c710")

#: Colours with a meaning: role -> (light page, dark page).
ROLES: dict[str, tuple[str, str]] = {
    "good": ("#00704f", "#5fd3a8"),      # passes a target; a change that helps
    "bad": ("#b8003d", "#ff7a9a"),       # fails a target; a change that hurts (crimson: no run's)
    "neutral": ("#57606a", "#9aa4ae"),   # no change, secondary text
    "unjudged": ("#6e6e6e", "#a3a3a3"),  # a document without a judgment
    "relevant": ("#0072b2", "#56b4e9"),  # a document judged relevant
    "cut": ("#3d444d", "#c9d1d9"),       # the cut-off line at K (no hue: no run's colour)
}

#: The page's own colours (the HTML report's surfaces): name -> (light page, dark page).
#: ``bg``/``fg`` the page and its text, ``muted`` secondary text, ``line`` rules and borders,
#: ``soft`` a shaded panel, ``accent`` links, ``pass-bg``/``fail-bg`` the background of a
#: passed/failed target, ``rel-bg`` the tint of a relevant document's row.
SURFACES: dict[str, tuple[str, str]] = {
    "bg": (LIGHT_BG, REPORT_DARK_BG),
    "fg": ("#1b1f24", "#e4e7eb"),
    "muted": ROLES["neutral"],
    "line": ("#d0d7de", "#39414b"),
    "soft": ("#f3f5f7", "#1f242b"),
    "accent": ("#0b5cad", "#79b8ff"),
    "pass-bg": ("#e3f4ec", "#12352a"),
    "fail-bg": ("#fbe7ee", "#3d1624"),
    "rel-bg": ("rgba(0, 158, 115, 0.10)", "rgba(46, 196, 160, 0.13)"),
}
#: The surfaces on paper (black on white, no tinted target cells).
PRINT_SURFACES: dict[str, str] = {
    "bg": "#ffffff", "fg": "#000000", "muted": "#444444", "line": "#bbbbbb",
    "soft": "#f2f2f2", "pass-bg": "#ffffff", "fail-bg": "#ffffff",
}


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _luminance(color: str) -> float:
    h = color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return 0.2126 * _linear(r) + 0.7152 * _linear(g) + 0.0722 * _linear(b)


def contrast(fg: str, bg: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (1 to 21).

    Parameters
    ----------
    fg, bg : str
        ``#rrggbb`` colours.

    Returns
    -------
    float
        The ratio, 1 to 21.

    >>> round(contrast("#000000", "#ffffff"), 1), round(contrast("#767676", "#ffffff"), 2)
    (21.0, 4.54)
    """
    a, b = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def run_color(index: int, dark: bool = False) -> str:
    """The colour of the run at ``index`` (the colours cycle after the seventh run).

    Parameters
    ----------
    index : int
        Position of the run.
    dark : bool
        The value for a dark page.

    Returns
    -------
    str
        ``#rrggbb``.

    >>> run_color(0), run_color(1, dark=True), run_color(7)
    ('#0072b2', '#e69f00', '#0072b2')
    """
    runs = DARK_RUNS if dark else LIGHT_RUNS
    return runs[index % len(runs)]


def _declarations(dark: bool) -> str:
    side = 1 if dark else 0
    runs = DARK_RUNS if dark else LIGHT_RUNS
    parts = [f"--rr-run-{i}: {c};" for i, c in enumerate(runs)]
    parts += [f"--rr-{role}: {pair[side]};" for role, pair in ROLES.items()]
    parts += [f"--rr-{name}: {pair[side]};" for name, pair in SURFACES.items()]
    return " ".join(parts)


def css_variables() -> str:
    """The palette as ``--rr-*`` CSS custom properties: ``--rr-run-0`` .. ``--rr-run-6`` and
    ``--rr-good``, ``--rr-bad``, ``--rr-neutral``, ``--rr-unjudged``, ``--rr-relevant``,
    ``--rr-cut``, and the surfaces (:data:`SURFACES`: ``--rr-bg``, ``--rr-fg``, ...).

    Returns
    -------
    str
        CSS text: rules setting the custom properties, light and dark.

    Light values by default (on ``:root``, the explorer's root ``.rr-explorer`` and its
    static snapshot's ``.rr-snapshot``); dark values under JupyterLab's dark theme
    (``[data-jp-theme-light="false"] .rr-explorer``), VS Code's (``.vscode-dark
    .rr-explorer``), an explicit ``.rr-dark``, and, for the report
    (a page of its own), when the reader's system prefers a dark scheme (but light on paper).

    >>> css = css_variables()
    >>> "--rr-run-0: #0072b2;" in css, "--rr-good: #5fd3a8;" in css
    (True, True)
    >>> css.count("{") == css.count("}") == 6
    True
    """
    light, dark = _declarations(False), _declarations(True)
    paper = " ".join(f"--rr-{name}: {c};" for name, c in PRINT_SURFACES.items())
    return (f":root, .rr-explorer, .rr-snapshot {{ {light} }}\n"
            f"@media (prefers-color-scheme: dark) {{ :root:not(.rr-light) {{ {dark} }} }}\n"
            f"[data-jp-theme-light=\"false\"] :is(.rr-explorer, .rr-snapshot), "
            f".vscode-dark :is(.rr-explorer, .rr-snapshot), .rr-dark {{ {dark} }}\n"
            f"@media print {{ :root {{ {light} {paper} }} }}\n")
