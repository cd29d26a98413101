"""Store write cost per case: CPU time of ``Store.add_outcome`` + the batched commits, per case.

A sweep of synthetic finished cases (the identity a runner case stores, 10 metrics each, no
samples or artifacts: a model-fidelity case) is written into a fresh store through the public
path the runner uses (``begin_run``, ``add_outcome`` per case, ``finish_run``, ``close``), and
timed three ways in one process:

* ``caller``: CPU time of the calling thread (``time.thread_time``): what the evaluation path
  pays per case (buffering, and any commit the caller has to make itself);
* ``store``: CPU time of the whole process (``resource.getrusage``, every thread: the caller and
  the background flusher that commits the batches), minus the time spent building the inputs;
* ``floor``: the same rows written by bare ``sqlite3`` (one ``executemany`` of one JSON row per
  case into one table, 500 rows a transaction): what one row per case costs at least.

Each figure is the median of ``--repeat`` runs and is printed beside the load average, with the
CPU ratio ``store / floor`` (a ratio of two CPU times taken in one run; wall time on a shared
machine swings, CPU time much less).

Usage::

    python benchmarks/bench_store.py [--cases 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from suite.results import Store

METRICS = 10


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (or "n/a" off Linux)."""
    p = Path("/proc/loadavg")
    return " ".join(p.read_text().split()[:3]) if p.exists() else "n/a"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cases(n: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """*n* (identity with ``key``, outcome) pairs shaped as the runner stores them."""
    out = []
    for i in range(n):
        ident = {"key": f"{i:020x}", "technique": "bench", "technique_version": "1.0", "variant": "fast",
                 "fidelity": "model", "profile": "dgx-a100", "profile_hash": "a" * 16, "workload": "resnet50",
                 "workload_hash": "b" * 16, "params": {"size": 1e6 + i, "work": 1e-3, "nodes": i % 8},
                 "seed": 0, "overrides": {}, "code": "c" * 16, "env": "e" * 16, "inputs": {}}
        metrics = [[f"metric_{j}", 1.5 * i + j, "s", "lower"] for j in range(METRICS)]
        out.append((ident, {"key": ident["key"], "status": "ok", "metrics": metrics, "samples": None,
                            "artifacts": None, "error": None, "traceback": None, "duration": 1e-5,
                            "fields_read": ["network.-1.bandwidth"]}))
    return out


def store_once(folder: Path, work: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[float, float, float]:
    """(caller-thread CPU, process CPU, wall) seconds to write *work* through :class:`Store`."""
    path = folder / "s.sqlite"
    path.unlink(missing_ok=True)
    st = Store(path)
    run = st.begin_run(command="bench_store")
    w0, c0, t0 = time.perf_counter(), _cpu(), time.thread_time()
    for ident, out in work:
        st.add_outcome(ident, out, run, replace=False)
    caller = time.thread_time() - t0
    st.finish_run(run, "done", {"total": len(work), "computed": len(work), "ok": len(work)})
    st.close()
    return caller, _cpu() - c0, time.perf_counter() - w0


def floor_once(folder: Path, work: list[tuple[dict[str, Any], dict[str, Any]]]) -> float:
    """Process CPU seconds to write one JSON row per case with bare sqlite3 (WAL, 500 a commit)."""
    path = folder / "floor.sqlite"
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE r (key TEXT PRIMARY KEY, identity TEXT, metrics TEXT)")
    c0 = _cpu()
    for i in range(0, len(work), 500):
        rows = [(ident["key"], json.dumps(ident), json.dumps(out["metrics"])) for ident, out in work[i:i + 500]]
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO r VALUES (?, ?, ?)", rows)
        conn.execute("COMMIT")
    cpu = _cpu() - c0
    conn.close()
    return cpu


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    work = cases(args.cases)
    print(f"load average before: {load_average()}")
    callers, totals, walls, floors = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            caller, total, wall = store_once(Path(tmp), work)
            callers.append(caller)
            totals.append(total)
            walls.append(wall)
            floors.append(floor_once(Path(tmp), work))
    n = args.cases
    med = statistics.median
    print(f"{n} cases x {METRICS} metrics, median of {args.repeat}")
    print(f"  caller thread CPU : {med(callers) / n * 1e6:7.1f} us/case (the evaluation path)")
    print(f"  store CPU (all)   : {med(totals) / n * 1e6:7.1f} us/case (caller + flusher thread)")
    print(f"  store wall        : {med(walls) / n * 1e6:7.1f} us/case")
    print(f"  floor CPU         : {med(floors) / n * 1e6:7.1f} us/case (bare sqlite3, one JSON row per case)")
    print(f"  CPU ratio store / floor: {med(totals) / med(floors):.2f}")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
