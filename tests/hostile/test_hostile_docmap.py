"""Hostile-input catalogue, area "doc map": ``--doc-map FILE`` (chunk id -> document id).

Each row runs ``ragreport`` in a fresh folder (see ``tests/hostile.py``): a bad map, a chunk
missing from it, judgments at neither or at both levels, or an option that cannot go with it
exit 2 with one stderr line naming the file, the line and what was wrong.
"""

from __future__ import annotations

import gzip
import json

import pytest
from hostile import QRELS, RUN, Case, CaseResult, run_case

# the catalogue's run retrieves d1 d2 d9 | d5 d3 d8 | d6 d7; its qrels judge d1 d2 d4 d3 d8 d7
MAP = "d1\tA\nd2\tA\nd9\tB\nd5\tC\nd3\tC\nd8\tD\nd6\tE\nd7\tE\nd4\tF\n"
FILES = {"qrels.txt": QRELS, "run.txt": RUN, "map.tsv": MAP}
EVAL = ["evaluate", "qrels.txt", "run.txt", "--doc-map", "map.tsv"]
CHECK = ["check", "qrels.txt", "run.txt", "--doc-map", "map.tsv", "--no-stats", "--jobs", "1"]


def _with(**files: str | bytes | None) -> dict[str, str | bytes | None]:
    return {**FILES, **files}


def _json_means(res: CaseResult) -> None:
    data = json.loads(res.stdout)
    doc = data["document"]
    # q1: A (d1 1, d2 2: grade 2) then B; q2: C (d5 unjudged, d3 1) then D (d8 3), d3 after
    # d8 (tied scores: id descending);
    # q3: E (d6 unjudged, d7 1): every query's first document is relevant
    assert doc["means"]["RR"] == 1.0
    assert data["means"]["RR"] == pytest.approx((1 + 1 / 2 + 1 / 2) / 3)
    assert doc["doc_map"]["judgment_level"] == "chunk"
    assert doc["doc_map"]["chunks_collapsed"] == 3  # d2 (A), d3 (C, after d8), d7 (E)


CASES = [
    # the map file itself
    Case("missing-file", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "nope.tsv"], FILES,
         stderr=r"nope\.tsv: no such file"),
    Case("directory", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "."], FILES,
         stderr=r"\.: is a directory"),
    Case("empty-file", EVAL, _with(**{"map.tsv": ""}), stderr=r"map\.tsv: the file is empty"),
    Case("comments-only", EVAL, _with(**{"map.tsv": "# nothing\n\n"}),
         stderr=r"map\.tsv: the doc map is empty"),
    Case("header-only", EVAL, _with(**{"map.tsv": "chunk_id\tdoc_id\n"}),
         stderr=r"map\.tsv: the doc map is empty"),
    Case("three-fields", EVAL, _with(**{"map.tsv": "d1\tA\nd2\tA\tx\n"}),
         stderr=r"map\.tsv:2: expected 2 fields, chunk_id<TAB>doc_id, got 3"),
    Case("one-field", EVAL, _with(**{"map.tsv": "d1\tA\nd2\n"}),
         stderr=r"map\.tsv:2: expected 2 fields.*got 1"),
    Case("empty-chunk-id", EVAL, _with(**{"map.tsv": "d1\tA\n\tB\n"}),
         stderr=r"map\.tsv:2: empty chunk id"),
    Case("empty-doc-id", EVAL, _with(**{"map.tsv": "d1\tA\nd2\t \n"}),
         stderr=r"map\.tsv:2: empty document id for chunk 'd2'"),
    Case("conflicting-chunk", EVAL, _with(**{"map.tsv": MAP + "d1\tZ\n"}),
         stderr=r"map\.tsv:10: chunk 'd1' is mapped to two documents: 'A' at line 1 and 'Z'"),
    Case("invalid-utf8", EVAL, _with(**{"map.tsv": MAP.encode() + b"d\xff\tA\n"}),
         stderr=r"map\.tsv:10: not valid UTF-8"),
    Case("binary", EVAL, _with(**{"map.tsv": b"d1\tA\n\x00\x01"}),
         stderr=r"map\.tsv:2: not a text file"),
    Case("corrupt-gzip", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "map.tsv.gz"],
         _with(**{"map.tsv.gz": gzip.compress(MAP.encode())[:30]}),
         stderr=r"map\.tsv\.gz: corrupt gzip data"),
    Case("jsonl-5000-digit-id", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "map.jsonl"],
         _with(**{"map.jsonl": '{"chunk_id": "d1", "doc_id": "A"}\n{"chunk_id": '
                  + "1" * 5000 + ', "doc_id": "B"}\n'}),
         stderr=r"map\.jsonl:2: invalid JSON: a number of more digits than Python reads "
                r"\(4300\)$"),
    Case("bad-json", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "map.jsonl"],
         _with(**{"map.jsonl": '{"chunk_id": "d1", "doc_id": "A"}\n{"chunk_id": \n'}),
         stderr=r"map\.jsonl:2: invalid JSON"),
    Case("json-no-keys", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "map.jsonl"],
         _with(**{"map.jsonl": '{"chunk": "d1", "doc": "A"}\n'}),
         stderr=r"map\.jsonl:1: a record needs a chunk id"),
    Case("json-null-id", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "map.jsonl"],
         _with(**{"map.jsonl": '{"chunk_id": null, "doc_id": "A"}\n'}),
         stderr=r"map\.jsonl:1: chunk id must be a string or an integer, got None"),
    Case("json-array", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "map.jsonl"],
         _with(**{"map.jsonl": '{"chunk_id": "d1", "doc_id": "A"}\n["d2", "A"]\n'}),
         stderr=r"map\.jsonl:2: expected a JSON object, got list"),
    # the map against the run and the qrels
    Case("chunk-not-in-map", EVAL, _with(**{"map.tsv": MAP.replace("d9\tB\n", "")}),
         stderr=r"run\.txt:3: chunk 'd9' is not in the doc map \(map\.tsv\); pass .*"
                r"--doc-map-unmapped own"),
    Case("judged-id-not-in-map", EVAL, _with(**{"map.tsv": MAP.replace("d4\tF\n", "")}),
         stderr=r"qrels\.txt:3: judged id 'd4' is neither a chunk nor a document id"),
    # the advice names the real option and the real Python API (evaluate has no unmapped=)
    Case("chunk-not-in-map-advice", EVAL, _with(**{"map.tsv": MAP.replace("d9\tB\n", "")}),
         stderr=r"pass --doc-map-unmapped own \(Python: doc_map=ragreport\."
                r"load_doc_map\(the_map, unmapped='own'\)\) to count it as a document of"),
    Case("judged-id-not-in-map-advice", EVAL,
         _with(**{"map.tsv": MAP.replace("d4\tF\n", "")}),
         stderr=r"pass --doc-map-unmapped own \(Python: doc_map=ragreport\."
                r"load_doc_map\(the_map, unmapped='own'\)\)"),
    Case("unmapped-own-accepted", [*EVAL, "--doc-map-unmapped", "own"],
         _with(**{"map.tsv": MAP.replace("d9\tB\n", "")}), exit=0),
    Case("qrels-mix-levels", EVAL, _with(**{"qrels.txt": "q1 0 d1 1\nq1 0 C 1\n"}),
         stderr=r"qrels\.txt:2: the qrels mix chunk ids of the doc map \('d1' at line 1\) "
                r"and document ids \('C'\)"),
    Case("qrels-at-no-level", EVAL, _with(**{"qrels.txt": "q1 0 x1 1\nq2 0 x2 1\n"}),
         stderr=r"qrels\.txt:1: no judged id is a chunk or a document id of the doc map"),
    Case("document-judged-twice", EVAL,
         _with(**{"qrels.txt": "q1 0 A 1\nq2 0 C 1\nq1 0 A 2\n"}),
         stderr=r"qrels\.txt:3: document 'A' is judged twice for query 'q1' \(first at line "
                r"1\)"),
    # options that cannot go with it, or need it
    Case("stream", [*EVAL, "--stream"], FILES,
         stderr=r"--doc-map is not supported with --stream"),
    Case("format-trec", [*EVAL, "--format", "trec"], FILES,
         stderr=r"--format trec holds one level only; with --doc-map use --format table or "
                r"json"),
    Case("unmapped-without-map", ["evaluate", "qrels.txt", "run.txt", "--doc-map-unmapped",
                                  "own"], FILES, stderr=r"--doc-map-unmapped needs --doc-map"),
    Case("unmapped-bad-choice", [*EVAL, "--doc-map-unmapped", "skip"], FILES,
         stderr=r"invalid choice: 'skip'"),
    Case("target-level-without-map", ["check", "qrels.txt", "run.txt", "--target-level",
                                      "document", "--no-stats"], FILES,
         stderr=r"--target-level document needs --doc-map"),
    Case("output-is-the-map", [*CHECK, "--json", "map.tsv"], FILES,
         stderr=r"refusing to write map\.tsv: it is one of the inputs"),
    Case("stdin-twice", ["evaluate", "-", "run.txt", "--doc-map", "-"], FILES,
         stdin=QRELS.encode(), stderr=r"standard input \('-'\) can be read for one input only"),
    # what works
    Case("stdin-map", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "-", "--format", "json",
                       "-m", "RR"], FILES, stdin=MAP.encode(), exit=0, check=_json_means),
    Case("bom-gzip-header", ["evaluate", "qrels.txt", "run.txt", "--doc-map", "m.tsv.gz",
                             "--format", "json", "-m", "RR"],
         _with(**{"m.tsv.gz": gzip.compress(b"\xef\xbb\xbfchunk_id\tdoc_id\n" + MAP.encode())}),
         exit=0, check=_json_means),
    Case("unmapped-own", [*EVAL, "--doc-map-unmapped", "own", "-m", "RR"],
         _with(**{"map.tsv": MAP.replace("d9\tB\n", "")}), exit=0,
         stdout=r"RR\s+0\.6667\s+1\.0000"),
    Case("check-document-level", [*CHECK, "--target-level", "document"], FILES, exit=1,
         stdout=r"Targets \(document level\)"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]
