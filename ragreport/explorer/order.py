"""The visible list: which queries of run A the filter, category, slice and "fails" keep,
in the chosen sort; re-indexing and re-sorting numpy arrays (no Python loop per query)."""

from __future__ import annotations

import numpy as np

from ..analysis.failures import NO_JUDGED_RELEVANT, worst_order
from . import limits
from ._data import BoolArray, FloatArray, IntArray, contains
from .arrays import RunArrays
from .selection import Selection

__all__ = ["ListOrder"]


class ListOrder:
    """The list's order for a selection, recomputed only when the selection's key changes;
    :attr:`version` counts the changes."""

    def __init__(self, arrays: RunArrays) -> None:
        self.arrays = arrays
        self.version = 0
        self._key: tuple[object, ...] | None = None
        self._order: IntArray = np.zeros(0, dtype=np.int64)
        self._filter_hits: tuple[tuple[int, str], BoolArray] | None = None

    def order(self, sel: Selection) -> IntArray:
        """Indices (into run A's queries) of the visible list, in order."""
        key = sel.key()
        if key == self._key:
            return self._order
        mask: BoolArray | None = None
        if sel.needle():
            mask = self._filter_mask(sel)
        if sel.category:
            cat = self.arrays.kinds(sel.a, sel.k) == limits.CATEGORIES[sel.category]
            mask = cat if mask is None else mask & cat
        if sel.slice:
            sl = self.arrays.slice_mask(sel.a, sel.slice)
            mask = sl if mask is None else mask & sl
        if sel.fails_only:
            f = self.arrays.fails(sel.a)
            mask = f if mask is None else mask & f
        base_key = ("sorted", sel.a, sel.b, sel.family, sel.k, sel.sort)
        if mask is None:
            self._order = self._sorted(base_key, sel)
        elif self.arrays.memo.has(base_key) or 4 * int(mask.sum()) > len(mask):
            full = self._sorted(base_key, sel)
            self._order = full[mask[full]]
        else:  # a narrow filter: sort only the queries it keeps
            self._order = self._sort(np.flatnonzero(mask), sel)
        self._key = key
        self.version += 1
        return self._order

    def selected_pos(self, sel: Selection) -> int:
        """Position of the selected query in the visible list; -1 when hidden or none."""
        if not sel.selected:
            return -1
        i = self.arrays.position(sel.a, sel.selected)
        if i < 0:
            return -1
        hits = np.flatnonzero(self.order(sel) == i)
        return int(hits[0]) if len(hits) else -1

    def _filter_mask(self, sel: Selection) -> BoolArray:
        text = sel.needle()
        prev = self._filter_hits
        hay = self.arrays.hay(sel.a)
        if prev is not None and prev[0][0] == sel.a and prev[0][1] and prev[0][1] in text:
            base = prev[1]  # typing on: search only among the previous matches
            idx = np.flatnonzero(base)
            mask = np.zeros(len(base), dtype=bool)
            mask[idx[contains(hay[idx], text)]] = True
        else:
            mask = contains(hay, text)
        self._filter_hits = ((sel.a, text), mask)
        return mask

    def _sorted(self, base_key: tuple[object, ...], sel: Selection) -> IntArray:
        got: IntArray = self.arrays.memo.get(base_key, lambda: self._sort(None, sel))
        return got

    def _sort(self, keep: IntArray | None, sel: Selection) -> IntArray:
        """The queries ``keep`` (increasing indices; all when None) in the chosen order."""
        arrays = self.arrays
        by_id = arrays.id_order(sel.a)
        if keep is not None and not np.array_equal(by_id, np.arange(len(by_id))):
            keep = None  # query ids not in index order (never from evaluate): sort them all
        if sel.sort == "id":
            return by_id if keep is None else keep
        kinds = arrays.kinds(sel.a, sel.k)
        v = arrays.values(sel.a, sel.family, sel.k) if sel.sort in ("worst", "best") \
            else deltas(arrays, sel)
        if sel.sort in ("best", "delta_desc"):
            v = -v
        # worst_order: ascending value, ties in query-id (index) order, NaN last; queries
        # without a judged relevant document are not in it: they follow, by id
        if keep is None:
            head = worst_order(v, kinds)
            rest = by_id[kinds[by_id] == NO_JUDGED_RELEVANT]
        else:
            head = keep[worst_order(v[keep], kinds[keep])]
            rest = keep[kinds[keep] == NO_JUDGED_RELEVANT]
        return np.concatenate([head, rest]).astype(np.int64)


def b_values(arrays: RunArrays, sel: Selection, rows: IntArray | None = None) -> FloatArray:
    """Run B's value at K of each query of A (``rows``: of those only), NaN where B did not
    evaluate the query."""
    idx = arrays.b_index(sel.a, sel.b)
    if rows is not None:
        idx = idx[rows]
    vb = arrays.values(sel.b, sel.family, sel.k)
    return np.where(idx >= 0, vb[np.maximum(idx, 0)] if len(vb) else np.nan, np.nan)


def deltas(arrays: RunArrays, sel: Selection) -> FloatArray:
    """(queries of A,) value of B minus value of A at K (NaN where B lacks the query)."""
    return b_values(arrays, sel) - arrays.values(sel.a, sel.family, sel.k)
