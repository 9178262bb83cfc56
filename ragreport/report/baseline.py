"""A stored JSON report as the baseline (``ragreport check --baseline-report main.json``).

The JSON report written with ``--per-query`` holds every run's per-query values, its qrels
fingerprints (``inputs``: the file's sha256 and, from the command line, the judgments'
``judgments_sha256``), its conventions and its mean Judged@K (``judged_at_k``).
:func:`load_baseline_report` reads one run of it back as a :class:`StoredBaseline`;
:func:`drift_checks` decides whether today's runs can still be compared with it
(:mod:`ragreport.analysis.drift`). Given as ``build_report(..., baseline=stored)``, it is the
report's baseline: the summary's deltas and paired tests, the wins and losses and the
``--max-drop`` checks are computed from the stored per-query values by the same functions as
with the baseline's run file, so they are the same numbers.

What the stored run cannot give (no rankings): worst queries, tie exposure and target checks
(the stored baseline was gated when it was written); its means, intervals, curves, the
precision-recall curve and dataset health come from the stored report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..analysis.drift import (
    DEFAULT_MAX_QUERY_DRIFT,
    DEFAULT_MIN_JUDGED_RATIO,
    DriftCheck,
    conventions_check,
    judged_check,
    qrels_check,
    query_check,
)
from ..analysis.failures import judged_at
from ..compat import PRESETS
from ..core.ranking import position
from ..errors import InputError, MeasureError, RagReportError
from ..measures import Measure, parse_measure
from .cells import BaselineDrift, InputFile, RunHealth

if TYPE_CHECKING:
    from ..core.result import EvaluationResult

__all__ = ["StoredBaseline", "baseline_for", "drift_checks", "load_baseline_report",
           "stored_health"]

FloatArray = npt.NDArray[np.float64]

#: The schemas whose JSON this module reads.
SCHEMAS = ("ragreport.report/1",)


@dataclass(frozen=True)
class StoredBaseline:
    """One run of a stored JSON report, as a baseline."""

    source: str
    """The file it was read from, as shown."""
    name: str
    """The run's name in the stored report."""
    generated_at: str
    query_ids: list[str]
    per_query: dict[str, list[float]]
    """Measure (as the stored report spells it) -> per-query values, in :attr:`query_ids`
    order."""
    means: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    totals: dict[str, float]
    curves: dict[str, list[float]]
    bands: dict[str, tuple[list[float], list[float]]]
    pr_curve: list[float] | None
    counts: dict[str, Any]
    conventions: dict[str, str]
    qrels_sha256: str | None
    """The sha256 of the qrels file's bytes."""
    judged_k: int | None
    judged: float | None
    input_file: InputFile | None = None
    shown_name: str = ""
    """The name the comparison shows (the stored name, unless a run of today has it)."""
    extra: dict[str, Any] = field(default_factory=dict)
    qrels_judgments_sha256: str | None = None
    """The fingerprint of the judgments (:func:`~ragreport.analysis.drift.judgments_sha256`);
    None in a report written without it (from Python, or by an older version)."""

    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """The query index and the parsed per-query values, built when first asked for."""

    def label(self) -> str:
        return self.shown_name or self.name

    def drift(self, checks: Sequence[DriftCheck], allowed: bool) -> BaselineDrift:
        """The report's record of this baseline and its drift checks."""
        return BaselineDrift(self.source, self.label(), self.generated_at, list(checks),
                             allowed)

    # what a comparison reads of a run (ragreport.analysis.compare.PerQueryValues)
    @property
    def run_name(self) -> str:
        """The name the report shows (:meth:`label`)."""
        return self.label()

    def query_index(self, qid: str) -> int:
        """Position of a query id in :attr:`query_ids`."""
        i = position(self.query_ids, self.memo, qid)
        if i is None:
            raise RagReportError(f"query {qid!r} is not in the baseline report {self.source}")
        return i

    def values(self, measure: str | Measure) -> FloatArray:
        """(queries,) stored per-query values of one measure, in :attr:`query_ids` order; a
        RagReportError naming the file when the stored report lacks it."""
        parsed: dict[Measure, FloatArray] | None = self.memo.get("values")
        if parsed is None:
            parsed = {}
            for name, v in self.per_query.items():
                try:
                    parsed[parse_measure(name)] = np.asarray(v, dtype=np.float64)
                except MeasureError:
                    continue
            self.memo["values"] = parsed
        m = parse_measure(measure)
        if m not in parsed:
            raise RagReportError(f"the baseline report {self.source} has no per-query "
                                 f"values of {m}; write it with the same measures and targets")
        return parsed[m]


def _bad(source: str, message: str) -> InputError:
    return InputError(message, source)


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is not a JSON number")


def load_baseline_report(path: str | Path, run: str | None = None) -> StoredBaseline:
    """Read one run of a JSON report written with ``--per-query`` as a baseline.

    Parameters
    ----------
    path : str or Path
        The JSON report (schema ``ragreport.report/1``).
    run : str, optional
        Which of its runs; default its baseline, or its first run with per-query values
        when the baseline has none (a report gated against a stored report lists that
        stored run without them).

    Returns
    -------
    StoredBaseline
        The run's per-query values, means, intervals, curves, counts, conventions, the
        qrels fingerprint and Judged@K.

    Raises
    ------
    InputError
        Not such a report (the message names the file, the line of a JSON syntax error, or
        the key that is wrong), no per-query values, or no such run.
    """
    from ..fileio import shown_path

    p = Path(path)
    source = shown_path(p)
    doc = _read_report(p, source)
    base, rows = _chosen_run(doc, run, source)
    query_ids, values = _per_query_values(rows, base, source)
    stored = _RunOf(doc, base, source)
    means = {m: float(v) for m, v in stored.run_map("means").items() if _finite(v)}
    conventions = {str(k): str(v) for k, v in stored.section("conventions").items()}
    _check_means(source, base, means, values, conventions)
    intervals = {m: (float(v[0]), float(v[1])) for m, v in stored.run_map("intervals").items()
                 if isinstance(v, list) and len(v) == 2 and all(_finite(x) for x in v)}
    totals = {m: float(v) for m, v in stored.run_map("totals").items() if _finite(v)}
    curves, bands, pr_series = stored.curves(), stored.bands(), stored.pr_curve()
    counts = stored.run_map("counts")
    qrels, content = stored.qrels_fingerprints()
    judged_k, judged_v = stored.judged()
    return StoredBaseline(
        source=source, name=base, generated_at=str(doc.get("generated_at", "")),
        query_ids=query_ids, per_query=values, means=means, intervals=intervals, totals=totals,
        curves=curves, bands=bands, pr_curve=pr_series, counts=counts,
        conventions=conventions,
        # "" : a report from per-query results that state only the judgments' fingerprint
        qrels_sha256=qrels[0] if len(qrels) == 1 and isinstance(qrels[0], str) and qrels[0]
        else None,
        judged_k=judged_k if isinstance(judged_k, int) and not isinstance(judged_k, bool)
        and judged_k > 0 else None,
        judged=float(judged_v) if judged_v is not None and _finite(judged_v) else None,
        input_file=InputFile.from_path("baseline_report", p),
        qrels_judgments_sha256=content[0] if len(content) == 1 and isinstance(content[0], str)
        else None,
    )


def _read_report(p: Path, source: str) -> dict[str, Any]:
    """The JSON report at ``p`` as a dict, with a ragreport report's schema."""
    from ..io.common import json_failure

    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the baseline report: {exc.strerror}", source) from None
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        if data.startswith(b"PAR1"):
            raise _bad(source, "a Parquet file, not a JSON report (per-query results are "
                               "read with --per-query-in)") from None
        raise _bad(source, f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not a JSON report: {exc.msg} (column {exc.colno})", source,
                         exc.lineno) from None
    except (ValueError, RecursionError) as exc:
        raise _bad(source, f"not a JSON report: {json_failure(exc)}") from None
    if not isinstance(doc, dict):
        raise _bad(source, f"not a ragreport JSON report: a {type(doc).__name__}, not an object")
    schema = doc.get("schema")
    if schema not in SCHEMAS:
        raise _bad(source, f"not a ragreport JSON report (schema {schema!r}; expected "
                           f"{' or '.join(map(repr, SCHEMAS))})")
    return doc


def _chosen_run(doc: dict[str, Any], run: str | None, source: str
                ) -> tuple[str, dict[str, Any]]:
    """The run to read (``run``, else the report's baseline, else its first run with
    per-query values) and its per-query rows."""
    runs = _get(doc, "runs", list, source)
    per_query = doc.get("per_query")
    # the runs that have per-query values: a report gated against a stored report in turn
    # also lists that stored run ("main (stored)"), its baseline, without them
    with_values = [r for r in runs if isinstance(per_query, dict) and r in per_query]
    base = run if run is not None else doc.get("baseline")
    if run is None and base not in with_values and with_values:
        base = with_values[0]
    if not isinstance(base, str) or base not in runs:
        raise _bad(source, f"no run {base!r} in the baseline report (runs: "
                           f"{', '.join(map(repr, runs))})")
    if not isinstance(per_query, dict) or not with_values:
        raise _bad(source, "the baseline report has no per-query values; write it with "
                           "--per-query (ragreport check ... --json main.json --per-query)")
    if base not in per_query:
        raise _bad(source, f"run {base!r} has no per-query values in the baseline report "
                           f"(runs with them: {', '.join(map(repr, with_values))}); pick one "
                           "with --baseline")
    rows: dict[str, Any] = _get(per_query, base, dict, source, "per_query")
    return base, rows


def _per_query_values(rows: dict[str, Any], base: str, source: str
                      ) -> tuple[list[str], dict[str, list[float]]]:
    """The query ids and, per measure, every query's value (each query has every measure,
    each value a finite number)."""
    query_ids = [str(q) for q in rows]
    values: dict[str, list[float]] = {}
    for q, vals in rows.items():
        if not isinstance(vals, dict):
            raise _bad(source, f"per_query.{base}.{q} is not an object")
        for m in vals:
            values.setdefault(m, [])
    for m in values:
        col = []
        for q, vals in rows.items():
            v = vals.get(m)
            if m not in vals:
                raise _bad(source, f"per_query.{base}.{q} has no {m} (another query has it)")
            if not _finite(v):
                raise _bad(source, f"per_query.{base}.{q}.{m} must be a finite number, got "
                                   f"{v!r}")
            col.append(float(v))
        values[m] = col
    return query_ids, values


def _numbers(v: object) -> list[float] | None:
    """A list of finite numbers, else None."""
    if isinstance(v, list) and all(_finite(x) for x in v):
        return [float(x) for x in v]
    return None


class _RunOf:
    """One run's parts of a stored report (what is malformed there reads as absent, except
    a section that is not an object)."""

    def __init__(self, doc: dict[str, Any], base: str, source: str) -> None:
        self.doc, self.base, self.source = doc, base, source

    def run_map(self, key: str) -> dict[str, Any]:
        """The run's entry of a per-run object (means, intervals, totals, counts)."""
        got = self.doc.get(key) or {}
        if not isinstance(got, dict):
            raise _bad(self.source, f"{key} is not an object")
        val = got.get(self.base, {})
        return val if isinstance(val, dict) else {}

    def section(self, key: str) -> dict[str, Any]:
        """An optional object of the report."""
        got = self.doc.get(key)
        if got is None:
            return {}
        if not isinstance(got, dict):
            raise _bad(self.source, f"{key} must be a JSON object, got {type(got).__name__}")
        return got

    def curves(self) -> dict[str, list[float]]:
        curves = {}
        for fam, series in self.section("curves").items():
            s = _numbers(series.get(self.base)) if isinstance(series, dict) else None
            if s is not None:
                curves[fam] = s
        return curves

    def bands(self) -> dict[str, tuple[list[float], list[float]]]:
        bands = {}
        for fam, series in self.section("curve_bands").items():
            b = series.get(self.base) if isinstance(series, dict) else None
            lower, upper = (_numbers(b.get("lower")), _numbers(b.get("upper"))) \
                if isinstance(b, dict) else (None, None)
            if lower is not None and upper is not None:
                bands[fam] = (lower, upper)
        return bands

    def pr_curve(self) -> list[float] | None:
        pr = self.section("pr_curve")
        return _numbers(pr["precision"].get(self.base)) \
            if isinstance(pr.get("precision"), dict) else None

    def qrels_fingerprints(self) -> tuple[list[Any], list[Any]]:
        """The qrels inputs' file and judgments fingerprints."""
        inputs = self.doc.get("inputs") or []
        if not isinstance(inputs, list):
            raise _bad(self.source, f"inputs must be a JSON array, got {type(inputs).__name__}")
        qrels_inputs = [f for f in inputs if isinstance(f, dict) and f.get("role") == "qrels"]
        return ([f.get("sha256") for f in qrels_inputs],
                [f.get("judgments_sha256") for f in qrels_inputs])

    def judged(self) -> tuple[Any, Any]:
        """Judged@K's K and the run's mean, as stored (unchecked)."""
        judged = self.doc.get("judged_at_k")
        judged_k = judged.get("k") if isinstance(judged, dict) else None
        judged_v = judged.get("means", {}).get(self.base) if isinstance(judged, dict) \
            and isinstance(judged.get("means"), dict) else None
        return judged_k, judged_v


def _check_means(source: str, run: str, means: Mapping[str, float],
                 values: Mapping[str, list[float]], conventions: Mapping[str, str]) -> None:
    """Each stored mean is the mean of the run's stored per-query values (to the decimals a
    ``compat`` preset rounds it to): the summary's deltas (from the means) and the drop checks
    and tests (from the values) then compare the same numbers. An InputError names the first
    mean that is not (a report edited by hand). The preset is the one the report's
    conventions name (``"beir: ..."``)."""
    preset = PRESETS.get(conventions.get("compat", "").split(":", 1)[0])  # "beir: BEIR ..."
    for m, v in values.items():
        got = means.get(m)
        if got is None or not v:
            continue
        slack = 0.0
        if preset is not None and preset.round_digits is not None:
            try:
                if preset.rounds(parse_measure(m)):
                    slack = 0.5 * 10.0 ** -preset.round_digits
            except MeasureError:
                pass  # a name this version does not read: compared unrounded
        actual = float(np.mean(np.asarray(v, dtype=np.float64)))
        if abs(got - actual) > slack + 1e-9 * max(1.0, abs(actual)):
            raise _bad(source, f"means.{run}.{m} is {got!r} but its per-query values average "
                               f"{actual!r}: the report was changed after it was written; "
                               "write it again")


def _finite(v: object) -> bool:
    """A JSON number that is a finite float (an integer too large for one is not)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # a 400-digit integer
        return False


def _get(doc: Mapping[str, Any], key: str, kind: type, source: str, where: str = "") -> Any:
    v = doc.get(key)
    if not isinstance(v, kind):
        name = f"{where}.{key}" if where else key
        raise _bad(source, f"{name} must be a JSON {'array' if kind is list else 'object'}")
    return v


def drift_checks(results: Sequence[EvaluationResult], stored: StoredBaseline,
                 qrels_sha256: str | None, k: int, *,
                 max_query_drift: float = DEFAULT_MAX_QUERY_DRIFT,
                 min_judged_ratio: float = DEFAULT_MIN_JUDGED_RATIO,
                 conventions: Mapping[str, str] | None = None,
                 judgments_sha256: str | None = None) -> list[DriftCheck]:
    """Every drift check of today's runs against the stored baseline
    (:mod:`ragreport.analysis.drift`): the qrels, the conventions, and per run the query
    sets and Judged@K (at the stored report's K when it has one, else ``k``).

    The qrels are compared by their judgments when both sides have that fingerprint
    (``judgments_sha256``, :func:`~ragreport.analysis.drift.judgments_sha256` of today's
    qrels, and the stored report's): the same judgments in another file format or row order
    are not drift. Otherwise by the sha256 of the files' bytes (``qrels_sha256``)."""
    if judgments_sha256 is not None and stored.qrels_judgments_sha256 is not None:
        checks = [qrels_check(stored.qrels_judgments_sha256, judgments_sha256,
                              judgments=True)]
    else:
        checks = [qrels_check(stored.qrels_sha256, qrels_sha256)]
    if conventions is None and results:
        conventions = results[0].conventions.describe()
    checks.append(conventions_check(stored.conventions, conventions or {}))
    kj = stored.judged_k or k
    for r in results:
        checks.append(query_check(r.run_name, stored.query_ids, r.query_ids, max_query_drift))
        j = judged_at(r, kj)
        mean = float(j.mean()) if len(j) else 0.0
        checks.append(judged_check(r.run_name, stored.judged, mean, kj, min_judged_ratio))
    return checks


def baseline_for(stored: StoredBaseline, names: Sequence[str]) -> StoredBaseline:
    """``stored`` as the baseline of today's runs ``names``: shown under its own name, unless
    a run of today has it (``"bm25 (stored)"``, then ``"bm25 (stored 2)"``...: never a name of
    today's runs).

    >>> s = StoredBaseline("main.json", "bm25", "", [], {}, {}, {}, {}, {}, {}, None, {}, {},
    ...                    None, None, None)
    >>> baseline_for(s, ["dense"]).run_name, baseline_for(s, ["bm25", "bm25 (stored)"]).run_name
    ('bm25', 'bm25 (stored 2)')
    """
    label, n = stored.name, 1
    while label in names:
        label = f"{stored.name} (stored)" if n == 1 else f"{stored.name} (stored {n})"
        n += 1
    return replace(stored, shown_name=label)


def stored_health(stored: StoredBaseline) -> RunHealth | None:
    """The stored run's row of dataset health, when the stored report has its counts."""
    counts = stored.counts
    keys = ("evaluated", "run_only", "qrels_only", "no_relevant", "empty_retrievals",
            "duplicates_dropped", "skipped_no_relevant")
    if not all(isinstance(counts.get(k), int) for k in keys):
        return None
    ident = counts.get("identical_ids_dropped")
    n = [int(counts[k]) for k in keys]
    return RunHealth(stored.label(), n[0], n[1], n[2], n[3], n[4], n[5], n[6],
                     [str(x) for x in counts.get("run_only_examples") or []],
                     [str(x) for x in counts.get("qrels_only_examples") or []],
                     ident if isinstance(ident, int) else None)
