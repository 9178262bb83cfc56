"""Explorer speed check: 100,000 queries x 100 results, two runs.

Generates TREC qrels and two TREC runs in a temporary folder (vectorised with pyarrow),
evaluates them with :func:`ragreport.evaluate`, then times building the explorer (state and
widget) and each interaction (Python time). The goal: construction < 2 s, each interaction
< 100 ms.

    python benchmarks/explorer_bench.py [--queries 100000] [--depth 100]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def _write_trec(path: Path, cols: list[Any]) -> None:
    """Write space-separated columns (pyarrow or numpy arrays) as lines, vectorised."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    strings = [pc.cast(c if isinstance(c, (pa.Array, pa.ChunkedArray)) else pa.array(c),
                       pa.string()) for c in cols]
    lines = pc.binary_join_element_wise(*strings, " ")
    pcsv.write_csv(pa.table({"line": lines}), str(path),
                   pcsv.WriteOptions(include_header=False, quoting_style="none"))


def _prefixed(prefix: str, numbers: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(pa.scalar(prefix),
                                       pc.cast(pa.array(numbers), pa.string()), "")


def make_inputs(folder: Path, n_queries: int, depth: int, seed: int = 0
                ) -> tuple[Path, list[Path], dict[str, str]]:
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    n_docs = 1_000_000
    qids = pa.array([f"q{i:06d}" for i in range(n_queries)])
    # qrels: 3 distinct judged documents per query, grades 0..3
    jbase = rng.integers(0, n_docs - 3 * depth, size=n_queries)
    jq = qids.take(pa.array(np.repeat(np.arange(n_queries), 3)))
    jd = np.repeat(jbase, 3) + np.tile(np.array([0, depth // 2, depth + 5]), n_queries)
    jg = rng.integers(0, 4, size=len(jd))
    qrels = folder / "qrels.txt"
    _write_trec(qrels, [jq, np.zeros(len(jd), dtype=np.int64), _prefixed("d", jd), jg])
    runs = []
    for r, name in enumerate(("alpha", "beta")):
        rq = qids.take(pa.array(np.repeat(np.arange(n_queries), depth)))
        # a window of documents around the judged ones, permuted differently per run
        offs = np.tile(np.arange(depth), n_queries)
        docs = np.repeat(jbase, depth) + (offs * (7 + 2 * r)) % depth
        score = (depth - offs).astype(np.float64) + rng.random(len(offs)) * 0.5
        path = folder / f"run_{name}.txt"
        _write_trec(path, [rq, pa.array(["Q0"] * 1).take(pa.array(np.zeros(len(offs),
                                                                             np.int64))),
                           _prefixed("d", docs), offs + 1, np.round(score, 4),
                           pa.array([name]).take(pa.array(np.zeros(len(offs), np.int64)))])
        runs.append(path)
    queries = {f"q{i:06d}": f"generated question number {i} about topic {i % 97}"
               for i in range(n_queries)}
    return qrels, runs, queries


def _time(label: str, fn: Callable[[], Any], rows: list[tuple[str, float]]) -> Any:
    t0 = time.perf_counter()
    out = fn()
    ms = (time.perf_counter() - t0) * 1000
    rows.append((label, ms))
    print(f"{label:<42} {ms:9.1f} ms", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()

    import ragreport
    from ragreport.explorer.state import ExplorerState
    from ragreport.explorer.widget import Explorer

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        qrels, runs, queries = make_inputs(Path(tmp), args.queries, args.depth)
        print(f"generated {args.queries} queries x {args.depth} results in "
              f"{time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        results = [ragreport.evaluate(qrels, r) for r in runs]
        print(f"evaluated 2 runs in {time.perf_counter() - t0:.1f} s (not part of the budget)")

    rows: list[tuple[str, float]] = []
    _time("construct ExplorerState (2 runs)",
          lambda: ExplorerState(results, queries=queries), rows)
    ex = _time("construct Explorer (state + widget)",
               lambda: Explorer(results, queries=queries), rows)
    first = ex.query_order(limit=3)
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("K slider -> 10", lambda: setattr(ex.k_slider, "value", 10)),
        ("K slider -> 3", lambda: setattr(ex.k_slider, "value", 3)),
        ("measure -> nDCG", lambda: setattr(ex.measure_dropdown, "value", "nDCG")),
        ("measure -> P", lambda: setattr(ex.measure_dropdown, "value", "P")),
        ("sort -> best", lambda: setattr(ex.sort_dropdown, "value", "best")),
        ("sort -> id", lambda: setattr(ex.sort_dropdown, "value", "id")),
        ("sort -> delta", lambda: setattr(ex.sort_dropdown, "value", "delta")),
        ("sort -> worst", lambda: setattr(ex.sort_dropdown, "value", "worst")),
        ("filter 'topic 42'", lambda: setattr(ex.filter_box, "value", "topic 42")),
        ("filter cleared", lambda: setattr(ex.filter_box, "value", "")),
        ("kind -> relevant only beyond K",
         lambda: setattr(ex.kind_dropdown, "value", "relevant only beyond K")),
        ("kind -> any", lambda: setattr(ex.kind_dropdown, "value", "")),
        ("fails a target on", lambda: setattr(ex.fails_checkbox, "value", True)),
        ("fails a target off", lambda: setattr(ex.fails_checkbox, "value", False)),
        ("select query", lambda: setattr(ex.query_dropdown, "value", first[-1])),
        ("next", ex.next_button.click),
        ("prev", ex.prev_button.click),
        ("swap runs A/B", lambda: ex.set_runs(1, 0)),
        ("swap back", lambda: ex.set_runs(0, 1)),
    ]
    for label, fn in steps:
        _time(label, fn, rows)
    inter = [ms for label, ms in rows if not label.startswith("construct")]
    print(f"\nconstruction (widget): {rows[1][1]:.0f} ms (goal < 2000); "
          f"interactions: max {max(inter):.0f} ms, median {float(np.median(inter)):.0f} ms "
          f"(goal < 100)")


if __name__ == "__main__":
    main()
