"""Reports: the data (:mod:`.model`), built by :mod:`.build` (with :mod:`.documents`,
:mod:`.slicing` and :mod:`.baseline`), then rendered (one module per format).

Importing this package installs the renderers and the writer (:mod:`.output`) behind
:class:`Report`'s ``to_html``, ``to_markdown``, ``to_json`` and ``save``: the data itself
never imports them.

>>> from ragreport import evaluate
>>> from ragreport.report import build_report
>>> r = evaluate({"q": {"a": 1}}, {"q": ["b", "a"]}, ["P@1", "RR"])
>>> rep = build_report([r], generated_at="2026-01-01T00:00:00Z")
>>> rep.summary[1].cells[0].shown
'0.5000'
"""

from __future__ import annotations

from . import output
from .build import build_report, generated_at_from_env
from .cells import InputFile
from .model import Report, install_output

install_output(output)

__all__ = ["InputFile", "Report", "build_report", "generated_at_from_env"]
