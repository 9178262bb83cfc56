"""Command-line interface: ``ragreport evaluate`` (and the report commands).

Exit codes (each means one thing):

- :data:`EXIT_OK` (0): done; for ``check``, every check passed.
- :data:`EXIT_TARGET_FAILED` (1): ``check`` only: a target or a ``--max-drop`` check failed.
- :data:`EXIT_BAD_INPUT` (2): anything else: bad input, option or configuration, a missing or
  unreadable file, an output that cannot be written, an internal error. One line on stderr
  (``ragreport: error: ...``), no traceback (``--debug`` prints it).
- :data:`EXIT_INTERRUPTED` (130): Ctrl-C (SIGINT); :data:`EXIT_TERMINATED` (143): SIGTERM.
  One line on stderr; no output file is replaced and no temporary file is left.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .._version import __version__
from ..errors import RagReportError
from ..present import shown
from . import options
from .args import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TARGET_FAILED,
    EXIT_TERMINATED,
    build_parser,
    escape_undecodable,
    one_line,
)
from .options import (
    check_columns,
    check_doc_map_options,
    columns_kwarg,
    eval_kwargs,
    example_inputs,
    file_sha256,
    fractional_kwarg,
    is_irds,
    materialize_inputs,
    skip_pandas_interop,
    wanted_trackers,
    wants_html,
)
from .report import PLOT_PRELOAD, report_for

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TARGET_FAILED",
           "EXIT_TERMINATED", "main", "run"]


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from ..core.engine import evaluate
    from ..measures import TREC_DEFAULT_MEASURES
    from ..textout import format_json, format_table, format_trec

    if args.example:
        example_inputs(args)
        args.runs = args.runs[0]
    if not args.qrels or not args.runs:
        raise RagReportError("evaluate needs QRELS and RUN (or --example)")
    per_query_inputs = _check_per_query_out(args)
    given = (args.qrels, args.runs)  # the names given, before any is read
    skip_pandas_interop()
    measures = args.measures
    if measures is None and args.format == "trec":
        from ..compat import default_measures

        measures = default_measures(args.compat) or list(TREC_DEFAULT_MEASURES)
    check_doc_map_options(args)
    if args.stream:
        check_columns(args)
        return _stream_evaluate(args, measures)
    materialize_inputs(args, ("qrels", "runs", "doc_map"))
    check_columns(args)
    if getattr(args, "columns", None):
        from ..io import load_qrels, load_run

        args.qrels = load_qrels(args.qrels, **fractional_kwarg(args),
                                **columns_kwarg(args, args.qrels))
        args.runs = load_run(args.runs, **columns_kwarg(args, args.runs))
    elif args.per_query_out is not None:  # read here: its judgments' fingerprint is written
        from ..io import load_qrels

        args.qrels = load_qrels(args.qrels, **fractional_kwarg(args))
    result = evaluate(args.qrels, args.runs, measures, **eval_kwargs(args))
    if args.name is not None:
        result.run_name = escape_undecodable(args.name)
    if args.per_query_out is not None:
        _write_per_query(args, result, per_query_inputs, args.qrels, given)
    if args.format == "trec":
        out = format_trec(result, per_query=args.per_query)
    elif args.format == "json":
        out = format_json(result, per_query=args.per_query)
        if result.document is not None:
            from ..textout import evaluate_json, json_text

            out = json_text(_with_documents(evaluate_json(result, args.per_query), result,
                                            args.per_query))
    else:
        out = format_table(result)
        if args.per_query:
            out += "\n" + _per_query_table(result)
        if result.document is not None:
            out += "\n" + _document_table(result)
            if args.per_query:
                out += "\ndocument level, per query:\n" + _per_query_table(result.document)
    _write_stdout(out)
    return EXIT_OK


def _check_per_query_out(args: argparse.Namespace) -> list[str]:
    """``evaluate --per-query-out``: refused with ``--stream`` and ``--doc-map``, and over an
    input or into a missing folder (before any work); the input paths it must not replace."""
    paths = [p for p in (args.qrels, args.runs) if isinstance(p, str) and p != "-"]
    if args.per_query_out is None:
        return paths
    if args.stream:
        raise RagReportError("--per-query-out needs every per-query value; drop --stream")
    from ..fileio import is_stdout

    if is_stdout(args.per_query_out):
        raise RagReportError("--per-query-out writes Parquet (binary): give a file name, "
                             "not standard output")
    if args.doc_map is not None:
        raise RagReportError("--per-query-out does not work with --doc-map yet")
    from ..fileio import check_outputs

    check_outputs([args.per_query_out], paths)
    return paths


def _write_per_query(args: argparse.Namespace, result: Any, inputs: list[str],
                     qrels_read: Any, given: tuple[Any, Any]) -> None:
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
    path = perquery.write(result, args.per_query_out, inputs=inputs, qrels_sha256=qrels,
                          run_sha256={result.run_name: run} if run else None,
                          qrels_judgments_sha256=judgments_sha256(qrels_read))
    sys.stderr.write(f"wrote {escape_undecodable(str(path))}\n")


#: Evaluation options: the per-query results state their own conventions.
_EVAL_OPTIONS = (("complete", "-c"), ("max_depth", "-M"), ("order", "--order"),
                 ("ties", "--ties"), ("compat", "--compat"), ("k_max", "--k-max"),
                 ("ignore_identical_ids", "--ignore-identical-ids"),
                 ("score_precision", "--score-precision"),
                 ("keep_first_duplicate", "--keep-first-duplicate"), ("doc_map", "--doc-map"),
                 ("fractional_grades", "--fractional-grades"), ("columns", "--columns"))


def _check_per_query_in(args: argparse.Namespace) -> None:
    """``report`` / ``check --per-query-in``: instead of QRELS and RUN, without evaluation
    options (the results were evaluated already, with the conventions they state)."""
    if args.qrels or args.runs or args.example:
        raise RagReportError("give --per-query-in or QRELS and RUN (or --example), not both")
    for attr, flag in _EVAL_OPTIONS:
        if getattr(args, attr, None) not in (None, False):
            raise RagReportError(f"{flag} does not apply to --per-query-in: the per-query "
                                 "results were evaluated with the conventions they state")
    if args.rel_level != 1 or args.no_relevant != "zero":
        flag = "-l" if args.rel_level != 1 else "--no-relevant"
        raise RagReportError(f"{flag} does not apply to --per-query-in: the per-query "
                             "results were evaluated with the conventions they state")


def _stream_evaluate(args: argparse.Namespace, measures: Any) -> int:
    import json
    from dataclasses import asdict

    from ..core.stream import evaluate_stream

    if args.per_query:
        raise RagReportError("--stream prints means only; drop -q")
    if args.qrels == "-" and args.runs == "-":
        raise RagReportError("standard input ('-') can be read for one input only, got it "
                             "for 2 inputs")
    res = evaluate_stream(args.qrels, args.runs, measures, **eval_kwargs(args))
    if args.format == "json":
        out = json.dumps({"schema": "ragreport.evaluate/1", "run": res.run_name,
                          "queries": res.n_queries, "k_max": res.k_max, "means": res.means(),
                          "counts": res.counts,
                          "conventions": asdict(res.conventions) if res.conventions else None},
                         indent=2, ensure_ascii=False) + "\n"
    elif args.format == "trec":
        from ..textout import format_trec

        out = format_trec(res)
    else:
        width = max(len(str(m)) for m in res.measures)
        out = "".join(f"{m!s:<{width}}  {shown(res.mean(m))}\n" for m in res.measures)
        out += f"queries evaluated: {res.n_queries}; " + "; ".join(
            f"{k.replace('_', ' ')}: {v}" for k, v in res.counts.items() if k != "evaluated")
        out += "\n"
    _write_stdout(out)
    return EXIT_OK


def _with_documents(data: dict[str, Any], result: Any, per_query: bool) -> dict[str, Any]:
    """``evaluate --format json`` with ``--doc-map``: the document level under "document"."""
    from dataclasses import asdict

    doc = result.document.to_dict(per_query=per_query)
    doc.pop("conventions", None)  # the chunk level's, which state the map
    red = result.redundancy
    doc["redundancy"] = [float(x) for x in red.mean(axis=0)] if len(red) else []
    doc["doc_map"] = asdict(result.doc_map_info)
    return {**data, "document": doc}


def _document_table(result: Any) -> str:
    """Means at chunk and at document level side by side, and the redundancy at K."""
    from ..textout import terminal_safe

    c, d = result.means(), result.document.means()
    width = max(len("measure"), *(len(k) for k in c))
    rows = [f"{'measure':<{width}}  {'chunks':>7}  {'documents':>9}   "
            f"(run {terminal_safe(result.run_name)}, --doc-map)"]
    rows += [f"{k:<{width}}  {shown(c[k]):>7}  {shown(d[k]):>9}" for k in c]
    # at the largest cutoff of the measures shown (10 when none has one)
    k = min(max([m.cutoff for m in result.measures if m.cutoff] or [10]), result.k_max)
    red = result.redundancy
    mean = float(red[:, k - 1].mean()) if len(red) else 0.0
    info = result.doc_map_info
    rows.append("")
    rows.append(f"redundancy@{k}: {shown(mean)} of the top {k} chunks per query belong to a "
                f"document already ranked above (mean); {info.chunks_collapsed} ranked chunks "
                f"collapsed; judgments per {info.judgment_level}")
    return "\n".join(rows) + "\n"


def _write_stdout(text: str) -> None:
    """Write ``text`` to standard output; undecodable bytes of a name are shown escaped."""
    if sys.stdout is None:
        raise RagReportError("cannot write the output: standard output is closed")
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:
        sys.stdout.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))


def _per_query_table(result: Any) -> str:
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


def _check_trackers(args: argparse.Namespace) -> None:
    """Before any work: each tracker's package is installed, a given MLflow run exists."""
    from ..report.tracking import check_mlflow, check_wandb

    trackers = wanted_trackers(args)
    if "mlflow" in trackers:
        check_mlflow(args.mlflow_run)
    if "wandb" in trackers:
        check_wandb()


def _workers(args: argparse.Namespace) -> Any:
    """The worker processes of one report, not started yet
    (:func:`ragreport.cli.report.report_for` starts them once the inputs are read)."""
    from ..parallel import Workers, default_jobs

    jobs = args.jobs if args.jobs is not None else default_jobs()
    if not wants_html(args):
        return Workers(jobs, preload=("ragreport.stats",))
    if options.OWN_PROCESS and "matplotlib" not in sys.modules:
        # the plots are drawn on SVG canvases, whatever the backend: a MPLBACKEND meant for
        # interactive use (or misspelt, which makes ``import matplotlib`` raise, in this
        # process and in the workers' forkserver) is of no use here
        os.environ["MPLBACKEND"] = "agg"
    from ..report.plots import warm_up

    return Workers(jobs, preload=PLOT_PRELOAD, warm_up=warm_up)


def _outputs(args: argparse.Namespace) -> list[str]:
    return [p for p in (args.html, args.markdown, args.json) if p is not None]


def _refuse_per_query_positional(args: argparse.Namespace) -> None:
    """A per-query results file given as QRELS or RUN: say to read it with --per-query-in
    (it was read as qrels or a run, with an error about its columns)."""
    from ..core.perquery import is_per_query

    given = [args.qrels, *(args.runs or [])]
    for path in given:
        if isinstance(path, str) and path != "-" and is_per_query(path):
            raise RagReportError(f"{escape_undecodable(path)} holds per-query results "
                                 "(evaluate --per-query-out): read it with --per-query-in "
                                 "instead of QRELS and RUN")


def _check_options(args: argparse.Namespace) -> None:
    """Everything about the options that can be checked before any input is read."""
    from ..report.build import generated_at_from_env

    if getattr(args, "per_query_in", None):  # per-query results (ragreport.core.perquery)
        _check_per_query_in(args)
    elif args.example:
        example_inputs(args)
    if not getattr(args, "per_query_in", None):
        _refuse_per_query_positional(args)
    if not getattr(args, "per_query_in", None) and (not args.qrels or not args.runs):
        raise RagReportError(f"{args.command} needs QRELS and at least one RUN (or --example)")
    args.title = escape_undecodable(args.title)
    args.names = [escape_undecodable(n) for n in args.names] if args.names else args.names
    args.generated_at = generated_at_from_env(args.generated_at)  # a bad time: before any work
    check_doc_map_options(args)
    _check_slice_options(args)
    if args.max_drop is not None and args.no_stats:
        raise RagReportError("--max-drop needs the significance tests; drop --no-stats")
    _check_baseline_report_options(args)
    outs = _outputs(args)
    if sum(p == "-" for p in outs) > 1:
        raise RagReportError("standard output ('-') can be used for one output only")
    inputs = [p for p in (args.qrels, *args.runs, args.queries, args.docs, args.targets,
                          args.doc_map, args.baseline_report, args.slices,
                          *(getattr(args, "per_query_in", None) or []))
              if p is not None and p != "-"]
    from ..fileio import check_outputs

    check_outputs(outs, inputs)  # a missing folder or an input as output: before any work
    if args.template_dir is not None and wants_html(args):
        from pathlib import Path

        from ..report.html import TEMPLATE_NAME

        where = Path(args.template_dir)
        if not where.is_dir():
            raise RagReportError(f"template directory not found: {escape_undecodable(str(where))}")
        if not (where / TEMPLATE_NAME).is_file():
            raise RagReportError(
                f"template not found: {escape_undecodable(str(where / TEMPLATE_NAME))}")
    _check_trackers(args)  # last: the tracker is contacted only when all else is right


def _check_baseline_report_options(args: argparse.Namespace) -> None:
    """``--baseline-report`` and the drift options that need it (before any work)."""
    if args.baseline_report is None:
        for flag, value in (("--allow-drift", args.allow_drift),
                            ("--max-query-drift", args.max_query_drift is not None),
                            ("--min-judged-ratio", args.min_judged_ratio is not None)):
            if value:
                raise RagReportError(f"{flag} needs --baseline-report")
        return
    if args.doc_map is not None:
        raise RagReportError("--baseline-report does not work with --doc-map yet (a stored "
                             "report keeps no document-level per-query values): give the "
                             "baseline's run file and --baseline NAME instead")
    if args.baseline_report == "-":
        raise RagReportError("--baseline-report must be a file, not standard input")


def _check_slice_options(args: argparse.Namespace) -> None:
    """``--slices-column`` names a column of ``--slices FILE``, else of ``--queries FILE``."""
    if args.slices_column is not None and args.slices is None and args.queries is None:
        raise RagReportError("--slices-column names a column of --slices FILE or of "
                             "--queries FILE; give one of them")


def _to_stdout(args: argparse.Namespace) -> bool:
    """Whether one of the outputs is standard output (then the summary goes to stderr)."""
    from ..fileio import is_stdout

    return any(is_stdout(p) for p in _outputs(args))


def _write_outputs(args: argparse.Namespace, report: Any, workers: Any) -> None:
    if wanted_trackers(args):
        return _track_and_write(args, report, workers)
    written = report.save(html=args.html, markdown=args.markdown, json=args.json,
                          template_dir=args.template_dir, workers=workers)
    for path in written:
        if str(path) != "-":
            sys.stderr.write(f"wrote {escape_undecodable(str(path))}\n")


def _track_and_write(args: argparse.Namespace, report: Any, workers: Any) -> None:
    """``--mlflow`` / ``--wandb``: the outputs are rendered once, logged into each tracker,
    and only then written here (all or none), before the tracked runs are closed: a tracking
    failure (exit 2) leaves no local output written or replaced, and a write that fails
    undoes the runs as a tracker's failure does. Both runs are opened before either is
    filled, MLflow first; one failing undoes the other as far as it can
    (``log_to_trackers``)."""
    from ..fileio import write_outputs
    from ..report.tracking import log_to_trackers, render_outputs

    rendered = render_outputs(report, template_dir=args.template_dir, workers=workers)
    trackers = wanted_trackers(args)
    outputs = [(path, rendered[key]) for key, path in (("html", args.html),
                                                       ("markdown", args.markdown),
                                                       ("json", args.json)) if path is not None]
    written: list[str] = []
    logged = [f"logged to {tracker} run {run_id}" for tracker, run_id in log_to_trackers(
        report, mlflow="mlflow" in trackers, mlflow_run=args.mlflow_run,
        wandb="wandb" in trackers, rendered=rendered,
        then=lambda: written.extend(write_outputs(outputs, [f.path for f in report.inputs
                                                            if f.path])))]
    for path in written:
        if str(path) != "-":
            sys.stderr.write(f"wrote {escape_undecodable(str(path))}\n")
    for line in logged:
        sys.stderr.write(one_line(line) + "\n")


def _cmd_report(args: argparse.Namespace) -> int:
    from ..report.terminal import render_terminal

    if not (args.html or args.markdown or args.json):
        args.html = "ragreport-report.html"
    _check_options(args)
    with _workers(args) as workers:
        report = report_for(args, workers)
        _write_outputs(args, report, workers)
    _print_summary(args, render_terminal(report))
    return EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    from ..report.terminal import render_failures, render_terminal

    _check_options(args)
    with _workers(args) as workers:
        report = report_for(args, workers)
        _write_outputs(args, report, workers)
    text = render_terminal(report)
    if not report.all_passed:
        text += "\n" + render_failures(report)
    else:
        text += "\nall targets passed\n"
    _print_summary(args, text)
    return EXIT_OK if report.all_passed else EXIT_TARGET_FAILED


def _print_summary(args: argparse.Namespace, text: str) -> None:
    """The tables of ``report`` / ``check``: on stdout, or on stderr when an output goes to
    stdout. A reader that has gone (``| true``, ``| head``) changes nothing: the outputs are
    written and the decision is made, so ``check`` still exits 1 on a failed target."""
    if _to_stdout(args):
        sys.stderr.write(text)
        return
    try:
        _write_stdout(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()


def _cmd_notebook(args: argparse.Namespace) -> int:
    from ..notebook import write_analysis_notebook

    if args.example and (args.qrels or args.runs):
        raise RagReportError("--example takes no QRELS or RUN arguments")
    if not args.example and (not args.qrels or not args.runs):
        raise RagReportError("notebook needs QRELS and at least one RUN (or --example)")
    written = write_analysis_notebook(
        None if args.example else args.qrels, [] if args.example else args.runs,
        args.output, html_path=args.html, queries=args.queries, docs=args.docs,
        names=args.names, example=args.example, measures=args.measures,
        worst_measure=args.worst_measure, **fractional_kwarg(args))
    for path in written:
        if path != "-":  # the HTML went to standard output
            sys.stderr.write(f"wrote {escape_undecodable(path)}\n")
    return EXIT_OK


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "evaluate": _cmd_evaluate, "report": _cmd_report, "check": _cmd_check,
    "notebook": _cmd_notebook}


class Terminated(BaseException):
    """SIGTERM arrived (raised in the main thread by the ``ragreport`` command's handler)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated


def run() -> NoReturn:
    """Entry point of the ``ragreport`` command and ``python -m ragreport``: :func:`main`,
    in a process of its own, which it ends with main's exit code (:func:`_end`).

    There, SIGTERM is handled like Ctrl-C (one line, no output replaced, exit 143), text
    that cannot be encoded is written escaped, and a thread's unexpected error never prints
    a traceback (``--debug`` does).
    """
    import signal
    import threading

    options.OWN_PROCESS = True
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    debug = "--debug" in sys.argv[1:]
    if not debug:
        threading.excepthook = _quiet_thread_error
    with contextlib.suppress(ValueError, OSError):  # not the main thread
        signal.signal(signal.SIGTERM, _on_sigterm)
    code = EXIT_INTERRUPTED
    try:
        code = main()
        _join_threads()  # here, not in the interpreter's shutdown: a 2nd Ctrl-C is handled
    except (KeyboardInterrupt, Terminated):  # a second signal while the last threads end
        _end(code if code != EXIT_OK else EXIT_INTERRUPTED, exit_handlers=False)
    _end(code)


def _end(code: int, *, exit_handlers: bool = True) -> NoReturn:
    """End the command's own process with ``code``, without the interpreter's teardown.

    Python's exit handlers run first (``atexit``: worker processes, temporary files,
    trackers, logging), then the standard streams are flushed, then ``os._exit``. What is
    skipped is the teardown of the modules and the C++ static destructors: there pyarrow's
    thread pools, still holding tasks of a read that has just failed (the command exits at
    once with its error), abort the process ("terminate called without an active
    exception", exit 134 instead of 2; apache/arrow#34314), a CSV or a Parquet read alike.
    After a second signal (``exit_handlers=False``): out at once.
    """
    import atexit

    if exit_handlers:
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _join_threads() -> None:
    """Wait for the background threads that must end before the process (none is a daemon)."""
    import threading

    for t in threading.enumerate():
        if t is not threading.current_thread() and not t.daemon:
            t.join()


def _quiet_thread_error(args: Any) -> None:
    """A background thread's error: the main thread reports what it causes, in one line."""
    return None


def _say(line: str) -> None:
    with contextlib.suppress(Exception):  # stdout may be closed (None) or a broken pipe
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.write(one_line(line) + "\n")
        sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (never raises, never exits).

    Any error is one line on stderr and :data:`EXIT_BAD_INPUT`; ``--debug`` also prints the
    traceback. Ctrl-C gives :data:`EXIT_INTERRUPTED`, SIGTERM :data:`EXIT_TERMINATED`.
    """
    raw = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in raw
    try:
        return _main(raw)
    except SystemExit as exc:  # argparse: --help, --version, or its (one-line) error
        code = exc.code
        if code is None or isinstance(code, int):
            return int(code or 0)
        _say(f"ragreport: error: {code}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _traceback(debug)
        _say("ragreport: interrupted")
        return EXIT_INTERRUPTED
    except Terminated:
        _traceback(debug)
        _say("ragreport: terminated")
        return EXIT_TERMINATED
    except RagReportError as exc:
        _traceback(debug)
        _say(f"ragreport: error: {exc}")
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # the reader of our output has gone (``| head``)
        _quiet_stdout()
        return EXIT_OK
    except MemoryError:
        _traceback(debug)
        _say("ragreport: error: out of memory")
        return EXIT_BAD_INPUT
    except OSError as exc:
        _traceback(debug)
        where = f"{escape_undecodable(str(exc.filename))}: " if exc.filename is not None else ""
        _say(f"ragreport: error: {where}{exc.strerror or exc}")
        return EXIT_BAD_INPUT
    except Exception as exc:
        _traceback(debug)
        _say(f"ragreport: error: internal error (a bug in ragreport {__version__}; please "
             f"report it, with the traceback --debug prints): {type(exc).__name__}: {exc}")
        return EXIT_BAD_INPUT


def _traceback(debug: bool) -> None:
    if debug:
        import traceback

        traceback.print_exc()


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the final flush cannot fail."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    if args.command is None:
        parser.print_help()
        _say("ragreport: error: a command is required: evaluate, report, check or notebook")
        return EXIT_BAD_INPUT
    return _COMMANDS[args.command](args)
