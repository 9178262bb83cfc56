"""ragreport: trec_eval-exact retrieval metrics for every K at once, and reports you can share.

Importing the package is cheap: submodules (numpy, pyarrow, matplotlib...) load on first use.

>>> import ragreport
>>> r = ragreport.evaluate({"q1": {"a": 1}}, {"q1": ["b", "a"]}, ["RR", "P@2"])
>>> r.means()
{'RR': 0.5, 'P@2': 0.5}
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .analysis.agreement import Agreement, agreement
    from .analysis.drift import judgments_sha256
    from .analysis.labelqueue import LabelQueue, label_queue
    from .analysis.unjudged import UnjudgedBounds, unjudged_bounds
    from .core.engine import evaluate
    from .core.result import EvaluationResult
    from .core.stream import evaluate_stream
    from .data import Qrels, Run
    from .errors import ConfigError, InputError, MeasureError, RagReportError
    from .examples import example_files
    from .explorer import Explorer
    from .integrations.collect import collect_run, write_run
    from .integrations.judge import Judged, judge
    from .io import load_docs, load_qrels, load_queries, load_run, load_texts
    from .io.docmap import load_doc_map
    from .io.labels import merge_judgments, read_labels, write_qrels
    from .io.slices import load_slices
    from .io.targets import load_slice_targets, load_targets
    from .measures import Measure, parse_measure, parse_measures
    from .report import InputFile, Report, build_report
    from .report.baseline import StoredBaseline, drift_checks, load_baseline_report
    from .report.labelqueue import write_label_queue
    from .seed import RetrievalEvaluator, evaluate_multiple_queries
    from .settings import StatsSettings

_EXPORTS: dict[str, str] = {
    "evaluate": "core.engine",
    "collect_run": "integrations.collect",
    "write_run": "integrations.collect",
    "load_qrels": "io",
    "load_run": "io",
    "load_texts": "io",
    "load_queries": "io",
    "load_docs": "io",
    "Qrels": "data",
    "Run": "data",
    "EvaluationResult": "core.result",
    "Measure": "measures",
    "parse_measure": "measures",
    "parse_measures": "measures",
    "RetrievalEvaluator": "seed",
    "evaluate_multiple_queries": "seed",
    "RagReportError": "errors",
    "InputError": "errors",
    "MeasureError": "errors",
    "ConfigError": "errors",
    "Explorer": "explorer",
    # reports, targets and the stored baseline (the Python examples of the README and docs/)
    "build_report": "report",
    "Report": "report",
    "InputFile": "report",
    "load_targets": "io.targets",
    "load_slice_targets": "io.targets",
    "load_slices": "io.slices",
    "load_doc_map": "io.docmap",
    "load_baseline_report": "report.baseline",
    "drift_checks": "report.baseline",
    "StoredBaseline": "report.baseline",
    "judgments_sha256": "analysis.drift",
    "unjudged_bounds": "analysis.unjudged",
    "UnjudgedBounds": "analysis.unjudged",
    "label_queue": "analysis.labelqueue",
    "LabelQueue": "analysis.labelqueue",
    "write_label_queue": "report.labelqueue",
    "read_labels": "io.labels",
    "judge": "integrations.judge",
    "Judged": "integrations.judge",
    "agreement": "analysis.agreement",
    "Agreement": "analysis.agreement",
    "merge_judgments": "io.labels",
    "write_qrels": "io.labels",
    "evaluate_stream": "core.stream",
    "example_files": "examples",
    "StatsSettings": "settings",
}

__all__ = [
    "Agreement", "ConfigError", "EvaluationResult", "Explorer", "InputError", "InputFile",
    "Judged", "LabelQueue", "Measure", "MeasureError", "Qrels", "RagReportError", "Report",
    "RetrievalEvaluator", "Run", "StatsSettings", "StoredBaseline", "UnjudgedBounds",
    "__version__", "agreement", "build_report", "collect_run", "drift_checks", "evaluate",
    "evaluate_multiple_queries", "evaluate_stream", "example_files", "judge", "judgments_sha256",
    "label_queue", "load_baseline_report", "load_doc_map", "load_docs", "load_qrels",
    "load_queries", "load_run", "load_slice_targets", "load_slices", "load_targets", "load_texts",
    "merge_judgments", "parse_measure", "parse_measures", "read_labels", "unjudged_bounds",
    "write_label_queue", "write_qrels", "write_run",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragreport' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
