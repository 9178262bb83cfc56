"""Judgments with their source: read from JSONL, BEIR-style TSV, Parquet and tables; every
judgment kept, one chosen per (query, document) by the stated rule; bad labels refused
naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ragreport
from ragreport.io.judgments import check_source, resolve, source_counts

# q1/a: the model says 2, a person 0, the model again 1 (latest); q1/b: model only;
# q2/c: a click then a model
ROWS = [("q1", "a", 2, "llm:gpt"), ("q1", "b", 0, "llm:gpt"), ("q1", "a", 0, "human"),
        ("q1", "a", 1, "llm:gpt"), ("q2", "c", 1, "click"), ("q2", "c", 3, "llm:gpt")]


def write_all(tmp: Path) -> dict[str, object]:
    """The same judgments in every form that carries sources."""
    jsonl = tmp / "q.jsonl"
    jsonl.write_text("".join(json.dumps({"query_id": q, "relevant": {d: g}, "source": s}) + "\n"
                             for q, d, g, s in ROWS), encoding="utf-8")
    tsv = tmp / "q.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\tsource\n"
                   + "".join(f"{q}\t{d}\t{g}\t{s}\n" for q, d, g, s in ROWS), encoding="utf-8")
    table = pa.table({"qid": [r[0] for r in ROWS], "docid": [r[1] for r in ROWS],
                      "relevance": [r[2] for r in ROWS], "source": [r[3] for r in ROWS]})
    parquet = tmp / "q.parquet"
    pq.write_table(table, parquet)
    return {"jsonl": jsonl, "tsv": tsv, "parquet": parquet, "table": table,
            "records": [{"query_id": q, "relevant": {d: g}, "source": s} for q, d, g, s in ROWS]}


def triples(q: ragreport.Qrels) -> list[tuple[str, str, float, str]]:
    return sorted(zip(q.query_ids.to_pylist(), q.doc_ids.to_pylist(), q.grades.tolist(),
                      q.sources.to_pylist(), strict=True))


@pytest.mark.parametrize("form", ["jsonl", "tsv", "parquet", "table", "records"])
def test_every_form_keeps_every_judgment_and_chooses_by_the_rule(tmp_path: Path,
                                                                  form: str) -> None:
    given = write_all(tmp_path)[form]
    q = ragreport.load_qrels(given)
    # human first: q1/a is the person's 0; else the latest: q2/c is the model's 3
    assert triples(q) == [("q1", "a", 0.0, "human"), ("q1", "b", 0.0, "llm:gpt"),
                          ("q2", "c", 3.0, "llm:gpt")]
    assert q.rule == "human-first" and q.judgments is not None and len(q.judgments) == 6
    assert q.judgments.sources.to_pylist() == [r[3] for r in ROWS]
    latest = ragreport.load_qrels(given, judgment_rule="latest")
    assert triples(latest)[0] == ("q1", "a", 1.0, "llm:gpt")
    assert source_counts(q) == {"llm:gpt": 2, "human": 1}


def test_evaluation_uses_the_chosen_grade(tmp_path: Path) -> None:
    path = write_all(tmp_path)["jsonl"]
    run = {"q1": ["a", "b"], "q2": ["c"]}
    assert ragreport.evaluate(path, run, ["P@1"]).mean("P@1") == 0.5  # q1/a: human's 0
    latest = ragreport.load_qrels(path, judgment_rule="latest")
    assert ragreport.evaluate(latest, run, ["P@1"]).mean("P@1") == 1.0


def test_without_sources_a_pair_judged_twice_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"query_id": "q", "relevant": {"a": 1}}\n'
                    '{"query_id": "q", "relevant": {"a": 0}}\n', encoding="utf-8")
    with pytest.raises(ragreport.InputError, match="listed twice"):
        ragreport.load_qrels(path)


@pytest.mark.parametrize("label, problem", [
    ("llm:", "'llm:' names no model"), (" human", "has spaces around it"),
    ("", "a source label is empty"), ("a\x07b", "holds a control character"),
    (3, "a source must be a text label, got int")])
def test_bad_labels_are_refused_naming_the_line(tmp_path: Path, label: object,
                                                problem: str) -> None:
    assert problem in str(check_source(label))
    path = tmp_path / "q.jsonl"
    path.write_text('{"query_id": "q", "relevant": {"a": 1}, "source": "human"}\n'
                    + json.dumps({"query_id": "q", "relevant": {"b": 1}, "source": label})
                    + "\n", encoding="utf-8")
    with pytest.raises(ragreport.InputError, match=r"q\.jsonl:2: bad source: "):
        ragreport.load_qrels(path)


def test_a_record_without_a_source_among_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"query_id": "q", "relevant": {"a": 1}, "source": "human"}\n'
                    '{"query_id": "r", "relevant": {"b": 1}}\n', encoding="utf-8")
    with pytest.raises(ragreport.InputError, match=r"q\.jsonl:2: a judgment has no source"):
        ragreport.load_qrels(path)


def test_an_empty_source_cell_names_the_row() -> None:
    table = pa.table({"qid": ["q", "q"], "docid": ["a", "b"], "rel": [1, 0],
                      "source": ["human", None]})
    with pytest.raises(ragreport.InputError, match=r"row 2: a judgment has no source"):
        ragreport.load_qrels(table)


def test_a_source_column_of_numbers_is_refused() -> None:
    table = pa.table({"qid": ["q"], "docid": ["a"], "rel": [1], "source": [7]})
    with pytest.raises(ragreport.InputError, match=r"the source column 'source' must hold "
                                                   r"text labels"):
        ragreport.load_qrels(table)


def test_a_source_column_named_by_columns() -> None:
    table = pa.table({"qid": ["q", "q"], "docid": ["a", "a"], "rel": [1, 0],
                      "who": ["human", "llm:x"]})
    q = ragreport.load_qrels(table, columns="source=who", judgment_rule="latest")
    assert q.sources.to_pylist() == ["llm:x"] and q.grades.tolist() == [0.0]


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ragreport.RagReportError, match=r"judgment rule must be one of "
                                                       r"human-first, latest, got 'oldest'"):
        ragreport.load_qrels({"q": {"a": 1}}, judgment_rule="oldest")


def test_the_choice_is_vectorised_and_stable_on_many_rows() -> None:
    rng = np.random.default_rng(3)
    n = 5000
    qs = [f"q{i}" for i in rng.integers(0, 40, n)]
    ds = [f"d{i}" for i in rng.integers(0, 30, n)]
    srcs = rng.choice(["human", "llm:a", "click"], n).tolist()
    grades = rng.integers(0, 4, n).astype(float)
    rows = ragreport.Qrels(pa.array(qs), pa.array(ds), "many", None, grades)
    got = resolve(rows, srcs)
    want: dict[tuple[str, str], tuple[float, str]] = {}
    for q, d, g, s in zip(qs, ds, grades.tolist(), srcs, strict=True):
        if s == "human" or want.get((q, d), (0, ""))[1] != "human":
            want[(q, d)] = (g, s)
    assert {(q, d): (g, s) for q, d, g, s in triples(got)} == want


def test_the_report_states_who_judged(tmp_path: Path) -> None:
    from ragreport.report.jsonout import render_json
    from ragreport.report.markdown import render_markdown
    from ragreport.report.terminal import render_terminal
    from ragreport.targets import parse_targets

    path = tmp_path / "q.jsonl"
    rows = [*ROWS, ("q2", "c", 2, "<b>rater</b>")]
    path.write_text("".join(json.dumps({"query_id": q, "relevant": {d: g}, "source": s}) + "\n"
                            for q, d, g, s in rows), encoding="utf-8")
    result = ragreport.evaluate(path, {"q1": ["a", "b"], "q2": ["c"]}, ["P@1"])
    report = ragreport.build_report([result], parse_targets({"P@1": 0.1}), stats=False)
    j = report.judgments
    assert j is not None and j.used == {"<b>rater</b>": 1, "human": 1, "llm:gpt": 1}
    assert (j.read, j.several, j.rule) == (7, 2, "human-first")
    text = ("1 <b>rater</b>, 1 human, 1 llm:gpt (3 used of 7 read; 2 pairs judged more than "
            "once, the latest human judgment used, else the latest)")
    assert f"Judgments: {text}" in render_terminal(report)
    assert "**Judgments:** 1 &lt;b&gt;rater&lt;/b&gt;, 1 human" in render_markdown(report)
    html = report.to_html()
    assert 'data-role="judgments">Judgments: 1 &lt;b&gt;rater&lt;/b&gt;' in html
    assert "<b>rater</b>" not in html
    got = json.loads(render_json(report))["judgments"]
    assert {k: got[k] for k in ("rule", "used", "read", "judged_more_than_once")} == {
        "rule": "human-first", "used": {"<b>rater</b>": 1, "human": 1, "llm:gpt": 1},
        "read": 7, "judged_more_than_once": 2}
    assert {(g["a"], g["b"]) for g in got["agreement"]} == {
        ("llm:gpt", "human"), ("llm:gpt", "click"), ("llm:gpt", "<b>rater</b>"),
        ("<b>rater</b>", "click")}
    plain = ragreport.build_report([ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]},
                                                       ["P@1"])], stats=False)
    assert plain.judgments is None and "judgments" not in json.loads(render_json(plain))


def test_a_column_named_source_can_be_left_unread() -> None:
    table = pa.table({"qid": ["q"], "docid": ["a"], "rel": [1], "source": [7]})
    for off in ("source=", {"source": None}, {"source": ""}):
        q = ragreport.load_qrels(table, columns=off)
        assert q.sources is None and q.grades.tolist() == [1.0]


def test_qrels_already_read_are_chosen_again_by_another_rule(tmp_path: Path) -> None:
    q = ragreport.load_qrels(write_all(tmp_path)["jsonl"])
    assert ragreport.load_qrels(q) is q
    assert ragreport.load_qrels(q, judgment_rule="human-first") is q
    latest = ragreport.load_qrels(q, judgment_rule="latest")
    assert latest.rule == "latest" and triples(latest)[0] == ("q1", "a", 1.0, "llm:gpt")


def test_chunked_columns_are_resolved() -> None:
    rows = ragreport.Qrels(pa.chunked_array([["q", "q"], ["q"]]),
                           pa.chunked_array([["a"], ["a", "b"]]), "c", None,
                           np.array([1.0, 0.0, 1.0]))
    got = resolve(rows, pa.chunked_array([["human"], ["llm:x", "llm:x"]]))
    assert got.grades.tolist() == [1.0, 1.0] and got.sources.to_pylist() == ["human", "llm:x"]
