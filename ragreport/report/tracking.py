"""Experiment tracking: a report's numbers, files and conventions in MLflow or W&B.

A view over the report data (:class:`~.model.Report`): it reads the numbers the report holds
and never computes one. :func:`tracking_payload` turns a report into plain dictionaries
(metrics, curves, parameters, tags), the same for both trackers; :func:`log_to_mlflow` and
:func:`log_to_wandb` send them with the HTML, Markdown and JSON outputs. ``mlflow`` and
``wandb`` are imported only inside those functions (the extras ``ragreport[mlflow]`` and
``ragreport[wandb]``).

What is logged (``NAME`` is :func:`metric_name` of a measure, ``nDCG@10`` -> ``nDCG_at_10``;
with more than one run in the report every metric name starts with the run's name and a
slash, ``bm25/nDCG_at_10``, so that one tracked run can hold a whole comparison):

- metrics: ``NAME`` (the mean), ``NAME_ci_lower`` and ``NAME_ci_upper`` (the bootstrap
  interval, when the report has one), ``NAME_delta`` and ``NAME_p_value`` (a run against the
  baseline: the difference of the means and the Holm-adjusted randomization-test p-value),
  ``NAME_total`` (the sum over queries of a count trec_eval sums); with a doc map the
  document level as ``NAME_doc`` (and ``NAME_doc_ci_lower``, ``NAME_doc_ci_upper``) and the
  redundancy at K (top-K chunks whose document is ranked above) as ``redundancy_at_K``; with
  query slices ``slice_SLICE/NAME`` (and its ``_ci_lower``, ``_ci_upper``, ``_delta``,
  ``_p_value``) and ``slice_SLICE/queries``; with a per-query latency (a collected run)
  ``latency_p50_ms``, ``latency_p95_ms`` and ``latency_max_ms``;
- curves, as metrics with a step: ``FAMILY_at_K`` at step K = 1..k_max (``nDCG_at_K``), with
  ``FAMILY_at_K_ci_lower`` / ``_ci_upper`` (the bands), ``FAMILY_at_K_doc`` at document level
  (and ``redundancy_at_K``), and ``IPrec_at_recall`` (the 11-point precision-recall curve) at
  step = recall in percent (0, 10, ..., 100);
- parameters: how the numbers were computed, under ``ragreport.``: the runs, the baseline, the
  measures, ``k_max``, every convention of the report (``ragreport.conventions.ties``...),
  the statistics (``ragreport.stats.resamples``, ``.seed``, ``.level``...) and the slices'
  source (``ragreport.slices.source``, ``.min_queries``);
- tags: ``ragreport.version``, ``ragreport.generated_at``, ``ragreport.title``,
  ``ragreport.command``, ``ragreport.passed`` (``true``/``false``: every target and drop check),
  and each input file's SHA-256 (``ragreport.input.qrels.sha256``; runs numbered from 1 when
  there are several: ``ragreport.input.run.2.sha256``) with its path (``...path``);
- files: ``report.html``, ``report.md`` and ``report.json`` (under ``ragreport/``).

Nothing half: every name is built and checked, and every file rendered, before the tracker is
contacted; a run this module started and could not fill is ended as failed (MLflow: also
deleted). ``ragreport.complete = true`` is the last tag (W&B: config key) set: a run without
it holds part of a report at most. :func:`log_to_trackers` (``--mlflow --wandb``) opens both
runs before filling either and undoes one when the other fails (a user's run is never
deleted). A new W&B run waits for its server at most ``WANDB_INIT_TIMEOUT`` seconds (15
unless set; W&B's own default is 90).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RagReportError
from .html import render_html
from .jsonout import render_json
from .markdown import render_markdown

if TYPE_CHECKING:
    from ..parallel import Mapper
    from .model import Report

__all__ = ["ARTIFACT_NAMES", "TrackingPayload", "check_mlflow", "check_wandb",
           "log_to_mlflow", "log_to_trackers", "log_to_wandb", "metric_name",
           "render_outputs", "tracking_payload"]

#: The file name of each output in the tracked run (the same whatever the local names).
ARTIFACT_NAMES = {"html": "report.html", "markdown": "report.md", "json": "report.json"}

#: MLflow's longest metric, parameter or tag name.
MAX_NAME = 250
#: MLflow's longest parameter value (longer values are cut, with a mark).
MAX_PARAM = 6000
MAX_TAG = 8000

_PARAMS = re.compile(r"[(),=]")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def metric_name(text: str) -> str:
    """A measure's (or a convention's) name as MLflow and W&B accept it.

    ``@`` becomes ``_at_``; the parameters' parentheses, ``=`` and ``,`` become ``_`` (the
    closing parenthesis goes); any other character outside ``A-Z a-z 0-9 _ . -`` becomes
    ``_``. A name of dots only (``..``) has its dots replaced too (MLflow reads it as a
    path), and the empty name is ``_``.

    >>> metric_name("nDCG@10")
    'nDCG_at_10'
    >>> metric_name("P(rel=2)@5")
    'P_rel_2_at_5'
    >>> metric_name("RBP(p=0.5,rel=1)@10")
    'RBP_p_0.5_rel_1_at_10'
    >>> metric_name("IPrec@0.5"), metric_name("RR"), metric_name("P@K denominator")
    ('IPrec_at_0.5', 'RR', 'P_at_K_denominator')
    """
    out = text.replace("@", "_at_").replace(")", "")
    out = _UNSAFE.sub("_", _PARAMS.sub("_", out))
    if out.strip(".") == "":
        out = out.replace(".", "_") or "_"
    return out


def _run_segment(name: str) -> str:
    """A run's name as the first part of a metric name: unsafe characters become ``_``.

    >>> _run_segment("dense v2/with:rerank")
    'dense_v2_with_rerank'
    """
    out = _UNSAFE.sub("_", name)
    if out.strip(".") == "":
        out = out.replace(".", "_") or "_"
    return out


@dataclass(frozen=True)
class StepSeries:
    """One curve as step metrics: ``axis`` names the step (``K`` or ``recall_pct``)."""

    axis: str
    points: list[tuple[int, float]]


@dataclass(frozen=True)
class TrackingPayload:
    """Everything a tracker receives from one report, as plain values (no tracker needed).

    ``metrics``: name -> value; ``steps``: name -> curve; ``params`` and ``tags``: name ->
    text. Built by :func:`tracking_payload`; every name is checked there.
    """

    metrics: dict[str, float] = field(default_factory=dict)
    steps: dict[str, StepSeries] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 14] + "... (truncated)"


def tracking_payload(report: Report) -> TrackingPayload:
    """The metrics, curves, parameters and tags of ``report`` (see the module's docstring).

    Raises
    ------
    RagReportError
        Two runs whose names become the same metric prefix (``a b`` and ``a_b``), or a name
        longer than MLflow's 250 characters: rename the runs (``--name``).

    >>> from ragreport import evaluate
    >>> from ragreport.report import build_report
    >>> r = evaluate({"q": {"a": 1}}, {"q": ["b", "a"]}, ["P@1", "RR"])
    >>> p = tracking_payload(build_report([r], stats=False, generated_at="2026-01-01"))
    >>> p.metrics
    {'P_at_1': 0.0, 'RR': 0.5}
    >>> p.steps["RR_at_K"].points[:2], p.params["ragreport.measures"]
    ([(1, 0.0), (2, 0.5)], 'P@1, RR')
    """
    many = len(report.runs) > 1
    prefixes = {run: f"{_run_segment(run)}/" if many else "" for run in report.runs}
    seen: dict[str, str] = {}
    for run, prefix in prefixes.items():
        if prefix in seen:
            raise RagReportError(f"runs {seen[prefix]!r} and {run!r} get the same metric "
                                 f"names ({prefix}...); give them other names (--name)")
        seen[prefix] = run
    out = TrackingPayload()

    def metric(run: str, name: str, value: float | None) -> None:
        if value is not None:
            out.metrics[prefixes[run] + name] = float(value)

    def steps(run: str, name: str, points: list[tuple[int, float]], axis: str = "K") -> None:
        out.steps[prefixes[run] + name] = StepSeries(axis, [(k, float(v)) for k, v in points])

    for row in report.summary:
        name = metric_name(row.measure)
        for c in row.cells:
            metric(c.run, name, c.value)
            metric(c.run, name + "_ci_lower", c.ci_lower)
            metric(c.run, name + "_ci_upper", c.ci_upper)
            metric(c.run, name + "_delta", c.delta)
            metric(c.run, name + "_p_value", c.p_value)
            metric(c.run, name + "_total", c.total)
    for curve in report.curves:
        name = metric_name(curve.family) + "_at_K"
        for run, ys in curve.series.items():
            steps(run, name, list(zip(curve.ks, ys, strict=False)))
            if run in curve.bands:
                lo, hi = curve.bands[run]
                steps(run, name + "_ci_lower", list(zip(curve.ks, lo, strict=False)))
                steps(run, name + "_ci_upper", list(zip(curve.ks, hi, strict=False)))
    if report.pr_curve is not None:
        pct = [round(level * 100) for level in report.pr_curve.levels]
        for run, ys in report.pr_curve.series.items():
            steps(run, "IPrec_at_recall", list(zip(pct, ys, strict=False)), "recall_pct")
    doc = report.document
    if doc is not None:
        for lrow in doc.summary:
            name = metric_name(lrow.measure) + "_doc"
            for lc in lrow.cells:
                metric(lc.run, name, lc.document)
                metric(lc.run, name + "_ci_lower", lc.ci_lower)
                metric(lc.run, name + "_ci_upper", lc.ci_upper)
        for curve in doc.curves:
            name = metric_name(curve.family) + "_at_K_doc"
            for run, ys in curve.series.items():
                steps(run, name, list(zip(curve.ks, ys, strict=False)))
        for dr in doc.runs:
            metric(dr.run, f"redundancy_at_{dr.k}", dr.redundancy)
            steps(dr.run, "redundancy_at_K",
                  list(zip(range(1, len(dr.curve) + 1), dr.curve, strict=False)))
    for lat in getattr(report, "latency", None) or ():  # collect_run's per-query latency
        metric(lat.run, "latency_p50_ms", lat.p50_ms)
        metric(lat.run, "latency_p95_ms", lat.p95_ms)
        metric(lat.run, "latency_max_ms", lat.max_ms)
    slices = getattr(report, "slices", None)
    if slices is not None:
        named: dict[str, str] = {}
        for sl in slices.slices:
            seg = "slice_" + _run_segment(sl.name)
            if seg in named:
                raise RagReportError(f"slices {named[seg]!r} and {sl.name!r} get the same "
                                     f"metric names ({seg}/...); rename one of them")
            named[seg] = sl.name
            for srow in sl.rows:
                name = f"{seg}/{metric_name(srow.measure)}"
                for sc in srow.cells:
                    metric(sc.run, name, sc.value)
                    metric(sc.run, name + "_ci_lower", sc.ci_lower)
                    metric(sc.run, name + "_ci_upper", sc.ci_upper)
                    metric(sc.run, name + "_delta", sc.delta)
                    metric(sc.run, name + "_p_value", sc.p_value)
            for run, n in sl.queries.items():
                if run in prefixes:
                    metric(run, f"{seg}/queries", n)

    params = out.params
    params["ragreport.runs"] = ", ".join(report.runs)
    params["ragreport.baseline"] = report.baseline
    params["ragreport.measures"] = ", ".join(report.measures)
    params["ragreport.k_max"] = str(report.k_max)
    for key, value in report.conventions.items():
        params[f"ragreport.conventions.{metric_name(key)}"] = value
    if report.stats is not None:
        s = report.stats
        params.update({"ragreport.stats.level": f"{s.level:g}",
                       "ragreport.stats.resamples": str(s.resamples),
                       "ragreport.stats.curve_resamples": str(s.curve_resamples),
                       "ragreport.stats.seed": str(s.seed),
                       "ragreport.stats.alpha": f"{s.alpha:g}",
                       "ragreport.stats.interval": s.interval,
                       "ragreport.stats.test": s.test,
                       "ragreport.stats.correction": s.correction})
    else:
        params["ragreport.stats"] = "off"
    if slices is not None:
        params["ragreport.slices.source"] = slices.source
        params["ragreport.slices.min_queries"] = str(slices.min_queries)
    for key in list(params):
        params[key] = _cut(params[key], MAX_PARAM)

    tags = out.tags
    tags["ragreport.version"] = report.version
    tags["ragreport.generated_at"] = report.generated_at
    tags["ragreport.title"] = report.title
    if report.command:
        tags["ragreport.command"] = report.command
    tags["ragreport.passed"] = "true" if report.all_passed else "false"
    roles = [f.role for f in report.inputs]
    counter: dict[str, int] = {}
    for f in report.inputs:
        counter[f.role] = counter.get(f.role, 0) + 1
        key = f"ragreport.input.{metric_name(f.role)}"
        if roles.count(f.role) > 1:
            key += f".{counter[f.role]}"
        tags[key + ".sha256"] = f.sha256
        tags[key + ".path"] = f.path
    for key in list(tags):
        tags[key] = _cut(tags[key], MAX_TAG)
    _check_names(out)
    return out


def _check_names(p: TrackingPayload) -> None:
    """Every name within MLflow's length, and none both a name and a folder of names
    (MLflow's file store keeps ``a/b`` in a folder ``a``)."""
    names = [*p.metrics, *p.steps]
    for name in [*names, *p.params, *p.tags]:
        if len(name) > MAX_NAME:
            what = "the run (--name) or the slice" if "/slice_" in f"/{name}" else \
                "the run (--name)"
            raise RagReportError(f"the metric name {name[:60]!r}... is longer than {MAX_NAME} "
                                 f"characters; give {what} a shorter name")
    dupes = set(p.metrics) & set(p.steps)
    folders = {n.rsplit("/", 1)[0] for n in names if "/" in n}
    clash = sorted(dupes | (set(names) & folders))
    if clash:
        raise RagReportError(f"the metric name {clash[0]!r} is used twice (a run's name "
                             "matches another name); give the runs other names (--name)")


def render_outputs(report: Report, *, template_dir: str | os.PathLike[str] | None = None,
                   workers: Mapper | None = None) -> dict[str, str]:
    """The HTML, Markdown and JSON of ``report`` (keys ``html``, ``markdown``, ``json``)."""
    return {"json": render_json(report), "markdown": render_markdown(report),
            "html": render_html(report, template_dir=template_dir, workers=workers)}


@contextmanager
def _artifact_dir(report: Report, rendered: Mapping[str, str] | None,
                  template_dir: str | os.PathLike[str] | None,
                  workers: Mapper | None) -> Iterator[Path]:
    """A temporary folder holding the three outputs under :data:`ARTIFACT_NAMES`."""
    texts = dict(rendered or {})
    if "json" not in texts:
        texts["json"] = render_json(report)
    if "markdown" not in texts:
        texts["markdown"] = render_markdown(report)
    if "html" not in texts:
        texts["html"] = render_html(report, template_dir=template_dir, workers=workers)
    folder = Path(tempfile.mkdtemp(prefix="ragreport-tracking-"))
    try:
        for key, name in ARTIFACT_NAMES.items():
            (folder / name).write_text(texts[key], encoding="utf-8", newline="")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _import(module: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise RagReportError(f"{module} is not installed: pip install 'ragreport[{extra}]'"
                             ) from None


def _one_line(what: str, exc: BaseException) -> RagReportError:
    """A tracker's exception as one readable line (its message's lines joined)."""
    text = " ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip())
    text = text or type(exc).__name__
    if len(text) > 1000:
        text = text[:1000] + "..."
    if what.startswith("MLflow") and isinstance(exc, ModuleNotFoundError):
        try:
            uri = str(_import("mlflow", "mlflow").get_tracking_uri())
        except Exception:
            uri = "?"
        return RagReportError(_db_store_hint(uri, exc.name or text))
    return RagReportError(f"{what}: {text}")


#: Tracking URI schemes of MLflow's database store (``mysql+pymysql://`` counts as mysql).
_DB_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")


def _db_store_hint(uri: str, module: str) -> str:
    """MLflow 3's default tracking URI is ``sqlite:///mlflow.db``: a database store, which
    ``mlflow-skinny`` (``ragreport[mlflow]``) cannot open."""
    return (f"MLflow: the tracking URI {uri} needs the module {module!r}, which "
            f"mlflow-skinny ('ragreport[mlflow]') does not install: pip install mlflow "
            f"(the full package) for a database store, or set MLFLOW_TRACKING_URI to your "
            f"tracking server (or to file:./mlruns with MLFLOW_ALLOW_FILE_STORE=true)")


# ---- MLflow ---------------------------------------------------------------------------------

def check_mlflow(run_id: str | None = None) -> None:
    """Before any work: ``mlflow`` is installed, a tracking server (an ``http(s)://``
    tracking URI) answers and, when given (or ``MLFLOW_RUN_ID`` is set), the run exists at
    the tracking URI (``MLFLOW_TRACKING_URI``). The server is asked once, without MLflow's
    retries and with a 10 s timeout unless ``MLFLOW_HTTP_REQUEST_MAX_RETRIES`` /
    ``MLFLOW_HTTP_REQUEST_TIMEOUT`` are set: an unreachable server is an error in seconds.

    Raises
    ------
    RagReportError
        Not installed (the message names ``pip install 'ragreport[mlflow]'``), the tracking
        store cannot be reached, or no such run.
    """
    mlflow = _import("mlflow", "mlflow")
    if run_id is None:
        run_id = os.environ.get("MLFLOW_RUN_ID") or None
    try:
        uri = str(mlflow.get_tracking_uri())
    except Exception as exc:
        raise _one_line("MLflow", exc) from exc
    scheme = uri.split(":", 1)[0].lower()
    remote = scheme in ("http", "https")
    if scheme.split("+", 1)[0] in _DB_SCHEMES:
        import importlib.util

        for module in ("sqlalchemy", "alembic"):
            if importlib.util.find_spec(module) is None:
                raise RagReportError(_db_store_hint(uri, module))
    if run_id is None and not remote:
        return  # a local store: nothing to reach (and no folder created before the work)
    with _fail_fast():
        client = _mlflow_client()
        if run_id is not None:
            _get_mlflow_run(client, run_id)
        else:
            try:
                client.search_experiments(max_results=1)
            except Exception as exc:
                raise _one_line(f"MLflow tracking server {uri}", exc) from exc


#: MLflow's HTTP settings during :func:`check_mlflow` when the user has not set them: its
#: defaults retry an unreachable server for minutes (7 retries, exponential backoff, 120 s
#: timeout), this check answers in seconds.
_FAIL_FAST = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}


def _fail_fast() -> AbstractContextManager[None]:
    """:data:`_FAIL_FAST` in the environment for the block (the user's own values kept)."""
    return _env_defaults(_FAIL_FAST)


@contextmanager
def _env_defaults(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` in the environment for the block, where the user has not set them."""
    added = [k for k in values if k not in os.environ]
    for key in added:
        os.environ[key] = values[key]
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _mlflow_client() -> Any:
    tracking = _import("mlflow.tracking", "mlflow")
    try:
        return tracking.MlflowClient()
    except Exception as exc:
        raise _one_line("MLflow", exc) from exc


def _get_mlflow_run(client: Any, run_id: str) -> Any:
    try:
        run = client.get_run(run_id)
    except Exception as exc:
        raise _one_line(f"MLflow run {run_id!r}", exc) from exc
    if run.info.lifecycle_stage == "deleted":
        raise RagReportError(f"MLflow run {run_id!r} is deleted")
    return run


def _batches(items: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def log_to_mlflow(report: Report, run_id: str | None = None, *,
                  artifact_path: str = "ragreport",
                  rendered: Mapping[str, str] | None = None,
                  template_dir: str | os.PathLike[str] | None = None,
                  workers: Mapper | None = None) -> str:
    """Log ``report`` into an MLflow run; returns the run's id.

    The run: ``run_id`` when given, else the active run (``mlflow.active_run()``), else the
    one ``MLFLOW_RUN_ID`` names, else a new run (in ``MLFLOW_EXPERIMENT_NAME`` /
    ``MLFLOW_EXPERIMENT_ID``, else the default experiment), ended when everything is logged.
    The tracking URI is MLflow's own (``mlflow.set_tracking_uri``, ``MLFLOW_TRACKING_URI``).
    What is logged: see :mod:`ragreport.report.tracking`.

    Parameters
    ----------
    report : Report
    run_id : str, optional
    artifact_path : str
        Folder of the three outputs in the run's artifacts.
    rendered : mapping, optional
        The outputs already rendered (``html``, ``markdown``, ``json``: text), so they are
        not rendered again; the missing ones are.
    template_dir, workers
        As for :meth:`Report.to_html <ragreport.report.model.Report.to_html>`.

    Raises
    ------
    RagReportError
        ``mlflow`` not installed (``pip install 'ragreport[mlflow]'``), no such run, a store
        that cannot be reached or written, a value MLflow refuses (a parameter logged before
        with another value, refused before anything is logged): one line saying which.
    """
    payload = tracking_payload(report)  # every name checked before the tracker is contacted
    with _artifact_dir(report, rendered, template_dir, workers) as folder, \
            _mlflow_session(run_id, payload, artifact_path) as session:
        session.send(payload, folder)
    return session.run_id


def log_to_trackers(report: Report, *, mlflow: bool = False, mlflow_run: str | None = None,
                    wandb: bool = False, rendered: Mapping[str, str] | None = None,
                    template_dir: str | os.PathLike[str] | None = None,
                    workers: Mapper | None = None,
                    then: Callable[[], object] | None = None) -> list[tuple[str, str]]:
    """Log ``report`` into MLflow and W&B at once (``report --mlflow --wandb``); returns
    ``(tracker, run id)`` pairs (``"MLflow"``, ``"W&B"``).

    Both runs are opened before anything is logged into either (the MLflow run found or
    created, a given run's parameters compared with the report's; the W&B run started:
    W&B's usual failures, no API key, an unreachable server, come here), then each is filled
    and closed. When one fails, the other is undone as far as it can be: a run ragreport
    started is ended as failed (MLflow: and deleted, so that no run holds a report the
    command says it could not log); a run of the user's (``mlflow_run``, the active run,
    ``MLFLOW_RUN_ID``'s, ``wandb.run``) is never deleted, and the error says when one holds
    the report already. ``mlflow_run`` implies ``mlflow``. ``then`` is called once every run
    is filled, before any is closed (the command writes its local outputs there): when it
    raises, the runs are undone as when a tracker fails, so that a command that fails has
    not left a finished run behind.

    Raises
    ------
    RagReportError
        As :func:`log_to_mlflow` and :func:`log_to_wandb`, one line, naming what is left
        in the other tracker when something is.
    """
    from contextlib import ExitStack

    payload = tracking_payload(report)
    sessions: list[_Session] = []
    try:
        with _artifact_dir(report, rendered, template_dir, workers) as folder, \
                ExitStack() as stack:
            if mlflow or mlflow_run is not None:
                sessions.append(stack.enter_context(
                    _mlflow_session(mlflow_run, payload, "ragreport")))
            if wandb:
                sessions.append(stack.enter_context(
                    _wandb_session(None, None, "ragreport-report")))
            for session in sessions:
                session.send(payload, folder)
            if then is not None:
                then()
    except RagReportError as exc:
        notes = [s.left() for s in sessions if not s.failed and s.left()]
        if notes:
            raise RagReportError(f"{exc} ({'; '.join(notes)})") from exc
        raise
    return [(s.tracker, s.run_id) for s in sessions]


@dataclass
class _Session:
    """One tracked run while a report is logged into it (see :func:`_mlflow_session`)."""

    tracker: str
    run_id: str
    own: bool  # started here (so ended here)
    new: bool  # created here (MLflow: deleted again when the logging fails)
    yours: bool  # the user's run (given, active, MLFLOW_RUN_ID's): never deleted
    sent: bool = False  # everything logged into it
    failed: bool = False  # its own error is the one raised
    ended_failed: bool = False  # ended (MLflow) or finished (W&B) as failed
    removed: bool = False  # deleted after the other tracker failed
    _send: Any = None

    def send(self, payload: TrackingPayload, folder: Path) -> None:
        try:
            self._send(payload, folder)
        except BaseException:
            self.failed = True
            raise
        self.sent = True

    def left(self) -> str:
        """What this run holds after another tracker failed ("" when nothing)."""
        if self.removed:
            return (f"the {self.tracker} run {self.run_id} it had logged into was ended as "
                    "failed and deleted" if self.sent else "")
        if self.sent:
            return (f"already logged to {self.tracker} run {self.run_id}"
                    + (", ended as failed" if self.ended_failed else "")
                    + (", yours: kept" if self.yours else ""))
        if self.ended_failed and self.tracker == "W&B":
            return f"the W&B run {self.run_id} it started was ended as failed, empty"
        return ""


@contextmanager
def _mlflow_session(run_id: str | None, payload: TrackingPayload,
                    artifact_path: str) -> Iterator[_Session]:
    """The MLflow run to log into, open for the block (see :func:`log_to_mlflow`); a run
    started here is ended on leaving, as failed (and deleted when created here) when the
    block raises."""
    mlflow = _import("mlflow", "mlflow")
    entities = _import("mlflow.entities", "mlflow")
    client = _mlflow_client()
    resume = False  # MLFLOW_RUN_ID's run: resumed (mlflow.start_run) when filled
    existing = None
    if run_id is not None:
        existing = _get_mlflow_run(client, run_id)
    elif (active := mlflow.active_run()) is not None:
        run_id = str(active.info.run_id)
        existing = _get_mlflow_run(client, run_id)
    elif env_run := os.environ.get("MLFLOW_RUN_ID"):
        run_id, resume = env_run, True
        existing = _get_mlflow_run(client, run_id)
    else:
        try:
            run_id = str(mlflow.start_run().info.run_id)
        except Exception as exc:
            raise _one_line("MLflow", exc) from exc
    if existing is not None:
        _check_params(run_id, dict(existing.data.params), payload.params)
    session = _Session("MLflow", run_id, own=existing is None, new=existing is None,
                       yours=existing is not None)

    def send(p: TrackingPayload, folder: Path) -> None:
        if resume:
            try:
                mlflow.start_run(run_id=run_id)
            except Exception as exc:
                raise _one_line(f"MLflow run {run_id!r}", exc) from exc
            session.own = True
        try:
            _send_mlflow(client, entities, run_id, p, folder, artifact_path)
        except Exception as exc:
            raise _one_line(f"MLflow run {run_id!r}", exc) from exc

    session._send = send
    try:
        yield session
    except BaseException:  # Ctrl-C and SIGTERM too: no run is left half-filled and open
        if session.own:
            with _quiet():
                mlflow.end_run(status="FAILED")
                session.ended_failed = True
        if session.new:
            with _quiet():
                client.delete_run(run_id)
                session.removed = True
        raise
    if session.own:
        try:
            mlflow.end_run()
        except Exception as exc:
            session.failed = True
            raise _one_line(f"MLflow run {run_id!r}", exc) from exc


def _check_params(run_id: str, logged: Mapping[str, str], params: Mapping[str, str]) -> None:
    """MLflow refuses to change a parameter: a run that has one of the report's with another
    value is refused before anything is logged into it (or into another tracker)."""
    for key, value in params.items():
        if key in logged and logged[key] != value:
            raise RagReportError(
                f"MLflow run {run_id!r}: the parameter {key!r} was logged with the value "
                f"{_cut(logged[key], 100)!r} before, this report's is {_cut(value, 100)!r} "
                "(MLflow does not change a parameter): log into another run")


@contextmanager
def _quiet() -> Iterator[None]:
    try:
        yield
    except Exception:  # already failing: the first error is the one reported
        return


def _send_mlflow(client: Any, entities: Any, run_id: str, p: TrackingPayload, folder: Path,
                 artifact_path: str) -> None:
    import time

    now = int(time.time() * 1000)
    params = [entities.Param(k, v) for k, v in p.params.items()]
    tags = [entities.RunTag(k, v) for k, v in p.tags.items()]
    metrics = [entities.Metric(k, v, now, 0) for k, v in p.metrics.items()]
    metrics += [entities.Metric(k, v, now, step) for k, s in p.steps.items()
                for step, v in s.points]
    # MLflow's limits per call: 100 parameters, 100 tags, 1000 metrics, 1000 in all
    for chunk in _batches(params, 100):
        client.log_batch(run_id, params=chunk)
    for chunk in _batches(tags, 100):
        client.log_batch(run_id, tags=chunk)
    for chunk in _batches(metrics, 1000):
        client.log_batch(run_id, metrics=chunk)
    client.log_artifacts(run_id, str(folder), artifact_path)
    client.set_tag(run_id, "ragreport.complete", "true")


# ---- W&B ------------------------------------------------------------------------------------

def check_wandb() -> None:
    """Before any work: ``wandb`` is installed (the run itself starts only when the report
    is logged: a run is never left without one).

    Raises
    ------
    RagReportError
        Not installed (the message names ``pip install 'ragreport[wandb]'``), or
        ``WANDB_INIT_TIMEOUT`` set to something else than a number of seconds above 0.
    """
    _import("wandb", "wandb")
    _wandb_init_timeout()


def log_to_wandb(report: Report, run: Any = None, *, project: str | None = None,
                 artifact_name: str = "ragreport-report",
                 rendered: Mapping[str, str] | None = None,
                 template_dir: str | os.PathLike[str] | None = None,
                 workers: Mapper | None = None) -> str:
    """Log ``report`` into a W&B run; returns the run's id.

    The run: ``run`` when given, else the active one (``wandb.run``), else a new run
    (``wandb.init``: ``project``, else ``WANDB_PROJECT``, else ``ragreport``; ``WANDB_MODE``,
    ``WANDB_DIR``, ``WANDB_RUN_ID`` and W&B's other variables apply), finished when everything
    is logged. The metrics go into the run's summary; each curve is a series of rows
    (``run.log``) with its step in its own column (``K``, or ``recall_pct`` for the
    precision-recall curve), declared with ``define_metric`` so that W&B's charts draw it
    against K (in a run of yours these rows follow your own: its step counter advances by
    one per row); the parameters and tags go into the run's config (values W&B had under the
    same keys are replaced); the three outputs are one artifact (``artifact_name``, type
    ``ragreport-report``).

    Raises
    ------
    RagReportError
        ``wandb`` not installed (``pip install 'ragreport[wandb]'``), a run that cannot be
        started (no API key online, a bad ``WANDB_MODE``, no answer from the server within
        ``WANDB_INIT_TIMEOUT`` seconds: 15 unless set) or that refuses the data. (An
        unwritable ``WANDB_DIR`` is no error: W&B then writes to a temporary folder.)
    """
    payload = tracking_payload(report)
    with _artifact_dir(report, rendered, template_dir, workers) as folder, \
            _wandb_session(run, project, artifact_name) as session:
        session.send(payload, folder)
    return session.run_id


@contextmanager
def _wandb_session(run: Any, project: str | None, artifact_name: str) -> Iterator[_Session]:
    """The W&B run to log into, open for the block (see :func:`log_to_wandb`); a run started
    here is finished on leaving, as failed (exit code 1) when the block raises."""
    wandb = _import("wandb", "wandb")
    started = False
    if run is None:
        run = wandb.run
    if run is None:
        run = _wandb_init(wandb, project)
        started = True
    run_id = str(run.id)

    def send(p: TrackingPayload, folder: Path) -> None:
        try:
            _send_wandb(wandb, run, p, folder, artifact_name)
        except Exception as exc:
            raise _one_line(f"W&B run {run_id!r}", exc) from exc

    session = _Session("W&B", run_id, own=started, new=started, yours=not started,
                       _send=send)
    try:
        yield session
    except BaseException:  # Ctrl-C and SIGTERM too: no run is left half-filled and open
        if started:
            with _quiet():
                run.finish(exit_code=1)
                session.ended_failed = True
        raise
    if started:
        try:
            run.finish()
        except Exception as exc:
            session.failed = True
            raise _one_line(f"W&B run {run_id!r}", exc) from exc


#: Seconds ``wandb.init`` waits for W&B when ``WANDB_INIT_TIMEOUT`` is not set (W&B's own
#: default, 90 s, kept a CI job waiting a minute and a half for an unreachable server).
WANDB_INIT_TIMEOUT = 15.0


def _wandb_init_timeout() -> float | None:
    """``WANDB_INIT_TIMEOUT`` when set (a number of seconds above 0), else ``None``.

    Raises
    ------
    RagReportError
        Not a number above 0.
    """
    import math

    text = os.environ.get("WANDB_INIT_TIMEOUT", "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise RagReportError(f"WANDB_INIT_TIMEOUT must be a number of seconds above 0, "
                             f"not {_cut(text, 60)!r}")
    return value


def _wandb_init(wandb: Any, project: str | None) -> Any:
    """``wandb.init`` of a new run, quiet, waiting at most ``WANDB_INIT_TIMEOUT`` seconds
    (the variable when set, else :data:`WANDB_INIT_TIMEOUT`)."""
    settings: dict[str, Any] = {"silent": True, "console": "off"}
    given = _wandb_init_timeout()
    if given is None:
        settings["init_timeout"] = WANDB_INIT_TIMEOUT
    try:  # WANDB_SILENT: its login prints "Loaded credentials..." despite silent=
        with _env_defaults({"WANDB_SILENT": "true"}):
            return wandb.init(project=project or os.environ.get("WANDB_PROJECT")
                              or "ragreport", job_type="evaluation",
                              settings=wandb.Settings(**settings))
    except Exception as exc:
        err = _one_line("W&B", exc)
        text = str(err)
        advice = " Consider increasing the init_timeout"
        if advice in text:  # W&B's advice names a Python setting: say the variable
            text = text.split(advice)[0]
            text += (f" (no run started within {given or WANDB_INIT_TIMEOUT:g} s; "
                     f"WANDB_INIT_TIMEOUT sets how long to wait)")
            err = RagReportError(text)
        raise err from exc


def _send_wandb(wandb: Any, run: Any, p: TrackingPayload, folder: Path,
                artifact_name: str) -> None:
    run.config.update({**p.params, **p.tags}, allow_val_change=True)
    axes: dict[str, dict[int, dict[str, float]]] = {}
    for name, series in p.steps.items():
        rows = axes.setdefault(series.axis, {})
        for step, value in series.points:
            rows.setdefault(step, {})[name] = value
    for axis in axes:
        run.define_metric(axis, hidden=True)
    for name, series in p.steps.items():
        run.define_metric(name, step_metric=series.axis)
    for axis, rows in axes.items():
        for step in sorted(rows):
            run.log({axis: step, **rows[step]})
    run.summary.update(p.metrics)
    artifact = wandb.Artifact(artifact_name, type="ragreport-report",
                              metadata={"sha256": {
                                  name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
                                  for name in ARTIFACT_NAMES.values()}})
    for name in ARTIFACT_NAMES.values():
        artifact.add_file(str(folder / name), name=name)
    run.log_artifact(artifact)
    run.config.update({"ragreport.complete": "true"}, allow_val_change=True)
