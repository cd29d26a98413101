"""node-aware-grids on this machine: the simulated distributed contraction against the library
oracle, and the speed of the model's grid enumeration and of model cases.

1. The SUMMA run of the execute fidelity on 16 simulated ranks (every message copied and
   recorded in a ledger) against ``opt_einsum.contract`` (``numpy.einsum(optimize=True)`` when
   opt_einsum is not installed) on the whole tensors, both with one BLAS thread: square MMM
   n = 2,048 and the CC ring term acik,bcjk->abij (o = 16, v = 48). Target: ratio <= 1.5.
2. Enumerating every 2-D and 3-D grid of P = 4,096 ranks and every inter-node grid of each for
   ppn = 64 (64 nodes), with their volumes. Target: < 1 s.
3. Model cases per second: distinct cases (every time priced afresh through collective_time) and
   the same case repeated (memoised). Target: >= 5,000 cases/s.

Usage::

    python benchmarks/bench_node_aware_grids.py [--repeats 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import time

import numpy as np


def _one_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def bench_execute(repeats: int) -> list[dict]:
    from suite.collectives import Ledger

    from suite_node_aware_grids import execute, model
    from suite_node_aware_grids.workloads import index_groups

    cases = [("mmm n=2048", "ik,kj->ij", {"i": 2048, "j": 2048, "k": 2048}),
             ("cc acik,bcjk->abij o=16 v=48", "acik,bcjk->abij",
              {"a": 48, "b": 48, "c": 48, "i": 16, "j": 16, "k": 16})]
    rows = []
    rng = np.random.default_rng(0)
    for label, spec, ext in cases:
        groups = index_groups(spec, ext)
        a = rng.standard_normal(tuple(ext[x] for x in groups.a))
        b = rng.standard_normal(tuple(ext[x] for x in groups.b))
        cap = model.MEMORY_FRACTION * 512e9 / 4
        for variant in ("default-grid", "node-aware"):
            plan = model.make_plan(variant, groups, 16, 4, 8, cap)
            sim, ora = [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                amat, bmat = execute.matricize(groups, a, b)
                run = execute.DistributedRun(groups, amat, bmat, plan.lens, plan.g, 4)
                c = execute.unmatricize(groups, run.run(Ledger()), ext)
                sim.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                ref, name = execute.oracle(spec, a, b)
                ora.append(time.perf_counter() - t0)
            err = float(np.max(np.abs(c - ref)) / np.max(np.abs(ref)))
            rows.append({"case": label, "variant": variant, "grid": list(plan.lens),
                         "g": None if plan.g is None else list(plan.g), "simulated_s": min(sim),
                         "oracle_s": min(ora), "oracle": name, "ratio": min(sim) / min(ora), "rel_error": err})
    return rows


def bench_enumeration() -> dict:
    from suite_node_aware_grids import grids

    grids.all_grids.cache_clear()
    grids.inter_node_grids.cache_clear()
    grids.comm_stats.cache_clear()
    t0 = time.perf_counter()
    n_grids = n_inter = 0
    sizes = (1.0, 1.0, 1.0)
    for lens in grids.all_grids(4096):
        n_grids += 1
        for g in grids.inter_node_grids(lens, 64):
            n_inter += 1
            grids.node_aware_volume(sizes, g)
    t_enum = time.perf_counter() - t0
    t0 = time.perf_counter()
    for lens in grids.all_grids(4096):
        grids.best_inter_node_grid(sizes, lens, 64)
    t_choose = time.perf_counter() - t0
    return {"grids": n_grids, "inter_node_grids": n_inter, "enumerate_s": t_enum,
            "choose_with_default_volumes_s": t_choose}


def bench_model_rate(cases: int = 3000) -> dict:
    """Model cases per second over *cases* distinct scenarios (the node-aware variant of the MMM
    claim scenario with a different GEMM efficiency each, so every time is priced afresh; the grid
    plan is cached after the first), and over the same scenario repeated (memoised)."""
    import dataclasses

    from suite import ScenarioSpec
    from suite.context import Context
    from suite.runner.case import resolve_case

    from suite_node_aware_grids.technique import TECHNIQUE

    scen = resolve_case(TECHNIQUE, ScenarioSpec(variant="node-aware", profile="perlmutter-cpu",
                                                workload="node-aware-grids-mmm-65536",
                                                params={"ranks": 16384, "ranks_per_node": 64}),
                        context=Context.build()).scenario
    TECHNIQUE.evaluate(scen)
    distinct = [dataclasses.replace(scen, params={**scen.params, "efficiency": 0.5 + 0.4 * i / cases})
                for i in range(cases)]
    w0, c0 = time.perf_counter(), time.process_time()
    for sc in distinct:
        TECHNIQUE.evaluate(sc)
    w_distinct, c_distinct = time.perf_counter() - w0, time.process_time() - c0
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(cases):
        TECHNIQUE.evaluate(scen)
    w_same, c_same = time.perf_counter() - w0, time.process_time() - c0
    return {"cases": cases, "distinct_cases_per_s": cases / w_distinct, "repeated_cases_per_s": cases / w_same,
            "distinct_cases_per_cpu_s": cases / c_distinct, "repeated_cases_per_cpu_s": cases / c_same}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="also write the results as JSON here")
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {platform.platform()}, numpy {np.__version__}, "
          f"1 BLAS thread, {args.repeats} repeats (minimum: the machine may be shared)\n")
    with _one_thread():
        rows = bench_execute(args.repeats)
    print("| contraction (16 ranks, 4 per node) | variant | grid | g | simulated s | oracle s | oracle | ratio "
          "(target <= 1.5) | rel. error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['variant']} | {r['grid']} | {r['g']} | {r['simulated_s']:.4f} | "
              f"{r['oracle_s']:.4f} | {r['oracle']} | {r['ratio']:.2f} | {r['rel_error']:.1e} |")
    enum = bench_enumeration()
    print(f"\nenumeration, P = 4,096, ppn = 64: {enum['grids']} grids (2-D and 3-D), {enum['inter_node_grids']} "
          f"inter-node grids in {enum['enumerate_s']:.3f} s; choosing g for every grid (with the default "
          f"placement's exact volume) {enum['choose_with_default_volumes_s']:.3f} s (target < 1 s)")
    rate = bench_model_rate()
    print(f"model (node-aware, MMM n = 65,536 on 16,384 ranks; target >= 5,000 cases/s): "
          f"{rate['distinct_cases_per_s']:.0f} distinct cases/s ({rate['distinct_cases_per_cpu_s']:.0f} per CPU second), "
          f"{rate['repeated_cases_per_s']:.0f} repeated cases/s ({rate['repeated_cases_per_cpu_s']:.0f} per CPU second)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"execute": rows, "enumeration": enum, "model": rate}, fh, indent=1)


if __name__ == "__main__":
    main()
