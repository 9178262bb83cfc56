"""64-bit fingerprints of strings, computed from pyarrow's buffers without Python objects.

A fingerprint only proves *absence*: equal strings always get equal fingerprints, so when no
two (query, document) fingerprints are equal there is no duplicate. When some are equal the
caller falls back to an exact comparison of the strings; fingerprints never decide a result.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["string_fingerprints"]

U64Array = npt.NDArray[np.uint64]

_CHUNK = 1 << 20
_P1 = np.uint64(0x9E3779B97F4A7C15)
_P2 = np.uint64(0xFF51AFD7ED558CCD)
_S = np.uint64(31)


def string_fingerprints(arr: Any) -> U64Array:
    """A uint64 fingerprint of every string of a pyarrow string array (equal in, equal out).

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
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32, count=n + 1, offset=arr.offset * 4)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None \
        else np.zeros(0, np.uint8)
    if len(data) < 16:  # too small for 8-byte loads: a padded copy costs nothing here
        data = np.concatenate([data, np.zeros(16, np.uint8)])
    view = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    with np.errstate(over="ignore"):
        for lo in range(0, n, _CHUNK):
            hi = min(lo + _CHUNK, n)
            start = offsets[lo:hi].astype(np.int64)
            last = offsets[lo + 1:hi + 1].astype(np.int64)
            length = last - start
            last -= 8  # where the last 8-byte word of each string starts
            h = length.astype(np.uint64)
            shortest, longest = int(length.min()), int(length.max())
            pos = np.empty_like(start)
            for j in range((longest + 7) // 8):
                np.minimum(start, last, out=pos)
                if shortest < 8 and pos.min() < 0:
                    np.maximum(pos, 0, out=pos)
                w = view[pos]
                if j == 0 and shortest < 8:
                    _fix_short(w, data, start, length)
                if j and shortest <= 8 * j:
                    # strings without a j-th word keep their value: the result does not
                    # depend on which other strings share the block
                    has = length > 8 * j
                    np.copyto(h, h * _P1 + w, where=has)
                else:
                    h *= _P1
                    h += w
                start += 8
            h ^= h >> _S
            h *= _P2
            h ^= h >> _S
            out[lo:hi] = h
    return out


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
