"""The sensitivity table of docs/techniques/cerebras-stencil.md: the three ratios under every
combination of the unknowns (wafer generation x I/O mode x GPU link x dtype, and the kernel).

Run ``python benchmarks/stencil_sensitivity.py`` to print it as Markdown, or
``python benchmarks/stencil_sensitivity.py --plot FILE.png`` for the ratios-vs-steps figure. Every row uses the
technique's defaults except the column it varies; the PCIe host is ``dgx-1-v100`` with its GPU-GPU
level overridden to PCIe 3.0 x16 (15.75 GB/s per direction, the V100's host link).
"""

from __future__ import annotations

import itertools

from suite import Scenario

from suite_cerebras_stencil import model
from suite_cerebras_stencil.technique import DEFAULTS, PROFILES

__all__ = ["ratios", "table", "plot_steps", "main"]

PCIE = {"network.0.bandwidth": "15.75 GB/s", "network.0.name": "pcie3-x16"}


def _profiles(gen: str, link: str):
    from suite.context import Context

    ctx = Context.build()
    gpu = ctx.profile(PROFILES["gpu-4x"])
    if link == "pcie":
        gpu = gpu.with_overrides({"network.0.bandwidth": PCIE["network.0.bandwidth"]})
    return ctx.profile(PROFILES["cpu-2s"]), gpu, ctx.profile(PROFILES[gen])


def ratios(gen: str = "wse-1", io: str = "streamed", link: str = "nvlink", **params) -> dict:
    """T(gpu)/T(wse), T(cpu)/T(wse), T(cpu)/T(gpu) and each platform's dominant term."""
    cpu, gpu, wse = _profiles(gen, link)
    p = {**DEFAULTS, "io": io, **params}
    res = {v: model.evaluate(Scenario("cerebras-stencil", v, "model", prof, None, p))
           for v, prof in (("cpu-2s", cpu), ("gpu-4x", gpu), ("wse", wse))}
    t = {v: r["time_per_call"] for v, r in res.items()}
    return {"vs-4xv100": t["gpu-4x"] / t["wse"], "vs-2xxeon": t["cpu-2s"] / t["wse"],
            "gpu-vs-cpu": t["cpu-2s"] / t["gpu-4x"],
            "dominant": {v: r.artifacts["setup"]["dominant"] for v, r in res.items()}}


def _band(x: float, paper: float) -> str:
    g = paper - 1.0
    return "**in**" if abs((x - 1.0) - g) <= 0.2 * g else ""


def table() -> str:
    """The Markdown table (generation x io x GPU link x dtype at the default kernel, then the
    kernel at each I/O mode)."""
    rows = ["| WSE | io | GPU link | dtype | kernel | gpu/wse (2.5x) | cpu/wse (114x) | cpu/gpu (45.6x) | dominant cpu / gpu / wse |",
            "|---|---|---|---|---|---|---|---|---|"]
    combos = [(g, io, l, d, DEFAULTS["kernel"]) for g, io, l, d in
              itertools.product(("wse-1", "wse-2"), ("streamed", "resident"), ("nvlink", "pcie"), ("fp32", "fp16"))]
    combos += [("wse-1", io, "nvlink", "fp32", "diffusion7") for io in ("streamed", "resident")]
    for g, io, link, dt, k in combos:
        r = ratios(g, io, link, dtype=dt, kernel=k)
        dom = r["dominant"]
        rows.append(f"| {g} | {io} | {link} | {dt} | {k} | {r['vs-4xv100']:.3g} {_band(r['vs-4xv100'], 2.5)} | "
                    f"{r['vs-2xxeon']:.3g} {_band(r['vs-2xxeon'], 114)} | {r['gpu-vs-cpu']:.3g} "
                    f"{_band(r['gpu-vs-cpu'], 45.6)} | {dom['cpu-2s']} / {dom['gpu-4x']} / {dom['wse']} |")
    return "\n".join(rows)


def plot_steps(path: str, steps=None) -> None:
    """Plot the three ratios against steps per streamed call, with the claims' bands (the figure
    docs/techniques/img/cerebras-stencil-steps.png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    steps = np.unique(np.round(np.logspace(0, 3, 40)).astype(int)) if steps is None else np.asarray(steps)
    rs = [ratios(steps=int(s)) for s in steps]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for key, paper, colour in (("vs-4xv100", 2.5, "C0"), ("vs-2xxeon", 114.0, "C1"), ("gpu-vs-cpu", 45.6, "C2")):
        g = paper - 1.0
        ax.axhspan(1 + 0.8 * g, 1 + 1.2 * g, color=colour, alpha=0.15)
        ax.plot(steps, [r[key] for r in rs], color=colour, label=f"{key} (paper {paper:g}x)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("stencil steps per streamed call")
    ax.set_ylabel("time ratio (model)")
    ax.set_title("cerebras-stencil: ratios vs steps per call (bands: claims' +-20% of the gain)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    import sys

    if len(sys.argv) > 2 and sys.argv[1] == "--plot":
        plot_steps(sys.argv[2])
        return
    print(table())


if __name__ == "__main__":
    main()
