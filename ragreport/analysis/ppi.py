"""Prediction-powered intervals (Angelopoulos et al., Science 2023) for a measure's mean when
a model judged every query and people judged some of them.

The estimand is the measure's mean over the population the queries are drawn from, with
people's judgments (what the people-only mean estimates, without the model's bias). Per
query, ``f`` is the measure computed from the model's judgments alone and ``y`` from the
people's alone (:func:`ragreport.analysis.agreement.source_qrels`). With ``n`` queries people
judged (``L``) and the ``N`` others (``U``, the model's only), the PPI estimate is

``theta = mean_U(f) + mean_L(y - f)``

(the model's mean, corrected by its mean error where both judged), with the normal interval
``theta ± z * sqrt(var_U(f) / N + var_L(y - f) / n)``. It is unbiased whatever the model's
quality (the correction is measured), and narrower than the people-only interval
``mean_L(y) ± z * sd_L(y) / sqrt(n)`` when the model's errors vary less than the values
themselves. The model-only interval (over every query) is shown beside both; it has no
correction, so it can be biased.

The people's queries must be a random sample of the queries (as PPI assumes); with fewer
than 2 queries on either side there is no interval (NaN).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from ..data import FloatArray, Qrels
from ..errors import RagReportError
from ..measures import Measure

__all__ = ["Interval", "PPIEstimate", "people_mean", "ppi_estimates", "ppi_mean"]


@dataclass(frozen=True)
class Interval:
    """A mean and its interval at ``level``, from ``n`` queries."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class PPIEstimate:
    """One run's measure: the PPI-corrected, people-only and model-only intervals."""

    run: str
    measure: str
    level: float
    people: str
    model: str
    ppi: Interval
    people_only: Interval
    model_only: Interval


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise RagReportError(f"level must be > 0 and < 1, got {level!r}")
    return NormalDist().inv_cdf(0.5 + level / 2)


def _var(x: FloatArray) -> float:
    return float(np.var(x, ddof=1)) if len(x) > 1 else float("nan")


def ppi_mean(model_unlabeled: Any, model_labeled: Any, people_labeled: Any,
             level: float = 0.95) -> Interval:
    """The PPI estimate of the mean and its interval (see the module).

    The model's mean over the 4 queries people did not judge is 0.65; where they judged, the
    model is 0.1 too low every time, so the estimate is 0.75; the correction does not vary,
    so the half-width is ``1.96 * sd(f) / 2``:

    >>> got = ppi_mean([0.5, 0.7, 0.6, 0.8], [0.4, 0.6], [0.5, 0.7])
    >>> round(got.mean, 4), round(got.low, 4), round(got.high, 4), got.n
    (0.75, 0.6235, 0.8765, 6)
    """
    f_u = np.asarray(model_unlabeled, dtype=np.float64)
    f_l = np.asarray(model_labeled, dtype=np.float64)
    y = np.asarray(people_labeled, dtype=np.float64)
    if len(f_l) != len(y):
        raise RagReportError(f"{len(f_l)} model values for {len(y)} people's values")
    z = _z(level)
    if not len(f_u) or not len(y):
        return Interval(float("nan"), float("nan"), float("nan"), len(f_u) + len(y))
    theta = float(f_u.mean() + (y - f_l).mean())
    half = z * float(np.sqrt(_var(f_u) / len(f_u) + _var(y - f_l) / len(y)))
    return Interval(theta, theta - half, theta + half, len(f_u) + len(y))


def people_mean(values: Any, level: float = 0.95) -> Interval:
    """The mean of ``values`` and its normal interval (people-only, or model-only).

    >>> people_mean([0.0, 1.0, 0.0, 1.0]).mean
    0.5
    """
    y = np.asarray(values, dtype=np.float64)
    z = _z(level)
    if not len(y):
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    m = float(y.mean())
    half = z * float(np.sqrt(_var(y) / len(y)))
    return Interval(m, m - half, m + half, len(y))


def ppi_estimates(results: Sequence[Any], qrels: Qrels, measures: Sequence[Measure], *,
                  people: str = "human", model: str | None = None, level: float = 0.95,
                  evaluated: Mapping[str, Sequence[Any]] | None = None) -> list[PPIEstimate]:
    """Every run's ``measures`` by PPI: the model's judgments (``model``, default the
    ``llm:`` source with the most judgments) on every query the run was evaluated on, the
    people's (``people``) on the queries they judged. Empty when the qrels lack either kind.
    ``evaluated``: the runs against each source alone, when already computed
    (:func:`ragreport.analysis.agreement.source_results`, with these measures).
    """
    from .agreement import source_qrels, source_results, sources_of

    counts = sources_of(qrels)
    if model is None:
        model = next((s for s in counts if s.lower().startswith("llm:")), None)
    if model is None or people not in counts or model not in counts:
        return []
    judged = set(source_qrels(qrels, people).query_ids.to_pylist())
    got = evaluated if evaluated is not None else source_results(results, qrels, measures)
    out = []
    for r, by_model, by_people in zip(results, got[model], got[people], strict=True):
        labeled = np.array([q in judged for q in by_model.query_ids])
        at = {q: i for i, q in enumerate(by_people.query_ids)}
        rows = [at[q] for q, lab in zip(by_model.query_ids, labeled, strict=True) if lab
                and q in at]
        keep = np.array([lab and q in at for q, lab in zip(by_model.query_ids, labeled,
                                                           strict=True)], dtype=bool)
        for m in measures:
            f, y = by_model.values(m), by_people.values(m)[rows]
            out.append(PPIEstimate(r.run_name, str(m), level, people, model,
                                   ppi_mean(f[~labeled], f[keep], y, level),
                                   people_mean(y, level), people_mean(f, level)))
    return out
