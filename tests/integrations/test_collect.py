"""collect_run: a retriever measured directly (issue 15).

Real LlamaIndex (``llama-index-core``) and LangChain (``langchain-core``) retrievers over an
in-memory keyword index (no network, no embeddings), a plain callable; the same numbers as the
equivalent TREC run file for every measure and query; queries kept in order under concurrency;
errors naming the query; resume after a simulated crash; latency in every report output.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paths import user_docs

# no telemetry, no download, no network: set before the frameworks are imported
os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever as LCBaseRetriever
from llama_index.core.retrievers import BaseRetriever as LIBaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

import ragreport
from ragreport.errors import ConfigError, InputError, RagReportError
from ragreport.integrations.collect import collect_run
from ragreport.report import build_report
from ragreport.report.terminal import render_terminal

CORPUS = {
    "d1": "the cat sat on the mat",
    "d2": "dogs bark at the mail carrier",
    "d3": "a cat and a dog share a home",
    "d4": "stock markets fell sharply today",
    "d5": "the central bank raised interest rates",
    "d6": "interest in cats as pets keeps rising",
    "d7": "how to train a dog to sit",
    "d8": "rates of inflation and the bank",
}
QUERIES = {
    "q1": "cat on a mat",
    "q2": "dog training sit",
    "q3": "bank interest rates",
    "q4": "stock markets",
    "q5": "pets at home",
    "q6": "quantum chromodynamics",  # nothing matches: an empty retrieval
}
QRELS = {
    "q1": {"d1": 2, "d3": 1},
    "q2": {"d7": 2, "d3": 0},
    "q3": {"d5": 2, "d8": 1},
    "q4": {"d4": 1},
    "q5": {"d6": 1, "d3": 1},
    "q6": {"d2": 1},
}
MEASURES = ["P@1", "P@3", "R@3", "nDCG@3", "nDCG", "RR", "AP", "R-Prec", "HitRate@2",
            "F1@3"]


def keyword_search(text: str, k: int = 4) -> list[tuple[str, float]]:
    """A tiny keyword scorer: shared words (prefix match on 3 letters), ties broken by a
    small per-document offset so every score is distinct."""
    words = {w[:3] for w in text.lower().split() if len(w) > 2}
    hits = []
    for i, (doc, body) in enumerate(CORPUS.items()):
        shared = len(words & {w[:3] for w in body.lower().split() if len(w) > 2})
        if shared:
            hits.append((doc, shared + (len(CORPUS) - i) / 100))
    hits.sort(key=lambda x: -x[1])
    return hits[:k]


class KeywordLlamaIndex(LIBaseRetriever):
    """A real LlamaIndex retriever (its BaseRetriever) over in-memory nodes."""

    def __init__(self, k: int = 4) -> None:
        super().__init__()
        self.k = k
        self.nodes = {d: TextNode(id_=f"chunk-{d}", text=t, metadata={"doc_id": d,
                                                                      "lang": "en"})
                      for d, t in CORPUS.items()}

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [NodeWithScore(node=self.nodes[d], score=s)
                for d, s in keyword_search(query_bundle.query_str, self.k)]


class KeywordLangChain(LCBaseRetriever):
    """A real LangChain retriever (its BaseRetriever) over in-memory documents."""

    k: int = 4
    with_ids: bool = True

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [Document(page_content=CORPUS[d], metadata={"doc_id": d, "source": "mem"},
                         id=f"lc-{d}" if self.with_ids else None)
                for d, _ in keyword_search(query, self.k)]


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here fails if anything tries to open a network connection."""
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def trec_file(tmp_path: Path, ranked: dict[str, list[tuple[str, float]]],
              name: str = "run.txt") -> Path:
    path = tmp_path / name
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for q, docs in ranked.items()
                            for i, (d, s) in enumerate(docs)), encoding="utf-8")
    return path


def assert_same_numbers(a: ragreport.EvaluationResult, b: ragreport.EvaluationResult) -> None:
    """Every measure of every query, exactly (not a mean)."""
    assert a.query_ids == b.query_ids
    for m in MEASURES:
        assert np.array_equal(a.values(m), b.values(m)), m
    for fam in ("P", "R", "nDCG", "AP"):
        assert np.array_equal(a.curve(fam), b.curve(fam)), fam


def expected_ranked(k: int = 4) -> dict[str, list[tuple[str, float]]]:
    return {q: keyword_search(t, k) for q, t in QUERIES.items()}


# ---- the three kinds of retriever -------------------------------------------------------------


def test_callable_same_numbers_as_trec_file(tmp_path: Path) -> None:
    run = collect_run(keyword_search, QUERIES)
    assert run.name == "keyword_search"
    assert run.has_scores
    want = expected_ranked()
    assert run.query_ids.to_pylist() == [q for q, docs in want.items() for _ in docs]
    assert run.doc_ids.to_pylist() == [d for docs in want.values() for d, _ in docs]
    assert run.scores.tolist() == [s for docs in want.values() for _, s in docs]
    assert run.empty_queries == ("q6",)
    assert run.query_texts == QUERIES
    assert list(run.latency_ms) == list(QUERIES)
    assert all(0 < ms < 5_000 for ms in run.latency_ms.values())
    ours = ragreport.evaluate(QRELS, run, MEASURES)
    # the TREC file has no line for q6 (nothing retrieved): evaluate it as a qrels query
    theirs = ragreport.evaluate(QRELS, trec_file(tmp_path, want), MEASURES, complete=True)
    assert_same_numbers(ours, theirs)
    assert ours.latency_ms == run.latency_ms
    assert theirs.latency_ms == {}


def test_llamaindex_retriever(tmp_path: Path) -> None:
    retriever = KeywordLlamaIndex()
    run = collect_run(retriever, QUERIES, id_key="doc_id")
    assert run.name == "KeywordLlamaIndex"
    assert run.has_scores
    want = expected_ranked()
    assert run.doc_ids.to_pylist() == [d for docs in want.values() for d, _ in docs]
    assert run.scores.tolist() == [s for docs in want.values() for _, s in docs]
    ours = ragreport.evaluate(QRELS, run, MEASURES)
    theirs = ragreport.evaluate(QRELS, trec_file(tmp_path, want), MEASURES, complete=True)
    assert_same_numbers(ours, theirs)
    # without id_key: the node ids
    by_node = collect_run(retriever, QUERIES, name="nodes")
    assert by_node.doc_ids.to_pylist() == [f"chunk-{d}" for docs in want.values()
                                           for d, _ in docs]


def test_llamaindex_missing_id_key_names_query_key_and_keys() -> None:
    with pytest.raises(RagReportError) as err:
        collect_run(KeywordLlamaIndex(), QUERIES, id_key="document_id")
    text = str(err.value)
    assert "query 'q1', result 1" in text
    assert "'document_id'" in text
    assert "'doc_id', 'lang'" in text
    assert "id_key=" in text


def test_langchain_retriever(tmp_path: Path) -> None:
    retriever = KeywordLangChain()
    run = collect_run(retriever, QUERIES, id_key="doc_id", k=3)
    assert run.name == "KeywordLangChain"
    assert not run.has_scores  # a Document has no score: the returned order, n..1
    want = expected_ranked(3)
    assert run.doc_ids.to_pylist() == [d for docs in want.values() for d, _ in docs]
    assert run.scores.tolist() == [float(len(docs) - i) for docs in want.values()
                                   for i in range(len(docs))]
    ours = ragreport.evaluate(QRELS, run, MEASURES)
    theirs = ragreport.evaluate(QRELS, trec_file(tmp_path, want), MEASURES, complete=True)
    assert_same_numbers(ours, theirs)
    by_id = collect_run(retriever, QUERIES, k=3)  # Document.id
    assert by_id.doc_ids.to_pylist() == [f"lc-{d}" for docs in want.values() for d, _ in docs]


def test_langchain_errors() -> None:
    with pytest.raises(RagReportError, match=r"query 'q1', result 1: metadata has no key "
                                             r"'docid' \(its keys: 'doc_id', 'source'\)"):
        collect_run(KeywordLangChain(), QUERIES, id_key="docid")
    with pytest.raises(RagReportError, match=r"query 'q1', result 1: the Document has no id; "
                                             r"pass id_key="):
        collect_run(KeywordLangChain(with_ids=False), QUERIES)


def test_k_keeps_the_first_results() -> None:
    run = collect_run(keyword_search, QUERIES, k=1)
    want = expected_ranked(1)
    assert run.doc_ids.to_pylist() == [d for docs in want.values() for d, _ in docs]


def test_results_of_every_form() -> None:
    doc = Document(page_content="x", metadata={"doc_id": "d9"})
    node = TextNode(id_="n9", text="x", metadata={"doc_id": "d8"})
    forms: dict[str, Any] = {
        "ids": ["a", "b", 3],
        "pairs": [("a", 2.0), ("b", np.float32(1.5))],
        "map": {"a": 2.0, "b": 1.0},
        "dicts": [{"id": "a", "score": 1.0}, {"_id": "b", "score": 0.5}],
        "lc-with-score": [(doc, 0.9)],
        "node-with-score": [NodeWithScore(node=node, score=None)],
        "generator": (d for d in ["a"]),
    }
    got = {q: collect_run(lambda _t, v=v: v, {"q": "x"}, id_key="doc_id"
                          if q in ("lc-with-score", "node-with-score") else None)
           for q, v in forms.items()}
    assert got["ids"].doc_ids.to_pylist() == ["a", "b", "3"]
    assert got["ids"].scores.tolist() == [3.0, 2.0, 1.0] and not got["ids"].has_scores
    assert got["pairs"].scores.tolist() == [2.0, 1.5] and got["pairs"].has_scores
    assert got["map"].doc_ids.to_pylist() == ["a", "b"]
    assert got["dicts"].doc_ids.to_pylist() == ["a", "b"]
    assert got["lc-with-score"].doc_ids.to_pylist() == ["d9"]
    assert got["lc-with-score"].scores.tolist() == [0.9]
    assert got["node-with-score"].doc_ids.to_pylist() == ["d8"]
    assert not got["node-with-score"].has_scores
    assert got["generator"].doc_ids.to_pylist() == ["a"]
    assert got["ids"].name == "run"  # a lambda has no usable name


def test_queries_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "queries.tsv"
    path.write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()), encoding="utf-8")
    run = collect_run(keyword_search, path)
    assert run.query_texts == QUERIES


# ---- concurrency --------------------------------------------------------------------------------


def test_concurrency_keeps_query_order() -> None:
    order = list(QUERIES)
    finished: list[str] = []
    lock = threading.Lock()
    active = [0, 0]  # now, most at once

    def slow(text: str) -> list[tuple[str, float]]:
        qid = next(q for q, t in QUERIES.items() if t == text)
        with lock:
            active[0] += 1
            active[1] = max(active)
        # the first query ends last, by a margin no loaded machine's scheduling undoes
        time.sleep(0.8 if qid == order[0] else 0.02)
        with lock:
            active[0] -= 1
            finished.append(qid)
        return keyword_search(text)

    run = collect_run(slow, QUERIES, max_concurrency=len(QUERIES))
    assert active[1] > 1  # calls really overlapped
    assert finished != order  # they finished out of order...
    want = expected_ranked()  # ...and the run is in the queries' order all the same
    assert run.query_ids.to_pylist() == [q for q, docs in want.items() for _ in docs]
    assert run.doc_ids.to_pylist() == [d for docs in want.values() for d, _ in docs]
    assert list(run.latency_ms) == order
    # each latency is its own call's time: the first query slept longest
    assert run.latency_ms["q1"] > run.latency_ms["q6"]
    assert run.latency_ms["q1"] >= 800 * 0.9


# ---- errors ------------------------------------------------------------------------------------


def failing_on(bad: str, calls: list[str] | None = None) -> Any:
    def search(text: str) -> list[tuple[str, float]]:
        qid = next(q for q, t in QUERIES.items() if t == text)
        if calls is not None:
            calls.append(qid)
        if qid == bad:
            raise ValueError(f"index offline for {text!r}")
        return keyword_search(text)
    return search


@pytest.mark.parametrize("workers", [1, 3])
def test_retriever_error_names_the_query(workers: int) -> None:
    with pytest.raises(RagReportError) as err:
        collect_run(failing_on("q3"), QUERIES, max_concurrency=workers)
    text = str(err.value)
    assert "the retriever raised ValueError on query 'q3': index offline" in text
    assert "resume=PATH" in text
    assert isinstance(err.value.__cause__, ValueError)


HOSTILE: list[tuple[str, Any, dict[str, Any], type[Exception], str]] = [
    ("returns-none", lambda t: None, {}, RagReportError,
     r"returned None for query 'q1'; it must return a list"),
    ("returns-text", lambda t: "d1 d2", {}, RagReportError, r"returned a str .* query 'q1'"),
    ("returns-set", lambda t: {"d1", "d2"}, {}, RagReportError, r"a set for query 'q1', whose "
     r"order is undefined"),
    ("returns-int", lambda t: 3, {}, RagReportError, r"returned a int \(3\) for query 'q1'"),
    ("float-id", lambda t: [1.5], {}, RagReportError, r"query 'q1', result 1 is a float"),
    ("none-id", lambda t: [(None, 1.0)], {}, RagReportError,
     r"query 'q1', result 1 is None"),
    ("blank-id", lambda t: ["d1", " "], {}, RagReportError,
     r"query 'q1', result 2: the document id is empty"),
    ("nan-score", lambda t: [("d1", float("nan"))], {}, RagReportError,
     r"query 'q1', result 1: score nan is not a finite number"),
    ("text-score", lambda t: [("d1", "high")], {}, RagReportError,
     r"query 'q1', result 1: score 'high' is not a number"),
    ("bool-score", lambda t: [("d1", True)], {}, RagReportError,
     r"score True is not a number \(a boolean\)"),
    ("mixed-scores", lambda t: [("d1", 1.0), "d2"], {}, RagReportError,
     r"query 'q1': result 2 has no score and result 1 has one"),
    ("dict-without-id", lambda t: [{"text": "x", "score": 1}], {}, RagReportError,
     r"query 'q1', result 1: no 'id' field \(fields: 'text', 'score'\)"),
    ("not-callable", 42, {}, ConfigError, r"cannot call a int as a retriever"),
    ("k-zero", keyword_search, {"k": 0}, ConfigError, r"k must be a whole number >= 1"),
    ("k-bool", keyword_search, {"k": True}, ConfigError, r"k must be a whole number"),
    ("workers-zero", keyword_search, {"max_concurrency": 0}, ConfigError,
     r"max_concurrency must be a whole number from 1 to 256, got 0"),
    ("workers-huge", keyword_search, {"max_concurrency": 10**6}, ConfigError,
     r"max_concurrency must be"),
    ("progress-text", keyword_search, {"progress": "yes"}, ConfigError,
     r"progress must be True, False or None"),
    ("id-key-empty", keyword_search, {"id_key": ""}, ConfigError, r"id_key must be"),
    ("name-blank", keyword_search, {"name": " "}, ConfigError, r"name must be a non-empty"),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_retrievers(case: tuple[str, Any, dict[str, Any], type[Exception], str]
                            ) -> None:
    _, retriever, kwargs, error, pattern = case
    with pytest.raises(error, match=pattern):
        collect_run(retriever, {"q1": "x"}, **kwargs)


@pytest.mark.parametrize(("queries", "pattern"), [
    ({}, r"queries: no queries to collect"),
    ({"q1": 5}, r"the text of query 'q1' must be a string, got int"),
    ({1: "a", "1": "b"}, r"two query ids read the same"),
    ({None: "a"}, r"a query id must be a non-empty string or an integer, got None"),
    (["what is a list"], r"queries must be a path or a dict, got list"),
])
def test_hostile_queries(queries: Any, pattern: str) -> None:
    with pytest.raises(InputError, match=pattern):
        collect_run(keyword_search, queries)


# ---- resume -------------------------------------------------------------------------------------


def records(path: Path) -> list[dict[str, Any]]:
    """The records of a resume file (its lines after the header)."""
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# ragreport resume file {")
    return [json.loads(line) for line in lines[1:]]


def test_resume_after_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "collect.jsonl"
    calls: list[str] = []
    with pytest.raises(RagReportError, match=r"query 'q4'.*collect\.jsonl.*same resume="):
        collect_run(failing_on("q4", calls), QUERIES, resume=path)
    assert calls == ["q1", "q2", "q3", "q4"]
    first = records(path)
    assert [r["query_id"] for r in first] == ["q1", "q2", "q3"]
    # a crash in the middle of a write leaves an unfinished line
    with path.open("a", encoding="ascii") as fh:
        fh.write('{"query_id": "q4", "query": "stock markets", "retr')
    calls.clear()
    run = collect_run(failing_on("none", calls), QUERIES, resume=path)
    assert calls == ["q4", "q5", "q6"]  # q1-q3 were not called again
    fresh = collect_run(keyword_search, QUERIES)
    assert run.query_ids.to_pylist() == fresh.query_ids.to_pylist()
    assert run.doc_ids.to_pylist() == fresh.doc_ids.to_pylist()
    assert run.scores.tolist() == fresh.scores.tolist()
    assert run.empty_queries == fresh.empty_queries == ("q6",)
    assert list(run.latency_ms) == list(QUERIES)
    for rec in first:  # read back, not measured again
        assert run.latency_ms[rec["query_id"]] == rec["latency_ms"]
    assert [r["query_id"] for r in records(path)] == list(QUERIES)  # tail replaced
    # the file is a run: the same numbers and the latency
    loaded = ragreport.load_run(path)
    assert loaded.latency_ms == run.latency_ms
    assert_same_numbers(ragreport.evaluate(QRELS, loaded, MEASURES),
                        ragreport.evaluate(QRELS, run, MEASURES))
    # everything is collected: a third call calls nothing
    calls.clear()
    again = collect_run(failing_on("none", calls), QUERIES, resume=path)
    assert calls == []
    assert again.latency_ms == run.latency_ms


def test_resume_file_of_another_run_is_refused(tmp_path: Path) -> None:
    """Resuming with another retriever must not take the first one's rankings as its own."""
    path = tmp_path / "r.jsonl"
    first = collect_run(keyword_search, QUERIES, resume=path)
    header, *lines = path.read_text().splitlines()
    assert json.loads(header.removeprefix("# ragreport resume file ")) == {
        "run": "keyword_search", "k": None, "id_key": None}
    assert {json.loads(line)["run"] for line in lines} == {"keyword_search"}
    before = path.read_bytes()

    def dense(text: str) -> list[str]:
        raise AssertionError("not called: refused before any call")

    with pytest.raises(InputError, match=r"r\.jsonl:1: this resume file holds the run "
                                         r"'keyword_search', not 'dense'"):
        collect_run(dense, QUERIES, resume=path)
    assert path.read_bytes() == before
    # the same name (given) resumes; under the header, a line without "run" is read
    again = collect_run(dense, QUERIES, resume=path, name="keyword_search")
    assert again.doc_ids.to_pylist() == first.doc_ids.to_pylist()
    bare = "".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "run"}) +
                   "\n" for line in lines)
    path.write_text(header + "\n" + bare)
    assert collect_run(dense, QUERIES, resume=path, name="keyword_search").doc_ids.to_pylist() \
        == first.doc_ids.to_pylist()
    # without the header (a file of an older collect_run, or write_run's): no identity
    path.write_text(bare)
    with pytest.raises(InputError, match=r"r\.jsonl:1: not a resume file of collect_run: its "
                                         r"first line is a run record, not the header"):
        collect_run(dense, QUERIES, resume=path, name="keyword_search")
    assert path.read_text() == bare


def test_resume_refuses_other_settings(tmp_path: Path) -> None:
    """A file collected with k=2 never resumes a collection with k=3 (or all results): the
    run would mix two depths; nor one with another id_key (other document ids)."""
    path = tmp_path / "r.jsonl"
    collect_run(KeywordLangChain(), {"q1": QUERIES["q1"]}, id_key="doc_id", k=2, resume=path)
    before = path.read_bytes()
    for kwargs, message in [({"k": 3, "id_key": "doc_id"}, r"k=2, not k=3"),
                            ({"id_key": "doc_id"}, r"k=2, not k=None \(every result\)"),
                            ({"k": 2}, r"id_key='doc_id', not id_key=None"),
                            ({"k": 1, "id_key": "doc_id"}, r"k=2, not k=1")]:
        with pytest.raises(InputError, match=r"r\.jsonl:1: this resume file was collected "
                                             r"with " + message):
            collect_run(KeywordLangChain(), QUERIES, resume=path, **kwargs)
        assert path.read_bytes() == before
    run = collect_run(KeywordLangChain(), QUERIES, id_key="doc_id", k=2, resume=path)
    assert max(run.query_ids.value_counts().field("counts").to_pylist()) == 2
    assert path.read_bytes().startswith(before)


def test_resume_with_concurrency_keeps_the_finished_calls(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"

    others_done = threading.Semaphore(0)

    def search(text: str) -> list[tuple[str, float]]:
        if text == QUERIES["q1"]:
            for _ in range(len(QUERIES) - 1):  # the others finish first
                assert others_done.acquire(timeout=30)
            raise ConnectionError("timeout")
        try:
            return keyword_search(text)
        finally:
            others_done.release()

    with pytest.raises(RagReportError, match="ConnectionError on query 'q1'"):
        collect_run(search, QUERIES, resume=path, max_concurrency=len(QUERIES))
    saved = {r["query_id"] for r in records(path)}
    assert saved == set(QUERIES) - {"q1"}
    calls: list[str] = []
    run = collect_run(failing_on("none", calls), QUERIES, resume=path, max_concurrency=2)
    assert calls == ["q1"]
    assert run.query_ids.to_pylist()[0] == "q1"


def test_resume_file_without_scores_and_a_subset(tmp_path: Path) -> None:
    path = tmp_path / "lc.jsonl"
    first = collect_run(KeywordLangChain(), {"q1": QUERIES["q1"]}, id_key="doc_id",
                        resume=path)
    assert records(path)[0]["retrieved"] == first.doc_ids.to_pylist()
    run = collect_run(KeywordLangChain(), QUERIES, id_key="doc_id", resume=path)
    assert not run.has_scores
    fresh = collect_run(KeywordLangChain(), QUERIES, id_key="doc_id")
    assert run.doc_ids.to_pylist() == fresh.doc_ids.to_pylist()
    assert run.scores.tolist() == fresh.scores.tolist()
    # a file holding more queries than asked: only those asked come back
    sub = collect_run(failing_on("q2"), {"q2": QUERIES["q2"]}, resume=path,
                      name="KeywordLangChain", id_key="doc_id")  # the run the file holds
    assert sub.query_ids.to_pylist() == ["q2"] * len(keyword_search(QUERIES["q2"]))


def test_resume_refuses_other_texts_and_broken_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    collect_run(keyword_search, {"q1": QUERIES["q1"], "q2": QUERIES["q2"]}, resume=path)
    with pytest.raises(InputError, match=r"r\.jsonl:3: query 'q2' was collected with another "
                                         r"text"):
        collect_run(keyword_search, {"q1": QUERIES["q1"], "q2": "changed"}, resume=path)
    header = path.read_text().splitlines()[0]
    path.write_text(path.read_text() + "not json\n")
    with pytest.raises(InputError, match=r"r\.jsonl:4: invalid JSON"):
        collect_run(keyword_search, QUERIES, resume=path)
    path.write_text(header + '\n{"query_id": "q1", "query": "cat on a mat", "latency_ms": -2, '
                    '"retrieved": []}\n')
    with pytest.raises(InputError, match=r"r\.jsonl:2: latency_ms -2 of query 'q1' is "
                                         r"negative"):
        collect_run(keyword_search, QUERIES, resume=path)


# ---- progress -----------------------------------------------------------------------------------


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    collect_run(keyword_search, QUERIES, progress=True, name="bar-run")
    err = capsys.readouterr().err
    assert "bar-run" in err and f"{len(QUERIES)}/{len(QUERIES)}" in err
    collect_run(keyword_search, QUERIES, progress=False)
    collect_run(keyword_search, QUERIES)  # auto: a short collection shows nothing
    assert capsys.readouterr().err == ""


def test_progress_without_tqdm(monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails
    with pytest.raises(ConfigError, match=r"progress=True needs tqdm: pip install tqdm"):
        collect_run(keyword_search, QUERIES, progress=True)
    run = collect_run(keyword_search, QUERIES)  # auto: nothing, no error
    assert len(run.latency_ms) == len(QUERIES)
    assert capsys.readouterr().err == ""


# ---- latency everywhere --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> list[ragreport.EvaluationResult]:
    tmp = tmp_path_factory.mktemp("runs")

    def timed(text: str) -> list[tuple[str, float]]:
        time.sleep(0.002)
        return keyword_search(text)

    collected = ragreport.evaluate(QRELS, collect_run(timed, QUERIES, name="live <b>"),
                                   MEASURES)
    from_file = ragreport.evaluate(QRELS, trec_file(tmp, expected_ranked()), MEASURES,
                                   complete=True, name="file")
    return [collected, from_file]


def test_latency_in_every_report_output(two_runs: list[ragreport.EvaluationResult]) -> None:
    from ragreport.analysis.latency import latency_summary

    rep = build_report(two_runs, generated_at="2026-01-01T00:00:00Z", stats=False)
    s = latency_summary(two_runs[0].latency_ms)
    assert s is not None and s.queries == len(QUERIES)
    times = sorted(two_runs[0].latency_ms.values())
    assert s.max_ms == times[-1] and s.p50_ms == (times[2] + times[3]) / 2
    assert s.p50_ms >= 2.0  # each call slept 2 ms
    assert [t.run for t in rep.latency] == ["live <b>"]
    shown = rep.latency[0].texts

    doc = json.loads(rep.to_json())
    assert doc["latency"] == {"live <b>": {"queries": 6, "p50_ms": s.p50_ms,
                                           "p95_ms": s.p95_ms, "max_ms": s.max_ms,
                                           "shown": list(shown)}}
    md = rep.to_markdown()
    assert "| Latency (ms) | live &lt;b&gt; | file |" in md
    assert f"| p50 | {shown[0]} | – |" in md and f"| max | {shown[2]} | – |" in md
    assert md.index("| Latency (ms)") > md.index("### Summary")
    html = rep.to_html()
    assert 'id="latency"' in html and "live &lt;b&gt;" in html and "live <b>" not in html
    assert f'<th scope="row">p95</th><td class="num">{shown[1]}</td><td class="num">–</td>' \
        in html
    text = render_terminal(rep)
    assert "Latency per query (ms)" in text
    assert any(line.split()[:2] == ["p50", shown[0]] for line in text.splitlines())


def test_no_latency_no_new_output(two_runs: list[ragreport.EvaluationResult]) -> None:
    rep = build_report(two_runs[1:], generated_at="2026-01-01T00:00:00Z", stats=False)
    assert rep.latency == []
    assert "latency" not in json.loads(rep.to_json())
    assert "Latency" not in rep.to_markdown()
    assert 'id="latency"' not in rep.to_html()
    assert "Latency" not in render_terminal(rep)


def test_explorer_takes_a_collected_run(two_runs: list[ragreport.EvaluationResult]) -> None:
    from ragreport.explorer.state import ExplorerState

    state = ExplorerState(two_runs, queries=QUERIES)
    assert state.results[0].latency_ms == two_runs[0].latency_ms
    assert state.summary(force=True)
    state.select_query("q3")
    assert state.selected == "q3"


def test_latency_survives_jsonl_and_cli(tmp_path: Path) -> None:
    """A run written as JSONL (the resume file's format) keeps its latency through the CLI."""
    path = tmp_path / "live.jsonl"
    collect_run(keyword_search, QUERIES, resume=path)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items()
                             for d, g in docs.items()), encoding="utf-8")
    from ragreport.cli.app import main

    out = tmp_path / "r.json"
    assert main(["report", str(qrels), str(path), "--no-stats", "--json", str(out),
                 "--generated-at", "2026-01-01"]) == 0
    doc = json.loads(out.read_text())
    assert doc["latency"]["live"]["queries"] == len(QUERIES)


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's "Measure a retriever directly" example, as written, twice (resumed)."""
    import re

    readme = user_docs()
    section = readme[readme.index("## Measure a retriever directly"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    monkeypatch.chdir(tmp_path)
    scope: dict[str, Any] = {}
    exec(compile(code.group(1), "README.md", "exec"), scope)
    result = scope["result"]
    assert len(result.latency_ms) == 41 and result.n_queries == 41
    assert "| Latency (ms) | search |" in (tmp_path / "search.md").read_text("utf-8")
    lines = (tmp_path / "search.jsonl").read_text().splitlines()
    assert len(lines) == 1 + 41  # the header, then one line per query
    again = collect_run(scope["search"], scope["files"].queries, resume="search.jsonl")
    assert again.latency_ms == result.latency_ms  # resumed: read back, nothing called
    assert (tmp_path / "search.jsonl").read_text().splitlines() == lines


def test_framework_imports_do_not_touch_the_network() -> None:
    """Importing llama-index-core and langchain-core and retrieving with them opens no
    connection (sockets refused before the first import, in a fresh interpreter)."""
    import subprocess

    code = """
import socket
def refuse(*a, **k):
    raise SystemExit(f"network access attempted: {a!r}")
socket.socket.connect = refuse
socket.create_connection = refuse
import llama_index.core
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, TextNode
import langchain_core.retrievers
import ragreport

class R(BaseRetriever):
    def _retrieve(self, qb):
        return [NodeWithScore(node=TextNode(id_="n", text="x", metadata={"doc_id": "d"}),
                              score=1.0)]

run = ragreport.collect_run(R(), {"q": "x"}, id_key="doc_id", progress=False)
print(run.doc_ids.to_pylist())
"""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROXY")
           and not k.endswith("_proxy")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['d']"


def test_resume_file_that_cannot_be_written(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing/r\.jsonl: cannot write the resume file: "
                                         r"No such file or directory"):
        collect_run(keyword_search, QUERIES, resume=tmp_path / "missing" / "r.jsonl")
    with pytest.raises(InputError, match=r"resume= names a directory, not a resume file"):
        collect_run(keyword_search, QUERIES, resume=tmp_path)


# ---- writing a run -------------------------------------------------------------------------------


@pytest.mark.parametrize("retriever", ["callable", "langchain"])
def test_write_run_round_trips(tmp_path: Path, retriever: str) -> None:
    run = collect_run(keyword_search, QUERIES) if retriever == "callable" else \
        collect_run(KeywordLangChain(), QUERIES, id_key="doc_id")
    back = ragreport.load_run(ragreport.write_run(run, tmp_path / "run.jsonl"))
    assert back.query_ids.to_pylist() == run.query_ids.to_pylist()
    assert back.doc_ids.to_pylist() == run.doc_ids.to_pylist()
    assert back.scores.tolist() == run.scores.tolist()
    assert back.has_scores == run.has_scores
    assert back.empty_queries == run.empty_queries == ("q6",)
    assert back.query_texts == run.query_texts == QUERIES
    assert back.latency_ms == run.latency_ms
    trec = ragreport.write_run(run, tmp_path / "run.txt", format="trec")
    first = trec.read_text().splitlines()[0].split()
    assert first[:4] == ["q1", "Q0", run.doc_ids[0].as_py(), "1"]
    assert first[5] == run.name
    assert ragreport.load_run(trec).latency_ms == {}  # TREC has no place for it
    assert_same_numbers(ragreport.evaluate(QRELS, run, MEASURES),
                        ragreport.evaluate(QRELS, trec, MEASURES, complete=True))


def test_write_run_keeps_mixed_scores(tmp_path: Path) -> None:
    answers = {"a": [("d1", 1.0), ("d2", 1.0)], "b": ["d3", "d4"]}  # a tie, then no scores
    run = collect_run(lambda t: answers[t], {"qa": "a", "qb": "b"})
    assert not run.has_scores
    back = ragreport.load_run(ragreport.write_run(run, tmp_path / "r.jsonl"))
    assert back.scores.tolist() == run.scores.tolist() == [1.0, 1.0, 2.0, 1.0]


def test_write_run_errors(tmp_path: Path) -> None:
    run = collect_run(keyword_search, QUERIES, name="my run")
    with pytest.raises(ConfigError, match=r"the run name 'my run' cannot be a TREC tag"):
        ragreport.write_run(run, tmp_path / "r.txt", format="trec")
    with pytest.raises(ConfigError, match=r"format must be 'jsonl' or 'trec', got 'csv'"):
        ragreport.write_run(run, tmp_path / "r.csv", format="csv")
    with pytest.raises(ConfigError, match=r"write_run needs a Run, got dict"):
        ragreport.write_run({"q": ["a"]}, tmp_path / "r.jsonl")  # type: ignore[arg-type]
    with pytest.raises(RagReportError, match=r"missing"):
        ragreport.write_run(run, tmp_path / "missing" / "r.jsonl")
    assert not (tmp_path / "r.txt").exists()


def test_numpy_ids_and_scores() -> None:
    """A FAISS-style retriever returns numpy integers and floats: read as ids 7 and 12
    would be from Python ints; a numpy bool is not an id."""
    import numpy as np

    run = collect_run(lambda t: [(np.int64(7), np.float32(0.5)), (np.uint16(12), 0.25)],
                      {np.int64(1): "x"})
    assert run.query_ids.to_pylist() == ["1", "1"]
    assert run.doc_ids.to_pylist() == ["7", "12"] and run.scores.tolist() == [0.5, 0.25]
    with pytest.raises(RagReportError, match=r"result 1 is a bool \("):
        collect_run(lambda t: [np.bool_(True)], {"q1": "x"})


@pytest.mark.parametrize("name", ["queries.tsv", "queries.jsonl"])
def test_resume_file_cannot_be_the_queries_file(tmp_path: Path, name: str) -> None:
    queries = tmp_path / name
    queries.write_text('{"_id": "q1", "text": "cats"}\n' if name.endswith("l") else
                       "q1\tcats\n")
    before = queries.read_bytes()
    with pytest.raises(ConfigError, match=r"resume= names the queries file"):
        collect_run(lambda t: ["a"], str(queries), resume=queries)
    assert queries.read_bytes() == before


@pytest.mark.parametrize(("qid", "doc", "bad"), [("q1", "doc 1", "document"),
                                                 ("q 1", "d1", "query"),
                                                 ("q1", "a\nb", "document"),
                                                 ("q1", "a\tb", "document")])
def test_write_run_trec_refuses_white_space_in_ids(tmp_path: Path, qid: str, doc: str,
                                                   bad: str) -> None:
    """A TREC line splits on white space: 'q1 Q0 doc 1 1 2.0 run' would be read back as
    document 'doc' (wrong numbers, no error); refused, nothing written; JSONL keeps it."""
    run = collect_run(lambda t: [(doc, 2.0), ("d2", 1.0)], {qid: "text"}, name="r")
    with pytest.raises(ConfigError, match=rf"the {bad} id .* has white space"):
        ragreport.write_run(run, tmp_path / "r.txt", format="trec")
    assert not (tmp_path / "r.txt").exists()
    back = ragreport.load_run(ragreport.write_run(run, tmp_path / "r.jsonl"))
    assert back.doc_ids.to_pylist() == [doc, "d2"] and back.query_ids.to_pylist() == [qid] * 2


def test_chunks_of_one_document(tmp_path: Path) -> None:
    """Two chunks per document under one id_key: the document's id twice in a ranking, which
    evaluate refuses by default and keeps first with duplicates="first" (as documented)."""
    class Chunked(KeywordLlamaIndex):
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            out = []
            for d, s in keyword_search(query_bundle.query_str, self.k):
                for part in (1, 2):
                    node = TextNode(id_=f"{d}#{part}", text=CORPUS[d], metadata={"doc_id": d})
                    out.append(NodeWithScore(node=node, score=s - part / 1000))
            return out

    run = collect_run(Chunked(), QUERIES, id_key="doc_id")
    with pytest.raises(InputError, match=r"appears twice for query 'q1'; pass "
                                         r"duplicates='first'"):
        ragreport.evaluate(QRELS, run, MEASURES)
    ours = ragreport.evaluate(QRELS, run, MEASURES, duplicates="first")
    theirs = ragreport.evaluate(QRELS, trec_file(tmp_path, expected_ranked()), MEASURES,
                                complete=True)
    assert_same_numbers(ours, theirs)


def test_a_generator_is_timed_while_it_runs() -> None:
    def lazy(text: str) -> Any:
        for doc, score in keyword_search(text):
            time.sleep(0.005)
            yield doc, score
        if text == QUERIES["q2"]:
            raise RuntimeError("lost the connection half way")

    run = collect_run(lazy, {"q1": QUERIES["q1"]})
    n = len(keyword_search(QUERIES["q1"]))
    assert run.latency_ms["q1"] >= 5 * n * 0.9  # the sleeps happened inside the timed call
    with pytest.raises(RagReportError, match=r"raised RuntimeError on query 'q2': lost"):
        collect_run(lazy, QUERIES)
