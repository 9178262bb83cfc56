"""Analysis notebooks: generate, execute, export to offline HTML (``ragreport notebook``).

:func:`write_analysis_notebook` writes an ``.ipynb`` whose cells load the given qrels and runs,
show the summary and the targets, plot every metric against K and list the worst queries;
it executes the notebook with nbclient and, on request, exports it with nbconvert into an HTML
file that reads offline (no script or stylesheet from any host). The notebook imports only
ragreport, so a colleague can rerun it.

The small display helpers the notebook calls (:func:`summary_table`, :func:`targets_table`,
:func:`curves_figure`, :func:`worst_queries_table`) return objects with ``_repr_html_`` /
``_repr_png_`` and a plain-text ``repr``, so their outputs are static and survive nbconvert.
nbformat, nbclient, nbconvert and matplotlib are imported inside the functions that need them.
"""

from __future__ import annotations

import html
import importlib
import io
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import RagReportError
from .result import EvaluationResult

__all__ = [
    "Figure",
    "Table",
    "curves_figure",
    "export_html",
    "summary_table",
    "targets_table",
    "worst_queries_table",
    "write_analysis_notebook",
]


# ---- display helpers (used by the generated notebook) -------------------------------------
class Table:
    """A small table that shows as HTML in notebooks and as text elsewhere."""

    def __init__(self, header: Sequence[str], rows: Sequence[Sequence[object]],
                 caption: str = "") -> None:
        self.header = [str(h) for h in header]
        self.rows = [[str(c) for c in r] for r in rows]
        self.caption = caption

    def _repr_html_(self) -> str:
        cap = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                       for r in self.rows)
        return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __repr__(self) -> str:
        widths = [max([len(h), *(len(r[i]) for r in self.rows)])
                  for i, h in enumerate(self.header)]
        lines = [self.caption] if self.caption else []
        lines.append("  ".join(h.ljust(w) for h, w in zip(self.header, widths, strict=True)))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
                  for r in self.rows]
        return "\n".join(lines)


class Figure:
    """A matplotlib figure that shows as an inline PNG (no pyplot, no backend set-up)."""

    def __init__(self, figure: Any, description: str = "") -> None:
        self.figure = figure
        self.description = description

    def _repr_png_(self) -> bytes:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(self.figure)
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=96, bbox_inches="tight")
        return buf.getvalue()

    def __repr__(self) -> str:
        return f"<figure: {self.description}>"


def _as_list(results: EvaluationResult | Sequence[EvaluationResult]) -> list[EvaluationResult]:
    return [results] if isinstance(results, EvaluationResult) else list(results)


def summary_table(results: EvaluationResult | Sequence[EvaluationResult]) -> Table:
    """Mean of every summary measure, one column per run."""
    rs = _as_list(results)
    measures: list[str] = []
    for r in rs:
        measures += [str(m) for m in r.measures if str(m) not in measures]
    rows = [[m, *(f"{r.mean(m):.4f}" for r in rs)] for m in measures]
    rows.append(["queries evaluated", *(str(r.counts.evaluated) for r in rs)])
    return Table(["measure", *(r.run_name for r in rs)], rows, "Mean over the evaluated queries")


def targets_table(results: EvaluationResult | Sequence[EvaluationResult],
                  targets: Sequence[Any] | None = None) -> Table:
    """Every target checked against every run's mean (default: the typical targets)."""
    from .targets import default_targets, passes, shown

    rs = _as_list(results)
    ts = list(targets) if targets is not None else default_targets()
    rows = []
    for t in ts:
        cells = []
        for r in rs:
            v = r.mean(t.measure)
            cells.append(f"{shown(v)} {'✔ pass' if passes(v, t.op, t.threshold) else '✘ fail'}")
        rows.append([str(t.measure), f"{t.op} {t.threshold:g}", *cells])
    return Table(["measure", "target", *(r.run_name for r in rs)], rows, "Targets")


def curves_figure(results: EvaluationResult | Sequence[EvaluationResult],
                  families: Sequence[str] = ("P", "R", "nDCG", "RR"),
                  targets: Sequence[Any] | None = None) -> Figure:
    """Mean metric vs K (K = 1..k_max) for each family, every run overlaid, targets marked."""
    from matplotlib.figure import Figure as MplFigure

    from .targets import default_targets

    rs = _as_list(results)
    ts = list(targets) if targets is not None else default_targets()
    fams = [f for f in families if all(f in {str(k) for k in r.curves} for r in rs)]
    if not fams:
        raise RagReportError("none of the families has a curve in these results")
    cols = min(2, len(fams))
    nrows = (len(fams) + cols - 1) // cols
    fig = MplFigure(figsize=(5.2 * cols, 3.4 * nrows))
    styles = ("-", "--", "-.", ":")
    markers = ("o", "s", "^", "D")
    for n, fam in enumerate(fams):
        ax = fig.add_subplot(nrows, cols, n + 1)
        for j, r in enumerate(rs):
            c = r.mean_curve(fam)
            ax.plot(range(1, len(c) + 1), c, linestyle=styles[j % 4], marker=markers[j % 4],
                    markersize=3, label=r.run_name)
        for t in ts:
            if t.measure.name == fam:
                if t.measure.cutoff is not None:
                    ax.plot([t.measure.cutoff], [t.threshold], marker="x", color="black",
                            markersize=8, linestyle="none")
                    ax.annotate(f"target {t.op} {t.threshold:g}",
                                (t.measure.cutoff, t.threshold), fontsize=8,
                                textcoords="offset points", xytext=(4, 4))
                else:
                    ax.axhline(t.threshold, color="black", linestyle=":", linewidth=1)
        ax.set_title(f"{fam}@K")
        ax.set_xlabel("K")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return Figure(fig, "mean " + ", ".join(fams) + " vs K")


def worst_queries_table(result: EvaluationResult, measure: str = "nDCG@10", n: int = 15,
                        queries: Mapping[str, str] | None = None) -> Table:
    """The ``n`` lowest-scoring queries for a measure, with their failure kind at its K."""
    import numpy as np

    from .diagnose import FAILURE_KINDS, failure_kinds
    from .measures import parse_measure

    m = parse_measure(measure)
    values = result.values(m)
    kinds = failure_kinds(result, m.cutoff or result.k_max)
    order = np.lexsort((np.arange(len(values)), values))[:n]
    texts = {**result.query_texts, **(queries or {})}
    rows = []
    for i in order.tolist():
        q = result.query_ids[i]
        text = " ".join(texts.get(q, "").split())
        rows.append([q, text[:80], f"{float(values[i]):.4f}",
                     FAILURE_KINDS[int(kinds[i])] if kinds[i] else ""])
    return Table(["query", "text", str(m), "failure"], rows,
                 f"Worst {len(rows)} of {result.n_queries} queries of {result.run_name} by {m}")


# ---- generation --------------------------------------------------------------------------
def _path_code(path: str | os.PathLike[str], nb_dir: Path) -> str:
    """A path as code: relative to the notebook folder when inside it, else absolute."""
    p = Path(path).resolve()
    try:
        rel = p.relative_to(nb_dir.resolve())
    except ValueError:
        return f"Path({str(p)!r})"
    return f"Path({rel.as_posix()!r})"


def _run_names(runs: Sequence[str | os.PathLike[str]], names: Sequence[str] | None
               ) -> list[str | None]:
    """Distinct run names: the given ones, else the TREC tag, else the file name."""
    from .io import load_run

    given = list(names or [])
    if len(given) > len(runs):
        raise RagReportError(f"{len(given)} names given for {len(runs)} run(s)")
    out: list[str] = []
    for i, path in enumerate(runs):
        if i < len(given):
            out.append(given[i])
        else:
            out.append(load_run(path).name)
    stems = [Path(p).name.split(".")[0] for p in runs]
    final: list[str | None] = []
    for i, name in enumerate(out):
        if i >= len(given) and out.count(name) > 1:
            name = stems[i] if stems.count(stems[i]) == 1 else f"{stems[i]}-{i + 1}"
        final.append(name)
    if len(set(final)) != len(final):
        raise RagReportError(f"run names must be distinct, got {final}; give names")
    return final


def build_analysis_notebook(qrels: str | os.PathLike[str] | None,
                            runs: Sequence[str | os.PathLike[str]], nb_dir: Path, *,
                            queries: str | os.PathLike[str] | None = None,
                            docs: str | os.PathLike[str] | None = None,
                            names: Sequence[str] | None = None, example: bool = False,
                            measure: str = "nDCG@10") -> Any:
    """The analysis notebook (an nbformat node), not executed."""
    from . import __version__

    nbformat: Any = importlib.import_module("nbformat")
    v4: Any = nbformat.v4
    md, code = v4.new_markdown_cell, v4.new_code_cell
    if example:
        if qrels is not None or runs:
            raise RagReportError("example=True takes no qrels or runs")
        setup = ("from pathlib import Path\n\nimport ragreport\n"
                 "from ragreport.examples import example_files\n"
                 "from ragreport.notebook import (curves_figure, summary_table, targets_table,\n"
                 "                                worst_queries_table)\n\n"
                 "files = example_files()  # the embedded example shipped with ragreport\n"
                 "QRELS = files.qrels\n"
                 "RUNS = {\"bm25\": files.runs[0], \"tfidf\": files.runs[1]}\n"
                 "QUERIES = files.queries\nDOCS = files.docs")
        inputs = "the embedded example (Python documentation passages, BM25 and TF-IDF runs)"
    else:
        if qrels is None or not runs:
            raise RagReportError("an analysis notebook needs qrels and at least one run "
                                 "(or example=True)")
        for p in [qrels, *runs, *(x for x in (queries, docs) if x is not None)]:
            if not Path(p).is_file():
                raise RagReportError(f"{p}: no such file")
        run_names = _run_names(runs, names)
        run_lines = "".join(f"    {n!r}: {_path_code(p, nb_dir)},\n"
                            for n, p in zip(run_names, runs, strict=True))
        setup = ("from pathlib import Path\n\nimport ragreport\n"
                 "from ragreport.notebook import (curves_figure, summary_table, targets_table,\n"
                 "                                worst_queries_table)\n\n"
                 "# paths are relative to this notebook's folder when they are inside it\n"
                 f"QRELS = {_path_code(qrels, nb_dir)}\n"
                 f"RUNS = {{\n{run_lines}}}\n"
                 f"QUERIES = {_path_code(queries, nb_dir) if queries else None}\n"
                 f"DOCS = {_path_code(docs, nb_dir) if docs else None}")
        inputs = ", ".join(html.escape(Path(p).name) for p in [qrels, *runs])
    cells = [
        md(f"# Retrieval analysis\n\nInputs: {inputs}.\n\nGenerated by ragreport {__version__}"
           " (`ragreport notebook`). Rerun it with *Run All*; it needs only `ragreport`."),
        code(setup),
        code("qrels = ragreport.load_qrels(QRELS)\n"
             "results = [ragreport.evaluate(qrels, ragreport.load_run(path, name=name))\n"
             "           for name, path in RUNS.items()]\n"
             "queries = ragreport.load_queries(QUERIES) if QUERIES else {}\n"
             "docs = ragreport.load_docs(DOCS) if DOCS else {}\n"
             "[r.run_name for r in results]"),
        md("## Summary\n\nMean of each measure over the evaluated queries, one column per run."),
        code("summary_table(results)"),
        code("targets_table(results)  # the seed tutorial's typical targets"),
        md("## Metric vs K\n\nMean over queries for K = 1..K_max; targets are marked with ×."),
        code("curves_figure(results, families=(\"P\", \"R\", \"nDCG\", \"RR\"))"),
        md(f"## Worst queries\n\nThe queries with the lowest {measure}, with why they fail."),
    ]
    cells.append(code(f"MEASURE = {measure!r}\n"
                      "for r in results:\n"
                      "    display(worst_queries_table(r, MEASURE, n=15, queries=queries))"))
    cells.append(md("## Explore interactively\n\nIn a live notebook, "
                    "`ragreport.Explorer(results, queries=queries, docs=docs)` shows every "
                    "query's ranking, the cut at K and the A/B comparison (ipywidgets)."))
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


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
    timeout: int = 120,
    kernel_name: str = "python3",
) -> list[Path]:
    """Generate, execute and write the analysis notebook (and its offline HTML export).

    The notebook is executed in its own folder, so relative paths work for whoever reruns
    it. Both files are written atomically; returns the paths written.
    """
    from .fileio import write_atomic

    out = Path(out_path)
    if out.suffix != ".ipynb":
        raise RagReportError(f"the notebook path must end in .ipynb, got {out}")
    nb_dir = (out.parent if str(out.parent) else Path(".")).resolve()
    if not nb_dir.is_dir():
        raise RagReportError(f"cannot write {out}: folder {nb_dir} does not exist")
    inputs = [p for p in (qrels, *runs, queries, docs) if p is not None]
    nb = build_analysis_notebook(qrels, runs, nb_dir, queries=queries, docs=docs, names=names,
                                 example=example)
    nbformat: Any = importlib.import_module("nbformat")
    nbclient: Any = importlib.import_module("nbclient")
    cell_error: Any = importlib.import_module("nbclient.exceptions").CellExecutionError
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name=kernel_name,
                            resources={"metadata": {"path": str(nb_dir)}})
    try:
        client.execute()
    except cell_error as exc:
        raise RagReportError(f"the analysis notebook failed to run: {exc}") from None
    written = [write_atomic(out, nbformat.writes(nb) + "\n", inputs)]
    if html_path is not None:
        written.append(write_atomic(html_path, export_html(nb), [*inputs, out]))
    return written
