"""Benchmark of the theseus plugin (run
``python benchmarks/bench_theseus.py``).

Prints in one run: per query, the engine's time over DuckDB's at SF 0.1 with K = 4 workers
(target <= 20); the fixed-size page pool's copy rate (put + get of 64 MiB in 64 KiB pages) over
``np.copyto``'s for the same bytes, twice (target >= 0.5); the model's and the simulation's cases
per second (targets >= 2,000 and >= 20 at 1,000 batches).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

__all__ = ["main"]


def _best(fn, n=3):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def main(sf: float = 0.1, workers: int = 4) -> dict:
    from suite import Scenario
    from suite.context import Context

    from suite_theseus import engine, simulate, tpch
    from suite_theseus.technique import TECHNIQUE

    res = {}
    data = tpch.load(sf)
    for q in tpch.QUERIES:
        te = _best(lambda: engine.run_query(data, q, workers=workers, batch_rows=1 << 16))
        td = _best(lambda: data.duckdb_answer(q))
        res[f"q{q}_engine_over_duckdb"] = te / td
        print(f"Q{q:<3} engine {te * 1e3:8.1f} ms  DuckDB {td * 1e3:8.1f} ms  ratio {te / td:6.2f}  (target <= 20)")
    size = 64 << 20
    src = {"x": np.random.default_rng(0).integers(0, 255, size, dtype=np.uint8)}
    pool = engine.PagePool(64 << 10, size // (64 << 10))
    dst = np.empty(size, dtype=np.uint8)
    t_pool = _best(lambda: pool.get(pool.put(src)))
    t_copy = _best(lambda: (np.copyto(dst, src["x"]), np.copyto(src["x"], dst)))
    res["pool_copy_rate_over_copyto"] = t_copy / t_pool
    print(f"page pool: {2 * size / t_pool / 1e9:.2f} GB/s, np.copyto {2 * size / t_copy / 1e9:.2f} GB/s, "
          f"ratio {t_copy / t_pool:.2f} (target >= 0.5)")
    wl = next(w for w in tpch.tpch_workloads() if w.name == "tpch-sf10000")
    sc = Scenario(technique="theseus", variant="theseus", fidelity="model", profile=Context.build().profile("theseus-dgx-a100-2n"),
                  workload=wl, params=TECHNIQUE.validate_params({"query": 5}))
    n = 2000
    t = _best(lambda: [TECHNIQUE.evaluate(sc) for _ in range(n)], 1)
    res["model_cases_per_s"] = n / t
    print(f"model: {n / t:,.0f} cases/s (target >= 2,000)")
    st = np.tile(np.array([1.0, 2.0, 3.0, 0.5, 0.1]), (1000, 1))
    t = statistics.median([_best(lambda: simulate.makespan(st), 1) for _ in range(3)])
    res["simulate_cases_per_s"] = 1 / t
    print(f"simulate: {1 / t:.1f} cases/s at 1,000 batches (target >= 20)")
    return res


if __name__ == "__main__":  # pragma: no cover
    main()
