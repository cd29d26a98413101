"""ClusterFusion on this machine: the cost model's throughput (model cases per second) and the
execute fidelity's GEMV weight-read rate against a STREAM-like read of the same bytes.

1. **Model cases/s.** Every variant x both models (Llama-2-7B, DeepSeek-V2-Lite) x batch
   {1, 2, 4, 8, 16} x seq_len {1K .. 16K} x cluster {1, 2, 4, 8}, resolved once, then evaluated
   ``--passes`` times through ``Technique.evaluate``; target >= 5,000 cases/s.
2. **GEMV read rate.** The split-K GEMVs of the fused MHA kernel (:func:`suite_clusterfusion.execute.gemv`
   on the head-column, K-slice blocks of W_q, W_k, W_v, W_o of a full Llama-2-7B layer: 32 heads x 128,
   hidden 4096, float32, 256 MiB of weights, cluster 4), timed over all heads and blocks; the bytes of
   weights read over the median time, against the rate of ``np.add.reduce`` over one contiguous array of
   the same size (a STREAM-style read). Target ratio >= 0.5.

Usage::

    python benchmarks/bench_clusterfusion.py [--passes 3] [--repeats 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import numpy as np


def model_cases_per_s(passes: int) -> tuple[float, int]:
    from suite import ScenarioSpec
    from suite.context import Context
    from suite.runner.case import Resolver, resolve_case
    from suite_clusterfusion.technique import TECHNIQUE
    from suite_clusterfusion.workloads import WORKLOAD_NAME

    scen = []
    resolver = Resolver((), context=Context.build())
    for v in TECHNIQUE.variant_names:
        for wl in ("llama2-7b", WORKLOAD_NAME):
            for b in (1, 2, 4, 8, 16):
                for s in (1024, 2048, 4096, 8192, 16384):
                    for n in (1, 2, 4, 8):
                        spec = ScenarioSpec(variant=v, workload=wl,
                                            params={"batch": b, "seq_len": s, "cluster_size": n})
                        scen.append(resolve_case(TECHNIQUE, spec, resolver=resolver).scenario)
    best = best_cpu = 0.0
    for _ in range(max(1, passes)):
        t0, c0 = time.perf_counter(), time.process_time()
        for sc in scen:
            TECHNIQUE.evaluate(sc)
        best = max(best, len(scen) / (time.perf_counter() - t0))
        best_cpu = max(best_cpu, len(scen) / max(time.process_time() - c0, 1e-9))
    return best, best_cpu, len(scen)


def gemv_vs_stream(repeats: int) -> dict:
    from suite_clusterfusion.execute import gemv, make_mha, partition

    rng = np.random.default_rng(0)
    layer = make_mha(rng, 1, 1, heads=32, d=128)
    x, d, n = layer.x, layer.d, 4
    ks = partition(x.shape[1], n)
    blocks = []
    for hd in range(layer.heads):
        cols = slice(hd * d, (hd + 1) * d)
        for k in ks:
            blocks += [(x[:, k], layer.wq[k, cols]), (x[:, k], layer.wk[k, cols]), (x[:, k], layer.wv[k, cols]),
                       (x[:, cols], layer.wo[cols, k])]
    nbytes = sum(w.nbytes for _, w in blocks)

    def run_gemv():
        for a, w in blocks:
            gemv(a, w)

    flat = np.ones(nbytes // 4, np.float32)

    def run_stream():
        np.add.reduce(flat)

    def med(fn):
        fn()  # warm-up
        ts = []
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    tg, ts = med(run_gemv), med(run_stream)
    return {"weight_bytes": nbytes, "gemv_s": tg, "stream_s": ts, "gemv_GBps": nbytes / tg / 1e9,
            "stream_GBps": nbytes / ts / 1e9, "ratio": (nbytes / tg) / (nbytes / ts)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="also write the figures as JSON here")
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {platform.platform()}, numpy {np.__version__}")
    rate, rate_cpu, cases = model_cases_per_s(args.passes)
    print(f"model: {cases} distinct cases, best of {args.passes} passes: {rate:,.0f} cases/s wall clock "
          f"({'>=' if rate >= 5000 else '<'} 5,000 target), {rate_cpu:,.0f} per CPU second")
    g = gemv_vs_stream(args.repeats)
    print(f"execute GEMVs: {g['weight_bytes'] / 2**20:.0f} MiB of weights in {g['gemv_s'] * 1e3:.2f} ms = "
          f"{g['gemv_GBps']:.2f} GB/s; STREAM-style read {g['stream_GBps']:.2f} GB/s; ratio {g['ratio']:.2f} "
          f"({'>=' if g['ratio'] >= 0.5 else '<'} 0.5 target)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model_cases_per_s": rate, "model_cases_per_cpu_s": rate_cpu, "cases": cases, **g}, f, indent=2)


if __name__ == "__main__":
    main()
