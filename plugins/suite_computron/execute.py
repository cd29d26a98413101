"""Computron's execute fidelity: real shard-parallel copies on this machine.

The swap at the heart of Computron is ``n = tp x pp`` ranks each copying its own shard of the
model at the same time ([Zou23] abstract; the authors' worker runs ``model.to(device)`` on every
rank concurrently). Here ``S`` bytes (``copy_bytes``) are split into ``n`` contiguous shards and
``n`` threads each ``np.copyto`` one shard between two pre-touched host pools (numpy releases the
GIL for the copy), released together by a barrier; the main thread times from the release to the
last shard's arrival at a second barrier. One warm-up round, then ``repeats`` (5) timed rounds,
interleaved with a serial copy of the same bytes by one thread (the oracle's baseline and the
``copy-local`` claim's null) in the same run.

Variants: ``computron`` = n threads at once; ``mp-serial`` = the same n shards copied one after
another by one thread; ``single-device`` = one shard, one thread; ``resident`` has nothing to
copy (Skip).

Oracle: after a copy into a zeroed destination the destination equals the source
(``np.array_equal``); ``oracle_error`` is the fraction of bytes that differ (0).

With ``target = "gpu"`` the same path copies pinned host shards to a CUDA device on ``n`` streams
(torch, when installed with CUDA); without one the case is skipped.

References
----------
.. [Zou23] Zou et al., arXiv 2306.13835 (abstract).
.. [McCalpin95] J. McCalpin, STREAM, IEEE TCCA Newsletter 1995 (copy kernel).
"""

from __future__ import annotations

import statistics
import threading
import time

import numpy as np

from suite.api import OracleMismatch

from suite_computron import model
from suite_computron.constants import MAX_COPY_BYTES

__all__ = ["ShardCopier", "shard_bounds", "serial_copy", "sequential_shards", "evaluate", "MAX_COPY_BYTES"]


def shard_bounds(nbytes: int, n: int, align: int = 4096) -> list[tuple[int, int]]:
    """``n`` contiguous [start, stop) ranges covering ``nbytes``, page-aligned, sizes within a page."""
    if n < 1:
        raise ValueError(f"shards must be >= 1, got {n}")
    cuts = [min(nbytes, (round(i * nbytes / n) // align) * align) for i in range(n)] + [nbytes]
    return [(cuts[i], cuts[i + 1]) for i in range(n)]


class ShardCopier:
    """``n`` persistent threads that copy ``src[a:b]`` into ``dst[a:b]`` when released.

    ``run()`` releases them through a barrier and returns the seconds until the last shard is
    done. Use as a context manager (the threads stop on exit).
    """

    def __init__(self, src: np.ndarray, dst: np.ndarray, n: int):
        self.src, self.dst = src, dst
        self.bounds = shard_bounds(src.nbytes, n)
        self.n = n
        self._go = threading.Barrier(n + 1)
        self._done = threading.Barrier(n + 1)
        self._stop = False
        self._threads = [threading.Thread(target=self._work, args=(a, b), daemon=True) for a, b in self.bounds]
        for t in self._threads:
            t.start()

    def _work(self, a: int, b: int) -> None:
        while True:
            self._go.wait()
            if self._stop:
                return
            np.copyto(self.dst[a:b], self.src[a:b])
            self._done.wait()

    def run(self) -> float:
        t0 = time.perf_counter()
        self._go.wait()
        self._done.wait()
        return time.perf_counter() - t0

    def close(self) -> None:
        self._stop = True
        try:
            self._go.wait(timeout=5)
        except threading.BrokenBarrierError:  # pragma: no cover
            pass
        for t in self._threads:
            t.join(timeout=5)

    def __enter__(self) -> "ShardCopier":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def serial_copy(src: np.ndarray, dst: np.ndarray) -> float:
    """One thread copies all of *src* into *dst*; returns seconds."""
    t0 = time.perf_counter()
    np.copyto(dst, src)
    return time.perf_counter() - t0


def sequential_shards(src: np.ndarray, dst: np.ndarray, n: int) -> float:
    """One thread copies the ``n`` shards one after another (``mp-serial``); returns seconds."""
    t0 = time.perf_counter()
    for a, b in shard_bounds(src.nbytes, n):
        np.copyto(dst[a:b], src[a:b])
    return time.perf_counter() - t0


def _pools(nbytes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    src = np.frombuffer(rng.bytes(nbytes), dtype=np.uint8).copy()
    dst = np.ones(nbytes, dtype=np.uint8)  # touch every page before timing
    return src, dst


def _oracle_error(src: np.ndarray, dst: np.ndarray) -> float:
    if np.array_equal(dst, src):
        return 0.0
    return float(np.count_nonzero(dst != src)) / src.size


def _gpu_copy(nbytes: int, n: int, parallel: bool, repeats: int, seed: int):
    """Pinned host shards to one CUDA device on n streams (torch); Skip without a GPU."""
    from suite.api import Skip

    try:
        import torch  # noqa: PLC0415 - optional, only on a machine with a GPU
    except ImportError:
        raise Skip("computron execute: target 'gpu' needs torch with CUDA (not installed here)") from None
    if not torch.cuda.is_available():
        raise Skip("computron execute: target 'gpu' but no CUDA device is visible")
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, generator=g).pin_memory()
    dst = torch.zeros(nbytes, dtype=torch.uint8, device="cuda")
    bounds = shard_bounds(nbytes, n)
    streams = [torch.cuda.Stream() for _ in bounds]

    def once() -> float:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for (a, b), s in zip(bounds, streams):
            with torch.cuda.stream(s):
                dst[a:b].copy_(src[a:b], non_blocking=True)
            if not parallel:
                s.synchronize()
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    once()
    times = [once() for _ in range(repeats)]
    err = 0.0 if torch.equal(dst.cpu(), src) else 1.0
    return times, err


def _host_copy(S: int, n: int, parallel: bool, repeats: int, seed: int) -> tuple[list[float], list[float], float]:
    """Host copy of S bytes in n shards, parallel threads or one after another, each round beside
    one serial copy of the same pools (warm-up first); then the destination against the source.

    Returns (times of the variant, times of the serial copy, fraction of bytes wrong).
    """
    src, dst = _pools(S, seed)
    times: list[float] = []
    serial: list[float] = []
    if parallel:
        with ShardCopier(src, dst, n) as cp:
            cp.run()
            serial_copy(src, dst)  # warm-up
            for _ in range(repeats):
                times.append(cp.run())
                serial.append(serial_copy(src, dst))
            dst.fill(0)
            cp.run()
            return times, serial, _oracle_error(src, dst)
    sequential_shards(src, dst, n)
    serial_copy(src, dst)
    for _ in range(repeats):
        times.append(sequential_shards(src, dst, n))
        serial.append(serial_copy(src, dst))
    dst.fill(0)
    sequential_shards(src, dst, n)
    return times, serial, _oracle_error(src, dst)


def _copy_setup(scenario) -> tuple[int, int, bool, str, int]:
    """(S bytes, n shards, parallel, target, usable cores) of a scenario, or Skip: the resident
    variant (nothing to copy), S above :data:`MAX_COPY_BYTES`, more host threads than cores."""
    import os

    from suite.api import Skip

    if scenario.variant == "resident":
        raise Skip("computron execute: the resident variant has no swap to copy")
    st = model.settings(scenario)
    n = st["n"]
    parallel = model.VARIANTS[scenario.variant][1]
    S = int(st["copy_bytes"])
    if S > MAX_COPY_BYTES:
        raise Skip(f"computron execute: copy_bytes {S} > {MAX_COPY_BYTES} (two pools must fit in memory)")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    target = scenario.params.get("target", "host")
    if target == "host" and parallel and n > cores:
        raise Skip(f"computron execute: {n} copy threads > {cores} usable cores")
    return S, n, parallel, target, cores


def evaluate(scenario, repeats: int = 5):
    """Execute fidelity (module docstring).

    Parameters
    ----------
    scenario : suite.Scenario
        ``params``: ``copy_bytes`` (S, B), ``tp`` x ``pp`` (n shards and threads), ``target``
        (``host`` or ``gpu``); ``variant`` as in the module docstring; ``seed`` the bytes.
    repeats : int
        Timed rounds (after one warm-up).

    Returns
    -------
    suite.Result
        ``copy_rate`` (B/s, S / median time; samples per round), ``copy_time`` (s, median),
        ``serial_rate`` (B/s, one thread, same run; samples), ``speedup_vs_serial`` (1, ratio of
        median rates), ``oracle_error`` (fraction of bytes wrong, 0), ``bytes_copied`` (B),
        ``shards``.

    Raises
    ------
    suite.Skip
        ``resident`` (nothing to copy); more threads than usable cores; ``target = "gpu"``
        without a CUDA device.
    suite.api.OracleMismatch
        A destination that differs from its source (a bug).
    """
    from suite.api import Result

    S, n, parallel, target, cores = _copy_setup(scenario)
    if target == "gpu":
        times, err = _gpu_copy(S, n, parallel, repeats, int(scenario.seed))
        serial: list[float] = []
    else:
        times, serial, err = _host_copy(S, n, parallel, repeats, int(scenario.seed))
    if err != 0.0:
        raise OracleMismatch(f"computron execute: destination differs from source in {err:.3g} of the bytes")
    t_med = statistics.median(times)
    res = Result()
    res.add("copy_rate", S / t_med, "B/s", "higher", samples=[S / t for t in times])
    res.add("copy_time", t_med, "s", "lower", samples=times)
    if serial:
        s_med = statistics.median(serial)
        res.add("serial_rate", S / s_med, "B/s", "higher", samples=[S / t for t in serial])
        res.add("speedup_vs_serial", s_med / t_med, "1", "higher")
    res.add("oracle_error", err, "1", "lower")
    res.add("bytes_copied", S, "B", "none")
    res.add("shards", n, "1", "none")
    res.artifacts["setup"] = {"target": target, "shards": n, "parallel": parallel, "repeats": repeats,
                              "cores": cores, "bounds": shard_bounds(S, n)}
    return res
