"""Pure array helpers of the explorer: search haystack, id ranks, JSON-safe columns.

Nothing here formats or judges a value (that is :mod:`ragreport.analysis` and
:mod:`ragreport.present`); these only move numpy arrays into the small, JSON-able columns the
front end reads.

>>> floats(np.array([0.5, np.nan]))
[0.5, None]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["contains", "floats", "haystack", "number"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: Characters of each query text the filter searches (keeps the search array small).
FILTER_TEXT_CHARS = 256


def haystack(ids: Sequence[str], texts: Mapping[str, str]) -> Any:
    """Lower-cased ``id<TAB>text`` of every query (text cut at :data:`FILTER_TEXT_CHARS`), as
    a fixed-width numpy string array: a vectorised substring search takes milliseconds.

    >>> haystack(["Q1"], {"Q1": "What IS"}).tolist()
    ['q1\\twhat is']
    """
    if not texts:
        return np.array([q.lower() for q in ids], dtype=str) if len(ids) else \
            np.array([], dtype="<U1")
    return np.array([f"{q}\t{texts.get(q, '')[:FILTER_TEXT_CHARS]}".lower() for q in ids],
                    dtype=str) if len(ids) else np.array([], dtype="<U1")


def contains(hay: Any, needle: str) -> BoolArray:
    """Where ``needle`` (already lower-cased) occurs in each haystack entry.

    >>> contains(np.array(["ab", "cd"]), "d").tolist()
    [False, True]
    """
    strings = getattr(np, "strings", None)
    if strings is not None:
        return np.asarray(strings.find(hay, needle) >= 0)
    return np.asarray(np.char.find(hay, needle) >= 0)  # pragma: no cover - numpy < 2


def floats(values: npt.ArrayLike) -> list[float | None]:
    """A float column as a JSON-able list (NaN and infinities become None).

    >>> floats([1.0, float("inf")])
    [1.0, None]
    """
    v = np.asarray(values, dtype=np.float64)
    out: list[float | None] = v.tolist()
    bad = np.flatnonzero(~np.isfinite(v))
    for i in bad.tolist():
        out[i] = None
    return out



def number(value: Any) -> float | None:
    """One value as JSON takes it: a float, or None for NaN and infinities.

    >>> number(np.float64(0.25)), number(float("nan"))
    (0.25, None)
    """
    v = float(value)
    return v if np.isfinite(v) else None
