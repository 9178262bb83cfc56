"""Interactive per-query explorer for notebooks (ipywidgets).

``Explorer`` (the widget) is imported on first use, so ``import ragreport.explorer`` stays light;
:class:`~.state.ExplorerState` holds the plain, testable logic.
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
