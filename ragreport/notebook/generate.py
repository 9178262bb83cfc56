"""Generate, execute and export an analysis notebook (``ragreport notebook``): its inputs
checked before any kernel starts, its cells, the run with nbclient and the offline HTML
export with nbconvert (imported inside the functions that need them).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib
import logging
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data import distinct_names
from ..errors import RagReportError
from .display import printable

__all__ = ["WORST_MEASURE", "build_analysis_notebook", "export_html", "write_analysis_notebook"]


# ---- inputs, checked before any kernel starts ----------------------------------------------
#: The measure of the worst-queries tables when none is given.
WORST_MEASURE = "nDCG@10"


@dataclass(frozen=True)
class _Plan:
    """What the notebook loads, every piece of it already read and evaluated once here."""

    qrels: Path
    runs: dict[str, Path]            # run name -> file, in the order given
    queries: Path | None
    docs: Path | None
    measures: list[str] | None       # canonical names; None: ragreport's default measures
    worst_measure: str
    k_max: int
    example: bool
    fractional_grades: bool


def _shown(path: str | os.PathLike[str]) -> str:
    """A path as text for a message: undecodable bytes and control characters escaped."""
    from ..fileio import shown_path

    return printable(shown_path(path))


def _input_file(path: str | os.PathLike[str]) -> Path:
    if os.fspath(path) == "-":
        raise RagReportError("the notebook reads its inputs by path, each time it runs: "
                             "standard input ('-') cannot be one")
    p = Path(path)
    if not p.exists():
        raise RagReportError(f"{_shown(path)}: no such file")
    if not p.is_file():
        raise RagReportError(f"{_shown(path)}: not a regular file (the notebook reads its "
                             "inputs again each time it runs)")
    return p


def _prepare(qrels: str | os.PathLike[str] | None, runs: Sequence[str | os.PathLike[str]], *,
             queries: str | os.PathLike[str] | None, docs: str | os.PathLike[str] | None,
             names: Sequence[str] | None, example: bool,
             measures: Sequence[str] | None, worst_measure: str | None,
             fractional_grades: bool) -> _Plan:
    """Read and evaluate every input as the notebook will, so that it cannot fail on them.

    Raises the readers' own errors (file and line), before any kernel starts.
    """
    from ..core.engine import evaluate
    from ..io import load_docs, load_qrels, load_queries, load_run
    from ..measures import normalize_measures, parse_measure

    if example:
        from ..examples import example_files

        if qrels is not None or runs:
            raise RagReportError("the example takes no qrels or runs")
        files = example_files()
        qrels, runs = files.qrels, list(files.runs)
        queries = queries if queries is not None else files.queries
        docs = docs if docs is not None else files.docs
    elif qrels is None or not runs:
        raise RagReportError("an analysis notebook needs qrels and at least one run "
                             "(or the example)")
    qrels_path = _input_file(qrels)
    run_paths = [_input_file(p) for p in runs]
    queries_path = _input_file(queries) if queries is not None else None
    docs_path = _input_file(docs) if docs is not None else None
    wanted = normalize_measures(list(measures)) if measures else None
    worst = parse_measure(worst_measure if worst_measure is not None else WORST_MEASURE)
    k_max = max([20, *(m.cutoff for m in [*(wanted or []), worst] if m.cutoff)])
    qrels_data = load_qrels(qrels_path, fractional_grades=fractional_grades)
    loaded = [load_run(p) for p in run_paths]
    named = distinct_names(loaded, list(names or []))
    run_names = [r.name for r in named]
    for run in named:
        evaluate(qrels_data, run, wanted, k_max, fractional_grades=fractional_grades).values(worst)
    if queries_path is not None:
        load_queries(queries_path)
    if docs_path is not None:
        load_docs(docs_path)
    return _Plan(qrels_path, dict(zip(run_names, run_paths, strict=True)), queries_path,
                 docs_path, [str(m) for m in wanted] if wanted else None, str(worst), k_max,
                 example, fractional_grades)


def _check_outputs(out: Path, html_path: str | os.PathLike[str] | None,
                   inputs: Sequence[Path]) -> None:
    """The outputs can be written: checked before any kernel starts (and again when written)."""
    from ..fileio import check_outputs

    if out.suffix != ".ipynb":
        raise RagReportError(f"the notebook path must end in .ipynb, got {_shown(out)}")
    check_outputs([out, *([html_path] if html_path is not None else [])], inputs)


def _quiet_log() -> logging.Logger:
    """A logger for jupyter_client and nbclient that prints nothing (errors are raised)."""
    log = logging.getLogger("ragreport.notebook")
    log.propagate = False
    if not log.handlers:
        log.addHandler(logging.NullHandler())
    return log


def _modules() -> tuple[Any, Any, Any]:
    """nbformat, nbclient and jupyter_client's kernel specs, or a pointer to install them."""
    try:
        return (importlib.import_module("nbformat"), importlib.import_module("nbclient"),
                importlib.import_module("jupyter_client.kernelspec"))
    except ImportError as exc:
        raise RagReportError(f"running a notebook needs {exc.name or 'nbclient'}: "
                             "pip install nbclient ipykernel") from None


def _kernel_spec(kernelspec: Any, kernel_name: str) -> Any:
    """The installed kernel spec of ``kernel_name``, or a pointer to install one."""
    manager = kernelspec.KernelSpecManager(log=_quiet_log())
    try:
        return manager.get_kernel_spec(kernel_name)
    except kernelspec.NoSuchKernel:
        hint = ("pip install ipykernel" if kernel_name == "python3"
                else "'jupyter kernelspec list' shows the installed ones")
        raise RagReportError(f"no Jupyter kernel named {_shown(kernel_name)} is installed; "
                             f"{hint}") from None


# ---- generation --------------------------------------------------------------------------
def _path_code(path: Path, nb_dir: Path) -> str:
    """A path as code: relative to the notebook folder when inside it, else absolute."""
    p = path.resolve()
    try:
        rel = p.relative_to(nb_dir.resolve())
    except ValueError:
        return f"Path({str(p)!r})"
    return f"Path({rel.as_posix()!r})"


def _setup_code(plan: _Plan, nb_dir: Path) -> str:
    """The first code cell: imports and inputs. Every value from the user is a ``repr``."""
    head = ("from pathlib import Path\n\nimport ragreport\n"
            + ("from ragreport.examples import example_files\n" if plan.example else "")
            + "from ragreport.notebook import (curves_figure, summary_table, targets_table,\n"
              "                                worst_queries_table)\n\n")
    known: dict[Path, str] = {}
    if plan.example:
        from ..examples import example_files

        files = example_files()
        known = {files.qrels: "files.qrels", files.queries: "files.queries",
                 files.docs: "files.docs",
                 **{p: f"files.runs[{i}]" for i, p in enumerate(files.runs)}}
        head += "files = example_files()  # the embedded example shipped with ragreport\n"
    else:
        head += "# paths are relative to this notebook's folder when they are inside it\n"

    def code(p: Path | None) -> str:
        return "None" if p is None else known.get(p) or _path_code(p, nb_dir)

    runs = "".join(f"    {name!r}: {code(p)},\n" for name, p in plan.runs.items())
    return (head + f"QRELS = {code(plan.qrels)}\n"
            f"RUNS = {{\n{runs}}}\n"
            f"QUERIES = {code(plan.queries)}\n"
            f"DOCS = {code(plan.docs)}\n"
            f"MEASURES = {plan.measures!r}"
            + ("  # ragreport's default measures\n" if plan.measures is None else "\n")
            + f"K_MAX = {plan.k_max!r}\n"
            f"WORST_MEASURE = {plan.worst_measure!r}\n"
            f"FRACTIONAL_GRADES = {plan.fractional_grades!r}"
            + ("  # keep fractional grades as gains\n" if plan.fractional_grades else
               "  # grades read as trec_eval reads them (whole numbers)\n"))


def _notebook(plan: _Plan, nb_dir: Path) -> Any:
    """The analysis notebook (an nbformat node), not executed.

    No Markdown cell holds text from the user (a file or run name could be read as a link or
    as HTML): names and paths are in the code, as Python literals, and in the outputs, which
    are escaped.
    """
    from .._version import __version__

    nbformat: Any = importlib.import_module("nbformat")
    v4: Any = nbformat.v4
    md, code = v4.new_markdown_cell, v4.new_code_cell
    inputs = ("the embedded example (Python documentation passages, BM25 and TF-IDF runs), "
              "loaded in the first code cell" if plan.example else
              "the files named in the first code cell")
    cells = [
        md(f"# Retrieval analysis\n\nInputs: {inputs}.\n\nGenerated by ragreport "
           f"{__version__} (`ragreport notebook`). Rerun it with *Run All*; it needs only "
           "`ragreport`."),
        code(_setup_code(plan, nb_dir)),
        code("qrels = ragreport.load_qrels(QRELS, fractional_grades=FRACTIONAL_GRADES)\n"
             "results = [ragreport.evaluate(qrels, ragreport.load_run(path, name=name),\n"
             "                              MEASURES, K_MAX,\n"
             "                              fractional_grades=FRACTIONAL_GRADES)\n"
             "           for name, path in RUNS.items()]\n"
             "queries = ragreport.load_queries(QUERIES) if QUERIES else {}\n"
             "docs = ragreport.load_docs(DOCS) if DOCS else {}\n"
             "[r.run_name for r in results]"),
        md("## Summary\n\nMean of each measure over the evaluated queries, one column per run."),
        code("summary_table(results)"),
        code("targets_table(results)  # the seed tutorial's typical targets"),
        md("## Metric vs K\n\nMean over queries for K = 1..K_max; targets are marked with ×."),
        code("curves_figure(results, families=(\"P\", \"R\", \"nDCG\", \"RR\"))"),
        md("## Worst queries\n\nThe queries with the lowest `WORST_MEASURE`, with why they "
           "fail."),
        code("for r in results:\n"
             "    display(worst_queries_table(r, WORST_MEASURE, n=15, queries=queries))"),
        md("## Explore interactively\n\nIn a live notebook, "
           "`ragreport.Explorer(results, queries=queries, docs=docs)` shows every "
           "query's ranking, the cut at K and the A/B comparison (ipywidgets)."),
    ]
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def build_analysis_notebook(qrels: str | os.PathLike[str] | None,
                            runs: Sequence[str | os.PathLike[str]], nb_dir: Path, *,
                            queries: str | os.PathLike[str] | None = None,
                            docs: str | os.PathLike[str] | None = None,
                            names: Sequence[str] | None = None, example: bool = False,
                            measures: Sequence[str] | None = None,
                            worst_measure: str | None = None,
                            fractional_grades: bool = False) -> Any:
    """The analysis notebook (an nbformat node), not executed; its inputs read and checked.

    Raises
    ------
    RagReportError
        An input is missing, malformed or cannot be evaluated as asked.
    """
    return _notebook(_prepare(qrels, runs, queries=queries, docs=docs, names=names,
                              example=example, measures=measures,
                              worst_measure=worst_measure,
                              fractional_grades=fractional_grades), nb_dir)


_OFFLINE_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""

_REMOTE_LOAD = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>\s*</script>"
    r"|<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^>]*>", re.IGNORECASE)


def export_html(nb: Any) -> str:
    """Static HTML of an executed notebook that loads nothing from any host."""
    from jinja2 import DictLoader

    exporter_cls: Any = importlib.import_module("nbconvert").HTMLExporter

    nb = nb.copy() if hasattr(nb, "copy") else nb
    nb.metadata.pop("widgets", None)
    # nbconvert looks for its templates under sys.prefix; inside a virtual environment that
    # shares the base interpreter's packages they live under sys.base_prefix instead
    base_dirs = [os.path.join(p, "share", "jupyter", "nbconvert", "templates")
                 for p in dict.fromkeys((sys.prefix, sys.base_prefix))]
    exporter = exporter_cls(template_name="lab",
                            extra_template_basedirs=[d for d in base_dirs if os.path.isdir(d)],
                            extra_template_paths=[d for d in base_dirs if os.path.isdir(d)],
                            extra_loaders=[DictLoader({"ragreport_offline.html.j2":
                                                       _OFFLINE_TEMPLATE})],
                            template_file="ragreport_offline.html.j2")
    body, _ = exporter.from_notebook_node(nb)
    return str(_REMOTE_LOAD.sub("", body))


def _one_line(text: str, limit: int = 300) -> str:
    """Text of an error as one short line (ANSI colours dropped, whitespace collapsed)."""
    line = printable(" ".join(re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text).split()))
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _cell_label(nb: Any, index: int | None) -> str:
    if index is None:
        return "the notebook"
    first = next((ln for ln in str(nb.cells[index].source).splitlines() if ln.strip()), "")
    return f"cell {index + 1} ({_one_line(first, 60)})"


def _execute(nb: Any, nb_dir: Path, spec: Any, kernel_name: str, timeout: int) -> None:
    """Run every cell in a kernel started in ``nb_dir``; stop the kernel whatever happens.

    A failing cell, a kernel that does not start or dies, a cell that does not finish within
    ``timeout`` seconds: a :class:`RagReportError` naming the cell. Ctrl-C stops the kernel
    before ``KeyboardInterrupt`` goes on.
    """
    nbclient: Any = importlib.import_module("nbclient")
    exceptions: Any = importlib.import_module("nbclient.exceptions")
    current: list[int] = []

    def on_cell_start(cell: Any, cell_index: int) -> None:
        current.append(cell_index)

    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name=kernel_name,
                                     resources={"metadata": {"path": str(nb_dir)}},
                                     log=_quiet_log(), on_cell_start=on_cell_start,
                                     shutdown_kernel="immediate")
    # nbclient would take SIGINT and SIGTERM for itself (stop the kernel, then fail on); it
    # leaves them alone when the loop refuses them: Ctrl-C raises KeyboardInterrupt here
    loop: Any = importlib.import_module("jupyter_core.utils").ensure_event_loop()
    loop.add_signal_handler = _refuse_signal_handler
    try:
        # the kernel's own output (start-up warnings) would garble the one-line errors
        client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except exceptions.CellExecutionError as exc:
        failed = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                       and any(o.get("output_type") == "error" for o in c.get("outputs", []))),
                      current[-1] if current else None)
        what = _one_line(f"{exc.ename}: {exc.evalue}" if exc.ename else str(exc))
        hint = ""
        if exc.ename == "ModuleNotFoundError" and re.fullmatch(
                r"No module named 'ragreport(\.[\w.]+)?'", str(exc.evalue)):
            hint = (f" (the Jupyter kernel {kernel_name} runs {_one_line(spec.argv[0])}: "
                    "install ragreport there)")
        raise RagReportError(f"the analysis notebook failed in {_cell_label(nb, failed)}: "
                             f"{what}{hint}") from None
    except exceptions.CellTimeoutError:
        where = _cell_label(nb, current[-1] if current else None)
        raise RagReportError(f"{where} did not finish within {timeout} s") from None
    except exceptions.DeadKernelError:
        where = _cell_label(nb, current[-1] if current else None)
        raise RagReportError(f"the Jupyter kernel {kernel_name} died while running "
                             f"{where}") from None
    except (OSError, RuntimeError) as exc:  # the kernel did not start
        raise RagReportError(f"the Jupyter kernel {kernel_name} did not start: "
                             f"{_one_line(str(exc) or type(exc).__name__)}") from None
    except BaseException:  # Ctrl-C, SIGTERM: the kernel is stopped before this goes on
        _cancel_pending(loop)
        raise
    finally:
        del loop.add_signal_handler
        if client.km is None:
            # the kernel is gone; when it failed to start, nbclient leaves its exit-time
            # clean-up registered, which would fail (and print a traceback) at exit
            atexit.unregister(client._cleanup_kernel)


def _refuse_signal_handler(*args: Any) -> None:
    raise RuntimeError("ragreport handles SIGINT and SIGTERM itself")


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what an interrupt left pending: nbclient's own clean-up stops the kernel."""
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def write_analysis_notebook(
    qrels: str | os.PathLike[str] | None,
    runs: Sequence[str | os.PathLike[str]],
    out_path: str | os.PathLike[str],
    html_path: str | os.PathLike[str] | None = None,
    queries: str | os.PathLike[str] | None = None,
    docs: str | os.PathLike[str] | None = None,
    names: Sequence[str] | None = None,
    example: bool = False,
    *,
    measures: Sequence[str] | None = None,
    worst_measure: str | None = None,
    fractional_grades: bool = False,
    timeout: int = 120,
    kernel_name: str = "python3",
) -> list[str]:
    """Generate, execute and write the analysis notebook (and its offline HTML export).

    Everything that can be checked is checked before a kernel starts: the inputs are read and
    evaluated as the notebook will (the readers' errors, with file and line), the measures and
    names, the outputs' folders, and that a Jupyter kernel named ``kernel_name`` is installed.
    The notebook is executed in its own folder, so relative paths work for whoever reruns it.
    Both files are written, or neither (``html_path`` ``-``: standard output). Returns the
    paths written.

    Raises
    ------
    RagReportError
        A bad input or option, no such kernel, a cell that fails (named), an output that
        cannot be written.
    """
    from ..fileio import write_outputs

    out = Path(out_path)
    plan = _prepare(qrels, runs, queries=queries, docs=docs, names=names, example=example,
                    measures=measures, worst_measure=worst_measure,
                    fractional_grades=fractional_grades)
    inputs = [p for p in (plan.qrels, *plan.runs.values(), plan.queries, plan.docs)
              if p is not None]
    _check_outputs(out, html_path, inputs)
    nbformat, _, kernelspec = _modules()
    spec = _kernel_spec(kernelspec, kernel_name)
    nb_dir = (out.parent if str(out.parent) else Path(".")).resolve()
    nb = _notebook(plan, nb_dir)
    _execute(nb, nb_dir, spec, kernel_name, timeout)
    outputs: list[tuple[str | os.PathLike[str], str]] = [(out, nbformat.writes(nb) + "\n")]
    if html_path is not None:
        try:
            page = export_html(nb)
        except Exception as exc:  # nbconvert's template machinery: any failure, one line
            raise RagReportError(f"cannot export the notebook to HTML: "
                                 f"{_one_line(f'{type(exc).__name__}: {exc}')}") from None
        outputs.append((html_path, page))
    return write_outputs(outputs, inputs)
