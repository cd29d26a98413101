"""Fixed costs of two commands, this checkout against another, by CPU time (issue 44).

* ``suite reproduce --all`` on a store that holds every case and judgement (target: < 1 s);
* ``suite run --technique poseidon --set "network.-1.bandwidth=7 Gbit/s"`` (its table printed)
  with an empty ``SUITE_CACHE_DIR`` and an empty store (target: < 0.6 s);
* the expansion of ``benchmarks/bench_runner.py``'s Poseidon sweep (9,984 cases: 32 node counts x
  78 bandwidths x 4 variants), each case resolved and keyed and its scenario built (what ``suite
  run`` does per case before the runner's own work), CPU per case, best of 3 in each call.

* with ``--only sweep``: the full ``suite run`` of that sweep (``-q``: start-up, expansion, the
  ``-j 1`` worker and the store), empty store, the CLI's share of ``bench_runner.py --ratio-only``'s
  ``suite run`` row.

``--only run``, ``--only expansion`` or ``--only sweep`` skips the rest (and the fresh ``reproduce --all`` that
fills each side's store first, which takes minutes).

Each side runs from its own source tree (``PYTHONPATH`` = the tree and its ``plugins/``, the
``suite`` entry point of this environment), with its own store: a side's first call fills it with
a fresh ``suite reproduce --all`` (minutes; its output is then compared: the scoreboards must be
byte-identical unless a model changed between the trees). The timed calls alternate between the
sides, so load changes hit both alike. Printed per call: CPU of the child and its reaped
children (user + sys), wall time and the load average; then min and max per side. Byte code is
cached in a temporary ``PYTHONPYCACHEPREFIX`` per side (as an installed package has it) unless
``--no-bytecode`` (this project's shared machine sets ``PYTHONDONTWRITEBYTECODE=1``).

Usage::

    python benchmarks/bench_fixed_cost.py --baseline-src /tmp/base [--rounds 4] [--work DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = [str(Path(sys.executable).with_name("suite"))]
RUN = ["run", "--technique", "poseidon", "--set", "network.-1.bandwidth=7 Gbit/s"]
#: bench_runner.py's Poseidon sweep as flags: 32 node counts x 78 bandwidths x 4 variants
SWEEP = ["run", "--technique", "poseidon", "--param", f"nodes={','.join(map(str, range(1, 33)))}",
         "--set", f"network.-1.bandwidth={','.join(f'{b} Gbit/s' for b in range(1, 79))}", "-q"]


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def call(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(CPU s of the child and its children, wall s, sha256[:12] of stdout) of ``suite ARGS``."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(SUITE + args, env=env, capture_output=True, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"suite {' '.join(args)}: exit {out.returncode}: {out.stderr.decode()[-400:]}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return cpu, wall, hashlib.sha256(out.stdout).hexdigest()[:12]


def side_env(src: Path, work: Path, tag: str, bytecode: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUITE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(src), str(src / "plugins")])
    env["SUITE_STORE"] = str(work / tag / "suite.sqlite")
    env["SUITE_CACHE_DIR"] = str(work / tag / "cache")
    env["COLUMNS"] = "200"
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / tag / "pyc")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def fill(tag: str, env: dict[str, str]) -> str:
    """A fresh ``suite reproduce --all`` into the side's store (once); its scoreboard's hash."""
    Path(env["SUITE_STORE"]).parent.mkdir(parents=True, exist_ok=True)
    mark = Path(env["SUITE_STORE"]).with_suffix(".scoreboard")
    if not mark.exists():
        cpu, wall, sha = call(["reproduce", "--all"], env)
        print(f"# {tag}: fresh reproduce --all: {cpu:.1f} s CPU, {wall:.1f} s wall, load {load()}, "
              f"scoreboard {sha}")
        mark.write_text(sha)
    return mark.read_text()


#: the expansion measured in each side's own process (its PYTHONPATH): us per case, CPU, best of 3
EXPANSION = """
import time
from suite.context import Context
from suite.runner.case import Resolver
from suite.runner.experiment import stream_entry
ctx = Context.build()
entry = {"technique": "poseidon", "params": {"nodes": list(range(1, 33))},
         "set": {"network.-1.bandwidth": [f"{b} Gbit/s" for b in range(1, 79)]}}
ctx.profiles
best = None
for _ in range(3):
    t = time.thread_time()
    cases = list(stream_entry(entry, resolver=Resolver(context=ctx)))
    for c in cases:
        c.scenario
    dt = time.thread_time() - t
    best = dt if best is None else min(best, dt)
print(1e6 * best / len(cases))
"""


def expansion(env: dict[str, str]) -> float:
    """:data:`EXPANSION` in a fresh process of the side: CPU us per case."""
    out = subprocess.run([sys.executable, "-c", EXPANSION], env=env, capture_output=True, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        raise SystemExit(f"expansion: exit {out.returncode}: {out.stderr.decode()[-400:]}")
    return float(out.stdout.split()[-1])


def run_round(sides: dict[str, dict[str, str]], got: dict[tuple[str, str], list[float]],
              whats: tuple[str, ...], scratch: Path) -> None:
    for what in whats:
        for tag, env in sides.items():
            extra = ""
            if what.startswith("expansion"):
                us = expansion(env)
                got.setdefault((what, tag), []).append(us)
                print(f"{what:26s} {tag:6s} {us:.1f} us/case CPU  load {load()}", flush=True)
                continue
            if what.startswith("run"):
                fresh = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir=scratch))
                env = {**env, "SUITE_CACHE_DIR": str(fresh / "cache"), "SUITE_STORE": str(fresh / "s.sqlite")}
                cpu, wall, _ = call(RUN, env)
            elif what.startswith("sweep"):  # the side's own cache (warm), a new store each call
                fresh = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir=scratch))
                cpu, wall, _ = call(SWEEP, {**env, "SUITE_STORE": str(fresh / "s.sqlite")})
            else:
                cpu, wall, sha = call(["reproduce", "--all"], env)
                extra = f"  scoreboard {sha}"
            got.setdefault((what, tag), []).append(cpu)
            print(f"{what:26s} {tag:6s} cpu {cpu:.2f} s  wall {wall:.2f} s  load {load()}{extra}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-src", required=True, type=Path, help="the other source tree (a checkout)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--work", type=Path, default=None, help="stores, caches and byte code (kept: a second "
                                                            "call reuses the filled stores); default a temp dir")
    ap.add_argument("--no-bytecode", action="store_true")
    ap.add_argument("--only", choices=("all", "run", "expansion", "sweep"), default="all",
                    help="run: only `suite run --set` with an empty cache; expansion: only the sweep's expansion; "
                         "sweep: only the full `suite run` of the sweep")
    a = ap.parse_args()
    whats = {"all": ("reproduce --all (cached)", "run --set (empty cache)", "expansion (us/case)"),
             "run": ("run --set (empty cache)",), "expansion": ("expansion (us/case)",),
             "sweep": ("sweep: suite run, 9,984 cases",)}[a.only]
    import shutil

    scratch = Path(tempfile.mkdtemp(prefix="bench-fixed-"))  # every fresh store and cache: removed at the end
    try:
        _measure(a, whats, a.work or scratch / "work", scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _measure(a: argparse.Namespace, whats: tuple[str, ...], work: Path, scratch: Path) -> None:
    """The rounds of :func:`main`: *work* holds each side's byte code and filled store, *scratch* the
    fresh stores and caches of each call."""
    here = Path(__file__).resolve().parents[1]
    sides = {tag: side_env(src.resolve(), work, tag, not a.no_bytecode)
             for tag, src in (("before", a.baseline_src), ("after", here))}
    if a.only == "all":
        marks = {tag: fill(tag, env) for tag, env in sides.items()}
        print(f"# scoreboards: before {marks['before']}, after {marks['after']}"
              f" ({'identical' if marks['before'] == marks['after'] else 'different: a model changed between the trees'})")
    print(f"# byte code {'not cached' if a.no_bytecode else 'cached'}; load {load()}")
    for tag, env in sides.items():  # warm: byte code of both commands, the judgement cache
        if a.only == "all":
            call(["reproduce", "--all"], env)
        fresh = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir=scratch))
        call(RUN, {**env, "SUITE_CACHE_DIR": str(fresh / "cache"), "SUITE_STORE": str(fresh / "s.sqlite")})
        if a.only == "sweep":  # the side's cache (workload hashes, profiles) as a user's second run has it
            call(SWEEP, {**env, "SUITE_STORE": str(fresh / "sweep.sqlite")})
    got: dict[tuple[str, str], list[float]] = {}
    for _ in range(a.rounds):
        run_round(sides, got, whats, scratch)
    for (what, tag), v in got.items():
        unit = "us/case" if what.startswith("expansion") else "s"
        print(f"# {what:26s} {tag:6s} CPU min {min(v):.2f} max {max(v):.2f} {unit} over {len(v)} calls; load {load()}")


if __name__ == "__main__":
    main()
