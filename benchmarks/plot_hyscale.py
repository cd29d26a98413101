"""HyScale-GNN docs figures and sweep tables (model fidelity).

Writes ``docs/techniques/img/hyscale-gnn-stages.png`` (stage times per variant and platform at
the claims' point) and prints, as markdown, the sweep of the three claim ratios over graphs and
batch sizes and their sensitivity to the sampling-rate constant.

Usage::

    python benchmarks/plot_hyscale.py [--out docs/techniques/img]
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

STAGES = ("t_sample", "t_gather", "t_remote", "t_copy", "t_train_acc", "t_train_cpu", "t_sync")


def _eval(tech, resolve, variant, profile, workload, **params):
    from suite import ScenarioSpec

    base = {"batch": 1024, "fanout": "25,10", "gnn": "graphsage", "hidden": 256}
    sc = resolve(tech, ScenarioSpec(variant=variant, profile=profile, workload=workload,
                                    params={**base, **params})).scenario
    return tech.evaluate(sc)


def ratios(tech, resolve, workload, **params):
    mg = _eval(tech, resolve, "multi-gpu", "hyscale-cpu-gpu", workload, **params)["epoch_time"]
    hg = _eval(tech, resolve, "hyscale", "hyscale-cpu-gpu", workload, **params)["epoch_time"]
    pg = _eval(tech, resolve, "prefetch", "hyscale-cpu-gpu", workload, **params)["epoch_time"]
    hf = _eval(tech, resolve, "hyscale", "hyscale-cpu-fpga", workload, **params)["epoch_time"]
    dd = _eval(tech, resolve, "distdgl", "hyscale-distdgl-4n", workload, **params)["epoch_time"]
    return mg / hg, mg / pg, mg / hf, dd / hf


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/techniques/img")
    a = ap.parse_args(argv)

    from suite.context import Context
    from suite.runner.case import resolve_case
    from suite_hyscale_gnn.technique import TECHNIQUE

    ctx = Context.build()
    resolve = functools.partial(resolve_case, context=ctx)
    rows = _stage_rows(TECHNIQUE, resolve)
    _plot_stages(rows, Path(a.out))
    print("\n| stage (ms) | " + " | ".join(r[0].replace("\n", " on ") for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for s in STAGES:
        print(f"| {s[2:]} | " + " | ".join(f"{r[1][s]:.3f}" for r in rows) + " |")
    print("| **iteration** | " + " | ".join(f"**{r[2]:.3f}**" for r in rows) + " |")
    _print_sweeps(TECHNIQUE, resolve)
    return 0


def _stage_rows(tech, resolve) -> list[tuple[str, dict, float]]:
    """(label, stage times in ms, iteration time in ms) per variant and platform at the claims' point."""
    rows = []
    for prof, variants in (("hyscale-cpu-gpu", ("multi-gpu", "prefetch", "hyscale", "cpu-only", "ideal")),
                           ("hyscale-cpu-fpga", ("multi-gpu", "prefetch", "hyscale", "ideal")),
                           ("hyscale-distdgl-4n", ("distdgl",))):
        for v in variants:
            r = _eval(tech, resolve, v, prof, "hyscale-gnn-ogbn-products")
            rows.append((f"{v}\n{prof.replace('hyscale-', '')}", {s: r[s] * 1e3 for s in STAGES},
                         r["iteration_time"] * 1e3))
    return rows


def _plot_stages(rows, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4.5))
    x = range(len(rows))
    bottom = [0.0] * len(rows)
    for s in STAGES:
        vals = [r[1][s] for r in rows]
        ax.bar(x, vals, bottom=bottom, label=s[2:])
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.plot(list(x), [r[2] for r in rows], "k_", markersize=30, markeredgewidth=2, label="iteration time")
    ax.set_xticks(list(x), [r[0] for r in rows], fontsize=7)
    ax.set_ylabel("ms per mini-batch (stage sum; pipelined variants overlap)")
    ax.set_title("HyScale-GNN model: stage times, ogbn-products, GraphSAGE 25,10, batch 1,024")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "hyscale-gnn-stages.png", dpi=110)
    print(f"wrote {out / 'hyscale-gnn-stages.png'}")


def _print_sweeps(tech, resolve) -> None:
    """The claim ratios over graphs, batches and GNNs, and their sensitivity to the sampling rate."""
    from suite_hyscale_gnn import model

    print("\n| graph | batch | gnn | hyscale / multi-gpu (2.08) | prefetch / multi-gpu | CPU-FPGA / multi-gpu (12.6) "
          "| CPU-FPGA / DistDGL (5.27) |\n|---|---|---|---|---|---|---|")
    for w in ("hyscale-gnn-ogbn-products", "hyscale-gnn-ogbn-papers100m", "hyscale-gnn-mag240m"):
        for b in (256, 1024, 4096):
            for g in ("graphsage", "gcn"):
                r = ratios(tech, resolve, w, batch=b, gnn=g)
                print(f"| {w.replace('hyscale-gnn-', '')} | {b} | {g} | " + " | ".join(f"{v:.2f}" for v in r) + " |")
    print("\n| sampling rate per thread | hyscale / multi-gpu | prefetch / multi-gpu | CPU-FPGA / multi-gpu "
          "| CPU-FPGA / DistDGL |\n|---|---|---|---|---|")
    base = model.SAMPLE_EDGES_PER_THREAD
    try:
        for f in (1 / 8, 1 / 2, 1, 2, 8):
            model.SAMPLE_EDGES_PER_THREAD = base * f
            r = ratios(tech, resolve, "hyscale-gnn-ogbn-products")
            print(f"| {base * f / 1e6:.1f} M edges/s | " + " | ".join(f"{v:.2f}" for v in r) + " |")
    finally:
        model.SAMPLE_EDGES_PER_THREAD = base

if __name__ == "__main__":
    raise SystemExit(main())
