"""Worker processes that never run the program's main module again.

:mod:`multiprocessing` starts each *spawn* or *forkserver* process by importing the main
module of the program (the script) under the name ``__mp_main__``, so that functions defined
there can be unpickled. A script without an ``if __name__ == "__main__":`` guard then runs
again in every worker: a script that builds an :class:`~ragreport.Explorer` printed its output
once per worker. ragreport's workers only ever run ragreport's own functions, so they skip
that import: :func:`worker_context` gives a context whose processes are named
:data:`WORKER_NAME` ``-N``, and for those processes (only) the preparation data sent to the
child leaves out the main module. Every other process of the program is started as before.
"""

from __future__ import annotations

import itertools
import multiprocessing.context as mpc
import multiprocessing.spawn as mps
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["WORKER_NAME", "worker_context"]

#: The name every ragreport worker process starts with.
WORKER_NAME = "ragreport-worker"

_numbers = itertools.count(1)
_MAIN_KEYS = ("init_main_from_path", "init_main_from_name")


def _named(process: Any) -> None:
    process.name = f"{WORKER_NAME}-{next(_numbers)}"


class SpawnWorker(mpc.SpawnProcess):
    """A spawned process named as a ragreport worker."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _named(self)


if sys.platform != "win32":
    class ForkServerWorker(mpc.ForkServerProcess):
        """A process forked from the forkserver, named as a ragreport worker."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            _named(self)

    class ForkServerWorkers(mpc.ForkServerContext):
        """The forkserver context, starting :class:`ForkServerWorker` processes."""

        Process = ForkServerWorker


class SpawnWorkers(mpc.SpawnContext):
    """The spawn context, starting :class:`SpawnWorker` processes."""

    Process = SpawnWorker


def _without_main(original: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    def get_preparation_data(name: str) -> dict[str, Any]:
        data = original(name)
        if isinstance(name, str) and name.startswith(WORKER_NAME):
            for key in _MAIN_KEYS:
                data.pop(key, None)
        return data

    get_preparation_data.ragreport_original = original  # type: ignore[attr-defined]
    return get_preparation_data


def _install() -> None:
    """Wrap :func:`multiprocessing.spawn.get_preparation_data` once (idempotent)."""
    current = mps.get_preparation_data
    if not hasattr(current, "ragreport_original"):
        mps.get_preparation_data = _without_main(current)  # type: ignore[assignment]


def worker_context(forkserver: bool) -> mpc.BaseContext:
    """The context ragreport's pool starts its workers with.

    Parameters
    ----------
    forkserver : bool
        The forkserver context (Linux, macOS) if true, else spawn.

    Examples
    --------
    >>> worker_context(False).get_start_method()
    'spawn'
    """
    _install()
    if forkserver and sys.platform != "win32":
        ctx: mpc.BaseContext = ForkServerWorkers()
    else:
        ctx = SpawnWorkers()
    return ctx
