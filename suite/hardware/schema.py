"""Schema of a hardware profile, in SI units after loading.

Every quantity in a TOML profile is a string with a unit (``"80 GiB"``, ``"400 Gbit/s"``,
``"2 us"``); the loader parses it with pint and stores a float in SI base units:

==================  ==========  =====================================
field kind          stored as   examples accepted
==================  ==========  =====================================
memory / size       bytes (B)   "80 GiB", "40 MiB", "12 GB"
bandwidth           B/s         "2039 GB/s", "400 Gbit/s", "10 Gbps"
compute rate        FLOP/s      "312 TFLOP/s"
time                s           "2 us", "50000 h"
per-byte time       s/B         "0.8 ns/B"
power               W           "400 W"
money               USD         "32 USD"
==================  ==========  =====================================

The attribute names below are the public contract that plugins read (``profile.device.memory``,
``profile.network[0].bandwidth``); do not rename them.
"""

from __future__ import annotations

import math

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from suite.hardware.units import BandwidthQ, BytesQ, FlopRateQ, FrequencyQ, MoneyQ, PerByteTimeQ, PowerQ, TimeQ

__all__ = [
    "Link",
    "Device",
    "Node",
    "CollectiveFit",
    "NetworkLevel",
    "Communication",
    "Reliability",
    "Cost",
    "ProfileMeta",
    "ProfileDoc",
]

_STRICT = ConfigDict(extra="forbid", frozen=True)


def _check_curves(curves: dict[str, Any] | None, x: str) -> None:
    """Check *curves* (name -> ``[[x, fraction], ...]``, an efficiency table; *x* names the
    abscissa, ``"size"`` or ``"seconds"``): every curve has at least one point, finite abscissas > 0
    in increasing order and fractions in (0, 1].

    Raises
    ------
    ValueError
        "expected ..., got ..." naming the curve. A NaN or infinite abscissa passed the order check
        (every comparison with NaN is false) and bent the interpolation: [[1e9, 0.3], [inf, 0.8]]
        stayed at 0.3 for every size, [[1e9, 0.3], [nan, 0.8]] jumped to 0.8 past 1e9.
    """
    for name, curve in (curves or {}).items():
        xs = [s for s, _f in curve]
        if not curve or not all(math.isfinite(a) and a > 0 for a in xs) or xs != sorted(xs) or len(set(xs)) != len(xs):
            raise ValueError(f"expected [[{x}, fraction], ...] with at least one point, each {x} finite and > 0, in "
                             f"increasing order for {name!r}, got {[list(p) for p in curve]}")
        if any(not 0 < f <= 1 for _s, f in curve):
            raise ValueError(f"expected fractions in (0, 1] for {name!r}, got {[f for _s, f in curve]}")


class _Frozen(BaseModel):
    """A profile table: frozen, and a write says so in the suite's terms (pydantic's own error
    for a frozen instance is a ValidationError naming no field)."""

    def __setattr__(self, name: str, value: object) -> None:
        from suite.frozen import ImmutableError

        raise ImmutableError(f"{type(self).__name__}.{name} is read-only: profiles are immutable (derive one "
                             f"with profile.with_overrides({{...}}) or model_copy(update=...))")


class Link(_Frozen):
    """A point-to-point link, e.g. the host link (PCIe) of a device."""

    model_config = _STRICT
    name: str = ""
    bandwidth: BandwidthQ  # B/s, per direction
    latency: TimeQ = 0.0  # s


#: dtype names accepted as ``peak_flops`` keys (dense rates; ``fp64_tensor`` = FP64 on tensor cores)
PEAK_FLOPS_DTYPES = ("fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8", "int4")


class Device(_Frozen):
    """One compute device (GPU, CPU socket, TPU chip, wafer)."""

    model_config = _STRICT
    type: Literal["gpu", "cpu", "tpu", "wafer", "fpga", "accelerator"]
    name: str = ""
    vendor: str = ""
    memory: BytesQ  # B, device (HBM/GDDR/DRAM) capacity
    memory_bandwidth: BandwidthQ  # B/s
    on_chip_memory: BytesQ | None = None  # B (L2 / SRAM)
    peak_flops: dict[str, FlopRateQ]  # dtype -> FLOP/s (dense, no sparsity)
    host_link: Link | None = None
    # SMs / CUs / CPU cores, >= 1 (0 was read as one core, and a negative count reached the models)
    cores: int | None = Field(default=None, ge=1)
    clock: FrequencyQ | None = None  # Hz
    tdp: PowerQ | None = None  # W
    # achieved fraction of peak vs operation size: {"gemm_fp32": [[flops, fraction], ...]}
    efficiency: dict[str, tuple[tuple[float, float], ...]] | None = None

    @field_validator("peak_flops")
    @classmethod
    def _check_dtypes(cls, v: dict[str, float]) -> dict[str, float]:
        bad = sorted(set(v) - set(PEAK_FLOPS_DTYPES))
        if bad:
            raise ValueError(f"expected dtype keys among {list(PEAK_FLOPS_DTYPES)}, got {bad[0]!r}")
        return v

    @field_validator("efficiency")
    @classmethod
    def _check_efficiency(cls, v: dict[str, list[tuple[float, float]]] | None
                          ) -> dict[str, list[tuple[float, float]]] | None:
        _check_curves(v, "size")
        return v

    def efficiency_at(self, curve: str, size: float) -> float | None:
        """Achieved fraction of peak for an operation of *size* on efficiency curve *curve*.

        Linear interpolation in log(size) between the curve's points, clamped to the first and last
        point outside them. Returns None when the device has no such curve.

        Parameters
        ----------
        curve : str
            e.g. ``"gemm_fp32"`` (calibrated profiles record ``gemm_fp64`` and ``gemm_fp32``,
            size in FLOP per operation).
        size : float
            Operation size in the curve's unit (> 0).
        """
        pts = (self.efficiency or {}).get(curve)
        if not pts:
            return None
        import math

        if size <= pts[0][0]:
            return pts[0][1]
        if size >= pts[-1][0]:
            return pts[-1][1]
        for (s0, f0), (s1, f1) in zip(pts, pts[1:]):
            if s0 <= size <= s1:
                w = (math.log(size) - math.log(s0)) / (math.log(s1) - math.log(s0))
                return f0 + w * (f1 - f0)
        return pts[-1][1]  # pragma: no cover - unreachable for sorted points

    def first_peak(self, *dtypes: str) -> tuple[str, float]:
        """``(dtype, FLOP/s)`` of the first of *dtypes* whose peak the device declares (mixed
        precision: ``first_peak("bf16", "fp16", "fp32")``: bf16 where there is one, else fp16,
        else fp32).

        Raises
        ------
        ProfileError
            None of *dtypes* has a peak (the declared ones are listed).
        """
        for d in dtypes:
            v = self.peak_flops.get(d)
            if v:
                return d, float(v)
        from suite.errors import ProfileError

        raise ProfileError(f"device {self.name or self.type!r}: field peak_flops: expected one of {list(dtypes)}, "
                           f"got {sorted(self.peak_flops)}")

    def flops(self, dtype: str = "fp32") -> float:
        """Peak FLOP/s for *dtype*; falls back fp32 -> tf32 -> fp16 only when asked dtype absent."""
        if dtype in self.peak_flops:
            return self.peak_flops[dtype]
        from suite.errors import ProfileError

        raise ProfileError(f"device {self.name or self.type!r}: no peak_flops for dtype {dtype!r} (has {sorted(self.peak_flops)})")


class Node(_Frozen):
    """A server: devices of one kind plus host memory."""

    model_config = _STRICT
    device: str  # reference by profile name; resolved into Profile.device
    devices_per_node: int = Field(ge=1)
    host_memory: BytesQ | None = None
    cpu: str | None = None  # reference to a cpu device profile (optional)
    # NICs of the outermost level (absent: one); 0 was read as 1 and a negative count multiplied the
    # level's bandwidth by a negative number, so a count >= 1
    nics_per_node: int | None = Field(default=None, ge=1)


class CollectiveFit(_Frozen):
    """A published alpha-beta fit of one collective at one worker count: T(m) = alpha + beta*m."""

    model_config = _STRICT
    collective: str = "allreduce"
    workers: int = Field(ge=1)
    alpha: TimeQ  # s, start-up time
    beta: PerByteTimeQ  # s/B, time per byte
    source: str = ""
    verified: bool = False


class NetworkLevel(_Frozen):
    """One level of the network, innermost first (NVLink, then the NIC fabric)."""

    model_config = _STRICT
    name: str
    topology: Literal["switch", "ring", "fat-tree", "torus", "dragonfly", "bus", "mesh", "fully-connected"]
    size: int = Field(ge=1)  # endpoints at this level (devices for the inner, nodes for outer)
    bandwidth: BandwidthQ  # B/s per direction per endpoint
    latency: TimeQ = 0.0  # s, per message (per hop on ring / torus / mesh)
    fits: tuple[CollectiveFit, ...] = ()
    # optional topology detail read by suite.perf.network.collective (absent: the defaults below)
    oversubscription: float = Field(default=1.0, ge=1.0)  # fat-tree down:up taper; dragonfly global taper
    leaf_size: int | None = Field(default=None, ge=1)  # endpoints per fat-tree leaf / dragonfly group (1)
    dims: tuple[int, ...] | None = None  # torus / mesh shape (default: the most square 2-D factorization)
    # read by the NCCL model (suite.perf.network.nccl); absent: the defaults there
    link: Literal["nvlink", "pcie", "net"] | None = None  # link kind (NCCL's per-hop latencies); default by position
    efficiency: float | None = Field(default=None, gt=0, le=1)  # achieved fraction of bandwidth, bulk transfers
    reduction: Literal["nvls", "sharp"] | None = None  # in-network reduction the level offers
    reduction_bandwidth: BandwidthQ | None = None  # B/s, algorithm bandwidth of its in-network all-reduce
    # PCIe path between two devices of the level as `nvidia-smi topo -m` names it (NODE = PHB): NCCL's
    # P2P-or-SHM choice; read by suite.perf.network.nccl (None: today's behaviour)
    path: Literal["PIX", "PXB", "PHB", "SYS"] | None = None

    @field_validator("oversubscription")
    @classmethod
    def _finite_taper(cls, v: float) -> float:
        # inf gave a 0 B/s bisection and a division by zero in every collective crossing the level
        if v == float("inf"):
            raise ValueError(f"expected a finite number >= 1, got {v}")
        return v

    @field_validator("dims")
    @classmethod
    def _positive_extents(cls, v: tuple[int, ...] | None) -> tuple[int, ...] | None:
        # a 0 or negative extent was dropped like an extent of 1: [0, 8] was priced as a 1-D 8
        if v is not None and any(d < 1 for d in v):
            raise ValueError(f"expected extents >= 1 (a torus / mesh shape like [4, 4]), got {list(v)}")
        return v

    @field_validator("reduction_bandwidth")
    @classmethod
    def _positive_reduction_bw(cls, v: float | None) -> float | None:
        if v is not None and not v > 0:
            raise ValueError(f"expected a bandwidth > 0, got {v}")
        return v


class Communication(_Frozen):
    """The ``[communication]`` table: the library a profile's collectives run on and its
    software constants (suite.perf.network.nccl, suite.perf.network.collective)."""

    model_config = _STRICT
    library: Literal["nccl", "mpi", "gloo", "ps"] | None = None  # default: nccl for GPU profiles, else mpi
    launch_overhead: TimeQ = 0.0  # s, software latency added to every collective (beyond NCCL's own)
    # per family ("ring", "nvls", "multi-node"): [[ideal duration m / algbw in s, fraction], ...]
    efficiency: dict[str, tuple[tuple[float, float], ...]] | None = None

    @field_validator("efficiency")
    @classmethod
    def _check_curves(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        _check_curves(v, "seconds")
        return v


class Reliability(_Frozen):
    model_config = _STRICT
    # s, > 0: a failure simulation read 0 as "never fails" (the rate of an infinite MTBF)
    device_mtbf: TimeQ | None = Field(default=None, gt=0)
    node_mtbf: TimeQ | None = None  # s
    restart_time: TimeQ | None = None  # s, to restart a job after a failure
    repair_time: TimeQ | None = None  # s, to replace/repair a failed device or node
    checkpoint_bandwidth: BandwidthQ | None = None  # B/s, to persistent storage


class Cost(_Frozen):
    model_config = _STRICT
    node_hour: MoneyQ | None = None  # USD per node-hour
    power: PowerQ | None = None  # W per node


class SameAs(_Frozen):
    """``same_as = { name = "...", reason = "..." }`` in ``[profile]``: this profile's figures are
    intentionally those of another (an export variant with the same silicon), so ``suite hardware
    validate`` does not flag the two as a copy under another name."""

    model_config = _STRICT
    name: str = Field(min_length=1)
    reason: str = Field(min_length=1)


class ProfileMeta(_Frozen):
    """The ``[profile]`` table."""

    model_config = _STRICT
    name: str
    kind: Literal["device", "node", "cluster", "measured"]
    source: str = ""
    verified: bool = False
    description: str = ""
    vendor: str = ""
    tags: list[str] = Field(default_factory=list)
    extends: str | None = None
    same_as: SameAs | None = None


class ProfileDoc(_Frozen):
    """A whole profile file after unit parsing (before references are resolved)."""

    model_config = _STRICT
    profile: ProfileMeta
    device: Device | None = None
    node: Node | None = None
    nodes: int | None = Field(default=None, ge=1)  # cluster: number of nodes
    network: list[NetworkLevel] = Field(default_factory=list)
    communication: Communication | None = None
    reliability: Reliability | None = None
    cost: Cost | None = None
    sources: dict[str, str] = Field(default_factory=dict)  # field path -> source of that figure
    measured: dict[str, Any] = Field(default_factory=dict)  # calibration: how each figure was measured
    ext: dict[str, Any] = Field(default_factory=dict)
