"""The ``ragreport`` command's argument parser: its commands, options and their bounds.

Every numeric option is parsed by a type that refuses ``nan``, ``inf``, ``1_000``, ``0x10``
and non-ASCII digits and says what it received; a usage error is one line on stderr and
:data:`EXIT_BAD_INPUT`. The exit codes live here so that the parser and :mod:`ragreport.cli.app`
share them, and so do the two helpers of the terminal (:func:`escape_undecodable`,
:func:`write_stdout`); :mod:`ragreport.cli.app` runs the commands.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from typing import Any

from .._version import __version__
from ..errors import RagReportError
from ..settings import MAX_RESAMPLES

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TARGET_FAILED",
           "EXIT_TERMINATED", "MAX_RESAMPLES", "build_parser", "escape_undecodable", "one_line",
           "write_stdout"]

#: Done (for ``check``: every check passed).
EXIT_OK = 0
#: ``check`` only: a target or a drop check failed (never an error).
EXIT_TARGET_FAILED = 1
#: Anything else went wrong: bad input or option, unreadable file, I/O error, internal error.
EXIT_BAD_INPUT = 2
#: Interrupted (Ctrl-C, SIGINT): 128 + 2.
EXIT_INTERRUPTED = 130
#: Terminated (SIGTERM): 128 + 15.
EXIT_TERMINATED = 143

#: Upper bounds of the numeric options (so memory and time stay bounded by the input).
MAX_INT = 2**31 - 1
MAX_SEED = 2**63 - 1
MAX_GRADE = 2**53




class _Once(argparse.Action):
    """An option that takes one value: given twice, it is refused (never the last kept)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            raise argparse.ArgumentError(self, "given twice: evaluate reads one run, so it "
                                               "takes one name")
        setattr(namespace, self.dest, values)

def escape_undecodable(text: str) -> str:
    """Command-line text with undecodable bytes shown as ``\\xff``
    (:func:`ragreport.fileio.shown_path`, imported when needed, so that the command starts
    without :mod:`tempfile`)."""
    from ..fileio import shown_path

    return shown_path(text)


def one_line(text: str) -> str:
    """``text`` on one line: line breaks become spaces, control characters escaped, never a
    CI workflow command (:func:`ragreport.textout.terminal_safe`)."""
    from ..textout import terminal_safe

    return terminal_safe(" ".join(escape_undecodable(text).splitlines()))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line on stderr, exit 2
        command = self.prog.split(" ", 1)
        helping = f"see '{self.prog} --help'"
        text = f"{command[1]}: {message}" if len(command) > 1 else message
        self.exit(EXIT_BAD_INPUT, f"ragreport: error: {one_line(text)} ({helping})\n")


_INT = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _integer_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number (ASCII digits) within ``[low, high]``."""

    def parse(text: str) -> int:
        if not _INT.fullmatch(text.strip()) or len(text) > 40:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"must be >= {low}, got {value}" if value < low else
                f"must be at most {high}, got {value}")
        return value

    return parse


def _number_in(low: float, high: float, *, low_open: bool = False, high_open: bool = False
               ) -> Callable[[str], float]:
    """An argparse type: a finite decimal number within the given bounds (nan/inf refused)."""
    lo_text = f"> {low:g}" if low_open else f">= {low:g}"
    hi_text = f"< {high:g}" if high_open else f"<= {high:g}"

    def parse(text: str) -> float:
        if not _DECIMAL.fullmatch(text.strip()):
            raise argparse.ArgumentTypeError(f"expected a decimal number, got {text!r}")
        value = float(text)
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if value < low or (low_open and value == low) or value > high or (
                high_open and value == high):
            raise argparse.ArgumentTypeError(f"must be {lo_text} and {hi_text}, got {text}")
        return value

    return parse


def _max_jobs() -> int:
    from ..parallel import max_jobs

    return max_jobs()


def _jobs(text: str) -> int:
    return _integer_in(1, _max_jobs())(text)


_positive = _integer_in(1, MAX_INT)
#: A grade an unjudged document is given when read as relevant (``--unjudged-grade``).
_grade = _number_in(0.0, 1e12, low_open=True)
#: The rules choosing one judgment per pair (:data:`ragreport.io.judgments.JUDGMENT_RULES`).
JUDGMENT_RULES = ("human-first", "latest")


#: The sections of a command's --help, in order (a section with no option is not shown).
GROUPS = ("inputs", "measures and conventions", "targets and gates", "statistics", "outputs",
          "baseline report", "tracking")


def _groups(p: argparse.ArgumentParser) -> dict[str, Any]:
    """The titled option sections of a command (argparse argument groups)."""
    return {title: p.add_argument_group(title) for title in GROUPS}


def _add_inputs(p: argparse.ArgumentParser, many_runs: bool,
                groups: dict[str, Any] | None = None) -> dict[str, Any]:
    """The inputs and the evaluation's measures and conventions; returns the sections."""
    g = groups if groups is not None else _groups(p)
    i = g["inputs"]
    i.add_argument("qrels", nargs="?", metavar="QRELS",
                   help="qrels file (TREC, BEIR TSV, JSONL or Parquet; .gz ok)")
    i.add_argument("runs", nargs="*" if many_runs else "?", metavar="RUN",
                   help=("run files" if many_runs else "run file")
                   + " (TREC, JSONL or Parquet; .gz ok)")
    i.add_argument("--columns", default=None, metavar="MAP",
                   help="the columns of Parquet inputs, e.g. qid=query-id,docid=corpus-id,"
                        "score=score (relevance= or rel= for the qrels' grades); default: "
                        "found from the common layouts (TREC, MTEB/BEIR, ir_measures)")
    i.add_argument("--example", action="store_true",
                   help="use the embedded example (Python docs passages, BM25 and TF-IDF runs)")
    c = g["measures and conventions"]
    c.add_argument("-m", "--measure", action="append", default=None, dest="measures",
                   metavar="MEASURES",
                   help="measure(s), repeatable; e.g. nDCG@10, 'P@5', mrr, P.5,10 (trec_eval)")
    c.add_argument("--k-max", type=_positive, default=None, metavar="K",
                   help="largest K of the curves")
    c.add_argument("-c", "--complete", action="store_true",
                   help="qrels queries missing from the run count as 0 (trec_eval -c)")
    c.add_argument("-M", "--max-depth", type=_integer_in(1, 2**62), default=None,
                   help="only the first N results per query count (trec_eval -M)")
    c.add_argument("-l", "--rel-level", type=_integer_in(-MAX_GRADE, MAX_GRADE), default=1,
                   help="minimum grade that counts as relevant (trec_eval -l; default 1)")
    c.add_argument("--order", choices=("score", "given"), default=None,
                   help="score: by score, ties by doc id descending (trec_eval; the default, "
                        "but --compat llamaindex: given); given: as listed")
    c.add_argument("--ties", choices=("trec_eval", "average"), default=None,
                   help="trec_eval: tied scores in trec_eval's order (default); average: each "
                        "value is its expected value over all orders of the tied scores "
                        "(McSherry & Najork 2008); also 'ties = \"average\"' in the targets "
                        "file")
    _add_compat(c)
    c.add_argument("--no-relevant", choices=("zero", "skip", "raise"), default="zero",
                   help="queries without a relevant document: score 0 (default), skip, or error")
    c.add_argument("--judgment-rule", choices=JUDGMENT_RULES, default=JUDGMENT_RULES[0],
                   help="qrels that say who judged (a source column or field): the judgment "
                        "used for a pair judged more than once: the latest human one, else "
                        "the latest (human-first, the default), or the latest (latest)")
    c.add_argument("--keep-first-duplicate", action="store_true",
                   help="keep the first occurrence of a document repeated in a query "
                        "(default: error)")
    c.add_argument("--doc-map", default=None, metavar="FILE",
                   help="chunk id -> document id (TSV chunk_id<TAB>doc_id or JSONL): evaluate "
                        "at chunk and at document level (a document's rank is its best "
                        "chunk's)")
    c.add_argument("--doc-map-unmapped", choices=("error", "own"), default=None,
                   help="an id missing from --doc-map: error (default) or a document of its "
                        "own")
    _add_common(p, c, i)
    return g


def _add_compat(p: Any) -> None:
    """``--compat``, ``--ignore-identical-ids`` and ``--score-precision``
    (:mod:`ragreport.compat`)."""
    from ..compat import COMPAT_NAMES, SCORE_PRECISIONS

    p.add_argument("--compat", choices=COMPAT_NAMES, default=None,
                   help="a peer tool's conventions in one word: its measures (when -m is not "
                        "given), order, identical-id rule, reading of grades and rounding; "
                        "options given beside it win, and the report says so")
    p.add_argument("--ignore-identical-ids", action=argparse.BooleanOptionalAction,
                   default=None,
                   help="drop a retrieved document whose id equals its query's id (BEIR, "
                        "MTEB); default: the --compat preset's (beir: on), else off")
    p.add_argument("--score-precision", choices=SCORE_PRECISIONS, default=None,
                   help="compare scores as 64-bit doubles (trec_eval 10) or as 32-bit floats "
                        "(trec_eval 9, pytrec_eval: scores equal in float32 tie); default: "
                        "the --compat preset's (beir, mteb: float32), else float64")


def _add_common(p: argparse.ArgumentParser, conventions: Any = None, inputs: Any = None
                ) -> None:
    """Options every command has: ``--fractional-grades`` (in ``conventions``, a section of
    ``p``, when given), ``--config`` (in ``inputs``) and ``--debug``."""
    (conventions if conventions is not None else p).add_argument(
                   "--fractional-grades", action="store_true",
                   help="keep fractional grades as gains (default: grades are read as "
                        "trec_eval reads them, truncated to whole numbers)")
    (inputs if inputs is not None else p).add_argument(
                   "--config", default=None, metavar="FILE",
                   help="configuration file: every long option as a key (k_max = 20); "
                        "default: [tool.ragreport] in ./pyproject.toml, else ./ragreport.toml; "
                        "options given here win ('ragreport config' shows each value's source)")
    _add_debug(p)


def _add_debug(p: argparse.ArgumentParser) -> None:
    # SUPPRESS: a command's parser leaves the global --debug alone when not given again
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="on an error, also print the traceback")


def _usage(command: str, runs: str) -> str:
    return (f"ragreport {command} [options] QRELS {runs}\n"
            f"       ragreport {command} [options] --example"
            + (f"\n       ragreport {command} [options] --per-query-in PATH"
               if command != "evaluate" else ""))


#: Each command's usage lines: QRELS and RUN are required, unless --example (or
#: --per-query-in) stands for them.
_USAGE = {"evaluate": _usage("evaluate", "RUN"), "report": _usage("report", "RUN [RUN ...]"),
          "check": _usage("check", "RUN [RUN ...]"),
          "label-queue": "ragreport label-queue [options] QRELS RUN [RUN ...] -o PATH\n"
                         "       ragreport label-queue [options] --example -o PATH",
          "merge-labels": "ragreport merge-labels QRELS LABELS [LABELS ...] -o PATH [options]"}

#: Each command's examples, and what it writes.
_EPILOG = {
    "evaluate": """examples:
  ragreport evaluate qrels.txt run.txt -m nDCG@10 -m R@5
  ragreport evaluate qrels.txt run.txt --format trec     # trec_eval's layout
  ragreport evaluate qrels.txt big.run --stream          # a run larger than memory

writes: nothing; prints the measures (--per-query-out also writes them as Parquet).""",
    "report": """examples:
  ragreport report qrels.txt bm25.txt dense.txt --html report.html
  ragreport report --example --markdown summary.md --json report.json

writes: the files --html, --markdown and --json name; with none of them,
ragreport-report.html in the working folder. Prints a summary.""",
    "check": """examples:
  ragreport check qrels.txt run.txt --targets ragreport.toml
  ragreport check qrels.txt main.txt pr.txt --max-drop 0.02 --markdown comment.md

writes: only the files --html, --markdown and --json name (nothing by default); prints
each check. Exit 0: every target and gate passed; 1: one failed; 2: an error.""",
    "label-queue": """examples:
  ragreport label-queue qrels.txt run.txt -o queue.jsonl --budget 200
  ragreport label-queue qrels.txt a.txt b.txt --queries q.tsv --docs docs.jsonl \\
      -o tasks.json --max-per-query 3                    # Label Studio's import format

writes: the file -o names (JSONL, CSV or Label Studio JSON, by its suffix or --format):
the unjudged (query, document) pairs whose judgment moves the target measures' means the
most, best first, with the query text and the passage. Prints how many were written.""",
    "merge-labels": """examples:
  ragreport merge-labels qrels.txt judged.csv -o qrels-merged.tsv
  ragreport merge-labels qrels.tsv export.json -o qrels-merged.tsv --on-conflict keep

writes: the file -o names (.tsv with a source column, .jsonl or .parquet): every judgment
of QRELS and of LABELS with its source; nothing is replaced. Prints what was added.""",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = _Parser(prog="ragreport",
                     description="Retrieval metrics (trec_eval-exact) for every K, with reports.")
    parser.add_argument("--version", action="version", version=f"ragreport {__version__}")
    parser.add_argument("--debug", action="store_true", default=False,
                        help="on an error, also print the traceback")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    ev = sub.add_parser("evaluate", help="compute measures for one run",
                        description="Compute measures for one run against qrels.",
                        usage=_USAGE["evaluate"], epilog=_EPILOG["evaluate"],
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    out = _add_inputs(ev, many_runs=False)["outputs"]
    out.add_argument("-q", "--per-query", action="store_true", help="add per-query values")
    out.add_argument("--stream", action="store_true",
                    help="read the run in blocks, in bounded memory (run grouped by query)")
    out.add_argument("--format", choices=("table", "json", "trec"), default="table",
                    help="table (default), json (schema ragreport.evaluate/1) or trec "
                         "(trec_eval's exact layout)")
    out.add_argument("--per-query-out", default=None, metavar="FILE.parquet",
                    help="also write every per-query value, curve and count as Parquet "
                         "(schema ragreport.per_query/1): shards that ragreport report / "
                         "check --per-query-in merge")
    out.add_argument("--name", default=None, metavar="NAME", action=_Once,
                    help="run name (default: TREC tag, else file name)")
    for name, helptext in (("report", "write the HTML / Markdown / JSON report"),
                           ("check", "check targets; exit 1 when one fails (CI gate)")):
        _add_report_options(_add_inputs(_command(sub, name, helptext), many_runs=True))
    _add_label_queue_parser(sub)
    _add_merge_labels_parser(sub)
    _add_notebook_parser(sub)
    _add_config_parser(sub)
    return parser


def _command(sub: Any, name: str, helptext: str) -> argparse.ArgumentParser:
    """A command's parser: its help line (also its description), usage and examples."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=helptext, description=helptext[0].upper() + helptext[1:],
        usage=_USAGE[name], epilog=_EPILOG[name],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser


def _add_merge_labels_parser(sub: Any) -> None:
    ml = _command(sub, "merge-labels",
                  "merge new judgments (a judged label queue) into the qrels, with their source")
    ml.add_argument("qrels", nargs="?", metavar="QRELS",
                    help="the qrels today (TREC, BEIR TSV, JSONL or Parquet)")
    ml.add_argument("labels", nargs="*", metavar="LABELS",
                    help="new judgments: a judged label queue (.jsonl or .csv with a grade "
                         "column) or a Label Studio JSON export (.json)")
    ml.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="where to write the merged qrels (.tsv, .jsonl or .parquet); required")
    ml.add_argument("--source", default="human", dest="label_source", metavar="LABEL",
                    help="the source of the new judgments without one (default: human)")
    ml.add_argument("--existing-source", default="qrels", metavar="LABEL",
                    help="the source of today's judgments when the qrels name none "
                         "(default: qrels)")
    ml.add_argument("--on-conflict", choices=("error", "keep"), default="error",
                    help="a new judgment that disagrees with the grade used today: an error "
                         "(default) or kept beside it, the rule choosing (keep)")
    ml.add_argument("--judgment-rule", choices=JUDGMENT_RULES, default=JUDGMENT_RULES[0],
                    help="the judgment used for a pair judged more than once (default: the "
                         "latest human one, else the latest)")
    _add_common(ml)


def _add_label_queue_parser(sub: Any) -> None:
    lq = _command(sub, "label-queue",
                  "write the unjudged pairs to judge next (JSONL, CSV or Label Studio)")
    g = _add_inputs(lq, many_runs=True)
    i = g["inputs"]
    i.add_argument("--queries", default=None, metavar="FILE",
                   help="query texts (TSV, JSONL or Parquet), written beside each pair")
    i.add_argument("--docs", default=None, metavar="FILE",
                   help="document texts (TSV, JSONL or Parquet), written beside each pair")
    i.add_argument("--name", action="append", default=None, dest="names", metavar="NAME",
                   help="run name, repeatable, in the order of the runs")
    t = g["targets and gates"]
    t.add_argument("--targets", default=None, metavar="FILE",
                   help="TOML targets file: its measures are the gated ones (default as for "
                        "report; -m overrides)")
    t.add_argument("--budget", type=_positive, default=200, metavar="N",
                   help="at most N pairs (default 200)")
    t.add_argument("--max-per-query", type=_positive, default=None, metavar="N",
                   help="at most N pairs per query")
    t.add_argument("--max-rank", type=_positive, default=None, metavar="N",
                   help="look for unjudged documents down to rank N (default: the measures' "
                        "largest cutoff; 20 when one has none, such as RR or AP)")
    t.add_argument("--unjudged-grade", type=_grade,
                   default=None, metavar="G",
                   help="the grade a judged-relevant document is assumed to get (default: "
                        "the largest grade in the qrels)")
    o = g["outputs"]
    o.add_argument("-o", "--output", default=None, metavar="PATH",
                   help="where to write the queue ('-': standard output, as JSONL); required")
    o.add_argument("--format", default=None, dest="queue_format",
                   choices=("jsonl", "csv", "label-studio"),
                   help="the file's format (default: by its suffix: .jsonl, .csv, .json)")


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command of :func:`build_parser`'s parser, by name (the docs'
    reference and the tests read them)."""
    for action in parser._actions:  # argparse keeps its subcommands only there
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _add_notebook_parser(sub: Any) -> None:
    nb = sub.add_parser("notebook", help="write and run an analysis notebook (and its HTML)",
                        description="Write an analysis notebook (loading code, summary, "
                                    "metric-vs-K plots, worst queries), execute it, and "
                                    "optionally export it to HTML that reads offline.")
    nb.add_argument("qrels", nargs="?", help="qrels file (TREC, BEIR TSV or JSONL; .gz ok)")
    nb.add_argument("runs", nargs="*", metavar="RUN", help="run files (TREC or JSONL)")
    nb.add_argument("--example", action="store_true", help="use the embedded example")
    nb.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="where to write the executed notebook (.ipynb); required, here or "
                         "as output = in the configuration file")
    nb.add_argument("--html", default=None, metavar="PATH",
                    help="also export the executed notebook to this HTML file")
    nb.add_argument("--queries", default=None, metavar="FILE",
                    help="query texts (TSV, JSONL or Parquet)")
    nb.add_argument("--docs", default=None, metavar="FILE",
                    help="document texts (TSV, JSONL or Parquet)")
    nb.add_argument("--name", action="append", default=None, dest="names", metavar="NAME",
                    help="run name, repeatable, in the order of the runs")
    nb.add_argument("-m", "--measure", action="append", default=None, dest="measures",
                    metavar="MEASURES", help="measure(s) of the summary, repeatable")
    nb.add_argument("--worst-measure", default=None, metavar="MEASURE",
                    help="measure ranking the worst queries (default nDCG@10)")
    _add_common(nb)


def _add_config_parser(sub: Any) -> None:
    cf = sub.add_parser(
        "config", help="print the effective configuration and where each value comes from",
        usage="ragreport config [COMMAND [OPTIONS ...]]",
        description="Print every option of COMMAND (default: report) as a key of the "
                    "configuration file, with the value it takes and where that value comes "
                    "from: the command line, the --targets file, the configuration file "
                    "([tool.ragreport] in ./pyproject.toml, else ./ragreport.toml, else "
                    "--config FILE) or the default.",
        epilog="examples:\n  ragreport config\n  ragreport config check --k-max 20\n"
               "  ragreport config evaluate --config eval/ragreport.toml\n\n"
               "writes: nothing; prints the configuration as TOML.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    cf.add_argument("config_for", nargs="?", default="report", metavar="COMMAND",
                    choices=("evaluate", "report", "check", "label-queue", "merge-labels",
                             "notebook"),
                    help="the command whose configuration is shown (default: report)")
    cf.add_argument("config_args", nargs=argparse.REMAINDER, metavar="OPTIONS",
                    help="the command's options, as they would be given to it")


def _add_report_options(g: dict[str, Any]) -> None:
    """The options of report and check, each in its section of --help."""
    _report_inputs(g["inputs"])
    _report_gates(g["targets and gates"])
    _report_outputs(g["outputs"])
    _report_statistics(g["statistics"])
    _report_baseline(g["baseline report"])
    _report_tracking(g["tracking"])


def _report_inputs(p: Any) -> None:
    """--help section: the inputs beside QRELS and RUN."""
    p.add_argument("--per-query-in", action="append", default=None, metavar="PATH",
                   help="read per-query results (ragreport evaluate --per-query-out, or the "
                        "engines' shards) instead of QRELS and RUN: a Parquet file, a "
                        "directory of them or a glob ('shards/*.parquet'); repeatable")
    p.add_argument("--name", action="append", default=None, dest="names", metavar="NAME",
                   help="run name, repeatable, in the order of the runs (default: TREC tag, "
                        "else file name)")
    p.add_argument("--queries", default=None, metavar="FILE",
                   help="query texts (TSV, JSONL or Parquet)")
    p.add_argument("--docs", default=None, metavar="FILE",
                   help="document texts (TSV, JSONL or Parquet)")
    p.add_argument("--slices", default=None, metavar="FILE",
                   help="query slices: query id -> slice names (TSV 'qid<TAB>tag[,tag...]', "
                        "JSON {qid: [tags]}, JSONL, CSV or Parquet with query_id and slices "
                        "columns); the report gives every slice its numbers, and "
                        "[targets.slices.NAME] in the targets file its targets")
    p.add_argument("--slices-column", default=None, metavar="NAME",
                   help="the slices are column NAME of --slices FILE, or of --queries FILE "
                        "when --slices is not given (JSONL, CSV or Parquet)")


def _report_gates(p: Any) -> None:
    """--help section: the targets and the drop gate."""
    p.add_argument("--targets", default=None, metavar="FILE",
                   help="TOML targets file (default: [tool.ragreport.targets] in ./pyproject.toml,"
                        " else ./ragreport.toml, else the seed tutorial's typical targets)")
    p.add_argument("--baseline", default=None, metavar="NAME",
                   help="run the others are compared with (default: the first)")
    p.add_argument("--max-drop", type=_number_in(0.0, 1.0, high_open=True), default=None,
                   metavar="D",
                   help="check that every run is at most D below the baseline (0 <= D < 1) "
                        "on each target measure: fail when the delta's interval lies below "
                        "-D, pass when above, inconclusive otherwise")
    p.add_argument("--on-inconclusive", choices=("fail", "pass"), default="fail",
                   help="what an inconclusive --max-drop check (or min target on the "
                        "interval) does: fail (the default: a run must show it) or pass (fail "
                        "only on evidence against it)")
    p.add_argument("--target-level", choices=("chunk", "document"), default="chunk",
                   help="with --doc-map: check the targets (and --max-drop) at chunk level "
                        "(default) or at document level")
    p.add_argument("--unjudged", choices=("warn", "fail", "off"), default="warn",
                   help="a target whose decision differs between the unjudged documents read "
                        "as not relevant (trec_eval) and as relevant: said (warn, the default) "
                        "or, when it passed, a failure (fail); off: not looked at (saves one "
                        "evaluation per run)")
    p.add_argument("--unjudged-grade", type=_grade,
                   default=None, metavar="G",
                   help="the grade an unjudged document gets when read as relevant (default: "
                        "the largest grade in the qrels; at least the relevance level)")


def _report_outputs(p: Any) -> None:
    """--help section: the files written and what they show."""
    p.add_argument("--html", default=None, metavar="PATH",
                   help="write the HTML report here ('-': standard output)")
    p.add_argument("--markdown", default=None, metavar="PATH",
                   help="write Markdown here ('-': standard output)")
    p.add_argument("--json", default=None, metavar="PATH",
                   help="write JSON here ('-': standard output)")
    p.add_argument("--per-query", action="store_true", help="put per-query values in the JSON")
    p.add_argument("--title", default="Retrieval evaluation", help="report title")
    p.add_argument("--template-dir", default=None, metavar="DIR",
                   help="use your own Jinja2 templates (report.html.j2)")
    p.add_argument("--generated-at", default=None, metavar="ISO",
                   help="time shown in the report (default: $SOURCE_DATE_EPOCH, else now)")
    p.add_argument("--worst-measure", default=None, metavar="MEASURE",
                   help="measure ranking the worst queries (default: the first target's)")
    p.add_argument("--worst", type=_integer_in(0, MAX_INT), default=20, metavar="N",
                   help="worst queries detailed per run (default 20)")
    p.add_argument("--no-chart", action="store_true",
                   help="leave the Mermaid chart out of the Markdown")


def _report_statistics(p: Any) -> None:
    """--help section: intervals, tests and the worker processes."""
    p.add_argument("--ci-level", type=_number_in(0.0, 1.0, low_open=True, high_open=True),
                   default=0.95, metavar="L",
                   help="confidence level of the bootstrap intervals (default 0.95)")
    p.add_argument("--resamples", type=_integer_in(1, MAX_RESAMPLES), default=10_000,
                   metavar="N",
                   help="bootstrap resamples and randomization-test samples (default 10000)")
    p.add_argument("--seed", type=_integer_in(0, MAX_SEED), default=0,
                   help="random seed (default 0)")
    p.add_argument("--alpha", type=_number_in(0.0, 1.0, low_open=True, high_open=True),
                   default=0.05,
                   help="significance level of the Holm-corrected tests (default 0.05)")
    p.add_argument("--no-stats", action="store_true",
                   help="skip confidence intervals and significance tests")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="processes for the bootstrap and the plots (default: the CPUs, at "
                        "most 4; 1: no worker process). The output does not depend on it")


def _report_baseline(p: Any) -> None:
    """--help section: a stored JSON report as the baseline."""
    p.add_argument("--baseline-report", default=None, metavar="JSON",
                   help="compare with a run of a stored JSON report written with --per-query "
                        "(e.g. main's last run) instead of a baseline run file; --baseline "
                        "names which of its runs (default: its baseline)")
    p.add_argument("--allow-drift", action="store_true",
                   help="with --baseline-report: warn instead of refusing (exit 2) when the "
                        "qrels, the queries, the conventions or the judged share changed")
    p.add_argument("--max-query-drift", type=_number_in(0.0, 1.0), default=None, metavar="S",
                   help="with --baseline-report: largest share of queries added or removed "
                        "(default 0.05)")
    p.add_argument("--min-judged-ratio", type=_number_in(0.0, 1.0), default=None, metavar="R",
                   help="with --baseline-report: Judged@K of a run below R times the "
                        "baseline's is a collapse (default 0.5)")


def _report_tracking(p: Any) -> None:
    """--help section: MLflow and W&B."""
    p.add_argument("--mlflow", action="store_true",
                   help="also log the report into MLflow (MLFLOW_TRACKING_URI; the run "
                        "MLFLOW_RUN_ID names, else a new one); needs ragreport[mlflow]")
    p.add_argument("--mlflow-run", default=None, metavar="ID",
                   help="log into this MLflow run (implies --mlflow)")
    p.add_argument("--wandb", action="store_true",
                   help="also log the report into W&B (WANDB_PROJECT, WANDB_MODE ...: a new "
                        "run, or the one WANDB_RUN_ID names); needs ragreport[wandb]")

def write_stdout(text: str) -> None:
    """Write ``text`` to standard output; undecodable bytes of a name are shown escaped."""
    if sys.stdout is None:
        raise RagReportError("cannot write the output: standard output is closed")
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:
        sys.stdout.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))
