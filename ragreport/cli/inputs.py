"""What the command's options ask to read and write, for every command (:mod:`ragreport.cli.app`).

Each helper takes the command's :class:`~ragreport.cli.config.Options` and reads or checks
the inputs they name (a helper that settles an option returns new options): the embedded
example, the evaluation options, ``--columns`` of Parquet inputs, inputs that can be read
only once (standard input), ``irds:`` ids, file fingerprints, and whether an HTML report or
a tracker is asked for. The report that ``report`` and ``check``
build from them is :mod:`ragreport.cli.report`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..errors import RagReportError
from .args import escape_undecodable
from .config import Input, Options

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


def with_example(opts: Options) -> Options:
    """``--example``: the embedded example's qrels, runs, queries and documents (the queries
    and documents given, when given), and its targets when none are configured (no
    ``--targets``, none in the configuration file)."""
    from ..examples import example_files

    if opts.qrels or opts.runs:
        raise RagReportError("--example takes no QRELS or RUN arguments")
    files = example_files()
    return replace(opts, qrels=str(files.qrels), runs=tuple(str(p) for p in files.runs),
                   queries=opts.queries or str(files.queries),
                   docs=opts.docs or str(files.docs), targets=example_targets(opts.targets))


def example_targets(targets: Input | None, cwd: str | os.PathLike[str] | None = None
                    ) -> Input | None:
    """The targets ``--example`` checks: those given, else those configured (None: found
    by the command), else the example's own."""
    from ..examples import example_files

    if targets is None and no_targets_configured(cwd):
        return str(example_files().targets)
    return targets


def no_targets_configured(cwd: str | os.PathLike[str] | None = None) -> bool:
    """No targets in ``pyproject.toml`` or ``ragreport.toml`` of ``cwd`` (default: the working
    folder): the seed's defaults."""
    from ..io.targets import load_targets
    from ..targets import DEFAULT_SOURCE
    from .resolve import reserved_keys

    return all(t.source == DEFAULT_SOURCE
               for t in load_targets(cwd=cwd, skip=reserved_keys()))


def eval_kwargs(opts: Options) -> dict[str, Any]:
    """The keywords of :func:`ragreport.evaluate` the options give (the doc map read)."""
    kwargs: dict[str, Any] = {
        "k_max": opts.k_max,
        "complete": opts.complete or None,  # None: the --compat preset's (mteb: on)
        "max_depth": opts.max_depth,
        "rel_level": opts.rel_level,
        "order": opts.order,
        "no_relevant": opts.no_relevant,
        "duplicates": "first" if opts.keep_first_duplicate else "error",
    }
    for option in ("compat", "ignore_identical_ids", "score_precision"):  # ragreport.compat
        if getattr(opts, option) is not None:
            kwargs[option] = getattr(opts, option)
    if opts.ties not in (None, "trec_eval"):  # --ties (ragreport.core.ties)
        kwargs["ties"] = opts.ties
    kwargs.update(fractional_kwarg(opts))
    if opts.doc_map is not None:  # read once, for every run
        from ..io.docmap import load_doc_map

        kwargs["doc_map"] = load_doc_map(opts.doc_map, unmapped=opts.doc_map_unmapped)
    return kwargs


def check_doc_map_options(opts: Options) -> None:
    """``--doc-map`` and the options that need it, before any input is read."""
    if opts.doc_map is None:
        if opts.doc_map_unmapped is not None:
            raise RagReportError("--doc-map-unmapped needs --doc-map")
        if opts.target_level != "chunk":
            raise RagReportError("--target-level document needs --doc-map")
        return
    if opts.stream:
        raise RagReportError("--doc-map is not supported with --stream (the document level "
                             "needs each query's whole chunk ranking); drop --stream")
    if opts.format == "trec":
        raise RagReportError("--format trec holds one level only; with --doc-map use "
                             "--format table or json")


def fractional_kwarg(opts: Options) -> dict[str, Any]:
    """``fractional_grades=True`` for ``--fractional-grades`` (readers, evaluate, notebook)."""
    return {"fractional_grades": True} if opts.fractional_grades else {}


def rule_kwarg(opts: Options) -> dict[str, Any]:
    """``judgment_rule=`` for the qrels reader when ``--judgment-rule`` is not the default."""
    return {} if opts.judgment_rule == "human-first" else {"judgment_rule": opts.judgment_rule}


def columns_kwarg(opts: Options, path: Any) -> dict[str, Any]:
    """``columns=`` for the reader of ``path`` when it is a Parquet file and ``--columns``
    is given (:func:`check_columns` has checked it): the entries naming one of its columns
    (the qrels and a run may name theirs differently; the others are found by name)."""
    from ..io.tableinput import is_parquet, parquet_columns
    from ..io.tabular import parse_columns

    if not opts.columns or not is_parquet(path):
        return {}
    names = set(parquet_columns(path))
    mapping = parse_columns(opts.columns) or {}
    return {"columns": {k: v for k, v in mapping.items() if v in names}}


def check_columns(opts: Options) -> None:
    """``--columns`` refused when no input is a Parquet file or a column it names is in
    none of them; a Parquet run is refused with ``--stream`` (which reads text in blocks).
    After :func:`materialized`."""
    from ..io.tableinput import is_parquet, parquet_columns
    from ..io.tabular import parse_columns

    if opts.stream and any(is_parquet(p) for p in opts.runs):
        raise RagReportError("--stream reads text runs in blocks; a Parquet run is read at "
                             "once: drop --stream")
    if opts.columns is None:
        return
    columns = parse_columns(opts.columns) or {}
    tables = [p for p in (opts.qrels, *opts.runs) if p is not None and is_parquet(p)]
    if not tables:
        raise RagReportError("--columns applies to Parquet inputs, and no QRELS or RUN is a "
                             "Parquet file")
    found = {str(p): parquet_columns(p) for p in tables}
    for key, column in columns.items():
        if not any(column in names for names in found.values()):
            shown = "; ".join(f"{escape_undecodable(p)}: {', '.join(map(repr, names))}"
                              for p, names in found.items())
            raise RagReportError(f"--columns {key}={column}: no Parquet input has a column "
                                 f"{column!r} (columns of {shown})")


def materialized(opts: Options, attrs: Sequence[str]) -> Options:
    """The options with every input of ``attrs`` that can be read only once (``-``, a FIFO,
    /dev/stdin) read into memory.

    ``-`` (standard input) may stand for one input only.
    """
    from ..io.common import materialize

    dashes = [a for a in attrs for v in _as_tuple(getattr(opts, a)) if v == "-"]
    if len(dashes) > 1:
        raise RagReportError("standard input ('-') can be read for one input only, got it "
                             f"for {len(dashes)} inputs")
    changes: dict[str, Any] = {}
    for a in attrs:
        value = getattr(opts, a)
        if isinstance(value, tuple):
            changes[a] = tuple(materialize(v) for v in value)
        elif value is not None:
            changes[a] = materialize(value)
    return replace(opts, **changes)


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    return value if isinstance(value, tuple) else (value,)


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

    from ..io.tableinput import IRDS_PREFIX

    return isinstance(path, str) and path.startswith(IRDS_PREFIX) and not os.path.exists(path)


def wants_html(opts: Options) -> bool:
    """Whether an HTML report is written: ``report`` writes one by default, ``check`` only
    when asked; a tracker receives the HTML report too."""
    return bool(opts.html or (opts.command == "report" and not (opts.markdown or opts.json))
                or wanted_trackers(opts))


def wanted_trackers(opts: Options) -> list[str]:
    """The trackers ``--mlflow`` / ``--mlflow-run`` / ``--wandb`` ask for."""
    mlflow = opts.mlflow or opts.mlflow_run is not None
    return [name for name, on in (("mlflow", mlflow), ("wandb", opts.wandb)) if on]
