"""Computron docs figure: latency CDFs of the simulate fidelity, and the tables beside it.

Runs the four variants (resident, computron, mp-serial, single-device) on three serving
configurations of the paper's sweep (computron-c05, c13, c17), tp = 4 where a variant uses it,
seed 0, each workload's duration, on the Perlmutter GPU node; writes
``docs/techniques/img/computron_latency_cdf.png`` (one panel per configuration, the empirical CDF
of every request's latency) and prints the p50 / p90 / p99 / mean / loads tables that
docs/techniques/computron.md shows.

Usage::

    python benchmarks/plot_computron.py [--out docs/techniques/img] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

CONFIGS = ("computron-c05", "computron-c13", "computron-c17")
VARIANTS = ("resident", "computron", "mp-serial", "single-device")
NODE = "perlmutter-gpu-node"


def run(workload: str, variant: str, seed: int):
    """The simulate result of one variant on one serving configuration."""
    from suite import ScenarioSpec
    from suite.context import Context
    from suite.runner.case import resolve_case

    from suite_computron.technique import TECHNIQUE

    spec = ScenarioSpec(variant=variant, fidelity="simulate", profile=NODE, workload=workload,
                        params={"tp": 4}, seed=seed)
    return TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec, context=Context.build()).scenario)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/techniques/img")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    fig, axes = plt.subplots(1, len(CONFIGS), figsize=(5 * len(CONFIGS), 4), sharey=True)
    for ax, wl in zip(axes, CONFIGS):
        print(f"\n| {wl} | p50 | p90 | p99 | mean | loads |\n|---|---|---|---|---|---|")
        for v in VARIANTS:
            res = run(wl, v, a.seed)
            lat = np.sort(np.asarray(res.metrics["latency_mean"].samples, dtype=float)) * 1e3
            ax.step(lat, np.arange(1, lat.size + 1) / lat.size, where="post", label=v)
            m = {k: res[k] * 1e3 for k in ("latency_p50", "latency_p90", "latency_p99", "latency_mean")}
            print(f"| {v} | {m['latency_p50']:.1f} ms | {m['latency_p90']:.1f} ms | {m['latency_p99']:.1f} ms "
                  f"| {m['latency_mean']:.1f} ms | {int(res['loads'])} |")
        ax.set_xscale("log")
        ax.set_xlabel("request latency (ms, log)")
        ax.set_title(wl)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("fraction of requests")
    axes[-1].legend(loc="lower right", fontsize=8)
    fig.suptitle(f"Computron simulate: latency CDFs on {NODE}, tp = 4, seed {a.seed}")
    fig.tight_layout()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "computron_latency_cdf.png", dpi=110)
    print(f"\nwrote {out / 'computron_latency_cdf.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
