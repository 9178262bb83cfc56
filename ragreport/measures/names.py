"""Every peer's spelling of a measure, read into a :class:`~ragreport.measures.Measure`.

One grammar for trec_eval, ir_measures, ranx, MTEB/BEIR and LlamaIndex names, each read with
the meaning that peer gives it or refused with a message naming the readings (see
:mod:`ragreport.measures`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..errors import MeasureError
from .model import FAMILIES, GAINS, MAX_CUTOFF, Measure, quoted, short, valid_text

__all__ = ["DEFAULT_MEASURES", "PARAMS", "TREC_DEFAULT_CUTOFFS", "TREC_DEFAULT_MEASURES",
           "TREC_IPREC_LEVELS", "Param", "normalize_measures", "parse_family", "parse_measure",
           "parse_measures"]


# lowercase alias -> canonical family: ranx, ir_measures, trec_eval, MTEB/BEIR and common
# spellings, each with the meaning the peer that spells it so gives it (docs/measures.md).
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
        raise MeasureError(f"{quoted(text)} is read differently by the peers: {_CLASHES[key]}")
    if key in _NOT_IMPLEMENTED:
        raise MeasureError(f"{quoted(text)} is {_NOT_IMPLEMENTED[key]}, which ragreport does "
                           f"not compute; {valid_text()}")


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
        raise MeasureError(f"unknown measure {quoted(text)}; {valid_text()}")
    return fam, "linear"


def _whole(raw: str, what: str, text: str, low: int) -> int:
    """A whole number from 0 to 2**53 written in ASCII digits, else a MeasureError."""
    if not _DIGITS.fullmatch(raw):
        raise MeasureError(f"{what} must be a whole number between {low} and 2**53, got "
                           f"{quoted(raw)} in {quoted(text)}")
    if len(raw.lstrip("0")) > len(str(MAX_CUTOFF)) or int(raw) > MAX_CUTOFF:
        raise MeasureError(f"{what} must be between {low} and 2**53, got {short(raw)} in "
                           f"{quoted(text)}")
    return int(raw)


def _parse_cutoff(raw: str, text: str) -> int:
    if raw.startswith("-") and _DIGITS.fullmatch(raw[1:]):
        raise MeasureError(f"cutoff must be between 1 and 2**53, got {short(raw)} in "
                           f"{quoted(text)}")
    value = _whole(raw, "cutoff", text, 1)
    if value < 1:
        raise MeasureError(f"cutoff must be between 1 and 2**53, got {value} in {quoted(text)}")
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
                           f"{quoted(raw)} in {quoted(text)}")
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


def _unquote(value: str) -> str:
    """``'exp-log2'`` or ``"exp-log2"`` (ir_measures prints string values quoted) unquoted."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


@dataclass(frozen=True)
class Param:
    """One parameter a measure's name may carry in parentheses (ir_measures' ``ParamInfo``).

    ``read(value, text, family, part)`` checks the value (``text``: the whole name, for the
    message; ``part``: ``key=value`` as written) and returns the :class:`_Params` fields it
    sets (none for a parameter accepted only at its default); ``shown`` is how the list of
    valid parameters names it, among ragreport's or (``peer``) ir_measures' own.
    """

    key: str
    read: Callable[[str, str, str, str], dict[str, Any]]
    shown: str
    peer: bool = False


def _gain(value: str, text: str, fam: str, part: str) -> dict[str, Any]:
    if value not in GAINS:
        raise MeasureError(f"gain must be 'linear' or 'exp', got {quoted(value)} in "
                           f"{quoted(text)}")
    return {"gain": value}


def _dcg(value: str, text: str, fam: str, part: str) -> dict[str, Any]:
    if value not in _DCG:
        raise MeasureError(f"dcg must be 'log2' (gain = grade) or 'exp-log2' (gain = "
                           f"2^grade - 1), got {quoted(value)} in {quoted(text)}")
    if fam != "nDCG":
        raise MeasureError(f"{fam} takes no 'dcg' parameter (nDCG does)")
    return {"gain": _DCG[value]}


def _false_only(key: str, refusal: str) -> Callable[[str, str, str, str], dict[str, Any]]:
    """A flag ragreport has only at False (``refusal``: what True would be, not computed)."""

    def read(value: str, text: str, fam: str, part: str) -> dict[str, Any]:
        if value in _TRUE:
            raise MeasureError(f"{key}=True ({refusal}) is not implemented (got "
                               f"{quoted(text)})")
        if value not in _FALSE:
            raise MeasureError(f"{key} must be True or False, got {quoted(value)} in "
                               f"{quoted(text)}")
        return {}

    return read


def _beta(value: str, text: str, fam: str, part: str) -> dict[str, Any]:
    if fam != "SetF" or not (_DECIMAL.fullmatch(value) and float(value) == 1.0):
        raise MeasureError(f"only SetF takes beta, and only beta = 1 is implemented (the "
                           f"harmonic mean of SetP and SetR), got {quoted(part)} in "
                           f"{quoted(text)}")
    return {}


#: Every parameter a name may carry, ragreport's and ir_measures' spellings.
PARAMS: dict[str, Param] = {p.key: p for p in (
    Param("rel", lambda v, t, f, _: {"rel": _whole(v, "rel", t, 0)}, "rel"),
    Param("gain", _gain, "gain"),
    Param("p", lambda v, t, f, _: {"p": _parse_unit(v, "p", t)}, "p"),
    Param("dcg", _dcg, "dcg", peer=True),
    Param("cutoff", lambda v, t, f, _: {"cutoff": _parse_cutoff(v, t)}, "cutoff", peer=True),
    Param("recall", lambda v, t, f, _: {"recall": _parse_unit(v, "recall level", t)},
          "recall", peer=True),
    Param("judged_only", _false_only("judged_only", "ir_measures: unjudged documents are "
                                     "dropped before scoring"), "judged_only=False", peer=True),
    Param("beta", _beta, "beta=1", peer=True),
    Param("relative", _false_only("relative", "ir_measures' SetRelP, trec_eval's "
                                  "set_relative_P"), "relative=False", peer=True),
)}
#: ``gain`` and ``dcg`` set the same field: one of them at most.
_SAME_FIELD = {"gain", "dcg"}
_VALID_PARAMS = (f"valid: {', '.join(p.shown for p in PARAMS.values() if not p.peer)}, and "
                 f"ir_measures' {', '.join(p.shown for p in PARAMS.values() if p.peer)}")


def _parse_params(raw: str, text: str, fam: str) -> _Params:
    """The parameters of ``text``'s family ``fam``, ragreport's and ir_measures' spellings."""
    out = _Params()
    if not raw:
        return out
    if _GAINS_PARAM.search(raw):
        raise MeasureError(f"custom gains (ir_measures' gains={{...}}) are not implemented; "
                           f"gain=exp or dcg=exp-log2 gives 2^grade - 1 (got {quoted(text)})")
    seen: set[str] = set()
    for part in filter(None, (q.strip() for q in raw.split(","))):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep:
            raise MeasureError(f"parameter must be key=value, got {quoted(part)} in "
                               f"{quoted(text)}")
        if key in seen or {key, *seen} >= _SAME_FIELD:
            raise MeasureError(f"parameter {quoted(key)} is given twice in {quoted(text)}")
        seen.add(key)
        spec = PARAMS.get(key)
        if spec is None:
            raise MeasureError(f"unknown parameter {quoted(key)} in {quoted(text)}; "
                               f"{_VALID_PARAMS}")
        out = replace(out, **spec.read(_unquote(value), text, fam, part))
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
            raise MeasureError(f"{quoted(text)} is ambiguous without a cutoff: {clash}")
        if name in _BARE_AS:
            return [Measure(_BARE_AS[name], rel=rel)]
    if plain and name in TREC_DEFAULT_CUTOFFS:
        family, cuts = TREC_DEFAULT_CUTOFFS[name]
        return [Measure(family, k) for k in cuts]
    if plain and name == "iprec_at_recall":
        return [Measure("IPrec", recall=r) for r in TREC_IPREC_LEVELS]
    if FAMILIES[fam].at == "recall":
        hint = "" if name == fam else (f", or 'iprec_at_recall' for trec_eval's 11 levels "
                                       f"(got {quoted(text)})")
        raise MeasureError(f"{fam} needs a recall level in [0, 1], e.g. {fam}@0.5{hint}")
    if whole is None:
        trec = next((t for t, (f, _) in TREC_DEFAULT_CUTOFFS.items() if f == fam), None)
        if trec is not None and trec.lower() in _BARE_CLASHES:
            trec = f"{trec}.{','.join(map(str, TREC_DEFAULT_CUTOFFS[trec][1]))}"
        hint = f", or {trec!r} for trec_eval's default cutoffs" if trec else ""
        ranx = next((b for b, s in _BARE_AS.items() if _ALIASES[b] == fam), None)
        set_hint = (f"; ranx's bare {ranx!r} (the whole ranking) is {_BARE_AS[ranx]}"
                    if ranx else "")
        raise MeasureError(f"{fam} needs a cutoff, e.g. {fam}@5{hint} (got {quoted(text)})"
                           f"{set_hint}")
    return [whole]


def parse_measures(text: str | Measure) -> list[Measure]:
    """Parse one measure name, which may expand to several (trec_eval cutoff lists).

    Every peer's spelling is read with that peer's meaning (docs/measures.md's table lists
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
        raise MeasureError(f"expected one measure, {quoted(str(text))} names {len(found)}")
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
        raise MeasureError(f"malformed measure {quoted(text)}; {valid_text()}")
    name, listed, parens, at = found.group("name", "list", "params", "at")
    fam, gain = _family_of(name, text)
    params = _parse_params(parens or "", text, fam)
    if params.gain is not None:
        if name.lower() in _PRESETS and params.gain != gain:
            raise MeasureError(f"{name} has gain={gain}; got {quoted(text)}")
        gain = params.gain
    rel = params.rel if level is None else _ranx_level(level, params.rel, fam, text, body)
    if fam == "NumRet" and rel is not None:
        fam = "NumRelRet"  # ir_measures: NumRet(rel=1) counts the retrieved with grade >= 1
    values: list[str] | None = None
    if listed is not None:
        values = listed.split(",")
        if any(not v for v in values):
            raise MeasureError(f"empty cutoff in the list {quoted(listed)} of "
                               f"{quoted(text)}")
    elif at is not None:
        values = [at]
    if values is not None and name.lower() == "rbp" and name != "RBP" and parens is None:
        _refuse_peer_rbp(values, rel, text)
    if FAMILIES[fam].at == "recall":
        if params.cutoff is not None:
            raise MeasureError(f"{fam} takes a recall level, not a cutoff (got "
                               f"{quoted(text)})")
        if values is not None and params.recall is not None:
            raise MeasureError(f"the recall level is given twice in {quoted(text)}")
        levels = ([_parse_unit(v, "recall level", text) for v in values] if values is not None
                  else [params.recall] if params.recall is not None else [])
        if not levels:
            return _bare(name, fam, text, rel, None, plain=parens is None and level is None,
                         parens=parens is not None)
        return [Measure(fam, None, rel, gain, params.p, r) for r in levels]
    if values is not None and params.cutoff is not None:
        raise MeasureError(f"the cutoff is given twice in {quoted(text)}")
    if values is None and params.cutoff is None:
        if family:
            return [Measure(fam, None, rel, gain, params.p, params.recall)]
        whole = None if FAMILIES[fam].cutoff == "required" else Measure(
            fam, None, rel, gain, params.p, params.recall)
        return _bare(name, fam, text, rel, whole, plain=parens is None and level is None,
                     parens=parens is not None)
    if fam == "SetF" and listed is not None:  # trec_eval's set_F.0.5: beta = 0.5
        if not all(_DECIMAL.fullmatch(v) and float(v) == 1.0 for v in listed.split(",")):
            raise MeasureError(f"trec_eval's {quoted(text)} is set_F with beta = {listed}; "
                               f"only beta = 1 is implemented (SetF, set_F)")
        return [Measure(fam, None, rel, gain, params.p)]
    cuts = ([_parse_cutoff(v, text) for v in values] if values is not None
            else [params.cutoff])
    return [Measure(fam, k, rel, gain, params.p, params.recall) for k in cuts]


def _ranx_level(level: int, rel: int | None, fam: str, text: str, body: str) -> int:
    """The relevance level of ranx's ``-l`` suffix (refused with ``rel=`` or on nDCG)."""
    if rel is not None:
        raise MeasureError(f"parameter 'rel' is given twice in {quoted(text)}")
    if fam == "nDCG":
        # right whether or not the preset is given: a suffix is never read as the
        # evaluation's level (the other measures would change with it)
        raise MeasureError(f"{quoted(text)}: ranx's -l{level} leaves grades below {level} "
                           f"out of nDCG's gains; ragreport's nDCG has no relevance level "
                           f"of its own (every positive grade is a gain, as in trec_eval), "
                           f"even with compat='ranx': for ranx's number ask for "
                           f"{quoted(body)} with compat='ranx' and rel_level={level} "
                           f"(--compat ranx -l {level} -m {quoted(body)}), which sets the "
                           f"level of every measure")
    return level


def _refuse_peer_rbp(values: list[str], rel: int | None, text: str) -> None:
    """``rbp.95`` / ``rbp@10``: the peers read the number differently; say how to write
    each one's measure."""
    digits = values[0] if values[0].isdigit() and len(values) == 1 else "95"
    lvl = 1 if rel is None else rel
    # ranx 0.3.21's rank_biased_precision weights each rank by the grade of a document
    # of grade >= rel_lvl (its docstring says 0/1): ragreport's graded RBP, with ranx's
    # reading of grades below the level (compat='ranx')
    at_level = "" if lvl == 1 else (f" with compat='ranx' and rel_level={lvl} (--compat "
                                    f"ranx -l {lvl})")
    raise MeasureError(f"{quoted(text)} is read differently by the peers: ranx reads the "
                       f"number after rbp as the persistence (rbp.95: p = 0.95) and "
                       f"weights each rank by the grade of a document of grade >= {lvl}; "
                       f"ir_measures' RBP@K is a cutoff, graded RBP with p = 0.8; write "
                       f"RBP(p=0.{short(digits)}){at_level} for ranx's or "
                       f"RBP(p=0.8)@{short(digits)} for ir_measures'")


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
        raise MeasureError(f"expected one measure, {quoted(str(text))} names {len(found)} "
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
