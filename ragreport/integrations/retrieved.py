"""What a retriever returns, read into one query's ranking (:class:`Collected`): ids and
scores from lists of ids, ``(id, score)`` pairs, dicts, LangChain ``Document``\\ s, LlamaIndex
nodes or a ``{doc_id: score}`` map (:mod:`ragreport.integrations.collect`)."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RagReportError

__all__ = ["Collected", "first_line", "is_id", "kind", "ranking"]

_ID_FIELDS = ("doc_id", "id", "_id", "docid", "corpus-id", "corpus_id")


@dataclass(frozen=True)
class Collected:
    """One query's ranking as the retriever returned it (cut at ``k``)."""

    qid: str
    docs: list[str]
    scores: list[float] | None  # None: the retriever gave no score
    latency_ms: float | None


def ranking(out: Any, qid: str, id_key: str | None) -> tuple[list[str], list[float] | None]:
    """Ids and scores (None: no score at all) of one query's results, in returned order."""
    if out is None or isinstance(out, (str, bytes)) or not isinstance(out, (Iterable,
                                                                          Mapping)):
        raise RagReportError(f"the retriever returned {kind(out)} for query {qid!r}; it must "
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
        doc, own = _result(obj, qid, pos, id_key) if not is_id(obj) else (
            _doc_id(obj, where), None)
        return doc, _score(raw, where) if raw is not None else own
    if is_id(item):
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
    raise RagReportError(f"{where} is {kind(item)}; a result is a document id, an (id, "
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


def is_id(x: Any) -> bool:
    """A string or an integer (numpy's too: ids from a FAISS index are ``np.int64``)."""
    return isinstance(x, str) or (isinstance(x, numbers.Integral) and not isinstance(x, bool))


def _doc_id(value: Any, where: str) -> str:
    if not is_id(value):
        raise RagReportError(f"{where}: the document id must be a string or an integer, got "
                             f"{kind(value)}")
    text = str(value) if isinstance(value, str) else str(int(value))
    if not text.strip():
        raise RagReportError(f"{where}: the document id is empty")
    return text


def _score(value: Any, where: str) -> float:
    from ..io.objects import read_number

    try:
        return read_number(value)
    except ValueError as exc:
        raise RagReportError(f"{where}: score {value!r} {exc}") from None


def kind(x: Any) -> str:
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


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().split("\n", 1)[0]
    return text[:200] + "..." if len(text) > 200 else text or "(no message)"
