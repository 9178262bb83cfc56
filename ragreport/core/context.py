"""The arrays measures share, computed once per ranking: relevant ranks, gains, ideal gains.

A :class:`Context` is what every computing form of the measure registry
(:mod:`ragreport.core.kernel`) receives: the sparse (query, rank) forms of the whole ranking (any
cutoff) and their dense (queries, width) forms for the curves, each derived when first asked
for and kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import metrics
from ..errors import MeasureError
from ..measures import Measure
from ..metrics import BoolArray, FloatArray, IntArray
from .ranking import Ranking

__all__ = ["CURVE_CELLS", "DEFAULT_K_MAX", "Context", "GainRanks", "Ranks", "rbp_persistence"]

#: Curves are at least this wide (or ``k_max``, when smaller).
DEFAULT_K_MAX = 20
#: Curves may always be this wide (cells = queries x width, at most about 8 MB each).
CURVE_CELLS = 1 << 20


def rbp_persistence(m: Measure) -> float:
    """RBP's persistence ``p``: the measure's, else 0.8 (ir_measures' default)."""
    return 0.8 if m.p is None else m.p


Ranks = tuple[IntArray, IntArray]
GainRanks = tuple[IntArray, IntArray, FloatArray]


@dataclass
class Context:
    """Caches the arrays measures share: sparse relevant ranks and gains (whole rankings,
    any cutoff) and their dense (queries, width) forms for the curves."""

    ranking: Ranking
    rel_level: float
    width: int = DEFAULT_K_MAX
    _ranks: dict[float, Ranks] = field(default_factory=dict)
    _rel: dict[float, BoolArray] = field(default_factory=dict)
    _nrel: dict[float, IntArray] = field(default_factory=dict)
    _gain_ranks: dict[str, GainRanks] = field(default_factory=dict)
    _ideal_ranks: dict[str, GainRanks] = field(default_factory=dict)
    _gains: dict[str, FloatArray] = field(default_factory=dict)
    _ideal: dict[tuple[str, int | None], FloatArray] = field(default_factory=dict)
    _nnonrel: dict[float, IntArray] = field(default_factory=dict)
    _judged: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.ranking.n_queries

    def n_rel_ret(self, m: Measure) -> FloatArray:
        """Relevant documents retrieved per query (the whole ranking)."""
        return metrics.hits_at(self.n, *self.ranks(m), None)

    def n_nonrel(self, m: Measure) -> IntArray:
        """Judged non-relevant documents per query: 0 <= grade < the relevance level
        (trec_eval's count for bpref; negative grades are in neither count)."""
        lv = self.level(m)
        if lv not in self._nnonrel:
            rk = self.ranking
            qidx = np.repeat(np.arange(self.n), np.diff(rk.qrels_offsets))
            w = (rk.qrels_grades >= 0) & (rk.qrels_grades < lv)
            self._nnonrel[lv] = np.bincount(qidx, weights=w.astype(np.float64),
                                            minlength=self.n).astype(np.int64)
        return self._nnonrel[lv]

    def judged_ranks(self) -> Ranks:
        """(query, 0-based rank) of every retrieved document that has a judgment (any
        grade, negative ones too), by query then rank."""
        if "ranks" not in self._judged:
            self._judged["ranks"] = self.ranking.judged_ranks()
        ranks: Ranks = self._judged["ranks"]
        return ranks

    def judged(self) -> BoolArray:
        """(queries, width) bool: does the document at each rank have a judgment."""
        if "dense" not in self._judged:
            qi, pos = self.judged_ranks()
            out = np.zeros((self.n, max(self.width, 1)), dtype=bool)
            keep = pos < out.shape[1]
            out[qi[keep], pos[keep]] = True
            self._judged["dense"] = out
        dense: BoolArray = self._judged["dense"]
        return dense

    def check_err(self) -> None:
        """ERR is gdeval's: refuse a judged grade above 4, as gdeval does (its stopping
        probability (2^g - 1) / 2^4 would exceed 1)."""
        grades = self.ranking.qrels_grades
        with np.errstate(invalid="ignore"):
            over = np.flatnonzero(grades > metrics.ERR_MAX_GRADE)
        if len(over):
            q = int(np.searchsorted(self.ranking.qrels_offsets, over[0], side="right") - 1)
            qid = self.ranking.query_ids[q]
            shown = qid if len(qid) <= 40 else qid[:39] + "…"
            raise MeasureError(
                f"ERR is computed as gdeval computes it (ir_measures' ERR): stopping "
                f"probability (2^grade - 1) / 2^{metrics.ERR_MAX_GRADE}, for grades up to "
                f"{metrics.ERR_MAX_GRADE}; query {shown!r} has a judgment of grade "
                f"{float(grades[over[0]]):g} ({len(over)} judgments above "
                f"{metrics.ERR_MAX_GRADE})")

    def err_terms(self) -> GainRanks:
        """(query, 0-based rank, ERR term) of every retrieved document of positive grade."""
        if "err" not in self._judged:
            self.check_err()
            qi, pos, g = self.gain_ranks(Measure("ERR"))  # linear gains: the grades
            self._judged["err"] = (qi, pos, metrics.err_terms(self.n, qi, pos, g))
        terms: GainRanks = self._judged["err"]
        return terms

    def err_grades(self) -> FloatArray:
        """(queries, width) positive grades by rank (0 elsewhere), for the ERR curve."""
        self.check_err()
        return self.gains(Measure("ERR"))

    def level(self, m: Measure) -> float:
        return float(m.rel) if m.rel is not None else self.rel_level

    def ranks(self, m: Measure) -> Ranks:
        lv = self.level(m)
        if lv not in self._ranks:
            self._ranks[lv] = self.ranking.relevant_ranks(lv)
        return self._ranks[lv]

    def rel(self, m: Measure) -> BoolArray:
        lv = self.level(m)
        if lv not in self._rel:
            self._rel[lv] = self.ranking.relevance(lv, self.width)
        return self._rel[lv]

    def n_rel(self, m: Measure) -> IntArray:
        lv = self.level(m)
        if lv not in self._nrel:
            self._nrel[lv] = self.ranking.n_relevant(lv)
        return self._nrel[lv]

    def gain_ranks(self, m: Measure) -> GainRanks:
        if m.gain not in self._gain_ranks:
            self._gain_ranks[m.gain] = self.ranking.gain_ranks(m.gain)
        return self._gain_ranks[m.gain]

    def ideal_ranks(self, m: Measure) -> GainRanks:
        if m.gain not in self._ideal_ranks:
            self._ideal_ranks[m.gain] = self.ranking.ideal_ranks(m.gain)
        return self._ideal_ranks[m.gain]

    def gains(self, m: Measure) -> FloatArray:
        if m.gain not in self._gains:
            self._gains[m.gain] = self.ranking.gains(m.gain, self.width)
        return self._gains[m.gain]

    def ideal(self, m: Measure, k: int | None) -> FloatArray:
        key = (m.gain, k)
        if key not in self._ideal:
            self._ideal[key] = self.ranking.ideal(m.gain, k)
        return self._ideal[key]
