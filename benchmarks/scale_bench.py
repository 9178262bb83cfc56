"""Scale benchmark (issue 16): one generated run evaluated by ``--stream``, local Spark and
local Dask, with wall time, CPU time and peak memory of each.

    python benchmarks/scale_bench.py                      # 100,000,000 lines (1M queries x 100)
    python benchmarks/scale_bench.py --lines 1000000      # a quick one
    python benchmarks/scale_bench.py --engines stream,spark --keep --dir /tmp/scale

The run (N lines: N / depth queries x depth documents, 2-decimal scores so documents tie, graded
qrels with 1-5 judged documents per query, about 3, some of them not retrieved) is written
under a temporary directory in /tmp (removed at the end unless ``--keep``):

- ``run/part-NNNNN.parquet``: query-partitioned Parquet shards (every row of a query in one
  shard), columns ``query_id`` (int64), ``doc_id`` (string), ``score`` (float64), and
  ``qrels.parquet`` (``query_id``, ``doc_id``, ``relevance``): what a data lake holds;
- ``run.txt`` / ``qrels.txt``: the same rows as TREC text (what ``--stream`` reads).

Generation is vectorised (numpy, pyarrow casts) one shard at a time, so its memory stays
bounded whatever N. Then each engine runs in its own process:

- ``stream``: ``ragreport evaluate qrels.txt run.txt --stream --format json`` (the CLI);
- ``spark``: ``ragreport.spark.evaluate`` on ``local[2]`` over the Parquet shards, the
  per-query frame written as Parquet;
- ``dask``: ``ragreport.dask.evaluate`` (local threaded scheduler, 2 workers) over the same
  shards, written with ``ragreport.dask.write``.

Wall time, CPU time (user + system of the whole process tree, the JVM included) and peak RSS
(the sum over the process tree, polled every 0.2 s) are measured from outside. The means of
the three must agree (to 1e-9: sums in another order), and on a sample of queries the
per-query values Spark and Dask wrote (read back with ``ragreport.core.perquery.read``) must equal
those of a single-machine ``ragreport.evaluate`` of those queries' rows (``--stream`` prints
means only). The script exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MEASURES = ["nDCG@10", "P@10", "R@20", "RR", "AP"]
K_MAX = 20
DOC_SPACE = 50_000_000  # document numbers: distinct within a query for depth * 150 < this
STEP = 104_729


# --------------------------------------------------------------------------- generation


def _doc_ids(q: np.ndarray, pos: np.ndarray) -> Any:
    """``D<number>`` document ids (distinct within a query) as an Arrow string array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    nums = pa.array((q * 7919 + pos * STEP) % DOC_SPACE).cast(pa.string())
    return pc.binary_join_element_wise(pa.scalar("D"), nums, "")


def generate(root: Path, lines: int, depth: int, shards: int, seed: int = 0) -> dict[str, Any]:
    """Write the run and qrels as Parquet shards and as TREC text; return what was written."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    queries = max(1, lines // depth)
    per_shard = math.ceil(queries / shards)
    (root / "run").mkdir(parents=True)
    opts = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_txt, qrels_txt = root / "run.txt", root / "qrels.txt"
    trec_schema = pa.schema([("qid", pa.int64()), ("q0", pa.string()), ("doc", pa.string()),
                             ("rank", pa.int32()), ("score", pa.float64()),
                             ("tag", pa.string())])
    qrels_schema = pa.schema([("qid", pa.int64()), ("zero", pa.string()), ("doc", pa.string()),
                              ("grade", pa.int64())])
    pq_qrels = pa.schema([("query_id", pa.int64()), ("doc_id", pa.string()),
                          ("relevance", pa.int64())])
    n_lines = n_judged = 0
    with run_txt.open("wb") as run_sink, qrels_txt.open("wb") as qrels_sink, \
            pacsv.CSVWriter(run_sink, trec_schema, write_options=opts) as run_w, \
            pacsv.CSVWriter(qrels_sink, qrels_schema, write_options=opts) as qrels_w, \
            pq.ParquetWriter(root / "qrels.parquet", pq_qrels) as qrels_pq:
        for s, start in enumerate(range(0, queries, per_shard)):
            n = min(per_shard, queries - start)
            ids = 100_000 + np.arange(start, start + n, dtype=np.int64)
            q = np.repeat(ids, depth)
            pos = np.tile(np.arange(depth, dtype=np.int64), n)
            docs = _doc_ids(q, pos)
            # descending scores with 2 decimals in [0, 10): about 1 in 10 neighbours tie
            scores = np.round(np.sort(rng.random((n, depth)), axis=1)[:, ::-1] * 10, 2).ravel()
            m = n * depth
            pq.write_table(pa.table({"query_id": q, "doc_id": docs, "score": scores}),
                           root / "run" / f"part-{s:05d}.parquet")
            run_w.write_table(pa.table({
                "qid": q, "q0": pa.repeat(pa.scalar("Q0"), m), "doc": docs,
                "rank": np.tile(np.arange(1, depth + 1, dtype=np.int32), n), "score": scores,
                "tag": pa.repeat(pa.scalar("scale"), m)}, schema=trec_schema))
            # qrels: 1-5 judged documents per query (about 3) at distinct positions among
            # the first 1.5 x depth (a third of them not retrieved), grades 0-3
            k = rng.integers(1, 6, n)
            span = depth + depth // 2
            # the first judged position skewed to the top of the ranking
            p0 = np.minimum(rng.exponential(depth / 8, n).astype(np.int64), span - 1)
            jpos = (p0[:, None] + np.arange(5) * 31) % span
            keep = np.arange(5)[None, :] < k[:, None]
            jq = np.broadcast_to(ids[:, None], (n, 5))[keep]
            jp = jpos[keep]
            grade = rng.choice(4, size=jq.size, p=[0.2, 0.5, 0.2, 0.1]).astype(np.int64)
            jdocs = _doc_ids(jq, jp)
            qrels_pq.write_table(pa.table({"query_id": jq, "doc_id": jdocs, "relevance": grade},
                                          schema=pq_qrels))
            qrels_w.write_table(pa.table({
                "qid": jq, "zero": pa.repeat(pa.scalar("0"), jq.size), "doc": jdocs,
                "grade": grade}, schema=qrels_schema))
            n_lines += m
            n_judged += jq.size
    return {"queries": queries, "lines": n_lines, "judged": n_judged, "shards": s + 1,
            "run_txt": run_txt, "qrels_txt": qrels_txt}


# --------------------------------------------------------------------------- measuring


@dataclass
class Measured:
    name: str
    wall: float = math.nan
    cpu: float = math.nan
    peak_rss: float = math.nan  # bytes, sum over the process tree
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def measure(name: str, cmd: list[str], timeout: float, max_rss: float) -> Measured:
    """Run ``cmd``; poll its process tree (RSS summed, CPU time per process) every 0.2 s."""
    import psutil

    out = Measured(name)
    t0 = time.perf_counter()
    before = os.times()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cpu_seen: dict[int, float] = {}
    peak = 0
    stop = threading.Event()
    killed: list[str] = []

    def poll() -> None:
        nonlocal peak
        try:
            root = psutil.Process(proc.pid)
        except psutil.NoSuchProcess:
            return
        while not stop.is_set():
            total = 0
            try:
                tree = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            for p in tree:
                try:
                    total += p.memory_info().rss
                    t = p.cpu_times()
                    cpu_seen[p.pid] = t.user + t.system
                except psutil.NoSuchProcess:
                    pass
            peak = max(peak, total)
            if total > max_rss and not killed:
                killed.append(f"stopped at {total / 2**30:.1f} GiB RSS (--max-rss-gib)")
                for p in reversed(tree):
                    with contextlib.suppress(psutil.NoSuchProcess):
                        p.kill()
            stop.wait(0.2)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        out.stdout, out.stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        killed.append(f"stopped after {timeout:.0f} s (--timeout)")
        with contextlib.suppress(psutil.NoSuchProcess):
            for p in reversed([psutil.Process(proc.pid),
                               *psutil.Process(proc.pid).children(recursive=True)]):
                with contextlib.suppress(psutil.NoSuchProcess):
                    p.kill()
        out.stdout, out.stderr = proc.communicate()
    out.wall = time.perf_counter() - t0
    stop.set()
    poller.join()
    after = os.times()
    waited = (after.children_user - before.children_user) + \
        (after.children_system - before.children_system)
    # processes the child waited for are in its rusage; a JVM it did not wait for is not:
    # take the larger of the two counts
    out.cpu = max(waited, sum(cpu_seen.values()))
    out.peak_rss = float(peak)
    out.returncode = proc.returncode
    out.note = "; ".join(killed)
    return out


# --------------------------------------------------------------------------- workers


def worker(engine: str, root: Path, shards: int) -> None:
    """Run one engine over the Parquet shards (in a child process); print its timings."""
    t0 = time.perf_counter()
    out = root / f"out_{engine}"
    if engine == "spark":
        from pyspark.sql import SparkSession

        import ragreport.spark

        spark = (SparkSession.builder.master("local[2]").appName("ragreport-scale")
                 .config("spark.driver.memory", os.environ.get("SCALE_SPARK_MEMORY", "6g"))
                 .config("spark.sql.shuffle.partitions", str(shards))
                 .config("spark.ui.enabled", "false").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        t1 = time.perf_counter()
        qrels = spark.read.parquet(str(root / "qrels.parquet"))
        run = spark.read.parquet(str(root / "run"))
        df = ragreport.spark.evaluate(qrels, run, MEASURES, K_MAX, name="scale",
                                      partitions=shards)
        t2 = time.perf_counter()
        df.write.parquet(str(out))
        t3 = time.perf_counter()
        spark.stop()
    elif engine == "dask":
        import dask
        import dask.dataframe as dd

        import ragreport.dask

        dask.config.set(scheduler="threads", num_workers=2)
        t1 = time.perf_counter()
        qrels = dd.read_parquet(str(root / "qrels.parquet"))
        run = dd.read_parquet(str(root / "run"))
        df = ragreport.dask.evaluate(qrels, run, MEASURES, K_MAX, name="scale",
                                     partitions=shards)
        t2 = time.perf_counter()
        ragreport.dask.write(df, str(out))
        t3 = time.perf_counter()
    elif engine == "kernel":
        # the work of one partition: ragreport.evaluate on the rows of one shard's queries
        import pyarrow.compute as pc
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        import ragreport

        run = pq.read_table(root / "run" / "part-00000.parquet")
        qrels = ds.dataset(root / "qrels.parquet").to_table(
            filter=pc.field("query_id").isin(pc.unique(run["query_id"])))
        t1 = time.perf_counter()
        c1 = time.process_time()
        res = ragreport.evaluate(qrels, run, MEASURES, K_MAX, name="scale")
        res.means()
        t2 = time.perf_counter()
        c2 = time.process_time()
        print(json.dumps({"start": t1 - t0, "evaluate": t2 - t1, "write": 0.0,
                          "evaluate_cpu": c2 - c1, "lines": run.num_rows}))
        return
    else:
        raise SystemExit(f"unknown engine {engine!r}")
    print(json.dumps({"start": t1 - t0, "evaluate": t2 - t1, "write": t3 - t2}))


# --------------------------------------------------------------------------- checks


def sample_check(root: Path, results: dict[str, Any], sample: int, seed: int = 1) -> list[str]:
    """Per-query values of each engine on ``sample`` queries against one ``evaluate`` of those
    queries' rows; returns the failures."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    import ragreport

    qrels_all = ds.dataset(root / "qrels.parquet")
    ids = np.unique(qrels_all.to_table(columns=["query_id"])["query_id"].to_numpy())
    rng = np.random.default_rng(seed)
    pick = pa.array(rng.choice(ids, size=min(sample, ids.size), replace=False))
    flt = pc.field("query_id").isin(pick)
    qrels = qrels_all.to_table(filter=flt)
    run = ds.dataset(root / "run").to_table(filter=flt)
    ref = ragreport.evaluate(qrels, run, MEASURES, K_MAX, name="scale")
    fails = []
    for engine, res in results.items():
        for m in MEASURES:
            want, got = ref.per_query(m), res.per_query(m)
            for qid, v in want.items():
                if qid not in got or not math.isclose(got[qid], v, rel_tol=1e-12, abs_tol=1e-12):
                    fails.append(f"{engine}: {m} of query {qid}: {got.get(qid)} != {v}")
    return fails


# --------------------------------------------------------------------------- main


def _gib(x: float) -> str:
    return "-" if math.isnan(x) else f"{x / 2**30:.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=100_000_000)
    ap.add_argument("--depth", type=int, default=100, help="documents per query")
    ap.add_argument("--shards", type=int, default=0,
                    help="Parquet shards (default: one per 2M lines, at least 2)")
    ap.add_argument("--engines", default="stream,kernel,spark,dask")
    ap.add_argument("--sample", type=int, default=500, help="queries compared value by value")
    ap.add_argument("--dir", help="data directory (default: a new one under /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the data directory")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per engine")
    ap.add_argument("--max-rss-gib", type=float, default=14,
                    help="stop an engine whose process tree goes past this")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    shards = args.shards or max(2, args.lines // 2_000_000)
    if args.worker:
        worker(args.worker, Path(args.dir), shards)
        return 0

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="ragreport-scale-",
                                                                dir="/tmp"))
    free = shutil.disk_usage(base.parent if not base.exists() else base).free
    need = args.lines * 60  # text ~40 bytes a line, Parquet and engine outputs the rest
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; "
          f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f} "
          f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; free on {base.parent}: "
          f"{free / 2**30:.0f} GiB (about {need / 2**30:.0f} GiB needed)")
    if free < need:
        print("not enough free disk", file=sys.stderr)
        return 2
    try:
        root = base / "data"
        if root.exists():
            shutil.rmtree(root)
        t0 = time.perf_counter()
        info = generate(root, args.lines, args.depth, shards)
        gen = time.perf_counter() - t0
        size_txt = info["run_txt"].stat().st_size
        size_pq = sum(p.stat().st_size for p in (root / "run").iterdir())
        print(f"generated {info['lines']:,} run lines ({info['queries']:,} queries x "
              f"{args.depth}), {info['judged']:,} judgments in {gen:.1f} s: {info['shards']} "
              f"Parquet shards ({size_pq / 2**30:.2f} GiB), run.txt {size_txt / 2**30:.2f} GiB")
        rows: list[Measured] = []
        means: dict[str, dict[str, float]] = {}
        per_query: dict[str, Any] = {}
        for engine in engines:
            print(f"{time.strftime('%H:%M:%S', time.gmtime())} {engine} ... "
                  f"(load average {os.getloadavg()[0]:.2f})", flush=True)
            if engine == "stream":
                cmd = [sys.executable, "-m", "ragreport", "evaluate", str(info["qrels_txt"]),
                       str(info["run_txt"]), "--stream", "--format", "json", "--k-max",
                       str(K_MAX), *[a for m in MEASURES for a in ("-m", m)]]
            else:
                cmd = [sys.executable, __file__, "--worker", engine, "--dir", str(root),
                       "--lines", str(args.lines), "--shards", str(shards)]
            r = measure(engine, cmd, args.timeout, args.max_rss_gib * 2**30)
            rows.append(r)
            if r.returncode != 0:
                tail = (r.stderr.strip().splitlines() or ["(no output)"])[-1]
                r.note = r.note or f"failed (exit {r.returncode}): {tail[:200]}"
                print(f"  {r.note}")
                continue
            if engine == "stream":
                means[engine] = json.loads(r.stdout)["means"]
            elif engine == "kernel":
                r.extra = json.loads(r.stdout.strip().splitlines()[-1])
                r.note = (f"one shard, {r.extra['lines']:,} lines: evaluate "
                          f"{r.extra['evaluate']:.2f} s wall, {r.extra['evaluate_cpu']:.2f} s "
                          f"CPU = {r.extra['lines'] / r.extra['evaluate_cpu'] / 1e6:.2f} M "
                          "lines/s/core (the per-partition kernel)")
            else:
                from ragreport import perquery

                r.extra = json.loads(r.stdout.strip().splitlines()[-1])
                [res] = perquery.read(root / f"out_{engine}")
                per_query[engine] = res
                means[engine] = res.means(MEASURES)
                r.note = (f"start {r.extra['start']:.1f} s, evaluate {r.extra['evaluate']:.1f}"
                          f" s, write {r.extra['write']:.1f} s; {res.n_queries:,} queries")
            print(f"  {r.wall:.1f} s wall, {r.cpu:.1f} s CPU, peak RSS {_gib(r.peak_rss)} GiB"
                  f"{'; ' + r.note if r.note else ''}", flush=True)

        fails: list[str] = []
        names = list(means)
        for e in names[1:]:
            for m, v in means[names[0]].items():
                w = means[e].get(m, math.nan)
                if not math.isclose(v, w, rel_tol=1e-9, abs_tol=1e-12):
                    fails.append(f"mean {m}: {names[0]} {v!r} != {e} {w!r}")
        if per_query:
            fails += sample_check(root, per_query, args.sample)
        ref = next((r for r in rows if r.name == "stream" and r.returncode == 0), None)
        print()
        print(f"{info['lines']:,} lines, {info['queries']:,} queries, measures "
              f"{', '.join(MEASURES)}, k_max {K_MAX}; load average now "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("| path | wall s | CPU s | peak RSS GiB | wall vs --stream | CPU vs --stream | "
              "lines/s/core (CPU) | notes |")
        print("|:--|--:|--:|--:|--:|--:|--:|:--|")
        for r in rows:
            ok = r.returncode == 0
            rw = f"{r.wall / ref.wall:.1f}x" if ref and ok else "-"
            rc = f"{r.cpu / ref.cpu:.1f}x" if ref and ok else "-"
            rate = f"{info['lines'] / r.cpu / 1e6:.2f} M" if ok and r.cpu > 0 else "-"
            if r.name == "kernel":
                rw = rc = "-"
                rate = f"{r.extra['lines'] / r.extra['evaluate_cpu'] / 1e6:.2f} M" if ok else "-"
            label = {"stream": "`evaluate --stream` (CLI)", "spark": "Spark `local[2]`",
                     "dask": "Dask, threads x 2",
                     "kernel": "kernel: `evaluate` of one shard, in memory"}.get(r.name, r.name)
            print(f"| {label} | {r.wall:.1f} | {r.cpu:.1f} | {_gib(r.peak_rss)} | {rw} | {rc} "
                  f"| {rate} | {r.note} |")
        print()
        if names:
            print("means: " + json.dumps(means[names[0]]))
        if fails:
            print(f"CHECK FAILED ({len(fails)}):")
            for f in fails[:20]:
                print("  " + f)
            return 1
        print(f"checks: the means of {', '.join(names)} agree (1e-9); "
              + (f"{args.sample} sampled queries: every per-query value of "
                 f"{', '.join(per_query)} equals one evaluate of their rows"
                 if per_query else "no per-query output to compare"))
        return 0
    finally:
        if args.keep:
            print(f"kept {base}")
        elif args.dir is None:
            shutil.rmtree(base, ignore_errors=True)
        else:
            shutil.rmtree(base / "data", ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
