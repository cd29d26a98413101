"""Time per kernel k-means iteration on this machine: popcorn (sparse V, SpMM) vs dense (GEMM).

For each n, builds K (polynomial kernel, float64) for random data once, then times whole
iterations (products, distances, argmin) of both variants from the same partition, and prints
them beside the memory-bandwidth bound of a profile: one iteration must at least read K once,
``n^2 x 8 B / memory_bandwidth``, and the model's prediction
(:func:`suite_kernel_kmeans.model.predict` with ``dtype="fp64"``) on that profile.

The profile is the calibrated local one (``suite hardware calibrate`` writes ``local``); when it
does not exist the bound columns are left empty and the script says so.

Usage::

    .venv/bin/python benchmarks/bench_kernel_kmeans.py                 # short: n = 2,000 and 4,000
    .venv/bin/python benchmarks/bench_kernel_kmeans.py --full          # n = 2,000 .. 20,000
    .venv/bin/python benchmarks/bench_kernel_kmeans.py --sizes 3000,6000 --k 64 --profile path/to/local.toml
    .venv/bin/python benchmarks/bench_kernel_kmeans.py --json out.json
"""

from __future__ import annotations

import argparse
import json
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


def load_profile(name: str):
    from suite.errors import ProfileError
    from suite.hardware import get_profile

    try:
        return get_profile(name)
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
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (FULL if args.full else SHORT)

    prof = load_profile(args.profile)
    if isinstance(prof, str):
        print(f"no bound: profile {args.profile!r} not found ({prof}); run `suite hardware calibrate` first",
              file=sys.stderr)
        prof = None
    else:
        bw = prof.require_device().memory_bandwidth
        print(f"profile {prof.name}: memory bandwidth {bw / 1e9:.1f} GB/s, "
              f"fp64 peak {prof.device.peak_flops.get('fp64', float('nan')) / 1e9:.1f} GFLOP/s")

    rng = np.random.default_rng(0)
    rows = []
    hdr = f"{'n':>6} {'variant':>8} {'median ms':>10} {'min ms':>8} {'K GB/s':>8} {'bound ms':>9} {'model ms':>9} {'x bound':>8}"
    print(hdr)
    print("-" * len(hdr))
    for n in sizes:
        X = rng.normal(size=(n, args.d))
        kp = alg.resolve_kernel("polynomial", X, 1.0 / args.d)
        K = alg.kernel_matrix(X, None, kp)
        labels = rng.integers(0, args.k, n)
        for method in ("dense", "popcorn"):
            ts = time_iterations(K, labels, args.k, method, args.repeats)
            med = statistics.median(ts)
            kbytes = n * n * 8
            row = {"n": n, "k": args.k, "variant": method, "median_s": med, "min_s": min(ts), "samples_s": ts,
                   "k_read_GBps": kbytes / med / 1e9}
            if prof is not None:
                row["bound_s"] = kbytes / prof.device.memory_bandwidth
                try:
                    row["model_s"] = model.predict(method, prof, n, args.d, args.k, dtype="fp64")["time_per_iteration"]
                except Exception as exc:  # e.g. a profile without an fp64 figure
                    row["model_s"] = float("nan")
                    print(f"  model: {exc}", file=sys.stderr)
            rows.append(row)
            b = row.get("bound_s")
            m = row.get("model_s")
            print(f"{n:>6} {method:>8} {med * 1e3:>10.2f} {min(ts) * 1e3:>8.2f} {row['k_read_GBps']:>8.2f} "
                  f"{(b * 1e3 if b else float('nan')):>9.2f} {(m * 1e3 if m else float('nan')):>9.2f} "
                  f"{(med / b if b else float('nan')):>8.2f}")
        del K
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"profile": getattr(prof, "name", None), "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
