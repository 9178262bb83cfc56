"""Command-line interface: the ``ragreport`` process, its commands and exit codes
(``evaluate`` is :mod:`.evaluate`; the report of ``report`` and ``check`` is :mod:`.report`).

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

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn

from .._version import __version__
from ..errors import RagReportError
from . import inputs
from .args import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TARGET_FAILED,
    EXIT_TERMINATED,
    escape_undecodable,
    one_line,
    write_stdout,
)
from .config import Input, Options, parse_options
from .evaluate import cmd_evaluate
from .inputs import (
    check_doc_map_options,
    fractional_kwarg,
    wanted_trackers,
    wants_html,
    with_example,
)
from .labelqueue import cmd_label_queue, cmd_merge_labels
from .report import PLOT_PRELOAD, report_for

if TYPE_CHECKING:
    from ..parallel import Workers
    from ..report import Report

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TARGET_FAILED",
           "EXIT_TERMINATED", "main", "run"]


#: Evaluation options: the per-query results state their own conventions.
_EVAL_OPTIONS = (("complete", "-c"), ("max_depth", "-M"), ("order", "--order"),
                 ("ties", "--ties"), ("compat", "--compat"), ("k_max", "--k-max"),
                 ("ignore_identical_ids", "--ignore-identical-ids"),
                 ("score_precision", "--score-precision"),
                 ("keep_first_duplicate", "--keep-first-duplicate"), ("doc_map", "--doc-map"),
                 ("fractional_grades", "--fractional-grades"), ("columns", "--columns"))


def _check_per_query_in(opts: Options) -> None:
    """``report`` / ``check --per-query-in``: instead of QRELS and RUN, without evaluation
    options (the results were evaluated already, with the conventions they state)."""
    from ..targets import SETTINGS

    if opts.qrels or opts.runs or opts.example:
        raise RagReportError("give --per-query-in or QRELS and RUN (or --example), not both")
    for attr, flag in (*_EVAL_OPTIONS, ("rel_level", "-l"), ("no_relevant", "--no-relevant")):
        value = getattr(opts, attr)
        if value in (None, False) or (attr, value) in (("rel_level", 1), ("no_relevant", "zero")):
            continue
        where = opts.file_source(attr)
        if where is None:
            raise RagReportError(f"{flag} does not apply to --per-query-in: the per-query "
                                 "results were evaluated with the conventions they state")
        if attr == "k_max":  # a file's curve width is for the raw files: the shards state
            continue  # their own
        if attr not in SETTINGS:  # the settings: compared with the stated conventions
            raise RagReportError(f"{attr} (set in {where}) does not apply to --per-query-in: "
                                 "the per-query results were evaluated with the conventions "
                                 "they state; set it for 'evaluate' only ([evaluate] table)")


def _check_trackers(opts: Options) -> None:
    """Before any work: each tracker's package is installed, a given MLflow run exists."""
    from ..report.track_mlflow import check_mlflow
    from ..report.track_wandb import check_wandb

    trackers = wanted_trackers(opts)
    if "mlflow" in trackers:
        check_mlflow(opts.mlflow_run)
    if "wandb" in trackers:
        check_wandb()


def _workers(opts: Options) -> Workers:
    """The worker processes of one report, not started yet
    (:func:`ragreport.cli.report.report_for` starts them once the inputs are read)."""
    from ..parallel import Workers, default_jobs

    jobs = opts.jobs if opts.jobs is not None else default_jobs()
    if not wants_html(opts):
        return Workers(jobs, preload=("ragreport.stats",))
    if inputs.OWN_PROCESS and "matplotlib" not in sys.modules:
        # the plots are drawn on SVG canvases, whatever the backend: a MPLBACKEND meant for
        # interactive use (or misspelt, which makes ``import matplotlib`` raise, in this
        # process and in the workers' forkserver) is of no use here
        os.environ["MPLBACKEND"] = "agg"
    from ..report.plots import warm_up

    return Workers(jobs, preload=PLOT_PRELOAD, warm_up=warm_up)


def _outputs(opts: Options) -> list[str]:
    return [p for p in (opts.html, opts.markdown, opts.json) if p is not None]


def _refuse_per_query_positional(opts: Options) -> None:
    """A per-query results file given as QRELS or RUN: say to read it with --per-query-in
    (it was read as qrels or a run, with an error about its columns)."""
    from ..core.perquery import is_per_query

    given = [opts.qrels, *(opts.runs or [])]
    for path in given:
        if isinstance(path, str) and path != "-" and is_per_query(path):
            raise RagReportError(f"{escape_undecodable(path)} holds per-query results "
                                 "(evaluate --per-query-out): read it with --per-query-in "
                                 "instead of QRELS and RUN")


def _check_options(opts: Options) -> Options:
    """Everything about the options that can be checked before any input is read; the
    options with the example's inputs, and the title, names and time as shown."""
    from ..report.build import generated_at_from_env

    if opts.per_query_in:  # per-query results (ragreport.core.perquery)
        _check_per_query_in(opts)
    elif opts.example:
        opts = with_example(opts)
    if not opts.per_query_in:
        _refuse_per_query_positional(opts)
    if not opts.per_query_in and (not opts.qrels or not opts.runs):
        raise RagReportError(f"{opts.command} needs QRELS and at least one RUN (or --example)")
    opts = replace(opts, title=escape_undecodable(opts.title),
                   names=tuple(escape_undecodable(n) for n in opts.names),
                   generated_at=generated_at_from_env(opts.generated_at))  # a bad time: now
    check_doc_map_options(opts)
    _check_slice_options(opts)
    if opts.max_drop is not None and opts.no_stats:
        raise RagReportError("--max-drop needs the significance tests; drop --no-stats")
    _check_baseline_report_options(opts)
    outs = _outputs(opts)
    if sum(p == "-" for p in outs) > 1:
        raise RagReportError("standard output ('-') can be used for one output only")
    named = [p for p in (opts.qrels, *opts.runs, opts.queries, opts.docs, opts.targets,
                          opts.doc_map, opts.baseline_report, opts.slices,
                          *opts.per_query_in)
              if isinstance(p, str) and p != "-"]  # named, not yet read
    from ..fileio import check_outputs

    check_outputs(outs, named)  # a missing folder or an input as output: before any work
    if opts.template_dir is not None and wants_html(opts):
        from pathlib import Path

        from ..report.html import TEMPLATE_NAME

        where = Path(opts.template_dir)
        if not where.is_dir():
            raise RagReportError(f"template directory not found: {escape_undecodable(str(where))}")
        if not (where / TEMPLATE_NAME).is_file():
            raise RagReportError(
                f"template not found: {escape_undecodable(str(where / TEMPLATE_NAME))}")
    _check_trackers(opts)  # last: the tracker is contacted only when all else is right
    return opts


def _check_baseline_report_options(opts: Options) -> None:
    """``--baseline-report`` and the drift options that need it (before any work)."""
    if opts.baseline_report is None:
        for flag, value in (("--allow-drift", opts.allow_drift),
                            ("--max-query-drift", opts.max_query_drift is not None),
                            ("--min-judged-ratio", opts.min_judged_ratio is not None)):
            if value:
                raise RagReportError(f"{flag} needs --baseline-report")
        return
    if opts.doc_map is not None:
        raise RagReportError("--baseline-report does not work with --doc-map yet (a stored "
                             "report keeps no document-level per-query values): give the "
                             "baseline's run file and --baseline NAME instead")
    if opts.baseline_report == "-":
        raise RagReportError("--baseline-report must be a file, not standard input")


def _check_slice_options(opts: Options) -> None:
    """``--slices-column`` names a column of ``--slices FILE``, else of ``--queries FILE``."""
    if opts.slices_column is not None and opts.slices is None and opts.queries is None:
        raise RagReportError("--slices-column names a column of --slices FILE or of "
                             "--queries FILE; give one of them")


def _to_stdout(opts: Options) -> bool:
    """Whether one of the outputs is standard output (then the summary goes to stderr)."""
    from ..fileio import is_stdout

    return any(is_stdout(p) for p in _outputs(opts))


def _write_outputs(opts: Options, report: Report, workers: Workers) -> None:
    if wanted_trackers(opts):
        return _track_and_write(opts, report, workers)
    written = report.save(html=opts.html, markdown=opts.markdown, json=opts.json,
                          template_dir=opts.template_dir, workers=workers)
    for path in written:
        if str(path) != "-":
            sys.stderr.write(f"wrote {escape_undecodable(str(path))}\n")


def _track_and_write(opts: Options, report: Report, workers: Workers) -> None:
    """``--mlflow`` / ``--wandb``: the outputs are rendered once, logged into each tracker,
    and only then written here (all or none), before the tracked runs are closed: a tracking
    failure (exit 2) leaves no local output written or replaced, and a write that fails
    undoes the runs as a tracker's failure does. Both runs are opened before either is
    filled, MLflow first; one failing undoes the other as far as it can
    (``log_to_trackers``)."""
    from ..fileio import write_outputs
    from ..report.payload import render_outputs
    from ..report.tracking import log_to_trackers

    rendered = render_outputs(report, template_dir=opts.template_dir, workers=workers)
    trackers = wanted_trackers(opts)
    outputs = [(path, rendered[key]) for key, path in (("html", opts.html),
                                                       ("markdown", opts.markdown),
                                                       ("json", opts.json)) if path is not None]
    written: list[str] = []
    logged = [f"logged to {tracker} run {run_id}" for tracker, run_id in log_to_trackers(
        report, mlflow="mlflow" in trackers, mlflow_run=opts.mlflow_run,
        wandb="wandb" in trackers, rendered=rendered,
        then=lambda: written.extend(write_outputs(outputs, [f.path for f in report.inputs
                                                            if f.path])))]
    for path in written:
        if str(path) != "-":
            sys.stderr.write(f"wrote {escape_undecodable(str(path))}\n")
    for line in logged:
        sys.stderr.write(one_line(line) + "\n")


def _cmd_report(opts: Options) -> int:
    from ..report.terminal import render_terminal

    if not (opts.html or opts.markdown or opts.json):
        opts = replace(opts, html="ragreport-report.html")
    opts = _check_options(opts)
    with _workers(opts) as workers:
        report = report_for(opts, workers)
        _write_outputs(opts, report, workers)
    _print_summary(opts, render_terminal(report))
    return EXIT_OK


def _cmd_check(opts: Options) -> int:
    from ..report.terminal import render_failures, render_terminal

    opts = _check_options(opts)
    with _workers(opts) as workers:
        report = report_for(opts, workers)
        _write_outputs(opts, report, workers)
    text = render_terminal(report)
    if not report.all_passed:
        text += "\n" + render_failures(report)
    else:
        text += "\nall targets passed\n"
    _print_summary(opts, text)
    return EXIT_OK if report.all_passed else EXIT_TARGET_FAILED


def _print_summary(opts: Options, text: str) -> None:
    """The tables of ``report`` / ``check``: on stdout, or on stderr when an output goes to
    stdout. A reader that has gone (``| true``, ``| head``) changes nothing: the outputs are
    written and the decision is made, so ``check`` still exits 1 on a failed target."""
    if _to_stdout(opts):
        sys.stderr.write(text)
        return
    try:
        write_stdout(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()


def _cmd_notebook(opts: Options) -> int:
    from ..notebook import write_analysis_notebook

    if opts.example and (opts.qrels or opts.runs):
        raise RagReportError("--example takes no QRELS or RUN arguments")
    if not opts.example and (not opts.qrels or not opts.runs):
        raise RagReportError("notebook needs QRELS and at least one RUN (or --example)")
    if opts.output is None:  # argparse requires it: for the type only
        raise RagReportError("notebook needs -o/--output PATH (or output = \"PATH\" in the "
                             "configuration file)")
    written = write_analysis_notebook(  # the inputs as paths: the notebook reads them
        None if opts.example else _path(opts.qrels),
        [] if opts.example else [str(p) for p in opts.runs], opts.output,
        html_path=opts.html, queries=_path(opts.queries), docs=_path(opts.docs),
        names=list(opts.names) or None, example=opts.example,
        measures=None if opts.measures is None else list(opts.measures),
        worst_measure=opts.worst_measure, **fractional_kwarg(opts))
    for path in written:
        if path != "-":  # the HTML went to standard output
            sys.stderr.write(f"wrote {escape_undecodable(path)}\n")
    return EXIT_OK


def _cmd_config(opts: Options) -> int:
    from .configshow import show_config

    write_stdout(show_config(opts.config_for, opts.config_args))
    return EXIT_OK


def _path(value: Input | None) -> str | None:
    return None if value is None else str(value)


_COMMANDS: dict[str, Callable[[Options], int]] = {
    "evaluate": cmd_evaluate, "report": _cmd_report, "check": _cmd_check,
    "notebook": _cmd_notebook, "config": _cmd_config, "label-queue": cmd_label_queue,
    "merge-labels": cmd_merge_labels}


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

    inputs.OWN_PROCESS = True
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
    opts = parse_options(argv)
    if opts is None:
        _say("ragreport: error: a command is required: evaluate, report, check, label-queue, "
             "merge-labels, notebook or config")
        return EXIT_BAD_INPUT
    return _COMMANDS[opts.command](opts)
