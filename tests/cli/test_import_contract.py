"""The import contract (``[tool.importlinter]`` in pyproject.toml) holds, and a back-edge breaks it.

The layers are checked on a copy of the package so that one import can be injected into it;
imports inside functions count as much as module-level ones.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

pytest.importorskip("importlinter")



def _lint(tmp_path: Path, module: str | None = None,
          line: str = "") -> subprocess.CompletedProcess[str]:
    shutil.copytree(ROOT / "ragreport", tmp_path / "ragreport",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if module is not None:
        path = tmp_path / "ragreport" / module
        late = f"\n\ndef _late() -> None:\n    {line}\n"  # a deferred import counts too
        path.write_text(path.read_text(encoding="utf-8") + late, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-c", "from importlinter.cli import "
                           "lint_imports_command; lint_imports_command()", "--no-cache"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_the_package_keeps_its_contracts(tmp_path: Path) -> None:
    done = _lint(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(("module", "line", "message"), [
    # the report data rendering itself (what Report.to_html did before report/output.py)
    ("report/model.py", "from .html import render_html",
     "ragreport.report.model is not allowed to import ragreport.report.html"),
    # a result opening a widget (what EvaluationResult.explore did)
    ("result.py", "from .explorer.widget import Explorer",
     "ragreport.result is not allowed to import ragreport.explorer"),
    # the plots reaching back to the HTML page that embeds them
    ("report/plots.py", "from . import html",
     "ragreport.report.plots is not allowed to import ragreport.report.html"),
    # the package facade, which names every layer, imported from inside a layer
    ("stats.py", "from . import __version__",
     "ragreport.stats is not allowed to import"),
    # what the options ask to read reaching up to the report built from it
    ("clioptions.py", "from .clireport import report_for",
     "ragreport.clioptions is not allowed to import ragreport.clireport"),
], ids=["model-renderer", "result-explorer", "plots-html", "stats-facade", "options-report"])
def test_a_back_edge_breaks_the_build(tmp_path: Path, module: str, line: str,
                                      message: str) -> None:
    done = _lint(tmp_path, module, line)
    assert done.returncode == 1, done.stdout + done.stderr
    assert message in " ".join(done.stdout.split()), done.stdout
