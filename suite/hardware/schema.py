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

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from suite.hardware.units import BandwidthQ, BytesQ, FlopRateQ, FrequencyQ, MoneyQ, PerByteTimeQ, PowerQ, TimeQ

__all__ = [
    "Link",
    "Device",
    "Node",
    "CollectiveFit",
    "NetworkLevel",
    "Reliability",
    "Cost",
    "ProfileMeta",
    "ProfileDoc",
]

_STRICT = ConfigDict(extra="forbid", frozen=True)


class Link(BaseModel):
    """A point-to-point link, e.g. the host link (PCIe) of a device."""

    model_config = _STRICT
    name: str = ""
    bandwidth: BandwidthQ  # B/s, per direction
    latency: TimeQ = 0.0  # s


class Device(BaseModel):
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
    cores: int | None = None  # SMs / CUs / CPU cores
    clock: FrequencyQ | None = None  # Hz
    tdp: PowerQ | None = None  # W
    # achieved fraction of peak vs operation size: {"gemm": [[flops, fraction], ...]}
    efficiency: dict[str, list[tuple[float, float]]] | None = None

    def flops(self, dtype: str = "fp32") -> float:
        """Peak FLOP/s for *dtype*; falls back fp32 -> tf32 -> fp16 only when asked dtype absent."""
        if dtype in self.peak_flops:
            return self.peak_flops[dtype]
        from suite.errors import ProfileError

        raise ProfileError(f"device {self.name or self.type!r}: no peak_flops for dtype {dtype!r} (has {sorted(self.peak_flops)})")


class Node(BaseModel):
    """A server: devices of one kind plus host memory."""

    model_config = _STRICT
    device: str  # reference by profile name; resolved into Profile.device
    devices_per_node: int = Field(ge=1)
    host_memory: BytesQ | None = None
    cpu: str | None = None  # reference to a cpu device profile (optional)
    nics_per_node: int | None = None


class CollectiveFit(BaseModel):
    """A published alpha-beta fit of one collective at one worker count: T(m) = alpha + beta*m."""

    model_config = _STRICT
    collective: str = "allreduce"
    workers: int = Field(ge=1)
    alpha: TimeQ  # s, start-up time
    beta: PerByteTimeQ  # s/B, time per byte
    source: str = ""
    verified: bool = False


class NetworkLevel(BaseModel):
    """One level of the network, innermost first (NVLink, then the NIC fabric)."""

    model_config = _STRICT
    name: str
    topology: Literal["switch", "ring", "fat-tree", "torus", "dragonfly", "bus", "mesh", "fully-connected"]
    size: int = Field(ge=1)  # endpoints at this level (devices for the inner, nodes for outer)
    bandwidth: BandwidthQ  # B/s per direction per endpoint
    latency: TimeQ = 0.0  # s, per message
    fits: list[CollectiveFit] = Field(default_factory=list)


class Reliability(BaseModel):
    model_config = _STRICT
    device_mtbf: TimeQ | None = None  # s
    node_mtbf: TimeQ | None = None  # s
    restart_time: TimeQ | None = None  # s, to restart a job after a failure
    repair_time: TimeQ | None = None  # s, to replace/repair a failed device or node
    checkpoint_bandwidth: BandwidthQ | None = None  # B/s, to persistent storage


class Cost(BaseModel):
    model_config = _STRICT
    node_hour: MoneyQ | None = None  # USD per node-hour
    power: PowerQ | None = None  # W per node


class ProfileMeta(BaseModel):
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


class ProfileDoc(BaseModel):
    """A whole profile file after unit parsing (before references are resolved)."""

    model_config = _STRICT
    profile: ProfileMeta
    device: Device | None = None
    node: Node | None = None
    nodes: int | None = Field(default=None, ge=1)  # cluster: number of nodes
    network: list[NetworkLevel] = Field(default_factory=list)
    reliability: Reliability | None = None
    cost: Cost | None = None
    sources: dict[str, str] = Field(default_factory=dict)  # field path -> source of that figure
    measured: dict[str, Any] = Field(default_factory=dict)  # calibration: how each figure was measured
    ext: dict[str, Any] = Field(default_factory=dict)
