"""ragreport's kernel inside the engines people already run: :mod:`ragreport.spark`,
:mod:`ragreport.dask` and :mod:`ragreport.ray` (optional extras ``ragreport[spark]``,
``ragreport[dask]``, ``ragreport[ray]``).

Each partitions the qrels and the run by query (the tie rule needs every document of a query
together), evaluates each partition with :func:`ragreport.evaluate` and returns the engine's
frame in the per-query schema of :mod:`ragreport.core.perquery`; its metadata (conventions,
measures, the dataset counts of the whole input) is carried with it, so the Parquet files
written from it feed ``ragreport report``. Nothing here imports an engine until it is used.
"""
