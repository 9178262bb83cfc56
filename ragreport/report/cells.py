"""The rows and cells of a report's tables (targets, summary, curves, worst queries, health,
drop checks, statistics, the verdict): frozen dataclasses holding each value as a float *and*
as the text every output shows; :class:`~.model.Report` holds them.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.agreement import Agreement
from ..analysis.drift import DriftCheck
from ..analysis.ppi import Interval, PPIEstimate
from ..io.common import Source
from ..measures import Measure, parse_measure
from ..present import (
    p_clause,
    pct,
    shown,
    signed,
)

__all__ = [
    "RANK_ROWS",
    "BaselineDrift",
    "Comparison",
    "Curve",
    "Distribution",
    "DropCheck",
    "DropUnjudged",
    "InputFile",
    "JudgmentSources",
    "PRCurve",
    "QueryDetail",
    "RankRow",
    "RunHealth",
    "StatsInfo",
    "SummaryCell",
    "SummaryRow",
    "TargetCell",
    "TargetRow",
    "Verdict",
    "WorstQueries",
    "agreement_text",
    "by_source_rows",
    "ppi_rows",
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
    unjudged: bool = False  # passed, failed only as it depends on unjudged documents
    #: on ci_lower: pass, fail or inconclusive (``passed``: what the policy makes of it)
    outcome: str = ""

    @property
    def inconclusive(self) -> bool:
        return self.outcome == "inconclusive"


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
    p_raw: float | None = None  # the randomization-test p-value before Holm's correction
    t_p_raw: float | None = None  # the t-test p-value before Holm's correction
    family: int = 0  # comparisons in the Holm family of this one (1: p_value == p_raw)

    @property
    def shown_raw_p(self) -> float:
        """The raw p-value as the views show it: ``p_raw``, else (a cell built without it)
        the adjusted one; NaN for a cell without a test."""
        raw = self.p_value if self.p_raw is None else self.p_raw
        return float("nan") if raw is None else raw


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
    later: list[RankRow] = field(default_factory=list)
    """The relevant documents ranked below ``rows`` (with their ranks): a drill-down reaches
    the last relevant document, however deep."""
    unjudged_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Target measures whose value for this query differs when its unjudged documents are
    read as relevant: measure -> (lower, upper) (see :mod:`ragreport.analysis.unjudged`)."""

    @property
    def tie_badge(self) -> str:
        """``"R@5 0.2000–0.6000"`` (pessimistic–optimistic) for each target measure that
        depends on the query's tie order; ``""`` when none does."""
        return "; ".join(f"{m} {shown(lo)}–{shown(hi)}" for m, (lo, hi)
                         in self.tie_ranges.items())

    @property
    def unjudged_badge(self) -> str:
        """``"R@5 0.0000–0.4000"`` (lower–upper) for each target measure whose value differs
        when the query's unjudged documents are read as relevant; ``""`` when none does."""
        return "; ".join(f"{m} {shown(lo)}–{shown(hi)}" for m, (lo, hi)
                         in self.unjudged_ranges.items())

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
    families: str = "all runs and measures"
    """What Holm's correction runs over (:func:`ragreport.report.build.holm_families`)."""
    on_inconclusive: str = "fail"
    """What a check its interval cannot decide does (for the slices' targets too)."""

    def describe(self) -> str:
        return (f"{pct(self.level)} {self.interval} ({self.resamples} resamples, "
                f"{self.curve_resamples} for curves, seed {self.seed}); significance: "
                f"{self.test}, "
                + (f"{self.correction}-corrected over {self.families}, " if self.families
                   else "") + f"alpha {self.alpha:g}")


@dataclass(frozen=True)
class Verdict:
    """The counts behind the report's decision (:attr:`Report.verdict`).

    ``checks`` / ``failed``: target checks on the whole runs (one per run and target) and
    those that fail; ``slice_checks`` / ``slice_failed`` the same for the slices' targets,
    ``failing_slices`` the slices with a failing one (in input order); ``drops`` /
    ``drops_failed`` the ``--max-drop`` checks, ``max_drop`` the allowed drop,
    ``drops_inconclusive`` the checks these queries cannot decide (failed too under
    ``on_inconclusive="fail"``); ``passed``: nothing failed (:attr:`Report.all_passed`,
    exit 0).
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
    drops_inconclusive: int = 0

    @property
    def nothing_checked(self) -> bool:
        """No target, slice target or drop check at all."""
        return not (self.checks or self.slice_checks or self.drops)


@dataclass(frozen=True)
class JudgmentSources:
    """Who judged (qrels with sources: :mod:`ragreport.io.judgments`): the judgments used
    per source (most first), how many were read, the pairs judged more than once, the rule
    that chose one per pair, the sources' agreement and the means from each alone."""

    rule: str
    used: dict[str, int]
    read: int
    several: int
    agreements: list[Agreement] = field(default_factory=list)
    """Each pair of sources that judged pairs in common (:mod:`ragreport.analysis.agreement`)."""
    by_source: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """Source -> run -> measure -> mean, each run evaluated against one source alone (with
    two sources or more)."""
    ppi: list[PPIEstimate] = field(default_factory=list)
    """With people's (``human``) and a model's (``llm:``) judgments: every run's measures by
    prediction-powered inference (:mod:`ragreport.analysis.ppi`)."""

    @property
    def ppi_lower(self) -> dict[str, dict[Measure, float]]:
        """Run -> measure -> lower bound of the PPI interval, what a target
        ``on = "ppi_lower"`` is checked against."""
        out: dict[str, dict[Measure, float]] = {}
        for e in self.ppi:
            out.setdefault(e.run, {})[parse_measure(e.measure)] = e.ppi.low
        return out

    @property
    def text(self) -> str:
        """One line in words (plain text: the labels are the user's; escape where shown).

        >>> JudgmentSources("human-first", {"llm:x": 3, "human": 1}, 6, 1).text.split("; ")
        ['3 llm:x, 1 human (4 used of 6 read', '1 pair judged more than once, the latest human \
judgment used, else the latest)']
        """
        rule = ("the latest human judgment used, else the latest" if self.rule == "human-first"
                else "the latest judgment used")
        parts = ", ".join(f"{n:,} {label}" for label, n in self.used.items())
        pairs = f"{self.several:,} pair{'s' if self.several != 1 else ''}"
        return (f"{parts} ({sum(self.used.values()):,} used of {self.read:,} read; {pairs} "
                f"judged more than once, {rule})")


def agreement_text(g: Agreement) -> str:
    """Two sources' agreement in words (plain text: the labels are the user's).

    >>> import numpy as np
    >>> g = Agreement("human", "llm:x", 10, [0.0, 1.0], np.array([[3, 2], [1, 4]]), 0.7, 0.4,
    ...               0.4, 0.4)
    >>> agreement_text(g)
    "human and llm:x on 10 pairs judged by both: the same grade on 70.0%, Cohen's kappa 0.40, \
weighted kappa 0.40 (quadratic), relevant or not 0.40"
    """
    def k(v: float) -> str:
        return "undefined (one grade throughout)" if v != v else f"{v:.2f}"

    return (f"{g.a} and {g.b} on {g.pairs:,} pair{'s' if g.pairs != 1 else ''} judged by "
            f"both: the same grade on {100 * g.observed:.1f}%, Cohen's kappa {k(g.kappa)}, "
            f"weighted kappa {k(g.weighted_kappa)} ({g.weights}), relevant or not "
            f"{k(g.binary_kappa)}")


def by_source_rows(j: JudgmentSources, runs: list[str], means: dict[str, dict[str, float]]
                   ) -> list[list[str]]:
    """The table of each run's measures from each source alone: a header (run, measure, the
    sources, "all sources"), then a row per run and measure (texts; user labels as given)."""
    sources = list(j.by_source)
    rows = [["run", "measure", *sources, "all sources"]]
    for run in runs:
        measures = list(next(iter(j.by_source.values())).get(run, {}))
        for m in measures:
            rows.append([run, m, *(shown(j.by_source[s][run][m]) for s in sources),
                         shown(means.get(run, {}).get(m, float("nan")))])
    return rows


def ppi_rows(j: JudgmentSources) -> list[list[str]]:
    """The prediction-powered intervals as a table: a header, then a row per run and
    measure (mean [low, high] and the queries behind each; texts, user labels as given)."""
    if not j.ppi:
        return []
    e0 = j.ppi[0]

    def cell(i: Interval) -> str:
        if i.low != i.low:
            return f"{shown(i.mean)} (n = {i.n})" if i.mean == i.mean else "–"
        return f"{shown(i.mean)} [{shown(i.low)}, {shown(i.high)}] (n = {i.n})"

    rows = [["run", "measure", f"PPI ({e0.people} + {e0.model}, {pct(e0.level)})",
             f"{e0.people} only", f"{e0.model} only"]]
    rows += [[e.run, e.measure, cell(e.ppi), cell(e.people_only), cell(e.model_only)]
             for e in j.ppi]
    return rows


@dataclass(frozen=True)
class DropUnjudged:
    """A drop check decided again with the unjudged documents read as relevant at ``grade``
    (every document the run or the baseline retrieves and the qrels do not judge, for both
    alike, on the queries both evaluated).

    ``low``/``high``: the interval of the mean delta (the means of the per-query lower and
    upper ends of the two readings); ``delta``, ``p_value`` (Holm-adjusted), ``outcome`` and
    ``failed`` (its gate decision): the check on the filled reading; ``dependent``: the
    queries whose delta differs between the readings; ``note``: ``"this pass depends on
    unjudged documents"`` (or ``"this failure ..."``, ``"this inconclusive outcome ..."``)
    when the outcomes differ, else ``""``.
    """

    grade: float
    low: float
    high: float
    delta: float
    p_value: float
    failed: bool
    dependent: int
    note: str
    #: the filled reading's outcome (:mod:`ragreport.analysis.noninferiority`), decided on
    #: its interval of the delta [``delta_lower``, ``delta_upper``]
    outcome: str = "pass"
    delta_lower: float = float("nan")
    delta_upper: float = float("nan")

    @property
    def depends(self) -> bool:
        return bool(self.note)

    @property
    def text(self) -> str:
        """The note and the filled reading in words (plain text)."""
        return f"{self.note}: {self.reading_text}"

    @property
    def reading_text(self) -> str:
        """The filled reading in words (plain text)."""
        verdict = {"pass": "a pass", "fail": "a failure"}.get(self.outcome, "inconclusive")
        return (f"with the unjudged documents read as relevant (grade "
                f"{self.grade:g}) the delta is {signed(self.delta)} (interval "
                f"[{shown(self.delta_lower)}, {shown(self.delta_upper)}], "
                f"{p_clause(self.p_value)}, Holm), {verdict}; {self.dependent} queries change, "
                f"delta in [{shown(self.low)}, {shown(self.high)}]")


@dataclass(frozen=True)
class DropCheck:
    """``--max-drop``: is a run worse than the baseline by more than allowed?

    ``outcome`` is the non-inferiority check's (:mod:`ragreport.analysis.noninferiority`):
    ``pass`` (the interval of the delta lies above -max_drop), ``fail`` (below) or
    ``inconclusive`` (it holds -max_drop; ``queries_to_decide``: about how many queries in
    all would decide it, when some number would). ``failed`` is the gate's decision: a
    failure, an inconclusive check under ``on_inconclusive="fail"``, or under
    ``unjudged="fail"`` a check that did not fail but depends on unjudged documents
    (``unjudged.depends``; ``unjudged_failed`` set). ``significant``/``p_value``: the paired
    test against no difference, for information."""

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
    p_raw: float = float("nan")  # before Holm's correction
    unjudged: DropUnjudged | None = None  # None: not read (off, stored baseline, doc map)
    unjudged_failed: bool = False  # passed on trec_eval's reading, failed by the policy
    outcome: str = "pass"
    queries_to_decide: int | None = None
    on_inconclusive: str = "fail"
    n: int = 0  # the queries compared

    @property
    def inconclusive(self) -> bool:
        return self.outcome == "inconclusive"

    @property
    def more_queries(self) -> int | None:
        """About how many more queries would decide an inconclusive check."""
        return None if self.queries_to_decide is None else self.queries_to_decide - self.n


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
