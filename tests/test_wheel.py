"""The wheel ships the templates and the example: build it, install it in a fresh virtual
environment and render a report from there (not from this checkout)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_renders_report_from_a_fresh_venv(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                    str(dist), str(ROOT)], check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("ragreport-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "ragreport/templates/report.html.j2" in names
    assert "ragreport/py.typed" in names
    assert "ragreport/examples/pydoc/qrels.txt" in names
    assert not any(n.startswith("tests/") for n in names)

    venv = tmp_path / "venv"
    # dependencies come from this interpreter's site-packages; ragreport only from the wheel
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                    "--disable-pip-version-check", str(wheel)], check=True, timeout=300)
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run([str(py), "-c", "import ragreport; print(ragreport.__file__)"],
                           check=True, capture_output=True, text=True, cwd=work).stdout
    assert str(venv) in where, f"ragreport imported from {where!r}, not from the wheel"
    out = work / "report.html"
    proc = subprocess.run([str(venv / "bin" / "ragreport"), "report", "--example", "--html",
                           str(out), "--generated-at", "2026-01-01T00:00:00Z"],
                          capture_output=True, text=True, cwd=work, timeout=300)
    assert proc.returncode == 0, proc.stderr
    html = out.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "bm25" in html and "tfidf" in html and "<svg" in html
