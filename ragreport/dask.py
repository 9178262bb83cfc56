"""Evaluate Dask DataFrames with ragreport's kernel (``pip install 'ragreport[dask]'``): the
public names of :mod:`ragreport.engines.dask` (importing this module imports no dask)."""

from __future__ import annotations

from .engines.dask import evaluate, results, write

__all__ = ["evaluate", "results", "write"]
