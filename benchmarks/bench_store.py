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

``--busy US`` gives the calling thread US microseconds of Python work before each case, as a
runner has (its CPU is measured alone, in the same round, and subtracted): the flusher thread then
commits while the caller runs, and what the two threads cost each other (the GIL taken and given
back) is counted as the store's.

``--grow N`` instead writes *N* cases with hash-like (random) keys, as the runner's are, into one
fresh store through the same public path, in ``--segment`` steps, and prints per step the
process CPU per case, the flusher thread's share, and the bytes written (``wchar`` of
``/proc/self/io``: the WAL and its checkpoints) per case: how the cost of a case grows with the
size of the store (issue 44, "flat at scale"). The bytes do not depend on the machine's load.
``--extras`` gives each case 3 samples and a ~300-byte artifacts object, as a measured case has.

Usage::

    python benchmarks/bench_store.py [--cases 20000] [--repeat 3] [--busy 60 --batch-seconds 0.5]
    python benchmarks/bench_store.py --grow 1000000 [--segment 100000] [--extras]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from suite.results import Store
from suite.results import writer as _writer

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
        # hex of a hash, as the runner's keys are (schema 8 finds a case by its key's first 16 hex
        # digits: the sequential keys this used before, 0000...0001 and on, all shared one hash)
        ident = {"key": hashlib.blake2b(str(i).encode(), digest_size=10).hexdigest(), "technique": "bench", "technique_version": "1.0", "variant": "fast",
                 "fidelity": "model", "profile": "dgx-a100", "profile_hash": "a" * 16, "workload": "resnet50",
                 "workload_hash": "b" * 16, "params": {"size": 1e6 + i, "work": 1e-3, "nodes": i % 8},
                 "seed": 0, "overrides": {}, "code": "c" * 16, "env": "e" * 16, "inputs": {}}
        metrics = [[f"metric_{j}", 1.5 * i + j, "s", "lower"] for j in range(METRICS)]
        out.append((ident, {"key": ident["key"], "status": "ok", "metrics": metrics, "samples": None,
                            "artifacts": None, "error": None, "traceback": None, "duration": 1e-5,
                            "fields_read": ["network.-1.bandwidth"]}))
    return out


def _spin(loops: int) -> None:
    """Python work in the calling thread (*loops* iterations): an evaluation path's own work."""
    for _ in range(loops):
        pass


def busy_once(work: list[Any], loops: int) -> float:
    """Process CPU seconds of the calling thread's own work alone (:func:`_spin` per case)."""
    c0 = _cpu()
    for _ in work:
        _spin(loops)
    return _cpu() - c0


def store_once(folder: Path, work: list[tuple[dict[str, Any], dict[str, Any]]], loops: int = 0,
               batch_seconds: float = _writer.BATCH_SECONDS) -> tuple[float, float, float]:
    """(caller-thread CPU, process CPU, wall) seconds to write *work* through :class:`Store`
    (*loops*: :func:`_spin` before each case, in both CPU figures)."""
    path = folder / "s.sqlite"
    path.unlink(missing_ok=True)
    st = Store(path, batch_seconds=batch_seconds)
    run = st.begin_run(command="bench_store")
    w0, c0, t0 = time.perf_counter(), _cpu(), time.thread_time()
    for ident, out in work:
        _spin(loops)
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


def _written() -> int:
    """Bytes this process has passed to write() so far (0 where /proc/self/io is missing)."""
    try:
        with open("/proc/self/io") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("wchar:"))
    except (OSError, StopIteration):
        return 0


def random_cases(lo: int, hi: int, extras: bool = False) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Cases *lo* .. *hi* - 1 of a closed-form sweep (one metric each), keyed by a 20-hex-digit
    hash as the runner's keys are (so each lands on a random page of every key index); with
    *extras*, each with 3 samples and a ~300-byte artifacts object (as a measured case has)."""
    out = []
    for i in range(lo, hi):
        key = hashlib.blake2b(str(i).encode(), digest_size=10).hexdigest()
        ident = {"key": key, "technique": "scale", "technique_version": "0.1.0", "variant": ("base", "fast")[i % 2],
                 "fidelity": "model", "params": {"size": 1000.0 + i % 700, "work": 1e-3 * (i // 700)}, "seed": 0,
                 "overrides": {}, "code": "c" * 16, "env": "e" * 16, "inputs": {}}
        out.append((ident, {"key": key, "status": "ok", "metrics": [["time", 4e-3 + i * 1e-9, "s", "lower"]],
                            "duration": 7e-6, "fields_read": []}))
        if extras:
            out[-1][1].update(samples={"time": [4e-3, 4.1e-3, 3.9e-3 + i * 1e-9]},
                              artifacts={"trace": [i, i * 0.5, "abcdefghij" * 20], "key": key})
    return out


class _FlusherClock:
    """Sums the CPU time of the writer's commits (``Writer._write``, on the flusher thread)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._orig = _writer.Writer._write

    def __enter__(self) -> _FlusherClock:
        orig, clock = self._orig, self

        def timed(writer: Any, buf: Any, links: Any) -> int:
            t0 = time.thread_time()
            try:
                return orig(writer, buf, links)
            finally:
                clock.seconds += time.thread_time() - t0
        _writer.Writer._write = timed  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        _writer.Writer._write = self._orig  # type: ignore[method-assign]


def grow(n: int, segment: int, extras: bool = False) -> None:
    """Write *n* random-key cases (with *extras*: samples and artifacts) into one fresh store;
    print each segment's cost per case."""
    print(f"load average before: {load_average()}")
    print("| cases stored | CPU us/case | of it, flusher thread | KB written/case |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp, _FlusherClock() as clock:
        st = Store(Path(tmp) / "s.sqlite")
        run = st.begin_run(command="bench_store --grow")
        for lo in range(0, n, segment):
            work = random_cases(lo, min(n, lo + segment), extras)
            c0, f0, w0 = _cpu(), clock.seconds, _written()
            for ident, out in work:
                st.add_outcome(ident, out, run, replace=False)
            st.flush()
            m = len(work)
            print(f"| {lo:,} - {lo + m:,} | {(_cpu() - c0) / m * 1e6:.1f} | {(clock.seconds - f0) / m * 1e6:.1f} | "
                  f"{(_written() - w0) / m / 1024:.2f} |", flush=True)
        st.finish_run(run, "done", {"total": n, "computed": n, "ok": n})
        st.close()
    print(f"load average after: {load_average()}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--grow", type=int, default=0, help="write this many random-key cases into one store, by segment")
    ap.add_argument("--segment", type=int, default=100000)
    ap.add_argument("--extras", action="store_true", help="with --grow: each case has samples and artifacts")
    ap.add_argument("--busy", type=float, default=0.0,
                    help="us of Python work in the calling thread before each case (a runner's own work: the "
                         "flusher then commits while the caller runs); its CPU is measured alone and left out")
    ap.add_argument("--batch-seconds", type=float, default=_writer.BATCH_SECONDS)
    args = ap.parse_args(argv)
    if args.grow:
        grow(args.grow, args.segment, args.extras)
        return
    work = cases(args.cases)
    loops = round(_loops_per_us() * args.busy) if args.busy else 0
    print(f"load average before: {load_average()}")
    callers, totals, walls, floors, busies = [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            busies.append(busy_once(work, loops) if loops else 0.0)
            caller, total, wall = store_once(Path(tmp), work, loops, args.batch_seconds)
            callers.append(caller - busies[-1])
            totals.append(total - busies[-1])
            walls.append(wall)
            floors.append(floor_once(Path(tmp), work))
    n = args.cases
    med = statistics.median
    print(f"{n} cases x {METRICS} metrics, median of {args.repeat}"
          + (f"; the caller's own work {med(busies) / n * 1e6:.1f} us/case left out" if loops else ""))
    print(f"  caller thread CPU : {med(callers) / n * 1e6:7.1f} us/case (the evaluation path)")
    print(f"  store CPU (all)   : {med(totals) / n * 1e6:7.1f} us/case (caller + flusher thread)")
    print(f"  store wall        : {med(walls) / n * 1e6:7.1f} us/case")
    print(f"  floor CPU         : {med(floors) / n * 1e6:7.1f} us/case (bare sqlite3, one JSON row per case)")
    print(f"  CPU ratio store / floor: {med(totals) / med(floors):.2f}")
    print(f"load average after: {load_average()}")


def _loops_per_us() -> float:
    """:func:`_spin` iterations per microsecond of this machine's CPU (best of 5)."""
    best = min(_timed_spin(200_000) for _ in range(5))
    return 200_000 / (best * 1e6)


def _timed_spin(loops: int) -> float:
    t0 = time.thread_time()
    _spin(loops)
    return time.thread_time() - t0


if __name__ == "__main__":
    main()
