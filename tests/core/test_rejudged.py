"""A result evaluated again with judgments added, without aligning its run again
(``Ranking.with_judgments`` and ``engine.rejudged``): equal, value for value, to the run
evaluated from scratch against the qrels with those judgments, for one measure of every
family of the registry, under every convention that changes the ranking or the judgments."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from analysis.test_unjudged import random_case, registry_measures

import ragreport
from ragreport.core.engine import rejudgeable, rejudged
from ragreport.errors import RagReportError

CONVENTIONS: list[dict[str, Any]] = [
    {},
    {"max_depth": 4},
    {"rel_level": 2},
    {"ties": "average"},
    {"complete": True},
    {"no_relevant": "skip"},
    {"order": "given"},
    {"ignore_identical_ids": True},
    {"score_precision": "float32"},
]


def additions(result: ragreport.EvaluationResult, qrels: dict[str, dict[str, int]],
              rng: random.Random) -> list[tuple[str, str, float]]:
    """Judgments of unjudged documents of evaluated queries: retrieved ones and others."""
    out = []
    for q in result.query_ids:
        ranked = [d.doc_id for d in result.ranked_list(q)]
        for d in [*ranked, "new1", "new2", q]:
            if d not in qrels.get(q, {}) and rng.random() < 0.4:
                out.append((q, d, float(rng.choice([0, 1, 2, 3]))))
    return out


def rejudge(result: ragreport.EvaluationResult, added: list[tuple[str, str, float]]
            ) -> ragreport.EvaluationResult:
    rk = result.require_ranking()
    qpos = np.array([result.query_ids.index(q) for q, _, _ in added], dtype=np.int64)
    rows = []
    for q, d, _ in added:
        i = result.query_ids.index(q)
        docs = rk.run.doc_ids.take(rk.run_rows[rk.ret_offsets[i]:rk.ret_offsets[i + 1]])
        hit = [j for j, x in enumerate(docs.to_pylist()) if x == d]
        rows.append(int(rk.ret_offsets[i]) + hit[0] if hit else -1)
    more = rk.with_judgments(qpos, pa.array([d for _, d, _ in added], pa.string()),
                             np.array([g for _, _, g in added]), np.array(rows, dtype=np.int64),
                             result.conventions.rel_level)
    return rejudged(result, more)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("options", CONVENTIONS, ids=lambda o: ",".join(o) or "default")
def test_equal_to_the_run_evaluated_again_from_scratch(seed: int, options: dict[str, Any]
                                                       ) -> None:
    qrels, run = random_case(seed)
    names = [n for n in registry_measures() if options.get("ties") != "average"
             or not n.startswith(("ERR", "Bpref", "IPrec"))]  # no exact expectation
    result = ragreport.evaluate(qrels, run, names, 6, **options)
    assert rejudgeable(result)
    added = additions(result, qrels, random.Random(seed))
    merged = {q: dict(j) for q, j in qrels.items()}
    for q, d, g in added:
        merged.setdefault(q, {})[d] = int(g)
    want = ragreport.evaluate(merged, run, names, 6, **options)
    got = rejudge(result, added)
    assert got.query_ids == want.query_ids
    for name in names:
        np.testing.assert_array_equal(got.values(name), want.values(name), err_msg=name)
    for key in want.curves:
        np.testing.assert_array_equal(got.curves[key], want.curves[key], err_msg=str(key))
    assert got.counts == want.counts
    for q in got.query_ids:
        assert sorted(got.judged(q)) == sorted(want.judged(q))
        assert [g for _, g in got.judged(q)] == [g for _, g in want.judged(q)]  # best first


def test_a_judged_ranked_document_and_unsupported_results_are_refused() -> None:
    r = ragreport.evaluate({"q": {"a": 1}}, {"q": ["a", "b"]}, ["P@1"])
    rk = r.require_ranking()
    with pytest.raises(RagReportError, match="unjudged documents only"):
        rk.with_judgments(np.array([0]), pa.array(["a"]), np.array([0.0]), np.array([0]), 1)
    judged = ragreport.evaluate({"q": {"a": 1, "z": 0}}, {"q": ["a", "b"]}, ["P@1"])
    with pytest.raises(RagReportError, match="unjudged documents only"):  # not ranked
        judged.require_ranking().with_judgments(np.array([0]), pa.array(["z"]),
                                                np.array([1.0]), np.array([-1]), 1)
    deep = ragreport.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, ["P@1"],
                              ties="average", max_depth=1)
    assert not rejudgeable(deep)
    with pytest.raises(RagReportError, match="use reevaluate"):
        rejudged(deep, deep.require_ranking())


def test_sources_are_kept_and_the_new_judgments_labelled() -> None:
    r = ragreport.evaluate({"q": {"a": 1}}, {"q": ["a", "b"]}, ["P@2"])
    rk = r.require_ranking().with_judgments(np.array([0]), pa.array(["b"]), np.array([1.0]),
                                            np.array([1]), 1, source="human")
    assert rk.qrels.sources.to_pylist() == ["qrels", "human"]
    assert rejudged(r, rk).mean("P@2") == 1.0
