"""Hostile-input catalogue: memory bounded by the input, gains that never overflow (issue 12).

A number the user types (``--k-max 1000000000``, ``P@9007199254740992``, a target on
``P@1000000000``) or one query 200,000 deep among 5,000 short ones must not size an array:
every row runs under an address-space limit (``RLIMIT_AS``) that an ordinary run of the
command fits in (measured: about 300 MiB for ``evaluate``, 400 MiB for ``report``/``check``,
up to 900 MiB for ``--stream`` with pyarrow's thread pools, a little more on the skewed
input), while a regression that allocates queries x K cells (5,000 x 200,000 float64 = 8 GB,
or a 1e9-cell curve) fails. Legal inputs must give trec_eval's numbers (pytrec_eval).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile import QRELS, RUN, Case, CaseResult, pytrec_eval_means, run_case, trec_means

#: Address-space limits (MiB): two to three times what an ordinary run needs (thread pools
#: and allocator arenas reserve address space, so the need varies from run to run), far below
#: the 8 GB of one 1e9-cell float64 array.
MEM = 2048
MEM_SKEW = 3072
#: Fewer glibc malloc arenas (each reserves 64 MiB of address space per thread): steadier.
ENV = {"MALLOC_ARENA_MAX": "2"}

K9 = "1000000000"
K53 = str(2**53)
TREC_NAMES = ["P_5", "recall_10", "ndcg", "map", "recip_rank"]


def _dicts(qrels: str, run: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    q: dict[str, dict[str, int]] = {}
    for line in qrels.splitlines():
        f = line.split()
        q.setdefault(f[0], {})[f[2]] = int(f[3])
    r: dict[str, dict[str, float]] = {}
    for line in run.splitlines():
        f = line.split()
        r.setdefault(f[0], {})[f[2]] = float(f[4])
    return q, r


@functools.cache
def skewed() -> tuple[str, str]:
    """5,000 queries: q17 retrieves 200,000 documents, q4242 has 200,000 judged, the others
    retrieve 10 and have 3 judged (grades 1-3)."""
    run = []
    for q in range(5000):
        n = 200_000 if q == 17 else 10
        run.append("".join(f"q{q} Q0 d{i} {i + 1} {n - i} t\n" for i in range(n)))
    qrels = []
    for q in range(5000):
        n = 200_000 if q == 4242 else 3
        qrels.append("".join(f"q{q} 0 d{3 * i} {1 + i % 3}\n" for i in range(n)))
    return "".join(qrels), "".join(run)


@functools.cache
def _expected(qrels: str, run: str) -> dict[str, float]:
    q, r = _dicts(qrels, run)
    return pytrec_eval_means(q, r, TREC_NAMES)


def same_as_pytrec_eval(skew: bool = False, extra: Callable[[dict[str, float]], None] | None
                        = None) -> Callable[[CaseResult], None]:
    """A check: the trec-format means equal pytrec_eval's (and ``extra`` holds)."""

    def check(result: CaseResult) -> None:
        want = _expected(*skewed()) if skew else _expected(QRELS, RUN)
        got = trec_means(result.stdout)
        for name in TREC_NAMES:
            assert got[name] == pytest.approx(want[name], abs=6e-5), (name, result.stdout)
        if extra is not None:
            extra(got)

    return check


def trec_defaults(result: CaseResult) -> None:
    """``--format trec`` without -m: trec_eval's default measures, cutoffs up to 1000 (past
    the 10-deep rankings), equal to pytrec_eval's."""
    names = ["P_1000", "recall_1000", "ndcg_cut_1000", "P_200", "ndcg_cut_30", "success_10"]
    q, r = _dicts(*skewed())
    want = pytrec_eval_means(q, r, names)
    got = trec_means(result.stdout)
    for name in names:
        assert got[name] == pytest.approx(want[name], abs=6e-5), (name, result.stdout)


def huge_cutoffs(got: dict[str, float]) -> None:
    """Past the end of every ranking: P@K = relevant retrieved / K, recall and nDCG are those
    of the whole ranking (every judged relevant document fits in K)."""
    want = _expected(QRELS, RUN)
    assert got[f"P_{K9}"] == 0.0  # 5 relevant retrieved / 3 queries / 1e9, shown to 4 places
    assert got[f"recall_{K9}"] == pytest.approx(want["recall_10"], abs=6e-5)
    assert got[f"ndcg_cut_{K9}"] == pytest.approx(want["ndcg"], abs=6e-5)
    assert got[f"ndcg_cut_{K53}"] == pytest.approx(want["ndcg"], abs=6e-5)
    assert got[f"map_cut_{K9}"] == pytest.approx(want["map"], abs=6e-5)


def json_k_max(width: int, asked: int) -> Callable[[CaseResult], None]:
    """A check: the JSON says the curves' width and the k_max asked for."""

    def check(result: CaseResult) -> None:
        doc = json.loads(result.stdout)
        assert doc["k_max"] == width, doc
        assert doc["conventions"]["k_max"] == asked
        assert doc["conventions"]["curve_width"] == width

    return check


def report_json(width: int, curves_note: bool) -> Callable[[CaseResult], None]:
    """A check: the report's JSON curves stop at ``width`` and the conventions say why."""

    def check(result: CaseResult) -> None:
        doc = json.loads((result.tmp / "out.json").read_text())
        assert doc["k_max"] == width
        for series in doc["curves"].values():
            assert all(len(v) == width for v in series.values())
        assert ("curves" in doc["conventions"]) is curves_note
        assert "NaN" not in (result.tmp / "out.json").read_text()

    return check


def exp_gain_values(result: CaseResult) -> None:
    got = trec_means(result.stdout)
    v = got["ndcg(gain=exp)"]
    assert 0.0 <= v <= 1.0 and math.isfinite(v), result.stdout
    assert "nan" not in result.stdout.lower()
    # q1: ranks d2 (1999), d3 (1), d1 (2000); judged 2000, 1999, 1:
    # DCG / IDCG = (2^1999 + 2^2000 / 2) / (2^2000 + 2^1999 / log2 3) (the 1s vanish)
    q1 = 1.0 / (1.0 + 0.5 / math.log2(3))
    assert v == pytest.approx((q1 + 1.0) / 2, abs=6e-5)


def stream_skew_files() -> dict[str, str]:
    q, r = skewed()
    return {"qrels.txt": q, "run.txt": r}


SMALL = {"qrels.txt": QRELS, "run.txt": RUN}
TARGETS_HUGE = {**SMALL, "targets.toml": f'"P@{K9}" = 0.5\n"nDCG@{K53}" = "> 0.1"\n'}
TARGETS_PASS = {**SMALL, "targets.toml": f'"R@{K9}" = ">= 0.5"\n"HitRate@{K9}" = 0.9\n'}
TARGETS_2_53 = {**SMALL, "targets.toml": f'"R@{K53}" = ">= 0.5"\n"HitRate@{K53}" = 0.9\n'}
GRADES_2000 = {"qrels.txt": "q1 0 d1 2000\nq1 0 d2 1999\nq1 0 d3 1\nq2 0 x 3\n",
               "run.txt": "q1 Q0 d2 1 3 t\nq1 Q0 d3 2 2 t\nq1 Q0 d1 3 1 t\nq2 Q0 x 1 1 t\n"}
TREC = ["--format", "trec", *(a for m in ("P@5", "R@10", "nDCG", "AP", "RR")
                              for a in ("-m", m))]
HUGE = [a for m in (f"P@{K9}", f"R@{K9}", f"nDCG@{K9}", f"nDCG@{K53}", f"AP@{K9}")
        for a in ("-m", m)]


CASES = [
    # --k-max far beyond every ranking: the curves stop at max(20, deepest ranking)
    Case("evaluate-kmax-1e9", ["evaluate", "qrels.txt", "run.txt", "--k-max", K9, *TREC],
         SMALL, exit=0, max_memory_mib=MEM, check=same_as_pytrec_eval()),
    Case("evaluate-kmax-1e9-json", ["evaluate", "qrels.txt", "run.txt", "--k-max", K9,
                                    "--format", "json"],
         SMALL, exit=0, max_memory_mib=MEM, check=json_k_max(20, 10**9)),
    Case("evaluate-kmax-2**31", ["evaluate", "qrels.txt", "run.txt", "--k-max",
                                 str(2**31 - 1), *TREC],
         SMALL, exit=0, max_memory_mib=MEM, check=same_as_pytrec_eval()),
    Case("evaluate-kmax-2**53", ["evaluate", "qrels.txt", "run.txt", "--k-max", K53],
         SMALL, exit=2, max_memory_mib=MEM, stderr=r"--k-max: must be at most"),
    # cutoffs up to 2**53 in -m: computed from the whole rankings
    Case("evaluate-huge-cutoffs-trec", ["evaluate", "qrels.txt", "run.txt", *TREC, *HUGE],
         SMALL, exit=0, max_memory_mib=MEM, check=same_as_pytrec_eval(extra=huge_cutoffs)),
    Case("evaluate-trec-cutoff-list", ["evaluate", "qrels.txt", "run.txt", "--format", "trec",
                                       "-m", f"P.5,{K9}", "-m", f"ndcg_cut.{K53}"],
         SMALL, exit=0, max_memory_mib=MEM, stdout=rf"P_{K9}\s+all\s+0\.0000"),
    Case("evaluate-cutoff-beyond-2**53", ["evaluate", "qrels.txt", "run.txt",
                                          "-m", "P@100000000000000000"],
         SMALL, exit=2, max_memory_mib=MEM, stderr=r"cutoff.*2\*\*53"),
    Case("evaluate-kmax-below-cutoff", ["evaluate", "qrels.txt", "run.txt", "-m", f"P@{K9}",
                                        "--k-max", "5"],
         SMALL, exit=2, max_memory_mib=MEM, stderr=r"k_max \(5\) is smaller than the cutoff"),
    # report and check with such K: curves of 20, the JSON says so
    Case("report-kmax-1e9", ["report", "qrels.txt", "run.txt", "--k-max", K9, "--json",
                             "out.json", "--markdown", "out.md", "--resamples", "200"],
         SMALL, exit=0, max_memory_mib=MEM, check=report_json(20, True)),
    Case("report-huge-cutoff-html", ["report", "qrels.txt", "run.txt", "-m", f"nDCG@{K53}",
                                     "--html", "out.html", "--json", "out.json",
                                     "--resamples", "200", "--jobs", "1"],
         SMALL, exit=0, max_memory_mib=MEM, check=report_json(20, True)),
    Case("check-kmax-1e9", ["check", "qrels.txt", "run.txt", "--targets", "targets.toml",
                            "--k-max", K9, "--resamples", "200"],
         TARGETS_PASS, exit=0, max_memory_mib=MEM),
    Case("check-target-huge-K-fails", ["check", "qrels.txt", "run.txt", "--targets",
                                       "targets.toml", "--resamples", "200"],
         TARGETS_HUGE, exit=1, max_memory_mib=MEM, stdout=rf"P@{K9}"),
    Case("check-target-huge-K-passes", ["check", "qrels.txt", "run.txt", "--targets",
                                        "targets.toml", "--no-stats"],
         TARGETS_2_53, exit=0, max_memory_mib=MEM),
    Case("check-target-2**53-kmax-1e9", ["check", "qrels.txt", "run.txt", "--targets",
                                         "targets.toml", "--k-max", K9],
         TARGETS_2_53, exit=2, max_memory_mib=MEM,
         stderr=r"k_max \(1000000000\) is smaller than the cutoff of R@9007199254740992"),
    # streaming: the mean curves stop at 100 whatever k_max is
    Case("stream-kmax-1e9", ["evaluate", "--stream", "qrels.txt", "run.txt", "--k-max", K9,
                             *TREC],
         SMALL, exit=0, max_memory_mib=MEM, check=same_as_pytrec_eval()),
    Case("stream-huge-cutoffs", ["evaluate", "--stream", "qrels.txt", "run.txt", *TREC,
                                 *HUGE],
         SMALL, exit=0, max_memory_mib=MEM, check=same_as_pytrec_eval(extra=huge_cutoffs)),
    # one query 200,000 deep and one with 200,000 judged, among 5,000 short ones
    Case("skewed-evaluate", ["evaluate", "qrels.txt", "run.txt", *TREC],
         stream_skew_files(), exit=0, max_memory_mib=MEM_SKEW,
         check=same_as_pytrec_eval(skew=True)),
    Case("skewed-evaluate-kmax-1e9", ["evaluate", "qrels.txt", "run.txt", "--k-max", K9,
                                      "--format", "json"],
         stream_skew_files(), exit=0, max_memory_mib=MEM_SKEW,
         check=json_k_max((1 << 20) // 5000, 10**9)),
    Case("skewed-huge-cutoffs", ["evaluate", "qrels.txt", "run.txt", *TREC, *HUGE],
         stream_skew_files(), exit=0, max_memory_mib=MEM_SKEW,
         check=same_as_pytrec_eval(skew=True)),
    Case("skewed-report-kmax-1e9", ["report", "qrels.txt", "run.txt", "--k-max", K9,
                                    "--json", "out.json", "--resamples", "100", "--jobs", "1"],
         stream_skew_files(), exit=0, max_memory_mib=MEM_SKEW,
         check=report_json((1 << 20) // 5000, True)),
    Case("skewed-check-target-huge-K", ["check", "qrels.txt", "run.txt", "--targets",
                                        "targets.toml", "--no-stats"],
         {**stream_skew_files(), "targets.toml": f'"P@{K9}" = 0.5\n'},
         exit=1, max_memory_mib=MEM_SKEW, stdout=rf"P@{K9}"),
    Case("skewed-stream-kmax-1e9", ["evaluate", "--stream", "qrels.txt", "run.txt",
                                    "--k-max", K9, *TREC],
         stream_skew_files(), exit=0, max_memory_mib=MEM_SKEW,
         check=same_as_pytrec_eval(skew=True)),
    Case("skewed-trec-default-measures", ["evaluate", "qrels.txt", "run.txt", "--format",
                                          "trec"],
         stream_skew_files(), exit=0, max_memory_mib=MEM_SKEW, check=trec_defaults),
    Case("skewed-stream-huge-cutoffs", ["evaluate", "--stream", "qrels.txt", "run.txt", *TREC,
                                        *HUGE],
         stream_skew_files(), exit=0, max_memory_mib=MEM_SKEW,
         check=same_as_pytrec_eval(skew=True)),
    # gains never overflow to NaN
    Case("exp-gain-grade-2000", ["evaluate", "qrels.txt", "run.txt", "--format", "trec",
                                 "-m", "nDCG(gain=exp)", "-m", "nDCG(gain=exp)@2"],
         GRADES_2000, exit=0, max_memory_mib=MEM, check=exp_gain_values),
]


CASES = [dataclasses.replace(c, env={**ENV, **c.env}) for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)
