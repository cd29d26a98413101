"""The cost model: one stencil call (``steps`` steps) on two Xeon sockets, four GPUs or a wafer.

Pure functions from (kernel, grid, steps, dtype, io, hardware profile) to times, built from
:mod:`suite.perf` (:func:`~suite.perf.roofline_time`, :func:`~suite.perf.transfer_time`,
:func:`~suite.perf.collective_time`). SI units: s, B, B/s, FLOP/s.

Model
-----
Per call::

    T = T_in + steps * (T_compute + T_halo) + T_out

* **Counts.** FLOPs of one step on a rank's block are those of the shifted-slice kernel,
  :func:`suite_cerebras_stencil.kernels.flop_count` (8 per point for diffusion7, 48 for
  advection plus its per-face terms); compulsory bytes
  :func:`~suite_cerebras_stencil.kernels.bytes_per_point` (inputs read and outputs written
  once: 2 d and 6 d per point). Both are tested against what the execute fidelity counts.
* **Compute** (every platform): the roofline [Williams09], ``max(F / peak, B / (eff * BW))``
  per rank (:func:`suite.perf.roofline_time` with the memory roof scaled by the platform's
  stencil efficiency):

  - ``cpu-2s``: the x axis is cut in two slabs, one per socket; peak and bandwidth per socket
    from the device profile; ``eff`` = :data:`CPU_STENCIL_EFFICIENCY`, measured on this machine
    (bytes/s of the compiled stencil loop over the same run's STREAM triad);
  - ``gpu-4x``: four x slabs, one per GPU, HBM roofline with ``eff`` =
    :data:`GPU_STENCIL_EFFICIENCY` (1.0: no sourced V100 stencil efficiency, the bandwidth
    bound);
  - ``wse``: the (x, y) plane on the PE mesh (one column, or a block of columns, per PE; z in
    PE memory). The per-PE rate is :data:`WSE_PE_FLOPS`, the achieved rate of Rocki et al.
    (SC20): 0.86 PFLOP/s over a 600 x 595 mesh on a CS-1, for BiCGStab on a 7-point stencil
    (another code); the per-PE memory bandwidth is ``memory_bandwidth / cores``. The WSE-2 is
    assumed to reach the same per-PE rate.
* **Halo** per step (``alpha + beta m`` over the busiest path, :func:`halo_link_bytes`):

  - ``cpu-2s``: two planes of every input field per socket, copied through memory (read and
    write) at the stencil's bandwidth: there is no sourced inter-socket (UPI) figure;
  - ``gpu-4x``: two planes per GPU, one to each neighbour over separate links at once, each a
    ``p2p`` priced by :func:`suite.perf.collective_time` over the node's innermost level
    (NVLink in ``dgx-1-v100``; a PCIe override gives the PCIe host);
  - ``wse``: per PE, the faces of its block for every input field go to the four neighbours
    over the four links at once; the busiest link carries the longer face plus the corner
    columns advection reads (two hops each), one ``p2p`` on a mesh level of
    ``fabric_bandwidth / cores`` per PE and ``hop_latency`` (0 when unknown) built from
    ``[ext.cerebras]`` and priced by :func:`suite.perf.collective_time`.
* **I/O** (``io = "streamed"``: the grid comes in and goes out every call, as a TF input
  pipeline feeds it): ``cpu-2s`` copies the inputs in and outputs out through memory
  (:func:`suite.perf.transfer_time` of 2 x the bytes at the full memory bandwidth); ``gpu-4x``
  over each GPU's host link (``device.host_link``, PCIe 3.0 x16); ``wse`` over the system's
  Ethernet (``[ext.cerebras] io_bandwidth``, 12 x 100 GbE). ``resident``: no I/O term.
* **Capacity**: each rank's resident fields (inputs and outputs; halo buffers not counted) must fit
  its memory: the socket's share of host memory, the GPU's HBM, the PE's SRAM
  (``memory / cores``). A case that does not fit is declined (``Skip``) with one line.

The vectorised :func:`sweep` evaluates the same formulas on arrays (halo alpha and beta taken
from :func:`suite.perf.collective_time`, which is affine in the bytes for one group).

References
----------
.. [Brown22] N. Brown, B. Echols, J. Zarins, T. Grosser, "TensorFlow as a DSL for stencil-based
   computation on the Cerebras Wafer Scale Engine", arXiv 2210.04795 (2022), abstract.
.. [Rocki20] K. Rocki et al., "Fast Stencil-Code Computation on a Wafer-Scale Processor",
   SC20 (arXiv 2010.03660), abstract: 0.86 PFLOPS, 600 x 595 x 1536 mesh, about a third of peak.
.. [Williams09] S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009.
.. [McCalpin95] J. D. McCalpin, "Memory Bandwidth and Machine Balance in Current High
   Performance Computers", IEEE TCCA Newsletter, 1995 (STREAM).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from suite.api import Group, collective_time, roofline_time, transfer_time

from suite_cerebras_stencil.constants import DTYPE_BYTES
from suite_cerebras_stencil.kernels import FIELDS_IN, FIELDS_OUT, KERNELS, bytes_per_point, flop_count, halo_corners

__all__ = [
    "DTYPE_BYTES",
    "VARIANTS",
    "GPUS",
    "CPU_STENCIL_EFFICIENCY",
    "GPU_STENCIL_EFFICIENCY",
    "WSE_PE_FLOPS",
    "Platform",
    "platform_of",
    "wse_block",
    "halo_bytes",
    "halo_link_bytes",
    "Prediction",
    "predict",
    "sweep",
    "evaluate",
]

VARIANTS = ("cpu-2s", "gpu-4x", "wse")
#: GPUs of the gpu-4x variant (the abstract: "four V100 GPUs")
GPUS = 4

#: Achieved fraction of the memory bandwidth of the CPU stencil: compulsory bytes per second of
#: the compiled fp32 diffusion7 loop (:func:`suite_cerebras_stencil.kernels.diffusion7_jit`) at
#: 256^3 over the same run's STREAM triad on one pinned core, best of 15 interleaved repeats of
#: each (benchmarks/bench_stencil.py). The median of five runs on 2026-12-02 on this project's
#: build machine (0.804, 0.820, 0.839, 0.867, 0.879; a shared 2-core VM, load average 2.5-2.7):
#: docs/techniques/cerebras-stencil.md "Measured CPU efficiency". One constant for every CPU
#: profile; measured, not fitted to any claim. (The numpy form, eight array passes per point,
#: reached 0.21-0.32, which was this constant until the compiled loop replaced it.)
CPU_STENCIL_EFFICIENCY = 0.839

#: Achieved fraction of HBM bandwidth on the GPUs: 1.0 (no sourced V100 stencil efficiency;
#: the bandwidth roofline, an upper bound of GPU speed).
GPU_STENCIL_EFFICIENCY = 1.0

#: Per-PE achieved rate on the wafer (FLOP/s): 0.86 PFLOP/s over the 600 x 595 PEs of Rocki et
#: al.'s mesh [Rocki20] (BiCGStab, 7-point stencil: a different code; about a third of peak).
#: Used for every Cerebras profile (the WSE-2 is assumed to match it per PE).
WSE_PE_FLOPS = 0.86e15 / (600 * 595)


@dataclass(frozen=True)
class Platform:
    """The figures one variant reads from its profile (SI units), for one dtype.

    ``ranks``: sockets, GPUs or PEs; ``peak``, ``bandwidth``: per rank (bandwidth already
    scaled by the stencil efficiency); ``halo_alpha`` (s per message) and ``halo_beta`` (s/B)
    of the halo path (the halo time is ``alpha + beta * halo_link_bytes``);
    ``io_bandwidth``/``io_latency``: per rank for the streamed copies, ``io_copy_factor`` the
    bytes moved per byte copied (2 for a copy through memory); ``capacity``: bytes per rank; ``pe_cols``/``pe_rows``: the wafer mesh (0 when unknown).
    """

    variant: str
    profile: str
    ranks: int
    peak: float
    bandwidth: float
    halo_alpha: float
    halo_beta: float
    io_bandwidth: float
    io_latency: float
    io_copy_factor: float
    capacity: float
    pe_cols: int = 0
    pe_rows: int = 0
    link: str = ""


def _skip(msg: str):
    from suite.api import Skip

    return Skip(msg)


def _peak(device, dtype: str) -> float:
    pf = dict(device.peak_flops)
    if dtype in pf:
        return float(pf[dtype])
    if "fp32" in pf:  # fp16 on a CPU: computed in fp32 (memory traffic still halves)
        return float(pf["fp32"])
    raise _skip(f"cerebras-stencil: device {device.name!r} has no peak_flops for {dtype} or fp32")


def _alpha_beta(profile, group) -> tuple[float, float]:
    """alpha (s) and beta (s/B) of a p2p over *group* on *profile*, from collective_time (affine)."""
    t1 = collective_time("p2p", 1.0, group, profile).time
    t2 = collective_time("p2p", 2.0, group, profile).time
    beta = t2 - t1
    return t1 - beta, beta


def _mesh_alpha_beta(name: str, per_pe_bw: float, latency: float, pes: int) -> tuple[float, float]:
    """alpha, beta of one PE's halo p2p on the mesh level built from ``[ext.cerebras]``."""
    return _mesh_alpha_beta_of(float(per_pe_bw), float(latency), int(pes))


@functools.lru_cache(maxsize=64)
def _mesh_alpha_beta_of(per_pe_bw: float, latency: float, pes: int) -> tuple[float, float]:
    from suite.api import Profile

    mesh = Profile.model_validate({
        "name": "cerebras-fabric", "kind": "node", "source": "built from [ext.cerebras]",
        "node": {"device": "pe", "devices_per_node": max(2, pes)},
        "network": [{"name": "wse-fabric", "topology": "mesh", "size": max(2, pes),
                     "bandwidth": per_pe_bw, "latency": latency}],
    })
    return _alpha_beta(mesh, Group(ranks_per_node=2, nodes=1))


_EXT_CACHE: dict[tuple, dict] = {}


def _cerebras_ext(profile) -> dict | None:
    """``[ext.cerebras]`` in SI units: validated by the plugin's schema when the profile library
    kept it unvalidated (a library built without the plugins' extension schemas)."""
    raw = (profile.ext or {}).get("cerebras")
    if not raw:
        return None
    if all(not isinstance(v, str) for v in raw.values()):
        return raw
    key = tuple(sorted((k, str(v)) for k, v in raw.items()))
    hit = _EXT_CACHE.get(key)
    if hit is None:
        from pydantic import ValidationError

        from suite_cerebras_stencil.extension import CerebrasExt

        try:
            hit = CerebrasExt.model_validate(dict(raw)).model_dump()
        except ValidationError as exc:
            err = exc.errors()[0]
            raise _skip(f"cerebras-stencil: profile {profile.name}: field ext.cerebras."
                        f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}") from None
        if len(_EXT_CACHE) >= 512:  # bounded: one entry per overridden [ext.cerebras] figure
            _EXT_CACHE.clear()
        _EXT_CACHE[key] = hit
    return hit


def platform_of(variant: str, profile, dtype: str = "fp32") -> Platform:
    """Read the figures *variant* needs from *profile*.

    Raises
    ------
    suite.Skip
        The profile does not suit the variant (one line naming both): ``cpu-2s`` needs a CPU
        device or node; ``gpu-4x`` a node with >= 4 GPUs and an intra-node level; ``wse`` a
        profile with ``[ext.cerebras]``.
    ValueError
        Unknown variant or dtype.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"dtype must be one of {sorted(DTYPE_BYTES)}, got {dtype!r}")
    if profile is None or profile.device is None:
        raise _skip(f"cerebras-stencil: {variant} needs a hardware profile with a device")
    dev = profile.device
    kind = profile.kind
    if variant == "cpu-2s":
        if dev.type != "cpu":
            raise _skip(f"cerebras-stencil: cpu-2s needs a CPU device or node profile, got {dev.type} "
                        f"{kind} profile {profile.name}")
        sockets = profile.devices_per_node if kind == "node" else 1
        eff_bw = dev.memory_bandwidth * CPU_STENCIL_EFFICIENCY
        host = profile.node.host_memory if (profile.node is not None and profile.node.host_memory) else None
        cap = (host / sockets) if host else dev.memory
        # halo planes copied through memory (read + write) at the stencil's bandwidth
        return Platform(variant, profile.name, sockets, _peak(dev, dtype), eff_bw, 0.0, 2.0 / eff_bw,
                        dev.memory_bandwidth, 0.0, 2.0, cap, link="memory")
    if variant == "gpu-4x":
        if kind not in ("node", "cluster") or dev.type != "gpu" or profile.devices_per_node < GPUS:
            have = f"{kind} profile {profile.name}" if kind != "node" else \
                f"node profile {profile.name} with {profile.devices_per_node} {dev.type}s"
            raise _skip(f"cerebras-stencil: gpu-4x needs a node with >= {GPUS} GPUs, got {have}")
        if not profile.network:
            raise _skip(f"cerebras-stencil: gpu-4x needs the node's GPU-GPU level ([[network]]), profile "
                        f"{profile.name} has none")
        alpha, beta = _alpha_beta(profile, Group(ranks_per_node=GPUS, nodes=1))
        hl = dev.host_link
        return Platform(variant, profile.name, GPUS, _peak(dev, dtype), dev.memory_bandwidth * GPU_STENCIL_EFFICIENCY,
                        alpha, beta, hl.bandwidth if hl else 0.0, hl.latency if hl else 0.0, 1.0, dev.memory,
                        link=profile.network[0].name)
    ext = _cerebras_ext(profile)
    if not ext:
        raise _skip(f"cerebras-stencil: wse needs a profile with [ext.cerebras] (the PE mesh and fabric), "
                    f"profile {profile.name} has none")
    cores = int(dev.cores or 0)
    if cores < 1:
        raise _skip(f"cerebras-stencil: wse needs device.cores (the PE count), profile {profile.name} has none")
    cols, rows = int(ext.get("pe_cols") or 0), int(ext.get("pe_rows") or 0)
    if not (cols and rows):
        cols = rows = 0
    pes = cols * rows if cols else cores
    per_pe_bw = float(ext["fabric_bandwidth"]) / cores
    alpha, beta = _mesh_alpha_beta(profile.name, per_pe_bw, float(ext.get("hop_latency") or 0.0), pes)
    io = float(ext.get("io_bandwidth") or 0.0)
    return Platform(variant, profile.name, pes, WSE_PE_FLOPS, dev.memory_bandwidth / cores, alpha, beta,
                    io, 0.0, 1.0, dev.memory / cores, cols, rows, link="wse-fabric")


def wse_block(pf: Platform, nx, ny):
    """Columns per PE and the block shape (bx, by) on the wafer.

    Known mesh: ``bx = ceil(nx / pe_cols)``, ``by = ceil(ny / pe_rows)``, columns ``bx by``.
    Unknown mesh (``ranks = cores`` PEs): columns ``c = ceil(nx ny / PEs)`` and a near-square
    block ``bx = ceil(sqrt c)``, ``by = ceil(c / bx)`` for the halo perimeter.
    """
    nx, ny = np.asarray(nx, dtype=np.int64), np.asarray(ny, dtype=np.int64)
    if pf.pe_cols:
        bx = -(-nx // pf.pe_cols)
        by = -(-ny // pf.pe_rows)
        return bx * by, bx, by
    c = -(-(nx * ny) // pf.ranks)
    bx = np.ceil(np.sqrt(c)).astype(np.int64)
    by = -(-c // bx)
    return c, bx, by


def halo_bytes(kernel: str, bx, by, nz, d: int, variant: str):
    """Bytes one rank SENDS per step (each message counted once).

    Slabs (``cpu-2s``, ``gpu-4x``; bx is unused, by = ny): two planes of every input field,
    ``2 F_in ny nz d``. Blocks (``wse``): ``F_in 2 (bx + by) nz d`` for the four faces plus
    ``nz d`` per corner column the kernel reads (:func:`~suite_cerebras_stencil.kernels.halo_corners`).
    """
    f = FIELDS_IN[kernel]
    if variant == "wse":
        return (f * 2 * (np.asarray(bx) + np.asarray(by)) + len(halo_corners(kernel))) * np.asarray(nz) * d
    return 2 * f * np.asarray(by) * np.asarray(nz) * d


def halo_link_bytes(kernel: str, bx, by, nz, d: int, variant: str):
    """Bytes over the busiest path of one rank's halo per step (the halo time is
    ``alpha + beta * this``).

    * ``cpu-2s``: every plane (:func:`halo_bytes`) through the one memory system;
    * ``gpu-4x``: one side's planes (half of :func:`halo_bytes`): the two neighbours are reached
      over separate links at once;
    * ``wse``: the four faces go over the four links at once; the busiest carries the longer
      face, ``F_in max(bx, by) nz d``, and is charged the corner columns too, two hops each
      (``2 nz d`` per corner).
    """
    f = FIELDS_IN[kernel]
    if variant == "wse":
        return (f * np.maximum(bx, by) + 2 * len(halo_corners(kernel))) * np.asarray(nz) * d
    hb = halo_bytes(kernel, bx, by, nz, d, variant)
    return hb / 2 if variant == "gpu-4x" else hb


def _flops(kernel: str, a, b, c):
    """Vectorised :func:`~suite_cerebras_stencil.kernels.flop_count`."""
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    n = a * b * c
    if kernel == "diffusion7":
        return 8.0 * n
    faces = (a + 1) * b * c + a * (b + 1) * c + a * b * (c + 1)
    return 8.0 * faces + 24.0 * n


@dataclass(frozen=True)
class Prediction:
    """One call's predicted times (s) and counts for one rank (the slowest: the largest block)."""

    variant: str
    compute: float
    halo: float
    io_in: float
    io_out: float
    steps: int
    flops: float
    bytes_moved: float
    halo_bytes: float
    resident_bytes: float
    capacity: float
    ranks_used: int
    columns_per_pe: int

    @property
    def step_time(self) -> float:
        return self.compute + self.halo

    @property
    def total(self) -> float:
        return self.io_in + self.steps * self.step_time + self.io_out

    @property
    def fits(self) -> bool:
        return self.resident_bytes <= self.capacity


def _blocks(pf: Platform, nx: int, ny: int):
    """(a, b, halo-bx, halo-by, ranks used, columns per PE) of the largest rank block."""
    if pf.variant == "wse":
        c, bx, by = wse_block(pf, nx, ny)
        c, bx, by = int(c), int(bx), int(by)
        used = min(pf.ranks, -(-(nx * ny) // c))
        return c, 1, bx, by, used, c  # compute on c columns (a = c, b = 1)
    a = -(-nx // pf.ranks)
    return a, ny, a, ny, min(pf.ranks, nx), 0


def predict(pf: Platform, kernel: str, nx: int, ny: int, nz: int, steps: int = 1, dtype: str = "fp32",
            io: str = "resident") -> Prediction:
    """Predict one call of *kernel* on *pf* (formulas: module docstring).

    Parameters
    ----------
    pf : Platform
        From :func:`platform_of`.
    kernel : {"diffusion7", "advection"}
    nx, ny, nz : int
        Grid points (>= 3 each).
    steps : int
        Stencil steps per call (>= 1).
    dtype : {"fp32", "fp16"}
    io : {"resident", "streamed"}

    Returns
    -------
    Prediction

    Raises
    ------
    ValueError
        Unknown kernel or io, sizes out of range, streamed I/O without an I/O bandwidth.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if io not in ("resident", "streamed"):
        raise ValueError(f"io must be 'resident' or 'streamed', got {io!r}")
    if min(nx, ny, nz) < 3 or steps < 1:
        raise ValueError(f"grid must be >= 3 per axis and steps >= 1, got {nx} x {ny} x {nz}, {steps}")
    d = DTYPE_BYTES[dtype]
    a, b, hbx, hby, used, cols = _blocks(pf, nx, ny)
    if pf.variant == "wse":
        # each PE computes its own block's faces: the block's count, scaled to its c columns
        flops = flop_count(kernel, hbx, hby, nz) * cols / (hbx * hby)
        hb = float(halo_bytes(kernel, hbx, hby, nz, d, "wse"))
        link = float(halo_link_bytes(kernel, hbx, hby, nz, d, "wse"))
        halo = pf.halo_alpha + pf.halo_beta * link if used > 1 else 0.0
    else:
        flops = flop_count(kernel, a, b, nz)
        hb = float(halo_bytes(kernel, hbx, hby, nz, d, pf.variant)) if pf.ranks > 1 else 0.0
        # gpu-4x: two messages of one plane set each (alpha + beta m from collective_time);
        # cpu-2s: the planes copied through memory (alpha 0, beta = 2 / bandwidth)
        link = float(halo_link_bytes(kernel, hbx, hby, nz, d, pf.variant))
        halo = (pf.halo_alpha + pf.halo_beta * link) if hb > 0 else 0.0
    points = a * b * nz
    moved = bytes_per_point(kernel, d) * points
    compute = roofline_time(flops, moved, pf.peak, pf.bandwidth)
    io_in = io_out = 0.0
    if io == "streamed":
        if pf.io_bandwidth <= 0:
            raise ValueError(f"cerebras-stencil: io='streamed' needs an I/O bandwidth; profile {pf.profile} has none "
                             f"({'device.host_link' if pf.variant == 'gpu-4x' else 'ext.cerebras.io_bandwidth'})")
        per_rank = nx * ny * nz if pf.variant == "wse" else points  # sockets/GPUs: their own slab each
        io_in = transfer_time(pf.io_copy_factor * FIELDS_IN[kernel] * per_rank * d, pf.io_bandwidth, pf.io_latency)
        io_out = transfer_time(pf.io_copy_factor * FIELDS_OUT[kernel] * per_rank * d, pf.io_bandwidth, pf.io_latency)
    resident = bytes_per_point(kernel, d) * points  # inputs and outputs; halo buffers not counted
    return Prediction(pf.variant, compute, halo, io_in, io_out, int(steps), float(flops), float(moved), hb,
                      float(resident), float(pf.capacity), int(used), int(cols))


def sweep(pf: Platform, kernel: str, nx, ny, nz, steps=1, dtype: str = "fp32", io: str = "resident") -> dict:
    """:func:`predict` vectorised over arrays of nx, ny, nz, steps (one platform, kernel, dtype, io).

    Returns
    -------
    dict of ndarray
        ``total``, ``compute``, ``halo``, ``io`` (s) and ``fits`` (bool), broadcast shapes.

    Notes
    -----
    The roofline is ``np.maximum(F / peak, B / BW)``; the halo uses the platform's alpha and beta
    (:func:`suite.perf.collective_time` is affine in the bytes of a p2p); a test checks
    :func:`sweep` against :func:`predict` point by point.
    """
    d = DTYPE_BYTES[dtype]
    nx, ny, nz, steps = np.broadcast_arrays(*(np.asarray(x, dtype=np.int64) for x in (nx, ny, nz, steps)))
    if pf.variant == "wse":
        c, bx, by = wse_block(pf, nx, ny)
        flops = _flops(kernel, bx, by, nz) * c / (bx * by)
        points = c * nz
        link = halo_link_bytes(kernel, bx, by, nz, d, "wse")
        used = np.minimum(pf.ranks, -(-(nx * ny) // c))
        halo = np.where(used > 1, pf.halo_alpha + pf.halo_beta * link, 0.0)
        hb = halo_bytes(kernel, bx, by, nz, d, "wse")
        io_pts = nx * ny * nz
    else:
        a = -(-nx // pf.ranks)
        flops = _flops(kernel, a, ny, nz)
        points = a * ny * nz
        hb = halo_bytes(kernel, a, ny, nz, d, pf.variant) * (pf.ranks > 1)
        halo = np.where(hb > 0, pf.halo_alpha + pf.halo_beta * halo_link_bytes(kernel, a, ny, nz, d, pf.variant), 0.0)
        io_pts = points
    moved = bytes_per_point(kernel, d) * points
    compute = np.maximum(flops / pf.peak, moved / pf.bandwidth)
    io_t = np.zeros(nx.shape)
    if io == "streamed":
        for f in (FIELDS_IN[kernel], FIELDS_OUT[kernel]):
            io_t = io_t + pf.io_latency + pf.io_copy_factor * f * io_pts * d / pf.io_bandwidth
    fits = bytes_per_point(kernel, d) * points <= pf.capacity
    return {"total": io_t + steps * (compute + halo), "compute": compute, "halo": halo, "io": io_t, "fits": fits}


# --------------------------------------------------------------------------- evaluate


def _dominant(parts: dict, compute_bound: bool) -> str:
    """The largest term of a call: ``io``, ``halo``, or ``compute`` with its roofline bound."""
    top = max(parts, key=parts.get)
    return f"compute ({'FLOP' if compute_bound else 'memory'}-bound)" if top == "compute" else top


def _kb(x: float) -> str:
    return f"{x / 1e3:.0f} KB"


def evaluate(scenario):
    """Model fidelity: one call of the scenario's kernel on its variant and profile.

    Parameters
    ----------
    scenario : suite.Scenario
        ``params``: ``kernel``, ``nx``, ``ny``, ``nz``, ``steps``, ``dtype``, ``io``.

    Returns
    -------
    suite.Result
        ``time_per_call`` (s), ``step_time`` (s, compute + halo of one step), ``compute_time``,
        ``halo_time``, ``io_time`` (s per call), ``points_per_s``, ``flops_per_rank``,
        ``bytes_per_rank`` (compulsory, per step), ``halo_bytes`` (B sent per rank per step),
        ``resident_bytes`` and ``capacity_bytes`` (per rank), ``ranks``, ``columns_per_pe``.

    Raises
    ------
    suite.Skip
        The profile does not suit the variant, or the grid does not fit (one line, e.g.
        ``cerebras-stencil: advection 2000 x 2000 x 1000 fp32 needs 120 KB per PE,
        cerebras-cs-2 PEs hold 47 KB``).
    """
    from suite.api import Result

    p = scenario.params
    kernel, dtype, io = p["kernel"], p["dtype"], p["io"]
    nx, ny, nz, steps = int(p["nx"]), int(p["ny"]), int(p["nz"]), int(p["steps"])
    variant = scenario.variant
    pf = platform_of(variant, scenario.profile, dtype)
    if io == "streamed" and pf.io_bandwidth <= 0:
        where = "device.host_link" if variant == "gpu-4x" else "ext.cerebras.io_bandwidth"
        raise _skip(f"cerebras-stencil: io=streamed on {variant} needs {where}; profile {pf.profile} has none")
    pr = predict(pf, kernel, nx, ny, nz, steps, dtype, io)
    if not pr.fits:
        unit = {"wse": "PE", "gpu-4x": "GPU", "cpu-2s": "socket"}[variant]
        need = _kb(pr.resident_bytes) if variant == "wse" else f"{pr.resident_bytes / 1e9:.1f} GB"
        have = _kb(pr.capacity) if variant == "wse" else f"{pr.capacity / 1e9:.1f} GB"
        raise _skip(f"cerebras-stencil: {kernel} {nx} x {ny} x {nz} {dtype} needs {need} per {unit}, "
                    f"{pf.profile} {unit}s hold {have}")
    res = Result()
    total = pr.total
    res.add("time_per_call", total, "s", "lower")
    res.add("step_time", pr.step_time, "s", "lower")
    res.add("compute_time", pr.compute, "s", "lower")
    res.add("halo_time", pr.halo, "s", "lower")
    res.add("io_time", pr.io_in + pr.io_out, "s", "lower")
    res.add("points_per_s", nx * ny * nz * steps / total, "1/s", "higher")
    res.add("flops_per_rank", pr.flops, "FLOP", "none")
    res.add("bytes_per_rank", pr.bytes_moved, "B", "none")
    res.add("halo_bytes", pr.halo_bytes, "B", "lower")
    res.add("resident_bytes", pr.resident_bytes, "B", "none")
    res.add("capacity_bytes", pr.capacity, "B", "none")
    res.add("ranks", pr.ranks_used, "1", "none")
    res.add("columns_per_pe", pr.columns_per_pe, "1", "none")
    res.artifacts["setup"] = _setup(variant, pf, pr, kernel, [nx, ny, nz], steps, dtype, io)
    return res


def _setup(variant: str, pf: Platform, pr: Prediction, kernel: str, grid: list[int], steps: int, dtype: str, io: str) -> dict:
    """The ``setup`` artifact of :func:`evaluate`: the case, the platform's rates (peak FLOP/s and
    stencil bandwidth per rank, halo alpha (s) and beta (s/B), I/O bandwidth), the dominant part of
    the call time (compute, halo or I/O over *steps*) and whether one step is compute- or memory-bound
    (roofline: FLOPs / peak against compulsory bytes / bandwidth)."""
    parts = {"compute": steps * pr.compute, "halo": steps * pr.halo, "io": pr.io_in + pr.io_out}
    return {
        "variant": variant, "profile": pf.profile, "kernel": kernel, "grid": grid, "steps": steps,
        "dtype": dtype, "io": io, "ranks": pf.ranks, "peak_flops_per_rank": pf.peak,
        "stencil_bandwidth_per_rank": pf.bandwidth, "halo_path": pf.link,
        "halo_alpha_s": pf.halo_alpha, "halo_beta_s_per_B": pf.halo_beta, "io_bandwidth": pf.io_bandwidth,
        "dominant": _dominant(parts, pr.flops / pf.peak >= pr.bytes_moved / pf.bandwidth),
        "bound": "compute" if pr.flops / pf.peak >= pr.bytes_moved / pf.bandwidth else "memory",
    }
