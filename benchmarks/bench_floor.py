"""The floor of an isolated-worker runner: what any runner that evaluates in a forked worker and
writes one SQLite row per case costs over the bare loop, with none of the suite's guarantees.

Issue 44 asks `-j 1` (an isolated worker, a store row per case, reads recorded, inputs guarded,
metrics checked, each run's rows kept) to cost at most 1.2x the bare loop by CPU. This measures
the least such a runner can cost in CPython, on the same Poseidon sweep as
``bench_runner.py --ratio-only``: a forked worker evaluates each case and sends
``(key, [(name, value, unit, direction), ...])`` in batches of 128 over a pipe; the coordinator
unpickles them and writes one row per case (key and the metrics as JSON text) with
``executemany`` into a WAL-mode SQLite table, one commit per 32,768 cases. No read recording, no
input guard, no metric check, no identity or provenance columns, no run link, no progress.

Each side alternated *rounds* times; the CPU of this process and its reaped children, best of each.

Usage::

    python benchmarks/bench_floor.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from suite.context import Context
from suite.runner import expand_entry


def _cpu() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _worker(conn, cases) -> None:  # runs in the forked child
    batch = []
    for c in cases:
        r = c.tech.evaluate(c.scenario)
        batch.append((c.key, [(n, m.value, m.unit, m.direction) for n, m in r.metrics.items()]))
        if len(batch) >= 128:
            conn.send(batch)
            batch = []
    conn.send(batch)
    conn.send(None)
    os._exit(0)


def floor_run(cases, path: Path) -> None:
    """The least runner: one forked worker, batches over a pipe, a row per case into SQLite."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE r (key TEXT PRIMARY KEY, metrics TEXT)")
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_worker, args=(child, cases))
    proc.start()
    child.close()
    rows = []
    while (batch := parent.recv()) is not None:
        rows.extend((k, json.dumps(m)) for k, m in batch)
        if len(rows) >= 32768:
            db.executemany("INSERT INTO r VALUES (?, ?)", rows)
            db.commit()
            rows = []
    db.executemany("INSERT INTO r VALUES (?, ?)", rows)
    db.commit()
    db.close()
    proc.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    load0 = Path("/proc/loadavg").read_text().split()[:3]
    entry = {"technique": "poseidon", "params": {"nodes": list(range(1, 33))},
             "set": {"network.-1.bandwidth": [f"{b} Gbit/s" for b in range(1, 79)]}}
    cases = expand_entry(entry, context=Context.build()).cases
    bare, floor = [], []
    with tempfile.TemporaryDirectory() as d:
        for r in range(a.rounds):
            c0 = _cpu()
            for c in cases:
                c.tech.evaluate(c.scenario)
            bare.append(_cpu() - c0)
            c0 = _cpu()
            floor_run(cases, Path(d) / f"{r}.sqlite")
            floor.append(_cpu() - c0)
    n = len(cases)
    print(f"# Poseidon model sweep, {n} cases, {a.rounds} rounds alternated (best of each); load average "
          f"{' '.join(load0)} -> {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; Python {sys.version.split()[0]}")
    print(f"bare loop: {min(bare):.2f} s CPU ({1e6 * min(bare) / n:.1f} us/case)")
    print(f"floor runner (forked worker, pickled batches, one SQLite row per case): {min(floor):.2f} s CPU "
          f"({1e6 * (min(floor) - min(bare)) / n:.1f} us/case over the bare loop)")
    print(f"CPU RATIO floor / bare loop = {min(floor) / min(bare):.3f}")


if __name__ == "__main__":
    main()
