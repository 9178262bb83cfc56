"""Experiment tracking: a report's numbers, files and conventions in MLflow or W&B.

A view over the report data (:class:`~.model.Report`): it reads the numbers the report holds
and never computes one. :func:`~.payload.tracking_payload` turns a report into plain
dictionaries (metrics, curves, parameters, tags), the same for both trackers;
:func:`~.track_mlflow.log_to_mlflow` and :func:`~.track_wandb.log_to_wandb` send them with
the HTML, Markdown and JSON outputs, and :func:`log_to_trackers` (here) to both at once.
``mlflow`` and ``wandb`` are imported only inside those functions (the extras
``ragreport[mlflow]`` and ``ragreport[wandb]``).

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

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ..errors import RagReportError
from .payload import Session, artifact_dir, tracking_payload
from .track_mlflow import mlflow_session
from .track_wandb import wandb_session

if TYPE_CHECKING:
    from ..parallel import Mapper
    from .model import Report

__all__ = ["log_to_trackers"]


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
    sessions: list[Session] = []
    try:
        with artifact_dir(report, rendered, template_dir, workers) as folder, \
                ExitStack() as stack:
            if mlflow or mlflow_run is not None:
                sessions.append(stack.enter_context(
                    mlflow_session(mlflow_run, payload, "ragreport")))
            if wandb:
                sessions.append(stack.enter_context(
                    wandb_session(None, None, "ragreport-report")))
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
