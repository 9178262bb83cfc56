"""``ragreport evaluate``: one run against the qrels, as a table, JSON or trec_eval's text
(every K at once; ``--stream`` for means in bounded memory; ``--per-query-out`` writes the
per-query results as Parquet; ``--doc-map`` adds the document level)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import RagReportError
from ..present import shown
from .args import EXIT_OK, escape_undecodable, write_stdout
from .config import Input, Options
from .inputs import (
    check_columns,
    check_doc_map_options,
    columns_kwarg,
    eval_kwargs,
    file_sha256,
    fractional_kwarg,
    is_irds,
    materialized,
    rule_kwarg,
    skip_pandas_interop,
    with_example,
)

if TYPE_CHECKING:
    from ..core.result import EvaluationResult

__all__ = ["cmd_evaluate"]


def cmd_evaluate(opts: Options) -> int:
    """``ragreport evaluate``: print the run's means (and per-query values with ``-q``)."""
    from ..core.engine import evaluate
    from ..measures import TREC_DEFAULT_MEASURES
    from ..textout import format_json, format_table, format_trec

    if opts.example:
        opts = with_example(opts)
        opts = replace(opts, runs=opts.runs[:1])
    if not opts.qrels or not opts.runs:
        raise RagReportError("evaluate needs QRELS and RUN (or --example)")
    per_query_inputs = _check_per_query_out(opts)
    given: tuple[Input, Input] = (opts.qrels, opts.runs[0])  # as given, before any is read
    skip_pandas_interop()
    measures: Sequence[str] | None = opts.measures
    if measures is None and opts.format == "trec":
        from ..compat import default_measures

        measures = default_measures(opts.compat) or list(TREC_DEFAULT_MEASURES)
    check_doc_map_options(opts)
    if opts.stream:
        check_columns(opts)
        return _stream_evaluate(opts, measures, given)
    opts = materialized(opts, ("qrels", "runs", "doc_map"))
    check_columns(opts)
    qrels: Any = opts.qrels
    run: Any = opts.runs[0]
    if opts.columns:
        from ..io import load_qrels, load_run

        qrels = load_qrels(qrels, **fractional_kwarg(opts), **columns_kwarg(opts, qrels),
                           **rule_kwarg(opts))
        run = load_run(run, **columns_kwarg(opts, run))
    elif opts.per_query_out is not None or rule_kwarg(opts):  # read here (the judgments'
        from ..io import load_qrels  # fingerprint is written; the rule is the reader's)

        qrels = load_qrels(qrels, **fractional_kwarg(opts), **rule_kwarg(opts))
    result = evaluate(qrels, run, measures, **eval_kwargs(opts))
    if opts.name is not None:
        result = result.replace(run_name=escape_undecodable(opts.name))
    if opts.per_query_out is not None:
        _write_per_query(opts.per_query_out, result, per_query_inputs, qrels, given)
    if opts.format == "trec":
        out = format_trec(result, per_query=opts.per_query)
    elif opts.format == "json":
        out = format_json(result, per_query=opts.per_query)
        if result.document is not None:
            from ..textout import evaluate_json, json_text

            out = json_text(_with_documents(evaluate_json(result, opts.per_query), result,
                                            opts.per_query))
    else:
        out = format_table(result)
        if opts.per_query:
            out += "\n" + _per_query_table(result)
        if result.document is not None:
            out += "\n" + _document_table(result)
            if opts.per_query:
                out += "\ndocument level, per query:\n" + _per_query_table(result.document)
    write_stdout(out)
    return EXIT_OK


def _check_per_query_out(opts: Options) -> list[str]:
    """``evaluate --per-query-out``: refused with ``--stream`` and ``--doc-map``, and over an
    input or into a missing folder (before any work); the input paths it must not replace."""
    paths = [p for p in (opts.qrels, *opts.runs) if isinstance(p, str) and p != "-"]
    if opts.per_query_out is None:
        return paths
    if opts.stream:
        raise RagReportError("--per-query-out needs every per-query value; drop --stream")
    from ..fileio import is_stdout

    if is_stdout(opts.per_query_out):
        raise RagReportError("--per-query-out writes Parquet (binary): give a file name, "
                             "not standard output")
    if opts.doc_map is not None:
        raise RagReportError("--per-query-out does not work with --doc-map yet")
    from ..fileio import check_outputs

    check_outputs([opts.per_query_out], paths)
    return paths


def _write_per_query(out: str, result: EvaluationResult, inputs: list[str],
                     qrels_read: Any, given: tuple[Input, Input]) -> None:
    """Write the per-query Parquet file (atomically; the qrels' and the run's SHA-256 and the
    judgments' fingerprint in its metadata, :mod:`ragreport.core.perquery`). ``given``: the
    QRELS and RUN as named on the command line (a file is hashed; an ``irds:`` id states the
    fingerprint of what was read, as ``report`` does; standard input states none)."""
    from ..analysis.drift import content_sha256, judgments_sha256
    from ..core import perquery

    def fingerprint(name: Any, read: Any) -> str | None:
        if not isinstance(name, str) or name == "-":
            return None
        if is_irds(name):
            return content_sha256(read) if read is not None else None
        return file_sha256(name)

    qrels = fingerprint(given[0], qrels_read)
    run = fingerprint(given[1], None)
    path = perquery.write(result, out, inputs=inputs, qrels_sha256=qrels,
                          run_sha256={result.run_name: run} if run else None,
                          qrels_judgments_sha256=judgments_sha256(qrels_read))
    sys.stderr.write(f"wrote {escape_undecodable(str(path))}\n")


def _stream_evaluate(opts: Options, measures: Sequence[str] | None,
                     given: tuple[Input, Input]) -> int:
    import json
    from dataclasses import asdict

    from ..core.stream import evaluate_stream

    if opts.per_query:
        raise RagReportError("--stream prints means only; drop -q")
    if given[0] == "-" and given[1] == "-":
        raise RagReportError("standard input ('-') can be read for one input only, got it "
                             "for 2 inputs")
    qrels: Any = given[0]
    if rule_kwarg(opts):  # the qrels are read whole anyway: with the rule asked for
        from ..io import load_qrels

        qrels = load_qrels(qrels, **fractional_kwarg(opts), **rule_kwarg(opts))
    res = evaluate_stream(qrels, given[1], measures, **eval_kwargs(opts))
    if opts.format == "json":
        out = json.dumps({"schema": "ragreport.evaluate/1", "run": res.run_name,
                          "queries": res.n_queries, "k_max": res.k_max, "means": res.means(),
                          "counts": res.counts,
                          "conventions": asdict(res.conventions) if res.conventions else None},
                         indent=2, ensure_ascii=False) + "\n"
    elif opts.format == "trec":
        from ..textout import format_trec

        out = format_trec(res)
    else:
        width = max(len(str(m)) for m in res.measures)
        out = "".join(f"{m!s:<{width}}  {shown(res.mean(m))}\n" for m in res.measures)
        out += f"queries evaluated: {res.n_queries}; " + "; ".join(
            f"{k.replace('_', ' ')}: {v}" for k, v in res.counts.items() if k != "evaluated")
        out += "\n"
    write_stdout(out)
    return EXIT_OK


def _with_documents(data: dict[str, Any], result: EvaluationResult, per_query: bool
                    ) -> dict[str, Any]:
    """``evaluate --format json`` with ``--doc-map``: the document level under "document"."""
    from dataclasses import asdict

    level, red, info = _document_level(result)
    doc = level.to_dict(per_query=per_query)
    doc.pop("conventions", None)  # the chunk level's, which state the map
    doc["redundancy"] = [float(x) for x in red.mean(axis=0)] if len(red) else []
    doc["doc_map"] = asdict(info)
    return {**data, "document": doc}


def _document_level(result: EvaluationResult) -> tuple[EvaluationResult, Any, Any]:
    """The document level of a result evaluated with a doc map, its redundancy counts and
    how the inputs met the map."""
    doc, red, info = result.document, result.redundancy, result.doc_map_info
    if doc is None or red is None or info is None:
        raise RagReportError("the run was not evaluated with a doc map")
    return doc, red, info


def _document_table(result: EvaluationResult) -> str:
    """Means at chunk and at document level side by side, and the redundancy at K."""
    from ..textout import terminal_safe

    level, red, info = _document_level(result)
    c, d = result.means(), level.means()
    width = max(len("measure"), *(len(k) for k in c))
    rows = [f"{'measure':<{width}}  {'chunks':>7}  {'documents':>9}   "
            f"(run {terminal_safe(result.run_name)}, --doc-map)"]
    rows += [f"{k:<{width}}  {shown(c[k]):>7}  {shown(d[k]):>9}" for k in c]
    # at the largest cutoff of the measures shown (10 when none has one)
    k = min(max([m.cutoff for m in result.measures if m.cutoff] or [10]), result.k_max)
    mean = float(red[:, k - 1].mean()) if len(red) else 0.0
    rows.append("")
    rows.append(f"redundancy@{k}: {shown(mean)} of the top {k} chunks per query belong to a "
                f"document already ranked above (mean); {info.chunks_collapsed} ranked chunks "
                f"collapsed; judgments per {info.judgment_level}")
    return "\n".join(rows) + "\n"


def _per_query_table(result: EvaluationResult) -> str:
    from ..textout import terminal_safe

    names = [str(m) for m in result.measures]
    cols = [result.values(m) for m in result.measures]
    ids = [terminal_safe(q) for q in result.query_ids]  # no control character, no ::command
    width = max([len("query"), *(len(q) for q in ids)])
    head = f"{'query':<{width}}  " + "  ".join(f"{n:>9}" for n in names)
    rows = [head]
    for i, q in enumerate(ids):
        rows.append(f"{q:<{width}}  " + "  ".join(f"{shown(float(c[i])):>9}" for c in cols))
    return "\n".join(rows) + "\n"
