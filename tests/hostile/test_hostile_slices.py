"""Hostile-input catalogue, area "slices": ``--slices FILE`` / ``--slices-column NAME`` and the
``[targets.slices.NAME]`` tables.

Each row runs ``ragreport`` in a fresh folder (see ``tests/hostile.py``): a bad slices file
(empty tag, a query id without a tag, bad encoding, binary or corrupt data, a table without the
columns, too many slices), slice targets that name no slice or come without ``--slices``, and
ids no run evaluated exit 2 with one stderr line naming the file, the line (or row) and what
was wrong; duplicate lines count once; a failing slice target makes ``check`` exit 1 naming the
slice.
"""

from __future__ import annotations

import gzip
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import QRELS, RUN, Case, CaseResult, run_case

SLICES = "q1\teasy,short\nq2\thard\nq3\thard,short\n"
FILES = {"qrels.txt": QRELS, "run.txt": RUN, "s.tsv": SLICES}
CHECK = ["check", "qrels.txt", "run.txt", "--slices", "s.tsv", "--no-stats", "--jobs", "1"]
REPORT = ["report", *CHECK[1:]]


def _with(**files: str | bytes | None) -> dict[str, str | bytes | None]:
    return {**FILES, **files}


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _json_slices(res: CaseResult) -> None:
    data = json.loads((res.tmp / "r.json").read_text(encoding="utf-8"))
    sl = {s["name"]: s for s in data["slices"]["slices"]}
    assert sl["short"]["queries"]["tag"] == 2 and sl["hard"]["queries"]["tag"] == 2
    assert data["slices"]["duplicates"] == 1


CASES = [
    # the slices file
    Case("missing-file", [*CHECK[:3], "--slices", "nope.tsv"], FILES,
         stderr=r"nope\.tsv: no such file"),
    Case("directory", [*CHECK[:3], "--slices", "."], FILES, stderr=r"\.: is a directory"),
    Case("empty-file", CHECK, _with(**{"s.tsv": ""}), stderr=r"s\.tsv: the file is empty"),
    Case("comments-only", CHECK, _with(**{"s.tsv": "# nothing\n\n"}),
         stderr=r"s\.tsv: no slice found"),
    Case("header-only", CHECK, _with(**{"s.tsv": "query_id\tslices\n"}),
         stderr=r"s\.tsv: no slice found"),
    Case("empty-tag", CHECK, _with(**{"s.tsv": "q1\teasy\nq2\thard,,x\n"}),
         stderr=r"s\.tsv:2: query 'q2': empty slice name"),
    Case("trailing-comma", CHECK, _with(**{"s.tsv": "q1\teasy,\n"}),
         stderr=r"s\.tsv:1: query 'q1': empty slice name"),
    Case("id-without-tag", CHECK, _with(**{"s.tsv": "q1\teasy\nq2\n"}),
         stderr=r"s\.tsv:2: query 'q2': no slice name after the query id"),
    Case("empty-id", CHECK, _with(**{"s.tsv": "q1\teasy\n\thard\n"}),
         stderr=r"s\.tsv:2: empty query id"),
    Case("invalid-utf8", CHECK, _with(**{"s.tsv": SLICES.encode() + b"q1\tb\xffd\n"}),
         stderr=r"s\.tsv:4: not valid UTF-8"),
    Case("latin-1", CHECK, _with(**{"s.tsv": "q1\tcaf\u00e9\n".encode("latin-1")}),
         stderr=r"s\.tsv:1: not valid UTF-8"),
    Case("binary", CHECK, _with(**{"s.tsv": b"q1\teasy\n\x00\x01"}),
         stderr=r"s\.tsv:2: not a text file"),
    Case("corrupt-gzip", [*CHECK[:3], "--slices", "s.tsv.gz"],
         _with(**{"s.tsv.gz": gzip.compress(SLICES.encode())[:20]}),
         stderr=r"s\.tsv\.gz: corrupt gzip data"),
    Case("control-character", [*CHECK[:3], "--slices", "s.jsonl"],
         _with(**{"s.jsonl": '{"query_id": "q1", "slices": ["a\\nb"]}\n'}),
         stderr=r"s\.jsonl:1: query 'q1': slice name 'a\\nb' holds a control character"),
    Case("bad-json", [*CHECK[:3], "--slices", "s.jsonl"],
         _with(**{"s.jsonl": '{"query_id": "q1", "slices": "a"}\n{"query_id": \n'}),
         stderr=r"s\.jsonl:2: invalid JSON"),
    Case("jsonl-nested-deep", [*CHECK[:3], "--slices", "s.jsonl"],
         _with(**{"s.jsonl": '{"query_id": "q1", "slices": "a"}\n'
                             + "[" * 100000 + "]" * 100000 + "\n"}),
         stderr=r"s\.jsonl:2: invalid JSON: nested too deeply$"),
    Case("jsonl-string-line", [*CHECK[:3], "--slices", "s.jsonl"],
         _with(**{"s.jsonl": '{"query_id": "q1", "slices": "a"}\n"q2"\n'}),
         stderr=r"s\.jsonl:2: expected a JSON object, got str$"),
    Case("jsonl-no-tag-column", [*CHECK[:3], "--slices", "s.jsonl"],
         _with(**{"s.jsonl": '{"query_id": "q1", "text": "a"}\n'}),
         stderr=r"s\.jsonl: no slices column \(one of slices, slice, tags, tag, or name it "
                r"with --slices-column\); columns: 'query_id', 'text'"),
    Case("csv-short-row", [*CHECK[:3], "--slices", "s.csv"],
         _with(**{"s.csv": "qid,tag\nq1,a\nq2\n"}), stderr=r"s\.csv:3: expected 2 fields"),
    Case("parquet-null-id", [*CHECK[:3], "--slices", "s.parquet"],
         _with(**{"s.parquet": _parquet(pa.table({"qid": ["q1", None], "tag": ["a", "b"]}))}),
         stderr=r"s\.parquet: row 2: the query id must be text, got null"),
    Case("parquet-corrupt", [*CHECK[:3], "--slices", "s.parquet"],
         _with(**{"s.parquet": b"PAR1 truncated"}), stderr=r"s\.parquet: cannot read Parquet"),
    Case("too-many-slices", CHECK,
         _with(**{"s.tsv": "".join(f"q1\tt{i}\n" for i in range(201))}),
         stderr=r"s\.tsv:201: more than 200 distinct slices"),
    Case("unknown-ids-only", CHECK, _with(**{"s.tsv": "x1\ta\nx2\tb\n"}),
         stderr=r"error: s\.tsv: none of the 2 query ids of the slices is an evaluated query"),
    # --slices-column
    Case("column-of-tsv", [*CHECK, "--slices-column", "kind"], FILES,
         stderr=r"s\.tsv: a column \('kind'\) was named, but this is a text file"),
    Case("column-missing", [*CHECK[:3], "--slices", "s.jsonl", "--slices-column", "kind"],
         _with(**{"s.jsonl": '{"query_id": "q1", "slices": "a"}\n'}),
         stderr=r"s\.jsonl: no column 'kind'; columns: 'query_id', 'slices'"),
    Case("column-without-file", [*CHECK[:3], "--slices-column", "kind", "--no-stats"], FILES,
         stderr=r"--slices-column names a column of --slices FILE or of --queries FILE"),
    # slice targets
    Case("targets-without-slices", [*CHECK[:3], "--targets", "t.toml", "--no-stats"],
         _with(**{"t.toml": '[targets.slices.hard]\n"RR" = 0.5\n'}),
         stderr=r"sets targets for slices \('hard'\) but no --slices"),
    Case("targets-unknown-slice", [*CHECK, "--targets", "t.toml"],
         _with(**{"t.toml": '[targets.slices.hrad]\n"RR" = 0.5\n'}),
         stderr=r"error: t\.toml \[targets\.slices\.hrad\]: targets are set for slice 'hrad', "
                r"which no query is in \(slices: 'easy', "
                r"'short', 'hard'\)"),
    Case("targets-slice-not-a-table", [*CHECK, "--targets", "t.toml"],
         _with(**{"t.toml": '[targets.slices]\nhard = 0.5\n'}),
         stderr=r"t\.toml \[targets\.slices\.hard\]: expected a table of measure = target"),
    Case("targets-bad-measure", [*CHECK, "--targets", "t.toml"],
         _with(**{"t.toml": '[targets.slices.hard]\n"nope@5" = 0.5\n'}),
         stderr=r"t\.toml \[targets\.slices\.hard\]: target 'nope@5'"),
    Case("with-baseline-report-not-a-report", [*CHECK, "--baseline-report", "main.json"],
         _with(**{"main.json": "{}"}),  # --slices works with --baseline-report: the file is read
         stderr=r"^ragreport: error: main\.json: not a ragreport JSON report \(schema None"),
    Case("output-is-the-slices", [*CHECK, "--json", "s.tsv"], FILES,
         stderr=r"refusing to write s\.tsv: it is one of the inputs"),
    # what works
    Case("duplicates-and-unknown", [*REPORT, "--json", "r.json"],
         _with(**{"s.tsv": SLICES + "q1\tshort\nx9\thard\n"}), exit=0, check=_json_slices),
    Case("stdin", [*REPORT[:3], "--slices", "-", "--no-stats", "--json", "r.json"], FILES,
         stdin=SLICES.encode(), exit=0),
    # parser failures are input errors naming the file and line (were internal errors)
    Case("jsonl-5000-digit-id", [*REPORT[:3], "--slices", "s.jsonl", "--no-stats", "--json",
                                 "r.json"],
         _with(**{"s.jsonl": '{"query_id": "q1", "slice": "a"}\n'
                  '{"query_id": ' + "1" * 5000 + ', "slice": "a"}\n'}),
         stderr=r"s\.jsonl:2: invalid JSON: a number of more digits than Python reads "
                r"\(4300\)"),
    Case("json-5000-digit-id", [*REPORT[:3], "--slices", "s.json", "--no-stats"],
         _with(**{"s.json": '[{"query_id": ' + "1" * 5000 + ', "slice": "a"}]'}),
         stderr=r"s\.json: invalid JSON: a number of more digits than Python reads"),
    # a slice target table at the wrong place: an error naming the right spelling, never a
    # gate silently switched off
    Case("slice-targets-beside-targets", [*CHECK, "--targets", "t.toml"],
         _with(**{"t.toml": '[targets]\n"RR" = 0.1\n[slices."hard"]\n"RR" = 0.99\n'}),
         stderr=r"t\.toml: \[slices\.hard\] is beside \[targets\], where no per-slice target "
                r"is read: write \[targets\.slices\.hard\]"),
    Case("slice-targets-beside-pyproject-targets", CHECK,
         _with(**{"pyproject.toml": '[tool.ragreport.targets]\n"RR" = 0.1\n'
                                    '[tool.ragreport.slices.hard]\n"RR" = 0.99\n'}),
         stderr=r"pyproject\.toml: \[tool\.ragreport\.slices\.hard\] is beside "
                r"\[tool\.ragreport\.targets\].*write \[tool\.ragreport\.targets\.slices\.hard\]"),
    # slice targets are checked on chunk-level results: with --target-level document refused
    Case("slice-targets-at-document-level", [*CHECK, "--targets", "t.toml", "--doc-map",
                                             "m.tsv", "--target-level", "document"],
         _with(**{"t.toml": '"RR" = 0.1\n[slices."hard"]\n"RR" = 0.99\n',
                  "m.tsv": "".join(f"d{i}\tD{i}\n" for i in range(1, 10))}),
         stderr=r"per-slice targets are checked at chunk level, not at the document level "
                r"target_level='document' \(--target-level document\) names"),
    Case("failing-slice-target", [*CHECK, "--targets", "t.toml"],
         _with(**{"t.toml": '"RR" = 0.1\n[slices."hard"]\n"RR" = 0.99\n'}), exit=1,
         stdout=r"FAILED slice 'hard': RR: 0\.\d{4} is not >= 0\.99 \(run 'tag', 2 queries\)"),
]


def test_catalogue_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))



@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]
