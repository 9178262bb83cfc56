"""The hostile-input catalogue's harness: run ``ragreport`` as a user would and check what a
user (or a CI job) relies on.

Each catalogue file (``tests/test_hostile_*.py``) holds one parametrised table of
:class:`Case` rows and one test that calls :func:`run_case`. A case names the files to create
(in a fresh temporary folder, which is the command's working folder), the command line, the
expected exit code and what the single stderr line must say. :func:`run_case` then asserts, for
every case:

- the exit code;
- on failure (exit 2 or 130): exactly one line on stderr, matching ``stderr`` (a regular
  expression, searched), and never a traceback (unless the case passes ``--debug``);
- on exit 1: no traceback, and the ``stdout`` pattern when given;
- every file that existed before the command and is listed in ``unchanged`` (by default: every
  file the case created) is byte-for-byte the same afterwards;
- no temporary file is left in the folder;
- no process started by the command is still running once it has exited (every process it
  starts inherits a unique token in its environment, and ``/proc`` is searched for it);
- optionally, that the command ran under an address-space limit (``max_memory_mib``), so a
  regression that allocates by a number the user typed fails instead of swapping.

Paths in ``argv``, ``env`` and ``stdin`` may use ``{tmp}`` for the temporary folder.
"""

from __future__ import annotations

import os
import re
import resource
import site
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Case", "CaseResult", "leftover_processes", "outer_site_dirs", "run_case",
           "run_ragreport"]

#: A small, valid pair of inputs the catalogue starts from (3 queries, graded, one tie).
QRELS = ("q1 0 d1 1\nq1 0 d2 2\nq1 0 d4 0\n"
         "q2 0 d3 1\nq2 0 d8 3\n"
         "q3 0 d7 1\n")
RUN = ("q1 Q0 d1 1 3.0 tag\nq1 Q0 d2 2 2.0 tag\nq1 Q0 d9 3 1.0 tag\n"
       "q2 Q0 d5 1 1.0 tag\nq2 Q0 d3 2 0.5 tag\nq2 Q0 d8 3 0.5 tag\n"
       "q3 Q0 d6 1 1.0 tag\nq3 Q0 d7 2 0.25 tag\n")

_TRACEBACK = "Traceback (most recent call last)"
_TOKEN_VAR = "RAGREPORT_HOSTILE_TOKEN"


@dataclass(frozen=True)
class Case:
    """One row of the catalogue.

    Parameters
    ----------
    id : str
        Short name shown by pytest.
    argv : sequence of str
        Arguments after ``ragreport`` (``{tmp}`` is the working folder).
    files : mapping
        Files to create before the command, relative to the working folder: bytes or text
        (text is written as UTF-8). A value of ``None`` creates nothing (for names only).
    exit : int
        Expected exit code.
    stderr : str, optional
        Regular expression the (single) stderr line must contain when the exit code is not 0.
    stdout : str, optional
        Regular expression stdout must contain.
    stdin : bytes, optional
        Bytes fed on standard input (else standard input is empty, never a terminal).
    env : mapping, optional
        Extra environment variables.
    unchanged : sequence of str, optional
        Files that must be byte-for-byte unchanged afterwards; default: every created file.
    max_memory_mib : int, optional
        Address-space limit for the command (``RLIMIT_AS``), in MiB.
    timeout : float
        Seconds before the case fails as hanging.
    check : callable, optional
        ``check(result)`` for anything else (numbers, files written).
    setup : callable, optional
        ``setup(tmp)`` run after the files are created (symlinks, FIFOs, permissions).
    python : str, optional
        The interpreter that runs ``-m ragreport`` (``{tmp}`` allowed, e.g. a virtual
        environment made by ``setup``); default: the one running the tests.
    """

    id: str
    argv: Sequence[str]
    files: Mapping[str, bytes | str | None] = field(default_factory=dict)
    exit: int = 2
    stderr: str | None = None
    stdout: str | None = None
    stdin: bytes | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    unchanged: Sequence[str] | None = None
    max_memory_mib: int | None = None
    timeout: float = 120.0
    check: Callable[[CaseResult], None] | None = None
    setup: Callable[[Path], None] | None = None
    python: str | None = None


@dataclass
class CaseResult:
    """What one command did: its exit code, its output and its folder."""

    code: int
    stdout: str
    stderr: str
    tmp: Path


def _fill(text: str, tmp: Path) -> str:
    return text.replace("{tmp}", str(tmp))


def _limit(max_memory_mib: int | None) -> Callable[[], None] | None:
    if max_memory_mib is None:
        return None
    limit = max_memory_mib << 20

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def leftover_processes(token: str) -> list[str]:
    """Command lines of the live processes whose environment holds ``token``."""
    needle = f"{_TOKEN_VAR}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes():
                continue
            status = (entry / "status").read_text()
            if "\nState:\tZ" in status:  # a zombie holds no resource and will be reaped
                continue
            found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                "utf-8", "replace"))
        except OSError:
            continue
    return found


def outer_site_dirs() -> list[str]:
    """The site directories the interpreter running the tests imports installed packages from.

    A virtual environment's own ``site-packages`` (and the base interpreter's ones when it was
    made with ``--system-site-packages``), else the system's and the user's.
    """
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def run_ragreport(argv: Sequence[str], tmp: Path, *, stdin: bytes | None = None,
                  env: Mapping[str, str] | None = None, timeout: float = 120.0,
                  max_memory_mib: int | None = None, token: str | None = None,
                  python: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m ragreport ARGV`` in ``tmp`` (the ``ragreport`` command, as installed)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("RAGREPORT_")}
    full_env.update({k: _fill(v, tmp) for k, v in (env or {}).items()})
    full_env[_TOKEN_VAR] = token or uuid.uuid4().hex
    full_env.setdefault("MPLBACKEND", "Agg")
    return subprocess.run(
        [_fill(python, tmp) if python else sys.executable, "-m", "ragreport",
         *(_fill(a, tmp) for a in argv)],
        cwd=tmp, input=stdin if stdin is not None else b"", capture_output=True,
        env=full_env, timeout=timeout, preexec_fn=_limit(max_memory_mib), check=False,
    )


def _snapshot(tmp: Path, names: Sequence[str]) -> dict[str, bytes]:
    out = {}
    for name in names:
        p = tmp / name
        if p.is_file() and not p.is_fifo():
            out[name] = p.read_bytes()
    return out


def _temp_files(tmp: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*")
                  if p.name.endswith(".tmp") or p.name.startswith(".ragreport-"))


def run_case(case: Case, tmp: Path) -> CaseResult:
    """Run one catalogue case in the empty folder ``tmp`` and assert what every case owes."""
    for name, content in case.files.items():
        if content is None:
            continue
        p = tmp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    if case.setup is not None:
        case.setup(tmp)
    watched = list(case.unchanged) if case.unchanged is not None else [
        n for n, c in case.files.items() if c is not None]
    before = _snapshot(tmp, watched)
    token = uuid.uuid4().hex
    proc = run_ragreport(case.argv, tmp, stdin=case.stdin, env=case.env, timeout=case.timeout,
                         max_memory_mib=case.max_memory_mib, token=token, python=case.python)
    result = CaseResult(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                        proc.stderr.decode("utf-8", "replace"), tmp)
    where = f"[{case.id}] exit {result.code}\n--- stderr\n{result.stderr}\n--- stdout\n" \
            f"{result.stdout[:2000]}"
    assert result.code == case.exit, where
    debug = "--debug" in case.argv
    if not debug:
        assert _TRACEBACK not in result.stderr and _TRACEBACK not in result.stdout, where
    if case.exit in (2, 130) and not debug:
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1, f"expected one line on stderr\n{where}"
        assert lines[0].startswith("ragreport"), where
    if case.stderr is not None:
        assert re.search(case.stderr, result.stderr), f"stderr !~ {case.stderr!r}\n{where}"
    if case.stdout is not None:
        assert re.search(case.stdout, result.stdout), f"stdout !~ {case.stdout!r}\n{where}"
    after = _snapshot(tmp, watched)
    assert after == before, f"an existing file changed: " \
        f"{sorted(n for n in before if after.get(n) != before[n])}\n{where}"
    assert _temp_files(tmp) == [], f"temporary files left: {_temp_files(tmp)}\n{where}"
    deadline = time.monotonic() + 5.0
    while (left := leftover_processes(token)) and time.monotonic() < deadline:
        time.sleep(0.05)  # a worker that noticed its parent left may take a moment
    assert left == [], f"processes left running: {left}\n{where}"
    if case.check is not None:
        case.check(result)
    return result


def trec_means(stdout: str) -> dict[str, float]:
    """The ``all`` rows of ``evaluate --format trec`` output: ``{trec_name: value}``."""
    out = {}
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] == "all" and parts[0].strip() != "runid":
            out[parts[0].strip()] = float(parts[2])
    return out


def pytrec_eval_means(qrels: Mapping[str, Mapping[str, int]],
                      run: Mapping[str, Mapping[str, float]],
                      measures: Sequence[str]) -> dict[str, float]:
    """pytrec_eval's means (over the queries it evaluates) of trec_eval ``measures``."""
    import pytrec_eval

    names = {m.rsplit("_", 1)[0] if m.rsplit("_", 1)[-1].isdigit() else m for m in measures}
    per_query: dict[str, Any] = pytrec_eval.RelevanceEvaluator(
        {q: dict(d) for q, d in qrels.items()}, names).evaluate(
        {q: dict(d) for q, d in run.items()})
    return {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in measures}


def fifo(name: str, data: bytes) -> Callable[[Path], None]:
    """A setup: make the FIFO ``name`` and write ``data`` into it once a reader opens it."""

    def setup(tmp: Path) -> None:
        path = tmp / name
        os.mkfifo(path)

        def write() -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:  # no reader yet (ENXIO)
                    time.sleep(0.02)
                    continue
                os.set_blocking(fd, True)
                try:
                    os.write(fd, data) if len(data) < 65536 else _write_all(fd, data)
                except BrokenPipeError:
                    pass
                finally:
                    os.close(fd)
                return

        threading.Thread(target=write, daemon=True).start()

    return setup


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
