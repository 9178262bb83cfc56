"""The Mermaid chart in the Markdown report (issue 15): its structure (checked against the
``xychart-beta`` grammar the chart uses), its place, what it draws, hostile names, the
``--no-chart`` option and the length cap.

A real parse by Mermaid itself needs its JavaScript bundle in a browser, which CI does not
install; ``tests/mermaid_real_parse.py`` does it by hand (see its docstring)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

import ragreport
from ragreport.cli.app import main
from ragreport.examples import example_files
from ragreport.report import Report, build_report
from ragreport.report.mermaid import (
    MAX_POINTS,
    chart_legend,
    headline_curve,
    mermaid_chart,
    mermaid_text,
)
from ragreport.targets import default_targets, parse_targets

HOSTILE_NAMES = [
    'quote " run', "bracket [x] ]", "new\nline", "back`tick```", "arrow --> b",
    "%%{init: {\"theme\": \"dark\"}}%%", "semi; colon: #1 & <b>", "```mermaid",
]

_LINE = re.compile(r"    line \[(-?\d+(?:\.\d+)?(?:, -?\d+(?:\.\d+)?)*)\]")


def parse_chart(block: str) -> dict[str, object]:
    """Check a chart block line by line against the xychart-beta statements it uses and
    return what it says; any other line fails."""
    lines = block.split("\n")
    assert lines[0] == "```mermaid" and lines[-1] == "```"
    body = lines[1:-1]
    assert all("`" not in ln for ln in body), "a backtick could close the fence"
    init = re.fullmatch(r"%%\{init: (.*)\}%%", body[0])
    assert init, body[0]
    config = json.loads(init.group(1))
    palette = config["themeVariables"]["xyChart"]["plotColorPalette"].split(", ")
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in palette)
    assert body[1] == "xychart-beta"
    title = re.fullmatch(r'    title "([^"\n]*)"', body[2])
    assert title, body[2]
    xs = re.fullmatch(r'    x-axis "K" \[(\d+(?:, \d+)*)\]', body[3])
    assert xs, body[3]
    ks = [int(x) for x in xs.group(1).split(", ")]
    ya = re.fullmatch(r'    y-axis "([^"\n]*)" (-?[\d.]+) --> ([\d.]+)', body[4])
    assert ya, body[4]
    series = []
    for ln in body[5:]:
        m = _LINE.fullmatch(ln)
        assert m, ln
        series.append([float(v) for v in m.group(1).split(", ")])
    assert series and all(len(s) == len(ks) for s in series)
    assert len(palette) == len(series)  # one colour per line, in drawing order
    top = float(ya.group(3))
    assert all(0 <= v <= top for s in series for v in s)
    return {"title": title.group(1), "ks": ks, "ytitle": ya.group(1), "top": top,
            "series": series, "palette": palette}


def chart_of(md: str) -> str:
    m = re.search(r"\n(```mermaid\n.*?\n```)\n", md, re.S)
    assert m, "no chart"
    return m.group(1)


@pytest.fixture(scope="module")
def results() -> list[ragreport.EvaluationResult]:
    f = example_files()
    return [ragreport.evaluate(f.qrels, p) for p in f.runs]


@pytest.fixture(scope="module")
def example(results: list[ragreport.EvaluationResult]) -> Report:
    return build_report(results, default_targets(), generated_at="2026-01-01T00:00:00Z",
                        resamples=200, curve_resamples=50)


def test_chart_draws_every_run_and_the_target(example: Report) -> None:
    md = example.to_markdown()
    got = parse_chart(chart_of(md))
    curve = headline_curve(example)
    assert curve is not None and curve.family == "R"  # the first target is R@5
    assert got["ks"] == list(range(1, 21))
    assert got["top"] == 1.0 and got["ytitle"] == "R@K"
    series = got["series"]
    assert isinstance(series, list) and len(series) == 3  # two runs, one target
    for run, s in zip(example.runs, series, strict=False):
        assert s == [float(f"{v:.4f}") for v in curve.series[run]]  # every K, 4 decimals
    assert series[2] == [0.85] * 20  # the target R@5 > 0.85, flat
    assert got["palette"] == ["#0072b2", "#be5400", "#57606a"]
    assert ("Lines, in drawing order: 🟦 bm25 (blue) · 🟧 tfidf (vermilion) · ⬛ target "
            "R@5 &gt; 0.85 (grey)") in md


def test_chart_comes_right_after_the_summary(example: Report) -> None:
    md = example.to_markdown()
    i_summary, i_chart = md.index("### Summary"), md.index("```mermaid")
    assert i_summary < i_chart < md.index("### Worst queries")
    between = md[i_summary:i_chart]
    assert between.rstrip().endswith("</sub>")  # the table and its statistics line, then it


def test_no_chart(example: Report, tmp_path: Path) -> None:
    from dataclasses import replace

    assert "```mermaid" not in replace(example, chart=False).to_markdown()
    f = example_files()
    out = tmp_path / "o.md"
    assert main(["report", str(f.qrels), *map(str, f.runs), "--markdown", str(out),
                 "--no-chart", "--no-stats", "--jobs", "1"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "```mermaid" not in text and "Lines, in drawing order" not in text
    assert main(["report", str(f.qrels), *map(str, f.runs), "--markdown", str(out),
                 "--no-stats", "--jobs", "1"]) == 0
    assert "```mermaid" in out.read_text(encoding="utf-8")


def test_chart_is_dropped_first_when_space_is_short(example: Report) -> None:
    from dataclasses import replace

    full = example.to_markdown()
    without = replace(example, chart=False).to_markdown()
    chart = len(full) - len(without)
    assert chart > 500
    # room for everything but the chart (and the notice saying so)
    md = example.to_markdown(max_chars=len(without) + 200)
    assert "```mermaid" not in md
    assert "✂️ truncated: chart not shown;" in md
    assert "[0." in md  # the confidence intervals are still there
    assert md.count("| q") == without.count("| q")  # every worst-query row too
    # a limit that holds the whole document keeps it (the cap counts UTF-16 code units)
    assert example.to_markdown(max_chars=len(full.encode("utf-16-le")) // 2) == full


def test_hostile_run_names_never_reach_the_chart(
        results: list[ragreport.EvaluationResult]) -> None:
    f = example_files()
    runs = [ragreport.evaluate(f.qrels, f.runs[i % 2], name=n)
            for i, n in enumerate(HOSTILE_NAMES)]
    report = build_report(runs, default_targets(), stats=False,
                          generated_at="2026-01-01T00:00:00Z", title="t --> `x` [\"y\"]")
    md = report.to_markdown()
    block = chart_of(md)
    got = parse_chart(block)
    assert len(got["series"]) == len(HOSTILE_NAMES) + 1  # type: ignore[arg-type]
    for word in ("quote", "bracket", "tick", "arrow", "dark", "semi", "<b>"):
        assert word not in block  # no run name: every line of it matched the grammar above
    assert "t --> " not in block  # nor the title
    # the legend names every run on one line, escaped for Markdown
    legend = next(ln for ln in md.split("\n") if ln.startswith("Lines, in drawing order: "))
    assert "quote &quot; run" in legend and "back\\`tick\\`\\`\\`" in legend
    assert "new line" in legend  # the newline became a space
    assert legend.count("·") == len(HOSTILE_NAMES)
    # the colours cycle after the seventh run; the order still tells the lines apart
    assert legend.split(" · ")[7].startswith("🟦 ")


MERMAID_TEXT = [
    ('say "hi"', "say 'hi'"),
    ("a [b] {c}", "a (b) (c)"),
    ("one\ntwo\r\nthree\tfour", "one two three four"),
    ("x ``` y", "x ''' y"),
    ("a --> b ---> c", "a -› b -› c"),
    ("%%{init: {}}%%", "％％(init: ())％％"),
    ("a; b # c & d", "a, b ＃ c ＆ d"),
    ("<b>bold</b>", "‹b›bold‹/b›"),
    ("back\\slash | pipe", "back/slash / pipe"),
    ("\u202etrick\u0000", "trick"),
    ("x" * 100, "x" * 79 + "…"),
]


@pytest.mark.parametrize(("text", "expected"), MERMAID_TEXT)
def test_mermaid_text(text: str, expected: str) -> None:
    got = mermaid_text(text)
    assert got == expected
    assert '"' not in got and "`" not in got and "\n" not in got and "-->" not in got


def deep_run(depth: int, name: str = "deep") -> ragreport.EvaluationResult:
    """A run ranking ``depth`` documents for 5 queries (the example runs stop at 50)."""
    run = {f"q{i}": {f"d{j}": 1000.0 - j for j in range(depth)} for i in range(5)}
    qrels = {f"q{i}": {f"d{j}": 1 for j in range(i, depth, 7)} for i in range(5)}
    return ragreport.evaluate(qrels, run, ["R@5"], k_max=depth, name=name)


def test_many_k_values_are_sampled() -> None:
    rep = build_report([deep_run(120)], stats=False, generated_at="2026-01-01T00:00:00Z")
    assert rep.k_max == 120
    got = parse_chart(chart_of(rep.to_markdown()))
    ks = got["ks"]
    assert isinstance(ks, list) and len(ks) <= MAX_POINTS and ks[0] == 1
    assert ks[-1] == rep.k_max  # the deepest K is always on the axis
    steps = [b - a for a, b in itertools.pairwise(ks)]
    assert len(set(steps[:-1])) <= 1  # evenly spaced but for the last gap (to k_max)
    assert 0 < steps[-1] <= steps[0]
    series = got["series"]
    assert isinstance(series, list)
    curve = headline_curve(rep)
    assert curve is not None
    assert series[0][-1] == pytest.approx(curve.series[rep.runs[0]][-1], abs=5e-5)


@pytest.mark.parametrize("k_max", [51, 97, 100, 101, 1000])
def test_deepest_k_is_on_the_axis(k_max: int) -> None:
    rep = build_report([deep_run(k_max)], stats=False, generated_at="2026-01-01T00:00:00Z")
    assert rep.k_max == k_max
    got = parse_chart(chart_of(rep.to_markdown()))
    ks = got["ks"]
    assert isinstance(ks, list) and 2 <= len(ks) <= MAX_POINTS
    assert ks[0] == 1 and ks[-1] == k_max and ks == sorted(set(ks))


@pytest.mark.parametrize("n_runs", [30, 80])
def test_many_runs_stay_within_the_cap(n_runs: int) -> None:
    """Many runs with hostile names and a deep K: the Markdown stays within the cap; when
    the chart is there it is whole (parses), ends at k_max and names no run; when it is
    not, the notice says so. 30 runs keep the chart at 60,000 characters, 80 do not."""
    runs = [deep_run(100, f"{HOSTILE_NAMES[i % len(HOSTILE_NAMES)]} {i}")
            for i in range(n_runs)]
    report = build_report(runs, stats=False, generated_at="2026-01-01T00:00:00Z")
    charts = 0
    for cap in (60_000, 20_000):
        md = report.to_markdown(max_chars=cap)
        assert len(md.encode("utf-16-le")) // 2 <= cap
        if "```mermaid" in md:
            charts += 1
            block = chart_of(md)
            got = parse_chart(block)
            assert len(got["series"]) == n_runs  # type: ignore[arg-type]
            assert got["ks"][-1] == report.k_max  # type: ignore[index]
            for word in ("quote", "bracket", "tick", "arrow", "dark", "semi", "<b>"):
                assert word not in block
        else:
            assert "chart not shown" in md
    assert charts == (1 if n_runs == 30 else 0)


def test_headline_is_the_first_target_with_a_curve(
        results: list[ragreport.EvaluationResult]) -> None:
    rep = build_report(results, parse_targets({"Rprec": 0.5, "nDCG@5": 0.4}), stats=False,
                       generated_at="2026-01-01T00:00:00Z")
    curve = headline_curve(rep)
    assert curve is not None and curve.family == "nDCG"  # Rprec has no curve
    plain = build_report(results, stats=False, generated_at="2026-01-01T00:00:00Z")
    first = headline_curve(plain)
    assert first is not None and first.family == plain.curves[0].family
    got = mermaid_chart(plain)
    assert got is not None and all(ln.kind == "run" for ln in got[1])  # no target line


def test_counts_get_their_own_axis() -> None:
    f = example_files()
    r = ragreport.evaluate(f.qrels, f.runs[0], ["Hits@5"])
    rep = build_report([r], stats=False, generated_at="2026-01-01T00:00:00Z")
    got = parse_chart(chart_of(rep.to_markdown()))
    top = got["top"]
    series = got["series"]
    assert isinstance(top, float) and isinstance(series, list)
    assert top > 1 and max(max(s) for s in series) <= top


def test_legend_says_target_lines() -> None:
    from ragreport.report.mermaid import ChartLine

    lines = [ChartLine("run", "a", "#000000", "🟦", "blue"),
             ChartLine("target", "R@5 > 0.8", "#57606a", "⬛", "grey")]
    assert chart_legend(lines, ["a", "R@5 &gt; 0.8"]).endswith("⬛ target R@5 &gt; 0.8 (grey)")
