"""Converting a table's columns at once with pyarrow: ids (text, or integers written in
decimal) and numbers (scores and grades, read as the text readers read them), with a Python
loop only to name the first bad row (:mod:`.tabular`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from .common import DECIMAL, GRADE_LIMIT, PLAIN_RE2
from .objects import ident_text, read_number, show_value

__all__ = ["contiguous", "first_index", "ids_column", "numbers_column", "pair_keys"]

_DECIMAL_RE2 = "^" + DECIMAL.pattern + "$"


def contiguous(col: Any) -> Any:
    import pyarrow as pa

    if isinstance(col, pa.ChunkedArray):
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col


def pair_keys(query_ids: Any, doc_ids: Any) -> Any:
    """One integer key per (query, document) row of two id columns (pyarrow arrays, chunked
    or not): equal pairs, equal keys, from the columns' dictionaries (no string is hashed
    twice, no Python object per row).

    >>> import pyarrow as pa
    >>> pair_keys(pa.array(["a", "a", "b", "a"]), pa.array(["x", "y", "x", "x"])).tolist()
    [0, 1, 2, 0]
    """
    import pyarrow.compute as pc

    q = pc.dictionary_encode(contiguous(query_ids))
    d = pc.dictionary_encode(contiguous(doc_ids))
    return (q.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            * max(len(d.dictionary), 1) + d.indices.to_numpy(zero_copy_only=False))


def first_index(mask: Any) -> int:
    """The index of the first True of a boolean pyarrow array (nulls are False)."""
    arr = np.asarray(mask.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
    return int(np.flatnonzero(arr)[0])


def ids_column(col: Any, what: str, column: str, source: str) -> Any:
    """A column of ids as a pyarrow string array: text, or integers written in decimal.

    Null and blank ids are refused naming the row; so are other types (a float id is
    ambiguous: ``1.0`` or ``1``?).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, list):
        try:
            col = pa.array(col)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
            return _ids_one_by_one(col, what, source)
    col = contiguous(col)
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.dictionary_decode(), t.value_type
    if pa.types.is_null(t) and len(col):
        raise InputError(f"{what} is null", source, row=1)
    if pa.types.is_integer(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        col = pc.cast(col, pa.string())
    elif not pa.types.is_string(t) and len(col):
        if pa.types.is_floating(t):  # pandas: an integer column with a missing value is float
            missing = pc.or_(col.is_null(), pc.is_nan(col))
            if pc.any(missing).as_py():
                raise InputError(f"{what} is missing (null or NaN; column {column!r})", source,
                                 row=first_index(missing) + 1)
        raise InputError(f"{what} column {column!r} holds {t} values; ids must be text or "
                         "integers", source)
    elif not pa.types.is_string(t):
        col = pa.array([], pa.string())
    if col.null_count:
        raise InputError(f"{what} is null", source, row=first_index(col.is_null()) + 1)
    blank = pc.equal(pc.utf8_trim_whitespace(col), "")
    if pc.any(blank).as_py():
        raise InputError(f"{what} is empty", source, row=first_index(blank) + 1)
    return col


def _ids_one_by_one(values: list[Any], what: str, source: str) -> Any:
    import pyarrow as pa

    out = []
    for i, v in enumerate(values):
        if v is None:
            raise InputError(f"{what} is null", source, row=i + 1)
        try:
            out.append(ident_text(v, what, source, None))
        except InputError as exc:
            raise InputError(exc.reason, source, row=i + 1) from None
    return pa.array(out, pa.string())


def _bad_value(value: Any, what: str, row: int, qids: Any, docs: Any, source: str,
               fractional: bool) -> InputError:
    """The error for the value of ``row`` (0-based), worded as the object reader words it."""
    qid, doc = qids[row].as_py(), docs[row].as_py()
    if value is None:
        reason = "is missing (null)"
    else:
        try:
            read_number(value, what, fractional)
            reason = "is not a number ragreport reads"
        except ValueError as exc:
            reason = str(exc)
    return InputError(f"{what} {show_value(value)} of document {doc!r} (query {qid!r}) {reason}",
                      source, row=row + 1)


def numbers_column(col: Any, what: str, column: str, source: str, qids: Any, docs: Any,
                   fractional: bool = False) -> np.ndarray:
    """A score or grade column as float64, read as :func:`~ragreport.io.objects.read_number`
    reads each value (numbers; text that is a plain decimal number), at once.

    Grades (``what == "grade"``) are truncated toward zero unless ``fractional``; a value that
    is null, not finite, a boolean or, for a grade, at least 2**53 in size is refused naming
    the row.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    grade = what == "grade"
    if isinstance(col, list):
        try:
            col = pa.array(col)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
            out = np.empty(len(col), dtype=np.float64)
            for i, v in enumerate(col):
                try:
                    out[i] = read_number(v, what, fractional)
                except ValueError:
                    raise _bad_value(v, what, i, qids, docs, source, fractional) from None
            return out
    col = contiguous(col)
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.dictionary_decode(), t.value_type
    if col.null_count:
        row = first_index(col.is_null())
        raise _bad_value(None, what, row, qids, docs, source, fractional)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        col, t = pc.cast(col, pa.string()), pa.string()
    if pa.types.is_string(t):
        pattern = PLAIN_RE2 if grade and not fractional else _DECIMAL_RE2
        ok = pc.match_substring_regex(col, pattern)
        if not pc.all(ok).as_py():
            row = first_index(pc.invert(ok))
            raise _bad_value(col[row].as_py(), what, row, qids, docs, source, fractional)
        col = pc.cast(col, pa.float64())
    elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        col = pc.cast(col, pa.float64(), safe=False)
    elif len(col):
        raise InputError(f"{what} column {column!r} holds {t} values; {what}s must be "
                         "numbers", source)
    values = np.ascontiguousarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    bad = ~np.isfinite(values)
    if grade:
        bad |= np.abs(values) >= GRADE_LIMIT
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise _bad_value(float(values[row]), what, row, qids, docs, source, fractional)
    if grade and not fractional:
        values = np.trunc(values) + 0.0  # atol: toward zero (+ 0.0: no negative zero)
    return values
