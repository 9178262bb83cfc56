"""Evaluate Ray Datasets with ragreport's kernel (``pip install 'ragreport[ray]'``): the
public names of :mod:`ragreport.engines.ray` (importing this module imports no ray)."""

from __future__ import annotations

from .engines.ray import evaluate, results

__all__ = ["evaluate", "results"]
