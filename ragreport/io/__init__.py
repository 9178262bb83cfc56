"""Readers: TREC, BEIR, JSONL/JSON, Python objects, DataFrames; query and document texts.

The format is detected from the content (and the extension), or named with ``format=``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..data import Qrels, Run
from ..errors import InputError
from .common import (
    Source,
    is_input,
    jsonl_objects,
    read_bytes,
    read_once,
    strip_bom,
    strip_comment_lines,
)
from .objects import Columns, from_jsonl, from_object
from .tableinput import is_iterator_input, is_parquet, is_table_like
from .tabular import parse_columns, qrels_table, run_table, texts_table

__all__ = ["load_docs", "load_qrels", "load_queries", "load_run", "load_texts"]

_FORMATS = ("auto", "trec", "beir", "jsonl", "json", "parquet")


def _sniff(data: bytes, path: str) -> str:
    """The format of a file from its first bytes: never from what an id looks like.

    A BEIR qrels TSV starts with its exact header line (``query-id<TAB>corpus-id<TAB>score``
    or a usual variant); JSON starts with ``{`` or ``[`` (unless that first line is not JSON
    but a TREC line whose id starts so); anything else is TREC unless the name ends in
    ``.json``/``.jsonl``.
    """
    from .trec import is_beir_header

    text = strip_bom(data[:65536])
    if is_beir_header(text.split(b"\n", 1)[0]):
        return "beir"
    body, _ = strip_comment_lines(text)
    body = body.lstrip()
    if body[:1] in (b"{", b"["):
        line = body.split(b"\n", 1)[0]
        return "trec" if not _is_json(line) and _is_trec_line(line) else "jsonl"
    if path.endswith((".jsonl", ".json", ".jsonl.gz", ".json.gz")):
        return "jsonl"
    return "trec"


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply to be a TREC line
        return False
    return True


def _is_trec_line(line: bytes) -> bool:
    """Whether a line reads as a TREC qrels (4 fields) or run (6 or more) line."""
    from .common import parse_score

    fields = line.split()
    value = fields[3] if len(fields) == 4 else fields[4] if len(fields) >= 6 else None
    if value is None:
        return False
    try:
        parse_score(value.decode("utf-8", "replace"))
    except ValueError:
        return False
    return True


def _trec_file(path: str | Source, kind: str, fmt: str,
               fractional: bool) -> tuple[Any, Any, Any, Any, str] | None:
    """The fast TREC reader's result for a plain TREC file, None for anything else."""
    from .trec import parse_trec_file

    if fmt not in ("auto", "trec") or isinstance(path, Source):
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536)
    except OSError:
        return None  # read_bytes says what is wrong
    if fmt == "auto" and _sniff(head, path) != "trec":
        return None
    return parse_trec_file(path, kind, head, fractional)


def _check_fractional(fractional_grades: Any) -> bool:
    if not isinstance(fractional_grades, (bool, np.bool_)):
        raise InputError("fractional_grades must be True or False, got "
                         f"{fractional_grades!r}")
    return bool(fractional_grades)


def _check_format(fmt: str) -> None:
    if fmt not in _FORMATS:
        raise InputError(f"format must be one of {', '.join(_FORMATS)}, got {fmt!r}")


def _no_columns(columns: dict[str, str] | None, source: str) -> None:
    if columns:
        raise InputError("columns= applies to tables (Parquet, Arrow, polars, pandas, Hugging "
                         "Face datasets), not to this input", source)


def _table_object(obj: Any) -> tuple[Any, bool]:
    """``obj`` (a generator read into a list) and whether :mod:`.tabular` reads it."""
    if is_table_like(obj):
        return obj, True
    if is_iterator_input(obj):
        obj = list(obj)
    return obj, is_table_like(obj)


def _finish(cols: Columns, source: str, kind: str, file_lines: bool) -> tuple[Any, Any, Any, Any]:
    import pyarrow as pa

    if not cols.qids and not cols.empty:
        raise InputError(f"no {'retrieved documents' if kind == 'run' else 'judgments'} found",
                         source)
    lines = np.asarray(cols.lines, dtype=np.int64) if file_lines else None
    return (pa.array(cols.qids, pa.string()), pa.array(cols.docs, pa.string()),
            np.asarray(cols.values, dtype=np.float64), lines)


def load_qrels(qrels: Any, *, format: str = "auto", fractional_grades: bool = False,
               columns: Any = None, judgment_rule: str | None = None) -> Qrels:
    """Read relevance judgments from a path or a Python object.

    Parameters
    ----------
    qrels : path, Source, Qrels, dict, list, table or ir_datasets id
        A TREC qrels file (``qid iter docid grade``, gzip or not), a BEIR qrels TSV (with a
        header), a JSONL file of records with ``relevant`` (list of ids, grade 1, or
        ``{doc_id: grade}``), a Parquet file; or ``{qid: {doc_id: grade}}``, a list of
        seed-style dicts, a pandas or polars DataFrame, a pyarrow Table or RecordBatch, a
        Hugging Face ``datasets.Dataset`` (query id, doc id and grade columns: see
        :mod:`ragreport.io.tabular`), an iterable of ir_datasets ``TrecQrel`` named tuples,
        or ``"irds:<dataset id>"`` (needs ir_datasets). ``-`` is standard input; a FIFO
        or pipe is read once (so is a :class:`ragreport.io.common.Source`'s bytes).
    format : {"auto", "trec", "beir", "jsonl", "json", "parquet"}
        Force a file format instead of detecting it.
    fractional_grades : bool
        By default grades in files are read as trec_eval reads them (C ``atol``): a plain
        decimal number truncated toward zero (``1.7`` is 1); a grade in exponent notation
        or with ``|grade| >= 2**53`` is an error. True keeps fractional grades as gains.
    columns : dict or str, optional
        For tables: the columns to read, ``{"qid": ..., "docid": ..., "relevance": ...}``
        (or ``"qid=query-id,docid=corpus-id,relevance=score"``; ``score`` names the grade
        column too when ``relevance`` is not given); by default found from the common layouts.
        ``source`` names the column saying who judged (found by that name by default).
    judgment_rule : {"human-first", "latest"}, optional
        With sources (a ``source`` column or JSONL field: :mod:`ragreport.io.judgments`), the
        judgment used where a (query, document) is judged more than once: the latest
        ``human`` one, else the latest (``"human-first"``, the default); or the latest
        whoever gave it. Given with qrels already read, they are chosen again by it.

    Raises
    ------
    InputError
        Naming the file, the line and what was wrong.

    Examples
    --------
    >>> q = load_qrels({"q1": {"d1": 2, "d2": 0}})
    >>> len(q), q.grades.tolist()
    (2, [2.0, 0.0])
    """
    _check_format(format)
    fractional = _check_fractional(fractional_grades)
    from .judgments import check_rule, resolve

    rule = check_rule(judgment_rule or "human-first")
    if isinstance(qrels, Qrels):
        every = qrels.judgments
        if judgment_rule is None or every is None or judgment_rule == qrels.rule:
            return qrels
        return resolve(every, every.sources, rule)
    if isinstance(qrels, Run):
        raise InputError("got a Run where qrels were expected")
    mapping = parse_columns(columns)
    shown = f"qrels ({type(qrels).__name__})"
    qrels, table = _table_object(qrels)
    if table:
        return qrels_table(qrels, source=shown, columns=mapping, fractional=fractional,
                           rule=rule)
    if is_input(qrels):
        src = read_once(qrels)
        path = str(src)
        if format == "parquet" or (format == "auto" and is_parquet(src)):
            return qrels_table(src, columns=mapping, fractional=fractional, rule=rule)
        _no_columns(mapping, path)
        fast = _trec_file(src, "qrels", format, fractional)
        if fast is not None:
            return Qrels(fast[0], fast[1], path, fast[3], fast[2])
        data = read_bytes(src)
        fmt = _sniff(data, path) if format == "auto" else format
        if fmt == "trec":
            from .trec import parse_trec

            qids, docs, grades, lines, _ = parse_trec(data, path, "qrels", fractional=fractional)
            return Qrels(qids, docs, path, lines, grades)
        if fmt == "beir":
            from .trec import parse_beir_qrels

            qids, docs, grades, lines, sources = parse_beir_qrels(data, path, fractional)
            read = Qrels(qids, docs, path, lines, grades)
            return read if sources is None else resolve(read, sources, rule)
        cols = from_jsonl(data, "qrels", path, fractional=fractional)
        qids, docs, grades, lines = _finish(cols, path, "qrels", True)
        read = Qrels(qids, docs, path, lines if lines is not None and lines.all() else None,
                     grades)
        return read if not cols.sources else resolve(read, cols.sources, rule)
    source = shown
    _no_columns(mapping, source)
    cols = from_object(qrels, "qrels", source, fractional=fractional)
    qids, docs, grades, _ = _finish(cols, source, "qrels", False)
    read = Qrels(qids, docs, source, None, grades)
    return read if not cols.sources else resolve(read, cols.sources, rule)


def load_run(run: Any, *, format: str = "auto", name: str | None = None,
             columns: Any = None) -> Run:
    """Read a run (a retriever's ranked results) from a path or a Python object.

    Parameters
    ----------
    run : path, Source, Run, dict, list, table or ir_datasets id
        A TREC run file (``qid Q0 docid rank score tag``; fields after the tag are ignored,
        ``#`` lines are comments; gzip or not), a JSONL file of records with ``retrieved`` (a
        ranked list of ids or ``{doc_id: score}``), a Parquet file; or
        ``{qid: {doc_id: score}}``, ``{qid: [doc_id, ...]}``, a list of seed-style dicts, a
        pandas or polars DataFrame, a pyarrow Table or RecordBatch, a Hugging Face
        ``datasets.Dataset`` (query id, doc id and score columns: see
        :mod:`ragreport.io.tabular`), an iterable of ir_datasets ``ScoredDoc`` named tuples,
        or ``"irds:<dataset id>"`` (its scored documents; needs ir_datasets). ``-`` is
        standard input; a FIFO or pipe is read once. Scores are plain decimal numbers
        (``-1.5``, ``.5``, ``1E5``), finite as float64: ``nan``, ``inf``, ``1_000``, ``0x10``
        or ``1e400`` are errors naming the line.
    format : {"auto", "trec", "jsonl", "json", "parquet"}
        Force a file format instead of detecting it.
    name : str, optional
        Run name; defaults to the TREC tag of the first line (trec_eval's ``runid``; in a
        table, the first value of a ``tag`` column), else the file name without its extension.
    columns : dict or str, optional
        For tables: the columns to read, ``{"qid": ..., "docid": ..., "score": ...}`` (or
        ``"qid=query_id,docid=doc_id,score=sim"``); by default found from the common layouts.

    Examples
    --------
    >>> r = load_run({"q1": ["d3", "d1"]})
    >>> r.doc_ids.to_pylist(), r.scores.tolist(), r.has_scores
    (['d3', 'd1'], [2.0, 1.0], False)
    """
    _check_format(format)
    if isinstance(run, Run):
        return run.renamed(name) if name else run
    if isinstance(run, Qrels):
        raise InputError("got Qrels where a run was expected")
    mapping = parse_columns(columns)
    shown = f"run ({type(run).__name__})"
    run, table = _table_object(run)
    if table:
        return run_table(run, source=shown, columns=mapping, name=name)
    if is_input(run):
        src = read_once(run)
        path = str(src)
        stem = Path(path).name.split(".")[0] or path
        if format == "parquet" or (format == "auto" and is_parquet(src)):
            return run_table(src, columns=mapping, name=name, stem=stem)
        _no_columns(mapping, path)
        fast = _trec_file(src, "run", format, False)
        if fast is not None:
            return Run(fast[0], fast[1], path, fast[3], fast[2], name or fast[4] or stem)
        data = read_bytes(src)
        fmt = _sniff(data, path) if format == "auto" else format
        if fmt == "beir":
            raise InputError("looks like a BEIR qrels file, not a run", path)
        if fmt == "trec":
            from .trec import parse_trec

            qids, docs, scores, lines, tag = parse_trec(data, path, "run")
            return Run(qids, docs, path, lines, scores, name or tag or stem)
        cols = from_jsonl(data, "run", path)
        qids, docs, scores, lines = _finish(cols, path, "run", True)
        return Run(qids, docs, path, lines if lines is not None and lines.all() else None,
                   scores, name or stem, cols.has_scores, cols.texts, tuple(cols.empty),
                   cols.latency_ms)
    source = shown
    _no_columns(mapping, source)
    cols = from_object(run, "run", source)
    qids, docs, scores, _ = _finish(cols, source, "run", False)
    return Run(qids, docs, source, None, scores, name or "run", cols.has_scores, cols.texts,
               tuple(cols.empty), cols.latency_ms)


def load_texts(texts: Any, *, what: str = "texts", columns: Any = None) -> dict[str, str]:
    """Read id -> text from a TSV (``id<TAB>text``; a BEIR header line is skipped), a JSONL
    file (``_id``/``id``/``query_id``/``doc_id`` and ``text``, with ``title`` prepended for
    documents), a Parquet file or a table (a pyarrow Table, a pandas or polars DataFrame, a
    Hugging Face ``datasets.Dataset``: MTEB's ``_id``, ``title``, ``text`` layout and the
    like, :func:`ragreport.io.tabular.texts_table`; ``columns={"id": ..., "text": ...,
    "title": ...}`` names the columns), ir_datasets ``GenericQuery``/``GenericDoc`` named
    tuples or ``"irds:<dataset id>"``, or a dict. A path may be ``-`` (standard input), a
    FIFO or a :class:`ragreport.io.common.Source`; gzip is read, a UTF-8 byte order mark
    dropped.

    >>> load_texts({"q1": "what is a list"})
    {'q1': 'what is a list'}
    """
    if texts is None:
        return {}
    mapping = parse_columns(columns)
    if isinstance(texts, dict):
        _no_columns(mapping, what)
        return {str(k): str(v) for k, v in texts.items()}
    shown = f"{what} ({type(texts).__name__})"
    texts, table = _table_object(texts)
    if table:
        return texts_table(texts, what, source=shown, columns=mapping)
    if not is_input(texts):
        raise InputError(f"{what} must be a path or a dict, got {type(texts).__name__}")
    src = read_once(texts)
    path = str(src)
    if is_parquet(src):
        return texts_table(src, what, columns=mapping)
    _no_columns(mapping, path)
    data = read_bytes(src)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 text ({exc.reason})", path,
                         data.count(b"\n", 0, exc.start) + 1) from None
    out: dict[str, str] = {}
    if text.lstrip().startswith("{"):
        for no, rec in jsonl_objects(text, path):
            key = next((rec[k] for k in ("_id", "id", "doc_id", "docid", "query_id", "qid")
                        if k in rec), None)
            body = rec.get("text", rec.get("query", rec.get("contents")))
            if key is None or body is None:
                raise InputError("record needs an id (_id, id, doc_id or query_id) and a text",
                                 path, no)
            title = rec.get("title")
            out[str(key)] = f"{title}\n{body}" if title else str(body)
        return out
    for no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        key, sep, body = line.rstrip("\r").partition("\t")
        if not sep:
            raise InputError("expected 'id<TAB>text'", path, no)
        if no == 1 and key.strip().lower() in ("_id", "id", "query-id", "query_id", "qid",
                                               "doc_id", "docid", "corpus-id"):
            continue
        out[key.strip()] = body
    return out


def load_queries(queries: Any, *, columns: Any = None) -> dict[str, str]:
    """Query texts (see :func:`load_texts`)."""
    return load_texts(queries, what="queries", columns=columns)


def load_docs(docs: Any, *, columns: Any = None) -> dict[str, str]:
    """Document texts (see :func:`load_texts`)."""
    return load_texts(docs, what="docs", columns=columns)
