"""The README screenshot of the explorer, taken in a real JupyterLab (headless Chromium).

Starts JupyterLab on 127.0.0.1 in temporary folders (``tests/labserver.py``), runs a notebook
that shows ``ragreport.Explorer`` on the embedded example (two runs: the A/B view), selects a
query whose runs differ, as a user would (a click in the list), and saves a 1,400 x 900
screenshot in the light theme with the query list, the rankings through the cut line and the
per-query panel in view::

    python scripts/screenshot_explorer.py [-o docs/explorer.png]

``tests/explorer/test_browser_widget.py`` calls :func:`capture` and checks the picture regenerates.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

from labserver import (  # noqa: E402  (the helper lives with the tests)
    JupyterLab,
    chromium,
    kernel_run,
    open_notebook,
    run_all_cells,
    set_theme,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

SIZE = (1400, 900)
CODE = """\
import ragreport
from ragreport.examples import example_files

files = example_files()
results = [ragreport.evaluate(files.qrels, run) for run in files.runs]
explorer = ragreport.Explorer(results, queries=files.queries, docs=files.docs)
explorer
"""

# a query among the first rows of the list whose two runs differ at the shown measure and
# whose run A has relevant documents on both sides of the cut line (an informative picture)
PICK = """\
import json as _j
_s = explorer.state
_order = explorer.query_order()[:14]
_best = None
for _q in _order:
    explorer.select_query(_q)
    _r = explorer.ranking
    _rel = [i for i, v in enumerate(_r['rows']['relevant']) if v]
    _d = next((m['b'] - m['a'] for m in explorer.panel['measures']
               if m['a'] is not None and m.get('b') is not None), 0)
    _score = (len([i for i in _rel if i < explorer.k]) > 0) + (len(_rel) > 1) + (abs(_d) > 0)
    if _best is None or _score > _best[0]:
        _best = (_score, _q)
explorer.select_query(_order[0])
print(_j.dumps(_best[1]))
"""


def write_notebook(path: Path, code: str = CODE) -> None:
    """A one-cell notebook (Python 3 kernel) holding ``code``."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


def frame(page: Page, *, columns: bool = False) -> None:
    """Scroll the notebook so the explorer's top is at the top of the notebook panel; with
    ``columns``, then far enough (if the explorer is taller than the panel) for the three
    columns to end at the panel's bottom edge, as a user scrolls once to see them whole."""
    page.evaluate("""([columns, area]) => {
        const root = document.querySelector('.rr-explorer');
        root.scrollIntoView({block: 'start'});
        if (!columns) return;
        const a = new Function('return ' + area)()(root);
        const body = root.querySelector('.rr-body') || root;
        const over = body.getBoundingClientRect().bottom - a.bottom;
        if (over > 0) {
            let s = root.parentElement;
            while (s && !(s.scrollHeight > s.clientHeight + 1 &&
                          /(auto|scroll)/.test(getComputedStyle(s).overflowY))) {
                s = s.parentElement;
            }
            if (s) s.scrollTop += over;
        }
    }""", [columns, VISIBLE_AREA_JS])
    page.wait_for_timeout(250)


#: ``(el) => {top, bottom, left, right}``: the part of the window where ``el`` can be seen,
#: the intersection of the window with every ancestor that clips (overflow not visible), so
#: JupyterLab's notebook panel, not the whole window, bounds what is "in view".
VISIBLE_AREA_JS = """(el) => {
    let a = {top: 0, left: 0, bottom: window.innerHeight, right: window.innerWidth};
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
        const cs = getComputedStyle(e);
        if (cs.overflowX === 'visible' && cs.overflowY === 'visible') continue;
        const r = e.getBoundingClientRect();
        a = {top: Math.max(a.top, r.top), left: Math.max(a.left, r.left),
             bottom: Math.min(a.bottom, r.bottom), right: Math.min(a.right, r.right)};
    }
    return a;
}"""


def columns_in_view(page: Page) -> dict[str, Any]:
    """Boxes of the query list, run A's cut line and the panel, and the area in which the
    explorer can be seen (see :data:`VISIBLE_AREA_JS`)."""
    return dict(page.evaluate("""(area) => {
        const root = document.querySelector('.rr-explorer');
        const box = sel => {
            const e = root.querySelector(sel);
            if (!e) return null;
            const r = e.getBoundingClientRect();
            return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
        };
        return {list: box('[data-role=query-list]'),
                cut: box('[data-role=ranking] [data-role=cut]'),
                panel: box('[data-role=panel]'),
                area: new Function('return ' + area)()(root)};
    }""", VISIBLE_AREA_JS))


def assert_three_columns_in_view(page: Page) -> None:
    """The query list, the ranking's cut line and the per-query panel are all inside the
    visible part of the notebook together (after :func:`frame`)."""
    got = columns_in_view(page)
    a = got["area"]
    bad = []
    for name in ("list", "cut", "panel"):
        b = got[name]
        if b is None:
            bad.append(f"{name}: not found")
        elif not (b["top"] >= a["top"] - 1 and b["left"] >= a["left"] - 1
                  and b["right"] <= a["right"] + 1 and b["bottom"] <= a["bottom"] + 1):
            box = {k: round(v) for k, v in b.items()}
            bad.append(f"{name}: {box} not inside the visible area "
                       f"{ {k: round(v) for k, v in a.items()} }")
    if bad:
        raise AssertionError("not in view together: " + "; ".join(bad))


def capture(browser: Browser, lab: JupyterLab, out: Path) -> Path:
    """Take the README screenshot with a running JupyterLab; returns ``out``."""
    write_notebook(lab.root / "readme-explorer.ipynb")
    ctx = browser.new_context(viewport={"width": SIZE[0], "height": SIZE[1]})
    page = ctx.new_page()
    try:
        open_notebook(page, lab.base, "readme-explorer.ipynb")
        set_theme(page, False)
        # the file browser closed: the notebook gets the window's width
        page.evaluate("window.jupyterapp.shell.collapseLeft()")
        run_all_cells(page)
        page.wait_for_selector(".rr-explorer [data-role=query-list] [role=option][data-query-id]",
                               timeout=30_000)
        qid = json.loads(kernel_run(page, PICK).strip().splitlines()[-1])
        row = page.locator(f".rr-explorer [role=option][data-query-id='{qid}']")
        row.click()
        page.wait_for_function("""q => {
            const r = document.querySelector('.rr-explorer [data-role=ranking]');
            const id = r && r.querySelector('[data-role=ranking-qid]');
            return id && id.textContent === q && r.getAttribute('aria-busy') !== 'true';
        }""", arg=qid, timeout=15_000)
        # a user's mouse would rest somewhere neutral; let fonts and transitions settle
        page.mouse.move(5, SIZE[1] - 5)
        frame(page)
        page.wait_for_timeout(400)
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
    finally:
        ctx.close()
    return out


def png_info(path: Path) -> dict[str, Any]:
    """Size, number of distinct colours and fraction of dark pixels of a PNG."""
    from PIL import Image

    with Image.open(path) as im:
        rgb = im.convert("RGB")
        small = rgb.resize((rgb.width // 4, rgb.height // 4))
        colours = small.getcolors(maxcolors=1 << 20) or []
        grey = small.convert("L")
        dark = sum(1 for v in grey.tobytes() if v < 80) / (small.width * small.height)
        return {"size": rgb.size, "distinct": len(colours), "dark_fraction": dark}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "explorer.png")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ragreport-shot-") as tmp, \
            JupyterLab(Path(tmp) / "root", Path(tmp)) as lab, chromium() as browser:
        capture(browser, lab, args.output)
    info = png_info(args.output)
    print(f"wrote {args.output} ({info['size'][0]} x {info['size'][1]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
