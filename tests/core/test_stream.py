"""Streaming evaluation gives the same numbers as evaluate(), in blocks, or refuses."""

from __future__ import annotations

import dataclasses
import gzip
import io
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ragreport import evaluate
from ragreport.core.stream import evaluate_stream
from ragreport.errors import InputError
from ragreport.io.common import Source
from ragreport.measures import Measure

MEASURES = ["P@5", "R@10", "nDCG@10", "RR", "AP", "Rprec", "HitRate@3"]


def _generated(tmp_path: Path, gz: bool) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    qrels = ["".join(f"{q} 0 d{d} {g}\n" for d, g in zip(rng.choice(60, 6, replace=False),
                                                         rng.integers(0, 4, 6), strict=True))
             for q in range(300)]
    lines = []
    for q in range(320):  # 20 run-only queries
        docs = rng.choice(60, 30, replace=False)
        scores = np.round(rng.random(30), 1)  # many ties
        lines += [f"{q} Q0 d{d} {i + 1} {s} tag\n" for i, (d, s) in
                  enumerate(zip(docs, scores, strict=True))]
    qp, rp = tmp_path / "qrels.txt", tmp_path / ("run.txt.gz" if gz else "run.txt")
    qp.write_text("".join(qrels))
    data = "".join(lines).encode()
    rp.write_bytes(gzip.compress(data) if gz else data)
    return qp, rp


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("block", [2048, 1 << 20])
def test_same_numbers_as_evaluate(tmp_path: Path, gz: bool, block: int) -> None:
    qrels, run = _generated(tmp_path, gz)
    full = evaluate(qrels, run, MEASURES)
    streamed = evaluate_stream(qrels, run, MEASURES, block_bytes=block)
    assert sorted(streamed.query_ids) == sorted(full.query_ids)
    order = [full.query_ids.index(q) for q in streamed.query_ids]
    for m in MEASURES:
        np.testing.assert_allclose(streamed.values(m), full.values(m)[order], atol=1e-12)
        assert streamed.mean(m) == pytest.approx(full.mean(m), abs=1e-12)
    for fam in ("P", "R", "nDCG", "AP"):
        np.testing.assert_allclose(streamed.mean_curves[Measure(fam)], full.mean_curve(fam),
                                   atol=1e-12)
    assert streamed.counts["run_only"] == full.counts.run_only == 20
    assert streamed.counts["evaluated"] == full.counts.evaluated == 300


def test_trec_eval_suite_file(conformance_dir: Path) -> None:
    q, r = conformance_dir / "qrels.comment.test", conformance_dir / "results.comment.test"
    full = evaluate(q, r, MEASURES)
    streamed = evaluate_stream(q, r, MEASURES, block_bytes=4096)
    assert streamed.means() == pytest.approx(full.means(), abs=1e-12)


def test_ungrouped_run_is_refused(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("a 0 d1 1\nb 0 d1 1\n")
    run = tmp_path / "run.txt"
    run.write_text("a Q0 d1 1 1.0 t\nb Q0 d1 1 1.0 t\na Q0 d2 2 0.5 t\n")
    with pytest.raises(InputError, match=r"run\.txt:3: the run is not grouped by query: "
                                         r"query 'a' appears again"):
        evaluate_stream(qrels, run, ["P@1"])
    # the same file is fine for evaluate(), which reads it whole
    assert evaluate(qrels, run, ["P@1"]).mean("P@1") == 1.0


@pytest.mark.parametrize("block", [1 << 12, 1 << 20])
def test_irregular_whitespace_is_read_as_evaluate_reads_it(conformance_dir: Path,
                                                           block: int) -> None:
    q, r = conformance_dir / "qrels.test", conformance_dir / "results.test"
    streamed = evaluate_stream(q, r, MEASURES, block_bytes=block)
    assert streamed.means() == pytest.approx(evaluate(q, r, MEASURES).means(), abs=1e-12)


def test_stream_reports_a_judgment_given_twice_even_for_a_query_not_in_the_run(
        tmp_path: Path) -> None:
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\nq9 0 d5 1\nq9 0 d5 0\n")
    with pytest.raises(InputError, match=r"q\.qrels:3: document 'd5' is judged twice for query "
                                         r"'q9' \(first at line 2\)"):
        evaluate_stream(qrels, run)
    with pytest.raises(InputError, match=r"q\.qrels:3: document 'd5' is judged twice"):
        evaluate(qrels, run)


# ---- read once, front to back: "-", FIFOs, pipes, gzip (issue 12) ---------------------------

RUN_TEXT = "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq2 Q0 d3 1 1.0 t\nq2 Q0 d9 2 0.5 t\n"
QRELS_TEXT = "q1 0 d2 1\nq2 0 d3 2\nq2 0 d4 1\n"
SMALL = ["P@1", "RR", "nDCG@2"]


def _small(tmp_path: Path) -> tuple[Path, Path]:
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text(QRELS_TEXT)
    r.write_text(RUN_TEXT)
    return q, r


def _fifo(tmp_path: Path, data: bytes) -> tuple[Path, threading.Thread]:
    path = tmp_path / "run.fifo"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return path, thread


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("block", [64, 1 << 20])
def test_fifo_is_read_once_in_order(tmp_path: Path, gz: bool, block: int) -> None:
    q, r = _small(tmp_path)
    data = ("# pad\n" * 20000 + RUN_TEXT).encode()  # > 64 KiB before the first line
    fifo, thread = _fifo(tmp_path, gzip.compress(data) if gz else data)
    got = evaluate_stream(q, fifo, SMALL, block_bytes=block)
    thread.join(10)
    assert got.means() == evaluate(q, r, SMALL).means()
    assert got.run_name == "t"


def test_dash_reads_standard_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    q, r = _small(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(
        gzip.compress(b"\xef\xbb\xbf" + RUN_TEXT.encode()))))
    assert evaluate_stream(q, "-", SMALL, block_bytes=16).means() == \
        evaluate(q, r, SMALL).means()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"q1 Q0 d1 1 x t\n")))
    with pytest.raises(InputError, match=r"^<stdin>:1: score 'x' is not a number$"):
        evaluate_stream(q, "-", SMALL)
    with pytest.raises(InputError, match=r"standard input \('-'\) can be only one"):
        evaluate_stream("-", "-", SMALL)


def test_source_and_fractional_grades(tmp_path: Path) -> None:
    q, r = _small(tmp_path)
    src = Source("<mem>", RUN_TEXT.encode())
    assert evaluate_stream(q, src, SMALL).means() == evaluate(q, r, SMALL).means()
    frac = tmp_path / "frac.txt"
    frac.write_text(QRELS_TEXT.replace("q2 0 d3 2", "q2 0 d3 2.5"))
    a = evaluate_stream(frac, r, ["nDCG@2"], fractional_grades=True)
    b = evaluate(frac, r, ["nDCG@2"], fractional_grades=True)
    assert a.means() == pytest.approx(b.means(), abs=1e-12)
    assert a.means() != evaluate_stream(frac, r, ["nDCG@2"]).means()  # 2.5 read as 2


def test_stdin_through_the_command(tmp_path: Path) -> None:
    q, r = _small(tmp_path)
    out = subprocess.run([sys.executable, "-m", "ragreport", "evaluate", "--stream", str(q), "-",
                          "-m", "P@1", "-m", "RR"], input=gzip.compress(r.read_bytes()),
                         capture_output=True, check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    full = evaluate(q, r, ["P@1", "RR"])
    assert f"P@1  {full.mean('P@1'):.4f}" in out.stdout.decode()


# ---- the same errors as the normal reader, lines counted across blocks ----------------------

def _lines(n: int) -> list[str]:
    return [f"q{i // 10} Q0 d{i} {i % 10 + 1} {100 - i % 10} t\n" for i in range(n)]


def _field(lines: list[str], row: int, field: int, value: str) -> None:
    fields = lines[row].split(" ")
    fields[field] = value
    lines[row] = " ".join(fields)


BROKEN = {
    "bad-score": lambda ls: _field(ls, 150, 4, "1_000"),
    "nan": lambda ls: _field(ls, 151, 4, "nan"),
    "too-few-fields": lambda ls: ls.__setitem__(152, "q15 Q0 d152 3 98\n"),
    "invalid-utf8": lambda ls: ls.__setitem__(153, "q15 Q0 d\udcff 4 97 t\n"),
    "binary": lambda ls: ls.__setitem__(154, "q15 Q0 d\x00 5 96 t\n"),
    "duplicate-unjudged": lambda ls: _field(ls, 155, 2, "d153"),
    "duplicate-judged": lambda ls: _field(ls, 13, 2, "d12"),
}


@pytest.mark.parametrize("block", [100, 4096, 1 << 20])
@pytest.mark.parametrize("what", list(BROKEN))
def test_errors_equal_the_normal_readers(tmp_path: Path, what: str, block: int) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d12 1\n")
    lines = _lines(300)
    lines.insert(40, "# a comment\n\n")
    BROKEN[what](lines)
    data = "".join(lines).encode("utf-8", "surrogateescape")
    for name, content in (("r.txt", data), ("r.txt.gz", gzip.compress(data))):
        run = tmp_path / name
        run.write_bytes(content)
        with pytest.raises(InputError) as normal:
            evaluate(qrels, run)
        with pytest.raises(InputError) as streamed:
            evaluate_stream(qrels, run, block_bytes=block)
        assert str(streamed.value) == str(normal.value)
        assert streamed.value.line == normal.value.line is not None


@pytest.mark.parametrize("cut", [10, 200, 1000])
def test_truncated_gzip_is_the_same_error(tmp_path: Path, cut: int) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d12 1\n")
    run = tmp_path / "r.txt.gz"
    run.write_bytes(gzip.compress("".join(_lines(3000)).encode())[:cut])
    with pytest.raises(InputError) as normal:
        evaluate(qrels, run)
    with pytest.raises(InputError) as streamed:
        evaluate_stream(qrels, run, block_bytes=512)
    assert str(streamed.value) == str(normal.value)
    assert str(normal.value).startswith(f"{run}: corrupt gzip data (")


def test_a_line_longer_than_a_block_is_read_in_linear_time(tmp_path: Path) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d3 1\n")
    long_id = "x" * (10 << 20)
    run = tmp_path / "r.txt"
    run.write_text(f"q1 Q0 {long_id} 1 2 t\nq1 Q0 d1 2 1 t\nq2 Q0 d3 1 1 t\n")
    start = time.perf_counter()
    got = evaluate_stream(qrels, run, ["P@2", "RR"], block_bytes=4096)
    assert time.perf_counter() - start < 20  # 2,560 pieces of 4 KiB: joined once
    assert got.means() == evaluate(qrels, run, ["P@2", "RR"]).means() == {"P@2": 0.5,
                                                                          "RR": 0.75}


def test_fields_after_the_tag_and_irregular_space_as_evaluate(tmp_path: Path) -> None:
    q, r = _small(tmp_path)
    odd = tmp_path / "odd.txt"
    odd.write_text(RUN_TEXT.replace(" t\n", "\tt extra 1\n").replace(" Q0 ", "  Q0\t"))
    assert evaluate_stream(q, odd, SMALL, block_bytes=32).means() == \
        evaluate(q, r, SMALL).means()


def test_blocks_are_whole_lines_of_bounded_size() -> None:
    from ragreport.core.stream import _blocks

    lines = [f"q{i // 7} Q0 d{i} {i % 7 + 1} 1 t\n".encode() for i in range(5000)]
    lines[1234] = b"q176 Q0 " + b"y" * 5000 + b" 3 1 t\n"  # longer than a block
    data = b"".join(lines) + b"q9 Q0 tail 1 1 t"  # no final newline
    got = list(_blocks(io.BufferedReader(io.BytesIO(b"\xef\xbb\xbf" + data)), "x", 1000))
    assert b"".join(b for b, _, _ in got) == data
    first = 1
    for block, line, newlines in got:
        assert line == first and newlines == block.count(b"\n")
        assert block.endswith(b"\n") or block is got[-1][0]
        assert len(block) < 2000 or b"y" * 5000 in block
        first += newlines


def _no_relevant_inputs(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """Qrels and a grouped run where runs of consecutive queries have no relevant document
    (so tiny blocks hold only such queries), plus qrels-only queries with and without one,
    run-only queries and a duplicate (judged and run-only queries)."""
    rng = np.random.default_rng(12)
    qrels, run = [], []
    for q in range(30):
        # kind "mixed": queries 8-15 and every 5th have no relevant document; "common":
        # every query in the run has none (the qrels-only ones have); "none": no query has
        no_rel = (kind == "mixed" and (8 <= q < 16 or q % 5 == 0)) or kind == "none" \
            or (kind == "common" and q >= 4)
        grades = [0] * 4 if no_rel else rng.integers(0, 3, 4).tolist()
        if not no_rel and max(grades) == 0:
            grades[0] = 2
        qrels += [f"q{q} 0 d{d} {g}\n" for d, g in zip(rng.choice(12, 4, replace=False),
                                                      grades, strict=True)]
    for q in range(4, 34):  # q0-q3: qrels only; q30-q33: run only
        docs = [f"d{d}" for d in rng.choice(12, 5, replace=False)]
        if q in (9, 31):
            docs.append(docs[0])  # a duplicate (kept first; evaluate() counts it dropped)
        run += [f"q{q} Q0 {d} {i + 1} {s} t\n" for i, (d, s) in
                enumerate(zip(docs, np.round(rng.random(len(docs)), 1), strict=True))]
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(qrels))
    rp.write_text("".join(run))
    return qp, rp


@pytest.mark.parametrize("kind", ["mixed", "common", "none"])
@pytest.mark.parametrize("rel_level", [1, 2])
@pytest.mark.parametrize("no_relevant", ["zero", "skip", "raise"])
@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("block", [40, 1 << 20])
def test_no_relevant_and_complete_as_evaluate(tmp_path: Path, kind: str, rel_level: int,
                                              no_relevant: str, complete: bool,
                                              block: int) -> None:
    """Same means, per-query values, curves, every count and the same errors as evaluate(),
    whatever the blocks hold (40 bytes: about one query per block)."""
    qrels, run = _no_relevant_inputs(tmp_path, kind)
    kw = {"complete": complete, "no_relevant": no_relevant, "rel_level": rel_level,
          "duplicates": "first"}
    try:
        full = evaluate(qrels, run, SMALL, **kw)
    except InputError as exc:
        with pytest.raises(InputError) as got:
            evaluate_stream(qrels, run, SMALL, block_bytes=block, **kw)
        assert str(got.value) == str(exc)
        return
    streamed = evaluate_stream(qrels, run, SMALL, block_bytes=block, **kw)
    assert streamed.counts == dataclasses.asdict(full.counts)
    assert sorted(streamed.query_ids) == sorted(full.query_ids)
    order = [full.query_ids.index(q) for q in streamed.query_ids]
    for m in SMALL:
        np.testing.assert_allclose(streamed.values(m), full.values(m)[order], atol=1e-12)
    assert streamed.means() == pytest.approx(full.means(), abs=1e-12)
    for fam in ("P", "RR", "nDCG"):
        np.testing.assert_allclose(streamed.mean_curves[Measure(fam)],
                                   full.mean_curve(fam)[:streamed.k_max], atol=1e-12)


UNBOUNDED = ["NumQ", "NumRel", "NumRel(rel=2)", "NumRet", "NumRelRet", "NumRelRet(rel=2)",
             "Hits@3", "Hits@10", "RBP", "RBP(p=0.5)@5", "P@5", "nDCG@10", "Judged@5"]


@pytest.mark.parametrize("kind", ["mixed", "common"])
@pytest.mark.parametrize("no_relevant", ["zero", "skip"])
@pytest.mark.parametrize("block", [40, 1 << 20])
def test_complete_with_counts_and_unbounded_measures_as_evaluate(
        tmp_path: Path, kind: str, no_relevant: str, block: int) -> None:
    """complete=True with NumQ, NumRel (a qrels-only query has its judged count), NumRet and
    NumRelRet (0 for it), Hits and graded RBP: values, means and counts of evaluate()."""
    qrels, run = _no_relevant_inputs(tmp_path, kind)
    kw = {"complete": True, "no_relevant": no_relevant, "duplicates": "first"}
    full = evaluate(qrels, run, UNBOUNDED, **kw)
    streamed = evaluate_stream(qrels, run, UNBOUNDED, block_bytes=block, **kw)
    assert streamed.counts == dataclasses.asdict(full.counts)
    assert sorted(streamed.query_ids) == sorted(full.query_ids)
    order = [full.query_ids.index(q) for q in streamed.query_ids]
    for m in UNBOUNDED:
        np.testing.assert_allclose(streamed.values(m), full.values(m)[order], atol=1e-12)
    assert streamed.means() == pytest.approx(full.means(), abs=1e-12)
    only = [streamed.query_ids.index(q) for q in ("q0", "q1", "q2", "q3")
            if q in streamed.query_ids]
    assert only  # qrels-only queries: evaluated, NumQ 1, NumRel their judged count
    assert (streamed.values("NumQ")[only] == 1).all()
    assert (streamed.values("NumRet")[only] == 0).all()
    assert (streamed.values("NumRelRet")[only] == 0).all()
    assert streamed.values("NumRel")[only].sum() > 0


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragreport", *argv], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("argv", [
    ["-c", "-m", "num_q", "-m", "num_rel", "-m", "num_ret", "-m", "num_rel_ret"],
    ["-c", "--format", "trec"],
    ["-c", "-m", "NumQ", "-m", "NumRel", "-m", "Hits@5", "-m", "RBP", "--format", "trec"],
    ["--compat", "mteb", "-m", "NumQ", "-m", "NumRel"],
    ["--compat", "mteb", "-m", "NumQ", "--format", "json"],
], ids=["counts", "trec-default", "trec-counts", "mteb-text", "mteb-json"])
def test_stream_complete_counts_cli_as_without_stream(tmp_path: Path, argv: list[str]) -> None:
    """`evaluate -c --stream` accepts counts (it refused them) and prints the means of
    `evaluate -c`: --format trec output identical to the non-stream one."""
    import json

    qrels, run = _no_relevant_inputs(tmp_path, "mixed")
    args = ["evaluate", str(qrels), str(run), "--keep-first-duplicate", *argv]
    plain, streamed = _cli(*args), _cli(*args, "--stream")
    assert plain.returncode == 0, plain.stderr
    assert streamed.returncode == 0, streamed.stderr
    if "trec" in argv:
        assert streamed.stdout == plain.stdout
    elif "json" in argv:
        got, want = json.loads(streamed.stdout), json.loads(plain.stdout)
        assert got["means"] == want["means"]
    else:
        def means(text: str) -> list[str]:
            return [" ".join(line.split()) for line in text.splitlines()
                        if line.startswith(("Num", "num"))]
        assert means(streamed.stdout) == means(plain.stdout)
        assert means(streamed.stdout)


@pytest.mark.parametrize("argv", [
    ["--compat", "mteb", "-m", "nDCG@3"],
    ["--compat", "beir", "-m", "nDCG@3", "--no-ignore-identical-ids"],
    ["-c", "-m", "P@5", "--no-relevant", "skip", "-l", "2"],
    ["-m", "RR"],
], ids=["mteb", "beir-exception", "options", "plain"])
def test_stream_json_states_the_conventions(tmp_path: Path, argv: list[str]) -> None:
    """`--stream --format json` has the conventions of the non-stream JSON (the preset, its
    exceptions, complete, no_relevant ...); only the curves' width may differ."""
    import json

    qrels, run = _no_relevant_inputs(tmp_path, "mixed")
    args = ["evaluate", str(qrels), str(run), "--keep-first-duplicate", "--format", "json",
            *argv]
    plain, streamed = _cli(*args), _cli(*args, "--stream")
    assert plain.returncode == 0, plain.stderr
    assert streamed.returncode == 0, streamed.stderr
    got, want = json.loads(streamed.stdout)["conventions"], json.loads(plain.stdout)["conventions"]
    assert set(got) == set(want)
    assert got["curve_width"] == json.loads(streamed.stdout)["k_max"]
    got.pop("curve_width"), want.pop("curve_width")
    assert got == want
    if "mteb" in argv:
        assert got["compat"] == "mteb"
