"""The seed tutorial's API (``RetrievalEvaluator``, ``evaluate_multiple_queries``), on the engine.

Same names, arguments and semantics as the tutorial: lists are taken in the order given,
``mrr`` has no cutoff, a query without relevant documents scores 0, an empty ``retrieved``
list scores 0, and the batch mean counts every test case. A ``retrieved`` set is refused (it
has no order); ``relevant`` may be any collection. The numbers come from
:func:`ragreport.evaluate`, so they are the same numbers the reports show: the batch mean
equals ``evaluate(cases, cases, ..., order="given")``'s when every case has a relevant
document (a case without one is not a judged query for ``evaluate``, as for pytrec_eval,
while the tutorial counts it as a 0).

>>> ev = RetrievalEvaluator(k=5)
>>> {k: round(v, 3) for k, v in ev.evaluate_all([1, 3, 5, 7, 9, 11, 13], [3, 7, 12]).items()}
{'recall@k': 0.667, 'precision@k': 0.4, 'f1@k': 0.5, 'mrr': 0.5, 'ndcg@k': 0.498}
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .errors import RagReportError

__all__ = ["RetrievalEvaluator", "evaluate_multiple_queries"]

_KEYS = ("recall@k", "precision@k", "f1@k", "mrr", "ndcg@k")


def _ids(value: Any, what: str, ranked: bool = False, case: int | None = None) -> list[Any]:
    """The ids of a ``retrieved`` (ranked: a set has no order) or ``relevant`` collection."""
    where = f"test case {case}: " if case is not None else ""
    if ranked and isinstance(value, (set, frozenset)):
        raise RagReportError(f"{where}{what} is a {type(value).__name__}, whose order is "
                             "undefined; give a list, best first")
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise RagReportError(f"{where}{what} must be a list of ids, got "
                             f"{type(value).__name__}")
    return list(value)


class RetrievalEvaluator:
    """Evaluator for retrieval metrics at one cutoff ``k`` (the tutorial's class).

    Parameters
    ----------
    k : int
        Number of retrieved documents considered (top-K); must be >= 1.
    """

    def __init__(self, k: int = 5) -> None:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise RagReportError(f"k must be an integer >= 1, got {k!r}")
        self.k = int(k)

    def _measures(self) -> list[str]:
        return [f"R@{self.k}", f"P@{self.k}", f"F1@{self.k}", "RR", f"nDCG@{self.k}"]

    def _batch(self, cases: Sequence[tuple[Sequence[Hashable], Sequence[Hashable]]]
               ) -> dict[str, np.ndarray]:
        """Per-case values of the five measures, shape (cases,) each."""
        from .core.engine import evaluate

        n = len(cases)
        out = {key: np.zeros(n) for key in _KEYS}
        # a case without relevant documents scores 0 (the tutorial) and stays out of the
        # engine; an empty retrieved list goes in as an empty ranking, which scores 0 there
        qrels = {str(i): {str(d): 1 for d in rel} for i, (_, rel) in enumerate(cases) if rel}
        if not qrels:
            return out
        run = {str(i): [str(d) for d in ret] for i, (ret, _) in enumerate(cases)}
        res = evaluate(qrels, run, self._measures(), k_max=self.k, order="given",
                       duplicates="first")
        idx = np.array([int(q) for q in res.query_ids])
        for key, m in zip(_KEYS, self._measures(), strict=True):
            out[key][idx] = res.values(m)
        return out

    def _one(self, retrieved: Sequence[Hashable], relevant: Collection[Hashable]
             ) -> dict[str, float]:
        pair = (_ids(retrieved, "retrieved", ranked=True), _ids(relevant, "relevant"))
        return {k: float(v[0]) for k, v in self._batch([pair]).items()}

    def recall_at_k(self, retrieved: Sequence[Hashable], relevant: Collection[Hashable]) -> float:
        """Recall@K: relevant documents in the top K / relevant documents (0 if none).

        >>> RetrievalEvaluator(k=5).recall_at_k([1, 2, 3, 4, 5], [3, 6, 9])  # doctest: +ELLIPSIS
        0.333...
        """
        return self._one(retrieved, relevant)["recall@k"]

    def precision_at_k(self, retrieved: Sequence[Hashable], relevant: Collection[Hashable]
                       ) -> float:
        """Precision@K: relevant documents in the top K / K."""
        return self._one(retrieved, relevant)["precision@k"]

    def f1_at_k(self, retrieved: Sequence[Hashable], relevant: Collection[Hashable]) -> float:
        """F1@K: harmonic mean of Precision@K and Recall@K (0 when both are 0)."""
        return self._one(retrieved, relevant)["f1@k"]

    def mrr(self, retrieved: Sequence[Hashable], relevant: Collection[Hashable]) -> float:
        """Reciprocal rank of the first relevant document in the whole list (0 if none)."""
        return self._one(retrieved, relevant)["mrr"]

    def ndcg_at_k(self, retrieved: Sequence[Hashable], relevant: Collection[Hashable]) -> float:
        """nDCG@K with binary relevance.

        >>> round(RetrievalEvaluator(k=5).ndcg_at_k([1, 3, 5, 7, 9], [3, 7]), 3)
        0.651
        """
        return self._one(retrieved, relevant)["ndcg@k"]

    def evaluate_all(self, retrieved: Sequence[Hashable], relevant: Collection[Hashable]
                     ) -> dict[str, float]:
        """All five metrics: keys ``recall@k precision@k f1@k mrr ndcg@k``."""
        return self._one(retrieved, relevant)


def evaluate_multiple_queries(evaluator: RetrievalEvaluator,
                              test_cases: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Average of :meth:`RetrievalEvaluator.evaluate_all` over test cases (one engine pass).

    Parameters
    ----------
    evaluator : RetrievalEvaluator
    test_cases : list of dict
        Each with ``retrieved`` and ``relevant`` lists (``query`` is allowed and ignored).

    >>> ev = RetrievalEvaluator(k=5)
    >>> cases = [{"retrieved": [1, 3, 5, 7, 9], "relevant": [3, 7, 12]},
    ...          {"retrieved": [2, 4, 6, 8, 10], "relevant": [4, 6]},
    ...          {"retrieved": [1, 2, 3, 4, 5], "relevant": [1, 3]}]
    >>> {k: round(v, 3) for k, v in evaluate_multiple_queries(ev, cases).items()}
    {'recall@k': 0.889, 'precision@k': 0.4, 'f1@k': 0.548, 'mrr': 0.667, 'ndcg@k': 0.704}
    """
    if not isinstance(evaluator, RetrievalEvaluator):
        raise RagReportError(f"evaluator must be a RetrievalEvaluator, got "
                             f"{type(evaluator).__name__}")
    if not test_cases:
        raise RagReportError("test_cases is empty")
    pairs = []
    for i, case in enumerate(test_cases):
        if not isinstance(case, Mapping) or "retrieved" not in case or "relevant" not in case:
            raise RagReportError(f"test case {i} must be a dict with 'retrieved' and 'relevant'")
        pairs.append((_ids(case["retrieved"], "'retrieved'", ranked=True, case=i),
                      _ids(case["relevant"], "'relevant'", case=i)))
    values = evaluator._batch(pairs)
    return {k: float(v.mean()) for k, v in values.items()}
