"""Statistics in the HTML and Markdown reports: intervals, significance marks, bands, gates.

A constructed case: 60 queries with one relevant document each; run ``a`` ranks it first every
time, run ``b`` ranks it second on ``misses`` of them. With 20 misses, ``b`` is significantly
worse on P@1 and RR (and equal on R@5); with 2 misses nothing is significant.
"""

from __future__ import annotations

import dataclasses
import re
from functools import cache

import pytest
from test_report_html import parse, section

import ragreport
from ragreport.present import p_text
from ragreport.report import Report, build_report
from ragreport.report.cells import SummaryCell
from ragreport.targets import parse_targets

WHEN = "2026-01-01T00:00:00Z"
MEASURES = ["P@1", "RR", "R@5", "nDCG@5"]


def results(misses: int, n: int = 60) -> list[ragreport.EvaluationResult]:
    qrels = {f"q{i:02d}": {"rel": 1} for i in range(n)}
    run_a = {q: {"rel": 3.0, "x": 2.0, "y": 1.0} for q in qrels}
    run_b = {q: ({"x": 3.0, "rel": 2.0, "y": 1.0} if i < misses else
                 {"rel": 3.0, "x": 2.0, "y": 1.0}) for i, q in enumerate(qrels)}
    return [ragreport.evaluate(qrels, run_a, MEASURES, k_max=5, name="a"),
            ragreport.evaluate(qrels, run_b, MEASURES, k_max=5, name="b")]


@cache
def report(misses: int, stats: bool = True) -> Report:
    return build_report(results(misses), resamples=2000, curve_resamples=200, stats=stats,
                        generated_at=WHEN)


@cache
def gated() -> Report:
    """20 misses, a target on the CI lower bound and the drop gate."""
    targets = parse_targets({"P@1": {"min": 0.6, "on": "ci_lower"}, "RR": 0.5})
    return build_report(results(20), targets, resamples=2000, curve_resamples=200,
                        max_drop=0.05, generated_at=WHEN)


def cells(rep: Report) -> dict[tuple[str, str], SummaryCell]:
    return {(row.measure, c.run): c for row in rep.summary for c in row.cells}


def summary_cells(html: str) -> dict[tuple[str, str], str]:
    """(measure, run) -> text of the summary table cell, whitespace collapsed."""
    table = section(html, "summary").find("table", cls="summary")[0]
    out = {}
    for tr in table.find("tbody")[0].find("tr"):
        measure = tr.find("th")[0].text()
        for run, td in zip(["a", "b"], tr.find("td"), strict=True):
            out[(measure, run)] = " ".join(td.text().split())
    return out


# -- the data: the constructed cases are what the tests below assume -----------------------------


def test_constructed_cases() -> None:
    sig = cells(report(20))
    assert sig[("P@1", "b")].significant and sig[("RR", "b")].significant
    assert not sig[("R@5", "b")].significant
    assert sig[("P@1", "b")].delta_text == "−0.3333"
    ns = cells(report(2))
    assert not any(c.significant for c in ns.values())
    assert ns[("P@1", "b")].direction == "down"


# -- HTML -----------------------------------------------------------------------------------------


def test_html_intervals_and_significance_marks() -> None:
    rep = report(20)
    html = rep.to_html()
    text = summary_cells(html)
    p1 = cells(rep)[("P@1", "b")]
    # the mean, the delta with its mark, the interval and the corrected p-value
    assert text[("P@1", "b")].startswith("0.6667 ▼ −0.3333✱ significant [")
    assert p1.ci_text in text[("P@1", "b")]
    # the raw p-value, then Holm's over the family of the other measures (no target here)
    assert p1.p_raw is not None and p1.p_value is not None and p1.family == 4
    assert text[("P@1", "b")].endswith(f"p {p_text(p1.p_raw)}, Holm {p_text(p1.p_value)}")
    assert "[1.0000, 1.0000]" in text[("P@1", "a")]  # the baseline has its interval too
    assert "✱" not in text[("R@5", "b")] and "not significant" in text[("R@5", "b")]
    sec = section(html, "summary")
    sig = [d for d in sec.find("span", cls="delta") if "sig" in d.classes()]
    ns = [d for d in sec.find("span", cls="delta") if "ns" in d.classes()]
    assert len(sig) == 3 and len(ns) == 1  # P@1, RR, nDCG@5 significant; R@5 the same
    assert all("Holm-corrected p = " in (d.attrs.get("title") or "") for d in sig + ns)
    assert len(sec.find("span", cls="sig-mark")) == 3 + 1  # + the one in the legend note
    # the interval's title names the level
    titles = {n.attrs.get("title") for n in sec.iter("span") if n.attrs.get("title")}
    assert any(t and t.startswith("95% confidence interval of the mean") for t in titles)
    # the footnote names the test and the correction
    note = " ".join(sec.find("p", id="stats-note")[0].text().split())
    assert rep.stats is not None and rep.stats.describe() in note
    assert "paired randomization test" in note and "Holm-corrected" in note


def test_html_no_marks_when_not_significant() -> None:
    html = report(2).to_html()
    sec = section(html, "summary")
    assert not [d for d in sec.find("span", cls="delta") if "sig" in d.classes()]
    assert len(sec.find("span", cls="sig-mark")) == 1  # only the legend in the note
    text = summary_cells(html)
    assert text[("P@1", "b")].startswith("0.9667 ▼ −0.0333 (not significant) [")
    assert "✱" not in " ".join(text.values())


def test_html_without_stats() -> None:
    rep = report(20, stats=False)
    assert rep.stats is None
    html = rep.to_html()
    text = summary_cells(html)
    assert text[("P@1", "b")] == "0.6667 ▼ −0.3333"
    assert text[("P@1", "a")] == "1.0000"
    sec = section(html, "summary")
    assert not sec.find("span", cls="ci") and not sec.find("p", id="stats-note")
    body = html[html.index("<body>"):]
    assert "sig-mark" not in body and "confidence interval" not in body
    assert 'class="band' not in html and "Bands:" not in html
    assert 'id="drops"' not in html


def test_html_bands_in_curves() -> None:
    rep = report(20)
    html = rep.to_html()
    curves = section(html, "curves")
    figures = curves.find("figure")
    assert len(figures) == len(rep.curves) > 0
    for curve, fig in zip(rep.curves, figures, strict=True):
        assert set(curve.bands) == {"a", "b"}
        svg = fig.find("svg", cls="plot")[0]
        for i in (0, 1):
            groups = svg.find("g", cls=f"band-{i}")
            assert len(groups) == 1 and "band" in groups[0].classes()
            # the first run's band a translucent area in its colour, the second's hatched in
            # its colour (where they overlap, both show), each outlined by its two edges
            styles = [n.attrs.get("style") or "" for n in groups[0].iter()]
            if i == 0:
                assert any(f"fill: var(--c{i}," in s and "fill-opacity: 0.16" in s
                           for s in styles)
            else:
                assert any("fill: url(#" in s for s in styles)
                hatch = [n.attrs.get("style") or "" for p in svg.find("pattern")
                         for n in p.iter()]
                assert any(f"stroke: var(--c{i}," in s for s in hatch)
            edges = svg.find("g", cls=f"band-edge-{i}")
            assert len(edges) == 2 and all("band-edge" in e.classes() for e in edges)
        caption = " ".join(fig.find("figcaption")[0].text().split())
        assert ("Bands: 95% bootstrap interval of each run's mean (200 resamples over queries, "
                "seed 0), outlined in the run's colour, every second run's hatched.") in caption
    # the bands sit behind the lines: drawn before them in the SVG
    svg_text = html[html.index('class="plot"'):]
    assert svg_text.index('class="band band-1"') < svg_text.index("stroke: var(--c0")
    # a band is in the page as a class, never as an id (several plots share it)
    assert 'id="rrband' not in html and "rrband" not in html


def test_curve_svg_bands_deterministic_and_small() -> None:
    from ragreport.report.plots import curve_svg

    rep = report(20)
    one = curve_svg(rep.curves[0], rep.runs, prefix="t")
    assert one == curve_svg(rep.curves[0], rep.runs, prefix="t")
    bare = curve_svg(rep.curves[0].__class__(**{**rep.curves[0].__dict__, "bands": {}}),
                     rep.runs, prefix="t")
    assert 'class="band' in one and 'class="band' not in bare
    assert len(one) - len(bare) < 4000  # two bands of 5 points


def test_html_targets_on_ci_lower_and_drop_checks() -> None:
    rep = gated()
    html = rep.to_html()
    targets = section(html, "targets")
    row = targets.find("tr", cls="target-row")[0]
    assert "on CI lower bound" in row.text()
    tp1 = rep.targets[0]
    for c in tp1.cells:
        assert c.on == "ci_lower"
        assert f"{c.shown}CI lower bound; mean {c.mean:.4f}" in row.text()
    assert "the value is the lower bound of the 95% confidence interval" in " ".join(
        targets.text().split())
    # drop checks: one row per (run, target measure), with the interval, p and verdict
    drops = section(html, "drops")
    assert 'href="#drops"' in html
    rows = drops.find("tr", cls="drop-row")
    assert len(rows) == len(rep.drops) == 2
    for tr, d in zip(rows, rep.drops, strict=True):
        text = " ".join(tr.text().split())
        assert d.run in text and d.measure in text
        assert f"[{d.delta_lower:.4f}, {d.delta_upper:.4f}]" in text
        assert ("✘ fail" if d.failed else "✔ pass") in text
        assert d.message in text
    assert any(d.failed for d in rep.drops)
    assert "2 of 2 drop checks fail (max drop 0.05)" in " ".join(
        parse(html).root.find("p", id="status")[0].text().split())


def test_html_drop_checks_escaped() -> None:
    bad = "<script>window.__xss=1</script>"
    qrels = {f"q{i}": {"a": 1} for i in range(30)}
    good = ragreport.evaluate(qrels, {q: ["a", "b"] for q in qrels}, ["RR"], name="good")
    worse = ragreport.evaluate(qrels, {q: ["b", "a"] for q in qrels}, ["RR"], name=bad)
    html = build_report([good, worse], parse_targets({"RR": 0.1}), max_drop=0.1,
                        resamples=500, curve_resamples=50, generated_at=WHEN).to_html()
    assert bad not in html
    drops = section(html, "drops")
    assert bad in drops.text()
    assert len(parse(html).root.iter("script")) == 1


# -- Markdown -------------------------------------------------------------------------------------


def md_summary(md: str) -> str:
    return md.split("### Summary")[1].split("**Dataset health")[0]


def test_markdown_bold_only_where_significant() -> None:
    rep = report(20)
    md = md_summary(rep.to_markdown())
    c = cells(rep)
    assert (f"| P@1 | 1.0000 {c[('P@1', 'a')].ci_text} | 0.6667 "
            f"{c[('P@1', 'b')].ci_text} **▼ −0.3333** |") in md
    assert "**▼ −" in md.split("| RR |")[1].split("\n")[0]
    r5 = md.split("| R@5 |")[1].split("\n")[0]
    assert "**" not in r5 and "±0.0000" in r5
    assert "**bold** delta: significant (Holm-corrected p &lt; 0.05)" in md
    assert "significance: paired randomization test (sign flips), Holm-corrected" in md


def test_markdown_not_bold_when_not_significant() -> None:
    md = md_summary(report(2).to_markdown())
    line = md.split("| P@1 |")[1].split("\n")[0]
    assert "▼ −0.0333 |" in line and "**" not in line
    assert not re.search(r"\*\*[▲▼]", md)


def test_markdown_without_stats() -> None:
    md = report(20, stats=False).to_markdown()
    assert "| P@1 | 1.0000 | 0.6667 ▼ −0.3333 |" in md
    assert "[" not in md_summary(md).split("\n\n", 2)[2].split("\n\n")[0]
    assert "Statistics:" not in md and "**▼" not in md and "statistics:" not in md


def test_markdown_intervals_dropped_first_when_trimming() -> None:
    """The chart goes first (see test_mermaid); without one, the intervals go first."""
    rep = report(20)
    with_chart = rep.to_markdown()
    cut = rep.to_markdown(max_chars=len(with_chart) - 10)
    assert "truncated: chart not shown;" in cut and "```mermaid" not in cut
    rep = dataclasses.replace(rep, chart=False)
    full = rep.to_markdown()
    c = cells(rep)
    assert c[("P@1", "b")].ci_text in full
    md = rep.to_markdown(max_chars=len(full) - 10)
    assert len(md) <= len(full) - 10
    assert "truncated: confidence intervals not shown;" in md
    assert c[("P@1", "b")].ci_text not in md
    assert "| P@1 | 1.0000 | 0.6667 **▼ −0.3333** |" in md  # significance stays
    assert "in brackets" not in md and "**bold** delta: significant" in md


def test_markdown_targets_on_ci_and_drop_table() -> None:
    rep = gated()
    md = rep.to_markdown()
    lower = rep.targets[0].cells[1]
    assert "| P@1 | &gt;= 0.6 (CI lower bound) |" in md
    assert f"{lower.shown} (mean 0.6667)" in md
    assert "| Run | Measure | Δ vs baseline | 95% CI of Δ | p, Holm | Result |" in md
    assert "| b | P@1 | −0.3333 |" in md and "❌ fail ⚠️ depends on unjudged documents |" in md


def test_statistics_line_names_the_poisson_bootstrap() -> None:
    """From 1,000 queries on the intervals are a Poisson bootstrap, and the reports say so."""
    small = report(20)
    assert small.stats is not None
    assert small.stats.describe().startswith("95% percentile bootstrap over queries (2000 ")
    big = build_report(results(300, n=1_200), resamples=500, curve_resamples=100,
                       generated_at=WHEN)
    assert big.stats is not None
    line = big.stats.describe()
    assert line.startswith("95% percentile Poisson bootstrap over queries (500 resamples")
    assert line in big.to_markdown()
    c = cells(big)[("P@1", "b")]
    assert c.ci_lower is not None and c.ci_upper is not None
    assert c.ci_lower < 0.75 < c.ci_upper  # 900 of 1,200 queries have P@1 = 1


def test_holm_families_keep_a_one_target_comparison_apart() -> None:
    """Two runs, one target, eleven measures shown: the target's p is Holm over a family of
    one (its raw p-value), the others are corrected among themselves; every view states the
    families, and the JSON carries raw and adjusted p-values."""
    import json

    from ragreport.examples import example_files
    from ragreport.stats import holm

    ex = example_files()
    runs = [ragreport.load_run(p) for p in ex.runs]
    qrels = ragreport.load_qrels(ex.qrels)
    results = [ragreport.evaluate(qrels, r, name=n) for r, n in zip(runs, ("bm25", "tfidf"),
                                                                    strict=True)]
    rep = build_report(results, parse_targets({"nDCG@10": 0.5}), resamples=2000,
                       curve_resamples=100, generated_at=WHEN)
    by = {row.measure: next(c for c in row.cells if c.delta is not None) for row in rep.summary}
    target = by.pop("nDCG@10")
    assert target.family == 1 and target.p_value == target.p_raw
    others = [c for c in by.values() if c.p_raw is not None]
    assert len(others) >= 5 and {c.family for c in others} == {len(others)}
    assert [c.p_value for c in others] == pytest.approx(holm([c.p_raw for c in others]))
    assert rep.stats is not None
    said = "the target measure (1 measure × 1 run compared with the baseline)"
    assert said in rep.stats.describe() and said in rep.to_markdown()
    doc = json.loads(rep.to_json())
    assert said in doc["stats"]["families"]
    sig = {s["measure"]: s for s in doc["significance"]}
    assert sig["nDCG@10"]["holm_family"] == 1
    assert sig["nDCG@10"]["p_value"] == sig["nDCG@10"]["p_value_raw"]
