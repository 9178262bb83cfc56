"""Worker processes: same results as without them, in order, errors and dead workers handled."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_cli import _console_script

import ragreport
from ragreport.errors import RagReportError
from ragreport.parallel import Workers, default_jobs, serial_map
from ragreport.report import build_report
from ragreport.report.html import render_html

PARENT = os.getpid()


def square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def fail_on_three(x: int) -> int:
    if x == 3:
        raise RagReportError(f"bad item {x}")
    return x


def die_in_a_worker(item: tuple[int, int]) -> int:
    x, parent = item
    if os.getpid() != parent:
        os._exit(3)  # a worker killed mid-task (out of memory, say)
    return -x


@pytest.fixture(scope="module")
def workers() -> Workers:  # type: ignore[misc]
    w = Workers(2, preload=["ragreport.stats"]).start()
    yield w
    w.close()


def test_map_is_ordered_and_uses_other_processes(workers: Workers) -> None:
    got = workers.map(square_and_pid, range(40))
    assert [v for v, _ in got] == [x * x for x in range(40)]
    pids = {p for _, p in got}
    assert PARENT not in pids and 1 <= len(pids) <= 2
    assert workers.jobs == 2


def test_exception_in_a_task_propagates(workers: Workers) -> None:
    with pytest.raises(RagReportError, match="bad item 3"):
        workers.map(fail_on_three, range(6))
    assert workers.map(fail_on_three, [1, 2]) == [1, 2]  # the pool still works


def test_a_dead_worker_falls_back_to_the_calling_process() -> None:
    w = Workers(2)
    try:
        assert w.map(die_in_a_worker, [(x, PARENT) for x in (1, 2, 3)]) == [-1, -2, -3]
        assert w.jobs == 1  # no process is used any more
        assert w.map(square_and_pid, [2])[0] == (4, PARENT)
    finally:
        w.close()


def test_one_job_starts_no_process() -> None:
    with Workers(1) as w:
        assert w.map(square_and_pid, [1, 2]) == [(1, PARENT), (4, PARENT)]
        assert w._starter is None


def niceness_and_pid(_: int) -> tuple[int, int]:
    return os.nice(0), os.getpid()


def test_offload_runs_one_job_in_another_process_at_lower_priority() -> None:
    """``offload``: one job, yet in a worker process (a notebook kernel keeps its GIL), with
    ``nice`` added to the worker's niceness."""
    with Workers(1, offload=True, nice=7) as w:
        assert w.jobs == 1
        (got, pid), = w.map(niceness_and_pid, [0])
        assert pid != PARENT and got >= min(19, os.nice(0) + 7)  # 19 is the ceiling
        assert w.map(square_and_pid, [5])[0][0] == 25


def touch_then_sleep(path: str) -> None:
    """Say the task started (the file exists), then take long."""
    import time
    from pathlib import Path

    Path(path).touch()
    time.sleep(5)


def test_offloaded_work_stopped_by_close_is_not_redone_here(tmp_path: Path) -> None:
    import threading
    import time

    started = tmp_path / "started"
    w = Workers(1, offload=True).start()
    got: list[object] = []

    def run() -> None:
        try:
            got.append(w.map(touch_then_sleep, [str(started)]))
        except RagReportError as exc:
            got.append(exc)

    th = threading.Thread(target=run)
    th.start()
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:  # running in the worker
        time.sleep(0.02)
    assert started.exists(), "the offloaded task never started"
    t0 = time.perf_counter()
    w.close(terminate=True)
    th.join(10)
    assert time.perf_counter() - t0 < 3  # not slept again in this process
    assert len(got) == 1 and isinstance(got[0], RagReportError)


def test_closed_workers_compute_here() -> None:
    w = Workers(2).start()
    w.close()
    assert w.map(square_and_pid, [3, 4]) == [(9, PARENT), (16, PARENT)]


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2", 10_000])
def test_jobs_must_be_a_positive_integer(jobs: object) -> None:
    with pytest.raises(RagReportError, match=r"jobs must be an integer from 1 to \d+, got"):
        Workers(jobs)  # type: ignore[arg-type]


def test_default_jobs_is_bounded() -> None:
    assert 1 <= default_jobs() <= 4
    assert serial_map(str, [1, 2]) == ["1", "2"]


def test_workers_do_not_change_the_report(workers: Workers) -> None:
    """Bootstrap intervals and every plot's SVG are the same with and without workers."""
    rng = np.random.default_rng(5)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for i in range(300)}
    runs = [{q: {f"d{j}": float(rng.integers(0, 20)) for j in range(12)} for q in qrels}
            for _ in range(2)]
    results = [ragreport.evaluate(qrels, r, k_max=12, name=name)
               for r, name in zip(runs, ["a", "b"], strict=True)]
    kw = dict(resamples=30_000, curve_resamples=20_000, generated_at="2026-01-01T00:00:00Z")
    alone = build_report(results, **kw)  # type: ignore[arg-type]
    shared = build_report(results, workers=workers, **kw)  # type: ignore[arg-type]
    # 30,000 resamples of 300 queries are 3 generator blocks: the workers really split them
    assert alone.summary == shared.summary
    assert [c.bands for c in alone.curves] == [c.bands for c in shared.curves]
    assert alone.to_json() == shared.to_json()
    assert render_html(alone) == render_html(shared, workers=workers) == alone.to_html(
        workers=workers)


def test_cli_jobs_give_the_same_files(tmp_path: os.PathLike[str]) -> None:
    """The real command with worker processes writes what it writes without them."""
    import subprocess
    from pathlib import Path

    out = Path(tmp_path)
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600"}
    pages = {}
    for jobs in ("1", "3"):
        proc = subprocess.run(
            [_console_script(), "report", "--example", "--jobs", jobs,
             "--html", str(out / f"r{jobs}.html"), "--json", str(out / f"r{jobs}.json")],
            capture_output=True, text=True, env=env, cwd=out, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr
        pages[jobs] = [(out / f"r{jobs}.{ext}").read_text(encoding="utf-8")
                       .replace(f"--jobs {jobs}", "--jobs N").replace(f"r{jobs}.", "rN.")
                       for ext in ("html", "json")]
    assert pages["1"] == pages["3"]
    assert pages["1"][0].count("<svg") >= 18


def test_cli_rejects_bad_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    from ragreport.cli.app import main
    from ragreport.parallel import max_jobs

    for jobs in ("0", str(max_jobs() + 1), "1.5", "nan"):
        assert main(["report", "--example", "--jobs", jobs]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1
        assert "--jobs" in err and jobs in err and "Traceback" not in err


def worker_state(_: int) -> tuple[bool, bool, int]:
    import signal
    import threading

    names = [t.name for t in threading.enumerate()]
    return (signal.getsignal(signal.SIGINT) == signal.SIG_IGN, "ragreport-watchdog" in names,
            os.getpid())


def failing_warm_up() -> None:
    raise RuntimeError("warm-up failed")


def test_workers_ignore_ctrl_c_and_watch_the_command(workers: Workers) -> None:
    """Ctrl-C reaches the whole process group: the workers ignore it (the command stops
    them); each runs a watchdog that ends it when the command has gone (even by SIGKILL)."""
    states = workers.map(worker_state, range(8))
    assert all(ignored and watched for ignored, watched, _ in states)
    assert PARENT not in {pid for _, _, pid in states}


def test_a_failing_warm_up_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    with Workers(2, warm_up=failing_warm_up) as w:
        assert w.map(square_and_pid, range(4))[3][0] == 9
    err = capfd.readouterr().err
    assert "Traceback" not in err and "warm-up failed" not in err, err


def test_close_with_terminate_stops_the_processes() -> None:
    import time

    w = Workers(2).start()
    pids = {pid for _, pid in w.map(square_and_pid, range(20))}
    assert pids and PARENT not in pids
    w.close(terminate=True)
    deadline = time.monotonic() + 10
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        for pid in list(alive):
            try:
                with open(f"/proc/{pid}/stat", "rb") as fh:
                    if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                        alive.discard(pid)
            except OSError:
                alive.discard(pid)
        time.sleep(0.05)
    assert not alive
    assert w.map(square_and_pid, [3]) == [(9, PARENT)]  # closed: computed here


def test_terminate_ends_a_manager_waiting_for_half_a_result() -> None:
    """A worker killed while it sends a result (``kill -TERM -<group>``) leaves half a
    message in the result pipe; the executor's manager thread waits in ``recv`` for the
    rest. ``close(terminate=True)`` must let it end (EOF), or the command never exits (it
    joins that thread). Half a message is written here by hand: a length, no bytes."""
    import struct

    w = Workers(2).start()
    w.map(square_and_pid, range(4))
    executor = w._executor
    assert executor is not None
    manager = executor._executor_manager_thread
    os.write(executor._result_queue._writer.fileno(), struct.pack("!i", 1 << 20))
    manager.join(0.3)
    assert manager.is_alive()  # waiting for the rest of the message
    w.close(terminate=True)
    manager.join(20)
    assert not manager.is_alive()


def test_a_feeder_left_blocked_by_a_dead_manager_is_released() -> None:
    """Python < 3.12: the executor's manager thread can die (``InvalidStateError`` on a future
    that ``map`` cancelled) before it closes the call queue's reader, leaving the feeder
    thread blocked on a pipe nobody reads; the process then never exits. Once the manager
    has ended, ``_unblock_feeder`` closes that reader and the feeder ends (EPIPE)."""
    import multiprocessing
    import threading

    from ragreport.parallel import _unblock_feeder

    queue = multiprocessing.get_context("spawn").Queue()
    queue._ignore_epipe = True  # as the executor's call queue
    queue.cancel_join_thread()  # a failure here must not hang the test process at exit
    queue.put(b"x" * (1 << 20))  # more than a pipe holds: the feeder blocks in write
    feeder = queue._thread
    feeder.join(0.3)
    assert feeder.is_alive()
    manager = threading.Thread(target=lambda: None)
    manager.start()
    _unblock_feeder(manager, queue)
    feeder.join(10)
    assert not feeder.is_alive()


def test_max_jobs_is_bounded() -> None:
    from ragreport.parallel import MAX_DEFAULT_JOBS, MAX_JOBS, max_jobs

    assert MAX_DEFAULT_JOBS <= max_jobs() <= MAX_JOBS
    assert default_jobs() <= max_jobs()
    with pytest.raises(RagReportError, match=rf"from 1 to {max_jobs()}, got {max_jobs() + 1}"):
        Workers(max_jobs() + 1)


def test_an_unguarded_script_runs_once_though_workers_start(tmp_path: Path) -> None:
    """The workers do not import the program's main module again: a script without an
    ``if __name__ == "__main__":`` guard prints its line once, not once per worker (it did
    twice with multiprocessing's own forkserver context). ``operator.call(os.getpid)`` shows
    that the work ran in two other processes."""
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import operator, os\nfrom ragreport.parallel import Workers\nprint('once', flush=True)\n"
        "with Workers(2) as w:\n    pids = w.map(operator.call, [os.getpid] * 8)\n"
        "print(w.jobs, len(set(pids) - {os.getpid()}) >= 1, os.getpid() not in pids)\n",
        encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=False, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "once\n2 True True\n", "")


def test_other_processes_of_the_program_still_import_the_main_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only processes named as ragreport workers skip the main module."""
    import multiprocessing.spawn as mps
    import types

    from ragreport.workerprocess import WORKER_NAME, worker_context

    worker_context(False)  # installs the wrapper
    main = types.ModuleType("__main__")
    main.__file__ = str(tmp_path / "script.py")
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert mps.get_preparation_data("Process-1")["init_main_from_path"] == main.__file__
    assert "init_main_from_path" not in mps.get_preparation_data(f"{WORKER_NAME}-1")
    worker_context(True)  # installed once, not wrapped twice
    assert not hasattr(mps.get_preparation_data.ragreport_original,
                       "ragreport_original")
