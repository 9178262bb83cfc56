"""``evaluate``: inputs -> aligned ranking -> every measure at every K -> EvaluationResult."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import metrics
from ..errors import MeasureError, RagReportError
from ..measures import Measure, normalize_measures
from ..metrics import FloatArray
from .align import align
from .context import CURVE_CELLS, DEFAULT_K_MAX, Context
from .kernel import (
    ALWAYS_SCALAR,
    CURVE_FAMILIES,
    check_average,
    expected_curve,
    expected_values,
    kernel_of,
)
from .ranking import Ranking
from .result import ChunkLevel, Conventions, EvaluationResult
from .tiegroups import attach_uncut, has_ties

if TYPE_CHECKING:
    from ..data import Qrels
    from .docmap import DocMap

__all__ = ["LazyCurves", "curve_width", "evaluate", "pr_curve", "reevaluate"]


def curve_width(k_max: int, ranking: Ranking) -> int:
    """Width of the metric-vs-K curves: ``min(k_max, max(20, min(depth, budget // queries)))``.

    ``depth`` is the deepest ranking and ``budget`` is ``max(2**20, retrieved rows + judged
    rows)``: curves are never wider than the deepest ranking (past it every measure is
    constant or a closed form of the whole ranking, computed from sparse forms when asked
    for), nor than the input allows (one query 200,000 deep among 5,000 short ones does not
    make 5,000 x 200,000 curves); a width of 20 (or ``k_max``, if smaller) is always kept.
    For ``k_max`` up to 20, or rankings at least ``k_max`` deep, it is ``k_max``.

    >>> from ragreport.core.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"a": 1}}), load_run({"q": ["a", "b"]}))
    >>> curve_width(10**9, rk), curve_width(5, rk)
    (20, 5)
    """
    budget = max(CURVE_CELLS, len(ranking.run_rows) + len(ranking.qrels_rows))
    per_query = budget // max(ranking.n_queries, 1)
    return min(k_max, max(DEFAULT_K_MAX, min(ranking.depth, per_query)))


class LazyCurves(Mapping[Measure, FloatArray]):
    """The (queries, k_max) curves of an evaluation, each computed when first used, then kept.

    Every key is known from the start (iterating computes nothing); asking for P does not pay
    for AP. The values are those the metric functions give.
    """

    def __init__(self, keys: Iterable[Measure],
                 compute: Callable[[Measure], FloatArray]) -> None:
        self._keys = list(dict.fromkeys(keys))
        self._compute: Callable[[Measure], FloatArray] | None = compute
        self._done: dict[Measure, FloatArray] = {}

    def __getitem__(self, key: Measure) -> FloatArray:
        if key not in self._done:
            if key not in self._keys or self._compute is None:
                raise KeyError(key)
            self._done[key] = self._compute(key)
            if len(self._done) == len(self._keys):
                self._compute = None  # everything computed: let the inputs go
        return self._done[key]

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[Measure]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled (or deep-copied) as a plain dict of every curve: the compute function is
        # a closure over the evaluation and does not travel
        return (dict, (dict(self.items()),))


def pr_curve(result: EvaluationResult, rel: int | None = None,
             rounding: str = "lround") -> FloatArray:
    """(queries, 11) interpolated precision of each query at recall 0.0, 0.1, ..., 1.0.

    The 11-point precision-recall curve: column j is trec_eval's ``iprec_at_recall`` at
    :data:`ragreport.metrics.PR_LEVELS` ``[j]`` (``IPrec@0.j``), per query, in
    ``result.query_ids`` order; its mean over the queries (axis 0) is what trec_eval prints
    in its ``all`` block. ``rel`` is the smallest relevant grade (default: the evaluation's
    ``rel_level``). ``rounding="trec_eval9"`` gives trec_eval 9's levels (pytrec_eval's,
    ir_measures'), see :func:`ragreport.metrics.interpolated_precision`.

    >>> r = evaluate({"q": {"a": 1, "b": 1, "c": 1, "d": 1}}, {"q": ["a", "x", "b"]}, ["RR"],
    ...              order="given")
    >>> pr_curve(r).round(4).tolist()
    [[1.0, 1.0, 1.0, 1.0, 0.6667, 0.6667, 0.6667, 0.0, 0.0, 0.0, 0.0]]
    """
    rk = result.ranking
    level = float(result.conventions.rel_level if rel is None else rel)
    qi, pos = rk.relevant_ranks(level)
    return metrics.interpolated_precision(rk.n_queries, qi, pos, rk.n_relevant(level),
                                          metrics.PR_LEVELS, rounding)


def _curve(ctx: Context, m: Measure, width: int) -> FloatArray:
    form = kernel_of(m).curve
    if form is None:
        raise MeasureError(f"{m} has no metric-vs-K curve")
    return form(ctx, m, width)


def _scalar(ctx: Context, m: Measure, average: bool) -> FloatArray:
    """The whole-ranking value (its expected value over tie orders when ``average``)."""
    form = kernel_of(m).scalar
    if form is None:
        raise MeasureError(f"{m} needs a cutoff")
    return expected_values(ctx, m, None) if average else form(ctx, m)


_ORDERS = ("score", "given")
NO_RELEVANT = ("zero", "skip", "raise")
_DUPS = ("error", "first")
_TIES = ("trec_eval", "average")


def _average_needed(ranking: Ranking) -> bool:
    """ties='average' differs from trec_eval's order only where scores tie (in the ranking
    before its ``max_depth`` cut, when it was cut:
    :func:`ragreport.core.tiegroups.attach_uncut`)."""
    full = ranking.memo.get("uncut")
    return has_ties(ranking if full is None else full[0])


def check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise RagReportError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise RagReportError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise RagReportError(f"{name} must be one of {', '.join(map(repr, choices))}, "
                             f"got {value!r}")
    return str(value)


def reevaluate(result: EvaluationResult, qrels: Any, measures: Any = None, *,
               curves: bool = True) -> EvaluationResult:
    """``result``'s run evaluated again against other ``qrels`` (filled, merged, one
    source's), under the conventions it was evaluated with (resolved: order, relevance
    level, depth, tie rule, identical-id rule, score precision); ``measures`` default the
    result's; ``curves=False`` keeps one curve column (measures then come from the sparse
    forms, with the same values).

    >>> r = evaluate({"q": {"a": 1}}, {"q": ["b", "a"]}, ["P@1"])
    >>> reevaluate(r, {"q": {"b": 1}}).mean("P@1")
    1.0
    """
    rk = result.require_ranking()
    c = result.conventions
    return evaluate(qrels, rk.run, list(result.measures if measures is None else measures),
                    c.k_max, order=c.order, rel_level=c.rel_level, complete=c.complete,
                    max_depth=c.max_depth, no_relevant=c.no_relevant, duplicates=c.duplicates,
                    name=result.run_name, fractional_grades=c.fractional_grades, ties=c.ties,
                    ignore_identical_ids=c.ignore_identical_ids,
                    score_precision=c.score_precision,
                    _curve_width=result.k_max if curves else 1)


def rejudgeable(result: EvaluationResult) -> bool:
    """Whether :func:`rejudged` can evaluate ``result``'s run with other judgments: it holds
    its rankings in memory, without a doc map, and its ties are not averaged over a depth
    cut (whose tie groups are those of the uncut ranking)."""
    c = result.conventions
    return isinstance(result.ranking, Ranking) and result.doc_map_info is None \
        and result.document is None and not (c.ties == "average" and c.max_depth is not None)


def rejudged(result: EvaluationResult, ranking: Ranking, measures: Any = None, *,
             curves: bool = True) -> EvaluationResult:
    """``result``'s run evaluated over ``ranking``, the same ranking with judgments added
    (:meth:`~.ranking.Ranking.with_judgments`), under the conventions ``result`` was
    evaluated with: what :func:`reevaluate` gives with those judgments in the qrels, without
    aligning the run again (see :func:`rejudgeable`); ``measures`` and ``curves`` as there.

    >>> import pyarrow as pa
    >>> r = evaluate({"q": {"a": 1}}, {"q": ["b", "a"]}, ["P@1"])
    >>> rk = r.require_ranking().with_judgments(np.array([0]), pa.array(["b"]),
    ...                                         np.array([1.0]), np.array([0]), 1)
    >>> rejudged(r, rk).mean("P@1")
    1.0
    """
    if not rejudgeable(result):
        raise RagReportError("this result cannot be evaluated with other judgments without "
                             "aligning its run again (use reevaluate)")
    c = result.conventions
    s = _settings(list(result.measures if measures is None else measures), c.k_max,
                  order=c.order, rel_level=c.rel_level, complete=c.complete,
                  max_depth=c.max_depth, no_relevant=c.no_relevant, duplicates=c.duplicates,
                  fractional_grades=c.fractional_grades, doc_map=None, ties=c.ties,
                  compat=None, ignore_identical_ids=c.ignore_identical_ids,
                  score_precision=c.score_precision)
    width = min(result.k_max if curves else 1, s.k_max)
    computed, scalars = _computed(ranking, s, width)
    return EvaluationResult(
        run_name=result.run_name, query_ids=ranking.query_ids, measures=tuple(s.wanted),
        k_max=width, curves=computed, scalars=scalars, counts=ranking.counts,
        conventions=replace(c, curve_width=width), ranking=ranking,
        query_texts=dict(result.query_texts), latency_ms=result.latency_ms)


def evaluate(
    qrels: Any,
    run: Any,
    measures: str | Measure | Iterable[str | Measure] | None = None,
    k_max: int | None = None,
    *,
    order: str | None = None,
    rel_level: int = 1,
    complete: bool | None = None,
    max_depth: int | None = None,
    no_relevant: str = "zero",
    duplicates: str = "error",
    name: str | None = None,
    fractional_grades: bool = False,
    doc_map: Any = None,
    ties: str = "trec_eval",
    compat: str | None = None,
    ignore_identical_ids: bool | None = None,
    score_precision: str | None = None,
    _curve_width: int | None = None,
) -> EvaluationResult:
    """Evaluate a run against qrels: every measure, for every K from 1 to ``k_max``.

    Parameters
    ----------
    qrels, run : path or object
        Anything :func:`ragreport.load_qrels` / :func:`ragreport.load_run` read.
    measures : str or list of str, optional
        Measures for the summary (``"nDCG@10"``, ``"mrr"``, ``"P.5,10"``...); default
        :data:`ragreport.measures.DEFAULT_MEASURES`. Curves (K = 1..k_max) are computed for
        P, R, F1, HitRate, RR, nDCG and AP in any case, plus any parameterised family asked for.
    k_max : int, optional
        Largest K of the curves asked for; default ``max(20, largest cutoff asked for)``. Must
        be at least the largest cutoff asked for. The curves stop earlier when the rankings do
        (never wider than the deepest ranking, but at least 20) or when queries x K would
        exceed what the input holds (see :func:`curve_width`); ``result.k_max`` is the width
        they have. Measures at any cutoff (up to 2**53) are computed from sparse forms in
        memory proportional to the input, so ``P@1000000000`` costs no more than ``P@10``.
    order : {"score", "given"}, optional
        ``"score"``: by score descending, ties by document id descending (trec_eval; rank
        columns are ignored). ``"given"``: as listed. Default: ``compat``'s (``"given"`` for
        LlamaIndex), else ``"score"``.
    rel_level : int
        Minimum grade that counts as relevant (trec_eval ``-l``); nDCG uses the positive grades
        themselves as gains whatever this is.
    complete : bool, optional
        Count qrels queries missing from the run as empty rankings (trec_eval ``-c``).
        Default: ``compat``'s (True for MTEB, whose results list every query), else False.
    max_depth : int, optional
        Only the first N results of each query count (trec_eval ``-M``).
    no_relevant : {"zero", "skip", "raise"}
        A query without a relevant document scores 0 (trec_eval), is left out, or is an error.
    duplicates : {"error", "first"}
        A document twice in one query of the run is an error, or its first occurrence is kept.
    name : str, optional
        Run name shown in reports.
    fractional_grades : bool
        Grades read from ``qrels`` are integers by default, as trec_eval reads them (``1.7``
        is 1; a grade in exponent notation is an error); True keeps fractional grades as
        gains (relevant when grade >= ``rel_level``). No effect on an already loaded Qrels.
    doc_map : path, Mapping[str, str] or DocMap, optional
        Chunk id -> document id (:func:`ragreport.load_doc_map`): the run is then
        evaluated at chunk level (this result) and at document level (``result.document``,
        the chunk ranking collapsed to documents: a document's rank is its best chunk's),
        with ``result.redundancy`` (per query and K, chunks of a document already ranked
        above) and ``result.doc_map_info``. Judgments may be per chunk or per document
        (see :mod:`ragreport.core.docmap`); an id missing from the map is an error naming its
        file and line unless the map was loaded with ``unmapped="own"``.
    ties : {"trec_eval", "average"}
        ``"trec_eval"``: tied scores in trec_eval's order (document id descending).
        ``"average"``: every value is its expected value over all orders of each group of
        tied scores (McSherry and Najork, ECIR 2008), computed exactly (see
        :mod:`ragreport.core.ties`); a measure without an exact expectation (ERR, Bpref, IPrec)
        is refused. Needs ``order="score"``; not available with ``doc_map``. With
        ``max_depth`` the tied groups are those of the uncut ranking, and the depth cuts
        after the order (every order of a group across the depth is averaged over).
    compat : {"trec_eval", "beir", "mteb", "ranx", "llamaindex"}, optional
        A peer tool's conventions in one word (:mod:`ragreport.compat`): its measures when
        none are given, its order, identical-id rule and reading of grades, its rounding of
        the means. Options given explicitly win and the conventions name them.
    ignore_identical_ids : bool, optional
        Drop every retrieved document whose id equals its query's id before evaluating (BEIR
        and MTEB's ``ignore_identical_ids``), counted in ``counts.identical_ids_dropped``.
        Default: ``compat``'s (True for BEIR), else False.
    score_precision : {"float64", "float32"}, optional
        How scores are compared when ranking. ``"float64"`` (trec_eval 10): the full values.
        ``"float32"`` (trec_eval 9, pytrec_eval and so BEIR, MTEB and ir_measures): each
        score rounded to the nearest 32-bit float first, so two scores that differ only
        beyond float32 precision tie and are ordered by document id descending. Tie exposure
        and ``ties="average"`` see the same ties. Default: ``compat``'s (``"float32"`` for
        BEIR and MTEB), else ``"float64"``.

    Returns
    -------
    EvaluationResult

    Examples
    --------
    >>> r = evaluate({"q1": {"d3": 1, "d7": 1, "d12": 1}},
    ...              {"q1": ["d1", "d3", "d5", "d7", "d9"]}, ["R@5", "P@5", "RR"])
    >>> {k: round(v, 3) for k, v in r.means().items()}
    {'R@5': 0.667, 'P@5': 0.4, 'RR': 0.5}
    >>> r.curve("P")[0, :3].round(3).tolist()
    [0.0, 0.5, 0.333]
    """
    from ..compat import prepare_qrels
    from ..io import load_qrels, load_run

    s = _settings(measures, k_max, order=order, rel_level=rel_level, complete=complete,
                  max_depth=max_depth, no_relevant=no_relevant, duplicates=duplicates,
                  fractional_grades=fractional_grades, doc_map=doc_map, ties=ties,
                  compat=compat, ignore_identical_ids=ignore_identical_ids,
                  score_precision=score_precision)
    cfg = s.cfg
    q = prepare_qrels(cfg.compat, load_qrels(qrels, fractional_grades=s.fractional_grades),
                      s.rel_level)
    r = load_run(run, name=name).at_precision(cfg.score_precision)
    if doc_map is not None:  # chunks and documents (ragreport.core.docmap)
        from .docmap import chunk_qrels, judgment_level, load_doc_map

        dm = load_doc_map(doc_map)
        given_qrels = q
        dm_level, dm_neither = judgment_level(q, dm)
        q = chunk_qrels(q, dm, dm_level)
    ranking = _aligned(q, r, s)
    width = _curve_width if _curve_width is not None else curve_width(s.k_max, ranking)
    width = min(width, s.k_max)
    curves, scalars = _computed(ranking, s, width)
    conventions = Conventions(order=s.order, rel_level=s.rel_level, complete=bool(cfg.complete),
                              max_depth=s.max_depth, no_relevant=s.no_relevant,
                              duplicates=s.duplicates, k_max=s.k_max,
                              fractional_grades=s.fractional_grades,
                              curve_width=width, ties=s.ties, compat=cfg.compat,
                              compat_exceptions=cfg.exceptions,
                              ignore_identical_ids=cfg.ignore_identical_ids,
                              score_precision=cfg.score_precision)
    level: dict[str, Any] = {}
    if doc_map is not None:  # the same run at document level, and the chunks' redundancy
        level = _document_level(ranking, conventions, width, s.wanted, r.name, dm, dm_level,
                                dm_neither, given_qrels, {
            "k_max": s.k_max, "rel_level": s.rel_level, "complete": bool(cfg.complete),
            "no_relevant": s.no_relevant, "fractional_grades": s.fractional_grades,
            "compat": cfg.compat, "ignore_identical_ids": cfg.ignore_identical_ids,
            "score_precision": cfg.score_precision})
    fields: dict[str, Any] = {
        "run_name": r.name, "query_ids": ranking.query_ids, "measures": tuple(s.wanted),
        "k_max": width, "curves": curves, "scalars": scalars, "counts": ranking.counts,
        "conventions": conventions, "ranking": ranking, "query_texts": dict(r.query_texts),
        "latency_ms": r.latency_ms}
    return EvaluationResult(**(fields | level))


@dataclass(frozen=True)
class _Settings:
    """The options of one evaluation, checked (``cfg``: the compat preset resolved)."""

    cfg: Any
    order: str
    no_relevant: str
    duplicates: str
    ties: str
    rel_level: int
    max_depth: int | None
    wanted: list[Measure]
    k_max: int
    fractional_grades: bool


def _settings(measures: Any, k_max: int | None, *, order: str | None, rel_level: int,
              complete: bool | None, max_depth: int | None, no_relevant: str,
              duplicates: str, fractional_grades: bool, doc_map: Any, ties: str,
              compat: str | None, ignore_identical_ids: bool | None,
              score_precision: str | None) -> _Settings:
    """Check evaluate's options (a RagReportError or MeasureError names the first wrong
    one) and resolve the compat preset."""
    from ..compat import default_measures, resolve

    cfg = resolve(compat, order=order, ignore_identical_ids=ignore_identical_ids,
                  explicit={"rel_level": rel_level} if rel_level != 1 else None,
                  complete=complete, score_precision=score_precision)
    order = check_choice("order", cfg.order, _ORDERS)
    no_relevant = check_choice("no_relevant", no_relevant, NO_RELEVANT)
    duplicates = check_choice("duplicates", duplicates, _DUPS)
    ties = check_choice("ties", ties, _TIES)
    if ties == "average" and order != "score":
        raise RagReportError("ties='average' averages over the orders of tied scores; with "
                             "order='given' nothing is tied (use order='score')")
    if ties == "average" and doc_map is not None:
        # the document level orders documents by their best chunk: the chunks' tie orders
        # do not give each order of the tied documents the same chance
        raise RagReportError("ties='average' is not supported with doc_map (the document "
                             "level's expected value over the chunks' tie orders is not "
                             "computed); use ties='trec_eval'")
    rel_level = check_int("rel_level", rel_level, 0)  # negative grades are never relevant
    if max_depth is not None:
        max_depth = check_int("max_depth", max_depth, 1)
    wanted = normalize_measures(default_measures(cfg.compat) if measures is None else measures)
    if ties == "average":
        for m in wanted:
            check_average(m)
    cutoffs = [m.cutoff for m in wanted if m.cutoff is not None]
    if k_max is None:
        k_max = max([DEFAULT_K_MAX, *cutoffs])
    else:
        k_max = check_int("k_max", k_max, 1)
        too_big = [m for m in wanted if m.cutoff is not None and m.cutoff > k_max]
        if too_big:
            raise MeasureError(f"k_max ({k_max}) is smaller than the cutoff of {too_big[0]}")
    if not isinstance(fractional_grades, (bool, np.bool_)):
        raise RagReportError(f"fractional_grades must be True or False, got "
                             f"{fractional_grades!r}")
    return _Settings(cfg, order, no_relevant, duplicates, ties, rel_level, max_depth, wanted,
                     k_max, bool(fractional_grades))


def _aligned(q: Qrels, r: Any, s: _Settings) -> Ranking:
    """The run joined to the qrels and ordered (:func:`~.align.align`); with
    ``ties="average"`` and a depth cut, the uncut ranking's tie groups attached."""
    cfg = s.cfg
    ranking = align(q, r, order=s.order, complete=bool(cfg.complete), max_depth=s.max_depth,
                    rel_level=s.rel_level, no_relevant=s.no_relevant, duplicates=s.duplicates,
                    ignore_identical_ids=cfg.ignore_identical_ids)
    if s.ties == "average" and s.max_depth is not None and int(ranking.n_ret.max(initial=0)) \
            >= s.max_depth:  # tie groups are the uncut ranking's; the depth cuts after them
        attach_uncut(ranking, align(q, r, order=s.order, complete=bool(cfg.complete),
                                    rel_level=s.rel_level, no_relevant=s.no_relevant,
                                    duplicates=s.duplicates,
                                    ignore_identical_ids=cfg.ignore_identical_ids), s.max_depth)
    return ranking


def _computed(ranking: Ranking, s: _Settings, width: int
              ) -> tuple[LazyCurves, dict[Measure, FloatArray]]:
    """The curves (computed when first read) and the whole-ranking values of a ranking; the
    measures' input checks run now (refused now, not when a curve is first read)."""
    ctx = Context(ranking, float(s.rel_level), width)
    for check in dict.fromkeys(kernel_of(m).check for m in s.wanted):
        if check is not None:
            check(ctx)
    curve_keys: list[Measure] = [Measure(f) for f in CURVE_FAMILIES]
    for m in s.wanted:
        if m.has_curve and m.curve_key not in curve_keys:
            curve_keys.append(m.curve_key)
    average = s.ties == "average" and _average_needed(ranking)
    curves = LazyCurves(curve_keys, (lambda key: expected_curve(ctx, key, width)) if average
                        else (lambda key: _curve(ctx, key, width)))
    scalar_keys: list[Measure] = [Measure(f) for f in ALWAYS_SCALAR]
    for m in s.wanted:
        if m.cutoff is None and m not in scalar_keys:
            scalar_keys.append(m)
    return curves, {key: _scalar(ctx, key, average) for key in scalar_keys}


def _document_level(ranking: Ranking, conventions: Conventions, width: int,
                    wanted: list[Measure], run_name: str, dm: DocMap, level: str,
                    n_neither: int, qrels: Qrels, options: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a chunk-level result evaluated with a doc map adds: ``document`` (the run
    collapsed to documents, evaluated on the document-level qrels, with the same queries and
    measures), ``redundancy`` ((queries, width) counts), ``doc_map_info``, ``doc_map``, and
    ``conventions`` stating the map (the document level's state it too).

    ``qrels`` are the judgments as given (at ``level``); ``options`` the keywords of the
    chunk-level evaluation that apply at document level too.
    """
    from .docmap import DocMapInfo, document_level, document_qrels, redundancy

    lv = document_level(ranking, dm)
    doc = evaluate(document_qrels(qrels, dm, level), lv.run, list(wanted), options["k_max"],
                   **{k: v for k, v in options.items() if k != "k_max"},
                   order="given", max_depth=None, duplicates="error", name=run_name)
    info = DocMapInfo(dm.source, len(dm), dm.n_documents, level, dm.unmapped,
                      lv.unmapped_retrieved, n_neither, int(lv.repeated.sum()))
    text = info.describe()
    chunks = replace(conventions, doc_map=text)
    doc = doc.replace(conventions=replace(doc.conventions, doc_map=text),
                      chunk_level=ChunkLevel(ranking, chunks, ranking.query_ids))
    return {"conventions": chunks, "document": doc, "doc_map_info": info, "doc_map": dm,
            "redundancy": redundancy(ranking, lv.repeated, width)}
