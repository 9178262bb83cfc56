"""Weights & Biases (``report --wandb``, ``pip install 'ragreport[wandb]'``): a report logged
into a run started (or the active one); ``wandb`` imported only inside the functions
(:mod:`.tracking` explains what is logged)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RagReportError
from .payload import (
    ARTIFACT_NAMES,
    Session,
    TrackingPayload,
    artifact_dir,
    cut,
    env_defaults,
    import_extra,
    quiet,
    tracker_error,
    tracking_payload,
)

if TYPE_CHECKING:
    from ..parallel import Mapper
    from .model import Report

__all__ = ["WANDB_INIT_TIMEOUT", "check_wandb", "log_to_wandb", "wandb_session"]


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
    import_extra("wandb", "wandb")
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
    with artifact_dir(report, rendered, template_dir, workers) as folder, \
            wandb_session(run, project, artifact_name) as session:
        session.send(payload, folder)
    return session.run_id


@contextmanager
def wandb_session(run: Any, project: str | None, artifact_name: str) -> Iterator[Session]:
    """The W&B run to log into, open for the block (see :func:`log_to_wandb`); a run started
    here is finished on leaving, as failed (exit code 1) when the block raises."""
    wandb = import_extra("wandb", "wandb")
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
            raise tracker_error(f"W&B run {run_id!r}", exc) from exc

    session = Session("W&B", run_id, own=started, new=started, yours=not started,
                       _send=send)
    try:
        yield session
    except BaseException:  # Ctrl-C and SIGTERM too: no run is left half-filled and open
        if started:
            with quiet():
                run.finish(exit_code=1)
                session.ended_failed = True
        raise
    if started:
        try:
            run.finish()
        except Exception as exc:
            session.failed = True
            raise tracker_error(f"W&B run {run_id!r}", exc) from exc


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
                             f"not {cut(text, 60)!r}")
    return value


def _wandb_init(wandb: Any, project: str | None) -> Any:
    """``wandb.init`` of a new run, quiet, waiting at most ``WANDB_INIT_TIMEOUT`` seconds
    (the variable when set, else :data:`WANDB_INIT_TIMEOUT`)."""
    settings: dict[str, Any] = {"silent": True, "console": "off"}
    given = _wandb_init_timeout()
    if given is None:
        settings["init_timeout"] = WANDB_INIT_TIMEOUT
    try:  # WANDB_SILENT: its login prints "Loaded credentials..." despite silent=
        with env_defaults({"WANDB_SILENT": "true"}):
            return wandb.init(project=project or os.environ.get("WANDB_PROJECT")
                              or "ragreport", job_type="evaluation",
                              settings=wandb.Settings(**settings))
    except Exception as exc:
        err = tracker_error("W&B", exc)
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
