"""Which queries an evaluation covers: the judged queries the run retrieves for (or every
judged query, with ``complete``), less those without a relevant document when
``no_relevant="skip"``; the refusals (``"raise"``, no query in common, none left) and the
counts the ranking reports (:class:`~.ranking.Counts`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Qrels, Run
from ..errors import InputError
from .ranking import Counts

__all__ = ["NOTHING_LEFT", "QuerySets", "query_sets"]

#: The refusal of an evaluation whose every common query was skipped (no relevant document,
#: ``no_relevant="skip"``): the same words from evaluate, streaming and the engines.
NOTHING_LEFT = ("no query left to evaluate (every common query has no relevant document and "
                "no_relevant='skip')")

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class QuerySets:
    """Per query code (the ids of ``all_ids``): in the run, in the qrels, evaluated, and the
    number of relevant judgments; the run's queries the qrels never name (listed empty)."""

    all_ids: list[str]
    in_run: BoolArray
    in_qrels: BoolArray
    evaluated: BoolArray
    n_relevant: npt.NDArray[Any]
    empty_only: list[str]
    skipped: int

    def counts(self, n_evaluated: int, empty: int, dropped: int, identical: int) -> Counts:
        """The ranking's counts, given what the join found (evaluated queries, empty
        retrievals, duplicates and identical ids dropped)."""
        in_run, in_qrels = self.in_run, self.in_qrels
        return Counts(
            evaluated=n_evaluated,
            run_only=int((in_run & ~in_qrels).sum()) + len(self.empty_only),
            qrels_only=int((in_qrels & ~in_run).sum()),
            no_relevant=int((self.evaluated & (self.n_relevant == 0)).sum()),
            empty_retrievals=empty,
            duplicates_dropped=dropped,
            skipped_no_relevant=self.skipped,
            run_queries=int(in_run.sum()) + len(self.empty_only),
            qrels_queries=int(in_qrels.sum()),
            identical_ids_dropped=identical,
        )


def query_sets(run: Run, qrels: Qrels, rq: npt.NDArray[np.int32], qq: npt.NDArray[np.int64],
               q_dict: Any, *, complete: bool, rel_level: float, no_relevant: str
               ) -> QuerySets:
    """The query sets of a join (``rq``/``qq``: the query code of each run/qrels row, codes
    into ``q_dict``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n_u = len(q_dict)
    in_run = np.bincount(rq, minlength=n_u) > 0
    in_qrels = np.bincount(qq, minlength=n_u) > 0
    # queries the run lists with an empty result: evaluated (scoring 0) when judged; the
    # others are run-only like any query the qrels do not know
    empty_only: list[str] = []
    if run.empty_queries:
        e_ids = pa.array(list(dict.fromkeys(run.empty_queries)), pa.string())
        e_code = np.asarray(pc.index_in(e_ids, value_set=q_dict).fill_null(-1)
                            .to_numpy(zero_copy_only=False), dtype=np.int64)
        in_run[e_code[e_code >= 0]] = True
        empty_only = [q for q, c in zip(e_ids.to_pylist(), e_code.tolist(), strict=True)
                      if c < 0]
    with np.errstate(invalid="ignore"):
        nrel_u = np.bincount(qq, weights=(qrels.grades >= rel_level).astype(np.float64),
                             minlength=n_u)
    evaluated = in_qrels & (in_run | complete)
    no_rel = evaluated & (nrel_u == 0)
    all_ids = q_dict.to_pylist()
    if no_relevant == "raise" and no_rel.any():
        bad = [all_ids[i] for i in np.flatnonzero(no_rel)[:5]]
        raise InputError(f"{int(no_rel.sum())} evaluated queries have no relevant document "
                         f"(grade >= {rel_level:g}), e.g. {', '.join(map(repr, bad))}",
                         qrels.source)
    skipped = 0
    if no_relevant == "skip":
        skipped = int(no_rel.sum())
        evaluated &= ~no_rel
    if not evaluated.any():
        _refuse_nothing_left(run, qrels, in_run, in_qrels, all_ids, empty_only)
    return QuerySets(all_ids, in_run, in_qrels, evaluated, nrel_u, empty_only, skipped)


def _refuse_nothing_left(run: Run, qrels: Qrels, in_run: BoolArray, in_qrels: BoolArray,
                         all_ids: list[str], empty_only: list[str]) -> None:
    if not (in_qrels & in_run).any():
        r_ex = ", ".join(map(repr, ([all_ids[i] for i in np.flatnonzero(in_run)[:3]]
                                    + empty_only)[:3]))
        q_ex = ", ".join(repr(all_ids[i]) for i in np.flatnonzero(in_qrels)[:3])
        raise InputError(f"the run ({run.source}) and the qrels ({qrels.source}) have no "
                         f"query in common (run has {r_ex}...; qrels have {q_ex}...)")
    raise InputError(NOTHING_LEFT)
