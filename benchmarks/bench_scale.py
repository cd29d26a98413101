"""Scale: a model sweep of 1k ... 1M cases, expanded lazily, run into a fresh store.

Target (issue 19, item 6): a 1,000,000-case sweep expands lazily (memory constant in the number
of cases), keeps a flat per-case cost (1k vs 1M within 1.2x) and peak RSS under 1 GB.

Each size runs in its own process (so peak RSS is that sweep's alone) with the sweep flags a user
would give: ``stream_entry`` (what ``suite run --technique ... --param ...`` uses) and
``run_cases`` at ``-j 1 --in-process`` (the per-case cost of expansion + runner + store, without the
worker pipe) on a closed-form technique of a few microseconds, so what is measured is the suite's
own cost per case. Prints seconds, us/case, the ratio to the smallest sweep and peak RSS.

Usage::

    python benchmarks/bench_scale.py [--sizes 1000,1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def child(n: int, store: str) -> dict:
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
    t0 = time.perf_counter()
    cases = stream_entry({"technique": "scale", "params": {"size": sizes, "work": works}},
                         resolver=Resolver(context=ctx), max_cases=2_000_000)
    with Store(store) as st:
        s = run_cases(cases, st, options=ExecOptions(jobs=1, isolate=False, artifacts="summary"), registry=reg)
    dt = time.perf_counter() - t0
    assert s.ok == len(cases), s.message()
    return {"cases": len(cases), "seconds": dt, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rss_start_mb": rss0 / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.store)))
        return
    load0 = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in [int(x) for x in a.sizes.split(",")]:
            out = subprocess.run([sys.executable, __file__, "--child", str(n), "--store", str(Path(d) / f"{n}.sqlite")],
                                 capture_output=True, text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"{rows[-1]['cases']:>9,} cases: {rows[-1]['seconds']:.1f} s", file=sys.stderr, flush=True)
    load1 = os.getloadavg()
    base = rows[0]["seconds"] / rows[0]["cases"]
    print(f"# scale: lazily expanded closed-form sweep, -j 1 --in-process; load average "
          f"{load0[0]:.2f} -> {load1[0]:.2f}")
    print("| cases | seconds | us/case | x smallest | peak RSS MB |")
    print("|---|---|---|---|---|")
    for r in rows:
        per = r["seconds"] / r["cases"]
        print(f"| {r['cases']:,} | {r['seconds']:.1f} | {1e6 * per:.0f} | {per / base:.2f} | {r['rss_mb']:.0f} |")
    big = rows[-1]
    per = big["seconds"] / big["cases"] / base
    print(f"FLAT {per:.2f} (target <= 1.2)  RSS {big['rss_mb']:.0f} MB (target < 1024)")


if __name__ == "__main__":
    main()
