"""The options of one command, typed and frozen: :class:`Options`, read once from argv
(:func:`parse_options`). The commands read it and never change it: a step that settles an
option (the embedded example's files, the targets file's settings, inputs read once from
standard input) returns a new :class:`Options` (``dataclasses.replace``); what is read from
the inputs (qrels, runs, a stored report) travels beside it, never inside it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeAlias

from .args import build_parser

if TYPE_CHECKING:  # not imported at run time: --help stays light (no numpy, no pyarrow)
    from ..io.common import Source

__all__ = ["Input", "Options", "parse_options"]

#: An input as named on the command line (a path, ``-``, an ``irds:`` id), or its bytes once
#: an input that can be read only once was read (:func:`ragreport.cli.inputs.materialized`).
Input: TypeAlias = "str | Source"


@dataclass(frozen=True)
class Options:
    """Every option of ``evaluate``, ``report``, ``check`` and ``notebook``; an option a
    command does not have keeps its default here."""

    command: str
    argv: tuple[str, ...] = ()
    # ---- inputs
    qrels: Input | None = None
    runs: tuple[Input, ...] = ()
    """The runs (``evaluate`` takes one)."""
    example: bool = False
    config: str | None = None
    """``--config``: the configuration file (:mod:`ragreport.cli.configfile`)."""
    queries: Input | None = None
    docs: Input | None = None
    targets: Input | None = None
    doc_map: Input | None = None
    doc_map_unmapped: str | None = None
    slices: Input | None = None
    slices_column: str | None = None
    columns: str | None = None
    """``--columns`` as given (:func:`ragreport.io.tabular.parse_columns` reads it)."""
    per_query_in: tuple[str, ...] = ()
    baseline_report: str | None = None
    # ---- evaluation
    measures: tuple[str, ...] | None = None
    k_max: int | None = None
    complete: bool = False
    max_depth: int | None = None
    rel_level: int = 1
    order: str | None = None
    no_relevant: str = "zero"
    keep_first_duplicate: bool = False
    judgment_rule: str = "human-first"
    compat: str | None = None
    ignore_identical_ids: bool | None = None
    score_precision: str | None = None
    ties: str | None = None
    fractional_grades: bool = False
    # ---- evaluate's output
    stream: bool = False
    format: str = "table"
    per_query: bool = False
    per_query_out: str | None = None
    name: str | None = None
    # ---- the report
    names: tuple[str, ...] = ()
    html: str | None = None
    markdown: str | None = None
    json: str | None = None
    output: str | None = None
    title: str = "Retrieval evaluation"
    template_dir: str | None = None
    generated_at: str | None = None
    worst_measure: str | None = None
    worst: int = 20
    no_chart: bool = False
    jobs: int | None = None
    # ---- statistics and gates
    no_stats: bool = False
    ci_level: float = 0.95
    resamples: int = 10_000
    seed: int = 0
    alpha: float = 0.05
    max_drop: float | None = None
    on_inconclusive: str = "fail"
    baseline: str | None = None
    target_level: str = "chunk"
    unjudged: str = "warn"
    unjudged_grade: float | None = None
    # ---- label-queue
    budget: int = 200
    max_per_query: int | None = None
    max_rank: int | None = None
    queue_format: str | None = None
    # ---- merge-labels
    labels: tuple[str, ...] = ()
    label_source: str = "human"
    existing_source: str = "qrels"
    on_conflict: str = "error"
    allow_drift: bool = False
    max_query_drift: float | None = None
    min_judged_ratio: float | None = None
    # ---- trackers
    mlflow: bool = False
    mlflow_run: str | None = None
    wandb: bool = False
    # ---- ragreport config
    config_for: str = "report"
    config_args: tuple[str, ...] = ()
    # ---- where each value came from
    sources: tuple[tuple[str, str], ...] = ()
    """Option -> where its value came from: its flag (``--k-max``), the configuration file
    or the targets file (``pyproject.toml [tool.ragreport], line 3``), or ``default``."""

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace, argv: Sequence[str] = (),
                       sources: Mapping[str, str] | None = None) -> Options:
        """The options argparse read (lists become tuples; ``evaluate``'s one RUN a tuple of
        one; an option the command lacks keeps its default)."""
        given = vars(ns)
        values: dict[str, Any] = {"argv": tuple(argv),
                                  "sources": tuple(sorted((sources or {}).items()))}
        for f in fields(cls):
            if f.name in given and f.name not in ("argv", "sources"):
                values[f.name] = given[f.name]
        runs = values.get("runs")  # evaluate's RUN "" is no run, as report's [] is
        values["runs"] = () if not runs else (runs,) if isinstance(runs, str) else tuple(runs)
        for key in ("names", "per_query_in", "config_args", "labels"):
            values[key] = tuple(values.get(key) or ())
        if values.get("measures") is not None:
            values["measures"] = tuple(values["measures"])
        return cls(**values)

    def file_source(self, key: str) -> str | None:
        """The file that set option ``key`` (its label), None when the command line or the
        default did."""
        where = dict(self.sources).get(key, "default")
        return None if where == "default" or where.startswith("-") else where

    @property
    def outputs(self) -> list[str]:
        """The report's output files (``--html``, ``--markdown``, ``--json``) given."""
        return [p for p in (self.html, self.markdown, self.json) if p is not None]


def _config_command(argv: Sequence[str]) -> list[str]:
    """``ragreport config --k-max 5`` is ``ragreport config report --k-max 5``: the command
    shown is report's unless named."""
    args = list(argv)
    at = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if at is not None and args[at] == "config" and at + 1 < len(args) and \
            args[at + 1].startswith("-") and args[at + 1] not in ("-h", "--help"):
        args.insert(at + 1, "report")
    return args


def parse_options(argv: Sequence[str], cwd: str | os.PathLike[str] | None = None
                  ) -> Options | None:
    """The options of ``argv`` and of the configuration file (in ``cwd``, default the working
    folder; :func:`ragreport.cli.resolve.resolve`); None without a command (the help is
    printed). argparse's errors, ``--help`` and ``--version`` raise SystemExit; the file's, a
    ConfigError."""
    parser = build_parser()
    ns = parser.parse_args(_config_command(argv))
    if ns.command is None:
        parser.print_help()
        return None
    if ns.command != "config":
        from .resolve import given_options, resolve

        resolved = resolve(ns.command, vars(ns), given_options(argv), cwd)
        return Options.from_namespace(argparse.Namespace(**resolved.values), argv,
                                      resolved.sources)
    return Options.from_namespace(ns, argv)
