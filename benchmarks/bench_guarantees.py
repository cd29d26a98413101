"""What each per-case guarantee of the runner costs, switched off one after another in the real runner.

Issue 44 asks `-j 1` to cost at most 1.2x the bare loop by CPU on the 9,984-case Poseidon sweep of
``bench_runner.py --ratio-only``; issue 39 asks for the guarantees that cost is spent on. This
runs that sweep with ``run_cases`` at ``-j 1`` (one isolated worker, ``--artifacts summary``) and
removes the guarantees cumulatively, each by patching the runner in this process (inherited by the
forked worker; nothing here is a product option):

1. ``all``: the runner as shipped;
2. ``- reads``: no profile read recorded (``ReadSampler.take`` answers False);
3. ``- input guard``: no snapshot of the parameters and workload, so nothing checked after a case;
4. ``- result checks``: the metrics taken as they are (no finiteness, sign or oracle check, no
   artifact JSON);
5. ``- coordinator checks``: the coordinator stores what the worker sent without checking it.

What is left after step 5 is the isolated worker, the transport and the store row with its
identity, provenance and run link (``bench_floor.py`` measures a runner with none of those). The
bare loop and the five variants alternate ``--rounds`` times; printed: each variant's CPU (this
process and its reaped worker, best of the rounds) over the bare loop's, the step's share in us per
case, and the load average before and after.

Usage::

    python benchmarks/bench_guarantees.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import tempfile
from collections.abc import Iterator
from pathlib import Path

import suite.runner.engine as engine
import suite.runner.evaluate as evaluate
from suite.context import Context
from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases

STEPS = ("all", "- reads", "- input guard", "- result checks", "- coordinator checks")


def _cpu() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def _unchecked_fields(tech, res, artifacts):  # the metrics as they are: no check, no oracle, no artifacts
    return [[m.name, m.value, m.unit, m.direction] for m in res.metrics.values()], {}, None


@contextlib.contextmanager
def without(step: int) -> Iterator[None]:
    """The runner with the guarantees of steps 1..*step* of :data:`STEPS` switched off."""
    saved = (evaluate.ReadSampler.take, evaluate._snapshots_of, evaluate._result_fields, engine.check_outcome)
    try:
        if step >= 1:
            evaluate.ReadSampler.take = lambda self, group: False
        if step >= 2:
            evaluate._snapshots_of = lambda scenario, profile, snapshots: ([], [], [])
        if step >= 3:
            evaluate._result_fields = _unchecked_fields
        if step >= 4:
            engine.check_outcome = lambda out, technique, *declared: out
        yield
    finally:
        evaluate.ReadSampler.take, evaluate._snapshots_of, evaluate._result_fields, engine.check_outcome = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    ctx = Context.build()
    entry = {"technique": "poseidon", "params": {"nodes": list(range(1, 33))},
             "set": {"network.-1.bandwidth": [f"{b} Gbit/s" for b in range(1, 79)]}}
    cases = expand_entry(entry, context=ctx).cases
    for c in cases:  # scenarios built and caches warm before the first fork, as in bench_runner.py
        c.tech.evaluate(c.scenario)
    best = dict.fromkeys(("bare",) + STEPS, float("inf"))
    load0 = _load()
    with tempfile.TemporaryDirectory() as d:
        for r in range(a.rounds):
            c0 = _cpu()
            for c in cases:
                c.tech.evaluate(c.scenario)
            best["bare"] = min(best["bare"], _cpu() - c0)
            for i, name in enumerate(STEPS):
                with without(i), Store(Path(d) / f"{r}-{i}.sqlite") as st:
                    c0 = _cpu()
                    s = run_cases(cases, st, options=ExecOptions(jobs=1, artifacts="summary"), command="bench",
                                  context=ctx)
                best[name] = min(best[name], _cpu() - c0)
                assert s.ok == len(cases), s.message()
    n, bare = len(cases), best["bare"]
    print(f"# Poseidon sweep, {n} cases, -j 1, {a.rounds} rounds alternated, best of each, CPU of this process and "
          f"its worker; load average {load0} -> {_load()}")
    print(f"bare loop: {1e6 * bare / n:.1f} us/case")
    prev = None
    for name in STEPS:
        us = 1e6 * best[name] / n
        step = f"; this guarantee {1e6 * (prev - best[name]) / n:+.1f} us/case" if prev is not None else ""
        print(f"{name:22s} CPU ratio {best[name] / bare:.3f} ({us:.1f} us/case){step}")
        prev = best[name]


if __name__ == "__main__":
    main()
