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
from paths import ROOT

from ragreport.cli.app import main

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
    # the explorer cell shows two outputs: the text/html snapshot (for viewers without a
    # kernel or widget state), marked with the model id, then the anywidget view with a
    # one-line text/plain
    at = [i for i, o in enumerate(outputs)
          if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(at) == 1
    bundle, snapshot = outputs[at[0]]["data"], outputs[at[0] - 1]["data"]
    assert bundle["text/plain"].startswith("ragreport Explorer: ")
    assert "text/html" not in bundle  # shown once, as the snapshot
    model_id = bundle["application/vnd.jupyter.widget-view+json"]["model_id"]
    assert list(snapshot) == ["text/html"]
    assert f'data-role="snapshot" data-rr-snapshot="{model_id}"' in snapshot["text/html"]
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    assert state[model_id]["model_name"] == "AnyModel"  # the anywidget explorer
    assert "explorer.js" in state[model_id]["state"]["_esm"] or \
        "export default" in state[model_id]["state"]["_esm"]
    text = "".join(o.get("text", "") for o in outputs)
    if name == "quickstart.ipynb":
        report = tmp_path / "quickstart-report.html"
        assert report.is_file() and report.stat().st_size > 1000
        assert not (ROOT / "notebooks" / "quickstart-report.html").exists()
        assert "worst 5 at nDCG@10: ['q03'," in text
        assert "no judged relevant document: ['q40', 'q41']" in text
        assert "queries mentioning 'list':" in text
        assert re.search(r"R@5 > 0\.85 +0\.\d{4}  (pass|fails)", text)
    else:
        assert "biggest losses of tfidf against bm25: ['q19'," in text
        assert "biggest losses of bm25 against tfidf:" in text
        assert "nDCG@10: B - A = −0.0269" in text
        assert "refused: run A and run B must differ" in text


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


def test_cli_notebook_user_files_relative_and_rerunnable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ragreport.examples import example_files

    f = example_files()
    data = tmp_path / "data"
    data.mkdir()
    for p in (f.qrels, *f.runs, f.queries):
        shutil.copy(p, data / p.name)
    out = tmp_path / "nb.ipynb"
    code = main(["notebook", str(data / "qrels.txt"), str(data / "run_bm25.txt"),
                 str(data / "run_tfidf.txt"), "--queries", str(data / "queries.tsv"),
                 "--name", "A", "--name", "B", "-o", str(out), "--html", "-"])
    assert code == 0
    captured = capsys.readouterr()  # the HTML on standard output, the notebook in its file
    assert captured.out.lstrip().lower().startswith("<!doctype html")
    assert captured.err.splitlines() == [f"wrote {out}"]
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


def test_setup_cell_holds_names_and_paths_as_literals(tmp_path: Path) -> None:
    """Names and paths reach the generated code only as Python literals, whatever they hold."""
    import ast

    from hostile import QRELS, RUN

    from ragreport.notebook import build_analysis_notebook

    odd = ["it's \"quoted\"\\", "line\nbreak ''' \"\"\" #", "\u202eevil\u0000", "{RUNS}"]
    files = [tmp_path / "q'rels\n.txt", *(tmp_path / f"run {i} '.txt" for i in range(5))]
    files[0].write_text(QRELS, encoding="utf-8")
    for f in files[1:]:
        f.write_text(RUN, encoding="utf-8")
    nb = build_analysis_notebook(files[0], files[1:], tmp_path, names=odd,
                                 worst_measure="P@3", measures=["ndcg@10", "P.5"])
    setup = nb.cells[1].source
    tree = ast.parse(setup)  # valid Python
    assigned = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    runs = assigned["RUNS"]
    assert isinstance(runs, ast.Dict)
    assert [ast.literal_eval(k) for k in runs.keys if k is not None] == [*odd, "tag"]
    paths = [ast.literal_eval(v.args[0]) for v in runs.values if isinstance(v, ast.Call)]
    assert paths == [f.name for f in files[1:]]
    assert ast.literal_eval(assigned["MEASURES"]) == ["nDCG@10", "P@5"]
    assert ast.literal_eval(assigned["WORST_MEASURE"]) == "P@3"
    markdown = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert not any(text in markdown for text in (*odd, "q'rels", "run 0"))


def test_curves_legend_shows_names_as_given() -> None:
    """A name starting with "_" is in the legend; a name between dollars is not mathtext."""
    import ragreport
    from ragreport.examples import example_files
    from ragreport.notebook import curves_figure

    f = example_files()
    qrels = ragreport.load_qrels(f.qrels)
    names = ["$\\undefined$", "_hidden"]
    results = [ragreport.evaluate(qrels, ragreport.load_run(p, name=n))
               for p, n in zip(f.runs, names, strict=True)]
    fig = curves_figure(results)
    assert fig._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"  # drawn: no mathtext error
    for ax in fig.figure.axes:
        assert [t.get_text() for t in ax.get_legend().get_texts()] == names


@pytest.mark.parametrize("signame", ["SIGINT", "SIGKILL"])
def test_interrupt_stops_the_kernel(signame: str, tmp_path: Path) -> None:
    """Ctrl-C while the notebook runs: one line, exit 130, no kernel left, nothing written.
    SIGKILL of the command: the kernel notices its parent is gone and exits too."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import uuid

    from hostile import leftover_processes

    token = uuid.uuid4().hex
    env = {**os.environ, "RAGREPORT_HOSTILE_TOKEN": token}
    proc = subprocess.Popen([sys.executable, "-m", "ragreport", "notebook", "--example",
                             "-o", "nb.ipynb", "--html", "nb.html"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not any("ipykernel" in c for c in leftover_processes(token)):
            assert proc.poll() is None and time.monotonic() < deadline, "no kernel started"
            time.sleep(0.05)
        time.sleep(0.5)  # the kernel is running the cells
        proc.send_signal(getattr(signal, signame))
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if signame == "SIGINT":
        assert proc.returncode == 130, err
        assert err.decode().splitlines() == ["ragreport: interrupted"]
    else:
        assert proc.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 5
    while (left := leftover_processes(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == []
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_curves_legend_escapes_what_no_font_draws() -> None:
    """Undecodable bytes of a file name (lone surrogates) and control characters: escaped,
    drawn without a missing-glyph warning or a font error."""
    import warnings

    import ragreport
    from ragreport.examples import example_files
    from ragreport.notebook import curves_figure

    f = example_files()
    qrels = ragreport.load_qrels(f.qrels)
    names = ["run\udcff", "tab\there\x00"]
    results = [ragreport.evaluate(qrels, ragreport.load_run(p, name=n))
               for p, n in zip(f.runs, names, strict=True)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = curves_figure(results)
        assert fig._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"
    legend = fig.figure.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["run\\udcff", "tab\\there\\x00"]


def test_targets_table_gives_the_reports_verdicts() -> None:
    """A target on the lower bound of the interval is checked on that bound, as the report
    checks it (same intervals), and the cell shows the value compared, not the mean."""
    import ragreport
    from ragreport.examples import example_files
    from ragreport.notebook import targets_table
    from ragreport.report import build_report
    from ragreport.targets import parse_targets

    f = example_files()
    qrels = ragreport.load_qrels(f.qrels)
    results = [ragreport.evaluate(qrels, ragreport.load_run(p)) for p in f.runs]
    targets = parse_targets({"R@5": {"min": 0.35, "on": "ci_lower"}, "nDCG@10": 0.3})
    rep = build_report(results, targets, generated_at="2020-01-01T00:00:00")
    table = targets_table(results, targets)
    assert table.rows[0][1] == ">= 0.35 on the interval's lower bound"
    for row, report_row in zip(table.rows, rep.targets, strict=True):
        want = [f"{c.shown} {'✔ pass' if c.passed else '✘ fail'}"
                for c in report_row.cells]
        assert row[2:] == want
    # the bound, below the mean, fails where the mean would pass
    first = rep.targets[0].cells[0]
    assert not first.passed and first.value < results[0].mean("R@5") and table.rows[0][2] != (
        f"{ragreport.targets.shown(results[0].mean('R@5'))} ✔ pass")
