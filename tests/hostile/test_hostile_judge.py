"""Hostile-input catalogue, area "judge": :func:`ragreport.judge` is not reachable from the
command line, so its rows run through the API. A judge function that raises or returns
nonsense, a resume file of another source or of no judgments: each is one RagReportError
naming the pair (or the file and line) and what came back; the judgments finished before a
failure stay in the resume file; a resume file refused is left as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ragreport

QUERIES = {"q1": "red fox"}
DOCS = {"d1": "a red car", "d2": "fox"}
PAIRS = [("q1", "d1"), ("q1", "d2")]


def _raises(q: str, p: str) -> int:
    raise ConnectionError("rate limited")


def _second_fails(q: str, p: str) -> Any:
    return 1 if p == "a red car" else {"grade": 1}


CASES: list[tuple[str, Callable[[str, str], Any], str | None, str]] = [
    ("judge-raises", _raises, None,
     r"judge_fn raised ConnectionError: rate limited \(query 'q1', document 'd1'\)"),
    ("judge-returns-text", lambda q, p: "relevant", None,
     r"judge_fn returned 'relevant' for query 'q1', document 'd1'"),
    ("judge-returns-inf", lambda q, p: float("inf"), None, r"judge_fn returned inf"),
    ("judge-returns-a-dict", _second_fails, None,
     r"judge_fn returned \{'grade': 1\} for query 'q1', document 'd2'"),
    ("judge-resume-another-source", lambda q, p: 1,
     '{"query_id": "q1", "doc_id": "d1", "grade": 1, "source": "llm:gpt"}\n',
     r"judged\.jsonl:1: the resume file holds judgments by 'llm:gpt', not 'llm:judge'"),
    ("judge-resume-not-judgments", lambda q, p: 1, '{"query_id": "q1"}\n',
     r"judged\.jsonl:1: not a judgment of a resume file"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hostile_judge(case: tuple[str, Callable[[str, str], Any], str | None, str],
                       tmp_path: Path) -> None:
    _, fn, resume_text, message = case
    resume = tmp_path / "judged.jsonl"
    if resume_text is not None:
        resume.write_text(resume_text, encoding="utf-8")
    with pytest.raises(ragreport.RagReportError, match=message) as info:
        ragreport.judge(fn, PAIRS, queries=QUERIES, docs=DOCS, resume=resume, progress=False,
                        name="judge")
    assert "\n" not in str(info.value)
    if resume_text is not None:
        assert resume.read_text(encoding="utf-8") == resume_text  # refused: left as it was
    elif fn is _second_fails:
        assert resume.read_text(encoding="utf-8").count("\n") == 1  # d1 finished, kept
