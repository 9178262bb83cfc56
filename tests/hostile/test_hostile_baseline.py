"""Hostile-input catalogue: ``--baseline-report`` and the drift options (issue 15).

Every row runs the real command in a fresh folder (see ``tests/hostile.py`` for what every row
asserts: exit code, one stderr line, no traceback, files unchanged, no temporary file, no
process left). ``main.json`` is the catalogue's qrels and run reported with ``--per-query``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hostile import QRELS, RUN, Case, CaseResult, run_case

import ragreport
from ragreport.report import InputFile, build_report
from ragreport.targets import parse_targets


def _stored(**options: Any) -> str:
    """The JSON report of the catalogue's run, as main's CI would keep it."""
    with tempfile.TemporaryDirectory() as tmp:
        q, r = Path(tmp) / "q.txt", Path(tmp) / "r.txt"
        q.write_text(QRELS)
        r.write_text(RUN)
        result = ragreport.evaluate(str(q), str(r), name="main", **options)
        rep = build_report([result], parse_targets({"RR": 0.1}), per_query=True, stats=False,
                           inputs=[InputFile.from_path("qrels", q),
                                   InputFile.from_path("run", r)],
                           generated_at="2026-01-01T00:00:00Z")
        return rep.to_json()


MAIN = _stored()
DOC: dict[str, Any] = json.loads(MAIN)
# its means rounded to 5 decimals as BEIR prints them (the per-query values are not)
MAIN_BEIR = _stored(compat="beir", measures=["nDCG@10", "P@3", "RR"])


def _mean_edited(measure: str, value: float) -> str:
    doc = json.loads(MAIN)
    doc["means"]["main"][measure] = value
    return json.dumps(doc)


def _three_runs(r: CaseResult) -> None:
    doc = json.loads((r.tmp / "o.json").read_text())
    assert doc["runs"] == ["main (stored 2)", "main", "main (stored)"], doc["runs"]
    assert doc["baseline"] == "main (stored 2)"
    assert len(doc["means"]) == 3 and doc["means"]["main"]["RR"] == DOC["means"]["main"]["RR"]


def _edit(**changes: Any) -> str:
    doc = json.loads(MAIN)
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return json.dumps(doc)


BASE = {"q.txt": QRELS, "r.txt": RUN, "main.json": MAIN, "t.toml": '[targets]\n"RR" = 0.1\n'}
CHECK = ["check", "q.txt", "r.txt", "--targets", "t.toml", "--no-stats", "--jobs", "1",
         "--baseline-report", "main.json"]
# the run with renamed documents (a re-chunked corpus): nothing in its top K is judged
RECHUNKED = "".join(f"{p[0]} Q0 {p[2]}#0 {p[3]} {p[4]} tag\n"
                    for p in (ln.split() for ln in RUN.splitlines()))


def _with_judgments() -> str:
    """main.json as the command line writes it: the qrels' judgments_sha256 too."""
    from ragreport.analysis.drift import judgments_sha256

    doc = json.loads(MAIN)
    doc["inputs"][0]["judgments_sha256"] = judgments_sha256(ragreport.load_qrels(
        _qrels_rows()))
    return json.dumps(doc)


def _qrels_rows() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for ln in QRELS.splitlines():
        if ln.strip():
            q, _, d, g = ln.split()
            out.setdefault(q, {})[d] = int(g)
    return out


def _parquet_qrels() -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [(q, d, g) for q, docs in _qrels_rows().items() for d, g in docs.items()]
    sink = io.BytesIO()
    pq.write_table(pa.table({"query-id": [r[0] for r in rows], "corpus-id": [r[1] for r in rows],
                             "score": [r[2] for r in rows]}), sink)
    return sink.getvalue()


MAIN_J = _with_judgments()
REORDERED = "".join(reversed(QRELS.splitlines(True)))


def _drift_note(res: CaseResult) -> None:
    doc = json.loads((res.tmp / "o.json").read_text(encoding="utf-8"))
    assert doc["baseline_drift"]["drifted"] and doc["baseline_drift"]["allowed"]
    assert "Baseline drift" in (res.tmp / "o.md").read_text(encoding="utf-8")


def _shard(qrels_sha256: str | None, qrels_text: str = QRELS) -> bytes:
    """The catalogue's run evaluated into a per-query Parquet file stating ``qrels_sha256``
    (``evaluate --per-query-out`` states the qrels file's; an engine none)."""

    import io

    import pyarrow.parquet as pq

    from ragreport.core.perquery import to_table

    with tempfile.TemporaryDirectory() as tmp:
        q, r = Path(tmp) / "q.txt", Path(tmp) / "r.txt"
        q.write_text(qrels_text)
        r.write_text(RUN)
        result = ragreport.evaluate(str(q), str(r))
    sink = io.BytesIO()
    pq.write_table(to_table(result, qrels_sha256=qrels_sha256), sink)
    return sink.getvalue()


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


PQ_CHECK = ["check", "--per-query-in", "w.parquet", "--targets", "t.toml", "--no-stats",
            "--jobs", "1", "--baseline-report", "main.json"]


def _stated_qrels(res: CaseResult) -> None:
    """A report from per-query results records the qrels fingerprint the shards state: stored
    as a baseline, its qrels are known."""
    doc = json.loads((res.tmp / "o.json").read_text(encoding="utf-8"))
    qrels = [f for f in doc["inputs"] if f["role"] == "qrels"]
    assert [f["sha256"] for f in qrels] == [_sha(QRELS)], doc["inputs"]
    assert doc["baseline_drift"]["drifted"] is False


CASES = [
    Case("stored-passes", CHECK, BASE, exit=0, stdout="ok +qrels"),
    # --per-query-in: the qrels compared by the fingerprint the shards state
    Case("per-query-stored-passes", [*PQ_CHECK, "--json", "o.json"],
         {**BASE, "w.parquet": _shard(_sha(QRELS))}, exit=0, stdout="ok +qrels: sha256",
         check=_stated_qrels),
    Case("per-query-qrels-changed", PQ_CHECK,
         {**BASE, "w.parquet": _shard(_sha(QRELS + "q9 0 d1 1\n"), QRELS + "q9 0 d1 1\n")},
         stderr=r"qrels: the qrels differ from the baseline's \(sha256 "),
    Case("per-query-qrels-unknown", PQ_CHECK, {**BASE, "w.parquet": _shard(None)},
         stderr=r"qrels: the current qrels fingerprint is unknown"),
    Case("stored-is-parquet", PQ_CHECK, {**BASE, "w.parquet": _shard(None),
                                         "main.json": _shard(None)},
         stderr=r"main\.json: a Parquet file, not a JSON report \(per-query results are read "
                r"with --per-query-in\)$"),
    Case("per-query-qrels-unknown-allowed", [*PQ_CHECK, "--allow-drift"],
         {**BASE, "w.parquet": _shard(None)}, exit=0, stdout="DRIFT qrels"),
    Case("stored-missing", [*CHECK[:-1], "nope.json"], BASE,
         stderr=r"nope\.json: cannot read the baseline report"),
    Case("stored-not-json", CHECK, {**BASE, "main.json": "{\"schema\": "},
         stderr=r"main\.json:1: not a JSON report: Expecting value"),
    Case("stored-not-utf8", CHECK, {**BASE, "main.json": b"\xff\xfe{}"},
         stderr=r"main\.json: not UTF-8 text"),
    Case("stored-array", CHECK, {**BASE, "main.json": "[1, 2]"},
         stderr=r"main\.json: not a ragreport JSON report: a list, not an object"),
    Case("stored-other-schema", CHECK, {**BASE, "main.json": _edit(schema="other/9")},
         stderr=r"schema 'other/9'; expected 'ragreport\.report/1'"),
    Case("stored-without-per-query", CHECK, {**BASE, "main.json": _edit(per_query=None)},
         stderr=r"no per-query values; write it with --per-query"),
    Case("stored-nan", CHECK, {**BASE, "main.json": MAIN.replace(
        '"RR": 1.0', '"RR": NaN', 1)}, stderr=r"NaN is not a JSON number"),
    Case("stored-value-text", CHECK, {**BASE, "main.json": MAIN.replace(
        '"RR": 1.0', '"RR": "1.0"', 1)},
         stderr=r"per_query\.main\.q\d\.RR must be a finite number, got '1\.0'"),
    Case("stored-runs-not-list", CHECK, {**BASE, "main.json": _edit(runs="main")},
         stderr=r"runs must be a JSON array"),
    Case("stored-run-not-there", [*CHECK, "--baseline", "other"], BASE,
         stderr=r"no run 'other' in the baseline report \(runs: 'main'\)"),
    Case("stored-lacks-a-measure", [*CHECK, "-m", "P@7"], BASE,
         stderr=r"main\.json has no per-query values of P@7"),
    Case("qrels-changed", CHECK, {**BASE, "q.txt": QRELS + "q9 0 d1 1\n"},
         stderr=r"no longer matches: qrels: the qrels differ from the baseline's \(sha256 "),
    Case("stored-conventions-not-object", CHECK, {**BASE, "main.json": _edit(conventions=[1])},
         stderr=r"main\.json: conventions must be a JSON object, got list$"),
    Case("stored-curves-not-object", CHECK, {**BASE, "main.json": _edit(curves=[1])},
         stderr=r"main\.json: curves must be a JSON object, got list$"),
    Case("stored-bands-not-numbers", CHECK, {**BASE, "main.json": _edit(
        curve_bands={"P": {"main": {"lower": ["a"], "upper": [1]}}})}, exit=0),
    Case("stored-inputs-not-list", CHECK, {**BASE, "main.json": _edit(inputs=5)},
         stderr=r"main\.json: inputs must be a JSON array, got int$"),
    Case("stored-query-lacks-a-measure", CHECK, {**BASE, "main.json": MAIN.replace(
        '"RR": 1.0,', '', 1)}, stderr=r"per_query\.main\.q\d has no RR \(another query has it\)$"),
    Case("qrels-reordered-same-judgments", CHECK,
         {**BASE, "main.json": MAIN_J, "q.txt": REORDERED}, exit=0,
         stdout=r"ok +qrels: judgments sha256"),
    Case("qrels-parquet-same-judgments", [*CHECK[:1], "q.parquet", *CHECK[2:]],
         {**BASE, "main.json": MAIN_J, "q.parquet": _parquet_qrels()}, exit=0,
         stdout=r"ok +qrels: judgments sha256"),
    Case("qrels-reordered-without-judgments-fingerprint", CHECK, {**BASE, "q.txt": REORDERED},
         stderr=r"qrels: the qrels differ from the baseline's \(sha256 "),
    Case("qrels-changed-judgments", CHECK,
         {**BASE, "main.json": MAIN_J, "q.txt": QRELS + "q9 0 d1 1\n"},
         stderr=r"qrels: the qrels differ from the baseline's \(judgments sha256 "),
    Case("qrels-fingerprint-missing", CHECK, {**BASE, "main.json": _edit(inputs=[])},
         stderr=r"qrels: the baseline's qrels fingerprint is unknown"),
    Case("judged-collapsed", CHECK, {**BASE, "r.txt": RECHUNKED},
         stderr=r"judged \(tag\): the judged share of the top 20 collapsed: .*Judged@20 0\.0000"),
    Case("judged-unknown", CHECK, {**BASE, "main.json": _edit(judged_at_k=None)},
         stderr=r"the baseline report has no Judged@20"),
    Case("queries-differ", CHECK, {**BASE, "r.txt": "".join(
        ln + "\n" for ln in RUN.splitlines() if not ln.startswith("q3"))},
         stderr=r"queries \(tag\): the query sets differ beyond the threshold \(0 added, 1 "
                r"removed of 3 queries \(share 0\.3333\); needs share <= 0\.05\)"),
    Case("queries-differ-within-threshold", [*CHECK, "--max-query-drift", "0.34"],
         {**BASE, "r.txt": "".join(ln + "\n" for ln in RUN.splitlines()
                                   if not ln.startswith("q3"))}, exit=0),
    Case("conventions-differ", [*CHECK, "-l", "2"], BASE,
         stderr=r"conventions: the evaluation conventions differ .*differ: relevant"),
    Case("drift-allowed", [*CHECK, "--allow-drift", "--json", "o.json", "--markdown", "o.md"],
         {**BASE, "q.txt": QRELS + "q9 0 d1 1\n"}, exit=0, stdout="DRIFT qrels",
         check=_drift_note),
    Case("allow-drift-alone", ["check", "q.txt", "r.txt", "--allow-drift"], BASE,
         stderr=r"--allow-drift needs --baseline-report"),
    Case("max-query-drift-alone", ["check", "q.txt", "r.txt", "--max-query-drift", "0.1"],
         BASE, stderr=r"--max-query-drift needs --baseline-report"),
    Case("max-query-drift-too-big", [*CHECK, "--max-query-drift", "1.5"], BASE,
         stderr=r"--max-query-drift: must be >= 0 and <= 1, got 1\.5"),
    Case("min-judged-ratio-nan", [*CHECK, "--min-judged-ratio", "nan"], BASE,
         stderr=r"--min-judged-ratio: expected a decimal number, got 'nan'"),
    Case("stored-is-stdin", [*CHECK[:-1], "-"], BASE,
         stderr=r"--baseline-report must be a file, not standard input"),
    Case("stored-as-output", [*CHECK, "--json", "main.json"], BASE,
         stderr=r"main\.json"),
    # the summary's deltas and the drop checks compare the same numbers: a mean that is not
    # its per-query values' (edited by hand) is refused
    Case("stored-mean-edited", CHECK, {**BASE, "main.json": _mean_edited("RR", 0.9)},
         stderr=r"main\.json: means\.main\.RR is 0\.9 but its per-query values average "
                r"0\.666666\d+: the report was changed after it was written"),
    Case("stored-mean-edited-with-max-drop", [*CHECK[:5], "--jobs", "1", "--baseline-report",
                                              "main.json", "--max-drop", "0.01"],
         {**BASE, "main.json": _mean_edited("AP", 0.1)},
         stderr=r"means\.main\.AP is 0\.1 but its per-query values average 0\.69444"),
    Case("stored-rounded-means-read", ["check", "q.txt", "r.txt", "--compat", "beir", "-m",
                                       "nDCG@10", "-m", "P@3", "-m", "RR", "--targets",
                                       "t.toml", "--no-stats", "--jobs", "1",
                                       "--baseline-report", "b.json"],
         {**BASE, "b.json": MAIN_BEIR}, exit=0, stdout=r"ok +qrels"),
    # a stored run's label never takes a run of today's name (its JSON entry was overwritten)
    Case("stored-label-collides", ["check", "q.txt", "r.txt", "r2.txt", "--name", "main",
                                   "--name", "main (stored)", "--targets", "t.toml",
                                   "--no-stats", "--jobs", "1", "--baseline-report",
                                   "main.json", "--json", "o.json"],
         {**BASE, "r2.txt": RUN}, exit=0, check=_three_runs),
    # a parser's failure is an input error naming the file (were internal errors)
    Case("stored-nested-deep", CHECK, {**BASE, "main.json": "[" * 100000 + "]" * 100000},
         stderr=r"main\.json: not a JSON report: nested too deeply$"),
    Case("stored-400-digit-integer", CHECK, {**BASE, "main.json": MAIN.replace(
        '"RR": 1.0', '"RR": 1' + "0" * 400, 1)},
         stderr=r"main\.json: per_query\.main\.q1\.RR must be a finite number"),
    Case("stored-5000-digit-integer", CHECK, {**BASE, "main.json": MAIN.replace(
        '"RR": 1.0', '"RR": 1' + "0" * 5000, 1)},
         stderr=r"main\.json: not a JSON report: a number of more digits than Python reads"),
    Case("stored-with-doc-map", [*CHECK, "--doc-map", "m.tsv"],
         {**BASE, "m.tsv": "d1\tD1\n"},
         stderr=r"--baseline-report does not work with --doc-map yet"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)


def test_catalogue_covers_every_refusal() -> None:
    assert len({c.id for c in CASES}) == len(CASES)
    # RR has no cutoff: the worst queries' K, so Judged@K's, is the curves' width
    assert DOC["judged_at_k"]["k"] == 20 and list(DOC["judged_at_k"]["means"]) == ["main"]
