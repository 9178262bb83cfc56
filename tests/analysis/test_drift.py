"""The drift guard of ``check --baseline-report`` (issue 15): the decision functions on their
boundaries, the stored report as the baseline (the same comparison numbers as with the
baseline's run file), and what every output says about it."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from paths import GOLD, user_docs

import ragreport
from ragreport.analysis.drift import (
    DriftCheck,
    conventions_check,
    drift_text,
    judged_check,
    judged_collapsed,
    qrels_check,
    query_check,
    query_drift,
    refusal,
)
from ragreport.cli.app import main
from ragreport.errors import InputError, RagReportError
from ragreport.examples import example_files
from ragreport.report import InputFile, Report, build_report
from ragreport.report.baseline import (
    drift_checks,
    load_baseline_report,
)
from ragreport.targets import default_targets

# ---- the decision functions, on their boundaries -------------------------------------------

JUDGED = [  # (baseline, current, min_ratio, collapsed)
    (0.8, 0.4, 0.5, False),        # exactly half: passes
    (0.8, 0.3999999, 0.5, True),   # just under
    (0.8, 0.8, 1.0, False),        # ratio 1: equal passes
    (0.8, 0.7999, 1.0, True),
    (0.8, 0.0, 0.0, False),        # min_ratio 0: never a collapse
    (0.0, 0.0, 0.5, False),        # a baseline that judged nothing cannot collapse
    (1.0, 0.0, 0.5, True),         # new document ids: nothing judged
    (0.5, 0.9, 0.5, False),        # more judged than before
]


@pytest.mark.parametrize(("baseline", "current", "ratio", "collapsed"), JUDGED)
def test_judged_boundaries(baseline: float, current: float, ratio: float,
                           collapsed: bool) -> None:
    assert judged_collapsed(baseline, current, ratio) is collapsed
    check = judged_check("r", baseline, current, 5, ratio)
    assert check.drifted is collapsed
    assert check.check == "judged" and check.run == "r"
    assert f"ratio >= {ratio:g}" == check.threshold


QUERIES = [  # (baseline ids, current ids, max share, (added, removed, share), drifted)
    (["a", "b", "c", "d"], ["a", "b", "c", "d"], 0.0, (0, 0, 0.0), False),
    ([f"q{i}" for i in range(20)], [f"q{i}" for i in range(19)], 0.05, (0, 1, 0.05), False),
    ([f"q{i}" for i in range(20)], [f"q{i}" for i in range(1, 21)], 0.05,
     (1, 1, 2 / 21), True),
    ([f"q{i}" for i in range(20)], [f"q{i}" for i in range(18)], 0.05, (0, 2, 0.1), True),
    ([f"q{i}" for i in range(20)], [f"q{i}" for i in range(18)], 0.1, (0, 2, 0.1), False),
    (["a"], ["b"], 1.0, (1, 1, 1.0), False),       # 1.0: anything goes
    (["a"], ["b"], 0.99, (1, 1, 1.0), True),
    ([], [], 0.0, (0, 0, 0.0), False),
]


@pytest.mark.parametrize(("base", "cur", "share", "counts", "drifted"), QUERIES)
def test_query_boundaries(base: list[str], cur: list[str], share: float,
                          counts: tuple[int, int, float], drifted: bool) -> None:
    added, removed, got = query_drift(base, cur)
    assert (added, removed) == counts[:2]
    assert math.isclose(got, counts[2])
    assert query_check("r", base, cur, share).drifted is drifted


@pytest.mark.parametrize(("a", "b", "drifted"), [
    ("ab" * 32, "ab" * 32, False), ("ab" * 32, "ab" * 31 + "ac", True),
    (None, "ab" * 32, True), ("ab" * 32, None, True), (None, None, True)])
def test_qrels_fingerprints(a: str | None, b: str | None, drifted: bool) -> None:
    assert qrels_check(a, b).drifted is drifted


def test_conventions_check_ignores_only_the_curves_width() -> None:
    assert not conventions_check({"curves": "K = 1..20"}, {}).drifted
    got = conventions_check({"ties": "trec_eval's order"}, {"ties": "expected value"})
    assert got.drifted and got.measured == "differ: ties"


def test_thresholds_out_of_range_are_errors() -> None:
    with pytest.raises(RagReportError, match="max_share must be a number from 0 to 1"):
        query_check("r", [], [], 1.5)
    with pytest.raises(RagReportError, match="min_ratio"):
        judged_collapsed(1.0, 1.0, -0.1)


def test_unknown_baseline_judged_is_drift() -> None:
    got = judged_check("r", None, 0.9, 10)
    assert got.drifted and "no Judged@10" in got.message


def test_refusal_lists_every_drifted_check() -> None:
    checks = [qrels_check("a" * 64, "b" * 64), query_check("r", ["a"], ["a"]),
              judged_check("r", 0.9, 0.1, 5)]
    text = refusal(checks, "main.json")
    assert text.startswith("the baseline report main.json no longer matches: qrels:")
    assert "judged (r): the judged share of the top 5 collapsed" in text
    assert "(ratio 0.1111); needs ratio >= 0.5)" in text
    assert "queries" not in text  # the check that held is not listed
    assert text.endswith("pass --allow-drift to compare anyway")
    assert "\n" not in text
    assert refusal([query_check("r", ["a"], ["a"])], "x") == "" == drift_text([])


# ---- the stored report as the baseline: the same numbers -------------------------------------

def _inputs() -> list[InputFile]:
    f = example_files()
    return [InputFile.from_path("qrels", f.qrels), *(InputFile.from_path("run", p)
                                                     for p in f.runs)]


@pytest.fixture(scope="module")
def results() -> list[ragreport.EvaluationResult]:
    f = example_files()
    return [ragreport.evaluate(f.qrels, p) for p in f.runs]


@pytest.fixture(scope="module")
def stored_path(tmp_path_factory: pytest.TempPathFactory,
                results: list[ragreport.EvaluationResult]) -> Path:
    """main's report: the baseline run alone, with --per-query."""
    rep = build_report(results[:1], default_targets(), per_query=True, inputs=_inputs()[:2],
                       generated_at="2026-01-01T00:00:00Z", resamples=2000)
    path = tmp_path_factory.mktemp("main") / "main.json"
    path.write_text(rep.to_json(), encoding="utf-8")
    return path


KW: dict[str, Any] = {"generated_at": "2026-01-01T00:00:00Z", "resamples": 2000,
                      "max_drop": 0.01}


def _direct(results: list[ragreport.EvaluationResult]) -> Report:
    return build_report(results, default_targets(), inputs=_inputs(), **KW)


def _via_stored(results: list[ragreport.EvaluationResult], stored_path: Path,
                allow_drift: bool = False) -> Report:
    stored = load_baseline_report(stored_path)
    checks = drift_checks(results[1:], stored, _inputs()[0].sha256, 5)
    return build_report(results[1:], default_targets(), inputs=_inputs()[::2],
                        baseline=stored, drift=checks, allow_drift=allow_drift, **KW)


def test_same_comparison_numbers_both_ways(results: list[ragreport.EvaluationResult],
                                           stored_path: Path) -> None:
    direct = json.loads(_direct(results).to_json())
    stored = json.loads(_via_stored(results, stored_path).to_json())
    # every comparison value, not a mean: paired tests, wins/losses, drop checks
    assert stored["significance"] == direct["significance"]
    assert len(direct["significance"]) == 11
    assert stored["comparisons"] == direct["comparisons"]
    # (a stored baseline has no rankings: its drop checks have no unjudged reading)
    assert [d | {"unjudged": None} for d in stored["drops"]] == \
        [d | {"unjudged": None} for d in direct["drops"]]
    assert all(d["unjudged"] is None for d in stored["drops"])
    for key in ("means", "intervals", "totals", "curves", "curve_bands", "counts", "runs",
                "baseline", "k_max"):
        assert stored[key] == direct[key], key
    assert stored["pr_curve"] == direct["pr_curve"]
    assert stored["all_passed"] == direct["all_passed"]
    # the terminal and Markdown summaries (deltas, arrows, bold) are the same table
    a, b = _direct(results), _via_stored(results, stored_path)
    assert [[(c.run, c.shown, c.delta_text, c.direction, c.p_value, c.significant)
             for c in s.cells] for s in a.summary] == [
        [(c.run, c.shown, c.delta_text, c.direction, c.p_value, c.significant)
         for c in s.cells] for s in b.summary]
    assert b.drift is not None and not b.drift.drifted
    assert [c.check for c in b.drift.checks] == ["qrels", "conventions", "queries", "judged"]


def test_a_run_of_today_named_like_the_stored_one(results: list[ragreport.EvaluationResult],
                                                 stored_path: Path) -> None:
    got = build_report(results[:1], default_targets(), generated_at="2026-01-01T00:00:00Z",
                       resamples=200, baseline=load_baseline_report(stored_path))
    assert got.runs == ["bm25 (stored)", "bm25"] and got.baseline == "bm25 (stored)"
    assert all(c.wins == 0 and c.losses == 0 for c in got.comparisons)  # the same run


def test_drift_is_refused_unless_allowed(results: list[ragreport.EvaluationResult],
                                         stored_path: Path) -> None:
    kw: dict[str, Any] = {"generated_at": "2026-01-01T00:00:00Z", "resamples": 200}
    stored = load_baseline_report(stored_path)
    checks = drift_checks(results[1:], stored, "0" * 64, 5)
    with pytest.raises(RagReportError, match="qrels: the qrels differ"):
        build_report(results[1:], default_targets(), baseline=stored, drift=checks, **kw)
    got = build_report(results[1:], default_targets(), baseline=stored, drift=checks,
                       allow_drift=True, **kw)
    assert got.drift is not None and got.drift.drifted and got.drift.allowed


def test_no_comparison_with_a_baseline_sharing_no_query(
        stored_path: Path, tmp_path: Path) -> None:
    """A run that has no query in common with the baseline gets no wins / losses / ties row
    (there is nothing to compare), with a stored baseline as with a run of today."""
    f = example_files()
    lines = Path(f.runs[1]).read_text().splitlines(keepends=True)
    (tmp_path / "early.txt").write_text("".join(x for x in lines if x.split()[0] <= "q20"))
    (tmp_path / "late.txt").write_text("".join(x for x in lines if x.split()[0] > "q20"))
    a = ragreport.evaluate(f.qrels, tmp_path / "early.txt", name="early")
    b = ragreport.evaluate(f.qrels, tmp_path / "late.txt", name="late")
    kw: dict[str, Any] = {"generated_at": "2026-01-01T00:00:00Z", "resamples": 200}
    assert build_report([a, b], **kw).comparisons == []
    stored = load_baseline_report(stored_path)  # bm25 on every query
    checks = drift_checks([a, b], stored, _inputs()[0].sha256, 5)
    both = build_report([a, b], baseline=stored, drift=checks, allow_drift=True, **kw)
    assert [c.run for c in both.comparisons] == ["early"] * 11 + ["late"] * 11
    tiny = replace(stored, query_ids=stored.query_ids[:20],
                   per_query={m: v[:20] for m, v in stored.per_query.items()})
    only = build_report([a, b], baseline=tiny, drift=checks, allow_drift=True, **kw)
    assert {c.run for c in only.comparisons} == {"early"}  # late shares no query with it


def test_a_baseline_of_the_wrong_kind_is_refused(
        results: list[ragreport.EvaluationResult], stored_path: Path) -> None:
    with pytest.raises(RagReportError, match="baseline must be a run's name or a stored run "
                                             r"\(load_baseline_report\), got EvaluationResult"):
        build_report(results, baseline=results[1])  # type: ignore[arg-type]
    stored = load_baseline_report(stored_path)
    checks = drift_checks(results[1:], stored, "0" * 64, 5)
    with pytest.raises(RagReportError, match="drift checks compare today's runs with a "
                                             "stored baseline"):
        build_report(results, drift=checks)


def test_stored_report_lacking_a_measure(results: list[ragreport.EvaluationResult],
                                         stored_path: Path) -> None:
    f = example_files()
    more = ragreport.evaluate(f.qrels, f.runs[1], ["P@7"])
    with pytest.raises(RagReportError, match=r"main.json has no per-query values of P@7"):
        build_report([more], generated_at="2026-01-01T00:00:00Z", resamples=200,
                     baseline=load_baseline_report(stored_path))


def test_json_per_query_gains_judged_at_k_only_when_asked(
        results: list[ragreport.EvaluationResult], stored_path: Path) -> None:
    doc = json.loads(stored_path.read_text(encoding="utf-8"))
    assert doc["schema"] == "ragreport.report/1"
    assert doc["judged_at_k"] == {"k": 5, "means": {"bm25": 1.0}}
    plain = json.loads(build_report(results[:1], generated_at="2026-01-01T00:00:00Z",
                                    stats=False).to_json())
    assert "judged_at_k" not in plain and "baseline_drift" not in plain


# ---- the command: refusal, warning, and every output says what changed ---------------------

def _cli(tmp: Path, *argv: str) -> int:
    return main([*argv, "--no-stats", "--jobs", "1", "--generated-at", "2026-01-01"])


@pytest.fixture()
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    f = example_files()
    monkeypatch.chdir(tmp_path)  # the paths the outputs show are relative
    out = {"qrels": Path("qrels.txt"), "base": Path("bm25.txt"), "new": Path("tfidf.txt")}
    out["qrels"].write_bytes(Path(f.qrels).read_bytes())
    out["base"].write_bytes(Path(f.runs[0]).read_bytes())
    out["new"].write_bytes(Path(f.runs[1]).read_bytes())
    out["main"] = Path("main.json")
    assert _cli(tmp_path, "report", str(out["qrels"]), str(out["base"]), "--json",
                str(out["main"]), "--per-query") == 0
    return out


def test_cli_refuses_changed_qrels(files: dict[str, Path], tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    q2 = tmp_path / "qrels2.txt"
    q2.write_text(files["qrels"].read_text() + "zzz 0 doc 1\n")
    capsys.readouterr()
    code = _cli(tmp_path, "check", str(q2), str(files["new"]), "--baseline-report",
                str(files["main"]), "--markdown", str(tmp_path / "out.md"))
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith("ragreport: error: the baseline report ")
    assert "qrels: the qrels differ from the baseline's (judgments sha256 " in err
    assert "--allow-drift" in err
    assert not (tmp_path / "out.md").exists()


def test_cli_same_judgments_in_another_format_are_not_drift(
        files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The qrels are compared by their judgments, not their bytes: the stored report's TREC
    qrels as Parquet (MTEB's columns, integer-looking ids as text), as a BEIR TSV, in
    another row order, or gzipped, are the same qrels; one grade changed is not."""
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [line.split() for line in files["qrels"].read_text().splitlines() if line.strip()]
    pq.write_table(pa.table({"query-id": [r[0] for r in rows], "corpus-id": [r[2] for r in rows],
                             "score": [int(r[3]) for r in rows]}), "qrels.parquet")
    Path("qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{r[0]}\t{r[2]}\t{r[3]}\n" for r in reversed(rows)))
    Path("qrels.txt.gz").write_bytes(gzip.compress(files["qrels"].read_bytes()))
    stored = json.loads(files["main"].read_text())
    (qin,) = [f for f in stored["inputs"] if f["role"] == "qrels"]
    assert len(qin["judgments_sha256"]) == 64
    for same in ("qrels.parquet", "qrels.tsv", "qrels.txt.gz"):
        capsys.readouterr()
        code = _cli(tmp_path, "check", same, str(files["new"]), "--baseline-report",
                    str(files["main"]), "--json", "out.json")
        assert code in (0, 1), capsys.readouterr().err  # 1: today's run fails a target
        doc = json.loads(Path("out.json").read_text())
        (q,) = [c for c in doc["baseline_drift"]["checks"] if c["check"] == "qrels"]
        assert q["drifted"] is False and q["measured"].startswith("judgments sha256 "), q
        (qin2,) = [f for f in doc["inputs"] if f["role"] == "qrels"]
        assert qin2["judgments_sha256"] == qin["judgments_sha256"]
        assert qin2["sha256"] != qin["sha256"]  # the bytes differ
    rows[0][3] = str(int(rows[0][3]) + 1)
    pq.write_table(pa.table({"query-id": [r[0] for r in rows], "corpus-id": [r[2] for r in rows],
                             "score": [int(r[3]) for r in rows]}), "changed.parquet")
    capsys.readouterr()
    assert _cli(tmp_path, "check", "changed.parquet", str(files["new"]), "--baseline-report",
                str(files["main"])) == 2
    assert "the qrels differ from the baseline's (judgments sha256" in capsys.readouterr().err


def test_report_without_judgments_fingerprint_compares_the_bytes(
        files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stored report without ``judgments_sha256`` (written from Python, or by an older
    version) is compared by the qrels file's sha256, as before."""
    doc = json.loads(files["main"].read_text())
    for f in doc["inputs"]:
        f.pop("judgments_sha256", None)
    Path("old.json").write_text(json.dumps(doc))
    assert load_baseline_report("old.json").qrels_judgments_sha256 is None
    capsys.readouterr()
    code = _cli(tmp_path, "check", str(files["qrels"]), str(files["new"]), "--baseline-report",
                "old.json", "--json", "out.json")
    assert code in (0, 1), capsys.readouterr().err
    (q,) = [c for c in json.loads(Path("out.json").read_text())["baseline_drift"]["checks"]
            if c["check"] == "qrels"]
    assert q["drifted"] is False and q["measured"].startswith("sha256 ")
    Path("sorted.txt").write_text("".join(sorted(files["qrels"].read_text().splitlines(True),
                                                 reverse=True)))
    capsys.readouterr()
    assert _cli(tmp_path, "check", "sorted.txt", str(files["new"]), "--baseline-report",
                "old.json") == 2
    assert "(sha256 " in capsys.readouterr().err


def test_cli_refuses_collapsed_judged_share(files: dict[str, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    rechunked = tmp_path / "rechunked.txt"  # new document ids: nothing judged any more
    rechunked.write_text("".join(
        " ".join([p[0], p[1], p[2] + "#c0", *p[3:]]) + "\n"
        for p in (line.split() for line in files["new"].read_text().splitlines())))
    capsys.readouterr()
    code = _cli(tmp_path, "check", str(files["qrels"]), str(rechunked), "--baseline-report",
                str(files["main"]), "--name", "rechunked")
    err = capsys.readouterr().err
    assert code == 2
    assert "judged (rechunked): the judged share of the top 5 collapsed" in err
    assert "Judged@5 0.0000 vs baseline 1.0000 (ratio 0.0000); needs ratio >= 0.5)" in err


def test_cli_refuses_other_queries_then_allows(files: dict[str, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    lines = files["new"].read_text().splitlines()
    drop = sorted({ln.split()[0] for ln in lines})[:3]  # 3 of 41 queries: 0.0732
    fewer = tmp_path / "fewer.txt"
    fewer.write_text("".join(ln + "\n" for ln in lines if ln.split()[0] not in drop))
    capsys.readouterr()
    args = ["check", str(files["qrels"]), str(fewer), "--baseline-report", str(files["main"]),
            "--targets", str(tmp_path / "t.toml"), "--name", "fewer"]
    (tmp_path / "t.toml").write_text('[targets]\n"RR" = 0.1\n')
    assert _cli(tmp_path, *args) == 2
    err = capsys.readouterr().err
    assert "queries (fewer): the query sets differ beyond the threshold (0 added, 3 removed " \
           "of 41 queries (share 0.0732); needs share <= 0.05)" in err
    assert _cli(tmp_path, *args, "--max-query-drift", "0.08") == 0
    capsys.readouterr()
    md, js, html = (tmp_path / n for n in ("o.md", "o.json", "o.html"))
    code = _cli(tmp_path, *args, "--allow-drift", "--markdown", str(md), "--json", str(js),
                "--html", str(html))
    out = capsys.readouterr()
    assert code == 0
    assert "ragreport: warning: baseline drift (--allow-drift): queries (fewer)" in out.err
    assert "DRIFT queries (fewer): 0 added, 3 removed of 41 queries (share 0.0732) " \
           "[needs share <= 0.05]" in out.out
    text = md.read_text()
    assert "### Baseline drift" in text
    assert "| queries | fewer | 0 added, 3 removed of 41 queries (share 0.0732) | share " \
           "&lt;= 0.05 | ⚠️ drift |" in text
    assert text.index("### Baseline drift") < text.index("### Targets")
    doc = json.loads(js.read_text())
    assert doc["baseline_drift"]["drifted"] and doc["baseline_drift"]["allowed"]
    assert [c["check"] for c in doc["baseline_drift"]["checks"] if c["drifted"]] == ["queries"]
    assert doc["runs"] == ["bm25", "fewer"] and doc["baseline"] == "bm25"
    assert doc["comparisons"][0]["wins"] + doc["comparisons"][0]["losses"] \
        + doc["comparisons"][0]["ties"] == 38  # the common queries
    page = html.read_text()
    assert 'id="baseline-drift"' in page and "share &lt;= 0.05" in page


def test_drift_options_need_a_baseline_report(files: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    for extra in (["--allow-drift"], ["--max-query-drift", "0.1"],
                  ["--min-judged-ratio", "0.2"]):
        capsys.readouterr()
        assert _cli(tmp_path, "check", str(files["qrels"]), str(files["new"]), *extra) == 2
        assert "needs --baseline-report" in capsys.readouterr().err


def test_drift_gold(files: dict[str, Path], tmp_path: Path,
                    capsys: pytest.CaptureFixture[str]) -> None:
    """The drift note, byte for byte: Markdown (``tests/gold/drift.md``) and the JSON
    ``baseline_drift`` key (``tests/gold/drift.json``); regenerate with
    ``RAGREPORT_REGEN_DRIFT=1 pytest tests/analysis/test_drift.py -k gold`` and review the diff."""
    import os

    lines = files["new"].read_text().splitlines()
    drop = sorted({ln.split()[0] for ln in lines})[:3]
    fewer = tmp_path / "fewer.txt"
    fewer.write_text("".join(ln + "\n" for ln in lines if ln.split()[0] not in drop))
    md, js = tmp_path / "o.md", tmp_path / "o.json"
    assert _cli(tmp_path, "report", str(files["qrels"]), str(fewer), "--baseline-report",
                str(files["main"]), "--allow-drift", "--markdown", str(md), "--json",
                str(js)) == 0
    text = md.read_text()
    section = text[text.index("### Baseline drift"):text.index("### Targets")]
    drift = json.dumps(json.loads(js.read_text())["baseline_drift"], indent=2,
                       ensure_ascii=False) + "\n"
    gold = GOLD
    if os.environ.get("RAGREPORT_REGEN_DRIFT"):
        (gold / "drift.md").write_text(section, encoding="utf-8")
        (gold / "drift.json").write_text(drift, encoding="utf-8")
    assert section == (gold / "drift.md").read_text(encoding="utf-8")
    assert drift == (gold / "drift.json").read_text(encoding="utf-8")


def test_drift_check_is_a_frozen_record() -> None:
    c = DriftCheck("queries", "r", True, "m", "t", "msg")
    assert c.status == "drift"
    with pytest.raises(AttributeError):
        c.drifted = False  # type: ignore[misc]


def test_no_stats_shows_no_stored_interval(files: dict[str, Path], tmp_path: Path) -> None:
    md = tmp_path / "o.md"
    assert _cli(tmp_path, "report", str(files["qrels"]), str(files["new"]), "--baseline-report",
                str(files["main"]), "--markdown", str(md)) == 0
    text = md.read_text(encoding="utf-8")
    summary = text[text.index("### Summary"):text.index("```mermaid")]
    assert "| P@3 | 0.5772 | 0.5285 ▼ −0.0488 |" in summary  # no interval on either side
    assert "[0." not in summary


def test_baseline_picks_a_run_of_the_stored_report(
        results: list[ragreport.EvaluationResult], tmp_path: Path) -> None:
    both = build_report(results, per_query=True, stats=False, inputs=_inputs(),
                        generated_at="2026-01-01T00:00:00Z")
    path = tmp_path / "both.json"
    path.write_text(both.to_json(), encoding="utf-8")
    assert load_baseline_report(path).name == "bm25"  # the stored report's baseline
    picked = load_baseline_report(path, "tfidf")
    assert picked.name == "tfidf" and picked.per_query["RR"] == results[1].values("RR").tolist()
    assert picked.judged == both.judged_at_k[1]["tfidf"]  # type: ignore[index]
    with pytest.raises(RagReportError, match=r"no run 'dense' in the baseline report \(runs: "
                                             r"'bm25', 'tfidf'\)"):
        load_baseline_report(path, "dense")


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's "Gate against a stored baseline" Python example, as written, in a fresh
    folder holding main's report (written by the command on main) and the PR's run."""
    readme = user_docs()
    section = readme.split("### Gate against a stored baseline", 1)[1].split("\n### ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    f = example_files()
    monkeypatch.chdir(tmp_path)
    Path("qrels.txt").write_bytes(Path(f.qrels).read_bytes())
    Path("main.txt").write_bytes(Path(f.runs[0]).read_bytes())
    Path("pr.txt").write_bytes(Path(f.runs[1]).read_bytes())
    assert main(["check", "qrels.txt", "main.txt", "--json", "main.json", "--per-query",
                 "--no-stats", "--jobs", "1"]) in (0, 1)
    env: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), env)
    (qrels,) = [c for c in env["checks"] if c.check == "qrels"]
    assert not qrels.drifted and qrels.measured.startswith("judgments sha256 ")
    assert env["report"].baseline == "bm25" and env["report"].runs == ["bm25", "tfidf"]


def test_query_drift_of_one_query_is_singular() -> None:
    assert query_check("r", ["a"], ["a"]).measured == \
        "0 added, 0 removed of 1 query (share 0.0000)"
    assert query_check("r", ["a"], ["b"]).measured.endswith("of 2 queries (share 1.0000)")


# ---- --baseline-report with --slices --------------------------------------------------------

def _odd_even(path: Path) -> Path:
    """q01..q41 odd / even, the first 5 also "small" (fewer than the slices' minimum)."""
    path.write_text("".join(f"q{i:02d}\t{'odd' if i % 2 else 'even'}"
                            f"{',small' if i <= 5 else ''}\n" for i in range(1, 42)))
    return path


def test_slices_against_the_stored_baseline_equal_the_live_baseline(
        results: list[ragreport.EvaluationResult], stored_path: Path, tmp_path: Path) -> None:
    """Per slice, the stored run's means and today's comparisons with it (wins, losses,
    deltas, Holm-corrected p-values over slices and measures) are those of the same report
    with the baseline run evaluated today."""
    slices = _odd_even(tmp_path / "s.tsv")
    kw = {k: v for k, v in KW.items() if k != "max_drop"}
    direct = build_report(results, default_targets(), inputs=_inputs(), slices=slices, **kw)
    stored = load_baseline_report(stored_path)
    via = build_report(results[1:], default_targets(), inputs=_inputs()[::2], slices=slices,
                       baseline=stored, **kw)
    a, b = json.loads(direct.to_json())["slices"], json.loads(via.to_json())["slices"]
    assert [s["name"] for s in a["slices"]] == [s["name"] for s in b["slices"]] == [
        "odd", "small", "even"]
    tested = 0
    for sa, sb in zip(a["slices"], b["slices"], strict=True):
        for key in ("queries", "means", "comparisons", "few_queries"):
            assert sa[key] == sb[key], (sa["name"], key)
        tested += sum(c["p_value"] is not None for c in sb["comparisons"])
    assert tested > 0  # the odd and even slices have tests (small has too few queries)
    assert direct.slices is not None and via.slices is not None
    assert [[(c.run, c.shown, c.delta_text, c.p_value, c.significant, c.wins, c.losses)
             for r in s.rows for c in r.cells] for s in direct.slices.slices] == [
        [(c.run, c.shown, c.delta_text, c.p_value, c.significant, c.wins, c.losses)
         for r in s.rows for c in r.cells] for s in via.slices.slices]


def test_cli_baseline_report_with_slices(files: dict[str, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """check --baseline-report --slices (refused before): the slice table compares with the
    stored run, as check --baseline NAME does with the baseline run evaluated today."""
    slices = _odd_even(tmp_path / "s.tsv")
    capsys.readouterr()
    code = _cli(tmp_path, "check", str(files["qrels"]), str(files["new"]), "--baseline-report",
                str(files["main"]), "--slices", str(slices), "--json", "a.json")
    out, err = capsys.readouterr()
    assert code == 1 and "error" not in err, err  # the default targets fail; no error
    assert "slice  queries  R@5 bm25  R@5 tfidf" in out
    assert _cli(tmp_path, "report", str(files["qrels"]), str(files["base"]),
                str(files["new"]), "--baseline", "bm25", "--slices", str(slices),
                "--json", "b.json") == 0
    a = json.loads(Path("a.json").read_text())["slices"]["slices"]
    b = json.loads(Path("b.json").read_text())["slices"]["slices"]
    assert [(s["means"], s["comparisons"]) for s in a] == [
        (s["means"], s["comparisons"]) for s in b]
    assert all(c["wins"] + c["losses"] + c["ties"] == s["queries"]["tfidf"]
               for s in a for c in s["comparisons"])


def test_cli_baseline_report_with_doc_map_says_what_to_do(
        files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "map.tsv").write_text("d1\tdoc1\n")
    capsys.readouterr()
    code = _cli(tmp_path, "check", str(files["qrels"]), str(files["new"]), "--baseline-report",
                str(files["main"]), "--doc-map", "map.tsv")
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "--baseline-report does not work with --doc-map" in err
    assert "give the baseline's run file and --baseline NAME instead" in err


def test_a_report_gated_against_a_stored_one_is_a_baseline_in_turn(
        files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report written with --baseline-report lists the stored run too ("bm25 (stored)",
    its baseline, without per-query values); stored in turn, its own run is the baseline
    (the error said to write it with --per-query, which it was)."""
    nxt = tmp_path / "next.json"
    assert _cli(tmp_path, "report", str(files["qrels"]), str(files["base"]),
                "--baseline-report", str(files["main"]), "--per-query", "--json",
                str(nxt)) == 0
    doc = json.loads(nxt.read_text())
    assert doc["baseline"] == "bm25 (stored)" and "bm25 (stored)" not in doc["per_query"]
    stored = load_baseline_report(nxt)
    assert stored.name == "bm25"
    capsys.readouterr()
    assert _cli(tmp_path, "check", str(files["qrels"]), str(files["new"]),
                "--baseline-report", str(nxt), "--targets", str(_easy(tmp_path))) == 0
    with pytest.raises(InputError, match=r"run 'bm25 \(stored\)' has no per-query values in "
                                         r"the baseline report \(runs with them: 'bm25'\); "
                                         r"pick one with --baseline"):
        load_baseline_report(nxt, "bm25 (stored)")


def _easy(tmp_path: Path) -> Path:
    t = tmp_path / "easy.toml"
    t.write_text('[targets]\n"RR" = 0.1\n')
    return t
