"""Report data: everything a renderer needs, as plain dataclasses; nothing rendered here.

:func:`~ragreport.report.build.build_report` turns evaluation results (one per run) into a
:class:`Report` (building lives in :mod:`.build`, :mod:`.documents`, :mod:`.slicing`). The HTML,
Markdown and JSON renderers only read it. Values are kept as floats *and* as the text every
output shows (4 decimals), so the outputs agree with each other and with the target decision.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..analysis.unjudged_checks import UnjudgedCheck
from ..core.ties import TieCheck
from ..errors import RagReportError
from ..present import (
    DISPLAY_DIGITS,
)
from .breakdowns import DocumentReport, RunLatency, SliceReport
from .cells import (
    BaselineDrift,
    Comparison,
    Curve,
    Distribution,
    DropCheck,
    InputFile,
    JudgmentSources,
    PRCurve,
    RunHealth,
    StatsInfo,
    SummaryRow,
    TargetCell,
    TargetRow,
    Verdict,
    WorstQueries,
)

if TYPE_CHECKING:
    from ..parallel import Mapper

__all__ = ["NO_RANKINGS_NOTE", "Output", "Report", "install_output"]

#: What a report built from per-query results (:mod:`ragreport.core.perquery`) says it omits.
NO_RANKINGS_NOTE = ("From per-query results: no rankings, so the worst queries come without "
                    "their ranked lists and the tie exposure is not shown.")


@dataclass(frozen=True)
class Report:
    """All the data of one report."""

    title: str
    generated_at: str
    version: str
    command: str
    inputs: list[InputFile]
    runs: list[str]
    baseline: str
    measures: list[str]
    k_max: int
    qrels_queries: int
    targets: list[TargetRow]
    summary: list[SummaryRow]
    curves: list[Curve]
    distributions: list[Distribution]
    worst: list[WorstQueries]
    comparisons: list[Comparison]
    health: list[RunHealth]
    conventions: dict[str, str]
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    digits: int = DISPLAY_DIGITS
    stats: StatsInfo | None = None
    drops: list[DropCheck] = field(default_factory=list)
    document: DocumentReport | None = None
    """Chunk and document level side by side (evaluated with a doc map), else None."""
    ties: list[TieCheck] = field(default_factory=list)
    """Each target measure of each run through its tied scores (see
    :func:`ragreport.core.ties.tie_checks`)."""
    unjudged: list[UnjudgedCheck] = field(default_factory=list)
    """Each target measure of each run through its unjudged documents (see
    :func:`ragreport.analysis.unjudged_checks.unjudged_checks`)."""
    judgments: JudgmentSources | None = None
    """Who judged, when the qrels say (their sources), else None."""
    unjudged_policy: str = "warn"
    """What a target decision that depends on unjudged documents does: said (``"warn"``),
    or a pass that depends on them fails (``"fail"``)."""
    pr_curve: PRCurve | None = None
    """The 11-point interpolated precision-recall curve of every run."""
    judged_at_k: tuple[int, dict[str, float]] | None = None
    """With ``per_query=True``: (K, run -> mean Judged@K) at the worst queries' K, what a
    later ``check --baseline-report`` compares (:mod:`ragreport.analysis.drift`)."""
    drift: BaselineDrift | None = None
    """Compared with a stored baseline (``check --baseline-report``): the drift checks."""
    chart: bool = True
    """The Markdown's Mermaid chart of the headline measure against K (``--no-chart``:
    False)."""
    slices: SliceReport | None = None
    """Per query slice (``slices=``, ``--slices``): means, intervals, targets, comparisons."""
    latency: list[RunLatency] = field(default_factory=list)
    """Per-query latency of the runs that carry it (:func:`ragreport.collect_run`, JSONL
    ``latency_ms``), in run order; empty when no run does."""
    rankings: bool = True
    """False when built from per-query results (:mod:`ragreport.core.perquery`): no rankings, so
    the worst queries come without their ranked lists and there is no tie exposure."""

    @property
    def all_passed(self) -> bool:
        return (all(t.passed for t in self.targets) and not any(d.failed for d in self.drops)
                and (self.slices is None or self.slices.passed))

    @property
    def verdict(self) -> Verdict:
        """What the report decides, counted once (every view shows these numbers)."""
        slice_cells = ([(s, c) for s in self.slices.slices for t in s.targets for c in t.cells]
                       if self.slices is not None else [])
        return Verdict(
            checks=sum(len(t.cells) for t in self.targets),
            failed=sum(1 for t in self.targets for c in t.cells if not c.passed),
            slice_checks=len(slice_cells),
            slice_failed=sum(1 for _, c in slice_cells if not c.passed),
            failing_slices=self.slices.failing if self.slices is not None else [],
            drops=len(self.drops), drops_failed=sum(1 for d in self.drops if d.failed),
            max_drop=self.drops[0].max_drop if self.drops else None,
            passed=self.all_passed,
            drops_inconclusive=sum(1 for d in self.drops if d.inconclusive))

    @property
    def ties_exposed(self) -> int:
        """(run, measure) pairs with tied scores across their cut or a tie-dependent query."""
        return sum(1 for t in self.ties if t.exposed)

    @property
    def tie_flips(self) -> int:
        """Target decisions the order of tied scores could flip (their ``TieCheck.note``)."""
        return sum(1 for t in self.ties if t.note)

    @property
    def unjudged_flips(self) -> int:
        """Target and drop decisions the unjudged documents could flip (their notes)."""
        return sum(1 for u in self.unjudged if u.note) + sum(
            1 for d in self.drops if d.unjudged is not None and d.unjudged.depends)

    @property
    def means(self) -> dict[str, dict[str, float]]:
        """Run -> measure -> mean, as the summary shows them."""
        out: dict[str, dict[str, float]] = {}
        for s in self.summary:
            for c in s.cells:
                out.setdefault(c.run, {})[s.measure] = c.value
        return out

    @property
    def failed_checks(self) -> list[tuple[TargetRow, TargetCell]]:
        return [(t, c) for t in self.targets for c in t.cells if not c.passed]

    def to_html(self, template_dir: str | os.PathLike[str] | None = None, *,
                workers: Mapper | None = None) -> str:
        """The self-contained HTML report (see :mod:`ragreport.report.html`)."""
        return _output().render_html(self, template_dir=template_dir, workers=workers)

    def to_markdown(self, max_chars: int = 60_000) -> str:
        """GitHub-flavoured Markdown for pull-request comments (see :mod:`.markdown`)."""
        return _output().render_markdown(self, max_chars=max_chars)

    def to_json(self) -> str:
        """The JSON document (see :mod:`ragreport.report.jsonout`)."""
        return _output().render_json(self)

    def save(self, *, html: str | os.PathLike[str] | None = None,
             markdown: str | os.PathLike[str] | None = None,
             json: str | os.PathLike[str] | None = None,
             template_dir: str | os.PathLike[str] | None = None,
             workers: Mapper | None = None) -> list[Path]:
        """Write the chosen outputs, all of them or none; refuses to overwrite an input file.

        Every output is rendered first, then written to a temporary file beside its
        destination, and only when all of them are written are they renamed into place
        (see :func:`ragreport.fileio.write_outputs`): a failure (a template error, a NaN
        the JSON cannot hold, a missing or read-only folder, a full disk) replaces no
        existing file. ``-`` is standard output (for one output); a symbolic link is
        written through. ``workers`` (:mod:`ragreport.parallel`) draw the HTML report's
        plots. Written by :func:`ragreport.report.output.save`.
        """
        return _output().save(self, html=html, markdown=markdown, json=json,
                              template_dir=template_dir, workers=workers)

    def log_to_mlflow(self, run_id: str | None = None, *, artifact_path: str = "ragreport",
                      template_dir: str | os.PathLike[str] | None = None,
                      workers: Mapper | None = None) -> str:
        """Log the means, intervals, curves, conventions, input hashes and the three outputs
        into an MLflow run (``run_id``, else the active one, else a new one); returns its id.
        Needs ``pip install 'ragreport[mlflow]'``; see :mod:`ragreport.report.tracking`."""
        return _output().log_to_mlflow(self, run_id, artifact_path=artifact_path,
                                       template_dir=template_dir, workers=workers)

    def log_to_wandb(self, run: object = None, *, project: str | None = None,
                     template_dir: str | os.PathLike[str] | None = None,
                     workers: Mapper | None = None) -> str:
        """The same into a W&B run (``run``, else ``wandb.run``, else a new one); returns its
        id. Needs ``pip install 'ragreport[wandb]'``; see :mod:`ragreport.report.tracking`."""
        return _output().log_to_wandb(self, run, project=project, template_dir=template_dir,
                                      workers=workers)


class Output(Protocol):
    """The renderers, the writer and the trackers (:mod:`ragreport.report.output`) as the data
    sees them.

    The report data never imports its renderers: the ``ragreport.report`` package installs
    them with :func:`install_output` when it is imported (always before this module).
    """

    def render_html(self, report: Report, template_dir: str | os.PathLike[str] | None = ...,
                    *, workers: Mapper | None = ...) -> str: ...

    def render_markdown(self, report: Report, max_chars: int = ...) -> str: ...

    def render_json(self, report: Report) -> str: ...

    def save(self, report: Report, *, html: str | os.PathLike[str] | None = ...,
             markdown: str | os.PathLike[str] | None = ...,
             json: str | os.PathLike[str] | None = ...,
             template_dir: str | os.PathLike[str] | None = ...,
             workers: Mapper | None = ...) -> list[Path]: ...

    def log_to_mlflow(self, report: Report, run_id: str | None = ..., *,
                      artifact_path: str = ...,
                      template_dir: str | os.PathLike[str] | None = ...,
                      workers: Mapper | None = ...) -> str: ...

    def log_to_wandb(self, report: Report, run: object = ..., *, project: str | None = ...,
                     template_dir: str | os.PathLike[str] | None = ...,
                     workers: Mapper | None = ...) -> str: ...


_OUTPUT: list[Output] = []


def install_output(output: Output) -> None:
    """Make ``output`` the renderers and writer behind :class:`Report`'s methods."""
    _OUTPUT[:] = [output]


def _output() -> Output:
    if not _OUTPUT:  # only reachable if ragreport.report's __init__ was bypassed
        raise RagReportError("the report renderers are not installed (import ragreport.report)")
    return _OUTPUT[0]
