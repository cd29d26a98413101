"""COMET docs figure: the best step time of each cluster of the comet-v2 grid, per variant.

Evaluates the claims' scenario (``megatron-1t``, batch 3,072, the ``comet-v2`` grid over
``selene-dgx-a100``'s fabric, model fidelity) for the three variants (``megatron-rule``: Megatron's
own strategy rule; ``hbm-only``: the strategy search without memory expansion; ``comet``: the
search with expansion) and draws, per device and NIC rate, each variant's best step time from the
result's ``clusters`` artifact (``comet`` at the largest expansion, 1 TB per node), as
docs/techniques/comet.md shows it in ``docs/techniques/img/comet-grid.png``. Prints the table the
page prints beside it (every cluster, every expansion).

Usage::

    python benchmarks/plot_comet_grid.py [--out docs/techniques/img]
"""

from __future__ import annotations

import argparse
from pathlib import Path

VARIANTS = ("megatron-rule", "hbm-only", "comet")
ENTRY = {"technique": "comet", "workload": "megatron-1t", "profile": "selene-dgx-a100",
         "params": {"grid": ["comet-v2"], "global_batch": [3072]}}


def clusters() -> dict[str, list[dict]]:
    """variant -> the ``clusters`` artifact of its case (one row per cluster of the grid)."""
    from suite.context import Context
    from suite.runner import expand_entry

    out = {}
    for case in expand_entry(ENTRY, context=Context.build()).cases:
        out[case.variant] = case.tech.evaluate(case.scenario).artifacts["clusters"]
    return out


def _label(cluster: str) -> str:
    """``nvidia-a100-sxm4-40gb/100Gbit/s/none`` -> ``a100-40gb`` over ``100 Gb/s``."""
    dev, nic = cluster.rsplit("/", 1)[0].split("/", 1)
    parts = dev.split("-")
    return f"{parts[1]}-{parts[-1]}\n{nic.replace('Gbit/s', ' Gb/s')}"


def plot(rows: dict[str, list[dict]], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    largest = {r["cluster"].rsplit("/", 1)[1] for r in rows["comet"]} - {"none"}
    top = max(largest, key=lambda e: float(e.rstrip("GB")))
    # one bar group per device and NIC rate: the HBM-only variants at no expansion, comet at the largest
    keys = [r["cluster"].rsplit("/", 1)[0] for r in rows["megatron-rule"] if r["cluster"].endswith("/none")]
    time = {v: {r["cluster"]: r["time"] for r in rows[v]} for v in VARIANTS}
    series = {"megatron-rule": [time["megatron-rule"][f"{k}/none"] for k in keys],
              "hbm-only search": [time["hbm-only"][f"{k}/none"] for k in keys],
              f"comet ({top.replace('1000GB', '1 TB')} expansion per node)": [time["comet"][f"{k}/{top}"] for k in keys]}
    fig, ax = plt.subplots(figsize=(12, 4.5))
    w = 0.27
    for j, (name, ys) in enumerate(series.items()):
        ax.bar([i + (j - 1) * w for i in range(len(keys))], ys, w, label=name)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([_label(f"{k}/none") for k in keys], fontsize=7)
    ax.set_ylabel("step time (s), megatron-1t, batch 3072")
    ax.set_title("comet-v2 grid (128 nodes x 8 GPUs): best step time per cluster, model fidelity")
    ax.legend(fontsize=8)
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "comet-grid.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/techniques/img")
    a = ap.parse_args(argv)
    rows = clusters()
    print("| cluster (device / NIC per GPU / expansion per node) | megatron-rule (s) | hbm-only (s) | comet (s) | "
          "comet's strategy: tp, pp, dp, mbs, recompute |")
    print("|---|---:|---:|---:|---|")
    by = {v: {r["cluster"]: r for r in rows[v]} for v in VARIANTS}
    for r in rows["comet"]:
        c, s = r["cluster"], r["strategy"]
        print(f"| {c} | {by['megatron-rule'][c]['time']:.1f} | {by['hbm-only'][c]['time']:.1f} | {r['time']:.1f} | "
              f"{s['tp']}, {s['pp']}, {s['dp']}, {s['mbs']}, {s['recompute']} |")
    print(f"wrote {plot(rows, Path(a.out))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
