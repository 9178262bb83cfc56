"""Helpers shared by the readers: reading bytes, gzip, text checks, line numbering."""

from __future__ import annotations

import gzip
import math
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

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


def stdin_buffer() -> BinaryIO:
    """Standard input as bytes, or :class:`InputError` when the process has none (``<&-``).

    >>> import io, sys; saved = sys.stdin; sys.stdin = None
    >>> try:
    ...     stdin_buffer()
    ... finally:
    ...     sys.stdin = saved
    Traceback (most recent call last):
    ...
    ragreport.errors.InputError: <stdin>: standard input is closed
    """
    stdin = sys.stdin
    buffer = getattr(stdin, "buffer", None) if stdin is not None else None
    if buffer is None:
        raise InputError("standard input is closed", "<stdin>")
    return cast(BinaryIO, buffer)


def materialize(path: PathLike) -> PathLike | Source:
    """``path`` itself when it can be read more than once, else its bytes, read once.

    ``-`` means standard input. A regular file (or a path that does not exist, which the
    reader then reports) is returned unchanged; a FIFO, ``/dev/stdin`` or a process
    substitution (``<(...)``) is read to its end here, so that format detection never eats
    part of it and no reader opens it twice.
    """
    text = os.fspath(path)
    if text == "-":
        try:
            return Source("<stdin>", stdin_buffer().read())
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", "<stdin>") from None
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


BOM = b"\xef\xbb\xbf"
_GZIP_ERRORS = (OSError, EOFError, zlib.error)


def source_name(path: PathLike | Source) -> str:
    """The name messages show for an input: ``<stdin>`` for ``-``."""
    if isinstance(path, Source):
        return path.name
    text = os.fspath(path)
    return "<stdin>" if text == "-" else text


def is_input(obj: object) -> bool:
    """True for what the readers take as a file: a path (str, ``os.PathLike``) or a Source."""
    return isinstance(obj, (str, os.PathLike, Source)) or hasattr(obj, "__fspath__")


def read_once(path: PathLike | Source) -> str | Source:
    """A path that can be read twice, as a string, or a :class:`Source` holding its bytes.

    ``-``, a FIFO, ``/dev/stdin`` or ``<(...)`` are read to their end here (see
    :func:`materialize`); a regular file or a missing path stays a path.
    """
    if isinstance(path, Source):
        return path
    got = materialize(path)
    return got if isinstance(got, Source) else os.fspath(got)


def gzip_error(exc: BaseException, source: str, line: int | None = None) -> InputError:
    """The one message for gzip data that cannot be decompressed (corrupt or truncated)."""
    # one wording whichever reader found it (gzip.decompress and GzipFile differ in details:
    # "CRC check failed" vs "CRC check failed 0x... != 0x...")
    detail = (str(exc) or type(exc).__name__).split(" 0x")[0]
    return InputError(f"corrupt gzip data ({detail})", source, line)


def json_failure(exc: BaseException) -> str:
    """What was wrong with a JSON text ``json.loads`` refused, for an InputError's message:
    its syntax error, nesting deeper than Python parses, or an integer longer than Python
    converts (4300 digits).

    >>> import json
    >>> try:
    ...     json.loads("[" * 100000)
    ... except (ValueError, RecursionError) as exc:
    ...     print(json_failure(exc))
    nested too deeply
    """
    import json

    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    text = str(exc)
    if "digits" in text:
        return "a number of more digits than Python reads (4300)"
    return text.splitlines()[0] if text else type(exc).__name__


def jsonl_objects(text: str, source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSONL text with their line numbers, blank lines skipped: the one
    loop of every JSONL reader (doc maps, texts, slices), so each refuses a bad line with
    the same message, naming the file and the line.

    >>> list(jsonl_objects('{"id": 1}\\n\\n{"id": 2}', "f.jsonl"))
    [(1, {'id': 1}), (3, {'id': 2})]
    >>> list(jsonl_objects('[1]', "f.jsonl"))
    Traceback (most recent call last):
    ragreport.errors.InputError: f.jsonl:1: expected a JSON object, got list
    """
    import json

    for no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"invalid JSON: {json_failure(exc)}", source, no) from None
        if not isinstance(rec, dict):
            raise InputError(f"expected a JSON object, got {type(rec).__name__}", source, no)
        yield no, rec


def strip_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte order mark (it never belongs to an id)."""
    return data[3:] if data.startswith(BOM) else data


def read_bytes(path: PathLike | Source) -> bytes:
    """Read a file (or take a :class:`Source`'s bytes), gunzipping it when it starts with
    gzip's magic bytes and dropping a UTF-8 byte order mark.

    Raises :class:`InputError` for a missing, unreadable, empty or binary file, and for gzip
    data that is corrupt or truncated.
    """
    name = source_name(path)
    if isinstance(path, Source):
        data = path.data
    else:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise InputError("no such file", name) from None
        except IsADirectoryError:
            raise InputError("is a directory, not a file", name) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", name) from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except _GZIP_ERRORS as exc:
            raise gzip_error(exc, name) from None
    data = strip_bom(data)
    if not _HAS_DATA.search(data):
        raise InputError("the file is empty", name)
    nul = data.find(b"\x00")
    if nul != -1:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError("not a text file (binary data found)", name, line)
    return data


# ---- numbers -------------------------------------------------------------------------------

#: A plain decimal number, optionally with an exponent (ASCII digits only).
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: The same without an exponent (what a grade may be when read as trec_eval reads it).
_PLAIN = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")
#: The plain pattern for pyarrow's (RE2) vectorised check of grades.
PLAIN_RE2 = "^" + _PLAIN.pattern + "$"
#: Grades at or above this magnitude are refused (not every integer above is a float64).
GRADE_LIMIT = float(2**53)


class NumberError(ValueError):
    """A score or grade that is not a number ragreport reads; the caller adds where it was."""


def decimal_value(text: str, grade: bool = False, fractional: bool = False) -> float:
    """The value of a number written as text; :class:`NumberError` gives the bare reason.

    ``text`` must be a plain decimal number, ``[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?``
    (ASCII digits, no white space), finite as a float64. A grade (``grade=True``) read as
    trec_eval reads it (not ``fractional``) may not use exponent notation. Shared by the text
    readers (:func:`parse_score`, :func:`parse_grade`) and the Python-object reader
    (:func:`ragreport.io.objects.read_number`), so both refuse the same texts with the same words.

    >>> decimal_value("+1.5e2"), decimal_value(".5")
    (150.0, 0.5)
    >>> decimal_value("1_000")
    Traceback (most recent call last):
    ...
    ragreport.io.common.NumberError: is not a plain decimal number
    """
    if DECIMAL.fullmatch(text) is None:
        try:
            special = float(text)
        except ValueError:
            raise NumberError("is not a number") from None
        raise NumberError("is not a finite number" if not math.isfinite(special)
                          else "is not a plain decimal number")
    if grade and not fractional and _PLAIN.fullmatch(text) is None:
        raise NumberError("is in exponent notation, which trec_eval reads as the digits "
                          "before the 'e'; write the grade as a plain number")
    value = float(text)
    if not math.isfinite(value):
        raise NumberError("is not a finite number (too large for a float64)")
    return value


def grade_value(value: float, fractional: bool = False) -> float:
    """A finite grade as ragreport keeps it: truncated toward zero as trec_eval's ``atol``
    reads it, or as it is when ``fractional``; ``|grade| >= 2**53`` is refused.

    >>> grade_value(1.7), grade_value(-2.5), grade_value(1.7, fractional=True)
    (1.0, -2.0, 1.7)
    """
    if abs(value) >= GRADE_LIMIT:
        raise NumberError("is too large for a grade (|grade| must be below 2**53)")
    return value if fractional else float(math.trunc(value))


def parse_score(text: str, what: str = "score") -> float:
    """A score as written in a text file (see :func:`decimal_value`); the message names it.

    >>> parse_score("+1.5e2"), parse_score(".5")
    (150.0, 0.5)
    >>> parse_score("1_000")
    Traceback (most recent call last):
    ...
    ragreport.io.common.NumberError: score '1_000' is not a plain decimal number
    """
    try:
        return decimal_value(text)
    except NumberError as exc:
        raise NumberError(f"{what} {_show(text)} {exc}") from None


def parse_grade(text: str, fractional: bool = False) -> float:
    """A grade as written in a text file, read as trec_eval reads it (C ``atol``): a plain
    decimal number truncated toward zero; exponent notation is refused (``atol`` and the
    value would disagree); ``|grade| >= 2**53`` is refused. With ``fractional`` the grade is
    kept as it is (an exponent is then allowed).

    >>> parse_grade("1.7"), parse_grade("-2.5"), parse_grade("1.7", fractional=True)
    (1.0, -2.0, 1.7)
    """
    try:
        return grade_value(decimal_value(text, grade=True, fractional=fractional), fractional)
    except NumberError as exc:
        raise NumberError(f"grade {_show(text)} {exc}") from None


def _show(text: str) -> str:
    """``repr`` of a value for a message, shortened (a 400-digit number, a 10 MB field)."""
    shown = repr(text)
    return shown if len(shown) <= 40 else f"{shown[:30]}... ({len(text)} characters)"


def strip_comment_lines(data: bytes) -> tuple[bytes, bool]:
    """Remove lines starting with ``#``; also says whether there were any."""
    # b"#" is found with memchr; only a buffer holding one is searched for a line starting so
    if b"#" in data and (data.startswith(b"#") or b"\n#" in data):
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
