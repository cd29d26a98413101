"""VirtualFlow performance checks (issue 30, "Performance"): ``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_virtual_nodes.py``.

1. 8 virtual nodes of B/8 against one pass of B (FlatModel gradient sums on real arrays; run it
   with one BLAS thread, e.g. ``OPENBLAS_NUM_THREADS=1``): the ratio should be <= 1.3.
2. Model cases per second (``heterogeneous`` on vf-mix, transformer-base): >= 1,000.
3. The plan search over 3 device types, V = 1,024: < 2 s.
4. Trace replays per second (medium20_8jph under WFS, step tables precomputed): >= 20.

Prints one line per check; nothing here is asserted (timings vary with the machine).
"""

from __future__ import annotations

import time

import numpy as np

from suite.context import Context


def bench_virtual_nodes(B: int = 4096, V: int = 8, hidden: int = 64, reps: int = 20) -> float:
    """Seconds of V sequential virtual nodes of B/V over seconds of one pass of B (median)."""
    from suite.collectives.dataparallel import FlatModel, load_problem

    prob = load_problem(workers=1, seed=0)
    fm = FlatModel(prob.d, prob.classes, hidden=hidden)
    theta = fm.init(np.random.default_rng(0))
    rng = np.random.default_rng(1)
    idx = rng.choice(len(prob.y_train), size=B, replace=True)
    X, y = prob.X_train[idx], prob.y_train[idx]
    parts = np.array_split(np.arange(B), V)

    def one():
        return fm.loss_grad(theta, X, y, reduction="sum")[1]

    def virtual():
        g = np.zeros(fm.size)
        for p in parts:
            g += fm.loss_grad(theta, X[p], y[p], reduction="sum")[1]
        return g

    if not (np.allclose(one(), virtual())):
        raise AssertionError('failed: np.allclose(one(), virtual())')
    t1, tv = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        one()
        t1.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        virtual()
        tv.append(time.perf_counter() - t0)
    return float(np.median(tv) / np.median(t1))


def bench_model(n: int = 300) -> float:
    """Model cases per second."""
    from suite_virtualflow import model

    ctx = Context.build()
    prof, wl = ctx.profile("vf-mix"), ctx.workload("transformer-base")
    model.step_model(wl, prof, "heterogeneous", 128, 16, 4)
    t0 = time.perf_counter()
    for i in range(n):
        model.step_model(wl, prof, ("heterogeneous", "fast-only", "virtual")[i % 3], 128, 16, 4)
    return n / (time.perf_counter() - t0)


def bench_search(V: int = 1024) -> float:
    """Seconds of one plan search over 3 types of 8 devices on one 8-GPU-node cluster profile."""
    from suite_virtualflow import model

    slots = [model.DeviceSlot(f"t{k}", None, 8, tuple(range(8))) for k in range(3)]
    prof = Context.build().profile("a800-64")
    t0 = time.perf_counter()
    model.search_plan([0.1, 0.137, 0.21], slots, V, prof, 1e8, 8)
    return time.perf_counter() - t0


def bench_replay(n: int = 50) -> float:
    """Trace replays per second."""
    from suite_virtualflow import elastic

    ctx = Context.build()
    prof = ctx.profile("dgx-1-v100")
    wls = {u.partition(":")[2]: ctx.workload(u.partition(":")[2]) for u in elastic.TRACE_INPUTS}
    tables = [elastic.step_time_table(j, prof, workloads=wls) for j in elastic.MEDIUM20_8JPH]
    t0 = time.perf_counter()
    for i in range(n):
        elastic.replay(elastic.MEDIUM20_8JPH, 8, lambda k, g: tables[k][g], ("wfs", "priority")[i % 2])
    return n / (time.perf_counter() - t0)


def main() -> None:
    print(f"virtual nodes 8 x B/8 over one pass of B: ratio {bench_virtual_nodes():.3f} (target <= 1.3)")
    print(f"model: {bench_model():.0f} cases/s (target >= 1000)")
    print(f"search, 3 types, V = 1024: {bench_search():.3f} s (target < 2 s)")
    print(f"trace replay: {bench_replay():.1f} traces/s (target >= 20)")


if __name__ == "__main__":
    main()
