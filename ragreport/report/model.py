"""Report data: everything a renderer needs, as plain dataclasses; nothing rendered here.

:func:`~ragreport.report.build.build_report` turns evaluation results (one per run) into a
:class:`Report` (building lives in :mod:`.build`, :mod:`.documents`, :mod:`.slicing`). The HTML,
Markdown and JSON renderers only read it. Values are kept as floats *and* as the text every
output shows (4 decimals), so the outputs agree with each other and with the target decision.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..analysis.drift import DriftCheck
from ..core.ties import TieCheck
from ..errors import RagReportError
from ..io.common import Source
from ..present import (
    DISPLAY_DIGITS,
    pct,
    shown,
)

if TYPE_CHECKING:
    from ..parallel import Mapper

__all__ = [
    "NO_RANKINGS_NOTE",
    "RANK_ROWS",
    "BaselineDrift",
    "Comparison",
    "Curve",
    "Distribution",
    "DocumentReport",
    "DocumentRun",
    "DropCheck",
    "InputFile",
    "LevelCell",
    "LevelRow",
    "PRCurve",
    "QueryDetail",
    "QueryDocuments",
    "RankRow",
    "Report",
    "RunHealth",
    "RunLatency",
    "Slice",
    "SliceCell",
    "SliceReport",
    "SliceRow",
    "SliceTargetCell",
    "SliceTargetRow",
    "StatsInfo",
    "SummaryCell",
    "SummaryRow",
    "TargetCell",
    "TargetRow",
    "Verdict",
    "WorstQueries",
    "install_output",
]

RANK_ROWS = 20


@dataclass(frozen=True)
class InputFile:
    """An input file, identified by name and content hash."""

    role: str
    name: str
    path: str
    sha256: str
    size: int
    judgments_sha256: str | None = None
    """For qrels: the fingerprint of the judgments read
    (:func:`ragreport.analysis.drift.judgments_sha256`), the same for the same judgments in
    any file format or row order; None when not computed."""

    @classmethod
    def from_path(cls, role: str, path: str | os.PathLike[str] | Source,
                  display: str | None = None) -> InputFile:
        """Hash an input; ``display`` replaces the path shown (e.g. package-relative).

        A :class:`~ragreport.io.common.Source` (standard input, a FIFO, read once) is hashed
        from the bytes it holds: the path is never opened again. Undecodable bytes of a file
        name are shown escaped (``\\xff``).
        """
        from ..fileio import shown_path

        h = hashlib.sha256()
        size = 0
        if isinstance(path, Source):
            h.update(path.data)
            size = len(path.data)
            name = shown_path(path.name)
            return cls(role, name, display or name, h.hexdigest(), size)
        p = Path(path)
        with p.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
                size += len(chunk)
        return cls(role, shown_path(p.name), display or shown_path(path), h.hexdigest(),
                   size)


@dataclass(frozen=True)
class TargetCell:
    run: str
    value: float
    shown: str
    passed: bool
    margin: float
    margin_text: str
    on: str = "mean"  # "mean" or "ci_lower": what ``value`` is
    mean: float = float("nan")


@dataclass(frozen=True)
class TargetRow:
    measure: str
    op: str
    threshold: float
    threshold_text: str
    source: str
    cells: list[TargetCell]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cells)


@dataclass(frozen=True)
class SummaryCell:
    run: str
    value: float
    shown: str
    delta: float | None
    delta_text: str
    direction: str  # "up", "down", "same" or "" (the baseline itself)
    ci_lower: float | None = None
    ci_upper: float | None = None
    ci_text: str = ""  # "[0.5012, 0.5833]"
    p_value: float | None = None  # Holm-adjusted randomization-test p-value vs the baseline
    t_p_value: float | None = None  # Holm-adjusted paired t-test p-value
    significant: bool = False
    total: float | None = None  # the sum over queries, for a count trec_eval sums (NumQ...)
    total_text: str = ""  # "2050"


@dataclass(frozen=True)
class SummaryRow:
    measure: str
    title: str
    cells: list[SummaryCell]


@dataclass(frozen=True)
class Curve:
    """Mean of one family at K = 1..k_max for each run, with the targets on that family."""

    family: str
    title: str
    ks: list[int]
    series: dict[str, list[float]]
    targets: list[tuple[int | None, float, str]]  # (K or None for all K, threshold, label)
    bands: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    """Per run: (lower, upper) bootstrap interval of the mean at each K."""


@dataclass(frozen=True)
class PRCurve:
    """The 11-point interpolated precision-recall curve: per run, the mean over the queries
    of the interpolated precision at recall 0.0, 0.1, ..., 1.0 (trec_eval's
    ``iprec_at_recall``; see :func:`ragreport.core.engine.pr_curve`)."""

    levels: list[float]
    series: dict[str, list[float]]  # run -> 11 means, in ``levels`` order
    rel: int  # the smallest grade that counts as relevant
    queries: dict[str, int]  # run -> queries the mean is over
    targets: list[tuple[float, float, str]] = field(default_factory=list)
    """Targets on IPrec@r at this relevance level: (r, threshold, label)."""
    tie_note: str = ""
    """Under ``ties="average"``: the curve is in trec_eval's tie order (interpolated
    precision has no exact expected value over tie orders), said in one sentence."""

    def shown(self, run: str) -> list[str]:
        """The run's 11 means as every output shows them (4 decimals)."""
        return [shown(v) for v in self.series.get(run, [])]


@dataclass(frozen=True)
class Distribution:
    """Per-query values of one measure, per run."""

    measure: str
    values: dict[str, list[float]]


@dataclass(frozen=True)
class RankRow:
    """One retrieved document of a query's ranking, as shown.

    ``judged`` is False for an *unjudged* document (no qrels line for this query and
    document), which is not the same as a judged non-relevant one (a grade below the
    relevance level): ``grade`` is then ``"unjudged"`` and ``grade_value`` None.
    """

    rank: int
    doc_id: str
    score: str
    grade: str
    relevant: bool
    judged: bool
    within_k: bool
    snippet: str
    score_value: float | None = None
    grade_value: float | None = None


@dataclass(frozen=True)
class QueryDetail:
    query_id: str
    text: str
    run: str
    value: float
    shown: str
    failure: str
    n_ret: int
    n_rel: int
    rows: list[RankRow]
    missing: list[tuple[str, str, str]]  # (doc id, grade, snippet) of unretrieved relevant docs
    top_k: int = 0  # documents in the top K: min(K, retrieved)
    unjudged_top_k: int = 0  # of those, how many have no judgment (no qrels line)
    judged_at_k: float | None = None  # Judged@K of the query (None: measure unavailable)
    tie_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Target measures whose value for this query depends on the order of tied scores:
    measure -> (pessimistic, optimistic) value (see :mod:`ragreport.core.ties`)."""

    @property
    def tie_badge(self) -> str:
        """``"R@5 0.2000–0.6000"`` (pessimistic–optimistic) for each target measure that
        depends on the query's tie order; ``""`` when none does."""
        return "; ".join(f"{m} {shown(lo)}–{shown(hi)}" for m, (lo, hi)
                         in self.tie_ranges.items())

    @property
    def unjudged_text(self) -> str:
        """``"3 of the top 10 unjudged"`` (``"nothing retrieved"`` for an empty ranking)."""
        if self.top_k == 0:
            return "nothing retrieved"
        return f"{self.unjudged_top_k} of the top {self.top_k} unjudged"


@dataclass(frozen=True)
class WorstQueries:
    """The worst queries of a run (:func:`ragreport.analysis.failures.worst_queries`): never
    a query without a judged relevant document, which is counted apart."""

    run: str
    measure: str
    k: int
    total: int
    queries: list[QueryDetail]
    failure_counts: dict[str, int]
    """Queries of each failure kind at K (failures of retrieval only), by label."""
    no_judged_relevant: int = 0
    """Queries without a judged relevant document: not failures, never among the worst."""


@dataclass(frozen=True)
class Comparison:
    """Per-query wins/losses/ties of a run against the baseline, on their common queries."""

    run: str
    baseline: str
    measure: str
    wins: int
    losses: int
    ties: int


@dataclass(frozen=True)
class RunHealth:
    run: str
    evaluated: int
    run_only: int
    qrels_only: int
    no_relevant: int
    empty_retrievals: int
    duplicates_dropped: int
    skipped_no_relevant: int
    run_only_examples: list[str]
    qrels_only_examples: list[str]
    identical_ids_dropped: int | None = None  # None: ignore_identical_ids was off


@dataclass(frozen=True)
class StatsInfo:
    """How intervals and tests were computed (stated wherever they are shown)."""

    level: float
    resamples: int
    curve_resamples: int
    seed: int
    alpha: float
    test: str = "paired randomization test (sign flips)"
    also: str = "paired t-test"
    correction: str = "Holm"
    interval: str = "percentile bootstrap over queries"

    def describe(self) -> str:
        return (f"{pct(self.level)} {self.interval} ({self.resamples} resamples, "
                f"{self.curve_resamples} for curves, seed {self.seed}); significance: "
                f"{self.test}, {self.correction}-corrected over all runs and measures, "
                f"alpha {self.alpha:g}")


@dataclass(frozen=True)
class Verdict:
    """The counts behind the report's decision (:attr:`Report.verdict`).

    ``checks`` / ``failed``: target checks on the whole runs (one per run and target) and
    those that fail; ``slice_checks`` / ``slice_failed`` the same for the slices' targets,
    ``failing_slices`` the slices with a failing one (in input order); ``drops`` /
    ``drops_failed`` the ``--max-drop`` checks, ``max_drop`` the allowed drop; ``passed``:
    nothing failed (:attr:`Report.all_passed`, exit 0).
    """

    checks: int
    failed: int
    slice_checks: int
    slice_failed: int
    failing_slices: list[str]
    drops: int
    drops_failed: int
    max_drop: float | None
    passed: bool

    @property
    def nothing_checked(self) -> bool:
        """No target, slice target or drop check at all."""
        return not (self.checks or self.slice_checks or self.drops)


@dataclass(frozen=True)
class DropCheck:
    """``--max-drop``: is a run worse than the baseline by more than allowed, significantly?"""

    run: str
    baseline: str
    measure: str
    delta: float  # mean over common queries of run - baseline
    delta_lower: float
    delta_upper: float
    p_value: float  # Holm-adjusted
    max_drop: float
    significant: bool
    failed: bool
    message: str


@dataclass(frozen=True)
class BaselineDrift:
    """The stored baseline of a report (``check --baseline-report``) and its drift checks
    (:mod:`ragreport.analysis.drift`); ``allowed``: drift was reported (``--allow-drift``),
    not refused."""

    source: str
    run: str
    generated_at: str
    checks: list[DriftCheck]
    allowed: bool = False

    @property
    def drifted(self) -> bool:
        return any(c.drifted for c in self.checks)


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
            passed=self.all_passed)

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


# ---- chunk and document level (evaluated with a doc map: ragreport.core.docmap) -----------------

@dataclass(frozen=True)
class LevelCell:
    """One run's mean of one measure at chunk and at document level."""

    run: str
    chunk: float
    chunk_shown: str
    document: float
    document_shown: str
    ci_lower: float | None = None  # document-level bootstrap interval
    ci_upper: float | None = None
    ci_text: str = ""


@dataclass(frozen=True)
class LevelRow:
    measure: str
    title: str
    cells: list[LevelCell]


@dataclass(frozen=True)
class DocumentRun:
    """Per run: redundancy at K (top-K chunks whose document is ranked above them) and how
    the run met the map."""

    run: str
    k: int
    redundancy: float  # mean over queries
    shown: str
    queries_affected: int  # queries with at least one such chunk in the top K
    queries: int
    curve: list[float]  # mean redundancy at K = 1..k_max
    chunks_collapsed: int
    unmapped_retrieved: int
    unmapped_judged: int


@dataclass(frozen=True)
class QueryDocuments:
    """The document level of one worst query (drill-down): its redundancy at K, its value
    at document level, and the document of each shown row (``repeated``: a chunk of that
    document is ranked above)."""

    k: int
    redundant: int
    value: float
    shown: str
    documents: list[str]
    repeated: list[bool]


@dataclass(frozen=True)
class DocumentReport:
    """Chunk and document level side by side (see :mod:`ragreport.core.docmap`)."""

    source: str
    chunks: int
    documents: int
    judgment_level: str  # "chunk" or "document": the level the judgments were given at
    target_level: str  # the level the targets (and drop checks) were checked at
    unmapped: str
    description: str
    summary: list[LevelRow]
    curves: list[Curve]  # document-level mean curves
    runs: list[DocumentRun]
    queries: dict[str, dict[str, QueryDocuments]]  # run -> worst query id -> drill-down
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """With ``per_query=True``: run -> query id -> document-level value of each measure and
    ``redundancy@K``."""


@dataclass(frozen=True)
class SliceCell:
    """One run's mean of one measure on one slice, with its interval and, for a run other
    than the baseline, its comparison with the baseline on the slice."""

    run: str
    n: int
    value: float | None  # None: no query of the slice evaluated
    shown: str
    ci_lower: float | None = None
    ci_upper: float | None = None
    ci_text: str = ""
    delta: float | None = None
    delta_text: str = ""
    direction: str = ""  # "up", "down", "same" or "" (the baseline; no common query)
    p_value: float | None = None  # Holm-adjusted over runs, slices and measures
    t_p_value: float | None = None
    significant: bool = False
    wins: int | None = None
    losses: int | None = None
    ties: int | None = None
    compared: int = 0  # queries of the slice both this run and the baseline evaluated


@dataclass(frozen=True)
class SliceTargetCell:
    run: str
    value: float | None  # None: not checkable (see reason)
    shown: str
    passed: bool
    margin_text: str
    on: str = "mean"
    mean: float | None = None
    reason: str = ""
    margin: float | None = None


@dataclass(frozen=True)
class SliceTargetRow:
    measure: str
    op: str
    threshold: float
    threshold_text: str
    source: str
    cells: list[SliceTargetCell]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cells)


@dataclass(frozen=True)
class SliceRow:
    """One measure on one slice: a cell per run, and the slice's target on it if any."""

    measure: str
    title: str
    cells: list[SliceCell]
    target: SliceTargetRow | None = None


@dataclass(frozen=True)
class Slice:
    name: str
    queries: dict[str, int]  # run -> the slice's queries it evaluated
    few: bool  # some run has fewer than min_queries of them: no interval, no test
    rows: list[SliceRow]  # every bounded measure (and the slice targets' measures)
    targets: list[SliceTargetRow]
    curves: list[Curve]

    @property
    def passed(self) -> bool:
        return all(t.passed for t in self.targets)

    @property
    def n(self) -> int:
        """The most queries of the slice any run evaluated."""
        return max(self.queries.values(), default=0)


@dataclass(frozen=True)
class SliceReport:
    """Query slices: per slice and run, the numbers of the report (see
    :mod:`ragreport.analysis.slices`)."""

    source: str
    min_queries: int
    rule: str  # the too-few-queries rule, one sentence
    slices: list[Slice]  # in the order of the slices input
    measures: list[str]  # the measures every view's slice table shows (at most 6)
    unknown: int  # query ids of the slices that no run evaluated
    unknown_examples: list[str]
    untagged: dict[str, int]  # run -> evaluated queries in no slice
    duplicates: int = 0  # (query, slice) pairs given more than once

    @property
    def passed(self) -> bool:
        return all(s.passed for s in self.slices)

    @property
    def failing(self) -> list[str]:
        """The slices with a failing target, in input order."""
        return [s.name for s in self.slices if not s.passed]

    @property
    def ordered(self) -> list[Slice]:
        """The failing slices first, then the others, each group in input order."""
        return [s for s in self.slices if not s.passed] + [s for s in self.slices if s.passed]

    @property
    def failed_checks(self) -> list[tuple[Slice, SliceTargetRow, SliceTargetCell]]:
        return [(s, t, c) for s in self.slices for t in s.targets for c in t.cells
                if not c.passed]

    def rows_shown(self, s: Slice) -> list[SliceRow]:
        """The rows of :attr:`measures`, in that order."""
        by = {r.measure: r for r in s.rows}
        return [by[m] for m in self.measures if m in by]


@dataclass(frozen=True)
class RunLatency:
    """A run's per-query latency in milliseconds
    (:func:`ragreport.analysis.latency.latency_summary`), with the text every output shows."""

    run: str
    queries: int
    p50_ms: float
    p95_ms: float
    max_ms: float

    @property
    def texts(self) -> tuple[str, str, str]:
        """p50, p95 and max as shown (:func:`ragreport.present.ms_text`, no unit)."""
        from ..present import ms_text

        return ms_text(self.p50_ms), ms_text(self.p95_ms), ms_text(self.max_ms)
