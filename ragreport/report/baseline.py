"""A stored JSON report as the baseline (``ragreport check --baseline-report main.json``).

The JSON report written with ``--per-query`` holds every run's per-query values, its qrels
fingerprints (``inputs``: the file's sha256 and, from the command line, the judgments'
``judgments_sha256``), its conventions and its mean Judged@K (``judged_at_k``).
:func:`load_baseline_report` reads one run of it back as a :class:`StoredBaseline`;
:func:`drift_checks` decides whether today's runs can still be compared with it
(:mod:`ragreport.analysis.drift`); :func:`with_stored_baseline` makes it the baseline of a
report built on today's runs: the summary's deltas and paired tests, the wins and losses and the
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
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..analysis.compare import baseline_tests, common_queries, outcomes
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
from ..errors import InputError, MeasureError, RagReportError
from ..measures import Measure, parse_measure
from ..present import direction_mark, shown, signed, total_text
from ..result import EvaluationResult
from .build import drop_checks
from .model import (
    BaselineDrift,
    Comparison,
    Distribution,
    InputFile,
    Report,
    RunHealth,
    SliceCell,
    SliceReport,
    SummaryCell,
    SummaryRow,
)

if TYPE_CHECKING:
    from ..ranking import Ranking
    from ..targets import Target

__all__ = ["StoredBaseline", "drift_checks", "load_baseline_report", "with_stored_baseline"]

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
    values: dict[str, list[float]]
    """Measure -> per-query values, in :attr:`query_ids` order."""
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

    def label(self) -> str:
        return self.shown_name or self.name


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
    from ..io.common import json_failure

    p = Path(path)
    source = shown_path(p)
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
    rows = _get(per_query, base, dict, source, "per_query")
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

    def run_map(key: str) -> dict[str, Any]:
        got = doc.get(key) or {}
        if not isinstance(got, dict):
            raise _bad(source, f"{key} is not an object")
        val = got.get(base, {})
        return val if isinstance(val, dict) else {}

    def section(key: str) -> dict[str, Any]:  # an optional object of the report
        got = doc.get(key)
        if got is None:
            return {}
        if not isinstance(got, dict):
            raise _bad(source, f"{key} must be a JSON object, got {type(got).__name__}")
        return got

    def numbers(v: object) -> list[float] | None:  # a list of finite numbers, else None
        if isinstance(v, list) and all(_finite(x) for x in v):
            return [float(x) for x in v]
        return None

    means = {m: float(v) for m, v in run_map("means").items() if _finite(v)}
    conventions = {str(k): str(v) for k, v in section("conventions").items()}
    _check_means(source, base, means, values, conventions)
    intervals = {m: (float(v[0]), float(v[1])) for m, v in run_map("intervals").items()
                 if isinstance(v, list) and len(v) == 2 and all(_finite(x) for x in v)}
    totals = {m: float(v) for m, v in run_map("totals").items() if _finite(v)}
    curves = {}
    for fam, series in section("curves").items():
        s = numbers(series.get(base)) if isinstance(series, dict) else None
        if s is not None:
            curves[fam] = s
    bands = {}
    for fam, series in section("curve_bands").items():
        b = series.get(base) if isinstance(series, dict) else None
        lower, upper = (numbers(b.get("lower")), numbers(b.get("upper"))) \
            if isinstance(b, dict) else (None, None)
        if lower is not None and upper is not None:
            bands[fam] = (lower, upper)
    pr = section("pr_curve")
    pr_series = numbers(pr["precision"].get(base)) if isinstance(pr.get("precision"), dict) \
        else None
    counts = run_map("counts")
    inputs = doc.get("inputs") or []
    if not isinstance(inputs, list):
        raise _bad(source, f"inputs must be a JSON array, got {type(inputs).__name__}")
    qrels_inputs = [f for f in inputs if isinstance(f, dict) and f.get("role") == "qrels"]
    qrels = [f.get("sha256") for f in qrels_inputs]
    content = [f.get("judgments_sha256") for f in qrels_inputs]
    judged = doc.get("judged_at_k")
    judged_k = judged.get("k") if isinstance(judged, dict) else None
    judged_v = judged.get("means", {}).get(base) if isinstance(judged, dict) \
        and isinstance(judged.get("means"), dict) else None
    return StoredBaseline(
        source=source, name=base, generated_at=str(doc.get("generated_at", "")),
        query_ids=query_ids, values=values, means=means, intervals=intervals, totals=totals,
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


class _Index:
    """What :func:`ragreport.analysis.compare.common_queries` needs of a ranking."""

    def __init__(self, query_ids: list[str]) -> None:
        self._index = {q: i for i, q in enumerate(query_ids)}

    def query_index(self, qid: str) -> int:
        return self._index[qid]


class _StoredResult(EvaluationResult):
    """The stored run, as the comparison functions see a baseline: its query ids, its
    per-query values and means (nothing else of an EvaluationResult is available)."""

    def __init__(self, stored: StoredBaseline) -> None:  # no ranking: no super().__init__
        self.run_name = stored.label()
        self.query_ids = list(stored.query_ids)
        self.ranking = cast("Ranking", _Index(self.query_ids))
        self._stored = stored
        self._values: dict[Measure, np.ndarray[Any, np.dtype[np.float64]]] = {}
        for m, v in stored.values.items():
            try:
                self._values[parse_measure(m)] = np.asarray(v, dtype=np.float64)
            except MeasureError:
                continue

    def values(self, measure: str | Measure) -> np.ndarray[Any, np.dtype[np.float64]]:
        m = parse_measure(measure)
        if m not in self._values:
            raise RagReportError(f"the baseline report {self._stored.source} has no per-query "
                                 f"values of {m}; write it with the same measures and targets")
        return self._values[m]

    def mean(self, measure: str | Measure) -> float:
        m = parse_measure(measure)
        got = self._stored.means.get(str(m))
        if got is None:
            v = self.values(m)
            return float(v.mean()) if len(v) else 0.0
        return got


def _unique_label(name: str, taken: Sequence[str]) -> str:
    """The stored run's name as the report shows it: its own, unless a run of today has it
    (``"bm25 (stored)"``, then ``"bm25 (stored 2)"``...: never a name of today's runs).

    >>> _unique_label("bm25", ["dense"]), _unique_label("bm25", ["bm25", "bm25 (stored)"])
    ('bm25', 'bm25 (stored 2)')
    """
    label, n = name, 1
    while label in taken:
        label = f"{name} (stored)" if n == 1 else f"{name} (stored {n})"
        n += 1
    return label


def _health(name: str, counts: Mapping[str, Any]) -> RunHealth | None:
    keys = ("evaluated", "run_only", "qrels_only", "no_relevant", "empty_retrievals",
            "duplicates_dropped", "skipped_no_relevant")
    if not all(isinstance(counts.get(k), int) for k in keys):
        return None
    ident = counts.get("identical_ids_dropped")
    n = [int(counts[k]) for k in keys]
    return RunHealth(name, n[0], n[1], n[2], n[3], n[4], n[5], n[6],
                     [str(x) for x in counts.get("run_only_examples") or []],
                     [str(x) for x in counts.get("qrels_only_examples") or []],
                     ident if isinstance(ident, int) else None)


def with_stored_baseline(report: Report, results: Sequence[EvaluationResult],
                         stored: StoredBaseline, targets: Sequence[Target] = (), *,
                         checks: Sequence[DriftCheck] = (), allow_drift: bool = False,
                         max_drop: float | None = None, slices: Any = None) -> Report:
    """``report`` (built on today's ``results`` alone) with ``stored`` as its baseline.

    The stored run comes first among the runs; each run of today gets its delta against the
    stored mean, the Holm-corrected paired tests, wins / losses / ties and (with
    ``max_drop``) the drop checks, all on the queries both have, from the stored per-query
    values: exactly what :func:`~ragreport.report.build_report` computes with the baseline's
    run among the results. With query slices (``report.slices``; ``slices`` is what
    ``build_report`` was given), each slice gets the stored run's mean over its queries and
    each run of today its comparison with the stored run on the slice, Holm-corrected across
    runs, slices and measures (:func:`~ragreport.analysis.slices.slice_comparisons`).

    Raises
    ------
    RagReportError
        A drift check failed and ``allow_drift`` is off (the message lists each), the
        report was built with a doc map, or the stored report lacks a measure compared.
    """
    from ..analysis.drift import refusal

    message = refusal(checks, stored.source)
    if message and not allow_drift:
        raise RagReportError(message)
    if report.document is not None:
        raise RagReportError("--baseline-report does not work with --doc-map yet (a stored "
                             "report keeps no document-level per-query values): give the "
                             "baseline's run file and --baseline NAME instead")
    names = [r.run_name for r in results]
    label = _unique_label(stored.name, names)
    stored = replace(stored, shown_name=label)
    base = _StoredResult(stored)
    measures = [parse_measure(m) for m in report.measures]
    bounded = [m for m in measures if m.bounded]
    for m in bounded:
        base.values(m)  # a measure the stored report lacks: one clear error, before any work
    info = report.stats
    tests = baseline_tests([base, *results], base, bounded, resamples=info.resamples,
                           seed=info.seed) if info is not None else {}

    summary = []
    for row in report.summary:
        m = parse_measure(row.measure)
        cells: list[SummaryCell] = []
        bv = stored.means.get(row.measure)
        if bv is not None:
            lo, hi = stored.intervals.get(row.measure, (None, None)) if info is not None \
                else (None, None)  # --no-stats: no interval for today's runs either
            total = stored.totals.get(row.measure)
            cells.append(SummaryCell(
                label, bv, shown(bv), None, "", "", lo, hi,
                f"[{shown(lo)}, {shown(hi)}]" if lo is not None and hi is not None else "",
                total=total, total_text=total_text(total)))
        for c in row.cells:
            if bv is None:
                cells.append(replace(c, delta=None, delta_text="", direction="",
                                     p_value=None, t_p_value=None, significant=False))
                continue
            d = c.value - bv
            p, tp = tests.get((c.run, m), (None, None))
            cells.append(replace(c, delta=d, delta_text=signed(d), direction=direction_mark(d),
                                 p_value=p, t_p_value=tp,
                                 significant=p is not None and info is not None
                                 and p < info.alpha))
        summary.append(SummaryRow(row.measure, row.title, cells))

    comparisons = []
    for r in results:
        if not bounded:
            break
        ia, ib = common_queries(r, base)
        if len(ia) == 0:
            continue
        wins, losses, ties = outcomes(
            np.column_stack([base.values(m)[ib] for m in bounded]),
            np.column_stack([r.values(m)[ia] for m in bounded]))
        comparisons += [Comparison(r.run_name, label, str(m), int(w), int(lo_), int(t))
                        for m, w, lo_, t in zip(bounded, wins, losses, ties, strict=True)]

    drops = drop_checks([base, *results], base, targets, info, max_drop) \
        if max_drop is not None else []

    k_max = min([report.k_max, *(len(v) for f, v in stored.curves.items()
                                 if any(cv.family == f for cv in report.curves))])
    curves = []
    for cv in report.curves:
        series = {label: stored.curves[cv.family][:k_max]} if cv.family in stored.curves \
            else {}
        series |= {r: v[:k_max] for r, v in cv.series.items()}
        bands = {label: (stored.bands[cv.family][0][:k_max],
                         stored.bands[cv.family][1][:k_max])
                 } if cv.family in stored.bands and cv.bands else {}
        bands |= {r: (lo[:k_max], hi[:k_max]) for r, (lo, hi) in cv.bands.items()}
        curves.append(replace(cv, ks=cv.ks[:k_max], series=series, bands=bands))
    distributions = [Distribution(d.measure, ({label: list(stored.values[d.measure])}
                                              if d.measure in stored.values else {})
                                  | d.values) for d in report.distributions]
    health = report.health
    h = _health(label, stored.counts)
    if h is not None:
        health = [h, *health]
    pr = report.pr_curve
    if pr is not None and stored.pr_curve is not None and len(stored.pr_curve) == len(pr.levels):
        pr = replace(pr, series={label: list(stored.pr_curve)} | pr.series,
                     queries={label: len(stored.query_ids)} | pr.queries)
    sliced = _stored_slices(report.slices, results, base, stored, slices, info) \
        if report.slices is not None else None
    inputs = list(report.inputs) + ([stored.input_file] if stored.input_file else [])
    drift = BaselineDrift(stored.source, label, stored.generated_at, list(checks), allow_drift)
    return replace(report, runs=[label, *report.runs], baseline=label, summary=summary,
                   comparisons=comparisons, drops=drops, curves=curves, k_max=k_max,
                   distributions=distributions, health=health, pr_curve=pr, inputs=inputs,
                   drift=drift, slices=sliced)


def _stored_slices(report: SliceReport, results: Sequence[EvaluationResult],
                   base: _StoredResult, stored: StoredBaseline, slices: Any,
                   info: Any) -> SliceReport:
    """``report``'s slices against the stored run: its mean per slice (no interval: the
    stored report keeps none per slice) and today's comparisons with it."""
    from ..analysis.slices import slice_comparisons, slice_indices
    from ..io.slices import load_slices

    if slices is None:
        raise RagReportError("the report has query slices: give the same slices to compare "
                             "them with the stored baseline")
    tags = load_slices(slices).tags
    measures = list(dict.fromkeys(parse_measure(r.measure) for s in report.slices
                                  for r in s.rows))
    for m in measures:
        if m.bounded:
            base.values(m)  # a measure the stored report lacks: one clear error
    comps = {(c.slice, c.run, str(c.measure)): c for c in slice_comparisons(
        results, base, tags, measures, stats=info is not None,
        resamples=info.resamples if info is not None else 1,
        seed=info.seed if info is not None else 0,
        alpha=info.alpha if info is not None else 0.05, min_queries=report.min_queries)}
    label = base.run_name
    out = []
    for sl in report.slices:
        idx = slice_indices(base.query_ids, [q for q, t in tags.items() if sl.name in t])
        rows = []
        for row in sl.rows:
            has = row.measure in stored.values and len(idx) > 0
            v = float(base.values(row.measure)[idx].mean()) if has else None
            cells = [SliceCell(label, len(idx), v, shown(v) if v is not None else "–")]
            for c in row.cells:
                got = comps.get((sl.name, c.run, row.measure))
                plain = replace(c, delta=None, delta_text="", direction="", p_value=None,
                                t_p_value=None, significant=False, wins=None, losses=None,
                                ties=None, compared=0)
                if got is None:
                    cells.append(plain)
                elif got.n == 0:
                    cells.append(replace(plain, wins=0, losses=0, ties=0))
                else:
                    cells.append(replace(
                        plain, delta=got.delta, delta_text=signed(got.delta),
                        direction=direction_mark(got.delta), p_value=got.p_value,
                        t_p_value=got.t_p_value, significant=got.significant, wins=got.wins,
                        losses=got.losses, ties=got.ties, compared=got.n))
            rows.append(replace(row, cells=cells))
        out.append(replace(sl, queries={label: len(idx)} | sl.queries, rows=rows,
                           few=sl.few or len(idx) < report.min_queries))
    return replace(report, slices=out)
