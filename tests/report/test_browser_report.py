"""The HTML report in a real headless Chromium: offline, no error, visible, no XSS.

Needs Chromium and Playwright (see tests/browser.py): when either is missing these tests fail
with a message saying what to install; they never skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageLog, launch
from test_report_html import example_report, hostile_report

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch() as b:
        yield b


@pytest.fixture(scope="module")
def example_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "example-report.html"
    path.write_text(example_report().to_html(), encoding="utf-8")
    return path


def open_page(browser: Browser, path: Path, **context: object) -> tuple[Page, PageLog]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, **context)  # type: ignore[arg-type]
    page = ctx.new_page()
    log = PageLog.attach(page)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, log


def assert_visible(loc: Locator) -> None:
    loc.scroll_into_view_if_needed()
    assert loc.is_visible()
    box = loc.bounding_box()
    assert box is not None and box["width"] > 50 and box["height"] > 50, box


def test_example_report_offline_clean_visible(browser: Browser, example_path: Path,
                                               tmp_path: Path) -> None:
    page, log = open_page(browser, example_path)
    assert log.requests == [example_path.as_uri()]  # the file itself, nothing else
    assert_visible(page.locator("table.targets"))
    assert page.locator("table.targets tbody tr").count() == 5
    assert_visible(page.locator("#curves svg.plot").first)
    assert_visible(page.locator("#distributions svg.plot").first)
    # opening a query shows its ranking with the cut line
    first = page.locator("details.query").first
    first.locator("summary").click()
    cut = first.locator("tr.cut")
    assert cut.is_visible() and "cut at K=5" in cut.inner_text()
    shot = tmp_path / "example-light.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 100_000
    log.assert_clean()
    page.context.close()


def test_dark_scheme_plots_readable(browser: Browser, example_path: Path,
                                    tmp_path: Path) -> None:
    page, log = open_page(browser, example_path, color_scheme="dark")
    colours = page.evaluate("""() => {
        const svg = document.querySelector('#curves svg.plot');
        const text = svg.querySelector('text');
        return {bg: getComputedStyle(document.body).backgroundColor,
                svg: getComputedStyle(svg).color, text: getComputedStyle(text).fill,
                run0: getComputedStyle(document.documentElement).getPropertyValue('--c0')};
    }""")

    def luminance(css: str) -> float:
        r, g, b = (int(x) for x in css[css.index("(") + 1: css.index(")")].split(",")[:3])
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255

    assert luminance(colours["bg"]) < 0.2  # a dark page...
    assert luminance(colours["svg"]) > 0.7 and luminance(colours["text"]) > 0.7  # light text
    assert colours["run0"].strip() == "#56b4e9"  # the dark palette
    page.screenshot(path=str(tmp_path / "example-dark.png"), full_page=True)
    log.assert_clean()
    page.context.close()


def test_reads_without_javascript(browser: Browser, example_path: Path) -> None:
    page, log = open_page(browser, example_path, java_script_enabled=False)
    assert_visible(page.locator("table.targets"))
    assert_visible(page.locator("#curves svg.plot").first)
    assert page.locator("th button.sort").count() == 0  # the enhancement did not run
    assert page.locator("details.query").count() == 40
    log.assert_clean()
    page.context.close()


def test_enhancements_sort_and_filter(browser: Browser, example_path: Path) -> None:
    page, log = open_page(browser, example_path)
    summary = page.locator("table.summary")
    header = summary.locator("th button.sort").nth(1)  # bm25 column
    header.click()
    values = [float(v.split()[0]) for v in
              summary.locator("tbody tr td:nth-child(2)").all_inner_texts()]
    assert values == sorted(values)
    header.click()
    values = [float(v.split()[0]) for v in
              summary.locator("tbody tr td:nth-child(2)").all_inner_texts()]
    assert values == sorted(values, reverse=True)
    page.locator(".filter input").fill("q03")
    assert page.locator("details.query:not(.hidden)").count() == 2  # one per run
    log.assert_clean()
    page.context.close()


def test_print_shows_details(browser: Browser, example_path: Path, tmp_path: Path) -> None:
    page, log = open_page(browser, example_path)
    page.emulate_media(media="print")
    ranking = page.locator("details.query").nth(3).locator("table.ranking")
    assert ranking.is_visible()  # closed <details> print open
    assert not page.locator("nav.toc").is_visible()
    pdf = tmp_path / "report.pdf"
    page.pdf(path=str(pdf))
    assert pdf.stat().st_size > 50_000
    log.assert_clean()
    page.context.close()


def test_hostile_strings_do_not_execute(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "hostile.html"
    path.write_text(hostile_report().to_html(), encoding="utf-8")
    for enabled in (True, False):
        page, log = open_page(browser, path, java_script_enabled=enabled)
        if enabled:
            page.locator(".filter button", has_text="Expand all").click()
            page.wait_for_timeout(200)
            assert page.evaluate("typeof window.__xss") == "undefined"
            assert page.evaluate("document.scripts.length") == 1
        assert page.locator("img").count() == 0
        assert page.locator("[onerror]").count() == 0
        # the strings are there, as text
        assert "title<script>window.__xss=1</script>" in page.locator("h1").inner_text()
        page.screenshot(path=str(tmp_path / f"hostile-{enabled}.png"), full_page=True)
        log.assert_clean()  # also: no dialog fired
        page.context.close()


def test_unjudged_rows_differ_from_judged_non_relevant(browser: Browser,
                                                        tmp_path: Path) -> None:
    """An unjudged document reads differently from a judged non-relevant one, by its text
    *and* its style, in light and dark pages; the summary of a closed query already counts
    the unjudged documents of its top K."""
    from test_report_views import unjudged_report

    path = tmp_path / "unjudged.html"
    path.write_text(unjudged_report().to_html(), encoding="utf-8")
    for scheme in ("light", "dark"):
        page, log = open_page(browser, path, color_scheme=scheme)
        q1 = page.locator("details.query", has=page.locator("code.qid", has_text="q1"))
        badge = q1.locator("summary .unjudged-count")
        assert badge.is_visible() and badge.inner_text() == "2 unjudged in top 5"
        q1.locator("summary").click()
        assert "2 of the top 5 unjudged" in q1.locator("p.qmeta").inner_text()
        unj = q1.locator("tr.unjudged-row td.grade").first
        non = q1.locator("tr.nonrel td.grade").first
        assert unj.is_visible() and non.is_visible()
        assert unj.inner_text().strip() == "? unjudged"
        assert non.inner_text().strip() == "○ 0 not relevant"
        styles = page.evaluate("""() => {
            const s = e => { const c = getComputedStyle(e);
                return {border: c.borderTopStyle, italic: c.fontStyle, color: c.color}; };
            return {unj: s(document.querySelector('tr.unjudged-row td.grade .unjudged')),
                    non: s(document.querySelector('tr.nonrel td.grade .nonrel-word'))};
        }""")
        assert styles["unj"]["border"] == "dashed" and styles["unj"]["italic"] == "italic"
        assert styles["non"]["border"] == "none" and styles["non"]["italic"] == "normal"
        page.screenshot(path=str(tmp_path / f"unjudged-{scheme}.png"), full_page=True)
        log.assert_clean()
        page.context.close()


def test_pr_curve_visible_with_its_table(browser: Browser, example_path: Path,
                                         tmp_path: Path) -> None:
    """The precision-recall plot is drawn (axes, one line per run) beside its table, and a
    screen reader gets its name and its numbers (role img, title, desc)."""
    page, log = open_page(browser, example_path)
    assert log.requests == [example_path.as_uri()]
    svg = page.locator("#pr-curve svg.plot")
    assert_visible(svg)
    assert svg.get_attribute("role") == "img"
    assert page.get_by_role("img", name="11-point interpolated precision-recall curve").count() == 1
    assert "bm25: 0.0 0.7865" in (svg.locator("desc").text_content() or "")
    table = page.locator("#pr-curve table.pr-table")
    assert table.is_visible() and table.locator("tbody tr").count() == 11
    # the plot and the table sit side by side on a wide page
    pbox, tbox = svg.bounding_box(), table.bounding_box()
    assert pbox is not None and tbox is not None and tbox["x"] >= pbox["x"] + pbox["width"]
    page.locator("#pr-curve").screenshot(path=str(tmp_path / "pr-curve.png"))
    log.assert_clean()
    page.context.close()
