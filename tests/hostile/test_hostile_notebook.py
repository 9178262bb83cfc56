"""Hostile-input catalogue: ``ragreport notebook``.

Every bad input or option is reported in one line *before any kernel starts*: these cases
install a fake ``python3`` kernel (first on ``JUPYTER_PATH``) that only leaves a marker file
when it is started, and assert the marker is absent. The few cases that go further: none
installed (a virtual environment where no kernel spec is found), a kernel that does not start
(the fake one: the marker must then be there), a kernel whose Python lacks ragreport, a cell
that fails, an HTML export that fails after the notebook ran (neither output is written), and
names and file names that would be links, markup or mathtext, checked in the exported HTML
(also in Chromium).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import nbformat
import pytest
from hostile import QRELS, RUN, Case, CaseResult, outer_site_dirs, run_case
from paths import ROOT

#: A "python3" kernel that only marks that it was started (then exits: it never answers).
FAKE_KERNEL = json.dumps({
    "argv": [sys.executable, "-c",
             "import os, pathlib; pathlib.Path(os.environ['KERNEL_MARKER']).touch()",
             "{connection_file}"],
    "display_name": "marks its start", "language": "python"})
FAKE_KERNEL_ENV = {"JUPYTER_PATH": "{tmp}/jupyter", "KERNEL_MARKER": "{tmp}/kernel-started"}
OLD_OUTPUTS = {"nb.ipynb": "an older notebook\n", "nb.html": "an older page\n"}


def _no_kernel_started(result: CaseResult) -> None:
    assert not (result.tmp / "kernel-started").exists(), \
        "a kernel was started before the inputs were checked"


def _kernel_started(result: CaseResult) -> None:
    assert (result.tmp / "kernel-started").exists(), "the fake kernel was not started"


def early(id: str, argv: list[str], stderr: str, files: Mapping[str, str | bytes | None] = {},
          **kwargs: object) -> Case:
    """A case refused before any kernel starts; existing outputs stay as they are."""
    return Case(id, ["notebook", *argv],
                {"qrels.txt": QRELS, "run.txt": RUN, **OLD_OUTPUTS,
                 "jupyter/kernels/python3/kernel.json": FAKE_KERNEL, **files},
                exit=2, stderr=stderr, env=FAKE_KERNEL_ENV, check=_no_kernel_started,
                timeout=60, **kwargs)  # type: ignore[arg-type]


def _mkfifo(tmp: Path) -> None:
    os.mkfifo(tmp / "fifo.txt")


def _link_to_input(tmp: Path) -> None:
    (tmp / "link.ipynb").symlink_to(tmp / "run.ipynb")


# ---- a machine where no Jupyter kernel is installed -------------------------------------------
_SYSTEM_KERNELS = [Path(d, "kernels", "python3") for d in
                   ("/usr/local/share/jupyter", "/usr/share/jupyter")]


def _venv_without_kernel(tmp: Path) -> None:
    """A virtual environment that imports everything installed here but finds no kernel spec.

    Kernel specs are looked up in $JUPYTER_PATH, the user's data folder, the environment's
    ``share/jupyter`` (this new, empty one) and the system's; the native fallback imports
    ipykernel, hidden here by a module that refuses to import (first on PYTHONPATH).
    """
    if any(p.exists() for p in _SYSTEM_KERNELS):
        pytest.skip("a python3 kernel is installed system-wide: cannot simulate its absence")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp / "venv")],
                   check=True, timeout=120)
    purelib = subprocess.run([str(tmp / "venv" / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # this interpreter's packages (their .pth files too: an editable install of ragreport)
    (Path(purelib) / "outer-site.pth").write_text(
        "".join(f"import site; site.addsitedir({d!r})\n" for d in outer_site_dirs()),
        encoding="utf-8")


def _kernel_without_ragreport(tmp: Path) -> None:
    """A python3 kernel whose interpreter has ipykernel but not ragreport.

    A virtual environment that sees this interpreter's site directories as plain folders
    (their .pth files, an editable install of ragreport among them, are not run; what an
    editable install leaves there, such as ragreport/templates, is a namespace package).
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp / "kvenv")],
                   check=True, timeout=120)
    py = tmp / "kvenv" / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path("
                              "'purelib'))"], check=True, capture_output=True,
                             text=True).stdout.strip()
    (Path(purelib) / "outer-site.pth").write_text("".join(d + "\n" for d in outer_site_dirs()),
                                                  encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if subprocess.run([str(py), "-c", "import ragreport.notebook"], env=env, cwd=tmp,
                      capture_output=True).returncode == 0:
        pytest.skip("ragreport is installed (not editable) beside ipykernel here")
    spec = tmp / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(py), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 without ragreport", "language": "python"}),
        encoding="utf-8")


NO_KERNEL_ENV = {"PYTHONPATH": f"{{tmp}}/hide{os.pathsep}{ROOT}", "JUPYTER_PATH": "",
                 "JUPYTER_DATA_DIR": "{tmp}/jupyter-data", "PYTHONNOUSERSITE": "1"}


# ---- names that would be links, markup or mathtext ---------------------------------------------
LINK_FILE = "q[x](javascript:alert(1)).txt"
IMG_FILE = "<img src=x onerror=alert(1)>.txt"
TAG = "[c](javascript:alert(3))<i>x</i>"
UNDECODABLE_FILE = os.fsdecode(b"c\xff.txt")  # not UTF-8: a lone surrogate in Python
HOSTILE_RUN = RUN.replace(" tag\n", f" {TAG}\n")


def _inert_html(result: CaseResult) -> None:
    nb = nbformat.read(result.tmp / "nb.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [o for c in code for o in c.outputs if o.get("output_type") == "error"] == []
    assert all(c.execution_count for c in code)
    markdown = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for text in (LINK_FILE, IMG_FILE, TAG, "undefined", "_hidden", "javascript", "<img"):
        assert text not in markdown, f"user text {text!r} in a Markdown cell"
    names = "".join(o["data"].get("text/plain", "") for c in code for o in c.outputs
                    if "data" in o)
    assert "'$\\\\undefined$'" in names and "'_hidden'" in names and repr(TAG) in names
    pngs = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(pngs) == 1  # the curves, drawn with the mathtext-looking name

    body = (result.tmp / "nb.html").read_text(encoding="utf-8")
    links = re.findall(r"<a\b[^>]*>", body, re.I)
    assert [a for a in links if 'class="anchor-link"' not in a] == [], links
    assert not re.search(r"""\b(?:href|src|action)\s*=\s*["']?\s*javascript:""", body, re.I)
    assert "<img src=x" not in body and "<i>x</i>" not in body
    assert "&lt;img src=x onerror=alert(1)&gt;" in body

    from browser import PageLog, launch

    with launch() as browser:
        page = browser.new_page()
        log = PageLog.attach(page)
        page.goto((result.tmp / "nb.html").as_uri())
        page.wait_for_load_state("load")
        assert page.locator("a[href^='javascript' i]").count() == 0
        assert page.locator("img[src='x']").count() == 0
        text = page.inner_text("body")
        for shown in (LINK_FILE, IMG_FILE, TAG, "$\\undefined$", "_hidden", "'c\\udcff.txt'"):
            assert shown in text, f"{shown!r} is not shown as text"
        assert log.dialogs == [] and log.page_errors == [] and log.outside_requests == []


CASES = [
    # inputs (the readers' own errors, with file and line)
    early("missing-qrels", ["nope.txt", "run.txt", "-o", "nb.ipynb"], r"nope\.txt: no such file"),
    early("missing-run", ["qrels.txt", "run.txt", "gone.txt", "-o", "nb.ipynb"],
          r"gone\.txt: no such file"),
    early("missing-queries", ["qrels.txt", "run.txt", "--queries", "q.tsv", "-o", "nb.ipynb"],
          r"q\.tsv: no such file"),
    early("run-is-a-folder", ["qrels.txt", "runs", "-o", "nb.ipynb"],
          r"runs: not a regular file", {"runs/a.txt": RUN}),
    early("run-is-a-fifo", ["qrels.txt", "fifo.txt", "-o", "nb.ipynb"],
          r"fifo\.txt: not a regular file", setup=_mkfifo),
    early("run-on-stdin", ["qrels.txt", "-", "-o", "nb.ipynb"], r"standard input",
          stdin=RUN.encode()),
    early("bad-score", ["qrels.txt", "bad.txt", "-o", "nb.ipynb"], r"bad\.txt:2\b.*score",
          {"bad.txt": "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 0x10 t\n"}),
    early("bad-grade", ["badq.txt", "run.txt", "-o", "nb.ipynb"], r"badq\.txt:2\b.*grade",
          {"badq.txt": "q1 0 d1 1\nq1 0 d2 two\n"}),
    early("bad-queries-line", ["qrels.txt", "run.txt", "--queries", "q.jsonl", "-o",
                               "nb.ipynb"], r"q\.jsonl:1\b.*JSON", {"q.jsonl": "{not json\n"}),
    early("truncated-gzip-run", ["qrels.txt", "run.txt.gz", "-o", "nb.ipynb"],
          r"run\.txt\.gz: .*gzip", {"run.txt.gz": gzip.compress(RUN.encode() * 50)[:120]}),
    early("empty-run", ["qrels.txt", "empty.txt", "-o", "nb.ipynb"], r"empty\.txt: .*empty",
          {"empty.txt": ""}),
    early("example-bad-docs", ["--example", "--docs", "d.jsonl", "-o", "nb.ipynb"],
          r"d\.jsonl:1\b", {"d.jsonl": "[1, 2\n"}),
    # options
    early("bad-measure", ["qrels.txt", "run.txt", "-m", "nDCG@", "-o", "nb.ipynb"],
          r"'nDCG@'"),
    early("bad-worst-measure", ["qrels.txt", "run.txt", "--worst-measure", "zzz", "-o",
                                "nb.ipynb"], r"unknown measure 'zzz'"),
    early("worst-measure-not-computed", ["qrels.txt", "run.txt", "--worst-measure",
                                         "P(rel=2)@5", "-o", "nb.ipynb"],
          r"no curve for P\(rel=2\)"),
    early("too-many-names", ["qrels.txt", "run.txt", "--name", "a", "--name", "b", "-o",
                             "nb.ipynb"], r"2 names given for 1 run"),
    early("same-names", ["qrels.txt", "run.txt", "run2.txt", "--name", "a", "--name", "a",
                         "-o", "nb.ipynb"], r"run names must be distinct", {"run2.txt": RUN}),
    early("example-too-many-names", ["--example", "--name", "a", "--name", "b", "--name", "c",
                                     "-o", "nb.ipynb"], r"3 names given for 2 run"),
    early("example-and-inputs", ["--example", "qrels.txt", "-o", "nb.ipynb"], r"takes no"),
    early("no-run", ["qrels.txt", "-o", "nb.ipynb"], r"needs QRELS and at least one RUN"),
    # outputs
    early("output-is-an-input", ["qrels.txt", "run.ipynb", "-o", "run.ipynb"],
          r"refusing to write run\.ipynb: it is one of the inputs", {"run.ipynb": RUN}),
    early("output-links-to-an-input", ["qrels.txt", "run.ipynb", "-o", "link.ipynb"],
          r"refusing to write link\.ipynb: it is one of the inputs", {"run.ipynb": RUN},
          setup=_link_to_input),
    early("html-is-an-input", ["qrels.txt", "run.txt", "-o", "nb.ipynb", "--html",
                               "qrels.txt"], r"refusing to write qrels\.txt"),
    early("output-folder-missing", ["qrels.txt", "run.txt", "-o", "missing/nb.ipynb"],
          r"cannot write missing/nb\.ipynb: folder missing does not exist"),
    early("html-folder-missing", ["qrels.txt", "run.txt", "-o", "nb.ipynb", "--html",
                                  "missing/nb.html"], r"folder missing does not exist"),
    early("output-not-ipynb", ["qrels.txt", "run.txt", "-o", "nb.json"],
          r"must end in \.ipynb, got nb\.json"),
    early("output-is-a-folder", ["qrels.txt", "run.txt", "-o", "out.ipynb"],
          r"cannot write out\.ipynb: it is a directory", {"out.ipynb/keep": ""}),
    early("html-same-as-notebook", ["qrels.txt", "run.txt", "-o", "nb.ipynb", "--html",
                                    "./nb.ipynb"],
          r"two outputs are the same file: nb\.ipynb and \./nb\.ipynb"),
    # kernels
    Case("no-kernel-installed", ["notebook", "qrels.txt", "run.txt", "-o", "nb.ipynb",
                                 "--html", "nb.html"],
         {"qrels.txt": QRELS, "run.txt": RUN, **OLD_OUTPUTS,
          "hide/ipykernel/__init__.py": "raise ImportError('ipykernel is not installed')\n",
          "jupyter-data/.keep": ""},
         exit=2, stderr=r"^ragreport: error: no Jupyter kernel named python3 is installed; "
                        r"pip install ipykernel$",
         env=NO_KERNEL_ENV, setup=_venv_without_kernel, python="{tmp}/venv/bin/python"),
    Case("nbclient-not-installed", ["notebook", "qrels.txt", "run.txt", "-o", "nb.ipynb"],
         {"qrels.txt": QRELS, "run.txt": RUN, **OLD_OUTPUTS,
          "hide/nbclient/__init__.py": "raise ModuleNotFoundError(\"No module named 'nbclient'"
                                       "\", name='nbclient')\n"},
         exit=2, stderr=r"^ragreport: error: running a notebook needs nbclient: pip install "
                        r"nbclient ipykernel$",
         env={"PYTHONPATH": f"{{tmp}}/hide{os.pathsep}{ROOT}"}),
    Case("kernel-does-not-start", ["notebook", "qrels.txt", "run.txt", "-o", "nb.ipynb",
                                   "--html", "nb.html"],
         {"qrels.txt": QRELS, "run.txt": RUN, **OLD_OUTPUTS,
          "jupyter/kernels/python3/kernel.json": FAKE_KERNEL},
         exit=2, stderr=r"the Jupyter kernel python3 did not start", env=FAKE_KERNEL_ENV,
         check=_kernel_started),
    Case("cell-fails", ["notebook", "qrels.txt", "run.txt", "-o", "sub/nb.ipynb", "--html",
                        "sub/nb.html"],
         {"qrels.txt": QRELS, "run.txt": RUN,
          "sub/nb.ipynb": "an older notebook\n", "sub/nb.html": "an older page\n",
          # the kernel runs in the notebook's folder: this shadows the real package there
          "sub/ragreport.py": "raise RuntimeError('a ragreport.py of the user')\n"},
         exit=2, stderr=r"failed in cell 2 \(from pathlib import Path\): RuntimeError: "
                        r"a ragreport\.py of the user$"),
    Case("kernel-without-ragreport", ["notebook", "qrels.txt", "run.txt", "-o", "nb.ipynb"],
         {"qrels.txt": QRELS, "run.txt": RUN, **OLD_OUTPUTS}, exit=2,
         stderr=r"failed in cell 2 \(from pathlib import Path\): ModuleNotFoundError: No "
                r"module named 'ragreport(\.notebook)?' \(the Jupyter kernel python3 runs "
                r"\S*/kvenv/bin/python: install ragreport there\)$",
         env={"JUPYTER_PATH": "{tmp}/jupyter", "PYTHONPATH": ""},
         setup=_kernel_without_ragreport),
    Case("html-export-fails", ["notebook", "qrels.txt", "run.txt", "-o", "nb.ipynb", "--html",
                               "nb.html"],
         {"qrels.txt": QRELS, "run.txt": RUN, **OLD_OUTPUTS,
          # nbconvert finds its "lab" template first on JUPYTER_PATH: this one fails
          "jupyter/nbconvert/templates/lab/index.html.j2": "{{ no_such_function() }}\n"},
         exit=2, stderr=r"cannot export the notebook to HTML: UndefinedError",
         env={"JUPYTER_PATH": "{tmp}/jupyter"}),
    Case("names-as-links-markup-mathtext",
         ["notebook", "qrels.txt", LINK_FILE, IMG_FILE, UNDECODABLE_FILE, "--name",
          "$\\undefined$", "--name", "_hidden", "-o", "nb.ipynb", "--html", "nb.html"],
         {"qrels.txt": QRELS, LINK_FILE: RUN, IMG_FILE: RUN, UNDECODABLE_FILE: HOSTILE_RUN},
         exit=0, check=_inert_html),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)
