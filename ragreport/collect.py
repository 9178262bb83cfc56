"""Measure a retriever directly: call it over the queries, keep its rankings and its times.

:func:`collect_run` calls a retriever once per query and returns a :class:`~ragreport.Run`
that every part of ragreport takes (:func:`ragreport.evaluate`, the report, the explorer),
carrying the time each call took (:attr:`Run.latency_ms`), which the report shows as p50, p95
and max beside the quality numbers.

A retriever is any of:

- a plain callable: query text -> a list of document ids, of ``(id, score)`` pairs, of
  objects (dicts with ``doc_id``/``id``/``_id`` and ``score``, LangChain ``Document``\\ s,
  LlamaIndex nodes; ``(object, score)`` pairs too, as LangChain's
  ``similarity_search_with_score`` returns), or a ``{doc_id: score}`` map;
- a LlamaIndex retriever (anything with ``.retrieve(str)`` returning ``NodeWithScore``): the
  id is ``node.metadata[id_key]``, or the node's id (``node.node_id``) when ``id_key`` is
  None, and the score is ``NodeWithScore.score``;
- a LangChain retriever (anything with ``.invoke(str)`` returning ``Document``\\ s): the id
  is ``doc.metadata[id_key]``, or ``doc.id`` when ``id_key`` is None. A ``Document`` has no
  score, so the ranking is the returned order.

Neither LlamaIndex nor LangChain is imported here: retrievers are recognised by their methods.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .data import Run
from .errors import ConfigError, InputError, RagReportError

__all__ = ["MAX_CONCURRENCY", "PROGRESS_DELAY", "collect_run", "write_run"]

#: The most threads :func:`collect_run` runs at once.
MAX_CONCURRENCY = 256

#: With ``progress=None`` the bar appears once a collection has run this many seconds.
PROGRESS_DELAY = 2.0

_ID_FIELDS = ("doc_id", "id", "_id", "docid", "corpus-id", "corpus_id")


@dataclass(frozen=True)
class _Collected:
    """One query's ranking as the retriever returned it (cut at ``k``)."""

    qid: str
    docs: list[str]
    scores: list[float] | None  # None: the retriever gave no score
    latency_ms: float | None


def collect_run(
    retriever: Any,
    queries: Any,
    *,
    k: int | None = None,
    name: str | None = None,
    id_key: str | None = None,
    max_concurrency: int = 1,
    progress: bool | None = None,
    resume: str | os.PathLike[str] | None = None,
) -> Run:
    """Call ``retriever`` on every query; return the run, with each query's latency.

    Parameters
    ----------
    retriever : callable, LlamaIndex retriever or LangChain retriever
        Called with the query text: ``retriever.invoke(text)`` when it has ``invoke``
        (LangChain), else ``retriever.retrieve(text)`` (LlamaIndex), else ``retriever(text)``.
        What it returns is described in :mod:`ragreport.collect`.
    queries : dict or path
        Query id -> text, or anything :func:`ragreport.load_queries` reads (TSV, JSONL).
    k : int, optional
        Keep the first ``k`` results of each query, as returned (default: all). The retriever
        decides how many it returns (``similarity_top_k``, ``search_kwargs={"k": ...}``).
    name : str, optional
        The run's name; default the function's or the retriever class's name.
    id_key : str, optional
        The metadata key holding the document id of a LlamaIndex node or a LangChain
        ``Document`` (the key of a dict result). Default: the node id / ``Document.id`` (a
        dict's ``doc_id``, ``id`` or ``_id``). Several chunks of one document give the
        document's id several times: evaluate with ``duplicates="first"``, or keep chunk
        ids and evaluate with a ``doc_map``.
    max_concurrency : int
        Threads calling the retriever at once (1 to :data:`MAX_CONCURRENCY`), for a
        retriever that waits on the network. The run lists the queries in ``queries``' order
        whatever order the calls finish in. Each latency is that one call's wall time, which
        includes waiting for a thread-unsafe retriever's lock.
    progress : bool, optional
        A tqdm progress bar (``tqdm.auto``: a widget in Jupyter). None (default): shown when
        tqdm is installed and the collection lasts more than :data:`PROGRESS_DELAY` seconds;
        True: always (an error without tqdm); False: never.
    resume : path, optional
        A JSONL file that keeps every finished query (one line each, appended and flushed as
        it finishes). Run again with the same file after a crash or an interrupt, and the
        queries in it are not called again (their ranking and latency are read back); an
        unfinished last line is dropped and that query called again. The file is a run that
        :func:`ragreport.load_run` reads (with its latency); lines of queries that are not
        in ``queries`` stay in the file and are not returned.

        Its first line states the run's identity, the run's name and the settings that
        change what is collected: ``# ragreport resume file {"run": "search", "k": 10,
        "id_key": null}`` (a ``#`` comment, which every reader of a run skips). A missing or
        empty file is a fresh start (the line is written first). Any other file is checked
        whole before anything is read back or changed, and refused (the file left byte for
        byte as it was) when it does not start with that line (a run written by
        :func:`write_run`, a file of another kind, a directory), when the line names another
        run (another ``name``, by default another retriever's function or class name) or
        another ``k`` or ``id_key`` (resumed, the run would mix two depths or two kinds of
        id), or when a line is not a record of this run (another run, another query text,
        more than ``k`` results). Only a file proven to be this run's has its unfinished last
        line cut.

    Returns
    -------
    Run
        Ranked document ids and scores per query, in ``queries``' order, with
        :attr:`~ragreport.Run.latency_ms` (``time.perf_counter`` around each call) and the
        query texts. Without scores (ids, LangChain documents, nodes whose score is None)
        a query's scores are n, n-1, ..., 1 down its ranking (``has_scores`` False, as for a
        ranked list read by :func:`ragreport.load_run`). With scores, evaluation orders by
        score as trec_eval does; ``evaluate(..., order="given")`` keeps the returned order.

    Raises
    ------
    RagReportError
        The retriever raised (the message names the query; the exception is chained), or
        returned something that is not a ranking (the message names the query, the result
        and, for a missing ``id_key``, the metadata keys it has).
    InputError
        The queries are malformed, or the resume file is malformed or not this run's (file
        and line named, what was found and what was expected; the file is unchanged).
    ConfigError
        An option is out of range, or ``progress=True`` without tqdm installed.

    Examples
    --------
    >>> index = {"d1": "cats purr", "d2": "dogs bark", "d3": "cats and dogs"}
    >>> def search(text):
    ...     words = set(text.split())
    ...     hits = {d: len(words & set(t.split())) for d, t in index.items()}
    ...     return sorted(((d, s) for d, s in hits.items() if s), key=lambda x: -x[1])
    >>> run = collect_run(search, {"q1": "cats purr", "q2": "dogs bark"})
    >>> run.name, run.doc_ids.to_pylist(), run.scores.tolist()
    ('search', ['d1', 'd3', 'd2', 'd3'], [2.0, 1.0, 2.0, 1.0])
    >>> sorted(run.latency_ms) == ["q1", "q2"]
    True
    >>> import ragreport
    >>> ragreport.evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, run, ["RR"]).means()
    {'RR': 1.0}
    """
    call = _caller(retriever)
    texts = _queries(queries)
    k = _check_k(k)
    workers = _check_workers(max_concurrency)
    if progress is not None and not isinstance(progress, bool):
        raise ConfigError(f"progress must be True, False or None, got {progress!r}")
    if id_key is not None and (not isinstance(id_key, str) or not id_key):
        raise ConfigError(f"id_key must be a non-empty string or None, got {id_key!r}")
    run_name = _run_name(retriever) if name is None else name
    if not isinstance(run_name, str) or not run_name.strip():
        raise ConfigError(f"name must be a non-empty string, got {run_name!r}")
    path = Path(os.fspath(resume)) if resume is not None else None
    if path is not None and isinstance(queries, (str, os.PathLike)) and _same_file(path,
                                                                                 queries):
        raise ConfigError(f"resume= names the queries file {str(path)!r}; the resume file is "
                          "where the collected rankings are appended: give another path")
    done: dict[str, _Collected] = {}
    new = False  # a missing or empty resume file: its header is written first
    if path is not None:
        done, new = _read_resume(path, texts, k, id_key, run_name)
    todo = [q for q in texts if q not in done]

    def work(qid: str) -> _Collected:
        text = texts[qid]
        start = time.perf_counter()
        try:
            out = call(text)
            if isinstance(out, Iterator):  # a generator: its work is part of the call's time
                out = list(out)
        except Exception as exc:
            keep = (f"the queries collected so far are in {str(path)!r}: run again with the "
                    "same resume= to call only the others" if path is not None else
                    "pass resume=PATH to keep the collected queries across a failure")
            raise RagReportError(
                f"the retriever raised {type(exc).__name__} on query {qid!r}: "
                f"{_first_line(exc)}; fix the retriever or leave that query out ({keep}; "
                "the retriever's exception is chained as __cause__)") from exc
        ms = (time.perf_counter() - start) * 1000.0
        docs, scores = _ranking(out, qid, id_key)
        if k is not None:
            docs = docs[:k]
            scores = scores[:k] if scores is not None else None
        return _Collected(qid, docs, scores, ms)

    header = _header(_identity(run_name, k, id_key)) if new else None
    out = _open_resume(path, header) if path is not None and todo else None
    bar = None
    try:
        bar = _progress_bar(progress, len(texts), len(done), run_name) if todo else None

        def finished(got: _Collected) -> None:
            done[got.qid] = got
            if out is not None:
                try:
                    out.write(_record(got, texts[got.qid], run_name) + "\n")
                    out.flush()
                except OSError as exc:
                    raise InputError(f"cannot write the resume file: {exc.strerror or exc}",
                                     str(path)) from None
            if bar is not None:
                bar.update(1)

        _call_all(work, todo, workers, finished)
    finally:
        if out is not None:
            out.close()
        if bar is not None:
            bar.close()
    return _build(done, texts, run_name, _describe(retriever))


# ---- calling ------------------------------------------------------------------------------


def _caller(retriever: Any) -> Callable[[str], Any]:
    invoke = getattr(retriever, "invoke", None)
    if callable(invoke):  # LangChain: a Runnable
        return invoke  # type: ignore[no-any-return]
    retrieve = getattr(retriever, "retrieve", None)
    if callable(retrieve):  # LlamaIndex: BaseRetriever, a query engine
        return retrieve  # type: ignore[no-any-return]
    if callable(retriever):
        return retriever  # type: ignore[no-any-return]
    raise ConfigError(f"cannot call a {type(retriever).__name__} as a retriever: give a "
                      "function (query text -> ranked ids), a LlamaIndex retriever "
                      "(.retrieve) or a LangChain retriever (.invoke)")


def _call_all(work: Callable[[str], _Collected], todo: list[str], workers: int,
              finished: Callable[[_Collected], None]) -> None:
    """``work`` on every query, ``finished`` (in this thread) on each result as it comes.

    On the first failure the queries not started are cancelled, the calls under way are let
    finish (their results are kept: ``finished`` sees them) and the failure is raised.
    """
    if workers == 1 or len(todo) <= 1:
        for qid in todo:
            finished(work(qid))
        return
    with ThreadPoolExecutor(max_workers=min(workers, len(todo)),
                            thread_name_prefix="ragreport-collect") as pool:
        futures: list[Future[_Collected]] = [pool.submit(work, q) for q in todo]
        seen: set[int] = set()
        try:
            for fut in as_completed(futures):
                seen.add(id(fut))
                finished(fut.result())
        except BaseException:
            for fut in futures:
                fut.cancel()
            for fut in futures:  # the calls that were under way: keep what they found
                if id(fut) in seen or fut.cancelled():
                    continue
                try:
                    got = fut.result()
                except BaseException:
                    continue
                finished(got)
            raise


# ---- what a retriever returns -------------------------------------------------------------


def _ranking(out: Any, qid: str, id_key: str | None) -> tuple[list[str], list[float] | None]:
    """Ids and scores (None: no score at all) of one query's results, in returned order."""
    if out is None or isinstance(out, (str, bytes)) or not isinstance(out, (Iterable,
                                                                          Mapping)):
        raise RagReportError(f"the retriever returned {_kind(out)} for query {qid!r}; it must "
                             "return a list of results (an empty list for none)")
    if isinstance(out, Mapping):  # {doc_id: score}
        items: list[Any] = list(out.items())
    else:
        if isinstance(out, (set, frozenset)):
            raise RagReportError(f"the retriever returned a {type(out).__name__} for query "
                                 f"{qid!r}, whose order is undefined; return a list, best "
                                 "first")
        items = list(out)
    docs: list[str] = []
    scores: list[float | None] = []
    for pos, item in enumerate(items):
        doc, score = _result(item, qid, pos, id_key)
        docs.append(doc)
        scores.append(score)
    given = [s is not None for s in scores]
    if all(given) and items:
        return docs, [float(s) for s in scores if s is not None]
    if any(given):
        first = given.index(not given[0])
        raise RagReportError(f"query {qid!r}: result {first + 1} has "
                             f"{'a score' if given[first] else 'no score'} and result 1 "
                             f"{'has one' if given[0] else 'has none'}; return scores for "
                             "every result or for none")
    return docs, None


def _result(item: Any, qid: str, pos: int, id_key: str | None) -> tuple[str, float | None]:
    """(doc id, score or None) of one result."""
    where = f"query {qid!r}, result {pos + 1}"
    if isinstance(item, tuple) and len(item) == 2:  # (id or object, score)
        obj, raw = item
        doc, own = _result(obj, qid, pos, id_key) if not _is_id(obj) else (
            _doc_id(obj, where), None)
        return doc, _score(raw, where) if raw is not None else own
    if _is_id(item):
        return _doc_id(item, where), None
    node = getattr(item, "node", None)
    if node is not None and hasattr(item, "score"):  # LlamaIndex NodeWithScore
        raw = item.score
        return _object_id(node, where, id_key), _score(raw, where) if raw is not None else None
    if isinstance(item, Mapping):
        key = id_key or next((f for f in _ID_FIELDS if f in item), None)
        if key is None or key not in item:
            raise RagReportError(f"{where}: no {key or 'id'!r} field (fields: "
                                 f"{_keys(item)}); pass id_key= the field that holds the "
                                 "document id")
        raw = item.get("score")
        return _doc_id(item[key], where), _score(raw, where) if raw is not None else None
    if hasattr(item, "metadata"):  # a LangChain Document, a LlamaIndex node
        return _object_id(item, where, id_key), None
    raise RagReportError(f"{where} is {_kind(item)}; a result is a document id, an (id, "
                         "score) pair, a dict, a LlamaIndex NodeWithScore or a LangChain "
                         "Document")


def _object_id(obj: Any, where: str, id_key: str | None) -> str:
    """A LangChain Document's or LlamaIndex node's document id: ``metadata[id_key]``, else
    its own id (``Document.id``, ``node_id``)."""
    if id_key is not None:
        meta = getattr(obj, "metadata", None)
        if not isinstance(meta, Mapping) or id_key not in meta:
            keys = _keys(meta) if isinstance(meta, Mapping) else "no metadata"
            raise RagReportError(f"{where}: metadata has no key {id_key!r} (its keys: {keys}); "
                                 "pass id_key= the metadata key that holds your document ids")
        return _doc_id(meta[id_key], where + f", metadata[{id_key!r}]")
    own = getattr(obj, "node_id", None) if hasattr(obj, "node_id") else getattr(obj, "id",
                                                                                 None)
    if own is None:
        meta = getattr(obj, "metadata", None)
        keys = _keys(meta) if isinstance(meta, Mapping) else "no metadata"
        raise RagReportError(f"{where}: the {type(obj).__name__} has no id; pass id_key= the "
                             f"metadata key that holds your document ids (its keys: {keys})")
    return _doc_id(own, where)


def _is_id(x: Any) -> bool:
    """A string or an integer (numpy's too: ids from a FAISS index are ``np.int64``)."""
    return isinstance(x, str) or (isinstance(x, numbers.Integral) and not isinstance(x, bool))


def _doc_id(value: Any, where: str) -> str:
    if not _is_id(value):
        raise RagReportError(f"{where}: the document id must be a string or an integer, got "
                             f"{_kind(value)}")
    text = str(value) if isinstance(value, str) else str(int(value))
    if not text.strip():
        raise RagReportError(f"{where}: the document id is empty")
    return text


def _score(value: Any, where: str) -> float:
    from .io.objects import read_number

    try:
        return read_number(value)
    except ValueError as exc:
        raise RagReportError(f"{where}: score {value!r} {exc}") from None


def _kind(x: Any) -> str:
    if x is None:
        return "None"
    text = repr(x)
    return f"a {type(x).__name__} ({text if len(text) <= 60 else text[:50] + '...'})"


def _keys(meta: Mapping[Any, Any]) -> str:
    keys = [str(key) for key in meta]
    if not keys:
        return "none"
    return ", ".join(map(repr, keys[:20])) + (f" and {len(keys) - 20} more" if len(keys) > 20
                                               else "")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().split("\n", 1)[0]
    return text[:200] + "..." if len(text) > 200 else text or "(no message)"


# ---- options ------------------------------------------------------------------------------


def _queries(queries: Any) -> dict[str, str]:
    from .io import load_queries

    if isinstance(queries, Mapping):
        for qid, text in queries.items():
            if not isinstance(text, str):
                raise InputError(f"the text of query {qid!r} must be a string, got "
                                 f"{type(text).__name__}", "queries")
            if not _is_id(qid) or not str(qid).strip():
                raise InputError(f"a query id must be a non-empty string or an integer, got "
                                 f"{qid!r}", "queries")
        texts = {str(q): t for q, t in queries.items()}
        if len(texts) != len(queries):
            raise InputError("two query ids read the same as text (1 and '1'); give each "
                             "query one id", "queries")
    else:
        texts = load_queries(queries)
    if not texts:
        raise InputError("no queries to collect", "queries")
    return texts


def _same_file(a: Path, b: str | os.PathLike[str]) -> bool:
    try:
        return a.exists() and os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _check_k(k: Any) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a whole number >= 1 or None, got {k!r}")
    return k


def _check_workers(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_CONCURRENCY:
        raise ConfigError(f"max_concurrency must be a whole number from 1 to "
                          f"{MAX_CONCURRENCY}, got {n!r}")
    return n


def _run_name(retriever: Any) -> str:
    own = getattr(retriever, "__name__", None)
    if isinstance(own, str) and own.isidentifier():
        return own
    name = type(retriever).__name__
    return name if name.isidentifier() and name != "function" else "run"


def _describe(retriever: Any) -> str:
    return f"collect_run ({type(retriever).__name__})"


def _progress_bar(progress: bool | None, total: int, initial: int, name: str) -> Any:
    if progress is False:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress:
            raise ConfigError("progress=True needs tqdm: pip install tqdm (the extras "
                              "'ragreport[llamaindex]' and 'ragreport[langchain]' include "
                              "it)") from None
        return None
    return tqdm(total=total, initial=initial, unit="query", desc=name, dynamic_ncols=True,
                delay=0.0 if progress else PROGRESS_DELAY)


# ---- the resume file ----------------------------------------------------------------------

# The first line of a resume file starts so; a JSON object follows: the run's identity.
_RESUME_HEADER = "# ragreport resume file "

_IDENTITY = ("run", "k", "id_key")  # the header's keys, in the order written


def _identity(run: str, k: int | None, id_key: str | None) -> dict[str, Any]:
    """What a resume file must state to be resumed by this call: the run's name and the
    settings that change what is collected (the depth ``k``, the id read, ``id_key``)."""
    return {"run": run, "k": k, "id_key": id_key}


def _header(identity: Mapping[str, Any]) -> str:
    """The resume file's first line: a ``#`` comment, which every reader of a run skips."""
    return _RESUME_HEADER + json.dumps(dict(identity), ensure_ascii=True) + "\n"


def _record(got: _Collected, text: str, run: str) -> str:
    """One line of the resume file: a JSONL run record :func:`ragreport.load_run` reads
    (which ignores ``run``: the run's name, checked when the collection is resumed)."""
    retrieved: list[Any] = list(got.docs) if got.scores is None else [
        {"doc_id": d, "score": s} for d, s in zip(got.docs, got.scores, strict=True)]
    rec: dict[str, Any] = {"query_id": got.qid, "query": text, "run": run}
    if got.latency_ms is not None:
        rec["latency_ms"] = got.latency_ms
    rec["retrieved"] = retrieved
    return json.dumps(rec, ensure_ascii=True, allow_nan=False)


def _open_resume(path: Path, header: str | None) -> TextIO:
    """The resume file opened for appending; ``header`` (a new or empty file) written
    first."""
    try:
        if header is not None:
            with open(path, "a", encoding="ascii") as fh:
                fh.write(header)
        return open(path, "a", encoding="ascii")  # closed by collect_run
    except OSError as exc:
        raise InputError(f"cannot write the resume file: {exc.strerror or exc}",
                         str(path)) from None


_ELSE = ("nothing was read or changed: give another resume= path (or delete the file to "
         "collect into it)")


def _refuse(what: str, path: Path, line: int | None = 1) -> InputError:
    return InputError(f"{what}; {_ELSE}", str(path), line)


def _shown(raw: bytes) -> str:
    """A line of an unknown file for a message: decoded, escaped, shortened."""
    text = repr(raw.decode("utf-8", "replace").rstrip("\r"))
    return text if len(text) <= 60 else text[:50] + "...'"


def _check_header(data: bytes, path: Path, expected: Mapping[str, Any]) -> None:
    """Refuse a file whose first line is not the header of this run with these settings."""
    end = data.find(b"\n")
    first = data if end < 0 else data[:end]
    prefix = _RESUME_HEADER.encode("ascii")
    spelled = _header(expected).strip()
    if not first.startswith(prefix):
        found = f"its first line is {_shown(first)}"
        try:
            value = json.loads(first)
        except (ValueError, RecursionError):
            value = None
        else:
            found = ("its first line is a run record, not the header (a run written by "
                     "write_run, or by collect_run before resume files stated their "
                     "settings, records neither the run's name nor its k)"
                     if isinstance(value, dict) and "query_id" in value else
                     "its first line is a JSON value, not the header")
        raise _refuse(f"not a resume file of collect_run: {found}; a resume file starts with "
                      f"the line {spelled!r}", path)
    if end < 0:
        raise _refuse("the resume file's header line is unfinished (no newline): this is not "
                      "a file collect_run finished writing", path)
    try:
        stated = json.loads(first[len(prefix):])
    except (ValueError, RecursionError):
        stated = None
    why = _header_problem(stated)
    if why or not isinstance(stated, dict):
        raise _refuse(f"the resume file's header is not one collect_run writes ({why}): "
                      f"expected {spelled!r}", path)
    if stated["run"] != expected["run"]:
        raise _refuse(f"this resume file holds the run {stated['run']!r:.60}, not "
                      f"{expected['run']!r}: resuming would take its rankings as this "
                      "retriever's; use one resume file per run (name= the run it holds to "
                      "resume that one)", path)
    for key in _IDENTITY[1:]:
        if stated[key] != expected[key]:
            mixed = "two depths" if key == "k" else "two kinds of document id"
            raise _refuse(f"this resume file was collected with {_setting(key, stated[key])}, "
                          f"not {_setting(key, expected[key])}: resuming would mix {mixed} in "
                          f"one run; call with {key}={stated[key]!r} to resume it", path)


def _setting(key: str, value: Any) -> str:
    return f"{key}={value!r:.60}" + (" (every result)" if key == "k" and value is None else "")


def _header_problem(stated: Any) -> str:
    """Why a header's JSON is not one collect_run writes ("" when it is)."""
    if not isinstance(stated, dict):
        return "not a JSON object"
    unknown = [key for key in stated if key not in _IDENTITY]
    if unknown:
        return f"unknown setting {unknown[0]!r:.60}"
    missing = [key for key in _IDENTITY if key not in stated]
    if missing:
        return f"no {missing[0]!r}"
    run, k, id_key = (stated[key] for key in _IDENTITY)
    if not isinstance(run, str) or not run.strip():
        return "the run is not a non-empty string"
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        return f"k is {k!r:.60}, not a whole number >= 1 or null"
    if id_key is not None and (not isinstance(id_key, str) or not id_key):
        return f"id_key is {id_key!r:.60}, not a non-empty string or null"
    return ""


def _read_resume(path: Path, texts: Mapping[str, str], k: int | None, id_key: str | None,
                 run: str) -> tuple[dict[str, _Collected], bool]:
    """The queries a resume file already holds (those of ``texts``), and whether the file
    is new (missing or empty: the header is still to be written).

    Everything is checked before anything is changed: the first line must be the header of
    ``run`` with these ``k`` and ``id_key``, and every complete line a record of this run
    (texts as in ``texts``, at most ``k`` results). Only then is an unfinished last line (no
    newline: the write was cut short) removed from the file.
    """
    from .io.objects import from_jsonl

    if path.is_dir():
        raise InputError("resume= names a directory, not a resume file; give another "
                         "resume= path (a file, created if missing)", str(path))
    identity = _identity(run, k, id_key)
    try:
        with open(path, "rb") as fh:
            # the header first: a mistyped path to a big file is refused without reading it
            data = fh.read(max(65536, 4 * len(_header(identity))))
            if data:
                _check_header(data, path, identity)
                data += fh.read()
    except FileNotFoundError:
        return {}, True
    except OSError as exc:
        raise InputError(f"cannot read the resume file: {exc.strerror or exc}",
                         str(path)) from None
    if not data:
        return {}, True
    complete = data.rfind(b"\n") + 1
    body = data[:complete]
    try:  # as load_run reads it (the header is a comment); errors name the line
        cols = from_jsonl(body, "run", str(path))
    except InputError as exc:
        raise InputError(f"{exc.reason}; the file is unchanged: repair that line, or give "
                         "another resume= path", exc.source, exc.line, row=exc.row) from None
    unscored: set[str] = set()
    for no, raw in enumerate(body.split(b"\n"), start=1):
        if not raw.strip() or raw.lstrip().startswith(b"#"):
            continue
        rec = json.loads(raw)
        if not isinstance(rec, dict) or "query_id" not in rec:
            raise _refuse("not a line of a resume file (a record with query_id, query, "
                          "latency_ms and retrieved)", path, no)
        qid = str(rec["query_id"])
        if "run" in rec and rec["run"] != run:
            raise _refuse(f"this line was collected for the run {rec['run']!r:.60}, not "
                          f"{run!r} (the header's): resuming would take its rankings as this "
                          "retriever's", path, no)
        if qid in texts and rec.get("query") != texts[qid]:
            raise _refuse(f"query {qid!r} was collected with another text "
                          f"({_kind(rec.get('query'))}); a resume file is for one set of "
                          "queries", path, no)
        got = rec.get("retrieved")
        if k is not None and isinstance(got, (list, dict)) and len(got) > k:
            raise _refuse(f"query {qid!r} has {len(got)} results, more than the k={k} the "
                          "header states: this is not a file collect_run wrote", path, no)
        if isinstance(got, list) and any(not isinstance(x, dict) or "score" not in x
                                         for x in got):
            unscored.add(qid)
    if complete < len(data):  # proven this run's file: cut the unfinished last line
        try:
            with open(path, "r+b") as fh:
                fh.truncate(complete)
        except OSError as exc:
            raise InputError(f"cannot remove the unfinished last line of the resume file: "
                             f"{exc.strerror or exc}", str(path)) from None
    rows: dict[str, list[int]] = {q: [] for q in cols.empty}
    for i, q in enumerate(cols.qids):
        rows.setdefault(q, []).append(i)
    out: dict[str, _Collected] = {}
    for q, idx in rows.items():
        if q not in texts:
            continue
        out[q] = _Collected(q, [cols.docs[i] for i in idx],
                            None if q in unscored else [cols.values[i] for i in idx],
                            cols.latency_ms.get(q))
    return out, False


# ---- the run ------------------------------------------------------------------------------


def _build(done: Mapping[str, _Collected], texts: Mapping[str, str], name: str,
           source: str) -> Run:
    import numpy as np
    import pyarrow as pa

    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    empty: list[str] = []
    latency: dict[str, float] = {}
    has_scores = True
    for q in texts:
        got = done[q]
        if got.latency_ms is not None:
            latency[q] = got.latency_ms
        n = len(got.docs)
        if n == 0:
            empty.append(q)
            continue
        qids += [q] * n
        docs += got.docs
        if got.scores is None:
            has_scores = False
            scores += [float(n - i) for i in range(n)]
        else:
            scores += got.scores
    if not all(math.isfinite(s) for s in scores):  # read_number refused them: never here
        raise RagReportError("a score is not finite")
    return Run(pa.array(qids, pa.string()), pa.array(docs, pa.string()), source, None,
               np.asarray(scores, dtype=np.float64), name, has_scores, dict(texts),
               tuple(empty), latency)


# ---- writing a run ------------------------------------------------------------------------


def write_run(run: Run, path: str | os.PathLike[str], *, format: str = "jsonl") -> Path:
    """Write a run to a file that :func:`ragreport.load_run` reads back.

    Parameters
    ----------
    run : Run
        Any run (:func:`collect_run`'s, :func:`ragreport.load_run`'s).
    path : path
        The file; written atomically (a temporary file renamed over it); ``-`` is standard
        output.
    format : {"jsonl", "trec"}
        ``"jsonl"``: one record per query (``query_id``, ``query`` when known,
        ``latency_ms`` when known, ``retrieved`` as ``{doc_id, score}`` objects, or as ids
        when the run has no scores), which keeps everything: read back, the run has the same
        rows, scores, texts, empty result lists and latency. ``"trec"``: trec_eval's run
        format (``qid Q0 docid rank score tag``, the run's name as the tag, scores written
        to round-trip exactly); it has no place for latency, query texts or a query with an
        empty result list, which are not written.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    ConfigError
        An unknown format, or (TREC) a run name, query id or document id with white space,
        which a TREC line cannot hold (nothing is written).
    RagReportError
        The file cannot be written (nothing is replaced).

    Examples
    --------
    >>> import tempfile, pathlib, ragreport
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> run = ragreport.load_run([{"query_id": "q1", "retrieved": {"a": 2.5, "b": 0.5},
    ...                            "latency_ms": 12.0}], name="bm25")
    >>> print(write_run(run, d / "run.txt", format="trec").read_text(), end="")
    q1 Q0 a 1 2.5 bm25
    q1 Q0 b 2 0.5 bm25
    >>> ragreport.load_run(write_run(run, d / "run.jsonl")).latency_ms
    {'q1': 12.0}
    """
    from .fileio import write_outputs

    if format not in ("jsonl", "trec"):
        raise ConfigError(f"format must be 'jsonl' or 'trec', got {format!r}")
    if not isinstance(run, Run):
        raise ConfigError(f"write_run needs a Run, got {type(run).__name__}")
    qids = run.query_ids.to_pylist()
    docs = run.doc_ids.to_pylist()
    scores = run.scores.tolist()
    rows: dict[str, list[int]] = {}
    for i, q in enumerate(qids):
        rows.setdefault(q, []).append(i)
    lines: list[str] = []
    if format == "trec":
        tag = run.name
        if not tag or any(c.isspace() for c in tag):
            raise ConfigError(f"the run name {tag!r} cannot be a TREC tag (it has white space "
                              "or is empty); rename the run (run.renamed('name'))")
        for q, idx in rows.items():
            for ident, what in ((q, "query"), *((docs[i], "document") for i in idx)):
                if any(c.isspace() for c in ident):
                    where = f" of query {q!r}" if what == "document" else ""
                    raise ConfigError(f"the {what} id {ident!r}{where} has white space, which "
                                      "a TREC line cannot hold (it would be read as other "
                                      "fields); write format='jsonl'")
            lines += [f"{q} Q0 {docs[i]} {r} {scores[i]!r} {tag}\n"
                      for r, i in enumerate(idx, start=1)]
    else:
        for q in run.empty_queries:
            rows.setdefault(q, [])
        order = [q for q in run.query_texts if q in rows] if set(rows) <= set(
            run.query_texts) else list(rows)
        for q in order:
            idx = rows[q]
            rec: dict[str, Any] = {"query_id": q}
            if q in run.query_texts:
                rec["query"] = run.query_texts[q]
            if q in run.latency_ms:
                rec["latency_ms"] = run.latency_ms[q]
            ranks = [scores[i] for i in idx] == [float(len(idx) - j) for j in range(len(idx))]
            rec["retrieved"] = [docs[i] for i in idx] if not run.has_scores and ranks else [
                {"doc_id": docs[i], "score": scores[i]} for i in idx]
            lines.append(json.dumps(rec, ensure_ascii=True, allow_nan=False) + "\n")
    write_outputs([(path, "".join(lines))])
    return Path(os.fspath(path))
