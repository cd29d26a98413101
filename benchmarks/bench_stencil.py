"""The cerebras-stencil benchmark: the CPU stencil efficiency and the cost model's speed.

1. fp32 diffusion7 on a 256^3 periodic grid, the cache-blocked shifted-slice step
   (``suite_cerebras_stencil.kernels.diffusion7_blocked``) on one pinned core, median of
   ``--repeats``, interleaved with a STREAM triad (McCalpin 1995) on the same core:
   efficiency = compulsory bytes/s (8 B per point) / triad bytes/s. This is how the model's
   ``CPU_STENCIL_EFFICIENCY`` was measured. Also advection at ``--advection-n``^3 (same method).
2. Model cases per second through ``model.evaluate`` (target >= 10,000) and the time of a
   100,000-point vectorised sweep (``model.sweep``, target < 2 s).

Usage::

    python benchmarks/bench_stencil.py [--n 256] [--repeats 7] [--advection-n 160] [--json OUT]

Exits non-zero when the diffusion efficiency is below 0.5, the model below 10,000 cases/s or
the sweep above 2 s.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np


def model_speed(cases: int = 20000) -> tuple[float, float]:
    from suite import Scenario
    from suite.context import Context
    from suite_cerebras_stencil import model
    from suite_cerebras_stencil.technique import DEFAULTS, PROFILES

    ctx = Context.build()
    profs = {v: ctx.profile(PROFILES["wse-1" if v == "wse" else v]) for v in model.VARIANTS}
    rng = np.random.default_rng(0)
    scens = []
    for i in range(cases):
        v = model.VARIANTS[i % 3]
        p = {**DEFAULTS, "nx": int(rng.integers(16, 600)), "ny": int(rng.integers(16, 595)),
             "nz": int(rng.integers(16, 1024)), "kernel": ("diffusion7", "advection")[i % 2]}
        scens.append(Scenario("cerebras-stencil", v, "model", profs[v], None, p))
    t0 = time.perf_counter()
    for s in scens:
        model.evaluate(s)
    rate = cases / (time.perf_counter() - t0)
    pf = model.platform_of("wse", profs["wse"])
    n = 100_000
    nx, ny, nz = rng.integers(3, 600, n), rng.integers(3, 595, n), rng.integers(3, 1536, n)
    t0 = time.perf_counter()
    model.sweep(pf, "advection", nx, ny, nz, 1, "fp32", "streamed")
    return rate, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--advection-n", type=int, default=160)
    ap.add_argument("--json", help="also write the figures as JSON here")
    args = ap.parse_args()
    from suite_cerebras_stencil.execute import time_kernel

    print(f"machine: {platform.processor() or platform.machine()}, {platform.platform()}, numpy {np.__version__}")
    rows = {}
    for kernel, n in (("diffusion7", args.n), ("advection", args.advection_n)):
        m = time_kernel(kernel, (n, n, n), "fp32", args.repeats)
        rows[kernel] = {k: m[k] for k in ("step_time", "step_min", "bytes_per_s", "triad", "efficiency", "core", "points",
                                          "samples", "triad_samples")}
        q1, q3 = np.percentile(m["samples"], [25, 75])
        print(f"{kernel} {n}^3 fp32 on core {m['core']}: {m['step_time'] * 1e3:.1f} ms/step median (IQR "
              f"{(q3 - q1) * 1e3:.1f}), best {m['step_min'] * 1e3:.1f} ms, "
              f"{m['points'] / m['step_time'] / 1e6:.0f} Mpoint/s, {m['bytes_per_s'] / 1e9:.2f} GB/s compulsory, "
              f"best triad {m['triad'] / 1e9:.2f} GB/s -> efficiency {m['efficiency']:.3f}")
    rate, sweep_s = model_speed()
    print(f"model: {rate:,.0f} cases/s through model.evaluate; 100,000-point sweep in {sweep_s:.3f} s")
    rows["model_cases_per_s"] = rate
    rows["sweep_100k_s"] = sweep_s
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    ok = rows["diffusion7"]["efficiency"] >= 0.5 and rate >= 10_000 and sweep_s < 2.0
    print("PASS" if ok else "FAIL: efficiency >= 0.5, >= 10,000 cases/s and sweep < 2 s expected")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
