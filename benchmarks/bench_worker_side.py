"""What the process that evaluates adds per case (the worker side of the runner), issue 44.

A Poseidon sweep (32 node counts x 40 bandwidths x its 4 variants: 5,120 cases, 40 profiles
visited in turn) evaluated three ways in one process:

* ``bare``: ``technique.evaluate(scenario)`` (the floor);
* ``worker``: what a pool worker or ``--in-process`` runs per case
  (:func:`suite.runner.evaluate.evaluate_outcome` with the loop's :class:`ReadSampler` and kept
  :class:`InputSnapshots`: input guard, reads recorded, metric and oracle checks, artifact JSON);
* ``no-record``: the same without recording the fields read.

Two measures:

* CPU (``time.thread_time``), the sweep cut into chunks of 32 cases, every variant timed on each
  chunk in rotated order, ``--rounds`` times; per chunk the best round, summed (a load change
  hits all variants of a chunk alike). The load average is printed before and after.
* ``--opcodes``: Python byte-code instructions executed per case beyond the bare loop, by
  function (``sys.settrace`` with opcode events over 64 cases): deterministic, the load does not
  move it; C work (dict copies, JSON encoding) is not counted.

Usage::

    python benchmarks/bench_worker_side.py [--rounds 7] [--opcodes]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections import Counter
from typing import Any, Callable

from suite.context import Context
from suite.runner import expand_entry
from suite.runner.evaluate import InputSnapshots, ReadSampler, evaluate_outcome, resolved_tech

ENTRY = {"technique": "poseidon", "params": {"nodes": list(range(1, 33))},
         "set": {"network.-1.bandwidth": [f"{b} Gbit/s" for b in range(1, 41)]}}
CHUNK = 32


def variants(cases: list[Any]) -> dict[str, Callable[[list[Any]], None]]:
    """The three loops, each over a list of resolved cases (one sampler and snapshot store each,
    kept across calls as an executor loop keeps them)."""
    tech = cases[0].tech

    def bare(chunk: list[Any]) -> None:
        for c in chunk:
            tech.evaluate(c.scenario)

    def loop(record: bool) -> Callable[[list[Any]], None]:
        sampler, snaps = ReadSampler(), InputSnapshots()

        def run(chunk: list[Any]) -> None:
            for c in chunk:
                t = resolved_tech(c)
                take = sampler.take((t.name, c.variant, c.fidelity))
                evaluate_outcome(t, c.scenario, c.key, "summary", record_reads=take and record, snapshots=snaps)
        return run

    return {"bare": bare, "worker": loop(True), "no-record": loop(False)}


def cpu(cases: list[Any], rounds: int) -> None:
    """Per-chunk best CPU of each variant, summed; per case and over the bare loop."""
    loops = variants(cases)
    for f in loops.values():
        f(cases)  # warm: plans, snapshots, caches
    gc.freeze()
    chunks = [cases[i:i + CHUNK] for i in range(0, len(cases), CHUNK)]
    best = {k: [float("inf")] * len(chunks) for k in loops}
    print(f"load before {os.getloadavg()}")
    names = list(loops)
    for r in range(rounds):
        for j, chunk in enumerate(chunks):
            for k in names[(r + j) % 3:] + names[:(r + j) % 3]:
                t = time.thread_time()
                loops[k](chunk)
                best[k][j] = min(best[k][j], time.thread_time() - t)
    print(f"load after {os.getloadavg()}")
    n, floor = len(cases), sum(best["bare"])
    for k, v in best.items():
        print(f"{k:10s} {1e6 * sum(v) / n:7.1f} us/case CPU  over bare {1e6 * (sum(v) - floor) / n:6.1f} us/case  "
              f"ratio {sum(v) / floor:.3f}")


def opcodes(cases: list[Any], n: int = 64) -> None:
    """Byte-code instructions per case beyond the bare loop, by function."""
    cases = cases[::max(1, len(cases) // n)][:n]
    loops = variants(cases)

    def count(f: Callable[[list[Any]], None]) -> Counter[str]:
        f(cases)
        f(cases)
        out: Counter[str] = Counter()

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            frame.f_trace_opcodes, frame.f_trace_lines = True, False
            key = f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_code.co_name}"

            def local(frame: Any, event: str, arg: Any) -> Any:
                if event == "opcode":
                    out[key] += 1
                return local
            return local

        sys.settrace(tracer)
        try:
            f(cases)
        finally:
            sys.settrace(None)
        return out

    floor = count(loops["bare"])
    for k in ("worker", "no-record"):
        c = count(loops[k])
        extra = {f: (c[f] - floor[f]) / len(cases) for f in set(c) | set(floor)}
        print(f"{k}: {sum(extra.values()):.0f} byte-code instructions per case beyond the bare loop")
        for f, x in sorted(extra.items(), key=lambda kv: -kv[1])[:12]:
            print(f"  {x:7.0f}  {f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--opcodes", action="store_true", help="count byte-code instructions instead of timing")
    a = ap.parse_args()
    ctx = Context.build()
    cases = list(expand_entry(ENTRY, context=ctx).cases)
    for c in cases:
        c.scenario  # resolved before any timing
    print(f"# {len(cases)} Poseidon cases, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    if a.opcodes:
        opcodes(cases)
    else:
        cpu(cases, a.rounds)


if __name__ == "__main__":
    main()
