"""Measures as hashable value objects, their registry, and the name parser.

A :class:`Measure` is a family (``P``, ``R``, ``nDCG`` ...), an optional cutoff and optional
parameters. Its canonical string round-trips through :func:`parse_measure`::

    >>> from ragreport.measures import parse_measure
    >>> m = parse_measure("ndcg@10")
    >>> m, str(m)
    (Measure('nDCG@10'), 'nDCG@10')
    >>> parse_measure(str(m)) == m
    True
    >>> str(parse_measure("P(rel=2)@5"))
    'P(rel=2)@5'
    >>> [str(m) for m in parse_measures("P.5,10")]
    ['P@5', 'P@10']

Every peer's spelling is read with that peer's meaning (trec_eval, ir_measures, ranx,
MTEB/BEIR, LlamaIndex; the README's measure table lists them), or refused: a bare trec_eval
name that takes cutoffs (``P``, ``ndcg_cut``, ``map_cut``, ``success``) means trec_eval's
default cutoffs, as ``trec_eval -m`` and ir_measures' ``parse_trec_measure`` read it; ranx's
``hits@k`` is the number of relevant documents in the top k (:data:`FAMILIES` ``Hits``), not
the hit rate, and its bare ``precision`` is the precision of the whole ranking (``SetP``);
ir_measures' ``NumRet(rel=1)`` is ``NumRelRet(rel=1)``. A name that the peers read differently
(bare ``recall``: trec_eval's ten cutoffs, ranx's whole ranking) is refused with a message
naming the readings, and so is a peer's measure ragreport does not compute (``infAP``). A
cutoff is a whole number from 1 to 2**53.

    >>> parse_measure("NumRet(rel=1)"), parse_measure("ndcg_burges@10")
    (Measure('NumRelRet(rel=1)'), Measure('nDCG(gain=exp)@10'))
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import MeasureError

__all__ = [
    "DEFAULT_MEASURES",
    "FAMILIES",
    "MAX_CUTOFF",
    "TREC_DEFAULT_CUTOFFS",
    "TREC_DEFAULT_MEASURES",
    "TREC_IPREC_LEVELS",
    "Family",
    "Measure",
    "parse_family",
    "parse_measure",
    "parse_measures",
]


@dataclass(frozen=True)
class Family:
    """Static description of a measure family (one registry entry).

    Attributes
    ----------
    name : str
        Canonical name (``"nDCG"``).
    title : str
        Human name shown in reports.
    cutoff : str
        ``"required"``, ``"optional"`` or ``"none"``.
    params : tuple of str
        Parameters the family accepts (``"rel"``, ``"gain"``).
    trec_name : str
        trec_eval's name; ``{k}`` stands for the cutoff.
    trec_uncut : str or None
        trec_eval's name without a cutoff, if any.
    bounded : bool
        True when every value lies in [0, 1] (counts do not).
    definition : str
        One-line formula for the README and reports.
    aggregate : str
        How per-query values become one number in trec_eval's layout: ``"mean"`` (every
        measure, counts such as ``Hits@K`` included, as ranx averages them) or ``"sum"``
        (trec_eval's ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``).
    at : str
        What follows ``@``: ``"cutoff"`` (K, every family but one) or ``"recall"`` (a recall
        level in [0, 1]: ``IPrec@0.5``, stored in :attr:`Measure.recall`; ``trec_name`` then
        holds ``{r}``).
    counts : bool
        Every per-query value is a whole number (a count of documents or queries), except as
        an expected value over tie orders.
    health : bool
        Describes the judgments rather than the retriever (Judged): a health check, not a
        quality curve to explore.
    trec_per_query : bool
        trec_eval prints it on each query's lines too (``-q``); False for ``num_q``, which
        it prints in the ``all`` block only.
    """

    name: str
    title: str
    cutoff: str
    params: tuple[str, ...]
    trec_name: str
    trec_uncut: str | None
    bounded: bool
    definition: str
    aggregate: str = "mean"
    at: str = "cutoff"
    counts: bool = False
    health: bool = False
    trec_per_query: bool = True


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("P", "Precision", "required", ("rel",), "P_{k}", None, True,
               "relevant in top K / K (K even when fewer were retrieved)"),
        Family("R", "Recall", "required", ("rel",), "recall_{k}", None, True,
               "relevant in top K / relevant judged for the query"),
        Family("F1", "F1", "required", ("rel",), "F1_{k}", None, True,
               "2·P@K·R@K / (P@K + R@K), 0 when both are 0"),
        Family("HitRate", "Hit rate", "required", ("rel",), "success_{k}", None, True,
               "1 if any relevant document is in the top K, else 0"),
        Family("Hits", "Hits", "optional", ("rel",), "hits_{k}", "hits", False,
               "number of relevant documents in the top K (whole ranking without K); "
               "averaged over queries, as ranx does", counts=True),
        Family("RR", "Reciprocal rank", "optional", ("rel",), "recip_rank_{k}", "recip_rank", True,
               "1 / rank of the first relevant document (0 if none, or none in top K)"),
        Family("nDCG", "nDCG", "optional", ("gain",), "ndcg_cut_{k}", "ndcg", True,
               "DCG@K / IDCG@K, gain = grade (or 2^grade-1), discount log2(rank+1)"),
        Family("AP", "Average precision", "optional", ("rel",), "map_cut_{k}", "map", True,
               "sum of P@rank at each relevant rank <= K / relevant judged"),
        Family("Rprec", "R-precision", "none", ("rel",), "Rprec", "Rprec", True,
               "relevant in top R / R, R = relevant judged for the query"),
        Family("NumRet", "Retrieved", "none", (), "num_ret", "num_ret", False,
               "number of documents retrieved (after max_depth)", "sum", counts=True),
        Family("NumRel", "Relevant", "none", ("rel",), "num_rel", "num_rel", False,
               "number of relevant documents judged", "sum", counts=True),
        Family("NumRelRet", "Relevant retrieved", "none", ("rel",), "num_rel_ret",
               "num_rel_ret", False, "number of relevant documents retrieved", "sum",
               counts=True),
        Family("NumQ", "Queries", "none", (), "num_q", "num_q", False,
               "1 per evaluated query (summed over queries: their number)", "sum",
               counts=True, trec_per_query=False),
        Family("SetP", "Set precision", "none", ("rel",), "set_P", "set_P", True,
               "relevant retrieved / retrieved (the whole ranking after max_depth; 0 when "
               "nothing was retrieved)"),
        Family("SetR", "Set recall", "none", ("rel",), "set_recall", "set_recall", True,
               "relevant retrieved / relevant judged"),
        Family("SetF", "Set F1", "none", ("rel",), "set_F", "set_F", True,
               "2·SetP·SetR / (SetP + SetR) (beta = 1), 0 when both are 0"),
        Family("Judged", "Judged", "optional", (), "judged_{k}", "judged", True,
               "documents with a judgment (any grade) in the top K / min(K, retrieved), as "
               "ir_measures divides (whole ranking without K); 0 for an empty ranking",
               health=True),
        Family("Bpref", "Bpref", "none", ("rel",), "bpref", "bpref", True,
               "1/R · sum over relevant retrieved d of 1 - min(n_d, R) / min(N, R), n_d = "
               "judged non-relevant ranked above d, N = judged non-relevant; unjudged and "
               "negative grades skipped (trec_eval)"),
        Family("IPrec", "Interpolated precision", "none", ("rel",), "iprec_at_recall_{r}",
               None, True, "largest precision at a rank holding at least lround(r·R) of the R "
               "relevant documents (0 if no rank does), as trec_eval 10 (trec_eval 9 and "
               "pytrec_eval: (long)(r·R + 0.9)); so with 6 relevant documents and one "
               "retrieved first, IPrec@0.2 = 1 (lround(1.2) = 1)", at="recall"),
        Family("ERR", "ERR", "optional", (), "err_{k}", "err", True,
               "sum over ranks i <= K of R_i/i · prod_{j<i}(1 - R_j), R = (2^g - 1) / 2^4 "
               "for g > 0, else 0 (gdeval, as ir_measures runs it; grades above 4 refused)"),
        Family("RBP", "Rank-biased precision", "optional", ("rel", "p"), "rbp_{k}", "rbp",
               False,
               "(1 - p) · sum over ranks i <= K of g_i·p^(i-1) (Moffat and Zobel 2008): "
               "graded without rel, g = the grade when positive (ir_measures' RBP via "
               "trectools; above 1 with grades above 1); binary with rel, g = 1 at grade >= "
               "rel (ir_measures' RBP(rel=1) via cwl_eval)"),
        Family("R_cap", "Capped recall", "required", ("rel",), "r_cap_{k}", None, True,
               "relevant in top K / min(K, relevant judged) (BEIR, MTEB)"),
    )
}

# lowercase alias -> canonical family: ranx, ir_measures, trec_eval, MTEB/BEIR and common
# spellings, each with the meaning the peer that spells it so gives it (README, "Measures").
# ``hits`` is ranx's count of relevant documents in the top k, never the hit rate.
_ALIASES: dict[str, str] = {
    "p": "P", "precision": "P", "prec": "P",
    "r": "R", "recall": "R",
    "f1": "F1", "f": "F1",
    "hitrate": "HitRate", "hit_rate": "HitRate", "success": "HitRate",
    "hits": "Hits",
    "rr": "RR", "mrr": "RR", "recip_rank": "RR", "reciprocal_rank": "RR",
    "ndcg": "nDCG", "ndcg_cut": "nDCG",
    "ap": "AP", "map": "AP", "map_cut": "AP",
    "rprec": "Rprec", "r-prec": "Rprec", "r_prec": "Rprec", "r-precision": "Rprec",
    "r_precision": "Rprec",
    "numret": "NumRet", "num_ret": "NumRet",
    "numrel": "NumRel", "num_rel": "NumRel",
    "numrelret": "NumRelRet", "num_rel_ret": "NumRelRet",
    "numq": "NumQ", "num_q": "NumQ",
    "setp": "SetP", "set_p": "SetP",
    "setr": "SetR", "set_recall": "SetR",
    "setf": "SetF", "set_f": "SetF",
    "judged": "Judged",
    "bpref": "Bpref",
    "iprec": "IPrec", "iprec_at_recall": "IPrec",
    "err": "ERR",
    "rbp": "RBP",
    "r_cap": "R_cap", "rcap": "R_cap", "recall_cap": "R_cap",
}

# names that carry a parameter of their own (lowercase) -> (family, gain): ranx's ndcg_burges
# is nDCG with gain 2^grade - 1 (Burges et al. 2005), ir_measures' nDCG(dcg=exp-log2)
_PRESETS: dict[str, tuple[str, str]] = {
    "ndcg_burges": ("nDCG", "exp"),
}

_GAINS = ("linear", "exp")

#: Largest cutoff (and ``rel`` level) accepted: every integer up to it is exact as a float64.
MAX_CUTOFF = 2**53

#: trec_eval's default cutoffs of the measures that take them, used for a bare name
#: (``trec_eval -m P`` prints P_5 ... P_1000; ir_measures' ``parse_trec_measure`` agrees).
#: Only these exact spellings expand: ``p`` or ``Success`` without a cutoff are refused, and
#: so is ``recall``, which ranx and LlamaIndex read as the recall of the whole ranking.
TREC_DEFAULT_CUTOFFS: dict[str, tuple[str, tuple[int, ...]]] = {
    "P": ("P", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "recall": ("R", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "ndcg_cut": ("nDCG", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "map_cut": ("AP", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "success": ("HitRate", (1, 5, 10)),
}

#: trec_eval's recall levels of ``iprec_at_recall`` (``-m iprec_at_recall`` prints the 11).
TREC_IPREC_LEVELS: tuple[float, ...] = tuple(i / 10 for i in range(11))

# bare names (exact spelling) that ranx and LlamaIndex read as a measure of the whole ranking,
# which ragreport has as a set measure: ranx's precision / f1 with k = 0 and LlamaIndex's
# precision are relevant retrieved / retrieved (trec_eval's set_P) and its harmonic mean with
# the recall (set_F). ir_measures' Precision needs a cutoff; trec_eval spells its P with a P.
_BARE_AS: dict[str, str] = {"precision": "SetP", "f1": "SetF"}

# names without a cutoff that the peers read differently: refused, naming the readings
# (lowercase keys)
_BARE_CLASHES: dict[str, str] = {
    "recall": "trec_eval and ir_measures' parse_trec_measure read 'recall' as recall_5, "
              "recall_10, ... recall_1000 (write recall.5,10,15,20,30,100,200,500,1000 or "
              "R@K); ranx and LlamaIndex read it as the recall of the whole ranking (write "
              "SetR, trec_eval's set_recall)",
    "hit_rate": "ranx and LlamaIndex read 'hit_rate' without k as 1 if any relevant document "
                "is retrieved at all (LlamaIndex's granular hit rate is relevant retrieved / "
                "relevant: SetR); trec_eval's success means success_1, success_5, success_10; "
                "ragreport's HitRate needs a cutoff, as deep as the rankings for ranx's",
}

# names the peers read differently with or without a cutoff (lowercase): refused
_CLASHES: dict[str, str] = {
    "accuracy": "MTEB's 'accuracy' is recall@1 (R@1); BEIR's Accuracy@k (top_k_accuracy) is "
                "success@k (HitRate@K); ir_measures' Accuracy is the share of (relevant, "
                "non-relevant) pairs ranked in that order, which ragreport does not compute",
}

# the peers' measures that ragreport does not compute (lowercase name -> what it is)
_NOT_IMPLEMENTED: dict[str, str] = {
    "infap": "inferred AP (trec_eval's and ir_measures' infAP)",
    "gm_map": "trec_eval's gm_map (geometric mean of AP)",
    "gm_bpref": "trec_eval's gm_bpref (geometric mean of bpref)",
    "11pt_avg": "trec_eval's 11pt_avg (mean of the 11 iprec_at_recall levels)",
    "rprec_mult": "trec_eval's Rprec_mult (precision at a multiple of R)",
    "set_map": "trec_eval's set_map (SetP x SetR; ir_measures' SetAP)",
    "setap": "ir_measures' SetAP (SetP x SetR; trec_eval's set_map)",
    "set_relative_p": "trec_eval's set_relative_P (ir_measures' SetRelP)",
    "setrelp": "ir_measures' SetRelP (trec_eval's set_relative_P)",
    "relative_p": "trec_eval's relative_P",
    "utility": "trec_eval's utility",
    "g": "trec_eval's G (gain)",
    "bing": "trec_eval's binG",
    "rndcg": "trec_eval's Rndcg",
    "ndcg_rel": "trec_eval's ndcg_rel",
    "num_nonrel_judged_ret": "trec_eval's num_nonrel_judged_ret",
    "relstring": "trec_eval's relstring",
    "runid": "trec_eval's runid (not a measure)",
    "map_avgjg": "trec_eval's map_avgjg (multiple judgment groups)",
    "p_avgjg": "trec_eval's P_avgjg (multiple judgment groups)",
    "rprec_mult_avgjg": "trec_eval's Rprec_mult_avgjg (multiple judgment groups)",
    "sdcg": "ir_measures' SDCG (scaled DCG)",
    "nerr8": "ir_measures' NERR8", "nerr9": "ir_measures' NERR9",
    "nerr10": "ir_measures' NERR10", "nerr11": "ir_measures' NERR11",
    "inst": "ir_measures' INST", "insq": "ir_measures' INSQ",
    "bpm": "ir_measures' BPM (Bejeweled player model)",
    "compat": "ir_measures' Compat (compatibility)",
    "strecall": "ir_measures' StRecall (subtopic recall)",
    "nrbp": "ir_measures' NRBP (novelty- and rank-biased precision)",
    "nnrbp": "ir_measures' nNRBP",
    "alpha_ndcg": "ir_measures' alpha_nDCG (diversity)", "α_ndcg": "ir_measures' α_nDCG",
    "alpha_dcg": "ir_measures' alpha_DCG (diversity)", "α_dcg": "ir_measures' α_DCG",
    "err_ia": "ir_measures' ERR_IA (intent-aware)", "nerr_ia": "ir_measures' nERR_IA",
    "ap_ia": "ir_measures' AP_IA", "map_ia": "ir_measures' MAP_IA", "p_ia": "ir_measures' P_IA",
    "dcg": "ranx's dcg (unnormalised DCG)",
    "dcg_burges": "ranx's dcg_burges (unnormalised DCG, gain 2^grade - 1)",
    "hole": "BEIR's and MTEB's Hole@k (share of the top k judged for no query at all)",
    "p-mrr": "MTEB's p-MRR (FollowIR instruction following)",
}

@dataclass(frozen=True, order=True)
class Measure:
    """One measure: a family, an optional cutoff K and optional parameters.

    Parameters
    ----------
    name : str
        Canonical family name, a key of :data:`FAMILIES`.
    cutoff : int or None
        K; ``None`` for measures without a cutoff (``RR``, ``AP``, ``Rprec``) or for the family
        itself (the whole metric-vs-K curve).
    rel : int or None
        Minimum grade that counts as relevant for this measure; ``None`` uses the evaluation's
        ``rel_level``, except for RBP, where ``None`` is graded RBP (each positive grade is
        the gain, ir_measures' ``RBP``) and a level is binary RBP (ir_measures'
        ``RBP(rel=1)``).
    gain : str
        ``"linear"`` (gain = grade, trec_eval) or ``"exp"`` (gain = 2^grade - 1); nDCG only.
    p : float or None
        RBP's persistence, in (0, 1); ``None`` gives its default 0.8, which the measure then
        holds (``RBP`` and ``RBP(p=0.8)`` are the same measure, always written with ``p``).
    recall : float or None
        IPrec's recall level, in [0, 1] (what follows ``@`` in ``IPrec@0.5``); required for
        IPrec, refused elsewhere.

    Examples
    --------
    >>> Measure("P", 5)
    Measure('P@5')
    >>> str(Measure("nDCG", 10, gain="exp"))
    'nDCG(gain=exp)@10'
    >>> Measure("P", 5) == parse_measure("precision@5")
    True
    >>> Measure("RBP", 10), Measure("IPrec", recall=0.5), Measure("SetP", rel=2)
    (Measure('RBP(p=0.8)@10'), Measure('IPrec@0.5'), Measure('SetP(rel=2)'))
    """

    name: str
    cutoff: int | None = None
    rel: int | None = None
    gain: str = field(default="linear")
    p: float | None = None
    recall: float | None = None

    def __post_init__(self) -> None:
        fam = FAMILIES.get(self.name)
        if fam is None:
            raise MeasureError(f"unknown measure family {self.name!r}; {_valid_text()}")
        if self.cutoff is not None:
            if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
                raise MeasureError(f"cutoff must be an integer, got {self.cutoff!r}")
            if not 1 <= self.cutoff <= MAX_CUTOFF:
                raise MeasureError(f"cutoff must be between 1 and 2**53, got "
                                   f"{_int_text(self.cutoff)} in {self.name}")
            if fam.cutoff == "none":
                raise MeasureError(f"{self.name} takes no cutoff, got {self.name}@{self.cutoff}")
        if self.rel is not None:
            if "rel" not in fam.params:
                raise MeasureError(f"{self.name} takes no 'rel' parameter")
            if isinstance(self.rel, bool) or not isinstance(self.rel, int):
                raise MeasureError(f"rel must be an integer, got {self.rel!r}")
            if self.rel < 0:
                raise MeasureError(f"rel must be >= 0 (negative grades are judged-unknown, "
                                   f"never relevant), got {self.rel}")
            if self.rel > MAX_CUTOFF:
                raise MeasureError(f"rel must be at most 2**53, got {_int_text(self.rel)}")
        if self.gain not in _GAINS:
            raise MeasureError(f"gain must be 'linear' or 'exp', got {self.gain!r}")
        if self.gain != "linear" and "gain" not in fam.params:
            raise MeasureError(f"{self.name} takes no 'gain' parameter")
        if "p" in fam.params:
            object.__setattr__(self, "p", _unit(0.8 if self.p is None else self.p, "p",
                                                self.name, closed=False))
        elif self.p is not None:
            raise MeasureError(f"{self.name} takes no 'p' parameter")
        if fam.at == "recall":
            if self.recall is None:
                raise MeasureError(f"{self.name} needs a recall level in [0, 1], e.g. "
                                   f"{self.name}@0.5")
            object.__setattr__(self, "recall", _unit(self.recall, "recall level", self.name,
                                                     closed=True))
        elif self.recall is not None:
            raise MeasureError(f"{self.name} takes no recall level (only IPrec does: "
                               f"IPrec@0.5)")

    @property
    def family(self) -> Family:
        """The registry entry of this measure's family."""
        return FAMILIES[self.name]

    @property
    def params_text(self) -> str:
        """Non-default parameters as ``"(rel=2)"``, or ``""``."""
        parts = []
        if self.p is not None:
            parts.append(f"p={self.p!r}")
        if self.rel is not None:
            parts.append(f"rel={self.rel}")
        if self.gain != "linear":
            parts.append(f"gain={self.gain}")
        return f"({','.join(parts)})" if parts else ""

    def __str__(self) -> str:
        if self.recall is not None:
            cut = f"@{self.recall!r}"
        else:
            cut = f"@{self.cutoff}" if self.cutoff is not None else ""
        return f"{self.name}{self.params_text}{cut}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def at(self, cutoff: int | None) -> Measure:
        """The same measure with another cutoff.

        >>> Measure("P", 5).at(10)
        Measure('P@10')
        """
        return Measure(self.name, cutoff, self.rel, self.gain, self.p, self.recall)

    @property
    def curve_key(self) -> Measure:
        """The family-with-parameters this measure reads its metric-vs-K curve from (a
        measure of a family without cutoffs, such as ``IPrec@0.5``, is its own key).

        >>> Measure("RBP", 10, p=0.5).curve_key
        Measure('RBP(p=0.5)')
        """
        if self.family.at != "cutoff":
            return self
        return Measure(self.name, None, self.rel, self.gain, self.p)

    @property
    def bounded(self) -> bool:
        """True when every value lies in [0, 1]: the family's bound, or binary RBP.

        >>> Measure("RBP", p=0.8).bounded, Measure("RBP", p=0.8, rel=1).bounded
        (False, True)
        """
        return self.family.bounded or (self.name == "RBP" and self.rel is not None)

    @property
    def has_curve(self) -> bool:
        """True when the family is defined for every K (and so has a metric-vs-K curve)."""
        return self.family.cutoff != "none"

    @property
    def trec_name(self) -> str:
        """trec_eval's name for this measure (``P_5``, ``ndcg_cut_10``, ``recip_rank``).

        >>> Measure("nDCG", 10).trec_name, Measure("RR").trec_name, Measure("AP", 100).trec_name
        ('ndcg_cut_10', 'recip_rank', 'map_cut_100')
        >>> Measure("IPrec", recall=0.5).trec_name, Measure("SetF").trec_name
        ('iprec_at_recall_0.50', 'set_F')

        Measures trec_eval lacks get a name in its style: ``judged_K`` / ``judged``,
        ``err_K`` / ``err``, ``rbp_K(p=0.8)`` / ``rbp(p=0.8)``, ``r_cap_K``.
        """
        fam = self.family
        if self.recall is not None:
            # trec_eval's "%3.2f"; more digits when two would not tell the level apart
            r = f"{self.recall:.2f}"
            base = fam.trec_name.format(r=r if float(r) == self.recall else repr(self.recall))
        elif self.cutoff is None:
            base = fam.trec_uncut or fam.trec_name
        else:
            base = fam.trec_name.format(k=self.cutoff)
        return base + self.params_text


def _unit(value: object, what: str, name: str, closed: bool) -> float:
    """``value`` as a float in [0, 1] (``closed``) or (0, 1), else a MeasureError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MeasureError(f"{what} of {name} must be a number, got {value!r}")
    v = float(value) + 0.0  # -0.0 is 0.0
    ok = 0.0 <= v <= 1.0 if closed else 0.0 < v < 1.0
    if not ok:
        span = "between 0 and 1" if closed else "strictly between 0 and 1"
        raise MeasureError(f"{what} of {name} must be {span}, got {value!r}")
    return v


def _valid_text() -> str:
    names = ", ".join(
        f"{f.name}@r" if f.at == "recall" else
        f"{f.name}@K" if f.cutoff == "required" else
        (f"{f.name}[@K]" if f.cutoff == "optional" else f.name)
        for f in FAMILIES.values()
    )
    return (
        f"valid measures: {names}; parameters: P(rel=2)@5, nDCG(gain=exp)@10, "
        "RBP(p=0.8)@10 (r: a recall level in [0, 1], IPrec@0.5); "
        "aliases such as ndcg@10, mrr, recall@5, hit_rate@5, hits@3, map, Success@5, "
        "ndcg_burges@10 (ranx), nDCG(dcg=exp-log2)@10 and NumRet(rel=1) (ir_measures), "
        "ndcg_at_10 (MTEB), and trec_eval names such as set_P, iprec_at_recall_0.10 and "
        "cutoff lists P.5,10 or ndcg_cut.10,20"
    )


def _short(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters (a huge number or name is not echoed whole)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _int_text(n: int) -> str:
    """An integer as text, cut like :func:`_short` (never ``str()`` of a 5,000-digit one)."""
    if abs(n).bit_length() > 256:
        sign = "a negative" if n < 0 else "an"
        return f"{sign} integer of about {int(abs(n).bit_length() * 0.30103)} digits"
    return _short(str(n))


def _quoted(text: str) -> str:
    return repr(_short(text, 80))


# One grammar for every peer's spelling, no white space inside (as trec_eval and ir_measures):
#   name [ (_at_ | . | _) value[,value...] ] [ (params) ] [ @value ]
# ``P@5`` ``P(rel=2)@5`` (ragreport, ir_measures), ``P.5,10`` ``P_5`` ``iprec_at_recall_0.10``
# (trec_eval), ``ndcg_at_10`` (MTEB), ``P_5(rel=2)`` (ragreport's trec layout). The name is
# matched lazily, so a trailing ``_5`` or ``.5,10`` is a value list and ``F1_5`` is F1 at 5.
_NAME_RE = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_\-]*?)"
    r"(?:(?:_at_|[._])(?P<list>[0-9][0-9.,eE+\-]*))?"
    r"(?:\((?P<params>[^()]*)\))?"
    r"(?:@(?P<at>.*))?$",
    re.S,
)
# ranx's relevance level suffix: ``ndcg@10-l2``, ``map-l2``
_RANX_LEVEL = re.compile(r"^(?P<base>.+?)-l(?P<level>[0-9]+)$", re.S)
_DIGITS = re.compile(r"[0-9]+")
# the head of a text that is no name of ours, to look up among the peers' other measures
_HEAD = re.compile(r"^[^@(.\s]+")


def _refuse_peer_name(name: str, text: str) -> None:
    """Raise for a name the peers read differently, or a peer's measure ragreport lacks."""
    key = name.lower()
    if key in _CLASHES:
        raise MeasureError(f"{_quoted(text)} is read differently by the peers: {_CLASHES[key]}")
    if key in _NOT_IMPLEMENTED:
        raise MeasureError(f"{_quoted(text)} is {_NOT_IMPLEMENTED[key]}, which ragreport does "
                           f"not compute; {_valid_text()}")


def _family_of(raw: str, text: str) -> tuple[str, str]:
    """The canonical family a name spells and the gain it implies, else a MeasureError."""
    if raw in FAMILIES:
        return raw, "linear"
    key = raw.lower()
    if key in _PRESETS:
        return _PRESETS[key]
    fam = _ALIASES.get(key)
    if fam is None:
        _refuse_peer_name(raw, text)
        raise MeasureError(f"unknown measure {_quoted(text)}; {_valid_text()}")
    return fam, "linear"


def _whole(raw: str, what: str, text: str, low: int) -> int:
    """A whole number from 0 to 2**53 written in ASCII digits, else a MeasureError."""
    if not _DIGITS.fullmatch(raw):
        raise MeasureError(f"{what} must be a whole number between {low} and 2**53, got "
                           f"{_quoted(raw)} in {_quoted(text)}")
    if len(raw.lstrip("0")) > len(str(MAX_CUTOFF)) or int(raw) > MAX_CUTOFF:
        raise MeasureError(f"{what} must be between {low} and 2**53, got {_short(raw)} in "
                           f"{_quoted(text)}")
    return int(raw)


def _parse_cutoff(raw: str, text: str) -> int:
    if raw.startswith("-") and _DIGITS.fullmatch(raw[1:]):
        raise MeasureError(f"cutoff must be between 1 and 2**53, got {_short(raw)} in "
                           f"{_quoted(text)}")
    value = _whole(raw, "cutoff", text, 1)
    if value < 1:
        raise MeasureError(f"cutoff must be between 1 and 2**53, got {value} in {_quoted(text)}")
    return value


_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
# the exponent notation repr() writes for a level below 1e-4 (5.960464477539063e-08)
_REPR_EXP = re.compile(r"[0-9](?:\.[0-9]+)?e-[0-9]+")


def _parse_unit(raw: str, what: str, text: str) -> float:
    """A decimal number in ASCII digits (``0.5``, ``1``, ``.25``), else a MeasureError (the
    range is checked by :class:`Measure`)."""
    if not (_DECIMAL.fullmatch(raw)
            or (_REPR_EXP.fullmatch(raw) and repr(float(raw)) == raw)):  # str(Measure) wrote it
        raise MeasureError(f"{what} must be a decimal number between 0 and 1, got "
                           f"{_quoted(raw)} in {_quoted(text)}")
    return float(raw)


@dataclass
class _Params:
    """What the parentheses of a name hold (``None``: not given)."""

    rel: int | None = None
    gain: str | None = None
    p: float | None = None
    cutoff: int | None = None
    recall: float | None = None


# ir_measures' nDCG(dcg=...): log2 is trec_eval's (gain = grade), exp-log2 gdeval's and
# ranx's ndcg_burges (gain = 2^grade - 1); both discount by log2(rank + 1)
_DCG = {"log2": "linear", "exp-log2": "exp"}
_FALSE = ("False", "false", "0")
_TRUE = ("True", "true", "1")
_GAINS_PARAM = re.compile(r"(?:^|,)\s*gains\s*=")
_VALID_PARAMS = ("valid: rel, gain, p, and ir_measures' dcg, cutoff, recall, judged_only=False, "
                 "beta=1, relative=False")


def _unquote(value: str) -> str:
    """``'exp-log2'`` or ``"exp-log2"`` (ir_measures prints string values quoted) unquoted."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _parse_params(raw: str, text: str, fam: str) -> _Params:
    """The parameters of ``text``'s family ``fam``, ragreport's and ir_measures' spellings."""
    out = _Params()
    if not raw:
        return out
    if _GAINS_PARAM.search(raw):
        raise MeasureError(f"custom gains (ir_measures' gains={{...}}) are not implemented; "
                           f"gain=exp or dcg=exp-log2 gives 2^grade - 1 (got {_quoted(text)})")
    seen: set[str] = set()
    for part in filter(None, (q.strip() for q in raw.split(","))):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep:
            raise MeasureError(f"parameter must be key=value, got {_quoted(part)} in "
                               f"{_quoted(text)}")
        if key in seen or {key, *seen} >= {"gain", "dcg"}:
            raise MeasureError(f"parameter {_quoted(key)} is given twice in {_quoted(text)}")
        seen.add(key)
        value = _unquote(value)
        if key == "rel":
            out.rel = _whole(value, "rel", text, 0)
        elif key == "gain":
            if value not in _GAINS:
                raise MeasureError(f"gain must be 'linear' or 'exp', got {_quoted(value)} in "
                                   f"{_quoted(text)}")
            out.gain = value
        elif key == "dcg":
            if value not in _DCG:
                raise MeasureError(f"dcg must be 'log2' (gain = grade) or 'exp-log2' (gain = "
                                   f"2^grade - 1), got {_quoted(value)} in {_quoted(text)}")
            if fam != "nDCG":
                raise MeasureError(f"{fam} takes no 'dcg' parameter (nDCG does)")
            out.gain = _DCG[value]
        elif key == "p":
            out.p = _parse_unit(value, "p", text)
        elif key == "cutoff":
            out.cutoff = _parse_cutoff(value, text)
        elif key == "recall":
            out.recall = _parse_unit(value, "recall level", text)
        elif key == "judged_only":
            if value in _TRUE:
                raise MeasureError(f"judged_only=True (ir_measures: unjudged documents are "
                                   f"dropped before scoring) is not implemented (got "
                                   f"{_quoted(text)})")
            if value not in _FALSE:
                raise MeasureError(f"judged_only must be True or False, got {_quoted(value)} "
                                   f"in {_quoted(text)}")
        elif key == "beta":
            if fam != "SetF" or not (_DECIMAL.fullmatch(value) and float(value) == 1.0):
                raise MeasureError(f"only SetF takes beta, and only beta = 1 is implemented "
                                   f"(the harmonic mean of SetP and SetR), got "
                                   f"{_quoted(part)} in {_quoted(text)}")
        elif key == "relative":
            if value in _TRUE:
                raise MeasureError(f"relative=True (ir_measures' SetRelP, trec_eval's "
                                   f"set_relative_P) is not implemented (got {_quoted(text)})")
            if value not in _FALSE:
                raise MeasureError(f"relative must be True or False, got {_quoted(value)} in "
                                   f"{_quoted(text)}")
        else:
            raise MeasureError(f"unknown parameter {_quoted(key)} in {_quoted(text)}; "
                               f"{_VALID_PARAMS}")
    return out


def _bare(name: str, fam: str, text: str, rel: int | None, whole: Measure | None,
          plain: bool, parens: bool) -> list[Measure]:
    """A name without cutoff: trec_eval's default cutoffs or recall levels, ranx's set
    measures, the whole ranking (``whole``, None when the family needs a cutoff), or an error.

    ``plain``: written as the bare name alone; ``parens``: with parameters in parentheses.
    """
    if not parens:
        clash = _BARE_CLASHES.get(name.lower())
        if clash is not None:
            raise MeasureError(f"{_quoted(text)} is ambiguous without a cutoff: {clash}")
        if name in _BARE_AS:
            return [Measure(_BARE_AS[name], rel=rel)]
    if plain and name in TREC_DEFAULT_CUTOFFS:
        family, cuts = TREC_DEFAULT_CUTOFFS[name]
        return [Measure(family, k) for k in cuts]
    if plain and name == "iprec_at_recall":
        return [Measure("IPrec", recall=r) for r in TREC_IPREC_LEVELS]
    if FAMILIES[fam].at == "recall":
        hint = "" if name == fam else (f", or 'iprec_at_recall' for trec_eval's 11 levels "
                                       f"(got {_quoted(text)})")
        raise MeasureError(f"{fam} needs a recall level in [0, 1], e.g. {fam}@0.5{hint}")
    if whole is None:
        trec = next((t for t, (f, _) in TREC_DEFAULT_CUTOFFS.items() if f == fam), None)
        if trec is not None and trec.lower() in _BARE_CLASHES:
            trec = f"{trec}.{','.join(map(str, TREC_DEFAULT_CUTOFFS[trec][1]))}"
        hint = f", or {trec!r} for trec_eval's default cutoffs" if trec else ""
        ranx = next((b for b, s in _BARE_AS.items() if _ALIASES[b] == fam), None)
        set_hint = (f"; ranx's bare {ranx!r} (the whole ranking) is {_BARE_AS[ranx]}"
                    if ranx else "")
        raise MeasureError(f"{fam} needs a cutoff, e.g. {fam}@5{hint} (got {_quoted(text)})"
                           f"{set_hint}")
    return [whole]


def parse_measures(text: str | Measure) -> list[Measure]:
    """Parse one measure name, which may expand to several (trec_eval cutoff lists).

    Every peer's spelling is read with that peer's meaning (the README's measure table lists
    them): canonical names (``nDCG@10``, ``P(rel=2)@5``, ``RBP(p=0.8)``, ``IPrec@0.5``);
    ir_measures names and parameters (``Success@5``, ``nDCG(dcg=exp-log2)@10`` = nDCG with
    gain 2^grade - 1, ``NumRet(rel=1)`` = ``NumRelRet(rel=1)``, ``SetP(rel=2)``,
    ``IPrec(recall=0.5)``, ``P(cutoff=5)``); ranx names (``ndcg@10``, ``ndcg_burges@10``,
    ``mrr``, ``hit_rate@5``, ``hits@3``, ``map@100``, ``r-precision``, bare ``precision`` and
    ``f1``: the whole ranking, ``SetP`` and ``SetF``; a level suffix ``ndcg@10-l2``);
    MTEB/BEIR keys (``ndcg_at_10``, ``mrr_at_10``, ``r_cap_at_10``, ``NDCG@10``,
    ``R_cap@10``); trec_eval names with cutoff lists (``P.5,10``, ``ndcg_cut.10,20``,
    ``iprec_at_recall.0.1,0.5``, ``set_P``, ``num_q``, ``bpref``), as printed (``P_5``,
    ``ndcg_cut_10``, ``iprec_at_recall_0.10``) or bare (``P``, ``ndcg_cut``, ``map_cut``,
    ``success``, ``iprec_at_recall``: trec_eval's default cutoffs and recall levels, see
    :data:`TREC_DEFAULT_CUTOFFS` and :data:`TREC_IPREC_LEVELS`).

    Raises
    ------
    MeasureError
        For an unknown family, a malformed cutoff or parameter, a cutoff outside 1..2**53,
        a peer's measure ragreport does not compute (``infAP``), or a name the peers read
        differently (bare ``recall``: trec_eval's ten cutoffs or ranx's whole ranking); the
        message says what was received and names the readings.

    Examples
    --------
    >>> [str(m) for m in parse_measures("ndcg_cut.10,20")]
    ['nDCG@10', 'nDCG@20']
    >>> [str(m) for m in parse_measures("success_5")]
    ['HitRate@5']
    >>> [str(m) for m in parse_measures("success")]
    ['HitRate@1', 'HitRate@5', 'HitRate@10']
    >>> [str(m) for m in parse_measures("hits@3")]
    ['Hits@3']
    >>> [str(parse_measure(n)) for n in ("nDCG(dcg=exp-log2)@10", "ndcg_burges@10",
    ...                                  "NumRet(rel=1)", "ndcg_at_10", "set_F", "precision")]
    ['nDCG(gain=exp)@10', 'nDCG(gain=exp)@10', 'NumRelRet(rel=1)', 'nDCG@10', 'SetF', 'SetP']
    >>> [str(m) for m in parse_measures("iprec_at_recall_0.10")]
    ['IPrec@0.1']
    """
    return _parse(text, family=False)


def parse_family(text: str | Measure) -> Measure:
    """The family, with its parameters, that a name stands for: the key of a metric-vs-K
    curve (``EvaluationResult.curve``). Any spelling :func:`parse_measures` reads; a name
    without a cutoff is the family itself even where a measure needs one.

    >>> [str(parse_family(n)) for n in ("recall", "R_cap(rel=2)", "ndcg_burges", "ndcg_at_10")]
    ['R', 'R_cap(rel=2)', 'nDCG(gain=exp)', 'nDCG']
    """
    found = _parse(text, family=True)
    if len(found) != 1:
        raise MeasureError(f"expected one measure, {_quoted(str(text))} names {len(found)}")
    return found[0].curve_key


def _parse(text: str | Measure, family: bool) -> list[Measure]:
    """:func:`parse_measures`; ``family``: a name without a cutoff is its family."""
    if isinstance(text, Measure):
        return [text]
    if not isinstance(text, str) or not text.strip():
        raise MeasureError(f"a measure name must be a non-empty string, got {text!r}")
    body = text.strip()
    level: int | None = None
    suffix = _RANX_LEVEL.match(body)
    if suffix is not None:
        body, level = suffix.group("base"), _whole(suffix.group("level"), "rel", text, 0)
    found = _NAME_RE.match(body)
    if found is None or (found.group("list") is not None and found.group("at") is not None):
        head = _HEAD.match(body)
        if head is not None:
            _refuse_peer_name(head.group(0), text)
        raise MeasureError(f"malformed measure {_quoted(text)}; {_valid_text()}")
    name, listed, parens, at = found.group("name", "list", "params", "at")
    fam, gain = _family_of(name, text)
    params = _parse_params(parens or "", text, fam)
    if params.gain is not None:
        if name.lower() in _PRESETS and params.gain != gain:
            raise MeasureError(f"{name} has gain={gain}; got {_quoted(text)}")
        gain = params.gain
    rel = params.rel
    if level is not None:
        if rel is not None:
            raise MeasureError(f"parameter 'rel' is given twice in {_quoted(text)}")
        if fam == "nDCG":
            # right whether or not the preset is given: a suffix is never read as the
            # evaluation's level (the other measures would change with it)
            raise MeasureError(f"{_quoted(text)}: ranx's -l{level} leaves grades below {level} "
                               f"out of nDCG's gains; ragreport's nDCG has no relevance level "
                               f"of its own (every positive grade is a gain, as in trec_eval), "
                               f"even with compat='ranx': for ranx's number ask for "
                               f"{_quoted(body)} with compat='ranx' and rel_level={level} "
                               f"(--compat ranx -l {level} -m {_quoted(body)}), which sets the "
                               f"level of every measure")
        rel = level
    if fam == "NumRet" and rel is not None:
        fam = "NumRelRet"  # ir_measures: NumRet(rel=1) counts the retrieved with grade >= 1
    values: list[str] | None = None
    if listed is not None:
        values = listed.split(",")
        if any(not v for v in values):
            raise MeasureError(f"empty cutoff in the list {_quoted(listed)} of "
                               f"{_quoted(text)}")
    elif at is not None:
        values = [at]
    if values is not None and name.lower() == "rbp" and name != "RBP" and parens is None:
        digits = values[0] if values[0].isdigit() and len(values) == 1 else "95"
        lvl = 1 if rel is None else rel
        # ranx 0.3.21's rank_biased_precision weights each rank by the grade of a document
        # of grade >= rel_lvl (its docstring says 0/1): ragreport's graded RBP, with ranx's
        # reading of grades below the level (compat='ranx')
        at_level = "" if lvl == 1 else (f" with compat='ranx' and rel_level={lvl} (--compat "
                                        f"ranx -l {lvl})")
        raise MeasureError(f"{_quoted(text)} is read differently by the peers: ranx reads the "
                           f"number after rbp as the persistence (rbp.95: p = 0.95) and "
                           f"weights each rank by the grade of a document of grade >= {lvl}; "
                           f"ir_measures' RBP@K is a cutoff, graded RBP with p = 0.8; write "
                           f"RBP(p=0.{_short(digits)}){at_level} for ranx's or "
                           f"RBP(p=0.8)@{_short(digits)} for ir_measures'")
    if FAMILIES[fam].at == "recall":
        if params.cutoff is not None:
            raise MeasureError(f"{fam} takes a recall level, not a cutoff (got "
                               f"{_quoted(text)})")
        if values is not None and params.recall is not None:
            raise MeasureError(f"the recall level is given twice in {_quoted(text)}")
        levels = ([_parse_unit(v, "recall level", text) for v in values] if values is not None
                  else [params.recall] if params.recall is not None else [])
        if not levels:
            return _bare(name, fam, text, rel, None, plain=parens is None and level is None,
                         parens=parens is not None)
        return [Measure(fam, None, rel, gain, params.p, r) for r in levels]
    if values is not None and params.cutoff is not None:
        raise MeasureError(f"the cutoff is given twice in {_quoted(text)}")
    if values is None and params.cutoff is None:
        if family:
            return [Measure(fam, None, rel, gain, params.p, params.recall)]
        whole = None if FAMILIES[fam].cutoff == "required" else Measure(
            fam, None, rel, gain, params.p, params.recall)
        return _bare(name, fam, text, rel, whole, plain=parens is None and level is None,
                     parens=parens is not None)
    if fam == "SetF" and listed is not None:  # trec_eval's set_F.0.5: beta = 0.5
        if not all(_DECIMAL.fullmatch(v) and float(v) == 1.0 for v in listed.split(",")):
            raise MeasureError(f"trec_eval's {_quoted(text)} is set_F with beta = {listed}; "
                               f"only beta = 1 is implemented (SetF, set_F)")
        return [Measure(fam, None, rel, gain, params.p)]
    cuts = ([_parse_cutoff(v, text) for v in values] if values is not None
            else [params.cutoff])
    return [Measure(fam, k, rel, gain, params.p, params.recall) for k in cuts]


def parse_measure(text: str | Measure) -> Measure:
    """Parse exactly one measure (see :func:`parse_measures` for the accepted names).

    >>> parse_measure("MRR")
    Measure('RR')
    >>> parse_measure("nDCG(gain=exp)@10").gain
    'exp'
    """
    found = parse_measures(text)
    if len(found) != 1:
        names = ", ".join(str(m) for m in found[:3]) + (", ..." if len(found) > 3 else "")
        raise MeasureError(f"expected one measure, {_quoted(str(text))} names {len(found)} "
                           f"({names})")
    return found[0]


def normalize_measures(measures: str | Measure | Iterable[str | Measure] | None) -> list[Measure]:
    """Parse a measure, a list of them or ``None`` (the defaults) into unique measures in order.

    >>> [str(m) for m in normalize_measures(["P@5", "precision@5", "mrr"])]
    ['P@5', 'RR']
    """
    if measures is None:
        items: Iterable[str | Measure] = DEFAULT_MEASURES
    elif isinstance(measures, (str, Measure)):
        items = [measures]
    else:
        items = measures
    out: list[Measure] = []
    for item in items:
        for m in parse_measures(item):
            if m not in out:
                out.append(m)
    if not out:
        raise MeasureError("no measure given")
    return out


DEFAULT_MEASURES: tuple[str, ...] = (
    "P@3", "P@5", "R@5", "R@10", "F1@5", "HitRate@5", "RR", "nDCG@5", "nDCG@10", "AP", "Rprec",
)

TREC_DEFAULT_MEASURES: tuple[str, ...] = (
    "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank",
    "P.5,10,15,20,30,100,200,500,1000",
    "recall.5,10,15,20,30,100,200,500,1000",
    "ndcg_cut.5,10,15,20,30,100,200,500,1000",
    "success.1,5,10",
)
