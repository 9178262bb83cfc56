"""Streaming evaluation of a run larger than memory: time and peak RSS on a generated file.

    python benchmarks/stream_bench.py --queries 300000 --depth 100     # 30 million lines

Writes ``benchmarks/data/stream_run.txt`` (about 1.3 GB for 30M lines) and its qrels once,
then evaluates it with ``ragreport.core.stream.evaluate_stream`` in a child process and prints the
wall time and the child's peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "stream"


def generate(queries: int, depth: int, seed: int = 0) -> tuple[Path, Path]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    DATA.mkdir(parents=True, exist_ok=True)
    run = DATA / f"stream_run_{queries}x{depth}_v2.txt"
    qrels = DATA / f"stream_qrels_{queries}x{depth}_v2.txt"
    if run.exists() and qrels.exists():
        return qrels, run
    rng = np.random.default_rng(seed)
    opts = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    step = max(1, 1_000_000 // depth)
    tmp = run.with_name(run.name + ".tmp")
    with tmp.open("wb") as sink, pacsv.CSVWriter(sink, pa.schema([
            ("qid", pa.string()), ("q0", pa.string()), ("doc", pa.string()),
            ("rank", pa.int32()), ("score", pa.float64()), ("tag", pa.string())]),
            write_options=opts) as writer:
        for start in range(0, queries, step):
            n = min(step, queries - start)
            q = np.repeat(np.arange(start, start + n), depth)
            # distinct documents within a query: (q * 7919 + i * 104729) mod 8M
            docs = (q * 7919 + np.tile(np.arange(depth), n) * 104729) % 8_000_000
            scores = np.round(np.sort(rng.random((n, depth)), axis=1)[:, ::-1].ravel() * 30, 3)
            rank = np.tile(np.arange(1, depth + 1, dtype=np.int32), n)
            writer.write_table(pa.table({
                "qid": pa.array(q.astype(str)), "q0": pa.array(["Q0"] * (n * depth)),
                "doc": pa.array(np.char.add("D", docs.astype(str))), "rank": rank,
                "score": scores, "tag": pa.array(["gen"] * (n * depth))}))
    tmp.rename(run)
    # qrels: two judged documents per query taken from its ranking, grades 0-3
    with qrels.open("w") as fh:
        for start in range(0, queries, 100_000):
            n = min(100_000, queries - start)
            ids = np.arange(start, start + n)
            g = rng.integers(0, 4, (n, 2))
            pos = rng.integers(0, depth + depth // 2, (n, 2))  # some judged docs not retrieved
            pos[:, 1] = (pos[:, 0] + 1 + pos[:, 1] % (depth - 1)) % (depth + depth // 2)
            d = (ids[:, None] * 7919 + pos * 104729) % 8_000_000
            fh.write("".join(f"{i} 0 D{a} {ga}\n{i} 0 D{b} {gb}\n"
                             for i, a, b, ga, gb in zip(ids, d[:, 0], d[:, 1], g[:, 0], g[:, 1],
                                                        strict=True)))
    return qrels, run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=300_000)
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()
    t0 = time.perf_counter()
    qrels, run = generate(args.queries, args.depth)
    lines = args.queries * args.depth
    print(f"data: {run} ({run.stat().st_size / 2**30:.2f} GiB, {lines:,} lines), "
          f"ready in {time.perf_counter() - t0:.1f} s")
    code = ("import sys; from ragreport.core.stream import evaluate_stream; "
            "r = evaluate_stream(sys.argv[1], sys.argv[2], ['P@10', 'R@100', 'nDCG@10', 'RR', "
            "'AP'], k_max=100); print(r.n_queries, r.means())")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, str(qrels), str(run)], check=True,
                         capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(out.strip())
    print(f"streaming evaluation: {wall:.1f} s wall, peak RSS {rss:.0f} MiB "
          f"({lines / wall / 1e6:.1f} M lines/s)")


if __name__ == "__main__":
    main()
