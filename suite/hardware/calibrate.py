"""Measure this machine and write a ``kind = "measured"`` hardware profile.

What is measured, and how (each figure records its method, repeats and spread in ``[measured]``):

* dense GEMM throughput per dtype (fp64, fp32): ``numpy.matmul`` of two n x n matrices, counted
  as 2 n^3 FLOP, n chosen so one product takes about 0.2 s (capped);
* memory bandwidth: STREAM-style ``copy`` (c = a; 2 x 8 bytes moved per element) and ``triad``
  (a = b + s c; 3 x 8 bytes per element, computed in cache-sized blocks so the temporary never
  goes to memory) on float64 arrays much larger than the last-level cache, counted the STREAM way
  (McCalpin, "Memory Bandwidth and Machine Balance in Current High Performance Computers",
  IEEE TCCA Newsletter, 1995);
* core count (usable by this process, logical, and physical) and physical memory size;
* loopback TCP between two processes on 127.0.0.1: one-way latency as half the median
  round-trip time of a 1-byte ping-pong (TCP_NODELAY), and bandwidth as bytes / time of one
  bulk transfer acknowledged by the receiver.

Every figure is the median of its repeats, except the GEMM peaks, the best of theirs (a peak is
what the machine can do; other load only slows a product); ``spread`` is (max - min) / value.
"""

from __future__ import annotations

import datetime as _dt
import multiprocessing as mp
import os
import platform
import socket
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from suite.hardware.measured_profile import (  # noqa: F401  (re-exported: this module's public names before 0.3.0)
    MAX_AGE_DAYS,
    MAX_SPREAD,
    calibration_warnings,
    default_output,
    to_toml,
)
from suite.hardware.measurement import Calibration, Measurement

__all__ = ["Measurement", "Calibration", "calibrate", "calibration_warnings", "MAX_SPREAD", "MAX_AGE_DAYS", "measure_gemm", "measure_stream", "measure_tcp",
           "host_facts", "to_toml", "default_output"]


# --------------------------------------------------------------------------------------------
# host facts

def _llc_bytes() -> int | None:
    """Largest cache size reported by sysfs for cpu0 (bytes), or None."""
    best = None
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")) if base.is_dir() else []:
        try:
            text = (idx / "size").read_text().strip()
        except OSError:
            continue
        mult = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:].upper(), 1)
        try:
            size = int(text.rstrip("KMGkmg")) * mult
        except ValueError:
            continue
        best = max(best or 0, size)
    return best


def _physical_cores() -> int | None:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    pairs = set()
    phys = core = None
    for line in text.splitlines() + [""]:
        if line.startswith("physical id"):
            phys = line.split(":")[1].strip()
        elif line.startswith("core id"):
            core = line.split(":")[1].strip()
        elif not line.strip():
            if core is not None:
                pairs.add((phys, core))
            phys = core = None
    return len(pairs) or None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 0


def _available_bytes() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return _memory_bytes() // 2


def host_facts() -> dict[str, Any]:
    """Facts read (not timed) from the OS: cores, memory, cache, CPU model, BLAS."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS
        usable = os.cpu_count() or 1
    blas = ""
    try:
        cfg = np.show_config(mode="dicts")  # numpy >= 1.25
        blas = str(cfg.get("Build Dependencies", {}).get("blas", {}).get("name", ""))
    except Exception:  # noqa: BLE001 - informational only
        pass
    return {"cpu_model": _cpu_model(), "cores_usable": usable, "cores_logical": os.cpu_count() or usable,
            "cores_physical": _physical_cores(), "memory_bytes": _memory_bytes(), "llc_bytes": _llc_bytes(),
            "hostname": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
            "numpy": np.__version__, "blas": blas}


# --------------------------------------------------------------------------------------------
# GEMM

def measure_gemm(dtype: str = "float64", repeats: int = 5, target_s: float = 0.2, n_max: int = 4096,
                 n_min: int = 128) -> Measurement:
    """Dense GEMM throughput (FLOP/s) of ``numpy.matmul`` for *dtype*.

    Parameters
    ----------
    dtype : {"float64", "float32"}
    repeats : int
        Timed products after one warm-up; the best (the fastest product) is reported: the peak is
        what the machine can do, and on a shared machine other load only ever slows a product
        down (the median read 5-20x low under load in ``--quick``).
    target_s : float
        Wanted seconds per product; n is scaled from a probe at n_min as n ~ t^(1/3).
    n_max, n_min : int
        Bounds on the matrix order.

    Returns
    -------
    Measurement
        FLOP/s, counting 2 n^3 FLOP per product.
    """
    rng = np.random.default_rng(0)
    n = n_min
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    a @ b  # warm up BLAS threads
    probes = []
    for _ in range(3):
        t0 = time.perf_counter()
        a @ b
        probes.append(time.perf_counter() - t0)
    probe = max(min(probes), 1e-6)
    n = int(min(n_max, max(n_min, n * (target_s / probe) ** (1 / 3))))
    n -= n % 64 if n >= 128 else 0
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    c = np.empty((n, n), dtype=dtype)
    np.matmul(a, b, out=c)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        samples.append(2.0 * n**3 / (time.perf_counter() - t0))
    key = {"float64": "fp64", "float32": "fp32"}.get(dtype, dtype)
    return Measurement(f"device.peak_flops.{key}", max(samples), "flop_rate",
                       f"numpy.matmul {n}x{n} {dtype}, 2n^3 FLOP per product; 1 warm-up, best of {repeats}",
                       samples, {"n": n})


def measure_gemm_curve(dtype: str, sizes: list[int], peak: float, repeats: int = 3,
                       flop_per_sample: float = 1e9) -> Measurement:
    """Achieved fraction of *peak* for ``numpy.matmul`` of n x n matrices, for each n in *sizes*.

    Parameters
    ----------
    dtype : str
    sizes : list of int
        Matrix orders n.
    peak : float
        FLOP/s the fractions are relative to (pass the best rate of the large-n measurement).
    repeats : int
    flop_per_sample : float
        Small products are repeated inside one timed sample until about this many FLOP, so that
        every sample lasts long enough for the timer and for scheduler noise to average out.

    Returns
    -------
    Measurement
        ``params["curve"]`` is ``[[2 n^3, fraction], ...]`` in increasing size (FLOP per product),
        fraction = best rate / peak, clipped to (0, 1]: a device efficiency curve. The best (not
        the median) rate is used because contention on a shared machine only ever slows a sample.
        ``params["best"]`` is that best rate (FLOP/s) per size, so a caller can tell a curve point
        that beat *peak* (:func:`calibrate` then raises the peak to it and drops ``best``).
    """
    rng = np.random.default_rng(1)
    curve, rates, best = [], [], []
    for n in sorted(set(sizes)):
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        c = np.empty((n, n), dtype=dtype)
        np.matmul(a, b, out=c)
        inner = max(1, int(flop_per_sample // (2 * n**3)))  # batch small products into one sample
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(inner):
                np.matmul(a, b, out=c)
            samples.append(inner * 2.0 * n**3 / (time.perf_counter() - t0))
        rates.append(statistics.median(samples))
        best.append(max(samples))
        curve.append([float(2 * n**3), _fraction(max(samples), peak)])
    key = {"float64": "fp64", "float32": "fp32"}.get(dtype, dtype)
    return Measurement(f"device.efficiency.gemm_{key}", statistics.median(rates), "flop_rate",
                       f"numpy.matmul n x n {dtype} for n in {sorted(set(sizes))}, best of {repeats} samples of "
                       f"~{flop_per_sample:.0e} FLOP; fraction of the best large-n rate", rates,
                       {"curve": curve, "sizes": sorted(set(sizes)), "best": best})


def _fraction(rate: float, peak: float) -> float:
    """*rate* / *peak*, clipped to (0, 1], to 4 significant digits (a curve point)."""
    return float(f"{min(1.0, max(rate / peak, 1e-6)):.4g}")


# --------------------------------------------------------------------------------------------
# STREAM

def measure_stream(array_bytes: int, repeats: int = 5, block: int = 65536) -> tuple[Measurement, Measurement]:
    """STREAM-style copy and triad bandwidth (B/s) on float64 arrays of *array_bytes* each.

    Copy moves 2 x 8 bytes per element (read a, write c); triad ``a = b + s*c`` moves 3 x 8 bytes
    (read b and c, write a), computed in blocks of *block* elements so ``s*c`` stays in cache.
    Write-allocate traffic is not counted, as in STREAM.
    """
    n = max(block, array_bytes // 8)
    a = np.full(n, 1.0)
    b = np.full(n, 2.0)
    c = np.full(n, 0.5)
    tmp = np.empty(block)
    s = 3.0

    def copy() -> None:
        np.copyto(c, a)

    def triad() -> None:
        for i in range(0, n, block):
            j = min(i + block, n)
            t = tmp[: j - i]
            np.multiply(c[i:j], s, out=t)
            np.add(b[i:j], t, out=a[i:j])

    out = []
    for name, fn, words in (("copy", copy, 2), ("triad", triad, 3)):
        fn()  # warm up: page in
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            samples.append(words * 8 * n / (time.perf_counter() - t0))
        out.append(Measurement(
            f"stream.{name}", statistics.median(samples), "bandwidth",
            f"STREAM-style {name} on 3 float64 arrays of {n * 8 / 2**20:.0f} MiB each, {words} x 8 B per element"
            + ("; blocked so s*c stays in cache" if name == "triad" else ""),
            samples, {"array_bytes": int(n * 8)}))
    return out[0], out[1]


# --------------------------------------------------------------------------------------------
# loopback TCP

def _recv_exact(sock: socket.socket, n: int, buf: bytearray | None = None) -> None:
    view = memoryview(buf if buf is not None else bytearray(n))
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("peer closed")
        got += k


def _tcp_server(port_q: Any, rounds: int, bulk: int, repeats: int) -> None:  # pragma: no cover - child
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port_q.put(srv.getsockname()[1])
    conn, _ = srv.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    one = bytearray(1)
    for _ in range(repeats):
        for _ in range(rounds):
            _recv_exact(conn, 1, one)
            conn.sendall(b"x")
    buf = bytearray(1 << 20)
    for _ in range(repeats):
        left = bulk
        while left:
            k = conn.recv_into(buf, min(len(buf), left))
            if k == 0:
                return
            left -= k
        conn.sendall(b"k")
    conn.close()
    srv.close()


def measure_tcp(rounds: int = 2000, bulk_bytes: int = 64 << 20, repeats: int = 5,
                timeout_s: float = 60.0) -> tuple[Measurement, Measurement]:
    """Loopback TCP one-way latency (s) and bandwidth (B/s) between this process and a child.

    Latency: *rounds* 1-byte ping-pongs per repeat; one-way = round-trip / 2. Bandwidth: one
    transfer of *bulk_bytes* per repeat, timed until the receiver's 1-byte acknowledgement.
    Only 127.0.0.1 is used.
    """
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=_tcp_server, args=(q, rounds, bulk_bytes, repeats), daemon=True)
    proc.start()
    try:
        port = q.get(timeout=timeout_s)
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        one = bytearray(1)
        lat = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(rounds):
                sock.sendall(b"p")
                _recv_exact(sock, 1, one)
            lat.append((time.perf_counter() - t0) / rounds / 2)
        payload = memoryview(bytes(min(bulk_bytes, 4 << 20)))
        bw = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            left = bulk_bytes
            while left:
                chunk = payload[: min(len(payload), left)]
                sock.sendall(chunk)
                left -= len(chunk)
            _recv_exact(sock, 1, one)
            bw.append(bulk_bytes / (time.perf_counter() - t0))
        sock.close()
    finally:
        proc.join(timeout=timeout_s)
        if proc.is_alive():  # pragma: no cover - only on a hung child
            proc.terminate()
    latency = Measurement("network.0.latency", statistics.median(lat), "time",
                          f"loopback TCP 127.0.0.1, 1-byte ping-pong x {rounds} per repeat, TCP_NODELAY; "
                          f"one-way = round trip / 2", lat, {"rounds": rounds})
    bandwidth = Measurement("network.0.bandwidth", statistics.median(bw), "bandwidth",
                            f"loopback TCP 127.0.0.1, {bulk_bytes / 2**20:.0f} MiB per transfer until a 1-byte "
                            f"acknowledgement", bw, {"bytes": bulk_bytes})
    return latency, bandwidth


# --------------------------------------------------------------------------------------------
# driver

_Step = tuple[str, Callable[[], list[Measurement]]]


def _steps(quick: bool, facts: dict[str, Any]) -> list[_Step]:
    """The measurements of a calibration, in order, sized for this machine: the STREAM arrays
    well beyond the last-level cache but under ~40% of free memory, GEMM sizes and TCP volumes
    by mode (*quick*: smaller and fewer)."""
    llc = facts.get("llc_bytes") or 32 << 20
    avail = _available_bytes()
    if quick:
        reps = 3
        array_bytes = min(max(2 * llc, 8 << 20), 64 << 20)
        # big enough that BLAS reaches its large-n rate (n <= 576 read 2.5x low and less), best of 5
        gemm_kw: dict[str, Any] = {"target_s": 0.1, "n_max": 2048, "n_min": 1024, "repeats": 5}
        tcp_kw = {"rounds": 200, "bulk_bytes": 4 << 20}
    else:
        reps = 5
        array_bytes = min(max(8 * llc, 128 << 20), 512 << 20)
        gemm_kw = {"target_s": 0.25, "n_max": 4096, "n_min": 1024}
        tcp_kw = {"rounds": 2000, "bulk_bytes": 64 << 20}
    array_bytes = int(min(array_bytes, max(avail // 8, 4 << 20)))  # 3 arrays stay under ~40% of free memory
    curve_sizes = [32, 64, 128] if quick else [64, 128, 256, 512, 1024]

    def gemm(dtype: str) -> list[Measurement]:
        return _gemm_with_curve(dtype, reps, gemm_kw, curve_sizes, quick)

    return [
        ("GEMM fp64", lambda: gemm("float64")),
        ("GEMM fp32", lambda: gemm("float32")),
        ("STREAM copy/triad", lambda: list(measure_stream(array_bytes, reps))),
        ("loopback TCP", lambda: list(measure_tcp(repeats=reps, **tcp_kw))),
    ]


def _gemm_with_curve(dtype: str, reps: int, gemm_kw: dict[str, Any], curve_sizes: list[int],
                     quick: bool) -> list[Measurement]:
    """The GEMM peak of *dtype* and, below its size, the efficiency curve (fraction of that peak
    per size, the peak's own point appended at 1.0)."""
    kw = dict(gemm_kw)
    peak = measure_gemm(dtype, kw.pop("repeats", reps), **kw)
    sizes = [n for n in curve_sizes if n < peak.params["n"]]
    eff = (measure_gemm_curve(dtype, sizes, max(peak.samples), repeats=3,
                              flop_per_sample=1e8 if quick else 1e9) if sizes else None)
    if eff is None:
        return [peak]
    best = eff.params.pop("best")
    raised = _blocked_bound(best)
    slowed = max(best) > peak.value  # a smaller product ran faster than the "peak": that one was slowed
    if slowed:
        peak = _raised_peak(peak, max(best))
        eff.method = eff.method.replace("fraction of the best large-n rate", "fraction of the best rate of any size "
                                        "(a smaller product beat the large one)")
    if slowed or raised:  # the fractions again, of the (raised) peak: measure_gemm's value is its best sample
        eff.params["curve"] = [[flop, _fraction(b, peak.value)] for (flop, _f), b in zip(eff.params["curve"], best)]
    if raised:
        eff.method += (f"; {len(raised)} point(s) (n = {', '.join(str(eff.params['sizes'][i]) for i in raised)}) "
                       "slower than a smaller product raised to its rate (a product of order 2n is 8 products of "
                       "order n, so it runs at least as fast: the machine was busy)")
    eff.params["curve"].append([float(2 * peak.params["n"] ** 3), 1.0])
    eff.params["sizes"].append(peak.params["n"])
    return [peak, eff]


def _blocked_bound(best: list[float]) -> list[int]:
    """Raise, in place, each best rate of *best* (FLOP/s, by increasing matrix order) that is below
    the rate of a smaller order to that rate; the indices raised. A product of order 2n can be
    computed as 8 products of order n, so a larger product never runs slower but on a busy machine
    (a calibration at load 6-7 wrote 0.1% efficiency at n = 128 between points at 46% and 100%)."""
    raised, top = [], 0.0
    for i, b in enumerate(best):
        if b < top:
            best[i] = top
            raised.append(i)
        top = max(top, best[i])
    return raised


def _raised_peak(peak: Measurement, top: float) -> Measurement:
    """*peak* raised to *top* FLOP/s, the best rate a smaller product reached: the large product was
    slowed (a busy machine), so the device can do at least *top*. *top* joins the samples, so the
    figure's spread (and :func:`calibration_warnings`) shows how busy the machine was."""
    busy = " (this product was slowed: the machine was busy)" if top > 1.05 * peak.value else ""
    return Measurement(peak.name, top, peak.dimension,
                       f"{peak.method}; raised to {top:.4g} FLOP/s, the best rate of a smaller product on the "
                       f"efficiency curve{busy}", [*peak.samples, top], dict(peak.params))


def _run_steps(steps: list[_Step], progress: bool) -> list[Measurement]:
    """Every step's measurements, in order; with *progress*, under a rich progress bar on stderr."""
    if not progress:
        return [m for _desc, fn in steps for m in fn()]
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    out: list[Measurement] = []
    with Progress(TextColumn("calibrating: {task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(steps[0][0], total=len(steps))
        for desc, fn in steps:
            bar.update(task, description=desc)
            out += fn()
            bar.advance(task)
    return out


def calibrate(quick: bool = False, progress: bool = False) -> Calibration:
    """Measure this machine (see the module docstring).

    Parameters
    ----------
    quick : bool
        Smaller sizes and fewer repeats: a few seconds, noisier (for tests and smoke runs); the
        GEMM peaks are still best of 5 at n >= 1024, as a full calibration starts.
        Default: well under a minute on a laptop-class machine.
    progress : bool
        Show a rich progress display on stderr.
    """
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    t_start = time.perf_counter()
    facts = host_facts()
    results: dict[str, Measurement] = {}
    for m in _run_steps(_steps(quick, facts), progress):
        results[m.name] = m
    return Calibration(results, facts, started, time.perf_counter() - t_start, quick)
