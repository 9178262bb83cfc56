"""Experiment tracking (:mod:`ragreport.report.tracking`): what was logged is read back.

MLflow from a local file store in ``tmp_path`` (``MlflowClient().get_run``,
``get_metric_history``, ``list_artifacts`` / ``download_artifacts``), W&B from an offline run
directory (its ``.wandb`` file, read record by record with wandb's own protobuf messages).
Every logged value is compared with the report's own numbers: every measure of every run,
every point of every curve, every convention and input hash, the three files byte for byte.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from paths import user_docs

import ragreport
from ragreport.errors import RagReportError
from ragreport.examples import example_files
from ragreport.io.targets import load_targets
from ragreport.report import InputFile, Report, build_report
from ragreport.report.payload import (
    ARTIFACT_NAMES,
    metric_name,
    render_outputs,
    tracking_payload,
)

GENERATED = "2026-01-02T03:04:05Z"


# ---- the names ------------------------------------------------------------------------------

@pytest.mark.parametrize(("measure", "name"), [
    ("nDCG@10", "nDCG_at_10"),
    ("P@5", "P_at_5"),
    ("R@1000", "R_at_1000"),
    ("RR", "RR"),
    ("RR@10", "RR_at_10"),
    ("AP", "AP"),
    ("Rprec", "Rprec"),
    ("HitRate@5", "HitRate_at_5"),
    ("P(rel=2)@5", "P_rel_2_at_5"),
    ("nDCG(gain=exp)@10", "nDCG_gain_exp_at_10"),
    ("RBP(p=0.5,rel=1)@10", "RBP_p_0.5_rel_1_at_10"),
    ("RBP(p=0.5)", "RBP_p_0.5"),
    ("IPrec@0.5", "IPrec_at_0.5"),
    ("NumRelRet(rel=1)", "NumRelRet_rel_1"),
    ("R_cap@10", "R_cap_at_10"),
    ("P@K denominator", "P_at_K_denominator"),  # a convention's name
    ("max depth", "max_depth"),
    ("a/b:c d", "a_b_c_d"),  # slashes (MLflow folders), colons, spaces
    ("précision", "pr_cision"),  # non-ASCII
    ("..", "__"),  # MLflow reads dots alone as a path
    ("", "_"),
])
def test_metric_name_table(measure: str, name: str) -> None:
    assert metric_name(measure) == name


def test_every_measure_name_is_accepted_by_mlflow() -> None:
    from mlflow.utils.validation import _validate_metric_name

    from ragreport.measures import FAMILIES, parse_measure

    names = ["nDCG(gain=exp)@10", "RBP(p=0.8,rel=2)@20", "IPrec@0.1", "P(rel=3)@5"]
    names += [f.name + ("@10" if f.cutoff != "none" else "") for f in FAMILIES.values()
              if f.name != "IPrec"]
    for text in names:
        name = metric_name(str(parse_measure(text)))
        _validate_metric_name(name)  # raises on a name MLflow refuses
        _validate_metric_name(f"run_1/{name}_ci_lower")


# ---- reports --------------------------------------------------------------------------------

def _inputs() -> list[InputFile]:
    files = example_files()
    return [InputFile.from_path("qrels", files.qrels),
            *(InputFile.from_path("run", p) for p in files.runs)]


@pytest.fixture(scope="module")
def report2() -> Report:
    """Two runs (bm25 the baseline), intervals and tests, the input hashes."""
    files = example_files()
    results = [ragreport.evaluate(files.qrels, r) for r in files.runs]
    return build_report(results, load_targets(None), generated_at=GENERATED, resamples=200,
                        curve_resamples=50, inputs=_inputs(), command="ragreport report x")


@pytest.fixture(scope="module")
def report1() -> Report:
    """One run, every bounded measure with an interval."""
    files = example_files()
    result = ragreport.evaluate(files.qrels, files.runs[0],
                                ["nDCG@10", "P@5", "R@10", "RR", "AP", "P(rel=2)@3"])
    return build_report([result], generated_at=GENERATED, resamples=100, curve_resamples=50)


@pytest.fixture(scope="module")
def rendered2(report2: Report) -> dict[str, str]:
    return render_outputs(report2)


def expected_metrics(report: Report) -> dict[str, float]:
    """The report's numbers under the documented names, from the report's own fields."""
    many = len(report.runs) > 1
    out: dict[str, float] = {}
    for row in report.summary:
        for c in row.cells:
            base = (f"{c.run}/" if many else "") + metric_name(row.measure)
            out[base] = c.value
            for suffix, value in (("_ci_lower", c.ci_lower), ("_ci_upper", c.ci_upper),
                                  ("_delta", c.delta), ("_p_value", c.p_value),
                                  ("_total", c.total)):
                if value is not None:
                    out[base + suffix] = value
    return out


def expected_curves(report: Report) -> dict[str, list[tuple[int, float]]]:
    many = len(report.runs) > 1
    out: dict[str, list[tuple[int, float]]] = {}
    for curve in report.curves:
        for run, ys in curve.series.items():
            base = (f"{run}/" if many else "") + metric_name(curve.family) + "_at_K"
            out[base] = list(zip(curve.ks, ys, strict=True))
            lo, hi = curve.bands[run]
            out[base + "_ci_lower"] = list(zip(curve.ks, lo, strict=True))
            out[base + "_ci_upper"] = list(zip(curve.ks, hi, strict=True))
    assert report.pr_curve is not None
    for run, ys in report.pr_curve.series.items():
        out[(f"{run}/" if many else "") + "IPrec_at_recall"] = list(
            zip(range(0, 101, 10), ys, strict=True))
    return out


def expected_params(report: Report) -> dict[str, str]:
    assert report.stats is not None
    out = {"ragreport.runs": ", ".join(report.runs), "ragreport.baseline": report.baseline,
           "ragreport.measures": ", ".join(report.measures),
           "ragreport.k_max": str(report.k_max),
           "ragreport.stats.resamples": str(report.stats.resamples),
           "ragreport.stats.curve_resamples": str(report.stats.curve_resamples),
           "ragreport.stats.seed": str(report.stats.seed),
           "ragreport.stats.level": "0.95", "ragreport.stats.alpha": "0.05",
           "ragreport.stats.interval": report.stats.interval,
           "ragreport.stats.test": report.stats.test,
           "ragreport.stats.correction": report.stats.correction}
    out.update({f"ragreport.conventions.{metric_name(k)}": v
                for k, v in report.conventions.items()})
    return out


def expected_tags(report: Report) -> dict[str, str]:
    out = {"ragreport.version": report.version, "ragreport.generated_at": GENERATED,
           "ragreport.title": report.title,
           "ragreport.passed": "true" if report.all_passed else "false"}
    if report.command:
        out["ragreport.command"] = report.command
    runs = [f for f in report.inputs if f.role == "run"]
    for f in report.inputs:
        key = "ragreport.input." + (f.role if f.role != "run" or len(runs) == 1
                                    else f"run.{runs.index(f) + 1}")
        out[key + ".sha256"] = f.sha256
        out[key + ".path"] = f.path
    return out


def test_payload_is_the_reports_numbers(report2: Report) -> None:
    p = tracking_payload(report2)
    assert p.metrics == expected_metrics(report2)
    # the conventions the issue names are there: ties, measures, k_max, resamples, seed
    assert p.params["ragreport.conventions.ties"] == "trec_eval's order"
    assert {k: v.points for k, v in p.steps.items()} == expected_curves(report2)
    assert p.params == expected_params(report2)
    assert p.tags == expected_tags(report2)
    # the input hashes are the files' SHA-256, computed here again
    files = example_files()
    assert p.tags["ragreport.input.qrels.sha256"] == hashlib.sha256(
        files.qrels.read_bytes()).hexdigest()
    assert p.tags["ragreport.input.run.2.sha256"] == hashlib.sha256(
        files.runs[1].read_bytes()).hexdigest()
    assert "bm25/nDCG_at_10_delta" not in p.metrics  # the baseline has no delta
    assert p.metrics["tfidf/nDCG_at_10_delta"] == pytest.approx(
        p.metrics["tfidf/nDCG_at_10"] - p.metrics["bm25/nDCG_at_10"], abs=1e-15)


def test_one_run_has_no_prefix(report1: Report) -> None:
    p = tracking_payload(report1)
    assert p.metrics == expected_metrics(report1)
    assert "nDCG_at_10" in p.metrics and "P_rel_2_at_3_ci_upper" in p.metrics
    assert not any("/" in k for k in [*p.metrics, *p.steps])


def test_run_names_that_collide_are_refused() -> None:
    qrels = {"q": {"a": 1}}
    runs = [ragreport.evaluate(qrels, {"q": ["a"]}, ["P@1"], name=n)
            for n in ("dense v2", "dense_v2")]
    rep = build_report(runs, stats=False, generated_at=GENERATED)
    with pytest.raises(RagReportError, match=r"'dense v2' and 'dense_v2'.*--name"):
        tracking_payload(rep)
    long = [ragreport.evaluate(qrels, {"q": ["a"]}, ["P@1"], name=n)
            for n in ("x" * 300, "y")]
    with pytest.raises(RagReportError, match="longer than 250"):
        tracking_payload(build_report(long, stats=False, generated_at=GENERATED))


def test_a_name_that_is_also_a_folder_is_refused() -> None:
    """MLflow's file store keeps ``a/b`` in a folder ``a``: ``a`` cannot be a metric too
    (the run names' prefixes make it impossible today; the check keeps it so)."""
    from ragreport.report.payload import StepSeries, TrackingPayload, check_names

    with pytest.raises(RagReportError, match="'a' is used twice"):
        check_names(TrackingPayload(metrics={"a": 1.0, "a/b": 2.0}))
    with pytest.raises(RagReportError, match="'x_at_K' is used twice"):
        check_names(TrackingPayload(metrics={"x_at_K": 1.0},
                                     steps={"x_at_K": StepSeries("K", [(1, 1.0)])}))
    check_names(TrackingPayload(metrics={"a/b": 1.0, "a/c": 2.0}))


@pytest.fixture(scope="module")
def sliced() -> Report:
    """Two runs over query slices (every other query "even"/"odd", all in "all")."""
    files = example_files()
    results = [ragreport.evaluate(files.qrels, r, ["nDCG@10", "RR"]) for r in files.runs]
    tags = {q: ["even" if i % 2 == 0 else "odd", "all"]
            for i, q in enumerate(results[0].query_ids)}
    return build_report(results, slices=tags, generated_at=GENERATED, resamples=100,
                        curve_resamples=20)


def expected_slices(report: Report) -> dict[str, float]:
    assert report.slices is not None
    out: dict[str, float] = {}
    for sl in report.slices.slices:
        for row in sl.rows:
            for c in row.cells:
                base = f"{c.run}/slice_{sl.name}/{metric_name(row.measure)}"
                for suffix, value in (("", c.value), ("_ci_lower", c.ci_lower),
                                      ("_ci_upper", c.ci_upper), ("_delta", c.delta),
                                      ("_p_value", c.p_value)):
                    if value is not None:
                        out[base + suffix] = value
        for run, n in sl.queries.items():
            out[f"{run}/slice_{sl.name}/queries"] = n
    return out


def test_slices_and_latency(sliced: Report) -> None:
    p = tracking_payload(sliced)
    want = expected_slices(sliced)
    assert {k: p.metrics[k] for k in want} == want
    assert set(p.metrics) == set(want) | set(expected_metrics(sliced))
    assert p.metrics["tfidf/slice_all/nDCG_at_10"] == p.metrics["tfidf/nDCG_at_10"]
    assert p.metrics["bm25/slice_even/queries"] == 21
    assert "tfidf/slice_odd/RR_p_value" in p.metrics  # 20 queries: tested
    assert p.params["ragreport.slices.min_queries"] == str(sliced.slices.min_queries)
    run = ragreport.load_run([{"query_id": "q1", "retrieved": ["a", "b"], "latency_ms": 12.5},
                              {"query_id": "q2", "retrieved": ["c"], "latency_ms": 30}])
    result = ragreport.evaluate({"q1": {"a": 1}, "q2": {"d": 1}}, run, ["RR"])
    p = tracking_payload(build_report([result], stats=False, generated_at=GENERATED))
    assert p.metrics == {"RR": 0.5, "latency_p50_ms": 21.25, "latency_p95_ms": 29.125,
                         "latency_max_ms": 30.0}


def test_document_level() -> None:
    """With a doc map: the document level's means and curves, and the redundancy."""
    qrels = {"q1": {"c1": 1, "c3": 1}, "q2": {"c4": 1}}
    run = {"q1": ["c2", "c1", "c3"], "q2": ["c4", "c5"]}
    doc_map = {"c1": "d1", "c2": "d1", "c3": "d2", "c4": "d3", "c5": "d3"}
    result = ragreport.evaluate(qrels, run, ["nDCG@3", "R@2"], doc_map=doc_map)
    rep = build_report([result], resamples=50, curve_resamples=20, generated_at=GENERATED)
    assert rep.document is not None
    p = tracking_payload(rep)
    want: dict[str, float] = {}
    for row in rep.document.summary:
        for c in row.cells:
            want[metric_name(row.measure) + "_doc"] = c.document
            assert c.ci_lower is not None and c.ci_upper is not None
            want[metric_name(row.measure) + "_doc_ci_lower"] = c.ci_lower
            want[metric_name(row.measure) + "_doc_ci_upper"] = c.ci_upper
    (dr,) = rep.document.runs
    want[f"redundancy_at_{dr.k}"] = dr.redundancy
    assert {k: v for k, v in p.metrics.items() if k not in expected_metrics(rep)} == want
    assert p.metrics["nDCG_at_3"] == rep.summary[0].cells[0].value != want["nDCG_at_3_doc"]
    for curve in rep.document.curves:
        ys = curve.series[dr.run]
        assert p.steps[metric_name(curve.family) + "_at_K_doc"].points == list(
            zip(curve.ks, ys, strict=True))
    assert p.steps["redundancy_at_K"].points == list(enumerate(dr.curve, 1))


def test_slice_names_that_collide_are_refused() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    result = ragreport.evaluate(qrels, {"q1": ["a"], "q2": ["b"]}, ["P@1"])
    rep = build_report([result], slices={"q1": ["hard case"], "q2": ["hard_case"]},
                       stats=False, generated_at=GENERATED)
    with pytest.raises(RagReportError, match=r"slices 'hard case' and 'hard_case'"):
        tracking_payload(rep)


# ---- MLflow ---------------------------------------------------------------------------------

@pytest.fixture
def mlflow_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    import mlflow

    uri = f"file:{tmp_path / 'mlruns'}"
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # mlflow 3 asks for it
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    for var in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_EXPERIMENT_ID"):
        monkeypatch.delenv(var, raising=False)
    mlflow.set_tracking_uri(uri)
    yield uri
    while mlflow.active_run() is not None:
        mlflow.end_run()


def read_mlflow(run_id: str, report: Report, tmp: Path) -> dict[str, Any]:
    """Everything the run holds, read back through MLflow's client."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    run = client.get_run(run_id)
    curves = {name: [(m.step, m.value) for m in sorted(client.get_metric_history(run_id, name),
                                                       key=lambda m: m.step)]
              for name in expected_curves(report)}
    files = {f.path for f in client.list_artifacts(run_id, "ragreport")}
    where = Path(client.download_artifacts(run_id, "ragreport", str(tmp)))
    texts = {key: (where / name).read_text(encoding="utf-8") for key, name
             in ARTIFACT_NAMES.items()}
    tags = {k: v for k, v in run.data.tags.items() if k.startswith("ragreport.")}
    return {"run": run, "metrics": run.data.metrics, "curves": curves, "params":
            run.data.params, "tags": tags, "files": files, "texts": texts}


def assert_mlflow_holds(got: dict[str, Any], report: Report, rendered: dict[str, str]) -> None:
    metrics = expected_metrics(report)
    curves = expected_curves(report)
    # every summary metric, and nothing else at step 0 but the curves' last points
    assert {k: got["metrics"][k] for k in metrics} == metrics
    assert set(got["metrics"]) == set(metrics) | set(curves)
    assert got["curves"] == curves  # every point of every curve, at step K
    for name, points in curves.items():  # a step metric's latest value is its last point
        assert got["metrics"][name] == points[-1][1]
    assert got["params"] == expected_params(report)
    assert got["tags"] == {**expected_tags(report), "ragreport.complete": "true"}
    assert got["files"] == {f"ragreport/{n}" for n in ARTIFACT_NAMES.values()}
    assert got["texts"] == rendered
    assert json.loads(got["texts"]["json"])["runs"] == report.runs


def test_mlflow_new_run_read_back(mlflow_store: str, report2: Report,
                                  rendered2: dict[str, str], tmp_path: Path) -> None:
    import mlflow

    run_id = report2.log_to_mlflow()  # renders the three outputs itself
    assert mlflow.active_run() is None  # the run it started is ended
    got = read_mlflow(run_id, report2, tmp_path / "dl")
    assert got["run"].info.status == "FINISHED"
    assert_mlflow_holds(got, report2, rendered2)


def test_mlflow_active_run_one_run_report(mlflow_store: str, report1: Report,
                                          tmp_path: Path) -> None:
    import mlflow

    rendered = render_outputs(report1)
    with mlflow.start_run() as active:
        mlflow.log_param("retriever", "bm25")  # the user's own parameters stay
        from ragreport.report.track_mlflow import log_to_mlflow

        run_id = log_to_mlflow(report1, rendered=rendered)
        assert run_id == active.info.run_id
        assert mlflow.active_run() is not None  # not ended: it is the user's run
    got = read_mlflow(run_id, report1, tmp_path / "dl")
    assert got["params"].pop("retriever") == "bm25"
    assert_mlflow_holds(got, report1, rendered)
    assert got["metrics"]["nDCG_at_10"] == report1.summary[0].cells[0].value


def test_mlflow_given_run_and_env_run(mlflow_store: str, report1: Report,
                                      monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    given = client.create_run("0").info.run_id
    rendered = render_outputs(report1)
    from ragreport.report.track_mlflow import log_to_mlflow

    assert log_to_mlflow(report1, given, rendered=rendered) == given
    assert_mlflow_holds(read_mlflow(given, report1, tmp_path / "a"), report1, rendered)
    env_run = client.create_run("0").info.run_id
    monkeypatch.setenv("MLFLOW_RUN_ID", env_run)  # as mlflow.start_run reads it
    assert log_to_mlflow(report1, rendered=rendered) == env_run
    assert_mlflow_holds(read_mlflow(env_run, report1, tmp_path / "b"), report1, rendered)
    assert len(client.search_runs(["0"])) == 2  # no other run was created


def test_mlflow_slices_read_back(mlflow_store: str, sliced: Report) -> None:
    from mlflow.tracking import MlflowClient

    from ragreport.report.track_mlflow import log_to_mlflow

    run_id = log_to_mlflow(sliced, rendered={"html": "h", "markdown": "m", "json": "j"})
    metrics = MlflowClient().get_run(run_id).data.metrics
    want = {**expected_slices(sliced), **expected_metrics(sliced)}
    assert {k: metrics[k] for k in want} == want


def test_mlflow_renders_only_what_is_not_given(mlflow_store: str, report1: Report,
                                               tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    from ragreport.report.track_mlflow import log_to_mlflow

    run_id = log_to_mlflow(report1, rendered={"html": "<p>mine</p>"})
    where = Path(MlflowClient().download_artifacts(run_id, "ragreport", str(tmp_path)))
    assert (where / "report.html").read_text(encoding="utf-8") == "<p>mine</p>"
    assert (where / "report.json").read_text(encoding="utf-8") == report1.to_json()
    assert (where / "report.md").read_text(encoding="utf-8") == report1.to_markdown()


def test_mlflow_bad_run_id(mlflow_store: str, report1: Report) -> None:
    from mlflow.tracking import MlflowClient

    from ragreport.report.track_mlflow import check_mlflow

    for bad in ("0123456789abcdef0123456789abcdef", "../etc"):
        with pytest.raises(RagReportError, match=r"^MLflow run '.*': .*") as err:
            report1.log_to_mlflow(bad)
        assert "\n" not in str(err.value)
        with pytest.raises(RagReportError, match="MLflow run"):
            check_mlflow(bad)
    assert MlflowClient().search_runs(["0"]) == []


def test_mlflow_deleted_run_is_refused(mlflow_store: str, report1: Report) -> None:
    from mlflow.tracking import MlflowClient

    from ragreport.report.track_mlflow import check_mlflow

    client = MlflowClient()
    run_id = client.create_run("0").info.run_id
    client.delete_run(run_id)
    with pytest.raises(RagReportError, match=rf"^MLflow run '{run_id}' is deleted$"):
        check_mlflow(run_id)
    with pytest.raises(RagReportError, match="is deleted"):
        report1.log_to_mlflow(run_id)
    assert client.get_run(run_id).data.metrics == {}


def test_mlflow_changed_parameter_is_refused(mlflow_store: str, report1: Report,
                                            tmp_path: Path) -> None:
    """A second, different report into the same run: MLflow refuses to change a parameter;
    one line, and the run keeps the first report (no ``complete`` from the second)."""
    from dataclasses import replace

    from mlflow.tracking import MlflowClient

    rendered = render_outputs(report1)
    from ragreport.report.track_mlflow import log_to_mlflow

    run_id = MlflowClient().create_run("0").info.run_id
    log_to_mlflow(report1, run_id, rendered=rendered)
    other = replace(report1, k_max=report1.k_max + 1)
    with pytest.raises(RagReportError, match=r"^MLflow run .*ragreport\.k_max") as err:
        log_to_mlflow(other, run_id, rendered=rendered)
    assert "\n" not in str(err.value)
    assert MlflowClient().get_run(run_id).data.params["ragreport.k_max"] == str(report1.k_max)


def test_mlflow_own_run_that_fails_is_deleted(mlflow_store: str, report1: Report,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure after the run was created here (an artifact store that cannot be
    written): the run is ended as failed and deleted, nothing half is left visible."""
    from mlflow.tracking import MlflowClient

    def broken(self: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(MlflowClient, "log_artifacts", broken)
    from ragreport.report.track_mlflow import log_to_mlflow

    with pytest.raises(RagReportError, match="No space left on device"):
        log_to_mlflow(report1, rendered=render_outputs(report1))
    import mlflow

    assert mlflow.active_run() is None
    client = MlflowClient()
    assert client.search_runs(["0"]) == []  # not among the visible runs
    deleted = client.search_runs(["0"], run_view_type=2)  # ViewType.DELETED_ONLY
    assert [r.info.status for r in deleted] == ["FAILED"]


def test_mlflow_unwritable_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 report1: Report) -> None:
    import mlflow

    (tmp_path / "a-file").write_text("x")
    uri = f"file:{tmp_path / 'a-file' / 'mlruns'}"  # a folder under a file (root writes all)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    mlflow.set_tracking_uri(uri)
    with pytest.raises(RagReportError, match=r"^MLflow.*Not a directory") as err:
        report1.log_to_mlflow()
    assert "\n" not in str(err.value)
    assert mlflow.active_run() is None


def test_missing_packages_name_the_extra(monkeypatch: pytest.MonkeyPatch,
                                         report1: Report) -> None:
    for name in ("mlflow", "mlflow.tracking", "mlflow.entities", "wandb"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    with pytest.raises(RagReportError, match=r"^mlflow is not installed: pip install "
                                             r"'ragreport\[mlflow\]'$"):
        report1.log_to_mlflow()
    with pytest.raises(RagReportError, match=r"^wandb is not installed: pip install "
                                             r"'ragreport\[wandb\]'$"):
        report1.log_to_wandb()


def test_tracking_packages_are_not_imported_by_the_report() -> None:
    code = ("import sys, ragreport.report, ragreport.report.tracking, ragreport.cli.app; "
            "print(sorted(m for m in ('mlflow', 'wandb') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# ---- W&B ------------------------------------------------------------------------------------

@pytest.fixture
def wandb_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An offline W&B set up afresh (wandb keeps its settings per process: torn down before
    and after, so each test's variables are read)."""
    import wandb

    wandb.teardown()
    where = tmp_path / "wb"
    where.mkdir()
    env = {"WANDB_MODE": "offline", "WANDB_DIR": str(where), "WANDB_SILENT": "true",
           "WANDB_DATA_DIR": str(tmp_path / "wb-data"),
           "WANDB_CACHE_DIR": str(tmp_path / "wb-cache"),
           "WANDB_CONFIG_DIR": str(tmp_path / "wb-config")}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for var in ("WANDB_RUN_ID", "WANDB_PROJECT", "WANDB_RESUME"):
        monkeypatch.delenv(var, raising=False)
    yield where
    wandb.teardown()


_BLOCK = 32 * 1024


def wandb_records(path: Path) -> Iterator[Any]:
    """The records of a ``.wandb`` file: a 7-byte header (``:W&B``, magic, version), then
    LevelDB-log records (checksum, length, type: full / first / middle / last) in 32 KiB
    blocks, each a ``wandb_internal_pb2.Record``."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, buf = 7, b""
    while pos + 7 <= len(data):
        left = _BLOCK - pos % _BLOCK
        if left < 7:  # the block's tail: padding
            pos += left
            continue
        _crc, n, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if kind == 0 and n == 0:
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + n]
        pos += 7 + n
        buf = chunk if kind in (1, 2) else buf + chunk
        if kind in (1, 4):
            record = pb.Record()
            record.ParseFromString(buf)
            yield record


def read_wandb(run_id: str, where: Path) -> dict[str, Any]:
    """Summary, history rows, config and artifact files of an offline run (W&B's service
    process writes the file: it is stopped first, so that every record is on disk)."""
    import wandb

    wandb.teardown()
    (path,) = where.glob(f"wandb/offline-run-*-{run_id}/run-{run_id}.wandb")
    summary: dict[str, Any] = {}
    config: dict[str, Any] = {}
    history: list[dict[str, Any]] = []
    artifacts: list[Any] = []
    exit_code = None
    project = None

    def key(item: Any) -> str:
        return "/".join(item.nested_key) if item.nested_key else item.key

    for r in wandb_records(path):
        kind = r.WhichOneof("record_type")
        if kind == "run":
            project = r.run.project
            config.update({key(i): json.loads(i.value_json) for i in r.run.config.update})
        elif kind == "config":
            config.update({key(i): json.loads(i.value_json) for i in r.config.update})
        elif kind == "summary":
            summary.update({key(i): json.loads(i.value_json) for i in r.summary.update})
        elif kind == "history":
            history.append({key(i): json.loads(i.value_json) for i in r.history.item})
        elif kind == "artifact":
            artifacts.append(r.artifact)
        elif kind == "exit":
            exit_code = r.exit.exit_code
    assert exit_code is not None, f"{path} has no exit record: not finished"
    return {"summary": summary, "config": config, "history": history,
            "artifacts": artifacts, "exit_code": exit_code, "project": project}


def assert_wandb_holds(got: dict[str, Any], report: Report, rendered: dict[str, str]) -> None:
    metrics = expected_metrics(report)
    assert set(metrics) <= set(got["summary"]), sorted(set(metrics) - set(got["summary"]))
    assert {k: got["summary"][k] for k in metrics} == metrics
    # every curve from the history rows: its value at each step of its own axis
    for name, points in expected_curves(report).items():
        axis = "recall_pct" if name.endswith("IPrec_at_recall") else "K"
        logged = [(row[axis], row[name]) for row in got["history"] if name in row]
        assert logged == points, name
    config = {k: v for k, v in got["config"].items() if k.startswith("ragreport.")}
    assert config == {**expected_params(report), **expected_tags(report),
                      "ragreport.complete": "true"}
    (artifact,) = got["artifacts"]
    assert artifact.type == "ragreport-report" and artifact.name == "ragreport-report"
    files = {c.path: c.digest for c in artifact.manifest.contents}
    assert files == {name: base64.b64encode(hashlib.md5(
        rendered[key].encode("utf-8")).digest()).decode() for key, name in
        ARTIFACT_NAMES.items()}


def test_wandb_new_run_read_back(wandb_dir: Path, report2: Report,
                                 rendered2: dict[str, str]) -> None:
    import wandb

    run_id = report2.log_to_wandb()
    assert wandb.run is None  # the run it started is finished
    got = read_wandb(run_id, wandb_dir)
    assert got["exit_code"] == 0
    assert_wandb_holds(got, report2, rendered2)


def test_wandb_active_run(wandb_dir: Path, report1: Report) -> None:
    import wandb

    rendered = render_outputs(report1)
    run = wandb.init(project="mine", config={"retriever": "bm25"})
    try:
        run.log({"loss": 0.5})  # the user's own history stays
        from ragreport.report.track_wandb import log_to_wandb

        assert log_to_wandb(report1, rendered=rendered) == run.id
        assert wandb.run is run  # not finished: it is the user's run
    finally:
        run.finish()
    got = read_wandb(run.id, wandb_dir)
    assert got["config"]["retriever"] == "bm25"
    assert got["history"][0]["loss"] == 0.5
    assert_wandb_holds(got, report1, rendered)
    assert got["summary"]["nDCG_at_10"] == report1.summary[0].cells[0].value


def test_wandb_slices_read_back(wandb_dir: Path, sliced: Report) -> None:
    import wandb

    from ragreport.report.track_wandb import log_to_wandb

    run = wandb.init(project="given")  # given explicitly (not only active)
    assert log_to_wandb(sliced, run, rendered={"html": "h", "markdown": "m", "json": "j"}
                        ) == run.id
    run.finish()
    summary = read_wandb(run.id, wandb_dir)["summary"]
    want = {**expected_slices(sliced), **expected_metrics(sliced)}
    assert set(want) <= set(summary), (len(set(want) - set(summary)), len(want),
                                       sorted(set(want) - set(summary))[:8])
    assert {k: summary[k] for k in want} == want


def test_wandb_cannot_start(wandb_dir: Path, report1: Report,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "sideways")
    with pytest.raises(RagReportError, match=r"^W&B: .*mode") as err:
        report1.log_to_wandb()
    assert "\n" not in str(err.value)


# ---- the command ----------------------------------------------------------------------------

def _cli(args: list[str], tmp: Path, env: dict[str, str],
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    import os

    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("MLFLOW_", "WANDB_", "RAGREPORT_"))}
    full.update(env)
    full.setdefault("MPLBACKEND", "Agg")
    return subprocess.run([sys.executable, "-m", "ragreport", *args], cwd=tmp, env=full,
                          capture_output=True, text=True, timeout=timeout, check=False)


CLI_ARGS = ["--example", "--json", "out.json", "--markdown", "out.md", "--resamples", "200",
            "--generated-at", GENERATED, "--jobs", "1"]


def test_cli_mlflow_and_wandb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check --mlflow --wandb``: both read back, their numbers the local JSON's."""
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # for the client reading back

    env = {"MLFLOW_ALLOW_FILE_STORE": "true", "MLFLOW_TRACKING_URI": f"file:{tmp_path}/ml",
           "MLFLOW_EXPERIMENT_NAME": "retrieval", "WANDB_PROJECT": "retrieval-wb",
           "WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path), "WANDB_SILENT": "true",
           "WANDB_DATA_DIR": str(tmp_path / "wbd"), "WANDB_CACHE_DIR": str(tmp_path / "wbc"),
           "WANDB_CONFIG_DIR": str(tmp_path / "wbcfg")}
    proc = _cli(["check", *CLI_ARGS, "--mlflow", "--wandb"], tmp_path, env)
    assert proc.returncode == 1, proc.stderr  # the example fails its default targets
    lines = proc.stderr.splitlines()
    assert lines[:2] == ["wrote out.md", "wrote out.json"]
    assert lines[2].startswith("logged to MLflow run ") and lines[3].startswith(
        "logged to W&B run "), proc.stderr
    mlflow_id, wandb_id = lines[2].split()[-1], lines[3].split()[-1]
    local = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    client = MlflowClient(tracking_uri=f"file:{tmp_path}/ml")
    run = client.get_run(mlflow_id)
    assert client.get_experiment(run.info.experiment_id).name == "retrieval"
    got = read_wandb(wandb_id, tmp_path)
    assert got["project"] == "retrieval-wb"
    checked = 0
    for name, means in local["means"].items():  # every measure of every run
        for measure, value in means.items():
            key = f"{name}/{metric_name(measure)}"
            lo, hi = local["intervals"][name][measure]
            assert run.data.metrics[key] == value == got["summary"][key]
            assert run.data.metrics[key + "_ci_lower"] == lo == got["summary"][key + "_ci_lower"]
            assert run.data.metrics[key + "_ci_upper"] == hi == got["summary"][key + "_ci_upper"]
            checked += 1
    assert checked == 22  # 11 measures x 2 runs
    for family, series in local["curves"].items():  # every point of every curve
        for name, ys in series.items():
            key = f"{name}/{metric_name(family)}_at_K"
            history = client.get_metric_history(mlflow_id, key)
            assert sorted((m.step, m.value) for m in history) == list(enumerate(ys, 1))
            assert [(row["K"], row[key]) for row in got["history"] if key in row] == list(
                enumerate(ys, 1))
    # the tracked files are the local ones, byte for byte
    where = Path(client.download_artifacts(mlflow_id, "ragreport", str(tmp_path / "dl")))
    assert (where / "report.json").read_bytes() == (tmp_path / "out.json").read_bytes()
    assert (where / "report.md").read_bytes() == (tmp_path / "out.md").read_bytes()
    assert (where / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    tags = run.data.tags
    assert tags["ragreport.passed"] == "false" and tags["ragreport.complete"] == "true"
    assert tags["ragreport.input.qrels.path"] == "ragreport/examples/pydoc/qrels.txt"
    assert tags["ragreport.input.qrels.sha256"] == hashlib.sha256(
        example_files().qrels.read_bytes()).hexdigest()
    assert tags["ragreport.command"].startswith("ragreport check --example")


def test_cli_mlflow_run_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow.tracking import MlflowClient

    uri = f"file:{tmp_path}/ml"
    env = {"MLFLOW_ALLOW_FILE_STORE": "true", "MLFLOW_TRACKING_URI": uri}
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = MlflowClient(tracking_uri=uri)
    run_id = client.create_run("0").info.run_id
    proc = _cli(["report", *CLI_ARGS, "--mlflow-run", run_id], tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == f"logged to MLflow run {run_id}"
    local = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    metrics = client.get_run(run_id).data.metrics
    assert {k: v for k, v in metrics.items() if "_at_K" not in k and "recall" not in k
            and k.count("/") == 1 and not k.endswith(("_ci_lower", "_ci_upper", "_delta",
                                                      "_p_value"))} == {
        f"{name}/{metric_name(m)}": v for name, means in local["means"].items()
        for m, v in means.items()}
    assert len(client.search_runs(["0"])) == 1


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             report2: Report) -> None:
    """The README's example, as written, in a fresh folder: read back from both trackers."""
    from mlflow.tracking import MlflowClient

    readme = user_docs()
    section = readme[readme.index("### Experiment tracking: MLflow and W&B"):]
    code = section[section.index("```python\n") + 10:section.index("```\n", section.index(
        "```python\n") + 10)]
    env = {"WANDB_DIR": str(tmp_path), "WANDB_SILENT": "true",
           "WANDB_DATA_DIR": str(tmp_path / "wbd"), "WANDB_CACHE_DIR": str(tmp_path / "wbc"),
           "WANDB_CONFIG_DIR": str(tmp_path / "wbcfg"), "MPLBACKEND": "Agg"}
    import os

    full = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "WANDB_"))}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={**full, **env},
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = MlflowClient(tracking_uri=f"file:{tmp_path / 'mlruns'}")
    (run,) = client.search_runs(["0"])
    assert run.info.run_name == "bm25-vs-tfidf" and run.data.params["index"] == "v3"
    # the README's report has the default resamples: its means are report2's, not its bounds
    for row in report2.summary:
        for c in row.cells:
            assert run.data.metrics[f"{c.run}/{metric_name(row.measure)}"] == c.value
    (path,) = tmp_path.glob("wandb/offline-run-*/run-*.wandb")
    run_id = path.stem.removeprefix("run-")
    summary = read_wandb(run_id, tmp_path)["summary"]
    assert summary["tfidf/RR"] == run.data.metrics["tfidf/RR"]


def test_mlflow_database_store_without_its_modules_says_what_to_do(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow 3's default tracking URI is sqlite:///mlflow.db, which mlflow-skinny (the
    extra) cannot open: the error names the fix, not only "No module named 'alembic'"."""
    import importlib.util

    import mlflow

    from ragreport.report.payload import tracker_error as _one_line
    from ragreport.report.track_mlflow import check_mlflow

    monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)
    monkeypatch.setattr(mlflow, "get_tracking_uri", lambda: "sqlite:///mlflow.db")
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "alembic" else find_spec(name, *a))
    with pytest.raises(RagReportError, match=r"^MLflow: the tracking URI sqlite:///mlflow\.db "
                       r"needs the module 'alembic'.*pip install mlflow .*"
                       r"MLFLOW_ALLOW_FILE_STORE=true\)$"):
        check_mlflow()
    err = _one_line("MLflow", ModuleNotFoundError("No module named 'alembic'", name="alembic"))
    assert str(err).startswith("MLflow: the tracking URI sqlite:///mlflow.db needs the module "
                               "'alembic'")
    assert str(_one_line("MLflow", ValueError("x"))) == "MLflow: x"


def test_unreachable_tracking_server_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow's defaults retry an unreachable server for minutes: check_mlflow asks it once
    (no retries, 10 s timeout) unless the user set those variables, and then restores the
    environment as it was."""
    import os
    import time

    import mlflow.tracking._tracking_service.utils as uri_state

    from ragreport.report.track_mlflow import check_mlflow

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")  # nothing listens
    monkeypatch.setattr(uri_state, "_tracking_uri", None)  # mlflow_store's set_tracking_uri
    monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)
    for name in ("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "MLFLOW_HTTP_REQUEST_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    start = time.monotonic()
    with pytest.raises(RagReportError, match=r"^MLflow tracking server http://127\.0\.0\.1:9: "
                       r".*Connection refused"):
        check_mlflow()
    assert time.monotonic() - start < 20
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ
    assert "MLFLOW_HTTP_REQUEST_TIMEOUT" not in os.environ
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "7")  # the user's own value is kept
    with pytest.raises(RagReportError, match="Connection refused"):
        check_mlflow()
    assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "7"
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ


def test_a_long_slice_name_is_named_in_the_error() -> None:
    """A slice name of 200 characters (the most a slices file takes) under a long run name
    passes MLflow's 250: the message names the slice, not only the run."""
    from ragreport.report.payload import tracking_payload

    long = "s" * 200
    files = example_files()
    runs = [ragreport.evaluate(files.qrels, r, name=f"{'r' * 40}{i}")
            for i, r in enumerate(files.runs)]
    ids = runs[0].query_ids
    report = build_report(runs, stats=False, generated_at="2026-01-01",
                          slices={q: [long] for q in ids[:12]})
    with pytest.raises(RagReportError, match=r"longer than 250 characters; give the run "
                       r"\(--name\) or the slice a shorter name$"):
        tracking_payload(report)


def test_wandb_server_that_never_answers_fails_within_the_init_timeout(
        tmp_path: Path) -> None:
    """W&B online, its server accepting connections but never answering (a socket listening
    and never accepting): ``--wandb`` fails after ``WANDB_INIT_TIMEOUT`` seconds (the user's
    value; 15 unless set, where W&B waits 90), one line naming the variable, exit 2, nothing
    written. (The subprocess's timeout bounds the wait: W&B's 90 s would exceed it.)"""
    import socket

    (tmp_path / "home").mkdir()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        env = {"WANDB_MODE": "online", "WANDB_BASE_URL": f"http://127.0.0.1:{port}",
               "WANDB_API_KEY": "0123456789012345678901234567890123456789",
               "WANDB_INIT_TIMEOUT": "2", "HOME": str(tmp_path / "home"),
               "WANDB_DIR": str(tmp_path), "WANDB_DATA_DIR": str(tmp_path / "wbd"),
               "WANDB_CACHE_DIR": str(tmp_path / "wbc"),
               "WANDB_CONFIG_DIR": str(tmp_path / "wbcfg")}
        proc = _cli(["report", "--example", "--json", "out.json", "--no-stats", "--jobs", "1",
                     "--wandb"], tmp_path, env, timeout=75)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("ragreport: error: W&B: ") and proc.stderr.endswith(
        "(no run started within 2 s; WANDB_INIT_TIMEOUT sets how long to wait)\n"), proc.stderr
    assert f"127.0.0.1:{port}" in proc.stderr
    assert not (tmp_path / "out.json").exists()


# ---- both trackers: nothing logged into one when the other fails ---------------------------

def _runs(view: int = 1) -> list[Any]:
    """The runs of the default experiment (1: active only, 2: deleted only)."""
    from mlflow.tracking import MlflowClient

    return list(MlflowClient().search_runs(["0"], run_view_type=view))


def test_both_trackers_read_back(mlflow_store: str, wandb_dir: Path, report1: Report,
                                 tmp_path: Path) -> None:
    from ragreport.report.tracking import log_to_trackers

    rendered = render_outputs(report1)
    (ml, ml_id), (wb, wb_id) = log_to_trackers(report1, mlflow=True, wandb=True,
                                               rendered=rendered)
    assert (ml, wb) == ("MLflow", "W&B")
    got = read_mlflow(ml_id, report1, tmp_path / "dl")
    assert got["run"].info.status == "FINISHED"
    assert_mlflow_holds(got, report1, rendered)
    assert_wandb_holds(read_wandb(wb_id, wandb_dir), report1, rendered)


def test_wandb_that_cannot_start_leaves_no_mlflow_run(
        mlflow_store: str, wandb_dir: Path, report1: Report,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """W&B's run is started before anything goes into MLflow: when it cannot start, the
    MLflow run ragreport created holds nothing and is deleted; a run given (or MLflow's
    MLFLOW_RUN_ID) receives nothing and is kept as it was."""
    from mlflow.tracking import MlflowClient

    from ragreport.report.tracking import log_to_trackers

    monkeypatch.setenv("WANDB_MODE", "sideways")
    rendered = render_outputs(report1)
    with pytest.raises(RagReportError, match=r"^W&B: [^(]*$"):
        log_to_trackers(report1, mlflow=True, wandb=True, rendered=rendered)
    assert _runs() == []
    (deleted,) = _runs(2)
    assert deleted.info.status == "FAILED" and deleted.data.metrics == {}
    client = MlflowClient()
    given = client.create_run("0").info.run_id
    with pytest.raises(RagReportError, match=r"^W&B: [^(]*$"):
        log_to_trackers(report1, mlflow_run=given, wandb=True, rendered=rendered)
    monkeypatch.setenv("MLFLOW_RUN_ID", given)
    with pytest.raises(RagReportError, match=r"^W&B: [^(]*$"):
        log_to_trackers(report1, mlflow=True, wandb=True, rendered=rendered)
    run = client.get_run(given)
    assert (run.info.lifecycle_stage, run.info.status) == ("active", "RUNNING")
    assert run.data.metrics == {} and run.data.params == {}
    assert [r.info.run_id for r in _runs()] == [given]


def test_wandb_failing_after_mlflow_logged(mlflow_store: str, wandb_dir: Path,
                                           report1: Report,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """W&B refusing the data once MLflow holds the report: the MLflow run ragreport
    created is ended as failed and deleted (no visible run holds a report the command says
    it could not log); a run of the user's is kept, and the error says it holds the report.
    The W&B run it started is finished as failed."""
    import mlflow
    from mlflow.tracking import MlflowClient

    import ragreport.report.track_wandb as track_wandb
    import ragreport.report.tracking as tracking

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(track_wandb, "_send_wandb", broken)
    rendered = render_outputs(report1)
    with pytest.raises(RagReportError) as err:
        tracking.log_to_trackers(report1, mlflow=True, wandb=True, rendered=rendered)
    (deleted,) = _runs(2)
    run_id = deleted.info.run_id
    assert str(err.value).startswith("W&B run '") and "No space left on device" in str(
        err.value) and str(err.value).endswith(
        f"(the MLflow run {run_id} it had logged into was ended as failed and deleted)")
    assert "\n" not in str(err.value)
    assert _runs() == [] and deleted.info.status == "FAILED"
    assert deleted.data.tags["ragreport.complete"] == "true"  # it was filled, then withdrawn
    assert mlflow.active_run() is None
    import wandb

    assert wandb.run is None  # the W&B run it started is finished
    client = MlflowClient()
    given = client.create_run("0").info.run_id
    with pytest.raises(RagReportError, match=rf"\(already logged to MLflow run {given}, "
                                             r"yours: kept\)$"):
        tracking.log_to_trackers(report1, mlflow_run=given, wandb=True, rendered=rendered)
    run = client.get_run(given)
    assert run.info.lifecycle_stage == "active" and run.data.tags["ragreport.complete"] == "true"


def test_interrupt_while_logging_undoes_both_runs(mlflow_store: str, wandb_dir: Path,
                                                   report1: Report,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (KeyboardInterrupt) while W&B is being filled, MLflow filled already: the
    interrupt goes on (the command exits 130), and neither run is left open: the MLflow run
    ragreport created is ended as failed and deleted, the W&B run finished as failed (they
    were left running before)."""
    import mlflow
    import wandb

    import ragreport.report.track_wandb as track_wandb
    import ragreport.report.tracking as tracking

    started: list[str] = []

    def interrupted(wb: Any, run: Any, *args: Any, **kwargs: Any) -> None:
        started.append(str(run.id))
        raise KeyboardInterrupt

    monkeypatch.setattr(track_wandb, "_send_wandb", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tracking.log_to_trackers(report1, mlflow=True, wandb=True,
                                 rendered=render_outputs(report1))
    assert mlflow.active_run() is None and wandb.run is None
    assert _runs() == []
    (deleted,) = _runs(2)
    assert deleted.info.status == "FAILED"
    assert read_wandb(started[0], wandb_dir)["exit_code"] == 1


def test_mlflow_failing_after_wandb_started(mlflow_store: str, wandb_dir: Path,
                                            report1: Report,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow failing while the W&B run is open and empty: the W&B run is finished as failed
    (nothing in it) and the error says so."""
    from mlflow.tracking import MlflowClient

    from ragreport.report.tracking import log_to_trackers

    def broken(self: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(MlflowClient, "log_artifacts", broken)
    with pytest.raises(RagReportError, match=r"^MLflow run .*No space left on device "
                       r"\(the W&B run \w+ it started was ended as failed, empty\)$"):
        log_to_trackers(report1, mlflow=True, wandb=True, rendered=render_outputs(report1))
    assert _runs() == []


def test_changed_parameter_is_refused_before_anything_is_logged(
        mlflow_store: str, wandb_dir: Path, report1: Report) -> None:
    """A given MLflow run holding one of the report's parameters with another value is
    refused before either tracker receives anything."""
    from dataclasses import replace

    from mlflow.tracking import MlflowClient

    from ragreport.report.tracking import log_to_trackers

    client = MlflowClient()
    given = client.create_run("0").info.run_id
    client.log_param(given, "ragreport.k_max", "7")
    other = replace(report1, k_max=report1.k_max + 1)
    with pytest.raises(RagReportError, match=rf"^MLflow run '{given}': the parameter "
                       r"'ragreport\.k_max' was logged with the value '7' before"):
        log_to_trackers(other, mlflow_run=given, wandb=True,
                        rendered={"html": "h", "markdown": "m", "json": "j"})
    assert client.get_run(given).data.metrics == {}
    assert list(wandb_dir.glob("wandb/offline-run-*")) == []  # no W&B run was started


def test_cli_output_that_cannot_be_written_undoes_the_run(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The local outputs are written after the runs are filled and before they are closed:
    a write that fails (standard output a pipe nobody reads) ends the MLflow run the command
    created as failed and deletes it, one line, exit 2; a run given with --mlflow-run is
    kept, and the error says it holds the report."""
    import os

    from mlflow.tracking import MlflowClient

    uri = f"file:{tmp_path}/ml"
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MLFLOW_", "WANDB_", "RAGREPORT_"))}
    env.update({"MLFLOW_ALLOW_FILE_STORE": "true", "MLFLOW_TRACKING_URI": uri,
                "MPLBACKEND": "Agg"})
    client = MlflowClient(tracking_uri=uri)
    given = client.create_run("0").info.run_id

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        read, write = os.pipe()
        os.close(read)  # writing the JSON to standard output: a broken pipe
        try:
            return subprocess.run([sys.executable, "-m", "ragreport", "report", "--example",
                                   "--no-stats", "--jobs", "1", "--json", "-", *extra],
                                  cwd=tmp_path, env=env, stdout=write, stderr=subprocess.PIPE,
                                  text=True, timeout=300, check=False)
        finally:
            os.close(write)

    proc = run("--mlflow")
    assert proc.returncode == 2, proc.stderr
    (deleted,) = client.search_runs(["0"], run_view_type=2)
    assert proc.stderr == (
        "ragreport: error: cannot write to standard output: Broken pipe (the MLflow run "
        f"{deleted.info.run_id} it had logged into was ended as failed and deleted)\n")
    assert deleted.info.status == "FAILED"
    proc = run("--mlflow-run", given)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("ragreport: error: cannot write to standard output: Broken pipe "
                           f"(already logged to MLflow run {given}, yours: kept)\n")
    assert [r.info.run_id for r in client.search_runs(["0"])] == [given]
