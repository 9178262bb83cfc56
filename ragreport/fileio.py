"""Writing outputs safely: all of them or none, each to a temporary file renamed into place.

:func:`write_outputs` writes several outputs as one step. Every output is checked first (its
folder exists, it is not a directory, not an input, not given twice); then every file is written
to a temporary file beside its destination; then the outputs that cannot be renamed into (standard
output, a character device such as ``/dev/stdout``, a FIFO) are written; and only then are the
temporary files renamed over their destinations. When any step fails, every temporary file is
removed and no existing file has been replaced.

- ``-`` means standard output (for one output at most).
- A path that names an open descriptor (``/dev/stderr``, ``/dev/fd/3``, ``/proc/self/fd/3``)
  is written through that descriptor, so ``--markdown /dev/stderr 2>>log`` appends to the
  log as the shell opened it; the file behind it is never replaced.
- An output that is a symbolic link is written *through*: its target is replaced (atomically,
  in the target's own folder) and the link stays a link.
- A file that is replaced keeps its permission bits; a new file gets ``0o666`` less the umask,
  as ``open`` would give it.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import RagReportError

__all__ = ["STDOUT", "check_outputs", "is_stdout", "shown_path", "write_atomic",
           "write_outputs"]

#: The output path that means standard output.
STDOUT = "-"

PathLike = str | os.PathLike[str]


def shown_path(path: PathLike) -> str:
    """``path`` as text that can be printed anywhere: undecodable bytes escaped (``\\xff``).

    >>> shown_path(b"caf\\xe9.md".decode("utf-8", "surrogateescape"))
    'caf\\\\xe9.md'
    """
    text = os.fspath(path)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _encode(data: str | bytes) -> bytes:
    # a lone surrogate (undecodable bytes of a file name) is written escaped, never a crash
    return data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data


def _stdout_stat() -> os.stat_result | None:
    try:
        return os.fstat(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # replaced by an object without a descriptor
        return None


def is_stdout(path: PathLike) -> bool:
    """Whether writing ``path`` means writing standard output (``-``, ``/dev/stdout``...)."""
    if os.fspath(path) == STDOUT:
        return True
    out = _stdout_stat()
    if out is None:
        return False
    try:
        return os.path.samestat(os.stat(path), out)
    except (OSError, ValueError):
        return False


def _umask() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o22)  # elsewhere: read it by setting it (and set it back at once)
    os.umask(mask)
    return mask


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except (OSError, RuntimeError, ValueError):
        return False


@dataclass
class _Output:
    shown: str       # as given (escaped for messages)
    data: bytes
    kind: str        # "stdout", "fd" (an open descriptor), "stream" (device or FIFO: written
                     # directly) or "file"
    target: Path     # the file replaced (a symlink's target)
    mode: int = 0o644
    tmp: str | None = None
    fd: int | None = None  # for "fd": the descriptor written


#: Paths that name a descriptor this process has open (``/dev/stderr``, ``/dev/fd/3``).
_FD_PATH = re.compile(r"/dev/(?:fd/([0-9]+)|(stdin|stdout|stderr))|/proc/self/fd/([0-9]+)")


def _descriptor(path: PathLike) -> int | None:
    """The descriptor ``path`` names (``/dev/stderr`` -> 2, ``/dev/fd/3`` -> 3), else None.

    Such a path is a link to whatever the descriptor has open (``2>>log.txt``); it is written
    through the descriptor, never by replacing that file.

    >>> _descriptor("/dev/stderr"), _descriptor("/dev/fd/3"), _descriptor("out.md")
    (2, 3, None)
    """
    m = _FD_PATH.fullmatch(os.fspath(path))
    if m is None:
        return None
    number, name, proc = m.groups()
    return ("stdin", "stdout", "stderr").index(name) if name else int(number or proc)


def _plan(path: PathLike, data: bytes, inputs: Sequence[Path]) -> _Output:
    shown = shown_path(path)
    if os.fspath(path) == "":
        raise RagReportError("an output path is empty")
    if is_stdout(path):
        return _Output(shown, data, "stdout", Path(STDOUT))
    fd = _descriptor(path)
    if fd is not None:
        try:
            os.fstat(fd)
        except OSError:
            raise RagReportError(f"cannot write {shown}: descriptor {fd} is not open") from None
        return _Output(shown, data, "fd", Path(path), fd=fd)
    given = Path(path)
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    for inp in inputs:
        if _same_file(target, inp):
            raise RagReportError(f"refusing to write {shown}: it is one of the inputs")
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise RagReportError(f"cannot write {shown}: {exc.strerror}") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise RagReportError(f"cannot write {shown}: it is a directory")
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            return _Output(shown, data, "stream", target)
        if not stat.S_ISREG(st.st_mode):
            raise RagReportError(f"cannot write {shown}: not a regular file")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise RagReportError(f"cannot write {shown}: folder {shown_path(parent)} does not "
                             "exist")
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
    return _Output(shown, data, "file", target, mode)


def _plans(outputs: Sequence[tuple[PathLike, str | bytes]],
           inputs: Iterable[PathLike]) -> list[_Output]:
    ins = [Path(p) for p in inputs]
    plans = [_plan(path, _encode(data), ins) for path, data in outputs]
    if sum(p.kind == "stdout" for p in plans) > 1:
        raise RagReportError("standard output ('-') can be used for one output only")
    seen: dict[str, str] = {}
    for p in plans:
        if p.kind == "stdout":
            continue
        key = os.path.realpath(p.target)
        if key in seen:
            raise RagReportError(f"two outputs are the same file: {seen[key]} and {p.shown}")
        seen[key] = p.shown
    return plans


def check_outputs(paths: Sequence[PathLike], inputs: Iterable[PathLike] = ()) -> None:
    """Raise what :func:`write_outputs` would raise before writing anything to ``paths``.

    For a command to refuse a missing folder, a directory or an input given as an output
    before it does any work (it is checked again when the outputs are written).
    """
    _plans([(p, b"") for p in paths], inputs)


def _remove_temps(plans: Iterable[_Output]) -> None:
    for p in plans:
        if p.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(p.tmp)
            p.tmp = None


def write_outputs(outputs: Sequence[tuple[PathLike, str | bytes]],
                  inputs: Iterable[PathLike] = ()) -> list[str]:
    """Write every ``(path, data)`` of ``outputs``, or none of them; returns the paths shown.

    Text is written as UTF-8. Refuses to overwrite any of ``inputs``, to write two outputs to
    the same file, and to use standard output (``-``) for more than one output.

    Raises
    ------
    RagReportError
        An output cannot be written (its folder does not exist or is read-only, the disk is
        full...): no existing file was replaced and no temporary file is left.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_outputs([(d / "a.txt", "A"), (d / "b.txt", b"B")]) == [str(d / "a.txt"),
    ...                                                               str(d / "b.txt")]
    True
    """
    plans = _plans(outputs, inputs)
    files = [p for p in plans if p.kind == "file"]
    try:
        for p in files:  # 1. every file to a temporary file beside its destination
            try:
                # a short name of its own: the output's name may already be as long as
                # the file system allows
                fd, p.tmp = tempfile.mkstemp(prefix=".ragreport-", suffix=".tmp",
                                             dir=p.target.parent)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(p.data)
                    fh.flush()
                    os.fchmod(fh.fileno(), p.mode)
            except OSError as exc:
                raise RagReportError(f"cannot write {p.shown}: {exc.strerror}") from None
        for p in plans:  # 2. what cannot be renamed into: written directly
            if p.kind == "stdout":
                try:
                    _write_stdout(p.data)
                except OSError as exc:  # a broken pipe: the other outputs are not written
                    raise RagReportError(f"cannot write to standard output: "
                                         f"{exc.strerror or exc}") from None
            elif p.kind == "fd" and p.fd is not None:
                try:
                    _write_descriptor(p.fd, p.data)
                except OSError as exc:
                    raise RagReportError(f"cannot write {p.shown}: {exc.strerror}") from None
            elif p.kind == "stream":
                try:
                    with open(p.target, "wb") as fh:
                        fh.write(p.data)
                except OSError as exc:
                    raise RagReportError(f"cannot write {p.shown}: {exc.strerror}") from None
        for p in files:  # 3. every temporary file renamed into place
            tmp = p.tmp
            if tmp is None:  # pragma: no cover - set in step 1
                continue
            try:
                os.replace(tmp, p.target)
            except OSError as exc:
                raise RagReportError(f"cannot write {p.shown}: {exc.strerror}") from None
            p.tmp = None
    finally:
        _remove_temps(files)
    return [STDOUT if p.kind == "stdout" else p.shown for p in plans]


def _write_descriptor(fd: int, data: bytes) -> None:
    """All of ``data`` to the open descriptor ``fd`` (after Python's own buffers of it)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            if stream is not None and stream.fileno() == fd:
                stream.flush()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_stdout(data: bytes) -> None:
    out = sys.stdout
    if out is None:
        raise RagReportError("cannot write to standard output: it is closed")
    out.flush()
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        buffer.write(data)
        buffer.flush()
    else:  # a text-only stream (a test's capture)
        out.write(data.decode("utf-8", "replace"))
        out.flush()


def write_atomic(path: PathLike, data: str | bytes, inputs: Iterable[PathLike] = ()) -> Path:
    """Write ``data`` to ``path`` atomically; refuse to overwrite any of ``inputs``.

    One output of :func:`write_outputs`: the data goes to a temporary file beside ``path``
    (beside a symlink's target) which is then renamed over it, so a reader never sees a
    half-written file and a failure leaves the old file intact.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_atomic(d / "out.txt", "hello").read_text()
    'hello'
    """
    write_outputs([(path, data)], inputs)
    return Path(path)
