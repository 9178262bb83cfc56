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

from .display import (
    Figure,
    Table,
    curves_figure,
    summary_table,
    targets_table,
    worst_queries_table,
)
from .generate import build_analysis_notebook, export_html, write_analysis_notebook

__all__ = [
    "Figure",
    "Table",
    "build_analysis_notebook",
    "curves_figure",
    "export_html",
    "summary_table",
    "targets_table",
    "worst_queries_table",
    "write_analysis_notebook",
]
