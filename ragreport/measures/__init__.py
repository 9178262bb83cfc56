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
MTEB/BEIR, LlamaIndex; docs/measures.md lists them), or refused: a bare trec_eval
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

from .model import FAMILIES, MAX_CUTOFF, Family, Measure
from .names import (
    DEFAULT_MEASURES,
    TREC_DEFAULT_CUTOFFS,
    TREC_DEFAULT_MEASURES,
    TREC_IPREC_LEVELS,
    normalize_measures,
    parse_family,
    parse_measure,
    parse_measures,
)

__all__ = [
    "DEFAULT_MEASURES",
    "FAMILIES",
    "MAX_CUTOFF",
    "TREC_DEFAULT_CUTOFFS",
    "TREC_DEFAULT_MEASURES",
    "TREC_IPREC_LEVELS",
    "Family",
    "Measure",
    "normalize_measures",
    "parse_family",
    "parse_measure",
    "parse_measures",
]
