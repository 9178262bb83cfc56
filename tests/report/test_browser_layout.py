"""The HTML report's layout in a real headless Chromium, at 1,400 and 700 px wide, light and
dark: the sections in the order a reader needs them, no page wider than the window, no short
text wrapped a word per line, and a visible cue on every table that scrolls sideways. Each
page is also kept as a screenshot (``RAGREPORT_SCREENSHOTS``: a folder to copy them into).

Needs Chromium and Playwright (see tests/browser.py): when either is missing these tests fail
with a message saying what to install; they never skip.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import PageLog, launch
from test_report_html import example_report

import ragreport
from ragreport.targets import parse_targets

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

#: Table cells of a few words laid out on at least this many lines are wrapped a word per line.
WRAPPED_LINES = 3

#: Every short-text cell of every table, with the lines its text takes; the tops of its text
#: boxes are clustered (an inline tag or key sits a few pixels off the line).
_CELL_LINES = """() => {
  const out = [];
  for (const c of document.querySelectorAll('table td, table th')) {
    const text = c.innerText.trim();
    const words = text ? text.split(/\\s+/).length : 0;
    if (words < 2 || words > 6 || c.offsetParent === null) continue;
    const range = document.createRange();
    range.selectNodeContents(c);
    const tops = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0)
      .map((r) => r.top).sort((a, b) => a - b);
    let lines = 0, last = -1e9;
    for (const t of tops) { if (t - last > 8) { lines += 1; last = t; } }
    out.push({table: c.closest('table').className, text, words, lines});
  }
  return out;
}"""

#: Every scrolling table wrapper that holds more than it shows, and its background.
_SCROLLERS = """() => [...document.querySelectorAll('.scroll')]
  .filter((s) => s.offsetParent !== null && s.scrollWidth > s.clientWidth + 1)
  .map((s) => ({table: s.querySelector('table')?.className || '',
                overflow: getComputedStyle(s).overflowX,
                background: getComputedStyle(s).backgroundImage}))"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch() as b:
        yield b


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The example report, and the same with three runs, slices and a drop gate."""
    folder = tmp_path_factory.mktemp("layout")
    plain = folder / "example.html"
    plain.write_text(example_report().to_html(), encoding="utf-8")
    rich = folder / "rich.html"
    rich.write_text(_rich_report().to_html(), encoding="utf-8")
    return {"example": plain, "rich": rich}


def _rich_report() -> Any:
    from ragreport.examples import example_files
    from ragreport.report import build_report

    f = example_files()
    results = [ragreport.evaluate(f.qrels, p) for p in f.runs]
    third = ragreport.evaluate(f.qrels, f.runs[0], name="bm25 with a much longer run name")
    slices = {f"q{i:02d}": ["odd" if i % 2 else "even"] for i in range(1, 42)}
    return build_report([*results, third], parse_targets({"nDCG@10": 0.5, "R@5": 0.9}),
                        slices=slices, max_drop=0.01, resamples=500, curve_resamples=100,
                        generated_at="2026-01-01T00:00:00Z")


def _open(browser: Browser, path: Path, width: int, scheme: str) -> tuple[Page, PageLog]:
    ctx = browser.new_context(viewport={"width": width, "height": 900},
                              color_scheme=scheme)  # type: ignore[arg-type]
    page = ctx.new_page()
    log = PageLog.attach(page)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => d.open = true)")
    return page, log


def _keep(page: Page, tmp_path: Path, name: str) -> Path:
    shot = tmp_path / f"{name}.png"
    page.screenshot(path=str(shot), full_page=True)
    folder = os.environ.get("RAGREPORT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(folder) / shot.name)
    return shot


@pytest.mark.parametrize("which", ["example", "rich"])
@pytest.mark.parametrize("width", [1400, 700])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_report_reads_well(browser: Browser, pages: dict[str, Path], tmp_path: Path,
                               which: str, width: int, scheme: str) -> None:
    page, log = _open(browser, pages[which], width, scheme)
    try:
        shot = _keep(page, tmp_path, f"report-{which}-{width}-{scheme}")
        assert shot.stat().st_size > 20_000  # a page, not a blank
        assert log.console_errors == [] and log.page_errors == []
        # nothing wider than the window: what is wide scrolls inside its own box
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        wrapped = [c for c in page.evaluate(_CELL_LINES)
                   if c["lines"] >= WRAPPED_LINES and c["lines"] >= c["words"] - 1]
        assert wrapped == [], wrapped[:5]
        for s in page.evaluate(_SCROLLERS):  # a table that scrolls shows that it does
            assert s["overflow"] == "auto" and s["background"].count("gradient") == 4, s
    finally:
        page.context.close()


def test_sections_lead_with_what_matters(browser: Browser, pages: dict[str, Path]) -> None:
    """Verdict, targets (and their gate), summary, curves, then the rest; the table of
    contents in the same order."""
    page, _ = _open(browser, pages["rich"], 1400, "light")
    try:
        ids = page.evaluate("() => [...document.querySelectorAll('main > section, body > "
                            "section, section[id]')].map((s) => s.id)")
        ids = list(dict.fromkeys(i for i in ids if i))
        assert ids[:5] == ["targets", "drops", "summary", "curves", "slices"], ids
        links = page.evaluate("() => [...document.querySelectorAll('nav.toc a')]"
                              ".map((a) => a.getAttribute('href').slice(1))")
        assert links == ids  # a link for every section, in the page's order
        banner = page.locator(".banner").first.bounding_box()
        targets = page.locator("#targets").bounding_box()
        assert banner is not None and targets is not None and banner["y"] < targets["y"]
    finally:
        page.context.close()
