"""What to label next: the unjudged (query, document) pairs whose judgment would narrow the
gated measures' unjudged intervals (:mod:`.unjudged`) the most.

A candidate is a document that an evaluated ranking retrieves within the measures' reach
(the largest cutoff among them; :data:`DEFAULT_MAX_RANK` when one has no cutoff; or as deep
as ``max_rank`` says) and the qrels do
not judge. Its **gain** is how far judging it can move the runs' means: for every run and
measure, the size of the change of the query's value when that document alone is read as
relevant (at the fill grade), over the number of queries the run evaluated, summed. That is
how far the run's interval moves at the trec_eval end if the document turns out relevant
(up for precision; recall and nDCG can also go down, as the document joins their ideal
ranking); a document whose judgment moves nothing (a gain of 0) is never proposed. Deeper
unjudged documents can move recall and nDCG too (through their ideal ranking, as the
unjudged bounds count them); they are proposed only when ``max_rank`` reaches them. Each change
is computed exactly as the measure defines itself: every candidate is evaluated as a query
of its own (its query's ranking, to the reach, with its query's judgments and the document
filled), so recall and nDCG count the filled document in their ideal ranking too.

The queue takes candidates by decreasing gain (then best rank, query id, document id), at
most ``per_query`` per query, until ``budget``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.result import EvaluationResult
from ..data import FloatArray, IntArray, Qrels, Run
from ..errors import RagReportError
from ..io.columns import contiguous
from ..measures import Measure
from .unjudged import fill_grade, same_qrels

__all__ = ["CHUNK_ROWS", "DEFAULT_MAX_RANK", "GAIN_FLOOR", "LabelItem", "LabelQueue",
           "distinct_names", "label_queue", "label_queue_of", "with_texts"]

#: Ranked rows evaluated at once (the candidates' rankings, one copy per candidate).
CHUNK_ROWS = 2_000_000
#: A gain at or below this is rounding, not a change: the pair is not proposed.
GAIN_FLOOR = 1e-15
#: How deep candidates are looked for when a measure has no cutoff (RR, AP): each candidate
#: costs one evaluation of its query's whole ranking.
DEFAULT_MAX_RANK = 20


@dataclass(frozen=True)
class LabelItem:
    """One (query, document) pair to judge.

    ``gain``: the sum over runs and measures of how far the run's mean moves (in absolute
    value) when this document is read as relevant; ``effects``: the signed change of the
    mean per measure (summed over runs);
    ``ranks``: its 1-based rank in each run that retrieves it within reach.
    """

    query_id: str
    doc_id: str
    gain: float
    effects: dict[str, float]
    ranks: dict[str, int]

    @property
    def best_rank(self) -> int:
        return min(self.ranks.values()) if self.ranks else 0


@dataclass(frozen=True)
class LabelQueue:
    """The pairs to judge, best first (data; :mod:`ragreport.io.labelqueue` writes it).

    ``candidates``: unjudged pairs within reach, before the budget; ``useful``: those with a
    gain above 0; ``grade``: the grade a judged-relevant document was assumed to get;
    ``measures`` and ``runs``: what the gains are summed over.
    """

    items: list[LabelItem]
    measures: list[str]
    runs: list[str]
    grade: float
    candidates: int
    useful: int
    budget: int
    per_query: int | None
    query_texts: dict[str, str] = field(default_factory=dict)
    doc_texts: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.items)

    def pairs(self) -> list[tuple[str, str]]:
        """(query id, document id) of every item, in order."""
        return [(i.query_id, i.doc_id) for i in self.items]


def label_queue(qrels: Any, runs: Any, measures: Any = None, *, budget: int = 200,
                per_query: int | None = None, grade: float | None = None,
                max_rank: int | None = None, queries: Any = None, docs: Any = None,
                names: Sequence[str | None] | None = None, **options: Any) -> LabelQueue:
    """The (query, document) pairs to judge next, best first: those whose judgment would
    narrow the measures' unjudged intervals the most (see :mod:`ragreport.analysis.labelqueue`).

    Parameters
    ----------
    qrels : path or object
        The judgments, as :func:`ragreport.load_qrels` reads them.
    runs : path or object, or a list of them
        One run or several (each as :func:`ragreport.load_run` reads it); the gain of a pair
        is summed over the runs.
    measures : str or list of str, optional
        The gated measures (bounded ones); default those of the seed tutorial's typical
        targets.
    budget : int
        At most this many pairs (default 200).
    per_query : int, optional
        At most this many pairs per query.
    grade : float, optional
        The grade a judged-relevant document is assumed to get (default the qrels' largest).
    max_rank : int, optional
        Look for candidates down to this rank only; default the largest cutoff of the
        measures, or :data:`DEFAULT_MAX_RANK` (20) when one has no cutoff (RR, AP: each
        candidate then costs an evaluation of its query's whole ranking).
    queries, docs : mapping or path, optional
        Query and document texts, kept for the pairs in the queue (a writer puts them beside
        each pair).
    names : list of str, optional
        Run names, in the order of the runs (None: the run's own).
    **options
        Any option of :func:`ragreport.evaluate` (``max_depth``, ``rel_level``, ``order``...).

    Returns
    -------
    LabelQueue

    Examples
    --------
    ``x`` is unjudged and ranked first for ``q1``; read as relevant, P@1 of ``q1`` goes from 0
    to 1, so the run's mean over two queries moves by 0.5:

    >>> q = label_queue({"q1": {"a": 1}, "q2": {"b": 1}},
    ...                 {"q1": ["x", "a"], "q2": ["b", "y"]}, "P@1")
    >>> [(i.query_id, i.doc_id, i.gain) for i in q.items]
    [('q1', 'x', 0.5)]
    """
    from ..core.engine import evaluate
    from ..io import load_docs, load_queries
    from ..measures import normalize_measures
    from ..targets import default_targets

    if options.get("doc_map") is not None:
        raise RagReportError("a label queue is not available with doc_map")
    wanted = normalize_measures(measures) if measures is not None \
        else list(dict.fromkeys(t.measure for t in default_targets()))
    many = runs if isinstance(runs, (list, tuple)) else [runs]
    if names is not None and len(names) != len(many):
        raise RagReportError(f"names must name every run: {len(names)} names for "
                             f"{len(many)} runs")
    results = [evaluate(qrels, run, wanted, name=None if names is None else names[i],
                        **options) for i, run in enumerate(many)]
    queue = label_queue_of(results, wanted, budget=budget, per_query=per_query, grade=grade,
                           max_rank=max_rank)
    texts = {q: t for r in results for q, t in r.query_texts.items()}
    return with_texts(queue, texts | (load_queries(queries) if queries is not None else {}),
                      load_docs(docs) if docs is not None else None)


def label_queue_of(results: Sequence[EvaluationResult], measures: Sequence[Measure], *,
                   budget: int = 200, per_query: int | None = None,
                   grade: float | None = None, max_rank: int | None = None) -> LabelQueue:
    """The label queue of evaluated runs (:func:`ragreport.evaluate` results, with their
    rankings, against the same qrels) for ``measures`` (bounded ones; others are left out).

    >>> import ragreport
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    >>> r = ragreport.evaluate(qrels, {"q1": ["x", "a"], "q2": ["b", "y"]}, ["P@1"])
    >>> [(i.query_id, i.doc_id, i.gain) for i in label_queue_of([r], r.measures).items]
    [('q1', 'x', 0.5)]
    """
    _check_budget(budget, per_query, max_rank)
    if not results:
        raise RagReportError("no run to build a label queue from")
    wanted = [m for m in dict.fromkeys(measures) if m.bounded]
    if not wanted:
        raise RagReportError("a label queue needs at least one bounded measure (P@10, "
                             "nDCG@10, R@100...)")
    qrels = [r.require_ranking().qrels for r in results]
    if any(not same_qrels(qrels[0], q) for q in qrels[1:]):
        raise RagReportError("the runs were evaluated against different qrels")
    fill = fill_grade(qrels[0], grade, results[0].conventions.rel_level)
    reach = _reach(wanted)
    look = max_rank if max_rank is not None else reach or DEFAULT_MAX_RANK
    cand_q, cand_d, ranks = _candidates(results, look)
    n = len(cand_q)
    effects = np.zeros((n, len(wanted)))
    gains = np.zeros(n)
    for r in results:
        # averaged ties: the whole ranking (a tied group cut at the reach would change)
        depth = reach if r.conventions.ties == "trec_eval" else None
        e = _effects(r, wanted, depth, cand_q, cand_d, fill) / max(r.n_queries, 1)
        effects += e
        gains += np.abs(e).sum(axis=1)
    names = distinct_names([r.run_name for r in results])
    items = _select(gains, effects, wanted, cand_q, cand_d, ranks, names, budget, per_query)
    return LabelQueue(items, [str(m) for m in wanted], names, fill, n,
                      int(np.count_nonzero(gains > GAIN_FLOOR)), budget, per_query)


def distinct_names(names: Sequence[str]) -> list[str]:
    """Run names made distinct (a repeated one numbered by its position): ``ranks`` are
    keyed by them.

    >>> distinct_names(["r", "s", "r"])
    ['r (1)', 's', 'r (3)']
    """
    return [f"{n} ({i + 1})" if names.count(n) > 1 else n for i, n in enumerate(names)]


def _check_budget(budget: int, per_query: int | None, max_rank: int | None) -> None:
    for name, value in (("budget", budget), ("per_query", per_query), ("max_rank", max_rank)):
        if name != "budget" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RagReportError(f"{name} must be an integer >= 1, got {value!r}")


def _reach(measures: Sequence[Measure]) -> int | None:
    """How deep a document can matter: the largest cutoff, None (whole ranking) when a
    measure has none."""
    cutoffs = [m.cutoff for m in measures]
    return None if any(c is None for c in cutoffs) else int(max(c for c in cutoffs if c))


def _candidates(results: Sequence[EvaluationResult], reach: int
                ) -> tuple[list[str], list[str], list[dict[int, int]]]:
    """Unjudged (query, document) pairs ranked within ``reach`` by any run, in first-seen
    order, and each one's 1-based rank per run (by position in ``results``)."""
    index: dict[tuple[str, str], int] = {}
    ranks: list[dict[int, int]] = []
    for ri, r in enumerate(results):
        rk = r.require_ranking()
        qi = np.repeat(np.arange(rk.n_queries), rk.n_ret)
        pos = np.arange(len(qi)) - rk.ret_offsets[:-1][qi]
        where = np.flatnonzero(np.isnan(rk.ret_grades) & (pos < reach))
        docs = rk.run.doc_ids.take(rk.run_rows[where]).to_pylist()
        for w, d in zip(where.tolist(), docs, strict=True):
            key = (r.query_ids[qi[w]], d)
            at = index.setdefault(key, len(index))
            if at == len(ranks):
                ranks.append({})
            ranks[at][ri] = int(pos[w]) + 1
    return [q for q, _ in index], [d for _, d in index], ranks


def _effects(r: EvaluationResult, measures: list[Measure], reach: int | None,
             cand_q: list[str], cand_d: list[str], grade: float) -> FloatArray:
    """(candidates, measures): the change of each candidate's query value in run ``r`` when
    the candidate alone is read as relevant (0 where ``r`` did not evaluate the query); in
    chunks of about :data:`CHUNK_ROWS` ranked rows (bounded memory)."""
    rk = r.require_ranking()
    at = {q: i for i, q in enumerate(r.query_ids)}
    rows = [(c, at[q]) for c, q in enumerate(cand_q) if q in at]
    out = np.zeros((len(cand_q), len(measures)))
    if not rows:
        return out
    cands, qis = (np.array(x, dtype=np.int64) for x in zip(*rows, strict=True))
    lens = rk.n_ret[qis] if reach is None else np.minimum(rk.n_ret[qis], reach)
    bounds = np.searchsorted(np.cumsum(lens), np.arange(CHUNK_ROWS, int(lens.sum()),
                                                         CHUNK_ROWS), side="right")
    for part in np.split(np.arange(len(cands)), bounds):
        if len(part):
            out[cands[part]] = _chunk_effects(r, measures, reach, cands[part], qis[part],
                                              cand_d, grade)
    return out


def _chunk_effects(r: EvaluationResult, measures: list[Measure], reach: int | None,
                   cands: IntArray, qis: IntArray, cand_d: list[str], grade: float
                   ) -> FloatArray:
    """:func:`_effects` for some candidates: one pseudo-query per candidate ("c<i>", filled)
    and per query they touch ("b<j>", as is), evaluated together."""
    import pyarrow as pa

    from ..core.engine import evaluate

    rk = r.require_ranking()
    base_q = np.unique(qis)
    owners = np.concatenate([qis, base_q])
    names = [f"c{c}" for c in cands.tolist()] + [f"b{q}" for q in base_q.tolist()]
    c = r.conventions
    trec = c.ties == "trec_eval"
    run = _pseudo_run(rk, owners, names, reach, scores=not trec)
    extra_q = pa.array(names[:len(cands)], pa.string())
    extra_d = pa.array([cand_d[c] for c in cands.tolist()], pa.string())
    qrels = _pseudo_qrels(rk, owners, names, extra_q, extra_d, grade)
    # the evaluated order as given; averaged ties: by the scores, the groups averaged again
    order: dict[str, Any] = {"order": "given"} if trec else {
        "order": "score", "ties": c.ties, "score_precision": c.score_precision}
    ev = evaluate(qrels, run, measures, rel_level=c.rel_level, complete=True,
                  no_relevant="zero", duplicates="first", name=r.run_name,
                  fractional_grades=c.fractional_grades, ignore_identical_ids=False,
                  _curve_width=1, **order)
    where = {q: i for i, q in enumerate(ev.query_ids)}
    got = np.column_stack([ev.values(m) for m in measures])
    filled = got[[where[n] for n in names[:len(cands)]]]
    base = got[[where[f"b{q}"] for q in qis.tolist()]]
    return filled - base


def _pseudo_run(rk: Any, owners: IntArray, names: list[str], reach: int | None, *,
                scores: bool = False) -> Run:
    """Each owner query's evaluated ranking (to ``reach``) under its pseudo-query name, in
    its order (``scores``: with the run's scores, for an order by score)."""
    import pyarrow as pa

    starts = rk.ret_offsets[:-1][owners]
    lens = rk.n_ret[owners] if reach is None else np.minimum(rk.n_ret[owners], reach)
    rep = np.repeat(np.arange(len(owners)), lens)
    pos = np.arange(len(rep)) - np.repeat(np.cumsum(lens) - lens, lens)
    rows = rk.run_rows[starts[rep] + pos]
    qids = pa.array(names, pa.string()).take(pa.array(rep))
    return Run(query_ids=qids, doc_ids=rk.run.doc_ids.take(pa.array(rows)), source="label queue",
               lines=None, name="label queue", has_scores=scores,
               scores=rk.run.scores[rows] if scores else -pos.astype(np.float64))


def _pseudo_qrels(rk: Any, owners: IntArray, names: list[str], extra_q: Any, extra_d: Any,
                  grade: float) -> Qrels:
    """Each owner query's judgments under its pseudo-query name, and the filled candidates."""
    import pyarrow as pa

    starts = rk.qrels_offsets[:-1][owners]
    lens = rk.qrels_offsets[1:][owners] - starts
    rep = np.repeat(np.arange(len(owners)), lens)
    pos = np.arange(len(rep)) - np.repeat(np.cumsum(lens) - lens, lens)
    at = starts[rep] + pos
    rows = rk.qrels_rows[at]
    qids = pa.concat_arrays([pa.array(names, pa.string()).take(pa.array(rep)), extra_q])
    docs = rk.qrels.doc_ids.take(pa.array(rows))
    docs = pa.concat_arrays([contiguous(docs).cast(pa.string()), extra_d])
    grades = np.concatenate([rk.qrels_grades[at], np.full(len(extra_q), grade)])
    return Qrels(query_ids=qids, doc_ids=docs, source="label queue", lines=None, grades=grades)


def _select(gains: FloatArray, effects: FloatArray, measures: list[Measure],
            cand_q: list[str], cand_d: list[str], ranks: list[dict[int, int]],
            runs: list[str], budget: int, per_query: int | None) -> list[LabelItem]:
    """The useful candidates by decreasing gain (then best rank, query, document), at most
    ``per_query`` per query, up to ``budget``."""
    useful = np.flatnonzero(gains > GAIN_FLOOR)
    best = np.array([min(ranks[i].values()) for i in useful.tolist()], dtype=np.int64)
    order = sorted(range(len(useful)), key=lambda j: (-gains[useful[j]], best[j],
                                                       cand_q[useful[j]], cand_d[useful[j]]))
    taken: dict[str, int] = {}
    out: list[LabelItem] = []
    for j in order:
        i = int(useful[j])
        q = cand_q[i]
        if per_query is not None and taken.get(q, 0) >= per_query:
            continue
        taken[q] = taken.get(q, 0) + 1
        out.append(LabelItem(q, cand_d[i], float(gains[i]),
                             {str(m): float(e) for m, e in zip(measures, effects[i], strict=True)},
                             {runs[k]: v for k, v in sorted(ranks[i].items())}))
        if len(out) == budget:
            break
    return out


def with_texts(queue: LabelQueue, queries: Mapping[str, str] | None,
               docs: Mapping[str, str] | None) -> LabelQueue:
    """``queue`` with the texts of its queries and documents (those it holds)."""
    from dataclasses import replace

    qs = {i.query_id for i in queue.items}
    ds = {i.doc_id for i in queue.items}
    return replace(queue, query_texts={q: queries[q] for q in qs if queries and q in queries},
                   doc_texts={d: docs[d] for d in ds if docs and d in docs})
