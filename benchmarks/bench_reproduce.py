"""`suite reproduce` by technique: fresh (empty store) and cached, CPU time beside wall, with the load.

Each technique is reproduced in a child process into its own empty store and cache folder, then
again (every case cached). CPU is the child's user + sys time, which other processes' load
inflates far less than wall time on a shared machine. With ``--baseline-src DIR`` (a checkout of
an older commit, e.g. ``git worktree add /tmp/base <commit>``) each technique is also run with
that tree first on ``PYTHONPATH``, alternated with this one, and the two JSON scoreboards are
compared with the case keys and run metadata left out (a change of code changes every key):
"identical" means not one verdict or value moved.

Byte code is cached per side in a temporary ``PYTHONPYCACHEPREFIX``, filled by one untimed run of
each side before the timed rounds (an installed package has its byte code); ``--no-bytecode`` times every process compiling what it
imports (this project's shared machine sets ``PYTHONDONTWRITEBYTECODE=1``: ~3.7 s more CPU for a
fresh ``--all``, 23 forked workers each compiling its own imports).

Usage::

    python benchmarks/bench_reproduce.py pfeddst mixed-td transpose-conv [--baseline-src /tmp/base] [--rounds 3]
    python benchmarks/bench_reproduce.py all --baseline-src /tmp/base --rounds 3   # `suite reproduce --all`

Prints timings and ratios only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

#: run metadata and case keys, which differ between any two runs or code versions
VOLATILE = ("cases", "judgement_key", "key", "run_id", "seconds", "store")


def load_average() -> str:
    p = Path("/proc/loadavg")
    return " ".join(p.read_text().split()[:3]) if p.exists() else "n/a"


def _strip(o):
    if isinstance(o, dict):
        return {k: _strip(v) for k, v in o.items() if k not in VOLATILE}
    if isinstance(o, list):
        return [_strip(v) for v in o]
    return o


def side_env(src: str | None, pyc: Path | None) -> dict[str, str]:
    """The environment of one side's commands: its tree first on ``PYTHONPATH`` (a baseline) and
    its byte code in *pyc* (None: none written or read)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join([src, os.path.join(src, "plugins"), env.get("PYTHONPATH", "")])
    if pyc is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pyc)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def compile_side(root: Path, env: dict[str, str]) -> None:
    """Compile the side's suite/ and plugins/ into its byte-code folder, untimed (the libraries a
    command imports are compiled there by the warm-up run: with a prefix set, Python reads no
    ``__pycache__`` folder, site-packages' included)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "suite"), str(root / "plugins")],
                   env=env, capture_output=True, check=False)


def reproduce(tech: str, tmp: Path, src: str | None, base_env: dict[str, str]
              ) -> tuple[float, float, float, float, dict]:
    """(fresh CPU, fresh wall, cached CPU, cached wall, the fresh JSON scoreboard)."""
    env = dict(base_env, SUITE_CACHE_DIR=str(tmp / "cache"), SUITE_STORE=str(tmp / "store.sqlite"))
    cmd = [sys.executable, "-m", "suite", "reproduce", *(["--all"] if tech == "all" else [tech]), "--format", "json"]
    out = []
    for _ in range(2):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        # in the baseline's folder: `python -m` puts the working folder first on sys.path, ahead of
        # PYTHONPATH, so run from this tree the child would import this tree's suite, not the baseline's
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=src or HERE)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode:
            raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
        out.append(((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), wall, p.stdout))
    return out[0][0], out[0][1], out[1][0], out[1][1], json.loads(out[0][2])


def _side(tech: str, label: str, src: str | None, env: dict[str, str]) -> tuple[float, float, float, float, dict]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-reproduce-"))
    try:
        got = reproduce(tech, tmp, src, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fc, fw, cc, cw, _ = got
    print(f"{tech} [{label}]: fresh CPU {fc:.2f} s wall {fw:.1f} s; cached CPU {cc:.2f} s wall {cw:.1f} s; "
          f"load {load_average()}", flush=True)
    return got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("techniques", nargs="+", help="technique names; 'all' for `suite reproduce --all`")
    ap.add_argument("--baseline-src", help="a checkout to compare with (its tree first on PYTHONPATH)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="rounds per technique, the two sides alternated (the first side flips each round); "
                         "the ratio is of each side's minimum")
    ap.add_argument("--no-bytecode", action="store_true", help="no byte code cached: every process compiles")
    a = ap.parse_args()
    pyc_root = None if a.no_bytecode else Path(tempfile.mkdtemp(prefix="bench-reproduce-pyc-"))
    sides = {"this tree": None} if not a.baseline_src else {"baseline": a.baseline_src, "this tree": None}
    envs = {label: side_env(src, pyc_root / label.replace(" ", "-") if pyc_root else None) for label, src in sides.items()}
    if pyc_root is not None:
        for label, src in sides.items():
            compile_side(Path(src) if src else HERE, envs[label])
    print(f"# suite reproduce, fresh then cached, each in a new store; {os.cpu_count()} CPUs; load {load_average()}; "
          f"byte code {'not cached (--no-bytecode)' if pyc_root is None else 'cached per side (one untimed run each first)'}")
    try:
        for tech in a.techniques:
            _compare(tech, sides, envs, max(1, a.rounds), bool(a.baseline_src), pyc_root is not None)
    finally:
        if pyc_root is not None:
            shutil.rmtree(pyc_root, ignore_errors=True)


def _compare(tech: str, sides: dict[str, str | None], envs: dict[str, dict[str, str]], rounds: int,
             baseline: bool, warm: bool) -> None:
    runs: dict[str, list[tuple[float, float, float, float, dict]]] = {label: [] for label in sides}
    if warm:  # untimed: compiles every library the command imports into the side's byte-code folder
        for label, src in sides.items():
            tmp = Path(tempfile.mkdtemp(prefix="bench-reproduce-warm-"))
            try:
                reproduce(tech, tmp, src, envs[label])
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    for r in range(rounds):
        order = list(sides.items()) if r % 2 == 0 else list(sides.items())[::-1]
        for label, src in order:
            runs[label].append(_side(tech, label, src, envs[label]))
    if baseline:
        b, n = runs["baseline"], runs["this tree"]
        boards = [_strip(x[4]) for x in b + n]
        same = all(x == boards[0] for x in boards)
        fresh = min(x[0] for x in n) / min(x[0] for x in b)
        cached = min(x[2] for x in n) / min(x[2] for x in b)
        print(f"{tech}: CPU ratio this tree / baseline (min of {len(n)} each): fresh {fresh:.2f} "
              f"({min(x[0] for x in n):.2f} / {min(x[0] for x in b):.2f} s), cached {cached:.2f}; scoreboard "
              f"{'identical' if same else 'DIFFERS'} in every round (case keys and run metadata aside)", flush=True)


if __name__ == "__main__":
    main()
