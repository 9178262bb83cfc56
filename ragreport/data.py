"""Columnar, validated qrels and runs (one row per judgment or retrieved document).

Rows keep the order of their source, so ``order="given"`` can use it. Strings are held as
pyarrow arrays (cheap to build from a parsed file, hash-encoded later without Python objects);
numbers as numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import RagReportError

__all__ = ["UNMAPPED", "DocMap", "Qrels", "RowLines", "Run", "TableRows", "check_unmapped",
           "distinct_names", "flag"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class RowLines:
    """Source lines of a file in which every line is a data row: row ``i`` is on line ``i + 1``.

    Stands in for ``np.arange(1, n + 1)`` without holding it.

    >>> lines = RowLines(3)
    >>> len(lines), lines[0], lines.tolist()
    (3, 1, [1, 2, 3])
    """

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, row: int) -> int:
        if not -self.n <= row < self.n:
            raise IndexError(f"row {row} out of range for {self.n} rows")
        return row % self.n + 1

    def __array__(self, dtype: Any = None, copy: Any = None) -> IntArray:
        return np.arange(1, self.n + 1, dtype=dtype or np.int64)

    def tolist(self) -> list[int]:
        return list(range(1, self.n + 1))


class TableRows(RowLines):
    """Rows of a table (Parquet, Arrow, a DataFrame, a dataset): row ``i`` is row ``i + 1``,
    which messages call a row, not a line (:meth:`_Rows.place`).

    >>> TableRows(2).tolist()
    [1, 2]
    """

    __slots__ = ()


@dataclass(frozen=True, eq=False)
class _Rows:
    query_ids: Any  # pyarrow string array
    doc_ids: Any  # pyarrow string array
    source: str
    lines: IntArray | RowLines | None
    """1-based source line of each row, or ``None`` for Python objects (rows are entries)."""

    def __len__(self) -> int:
        return len(self.query_ids)

    def where(self, row: int) -> tuple[str, int | None]:
        """(source, line) of a row, for error messages."""
        if self.lines is None:
            return self.source, None
        return self.source, int(self.lines[row])

    def place(self, row: int) -> dict[str, int]:
        """Where a row is, as :class:`~ragreport.errors.InputError` keywords: ``{"line": N}``
        in a file of lines, ``{"row": N}`` in a table, ``{}`` for Python objects."""
        _, line = self.where(row)
        if line is None:
            return {}
        return {"row" if isinstance(self.lines, TableRows) else "line": line}

    def describe(self, row: int) -> str:
        """``file:line`` of a row (``file: row N`` in a table), or ``query 'q', document 'd'``
        for Python objects."""
        src, line = self.where(row)
        if line is not None:
            return f"{src}: row {line}" if isinstance(self.lines, TableRows) else f"{src}:{line}"
        return f"{src} (query {self.query_ids[row].as_py()!r})"


@dataclass(frozen=True, eq=False)
class Qrels(_Rows):
    """Relevance judgments: ``(query_id, doc_id, grade)`` rows.

    Grades are numbers; a grade >= ``rel_level`` is relevant, a negative grade means judged
    but unknown (never relevant, gain 0). Readers give integers, as trec_eval reads grades
    (``1.7`` is 1), unless asked to keep fractional grades (``fractional_grades=True``).
    A query listed with an empty list of judgments judges nothing: it has no row and is not
    a qrels query (as in pytrec_eval).

    Qrels that say who judged (:mod:`ragreport.io.judgments`) hold one judgment per (query,
    document), chosen by :attr:`rule`: :attr:`sources` is the source of each row and
    :attr:`judgments` every judgment read (with its source), in input order. Without
    sources all three are None.
    """

    grades: FloatArray = field(default_factory=lambda: np.zeros(0))
    sources: Any = None  # pyarrow string array: the source of each row
    judgments: Qrels | None = None
    rule: str | None = None

    @property
    def n_queries(self) -> int:
        """Number of distinct query ids."""
        import pyarrow.compute as pc

        return int(pc.count_distinct(self.query_ids).as_py())


@dataclass(frozen=True, eq=False)
class Run(_Rows):
    """A retriever's output: ``(query_id, doc_id, score)`` rows, in source order.

    ``has_scores`` is False for ranked lists given without scores; their scores are then
    decreasing numbers that reproduce the given order. ``empty_queries`` holds the ids of the
    queries that the input lists with an empty result list (``{"q2": {}}``, a JSONL record
    with ``"retrieved": []``): they have no row, yet they are evaluated queries that score 0.
    ``latency_ms`` holds the time the retriever took per query, in milliseconds, when it is
    known (:func:`ragreport.collect_run`, a JSONL record's ``latency_ms``); empty
    otherwise.
    """

    scores: FloatArray = field(default_factory=lambda: np.zeros(0))
    name: str = "run"
    has_scores: bool = True
    query_texts: dict[str, str] = field(default_factory=dict)
    empty_queries: tuple[str, ...] = ()
    latency_ms: dict[str, float] = field(default_factory=dict)

    def renamed(self, name: str) -> Run:
        """A copy of this run under another name."""
        return replace(self, name=name)

    def at_precision(self, precision: str) -> Run:
        """This run with its scores as ``precision`` keeps them: ``"float32"`` rounds each
        to the nearest 32-bit float (round half to even, as C's conversion of a ``double``
        to trec_eval 9's and pytrec_eval's ``float sim``), so scores equal in float32 tie;
        ``"float64"`` returns the run itself. Lists given without scores are unchanged (their
        scores only reproduce the given order).

        >>> import pyarrow as pa
        >>> r = Run(pa.array(["q", "q"]), pa.array(["a", "b"]), "run", RowLines(2),
        ...         np.array([0.5 + 1e-9, 0.5]))
        >>> r.at_precision("float32").scores.tolist()
        [0.5, 0.5]
        """
        if precision == "float64" or not self.has_scores:
            return self
        return replace(self, scores=self.scores.astype(np.float32).astype(np.float64))


def distinct_names(runs: list[Run], names: list[str] | None = None) -> list[Run]:
    """The runs under distinct names: ``names`` in order, else each run's own name (its TREC
    tag), else, where two runs would share one, their file names.

    Raises :class:`~ragreport.errors.RagReportError` when more names than runs are given or
    the names are still not distinct.

    >>> a = Run(None, None, "bm25.txt", None, name="tag")
    >>> b = Run(None, None, "dense.txt", None, name="tag")
    >>> [r.name for r in distinct_names([a, b])], [r.name for r in distinct_names([a, b], ["x"])]
    (['bm25', 'dense'], ['x', 'tag'])
    """
    from pathlib import Path

    from .errors import RagReportError

    given = list(names or [])
    if len(given) > len(runs):
        raise RagReportError(f"{len(given)} names given for {len(runs)} run(s)")
    named = [r.renamed(given[i]) if i < len(given) else r for i, r in enumerate(runs)]
    current = [r.name for r in named]
    stems = [Path(r.source).name.split(".")[0] for r in named]
    out = [r if i < len(given) or current.count(r.name) == 1 else r.renamed(
        stems[i] if stems.count(stems[i]) == 1 else f"{stems[i]}-{i + 1}")
        for i, r in enumerate(named)]
    final = [r.name for r in out]
    if len(set(final)) != len(final):
        raise RagReportError(f"run names must be distinct, got {final}; give names (--name)")
    return out


#: What an id missing from a doc map is: an error, or a document of its own.
UNMAPPED = ("error", "own")


def check_unmapped(unmapped: Any) -> str:
    """``unmapped`` if it is one of :data:`UNMAPPED`, else a RagReportError saying so."""
    if unmapped not in UNMAPPED:
        raise RagReportError(f"unmapped must be one of {', '.join(map(repr, UNMAPPED))}, "
                             f"got {unmapped!r}")
    return str(unmapped)


def flag(mask: Any) -> npt.NDArray[np.bool_]:
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)


@dataclass(frozen=True, eq=False)
class DocMap:
    """Chunk id -> document id, columnar (pyarrow string arrays, each chunk once).

    ``lines`` gives the source line of each entry (None for a Python mapping). ``unmapped``
    says what an id missing from the map is: ``"error"`` (the default: an error naming its
    file and line) or ``"own"`` (a document of its own).

    >>> from ragreport.core.docmap import load_doc_map
    >>> dm = load_doc_map({"c1": "d1", "c2": "d1", "c3": "d2"})
    >>> len(dm), dm.n_documents, dm.document_of(["c2", "c3"])
    (3, 2, ['d1', 'd2'])
    """

    chunk_ids: Any  # pyarrow string array, distinct
    doc_ids: Any  # pyarrow string array, same length
    source: str
    lines: npt.NDArray[np.int64] | None = None
    unmapped: str = "error"
    #: The document codes, computed once (:meth:`codes`); not copied by ``replace``.
    memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @property
    def n_documents(self) -> int:
        """Number of distinct document ids."""
        return len(self.codes()[1])

    def codes(self) -> tuple[npt.NDArray[np.int64], Any]:
        """(document code of each entry, the distinct document ids): computed once."""
        cached: tuple[npt.NDArray[np.int64], Any] | None = self.memo.get("codes")
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
                     None if self.lines is None else self.lines[flag(keep)], self.unmapped)
        return out

    def with_unmapped(self, unmapped: str) -> DocMap:
        """This map with another policy for ids it does not list (``"error"`` or ``"own"``)."""
        return DocMap(self.chunk_ids, self.doc_ids, self.source, self.lines,
                      check_unmapped(unmapped))

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
