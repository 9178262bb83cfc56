"""Per-query results as Arrow tables and Parquet shards, mergeable back into results: the
public names of :mod:`ragreport.core.perquery` (``from ragreport import perquery``)."""

from __future__ import annotations

from .core.perquery import (
    SCHEMA_NAME,
    SCHEMA_VERSION,
    from_tables,
    is_per_query,
    read,
    to_table,
    write,
)

__all__ = ["SCHEMA_NAME", "SCHEMA_VERSION", "from_tables", "is_per_query", "read", "to_table",
           "write"]
