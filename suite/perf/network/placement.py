"""Where a collective's ranks sit on a profile's network, and the per-profile derived levels.

:class:`Group` says how many ranks sit on each node and how many nodes they span;
:func:`dimensions` splits the group into one dimension per network level its traffic crosses
(see :mod:`suite.perf.network.collective` for the placement rules). :func:`_prepare` derives,
once per profile object, each level's per-endpoint bandwidth (the node's NICs together for an
inter-node level), topology shape and reduction term ``gamma = 3 / memory_bandwidth`` s/B.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from suite.errors import ProfileError
from suite.frozen import on_inputs_restored
from suite.hardware.derived import torus_shape
from suite.hardware.tracking import _ModelView as _TrackedView
from suite.hardware.recording import RECORDED, unrecorded, written_in_case

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import Profile

__all__ = ["Group", "CollectiveCost", "Dim", "group_of", "dimensions", "reduction_gamma"]


@dataclass(frozen=True)
class Group:
    """How the ranks of a collective sit on the profile's hierarchy.

    Parameters
    ----------
    ranks_per_node : int
        Ranks of the group on each node (<= the node's devices); traffic between them crosses
        ``network[0]`` (the intra-node level) when the profile has one.
    nodes : int
        Nodes the group spans; traffic between nodes crosses the inter-node levels (the nodes
        fill the innermost inter-node level first, see :func:`dimensions`).
    ranks : int, optional
        Total ranks when the last node is only partly filled (``(nodes-1) ranks_per_node <
        ranks < nodes ranks_per_node``; :func:`group_of` sets it). Algorithms over all ranks
        (ring, recursive doubling, Rabenseifner) count this many; the per-level phases of the
        hierarchical algorithms price full nodes (the busiest).
    concurrent : int
        Copies of this collective that run at once on the same nodes over other ranks (the
        data-parallel groups of the other pipeline stages / tensor shards): they share every
        node's NICs and every bus medium equally, so each inter-node level's bandwidth (and a
        bus's) is divided by this count. Intra-node switched links are per device: unaffected.
    """

    ranks_per_node: int = 1
    nodes: int = 1
    ranks: int | None = None
    concurrent: int = 1

    def __post_init__(self) -> None:
        if self.concurrent < 1:
            raise ValueError(f"group: concurrent must be >= 1, got {self.concurrent}")
        if self.ranks_per_node < 1 or self.nodes < 1:
            raise ValueError(f"group: ranks_per_node and nodes must be >= 1, got {self.ranks_per_node}, {self.nodes}")
        if self.ranks is not None and not (self.ranks_per_node * (self.nodes - 1) < self.ranks
                                           <= self.ranks_per_node * self.nodes):
            raise ValueError(f"group: ranks must be in ({self.ranks_per_node * (self.nodes - 1)}, "
                             f"{self.ranks_per_node * self.nodes}] for {self.ranks_per_node} per node on "
                             f"{self.nodes} nodes, got {self.ranks}")

    @property
    def size(self) -> int:
        return self.ranks if self.ranks is not None else self.ranks_per_node * self.nodes


def group_of(profile: "Profile", ranks: int) -> Group:
    """The group of *ranks* ranks packed onto the profile's nodes (fill a node, then the next;
    the last one may be partly filled)."""
    per = max(1, min(ranks, profile.devices_per_node))
    nodes = -(-ranks // per)
    return Group(ranks_per_node=per, nodes=nodes, ranks=ranks if ranks != per * nodes else None)


@dataclass(frozen=True)
class CollectiveCost:
    """What :func:`collective_time` returns.

    Attributes
    ----------
    time : float
        Seconds.
    algorithm : str
        The algorithm priced (the chosen one under ``auto`` / ``mpich``); ``none`` when nothing
        moves (one rank or zero bytes).
    bytes_per_level : tuple of float
        Bytes sent over each network level of the profile, innermost first, averaged over the
        group's ranks (the total over that level divided by the group size; for the symmetric
        algorithms, what every rank sends). The execute substrate's ledger gives the same totals.
    """

    time: float
    algorithm: str
    bytes_per_level: tuple[float, ...]


# --------------------------------------------------------------------------- levels and placement


@dataclass(frozen=True)
class Dim:
    """One dimension of a placed group: ``n`` participants on network level ``level``.

    ``stride`` is the rank distance between neighbours of this dimension (product of the inner
    dimensions' sizes); ``inter`` says whether the level is reached through the node's NICs.
    """

    level: int
    n: int
    stride: int
    inter: bool


@dataclass(frozen=True)
class _Lvl:
    topo: str
    size: int
    bw: float  # B/s per endpoint (per NIC times NICs for inter-node levels)
    medium: float  # B/s of a bus medium
    lat: float
    k: int  # torus / mesh dimensions
    shape: tuple[int, ...]
    over: float
    leaf: int
    inter: bool


class _Prepared(NamedTuple):
    """A profile's derived levels (innermost first), whether ``network[0]`` is intra-node, the
    reduction term (s/B) and a token unique to the profile object (the priced lines' cache key)."""

    lv: tuple[_Lvl, ...]
    intra: bool
    gamma: float
    token: int


#: the caches of this module (emptied when full or on a restore): the load-time tamper check leaves them be
__caches__ = ('_CACHE', '_LINES')
_CACHE: dict[int, tuple[object, _Prepared]] = {}
_TOKENS = itertools.count()
#: (profile token, op, placement, algorithm) -> priced lines (suite.perf.network.collective; cleared
#: with _CACHE, since a token is unique to one profile object)
_LINES: dict[tuple[Any, ...], Any] = {}


@on_inputs_restored
def _forget() -> None:
    """Drop every derived profile and priced line: a case that wrote its profile (failed, the write
    put back) may have priced collectives from the written values under the object's identity."""
    _CACHE.clear()
    _LINES.clear()


def _touch(view: Any, dims: tuple[Dim, ...], op: str, path: str = "ab", group: Group | None = None) -> None:
    """Through a read-recording profile view (suite.hardware.tracking), read the fields the
    collective depends on: the placement and the levels its traffic crosses, then by the *path*
    its price takes (suite.perf.network.collective): ``"ab"`` the alpha-beta algorithms (for a
    reduction, the device's memory bandwidth: the gamma term), ``"nccl"`` NCCL's model (each
    level's link kind, efficiency and reduction, the launch overhead and efficiency curves),
    ``"ps"`` the parameter server's pushes (no reduction term). :func:`_prepare` derives every
    level from the real profile, so a level the group does not cross is never recorded as read.
    On one level, whether it is intra-node (the devices per node) changes the price only under
    NCCL's model or for a *group* of several ranks per node or concurrent copies (the NICs shared);
    without a *group* it is taken to."""
    net = view.network
    _touch_placement(view, dims, intra_matters=path == "nccl" or group is None or group.ranks_per_node > 1
                     or group.concurrent > 1)
    for d in dims:
        level = net[d.level]
        _ = (level.bandwidth, level.latency, level.topology)
        topo = level.topology
        # the size also counts where it shapes the topology (_prepare, _step); elsewhere
        # (besides the placement's reads above) it changes nothing
        if topo in ("ring", "fully-connected") or (topo in ("torus", "mesh") and not level.dims):
            _ = level.size
        if topo in ("torus", "mesh"):
            _ = level.dims
        if topo in ("fat-tree", "dragonfly"):  # _step prices both with the leaf (group) size and the taper
            _ = (level.oversubscription, level.leaf_size)
        if d.inter and len(net) > 1 and view.node is not None:
            _ = view.node.nics_per_node
    if path == "ab":
        if op in ("allreduce", "reduce-scatter", "reduce") and view.device is not None:
            _ = view.device.memory_bandwidth
    elif path == "nccl" and dims:  # what suite.perf.nccl reads besides the above (nothing to price: nothing)
        _touch_nccl(view, dims)


def _touch_placement(view: Any, dims: tuple[Dim, ...], intra_matters: bool = True) -> None:
    """Through a read-recording profile view (suite.hardware.tracking), read the fields the
    placement *dims* (from :func:`dimensions`) depends on: with one network level, the devices per
    node (whether ``network[0]`` is intra-node, :func:`_prepare`), unless *intra_matters* is False
    (the caller's price is the same either way); with more, the sizes of the
    inter-node levels below the outermost that the nodes fill, innermost first, up to the outermost
    one crossed (:func:`_dims`; a level past it is never reached, the outermost takes the rest).
    A group packed by :func:`group_of` also read the devices per node, through the same view."""
    net = view.network
    if len(net) == 1:
        if intra_matters:
            _ = view.devices_per_node
        return
    last = max((d.level for d in dims if d.inter), default=0)
    _ = [net[i].size for i in range(1, min(last + 1, len(net) - 1))]


def _touch_nccl(view: Any, dims: tuple[Dim, ...]) -> None:
    """:func:`_touch`'s reads of NCCL's model (collective._nccl_topo, _nccl_priced)."""
    net = view.network
    for d in dims:
        level = net[d.level]
        _ = (level.link, level.efficiency, level.reduction, level.reduction_bandwidth)
        if not d.inter:
            _ = level.name  # the link kind's default
            if getattr(level, "path", None) in ("PHB", "SYS"):  # NCCL's root-complex charge and transport
                if str(getattr(view.cpu, "vendor", None)).lower() == "amd":
                    _ = view.devices_per_node  # AMD's P2P level depends on the GPU count
    comm = view.communication
    if comm is not None:
        _ = (comm.launch_overhead, comm.efficiency)


def _real(profile: "Profile") -> "Profile":
    """The profile itself, a read-recording view unwrapped."""
    seen: object = profile
    if type(seen) is _TrackedView:  # (a profile recorded in place is itself)
        real: Profile = getattr(profile, "_v_obj")
        return real
    return profile


def _prepare(profile: "Profile") -> _Prepared:
    """Per-profile derived figures (cached on the object's identity; profiles are immutable, and a
    derivation from a profile its case has written, even if the case puts the field back before it
    ends, is not kept: :func:`suite.hardware.recording.written_in_case`).

    A tracked view (suite.hardware.tracking) is unwrapped first, so it shares the real profile's
    entry and token (and its priced lines) instead of re-deriving them, and replacing the real
    profile's token, on every call; collective_time records the view's reads (a profile recorded
    in place is derived unrecorded, for the same reason)."""
    profile = _real(profile)
    hit = _CACHE.get(id(profile))
    if hit is not None and hit[0] is profile:
        return hit[1]
    with unrecorded():
        out = _derive(profile)
    if RECORDED and id(profile) in RECORDED and written_in_case(profile):
        return out  # derived from fields this case wrote (and may put back): kept for no later call
    if len(_CACHE) > 256:
        _CACHE.clear()
        _LINES.clear()
    _CACHE[id(profile)] = (profile, out)
    return out


def _derive(profile: "Profile") -> _Prepared:
    """:func:`_prepare`'s figures of *profile*, computed."""
    net = profile.network
    if not net:
        raise ProfileError(f"profile {profile.name!r}: has no [[network]] level")
    dpn = profile.devices_per_node
    intra = len(net) >= 2 or dpn > 1
    nics = (profile.node.nics_per_node or 1) if profile.node is not None else 1
    lv: list[_Lvl] = []
    for i, level in enumerate(net):
        if level.bandwidth <= 0:
            raise ProfileError(f"network level {level.name!r} (network.{i}.bandwidth): expected > 0, got {level.bandwidth}")
        inter = not (intra and i == 0)
        topo = level.topology
        shape: tuple[int, ...] = ()
        if topo in ("torus", "mesh"):
            shape = torus_shape(level)
        elif topo == "ring":
            shape = (level.size,)
        over = float(getattr(level, "oversubscription", None) or 1.0)
        leaf = int(getattr(level, "leaf_size", None) or 1)
        mult = nics if inter and len(net) > 1 else 1
        lv.append(_Lvl(topo, level.size, level.bandwidth * mult, level.bandwidth, level.latency,
                       max(1, len(shape)), shape, over, leaf, inter))
    dev = profile.device
    gamma = 3.0 / dev.memory_bandwidth if dev is not None and dev.memory_bandwidth else 0.0
    return _Prepared(tuple(lv), intra, gamma, next(_TOKENS))


def _shared(lv: tuple[_Lvl, ...], c: int) -> tuple[_Lvl, ...]:
    """The levels as one of *c* concurrent copies of a collective sees them (NICs and media shared)."""
    return tuple(dataclasses.replace(v, bw=v.bw / c if v.inter else v.bw,
                                     medium=v.medium / c if (v.inter or v.topo == "bus") else v.medium)
                 for v in lv)


def reduction_gamma(profile: "Profile") -> float:
    """Seconds per byte to reduce (sum) one buffer into another on the profile's device:
    ``3 / memory_bandwidth`` (read two operands, write one); 0 without a device."""
    return _prepare(profile)[2]


def dimensions(profile: "Profile", group: Group) -> tuple[Dim, ...]:
    """The network levels *group*'s traffic crosses, innermost first, with their participants.

    ``ranks_per_node`` ranks sit on the intra-node level (``network[0]`` when the profile has
    two or more levels, or one level and several devices per node); the ``nodes`` fill the
    inter-node levels innermost first, ``min(nodes, size)`` per level-1 domain, and so on, the
    outermost level taking the rest. A one-level profile whose group spans several nodes of
    several ranks prices the whole group flat on that level. Levels with one participant are
    left out (they are not crossed).
    """
    lv, intra, _g, _t = _prepare(profile)
    return _dims(lv, intra, group)


def _dims(lv: tuple[_Lvl, ...], intra: bool, group: Group) -> tuple[Dim, ...]:
    pi, po = group.ranks_per_node, group.nodes
    L = len(lv)
    out: list[Dim] = []
    if L == 1:
        if group.size > 1:
            out.append(Dim(0, group.size, 1, lv[0].inter))
        return tuple(out)
    if pi * po > 1 and group.size == 1:
        return ()
    stride = 1
    if pi > 1:
        out.append(Dim(0, pi, 1, False))
        stride = pi
    rest = po
    first = 1 if intra else 0
    for i in range(first, L):
        if rest <= 1:
            break
        n = rest if i == L - 1 else min(rest, lv[i].size)
        if n > 1:
            out.append(Dim(i, n, stride, True))
            stride *= n
        rest = -(-rest // n)
    return tuple(out)
