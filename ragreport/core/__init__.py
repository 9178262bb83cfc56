"""The evaluation core: alignment of a run with the qrels (:mod:`.align`, :mod:`.ranking`), the
measure registry that computes (:mod:`.kernel`, with :mod:`.context`, :mod:`.expected` and
:mod:`.tiegroups`), :func:`~ragreport.core.engine.evaluate` and its result
(:mod:`.result`), doc maps (:mod:`.docmap`), tie exposure (:mod:`.ties`), streaming
evaluation (:mod:`.stream`) and per-query results as Parquet (:mod:`.perquery`).

Users import the package facade (``ragreport.evaluate``, ``ragreport.EvaluationResult`` ...),
not these modules.
"""
