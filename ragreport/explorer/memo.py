"""The explorer's caches: arrays computed once per key, the view-dependent ones bounded.

>>> m = Memo()
>>> m.get(("ids", 0), lambda: [1, 2]), m.has(("ids", 0)), m.has(("kinds", 0, 5))
([1, 2], True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import limits

__all__ = ["FIXED", "Memo", "evict"]

#: Cached arrays that do not depend on the view (kept; see :meth:`Memo.get`).
FIXED = frozenset({"engine-context", "first-rel", "kinds-deepest", "target", "target-mean",
                   "target-lower", "fails", "idorder", "bindex", "bindex-identity", "ids",
                   "hay", "curveband", "mean", "ids-array", "ids-sorted", "unjudged"})


def evict(store: dict[Any, Any], bound: int) -> None:
    """Drop the oldest entries of ``store`` past ``bound`` (another thread may be adding)."""
    while len(store) > bound:
        try:
            del store[next(iter(store))]
        except (KeyError, RuntimeError, StopIteration):  # changed meanwhile: try again
            continue


class Memo:
    """Values computed once per key ``(kind, ...)``: the kinds in :data:`FIXED` (ids,
    failure kinds at the deepest K, target values, the engine's context...) are kept; the
    others (per K, per query, per view) are dropped oldest first past a bound."""

    def __init__(self) -> None:
        self.fixed: dict[tuple[Any, ...], Any] = {}
        self.cache: dict[tuple[Any, ...], Any] = {}

    def _store(self, key: tuple[Any, ...]) -> dict[tuple[Any, ...], Any]:
        return self.fixed if key[0] in FIXED else self.cache

    def get(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """``make()``, computed once per key."""
        store = self._store(key)
        got = store.get(key)
        if got is None:
            got = make()
            store[key] = got
            if store is self.cache:
                evict(self.cache, 4 * limits.CACHE_MAX)
        return got

    def has(self, key: tuple[Any, ...]) -> bool:
        return key in self._store(key)
