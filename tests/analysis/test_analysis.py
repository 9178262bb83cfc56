"""The analysis layer (ragreport.analysis), the formatting module (ragreport.present) and the
palette (ragreport.palette): values derived by hand, agreement with ragreport.stats, and the
layer they sit at."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paths import ROOT

from ragreport import evaluate
from ragreport.analysis import (
    FAILURE_KINDS,
    NO_JUDGED_RELEVANT,
    common_queries,
    curve_families,
    failure_counts,
    failure_kinds,
    first_relevant_rank,
    mean_band,
    mean_curve,
    paired,
    paired_columns,
    run_checks,
    target_passes,
    target_values,
    worst_order,
    worst_queries,
)
from ragreport.analysis.compare import baseline_tests
from ragreport.errors import RagReportError
from ragreport.measures import Measure
from ragreport.targets import parse_targets, passes

# five queries; "e" has no judged relevant document (its only judgment is grade 0)
QRELS = {
    "a": {"d1": 1, "d2": 1},
    "b": {"d1": 1},
    "c": {"d9": 1},
    "d": {"d3": 1},
    "e": {"d1": 0},
}
RUN_A = {
    "a": ["d1", "x", "d2"],     # relevant at 1 and 3
    "b": ["x", "y", "z", "d1"],  # relevant only at 4
    "c": ["x", "y"],            # relevant never retrieved
    "d": [],                    # empty retrieval
    "e": ["d1"],                # nothing judged relevant
}
RUN_B = {
    "a": ["d1", "d2"],
    "b": ["d1"],
    "c": ["d9"],
    "d": ["x"],
    "e": ["d1"],
}


@pytest.fixture(scope="module")
def ra():  # type: ignore[no-untyped-def]
    return evaluate(QRELS, RUN_A, ["P@2", "R@2", "RR", "nDCG@2"], name="a")


@pytest.fixture(scope="module")
def rb():  # type: ignore[no-untyped-def]
    return evaluate(QRELS, RUN_B, ["P@2", "R@2", "RR", "nDCG@2"], name="b")


# ---- failures ---------------------------------------------------------------------------------

def test_failure_kinds_by_hand(ra) -> None:  # type: ignore[no-untyped-def]
    ids = ra.query_ids
    assert ids == ["a", "b", "c", "d", "e"]
    kinds = dict(zip(ids, failure_kinds(ra, 2).tolist(), strict=True))
    assert kinds == {"a": 0, "b": 4, "c": 3, "d": 2, "e": 1}
    # at K = 4, b's relevant document is within K
    assert failure_kinds(ra, 4).tolist()[1] == 0
    big = np.iinfo(np.int64).max
    assert first_relevant_rank(ra).tolist() == [1, 4, big, big, big]


def test_failure_counts_leave_out_no_judged_relevant() -> None:
    counts = failure_counts(np.array([0, 1, 1, 2, 3, 4, 4], dtype=np.int8))
    assert counts == {"empty retrieval": 1, "no relevant document retrieved": 1,
                      "relevant only beyond K": 2}
    assert FAILURE_KINDS[NO_JUDGED_RELEVANT] == "no judged relevant document"
    assert FAILURE_KINDS[NO_JUDGED_RELEVANT] not in counts


def test_worst_order_excludes_kind_1_and_breaks_ties_by_position() -> None:
    values = np.array([0.0, 0.0, 0.5, 0.0, 0.25, np.nan])
    kinds = np.array([1, 3, 0, 2, 4, 3], dtype=np.int8)
    # 0.0 at 1 and 3 (0 is kind 1: out), then 0.25, then 0.5, NaN last
    assert worst_order(values, kinds).tolist() == [1, 3, 4, 2, 5]
    assert worst_order(np.array([]), np.array([], dtype=np.int8)).tolist() == []
    with pytest.raises(RagReportError):
        worst_order(values, kinds[:3])


def test_worst_queries_of_a_result(ra) -> None:  # type: ignore[no-untyped-def]
    w = worst_queries(ra, "R@2", n=10)
    # R@2: a 0.5, b 0, c 0, d 0, e 0 (no relevant: excluded)
    assert [ra.query_ids[i] for i in w.indices] == ["b", "c", "d", "a"]
    assert "e" not in [ra.query_ids[i] for i in w.indices]
    assert w.k == 2 and w.total == 5 and w.no_judged_relevant == 1
    assert w.counts == {"empty retrieval": 1, "no relevant document retrieved": 1,
                        "relevant only beyond K": 1}
    assert [ra.query_ids[i] for i in worst_queries(ra, "R@2", n=2).indices] == ["b", "c"]
    assert worst_queries(ra, "RR", n=1).k == ra.k_max  # no cutoff: the curves' width
    with pytest.raises(RagReportError):
        worst_queries(ra, "R@2", n=-1)


# ---- targets ----------------------------------------------------------------------------------

def test_target_values_and_passes_by_hand(ra) -> None:  # type: ignore[no-untyped-def]
    (t,) = parse_targets({"P@2": "> 0.4"})
    # P@2: a 1/2, b 0, c 0, d 0, e 0 (e: its d1 is judged non-relevant)
    assert target_values(ra, t).tolist() == [0.5, 0.0, 0.0, 0.0, 0.0]
    assert target_passes(ra, t).tolist() == [True, False, False, False, False]
    (missing,) = parse_targets({"Bpref": 0.5})  # not evaluated: no values, nothing passes
    assert target_values(ra, missing) is None
    assert not target_passes(ra, missing).any()


def test_target_passes_uses_the_shown_value() -> None:
    from ragreport.analysis.targets import passes_array

    values = np.array([0.84996, 0.85004, 0.849949, 0.85, 0.9])
    for op in (">", ">=", "<", "<="):
        got = passes_array(values, op, 0.85).tolist()
        assert got == [passes(float(v), op, 0.85) for v in values]
    assert passes_array(values, ">=", 0.85).tolist() == [True, True, False, True, True]


def test_run_checks_is_the_overall_decision(ra, rb) -> None:  # type: ignore[no-untyped-def]
    targets = parse_targets({"RR": ">= 0.5", "P@2": "> 0.4"})
    checks = run_checks([ra, rb], targets)
    # RR: a (1 + 1/4) / 5 = 0.25; b (1 + 1 + 1) / 5 = 0.6
    # P@2: a 0.5 / 5 = 0.1; b (1 + 0.5 + 0.5) / 5 = 0.4
    got = [(str(c.target.measure), c.run, c.shown, c.passed) for c in checks]
    assert got == [("RR", "a", "0.2500", False), ("RR", "b", "0.6000", True),
                   ("P@2", "a", "0.1000", False), ("P@2", "b", "0.4000", False)]


# ---- compare ----------------------------------------------------------------------------------

def test_common_queries() -> None:
    x = evaluate({"q1": {"d": 1}, "q2": {"d": 1}, "q3": {"d": 1}},
                 {"q1": ["d"], "q2": ["d"], "q3": ["d"]}, ["P@1"], name="x")
    y = evaluate({"q3": {"d": 1}, "q2": {"d": 1}, "q9": {"d": 1}},
                 {"q3": ["d"], "q2": ["d"], "q9": ["d"]}, ["P@1"], name="y")
    ia, ib = common_queries(x, y)
    assert [x.query_ids[i] for i in ia] == ["q2", "q3"]
    assert [y.query_ids[i] for i in ib] == ["q2", "q3"]
    assert ia.dtype == np.int64


def test_paired_by_hand() -> None:
    a = [0.1, 0.2, 0.3]
    b = [0.2, 0.4, 0.3]
    c = paired(a, b, resamples=1000, seed=0)
    assert c.n == 3 and (c.wins, c.losses, c.ties) == (2, 0, 1)
    assert c.mean_a == pytest.approx(0.2) and c.mean_b == pytest.approx(0.3)
    assert c.delta == pytest.approx(0.1)
    # deltas 0.1, 0.2, 0: 2**3 sign patterns, |mean| >= 0.1 for ++x and --x: 4 of 8
    assert c.p_rand == 0.5
    assert c.lo <= c.delta <= c.hi
    assert c.lo >= 0.0 and c.hi <= 0.2 + 1e-12  # a mean of resampled deltas in [0, 0.2]


def test_paired_agrees_with_stats() -> None:
    from ragreport.stats import bootstrap_ci, paired_randomization_test, paired_t_test

    rng = np.random.default_rng(7)
    a = rng.random(40)
    b = np.clip(a + rng.normal(0.05, 0.1, 40), 0, 1)
    c = paired(a, b, resamples=2000, seed=3, level=0.9)
    ci = bootstrap_ci(b - a, 0.9, 2000, 3)
    assert (c.lo, c.hi) == (float(ci.lower), float(ci.upper))
    assert c.p_rand == paired_randomization_test(a, b, 2000, 3).p_value
    assert c.p_t == paired_t_test(a, b).p_value
    assert c.delta == pytest.approx(float((b - a).mean()))
    # column by column, paired_columns gives the same numbers as paired
    cols = paired_columns(np.column_stack([a, b]), np.column_stack([b, a]), resamples=2000,
                          seed=3, level=0.9)
    assert (cols[0].lo, cols[0].hi, cols[0].p_rand, cols[0].p_t, cols[0].wins, cols[0].n) == (
        c.lo, c.hi, c.p_rand, c.p_t, c.wins, c.n)
    assert cols[0].mean_a == pytest.approx(c.mean_a, abs=1e-15)
    assert cols[1].p_rand == paired_randomization_test(b, a, 2000, 3).p_value
    assert cols[1].delta == pytest.approx(-c.delta)


def test_paired_edge_cases() -> None:
    one = paired([0.2], [0.5], resamples=10)
    assert one.n == 1 and math.isnan(one.p_t) and one.wins == 1
    with pytest.raises(RagReportError):
        paired([], [], resamples=10)
    with pytest.raises(RagReportError):
        paired([0.1, 0.2], [0.1], resamples=10)


def test_baseline_tests_are_holm_corrected(ra, rb) -> None:  # type: ignore[no-untyped-def]
    from ragreport.stats import holm, paired_randomization_pvalues

    ms = [Measure("P", 2), Measure("RR")]
    got = baseline_tests([ra, rb], ra, ms, resamples=100, seed=0)
    a = np.column_stack([ra.values(m) for m in ms])
    b = np.column_stack([rb.values(m) for m in ms])
    raw = paired_randomization_pvalues(a, b, 100, 0)
    assert [got[("b", m)].p for m in ms] == holm(raw).tolist()
    assert [got[("b", m)].p_raw for m in ms] == raw.tolist()
    assert {got[("b", m)].family for m in ms} == {2}
    assert baseline_tests([ra], ra, ms, resamples=100, seed=0) == {}
    # two families: each measure alone, so Holm leaves each p as it is
    apart = baseline_tests([ra, rb], ra, ms, resamples=100, seed=0, families=[[ms[0]], [ms[1]]])
    assert [apart[("b", m)].p for m in ms] == raw.tolist()
    assert {apart[("b", m)].family for m in ms} == {1}


# ---- curves -----------------------------------------------------------------------------------

def test_mean_curve_and_band(ra) -> None:  # type: ignore[no-untyped-def]
    from ragreport.stats import bootstrap_ci

    # P@1: only a (1/5); P@2: a 1/2 -> 0.1; P@3: a 2/3 -> 2/15
    curve = mean_curve(ra, "P")
    assert curve[:3] == pytest.approx([0.2, 0.1, 2 / 15])
    assert curve.shape == (ra.k_max,)
    band = mean_band(ra, "P", level=0.9, resamples=300, seed=5)
    ref = bootstrap_ci(ra.curve("P"), 0.9, 300, 5)
    assert band.lower.tolist() == ref.lower.tolist()
    assert band.upper.tolist() == ref.upper.tolist()
    assert [str(f) for f in curve_families([ra], list(ra.measures))][:3] == ["P", "R", "RR"]


# ---- present ----------------------------------------------------------------------------------

def test_present_formats() -> None:
    from ragreport import present, targets

    assert targets.shown is present.shown  # re-exported, not a copy
    assert present.signed(0.5) == "+0.5000"
    assert present.signed(-0.00004) == "±0.0000"
    assert present.signed(-0.25) == "\u22120.2500"
    assert present.snippet("x" * 10, 5) == "xxxx…"
    assert present.pct(0.95) == "95%"
    assert present.measure_label("nDCG", 10) == "nDCG@10"
    assert present.measure_label("nDCG@5", 10) == "nDCG@10"
    assert present.measure_label(Measure("R"), 5) == "R@5"
    assert present.measure_title("nDCG@10") == "normalised discounted cumulative gain"
    assert present.measure_title("R@5") == "recall"
    assert present.md_escape("a|b*c") == "a\\|b\\*c"


def test_markdown_escaping_is_the_present_one() -> None:
    from ragreport import present
    from ragreport.report import markdown

    assert markdown.escape_md is present.md_escape
    assert markdown.BREAK == present.BREAK


# ---- palette ----------------------------------------------------------------------------------

def _luminance(hex_color: str) -> float:
    """WCAG 2.x relative luminance, written out again here (not the palette's own code)."""
    h = hex_color.lstrip("#")
    out = 0.0
    for weight, i in ((0.2126, 0), (0.7152, 2), (0.0722, 4)):
        c = int(h[i:i + 2], 16) / 255
        c = c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        out += weight * c
    return out


def _ratio(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_palette_colours_pass_wcag_aa() -> None:
    from ragreport import palette

    assert _ratio("#777777", "#ffffff") < 4.5 < _ratio("#767676", "#ffffff")  # the formula
    light = [*palette.LIGHT_RUNS, *(v[0] for v in palette.ROLES.values())]
    dark = [*palette.DARK_RUNS, *(v[1] for v in palette.ROLES.values())]
    for c in light:
        assert _ratio(c, palette.LIGHT_BG) >= 4.5, c
    for c in dark:
        for bg in (palette.DARK_BG, palette.REPORT_DARK_BG):
            assert _ratio(c, bg) >= 4.5, (c, bg)
    assert palette.LIGHT_BG == "#ffffff" and palette.DARK_BG == "#111111"
    for role in ("good", "bad", "neutral", "unjudged", "cut"):
        assert role in palette.ROLES
    assert palette.contrast("#0072b2", "#ffffff") == pytest.approx(_ratio("#0072b2", "#ffffff"))


def test_palette_css_variables() -> None:
    from ragreport import palette

    css = palette.css_variables()
    names = set(re.findall(r"(--rr-[a-z0-9-]+):", css))
    assert {"--rr-run-0", "--rr-good", "--rr-bad", "--rr-neutral", "--rr-unjudged",
            "--rr-cut"} <= names
    # light values first, the dark ones under the dark themes and the dark system scheme
    first = css.split("\n")[0]
    # (the explorer's root and its static snapshot's root)
    assert first.startswith(":root, .rr-explorer, .rr-snapshot {")
    assert palette.LIGHT_RUNS[0] in first
    assert '[data-jp-theme-light="false"] :is(.rr-explorer, .rr-snapshot)' in css
    assert ".vscode-dark :is(.rr-explorer, .rr-snapshot)" in css and ".rr-dark" in css
    assert "@media (prefers-color-scheme: dark)" in css
    dark_rule = css[css.index('[data-jp-theme-light="false"]'):]
    assert f"--rr-run-0: {palette.DARK_RUNS[0]};" in dark_rule
    assert css.count("{") == css.count("}")


def test_report_surfaces_come_from_the_palette() -> None:
    """The report's page colours (background, text, rules, tints) are palette values, light
    and dark and on paper; report.css itself sets no colour, it only reads ``--rr-*``."""
    from ragreport import palette

    css = palette.css_variables()
    light, dark_media, dark_rule, paper = css.strip().split("\n")
    for name, (lo, hi) in palette.SURFACES.items():
        assert f"--rr-{name}: {lo};" in light and f"--rr-{name}: {hi};" in dark_media
        assert f"--rr-{name}: {hi};" in dark_rule
    assert "--rr-bg: #15181d;" in dark_media and "--rr-fg: #000000;" in paper
    assert palette.SURFACES["bg"] == (palette.LIGHT_BG, palette.REPORT_DARK_BG)
    for fg, bg in zip(palette.SURFACES["fg"], palette.SURFACES["bg"], strict=True):
        assert _ratio(fg, bg) >= 4.5
    for accent, bg in zip(palette.SURFACES["accent"], palette.SURFACES["bg"], strict=True):
        assert _ratio(accent, bg) >= 4.5
    sheet = (ROOT / "templates" / "report.css").read_text("utf-8")
    body = re.sub(r"/\*.*?\*/", "", sheet, flags=re.S)
    for decl in re.findall(r"(--[a-z0-9-]+):\s*([^;]+);", body):
        if decl[0] in {"--font", "--mono"}:
            continue
        assert decl[1].startswith("var(--rr-"), decl
    assert "#15181d" not in body and "#1b1f24" not in body


def test_plots_and_report_use_the_palette() -> None:
    from ragreport import palette
    from ragreport.report import build_report, plots

    assert tuple(plots.LIGHT_PALETTE) == palette.LIGHT_RUNS
    assert tuple(plots.DARK_PALETTE) == palette.DARK_RUNS
    assert plots.run_style(1)["color"] == f"var(--c1, {palette.LIGHT_RUNS[1]})"
    r = evaluate(QRELS, RUN_A, ["P@2"], name="a")
    html = build_report([r], stats=False).to_html()
    style = html[html.index("<style>"):html.index("</style>")]
    # the palette's variables come first, unescaped; the report's own names read them
    assert style.index(palette.css_variables().split("\n")[0]) < style.index("--c0:")
    assert "--c0: var(--rr-run-0)" in style and "--pass: var(--rr-good" in style
    assert '[data-jp-theme-light="false"]' in style


# ---- layers -----------------------------------------------------------------------------------

def _layers() -> list[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (main,) = [c for c in data["tool"]["importlinter"]["contracts"]
               if c.get("containers") == ["ragreport"]]
    return [str(x) for x in main["layers"]]


def _layer_of(name: str, layers: list[str]) -> int:
    for i, layer in enumerate(layers):
        if name in re.split(r"\s*[|:]\s*", layer):
            return i
    raise AssertionError(f"{name} is in no layer")


def test_the_contract_places_the_analysis_layer() -> None:
    layers = _layers()
    at = {n: _layer_of(n, layers) for n in ("report", "explorer", "notebook", "cli",
                                             "analysis", "stats", "core", "present",
                                             "palette", "targets", "measures", "diagnose")}
    # layers are listed top first: a smaller index is a higher layer
    for view in ("report", "explorer", "notebook", "cli", "diagnose"):
        assert at[view] < at["analysis"], view
    assert at["analysis"] < at["stats"] < at["core"]
    assert at["targets"] < at["present"] < at["measures"]  # targets re-export present.shown
    assert at["palette"] == at["measures"]  # the bottom layer: it imports nothing


def test_analysis_present_palette_import_nothing_heavy() -> None:
    code = ("import sys, ragreport.analysis, ragreport.present, ragreport.palette\n"
            "bad = [m for m in ('matplotlib', 'jinja2', 'ipywidgets', 'anywidget', 'scipy',"
            " 'ragreport.report', 'ragreport.explorer', 'ragreport.notebook', 'ragreport.cli.app')"
            " if m in sys.modules]\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_lint_imports_passes() -> None:
    exe = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(exe)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "broken" in out.stdout and "0 broken" in out.stdout


def test_run_intervals_share_resamples_and_equal_their_own_bootstrap(ra) -> None:  # type: ignore[no-untyped-def]
    from ragreport.analysis import run_intervals
    from ragreport.stats import bootstrap_ci

    ms = [Measure("P", 2), Measure("RR")]
    got = run_intervals(ra, ms, [Measure("P"), Measure("R")], 3, level=0.9, resamples=400,
                        curve_resamples=100, seed=2)
    for m in ms:
        ci = bootstrap_ci(ra.values(m), 0.9, 400, 2)
        assert got.measures[m] == (float(ci.lower), float(ci.upper))
    band = mean_band(ra, "R", level=0.9, resamples=100, seed=2)
    assert got.bands[Measure("R")][0] == band.lower[:3].tolist()
    assert got.bands[Measure("R")][1] == band.upper[:3].tolist()
    assert run_intervals(ra, ms, level=0.9, resamples=400, seed=2).bands == {}


# ---- validation at the public boundary ----------------------------------------------------------


@pytest.mark.parametrize(("call", "message"), [
    (lambda r: paired([math.nan, 0.2], [0.2, 0.3]),
     "a_values must be finite numbers, got nan at query index 0"),
    (lambda r: paired([0.1, 0.2], [0.2, math.inf]),
     "b_values must be finite numbers, got inf at query index 1"),
    (lambda r: paired([0.1, 0.2], [0.2, 0.3], seed=-1), "seed must be an integer >= 0, got -1"),
    (lambda r: paired([0.1, 0.2], [0.2, 0.3], seed=1.5),
     "seed must be an integer >= 0, got 1.5"),
    (lambda r: failure_kinds(r, 0), "k must be an integer >= 1, got 0"),
    (lambda r: failure_kinds(r, -1), "k must be an integer >= 1, got -1"),
    (lambda r: failure_kinds(r, "x"), "k must be an integer >= 1, got 'x'"),
    (lambda r: failure_kinds(r, True), "k must be an integer >= 1, got True"),
    (lambda r: worst_queries(r, "P@2", k=0), "k must be an integer >= 1, got 0"),
])
def test_hostile_arguments_are_refused_by_name(call: Any, message: str) -> None:
    """What the caller got wrong is named, with the value received: a NaN is not read as a
    significant difference (p_rand 0.0), k = 0 does not call every query 'relevant only
    beyond K', a negative seed is not numpy's bare error."""
    r = evaluate(QRELS, RUN_A, ["P@2"], name="a")
    with pytest.raises(RagReportError) as info:
        call(r)
    assert str(info.value).startswith(message)


def test_numbers_are_formatted_by_present_only() -> None:
    """No module of the package or the shipped notebooks formats a value, a percentage or a
    p-value with a format of its own: they call ragreport.present (shown, signed, pct,
    p_text, p_clause), so a number reads the same in every output."""
    own = re.compile(r":\+?\.\d+[fg%]\}")
    files = [p for p in (ROOT / "ragreport").rglob("*.py")
             if "present" not in p.parts and "explorer" not in p.parts]
    found = []
    for p in files:
        for n, line in enumerate(p.read_text("utf-8").splitlines(), 1):
            for spec in own.findall(line):
                # recall levels (0.1, 0.2, ...) of the PR table, sizes in KiB, IPrec@0.50
                if spec not in {":.1f}", ":.2f}"}:
                    found.append(f"{p.relative_to(ROOT)}:{n}: {spec}")
    nb = (ROOT / "notebooks" / "compare_runs.ipynb").read_text("utf-8")
    found += [f"compare_runs.ipynb: {s}" for s in own.findall(nb)]
    assert found == []
    from ragreport.present import p_clause

    assert (p_clause(0.01234), p_clause(0.0002)) == ("p = 0.012", "p < 0.001")
