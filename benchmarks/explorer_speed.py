"""Explorer speed in a real browser: 100,000 queries, two runs, JupyterLab + headless Chromium.

Generates TREC qrels, two runs (``--depth`` results per query), query texts and passages in a
temporary folder (vectorised with numpy/pyarrow), starts JupyterLab on 127.0.0.1 (see
``tests/labserver.py``), runs a notebook that evaluates the runs and builds
``ragreport.Explorer`` (the build is timed in the kernel: goal < 1 s), then drives the widget
in the page as a user would and times each interaction from the event to the moment its
effect is in the DOM and the next frame is painted (goal < 100 ms):

* select a row (click), ArrowDown, ``j``: the row marked selected (local), then the ranking
  of that query shown (a round trip to the kernel);
* type in the filter: the list narrowed (includes the widget's debounce);
* move K (slider): the cut line after row K and the measures at K;
* swap runs A/B; scroll the list far (rows fetched from the kernel) and a little.

Each interaction is repeated ``--repeat`` times; the table shows the median and the worst.

    python benchmarks/explorer_speed.py [--queries 100000] [--depth 50] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

GOAL_MS = 100.0
BUILD_GOAL_S = 1.0


# -- data -----------------------------------------------------------------------------------
def _write_lines(path: Path, cols: list[Any], sep: str = " ") -> None:
    """Write columns (pyarrow or numpy arrays) joined by ``sep`` as lines, vectorised."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    strings = [pc.cast(c if isinstance(c, (pa.Array, pa.ChunkedArray)) else pa.array(c),
                       pa.string()) for c in cols]
    lines = pc.binary_join_element_wise(*strings, sep)
    pcsv.write_csv(pa.table({"line": lines}), str(path),
                   pcsv.WriteOptions(include_header=False, quoting_style="none"))


def _prefixed(prefix: str, numbers: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(pa.scalar(prefix),
                                       pc.cast(pa.array(numbers), pa.string()), "")


def make_data(folder: Path, n_queries: int, depth: int, seed: int = 14) -> dict[str, Path]:
    """qrels (4 judged documents per query, grades 0-3, some beyond the depth), two runs that
    rank the same pool of ``depth`` documents differently, queries.tsv and docs.jsonl (one
    passage per document of the pool)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    n_docs = 300_000
    qids = pa.array([f"q{i:06d}" for i in range(n_queries)])
    base = rng.integers(0, n_docs - depth, size=n_queries)
    # judged: 3 inside the pool (offsets vary per query), 1 just outside it
    offs = np.stack([rng.integers(0, depth, n_queries), rng.integers(0, depth, n_queries),
                     rng.integers(0, depth // 2, n_queries),
                     np.full(n_queries, depth)], axis=1)
    offs[:, 1] = np.where(offs[:, 1] == offs[:, 0], (offs[:, 1] + 1) % depth, offs[:, 1])
    offs[:, 2] = np.where((offs[:, 2] == offs[:, 0]) | (offs[:, 2] == offs[:, 1]),
                          depth + 1, offs[:, 2])
    jq = qids.take(pa.array(np.repeat(np.arange(n_queries), 4)))
    jd = (base[:, None] + offs).ravel()
    jg = rng.integers(0, 4, size=len(jd))
    jg[rng.random(len(jg)) < 0.02] = 0
    out = {"qrels": folder / "qrels.txt"}
    _write_lines(out["qrels"], [jq, np.zeros(len(jd), np.int64), _prefixed("d", jd), jg])
    for r, name in enumerate(("alpha", "beta")):
        rq = qids.take(pa.array(np.repeat(np.arange(n_queries), depth)))
        pos = np.tile(np.arange(depth), n_queries)
        docs = np.repeat(base, depth) + (pos * (7 + 2 * r) + r * 3) % depth
        score = (depth - pos).astype(np.float64) + rng.random(len(pos)) * 0.5
        path = folder / f"run_{name}.txt"
        const = pa.array(["Q0", name])
        _write_lines(path, [rq, const.take(pa.array(np.zeros(len(pos), np.int64))),
                            _prefixed("d", docs), pos + 1, np.round(score, 4),
                            const.take(pa.array(np.ones(len(pos), np.int64)))])
        out[f"run_{name}"] = path
    topics = np.arange(n_queries) % 97
    out["queries"] = folder / "queries.tsv"
    _write_lines(out["queries"], [qids, _prefixed("generated question about topic ", topics)],
                 sep="\t")
    out["docs"] = folder / "docs.jsonl"
    with out["docs"].open("w", encoding="utf-8") as fh:
        fh.writelines(f'{{"doc_id": "d{i}", "text": "passage about topic {i % 97} and subject '
                      f'{i % 1009}, generated for the speed benchmark."}}\n'
                      for i in range(n_docs))
    return out


# -- the notebook ---------------------------------------------------------------------------
SETUP = """\
import time
import ragreport
t0 = time.perf_counter()
results = [ragreport.evaluate({qrels!r}, {a!r}), ragreport.evaluate({qrels!r}, {b!r})]
eval_s = time.perf_counter() - t0
t0 = time.perf_counter()
queries, docs = ragreport.load_texts({queries!r}), ragreport.load_texts({docs!r})
texts_s = time.perf_counter() - t0
print(f"evaluated in {{eval_s:.2f}} s, texts loaded in {{texts_s:.2f}} s")
"""
BUILD = """\
t0 = time.perf_counter()
explorer = ragreport.Explorer(results, queries=queries, docs=docs)
build_s = time.perf_counter() - t0
print("BUILD", round(build_s, 3))
"""
SHOW = "explorer"


def write_notebook(path: Path, files: dict[str, Path]) -> None:
    import nbformat

    fmt = {"qrels": str(files["qrels"]), "a": str(files["run_alpha"]),
           "b": str(files["run_beta"]), "queries": str(files["queries"]),
           "docs": str(files["docs"])}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SETUP.format(**fmt)),
                                         nbformat.v4.new_code_cell(BUILD.format(**fmt)),
                                         nbformat.v4.new_code_cell(SHOW)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


# -- timing in the page ---------------------------------------------------------------------
#: Runs ``action`` (a function body receiving the widget root, performing the user's action and
#: returning a predicate); resolves with the milliseconds until the predicate holds (checked
#: on every DOM mutation and animation frame) and until the next frame after that.
MEASURE_JS = """async ([action, timeout]) => {
  const root = document.querySelector('.rr-explorer');
  const t0 = performance.now();
  const pred = new Function('root', action)(root);
  return await new Promise((resolve) => {
    let done = false;
    const finish = (ok) => {
      if (done) return; done = true; obs.disconnect();
      const tDom = performance.now() - t0;
      requestAnimationFrame(() => resolve({ok, dom: tDom, frame: performance.now() - t0}));
    };
    const check = () => { try { if (pred()) finish(true); } catch (e) {} };
    const obs = new MutationObserver(check);
    obs.observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
    const tick = () => { if (done) return; check();
      if (performance.now() - t0 > timeout) finish(false); else requestAnimationFrame(tick); };
    check(); requestAnimationFrame(tick);
  });
}"""

# Each interaction: (name, what becomes visible, action body). The body gets the widget root,
# performs the user's action and returns the predicate meaning "its effect is on screen".
# ``arg`` is substituted (a JSON value) before the body runs.
#: helpers every action body can use
RANKING_SHOWS = """const shows = (q) => {
  const r = root.querySelector('[data-role=ranking]');
  const id = r.querySelector('[data-role=ranking-qid]');
  return id && id.textContent === q && r.getAttribute('aria-busy') !== 'true'
    && !r.classList.contains('rr-stale')
    && r.querySelectorAll('[role=row][data-doc-id]').length > 0;
};
const selected = () => { const o = root.querySelector('[role=option][aria-selected=true]');
  return o && o.dataset.queryId; };
const lb = root.querySelector('[data-role=query-list]');
"""
INTERACTIONS: list[tuple[str, str, str]] = [
    ("select a row (click)", "row marked selected", """
      const opts = [...lb.querySelectorAll('[role=option][data-query-id]')];
      const o = opts[ARG % Math.min(opts.length, 8) + 1]; const q = o.dataset.queryId;
      o.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      return () => selected() === q;"""),
    ("select a row (click)", "its ranking shown (kernel)", """
      const opts = [...lb.querySelectorAll('[role=option][data-query-id]')];
      const o = opts[ARG % Math.min(opts.length, 8) + 1]; const q = o.dataset.queryId;
      o.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      return () => shows(q);"""),
    ("ArrowDown", "next row marked", """
      const pos = Number(root.querySelector('[role=option][aria-selected=true]').dataset.pos);
      lb.focus();
      lb.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown', bubbles: true}));
      return () => { const o = root.querySelector('[role=option][aria-selected=true]');
                     return o && Number(o.dataset.pos) === pos + 1 && o.dataset.queryId; };"""),
    ("ArrowDown", "its ranking shown (kernel)", """
      const pos = Number(root.querySelector('[role=option][aria-selected=true]').dataset.pos);
      lb.focus();
      lb.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown', bubbles: true}));
      return () => { const o = root.querySelector('[role=option][aria-selected=true]');
        return o && Number(o.dataset.pos) === pos + 1 && shows(o.dataset.queryId); };"""),
    ("j", "its ranking shown (kernel)", """
      const pos = Number(root.querySelector('[role=option][aria-selected=true]').dataset.pos);
      lb.focus();
      lb.dispatchEvent(new KeyboardEvent('keydown', {key: 'j', bubbles: true}));
      return () => { const o = root.querySelector('[role=option][aria-selected=true]');
        return o && Number(o.dataset.pos) === pos + 1 && shows(o.dataset.queryId); };"""),
    ("type in the filter", "list narrowed (kernel)", """
      const f = root.querySelector('[data-role=filter]');
      const want = 'topic ' + (11 + ARG % 80) + '?';
      f.focus(); f.value = want.slice(0, -1);
      f.dispatchEvent(new InputEvent('input', {bubbles: true, data: 'x', inputType: 'insertText'}));
      const txt = want.slice(0, -1);
      return () => { const o = [...root.querySelectorAll('[role=option][data-query-id]')];
        return o.length > 0 && o.length < 60 && o.every(e => e.textContent.includes(txt + ' ')
            || e.textContent.endsWith(txt)); };"""),
    ("clear the filter", "whole list back (kernel)", """
      const f = root.querySelector('[data-role=filter]');
      const n0 = Number(lb.querySelector('[role=option]').getAttribute('aria-setsize'));
      f.focus(); f.value = '';
      f.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'deleteContentBackward'}));
      // aria-setsize is the kernel's n_visible
      return () => { const o = lb.querySelector('[role=option][data-query-id]');
        return o && Number(o.getAttribute('aria-setsize')) > n0
          && !lb.querySelector('.rr-loading'); };"""),
    ("move K (slider)", "cut line at the new K", """
      const s = root.querySelector('[data-role=k-slider]');
      const k = Number(s.value) >= 40 ? 2 : Number(s.value) + 1;
      s.value = String(k); s.dispatchEvent(new Event('input', {bubbles: true}));
      return () => { const c = root.querySelector('[data-role=ranking] [data-role=cut]');
        return c && (c.getAttribute('aria-label') || '').includes('K = ' + k); };"""),
    ("move K (slider)", "measures at K (kernel)", """
      const s = root.querySelector('[data-role=k-slider]');
      const k = Number(s.value) >= 40 ? 2 : Number(s.value) + 1;
      s.value = String(k); s.dispatchEvent(new Event('input', {bubbles: true}));
      // the row labels of the measures table ("nDCG@7") come with the kernel's panel
      return () => [...root.querySelectorAll('[data-role=panel] table th[scope=row]')]
        .some(th => th.textContent === 'nDCG@' + k)
        && !root.querySelector('[data-role=query-list] .rr-loading');"""),
    ("swap runs A/B", "rankings swapped (kernel)", """
      // the grids may be scrolled (to the cut line after a K change): compare the rows drawn,
      // by rank, and the run names of the titles
      const rowsOf = (g) => new Map([...root.querySelectorAll(
          `[data-role=ranking] .rr-grid-${g} [role=row][data-doc-id]`)]
        .map((e) => [e.dataset.index, e.dataset.docId]));
      const name = (g) => ((root.querySelector(
          `[data-role=ranking] .rr-grid-${g} .rr-run-name`) || {}).textContent || '')
        .replace(/^[AB]: /, '');
      const a0 = rowsOf('a'), b0 = rowsOf('b'), na = name('a'), nb = name('b');
      window.__swap = [na, nb, [...a0].slice(0, 3), [...b0].slice(0, 3)];
      root.querySelector('[data-role=swap]')
        .dispatchEvent(new MouseEvent('click', {bubbles: true}));
      const r = root.querySelector('[data-role=ranking]');
      const same = (now, before) => { let n = 0;
        for (const [i, d] of now) if (before.has(i)) { if (before.get(i) !== d) return -1; n++; }
        return n; };
      return () => {
        if (r.getAttribute('aria-busy') === 'true' || name('a') !== nb || name('b') !== na
            || root.querySelector('[data-role=query-list] .rr-loading')) return false;
        const x = same(rowsOf('a'), b0), y = same(rowsOf('b'), a0);
        return x > 0 && y > 0;
      };"""),
    ("scroll the list a little", "rows at the new position", """
      const rh = lb.querySelector('[role=option]').getBoundingClientRect().height;
      const top = Math.round(lb.scrollTop / rh) + 7;
      lb.scrollTop = top * rh; lb.dispatchEvent(new Event('scroll'));
      return () => !!lb.querySelector(`[role=option][data-pos="${top + 3}"][data-query-id]`);"""),
    ("scroll the list far", "rows there fetched (kernel)", """
      const rh = lb.querySelector('[role=option]').getBoundingClientRect().height;
      const n = Number(lb.querySelector('[role=option]').getAttribute('aria-setsize'));
      const top = Math.floor(n * (0.2 + 0.7 * ((ARG * 0.37) % 1)));
      lb.scrollTop = top * rh; lb.dispatchEvent(new Event('scroll'));
      return () => !!lb.querySelector(`[role=option][data-pos="${top + 3}"][data-query-id]`);"""),
]


def measure(page: Any, action: str, arg: int, timeout: float = 10_000) -> dict[str, Any]:
    body = RANKING_SHOWS + action.replace("ARG", str(arg))
    out = page.evaluate(MEASURE_JS, [body, timeout])
    return dict(out)


DIAGNOSE_JS = """() => {
  const root = document.querySelector('.rr-explorer');
  const lb = root.querySelector('[data-role=query-list]');
  const o = lb.querySelector('[role=option]');
  return {count: (root.querySelector('.rr-count') || {}).textContent,
          setsize: o && o.getAttribute('aria-setsize'),
          loading: lb.querySelectorAll('.rr-loading').length,
          scrollTop: lb.scrollTop, filter: root.querySelector('[data-role=filter]').value,
          rankingBusy: root.querySelector('[data-role=ranking]').getAttribute('aria-busy'),
          error: (root.querySelector('[data-role=error]') || {}).textContent,
          runs: [...root.querySelectorAll('select[data-role^=run-]')].map(e => e.value),
          titles: [...root.querySelectorAll('[data-role=ranking] .rr-grid-title')]
            .map(e => e.textContent),
          first: ['a', 'b'].map(g => { const r = root.querySelector(
            `[data-role=ranking] .rr-grid-${g} [role=row][data-doc-id]`);
            return r && [r.dataset.docId, r.dataset.index]; }),
          rankingQid: (root.querySelector('[data-role=ranking-qid]') || {}).textContent,
          stale: root.querySelector('[data-role=ranking]').className,
          before: window.__swap || null};
}"""


def run(n_queries: int, depth: int, repeat: int, builds: int, only: str = "") -> int:
    from labserver import (
        JupyterLab,
        chromium,
        kernel_run,
        open_notebook,
        run_all_cells,
    )

    with tempfile.TemporaryDirectory(prefix="ragreport-speed-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        files = make_data(work, n_queries, depth)
        print(f"generated {n_queries:,} queries x {depth} results, 2 runs, "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        root = work / "root"
        root.mkdir()
        write_notebook(root / "speed.ipynb", files)
        with JupyterLab(root, work / "lab") as lab, chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            open_notebook(page, lab.base, "speed.ipynb")
            t0 = time.perf_counter()
            run_all_cells(page, timeout=600_000)
            page.wait_for_selector(".rr-explorer [role=option][data-query-id]", timeout=60_000)
            print(f"notebook ran (evaluation + build + display) in "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)
            eval_s, texts_s, first_build = json.loads(kernel_run(
                page, "import json as _j; print(_j.dumps([eval_s, texts_s, build_s]))"))
            code = ("import time as _t\n_t0 = _t.perf_counter()\n"
                    "_e = ragreport.Explorer(results, queries=queries, docs=docs)\n"
                    "print(_t.perf_counter() - _t0)\n_e.close()\ndel _e")
            again = [float(kernel_run(page, code).split()[-1]) for _ in range(builds)]
            page.evaluate("document.querySelector('.rr-explorer').scrollIntoView()")
            # a session: every interaction in turn (the filter typed, then cleared), repeated
            chosen = [x for x in INTERACTIONS if not only or only in x[0]]
            times: list[list[float]] = [[] for _ in chosen]
            failed = [0] * len(chosen)
            for i in range(repeat):
                for j, (name, _visible, action) in enumerate(chosen):
                    got = measure(page, action, i)
                    if got["ok"]:
                        times[j].append(got["frame"])
                    else:
                        failed[j] += 1
                        print(f"    {name}: timed out:", page.evaluate(DIAGNOSE_JS), flush=True)
                    page.wait_for_timeout(250)  # late replies land before the next action
                print(f"  round {i + 1} of {repeat} done", flush=True)
            rows = [(name, visible, times[j], failed[j])
                    for j, (name, visible, _) in enumerate(chosen)]
            page.close()
    print()
    print(f"Explorer speed: {n_queries:,} queries, 2 runs of {depth} results, JupyterLab + "
          f"headless Chromium ({repeat} repetitions each); load average at the end "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"evaluate 2 runs: {eval_s:.2f} s; load_texts (queries + {300_000:,} passages): "
          f"{texts_s:.2f} s (not part of the build)")
    print(f"build ragreport.Explorer(results, queries=..., docs=...) in the kernel, texts "
          f"already loaded: first {first_build:.3f} s; again (per-result caches warm) median "
          f"{statistics.median(again):.3f} s over {len(again)} (goal < {BUILD_GOAL_S:.0f} s)")
    print()
    print(f"| interaction | visible when | median ms | p90 ms | max ms | goal < {GOAL_MS:.0f} ms "
          f"(median) | every time |")
    print("|---|---|---:|---:|---:|:---:|:---:|")
    worst_ok = True
    for name, visible, times, failed in rows:
        if times:
            med, mx = statistics.median(times), max(times)
            p90 = sorted(times)[min(len(times) - 1, math.ceil(0.9 * len(times)) - 1)]
            ok = med < GOAL_MS and not failed
            worst_ok &= ok
            print(f"| {name} | {visible} | {med:.1f} | {p90:.1f} | {mx:.1f} | "
                  f"{'yes' if ok else 'NO'}{f' ({failed} timed out)' if failed else ''} | "
                  f"{'yes' if mx < GOAL_MS and not failed else 'no'} |")
            print(f"<!-- {name} / {visible}: {', '.join(f'{t:.0f}' for t in times)} -->")
        else:
            worst_ok = False
            print(f"| {name} | {visible} | - | - | - | NO (all {failed} timed out) | no |")
    if errors:
        print("page errors:", *errors[:5], sep="\n  ")
    return 0 if worst_ok and first_build < BUILD_GOAL_S else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5, help="repetitions of each interaction")
    ap.add_argument("--builds", type=int, default=3, help="Explorer constructions timed")
    ap.add_argument("--only", default="", help="only the interactions whose name has this")
    args = ap.parse_args(argv)
    return run(args.queries, args.depth, args.repeat, args.builds, args.only)


if __name__ == "__main__":
    raise SystemExit(main())
