"""The explorer's statistics off the interaction path, for large evaluations.

One daemon worker thread per widget. Every change of runs, measure or K bumps a generation
counter; the worker waits until the view has stayed put for :data:`STATS_DELAY` seconds,
then computes that generation's intervals and tests, checking between steps whether a newer
generation (or :meth:`StatsWorker.close`) has superseded it, and pausing while the front end
is busy (any interaction in the last :data:`STATS_DELAY` seconds). So at most one
computation runs, a superseded one stops at its next step, and nothing is left running after
``close()``. The resamples themselves run in a worker process, so the kernel's GIL stays
free for the interactions.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ..parallel import Workers
from .state import ExplorerState

__all__ = ["STATS_DELAY", "StatsWorker"]

#: Seconds a large evaluation's view stays put before its intervals and tests are computed.
STATS_DELAY = 0.25
#: Seconds :meth:`StatsWorker.close` waits for the worker thread to stop (it stops at the
#: next step of its computation; it is a daemon thread in any case).
STATS_JOIN = 5.0
#: Niceness of the background worker thread (Linux) and of the worker process.
BACKGROUND_NICE = 10
#: Modules the statistics worker process imports before its first task.
WORKER_PRELOAD = ("ragreport.stats", "ragreport.analysis.compare", "ragreport.explorer.stats")
#: The worker thread's name.
THREAD_NAME = "ragreport-explorer-stats"


class StatsWorker:
    """Computes the view's statistics in the background; ``publish()`` is called when a
    view's are ready (it puts them into the traits), ``failed(exc)`` when they fail."""

    def __init__(self, state: ExplorerState, publish: Callable[[], None],
                 failed: Callable[[BaseException], None]) -> None:
        self.state = state
        self.publish = publish
        self.failed = failed
        self.cond = threading.Condition()
        self.thread: threading.Thread | None = None
        self._job: tuple[int, Callable[[], bool]] | None = None
        self._gen = 0
        self._done = 0
        self._touched = 0.0
        self._closed = False
        self._workers: Workers | None = None

    def start(self) -> None:
        """A new view: supersede the computation under way and compute this one (large
        evaluations only; nothing once closed)."""
        s = self.state
        if s.stats_inline or self._closed:
            return
        with self.cond:
            self._gen += 1
            gen = self._gen
            self._job = (gen, s.stats_job(lambda: self.superseded(gen)))
            self.cond.notify_all()
            if self.thread is None:
                # the resamples and tests run in a worker process: in this thread they would
                # hold the GIL for seconds, and every interaction would wait for it
                self._workers = Workers(1, WORKER_PRELOAD, offload=True,
                                        nice=BACKGROUND_NICE).start()
                s.workers = self._workers
                th = threading.Thread(target=self._loop, name=THREAD_NAME, daemon=True)
                self.thread = th
                th.start()

    def busy(self) -> None:
        """An interaction has just been handled: background work waits a moment."""
        self._touched = time.monotonic()

    def superseded(self, gen: int) -> bool:
        """Whether job ``gen`` should stop (a newer view, or closed); while the front end is
        busy, wait for a quiet moment first."""
        with self.cond:
            while True:
                if self._closed or self._gen != gen:
                    return True
                quiet = time.monotonic() - self._touched
                if quiet >= STATS_DELAY:
                    return False
                self.cond.wait(STATS_DELAY - quiet)

    def _next(self) -> tuple[int, Callable[[], bool]] | None:
        """The next job (None once closed)."""
        with self.cond:
            while not self._closed and self._job is None:
                self.cond.wait()
            if self._closed:
                self._done = self._gen
                self.cond.notify_all()
                return None
            job, self._job = self._job, None
            # the view stays put for a moment first (a dragged slider starts nothing)
            self._touched = max(self._touched, time.monotonic())
            return job

    def _loop(self) -> None:
        _background_priority()
        while True:
            job = self._next()
            if job is None:
                return
            gen, compute = job
            try:
                with _one_blas_thread():
                    done = not self.superseded(gen) and compute()
                if done and not self.superseded(gen):
                    self.publish()
            except Exception as exc:  # said in the view, never lost: no interval stays pending
                if not self.superseded(gen):
                    self.failed(exc)
            finally:
                with self.cond:
                    self._done = max(self._done, gen)
                    self.cond.notify_all()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the statistics of the current view (returns at once when there is
        nothing to compute or once closed, or after ``timeout`` seconds)."""
        with self.cond:
            self.cond.wait_for(lambda: self._closed or self._done >= self._gen, timeout)

    @property
    def running(self) -> bool:
        """Whether the worker thread is alive (False after :meth:`close`)."""
        th = self.thread
        return th is not None and th.is_alive()

    def close(self) -> None:
        """Stop the worker thread and the worker process."""
        with self.cond:
            self._closed = True
            self._job = None
            self.cond.notify_all()
        th = self.thread
        if th is not None and th is not threading.current_thread():
            th.join(STATS_JOIN)
        if self._workers is not None:
            self.state.workers = None
            self._workers.close(terminate=True)


def _background_priority() -> None:
    """Lower the calling thread's CPU priority (Linux: a thread id is a valid target of
    ``setpriority``), so that the background statistics leave the cores to the kernel's
    message loop, the Jupyter server and the browser; elsewhere, nothing."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


def _one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """One BLAS thread while the background statistics run (OpenBLAS's second thread spins
    on a busy 2-core machine: 1.7 s of CPU for 1.0 s of wall time at 100,000 queries), when
    ``threadpoolctl`` is installed; otherwise the BLAS as it is."""
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
    except ImportError:
        return contextlib.nullcontext()
    limits: contextlib.AbstractContextManager[Any] = threadpool_limits(1)
    return limits
