"""MLflow (``report --mlflow``, ``pip install 'ragreport[mlflow]'``): a report logged into a
run found or created, its parameters compared with a given run's; ``mlflow`` imported only
inside the functions (:mod:`.tracking` explains what is logged)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RagReportError
from .payload import (
    DB_SCHEMES,
    Session,
    TrackingPayload,
    artifact_dir,
    cut,
    db_store_hint,
    env_defaults,
    import_extra,
    quiet,
    tracker_error,
    tracking_payload,
)

if TYPE_CHECKING:
    from ..parallel import Mapper
    from .model import Report

__all__ = ["check_mlflow", "log_to_mlflow", "mlflow_session"]


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
    mlflow = import_extra("mlflow", "mlflow")
    if run_id is None:
        run_id = os.environ.get("MLFLOW_RUN_ID") or None
    try:
        uri = str(mlflow.get_tracking_uri())
    except Exception as exc:
        raise tracker_error("MLflow", exc) from exc
    scheme = uri.split(":", 1)[0].lower()
    remote = scheme in ("http", "https")
    if scheme.split("+", 1)[0] in DB_SCHEMES:
        import importlib.util

        for module in ("sqlalchemy", "alembic"):
            if importlib.util.find_spec(module) is None:
                raise RagReportError(db_store_hint(uri, module))
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
                raise tracker_error(f"MLflow tracking server {uri}", exc) from exc


#: MLflow's HTTP settings during :func:`check_mlflow` when the user has not set them: its
#: defaults retry an unreachable server for minutes (7 retries, exponential backoff, 120 s
#: timeout), this check answers in seconds.
_FAIL_FAST = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}


def _fail_fast() -> AbstractContextManager[None]:
    """:data:`_FAIL_FAST` in the environment for the block (the user's own values kept)."""
    return env_defaults(_FAIL_FAST)


def _mlflow_client() -> Any:
    tracking = import_extra("mlflow.tracking", "mlflow")
    try:
        return tracking.MlflowClient()
    except Exception as exc:
        raise tracker_error("MLflow", exc) from exc


def _get_mlflow_run(client: Any, run_id: str) -> Any:
    try:
        run = client.get_run(run_id)
    except Exception as exc:
        raise tracker_error(f"MLflow run {run_id!r}", exc) from exc
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
    with artifact_dir(report, rendered, template_dir, workers) as folder, \
            mlflow_session(run_id, payload, artifact_path) as session:
        session.send(payload, folder)
    return session.run_id


@contextmanager
def mlflow_session(run_id: str | None, payload: TrackingPayload,
                    artifact_path: str) -> Iterator[Session]:
    """The MLflow run to log into, open for the block (see :func:`log_to_mlflow`); a run
    started here is ended on leaving, as failed (and deleted when created here) when the
    block raises."""
    mlflow = import_extra("mlflow", "mlflow")
    entities = import_extra("mlflow.entities", "mlflow")
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
            raise tracker_error("MLflow", exc) from exc
    if existing is not None:
        _check_params(run_id, dict(existing.data.params), payload.params)
    session = Session("MLflow", run_id, own=existing is None, new=existing is None,
                       yours=existing is not None)

    def send(p: TrackingPayload, folder: Path) -> None:
        if resume:
            try:
                mlflow.start_run(run_id=run_id)
            except Exception as exc:
                raise tracker_error(f"MLflow run {run_id!r}", exc) from exc
            session.own = True
        try:
            _send_mlflow(client, entities, run_id, p, folder, artifact_path)
        except Exception as exc:
            raise tracker_error(f"MLflow run {run_id!r}", exc) from exc

    session._send = send
    try:
        yield session
    except BaseException:  # Ctrl-C and SIGTERM too: no run is left half-filled and open
        if session.own:
            with quiet():
                mlflow.end_run(status="FAILED")
                session.ended_failed = True
        if session.new:
            with quiet():
                client.delete_run(run_id)
                session.removed = True
        raise
    if session.own:
        try:
            mlflow.end_run()
        except Exception as exc:
            session.failed = True
            raise tracker_error(f"MLflow run {run_id!r}", exc) from exc


def _check_params(run_id: str, logged: Mapping[str, str], params: Mapping[str, str]) -> None:
    """MLflow refuses to change a parameter: a run that has one of the report's with another
    value is refused before anything is logged into it (or into another tracker)."""
    for key, value in params.items():
        if key in logged and logged[key] != value:
            raise RagReportError(
                f"MLflow run {run_id!r}: the parameter {key!r} was logged with the value "
                f"{cut(logged[key], 100)!r} before, this report's is {cut(value, 100)!r} "
                "(MLflow does not change a parameter): log into another run")


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
