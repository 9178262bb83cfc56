"""New judgments back into the qrels: read what people (or a model) judged, merge it with the
existing judgments under its source, write qrels that keep every source.

:func:`read_labels` reads a judged label queue (:mod:`ragreport.report.labelqueue`: its JSONL
or CSV with a ``grade`` filled in, rows left blank are not judged yet) or Label Studio's JSON
export. :func:`merge_judgments` adds them to the qrels, each under its source: nothing is
replaced, every judgment stays (:attr:`ragreport.Qrels.judgments`) and the stated rule
(:mod:`.judgments`) chooses the grade used; a new judgment whose grade differs from the one
used today is a conflict, refused unless asked to keep both. :func:`write_qrels` writes
qrels with their sources (BEIR-style TSV with a ``source`` column, JSONL or Parquet).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..data import Qrels
from ..errors import InputError, RagReportError
from ..fileio import write_outputs
from .columns import contiguous
from .judgments import HUMAN, check_rule, check_source, resolve

__all__ = ["CONFLICT_RULES", "Conflict", "Merged", "merge_judgments", "read_labels",
           "write_qrels"]

#: What a new judgment that disagrees with the grade used today does.
CONFLICT_RULES = ("error", "keep")


@dataclass(frozen=True)
class Conflict:
    """A new judgment whose grade differs from the one used for that pair today."""

    query_id: str
    doc_id: str
    used: float
    used_source: str
    new: float
    new_source: str

    @property
    def text(self) -> str:
        return (f"query {self.query_id!r}, document {self.doc_id!r}: {self.new_source} says "
                f"{self.new:g}, {self.used_source} said {self.used:g}")


@dataclass(frozen=True)
class Merged:
    """The merged qrels, how many judgments were added (those already there, same pair,
    grade and source, are not added again) and the conflicts kept."""

    qrels: Qrels
    added: int
    conflicts: list[Conflict]


def read_labels(path: str | os.PathLike[str], *, source: str = HUMAN,
                fractional_grades: bool = False) -> Qrels:
    """Judgments from a judged label queue (JSONL or CSV rows with ``query_id``, ``doc_id``
    and ``grade``; a row without a grade is skipped; a ``source`` column, when there is one,
    wins over ``source``) or a Label Studio JSON export (each task's latest annotation:
    ``choices``, ``rating`` or ``number``), every judgment labelled with its source."""
    import pyarrow as pa

    problem = check_source(source)
    if problem is not None:
        raise RagReportError(f"bad source: {problem}")
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".csv":
        from pyarrow import csv

        try:
            table = csv.read_csv(p, convert_options=csv.ConvertOptions(
                strings_can_be_null=True, column_types={"query_id": pa.string(),
                                                        "doc_id": pa.string()}))
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"cannot read the CSV: {exc}", str(p)) from None
    elif suffix == ".json":
        table = _label_studio(p)
    else:
        table = _jsonl_rows(p)
    return _labels_table(table, str(p), source, fractional_grades)


def read_text(p: Path) -> str:
    """The UTF-8 text of a labels file; a file that cannot be read, or is not UTF-8, is an
    InputError naming it (and the line of the first bad byte)."""
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", str(p)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 text ({exc.reason})", str(p),
                         data.count(b"\n", 0, exc.start) + 1) from None


def _jsonl_rows(p: Path) -> Any:
    import pyarrow as pa

    rows = []
    for no, line in enumerate(read_text(p).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON ({exc.msg})", str(p), no) from None
        if not isinstance(row, dict):
            raise InputError(f"expected an object per line, got {type(row).__name__}",
                             str(p), no)
        rows.append({k: row.get(k) for k in ("query_id", "doc_id", "grade", "source")})
    return pa.Table.from_pylist(rows, schema=pa.schema(
        [("query_id", pa.string()), ("doc_id", pa.string()), ("grade", pa.float64()),
         ("source", pa.string())])) if rows else None


def _label_studio(p: Path) -> Any:
    """The tasks of a Label Studio JSON export as rows (query_id, doc_id, grade)."""
    import pyarrow as pa

    try:
        tasks = json.loads(read_text(p))
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg})", str(p), exc.lineno) from None
    if not isinstance(tasks, list):
        raise InputError("expected Label Studio's export: a JSON list of tasks", str(p))
    rows = []
    for i, task in enumerate(tasks):
        data = task.get("data") if isinstance(task, dict) else None
        if not isinstance(data, dict) or "query_id" not in data or "doc_id" not in data:
            raise InputError(f"task {i} has no data.query_id and data.doc_id", str(p))
        done = [a for a in task.get("annotations") or [] if isinstance(a, dict)
                and not a.get("was_cancelled")]
        grade = _annotation_grade(done[-1], i, str(p)) if done else None
        rows.append({"query_id": str(data["query_id"]), "doc_id": str(data["doc_id"]),
                     "grade": grade})
    return pa.Table.from_pylist(rows, schema=pa.schema(
        [("query_id", pa.string()), ("doc_id", pa.string()), ("grade", pa.float64())])) \
        if rows else None


def _annotation_grade(annotation: Mapping[str, Any], i: int, source: str) -> float | None:
    for result in annotation.get("result") or []:
        value = result.get("value", {}) if isinstance(result, dict) else {}
        raw = (value.get("choices") or [None])[0] if "choices" in value \
            else value.get("rating", value.get("number"))
        if raw is None:
            continue
        try:
            grade = float(raw)
        except (TypeError, ValueError):
            raise InputError(f"task {i}: the grade {raw!r} is not a number", source) from None
        if not np.isfinite(grade):
            raise InputError(f"task {i}: the grade {raw!r} is not finite", source)
        return grade
    return None


def _labels_table(table: Any, shown: str, source: str, fractional: bool) -> Qrels:
    import pyarrow as pa
    import pyarrow.compute as pc

    from .tabular import qrels_table

    if table is None or table.num_rows == 0:
        raise InputError("no judgments found", shown)
    names = [n.lower() for n in table.column_names]
    if "grade" not in names:
        raise InputError(f"no grade column (columns: {', '.join(table.column_names)}): fill "
                         "in a grade for each pair judged", shown)
    grade = table.column(names.index("grade"))
    if pa.types.is_string(grade.type) or pa.types.is_large_string(grade.type):
        grade = pc.if_else(pc.equal(pc.utf8_trim_whitespace(grade), ""), None, grade)
    table = table.set_column(names.index("grade"), "grade", grade)
    table = table.filter(pc.is_valid(table.column("grade")))
    if table.num_rows == 0:
        raise InputError("no pair has a grade yet", shown)
    if "source" not in names:
        table = table.append_column("source", pa.array([source] * table.num_rows))
    else:
        col = table.column(names.index("source"))
        table = table.set_column(names.index("source"), "source",
                                 pc.fill_null(col.cast(pa.string()), source))
    keep = [n for n in table.column_names if n.lower() in ("query_id", "doc_id", "grade",
                                                             "source")]
    return qrels_table(table.select(keep), source=shown,
                       columns={"qid": "query_id", "docid": "doc_id", "relevance": "grade"},
                       fractional=fractional, rule="latest")


def merge_judgments(qrels: Qrels, new: Qrels, *, existing_source: str = "qrels",
                    rule: str = "human-first", on_conflict: str = "error") -> Merged:
    """``qrels`` with every judgment of ``new`` added under its source (``new.sources``;
    qrels without sources count as ``existing_source``). Nothing is replaced: the merged
    qrels keep every judgment and ``rule`` chooses the grade used. A new judgment whose
    grade differs from the one used today is a conflict: an error naming it
    (``on_conflict="error"``, the default) or kept (``"keep"``: the rule decides).
    """
    import pyarrow as pa

    check_rule(rule)
    if on_conflict not in CONFLICT_RULES:
        raise RagReportError(f"on_conflict must be one of {', '.join(CONFLICT_RULES)}, got "
                             f"{on_conflict!r}")
    problem = check_source(existing_source)
    if problem is not None:
        raise RagReportError(f"bad existing source: {problem}")
    old = qrels.judgments if qrels.judgments is not None else qrels
    old_sources = old.sources if old.sources is not None \
        else pa.array([existing_source] * len(old), pa.string())
    added = new.judgments if new.judgments is not None else new
    if added.sources is None:
        raise RagReportError("the new judgments have no source")
    added = _not_present(added, old, old_sources)
    conflicts = _conflicts(qrels, existing_source, added)
    if conflicts and on_conflict == "error":
        more = f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
        raise RagReportError(f"a new judgment disagrees with the one used today: "
                             f"{conflicts[0].text}{more}; keep both (on_conflict='keep', "
                             f"--on-conflict keep) to let the rule ({rule}) decide")
    rows = Qrels(pa.concat_arrays([_arr(old.query_ids), _arr(added.query_ids)]),
                 pa.concat_arrays([_arr(old.doc_ids), _arr(added.doc_ids)]),
                 qrels.source, None, np.concatenate([old.grades, added.grades]))
    merged = resolve(rows, pa.concat_arrays([_arr(old_sources), _arr(added.sources)]), rule)
    return Merged(merged, len(added), conflicts)


def _not_present(new: Qrels, old: Qrels, old_sources: Any) -> Qrels:
    """``new`` without the judgments ``old`` already holds (same pair, grade and source):
    merging the same labels twice adds nothing."""
    import pyarrow as pa

    have = set(zip(old.query_ids.to_pylist(), old.doc_ids.to_pylist(), old.grades.tolist(),
                   old_sources.to_pylist(), strict=True))
    keep = np.array([k not in have for k in zip(
        new.query_ids.to_pylist(), new.doc_ids.to_pylist(), new.grades.tolist(),
        new.sources.to_pylist(), strict=True)], dtype=bool)
    if keep.all():
        return new
    take = pa.array(np.flatnonzero(keep))
    return Qrels(new.query_ids.take(take), new.doc_ids.take(take), new.source, None,
                 new.grades[keep], sources=new.sources.take(take))


def _arr(values: Any) -> Any:
    """One pyarrow string array."""
    import pyarrow as pa

    return contiguous(values).cast(pa.string())


def _conflicts(qrels: Qrels, existing_source: str, new: Qrels) -> list[Conflict]:
    """New judgments whose grade differs from the grade ``qrels`` use for the pair."""
    used = {(q, d): (g, s) for q, d, g, s in zip(
        qrels.query_ids.to_pylist(), qrels.doc_ids.to_pylist(), qrels.grades.tolist(),
        qrels.sources.to_pylist() if qrels.sources is not None
        else [existing_source] * len(qrels), strict=True)}
    out = []
    for q, d, g, s in zip(new.query_ids.to_pylist(), new.doc_ids.to_pylist(),
                          new.grades.tolist(), new.sources.to_pylist(), strict=True):
        old = used.get((q, d))
        if old is not None and old[0] != g:
            out.append(Conflict(q, d, old[0], old[1], g, s))
    return out


def write_qrels(qrels: Qrels, path: str | os.PathLike[str],
                inputs: Sequence[str | os.PathLike[str]] = ()) -> str:
    """Write every judgment of ``qrels`` with its source (all of :attr:`Qrels.judgments`
    when it has them), by the path's suffix: ``.tsv`` (``query-id corpus-id score source``),
    ``.jsonl`` (a record per judgment) or ``.parquet``; never over one of ``inputs``, never
    half-written. Returns the format."""
    import pyarrow as pa

    every = qrels.judgments if qrels.judgments is not None else qrels
    sources = every.sources.to_pylist() if every.sources is not None else None
    if sources is None:
        raise RagReportError("these qrels have no sources: write them as TREC qrels")
    qids, docs, grades = every.query_ids.to_pylist(), every.doc_ids.to_pylist(), every.grades
    suffix = Path(path).suffix.lower()
    if suffix == ".tsv":
        _tab_free(qids, docs, sources)
        text = "query-id\tcorpus-id\tscore\tsource\n" + "".join(
            f"{q}\t{d}\t{_grade(g)}\t{s}\n" for q, d, g, s in zip(qids, docs, grades.tolist(),
                                                                 sources, strict=True))
        write_outputs([(path, text)], inputs)
        return "tsv"
    if suffix == ".jsonl":
        text = "".join(json.dumps({"query_id": q, "relevant": {d: _number(g)}, "source": s},
                                  ensure_ascii=False) + "\n"
                       for q, d, g, s in zip(qids, docs, grades.tolist(), sources, strict=True))
        write_outputs([(path, text)], inputs)
        return "jsonl"
    if suffix == ".parquet":
        import io

        import pyarrow.parquet as pq

        buf = io.BytesIO()
        pq.write_table(pa.table({"query_id": qids, "doc_id": docs, "relevance": grades,
                                 "source": sources}), buf)
        write_outputs([(path, buf.getvalue())], inputs)
        return "parquet"
    raise RagReportError(f"cannot tell the format of {os.fspath(path)!r} from its suffix: "
                         "name it .tsv, .jsonl or .parquet (TREC qrels hold no source)")


def _grade(g: float) -> str:
    return str(int(g)) if float(g).is_integer() else repr(float(g))


def _number(g: float) -> float | int:
    return int(g) if float(g).is_integer() else float(g)


def _tab_free(*columns: Sequence[str]) -> None:
    """A TSV cannot hold a tab or a line break inside an id or a label."""
    for col in columns:
        for v in col:
            if "\t" in v or "\n" in v or "\r" in v:
                raise RagReportError(f"{v!r} holds a tab or a line break: write .jsonl or "
                                     ".parquet instead of .tsv")
