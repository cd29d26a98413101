"""The shared training model's speed (suite.perf.training): one configuration in-process, and
COMET's vectorised design-space search on it, in CPU time (the machine is shared).

* one configuration: :func:`suite.perf.training.evaluate_plan` at the Megatron-LM 1T plan on
  ``selene-dgx-a100``, a fresh collective pricer each call (the collectives' algorithm tables are
  warm after the first call, as in any run that prices more than one case); target < 5 ms;
* search: every strategy of ``megatron-1t`` on the ``comet-v2`` grid's 36 clusters at 128 nodes,
  four global batches, micro-batch 1..32, three recomputation choices, through
  :func:`suite_comet.model.evaluate_many` (one :func:`suite.perf.training.evaluate` call per
  cluster); target >= 100,000 points per second.

Usage::

    python benchmarks/bench_training.py [--repeat 30] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)

    import numpy as np
    from threadpoolctl import threadpool_limits

    from suite.context import Context
    from suite.perf import training as T
    from suite_comet import model
    from suite_comet.workloads import megatron_1t

    ctx = Context.build()
    prof = ctx.profile("selene-dgx-a100")
    hw = T.hardware_of(prof)
    m = T.TransformerShape(layers=128, hidden=25600, heads=160, seq=2048, vocab=51200, positions=2048)
    plan = dict(tp=8, pp=64, dp=6, mbs=1, gbs=3072, recompute="full")
    with threadpool_limits(1):
        T.evaluate_plan(m, hw, **plan)  # warm: imports, the collectives' tables
        c0 = time.process_time()
        for _ in range(a.repeat):
            T.evaluate_plan(m, hw, **plan)
        one_ms = (time.process_time() - c0) / a.repeat * 1e3

        w = model.consts_of(megatron_1t())
        grid = {u.partition(":")[2]: ctx.profile(u.partition(":")[2]) for u in model.grid_inputs()}
        clusters = model.grid_clusters(prof, "comet-v2", nodes=128, profiles=grid)
        jobs = []
        for b in (1536, 3072, 6144, 12288):
            parts = [model.enumerate_strategies(w, c, b, mbs_choices=(1, 2, 4, 8, 16, 32)) for c in clusters]
            ci = np.concatenate([np.full(len(p), k) for k, p in enumerate(parts)])
            S = model.Strategies(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("tp", "pp", "dp", "mbs", "rc")))
            jobs.append((b, ci, S))
        points = sum(len(S) for _b, _ci, S in jobs)
        for b, ci, S in jobs:  # warm the stage tables and collective algorithm tables
            model.evaluate_many(w, clusters, ci, S, b, cache=model.CollectiveCache())
        c0 = time.process_time()
        for b, ci, S in jobs:
            model.evaluate_many(w, clusters, ci, S, b, cache=model.CollectiveCache())
        search_s = time.process_time() - c0
    rate = points / search_s
    out = {"one_configuration_ms_cpu": one_ms, "search_points": points, "search_cpu_s": search_s,
           "search_points_per_s": rate}
    import os

    out["load_average"] = os.getloadavg()[0]
    print(f"load average {out['load_average']:.2f} (CPU time, one BLAS thread)")
    print(f"one configuration: {one_ms:.2f} ms CPU (target < 5 ms)")
    print(f"COMET search: {points} points in {search_s:.3f} s CPU = {rate:,.0f} points/s (target >= 100,000)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0 if one_ms < 5.0 and rate >= 100_000 else 1


if __name__ == "__main__":
    sys.exit(main())
