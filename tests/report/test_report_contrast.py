"""The HTML report's text in a real headless Chromium, light and dark: every coloured piece of
text (verdicts, deltas, notes, failure kinds, unjudged and relevant marks, rows past K,
legends) reaches WCAG AA contrast (4.5:1) against the background it is drawn on. The colours
come from ragreport.palette (--rr-* variables) and the report's own page colours.

Needs Chromium and Playwright (see tests/browser.py); these tests fail, never skip, without them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageLog, launch
from test_report_html import example_report

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

#: Selectors of text whose colour carries a meaning or is dimmed on purpose.
SELECTORS = [
    ".verdict.pass", ".verdict.fail", ".banner", ".delta.up", ".delta.down", ".delta.same",
    ".note", ".ci", ".kind", ".kind-relevant-only-beyond-K", ".unjudged", ".unjudged-count",
    ".rel-word", ".nonrel-word", "tr.beyond td", ".qpos", ".legend", ".failures th",
    ".failures tr.zero th", "caption", "a", ".no-judged", "tr.cut td",
]

# the colour of an element's text and of the first opaque background behind it (composited
# over the page), both as [r, g, b] in 0..255; details are opened so that hidden rows render
_MEASURE = """(selectors) => {
  for (const d of document.querySelectorAll('details')) d.open = true;
  const rgba = (s) => {
    const m = s.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const behind = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let out = [255, 255, 255];
    for (const c of layers.reverse()) out = out.map((v, i) => v * (1 - c[3]) + c[i] * c[3]);
    return out;
  };
  const found = [];
  for (const sel of selectors) {
    for (const el of Array.from(document.querySelectorAll(sel)).slice(0, 30)) {
      if (!el.textContent.trim()) continue;
      const st = getComputedStyle(el);
      if (st.visibility === 'hidden' || st.display === 'none') continue;
      const fg = rgba(st.color);
      found.push({sel, text: el.textContent.trim().slice(0, 40), fg, bg: behind(el),
                  opacity: Number(st.opacity)});
    }
  }
  return found;
}"""


def _lum(rgb: list[float]) -> float:
    out = 0.0
    for w, c in zip((0.2126, 0.7152, 0.0722), rgb, strict=True):
        c = c / 255
        out += w * (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
    return out


def _ratio(a: list[float], b: list[float]) -> float:
    hi, lo = sorted((_lum(a), _lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch() as b:
        yield b


@pytest.fixture(scope="module")
def report_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("contrast") / "report.html"
    # with the drop table: 41 queries cannot decide a 0.02 drop (its inconclusive verdicts)
    path.write_text(example_report(max_drop=0.02, on_inconclusive="pass").to_html(),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_report_text_reaches_wcag_aa(browser: Browser, report_path: Path, scheme: str) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)  # type: ignore[arg-type]
    page = ctx.new_page()
    log = PageLog.attach(page)
    page.goto(report_path.as_uri())
    page.wait_for_load_state("load")
    found = page.evaluate(_MEASURE, SELECTORS)
    seen = {f["sel"] for f in found}
    assert len(found) >= 100, len(found)
    # the pieces the palette colours are all on the page
    for sel in (".verdict.fail", ".delta.down", ".unjudged", "tr.beyond td", ".no-judged",
                ".kind-relevant-only-beyond-K", "tr.cut td"):
        assert sel in seen, sel
    page_bg = found[0]["bg"]
    assert (_lum(page_bg) < 0.05) == (scheme == "dark"), page_bg
    low = []
    for f in found:
        fg = f["fg"]
        # a translucent text colour is drawn over the background
        colour = [c * fg[3] + b * (1 - fg[3]) for c, b in zip(fg[:3], f["bg"], strict=True)]
        if f["opacity"] < 1:
            colour = [c * f["opacity"] + b * (1 - f["opacity"])
                      for c, b in zip(colour, f["bg"], strict=True)]
        ratio = _ratio(colour, f["bg"])
        if ratio < 4.5:
            low.append((f["sel"], f["text"], round(ratio, 2), colour, f["bg"]))
    assert low == [], low
    log.assert_clean()
    ctx.close()


def _lab(colour: str) -> tuple[float, float, float]:
    """CIELAB (D65) of a ``#rrggbb`` colour."""
    rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    xyz = ((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g
           + 0.0722 * b, (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883)
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in xyz]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def _distance(a: str, b: str) -> float:
    return float(sum((x - y) ** 2 for x, y in zip(_lab(a), _lab(b), strict=True)) ** 0.5)


@pytest.mark.parametrize("role", ["bad", "cut"])
def test_no_colour_means_two_things(role: str) -> None:
    """The cut line and "fails / hurts" are no run's colour, nor near one (CIE76 distance
    over 25 on both pages; run B was the cut line's own vermilion, a hair from "hurts")."""
    from ragreport.palette import DARK_RUNS, LIGHT_RUNS, ROLES

    light, dark = ROLES[role]
    near = [(run, round(_distance(colour, run)))
            for colour, runs in ((light, LIGHT_RUNS), (dark, DARK_RUNS)) for run in runs
            if _distance(colour, run) <= 25]
    assert near == []
    assert _distance(ROLES["bad"][0], ROLES["good"][0]) > 50
