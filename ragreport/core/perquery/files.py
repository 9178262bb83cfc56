"""Per-query files: recognising them, listing the shards, reading them."""

from __future__ import annotations

import glob as _glob
import json
import os
from collections.abc import Sequence
from pathlib import Path

from ...errors import InputError
from ..result import EvaluationResult
from .read import from_tables
from .schema import KEY, SCHEMA_NAME

__all__ = ["is_per_query", "read", "shard_files"]


# ---- files ----------------------------------------------------------------------------------
def is_per_query(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a Parquet file holding a ragreport per-query table (its schema
    metadata names :data:`SCHEMA_NAME`); False for anything else, never an error."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        with open(p, "rb") as f:
            head = f.read(4)
        if head != b"PAR1":
            return False
        import pyarrow.parquet as pq

        meta = pq.read_schema(p).metadata or {}
    except (OSError, ValueError, ImportError):
        return False
    return meta.get((KEY + "schema").encode()) == json.dumps(SCHEMA_NAME).encode()


def shard_files(spec: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The Parquet files ``spec`` names: files as given, every ``*.parquet`` under a
    directory (recursively, in name order; hidden and ``_``-prefixed entries such as Spark's
    ``_SUCCESS`` left out), the files a glob pattern matches (and those of the directories it
    matches, as for a directory); each once.

    Raises
    ------
    InputError
        Nothing given, a missing path, a directory without Parquet files, a pattern that
        matches nothing.
    """
    items = [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
    if not items:
        raise InputError("no per-query file given")

    def in_dir(p: Path) -> list[Path]:
        return sorted(q for q in p.rglob("*.parquet") if q.is_file()
                      and not any(part.startswith((".", "_")) for part in
                                  q.relative_to(p).parts))

    out: list[Path] = []
    for item in items:
        text = os.fspath(item)
        p = Path(text)
        if p.is_dir():
            found = in_dir(p)
            if not found:
                raise InputError("directory holds no .parquet file", text)
            out += found
        elif p.exists():
            out.append(p)
        elif any(ch in text for ch in "*?["):
            # the files it matches, and those of the directories it matches (Spark writes
            # df.write.parquet("bm25.parquet") as a directory of that name)
            found = [f for x in sorted(_glob.glob(text, recursive=True))
                     for f in ([Path(x)] if Path(x).is_file() else
                               in_dir(Path(x)) if Path(x).is_dir() else [])]
            if not found:
                raise InputError("the pattern matches no file", text)
            out += found
        else:
            raise InputError("no such file or directory", text)
    uniq = list(dict.fromkeys(q.resolve() for q in out))
    return uniq


def read(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
         ) -> list[EvaluationResult]:
    """Read per-query Parquet files (files, directories of shards, glob patterns) and merge
    them (:func:`from_tables`): one :class:`EvaluationResult` per run.

    Raises
    ------
    InputError
        A missing file, an empty directory, a pattern matching nothing, a file that is not
        Parquet or not a per-query table, or shards that do not merge (one line each).
    """
    import pyarrow.parquet as pq

    from ...fileio import shown_path

    files = shard_files(paths)
    tables = []
    for f in files:
        try:
            tables.append(pq.read_table(f))
        except (OSError, ValueError) as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise InputError(f"not a readable Parquet file ({msg})", shown_path(f)) from None
    return from_tables(tables, [shown_path(f) for f in files])
