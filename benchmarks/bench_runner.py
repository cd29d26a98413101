"""Runner + store throughput: a sweep of model-fidelity cases, end to end into a fresh store.

Measures, for a cheap in-process technique (``bench``: a closed-form metric, a few microseconds per
evaluation) and, when installed, a real cost model (``poseidon``):

* the bare loop: ``technique.evaluate(scenario)`` over the already-resolved scenarios, in one
  process (the floor);
* expansion (sweep -> resolved, hashed cases);
* ``run_cases`` with the local executor at ``-j 1 --in-process`` (the fast path, no isolation),
  ``-j 1`` (the default: one isolated worker process) and ``-j 2`` (forked worker pool), and with
  the dask executor (LocalCluster, 2 workers; cluster start-up included);
* a second identical run (every case cached).

Per-case overhead = (run time - bare-loop time) / cases. Results go to docs/performance.md.

Usage::

    python benchmarks/bench_runner.py [--cases 10000] [--no-dask] [--no-real]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import types
from pathlib import Path

from suite import hookimpl
from suite.context import Context
from suite.registry import Registry
from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.technique import Paper, Param, Result, Technique, Variant


def _bench_evaluate(scenario):
    p = scenario.params
    bw = scenario.profile.network[-1].bandwidth if scenario.profile is not None and scenario.profile.network else 1.0
    t = p["size"] / bw + p["work"] * (0.5 if scenario.variant == "fast" else 1.0)
    return Result().add("time", t, "s", "lower").add("throughput", 1.0 / t, "1/s", "higher")


BENCH = Technique(
    name="bench", title="closed-form technique for runner benchmarks", category="communication",
    paper=Paper(title="none"), variants=[Variant("base", "baseline", baseline=True), Variant("fast", "half work")],
    fidelities={"model": _bench_evaluate},
    parameters={"size": Param(float, 1e6, unit="B"), "work": Param(float, 1e-3, unit="s")},
    needs_workload=False, needs_profile=False,
)


def _plugin_module():
    mod = types.ModuleType("bench_plugin")
    mod.suite_techniques = hookimpl(lambda: [BENCH])
    return mod


CPU: dict[str, list[float]] = {}  # label -> CPU seconds of each timed call (this process + reaped workers)
SPLIT: dict[str, list[tuple[float, float]]] = {}  # label -> (coordinator, workers) CPU seconds of each call
DASK_SPLIT: list[tuple[float, float, float]] = []  # (coordinator, scheduler, workers) CPU seconds of each dask call
DASK_PARTS: list[dict[str, float]] = []  # DaskCluster.parts() over each dask call


def _cpu_split() -> tuple[float, float]:
    """(this process, its reaped children) CPU seconds, user + sys."""
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime, b.ru_utime + b.ru_stime


def _cpu() -> float:
    return sum(_cpu_split())


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (or "n/a" off Linux): every figure is printed beside it."""
    p = Path("/proc/loadavg")
    return " ".join(p.read_text().split()[:3]) if p.exists() else "n/a"


def bare_loop(tech, cases) -> float:
    c0 = _cpu()
    t0 = time.perf_counter()
    for c in cases:
        tech.evaluate(c.scenario)
    dt = time.perf_counter() - t0
    CPU.setdefault("bare", []).append(_cpu() - c0)
    return dt


def timed_run(cases, path: Path, executor="local", jobs=1, isolate=True, context=None, artifacts="summary",
              scheduler=None) -> tuple[float, object]:
    s0 = _cpu_split()
    with Store(path) as st:
        t0 = time.perf_counter()
        s = run_cases(cases, st, executor=executor,
                      options=ExecOptions(jobs=jobs, isolate=isolate, artifacts=artifacts, scheduler=scheduler),
                      command="bench", context=context)
        dt = time.perf_counter() - t0  # until every outcome is handed to the store (close commits the rest)
    s1 = _cpu_split()
    label = f"run-j{jobs}-{'iso' if isolate else 'inproc'}-{executor}"
    CPU.setdefault(label, []).append(sum(s1) - sum(s0))
    SPLIT.setdefault(label, []).append((s1[0] - s0[0], s1[1] - s0[1]))
    assert s.ok + s.cached == len(cases), s.message()
    return dt, s


def store_bytes(path: Path) -> int:
    """The store's size on disk after close (the database file and any WAL left)."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def cli_run(entry: dict, path: Path) -> float:
    """The full ``suite run`` of *entry* (a Poseidon sweep given as flags) in a fresh process into
    *path*: its wall seconds; the CPU of the process and its workers goes to ``CPU["cli"]``."""
    import resource
    import subprocess

    flags = ["--technique", entry["technique"]]
    for k, v in entry.get("params", {}).items():
        flags += ["--param", f"{k}={','.join(map(str, v))}"]
    for k, v in entry.get("set", {}).items():
        flags += ["--set", f"{k}={','.join(map(str, v))}"]
    # byte code kept between rounds, as an installed package has it (this machine sets
    # PYTHONDONTWRITEBYTECODE: each round compiled the core and the plugins again); the first
    # round compiles, the best round is quoted
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(path.parent / "pyc")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "suite", "run", *flags, "--store", str(path), "-q", "--artifacts", "summary"],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault("cli", []).append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    return dt


def ratio_rounds(tech, cases, tmp: Path, label: str, context, rounds: int = 3, entry: dict | None = None) -> list[dict]:
    """The bare loop, `-j 1` (default options), `-j 1 --in-process` and (with *entry*) the full
    ``suite run`` of the same sweep, alternated *rounds* times in this process; the best of each
    side, and their ratio (the machine is shared: only a ratio taken this way means anything)."""
    bare, run, inproc, cli = [], [], [], []
    for r in range(rounds):
        bare.append(bare_loop(tech, cases))
        run.append(timed_run(cases, tmp / f"{label}-ratio-{r}.sqlite", context=context)[0])
        inproc.append(timed_run(cases, tmp / f"{label}-ratio-ip-{r}.sqlite", isolate=False, context=context)[0])
        if entry is not None:
            cli.append(cli_run(entry, tmp / f"{label}-ratio-cli-{r}.sqlite"))
    size = store_bytes(tmp / f"{label}-ratio-0.sqlite") / len(cases)
    return [{"bare": min(bare), "run": min(run), "inproc": min(inproc), "cli": min(cli) if cli else None,
             "bytes_per_case": size, "all_bare": bare, "all_run": run}]


def reads_rounds(context, rounds: int) -> None:
    """CPU per Poseidon evaluation (1,024 cases: 32 node counts x 8 bandwidths x 4 variants),
    alternated *rounds* times, best of each: plain, through the read-recording view
    (``suite.hardware.tracking.tracked``) and recorded in place as the runner records every case
    (``suite.hardware.recording``, one kept ReadPlan per profile as an executor loop keeps it)."""
    import dataclasses

    from suite.hardware.recording import ReadPlan, Recording
    from suite.hardware.tracking import tracked

    tech = context.technique("poseidon")
    scen = [c.scenario for c in expand_entry({"technique": "poseidon", "params": {"nodes": list(range(1, 33))},
                                              "set": {"network.-1.bandwidth": [f"{b} Gbit/s" for b in range(1, 9)]}},
                                             context=context).cases]
    plans = {id(s.profile): ReadPlan(s.profile) for s in scen}

    def in_place(s):
        r = Recording(plans[id(s.profile)]).start()
        try:
            tech.evaluate(s)
        finally:
            r.stop_sorted()

    sides = {"plain": lambda s: tech.evaluate(s),
             "view": lambda s: tech.evaluate(dataclasses.replace(s, profile=tracked(s.profile)[0])),
             "in place": in_place}
    best = dict.fromkeys(sides, float("inf"))
    load0 = load_average()
    for _ in range(rounds):
        for k, f in sides.items():
            c0 = time.process_time()
            for s in scen:
                f(s)
            best[k] = min(best[k], time.process_time() - c0)
    print(f"# reads recorded: Poseidon, {len(scen)} cases, {rounds} alternated rounds, best of each; "
          f"load average {load0} -> {load_average()}")
    for k, v in best.items():
        print(f"{k}: {1e6 * v / len(scen):.0f} us/case CPU; x plain {v / best['plain']:.3f}")


def commit_rounds(context, rounds: int, bandwidths: int = 20) -> None:
    """Why ``--in-process`` costs more CPU than ``-j 1``: its commit after every case (so an abort
    of the plugin, which takes the process down, loses no finished case) against the same
    in-process run committing in batches, ``-j 1`` and the bare loop, alternated *rounds* times
    (Poseidon, 32 node counts x 4 variants x *bandwidths*); CPU of this process and its workers."""
    import suite.runner.engine as engine

    tech = context.technique("poseidon")
    cases = expand_entry({"technique": "poseidon", "params": {"nodes": list(range(1, 33))},
                          "set": {"network.-1.bandwidth": [f"{b} Gbit/s" for b in range(1, 1 + bandwidths)]}},
                         context=context).cases
    real_start = engine._start

    def batched(*a, **k):  # the in-process run, less its per-case commit
        run, ex = real_start(*a, **k)
        run.in_process = False
        return run, ex

    sides = {"bare loop": None, "-j 1": (True, real_start), "--in-process (a commit per case)": (False, real_start),
             "--in-process, batched commits": (False, batched)}
    best = dict.fromkeys(sides, float("inf"))
    load0 = load_average()
    with tempfile.TemporaryDirectory() as d:
        for r in range(rounds):
            for k, side in sides.items():
                c0 = _cpu()
                if side is None:
                    for c in cases:
                        tech.evaluate(c.scenario)
                else:
                    engine._start = side[1]
                    try:
                        with Store(Path(d) / f"{r}-{len(k)}.sqlite") as st:
                            run_cases(cases, st, context=context, command="bench",
                                      options=ExecOptions(jobs=1, isolate=side[0], artifacts="summary"))
                    finally:
                        engine._start = real_start
                best[k] = min(best[k], _cpu() - c0)
    print(f"# commits: Poseidon, {len(cases)} cases, {rounds} alternated rounds, best of each; "
          f"load average {load0} -> {load_average()}")
    for k, v in best.items():
        print(f"{k}: {1e6 * v / len(cases):.0f} us/case CPU; x bare {v / best['bare loop']:.2f}")


def quiet_env() -> dict[str, str]:
    """The environment that gives dask processes the settings the dask executor gives the
    LocalCluster it starts (``suite.runner.dask_executor.QUIET``: no worker profiler, a 1 s
    event-loop tick, memory monitors every 1 s, system monitors every 2 s), as ``DASK_...`` variables."""
    from suite.runner.dask_executor import QUIET

    return {"DASK_" + k.upper().replace(".", "__").replace("-", "_"): str(v) for k, v in QUIET.items()}


def _part_loops(cases) -> dict:
    """The bare evaluation and each step a pool worker adds to it alone, then all of them
    (``evaluate_outcome`` as a pool worker calls it), each a loop over a list of cases (its own
    kept snapshots and read plans, as a worker keeps them)."""
    from suite.hardware.recording import Recording
    from suite.runner.evaluate import InputSnapshots, _restore_changed, _result_fields, evaluate_outcome

    tech, snaps = cases[0].tech, InputSnapshots()

    def bare(ch):
        for c in ch:
            tech.evaluate(c.scenario)

    def record(ch):
        for c in ch:
            r = Recording(snaps.plan(c.scenario.profile)).start()
            try:
                tech.evaluate(c.scenario)
            finally:
                r.stop_sorted()

    def input_guard(ch):
        for c in ch:
            s = c.scenario
            kept = (snaps.of(s.profile), snaps.of(s.workload, "workload", limit=1), snaps.of(s.params, "scenario.params"))
            tech.evaluate(s)
            _restore_changed(kept)

    def checks(ch):
        for c in ch:
            _result_fields(tech, tech.evaluate(c.scenario), "summary")

    def worker(ch):
        for c in ch:
            evaluate_outcome(tech, c.scenario, c.key, "summary", interrupt_fails=True, record_reads=True, snapshots=snaps)

    return {"bare": bare, "reads recorded": record, "input guard": input_guard, "metric checks + artifact JSON": checks,
            "all (evaluate_outcome)": worker}


def worker_parts(context, rounds: int, cases_n: int = 4096, chunk: int = 32) -> None:
    """CPU per case of the worker side's steps, each alone over the bare evaluation (Poseidon, the
    --ratio-only sweep's first *cases_n* cases): the sweep cut in chunks of *chunk* cases, every
    loop timed on each chunk in rotated order, *rounds* times; per chunk the best, summed."""
    import gc

    entry = {"technique": "poseidon", "params": {"nodes": list(range(1, 33))},
             "set": {"network.-1.bandwidth": [f"{b} Gbit/s" for b in range(1, 79)]}}
    cases = list(expand_entry(entry, context=context).cases)[:cases_n]
    loops = _part_loops(cases)
    for f in loops.values():
        f(cases)  # warm: plans, snapshots, caches
    gc.freeze()
    chunks = [cases[i:i + chunk] for i in range(0, len(cases), chunk)]
    names = list(loops)
    best = {k: [float("inf")] * len(chunks) for k in names}
    load0 = load_average()
    for r in range(rounds):
        for j, ch in enumerate(chunks):
            k0 = (r + j) % len(names)
            for k in names[k0:] + names[:k0]:
                t = time.thread_time()
                loops[k](ch)
                best[k][j] = min(best[k][j], time.thread_time() - t)
    n, floor = len(cases), sum(best["bare"])
    print(f"# worker side, step by step: Poseidon, {n} cases, {rounds} rounds rotated per chunk of {chunk}; "
          f"load average {load0} -> {load_average()}")
    for k, v in best.items():
        print(f"{k}: {1e6 * sum(v) / n:.1f} us/case CPU; over bare {1e6 * (sum(v) - floor) / n:.1f}")


def _prepickled(cases) -> list[bytes]:
    """The outcomes of *cases* as a pool worker sends them: evaluated once here (reads recorded,
    summary artifacts), pickled in batches of 64."""
    import pickle

    from suite.runner.evaluate import InputSnapshots, evaluate_outcome

    snaps = InputSnapshots()
    outs = [evaluate_outcome(c.tech, c.scenario, c.key, "summary", interrupt_fails=True, record_reads=True,
                             snapshots=snaps) for c in cases]
    return [pickle.dumps(outs[i:i + 64], -1) for i in range(0, len(outs), 64)]


def coordinator_parts(context, rounds: int) -> None:
    """The coordinating process's main-thread CPU per case of the --ratio-only sweep, split: the
    `-j 1` run, the same with ``Store.add_outcome`` stubbed out (what is left is the runner's), and
    an executor handing over the worker's pickled outcome batches with no pool (what is left is
    the engine's bookkeeping and the unpickling), with and without the store; alternated *rounds*
    times, the best of each."""
    import pickle

    entry = {"technique": "poseidon", "params": {"nodes": list(range(1, 33))},
             "set": {"network.-1.bandwidth": [f"{b} Gbit/s" for b in range(1, 79)]}}
    cases = expand_entry(entry, context=context).cases
    batches = _prepickled(cases)

    class Handover:
        name = "handover"

        def map_cases(self, cs, options):
            for b in batches:
                yield from pickle.loads(b)

    real_add = Store.add_outcome
    sides = {"-j 1": ("local", False), "-j 1, add_outcome stubbed": ("local", True),
             "handover executor": (Handover(), False), "handover, add_outcome stubbed": (Handover(), True)}
    best = dict.fromkeys(sides, float("inf"))
    load0 = load_average()
    with tempfile.TemporaryDirectory() as d:
        for r in range(rounds):
            for k, (ex, stub) in sides.items():
                Store.add_outcome = (lambda *a, **kw: None) if stub else real_add
                t = time.thread_time()
                try:
                    with Store(Path(d) / f"{r}-{len(k)}.sqlite") as st:
                        run_cases(cases, st, executor=ex, context=context, command="bench",
                                  options=ExecOptions(jobs=1, isolate=True, artifacts="summary"))
                finally:
                    Store.add_outcome = real_add
                best[k] = min(best[k], time.thread_time() - t)
    print(f"# coordinator main thread: Poseidon, {len(cases)} cases, {rounds} alternated rounds, best of each; "
          f"load average {load0} -> {load_average()} (the handover's store commits in this thread at close)")
    for k, v in best.items():
        print(f"{k}: {1e6 * v / len(cases):.1f} us/case CPU")


class DaskCluster:
    """``dask scheduler`` and two ``dask worker`` processes (1 thread each) on loopback, started as
    a user would start them; ``address`` is the scheduler's. *quiet*: with the settings of
    :func:`quiet_env` (else dask's defaults)."""

    def __init__(self, tmp: Path, workers: int = 2, quiet: bool = True):
        import json
        import subprocess

        self.procs = []
        sf = tmp / f"scheduler-{time.monotonic_ns()}.json"
        dask = str(Path(sys.executable).with_name("dask"))
        env = dict(os.environ, **(quiet_env() if quiet else {}))
        self.procs.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                            "--no-dashboard", "--scheduler-file", str(sf)],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        deadline = time.monotonic() + 60
        while not sf.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.address = json.loads(sf.read_text())["address"]
        for _ in range(workers):
            self.procs.append(subprocess.Popen([dask, "worker", self.address, "--nthreads", "1", "--nworkers", "1",
                                                "--no-dashboard", "--host", "127.0.0.1"],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        from dask.distributed import Client

        with Client(self.address, timeout="60s") as c:
            c.wait_for_workers(workers, timeout=120)

    def cpu(self) -> tuple[float, float]:
        """(scheduler, workers) CPU seconds so far: user + sys of each process of the cluster and of
        every process under it (a worker's nanny, the worker, its sandboxes and their pool workers,
        live or reaped)."""
        import psutil

        def tree(pid: int) -> float:
            try:
                root = psutil.Process(pid)
                procs = [root] + root.children(recursive=True)
            except psutil.Error:
                return 0.0
            total = 0.0
            for p in procs:
                try:
                    t = p.cpu_times()
                except psutil.Error:
                    continue
                total += t.user + t.system + t.children_user + t.children_system
            return total

        return tree(self.procs[0].pid), sum(tree(p.pid) for p in self.procs[1:])

    def parts(self) -> dict[str, float]:
        """CPU seconds so far of each kind of process of the cluster: the scheduler, the workers'
        nannies, the dask worker processes themselves, and what ran under them (each batch's
        sandbox and its pool worker, reaped)."""
        import psutil

        out = dict.fromkeys(("scheduler", "nannies", "dask workers", "sandboxes"), 0.0)
        for i, p in enumerate(self.procs):
            try:
                root = psutil.Process(p.pid)
                procs = [root] + root.children(recursive=True)
            except psutil.Error:
                continue
            for q in procs:
                try:
                    t = q.cpu_times()
                except psutil.Error:
                    continue
                own, reaped = t.user + t.system, t.children_user + t.children_system
                if i == 0:
                    out["scheduler"] += own + reaped
                elif q.pid == p.pid:  # `dask worker` starts a nanny, which starts the worker
                    out["nannies"] += own
                else:
                    out["dask workers"] += own
                    out["sandboxes"] += reaped
        return out

    def close(self):
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except Exception:  # noqa: BLE001
                p.kill()


def parallel_rounds(context, tmp: Path, batches: int, rounds: int, dask: bool, workload: str = "resnet-152",
                    quiet: bool = True) -> None:
    """-j 1, -j 2 and (with *dask*) --scheduler on a real 2-worker cluster (*quiet*: started with
    :func:`quiet_env`), alternated, on a SuperNeurons model sweep (memory traces of *workload*, a
    few ms per case)."""
    tech = context.technique("superneurons")
    cases = expand_entry({"technique": "superneurons", "workloads": [workload],
                          "params": {"batch": list(range(1, batches + 1))}}, context=context).cases
    cluster = DaskCluster(tmp, quiet=quiet) if dask else None
    load0 = load_average()
    labels = {"-j 1": "run-j1-iso-local", "-j 2": "run-j2-iso-local", "dask --scheduler (2 workers)": "run-j2-iso-dask"}
    try:
        sides = {"bare": [], "-j 1": [], "-j 2": []}
        if cluster:
            sides["dask --scheduler (2 workers)"] = []
        for r in range(rounds):
            sides["bare"].append(bare_loop(tech, cases))
            sides["-j 1"].append(timed_run(cases, tmp / f"par1-{r}.sqlite", context=context)[0])
            sides["-j 2"].append(timed_run(cases, tmp / f"par2-{r}.sqlite", jobs=2, context=context)[0])
            if cluster:
                sched0, work0 = cluster.cpu()
                parts0 = cluster.parts()
                sides["dask --scheduler (2 workers)"].append(
                    timed_run(cases, tmp / f"pard-{r}.sqlite", executor="dask", jobs=2, scheduler=cluster.address,
                              context=context)[0])
                sched1, work1 = cluster.cpu()
                coord = SPLIT["run-j2-iso-dask"][-1][0]
                SPLIT["run-j2-iso-dask"][-1] = (coord + sched1 - sched0, work1 - work0)
                DASK_SPLIT.append((coord, sched1 - sched0, work1 - work0))
                DASK_PARTS.append({k: v - parts0[k] for k, v in cluster.parts().items()})
    finally:
        if cluster:
            cluster.close()
    n = len(cases)
    one = min(sides["-j 1"])
    print(f"# SuperNeurons model sweep ({workload}, {n} cases), {rounds} alternated rounds, best of each; "
          f"load average {load0} -> {load_average()} on {os.cpu_count()} CPUs; dask cluster started with "
          f"{' '.join(f'{k}={v}' for k, v in quiet_env().items()) if quiet else 'dask defaults'}")
    for k, v in sides.items():
        print(f"{k}: wall {min(v):.2f} s ({1e3 * min(v) / n:.2f} ms/case); wall speed-up over -j 1 {one / min(v):.2f}x; "
              f"rounds {', '.join(f'{x:.2f}' for x in v)}; over the same round's -j 1 (one right after the "
              f"other: less of the load's drift) {', '.join(f'{o / x:.2f}x' for o, x in zip(sides['-j 1'], v))}")
    _cpu_lines(labels)
    if DASK_SPLIT:
        best = min(range(len(DASK_SPLIT)), key=lambda i: sum(DASK_SPLIT[i]))
        print("dask CPU of the cluster in that round (s): " + ", ".join(f"{k} {v:.2f}" for k, v in DASK_PARTS[best].items())
              + "; the sandboxes evaluate the cases, the rest is dask's own")
        coord, sched, work = DASK_SPLIT[best]
        print(f"dask CPU per case: coordinator {1e3 * coord / n:.2f} ms, scheduler {1e3 * sched / n:.2f} ms, "
              f"workers (their sandboxes and pools included) {1e3 * work / n:.2f} ms; -j 1 "
              f"{1e3 * min(CPU['run-j1-iso-local']) / n:.2f} ms")


def dask_idle(tmp: Path, seconds: float = 5.0) -> None:
    """CPU that a user-style cluster (scheduler, 2 workers) burns while it waits, with dask's
    defaults and with :func:`quiet_env`, by kind of process (:meth:`DaskCluster.parts`)."""
    load0 = load_average()
    rows = []
    for quiet in (False, True):
        cluster = DaskCluster(tmp, quiet=quiet)
        try:
            time.sleep(1.0)  # past start-up
            a = cluster.parts()
            time.sleep(seconds)
            rows.append((quiet, {k: v - a[k] for k, v in cluster.parts().items()}))
        finally:
            cluster.close()
    print(f"# an idle dask cluster (scheduler, 2 workers), CPU over {seconds:g} s; load average {load0} -> {load_average()}")
    for quiet, got in rows:
        print(f"{'quiet_env' if quiet else 'dask defaults'}: " + ", ".join(f"{k} {v:.2f} s" for k, v in got.items())
              + f"; in all {sum(got.values()):.2f} s")


def sandbox_rounds(context, rounds: int) -> None:
    """One dask batch of the --parallel sweep (125 SuperNeurons cases) evaluated, alternated, the
    way a dask task does (``run_sandboxed``: a forked sandbox unpickles it and runs a pool worker),
    through the local pool, and in this process: CPU of each (reaped children included), best of
    *rounds*. The plugin is imported here already (by the expansion): a dask worker's sandbox
    imports it once per batch, which this does not count."""
    from suite.runner.dask_executor import DaskExecutor, _Batches, _import_core
    from suite.runner.evaluate import InputSnapshots, evaluate_outcome
    from suite.runner.pool import run_isolated
    from suite.runner.sandbox import pack, run_sandboxed

    _import_core()
    cases = expand_entry({"technique": "superneurons", "workloads": ["resnet-152"],
                          "params": {"batch": list(range(1, 101))}}, context=context).cases
    batch = DaskExecutor()._batches(list(_Batches(None, cases, ExecOptions(jobs=2)).by_key.values()), 2)[1]
    blob, keys, inner = pack(batch), [c.key for c in batch], ExecOptions(jobs=1, isolate=True, artifacts="summary")

    def in_process():
        snaps = InputSnapshots()
        for c in batch:
            evaluate_outcome(c.tech, c.scenario, c.key, "summary", record_reads=True, snapshots=snaps)

    sides = {"sandboxed (a dask task)": lambda: list(run_sandboxed(blob, keys, inner)),
             "local pool": lambda: list(run_isolated(batch, inner)), "in-process": in_process}
    got: dict[str, list[float]] = {k: [] for k in sides}
    load0 = load_average()
    for r in range(rounds):
        for k in (list(sides) if r % 2 else list(sides)[::-1]):
            c0 = _cpu()
            sides[k]()
            got[k].append(_cpu() - c0)
    print(f"# one dask batch ({len(batch)} SuperNeurons cases), {rounds} alternated rounds; load average {load0} -> {load_average()}")
    for k, v in got.items():
        print(f"{k}: CPU min {min(v):.3f} s; rounds {', '.join(f'{x:.3f}' for x in v)}")


def _cpu_lines(labels: dict[str, str]) -> None:
    """CPU of each side (best round): the coordinator's share, the workers', their sum beside -j 1's,
    and the wall speed-up the CPU times allow on two idle cores: -j 1's total over the largest of
    the coordinator's own time, one worker's share (the workers' total over the jobs) and half of
    everything (a loaded machine cannot show it in wall time)."""
    one = min(CPU["run-j1-iso-local"])
    for k, lab in labels.items():
        if lab not in SPLIT:
            continue
        coord, work = min(SPLIT[lab], key=sum)
        jobs = 1 if lab.startswith("run-j1-") else 2
        bound = one / max(coord, work / jobs, (coord + work) / 2)
        print(f"{k}: CPU {coord + work:.2f} s = coordinator {coord:.2f} + workers {work:.2f} (dask: the "
              f"scheduler counted with the coordinator); CPU x -j 1 {(coord + work) / one:.2f}; CPU-bound speed-up on 2 idle cores {bound:.2f}x")


def bench(label, tech, entry, tmp: Path, dask: bool, context, repeats: int = 2) -> list[dict]:
    expand_entry({**entry, "params": {k: v[:1] for k, v in entry.get("params", {}).items()}},
                 context=context)  # warm imports
    t0 = time.perf_counter()
    exp = expand_entry(entry, context=context)
    t_expand = time.perf_counter() - t0
    cases = exp.cases
    n = len(cases)
    bare = min(bare_loop(tech, cases) for _ in range(3))
    rows = [{"technique": label, "what": "bare loop (evaluate only)", "cases": n, "seconds": bare}]
    rows.append({"technique": label, "what": "expansion (resolve + hash)", "cases": n, "seconds": t_expand})
    runs = [("local -j 1 --in-process (no isolation)", "local", 1, False),
            ("local -j 1 (default: one isolated worker)", "local", 1, True),
            ("local -j 2 (worker pool)", "local", 2, True)]
    if dask:
        runs.append(("dask -j 2 (LocalCluster, start-up included)", "dask", 2, True))
    for i, (what, ex, jobs, iso) in enumerate(runs):
        dts = []
        for rep in range(repeats):  # best of `repeats`, each into a fresh store (the machine is shared)
            path = tmp / f"{label}-{i}-{rep}.sqlite"
            dts.append(timed_run(cases, path, ex, jobs, iso, context)[0])
        dt = min(dts)
        rows.append({"technique": label, "what": what, "cases": n, "seconds": dt})
        if i == 0:
            dt2, s2 = timed_run(cases, path, ex, jobs, iso, context)
            assert s2.computed == 0
            rows.append({"technique": label, "what": "second identical run (all cached)", "cases": n, "seconds": dt2})
    if dask:
        dt, _s = timed_run(cases[:1], tmp / f"{label}-dask-1.sqlite", "dask", 2, True, context)
        rows.append({"technique": label, "what": "dask -j 2, one case (cluster start-up and shutdown)", "cases": 1,
                     "seconds": dt})
    for r in rows:
        r["cases_per_s"] = r["cases"] / r["seconds"]
        r["us_per_case"] = 1e6 * r["seconds"] / r["cases"]
        r["overhead_us"] = (1e6 * (r["seconds"] - bare) / r["cases"]
                            if r["what"].startswith(("local", "dask")) and r["cases"] == n else None)
    return rows


def _print_ratio(r: dict, n: int, t_exp: float, rounds: int, load0: list[str]) -> None:
    """The --ratio-only figures: wall times, then the CPU ratios (the ones to quote)."""
    load1 = Path("/proc/loadavg").read_text().split()[:3] if load0 else []
    print(f"# Poseidon model sweep, {n} cases, bare loop, `-j 1`, `-j 1 --in-process` and `suite run` alternated "
          f"{rounds}x (best of each); load average {' '.join(load0)} -> {' '.join(load1)}")
    print(f"bare loop: {r['bare']:.2f} s ({1e6 * r['bare'] / n:.0f} us/case); rounds "
          f"{', '.join(f'{x:.2f}' for x in r['all_bare'])}")
    print(f"-j 1 (isolated worker, --artifacts summary): {r['run']:.2f} s; rounds "
          f"{', '.join(f'{x:.2f}' for x in r['all_run'])}")
    print(f"-j 1 --in-process: {r['inproc']:.2f} s")
    if r["cli"] is not None:
        print(f"suite run (the CLI, a fresh process: start-up, expansion, -j 1, summary): {r['cli']:.2f} s")
    print(f"expansion: {t_exp:.2f} s ({1e6 * t_exp / n:.0f} us/case)")
    print(f"RATIO -j 1 / bare loop = {r['run'] / r['bare']:.2f} (target <= 1.2); "
          f"with expansion {(r['run'] + t_exp) / r['bare']:.2f}; --in-process {r['inproc'] / r['bare']:.2f}")
    print(f"STORE {r['bytes_per_case']:.0f} B per case (target <= 1536)")
    cb, cr = min(CPU["bare"]), min(CPU["run-j1-iso-local"])
    print(f"CPU RATIO -j 1 / bare loop = {cr / cb:.2f} (CPU seconds of this process and its reaped "
          f"workers, store thread included: {cr:.2f} / {cb:.2f}; less sensitive to other load than wall time)")
    coord, work = min(SPLIT["run-j1-iso-local"])  # the round whose coordinating process spent least
    print(f"COORDINATOR -j 1: {1e6 * coord / n:.1f} us/case CPU (this process: the main thread and the store's "
          f"flusher thread; issue 44 target <= 35), workers {1e6 * work / n:.1f} us/case")
    ci = min(CPU["run-j1-inproc-local"])
    print(f"CPU RATIO -j 1 --in-process / bare loop = {ci / cb:.2f} ({ci:.2f} / {cb:.2f})")
    if "cli" in CPU:
        cc = min(CPU["cli"])
        print(f"CPU RATIO suite run / bare loop = {cc / cb:.2f} (target <= 1.35; the CLI process and its "
              f"workers: {cc:.2f} / {cb:.2f})")


def _one_mode(a: argparse.Namespace) -> bool:
    """Run the one measurement *a* asks for alone (--dask-parts, --worker-parts, --coordinator-parts,
    --reads, --commits, --parallel); False when none is asked for."""
    if a.dask_parts:
        with tempfile.TemporaryDirectory() as d:
            dask_idle(Path(d))
        sandbox_rounds(Context.build(), max(a.rounds, 6))
    elif a.worker_parts:
        worker_parts(Context.build(), max(a.rounds, 5))
    elif a.coordinator_parts:
        coordinator_parts(Context.build(), max(a.rounds, 4))
    elif a.reads:
        reads_rounds(Context.build(), max(a.rounds, 5))
    elif a.commits:
        commit_rounds(Context.build(), a.rounds)
    elif a.parallel:
        with tempfile.TemporaryDirectory() as d:
            parallel_rounds(Context.build(), Path(d), a.batches, a.rounds, not a.no_dask, quiet=not a.dask_defaults)
    else:
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--ratio-only", action="store_true",
                    help="only the Poseidon bare-loop ratio (target: -j 1 within 1.2x) and the store size")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--parallel", action="store_true",
                    help="only -j 1 / -j 2 / a real dask cluster (scheduler + 2 workers on loopback) on SuperNeurons")
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--dask-defaults", action="store_true",
                    help="start the --parallel dask cluster with dask's default settings (default: quiet_env's)")
    ap.add_argument("--reads", action="store_true",
                    help="only the cost of recording the profile fields a Poseidon case reads (plain, view, in place)")
    ap.add_argument("--commits", action="store_true",
                    help="only --in-process's commit per case against batched commits, -j 1 and the bare loop")
    ap.add_argument("--worker-parts", action="store_true",
                    help="only the CPU each step of the worker side adds to a Poseidon evaluation (record, guard, checks)")
    ap.add_argument("--coordinator-parts", action="store_true",
                    help="only the coordinator's main-thread CPU: -j 1, without Store.add_outcome, without the pool")
    ap.add_argument("--dask-parts", action="store_true",
                    help="only what dask adds: an idle cluster's CPU (defaults vs quiet_env), one batch sandboxed vs local")
    a = ap.parse_args()
    if _one_mode(a):
        return
    load0 = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    real = Context.build()
    fake = Context.build(registry=Registry(entry_points_=[], modules=[("bench", _plugin_module())]))
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        pos = next((t for t in real.techniques() if t.name == "poseidon"), None)
        if pos is not None:
            nodes = list(range(1, 33))
            bws = [f"{b} Gbit/s" for b in range(1, 1 + max(1, a.cases // (len(nodes) * len(pos.variants))))]
            pentry = {"technique": "poseidon", "params": {"nodes": nodes}, "set": {"network.-1.bandwidth": bws}}
            expand_entry({"technique": "poseidon"}, context=real)  # warm imports
            t0 = time.perf_counter()
            pcases = expand_entry(pentry, context=real).cases
            t_exp = time.perf_counter() - t0
            r = ratio_rounds(pos, pcases, tmp, "poseidon", real, a.rounds, entry=pentry)[0]
            _print_ratio(r, len(pcases), t_exp, a.rounds, load0)
        if a.ratio_only:
            return
        sizes = [float(1 << k) for k in range(10, 30)]  # 20
        works = [1e-3 * (1 + i) for i in range(max(1, a.cases // (2 * len(sizes))))]
        rows += bench("bench (fake, closed form)", BENCH,
                      {"technique": "bench", "params": {"size": sizes, "work": works}}, tmp, not a.no_dask, fake)
        if not a.no_real and pos is not None:
            rows += bench("poseidon (model)", pos, pentry, tmp, not a.no_dask, real)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print("| technique | what | cases | seconds | cases/s | us/case | overhead us/case vs bare loop |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        ov = f"{r['overhead_us']:.1f}" if r["overhead_us"] is not None else ""
        print(f"| {r['technique']} | {r['what']} | {r['cases']} | {r['seconds']:.2f} | {r['cases_per_s']:.0f} | "
              f"{r['us_per_case']:.1f} | {ov} |")


if __name__ == "__main__":
    main()
