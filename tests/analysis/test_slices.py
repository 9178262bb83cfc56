"""Query slices (``--slices``): the reader's formats and errors, the numbers per slice (means,
intervals, Holm-corrected comparisons, targets, the too-few-queries rule), every view (JSON,
Markdown, HTML, terminal), the ``check`` gate and the gold report."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_report_markdown import assert_gold, regen

import ragreport
from ragreport.analysis.compare import outcomes, paired_columns
from ragreport.analysis.slices import MIN_QUERIES, analyse_slices, slice_indices
from ragreport.cli.app import main
from ragreport.errors import ConfigError, InputError, RagReportError
from ragreport.examples import example_files
from ragreport.io.slices import MAX_SLICES, load_slices
from ragreport.io.targets import load_slice_targets, load_targets
from ragreport.measures import Measure
from ragreport.report import Report, build_report
from ragreport.stats import bootstrap_ci, holm
from ragreport.targets import parse_targets

WANT = {"q1": ("a", "b"), "q2": ("b",), "q3": ("long name",)}


@pytest.fixture(scope="module")
def results() -> list[ragreport.EvaluationResult]:
    files = example_files()
    return [ragreport.evaluate(files.qrels, p) for p in files.runs]


def _tags(n: int = 41) -> dict[str, list[str]]:
    """q01..q41: odd / even, the first 5 also "small" (fewer than MIN_QUERIES)."""
    return {f"q{i:02d}": (["odd"] if i % 2 else ["even"]) + (["small"] if i <= 5 else [])
            for i in range(1, n + 1)}


# --- the reader ------------------------------------------------------------------------------

TEXT_FORMATS = {
    "tab.tsv": "q1\ta,b\nq2\tb\nq3\tlong name\n",
    "header.tsv": "query_id\tslices\n# a comment\n\nq1\ta, b\nq2\tb\nq3\tlong name\n",
    "pairs.txt": "q1 a\nq1 b\nq2 b\nq3 long name\nq1 a\n",
    "object.json": json.dumps({"q1": ["a", "b"], "q2": "b", "q3": ["long name"]}),
    "records.json": json.dumps([{"qid": "q1", "tags": ["a", "b"]}, {"qid": "q2", "tags": "b"},
                                {"qid": "q3", "tags": "long name"}]),
    "lines.jsonl": "\n".join(json.dumps(r) for r in (
        {"query_id": "q1", "slices": ["a", "b"], "text": "x"},
        {"query_id": "q2", "slices": ["b"]}, {"query_id": "q3", "slices": "long name"})),
    "table.csv": 'query_id,slices\nq1,"a,b"\nq2,b\nq3,long name\n',
}


@pytest.mark.parametrize("name", sorted(TEXT_FORMATS))
def test_every_text_format_reads_the_same(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(TEXT_FORMATS[name], encoding="utf-8")
    got = load_slices(path)
    assert got.tags == WANT
    assert got.names == ("a", "b", "long name")
    assert got.source == str(path)


def test_tables_and_mappings_read_the_same(tmp_path: Path) -> None:
    import pandas as pd

    table = pa.table({"query_id": ["q1", "q2", "q3"],
                      "slices": [["a", "b"], ["b"], ["long name"]]})
    pq.write_table(table, tmp_path / "s.parquet")
    assert load_slices(tmp_path / "s.parquet").tags == WANT
    assert load_slices(table).tags == WANT
    frame = pd.DataFrame({"qid": ["q1", "q2", "q3"], "kind": ["a,b", "b", "long name"]})
    assert load_slices(frame, column="kind").tags == WANT
    assert load_slices({"q1": "a, b", "q2": ["b"], "q3": "long name"}).tags == WANT


def test_a_column_of_a_queries_file(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text('{"_id": "q1", "text": "x", "kind": "a"}\n'
                    '{"_id": "q2", "text": "y", "kind": null}\n', encoding="utf-8")
    got = load_slices(path, column="kind")
    assert got.tags == {"q1": ("a",), "q2": ()}  # an empty cell: in no slice
    assert got.queries("a") == ("q1",)


@pytest.mark.parametrize(("name", "data", "column", "message"), [
    ("s.tsv", b"q1\ta\nq2\ta,,b\n", None, r"s\.tsv:2: query 'q2': empty slice name"),
    ("s.tsv", b"q1\ta\nq2\n", None, r"s\.tsv:2: query 'q2': no slice name after the query id"),
    ("s.tsv", b"q1\ta\nq2\tb\xff\n", None, r"s\.tsv:2: not valid UTF-8"),
    ("s.tsv", b"", None, r"s\.tsv: the file is empty"),
    ("s.tsv", b"# only a comment\n", None, r"s\.tsv: no slice found"),
    ("s.tsv", b"q1\ta\n", "kind", r"s\.tsv: a column \('kind'\) was named"),
    ("s.jsonl", b'{"query_id": "q1", "slices": "a"}\n{"query_id": \n', None,
     r"s\.jsonl:2: invalid JSON"),
    ("s.jsonl", b'{"query_id": "q1", "slices": "a\\u0007b"}\n', None,
     r"s\.jsonl:1: query 'q1': slice name 'a\\x07b' holds a control character"),
    ("s.tsv", "q1\tok,rtl\u202eevil\n".encode(), None,
     r"s\.tsv:1: query 'q1': slice name 'rtl\\u202eevil' holds a control character"),
    ("s.tsv", "q1\tok\nq2\ttwo\u2028lines\n".encode(), None,
     r"s\.tsv:2: query 'q2': slice name 'two\\u2028lines' holds a control character"),
    ("s.jsonl", b'{"query_id": "q1", "slices": [1.5]}\n', None,
     r"s\.jsonl:1: query 'q1': a slice name must be text, got float"),
    ("s.jsonl", b'{"query_id": "q1", "text": "a"}\n', None, r"s\.jsonl: no slices column"),
    ("s.jsonl", b'{"query_id": "q1", "slices": "a"}\n', "kind", r"s\.jsonl: no column 'kind'"),
    ("s.csv", b"qid,tag\nq1,a\nq2,b,c\n", None, r"s\.csv:3: expected 2 fields"),
    ("s.json", b'{"q1": {"x": 1}}', None, r"s\.json:1: query 'q1': a slice name must be text"),
])
def test_bad_input_names_the_file_and_the_line(tmp_path: Path, name: str, data: bytes,
                                               column: str | None, message: str) -> None:
    (tmp_path / name).write_bytes(data)
    with pytest.raises(InputError, match=message):
        load_slices(tmp_path / name, column=column)


def test_parquet_errors_name_the_row(tmp_path: Path) -> None:
    pq.write_table(pa.table({"qid": ["q1", None], "slices": ["a", "b"]}), tmp_path / "s.pq")
    with pytest.raises(InputError, match=r"s\.pq: row 2: the query id must be text, got null"):
        load_slices(tmp_path / "s.pq")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match=r"bad\.parquet: cannot read Parquet"):
        load_slices(tmp_path / "bad.parquet")


def test_too_many_slices_is_refused() -> None:
    with pytest.raises(InputError, match=f"more than {MAX_SLICES} distinct slices"):
        load_slices({f"q{i}": f"tag{i}" for i in range(MAX_SLICES + 1)})


def test_duplicates_count_once() -> None:
    got = load_slices({"q1": ["a", "a", "b"]})
    assert got.tags == {"q1": ("a", "b")} and got.duplicates == 1


def test_a_query_id_twice_in_a_json_object_keeps_both_lists(tmp_path: Path) -> None:
    # json.loads keeps the last value of a repeated key: slice 'a' of q1 was dropped silently
    path = tmp_path / "s.json"
    path.write_text('{"q1": ["a"], "q2": "b", "q1": "b,a"}', encoding="utf-8")
    got = load_slices(path)
    assert got.tags == {"q1": ("a", "b"), "q2": ("b",)} and got.duplicates == 1


# --- the analysis ----------------------------------------------------------------------------

def test_means_and_intervals_are_those_of_the_slice_queries(results: list) -> None:
    r = results[0]
    measures = [Measure("R", 5), Measure("nDCG", 10), Measure("RR")]
    got = analyse_slices(results, _tags(), measures, base=results[0], resamples=2000,
                         curve_resamples=200, seed=7, families=[Measure("P")])
    assert got.names == ["odd", "small", "even"]
    for name in got.names:
        idx = slice_indices(r.query_ids, [q for q, t in _tags().items() if name in t])
        sr = got.runs[name][r.run_name]
        assert sr.n == len(idx)
        for m in measures:
            assert sr.means[m] == float(r.values(m)[idx].mean())  # every value, exactly
            if len(idx) >= MIN_QUERIES:
                ci = bootstrap_ci(r.values(m)[idx], 0.95, 2000, 7)
                assert sr.intervals[m] == (float(ci.lower), float(ci.upper))
            else:
                assert m not in sr.intervals  # too few: no fake interval
        assert sr.curves[Measure("P")] == r.curve("P")[idx].mean(axis=0).tolist()
        assert bool(sr.bands) == (len(idx) >= MIN_QUERIES)


def test_comparisons_are_holm_corrected_over_slices_and_measures(results: list) -> None:
    base, other = results
    measures = [Measure("R", 5), Measure("RR")]
    got = analyse_slices(results, _tags(), measures, base=base, resamples=500, seed=3)
    raw, keys = [], []
    for name in ("odd", "even"):  # "small" has 5 queries: not tested
        idx = slice_indices(base.query_ids, [q for q, t in _tags().items() if name in t])
        a = np.column_stack([base.values(m)[idx] for m in measures])
        b = np.column_stack([other.values(m)[idx] for m in measures])
        tests = paired_columns(a, b, resamples=500, seed=3, interval=False)
        raw += [c.p_rand for c in tests]
        keys += [(name, m) for m in measures]
        wins, losses, ties = outcomes(a, b)
        for j, m in enumerate(measures):
            c = next(x for x in got.comparisons if x.slice == name and x.measure == m)
            assert (c.wins, c.losses, c.ties) == (wins[j], losses[j], ties[j])
            assert c.delta == pytest.approx(float((b - a)[:, j].mean()), abs=1e-15)
    adjusted = dict(zip(keys, holm(raw).tolist(), strict=True))
    for c in got.comparisons:
        if c.slice == "small":
            assert c.p_value is None and not c.significant and c.wins + c.losses + c.ties == 5
        else:
            assert c.p_value == adjusted[(c.slice, c.measure)]


def test_a_query_in_several_slices_counts_in_each(results: list) -> None:
    got = analyse_slices(results[:1], {"q01": ["x", "y"], "q02": ["y"]}, [Measure("RR")],
                         stats=False)
    assert got.runs["x"][results[0].run_name].n == 1
    assert got.runs["y"][results[0].run_name].n == 2
    assert got.unknown == [] and got.untagged[results[0].run_name] == 39


def test_unknown_ids_and_bad_targets(results: list) -> None:
    got = analyse_slices(results[:1], {"q01": ["x"], "nope": ["x"], "gone": ["z"]},
                         [Measure("RR")], stats=False)
    assert got.unknown == ["nope", "gone"]
    assert got.runs["z"][results[0].run_name].n == 0
    assert math.isnan(got.runs["z"][results[0].run_name].means[Measure("RR")])
    with pytest.raises(RagReportError, match="the 1 query id of the slices is not an evaluated"):
        analyse_slices(results, {"nope": ["x"]}, [Measure("RR")], stats=False)
    with pytest.raises(RagReportError, match="targets are set for slice 'typo'"):
        analyse_slices(results, {"q01": ["x"]}, [Measure("RR")], stats=False,
                       targets={"typo": parse_targets({"RR": 0.5})})


def test_slice_targets_and_the_too_few_rule(results: list) -> None:
    targets = {"small": parse_targets({"RR": 0.5, "R@5": {"min": 0.1, "on": "ci_lower"}}),
               "odd": parse_targets({"R@5": {"min": 0.1, "on": "ci_lower"}})}
    got = analyse_slices(results, _tags(), [Measure("RR"), Measure("R", 5)],
                         targets=targets, resamples=300)
    by = {(c.slice, str(c.check.target.measure), c.check.run): c for c in got.checks}
    run = results[0].run_name
    small_rr = by[("small", "RR", run)]
    assert small_rr.check.passed == (float(small_rr.check.shown) >= 0.5)
    assert small_rr.reason == ""  # a mean target is checked on a small slice
    ci_small = by[("small", "R@5", run)]
    assert not ci_small.check.passed and "fewer than 10 queries" in ci_small.reason
    ci_odd = by[("odd", "R@5", run)]
    assert ci_odd.reason == "" and ci_odd.check.value == got.runs["odd"][run].intervals[
        Measure("R", 5)][0]


def test_slice_targets_from_the_targets_file(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[targets]\n"R@5" = 0.3\n[targets.slices.a]\n"RR" = "> 0.5"\n'
                    '[targets.slices."b c"]\n"nDCG@5" = { min = 0.4, on = "ci_lower" }\n',
                    encoding="utf-8")
    assert [str(t) for t in load_targets(path)] == ["R@5 >= 0.3"]  # "slices" is no measure
    got = load_slice_targets(path)
    assert {k: [str(t) for t in v] for k, v in got.items()} == {
        "a": ["RR > 0.5"], "b c": ["nDCG@5 >= 0.4 (CI lower bound)"]}
    assert "[targets.slices.a]" in got["a"][0].source
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ragreport.targets]\n"RR" = 0.5\n[tool.ragreport.targets.slices.x]\n"RR" = 0.7\n',
        encoding="utf-8")
    assert list(load_slice_targets(cwd=tmp_path)) == ["x"]
    path.write_text('[targets.slices]\n"a" = 3\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[targets.slices.a\]: expected a table"):
        load_slice_targets(path)
    path.write_text('[targets.slices.a]\ncompat = "beir"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="'compat' cannot be set per slice"):
        load_slice_targets(path)


# --- the report and its views ---------------------------------------------------------------

HOSTILE = "<script>alert(1)</script> | @team #12"


@pytest.fixture(scope="module")
def sliced(results: list) -> Report:
    tags = _tags()
    tags["q02"] = [*tags["q02"], HOSTILE]
    return build_report(results, parse_targets({"R@5": 0.3}), slices=tags,
                        slice_targets={"even": parse_targets({"R@5": 0.99}),
                                       "odd": parse_targets({"R@5": 0.1})},
                        resamples=500, curve_resamples=100,
                        generated_at="2026-01-01T00:00:00Z")


def test_report_fails_on_a_failing_slice_target(sliced: Report) -> None:
    assert sliced.slices is not None
    assert [t.passed for t in sliced.targets] == [True]
    assert not sliced.all_passed  # only the slice target "even" fails
    assert [s.name for s in sliced.slices.ordered][:1] == ["even"]
    assert {s.name for s, _, _ in sliced.slices.failed_checks} == {"even"}


def test_json_slices(sliced: Report) -> None:
    data = json.loads(sliced.to_json())
    s = data["slices"]
    assert data["all_passed"] is False and s["failing"] == ["even"]
    odd = next(x for x in s["slices"] if x["name"] == "odd")
    r = sliced.runs[0]
    assert odd["queries"] == {r: 21, sliced.runs[1]: 21} and odd["passed"] is True
    assert odd["means"][r]["R@5"] == next(
        c.value for row in sliced.slices.slices[0].rows if row.measure == "R@5"
        for c in row.cells if c.run == r)
    small = next(x for x in s["slices"] if x["name"] == "small")
    assert small["few_queries"] is True and small["intervals"][r] == {}
    assert all(c["p_value"] is None for c in small["comparisons"])
    hostile = next(x for x in s["slices"] if x["name"] == HOSTILE)
    assert hostile["queries"][r] == 1


def test_markdown_failing_first_and_escaped(sliced: Report) -> None:
    md = sliced.to_markdown()
    section = md[md.index("### Slices"):md.index("### Worst queries")]
    assert section.index("❌ even") < section.index("✅ odd")
    assert "<script>" not in md and "&lt;script&gt;" in section
    assert "@team" not in section and " #12" not in section  # inert on GitHub
    assert "slice target check" in md.split("\n")[3] and "even" in md.split("\n")[3]


def test_markdown_table_rows_have_one_cell_per_column(sliced: Report) -> None:
    md = sliced.to_markdown()
    section = md[md.index("### Slices"):md.index("### Worst queries")]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    width = len(re.split(r"(?<!\\)\|", rows[0])) - 2
    assert width == 4 + len(sliced.runs)
    assert all(len(re.split(r"(?<!\\)\|", line)) - 2 == width for line in rows)


def test_markdown_cap_keeps_failing_slices(sliced: Report) -> None:
    md = sliced.to_markdown(max_chars=6000)
    assert len(md) <= 6000
    assert "even" in md.split("\n")[3]  # the status names the failing slice


def test_html_slices_section_and_selector(sliced: Report) -> None:
    page = sliced.to_html()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    start = page.index('<section id="slices">')  # after the curves, before the rest
    section = page[start:page.index("<section", start + 1)]
    assert section.index(">even<") < section.index(">odd<")  # failing first
    assert 'id="slice-status"' in section
    curves = page[page.index('<section id="curves">'):]
    assert 'class="slice-picker-slot"' in curves and 'id="curves-all"' in curves
    groups = curves.count('class="slice-group"')
    assert groups == 4  # every slice has curves (fewer than MAX_SLICE_PLOTS)
    ids = re.findall(r'id="(slice-\d+-curve-\d+)"', page)
    assert len(ids) == len(set(ids)) == 8  # two families per slice, unique ids
    assert "function addSlicePicker" in page


def test_no_slices_no_section(results: list) -> None:
    report = build_report(results[:1], stats=False, generated_at="2026-01-01T00:00:00Z")
    assert report.slices is None
    assert 'id="slices"' not in report.to_html() and "### Slices" not in report.to_markdown()
    assert "slices" not in json.loads(report.to_json())


def test_slice_targets_need_slices(results: list) -> None:
    with pytest.raises(RagReportError, match="slice targets need slices"):
        build_report(results, slice_targets={"x": parse_targets({"RR": 0.5})}, stats=False)


# --- the command line ------------------------------------------------------------------------

def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *argv: str) -> tuple[int, str, str]:
    monkeypatch.chdir(tmp_path)
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_exits_1_and_names_the_slice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.tsv").write_text("q01\tfunctions,small\nq02\tfunctions\nq03\tsmall\n")
    (tmp_path / "t.toml").write_text('[targets]\n"R@5" = 0.3\n[targets.slices.functions]\n'
                                     '"R@5" = 0.9\n')
    code, out, err = _cli(tmp_path, monkeypatch, capsys, "check", "--example", "--slices",
                          "s.tsv", "--targets", "t.toml", "--jobs", "1", "--no-stats",
                          "--json", "r.json")
    assert code == 1, err
    assert "FAILED slice 'functions': R@5: 0.4500 is not >= 0.9 (run 'bm25', 2 queries)" in out
    assert json.loads((tmp_path / "r.json").read_text())["slices"]["failing"] == ["functions"]
    (tmp_path / "t.toml").write_text('[targets]\n"R@5" = 0.3\n[targets.slices.functions]\n'
                                     '"R@5" = 0.4\n')
    code, out, err = _cli(tmp_path, monkeypatch, capsys, "check", "--example", "--slices",
                          "s.tsv", "--targets", "t.toml", "--jobs", "1", "--no-stats")
    assert code == 0, err
    assert "all targets passed" in out and "functions  2 (few)" in out


def test_terminal_counts_are_singular_for_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """One run, one slice of one query, one query id no run evaluated: "1 run", "1 slice",
    "1 query", "1 query id ... was" (the texts said "1 run(s)", "1 queries", "1 query ids")."""
    files = example_files()
    (tmp_path / "s.tsv").write_text("q01\tone\nnot-a-query\tone\n")
    (tmp_path / "t.toml").write_text('[targets.slices.one]\n"R@5" = 0.99\n')
    code, out, err = _cli(tmp_path, monkeypatch, capsys, "check", str(files.qrels),
                          str(files.runs[0]), "--slices", "s.tsv", "--targets", "t.toml",
                          "--jobs", "1", "--no-stats")
    assert code == 1, err
    assert re.search(r": 1 run, 41 queries evaluated\n", out), out
    assert "(run 'bm25', 1 query)\n" in out
    assert "Slices (1 slice from s.tsv; 1 failing)" in out
    assert "1 query id of the slices was not evaluated" in out
    assert "fewer than 10 queries, no interval" in out
    assert not re.search(r"\b1 (queries|query ids|runs|slices)\b|\(s\)", out), out
    (tmp_path / "s.tsv").write_text("nothing\tone\n")
    code, _, err = _cli(tmp_path, monkeypatch, capsys, "check", str(files.qrels),
                        str(files.runs[0]), "--slices", "s.tsv", "--jobs", "1", "--no-stats")
    assert code == 2
    assert "s.tsv: the 1 query id of the slices is not an evaluated query" in err


def test_one_query_with_a_doc_map_is_singular() -> None:
    """One run, one query, a doc map: the terminal and Markdown say "1 query" ("1 of 1 query
    has some"), not "1 queries"."""
    from ragreport.report.terminal import render_terminal

    run = {"q": {"c1": 5.0, "c2": 4.0, "c3": 3.0, "c4": 2.0, "c5": 1.0}}
    r = ragreport.evaluate({"q": {"c3": 2, "c4": 1}}, run, ["P@3", "R@3"],
                           doc_map={"c1": "A", "c2": "B", "c3": "A", "c4": "C", "c5": "B"})
    rep = build_report([r], stats=False, generated_at="2026-01-01T00:00:00Z")
    text, md = render_terminal(rep), rep.to_markdown()
    assert ": 1 run, 1 query evaluated\n" in text
    assert "(mean; 1 of 1 query)" in text
    assert "mean per query; 1 of 1 query has some)" in md
    assert "5 chunks of 3 documents" in text and "5 chunks of 3 documents" in md
    for out in (text, md):
        assert not re.search(r"\b1 (queries|runs|chunks|documents)\b|\(s\)", out)


def test_slice_targets_without_slices_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.toml").write_text('[targets.slices.functions]\n"R@5" = 0.9\n')
    code, _, err = _cli(tmp_path, monkeypatch, capsys, "check", "--example", "--targets",
                        "t.toml", "--jobs", "1", "--no-stats")
    assert code == 2
    assert "sets targets for slices ('functions') but no --slices" in err


def test_slices_column_of_the_queries_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    files = example_files()
    lines = [json.dumps({"query_id": f"q{i:02d}", "text": "t", "kind": "odd" if i % 2 else
                         "even"}) for i in range(1, 42)]
    (tmp_path / "q.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = _cli(tmp_path, monkeypatch, capsys, "report", str(files.qrels),
                        *map(str, files.runs), "--queries", "q.jsonl", "--slices-column",
                        "kind", "--json", "r.json", "--jobs", "1", "--no-stats")
    assert code == 0, err
    data = json.loads((tmp_path / "r.json").read_text())
    assert [s["name"] for s in data["slices"]["slices"]] == ["odd", "even"]
    assert data["slices"]["source"] == "q.jsonl"
    code, _, err = _cli(tmp_path, monkeypatch, capsys, "report", "--example",
                        "--slices-column", "kind", "--json", "r2.json", "--jobs", "1")
    assert code == 2 and "a column ('kind') was named" in err


# --- gold --------------------------------------------------------------------------------------

def test_gold_slices_outputs() -> None:
    out = regen.gold_outputs()
    assert_gold("example_slices.md", out["example_slices.md"])
    assert_gold("example_slices.json", out["example_slices.json"])


def test_markdown_shows_at_most_20_slices(results: list) -> None:
    tags = {f"q{i:02d}": [f"slice {k}" for k in range(i * 5, i * 5 + 5)] for i in range(1, 41)}
    report = build_report(results, slices=tags, stats=False,
                          slice_targets={"slice 77": parse_targets({"RR": "< 0"})},
                          generated_at="2026-01-01T00:00:00Z")
    md = report.to_markdown()
    section = md[md.index("### Slices"):md.index("### Worst queries")]
    assert "180 more slices not shown" in section and "truncated" not in md
    labels = re.findall(r"^\| (?:❌ |✅ )?(slice \d+) \|", section, flags=re.M)
    assert len(labels) == 20 and labels[0] == "slice 77"  # the failing slice first


def test_ci_lower_slice_target_needs_stats(results: list) -> None:
    with pytest.raises(RagReportError, match="a slice target is on the confidence interval"):
        build_report(results, slices=_tags(), stats=False,
                     slice_targets={"odd": parse_targets({"R@5": {"min": 0.1,
                                                                  "on": "ci_lower"}})})


# --- the explorer ------------------------------------------------------------------------------

def test_explorer_state_slice_filter(results: list) -> None:
    from ragreport.explorer.state import ExplorerState

    st = ExplorerState(results, slices=_tags())
    assert st.meta()["slices"] == [{"id": "odd", "label": "odd", "n": 21},
                                   {"id": "small", "label": "small", "n": 5},
                                   {"id": "even", "label": "even", "n": 20}]
    full = st.query_order()
    st.set_slice("small")
    small = {f"q{i:02d}" for i in range(1, 6)}
    assert st.query_order() == [q for q in full if q in small]  # the same order, filtered
    st.set_filter("q0")
    st.set_slice("even")
    assert st.query_order() == [q for q in full if q.startswith("q0") and int(q[1:]) % 2 == 0]
    with pytest.raises(RagReportError, match="slice must be one of 'odd', 'small', 'even'"):
        st.set_slice("nope")
    st.set_filter("")
    st.set_slice("")
    assert st.query_order() == full
    bare = ExplorerState(results)
    assert bare.meta()["slices"] == []
    with pytest.raises(RagReportError, match="no slices were given"):
        bare.set_slice("odd")


def test_explorer_widget_slice_trait(results: list, tmp_path: Path) -> None:
    from ragreport.explorer.widget import Explorer

    ex = Explorer(results, slices=_tags())
    ex.slice = "odd"  # as the front end sets it
    assert ex.n_visible == 21 and ex.error == ""
    assert all(int(q[1:]) % 2 == 1 for q in ex.head["qid"])
    ex.slice = "bogus"
    assert ex.slice == "odd" and "slice must be one of" in ex.error  # reverted, said
    ex.set_slice("")
    assert ex.n_visible == 41 and ex.slice == ""
    written = ex.write_report(tmp_path / "r.html")  # the report button: with the slices
    assert 'id="slices"' in written.read_text(encoding="utf-8")
    ex.close()
    with pytest.raises(InputError, match=r"s\.tsv:1: query 'q01': empty slice name"):
        (tmp_path / "s.tsv").write_text("q01\ta,,b\n", encoding="utf-8")
        Explorer(results, slices=tmp_path / "s.tsv")
