"""Accuracy-vs-simulated-time plots of the cocod-sgd and palsgd plugins (docs/techniques/img/).

Runs each variant's execute fidelity on the digits (non-IID Dirichlet split, heterogeneous
workers) with the step and all-reduce times of a real model's layer table on the technique's
default profile, and plots test accuracy against simulated wall-clock seconds.

    .venv/bin/python benchmarks/plot_sgd_curves.py [cocod-sgd|palsgd ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from suite.context import Context  # noqa: E402
from suite.runner.case import resolve_case  # noqa: E402
from suite.technique import ScenarioSpec  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "docs" / "techniques" / "img"

SETUPS = {
    "cocod-sgd": dict(profile="gtx1080ti-6x3-ib56",
                      params=dict(workers=8, steps=300, batch=16, k=4, hetero=2.0, split="dirichlet",
                                  clock_workload="vgg16-cifar", lr=0.05),
                      title="CoCoD-SGD family: digits, 8 workers (speeds 1..2, Dirichlet 0.5),\n"
                            "step and all-reduce times of VGG-16 (CIFAR) on 6x3 GTX 1080 Ti, 56 Gb/s IB"),
    "palsgd": dict(profile="a40-64",
                   params=dict(workers=8, steps=300, batch=16, H=8, warmup=8, p=0.2, split="dirichlet",
                               clock_workload="resnet-50"),
                   title="PALSGD family: digits, 8 workers (Dirichlet 0.5),\n"
                         "step and all-reduce times of ResNet-50 on the a40-64 profile"),
}


def curves(name: str) -> dict:
    ctx = Context.build()
    tech = ctx.technique(name)
    cfg = SETUPS[name]
    out = {}
    for v in tech.variant_names:
        spec = ScenarioSpec(variant=v, profile=cfg["profile"], workload="digits", params=cfg["params"],
                            fidelity="execute")
        r = tech.evaluate(resolve_case(tech, spec, context=ctx).scenario)
        out[v] = (r.artifacts["curve"], r)
    return out


def plot(name: str) -> Path:
    data = curves(name)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for v, (c, r) in data.items():
        axes[0].plot(c["step"], c["accuracy"], label=v)
        axes[1].plot(c["time"], c["accuracy"], label=v)
        print(f"{name:10s} {v:10s} final_loss={r['final_loss']:.4f} acc={r['final_accuracy']:.4f} "
              f"allreduces={r['allreduces']:.0f} grad_evals={r['grad_evals']:.0f} sim_time={r['sim_time']:.3f}s")
    axes[0].set_xlabel("iteration")
    axes[1].set_xlabel("simulated wall-clock (s)")
    for ax in axes:
        ax.set_ylabel("test accuracy")
        ax.set_ylim(0.5, 1.0)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.suptitle(SETUPS[name]["title"], fontsize=9)
    fig.tight_layout()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}-accuracy-vs-time.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


if __name__ == "__main__":
    for n in sys.argv[1:] or list(SETUPS):
        print(plot(n))
