"""JSON report: gold file, key order, exact numbers, target decisions, guards, determinism."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from test_report_markdown import HOSTILE, assert_gold, hostile_report, regen

import ragreport
from ragreport.errors import RagReportError
from ragreport.measures import parse_measure
from ragreport.report import Report, build_report
from ragreport.report.jsonout import SCHEMA, render_json, report_json
from ragreport.targets import default_targets, parse_targets, passes

KEYS = ["schema", "title", "generated_at", "ragreport_version", "command", "inputs", "runs",
        "baseline", "k_max", "qrels_queries", "measures", "means", "intervals", "totals",
        "targets", "all_targets_passed", "drops", "all_passed", "counts", "conventions", "stats",
        "curves",
        "curve_bands", "pr_curve", "comparisons", "significance", "worst_queries_by",
        "failure_kinds", "no_judged_relevant", "worst_queries", "ties",
        "unjudged"]


@pytest.fixture(scope="module")
def example() -> Report:
    report: Report = regen.example_report()
    return report


@pytest.fixture(scope="module")
def results() -> list[ragreport.EvaluationResult]:
    from ragreport.examples import example_files

    f = example_files()
    return [ragreport.evaluate(f.qrels, p) for p in f.runs]


@pytest.fixture(scope="module")
def doc(example: Report) -> dict:  # type: ignore[type-arg]
    loaded: dict = json.loads(example.to_json())  # type: ignore[type-arg]
    return loaded


def test_gold_json(example: Report) -> None:
    assert_gold("example.json", example.to_json())


def test_regen_writes_what_the_tests_compare() -> None:
    gold = (Path(regen.GOLD_DIR) / "example.json").read_bytes().decode()
    assert regen.gold_outputs()["example.json"] == gold


def test_format(example: Report) -> None:
    text = example.to_json()
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert text.startswith('{\n  "schema": "ragreport.report/1",\n')
    assert text == render_json(example) == json.dumps(report_json(example), ensure_ascii=False,
                                                      indent=2) + "\n"


def test_key_order(doc: dict) -> None:  # type: ignore[type-arg]
    assert list(doc) == KEYS
    assert doc["schema"] == SCHEMA
    assert list(doc["targets"][0]) == ["measure", "op", "threshold", "source", "on", "results"]
    assert list(doc["targets"][0]["results"][0]) == ["run", "value", "shown", "passed",
                                                      "margin", "mean", "outcome"]
    assert list(doc["inputs"][0]) == ["role", "name", "path", "sha256", "size"]
    assert list(doc["means"]["bm25"]) == doc["measures"]  # documented order, not sorted


def test_provenance(doc: dict) -> None:  # type: ignore[type-arg]
    assert doc["generated_at"] == "2026-01-01T00:00:00Z"
    assert doc["command"] == "ragreport report --example"
    assert doc["ragreport_version"] == ragreport.__version__
    assert [i["path"] for i in doc["inputs"]] == [
        "examples/pydoc/qrels.txt", "examples/pydoc/run_bm25.txt",
        "examples/pydoc/run_tfidf.txt", "examples/pydoc/queries.tsv",
        "examples/pydoc/docs.jsonl"]
    assert all(len(i["sha256"]) == 64 and i["size"] > 0 for i in doc["inputs"])


def test_means_are_exact(doc: dict, results: list[ragreport.EvaluationResult]) -> None:  # type: ignore[type-arg]
    for r in results:
        for m, v in doc["means"][r.run_name].items():
            assert v == r.mean(parse_measure(m)), (r.run_name, m)  # exact, not approx
            assert type(v) is float


def test_targets_agree_with_passes(doc: dict, results: list[ragreport.EvaluationResult]  # type: ignore[type-arg]
                                   ) -> None:
    by_name = {r.run_name: r for r in results}
    assert [t["measure"] for t in doc["targets"]] == [str(t.measure) for t in default_targets()]
    for t in doc["targets"]:
        for c in t["results"]:
            mean = by_name[c["run"]].mean(parse_measure(t["measure"]))
            assert c["value"] == mean == c["mean"]
            assert c["passed"] is passes(mean, t["op"], t["threshold"])
            assert c["shown"] == f"{mean:.4f}"
    all_passed = all(c["passed"] for t in doc["targets"] for c in t["results"])
    assert doc["all_targets_passed"] is all_passed is False
    assert doc["all_passed"] is False


def test_passing_targets() -> None:
    from ragreport.examples import example_files

    f = example_files()
    r = ragreport.evaluate(f.qrels, f.runs[0])
    d = report_json(build_report([r], parse_targets({"R@5": 0.3, "RR": "> 0.7"}), stats=False,
                                 generated_at="2026-01-01T00:00:00Z"))
    assert d["all_targets_passed"] is True and d["all_passed"] is True
    assert d["stats"] is None and d["intervals"] == {} and d["significance"] == []
    assert [c["passed"] for t in d["targets"] for c in t["results"]] == [True, True]


def test_curves_counts_worst(doc: dict, example: Report,  # type: ignore[type-arg]
                             results: list[ragreport.EvaluationResult]) -> None:
    assert doc["k_max"] == 20
    for fam, series in doc["curves"].items():
        for run, values in series.items():
            assert len(values) == 20
            r = next(x for x in results if x.run_name == run)
            assert values == [float(x) for x in r.mean_curve(fam)[:20]]
        assert set(doc["curve_bands"][fam]) == {"bm25", "tfidf"}
    assert doc["counts"]["bm25"]["evaluated"] == 41
    assert doc["counts"]["bm25"]["no_relevant"] == 2
    assert doc["worst_queries_by"] == {"measure": "R@5", "k": 5}
    first = doc["worst_queries"]["bm25"][0]
    assert {k: first[k] for k in ("query_id", "value", "failure", "top_k",
                                  "unjudged_top_k")} == {
        "query_id": "q03", "value": 0.0, "failure": "relevant only beyond K", "top_k": 5,
        "unjudged_top_k": 0}
    assert [d["rank"] for d in first["ranking"]] == [1, 2, 3, 4, 5]
    assert len(doc["worst_queries"]["tfidf"]) == 20
    # queries without a judged relevant document: counted apart, never among the worst
    assert doc["no_judged_relevant"] == {"bm25": 2, "tfidf": 2}
    assert "no judged relevant document" not in doc["failure_kinds"]["bm25"]
    assert doc["failure_kinds"]["bm25"]["relevant only beyond K"] == 3
    listed = {q["query_id"] for w in doc["worst_queries"].values() for q in w}
    assert not listed & {"q40", "q41"}
    assert all(q["failure"] != "no judged relevant document"
               for w in doc["worst_queries"].values() for q in w)
    assert doc["comparisons"][0] == {"run": "tfidf", "baseline": "bm25", "measure": "P@3",
                                     "wins": 8, "losses": 11, "ties": 22}
    sig = {s["measure"]: s for s in doc["significance"]}
    assert sig["P@3"]["delta"] == doc["means"]["tfidf"]["P@3"] - doc["means"]["bm25"]["P@3"]
    lo, hi = doc["intervals"]["bm25"]["P@3"]
    assert lo <= doc["means"]["bm25"]["P@3"] <= hi
    assert "per_query" not in doc


def test_per_query(results: list[ragreport.EvaluationResult]) -> None:
    report = build_report(results, default_targets(), per_query=True, stats=False,
                          generated_at="2026-01-01T00:00:00Z")
    d = json.loads(report.to_json())
    assert list(d)[-1] == "per_query"
    for r in results:
        pq = d["per_query"][r.run_name]
        assert list(pq) == list(r.query_ids)
        for m in d["measures"]:
            values = r.values(parse_measure(m))
            assert [pq[q][m] for q in r.query_ids] == values.tolist()


def test_deterministic(example: Report) -> None:
    assert regen.example_report().to_json() == example.to_json()


def test_hostile_strings_round_trip() -> None:
    report = hostile_report()
    d = json.loads(report.to_json())
    assert d["title"] == " ".join(HOSTILE)
    assert d["runs"][0] == f"{HOSTILE[0]} run0"
    assert [i["name"] for i in d["inputs"]] == HOSTILE


def test_non_ascii_is_kept() -> None:
    r = ragreport.evaluate({"é": {"a": 1}}, {"é": ["a"]}, ["P@1"], name="ünïcode")
    text = build_report([r], title="Qualité ✓", stats=False,
                        generated_at="2026-01-01T00:00:00Z").to_json()
    assert '"title": "Qualité ✓"' in text and '"ünïcode"' in text and "\\u" not in text


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_is_refused(example: Report, bad: float) -> None:
    row = example.summary[0]
    cell = dataclasses.replace(row.cells[0], value=bad)
    broken = dataclasses.replace(example, summary=[dataclasses.replace(row, cells=[
        cell, *row.cells[1:]]), *example.summary[1:]])
    with pytest.raises(RagReportError, match=r"means\.bm25\.P@3"):
        broken.to_json()


def test_undefined_p_value_is_null() -> None:
    qrels = {f"q{i}": {"a": 1} for i in range(5)}
    run = {q: ["b", "a"] for q in qrels}
    a = ragreport.evaluate(qrels, run, ["RR"], name="a")
    b = ragreport.evaluate(qrels, run, ["RR"], name="b")
    d = report_json(build_report([a, b], resamples=200, curve_resamples=50,
                                 generated_at="2026-01-01T00:00:00Z"))
    s = d["significance"][0]
    assert s["delta"] == 0.0
    assert s["t_p_value"] is None or isinstance(s["t_p_value"], float)
    json.dumps(d, allow_nan=False)


def test_nan_replaces_no_output(example: Report, tmp_path: Path) -> None:
    """save() renders every output before it writes any: a NaN the JSON cannot hold leaves
    the existing Markdown and JSON files as they were, and no temporary file."""
    row = example.summary[0]
    broken = dataclasses.replace(example, summary=[dataclasses.replace(row, cells=[
        dataclasses.replace(row.cells[0], value=math.nan), *row.cells[1:]]),
        *example.summary[1:]])
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    md.write_text("old md")
    js.write_text("old json")
    with pytest.raises(RagReportError, match="NaN"):
        broken.save(markdown=md, json=js)
    assert md.read_text() == "old md" and js.read_text() == "old json"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.md"]
    assert example.save(markdown=md, json=js) == [md, js]
    assert js.read_text(encoding="utf-8") == example.to_json()


def test_input_file_from_a_source_hashes_its_bytes() -> None:
    """An input read once (stdin, a FIFO) is hashed from the bytes read, never reopened."""
    import hashlib

    from ragreport.io.common import Source
    from ragreport.report import InputFile

    data = b"q1 0 d1 1\n"
    f = InputFile.from_path("qrels", Source("/no/such/fifo", data))
    assert (f.sha256, f.size, f.path) == (hashlib.sha256(data).hexdigest(), len(data),
                                          "/no/such/fifo")
    odd = InputFile.from_path("run", Source(b"r\xff".decode("utf-8", "surrogateescape"), data))
    assert odd.name == odd.path == "r\\xff"
