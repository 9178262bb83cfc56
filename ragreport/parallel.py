"""Worker processes for the report's CPU-bound steps: bootstrap resamples and plots.

Everything the report does after the evaluation is single-threaded Python or numpy code that
holds the GIL (matplotlib drawing, the bootstrap's ``bincount``), so threads cannot use a second
core; processes can. :class:`Workers` is a small pool of them with one method, :meth:`map`,
that gives exactly what the built-in ``map`` would give, in order. The callers make their
results independent of the number of workers: the bootstrap seeds each block of resamples on
its own (:func:`ragreport.stats.bootstrap_cis`), and each plot is a pure function of its data.
So ``--jobs 1`` and ``--jobs 4`` write the same bytes.

The processes come from a *forkserver* (on Linux and macOS; *spawn* elsewhere): one fresh
interpreter imports the modules given as ``preload`` (matplotlib, for the HTML report) once,
and each worker is forked from it, so the import is paid once, off the main process, while the
main process evaluates the runs. The pool starts in a background thread
(:meth:`Workers.start`); :meth:`map` waits for it.

The workers ignore Ctrl-C (the main process stops them) and never outlive the process that
started them, even after a SIGKILL of it (see :func:`_init_worker`).

Nothing here changes a result. If the pool cannot start or a worker dies, :meth:`map` does the
work in the calling process instead; an exception raised by the work itself propagates, as it
would without workers.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from .errors import RagReportError

__all__ = ["Mapper", "Workers", "default_jobs", "map_with", "max_jobs", "serial_map"]

A = TypeVar("A")
R = TypeVar("R")

#: The most worker processes ``default_jobs`` proposes (the report has about 20 plots).
MAX_DEFAULT_JOBS = 4
#: The most worker processes ever started, whatever the machine (see :func:`max_jobs`).
MAX_JOBS = 64
#: Seconds between two looks of a worker's watchdog at the process that started it.
WATCHDOG_PERIOD = 0.25


class Mapper(Protocol):
    """Anything with ``jobs`` and an ordered ``map`` (a :class:`Workers`, or none at all)."""

    @property
    def jobs(self) -> int: ...

    def map(self, fn: Callable[[A], R], items: Iterable[A]) -> list[R]: ...


def serial_map(fn: Callable[[A], R], items: Iterable[A]) -> list[R]:
    """The built-in ``map``, as a list (what :meth:`Workers.map` must equal).

    >>> serial_map(abs, [-1, 2])
    [1, 2]
    """
    return [fn(x) for x in items]


def map_with(workers: Mapper | None, fn: Callable[[A], R], items: Iterable[A]) -> list[R]:
    """``workers.map(fn, items)``, or :func:`serial_map` when there are no workers.

    >>> map_with(None, abs, [-3])
    [3]
    """
    return (workers.map if workers is not None else serial_map)(fn, items)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def default_jobs() -> int:
    """Worker processes to use by default: the usable CPUs, at most ``MAX_DEFAULT_JOBS``.

    One CPU gives 1, which means no worker process at all.
    """
    return max(1, min(MAX_DEFAULT_JOBS, _cpus()))


def max_jobs() -> int:
    """The most worker processes a user may ask for: 4 per usable CPU, at most ``MAX_JOBS``.

    Each worker holds its own interpreter (and matplotlib for the HTML report), so memory grows
    with their number; more workers than 4 per CPU only wait for each other.
    """
    return max(MAX_DEFAULT_JOBS, min(MAX_JOBS, 4 * _cpus()))


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has exited (a zombie waiting to be reaped counts as exited)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by someone else (the pid was reused)
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
        return state in (b"Z", b"X")
    except (OSError, IndexError):
        return False  # no /proc: os.kill said it exists


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent (the forkserver) exits."""
    import ctypes
    import signal

    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _watch(owner: int, parent: int) -> None:
    """A worker's watchdog: exit at once when the main process or the parent has gone."""
    import time

    while True:
        if os.getppid() != parent or _gone(owner):
            os._exit(0)
        time.sleep(WATCHDOG_PERIOD)


def _init_worker(owner: int, warm_up: Callable[[], object] | None, nice: int = 0) -> None:
    """Run first in each worker process.

    - Ctrl-C reaches the whole process group: the workers ignore it and leave the main
      process to stop them (no traceback of theirs ever reaches the terminal).
    - A worker must never outlive the command, even when a SIGKILL of the main process runs
      no cleanup: a watchdog thread polls the main process (``owner``) and the parent,
      exiting as soon as either has gone; on Linux the worker also dies with its parent (the
      forkserver). The forkserver and the resource tracker exit by themselves once the main
      process and every worker have gone (they then read the end of their pipes).
    - ``nice`` is added to the worker's niceness (where the system has one), so that its
      work yields the cores to the process that started it.
    - ``warm_up`` errors are dropped (the real work reports any problem).
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    if parent != owner and sys.platform.startswith("linux"):
        _die_with_parent()  # forked by the forkserver's main thread, which lives as long as it
    if os.getppid() != parent or _gone(owner):
        os._exit(0)
    threading.Thread(target=_watch, args=(owner, parent), name="ragreport-watchdog",
                     daemon=True).start()
    if nice > 0 and hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(nice)
    if warm_up is not None:
        with contextlib.suppress(Exception):
            warm_up()


def _noop() -> None:
    return None


_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Set the BLAS thread counts to 1 where unset, for processes started meanwhile."""
    added = [k for k in _BLAS_THREADS if k not in os.environ]
    for k in added:
        os.environ[k] = "1"
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


@contextlib.contextmanager
def _no_sigint_here() -> Iterator[None]:
    """Block SIGINT in this (starter) thread, so the processes it starts begin with it blocked.

    A Ctrl-C reaches the whole process group: without this, a forkserver still importing its
    preload, or a worker before its initializer, would print a ``KeyboardInterrupt``
    traceback. The mask is inherited across ``fork`` and ``exec``; the forkserver then
    ignores SIGINT and the workers do (:func:`_init_worker`). The main thread, which
    handles Ctrl-C, is not affected. The resource tracker is started first: its own start
    unblocks these signals in the calling thread.
    """
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    with contextlib.suppress(Exception):
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Workers:
    """A pool of ``jobs`` worker processes with an ordered :meth:`map`.

    Parameters
    ----------
    jobs : int
        Number of worker processes (>= 1). With 1, :meth:`map` runs in the calling process
        and no process is started.
    preload : sequence of str
        Modules the workers import before their first task (once, in the forkserver).
    warm_up : callable, optional
        Run once by each worker when it starts (a picklable function; its result is
        dropped), to pay first-use costs such as loading fonts before any real task.
    offload : bool
        Run the work in worker processes even with one job (one process beside the calling
        one): for a caller that must stay responsive, such as a notebook kernel, whose work
        in a thread would compete for the GIL.
    nice : int
        Added to the workers' niceness (Linux, macOS), so that they yield the cores to the
        calling process and the programs around it.

    Notes
    -----
    Each worker runs with one BLAS thread (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``
    and ``MKL_NUM_THREADS`` set to 1 unless they are set already): the workers already
    occupy the cores, and BLAS threads spinning beside them only slow them down.

    Unlike other uses of :mod:`multiprocessing`, the workers do not import the program's
    main module again (they run only ragreport's functions; see
    :mod:`ragreport.workerprocess`): a script without an ``if __name__ == "__main__":``
    guard runs once.

    Examples
    --------
    >>> with Workers(1) as w:
    ...     w.map(len, ["ab", "c"])
    [2, 1]
    """

    def __init__(self, jobs: int, preload: Sequence[str] = (),
                 warm_up: Callable[[], object] | None = None, *, offload: bool = False,
                 nice: int = 0) -> None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= max_jobs():
            raise RagReportError(f"jobs must be an integer from 1 to {max_jobs()}, got {jobs!r}")
        self._jobs = jobs
        self._preload = list(preload)
        self._warm_up = warm_up
        self._processes = jobs > 1 or offload
        self._nice = max(0, int(nice))
        self._executor: Any = None
        self._broken = False
        self._starter: threading.Thread | None = None
        self._closed = False
        self._starting: Any = None  # the executor while it starts
        self._lock = threading.Lock()

    @property
    def jobs(self) -> int:
        """How many processes share the work (1: one process, the calling one unless
        ``offload``)."""
        return self._jobs if not self._broken else 1

    def start(self) -> Workers:
        """Start the processes in a background thread (returns at once); idempotent."""
        with self._lock:
            if self._processes and self._starter is None and not (self._broken or self._closed):
                # the pool's modules register exit handlers when first imported: here, not in
                # the thread, where an interpreter already exiting refuses them (a script that
                # ends right after building an Explorer printed that thread's traceback)
                import concurrent.futures.process  # noqa: F401
                import multiprocessing.util  # noqa: F401

                # not a daemon: an interpreter that exits meanwhile waits for the start to end
                # instead of finalizing under it (then close() or atexit stops the workers)
                self._starter = threading.Thread(target=self._start, name="ragreport-workers")
                self._starter.start()
        return self

    def _start(self) -> None:
        with _no_sigint_here():
            self._start_pool()

    def _start_pool(self) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from .workerprocess import worker_context

        executor = None
        try:
            forkserver = "forkserver" in multiprocessing.get_all_start_methods()
            ctx = worker_context(forkserver)
            with self._lock:
                if self._closed:
                    return
                executor = ProcessPoolExecutor(max_workers=self._jobs, mp_context=ctx,
                                               initializer=_init_worker,
                                               initargs=(os.getpid(), self._warm_up, self._nice))
                self._starting = executor
            with _one_blas_thread():  # the environment the new processes start with
                if forkserver:
                    import multiprocessing.forkserver as fs

                    if self._preload:
                        ctx.set_forkserver_preload(self._preload)
                    fs.ensure_running()  # returns at once; the workers are forked from it
            # one task per worker, all submitted before any can finish: every process starts
            # (with the forkserver, the first submit waits until it has imported ``preload``)
            with _one_blas_thread() if not forkserver else contextlib.nullcontext():
                warm = [executor.submit(_noop) for _ in range(self._jobs)]
            for f in warm:
                f.result()
        except Exception:  # no process can start here: work in the calling process
            self._broken = True
            if executor is not None:
                executor.shutdown(wait=False, cancel_futures=True)
            return
        finally:
            with self._lock:
                self._starting = None
        with self._lock:
            if not self._closed:
                self._executor = executor
                return
        executor.shutdown(wait=False, cancel_futures=True)  # closed while starting

    def _ready(self) -> Any:
        """The executor once started, or None (one job, or it could not start)."""
        if not self._processes or self._broken or self._closed:
            return None
        self.start()
        starter = self._starter
        if starter is not None:
            starter.join()
        return None if self._broken else self._executor

    def map(self, fn: Callable[[A], R], items: Iterable[A]) -> list[R]:
        """``[fn(x) for x in items]``, computed by the workers; ``fn`` must be picklable.

        An exception raised by ``fn`` propagates. If a worker dies (the pool breaks), the
        remaining work is done here, and later calls no longer use processes.
        """
        work = list(items)
        executor = self._ready() if len(work) > 1 or (work and self._jobs == 1) else None
        if executor is None:
            return serial_map(fn, work)
        from concurrent.futures.process import BrokenProcessPool

        try:
            return list(executor.map(fn, work))
        except BrokenProcessPool:
            if self._closed:  # stopped on purpose (close(terminate=True)): nothing is wanted
                raise RagReportError("the worker processes were stopped") from None
            self._broken = True
            with self._lock:
                self._executor = None
            executor.shutdown(wait=False, cancel_futures=True)
            return serial_map(fn, work)

    def close(self, *, terminate: bool = False) -> None:
        """Stop the workers without waiting (queued tasks are cancelled); idempotent.

        With ``terminate``, the worker processes are also stopped at once (SIGTERM), even in
        the middle of a task: for an error or an interrupt, when their work is of no use.
        """
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
            starting = self._starting
        for ex in (executor, starting):
            if ex is None:
                continue
            manager = getattr(ex, "_executor_manager_thread", None)
            call_queue = getattr(ex, "_call_queue", None)
            if terminate:
                _terminate(ex)
            ex.shutdown(wait=False, cancel_futures=True)
            if terminate:
                _unblock_feeder(manager, call_queue)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(terminate=exc_type is not None)


def _terminate(executor: Any) -> None:
    """Stop the processes of a ``ProcessPoolExecutor`` at once (quietly: SIGTERM)."""
    processes = getattr(executor, "_processes", None) or {}
    for p in list(processes.values()):
        with contextlib.suppress(Exception):
            p.terminate()
    # A worker stopped while it was sending a result leaves half a message in the result
    # pipe; the executor's manager thread then waits in ``recv`` for the rest. It gets EOF
    # (and ends, so the process can exit) only once every writer is closed, and this
    # process holds one it never uses: close it (seen under ``kill -TERM -<group>``).
    result_queue = getattr(executor, "_result_queue", None)
    writer = getattr(result_queue, "_writer", None)
    if writer is not None:
        with contextlib.suppress(Exception):
            writer.close()


def _unblock_feeder(manager: Any, call_queue: Any) -> None:
    """Let the executor's call-queue feeder thread end once its workers were stopped.

    Before Python 3.12 the executor's manager thread can die of ``InvalidStateError`` in
    ``terminate_broken``: it sets an exception on a future that ``executor.map`` cancelled
    when the interrupt went through it. It dies before it closes the call queue's reader in
    this process, so the queue's feeder thread, blocked writing a task to a pipe no worker
    reads any more, never ends, and neither does the process (``multiprocessing`` joins the
    feeder at exit). Seen as a Ctrl-C that hung ``ragreport report --jobs 2`` in 1 of ~15
    runs. Once the manager has ended, closing that reader (if still open) gives the feeder
    EPIPE, which the executor's queue ignores.
    """
    if manager is None:  # never started: no feeder either
        return
    manager.join(timeout=5)
    if manager.is_alive():  # still working (its own clean-up closes the reader)
        return
    reader = getattr(call_queue, "_reader", None)
    if reader is not None and not getattr(reader, "closed", True):
        with contextlib.suppress(Exception):
            reader.close()
