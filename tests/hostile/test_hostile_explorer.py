"""Hostile-input catalogue: the explorer's inputs (issue 14), at the API level.

What a notebook user passes to ``ragreport.Explorer`` (results, targets, texts, measure, K),
what the front end sets on its traits and what it sends as messages. Every row either works
(and the widget's traits stay JSON without NaN, every user string intact in the data and
escaped in the static snapshot) or fails with one readable RagReportError (never a traceback
from deep inside, never a half-built widget); a refused trait value is reverted and shown in
``error``; a malformed message gets an ``error`` reply and changes nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import ragreport
from ragreport.explorer.widget import Explorer

QRELS = {"q1": {"d1": 1, "d2": 2, "d4": 0}, "q2": {"d3": 1, "d8": 3}, "q3": {"d7": 1},
         "q4": {"d9": 0}}
RUN = {"q1": ["d1", "d2", "d9"], "q2": [], "q3": ["d6", "d7"], "q4": ["d9"]}
TRAITS = ("meta", "measure", "k", "run_a", "run_b", "sort", "filter_text", "category",
          "fails_only", "selected", "order_version", "n_visible", "selected_pos", "head",
          "summary", "ranking", "panel", "compare", "report", "error")


def _results() -> list[ragreport.EvaluationResult]:
    return [ragreport.evaluate(QRELS, RUN, name="one"),
            ragreport.evaluate(QRELS, {**RUN, "q2": ["d3"]}, name="two")]


def _state(ex: Explorer) -> str:
    return json.dumps({t: getattr(ex, t) for t in TRAITS}, allow_nan=False, sort_keys=True)


@dataclass(frozen=True)
class Row:
    """One row: build an explorer from ``kwargs`` (``results`` defaults to two good runs);
    ``error`` is the pattern of the RagReportError expected, else ``check`` runs on it."""

    id: str
    kwargs: dict[str, Any]
    error: str | None = None
    check: Callable[[Explorer], None] | None = None


def _files(tmp: Path) -> dict[str, Path]:
    (tmp / "bad.toml").write_text("[targets\nR@5 = 0.5\n", "utf-8")
    (tmp / "targets.toml").write_text('[targets]\n"nDCG@3" = ">= 0.5"\n', "utf-8")
    (tmp / "latin1.tsv").write_bytes("q1\tcaf\xe9\n".encode("latin-1"))
    (tmp / "queries.tsv").write_text("q1\tfirst <query>\nq2\tsecond\n", "utf-8")
    (tmp / "labels-bad.jsonl").write_text('{"query_id": "q1", "doc_id": "d9", "grade": 1}\n'
                                          '{"query_id": "q1"\n', "utf-8")
    (tmp / "labels-conflict.jsonl").write_text(
        '{"query_id": "q1", "doc_id": "d1", "grade": 0}\n', "utf-8")
    (tmp / "labels-other.jsonl").write_text(
        '{"query_id": "q9", "doc_id": "zz", "grade": 1, "source": "llm:x"}\n'
        '{"query_id": "q1", "doc_id": "d9", "grade": 1}\n', "utf-8")
    (tmp / "labels-latin1.jsonl").write_bytes(
        '{"query_id": "q1", "doc_id": "caf\xe9", "grade": 1}\n'.encode("latin-1"))
    (tmp / "folder").mkdir()
    return {"bad": tmp / "bad.toml", "good": tmp / "targets.toml",
            "latin1": tmp / "latin1.tsv", "queries": tmp / "queries.tsv",
            "labels-bad": tmp / "labels-bad.jsonl",
            "labels-conflict": tmp / "labels-conflict.jsonl",
            "labels-other": tmp / "labels-other.jsonl",
            "labels-latin1": tmp / "labels-latin1.jsonl", "folder": tmp / "folder",
            "labels-new": tmp / "new" / "labels.jsonl"}


def _is(measure: str, k: int) -> Callable[[Explorer], None]:
    def check(ex: Explorer) -> None:
        assert (ex.measure, ex.k) == (measure, k)
    return check


ROWS = [
    # results
    Row("results-none", {"results": None}, "needs EvaluationResult objects, got NoneType"),
    Row("results-empty-list", {"results": []}, "at least one evaluation result"),
    Row("results-str", {"results": "run.txt"}, "needs EvaluationResult objects, got str"),
    Row("results-dict", {"results": {"a": 1}}, "needs EvaluationResult objects, got dict"),
    Row("results-list-of-int", {"results": [1]}, "expected EvaluationResult objects, got int"),
    Row("results-same-name-twice", {"results": "twice"}, "run names must be distinct"),
    # targets
    Row("targets-int", {"targets": 5}, "targets must be a list of Target objects"),
    Row("targets-list-of-str", {"targets": ["R@5 > 0.5"]}, "targets must be Target objects"),
    Row("targets-missing-file", {"targets": "nope.toml"}, "no such file"),
    Row("targets-bad-toml", {"targets": "@bad"}, "invalid TOML"),
    Row("targets-unknown-measure", {"targets": {"nope@5": 0.5}}, "nope"),
    Row("targets-bad-threshold", {"targets": {"R@5": "> lots"}}, "R@5"),
    Row("targets-file", {"targets": "@good"}, check=_is("nDCG", 3)),
    Row("targets-empty", {"targets": {}}, check=_is("nDCG", 3)),  # K 10, capped at the depth
    Row("targets-measure-not-in-curves", {"targets": {"Rprec": 0.5}},
        check=lambda ex: ex.panel["targets"][0]["label"] == "Rprec >= 0.5"),
    # texts
    Row("queries-int", {"queries": 5}, "queries must be a path or a dict, got int"),
    Row("docs-missing-file", {"docs": "nope.tsv"}, "nope.tsv"),
    Row("queries-latin1-file", {"queries": "@latin1"}, "not valid UTF-8"),
    Row("queries-file", {"queries": "@queries"},
        check=lambda ex: ex.state.queries["q1"] == "first <query>"),
    Row("queries-non-str-values", {"queries": {"q1": 5, 7: "seven"}},
        check=lambda ex: ex.state.queries["q1"] == "5"),
    Row("docs-unknown-ids", {"docs": {"zz": "x"}},
        check=lambda ex: ex.ranking["rows"]["text"] == [""] * len(ex.ranking["rows"]["text"])),
    # measure and K
    Row("measure-unknown", {"measure": "zzz"}, "unknown measure 'zzz'"),
    Row("measure-empty", {"measure": ""}, "measure must be a family name"),
    Row("measure-int", {"measure": 5}, "measure must be a family name"),
    Row("measure-without-curve", {"measure": "Rprec"}, "no curve for Rprec"),
    Row("k-zero", {"k": 0}, "K must be an integer from 1 to 3, got 0"),
    Row("k-huge", {"k": 10**12}, "K must be an integer from 1 to 3"),
    Row("k-float", {"k": 2.0}, "K must be an integer"),
    Row("k-bool", {"k": True}, "K must be an integer"),
    Row("k-str", {"k": "2"}, "K must be an integer"),
    Row("measure-with-k", {"measure": "P@2"}, check=_is("P", 2)),
    # the judgments file (judging in place) and the grades
    Row("judgments-int", {"judgments": 5}, "judgments must be a file path, got 5"),
    Row("judgments-empty-path", {"judgments": ""}, "judgments must be a file path"),
    Row("judgments-folder", {"judgments": "@folder"}, "is a folder, not a judgments file"),
    Row("judgments-bad-json", {"judgments": "@labels-bad"}, "labels-bad.jsonl:2: not JSON"),
    Row("judgments-latin1", {"judgments": "@labels-latin1"}, "labels-latin1.jsonl"),
    Row("judgments-against-the-qrels", {"judgments": "@labels-conflict"},
        "document 'd1' has grade 0 here, but the qrels judge it 1"),
    Row("judgments-of-other-queries-and-sources", {"judgments": "@labels-other"},
        check=lambda ex: ex.meta["judging"]["count"] == 2
        and ("d9", 1.0) in ex.state.result_a.judged("q1")),
    Row("judgments-in-a-missing-folder", {"judgments": "@labels-new"},
        check=lambda ex: ex.meta["judging"]["count"] == 0),  # an error on the first judgment
    Row("judge-grades-without-file", {"judge_grades": [0, 1]},
        check=lambda ex: ex.meta["judging"] is None),
    Row("judge-grades-ten", {"judgments": "@labels-new", "judge_grades": [10]},
        "judge_grades must be grades 0-9"),
    Row("judge-grades-str", {"judgments": "@labels-new", "judge_grades": "0123"},
        "judge_grades must be a list of grades 0-9"),
    Row("judge-grades-twice", {"judgments": "@labels-new", "judge_grades": [1, 1]},
        "judge_grades must be distinct grades 0-9"),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_explorer_inputs(row: Row, tmp_path: Path) -> None:
    files = _files(tmp_path)
    kwargs = {k: (files[v[1:]] if isinstance(v, str) and v.startswith("@") else v)
              for k, v in row.kwargs.items()}
    results: Any = kwargs.pop("results", _results())
    if results == "twice":
        r = _results()[0]
        results = [r, r]
    if isinstance(kwargs.get("targets"), str) or isinstance(kwargs.get("docs"), str):
        for key in ("targets", "docs"):
            if isinstance(kwargs.get(key), str):
                kwargs[key] = tmp_path / kwargs[key]
    if row.error is not None:
        with pytest.raises(ragreport.RagReportError) as info:
            Explorer(results, **kwargs)
        message = str(info.value)
        assert re.search(re.escape(row.error), message), message
        assert "\n" not in message.strip() and "Traceback" not in message
        return
    ex = Explorer(results, **kwargs)
    _state(ex)  # every trait is strict JSON
    assert ex.error == ""
    assert row.check is not None
    assert row.check(ex) is not False


# ---- traits set by the front end ---------------------------------------------------------
TRAIT_ROWS: list[tuple[str, str, Any, str]] = [
    ("k-zero", "k", 0, "K must be an integer from 1 to 3, got 0"),
    ("k-negative", "k", -4, "K must be an integer from 1 to 3"),
    ("k-past-deepest", "k", 4, "K must be an integer from 1 to 3, got 4"),
    ("measure-unknown", "measure", "<script>", "unknown measure '<script>'"),
    ("measure-blank", "measure", " ", "measure must be a family name"),
    ("measure-no-curve", "measure", "Rprec", "no curve for Rprec"),
    ("sort-unknown", "sort", "random", "sort must be one of worst, best, id"),
    ("category-unknown", "category", "failures", "category must be one of"),
    ("run-a-out-of-range", "run_a", 7, "run A must be a run name or an index below 2"),
    ("run-b-out-of-range", "run_b", -2, "run B must be a run name or an index below 2"),
    ("run-a-equals-b", "run_b", 0, "run A and run B must differ"),
    ("select-unknown-query", "selected", "q9", "query 'q9' was not evaluated"),
    ("select-hostile-query", "selected", "<img src=x>", "query '<img src=x>' was not"),
]


@pytest.mark.parametrize("name, value, pattern", [r[1:] for r in TRAIT_ROWS],
                         ids=[r[0] for r in TRAIT_ROWS])
def test_refused_trait_values_revert(name: str, value: Any, pattern: str) -> None:
    ex = Explorer(_results(), targets=[])
    before = json.loads(_state(ex))
    setattr(ex, name, value)
    assert pattern in ex.error and "\n" not in ex.error
    after = json.loads(_state(ex))
    assert after.pop("error") != before.pop("error")
    assert after == before  # reverted: nothing else moved


def test_long_filter_and_odd_characters_are_just_text() -> None:
    ex = Explorer(_results(), targets=[], queries={"q1": "a\x00b\u202eevil\ttab"})
    for text in ("\x00", "\u202e", "[", ".*", "(", "\\", "%s", "x" * 5000, "q1\tA"):
        ex.filter_text = text
        assert ex.error == ""
        json.dumps(ex.head, allow_nan=False)
    ex.filter_text = "\u202eEVIL"
    assert ex.query_order() == ["q1"]
    ex.filter_text = "x" * 5000
    assert ex.n_visible == 0 and len(ex.state.filter_text) == 1000


# ---- malformed messages ------------------------------------------------------------------
MESSAGES: list[tuple[str, Any, str]] = [
    ("none", None, "a message must be an object"),
    ("number", 3, "a message must be an object, got int"),
    ("list", [{"type": "rows"}], "a message must be an object, got list"),
    ("no-type", {"id": 1}, "unknown message type 'None'"),
    ("type-dict", {"type": {"a": 1}}, "unknown message type"),
    ("long-type", {"type": "x" * 10_000}, "unknown message type 'xxxx"),
    ("rows-no-window", {"type": "rows"}, "rows: start must be an integer, got None"),
    ("rows-str", {"type": "rows", "start": "0", "end": "9"}, "start must be an integer"),
    ("rows-list", {"type": "rows", "start": [0], "end": 9}, "start must be an integer"),
    ("rows-nan", {"type": "rows", "start": 0, "end": float("nan")}, "end must be an integer"),
    ("rows-2-53", {"type": "rows", "start": 2**60, "end": 2**61}, "start must be an integer"),
    ("passage-no-doc", {"type": "passage", "qid": "q1"}, "passage: doc_id must be text"),
    ("passage-doc-int", {"type": "passage", "qid": "q1", "doc_id": 5}, "doc_id must be text"),
    ("report-path-int", {"type": "report", "path": 5}, "report: path must be text"),
    ("judge-without-file", {"type": "judge", "qid": "q1", "doc_id": "d9", "grade": 1},
     "judging needs a judgments file"),
]


@pytest.mark.parametrize("msg, pattern", [m[1:] for m in MESSAGES], ids=[m[0] for m in MESSAGES])
def test_malformed_messages_answered_with_an_error(msg: Any, pattern: str) -> None:
    ex = Explorer(_results(), targets=[])
    before = _state(ex)
    replies = ex.handle_message(msg)
    assert len(replies) == 1
    [reply] = replies
    assert reply["type"] == "error" and pattern in reply["message"]
    assert len(reply["message"]) < 200 and "\n" not in reply["message"]
    json.dumps(reply, allow_nan=False)
    assert _state(ex) == before


def test_hostile_ids_and_texts_survive_every_view(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ids = ['<script>alert(1)</script>', 'q"\'&', "q\u202e1", "q " * 3 + "spaces",
           "q" + "w" * 3000]
    qrels = {q: {f"<d>{n}": 1, "&amp;": 0} for n, q in enumerate(ids)}
    run = {q: ["&amp;", f"<d>{n}", "</td>"] for n, q in enumerate(ids)}
    results = [ragreport.evaluate(qrels, run, name="<i>a</i>"),
               ragreport.evaluate(qrels, {q: list(reversed(v)) for q, v in run.items()},
                                  name="b&b")]
    texts = {q: "<script>q()</script>" + "\n" * 50 + "y" * 10_000 for q in ids}
    docs = {"</td>": "<iframe src=//x></iframe>" + "z" * 10_000}
    ex = Explorer(results, targets=[], queries=texts, docs=docs)
    for q in ids:
        ex.select_query(q)
        assert ex.ranking["qid"] == q and ex.panel["qid"] == q
        json.dumps(_state(ex))
        page = ex._repr_mimebundle_()[0]["text/html"]
        for bad in ("<script>", "<iframe", "<d>", "<i>a", "</td></tr><"):
            assert bad not in page.replace("</td></tr>\n", "").replace("</td></tr><tr", "")
        assert len(page) < 200_000
    assert max(len(t) for t in ex.head["text"]) <= 120
    assert max(len(t) for t in ex.ranking["rows"]["text"]) <= 300
    [r] = ex.handle_message({"type": "passage", "id": 1, "qid": ids[0], "doc_id": "</td>"})
    assert r["text"] == docs["</td>"]  # the full text, as data (the front end escapes)
    monkeypatch.chdir(tmp_path)
    [r] = ex.handle_message({"type": "report", "id": 2, "path": "<b>.html"})
    ex.wait_report(60)  # written in a thread
    assert r["state"] == "busy" and ex.report["state"] == "done"
    assert (tmp_path / "<b>.html").is_file()
