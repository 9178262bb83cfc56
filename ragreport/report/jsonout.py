"""The JSON document of a report: everything a machine needs, in a fixed key order.

Schema ``ragreport.report/1`` (docs/guides/outputs.md). Floats are written at full precision
(Python's shortest round-trip form), so ``json.loads`` gives back exactly the values the
evaluation computed; NaN and infinities are refused. Keys keep the documented order (they are
*not* sorted), text is UTF-8 (``ensure_ascii=False``), indented by 2, with a final newline. The
same report always gives the same bytes.

>>> from ragreport import evaluate
>>> from ragreport.report import build_report
>>> rep = build_report([evaluate({"q": {"a": 1}}, {"q": ["b", "a"]}, ["RR"], name="mine")],
...                    generated_at="2026-01-01T00:00:00Z")
>>> report_json(rep)["means"]
{'mine': {'RR': 0.5}}
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..analysis.agreement import Agreement
from ..analysis.ppi import Interval, PPIEstimate
from ..errors import RagReportError
from .breakdowns import DocumentReport, SliceReport
from .cells import DropCheck, RankRow, TargetCell
from .model import Report

__all__ = ["SCHEMA", "render_json", "report_json"]

#: Name and version of the document format; bumped on any incompatible change.
SCHEMA = "ragreport.report/1"


def _clean(obj: Any, where: str) -> Any:
    """Plain JSON types (numpy scalars become Python numbers); NaN/inf are an error."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float) or hasattr(obj, "dtype"):
        if getattr(getattr(obj, "dtype", None), "kind", "f") in ("i", "u", "b"):
            return obj.item()
        x = float(obj)
        if not math.isfinite(x):
            raise RagReportError(f"cannot write the JSON report: {where} is {x!r} "
                                 "(JSON has no NaN or infinity)")
        return x
    if isinstance(obj, dict):
        return {str(k): _clean(v, f"{where}.{k}") for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    raise TypeError(f"{where}: cannot write {type(obj).__name__} as JSON")


def _worst_json(report: Report) -> dict[str, list[dict[str, Any]]]:
    """Each run's worst queries: the top K, and the relevant documents ranked below it."""
    return {w.run: [{"query_id": q.query_id, "value": q.value, "failure": q.failure,
                     "top_k": q.top_k, "unjudged_top_k": q.unjudged_top_k,
                     "judged_at_k": q.judged_at_k,
                     "tie_ranges": {m: list(v) for m, v in q.tie_ranges.items()},
                     "unjudged_ranges": {m: list(v) for m, v in q.unjudged_ranges.items()},
                     "ranking": [_rank_row(row) for row in q.rows if row.within_k],
                     "relevant_below": [_rank_row(row) for row in [*q.rows, *q.later]
                                        if row.relevant and not row.within_k]}
                    for q in w.queries]
            for w in report.worst}


def _significance(report: Report) -> list[dict[str, Any]]:
    """Each run against the baseline on each measure: raw and Holm-adjusted p-values."""
    return [{"run": c.run, "baseline": report.baseline, "measure": s.measure,
             "delta": c.delta, "p_value": _maybe(c.p_value), "t_p_value": _maybe(c.t_p_value),
             "p_value_raw": _maybe(c.p_raw), "t_p_value_raw": _maybe(c.t_p_raw),
             "holm_family": c.family, "significant": c.significant}
            for s in report.summary for c in s.cells if c.delta is not None]


def _maybe(x: float | None) -> float | None:
    """An optional statistic: ``None`` (JSON null) when absent or undefined (NaN)."""
    if x is None or not math.isfinite(float(x)):
        return None
    return float(x)


def _rank_row(row: RankRow) -> dict[str, Any]:
    """One document of a query's top K: ``grade`` null and ``judged`` false for an unjudged
    document (no qrels line), which is not the same as a judged non-relevant one."""
    return {"rank": row.rank, "doc_id": row.doc_id, "score": row.score_value,
            "grade": row.grade_value, "judged": row.judged, "relevant": row.relevant}


def report_json(report: Report) -> dict[str, Any]:
    """The report as a JSON-ready dict, keys in the documented order.

    Raises :class:`~ragreport.errors.RagReportError` if a measure value is NaN or infinite
    (an undefined *p-value*, e.g. a t-test on identical runs, is written as null).
    """
    worst_by = report.worst[0] if report.worst else None
    info = report.stats
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "title": report.title,
        "generated_at": report.generated_at,
        "ragreport_version": report.version,
        "command": report.command,
        "inputs": [{"role": f.role, "name": f.name, "path": f.path, "sha256": f.sha256,
                    "size": f.size} | ({"judgments_sha256": f.judgments_sha256}
                                       if f.judgments_sha256 is not None else {})
                   for f in report.inputs],
        "runs": list(report.runs),
        "baseline": report.baseline,
        "k_max": report.k_max,
        "qrels_queries": report.qrels_queries,
        "measures": list(report.measures),
        "means": {r: {s.measure: c.value for s in report.summary for c in s.cells if c.run == r}
                  for r in report.runs},
        "intervals": {r: {s.measure: [c.ci_lower, c.ci_upper] for s in report.summary
                          for c in s.cells
                          if c.run == r and c.ci_lower is not None and c.ci_upper is not None}
                      for r in report.runs} if info is not None else {},
        "totals": {r: {s.measure: c.total for s in report.summary for c in s.cells
                       if c.run == r and c.total is not None} for r in report.runs},
        "targets": [{
            "measure": t.measure,
            "op": t.op,
            "threshold": t.threshold,
            "source": t.source,
            "on": t.cells[0].on if t.cells else "mean",
            "results": [_target_result(c) for c in t.cells],
        } for t in report.targets],
        "all_targets_passed": report.verdict.failed == 0,
        "drops": [_drop_json(d) for d in report.drops],
        "all_passed": report.all_passed,
        "counts": {h.run: {
            "evaluated": h.evaluated,
            "run_only": h.run_only,
            "qrels_only": h.qrels_only,
            "no_relevant": h.no_relevant,
            "empty_retrievals": h.empty_retrievals,
            "duplicates_dropped": h.duplicates_dropped,
            "skipped_no_relevant": h.skipped_no_relevant,
            **({"identical_ids_dropped": h.identical_ids_dropped}
               if h.identical_ids_dropped is not None else {}),
            "run_only_examples": list(h.run_only_examples),
            "qrels_only_examples": list(h.qrels_only_examples),
        } for h in report.health},
        "conventions": dict(report.conventions),
        "stats": None if info is None else {
            "level": info.level, "resamples": info.resamples,
            "curve_resamples": info.curve_resamples, "seed": info.seed, "alpha": info.alpha,
            "interval": info.interval, "test": info.test, "also": info.also,
            "correction": info.correction, "families": info.families,
            "description": info.describe()},
        "curves": {c.family: {r: list(v) for r, v in c.series.items()} for c in report.curves},
        "curve_bands": {c.family: {r: {"lower": list(lo), "upper": list(hi)}
                                   for r, (lo, hi) in c.bands.items()}
                        for c in report.curves if c.bands},
        "pr_curve": None if report.pr_curve is None else {
            "recall": list(report.pr_curve.levels), "rel": report.pr_curve.rel,
            "precision": {r: list(v) for r, v in report.pr_curve.series.items()}},
        "comparisons": [{"run": c.run, "baseline": c.baseline, "measure": c.measure,
                         "wins": c.wins, "losses": c.losses, "ties": c.ties}
                        for c in report.comparisons],
        "significance": _significance(report) if info is not None else [],
        "worst_queries_by": None if worst_by is None else {"measure": worst_by.measure,
                                                           "k": worst_by.k},
        "failure_kinds": {w.run: dict(w.failure_counts) for w in report.worst},
        # queries without a judged relevant document: a category of their own, never worst
        "no_judged_relevant": {w.run: w.no_judged_relevant for w in report.worst},
        "worst_queries": _worst_json(report),
    }
    doc["ties"], doc["unjudged"] = _ties_json(report), _unjudged_json(report)
    doc |= _judgments_and_latency(report)
    if not report.rankings:  # built from per-query results (ragreport.core.perquery)
        doc["rankings"] = False
    if report.judged_at_k is not None:  # with --per-query: what --baseline-report checks
        doc["judged_at_k"] = {"k": report.judged_at_k[0],
                              "means": dict(report.judged_at_k[1])}
    if report.drift is not None:  # compared with a stored baseline (--baseline-report)
        doc["baseline_drift"] = {
            "source": report.drift.source, "run": report.drift.run,
            "generated_at": report.drift.generated_at,
            "drifted": report.drift.drifted, "allowed": report.drift.allowed,
            "checks": [{"check": c.check, "run": c.run, "drifted": c.drifted,
                        "measured": c.measured, "threshold": c.threshold,
                        "message": c.message} for c in report.drift.checks]}
    if report.per_query:
        doc["per_query"] = {r: {q: dict(vals) for q, vals in qs.items()}
                            for r, qs in report.per_query.items()}
    if report.document is not None:  # evaluated with a doc map (--doc-map)
        doc["document"] = _document_json(report.document)
    if report.slices is not None:  # query slices (--slices)
        doc["slices"] = _slices_json(report.slices)
    cleaned: dict[str, Any] = _clean(doc, "report")
    return cleaned


def _ties_json(report: Report) -> list[dict[str, Any]]:
    """Each target measure of each run through its tied scores (:mod:`ragreport.core.ties`); the
    queries whose value depends on the tie order are listed with ``--per-query``."""
    out = []
    for t in report.ties:
        row: dict[str, Any] = {
            "run": t.run, "measure": t.measure, "cut": t.cut, "queries": t.queries,
            "straddling": t.straddling, "dependent": t.dependent,
            "low": None if t.unresolved else t.low, "high": None if t.unresolved else t.high,
            "unresolved": t.unresolved, "value": t.value, "exact": t.exact, "op": t.op,
            "threshold": t.threshold, "on": t.on, "depends_on_tie_order": bool(t.note),
            "note": t.note}
        if report.per_query:
            row["dependent_queries"] = {q: list(v) for q, v in t.dependent_queries.items()}
        out.append(row)
    return out


def _judgments_and_latency(report: Report) -> dict[str, Any]:
    """``judgments``: who judged, when the qrels say (:mod:`ragreport.io.judgments`);
    ``latency``: the runs that carry their retriever's time per query (collect_run)."""
    out: dict[str, Any] = {}
    j = report.judgments
    if j is not None:
        out["judgments"] = {"rule": j.rule, "used": j.used, "read": j.read,
                            "judged_more_than_once": j.several,
                            "agreement": [_agreement_json(g) for g in j.agreements],
                            "by_source": j.by_source,
                            "ppi": [_ppi_json(e) for e in j.ppi]}
    if report.latency:
        out["latency"] = {t.run: {"queries": t.queries, "p50_ms": t.p50_ms,
                                  "p95_ms": t.p95_ms, "max_ms": t.max_ms,
                                  "shown": list(t.texts)} for t in report.latency}
    return out


def _ppi_json(e: PPIEstimate) -> dict[str, Any]:
    """One run's measure by prediction-powered inference (null where undefined)."""
    def interval(i: Interval) -> dict[str, Any]:
        return {"mean": _maybe(i.mean), "low": _maybe(i.low), "high": _maybe(i.high),
                "queries": i.n}

    return {"run": e.run, "measure": e.measure, "level": e.level, "people": e.people,
            "model": e.model, "ppi": interval(e.ppi), "people_only": interval(e.people_only),
            "model_only": interval(e.model_only)}


def _agreement_json(g: Agreement) -> dict[str, Any]:
    """Two sources on the pairs both judged (kappas null where undefined)."""
    return {"a": g.a, "b": g.b, "pairs": g.pairs, "levels": g.levels,
            "matrix": g.matrix.tolist(), "observed": g.observed, "kappa": _maybe(g.kappa),
            "weighted_kappa": _maybe(g.weighted_kappa), "weights": g.weights,
            "binary_kappa": _maybe(g.binary_kappa)}


def _target_result(c: TargetCell) -> dict[str, Any]:
    """One run's check of one target (``outcome``: on the interval only)."""
    return {"run": c.run, "value": c.value, "shown": c.shown, "passed": c.passed,
            "margin": c.margin, "mean": c.mean, "outcome": c.outcome or None}


def _drop_json(d: DropCheck) -> dict[str, Any]:
    """One ``--max-drop`` check."""
    return {"run": d.run, "baseline": d.baseline, "measure": d.measure, "delta": d.delta,
            "delta_lower": d.delta_lower, "delta_upper": d.delta_upper,
            "p_value": _maybe(d.p_value), "p_value_raw": _maybe(d.p_raw),
            "max_drop": d.max_drop, "significant": d.significant, "failed": d.failed,
            "outcome": d.outcome, "queries": d.n, "queries_to_decide": d.queries_to_decide,
            "on_inconclusive": d.on_inconclusive, "message": d.message,
            "unjudged": _drop_unjudged_json(d)}


def _drop_unjudged_json(d: DropCheck) -> dict[str, Any] | None:
    """A drop check's filled reading (:class:`~ragreport.report.cells.DropUnjudged`), null
    where it was not read; ``failed_by_policy``: a pass failed under ``--unjudged fail``."""
    u = d.unjudged
    if u is None:
        return None
    return {"grade": u.grade, "low": u.low, "high": u.high, "delta": u.delta,
            "p_value": _maybe(u.p_value), "failed": u.failed, "outcome": u.outcome,
            "delta_lower": _maybe(u.delta_lower), "delta_upper": _maybe(u.delta_upper),
            "dependent": u.dependent,
            "depends_on_unjudged_documents": u.depends, "note": u.note,
            "failed_by_policy": d.unjudged_failed}


def _unjudged_json(report: Report) -> dict[str, Any]:
    """Each target measure of each run through its unjudged documents
    (:mod:`ragreport.analysis.unjudged_checks`): the interval of the mean between the two
    readings; the queries whose value differs between them are listed with ``--per-query``."""
    checks = []
    for u in report.unjudged:
        row: dict[str, Any] = {
            "run": u.run, "measure": u.measure, "queries": u.queries,
            "unjudged_documents": u.unjudged, "grade": u.grade, "dependent": u.dependent,
            "low": u.low,
            "high": u.high, "value": u.value, "op": u.op, "threshold": u.threshold,
            "on": u.on, "passed": u.passed,
            "depends_on_unjudged_documents": u.depends, "note": u.note}
        if report.per_query:
            row["dependent_queries"] = {q: list(v) for q, v in u.dependent_queries.items()}
        checks.append(row)
    return {"policy": report.unjudged_policy, "checks": checks}


def render_json(report: Report) -> str:
    """The report as JSON text (schema :data:`SCHEMA`), ending with a newline."""
    return json.dumps(report_json(report), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def _document_json(d: DocumentReport) -> dict[str, Any]:
    """The ``document`` key: chunk and document level side by side, redundancy, the worst
    queries' document level."""
    runs = [r.run for r in d.runs]
    return {
        "doc_map": {"source": d.source, "chunks": d.chunks, "documents": d.documents,
                    "judgment_level": d.judgment_level, "unmapped": d.unmapped,
                    "description": d.description},
        "target_level": d.target_level,
        "means": {run: {row.measure: {"chunk": c.chunk, "document": c.document}
                        for row in d.summary for c in row.cells if c.run == run}
                  for run in runs},
        "intervals": {run: {row.measure: [c.ci_lower, c.ci_upper] for row in d.summary
                            for c in row.cells if c.run == run and c.ci_lower is not None
                            and c.ci_upper is not None} for run in runs},
        "curves": {c.family: {r: list(v) for r, v in c.series.items()} for c in d.curves},
        "redundancy": {r.run: {"k": r.k, "mean": r.redundancy,
                               "queries_affected": r.queries_affected, "queries": r.queries,
                               "curve": list(r.curve), "chunks_collapsed": r.chunks_collapsed,
                               "unmapped_retrieved": r.unmapped_retrieved,
                               "unmapped_judged": r.unmapped_judged} for r in d.runs},
        "worst_queries": {run: [{"query_id": q, "value": v.value, "redundant": v.redundant,
                                 "k": v.k, "documents": list(v.documents),
                                 "repeated": list(v.repeated)} for q, v in qs.items()]
                          for run, qs in d.queries.items()},
        **({"per_query": d.per_query} if d.per_query else {}),
    }


def _slices_json(s: SliceReport) -> dict[str, Any]:
    """The ``slices`` key (``--slices``): per slice, in input order, every bounded measure's
    mean (null: no query of the slice evaluated) and interval (none below ``min_queries``),
    the comparisons with the baseline (p-values Holm-corrected over runs, slices and
    measures; null when not tested), the slice's targets and its curves."""
    def runs_of(sl: Any) -> list[str]:
        return list(sl.queries)

    return {
        "source": s.source,
        "min_queries": s.min_queries,
        "rule": s.rule,
        "measures_shown": list(s.measures),
        "unknown_query_ids": s.unknown,
        "unknown_examples": list(s.unknown_examples),
        "untagged": dict(s.untagged),
        "duplicates": s.duplicates,
        "all_passed": s.passed,
        "failing": s.failing,
        "slices": [{
            "name": sl.name,
            "queries": dict(sl.queries),
            "few_queries": sl.few,
            "passed": sl.passed,
            "means": {run: {row.measure: c.value for row in sl.rows for c in row.cells
                            if c.run == run} for run in runs_of(sl)},
            "intervals": {run: {row.measure: [c.ci_lower, c.ci_upper] for row in sl.rows
                                for c in row.cells if c.run == run and c.ci_lower is not None
                                and c.ci_upper is not None} for run in runs_of(sl)},
            "comparisons": [{"run": c.run, "measure": row.measure, "queries": c.compared,
                             "wins": c.wins, "losses": c.losses, "ties": c.ties,
                             "delta": _maybe(c.delta), "p_value": _maybe(c.p_value),
                             "t_p_value": _maybe(c.t_p_value), "significant": c.significant}
                            for row in sl.rows for c in row.cells if c.wins is not None],
            "targets": [{"measure": t.measure, "op": t.op, "threshold": t.threshold,
                         "source": t.source, "on": t.cells[0].on if t.cells else "mean",
                         "passed": t.passed,
                         "results": [{"run": c.run, "value": c.value, "shown": c.shown,
                                      "passed": c.passed, "margin": c.margin, "mean": c.mean,
                                      "reason": c.reason, "outcome": c.outcome or None}
                                     for c in t.cells]}
                        for t in sl.targets],
            "curves": {c.family: {r: list(v) for r, v in c.series.items()}
                       for c in sl.curves},
            "curve_bands": {c.family: {r: {"lower": list(lo), "upper": list(hi)}
                                       for r, (lo, hi) in c.bands.items()}
                            for c in sl.curves if c.bands},
        } for sl in s.slices],
    }
