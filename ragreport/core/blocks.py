"""The blocks of a streamed evaluation added up: each block of whole queries is evaluated by
:func:`ragreport.evaluate`, and :class:`StreamTotals` keeps what the blocks give (the queries
seen, per-query values and curve sums of the queries kept, the counts), deciding
``no_relevant`` and ``complete`` over the whole run as ``evaluate`` decides them over all
its queries (see :func:`ragreport.core.stream.evaluate_stream`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..errors import InputError
from ..measures import Measure
from ..metrics import FloatArray
from .evaluated import NOTHING_LEFT
from .result import Conventions, EvaluationResult

__all__ = ["StreamTotals", "qrels_of"]


@dataclasses.dataclass
class StreamSetup:
    """What every block is evaluated with."""

    qrels: Any
    wanted: list[Measure]
    k_max: int
    #: Width of every block's curves (their sums are added up).
    width: int
    #: The run's name in messages.
    path: str
    no_relevant: str
    rel_level: int
    complete: bool
    fractional_grades: bool
    options: dict[str, Any]


class StreamTotals:
    """What the blocks of a run add up to."""

    def __init__(self, setup: StreamSetup) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        self.setup = setup
        q = setup.qrels
        self.judged_ids = pc.unique(q.query_ids)
        # judged queries without a relevant document (grade >= rel_level)
        with np.errstate(invalid="ignore"):
            has_rel = pc.unique(q.query_ids.filter(pa.array(q.grades >= setup.rel_level)))
        self.no_rel_ids = self.judged_ids.filter(
            pc.invert(pc.is_in(self.judged_ids, value_set=has_rel)))
        #: Evaluated queries without a relevant document, in evaluate()'s order (run, then
        #: qrels).
        self.no_rel_seen: list[str] = []
        self.done: set[str] = set()
        self.per_query: dict[Measure, list[FloatArray]] = {m: [] for m in setup.wanted}
        self.curve_sums: dict[Measure, FloatArray] = {}
        self.qids_out: list[str] = []
        self.counts = {"evaluated": 0, "run_only": 0, "qrels_only": 0, "no_relevant": 0,
                       "empty_retrievals": 0, "duplicates_dropped": 0,
                       "skipped_no_relevant": 0, "run_queries": 0, "qrels_queries": 0,
                       "identical_ids_dropped": 0}
        #: The conventions of each evaluation (the first one's are the result's).
        self.used: list[Conventions] = []
        #: The run's name (its first tag), set by the caller as the blocks are read.
        self.name = ""

    def _evaluate(self, query_ids: list[str], run: Any) -> EvaluationResult:
        """The queries ``query_ids`` of ``run`` evaluated with only their own judgments (the
        per-block work does not grow with the whole qrels); ``complete`` changes nothing here
        but names the preset's exceptions in the conventions as evaluate() names them."""
        import pyarrow as pa

        from .engine import evaluate

        s = self.setup
        res = evaluate(qrels_of(s.qrels, pa.array(query_ids, pa.string())), run, s.wanted,
                       s.k_max, fractional_grades=s.fractional_grades, _curve_width=s.width,
                       complete=s.complete, no_relevant="zero", **s.options)
        self.used.append(res.conventions)
        return res

    def _grouped(self, qid: Any, lines: np.ndarray) -> list[str]:
        """The block's query ids, each one contiguous run of lines, none seen before."""
        import pyarrow as pa
        import pyarrow.compute as pc

        codes = pc.dictionary_encode(qid).indices.to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
        ids: list[str] = qid.take(pa.array(starts)).to_pylist()
        if len(set(ids)) != len(ids) or not self.done.isdisjoint(ids):
            seen: set[str] = set()
            at = 0
            while ids[at] not in self.done and ids[at] not in seen:
                seen.add(ids[at])
                at += 1
            raise InputError(f"the run is not grouped by query: query {ids[at]!r} appears "
                             "again after other queries; sort it by query (e.g. sort -s "
                             "-k1,1) or use evaluate(), which reads it whole", self.setup.path,
                             int(lines[starts[at]]))
        self.done.update(ids)
        return ids

    def add_block(self, qid: Any, doc: Any, score: np.ndarray, lines: np.ndarray) -> None:
        """Evaluate one block of whole queries (grouped by query) and add it up."""
        import pyarrow as pa
        import pyarrow.compute as pc

        from ..data import Run

        if len(qid) == 0:
            return
        s = self.setup
        ids = self._grouped(qid, lines)
        mask = pc.is_in(qid, value_set=self.judged_ids)
        in_qrels = np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
        run_only = set(ids) - set(qid.filter(mask).unique().to_pylist())
        if run_only:
            # evaluate() refuses (or drops and counts) a document twice in any query, judged
            # or not: so does this
            other = pa.array(np.flatnonzero(~in_qrels))
            self.counts["duplicates_dropped"] += duplicates(
                qid.take(other), doc.take(other), lines[other.to_numpy()], s.path,
                s.options.get("duplicates", "error") == "error")
        self.counts["run_only"] += len(run_only)
        if not in_qrels.any():
            return
        sel = np.flatnonzero(in_qrels)
        take = pa.array(sel)
        run = Run(qid.take(take), doc.take(take), s.path, lines[sel], score[sel], self.name)
        res = self._evaluate(ids, run)
        self.counts["duplicates_dropped"] += res.counts.duplicates_dropped
        keep = self._kept(res, ids)
        kept = np.flatnonzero(keep)
        if res.counts.identical_ids_dropped:  # those of the queries kept, as evaluate counts
            self.counts["identical_ids_dropped"] += res.counts.identical_ids_dropped \
                if keep.all() else identical_in(run, [res.query_ids[i] for i in kept.tolist()])
        self._add(res, kept, [res.query_ids[i] for i in kept.tolist()])
        self.counts["empty_retrievals"] += int((res.ranking.n_ret[kept] == 0).sum())

    def _kept(self, res: EvaluationResult, ids: list[str]) -> np.ndarray:
        """Which of a block's evaluated queries are kept (``no_relevant``: skip or refuse
        drops those without a relevant document; refuse names them at the end)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        keep = np.ones(len(res.query_ids), dtype=bool)
        if not res.counts.no_relevant:
            return keep
        block_ids = pa.array(res.query_ids, pa.string())
        no_rel = np.asarray(pc.is_in(block_ids, value_set=self.no_rel_ids)
                            .to_numpy(zero_copy_only=False), dtype=bool)
        if self.setup.no_relevant == "zero":
            self.counts["no_relevant"] += int(no_rel.sum())
            return keep
        # skip, or refuse at the end (with the count over the whole run)
        self.counts["skipped_no_relevant"] += int(no_rel.sum())
        if self.setup.no_relevant == "raise":  # named in file order, as evaluate() names them
            in_file = pa.array(ids, pa.string())
            self.no_rel_seen.extend(in_file.filter(
                pc.is_in(in_file, value_set=self.no_rel_ids)).to_pylist())
        return ~no_rel

    def _add(self, res: EvaluationResult, rows: np.ndarray, query_ids: list[str]) -> None:
        """Add the rows ``rows`` of ``res`` (the queries ``query_ids``, in that order)."""
        self.qids_out.extend(query_ids)
        for m in self.setup.wanted:
            self.per_query[m].append(res.values(m)[rows])
        for key, c in res.curves.items():
            self.curve_sums[key] = self.curve_sums.get(key, 0) + c[rows].sum(axis=0)
        self.counts["evaluated"] += len(query_ids)

    def add_unretrieved(self) -> list[str]:
        """Count the judged queries the run never retrieved for (qrels order), and with
        ``complete`` evaluate them with nothing retrieved; returns them."""
        import pyarrow as pa

        from ..data import Run
        from .kernel import CURVE_FAMILIES

        s = self.setup
        judged_list = self.judged_ids.to_pylist()
        missing = [x for x in judged_list if x not in self.done]  # in qrels order
        self.counts["qrels_only"] = len(missing)
        self.counts["run_queries"] = len(self.done)
        self.counts["qrels_queries"] = len(judged_list)
        if not (s.complete and missing):
            return missing
        no_rel_set = set(self.no_rel_ids.to_pylist())
        added = missing
        missing_no_rel = [x for x in missing if x in no_rel_set]
        if s.no_relevant == "zero":
            self.counts["no_relevant"] += len(missing_no_rel)
        else:
            added = [x for x in missing if x not in no_rel_set]
            self.counts["skipped_no_relevant"] += len(missing_no_rel)
            self.no_rel_seen.extend(missing_no_rel)
        if added:
            # evaluated by the engine with nothing retrieved, from their own judgments: 0 for
            # most measures, but NumQ is 1 and NumRel their relevant count (as evaluate gives)
            empty = Run(pa.array([], pa.string()), pa.array([], pa.string()), s.path,
                        np.zeros(0, dtype=np.int64), np.zeros(0), self.name)
            res = self._evaluate(added, empty)
            at = {x: i for i, x in enumerate(res.query_ids)}
            self._add(res, np.array([at[x] for x in added], dtype=np.int64), added)
            self.counts["empty_retrievals"] += len(added)
            for f in CURVE_FAMILIES:
                self.curve_sums.setdefault(Measure(f), np.zeros(s.width))
        return missing

    def finish(self, missing: list[str]) -> tuple[list[str], dict[Measure, FloatArray],
                                                  dict[Measure, FloatArray], Conventions]:
        """The queries kept, their values, the mean curves and the conventions; refuses a run
        left with no query (or queries without a relevant document, with ``raise``)."""
        s = self.setup
        if s.no_relevant == "raise" and self.no_rel_seen:
            raise InputError(f"{len(self.no_rel_seen)} evaluated queries have no relevant "
                             f"document (grade >= {s.rel_level:g}), e.g. "
                             f"{', '.join(map(repr, self.no_rel_seen[:5]))}", s.qrels.source)
        if not self.qids_out:
            if len(missing) == len(self.judged_ids):
                raise InputError(f"the run ({s.path}) and the qrels have no query in common")
            raise InputError(NOTHING_LEFT)
        n = len(self.qids_out)
        values = {m: np.concatenate(self.per_query[m]) for m in s.wanted}
        curves = {k: np.asarray(v, dtype=np.float64) / n for k, v in self.curve_sums.items()}
        conventions = dataclasses.replace(self.used[0], no_relevant=s.no_relevant,
                                          curve_width=s.width)
        return self.qids_out, values, curves, conventions


def qrels_of(q: Any, query_ids: Any) -> Any:
    """The rows of ``q`` judging one of ``query_ids`` (same source, same line numbers)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..data import Qrels, RowLines

    sel = np.flatnonzero(np.asarray(pc.is_in(q.query_ids, value_set=query_ids)
                                    .to_numpy(zero_copy_only=False), dtype=bool))
    if q.lines is None:
        lines = None
    elif isinstance(q.lines, RowLines):
        lines = sel + 1
    else:
        lines = np.asarray(q.lines)[sel]
    take = pa.array(sel)
    return Qrels(q.query_ids.take(take), q.doc_ids.take(take), q.source, lines, q.grades[sel])


def duplicates(qid: Any, doc: Any, lines: np.ndarray, source: str, refuse: bool) -> int:
    """How many later occurrences of a (query, document) pair there are among these rows (of
    the queries the qrels do not judge, which the blocks do not evaluate): ``evaluate``
    counts them as dropped (duplicates='first') or refuses the first one (``refuse``), with
    the same message."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .keys import string_fingerprints

    if len(qid) < 2:
        return 0
    # fingerprints prove the absence of a duplicate in one numeric sort (equal pairs have
    # equal keys); only when two keys meet are the strings compared
    codes = pc.dictionary_encode(qid).indices.to_numpy(zero_copy_only=False)
    keys = string_fingerprints(doc)
    keys ^= codes.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    keys.sort()
    if not (keys[1:] == keys[:-1]).any():
        return 0
    counts = pa.table({"q": qid, "d": doc}).group_by(["q", "d"]).aggregate([([], "count_all")])
    if pc.max(counts.column("count_all")).as_py() <= 1:
        return 0
    if not refuse:
        return len(qid) - int(counts.num_rows)
    seen: dict[tuple[str, str], int] = {}
    for row, key in enumerate(zip(qid.to_pylist(), doc.to_pylist(), strict=True)):
        if key in seen:
            raise InputError(
                f"document {key[1]!r} appears twice for query {key[0]!r} (first at line "
                f"{int(lines[seen[key]])}); pass duplicates='first' (--keep-first-duplicate) "
                "to keep the first occurrence", source, int(lines[row]))
        seen[key] = row
    return 0  # unreachable: a count above 1 is a pair seen twice


def identical_in(run: Any, query_ids: list[str]) -> int:
    """Rows of ``run`` whose document id equals the query id, among the given queries."""
    import pyarrow as pa
    import pyarrow.compute as pc

    same = pc.and_(pc.equal(run.doc_ids, run.query_ids),
                   pc.is_in(run.query_ids, value_set=pa.array(query_ids, pa.string())))
    return int(pc.sum(same).as_py() or 0)
