"""Helpers shared by the readers: reading bytes, gzip, text checks, line numbering."""

from __future__ import annotations

import gzip
import os
import re
import stat
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..errors import InputError

IntArray = npt.NDArray[np.int64]
PathLike = str | os.PathLike[str]

_HAS_DATA = re.compile(rb"\S")
_COMMENT = re.compile(rb"(?m)^#[^\n]*(?:\n|\Z)")


@dataclass(frozen=True)
class Source:
    """An input that can be read only once (standard input, a pipe, a FIFO), held in memory.

    ``name`` is what messages and reports show (``"<stdin>"`` for ``-``); ``data`` is every
    byte read from it, still compressed if it was. Readers accept a :class:`Source` wherever
    they accept a path. See :func:`materialize`.
    """

    name: str
    data: bytes

    def __str__(self) -> str:
        return self.name


def materialize(path: PathLike) -> PathLike | Source:
    """``path`` itself when it can be read more than once, else its bytes, read once.

    ``-`` means standard input. A regular file (or a path that does not exist, which the
    reader then reports) is returned unchanged; a FIFO, ``/dev/stdin`` or a process
    substitution (``<(...)``) is read to its end here, so that format detection never eats
    part of it and no reader opens it twice.
    """
    text = os.fspath(path)
    if text == "-":
        return Source("<stdin>", sys.stdin.buffer.read())
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return path
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return path
    try:
        with open(text, "rb") as fh:
            return Source(text, fh.read())
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", text) from None


def read_bytes(path: PathLike) -> bytes:
    """Read a file, gunzipping it when it starts with gzip's magic bytes.

    Raises :class:`InputError` for a missing, unreadable, empty or binary file.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", str(path)) from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt gzip data ({exc})", str(path)) from None
    if not _HAS_DATA.search(data):
        raise InputError("the file is empty", str(path))
    nul = data.find(b"\x00")
    if nul != -1:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError("not a text file (binary data found)", str(path), line)
    return data


def strip_comment_lines(data: bytes) -> tuple[bytes, bool]:
    """Remove lines starting with ``#``; also says whether there were any."""
    if data.startswith(b"#") or b"\n#" in data:
        return _COMMENT.sub(b"", data), True
    return data, False


def data_line_numbers(data: bytes) -> IntArray:
    """1-based numbers of the lines that hold data (not blank, not a ``#`` comment).

    >>> data_line_numbers(b"# c\\n1 2\\n\\n  \\n3 4\\n").tolist()
    [2, 5]
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(buf)]))
    nonws = ~np.isin(buf, np.array([9, 10, 11, 12, 13, 32], dtype=np.uint8))
    cs = np.concatenate(([0], np.cumsum(nonws, dtype=np.int64)))
    has = (cs[ends] - cs[starts]) > 0
    first = np.where(starts < len(buf), buf[np.minimum(starts, max(len(buf) - 1, 0))], 0)
    keep = has & (first != ord("#"))
    return (np.flatnonzero(keep) + 1).astype(np.int64)
