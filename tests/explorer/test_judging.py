"""Judging in place in the explorer (issue 26 §4), Python side: the file each judgment is
appended to, the runs evaluated again with it (checked against ``ragreport.evaluate`` over
hand-merged qrels), the traits the view draws afterwards, and every refusal (nothing written).
The front end is tested in a real browser (test_browser_judging.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ragreport
from ragreport.explorer.judging import Judging
from ragreport.explorer.state import ExplorerState
from ragreport.explorer.widget import Explorer
from ragreport.measures import Measure

QRELS = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}, "q3": {"e": 1}}
RUN_X = {"q1": ["u", "a", "v", "b"], "q2": ["w", "c"], "q3": ["e", "f"]}
RUN_Y = {"q1": ["a", "u"], "q2": ["c", "w"], "q3": ["f", "e"]}
MEASURES = ["P@1", "nDCG@2", "RR", "R@2"]


def _runs() -> list[ragreport.EvaluationResult]:
    return [ragreport.evaluate(QRELS, RUN_X, MEASURES, 4, name="x"),
            ragreport.evaluate(QRELS, RUN_Y, MEASURES, 4, name="y")]


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text("utf-8").splitlines()]


def test_a_judgment_is_appended_and_every_run_is_evaluated_again(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    s = ExplorerState(_runs(), targets=[], measure="P", k=1, judgments=labels)
    assert not labels.exists()  # created by the first judgment
    assert s.values(0).tolist() == [0.0, 0.0, 1.0]  # q1, q2, q3 in run x
    s.judge("q1", "u", 1)
    [line] = _lines(labels)
    assert (line["query_id"], line["doc_id"], line["grade"], line["source"]) \
        == ("q1", "u", 1, "human")
    assert isinstance(line["time"], str)
    # the values are those of the runs evaluated against the qrels with the judgment
    merged = {**QRELS, "q1": {**QRELS["q1"], "u": 1}}
    for i, run in enumerate((RUN_X, RUN_Y)):
        want = ragreport.evaluate(merged, run, MEASURES, 4)
        for m in ("P@1", "nDCG@2", "RR", "R@2"):
            fam, k = m.split("@") if "@" in m else (m, "4")  # RR: to the depth
            assert s.values(i, Measure(fam), int(k)).tolist() \
                == pytest.approx([want.per_query(m)[q] for q in ("q1", "q2", "q3")])
    assert s.values(0).tolist() == [1.0, 0.0, 1.0]
    assert s.meta()["judging"] == {"path": str(labels), "grades": [0, 1, 2], "count": 1}


def test_the_file_is_read_first_and_a_later_judgment_of_the_pair_wins(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    s = ExplorerState(_runs(), targets=[], measure="P", k=1, judgments=labels)
    s.judge("q2", "w", 1)
    again = ExplorerState(_runs(), targets=[], measure="P", k=1, judgments=labels)
    assert again.values(0).tolist() == [0.0, 1.0, 1.0]  # q2's w counts at once
    again.judge("q2", "w", 0)  # a correction: the latest judgment of the pair is used
    assert again.values(0).tolist() == [0.0, 0.0, 1.0]
    assert [x["grade"] for x in _lines(labels)] == [1, 0]
    assert again.judging is not None and again.judging.count == 2
    # what merge-labels reads: the file is the labels' format
    got = ragreport.io.labels.read_labels(labels)
    assert got.grades.tolist() == [0.0]


def test_the_choices_are_kept_and_the_ranking_marks_judgments_made_here(
        tmp_path: Path) -> None:
    s = ExplorerState(_runs(), targets=[], measure="nDCG", k=2, judgments=tmp_path / "l.jsonl")
    s.set_sort("id")
    s.select_query("q1")
    s.set_filter("q")
    before = s.ranking()
    version = s.order_version
    assert before["rows"]["grade"][0] is None and before["rows"]["judged_here"] == [False] * 4
    s.judge("q1", "u", 2)
    assert (s.k, s.sort, s.selected, s.filter_text, str(s.family)) == (2, "id", "q1", "q", "nDCG")
    after = s.ranking()
    s.order()
    assert s.order_version > version  # the view's cached rows of the list are stale
    assert after["rows"]["grade"][0] == 2.0 and after["rows"]["relevant"][0] is True
    assert after["rows"]["judged_here"] == [True, False, False, False]
    assert after["b"]["rows"]["judged_here"] == [False, True]  # run y ranks u second


def test_the_unjudged_badge_goes_when_the_query_has_no_unjudged_document_left(
        tmp_path: Path) -> None:
    s = ExplorerState(_runs(), targets=[], measure="P", k=1, judgments=tmp_path / "l.jsonl")
    s.set_sort("id")

    def badges() -> list[object]:
        return s.rows(0, 3)["unjudged"]

    assert badges()[0] == [0.0, 1.0]  # q1: u at rank 1 is unjudged
    s.judge("q1", "u", 0)
    assert badges()[0] is None
    assert s.summary()["runs"][0]["mean"] == pytest.approx(1 / 3)


def test_refusals_write_nothing(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    s = ExplorerState(_runs(), targets=[], judgments=labels)
    cases = [(("q1", "a", 1), "already judged in the qrels (grade 2)"),
             (("q1", "u", 5), "the grade must be one of 0, 1, 2, got 5"),
             (("q1", "u", True), "the grade must be one of"),
             (("q1", "u", "1"), "the grade must be one of"),
             (("nope", "u", 1), "query 'nope' was not evaluated"),
             (("q1", "", 1), "the document id must be text"),
             (("q1", "w", 1), "document 'w' is not in the rankings of query 'q1'"),
             ((None, "u", 1), "the query id must be text")]
    for args, message in cases:
        with pytest.raises(ragreport.RagReportError, match=message.replace("(", r"\(")
                           .replace(")", r"\)")):
            s.judge(*args)  # type: ignore[arg-type]
    assert not labels.exists()
    plain = ExplorerState(_runs(), targets=[])
    with pytest.raises(ragreport.RagReportError, match="judging needs a judgments file"):
        plain.judge("q1", "u", 1)
    assert plain.meta()["judging"] is None


def test_grades_default_to_the_qrels_scale_and_can_be_chosen(tmp_path: Path) -> None:
    runs = _runs()
    assert Judging(tmp_path / "a.jsonl", runs).grades == (0, 1, 2)
    binary = [ragreport.evaluate({"q": {"a": 1}}, {"q": ["a", "b"]}, ["P@1"])]
    assert Judging(tmp_path / "a.jsonl", binary).grades == (0, 1)
    assert Judging(tmp_path / "a.jsonl", runs, [3, 0, 1, 2]).grades == (0, 1, 2, 3)
    for bad, message in (([], "distinct grades"), ([1, 1], "distinct grades"),
                         ([10], "grades 0-9"), ([-1], "grades 0-9"), ([1.5], "grades 0-9"),
                         ("0123", "a list of grades")):
        with pytest.raises(ragreport.RagReportError, match=message):
            Judging(tmp_path / "a.jsonl", runs, bad)  # type: ignore[arg-type]


def test_a_bad_judgments_file_is_an_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q1", "doc_id": "u", "grade": 1}\nnot json\n', "utf-8")
    with pytest.raises(ragreport.InputError, match=r"bad\.jsonl:2: not JSON"):
        ExplorerState(_runs(), targets=[], judgments=bad)
    with pytest.raises(ragreport.InputError, match="is a folder"):
        ExplorerState(_runs(), targets=[], judgments=tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", "utf-8")
    assert ExplorerState(_runs(), targets=[], judgments=empty).judging.count == 0  # type: ignore[union-attr]
    other = tmp_path / "other.jsonl"
    other.write_text('{"query_id": "q1", "doc_id": "a", "grade": 0}\n', "utf-8")
    with pytest.raises(ragreport.InputError, match=r"other\.jsonl: query 'q1', document 'a' "
                       r"has grade 0 here, but the qrels judge it 2"):
        ExplorerState(_runs(), targets=[], judgments=other)
    # merged into the qrels already (the same grade): the qrels' judgment, not one made here
    other.write_text('{"query_id": "q1", "doc_id": "a", "grade": 2}\n', "utf-8")
    merged = ExplorerState(_runs(), targets=[], judgments=other)
    assert merged.judging is not None and merged.judging.mine == {}
    with pytest.raises(ragreport.RagReportError, match="already judged in the qrels"):
        merged.judge("q1", "a", 1)
    gone = tmp_path / "no" / "such" / "folder" / "labels.jsonl"
    s = ExplorerState(_runs(), targets=[], judgments=gone)
    with pytest.raises(ragreport.InputError, match="cannot append the judgment"):
        s.judge("q1", "u", 1)
    assert s.judging is not None and s.judging.count == 0
    assert s.values(0).tolist() == ExplorerState(_runs(), targets=[]).values(0).tolist()


def test_the_widget_judges_from_a_message_and_pushes_the_new_view(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    ex = Explorer(_runs(), targets=[], measure="P@1", judgments=labels)
    ex.set_sort("id")
    ex.select_query("q1")
    assert ex.summary["runs"][0]["mean"] == pytest.approx(1 / 3)
    assert ex.meta["judging"]["grades"] == [0, 1, 2]
    [reply] = ex.handle_message({"type": "judge", "id": 4, "qid": "q1", "doc_id": "u",
                                 "grade": 1})
    assert reply == {"type": "judge", "id": 4, "qid": "q1", "doc_id": "u", "grade": 1,
                     "count": 1}
    assert ex.summary["runs"][0]["mean"] == pytest.approx(2 / 3)
    assert ex.ranking["rows"]["grade"][0] == 1.0 and ex.ranking["rows"]["judged_here"][0]
    assert ex.meta["judging"]["count"] == 1 and ex.error == ""
    assert ex.head["unjudged"][0] is None  # q1 has no unjudged document left at K = 1
    [refused] = ex.handle_message({"type": "judge", "id": 5, "qid": "q1", "doc_id": "a",
                                   "grade": 0})
    assert refused["type"] == "error" and "already judged" in refused["message"]
    assert len(_lines(labels)) == 1


@pytest.mark.parametrize("options", [{}, {"ties": "average", "max_depth": 3},
                                     {"rel_level": 2}, {"complete": True},
                                     {"compat": "ranx", "rel_level": 2},
                                     {"compat": "llamaindex"}, {"no_relevant": "skip"}])
def test_the_view_equals_the_runs_evaluated_from_scratch(tmp_path: Path,
                                                         options: dict[str, object]) -> None:
    """Each run's rankings given the new grades (or, with ties averaged over a depth cut,
    the run aligned again; a judgment of a query the run did not evaluate too) give the
    values of the run evaluated against the qrels with the file's judgments."""
    labels = tmp_path / "labels.jsonl"  # a query no run ranked: counts only with complete
    labels.write_text('{"query_id": "q9", "doc_id": "z", "grade": 1, "source": "llm:x"}',
                      "utf-8")  # (no final newline: the next line goes on a line of its own)
    runs = [ragreport.evaluate(QRELS, run, MEASURES, 4, name=n, **options)  # type: ignore[arg-type]
            for n, run in (("x", RUN_X), ("y", RUN_Y))]
    s = ExplorerState(runs, targets=[], judgments=labels, judge_grades=[0, 1, 2])
    for q, d, g in (("q1", "u", 1), ("q2", "w", 2), ("q1", "v", 0), ("q1", "u", 2)):
        s.judge(q, d, g)
    merged = {q: dict(j) for q, j in QRELS.items()}
    merged["q1"] |= {"u": 2, "v": 0}
    merged["q2"] |= {"w": 2}
    merged["q9"] = {"z": 1}
    for i, run in enumerate((RUN_X, RUN_Y)):
        want = ragreport.evaluate(merged, run, MEASURES, 4, **options)  # type: ignore[arg-type]
        got = s.inputs.results[i]
        assert got.query_ids == want.query_ids
        for m in MEASURES:
            np.testing.assert_array_equal(got.values(m), want.values(m), err_msg=m)
    assert len(_lines(labels)) == 5


def test_a_judgment_the_runs_refuse_writes_nothing(tmp_path: Path) -> None:
    """ERR reads grades up to 4: a grade of 5 is refused by the evaluation, and neither the
    file nor the judgments change (the next judgment works)."""
    labels = tmp_path / "labels.jsonl"
    runs = [ragreport.evaluate(QRELS, RUN_X, ["ERR@3", "P@1"], 4, name="x")]
    s = ExplorerState(runs, targets=[], measure="P", k=1, judgments=labels,
                      judge_grades=[0, 1, 5])
    with pytest.raises(ragreport.RagReportError):
        s.judge("q1", "u", 5)
    assert not labels.exists() and s.judging is not None and s.judging.count == 0
    assert s.judging.mine == {} and s.ranking()["rows"]["judged_here"] == [False] * 4
    s.judge("q1", "u", 1)
    assert [x["grade"] for x in _lines(labels)] == [1] and s.values(0).tolist()[0] == 1.0


def test_only_a_jsonl_file_and_no_doc_map(tmp_path: Path) -> None:
    for name in ("labels.csv", "labels.json", "labels"):
        with pytest.raises(ragreport.RagReportError, match=r"judgments must be a \.jsonl file"):
            ExplorerState(_runs(), targets=[], judgments=tmp_path / name)
    mapped = ragreport.evaluate({"q": {"d1": 1}}, {"q": ["c1", "c2"]}, ["P@1"],
                                doc_map={"c1": "d1", "c2": "d2"})
    with pytest.raises(ragreport.RagReportError, match="not available for results evaluated "
                                                       "with a doc map"):
        ExplorerState(mapped, targets=[], judgments=tmp_path / "labels.jsonl")
