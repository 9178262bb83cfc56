"""Hostile-input catalogue: ``--mlflow``, ``--mlflow-run`` and ``--wandb``.

A tracking failure is one line on stderr and exit 2, never a traceback, and leaves the local
outputs as they were: the outputs are logged first and written only then (an older
``out.json`` stays byte for byte, checked by the harness for every case). A missing package,
a bad run id or an unreachable tracking server are refused before any work (at once, even
with MLflow's default retries); an unwritable store or a W&B run that cannot start come
after the report is built, before anything is written. The cases that succeed check what
the command wrote and that no process of the trackers (W&B's service) is left running.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hostile import QRELS, RUN, Case, CaseResult, run_case

BAD_ID = "0123456789abcdef0123456789abcdef"
FILES = {"qrels.txt": QRELS, "run.txt": RUN, "out.json": "an older report\n",
         "a-file": "not a folder\n"}
ARGS = ["report", "qrels.txt", "run.txt", "--json", "out.json", "--no-stats"]
STORE = {"MLFLOW_ALLOW_FILE_STORE": "true", "MLFLOW_TRACKING_URI": "file:{tmp}/mlruns"}
#: refused at once: nothing listens on port 9 (discard), and MLflow does not retry
UNREACHABLE = {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9",
               "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "5"}
OFFLINE = {"WANDB_MODE": "offline", "WANDB_DIR": "{tmp}", "WANDB_SILENT": "true",
           "WANDB_DATA_DIR": "{tmp}/wandb-data", "WANDB_CACHE_DIR": "{tmp}/wandb-cache",
           "WANDB_CONFIG_DIR": "{tmp}/wandb-config"}


def _hide(module: str) -> dict[str, str]:
    """A package that refuses to import, first on PYTHONPATH (as if not installed)."""
    return {f"hide/{module}/__init__.py": f"raise ImportError('No module named {module}')\n"}


def _no_run_logged(result: CaseResult) -> None:
    store = result.tmp / "mlruns"
    runs = [p for p in store.glob("*/*") if p.is_dir() and p.name != ".trash"] \
        if store.exists() else []
    assert runs == [], runs


def _mlflow_run_deleted(result: CaseResult) -> None:
    """One run in the file store, deleted (``lifecycle_stage: deleted`` in its meta.yaml),
    with no metric."""
    (meta,) = [m for m in (result.tmp / "mlruns").glob("*/*/meta.yaml")
               if "run_id:" in m.read_text(encoding="utf-8")]
    assert "lifecycle_stage: deleted" in meta.read_text(encoding="utf-8")
    assert list((meta.parent / "metrics").glob("*")) == []


def _logged(result: CaseResult) -> None:
    out = json.loads((result.tmp / "out.json").read_text(encoding="utf-8"))
    assert out["runs"] == ["tag"]
    assert result.stderr.splitlines()[0] == "wrote out.json"


def _mlflow_logged(result: CaseResult) -> None:
    _logged(result)
    line = result.stderr.splitlines()[-1]
    assert line.startswith("logged to MLflow run "), result.stderr
    run_id = line.split()[-1]
    metrics = next((result.tmp / "mlruns").glob(f"*/{run_id}/metrics"))
    value = float((metrics / "nDCG_at_10").read_text().split()[1])
    out = json.loads((result.tmp / "out.json").read_text(encoding="utf-8"))
    assert value == out["means"]["tag"]["nDCG@10"]


def _wandb_logged(result: CaseResult) -> None:
    _logged(result)
    line = result.stderr.splitlines()[-1]
    assert line.startswith("logged to W&B run "), result.stderr
    run_id = line.split()[-1]
    assert list(result.tmp.glob(f"wandb/offline-run-*-{run_id}/run-{run_id}.wandb"))


def _home(tmp: Path) -> None:
    (tmp / "home").mkdir()


CASES = [
    # refused before any work
    Case("mlflow-not-installed", [*ARGS, "--mlflow"], {**FILES, **_hide("mlflow")},
         stderr=r"mlflow is not installed: pip install 'ragreport\[mlflow\]'$",
         env={"PYTHONPATH": "{tmp}/hide"}),
    Case("wandb-not-installed", [*ARGS, "--wandb"], {**FILES, **_hide("wandb")},
         stderr=r"wandb is not installed: pip install 'ragreport\[wandb\]'$",
         env={"PYTHONPATH": "{tmp}/hide"}),
    Case("mlflow-run-not-found", [*ARGS, "--mlflow-run", BAD_ID], FILES,
         stderr=rf"error: MLflow run '{BAD_ID}': Run '{BAD_ID}' not found$", env=STORE,
         check=_no_run_logged),
    Case("mlflow-run-id-a-path", [*ARGS, "--mlflow-run", "../../etc"], FILES,
         stderr=r"error: MLflow run '\.\./\.\./etc': Invalid value", env=STORE,
         check=_no_run_logged),
    Case("mlflow-run-id-empty", [*ARGS, "--mlflow-run", ""], FILES,
         stderr=r"error: MLflow run '': ", env=STORE, check=_no_run_logged),
    Case("mlflow-env-run-not-found", [*ARGS, "--mlflow"], FILES,
         stderr=rf"error: MLflow run '{BAD_ID}': Run '{BAD_ID}' not found$",
         env={**STORE, "MLFLOW_RUN_ID": BAD_ID}, check=_no_run_logged),
    Case("mlflow-unreachable-given-run", [*ARGS, "--mlflow-run", BAD_ID], FILES,
         stderr=r"error: MLflow run '.*': API request to http://127\.0\.0\.1:9/.*Connection "
                r"refused", env=UNREACHABLE),
    Case("mlflow-unreachable-server", [*ARGS, "--mlflow"], FILES,
         stderr=r"error: MLflow tracking server http://127\.0\.0\.1:9: API request to "
                r"http://127\.0\.0\.1:9/.*Connection refused", env=UNREACHABLE),
    # MLflow's own defaults retry for minutes: the check asks once (timeout: not 2 minutes),
    # before the inputs are read (the missing qrels file is not what is reported)
    Case("mlflow-unreachable-server-defaults",
         ["report", "missing.txt", "run.txt", "--json", "out.json", "--mlflow"], FILES,
         stderr=r"error: MLflow tracking server http://127\.0\.0\.1:9: .*Connection refused",
         env={"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}, timeout=30),
    # after the report is built, before anything is written
    Case("mlflow-store-under-a-file", [*ARGS, "--mlflow"], FILES,
         stderr=r"error: MLflow: .*Not a directory",
         env={**STORE, "MLFLOW_TRACKING_URI": "file:{tmp}/a-file/mlruns"}),
    Case("mlflow-file-store-refused", [*ARGS, "--mlflow"], FILES,
         stderr=r"error: MLflow: .*MLFLOW_ALLOW_FILE_STORE=true",
         env={"MLFLOW_TRACKING_URI": "file:{tmp}/mlruns"}),
    Case("wandb-bad-mode", [*ARGS, "--wandb"], FILES, stderr=r"error: W&B: .*mode",
         env={**OFFLINE, "WANDB_MODE": "sideways"}),
    # W&B's run is started before MLflow receives anything: the MLflow run created for the
    # report is deleted, empty, and the error is W&B's alone
    Case("wandb-fails-with-mlflow", [*ARGS, "--mlflow", "--wandb"], FILES,
         stderr=r"error: W&B: [^(]*mode[^(]*$", check=_mlflow_run_deleted,
         env={**STORE, **OFFLINE, "WANDB_MODE": "sideways"}),
    Case("wandb-online-without-key", [*ARGS, "--wandb"], FILES,
         stderr=r"error: W&B: No API key configured",
         env={**OFFLINE, "WANDB_MODE": "online", "HOME": "{tmp}/home", "WANDB_API_KEY": ""},
         setup=_home),
    # online, its server unreachable: W&B's own lines ("Loaded credentials...") stay quiet,
    # one line, after ragreport's 15 s init timeout (W&B's own default, 90 s, is over the
    # harness's 60 s), naming the variable that changes it
    Case("wandb-online-unreachable", [*ARGS, "--wandb"], FILES,
         stderr=r"^ragreport: error: W&B: .*127\.0\.0\.1:9.*connection refused \(no run "
                r"started within 15 s; WANDB_INIT_TIMEOUT sets how long to wait\)$",
         env={**{k: v for k, v in OFFLINE.items() if k != "WANDB_SILENT"},
              "WANDB_MODE": "online", "HOME": "{tmp}/home",
              "WANDB_BASE_URL": "http://127.0.0.1:9",
              "WANDB_API_KEY": "0123456789012345678901234567890123456789"},
         setup=_home, timeout=60),
    # W&B's wait for its server (WANDB_INIT_TIMEOUT) must be seconds above 0: refused before
    # any work (the missing qrels file is not what is reported)
    *[Case(f"wandb-init-timeout-{i}", ["report", "missing.txt", "run.txt", "--json",
                                       "out.json", "--wandb"], FILES,
           stderr=rf"error: WANDB_INIT_TIMEOUT must be a number of seconds above 0, not "
                  rf"'{re.escape(bad.strip())}'$", env={**OFFLINE, "WANDB_INIT_TIMEOUT": bad})
      for i, bad in enumerate(["abc", "0", "-5", "nan", "inf", "1e999"])],
    # what works: the outputs written, the run logged, no tracker process left behind
    Case("mlflow-logged", [*ARGS, "-m", "nDCG@10", "--mlflow"], FILES, exit=0, env=STORE,
         unchanged=["qrels.txt", "run.txt"], check=_mlflow_logged),
    Case("wandb-logged", [*ARGS, "-m", "nDCG@10", "--wandb"], FILES, exit=0, env=OFFLINE,
         unchanged=["qrels.txt", "run.txt"], check=_wandb_logged),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)
