"""The HTML report: structure, escaping, no outside URL, reproducibility, size, templates.

The builders at the top (:func:`example_report`, :func:`hostile_report`) are reused by
``test_browser_report.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from paths import ROOT

import ragreport
from ragreport.errors import ConfigError
from ragreport.examples import example_files
from ragreport.io import load_docs, load_queries
from ragreport.report import InputFile, Report, build_report
from ragreport.report.html import default_template_dir, render_html
from ragreport.targets import default_targets, parse_targets

WHEN = "2026-01-02T03:04:05Z"

SCRIPT = "<script>window.__xss=1</script>"
IMG = '"><img src=x onerror="window.__xss=1">'
MARKDOWN = "| a | `b` ``c`` **d** |"
HOSTILE = f"{SCRIPT}{IMG}{MARKDOWN}"


# -- builders ----------------------------------------------------------------------------------


def example_report(**kwargs: object) -> Report:
    """The embedded example, two runs, default targets, fixed time."""
    f = example_files()
    results = [ragreport.evaluate(f.qrels, p) for p in f.runs]
    options: dict[str, object] = {
        "queries": load_queries(f.queries),
        "docs": load_docs(f.docs),
        "generated_at": WHEN,
        "command": "ragreport report --example --html example-report.html",
        "inputs": [InputFile.from_path("qrels", f.qrels),
                   *(InputFile.from_path("run", p) for p in f.runs)],
    }
    options.update(kwargs)
    return build_report(results, default_targets(), **options)  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def example_html() -> str:
    return example_report().to_html()


def hostile_ids() -> dict[str, str]:
    """A hostile string per field, each with its own prefix so a test can find every field."""
    fields = ["title", "run1", "run2", "query", "qtext", "doc", "dtext", "command", "file",
              "source", "missing"]
    return {f: f"{f}{HOSTILE}" for f in fields}


def hostile_report() -> Report:
    """Hostile strings in every user field: title, run names, query and doc ids and texts,
    command, input file names, target source. Two runs, so deltas and comparisons render."""
    h = hostile_ids()
    q2 = "q2" + IMG
    qrels = {h["query"]: {h["doc"]: 2, h["missing"]: 1, "d3": 1}, q2: {"d3": 1}}
    run1 = {h["query"]: {"x1": 5.0, "x2": 4.0, h["doc"]: 3.0, "x3": 2.0, "d3": 1.0},
            q2: {"d3": 2.0, h["doc"]: 1.0}}
    run2 = {h["query"]: {h["doc"]: 5.0, "x1": 4.0}, q2: {"x9": 1.0}}
    results = [ragreport.evaluate(qrels, run1, ["P@1", "R@3", "RR", "nDCG@3"], k_max=5,
                                  name=h["run1"]),
               ragreport.evaluate(qrels, run2, ["P@1", "R@3", "RR", "nDCG@3"], k_max=5,
                                  name=h["run2"])]
    targets = parse_targets({"R@3": 0.5, "P@1": "> 0.9"}, source=h["source"])
    file = InputFile("run", h["file"], "/tmp/" + h["file"], "ab" * 32, 12)
    return build_report(results, targets, title=h["title"], generated_at=WHEN,
                        command=h["command"], inputs=[file],
                        queries={h["query"]: h["qtext"], q2: SCRIPT},
                        docs={h["doc"]: h["dtext"], h["missing"]: IMG, "x1": MARKDOWN})


# -- a small HTML tree, parsed with the standard library ---------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node | str] = field(default_factory=list)

    def iter(self, tag: str | None = None) -> list[Node]:
        out = [self] if tag is None or self.tag == tag else []
        for c in self.children:
            if isinstance(c, Node):
                out += c.iter(tag)
        return out

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def find(self, tag: str, cls: str | None = None, id: str | None = None) -> list[Node]:
        return [n for n in self.iter(tag) if (cls is None or cls in n.classes())
                and (id is None or n.attrs.get("id") == id)]


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return
        raise AssertionError(f"unmatched </{tag}>")

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> TreeBuilder:
    tb = TreeBuilder()
    tb.feed(html)
    tb.close()
    assert [n.tag for n in tb.stack] == ["#document"], "unclosed elements"
    return tb


def section(html: str, id: str) -> Node:
    found = parse(html).root.find("section", id=id)
    assert len(found) == 1, f"section #{id}: {len(found)} found"
    return found[0]


# -- structure ---------------------------------------------------------------------------------


def test_sections_present_in_order() -> None:
    html = example_html()
    ids = [n.attrs.get("id") for n in parse(html).root.iter("section")]
    assert ids == ["targets", "summary", "curves", "pr-curve", "distributions", "worst",
                   "comparison", "health", "conventions"]


def test_header() -> None:
    rep = example_report()
    html = example_html()
    head = parse(html).root.find("header")[0]
    text = " ".join(head.text().split())
    assert rep.title in text
    assert f"by ragreport {ragreport.__version__}" in text
    assert WHEN in text and "bm25" in text and "tfidf" in text and "baseline" in text
    assert "41 in the judgments" in text
    assert "ragreport report --example --html example-report.html" in text
    hashes = head.find("code", cls="hash")
    assert len(hashes) == 3
    for f, node in zip(rep.inputs, hashes, strict=True):
        assert node.attrs["title"] == f"sha256 {f.sha256}"
        assert node.text() == f.sha256[:12] + "…"
        assert f.name in text
    assert "10 of 10 target checks fail" in text


def test_targets_table() -> None:
    rep = example_report()
    sec = section(example_html(), "targets")
    table = sec.find("table", cls="targets")[0]
    rows = table.find("tbody")[0].find("tr")
    assert len(rows) == len(rep.targets) == 5
    for row, t in zip(rows, rep.targets, strict=True):
        cells = [" ".join(c.text().split()) for c in row.children
                 if isinstance(c, Node) and c.tag in ("th", "td")]
        assert cells[0] == t.measure
        assert cells[1] == f"{t.op} {t.threshold_text}"
        for i, c in enumerate(t.cells):
            value, verdict, margin = cells[2 + 3 * i: 5 + 3 * i]
            assert value == c.shown and margin == c.margin_text
            assert verdict == ("✔ pass" if c.passed else "✘ fail")  # icon and word


def test_pass_and_fail_words_and_icons() -> None:
    f = example_files()
    results = [ragreport.evaluate(f.qrels, p) for p in f.runs]
    targets = parse_targets({"HitRate@5": 0.86, "P@3": "> 0.5"})
    rep = build_report(results, targets, generated_at=WHEN)
    html = rep.to_html()
    table = section(html, "targets").find("table", cls="targets")[0]
    verdicts = [" ".join(n.text().split()) for n in table.find("span", cls="verdict")]
    # bm25 HitRate@5 0.8780 >= 0.86 passes, tfidf 0.8537 fails; P@3: both > 0.5
    assert verdicts == ["✔ pass", "✘ fail", "✔ pass", "✔ pass"]
    assert "1 of 4 target checks fail" in " ".join(html.split())


def test_summary_deltas() -> None:
    rep = example_report()
    sec = section(example_html(), "summary")
    rows = sec.find("table", cls="summary")[0].find("tbody")[0].find("tr")
    assert [r.find("th")[0].text() for r in rows] == [s.measure for s in rep.summary]
    deltas = [" ".join(d.text().split()) for d in sec.find("span", cls="delta")]
    expected = [f"{ {'up': '▲', 'down': '▼', 'same': '='}[c.direction]} {c.delta_text}"
                for s in rep.summary for c in s.cells if c.direction]
    assert deltas == [e.strip() for e in expected]
    assert "▲ +0.0122" in deltas and "▼ −0.0488" in deltas


def test_plots_inline_svg_with_targets() -> None:
    rep = example_report()
    html = example_html()
    curves = section(html, "curves")
    svgs = curves.find("svg", cls="plot")
    assert len(svgs) == len(rep.curves) == 7
    # every target is drawn on its family's plot, with its label
    for curve, fig in zip(rep.curves, curves.find("figure"), strict=True):
        text = fig.text()
        for k, _, label in curve.targets:
            assert f"target {label}" + (f" @{k}" if k else " (all K)") in text
    dists = section(html, "distributions").find("svg", cls="plot")
    assert len(dists) == len(rep.distributions) == 11
    # no id is used twice in the page (several SVGs inline)
    ids = [n.attrs["id"] for n in parse(html).root.iter() if n.attrs.get("id")]
    assert len(ids) == len(set(ids))
    # references point to ids of the same page
    for ref in re.findall(r'(?:url\(#|href="#)([^)"]+)', html):
        assert ref in ids, ref


def test_worst_queries_details_cut_line_and_missing() -> None:
    rep = example_report()
    sec = section(example_html(), "worst")
    details = sec.find("details", cls="query")
    assert len(details) == sum(len(w.queries) for w in rep.worst) == 40
    queries = [q for w in rep.worst for q in w.queries]
    for d, q in zip(details, queries, strict=True):
        summary = d.find("summary")[0].text()
        assert q.query_id in summary and q.failure in summary and q.shown in summary
        ranking = d.find("table", cls="ranking")[0]
        cut = ranking.find("tr", cls="cut")
        rows = ranking.find("tbody")[0].find("tr")
        if q.n_ret > 5:
            assert len(cut) == 1
            assert "cut at K=5" in cut[0].text()
            # exactly the rows within K come before the cut line
            assert rows.index(cut[0]) == sum(r.within_k for r in q.rows)
            after = rows[rows.index(cut[0]) + 1]
            assert "beyond" in after.classes()
        else:
            assert cut == []
        missing = d.find("table", cls="missing")
        assert len(missing) == (1 if q.missing else 0)
        for doc, _grade, _ in q.missing:
            assert doc in missing[0].text()
    q03 = next(d for d in details if "q03" in d.find("summary")[0].text())
    assert "comparisons#14" in q03.find("table", cls="missing")[0].text()
    assert "relevant only beyond K" in q03.text()
    # a relevant row is marked by a word, not only by colour
    assert "relevant" in q03.find("tr", cls="rel")[0].text()
    # queries without a judged relevant document are a category of their own, not worst
    assert not any(q.query_id in ("q40", "q41") for q in queries)
    notes = sec.find("p", cls="no-judged")
    assert len(notes) == 2
    assert all("2 queries without a judged relevant document" in n.text() for n in notes)
    kinds = " ".join(t.text() for t in sec.find("table", cls="failures"))
    assert "no judged relevant document" not in kinds and "relevant only beyond K" in kinds


def test_curve_titles_name_the_measure_once() -> None:
    rep = example_report()
    titles = [c.title for c in rep.curves]
    assert "nDCG@K (normalised discounted cumulative gain)" in titles
    assert "P@K (precision)" in titles
    for t in titles:
        label = t.split("@K", 1)[0]
        assert t.count(label) == 1, t  # no 'nDCG (nDCG)@K'


def test_comparison_health_conventions() -> None:
    rep = example_report()
    html = example_html()
    comp = section(html, "comparison")
    rows = comp.find("tbody")[0].find("tr")
    assert len(rows) == len(rep.comparisons)
    first = [c.text() for c in rows[0].find("td")][:3]
    c0 = rep.comparisons[0]
    assert first == [str(c0.wins), str(c0.losses), str(c0.ties)]
    health = section(html, "health").find("tbody")[0].find("tr")
    assert len(health) == 2
    dl = section(html, "conventions").find("dl")[0]
    pairs = list(zip([n.text() for n in dl.find("dt")], [n.text() for n in dl.find("dd")],
                     strict=True))
    assert pairs == list(rep.conventions.items())


def test_single_run_has_no_comparison() -> None:
    f = example_files()
    rep = build_report([ragreport.evaluate(f.qrels, f.runs[0])], default_targets(),
                       generated_at=WHEN)
    html = rep.to_html()
    assert 'id="comparison"' not in html and "baseline" not in section(html, "summary").text()


# -- safety ------------------------------------------------------------------------------------


def packaged_js() -> str:
    return (default_template_dir() / "report.js").read_text(encoding="utf-8")


def test_hostile_strings_are_escaped_everywhere() -> None:
    html = hostile_report().to_html()
    tb = parse(html)
    # the only elements are ours: no <img>, no extra <script>, no event handler, no js: URL
    tags = {t for t, _ in tb.tags}
    assert "img" not in tags and "iframe" not in tags and "object" not in tags
    scripts = tb.root.iter("script")
    assert len(scripts) == 1
    assert scripts[0].text().strip() == packaged_js().strip()
    for tag, attrs in tb.tags:
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name, value)
            assert "javascript:" not in (value or "").lower()
    # every field was rendered, as text, whole
    text = tb.root.text()
    for name, value in hostile_ids().items():
        assert value in text, f"{name} missing or mangled"
    # raw markup never appears; the escaped form does
    assert SCRIPT not in html and "<img" not in html
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html
    assert "onerror=" in html  # as escaped text only (checked above: no such attribute)
    # run names in the plots' legends are escaped by matplotlib
    for svg in tb.root.find("svg", cls="plot"):
        assert "img" not in {n.tag for n in svg.iter()}
    assert "run1" + SCRIPT in " ".join(svg.text() for svg in tb.root.find("svg", cls="plot"))


def test_hostile_strings_in_plots_only_text() -> None:
    from ragreport.report.plots import curve_svg

    rep = hostile_report()
    svg = curve_svg(rep.curves[0], rep.runs, prefix="t")
    assert svg.startswith("<svg") and "<?xml" not in svg and "DOCTYPE" not in svg
    assert "<script" not in svg and "<img" not in svg
    assert "&lt;script&gt;" in svg
    tb = parse(svg)
    assert {t for t, _ in tb.tags} <= {"svg", "g", "path", "defs", "clipPath", "rect", "use",
                                       "pattern", "text", "clippath"}


def test_dollar_signs_are_not_mathtext() -> None:
    qrels = {"q": {"a": 1}}
    r = ragreport.evaluate(qrels, {"q": ["a"]}, ["P@1"], name="cost $5 and $x^2$ \\frac{")
    html = build_report([r], generated_at=WHEN).to_html()
    assert "cost $5 and $x^2$ \\frac{" in parse(html).root.find("svg", cls="plot")[0].text()


def test_no_outside_urls() -> None:
    html = example_html()
    tb = parse(html)
    for tag, attrs in tb.tags:
        for name, value in attrs:
            v = (value or "").strip().lower()
            if name in ("src", "href", "xlink:href", "action", "poster", "data", "srcset",
                        "background", "formaction"):
                assert v.startswith(("#", "data:")), (tag, name, value)
            if name.startswith("xmlns"):
                continue
            assert "http://" not in v and "https://" not in v, (tag, name, value)
    # outside attributes, no URL at all (CSS imports, fonts, text)
    without_xmlns = re.sub(r'\sxmlns(:\w+)?="[^"]*"', "", html)
    assert re.findall(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", without_xmlns) == []
    css = " ".join(s.text() for s in tb.root.iter("style"))
    assert "@import" not in css and "@font-face" not in css
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", html))
    assert len(tb.root.iter("link")) == 1  # the empty data: icon (no favicon request)


# -- reproducibility, size ---------------------------------------------------------------------


def test_byte_identical_in_process() -> None:
    assert example_report().to_html().encode() == example_html().encode()


SCRIPT_RENDER = """
import sys
from ragreport.examples import example_files
import ragreport
from ragreport.report import build_report, InputFile
from ragreport.targets import default_targets
f = example_files()
results = [ragreport.evaluate(f.qrels, p) for p in f.runs]
rep = build_report(results, default_targets(), command="ragreport report --example",
                   inputs=[InputFile.from_path("qrels", f.qrels)])
open(sys.argv[1], "wb").write(rep.to_html().encode("utf-8"))
"""


def test_byte_identical_across_processes(tmp_path: Path) -> None:
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"r{seed}.html"
        env = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600", "PYTHONHASHSEED": seed,
               "MPLCONFIGDIR": str(tmp_path / f"mpl{seed}")}
        subprocess.run([sys.executable, "-c", SCRIPT_RENDER, str(out)], check=True, env=env,
                       cwd=tmp_path, timeout=300)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert b"2026-01-01T00:00:00Z" in outs[0]


def big_report(n_queries: int = 10_000, depth: int = 100) -> Report:
    """Generated data: n_queries x depth results, two runs, texts for queries and docs."""
    rng = np.random.default_rng(7)
    pool = [f"doc-{i:06d}" for i in range(50_000)]
    qrels: dict[str, dict[str, int]] = {}
    runs: list[dict[str, dict[str, float]]] = [{}, {}]
    for q in range(n_queries):
        qid = f"query-{q:05d}"
        rel = rng.choice(len(pool), size=8, replace=False)
        qrels[qid] = {pool[i]: int(g) for i, g in zip(rel, rng.integers(0, 4, size=8), strict=True)}
        for run in runs:
            hits = rel[: int(rng.integers(0, 4))].tolist()
            others = rng.choice(len(pool), size=depth, replace=False).tolist()
            picked = list(dict.fromkeys([*hits, *others]))[:depth]
            rng.shuffle(picked)
            run[qid] = {pool[i]: float(depth - j) for j, i in enumerate(picked)}
    results = [ragreport.evaluate(qrels, run, name=name)
               for run, name in zip(runs, ("alpha", "beta"), strict=True)]
    words = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit"]
    docs = {d: " ".join(words[(i + j) % len(words)] for j in range(60))
            for i, d in enumerate(pool)}
    queries = {q: "what is " + " ".join(words[: 3 + i % 8]) for i, q in enumerate(qrels)}
    return build_report(results, default_targets(), queries=queries, docs=docs,
                        generated_at=WHEN, worst_n=200)


@pytest.mark.slow
def test_size_for_10000_queries() -> None:
    rep = big_report()
    assert len(rep.distributions[0].values["alpha"]) == 10_000
    assert len(rep.worst[0].queries) == 200  # more than the page shows
    html = rep.to_html()
    size = len(html.encode("utf-8"))
    print(f"10,000-query report: {size} bytes")
    assert size < 3_000_000
    tb = parse(html)
    from ragreport.report.html import MAX_DETAILS_PER_RUN

    assert len(tb.root.find("details", cls="query")) == 2 * MAX_DETAILS_PER_RUN
    assert "150 more queries not shown" in html
    # the distribution plots are histograms: their size does not grow with the queries
    for svg in section(html, "distributions").find("svg", cls="plot"):
        assert len(svg.iter()) < 400


def test_example_size() -> None:
    size = len(example_html().encode("utf-8"))
    print(f"example report: {size} bytes")
    assert 100_000 < size < 1_500_000


# -- templates ---------------------------------------------------------------------------------


def test_default_template_dir_is_the_repository_or_the_package() -> None:
    d = default_template_dir()
    assert (d / "report.html.j2").is_file()
    assert d in (ROOT / "templates", Path(ragreport.__file__).parent / "templates")


def test_template_dir_override(tmp_path: Path) -> None:
    custom = tmp_path / "tpl"
    shutil.copytree(default_template_dir(), custom)
    main = custom / "report.html.j2"
    main.write_text(main.read_text(encoding="utf-8").replace(
        "<main>", "<main><p id=\"custom\">{{ title }}</p>"), encoding="utf-8")
    rep = hostile_report()
    html = rep.to_html(template_dir=custom)
    node = parse(html).root.find("p", id="custom")[0]
    assert node.text() == rep.title  # autoescaped in user templates too
    assert SCRIPT not in html


def test_template_dir_with_only_the_main_template(tmp_path: Path) -> None:
    (tmp_path / "report.html.j2").write_text(
        '<!DOCTYPE html><title>{{ title }}</title><style>{% include "report.css" %}</style>'
        "<h1>{{ report.runs | join(', ') }}</h1>\n", encoding="utf-8")
    html = render_html(hostile_report(), template_dir=tmp_path)
    assert "--c0" in html  # the partial came from the default templates
    assert SCRIPT not in html


def test_missing_template_dir(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match=re.escape(str(missing))):
        example_report().to_html(template_dir=missing)


def test_missing_template(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=re.escape(str(tmp_path / "report.html.j2"))):
        render_html(hostile_report(), template_dir=tmp_path)


def test_strict_undefined_and_syntax_errors(tmp_path: Path) -> None:
    (tmp_path / "report.html.j2").write_text("{{ no_such_name }}", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown name"):
        render_html(hostile_report(), template_dir=tmp_path)
    (tmp_path / "report.html.j2").write_text("{% if %}", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape("report.html.j2:1")):
        render_html(hostile_report(), template_dir=tmp_path)


@pytest.mark.parametrize(("body", "says"), [
    ("{{ 1 // 0 }}", "the template failed: ZeroDivisionError"),
    ("{{ x.y.z }}", "unknown name"),
    ('{% include "gone.j2" %}', "template not found: gone.j2"),
    (b"\xff{{ x }}", "not UTF-8"),
    ('{{ "a" + 1 }}', "the template failed: TypeError"),
])
def test_a_failing_template_is_one_config_error(tmp_path: Path, body: str | bytes,
                                                says: str) -> None:
    page = tmp_path / "report.html.j2"
    page.write_bytes(body.encode() if isinstance(body, str) else body)
    with pytest.raises(ConfigError, match=re.escape(says)):
        render_html(hostile_report(), template_dir=tmp_path)


def test_a_broken_template_fails_before_the_plots(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from ragreport.report import html as html_module

    (tmp_path / "report.html.j2").write_text("{% if %}", encoding="utf-8")
    monkeypatch.setattr(html_module, "_context", lambda *a, **k: pytest.fail("plots drawn"))
    with pytest.raises(ConfigError, match="template error"):
        render_html(hostile_report(), template_dir=tmp_path)


@pytest.mark.parametrize("worst_n", [3, 20, 100])
def test_worst_note_states_the_report_numbers(worst_n: int) -> None:
    rep = example_report(worst_n=worst_n)
    sec = section(rep.to_html(), "worst")
    note = sec.find("p", cls="note")[0].text()
    held = len(rep.worst[0].queries)
    total = rep.worst[0].total
    listable = total - rep.worst[0].no_judged_relevant  # 41 - 2: q40, q41 are never listed
    assert listable == 39
    assert held == min(worst_n, listable)
    data = rep.to_json()
    import json

    assert len(json.loads(data)["worst_queries"][rep.runs[0]]) == held
    if held < listable:
        assert f"at most {held} per run; the JSON output holds the same {held}" in note
    else:
        assert (f"the JSON output holds all {listable} queries with a judged relevant "
                "document") in note
    assert "every query" not in note


def test_drill_down_reaches_the_last_relevant_document() -> None:
    """A worst query's ranking shows the first rows, then every relevant document ranked
    below them with its rank (a relevant document at rank 26 is never hidden); past 25 of
    those, it says how many more and the rank of the last. The JSON lists them all."""
    import json

    rel = [3, 26, *range(40, 81)]
    qrels = {"q": {f"d{i}": 1 for i in rel}}
    run = {"q": [f"d{i}" for i in range(1, 101)]}
    r = ragreport.evaluate(qrels, run, ["P@5"], name="x")
    rep = build_report([r], parse_targets({"P@5": 0.9}), generated_at=WHEN, stats=False)
    page = parse(rep.to_html())
    rows = page.root.find("table", cls="ranking")[0].find("tr")
    ranks = [int(cells[0].text()) for row in rows
             if (cells := row.find("td")) and cells[0].text().strip().isdigit()]
    assert ranks == [*range(1, 21), 26, *range(40, 64)]
    later = [row for row in rows if "later" in row.classes()]
    assert len(later) == 25 and all("rel" in row.classes() for row in later)
    text = " ".join(page.root.find("table", cls="ranking")[0].text().split())
    assert "… 80 more retrieved documents not shown; the relevant ones among them follow." \
        in text
    assert "… 17 more relevant documents further down; the last at rank 80." in text
    [q] = json.loads(rep.to_json())["worst_queries"]["x"]
    assert [row["rank"] for row in q["ranking"]] == [1, 2, 3, 4, 5]
    assert [row["rank"] for row in q["relevant_below"]] == [26, *range(40, 81)]
