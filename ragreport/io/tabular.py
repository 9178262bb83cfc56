"""Qrels, runs and texts from tables: Parquet files, pyarrow Tables and RecordBatches, polars
and pandas DataFrames, Hugging Face ``datasets.Dataset`` objects, iterables of ir_datasets-style
named tuples (``TrecQrel``, ``ScoredDoc``, ``GenericQuery``, ``GenericDoc``) and ir_datasets ids
(``irds:msmarco-passage/dev/small``).

A table has one row per judgment or retrieved document. Its columns are found by name from the
common layouts (:data:`LAYOUTS`; case, ``-`` and ``_`` do not matter) or named with
``columns={"qid": ..., "docid": ..., "score": ..., "relevance": ...}``. Columns are converted at
once with pyarrow (ids: text, or integers written in decimal; scores and grades: numbers, read
as the text readers read them, grades truncated toward zero unless fractional); a Python loop
runs only for values that pyarrow cannot type (mixed types in one column) or text numbers that
fail the check, to name the first bad row. Every error names the source and the row (1-based).

polars, datasets and ir_datasets are never imported here: an object is recognised by its type's
module and name (or, for named tuples, by their field names), and ir_datasets is imported only
to read an ``irds:`` id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..data import Qrels, Run, TableRows
from ..errors import InputError
from .columns import contiguous, first_index, ids_column, numbers_column
from .objects import show_value
from .tableinput import TableInput, table_input

__all__ = ["LAYOUTS", "parse_columns", "qrels_table", "run_table", "texts_table"]

#: The layouts whose column names are recognised (shown in messages).
LAYOUTS = ("TREC (qid, docid, score or relevance), MTEB/BEIR (query-id, corpus-id, score), "
           "ir_measures/ir_datasets (query_id, doc_id, score or relevance), "
           "ranx (q_id, doc_id, score), PyTerrier (qid, docno, score or label)")

# Column names by role, normalised (lower case, '-' and ' ' as '_'). Two names of one tuple in
# one table make it ambiguous; a "weak" name counts only when no strong one is there.
_QID = ("qid", "query_id", "q_id", "queryid", "topic_id")
_QID_WEAK = ("query", "topic")
_DOC = ("docid", "doc_id", "corpus_id", "docno", "document_id", "passage_id", "pid")
_DOC_WEAK = ("doc", "document", "corpus", "passage")
_SCORE = ("score", "similarity", "sim")
_GRADE = ("relevance", "rel", "grade", "label", "judgment", "judgement", "score")
_TAG = ("tag", "run_id", "runid")
_TEXT_ID = ("_id", "id", "doc_id", "docid", "query_id", "qid", "docno", "pid", "corpus_id")
_TEXT = ("text", "contents", "body", "passage", "content")
_TEXT_WEAK = ("query",)
_TITLE = ("title",)

# Keys of ``columns=`` / ``--columns`` and the role each names.
_KEYS = {"qid": "qid", "query_id": "qid", "query": "qid",
         "docid": "docid", "doc_id": "docid", "doc": "docid",
         "score": "score",
         "relevance": "relevance", "rel": "relevance", "grade": "relevance",
         "id": "id", "text": "text", "title": "title", "source": "source"}
_KEYS_SHOWN = ("qid, docid, score, relevance (or rel), source (who judged), and for texts id, "
               "text, title")


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def parse_columns(spec: str | Mapping[str, str] | None) -> dict[str, str] | None:
    """A column mapping, from ``"qid=query-id,docid=corpus-id"`` or a dict, checked.

    Keys: ``qid`` (or ``query_id``), ``docid`` (or ``doc_id``), ``score``, ``relevance`` (or
    ``rel``, ``grade``) for qrels and runs; ``id``, ``text``, ``title`` for texts.

    >>> parse_columns("qid=query-id, docid=corpus-id,rel=score")
    {'qid': 'query-id', 'docid': 'corpus-id', 'relevance': 'score'}
    >>> parse_columns("qid")
    Traceback (most recent call last):
    ...
    ragreport.errors.InputError: columns: expected NAME=COLUMN, got 'qid'
    """
    if spec is None:
        return None
    if isinstance(spec, str):
        pairs: list[tuple[str, str]] = []
        for part in spec.split(","):
            if not part.strip():
                continue
            key, sep, value = part.partition("=")
            if not sep or not key.strip() or (not value.strip()
                                               and _norm(key.strip()) != "source"):
                raise InputError(f"columns: expected NAME=COLUMN, got {part.strip()!r}")
            pairs.append((key.strip(), value.strip()))
    elif isinstance(spec, Mapping):
        pairs = list(spec.items())
    else:
        raise InputError(f"columns must be a mapping such as {{'qid': 'query-id'}}, got "
                         f"{type(spec).__name__}")
    out: dict[str, str] = {}
    for key, value in pairs:
        role = _KEYS.get(_norm(str(key))) if isinstance(key, str) else None
        if role is None:
            raise InputError(f"columns: unknown key {key!r}; the keys are {_KEYS_SHOWN}")
        if role == "source" and value in ("", None):
            out[role] = ""  # no source column
            continue
        if not isinstance(value, str) or not value:
            raise InputError(f"columns: the column for {key!r} must be a name, got {value!r}")
        if role in out:
            raise InputError(f"columns: {role!r} is given twice")
        out[role] = value
    return out


# ---- which column is which --------------------------------------------------------------------

def _find(table: TableInput, role: str, strong: tuple[str, ...], weak: tuple[str, ...],
          columns: Mapping[str, str] | None, key: str) -> str:
    """The column of ``role``: named in ``columns[key]``, else found by name."""
    found = _find_optional(table, role, strong, weak, columns, key, True)
    if found is None:  # not reached: required
        raise InputError(f"{table.container} has no {role} column", table.source)
    return found


def _once(table: TableInput, name: str) -> str:
    if table.names.count(name) > 1:
        raise InputError(f"{table.container} has {table.names.count(name)} columns named "
                         f"{name!r}", table.source)
    return name


def _find_optional(table: TableInput, role: str, strong: tuple[str, ...],
                   weak: tuple[str, ...], columns: Mapping[str, str] | None, key: str,
                   required: bool = False) -> str | None:
    """:func:`_find`, or None when no column is there and ``required`` is False."""
    names = table.names
    if columns and key in columns:
        wanted = columns[key]
        if wanted in names:
            return _once(table, wanted)
        raise InputError(f"{table.container} has no column {wanted!r} (given as {key}=...); "
                         f"its columns: {_list(names)}", table.source)
    by_norm: dict[str, list[str]] = {}
    for n in names:
        by_norm.setdefault(_norm(n), []).append(n)
    for group in (strong, weak):
        found = [n for option in group for n in by_norm.get(option, [])]
        if {_norm(n) for n in found} == {"docid", "docno"} and len(found) == 2:
            # PyTerrier's results: docid is its index's internal number, docno the document
            found = [n for n in found if _norm(n) == "docno"]
        if len(found) == 1:
            return found[0]
        if len(set(found)) == 1:
            return _once(table, found[0])
        if len(found) > 1:
            raise InputError(
                f"{table.container} has several {role} columns ({_list(found)}); name the one "
                f"to read with --columns {key}=NAME (columns={{'{key}': NAME}} in Python); "
                f"its columns: {_list(names)}", table.source)
    if not required:
        return None
    raise InputError(f"{table.container} has no {role} column (its columns: {_list(names)}; "
                     f"layouts read: {LAYOUTS}; or name it with --columns {key}=NAME, "
                     f"columns={{'{key}': NAME}} in Python)", table.source)


def _list(names: Sequence[str]) -> str:
    shown = [repr(n) if len(n) <= 40 else repr(n[:30]) + "..." for n in names[:30]]
    more = f" and {len(names) - 30} more" if len(names) > 30 else ""
    return (", ".join(shown) or "none") + more


# ---- readers ----------------------------------------------------------------------------------

def _rows_for(table: TableInput, kind: str, columns: Mapping[str, str] | None,
              fractional: bool) -> tuple[Any, Any, np.ndarray, bool]:
    """(query ids, document ids, values, whether the values are scores): a run without a
    score column but with a ``rank`` column is ranked by it (scores ``-rank``)."""
    import pyarrow as pa

    qcol = _find(table, "query id", _QID, _QID_WEAK, columns, "qid")
    dcol = _find(table, "document id", _DOC, _DOC_WEAK, columns, "docid")
    by_rank = False
    if kind == "run":
        rank = next((n for n in table.names if _norm(n) == "rank"), None)
        found = _find_optional(table, "score", _SCORE, (), columns, "score",
                               required=rank is None or bool(columns and "score" in columns))
        by_rank = found is None
        vcol = found if found is not None else _once(table, rank or "rank")
    elif columns and "relevance" in columns:
        vcol = _find(table, "grade", _GRADE, (), columns, "relevance")
    else:
        found = _find_optional(table, "grade", _GRADE, (), None, "relevance",
                               required=not (columns and "score" in columns))
        # else the qrels' grades named as score= (MTEB's name for them)
        vcol = found if found is not None else _find(table, "grade", _GRADE, (), columns,
                                                     "score")
    if len({qcol, dcol, vcol}) < 3:
        raise InputError(f"one column is read for two roles (query id {qcol!r}, document id "
                         f"{dcol!r}, {'score' if kind == 'run' else 'grade'} {vcol!r})",
                         table.source)
    qids = ids_column(table.get(qcol), "query id", qcol, table.source)
    docs = ids_column(table.get(dcol), "document id", dcol, table.source)
    if len(qids) != len(docs):
        raise InputError("the columns have different lengths", table.source)
    what = "rank" if by_rank else "score" if kind == "run" else "grade"
    if kind == "qrels" and not fractional and _norm(vcol) in _SCORE:
        _refuse_scores_as_grades(table, vcol, qids, docs)
    values = numbers_column(table.get(vcol), what, vcol, table.source, qids, docs, fractional)
    if by_rank:
        values = 0.0 - values  # rank 1 first; equal ranks are tied scores
    if not len(qids):
        raise InputError(f"no {'retrieved documents' if kind == 'run' else 'judgments'} found",
                         table.source)
    return (pa.array(qids, pa.string()) if isinstance(qids, list) else qids, docs, values,
            not by_rank)


def _refuse_scores_as_grades(table: TableInput, column: str, qids: Any, docs: Any) -> None:
    """Qrels whose grades are named like scores (MTEB's ``score``): a value that is not a
    whole number means a run was given as the qrels (both have query-id, corpus-id and
    score; a run and its qrels swapped on the command line): refused naming the row, never
    truncated to grade 0 and evaluated as a run without a relevant document."""
    import pyarrow as pa

    col = table.get(column)
    if not isinstance(col, (pa.Array, pa.ChunkedArray)) or not pa.types.is_floating(col.type):
        return
    col = contiguous(col)
    with np.errstate(invalid="ignore"):
        values = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
        frac = np.isfinite(values) & (values != np.trunc(values))
    if not frac.any():
        return
    row = int(np.flatnonzero(frac)[0])
    qid = qids[row].as_py() if hasattr(qids[row], "as_py") else qids[row]
    doc = docs[row].as_py() if hasattr(docs[row], "as_py") else docs[row]
    raise InputError(f"the qrels' grade column {column!r} holds {float(values[row])!r} "
                     f"(document {doc!r}, query {qid!r}), not a whole number: is this the run? "
                     "give the qrels first, then the run (ragreport evaluate QRELS RUN); "
                     "--fractional-grades keeps fractional grades", table.source, row=row + 1)


def qrels_table(obj: Any, *, source: str | None = None, columns: Mapping[str, str] | None = None,
                fractional: bool = False, rule: str = "human-first") -> Qrels:
    """:class:`~ragreport.data.Qrels` from a table (see :func:`table_input`).

    >>> import pyarrow as pa
    >>> q = qrels_table(pa.table({"query-id": [1, 1], "corpus-id": ["d1", "d2"],
    ...                           "score": [2, 0]}))
    >>> q.query_ids.to_pylist(), q.grades.tolist()
    (['1', '1'], [2.0, 0.0])
    """
    table = table_input(obj, "qrels", source)
    qids, docs, grades, _ = _rows_for(table, "qrels", columns, fractional)
    qrels = Qrels(qids, docs, table.source, TableRows(len(qids)), grades)
    labels = _source_column(table, columns)
    if labels is None:
        return qrels
    from .judgments import resolve

    return resolve(qrels, labels, rule)


def _source_column(table: TableInput, columns: Mapping[str, str] | None) -> Any:
    """The qrels' ``source`` column (who judged; :mod:`ragreport.io.judgments`) as a pyarrow
    string array, None when there is none."""
    import pyarrow as pa

    given = (columns or {}).get("source")
    if given == "":  # source= (empty): no column says who judged
        return None
    name = given or next((n for n in table.names if _norm(n) == "source"), None)
    if name is None:
        return None
    if name not in table.names:
        raise InputError(f"no column {name!r} (source=) among {', '.join(table.names)}",
                         table.source)
    col = table.get(name)
    if not isinstance(col, (pa.Array, pa.ChunkedArray)):
        col = pa.array(list(col), from_pandas=True)
    col = contiguous(col) if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
            or pa.types.is_null(col.type)):
        raise InputError(f"the source column {name!r} must hold text labels (human, "
                         f"llm:<name>...), got {col.type}; columns source= (empty) reads no "
                         "source", table.source)
    return col.cast(pa.string())


def run_table(obj: Any, *, source: str | None = None, columns: Mapping[str, str] | None = None,
              name: str | None = None, stem: str | None = None) -> Run:
    """:class:`~ragreport.data.Run` from a table (see :func:`table_input`).

    The run's name is ``name``, else the first value of a ``tag`` column (as the TREC
    reader takes the tag of the first line), else ``stem`` (a file's name), else ``run``.
    A table without a score column but with a ``rank`` column is a ranked list: rank 1
    first (scores ``-rank``, :attr:`~ragreport.data.Run.has_scores` False).

    >>> import pyarrow as pa
    >>> r = run_table(pa.table({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [2, 1.5]}))
    >>> r.doc_ids.to_pylist(), r.scores.tolist(), r.name
    (['a', 'b'], [2.0, 1.5], 'run')
    """
    table = table_input(obj, "run", source)
    qids, docs, scores, has_scores = _rows_for(table, "run", columns, False)
    tag = None
    if name is None:
        tcol = next((n for n in table.names if _norm(n) in _TAG), None)
        if tcol is not None:
            values = (table.first or table.get)(tcol)
            first: Any = values[0] if len(values) else None
            value = first.as_py() if hasattr(first, "as_py") else first
            tag = value if isinstance(value, str) and value.strip() else None
    return Run(qids, docs, table.source, TableRows(len(qids)), scores,
               name or tag or stem or "run", has_scores)


def texts_table(obj: Any, what: str, *, source: str | None = None,
                columns: Mapping[str, str] | None = None) -> dict[str, str]:
    """id -> text from a table: an id column (``_id``, ``id``, ``doc_id``, ``query_id``...),
    a text column (``text``, ``contents``, ``body``...; ``query`` for queries) and an optional
    ``title``, joined as the JSONL reader joins them (``title\\ntext`` when the title is not
    empty). An id given twice keeps its last text, as the file readers do.

    >>> import pyarrow as pa
    >>> texts_table(pa.table({"_id": ["d1", "d2"], "title": ["Lists", ""],
    ...                       "text": ["mutable", "no title"]}), "docs")
    {'d1': 'Lists\\nmutable', 'd2': 'no title'}
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = what if what in ("queries", "docs") else "docs"
    table = table_input(obj, kind, source)
    icol = _find(table, "id", _TEXT_ID, (), columns, "id")
    tcol = _find(table, "text", _TEXT, _TEXT_WEAK, columns, "text")
    title_col = _find_optional(table, "title", _TITLE, (), columns, "title")
    ids = ids_column(table.get(icol), "id", icol, table.source)
    texts = contiguous(_as_arrow(table.get(tcol), table.source))
    if pa.types.is_dictionary(texts.type):
        texts = texts.dictionary_decode()
    if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)
            or pa.types.is_string_view(texts.type)):
        raise InputError(f"text column {tcol!r} holds {texts.type} values; texts must be text",
                         table.source)
    if texts.null_count:
        raise InputError("text is null", table.source, row=first_index(texts.is_null()) + 1)
    texts = pc.cast(texts, pa.large_string())
    if title_col is not None:
        titles = contiguous(_as_arrow(table.get(title_col), table.source))
        if pa.types.is_dictionary(titles.type):
            titles = titles.dictionary_decode()
        if pa.types.is_string(titles.type) or pa.types.is_large_string(titles.type) \
                or pa.types.is_string_view(titles.type):
            titles = pc.cast(titles, pa.large_string())
            has = pc.fill_null(pc.not_equal(titles, ""), False)
            joined = pc.binary_join_element_wise(titles, texts, pa.scalar("\n",
                                                                          pa.large_string()))
            texts = pc.if_else(has, joined, texts)
    return dict(zip(ids.to_pylist(), texts.to_pylist(), strict=True))


def _as_arrow(col: Any, source: str) -> Any:
    import pyarrow as pa

    if isinstance(col, list):
        if any(v is not None and not isinstance(v, str) for v in col):
            bad = next(i for i, v in enumerate(col) if v is not None and not isinstance(v, str))
            raise InputError(f"text must be a string, got {show_value(col[bad])}", source,
                             row=bad + 1)
        return pa.array(col, pa.large_string())
    return col
