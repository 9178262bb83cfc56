"""The report ``ragreport report`` and ``ragreport check`` build (:mod:`ragreport.cli.app`).

From raw files (read, evaluated, their fingerprints taken meanwhile) or from per-query
results (:mod:`ragreport.core.perquery`), with the targets file's settings, the query slices, and
``--baseline-report``'s stored run and drift checks: :func:`report_for`. Writing the outputs
and the process (signals, exit codes) stay in :mod:`ragreport.cli.app`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import RagReportError
from .args import escape_undecodable
from .config import Options
from .inputs import (
    check_columns,
    columns_kwarg,
    eval_kwargs,
    fractional_kwarg,
    is_irds,
    materialized,
    rule_kwarg,
    skip_pandas_interop,
    wants_html,
)
from .resolve import reserved_keys

if TYPE_CHECKING:
    from ..analysis.drift import DriftCheck
    from ..core.result import EvaluationResult
    from ..parallel import Workers
    from ..report import InputFile, Report
    from ..report.baseline import StoredBaseline
    from ..targets import Target

__all__ = ["PLOT_PRELOAD", "report_for"]


#: The matplotlib modules the HTML report's plots use.
_MATPLOTLIB = ("matplotlib.figure", "matplotlib.backends.backend_svg", "matplotlib.ticker")


#: What the worker processes import once, before their first task (see ragreport.parallel).
PLOT_PRELOAD = ("ragreport.report.plots", "ragreport.report.model", "ragreport.stats",
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


def _load_stored_baseline(opts: Options) -> StoredBaseline | None:
    """``--baseline-report``: the stored report's run (None without it), read before any
    input, so that a bad one is refused before any work."""
    if opts.baseline_report is None:
        return None
    from ..report.baseline import load_baseline_report

    return load_baseline_report(opts.baseline_report, opts.baseline)


def _irds_input(role: str, path: object, read: Any) -> Any:
    """The report's record of an input given as an ``irds:`` id: no file to hash, the
    fingerprint of what ir_datasets gave."""
    from ..analysis.drift import content_sha256
    from ..report import InputFile

    return InputFile(role, str(path), str(path), content_sha256(read), 0)


def _build(opts: Options, results: list[EvaluationResult], targets: list[Target], *,
           stored: StoredBaseline | None, queries: Any, docs: Any, inputs: list[InputFile],
           slices: Any, slice_targets: dict[str, Any], workers: Workers,
           qrels_sha256: str | None, judgments_sha256: str | None) -> Report:
    """The report with the command's options, from raw files or per-query results: against
    ``--baseline-report``'s stored run when given (its drift checks first, refused unless
    ``--allow-drift``; the qrels compared by the fingerprints given), without the chart
    with ``--no-chart``."""
    import shlex

    from ..report import build_report
    from ..settings import StatsSettings

    checks = (_drift_checks(opts, stored, results, targets, qrels_sha256, judgments_sha256)
              if stored is not None else [])
    report = build_report(
        results, targets, baseline=stored if stored is not None else opts.baseline,
        queries=queries, docs=docs,
        title=opts.title, generated_at=opts.generated_at,
        command=escape_undecodable("ragreport " + shlex.join(opts.argv)), inputs=inputs,
        worst_measure=opts.worst_measure, worst_n=opts.worst, per_query=opts.per_query,
        stats=not opts.no_stats, settings=StatsSettings(
            level=opts.ci_level, resamples=opts.resamples, seed=opts.seed, alpha=opts.alpha),
        max_drop=opts.max_drop, workers=workers, target_level=opts.target_level,
        slices=slices, slice_targets=slice_targets, drift=checks,
        allow_drift=opts.allow_drift, unjudged=opts.unjudged,
        unjudged_grade=opts.unjudged_grade, on_inconclusive=opts.on_inconclusive,
    )
    if opts.no_chart:
        report = replace(report, chart=False)
    return report


#: The name of the qrels input of a report from per-query results: the fingerprint is the one
#: the shards state, not that of a file read by this command.
_STATED_QRELS = "(qrels stated by the per-query results)"


def _report_from_per_query(opts: Options, workers: Workers) -> Report:
    """The report from per-query results (:mod:`ragreport.core.perquery`): the same numbers,
    intervals, tests and gates as from the raw files, without the rankings."""

    from ..core import perquery
    from ..io.targets import load_targets
    from ..measures import normalize_measures
    from ..report import InputFile

    opts = materialized(opts, ("queries", "docs", "targets", "slices"))
    files = perquery.shard_files(list(opts.per_query_in))
    targets = load_targets(_targets_file(opts), skip=reserved_keys())
    stored = _load_stored_baseline(opts)  # a bad stored report: before any reading
    results = perquery.read(files)
    conv = results[0].conventions
    for attr in ("ties", "compat", "ignore_identical_ids", "score_precision"):  # from a file
        given = getattr(opts, attr)
        if given is not None and given != getattr(conv, attr):
            raise RagReportError(f"{opts.file_source(attr) or 'the command line'} sets {attr} = "
                                 f"{_toml(given)} but "
                                 f"the per-query results were evaluated with "
                                 f"{_toml(getattr(conv, attr))}")
    check_names(opts.names, len(results), " in the per-query results")
    results = [r.replace(run_name=name) for r, name in zip(results, opts.names, strict=False)
               ] + results[len(opts.names):]
    measures = normalize_measures(opts.measures) if opts.measures is not None \
        else list(results[0].measures)
    worst = normalize_measures([opts.worst_measure]) if opts.worst_measure else []
    queries = None
    docs = None
    if opts.queries or opts.docs:
        from ..io import load_docs, load_queries

        queries = load_queries(opts.queries) if opts.queries else None
        docs = load_docs(opts.docs) if opts.docs else None
    slices, slice_targets = _slices(opts)
    wanted = list(dict.fromkeys([*measures, *(t.measure for t in targets), *worst,
                                 *(t.measure for ts in slice_targets.values() for t in ts)]))
    for r in results:
        for m in wanted:
            r.values(m)  # a measure the results do not hold: one clear error, before any work
    results = [r.replace(measures=tuple(wanted)) for r in results]
    workers.start()
    inputs = [InputFile.from_path("per_query", f) for f in files]
    qrels_sha256, judgments = perquery.stated_qrels(results)
    if qrels_sha256 is not None or judgments is not None:
        # the qrels fingerprints the shards state: a report stored from this one is a
        # --baseline-report whose qrels are known (no path: nothing to read or protect)
        inputs.append(InputFile("qrels", _STATED_QRELS, "", qrels_sha256 or "", 0,
                                judgments_sha256=judgments))
    read = {"queries": queries, "docs": docs}
    for role, path in (("queries", opts.queries), ("docs", opts.docs),
                       ("targets", opts.targets), ("slices", opts.slices)):
        texts = read.get(role)
        if path and texts is not None and is_irds(path):  # the fingerprint of what was read
            inputs.append(_irds_input(role, path, texts))
        elif path:
            inputs.append(InputFile.from_path(role, path))
    # --baseline-report: the qrels compared by the fingerprints the shards state; unknown
    # (an engine's shards) is drift, refused unless --allow-drift
    return _build(opts, results, targets, stored=stored, queries=queries, docs=docs,
                  inputs=inputs, slices=slices, slice_targets=slice_targets, workers=workers,
                  qrels_sha256=qrels_sha256, judgments_sha256=judgments)


def _drift_checks(opts: Options, stored: StoredBaseline, results: list[EvaluationResult],
                  targets: list[Target], qrels_sha256: str | None,
                  judgments_sha256: str | None) -> list[DriftCheck]:
    """The drift checks of ``--baseline-report`` (:mod:`ragreport.analysis.drift`), before
    the report is built: refused here (exit 2) unless ``--allow-drift``, then one warning
    line on stderr."""
    from ..analysis.drift import drift_text, refusal
    from ..measures import parse_measure
    from ..report.baseline import drift_checks
    from ..textout import terminal_safe

    wm = (parse_measure(opts.worst_measure) if opts.worst_measure
          else targets[0].measure if targets else None)
    k = (wm.cutoff if wm is not None else None) or min(r.k_max for r in results)
    kwargs: dict[str, Any] = {key: value for key, value in (
        ("max_query_drift", opts.max_query_drift), ("min_judged_ratio", opts.min_judged_ratio))
        if value is not None}
    checks = drift_checks(results, stored, qrels_sha256, k, **kwargs,
                          judgments_sha256=judgments_sha256)
    message = refusal(checks, stored.source)
    if message and not opts.allow_drift:
        raise RagReportError(message)
    if message:
        sys.stderr.write(f"ragreport: warning: baseline drift (--allow-drift): "
                         f"{terminal_safe(drift_text(checks))}\n")
    return checks


def _slices(opts: Options) -> tuple[Any, dict[str, Any]]:
    """The query slices (``--slices FILE``, or ``--slices-column NAME`` of the queries file)
    and the targets file's ``[targets.slices.NAME]`` tables; slice targets without slices
    are refused (a gate must not be switched off by a forgotten option)."""
    from ..io.targets import load_slice_targets

    slice_targets = load_slice_targets(_targets_file(opts), skip=reserved_keys())
    if opts.slices is None and opts.slices_column is None:
        if slice_targets:
            names = ", ".join(repr(n) for n in list(slice_targets)[:3])
            raise RagReportError(f"the targets file sets targets for slices ({names}) but no "
                                 "--slices (or --slices-column) was given")
        return None, slice_targets
    from ..io.slices import load_slices

    source = opts.slices if opts.slices is not None else opts.queries
    return load_slices(source, column=opts.slices_column), slice_targets


def report_for(opts: Options, workers: Workers) -> Report:
    """The report of ``report`` / ``check`` from the options already checked: from
    ``--per-query-in`` results, else from QRELS and RUN (read once, hashed meanwhile).
    ``workers`` (not started) are started once the inputs are read."""
    from concurrent.futures import ThreadPoolExecutor

    if opts.per_query_in:  # per-query results (ragreport.core.perquery)
        return _report_from_per_query(opts, workers)
    opts = materialized(opts, ("qrels", "runs", "queries", "docs", "targets", "doc_map",
                               "slices"))
    check_columns(opts)

    _targets_file(opts)  # a regular file: read more than once
    hashing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragreport-hash")
    try:
        return _report_from(opts, hashing, workers)
    finally:
        hashing.shutdown(wait=False, cancel_futures=True)


def _targets_file(opts: Options) -> str | None:
    """``--targets``: a regular file (its targets, settings and slice targets are read from
    it apart), not an input read once."""
    from ..io.common import Source

    if isinstance(opts.targets, Source):
        raise RagReportError(f"--targets must be a regular file, got {opts.targets.name}")
    return opts.targets


def check_names(names: Sequence[str], n_runs: int, where: str = "") -> None:
    """More ``--name`` than runs: refused naming the option (one name per run, in order)."""
    n = len(names or [])
    if n > n_runs:
        raise RagReportError(f"--name given {n} times for {n_runs} run{'s' if n_runs != 1 else ''}"
                             f"{where}: give one --name per run, in the order of the runs")


def _toml(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else f'"{value}"'


def _input_file(role: str, path: Any, display: str | None) -> Any:
    """The report's record of one input (hashed in a thread); never raises. None for an
    ``irds:`` id: its record is made from what was read (in :func:`_report_from`)."""
    from ..report import InputFile

    if role in ("qrels", "run", "queries", "docs") and is_irds(path):
        return None
    try:
        return InputFile.from_path(role, path, display)
    except OSError as exc:  # the reader reports it (or it changed meanwhile)
        return exc


def _report_from(opts: Options, hashing: Any, workers: Workers) -> Report:
    """Read, evaluate and build the report; ``hashing`` hashes the input files meanwhile.

    The worker processes start once the runs are read (a bad file is reported without waiting
    for them): they import matplotlib on the second core while this one evaluates.
    """
    import threading

    from ..core.engine import evaluate
    from ..data import distinct_names
    from ..io import load_docs, load_qrels, load_queries, load_run
    from ..io.targets import load_targets

    roles = _roles(opts)
    hashes = [hashing.submit(_input_file, role, path, _shown_path(path, opts.example))
              for role, path in roles]  # hashlib releases the GIL: overlaps the evaluation
    skip_pandas_interop()
    targets = load_targets(_targets_file(opts), skip=reserved_keys())
    stored = _load_stored_baseline(opts)
    qrels = load_qrels(opts.qrels, **fractional_kwarg(opts), **columns_kwarg(opts, opts.qrels),
                       **rule_kwarg(opts))
    if wants_html(opts) and workers.jobs == 1:
        # no worker process draws the plots: import matplotlib here while the runs are
        # parsed (pyarrow's reader runs without the GIL meanwhile)
        importer = threading.Thread(target=_import_plotting, name="ragreport-import")
        importer.start()
    else:
        importer = None
    check_names(opts.names, len(opts.runs))
    runs = [load_run(p, **columns_kwarg(opts, p)) for p in opts.runs]
    queries = load_queries(opts.queries) if opts.queries else None
    docs = load_docs(opts.docs) if opts.docs else None
    slices, slice_targets = _slices(opts)  # --slices, --slices-column, [targets.slices.NAME]
    workers.start()  # after the inputs are read: a bad file is reported without waiting
    runs = distinct_names(runs, list(opts.names) or None)
    wanted, k_max = _wanted(opts, targets, slice_targets)
    kwargs = {**eval_kwargs(opts), "k_max": k_max}
    results = [evaluate(qrels, r, wanted, **kwargs) for r in runs]
    inputs = _fingerprints(roles, hashes, {"qrels": [qrels], "run": list(runs),
                                           "queries": [queries], "docs": [docs]})
    if opts.json is not None or stored is not None:  # --baseline-report's
        from ..analysis.drift import judgments_sha256

        inputs[0] = replace(inputs[0], judgments_sha256=judgments_sha256(qrels))
    report = _build(opts, results, targets, stored=stored, queries=queries, docs=docs,
                    inputs=inputs, slices=slices, slice_targets=slice_targets,
                    workers=workers, qrels_sha256=inputs[0].sha256,
                    judgments_sha256=inputs[0].judgments_sha256)
    if importer is not None:
        # the plots are drawn next, in this thread: matplotlib must be imported by then, or
        # two threads importing its modules at once meet a partially initialised module
        importer.join()
    return report


def _shown_path(path: Any, example: bool) -> str | None:
    """How a file of the embedded example is shown: relative to the package, not this
    machine (None: as given)."""
    from pathlib import Path

    from ..examples import EXAMPLE_DIR
    from ..io.common import Source

    if isinstance(path, Source):
        return None
    p = Path(path).resolve()
    if example and p.parent == EXAMPLE_DIR:
        return f"ragreport/examples/pydoc/{p.name}"
    return None


def _roles(opts: Options) -> list[tuple[str, Any]]:
    """Every input file with its role, in the report's order."""
    return [("qrels", opts.qrels), *(("run", p) for p in opts.runs),
            *((role, path) for role, path in (("queries", opts.queries), ("docs", opts.docs),
                                              ("targets", opts.targets),
                                              ("doc_map", opts.doc_map),
                                              ("slices", opts.slices)) if path)]


def _wanted(opts: Options, targets: list[Any], slice_targets: dict[str, list[Any]]
            ) -> tuple[list[Any], int]:
    """The measures to compute and K: the summary measures (the defaults when none is
    given), then every target's measure and the worst-queries measure: each is computed, so
    a target or --worst-measure may name any measure the command accepts ("nDCG",
    "P(rel=2)@5", "hits@3"), not only the summary's."""
    from ..compat import default_measures
    from ..measures import normalize_measures

    measures = normalize_measures(default_measures(opts.compat) if opts.measures is None
                                  else opts.measures)
    worst = normalize_measures([opts.worst_measure]) if opts.worst_measure else []
    wanted = list(dict.fromkeys([*measures, *(t.measure for t in targets), *worst,
                                 *(t.measure for ts in slice_targets.values() for t in ts)]))
    k_max = opts.k_max
    if k_max is None:
        k_max = max([20, *(m.cutoff for m in wanted if m.cutoff)])
    return wanted, k_max


def _fingerprints(roles: list[tuple[str, Any]], hashes: list[Any],
                  read: dict[str, list[Any]]) -> list[Any]:
    """The input files' fingerprints (hashed meanwhile); an ir_datasets id's from what it
    gave (``read``: the objects read, per role, in order)."""
    inputs = []
    for (role, path), h in zip(roles, hashes, strict=True):
        got = h.result()
        if isinstance(got, OSError):
            raise RagReportError(f"cannot read {escape_undecodable(str(path))}: {got.strerror}")
        if got is None:  # an irds: id: the fingerprint of what ir_datasets gave
            got = _irds_input(role, path, read[role].pop(0))
        elif role in read:
            read[role].pop(0)
        inputs.append(got)
    return inputs
