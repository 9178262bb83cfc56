"""Evaluate Spark DataFrames with ragreport's kernel (``pip install 'ragreport[spark]'``): the
public names of :mod:`ragreport.engines.spark` (importing this module imports no spark)."""

from __future__ import annotations

from .engines.spark import evaluate, results

__all__ = ["evaluate", "results"]
