"""The coordinating process's CPU per case of a `-j 1` run, this tree against a baseline checkout.

For each tree (``--baseline-src`` and this one, through ``PYTHONPATH``) a child process expands the
9,984-case Poseidon sweep of ``bench_runner.py --ratio-only``, evaluates it once (warm-up), then
``--inner`` times: the bare loop, and ``run_cases`` at ``-j 1`` (one isolated worker, ``--artifacts
summary``) into a fresh store. Children of the two trees alternate ``--rounds`` times. Printed per
tree, the minimum of each column in us per case: the bare loop, the coordinating process
(``RUSAGE_SELF``: its main thread and the store's flusher thread), the flusher thread alone
(``thread_time`` around ``Writer._write``), the worker (``RUSAGE_CHILDREN``), and the
(coordinator + worker) / bare ratio of the columns' minima beside the median of each run's own; with the load average before and after (issue 44: the
coordinator and store's share, target <= 35 us per case).

Usage::

    python benchmarks/bench_coordinator.py --baseline-src /path/to/checkout [--rounds 3] [--inner 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import json, resource, sys, tempfile, time
from pathlib import Path
from suite.context import Context
from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases
import suite.results.writer as W
ctx = Context.build()
pos = next(t for t in ctx.techniques() if t.name == "poseidon")
nodes = list(range(1, 33))
bws = [f"{b} Gbit/s" for b in range(1, 1 + 10000 // (32 * len(pos.variants)))]
cases = expand_entry({"technique": "poseidon", "params": {"nodes": nodes},
                      "set": {"network.-1.bandwidth": bws}}, context=ctx).cases
flusher = [0.0]
write = W.Writer._write
def timed_write(self, *a):
    t = time.thread_time()
    try:
        return write(self, *a)
    finally:
        flusher[0] += time.thread_time() - t
W.Writer._write = timed_write
def cpu():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime, b.ru_utime + b.ru_stime
tmp = Path(tempfile.mkdtemp())
for c in cases:
    pos.evaluate(c.scenario)
rounds = []
for r in range(int(sys.argv[1])):
    c0 = cpu()
    for c in cases:
        pos.evaluate(c.scenario)
    c1 = cpu()
    flusher[0] = 0.0
    with Store(tmp / f"{r}.sqlite") as st:
        run_cases(cases, st, context=ctx, options=ExecOptions(jobs=1, isolate=True, artifacts="summary"), command="bench")
    c2 = cpu()
    rounds.append({"bare": c1[0] - c0[0], "coord": c2[0] - c1[0], "worker": c2[1] - c1[1], "flusher": flusher[0]})
import shutil
shutil.rmtree(tmp, ignore_errors=True)  # the rounds' stores (~28 MB a child)
print(json.dumps({"n": len(cases), "rounds": rounds}))
'''


def _load() -> str:
    p = Path("/proc/loadavg")
    return " ".join(p.read_text().split()[:3]) if p.exists() else "n/a"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-src", required=True, help="a checkout of the baseline (e.g. git worktree add --detach)")
    ap.add_argument("--rounds", type=int, default=3, help="times the two trees alternate")
    ap.add_argument("--inner", type=int, default=2, help="runs per child process")
    a = ap.parse_args()
    trees = {"baseline": str(Path(a.baseline_src).resolve()), "this": str(Path(__file__).resolve().parents[1])}
    load0 = _load()
    got: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
    n = 0
    for _ in range(a.rounds):
        for name, src in trees.items():
            # the tree's own plugins too: the other tree's may use a core API this one lacks
            path = os.pathsep.join([src, str(Path(src) / "plugins")])
            p = subprocess.run([sys.executable, "-c", CHILD, str(a.inner)], env=dict(os.environ, PYTHONPATH=path),
                               capture_output=True, text=True, cwd=src, check=True)
            res = json.loads(p.stdout.strip().splitlines()[-1])
            got[name] += res["rounds"]
            n = res["n"]
    print(f"# Poseidon sweep, {n} cases, -j 1, {a.rounds} x {a.inner} rounds per tree alternated; "
          f"load average {load0} -> {_load()}; minimum of each column, CPU us per case")
    for name, rs in got.items():
        m = {k: 1e6 * min(r[k] for r in rs) / n for k in rs[0]}
        # the ratio of the column minima, and the median of each run's own ratio (the minimum of those
        # is biased low: a run whose bare loop met a load spike gave 0.91)
        ratio = (m["coord"] + m["worker"]) / m["bare"]
        per_ratio = statistics.median((r["coord"] + r["worker"]) / r["bare"] for r in rs)
        per_run = ", ".join(f"{1e6 * r['coord'] / n:.0f}" for r in rs)
        print(f"{name:8s} bare {m['bare']:6.1f}  COORDINATOR {m['coord']:6.1f} (flusher thread {m['flusher']:5.1f})  "
              f"worker {m['worker']:6.1f}  (coordinator + worker) / bare {ratio:.2f} (median of runs {per_ratio:.2f}); "
              f"coordinator per run {per_run}")


if __name__ == "__main__":
    main()
