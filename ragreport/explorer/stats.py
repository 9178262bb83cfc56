"""The explorer's intervals and paired tests, as the report computes them (its level,
resamples, seed and paired test: :class:`ragreport.settings.StatsSettings`), cached per
view, and the job that computes a view's statistics off the interaction path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.compare import paired
from ..analysis.curves import run_intervals
from ..errors import RagReportError
from ..measures import Measure
from ..parallel import Mapper, map_with
from ..settings import StatsSettings
from ..stats import bootstrap_ci
from ..targets import Target
from ._data import FloatArray, floats, number
from .arrays import RunArrays

__all__ = ["ViewStats"]


def paired_view(task: tuple[FloatArray, FloatArray, StatsSettings]) -> dict[str, Any]:
    """The paired comparison of B against A as the view shows it, with ``resamples``
    randomizations (a picklable task: it runs in the widget's worker process)."""
    va, vb, settings = task
    c = paired(va, vb, resamples=settings.resamples, seed=settings.seed, level=settings.level)
    lo, hi, p_t, p_rand = floats([c.lo, c.hi, c.p_t, c.p_rand])
    return {"lo": lo, "hi": hi, "p_t": p_t, "p_rand": p_rand, "wins": c.wins,
            "losses": c.losses, "ties": c.ties, "significant": c.significant(settings.alpha)}


class ViewStats:
    """Intervals and tests of the runs' arrays. ``inline``: computed on every change (small
    evaluations); otherwise only when forced or by :meth:`job`."""

    def __init__(self, arrays: RunArrays, inline: bool) -> None:
        self.arrays = arrays
        self.settings = arrays.inputs.settings
        self.inline = inline
        #: Where the bootstrap resamples and the paired tests run (None: here). The widget
        #: gives a worker process, so that the kernel stays free for the interactions.
        self.workers: Mapper | None = None

    def _ready(self, key: tuple[Any, ...], force: bool) -> bool:
        return self.inline or force or self.arrays.memo.has(key)

    def band(self, run: int, family: Measure, k: int, force: bool = False
             ) -> tuple[float | None, float | None]:
        """Bootstrap interval of run ``run``'s mean of ``family`` at ``k`` (cached); (None,
        None) when not computed yet and not ``force`` (large evaluations)."""
        arrays = self.arrays

        def make() -> tuple[float | None, float | None]:
            if not arrays.results[run].n_queries:
                return None, None
            lo, hi = self.interval(run, family.at(k), lambda: arrays.values(run, family, k))
            return floats([lo])[0], floats([hi])[0]

        key = ("band", run, family, k)
        if not self._ready(key, force):
            return None, None
        got: tuple[float | None, float | None] = arrays.memo.get(key, make)
        return got

    def target_interval(self, run: int, t: Target, force: bool
                        ) -> tuple[float | None, float | None] | None:
        """The bootstrap interval of the mean of a target's measure (None until computed
        for large evaluations, unless ``force``)."""
        key = ("target-lower", run, t)
        if not self._ready(key, force):
            return None

        def make() -> tuple[float | None, float | None] | None:
            v = self.arrays.target_values(t, run)
            if v is None or not len(v):
                return None
            lo, hi = self.interval(run, t.measure, lambda: v)
            return number(lo), number(hi)

        got: tuple[float | None, float | None] | None = self.arrays.memo.get(key, make)
        return got

    def target_lower(self, run: int, t: Target, force: bool) -> float | None:
        """Lower bound of the bootstrap interval of the mean of a target's measure."""
        got = self.target_interval(run, t, force)
        return None if got is None else got[0]

    def interval(self, run: int, m: Measure, values: Callable[[], FloatArray]
                 ) -> tuple[float, float]:
        """The interval of run ``run``'s mean of ``m`` as the report computes it
        (:func:`ragreport.analysis.curves.run_intervals`, the report's level, resamples and
        seed); a measure the result cannot give (past its width) from ``values()``, with the
        same resampled query sets (:func:`ragreport.stats.bootstrap_ci`)."""
        r = self.arrays.results[run]
        s = self.settings
        try:
            return run_intervals(r, [m], level=s.level, resamples=s.resamples, seed=s.seed,
                                 workers=self.workers).measures[m]
        except RagReportError:
            ci = bootstrap_ci(values(), level=s.level, resamples=s.resamples, seed=s.seed,
                              workers=self.workers)
            return float(ci.lower), float(ci.upper)

    def compared(self, a: int, b: int, family: Measure, k: int, force: bool
                 ) -> dict[str, Any] | None:
        """The paired test of runs ``a`` and ``b`` on their common queries (None when not
        computed and not ``force``: large evaluations; or without a common query)."""
        key = ("paired", a, b, family, k)
        if not self._ready(key, force):
            return None
        va, vb = self.arrays.paired_values(a, b, family, k)
        if not len(va):  # no common query: nothing to test
            return None
        got: dict[str, Any] = self.arrays.memo.get(key, lambda: self._paired(va, vb))
        return got

    def _paired(self, va: FloatArray, vb: FloatArray) -> dict[str, Any]:
        """The paired test of the view, computed by :attr:`workers` (or here)."""
        got: dict[str, Any] = map_with(self.workers, paired_view,
                                       [(va, vb, self.settings)])[0]
        return got

    def warm(self, a: int, k: int) -> None:
        """Compute what the next interactions may need and that does not depend on the view:
        every run's failure kinds and id order, run ``a``'s search haystack."""
        arrays = self.arrays
        for run in range(len(arrays.results)):
            arrays.kinds_parts(run)
            arrays.kinds(run, k)
            arrays.id_order(run)
        arrays.hay(a)

    def job(self, view: tuple[int, int, Measure, int], mean_ks: list[int],
            stale: Callable[[], bool] | None = None) -> Callable[[], bool]:
        """A function computing the intervals and the paired test of ``view`` (runs A and B,
        family, K) and its mean curve at ``mean_ks``, safe to run in another thread; it stops
        between two steps once ``stale()`` says the view has moved on, and returns whether
        it finished."""
        a, b, family, k = view
        runs = len(self.arrays.results)
        targets = self.arrays.inputs.targets

        def moved() -> bool:
            return stale is not None and stale()

        def job() -> bool:
            self.warm(a, k)
            for run in range(runs):
                for t in targets:
                    if t.on == "ci_lower":
                        self.target_lower(run, t, True)
                for kk in mean_ks:
                    if moved():
                        return False
                    self.arrays.mean_at(run, family, kk)
                if moved():
                    return False
                self.band(run, family, k, force=True)
            if b >= 0 and not moved():
                self.compared(a, b, family, k, force=True)
            if not moved() and self.arrays.unjudged_later(a):
                self.arrays.unjudged_range(a, family, k, now=True)  # the list's tags
            return not moved()

        return job
