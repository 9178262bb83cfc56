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
from .common import IntArray, data_line_numbers, strip_comment_lines

RUN_COLUMNS = ("qid", "q0", "docid", "rank", "score", "tag")
QRELS_COLUMNS = ("qid", "iter", "docid", "grade")

_WS = re.compile(rb"[ \t\r\f\v]+")
_HAS_DATA = re.compile(rb"\S")
_LEAD = re.compile(rb"(?m)^ | $")


def _arrow_read(source: Any, columns: tuple[str, ...], number: str, delimiter: str,
                skip_empty: bool = True) -> Any:
    """Read the id columns and the number column with pyarrow (``source``: bytes or a path).

    With ``skip_empty=False`` a blank line is a parse error, so that every row is one line.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    types = {c: pa.string() for c in columns}
    types[number] = pa.float64()
    return pacsv.read_csv(
        io.BytesIO(source) if isinstance(source, bytes) else source,
        read_options=pacsv.ReadOptions(column_names=list(columns), block_size=1 << 26),
        parse_options=pacsv.ParseOptions(
            delimiter=delimiter, quote_char=False, escape_char=False,
            ignore_empty_lines=skip_empty,
        ),
        convert_options=pacsv.ConvertOptions(
            column_types=types, null_values=[], strings_can_be_null=False,
            include_columns=["qid", "docid", number],
        ),
    )


def _columns(table: Any, number: str) -> tuple[Any, Any, np.ndarray] | None:
    """(qids, docids, values) as contiguous arrays, or None when a value is not finite.

    The table is consumed column by column so that each chunked column is freed as soon as
    its contiguous copy exists.
    """
    values = np.ascontiguousarray(table.column(number).to_numpy(), dtype=np.float64)
    if not np.isfinite(values).all():
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
    for line in body.split(b"\n", 64)[:64]:
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            return fields[5].decode("utf-8", "replace") if len(fields) > 5 else ""
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


def _normalize_ws(data: bytes) -> bytes:
    data = _WS.sub(b" ", data)
    return _LEAD.sub(b"", data)


def parse_trec_file(path: str, kind: str,
                    head: bytes) -> tuple[Any, Any, np.ndarray, Any, str] | None:
    """Fast path for a regular, uncompressed TREC file: pyarrow reads it from disk.

    ``head`` is the file's first 64 KiB, already read by the caller to detect the format.

    The file is never held whole in memory, and every row is known to be on its own line
    (blank lines are parse errors here). Returns None (the caller then uses
    :func:`parse_trec` on the bytes, which names the line of any problem) for anything out
    of the ordinary: gzip, comment lines, blank lines, irregular white space, binary data, a
    value that is not a finite number, a line that does not parse.
    """
    import pyarrow.compute as pc

    from ..data import RowLines

    columns, number = (RUN_COLUMNS, "score") if kind == "run" else (QRELS_COLUMNS, "grade")
    if head[:2] == b"\x1f\x8b" or b"\x00" in head or not _HAS_DATA.search(head):
        return None
    delim = _guess_delimiter(head)
    if delim is None:
        return None
    try:
        table = _arrow_read(path, columns, number, delim, skip_empty=False)
    except Exception:  # any parse failure: the exact reader says what is wrong
        return None
    n_rows = table.num_rows
    if n_rows == 0 or pc.any(pc.starts_with(table.column("qid"), "#")).as_py():
        return None  # comment lines: the general reader drops them and numbers the lines
    cols = _columns(table, number)
    del table
    _release_arrow_memory()
    if cols is None:
        return None
    tag = _first_tag(head) if kind == "run" else ""
    return cols[0], cols[1], cols[2], RowLines(n_rows), tag


def parse_trec(data: bytes, source: str, kind: str) -> tuple[Any, Any, np.ndarray, Any, str]:
    """Parse a TREC run or qrels buffer.

    Returns
    -------
    qids, docids : pyarrow string arrays
    values : float64 array (scores for a run, grades for qrels)
    lines : 1-based source line of each row
    tag : the run tag of the first row ("" for qrels)
    """
    columns, number = (RUN_COLUMNS, "score") if kind == "run" else (QRELS_COLUMNS, "grade")
    body, had_comments = strip_comment_lines(data)
    table = None
    if _HAS_DATA.search(body):
        delim = _guess_delimiter(body[:65536])
        attempts: list[tuple[bytes | None, str]] = [(body, delim)] if delim else []
        attempts.append((None, " "))
        for buf, d in attempts:
            try:
                table = _arrow_read(_normalize_ws(body) if buf is None else buf, columns, number, d)
                break
            except Exception:  # any parse failure falls back to the exact reader
                table = None
    if table is not None:
        from ..data import RowLines

        # every physical line is a data row only when the line count equals the row count;
        # otherwise (comments, blank or white-space-only lines anywhere, CRLF blank lines)
        # number the data lines exactly so that error messages name the right line
        n_physical = body.count(b"\n") + (0 if body.endswith(b"\n") else 1)
        n_rows = table.num_rows
        cols = _columns(table, number)
        del table
        if cols is not None:
            lines: Any = data_line_numbers(data) if had_comments or n_physical != n_rows \
                else RowLines(n_rows)
            if len(lines) == n_rows:
                tag = _first_tag(body) if kind == "run" else ""
                return cols[0], cols[1], cols[2], lines, tag
    return _parse_slow(data, source, kind)


def _parse_slow(data: bytes, source: str, kind: str) -> tuple[Any, Any, np.ndarray, IntArray, str]:
    """Line-by-line reader: exact error messages, and trec_eval's leniency (extra fields)."""
    import pyarrow as pa

    need = 6 if kind == "run" else 4
    layout = "qid Q0 docid rank score tag" if kind == "run" else "qid iter docid grade"
    what = "score" if kind == "run" else "grade"
    qids: list[str] = []
    docs: list[str] = []
    vals: list[float] = []
    lines: list[int] = []
    tag = ""
    for no, raw in enumerate(data.split(b"\n"), start=1):
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
        raw_value = fields[4] if kind == "run" else fields[3]
        try:
            value = float(raw_value)
        except ValueError:
            raise InputError(f"{what} {raw_value!r} is not a number", source, no) from None
        if not np.isfinite(value):
            raise InputError(f"{what} {raw_value!r} is not a finite number", source, no)
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


def parse_beir_qrels(data: bytes, source: str) -> tuple[Any, Any, np.ndarray, IntArray]:
    """BEIR qrels TSV: a header line (``query-id corpus-id score``) then one judgment a line."""
    import pyarrow as pa

    qids: list[str] = []
    docs: list[str] = []
    vals: list[float] = []
    lines: list[int] = []
    rows = data.split(b"\n")
    for no, raw in enumerate(rows[1:], start=2):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 text ({exc.reason})", source, no) from None
        if not line.strip():
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) < 3:
            raise InputError(
                f"expected 3 tab-separated fields (query-id corpus-id score), got {len(fields)}",
                source, no)
        try:
            value = float(fields[2])
        except ValueError:
            raise InputError(f"grade {fields[2]!r} is not a number", source, no) from None
        if not np.isfinite(value):
            raise InputError(f"grade {fields[2]!r} is not a finite number", source, no)
        qids.append(fields[0].strip())
        docs.append(fields[1].strip())
        vals.append(value)
        lines.append(no)
    if not qids:
        raise InputError("the file is empty (no data lines)", source)
    return (pa.array(qids, pa.string()), pa.array(docs, pa.string()),
            np.asarray(vals, dtype=np.float64), np.asarray(lines, dtype=np.int64))
