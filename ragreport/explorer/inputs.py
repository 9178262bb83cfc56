"""What an explorer is built over, checked once: the runs, targets, texts, slices and
statistics settings, and the measure families every run has a curve of.

>>> from ragreport import evaluate
>>> r = evaluate({"a": {"x": 1}}, {"a": ["x", "y"]}, ["P@1", "nDCG@1"])
>>> got = ExplorerInputs.build(r, targets=[])
>>> got.run_names, [str(f) for f in got.families], got.k_max
(['run'], ['nDCG', 'R', 'P', 'F1', 'HitRate', 'RR', 'AP'], 2)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.result import EvaluationResult
from ..errors import RagReportError
from ..io.slices import QuerySlices
from ..io.targets import load_targets
from ..measures import Measure
from ..settings import StatsSettings
from ..targets import Target, default_targets, parse_targets

__all__ = ["ExplorerInputs"]

#: The order of the measure families in the explorer's menu (others follow).
FAMILY_ORDER = ("nDCG", "R", "P", "F1", "HitRate", "RR", "AP")


@dataclass(frozen=True)
class ExplorerInputs:
    """The explorer's inputs as read (never changed afterwards)."""

    results: list[EvaluationResult]
    run_names: list[str]
    settings: StatsSettings
    targets: list[Target]
    queries: dict[str, str]
    docs: dict[str, str]
    slices: QuerySlices | None
    #: K goes up to the deepest ranking of the runs (at least 1).
    k_max: int
    #: The families every run has a metric-vs-K curve of, in menu order.
    families: list[Measure]

    @classmethod
    def build(cls, results: EvaluationResult | Sequence[EvaluationResult],
              targets: Any = None, queries: Any = None, docs: Any = None, *,
              slices: Any = None, settings: StatsSettings | None = None) -> ExplorerInputs:
        """Check and read the explorer's parameters (see
        :class:`~ragreport.explorer.state.ExplorerState`)."""
        runs = _runs(results)
        if settings is not None and not isinstance(settings, StatsSettings):
            raise RagReportError(f"settings must be a StatsSettings, got "
                                 f"{type(settings).__name__}")
        chosen = settings if settings is not None else StatsSettings()
        read_targets = _targets(targets)
        texts: dict[str, str] = {}
        for r in runs:
            texts.update(r.query_texts)
        texts.update(_texts(queries, "queries"))
        read_docs = _texts(docs, "docs")
        read_slices: QuerySlices | None = None
        if slices is not None:
            from ..io.slices import load_slices

            read_slices = load_slices(slices)  # errors name the file and the line
        return cls(results=runs, run_names=[r.run_name for r in runs], settings=chosen,
                   targets=read_targets, queries=texts, docs=read_docs, slices=read_slices,
                   k_max=max(max(r.ranking.depth for r in runs), 1), families=_families(runs))


def _runs(results: Any) -> list[EvaluationResult]:
    if isinstance(results, EvaluationResult):
        runs = [results]
    elif isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise RagReportError(f"the explorer needs EvaluationResult objects, got "
                             f"{type(results).__name__}")
    else:
        runs = list(results)
    if not runs:
        raise RagReportError("the explorer needs at least one evaluation result")
    for r in runs:
        if not isinstance(r, EvaluationResult):
            raise RagReportError(f"expected EvaluationResult objects, got {type(r).__name__}")
    names = [r.run_name for r in runs]
    if len(set(names)) != len(names):
        raise RagReportError(f"run names must be distinct, got {names}; evaluate with name=")
    return runs


def _families(runs: list[EvaluationResult]) -> list[Measure]:
    keys = [f for f in runs[0].curves if all(f in r.curves for r in runs)
            and not f.family.health]
    fams = [f for name in FAMILY_ORDER for f in keys if f.name == name]
    fams += [f for f in keys if f not in fams]
    if not fams:
        raise RagReportError("the results hold no metric-vs-K curve")
    return fams


def _targets(targets: Any) -> list[Target]:
    if targets is None:
        return default_targets()
    if isinstance(targets, (str, os.PathLike)):
        return load_targets(targets)
    if isinstance(targets, Mapping):
        return parse_targets(targets, "targets")
    if isinstance(targets, (bytes, Target)) or not isinstance(targets, Sequence):
        raise RagReportError(f"targets must be a list of Target objects, a mapping or a path; "
                             f"got {type(targets).__name__}")
    out = list(targets)
    for t in out:
        if not isinstance(t, Target):
            raise RagReportError(f"targets must be Target objects, a mapping or a path; got "
                                 f"{type(t).__name__}")
    return out


def _texts(texts: Any, what: str) -> dict[str, str]:
    from ..io import load_texts

    if texts is None:
        return {}
    if isinstance(texts, dict) and set(map(type, texts)) <= {str} \
            and set(map(type, texts.values())) <= {str}:
        return texts  # already id -> text (read, not changed)
    return load_texts(texts, what=what)
