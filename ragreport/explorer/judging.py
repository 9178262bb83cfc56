"""Judging in place: a person judges an unjudged document of a ranking in the explorer.

Each judgment is appended at once to a JSONL file the person names (a line ``{"query_id",
"doc_id", "grade", "source": "human", "time"}``, the format :func:`ragreport.io.labels.
read_labels` and ``ragreport merge-labels`` read), so nothing is lost when the kernel stops;
an existing file is read first and its judgments count from the start. A judgment is written
only once the runs were evaluated with it (a judgment they refuse writes nothing).

The runs are evaluated again with every judgment of the file, the qrels' rule choosing the
grade used per pair (the latest ``human`` judgment, else the latest), each grade read as the
run's peer preset reads grades (:func:`ragreport.compat.prepared_grades`): each run's
rankings are given the new grades (:func:`ragreport.core.engine.rejudged`, the run is not
aligned again), or where that cannot hold (averaged ties over a depth cut, a qrels rule other
than the default, a judgment that would make the run evaluate another query) the run is
evaluated against its qrels with the judgments merged in (:func:`ragreport.io.labels.
merge_judgments`). The qrels themselves are never changed.

Only documents of a query's rankings that the qrels leave unjudged can be judged, and
judged again (a correction): a judgment of the qrels is not overruled from a click, nor from
the file (a pair it grades otherwise than the qrels is an error naming the file; a pair it
grades as the qrels do, once merged into them, is theirs).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core.result import EvaluationResult
from ..data import Qrels
from ..errors import InputError, RagReportError
from ..io.judgments import HUMAN

__all__ = ["Judging"]


class Judging:
    """The judgments made in an explorer: the file they are appended to, and the runs
    evaluated again with them.

    Parameters
    ----------
    path : path
        The ``.jsonl`` file judgments are appended to (created on the first judgment; read
        when it exists).
    results : list of EvaluationResult
        The runs as evaluated against the qrels alone (kept: every re-evaluation starts
        from them); not evaluated with a doc map.
    grades : sequence of int, optional
        The grades a person can give, one key each (0-9; default 0 to the qrels' largest
        grade, at least 0-1: keys 0-3 for TREC's usual 0-3 scale).
    """

    def __init__(self, path: str | os.PathLike[str], results: Sequence[EvaluationResult],
                 grades: Sequence[int] | None = None) -> None:
        if not isinstance(path, (str, os.PathLike)) or not str(path):
            raise RagReportError(f"judgments must be a file path, got {path!r:.60}")
        self.path = Path(path)
        if self.path.suffix.lower() != ".jsonl" and not self.path.is_dir():
            raise RagReportError(f"judgments must be a .jsonl file (a line per judgment), got "
                                 f"{str(path)!r:.80}")
        self.base = list(results)
        if any(r.doc_map_info is not None or r.document is not None for r in self.base):
            raise RagReportError("judging in place is not available for results evaluated "
                                 "with a doc map")
        self.grades = _grades(grades, self.base)
        #: (query id, doc id) -> the grade the file gives each pair the qrels leave unjudged
        self.mine: dict[tuple[str, str], float] = {}
        #: every judgment of the file, in order: (query id, doc id, grade, source)
        self.rows: list[tuple[str, str, float, str]] = []
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        from ..io.labels import read_labels, read_text

        if self.path.is_dir():
            raise InputError("is a folder, not a judgments file", str(self.path))
        if not read_text(self.path).strip():
            return  # an empty file: nothing judged yet
        got = read_labels(self.path)
        every = got.judgments if got.judgments is not None else got
        sources = every.sources.to_pylist() if every.sources is not None \
            else [HUMAN] * len(every)
        for q, d, g, s in zip(every.query_ids.to_pylist(), every.doc_ids.to_pylist(),
                              every.grades.tolist(), sources, strict=True):
            self.rows.append((q, d, float(g), s))
        for (q, d), (g, _src) in self.used().items():
            used = self.qrels_grade(q, d)
            if used is None:
                self.mine[(q, d)] = g
                continue
            if used != float(_prepared([g], self.base[0])[0]):  # as the qrels were read
                raise InputError(f"query {q!r:.80}, document {d!r:.80} has grade {g:g} here, "
                                 f"but the qrels judge it {used:g}: the explorer judges only "
                                 "unjudged documents (merge the file into the qrels with "
                                 "ragreport merge-labels)", str(self.path))
            # else merged into the qrels already: theirs now

    @property
    def count(self) -> int:
        """How many judgments the file holds."""
        return len(self.rows)

    def meta(self) -> dict[str, Any]:
        """What the view shows: the file, the grades (one key each) and the count."""
        return {"path": str(self.path), "grades": list(self.grades), "count": self.count}

    def qrels_grade(self, qid: str, doc: str) -> float | None:
        """The grade the qrels (without this file's judgments) give a pair, or None."""
        for r in self.base:
            if not _evaluated(r, qid):
                continue
            for d, g in r.judged(qid):
                if d == doc:
                    return float(g)
        return None

    def _check(self, qid: Any, doc: Any, grade: Any) -> None:
        """A RagReportError saying what is wrong with a judgment, if anything."""
        if not isinstance(qid, str) or not qid:
            raise RagReportError(f"judge: the query id must be text, got {qid!r:.40}")
        if not isinstance(doc, str) or not doc:
            raise RagReportError(f"judge: the document id must be text, got {doc!r:.40}")
        if isinstance(grade, bool) or not isinstance(grade, (int, float)) \
                or grade not in self.grades:
            raise RagReportError(f"judge: the grade must be one of "
                                 f"{', '.join(map(str, self.grades))}, got {grade!r:.40}")
        if not any(_evaluated(r, qid) for r in self.base):
            raise RagReportError(f"judge: query {qid!r:.80} was not evaluated")
        if not any(_evaluated(r, qid) and any(x.doc_id == doc for x in r.ranked_list(qid))
                   for r in self.base):
            raise RagReportError(f"judge: document {doc!r:.80} is not in the rankings of "
                                 f"query {qid!r:.80}")
        judged = self.qrels_grade(qid, doc)
        if judged is not None and (qid, doc) not in self.mine:
            raise RagReportError(f"judge: query {qid!r:.80}, document {doc!r:.80} is already "
                                 f"judged in the qrels (grade {judged:g})")

    def judge(self, qid: str, doc: str, grade: Any) -> list[EvaluationResult]:
        """Check one judgment, evaluate the runs with it, then append it to the file
        (flushed before this returns); returns the runs evaluated again. A judgment the
        runs refuse (a grade a measure cannot read) or that cannot be written leaves the file
        and the judgments as they were."""
        self._check(qid, doc, grade)
        before = self.mine.get((qid, doc))
        self.rows.append((qid, doc, float(grade), HUMAN))
        self.mine[(qid, doc)] = float(grade)
        try:
            results = self.evaluate()
            self._append(qid, doc, int(grade))
        except BaseException:
            self.rows.pop()
            if before is None:
                del self.mine[(qid, doc)]
            else:
                self.mine[(qid, doc)] = before
            raise
        return results

    def _append(self, qid: str, doc: str, grade: int) -> None:
        """One line at the end of the file (after a newline the file may lack); a write
        that fails leaves the file as it was."""
        line = json.dumps({"query_id": qid, "doc_id": doc, "grade": grade, "source": HUMAN,
                           "time": datetime.now(timezone.utc).isoformat(timespec="seconds")},
                          ensure_ascii=False) + "\n"
        size = 0
        try:
            with open(self.path, "ab") as fh:
                size = fh.tell()
                if size:
                    with open(self.path, "rb") as old:
                        old.seek(size - 1)
                        if old.read(1) != b"\n":
                            line = "\n" + line
                try:
                    fh.write(line.encode("utf-8"))
                    fh.flush()
                    os.fsync(fh.fileno())
                except OSError:
                    fh.truncate(size)
                    raise
        except OSError as exc:
            raise InputError(f"cannot append the judgment: {exc.strerror or exc}",
                             str(self.path)) from None

    def qrels(self, base: Qrels, result: EvaluationResult) -> Qrels:
        """``base`` (``result``'s qrels) with every judgment of the file merged in under its
        source, its grades read as ``result``'s preset reads them."""
        import numpy as np
        import pyarrow as pa

        from ..io.labels import merge_judgments

        if not self.rows:
            return base
        qids, docs, grades, sources = zip(*self.rows, strict=True)
        new = Qrels(pa.array(qids, pa.string()), pa.array(docs, pa.string()), str(self.path),
                    None, _prepared(np.array(grades, dtype=np.float64), result),
                    sources=pa.array(sources, pa.string()))
        return merge_judgments(base, new, rule=base.rule or "human-first",
                               on_conflict="keep").qrels

    def evaluate(self) -> list[EvaluationResult]:
        """The runs evaluated again with the file's judgments (the runs as given when the
        file holds none; see the module docstring for how)."""
        from ..core.engine import reevaluate

        if not self.rows:
            return list(self.base)
        merged: dict[tuple[int, Any, float], Qrels] = {}
        out = []
        for r in self.base:
            fast = self._rejudged(r)
            if fast is not None:
                out.append(fast)
                continue
            base = r.require_ranking().qrels
            key = (id(base), r.conventions.compat, float(r.conventions.rel_level))
            if key not in merged:
                merged[key] = self.qrels(base, r)
            out.append(reevaluate(r, merged[key]))
        return out

    def used(self) -> dict[tuple[str, str], tuple[float, str]]:
        """The grade (and its source) each pair of the file is given by the qrels' rule:
        the latest ``human`` judgment, else the latest."""
        latest: dict[tuple[str, str], tuple[float, str]] = {}
        human: dict[tuple[str, str], tuple[float, str]] = {}
        for q, d, g, src in self.rows:
            latest[(q, d)] = (g, src)
            if src == HUMAN:
                human[(q, d)] = (g, src)
        return {pair: human.get(pair, got) for pair, got in latest.items()}

    def _rejudged(self, result: EvaluationResult) -> EvaluationResult | None:
        import numpy as np
        import pyarrow as pa

        from ..core.engine import rejudgeable, rejudged
        from ..core.ranking import position

        if not rejudgeable(result) or (result.require_ranking().qrels.rule
                                       not in (None, "human-first")):
            return None
        rk = result.require_ranking()
        qpos, docs, grades, rows, sources = [], [], [], [], []
        ranked: dict[int, dict[str, int]] = {}
        run_queries: set[str] | None = None
        for (q, d), (g, src) in self.used().items():
            i = position(rk.query_ids, rk.memo, q)
            if i is None:
                if run_queries is None:
                    run_queries = {*rk.run.query_ids.unique().to_pylist(),
                                   *rk.run.empty_queries}
                if result.conventions.complete or q in run_queries:
                    return None  # it may make the run evaluate the query: align again
                continue  # a query the run never ranked: no value changes
            if (q, d) not in self.mine:
                continue  # judged in the qrels (merged into them already)
            if i not in ranked:
                lo, hi = int(rk.ret_offsets[i]), int(rk.ret_offsets[i + 1])
                got = rk.run.doc_ids.take(pa.array(rk.run_rows[lo:hi])).to_pylist()
                ranked[i] = {doc: lo + j for j, doc in enumerate(got)}
            qpos.append(i)
            docs.append(d)
            grades.append(g)
            rows.append(ranked[i].get(d, -1))
            sources.append(src)
        more = rk.with_judgments(np.array(qpos, dtype=np.int64), pa.array(docs, pa.string()),
                                 _prepared(np.array(grades, dtype=np.float64), result),
                                 np.array(rows, dtype=np.int64), result.conventions.rel_level,
                                 source=sources)
        return rejudged(result, more)


def _prepared(grades: Any, result: EvaluationResult) -> Any:
    """Grades as ``result``'s peer preset reads them (its qrels were read so)."""
    from ..compat import prepared_grades

    c = result.conventions
    return prepared_grades(c.compat, grades, c.rel_level)


def _evaluated(result: EvaluationResult, qid: str) -> bool:
    from ..core.ranking import position

    rk = result.ranking
    return rk is not None and position(rk.query_ids, rk.memo, qid) is not None


def _grades(grades: Sequence[int] | None, results: Sequence[EvaluationResult]
            ) -> tuple[int, ...]:
    if grades is None:
        top = max((float(r.require_ranking().qrels.grades.max(initial=0)) for r in results),
                  default=0.0)
        return tuple(range(max(1, min(9, int(top))) + 1))
    if isinstance(grades, (str, bytes)) or not isinstance(grades, Sequence):
        raise RagReportError(f"judge_grades must be a list of grades 0-9, got {grades!r:.60}")
    out = []
    for g in grades:
        if isinstance(g, bool) or not isinstance(g, int) or not 0 <= g <= 9:
            raise RagReportError(f"judge_grades must be grades 0-9 (one key each), got {g!r:.40}")
        out.append(g)
    if not out or len(set(out)) != len(out):
        raise RagReportError(f"judge_grades must be distinct grades 0-9, got {list(grades)}")
    return tuple(sorted(out))
