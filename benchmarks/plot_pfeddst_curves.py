"""Mean personalized accuracy per round of the pfeddst plugin's variants (docs/techniques/img/pfeddst_curves.png).

Runs the cases of the ``better-accuracy`` claim (digits, 20 clients, pathological split with 2
shards each, seeds 0-9, execute fidelity, the technique's defaults otherwise) and plots, per
variant, the mean over the seeds of each round's personalized accuracy (the ``accuracy_curve``
artifact).

    .venv/bin/python benchmarks/plot_pfeddst_curves.py [--out PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from suite.context import Context  # noqa: E402
from suite.runner.case import resolve_case  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "docs" / "techniques" / "img" / "pfeddst_curves.png"
ORDER = ("local-only", "fedavg", "random-peers", "pfeddst")
STYLE = {"random-peers": dict(ls="--"), "pfeddst": dict(lw=2.2)}


def curves() -> dict[str, np.ndarray]:
    """Per variant: the (seeds, rounds) array of per-round personalized accuracy."""
    ctx = Context.build()
    tech = ctx.technique("pfeddst")
    claim = next(c for c in tech.claims if c.id == "better-accuracy")
    by: dict[str, list[list[float]]] = {}
    for label, spec in claim.cases.items():
        r = tech.evaluate(resolve_case(tech, spec, context=ctx).scenario)
        by.setdefault(spec.variant, []).append(list(r.artifacts["accuracy_curve"]))
    return {v: np.array(c) for v, c in by.items()}


def tech_default_target() -> float:
    """The technique's target accuracy for rounds_to_target (its parameter default)."""
    return Context.build().technique("pfeddst").parameters["target_accuracy"].default


def plot(out: Path) -> Path:
    data = curves()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for v in sorted(data, key=lambda v: ORDER.index(v) if v in ORDER else len(ORDER)):
        c = data[v]
        mean = c.mean(axis=0)
        ax.plot(np.arange(1, len(mean) + 1), mean, label=v, **STYLE.get(v, {}))
        print(f"{v:13s} final mean accuracy {mean[-1]:.4f} over {len(c)} seeds")
    ax.set_xlabel("round")
    target = float(tech_default_target())
    ax.axhline(target, color="grey", lw=0.8, ls=":")
    ax.text(len(mean), target + 0.01, f"target {target:.2f}", ha="right", fontsize=8, color="grey")
    ax.set_ylabel("personalized accuracy (mean of 10 seeds)")
    ax.set_ylim(0.0, 1.0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("digits, 20 clients, pathological (2 shards each)", fontsize=9)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    print(plot(ap.parse_args().out))
