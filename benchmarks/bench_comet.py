"""COMET's design-space model on this machine: vectorised (cluster, strategy) points per second
against the scalar per-point model (:func:`suite_comet.model.evaluate_point`), from one run.

The points: the ``comet-v2`` grid's 36 clusters (derived from ``selene-dgx-a100``) at 128 and 256 nodes
and four global batches, each with every strategy of ``megatron-1t`` (tp, pp, dp using all GPUs, micro-batch 1..32,
three recomputation choices), with and without the expansion tier. The layer partition per pipeline
degree depends only on the workload and is computed once before timing (warm-up); collective
times are computed inside the timed region, once per distinct (cluster, group, message size).
The scalar path is timed on a random sample of the same points and must agree with the
vectorised one on each of them (exit status 1 otherwise, and when fewer than 100,000 points or
more than 2 s).

Usage::

    python benchmarks/bench_comet.py [--nodes 128,256] [--batches 1536,3072,6144,12288] [--scalar 300] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", default="128,256")
    ap.add_argument("--batches", default="1536,3072,6144,12288", help="global batches (sequences)")
    ap.add_argument("--scalar", type=int, default=300, help="points for the scalar timing")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)

    from threadpoolctl import threadpool_limits

    from suite.context import Context
    from suite_comet import model
    from suite_comet.workloads import megatron_1t

    w = model.consts_of(megatron_1t())
    ctx = Context.build()
    grid = {u.partition(":")[2]: ctx.profile(u.partition(":")[2]) for u in model.grid_inputs()}
    base = ctx.profile("selene-dgx-a100")
    clusters = [c for n in (int(x) for x in a.nodes.split(","))
                for c in model.grid_clusters(base, "comet-v2", nodes=n, profiles=grid)]
    batches = [int(x) for x in a.batches.split(",")]
    jobs = _jobs(model, w, clusters, batches)
    points = sum(len(j[2]) for j in jobs)
    with threadpool_limits(1):
        out, res = _time_vectorised(model, w, clusters, jobs)
        out.update(_time_scalar(model, w, clusters, jobs, res, a.scalar))
    out.update(points=points, clusters=len(clusters), load_average=os.getloadavg()[0])
    _report(out, len(batches))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
    ok = points >= 100_000 and out["vectorised_s"] < 2.0 and out["disagreements"] == 0
    return 0 if ok else 1


def _jobs(model, w, clusters, batches):
    """Per batch: (batch, cluster index per point, strategies, expansion flag per point), every
    strategy of every cluster twice (the first copy HBM only, the second with the expansion tier)."""
    jobs = []
    for b in batches:
        parts = [model.enumerate_strategies(w, c, b, mbs_choices=(1, 2, 4, 8, 16, 32)) for c in clusters]
        ci = np.concatenate([np.full(len(s), i) for i, s in enumerate(parts)] * 2)
        cat = lambda k: np.concatenate([getattr(s, k) for s in parts] * 2)  # noqa: E731
        S = model.Strategies(*(cat(k) for k in ("tp", "pp", "dp", "mbs", "rc")))
        jobs.append((b, ci, S, np.arange(len(S)) >= len(S) // 2))
    return jobs


def _time_vectorised(model, w, clusters, jobs):
    """The cold first pass (it also derives the shared model's per-profile figures and per-group
    lines, which the scalar path, timed afterwards, then finds ready; so it is reported) and the
    headline second pass with a fresh CollectiveCache (every one of its collective_time calls is
    still made inside the timed region)."""
    c0, w0 = time.process_time(), time.perf_counter()
    for b, ci, S, exp in jobs:
        model.evaluate_many(w, clusters, ci, S, b, cache=model.CollectiveCache(), expansion=exp)
    cold_wall, cold_cpu = time.perf_counter() - w0, time.process_time() - c0
    cache = model.CollectiveCache()
    c0, w0 = time.process_time(), time.perf_counter()
    res = [model.evaluate_many(w, clusters, ci, S, b, cache=cache, expansion=exp) for b, ci, S, exp in jobs]
    vec_wall, vec_cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"vectorised_s": vec_wall, "vectorised_cpu_s": vec_cpu, "collective_calls": cache.calls,
            "cold_vectorised_s": cold_wall, "cold_vectorised_cpu_s": cold_cpu}, res


def _time_scalar(model, w, clusters, jobs, res, n):
    """The scalar path on *n* random points of the same jobs, each checked against the vectorised result."""
    rng = np.random.default_rng(0)
    bad = 0
    c1, w1 = time.process_time(), time.perf_counter()
    for _ in range(n):
        k = int(rng.integers(len(jobs)))
        b, ci, S, exp = jobs[k]
        j = int(rng.integers(len(S)))
        one = model.evaluate_point(w, clusters[ci[j]], int(S.tp[j]), int(S.pp[j]), int(S.dp[j]), int(S.mbs[j]),
                                   int(S.rc[j]), b, expansion=bool(exp[j]))
        if not math.isclose(one["raw_time"], res[k]["raw_time"][j], rel_tol=1e-9) \
                or bool(one["feasible"]) != bool(res[k]["feasible"][j]):
            bad += 1
    return {"scalar_cases": n, "scalar_s": time.perf_counter() - w1, "scalar_cpu_s": time.process_time() - c1,
            "disagreements": bad}


def _report(out, batches):
    """Rates and CPU-time ratios, with the load average."""
    p, n = out["points"], out["scalar_cases"]
    out["vectorised_points_per_s"] = vec_rate = p / out["vectorised_s"]
    out["scalar_cases_per_s"] = sc_rate = n / out["scalar_s"]
    out["speedup"] = vec_rate / sc_rate
    ratio = lambda cpu: (p / cpu) / (n / out["scalar_cpu_s"]) if cpu > 0 and out["scalar_cpu_s"] > 0 else float("nan")  # noqa: E731
    out["speedup_cpu"], out["cold_speedup_cpu"] = ratio(out["vectorised_cpu_s"]), ratio(out["cold_vectorised_cpu_s"])
    print(f"load average {out['load_average']:.2f}")
    print(f"vectorised: {p:,} points ({out['clusters']} clusters x {batches} batches x strategies x expansion on/off) "
          f"in {out['vectorised_s']:.3f} s (CPU {out['vectorised_cpu_s']:.3f} s): {vec_rate:,.0f} points/s; "
          f"{out['collective_calls']:,} collective_time calls")
    print(f"scalar:     {n} points in {out['scalar_s']:.3f} s (CPU {out['scalar_cpu_s']:.3f} s): {sc_rate:,.0f} cases/s; "
          f"disagreements {out['disagreements']}")
    print(f"vectorised / scalar: {out['speedup']:,.0f}x by wall time, {out['speedup_cpu']:,.0f}x by CPU time (target >= 100)")
    print(f"  (the cold first pass: {out['cold_vectorised_s']:.3f} s, CPU {out['cold_vectorised_cpu_s']:.3f} s: "
          f"{out['cold_speedup_cpu']:,.0f}x by CPU time against the same scalar run)")


if __name__ == "__main__":
    sys.exit(main())
