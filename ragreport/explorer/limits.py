"""The explorer's sizes and lists: how much each payload holds, when statistics leave the
interaction path, the sort orders and the list's categories.

Read at call time (``limits.X``), so a test can lower a limit for one explorer.
"""

from __future__ import annotations

__all__ = ["CATEGORIES", "SORTS"]

#: Sort orders of the query list: id -> label (the delta sorts need a run B).
SORTS: dict[str, str] = {
    "worst": "worst first",
    "best": "best first",
    "id": "query id",
    "delta_desc": "Δ B − A, gains first",
    "delta_asc": "Δ B − A, losses first",
}

#: Categories of the list's filter: id -> failure-kind code (see ``FAILURE_KINDS``).
#: "no_judged" (no judged relevant document) is not a retrieval failure: it is never in
#: the worst-first order's failures, and shown last in the value sorts.
CATEGORIES: dict[str, int] = {
    "beyond_k": 4,
    "not_retrieved": 3,
    "empty": 2,
    "ok": 0,
    "no_judged": 1,
}
#: Labels of the categories that are not failure kinds.
CATEGORY_LABELS = {0: "relevant document in the top K"}

#: Characters of the filter text kept.
FILTER_MAX = 1000
#: Rows of the visible order sent in the ``head`` trait, and at most per ``rows`` reply.
HEAD_ROWS = 200
ROWS_MAX = 500
#: The view caches the list in aligned windows of this many rows (``WINDOW`` in the front
#: end's list module; two windows fit in a ``rows`` reply).
ROWS_WINDOW = 250
#: Rows around a position that the view may draw there: the rows on screen and the view's
#: overscan (``head`` sends the windows holding them, see :func:`.views.head`).
NEAR_ROWS = 60
#: Characters of a query text in the list, and of a passage in the ranking.
LIST_TEXT_CHARS = 120
PASSAGE_CHARS = 300
#: The ranking sent for a query stops here (the rest is counted in ``truncated``).
RANKING_MAX = 10_000
#: Up to this many queries the intervals and tests are computed on every change; above, the
#: widget computes them in the background (:meth:`.state.ExplorerState.compute_stats`): the
#: report's 10,000 resamples take about 0.2 s a run at 500 queries.
INLINE_STATS_QUERIES = 500
#: Points of the curves (1..k_max when it is at most this), and points of the mean curve
#: past the evaluated width (each a pass over the rankings; computed with the intervals).
CURVE_POINTS = 1000
MEAN_POINTS = 12
#: ... or at every K of the curve when there are at most MEAN_ALL_POINTS of them past the
#: width and queries x those Ks stays below MEAN_ALL_CELLS.
MEAN_ALL_POINTS = 200
MEAN_ALL_CELLS = 2_000_000
#: Entries of the view-dependent caches (per K, per query, per view) before the oldest go.
CACHE_MAX = 64
#: Queries evaluated alone (for the panel) kept at a time.
QUERY_RESULTS = 8

#: The largest run (ranked rows) whose unjudged readings the explorer computes for its list's
#: "unjudged" tags on the first list it shows (its rankings given the filled grades, once:
#: about 0.2 s at this size); a larger run has them computed in the background with the
#: intervals when the evaluation is large (over ``INLINE_STATS_QUERIES`` queries: its list's
#: tags appear then), and none otherwise (a few queries ranked very deep).
UNJUDGED_ROWS = 500_000
