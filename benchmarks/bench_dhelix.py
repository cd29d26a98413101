"""DHelix on this machine: model cases per second, and the cost of interleaving two strands.

1. **Model cases/s.** Qwen3-14B-like (40 layers, one plan: TP8 PP1 DP4, MBS 1, seq 8192, GBS 400) on
   h800-4x8, every variant, resolved once, evaluated ``--passes`` times through
   ``Technique.evaluate`` (each case prices its 18 operators, runs the 9 x 9 pairing DP and the
   closed form). Target >= 1,000 cases/s.
2. **Interleaved / sequential execute time.** Two micro-batches of the execute fidelity's float64
   block (``--hidden``, ``--seq``, ``--tp`` simulated ranks with real collectives) run in the DP's
   interleaved order and sequentially, alternating, ``--repeats`` times each; the ratio of the
   medians. Nothing overlaps on a CPU, so this bounds the interleaving's own cost; target <= 1.05.

Usage::

    python benchmarks/bench_dhelix.py [--passes 200] [--repeats 15] [--hidden 64] [--seq 64] [--tp 4] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def model_cases_per_s(passes: int) -> float:
    from suite import ScenarioSpec
    from suite.context import Context
    from suite.runner.case import resolve_case
    from suite_dhelix.technique import TECHNIQUE

    params = {"tp": 8, "pp": 1, "dp": 4, "mbs": 1, "seq": 8192, "gbs": 400}
    ctx = Context.build()
    scen = [resolve_case(TECHNIQUE, ScenarioSpec(variant=v, profile="h800-4x8", workload="dhelix-qwen3-14b-like",
                                                 params=params), context=ctx).scenario for v in TECHNIQUE.variant_names]
    for s in scen:
        TECHNIQUE.evaluate(s)
    t0 = time.perf_counter()
    for _ in range(passes):
        for s in scen:
            TECHNIQUE.evaluate(s)
    return passes * len(scen) / (time.perf_counter() - t0)


def interleave_ratio(repeats: int, hidden: int, seq: int, tp: int) -> tuple[float, float, float]:
    from suite_dhelix import execute, model

    block = execute.Block(hidden, seq, tp, seed=0)
    rng = np.random.default_rng(0)
    xs = [rng.normal(0, 1, (seq, hidden)) for _ in range(2)]
    fwd, bwd = execute.random_ops(9, 9, rng)
    _t, plan = model.pair_dp(fwd, bwd, model.SIGMA)
    execute.run_strands(block, xs)
    ts, ti = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        execute.run_strands(block, xs)
        ts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        execute.run_strands(block, xs, plan)
        ti.append(time.perf_counter() - t0)
    s, i = statistics.median(ts), statistics.median(ti)
    return i / s, s, i


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    rate = model_cases_per_s(a.passes)
    ratio, s, i = interleave_ratio(a.repeats, a.hidden, a.seq, a.tp)
    print(f"model: {rate:,.0f} cases/s (target >= 1,000)")
    print(f"execute: interleaved {i * 1e3:.2f} ms / sequential {s * 1e3:.2f} ms = {ratio:.3f} (target <= 1.05)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"model_cases_per_s": rate, "interleave_ratio": ratio, "sequential_s": s, "interleaved_s": i},
                      fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
