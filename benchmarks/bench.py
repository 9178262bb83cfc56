"""ragreport vs pytrec_eval, ranx and ir_measures at MS MARCO scale (issue 5).

Usage::

    python benchmarks/bench.py                        # small, msmarco and wide, 3 repetitions
    python benchmarks/bench.py --quick                # small only
    python benchmarks/bench.py --sizes msmarco --repeat 5 --tools ragreport,pytrec_eval

Each tool runs in its own subprocess per phase, so peak RSS (``ru_maxrss``) is per tool and
per phase. Times are medians over the repetitions (done inside the process, after the tool's
modules are imported). See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from gen_data import SIZES, DataFiles, ensure_data  # noqa: E402
from tools import (  # noqa: E402
    ALL_K,
    CUTOFFS_7,
    TOOLS,
    IrMeasures,
    Tool,
    canon_name,
    is_installed,
    measure_set,
)

TOL = 1e-9
PEERS = ("pytrec_eval", "ranx", "ir_measures")
Result = dict[str, Any]


# ---------------------------------------------------------------------------------------------
# worker side (runs in a subprocess)
# ---------------------------------------------------------------------------------------------
def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _timed_reps(fn: Callable[[], Any], reps: int, budget: float) -> tuple[list[float], Any]:
    """Call ``fn`` up to ``reps`` times (fewer once ``budget`` seconds are spent)."""
    times: list[float] = []
    out: Any = None
    for _ in range(reps):
        out = None
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        if sum(times) > budget:
            break
    return times, out


def _save_values(path: str, qids: list[str], names: list[str], mat: np.ndarray) -> None:
    np.savez(path, qids=np.array(qids, dtype=str), names=np.array(names, dtype=str),
             values=np.asarray(mat, dtype=np.float64))


def worker(args: argparse.Namespace) -> Result:
    out: Result = {"tool": args.worker, "phase": args.phase}
    reps, budget = args.repeat, args.phase_budget
    first_extra = 1 if args.worker == "ranx" else 0  # ranx: a first (JIT/cache) call, then warm
    if args.phase == "parse":
        import pyarrow.csv as pacsv

        cols = ["qid", "q0", "docid", "rank", "score", "tag"]

        def parse() -> Any:
            return pacsv.read_csv(args.run, read_options=pacsv.ReadOptions(column_names=cols),
                                  parse_options=pacsv.ParseOptions(delimiter=" "))

        times, _ = _timed_reps(parse, reps, budget)
        out.update(times=times, rss_mib=_rss_mib())
        return out

    tool: Tool = TOOLS[args.worker]()
    tool.warm_imports()
    out["rss_after_import_mib"] = _rss_mib()
    ms7, ms_all = measure_set(CUTOFFS_7), measure_set(ALL_K)

    if args.phase in ("e2e7", "e2eall"):
        ms = ms7 if args.phase == "e2e7" else ms_all
        times, means = _timed_reps(lambda: tool.end_to_end(args.qrels, args.run, ms),
                                   reps + first_extra, budget)
        out.update(times=times, rss_mib=_rss_mib(), means={k: means[k] for k in list(means)[:3]})
        return out

    if args.phase == "values":  # per-query values at every K, for the agreement checks
        state = tool.load(args.qrels, args.run)
        if isinstance(tool, IrMeasures):
            qids, mat = tool.per_query_from(state, ms_all)
        else:
            qids, mat = tool.per_query(tool.evaluate(state, ms_all), ms_all)
        _save_values(args.dump, qids, [canon_name(m) for m in ms_all], mat)
        out["rss_mib"] = _rss_mib()
        return out

    # split: load, evaluation at 7 cutoffs, evaluation at every K (in memory)
    t_load, state = _timed_reps(lambda: tool.load(args.qrels, args.run), reps, budget)
    # evaluation = in-memory inputs -> the means: a tool that computes lazily (ragreport's
    # curves are computed when first asked for) pays here for everything it is asked
    t7, _ = _timed_reps(lambda: tool.means(tool.evaluate(state, ms7), ms7),
                        reps + first_extra, budget)
    t_all: list[float] = []
    res_all: Any = None
    if not args.skip_all_k:
        def evaluate_all() -> Any:
            res = tool.evaluate(state, ms_all)
            tool.means(res, ms_all)
            return res

        t_all, res_all = _timed_reps(evaluate_all, reps + first_extra, budget)
    out.update(load=t_load, eval7=t7, evalall=t_all, rss_mib=_rss_mib())
    if args.dump:
        if isinstance(tool, IrMeasures):
            qids, mat = tool.per_query_from(state, ms_all)
        else:
            qids, mat = tool.per_query(res_all, ms_all)
        _save_values(args.dump, qids, [canon_name(m) for m in ms_all], mat)
    return out


# ---------------------------------------------------------------------------------------------
# driver side
# ---------------------------------------------------------------------------------------------
def run_worker(tool: str, phase: str, files: DataFiles, args: argparse.Namespace,
               run_path: Path | None = None, dump: Path | None = None,
               skip_all_k: bool = False) -> Result:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out_path = Path(tmp.name)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", tool, "--phase", phase,
           "--qrels", str(files.qrels), "--run", str(run_path or files.run),
           "--repeat", str(args.repeat), "--phase-budget", str(args.phase_budget),
           "--out", str(out_path)]
    if dump is not None:
        cmd += ["--dump", str(dump)]
    if skip_all_k:
        cmd += ["--skip-all-k"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    wall = time.perf_counter() - t0
    try:
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            return {"tool": tool, "phase": phase, "error": " | ".join(tail) or
                    f"exit {proc.returncode}", "wall": wall}
        res: Result = json.loads(out_path.read_text())
        res["wall"] = wall
        # peak RSS of the child as the kernel saw it (ru_maxrss of the finished process)
        return res
    finally:
        out_path.unlink(missing_ok=True)


def _med(xs: list[float] | None, skip_first: bool = False) -> float | None:
    if not xs:
        return None
    use = xs[1:] if skip_first and len(xs) > 1 else xs
    return statistics.median(use)


def _fmt(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "–"
    return f"{x:.{digits}f}" if x < 100 else f"{x:.0f}"


def compare(a: Path, b: Path, names: set[str] | None = None) -> tuple[float, str, int, int]:
    """(max |a - b|, where, shared measures, shared queries) over shared measures and queries."""
    da, db = np.load(a), np.load(b)
    qa, qb = list(da["qids"]), list(db["qids"])
    na, nb = list(da["names"]), list(db["names"])
    shared = [n for n in na if n in nb and (names is None or n in names)]
    ib = {q: i for i, q in enumerate(qb)}
    common = [q for q in qa if q in ib]
    ra = np.array([qa.index(q) for q in common]) if len(qa) < 2000 else \
        np.array([i for i, q in enumerate(qa) if q in ib])
    rb = np.array([ib[q] for q in common]) if len(qa) < 2000 else \
        np.array([ib[q] for q in qa if q in ib])
    va = da["values"][np.ix_(ra, [na.index(n) for n in shared])]
    vb = db["values"][np.ix_(rb, [nb.index(n) for n in shared])]
    diff = np.abs(va - vb)
    if diff.size == 0:
        return 0.0, "", 0, 0
    i, j = np.unravel_index(int(np.nanargmax(diff)), diff.shape)
    extra = len(qa) - len(common) + len(qb) - len(common)
    where = f"{shared[j]} query {common[i]}" + (f" ({extra} unshared queries)" if extra else "")
    return float(np.nanmax(diff)), where, len(shared), len(common)


#: pyarrow's bare parse of the msmarco run on the machine the issue's figures come from
ISSUE_PARSE_S = 0.5


def _ragreport_command() -> list[str]:
    script = Path(sysconfig.get_path("scripts")) / "ragreport"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ragreport"]


def time_commands() -> dict[str, float]:
    cmds = {"python -c pass (baseline)": [sys.executable, "-c", "pass"],
            "python -c 'import ragreport'": [sys.executable, "-c", "import ragreport"],
            "ragreport --help": [*_ragreport_command(), "--help"]}
    out: dict[str, float] = {}
    for label, cmd in cmds.items():
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run(cmd, capture_output=True, cwd=REPO, check=False)
            times.append(time.perf_counter() - t0)
        out[label] = statistics.median(times)
    return out


def _tree_cpu(pid: int, seen: dict[int, float]) -> None:
    """Record the CPU time (user + system) of process ``pid`` and of its descendants."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    for proc in procs:
        try:
            t = proc.cpu_times()
            seen[proc.pid] = t.user + t.system
        except psutil.Error:
            pass


def _run_measured(cmd: list[str], cwd: str) -> tuple[float, float | None, Any, int, str]:
    """Wall time, CPU time of the process and of every process it starts (the report's
    workers and their forkserver, sampled every 0.1 s until they exit; None without psutil),
    rusage and exit status of one command."""
    try:
        import psutil
    except ImportError:
        psutil = None
    seen: dict[int, float] = {}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    while psutil is not None:
        got = os.wait4(proc.pid, os.WNOHANG)
        if got[0]:
            _, status, usage = got
            break
        _tree_cpu(proc.pid, seen)
        time.sleep(0.1)
    else:
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if psutil is not None:  # the main process's own total, now that it has exited
        seen[proc.pid] = usage.ru_utime + usage.ru_stime
    err = proc.stderr.read().decode() if proc.stderr else ""
    return wall, (sum(seen.values()) if psutil is not None else None), usage, status, err


def time_reports(files: DataFiles, repeat: int) -> dict[str, Any]:
    """``ragreport report QRELS RUN --html`` and ``ragreport evaluate QRELS RUN`` as a user
    runs them: wall time and CPU time of each whole command.

    The report with the default worker processes and with ``--jobs 1``, and the evaluation
    (files to the means on the terminal: reading, evaluating, printing), alternated run by
    run so that a drift of the machine's speed touches all alike (issue 14: the report within
    2x of the evaluation). CPU time counts every process of the command (the report's worker
    processes too; needs psutil): on a machine shared with other work it varies less than the
    wall time. Peak RSS is the main process's (``wait4``).
    """
    out: dict[str, Any] = {"evaluate": [], "default": [], "jobs1": [], "rss_mib": 0.0,
                           "load": [], "cpu": {"evaluate": [], "default": [], "jobs1": []}}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            for key, cmd in (
                    ("evaluate", ["evaluate", str(files.qrels), str(files.run)]),
                    ("default", ["report", str(files.qrels), str(files.run),
                                 "--html", str(Path(tmp) / "report.html")]),
                    ("jobs1", ["report", str(files.qrels), str(files.run),
                               "--html", str(Path(tmp) / "report.html"), "--jobs", "1"])):
                out["load"].append(os.getloadavg()[0])
                wall, cpu, usage, status, err = _run_measured([*_ragreport_command(), *cmd],
                                                              tmp)
                if os.waitstatus_to_exitcode(status) != 0:
                    return {"error": err.strip().splitlines()[-1:] or [f"exit {status}"]}
                out[key].append(wall)
                if cpu is not None:
                    out["cpu"][key].append(cpu)
                if key != "evaluate":
                    out["rss_mib"] = max(out["rss_mib"], usage.ru_maxrss / 1024)
    return out


def report_line(size: str, rep: dict[str, Any]) -> str:
    """The report timings of one size and their ratio to the evaluation, as printed."""
    if "error" in rep:
        return f"ragreport report --html: error: {rep['error']}"
    t_ev, t_def, t_one = _med(rep["evaluate"]), _med(rep["default"]), _med(rep["jobs1"])
    runs = ", ".join(f"{x:.2f}" for x in rep["default"])
    evs = ", ".join(f"{x:.2f}" for x in rep["evaluate"])
    pairs = ", ".join(f"{d / e:.2f}x" for d, e in zip(rep["default"], rep["evaluate"],
                                                      strict=True))
    cpu = ""
    c = rep.get("cpu", {})
    if c.get("evaluate") and c.get("default") and c.get("jobs1"):
        c_ev, c_def, c_one = (_med(c[k]) for k in ("evaluate", "default", "jobs1"))
        cpu = (f". CPU time of all the command's processes (medians): evaluate {_fmt(c_ev)} s, "
               f"report {_fmt(c_def)} s ({_fmt(c_one)} s with --jobs 1): report / evaluate = "
               f"{c_def / c_ev:.2f}x ({c_one / c_ev:.2f}x)")
    return (f"{size}: `ragreport evaluate QRELS RUN` {_fmt(t_ev)} s ({evs}); `ragreport report "
            f"QRELS RUN --html report.html` {_fmt(t_def)} s ({runs}) with the default worker "
            f"processes, {_fmt(t_one)} s with `--jobs 1` (medians of {len(rep['default'])}, "
            f"alternated; 1-minute load average {min(rep['load']):.1f}-{max(rep['load']):.1f} "
            f"on {os.cpu_count()} CPUs); report / evaluate = "
            f"{t_def / t_ev:.2f}x (--jobs 1: {t_one / t_ev:.2f}x; round by round: "
            f"{pairs}); main process peak RSS {rep['rss_mib']:.0f} MiB" + cpu)


def bench_size(size: str, tools: list[str], args: argparse.Namespace,
               checks: list[tuple[str, bool, str]]) -> dict[str, Result]:
    files = ensure_data(size, notie=size == "small")
    dump_dir = files.qrels.parent
    print(f"\n## {size}: {files.spec.queries:,} queries x {files.spec.depth} = "
          f"{files.lines:,} run lines ({files.run.stat().st_size / 2**20:.0f} MiB)", flush=True)
    results: dict[str, Result] = {}
    r = run_worker("pyarrow", "parse", files, args)
    results["pyarrow"] = r
    print(f"[{size}] pyarrow parse: {_fmt(_med(r.get('times')))} s", flush=True)
    for tool in tools:
        if not is_installed(tool):
            results[tool] = {"missing": True}
            continue
        dump = None
        if tool in ("ragreport", "pytrec_eval") or (tool == "ir_measures" and size == "small"):
            dump = dump_dir / f"{size}.{tool}.values.npz"
            dump.unlink(missing_ok=True)
        skip = tool in ("ranx", "ir_measures") and size != "small" and not args.peer_all_k
        rec: Result = {"split": run_worker(tool, "split", files, args, dump=dump,
                                           skip_all_k=skip)}
        rec["e2e7"] = run_worker(tool, "e2e7", files, args)
        if tool == "ragreport" or args.peer_all_k:
            rec["e2eall"] = run_worker(tool, "e2eall", files, args)
        rec["dump"] = str(dump) if dump and dump.exists() else None
        results[tool] = rec
        errs = [f"{ph}: {v['error']}" for ph, v in rec.items() if isinstance(v, dict)
                and "error" in v]
        print(f"[{size}] {tool}: done" + (f" (ERRORS: {errs})" if errs else ""), flush=True)

    if "ragreport" in results and not results["ragreport"].get("missing") and size != "small":
        results["report"] = time_reports(files, args.repeat)
        print(f"[{size}] ragreport report --html: done", flush=True)

    # agreement
    rr_dump = results.get("ragreport", {}).get("dump")
    for tool in ("pytrec_eval", "ir_measures"):
        other = results.get(tool, {}).get("dump")
        if rr_dump and other:
            diff, where, n_m, n_q = compare(Path(rr_dump), Path(other))
            ok = diff <= TOL
            checks.append((f"{size}: ragreport vs {tool}, per query, {n_m} measures "
                           f"(P, R, nDCG @1..100, RR) x {n_q} queries: max |diff| = {diff:.3g}"
                           + ("" if ok else f" at {where}"), ok, "agreement"))
            if not ok:
                print(f"!!! AGREEMENT FAILURE ragreport vs {tool} on {size}: max diff {diff:.3g} "
                      f"at {where}", flush=True)
    if size == "small" and "ranx" in tools and is_installed("ranx") and files.run_notie:
        a, b = dump_dir / "small.notie.ragreport.npz", dump_dir / "small.notie.ranx.npz"
        ra = run_worker("ragreport", "values", files, args, run_path=files.run_notie, dump=a)
        rb = run_worker("ranx", "values", files, args, run_path=files.run_notie, dump=b)
        if "error" in ra or "error" in rb:
            checks.append((f"small (tie-free copy): ragreport vs ranx: could not run "
                           f"({ra.get('error') or rb.get('error')})", False, "agreement"))
        else:
            diff, where, n_m, n_q = compare(a, b)
            ok = diff <= TOL
            checks.append((f"small, tie-free copy of the run (4 extra decimals decreasing in file "
                           f"order, so no tie): ragreport vs ranx, per query, {n_m} measures x "
                           f"{n_q} queries: max |diff| = {diff:.3g}"
                           + ("" if ok else f" at {where}"), ok, "agreement"))
    return results


def table(size: str, results: dict[str, Result], tools: list[str]) -> tuple[str, dict[str, Any]]:
    """Markdown table for one size, and the numbers the targets need."""
    parse_t = _med(results["pyarrow"].get("times"))
    rr = results.get("ragreport", {})
    rr_all = _med(rr.get("e2eall", {}).get("times"))
    rr_7 = _med(rr.get("e2e7", {}).get("times"))
    lines = [
        "| tool | load s | eval@7 s | eval all-K s | e2e@7 s | e2e all-K s | peak RSS e2e MiB "
        "| speedup: ragreport e2e all-K vs tool e2e@7 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    nums: dict[str, Any] = {"parse": parse_t, "rr_all": rr_all, "rr_7": rr_7}
    notes: list[str] = []
    for tool in tools:
        rec = results.get(tool, {})
        if rec.get("missing"):
            lines.append(f"| {tool} | not installed | | | | | | |")
            continue
        sp, e7, ea = rec.get("split", {}), rec.get("e2e7", {}), rec.get("e2eall", {})
        if "error" in sp or "error" in e7:
            lines.append(f"| {tool} | error: {(sp.get('error') or e7.get('error'))[:80]} "
                         "| | | | | | |")
            continue
        warm = tool == "ranx"
        load = _med(sp.get("load"))
        ev7, evall = _med(sp.get("eval7"), warm), _med(sp.get("evalall"), warm)
        t7, tall = _med(e7.get("times"), warm), _med(ea.get("times"), warm)
        rss = [x for x in (e7.get("rss_mib"), ea.get("rss_mib")) if x is not None]
        rss_s = " / ".join(f"{x:.0f}" for x in rss)
        speed = "–" if tool == "ragreport" or not (rr_all and t7) else f"{t7 / rr_all:.1f}x"
        lines.append(f"| {tool} | {_fmt(load)} | {_fmt(ev7)} | {_fmt(evall)} | {_fmt(t7)} | "
                     f"{_fmt(tall)} | {rss_s} | {speed} |")
        nums[tool] = {"e2e7": t7, "e2eall": tall, "rss": max(rss) if rss else None}
        reps = {ph: len(v) for ph, v in (("load", sp.get("load")), ("eval@7", sp.get("eval7")),
                                         ("eval all-K", sp.get("evalall")),
                                         ("e2e@7", e7.get("times")),
                                         ("e2e all-K", ea.get("times"))) if v}
        if warm:
            notes.append(f"ranx first call in a fresh process (numba cache load; JIT compile when "
                         f"the cache is cold): eval@7 {_fmt(sp['eval7'][0])} s, eval all-K "
                         f"{_fmt(sp['evalall'][0]) if sp.get('evalall') else 'skipped'} s, "
                         f"e2e@7 {_fmt(e7['times'][0])} s; the table "
                         "shows warm calls")
        fewer = {ph: n - (1 if warm and ph != "load" else 0) for ph, n in reps.items()}
        cut = [f"{ph}: {n}" for ph, n in fewer.items() if n < results["_repeat"]]
        if cut:
            notes.append(f"{tool}: fewer repetitions (phase time budget): {', '.join(cut)}")
    if size != "small":
        notes.append("ranx and ir_measures eval all-K: timed on small only by default "
                     "(minutes per size here); pass --peer-all-k")
    lines.append(f"| pyarrow parse of the run (floor) | {_fmt(parse_t)} | | | | | "
                 f"{results['pyarrow'].get('rss_mib', 0):.0f} | |")
    text = "\n".join(lines)
    if rr_all and parse_t:
        text += (f"\n\nragreport e2e all-K / pyarrow parse = {rr_all / parse_t:.2f}x; "
                 f"ragreport e2e@7 / pyarrow parse = {(rr_7 or 0) / parse_t:.2f}x")
    rep = results.get("report")
    if rep and "error" in rep:
        text += f"\n\nragreport report --html: error: {rep['error']}"
    elif rep:
        t_def, t_one = _med(rep["default"]), _med(rep["jobs1"])
        nums["report"] = t_def
        over = t_def / parse_t if parse_t and t_def else None
        text += (f"\n\nHTML report, `ragreport report QRELS RUN --html report.html` (files to "
                 f"page, whole command, median of {len(rep['default'])}): {_fmt(t_def)} s with "
                 f"the default worker processes ({_fmt(over)}x "
                 f"the pyarrow parse), {_fmt(t_one)} s with `--jobs 1`; main process peak RSS "
                 f"{rep['rss_mib']:.0f} MiB")
        nums["report_ratio"] = t_def / _med(rep["evaluate"])
        text += "\n\n" + report_line(size, rep)
    rr_rss = rr.get("e2eall", {}).get("rss_mib")
    nums["rr_rss"] = max(x for x in (rr_rss, rr.get("e2e7", {}).get("rss_mib"), 0) if x is not None)
    text += ("\n\nPeak RSS column: e2e@7 process / e2e all-K process (each tool and phase in its "
             "own process). e2e = files -> means, tool already imported.")
    if notes:
        text += "\n" + "\n".join(f"- {n}" for n in notes)
    return text, nums


def targets(all_nums: dict[str, dict[str, Any]], cmds: dict[str, float]) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []

    def ratio(size: str, peer: str) -> float | None:
        n = all_nums.get(size, {})
        p = n.get(peer)
        if not isinstance(p, dict) or not p.get("e2e7") or not n.get("rr_all"):
            return None
        return float(p["e2e7"]) / float(n["rr_all"])

    for size, peer, need in (("msmarco", "pytrec_eval", 3.0), ("msmarco", "ranx", 6.0),
                             ("wide", "pytrec_eval", 3.0)):
        if size not in all_nums:
            continue
        r = ratio(size, peer)
        label = (f"{size}: ragreport e2e all-K >= {need:g}x faster than {peer} e2e@7")
        if r is None:
            out.append((f"{label}: not measured ({peer} missing or failed)", False))
        else:
            out.append((f"{label}: {r:.2f}x", r >= need))
    for size, limit in (("msmarco", 1024.0), ("wide", 2048.0)):
        if size in all_nums:
            rss = all_nums[size].get("rr_rss")
            out.append((f"{size}: ragreport peak RSS < {limit:.0f} MiB: {rss:.0f} MiB",
                        bool(rss) and rss < limit))
    for size, n in all_nums.items():
        if n.get("rr_all") and n.get("parse"):
            r = n["rr_all"] / n["parse"]
            out.append((f"{size}: ragreport e2e all-K within 3x of pyarrow parse: {r:.2f}x",
                        r <= 3.0))
    for label, t in cmds.items():
        if "baseline" in label:
            continue
        out.append((f"{label} < 0.3 s: {t:.3f} s", t < 0.3))
    n = all_nums.get("msmarco", {})
    if n.get("report"):
        # the issue's 5 s was set on a machine where pyarrow parsed this run in about 0.5 s
        scaled = 5.0 * n["parse"] / ISSUE_PARSE_S if n.get("parse") else None
        out.append((f"msmarco: HTML report built in < 5 s: {n['report']:.2f} s (the issue's "
                    f"machine parsed the run in about {ISSUE_PARSE_S} s, this one in "
                    f"{_fmt(n.get('parse'))} s: 5 s there is {_fmt(scaled)} s here)",
                    n["report"] < 5.0))
    out += report_targets(all_nums)
    return out


def report_targets(all_nums: dict[str, dict[str, Any]]) -> list[tuple[str, bool]]:
    """Issue 14: the whole HTML report within 2x of the evaluation, at each size timed."""
    return [(f"{size}: HTML report within 2x of `ragreport evaluate` (default workers, "
             f"medians): {n['report_ratio']:.2f}x", n["report_ratio"] <= 2.0)
            for size, n in all_nums.items() if n.get("report_ratio")]


def reports_only(sizes: list[str], args: argparse.Namespace) -> None:
    """``--reports-only``: the report and evaluate commands alone, every size in one run."""
    all_nums: dict[str, dict[str, Any]] = {}
    raw: dict[str, Any] = {}
    for size in sizes:
        files = ensure_data(size, notie=False)
        rep = time_reports(files, args.repeat)
        raw[size] = rep
        print(report_line(size, rep), flush=True)
        if "error" not in rep:
            all_nums[size] = {"report_ratio": _med(rep["default"]) / _med(rep["evaluate"])}
    print("\n### Targets (issue 14)\n")
    for text, ok in report_targets(all_nums):
        print(f"- {'PASS' if ok else 'FAIL'}: {text}")
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1, default=str))


def main() -> None:
    ap = argparse.ArgumentParser(description="ragreport vs peers at MS MARCO scale (issue 5)")
    ap.add_argument("--sizes", default=None, help="small,msmarco,wide (by default all three; "
                    "msmarco,wide with --reports-only)")
    ap.add_argument("--quick", action="store_true", help="small only")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions per phase (median)")
    ap.add_argument("--tools", default="ragreport,pytrec_eval,ranx,ir_measures")
    ap.add_argument("--phase-budget", type=float, default=60.0,
                    help="stop repeating a phase once it has taken this many seconds")
    ap.add_argument("--peer-all-k", action="store_true",
                    help="time ranx and ir_measures at every K beyond small, and every peer "
                    "end to end at every K (slow: minutes per size)")
    ap.add_argument("--json", type=Path, help="write all raw numbers here")
    ap.add_argument("--reports-only", action="store_true",
                    help="time only `ragreport report --html` (default workers and --jobs 1) "
                    "against `ragreport evaluate`, alternated, at each size (msmarco and wide "
                    "unless --sizes), and print the report / evaluate ratios")
    # worker (internal)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--qrels", help=argparse.SUPPRESS)
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--dump", help=argparse.SUPPRESS)
    ap.add_argument("--skip-all-k", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        res = worker(args)
        Path(args.out).write_text(json.dumps(res))
        return

    default_sizes = "msmarco,wide" if args.reports_only else "small,msmarco,wide"
    sizes = ["small"] if args.quick else [s.strip() for s in (args.sizes or default_sizes)
                                          .split(",") if s.strip()]
    bad = [s for s in sizes if s not in SIZES]
    if bad:
        ap.error(f"unknown size(s) {bad}; choose from {', '.join(SIZES)}")
    if args.reports_only:
        print(f"# ragreport report vs evaluate ({platform.python_implementation()} "
              f"{platform.python_version()}, {os.cpu_count()} CPUs, repeat={args.repeat})",
              flush=True)
        reports_only(sizes, args)
        return
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    if "ragreport" not in tools:
        tools.insert(0, "ragreport")
    print(f"# ragreport benchmark ({platform.python_implementation()} "
          f"{platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}, "
          f"repeat={args.repeat})")
    print("installed: " + ", ".join(f"{t} {'yes' if is_installed(t) else 'not installed'}"
                                    for t in tools), flush=True)
    checks: list[tuple[str, bool, str]] = []
    all_nums: dict[str, dict[str, Any]] = {}
    raw: dict[str, Any] = {}
    tables: list[str] = []
    for size in sizes:
        res = bench_size(size, tools, args, checks)
        res["_repeat"] = args.repeat
        text, nums = table(size, res, tools)
        all_nums[size] = nums
        raw[size] = res
        tables.append(f"### {size} ({SIZES[size].queries:,} x {SIZES[size].depth})\n\n{text}")
        print("\n" + tables[-1], flush=True)
    cmds = time_commands()
    raw["commands"] = cmds
    print("\n### Start-up (median of 5 subprocess runs)\n")
    for label, t in cmds.items():
        print(f"- `{label}`: {t:.3f} s")
    print("\n### Agreement\n")
    for text, ok, _ in checks:
        print(f"- {'PASS' if ok else 'FAIL'}: {text}")
    print("- ranx is compared only on a tie-free copy of the small run: with tied scores its "
          "order within a tie is not trec_eval's (score desc, then doc id desc).")
    print("\n### Targets (issue 5)\n")
    tg = targets(all_nums, cmds)
    for text, ok in tg:
        print(f"- {'PASS' if ok else 'FAIL'}: {text}")
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1, default=str))
    if any(not ok for _, ok, kind in checks if kind == "agreement"):
        print("\n!!! AGREEMENT FAILED (see above)", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
