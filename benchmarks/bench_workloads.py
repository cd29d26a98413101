"""Workload-zoo build times: how long a layer table takes to build and to hash (cold, uncached).

Builds each listed workload from its definition (bypassing ``get_workload``'s cache), then
computes its ``content_hash()`` (what every case key includes), best of ``--repeat`` runs.

Usage::

    python benchmarks/bench_workloads.py [--repeat 5] [NAME ...]
"""

from __future__ import annotations

import argparse
import time

DEFAULT = ["resnet-50", "resnet-152", "inception-v3", "densenet-121", "resnet-1001", "resnet-2500",
           "gpt3-175b", "llama3-405b"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import suite.workloads as W

    W._load_plugins()
    print(f"{'workload':16s} {'layers':>7s} {'build s':>9s} {'hash s':>9s}")
    for name in args.names:
        best_b = best_h = float("inf")
        for _ in range(args.repeat):
            W._CACHE.pop(name, None)
            t0 = time.perf_counter()
            wl = W.get_workload(name)
            t1 = time.perf_counter()
            wl.content_hash()
            t2 = time.perf_counter()
            best_b, best_h = min(best_b, t1 - t0), min(best_h, t2 - t1)
        print(f"{name:16s} {len(getattr(wl, 'layers', ())):7d} {best_b:9.4f} {best_h:9.4f}")


if __name__ == "__main__":
    main()
