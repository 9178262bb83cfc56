"""Hostile-input catalogue: Parquet inputs and ``--columns`` through the command line (issue 15).

Parquet qrels, runs and texts are read by content (the ``PAR1`` magic bytes), from a file or
standard input, with their columns found from the common layouts or named with ``--columns``.
Legal inputs must give the TREC files' numbers (and pytrec_eval's); bad ones one stderr line
naming the file and the row.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import QRELS, RUN, Case, CaseResult, pytrec_eval_means, run_case, trec_means

MEASURES = ["-m", "P@5", "-m", "R@10", "-m", "nDCG", "-m", "AP", "-m", "RR", "--format", "trec"]
TREC_NAMES = ["P_5", "recall_10", "ndcg", "map", "recip_rank"]


def _rows(text: str, kind: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def parquet(columns: dict[str, Any]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


_Q = _rows(QRELS, "qrels")
_R = _rows(RUN, "run")
#: The catalogue's qrels in MTEB's layout (integer grades), its run in TREC names.
QRELS_PQ = parquet({"query-id": [r[0] for r in _Q], "corpus-id": [r[2] for r in _Q],
                    "score": [int(r[3]) for r in _Q]})
RUN_PQ = parquet({"qid": [r[0] for r in _R], "q0": ["Q0"] * len(_R), "docid": [r[2] for r in _R],
                  "rank": [int(r[3]) for r in _R], "score": [float(r[4]) for r in _R],
                  "tag": [r[5] for r in _R]})
#: The run under names no layout has (needs --columns).
RUN_ODD = parquet({"t": [r[0] for r in _R], "p": [r[2] for r in _R],
                   "bm25": [float(r[4]) for r in _R]})


def _run_pq(**changes: list[Any]) -> bytes:
    cols: dict[str, Any] = {"qid": [r[0] for r in _R], "docid": [r[2] for r in _R],
                            "score": [float(r[4]) for r in _R]}
    cols.update(changes)
    return parquet(cols)


def same_as_pytrec_eval() -> Callable[[CaseResult], None]:
    q: dict[str, dict[str, int]] = {}
    for f in _Q:
        q.setdefault(f[0], {})[f[2]] = math.trunc(float(f[3]))
    r: dict[str, dict[str, float]] = {}
    for f in _R:
        r.setdefault(f[0], {})[f[2]] = float(f[4])
    want = pytrec_eval_means(q, r, TREC_NAMES)

    def check(result: CaseResult) -> None:
        got = trec_means(result.stdout)
        for name in TREC_NAMES:
            assert got[name] == pytest.approx(want[name], abs=6e-5), (name, result.stdout)

    return check


def _report_written(result: CaseResult) -> None:
    text = (result.tmp / "out.md").read_text()
    assert "tag" in text  # the run's name: its tag column


CASES = [
    Case("parquet-qrels-and-run", ["evaluate", *MEASURES, "q.parquet", "r.parquet"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_PQ}, exit=0, check=same_as_pytrec_eval()),
    Case("parquet-run-trec-qrels", ["evaluate", *MEASURES, "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS, "r.parquet": RUN_PQ}, exit=0, check=same_as_pytrec_eval()),
    Case("parquet-run-on-stdin", ["evaluate", *MEASURES, "qrels.txt", "-"],
         {"qrels.txt": QRELS}, stdin=RUN_PQ, exit=0, check=same_as_pytrec_eval()),
    Case("parquet-odd-names-with-columns",
         ["evaluate", *MEASURES, "q.parquet", "r.parquet", "--columns",
          "qid=t, docid=p, score=bm25"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_ODD}, exit=0, check=same_as_pytrec_eval()),
    Case("parquet-qrels-rel-column",
         ["evaluate", *MEASURES, "q.parquet", "run.txt", "--columns", "rel=g,qid=q,docid=d"],
         {"q.parquet": parquet({"q": [r[0] for r in _Q], "d": [r[2] for r in _Q],
                                "g": [r[3] for r in _Q], "relevance": [0] * len(_Q)}),
          "run.txt": RUN}, exit=0, check=same_as_pytrec_eval()),
    Case("parquet-report-with-parquet-queries",
         ["report", "q.parquet", "r.parquet", "--queries", "queries.parquet", "--markdown",
          "out.md", "--no-stats"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_PQ,
          "queries.parquet": parquet({"_id": ["q1", "q2", "q3"], "text": ["a", "b", "c"]})},
         exit=0, check=_report_written),
    # the columns cannot be told
    Case("parquet-odd-names-without-columns", ["evaluate", "q.parquet", "r.parquet"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_ODD},
         stderr=r"^ragreport: error: r\.parquet: the file has no query id column \(its "
                r"columns: 't', 'p', 'bm25'; layouts read: TREC .*--columns qid=NAME"),
    Case("parquet-ambiguous-grade", ["evaluate", "q.parquet", "run.txt"],
         {"q.parquet": parquet({"qid": ["q1"], "docid": ["d1"], "score": [1],
                                "relevance": [1]}), "run.txt": RUN},
         stderr=r"^ragreport: error: q\.parquet: the file has several grade columns "
                r"\('relevance', 'score'\); name the one to read with --columns relevance=NAME"),
    Case("columns-names-no-column", ["evaluate", "q.parquet", "r.parquet", "--columns",
                                     "score=similarity"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_PQ},
         stderr=r"^ragreport: error: --columns score=similarity: no Parquet input has a "
                r"column 'similarity' \(columns of q\.parquet: 'query-id'.*; r\.parquet: 'qid'"),
    Case("columns-unknown-key", ["evaluate", "q.parquet", "r.parquet", "--columns", "doc=x,a=b"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_PQ},
         stderr=r"^ragreport: error: columns: unknown key 'a'; the keys are qid, docid"),
    Case("columns-without-a-parquet-input", ["evaluate", "qrels.txt", "run.txt", "--columns",
                                             "qid=a"],
         {"qrels.txt": QRELS, "run.txt": RUN},
         stderr=r"^ragreport: error: --columns applies to Parquet inputs, and no QRELS or RUN "
                r"is a Parquet file$"),
    Case("parquet-run-with-stream", ["evaluate", "--stream", "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS, "r.parquet": RUN_PQ},
         stderr=r"^ragreport: error: --stream reads text runs in blocks; a Parquet run is read "
                r"at once: drop --stream$"),
    # bad values: the file and the row
    Case("parquet-null-query-id", ["evaluate", "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS, "r.parquet": _run_pq(qid=["q1", None] + [r[0] for r in _R[2:]])},
         stderr=r"^ragreport: error: r\.parquet: row 2: query id is null$"),
    Case("parquet-nan-score", ["evaluate", "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS,
          "r.parquet": _run_pq(score=[3.0, 2.0, float("nan")] + [1.0] * (len(_R) - 3))},
         stderr=r"^ragreport: error: r\.parquet: row 3: score nan of document 'd9' \(query "
                r"'q1'\) is not a finite number$"),
    Case("parquet-text-score", ["evaluate", "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS,
          "r.parquet": _run_pq(score=["3", "2", "1"] + ["0x10"] + ["1"] * (len(_R) - 4))},
         stderr=r"^ragreport: error: r\.parquet: row 4: score '0x10' of document 'd5' \(query "
                r"'q2'\) is not a number$"),
    Case("parquet-float-ids", ["evaluate", "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS, "r.parquet": _run_pq(qid=[1.0] * len(_R))},
         stderr=r"^ragreport: error: r\.parquet: query id column 'qid' holds double values; "
                r"ids must be text or integers$"),
    Case("parquet-float-ids-with-a-missing-one", ["evaluate", "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS,  # pandas writes an integer column with a gap as float, NaN
          "r.parquet": _run_pq(qid=[1.0, 1.0, float("nan")] + [2.0] * (len(_R) - 3))},
         stderr=r"^ragreport: error: r\.parquet: row 3: query id is missing \(null or NaN; "
                r"column 'qid'\)$"),
    Case("parquet-duplicate-document", ["evaluate", "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS,
          "r.parquet": _run_pq(docid=["d1", "d2", "d1"] + [r[2] for r in _R[3:]])},
         stderr=r"^ragreport: error: r\.parquet: row 3: document 'd1' appears twice for query "
                r"'q1' \(first at row 1\); pass duplicates='first' \(--keep-first-duplicate\)"),
    Case("parquet-duplicate-document-kept-first",
         ["evaluate", "qrels.txt", "r.parquet", "--keep-first-duplicate"],
         {"qrels.txt": QRELS,
          "r.parquet": _run_pq(docid=["d1", "d2", "d1"] + [r[2] for r in _R[3:]])}, exit=0,
         stdout=r"duplicates dropped: 1"),
    Case("parquet-judged-twice", ["evaluate", "q.parquet", "run.txt"],
         {"q.parquet": parquet({"qid": ["q1", "q1"], "docid": ["d1", "d1"], "rel": [1, 2]}),
          "run.txt": RUN},
         stderr=r"^ragreport: error: q\.parquet: row 2: document 'd1' is judged twice for "
                r"query 'q1' \(first at row 1\)$"),
    Case("parquet-corrupt", ["evaluate", "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS, "r.parquet": b"PAR1" + b"\x00" * 64},
         stderr=r"^ragreport: error: r\.parquet: cannot read as Parquet: "),
    Case("parquet-truncated", ["evaluate", "qrels.txt", "r.parquet"],
         {"qrels.txt": QRELS, "r.parquet": RUN_PQ[: len(RUN_PQ) // 2]},
         stderr=r"^ragreport: error: r\.parquet: cannot read as Parquet: "),
    Case("parquet-queries-null-text",
         ["report", "qrels.txt", "run.txt", "--queries", "queries.parquet", "--markdown",
          "out.md", "--no-stats"],
         {"qrels.txt": QRELS, "run.txt": RUN,
          "queries.parquet": parquet({"_id": ["q1", "q2"], "text": ["a", None]})},
         stderr=r"^ragreport: error: queries\.parquet: row 2: text is null$"),
]


#: A stand-in ``ir_datasets`` module put in the working folder (first on ``sys.path`` for
#: ``python -m``): no network. ``irds:catalogue`` holds the catalogue's qrels; any other id
#: is unknown (ir_datasets raises KeyError).
FAKE_IR_DATASETS = f"""
from collections import namedtuple
TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")
ROWS = [TrecQrel(r[0], r[2], int(r[3]), r[1]) for r in {_Q!r}]
class Dataset:
    def qrels_iter(self):
        return iter(ROWS)
def load(name):
    if name != "catalogue":
        raise KeyError(name)
    return Dataset()
"""
#: An ``ir_datasets`` that is not installed.
NO_IR_DATASETS = "raise ImportError(\"No module named 'ir_datasets'\")\n"


def _irds_report(result: CaseResult) -> None:
    import json

    data = json.loads((result.tmp / "out.json").read_text())
    qrels = next(f for f in data["inputs"] if f["role"] == "qrels")
    assert qrels["name"] == "irds:catalogue" and len(qrels["sha256"]) == 64


CASES += [
    # ir_datasets ids in report and check (as in evaluate)
    Case("irds-qrels-report", ["report", "irds:catalogue", "run.txt", "--no-stats", "--json",
                               "out.json"],
         {"ir_datasets.py": FAKE_IR_DATASETS, "run.txt": RUN}, exit=0, check=_irds_report),
    Case("irds-qrels-check", ["check", "irds:catalogue", "run.txt", "--no-stats", "--json",
                              "out.json"],
         {"ir_datasets.py": FAKE_IR_DATASETS, "run.txt": RUN}, exit=1,  # default targets
         stdout=r"FAILED P@3: 0\.5556 is not > 0\.8 \(run 'tag'\)", check=_irds_report),
    Case("irds-unknown-id-report", ["report", "irds:nope", "run.txt", "--no-stats", "--json",
                                    "out.json"],
         {"ir_datasets.py": FAKE_IR_DATASETS, "run.txt": RUN},
         stderr=r"^ragreport: error: irds:nope: ir_datasets has no dataset 'nope'$"),
    Case("irds-unknown-id-check", ["check", "qrels.txt", "irds:nope", "--no-stats"],
         {"ir_datasets.py": FAKE_IR_DATASETS, "qrels.txt": QRELS},
         stderr=r"^ragreport: error: irds:nope: ir_datasets has no dataset 'nope'$"),
    Case("irds-not-installed-report", ["report", "irds:catalogue", "run.txt", "--no-stats",
                                       "--json", "out.json"],
         {"ir_datasets.py": NO_IR_DATASETS, "run.txt": RUN},
         stderr=r"^ragreport: error: reading 'irds:catalogue' needs ir_datasets: pip install "
                r"ir_datasets$"),
    Case("irds-not-installed-check", ["check", "irds:catalogue", "run.txt", "--no-stats"],
         {"ir_datasets.py": NO_IR_DATASETS, "run.txt": RUN},
         stderr=r"^ragreport: error: reading 'irds:catalogue' needs ir_datasets: pip install "
                r"ir_datasets$"),
]

#: The catalogue's run in MTEB's layout (query-id, corpus-id, score), dense-retrieval scores:
#: the same columns as its qrels, so the two are easily given in the wrong order.
RUN_MTEB = parquet({"query-id": [r[0] for r in _R], "corpus-id": [r[2] for r in _R],
                    "score": [float(r[4]) / 3.7 for r in _R]})
_SWAPPED = (r"r\.parquet: row 1: the qrels' grade column 'score' holds 0\.81\d+ \(document "
            r"'d1', query 'q1'\), not a whole number: is this the run\? give the qrels first, "
            r"then the run")

CASES += [
    # the MTEB layout's qrels and run swapped: refused with the fix, never scored 0 (exit 0)
    Case("mteb-qrels-and-run-swapped", ["evaluate", "r.parquet", "q.parquet"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_MTEB}, stderr=_SWAPPED),
    Case("mteb-swapped-check", ["check", "r.parquet", "q.parquet", "--no-stats", "--json",
                                "out.json"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_MTEB, "out.json": "old"}, stderr=_SWAPPED),
    Case("mteb-swapped-report", ["report", "r.parquet", "q.parquet", "--no-stats",
                                 "--markdown", "out.md"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_MTEB}, stderr=_SWAPPED),
    Case("mteb-swapped-stream", ["evaluate", "--stream", "r.parquet", "qrels.txt"],
         {"qrels.txt": QRELS, "r.parquet": RUN_MTEB}, stderr=r"r\.parquet: row 1: the qrels' "
                                                             r"grade column 'score' holds"),
    Case("mteb-in-order", ["evaluate", *MEASURES, "q.parquet", "r.parquet"],
         {"q.parquet": QRELS_PQ, "r.parquet": RUN_MTEB}, exit=0, check=same_as_pytrec_eval()),
    # whole grades stored as floats are grades; a relevance column keeps trec_eval's reading
    Case("mteb-qrels-float-whole-grades", ["evaluate", *MEASURES, "q.parquet", "r.parquet"],
         {"q.parquet": parquet({"query-id": [r[0] for r in _Q], "corpus-id": [r[2] for r in _Q],
                                "score": [float(r[3]) for r in _Q]}),
          "r.parquet": RUN_MTEB}, exit=0, check=same_as_pytrec_eval()),
    Case("relevance-column-fraction-truncated",
         ["evaluate", "-m", "RR", "q.parquet", "run.txt"],
         {"q.parquet": parquet({"qid": ["q1"], "docid": ["d2"], "relevance": [1.7]}),
          "run.txt": RUN}, exit=0, stdout=r"RR\s+0\.5000"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Any) -> None:
    run_case(case, tmp_path)
