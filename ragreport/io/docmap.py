"""Reading a chunk -> document map (``--doc-map FILE``, ``evaluate(..., doc_map=...)``).

Files: TSV (``chunk_id<TAB>doc_id``, two fields per line, split on white space when a line
has no tab; an optional header line such as ``chunk_id<TAB>doc_id``; ``#`` lines and blank
lines skipped) or JSONL (one object per line with the chunk id under ``chunk_id`` (or
``_id``, ``id``) and the document id under ``doc_id`` (or ``document_id``, ``docid``,
``parent_id``); ids are strings or integers). Gzip is read, a UTF-8 byte order mark
dropped; ``-`` is standard input. A chunk listed twice with the same document is read
once; with two documents it is an error naming both lines. What a map means for an
evaluation is :mod:`ragreport.core.docmap`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import DocMap, check_unmapped
from ..errors import InputError

__all__ = ["OWN_HINT", "load_doc_map"]

IntArray = npt.NDArray[np.int64]

_CHUNK_HEADERS = ("chunk_id", "chunk-id", "chunkid", "chunk", "passage_id", "passage-id",
                  "pid", "_id", "id")
_DOC_HEADERS = ("doc_id", "doc-id", "docid", "document_id", "document-id", "document", "doc",
                "corpus-id", "corpus_id", "parent_id", "parent-id")
_CHUNK_KEYS = ("chunk_id", "_id", "id")
_DOC_KEYS = ("doc_id", "document_id", "docid", "parent_id")

#: How to make an id missing from the map a document of its own, in the CLI and the API
#: (``evaluate`` takes the map loaded with ``unmapped="own"`` as its ``doc_map``).
OWN_HINT = ("pass --doc-map-unmapped own (Python: doc_map=ragreport.load_doc_map("
            "the_map, unmapped='own')) to count it as a document of its own")


def load_doc_map(doc_map: Any, *, unmapped: str | None = None) -> DocMap:
    """Read a chunk -> document map from a file (TSV or JSONL), a mapping, or a DocMap.

    Parameters
    ----------
    doc_map : path, Source, Mapping[str, str] or DocMap
        See the module docstring for the file formats. ``-`` is standard input.
    unmapped : {"error", "own"}, optional
        What an id missing from the map is when evaluating (see :class:`DocMap`); default
        a given DocMap's own, else ``"error"``.

    Raises
    ------
    InputError
        Naming the file and the line: a line without two fields, an empty id, invalid JSON
        or UTF-8, a chunk mapped to two documents, an empty map.

    Examples
    --------
    >>> load_doc_map({"c1": "d1"}).doc_ids.to_pylist()
    ['d1']
    >>> load_doc_map({"c1": ""})
    Traceback (most recent call last):
    ...
    ragreport.errors.InputError: doc map (dict): document id of chunk 'c1' is empty
    """
    if isinstance(doc_map, DocMap):
        return doc_map if unmapped is None else doc_map.with_unmapped(unmapped)
    unmapped = check_unmapped("error" if unmapped is None else unmapped)
    from .common import is_input

    if is_input(doc_map):
        return _from_file(doc_map, unmapped)
    if isinstance(doc_map, Mapping):
        return _from_mapping(doc_map, unmapped)
    raise InputError("doc_map must be a path, a mapping of chunk id to document id or a "
                     f"DocMap, got {type(doc_map).__name__}")


def _ident(value: Any, what: str, source: str, line: int | None) -> str:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (str, int, np.integer)):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:30] + "..."
        raise InputError(f"{what} must be a string or an integer, got {shown}", source, line)
    text = str(value)
    if not text.strip():
        raise InputError(f"{what} is empty", source, line)
    return text


def _from_mapping(mapping: Mapping[Any, Any], unmapped: str) -> DocMap:
    import pyarrow as pa

    source = f"doc map ({type(mapping).__name__})"
    chunks: list[str] = []
    docs: list[str] = []
    for key, value in mapping.items():
        c = _ident(key, "chunk id", source, None)
        chunks.append(c)
        docs.append(_ident(value, f"document id of chunk {c!r}", source, None))
    if not chunks:
        raise InputError("the doc map is empty", source)
    return _finish(pa.array(chunks, pa.string()), pa.array(docs, pa.string()), source, None,
                   unmapped)


def _from_file(path: Any, unmapped: str) -> DocMap:
    from .common import read_bytes, read_once

    src = read_once(path)
    source = str(src)
    data = read_bytes(src)
    if data.lstrip()[:1] == b"{":
        return _from_jsonl(data, source, unmapped)
    fast = _fast_tsv(data, source, unmapped)
    return fast if fast is not None else _from_tsv(data, source, unmapped)


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 text ({exc.reason})", source,
                         data.count(b"\n", 0, exc.start) + 1) from None


def _is_header(fields: list[str]) -> bool:
    return (len(fields) == 2 and fields[0].strip().lower() in _CHUNK_HEADERS
            and fields[1].strip().lower() in _DOC_HEADERS)


def _fast_tsv(data: bytes, source: str, unmapped: str) -> DocMap | None:
    """pyarrow's CSV reader for a plain two-column TSV; None for anything else (the exact
    reader then names the line)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    if data.startswith(b"#") or b"\n#" in data or any(
            b in data for b in (b" ", b"\r", b"\x0b", b"\x0c")) or b"\t" not in data:
        return None
    try:
        table = csv.read_csv(
            pa.py_buffer(data),
            read_options=csv.ReadOptions(column_names=["c", "d"], use_threads=False),
            parse_options=csv.ParseOptions(delimiter="\t", quote_char=False,
                                           escape_char=False, newlines_in_values=False),
            convert_options=csv.ConvertOptions(column_types={"c": pa.string(),
                                                             "d": pa.string()},
                                               strings_can_be_null=False,
                                               quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowException):
        return None
    chunks = table.column("c").combine_chunks()
    docs = table.column("d").combine_chunks()
    if len(chunks) and _is_header([chunks[0].as_py(), docs[0].as_py()]):
        lines = _lines(data)[1:]
        chunks, docs = chunks.slice(1), docs.slice(1)
    else:
        lines = _lines(data)
    if len(lines) != len(chunks):
        return None
    empty = np.asarray(pc.or_(pc.equal(chunks, ""), pc.equal(docs, ""))
                       .to_numpy(zero_copy_only=False), dtype=bool)
    if empty.any():
        return None  # the exact reader says which id is empty
    if not len(chunks):
        raise InputError("the doc map is empty (no chunk_id<TAB>doc_id line)", source)
    return _finish(chunks, docs, source, lines, unmapped)


def _lines(data: bytes) -> IntArray:
    """The line of each data line (blank lines skipped; no comment line here)."""
    if not data.startswith(b"\n") and b"\n\n" not in data:  # every line is a row
        n = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        return np.arange(1, n + 1, dtype=np.int64)
    from .common import data_line_numbers

    return data_line_numbers(data)


def _from_tsv(data: bytes, source: str, unmapped: str) -> DocMap:
    import pyarrow as pa

    text = _decode(data, source)
    chunks: list[str] = []
    docs: list[str] = []
    lines: list[int] = []
    first = True
    for no, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t") if "\t" in line else line.split()
        if first:
            first = False
            if _is_header(fields):
                continue
        if len(fields) != 2:
            raise InputError(f"expected 2 fields, chunk_id<TAB>doc_id, got {len(fields)}",
                             source, no)
        c, d = fields[0].strip(), fields[1].strip()
        if not c:
            raise InputError("empty chunk id", source, no)
        if not d:
            raise InputError(f"empty document id for chunk {c!r}", source, no)
        chunks.append(c)
        docs.append(d)
        lines.append(no)
    if not chunks:
        raise InputError("the doc map is empty (no chunk_id<TAB>doc_id line)", source)
    return _finish(pa.array(chunks, pa.string()), pa.array(docs, pa.string()), source,
                   np.asarray(lines, dtype=np.int64), unmapped)


def _from_jsonl(data: bytes, source: str, unmapped: str) -> DocMap:
    import pyarrow as pa

    from .common import jsonl_objects

    text = _decode(data, source)
    chunks: list[str] = []
    docs: list[str] = []
    lines: list[int] = []
    for no, rec in jsonl_objects(text, source):
        ck = next((k for k in _CHUNK_KEYS if k in rec), None)
        dk = next((k for k in _DOC_KEYS if k in rec), None)
        if ck is None or dk is None:
            raise InputError("a record needs a chunk id (chunk_id, _id or id) and a document "
                             "id (doc_id, document_id, docid or parent_id)", source, no)
        c = _ident(rec[ck], "chunk id", source, no)
        chunks.append(c)
        docs.append(_ident(rec[dk], f"document id of chunk {c!r}", source, no))
        lines.append(no)
    if not chunks:
        raise InputError("the doc map is empty", source)
    return _finish(pa.array(chunks, pa.string()), pa.array(docs, pa.string()), source,
                   np.asarray(lines, dtype=np.int64), unmapped)


def _finish(chunks: Any, docs: Any, source: str, lines: IntArray | None,
            unmapped: str) -> DocMap:
    """Each chunk once: a chunk listed again with the same document is dropped, with another
    document it is an error naming both places."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(chunks)
    if n > 1 and pc.count_distinct(chunks).as_py() < n:
        order = pc.sort_indices(pa.table({"c": chunks, "i": np.arange(n)}),
                                sort_keys=[("c", "ascending"), ("i", "ascending")]).to_numpy()
        c_s = chunks.take(pa.array(order))
        d_s = docs.take(pa.array(order))
        same_c = np.asarray(pc.equal(c_s.slice(1), c_s.slice(0, n - 1))
                            .to_numpy(zero_copy_only=False), dtype=bool)
        same_d = np.asarray(pc.equal(d_s.slice(1), d_s.slice(0, n - 1))
                            .to_numpy(zero_copy_only=False), dtype=bool)
        conflict = np.flatnonzero(same_c & ~same_d)
        if len(conflict):
            j = int(conflict[0]) + 1
            # the first entry of this chunk (its run of equal ids starts at or before j - 1)
            start = j - 1
            while start > 0 and same_c[start - 1]:
                start -= 1
            a, b = int(order[start]), int(order[j])
            first = f" at line {int(lines[a])}" if lines is not None else ""
            raise InputError(f"chunk {chunks[b].as_py()!r} is mapped to two documents: "
                             f"{docs[a].as_py()!r}{first} and {docs[b].as_py()!r}", source,
                             int(lines[b]) if lines is not None else None)
        keep = np.ones(n, dtype=bool)
        keep[order[1:][same_c]] = False
        idx = pa.array(np.flatnonzero(keep))
        chunks, docs = chunks.take(idx), docs.take(idx)
        lines = lines[keep] if lines is not None else None
    return DocMap(chunks, docs, source, lines, unmapped)


# ---- evaluation ------------------------------------------------------------------------------
