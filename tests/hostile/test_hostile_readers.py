"""Hostile-input catalogue: the text-file readers and streaming (issue 12).

Every row runs the ``ragreport`` command on files, standard input or a FIFO and asserts the
exit code and, on failure, the one stderr line naming the file and the line. Legal odd inputs
(a byte order mark, ``-``, a FIFO, a gzip pipe, tab-separated TREC with ids that look like
header names, ``+1``/``.5``/``1E5`` scores, fields after the tag, a 10 MB id) must give
pytrec_eval's numbers, with and without ``--stream``.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile import QRELS, RUN, Case, CaseResult, fifo, pytrec_eval_means, run_case, trec_means

BOM = b"\xef\xbb\xbf"
MEASURES = ["-m", "P@5", "-m", "R@10", "-m", "nDCG", "-m", "AP", "-m", "RR", "--format", "trec"]
TREC_NAMES = ["P_5", "recall_10", "ndcg", "map", "recip_rank"]
QRELS_B = QRELS.encode()
RUN_B = RUN.encode()


def _dicts(qrels: str, run: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """The inputs as pytrec_eval reads them (grades as trec_eval's atol reads them)."""
    q: dict[str, dict[str, int]] = {}
    for line in qrels.splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            q.setdefault(f[0], {})[f[2]] = math.trunc(float(f[3]))
    r: dict[str, dict[str, float]] = {}
    for line in run.splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            r.setdefault(f[0], {})[f[2]] = float(f[4])
    return q, r


def same_as_pytrec_eval(qrels: str = QRELS, run: str = RUN) -> Callable[[CaseResult], None]:
    """A check: the command's trec-format means equal pytrec_eval's on the same data."""
    q, r = _dicts(qrels, run)
    want = pytrec_eval_means(q, r, TREC_NAMES)

    def check(result: CaseResult) -> None:
        got = trec_means(result.stdout)
        for name in TREC_NAMES:
            assert got[name] == pytest.approx(want[name], abs=6e-5), (name, result.stdout)

    return check


def _run_with(line2: str) -> str:
    """The catalogue's run with its second line's score replaced."""
    lines = RUN.splitlines(keepends=True)
    f = lines[1].split()
    f[4] = line2
    lines[1] = " ".join(f) + "\n"
    return "".join(lines)


def _qrels_with(grade: str) -> str:
    lines = QRELS.splitlines(keepends=True)
    f = lines[1].split()
    f[3] = grade
    lines[1] = " ".join(f) + "\n"
    return "".join(lines)


TAB_IDS = {"q1": "qid1", "q2": "query_id2", "q3": "query-id3"}


def _tab_qid(text: str) -> str:
    for old, new in TAB_IDS.items():
        text = text.replace(old + " ", new + " ")
    return text.replace(" ", "\t")


ODD_SCORES = RUN.replace("3.0", "+3").replace("0.25", ".25").replace("1.0 tag\nq2", "1E0 tag\nq2")
LONG_ID = "d" + "x" * (10 << 20)
RUN_LONG_ID = RUN.replace("tag\nq2", f"tag\nq1 Q0 {LONG_ID} 4 0.5 tag\nq2", 1)
BAD_UTF8 = RUN_B.replace(b"d9", b"d\xff9")
NUL = RUN_B.replace(b"d9", b"d\x009")
TRUNCATED_GZ = gzip.compress(RUN_B * 50)[:-20]
BAD_CRC = bytearray(gzip.compress(RUN_B))
BAD_CRC[-6] ^= 0xFF
LONG_QID = "q" + "z" * (10 << 20)
RUN_LONG_QID = RUN.replace("q1 ", LONG_QID + " ")
QRELS_LONG_QID = QRELS.replace("q1 ", LONG_QID + " ")
BIG = "1" * 400
GRADES_FRACTIONAL = QRELS.replace("q1 0 d2 2", "q1 0 d2 2.7").replace("q2 0 d8 3", "q2 0 d8 -0.5")
BEIR = "query-id\tcorpus-id\tscore\n" + "".join(
    "\t".join(line.split()[i] for i in (0, 2, 3)) + "\n" for line in QRELS.splitlines())
EXTRA = RUN.replace(" tag\n", " tag extra 1 2\n")
RUN_FIELDS = "qid Q0 docid rank score tag"
SHORT_LONG_ID = f"q1 Q0 {LONG_ID} 1 2 tag\nq1 Q0 d1 2 1 tag\n"
JSONL_RUN = "".join(
    json.dumps({"query_id": q, "retrieved": docs}) + "\n"
    for q, docs in _dicts(QRELS, RUN)[1].items()).encode()
NOREL_QRELS = "q1 0 a 1\nq2 0 b 0\nq3 0 c 0\n"
NOREL_RUN = "q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\n"
JSONISH = RUN.replace("q1 ", "{q1} ").replace("q2 ", "[q2] ")
JSONISH_QRELS = QRELS.replace("q1 ", "{q1} ").replace("q2 ", "[q2] ")

#: A late line (after the 50 the delimiter is guessed from) whose white space is not the
#: file's: split on white space (trec_eval) it is ``d7 1 9 0.5``, doc d7 with score 9, and in
#: the tab-separated qrels ``q3 <TAB>...`` is query q3. The delimiter would read
#: ``d7<TAB>1`` and ``q3 ``.
_Q3_PADDING = "".join(f"q3 Q0 z{i} {i + 2} {0.2 - i / 1000:.3f} tag\n" for i in range(60))
LATE_TAB_RUN = (RUN.split("q3 ")[0] + "q3 Q0 d6 1 1.0 tag\n" + _Q3_PADDING
                + "q3 Q0 d7\t1 9 0.5 tag\n")
LATE_SPACE_QRELS = ("".join(f"q3\t0\tz{i}\t0\n" for i in range(60))
                    + QRELS.replace(" ", "\t").replace("q3\t0\td7", "q3 \t0\td7"))
LATE_SPACE_QRELS = "".join(sorted(LATE_SPACE_QRELS.splitlines(keepends=True),
                                  key=lambda line: line.startswith("q3 ")))  # odd line last

CASES = [
    # ---- legal odd inputs: pytrec_eval's numbers, with and without --stream --------------
    Case("bom-run", ["evaluate", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS, "r.txt": BOM + RUN_B}, exit=0, check=same_as_pytrec_eval()),
    Case("bom-run-stream", ["evaluate", "--stream", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS, "r.txt": BOM + RUN_B}, exit=0, check=same_as_pytrec_eval()),
    Case("bom-qrels-gz", ["evaluate", "q.txt.gz", "r.txt", *MEASURES],
         {"q.txt.gz": gzip.compress(BOM + QRELS_B), "r.txt": RUN}, exit=0,
         check=same_as_pytrec_eval()),
    Case("bom-run-gz-stream", ["evaluate", "--stream", "q.txt", "r.txt.gz", *MEASURES],
         {"q.txt": QRELS, "r.txt.gz": gzip.compress(BOM + RUN_B)}, exit=0,
         check=same_as_pytrec_eval()),
    Case("bom-beir-qrels", ["evaluate", "q.tsv", "r.txt", *MEASURES],
         {"q.tsv": BOM + BEIR.encode(), "r.txt": RUN}, exit=0, check=same_as_pytrec_eval()),
    Case("stdin-run", ["evaluate", "q.txt", "-", *MEASURES], {"q.txt": QRELS}, stdin=RUN_B,
         exit=0, check=same_as_pytrec_eval()),
    Case("stdin-run-stream", ["evaluate", "--stream", "q.txt", "-", *MEASURES],
         {"q.txt": QRELS}, stdin=RUN_B, exit=0, check=same_as_pytrec_eval()),
    Case("stdin-gz-run-stream", ["evaluate", "--stream", "q.txt", "-", *MEASURES],
         {"q.txt": QRELS}, stdin=gzip.compress(BOM + RUN_B), exit=0,
         check=same_as_pytrec_eval()),
    Case("stdin-gz-qrels", ["evaluate", "-", "r.txt", *MEASURES], {"r.txt": RUN},
         stdin=gzip.compress(QRELS_B), exit=0, check=same_as_pytrec_eval()),
    Case("stdin-large-run", ["evaluate", "q.txt", "-", *MEASURES],  # > 64 KiB: none eaten
         {"q.txt": QRELS}, stdin=("# padding\n" * 8000).encode() + RUN_B, exit=0,
         check=same_as_pytrec_eval()),
    Case("fifo-run", ["evaluate", "q.txt", "r.fifo", *MEASURES], {"q.txt": QRELS},
         setup=fifo("r.fifo", ("# padding\n" * 8000).encode() + RUN_B), exit=0,
         check=same_as_pytrec_eval()),
    Case("fifo-run-stream", ["evaluate", "--stream", "q.txt", "r.fifo", *MEASURES],
         {"q.txt": QRELS}, setup=fifo("r.fifo", RUN_B), exit=0, check=same_as_pytrec_eval()),
    Case("fifo-gz-run-stream", ["evaluate", "--stream", "q.txt", "r.fifo", *MEASURES],
         {"q.txt": QRELS}, setup=fifo("r.fifo", gzip.compress(RUN_B)), exit=0,
         check=same_as_pytrec_eval()),
    Case("fifo-qrels", ["evaluate", "q.fifo", "r.txt", *MEASURES], {"r.txt": RUN},
         setup=fifo("q.fifo", gzip.compress(QRELS_B)), exit=0, check=same_as_pytrec_eval()),
    Case("tab-trec-qid-like-ids", ["evaluate", "q.txt", "r.txt", *MEASURES],
         {"q.txt": _tab_qid(QRELS), "r.txt": _tab_qid(RUN)}, exit=0,
         check=same_as_pytrec_eval(_tab_qid(QRELS), _tab_qid(RUN))),
    Case("tab-trec-qid-like-ids-stream", ["evaluate", "--stream", "q.txt", "r.txt", *MEASURES],
         {"q.txt": _tab_qid(QRELS), "r.txt": _tab_qid(RUN)}, exit=0,
         check=same_as_pytrec_eval(_tab_qid(QRELS), _tab_qid(RUN))),
    Case("scores-plus-dot-exponent", ["evaluate", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS, "r.txt": ODD_SCORES}, exit=0,
         check=same_as_pytrec_eval(QRELS, ODD_SCORES)),
    Case("scores-plus-dot-exponent-stream", ["evaluate", "--stream", "q.txt", "r.txt",
                                             *MEASURES],
         {"q.txt": QRELS, "r.txt": ODD_SCORES}, exit=0,
         check=same_as_pytrec_eval(QRELS, ODD_SCORES)),
    Case("fields-after-tag-stream", ["evaluate", "--stream", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS, "r.txt": EXTRA}, exit=0, check=same_as_pytrec_eval(QRELS, EXTRA)),
    Case("fractional-grades-truncated", ["evaluate", "q.txt", "r.txt", *MEASURES],
         {"q.txt": GRADES_FRACTIONAL, "r.txt": RUN}, exit=0,
         check=same_as_pytrec_eval(GRADES_FRACTIONAL, RUN)),
    Case("10mb-id", ["evaluate", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS, "r.txt": RUN_LONG_ID}, exit=0,
         check=same_as_pytrec_eval(QRELS, RUN_LONG_ID)),
    Case("10mb-id-stream", ["evaluate", "--stream", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS, "r.txt": RUN_LONG_ID}, exit=0,
         check=same_as_pytrec_eval(QRELS, RUN_LONG_ID)),
    Case("10mb-id-short-run", ["evaluate", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS, "r.txt": SHORT_LONG_ID}, exit=0,
         check=same_as_pytrec_eval(QRELS, SHORT_LONG_ID)),
    Case("10mb-id-short-run-stream", ["evaluate", "--stream", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS, "r.txt": SHORT_LONG_ID}, exit=0,
         check=same_as_pytrec_eval(QRELS, SHORT_LONG_ID)),
    Case("10mb-query-id", ["evaluate", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS_LONG_QID, "r.txt": RUN_LONG_QID}, exit=0,
         check=same_as_pytrec_eval(QRELS_LONG_QID, RUN_LONG_QID)),
    Case("10mb-query-id-stream", ["evaluate", "--stream", "q.txt", "r.txt", *MEASURES],
         {"q.txt": QRELS_LONG_QID, "r.txt": RUN_LONG_QID}, exit=0,
         check=same_as_pytrec_eval(QRELS_LONG_QID, RUN_LONG_QID)),
    Case("json-like-trec-ids", ["evaluate", "q.txt", "r.txt", *MEASURES],
         {"q.txt": JSONISH_QRELS, "r.txt": JSONISH}, exit=0,
         check=same_as_pytrec_eval(JSONISH_QRELS, JSONISH)),
    Case("dev-stdin-run", ["evaluate", "q.txt", "/dev/stdin", *MEASURES], {"q.txt": QRELS},
         stdin=("# padding\n" * 8000).encode() + RUN_B, exit=0, check=same_as_pytrec_eval()),
    Case("dev-stdin-run-stream", ["evaluate", "--stream", "q.txt", "/dev/stdin", *MEASURES],
         {"q.txt": QRELS}, stdin=gzip.compress(RUN_B), exit=0, check=same_as_pytrec_eval()),
    Case("report-json-fifo-run", ["report", "q.txt", "r.fifo", "--json", "out.json",
                                  "--no-stats"],
         {"q.txt": QRELS}, setup=fifo("r.fifo", gzip.compress(RUN_B)), exit=0,
         check=lambda res: _report_has(res, "r.fifo")),
    Case("stdin-jsonl-run-bom", ["evaluate", "q.txt", "-", *MEASURES], {"q.txt": QRELS},
         stdin=BOM + JSONL_RUN, exit=0, check=same_as_pytrec_eval()),
    Case("report-json-queries-stdin", ["report", "q.txt", "r.txt", "--queries", "-",
                                       "--json", "out.json", "--no-stats"],
         {"q.txt": QRELS, "r.txt": RUN}, stdin=BOM + b"q1\tfirst query\nq2\tsecond\n",
         exit=0, check=lambda res: _report_has(res, "<stdin>")),
    Case("report-json-stdin-run", ["report", "q.txt", "-", "--json", "out.json", "--no-stats"],
         {"q.txt": QRELS}, stdin=BOM + RUN_B, exit=0,
         check=lambda res: _report_has(res, "<stdin>")),
    Case("late-other-white-space-line", ["evaluate", "q.txt", "r.txt", *MEASURES],
         {"q.txt": LATE_SPACE_QRELS, "r.txt": LATE_TAB_RUN}, exit=0,
         check=same_as_pytrec_eval(LATE_SPACE_QRELS, LATE_TAB_RUN)),
    Case("late-other-white-space-line-stream", ["evaluate", "--stream", "q.txt", "r.txt",
                                                *MEASURES],
         {"q.txt": LATE_SPACE_QRELS, "r.txt": LATE_TAB_RUN}, exit=0,
         check=same_as_pytrec_eval(LATE_SPACE_QRELS, LATE_TAB_RUN)),
    # ---- bad numbers: file and line, on the fast, exact and streaming paths ---------------
    Case("score-underscore", ["evaluate", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": _run_with("1_000")},
         stderr=r"^ragreport: error: r\.txt:2: score '1_000' is not a plain decimal number"),
    Case("score-underscore-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": _run_with("1_000")},
         stderr=r"^ragreport: error: r\.txt:2: score '1_000' is not a plain decimal number"),
    Case("score-hex-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": _run_with("0x10")},
         stderr=r"r\.txt:2: score '0x10' is not a number"),
    Case("score-nan", ["evaluate", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": _run_with("nan")},
         stderr=r"r\.txt:2: score 'nan' is not a finite number"),
    Case("score-inf-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": _run_with("-Infinity")},
         stderr=r"r\.txt:2: score '-Infinity' is not a finite number"),
    Case("score-1e400", ["evaluate", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": _run_with("1e400")},
         stderr=r"r\.txt:2: score '1e400' is not a finite number \(too large"),
    Case("score-400-digits-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": _run_with(BIG)},
         stderr=r"r\.txt:2: score '1111.*\(400 characters\) is not a finite number"),
    # a number longer than Python converts, in the JSONL texts: input errors naming the line
    Case("docs-jsonl-5000-digit-number", ["report", "q.txt", "r.txt", "--docs", "d.jsonl",
                                          "--no-stats", "--markdown", "o.md"],
         {"q.txt": QRELS, "r.txt": RUN,
          "d.jsonl": '{"doc_id": "d1", "text": "a"}\n{"doc_id": "d2", "text": '
                     + "1" * 5000 + '}\n'},
         stderr=r"d\.jsonl:2: invalid JSON: a number of more digits than Python reads "
                r"\(4300\)"),
    Case("queries-jsonl-5000-digit-id", ["report", "q.txt", "r.txt", "--queries", "t.jsonl",
                                         "--no-stats", "--markdown", "o.md"],
         {"q.txt": QRELS, "r.txt": RUN,
          "t.jsonl": '{"query_id": ' + "9" * 5000 + ', "text": "a"}\n'},
         stderr=r"t\.jsonl:1: invalid JSON: a number of more digits than Python reads"),
    Case("docs-jsonl-nested-deep", ["report", "q.txt", "r.txt", "--docs", "d.jsonl",
                                    "--no-stats", "--markdown", "o.md"],
         {"q.txt": QRELS, "r.txt": RUN,
          "d.jsonl": '{"doc_id": "d1", "text": ' + "[" * 100000 + "]" * 100000 + '}\n'},
         stderr=r"d\.jsonl:1: invalid JSON: nested too deeply"),
    # one JSONL loop for texts, doc maps and slices (io.common.jsonl_objects): one message
    Case("queries-jsonl-array-line", ["report", "q.txt", "r.txt", "--queries", "t.jsonl",
                                      "--no-stats", "--markdown", "o.md"],
         {"q.txt": QRELS, "r.txt": RUN,
          "t.jsonl": '{"query_id": "q1", "text": "a"}\n["q2", "b"]\n'},
         stderr=r"t\.jsonl:2: expected a JSON object, got list$"),
    Case("score-bad-stdin", ["evaluate", "q.txt", "-"], {"q.txt": QRELS},
         stdin=_run_with("x1").encode(), stderr=r"<stdin>:2: score 'x1' is not a number"),
    Case("score-bad-stdin-stream", ["evaluate", "--stream", "q.txt", "-"], {"q.txt": QRELS},
         stdin=gzip.compress(_run_with("x1").encode()),
         stderr=r"<stdin>:2: score 'x1' is not a number"),
    Case("score-bad-fifo", ["evaluate", "q.txt", "r.fifo"], {"q.txt": QRELS},
         setup=fifo("r.fifo", _run_with("1_0").encode()),
         stderr=r"r\.fifo:2: score '1_0' is not a plain decimal number"),
    Case("grade-exponent", ["evaluate", "q.txt", "r.txt"],
         {"q.txt": _qrels_with("1e3"), "r.txt": RUN},
         stderr=r"q\.txt:2: grade '1e3' is in exponent notation"),
    Case("grade-exponent-fractional-ok", ["evaluate", "q.txt", "r.txt", "--fractional-grades",
                                          *MEASURES],
         {"q.txt": _qrels_with("2e0"), "r.txt": RUN}, exit=0, check=same_as_pytrec_eval()),
    Case("grade-2-53", ["evaluate", "q.txt", "r.txt"],
         {"q.txt": _qrels_with(str(2**53)), "r.txt": RUN},
         stderr=r"q\.txt:2: grade '9007199254740992' is too large"),
    Case("grade-nan-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": _qrels_with("NaN"), "r.txt": RUN},
         stderr=r"q\.txt:2: grade 'NaN' is not a finite number"),
    Case("beir-grade-underscore", ["evaluate", "q.tsv", "r.txt"],
         {"q.tsv": BEIR.replace("\t2\n", "\t1_0\n"), "r.txt": RUN},
         stderr=r"q\.tsv:3: grade '1_0' is not a plain decimal number"),
    Case("report-json-grade-hex", ["report", "q.txt", "r.txt", "--json", "out.json"],
         {"q.txt": _qrels_with("0x1"), "r.txt": RUN, "out.json": "{}\n"},
         stderr=r"q\.txt:2: grade '0x1' is not a number"),
    Case("report-json-score-inf", ["report", "q.txt", "r.txt", "--json", "out.json"],
         {"q.txt": QRELS, "r.txt": _run_with("inf"), "out.json": "{}\n"},
         stderr=r"r\.txt:2: score 'inf' is not a finite number"),
    # ---- broken files: the same line with and without --stream ----------------------------
    Case("invalid-utf8", ["evaluate", "q.txt", "r.txt"], {"q.txt": QRELS, "r.txt": BAD_UTF8},
         stderr=r"r\.txt:3: not valid UTF-8 text \(invalid start byte at column 8\)$"),
    Case("invalid-utf8-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": BAD_UTF8},
         stderr=r"r\.txt:3: not valid UTF-8 text \(invalid start byte at column 8\)$"),
    Case("binary-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": NUL}, stderr=r"r\.txt:3: not a text file"),
    Case("truncated-gzip", ["evaluate", "q.txt", "r.txt.gz"],
         {"q.txt": QRELS, "r.txt.gz": TRUNCATED_GZ},
         stderr=r"^ragreport: error: r\.txt\.gz: corrupt gzip data \(Compressed file ended"),
    Case("truncated-gzip-stream", ["evaluate", "--stream", "q.txt", "r.txt.gz"],
         {"q.txt": QRELS, "r.txt.gz": TRUNCATED_GZ},
         stderr=r"^ragreport: error: r\.txt\.gz: corrupt gzip data \(Compressed file ended"),
    Case("bad-crc-gzip", ["evaluate", "q.txt", "r.txt.gz"],
         {"q.txt": QRELS, "r.txt.gz": bytes(BAD_CRC)},
         stderr=r"^ragreport: error: r\.txt\.gz: corrupt gzip data \(CRC check failed\)$"),
    Case("bad-crc-gzip-stream", ["evaluate", "--stream", "q.txt", "r.txt.gz"],
         {"q.txt": QRELS, "r.txt.gz": bytes(BAD_CRC)},
         stderr=r"^ragreport: error: r\.txt\.gz: corrupt gzip data \(CRC check failed\)$"),
    Case("gzip-trailing-garbage-stream", ["evaluate", "--stream", "q.txt", "r.txt.gz"],
         {"q.txt": QRELS, "r.txt.gz": gzip.compress(RUN_B) + b"garbage"},
         stderr=r"^ragreport: error: r\.txt\.gz: corrupt gzip data \(Not a gzipped file"),
    Case("directory-run-stream", ["evaluate", "--stream", "q.txt", "adir"],
         {"q.txt": QRELS, "adir/x": "x"},
         stderr=r"^ragreport: error: adir: is a directory, not a file$"),
    Case("corrupt-gzip-stdin-stream", ["evaluate", "--stream", "q.txt", "-"],
         {"q.txt": QRELS}, stdin=b"\x1f\x8b\x08\x00garbage-garbage-garbage",
         stderr=r"^ragreport: error: <stdin>: corrupt gzip data"),
    Case("too-few-fields-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": RUN + "q3 Q0 d9 3 0.1\n"},
         stderr=rf"r\.txt:9: expected 6 fields \({RUN_FIELDS}\), got 5"),
    Case("duplicate-in-unjudged-query-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": RUN + "q9 Q0 d1 1 1 tag\nq9 Q0 d1 2 0.5 tag\n"},
         stderr=r"r\.txt:10: document 'd1' appears twice for query 'q9' \(first at line 9\)"),
    Case("duplicate-in-unjudged-query", ["evaluate", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": RUN + "q9 Q0 d1 1 1 tag\nq9 Q0 d1 2 0.5 tag\n"},
         stderr=r"r\.txt:10: document 'd1' appears twice for query 'q9' \(first at line 9\)"),
    Case("empty-stdin", ["evaluate", "q.txt", "-"], {"q.txt": QRELS},
         stderr=r"^ragreport: error: <stdin>: the file is empty"),
    Case("empty-stdin-stream", ["evaluate", "--stream", "q.txt", "-"], {"q.txt": QRELS},
         stdin=b"\n\n# only a comment\n", stderr=r"^ragreport: error: <stdin>: the file is empty"),
    Case("missing-run-stream", ["evaluate", "--stream", "q.txt", "nope.txt"], {"q.txt": QRELS},
         stderr=r"^ragreport: error: nope\.txt: no such file"),
    Case("bom-then-bad-line-stream", ["evaluate", "--stream", "q.txt", "r.txt"],
         {"q.txt": QRELS, "r.txt": BOM + _run_with("--1").encode()},
         stderr=r"r\.txt:2: score '--1' is not a number"),
    # ---- queries without a relevant document: --stream follows evaluate's conventions ----
    # (q1 relevant and retrieved; q2 retrieved, q3 qrels-only: no relevant document)
    Case("complete-skip-no-relevant-stream",
         ["evaluate", "--stream", "-c", "--no-relevant", "skip", "q.txt", "r.txt", "-m", "P@1"],
         {"q.txt": NOREL_QRELS, "r.txt": NOREL_RUN}, exit=0,
         stdout=r"^P@1  1\.0000\nqueries evaluated: 1; .*qrels only: 1; no relevant: 0; "
                r"empty retrievals: 0; .*skipped no relevant: 2;"),
    Case("complete-raise-no-relevant-stream",
         ["evaluate", "--stream", "-c", "--no-relevant", "raise", "q.txt", "r.txt"],
         {"q.txt": NOREL_QRELS, "r.txt": NOREL_RUN},
         stderr=r"^ragreport: error: q\.txt: 2 evaluated queries have no relevant document "
                r"\(grade >= 1\), e\.g\. 'q2', 'q3'$"),
    Case("skip-every-common-query-stream",
         ["evaluate", "--stream", "--no-relevant", "skip", "q.txt", "r.txt"],
         {"q.txt": NOREL_QRELS, "r.txt": "q2 Q0 b 1 1 t\n"},
         stderr=r"^ragreport: error: no query left to evaluate \(every common query has no "
                r"relevant document and no_relevant='skip'\)$"),
]


def _report_has(result: CaseResult, name: str) -> None:
    data = json.loads((result.tmp / "out.json").read_text())
    assert name in json.dumps(data["inputs"])


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)
