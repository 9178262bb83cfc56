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
    assert "11 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(("module", "line", "message"), [
    # the report data rendering itself (what Report.to_html did before report/output.py)
    ("report/model.py", "from .html import render_html",
     "ragreport.report.model is not allowed to import ragreport.report.html"),
    # a result opening a widget (what EvaluationResult.explore did)
    ("core/result.py", "from ..explorer.widget import Explorer",
     "ragreport.core is not allowed to import ragreport.explorer"),
    # the plots reaching back to the HTML page that embeds them
    ("report/plots.py", "from . import html",
     "ragreport.report.plots is not allowed to import ragreport.report.html"),
    # the package facade, which names every layer, imported from inside a layer
    ("stats.py", "from . import __version__",
     "ragreport.stats is not allowed to import"),
    # what the options ask to read reaching up to the report built from it
    ("cli/inputs.py", "from .report import report_for",
     "ragreport.cli.inputs is not allowed to import ragreport.cli.report"),
    # the measure registry reaching up to the engine that dispatches through it
    ("core/kernel.py", "from .engine import evaluate",
     "ragreport.core.kernel is not allowed to import ragreport.core.engine"),
    # the core's old cycle: a result computing through the engine, the doc map evaluating
    ("core/result.py", "from .engine import evaluate",
     "ragreport.core.result is not allowed to import ragreport.core.engine"),
    ("core/docmap.py", "from .engine import evaluate",
     "ragreport.core.docmap is not allowed to import ragreport.core.engine"),
    # the report data building itself
    ("report/model.py", "from .build import build_report",
     "ragreport.report.model is not allowed to import ragreport.report.build"),
], ids=["model-renderer", "result-explorer", "plots-html", "stats-facade", "options-report",
        "kernel-engine", "result-engine", "docmap-engine", "model-builder"])

def test_a_back_edge_breaks_the_build(tmp_path: Path, module: str, line: str,
                                      message: str) -> None:
    done = _lint(tmp_path, module, line)
    assert done.returncode == 1, done.stdout + done.stderr
    assert message in " ".join(done.stdout.split()), done.stdout


def _private_uses(path: Path, package: Path) -> list[str]:
    """Another module's private names used in ``path``: imported (``from .engine import
    _Context``) or read from an imported module (``engine._CURVES``)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = path.relative_to(package.parent).with_suffix("").parts
    modules: set[str] = set()  # names bound to one of the package's modules
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = list(here[:len(here) - node.level]) if node.level else []
            target = [*base, *(node.module or "").split(".")] if node.module else base
            if node.level == 0 and target[:1] != [package.name]:
                continue  # another package's names are its own business
            for alias in node.names:
                sub = package.parent.joinpath(*target, alias.name)
                if sub.with_suffix(".py").is_file() or (sub / "__init__.py").is_file():
                    modules.add(alias.asname or alias.name)
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    out.append(f"{path.name}:{node.lineno}: from {'.' * node.level}"
                               f"{node.module or ''} import {alias.name}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            out.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


def test_no_module_uses_another_modules_private_names() -> None:
    """A name with a leading underscore is its module's own: no other module imports it or
    reads it from the module (what two modules share is public, named without it)."""
    package = ROOT / "ragreport"
    found = [use for path in sorted(package.rglob("*.py")) for use in _private_uses(path, package)]
    assert found == [], "\n".join(found)


def test_the_private_names_check_finds_both_forms(tmp_path: Path) -> None:
    package = tmp_path / "ragreport"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__.py", "engine.py", "sub/__init__.py"):
        (package / name).write_text("")
    bad = package / "sub" / "user.py"
    bad.write_text("from ..engine import _Context, evaluate\nfrom .. import engine\n"
                   "x = engine._CURVES\ny = engine.CURVES\n")
    assert _private_uses(bad, package) == ["user.py:1: from ..engine import _Context",
                                           "user.py:3: engine._CURVES"]


def _family_branches(path: Path, families: set[str]) -> list[str]:
    """Comparisons of a family's name with a literal (``m.name == "Judged"``, ``name in
    ("P", "R")``): what a measure does belongs to its registry entry, not to a branch."""
    import ast

    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        literals: set[object] = set()
        for side in (node.left, *node.comparators):
            if isinstance(side, ast.Constant):
                literals.add(side.value)
            elif isinstance(side, (ast.Tuple, ast.List, ast.Set)):
                literals |= {e.value for e in side.elts if isinstance(e, ast.Constant)}
        if literals & families:
            out.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_branch_on_a_family_name_outside_the_name_parser() -> None:
    """Only ``measures/`` (the names) compares a family's name with a literal; everything
    that computes or shows a measure asks its registry entry (``kernel_of(m)``, ``m.family``)."""
    from ragreport.measures import FAMILIES

    package = ROOT / "ragreport"
    found = [hit for path in sorted(package.rglob("*.py")) if path.parent.name != "measures"
             for hit in _family_branches(path, set(FAMILIES))]
    assert found == [], "\n".join(found)


def test_the_family_branch_check_finds_them(tmp_path: Path) -> None:
    bad = tmp_path / "user.py"
    bad.write_text('if m.name == "Judged" or name in ("P", "x") or k == "other":\n    pass\n')
    assert [h.split(": ", 1)[0] for h in _family_branches(bad, {"Judged", "P"})] == [
        "user.py:1", "user.py:1"]


def test_no_layer_allows_a_cycle() -> None:
    """Every layer of every contract lists independent siblings (``a | b``), never modules
    allowed to import each other (``a : b``, which would let a cycle in)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layers = [layer for c in config["tool"]["importlinter"]["contracts"]
              for layer in c.get("layers", [])]
    assert layers and [x for x in layers if ":" in x] == []
