"""Markdown report: gold file, structure, deltas, escaping (XSS / table breaking), length cap."""

from __future__ import annotations

import difflib
import importlib.util
import re
import sys
from html.parser import HTMLParser
from types import ModuleType

import mistune
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import GOLD

import ragreport
from ragreport.errors import RagReportError
from ragreport.report import InputFile, Report, build_report
from ragreport.report.markdown import BREAK, MARKER, escape_html, escape_md, render_markdown
from ragreport.targets import default_targets, parse_targets

REGEN = "python tests/gold/regen.py"


def _load_regen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ragreport_gold_regen", GOLD / "regen.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, mod)
    spec.loader.exec_module(mod)
    return mod


regen = _load_regen()


def assert_gold(name: str, actual: str) -> None:
    path = GOLD / name
    expected = path.read_bytes().decode("utf-8")
    if actual != expected:
        diff = "".join(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            fromfile=f"tests/gold/{name} (gold)", tofile=f"{name} (rendered now)", n=2))
        pytest.fail(f"{name} differs from the gold file. If the change is intended, run "
                    f"`{REGEN}` and review `git diff tests/gold`.\n{diff[:20000]}",
                    pytrace=False)


@pytest.fixture(scope="module")
def example() -> Report:
    report: Report = regen.example_report()
    return report


@pytest.fixture(scope="module")
def example_md(example: Report) -> str:
    return example.to_markdown()


# --- helpers --------------------------------------------------------------------------------

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def tables(md: str) -> list[list[str]]:
    """Groups of consecutive table lines (lines starting with '|')."""
    out: list[list[str]] = []
    current: list[str] = []
    for line in md.split("\n"):
        if line.startswith("|"):
            current.append(line)
        elif current:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def assert_tables_intact(md: str) -> None:
    found = tables(md)
    assert found, "no table found"
    for table in found:
        counts = {len(UNESCAPED_PIPE.findall(line)) for line in table}
        assert len(counts) == 1, "table rows have different numbers of cells:\n" + "\n".join(
            table[:5])
        assert re.fullmatch(r"\|(:?-+:?\|)+", table[1]), f"bad delimiter row {table[1]!r}"
        for line in table:
            assert line.endswith(" |") or line == table[1]


def html_of(md: str) -> str:
    """Markdown rendered like GitHub would (raw HTML passed through, tables on)."""
    render = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"])
    out = render(md)
    assert isinstance(out, str)
    return out


def evaluate_named(qrels: object, run: object, name: str,
                   measures: list[str] | None = None) -> ragreport.EvaluationResult:
    return ragreport.evaluate(qrels, run, measures, name=name)


# --- gold and structure ---------------------------------------------------------------------

def test_gold_markdown(example_md: str) -> None:
    assert_gold("example.md", example_md)


def test_regen_writes_what_the_tests_compare() -> None:
    assert regen.gold_outputs()["example.md"] == (GOLD / "example.md").read_bytes().decode()


def test_layout(example_md: str, example: Report) -> None:
    lines = example_md.split("\n")
    assert lines[0] == MARKER
    assert lines[1] == "## Retrieval evaluation"
    assert lines[3] == "❌ **10 of 10 target checks fail**"
    assert lines[5].startswith("**Runs:** bm25 (baseline), tfidf · **Queries:** 41 in qrels")
    order = ["### Targets", "### Summary", "### Worst queries", "**Dataset health:**",
             "**Conventions**", "<sub>ragreport "]
    positions = [example_md.index(s) for s in order]
    assert positions == sorted(positions)
    assert example_md.endswith("</sub>\n")
    assert_tables_intact(example_md)
    assert "✂️ truncated" not in example_md


def test_targets_table(example_md: str) -> None:
    assert "| Measure | Target | bm25 | Margin | tfidf | Margin |" in example_md
    assert "| R@5 | &gt; 0.85 | ❌ fail 0.3940 | −0.4560 | ❌ fail 0.3716 | −0.4784 |" in example_md


def test_all_pass_status_and_icon() -> None:
    from ragreport.examples import example_files

    f = example_files()
    r = ragreport.evaluate(f.qrels, f.runs[0])
    md = build_report([r], parse_targets({"R@5": ">= 0.1", "RR": 0.5}),
                      generated_at="2026-01-01T00:00:00Z").to_markdown()
    assert "✅ **All checks pass** (2 target checks)" in md
    assert "| R@5 | &gt;= 0.1 | ✅ pass 0.3940 | +0.2940 |" in md
    assert "(baseline)" not in md  # one run: nothing to compare with
    assert "Deltas against" not in md


def test_no_targets() -> None:
    r = ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["P@1"])
    md = build_report([r], generated_at="2026-01-01T00:00:00Z").to_markdown()
    assert "**No targets set**" in md
    assert "No targets set." in md
    assert_tables_intact(md)


def test_summary_deltas(example_md: str) -> None:
    # mean [95% interval], then the delta: plain, since no delta of the example is significant
    assert ("| P@3 | 0.5772 [0.4634, 0.6911] | 0.5285 [0.4228, 0.6341] ▼ −0.0488 |"
            in example_md)
    assert "| RR | 0.7393 [0.6252, 0.8478] | 0.7515 [0.6376, 0.8567] ▲ +0.0122 |" in example_md
    assert ("| nDCG@5 | 0.5425 [0.4400, 0.6453] | 0.5220 [0.4147, 0.6235] ▼ −0.0205 |"
            in example_md)
    assert "**0." not in example_md and "**▼" not in example_md and "**▲" not in example_md
    assert ("Statistics: 95% percentile bootstrap over queries (10000 resamples, 1000 for "
            "curves, seed 0); significance: paired randomization test (sign flips), "
            "Holm-corrected" in example_md.split("### Summary")[1].split("### Worst")[0])


def test_same_value_has_no_arrow() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a", "x"], "q2": ["x", "b"]}
    a = evaluate_named(qrels, run, "a", ["P@1", "RR"])
    b = evaluate_named(qrels, run, "b", ["P@1", "RR"])
    md = build_report([a, b], generated_at="2026-01-01T00:00:00Z").to_markdown()
    assert "| P@1 | 0.5000 [0.0000, 1.0000] | 0.5000 [0.0000, 1.0000] ±0.0000 |" in md
    md = build_report([a, b], generated_at="2026-01-01T00:00:00Z", stats=False).to_markdown()
    assert "| P@1 | 0.5000 | 0.5000 ±0.0000 |" in md
    assert "▲" not in md.split("### Summary")[1].split("\n", 3)[3]


def test_baseline_choice() -> None:
    from ragreport.examples import example_files

    f = example_files()
    results = [ragreport.evaluate(f.qrels, p) for p in f.runs]
    md = build_report(results, baseline="tfidf", generated_at="2026-01-01T00:00:00Z"
                      ).to_markdown()
    assert "bm25, tfidf (baseline)" in md
    assert "| P@3 | 0.5772 [0.4634, 0.6911] ▲ +0.0488 | 0.5285 [0.4228, 0.6341] |" in md


def test_worst_queries_in_details(example_md: str) -> None:
    blocks = re.findall(r"<details><summary>(.*?)</summary>\n(.*?)</details>", example_md,
                        flags=re.S)
    assert [s for s, _ in blocks] == ["Tie exposure: no target decision depends on the order "
                                      "of tied scores (8 run-measure pairs have ties)",
                                      "bm25: 20 worst of 41 queries by R@5 (K=5)",
                                      "tfidf: 20 worst of 41 queries by R@5 (K=5)",
                                      "Precision-recall curve (11-point interpolated "
                                      "precision)"]
    assert "| R@5 | bm25 | 6 of 41 at K=5 | 0 of 41 |" in blocks[0][1]  # folded, still there
    body = blocks[1][1]
    assert "| Query | Text | R@5 | Failure |" in body
    assert "| q03 | difference between is and == | 0.0000 | relevant only beyond K |" in body
    assert len([line for line in body.split("\n") if line.startswith("| q")]) == 20
    # GitHub renders the table inside <details>: a blank line follows the summary
    assert "</summary>\n\n" in example_md


def test_health_and_conventions(example_md: str) -> None:
    assert ("**Dataset health:** 41 evaluated, 0 run-only, 0 qrels-only, no relevant document: "
            "2 (scored 0), 0 empty retrievals, 0 duplicates dropped (every run).") in example_md
    assert "- P@K denominator: K, even when fewer than K documents were retrieved" in example_md


def test_health_per_run_when_different() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    a = evaluate_named(qrels, {"q1": ["a"], "q2": ["b"]}, "a", ["P@1"])
    b = evaluate_named(qrels, {"q1": ["a"], "q3": ["b"]}, "b", ["P@1"])
    md = build_report([a, b], generated_at="2026-01-01T00:00:00Z").to_markdown()
    line = next(x for x in md.split("\n") if x.startswith("**Dataset health:**"))
    assert "a: 2 evaluated" in line and "b: 1 evaluated, 1 run-only, 1 qrels-only" in line


def test_deterministic(example: Report) -> None:
    again = regen.example_report()
    assert again.to_markdown() == example.to_markdown() == render_markdown(example)
    assert render_markdown(example, max_chars=2500) == render_markdown(example, max_chars=2500)


def test_renders_as_github_markdown(example_md: str) -> None:
    html = html_of(example_md)
    assert html.count("<table>") == 6  # targets, tie exposure, summary, 2 x worst, P-R
    assert "<details>" in html and "<summary>" in html


# --- escaping -------------------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "| a | b |",
    "`code` ``x``",
    "[x](javascript:alert(1))",
    "![i](http://e/x.png)",
    "**bold** _em_ ~~s~~ # h",
    "back\\slash\\|pipe & &amp; &lt;",
    "new\nline\r\ncr\ttab\u2028sep",
]


def hostile_report() -> Report:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[str]] = {}
    texts = {}
    for i, h in enumerate(HOSTILE):
        q = f"{h} q{i}"
        qrels[q] = {f"{h} rel{i}": 1, f"{h} other{i}": 0}
        run[q] = [f"{h} other{i}", f"{h} junk{i}", f"{h} rel{i}"]
        texts[q] = f"{h} text of {i}"
    results = [evaluate_named(qrels, run, f"{h} run{i}", ["P@1", "RR", "nDCG@3"])
               for i, h in enumerate(HOSTILE[:4])]
    docs = {d: f"{HOSTILE[0]} doc text" for q in qrels for d in qrels[q]}
    inputs = [InputFile("run", h, h, "0" * 64, 1) for h in HOSTILE]
    return build_report(results, parse_targets({"P@1": 0.5}), queries=texts, docs=docs,
                        title=" ".join(HOSTILE), command=" ".join(HOSTILE), inputs=inputs,
                        generated_at="2026-01-01T00:00:00Z")


def without_chart(md: str) -> str:
    """``md`` without its Mermaid chart: a fenced block (never linked by GitHub) that holds
    no user text (tests/report/test_mermaid.py checks it on its own)."""
    return re.sub(r"\n```mermaid\n.*?\n```\n", "\n", md, flags=re.S)


def assert_safe(md: str) -> None:
    md = without_chart(md)
    low = md.lower()
    assert "<script" not in low and "<img" not in low
    assert re.search(r"(?<!\\)\]\(", md) is None, "a link could form"
    assert re.search(r"(?<!\\)`", md.replace("`--targets`", "").replace(
        "`[tool.ragreport.targets]`", "")) is None, "a code span could form"
    for line in md.split("\n"):
        if line.startswith("<details>"):
            assert re.fullmatch(r"<details><summary>(?:[^<>]|<!-- -->)*</summary>", line), line
    assert_tables_intact(md)
    html = html_of(md).lower()
    assert "<script" not in html and "<img" not in html and "javascript:" not in html.replace(
        "javascript:alert(1))", "")
    # a bare http(s) URL may be autolinked (as GitHub does); nothing else becomes a link
    assert re.findall(r'href="(?!https?://)', html) == []
    assert "<code>" not in html and "<em>" not in html and "<del>" not in html


def test_hostile_strings_in_every_field() -> None:
    report = hostile_report()
    md = report.to_markdown()
    assert_safe(md)
    # the text is still there, escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "\\| a \\| b \\|" in md
    assert "\\[x\\](javascript:alert(1))" in md
    assert "&#92;" in md  # a user backslash cannot escape our \|
    title = md.split("\n")[1]
    assert title.startswith("## &lt;script&gt;")
    # every run's column is there
    assert md.count("run0") >= 3


# --- inert on GitHub: no mention, no issue reference, no link --------------------------------
# GitHub finds these in the text nodes of the rendered page, after Markdown: a backslash or an
# entity does not stop them (github/markup#1168, github/cmark-gfm#181). The patterns below are
# stricter than GitHub's (any '#' before a digit counts, whatever precedes it).

GITHUB_LIVE = [
    ("mention", re.compile(r"(?:^|[^A-Za-z0-9_`])@[A-Za-z0-9]")),
    ("commit", re.compile(r"@[0-9a-f]{7}", re.I)),
    ("issue", re.compile(r"#[0-9]")),
    ("GH-issue", re.compile(r"\bGH-[0-9]", re.I)),
    ("url", re.compile(r"[a-z]+://|\bwww\.", re.I)),
]

MENTIONS = [
    ("user", "@octocat"),
    ("team", "@github/security-team"),
    ("in-parens", "(@octocat)"),
    ("after-unicode-letter", "é@octocat"),
    ("backslash-escaped", "\\@octocat"),
    ("entity", "&#64;octocat"),
    ("double-at", "@@octocat"),
    ("issue", "#123"),
    ("issue-in-word", "fixes#123"),
    ("issue-entity", "&#35;123"),
    ("cross-repo", "owner/repo#123"),
    ("GH", "GH-123"),
    ("gh-lower", "see gh-7"),
    ("commit", "owner/repo@0123abcd"),
    ("issue-url", "https://github.com/owner/repo/issues/1"),
    ("www", "www.github.com/owner/repo/pull/2"),
    ("pipe-and-mention", "a|@b|#3"),
]


class _TextNodes(HTMLParser):
    """The text nodes of rendered HTML, as GitHub's filters see them (comments split them)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.nodes: list[str] = []

    def handle_data(self, data: str) -> None:
        self.nodes.append(data)


def text_nodes(html: str) -> list[str]:
    parser = _TextNodes()
    parser.feed(html)
    parser.close()
    return parser.nodes


def live_references(md: str) -> list[tuple[str, str]]:
    """(kind, text node) of every mention, issue reference or link GitHub could make."""
    return [(kind, node) for node in text_nodes(html_of(without_chart(md)))
            for kind, pat in GITHUB_LIVE if pat.search(node)]


def assert_inert(escaped: str) -> None:
    """An escaped string, rendered, holds nothing GitHub would link (checked per text node)."""
    html = mistune.create_markdown(escape=False, plugins=["table", "url"])(f"x {escaped} x")
    assert isinstance(html, str)
    assert [(k, n) for n in text_nodes(html) for k, p in GITHUB_LIVE if p.search(n)] == [], \
        (escaped, html)


@pytest.mark.parametrize(("kind", "text"), MENTIONS, ids=[k for k, _ in MENTIONS])
def test_escaped_strings_are_inert_on_github(kind: str, text: str) -> None:
    for escaped in (escape_md(text), escape_html(text)):
        assert_inert(escaped)
        # and the text reads the same once rendered (the comment is invisible)
        html = mistune.create_markdown(escape=False)(escaped)
        assert isinstance(html, str)
        assert "".join(text_nodes(html)).strip() == text.replace("\\@", "@") or \
            kind == "backslash-escaped"


def test_own_names_stay_plain() -> None:
    # '@' after a letter or digit is no mention: measure names keep their plain form
    assert escape_md("nDCG@10") == "nDCG@10"
    assert escape_md("a@b.example") == "a@b.example"
    assert escape_md("C# and issue #x") == "C\\# and issue \\#x"
    assert escape_md("P(rel=2)@5") == f"P(rel=2)@{BREAK}5"  # ')@5' would mention user '5'


def test_report_with_mentions_in_every_field_is_inert() -> None:
    names = [t for _, t in MENTIONS]
    qrels = {f"{t} q{i}": {f"{t} d{i}": 1, "other": 0} for i, t in enumerate(names)}
    run = {q: ["other", f"{names[i]} d{i}"] for i, q in enumerate(qrels)}
    texts = {q: f"text {q}" for q in qrels}
    results = [evaluate_named(qrels, run, f"{t} run{i}", ["P(rel=1)@1", "RR", "hits@2"])
               for i, t in enumerate(names[:3])]
    inputs = [InputFile("run", t, t, "0" * 64, 1) for t in names]
    report = build_report(results, parse_targets({"P(rel=1)@1": 0.5, "hits@2": 1}),
                          queries=texts, title=" ".join(names), command=" ".join(names),
                          inputs=inputs, generated_at="2026-01-01T00:00:00Z")
    for limit in (60_000, 2500):
        md = report.to_markdown(max_chars=limit)
        assert live_references(md) == []
        assert_safe(md)
    md = report.to_markdown()
    assert f"@{BREAK}octocat" in md and f"\\#{BREAK}123" in md
    assert MARKER in md.split("\n")[0]


def test_hostile_strings_when_truncated() -> None:
    report = hostile_report()
    full = report.to_markdown()
    for limit in [n for n in (1000, 1500, 2000, 3000, 4000) if n < len(full)] + [len(full) - 1]:
        md = report.to_markdown(max_chars=limit)
        assert len(md) <= limit
        assert "truncated" in md
        if "| " in md:
            assert_safe(md)


def test_escape_functions() -> None:
    assert escape_md("a|b") == "a\\|b"
    assert escape_md("`x`") == "\\`x\\`"
    assert escape_md("<b>&") == "&lt;b&gt;&amp;"
    assert escape_md("a\\|") == "a&#92;\\|"
    assert escape_md("one\ntwo\r\nthree") == "one two three"
    assert escape_md("x\x00y\x1b") == "xy"
    assert escape_md("*_[]~#") == "\\*\\_\\[\\]\\~\\#"
    assert escape_md("abcdef", limit=4) == "abc…"
    assert escape_md("<<<<<", limit=3) == "&lt;&lt;…"
    assert escape_html("<a href='x'>|`") == "&lt;a href=&#39;x&#39;&gt;&#124;&#96;"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_escape_md_property(text: str) -> None:
    out = escape_md(text)
    assert_inert(out)
    assert_inert(escape_html(text))
    out = out.replace(BREAK, "")
    assert "\n" not in out and "\r" not in out
    assert UNESCAPED_PIPE.search(out) is None
    assert "<" not in out and ">" not in out
    assert re.search(r"(?<!\\)[`*_\[\]~]", out) is None
    # every backslash in the output starts one of our escapes
    assert re.search(r"\\(?![|`*_\[\]~#])", out) is None
    html = escape_html(text).replace(BREAK, "")
    assert "<" not in html and ">" not in html and "\n" not in html


# --- length cap -----------------------------------------------------------------------------

def big_results(n_queries: int, n_runs: int = 2, text: str = "",
                name: str = "run") -> tuple[list[ragreport.EvaluationResult], dict[str, str]]:
    qrels = {f"query-{i:05d}": {f"d{i}": 1, f"d{i + 1}": 2} for i in range(n_queries)}
    results = []
    for r in range(n_runs):
        run = {q: list(dict.fromkeys([f"d{(i * (r + 3)) % (n_queries + 7)}", f"d{i + (r % 2)}",
                                      "dz"])) for i, q in enumerate(qrels)}
        results.append(evaluate_named(qrels, run, f"{name}{r}", ["P@1", "P@3", "RR", "nDCG@3"]))
    texts = {q: f"{text}{q}" for q in qrels}
    return results, texts


@pytest.mark.slow
def test_ten_thousand_queries_all_worst() -> None:
    results, texts = big_results(10_000, text="a rather long question about something ")
    report = build_report(results, default_targets(), queries=texts, worst_n=2_000,
                          stats=False, generated_at="2026-01-01T00:00:00Z")
    md = report.to_markdown()
    assert len(md) <= 60_000
    m = re.search(r"truncated: (\d+) worst queries not shown;.*see the HTML/JSON report", md)
    assert m, md[:2000]
    shown = len([x for x in md.split("\n") if x.startswith("| query-")])
    assert shown > 100
    assert shown + int(m.group(1)) == 4_000
    assert_tables_intact(md)
    assert "### Targets" in md and "### Summary" in md
    assert md == report.to_markdown()


def test_default_worst_n_fits_untruncated() -> None:
    results, texts = big_results(10_000)
    md = build_report(results, queries=texts, stats=False,
                      generated_at="2026-01-01T00:00:00Z").to_markdown()
    assert "✂️ truncated" not in md
    assert len([x for x in md.split("\n") if x.startswith("| query-")]) == 40


def test_huge_query_texts_are_cut() -> None:
    results, texts = big_results(30, text="x" * 1_000_000 + "\n|<script>")
    report = build_report(results, queries=texts, worst_n=30,
                          generated_at="2026-01-01T00:00:00Z")
    md = report.to_markdown()
    assert len(md) <= 60_000
    assert "✂️ truncated" not in md  # query texts are always cut to a short cell
    assert "x" * 81 not in md and "script" not in md


def test_huge_ids_and_names() -> None:
    long = "L" * 20_000
    qrels = {f"{long}{i}": {"a": 1} for i in range(20)}
    run = {q: ["b", "a"] for q in qrels}
    results = [evaluate_named(qrels, run, f"{long}{r}|", ["P@1", "RR"]) for r in range(3)]
    report = build_report(results, parse_targets({"RR": 0.9}), title=long * 5,
                          command=long, generated_at="2026-01-01T00:00:00Z")
    md = report.to_markdown()
    assert len(md) <= 60_000
    assert "long names cut to 40 characters" in md
    assert_tables_intact(md)
    assert "### Targets" in md


@pytest.mark.parametrize("runs,measures", [(150, 4), (3, 2000), (60, 200)])
def test_many_runs_and_measures(runs: int, measures: int) -> None:
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(5)}
    names = [f"P@{k}" for k in range(1, measures + 1)]
    results = []
    for r in range(runs):
        run = {q: list(dict.fromkeys([f"d{(i + r) % 5}", f"d{i}"])) for i, q in enumerate(qrels)}
        results.append(ragreport.evaluate(qrels, run, names, k_max=measures,
                                          name=f"a-rather-long-run-name-{r:04d}"))
    report = build_report(results, parse_targets({n: 0.5 for n in names[:50]}), stats=False,
                          worst_n=2, generated_at="2026-01-01T00:00:00Z")
    md = report.to_markdown()
    assert len(md) <= 60_000
    assert "truncated:" in md and "see the HTML/JSON report" in md
    assert md.startswith(MARKER + "\n")
    assert ("target checks fail**" in md) or ("All checks pass" in md)
    assert_tables_intact(md)


def test_astral_characters_counted_as_utf16() -> None:
    results, texts = big_results(200, text="😀" * 70)
    report = build_report(results, queries=texts, worst_n=200,
                          generated_at="2026-01-01T00:00:00Z")
    md = report.to_markdown(max_chars=20_000)
    assert len(md.encode("utf-16-le")) // 2 <= 20_000


def test_tiny_limit_gives_minimal_document(example: Report) -> None:
    md = example.to_markdown(max_chars=1000)
    assert len(md) <= 1000
    assert md.startswith(MARKER + "\n## Retrieval evaluation\n")
    assert "10 of 10 target checks fail" in md and "truncated" in md


def test_truncation_counts(example: Report) -> None:
    # a limit at which some, not all, worst-query rows fit (the fixed part of the example's
    # comment is about 3,400 characters since the conventions name the tie rule)
    md = example.to_markdown(max_chars=4200)
    assert len(md) <= 4200
    m = re.search(r"truncated: confidence intervals not shown; (\d+) worst queries not shown",
                  md)
    assert m
    shown = len([x for x in md.split("\n") if re.match(r"\| q\d\d ", x)])
    assert shown + int(m.group(1)) == 40
    assert_tables_intact(md)


def test_limit_is_checked(example: Report) -> None:
    with pytest.raises(RagReportError, match="max_chars"):
        example.to_markdown(max_chars=10)


def test_drop_gate_and_ci_targets() -> None:
    from ragreport.examples import example_files

    f = example_files()
    results = [ragreport.evaluate(f.qrels, p) for p in f.runs]
    targets = parse_targets({"R@5": {"min": 0.3, "on": "ci_lower"}, "RR": 0.5})
    report = build_report(results, targets, max_drop=0.0, resamples=2000, curve_resamples=200,
                          generated_at="2026-01-01T00:00:00Z")
    md = report.to_markdown()
    assert "| R@5 | &gt;= 0.3 (CI lower bound) | " in md
    assert "(mean 0.3940)" in md
    assert "### Drop gate (max drop 0)" in md
    assert "| Run | Measure | Δ vs baseline | 95% CI of Δ | p, Holm | Result |" in md
    n_fail = sum(d.failed for d in report.drops)
    status = md.split("\n")[3]
    if n_fail:
        assert f"{n_fail} of {len(report.drops)} drop check" in status
    else:
        assert status.startswith("✅ **All checks pass**") == report.all_passed
    assert "- statistics: 95% percentile bootstrap over queries" in md
    assert_tables_intact(md)
    assert len(md) <= 60_000


def test_drop_failure_in_status() -> None:
    qrels = {f"q{i}": {"a": 1} for i in range(40)}
    good = evaluate_named(qrels, {q: ["a", "b"] for q in qrels}, "good", ["RR"])
    bad = evaluate_named(qrels, {q: ["b", "c", "a"] for q in qrels}, "bad", ["RR"])
    report = build_report([good, bad], parse_targets({"RR": 0.1}), max_drop=0.1,
                          resamples=1000, curve_resamples=100,
                          generated_at="2026-01-01T00:00:00Z")
    md = report.to_markdown()
    assert md.split("\n")[3] == "❌ **1 of 1 drop check fails** (max drop 0.1)"
    assert "| bad | RR | −0.6667 |" in md and "❌ fail ⚠️ depends on unjudged documents |" in md


def test_breaks_count_toward_the_length_cap() -> None:
    # '@@@…' and '#1#1…' grow the most once made inert: the cap still holds at the minimum
    qrels = {f"@{i}#{i}": {"d": 1} for i in range(300)}
    run = {q: ["d"] for q in qrels}
    results = [evaluate_named(qrels, run, "@" * 200 + str(i), ["P@1"]) for i in range(3)]
    report = build_report(results, parse_targets({"P@1": 0.5}), title="@" * 300 + "#1" * 300,
                          queries={q: "@x #1 " * 50 for q in qrels}, stats=False,
                          generated_at="2026-01-01T00:00:00Z")
    for limit in (1000, 1200, 3000, 20_000):
        md = report.to_markdown(max_chars=limit)
        assert len(md) <= limit
        assert live_references(md) == []
