"""Chunk -> document maps (ragreport.core.docmap): reader, collapse, both levels, redundancy."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import ragreport
from ragreport.core.docmap import DocMap, judgment_level, load_doc_map
from ragreport.errors import InputError
from ragreport.io import load_qrels

MEASURES = ["P@1", "P@2", "P@3", "R@2", "R@3", "nDCG@3", "nDCG", "RR", "AP", "HitRate@2",
            "Rprec"]

# chunks c1..c5 of documents A, B, C; the run ranks c1 (A), c2 (B), c3 (A), c4 (C), c5 (B)
MAP = {"c1": "A", "c2": "B", "c3": "A", "c4": "C", "c5": "B"}
RUN = {"q": {"c1": 5.0, "c2": 4.0, "c3": 3.0, "c4": 2.0, "c5": 1.0}}


def test_hand_derived_document_level() -> None:
    # chunk judgments: c3 (of A) grade 2, c4 (of C) grade 1; B's chunks unjudged
    r = ragreport.evaluate({"q": {"c3": 2, "c4": 1, "c2": 0}}, RUN, MEASURES, doc_map=MAP)
    d = r.document
    assert d is not None
    # document ranking A, B, C with grades 2 (best of A's chunks), 0, 1
    assert [x.doc_id for x in d.ranked_list("q")] == ["A", "B", "C"]
    assert [x.grade for x in d.ranked_list("q")] == [2.0, 0.0, 1.0]
    assert [x.score for x in d.ranked_list("q")] == [5.0, 4.0, 2.0]  # best chunk's score
    m = d.means()
    assert m["P@1"] == 1.0 and m["P@2"] == 0.5 and m["P@3"] == pytest.approx(2 / 3)
    assert m["R@2"] == 0.5 and m["R@3"] == 1.0
    assert m["RR"] == 1.0
    assert m["AP"] == pytest.approx((1 + 2 / 3) / 2)
    idcg = 2 + 1 / np.log2(3)
    assert m["nDCG@3"] == pytest.approx((2 + 1 / np.log2(4)) / idcg)
    # chunk level: c3 at rank 3 and c4 at rank 4 are the relevant chunks
    c = r.means()
    assert c["P@3"] == pytest.approx(1 / 3) and c["RR"] == pytest.approx(1 / 3)
    assert c["R@3"] == 0.5
    # redundancy: c3 (A again) at rank 3 and c5 (B again) at rank 5
    assert r.redundancy is not None
    assert r.redundancy[0, :6].tolist() == [0, 0, 1, 1, 2, 2]
    info = r.doc_map_info
    assert info is not None and info.judgment_level == "chunk"
    assert (info.chunks, info.documents, info.chunks_collapsed) == (5, 3, 2)
    assert "best chunk" in r.conventions.describe()["doc map"]


def test_document_judgments_apply_to_every_chunk() -> None:
    doc_q = {"q": {"A": 2, "C": 1, "B": 0}}
    r = ragreport.evaluate(doc_q, RUN, MEASURES, doc_map=MAP)
    assert r.doc_map_info is not None and r.doc_map_info.judgment_level == "document"
    # chunk level: each chunk takes its document's grade (c1, c3 -> 2; c4 -> 1; c2, c5 -> 0)
    by_hand = {"q": {"c1": 2, "c3": 2, "c4": 1, "c2": 0, "c5": 0}}
    plain = ragreport.evaluate(by_hand, RUN, MEASURES)
    assert r.means() == plain.means()
    assert [x.grade for x in r.ranked_list("q")] == [2.0, 0.0, 2.0, 1.0, 0.0]
    # document level: the same as with chunk judgments whose best grades are those
    assert r.document is not None
    chunk_q = ragreport.evaluate({"q": {"c3": 2, "c1": 1, "c4": 1, "c5": 0}}, RUN, MEASURES,
                                 doc_map=MAP)
    assert chunk_q.document is not None
    assert r.document.means() == chunk_q.document.means()


def _collapse_by_hand(run: dict[str, dict[str, float]], dmap: dict[str, str]
                      ) -> dict[str, list[tuple[str, float]]]:
    out = {}
    for q, docs in run.items():
        # trec_eval's order: score descending, ties by id descending
        ranked = sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        seen: dict[str, float] = {}
        for chunk, score in ranked:
            seen.setdefault(dmap[chunk], score)
        out[q] = list(seen.items())
    return out


def _random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]],
                                      dict[str, str]]:
    rng = np.random.default_rng(seed)
    dmap = {f"c{i}": f"d{rng.integers(0, 25)}" for i in range(80)}
    chunks = list(dmap)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(12):
        picked = rng.choice(chunks, size=int(rng.integers(1, 30)), replace=False)
        # quantised scores: ties occur, also between chunks of different documents
        run[f"q{q}"] = {str(c): float(rng.integers(0, 6)) / 2 for c in picked}
        judged = rng.choice(chunks, size=int(rng.integers(1, 15)), replace=False)
        qrels[f"q{q}"] = {str(c): int(rng.integers(0, 4)) for c in judged}
    return qrels, run, dmap


@pytest.mark.parametrize("seed", range(6))
def test_equals_evaluating_the_collapsed_run_by_hand(seed: int) -> None:
    qrels, run, dmap = _random_case(seed)
    r = ragreport.evaluate(qrels, run, MEASURES, doc_map=dmap)
    assert r.document is not None
    collapsed = _collapse_by_hand(run, dmap)
    doc_qrels: dict[str, dict[str, int]] = {}
    for q, js in qrels.items():
        for c, g in js.items():
            d = dmap[c]
            doc_qrels.setdefault(q, {})[d] = max(g, doc_qrels.get(q, {}).get(d, -10**9))
    # the collapsed lists in their order, as ranked lists without scores
    by_hand = ragreport.evaluate(doc_qrels, {q: [d for d, _ in ds] for q, ds in
                                             collapsed.items()}, MEASURES, order="given")
    assert r.document.query_ids == by_hand.query_ids
    for m in MEASURES:
        np.testing.assert_array_equal(r.document.values(m), by_hand.values(m), err_msg=m)
    for fam in ("P", "R", "nDCG", "AP"):
        np.testing.assert_array_equal(r.document.curve(fam), by_hand.curve(fam))
    # redundancy: chunks ranked below another chunk of their document, by hand
    assert r.redundancy is not None
    for i, q in enumerate(r.query_ids):
        ranked = [x.doc_id for x in r.ranked_list(q)]
        seen: set[str] = set()
        rep = []
        for c in ranked:
            rep.append(dmap[c] in seen)
            seen.add(dmap[c])
        want = np.cumsum(rep + [False] * (r.k_max - len(rep)))[:r.k_max]
        assert r.redundancy[i].tolist() == want.tolist()


@pytest.mark.parametrize("seed", range(3))
def test_document_level_agrees_with_pytrec_eval(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run, dmap = _random_case(seed + 100)
    r = ragreport.evaluate(qrels, run, ["P@5", "recall@10", "ndcg_cut_10", "map", "recip_rank",
                                        "Rprec", "nDCG"], doc_map=dmap)
    assert r.document is not None
    collapsed = _collapse_by_hand(run, dmap)
    doc_qrels: dict[str, dict[str, int]] = {}
    for q, js in qrels.items():
        for c, g in js.items():
            d = dmap[c]
            doc_qrels.setdefault(q, {})[d] = max(g, doc_qrels.get(q, {}).get(d, -1))
    # strictly decreasing scores: pytrec_eval keeps the collapsed order
    doc_run = {q: {d: float(len(ds) - i) for i, (d, _) in enumerate(ds)}
               for q, ds in collapsed.items()}
    ev = pytrec_eval.RelevanceEvaluator(doc_qrels, {"P.5", "recall.10", "ndcg_cut.10", "map",
                                                    "recip_rank", "Rprec", "ndcg"})
    got = ev.evaluate(doc_run)
    names = {"P@5": "P_5", "R@10": "recall_10", "nDCG@10": "ndcg_cut_10", "AP": "map",
             "RR": "recip_rank", "Rprec": "Rprec", "nDCG": "ndcg"}
    for m, t in names.items():
        mine = r.document.per_query(m)
        for q, v in mine.items():
            assert v == pytest.approx(got[q][t], abs=1e-12), (m, q)


def test_mixed_and_unknown_judgments() -> None:
    dm = load_doc_map(MAP)
    with pytest.raises(InputError, match=r"mix chunk ids .*'c1'.*document ids .*'B'"):
        judgment_level(load_qrels({"q": {"c1": 1, "B": 1}}), dm)
    with pytest.raises(InputError, match=r"neither a chunk nor a document id.*--doc-map-unm"):
        ragreport.evaluate({"q": {"c1": 1, "zz": 1}}, RUN, ["P@1"], doc_map=MAP)
    with pytest.raises(InputError, match="no judged id is a chunk or a document id"):
        ragreport.evaluate({"q": {"zz": 1}}, RUN, ["P@1"], doc_map=MAP)
    # "own": the unknown judged id is a document of its own, and counted
    r = ragreport.evaluate({"q": {"c1": 1, "zz": 1}}, RUN, ["R@5"],
                           doc_map=load_doc_map(MAP, unmapped="own"))
    assert r.doc_map_info is not None and r.doc_map_info.unmapped_judged == 1
    assert r.document is not None and r.document.means()["R@5"] == 0.5


def test_chunk_missing_from_the_map(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q Q0 c1 1 3 t\nq Q0 c9 2 2 t\nq Q0 c2 3 1 t\n")
    with pytest.raises(InputError, match=r"run.txt:2: chunk 'c9' is not in the doc map"):
        ragreport.evaluate({"q": {"c1": 1}}, run, ["P@1"], doc_map=MAP)
    r = ragreport.evaluate({"q": {"c1": 1}}, run, ["P@3"],
                           doc_map=load_doc_map(MAP, unmapped="own"))
    assert r.document is not None
    assert [x.doc_id for x in r.document.ranked_list("q")] == ["A", "c9", "B"]
    assert r.doc_map_info is not None and r.doc_map_info.unmapped_retrieved == 1


def test_max_depth_and_complete_apply_at_chunk_level() -> None:
    r = ragreport.evaluate({"q": {"c4": 1}, "q2": {"c1": 1}}, RUN, ["P@3", "R@3"],
                           doc_map=MAP, max_depth=3, complete=True)
    assert r.document is not None
    # the chunk ranking cut at 3 (c1, c2, c3) holds documents A and B only
    assert [x.doc_id for x in r.document.ranked_list("q")] == ["A", "B"]
    assert r.document.query_ids == r.query_ids == ["q", "q2"]
    assert r.document.values("R@3").tolist() == [0.0, 0.0]


# ---- reader --------------------------------------------------------------------------------

def _same(dm: DocMap, want: dict[str, str]) -> None:
    assert dict(zip(dm.chunk_ids.to_pylist(), dm.doc_ids.to_pylist(), strict=True)) == want


def test_reads_tsv_jsonl_gzip_bom(tmp_path: Path) -> None:
    want = {"c1": "A", "c2": "B", "c3": "A"}
    p = tmp_path / "map.tsv"
    p.write_text("chunk_id\tdoc_id\nc1\tA\nc2\tB\n\n# note\nc3\tA\n")
    _same(load_doc_map(p), want)
    assert load_doc_map(p).lines is not None
    assert load_doc_map(p).lines.tolist() == [2, 3, 6]  # type: ignore[union-attr]
    fast = tmp_path / "fast.tsv"
    fast.write_bytes(b"\xef\xbb\xbfc1\tA\nc2\tB\nc3\tA\n")
    _same(load_doc_map(fast), want)
    gz = tmp_path / "map.tsv.gz"
    gz.write_bytes(gzip.compress(b"c1\tA\nc2\tB\nc3\tA\n"))
    _same(load_doc_map(gz), want)
    sp = tmp_path / "spaces.txt"
    sp.write_text("c1 A\nc2   B\r\nc3\tA\n")
    _same(load_doc_map(sp), want)
    js = tmp_path / "map.jsonl"
    js.write_text("\n".join(json.dumps(x) for x in [
        {"chunk_id": "c1", "doc_id": "A"}, {"_id": "c2", "document_id": "B"},
        {"id": "c3", "parent_id": "A"}]) + "\n")
    _same(load_doc_map(js), want)
    ints = tmp_path / "ints.jsonl"
    ints.write_text('{"chunk_id": 7, "doc_id": 1}\n')
    _same(load_doc_map(ints), {"7": "1"})


def test_repeated_chunk(tmp_path: Path) -> None:
    p = tmp_path / "m.tsv"
    p.write_text("c1\tA\nc2\tB\nc1\tA\n")
    _same(load_doc_map(p), {"c1": "A", "c2": "B"})
    p.write_text("c1\tA\nc2\tB\nc1\tC\n")
    with pytest.raises(InputError, match=r"m.tsv:3: chunk 'c1' is mapped to two documents: "
                                         r"'A' at line 1 and 'C'"):
        load_doc_map(p)


def test_fast_and_exact_readers_agree(tmp_path: Path) -> None:
    from ragreport.io import docmap

    rng = np.random.default_rng(3)
    rows = [(f"c{i}", f"d{rng.integers(0, 50)}") for i in range(500)]
    data = "".join(f"{c}\t{d}\n" for c, d in rows).encode()
    fast = docmap._fast_tsv(data, "x", "error")
    exact = docmap._from_tsv(data, "x", "error")
    assert fast is not None
    assert fast.chunk_ids.equals(exact.chunk_ids) and fast.doc_ids.equals(exact.doc_ids)
    assert fast.lines is not None and exact.lines is not None
    assert fast.lines.tolist() == exact.lines.tolist()


def test_mapping_input_errors() -> None:
    with pytest.raises(InputError, match="the doc map is empty"):
        load_doc_map({})
    with pytest.raises(InputError, match="chunk id must be a string or an integer"):
        load_doc_map({True: "A"})
    with pytest.raises(InputError, match="doc_map must be a path, a mapping"):
        load_doc_map(["c1", "A"])
    with pytest.raises(ValueError, match="unmapped must be one of"):
        load_doc_map(MAP, unmapped="skip")


# ---- reports ---------------------------------------------------------------------------------

def _report(target_level: str = "chunk", **kw: object) -> ragreport.report.Report:
    from ragreport.report import build_report
    from ragreport.targets import Target

    qrels = {"q": {"c3": 2, "c4": 1}, "q2": {"c2": 1}}
    run2 = {**RUN, "q2": {"c5": 2.0, "c1": 1.0, "c2": 0.5}}
    results = [ragreport.evaluate(qrels, run2, ["P@2", "RR"], doc_map=MAP, name="r1")]
    t = [Target(ragreport.measures.parse_measure("RR"), ">=", 0.9, "test")]
    return build_report(results, t, generated_at="2026-01-01T00:00:00Z", stats=False,
                        target_level=target_level, worst_measure="P@2", **kw)  # type: ignore[arg-type]


def test_report_holds_both_levels() -> None:
    rep = _report()
    doc = rep.document
    assert doc is not None and doc.target_level == "chunk"
    rr = next(r for r in doc.summary if r.measure == "RR")
    # q: c1 (A, unjudged), c2 (B), c3 (A, 2): chunk RR 1/3, document A first: 1
    # q2: c5 (B, judged c2 1), c1, c2: chunk RR 1/3; documents B, A: B relevant: 1
    assert rr.cells[0].chunk == pytest.approx(1 / 3) and rr.cells[0].document == 1.0
    assert not rep.targets[0].passed  # chunk level: 0.3333 < 0.9
    red = doc.runs[0]
    assert red.k == 2 and red.redundancy == 0.0  # no repeat within the top 2
    assert red.curve[:3] == [0.0, 0.0, 1.0]  # both queries repeat a document at rank 3
    qd = doc.queries["r1"]["q"]
    assert qd.documents[:5] == ["A", "B", "A", "C", "B"]
    assert qd.repeated[:5] == [False, False, True, False, True]
    assert _report("document").targets[0].passed  # document level: 1.0 >= 0.9


def test_report_target_level_needs_a_doc_map() -> None:
    from ragreport.errors import RagReportError
    from ragreport.report import build_report

    r = ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["RR"])
    with pytest.raises(RagReportError, match="target_level='document' needs results"):
        build_report([r], target_level="document", stats=False)
    with pytest.raises(RagReportError, match="target_level must be 'chunk' or 'document'"):
        build_report([r], target_level="doc", stats=False)
    with_map = ragreport.evaluate({"q": {"a": 1}}, {"q": ["a"]}, ["RR"], doc_map={"a": "A"},
                                  name="m")
    with pytest.raises(RagReportError, match="every run with the doc map, or none"):
        build_report([r, with_map], stats=False)


def test_outputs_show_both_levels_and_escape_ids() -> None:
    from ragreport.report import build_report

    hostile = {"<script>c1</script>": "@octocat <b>doc</b>", "c2": "#12 doc"}
    r = ragreport.evaluate({"q": {"<script>c1</script>": 1}},
                           {"q": ["c2", "<script>c1</script>"]}, ["RR", "P@2"],
                           doc_map=hostile, name="run")
    rep = build_report([r], generated_at="2026-01-01T00:00:00Z", resamples=200,
                       curve_resamples=50, worst_measure="RR")
    page = rep.to_html()
    assert 'id="documents"' in page and "Chunks and documents" in page
    assert "<script>c1</script>" not in page and "&lt;script&gt;c1&lt;/script&gt;" in page
    assert "<b>doc</b>" not in page and "@octocat &lt;b&gt;doc&lt;/b&gt;" in page
    assert "doc-curve-0" in page
    md = rep.to_markdown()
    assert "### Chunks and documents" in md
    assert "<script>" not in md and "@octocat" not in md
    data = json.loads(rep.to_json())
    d = data["document"]
    assert d["means"]["run"]["RR"] == {"chunk": 0.5, "document": 0.5}
    assert d["worst_queries"]["run"][0]["documents"] == ["#12 doc", "@octocat <b>doc</b>"]
    assert set(d["redundancy"]["run"]) >= {"k", "mean", "curve", "chunks_collapsed"}
    assert "doc map" in data["conventions"]


def _write(tmp: Path) -> None:
    (tmp / "qrels.txt").write_text("q1 0 A 2\nq1 0 B 0\nq2 0 C 1\n")  # document judgments
    (tmp / "run.txt").write_text("q1 Q0 a1 1 9 t\nq1 Q0 a2 2 8 t\nq1 Q0 b1 3 7 t\n"
                                 "q2 Q0 b1 1 9 t\nq2 Q0 c1 2 8 t\nq2 Q0 c2 3 7 t\n")
    (tmp / "map.jsonl").write_text("\n".join(json.dumps({"chunk_id": c, "doc_id": d}) for c, d in
                                             [("a1", "A"), ("a2", "A"), ("b1", "B"),
                                              ("c1", "C"), ("c2", "C")]) + "\n")


def test_cli_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ragreport.cli.app import main

    _write(tmp_path)
    q, r, m = (str(tmp_path / n) for n in ("qrels.txt", "run.txt", "map.jsonl"))
    assert main(["evaluate", q, r, "--doc-map", m, "-m", "P@2", "-m", "RR"]) == 0
    out = capsys.readouterr().out
    # chunk level: q1 a1 a2 relevant (A's grade), q2 c1 at rank 2; documents: q1 A B, q2 B C
    assert "P@2       0.7500     0.5000" in out
    assert "RR        0.7500     0.7500" in out
    assert "redundancy@2: 0.5000" in out and "judgments per document" in out
    assert main(["evaluate", q, r, "--doc-map", m, "-m", "P@2", "--format", "json", "-q"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["means"]["P@2"] == 0.75 and data["document"]["means"]["P@2"] == 0.5
    assert data["document"]["per_query"]["q1"]["P@2"] == 0.5
    assert data["document"]["redundancy"][:3] == [0.0, 0.5, 1.0]  # a2 at 2, c2 at 3
    html, md, js = (str(tmp_path / n) for n in ("r.html", "r.md", "r.json"))
    code = main(["check", q, r, "--doc-map", m, "-m", "P@2", "--html", html, "--markdown", md,
                 "--json", js, "--no-stats", "--jobs", "1", "--target-level", "document"])
    assert code == 1
    out = capsys.readouterr().out
    assert "Targets (document level)" in out and "Chunks and documents" in out
    assert "FAILED RR: 0.7500 is not > 0.8 (run 't', document level)" in out
    rep = json.loads(Path(js).read_text())
    assert rep["document"]["target_level"] == "document"
    assert any(f["role"] == "doc_map" for f in rep["inputs"])
    # the target values are the document-level means
    p2 = next(t for t in rep["targets"] if t["measure"] == "RR")
    assert p2["results"][0]["value"] == rep["document"]["means"]["t"]["RR"]["document"]
    assert "Chunks and documents" in Path(md).read_text()
    assert 'id="documents"' in Path(html).read_text()


def test_stream_refuses_a_doc_map(tmp_path: Path) -> None:
    from ragreport.core.stream import evaluate_stream
    from ragreport.errors import RagReportError

    run = tmp_path / "run.txt"
    run.write_text("q Q0 c1 1 3 t\n")
    with pytest.raises(RagReportError, match="doc_map is not supported by evaluate_stream"):
        evaluate_stream({"q": {"c1": 1}}, run, ["P@1"], doc_map=MAP)


def test_compat_and_identical_ids_apply_at_document_level() -> None:
    # BEIR drops a retrieved id equal to the query id: at document level, the document q1
    run = {"q1": {"q1#0": 3.0, "c1": 2.0, "c2": 1.5, "c3": 1.0, "c4": 0.5}}
    dmap = {**MAP, "q1#0": "q1"}
    r = ragreport.evaluate({"q1": {"c1": 1, "c4": 2}}, run, ["P@2", "nDCG@3"], doc_map=dmap,
                           compat="beir")
    assert r.document is not None
    assert [x.doc_id for x in r.document.ranked_list("q1")] == ["A", "B", "C"]
    assert r.document.conventions.compat == "beir"
    assert r.document.mean("nDCG@3") == round(r.document.values("nDCG@3").mean(), 5)


def test_json_per_query_document_level() -> None:
    rep = _report(per_query=True)
    doc = json.loads(rep.to_json())["document"]
    assert doc["per_query"]["r1"]["q"] == {"P@2": 0.5, "RR": 1.0, "redundancy@2": 0.0}
    assert "per_query" not in json.loads(_report().to_json())["document"]


@pytest.mark.parametrize("where", ["judged", "retrieved"])
def test_unmapped_message_names_a_real_api(where: str) -> None:
    """The error's advice works as written: in Python, the evaluate keyword it names exists
    and the expression it gives (with the map put in) makes the id a document of its own; on
    the command line it names --doc-map-unmapped own."""
    import inspect
    import re

    qrels = {"q": {"c1": 1, "zz": 1}} if where == "judged" else {"q": {"c1": 1}}
    run = RUN if where == "judged" else {"q": {"c1": 3.0, "c9": 2.0}}
    with pytest.raises(InputError) as exc:
        ragreport.evaluate(qrels, run, ["R@5"], doc_map=MAP)
    text = str(exc.value)
    assert "--doc-map-unmapped own" in text
    got = re.search(r"(\w+)=(ragreport\.load_doc_map)\(the_map, (unmapped='own')\)",
                    text)
    assert got is not None, text
    assert got.group(1) in inspect.signature(ragreport.evaluate).parameters
    assert "unmapped" not in inspect.signature(ragreport.evaluate).parameters
    loaded = ragreport.load_doc_map(MAP, unmapped="own")  # as the message says
    r = ragreport.evaluate(qrels, run, ["R@5"], **{got.group(1): loaded})
    assert r.doc_map_info is not None
    assert r.doc_map_info.unmapped_judged + r.doc_map_info.unmapped_retrieved == 1


def _level_files(tmp: Path) -> tuple[str, str, str, str]:
    """qa: chunk P@2 0, document P@2 0.5 (x1 x2 of X, then a1 of A); qb: 0 at both levels."""
    (tmp / "qrels.txt").write_text("qa 0 A 1\nqa 0 X 0\nqb 0 A 1\nqb 0 X 0\n")
    (tmp / "run.txt").write_text("qa Q0 x1 1 9 t\nqa Q0 x2 2 8 t\nqa Q0 a1 3 7 t\n"
                                 "qb Q0 x1 1 9 t\nqb Q0 y1 2 8 t\nqb Q0 a1 3 7 t\n")
    (tmp / "map.tsv").write_text("x1\tX\nx2\tX\ny1\tY\na1\tA\n")
    (tmp / "t.toml").write_text('"P@2" = ">= 0.2"\n')
    return tuple(str(tmp / n) for n in ("qrels.txt", "run.txt", "map.tsv", "t.toml"))  # type: ignore[return-value]


def test_document_level_worst_queries_by_document_value(tmp_path: Path) -> None:
    from ragreport.cli.app import main

    q, r, m, t = _level_files(tmp_path)
    md, js, html = (str(tmp_path / n) for n in ("r.md", "r.json", "r.html"))
    assert main(["check", q, r, "--doc-map", m, "--targets", t, "--target-level", "document",
                 "-m", "P@2", "--no-stats", "--jobs", "1", "--markdown", md, "--json", js,
                 "--html", html]) == 0
    data = json.loads(Path(js).read_text())
    # the chunk level's worst queries: both 0, by query id; the document level: qb (0) first
    assert [w["query_id"] for w in data["worst_queries"]["t"]] == ["qa", "qb"]
    doc_worst = data["document"]["worst_queries"]["t"]
    assert [(w["query_id"], w["value"]) for w in doc_worst] == [("qb", 0.0), ("qa", 0.5)]
    text = Path(md).read_text()
    part = text[text.index("the worst queries at document level"):]
    assert part.index("| qb |") < part.index("| qa |")


def test_target_marks_on_the_curves_of_the_target_level(tmp_path: Path) -> None:
    from ragreport.report import build_report
    from ragreport.targets import Target

    q, r, m, _ = _level_files(tmp_path)
    res = [ragreport.evaluate(q, r, ["P@2", "RR"], doc_map=m, name="t")]
    t = [Target(ragreport.measures.parse_measure("P@2"), ">=", 0.2, "test")]
    for level in ("chunk", "document"):
        rep = build_report(res, t, stats=False, target_level=level, worst_measure="P@2",
                           generated_at="2026-01-01T00:00:00Z")
        assert rep.document is not None
        chunk = next(c for c in rep.curves if c.family == "P")
        doc = next(c for c in rep.document.curves if c.family == "P")
        marked, unmarked = (chunk, doc) if level == "chunk" else (doc, chunk)
        assert marked.targets == [(2, 0.2, ">= 0.2")] and unmarked.targets == []
        page = rep.to_html()
        summary = page[page.index('id="summary"'):page.index('id="curves"')]
        assert "Chunk level" in summary
        assert ("with the target marks" in summary) == (level == "document")
    plain = build_report([ragreport.evaluate(q, r, ["P@2"], name="t")], t, stats=False,
                         generated_at="2026-01-01T00:00:00Z")
    assert plain.curves[0].targets == [(2, 0.2, ">= 0.2")]
    assert "Chunk level" not in plain.to_html()
