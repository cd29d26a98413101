"""Mixed-TD's cost model on this machine: vectorised design evaluations per second against the
step-by-step greedy evaluated one design at a time (same designs, same run), and the wall and CPU
time of a full search (500 generations, 25 parents, 100 children: 50,000 evaluations).

The vectorised evaluator must agree with the per-design greedy on every design timed, and be at
least 10x faster (the issue's bar); the exit status is non-zero otherwise. Wall time on a shared
machine includes waiting for a core: CPU time (``time.process_time``) is printed beside it.

Usage::

    python benchmarks/bench_mixed_td.py [--workload resnet-18] [--designs 2000] [--loop 40]
                                        [--generations 500] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="resnet-18")
    ap.add_argument("--designs", type=int, default=2000, help="designs for the vectorised timing")
    ap.add_argument("--loop", type=int, default=40, help="designs for the per-design greedy timing")
    ap.add_argument("--generations", type=int, default=500)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)

    from threadpoolctl import threadpool_limits

    from suite.runner.case import resolve_case
    from suite import ScenarioSpec
    from suite.context import Context
    from suite_mixed_td import model
    from suite_mixed_td.technique import TECHNIQUE

    ctx = Context.build()
    prof = resolve_case(TECHNIQUE, ScenarioSpec(variant="dense"), context=ctx).scenario.profile
    res = model.resources_of(prof)
    wl = ctx.workload(a.workload)
    with threadpool_limits(1):
        t0 = time.perf_counter()
        net = model.build_network(wl)
        net.cand_tables(model.DSP_PER_MAC)
        build = time.perf_counter() - t0
        rng = np.random.default_rng(0)
        d = np.stack([rng.integers(0, k, size=a.designs) for k in net.n_cands], axis=1)
        vec_cpu, vec_wall, loop_cpu, loop_wall, mismatch = _vectorised_against_loop(model, net, d, res, a.loop)
        c0, w0 = time.process_time(), time.perf_counter()
        sr = model.search(net, res, ratio=0.65, macs_target=0.65, generations=a.generations, seed=0,
                          prior_mean=0.65 - 0.10 - 0.23)
        s_cpu, s_wall = time.process_time() - c0, time.perf_counter() - w0
    vec_rate, loop_rate = a.designs / vec_cpu, a.loop / loop_cpu
    out = {
        "machine": platform.processor() or platform.machine(), "python": platform.python_version(),
        "workload": a.workload, "candidates_per_layer": [int(x) for x in net.n_cands], "build_s": build,
        "vectorised_evals_per_s_cpu": vec_rate, "vectorised_evals_per_s_wall": a.designs / vec_wall,
        "loop_evals_per_s_cpu": loop_rate, "loop_evals_per_s_wall": a.loop / loop_wall,
        "speedup_cpu": vec_rate / loop_rate, "mismatches": mismatch,
        "search_evaluations": sr.evaluations, "search_wall_s": s_wall, "search_cpu_s": s_cpu,
        "search_evals_per_s_cpu": sr.evaluations / s_cpu,
    }
    print(f"| {a.workload} | figure | value |\n|---|---|---|")
    for k in ("build_s", "vectorised_evals_per_s_cpu", "vectorised_evals_per_s_wall", "loop_evals_per_s_cpu",
              "speedup_cpu", "mismatches", "search_evaluations", "search_wall_s", "search_cpu_s",
              "search_evals_per_s_cpu"):
        v = out[k]
        print(f"| | {k} | {v:.4g} |" if isinstance(v, float) else f"| | {k} | {v} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
    ok = mismatch == 0 and out["speedup_cpu"] >= 10
    if not ok:
        print("FAIL: vectorised evaluator disagrees with the greedy or is < 10x faster", file=sys.stderr)
    return 0 if ok else 1



def _vectorised_against_loop(model, net, d, res, loop: int):
    """CPU and wall seconds of the vectorised evaluator over every design (in the search's batches
    of 100) and of the per-design greedy over the first *loop*, and how many of those disagree."""
    model.evaluate_designs(net, d[:100], res)  # warm-up
    c0, w0 = time.process_time(), time.perf_counter()
    ev = {}
    for s in range(0, len(d), 100):  # the search's batch size: 100 children per generation
        part = model.evaluate_designs(net, d[s:s + 100], res)
        for k, v in part.items():
            ev.setdefault(k, []).append(v)
    vec_cpu, vec_wall = time.process_time() - c0, time.perf_counter() - w0
    ev = {k: np.concatenate(v) for k, v in ev.items()}
    c0, w0 = time.process_time(), time.perf_counter()
    ref = [model.design_metrics(net, d[i], res) for i in range(loop)]
    loop_cpu, loop_wall = time.process_time() - c0, time.perf_counter() - w0
    mismatch = sum(1 for i, r in enumerate(ref)
                   if abs(r["throughput"] - ev["throughput"][i]) > 1e-9 * max(r["throughput"], 1e-300)
                   or int(r["dsps"]) != int(ev["dsps"][i]))
    return vec_cpu, vec_wall, loop_cpu, loop_wall, mismatch

if __name__ == "__main__":
    raise SystemExit(main())
