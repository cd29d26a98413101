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
* ``--instructions``: machine instructions per case of each piece of the worker side (valgrind's
  callgrind, one child process per piece, instrumentation switched on by ``callgrind_control``
  around the timed loop only, ``PYTHONHASHSEED=0``): C work included, the load does not move it.
  Pieces: the bare evaluation; the recording's start + stop alone; an evaluation recorded (start,
  evaluate, stop: ``bench_runner.py``'s loop, whose stop skips the check); the same with the
  collective model's per-call check switched off (what that check costs); the metric checks + artifact JSON alone (``_result_fields`` on kept results); the
  worker as a pool worker runs it, with and without recording; the same plus pickling its outcomes
  in one batch.

Usage::

    python benchmarks/bench_worker_side.py [--rounds 7] [--opcodes] [--instructions [--cases 64]]
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
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


#: what ``--instructions`` counts, in the order printed (:func:`pieces`)
PIECES = ("bare", "start + stop", "recorded", "recorded, no collective check", "checks + JSON", "worker, no recording",
          "worker", "worker + pickling")


def pieces(cases: list[Any]) -> dict[str, Callable[[], None]]:
    """The loops ``--instructions`` counts, each over all of *cases* (see the module doc)."""
    import pickle
    from functools import partial

    from bench_runner import _part_loops  # this script's directory is on the path when run as a script
    from suite.hardware.recording import Recording
    from suite.runner.evaluate import _result_fields

    tech, snaps = cases[0].tech, InputSnapshots()
    results = [tech.evaluate(c.scenario) for c in cases]

    def worker(record: bool) -> Callable[[], None]:
        return lambda: [evaluate_outcome(tech, c.scenario, c.key, "summary", interrupt_fails=True, record_reads=record,
                                         snapshots=snaps) for c in cases]

    recorded = partial(_part_loops(cases)["reads recorded"], cases)  # start, evaluate, stop: bench_runner's loop

    def without_collective_check() -> None:
        import suite.perf.network.collective as coll

        kept, coll.RECORDED = coll.RECORDED, {}  # the per-call check sees "nothing records"
        try:
            recorded()
        finally:
            coll.RECORDED = kept

    def start_stop() -> None:
        for c in cases:
            Recording(snaps.plan(c.scenario.profile)).start().stop_checked()

    def pickled() -> None:
        outs = worker(True)()
        for i, o in enumerate(outs):
            o["i"] = i
        pickle.dumps(outs, -1)

    return {"bare": lambda: [tech.evaluate(c.scenario) for c in cases], "start + stop": start_stop,
            "recorded": recorded, "recorded, no collective check": without_collective_check,
            "checks + JSON": lambda: [_result_fields(tech, r, "summary") for r in results],
            "worker, no recording": worker(False), "worker": worker(True), "worker + pickling": pickled}


def count_child(cases: list[Any], name: str) -> None:
    """In a process under callgrind: piece *name*, warmed, its loop alone instrumented."""
    f = pieces(cases)[name]
    f()
    f()
    gc.freeze()

    def ctl(*flags: str) -> None:
        subprocess.run(["callgrind_control", *flags, str(os.getpid())], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        time.sleep(0.3)  # callgrind acts on the request at its next check

    ctl("-i", "on")
    f()
    ctl("-d")  # the loop's part: dumped to its own file
    ctl("-i", "off")


def _dumped_total(d: str, out: str, p: subprocess.Popen, name: str) -> float:
    """The instruction total of piece *name*'s loop: the first dump ``callgrind_control -d``
    wrote (``<out>.1``; the file written at exit holds the rest of the process). NaN, with the
    reason printed, when callgrind wrote none (it could not be attached, or the child failed)."""
    rc = p.wait()
    prefix = os.path.basename(out) + "."
    dumps = sorted((f for f in os.listdir(d) if f.startswith(prefix) and f[len(prefix):].isdigit()),
                   key=lambda f: int(f[len(prefix):]))
    text = open(os.path.join(d, dumps[0])).read() if dumps else ""
    tot = next((int(line.split()[1]) for line in text.splitlines() if line.startswith("totals:")), None)
    if not tot:
        print(f"# {name}: no instruction count (child exit status {rc}; {len(dumps)} dumps): "
              "is valgrind installed and callgrind_control on PATH?", file=sys.stderr)
        return float("nan")
    return float(tot)


def instructions(n: int) -> None:
    """Machine instructions per case of each piece, one callgrind child each (two at a time)."""
    names = PIECES
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as d:
        procs = {}
        for i, name in enumerate(names):
            out = os.path.join(d, f"cg{i}")
            procs[name] = (out, subprocess.Popen(
                ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                 sys.executable, __file__, "--count-child", name, "--cases", str(n)],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            if i % 2:
                for _o, p in list(procs.values())[-2:]:
                    p.wait()
        counts = {name: _dumped_total(d, out, p, name) / n for name, (out, p) in procs.items()}
    base = counts["bare"]
    print(f"# machine instructions per case (callgrind), {n} cases of the sweep in its order")
    for name, v in counts.items():
        over = "" if name in ("bare", "start + stop", "checks + JSON") else f"  over bare {v - base:10,.0f} ({(v - base) / base:.1%})"
        print(f"{name:32s} {v:12,.0f}{over}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--opcodes", action="store_true", help="count byte-code instructions instead of timing")
    ap.add_argument("--instructions", action="store_true",
                    help="count machine instructions of each piece (valgrind's callgrind) instead of timing")
    ap.add_argument("--cases", type=int, default=64, help="cases per piece with --instructions")
    ap.add_argument("--count-child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.instructions:
        instructions(a.cases)
        return
    ctx = Context.build()
    cases = list(expand_entry(ENTRY, context=ctx).cases)
    for c in cases:
        c.scenario  # resolved before any timing
    if a.count_child:
        count_child(cases[:a.cases], a.count_child)
        return
    print(f"# {len(cases)} Poseidon cases, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    if a.opcodes:
        opcodes(cases)
    else:
        cpu(cases, a.rounds)


if __name__ == "__main__":
    main()
