"""TREC qrels (``qid iter docid grade``) and runs (``qid Q0 docid rank score tag``).

Parsing is columnar: pyarrow's CSV reader does the work on the whole buffer. Irregular white
space (tabs mixed with runs of spaces, as trec_eval accepts) is normalised first with one
regular-expression pass in C. Only when that still fails, or when validation finds a bad value,
is the file read line by line in Python, and then only to name the exact line and what was wrong
(or to accept what trec_eval accepts but a strict reader does not, such as fields after the tag).
"""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np

from ..errors import InputError
from .common import (
    BOM,
    GRADE_LIMIT,
    PLAIN_RE2,
    IntArray,
    NumberError,
    data_line_numbers,
    parse_grade,
    parse_score,
    strip_comment_lines,
)

RUN_COLUMNS = ("qid", "q0", "docid", "rank", "score", "tag")
QRELS_COLUMNS = ("qid", "iter", "docid", "grade")

_WS = re.compile(rb"[ \t\r\f\v]+")
_HAS_DATA = re.compile(rb"\S")


def _arrow_read(source: Any, columns: tuple[str, ...], number: str, delimiter: str,
                skip_empty: bool = True, number_as_text: bool = False,
                block_size: int = 1 << 26) -> Any:
    """Read the id columns and the number column with pyarrow (``source``: bytes or a path).

    With ``skip_empty=False`` a blank line is a parse error, so that every row is one line.
    ``block_size`` is pyarrow's unit of parallel work (a line longer than it does not parse).
    With ``number_as_text`` the number column is read as strings (checked by
    :func:`_columns`). pyarrow's float parser takes exactly the plain decimal numbers (with
    exponent) plus NaN and infinity spellings, which :func:`_columns` refuses as not finite.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    types = {c: pa.string() for c in columns}
    types[number] = pa.string() if number_as_text else pa.float64()
    if isinstance(source, bytes):  # pyarrow allocates whole blocks: none larger than the data
        block_size = max(1, min(block_size, len(source) + 1))
        size = len(source)
    else:
        import os

        try:
            size = os.path.getsize(source)
        except OSError:
            size = block_size + 1
    # one block has no parallel work: read it in this thread (pyarrow's pool would gain
    # nothing, and a read that fails would leave tasks in it; the ragreport command ends
    # without the teardown such tasks abort, ragreport.cli.app._end, apache/arrow#34314)
    threads = size > block_size
    return pacsv.read_csv(
        io.BytesIO(source) if isinstance(source, bytes) else source,
        read_options=pacsv.ReadOptions(column_names=list(columns), block_size=block_size,
                                       use_threads=threads),
        parse_options=pacsv.ParseOptions(
            delimiter=delimiter, quote_char=False, escape_char=False,
            ignore_empty_lines=skip_empty,
        ),
        convert_options=pacsv.ConvertOptions(
            column_types=types, null_values=[], strings_can_be_null=False,
            include_columns=["qid", "docid", number],
        ),
    )


def _grades_as_text(kind: str, fractional: bool) -> bool:
    """Whether the number column is read as text: grades read as trec_eval reads them."""
    return kind == "qrels" and not fractional


def _numbers(column: Any, kind: str, fractional: bool) -> np.ndarray | None:
    """The number column as float64, or None when a value is not what the reader accepts.

    Scores (and fractional grades) come parsed by pyarrow: only a non-finite value is left
    to refuse. Grades read as trec_eval reads them come as text: one vectorised regular
    expression checks them all (a plain decimal number, no exponent) before the cast, then
    they are truncated toward zero. None sends the caller to the exact reader, which names
    the line.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        if not pc.all(pc.match_substring_regex(column, PLAIN_RE2)).as_py():
            return None
        try:
            column = pc.cast(column, pa.float64())
        except (pa.ArrowInvalid, ValueError):
            return None
    values = np.ascontiguousarray(column.to_numpy(), dtype=np.float64)
    if kind == "qrels":
        if not (np.abs(values) < GRADE_LIMIT).all():  # NaN fails too
            return None
        if not fractional:
            values = np.trunc(values) + 0.0  # atol: toward zero (+ 0.0: no negative zero)
    elif not np.isfinite(values).all():
        return None
    return values


def _columns(table: Any, number: str, kind: str = "run",
             fractional: bool = False) -> tuple[Any, Any, np.ndarray] | None:
    """(qids, docids, values) as contiguous arrays, or None when a value is refused.

    The table is consumed column by column so that each chunked column is freed as soon as
    its contiguous copy exists.
    """
    values = _numbers(table.column(number), kind, fractional)
    if values is None:
        return None
    cols = [table.column("qid"), table.column("docid")]
    del table
    out = []
    while cols:
        col = cols.pop(0)
        out.append(col.chunk(0) if col.num_chunks == 1 else col.combine_chunks())
        del col
    return out[0], out[1], values


def _release_arrow_memory() -> None:
    """Give the parser's freed buffers back to the system (pyarrow's allocator keeps them)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _first_tag(body: bytes) -> str:
    """The tag (sixth field) of the first data line, "" when there is none."""
    start = 0
    for _ in range(64):  # lines are cut one by one: the buffer is never split whole
        end = body.find(b"\n", start)
        line = body[start:] if end == -1 else body[start:end]
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            return fields[5].decode("utf-8", "replace") if len(fields) > 5 else ""
        if end == -1:
            break
        start = end + 1
    return ""


def _guess_delimiter(sample: bytes) -> str | None:
    """The single delimiter of a regular file, or None when white space is irregular."""
    head = sample.split(b"\n", 50)[:50]
    tabs = sum(line.count(b"\t") for line in head)
    spaces = sum(line.count(b" ") for line in head)
    if tabs and not spaces:
        return "\t"
    if spaces and not tabs and b"  " not in sample and b"\n " not in sample \
            and not sample.startswith(b" ") and b" \n" not in sample:
        return " "
    return None


#: The white space that splits fields besides the guessed delimiter: a file read with one
#: delimiter is read as splitting on white space would only when none of these is in it.
_OTHER_WS = {" ": (b"\t", b"\v", b"\f"), "\t": (b" ", b"\v", b"\f")}


def _only_delimiter(data: Any, delimiter: str) -> bool:
    """Whether ``data`` (bytes or an mmap) has no white space but ``delimiter`` between fields.

    The delimiter is guessed from the start of the file; one later line with a tab in a
    space-separated file (or a space in a tab-separated one) would otherwise be read with
    the white space inside a field (``a<TAB>1`` as one id) where splitting on white space,
    as trec_eval does, gives two fields. The search goes window by window so that each
    window is in the processor's cache for its three ``memchr`` passes (about 35 ms for
    250 MB, mostly memory bandwidth).
    """
    others = _OTHER_WS[delimiter]
    size = len(data)
    for start in range(0, size, 1 << 18):
        end = min(size, start + (1 << 18))
        for b in others:
            if data.find(b, start, end) != -1:
                return False
    return True


def _file_has_only_delimiter(path: str, delimiter: str) -> bool:
    """:func:`_only_delimiter` for a file on disk, searched in place (mapped, not read)."""
    import mmap

    try:
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return _only_delimiter(m, delimiter)
    except (OSError, ValueError):  # not mappable (empty, special file): the exact reader
        return False


def _normalize_ws(data: bytes) -> bytes:
    """One space between fields, none at the start or end of a line."""
    data = _WS.sub(b" ", data)  # runs are single spaces now: a line has one at most per end
    data = data.replace(b" \n", b"\n").replace(b"\n ", b"\n")
    return data[data.startswith(b" "):len(data) - data.endswith(b" ")]


def _delimiter_sample(body: bytes) -> bytes:
    """The first 64 KiB of ``body``, extended to the end of its first line when that line is
    longer (a 10 MB id), so that the delimiter can be seen."""
    sample = body[:65536]
    if b"\n" not in sample:
        end = body.find(b"\n", 65536)
        sample = body if end == -1 else body[:end + 1]
    return sample


def parse_trec_file(path: str, kind: str, head: bytes,
                    fractional: bool = False) -> tuple[Any, Any, np.ndarray, Any, str] | None:
    """Fast path for a regular, uncompressed TREC file: pyarrow reads it from disk.

    ``head`` is the file's first 64 KiB, already read by the caller to detect the format.

    The file is never held whole in memory, and every row is known to be on its own line
    (blank lines are parse errors here). Returns None (the caller then uses
    :func:`parse_trec` on the bytes, which names the line of any problem) for anything out
    of the ordinary: gzip, a byte order mark, comment lines, blank lines, irregular white
    space (anywhere in the file, not only in the first lines), binary data, a value the
    reader refuses, a line that does not parse.
    """
    import pyarrow.compute as pc

    from ..data import RowLines

    columns, number = (RUN_COLUMNS, "score") if kind == "run" else (QRELS_COLUMNS, "grade")
    if head[:2] == b"\x1f\x8b" or head.startswith(BOM) or b"\x00" in head \
            or not _HAS_DATA.search(head):
        return None
    delim = _guess_delimiter(head)
    if delim is None:
        return None
    # the whole file is searched for other white space (a late tab in a space-separated
    # file) in a thread while pyarrow, which works without the interpreter lock, parses it
    import threading

    only: list[bool] = []
    search = threading.Thread(target=lambda: only.append(_file_has_only_delimiter(path, delim)),
                              daemon=True)
    search.start()
    try:
        # 16 MiB blocks share the work out between the cores more evenly than pyarrow's
        # 64 MiB (a line longer than a block is read by the exact reader: 10 MB ids still
        # take this path)
        table = _arrow_read(path, columns, number, delim, skip_empty=False,
                            number_as_text=_grades_as_text(kind, fractional),
                            block_size=1 << 24)
    except Exception:  # any parse failure: the exact reader says what is wrong
        return None
    finally:
        search.join()
    if only != [True]:
        return None  # white space besides the delimiter somewhere: the general reader
    n_rows = table.num_rows
    if n_rows == 0 or pc.any(pc.starts_with(table.column("qid"), "#")).as_py():
        return None  # comment lines: the general reader drops them and numbers the lines
    cols = _columns(table, number, kind, fractional)
    del table
    _release_arrow_memory()
    if cols is None:
        return None
    tag = _first_tag(head) if kind == "run" else ""
    return cols[0], cols[1], cols[2], RowLines(n_rows), tag


def parse_trec(data: bytes, source: str, kind: str, *, fractional: bool = False,
               first_line: int = 1, block_size: int = 1 << 26, newlines: int | None = None,
               ) -> tuple[Any, Any, np.ndarray, Any, str]:
    """Parse a TREC run or qrels buffer (without a byte order mark: see ``read_bytes``).

    ``first_line`` is the number of the buffer's first line in its file (a block of a
    stream); errors and the returned line numbers count from it. ``block_size``: see
    :func:`_arrow_read` (a file whose line is longer is read by the exact reader).
    ``newlines``: ``data.count(b"\\n")`` when the caller knows it already.

    Returns
    -------
    qids, docids : pyarrow string arrays
    values : float64 array (scores for a run, grades for qrels)
    lines : source line of each row
    tag : the run tag of the first row ("" for qrels)
    """
    columns, number = (RUN_COLUMNS, "score") if kind == "run" else (QRELS_COLUMNS, "grade")
    body, had_comments = strip_comment_lines(data)
    table = None
    as_text = _grades_as_text(kind, fractional)
    if _HAS_DATA.search(body):
        delim = _guess_delimiter(_delimiter_sample(body))
        attempts: list[tuple[bytes | None, str]] = \
            [(body, delim)] if delim and _only_delimiter(body, delim) else []
        attempts.append((None, " "))
        for buf, d in attempts:
            try:
                table = _arrow_read(_normalize_ws(body) if buf is None else buf, columns, number,
                                    d, number_as_text=as_text, block_size=block_size)
                break
            except Exception:  # any parse failure falls back to the exact reader
                table = None
    if table is not None:
        from ..data import RowLines

        # every physical line is a data row only when the line count equals the row count;
        # otherwise (comments, blank or white-space-only lines anywhere, CRLF blank lines)
        # number the data lines exactly so that error messages name the right line
        if newlines is None or had_comments:
            newlines = body.count(b"\n")
        n_physical = newlines + (0 if body.endswith(b"\n") else 1)
        n_rows = table.num_rows
        cols = _columns(table, number, kind, fractional)
        del table
        if cols is not None:
            lines: Any = data_line_numbers(data) if had_comments or n_physical != n_rows \
                else RowLines(n_rows)
            if len(lines) == n_rows:
                tag = _first_tag(body) if kind == "run" else ""
                if first_line != 1:
                    lines = np.asarray(lines, dtype=np.int64) + (first_line - 1)
                return cols[0], cols[1], cols[2], lines, tag
    return _parse_slow(data, source, kind, fractional, first_line)


def _parse_slow(data: bytes, source: str, kind: str, fractional: bool = False,
                first_line: int = 1) -> tuple[Any, Any, np.ndarray, IntArray, str]:
    """Line-by-line reader: exact error messages, and trec_eval's leniency (extra fields)."""
    import pyarrow as pa

    need = 6 if kind == "run" else 4
    layout = "qid Q0 docid rank score tag" if kind == "run" else "qid iter docid grade"
    qids: list[str] = []
    docs: list[str] = []
    vals: list[float] = []
    lines: list[int] = []
    tag = ""
    for no, raw in enumerate(data.split(b"\n"), start=first_line):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 text ({exc.reason} at column {exc.start + 1})",
                             source, no) from None
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split()
        if len(fields) < need:
            raise InputError(
                f"expected {need} fields ({layout}), got {len(fields)}: {line.strip()[:80]!r}",
                source, no)
        if kind == "qrels" and len(fields) > need:
            raise InputError(
                f"expected 4 fields ({layout}), got {len(fields)}"
                + (" (is this a run file?)" if len(fields) == 6 else "")
                + f": {line.strip()[:80]!r}", source, no)
        try:
            value = parse_score(fields[4]) if kind == "run" \
                else parse_grade(fields[3], fractional)
        except NumberError as exc:
            raise InputError(str(exc), source, no) from None
        if kind == "run" and not tag:
            tag = fields[5]
        qids.append(fields[0])
        docs.append(fields[2])
        vals.append(value)
        lines.append(no)
    if not qids:
        raise InputError("the file is empty (no data lines)", source)
    return (pa.array(qids, pa.string()), pa.array(docs, pa.string()),
            np.asarray(vals, dtype=np.float64), np.asarray(lines, dtype=np.int64), tag)


#: Header names of a BEIR qrels TSV: query id, document id, grade (compared in lower case).
BEIR_QUERY = (b"query-id", b"query_id", b"queryid", b"qid")
BEIR_DOC = (b"corpus-id", b"corpus_id", b"corpusid", b"doc-id", b"doc_id", b"docid",
            b"document-id", b"document_id", b"pid")
BEIR_GRADE = (b"score", b"relevance", b"rel", b"grade", b"label")


def is_beir_header(line: bytes) -> bool:
    """Whether ``line`` is exactly a BEIR qrels header (``query-id<TAB>corpus-id<TAB>score``
    or a usual variant of those three names, optionally then ``source``); ids that merely
    look like names do not count.

    >>> is_beir_header(b"query-id\\tcorpus-id\\tscore\\r"), is_beir_header(b"qid\\t0\\td1\\t1")
    (True, False)
    >>> is_beir_header(b"query-id\\tcorpus-id\\tscore\\tsource")
    True
    """
    fields = line.rstrip(b"\r\n").strip(b" ").lower().split(b"\t")
    if len(fields) == 4 and fields[3].strip() == b"source":
        fields = fields[:3]
    return len(fields) == 3 and fields[0].strip() in BEIR_QUERY \
        and fields[1].strip() in BEIR_DOC and fields[2].strip() in BEIR_GRADE


def parse_beir_qrels(data: bytes, source: str, fractional: bool = False
                     ) -> tuple[Any, Any, np.ndarray, IntArray, list[str] | None]:
    """BEIR qrels TSV: a header line (``query-id corpus-id score``, and optionally a fourth
    column ``source``: who judged) then one judgment a line; the sources (None without)."""
    import pyarrow as pa

    qids: list[str] = []
    docs: list[str] = []
    vals: list[float] = []
    lines: list[int] = []
    rows = data.split(b"\n")
    header = rows[0].decode("utf-8", "replace").rstrip("\r").split("\t")
    with_source = len(header) >= 4 and header[3].strip().lower() == "source"
    sources: list[str] = []
    for no, raw in enumerate(rows[1:], start=2):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 text ({exc.reason} at column {exc.start + 1})",
                             source, no) from None
        if not line.strip():
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) < 3 + with_source:
            raise InputError(
                f"expected {3 + with_source} tab-separated fields (query-id corpus-id score"
                f"{' source' if with_source else ''}), got {len(fields)}", source, no)
        try:
            value = parse_grade(fields[2].strip(), fractional)
        except NumberError as exc:
            raise InputError(str(exc), source, no) from None
        qids.append(fields[0].strip())
        docs.append(fields[1].strip())
        vals.append(value)
        lines.append(no)
        if with_source:
            sources.append(fields[3].strip())
    if not qids:
        raise InputError("the file is empty (no data lines)", source)
    return (pa.array(qids, pa.string()), pa.array(docs, pa.string()),
            np.asarray(vals, dtype=np.float64), np.asarray(lines, dtype=np.int64),
            sources if with_source else None)
