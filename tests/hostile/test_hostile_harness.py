"""The catalogue's harness catches what it promises to catch (a broken harness passes all)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import QRELS, RUN, Case, run_case, trec_means


def test_legal_input_runs(tmp_path: Path) -> None:
    res = run_case(Case("ok", ["evaluate", "q.txt", "r.txt", "--format", "trec", "-m", "P_2"],
                        {"q.txt": QRELS, "r.txt": RUN}, exit=0), tmp_path)
    # q1: d1 d2 relevant -> 1; q2: d5 no, then tie d8/d3 at 0.5 -> d8 first (id descending) -> 1/2
    # q3: d6 no, d7 yes -> 1/2
    means = trec_means(res.stdout)
    assert means["P_2"] == pytest.approx((1 + 0.5 + 0.5) / 3, abs=5e-5)
    assert means["num_q"] == 3


def test_harness_fails_on_wrong_exit_code(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="exit 2"):
        run_case(Case("bad", ["evaluate", "missing.txt", "r.txt"], {"r.txt": RUN}, exit=0),
                 tmp_path)


def test_harness_sees_a_changed_file(tmp_path: Path) -> None:
    def clobber(tmp: Path) -> None:
        (tmp / "out.md").write_text("new")

    case = Case("changed", ["evaluate", "q.txt", "r.txt"], {"q.txt": QRELS, "r.txt": RUN,
                "out.md": "old"}, exit=0, unchanged=["out.md"])
    from hostile import _snapshot
    before = _snapshot(tmp_path, ["out.md"])
    assert before == {}
    run_case(case, tmp_path)
    clobber(tmp_path)
    assert _snapshot(tmp_path, ["out.md"]) == {"out.md": b"new"}
