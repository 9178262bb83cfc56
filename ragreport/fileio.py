"""Writing outputs safely: to a temporary file in the same folder, then renamed into place."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .errors import RagReportError

__all__ = ["write_atomic"]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def write_atomic(path: str | os.PathLike[str], data: str | bytes,
                 inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """Write ``data`` to ``path`` atomically; refuse to overwrite any of ``inputs``.

    The data goes to a temporary file beside ``path`` which is then renamed over it, so a
    reader never sees a half-written file and a crash leaves the old file intact.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_atomic(d / "out.txt", "hello").read_text()
    'hello'
    """
    target = Path(path)
    for inp in inputs:
        if _same_file(target, Path(inp)):
            raise RagReportError(f"refusing to write {target}: it is one of the inputs")
    if target.is_dir():
        raise RagReportError(f"cannot write {target}: it is a directory")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise RagReportError(f"cannot write {target}: folder {parent} does not exist")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise RagReportError(f"cannot write {target}: {exc.strerror}") from None
    return target
