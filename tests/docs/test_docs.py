"""The user documentation: the README is short and its quick starts run as written (their
printed numbers included), its links resolve, and the site in ``docs/`` builds with
``mkdocs build --strict`` (every page in the navigation, every link and API reference
resolved)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from paths import DOCS, ROOT

README = ROOT / "README.md"
#: The README says what the project is, how to set it up and start; the rest is in docs/.
README_LINES = 200


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _expected_output(block: str) -> str:
    """What a block says it prints: the ``# `` comment lines right after a ``print(...)``
    line, in order."""
    out: list[str] = []
    lines = block.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("print("):
            for follow in lines[i + 1:]:
                if not follow.startswith("# "):
                    break
                out.append(follow[2:])
    return "".join(f"{x}\n" for x in out)


def test_the_readme_is_short() -> None:
    n = README.read_text(encoding="utf-8").count("\n")
    assert n < README_LINES, f"README.md has {n} lines; move detail into docs/"


def test_the_readme_python_quick_starts_run_and_print_what_they_say(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _blocks(README.read_text(encoding="utf-8"), "python")
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    said = 0
    for block in blocks:
        out = io.StringIO()
        scope: dict[str, object] = {}
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), scope)
        expected = _expected_output(block)
        said += bool(expected)
        assert out.getvalue() == expected, block
    assert said >= 1  # the numbers a quick start prints are checked
    assert {"report.html", "summary.md", "report.json"} <= {p.name for p in tmp_path.iterdir()}


def test_the_readme_command_line_quick_start_runs(tmp_path: Path) -> None:
    """Each command of the command-line quick start, as written (``ragreport`` is this
    interpreter's), in a fresh folder: every one exits 0 and the report is written."""
    blocks = [b for b in _blocks(README.read_text(encoding="utf-8"), "sh")
              if "pip install" not in b and "venv" not in b]
    assert blocks
    env = {**os.environ, "MPLBACKEND": "Agg"}
    ran = 0
    for block in blocks:
        for line in block.strip().splitlines():
            command = re.sub(r"^ragreport ", f"{sys.executable} -m ragreport ", line)
            done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=300, check=False)
            assert done.returncode == 0, (line, done.stderr[-2000:])
            ran += 1
    assert ran >= 3 and (tmp_path / "example-report.html").stat().st_size > 10_000
    assert (tmp_path / "ragreport.toml").is_file()


def test_the_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [x for x in links if "://" not in x]
    assert local
    assert [x for x in local if not (ROOT / x).exists()] == []


def test_every_docs_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages and {p for p in pages if f": {p}" not in nav} == set()


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    import mkdocs  # noqa: F401  (the test extras install it: never skipped)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert "evaluate" in api and "build_report" in api
    assert (tmp_path / "site" / "guides" / "gates" / "index.html").is_file()


def _doc_blocks() -> list[tuple[str, str]]:
    """Every Python block of the docs pages, as ``(page#n, code)``."""
    out = []
    for page in sorted(DOCS.rglob("*.md")):
        name = page.relative_to(DOCS).as_posix()
        for n, code in enumerate(_blocks(page.read_text(encoding="utf-8"), "python"), start=1):
            out.append((f"{name}#{n}", code))
    return out


#: Blocks that need a scene of their own, run as written by the test named here (which
#: prepares main's stored report, a Spark session, tracking stores...).
ELSEWHERE = {
    "guides/gates.md#1": ("analysis/test_drift.py", "test_readme_python_example_runs"),
    "guides/large-runs.md#2": ("engines/test_engines.py", "test_the_docs_spark_example_runs"),
    "guides/tracking.md#1": ("integrations/test_tracking.py", "test_readme_example_runs"),
}


def test_the_blocks_run_elsewhere_are_run_there() -> None:
    blocks = dict(_doc_blocks())
    for key, (module, test) in ELSEWHERE.items():
        assert key in blocks, f"{key}: no such block (the page changed: update ELSEWHERE)"
        source = (ROOT / "tests" / module).read_text(encoding="utf-8")
        assert f"def {test}(" in source, (key, module, test)


_HERE = [b for b in _doc_blocks() if b[0] not in ELSEWHERE]


@pytest.mark.parametrize(("key", "code"), _HERE, ids=[key for key, _ in _HERE])
def test_every_docs_python_block_runs_as_written(key: str, code: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """In a fresh folder; what a block prints is what its ``# `` lines after ``print`` say."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, key, "exec"), {})
    assert out.getvalue() == _expected_output(code), key


def test_the_user_docs_speak_of_the_product_only() -> None:
    """No project history in the README or the docs: issue numbers, dated logs, estimates of
    machines nobody measured."""
    from paths import user_docs

    text = user_docs()
    found = re.findall(r"\bissues? \d+\b|\(issue\b|\b20\d\d-\d\d-\d\d \d\d:\d\d|"
                       r"\bthis (?:2-core |shared )?machine\b|\b10-node\b", text, re.I)
    assert found == []


def test_the_generated_pages_are_up_to_date() -> None:
    """docs/reference/cli.md is every command's --help and docs/measures.md's table the
    registry's rows (scripts/gen_docs.py): neither drifts from the code."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert "## ragreport check" in page and "--max-drop" in page


def test_every_family_has_a_row_in_the_generated_measure_table() -> None:
    """docs/measures.md's measure table is written by scripts/gen_docs.py from the registry:
    each family of FAMILIES names a row (its canonical name first), no row names anything
    else, and the page holds the table (regenerating a page that lost a row restores it)."""
    from ragreport.measures import FAMILIES

    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    gen_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_docs)
    table = gen_docs.measures_table()
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = [re.match(r"\| `(\w+)", line).group(1) for line in rows]  # type: ignore[union-attr]
    assert set(FAMILIES) - set(named) == set(), "families without a row in the table"
    assert set(named) <= set(FAMILIES)
    page = (DOCS / "measures.md").read_text(encoding="utf-8")
    assert gen_docs.TABLE_START + table + gen_docs.TABLE_END in page
    assert gen_docs.measures_page(page.replace(rows[-1] + "\n", "")) == page


def test_the_github_actions_recipe_gates_as_written(tmp_path: Path) -> None:
    """The workflow of docs/guides/gates.md: its targets file and its gate step's commands,
    as written, in a checkout holding the embedded example's qrels and runs (main: BM25, the
    pull request: TF-IDF): the gate passes (code=0), and the step summary is the Markdown."""
    import yaml

    import ragreport

    text = (DOCS / "guides" / "gates.md").read_text(encoding="utf-8")
    [toml] = [b for b in _blocks(text, "toml") if b.startswith("# eval/ragreport.toml")]
    [workflow] = _blocks(text, "yaml")
    steps = yaml.safe_load(workflow)["jobs"]["ragreport"]["steps"]
    gate = next(s for s in steps if s.get("id") == "gate")["run"]
    files = ragreport.example_files()
    (tmp_path / "eval").mkdir()
    (tmp_path / "runs").mkdir()
    (tmp_path / "eval" / "qrels.txt").write_bytes(Path(files.qrels).read_bytes())
    (tmp_path / "runs" / "main.txt").write_bytes(Path(files.runs[0]).read_bytes())
    (tmp_path / "runs" / "pr.txt").write_bytes(Path(files.runs[1]).read_bytes())
    (tmp_path / "eval" / "ragreport.toml").write_text(toml, encoding="utf-8")
    out, summary = tmp_path / "github_output", tmp_path / "step_summary"
    env = {**os.environ, "GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary),
           "MPLBACKEND": "Agg"}
    script = re.sub(r"^(\s*)ragreport ", rf"\1{sys.executable} -m ragreport ", gate, flags=re.M)
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.read_text(encoding="utf-8").strip() == "code=0", done.stdout[-3000:]
    md = summary.read_text(encoding="utf-8")
    assert md.startswith("<!-- ragreport -->") and "nDCG@10" in md
    assert {"ragreport.html", "ragreport.md", "ragreport.json"} <= {
        p.name for p in tmp_path.iterdir()}
