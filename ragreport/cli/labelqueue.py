"""``ragreport label-queue``: the unjudged (query, document) pairs to judge next, written for
the people who judge (:mod:`ragreport.analysis.labelqueue`, :mod:`ragreport.report.labelqueue`)."""

from __future__ import annotations

import sys

from ..errors import RagReportError
from .args import EXIT_OK
from .config import Options
from .inputs import (
    check_columns,
    columns_kwarg,
    eval_kwargs,
    fractional_kwarg,
    materialized,
    rule_kwarg,
    with_example,
)

__all__ = ["cmd_label_queue", "cmd_merge_labels"]


def cmd_label_queue(opts: Options) -> int:
    """Evaluate the runs, build the queue for the target measures (or ``-m``), write it."""
    from ..analysis.labelqueue import label_queue
    from ..io import load_qrels, load_run
    from ..io.targets import load_targets
    from ..measures import normalize_measures
    from ..report.labelqueue import queue_format, write_label_queue
    from ..textout import terminal_safe
    from .resolve import reserved_keys

    if opts.example:
        opts = with_example(opts)
    if not opts.qrels or not opts.runs:
        raise RagReportError("label-queue needs QRELS and at least one RUN (or --example)")
    output = opts.output
    if output is None:
        raise RagReportError("label-queue needs -o/--output PATH (or output = \"PATH\" in the "
                             "configuration file)")
    if opts.doc_map is not None:
        raise RagReportError("label-queue does not take --doc-map (judge the chunks)")
    if len(opts.names) > len(opts.runs):
        raise RagReportError(f"--name given {len(opts.names)} times for {len(opts.runs)} runs")
    fmt = queue_format(output, opts.queue_format if opts.queue_format is not None
                       or output != "-" else "jsonl")  # a bad suffix: before any work
    given = [str(p) for p in (opts.qrels, *opts.runs, opts.queries, opts.docs, opts.targets)
             if p is not None and p != "-"]
    opts = materialized(opts, ("qrels", "runs", "queries", "docs"))
    check_columns(opts)
    measures = normalize_measures(list(opts.measures)) if opts.measures is not None else \
        list(dict.fromkeys(t.measure for t in load_targets(
            None if opts.targets is None else str(opts.targets), skip=reserved_keys())))
    qrels = load_qrels(opts.qrels, **fractional_kwarg(opts), **columns_kwarg(opts, opts.qrels),
                       **rule_kwarg(opts))
    runs = [load_run(path, **columns_kwarg(opts, path)) for path in opts.runs]
    queue = label_queue(qrels, runs, measures, budget=opts.budget, per_query=opts.max_per_query,
                        grade=opts.unjudged_grade, max_rank=opts.max_rank,
                        queries=opts.queries, docs=opts.docs,
                        names=[*opts.names, *[None] * (len(runs) - len(opts.names))],
                        **eval_kwargs(opts))
    write_label_queue(queue, output, fmt, inputs=given)
    where = "standard output" if output == "-" else terminal_safe(output)
    sys.stderr.write(f"wrote {len(queue)} of {queue.useful} pairs that move "
                     f"{', '.join(queue.measures)} ({queue.candidates} unjudged within reach) "
                     f"to {where} ({fmt})\n")
    return EXIT_OK


def cmd_merge_labels(opts: Options) -> int:
    """Read the qrels and the new judgments, merge them (nothing replaced), write."""
    from ..io import load_qrels
    from ..io.labels import merge_judgments, read_labels, write_qrels
    from ..textout import terminal_safe

    output = opts.output
    if not opts.qrels or not opts.labels:
        raise RagReportError("merge-labels needs QRELS and at least one LABELS file")
    if output is None:
        raise RagReportError("merge-labels needs -o/--output PATH (.tsv, .jsonl or .parquet)")
    if str(opts.qrels) == "-" or "-" in opts.labels:
        raise RagReportError("merge-labels reads files, not standard input ('-')")
    qrels = load_qrels(str(opts.qrels), **fractional_kwarg(opts), **rule_kwarg(opts))
    added, kept = 0, 0
    for path in opts.labels:
        new = read_labels(path, source=opts.label_source, **fractional_kwarg(opts))
        merged = merge_judgments(qrels, new, existing_source=opts.existing_source,
                                 rule=opts.judgment_rule, on_conflict=opts.on_conflict)
        qrels, added, kept = merged.qrels, added + merged.added, kept + len(merged.conflicts)
    fmt = write_qrels(qrels, output, inputs=[str(opts.qrels), *opts.labels])
    sys.stderr.write(f"wrote {terminal_safe(output)} ({fmt}): {added} new judgments added"
                     + (f", {kept} disagreeing with the grade used before (kept both; "
                        f"rule {opts.judgment_rule})" if kept else "")
                     + f"; {len(qrels)} pairs judged\n")
    return EXIT_OK
