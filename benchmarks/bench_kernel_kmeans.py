"""Time per kernel k-means iteration on this machine: popcorn (sparse V, SpMM) vs dense (GEMM).

For each n, builds K (polynomial kernel, float64) for random data once, then times whole
iterations (products, distances, argmin) of both variants from the same partition, and prints
them beside the memory-bandwidth bound of a profile: one iteration must at least read K once,
``n^2 x 8 B / memory_bandwidth``, and the model's prediction
(:func:`suite_kernel_kmeans.model.predict` with ``dtype="fp64"``) on that profile.

The profile is the calibrated local one (``suite hardware calibrate`` writes ``local``); when it
does not exist the bound columns are left empty and the script says so.

It also measures, at the run's BLAS thread count, the two rates the iterations are held to and
prints each variant's fraction of them:

* the memory read rate: the faster of two pure streaming reads of the same K, ``K.max()``
  (numpy, one thread) and ``K @ ones`` (BLAS dgemv, the run's BLAS threads), median of the
  repeats each. ``K.sum()`` is printed beside it but is not the rate: numpy's pairwise summation
  holds it to about 15 GB/s on one core here, against 23-29 GB/s for the other two. Every
  variant's "K GB/s" is ``n^2 x 8 B`` over its median iteration time, and "x read" is that over
  the read rate;
* the GEMM rate: a square ``m x m`` float64 ``A @ B`` with ``m = min(n, --gemm-max)``,
  ``2 m^3`` FLOP, median of 3 after one warm-up. The dense variant does ``2 n^2 k`` FLOP per
  iteration ("GFLOP/s"); "x GEMM" is that over the GEMM rate, and "x roof" over the roofline
  bound ``min(GEMM rate, AI x read rate)`` with ``AI = 2k / 8`` FLOP per byte of K (K read once,
  V^T and E in cache). At k = 16, AI = 4 FLOP/B; the line under the table says whether that is
  under the measured ridge ``GEMM rate / read rate`` (memory-bound) or over it (compute-bound).

With a profile, "x prof" is the fraction of the profile's calibrated roofline: ``K GB/s`` over its
STREAM bandwidth for popcorn, and the dense GFLOP/s over ``min(fp64 peak, AI x bandwidth)``.
``--threads N`` pins the BLAS pools to N threads for the whole run (numpy's reductions and the
compiled SpMM are single-threaded either way).

Usage::

    .venv/bin/python benchmarks/bench_kernel_kmeans.py                 # short: n = 2,000 and 4,000
    .venv/bin/python benchmarks/bench_kernel_kmeans.py --full          # n = 2,000 .. 20,000
    .venv/bin/python benchmarks/bench_kernel_kmeans.py --sizes 3000,6000 --k 64 --profile path/to/local.toml
    .venv/bin/python benchmarks/bench_kernel_kmeans.py --json out.json
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_kernel_kmeans.py --sizes 4000,8000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

from suite_kernel_kmeans import algorithm as alg
from suite_kernel_kmeans import model, solvers

SHORT = (2000, 4000)
FULL = (2000, 5000, 10000, 15000, 20000)


def time_iterations(K: np.ndarray, labels: np.ndarray, k: int, method: str, repeats: int) -> list[float]:
    """Wall times (s) of *repeats* full iterations of *method* from the partition *labels*."""
    diag = np.diag(K).copy()
    out = []
    for r in range(repeats + 1):
        t = time.perf_counter()
        E, sizes, G = solvers.single_iteration(method, labels, k, K=K)
        D = alg.distances(E, sizes, G)
        alg.update_labels(D, diag, labels)
        dt = time.perf_counter() - t
        if r:  # the first run warms caches and allocations
            out.append(dt)
    return out


def median_time(fn, repeats: int) -> float:
    """Median wall time (s) of *repeats* calls of *fn* after one warm-up call."""
    fn()
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def read_rates(K: np.ndarray, repeats: int) -> dict[str, float]:
    """Streaming read rates (B/s) of K: ``K.nbytes`` over the median time of ``K.max()``,
    ``K @ ones`` (dgemv) and ``K.sum()``; ``"read"`` is the faster of the first two."""
    ones = np.ones(K.shape[1])
    r = {name: K.nbytes / median_time(fn, repeats)
         for name, fn in (("max", K.max), ("gemv", lambda: K @ ones), ("sum", K.sum))}
    r["read"] = max(r["max"], r["gemv"])
    return r


def gemm_rate(m: int, rng: np.random.Generator, repeats: int = 3) -> float:
    """float64 GEMM rate (FLOP/s) of a square ``m x m`` ``A @ B``: ``2 m^3`` over the median time."""
    A = rng.normal(size=(m, m))
    B = rng.normal(size=(m, m))
    return 2.0 * m**3 / median_time(lambda: A @ B, repeats)


def blas_thread_count() -> str:
    """The BLAS pools' thread counts as threadpoolctl reports them (e.g. ``"openblas 2"``)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown"
    return ", ".join(sorted({f"{i.get('internal_api')} {i.get('num_threads')}" for i in threadpool_info()}))


def load_profile(name: str):
    from suite.context import Context
    from suite.errors import ProfileError

    try:
        return Context.build().profile(name)
    except ProfileError as exc:
        return str(exc)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="n = 2,000, 5,000, 10,000, 15,000, 20,000")
    ap.add_argument("--sizes", default=None, help="comma-separated n values (overrides --full)")
    ap.add_argument("--k", type=int, default=16, help="clusters (default 16)")
    ap.add_argument("--d", type=int, default=32, help="features of the random data (default 32)")
    ap.add_argument("--repeats", type=int, default=5, help="timed iterations per variant (default 5)")
    ap.add_argument("--profile", default="local", help="profile for the bound (default: the calibrated 'local')")
    ap.add_argument("--json", default=None, help="write the rows to this JSON file")
    ap.add_argument("--gemm-max", type=int, default=4000,
                    help="largest m of the square GEMM that measures the GEMM rate (default 4000)")
    ap.add_argument("--threads", type=int, default=0, help="pin the BLAS pools to N threads (default: leave them)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (FULL if args.full else SHORT)

    from suite.perf import blas_threads

    with blas_threads(args.threads):
        return _run(args, sizes)


def _run(args, sizes) -> int:
    from suite.perf import attainable_flops, machine_balance  # the roofline [Williams09]

    prof = load_profile(args.profile)
    if isinstance(prof, str):
        print(f"no bound: profile {args.profile!r} not found ({prof}); run `suite hardware calibrate` first",
              file=sys.stderr)
        prof = None
        bw = peak = None
    else:
        bw = prof.require_device().memory_bandwidth
        peak = prof.device.peak_flops.get("fp64")
        print(f"profile {prof.name}: memory bandwidth {bw / 1e9:.1f} GB/s, "
              f"fp64 peak {(peak or float('nan')) / 1e9:.1f} GFLOP/s")
    print(f"BLAS threads: {blas_thread_count()}")

    rng = np.random.default_rng(0)
    ai = 2.0 * args.k / 8.0  # FLOP per byte of K for the dense product (2k FLOP per 8-byte element)
    rows = []
    rates = {}
    hdr = (f"{'n':>6} {'variant':>8} {'median ms':>10} {'min ms':>8} {'K GB/s':>8} {'x read':>7} {'GFLOP/s':>8} "
           f"{'x GEMM':>7} {'x roof':>7} {'x prof':>7} {'bound ms':>9} {'model ms':>9} {'x bound':>8}")
    for n in sizes:
        X = rng.normal(size=(n, args.d))
        kp = alg.resolve_kernel("polynomial", X, 1.0 / args.d)
        K = alg.kernel_matrix(X, None, kp)
        labels = rng.integers(0, args.k, n)
        rr = read_rates(K, args.repeats)
        rd = rr["read"]
        m = min(n, args.gemm_max)
        gm = gemm_rate(m, rng)
        roof, ridge = attainable_flops(ai, gm, rd), machine_balance(gm, rd)
        rates[n] = {"read_GBps": rd / 1e9, "max_GBps": rr["max"] / 1e9, "gemv_GBps": rr["gemv"] / 1e9,
                    "sum_GBps": rr["sum"] / 1e9, "gemm_m": m, "gemm_GFLOPs": gm / 1e9, "roof_GFLOPs": roof / 1e9}
        print(f"n = {n}: read {rd / 1e9:.2f} GB/s (K.max() {rr['max'] / 1e9:.2f}, K @ ones {rr['gemv'] / 1e9:.2f}, "
              f"K.sum() {rr['sum'] / 1e9:.2f}); GEMM {m}x{m} {gm / 1e9:.1f} GFLOP/s; "
              f"dense AI {ai:g} FLOP/B against the measured ridge {ridge:.2f} FLOP/B: "
              f"{'memory' if ai < ridge else 'compute'}-bound, roof {roof / 1e9:.1f} GFLOP/s")
        proof = attainable_flops(ai, peak, bw) if prof is not None and peak else None  # the profile's roof
        if proof is not None:
            pridge = machine_balance(peak, bw)
            print(f"         profile ridge {pridge:.2f} FLOP/B: dense "
                  f"{'memory' if ai < pridge else 'compute'}-bound on the profile, "
                  f"roof {proof / 1e9:.1f} GFLOP/s")
        print(hdr)
        print("-" * len(hdr))
        for method in ("dense", "popcorn"):
            rows.append(_variant_row(args, method, n, K, labels, prof, rd, gm, roof, proof, bw))
        del K
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"profile": getattr(prof, "name", None), "threads": blas_thread_count(), "rates": rates,
                       "rows": rows}, fh, indent=1)
    return 0



def _variant_row(args, method: str, n: int, K, labels, prof, rd: float, gm: float, roof: float, proof, bw) -> dict:
    """Time one variant's iteration on K, print its line and return its row: against the read
    rate, the GEMM rate and the roofline measured here, and the profile's bound and model."""
    ts = time_iterations(K, labels, args.k, method, args.repeats)
    med = statistics.median(ts)
    kbytes = n * n * 8
    row = {"n": n, "k": args.k, "variant": method, "median_s": med, "min_s": min(ts), "samples_s": ts,
           "k_read_GBps": kbytes / med / 1e9, "read_rate_GBps": rd / 1e9, "frac_read": kbytes / med / rd}
    if method == "dense":
        fl = 2.0 * n * n * args.k / med
        row.update(GFLOPs=fl / 1e9, gemm_GFLOPs=gm / 1e9, frac_gemm=fl / gm, roof_GFLOPs=roof / 1e9,
                   frac_roof=fl / roof)
    if prof is not None:
        row["bound_s"] = kbytes / bw
        if method == "dense" and proof is not None:
            row["frac_profile"] = row["GFLOPs"] * 1e9 / proof
        elif method == "popcorn":
            row["frac_profile"] = kbytes / med / bw
        try:
            row["model_s"] = model.predict(method, prof, n, args.d, args.k, dtype="fp64")["time_per_iteration"]
        except Exception as exc:  # e.g. a profile without an fp64 figure
            row["model_s"] = float("nan")
            print(f"  model: {exc}", file=sys.stderr)
    nan = float("nan")
    b = row.get("bound_s")
    mo = row.get("model_s")
    print(f"{n:>6} {method:>8} {med * 1e3:>10.2f} {min(ts) * 1e3:>8.2f} {row['k_read_GBps']:>8.2f} "
          f"{row['frac_read']:>7.2f} {row.get('GFLOPs', nan):>8.1f} {row.get('frac_gemm', nan):>7.2f} "
          f"{row.get('frac_roof', nan):>7.2f} {row.get('frac_profile', nan):>7.2f} "
          f"{(b * 1e3 if b else nan):>9.2f} {(mo * 1e3 if mo else nan):>9.2f} "
          f"{(med / b if b else nan):>8.2f}")
    return row

if __name__ == "__main__":
    raise SystemExit(main())
