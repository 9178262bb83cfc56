"""Interactive per-query explorer for notebooks (an anywidget: ES module + CSS in ``static/``).

``Explorer`` (the widget, :mod:`.widget`) is imported on first use, so ``import
ragreport.explorer`` stays light (no anywidget, no ipywidgets); :class:`~.state.ExplorerState`
holds the plain, testable state and analysis and produces the small dicts the widget syncs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .state import ExplorerState
    from .widget import Explorer

__all__ = ["Explorer", "ExplorerState"]


def __getattr__(name: str) -> Any:
    if name == "Explorer":
        from .widget import Explorer

        return Explorer
    if name == "ExplorerState":
        from .state import ExplorerState

        return ExplorerState
    raise AttributeError(f"module 'ragreport.explorer' has no attribute {name!r}")
