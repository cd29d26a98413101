"""Plot the kernel k-means model's weak and strong scaling on the perlmutter profile.

Left: weak-scaling efficiency T(4 GPUs) / T(G) with n = sqrt(G) x 96,000 (geometric mean over
KDD-sampled, HIGGS, MNIST8m and k in {16, 32, 64}); right: strong-scaling speed-up T(4) / T(G)
at n = 192,000, for the 1d, 1.5d and 2d layouts, with the paper's 1.5D numbers (Bellavita et
al., arXiv 2601.17136v2 §VI-B/C, Figs. 2 and 4) as markers. Writes
docs/techniques/img/kernel-kmeans-scaling.png (or --out).

Usage::

    .venv/bin/python benchmarks/plot_kernel_kmeans_scaling.py [--out PATH] [--profile perlmutter]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from suite.context import Context  # noqa: E402

from suite_kernel_kmeans import model  # noqa: E402

GPUS = (4, 16, 64, 256)
DATASETS = ("kdd-sampled", "higgs", "mnist8m")
KS = (16, 32, 64)
PAPER_WEAK = {64: 86.87, 256: 79.72}
PAPER_STRONG = {64: 4.65, 256: 4.16}


CTX = Context.build()


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def curves(profile):
    weak, strong = {}, {}
    for variant in ("1d", "1.5d", "2d"):
        w, s = [], []
        for g in GPUS:
            we, ss = [], []
            for ds in DATASETS:
                d = CTX.workload(ds).d
                for k in KS:
                    t4w = model.predict(variant, profile, 2 * 96_000, d, k, 4)["total_time"]
                    tgw = model.predict(variant, profile, math.isqrt(g) * 96_000, d, k, g)["total_time"]
                    t4s = model.predict(variant, profile, 192_000, d, k, 4)["total_time"]
                    tgs = model.predict(variant, profile, 192_000, d, k, g)["total_time"]
                    we.append(t4w / tgw)
                    ss.append(t4s / tgs)
            w.append(100 * geomean(we))
            s.append(geomean(ss))
        weak[variant], strong[variant] = w, s
    return weak, strong


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parents[1]
    ap.add_argument("--out", default=str(root / "docs" / "techniques" / "img" / "kernel-kmeans-scaling.png"))
    ap.add_argument("--profile", default="perlmutter")
    args = ap.parse_args(argv)
    prof = CTX.profile(args.profile)
    weak, strong = curves(prof)
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6), dpi=110)
    styles = {"1d": ("tab:gray", "s"), "1.5d": ("tab:blue", "o"), "2d": ("tab:orange", "^")}
    for v, (c, m) in styles.items():
        a.plot(GPUS, weak[v], marker=m, color=c, label=f"model {v}")
        b.plot(GPUS, strong[v], marker=m, color=c, label=f"model {v}")
    a.scatter(list(PAPER_WEAK), list(PAPER_WEAK.values()), marker="*", s=140, color="crimson", zorder=5,
              label="paper 1.5D")
    b.scatter(list(PAPER_STRONG), list(PAPER_STRONG.values()), marker="*", s=140, color="crimson", zorder=5,
              label="paper 1.5D")
    b.plot(GPUS, [g / 4 for g in GPUS], ls=":", color="black", label="ideal")
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.set_xticks(GPUS)
        ax.set_xticklabels([str(g) for g in GPUS])
        ax.set_xlabel("GPUs (G)")
        ax.grid(alpha=0.3)
    b.set_yscale("log", base=2)
    a.set_ylabel("weak-scaling efficiency vs 4 GPUs (%)")
    a.set_title("weak: n = sqrt(G) x 96,000", fontsize=10)
    b.set_ylabel("strong-scaling speed-up vs 4 GPUs")
    b.set_title("strong: n = 192,000", fontsize=10)
    a.legend(fontsize=7)
    b.legend(fontsize=7)
    fig.suptitle(f"kernel k-means, model on {prof.name} (geomean over 3 datasets x k in 16/32/64)", fontsize=10)
    fig.tight_layout()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    print(f"wrote {out}")
    for v in styles:
        print(v, "weak %:", [round(x, 1) for x in weak[v]], "strong x:", [round(x, 2) for x in strong[v]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
