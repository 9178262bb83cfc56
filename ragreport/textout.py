"""Plain-text outputs of ``ragreport evaluate``: trec_eval's layout and a readable table.

Every user string printed to a terminal (query ids, run names, titles) goes through
:func:`terminal_safe` first, so that it can neither drive the terminal (escape sequences,
carriage returns, bidirectional overrides) nor be read by a CI runner as a workflow command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from .core.result import EvaluationResult
from .measures import Measure
from .metrics import FloatArray
from .present import escape_controls, shown

__all__ = ["format_json", "format_table", "format_trec", "json_text", "terminal_safe"]

# C0 and C1 controls, DEL, the bidirectional controls (LRM, RLM, ALM, embeddings, overrides,
# isolates), the line and paragraph separators, the byte order mark and lone surrogates (a
# file name that is not UTF-8): each is written as a Python-style escape
def terminal_safe(text: str) -> str:
    """``text`` made inert for a terminal and for a CI log: printable as it is, never a command.

    * control characters (C0, DEL, C1: ESC sequences, ``\\r``, ``\\b``, NUL...), the
      bidirectional controls (U+202E...), U+2028/U+2029, U+FEFF and lone surrogates are shown
      as escapes (``\\x1b``, ``\\r``, ``\\u202e``);
    * GitHub Actions' workflow commands: text whose first non-blank characters are ``::``
      (``::error::``, ``::add-mask::``, read at the start of a line) has its first colon shown
      as ``\\x3a``, and ``##[`` (the legacy form, read anywhere in a line) is shown as
      ``#\\x23[``.

    Anything else, backslashes included, is unchanged, so ordinary ids print as they are.

    >>> terminal_safe("q1"), terminal_safe("a\\x1b[31mb\\r")
    ('q1', 'a\\\\x1b[31mb\\\\r')
    >>> terminal_safe("::error::x"), terminal_safe("a ##[error]b")
    ('\\\\x3a:error::x', 'a #\\\\x23[error]b')
    """
    text = escape_controls(text)
    if "##[" in text:
        text = text.replace("##[", "#\\x23[")
    body = text.lstrip()
    if body.startswith("::"):
        text = text[: len(text) - len(body)] + "\\x3a" + body[1:]
    return text

EVALUATE_SCHEMA = "ragreport.evaluate/1"


class PerQueryValues(Protocol):
    """What :func:`format_trec` reads: an EvaluationResult or a streaming StreamResult."""

    run_name: str
    query_ids: list[str]

    @property
    def n_queries(self) -> int: ...

    @property
    def measures(self) -> Sequence[Measure]: ...

    def values(self, measure: str | Measure) -> FloatArray: ...

    def mean(self, measure: str | Measure) -> float: ...


def _trec_value(m: Measure, value: float) -> str:
    if m.family.aggregate == "sum":
        return str(round(value))
    return shown(value)


def format_trec(result: PerQueryValues, per_query: bool = False) -> str:
    """trec_eval's output: ``measure<pad>\\tqid\\tvalue``, per-query blocks, then ``all``.

    trec_eval's counts (``num_ret``, ``num_rel``, ``num_rel_ret``) are integers and sum over
    queries in the ``all`` block; other values (``hits_K`` included: ranx averages it) are
    means with 4 decimals. ``num_q`` is printed once, in the ``all`` block, as trec_eval
    prints it (asking for ``NumQ`` adds no line per query). Each measure is printed under its
    :attr:`~ragreport.measures.Measure.trec_name`: trec_eval's name where it has the measure
    (``set_P``, ``set_recall``, ``set_F``, ``bpref``, ``iprec_at_recall_0.50``), else one
    in its style: ``judged_10`` / ``judged`` (ir_measures' Judged), ``err_20`` / ``err``
    (gdeval's ERR), ``rbp_10(p=0.8)`` / ``rbp(p=0.8)`` (graded RBP; binary:
    ``rbp_10(p=0.8,rel=1)``), ``r_cap_10`` (BEIR's R_cap).
    Query ids are in trec_eval's (byte-wise) order; an id or run name
    that holds a control character or a workflow command is shown escaped
    (:func:`terminal_safe`), any other is printed as it is.
    """
    lines: list[str] = []
    measures = list(result.measures)
    if per_query:
        cols = {m: result.values(m) for m in measures}
        order = sorted(range(result.n_queries), key=lambda i: result.query_ids[i])
        for i in order:
            q = terminal_safe(result.query_ids[i])
            for m in measures:
                if not m.family.trec_per_query:  # num_q: in the all block only
                    continue
                lines.append(f"{m.trec_name:<22}\t{q}\t{_trec_value(m, float(cols[m][i]))}")
    lines.append(f"{'runid':<22}\tall\t{terminal_safe(result.run_name)}")
    lines.append(f"{'num_q':<22}\tall\t{result.n_queries}")
    for m in measures:
        if not m.family.trec_per_query:  # the num_q line above
            continue
        v = (float(result.values(m).sum()) if m.family.aggregate == "sum"
             else result.mean(m))
        lines.append(f"{m.trec_name:<22}\tall\t{_trec_value(m, v)}")
    return "\n".join(lines) + "\n"


def format_table(result: EvaluationResult) -> str:
    """A small aligned table of means, with the dataset counts under it."""
    means = result.means()
    width = max(len("measure"), *(len(k) for k in means))  # the header may be the widest
    c = result.counts
    rows = [f"{'measure':<{width}}  {terminal_safe(result.run_name)}"]
    rows += [f"{k:<{width}}  {shown(v)}" for k, v in means.items()]
    rows.append("")
    rows.append(f"queries evaluated: {c.evaluated}; run-only (ignored): {c.run_only}; "
                f"qrels-only: {c.qrels_only}; no relevant document: {c.no_relevant}; "
                f"empty retrievals: {c.empty_retrievals}; duplicates dropped: "
                f"{c.duplicates_dropped}"
                + (f"; skipped (no relevant document): {c.skipped_no_relevant}"
                   if c.skipped_no_relevant else "")
                + (f"; identical ids dropped: {c.identical_ids_dropped}"
                   if result.conventions.ignore_identical_ids else ""))
    return "\n".join(rows) + "\n"


def evaluate_json(result: EvaluationResult, per_query: bool = False) -> dict[str, Any]:
    """The ``--format json`` document (schema ``ragreport.evaluate/1``)."""
    data = {"schema": EVALUATE_SCHEMA, **result.to_dict(per_query=per_query)}
    return data


# inside a JSON string, what json.dumps(ensure_ascii=False) leaves raw but a terminal or a CI
# runner would act on: written as \uXXXX escapes, which decode to the same text
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                          "\u2066-\u2069\ufeff\ud800-\udfff]|(?<=##)\\[")


def json_text(data: Any) -> str:
    """``data`` as indented JSON (UTF-8 text, 2 spaces, a final newline) that is inert in a
    terminal and in a CI log, and decodes to exactly ``data``.

    ``json.dumps`` already escapes C0 controls; C1 controls, DEL, bidirectional controls,
    separators, U+FEFF and lone surrogates are written as ``\\uXXXX``, and the ``[`` of ``##[``
    (a GitHub Actions workflow command wherever it is in a line) as ``\\u005b``. JSON keys
    and values never start a line, so ``::command::`` cannot either.

    >>> json_text({"q ##[error]x\\u202e": 1})
    '{\\n  "q ##\\\\u005berror]x\\\\u202e": 1\\n}\\n'
    """
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n"


def format_json(result: EvaluationResult, per_query: bool = False) -> str:
    """``evaluate_json`` serialised with 2-space indentation (see :func:`json_text`)."""
    return json_text(evaluate_json(result, per_query))
