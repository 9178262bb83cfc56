"""Rendering and writing a report: the one place that turns a :class:`~.model.Report` into files.

The report data (:mod:`.model`) never imports its renderers. Its convenience methods
(``Report.to_html``, ``to_markdown``, ``to_json``, ``save``) call the functions of this module,
which the ``ragreport.report`` package installs into the model when it is imported (always
before :mod:`.model` itself, as its parent package). The import contract in ``pyproject.toml``
keeps it that way: renderers sit above the model, never the reverse.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..fileio import write_outputs
from .html import render_html
from .jsonout import render_json
from .markdown import render_markdown
from .track_mlflow import log_to_mlflow
from .track_wandb import log_to_wandb

if TYPE_CHECKING:
    from ..parallel import Mapper
    from .model import Report

__all__ = ["log_to_mlflow", "log_to_wandb", "render_html", "render_json", "render_markdown",
           "save"]


def save(report: Report, *, html: str | os.PathLike[str] | None = None,
         markdown: str | os.PathLike[str] | None = None,
         json: str | os.PathLike[str] | None = None,
         template_dir: str | os.PathLike[str] | None = None,
         workers: Mapper | None = None) -> list[Path]:
    """Write the chosen outputs of ``report``, all of them or none (see :meth:`.Report.save`)."""
    inputs = [f.path for f in report.inputs if f.path]  # "": stated, not read
    # the cheap outputs are rendered first: their errors come before the plots are drawn
    json_text = render_json(report) if json is not None else ""
    markdown_text = render_markdown(report) if markdown is not None else ""
    html_text = (render_html(report, template_dir=template_dir, workers=workers)
                 if html is not None else "")
    rendered = [(path, text) for path, text in ((html, html_text),
                                                (markdown, markdown_text),
                                                (json, json_text)) if path is not None]
    return [Path(p) for p in write_outputs(rendered, inputs)]
