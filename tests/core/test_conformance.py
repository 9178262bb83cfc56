"""Conformance with trec_eval's own test suite (../shared/conformance/trec_eval).

For each command of the suite, every value of the measures ragreport implements (per query and
the ``all`` row) must equal trec_eval's output to 4 decimals, and counts exactly.
"""

from __future__ import annotations

import io
from collections import defaultdict
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from ragreport import evaluate
from ragreport.cli.app import main
from ragreport.errors import MeasureError
from ragreport.measures import Measure, parse_measures

CASES = [
    # (expected output, qrels, run, options)
    ("out.test", "qrels.test", "results.test", {}),
    ("out.test.a", "qrels.test", "results.test", {}),
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"complete": True}),
    ("out.test.aqcM", "qrels.test", "results.trunc", {"complete": True, "max_depth": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"rel_level": 2}),
    ("out.test.meas_params", "qrels.test", "results.test", {}),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", {}),
]

OURS = ("P_", "recall_", "recip_rank", "ndcg", "success_", "map", "Rprec", "num_ret",
        "num_rel", "num_rel_ret")


def parse_expected(path: Path) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        name, qid, value = line.split("\t")
        out[name.strip()][qid] = value.strip()
    return out


def our_measures(names: list[str]) -> dict[str, Measure]:
    found: dict[str, Measure] = {}
    for name in names:
        if not name.startswith(OURS):
            continue
        try:
            ms = parse_measures(name)
        except MeasureError:
            continue  # trec_eval measures ragreport does not implement (Rprec_mult_*, ...)
        if len(ms) == 1:
            found[name] = ms[0]
    return found


@pytest.mark.parametrize(("expected", "qrels", "run", "options"), CASES,
                         ids=[c[0] for c in CASES])
def test_values_equal_trec_eval(conformance_dir: Path, expected: str, qrels: str, run: str,
                                options: dict[str, object]) -> None:
    exp = parse_expected(conformance_dir / expected)
    measures = our_measures(list(exp))
    assert len(measures) >= 10 if expected != "out.test.meas_params" else len(measures) >= 4
    res = evaluate(conformance_dir / qrels, conformance_dir / run, list(measures.values()),
                   **options)  # type: ignore[arg-type]
    if "num_q" in exp:
        assert str(res.n_queries) == exp["num_q"]["all"]
    checked = 0
    mismatches = []
    for name, m in measures.items():
        values = res.per_query(m)
        for qid, want in exp[name].items():
            if qid == "all":
                got = (str(round(sum(values.values()))) if not m.family.bounded
                       else f"{res.mean(m):.4f}")
            else:
                got = (str(round(values[qid])) if not m.family.bounded
                       else f"{values[qid]:.4f}")
            checked += 1
            if got != want:
                mismatches.append(f"{name} {qid}: trec_eval {want}, ragreport {got}")
    assert not mismatches, "\n".join(mismatches[:20])
    assert checked >= len(measures)


def test_families_covered(conformance_dir: Path) -> None:
    """The suite exercises every family the issue names."""
    names = set(parse_expected(conformance_dir / "out.test.aq"))
    covered = {m.name for m in our_measures(sorted(names)).values()}
    assert {"P", "R", "RR", "nDCG", "HitRate", "AP", "Rprec"} <= covered


@pytest.mark.parametrize(("expected", "args"), [
    ("out.test.aq", ["-q"]),
    ("out.test.aqc", ["-q", "-c"]),
    ("out.test.aqcM", ["-q", "-c", "-M", "100"]),
    ("out.test.aql", ["-q", "-l", "2"]),
    ("out.comment.test", ["-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map",
                          "-m", "Rprec", "-m", "recip_rank",
                          "-m", "P.5,10,15,20,30,100,200,500,1000"]),
])
def test_trec_format_lines_are_trec_eval_lines(conformance_dir: Path, expected: str,
                                               args: list[str]) -> None:
    """Every line ``--format trec`` prints is byte-identical to a line trec_eval printed."""
    qrels, run = next((c[1], c[2]) for c in CASES if c[0] == expected)
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(["evaluate", str(conformance_dir / qrels), str(conformance_dir / run),
                     "--format", "trec", *args])
    assert code == 0
    ours = buf.getvalue().splitlines()
    theirs = set((conformance_dir / expected).read_text().splitlines())
    assert len(ours) >= 15
    missing = [line for line in ours if line not in theirs]
    assert not missing, missing[:10]
    if "-q" in args:  # per-query blocks come before the 'all' block, as in trec_eval
        qids = [line.split("\t")[1] for line in ours]
        assert qids.index("all") > 0 and set(qids[qids.index("all"):]) == {"all"}
