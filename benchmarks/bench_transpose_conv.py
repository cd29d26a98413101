"""Transpose convolution on this machine: time, MACs, outputs and peak temporary memory of the four
variants (scatter, zero-insert, kernel-segregated, unified) per layer, and the speed-up of each
over zero-insert (the conventional baseline).

Layers: the transpose-convolution layers of the zoo's DCGAN and EB-GAN generators, and the
declared size sweep of the transpose-conv claims (``suite_transpose_conv.claims.SWEEP``).
Time is the median of ``--repeats`` calls after one warm-up (spread: inter-quartile range) and
their minimum (what the speed-ups use, as the claims do);
memory is the tracemalloc peak beyond the output. Every variant runs the same primitives (one
layout conversion, pre-packed weights, in-place BLAS gemm through one class schedule, one compiled
loop nest for ``Co <= 8``; :mod:`suite_transpose_conv.ops`), so the speed-ups compare the work of
the algorithms, not different kernels. Prints a Markdown table (what
docs/techniques/transpose-conv.md shows).

Then, when torch is installed (the optional ``[torch]`` extra; skipped with a message without it):
the ``unified`` variant against ``torch.nn.functional.conv_transpose2d`` on every DCGAN and EB-GAN
transpose-conv layer at each ``--batches`` size, both on ``--threads`` threads, float32, the two
alternated call by call (so the machine's load falls on both alike) and timed by the execute
fidelity's clock (:func:`suite.perf.measurement_clock`: this thread's CPU time at one thread, wall
time otherwise; the torch figures in docs/techniques/transpose-conv.md up to commit 7cea236 are
wall time), outputs checked equal
(``allclose``, rtol 1e-4, atol 1e-4 x the output's scale). Unified gets its weights pre-packed once
per layer before timing (:func:`suite_transpose_conv.ops.pack`, as an inference library packs at
load); torch gets PyTorch's own layout, as a user calls it. Printed per layer: both times (min and
median), the ratio unified/torch of the minima (the target is <= 1) and of the medians, and the
achieved fraction of the local profile's roofline: ``max(2 MACs / P, bytes / BW) / time`` with
``P`` the profile's fp32 peak scaled to the threads used (``peak x threads / cores``), ``BW`` its
memory bandwidth and bytes the compulsory input + weights + output; MACs the unified variant's
count (padding zeros included). The load average is printed before and after.

Also printed per layer, for the BLAS path (``Co > 8``): the *gemm floor*, the minimum time of
the same sequence of ``?gemm`` calls that one unified call issues (shapes, ``beta`` and order
recorded from the check call through :func:`suite_transpose_conv.ops._gemm_acc`), replayed on
one ``A`` and one ``C`` buffer reused by every call (so hot in cache: a lower bound on the gemms'
share), alternated with the other two; then its ratio to unified's time (1 minus it: the share of
everything else, layout conversion, window copies, output writes) and to torch's (above 1:
unified cannot reach torch's time with this BLAS kernel and these MACs, whatever the rest
costs). ``-`` for the loop-nest layers.

``--openblas-coretype NAME`` sets ``OPENBLAS_CORETYPE`` before numpy (and scipy) load, which
forces OpenBLAS's kernel for that CPU family (e.g. ``SkylakeX`` for its AVX-512 kernels;
``auto`` removes the variable, so OpenBLAS detects the CPU itself); the BLAS libraries and the
kernel they use are printed.

``--malloc-retain`` (glibc only; off by default) calls ``mallopt`` before numpy loads so that
freed memory stays with the process (``M_MMAP_MAX`` 0: no allocation is its own ``mmap``;
``M_TRIM_THRESHOLD`` 1 GiB: the heap top is not given back). Every fresh multi-MB buffer
otherwise arrives as untouched pages, and the first write to each 4 KiB page faults: on this
machine, in a process without torch, that was 40 % of a unified call on EB-GAN 128->64 at
batch 16 (window copies 4.5 ms instead of 0.75). With torch in the process it mostly speeds up
torch (docs/techniques/transpose-conv.md). It acts on the process, so torch, in the same process, gets the same
allocator. tracemalloc sees the same requests either way, so it changes no memory figure.

Usage::

    python benchmarks/bench_transpose_conv.py [--repeats 9] [--batch 1] [--threads 1] [--json OUT]
    python benchmarks/bench_transpose_conv.py --torch-only [--batches 1,16] [--openblas-coretype SkylakeX]
        [--malloc-retain]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys


def gan_layers(batch: int):
    from suite.context import Context
    from suite_transpose_conv.layers import from_layer

    ctx = Context.build()
    out = []
    for wl in ("dcgan-generator", "ebgan-generator"):
        for l in ctx.workload(wl).layers:
            if l.kind == "deconv":
                out.append((f"{wl.split('-')[0]}/{l.name}", from_layer(l, batch)))
    return out


def layers(batch: int):
    from suite_transpose_conv.claims import SWEEP
    from suite_transpose_conv.layers import ConvT

    out = gan_layers(batch)
    for label, ci, co, h, k, s, p in SWEEP:
        out.append((f"sweep/{label}", ConvT(label, batch, ci, co, h, h, k, s, p, 0)))
    return out


def load_profile(name: str):
    """The profile named *name* (default the calibrated ``local``), or the error's text."""
    from suite.context import Context
    from suite.errors import ProfileError

    try:
        return Context.build().profile(name)
    except ProfileError as exc:
        return str(exc)


def roofline_fraction(l, seconds: float, prof, threads: int) -> float | None:
    """``max(2 MACs / P, bytes / BW) / seconds`` on the profile (P scaled to *threads* of its cores)."""
    if prof is None:
        return None
    from suite.perf import roofline_time
    from suite_transpose_conv.model import macs

    dev = prof.require_device()
    cores = int(getattr(dev, "cores", None) or 1)
    peak = dev.flops("fp32") * min(1.0, max(threads, 1) / cores)
    nbytes = 4 * (l.n * l.ci * l.h * l.w + l.ci * l.co * l.k * l.k + l.n * l.co * l.ho * l.wo)
    return roofline_time(2.0 * macs(l, "unified"), nbytes, peak, dev.memory_bandwidth) / seconds


def alternated(fns, repeats: int, clock) -> list[list[float]]:
    """*repeats* rounds of calling every function in *fns* once, in order (so the machine's load
    falls on all alike); per function its *repeats* times (s) by *clock*
    (:func:`suite.perf.measurement_clock`)."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for f, ts in zip(fns, times):
            t0 = clock()
            f()
            ts.append(clock() - t0)
    return times


def torch_table(batches, repeats: int, threads: int, profile: str) -> list[dict]:
    """unified vs torch.nn.functional.conv_transpose2d per GAN layer (see the module docstring)."""
    try:
        import torch
    except ImportError:
        print("\ntorch not installed (optional extra [torch]): unified-vs-torch table skipped")
        return []
    torch.set_num_threads(max(threads, 1))
    prof = load_profile(profile)
    if isinstance(prof, str):
        print(f"no roofline: profile {profile!r} not found ({prof}); run `suite hardware calibrate` first")
        prof = None
    print(f"\nunified vs torch {torch.__version__} conv_transpose2d, float32, {threads} thread(s), {repeats} alternated "
          f"calls each; load average {os.getloadavg()[0]:.2f}")
    print("| batch | layer | Ci->Co | H->Ho | k,s,p,op | torch ms min (median) | unified ms min (median) "
          "| unified/torch min | unified/torch median | roofline fraction unified / torch "
          "| gemm floor ms min | floor/unified | floor/torch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for b in batches:
        for name, l in gan_layers(b):
            row = _torch_row(torch, b, name, l, prof, repeats, threads)
            rows.append(row)
            _print_torch_row(row, l)
    _torch_summary(rows, profile)
    return rows


def _torch_row(torch, b: int, name: str, l, prof, repeats: int, threads: int) -> dict:
    """One GAN layer: torch and unified (checked equal), and the gemm floor of unified's own
    gemm calls, timed alternately on the measurement clock."""
    import numpy as np

    from suite.perf import measurement_clock
    from suite_transpose_conv.execute import _inputs
    from suite_transpose_conv.ops import pack, unified

    x, w = _inputs(l, "float32", np.random.default_rng(0))
    packed = pack(w)  # once per layer, outside the timed calls
    xt, wt = torch.from_numpy(x), torch.from_numpy(w)

    def run_torch():
        return torch.nn.functional.conv_transpose2d(xt, wt, stride=l.s, padding=l.p, output_padding=l.op)

    def run_unified():
        return unified(x, w, l.s, l.p, l.op, packed=packed)[0]

    ref, out, run_gemms = _checked_with_gemm_floor(run_torch, run_unified, l, packed)
    scale = max(1.0, float(np.max(np.abs(ref))))
    if not np.allclose(out, ref, rtol=1e-4, atol=1e-4 * scale):
        raise SystemExit(f"{name} batch {b}: unified differs from torch (max abs "
                         f"{float(np.max(np.abs(out - ref))):.3g})")
    tt, tu, *rest = alternated([run_torch, run_unified] + ([run_gemms] if run_gemms else []), repeats,
                               measurement_clock(threads))
    tg = rest[0] if rest else []
    fu, ft = roofline_fraction(l, min(tu), prof, threads), roofline_fraction(l, min(tt), prof, threads)
    return {"batch": b, "layer": name, **l.as_dict(), "torch_s": tt, "unified_s": tu,
            "ratio_min": min(tu) / min(tt), "ratio_median": statistics.median(tu) / statistics.median(tt),
            "roofline_fraction_unified": fu, "roofline_fraction_torch": ft, "gemm_floor_s": tg}


def _checked_with_gemm_floor(run_torch, run_unified, l, packed):
    """The warm-up (compiles numba once) and check outputs, recording unified's gemm calls; and a
    function replaying those gemms on one A and one C buffer reused by every call (hot in cache:
    a lower bound), or None when unified made no gemm call."""
    import numpy as np
    from scipy.linalg.blas import sgemm

    from suite_transpose_conv import ops

    calls = []
    gemm_acc = ops._gemm_acc

    def record(gemm, a, tap, acc, first, work):
        calls.append((a.shape, tap.shape, first))
        gemm_acc(gemm, a, tap, acc, first, work)

    ops._gemm_acc = record
    try:
        ref, out = run_torch().numpy(), run_unified()
    finally:
        ops._gemm_acc = gemm_acc
    if not calls:
        return ref, out, None
    mmax = max(a[0] for a, _, _ in calls)
    abuf = np.random.default_rng(1).standard_normal((mmax, l.ci), dtype=np.float32)
    cbuf = np.zeros((mmax, l.co), dtype=np.float32)
    operands = [(abuf[:a[0]], np.ascontiguousarray(packed[0, 0]), cbuf[:a[0]], first) for a, _, first in calls]

    def run_gemms():
        for a, t, c, first in operands:
            sgemm(1.0, t.T, a.T, beta=0.0 if first else 1.0, c=c.T, overwrite_c=True)

    return ref, out, run_gemms


def _print_torch_row(row: dict, l) -> None:
    tt, tu, tg = row["torch_s"], row["unified_s"], row["gemm_floor_s"]
    fu, ft = row["roofline_fraction_unified"], row["roofline_fraction_torch"]
    roof = "-" if fu is None else f"{fu:.2f} / {ft:.2f}"
    floor = f"{min(tg) * 1e3:.3f} | {min(tg) / min(tu):.2f} | {min(tg) / min(tt):.2f}" if tg else "- | - | -"
    print(f"| {row['batch']} | {row['layer']} | {l.ci}->{l.co} | {l.h}->{l.ho} | {l.k},{l.s},{l.p},{l.op} | "
          f"{min(tt) * 1e3:.3f} ({statistics.median(tt) * 1e3:.3f}) | {min(tu) * 1e3:.3f} "
          f"({statistics.median(tu) * 1e3:.3f}) | {row['ratio_min']:.2f} | {row['ratio_median']:.2f} | {roof} | {floor} |",
          flush=True)


def _torch_summary(rows: list[dict], profile: str) -> None:
    fr = [r[k] for r in rows for k in ("roofline_fraction_unified", "roofline_fraction_torch") if r[k] is not None]
    if fr and max(fr) > 1.0:
        print(f"\nnote: roofline fractions above 1 (up to {max(fr):.2f}): the profile {profile!r} states less than "
              f"this machine ran (a calibration under load, or on another BLAS kernel); recalibrate at rest with "
              f"`OPENBLAS_NUM_THREADS=1 suite hardware calibrate` and the same OPENBLAS_CORETYPE")
    worst = max(rows, key=lambda r: r["ratio_min"])
    print(f"\nworst unified/torch (min): {worst['ratio_min']:.2f} on {worst['layer']} batch {worst['batch']}; "
          f"layers at most torch's time: {sum(r['ratio_min'] <= 1.0 for r in rows)} of {len(rows)}; "
          f"load average {os.getloadavg()[0]:.2f}")
    over = [f"{r['layer']} b{r['batch']}" for r in rows if r["gemm_floor_s"] and min(r["gemm_floor_s"]) > min(r["torch_s"])]
    print(f"gemm floor above torch's time (unreachable with this BLAS kernel and these MACs): {len(over)} of "
          f"{len(rows)}" + (f" ({', '.join(over)})" if over else ""))


def _args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (0 = library default)")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--batches", default="1,16", help="batch sizes of the unified-vs-torch table (default 1,16)")
    ap.add_argument("--torch-only", action="store_true", help="only the unified-vs-torch table")
    ap.add_argument("--profile", default="local", help="profile of the roofline (default: the calibrated 'local')")
    ap.add_argument("--openblas-coretype", help="set OPENBLAS_CORETYPE before numpy loads (e.g. SkylakeX; "
                                                "'auto' unsets it: OpenBLAS detects the CPU)")
    ap.add_argument("--malloc-retain", action="store_true",
                    help="glibc mallopt before numpy loads: no mmap'd allocations, no heap trimming (freed memory "
                         "is reused, not faulted in again); applies to torch and the variants alike")
    return ap.parse_args()


def _before_numpy(args) -> None:
    """The settings that must precede numpy's import: glibc's malloc and OpenBLAS's core type."""
    if args.malloc_retain:
        import ctypes

        libc = ctypes.CDLL(None)
        m_trim_threshold, m_mmap_max = -1, -4  # <malloc.h>
        ok = libc.mallopt(m_mmap_max, 0) == 1 and libc.mallopt(m_trim_threshold, 1 << 30) == 1
        print(f"malloc: mallopt(M_MMAP_MAX, 0), mallopt(M_TRIM_THRESHOLD, 1 GiB): {'set' if ok else 'FAILED'}")
    if args.openblas_coretype:
        if "numpy" in sys.modules:  # pragma: no cover - nothing above imports numpy
            raise SystemExit("--openblas-coretype must be applied before numpy is imported")
        if args.openblas_coretype == "auto":  # OpenBLAS's own detection of this CPU
            os.environ.pop("OPENBLAS_CORETYPE", None)
        else:
            os.environ["OPENBLAS_CORETYPE"] = args.openblas_coretype


def main() -> None:
    args = _args()
    _before_numpy(args)
    import scipy.linalg.blas  # noqa: F401  (its OpenBLAS loaded before the thread limit)
    from threadpoolctl import threadpool_info

    from suite.perf import blas_threads

    with blas_threads(args.threads):
        blas = sorted({(d.get("internal_api"), d.get("architecture"), d.get("num_threads")) for d in threadpool_info()},
                      key=str)
    print(f"BLAS/OpenMP pools (library, kernel, threads while timing): {blas}; OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    batches = [int(b) for b in args.batches.split(",") if b]
    rows = [] if args.torch_only else _variant_table(args)
    with blas_threads(args.threads):
        trows = torch_table(batches, args.repeats, args.threads, args.profile)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(trows if args.torch_only else {"variants": rows, "torch": trows}, fh, indent=1)


def _variant_table(args) -> list[dict]:
    """Every variant on every layer (the table of the module docstring) and the mean speed-ups."""
    import numpy as np

    from suite.perf import blas_threads
    from suite_transpose_conv.execute import measure_layer

    variants = ("scatter", "zero-insert", "kernel-segregated", "unified")
    rows = []
    print(f"machine: {platform.processor() or platform.machine()}, {platform.platform()}, numpy {np.__version__}, "
          f"batch {args.batch}, float32, {args.repeats} repeats, BLAS threads {args.threads or 'default'}\n")
    print("| layer | Ci->Co | H->Ho | k,s,p,op | variant | time ms median (IQR) | min ms | MACs | outputs/ch | temp MB "
          "| speed-up vs zero-insert (min) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with blas_threads(args.threads):
        for name, l in layers(args.batch):
            res = {v: measure_layer(v, l, repeats=args.repeats, threads=args.threads) for v in variants}
            base = res["zero-insert"]["time_min"]
            for v in variants:
                m = res[v]
                q1, q3 = np.percentile(m["samples"], [25, 75])
                rows.append({"layer": name, **l.as_dict(), "variant": v, "time_s": m["time"], "iqr_s": q3 - q1,
                             "samples": m["samples"], "macs": m["macs"], "outputs": m["outputs_computed"],
                             "peak_temp_bytes": m["peak_temp_bytes"], "time_min_s": m["time_min"],
                             "speedup": base / m["time_min"]})
                print(f"| {name} | {l.ci}->{l.co} | {l.h}->{l.ho} | {l.k},{l.s},{l.p},{l.op} | {v} | "
                      f"{m['time'] * 1e3:.2f} ({(q3 - q1) * 1e3:.2f}) | {m['time_min'] * 1e3:.2f} | {m['macs']:.3g} | "
                      f"{m['outputs_computed']} | {m['peak_temp_bytes'] / 1e6:.2f} | {base / m['time_min']:.2f} |")
    strided = [r for r in rows if r["variant"] == "unified" and r["s"] >= 2]
    for group in ("dcgan", "ebgan", "sweep"):
        sp = [r["speedup"] for r in strided if r["layer"].startswith(group)]
        print(f"\nmean speed-up unified vs zero-insert, {group} (stride >= 2): {np.mean(sp):.2f} over {len(sp)} layers")
    return rows

if __name__ == "__main__":
    main()
