"""Is a comparison with a stored baseline still valid? The drift checks, as pure decisions.

``ragreport check --baseline-report main.json`` compares today's runs with the per-query values
of a report written earlier (main's last run, kept as a CI artifact) instead of evaluating the
baseline run again. That comparison means something only when both were measured the same way;
each function here decides one way it can have stopped meaning anything, from plain values
(fingerprints, means, query ids), and returns a :class:`DriftCheck` saying what it measured and
against which threshold:

- :func:`qrels_check`: the judgments changed (their sha256 differs, or is unknown); the
  fingerprint is that of the judgments themselves (:func:`judgments_sha256`: the same
  judgments read from a TREC file, a Parquet file or a DataFrame, in any row order, give the
  same one) when both reports have it, else that of the qrels file's bytes;
- :func:`judged_check`: the judged share of the top K collapsed (a re-chunked corpus or new
  document ids: the run retrieves documents the qrels do not know). The rule: Judged@K of the
  run (mean over its queries) below ``min_ratio`` times the baseline's (default 0.5, half);
- :func:`query_check`: the query sets differ: the share of queries added or removed,
  ``|A △ B| / |A ∪ B|``, above ``max_share`` (default 0.05);
- :func:`conventions_check`: the evaluation conventions differ (a ``--compat`` preset, ``-M``,
  ``--ties``, the relevance level...): the per-query values are not the same measure.

A boundary value passes: a judged ratio equal to ``min_ratio``, a query drift equal to
``max_share``. Nothing here reads a file or raises on drift; the caller (``check``) refuses or
warns (:func:`refusal`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import RagReportError
from ..present import plural, shown

if TYPE_CHECKING:
    from ..data import Qrels, Run

__all__ = [
    "DEFAULT_MAX_QUERY_DRIFT",
    "DEFAULT_MIN_JUDGED_RATIO",
    "DriftCheck",
    "content_sha256",
    "conventions_check",
    "drift_text",
    "judged_check",
    "judged_collapsed",
    "judgments_sha256",
    "qrels_check",
    "query_check",
    "query_drift",
    "refusal",
]

#: Largest share of queries added or removed (of all queries of either side) that passes.
DEFAULT_MAX_QUERY_DRIFT = 0.05
#: Judged@K of a run below this share of the baseline's is a collapse.
DEFAULT_MIN_JUDGED_RATIO = 0.5

#: Convention lines that differ without changing a per-query value (the curves' width).
_IGNORED_CONVENTIONS = frozenset({"curves", "p-values"})  # not how values are computed


@dataclass(frozen=True)
class DriftCheck:
    """One drift check: what was compared, the measured value, the threshold, the verdict."""

    check: str
    """``"qrels"``, ``"judged"``, ``"queries"`` or ``"conventions"``."""
    run: str
    """The run checked (``""`` for a check of the whole comparison)."""
    drifted: bool
    measured: str
    """What was measured, as text (``"Judged@5 0.4000 vs 0.9000 (ratio 0.4444)"``)."""
    threshold: str
    """The rule it was held to (``"ratio >= 0.5"``)."""
    message: str
    """One sentence for a reader: what changed (or that nothing did)."""

    @property
    def status(self) -> str:
        """``"drift"`` or ``"ok"``."""
        return "drift" if self.drifted else "ok"


def _f(x: float) -> str:
    return shown(x)


def _check_share(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise RagReportError(f"{name} must be a number from 0 to 1, got {value!r}")


def judgments_sha256(qrels: Qrels) -> str:
    """The sha256 of the judgments themselves, not of the file that held them.

    The ``(query id, document id, grade)`` rows, sorted by query id then document id (UTF-8
    byte order), each id length-prefixed and each grade as a float64, are hashed: the same
    judgments from a TREC file, a BEIR TSV, a Parquet file or a DataFrame, in any row order,
    with any spacing or compression, give the same fingerprint; a changed grade, an added or
    removed judgment, a renamed id give another. Grades are hashed as read (``1.7`` is 1 in
    a TREC file unless fractional grades are kept), so they are the grades evaluated.

    >>> from ragreport.io import load_qrels
    >>> a = judgments_sha256(load_qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d9": 2}}))
    >>> b = judgments_sha256(load_qrels({"q2": {"d9": 2}, "q1": {"d2": 0, "d1": 1}}))
    >>> a == b, a == judgments_sha256(load_qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d9": 1}}))
    (True, False)
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    def plain(col: Any) -> Any:
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        return pc.cast(col, pa.large_string())

    qids, docs = plain(qrels.query_ids), plain(qrels.doc_ids)
    order = pc.sort_indices(pa.table({"q": qids, "d": docs}),
                            [("q", "ascending"), ("d", "ascending")])
    h = hashlib.sha256(b"ragreport.judgments/1\n")
    h.update(np.int64(len(order)).tobytes())
    for col in (qids, docs):
        taken = col.take(order)
        offsets = np.frombuffer(taken.buffers()[1], dtype=np.int64)[
            taken.offset:taken.offset + len(taken) + 1]
        data = taken.buffers()[2]
        start, end = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
        h.update(np.diff(offsets).astype("<i8").tobytes())
        h.update(memoryview(data)[start:end] if data is not None else b"")
    grades = np.asarray(qrels.grades, dtype=np.float64)[order.to_numpy()] + 0.0  # no -0.0
    h.update(grades.astype("<f8").tobytes())
    return h.hexdigest()


def _ids_update(h: Any, col: Any) -> None:
    """Each id of ``col`` (an Arrow string array) into ``h``, length-prefixed."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    col = pc.cast(col, pa.large_string())
    offsets = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset:col.offset + len(col)
                                                              + 1]
    data = col.buffers()[2]
    start, end = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
    h.update(np.diff(offsets).astype("<i8").tobytes())
    h.update(memoryview(data)[start:end] if data is not None else b"")


def content_sha256(obj: Qrels | Run | Mapping[str, str]) -> str:
    """The sha256 of what was read, for an input that is no file (an ``irds:`` id): the
    judgments (:func:`judgments_sha256`), a run's ``(query id, document id, score)`` rows in
    their order, or the ``(id, text)`` pairs of queries or documents sorted by id.

    >>> from ragreport.io import load_run
    >>> a = content_sha256(load_run({"q1": {"d1": 2.0, "d2": 1.0}}))
    >>> a == content_sha256(load_run({"q1": {"d1": 2.0, "d2": 1.0}}))
    True
    >>> a == content_sha256(load_run({"q1": {"d1": 2.0, "d2": 1.5}}))
    False
    >>> content_sha256({"q1": "a", "q2": "b"}) == content_sha256({"q2": "b", "q1": "a"})
    True
    """
    import numpy as np
    import pyarrow as pa

    from ..data import Qrels, Run

    if isinstance(obj, Qrels):
        return judgments_sha256(obj)
    if isinstance(obj, Run):
        h = hashlib.sha256(b"ragreport.run/1\n")
        h.update(np.int64(len(obj.scores)).tobytes())
        _ids_update(h, obj.query_ids)
        _ids_update(h, obj.doc_ids)
        h.update((np.asarray(obj.scores, dtype=np.float64) + 0.0).astype("<f8").tobytes())
        return h.hexdigest()
    items = sorted(obj.items(), key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
    h = hashlib.sha256(b"ragreport.texts/1\n")
    h.update(np.int64(len(items)).tobytes())
    _ids_update(h, pa.array([k for k, _ in items], pa.large_string()))
    _ids_update(h, pa.array([v for _, v in items], pa.large_string()))
    return h.hexdigest()


def qrels_check(baseline_sha256: str | None, current_sha256: str | None, *,
                judgments: bool = False) -> DriftCheck:
    """Did the judgments change? Compares two fingerprints of the qrels: of the judgments
    (:func:`judgments_sha256`, ``judgments=True``) or of the qrels files' bytes (as the
    reports record them in ``inputs``); an unknown fingerprint (qrels given as Python
    objects) is drift too: nothing says they are the same.

    Parameters
    ----------
    baseline_sha256, current_sha256 : str or None
        Hex sha256 of the baseline's and of today's qrels; None when unknown.
    judgments : bool
        Whether both are :func:`judgments_sha256` values (shown as such).

    Returns
    -------
    DriftCheck
        Drifted unless both are known and equal.

    >>> qrels_check("ab" * 32, "ab" * 32).drifted, qrels_check("ab" * 32, "cd" * 32).drifted
    (False, True)
    >>> qrels_check(None, "ab" * 32).measured
    'sha256 unknown vs abababababab'
    """
    def short(x: str | None) -> str:
        return x[:12] if x else "unknown"

    what = "judgments sha256" if judgments else "sha256"
    measured = f"{what} {short(baseline_sha256)} vs {short(current_sha256)}"
    rule = f"same {what}"
    if baseline_sha256 is None or current_sha256 is None:
        which = "baseline's" if baseline_sha256 is None else "current"
        return DriftCheck("qrels", "", True, measured, rule,
                          f"the {which} qrels fingerprint is unknown: the judgments may "
                          "differ")
    if baseline_sha256 != current_sha256:
        return DriftCheck("qrels", "", True, measured, rule,
                          "the qrels differ from the baseline's")
    return DriftCheck("qrels", "", False, measured, rule, "same qrels")


def judged_collapsed(baseline: float, current: float, min_ratio: float) -> bool:
    """The rule of :func:`judged_check`: ``current < min_ratio * baseline``. A baseline
    that judged nothing (0) cannot collapse.

    >>> judged_collapsed(0.8, 0.4, 0.5), judged_collapsed(0.8, 0.39, 0.5)
    (False, True)
    """
    _check_share("min_ratio", min_ratio)
    if baseline <= 0:
        return False
    return current < min_ratio * baseline


def judged_check(run: str, baseline: float | None, current: float, k: int,
                 min_ratio: float = DEFAULT_MIN_JUDGED_RATIO) -> DriftCheck:
    """Did the judged share of the top K collapse? Judged@K is the share of a query's top K
    documents that have a judgment (a qrels line), averaged over the run's queries.

    Parameters
    ----------
    run : str
        The run checked.
    baseline : float or None
        The baseline's mean Judged@K (None: the stored report does not have it, which is
        drift: it cannot be checked).
    current : float
        The run's mean Judged@K.
    k : int
        The cutoff.
    min_ratio : float
        Drift when ``current < min_ratio * baseline``.

    Returns
    -------
    DriftCheck
        The verdict, with both values and their ratio.

    >>> c = judged_check("dense", 0.9, 0.4, 5)
    >>> c.drifted, c.measured, c.threshold
    (True, 'Judged@5 0.4000 vs baseline 0.9000 (ratio 0.4444)', 'ratio >= 0.5')
    """
    threshold = f"ratio >= {min_ratio:g}"
    if baseline is None:
        return DriftCheck("judged", run, True, f"Judged@{k} {_f(current)} vs baseline unknown",
                          threshold, f"the baseline report has no Judged@{k}: the judged share "
                          "of the top K cannot be compared")
    ratio = current / baseline if baseline > 0 else float("inf")
    shown_ratio = _f(ratio) if baseline > 0 else "n/a"
    measured = f"Judged@{k} {_f(current)} vs baseline {_f(baseline)} (ratio {shown_ratio})"
    if judged_collapsed(baseline, current, min_ratio):
        return DriftCheck("judged", run, True, measured, threshold,
                          f"the judged share of the top {k} collapsed: the run retrieves "
                          "documents the qrels do not know (re-chunked corpus or new document "
                          "ids?)")
    return DriftCheck("judged", run, False, measured, threshold,
                      f"the judged share of the top {k} held")


def query_drift(baseline: Collection[str], current: Collection[str]) -> tuple[int, int, float]:
    """``(added, removed, share)``: queries only in ``current``, only in ``baseline``, and
    their share of all queries of either, ``|A △ B| / |A ∪ B|`` (0 when both are empty).

    >>> query_drift(["a", "b", "c", "d"], ["b", "c", "d", "e"])
    (1, 1, 0.4)
    """
    a, b = set(baseline), set(current)
    union = len(a | b)
    added, removed = len(b - a), len(a - b)
    return added, removed, (added + removed) / union if union else 0.0


def query_check(run: str, baseline: Iterable[str], current: Iterable[str],
                max_share: float = DEFAULT_MAX_QUERY_DRIFT) -> DriftCheck:
    """Do the query sets differ beyond ``max_share`` (:func:`query_drift`)?

    Parameters
    ----------
    run : str
        The run checked.
    baseline, current : iterable of str
        The query ids the baseline and the run were evaluated on.
    max_share : float
        Drift when the share of queries added or removed is above it.

    Returns
    -------
    DriftCheck
        The verdict, with the counts and the share.

    >>> query_check("dense", ["a", "b"], ["a", "b"]).drifted
    False
    >>> query_check("dense", ["a", "b"], ["a", "c"], 0.5).measured
    '1 added, 1 removed of 3 queries (share 0.6667)'
    """
    _check_share("max_share", max_share)
    a, b = list(dict.fromkeys(baseline)), list(dict.fromkeys(current))
    added, removed, share = query_drift(a, b)
    union = len(set(a) | set(b))
    measured = (f"{added} added, {removed} removed of {plural(union, 'query', 'queries')} "
                f"(share {_f(share)})")
    threshold = f"share <= {max_share:g}"
    if share > max_share:
        return DriftCheck("queries", run, True, measured, threshold,
                          "the query sets differ beyond the threshold")
    return DriftCheck("queries", run, False, measured, threshold,
                      "the same queries" if share == 0 else "the query sets are close enough")


def conventions_check(baseline: Mapping[str, str], current: Mapping[str, str]) -> DriftCheck:
    """Were both evaluated under the same conventions (the report's ``conventions``
    statements: tie rule, relevance level, depth, preset...)? The curves' width is left out:
    it does not change a per-query value.

    >>> conventions_check({"ties": "a"}, {"ties": "a"}).drifted
    False
    >>> conventions_check({"ties": "a", "x": "1"}, {"ties": "b"}).measured
    'differ: ties, x'
    """
    keys = [k for k in dict.fromkeys([*baseline, *current]) if k not in _IGNORED_CONVENTIONS
            and baseline.get(k) != current.get(k)]
    if keys:
        return DriftCheck("conventions", "", True, "differ: " + ", ".join(keys),
                          "the same conventions",
                          "the evaluation conventions differ from the baseline's")
    return DriftCheck("conventions", "", False, "the same", "the same conventions",
                      "the same conventions")


def drift_text(checks: Iterable[DriftCheck]) -> str:
    """The checks that drifted, in one line (``""`` when none did).

    >>> print(drift_text([query_check("dense", ["a", "b"], ["a", "c"])])[:59])
    queries (dense): the query sets differ beyond the threshold
    """
    parts = [f"{c.check}{f' ({c.run})' if c.run else ''}: {c.message} ({c.measured}"
             + (f"; needs {c.threshold}" if c.check in ("judged", "queries") else "") + ")"
             for c in checks if c.drifted]
    return "; ".join(parts)


def refusal(checks: Iterable[DriftCheck], source: str) -> str:
    """The one-line refusal for the checks that drifted (``""`` when none did).

    >>> text = refusal([qrels_check("ab" * 32, "cd" * 32)], "main.json")
    >>> print(text[:65])
    the baseline report main.json no longer matches: qrels: the qrels
    >>> print(text[-75:])
    (sha256 abababababab vs cdcdcdcdcdcd); pass --allow-drift to compare anyway
    """
    text = drift_text(checks)
    if not text:
        return ""
    return (f"the baseline report {source} no longer matches: {text}; pass --allow-drift to "
            "compare anyway")
