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

Names are read as the peers read them, or refused: a bare trec_eval name that takes cutoffs
(``P``, ``recall``, ``ndcg_cut``, ``map_cut``, ``success``) means trec_eval's default cutoffs,
as ``trec_eval -m`` and ir_measures' ``parse_trec_measure`` read it; ranx's ``hits@k`` is the
number of relevant documents in the top k (:data:`FAMILIES` ``Hits``), not the hit rate; a name
that the peers read differently (ranx's bare ``precision`` is the precision of the whole
ranking, nobody else's) is refused with a message naming the readings. A cutoff is a whole
number from 1 to 2**53.
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
    "Family",
    "Measure",
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
               "averaged over queries, as ranx does"),
        Family("RR", "Reciprocal rank", "optional", ("rel",), "recip_rank_{k}", "recip_rank", True,
               "1 / rank of the first relevant document (0 if none, or none in top K)"),
        Family("nDCG", "nDCG", "optional", ("gain",), "ndcg_cut_{k}", "ndcg", True,
               "DCG@K / IDCG@K, gain = grade (or 2^grade-1), discount log2(rank+1)"),
        Family("AP", "Average precision", "optional", ("rel",), "map_cut_{k}", "map", True,
               "sum of P@rank at each relevant rank <= K / relevant judged"),
        Family("Rprec", "R-precision", "none", ("rel",), "Rprec", "Rprec", True,
               "relevant in top R / R, R = relevant judged for the query"),
        Family("NumRet", "Retrieved", "none", (), "num_ret", "num_ret", False,
               "number of documents retrieved (after max_depth)", "sum"),
        Family("NumRel", "Relevant", "none", ("rel",), "num_rel", "num_rel", False,
               "number of relevant documents judged", "sum"),
        Family("NumRelRet", "Relevant retrieved", "none", ("rel",), "num_rel_ret",
               "num_rel_ret", False, "number of relevant documents retrieved", "sum"),
        Family("NumQ", "Queries", "none", (), "num_q", "num_q", False,
               "1 per evaluated query (summed over queries: their number)", "sum"),
        Family("SetP", "Set precision", "none", ("rel",), "set_P", "set_P", True,
               "relevant retrieved / retrieved (the whole ranking after max_depth; 0 when "
               "nothing was retrieved)"),
        Family("SetR", "Set recall", "none", ("rel",), "set_recall", "set_recall", True,
               "relevant retrieved / relevant judged"),
        Family("SetF", "Set F1", "none", ("rel",), "set_F", "set_F", True,
               "2·SetP·SetR / (SetP + SetR) (beta = 1), 0 when both are 0"),
        Family("Judged", "Judged", "optional", (), "judged_{k}", "judged", True,
               "judged documents (any grade) in the top K / K (whole ranking without K: "
               "/ retrieved)"),
        Family("Bpref", "Bpref", "none", ("rel",), "bpref", "bpref", True,
               "1/R · sum over relevant retrieved d of 1 - min(n_d, R) / min(N, R), n_d = "
               "judged non-relevant ranked above d, N = judged non-relevant"),
        Family("IPrec", "Interpolated precision", "none", ("rel",), "iprec_at_recall_{r}",
               None, True, "largest precision at a rank whose recall is >= r (0 if none)",
               at="recall"),
        Family("ERR", "ERR", "optional", (), "err_{k}", "err", True,
               "sum over ranks i <= K of R_i/i · prod_{j<i}(1 - R_j), R = (2^g - 1) / 2^4 "
               "(gdeval)"),
        Family("RBP", "Rank-biased precision", "optional", ("rel", "p"), "rbp_{k}", "rbp", True,
               "(1 - p) · sum over relevant ranks i <= K of p^(i-1)"),
        Family("R_cap", "Capped recall", "required", ("rel",), "r_cap_{k}", None, True,
               "relevant in top K / min(K, relevant judged) (BEIR, MTEB)"),
    )
}

# lowercase alias -> canonical family (ranx, ir_measures, trec_eval and common spellings).
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
    "numret": "NumRet", "num_ret": "NumRet",
    "numrel": "NumRel", "num_rel": "NumRel",
    "numrelret": "NumRelRet", "num_rel_ret": "NumRelRet",
}

_GAINS = ("linear", "exp")

#: Largest cutoff (and ``rel`` level) accepted: every integer up to it is exact as a float64.
MAX_CUTOFF = 2**53

#: trec_eval's default cutoffs of the measures that take them, used for a bare name
#: (``trec_eval -m P`` prints P_5 ... P_1000; ir_measures' ``parse_trec_measure`` agrees).
#: Only these exact spellings expand: ``p`` or ``Success`` without a cutoff are refused.
TREC_DEFAULT_CUTOFFS: dict[str, tuple[str, tuple[int, ...]]] = {
    "P": ("P", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "recall": ("R", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "ndcg_cut": ("nDCG", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "map_cut": ("AP", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "success": ("HitRate", (1, 5, 10)),
}

# names without a cutoff that a peer reads as something ragreport does not mean by them:
# refused, naming the readings (lowercase keys)
_BARE_CLASHES: dict[str, str] = {
    "precision": "ranx reads 'precision' without k as the precision of the whole ranking "
                 "(relevant retrieved / retrieved, trec_eval's set_P); ir_measures' Precision "
                 "needs a cutoff and trec_eval's P means P_5 ... P_1000",
    "f1": "ranx reads 'f1' without k as F1 of the whole ranking; ragreport's F1 needs a cutoff",
    "hit_rate": "ranx reads 'hit_rate' without k as 1 if any relevant document is retrieved "
                "at all; trec_eval's success means success_1, success_5, success_10",
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
        ``rel_level``.
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
        "and trec_eval names with cutoff lists such as P.5,10 or ndcg_cut.10,20"
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


# no white space inside a name: 'P@ 5' and 'P @5' are refused, as trec_eval and ir_measures
# refuse them (only white space around the whole name is ignored)
_MEASURE_RE = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_\-]*?)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>.*))?$",
    re.S,
)
# the name may hold digits (trec_eval's printed name of F1@5 is ``F1_5``); it is matched lazily
# so that a trailing ``_5`` or ``.5,10`` is read as the cutoff list
_TREC_RE = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_\-]*?)(?:[._](?P<cutoffs>[0-9][0-9.,]*))?$"
)
_DIGITS = re.compile(r"[0-9]+")


def _family_of(raw: str, text: str) -> str:
    if raw in FAMILIES:
        return raw
    fam = _ALIASES.get(raw.lower())
    if fam is None:
        raise MeasureError(f"unknown measure {_quoted(text)}; {_valid_text()}")
    return fam


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


def _parse_unit(raw: str, what: str, text: str) -> float:
    """A decimal number in ASCII digits (``0.5``, ``1``, ``.25``), else a MeasureError (the
    range is checked by :class:`Measure`)."""
    if not _DECIMAL.fullmatch(raw):
        raise MeasureError(f"{what} must be a decimal number between 0 and 1, got "
                           f"{_quoted(raw)} in {_quoted(text)}")
    return float(raw)


def _parse_params(raw: str, text: str) -> tuple[int | None, str, float | None]:
    rel: int | None = None
    gain = "linear"
    p: float | None = None
    seen: set[str] = set()
    for part in filter(None, (p.strip() for p in raw.split(","))):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep:
            raise MeasureError(f"parameter must be key=value, got {_quoted(part)} in "
                               f"{_quoted(text)}")
        if key in seen:
            raise MeasureError(f"parameter {_quoted(key)} is given twice in {_quoted(text)}")
        seen.add(key)
        if key == "rel":
            rel = _whole(value, "rel", text, 0)
        elif key == "gain":
            if value not in _GAINS:
                raise MeasureError(f"gain must be 'linear' or 'exp', got {_quoted(value)} in "
                                   f"{_quoted(text)}")
            gain = value
        elif key == "p":
            p = _parse_unit(value, "p", text)
        else:
            raise MeasureError(f"unknown parameter {_quoted(key)} in {_quoted(text)}; "
                               "valid: rel, gain, p")
    return rel, gain, p


def _bare(name: str, fam: str, text: str) -> list[Measure]:
    """A name without cutoff: trec_eval's default cutoffs, the whole ranking, or an error."""
    if name in TREC_DEFAULT_CUTOFFS:
        family, cuts = TREC_DEFAULT_CUTOFFS[name]
        return [Measure(family, k) for k in cuts]
    clash = _BARE_CLASHES.get(name.lower())
    if clash is not None:
        raise MeasureError(f"{_quoted(text)} is ambiguous without a cutoff: {clash}; "
                           f"give a cutoff, e.g. {fam}@10")
    if FAMILIES[fam].cutoff == "required":
        trec = next((t for t, (f, _) in TREC_DEFAULT_CUTOFFS.items() if f == fam), None)
        hint = f", or {trec!r} for trec_eval's default cutoffs" if trec else ""
        raise MeasureError(f"{fam} needs a cutoff, e.g. {fam}@5{hint} (got {_quoted(text)})")
    return [Measure(fam)]


def parse_measures(text: str | Measure) -> list[Measure]:
    """Parse one measure name, which may expand to several (trec_eval cutoff lists).

    Accepts canonical names (``nDCG@10``, ``P(rel=2)@5``), lowercase ranx names (``ndcg@10``,
    ``mrr``, ``hit_rate@5``, ``hits@3``, ``map``), ir_measures names (``Success@5``) and
    trec_eval names, with cutoff lists (``P.5,10``, ``ndcg_cut.10,20``, ``recip_rank``), as
    printed (``P_5``, ``ndcg_cut_10``) or bare (``P``, ``recall``, ``ndcg_cut``, ``map_cut``,
    ``success``: trec_eval's default cutoffs, see :data:`TREC_DEFAULT_CUTOFFS`).

    Raises
    ------
    MeasureError
        For an unknown family, a malformed cutoff or parameter, a cutoff outside 1..2**53,
        or a name the peers read differently; the message says what was received and what is
        valid.

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
    """
    if isinstance(text, Measure):
        return [text]
    if not isinstance(text, str) or not text.strip():
        raise MeasureError(f"a measure name must be a non-empty string, got {text!r}")
    body = text.strip()
    m = _MEASURE_RE.match(body)
    if m and (m.group("cutoff") is not None or m.group("params") is not None
              or _is_family_name(m.group("name"))):
        fam = _family_of(m.group("name"), text)
        rel, gain, p = _parse_params(m.group("params") or "", text)
        if m.group("cutoff") is None:
            if m.group("params") is None:
                return _bare(m.group("name"), fam, text)
            if FAMILIES[fam].cutoff == "required":
                raise MeasureError(f"{fam} needs a cutoff, e.g. {fam}@5 (got {_quoted(text)})")
            return [Measure(fam, None, rel, gain, p)]
        if FAMILIES[fam].at == "recall":  # IPrec@0.5: a recall level, not a cutoff
            recall = _parse_unit(m.group("cutoff"), "recall level", text)
            return [Measure(fam, None, rel, gain, p, recall)]
        return [Measure(fam, _parse_cutoff(m.group("cutoff"), text), rel, gain, p)]
    t = _TREC_RE.match(body)
    if t:
        fam = _family_of(t.group("name"), text)
        raw_cuts = t.group("cutoffs")
        if raw_cuts is None:
            return _bare(t.group("name"), fam, text)
        cuts = raw_cuts.split(",")
        if any(not c for c in cuts):
            raise MeasureError(f"empty cutoff in the list {_quoted(raw_cuts)} of "
                               f"{_quoted(text)}")
        return [Measure(fam, _parse_cutoff(c, text)) for c in cuts]
    raise MeasureError(f"malformed measure {_quoted(text)}; {_valid_text()}")


def _is_family_name(name: str) -> bool:
    return name in FAMILIES or name.lower() in _ALIASES


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
