"""Generate MS MARCO-like TREC qrels and runs for the benchmark (fixed seed, vectorised).

Every line is built with numpy and pyarrow compute kernels, never a Python loop per line, so the
7 million lines of ``msmarco`` and 10 million of ``wide`` take seconds. Files are cached in
``benchmarks/data/`` next to a ``.spec.json`` holding the hash of the generator's parameters;
a file whose spec changed is generated again.

What the data looks like:

* query ids are numeric strings (``"1048585"``), in increasing numeric order in the files;
* document ids are ``D1234567`` (MS MARCO documents) or ``msmarco_v2.1_doc_07_12345#3_678``
  (MS MARCO v2.1 segments), unique within a query;
* the run lists ``depth`` documents per query sorted by score, scores have 3 decimals, so
  adjacent documents often tie (about 15 % of adjacent pairs); tied documents are written in
  random order, so the evaluated order depends on the tie rule;
* qrels judge 1-5 documents per query (mostly 1-2) with grades 0-3 (mostly 1); about 80 % of
  judged documents are retrieved, near the top; about 5 % of queries have only grade-0
  judgments (no relevant document);
* a ``notie`` variant of a run extends every score with 4 more decimals that decrease in file
  order, so no two documents of a query tie and every tool must produce the same order.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

DATA_DIR = Path(__file__).resolve().parent / "data"
SEED = 20240605
GENERATOR_VERSION = 3
PRIME_DOCS = 8_841_827  # prime just above MS MARCO's 8,841,823 passages
CHUNK_ROWS = 2_000_000

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class SizeSpec:
    name: str
    queries: int
    depth: int
    doc_style: str  # "D" or "v21"
    no_rel_fraction: float = 0.05
    tie_gap_mean: float = 0.003  # mean score gap between adjacent documents
    retrieved_prob: float = 0.8
    rank_gap_p: float = 0.08  # geometric parameter of the gaps between judged ranks


SIZES: dict[str, SizeSpec] = {
    "small": SizeSpec("small", 1_000, 100, "D"),
    "msmarco": SizeSpec("msmarco", 7_000, 1_000, "D"),
    "wide": SizeSpec("wide", 100_000, 100, "v21"),
}


@dataclass(frozen=True)
class DataFiles:
    qrels: Path
    run: Path
    run_notie: Path | None
    spec: SizeSpec
    lines: int


def spec_hash(spec: SizeSpec) -> str:
    blob = json.dumps({"spec": asdict(spec), "seed": SEED, "version": GENERATOR_VERSION,
                       "prime": PRIME_DOCS}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


Field = bytes | tuple[IntArray, int, bool]  # constant, or (non-negative ints, width, zero-pad)


def _render(n: int, fields: list[Field]) -> bytes:
    """Lines built from constant and integer fields, without a Python loop per line.

    Each line is laid out in a fixed-width row of a uint8 matrix; unused digit slots are left
    as NUL bytes and dropped in one pass (``m[m != 0]``, row-major), which concatenates the
    variable-width lines.
    """
    width = sum(len(f) if isinstance(f, bytes) else f[1] for f in fields)
    m = np.zeros((n, width), dtype=np.uint8)
    col = 0
    for f in fields:
        if isinstance(f, bytes):
            m[:, col: col + len(f)] = np.frombuffer(f, dtype=np.uint8)
            col += len(f)
            continue
        x, w, zero_pad = f
        x = np.asarray(x, dtype=np.int64)
        for j in range(w):
            p = 10 ** (w - 1 - j)
            digit = ((x // p) % 10 + 48).astype(np.uint8)
            if not zero_pad and j < w - 1:
                digit[x < p] = 0  # leading zero: dropped
            m[:, col + j] = digit
        col += w
    return m[m != 0].tobytes()


def _doc_fields(doc: IntArray, style: str) -> list[Field]:
    if style == "D":
        return [b"D", (doc, 7, False)]
    return [b"msmarco_v2.1_doc_", (doc % 60, 2, True), b"_", (doc // 60, 6, False), b"#",
            (doc % 7, 1, False), b"_", (doc * 7919 % 100_003, 6, False)]


@dataclass
class _Layout:
    qids: IntArray
    base: IntArray
    stride: IntArray
    top: npt.NDArray[np.float64]


def _layout(spec: SizeSpec, rng: np.random.Generator) -> _Layout:
    n = spec.queries
    qids = 1_000_000 + np.cumsum(rng.integers(1, 20, n)).astype(np.int64)
    if n > 50_000:  # keep the ids MS MARCO-like (up to 7 digits) and distinct
        qids = 1_000_000 + np.cumsum(rng.integers(1, 90, n)).astype(np.int64)
    base = rng.integers(0, PRIME_DOCS, n, dtype=np.int64)
    stride = rng.integers(1, PRIME_DOCS, n, dtype=np.int64)
    top = rng.uniform(15.0, 30.0, n)
    return _Layout(qids, base, stride, top)


def _qrels_bytes(spec: SizeSpec, lay: _Layout, rng: np.random.Generator) -> bytes:
    n, depth = spec.queries, spec.depth
    nj = rng.choice(np.arange(1, 6), size=n, p=[0.45, 0.2, 0.15, 0.1, 0.1])
    gaps = rng.geometric(spec.rank_gap_p, size=(n, 5))
    pos = np.cumsum(gaps, axis=1) - 1  # strictly increasing: distinct documents
    retrieved = (rng.random((n, 5)) < spec.retrieved_prob) & (pos < depth)
    j = np.arange(5)[None, :]
    slot = np.where(retrieved, pos, depth + j)  # unretrieved: positions past the run's depth
    doc = (lay.base[:, None] + slot * lay.stride[:, None]) % PRIME_DOCS
    grades = rng.choice(np.array([1, 2, 3, 0]), size=(n, 5), p=[0.6, 0.15, 0.1, 0.15])
    no_rel = rng.random(n) < spec.no_rel_fraction
    grades[:, 0] = np.where(no_rel, 0, np.maximum(grades[:, 0], 1))
    grades[no_rel, :] = 0
    mask = j < nj[:, None]
    q = np.broadcast_to(lay.qids[:, None], (n, 5))[mask]
    return _render(len(q), [(q, 7, False), b" 0 ", *_doc_fields(doc[mask], spec.doc_style),
                            b" ", (grades[mask], 1, False), b"\n"])


def _run_chunks(spec: SizeSpec, lay: _Layout, rng: np.random.Generator,
                notie: bool) -> list[tuple[bytes, bytes | None]]:
    """Run bytes (and the tie-free variant) in chunks of queries."""
    depth = spec.depth
    out: list[tuple[bytes, bytes | None]] = []
    step = max(1, CHUNK_ROWS // depth)
    for lo in range(0, spec.queries, step):
        hi = min(lo + step, spec.queries)
        m = hi - lo
        i = np.arange(depth, dtype=np.int64)
        doc = (lay.base[lo:hi, None] + i[None, :] * lay.stride[lo:hi, None]) % PRIME_DOCS
        drops = rng.exponential(spec.tie_gap_mean, size=(m, depth))
        drops[:, 0] = 0.0
        score = lay.top[lo:hi, None] - np.cumsum(drops, axis=1)
        milli = np.round(score * 1000.0).astype(np.int64)  # non-increasing: sorted, with ties
        q = np.repeat(lay.qids[lo:hi], depth)
        head: list[Field] = [(q, 7, False), b" Q0 ", *_doc_fields(doc.ravel(), spec.doc_style),
                             b" ", (np.tile(i + 1, m), 4, False), b" ",
                             (milli.ravel() // 1000, 3, False), b"."]
        frac = milli.ravel() % 1000
        main = _render(len(q), [*head, (frac, 3, True), b" bm25\n"])
        nt = None
        if notie:  # 4 more decimals, decreasing in file order: no two documents tie
            frac7 = frac * 10_000 + np.tile(depth - 1 - i, m)
            nt = _render(len(q), [*head, (frac7, 7, True), b" bm25\n"])
        out.append((main, nt))
    return out


def _generate(spec: SizeSpec, paths: DataFiles) -> None:
    rng = np.random.default_rng([SEED, list(SIZES).index(spec.name)])
    lay = _layout(spec, rng)
    qrels = _qrels_bytes(spec, lay, rng)
    tmp_q = paths.qrels.with_name(paths.qrels.name + ".tmp")
    with tmp_q.open("wb") as fq:
        fq.write(qrels)
    tmp_r = paths.run.with_name(paths.run.name + ".tmp")
    tmp_n = paths.run_notie.with_name(paths.run_notie.name + ".tmp") if paths.run_notie \
        else None
    with tmp_r.open("wb") as fr:
        fn = tmp_n.open("wb") if tmp_n else None
        try:
            for main, nt in _run_chunks(spec, lay, rng, tmp_n is not None):
                fr.write(main)
                if fn is not None and nt is not None:
                    fn.write(nt)
        finally:
            if fn is not None:
                fn.close()
    tmp_q.replace(paths.qrels)
    tmp_r.replace(paths.run)
    if tmp_n is not None and paths.run_notie is not None:
        tmp_n.replace(paths.run_notie)


def ensure_data(name: str, notie: bool = False, verbose: bool = True) -> DataFiles:
    """Paths of the size's files, generated first when missing or generated from another spec."""
    spec = SIZES[name]
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    paths = DataFiles(DATA_DIR / f"{name}.qrels", DATA_DIR / f"{name}.run",
                      DATA_DIR / f"{name}.notie.run" if notie else None, spec,
                      spec.queries * spec.depth)
    meta = DATA_DIR / f"{name}.spec.json"
    h = spec_hash(spec)
    old: dict[str, Any] = json.loads(meta.read_text()) if meta.exists() else {}
    want = [paths.qrels, paths.run] + ([paths.run_notie] if paths.run_notie else [])
    fresh = old.get("hash") == h and all(p.exists() for p in want)
    if not fresh:
        if verbose:
            print(f"[data] generating {name} ({spec.queries} x {spec.depth} = "
                  f"{spec.queries * spec.depth:,} run lines)...", flush=True)
        meta.unlink(missing_ok=True)
        t0 = time.perf_counter()
        _generate(spec, paths)
        meta.write_text(json.dumps({"hash": h, "spec": asdict(spec), "seed": SEED,
                                    "version": GENERATOR_VERSION}, indent=1))
        if verbose:
            mb = paths.run.stat().st_size / 2**20
            print(f"[data] {name}: {time.perf_counter() - t0:.1f} s, run file {mb:.0f} MiB",
                  flush=True)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--notie", action="store_true", help="also write the tie-free run")
    args = ap.parse_args()
    for name in args.sizes.split(","):
        ensure_data(name.strip(), notie=args.notie)


if __name__ == "__main__":
    main()
