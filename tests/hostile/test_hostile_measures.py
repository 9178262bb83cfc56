"""Hostile-input catalogue, area "measures" (issue 13's SetP, Judged, Bpref, IPrec, ERR, RBP,
R_cap, NumQ): out-of-range parameters are refused with one line, grades gdeval refuses are
refused for ERR (by evaluate, --stream and report alike, the query id shown inert), and the
legal names give the hand-computed numbers under trec_eval's names.

The catalogue's data (``tests/hostile.py``), in trec_eval's order (ties by id descending):
q1: d1 (1) d2 (2) d9 (?), judged also d4 (0); q2: d5 (?) d8 (3) d3 (1); q3: d6 (?) d7 (1).
"""

from __future__ import annotations

import pytest
from hostile import QRELS, RUN, Case, CaseResult, run_case, trec_means

FILES = {"qrels.txt": QRELS, "run.txt": RUN}
EVAL = ["evaluate", "qrels.txt", "run.txt"]
GRADE5 = {"qrels.txt": QRELS + "q2 0 d5 5\n", "run.txt": RUN}
ESC_ID = {"qrels.txt": "q\x1b[31m 0 d1 5\n", "run.txt": "q\x1b[31m Q0 d1 1 1.0 tag\n"}

MEASURES = ["SetP", "Judged@2", "Judged", "ERR@2", "RBP", "Bpref", "R_cap@1", "IPrec@0.5",
            "NumQ", "Judged@9007199254740992"]
ARGS = [a for m in MEASURES for a in ("-m", m)]
# SetP: (2/3 + 2/3 + 1/2) / 3 ; Judged@2: (2/2 + 1/2 + 1/2) / 3 ; Judged = SetP's ratios here
# ERR@2: q1 1/16 + (3/16)(15/16)/2, q2 (7/16)/2, q3 (1/16)/2 ; RBP (graded: gain = grade):
# 0.2·(1 + 0.8·2), 0.2·(0.8·3 + 0.64·1), 0.2·0.8·1 ; Bpref: 1 each ; R_cap@1: 1, 0, 0 ;
# IPrec@0.5: 1, max(1/2, 2/3), 1/2
EXPECTED = {
    "num_q": 3.0,
    "set_P": round((2 / 3 + 2 / 3 + 1 / 2) / 3, 4),
    "judged_2": round(2 / 3, 4),
    "judged": round((2 / 3 + 2 / 3 + 1 / 2) / 3, 4),
    "err_2": round((1 / 16 + (3 / 16) * (15 / 16) / 2 + 7 / 32 + 1 / 32) / 3, 4),
    "rbp(p=0.8)": round((0.52 + 0.608 + 0.16) / 3, 4),
    "bpref": 1.0,
    "r_cap_1": round(1 / 3, 4),
    "iprec_at_recall_0.50": round((1 + 2 / 3 + 1 / 2) / 3, 4),
    "judged_9007199254740992": round((2 / 3 + 2 / 3 + 1 / 2) / 3, 4),
}


def by_hand(r: CaseResult) -> None:
    assert trec_means(r.stdout) == EXPECTED
    assert [line for line in r.stdout.splitlines() if line.startswith("num_q")] == \
        ["num_q                 \tall\t3"]


CASES = [
    # --- legal: hand-computed values under trec_eval's names, whole file or streamed ---------
    Case("new-measures-trec", [*EVAL, *ARGS, "--format", "trec"], FILES, exit=0,
         check=by_hand),
    Case("new-measures-stream", [*EVAL, *ARGS, "--format", "trec", "--stream"], FILES, exit=0,
         check=by_hand),
    # --- parameters out of range -----------------------------------------------------------------
    Case("RBP-p=1", [*EVAL, "-m", "RBP(p=1)"], FILES,
         stderr=r"p of RBP must be strictly between 0 and 1, got 1\.0"),
    Case("RBP-p=0@5", [*EVAL, "-m", "RBP(p=0)@5"], FILES,
         stderr=r"p of RBP must be strictly between 0 and 1, got 0\.0"),
    Case("IPrec@2", [*EVAL, "-m", "IPrec@2"], FILES,
         stderr=r"recall level of IPrec must be between 0 and 1, got 2\.0"),
    Case("IPrec-bare", [*EVAL, "-m", "IPrec"], FILES, stderr=r"IPrec needs a recall level"),
    Case("R_cap-bare", [*EVAL, "-m", "R_cap"], FILES, stderr=r"R_cap needs a cutoff"),
    Case("ERR-rel", [*EVAL, "-m", "ERR(rel=2)@5"], FILES, stderr=r"ERR takes no 'rel'"),
    # --- ERR refuses grades above 4, as gdeval does -------------------------------------------
    Case("ERR-grade-5", [*EVAL, "-m", "ERR@10"], GRADE5,
         stderr=r"gdeval.*grades up to 4; query 'q2' has a judgment of grade 5"),
    Case("ERR-grade-5-stream", [*EVAL, "-m", "ERR", "--stream"], GRADE5,
         stderr=r"gdeval.*grades up to 4; query 'q2' has a judgment of grade 5"),
    Case("ERR-grade-5-report", ["report", "qrels.txt", "run.txt", "-m", "ERR@10", "--json",
                                "out.json", "--no-stats", "--jobs", "1"], GRADE5,
         stderr=r"gdeval.*grade 5"),
    Case("ERR-grade-4.5-fractional", [*EVAL, "-m", "ERR", "--fractional-grades"],
         {"qrels.txt": QRELS + "q2 0 d5 4.5\n", "run.txt": RUN}, stderr=r"grade 4\.5"),
    Case("ERR-grade-5-escaped-id", [*EVAL, "-m", "ERR@10"], ESC_ID,
         stderr=r"query 'q\\x1b\[31m' has a judgment of grade 5"),
    Case("grade-5-without-ERR", [*EVAL, "-m", "RBP", "-m", "Bpref", "--format", "trec"],
         GRADE5, exit=0, stdout=r"bpref\s+\tall\t"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]
