"""`suite reproduce` by technique: fresh (empty store) and cached, CPU time beside wall, with the load.

Each technique is reproduced in a child process into its own empty store and cache folder, then
again (every case cached). CPU is the child's user + sys time, which other processes' load
inflates far less than wall time on a shared machine. With ``--baseline-src DIR`` (a checkout of
an older commit, e.g. ``git worktree add /tmp/base <commit>``) each technique is also run with
that tree first on ``PYTHONPATH``, alternated with this one, and the two JSON scoreboards are
compared with the case keys and run metadata left out (a change of code changes every key):
"identical" means not one verdict or value moved.

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


def reproduce(tech: str, tmp: Path, src: str | None) -> tuple[float, float, float, float, dict]:
    """(fresh CPU, fresh wall, cached CPU, cached wall, the fresh JSON scoreboard)."""
    env = dict(os.environ, SUITE_CACHE_DIR=str(tmp / "cache"), SUITE_STORE=str(tmp / "store.sqlite"))
    if src:
        env["PYTHONPATH"] = os.pathsep.join([src, os.path.join(src, "plugins"), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "suite", "reproduce", *(["--all"] if tech == "all" else [tech]), "--format", "json"]
    out = []
    for _ in range(2):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        # in the baseline's folder: `python -m` puts the working folder first on sys.path, ahead of
        # PYTHONPATH, so run from this tree the child would import this tree's suite, not the baseline's
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=src)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode:
            raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
        out.append(((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), wall, p.stdout))
    return out[0][0], out[0][1], out[1][0], out[1][1], json.loads(out[0][2])


def _side(tech: str, label: str, src: str | None) -> tuple[float, float, float, float, dict]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-reproduce-"))
    try:
        got = reproduce(tech, tmp, src)
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
    a = ap.parse_args()
    print(f"# suite reproduce, fresh then cached, each in a new store; {os.cpu_count()} CPUs; load {load_average()}")
    for tech in a.techniques:
        sides = {"this tree": None} if not a.baseline_src else {"baseline": a.baseline_src, "this tree": None}
        runs: dict[str, list[tuple[float, float, float, float, dict]]] = {label: [] for label in sides}
        for r in range(max(1, a.rounds)):
            order = list(sides.items()) if r % 2 == 0 else list(sides.items())[::-1]
            for label, src in order:
                runs[label].append(_side(tech, label, src))
        if a.baseline_src:
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
