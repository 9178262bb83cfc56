"""64-bit fingerprints of strings, computed from pyarrow's buffers without Python objects.

A fingerprint only proves *absence*: equal strings always get equal fingerprints, so when no
two (query, document) fingerprints are equal there is no duplicate. When some are equal the
caller falls back to an exact comparison of the strings; fingerprints never decide a result.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["common_prefix", "order_keys", "string_fingerprints"]

U64Array = npt.NDArray[np.uint64]

_CHUNK = 1 << 20
#: Strings longer than this (bytes) are hashed one by one (see :func:`_long_fingerprint`).
_LONG = 2048
_P1 = np.uint64(0x9E3779B97F4A7C15)
_P2 = np.uint64(0xFF51AFD7ED558CCD)
_S = np.uint64(31)


def _buffers(arr: Any) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8],
                                 npt.NDArray[np.uint64]]:
    """Offsets, data bytes and an unaligned 8-byte view of the data of a string array."""
    bufs = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(bufs[1], dtype=np.int32, count=n + 1, offset=arr.offset * 4)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None \
        else np.zeros(0, np.uint8)
    if len(data) < 16:  # too small for 8-byte loads: a padded copy costs nothing here
        data = np.concatenate([data, np.zeros(16, np.uint8)])
    view = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    return offsets, data, view


def _shared(strings: list[str]) -> str:
    if not strings:
        return ""
    lo, hi = min(strings), max(strings)
    n = 0
    for a, b in zip(lo, hi, strict=False):
        if a != b:
            break
        n += 1
    return lo[:n]


def common_prefix(arr: Any) -> str:
    """The longest prefix every string of the array starts with.

    Guessed from a sample of the strings, then checked on all of them (one vectorised
    ``starts_with``); when the check fails, taken from the array's min and max.

    >>> import pyarrow as pa
    >>> common_prefix(pa.array(["doc_12", "doc_1", "doc_3"]))
    'doc_'
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(arr) == 0:
        return ""
    # distinct rows only: a short array must not copy its (possibly 10 MB) strings 257 times
    sample = arr.take(pa.array(np.unique(np.linspace(0, len(arr) - 1, 257).astype(np.int64))))
    guess = _shared(sample.to_pylist())
    if not guess or pc.all(pc.starts_with(arr, guess)).as_py():
        return guess
    mm = pc.min_max(arr)
    return _shared([mm["min"].as_py() or "", mm["max"].as_py() or ""])


def order_keys(arr: Any, rows: npt.NDArray[np.int64], skip: int) -> U64Array:
    """Bytes ``skip`` to ``skip + 8`` of the given strings as big-endian numbers.

    Past a string's end the bytes count as 0. Where two keys differ they order their strings
    as byte-wise comparison does, provided the strings agree on their first ``skip`` bytes;
    where they are equal, compare the next 8 bytes (or the strings).

    >>> import pyarrow as pa, numpy as np
    >>> k = order_keys(pa.array(["id_b", "id_ab", "id_a", "id_"]), np.arange(4), 3)
    >>> np.argsort(k).tolist()
    [3, 2, 1, 0]
    """
    offsets, data, view = _buffers(arr)
    start = offsets[rows].astype(np.int64) + skip
    rem = np.clip(offsets[rows + 1].astype(np.int64) - start, 0, 8)
    pos = np.minimum(start, len(data) - 8)  # near the end of the buffer: load earlier bytes
    w = view[pos].byteswap()
    w <<= (np.minimum(start - pos, 7) * 8).astype(np.uint64)  # drop bytes before the string
    keep = np.full(len(rows), np.iinfo(np.uint64).max, dtype=np.uint64)
    keep <<= ((8 - np.maximum(rem, 1)) * 8).astype(np.uint64)
    keep[rem == 0] = 0
    w &= keep
    return w


def string_fingerprints(arr: Any, skip: int = 0) -> U64Array:
    """A uint64 fingerprint of every string of a pyarrow string array (equal in, equal out).

    With ``skip``, the first ``skip`` bytes (a prefix every string shares) are left out.

    >>> import pyarrow as pa
    >>> f = string_fingerprints(pa.array(["a", "bb", "a", "ccccccccc", "ccccccccd"]))
    >>> bool(f[0] == f[2]), len(set(f.tolist()))
    (True, 4)
    """
    import pyarrow as pa

    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    n = len(arr)
    out = np.empty(n, dtype=np.uint64)
    if n == 0:
        return out
    offsets, data, view = _buffers(arr)
    with np.errstate(over="ignore"):
        for lo in range(0, n, _CHUNK):
            hi = min(lo + _CHUNK, n)
            start = offsets[lo:hi].astype(np.int64)
            start += skip
            last = offsets[lo + 1:hi + 1].astype(np.int64)
            length = last - start
            last -= 8  # where the last 8-byte word of each string starts
            h = length.astype(np.uint64)
            long_rows = np.flatnonzero(length > _LONG)
            long_start, long_length = start[long_rows], length[long_rows]
            shortest = int(length.min())
            # a few long strings (a 10 MB id) must not make every string take their number of
            # steps: they are hashed one by one below, with the same formula
            longest = int(length.max()) if not len(long_rows) else \
                int(np.max(length, where=length <= _LONG, initial=0))
            pos = np.empty_like(start)
            mult = _P1
            # h = length + sum of word_j * P1^(j+1): a missing word adds 0, so the value
            # depends on the string only, not on the other strings of the block
            for j in range((longest + 7) // 8):
                np.minimum(start, last, out=pos)
                if shortest < 8 and pos.min() < 0:
                    np.maximum(pos, 0, out=pos)
                w = view[pos]
                if j == 0 and shortest < 8:
                    _fix_short(w, data, start, length)
                if j and shortest <= 8 * j:
                    w[length <= 8 * j] = 0
                w *= mult
                h += w
                mult = mult * _P1
                start += 8
            h ^= h >> _S
            h *= _P2
            h ^= h >> _S
            for row, a, size in zip(long_rows.tolist(), long_start.tolist(),
                                    long_length.tolist(), strict=True):
                h[row] = _long_fingerprint(data, a, size)
            out[lo:hi] = h
    return out


def _long_fingerprint(data: npt.NDArray[np.uint8], start: int, length: int) -> np.uint64:
    """:func:`string_fingerprints`' value for one string of at least 8 bytes, in one pass.

    Word ``j`` is bytes ``8j`` to ``8j + 8`` of the string, except the last, which is the
    string's last 8 bytes (as the block loop reads them); ``h = length + sum of word_j *
    P1^(j+1)``, then mixed, all modulo 2**64.
    """
    n_words = (length + 7) // 8
    end = start + length
    words = np.empty(n_words, dtype="<u8")
    words[:-1] = np.frombuffer(data[start:start + 8 * (n_words - 1)].tobytes(), dtype="<u8")
    words[-1] = np.frombuffer(data[end - 8:end].tobytes(), dtype="<u8")[0]
    powers = np.cumprod(np.full(n_words, _P1, dtype=np.uint64), dtype=np.uint64)
    words *= powers
    h = np.uint64(length) + np.sum(words, dtype=np.uint64)
    h ^= h >> _S
    h *= _P2
    h ^= h >> _S
    return np.uint64(h)


def _fix_short(w: U64Array, data: npt.NDArray[np.uint8], start: npt.NDArray[np.int64],
               length: npt.NDArray[np.int64]) -> None:
    """Correct the first word of strings shorter than 8 bytes.

    They were read from the 8 bytes that end where they end; shifting right keeps only their
    own bytes (little-endian: their bytes are the high ones). The first strings of a buffer
    may start before byte 8 and are read one by one (at most 8 of them).
    """
    short = length < 8
    w[short] >>= ((8 - length[short]) * 8).astype(np.uint64)
    for i in np.flatnonzero(short & (start + length < 8)).tolist():
        a = int(start[i])
        w[i] = int.from_bytes(data[a:a + int(length[i])].tobytes(), "little")
