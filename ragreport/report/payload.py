"""What a report sends to an experiment tracker (:mod:`.tracking`): its numbers as plain
dictionaries (:func:`tracking_payload`, the same for MLflow and W&B), its outputs rendered
into a folder of artifacts, and what the two trackers' modules share (the optional import,
the one-line error, the tracked run being filled: :class:`Session`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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

__all__ = ["ARTIFACT_NAMES", "DB_SCHEMES", "Session", "StepSeries", "TrackingPayload",
           "artifact_dir", "check_names", "cut", "db_store_hint", "env_defaults",
           "import_extra", "metric_name", "quiet", "render_outputs", "tracker_error",
           "tracking_payload"]


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


def cut(text: str, limit: int) -> str:
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
        params[key] = cut(params[key], MAX_PARAM)

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
        tags[key] = cut(tags[key], MAX_TAG)
    check_names(out)
    return out


def check_names(p: TrackingPayload) -> None:
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
def artifact_dir(report: Report, rendered: Mapping[str, str] | None,
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


def import_extra(module: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise RagReportError(f"{module} is not installed: pip install 'ragreport[{extra}]'"
                             ) from None


#: Tracking URI schemes of MLflow's database store (``mysql+pymysql://`` counts as mysql).
DB_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")


def db_store_hint(uri: str, module: str) -> str:
    """MLflow 3's default tracking URI is ``sqlite:///mlflow.db``: a database store, which
    ``mlflow-skinny`` (``ragreport[mlflow]``) cannot open."""
    return (f"MLflow: the tracking URI {uri} needs the module {module!r}, which "
            f"mlflow-skinny ('ragreport[mlflow]') does not install: pip install mlflow "
            f"(the full package) for a database store, or set MLFLOW_TRACKING_URI to your "
            f"tracking server (or to file:./mlruns with MLFLOW_ALLOW_FILE_STORE=true)")


def tracker_error(what: str, exc: BaseException) -> RagReportError:
    """A tracker's exception as one readable line (its message's lines joined)."""
    text = " ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip())
    text = text or type(exc).__name__
    if len(text) > 1000:
        text = text[:1000] + "..."
    if what.startswith("MLflow") and isinstance(exc, ModuleNotFoundError):
        try:
            uri = str(import_extra("mlflow", "mlflow").get_tracking_uri())
        except Exception:
            uri = "?"
        return RagReportError(db_store_hint(uri, exc.name or text))
    return RagReportError(f"{what}: {text}")


@contextmanager
def env_defaults(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` in the environment for the block, where the user has not set them."""
    added = [k for k in values if k not in os.environ]
    for key in added:
        os.environ[key] = values[key]
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


@dataclass
class Session:
    """One tracked run while a report is logged into it (see :func:`mlflow_session`)."""

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
def quiet() -> Iterator[None]:
    try:
        yield
    except Exception:  # already failing: the first error is the one reported
        return
