"""Parse and render the Markdown report's Mermaid charts with Mermaid itself (by hand).

CI does not install Mermaid's JavaScript bundle, so ``tests/report/test_mermaid.py`` checks the
chart against the ``xychart-beta`` grammar it uses; this script runs the real thing, offline, in the
headless Chromium the browser tests use (``tests/browser.py``)::

    npm install --prefix /tmp/mmd mermaid@11
    python tests/mermaid_real_parse.py /tmp/mmd/node_modules/mermaid/dist/mermaid.min.js

It renders the chart of the embedded example, of a report whose run names and title are
hostile (quotes, brackets, newlines, backticks, ``-->``, ``%%{init}%%``), of a report with
120 K values and of a count (``Hits@K``), and checks for each: Mermaid parses it as an
``xychart``, renders one line per run and target, in the colours of the init directive.
Exit 0 when all pass; it prints the time taken.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "report"))  # test_mermaid


def charts() -> dict[str, str]:
    from test_mermaid import HOSTILE_NAMES

    import ragreport
    from ragreport.examples import example_files
    from ragreport.report import build_report
    from ragreport.targets import default_targets

    f = example_files()
    res = [ragreport.evaluate(f.qrels, p) for p in f.runs]
    hostile = [ragreport.evaluate(f.qrels, f.runs[i % 2], name=n)
               for i, n in enumerate(HOSTILE_NAMES)]
    reports = {
        "example": build_report(res, default_targets(), stats=False),
        "hostile": build_report(hostile, default_targets(), stats=False,
                                title='t --> `x` ["y"]\n%%{init: {}}%%'),
        "k120": build_report([ragreport.evaluate(f.qrels, f.runs[0], ["R@5"], k_max=120)],
                             stats=False),
        "hits": build_report([ragreport.evaluate(f.qrels, f.runs[0], ["Hits@5"])],
                             stats=False),
    }
    out = {}
    for name, rep in reports.items():
        m = re.search(r"\n```mermaid\n(.*?)\n```\n", rep.to_markdown(), re.S)
        if m is None:
            raise SystemExit(f"{name}: no chart")
        out[name] = m.group(1)
    return out


RENDER = """async (text) => {
  try {
    const parsed = await mermaid.parse(text);
    const { svg } = await mermaid.render("c" + Math.floor(Math.random() * 1e9), text);
    return { ok: true, type: parsed.diagramType, svg };
  } catch (e) { return { ok: false, error: String(e).slice(0, 500) }; }
}"""


def main(bundle: str) -> int:
    from browser import launch

    js = Path(bundle).read_text(encoding="utf-8")
    texts = charts()
    start = time.perf_counter()
    failed = 0
    with launch() as browser:
        page = browser.new_page()
        page.set_content("<!doctype html><html><body></body></html>")
        page.add_script_tag(content=js)
        page.evaluate("mermaid.initialize({startOnLoad: false, securityLevel: 'strict'})")
        for name, text in texts.items():
            got = page.evaluate(RENDER, text)
            lines = len(re.findall(r"^    line \[", text, re.M))
            colours = re.search(r'"plotColorPalette": "([^"]*)"', text)
            palette = colours.group(1).split(", ") if colours else []
            problems = []
            if not got["ok"]:
                problems.append(got["error"])
            else:
                svg = got["svg"]
                if got["type"] != "xychart":
                    problems.append(f"diagram type {got['type']}")
                drawn = len(re.findall(r'class="line-plot-\d+"', svg))
                if drawn != lines:
                    problems.append(f"{drawn} lines drawn, {lines} expected")
                missing = [c for c in set(palette) if c.lower() not in svg.lower()]
                if missing:
                    problems.append(f"colours not used: {missing}")
            print(f"{name}: {'ok' if not problems else 'FAILED ' + '; '.join(problems)}")
            failed += bool(problems)
    print(f"{len(texts)} charts in {time.perf_counter() - start:.1f} s (browser start included)")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1]))
