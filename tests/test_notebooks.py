"""The shipped notebooks run without error, and ``ragreport notebook`` writes an executed
notebook plus an HTML export that reads offline (checked in headless Chromium)."""

from __future__ import annotations

import base64
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser import PageLog, launch
from nbclient import NotebookClient

from ragreport.cli import main

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _execute(path: Path) -> Any:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def _errors(nb: Any) -> list[str]:
    return [f"{o.get('ename')}: {o.get('evalue')}" for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if o.get("output_type") == "error"]


def test_both_notebooks_are_shipped() -> None:
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "compare_runs.ipynb"}


@pytest.mark.parametrize("name", ["quickstart.ipynb", "compare_runs.ipynb"])
def test_committed_without_outputs(name: str) -> None:
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


@pytest.mark.parametrize("name", ["quickstart.ipynb", "compare_runs.ipynb"])
def test_notebook_executes(name: str, tmp_path: Path) -> None:
    copy = tmp_path / name
    shutil.copy(ROOT / "notebooks" / name, copy)
    nb = _execute(copy)  # raises CellExecutionError on any failing cell
    assert _errors(nb) == []
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert outputs
    # the explorer cell shows a widget view and the static fallbacks
    bundles = [o["data"] for o in outputs if "application/vnd.jupyter.widget-view+json"
               in o.get("data", {})]
    assert bundles and "text/html" in bundles[0] and "text/plain" in bundles[0]
    if name == "quickstart.ipynb":
        report = tmp_path / "quickstart-report.html"
        assert report.is_file() and report.stat().st_size > 1000
        assert not (ROOT / "notebooks" / "quickstart-report.html").exists()
    else:
        text = "".join(o.get("text", "") for o in outputs)
        assert "biggest losses of tfidf against bm25" in text


def test_cli_notebook_example(tmp_path: Path) -> None:
    out, page = tmp_path / "analysis.ipynb", tmp_path / "analysis.html"
    assert main(["notebook", "--example", "-o", str(out), "--html", str(page)]) == 0
    nb = nbformat.read(out, as_version=4)
    assert _errors(nb) == []
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "the notebook was executed"
    sources = "\n".join(c.source for c in code)
    imports = set(re.findall(r"^(?:from|import) ([\w.]+)", sources, re.M))
    assert imports <= {"pathlib", "ragreport", "ragreport.examples", "ragreport.notebook"}
    pngs = [o["data"]["image/png"] for c in code for o in c.outputs
            if "image/png" in o.get("data", {})]
    assert pngs and base64.b64decode(pngs[0])[:8] == b"\x89PNG\r\n\x1a\n"
    htmls = "".join(o["data"].get("text/html", "") for c in code for o in c.outputs
                    if "data" in o)
    assert "Worst 15 of 41 queries of bm25" in htmls and "tfidf" in htmls

    body = page.read_text(encoding="utf-8")
    loads = re.findall(r"<(?:script|img|link|iframe)\b[^>]*\b(?:src|href)\s*=\s*[\"']?"
                       r"((?:https?:)?//[^\"' >]+)", body, re.I)
    assert loads == []
    assert "require.js" not in body and "cdnjs" not in body
    assert re.search(r"<img[^>]+src=\"data:image/png;base64,", body)
    assert "Worst 15 of 41 queries" in body

    with launch() as browser:
        p = browser.new_page()
        log = PageLog.attach(p)
        p.goto(page.as_uri())
        p.wait_for_load_state("load")
        assert p.locator("img[src^='data:image/png']").count() >= 1
        assert "Retrieval analysis" in p.inner_text("body")
        assert log.outside_requests == []
        assert log.page_errors == []


def test_cli_notebook_user_files_relative_and_rerunnable(tmp_path: Path) -> None:
    from ragreport.examples import example_files

    f = example_files()
    data = tmp_path / "data"
    data.mkdir()
    for p in (f.qrels, *f.runs, f.queries):
        shutil.copy(p, data / p.name)
    out = tmp_path / "nb.ipynb"
    code = main(["notebook", str(data / "qrels.txt"), str(data / "run_bm25.txt"),
                 str(data / "run_tfidf.txt"), "--queries", str(data / "queries.tsv"),
                 "--name", "A", "--name", "B", "-o", str(out)])
    assert code == 0
    nb = nbformat.read(out, as_version=4)
    setup = nb.cells[1].source
    assert "Path('data/qrels.txt')" in setup and "'A': Path('data/run_bm25.txt')" in setup
    assert str(tmp_path) not in setup
    # a colleague moves the folder and reruns it
    moved = tmp_path.parent / (tmp_path.name + "-moved")
    shutil.copytree(tmp_path, moved)
    nb2 = _execute(moved / "nb.ipynb")
    assert _errors(nb2) == []
    shutil.rmtree(moved)


def test_cli_notebook_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["notebook", "-o", str(tmp_path / "x.ipynb")]) == 2
    assert "needs QRELS" in capsys.readouterr().err
    assert main(["notebook", str(tmp_path / "nope.txt"), str(tmp_path / "nope2.txt"),
                 "-o", str(tmp_path / "x.ipynb")]) == 2
    assert "no such file" in capsys.readouterr().err
