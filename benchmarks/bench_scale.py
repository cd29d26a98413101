"""Scale: a model sweep of 10k ... 1M cases, expanded lazily, run into a fresh store.

Target (issue 19, item 6; issue 44): a 1,000,000-case sweep expands lazily (memory constant in the
number of cases), keeps a flat per-case cost (10k vs 1M within 1.2x: the smallest sweep is the
reference, and a 1,000-case sweep is dominated by start-up, which flatters every larger one) and
peak RSS under 1 GB.

Each size runs in its own process (so peak RSS is that sweep's alone) with the sweep flags a user
would give: ``stream_entry`` (what ``suite run --technique ... --param ...`` uses) and
``run_cases`` at ``-j 1`` (the default: one isolated worker, commits batched) on a closed-form
technique of a few microseconds, so what is measured is the suite's own cost per case
(expansion + runner + worker + store). ``--in-process`` measures ``-j 1 --in-process`` instead,
which commits every case at once (so an abort of the coordinating process loses nothing that
finished): a transaction per case. Prints wall and CPU seconds (the child's own and its reaped
workers'), us/case, their ratios to the smallest sweep, peak RSS and the load average (the machine
is shared: judge flatness by CPU), and where the CPU went: the coordinator's main thread
(expansion, runner, buffering each outcome; its share of the commits left out), the store's commits
(``Writer._write``, on its flusher thread but for the last) and the worker process.

The smallest sweep is the reference, and at 10k it lasts under a second: one round of it moved
68-110 us/case between runs at one load (docs/performance-history.md, "Store at scale, 0.3.4"). So it runs
``--ref-rounds`` times (5 by default) in each round, and the table prints its minimum and median
CPU per case; FLAT is printed against both: against the minimum (the fastest reference, so the
strictest ratio: the headline) and against the median.

``--baseline-src DIR`` runs a baseline checkout too (its ``suite`` and ``plugins`` first on
``PYTHONPATH``; this tree's likewise), each size of each tree in turn, ``--rounds`` times, and
prints each tree's table from its best round by CPU.

Usage::

    python benchmarks/bench_scale.py [--sizes 10000,1000000] [--in-process] [--baseline-src DIR --rounds 2]
                                     [--ref-rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

from suite import hookimpl
from suite.technique import Paper, Param, Result, Technique, Variant


def _evaluate(scenario):
    p = scenario.params
    t = p["size"] / 1e9 + p["work"] * (0.5 if scenario.variant == "fast" else 1.0)
    return Result().add("time", t, "s", "lower")


SCALE = Technique(
    name="scale", title="closed-form technique for the scale benchmark", category="communication",
    paper=Paper(title="none"), variants=[Variant("base", "baseline", baseline=True), Variant("fast", "half work")],
    fidelities={"model": _evaluate},
    parameters={"size": Param(float, 1e6, unit="B"), "work": Param(float, 1e-3, unit="s")},
    needs_workload=False, needs_profile=False,
)


def child(n: int, store: str, isolate: bool) -> dict:
    from suite.context import Context
    from suite.registry import Registry
    from suite.results import Store
    from suite.runner import ExecOptions, run_cases
    from suite.runner.case import Resolver
    from suite.runner.experiment import stream_entry

    mod = types.ModuleType("scale_plugin")
    mod.suite_techniques = hookimpl(lambda: [SCALE])
    reg = Registry(entry_points_=[], modules=[("scale", mod)])
    ctx = Context.build(registry=reg)
    side = max(1, int(round((n / 2) ** 0.5)))
    sizes = [float(1000 + i) for i in range(side)]
    works = [1e-3 * (1 + i) for i in range(max(1, n // (2 * side)))]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    flusher = _clock_commits()
    t0, c0, m0, w0 = time.perf_counter(), _cpu(), time.thread_time(), _children_cpu()
    cases = stream_entry({"technique": "scale", "params": {"size": sizes, "work": works}},
                         resolver=Resolver(context=ctx), max_cases=2_000_000)
    with Store(store) as st:
        s = run_cases(cases, st, options=ExecOptions(jobs=1, isolate=isolate, artifacts="summary"), context=ctx)
    dt, cpu = time.perf_counter() - t0, _cpu() - c0
    assert s.ok == len(cases), s.message()
    return {"cases": len(cases), "seconds": dt, "cpu": cpu, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rss_start_mb": rss0 / 1024, "main": time.thread_time() - m0 - flusher[1], "flusher": flusher[0],
            "worker": _children_cpu() - w0}


def _clock_commits() -> list[float]:
    """Sum the CPU time of the store's commits (``Writer._write``, mostly on its flusher thread;
    the last one on the main thread) into the returned list: [all, those on the main thread]."""
    import threading

    from suite.results import writer

    total = [0.0, 0.0]
    orig = writer.Writer._write

    def timed(self, buf, links):
        t = time.thread_time()
        try:
            return orig(self, buf, links)
        finally:
            dt = time.thread_time() - t
            total[0] += dt
            if threading.current_thread() is threading.main_thread():
                total[1] += dt
    writer.Writer._write = timed
    return total


def _cpu() -> float:
    """CPU seconds (user + sys) of this process and its reaped children (the pool's worker)."""
    a = resource.getrusage(resource.RUSAGE_SELF)
    return a.ru_utime + a.ru_stime + _children_cpu()


def _children_cpu() -> float:
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return b.ru_utime + b.ru_stime


def _run_child(n: int, folder: str, in_process: bool, src: str | None) -> dict:
    """One sweep of *n* cases in a child process (*src*: the tree it imports, None: this one)."""
    tree = src or str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tree, str(Path(tree) / "plugins")]))
    store = Path(folder) / f"{n}-{abs(hash(tree))}.sqlite"
    out = subprocess.run([sys.executable, __file__, "--child", str(n), "--store", str(store)]
                         + (["--in-process"] if in_process else []),
                         capture_output=True, text=True, check=True, env=env)
    store.unlink(missing_ok=True)
    row: dict = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{tree}: {row['cases']:>9,} cases: {row['seconds']:.1f} s wall, {row['cpu']:.1f} s CPU",
          file=sys.stderr, flush=True)
    return row


def _per_case(r: dict, key: str = "cpu") -> float:
    return float(r[key]) / r["cases"]


def _table(title: str, rows: list[dict], refs: list[dict]) -> None:
    """Print one tree's rows (the best round of each size) and its flatness against *refs*, every
    round of the smallest sweep (its minimum and median CPU per case)."""
    base = min(_per_case(r, "seconds") for r in refs)
    cmin = min(_per_case(r) for r in refs)
    cmed = statistics.median(_per_case(r) for r in refs)
    print(f"## {title}")
    print("| cases | wall s | wall us/case | wall x smallest | CPU s | CPU us/case | CPU x smallest | peak RSS MB "
          "| of CPU us/case: main thread | store commits | worker |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        per, cper = _per_case(r, "seconds"), _per_case(r)
        parts = " | ".join(f"{1e6 * r[k] / r['cases']:.0f}" if k in r else "-" for k in ("main", "flusher", "worker"))
        print(f"| {r['cases']:,} | {r['seconds']:.1f} | {1e6 * per:.0f} | {per / base:.2f} | {r['cpu']:.1f} | "
              f"{1e6 * cper:.0f} | {cper / cmin:.2f} | {r['rss_mb']:.0f} | {parts} |")
    print(f"smallest sweep, {len(refs)} rounds: CPU us/case min {1e6 * cmin:.1f}, median {1e6 * cmed:.1f} "
          f"(all: {', '.join(f'{1e6 * _per_case(r):.0f}' for r in refs)}); main thread / commits / worker "
          f"median {' / '.join(f'{1e6 * statistics.median(_per_case(r, k) for r in refs):.0f}' for k in ('main', 'flusher', 'worker'))}")
    big = rows[-1]
    per, cper = _per_case(big, "seconds") / base, _per_case(big)
    print(f"FLAT by CPU {cper / cmin:.2f} against the smallest sweep's minimum, {cper / cmed:.2f} against its median; "
          f"by wall {per:.2f} (target <= 1.2)  RSS {big['rss_mb']:.0f} MB (target < 1024)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--in-process", action="store_true", help="-j 1 --in-process (a commit per case)")
    ap.add_argument("--baseline-src", help="also run a baseline checkout (its suite/ and plugins/), alternated")
    ap.add_argument("--rounds", type=int, default=1, help="rounds (each size of each tree once); the best is shown")
    ap.add_argument("--ref-rounds", type=int, default=5,
                    help="runs of the smallest sweep per tree in each round (its minimum and median are printed)")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.store, not a.in_process)))
        return
    sizes = [int(x) for x in a.sizes.split(",")]
    trees = ([a.baseline_src] if a.baseline_src else []) + [None]
    best: dict[tuple[str | None, int], dict] = {}
    refs: dict[str | None, list[dict]] = {src: [] for src in trees}
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        for _ in range(a.rounds):
            for n in sizes:
                for _ in range(max(1, a.ref_rounds) if n == sizes[0] else 1):
                    for src in trees:
                        row = _run_child(n, d, a.in_process, src)
                        if n == sizes[0]:
                            refs[src].append(row)
                        if (src, n) not in best or row["cpu"] < best[src, n]["cpu"]:
                            best[src, n] = row
    load1 = os.getloadavg()
    print(f"# scale: lazily expanded closed-form sweep, -j 1{' --in-process' if a.in_process else ''}; "
          f"{a.rounds} round(s) ({max(1, a.ref_rounds)} of the smallest sweep each), trees alternated, the best "
          f"round by CPU shown; load average "
          f"{' '.join(f'{x:.2f}' for x in load0)} -> {' '.join(f'{x:.2f}' for x in load1)} on {os.cpu_count()} CPUs")
    for src in trees:
        _table(f"baseline {src}" if src else "this tree", [best[src, n] for n in sizes], refs[src])


if __name__ == "__main__":
    main()
