"""Presets that give the conventions of a peer tool in one word: ``compat="beir"``.

Users bring numbers from other tools and ask why theirs differ. Each preset sets what that
tool does, read from its own source (the commit is named in :data:`PRESETS`):

``trec_eval``
    ragreport's defaults: score descending, ties by document id descending, relevant =
    grade >= 1, linear nDCG gains, the mean over the queries both inputs hold, full precision,
    scores compared as 64-bit doubles (trec_eval 10).
``beir``
    ``EvaluateRetrieval.evaluate`` (beir-cellar/beir): identical query and document ids
    dropped (its default), pytrec_eval's measures at k = 1, 3, 5, 10, 100, 1000, each mean
    over the queries pytrec_eval evaluated, rounded to 5 decimals; scores compared as 32-bit
    floats, as pytrec_eval stores them (two scores equal in float32 tie, ordered by document
    id descending).
``mteb``
    ``calculate_retrieval_scores`` (embeddings-benchmark/mteb, v2): pytrec_eval's nDCG, MAP,
    recall, P and success at k = 1, 3, 5, 10, 20, 100, 1000 rounded to 5 decimals, scores
    compared as 32-bit floats (pytrec_eval's); its MRR@k
    (ties by document id descending since MTEB 2.18.19) not rounded; every qrels query counts
    (MTEB's results list each query, ``{}`` when nothing was found: ``complete``). Identical
    ids are kept (MTEB's default; the tasks that drop them set ``ignore_identical_ids=True``).
``ranx``
    ``ranx.evaluate``: trec_eval's measures at the cutoffs asked for, full precision; its nDCG
    counts only grades >= the relevance level as gains.
``llamaindex``
    ``RetrieverEvaluator`` metrics (run-llama/llama_index, llama-index-core): lists taken in
    the order given, binary relevance (an expected id is relevant, gain 1), ``precision`` =
    set precision (SetP), ``recall`` = SetR, ``mrr`` = RR, ``ap`` = AP and ``ndcg`` = nDCG of
    the whole retrieved list with the ideal over every expected id.

A preset fills in every option the caller leaves unset; an option given explicitly wins, and
the conventions say so (``"beir, except ignore_identical_ids=False"``). Means the peer rounds
are rounded by :meth:`ragreport.EvaluationResult.mean` (so reports, JSON and target checks
see the peer's number); per-query values and curves are never rounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import RagReportError

if TYPE_CHECKING:
    from .data import Qrels
    from .measures import Measure

__all__ = ["COMPAT_NAMES", "PRESETS", "SCORE_PRECISIONS", "Preset", "Resolved", "check_compat",
           "check_score_precision", "peer_mean", "prepare_qrels", "prepared_grades", "resolve"]


@dataclass(frozen=True)
class Preset:
    """The conventions of one peer tool.

    Attributes
    ----------
    name : str
        The word that selects it (``compat=``, ``--compat``, ``compat =`` in a targets file).
    peer : str
        The peer and the code the preset follows.
    source : str
        Repository, path and commit the conventions were read from.
    measures : tuple of str or None
        Measures computed when none are asked for (None: ragreport's defaults).
    options : dict
        Engine options the peer fixes or defaults (``order``, ``ignore_identical_ids``,
        ``complete``, ``rel_level``, ``score_precision``); a caller's explicit value wins and
        is named as an exception.
    round_digits : int or None
        Decimals the peer rounds its means to (Python's ``round``), or None.
    rounded : frozenset of str
        Measure families whose means the peer rounds.
    grades : str
        ``"as_is"``; ``"binary"`` (every relevant document has the same gain: LlamaIndex's
        expected ids carry no grade); ``"from_level"`` (positive grades below the relevance
        level have gain 0: ranx's nDCG).
    notes : tuple of str
        Where the peer may still give another number, and how to get it.
    """

    name: str
    peer: str
    source: str
    measures: tuple[str, ...] | None
    options: tuple[tuple[str, Any], ...]
    round_digits: int | None = None
    rounded: frozenset[str] = frozenset()
    grades: str = "as_is"
    notes: tuple[str, ...] = ()

    @property
    def option_values(self) -> dict[str, Any]:
        return dict(self.options)

    def rounds(self, measure: Measure) -> bool:
        """Whether the peer rounds the mean of ``measure``."""
        return self.round_digits is not None and measure.name in self.rounded


def _at(families: tuple[str, ...], ks: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(f"{f}@{k}" for f in families for k in ks)


BEIR_CUTOFFS = (1, 3, 5, 10, 100, 1000)
MTEB_CUTOFFS = (1, 3, 5, 10, 20, 100, 1000)
_SCORE = ("order", "score")
#: pytrec_eval (trec_eval 9's ``float sim``) keeps each score as a 32-bit float
_FLOAT32 = ("score_precision", "float32")
#: ``score_precision`` values: how scores are compared when ranking (see :func:`resolve`)
SCORE_PRECISIONS = ("float64", "float32")

PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset(
        "trec_eval", "trec_eval 10 (ragreport's defaults)",
        "usnistgov/trec_eval",
        None, (_SCORE, ("ignore_identical_ids", False), ("score_precision", "float64")),
        notes=("means over the queries both qrels and run hold, full precision; -c, -l and "
               "-M are trec_eval's own options",
               "scores compared as 64-bit doubles, as trec_eval 10 reads them; trec_eval 9 "
               "and pytrec_eval keep 32-bit floats, so scores equal in float32 tie there "
               "(--score-precision float32)"),
    ),
    Preset(
        "beir", "BEIR EvaluateRetrieval.evaluate (pytrec_eval underneath)",
        "beir-cellar/beir beir/retrieval/evaluation.py, custom_metrics.py @ ef83d29",
        _at(("nDCG", "AP", "R", "P"), BEIR_CUTOFFS),
        (_SCORE, ("ignore_identical_ids", True), ("rel_level", 1), _FLOAT32),
        round_digits=5, rounded=frozenset({"nDCG", "AP", "R", "P", "RR", "R_cap", "HitRate"}),
        notes=("scores are compared as 32-bit floats, as pytrec_eval stores them: two "
               "scores equal in float32 tie and are ordered by document id descending "
               "(--score-precision float64 compares the full values)",
               "each mean is over the queries pytrec_eval evaluated (in both qrels and run, "
               "an emptied result list scoring 0) and rounded to 5 decimals; BEIR's dense "
               "search lists every query (an empty dict when nothing was found), its BM25 "
               "search only those with a hit: --complete counts a qrels query missing from "
               "the run as 0, as the former",
               "BEIR's evaluate_custom (MRR@k, R_cap@k, Accuracy@k) sorts by score alone "
               "(tied scores stay in the run's order, not by document id) and divides by "
               "every qrels query: the same numbers when no tie straddles a relevant "
               "document and the run answers every qrels query (--complete counts missing "
               "ones as 0); its R_cap@k fails on a query without a relevant document, "
               "ragreport scores it 0"),
    ),
    Preset(
        "mteb", "MTEB RetrievalEvaluator.evaluate / calculate_retrieval_scores (v2)",
        "embeddings-benchmark/mteb mteb/_evaluators/retrieval_metrics.py @ a905523",
        _at(("nDCG", "AP", "R", "P", "RR", "HitRate"), MTEB_CUTOFFS),
        # every query of the task is in MTEB's results ({} when nothing was found: scores 0);
        # identical ids: each task decides (default False)
        (_SCORE, ("rel_level", 1), ("complete", True), _FLOAT32),
        round_digits=5, rounded=frozenset({"nDCG", "AP", "R", "P", "HitRate"}),
        notes=("scores are compared as 32-bit floats, as pytrec_eval stores them (its "
               "mrr_at_k too, from the same float32 ties)",
               "MTEB's search lists every query of the task in its results, an empty dict "
               "when nothing was retrieved, which scores 0 in every mean: so a qrels query "
               "missing from the run counts as 0 here (complete); ndcg_at_k, map_at_k, "
               "recall_at_k, precision_at_k and hit_rate_at_k are rounded to 5 decimals, "
               "mrr_at_k is the plain mean, not rounded",
               "mrr_at_k breaks ties by document id descending since MTEB 2.18.19 (#5136); "
               "earlier versions kept the run's order for tied scores, so a constant scorer "
               "could reach MRR@10 = 1.0",
               "identical ids are kept, MTEB's default; ArguAna, FEVER, FiQA2018, MSMARCO "
               "and other tasks set ignore_identical_ids: add --ignore-identical-ids"),
    ),
    Preset(
        "ranx", "ranx.evaluate",
        "AmenRa/ranx ranx/metrics/*.py, ranx/data_structures/common.py @ 2cae52f",
        None, (_SCORE, ("ignore_identical_ids", False)), grades="from_level",
        notes=("relevant = grade >= rel_lvl (1); nDCG gains only from grades >= rel_lvl, "
               "as ranx's clean_qrels keeps them",
               "ranx sorts each ranking with numba's unstable quicksort: tied scores come in "
               "an order of its own (ragreport: by document id descending)",
               "ranx needs the run and the qrels to hold the same queries "
               "(make_comparable=True adds the missing ones as empty results: --complete); a "
               "query without a relevant document scores 0, as here"),
    ),
    Preset(
        "llamaindex", "LlamaIndex RetrieverEvaluator metrics (llama-index-core)",
        "run-llama/llama_index llama-index-core/llama_index/core/evaluation/retrieval/"
        "metrics.py (llama-index-core 0.14.25)",
        ("RR", "SetP", "SetR", "AP", "nDCG"),
        (("order", "given"), ("ignore_identical_ids", False)), grades="binary",
        notes=("retrieved ids in the order given, never re-sorted; relevance is binary "
               "(an expected id is relevant, gain 1); precision = set precision (SetP), "
               "recall = SetR, mrr = RR, ap = AP and ndcg = nDCG of the whole list, its "
               "ideal over every expected id",
               "hit_rate is HitRate@K at the retriever's similarity_top_k (K at least the "
               "longest list: -m HitRate@10)",
               "LlamaIndex raises on a query with no retrieved or no expected id; ragreport "
               "scores it 0 (--no-relevant skip leaves the latter out); it counts a "
               "document listed twice once in precision and recall but each time in ap and "
               "ndcg, which ragreport refuses (or keeps once: --keep-first-duplicate)"),
    ),
)}

#: Every preset name, in the order the help lists them.
COMPAT_NAMES: tuple[str, ...] = tuple(PRESETS)


def check_compat(compat: Any, where: str = "compat") -> str | None:
    """``compat`` validated: None or the name of a preset (else a RagReportError saying what
    was received and what is valid).

    >>> check_compat("beir"), check_compat(None)
    ('beir', None)
    """
    if compat is None:
        return None
    if not isinstance(compat, str) or compat not in PRESETS:
        shown = repr(compat) if isinstance(compat, str) and len(compat) <= 60 else \
            (repr(compat[:59]) + "…" if isinstance(compat, str) else type(compat).__name__)
        raise RagReportError(f"{where} must be one of {', '.join(COMPAT_NAMES)}, got {shown}")
    return compat


@dataclass(frozen=True)
class Resolved:
    """Options after a preset filled in what the caller left unset."""

    compat: str | None
    order: str
    ignore_identical_ids: bool
    exceptions: tuple[str, ...] = ()
    """``option=value`` given explicitly against the preset's value."""
    complete: bool = False
    score_precision: str = "float64"


def check_score_precision(value: Any, where: str = "score_precision") -> str:
    """``value`` validated: ``"float64"`` or ``"float32"`` (else a RagReportError saying what
    was received).

    >>> check_score_precision("float32")
    'float32'
    """
    if not isinstance(value, str) or value not in SCORE_PRECISIONS:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:59] + "…"
        raise RagReportError(f"{where} must be 'float64' or 'float32', got {shown}")
    return value


def resolve(compat: str | None, *, order: str | None, ignore_identical_ids: Any,
            explicit: dict[str, Any] | None = None, complete: Any = None,
            score_precision: Any = None) -> Resolved:
    """Fill ``order``, ``ignore_identical_ids``, ``complete`` and ``score_precision``
    (None: unset) from the preset (else ragreport's defaults: float64 scores, as trec_eval
    10) and list the explicit options that differ from the preset's.

    ``explicit`` holds other options the caller gave with a non-default value (such as
    ``rel_level=2``); those the preset fixes otherwise are named as exceptions.

    >>> r = resolve("beir", order=None, ignore_identical_ids=None)
    >>> r.order, r.ignore_identical_ids, r.exceptions
    ('score', True, ())
    >>> resolve("beir", order=None, ignore_identical_ids=False).exceptions
    ('ignore_identical_ids=False',)
    >>> resolve("llamaindex", order="score", ignore_identical_ids=None).exceptions
    ("order='score'",)
    >>> resolve("mteb", order=None, ignore_identical_ids=None).score_precision
    'float32'
    """
    compat = check_compat(compat)
    if score_precision is not None:
        score_precision = check_score_precision(score_precision)
    if ignore_identical_ids is not None and not isinstance(ignore_identical_ids, bool):
        import numpy as np

        if not isinstance(ignore_identical_ids, np.bool_):
            raise RagReportError(f"ignore_identical_ids must be True or False, got "
                                 f"{ignore_identical_ids!r}")
        ignore_identical_ids = bool(ignore_identical_ids)
    preset = PRESETS[compat].option_values if compat is not None else {}
    given = {"order": order, "ignore_identical_ids": ignore_identical_ids,
             "complete": None if complete is None else bool(complete),
             "score_precision": score_precision, **(explicit or {})}
    exceptions = tuple(f"{k}={v!r}" for k, v in given.items()
                       if v is not None and k in preset and preset[k] != v)
    out_order = order if order is not None else preset.get("order", "score")
    out_ignore = ignore_identical_ids if ignore_identical_ids is not None else \
        bool(preset.get("ignore_identical_ids", False))
    out_complete = bool(complete) if complete is not None else \
        bool(preset.get("complete", False))
    out_precision = score_precision if score_precision is not None else \
        str(preset.get("score_precision", "float64"))
    return Resolved(compat, out_order, out_ignore, exceptions, out_complete, out_precision)


def default_measures(compat: str | None) -> list[str] | None:
    """The measures a preset computes when none are asked for (None: ragreport's defaults).

    >>> default_measures("beir")[:3], default_measures("ranx")
    (['nDCG@1', 'nDCG@3', 'nDCG@5'], None)
    """
    if compat is None:
        return None
    m = PRESETS[check_compat(compat) or ""].measures
    return list(m) if m is not None else None


def peer_mean(compat: str | None, measure: Measure, values: Any) -> float:
    """The mean of ``values`` (per-query values) as the peer reports it: the plain mean, or,
    when the peer rounds that measure, the exact mean rounded to its decimals.

    The rounding is decided on the exact mean of the values (every float added without
    error), as BEIR's and MTEB's ``round(sum / n, 5)`` decides on theirs: a mean just above
    a half (0.0048750000000000000002) rounds up even where a pairwise floating-point sum lands
    just below it. Exact halves round to even, as Python's ``round``.

    >>> import numpy as np
    >>> from ragreport.measures import parse_measure
    >>> v = np.array([0.306571, 0.306571])
    >>> peer_mean("beir", parse_measure("nDCG@10"), v), peer_mean(None,
    ...     parse_measure("nDCG@10"), v), peer_mean("mteb", parse_measure("RR@10"), v)
    (0.30657, 0.306571, 0.306571)
    """
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    p = PRESETS[compat] if compat is not None else None
    if p is None or p.round_digits is None or not p.rounds(measure):
        return float(v.mean()) if n else 0.0
    if n == 0:
        return 0.0
    digits = p.round_digits
    approx = float(v.mean())  # within a few ulps of the exact mean
    scaled = approx * 10.0 ** digits
    if abs(scaled - math.floor(scaled) - 0.5) > 1e-6 or not math.isfinite(scaled):
        return round(approx, digits)  # far from a half: the exact mean rounds the same
    from fractions import Fraction

    exact = sum(map(Fraction, v.tolist()), Fraction(0)) / n
    return float(round(exact, digits))


def prepare_qrels(compat: str | None, qrels: Qrels, rel_level: float) -> Qrels:
    """The qrels as the peer reads their grades (relevance is never changed).

    ``"binary"`` (LlamaIndex): every relevant grade (>= ``rel_level``) becomes
    ``max(rel_level, 1)``, a judged non-relevant one (0 <= grade < rel_level) 0, so nDCG has
    binary gains; ``"from_level"`` (ranx): positive grades below ``rel_level`` become 0.
    Negative grades (judged, unknown) are kept.

    >>> from ragreport.io import load_qrels
    >>> q = load_qrels({"q": {"a": 3, "b": 1, "c": 0, "d": -1}})
    >>> prepare_qrels("llamaindex", q, 2).grades.tolist()
    [2.0, 0.0, 0.0, -1.0]
    >>> prepare_qrels("ranx", q, 2).grades.tolist()
    [3.0, 0.0, 0.0, -1.0]
    """
    if compat is None or PRESETS[compat].grades == "as_is":
        return qrels
    from .data import Qrels as QrelsType

    return QrelsType(qrels.query_ids, qrels.doc_ids, qrels.source, qrels.lines,
                     prepared_grades(compat, qrels.grades, rel_level))


def prepared_grades(compat: str | None, grades: Any, rel_level: float) -> Any:
    """Grades as the peer reads them (see :func:`prepare_qrels`): judgments added to qrels
    that were prepared go through this too.

    >>> prepared_grades("llamaindex", [3.0, 1.0], 2).tolist()
    [2.0, 0.0]
    """
    import numpy as np

    g = np.asarray(grades, dtype=np.float64)
    if compat is None or PRESETS[compat].grades == "as_is":
        return g
    below = (g >= 0) & (g < rel_level)
    if PRESETS[compat].grades == "binary":
        new = np.where(g >= rel_level, float(max(rel_level, 1)), np.where(below, 0.0, g))
    else:
        new = np.where(below, 0.0, g)
    return new.astype(np.float64)


def describe(compat: str | None, exceptions: tuple[str, ...] = ()) -> str:
    """The conventions line naming a preset, its source and its exceptions.

    >>> describe("beir", ("ignore_identical_ids=False",)).split(";")[0].split(", except ")[1]
    'ignore_identical_ids=False (given explicitly)'
    """
    if compat is None:
        return ""
    p = PRESETS[compat]
    text = f"{p.name}: {p.peer}"
    if exceptions:
        text += f", except {', '.join(exceptions)} (given explicitly)"
    text += f"; read from {p.source}"
    if p.round_digits is not None:
        fams = ", ".join(sorted(p.rounded))
        text += (f"; means of {fams} rounded to {p.round_digits} decimals as the peer reports "
                 "them (per-query values and curves are not rounded)")
    return text + "".join(f"; {n}" for n in p.notes)
