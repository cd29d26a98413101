"""Cost of one suite.perf.collective_time call (issue 17: <= 20 us on this machine), and of the
Poseidon model with the network priced through it.

* warm: a new message size on a (profile, op, group, algorithm) already priced (the common
  case inside a technique: many sizes, few groups); the affine pieces are cached;
* cold: the first call for a (profile, group, op, algorithm): every candidate algorithm priced
  twice (m = 0 and m = 1) to build its pieces;
* Poseidon: one model evaluation (VGG-19, 32 nodes), the quantity a 10,000-case sweep repeats,
  on a fresh profile object each time (a sweep over a profile field) and on the same one.

Usage::

    python benchmarks/bench_collective.py [--repeat 20000]
"""

from __future__ import annotations

import argparse
import platform
import time


def _per_call(fn, n: int) -> float:
    t = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - t) / n * 1e6


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20000)
    args = ap.parse_args(argv)
    from suite.context import Context
    from suite.perf import Group, collective_time
    from suite.perf.network import placement as C

    ctx = Context.build()
    sel = ctx.profile("selene-dgx-a100")
    rows = []
    for label, op, g in [("all-reduce 8 GPUs (1 level)", "allreduce", Group(8, 1)),
                         ("all-reduce 8 x 64 (2 levels)", "allreduce", Group(8, 64)),
                         ("all-reduce 1 x 512 nodes", "allreduce", Group(1, 512)),
                         ("all-gather 8 x 16", "allgather", Group(8, 16)),
                         ("all-to-all 8 x 16", "alltoall", Group(8, 16)),
                         ("p2p across nodes", "p2p", Group(1, 2))]:
        collective_time(op, 1e6, g, sel)
        warm = _per_call(lambda i: collective_time(op, 1e6 + i, g, sel), args.repeat)

        def cold(i):
            C._LINES.clear()
            collective_time(op, 1e6 + i, g, sel)

        rows.append((label, warm, _per_call(cold, max(50, args.repeat // 100))))
    print(f"# collective_time on {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("| call | warm (us) | cold (us) |\n|---|---|---|")
    for label, w, c in rows:
        print(f"| {label} | {w:.1f} | {c:.0f} |")

    from suite.runner.case import resolve_case
    from suite.technique import ScenarioSpec
    from suite_poseidon.technique import TECHNIQUE

    spec = ScenarioSpec(variant="poseidon", profile="titanx-cluster-10gbe", workload="vgg19",
                        params={"nodes": 32})
    sc = resolve_case(TECHNIQUE, spec, context=ctx).scenario
    n = max(20, args.repeat // 200)
    same = _per_call(lambda i: TECHNIQUE.evaluate(sc), n)
    import dataclasses

    prof = sc.profile

    def fresh(i):
        p = prof.with_overrides({"network.0.bandwidth": f"{10e9 + i} bit/s"})
        TECHNIQUE.evaluate(dataclasses.replace(sc, profile=p))

    new = _per_call(fresh, n)
    t0 = time.perf_counter()
    for i in range(n):
        prof.with_overrides({"network.0.bandwidth": f"{10e9 + i} bit/s"})
    override = (time.perf_counter() - t0) / n * 1e6
    print(f"\n| Poseidon model evaluation (VGG-19, 32 nodes) | us |\n|---|---|\n"
          f"| same profile | {same:.0f} |\n| fresh profile each case (sweep) | {new:.0f} |\n"
          f"| of which building the overridden profile | {override:.0f} |")


if __name__ == "__main__":
    main()
