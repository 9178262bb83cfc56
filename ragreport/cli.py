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
from typing import Any

from ._version import __version__
from .cliargs import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TARGET_FAILED,
    EXIT_TERMINATED,
    build_parser,
    escape_undecodable,
    one_line,
)
from .errors import RagReportError
from .present import shown

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TARGET_FAILED",
           "EXIT_TERMINATED", "main", "run"]

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
    kwargs = {
        "k_max": args.k_max,
        "complete": args.complete or None,  # None: the --compat preset's (mteb: on)
        "max_depth": args.max_depth,
        "rel_level": args.rel_level,
        "order": args.order,
        "no_relevant": args.no_relevant,
        "duplicates": "first" if args.keep_first_duplicate else "error",
    }
    for option in ("compat", "ignore_identical_ids"):  # ragreport.compat
        if getattr(args, option, None) is not None:
            kwargs[option] = getattr(args, option)
    if getattr(args, "ties", None) not in (None, "trec_eval"):  # --ties (ragreport.ties)
        kwargs["ties"] = args.ties
    kwargs.update(_fractional(args))
    if getattr(args, "doc_map", None) is not None:  # read once, for every run
        from .docmap import load_doc_map

        kwargs["doc_map"] = load_doc_map(args.doc_map, unmapped=args.doc_map_unmapped)
    return kwargs


def _check_doc_map_options(args: argparse.Namespace) -> None:
    """``--doc-map`` and the options that need it, before any input is read."""
    if args.doc_map is None:
        if args.doc_map_unmapped is not None:
            raise RagReportError("--doc-map-unmapped needs --doc-map")
        if getattr(args, "target_level", "chunk") != "chunk":
            raise RagReportError("--target-level document needs --doc-map")
        return
    if getattr(args, "stream", False):
        raise RagReportError("--doc-map is not supported with --stream (the document level "
                             "needs each query's whole chunk ranking); drop --stream")
    if getattr(args, "format", None) == "trec":
        raise RagReportError("--format trec holds one level only; with --doc-map use "
                             "--format table or json")


def _fractional(args: argparse.Namespace) -> dict[str, Any]:
    """``fractional_grades=True`` for ``--fractional-grades`` (readers, evaluate, notebook)."""
    return {"fractional_grades": True} if getattr(args, "fractional_grades", False) else {}


def _columns(args: argparse.Namespace, path: Any) -> dict[str, Any]:
    """``columns=`` for the reader of ``path`` when it is a Parquet file and ``--columns``
    is given (:func:`_check_columns` has parsed it): the entries naming one of its columns
    (the qrels and a run may name theirs differently; the others are found by name)."""
    from .io.tabular import is_parquet, parquet_columns

    mapping = getattr(args, "columns", None)
    if not mapping or not is_parquet(path):
        return {}
    names = set(parquet_columns(path))
    return {"columns": {k: v for k, v in mapping.items() if v in names}}


def _check_columns(args: argparse.Namespace) -> None:
    """``--columns`` parsed, and refused when no input is a Parquet file or a column it names
    is in none of them; a Parquet run is refused with ``--stream`` (which reads text in
    blocks). After :func:`_materialize`."""
    from .io.tabular import is_parquet, parquet_columns, parse_columns

    runs = _as_list(args.runs)
    if getattr(args, "stream", False) and any(is_parquet(p) for p in runs):
        raise RagReportError("--stream reads text runs in blocks; a Parquet run is read at "
                             "once: drop --stream")
    if getattr(args, "columns", None) is None:
        return
    args.columns = parse_columns(args.columns)
    tables = [p for p in (args.qrels, *runs) if p is not None and is_parquet(p)]
    if not tables:
        raise RagReportError("--columns applies to Parquet inputs, and no QRELS or RUN is a "
                             "Parquet file")
    found = {str(p): parquet_columns(p) for p in tables}
    for key, column in args.columns.items():
        if not any(column in names for names in found.values()):
            shown = "; ".join(f"{escape_undecodable(p)}: {', '.join(map(repr, names))}"
                              for p, names in found.items())
            raise RagReportError(f"--columns {key}={column}: no Parquet input has a column "
                                 f"{column!r} (columns of {shown})")


def _materialize(args: argparse.Namespace, attrs: Sequence[str]) -> None:
    """Read every input that can be read only once (``-``, a FIFO, /dev/stdin) into memory.

    ``-`` (standard input) may stand for one input only.
    """
    from .io.common import materialize

    dashes = [a for a in attrs for v in _as_list(getattr(args, a, None)) if v == "-"]
    if len(dashes) > 1:
        raise RagReportError("standard input ('-') can be read for one input only, got it "
                             f"for {len(dashes)} inputs")
    for a in attrs:
        value = getattr(args, a, None)
        if isinstance(value, list):
            setattr(args, a, [materialize(v) for v in value])
        elif value is not None:
            setattr(args, a, materialize(value))


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .engine import evaluate
    from .measures import TREC_DEFAULT_MEASURES
    from .textout import format_json, format_table, format_trec

    if args.example:
        _example_inputs(args)
        args.runs = args.runs[0]
    if not args.qrels or not args.runs:
        raise RagReportError("evaluate needs QRELS and RUN (or --example)")
    per_query_inputs = _check_per_query_out(args)
    given = (args.qrels, args.runs)  # the names given, before any is read
    _skip_pandas_interop()
    measures = args.measures
    if measures is None and args.format == "trec":
        from .compat import default_measures

        measures = default_measures(args.compat) or list(TREC_DEFAULT_MEASURES)
    _check_doc_map_options(args)
    if args.stream:
        _check_columns(args)
        return _stream_evaluate(args, measures)
    _materialize(args, ("qrels", "runs", "doc_map"))
    _check_columns(args)
    if getattr(args, "columns", None):
        from .io import load_qrels, load_run

        args.qrels = load_qrels(args.qrels, **_fractional(args), **_columns(args, args.qrels))
        args.runs = load_run(args.runs, **_columns(args, args.runs))
    elif args.per_query_out is not None:  # read here: its judgments' fingerprint is written
        from .io import load_qrels

        args.qrels = load_qrels(args.qrels, **_fractional(args))
    result = evaluate(args.qrels, args.runs, measures, **_eval_kwargs(args))
    if args.name is not None:
        result.run_name = escape_undecodable(args.name)
    if args.per_query_out is not None:
        _write_per_query(args, result, per_query_inputs, args.qrels, given)
    if args.format == "trec":
        out = format_trec(result, per_query=args.per_query)
    elif args.format == "json":
        out = format_json(result, per_query=args.per_query)
        if result.document is not None:
            from .textout import evaluate_json, json_text

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
    from .fileio import is_stdout

    if is_stdout(args.per_query_out):
        raise RagReportError("--per-query-out writes Parquet (binary): give a file name, "
                             "not standard output")
    if args.doc_map is not None:
        raise RagReportError("--per-query-out does not work with --doc-map yet")
    from .fileio import check_outputs

    check_outputs([args.per_query_out], paths)
    return paths


def _sha256(path: str) -> str | None:
    import hashlib
    import os

    if not os.path.isfile(path):
        return None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _write_per_query(args: argparse.Namespace, result: Any, inputs: list[str],
                     qrels_read: Any, given: tuple[Any, Any]) -> None:
    """Write the per-query Parquet file (atomically; the qrels' and the run's SHA-256 and the
    judgments' fingerprint in its metadata, :mod:`ragreport.perquery`). ``given``: the
    QRELS and RUN as named on the command line (a file is hashed; an ``irds:`` id states the
    fingerprint of what was read, as ``report`` does; standard input states none)."""
    from . import perquery
    from .analysis.drift import content_sha256, judgments_sha256

    def fingerprint(name: Any, read: Any) -> str | None:
        if not isinstance(name, str) or name == "-":
            return None
        if _is_irds(name):
            return content_sha256(read) if read is not None else None
        return _sha256(name)

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


def _load_stored_baseline(args: argparse.Namespace) -> None:
    """``--baseline-report``: the stored report into ``args.stored_baseline`` (None without
    it), read before any input, so that a bad one is refused before any work."""
    args.stored_baseline = None
    if args.baseline_report is not None:
        from .report.baseline import load_baseline_report

        args.stored_baseline = load_baseline_report(args.baseline_report, args.baseline)


def _irds_input(role: str, path: str, read: Any) -> Any:
    """The report's record of an input given as an ``irds:`` id: no file to hash, the
    fingerprint of what ir_datasets gave."""
    from .analysis.drift import content_sha256
    from .report import InputFile

    return InputFile(role, path, path, content_sha256(read), 0)


def _build(args: argparse.Namespace, results: Any, targets: Any, *, queries: Any, docs: Any,
           inputs: Any, slices: Any, slice_targets: Any, workers: Any,
           qrels_sha256: str | None, judgments_sha256: str | None) -> Any:
    """The report with the command's options, from raw files or per-query results: against
    ``--baseline-report``'s stored run when given (its drift checks first, refused unless
    ``--allow-drift``; the qrels compared by the fingerprints given), without the chart
    with ``--no-chart``."""
    import shlex

    from .report import build_report

    stored = args.stored_baseline
    checks = (_drift_checks(args, results, targets, qrels_sha256, judgments_sha256)
              if stored is not None else [])
    argv = getattr(args, "argv", None) or []
    report = build_report(
        results, targets, baseline=None if stored is not None else args.baseline,
        queries=queries, docs=docs,
        title=args.title, generated_at=args.generated_at,
        command=escape_undecodable("ragreport " + shlex.join(argv)), inputs=inputs,
        worst_measure=args.worst_measure, worst_n=args.worst, per_query=args.per_query,
        stats=not args.no_stats, ci_level=args.ci_level, resamples=args.resamples,
        seed=args.seed, alpha=args.alpha,
        max_drop=None if stored is not None else args.max_drop, workers=workers,
        target_level=args.target_level, slices=slices, slice_targets=slice_targets,
    )
    if stored is not None:
        from .report.baseline import with_stored_baseline

        report = with_stored_baseline(report, results, stored, targets, checks=checks,
                                      allow_drift=args.allow_drift, max_drop=args.max_drop,
                                      slices=slices)
    if args.no_chart:
        from dataclasses import replace

        report = replace(report, chart=False)
    return report


#: The name of the qrels input of a report from per-query results: the fingerprint is the one
#: the shards state, not that of a file read by this command.
_STATED_QRELS = "(qrels stated by the per-query results)"


def _stated(results: Sequence[Any], attr: str) -> str | None:
    """The fingerprint every run of the per-query results states, else None (unknown)."""
    got = {getattr(r, attr, None) for r in results}
    return got.pop() if len(got) == 1 else None


def _report_from_per_query(args: argparse.Namespace, workers: Any) -> Any:
    """The report from per-query results (:mod:`ragreport.perquery`): the same numbers,
    intervals, tests and gates as from the raw files, without the rankings."""

    from . import perquery
    from .measures import normalize_measures
    from .report import InputFile
    from .targets import load_targets

    _materialize(args, ("queries", "docs", "targets", "slices"))
    files = perquery.shard_files(args.per_query_in)
    targets = load_targets(args.targets)
    _merge_settings(args)
    _load_stored_baseline(args)  # a bad stored report: before any reading
    results = perquery.read(files)
    conv = results[0].conventions
    for attr in ("ties", "compat", "ignore_identical_ids"):  # from the targets file
        given = getattr(args, attr, None)
        if given is not None and given != getattr(conv, attr):
            raise RagReportError(f"the targets file sets {attr} = {_toml(given)} but the "
                                 f"per-query results were evaluated with "
                                 f"{_toml(getattr(conv, attr))}")
    names = list(args.names or [])
    if len(names) > len(results):
        raise RagReportError(f"{len(names)} names given for {len(results)} run(s)")
    for r, name in zip(results, names, strict=False):
        r.run_name = name
    measures = normalize_measures(args.measures) if args.measures is not None \
        else list(results[0].measures)
    worst = normalize_measures([args.worst_measure]) if args.worst_measure else []
    queries = None
    docs = None
    if args.queries or args.docs:
        from .io import load_docs, load_queries

        queries = load_queries(args.queries) if args.queries else None
        docs = load_docs(args.docs) if args.docs else None
    slices, slice_targets = _slices(args)
    wanted = list(dict.fromkeys([*measures, *(t.measure for t in targets), *worst,
                                 *(t.measure for ts in slice_targets.values() for t in ts)]))
    for r in results:
        for m in wanted:
            r.values(m)  # a measure the results do not hold: one clear error, before any work
        r.measures = tuple(wanted)
    workers.start()
    inputs = [InputFile.from_path("per_query", f) for f in files]
    qrels_sha256, judgments = (_stated(results, attr) for attr in
                               ("qrels_sha256", "qrels_judgments_sha256"))
    if qrels_sha256 is not None or judgments is not None:
        # the qrels fingerprints the shards state: a report stored from this one is a
        # --baseline-report whose qrels are known (no path: nothing to read or protect)
        inputs.append(InputFile("qrels", _STATED_QRELS, "", qrels_sha256 or "", 0,
                                judgments_sha256=judgments))
    read = {"queries": queries, "docs": docs}
    for role, path in (("queries", args.queries), ("docs", args.docs),
                       ("targets", args.targets), ("slices", args.slices)):
        texts = read.get(role)
        if path and texts is not None and _is_irds(path):  # the fingerprint of what was read
            inputs.append(_irds_input(role, path, texts))
        elif path:
            inputs.append(InputFile.from_path(role, path))
    # --baseline-report: the qrels compared by the fingerprints the shards state; unknown
    # (an engine's shards) is drift, refused unless --allow-drift
    return _build(args, results, targets, queries=queries, docs=docs, inputs=inputs,
                  slices=slices, slice_targets=slice_targets, workers=workers,
                  qrels_sha256=qrels_sha256, judgments_sha256=judgments)


def _stream_evaluate(args: argparse.Namespace, measures: Any) -> int:
    import json
    from dataclasses import asdict

    from .stream import evaluate_stream

    if args.per_query:
        raise RagReportError("--stream prints means only; drop -q")
    if args.qrels == "-" and args.runs == "-":
        raise RagReportError("standard input ('-') can be read for one input only, got it "
                             "for 2 inputs")
    res = evaluate_stream(args.qrels, args.runs, measures, **_eval_kwargs(args))
    if args.format == "json":
        out = json.dumps({"schema": "ragreport.evaluate/1", "run": res.run_name,
                          "queries": res.n_queries, "k_max": res.k_max, "means": res.means(),
                          "counts": res.counts,
                          "conventions": asdict(res.conventions) if res.conventions else None},
                         indent=2, ensure_ascii=False) + "\n"
    elif args.format == "trec":
        from .textout import format_trec

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
    from .textout import terminal_safe

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
    from .textout import terminal_safe

    names = [str(m) for m in result.measures]
    cols = [result.values(m) for m in result.measures]
    ids = [terminal_safe(q) for q in result.query_ids]  # no control character, no ::command
    width = max([len("query"), *(len(q) for q in ids)])
    head = f"{'query':<{width}}  " + "  ".join(f"{n:>9}" for n in names)
    rows = [head]
    for i, q in enumerate(ids):
        rows.append(f"{q:<{width}}  " + "  ".join(f"{shown(float(c[i])):>9}" for c in cols))
    return "\n".join(rows) + "\n"


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
    # report writes HTML by default; check writes only what it is asked for; a tracker
    # receives the HTML report too
    return bool(args.html or (args.command == "report" and not (args.markdown or args.json))
                or _trackers(args))


def _trackers(args: argparse.Namespace) -> list[str]:
    """The trackers ``--mlflow`` / ``--mlflow-run`` / ``--wandb`` ask for."""
    mlflow = getattr(args, "mlflow", False) or getattr(args, "mlflow_run", None) is not None
    return [name for name, on in (("mlflow", mlflow), ("wandb", getattr(args, "wandb", False)))
            if on]


def _check_trackers(args: argparse.Namespace) -> None:
    """Before any work: each tracker's package is installed, a given MLflow run exists."""
    from .report.tracking import check_mlflow, check_wandb

    trackers = _trackers(args)
    if "mlflow" in trackers:
        check_mlflow(args.mlflow_run)
    if "wandb" in trackers:
        check_wandb()


def _workers(args: argparse.Namespace) -> Any:
    """The worker processes of one report (not started yet: see ``_report_from``)."""
    from .parallel import Workers, default_jobs

    jobs = args.jobs if args.jobs is not None else default_jobs()
    if not _wants_html(args):
        return Workers(jobs, preload=("ragreport.stats",))
    if _OWN_PROCESS and "matplotlib" not in sys.modules:
        # the plots are drawn on SVG canvases, whatever the backend: a MPLBACKEND meant for
        # interactive use (or misspelt, which makes ``import matplotlib`` raise, in this
        # process and in the workers' forkserver) is of no use here
        os.environ["MPLBACKEND"] = "agg"
    from .report.plots import warm_up

    return Workers(jobs, preload=_PLOT_PRELOAD, warm_up=warm_up)


def _outputs(args: argparse.Namespace) -> list[str]:
    return [p for p in (args.html, args.markdown, args.json) if p is not None]


def _refuse_per_query_positional(args: argparse.Namespace) -> None:
    """A per-query results file given as QRELS or RUN: say to read it with --per-query-in
    (it was read as qrels or a run, with an error about its columns)."""
    from .perquery import is_per_query

    given = [args.qrels, *(args.runs or [])]
    for path in given:
        if isinstance(path, str) and path != "-" and is_per_query(path):
            raise RagReportError(f"{escape_undecodable(path)} holds per-query results "
                                 "(evaluate --per-query-out): read it with --per-query-in "
                                 "instead of QRELS and RUN")


def _check_options(args: argparse.Namespace) -> None:
    """Everything about the options that can be checked before any input is read."""
    from .report.model import generated_at_from_env

    if getattr(args, "per_query_in", None):  # per-query results (ragreport.perquery)
        _check_per_query_in(args)
    elif args.example:
        _example_inputs(args)
    if not getattr(args, "per_query_in", None):
        _refuse_per_query_positional(args)
    if not getattr(args, "per_query_in", None) and (not args.qrels or not args.runs):
        raise RagReportError(f"{args.command} needs QRELS and at least one RUN (or --example)")
    args.title = escape_undecodable(args.title)
    args.names = [escape_undecodable(n) for n in args.names] if args.names else args.names
    args.generated_at = generated_at_from_env(args.generated_at)  # a bad time: before any work
    _check_doc_map_options(args)
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
    from .fileio import check_outputs

    check_outputs(outs, inputs)  # a missing folder or an input as output: before any work
    if args.template_dir is not None and _wants_html(args):
        from pathlib import Path

        from .report.html import TEMPLATE_NAME

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


def _drift_checks(args: argparse.Namespace, results: Any, targets: Any,
                  qrels_sha256: str | None, judgments_sha256: str | None) -> Any:
    """The drift checks of ``--baseline-report`` (:mod:`ragreport.analysis.drift`), before
    the report is built: refused here (exit 2) unless ``--allow-drift``, then one warning
    line on stderr."""
    from .analysis.drift import drift_text, refusal
    from .measures import parse_measure
    from .report.baseline import drift_checks
    from .textout import terminal_safe

    stored = args.stored_baseline
    wm = (parse_measure(args.worst_measure) if args.worst_measure
          else targets[0].measure if targets else None)
    k = (wm.cutoff if wm is not None else None) or min(r.k_max for r in results)
    kwargs = {key: value for key, value in (("max_query_drift", args.max_query_drift),
                                            ("min_judged_ratio", args.min_judged_ratio))
              if value is not None}
    checks = drift_checks(results, stored, qrels_sha256, k, **kwargs,
                          judgments_sha256=judgments_sha256)
    message = refusal(checks, stored.source)
    if message and not args.allow_drift:
        raise RagReportError(message)
    if message:
        sys.stderr.write(f"ragreport: warning: baseline drift (--allow-drift): "
                         f"{terminal_safe(drift_text(checks))}\n")
    return checks


def _check_slice_options(args: argparse.Namespace) -> None:
    """``--slices-column`` names a column of ``--slices FILE``, else of ``--queries FILE``."""
    if args.slices_column is not None and args.slices is None and args.queries is None:
        raise RagReportError("--slices-column names a column of --slices FILE or of "
                             "--queries FILE; give one of them")


def _slices(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The query slices (``--slices FILE``, or ``--slices-column NAME`` of the queries file)
    and the targets file's ``[targets.slices.NAME]`` tables; slice targets without slices
    are refused (a gate must not be switched off by a forgotten option)."""
    from .targets import load_slice_targets

    slice_targets = load_slice_targets(args.targets)
    if args.slices is None and args.slices_column is None:
        if slice_targets:
            names = ", ".join(repr(n) for n in list(slice_targets)[:3])
            raise RagReportError(f"the targets file sets targets for slices ({names}) but no "
                                 "--slices (or --slices-column) was given")
        return None, slice_targets
    from .io.slices import load_slices

    source = args.slices if args.slices is not None else args.queries
    return load_slices(source, column=args.slices_column), slice_targets


def _build_report(args: argparse.Namespace, workers: Any) -> Any:
    from concurrent.futures import ThreadPoolExecutor

    from .io.common import Source

    if getattr(args, "per_query_in", None):  # per-query results (ragreport.perquery)
        return _report_from_per_query(args, workers)
    _materialize(args, ("qrels", "runs", "queries", "docs", "targets", "doc_map", "slices"))
    _check_columns(args)

    if isinstance(args.targets, Source):
        raise RagReportError(f"--targets must be a regular file, got {args.targets.name}")
    hashing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragreport-hash")
    try:
        return _report_from(args, hashing, workers)
    finally:
        hashing.shutdown(wait=False, cancel_futures=True)


def _merge_settings(args: argparse.Namespace) -> None:
    """``compat`` and ``ignore_identical_ids`` written beside the targets
    (:func:`ragreport.targets.load_settings`) fill the options not given; one given both ways
    with two values is refused, naming both."""
    from .targets import load_settings

    settings = load_settings(args.targets)
    for key, flag in (("compat", "--compat"), ("ignore_identical_ids", "--ignore-identical-ids"),
                      ("ties", "--ties")):
        if key not in settings:
            continue
        given, written = getattr(args, key, None), settings[key]
        if given is not None and given != written:
            as_flag = f"{flag} {given}" if isinstance(given, str) else (
                flag if given else "--no-" + flag[2:])
            raise RagReportError(f"{as_flag} conflicts with {key} = {_toml(written)} in "
                                 f"{escape_undecodable(settings['source'])}; give it in one place")
        setattr(args, key, written)


def _toml(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else f'"{value}"'


def _is_irds(path: Any) -> bool:
    """An ``irds:`` id (ir_datasets) that is not a file's name: no file to hash."""
    import os

    from .io.tabular import IRDS_PREFIX

    return isinstance(path, str) and path.startswith(IRDS_PREFIX) and not os.path.exists(path)


def _input_file(role: str, path: Any, display: str | None) -> Any:
    """The report's record of one input (hashed in a thread); never raises. None for an
    ``irds:`` id: its record is made from what was read (in :func:`_report_from`)."""
    from .report import InputFile

    if role in ("qrels", "run", "queries", "docs") and _is_irds(path):
        return None
    try:
        return InputFile.from_path(role, path, display)
    except OSError as exc:  # the reader reports it (or it changed meanwhile)
        return exc


def _report_from(args: argparse.Namespace, hashing: Any, workers: Any) -> Any:
    """Read, evaluate and build the report; ``hashing`` hashes the input files meanwhile.

    The worker processes start once the runs are read (a bad file is reported without waiting
    for them): they import matplotlib on the second core while this one evaluates.
    """
    import threading

    from .engine import evaluate
    from .io import load_docs, load_qrels, load_queries, load_run
    from .targets import load_targets

    def shown_path(path: Any) -> str | None:
        # the embedded example's files are shown relative to the package, not this machine
        from pathlib import Path

        from .examples import EXAMPLE_DIR
        from .io.common import Source

        if isinstance(path, Source):
            return None
        p = Path(path).resolve()
        if args.example and p.parent == EXAMPLE_DIR:
            return f"ragreport/examples/pydoc/{p.name}"
        return None

    roles = [("qrels", args.qrels), *(("run", p) for p in args.runs),
             *((role, path) for role, path in (("queries", args.queries), ("docs", args.docs),
                                               ("targets", args.targets),
                                               ("doc_map", args.doc_map),
                                               ("slices", args.slices)) if path)]
    hashes = [hashing.submit(_input_file, role, path, shown_path(path))
              for role, path in roles]  # hashlib releases the GIL: overlaps the evaluation
    _skip_pandas_interop()
    targets = load_targets(args.targets)
    _merge_settings(args)
    _load_stored_baseline(args)
    qrels = load_qrels(args.qrels, **_fractional(args), **_columns(args, args.qrels))
    if _wants_html(args) and workers.jobs == 1:
        # no worker process draws the plots: import matplotlib here while the runs are
        # parsed (pyarrow's reader runs without the GIL meanwhile)
        importer = threading.Thread(target=_import_plotting, name="ragreport-import")
        importer.start()
    else:
        importer = None
    runs = [load_run(p, **_columns(args, p)) for p in args.runs]
    queries = load_queries(args.queries) if args.queries else None
    docs = load_docs(args.docs) if args.docs else None
    slices, slice_targets = _slices(args)  # --slices, --slices-column, [targets.slices.NAME]
    workers.start()  # after the inputs are read: a bad file is reported without waiting
    from .data import distinct_names

    runs = distinct_names(runs, args.names)
    from .compat import default_measures
    from .measures import normalize_measures

    # the summary measures (the defaults when none is given), then every target's measure and
    # the worst-queries measure: each is computed, so a target or --worst-measure may name any
    # measure the command accepts ("nDCG", "P(rel=2)@5", "hits@3"), not only the summary's
    measures = normalize_measures(default_measures(args.compat) if args.measures is None
                                  else args.measures)
    k_max = args.k_max
    worst = normalize_measures([args.worst_measure]) if args.worst_measure else []
    wanted = list(dict.fromkeys([*measures, *(t.measure for t in targets), *worst,
                                 *(t.measure for ts in slice_targets.values() for t in ts)]))
    if k_max is None:
        k_max = max([20, *(m.cutoff for m in wanted if m.cutoff)])
    kwargs = {**_eval_kwargs(args), "k_max": k_max}
    results = [evaluate(qrels, r, wanted, **kwargs) for r in runs]
    inputs = []
    read: dict[str, list[Any]] = {"qrels": [qrels], "run": list(runs), "queries": [queries],
                                  "docs": [docs]}
    for (role, path), h in zip(roles, hashes, strict=True):
        got = h.result()
        if isinstance(got, OSError):
            raise RagReportError(f"cannot read {escape_undecodable(str(path))}: {got.strerror}")
        if got is None:  # an irds: id: the fingerprint of what ir_datasets gave
            got = _irds_input(role, path, read[role].pop(0))
        elif role in read:
            read[role].pop(0)
        inputs.append(got)
    if args.json is not None or args.stored_baseline is not None:  # --baseline-report's
        from dataclasses import replace

        from .analysis.drift import judgments_sha256

        inputs[0] = replace(inputs[0], judgments_sha256=judgments_sha256(qrels))
    report = _build(args, results, targets, queries=queries, docs=docs, inputs=inputs,
                    slices=slices, slice_targets=slice_targets, workers=workers,
                    qrels_sha256=inputs[0].sha256,
                    judgments_sha256=inputs[0].judgments_sha256)
    if importer is not None:
        # the plots are drawn next, in this thread: matplotlib must be imported by then, or
        # two threads importing its modules at once meet a partially initialised module
        importer.join()
    return report


def _to_stdout(args: argparse.Namespace) -> bool:
    """Whether one of the outputs is standard output (then the summary goes to stderr)."""
    from .fileio import is_stdout

    return any(is_stdout(p) for p in _outputs(args))


def _write_outputs(args: argparse.Namespace, report: Any, workers: Any) -> None:
    if _trackers(args):
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
    from .fileio import write_outputs
    from .report.tracking import log_to_trackers, render_outputs

    rendered = render_outputs(report, template_dir=args.template_dir, workers=workers)
    trackers = _trackers(args)
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
    from .report.terminal import render_terminal

    if not (args.html or args.markdown or args.json):
        args.html = "ragreport-report.html"
    _check_options(args)
    with _workers(args) as workers:
        report = _build_report(args, workers)
        _write_outputs(args, report, workers)
    _print_summary(args, render_terminal(report))
    return EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    from .report.terminal import render_failures, render_terminal

    _check_options(args)
    with _workers(args) as workers:
        report = _build_report(args, workers)
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
    from .notebook import write_analysis_notebook

    if args.example and (args.qrels or args.runs):
        raise RagReportError("--example takes no QRELS or RUN arguments")
    if not args.example and (not args.qrels or not args.runs):
        raise RagReportError("notebook needs QRELS and at least one RUN (or --example)")
    written = write_analysis_notebook(
        None if args.example else args.qrels, [] if args.example else args.runs,
        args.output, html_path=args.html, queries=args.queries, docs=args.docs,
        names=args.names, example=args.example, measures=args.measures,
        worst_measure=args.worst_measure, **_fractional(args))
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


def run() -> int:
    """Entry point of the ``ragreport`` command and ``python -m ragreport``: :func:`main`,
    in a process of its own.

    There, SIGTERM is handled like Ctrl-C (one line, no output replaced, exit 143), text
    that cannot be encoded is written escaped, and a thread's unexpected error never prints
    a traceback (``--debug`` does).
    """
    import signal
    import threading

    global _OWN_PROCESS
    _OWN_PROCESS = True
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
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code if code != EXIT_OK else EXIT_INTERRUPTED)
    return code


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
