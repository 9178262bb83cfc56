"""EvaluationResult: per-query arrays first, everything else derived from them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import MeasureError, RagReportError
from ..measures import Measure, parse_measure
from ..metrics import FloatArray
from .ranking import Ranking, StoredRanks

if TYPE_CHECKING:
    import numpy.typing as npt

    from .docmap import DocMap, DocMapInfo
    from .ranking import Counts

__all__ = ["ChunkLevel", "Conventions", "EvaluationResult", "RankedDoc"]


@dataclass(frozen=True)
class Conventions:
    """The conventions an evaluation used (stated in every report)."""

    order: str
    rel_level: int
    complete: bool
    max_depth: int | None
    no_relevant: str
    duplicates: str
    k_max: int
    fractional_grades: bool = False
    curve_width: int | None = None
    doc_map: str | None = None  # the chunk -> document map's statement (ragreport.core.docmap)
    ties: str = "trec_eval"  # or "average": expected value over all tie orders (expected.py)
    compat: str | None = None  # a peer's conventions in one word (ragreport.compat)
    compat_exceptions: tuple[str, ...] = ()  # options given explicitly against the preset
    ignore_identical_ids: bool = False  # a document whose id is its query's id is dropped
    score_precision: str = "float64"  # or "float32": scores compared as pytrec_eval's

    def describe(self) -> dict[str, str]:
        """Human-readable statement of each convention."""
        curves = {} if self.curve_width is None or self.curve_width >= self.k_max else {
            "curves": f"K = 1..{self.curve_width} (k_max {self.k_max} asked; curves stop at "
                      "the deepest ranking, at least 20, and at what the input holds; "
                      "measures at larger K are computed from the whole rankings)"}
        return {
            "order": ("score descending, ties broken by document id descending (trec_eval); "
                      "rank column ignored") if self.order == "score" and self.ties != "average"
            else ("score descending; measures averaged over every order of tied scores (see "
                  "ties), only the precision-recall curve in trec_eval's order (ties broken by "
                  "document id descending); rank column ignored") if self.order == "score"
            else "as listed in the run (order='given')",
            "relevant": f"grade >= {self.rel_level}; negative grades are judged-unknown",
            "grades": "fractional grades kept as they are (--fractional-grades)"
            if self.fractional_grades
            else "integers, as trec_eval reads them (C atol): a grade of 1.7 counts as 1",
            "P@K denominator": "K, even when fewer than K documents were retrieved",
            "nDCG gain": "linear: gain = grade (trec_eval); log2(rank+1) discount; IDCG from "
                         "all judged documents of the query",
            "missing queries": "qrels queries missing from the run count as 0 (complete)"
            if self.complete else "only queries in both qrels and run are evaluated",
            "empty result lists": "a judged query listed with no result scores 0 (empty "
                                  "retrieval)",
            "no relevant document": {"zero": "query scores 0 (trec_eval)",
                                     "skip": "query left out",
                                     "raise": "error"}[self.no_relevant],
            "scores": "compared as 64-bit doubles (trec_eval 10)"
            if self.score_precision == "float64" else
            "compared as 32-bit floats (trec_eval 9, pytrec_eval): scores equal in float32 "
            "tie",
            "duplicates": "error" if self.duplicates == "error" else "first occurrence kept",
            "ties": "trec_eval's order" if self.ties == "trec_eval" else
            "expected value over all tie orders (McSherry & Najork 2008)",
            "max depth": "all results" if self.max_depth is None
            else f"first {self.max_depth} results per query",
        } | curves | ({"doc map": self.doc_map} if self.doc_map else {}) | self._compat_lines()

    def _compat_lines(self) -> dict[str, str]:
        """The ``compat`` preset and the identical-ids rule, when used (ragreport.compat)."""
        out: dict[str, str] = {}
        if self.compat is not None:
            from ..compat import describe

            out["compat"] = describe(self.compat, self.compat_exceptions)
        if self.ignore_identical_ids:
            out["identical ids"] = ("a retrieved document whose id equals its query's id is "
                                    "dropped before ranking (ignore_identical_ids, as BEIR "
                                    "and MTEB); dataset health counts them")
        return out


@dataclass(frozen=True)
class RankedDoc:
    """One row of a query's ranking, for display."""

    rank: int
    doc_id: str
    score: float | None
    grade: float | None
    relevant: bool


@dataclass(frozen=True)
class ChunkLevel:
    """The chunk evaluation a document-level result was collapsed from: its ranking gives
    the document level's order (ties straddling its ``max_depth`` cut decide which documents
    are listed, :mod:`ragreport.core.ties`)."""

    ranking: Ranking
    conventions: Conventions
    query_ids: list[str]


class EvaluationResult:
    """The outcome of :func:`ragreport.evaluate` for one run.

    Per-query values are arrays: :meth:`curve` gives (queries, k_max) for a family,
    :meth:`values` gives (queries,) for one measure; means, curves of means, tables and reports
    all derive from them. A result is complete when constructed; :meth:`replace` gives a
    copy with some fields changed.
    """

    def __init__(
        self,
        *,
        run_name: str,
        query_ids: list[str],
        measures: tuple[Measure, ...],
        k_max: int,
        curves: Mapping[Measure, FloatArray],
        scalars: dict[Measure, FloatArray],
        counts: Counts,
        conventions: Conventions,
        ranking: Ranking | StoredRanks,
        query_texts: dict[str, str],
        latency_ms: dict[str, float] | None = None,
        document: EvaluationResult | None = None,
        redundancy: npt.NDArray[np.int64] | None = None,
        doc_map_info: DocMapInfo | None = None,
        doc_map: DocMap | None = None,
        chunk_level: ChunkLevel | None = None,
        beyond: Mapping[Measure, FloatArray] | None = None,
        wide_curves: Mapping[Measure, FloatArray] | None = None,
        qrels_sha256: str | None = None,
        qrels_judgments_sha256: str | None = None,
    ) -> None:
        self.run_name = run_name
        self.query_ids = list(query_ids)
        self.measures = measures
        self.k_max = k_max
        self.curves = curves
        self.scalars = scalars
        self.counts = counts
        self.conventions = conventions
        self.ranking = ranking
        self.query_texts = query_texts
        #: query id -> the retriever's time for the query in milliseconds, when the run
        #: carried it (:func:`ragreport.collect_run`, JSONL ``latency_ms``); every
        #: timed query, evaluated or not. Empty when unknown.
        self.latency_ms: dict[str, float] = dict(latency_ms or {})
        #: Evaluated with a doc map (``doc_map=``): the same run at document level, the
        #: (queries, k_max) redundancy counts, how the inputs met the map and the map; else
        #: None.
        self.document = document
        self.redundancy = redundancy
        self.doc_map_info = doc_map_info
        self.doc_map = doc_map
        #: A document-level result: the chunk evaluation it was collapsed from (else None).
        self.chunk_level = chunk_level
        #: Values of measures past the curves' width, computed when first asked for (or
        #: given: read from per-query files).
        self._beyond_values: dict[Measure, FloatArray] = dict(beyond or {})
        #: Read from per-query tables: curves stored wider than one evaluation of these
        #: queries has (an engine's partitions), for values past the cut.
        self.wide_curves: dict[Measure, FloatArray] = dict(wide_curves or {})
        #: Read from per-query tables: the qrels' fingerprint every shard of the run states
        #: (``evaluate --per-query-out`` writes the qrels file's SHA-256), and the
        #: judgments' (:func:`~ragreport.analysis.drift.judgments_sha256`); None when a shard
        #: states none (the engines) or for an evaluation.
        self.qrels_sha256 = qrels_sha256
        self.qrels_judgments_sha256 = qrels_judgments_sha256

    @property
    def has_rankings(self) -> bool:
        """Whether the rankings are here (False for a result read from per-query tables,
        whose :attr:`ranking` is a :class:`~ragreport.core.ranking.StoredRanks`: no ranked lists,
        judgments or tie analysis)."""
        return isinstance(self.ranking, Ranking)

    def require_ranking(self) -> Ranking:
        """The rankings; a RagReportError when the result holds none (per-query tables)."""
        if not isinstance(self.ranking, Ranking):
            raise RagReportError("per-query results hold no rankings; use the qrels and run "
                                 "files")
        return self.ranking

    def replace(self, **changes: Any) -> EvaluationResult:
        """A new result with the given constructor fields changed (``conventions=``,
        ``chunk_level=`` ...), the others shared with this one."""
        fields = {k: getattr(self, k) for k in (
            "run_name", "query_ids", "measures", "k_max", "curves", "scalars", "counts",
            "conventions", "ranking", "query_texts", "latency_ms", "document", "redundancy",
            "doc_map_info", "doc_map", "chunk_level", "wide_curves", "qrels_sha256",
            "qrels_judgments_sha256")}
        fields["beyond"] = self._beyond_values
        return EvaluationResult(**(fields | changes))

    # ---- values ---------------------------------------------------------------------------
    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def _measure(self, measure: str | Measure) -> Measure:
        return parse_measure(measure)

    def curve(self, measure: str | Measure) -> FloatArray:
        """(queries, k_max) per-query values of a family at K = 1..k_max.

        :attr:`k_max` is the curves' width: the ``k_max`` asked for, or less when the rankings
        (and the input) are shorter (see :func:`ragreport.core.engine.curve_width`).

        ``measure`` may name the family (``"nDCG"``) or any measure of it (``"nDCG@10"``).
        """
        m = self._measure(measure) if not isinstance(measure, str) or "@" in measure \
            else self._family(measure)
        key = m.curve_key
        if key not in self.curves:
            if not m.has_curve:
                raise MeasureError(f"{m} has no cutoff, so no metric-vs-K curve")
            raise MeasureError(f"no curve for {key}; evaluate with a measure of that family "
                               f"(available: {', '.join(map(str, self.curves))})")
        return self.curves[key]

    def _family(self, text: str) -> Measure:
        from ..measures import parse_family

        return parse_family(text)  # any peer's spelling: "recall", "ndcg_burges", "P(rel=2)"

    def values(self, measure: str | Measure) -> FloatArray:
        """(queries,) per-query values of one measure, in :attr:`query_ids` order.

        A measure with a cutoff K is read from its curve when K <= :attr:`k_max` (the curves'
        width); beyond it (any K up to 2**53) it is computed from the sparse forms of the
        ranking, in memory proportional to the input, with the same value the curve would
        have had (e.g. P@K = relevant retrieved / K past the end of every ranking). A measure
        of a family whose curve was not computed is an error (as for :meth:`curve`).

        >>> from ragreport import evaluate
        >>> r = evaluate({"q": {"a": 1}}, {"q": ["a", "b"]}, ["P@1"])
        >>> r.k_max, r.values("P@1000000").tolist()
        (20, [1e-06])
        """
        m = self._measure(measure)
        if m.cutoff is not None:
            if m.cutoff > self.k_max:
                if m.curve_key not in self.curves:
                    self.curve(m)  # raises: the family was not evaluated
                return self._beyond(m)
            return self.curve(m)[:, m.cutoff - 1]
        if m not in self.scalars and not self.has_rankings:  # as for a curve past the files
            raise MeasureError(f"{m} is not in the per-query results (stored: "
                               f"{', '.join(map(str, self.scalars)) or 'none'}); evaluate "
                               "with it among the measures")
        if m not in self.scalars:
            raise MeasureError(f"{m} was not computed; pass it in measures= "
                               f"(computed: {', '.join(map(str, self.scalars))})")
        return self.scalars[m]

    def _beyond(self, m: Measure) -> FloatArray:
        cache = self._beyond_values
        if m not in cache:
            cache[m] = self._past_curves(m)
        return cache[m]

    def _past_curves(self, m: Measure) -> FloatArray:
        """A measure at a cutoff past the curves: from the rankings' sparse forms; read from
        per-query tables, from the curves stored wider, or (a health measure, Judged@K) from
        the stored judged ranks."""
        from .context import Context
        from .kernel import cutoff_values, kernel_of

        level = float(self.conventions.rel_level)
        if isinstance(self.ranking, Ranking):
            return cutoff_values(self.ranking, m, level, ties=self.conventions.ties)
        wide = self.wide_curves
        if m.cutoff is not None and m.curve_key in wide \
                and m.cutoff <= wide[m.curve_key].shape[1]:  # stored beyond the cut
            return np.ascontiguousarray(wide[m.curve_key][:, m.cutoff - 1])
        at = kernel_of(m).at
        if m.family.health and at is not None and m.cutoff is not None \
                and self.conventions.ties != "average":
            # its at-K form reads the judged ranks and the retrieved counts only
            return at(Context(cast("Ranking", self.ranking), level), m, m.cutoff)
        raise RagReportError(f"{m} is not in the per-query results (the curves stop at K = "
                             f"{self.k_max}); evaluate with it among the measures")

    def mean(self, measure: str | Measure) -> float:
        """Mean over the evaluated queries (rounded as the peer reports it under a ``compat``
        preset that rounds, such as BEIR's 5 decimals; the per-query values never are)."""
        v = self.values(measure)
        if self.conventions.compat is None:
            return float(v.mean()) if len(v) else 0.0
        from ..compat import peer_mean

        return peer_mean(self.conventions.compat, self._measure(measure), v)

    def means(self, measures: list[str | Measure] | None = None) -> dict[str, float]:
        """Canonical name -> mean, for the summary measures (or those given)."""
        ms = [self._measure(m) for m in measures] if measures else list(self.measures)
        return {str(m): self.mean(m) for m in ms}

    def mean_curve(self, measure: str | Measure) -> FloatArray:
        """(k_max,) mean over queries of a family at K = 1..k_max."""
        c = self.curve(measure)
        return c.mean(axis=0) if len(c) else np.zeros(self.k_max)

    def per_query(self, measure: str | Measure) -> dict[str, float]:
        """query id -> value of one measure."""
        return dict(zip(self.query_ids, self.values(measure).tolist(), strict=True))

    def query_index(self, query_id: str) -> int:
        """Position of a query id in :attr:`query_ids` (a RagReportError when the query was
        not evaluated)."""
        return self.ranking.query_index(query_id)

    def query(self, query_id: str) -> dict[str, float]:
        """Every summary measure for one query."""
        i = self.ranking.query_index(query_id)
        return {str(m): float(self.values(m)[i]) for m in self.measures}

    # ---- rankings, for display -------------------------------------------------------------
    def ranked_list(self, query_id: str, limit: int | None = None) -> list[RankedDoc]:
        """The query's ranking as evaluated (after ordering and ``max_depth``)."""
        rk = self.require_ranking()
        i = rk.query_index(query_id)
        lo, hi = int(rk.ret_offsets[i]), int(rk.ret_offsets[i + 1])
        if limit is not None:
            hi = min(hi, lo + limit)
        rows = rk.run_rows[lo:hi]
        docs = rk.run.doc_ids.take(rows).to_pylist() if len(rows) else []
        scores = rk.run.scores[rows]
        grades = rk.ret_grades[lo:hi]
        level = self.conventions.rel_level
        out = []
        for j, (d, s, g) in enumerate(zip(docs, scores.tolist(), grades.tolist(), strict=True)):
            gv = None if math.isnan(g) else g
            out.append(RankedDoc(j + 1, d, s if rk.run.has_scores else None, gv,
                                 gv is not None and gv >= level))
        return out

    def judged(self, query_id: str) -> list[tuple[str, float]]:
        """(doc id, grade) of every judged document of the query, best grade first."""
        rk = self.require_ranking()
        i = rk.query_index(query_id)
        lo, hi = int(rk.qrels_offsets[i]), int(rk.qrels_offsets[i + 1])
        rows = rk.qrels_rows[lo:hi]
        docs = rk.qrels.doc_ids.take(rows).to_pylist() if len(rows) else []
        return list(zip(docs, rk.qrels_grades[lo:hi].tolist(), strict=True))

    def missing_relevant(self, query_id: str) -> list[tuple[str, float]]:
        """Relevant documents (grade >= rel_level) that were not retrieved at all."""
        retrieved = {d.doc_id for d in self.ranked_list(query_id)}
        level = self.conventions.rel_level
        return [(d, g) for d, g in self.judged(query_id) if g >= level and d not in retrieved]

    # ---- export ----------------------------------------------------------------------------
    def counts_dict(self) -> dict[str, int]:
        """The dataset counts as a plain dict."""
        return asdict(self.counts)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """Plain data: run, means, counts, conventions (and per-query values on request)."""
        out: dict[str, Any] = {
            "run": self.run_name,
            "queries": self.n_queries,
            "k_max": self.k_max,
            "means": self.means(),
            "counts": self.counts_dict(),
            "conventions": asdict(self.conventions),
        }
        if per_query:
            out["per_query"] = {
                q: {str(m): float(self.values(m)[i]) for m in self.measures}
                for i, q in enumerate(self.query_ids)
            }
        return out

    def __repr__(self) -> str:
        from ..present import shown

        means = ", ".join(f"{k}={shown(v)}" for k, v in self.means().items())
        return f"<EvaluationResult run={self.run_name!r} queries={self.n_queries} {means}>"

    def _repr_html_(self) -> str:
        from ..present import html_escape, shown

        rows = "".join(
            f"<tr><td>{html_escape(k)}</td><td style='text-align:right'>{shown(v)}</td></tr>"
            for k, v in self.means().items()
        )
        c = self.counts
        return (
            f"<div class='ragreport-summary'><strong>{html_escape(self.run_name)}</strong>: "
            f"{c.evaluated} queries evaluated ({c.run_only} run-only ignored, "
            f"{c.qrels_only} qrels-only, {c.no_relevant} without a relevant document)"
            f"<table><thead><tr><th>measure</th><th>mean</th></tr></thead><tbody>{rows}"
            "</tbody></table></div>"
        )
