"""Figures derived from a resolved profile, and a flat view of its fields for display and diff.

Everything here is arithmetic on the profile's own figures; each derived figure carries its
formula so a reader can check it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from suite.hardware.field_errors import _field_at
from suite.hardware.profile import Profile
from suite.hardware.units import format_quantity

__all__ = ["Field", "Derived", "flatten", "derived", "endpoint_bandwidth", "bisection_bandwidth",
           "torus_shape"]


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
    return _endpoint(profile, level)[0]


def _endpoint(profile: Profile, level: int) -> tuple[float, str]:
    """(:func:`endpoint_bandwidth`, how the formulas of ``hardware show`` name it): ``"endpoint
    bandwidth"``, or ``"8 NICs x bandwidth"`` where a cluster's outer level multiplies in its NICs."""
    lvl = profile.network[level]
    outer = (level % len(profile.network)) == len(profile.network) - 1
    if outer and profile.kind == "cluster" and profile.node is not None:
        nics = profile.node.nics_per_node or 1
        return lvl.bandwidth * nics, f"{nics} NIC{'s' if nics != 1 else ''} x bandwidth"
    return lvl.bandwidth, "endpoint bandwidth"


def torus_shape(level: Any) -> tuple[int, ...]:
    """Extents of a ``torus`` / ``mesh`` network *level* (a :class:`NetworkLevel`): its ``dims``,
    else the most square 2-D factorisation of ``size`` (a prime size stays 1-D); extents of 1 are
    dropped, ``(1,)`` for a single endpoint. ``size`` is read only when ``dims`` is absent."""
    dims = getattr(level, "dims", None)
    if not dims:
        n = level.size
        a = math.isqrt(n)
        while a > 1 and n % a:
            a -= 1
        dims = (a, n // a) if a > 1 else (n,)
    return tuple(d for d in dims if d > 1) or (1,)


def _bisection(profile: Profile, level: int) -> tuple[float, str] | None:
    """(bisection bandwidth in B/s per direction, its formula) of network *level*; None where the
    topology does not fix it (one endpoint, or ``dims`` that do not multiply to ``size``)."""
    lvl = profile.network[level]
    (ep, bw), n, topo = _endpoint(profile, level), lvl.size, lvl.topology
    if n < 2:
        return None
    head = f"{topo} of {n}: "
    if topo == "switch":
        return (n // 2) * ep, head + f"n/2 x {bw}, non-blocking"
    if topo in ("fat-tree", "dragonfly"):
        if lvl.leaf_size is not None and n <= lvl.leaf_size:
            return (n // 2) * ep, head + f"n/2 x {bw} (one {_UNIT[topo]} of {lvl.leaf_size}: taper not crossed)"
        o = lvl.oversubscription
        return (n // 2) * ep / o, head + f"n/2 x {bw} / oversubscription {o:g}" + (
            " (non-blocking)" if o == 1 else "")
    if topo == "fully-connected":
        half = n // 2
        return half * (n - half) * ep / (n - 1), head + f"(n/2)^2 links of {bw}/(n-1)"
    if topo in ("ring", "torus", "mesh"):
        shape = (n,) if topo == "ring" else torus_shape(lvl)
        if math.prod(shape) != n:
            return None
        cuts, rows, k = (1 if topo == "mesh" else 2), n // max(shape), len(shape)
        where = "" if topo == "ring" else "x".join(map(str, shape)) + ", "
        return cuts * rows * ep / (2 * k), head + f"{where}{cuts * rows} links of {bw}/{2 * k} cut"
    if topo == "bus":
        return lvl.bandwidth, head + "one shared medium"
    return None


#: what a fat-tree's / a dragonfly's ``leaf_size`` counts
_UNIT = {"fat-tree": "leaf", "dragonfly": "group"}


def bisection_bandwidth(profile: Profile, level: int = -1) -> float | None:
    """Bisection bandwidth (B/s per direction) of network *level*, from the fields the schema records.

    ``switch``: non-blocking, half the endpoints times the endpoint bandwidth
    (:func:`endpoint_bandwidth`). ``fat-tree`` / ``dragonfly``: the same divided by
    ``oversubscription`` (a fat-tree leaf's down:up taper [Leiserson85]; a dragonfly's global-link
    taper, the share of an endpoint's bandwidth that reaches another group [Kim08]), untapered
    when one leaf / group of ``leaf_size`` holds all ``size`` endpoints. ``fully-connected`` splits
    each endpoint's bandwidth evenly over its n - 1 direct links, so (n/2)^2 links of bw/(n-1) cross
    the cut. ``ring`` / ``torus`` / ``mesh`` of extents k_1 x ... x k_d (:func:`torus_shape`; a ring
    is 1-D): the cut across the largest extent k crosses N/k rows, each at 2 links on a torus or ring
    (its wrap-around) and 1 on a mesh, a link carrying bw/(2d) (an endpoint's bandwidth split over
    its 2d neighbour links, as suite.perf.network prices it); for a k-ary d-cube that is Dally &
    Towles' channel bisection 4N/k (torus) and 2N/k (mesh) counted over both directions
    (W. J. Dally, B. Towles, *Principles and Practices of Interconnection Networks*, Morgan
    Kaufmann 2004, sec. 3.3 and ch. 5). An odd largest extent leaves the halves one row apart.
    A ``bus`` is one shared medium of ``bandwidth``.

    Returns None for a level of one endpoint, or a torus / mesh whose ``dims`` do not multiply to
    its ``size``. [Leiserson85] C. Leiserson, "Fat-trees", IEEE Trans. Computers 1985; [Kim08] J.
    Kim, W. Dally, S. Scott, D. Abts, "Technology-driven, highly-scalable dragonfly topology", ISCA 2008.
    """
    got = _bisection(profile, level)
    return None if got is None else got[0]


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
        for i in range(len(profile.network)):
            b = _bisection(profile, i)
            if b is not None:
                out.append(Derived(f"network.{i}.bisection_bandwidth", b[0], "bandwidth", b[1]))
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
