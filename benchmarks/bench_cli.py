"""Start-up of the ``suite`` command: each command's wall time beside ``python -c "import numpy"``.

Targets (issue 19): ``suite techniques``, ``suite info NAME``, ``suite hardware list`` under
0.3 s; the fixed cost of ``suite run`` (a sweep whose every case is already stored) under 0.5 s;
(issue 44) ``suite run --set "network.-1.bandwidth=7 Gbit/s"`` with an empty cache folder under 0.6 s.
A target is judged on the command's CPU time (user + sys of the child), which waiting for a core
on a loaded machine does not inflate the way it inflates wall time.
``suite hardware list`` and ``suite info`` read caches keyed by the files they depend on
(:mod:`suite.cache`); the last column is each command's first call with those caches
empty and byte code cold, which a fresh install pays once.
The machine is shared, so every command is run ``--repeats`` times interleaved with the numpy
baseline, and the best of each is printed with its ratio to the baseline and the load average.

Usage::

    python benchmarks/bench_cli.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = [sys.executable, "-m", "suite"]

#: commands run with an empty SUITE_CACHE_DIR every time (issue 44: a new quantity in --set, or an
#: empty cache, must not build pint's registry): their label ends with this
FRESH = " (empty cache)"


def commands(store: str) -> list[tuple[str, list[str], float | None]]:
    run = [*SUITE, "run", "--technique", "poseidon", "--param", "nodes=1,2", "--store", store, "-q"]
    bw = [*SUITE, "run", "--technique", "poseidon", "--set", "network.-1.bandwidth=7 Gbit/s", "--store", store, "-q"]
    return [
        ('python -c "import numpy"', [sys.executable, "-c", "import numpy"], None),
        ("suite --help", [*SUITE, "--help"], None),
        ("suite techniques", [*SUITE, "techniques"], 0.3),
        ("suite info poseidon", [*SUITE, "info", "poseidon"], 0.3),
        ("suite hardware list", [*SUITE, "hardware", "list"], 0.3),
        ("suite run (8 cases, all stored)", run, 0.5),
        ("suite run --set network.-1.bandwidth=7 Gbit/s" + FRESH, bw, 0.6),
    ]


CPU: dict[tuple, float] = {}  # (command, env given) -> best CPU seconds (user + sys) of the child


def timed(cmd: list[str], env: dict | None = None, fresh: bool = False) -> float:
    import resource

    if fresh:  # a new, empty cache folder for this one call (under the run's SUITE_CACHE_DIR: removed with it)
        env = {**os.environ, "SUITE_CACHE_DIR": tempfile.mkdtemp(prefix="fresh-", dir=os.environ["SUITE_CACHE_DIR"])}

    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    k = (tuple(cmd), env is not None and not fresh)
    CPU[k] = min(CPU.get(k, float("inf")), cpu)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-bytecode", action="store_true",
                    help="compile every module on every start (PYTHONDONTWRITEBYTECODE=1, as this project's shared "
                         "machine sets it); by default byte code is cached in a temporary PYTHONPYCACHEPREFIX, as "
                         "an installed package has it")
    a = ap.parse_args()
    import shutil

    pyc = tempfile.mkdtemp(prefix="bench-cli-pyc-")
    try:
        _measure(a, pyc)
    finally:
        shutil.rmtree(pyc, ignore_errors=True)


def _measure(a: argparse.Namespace, pyc: str) -> None:
    """The rounds of :func:`main`, byte code cached in *pyc* (unless ``--no-bytecode``)."""
    env = dict(os.environ)
    if not a.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pyc
    os.environ.clear()
    os.environ.update(env)

    load0 = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    cold: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as d:
        store = os.path.join(d, "s.sqlite")
        cmds = commands(store)
        # the first call of each command, with an empty cache folder (the unit conversions, the
        # `hardware list` index, the `info` probe) and cold byte code: what a fresh install pays once
        os.environ["SUITE_CACHE_DIR"] = os.path.join(d, "cache")
        os.makedirs(os.environ["SUITE_CACHE_DIR"], exist_ok=True)
        for label, cmd, _t in cmds:  # also fills the store, so every timed run finds its cases stored
            cold[label] = timed(cmd, fresh=label.endswith(FRESH))
        best: dict[str, float] = {}
        for _ in range(a.repeats):
            for label, cmd, _t in cmds:  # interleaved: load changes hit every command alike
                best[label] = min(best.get(label, float("inf")), timed(cmd, fresh=label.endswith(FRESH)))
    load1 = Path("/proc/loadavg").read_text().split()[:3] if load0 else []
    base = best['python -c "import numpy"']
    print(f"# best of {a.repeats}, interleaved; byte code {'not cached' if a.no_bytecode else 'cached'}; "
          f"load average {' '.join(load0)} -> {' '.join(load1)}")
    base_cpu = CPU[(tuple(cmds[0][1]), False)]
    head = ("| command | seconds | x import numpy | target | met | CPU s (user + sys) | CPU x import numpy "
            "| first call (cold caches) |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for label, _cmd, target in cmds:
        t = best[label]
        cpu = CPU[(tuple(_cmd), False)]
        met = "" if target is None else ("yes" if cpu <= target else "no")
        row = (f"| {label} | {t:.3f} | {t / base:.1f} | {'' if target is None else f'<= {target} s'} | {met} | "
               f"{cpu:.3f} | {cpu / base_cpu:.1f} | {cold[label]:.3f} |")
        print(row)


if __name__ == "__main__":
    main()
