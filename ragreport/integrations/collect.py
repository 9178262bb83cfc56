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
import os
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, TextIO, TypeVar

from ..data import Run
from ..errors import ConfigError, InputError, RagReportError
from .resume import header_line, open_resume, read_resume, record_line, run_identity
from .retrieved import Collected, first_line, is_id, ranking

__all__ = ["MAX_CONCURRENCY", "PROGRESS_DELAY", "call_all", "call_and_record", "check_workers",
           "collect_run", "progress_bar", "write_run"]

T = TypeVar("T")

#: The most threads :func:`collect_run` runs at once.
MAX_CONCURRENCY = 256

#: With ``progress=None`` the bar appears once a collection has run this many seconds.
PROGRESS_DELAY = 2.0

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
    workers = check_workers(max_concurrency)
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
    done: dict[str, Collected] = {}
    new = False  # a missing or empty resume file: its header is written first
    if path is not None:
        done, new = read_resume(path, texts, k, id_key, run_name)
    todo = [q for q in texts if q not in done]

    def work(qid: str) -> Collected:
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
                f"{first_line(exc)}; fix the retriever or leave that query out ({keep}; "
                "the retriever's exception is chained as __cause__)") from exc
        ms = (time.perf_counter() - start) * 1000.0
        docs, scores = ranking(out, qid, id_key)
        if k is not None:
            docs = docs[:k]
            scores = scores[:k] if scores is not None else None
        return Collected(qid, docs, scores, ms)

    header = header_line(run_identity(run_name, k, id_key)) if new else None
    out = open_resume(path, header) if path is not None and todo else None

    def keep(got: Collected) -> str:
        done[got.qid] = got
        return record_line(got, texts[got.qid], run_name)

    call_and_record(work, todo, workers, keep, out, path,
                    lambda: progress_bar(progress, len(texts), len(done), run_name)
                    if todo else None)
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


def call_and_record(work: Callable[[Any], T], todo: list[Any], workers: int,
                    keep: Callable[[T], str], out: TextIO | None,
                    path: str | os.PathLike[str] | None, make_bar: Callable[[], Any]) -> None:
    """:func:`call_all`, each result kept by ``keep`` (in this thread), which returns its
    line of the resume file: appended to ``out`` and flushed as it comes, the progress bar
    (``make_bar()``, None for none) advanced; ``out`` and the bar closed in the end, also
    on a failure. A line that cannot be written is an InputError naming ``path``."""
    bar = None
    try:
        bar = make_bar()

        def finished(got: T) -> None:
            line = keep(got)
            if out is not None:
                try:
                    out.write(line + "\n")
                    out.flush()
                except OSError as exc:
                    raise InputError(f"cannot write the resume file: {exc.strerror or exc}",
                                     str(path)) from None
            if bar is not None:
                bar.update(1)

        call_all(work, todo, workers, finished)
    finally:
        if out is not None:
            out.close()
        if bar is not None:
            bar.close()


def call_all(work: Callable[[Any], T], todo: list[Any], workers: int,
             finished: Callable[[T], None]) -> None:
    """``work`` on every item (a query), ``finished`` (in this thread) on each result as it
    comes.

    On the first failure the queries not started are cancelled, the calls under way are let
    finish (their results are kept: ``finished`` sees them) and the failure is raised.
    """
    if workers == 1 or len(todo) <= 1:
        for qid in todo:
            finished(work(qid))
        return
    with ThreadPoolExecutor(max_workers=min(workers, len(todo)),
                            thread_name_prefix="ragreport-collect") as pool:
        futures: list[Future[T]] = [pool.submit(work, q) for q in todo]
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


# ---- options ------------------------------------------------------------------------------


def _queries(queries: Any) -> dict[str, str]:
    from ..io import load_queries

    if isinstance(queries, Mapping):
        for qid, text in queries.items():
            if not isinstance(text, str):
                raise InputError(f"the text of query {qid!r} must be a string, got "
                                 f"{type(text).__name__}", "queries")
            if not is_id(qid) or not str(qid).strip():
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


def check_workers(n: Any) -> int:
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


def progress_bar(progress: bool | None, total: int, initial: int, name: str,
                 unit: str = "query") -> Any:
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
    return tqdm(total=total, initial=initial, unit=unit, desc=name, dynamic_ncols=True,
                delay=0.0 if progress else PROGRESS_DELAY)


# ---- the run ------------------------------------------------------------------------------


def _build(done: Mapping[str, Collected], texts: Mapping[str, str], name: str,
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
    from ..fileio import write_outputs

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
