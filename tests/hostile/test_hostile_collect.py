"""Hostile-input catalogue: a run's per-query latency (``latency_ms`` in a JSONL run, as
:func:`ragreport.collect_run` writes it) through the command line (issue 15), and
``collect_run``'s resume file (issue 23).

A valid latency reaches the report (terminal table, JSON ``latency``) and changes no measure;
a latency that is not a finite number of milliseconds >= 0 is an error naming the file, the
line and the query.

``collect_run`` is not reachable from the command line, so its resume file is tried through
the API (``RESUME_CASES``), with the harness's guarantees: a refusal is one
:class:`~ragreport.errors.InputError` line naming the file, saying what was found and how to
proceed; the retriever is never called; every file in the folder is byte-for-byte unchanged
and none is added. A file is repaired (its unfinished last line cut) only once it is proven to
be this run's resume file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hostile import QRELS as TREC_QRELS
from hostile import RUN as TREC_RUN
from hostile import Case, CaseResult, run_case

import ragreport
from ragreport import Run, collect_run
from ragreport.errors import InputError

QRELS = "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\nq3 0 d7 1\n"
RECORDS = [
    {"query_id": "q1", "query": "first", "latency_ms": 10.0,
     "retrieved": [{"doc_id": "d1", "score": 3.0}, {"doc_id": "d9", "score": 1.0}]},
    {"query_id": "q2", "query": "second", "latency_ms": 30.0, "retrieved": ["d5", "d3"]},
    {"query_id": "q3", "query": "third", "latency_ms": 20.0, "retrieved": []},
]
PLAIN = "q1 Q0 d1 1 3.0 t\nq1 Q0 d9 2 1.0 t\nq2 Q0 d5 1 2.0 t\nq2 Q0 d3 2 1.0 t\n"


def jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def with_latency(i: int, value: Any) -> str:
    """RECORDS with query ``i``'s latency_ms replaced by ``value`` (written as JSON text)."""
    lines = jsonl(RECORDS).splitlines()
    rec = json.loads(lines[i])
    rec["latency_ms"] = "@@"
    lines[i] = json.dumps(rec).replace('"@@"', value)
    return "\n".join(lines) + "\n"


def report_json_has(run: str, queries: int, p50: float, mx: float,
                    others: tuple[str, ...] = ()) -> Callable[[CaseResult], None]:
    def check(res: CaseResult) -> None:
        doc = json.loads((res.tmp / "out.json").read_text("utf-8"))
        lat = doc["latency"]
        assert set(lat) == {run}, lat
        assert lat[run]["queries"] == queries
        assert lat[run]["p50_ms"] == p50 and lat[run]["max_ms"] == mx
        for name in others:
            assert name not in lat
        assert "Latency per query (ms)" in res.stdout
    return check


def same_numbers(res: CaseResult) -> None:
    # AP: q1 1/2 (d1 at 1, d2 never), q2 1/2 (d3 at 2), q3 0 (nothing retrieved): map 1/3
    got = res.stdout.splitlines()
    assert any(line.split() == ["map", "all", "0.3333"] for line in got), res.stdout
    assert any(line.split() == ["num_q", "all", "3"] for line in got), res.stdout


CASES = [
    Case("latency-in-report", ["report", "q.txt", "live.jsonl", "plain.txt", "--no-stats",
                               "--json", "out.json", "--html", "out.html"],
         {"q.txt": QRELS, "live.jsonl": jsonl(RECORDS), "plain.txt": PLAIN}, exit=0,
         check=report_json_has("live", 3, 20.0, 30.0, ("plain",))),
    Case("latency-some-queries-only", ["report", "q.txt", "live.jsonl", "--no-stats", "--json",
                                       "out.json"],
         {"q.txt": QRELS, "live.jsonl": jsonl([RECORDS[0], {**RECORDS[1], "latency_ms": 4},
                                               {k: v for k, v in RECORDS[2].items()
                                                if k != "latency_ms"}])}, exit=0,
         check=report_json_has("live", 2, 7.0, 10.0)),
    Case("latency-zero", ["report", "q.txt", "live.jsonl", "--no-stats", "--json", "out.json"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, "0")}, exit=0,
         check=report_json_has("live", 3, 20.0, 30.0)),
    Case("latency-changes-no-measure", ["evaluate", "--format", "trec", "-m", "map", "q.txt",
                                        "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": jsonl(RECORDS)}, exit=0, check=same_numbers),
    Case("latency-negative", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(1, "-1")},
         stderr=r"^ragreport: error: live\.jsonl:2: latency_ms -1 of query 'q2' is negative$"),
    Case("latency-nan-text", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, '"nan"')},
         stderr=r"live\.jsonl:1: latency_ms 'nan' of query 'q1' is not a finite number"),
    Case("latency-nan-literal", ["check", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, "NaN")},
         stderr=r"live\.jsonl:1: latency_ms nan of query 'q1' is not a finite number"),
    Case("latency-overflow", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(2, "1e400")},
         stderr=r"live\.jsonl:3: latency_ms inf of query 'q3' is not a finite number"),
    Case("latency-bool", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, "true")},
         stderr=r"live\.jsonl:1: latency_ms True of query 'q1' is not a number \(a boolean\)"),
    Case("latency-null", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, "null")},
         stderr=r"live\.jsonl:1: latency_ms None of query 'q1' is not a number"),
    Case("latency-list", ["evaluate", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(1, "[1, 2]")},
         stderr=r"live\.jsonl:2: latency_ms \[1, 2\] of query 'q2' is not a number"),
    Case("latency-underscore-text", ["report", "q.txt", "live.jsonl"],
         {"q.txt": QRELS, "live.jsonl": with_latency(0, '"1_000"')},
         stderr=r"live\.jsonl:1: latency_ms '1_000' of query 'q1' is not a plain decimal"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)


# ---- collect_run's resume file (API: collect_run has no command) -------------------------------

INDEX = {"d1": "cats purr", "d2": "dogs bark", "d3": "cats and dogs", "d4": "birds sing"}
QUERIES = {"q1": "cats purr", "q2": "dogs bark", "q3": "birds sing"}


def ranked(text: str) -> list[dict[str, Any]]:
    """Shared words, best first; each result has its id twice (``doc_id`` and ``alt``)."""
    words = set(text.split())
    hits = {d: len(words & set(t.split())) for d, t in INDEX.items()}
    return [{"doc_id": d, "alt": d.upper(), "score": float(s)}
            for d, s in sorted(hits.items(), key=lambda x: (-x[1], x[0])) if s]


def collected(name: str = "search", *, tail: bytes = b"", queries: Mapping[str, str] = QUERIES,
              edit: Callable[[list[str]], list[str]] | None = None,
              **kwargs: Any) -> Callable[[Path], None]:
    """Setup: ``r.jsonl`` as collect_run writes it for run ``name`` (then lines edited and
    ``tail``, an unfinished line, appended)."""
    def setup(tmp: Path) -> None:
        path = tmp / "r.jsonl"
        collect_run(ranked, queries, name=name, resume=path, progress=False, **kwargs)
        if edit is not None:
            path.write_text("".join(line + "\n" for line in edit(path.read_text().splitlines())))
        with path.open("ab") as fh:
            fh.write(tail)
    return setup


def files(**named: bytes | str | None) -> Callable[[Path], None]:
    """Setup: files of these names and contents (None: a directory)."""
    def setup(tmp: Path) -> None:
        for name, data in named.items():
            target = tmp / name.replace("__", ".")
            if data is None:
                target.mkdir()
            else:
                target.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return setup


def written_run(tmp: Path) -> None:
    """Setup: this run's rankings, written by write_run (a run file: no resume identity)."""
    run = collect_run(ranked, QUERIES, name="search", progress=False)
    ragreport.write_run(run, tmp / "r.jsonl")


def old_resume_file(tmp: Path) -> None:
    """Setup: the lines collect_run wrote before a resume file stated its settings."""
    lines = [json.dumps({"query_id": q, "query": t, "run": "search", "latency_ms": 1.0,
                         "retrieved": [{"doc_id": r["doc_id"], "score": r["score"]}
                                       for r in ranked(t)]}) for q, t in QUERIES.items()]
    (tmp / "r.jsonl").write_text("\n".join(lines) + "\n")


def old_resume_file_unfinished(tmp: Path) -> None:
    """Setup: :func:`old_resume_file`, its write of a last line cut short."""
    old_resume_file(tmp)
    with (tmp / "r.jsonl").open("ab") as fh:
        fh.write(UNFINISHED)


def header_line(tmp: Path) -> str:
    """The first line collect_run writes for run ``search`` (read from a fresh file)."""
    probe = tmp / "probe" / "p.jsonl"
    probe.parent.mkdir()
    collect_run(ranked, {"q1": "cats purr"}, name="search", resume=probe, progress=False)
    first = probe.read_text().split("\n", 1)[0]
    probe.unlink()
    probe.parent.rmdir()
    return first


def header_then(*lines: str, tail: bytes = b"") -> Callable[[Path], None]:
    """Setup: this run's header, then ``lines``, then ``tail``."""
    def setup(tmp: Path) -> None:
        text = header_line(tmp) + "\n" + "".join(line + "\n" for line in lines)
        (tmp / "r.jsonl").write_bytes(text.encode() + tail)
    return setup


def record(qid: str, text: str, docs: list[str], run: str | None = "search") -> str:
    rec: dict[str, Any] = {"query_id": qid, "query": text}
    if run is not None:
        rec["run"] = run
    rec["retrieved"] = [{"doc_id": d, "score": float(len(docs) - i)} for i, d in
                        enumerate(docs)]
    return json.dumps(rec)


def resumed(called: list[str], *, rows: int | None = None) -> Callable[[Path, Run, list[str]],
                                                                       None]:
    """Check: the retriever was called on exactly ``called``; the run is the fresh one; the
    file now resumes with no call at all and reads back as this run."""
    def check(tmp: Path, run: Run, calls: list[str]) -> None:
        assert calls == [QUERIES[q] for q in called], calls
        fresh = collect_run(ranked, QUERIES, name="search", progress=False)
        assert run.doc_ids.to_pylist() == fresh.doc_ids.to_pylist()
        assert run.scores.tolist() == fresh.scores.tolist()
        path = tmp / "r.jsonl"
        again: list[str] = []
        assert collect_run(lambda t: again.append(t) or ranked(t), QUERIES, name="search",
                           resume=path, progress=False).doc_ids.to_pylist() == \
            fresh.doc_ids.to_pylist()
        assert again == []
        loaded = ragreport.load_run(path)
        assert loaded.doc_ids.to_pylist() == fresh.doc_ids.to_pylist()
        assert path.read_bytes().endswith(b"\n")
        # the file now states its settings: another k is refused, nothing changed
        before = path.read_bytes()
        with pytest.raises(InputError, match=r"collected with k=None \(every result\), not k=1"):
            collect_run(ranked, QUERIES, name="search", resume=path, k=1, progress=False)
        assert path.read_bytes() == before
    return check


@dataclass(frozen=True)
class ResumeCase:
    """One row: ``setup`` makes the folder's files; ``collect_run(search, QUERIES,
    resume=<folder>/resume, **kwargs)`` then raises an InputError whose message matches
    ``error``, or (``error`` None) returns a run that ``check`` looks at."""

    id: str
    setup: Callable[[Path], None]
    error: str | None = None
    resume: str = "r.jsonl"
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    check: Callable[[Path, Run, list[str]], None] | None = None


NOT_RESUME = r"not a resume file of collect_run: "
UNFINISHED = b'{"query_id": "q3", "query": "birds sing", "retr'

RESUME_CASES = [
    # another run's rankings
    ResumeCase("other-run", collected("keyword"),
               r"r\.jsonl:1: this resume file holds the run 'keyword', not 'search'"),
    ResumeCase("other-run-unfinished-line", collected("keyword", tail=UNFINISHED),
               r"r\.jsonl:1: this resume file holds the run 'keyword', not 'search'"),
    ResumeCase("other-run-in-a-line", header_then(record("q1", "cats purr", ["d1"], "keyword")),
               r"r\.jsonl:2: this line was collected for the run 'keyword', not 'search'"),
    # no identity
    ResumeCase("write-run-file", written_run,
               NOT_RESUME + r"its first line is a run record, not the header"),
    ResumeCase("old-resume-file", old_resume_file,
               NOT_RESUME + r"its first line is a run record, not the header"),
    ResumeCase("old-resume-file-unfinished-line", old_resume_file_unfinished,
               NOT_RESUME + r"its first line is a run record"),
    # other settings
    ResumeCase("other-k", collected(k=1), r"r\.jsonl:1: this resume file was collected with "
               r"k=1, not k=None \(every result\): resuming would mix two depths",),
    ResumeCase("other-k-given", collected(), r"collected with k=None \(every result\), "
               r"not k=2", kwargs={"k": 2}),
    ResumeCase("other-k-unfinished-line", collected(k=1, tail=UNFINISHED),
               r"collected with k=1, not k=2", kwargs={"k": 2}),
    ResumeCase("other-id-key", collected(id_key="alt"),
               r"r\.jsonl:1: this resume file was collected with id_key='alt', not "
               r"id_key=None"),
    ResumeCase("deeper-than-its-k", collected(k=1, edit=lambda lines: [
        lines[0], record("q1", "cats purr", ["d1", "d3"])]),
               r"r\.jsonl:2: query 'q1' has 2 results, more than the k=1", kwargs={"k": 1}),
    # not a resume file at all
    ResumeCase("user-text-file", files(r__jsonl="dear diary,\ntoday I mistyped a path\n"),
               NOT_RESUME + r"its first line is 'dear diary,'"),
    ResumeCase("user-text-file-unfinished-line",
               files(r__jsonl="dear diary,\ntoday I mistyped a path"),
               NOT_RESUME + r"its first line is 'dear diary,'"),
    ResumeCase("user-one-line-no-newline", files(r__jsonl="my only copy of this note"),
               NOT_RESUME + r"its first line is 'my only copy of this note'"),
    ResumeCase("user-json-document", files(r__jsonl='{"settings": {"a": 1}}'),
               NOT_RESUME + r"its first line is a JSON value, not the header"),
    ResumeCase("user-binary-file", files(r__jsonl=b"\x89PNG\r\x1a\x00\xff\xfe binary"),
               NOT_RESUME + "its first line is '\ufffdPNG\\\\r\\\\x1a\\\\x00\ufffd\ufffd binary'"),
    ResumeCase("user-comment-file", files(r__jsonl="# my notes\nkeep this\n"),
               NOT_RESUME + r"its first line is '# my notes'"),
    ResumeCase("qrels-file", files(r__jsonl=TREC_QRELS),
               NOT_RESUME + r"its first line is 'q1 0 d1 1'"),
    ResumeCase("qrels-file-unfinished-line", files(r__jsonl=TREC_QRELS.rstrip("\n")),
               NOT_RESUME + r"its first line is 'q1 0 d1 1'"),
    ResumeCase("qrels-file-as-txt", files(qrels__txt=TREC_QRELS), NOT_RESUME, "qrels.txt"),
    ResumeCase("trec-run-file", files(run__txt=TREC_RUN.rstrip("\n")),
               NOT_RESUME + r"its first line is 'q1 Q0 d1 1 3\.0 tag'", "run.txt"),
    ResumeCase("blank-lines-only", files(r__jsonl="\n\n"), NOT_RESUME + r"its first line is ''"),
    ResumeCase("a-directory", files(d=None), r"resume= names a directory", "d"),
    # a header, but not one collect_run writes
    ResumeCase("header-not-json", files(r__jsonl="# ragreport resume file {run: search}\n"),
               r"r\.jsonl:1: the resume file's header is not one collect_run writes"),
    ResumeCase("header-unknown-setting",
               files(r__jsonl='# ragreport resume file {"run": "search", "k": null, '
                              '"id_key": null, "depth": 3}\n'),
               r"r\.jsonl:1: the resume file's header is not one collect_run writes "
               r"\(unknown setting 'depth'\)"),
    ResumeCase("header-unfinished",
               files(r__jsonl='# ragreport resume file {"run": "search", "k": nu'),
               r"r\.jsonl:1: the resume file's header line is unfinished"),
    # this run's file, with a bad line: refused before anything is cut
    ResumeCase("broken-line-then-unfinished", header_then("not json", tail=UNFINISHED),
               r"r\.jsonl:2: invalid JSON.*the file is unchanged"),
    ResumeCase("other-text-then-unfinished",
               header_then(record("q1", "a cat", ["d1"]), tail=UNFINISHED),
               r"r\.jsonl:2: query 'q1' was collected with another text"),
    # this run's file: resumed (an empty file is a fresh start)
    ResumeCase("empty-file-fresh-start", files(r__jsonl=b""),
               check=resumed(["q1", "q2", "q3"])),
    ResumeCase("missing-file-fresh-start", lambda tmp: None, check=resumed(["q1", "q2", "q3"])),
    ResumeCase("header-only", header_then(), check=resumed(["q1", "q2", "q3"])),
    ResumeCase("own-file-unfinished-line",
               collected(queries={"q1": QUERIES["q1"], "q2": QUERIES["q2"]}, tail=UNFINISHED),
               check=resumed(["q3"])),
]


def _snapshot(tmp: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(tmp)): None if p.is_dir() else p.read_bytes()
            for p in sorted(tmp.rglob("*"))}


@pytest.mark.parametrize("case", RESUME_CASES, ids=[c.id for c in RESUME_CASES])
def test_hostile_resume(case: ResumeCase, tmp_path: Path) -> None:
    case.setup(tmp_path)
    before = _snapshot(tmp_path)
    calls: list[str] = []

    def search(text: str) -> list[dict[str, Any]]:
        calls.append(text)
        return ranked(text)

    path = tmp_path / case.resume
    if case.error is None:
        run = collect_run(search, QUERIES, resume=path, progress=False, **case.kwargs)
        assert case.check is not None
        case.check(tmp_path, run, calls)
        return
    with pytest.raises(InputError) as info:
        collect_run(search, QUERIES, resume=path, progress=False, **case.kwargs)
    message = str(info.value)
    assert re.search(case.error, message), message
    assert message.startswith(str(path)), message  # names the file
    assert "\n" not in message and "Traceback" not in message
    assert re.search(r"another resume= path", message), message  # says how to proceed
    assert calls == []  # refused before any call
    assert _snapshot(tmp_path) == before  # byte for byte, and no file added
