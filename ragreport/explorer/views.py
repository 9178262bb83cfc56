"""The list and ranking payloads the front end draws: ``meta``, windows of rows, ``head``
and the selected query's ranking (small, JSON-able dicts; text cut with
:mod:`ragreport.present`, nothing formatted as HTML)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._version import __version__
from ..present import measure_title, snippet
from . import limits
from ._data import floats
from .arrays import RunArrays
from .order import ListOrder, b_values
from .selection import Selection, category_label

__all__ = ["ListView"]


class ListView:
    """Payloads of the list and the ranking for the current selection."""

    def __init__(self, arrays: RunArrays, sel: Selection, listing: ListOrder) -> None:
        self.arrays = arrays
        self.inputs = arrays.inputs
        self.sel = sel
        self.listing = listing
        self._texts: dict[str, str] = {}

    def meta(self) -> dict[str, Any]:
        """What does not change with the view: runs, families, K range, categories, sorts."""
        inputs = self.inputs
        sorts = [s for s in limits.SORTS if not s.startswith("delta")
                 or len(inputs.results) > 1]
        slices = inputs.slices
        return {
            "runs": list(inputs.run_names),
            "families": [{"id": str(f), "label": str(f), "title": measure_title(f)}
                         for f in inputs.families],
            "k_max": inputs.k_max,
            "n_queries": inputs.results[self.sel.a].n_queries,
            "has_docs": bool(inputs.docs),
            "has_queries": bool(inputs.queries),
            "version": __version__,
            "categories": [{"id": c, "code": code, "label": category_label(code)}
                           for c, code in limits.CATEGORIES.items()],
            "slices": [{"id": n, "label": n, "n": len(slices.queries(n))}
                       for n in slices.names] if slices is not None else [],
            "sorts": [{"id": s, "label": limits.SORTS[s]} for s in sorts],
        }

    def rows(self, start: int, end: int) -> dict[str, Any]:
        """Columns of the visible rows ``start:end`` (at most ``ROWS_MAX``; clamped)."""
        sel, arrays = self.sel, self.arrays
        order = self.listing.order(sel)
        start = max(0, min(int(start), len(order)))
        end = max(start, min(int(end), start + limits.ROWS_MAX, len(order)))
        idx = order[start:end]
        ids = self.inputs.results[sel.a].query_ids
        qids = [ids[i] for i in idx.tolist()]
        va = arrays.values(sel.a, sel.family, sel.k)[idx]
        out: dict[str, Any] = {
            "start": start,
            "qid": qids,
            "text": [self._list_text(q) for q in qids],
            "a": floats(va),
        }
        if sel.b >= 0:
            vb = b_values(arrays, sel, idx)
            out["b"] = floats(vb)
            out["delta"] = floats(vb - va)
        out["kind"] = arrays.kinds(sel.a, sel.k)[idx].astype(int).tolist()
        fails = arrays.fails(sel.a)
        if not fails.all():  # every query fails a target: a tag on every row tells nothing
            out["fails"] = fails[idx].tolist()
        ranges = arrays.unjudged_range(sel.a, sel.family, sel.k)
        if ranges is not None:  # [lower, upper] where the unjudged documents change it
            lo, hi = ranges[0][idx], ranges[1][idx]
            out["unjudged"] = [[float(x), float(y)] if x != y else None
                               for x, y in zip(lo.tolist(), hi.tolist(), strict=True)]
        return out

    def _list_text(self, qid: str) -> str:
        """The query's text as the list shows it (cut once, then kept)."""
        got = self._texts.get(qid)
        if got is None:
            got = self._texts[qid] = snippet(self.inputs.queries.get(qid),
                                             limits.LIST_TEXT_CHARS)
        return got

    def head(self, view_top: int = 0) -> dict[str, Any]:
        """The first ``HEAD_ROWS`` rows of the visible list, and in ``near`` the windows
        (aligned on ``ROWS_WINDOW``, at most ``ROWS_MAX`` rows each) that the view will draw
        next beyond them: around the selected query's position (the view scrolls to it after
        an order change) and around ``view_top``, the first row the view shows (where the
        list stays when the order changes under it).

        So an order change never needs a second round trip for rows: its one update holds
        everything the view draws."""
        head_rows, window, near = limits.HEAD_ROWS, limits.ROWS_WINDOW, limits.NEAR_ROWS
        out = self.rows(0, head_rows)
        n = len(self.listing.order(self.sel))
        wins: set[int] = set()
        pos = self.listing.selected_pos(self.sel)
        top = max(0, min(int(view_top), n - 1))
        spans = [(top - near // 3, top + near)]
        if pos >= 0:
            spans.append((pos - near, pos + near))
        for lo, hi in spans:
            lo, hi = max(lo, head_rows), min(hi, n - 1)
            if lo <= hi:
                wins.update(range(lo // window, hi // window + 1))
        runs: list[list[int]] = []  # [first, end) windows; contiguous ones share a block
        for w in sorted(wins):  # of at most ROWS_MAX rows
            if runs and runs[-1][1] == w and (w + 1 - runs[-1][0]) * window <= limits.ROWS_MAX:
                runs[-1][1] = w + 1
            else:
                runs.append([w, w + 1])
        out["near"] = [self.rows(a * window, b * window) for a, b in runs]
        out["fails_all"] = bool(self.arrays.fails(self.sel.a).all())
        return out

    def ranking(self) -> dict[str, Any]:
        """The selected query's whole ranking in run A (and run B, with each row's move)."""
        sel = self.sel
        q = sel.selected
        if not q:
            return {}
        # K is not in it: the view draws the cut line itself, so a new K resends no ranking
        out: dict[str, Any] = {"qid": q, "query_text": self.inputs.queries.get(q, "")}
        out |= self._ranked(sel.a, q)
        if sel.b >= 0:
            if self.arrays.position(sel.b, q) >= 0:
                b = self._ranked(sel.b, q)
                rank_a = {d: n for n, d in enumerate(out["rows"]["doc_id"], start=1)}
                b["move"] = [None if d not in rank_a else rank_a[d] - n
                             for n, d in enumerate(b["rows"]["doc_id"], start=1)]
                out["b"] = b
            else:
                out["b"] = {"run": self.inputs.run_names[sel.b], "missing": True}
        return out

    def _ranked(self, run: int, qid: str) -> dict[str, Any]:
        r = self.inputs.results[run]
        docs_text = self.inputs.docs
        rk = r.require_ranking()
        i = self.arrays.position(run, qid)
        lo, hi = int(rk.ret_offsets[i]), int(rk.ret_offsets[i + 1])
        n_ret = hi - lo
        top = min(hi, lo + limits.RANKING_MAX)
        rows = rk.run_rows[lo:top]
        docs: list[str] = rk.run.doc_ids.take(rows).to_pylist() if len(rows) else []
        grades = rk.ret_grades[lo:top]
        level = float(r.conventions.rel_level)
        with np.errstate(invalid="ignore"):
            rel = (grades >= level).tolist()
        texts = [snippet(docs_text.get(d), limits.PASSAGE_CHARS) for d in docs] \
            if docs_text else [""] * len(docs)
        scores = floats(rk.run.scores[rows]) if rk.run.has_scores else [None] * len(docs)
        ties = tie_groups(rk.run.scores[rk.run_rows[lo:hi]], r.conventions.score_precision,
                          len(docs)) if rk.run.has_scores and r.conventions.order == "score" \
            else [None] * len(docs)
        # the judged documents of the query, and which relevant ones were not retrieved
        jlo, jhi = int(rk.qrels_offsets[i]), int(rk.qrels_offsets[i + 1])
        jgrades = rk.qrels_grades[jlo:jhi]
        relevant = np.flatnonzero(jgrades >= level)
        missing: list[tuple[str, float]] = []
        if len(relevant):
            jdocs = rk.qrels.doc_ids.take(rk.qrels_rows[jlo:jhi][relevant]).to_pylist()
            retrieved = set(docs) if top == hi else \
                set(rk.run.doc_ids.take(rk.run_rows[lo:hi]).to_pylist())
            missing = [(d, float(g)) for d, g in zip(jdocs, jgrades[relevant].tolist(),
                                                     strict=True) if d not in retrieved]
        return {
            "run": r.run_name,
            "n_ret": n_ret,
            "n_rel": len(relevant),
            "truncated": n_ret - len(docs),
            "rows": {"rank": list(range(1, len(docs) + 1)), "doc_id": docs, "score": scores,
                     "grade": floats(grades), "relevant": rel, "text": texts, "tie": ties},
            "missing_relevant": [d for d, _g in missing],
            "missing_grades": [g for _d, g in missing],
        }


def tie_groups(scores: Any, precision: str, n: int) -> list[list[int] | None]:
    """For each of the first ``n`` ranks, the ranks ``[first, last]`` of the documents whose
    score equals its own (as the evaluation compares them: ``precision``), None when no other
    document has it: their order is trec_eval's (document id), not the retriever's.

    >>> tie_groups(np.array([3.0, 2.0, 2.0, 1.0]), "float64", 4)
    [None, [2, 3], [2, 3], None]
    """
    s = np.asarray(scores, dtype=np.float32 if precision == "float32" else np.float64)
    out: list[list[int] | None] = [None] * min(n, len(s))
    start = 0
    for i in range(1, len(s) + 1):
        if i == len(s) or s[i] != s[start]:
            if i - start > 1:
                for j in range(start, min(i, n)):
                    out[j] = [start + 1, i]
            if start >= n:
                break
            start = i
    return out
