"""Chunked corpora: a map from chunk ids to document ids, and evaluation at document level.

RAG systems retrieve chunks (passages) of documents; judgments are made per chunk or per
document. A :class:`DocMap` (``--doc-map FILE``, ``evaluate(..., doc_map=...)``) says which
document each chunk belongs to, and the evaluation is then done at both levels:

* **chunk level**: the run as it is. Judgments given per document are read per chunk: every
  chunk of a judged document takes the document's grade (so the relevant chunks are all the
  chunks of the relevant documents: recall and the ideal DCG count them all).
* **document level**: each query's chunk ranking (as evaluated: ordered, ties broken and cut
  at ``max_depth`` at chunk level, with trec_eval's rules) is collapsed to documents: a
  document's rank is its best chunk's rank, its score that chunk's score; the later chunks
  of a document already listed are dropped. The collapsed list keeps that order (ties are
  not broken again at document level). Judgments given per chunk are read per document: a
  document's grade is the best grade of its judged chunks (a document none of whose chunks
  is judged is unjudged).

The level of the judgments is found from the ids: when every judged id is a chunk id of the
map (or an id that is both a chunk and a document id) they are chunk judgments; when some
judged id is a document id only, they are document judgments. Qrels mixing chunk-only and
document-only ids are an error naming the file and both lines. An id in neither column of
the map (a retrieved chunk or a judged id) is an error naming its file and line, unless the
map is loaded with ``unmapped="own"``: it is then a document of its own (counted in
:class:`DocMapInfo`).

Redundancy: for each query and each K, how many of the top K chunks belong to a document
already shown above them (:attr:`DocMapInfo` is per map; the per-query counts are
``result.redundancy``, shape (queries, k_max)).

Files: TSV (``chunk_id<TAB>doc_id``, two fields per line, split on white space when a line
has no tab; an optional header line such as ``chunk_id<TAB>doc_id``; ``#`` lines and blank
lines skipped) or JSONL (one object per line with the chunk id under ``chunk_id`` (or
``_id``, ``id``) and the document id under ``doc_id`` (or ``document_id``, ``docid``,
``parent_id``); ids are strings or integers). Gzip is read, a UTF-8 byte order mark
dropped; ``-`` is standard input. A chunk listed twice with the same document is read
once; with two documents it is an error naming both lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .data import Qrels, Run
from .errors import InputError, RagReportError

__all__ = ["DocMap", "DocMapInfo", "DocumentLevel", "document_level", "judgment_level",
           "load_doc_map"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_UNMAPPED = ("error", "own")
_CHUNK_HEADERS = ("chunk_id", "chunk-id", "chunkid", "chunk", "passage_id", "passage-id",
                  "pid", "_id", "id")
_DOC_HEADERS = ("doc_id", "doc-id", "docid", "document_id", "document-id", "document", "doc",
                "corpus-id", "corpus_id", "parent_id", "parent-id")
_CHUNK_KEYS = ("chunk_id", "_id", "id")
_DOC_KEYS = ("doc_id", "document_id", "docid", "parent_id")


@dataclass(frozen=True, eq=False)
class DocMap:
    """Chunk id -> document id, columnar (pyarrow string arrays, each chunk once).

    ``lines`` gives the source line of each entry (None for a Python mapping). ``unmapped``
    says what an id missing from the map is: ``"error"`` (the default: an error naming its
    file and line) or ``"own"`` (a document of its own).

    >>> dm = load_doc_map({"c1": "d1", "c2": "d1", "c3": "d2"})
    >>> len(dm), dm.n_documents, dm.document_of(["c2", "c3"])
    (3, 2, ['d1', 'd2'])
    """

    chunk_ids: Any  # pyarrow string array, distinct
    doc_ids: Any  # pyarrow string array, same length
    source: str
    lines: IntArray | None = None
    unmapped: str = "error"
    #: The document codes, computed once (:meth:`codes`); not copied by ``replace``.
    memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @property
    def n_documents(self) -> int:
        """Number of distinct document ids."""
        return len(self.codes()[1])

    def codes(self) -> tuple[IntArray, Any]:
        """(document code of each entry, the distinct document ids): computed once."""
        cached: tuple[IntArray, Any] | None = self.memo.get("codes")
        if cached is None:
            import pyarrow.compute as pc

            enc = pc.dictionary_encode(self.doc_ids)
            cached = (np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64),
                      enc.dictionary)
            self.memo["codes"] = cached
        return cached

    def restricted(self, ids: Any) -> DocMap:
        """The entries whose chunk id is one of ``ids`` (few, e.g. the judged ids): the
        large map is probed against a small set, never hashed itself."""
        import pyarrow.compute as pc

        keep = pc.is_in(self.chunk_ids, value_set=pc.unique(ids))
        out = DocMap(self.chunk_ids.filter(keep), self.doc_ids.filter(keep), self.source,
                     None if self.lines is None else self.lines[_flag(keep)], self.unmapped)
        return out

    def with_unmapped(self, unmapped: str) -> DocMap:
        """This map with another policy for ids it does not list (``"error"`` or ``"own"``)."""
        return DocMap(self.chunk_ids, self.doc_ids, self.source, self.lines,
                      _check_unmapped(unmapped))

    def where(self, i: int) -> str:
        """``file:line`` of entry ``i`` (the file alone for a Python mapping)."""
        return self.source if self.lines is None else f"{self.source}:{int(self.lines[i])}"

    def document_of(self, chunk_ids: list[str]) -> list[str | None]:
        """The document of each chunk id (None when it is not in the map)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        idx = pc.index_in(pa.array(chunk_ids, pa.string()), value_set=self.chunk_ids)
        out: list[str | None] = self.doc_ids.take(idx).to_pylist()
        return out


@dataclass(frozen=True)
class DocMapInfo:
    """How a run and its qrels met a doc map (stated in reports, counted in health)."""

    source: str
    chunks: int
    documents: int
    judgment_level: str  # "chunk" or "document"
    unmapped: str  # "error" or "own"
    unmapped_retrieved: int  # run rows whose chunk id is not in the map (own documents)
    unmapped_judged: int  # qrels rows whose id is in neither column (own documents)
    chunks_collapsed: int  # ranked chunks dropped at document level (a document seen above)

    def describe(self) -> str:
        """One sentence for the Conventions section."""
        judged = ("judgments per chunk: a document's grade is the best grade of its judged "
                  "chunks" if self.judgment_level == "chunk" else
                  "judgments per document: at chunk level every chunk of a judged document "
                  "takes the document's grade")
        own = ("ids missing from the map are an error" if self.unmapped == "error" else
               f"ids missing from the map are documents of their own "
               f"({self.unmapped_retrieved} retrieved rows, {self.unmapped_judged} judgments)")
        return (f"{self.chunks} chunks of {self.documents} documents ({self.source}); "
                "document level: a document's rank is its best chunk's rank (ties broken at "
                "chunk level, trec_eval's rule), its score that chunk's score, its later "
                f"chunks dropped; {judged}; {own}")


#: How to make an id missing from the map a document of its own, in the CLI and the API
#: (``evaluate`` takes the map loaded with ``unmapped="own"`` as its ``doc_map``).
OWN_HINT = ("pass --doc-map-unmapped own (Python: doc_map=ragreport.docmap.load_doc_map("
            "the_map, unmapped='own')) to count it as a document of its own")


def _check_unmapped(unmapped: Any) -> str:
    if unmapped not in _UNMAPPED:
        raise RagReportError(f"unmapped must be one of {', '.join(map(repr, _UNMAPPED))}, "
                             f"got {unmapped!r}")
    return str(unmapped)


# ---- reading ---------------------------------------------------------------------------------

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
    unmapped = _check_unmapped("error" if unmapped is None else unmapped)
    from .io.common import is_input

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
    from .io.common import read_bytes, read_once

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
    from .io.common import data_line_numbers

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

    from .io.common import json_failure

    text = _decode(data, source)
    chunks: list[str] = []
    docs: list[str] = []
    lines: list[int] = []
    for no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"invalid JSON: {json_failure(exc)}", source, no) from None
        if not isinstance(rec, dict):
            raise InputError(f"expected a JSON object, got {type(rec).__name__}", source, no)
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

def _flag(mask: Any) -> BoolArray:
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)


def judgment_level(qrels: Qrels, dm: DocMap) -> tuple[str, int]:
    """``("chunk" | "document", judgments in neither column)`` of qrels against a map.

    Raises :class:`InputError` naming the qrels file and line: qrels mixing chunk-only and
    document-only ids, no judged id in the map, or an id in neither column when
    ``dm.unmapped`` is ``"error"``.

    >>> from ragreport.io import load_qrels
    >>> dm = load_doc_map({"c1": "d1", "c2": "d1"})
    >>> judgment_level(load_qrels({"q": {"c1": 1}}), dm), judgment_level(
    ...     load_qrels({"q": {"d1": 1}}), dm)
    (('chunk', 0), ('document', 0))
    """
    import pyarrow.compute as pc

    ids = qrels.doc_ids
    judged = pc.unique(ids)
    docs = dm.codes()[1]
    # the (large) map is probed against the (few) judged ids, never hashed itself
    in_c = _flag(pc.is_in(ids, value_set=dm.restricted(judged).chunk_ids))
    in_d = _flag(pc.is_in(ids, value_set=docs.filter(pc.is_in(docs, value_set=judged))))
    chunk_only = np.flatnonzero(in_c & ~in_d)
    doc_only = np.flatnonzero(in_d & ~in_c)
    neither = np.flatnonzero(~in_c & ~in_d)

    def at(row: int) -> tuple[str, int | None]:
        return qrels.where(row)

    if len(chunk_only) and len(doc_only):
        a, b = int(chunk_only[0]), int(doc_only[0])
        src, la = at(a)
        where_a = f" at line {la}" if la is not None else ""
        raise InputError(f"the qrels mix chunk ids of the doc map ({ids[a].as_py()!r}"
                         f"{where_a}) and document ids ({ids[b].as_py()!r}); judge at one "
                         "level", src, at(b)[1])
    if len(neither) == len(ids):
        raise InputError(f"no judged id is a chunk or a document id of the doc map "
                         f"({dm.source}), e.g. {ids[0].as_py()!r}", *at(0))
    if len(neither) and dm.unmapped == "error":
        r = int(neither[0])
        raise InputError(f"judged id {ids[r].as_py()!r} is neither a chunk nor a document id "
                         f"of the doc map ({dm.source}); {OWN_HINT}", *at(r))
    return ("document" if len(doc_only) else "chunk"), len(neither)


def _row_documents(ids: Any, dm: DocMap) -> Any:
    """The document id of each id (itself when not in the map)."""
    import pyarrow.compute as pc

    idx = pc.index_in(ids, value_set=dm.chunk_ids)
    return pc.coalesce(dm.doc_ids.take(idx), ids)


def chunk_qrels(qrels: Qrels, dm: DocMap, level: str) -> Qrels:
    """The qrels at chunk level: as given, or, for document judgments, one row per chunk
    of each judged document with the document's grade (an id outside the map stays itself).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if level == "chunk":
        return qrels
    from .align import check_qrels

    check_qrels(qrels)  # a document judged twice is named as such, not as its chunks
    codes, docs = dm.codes()
    # only the chunks of judged documents matter: found by their codes, the map not hashed
    judged = np.flatnonzero(_flag(pc.is_in(docs, value_set=pc.unique(qrels.doc_ids))))
    keep = pa.array(np.isin(codes, judged))
    dm = DocMap(dm.chunk_ids.filter(keep), dm.doc_ids.filter(keep), dm.source, None,
                dm.unmapped)
    docs_u = pc.unique(dm.doc_ids)
    dcode = np.asarray(pc.index_in(dm.doc_ids, value_set=docs_u)
                       .to_numpy(zero_copy_only=False), dtype=np.int64)
    by_doc = np.argsort(dcode, kind="stable")
    n_chunks = np.bincount(dcode, minlength=len(docs_u))
    starts = np.concatenate(([0], np.cumsum(n_chunks)))[:-1]
    qcode = np.asarray(pc.index_in(qrels.doc_ids, value_set=docs_u).fill_null(-1)
                       .to_numpy(zero_copy_only=False), dtype=np.int64)
    mapped = qcode >= 0
    reps = np.where(mapped, n_chunks[np.maximum(qcode, 0)], 1)
    rows = np.repeat(np.arange(len(qcode)), reps)
    within = np.arange(len(rows)) - np.repeat(np.cumsum(reps) - reps, reps)
    m = mapped[rows]
    src = np.where(m, by_doc[starts[np.maximum(qcode[rows], 0)] + within],
                   len(dm) + rows)
    pool = pa.concat_arrays([dm.chunk_ids, qrels.doc_ids])
    lines = None if qrels.lines is None else np.asarray(qrels.lines, dtype=np.int64)[rows]
    take = pa.array(rows)
    return Qrels(qrels.query_ids.take(take), pool.take(pa.array(src)), qrels.source, lines,
                 qrels.grades[rows])


def document_qrels(qrels: Qrels, dm: DocMap, level: str) -> Qrels:
    """The qrels at document level: as given, or each document's best chunk grade (the
    first judged chunk's line stands for it)."""
    import pyarrow as pa

    if level == "document":
        return qrels
    docs = _row_documents(qrels.doc_ids, dm.restricted(qrels.doc_ids))
    n = len(qrels)
    t = pa.table({"q": qrels.query_ids, "d": docs, "g": qrels.grades,
                  "row": np.arange(n, dtype=np.int64)})
    g = t.group_by(["q", "d"], use_threads=False).aggregate([("g", "max"), ("row", "min")])
    order = np.argsort(g.column("row_min").to_numpy(), kind="stable")
    g = g.take(pa.array(order))
    first = g.column("row_min").to_numpy()
    lines = None if qrels.lines is None else np.asarray(qrels.lines, dtype=np.int64)[first]
    return Qrels(g.column("q").combine_chunks(), g.column("d").combine_chunks(),
                 qrels.source, lines, g.column("g_max").to_numpy().astype(np.float64))


@dataclass(frozen=True, eq=False)
class DocumentLevel:
    """A chunk ranking collapsed to documents.

    ``run`` is the document-level run (one row per document and query, in the order of
    each document's best chunk; evaluate it with ``order="given"``); ``repeated`` marks,
    for every ranked chunk of the chunk-level ranking (in ranking order), whether a chunk of
    its document is ranked above it.
    """

    run: Run
    repeated: BoolArray
    unmapped_retrieved: int


def _run_codes(run: Run, dm: DocMap) -> tuple[IntArray, Any]:
    """The document code of each run row and the document ids the codes index: the map's
    codes, then (``unmapped="own"``) the run's ids missing from the map that are no document
    id of it. One hash of the map's chunk ids; the run's strings are hashed only where they
    are missing from it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = run.doc_ids
    idx = pc.index_in(ids, value_set=dm.chunk_ids)
    map_codes, names = dm.codes()
    found = np.asarray(idx.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    codes = map_codes[np.maximum(found, 0)] if len(map_codes) else np.zeros(len(found),
                                                                                np.int64)
    missing = np.flatnonzero(found < 0)
    if len(missing):
        if dm.unmapped == "error":
            src, line = run.where(int(missing[0]))
            raise InputError(f"chunk {ids[int(missing[0])].as_py()!r} is not in the doc map "
                             f"({dm.source}); {OWN_HINT}", src, line)
        own = ids.take(pa.array(missing))
        as_doc = np.asarray(pc.index_in(own, value_set=names).fill_null(-1)
                            .to_numpy(zero_copy_only=False), dtype=np.int64)
        new = np.flatnonzero(as_doc < 0)
        enc = pc.dictionary_encode(own.take(pa.array(new)))
        as_doc[new] = len(names) + np.asarray(enc.indices.to_numpy(zero_copy_only=False),
                                              dtype=np.int64)
        codes[missing] = as_doc
        names = pa.concat_arrays([names, enc.dictionary]) if len(enc.dictionary) else names
    return codes, names


def document_level(ranking: Any, dm: DocMap) -> DocumentLevel:
    """Collapse an aligned chunk ranking (:class:`ragreport.align.Ranking`) to documents.

    Vectorised over rows (one integer sort); raises :class:`InputError` naming the run's file
    and line for a chunk missing from the map when ``dm.unmapped`` is ``"error"``.

    >>> from ragreport.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"c1": 1}}), load_run({"q": ["c1", "c2", "c3"]}))
    >>> lv = document_level(rk, load_doc_map({"c1": "A", "c2": "B", "c3": "A"}))
    >>> lv.run.doc_ids.to_pylist(), lv.repeated.tolist()
    (['A', 'B'], [False, False, True])
    """
    import pyarrow as pa

    run: Run = ranking.run
    codes, names = _run_codes(run, dm)
    n_unmapped = int((codes >= len(dm.codes()[1])).sum())
    rows = ranking.run_rows
    n_q = ranking.n_queries
    qi = np.repeat(np.arange(n_q, dtype=np.int64), ranking.n_ret)
    key = qi * max(len(names), 1) + codes[rows]
    _, first = np.unique(key, return_index=True)
    first.sort()
    repeated = np.ones(len(rows), dtype=bool)
    repeated[first] = False
    kept = rows[first]
    qids = pa.array(ranking.query_ids, pa.string())
    lines = None if run.lines is None else np.asarray(run.lines, dtype=np.int64)[kept]
    n_ret = np.bincount(qi[first], minlength=n_q)
    empty = tuple(q for q, k in zip(ranking.query_ids, n_ret.tolist(), strict=True) if k == 0)
    doc_run = Run(qids.take(pa.array(qi[first])), names.take(pa.array(codes[kept])),
                  run.source, lines, run.scores[kept], run.name, run.has_scores,
                  dict(run.query_texts), empty)
    return DocumentLevel(doc_run, repeated, n_unmapped)


def redundancy(ranking: Any, repeated: BoolArray, width: int) -> IntArray:
    """(queries, width): how many of the top K chunks (K = 1..width) belong to a document
    already shown above them.

    >>> from ragreport.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"c1": 1}}), load_run({"q": ["c1", "c2", "c3"]}))
    >>> redundancy(rk, np.array([False, False, True]), 4).tolist()
    [[0, 0, 1, 1]]
    """
    dense = ranking._dense(repeated.astype(np.int64), max(int(width), 1), 0)
    out: IntArray = np.cumsum(dense, axis=1)
    return out
