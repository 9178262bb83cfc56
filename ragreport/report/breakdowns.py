"""The report broken down: chunk and document level side by side (evaluated with a doc map)
and query slices (``--slices``), and each run's latency; :class:`~.model.Report` holds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cells import Curve

__all__ = [
    "DocumentReport",
    "DocumentRun",
    "LevelCell",
    "LevelRow",
    "QueryDocuments",
    "RunLatency",
    "Slice",
    "SliceCell",
    "SliceReport",
    "SliceRow",
    "SliceTargetCell",
    "SliceTargetRow",
]


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
    outcome: str = ""  # a min target on the interval: pass, fail or inconclusive


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
