"""Plain-text outputs of ``ragreport evaluate``: trec_eval's layout and a readable table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from .measures import Measure
from .metrics import FloatArray
from .result import EvaluationResult

__all__ = ["format_json", "format_table", "format_trec"]

EVALUATE_SCHEMA = "ragreport.evaluate/1"


class PerQueryValues(Protocol):
    """What :func:`format_trec` reads: an EvaluationResult or a streaming StreamResult."""

    run_name: str
    query_ids: list[str]

    @property
    def n_queries(self) -> int: ...

    @property
    def measures(self) -> Sequence[Measure]: ...

    def values(self, measure: str | Measure) -> FloatArray: ...

    def mean(self, measure: str | Measure) -> float: ...


def _trec_value(m: Measure, value: float) -> str:
    if not m.family.bounded:
        return str(round(value))
    return f"{value:.4f}"


def format_trec(result: PerQueryValues, per_query: bool = False) -> str:
    """trec_eval's output: ``measure<pad>\\tqid\\tvalue``, per-query blocks, then ``all``.

    Counts (``num_ret``, ``num_rel``, ``num_rel_ret``) are integers and sum over queries in the
    ``all`` block; other values are means with 4 decimals. Query ids are in trec_eval's
    (byte-wise) order.
    """
    lines: list[str] = []
    measures = list(result.measures)
    if per_query:
        cols = {m: result.values(m) for m in measures}
        order = sorted(range(result.n_queries), key=lambda i: result.query_ids[i])
        for i in order:
            q = result.query_ids[i]
            for m in measures:
                lines.append(f"{m.trec_name:<22}\t{q}\t{_trec_value(m, float(cols[m][i]))}")
    lines.append(f"{'runid':<22}\tall\t{result.run_name}")
    lines.append(f"{'num_q':<22}\tall\t{result.n_queries}")
    for m in measures:
        v = float(result.values(m).sum()) if not m.family.bounded else result.mean(m)
        lines.append(f"{m.trec_name:<22}\tall\t{_trec_value(m, v)}")
    return "\n".join(lines) + "\n"


def format_table(result: EvaluationResult) -> str:
    """A small aligned table of means, with the dataset counts under it."""
    means = result.means()
    width = max(len(k) for k in means)
    c = result.counts
    rows = [f"{'measure':<{width}}  {result.run_name}"]
    rows += [f"{k:<{width}}  {v:.4f}" for k, v in means.items()]
    rows.append("")
    rows.append(f"queries evaluated: {c.evaluated}; run-only (ignored): {c.run_only}; "
                f"qrels-only: {c.qrels_only}; no relevant document: {c.no_relevant}; "
                f"empty retrievals: {c.empty_retrievals}; duplicates dropped: "
                f"{c.duplicates_dropped}"
                + (f"; skipped (no relevant document): {c.skipped_no_relevant}"
                   if c.skipped_no_relevant else ""))
    return "\n".join(rows) + "\n"


def evaluate_json(result: EvaluationResult, per_query: bool = False) -> dict[str, Any]:
    """The ``--format json`` document (schema ``ragreport.evaluate/1``)."""
    data = {"schema": EVALUATE_SCHEMA, **result.to_dict(per_query=per_query)}
    return data


def format_json(result: EvaluationResult, per_query: bool = False) -> str:
    """``evaluate_json`` serialised with 2-space indentation."""
    return json.dumps(evaluate_json(result, per_query), indent=2, ensure_ascii=False) + "\n"
