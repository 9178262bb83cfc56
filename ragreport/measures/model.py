"""Measures as hashable value objects and the registry of their families.

A :class:`Family` says what a family is (its names in trec_eval, its parameters, bounds,
definition and flags, and its rows of the docs' measure table: the peers' names for it); a
:class:`Measure` is a family, an optional cutoff and optional parameters, whose ``str()`` is
its canonical name. How a family is computed is its entry in :mod:`ragreport.core.kernel`;
how every peer spells it, :mod:`ragreport.measures.names`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import MeasureError

__all__ = ["DOC_ORDER", "FAMILIES", "GAINS", "MAX_CUTOFF", "PEERS", "DocRow", "Family",
           "Measure", "int_text", "quoted", "short", "unit", "valid_text"]

#: The peers whose names for each measure docs/measures.md's table gives, in its columns'
#: order (the keys of :attr:`Family.peers`).
PEERS = ("trec_eval", "ir_measures", "ranx", "MTEB / BEIR", "LlamaIndex")


@dataclass(frozen=True)
class DocRow:
    """One row of the docs' measure table (docs/measures.md, written by scripts/gen_docs.py).

    Attributes
    ----------
    shown : str
        The first column, Markdown: the canonical names (``"`RR`, `RR@K`"``).
    formula : str
        The per-query formula shown.
    peers : tuple of (str, str)
        ``(peer, text)`` for each peer of :data:`PEERS` that has the measure, the text as the
        column shows it (Markdown, note markers included); a peer not listed shows "—".
    """

    shown: str
    formula: str
    peers: tuple[tuple[str, str], ...] = ()


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
        One-line formula for the reports (and the docs' measure table, unless ``formula``).
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
    shown : str
        The first column of its row in the docs' measure table (:class:`DocRow`).
    formula : str
        The per-query formula of that row, when it is not ``definition``'s text.
    peers : tuple of (str, str)
        The peers' names for it, as that row shows them (:attr:`DocRow.peers`).
    variants : tuple of DocRow
        Further rows right below it: variants with names of their own
        (``nDCG(gain=exp)@K``, binary RBP).
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
    shown: str = ""
    formula: str = ""
    peers: tuple[tuple[str, str], ...] = ()
    variants: tuple[DocRow, ...] = ()

    @property
    def doc_rows(self) -> tuple[DocRow, ...]:
        """Its rows of the docs' measure table: its own, then its variants'.

        >>> [r.shown for r in FAMILIES["nDCG"].doc_rows]
        ['`nDCG@K`, `nDCG`', '`nDCG(gain=exp)@K`']
        """
        own = DocRow(self.shown, self.formula or self.definition, self.peers)
        return (own, *self.variants)


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("P", "Precision", "required", ("rel",), "P_{k}", None, True,
               "relevant in top K / K (K even when fewer were retrieved)",
               shown="`P@K`",
               formula="relevant in the top K / K (K even when fewer were retrieved)",
               peers=(("trec_eval", "`P_K`, `P.5,10`"), ("ir_measures", "`P@K`, `Precision@K`"),
                      ("ranx", "`precision@k`"), ("MTEB / BEIR", "`precision_at_K` / `P@K`"))),
        Family("R", "Recall", "required", ("rel",), "recall_{k}", None, True,
               "relevant in top K / relevant judged for the query",
               shown="`R@K`",
               formula="relevant in the top K / relevant judged",
               peers=(("trec_eval", "`recall_K`, `recall.5,10`"),
                      ("ir_measures", "`R@K`, `Recall@K`"), ("ranx", "`recall@k`"),
                      ("MTEB / BEIR", "`recall_at_K` / `Recall@K`"))),
        Family("F1", "F1", "required", ("rel",), "F1_{k}", None, True,
               "2·P@K·R@K / (P@K + R@K), 0 when both are 0",
               shown="`F1@K`",
               peers=(("ranx", "`f1@k`"),)),
        Family("HitRate", "Hit rate", "required", ("rel",), "success_{k}", None, True,
               "1 if any relevant document is in the top K, else 0",
               shown="`HitRate@K`",
               formula="1 if any relevant document is in the top K",
               peers=(("trec_eval", "`success_K`"), ("ir_measures", "`Success@K`"),
                      ("ranx", "`hit_rate@k`"), ("MTEB / BEIR", "`hit_rate_at_K` (MTEB)"))),
        Family("Hits", "Hits", "optional", ("rel",), "hits_{k}", "hits", False,
               "number of relevant documents in the top K (whole ranking without K); "
               "averaged over queries, as ranx does", counts=True,
               shown="`Hits@K`, `Hits`",
               formula="number of relevant documents in the top K (whole ranking without K), "
                       "averaged",
               peers=(("ranx", "`hits@k`, `hits`"),)),
        Family("RR", "Reciprocal rank", "optional", ("rel",), "recip_rank_{k}", "recip_rank", True,
               "1 / rank of the first relevant document (0 if none, or none in top K)",
               shown="`RR`, `RR@K`",
               formula="1 / rank of the first relevant document (0 if none in the top K); the "
                       "mean is MRR",
               peers=(("trec_eval", "`recip_rank`"), ("ir_measures", "`RR`, `RR@K`, `MRR`"),
                      ("ranx", "`mrr`, `mrr@k`"), ("MTEB / BEIR", "`mrr_at_K` / `MRR@K`"),
                      ("LlamaIndex", "`mrr`"))),
        Family("nDCG", "nDCG", "optional", ("gain",), "ndcg_cut_{k}", "ndcg", True,
               "DCG@K / IDCG@K, gain = grade (or 2^grade-1), discount log2(rank+1)",
               shown="`nDCG@K`, `nDCG`",
               formula="DCG@K / IDCG@K, DCG = Σ grade_i / log2(i+1), ideal from all judged "
                       "documents",
               peers=(("trec_eval", "`ndcg_cut_K`, `ndcg`"), ("ir_measures", "`nDCG@K`, `nDCG`"),
                      ("ranx", "`ndcg@k`, `ndcg`"), ("MTEB / BEIR", "`ndcg_at_K` / `NDCG@K`"),
                      ("LlamaIndex", "— (its `ndcg`: `--compat llamaindex`)")),
               variants=(DocRow("`nDCG(gain=exp)@K`",
                                formula="the same with gain 2^grade − 1",
                                peers=(("ir_measures", "`nDCG(dcg=exp-log2)@K`"),
                                       ("ranx", "`ndcg_burges@k`"))),)),
        Family("AP", "Average precision", "optional", ("rel",), "map_cut_{k}", "map", True,
               "sum of P@rank at each relevant rank <= K / relevant judged",
               shown="`AP`, `AP@K`",
               formula="Σ over relevant ranks i ≤ K of P@i / relevant judged; the mean is MAP",
               peers=(("trec_eval", "`map`, `map_cut_K`"), ("ir_measures", "`AP`, `AP@K`, `MAP`"),
                      ("ranx", "`map`, `map@k`"), ("MTEB / BEIR", "`map_at_K` / `MAP@K`"),
                      ("LlamaIndex", "`ap`"))),
        Family("Rprec", "R-precision", "none", ("rel",), "Rprec", "Rprec", True,
               "relevant in top R / R, R = relevant judged for the query",
               shown="`Rprec`",
               formula="relevant in the top R / R, R = relevant judged",
               peers=(("trec_eval", "`Rprec`"), ("ir_measures", "`Rprec`, `RPrec`"),
                      ("ranx", "`r-precision`"))),
        Family("NumRet", "Retrieved", "none", (), "num_ret", "num_ret", False,
               "number of documents retrieved (after max_depth)", "sum", counts=True,
               shown="`NumRet`",
               formula="documents retrieved (after `max_depth`)",
               peers=(("trec_eval", "`num_ret`"), ("ir_measures", "`NumRet`"))),
        Family("NumRel", "Relevant", "none", ("rel",), "num_rel", "num_rel", False,
               "number of relevant documents judged", "sum", counts=True,
               shown="`NumRel`",
               formula="relevant documents judged",
               peers=(("trec_eval", "`num_rel`"), ("ir_measures", "`NumRel`"))),
        Family("NumRelRet", "Relevant retrieved", "none", ("rel",), "num_rel_ret",
               "num_rel_ret", False, "number of relevant documents retrieved", "sum",
               counts=True,
               shown="`NumRelRet`",
               formula="relevant documents retrieved",
               peers=(("trec_eval", "`num_rel_ret`"),
                      ("ir_measures", "`NumRelRet`, `NumRet(rel=1)`"))),
        Family("NumQ", "Queries", "none", (), "num_q", "num_q", False,
               "1 per evaluated query (summed over queries: their number)", "sum",
               counts=True, trec_per_query=False,
               shown="`NumQ`",
               formula="1 per query evaluated (summed: their number)",
               peers=(("trec_eval", "`num_q`"), ("ir_measures", "`NumQ`"))),
        Family("SetP", "Set precision", "none", ("rel",), "set_P", "set_P", True,
               "relevant retrieved / retrieved (the whole ranking after max_depth; 0 when "
               "nothing was retrieved)",
               shown="`SetP`",
               formula="relevant retrieved / retrieved (0 if nothing was retrieved)",
               peers=(("trec_eval", "`set_P`"), ("ir_measures", "`SetP`"),
                      ("ranx", "`precision` (no k)"), ("LlamaIndex", "`precision`"))),
        Family("SetR", "Set recall", "none", ("rel",), "set_recall", "set_recall", True,
               "relevant retrieved / relevant judged",
               shown="`SetR`",
               peers=(("trec_eval", "`set_recall`"), ("ir_measures", "`SetR`"),
                      ("ranx", "`recall` (no k)¹"), ("LlamaIndex", "`recall`¹"))),
        Family("SetF", "Set F1", "none", ("rel",), "set_F", "set_F", True,
               "2·SetP·SetR / (SetP + SetR) (beta = 1), 0 when both are 0",
               shown="`SetF`",
               formula="2·SetP·SetR / (SetP + SetR), 0 when both are 0 (beta = 1)",
               peers=(("trec_eval", "`set_F`"), ("ir_measures", "`SetF`"),
                      ("ranx", "`f1` (no k)"))),
        Family("Judged", "Judged", "optional", (), "judged_{k}", "judged", True,
               "documents with a judgment (any grade) in the top K / min(K, retrieved), as "
               "ir_measures divides (whole ranking without K); 0 for an empty ranking",
               health=True,
               shown="`Judged@K`, `Judged`",
               formula="judged documents (any grade) in the top K / min(K, retrieved) (whole "
                       "ranking: / retrieved; 0 if nothing was retrieved)",
               peers=(("ir_measures", "`Judged@K`"),)),
        Family("Bpref", "Bpref", "none", ("rel",), "bpref", "bpref", True,
               "1/R · sum over relevant retrieved d of 1 - min(n_d, R) / min(N, R), n_d = "
               "judged non-relevant ranked above d, N = judged non-relevant; unjudged and "
               "negative grades skipped (trec_eval)",
               shown="`Bpref`",
               formula="1/R · Σ over relevant retrieved d of 1 − min(n_d, R) / min(N, R); n_d = "
                       "judged non-relevant above d, N = judged non-relevant",
               peers=(("trec_eval", "`bpref`"), ("ir_measures", "`Bpref`, `BPref`"),
                      ("ranx", "`bpref`²"))),
        Family("IPrec", "Interpolated precision", "none", ("rel",), "iprec_at_recall_{r}",
               None, True, "largest precision at a rank holding at least lround(r·R) of the R "
               "relevant documents (0 if no rank does), as trec_eval 10 (trec_eval 9 and "
               "pytrec_eval: (long)(r·R + 0.9)); so with 6 relevant documents and one "
               "retrieved first, IPrec@0.2 = 1 (lround(1.2) = 1)", at="recall",
               shown="`IPrec@r`",
               formula="largest precision at a rank holding at least lround(r·R) of the R "
                       "relevant documents (interpolated precision; 0 if no rank does)³",
               peers=(("trec_eval", "`iprec_at_recall_0.10`; `iprec_at_recall`: the 11 levels "
                                     "0.0 … 1.0"),
                      ("ir_measures", "`IPrec@0.1`"))),
        Family("ERR", "ERR", "optional", (), "err_{k}", "err", True,
               "sum over ranks i <= K of R_i/i · prod_{j<i}(1 - R_j), R = (2^g - 1) / 2^4 "
               "for g > 0, else 0 (gdeval, as ir_measures runs it; grades above 4 refused)",
               shown="`ERR@K`, `ERR`",
               formula="Σ over ranks i ≤ K of R_i / i · Π_{j<i} (1 − R_j), R = (2^grade − 1) / "
                       "2^4 (gdeval)",
               peers=(("ir_measures", "`ERR@K`"),)),
        Family("RBP", "Rank-biased precision", "optional", ("rel", "p"), "rbp_{k}", "rbp",
               False,
               "(1 - p) · sum over ranks i <= K of g_i·p^(i-1) (Moffat and Zobel 2008): "
               "graded without rel, g = the grade when positive (ir_measures' RBP via "
               "trectools; above 1 with grades above 1); binary with rel, g = 1 at grade >= "
               "rel (ir_measures' RBP(rel=1) via cwl_eval)",
               shown="`RBP(p=0.8)`, `RBP(p=0.8)@K`",
               formula="(1 − p) · Σ over ranks i ≤ K of g_i · p^(i−1), g = the grade when "
                       "positive (graded; above 1 with grades above 1)",
               peers=(("ir_measures", "`RBP`, `RBP(p=0.8)`, `RBP@K`⁴"), ("ranx", "—⁵")),
               variants=(DocRow("`RBP(p=0.8,rel=N)`, `RBP(p=0.8,rel=N)@K`",
                                formula="the same with g = 1 at grade ≥ N, else 0 (binary)",
                                peers=(("ir_measures", "`RBP(rel=N)`⁴"),)),)),
        Family("R_cap", "Capped recall", "required", ("rel",), "r_cap_{k}", None, True,
               "relevant in top K / min(K, relevant judged) (BEIR, MTEB)",
               shown="`R_cap@K`",
               formula="relevant in the top K / min(K, relevant judged)",
               peers=(("MTEB / BEIR", "`r_cap_at_K` / `R_cap@K`"),)),
    )
}

#: The families in the order of the docs' measure table (the set measures after the ranked
#: ones, the counts after them, as the page reads).
DOC_ORDER = ("P", "R", "F1", "HitRate", "Hits", "RR", "nDCG", "AP", "Rprec", "SetP", "SetR",
             "SetF", "NumRet", "NumRel", "NumRelRet", "NumQ", "Judged", "Bpref", "IPrec", "ERR",
             "RBP", "R_cap")

GAINS = ("linear", "exp")

#: Largest cutoff (and ``rel`` level) accepted: every integer up to it is exact as a float64.
MAX_CUTOFF = 2**53


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
    >>> from ragreport.measures import parse_measure
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
            raise MeasureError(f"unknown measure family {self.name!r}; {valid_text()}")
        if self.cutoff is not None:
            if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
                raise MeasureError(f"cutoff must be an integer, got {self.cutoff!r}")
            if not 1 <= self.cutoff <= MAX_CUTOFF:
                raise MeasureError(f"cutoff must be between 1 and 2**53, got "
                                   f"{int_text(self.cutoff)} in {self.name}")
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
                raise MeasureError(f"rel must be at most 2**53, got {int_text(self.rel)}")
        if self.gain not in GAINS:
            raise MeasureError(f"gain must be 'linear' or 'exp', got {self.gain!r}")
        if self.gain != "linear" and "gain" not in fam.params:
            raise MeasureError(f"{self.name} takes no 'gain' parameter")
        if "p" in fam.params:
            object.__setattr__(self, "p", unit(0.8 if self.p is None else self.p, "p",
                                                self.name, closed=False))
        elif self.p is not None:
            raise MeasureError(f"{self.name} takes no 'p' parameter")
        if fam.at == "recall":
            if self.recall is None:
                raise MeasureError(f"{self.name} needs a recall level in [0, 1], e.g. "
                                   f"{self.name}@0.5")
            object.__setattr__(self, "recall", unit(self.recall, "recall level", self.name,
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


def unit(value: object, what: str, name: str, closed: bool) -> float:
    """``value`` as a float in [0, 1] (``closed``) or (0, 1), else a MeasureError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MeasureError(f"{what} of {name} must be a number, got {value!r}")
    v = float(value) + 0.0  # -0.0 is 0.0
    ok = 0.0 <= v <= 1.0 if closed else 0.0 < v < 1.0
    if not ok:
        span = "between 0 and 1" if closed else "strictly between 0 and 1"
        raise MeasureError(f"{what} of {name} must be {span}, got {value!r}")
    return v


def valid_text() -> str:
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


def short(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters (a huge number or name is not echoed whole)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def int_text(n: int) -> str:
    """An integer as text, cut like :func:`_short` (never ``str()`` of a 5,000-digit one)."""
    if abs(n).bit_length() > 256:
        sign = "a negative" if n < 0 else "an"
        return f"{sign} integer of about {int(abs(n).bit_length() * 0.30103)} digits"
    return short(str(n))


def quoted(text: str) -> str:
    return repr(short(text, 80))
