"""What the command's options ask to read and write, for every command (:mod:`ragreport.cli.app`).

Each helper takes the parsed options (``argparse.Namespace``) and reads or checks the inputs
they name: the embedded example, the evaluation options, ``--columns`` of Parquet inputs,
inputs that can be read only once (standard input), ``irds:`` ids, file fingerprints, and
whether an HTML report or a tracker is asked for. The report that ``report`` and ``check``
build from them is :mod:`ragreport.cli.report`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import RagReportError
from .args import escape_undecodable

#: True when this process is the ``ragreport`` command itself (set by
#: :func:`ragreport.cli.app.run`).
OWN_PROCESS = False


class _NoPandas:
    """A meta path finder that answers "not installed" for pandas (see below)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"{name} is not used by the ragreport command")


def skip_pandas_interop() -> None:
    """Have pyarrow take pandas for absent, in the ``ragreport`` command's own process only.

    pyarrow looks for pandas at its first array conversion and imports it when installed
    (0.3 to 0.6 s on a 2-core machine), although the command never converts to pandas. A
    finder that refuses pandas is put first on ``sys.meta_path`` for that one look and taken
    away at once, so any later ``import pandas`` works. Called before the first use of
    pyarrow; does nothing when ``main`` is called from someone else's process, where pyarrow
    must keep its pandas interop.
    """
    if not OWN_PROCESS or "pandas" in sys.modules or "pyarrow" in sys.modules:
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        import pyarrow as pa

        pa.array([0])  # pyarrow's one look for pandas happens here
    finally:
        sys.meta_path.remove(finder)


def example_inputs(args: argparse.Namespace) -> None:
    from ..examples import example_files

    if args.qrels or args.runs:
        raise RagReportError("--example takes no QRELS or RUN arguments")
    files = example_files()
    args.qrels = str(files.qrels)
    args.runs = [str(p) for p in files.runs]
    args.queries = getattr(args, "queries", None) or str(files.queries)
    args.docs = getattr(args, "docs", None) or str(files.docs)


def eval_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs = {
        "k_max": args.k_max,
        "complete": args.complete or None,  # None: the --compat preset's (mteb: on)
        "max_depth": args.max_depth,
        "rel_level": args.rel_level,
        "order": args.order,
        "no_relevant": args.no_relevant,
        "duplicates": "first" if args.keep_first_duplicate else "error",
    }
    for option in ("compat", "ignore_identical_ids", "score_precision"):  # ragreport.compat
        if getattr(args, option, None) is not None:
            kwargs[option] = getattr(args, option)
    if getattr(args, "ties", None) not in (None, "trec_eval"):  # --ties (ragreport.core.ties)
        kwargs["ties"] = args.ties
    kwargs.update(fractional_kwarg(args))
    if getattr(args, "doc_map", None) is not None:  # read once, for every run
        from ..core.docmap import load_doc_map

        kwargs["doc_map"] = load_doc_map(args.doc_map, unmapped=args.doc_map_unmapped)
    return kwargs


def check_doc_map_options(args: argparse.Namespace) -> None:
    """``--doc-map`` and the options that need it, before any input is read."""
    if args.doc_map is None:
        if args.doc_map_unmapped is not None:
            raise RagReportError("--doc-map-unmapped needs --doc-map")
        if getattr(args, "target_level", "chunk") != "chunk":
            raise RagReportError("--target-level document needs --doc-map")
        return
    if getattr(args, "stream", False):
        raise RagReportError("--doc-map is not supported with --stream (the document level "
                             "needs each query's whole chunk ranking); drop --stream")
    if getattr(args, "format", None) == "trec":
        raise RagReportError("--format trec holds one level only; with --doc-map use "
                             "--format table or json")


def fractional_kwarg(args: argparse.Namespace) -> dict[str, Any]:
    """``fractional_grades=True`` for ``--fractional-grades`` (readers, evaluate, notebook)."""
    return {"fractional_grades": True} if getattr(args, "fractional_grades", False) else {}


def columns_kwarg(args: argparse.Namespace, path: Any) -> dict[str, Any]:
    """``columns=`` for the reader of ``path`` when it is a Parquet file and ``--columns``
    is given (:func:`check_columns` has parsed it): the entries naming one of its columns
    (the qrels and a run may name theirs differently; the others are found by name)."""
    from ..io.tabular import is_parquet, parquet_columns

    mapping = getattr(args, "columns", None)
    if not mapping or not is_parquet(path):
        return {}
    names = set(parquet_columns(path))
    return {"columns": {k: v for k, v in mapping.items() if v in names}}


def check_columns(args: argparse.Namespace) -> None:
    """``--columns`` parsed, and refused when no input is a Parquet file or a column it names
    is in none of them; a Parquet run is refused with ``--stream`` (which reads text in
    blocks). After :func:`materialize_inputs`."""
    from ..io.tabular import is_parquet, parquet_columns, parse_columns

    runs = as_list(args.runs)
    if getattr(args, "stream", False) and any(is_parquet(p) for p in runs):
        raise RagReportError("--stream reads text runs in blocks; a Parquet run is read at "
                             "once: drop --stream")
    if getattr(args, "columns", None) is None:
        return
    args.columns = parse_columns(args.columns)
    tables = [p for p in (args.qrels, *runs) if p is not None and is_parquet(p)]
    if not tables:
        raise RagReportError("--columns applies to Parquet inputs, and no QRELS or RUN is a "
                             "Parquet file")
    found = {str(p): parquet_columns(p) for p in tables}
    for key, column in args.columns.items():
        if not any(column in names for names in found.values()):
            shown = "; ".join(f"{escape_undecodable(p)}: {', '.join(map(repr, names))}"
                              for p, names in found.items())
            raise RagReportError(f"--columns {key}={column}: no Parquet input has a column "
                                 f"{column!r} (columns of {shown})")


def materialize_inputs(args: argparse.Namespace, attrs: Sequence[str]) -> None:
    """Read every input that can be read only once (``-``, a FIFO, /dev/stdin) into memory.

    ``-`` (standard input) may stand for one input only.
    """
    from ..io.common import materialize

    dashes = [a for a in attrs for v in as_list(getattr(args, a, None)) if v == "-"]
    if len(dashes) > 1:
        raise RagReportError("standard input ('-') can be read for one input only, got it "
                             f"for {len(dashes)} inputs")
    for a in attrs:
        value = getattr(args, a, None)
        if isinstance(value, list):
            setattr(args, a, [materialize(v) for v in value])
        elif value is not None:
            setattr(args, a, materialize(value))


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def file_sha256(path: str) -> str | None:
    import hashlib
    import os

    if not os.path.isfile(path):
        return None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def is_irds(path: Any) -> bool:
    """An ``irds:`` id (ir_datasets) that is not a file's name: no file to hash."""
    import os

    from ..io.tabular import IRDS_PREFIX

    return isinstance(path, str) and path.startswith(IRDS_PREFIX) and not os.path.exists(path)


def wants_html(args: argparse.Namespace) -> bool:
    # report writes HTML by default; check writes only what it is asked for; a tracker
    # receives the HTML report too
    return bool(args.html or (args.command == "report" and not (args.markdown or args.json))
                or wanted_trackers(args))


def wanted_trackers(args: argparse.Namespace) -> list[str]:
    """The trackers ``--mlflow`` / ``--mlflow-run`` / ``--wandb`` ask for."""
    mlflow = getattr(args, "mlflow", False) or getattr(args, "mlflow_run", None) is not None
    return [name for name, on in (("mlflow", mlflow), ("wandb", getattr(args, "wandb", False)))
            if on]
