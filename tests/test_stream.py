"""Streaming evaluation gives the same numbers as evaluate(), in blocks, or refuses."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from ragreport import evaluate
from ragreport.errors import InputError
from ragreport.measures import Measure
from ragreport.stream import evaluate_stream

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
