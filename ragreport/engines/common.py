"""What the three engines share on the driver: importing the engine, the input columns, the
per-query metadata as key-value strings, and turning the partitions' results into one
evaluation."""

from __future__ import annotations

import importlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.evaluated import NOTHING_LEFT
from ..errors import InputError, RagReportError

__all__ = ["META_COLUMN", "columns_for", "finish", "meta_strings", "missing_column", "need"]

#: The column of a partition's output that carries its metadata (on one extra row).
META_COLUMN = "_ragreport_meta"

def need(module: str, engine: str, package: str) -> Any:
    """The engine's ``module``, imported now (never at ``import ragreport``); missing, one
    line naming the extra: ``ragreport.<engine> needs <package>: pip install
    'ragreport[<engine>]'``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise RagReportError(f"ragreport.{engine} needs {package}: "
                             f"pip install 'ragreport[{engine}]'") from None


_DEFAULTS = {"qrels": ("query_id", "doc_id", "relevance"), "run": ("query_id", "doc_id", "score")}


def columns_for(kind: str, columns: Any) -> tuple[str, str, str]:
    """(query id, document id, grade or score) column names of the qrels or the run:
    ``query_id``, ``doc_id``, ``relevance`` / ``score`` unless ``columns=`` names others
    (keys as for the table readers: ``qid``, ``docid``, ``relevance``, ``score``).

    >>> columns_for("run", {"qid": "q", "docid": "d"})
    ('q', 'd', 'score')
    >>> columns_for("qrels", "qid=topic,rel=label")
    ('topic', 'doc_id', 'label')
    """
    from ..io.tabular import parse_columns

    given = parse_columns(columns) or {}
    q, d, v = _DEFAULTS[kind]
    value_key = "relevance" if kind == "qrels" else "score"
    return given.get("qid", q), given.get("docid", d), given.get(value_key, v)


def missing_column(kind: str, what: str, column: str, names: Sequence[str], engine: str,
                   key: str) -> InputError:
    shown = ", ".join(repr(n) for n in names[:30]) or "none"
    return InputError(f"{engine} has no {what} column {column!r} (its columns: {shown}); name "
                      f"it with columns={{'{key}': NAME}}", f"{kind} ({engine})")


def bad_id_type(kind: str, what: str, column: str, type_name: str, engine: str) -> InputError:
    """The table readers' message for an id column of another type than text or integers."""
    return InputError(f"{what} column {column!r} holds {type_name} values; ids must be text "
                      "or integers", f"{kind} ({engine})")


def meta_strings(meta: Mapping[str, Any]) -> dict[str, str]:
    """The metadata as :mod:`ragreport.core.perquery` stores it: ``ragreport.<key>`` -> JSON."""
    return {f"ragreport.{k}": json.dumps(v, sort_keys=True, allow_nan=False)
            for k, v in meta.items()}


def finish(metas: Sequence[Mapping[str, Any]], engine: str) -> dict[str, Any]:
    """The metadata of the whole evaluation from those of the partitions; the error
    :func:`ragreport.evaluate` raises when no query is evaluated."""
    from ._shard import merge

    if not metas:
        raise InputError(f"no judgments and no retrieved documents found ({engine})")
    merged = merge(metas, uuid.uuid4().hex)
    (_name, run_meta), = merged["runs"].items()
    counts = run_meta["counts"]
    if not counts["evaluated"]:
        if counts["skipped_no_relevant"]:
            raise InputError(NOTHING_LEFT)
        r_ex = ", ".join(map(repr, run_meta["run_only_ids"][:3])) or "none"
        q_ex = ", ".join(map(repr, run_meta["qrels_only_ids"][:3])) or "none"
        raise InputError(f"the run (run ({engine})) and the qrels (qrels ({engine})) have no "
                         f"query in common (run has {r_ex}...; qrels have {q_ex}...)")
    return merged
