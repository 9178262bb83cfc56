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

The map (:class:`~ragreport.data.DocMap`) and its files are read by
:func:`ragreport.io.docmap.load_doc_map` (``ragreport.load_doc_map``); this module holds the
pure transforms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import DocMap, Qrels, Run, flag
from ..errors import InputError
from ..io.docmap import OWN_HINT, load_doc_map

__all__ = ["DocMap", "DocMapInfo", "DocumentLevel", "document_level", "judgment_level",
           "load_doc_map"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


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
    in_c = flag(pc.is_in(ids, value_set=dm.restricted(judged).chunk_ids))
    in_d = flag(pc.is_in(ids, value_set=docs.filter(pc.is_in(docs, value_set=judged))))
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
    judged = np.flatnonzero(flag(pc.is_in(docs, value_set=pc.unique(qrels.doc_ids))))
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
    """Collapse an aligned chunk ranking (:class:`ragreport.core.ranking.Ranking`) to documents.

    Vectorised over rows (one integer sort); raises :class:`InputError` naming the run's file
    and line for a chunk missing from the map when ``dm.unmapped`` is ``"error"``.

    >>> from ragreport.core.align import align
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

    >>> from ragreport.core.align import align
    >>> from ragreport.io import load_qrels, load_run
    >>> rk = align(load_qrels({"q": {"c1": 1}}), load_run({"q": ["c1", "c2", "c3"]}))
    >>> redundancy(rk, np.array([False, False, True]), 4).tolist()
    [[0, 0, 1, 1]]
    """
    dense = ranking._dense(repeated.astype(np.int64), max(int(width), 1), 0)
    out: IntArray = np.cumsum(dense, axis=1)
    return out
