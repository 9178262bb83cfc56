"""The per-query tables' schema: its name, version, fixed columns and measure records."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from ...errors import InputError
from ...measures import Measure

__all__ = ["EXAMPLES", "FIXED", "JUDGED", "KEY", "SCHEMA_NAME", "SCHEMA_VERSION", "measure_dict",
           "measure_from"]


#: The schema's name, in the metadata key ``ragreport.schema``.
SCHEMA_NAME = "ragreport.per_query"
#: The schema's version, in ``ragreport.version``; a newer one is refused when read.
SCHEMA_VERSION = 1

KEY = "ragreport."
FIXED = ("run", "query_id", "retrieved", "relevant", "judged", "relevant_ranks",
          "judged_ranks")
EXAMPLES = 10  # run-only / qrels-only ids kept per run (the report shows 10)
JUDGED = Measure("Judged")




def measure_dict(m: Measure) -> dict[str, Any]:
    return {f.name: getattr(m, f.name) for f in fields(m)}


def measure_from(d: Any, source: str) -> Measure:
    if not isinstance(d, dict):
        raise InputError("ragreport.columns: a measure must be a JSON object", source)
    try:
        return Measure(**d)
    except (TypeError, ValueError) as e:
        raise InputError(f"ragreport.columns: bad measure {d!r} ({e})", source) from None
