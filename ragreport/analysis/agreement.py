"""Agreement between judgment sources (people and models) where they judged the same pairs.

For two sources A and B (:mod:`ragreport.io.judgments`), the pairs both judged (each
source's latest judgment of a pair) give a confusion matrix over the grades and:

- **Cohen's kappa** with the grades as categories: ``(p_o - p_e) / (1 - p_e)``, ``p_o`` the
  share of pairs with the same grade, ``p_e`` the share expected by chance from each
  source's own grade frequencies;
- **weighted kappa** for ordered grades: ``1 - sum(w * O) / sum(w * E)`` with quadratic
  weights ``w_ij = (i - j)^2 / (L - 1)^2`` over the ``L`` grade levels either source used
  (linear weights on request); a disagreement by two grades costs four times one;
- **binary kappa**: relevant (grade >= ``rel_level``) or not.

Kappa is NaN when chance agreement is total (both sources gave one and the same grade to
every pair: nothing to tell apart), as scikit-learn's ``cohen_kappa_score`` gives; with no
pair in common there is no agreement to measure (None).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data import FloatArray, IntArray, Qrels
from ..errors import RagReportError

__all__ = ["Agreement", "agreement", "agreements", "per_source", "source_qrels",
           "source_results", "sources_of"]


@dataclass(frozen=True)
class Agreement:
    """Two sources on the pairs both judged (data; nothing rendered).

    ``matrix[i, j]``: pairs ``a`` graded ``levels[i]`` and ``b`` graded ``levels[j]``.
    """

    a: str
    b: str
    pairs: int
    levels: list[float]
    matrix: IntArray
    observed: float
    kappa: float
    weighted_kappa: float
    binary_kappa: float
    weights: str = "quadratic"


def sources_of(qrels: Qrels) -> dict[str, int]:
    """Judgments read per source (every judgment, not only those used), most first."""
    from ..io.judgments import source_counts

    return source_counts(qrels.judgments if qrels.judgments is not None else qrels)


def source_qrels(qrels: Qrels, source: str) -> Qrels:
    """The judgments of one source alone (its latest of each pair), as qrels.

    >>> import ragreport
    >>> q = ragreport.load_qrels([{"query_id": "q", "relevant": {"a": 2}, "source": "llm:x"},
    ...                           {"query_id": "q", "relevant": {"a": 0}, "source": "human"}])
    >>> source_qrels(q, "llm:x").grades.tolist()
    [2.0]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..io.judgments import resolve

    every = qrels.judgments if qrels.judgments is not None else qrels
    if every.sources is None:
        raise RagReportError("these qrels have no sources")
    mask = pc.equal(every.sources, source)
    rows = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
    if not len(rows):
        raise RagReportError(f"no judgment has the source {source!r} (sources: "
                             f"{', '.join(sources_of(qrels))})")
    take = pa.array(rows)
    picked = Qrels(every.query_ids.take(take), every.doc_ids.take(take), every.source, None,
                   every.grades[rows])
    return resolve(picked, every.sources.take(take), "latest")


def agreement(qrels: Qrels, a: str | None = None, b: str | None = None, *,
              rel_level: int = 1, weights: str = "quadratic") -> Agreement | None:
    """Agreement of sources ``a`` and ``b`` on the pairs both judged; None when they judged
    no pair in common. Default ``a``: ``human`` when there is one, else the source with the
    most judgments; ``b``: the other source with the most judgments.

    >>> import ragreport
    >>> rows = [{"query_id": "q", "relevant": {"a": 1, "b": 0, "c": 1, "d": 0},
    ...          "source": "human"},
    ...         {"query_id": "q", "relevant": {"a": 1, "b": 0, "c": 0, "d": 0},
    ...          "source": "llm:x"}]
    >>> g = agreement(ragreport.load_qrels(rows))
    >>> g.pairs, g.observed, g.kappa, g.matrix.tolist()
    (4, 0.75, 0.5, [[2, 0], [1, 1]])
    """
    if weights not in ("quadratic", "linear"):
        raise RagReportError(f"weights must be 'quadratic' or 'linear', got {weights!r}")
    counts = sources_of(qrels)
    if len(counts) < 2 and (a is None or b is None):
        return None
    a = a if a is not None else ("human" if "human" in counts else next(iter(counts)))
    b = b if b is not None else next(s for s in counts if s != a)
    if a == b:
        raise RagReportError(f"compare two different sources, got {a!r} twice")
    ga, gb = _common(source_qrels(qrels, a), source_qrels(qrels, b))
    if not len(ga):
        return None
    levels = sorted(set(ga.tolist()) | set(gb.tolist()))
    index = {v: i for i, v in enumerate(levels)}
    m = np.zeros((len(levels), len(levels)), dtype=np.int64)
    np.add.at(m, ([index[v] for v in ga.tolist()], [index[v] for v in gb.tolist()]), 1)
    binary = _binary(ga, gb, rel_level)
    return Agreement(a, b, len(ga), [float(v) for v in levels], m,
                     float(np.trace(m) / m.sum()), _kappa(m, "none"), _kappa(m, weights),
                     _kappa(binary, "none"), weights)


def _binary(ga: FloatArray, gb: FloatArray, rel_level: int) -> IntArray:
    ra, rb = ga >= rel_level, gb >= rel_level
    return np.array([[np.sum(~ra & ~rb), np.sum(~ra & rb)], [np.sum(ra & ~rb), np.sum(ra & rb)]],
                    dtype=np.int64)


def agreements(qrels: Qrels, *, rel_level: int = 1) -> list[Agreement]:
    """Every pair of sources that judged pairs in common (in the order of
    :func:`sources_of`)."""
    out = []
    for a, b in itertools.combinations(sources_of(qrels), 2):
        got = agreement(qrels, a, b, rel_level=rel_level)
        if got is not None:
            out.append(got)
    return out


def _common(qa: Qrels, qb: Qrels) -> tuple[FloatArray, FloatArray]:
    """The grades of the pairs both qrels judge, aligned."""
    ka = {(q, d): g for q, d, g in zip(qa.query_ids.to_pylist(), qa.doc_ids.to_pylist(),
                                       qa.grades.tolist(), strict=True)}
    both = [(ka[(q, d)], g) for q, d, g in zip(qb.query_ids.to_pylist(),
                                               qb.doc_ids.to_pylist(), qb.grades.tolist(),
                                               strict=True) if (q, d) in ka]
    arr = np.asarray(both, dtype=np.float64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1]


def _kappa(m: IntArray, weights: str) -> float:
    """Cohen's kappa of a confusion matrix, unweighted (``"none"``) or weighted."""
    n = m.sum()
    levels = m.shape[0]
    if n == 0:
        return float("nan")
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    i, j = np.indices(m.shape)
    if weights == "none" or levels < 2:
        w: Any = (i != j).astype(np.float64)
    elif weights == "linear":
        w = np.abs(i - j) / (levels - 1)
    else:
        w = (i - j) ** 2 / (levels - 1) ** 2
    denom = float(np.sum(w * expected))
    if denom == 0.0:
        return float("nan")
    return float(1.0 - np.sum(w * m) / denom)


def source_results(results: Sequence[Any], qrels: Qrels, measures: Sequence[Any]
                   ) -> dict[str, list[Any]]:
    """Source -> every run evaluated again against that source's judgments alone
    (:func:`source_qrels`), under the conventions it was evaluated with (in run order)."""
    from ..core.engine import reevaluate

    out: dict[str, list[Any]] = {}
    for s in sources_of(qrels):
        alone = source_qrels(qrels, s)
        out[s] = [reevaluate(r, alone, measures, curves=False) for r in results]
    return out


def per_source(results: Sequence[Any], qrels: Qrels, measures: Sequence[Any],
               evaluated: Mapping[str, Sequence[Any]] | None = None
               ) -> dict[str, dict[str, dict[str, float]]]:
    """Source -> run -> measure -> mean, from each source's judgments alone
    (``evaluated``: :func:`source_results` already computed)."""
    got = evaluated if evaluated is not None else source_results(results, qrels, measures)
    return {s: {e.run_name: {str(m): float(e.mean(m)) for m in measures} for e in runs}
            for s, runs in got.items()}
