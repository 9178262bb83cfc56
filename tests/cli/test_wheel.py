"""The wheel ships the templates and the example: build it, install it in a fresh virtual
environment and render a report from there (not from this checkout).

The test runs the same in a virtual environment and in a system interpreter. The fresh
environment does not share the base interpreter's packages (``--system-site-packages`` would
give those of the interpreter the *outer* virtual environment was made from, without the
outer environment's own packages); instead, once the wheel is installed, a ``.pth`` file puts
the site directories of the interpreter running the tests after its own, so the dependencies
come from wherever they are installed here and ``ragreport`` only from the wheel. Nothing is
downloaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hostile import outer_site_dirs
from paths import ROOT


def isolated_env() -> dict[str, str]:
    """This environment without what would put the checkout on another interpreter's path."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}


def test_outer_site_dirs_hold_the_dependencies() -> None:
    import pyarrow

    dirs = outer_site_dirs()
    assert dirs
    assert any(Path(pyarrow.__file__).resolve().is_relative_to(Path(d).resolve())
               for d in dirs), (pyarrow.__file__, dirs)
    assert not any(Path(d).resolve() == ROOT for d in dirs)


@pytest.mark.slow
def test_wheel_renders_report_from_a_fresh_venv(tmp_path: Path) -> None:
    env = isolated_env()
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                    str(dist), str(ROOT)], check=True, capture_output=True, timeout=300,
                   env=env)
    (wheel,) = dist.glob("ragreport-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "ragreport/templates/report.html.j2" in names
    assert "ragreport/py.typed" in names
    assert "ragreport/examples/pydoc/qrels.txt" in names
    assert not any(n.startswith("tests/") for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300, env=env)
    py = venv / "bin" / "python"
    # installed before the outer site directories are visible: pip sees no other ragreport
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--disable-pip-version-check", str(wheel)], check=True, timeout=300,
                   env=env)
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path("
                              "'purelib'))"], check=True, capture_output=True, text=True,
                             env=env).stdout.strip()
    # the dependencies: this interpreter's site directories, after the venv's own (lines of a
    # .pth file are appended to sys.path; the .pth files in those folders are not run, so an
    # editable install of this checkout stays out)
    (Path(purelib) / "outer-site.pth").write_text(
        "".join(d + "\n" for d in outer_site_dirs()), encoding="utf-8")

    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run([str(py), "-c", "import ragreport, pyarrow; print(ragreport.__file__)"],
                           check=True, capture_output=True, text=True, cwd=work,
                           env=env).stdout
    assert Path(where.strip()).resolve().is_relative_to(venv.resolve()), \
        f"ragreport imported from {where!r}, not from the wheel"
    out = work / "report.html"
    proc = subprocess.run([str(venv / "bin" / "ragreport"), "report", "--example", "--html",
                           str(out), "--generated-at", "2026-01-01T00:00:00Z"],
                          capture_output=True, text=True, cwd=work, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    html = out.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "bm25" in html and "tfidf" in html and "<svg" in html
