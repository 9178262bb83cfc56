"""Evaluate a run file larger than memory, one block of queries at a time.

The run must be grouped by query (every line of a query together), as TREC runs are. Blocks
are read with pyarrow's streaming CSV reader; the query cut by the end of a block is carried
over to the next one; each block of whole queries is evaluated by the same engine as
:func:`ragreport.evaluate`, so the numbers are the same. A query that appears again after its
group ended is an error naming it and the fix (sort the file, or use ``evaluate``): never a
wrong number.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from ..errors import InputError, RagReportError
from ..io.common import (
    Source,
    gzip_error,
    source_name,
    stdin_buffer,
    strip_bom,
    strip_comment_lines,
)
from ..measures import Measure, normalize_measures
from ..metrics import FloatArray
from .result import Conventions

__all__ = ["StreamResult", "evaluate_stream"]

BLOCK_BYTES = 32 << 20
#: Largest K of the streamed mean curves (whatever ``k_max`` is asked for).
STREAM_CURVE_K = 100
_HAS_DATA = re.compile(rb"\S")


@dataclass
class StreamResult:
    """Per-query values of the requested measures, mean curves and counts."""

    run_name: str
    query_ids: list[str]
    measures: tuple[Measure, ...]
    per_query_values: dict[Measure, FloatArray]
    mean_curves: dict[Measure, FloatArray]
    k_max: int
    counts: dict[str, int] = field(default_factory=dict)
    compat: str | None = None
    """The ``compat`` preset: :meth:`mean` rounds as the peer reports (ragreport.compat)."""
    conventions: Conventions | None = None
    """The conventions used, as :attr:`ragreport.EvaluationResult.conventions` states them
    (``curve_width`` is the streamed curves' width)."""

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def values(self, measure: str | Measure) -> FloatArray:
        from ..measures import parse_measure

        m = parse_measure(measure)
        if m not in self.per_query_values:
            raise RagReportError(f"{m} was not computed; computed: "
                                 f"{', '.join(map(str, self.measures))}")
        return self.per_query_values[m]

    def mean(self, measure: str | Measure) -> float:
        v = self.values(measure)
        if self.compat is None:
            return float(v.mean()) if len(v) else 0.0
        from ..compat import peer_mean
        from ..measures import parse_measure

        return peer_mean(self.compat, parse_measure(measure), v)

    def means(self) -> dict[str, float]:
        return {str(m): self.mean(m) for m in self.measures}


class _Prefixed(io.RawIOBase):
    """A readable stream: bytes already taken from ``raw`` (to see the gzip magic), then the
    rest of ``raw``. Lets a pipe be probed without losing what the probe read."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        self._head = head
        self._raw: Any = raw  # a file, standard input or BytesIO: each has readinto

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._raw.readinto(view) or 0  # straight into the caller's buffer


@contextmanager
def _open_stream(src: str | Source) -> Iterator[BinaryIO]:
    """The run's bytes as a sequential stream, gunzipped when they start with gzip's magic.

    ``-`` is standard input; a FIFO or a pipe is read once, front to back, like a file. No
    byte is lost to format detection: the bytes read to look at the start are given back.
    """
    name = source_name(src)
    if isinstance(src, Source):
        raw: BinaryIO = io.BytesIO(src.data)
        own = True
    elif src == "-":
        raw, own = stdin_buffer(), False
    else:
        if os.path.isdir(src):
            raise InputError("is a directory, not a file", name)
        try:
            raw, own = open(src, "rb"), True  # noqa: SIM115 (closed below)
        except FileNotFoundError:
            raise InputError("no such file", name) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", name) from None
    try:
        head = _read_exactly(raw, 2, name)
        stream: BinaryIO = io.BufferedReader(_Prefixed(head, raw), 1 << 16)
        if head == b"\x1f\x8b":
            stream = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]
        yield stream
    finally:
        if own:
            raw.close()


def _read_exactly(raw: BinaryIO, n: int, name: str) -> bytes:
    out = b""
    try:
        while len(out) < n:
            chunk = raw.read(n - len(out))
            if not chunk:
                break
            out += chunk
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", name) from None
    return out


def _blocks(stream: BinaryIO, name: str,
            block_bytes: int) -> Iterator[tuple[bytes, int, int]]:
    """(block, number of its first line, number of newlines in it): whole lines, about
    ``block_bytes`` each.

    A line longer than a block (a 10 MB id) is gathered piece by piece and joined once, so
    the work stays linear in its length. The UTF-8 byte order mark at the start is dropped.
    """
    carry: list[bytes] = []
    line_no = 1
    first = True
    while True:
        try:
            chunk = stream.read(block_bytes)
        except (OSError, EOFError, zlib.error) as exc:
            if isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile) \
                    and exc.strerror:
                raise InputError(f"cannot read: {exc.strerror}", name) from None
            raise gzip_error(exc, name) from None
        if first:
            chunk = strip_bom(chunk)
            first = False
        if not chunk:
            break
        cut = chunk.rfind(b"\n")
        if cut == -1:
            carry.append(chunk)
            continue
        block = b"".join([*carry, chunk[:cut + 1]])
        carry = [chunk[cut + 1:]] if cut + 1 < len(chunk) else []
        newlines = block.count(b"\n")
        yield block, line_no, newlines
        line_no += newlines
    if carry:
        yield b"".join(carry), line_no, 0


def _batches(src: str | Source, block_bytes: int) -> Iterator[tuple[Any, Any, np.ndarray, Any,
                                                                     str]]:
    """(qids, docids, scores, lines, tag) of each block of a TREC run, read in order.

    Every block is parsed by the reader ``evaluate`` uses (:func:`ragreport.io.trec.parse_trec`),
    so the same inputs are accepted and refused with the same messages, lines counted from
    the start of the file.
    """
    from ..io.trec import parse_trec

    name = source_name(src)
    seen_data = False
    with _open_stream(src) as stream:
        for block, first_line, newlines in _blocks(stream, name, block_bytes):
            nul = block.find(b"\x00")
            if nul != -1:
                raise InputError("not a text file (binary data found)", name,
                                 first_line + block.count(b"\n", 0, nul))
            if not _HAS_DATA.search(strip_comment_lines(block)[0]):
                continue  # blank or comment lines only
            # pyarrow parses blocks of 16 MiB or more in parallel (a longer line is read by
            # the exact reader)
            qid, doc, score, lines, tag = parse_trec(block, name, "run", first_line=first_line,
                                                     block_size=max(16 << 20, len(block) // 4),
                                                     newlines=newlines)
            seen_data = True
            yield qid, doc, score, np.asarray(lines, dtype=np.int64), tag
    if not seen_data:
        raise InputError("the file is empty", name)


def evaluate_stream(
    qrels: Any,
    run_path: str | os.PathLike[str] | Source,
    measures: str | Measure | Iterable[str | Measure] | None = None,
    k_max: int | None = None,
    *,
    block_bytes: int = BLOCK_BYTES,
    complete: bool | None = None,
    fractional_grades: bool = False,
    **options: Any,
) -> StreamResult:
    """Evaluate a TREC run file grouped by query in bounded memory.

    Parameters are those of :func:`ragreport.evaluate`; ``block_bytes`` sets how much of the
    file is parsed at a time. Returns per-query values of ``measures`` (in file order of the
    queries) and the mean curves of every family for K = 1..min(k_max, STREAM_CURVE_K) (the
    result's ``k_max``), equal to what ``evaluate`` gives. Measures at any cutoff are exact.

    The run is read once, front to back: ``-`` (standard input), a FIFO or a pipe work as a
    file does, gzip included. Each block is parsed by the reader of ``evaluate``, so a file
    is accepted or refused exactly as ``evaluate`` would (comments, irregular white space,
    fields after the tag, a byte order mark, a bad score: same message, same line).
    ``complete`` and ``no_relevant`` are decided over the whole run, as ``evaluate`` decides
    them: the same queries are evaluated, skipped or refused, with the same counts (every
    key of :class:`ragreport.core.ranking.Counts`) and the same errors.

    Raises
    ------
    InputError
        When a query's lines are not contiguous (the file is not grouped by query), or the
        run or the qrels are malformed.
    """
    from ..compat import check_compat, default_measures, resolve
    from ..io import load_qrels
    from .align import check_qrels
    from .blocks import StreamSetup, StreamTotals
    from .engine import NO_RELEVANT, check_choice, check_int

    if isinstance(block_bytes, bool) or not isinstance(block_bytes, int) or block_bytes < 1:
        raise RagReportError(f"block_bytes must be an integer >= 1, got {block_bytes!r}")
    if options.get("doc_map") is not None:  # the document level needs whole chunk rankings
        raise RagReportError("doc_map is not supported by evaluate_stream (the document level "
                             "needs each query's whole chunk ranking); use evaluate")
    # the blocks are evaluated with no_relevant='zero'; skipping and refusing are decided
    # over the whole run (StreamTotals), as evaluate() decides them over all its queries
    no_relevant = check_choice("no_relevant", options.pop("no_relevant", "zero"), NO_RELEVANT)
    rel_level = check_int("rel_level", options.get("rel_level", 1), 0)
    src: str | Source = run_path if isinstance(run_path, Source) else os.fspath(run_path)
    path = source_name(src)
    _check_inputs(qrels, src, path)
    q = load_qrels(qrels, fractional_grades=fractional_grades)
    check_qrels(q)  # blocks see only their own judgments: check them all once here
    compat = check_compat(options.get("compat"))
    # decided here (the blocks see only their own queries): the preset's, else False
    complete = resolve(compat, order=None, ignore_identical_ids=None,
                       complete=complete).complete
    wanted = normalize_measures(default_measures(compat) if measures is None else measures)
    if k_max is None:
        k_max = max([20, *(m.cutoff for m in wanted if m.cutoff)])
    # every block's curves have this width (their sums are added up): at most
    # STREAM_CURVE_K, so memory follows the block, not k_max; larger cutoffs are computed
    # from each block's rankings
    width = min(k_max, STREAM_CURVE_K)
    totals = StreamTotals(StreamSetup(q, wanted, k_max, width, path, no_relevant, rel_level,
                                      complete, fractional_grades, options))
    for qid, doc, score, lines, tag in _query_blocks(src, block_bytes):
        totals.name = totals.name or tag
        totals.add_block(qid, doc, score, lines)
    missing = totals.add_unretrieved()
    qids, values, curves, conventions = totals.finish(missing)
    return StreamResult(totals.name or os.path.basename(path), qids, tuple(wanted), values,
                        curves, width, totals.counts, compat, conventions)


def _check_inputs(qrels: Any, src: str | Source, path: str) -> None:
    """Refuse a missing run file, a folder, and '-' for both inputs."""
    if isinstance(src, str) and src != "-":
        if not os.path.exists(src):
            raise InputError("no such file", path)
        if os.path.isdir(src):
            raise InputError("is a directory, not a file", path)
    if src == "-" and not isinstance(qrels, Source) and isinstance(qrels, (str, os.PathLike)) \
            and os.fspath(qrels) == "-":
        raise InputError("standard input ('-') can be only one of the inputs; the qrels and "
                         "the run are both '-'")


def _query_blocks(src: str | Source, block_bytes: int
                  ) -> Iterator[tuple[Any, Any, np.ndarray, np.ndarray, str]]:
    """(qids, docids, scores, lines, tag) of blocks of whole queries: the query cut by the end
    of a block read is carried over to the next one. The tag is the block's (a block may hold
    no query yet: empty arrays)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    pending: tuple[Any, Any, np.ndarray, np.ndarray] | None = None
    tag = ""
    for qid, doc, score, lines, tag in _batches(src, block_bytes):
        if pending is not None:
            qid = pa.concat_arrays([pending[0], qid])
            doc = pa.concat_arrays([pending[1], doc])
            score = np.concatenate([pending[2], score])
            lines = np.concatenate([pending[3], lines])
        if len(qid) == 0:
            continue
        last = qid[len(qid) - 1]
        same = np.asarray(pc.equal(qid, last).to_numpy(zero_copy_only=False), dtype=bool)
        tail_start = len(qid) - int(np.argmin(same[::-1])) if not same.all() else 0
        yield (qid.slice(0, tail_start), doc.slice(0, tail_start), score[:tail_start],
               lines[:tail_start], tag)
        pending = (qid.slice(tail_start), doc.slice(tail_start), score[tail_start:],
                   lines[tail_start:])
    if pending is not None:
        yield (*pending, tag)
