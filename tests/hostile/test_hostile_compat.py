"""Hostile-input catalogue, area "compat": ``--compat``, ``--ignore-identical-ids`` and the same
settings written beside the targets.

Each row runs ``ragreport`` in a fresh folder (see ``tests/hostile.py``): a refusal exits 2 with
one stderr line naming what was received (both values when two places disagree); a legal
combination gives the peer's numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import pytrec_eval
from hostile import QRELS, RUN, Case, CaseResult, run_case

FILES = {"qrels.txt": QRELS, "run.txt": RUN}
EVAL = ["evaluate", "qrels.txt", "run.txt"]
CHECK = ["check", "qrels.txt", "run.txt", "--no-stats", "--jobs", "1"]
# every retrieved document carries its query's id
SELF_QRELS = "a 0 a 1\na 0 x 1\nb 0 b 2\n"
SELF_RUN = "a Q0 a 1 2.0 t\nb Q0 b 1 1.0 t\n"


def _dicts(qrels: str, run: str) -> tuple[dict[str, dict[str, int]],
                                         dict[str, dict[str, float]]]:
    q: dict[str, dict[str, int]] = {}
    for line in qrels.splitlines():
        qid, _, d, g = line.split()
        q.setdefault(qid, {})[d] = int(g)
    r: dict[str, dict[str, float]] = {}
    for line in run.splitlines():
        qid, _, d, _, s, _ = line.split()
        r.setdefault(qid, {})[d] = float(s)
    return q, r


def _beir_ndcg3(r: CaseResult) -> None:
    """BEIR's number: pytrec_eval's mean over the queries it evaluated, rounded to 5."""
    qrels, run = _dicts(QRELS, RUN)
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.3"}).evaluate(run)
    expected = round(sum(v["ndcg_cut_3"] for v in scores.values()) / len(scores), 5)
    assert json.loads(r.stdout)["means"] == {"nDCG@3": expected}


CLOSE_RUN = "q Q0 d7 1 0.500000001 t\nq Q0 d8 2 0.5 t\n"


def _means(expected: dict[str, float]) -> Callable[[CaseResult], None]:
    def check(r: CaseResult) -> None:
        assert json.loads(r.stdout)["means"] == expected
    return check


def _report_json(key: str, pattern: str) -> Callable[[CaseResult], None]:
    def check(r: CaseResult) -> None:
        doc = json.loads((r.tmp / "r.json").read_text())
        assert pattern in json.dumps(doc[key]), doc[key]
    return check


def _no_convention(key: str) -> Callable[[CaseResult], None]:
    def check(r: CaseResult) -> None:
        doc = json.loads((r.tmp / "r.json").read_text())
        assert key not in doc["conventions"], doc["conventions"]
    return check


CASES = [
    # unknown presets, wherever they are written
    Case("unknown-preset", [*EVAL, "--compat", "BEIR"], FILES, exit=2,
         stderr=r"--compat: invalid choice: 'BEIR' \(choose from 'trec_eval', 'beir', 'mteb', "
                r"'ranx', 'llamaindex'\)"),
    Case("empty-preset", [*EVAL, "--compat", ""], FILES, exit=2,
         stderr=r"--compat: invalid choice: ''"),
    Case("preset-in-targets-unknown", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": 'compat = "beir2"\n"P@1" = 0.1\n'}, exit=2,
         stderr=r"t\.toml: compat must be one of trec_eval, beir, mteb, ranx, llamaindex, got "
                r"'beir2'"),
    Case("preset-in-targets-not-a-string", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": 'compat = 3\n"P@1" = 0.1\n'}, exit=2,
         stderr=r"t\.toml: compat must be one of .*, got int"),
    Case("preset-in-targets-huge", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": f'compat = "{"b" * 5000}"\n'}, exit=2,
         stderr=r"got 'b{59}'…$"),
    # the targets file (or the configuration) and the command line disagree: the command
    # line wins (as for every option), and the report names the preset that applied
    Case("preset-file-vs-cli", [*CHECK, "--targets", "t.toml", "--compat", "mteb", "--json",
                                "r.json"],
         {**FILES, "t.toml": 'compat = "beir"\n"P@1" = 0.1\n'}, exit=0,
         check=_report_json("conventions", "mteb: MTEB"), unchanged=["t.toml"]),
    Case("preset-pyproject-vs-cli", [*CHECK, "--compat", "ranx", "--json", "r.json"],
         {**FILES, "pyproject.toml": '[tool.ragreport]\ncompat = "llamaindex"\n'
                                     '[tool.ragreport.targets]\n"P@1" = 0.1\n'}, exit=0,
         check=_report_json("conventions", "ranx: ranx")),
    Case("identical-file-vs-cli", [*CHECK, "--targets", "t.toml", "--no-ignore-identical-ids",
                                   "--json", "r.json"],
         {**FILES, "t.toml": 'ignore_identical_ids = true\n"P@1" = 0.1\n'}, exit=0,
         check=_no_convention("identical ids")),
    Case("identical-not-a-bool", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": 'ignore_identical_ids = "yes"\n"P@1" = 0.1\n'}, exit=2,
         stderr=r"t\.toml: ignore_identical_ids must be true or false, got 'yes'"),
    Case("preset-set-twice-in-file", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": 'compat = "beir"\n[targets]\ncompat = "ranx"\n"P@1" = 0.1\n'},
         exit=2, stderr=r"t\.toml: compat is set twice, to 'beir' in the top level and to "
                        r"'ranx' in \[targets\]"),
    Case("identical-flag-with-value", [*EVAL, "--ignore-identical-ids=yes"], FILES, exit=2,
         stderr=r"ignore-identical-ids: ignored explicit argument 'yes'"),
    # the same preset in both places is fine; the file's preset reaches the report
    Case("preset-file-and-cli-agree",
         [*CHECK, "--targets", "t.toml", "--compat", "beir", "--json", "r.json"],
         {**FILES, "t.toml": 'compat = "beir"\n"nDCG@10" = 0.1\n'}, exit=0,
         check=_report_json("conventions", "beir: BEIR EvaluateRetrieval.evaluate"),
         unchanged=["qrels.txt", "run.txt", "t.toml"]),
    Case("preset-from-pyproject", [*CHECK, "--json", "r.json"],
         {**FILES, "pyproject.toml": '[tool.ragreport]\ncompat = "mteb"\n'
                                     '[tool.ragreport.targets]\n"RR@10" = 0.1\n'}, exit=0,
         check=_report_json("measures", "HitRate@1000"),
         unchanged=["qrels.txt", "run.txt", "pyproject.toml"]),
    # --compat with --stream: the same rounded means as without
    Case("preset-with-stream", [*EVAL, "--compat", "beir", "--stream", "-m", "nDCG@3",
                                "--format", "json"], FILES, exit=0,
         check=_beir_ndcg3),
    Case("preset-without-stream", [*EVAL, "--compat", "beir", "-m", "nDCG@3", "--format",
                                   "json"], FILES, exit=0,
         check=_beir_ndcg3),
    # identical ids everywhere: every ranking emptied, every measure 0, counted
    Case("identical-everywhere", ["evaluate", "q.txt", "r.txt", "--ignore-identical-ids",
                                  "-m", "P@1", "-m", "nDCG@10"],
         {"q.txt": SELF_QRELS, "r.txt": SELF_RUN}, exit=0,
         stdout=r"P@1      0\.0000\nnDCG@10  0\.0000\n\n.*empty retrievals: 2; .*"
                r"identical ids dropped: 2"),
    Case("identical-everywhere-stream", ["evaluate", "q.txt", "r.txt", "--compat", "beir",
                                         "--stream", "-m", "P@1"],
         {"q.txt": SELF_QRELS, "r.txt": SELF_RUN}, exit=0,
         stdout=r"P@1  0\.0000\n.*empty retrievals: 2;.*identical ids dropped: 2"),
    Case("identical-kept-by-default", ["evaluate", "q.txt", "r.txt", "-m", "P@1"],
         {"q.txt": SELF_QRELS, "r.txt": SELF_RUN}, exit=0, stdout=r"P@1 +1\.0000"),
    Case("identical-everywhere-check", ["check", "q.txt", "r.txt", "--compat", "beir",
                                        "--no-stats", "--jobs", "1", "--targets", "t.toml",
                                        "--markdown", "-"],
         {"q.txt": SELF_QRELS, "r.txt": SELF_RUN, "t.toml": '"P@1" = 0.5\n'}, exit=1,
         stdout=r"2 identical ids dropped"),
    # a preset beside an option it would set otherwise: the option wins, and is named
    Case("llamaindex-with-order-score", [*EVAL, "--compat", "llamaindex", "--order", "score",
                                         "--format", "json", "-m", "RR"], FILES, exit=0,
         stdout=r'"order": "score"'),
    # ranx's level suffix on nDCG with --compat ranx given: the advice is what is missing
    # (-l 2, the suffix dropped), not the preset already there
    Case("ranx-ndcg-level-suffix-under-ranx", [*EVAL, "--compat", "ranx", "-m", "ndcg@10-l2"],
         FILES, exit=2,
         stderr=r"even with compat='ranx': .*\(--compat ranx -l 2 -m 'ndcg@10'\)"),
    # as advised: q1 2/log2(3)/2, q2 (d8 above d3, tied) 3/log2(3)/3, q3 nothing at grade 2
    Case("ranx-ndcg-level-as-advised", [*EVAL, "--compat", "ranx", "-l", "2", "-m",
                                        "ndcg@10"], FILES, exit=0,
         stdout=r"nDCG@10  0\.4206\n"),
    # --score-precision (pytrec_eval's float32 scores): refusals, conflicts and the numbers
    Case("precision-unknown", [*EVAL, "--score-precision", "float16"], FILES, exit=2,
         stderr=r"--score-precision: invalid choice: 'float16' \(choose from 'float64', "
                r"'float32'\)"),
    Case("precision-in-targets-unknown", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": 'score_precision = "double"\n"P@1" = 0.1\n'}, exit=2,
         stderr=r't\.toml: score_precision must be "float64" or "float32", got \'double\''),
    Case("precision-in-targets-not-a-string", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": 'score_precision = 32\n"P@1" = 0.1\n'}, exit=2,
         stderr=r't\.toml: score_precision must be "float64" or "float32", got 32$'),
    Case("precision-file-vs-cli", ["evaluate", "q.txt", "r.txt", "--config", "t.toml",
                                   "--score-precision", "float64", "-m", "RR", "--format",
                                   "json"],
         {"q.txt": "q 0 d7 1\nq 0 d8 0\n", "r.txt": CLOSE_RUN,
          "t.toml": 'score_precision = "float32"\n'}, exit=0,
         check=_means({"RR": 1.0})),
    Case("precision-set-twice-in-pyproject", [*CHECK],
         {**FILES, "pyproject.toml": '[tool.ragreport]\nscore_precision = "float32"\n'
                                     '[tool.ragreport.targets]\nscore_precision = "float64"\n'
                                     '"P@1" = 0.1\n'}, exit=2,
         stderr=r"score_precision is set twice, to 'float32' in .* and to 'float64' in"),
    # 0.5 + 1e-9 and 0.5 are one float32: tied there (d8 above d7 by id), not in float64
    Case("precision-beir-ties-in-float32", ["evaluate", "q.txt", "r.txt", "--compat", "beir",
                                            "-m", "RR", "--format", "json"],
         {"q.txt": "q 0 d7 1\nq 0 d8 0\n", "r.txt": CLOSE_RUN}, exit=0,
         check=_means({"RR": 0.5})),
    Case("precision-beir-streamed", ["evaluate", "q.txt", "r.txt", "--compat", "beir",
                                     "--stream", "-m", "RR", "--format", "json"],
         {"q.txt": "q 0 d7 1\nq 0 d8 0\n", "r.txt": CLOSE_RUN}, exit=0,
         check=_means({"RR": 0.5})),
    Case("precision-default-float64", ["evaluate", "q.txt", "r.txt", "-m", "RR", "--format",
                                       "json"],
         {"q.txt": "q 0 d7 1\nq 0 d8 0\n", "r.txt": CLOSE_RUN}, exit=0,
         check=_means({"RR": 1.0})),
    Case("precision-beir-float64-explicit", ["evaluate", "q.txt", "r.txt", "--compat", "beir",
                                             "--score-precision", "float64", "-m", "RR",
                                             "--format", "json"],
         {"q.txt": "q 0 d7 1\nq 0 d8 0\n", "r.txt": CLOSE_RUN}, exit=0,
         check=_means({"RR": 1.0})),
    Case("precision-from-targets-file", ["check", "q.txt", "r.txt", "--no-stats", "--jobs",
                                         "1", "--targets", "t.toml", "--json", "r.json"],
         {"q.txt": "q 0 d7 1\nq 0 d8 0\n", "r.txt": CLOSE_RUN,
          "t.toml": 'score_precision = "float32"\n"RR" = 0.9\n'}, exit=1,
         check=_report_json("conventions", "compared as 32-bit floats")),
    Case("ties-average-with-llamaindex", [*EVAL, "--compat", "llamaindex", "--ties",
                                          "average", "-m", "RR"], FILES, exit=2,
         stderr=r"ties='average' .*order='given'"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]
