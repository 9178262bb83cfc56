"""Why a query scores low: moved to :mod:`ragreport.analysis.failures` (re-exported here)."""

from __future__ import annotations

from .analysis.failures import FAILURE_KINDS, NO_RELEVANT_RANK, failure_kinds, first_relevant_rank

__all__ = ["FAILURE_KINDS", "NO_RELEVANT_RANK", "failure_kinds", "first_relevant_rank"]
