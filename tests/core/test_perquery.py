"""Per-query results as Arrow / Parquet (:mod:`ragreport.core.perquery`): the round trip gives back
every value, curve and count; shards evaluated apart merge into the whole evaluation; the
report and the gate built from them equal those from the raw files (every number shown)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from paths import user_docs

from ragreport import evaluate
from ragreport.cli.app import EXIT_OK, EXIT_TARGET_FAILED, main
from ragreport.core.perquery import (
    SCHEMA_NAME,
    SCHEMA_VERSION,
    from_tables,
    is_per_query,
    read,
    to_table,
    write,
)
from ragreport.core.result import EvaluationResult
from ragreport.errors import InputError, RagReportError
from ragreport.examples import example_files
from ragreport.report import build_report
from ragreport.targets import parse_targets

MEASURES = ["nDCG@10", "P@5", "AP", "RR", "Rprec", "nDCG", "R@100", "Judged@10", "ERR@5"]


def _generated(seed: int = 0, n: int = 60) -> tuple[dict[str, Any], dict[str, Any]]:
    """Graded qrels (0..3) and a run with many tied scores, run-only and qrels-only
    queries, an empty ranking and a query without a relevant document."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, Any] = {}
    run: dict[str, Any] = {}
    for q in range(n):
        qid = f"q{q}"
        qrels[qid] = {f"d{d}": int(rng.integers(0, 4))
                      for d in rng.choice(40, 8, replace=False)}
        run[qid] = {f"d{d}": float(rng.integers(0, 4))
                    for d in rng.choice(40, 25, replace=False)}
    qrels["q0"] = {"d1": 0, "d2": 0}  # no relevant document
    run["run-only"] = {"a": 1.0}
    qrels["qrels-only"] = {"a": 2}
    return qrels, run


def _same(a: EvaluationResult, b: EvaluationResult) -> None:
    """Every value, curve, count and convention of ``a`` is in ``b``, bit for bit."""
    assert b.run_name == a.run_name and b.query_ids == a.query_ids
    assert b.k_max == a.k_max and b.measures == a.measures
    assert b.conventions == a.conventions and b.counts == a.counts
    for key in a.curves:
        assert np.array_equal(b.curves[key], a.curves[key]), key
    for key in a.scalars:
        assert np.array_equal(b.scalars[key], a.scalars[key]), key
    for m in a.measures:
        assert np.array_equal(b.values(m), a.values(m)), m
    assert b.ranking.run_only_ids == a.ranking.run_only_ids[:10]
    assert b.ranking.qrels_only_ids == a.ranking.qrels_only_ids[:10]
    assert b.latency_ms == a.latency_ms
    assert np.array_equal(b.ranking.n_ret, a.ranking.n_ret)
    for qa, qb in zip(a.ranking.relevant_ranks(a.conventions.rel_level),
                      b.ranking.relevant_ranks(a.conventions.rel_level), strict=True):
        assert np.array_equal(qa, qb)


@pytest.mark.parametrize("options", [
    {},
    {"ties": "average"},
    {"complete": True, "rel_level": 2},
    {"max_depth": 7, "no_relevant": "skip"},
    {"order": "given", "k_max": 100},
], ids=["default", "ties-average", "complete-rel2", "depth-skip", "given-k100"])
def test_round_trip_generated(options: dict[str, Any]) -> None:
    qrels, run = _generated()
    measures = [m for m in MEASURES if not (options.get("ties") == "average" and "ERR" in m)]
    r = evaluate(qrels, run, measures, **options)
    [back] = from_tables([to_table(r)])
    assert not back.has_rankings and r.has_rankings
    _same(r, back)
    # and through Parquet bytes, twice (a result read back writes the same table)
    buf = pa.BufferOutputStream()
    pq.write_table(to_table(back), buf)
    [again] = from_tables([pq.read_table(pa.BufferReader(buf.getvalue()))])
    _same(r, again)


def test_round_trip_example(tmp_path: Path) -> None:
    f = example_files()
    results = [evaluate(str(f.qrels), str(p), MEASURES) for p in f.runs]
    path = write(results, tmp_path / "both.parquet")
    assert is_per_query(path) and not is_per_query(f.qrels)
    back = read(path)
    assert [b.run_name for b in back] == [r.run_name for r in results]
    for a, b in zip(results, back, strict=True):
        _same(a, b)
    meta = pq.read_schema(path).metadata
    assert json.loads(meta[b"ragreport.schema"]) == SCHEMA_NAME
    assert json.loads(meta[b"ragreport.version"]) == SCHEMA_VERSION


def test_schema_columns() -> None:
    r = evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 1.0, "c": 1.0, "b": 0.5}},
                 ["nDCG@3", "P@100"])
    t = to_table(r)
    assert t.column_names[:7] == ["run", "query_id", "retrieved", "relevant", "judged",
                                  "relevant_ranks", "judged_ranks"]
    assert t.schema.field("nDCG@K").type == pa.list_(pa.float64())
    assert t.schema.field("P@100").type == pa.float64()
    row = t.to_pylist()[0]
    # ranking: c (unjudged, wins the tie by id descending), a (2), b (1)
    assert (row["retrieved"], row["relevant"], row["judged"]) == (3, 2, 2)
    assert row["relevant_ranks"] == [1, 2] and row["judged_ranks"] == [1, 2]
    assert r.k_max == 20 and len(row["P@K"]) == 20  # the curves stop at 20 (>= depth 3)
    assert row["P@K"][:4] == [0.0, 0.5, 2 / 3, 0.5] and row["P@100"] == 0.02


def _split(qrels: dict[str, Any], run: dict[str, Any], parts: list[list[str]],
           **kw: Any) -> list[pa.Table]:
    return [to_table(evaluate({q: qrels[q] for q in p if q in qrels},
                              {q: run[q] for q in p if q in run}, MEASURES, **kw))
            for p in parts]


def test_shards_merge_into_the_whole() -> None:
    qrels, run = _generated(seed=3)
    whole = evaluate(qrels, run, MEASURES)
    ids = sorted(set(qrels) | set(run))
    parts = [ids[0::3], ids[1::3], ids[2::3]]
    [merged] = from_tables(_split(qrels, run, parts)[::-1])  # any order of the shards
    _same(whole, merged)


def test_run_shards_evaluated_against_the_whole_qrels_count_its_queries_once() -> None:
    """A run split by query, each shard evaluated against the same (whole) qrels file (its
    fingerprint stated, as evaluate --per-query-out does): the qrels' queries were counted by
    every shard; merged, the counts are those of one evaluation (they were summed: 3 x the
    qrels queries, and the queries of other shards counted as qrels-only)."""
    qrels, run = _generated(seed=5, n=30)
    whole = evaluate(qrels, run, MEASURES)
    ids = sorted(run)
    tables = [to_table(evaluate(qrels, {q: run[q] for q in ids[i::3]}, MEASURES, k_max=100),
                       qrels_sha256="ab" * 32) for i in range(3)]
    [merged] = from_tables(tables)
    assert merged.counts == whole.counts
    assert merged.counts.qrels_only == 1 and merged.counts.qrels_queries == len(qrels)
    # each shard kept its first 10 qrels-only ids (mostly other shards' queries): those
    # evaluated elsewhere are left out; the true one may be beyond a shard's first 10
    assert set(merged.ranking.qrels_only_ids) <= {"qrels-only"}
    assert merged.query_ids == whole.query_ids
    for m in whole.measures:
        assert np.array_equal(merged.values(m), whole.values(m)), m
    complete = [to_table(evaluate(qrels, {q: run[q] for q in ids[i::3]}, MEASURES, k_max=100,
                                  complete=True), qrels_sha256="ab" * 32) for i in range(2)]
    with pytest.raises(InputError, match=r"in shard 1 and shard 2; each query must be in one "
                                         r"shard \(with -c each shard evaluated every query "
                                         r"of the whole qrels: such shards do not merge\)$"):
        from_tables(complete)
    with pytest.raises(InputError, match=r"evaluated on different qrels \(sha256 abababababab"
                                         r"\.\.\. vs cdcdcdcdcdcd\.\.\.\); evaluate every "
                                         r"shard against the same \(whole\) qrels file$"):
        from_tables([tables[0], to_table(evaluate(qrels, {q: run[q] for q in ids[1::3]},
                                                  MEASURES, k_max=100),
                                         qrels_sha256="cd" * 32)])


def test_shards_from_the_same_judgments_in_other_files_merge() -> None:
    """Shards evaluated against the same judgments held in different files (one gzipped, or
    reordered: other file SHA-256s) state the same judgments fingerprint: they merge, their
    qrels queries counted once, as --baseline-report treats them (they were refused by the
    files' SHA-256); other judgments are refused naming that fingerprint."""
    from ragreport import load_qrels
    from ragreport.analysis.drift import judgments_sha256

    qrels, run = _generated(seed=5, n=30)
    whole = evaluate(qrels, run, MEASURES)
    j = judgments_sha256(load_qrels(qrels))
    ids = sorted(run)
    tables = [to_table(evaluate(qrels, {q: run[q] for q in ids[i::3]}, MEASURES, k_max=100),
                       qrels_sha256=f"{i}" * 64, qrels_judgments_sha256=j) for i in range(3)]
    [merged] = from_tables(tables)
    assert merged.counts == whole.counts
    assert merged.qrels_judgments_sha256 == j and merged.qrels_sha256 is None
    other = to_table(evaluate(qrels, {q: run[q] for q in ids[1::3]}, MEASURES, k_max=100),
                     qrels_sha256="0" * 64, qrels_judgments_sha256="ef" * 32)
    with pytest.raises(InputError, match=r"evaluated on different qrels \(judgments sha256 "
                                         rf"{j[:12]}\.\.\. vs efefefefefef\.\.\.\)"):
        from_tables([tables[0], other])


def test_shards_with_curves_of_different_widths_merge_at_the_narrowest() -> None:
    """Shards evaluated apart (evaluate --per-query-out on each) stop their curves at their
    own deepest ranking: one 40 deep, one 15 deep, with P@100 asked, have curves 40 and 20
    wide. They merge (they were refused: 'curves of different widths', with no option to
    make them equal); the curves stop at 20 and every measure's value is the whole's."""
    qrels = {str(i): {f"d{j}": (i + j) % 3 for j in range(0, 50, 3)} for i in range(1, 13)}
    run = {str(i): {f"d{j}": 1 - j / 100 for j in range(40 if i % 2 else 15)}
           for i in range(1, 13)}
    measures = ["P@100", "nDCG@10", "R@50", "AP"]
    whole = evaluate(qrels, run, measures)
    deep = [q for q in run if int(q) % 2]
    shallow = [q for q in run if not int(q) % 2]
    tables = [to_table(evaluate({q: qrels[q] for q in part}, {q: run[q] for q in part},
                                measures)) for part in (deep, shallow)]
    assert [json.loads(t.schema.metadata[b"ragreport.runs"])["run"]["curve_width"]
            for t in tables] == [40, 20]
    for order in (tables, tables[::-1]):
        [merged] = from_tables(order)
        assert merged.k_max == 20 and merged.conventions.curve_width == 20
        assert merged.query_ids == whole.query_ids and merged.counts == whole.counts
        for m in measures:
            assert np.array_equal(merged.values(m), whole.values(m)), m
        for key, c in merged.curves.items():
            if key in whole.curves:
                assert np.array_equal(c, whole.curves[key][:, :20]), key
    short = tables[0].set_column(  # a deep shard's row with fewer values than the merge's
        tables[0].schema.get_field_index("P@K"), "P@K",
        pa.array([[0.5] * 10, *tables[0].column("P@K").to_pylist()[1:]],
                 pa.list_(pa.float64())))
    with pytest.raises(InputError, match=r"'P@K' holds 10 values, not k_max = 20"):
        from_tables([short, tables[1]])


@pytest.mark.parametrize("k_max", [(None, None), (50, 36), (36, 60)])
def test_a_cutoff_in_one_shards_curves_and_beyond_anothers_merges(
        k_max: tuple[int | None, int | None]) -> None:
    """P@30 is a point of the deep shard's curves (40 wide) and a column of its own in the
    shallow shard's (20 wide): they merge (they were refused: 'different measure columns'),
    as do shards evaluated with different k_max (it only bounds the curves: no value
    depends on it); every value is the whole evaluation's."""
    qrels = {str(i): {f"d{j}": (i + j) % 3 for j in range(0, 50, 3)} for i in range(1, 13)}
    run = {str(i): {f"d{j}": 1 - j / 100 for j in range(40 if i % 2 else 15)}
           for i in range(1, 13)}
    measures = ["P@30", "nDCG@10", "Judged@25", "R@35", "AP"]
    whole = evaluate(qrels, run, measures)
    parts = ([q for q in run if int(q) % 2], [q for q in run if not int(q) % 2])
    tables = [to_table(evaluate({q: qrels[q] for q in part}, {q: run[q] for q in part},
                                measures, k_max=k)) for part, k in zip(parts, k_max,
                                                                       strict=True)]
    assert "P@30" not in tables[0].column_names and "P@30" in tables[1].column_names
    for order in (tables, tables[::-1]):
        [merged] = from_tables(order)
        assert merged.k_max == 20 and merged.query_ids == whole.query_ids
        for m in measures:
            assert np.array_equal(merged.values(m), whole.values(m)), m
    # a shard whose curves stop before the cutoff and that lacks the column: refused
    cut = tables[0].set_column(
        tables[0].schema.get_field_index("P@K"), "P@K",
        pa.array([v[:25] for v in tables[0].column("P@K").to_pylist()],
                 pa.list_(pa.float64())))
    with pytest.raises(InputError, match=r"a\.parquet: row 1: column 'P@30' is missing and "
                                         r"the curve 'P@K' stops before K = 30"):
        from_tables([cut, tables[1]], ["a.parquet", "b.parquet"])
    # other measures (not a placement of the same one) are still refused
    other = to_table(evaluate({q: qrels[q] for q in parts[1]}, {q: run[q] for q in parts[1]},
                              ["P@30", "nDCG@10", "Judged@25", "R@35", "AP", "RR"]))
    with pytest.raises(InputError, match="different measures"):
        from_tables([tables[0], other])


def test_values_an_evaluation_gives_are_read_back() -> None:
    """The value checks refuse only what no evaluation gives: expected counts over tie
    orders are fractional (ties="average"), graded RBP exceeds 1, a bounded measure is 1."""
    qrels = {"q": {"a": 1, "b": 0, "c": 3}, "r": {"a": 9}}
    run = {"q": {"a": 0.5, "b": 0.5, "c": 0.1}, "r": {"a": 1.0}}
    ms = ["Hits@1", "NumRelRet", "RBP(p=0.8)", "nDCG@2", "P@1"]
    r = evaluate(qrels, run, ms, ties="average")
    assert r.values("Hits@1")[0] == 0.5 and r.values("RBP(p=0.8)").max() > 1
    [back] = from_tables([to_table(r)])
    for m in ms:
        assert np.array_equal(back.values(m), r.values(m)), m
    # the same fractional count without ties="average" is refused, naming the row
    t = to_table(evaluate(qrels, run, ms))
    i = t.column_names.index("Hits@K")
    edited = t.set_column(i, "Hits@K", pa.array([[0.5, *v[1:]] for v in
                                                 t.column("Hits@K").to_pylist()],
                                                t.schema.field("Hits@K").type))
    with pytest.raises(InputError, match=r"row 1: column 'Hits@K' \(K = 1\): value 0\.5 is "
                                         r"not a whole number \(Hits counts\)"):
        from_tables([edited], ["s.parquet"])


def test_a_glob_matching_directories_reads_their_shards(tmp_path: Path) -> None:
    """Spark writes df.write.parquet("runs/bm25.parquet") as a directory of that name: the
    pattern 'runs/*.parquet' reads the shards of each directory it matches (it was 'the
    pattern matches no file')."""
    from ragreport.core.perquery import shard_files

    qrels, run = _generated(seed=6, n=12)
    for name in ("bm25", "dense"):
        folder = tmp_path / "runs" / f"{name}.parquet"
        folder.mkdir(parents=True)
        r = evaluate(qrels, run, ["P@5"], name=name)
        pq.write_table(to_table(r), folder / "part-00000.parquet")
        (folder / "_SUCCESS").write_bytes(b"")
    (tmp_path / "runs" / "loose.parquet").write_bytes(
        (tmp_path / "runs" / "bm25.parquet" / "part-00000.parquet").read_bytes())
    files = shard_files(str(tmp_path / "runs" / "*.parquet"))
    assert [f.relative_to(tmp_path.resolve()).as_posix() for f in files] == [
        "runs/bm25.parquet/part-00000.parquet", "runs/dense.parquet/part-00000.parquet",
        "runs/loose.parquet"]
    got = read(str(tmp_path / "runs" / "[bd]*.parquet"))
    assert [r.run_name for r in got] == ["bm25", "dense"]
    (tmp_path / "empty.parquet").mkdir()
    with pytest.raises(InputError, match="the pattern matches no file"):
        shard_files(str(tmp_path / "empty.parq*"))


def test_a_measure_not_stored_says_so() -> None:
    """A scalar measure the per-query results do not hold: the per-query wording (it was
    'pass it in measures=', the advice for an evaluation)."""
    qrels, run = _generated(seed=8, n=6)
    [back] = from_tables([to_table(evaluate(qrels, run, ["P@5", "AP"]))])
    with pytest.raises(RagReportError, match=r"^Bpref is not in the per-query results "
                                             r"\(stored: .*AP.*\); evaluate with it among "
                                             r"the measures$"):
        back.values("bpref")
    assert back.values("AP").tolist() == evaluate(qrels, run, ["AP"]).values("AP").tolist()


def test_numeric_ids_merge_in_numeric_order() -> None:
    qrels = {str(i): {"a": 1} for i in (1, 2, 10, 7, 100)}
    run = {q: ["a"] for q in qrels}
    whole = evaluate(qrels, run, ["P@1"])
    [merged] = from_tables(_split(qrels, run, [["1", "100"], ["2", "7", "10"]]))
    assert merged.query_ids == whole.query_ids == ["1", "2", "7", "10", "100"]


def test_merge_refusals() -> None:
    qrels, run = _generated(seed=4, n=12)
    ids = sorted(set(qrels) | set(run))
    a = _split(qrels, run, [ids[:6]])[0]
    other = _split(qrels, run, [ids[6:]], complete=True)[0]
    with pytest.raises(InputError, match=r"shard 1 and shard 2 have different conventions "
                                         r"\(complete: False vs True\)"):
        from_tables([a, other])
    fewer = to_table(evaluate({q: qrels[q] for q in ids[6:] if q in qrels},
                              {q: run[q] for q in ids[6:] if q in run}, ["P@5"], k_max=100))
    with pytest.raises(InputError, match="different measures"):
        from_tables([a, fewer])
    with pytest.raises(InputError, match=r"query 'q0' of run 'run' is in shard 1 and "
                                         r"shard 2; each query must be in one shard"):
        from_tables([a, a.slice(0, 1)])
    r = evaluate({q: qrels[q] for q in ids[6:] if q in qrels},
                 {q: run[q] for q in ids[6:] if q in run}, MEASURES)
    with pytest.raises(InputError, match="evaluated on different qrels"):
        from_tables([to_table(r, qrels_sha256="aa" * 32), to_table(r, qrels_sha256="bb" * 32)])
    wide = to_table(evaluate({q: qrels[q] for q in ids[6:] if q in qrels},
                             {q: run[q] for q in ids[6:] if q in run}, MEASURES,
                             max_depth=3))
    with pytest.raises(InputError, match=r"different conventions \(max_depth: None vs 3\)"):
        from_tables([a, wide])
    with pytest.raises(InputError, match="not a ragreport per-query table"):
        from_tables([pa.table({"query_id": ["q"]})])
    newer = a.replace_schema_metadata({**a.schema.metadata, b"ragreport.version": b"2"})
    with pytest.raises(InputError, match="schema version 2 is newer"):
        from_tables([newer])
    with pytest.raises(InputError, match="a shard is missing or was filtered"):
        from_tables([a.slice(0, 2)])
    renamed = a.set_column(0, "run", pa.array(["x"] * a.num_rows))
    with pytest.raises(InputError, match="run 'x' has rows but no counts in the metadata"):
        from_tables([renamed])


def test_categorical_ids_and_other_list_types() -> None:
    """Ids as dictionaries (pandas categoricals, Spark) and curves as large or fixed-size
    lists (what other writers make of list<float64>) read as the schema's own types."""
    qrels, run = _generated(seed=6, n=10)
    r = evaluate(qrels, run, MEASURES)
    t = to_table(r)
    i = t.column_names.index("query_id")
    t = t.set_column(i, "query_id", t.column("query_id").dictionary_encode())
    j = t.column_names.index("nDCG@K")
    t = t.set_column(j, "nDCG@K", t.column("nDCG@K").cast(pa.list_(pa.float64(), r.k_max)))
    k = t.column_names.index("P@K")
    t = t.set_column(k, "P@K", t.column("P@K").cast(pa.large_list(pa.float64())))
    [back] = from_tables([t])
    _same(r, back)


def test_rankings_are_not_there() -> None:
    r = evaluate({"q": {"a": 1}}, {"q": ["a", "b"]}, ["P@1"])
    [back] = from_tables([to_table(r)])
    with pytest.raises(RagReportError, match="hold no rankings"):
        back.ranked_list("q")
    with pytest.raises(RagReportError, match="not in the per-query results"):
        back.values("P@500")
    # Judged@K past the curves comes from the stored judged ranks (trec_eval ties)
    from ragreport.analysis.failures import judged_at

    assert judged_at(back, 500).tolist() == judged_at(r, 500).tolist() == [0.5]


def _strip(doc: dict[str, Any]) -> dict[str, Any]:
    """The report's JSON without what depends on the rankings or the input paths: every
    other number must be the same from the raw files and from per-query results."""
    for key in ("ties", "unjudged", "rankings", "inputs", "command", "generated_at"):
        doc.pop(key, None)
    for queries in doc["worst_queries"].values():
        for q in queries:
            q.pop("ranking")
            q.pop("relevant_below")
            q.pop("tie_ranges")
            q.pop("unjudged_ranges")
    for d in doc["drops"]:
        d.pop("unjudged")
    return doc


def test_report_equals_raw_report() -> None:
    qrels, run = _generated(seed=5)
    run2 = {q: {d: s + 0.5 for d, s in list(v.items())[:12]} for q, v in run.items()}
    targets = parse_targets({"nDCG@10": 0.3, "P@5": 0.2, "R@100": 0.1})
    for ties in ("trec_eval", "average"):
        ms = [m for m in MEASURES if not (ties == "average" and "ERR" in m)]
        raw = [evaluate(qrels, run, ms, ties=ties, name="a"),
               evaluate(qrels, run2, ms, ties=ties, name="b")]
        back = from_tables([to_table(raw)])
        kw: dict[str, Any] = dict(resamples=300, curve_resamples=40, per_query=True,
                                  max_drop=0.01, generated_at="2026-01-01T00:00:00Z",
                                  slices={q: ["even" if i % 2 else "odd"]
                                          for i, q in enumerate(sorted(qrels))})
        a, b = build_report(raw, targets, **kw), build_report(back, targets, **kw)
        assert a.rankings and not b.rankings
        assert _strip(json.loads(a.to_json())) == _strip(json.loads(b.to_json()))
        assert a.all_passed == b.all_passed
        if ties == "trec_eval":
            assert a.ties and not b.ties  # tied scores: the raw report has tie exposure
        md = b.to_markdown()
        assert "From per-query results: no rankings" in md
        page = b.to_html()
        assert "no rankings" in page and "Open a query to see its ranking" not in page
        assert "Nothing retrieved." not in page  # no empty ranking shown as one


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    _, err = capsys.readouterr()
    return code, err


def test_cli_report_and_check_equal(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    f = example_files()
    ms = ["-m", "nDCG@10", "-m", "P@5", "-m", "RR"]
    shards = tmp_path / "shards"
    shards.mkdir()
    names = ["bm25", "tfidf"]
    for run, name in zip(f.runs, names, strict=True):
        code, err = _cli(["evaluate", str(f.qrels), str(run), *ms, "--name", name,
                          "--per-query-out", str(shards / f"{name}.parquet")], capsys)
        assert code == EXIT_OK, err
    common = ["--resamples", "200", "--jobs", "1", "--per-query",
              "--generated-at", "2026-01-01T00:00:00Z", "--max-drop", "0.05"]
    raw_json, pq_json = tmp_path / "raw.json", tmp_path / "pq.json"
    code, err = _cli(["report", str(f.qrels), *map(str, f.runs), "--name", "bm25", "--name",
                      "tfidf", *ms, *common, "--json", str(raw_json)], capsys)
    assert code == EXIT_OK, err
    code, err = _cli(["report", "--per-query-in", str(shards), *common,
                      "--json", str(pq_json)], capsys)
    assert code == EXIT_OK, err
    raw, got = json.loads(raw_json.read_text()), json.loads(pq_json.read_text())
    assert [i["role"] for i in got["inputs"]][:2] == ["per_query", "per_query"]
    assert _strip(raw) == _strip(got)
    # the gate: the same exit code on a passing and on a failing targets file
    for threshold, want in ((0.1, EXIT_OK), (0.9, EXIT_TARGET_FAILED)):
        t = tmp_path / f"t{threshold}.toml"
        t.write_text(f'[targets]\n"nDCG@10" = {threshold}\n"P@5" = 0.05\n')
        codes = [main(["check", str(f.qrels), *map(str, f.runs), *ms, "--targets", str(t),
                       "--no-stats", "--jobs", "1"]),
                 main(["check", "--per-query-in", str(shards / "*.parquet"), "--targets",
                       str(t), "--no-stats", "--jobs", "1"])]
        capsys.readouterr()
        assert codes == [want, want]


def test_cli_baseline_report_with_per_query_in(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``check --per-query-in ... --baseline-report main.json`` gives the comparison, the drift
    checks and the exit code of ``check QRELS RUN --baseline-report main.json``; a report
    from per-query results, stored in turn, is a baseline with known qrels."""
    f = example_files()
    ms = ["-m", "nDCG@10", "-m", "P@5", "-m", "RR"]
    main_json, shard = tmp_path / "main.json", tmp_path / "tfidf.parquet"
    common = ["--resamples", "200", "--jobs", "1", "--generated-at", "2026-01-01T00:00:00Z",
              "--max-drop", "0.02"]
    code, err = _cli(["report", str(f.qrels), str(f.runs[0]), "--name", "bm25", *ms,
                      *common, "--per-query", "--json", str(main_json)], capsys)
    assert code == EXIT_OK, err
    code, err = _cli(["evaluate", str(f.qrels), str(f.runs[1]), *ms, "--name", "tfidf",
                      "--per-query-out", str(shard)], capsys)
    assert code == EXIT_OK, err
    raw_json, pq_json = tmp_path / "raw.json", tmp_path / "pq.json"
    codes = []
    for source, out in (([str(f.qrels), str(f.runs[1]), "--name", "tfidf", *ms], raw_json),
                        (["--per-query-in", str(shard)], pq_json)):
        codes.append(main(["check", *source, *common, "--baseline-report", str(main_json),
                           "--json", str(out)]))
        capsys.readouterr()
    assert codes[0] == codes[1] == EXIT_TARGET_FAILED  # tfidf loses more than 0.02 somewhere
    raw, got = json.loads(raw_json.read_text()), json.loads(pq_json.read_text())
    assert got["baseline_drift"] == raw["baseline_drift"]
    assert got["baseline_drift"]["drifted"] is False
    assert got["baseline"] == raw["baseline"] == "bm25"
    assert _strip(raw) == _strip(got)
    # the per-query report, stored, is a baseline in turn: its qrels are those the shard states
    code = main(["report", "--per-query-in", str(shard), *common, "--per-query",
                 "--json", str(tmp_path / "pq-main.json")])
    assert code == EXIT_OK
    easy = tmp_path / "easy.toml"
    easy.write_text('[targets]\n"RR" = 0.1\n')
    code = main(["check", "--per-query-in", str(shard), *common, "--targets", str(easy),
                 "--baseline-report", str(tmp_path / "pq-main.json")])
    out = capsys.readouterr().out
    assert code == EXIT_OK and "DRIFT" not in out, out
    assert "qrels: judgments sha256" in out, out


def test_cli_shards_from_standard_input_are_a_baseline_in_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """qrels read from standard input: the shard states the judgments' fingerprint only; the
    report from it records that, so it is a --baseline-report with known qrels in turn (it
    recorded no qrels: 'the baseline's qrels fingerprint is unknown'). A qrels file beside a
    run from standard input is hashed (it was not: the rule wanted both inputs as files).
    An output named like the stated qrels' entry is no input."""
    import io as _io

    f = example_files()
    monkeypatch.chdir(tmp_path)
    shard = tmp_path / "s.parquet"
    monkeypatch.setattr("sys.stdin", _io.TextIOWrapper(_io.BytesIO(
        Path(f.qrels).read_bytes())))
    assert main(["evaluate", "-", str(f.runs[1]), "--per-query-out", str(shard)]) == EXIT_OK
    meta = json.loads(pq.read_schema(shard).metadata[b"ragreport.fingerprints"])
    assert meta["qrels"] is None and len(meta["qrels_judgments"]) == 64
    stored = "(qrels stated by the per-query results)"  # a file name, as an output here
    assert main(["report", "--per-query-in", str(shard), "--per-query", "--no-stats",
                 "--jobs", "1", "--json", stored]) == EXIT_OK
    easy = tmp_path / "easy.toml"
    easy.write_text('[targets]\n"RR" = 0.1\n')
    capsys.readouterr()
    assert main(["check", "--per-query-in", str(shard), "--baseline-report", stored,
                 "--targets", str(easy), "--no-stats", "--jobs", "1"]) == EXIT_OK
    assert "ok    qrels: judgments sha256" in capsys.readouterr().out
    page = tmp_path / "pq.html"
    assert main(["report", "--per-query-in", str(shard), "--no-stats", "--jobs", "1",
                 "--html", str(page)]) == EXIT_OK
    row = page.read_text().split(stored)[1].split("</tr>")[0]
    assert "0 B" not in row  # stated, not read: no size shown
    monkeypatch.setattr("sys.stdin", _io.TextIOWrapper(_io.BytesIO(
        Path(f.runs[1]).read_bytes())))
    assert main(["evaluate", str(f.qrels), "-", "--per-query-out", str(shard)]) == EXIT_OK
    meta = json.loads(pq.read_schema(shard).metadata[b"ragreport.fingerprints"])
    import hashlib

    assert meta["qrels"] == hashlib.sha256(Path(f.qrels).read_bytes()).hexdigest()


def test_a_shard_stating_no_qrels_first_lets_no_other_qrels_through() -> None:
    """Every shard is compared with the first that states each fingerprint: a first shard
    stating none (an engine's) no longer lets shards of different qrels merge."""
    qrels, run = _generated(seed=5, n=30)
    ids = sorted(run)
    other = {q: dict(list(d.items())[:-1]) or d for q, d in qrels.items()}

    def part(i: int, q: dict[str, Any], fp: str | None) -> pa.Table:
        return to_table(evaluate(q, {k: run[k] for k in ids[i::3]}, MEASURES, k_max=100,
                                 name=f"r{i}"), qrels_sha256=fp)

    with pytest.raises(InputError, match=r"shard 2 and shard 3 were evaluated on different "
                                         r"qrels \(sha256 aaaaaaaaaaaa\.\.\. vs "
                                         r"bbbbbbbbbbbb\.\.\.\)"):
        from_tables([part(0, qrels, None), part(1, qrels, "a" * 64),
                     part(2, other, "b" * 64)])


def test_cli_evaluate_per_query_out_keeps_stdout(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    f = example_files()
    out = tmp_path / "r.parquet"
    assert main(["evaluate", str(f.qrels), str(f.runs[0]), "-m", "P@5"]) == EXIT_OK
    plain = capsys.readouterr().out
    assert main(["evaluate", str(f.qrels), str(f.runs[0]), "-m", "P@5",
                 "--per-query-out", str(out)]) == EXIT_OK
    got = capsys.readouterr()
    assert got.out == plain and f"wrote {out}" in got.err
    [back] = read(out)
    meta = json.loads(pq.read_schema(out).metadata[b"ragreport.fingerprints"])
    import hashlib

    assert meta["qrels"] == hashlib.sha256(Path(f.qrels).read_bytes()).hexdigest()
    assert back.mean("P@5") == evaluate(str(f.qrels), str(f.runs[0]), ["P@5"]).mean("P@5")


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's "Per-query results (Parquet)" Python example, as written."""
    import re

    readme = user_docs()
    section = readme.split("### Per-query results (Parquet)", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    monkeypatch.chdir(tmp_path)
    exec(compile(code.group(1), "README.md", "exec"), {})
    assert is_per_query(tmp_path / "bm25.parquet")


def test_merge_interleaved_shards_keeps_each_curve_with_its_query() -> None:
    """Shards whose rows interleave in id order, the first and last query at the ends of the
    concatenation (as Spark's hash partitions can put them): every curve value stays with its
    query (a row-order shortcut read them as one slice, in the wrong order)."""
    qrels, run = _generated(seed=7, n=41)
    whole = evaluate(qrels, run, MEASURES)
    ids = list(whole.query_ids)
    parts = [ids[0:-1:2], [*ids[1:-1:2], ids[-1]]]
    tables = [to_table(evaluate({q: v for q, v in qrels.items() if q in part},
                                {q: v for q, v in run.items() if q in part}, MEASURES))
              for part in parts]
    [back] = from_tables(tables)
    assert back.query_ids == ids
    for m in whole.measures:
        assert np.array_equal(back.values(m), whole.values(m)), m
