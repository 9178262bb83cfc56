"""Report data: everything a renderer needs, as plain dataclasses; nothing rendered here.

:func:`build_report` turns evaluation results (one per run) into a :class:`Report`. The HTML,
Markdown and JSON renderers only read it. Values are kept as floats *and* as the text every
output shows (4 decimals), so the outputs agree with each other and with the target decision.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .._version import __version__
from ..analysis.compare import baseline_tests, common_queries, outcomes, paired_columns
from ..analysis.curves import curve_families, run_intervals
from ..analysis.drift import DriftCheck
from ..analysis.failures import FAILURE_KINDS, judged_at, unjudged_in_top, worst_queries
from ..analysis.targets import drop_beyond, drop_fails, run_checks
from ..errors import RagReportError
from ..io.common import Source
from ..measures import Measure, parse_measure
from ..perquery import has_rankings
from ..perquery import unjudged_in_top as stored_unjudged_in_top
from ..present import (
    DISPLAY_DIGITS,
    measure_label,
    measure_title,
    p_clause,
    pct,
    shown,
    signed,
    snippet,
    target_rule,
    threshold_text,
)
from ..result import EvaluationResult
from ..settings import StatsSettings
from ..targets import Target
from ..ties import TieCheck, tie_checks

if TYPE_CHECKING:
    from ..parallel import Mapper

__all__ = [
    "BaselineDrift",
    "Comparison",
    "Curve",
    "Distribution",
    "InputFile",
    "PRCurve",
    "QueryDetail",
    "RankRow",
    "Report",
    "RunHealth",
    "RunLatency",
    "SummaryCell",
    "SummaryRow",
    "TargetCell",
    "TargetRow",
    "Verdict",
    "WorstQueries",
    "build_report",
    "generated_at_from_env",
    "judged_at",
    "unjudged_in_top",
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
    ``iprec_at_recall``; see :func:`ragreport.engine.pr_curve`)."""

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
    measure -> (pessimistic, optimistic) value (see :mod:`ragreport.ties`)."""

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


#: What a report built from per-query results (:mod:`ragreport.perquery`) says it omits.
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
    :func:`ragreport.ties.tie_checks`)."""
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
    """False when built from per-query results (:mod:`ragreport.perquery`): no rankings, so
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


_EPOCH = re.compile(r"[+-]?[0-9]{1,4000}")


def _utc_text(t: _dt.datetime, what: str, given: object) -> str:
    try:
        u = (t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)).astimezone(
            _dt.timezone.utc)
    except (OverflowError, ValueError):
        raise RagReportError(f"{what} is out of range (years 1 to 9999 in UTC), got "
                             f"{given!r}") from None
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


def generated_at_from_env(when: str | _dt.datetime | None = None) -> str:
    """ISO time for the report: ``when``, else ``SOURCE_DATE_EPOCH``, else now (UTC).

    ``when`` is an ISO 8601 date or date and time (a time without an offset is UTC).
    ``SOURCE_DATE_EPOCH`` is whole seconds since 1970 (negative: before), as ``date +%s``
    prints them. Either must fall within the years 1 to 9999 once in UTC.

    Raises
    ------
    RagReportError
        ``when`` or ``SOURCE_DATE_EPOCH`` is not such a time (the message says what it got).

    >>> generated_at_from_env("2026-01-02T03:04:05Z")
    '2026-01-02T03:04:05Z'
    >>> generated_at_from_env("9999-12-31")
    '9999-12-31T00:00:00Z'
    """
    if isinstance(when, _dt.datetime):
        return _utc_text(when, "generated-at", when.isoformat())
    if when is not None and not isinstance(when, str):
        raise RagReportError(f"generated-at must be an ISO date/time, got {when!r}")
    if when:
        try:
            parsed = _dt.datetime.fromisoformat(when.replace("Z", "+00:00"))
        except (ValueError, OverflowError):
            raise RagReportError("generated-at must be an ISO date/time (years 1 to 9999), "
                                 f"got {when!r}") from None
        return _utc_text(parsed, "generated-at", when)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        if not _EPOCH.fullmatch(epoch.strip()):
            raise RagReportError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970, got "
                                 f"{epoch!r}")
        try:
            t = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(
                seconds=int(epoch))
        except (OverflowError, ValueError):
            raise RagReportError("SOURCE_DATE_EPOCH is out of range (years 1 to 9999), got "
                                 f"{epoch!r}") from None
        return _utc_text(t, "SOURCE_DATE_EPOCH", epoch)
    return _utc_text(_dt.datetime.now(_dt.timezone.utc), "the clock", "now")


def direction_mark(delta: float) -> str:
    s = shown(abs(delta))
    if s == shown(0.0):
        return "same"
    return "up" if delta > 0 else "down"


def _grade_text(g: float | None) -> str:
    if g is None:
        return "unjudged"
    return f"{g:g}"


def build_report(
    results: Sequence[EvaluationResult],
    targets: Sequence[Target] = (),
    *,
    baseline: str | None = None,
    queries: Mapping[str, str] | None = None,
    docs: Mapping[str, str] | None = None,
    title: str = "Retrieval evaluation",
    generated_at: str | _dt.datetime | None = None,
    command: str = "",
    inputs: Sequence[InputFile] = (),
    worst_measure: str | Measure | None = None,
    worst_n: int = 20,
    per_query: bool = False,
    stats: bool = True,
    ci_level: float = 0.95,
    resamples: int = 10_000,
    curve_resamples: int = 1_000,
    seed: int = 0,
    alpha: float = 0.05,
    settings: StatsSettings | None = None,
    max_drop: float | None = None,
    workers: Mapper | None = None,
    target_level: str = "chunk",
    slices: Any = None,
    slice_targets: Mapping[str, Sequence[Target]] | None = None,
    slice_min_queries: int | None = None,
) -> Report:
    """Build the report data from one :class:`EvaluationResult` per run.

    Parameters
    ----------
    results : list of EvaluationResult
        One per run, with distinct run names; the first is the default baseline.
    targets : list of Target
        Checked against every run's mean (see :mod:`ragreport.targets`).
    baseline : str, optional
        Name of the run the others are compared with.
    queries, docs : dict, optional
        Query and document texts, shown next to ids.
    worst_measure : str, optional
        Measure that ranks the worst queries; default the first target's measure, else the
        first summary measure with a cutoff.
    worst_n : int
        How many worst queries per run get a detailed ranking.
    per_query : bool
        Keep every per-query value (for JSON ``--per-query``).
    stats : bool
        Compute bootstrap intervals and paired tests (see :mod:`ragreport.stats`).
    ci_level, resamples, curve_resamples, seed : float, int, int, int
        Confidence level, bootstrap resamples for the summary measures and for the curves'
        bands, and the seed (same seed, same numbers).
    alpha : float
        Significance level for the Holm-corrected paired tests.
    settings : StatsSettings, optional
        All of the above in one object (:class:`ragreport.analysis.settings.StatsSettings`,
        what the CLI and the explorer use), instead of ``ci_level``, ``resamples``,
        ``curve_resamples``, ``seed`` and ``alpha``.
    max_drop : float, optional
        Fail (``Report.all_passed`` False) when a run's mean on a target measure is below the
        baseline's by more than this *and* the drop is significant.
    target_level : {"chunk", "document"}
        With results evaluated with a doc map (``doc_map=``): check the targets and
        ``max_drop`` on the chunk-level means (default) or on the document-level ones.
        Either way :attr:`Report.document` holds both levels side by side.
    slices : QuerySlices, mapping or path, optional
        Query id -> slice names (:func:`ragreport.io.slices.load_slices` reads any of its
        forms): :attr:`Report.slices` holds the numbers per slice.
    slice_targets : mapping, optional
        Slice name -> its targets (:func:`ragreport.targets.load_slice_targets`); a failing
        one fails the report (``Report.all_passed``).
    slice_min_queries : int, optional
        Fewest queries of a slice for an interval or a test (default
        :data:`ragreport.analysis.slices.MIN_QUERIES`).
    workers : Workers, optional
        Worker processes for the bootstrap (:mod:`ragreport.parallel`); the numbers do not
        depend on them.
    """
    if not results:
        raise RagReportError("no run to report on")
    given = StatsSettings(ci_level, resamples, curve_resamples, seed, alpha)
    if settings is not None and given != StatsSettings():
        raise RagReportError("give the statistics settings either as settings= or as "
                             "ci_level=, resamples=, curve_resamples=, seed=, alpha=, not both")
    settings = given if settings is None else settings
    ci_level, resamples, curve_resamples = (settings.level, settings.resamples,
                                            settings.curve_resamples)
    seed, alpha = settings.seed, settings.alpha
    _check_max_drop(max_drop)
    names = [r.run_name for r in results]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RagReportError(f"run names must be distinct, {dupes[0]!r} is used twice; "
                             "name the runs with --name")
    base_name = baseline if baseline is not None else names[0]
    if base_name not in names:
        raise RagReportError(f"baseline {base_name!r} is not one of the runs "
                             f"({', '.join(map(repr, names))})")
    if isinstance(worst_n, bool) or not isinstance(worst_n, int) or worst_n < 0:
        raise RagReportError(f"worst_n must be an integer >= 0, got {worst_n!r}")
    if target_level == "document" and any(slice_targets.values() if slice_targets else ()):
        # the slices are analysed on the chunk-level results: a slice target would be checked
        # at the level the option does not name
        raise RagReportError("per-slice targets are checked at chunk level, not at the "
                             "document level target_level='document' (--target-level "
                             "document) names; check the slices without it, or drop the "
                             "[targets.slices] tables")
    base = results[names.index(base_name)]
    # the curves' width: every run's curves stop at its deepest ranking (at least 20) and at
    # what its input holds; measures at larger cutoffs come from the whole rankings
    k_max = min(r.k_max for r in results)

    # measures: the union of the summary measures, then the targets' measures
    measures: list[Measure] = []
    for r in results:
        measures += [m for m in r.measures if m not in measures]
    measures += [t.measure for t in targets if t.measure not in measures]
    means = {r.run_name: {m: r.mean(m) for m in measures} for r in results}

    bounded = [m for m in measures if m.bounded]
    from ..stats import bootstrap_scheme  # the resampling the intervals used, as stated

    scheme = " / ".join(sorted({bootstrap_scheme(r.n_queries) for r in results}))
    info = (StatsInfo(ci_level, resamples, curve_resamples, seed, alpha, interval=scheme)
            if stats else None)
    families = curve_families(results, measures)

    # a run's summary intervals and its curves' bands share one sequence of resampled query
    # sets (the bands use its first curve_resamples): every family and K of a run together
    cis: dict[str, dict[Measure, tuple[float, float]]] = {}
    all_bands: dict[str, dict[Measure, tuple[list[float], list[float]]]] = {}
    if info is not None:
        for r in results:
            got = run_intervals(r, bounded, families, k_max, level=ci_level,
                                resamples=resamples, curve_resamples=curve_resamples,
                                seed=seed, workers=workers)
            cis[r.run_name] = got.measures
            if families:
                all_bands[r.run_name] = got.bands
    if any(t.on == "ci_lower" for t in targets) and info is None:
        raise RagReportError("a target is on the confidence interval; do not disable stats")
    lower = {run: {m: lo for m, (lo, _) in c.items()} for run, c in cis.items()}
    tests = baseline_tests(results, base, bounded, resamples=info.resamples, seed=info.seed
                           ) if info is not None else {}
    doc_results = _document_results(results, target_level)  # None without a doc map
    doc_cis = _document_cis(doc_results, bounded, info, workers)
    t_results: Sequence[EvaluationResult] = results
    t_lower = lower
    if target_level == "document" and doc_results is not None:
        t_results = doc_results
        t_lower = {run: {m: lo for m, (lo, _) in c.items()} for run, c in doc_cis.items()}
    checks = run_checks(t_results, targets, t_lower if info is not None else None)
    # tie exposure of the target measures, on the results the targets are checked on
    ranked = all(has_rankings(r) for r in results)  # per-query results hold no rankings
    tie_rows = tie_checks(doc_results if target_level == "document" and doc_results
                          is not None else results, targets, checks) if ranked else []
    target_rows = []
    for t in targets:
        cells = [TargetCell(c.run, c.value, c.shown, c.passed, c.margin, signed(c.margin),
                            t.on, c.mean)
                 for c in checks if c.target is t]
        target_rows.append(TargetRow(str(t.measure), t.op, t.threshold, threshold_text(t.threshold),
                                     t.source, cells))

    summary = []
    for m in measures:
        scells: list[SummaryCell] = []
        for r in results:
            v = means[r.run_name][m]
            lo, hi = cis.get(r.run_name, {}).get(m, (None, None))
            ci_text = f"[{shown(lo)}, {shown(hi)}]" if lo is not None and hi is not None else ""
            total = _total(r, m)
            if r is base:
                scells.append(SummaryCell(r.run_name, v, shown(v), None, "", "", lo, hi,
                                          ci_text, total=total, total_text=total_text(total)))
            else:
                d = v - means[base_name][m]
                p, tp = tests.get((r.run_name, m), (None, None))
                scells.append(SummaryCell(r.run_name, v, shown(v), d, signed(d),
                                          direction_mark(d), lo, hi, ci_text, p, tp,
                                          p is not None and p < alpha, total,
                                          total_text(total)))
        summary.append(SummaryRow(str(m), m.family.title, scells))

    chunk_targets = doc_results is None or target_level == "chunk"
    curves = []
    for fam in families:
        series = {r.run_name: [float(x) for x in r.mean_curve(fam)[:k_max]] for r in results}
        # the target marks go on the curves of the level the targets are checked at
        marks = [(t.measure.cutoff, t.threshold, target_rule(t.op, t.threshold)) for t in targets
                 if t.measure.curve_key == fam] if chunk_targets else []
        bands = {run: fams[fam] for run, fams in all_bands.items()}
        curves.append(Curve(str(fam), _curve_title(fam),
                            list(range(1, k_max + 1)), series, marks, bands))

    distributions = [Distribution(str(m), {r.run_name: r.values(m).tolist() for r in results})
                     for m in measures if m.bounded]

    wm = parse_measure(worst_measure) if worst_measure is not None else next(
        (t.measure for t in targets), next((m for m in measures if m.cutoff), measures[0]))
    k_worst = wm.cutoff or k_max
    texts = dict(queries or {})
    worst = [_worst_queries(r, wm, k_worst, worst_n, texts, docs or {}) for r in results]
    worst = _tie_badges(worst, tie_rows)

    comparisons = []
    for r in results:
        if r is base or not bounded:
            continue
        ia, ib = common_queries(r, base)
        wins, losses, ties = outcomes(
            np.column_stack([base.values(m)[ib] for m in bounded]),
            np.column_stack([r.values(m)[ia] for m in bounded]))
        comparisons += [Comparison(r.run_name, base_name, str(m), int(w), int(lo), int(t))
                        for m, w, lo, t in zip(bounded, wins, losses, ties, strict=True)]

    health = []
    for r in results:
        c = r.counts
        health.append(RunHealth(r.run_name, c.evaluated, c.run_only, c.qrels_only, c.no_relevant,
                                c.empty_retrievals, c.duplicates_dropped, c.skipped_no_relevant,
                                r.ranking.run_only_ids[:10], r.ranking.qrels_only_ids[:10],
                                c.identical_ids_dropped if r.conventions.ignore_identical_ids
                                else None))

    drop_on, drop_base = results, base
    if target_level == "document" and doc_results is not None:
        drop_on, drop_base = doc_results, doc_results[names.index(base_name)]
    drops = drop_checks(drop_on, drop_base, targets, info, max_drop) \
        if max_drop is not None else []

    pq: dict[str, dict[str, dict[str, float]]] = {}
    judged_k: tuple[int, dict[str, float]] | None = None
    if per_query:
        for r in results:
            cols = {str(m): r.values(m).tolist() for m in measures}
            pq[r.run_name] = {q: {k: v[i] for k, v in cols.items()}
                              for i, q in enumerate(r.query_ids)}
        judged_k = (k_worst, {r.run_name: float(judged_at(r, k_worst).mean())
                              if r.n_queries else 0.0 for r in results})

    return Report(
        title=title,
        generated_at=generated_at_from_env(generated_at),
        version=__version__,
        command=command,
        inputs=list(inputs),
        runs=names,
        baseline=base_name,
        measures=[str(m) for m in measures],
        k_max=k_max,
        qrels_queries=base.counts.qrels_queries,
        targets=target_rows,
        summary=summary,
        curves=curves,
        distributions=distributions,
        worst=worst,
        comparisons=comparisons,
        health=health,
        conventions=base.conventions.describe(),
        per_query=pq,
        stats=info,
        drops=drops,
        ties=tie_rows,
        pr_curve=_pr_curve(results, targets if chunk_targets else ()),
        judged_at_k=judged_k,
        latency=run_latencies(results),
        rankings=ranked,
        document=None if doc_results is None else _document_report(
            results, doc_results, measures, families, k_max, means, doc_cis, target_level,
            worst, wm, per_query, () if chunk_targets else targets),
        slices=None if slices is None and not slice_targets else _slice_report(
            results, base, slices, slice_targets or {}, measures, targets, k_max, info,
            slice_min_queries, workers),
    )


def _check_max_drop(max_drop: float | None) -> None:
    """A ``max_drop`` that would switch the check off silently (NaN) is an error."""
    if max_drop is not None and (isinstance(max_drop, (bool, np.bool_)) or not isinstance(
            max_drop, (int, float, np.integer, np.floating)) or not np.isfinite(float(max_drop))
            or not 0 <= float(max_drop) < 1):
        raise RagReportError(f"max_drop must be a number >= 0 and < 1, got {max_drop!r}")


def drop_checks(results: Sequence[EvaluationResult], base: EvaluationResult,
                 targets: Sequence[Target], info: StatsInfo | None, max_drop: float
                 ) -> list[DropCheck]:
    """Target measures on which a run is worse than the baseline by more than ``max_drop``."""
    from ..stats import holm

    if info is None:
        raise RagReportError("--max-drop needs the significance tests; do not disable stats")
    if isinstance(max_drop, bool) or not isinstance(max_drop, (int, float)) or max_drop < 0:
        raise RagReportError(f"max-drop must be a number >= 0, got {max_drop!r}")
    measures = list(dict.fromkeys(t.measure for t in targets if t.measure.bounded))
    rows: list[tuple[str, Measure, float, float, float, float, int]] = []
    pvals: list[float] = []
    for r in results:
        if r is base or not measures:
            continue
        ia, ib = common_queries(r, base)
        if len(ia) == 0:
            raise RagReportError(f"run {r.run_name!r} has no query in common with the "
                                 f"baseline {base.run_name!r}")
        a = np.column_stack([base.values(m)[ib] for m in measures])
        b = np.column_stack([r.values(m)[ia] for m in measures])
        got = paired_columns(a, b, resamples=info.resamples, seed=info.seed, level=info.level)
        pvals += [c.p_rand for c in got]
        rows += [(r.run_name, m, c.delta, c.lo, c.hi, 0.0, c.n)
                 for m, c in zip(measures, got, strict=True)]
    adj = holm(pvals) if pvals else np.zeros(0)
    out = []
    for (run, m, d, lo, hi, _, n), p in zip(rows, adj.tolist(), strict=True):
        significant = p < info.alpha
        too_big = drop_beyond(d, max_drop)
        failed = drop_fails(d, max_drop, significant)
        where = f"{shown(-d)} below" if d < 0 else f"{shown(d)} above"
        msg = (f"{m}: run {run!r} is {where} baseline {base.run_name!r} "
               f"({pct(info.level)} CI of the delta [{shown(lo)}, {shown(hi)}], "
               f"{p_clause(p)} {info.test}, Holm-corrected, {n} queries); allowed drop "
               f"{max_drop:g}"
               + ("; beyond it but not significant, so no failure"
                  if too_big and not significant else ""))
        out.append(DropCheck(run, base.run_name, str(m), d, lo, hi, float(p), max_drop,
                             significant, failed, msg))
    return out


def _worst_queries(r: EvaluationResult, m: Measure, k: int, n: int, queries: Mapping[str, str],
                   docs: Mapping[str, str]) -> WorstQueries:
    """The report's view of :func:`ragreport.analysis.failures.worst_queries`: each worst
    query with its ranking (at least :data:`RANK_ROWS` rows, through K up to 1,000), the
    relevant documents it missed, and texts."""
    sel = worst_queries(r, m, k, n)
    values, kinds = sel.values, sel.kinds
    level = r.conventions.rel_level
    n_rel = r.ranking.n_relevant(float(level))
    texts = {**r.query_texts, **queries}
    judged = judged_at(r, k) if len(sel.indices) else np.zeros(0)
    details = []
    ranked = has_rankings(r)  # per-query results (ragreport.perquery): no ranked lists
    for i in sel.indices.tolist():
        q = r.query_ids[i]
        rows = [RankRow(d.rank, d.doc_id, "" if d.score is None else f"{d.score:g}",
                        _grade_text(d.grade), d.relevant, d.grade is not None, d.rank <= k,
                        snippet(docs.get(d.doc_id)), d.score, d.grade)
                for d in r.ranked_list(q, limit=max(RANK_ROWS, min(k, 1000)))] if ranked else []
        missing = [(d, f"{g:g}", snippet(docs.get(d))) for d, g in r.missing_relevant(q)] \
            if ranked else []
        top, unjudged = unjudged_in_top(r, i, k) if ranked else stored_unjudged_in_top(r, i, k)
        details.append(QueryDetail(q, texts.get(q, ""), r.run_name, float(values[i]),
                                   shown(float(values[i])), FAILURE_KINDS[int(kinds[i])],
                                   int(r.ranking.n_ret[i]), int(n_rel[i]), rows, missing,
                                   top, unjudged, float(judged[i])))
    return WorstQueries(r.run_name, str(m), k, r.n_queries, details, sel.counts,
                        sel.no_judged_relevant)


def _curve_title(family: Measure, documents: bool = False) -> str:
    """``"nDCG@K (normalised discounted cumulative gain)"``: the label once, the full name
    after it.

    >>> _curve_title(Measure("nDCG")), _curve_title(Measure("P"), documents=True)
    ('nDCG@K (normalised discounted cumulative gain)', 'P@K (precision), documents')
    """
    return (f"{measure_label(family)}@K ({measure_title(family)})"
            + (", documents" if documents else ""))


def _total(r: EvaluationResult, m: Measure) -> float | None:
    """The sum over the queries of a count trec_eval sums (``Family.aggregate == "sum"``:
    NumQ, NumRet, NumRel, NumRelRet), else None: the report shows it beside the mean."""
    if m.family.aggregate != "sum":
        return None
    return float(np.sum(r.values(m)))


def total_text(total: float | None) -> str:
    """``"2050"`` (a whole number as digits), ``""`` without a total.

    >>> total_text(2050.0), total_text(None), total_text(2.5)
    ('2050', '', '2.5000')
    """
    if total is None:
        return ""
    return str(int(total)) if float(total).is_integer() else shown(total)


def _pr_curve(results: Sequence[EvaluationResult], targets: Sequence[Target] = ()) -> PRCurve:
    """Mean 11-point interpolated precision of each run (:func:`ragreport.engine.pr_curve`),
    with the targets on ``IPrec@r`` (at the curve's relevance level) to mark on it."""
    from ..engine import pr_curve
    from ..metrics import PR_LEVELS

    series = {}
    for r in results:
        per_query = pr_curve(r)
        # column by column: the same sums (bit for bit) as the mean of IPrec@r alone
        series[r.run_name] = [float(np.ascontiguousarray(per_query[:, j]).mean())
                              if len(per_query) else 0.0 for j in range(len(PR_LEVELS))]
    rel = int(results[0].conventions.rel_level)
    marks = [(float(t.measure.recall), t.threshold, target_rule(t.op, t.threshold))
             for t in targets if t.measure.family.at == "recall" and t.measure.recall is not None
             and t.measure.rel in (None, rel)]
    note = ""
    if any(r.conventions.ties == "average" for r in results):
        note = ("Computed in trec_eval's tie order (document id descending), not averaged "
                "over tie orders: interpolated precision has no exact expected value over "
                "them (IPrec is refused under ties='average').")
    return PRCurve(list(PR_LEVELS), series, rel, {r.run_name: r.n_queries for r in results},
                   marks, note)


# ---- chunk and document level (evaluated with a doc map: ragreport.docmap) -----------------

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
    """Chunk and document level side by side (see :mod:`ragreport.docmap`)."""

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


def _document_results(results: Sequence[EvaluationResult], target_level: str
                      ) -> list[EvaluationResult] | None:
    """The document-level results (every run evaluated with a doc map), else None."""
    if target_level not in ("chunk", "document"):
        raise RagReportError(f"target_level must be 'chunk' or 'document', got "
                             f"{target_level!r}")
    docs = [r.document for r in results]
    if all(d is None for d in docs):
        if target_level == "document":
            raise RagReportError("target_level='document' needs results evaluated with a doc "
                                 "map (doc_map=, --doc-map)")
        return None
    out = [d for d in docs if d is not None]
    if len(out) != len(docs):
        raise RagReportError("evaluate every run with the doc map, or none of them")
    return out


def _document_cis(doc_results: list[EvaluationResult] | None, bounded: list[Measure],
                  info: StatsInfo | None, workers: Mapper | None
                  ) -> dict[str, dict[Measure, tuple[float, float]]]:
    """Bootstrap intervals of the document-level means (the chunk level's resampled query
    sets: same seed, same queries)."""
    if doc_results is None or info is None or not bounded:
        return {}
    return {d.run_name: run_intervals(d, bounded, level=info.level, resamples=info.resamples,
                                      seed=info.seed, workers=workers).measures
            for d in doc_results}


def _document_report(results: Sequence[EvaluationResult], doc_results: list[EvaluationResult],
                     measures: list[Measure], families: list[Measure], k_max: int,
                     means: dict[str, dict[Measure, float]],
                     doc_cis: dict[str, dict[Measure, tuple[float, float]]], target_level: str,
                     worst: list[WorstQueries], wm: Measure, per_query: bool = False,
                     targets: Sequence[Target] = ()) -> DocumentReport:
    rows = []
    for m in measures:
        cells = []
        for r, d in zip(results, doc_results, strict=True):
            v, dv = means[r.run_name][m], d.mean(m)
            lo, hi = doc_cis.get(d.run_name, {}).get(m, (None, None))
            ci_text = f"[{shown(lo)}, {shown(hi)}]" if lo is not None and hi is not None else ""
            cells.append(LevelCell(r.run_name, v, shown(v), dv, shown(dv), lo, hi, ci_text))
        rows.append(LevelRow(str(m), m.family.title, cells))
    k_doc = min([k_max, *(d.k_max for d in doc_results)])
    curves = []
    for fam in families:
        if not all(fam in d.curves for d in doc_results):
            continue
        series = {d.run_name: [float(x) for x in d.mean_curve(fam)[:k_doc]] for d in doc_results}
        marks = [(t.measure.cutoff, t.threshold, target_rule(t.op, t.threshold)) for t in targets
                 if t.measure.curve_key == fam]  # targets checked at document level
        curves.append(Curve(str(fam), _curve_title(fam, documents=True),
                            list(range(1, k_doc + 1)), series, marks))
    k = wm.cutoff or k_max
    runs = []
    for r in results:
        red = r.redundancy if r.redundancy is not None else np.zeros((r.n_queries, 1), int)
        at = red[:, min(k, red.shape[1]) - 1] if red.shape[1] else np.zeros(r.n_queries, int)
        mean = float(at.mean()) if len(at) else 0.0
        info = r.doc_map_info
        runs.append(DocumentRun(
            r.run_name, k, mean, shown(mean), int((at > 0).sum()), r.n_queries,
            [float(x) for x in (red.mean(axis=0) if len(red) else red.sum(axis=0))[:k_max]],
            info.chunks_collapsed if info else 0, info.unmapped_retrieved if info else 0,
            info.unmapped_judged if info else 0))
    queries: dict[str, dict[str, QueryDocuments]] = {}
    for w in worst:
        r = results[[x.run_name for x in results].index(w.run)]
        d = doc_results[[x.run_name for x in results].index(w.run)]
        dm = r.doc_map
        per: dict[str, QueryDocuments] = {}
        for qd in w.queries:
            chunks = [row.doc_id for row in qd.rows]
            found = dm.document_of(chunks) if dm is not None and chunks else []
            docs_of = [f if f is not None else c for f, c in zip(found, chunks, strict=True)]
            seen: set[str] = set()
            repeated = []
            for x in docs_of:
                repeated.append(x in seen)
                seen.add(x)
            i = r.ranking.query_index(qd.query_id)
            qred = r.redundancy
            n_red = int(qred[i, min(w.k, qred.shape[1]) - 1]) if qred is not None else 0
            value = float(d.values(w.measure)[d.ranking.query_index(qd.query_id)])
            per[qd.query_id] = QueryDocuments(w.k, n_red, value, shown(value), docs_of,
                                              repeated)
        # worst first by the document-level value (ties: the chunk level's order)
        items = list(per.items())
        order = sorted(range(len(items)), key=lambda j: (items[j][1].value, j))
        queries[w.run] = dict(items[j] for j in order)
    pq: dict[str, dict[str, dict[str, float]]] = {}
    if per_query:
        for r, d in zip(results, doc_results, strict=True):
            cols = {str(m): d.values(m).tolist() for m in measures}
            if r.redundancy is not None and r.redundancy.shape[1]:
                cols[f"redundancy@{min(k, r.redundancy.shape[1])}"] = [
                    float(x) for x in r.redundancy[:, min(k, r.redundancy.shape[1]) - 1]]
            pq[d.run_name] = {q: {name: v[i] for name, v in cols.items()}
                              for i, q in enumerate(d.query_ids)}
    info0 = results[0].doc_map_info
    return DocumentReport(
        source=info0.source if info0 else "",
        chunks=info0.chunks if info0 else 0,
        documents=info0.documents if info0 else 0,
        judgment_level=info0.judgment_level if info0 else "chunk",
        target_level=target_level,
        unmapped=info0.unmapped if info0 else "error",
        description=results[0].conventions.doc_map or "",
        summary=rows, curves=curves, runs=runs, queries=queries, per_query=pq)


def _tie_badges(worst: list[WorstQueries], ties: list[TieCheck]) -> list[WorstQueries]:
    """The drill-down's queries with the target measures that depend on their tie order."""
    from dataclasses import replace

    out = []
    for w in worst:
        rows = [t for t in ties if t.run == w.run and t.dependent]
        queries = [replace(q, tie_ranges={t.measure: t.dependent_queries[q.query_id]
                                          for t in rows if q.query_id in t.dependent_queries})
                   for q in w.queries]
        out.append(replace(w, queries=queries))
    return out


# ---- query slices (slices=, --slices: ragreport.analysis.slices) ---------------------------

#: The most measures a slice table shows (the JSON output holds every bounded measure).
MAX_SLICE_MEASURES = 6
#: Families with a per-slice metric-vs-K curve (the first ones of the report's order, the
#: measures of the targets first): each is a plot per slice in the HTML report.
MAX_SLICE_FAMILIES = 2


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


def _slice_report(results: Sequence[EvaluationResult], base: EvaluationResult, slices: Any,
                  slice_targets: Mapping[str, Sequence[Target]], measures: list[Measure],
                  targets: Sequence[Target], k_max: int, info: StatsInfo | None,
                  min_queries: int | None, workers: Mapper | None) -> SliceReport:
    """The report's view of :func:`ragreport.analysis.slices.analyse_slices`."""
    from ..analysis.slices import MIN_QUERIES, analyse_slices, describe_rule, none_evaluated
    from ..io.slices import load_slices

    if slices is None:
        raise RagReportError("slice targets need slices (slices=, --slices)")
    qs = load_slices(slices)
    evaluated = set().union(*(r.query_ids for r in results))
    if not any(q in evaluated for q in qs.tags):  # say which file (analyse_slices cannot)
        raise RagReportError(f"{qs.source}: {none_evaluated(len(qs.tags))}")
    if info is None and any(t.on == "ci_lower" for ts in slice_targets.values() for t in ts):
        raise RagReportError("a slice target is on the confidence interval; do not disable "
                             "stats")
    minimum = MIN_QUERIES if min_queries is None else min_queries
    wanted = [m for m in measures if m.bounded]
    for ts in slice_targets.values():
        wanted += [t.measure for t in ts if t.measure not in wanted]
    head = list(dict.fromkeys([*(t.measure for ts in slice_targets.values() for t in ts),
                               *(t.measure for t in targets if t.measure in wanted)]))
    if not head:
        head = wanted[:3]
    head = head[:MAX_SLICE_MEASURES]
    families = curve_families(results, head)[:MAX_SLICE_FAMILIES]
    got = analyse_slices(
        results, qs.tags, wanted, base=base if len(results) > 1 else None, families=families,
        k_max=k_max, targets=slice_targets, stats=info is not None,
        level=info.level if info else 0.95, resamples=info.resamples if info else 1,
        curve_resamples=info.curve_resamples if info else 1, seed=info.seed if info else 0,
        alpha=info.alpha if info else 0.05, min_queries=minimum, workers=workers)
    comp = {(c.slice, c.run, c.measure): c for c in got.comparisons}
    out = []
    for name in got.names:
        per = got.runs[name]
        trows = []
        for t in slice_targets.get(name, ()):
            cells = []
            for sc in (x for x in got.checks if x.slice == name and x.check.target is t):
                ch = sc.check
                ok = math.isfinite(ch.value)
                cells.append(SliceTargetCell(
                    ch.run, ch.value if ok else None, ch.shown, ch.passed,
                    signed(ch.margin) if ok else "–", t.on,
                    ch.mean if math.isfinite(ch.mean) else None, sc.reason,
                    ch.margin if ok else None))
            trows.append(SliceTargetRow(str(t.measure), t.op, t.threshold,
                                        threshold_text(t.threshold), t.source, cells))
        rows = []
        for m in wanted:
            cells_: list[SliceCell] = []
            for r in results:
                sr = per[r.run_name]
                v = sr.means[m]
                has = math.isfinite(v)
                lo, hi = sr.intervals.get(m, (None, None))
                ci_text = (f"[{shown(lo)}, {shown(hi)}]" if lo is not None and hi is not None
                           else "")
                value = v if has else None
                text = shown(v) if has else "–"
                c = comp.get((name, r.run_name, m))
                if c is None:  # the baseline itself (or a single run)
                    cells_.append(SliceCell(r.run_name, sr.n, value, text, lo, hi, ci_text))
                elif c.n == 0:
                    cells_.append(SliceCell(r.run_name, sr.n, value, text, lo, hi, ci_text,
                                            wins=0, losses=0, ties=0))
                else:
                    cells_.append(SliceCell(r.run_name, sr.n, value, text, lo, hi, ci_text,
                                            c.delta, signed(c.delta), direction_mark(c.delta),
                                            c.p_value, c.t_p_value, c.significant, c.wins,
                                            c.losses, c.ties, c.n))
            target = next((t for t in trows if t.measure == str(m)), None)
            rows.append(SliceRow(str(m), m.family.title, cells_, target))
        curves = []
        for fam in families:
            series = {r.run_name: per[r.run_name].curves[fam] for r in results
                      if per[r.run_name].curves.get(fam)}
            if not series:
                continue
            marks = [(t.measure.cutoff, t.threshold, target_rule(t.op, t.threshold))
                     for t in slice_targets.get(name, ()) if t.measure.curve_key == fam]
            bands = {r.run_name: per[r.run_name].bands[fam] for r in results
                     if fam in per[r.run_name].bands}
            width = len(next(iter(series.values())))
            curves.append(Curve(str(fam), _curve_title(fam), list(range(1, width + 1)),
                                series, marks, bands))
        out.append(Slice(name, {r: sr.n for r, sr in per.items()}, got.few(name), rows, trows,
                         curves))
    return SliceReport(qs.source, minimum, describe_rule(minimum), out,
                       [str(m) for m in head], len(got.unknown), got.unknown[:10],
                       dict(got.untagged), qs.duplicates)


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


def run_latencies(results: Sequence[EvaluationResult]) -> list[RunLatency]:
    """The latency of each run that carries one (:attr:`EvaluationResult.latency_ms`).

    >>> from ragreport import evaluate, load_run
    >>> run = load_run([{"query_id": "q", "retrieved": ["a"], "latency_ms": 12.5}])
    >>> run_latencies([evaluate({"q": {"a": 1}}, run, ["RR"])])[0].texts
    ('12.5', '12.5', '12.5')
    """
    from ..analysis.latency import latency_summary

    out = []
    for r in results:
        s = latency_summary(r.latency_ms)
        if s is not None:
            out.append(RunLatency(r.run_name, s.queries, s.p50_ms, s.p95_ms, s.max_ms))
    return out
