"""A worst query's drill-down as the HTML report shows it (:func:`query_view`): its ranking's
first rows with the K cut line, then every relevant document ranked below them (a relevant
document is never hidden below the rows shown), and the relevant documents it missed; each
list capped so the page stays small (the JSON output keeps everything)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..present import snippet
from .cells import QueryDetail, RankRow

__all__ = ["MAX_MISSING", "MAX_RANK_ROWS", "MAX_TEXT_CHARS", "QueryView", "query_view"]

#: Ranked rows shown per query, before the relevant documents further down.
MAX_RANK_ROWS = 60
#: Relevant documents shown per list (further down; not retrieved).
MAX_MISSING = 25
#: Characters of a query's text shown.
MAX_TEXT_CHARS = 400


@dataclass(frozen=True)
class QueryView:
    detail: QueryDetail
    text: str
    text_cut: bool
    rows: list[RankRow]
    rows_cut: int
    cut_index: int | None  # the K cut line goes before rows[cut_index]; None: no line
    missing: list[tuple[str, str, str]]
    missing_cut: int
    later: list[RankRow] = field(default_factory=list)
    """Relevant documents ranked below ``rows`` (at most :data:`MAX_MISSING`)."""
    later_cut: int = 0
    last_relevant: int | None = None  # the rank of the last relevant document retrieved


def query_view(q: QueryDetail, k: int) -> QueryView:
    """The drill-down of ``q`` at cutoff ``k``."""
    text = snippet(q.text, MAX_TEXT_CHARS)
    text_cut = len(" ".join(q.text.split())) > MAX_TEXT_CHARS
    rows = q.rows[:MAX_RANK_ROWS]
    # the K cut line goes before the first row beyond K; after the last row when the rows
    # shown stop exactly at K and more were retrieved; nowhere when everything is within K
    cut = next((i for i, r in enumerate(rows) if not r.within_k), None)
    if cut is None and rows and rows[-1].rank == k and q.n_ret > len(rows):
        cut = len(rows)
    later = [r for r in q.rows[MAX_RANK_ROWS:] if r.relevant] + q.later
    last = max((r.rank for r in [*rows, *later] if r.relevant), default=None)
    return QueryView(q, text, text_cut, rows, max(0, q.n_ret - len(rows)), cut,
                     q.missing[:MAX_MISSING], max(0, len(q.missing) - MAX_MISSING),
                     later[:MAX_MISSING], max(0, len(later) - MAX_MISSING), last)
