"""Transpose convolution on this machine: time, MACs, outputs and peak temporary memory of the four
variants (scatter, zero-insert, kernel-segregated, unified) per layer, and the speed-up of each
over zero-insert (the conventional baseline).

Layers: the transpose-convolution layers of the zoo's DCGAN and EB-GAN generators, and the
declared size sweep of the transpose-conv claims (``suite_transpose_conv.claims.SWEEP``).
Time is the median of ``--repeats`` calls after one warm-up (spread: inter-quartile range) and
their minimum (what the speed-ups use, as the claims do);
memory is the tracemalloc peak beyond the output. Prints a Markdown table (what
docs/techniques/transpose-conv.md shows).

Usage::

    python benchmarks/bench_transpose_conv.py [--repeats 9] [--batch 1] [--threads 1] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform

import numpy as np


def layers(batch: int):
    from suite.workloads import get_workload
    from suite_transpose_conv.claims import SWEEP
    from suite_transpose_conv.layers import ConvT, from_layer

    out = []
    for wl in ("dcgan-generator", "ebgan-generator"):
        for l in get_workload(wl).layers:
            if l.kind == "deconv":
                ct = from_layer(l, batch)
                out.append((f"{wl.split('-')[0]}/{l.name}", ct))
    for label, ci, co, h, k, s, p in SWEEP:
        out.append((f"sweep/{label}", ConvT(label, batch, ci, co, h, h, k, s, p, 0)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (0 = library default)")
    ap.add_argument("--json", help="also write the rows as JSON here")
    args = ap.parse_args()
    from suite_transpose_conv.execute import _blas_threads, measure_layer

    variants = ("scatter", "zero-insert", "kernel-segregated", "unified")
    rows = []
    print(f"machine: {platform.processor() or platform.machine()}, {platform.platform()}, numpy {np.__version__}, "
          f"batch {args.batch}, float32, {args.repeats} repeats, BLAS threads {args.threads or 'default'}\n")
    print("| layer | Ci->Co | H->Ho | k,s,p,op | variant | time ms median (IQR) | min ms | MACs | outputs/ch | temp MB "
          "| speed-up vs zero-insert (min) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with _blas_threads(args.threads):
        for name, l in layers(args.batch):
            res = {v: measure_layer(v, l, repeats=args.repeats) for v in variants}
            base = res["zero-insert"]["time_min"]
            for v in variants:
                m = res[v]
                q1, q3 = np.percentile(m["samples"], [25, 75])
                row = {"layer": name, **l.as_dict(), "variant": v, "time_s": m["time"], "iqr_s": q3 - q1,
                       "samples": m["samples"], "macs": m["macs"], "outputs": m["outputs_computed"],
                       "peak_temp_bytes": m["peak_temp_bytes"], "time_min_s": m["time_min"],
                       "speedup": base / m["time_min"]}
                rows.append(row)
                print(f"| {name} | {l.ci}->{l.co} | {l.h}->{l.ho} | {l.k},{l.s},{l.p},{l.op} | {v} | "
                      f"{m['time'] * 1e3:.2f} ({(q3 - q1) * 1e3:.2f}) | {m['time_min'] * 1e3:.2f} | {m['macs']:.3g} | "
                      f"{m['outputs_computed']} | {m['peak_temp_bytes'] / 1e6:.2f} | {base / m['time_min']:.2f} |")
    strided = [r for r in rows if r["variant"] == "unified" and r["s"] >= 2]
    for group in ("dcgan", "ebgan", "sweep"):
        sp = [r["speedup"] for r in strided if r["layer"].startswith(group)]
        print(f"\nmean speed-up unified vs zero-insert, {group} (stride >= 2): {np.mean(sp):.2f} over {len(sp)} layers")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
