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
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import MeasureError

__all__ = [
    "DEFAULT_MEASURES",
    "FAMILIES",
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
    """

    name: str
    title: str
    cutoff: str
    params: tuple[str, ...]
    trec_name: str
    trec_uncut: str | None
    bounded: bool
    definition: str


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
        Family("RR", "Reciprocal rank", "optional", ("rel",), "recip_rank_{k}", "recip_rank", True,
               "1 / rank of the first relevant document (0 if none, or none in top K)"),
        Family("nDCG", "nDCG", "optional", ("gain",), "ndcg_cut_{k}", "ndcg", True,
               "DCG@K / IDCG@K, gain = grade (or 2^grade-1), discount log2(rank+1)"),
        Family("AP", "Average precision", "optional", ("rel",), "map_cut_{k}", "map", True,
               "sum of P@rank at each relevant rank <= K / relevant judged"),
        Family("Rprec", "R-precision", "none", ("rel",), "Rprec", "Rprec", True,
               "relevant in top R / R, R = relevant judged for the query"),
        Family("NumRet", "Retrieved", "none", (), "num_ret", "num_ret", False,
               "number of documents retrieved (after max_depth)"),
        Family("NumRel", "Relevant", "none", ("rel",), "num_rel", "num_rel", False,
               "number of relevant documents judged"),
        Family("NumRelRet", "Relevant retrieved", "none", ("rel",), "num_rel_ret",
               "num_rel_ret", False, "number of relevant documents retrieved"),
    )
}

# lowercase alias -> canonical family (ranx, ir_measures, trec_eval and common spellings)
_ALIASES: dict[str, str] = {
    "p": "P", "precision": "P", "prec": "P",
    "r": "R", "recall": "R",
    "f1": "F1", "f": "F1",
    "hitrate": "HitRate", "hit_rate": "HitRate", "hits": "HitRate", "success": "HitRate",
    "rr": "RR", "mrr": "RR", "recip_rank": "RR", "reciprocal_rank": "RR",
    "ndcg": "nDCG", "ndcg_cut": "nDCG",
    "ap": "AP", "map": "AP", "map_cut": "AP",
    "rprec": "Rprec", "r-prec": "Rprec", "r_prec": "Rprec", "r-precision": "Rprec",
    "numret": "NumRet", "num_ret": "NumRet",
    "numrel": "NumRel", "num_rel": "NumRel",
    "numrelret": "NumRelRet", "num_rel_ret": "NumRelRet",
}

_GAINS = ("linear", "exp")


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

    Examples
    --------
    >>> Measure("P", 5)
    Measure('P@5')
    >>> str(Measure("nDCG", 10, gain="exp"))
    'nDCG(gain=exp)@10'
    >>> Measure("P", 5) == parse_measure("precision@5")
    True
    """

    name: str
    cutoff: int | None = None
    rel: int | None = None
    gain: str = field(default="linear")

    def __post_init__(self) -> None:
        fam = FAMILIES.get(self.name)
        if fam is None:
            raise MeasureError(f"unknown measure family {self.name!r}; {_valid_text()}")
        if self.cutoff is not None:
            if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
                raise MeasureError(f"cutoff must be an integer, got {self.cutoff!r}")
            if self.cutoff < 1:
                raise MeasureError(f"cutoff must be >= 1, got {self.cutoff} in {self.name}")
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
        if self.gain not in _GAINS:
            raise MeasureError(f"gain must be 'linear' or 'exp', got {self.gain!r}")
        if self.gain != "linear" and "gain" not in fam.params:
            raise MeasureError(f"{self.name} takes no 'gain' parameter")

    @property
    def family(self) -> Family:
        """The registry entry of this measure's family."""
        return FAMILIES[self.name]

    @property
    def params_text(self) -> str:
        """Non-default parameters as ``"(rel=2)"``, or ``""``."""
        parts = []
        if self.rel is not None:
            parts.append(f"rel={self.rel}")
        if self.gain != "linear":
            parts.append(f"gain={self.gain}")
        return f"({','.join(parts)})" if parts else ""

    def __str__(self) -> str:
        cut = f"@{self.cutoff}" if self.cutoff is not None else ""
        return f"{self.name}{self.params_text}{cut}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def at(self, cutoff: int | None) -> Measure:
        """The same measure with another cutoff.

        >>> Measure("P", 5).at(10)
        Measure('P@10')
        """
        return Measure(self.name, cutoff, self.rel, self.gain)

    @property
    def curve_key(self) -> Measure:
        """The family-with-parameters this measure reads its metric-vs-K curve from."""
        return Measure(self.name, None, self.rel, self.gain)

    @property
    def has_curve(self) -> bool:
        """True when the family is defined for every K (and so has a metric-vs-K curve)."""
        return self.family.cutoff != "none"

    @property
    def trec_name(self) -> str:
        """trec_eval's name for this measure (``P_5``, ``ndcg_cut_10``, ``recip_rank``).

        >>> Measure("nDCG", 10).trec_name, Measure("RR").trec_name, Measure("AP", 100).trec_name
        ('ndcg_cut_10', 'recip_rank', 'map_cut_100')
        """
        fam = self.family
        if self.cutoff is None:
            base = fam.trec_uncut or fam.trec_name
        else:
            base = fam.trec_name.format(k=self.cutoff)
        return base + self.params_text


def _valid_text() -> str:
    names = ", ".join(
        f"{f.name}@K" if f.cutoff == "required" else
        (f"{f.name}[@K]" if f.cutoff == "optional" else f.name)
        for f in FAMILIES.values()
    )
    return (
        f"valid measures: {names}; parameters: P(rel=2)@5, nDCG(gain=exp)@10; "
        "aliases such as ndcg@10, mrr, recall@5, hit_rate@5, map, Success@5, "
        "and trec_eval names with cutoff lists such as P.5,10 or ndcg_cut.10,20"
    )


_MEASURE_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z0-9_\-]*?)\s*(?:\((?P<params>[^)]*)\))?\s*"
    r"(?:@\s*(?P<cutoff>[^\s]+))?\s*$"
)
# the name may hold digits (trec_eval's printed name of F1@5 is ``F1_5``); it is matched lazily
# so that a trailing ``_5`` or ``.5,10`` is read as the cutoff list
_TREC_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z0-9_\-]*?)(?:[._](?P<cutoffs>[0-9][0-9.,]*))?\s*$"
)


def _family_of(raw: str, text: str) -> str:
    if raw in FAMILIES:
        return raw
    fam = _ALIASES.get(raw.lower())
    if fam is None:
        raise MeasureError(f"unknown measure {text!r}; {_valid_text()}")
    return fam


def _parse_cutoff(raw: str, text: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise MeasureError(
            f"cutoff must be a whole number >= 1, got {raw!r} in {text!r}"
        ) from None
    if value < 1:
        raise MeasureError(f"cutoff must be >= 1, got {value} in {text!r}")
    return value


def _parse_params(raw: str, text: str) -> tuple[int | None, str]:
    rel: int | None = None
    gain = "linear"
    for part in filter(None, (p.strip() for p in raw.split(","))):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep:
            raise MeasureError(f"parameter must be key=value, got {part!r} in {text!r}")
        if key == "rel":
            try:
                rel = int(value)
            except ValueError:
                raise MeasureError(f"rel must be an integer, got {value!r} in {text!r}") from None
        elif key == "gain":
            if value not in _GAINS:
                raise MeasureError(f"gain must be 'linear' or 'exp', got {value!r} in {text!r}")
            gain = value
        else:
            raise MeasureError(f"unknown parameter {key!r} in {text!r}; valid: rel, gain")
    return rel, gain


def parse_measures(text: str | Measure) -> list[Measure]:
    """Parse one measure name, which may expand to several (trec_eval cutoff lists).

    Accepts canonical names (``nDCG@10``, ``P(rel=2)@5``), lowercase ranx names (``ndcg@10``,
    ``mrr``, ``hit_rate@5``, ``map``), ir_measures names (``Success@5``) and trec_eval names,
    with cutoff lists (``P.5,10``, ``ndcg_cut.10,20``, ``recip_rank``) or as printed
    (``P_5``, ``ndcg_cut_10``).

    Raises
    ------
    MeasureError
        For an unknown family, a malformed cutoff or parameter; the message lists what is valid.

    Examples
    --------
    >>> [str(m) for m in parse_measures("ndcg_cut.10,20")]
    ['nDCG@10', 'nDCG@20']
    >>> [str(m) for m in parse_measures("success_5")]
    ['HitRate@5']
    """
    if isinstance(text, Measure):
        return [text]
    if not isinstance(text, str) or not text.strip():
        raise MeasureError(f"a measure name must be a non-empty string, got {text!r}")
    m = _MEASURE_RE.match(text)
    if m and (m.group("cutoff") is not None or m.group("params") is not None
              or _is_family_name(m.group("name"))):
        fam = _family_of(m.group("name"), text)
        rel, gain = _parse_params(m.group("params") or "", text)
        cutoff = _parse_cutoff(m.group("cutoff"), text) if m.group("cutoff") is not None else None
        if cutoff is None and FAMILIES[fam].cutoff == "required":
            raise MeasureError(f"{fam} needs a cutoff, e.g. {fam}@5 (got {text!r})")
        return [Measure(fam, cutoff, rel, gain)]
    t = _TREC_RE.match(text)
    if t:
        fam = _family_of(t.group("name"), text)
        raw_cuts = t.group("cutoffs")
        if raw_cuts is None:
            if FAMILIES[fam].cutoff == "required":
                raise MeasureError(f"{fam} needs a cutoff, e.g. {fam}@5 (got {text!r})")
            return [Measure(fam)]
        cuts = [c for c in raw_cuts.split(",") if c]
        if not cuts:
            raise MeasureError(f"empty cutoff list in {text!r}")
        return [Measure(fam, _parse_cutoff(c, text)) for c in cuts]
    raise MeasureError(f"malformed measure {text!r}; {_valid_text()}")


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
        raise MeasureError(f"expected one measure, {text!r} names {len(found)}")
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
