"""Figures derived from a resolved profile, and a flat view of its fields for display and diff.

Everything here is arithmetic on the profile's own figures; each derived figure carries its
formula so a reader can check it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from suite.hardware.field_errors import _field_at
from suite.hardware.profile import Profile
from suite.hardware.units import format_quantity

__all__ = ["Field", "Derived", "flatten", "derived", "endpoint_bandwidth", "bisection_bandwidth"]


@dataclass(frozen=True)
class Field:
    """One leaf of a profile: dotted path, SI value, quantity dimension (None when not a quantity)."""

    path: str
    value: Any
    dimension: str | None

    @property
    def text(self) -> str:
        if self.dimension and isinstance(self.value, (int, float)) and not isinstance(self.value, bool):
            return format_quantity(float(self.value), self.dimension)
        if isinstance(self.value, (list, tuple)):
            return ", ".join(map(str, self.value))
        return str(self.value)


@dataclass(frozen=True)
class Derived:
    """A figure computed from the profile: name, value (SI or plain), dimension, formula."""

    name: str
    value: float
    dimension: str | None
    formula: str

    @property
    def text(self) -> str:
        if self.dimension:
            return format_quantity(self.value, self.dimension)
        return f"{self.value:.4g}"


# "cpu" and "groups" are other profiles' devices resolved by reference (node.cpu, [ext.mix]): their
# figures and sources belong to those profiles and are listed there
_SKIP = {"sources", "measured", "path", "description", "source", "overrides", "tags", "name", "kind", "verified",
         "vendor", "cpu", "groups"}


def _dimension(path: tuple[Any, ...]) -> str | None:
    from suite.hardware.units import dimension_of

    walked = _field_at(Profile, tuple(p for p in path))
    if walked is None:
        return None
    _parent, ann, meta = walked
    dim = dimension_of(meta)
    if dim:
        return dim
    from suite.hardware.field_errors import _unwrap

    for a in _unwrap(ann):
        md = getattr(a, "__metadata__", None)
        if md and dimension_of(list(md)):
            return dimension_of(list(md))
    return None


def flatten(profile: Profile, include_meta: bool = False) -> list[Field]:
    """Every non-empty leaf of *profile* as a :class:`Field` (paths like ``network.1.bandwidth``).

    Parameters
    ----------
    profile : Profile
    include_meta : bool
        Also list prose fields (source, description, tags).
    """
    data = profile.model_dump(mode="python")
    out: list[Field] = []

    def walk(obj: Any, path: tuple[Any, ...]) -> None:
        if obj is None:
            return
        if isinstance(obj, BaseModel):
            obj = obj.model_dump(mode="python")
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, path + (k,))
            return
        if isinstance(obj, (list, tuple)) and obj and isinstance(obj[0], (dict, BaseModel)):
            for i, v in enumerate(obj):
                walk(v, path + (i,))
            return
        if (isinstance(obj, (list, tuple)) and not obj) or obj == "":
            return
        out.append(Field(".".join(map(str, path)), obj, _dimension(path)))

    for key, value in data.items():
        if key in _SKIP and not (include_meta and key in ("source", "description", "tags", "name", "kind", "vendor",
                                                          "verified")):
            continue
        if key == "ext":
            for name, table in (value or {}).items():
                walk(table, ("ext", name))
            continue
        walk(value, (key,))
    return out


def endpoint_bandwidth(profile: Profile, level: int = -1) -> float:
    """Injection bandwidth of one endpoint of network *level* (B/s per direction).

    For the outermost level of a node or cluster, an endpoint is a node, which injects through
    ``nics_per_node`` NICs of ``bandwidth`` each (one NIC when not given); for an inner level it
    is one device.
    """
    lvl = profile.network[level]
    outer = (level % len(profile.network)) == len(profile.network) - 1
    if outer and profile.kind == "cluster" and profile.node is not None:
        return lvl.bandwidth * (profile.node.nics_per_node or 1)
    return lvl.bandwidth


def bisection_bandwidth(profile: Profile, level: int = -1) -> float | None:
    """Bisection bandwidth (B/s per direction) of network *level*, where the topology fixes it.

    ``switch`` and ``fat-tree`` are taken as non-blocking: half the endpoints times the endpoint
    bandwidth. ``fully-connected`` splits each endpoint's bandwidth evenly over its n - 1 direct
    links, so (n/2)^2 links of bw/(n-1) cross the cut. A ``ring`` of size > 2 is cut in two places: 2 x link bandwidth.
    A ``bus`` is one shared link. ``torus``, ``mesh`` and ``dragonfly`` depend on dimensions or
    global-link taper the schema does not record: None.
    """
    lvl = profile.network[level]
    ep = endpoint_bandwidth(profile, level)
    if lvl.size < 2:
        return None
    if lvl.topology in ("switch", "fat-tree"):
        return (lvl.size // 2) * ep
    if lvl.topology == "fully-connected":
        half = lvl.size // 2
        return half * (lvl.size - half) * ep / (lvl.size - 1)
    if lvl.topology == "ring":
        return 2 * lvl.bandwidth if lvl.size > 2 else lvl.bandwidth
    if lvl.topology == "bus":
        return lvl.bandwidth
    return None


def derived(profile: Profile) -> list[Derived]:
    """Figures derived from *profile*: machine balance, totals, aggregate and bisection bandwidth.

    Notes
    -----
    * machine balance (FLOP/B) = peak FLOP/s / memory bandwidth (roofline ridge point;
      Williams, Waterman, Patterson, "Roofline", CACM 2009), for fp32 and for the fastest dtype;
    * devices total = nodes x devices per node;
    * peak of the whole profile = devices x per-device peak;
    * aggregate injection bandwidth = nodes x NICs per node x NIC bandwidth (outer level);
    * bisection bandwidth: see :func:`bisection_bandwidth`.
    """
    out: list[Derived] = []
    dev = profile.device
    if dev is not None and dev.peak_flops and dev.memory_bandwidth > 0:
        if "fp32" in dev.peak_flops:
            out.append(Derived("machine_balance.fp32", dev.peak_flops["fp32"] / dev.memory_bandwidth, None,
                               "peak_flops.fp32 / memory_bandwidth (FLOP/B)"))
        fastest = max(dev.peak_flops, key=lambda k: dev.peak_flops[k])
        if fastest != "fp32" and dev.peak_flops[fastest] != dev.peak_flops.get("fp32"):
            out.append(Derived(f"machine_balance.{fastest}", dev.peak_flops[fastest] / dev.memory_bandwidth, None,
                               f"peak_flops.{fastest} (fastest dtype) / memory_bandwidth (FLOP/B)"))
        if dev.host_link is not None:
            out.append(Derived("host_link_balance", dev.memory_bandwidth / dev.host_link.bandwidth, None,
                               "memory_bandwidth / host_link.bandwidth (how much slower the host link is)"))
    n = profile.num_devices
    if profile.kind in ("node", "cluster"):
        out.append(Derived("devices_total", float(n), None,
                           "nodes x devices_per_node" if profile.kind == "cluster" else "devices_per_node"))
        if dev is not None and dev.peak_flops:
            fastest = max(dev.peak_flops, key=lambda k: dev.peak_flops[k])
            out.append(Derived(f"peak_total.{fastest}", n * dev.peak_flops[fastest], "flop_rate",
                               f"devices_total x peak_flops.{fastest}"))
            out.append(Derived("memory_total", n * dev.memory, "bytes", "devices_total x device.memory"))
    if profile.network:
        for i, lvl in enumerate(profile.network):
            b = bisection_bandwidth(profile, i)
            if b is not None:
                out.append(Derived(f"network.{i}.bisection_bandwidth", b, "bandwidth",
                                   f"{lvl.topology} of {lvl.size}: " + ("(n/2)^2 links of bw/(n-1)" if lvl.topology == "fully-connected" else "n/2 x endpoint bandwidth, non-blocking assumed" if lvl.topology in ("switch", "fat-tree") else "cut links x bandwidth")))
        if profile.kind == "cluster" and profile.node is not None:
            nics = profile.node.nics_per_node or 1
            out.append(Derived("network.-1.aggregate_injection", profile.num_nodes * nics * profile.network[-1].bandwidth,
                               "bandwidth", f"nodes x nics_per_node ({nics}) x network.-1.bandwidth"))
            if dev is not None and "fp32" in dev.peak_flops:
                per_node = nics * profile.network[-1].bandwidth
                out.append(Derived("network_balance.fp32",
                                   profile.devices_per_node * dev.peak_flops["fp32"] / per_node, None,
                                   "devices_per_node x peak_flops.fp32 / node injection bandwidth (FLOP/B)"))
    return out
