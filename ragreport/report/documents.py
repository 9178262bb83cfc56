"""The report's chunk and document levels side by side (evaluated with a doc map).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..analysis.curves import run_intervals
from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..measures import Measure
from ..present import (
    shown,
    target_rule,
)
from ..targets import Target

if TYPE_CHECKING:
    from ..parallel import Mapper

__all__ = ["document_cis", "document_report", "document_results"]

from ..present import curve_title
from .breakdowns import DocumentReport, DocumentRun, LevelCell, LevelRow, QueryDocuments
from .cells import Curve, StatsInfo, WorstQueries


def document_results(results: Sequence[EvaluationResult], target_level: str
                      ) -> list[EvaluationResult] | None:
    """The document-level results (every run evaluated with a doc map), else None."""
    if target_level not in ("chunk", "document"):
        raise RagReportError(f"target_level must be 'chunk' or 'document', got "
                             f"{target_level!r}")
    docs = [r.document for r in results]
    if all(d is None for d in docs):
        if target_level == "document":
            raise RagReportError("target_level='document' needs results evaluated with a doc "
                                 "map (doc_map=, --doc-map)")
        return None
    out = [d for d in docs if d is not None]
    if len(out) != len(docs):
        raise RagReportError("evaluate every run with the doc map, or none of them")
    return out


def document_cis(doc_results: list[EvaluationResult] | None, bounded: list[Measure],
                  info: StatsInfo | None, workers: Mapper | None
                  ) -> dict[str, dict[Measure, tuple[float, float]]]:
    """Bootstrap intervals of the document-level means (the chunk level's resampled query
    sets: same seed, same queries)."""
    if doc_results is None or info is None or not bounded:
        return {}
    return {d.run_name: run_intervals(d, bounded, level=info.level, resamples=info.resamples,
                                      seed=info.seed, workers=workers).measures
            for d in doc_results}


def document_report(results: Sequence[EvaluationResult], doc_results: list[EvaluationResult],
                     measures: list[Measure], families: list[Measure], k_max: int,
                     means: dict[str, dict[Measure, float]],
                     doc_cis: dict[str, dict[Measure, tuple[float, float]]], target_level: str,
                     worst: list[WorstQueries], wm: Measure, per_query: bool = False,
                     targets: Sequence[Target] = ()) -> DocumentReport:
    rows = []
    for m in measures:
        cells = []
        for r, d in zip(results, doc_results, strict=True):
            v, dv = means[r.run_name][m], d.mean(m)
            lo, hi = doc_cis.get(d.run_name, {}).get(m, (None, None))
            ci_text = f"[{shown(lo)}, {shown(hi)}]" if lo is not None and hi is not None else ""
            cells.append(LevelCell(r.run_name, v, shown(v), dv, shown(dv), lo, hi, ci_text))
        rows.append(LevelRow(str(m), m.family.title, cells))
    k_doc = min([k_max, *(d.k_max for d in doc_results)])
    curves = []
    for fam in families:
        if not all(fam in d.curves for d in doc_results):
            continue
        series = {d.run_name: [float(x) for x in d.mean_curve(fam)[:k_doc]] for d in doc_results}
        marks = [(t.measure.cutoff, t.threshold, target_rule(t.op, t.threshold)) for t in targets
                 if t.measure.curve_key == fam]  # targets checked at document level
        curves.append(Curve(str(fam), curve_title(fam, documents=True),
                            list(range(1, k_doc + 1)), series, marks))
    k = wm.cutoff or k_max
    runs = [_document_run(r, k, k_max) for r in results]
    queries = {w.run: _worst_documents(w, results, doc_results) for w in worst}
    pq = _per_query(results, doc_results, measures, k) if per_query else {}
    info0 = results[0].doc_map_info
    return DocumentReport(
        source=info0.source if info0 else "",
        chunks=info0.chunks if info0 else 0,
        documents=info0.documents if info0 else 0,
        judgment_level=info0.judgment_level if info0 else "chunk",
        target_level=target_level,
        unmapped=info0.unmapped if info0 else "error",
        description=results[0].conventions.doc_map or "",
        summary=rows, curves=curves, runs=runs, queries=queries, per_query=pq)


def _document_run(r: EvaluationResult, k: int, k_max: int) -> DocumentRun:
    """A run's redundancy at K (chunks of one document retrieved twice) and doc-map counts."""
    red = r.redundancy if r.redundancy is not None else np.zeros((r.n_queries, 1), int)
    at = red[:, min(k, red.shape[1]) - 1] if red.shape[1] else np.zeros(r.n_queries, int)
    mean = float(at.mean()) if len(at) else 0.0
    info = r.doc_map_info
    return DocumentRun(
        r.run_name, k, mean, shown(mean), int((at > 0).sum()), r.n_queries,
        [float(x) for x in (red.mean(axis=0) if len(red) else red.sum(axis=0))[:k_max]],
        info.chunks_collapsed if info else 0, info.unmapped_retrieved if info else 0,
        info.unmapped_judged if info else 0)


def _worst_documents(w: WorstQueries, results: Sequence[EvaluationResult],
                     doc_results: list[EvaluationResult]) -> dict[str, QueryDocuments]:
    """The worst queries' rankings as documents, worst first by the document-level value
    (ties: the chunk level's order)."""
    r = results[[x.run_name for x in results].index(w.run)]
    d = doc_results[[x.run_name for x in results].index(w.run)]
    dm = r.doc_map
    per: dict[str, QueryDocuments] = {}
    for qd in w.queries:
        chunks = [row.doc_id for row in qd.rows]
        found = dm.document_of(chunks) if dm is not None and chunks else []
        docs_of = [f if f is not None else c for f, c in zip(found, chunks, strict=True)]
        seen: set[str] = set()
        repeated = []
        for x in docs_of:
            repeated.append(x in seen)
            seen.add(x)
        i = r.ranking.query_index(qd.query_id)
        qred = r.redundancy
        n_red = int(qred[i, min(w.k, qred.shape[1]) - 1]) if qred is not None else 0
        value = float(d.values(w.measure)[d.ranking.query_index(qd.query_id)])
        per[qd.query_id] = QueryDocuments(w.k, n_red, value, shown(value), docs_of, repeated)
    items = list(per.items())
    order = sorted(range(len(items)), key=lambda j: (items[j][1].value, j))
    return dict(items[j] for j in order)


def _per_query(results: Sequence[EvaluationResult], doc_results: list[EvaluationResult],
               measures: list[Measure], k: int) -> dict[str, dict[str, dict[str, float]]]:
    """Each run's document-level values per query (and its redundancy at K)."""
    pq: dict[str, dict[str, dict[str, float]]] = {}
    for r, d in zip(results, doc_results, strict=True):
        cols = {str(m): d.values(m).tolist() for m in measures}
        if r.redundancy is not None and r.redundancy.shape[1]:
            cols[f"redundancy@{min(k, r.redundancy.shape[1])}"] = [
                float(x) for x in r.redundancy[:, min(k, r.redundancy.shape[1]) - 1]]
        pq[d.run_name] = {q: {name: v[i] for name, v in cols.items()}
                          for i, q in enumerate(d.query_ids)}
    return pq
