"""Per-query results as a first-class, mergeable artefact: an Arrow table (Parquet shards).

:func:`to_table` turns an :class:`~ragreport.core.result.EvaluationResult` into an Arrow table with
one row per (run, query); :func:`from_tables` merges any set of such tables (shards evaluated
apart, e.g. by Spark, Dask or Ray partitions, or by ``ragreport evaluate --per-query-out``)
back into one :class:`EvaluationResult` per run whose values equal, bit for bit, those of one
evaluation of the whole input. :func:`write` and :func:`read` store and load them as Parquet
(files, a directory or a glob of shards).

Schema (version :data:`SCHEMA_VERSION`)
---------------------------------------
Columns, in this order:

- ``run`` (string) and ``query_id`` (string): one row per evaluated query of a run;
- ``retrieved`` (int64): documents ranked for the query (after ``max_depth``);
  ``relevant`` (int64): judged documents with a grade >= the relevance level; ``judged``
  (int64): judged documents of the query;
- ``relevant_ranks`` and ``judged_ranks`` (large_list<int64>): the 0-based ranks of the
  retrieved documents that are relevant, and that are judged (any grade), in the ranking's
  order (trec_eval's: score descending, then document id descending); what the failure
  kinds, the 11-point precision-recall curve and the unjudged counts of the report need,
  in memory proportional to the judged documents, not the run;
- one **list column per curve family**, named ``<family>@K`` (``nDCG@K``, ``P@K``,
  ``P(rel=2)@K``...): ``list<float64>`` of length ``k_max`` (the curves' width), element
  ``K - 1`` is the value at K. Every family ragreport computes curves for is stored
  (P, R, F1, HitRate, RR, nDCG, AP and those of the measures asked for), plus ``Judged@K``
  (the share of the top K that is judged, for the report's health and drift checks);
- one **float64 column per scalar measure**, named as the measure (``AP``, ``RR``,
  ``Rprec``, ``nDCG``, ``ERR@5``...): the measures without a cutoff, and the summary measures
  whose cutoff is beyond the curves' width (``P@1000`` when the curves stop at 20);
- ``latency_ms`` (float64, null when the run has no time for the query).

List columns (rather than one column per K) keep the schema the same for every ``k_max``
and the table narrow; every engine (Spark, Dask, Ray, DuckDB, pandas) reads them.

Schema metadata (``ragreport.*`` keys, each a JSON string): ``ragreport.schema``
(:data:`SCHEMA_NAME`), ``ragreport.version`` (:data:`SCHEMA_VERSION`), ``ragreport.k_max``
(the ``k_max`` asked for), ``ragreport.conventions`` (:class:`~ragreport.core.result.Conventions`
as a dict, ``curve_width`` null: it is per run), ``ragreport.measures`` (the summary
measures, in order), ``ragreport.columns`` (each measure column: its name, its kind --
``curve``, ``scalar`` or ``judged``, the Judged@K curve kept for the health checks -- and the
exact measure), ``ragreport.id_order`` (``"numeric"`` or ``"bytes"``: how the queries are
listed), ``ragreport.fingerprints`` (``{"qrels": sha256 or null, "runs": {run: sha256}}``,
and ``"qrels_judgments"``, the judgments' own fingerprint, when known)
and ``ragreport.runs`` (per run: its ``curve_width``, the dataset counts of
:class:`~ragreport.core.ranking.Counts`, the first 10 run-only and qrels-only query ids, and the
latency of timed queries that were not evaluated). Merging sums the counts (but shards of a
run that state the same qrels fingerprint were each evaluated against the whole qrels: its
queries count once, and the qrels-only ones are those no shard evaluated); shards must agree
on everything else (the fingerprints only when both state one); a run's curves stop at its
narrowest shard's width.

What a table cannot hold: the rankings themselves (documents, scores, grades). A result read
back has no rankings (:attr:`EvaluationResult.has_rankings` is False): the report built from it
omits the worst queries' ranked lists and the tie exposure (which need the scores), and says
so; every number it does show is the one the raw files give.

>>> from ragreport import evaluate
>>> r = evaluate({"q1": {"a": 2, "b": 1}, "q2": {"c": 1}},
...              {"q1": ["b", "x", "a"], "q2": ["y"]}, ["nDCG@3", "P@1"])
>>> t = to_table(r)
>>> t.num_rows, t.column("query_id").to_pylist(), t.column("P@K").type
(2, ['q1', 'q2'], ListType(list<item: double>))
>>> [back] = from_tables([t])
>>> back.values("nDCG@3").tolist() == r.values("nDCG@3").tolist(), back.counts == r.counts
(True, True)
"""

from __future__ import annotations

from .files import is_per_query, read, shard_files
from .meta import merge_meta, stated_qrels, table_meta
from .read import from_tables, unjudged_in_top
from .schema import SCHEMA_NAME, SCHEMA_VERSION
from .write import to_table, write

__all__ = ["SCHEMA_NAME", "SCHEMA_VERSION", "from_tables", "is_per_query", "merge_meta", "read",
           "shard_files", "stated_qrels", "table_meta", "to_table", "unjudged_in_top", "write"]
