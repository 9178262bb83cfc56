"""Command-line interface: ``ragreport evaluate`` (and the report commands).

Exit codes: :data:`EXIT_OK` (0), :data:`EXIT_TARGET_FAILED` (1, ``check`` only),
:data:`EXIT_BAD_INPUT` (2: bad input, options or configuration; one line on stderr, no
traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__
from .errors import RagReportError

__all__ = ["EXIT_BAD_INPUT", "EXIT_OK", "EXIT_TARGET_FAILED", "main"]

EXIT_OK = 0
EXIT_TARGET_FAILED = 1
EXIT_BAD_INPUT = 2


#: True when this process is the ``ragreport`` command itself (see :func:`run`).
_OWN_PROCESS = False


class _NoPandas:
    """A meta path finder that answers "not installed" for pandas (see below)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"{name} is not used by the ragreport command")


def _skip_pandas_interop() -> None:
    """Have pyarrow take pandas for absent, in the ``ragreport`` command's own process only.

    pyarrow looks for pandas at its first array conversion and imports it when installed
    (0.3 to 0.6 s on a 2-core machine), although the command never converts to pandas. A
    finder that refuses pandas is put first on ``sys.meta_path`` for that one look and taken
    away at once, so any later ``import pandas`` works. Called before the first use of
    pyarrow; does nothing when ``main`` is called from someone else's process, where pyarrow
    must keep its pandas interop.
    """
    if not _OWN_PROCESS or "pandas" in sys.modules or "pyarrow" in sys.modules:
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        import pyarrow as pa

        pa.array([0])  # pyarrow's one look for pandas happens here
    finally:
        sys.meta_path.remove(finder)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one readable line, exit 2
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n"
                                  f"(see '{self.prog} --help')\n")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _add_inputs(p: argparse.ArgumentParser, many_runs: bool) -> None:
    p.add_argument("qrels", nargs="?", help="qrels file (TREC, BEIR TSV or JSONL; .gz ok)")
    p.add_argument("runs", nargs="*" if many_runs else "?", metavar="RUN",
                   help="run file(s) (TREC or JSONL; .gz ok)")
    p.add_argument("--example", action="store_true",
                   help="use the embedded example (Python docs passages, BM25 and TF-IDF runs)")
    p.add_argument("-m", "--measure", action="append", default=None, dest="measures",
                   metavar="MEASURES",
                   help="measure(s), repeatable; e.g. nDCG@10, 'P@5', mrr, P.5,10 (trec_eval)")
    p.add_argument("--k-max", type=_positive, default=None, help="largest K of the curves")
    p.add_argument("-c", "--complete", action="store_true",
                   help="qrels queries missing from the run count as 0 (trec_eval -c)")
    p.add_argument("-M", "--max-depth", type=_positive, default=None,
                   help="only the first N results per query count (trec_eval -M)")
    p.add_argument("-l", "--rel-level", type=_integer, default=1,
                   help="minimum grade that counts as relevant (trec_eval -l; default 1)")
    p.add_argument("--order", choices=("score", "given"), default="score",
                   help="score: by score, ties by doc id descending (trec_eval); given: as listed")
    p.add_argument("--no-relevant", choices=("zero", "skip", "raise"), default="zero",
                   help="queries without a relevant document: score 0 (default), skip, or error")
    p.add_argument("--keep-first-duplicate", action="store_true",
                   help="keep the first occurrence of a document repeated in a query "
                        "(default: error)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = _Parser(prog="ragreport",
                     description="Retrieval metrics (trec_eval-exact) for every K, with reports.")
    parser.add_argument("--version", action="version", version=f"ragreport {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    ev = sub.add_parser("evaluate", help="compute measures for one run",
                        description="Compute measures for one run against qrels.")
    _add_inputs(ev, many_runs=False)
    ev.add_argument("-q", "--per-query", action="store_true", help="add per-query values")
    ev.add_argument("--stream", action="store_true",
                    help="read the run in blocks, in bounded memory (run grouped by query)")
    ev.add_argument("--format", choices=("table", "json", "trec"), default="table",
                    help="table (default), json (schema ragreport.evaluate/1) or trec "
                         "(trec_eval's exact layout)")
    for name, helptext in (("report", "write the HTML / Markdown / JSON report"),
                           ("check", "check targets; exit 1 when one fails (CI gate)")):
        rp = sub.add_parser(name, help=helptext, description=helptext[0].upper() + helptext[1:])
        _add_inputs(rp, many_runs=True)
        _add_report_options(rp)
    _add_notebook_parser(sub)
    return parser


def _add_notebook_parser(sub: Any) -> None:
    nb = sub.add_parser("notebook", help="write and run an analysis notebook (and its HTML)",
                        description="Write an analysis notebook (loading code, summary, "
                                    "metric-vs-K plots, worst queries), execute it, and "
                                    "optionally export it to HTML that reads offline.")
    nb.add_argument("qrels", nargs="?", help="qrels file (TREC, BEIR TSV or JSONL; .gz ok)")
    nb.add_argument("runs", nargs="*", metavar="RUN", help="run file(s) (TREC or JSONL)")
    nb.add_argument("--example", action="store_true", help="use the embedded example")
    nb.add_argument("-o", "--output", required=True, metavar="PATH",
                    help="where to write the executed notebook (.ipynb)")
    nb.add_argument("--html", default=None, metavar="PATH",
                    help="also export the executed notebook to this HTML file")
    nb.add_argument("--queries", default=None, metavar="FILE", help="query texts (TSV or JSONL)")
    nb.add_argument("--docs", default=None, metavar="FILE", help="document texts (TSV or JSONL)")
    nb.add_argument("--name", action="append", default=None, dest="names", metavar="NAME",
                    help="run name, repeatable, in the order of the runs")


def _add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", action="append", default=None, dest="names", metavar="NAME",
                   help="run name, repeatable, in the order of the runs (default: TREC tag, "
                        "else file name)")
    p.add_argument("--targets", default=None, metavar="FILE",
                   help="TOML targets file (default: [tool.ragreport.targets] in ./pyproject.toml,"
                        " else ./ragreport.toml, else the seed tutorial's typical targets)")
    p.add_argument("--baseline", default=None, metavar="NAME",
                   help="run the others are compared with (default: the first)")
    p.add_argument("--queries", default=None, metavar="FILE", help="query texts (TSV or JSONL)")
    p.add_argument("--docs", default=None, metavar="FILE", help="document texts (TSV or JSONL)")
    p.add_argument("--html", default=None, metavar="PATH", help="write the HTML report here")
    p.add_argument("--markdown", default=None, metavar="PATH", help="write Markdown here")
    p.add_argument("--json", default=None, metavar="PATH", help="write JSON here")
    p.add_argument("--per-query", action="store_true", help="put per-query values in the JSON")
    p.add_argument("--title", default="Retrieval evaluation", help="report title")
    p.add_argument("--template-dir", default=None, metavar="DIR",
                   help="use your own Jinja2 templates (report.html.j2)")
    p.add_argument("--generated-at", default=None, metavar="ISO",
                   help="time shown in the report (default: $SOURCE_DATE_EPOCH, else now)")
    p.add_argument("--worst-measure", default=None, metavar="MEASURE",
                   help="measure ranking the worst queries (default: the first target's)")
    p.add_argument("--worst", type=int, default=20, metavar="N",
                   help="worst queries detailed per run (default 20)")
    p.add_argument("--max-drop", type=float, default=None, metavar="D",
                   help="fail when a run is below the baseline by more than D on a target "
                        "measure and the drop is significant")
    p.add_argument("--ci-level", type=float, default=0.95, metavar="L",
                   help="confidence level of the bootstrap intervals (default 0.95)")
    p.add_argument("--resamples", type=_positive, default=10_000, metavar="N",
                   help="bootstrap resamples and randomization-test samples (default 10000)")
    p.add_argument("--seed", type=_integer, default=0, help="random seed (default 0)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="significance level of the Holm-corrected tests (default 0.05)")
    p.add_argument("--no-stats", action="store_true",
                   help="skip confidence intervals and significance tests")
    p.add_argument("--jobs", type=_positive, default=None, metavar="N",
                   help="processes for the bootstrap and the plots (default: the CPUs, at "
                        "most 4; 1: no worker process). The output does not depend on it")


def _example_inputs(args: argparse.Namespace) -> None:
    from .examples import example_files

    if args.qrels or args.runs:
        raise RagReportError("--example takes no QRELS or RUN arguments")
    files = example_files()
    args.qrels = str(files.qrels)
    args.runs = [str(p) for p in files.runs]
    args.queries = getattr(args, "queries", None) or str(files.queries)
    args.docs = getattr(args, "docs", None) or str(files.docs)


def _eval_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "k_max": args.k_max,
        "complete": args.complete,
        "max_depth": args.max_depth,
        "rel_level": args.rel_level,
        "order": args.order,
        "no_relevant": args.no_relevant,
        "duplicates": "first" if args.keep_first_duplicate else "error",
    }


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .engine import evaluate
    from .measures import TREC_DEFAULT_MEASURES
    from .textout import format_json, format_table, format_trec

    if args.example:
        _example_inputs(args)
        args.runs = args.runs[0]
    if not args.qrels or not args.runs:
        raise RagReportError("evaluate needs QRELS and RUN (or --example)")
    _skip_pandas_interop()
    measures = args.measures
    if measures is None and args.format == "trec":
        measures = list(TREC_DEFAULT_MEASURES)
    if args.stream:
        return _stream_evaluate(args, measures)
    result = evaluate(args.qrels, args.runs, measures, **_eval_kwargs(args))
    if args.format == "trec":
        out = format_trec(result, per_query=args.per_query)
    elif args.format == "json":
        out = format_json(result, per_query=args.per_query)
    else:
        out = format_table(result)
        if args.per_query:
            out += "\n" + _per_query_table(result)
    sys.stdout.write(out)
    return EXIT_OK


def _stream_evaluate(args: argparse.Namespace, measures: Any) -> int:
    import json

    from .stream import evaluate_stream

    if args.per_query:
        raise RagReportError("--stream prints means only; drop -q")
    res = evaluate_stream(args.qrels, args.runs, measures, **_eval_kwargs(args))
    if args.format == "json":
        out = json.dumps({"schema": "ragreport.evaluate/1", "run": res.run_name,
                          "queries": res.n_queries, "k_max": res.k_max, "means": res.means(),
                          "counts": res.counts}, indent=2, ensure_ascii=False) + "\n"
    elif args.format == "trec":
        from .textout import format_trec

        out = format_trec(res)
    else:
        width = max(len(str(m)) for m in res.measures)
        out = "".join(f"{m!s:<{width}}  {res.mean(m):.4f}\n" for m in res.measures)
        out += f"queries evaluated: {res.n_queries}; " + "; ".join(
            f"{k.replace('_', ' ')}: {v}" for k, v in res.counts.items() if k != "evaluated")
        out += "\n"
    sys.stdout.write(out)
    return EXIT_OK


def _per_query_table(result: Any) -> str:
    names = [str(m) for m in result.measures]
    cols = [result.values(m) for m in result.measures]
    width = max([len("query"), *(len(q) for q in result.query_ids)])
    head = f"{'query':<{width}}  " + "  ".join(f"{n:>9}" for n in names)
    rows = [head]
    for i, q in enumerate(result.query_ids):
        rows.append(f"{q:<{width}}  " + "  ".join(f"{float(c[i]):>9.4f}" for c in cols))
    return "\n".join(rows) + "\n"


def _run_names(args: argparse.Namespace, runs: list[Any]) -> None:
    """Give every run a distinct name: --name, else TREC tag, else the file name."""
    from pathlib import Path

    names = args.names or []
    if len(names) > len(runs):
        raise RagReportError(f"{len(names)} --name given for {len(runs)} run(s)")
    for i, name in enumerate(names):
        runs[i] = runs[i].renamed(name)
    current = [r.name for r in runs]
    for i, r in enumerate(runs):
        if i >= len(names) and current.count(r.name) > 1:
            stem = Path(r.source).name.split(".")[0]
            runs[i] = r.renamed(stem if [Path(x.source).name.split(".")[0]
                                         for x in runs].count(stem) == 1 else f"{stem}-{i + 1}")
    final = [r.name for r in runs]
    if len(set(final)) != len(final):
        raise RagReportError(f"run names must be distinct, got {final}; use --name")


#: The matplotlib modules the HTML report's plots use.
_MATPLOTLIB = ("matplotlib.figure", "matplotlib.backends.backend_svg", "matplotlib.ticker")
#: What the worker processes import once, before their first task (see ragreport.parallel).
_PLOT_PRELOAD = ("ragreport.report.plots", "ragreport.report.model", "ragreport.stats",
                 *_MATPLOTLIB)


def _import_plotting() -> None:
    """Import what the HTML report's plots need (run in a thread while the runs are parsed).

    Not a daemon thread: an interpreter that exits early (bad input) waits for the import to
    finish instead of finalizing under it.
    """
    import contextlib
    import importlib

    with contextlib.suppress(Exception):  # the real import later reports any problem
        for name in _MATPLOTLIB:
            importlib.import_module(name)


def _wants_html(args: argparse.Namespace) -> bool:
    # report writes HTML by default; check writes only what it is asked for
    return bool(args.html or (args.command == "report" and not (args.markdown or args.json)))


def _workers(args: argparse.Namespace) -> Any:
    """The worker processes of one report (not started yet: see ``_report_from``)."""
    from .parallel import Workers, default_jobs

    jobs = args.jobs if args.jobs is not None else default_jobs()
    if not _wants_html(args):
        return Workers(jobs, preload=("ragreport.stats",))
    from .report.plots import warm_up

    return Workers(jobs, preload=_PLOT_PRELOAD, warm_up=warm_up)


def _build_report(args: argparse.Namespace, workers: Any) -> Any:
    from concurrent.futures import ThreadPoolExecutor

    if args.example:
        _example_inputs(args)
    if not args.qrels or not args.runs:
        raise RagReportError(f"{args.command} needs QRELS and at least one RUN (or --example)")
    if args.worst < 0:
        raise RagReportError(f"--worst must be >= 0, got {args.worst}")
    hashing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragreport-hash")
    try:
        return _report_from(args, hashing, workers)
    finally:
        hashing.shutdown(wait=False, cancel_futures=True)


def _report_from(args: argparse.Namespace, hashing: Any, workers: Any) -> Any:
    """Read, evaluate and build the report; ``hashing`` hashes the input files meanwhile.

    The worker processes start once the runs are read (a bad file is reported without waiting
    for them): they import matplotlib on the second core while this one evaluates.
    """
    import shlex
    import threading

    from .engine import evaluate
    from .io import load_docs, load_qrels, load_queries, load_run
    from .report import InputFile, build_report
    from .targets import load_targets

    def shown_path(path: str) -> str | None:
        # the embedded example's files are shown relative to the package, not this machine
        from pathlib import Path

        from .examples import EXAMPLE_DIR

        p = Path(path).resolve()
        if args.example and p.parent == EXAMPLE_DIR:
            return f"ragreport/examples/pydoc/{p.name}"
        return None

    roles = [("qrels", args.qrels), *(("run", p) for p in args.runs),
             *((role, path) for role, path in (("queries", args.queries), ("docs", args.docs),
                                               ("targets", args.targets)) if path)]
    hashes = [hashing.submit(InputFile.from_path, role, path, shown_path(path))
              for role, path in roles]  # hashlib releases the GIL: overlaps the evaluation
    _skip_pandas_interop()
    targets = load_targets(args.targets)
    qrels = load_qrels(args.qrels)
    if _wants_html(args) and workers.jobs == 1:
        # no worker process draws the plots: import matplotlib here while the runs are
        # parsed (pyarrow's reader runs without the GIL meanwhile)
        threading.Thread(target=_import_plotting, name="ragreport-import").start()
    runs = [load_run(p) for p in args.runs]
    workers.start()  # after the inputs are read: a bad file is reported without waiting
    _run_names(args, runs)
    measures = args.measures
    if measures is not None:
        from .measures import normalize_measures

        measures = normalize_measures(measures)
    k_max = args.k_max
    wanted = [*(measures or []), *(t.measure for t in targets)]
    if k_max is None:
        k_max = max([20, *(m.cutoff for m in wanted if m.cutoff)])
    kwargs = {**_eval_kwargs(args), "k_max": k_max}
    results = [evaluate(qrels, r, measures, **kwargs) for r in runs]
    inputs = [h.result() for h in hashes]
    argv = getattr(args, "argv", None) or []
    return build_report(
        results, targets, baseline=args.baseline,
        queries=load_queries(args.queries) if args.queries else None,
        docs=load_docs(args.docs) if args.docs else None,
        title=args.title, generated_at=args.generated_at,
        command="ragreport " + shlex.join(argv), inputs=inputs,
        worst_measure=args.worst_measure, worst_n=args.worst, per_query=args.per_query,
        stats=not args.no_stats, ci_level=args.ci_level, resamples=args.resamples,
        seed=args.seed, alpha=args.alpha, max_drop=args.max_drop, workers=workers,
    )


def _write_outputs(args: argparse.Namespace, report: Any, workers: Any) -> None:
    written = report.save(html=args.html, markdown=args.markdown, json=args.json,
                          template_dir=args.template_dir, workers=workers)
    for path in written:
        sys.stderr.write(f"wrote {path}\n")


def _cmd_report(args: argparse.Namespace) -> int:
    from .report.terminal import render_terminal

    with _workers(args) as workers:
        report = _build_report(args, workers)
        if not (args.html or args.markdown or args.json):
            args.html = "ragreport-report.html"
        _write_outputs(args, report, workers)
    sys.stdout.write(render_terminal(report))
    return EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    from .report.terminal import render_failures, render_terminal

    with _workers(args) as workers:
        report = _build_report(args, workers)
        _write_outputs(args, report, workers)
    sys.stdout.write(render_terminal(report))
    if not report.all_passed:
        sys.stdout.write("\n" + render_failures(report))
        return EXIT_TARGET_FAILED
    sys.stdout.write("\nall targets passed\n")
    return EXIT_OK


def _cmd_notebook(args: argparse.Namespace) -> int:
    from .notebook import write_analysis_notebook

    if args.example and (args.qrels or args.runs):
        raise RagReportError("--example takes no QRELS or RUN arguments")
    if not args.example and (not args.qrels or not args.runs):
        raise RagReportError("notebook needs QRELS and at least one RUN (or --example)")
    written = write_analysis_notebook(
        None if args.example else args.qrels, [] if args.example else args.runs,
        args.output, html_path=args.html, queries=args.queries, docs=args.docs,
        names=args.names, example=args.example)
    for path in written:
        sys.stderr.write(f"wrote {path}\n")
    return EXIT_OK


_COMMANDS = {"evaluate": _cmd_evaluate, "report": _cmd_report, "check": _cmd_check}
_COMMANDS["notebook"] = _cmd_notebook


def run() -> int:
    """Entry point of the ``ragreport`` command and ``python -m ragreport``: :func:`main`,
    in a process of its own."""
    global _OWN_PROCESS
    _OWN_PROCESS = True
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return _COMMANDS[args.command](args)
    except RagReportError as exc:
        sys.stderr.write(f"ragreport: error: {exc}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("ragreport: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
