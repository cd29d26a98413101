"""One collective cost model over a whole hardware profile (all network levels).

``collective_time(op, nbytes, group, profile)`` prices a collective for ranks placed on the
profile's hierarchy. Every technique prices its communication here, so a profile field
(bandwidth, latency, topology, NICs per node, oversubscription) changes every technique whose
traffic crosses that level, and leaves the others alone.

Placement
---------
The group's ranks are split into *dimensions*, one per network level the traffic crosses
(:func:`dimensions`): ``ranks_per_node`` ranks on the intra-node level ``network[0]`` (when the
profile has one: two or more levels, or one level and several devices per node), and
``nodes`` nodes spread over the inter-node levels innermost first (a level of size S holds S
units of the level below; the outermost level takes the rest). Ranks are numbered
hierarchically (rank = local index + ranks_per_node * node index), as NCCL and MPI number them
under a block placement. A level with one participant is not crossed: its fields change nothing.

Each level's cost
-----------------
A message of m bytes over level L costs ``h * latency + m / (bw_eff)`` (Hockney's alpha-beta,
[Hockney94]) with ``h`` the hop count and ``bw_eff`` the per-flow bandwidth of the step's
traffic pattern on L's topology:

* ``switch`` (and ``fully-connected`` for ring traffic, which NCCL spreads over all links with
  several rings): full bisection, every endpoint sends at its ``bandwidth``;
* ``fully-connected``: a flow to one peer uses one direct link, ``bandwidth / (size - 1)``;
* ``ring`` / ``torus`` / ``mesh`` (``dims``, default the most square 2-D shape): an endpoint's
  bandwidth is split over its 2k neighbour links (k dimensions); a bidirectional ring maps on
  neighbours at ``bandwidth / k``; a partner h hops away costs h latencies and shares each link
  with the other flows crossing it (``bandwidth / (k h)``) [Dally04 §3];
* ``fat-tree``: traffic leaving a leaf of ``leaf_size`` endpoints shares its uplinks, tapered by
  ``oversubscription`` (down:up bandwidth, 1 = full bisection) [Leiserson85];
* ``dragonfly``: groups of ``leaf_size`` nodes; traffic concentrated between two groups is routed
  non-minimally over two global links (Valiant), ``bandwidth / (2 oversubscription)``; spread
  (all-to-all) traffic is bound by the groups' global links, ``bandwidth / oversubscription``
  [Kim08];
* ``bus``: one shared medium of ``bandwidth``: k concurrent flows each get ``bandwidth / k``; a
  broadcast reaches every endpoint in one transmission.

Inter-node levels are reached through the node's ``nics_per_node`` NICs: a level's bandwidth is
per NIC, and the ranks of a node that send at once over it share the node's NICs.

Algorithms
----------
All-reduce: ``ring`` [Patarasuk09], binomial ``tree`` (reduce + broadcast) [Thakur05 §4.4],
``recursive-doubling`` and ``rabenseifner`` (recursive-halving reduce-scatter + recursive-doubling
all-gather) with MPICH's fold of the ``p - 2^floor(log2 p)`` extra ranks [Thakur05 §4.5], and over
several levels ``hierarchical`` (reduce-scatter level by level inward-out, all-reduce of the
shard on the outermost level, all-gather back; NCCL's hierarchical / 2-D algorithm, [Sanders09]).
Reduce-scatter / all-gather: ``ring``, ``recursive-doubling`` (halving for reduce-scatter;
power-of-two p), ``bruck`` (all-gather, any p), ``hierarchical``. Broadcast / reduce: ``tree``
(binomial), ``scatter-allgather`` (van de Geijn, [Thakur05 §4.2]), on a bus one transmission.
All-to-all: ``pairwise`` and ``bruck`` [Thakur05 §4.6], and ``direct`` (every message posted at
once, as NCCL's all-to-all and a sharded parameter server's push [Li14]: one latency, the
(p-1)/p m bytes at the rank's share of each level, the slowest level bounding). Point-to-point:
``p2p``.

``algorithm="auto"`` prices every candidate and keeps the fastest, as NCCL's tuner does (it
predicts each algorithm's time from a latency-bandwidth model and picks the minimum; recursive
doubling and Rabenseifner across several levels of which one has a non-power-of-two size are
left out, since there the partner's level is only approximated by its rank distance);
``algorithm="mpich"`` applies MPICH's size-based switch instead ([Thakur05] §4: all-reduce by
recursive doubling for messages <= 2 KiB or fewer elements than ranks, Rabenseifner above;
broadcast binomial below 12 KiB or under 8 ranks, scatter-allgather above; all-gather recursive
doubling (power-of-two p) / Bruck below 512 KiB total, ring above; all-to-all Bruck below
256 B per message and 8 ranks, pairwise otherwise).

Communication libraries
-----------------------
``algorithm="auto"`` chooses only among the algorithms of the library the profile's collectives
run on (``[communication] library``; default ``nccl`` for a GPU profile, ``mpi`` otherwise,
:func:`suite.perf.nccl.library_of`):

* ``nccl``: NCCL's tuner over ring / tree / NVLS / NVLS-tree / CollNet and the LL / LL128 /
  Simple protocols, with per-hop latencies and protocol factors from NCCL's tuning model and a
  size-dependent efficiency (:mod:`suite.perf.nccl`); all-to-all and p2p as NCCL's
  point-to-point sends (``direct`` / ``p2p``);
* ``mpi``: every algorithm above, the fastest kept (MPICH's algorithms; ``algorithm="mpich"``
  applies MPICH's switch points instead);
* ``gloo``: Gloo's all-reduce algorithms, ring and halving-doubling (``rabenseifner``), rings
  for reduce-scatter / all-gather, binomial trees for broadcast / reduce, pairwise all-to-all;
* ``ps``: a sharded parameter server [Li14]: an all-reduce is a push of every rank's buffer to
  the server shards and a pull of the result (two ``direct`` all-to-alls of the buffer); the
  other operations as ``mpi``.

A named algorithm is priced as named whatever the library (``nvls``, ``nvls-tree`` and
``collnet`` only under NCCL).

Reduction term
--------------
Reducing m bytes streams two operands and writes one result through device memory:
``gamma = 3 / device.memory_bandwidth`` s/B, added to every reduction step (the gamma term of
[Thakur05]); zero when the profile has no device.

References
----------
.. [Hockney94] R. Hockney, "The communication challenge for MPP", Parallel Computing 20(3), 1994.
.. [Thakur05] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
   Operations in MPICH", IJHPCA 19(1), 2005.
.. [Patarasuk09] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009.
.. [Sanders09] P. Sanders, J. Speck, J. L. Traeff, "Two-tree algorithms for full bandwidth
   broadcast, reduction and scan", Parallel Computing 35(12), 2009 (and NCCL's hierarchical
   reduce-scatter / all-reduce / all-gather composition across NVLink and the NICs).
.. [Dally04] W. Dally, B. Towles, "Principles and Practices of Interconnection Networks", 2004.
.. [Leiserson85] C. Leiserson, "Fat-trees: universal networks for hardware-efficient
   supercomputing", IEEE Trans. Computers C-34(10), 1985.
.. [Li14] M. Li et al., "Scaling Distributed Machine Learning with the Parameter Server", OSDI 2014.
.. [Kim08] J. Kim, W. Dally, S. Scott, D. Abts, "Technology-driven, highly-scalable dragonfly
   topology", ISCA 2008.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from suite.errors import ProfileError
from suite.hardware.tracking import _ModelView as _TrackedView
from suite.perf import nccl as _nccl
from suite.perf.comm import ring_allreduce_bytes_per_worker

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import Profile

__all__ = ["OPS", "ALGORITHMS", "NCCL_ALGORITHMS", "Group", "CollectiveCost", "collective_time", "group_of", "dimensions",
           "Dim", "reduction_gamma", "record_levels", "Recording"]

OPS = ("allreduce", "reduce-scatter", "allgather", "broadcast", "reduce", "alltoall", "p2p")

#: algorithms priced per op (``auto`` and ``mpich`` choose among them)
ALGORITHMS = {
    "allreduce": ("ring", "tree", "recursive-doubling", "rabenseifner", "hierarchical"),
    "reduce-scatter": ("ring", "recursive-doubling", "hierarchical"),
    "allgather": ("ring", "recursive-doubling", "bruck", "hierarchical"),
    "broadcast": ("tree", "scatter-allgather", "hierarchical"),
    "reduce": ("tree", "scatter-allgather", "hierarchical"),
    "alltoall": ("pairwise", "bruck", "direct"),
    "p2p": ("p2p",),
}

#: NCCL's own algorithm names, accepted for all-reduce (under the ``nccl`` library)
NCCL_ALGORITHMS = ("nvls", "nvls-tree", "collnet")

#: what ``auto`` weighs under Gloo (its all-reduce algorithms ring / halving-doubling)
_GLOO = {"allreduce": ("ring", "rabenseifner"), "reduce-scatter": ("ring",), "allgather": ("ring",),
         "broadcast": ("tree",), "reduce": ("tree",), "alltoall": ("pairwise",)}


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

    def __post_init__(self):
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


def _square_dims(n: int) -> tuple[int, ...]:
    a = int(math.isqrt(n))
    while a > 1 and n % a:
        a -= 1
    return (a, n // a) if a > 1 else (n,)


_CACHE: dict[int, tuple[object, tuple]] = {}
_TOKENS = __import__("itertools").count()


def _touch(view, dims, op: str, library: str = "mpi") -> None:
    """Through a read-recording profile view (suite.hardware.tracking), read the fields the
    collective depends on: the placement, the levels its traffic crosses and, for a reduction, the
    device's memory bandwidth. :func:`_prepare` derives every level from the real profile, so a
    level the group does not cross is never recorded as read."""
    net = view.network
    if len(net) == 1:  # with one level, whether it is intra-node depends on the node's size (_prepare)
        _ = view.devices_per_node
    for d in dims:
        level = net[d.level]
        _ = (level.bandwidth, level.latency, level.topology)
        topo = level.topology
        # the size counts where it places the nodes (an inter-node level below the outermost,
        # see _dims) or shapes the topology (_prepare, _step); elsewhere it changes nothing
        if ((d.inter and d.level < len(net) - 1) or topo in ("ring", "fully-connected")
                or (topo in ("torus", "mesh") and not level.dims)):
            _ = level.size
        if topo in ("torus", "mesh"):
            _ = level.dims
        if topo in ("fat-tree", "dragonfly"):  # _step prices both with the leaf (group) size and the taper
            _ = (level.oversubscription, level.leaf_size)
        if d.inter and len(net) > 1 and view.node is not None:
            _ = view.node.nics_per_node
    if op in ("allreduce", "reduce-scatter", "reduce") and view.device is not None and library != "nccl":
        _ = view.device.memory_bandwidth
    if library == "nccl" and op not in ("p2p", "alltoall"):  # what suite.perf.nccl reads besides the above
        for d in dims:
            level = net[d.level]
            _ = (level.link, level.efficiency, level.reduction, level.reduction_bandwidth)
            if not d.inter:
                _ = level.name  # the link kind's default


def _prepare(profile: "Profile") -> tuple:
    """Per-profile derived figures (cached on the object's identity; profiles are immutable).

    A tracked view (suite.hardware.tracking) is unwrapped first, so it shares the real profile's
    entry and token (and its priced lines) instead of re-deriving them, and replacing the real
    profile's token, on every call; collective_time records the view's reads."""
    if type(profile) is _TrackedView:
        profile = profile._v_obj
    hit = _CACHE.get(id(profile))
    if hit is not None and hit[0] is profile:
        return hit[1]
    net = profile.network
    if not net:
        raise ProfileError(f"profile {profile.name!r}: has no [[network]] level")
    dpn = profile.devices_per_node
    intra = len(net) >= 2 or dpn > 1
    nics = (profile.node.nics_per_node or 1) if profile.node is not None else 1
    lv = []
    for i, level in enumerate(net):
        if level.bandwidth <= 0:
            raise ProfileError(f"network level {level.name!r} (network.{i}.bandwidth): expected > 0, got {level.bandwidth}")
        inter = not (intra and i == 0)
        topo = level.topology
        shape: tuple[int, ...] = ()
        if topo in ("torus", "mesh"):
            shape = tuple(d for d in (getattr(level, "dims", None) or _square_dims(level.size)) if d > 1) or (1,)
        elif topo == "ring":
            shape = (level.size,)
        over = float(getattr(level, "oversubscription", None) or 1.0)
        leaf = int(getattr(level, "leaf_size", None) or 1)
        mult = nics if inter and len(net) > 1 else 1
        lv.append(_Lvl(topo, level.size, level.bandwidth * mult, level.bandwidth, level.latency,
                       max(1, len(shape)), shape, over, leaf, inter))
    dev = profile.device
    gamma = 3.0 / dev.memory_bandwidth if dev is not None and dev.memory_bandwidth else 0.0
    out = (tuple(lv), intra, gamma, next(_TOKENS))
    if len(_CACHE) > 256:
        _CACHE.clear()
        _LINES.clear()
    _CACHE[id(profile)] = (profile, out)
    return out


def _shared(lv, c: int) -> tuple:
    """The levels as one of *c* concurrent copies of a collective sees them (NICs and media shared)."""
    import dataclasses

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


def _dims(lv, intra, group: Group) -> tuple[Dim, ...]:
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


# --------------------------------------------------------------------------- one step on one level


def _hops_factor(v: _Lvl, d: int) -> int:
    """Hops between endpoints d apart (rank distance within the level) on a ring / torus / mesh."""
    h = 0
    for size in v.shape:
        x = d % size
        d //= size
        h += x if v.topo == "mesh" else min(x, size - x)
    return max(1, h)


def _step(v: _Lvl, pattern: str, n: int, d: int, per_node: int, per_domain: int) -> tuple[float, float]:
    """(latency, bandwidth per flow) of one step of *pattern* on level *v*.

    pattern: ``ring`` (all n send to a neighbour), ``xor`` (all n exchange with a partner d
    apart), ``tree`` (ceil(n / 2d) senders, partner d apart), ``single`` (one flow), ``shift``
    (all n send to the rank d ahead, all-to-all step). ``per_node``: ranks of a node using the
    level at once (share its NICs); ``per_domain``: concurrent instances on one shared medium.
    """
    t = v.topo
    lat = v.lat
    if t == "bus":
        if pattern == "single":
            flows = per_domain
        elif pattern == "tree":
            flows = -(-n // (2 * d)) * per_domain
        else:
            flows = n * per_domain
        return lat, v.medium / max(1, flows)
    bw = v.bw / per_node if v.inter else v.bw
    if t in ("switch",):
        return lat, bw
    if t == "fully-connected":
        if pattern == "ring":
            return lat, bw
        return lat, bw / max(1, v.size - 1)
    if t in ("ring", "torus", "mesh"):
        if pattern == "ring":
            return lat, bw / v.k
        h = _hops_factor(v, d) if pattern != "single" else 1
        if pattern in ("xor", "shift"):
            return lat * h, bw / (v.k * h)
        return lat * h, bw / v.k
    if t == "fat-tree":
        L, o = v.leaf, v.over
        if o <= 1 or n <= L:
            return lat, bw
        if pattern == "ring" or pattern == "single":
            return lat, bw * min(1.0, L / o)
        if pattern == "tree":
            return lat, bw * (min(1.0, L / o) if d >= L else 1.0)
        if pattern == "xor":
            return lat, bw * (1.0 / o if d >= L else 1.0)
        return lat, bw * min(1.0, L / (o * min(d, L)))  # shift
    if t == "dragonfly":
        G, o = v.leaf, v.over
        if n <= G:
            return lat, bw
        if pattern in ("ring", "single", "tree"):
            return lat, bw
        if pattern == "xor":
            return lat, bw / (2.0 * o) if d >= G else bw
        return lat, bw * min(1.0, G / (o * min(d, G)))
    raise ProfileError(f"network topology {t!r}: not priced")  # pragma: no cover - schema forbids


# --------------------------------------------------------------------------- algorithms on one dimension


def _lg(n: int) -> int:
    return max(0, (n - 1).bit_length())


def _ring_half(v, dim, m, pn, pd):
    """One ring reduce-scatter (or all-gather) of an m-byte buffer over dim: (n-1) steps of m/n."""
    n = dim.n
    a, bw = _step(v, "ring", n, 1, pn, pd)
    return (n - 1) * (a + m / n / bw)


def _xor_steps(v, dim, m_of_step, dists, pn, pd):
    t = 0.0
    for d, m in zip(dists, m_of_step):
        a, bw = _step(v, "xor", dim.n, d, pn, pd)
        t += a + m / bw
    return t


def _fold(v, dim, m, pn, pd, g):
    """MPICH's fold for non-power-of-two n: extra ranks send their buffer to a partner before, and
    receive the result after (two messages of m, one reduction of m)."""
    a, bw = _step(v, "xor", dim.n, 1, pn, pd)
    return 2 * (a + m / bw) + m * g


def _ar_flat(name, v, dim, m, pn, pd, g):
    n = dim.n
    if name == "ring":
        return 2 * _ring_half(v, dim, m, pn, pd) + (n - 1) / n * m * g
    if name == "tree":
        t = 0.0
        for k in range(_lg(n)):
            a, bw = _step(v, "tree", n, 1 << k, pn, pd)
            t += 2 * (a + m / bw) + m * g
        return t
    p2 = 1 << (n.bit_length() - 1)
    extra = _fold(v, dim, m, pn, pd, g) if p2 != n else 0.0
    steps = p2.bit_length() - 1
    if name == "recursive-doubling":
        ds = [1 << k for k in range(steps)]
        return extra + _xor_steps(v, dim, [m] * steps, ds, pn, pd) + steps * m * g
    if name == "rabenseifner":
        ds = [p2 >> (k + 1) for k in range(steps)]
        ms = [m / (2 << k) for k in range(steps)]
        rs = _xor_steps(v, dim, ms, ds, pn, pd)
        ag = _xor_steps(v, dim, ms[::-1], ds[::-1], pn, pd)
        return extra + rs + ag + (p2 - 1) / p2 * m * g
    raise KeyError(name)


def _rs_flat(name, v, dim, m, pn, pd, g, reduce=True):
    """Reduce-scatter (reduce=True) or all-gather of an m-byte total over one dimension."""
    n = dim.n
    gg = (n - 1) / n * m * g if reduce else 0.0
    if name == "ring":
        return _ring_half(v, dim, m, pn, pd) + gg
    if name == "recursive-doubling":
        if n & (n - 1):
            raise KeyError(name)
        steps = n.bit_length() - 1
        ds = [n >> (k + 1) for k in range(steps)] if reduce else [1 << k for k in range(steps)]
        ms = [m / (2 << k) for k in range(steps)] if reduce else [m * (1 << k) / n for k in range(steps)]
        return _xor_steps(v, dim, ms, ds, pn, pd) + gg
    if name == "bruck" and not reduce:
        t = 0.0
        for k in range(_lg(n)):
            d = 1 << k
            a, bw = _step(v, "shift", n, d, pn, pd)
            t += a + min(d, n - d) * m / n / bw
        return t
    raise KeyError(name)


def _bc_flat(name, v, dim, m, pn, pd, g, reduce=False):
    n = dim.n
    if v.topo == "bus" and not reduce and name == "tree":
        a, bw = _step(v, "single", n, 1, pn, pd)
        return a + m / bw  # one transmission on the shared medium reaches every endpoint
    if name == "tree":
        t = 0.0
        for k in range(_lg(n)):
            a, bw = _step(v, "tree", n, 1 << k, pn, pd)
            t += a + m / bw + (m * g if reduce else 0.0)
        return t
    if name == "scatter-allgather":
        # binomial scatter of n blocks from the root (rounds at distance d = 2^k descending, the
        # root sending the blocks of its upper half each round), then ring all-gather (reduce:
        # the mirror image, reduce-scatter then gather)
        t = 0.0
        for k in range(_lg(n) - 1, -1, -1):
            d = 1 << k
            a, bw = _step(v, "tree", n, d, pn, pd)
            t += a + m * (min(2 * d, n) - d) / n / bw
        return t + _ring_half(v, dim, m, pn, pd) + ((n - 1) / n * m * g if reduce else 0.0)
    raise KeyError(name)


def _scatter_blocks(n: int) -> int:
    """Blocks a binomial scatter over n ranks moves in all (each non-root rank receives its subtree's)."""
    total = 0
    for k in range(_lg(n)):
        d = 1 << k
        q = -(-(n - d) // (2 * d))  # senders i = 0, 2d, ... with i + d < n
        full = n // (2 * d)
        total += full * d + (q - full) * (n - full * 2 * d - d) if q > full else full * d
    return total


def _a2a_flat(name, v, dim, m, pn, pd):
    n = dim.n
    if name == "pairwise":
        t = 0.0
        for k in range(1, n):
            a, bw = _step(v, "shift", n, k, pn, pd)
            t += a + m / n / bw
        return t
    if name == "bruck":
        t = 0.0
        for k in range(_lg(n)):
            a, bw = _step(v, "shift", n, 1 << k, pn, pd)
            t += a + m / 2 / bw
        return t
    if name == "direct":
        if v.topo == "bus":
            return v.lat + (n - 1) / n * m * n * pd / v.medium  # every rank's messages on one medium
        a, bw = _step(v, "shift", n, max(1, n // 2), pn, pd)
        if v.topo == "fully-connected":
            bw = v.bw / pn if v.inter else v.bw  # one direct link to each peer, all in use
        return a + (n - 1) / n * m / bw
    raise KeyError(name)


# --------------------------------------------------------------------------- bytes per level


def _spread(nlev: int, dims, per_dim: list[float]) -> tuple[float, ...]:
    out = [0.0] * nlev
    for d, b in zip(dims, per_dim):
        out[d.level] += b
    return tuple(out)


def _ring_crossings(dims) -> list[float]:
    """Fraction of a hierarchical ring's neighbour pairs whose outermost crossed level is each dim."""
    p = 1
    for d in dims:
        p *= d.n
    fr = []
    outer_prod = p
    for i, d in enumerate(dims):
        above = outer_prod // d.n  # pairs differing beyond this dim
        fr.append(((outer_prod if outer_prod > 1 else 0) - (above if above > 1 else 0)) / p)
        outer_prod = above
    # the product of the dims outward of dim i counts the pairs crossing at least dim i
    return fr


# --------------------------------------------------------------------------- the model


def collective_time(op: str, nbytes: float, group: Group, profile: "Profile",
                    algorithm: str = "auto") -> CollectiveCost:
    """Time of one collective of *nbytes* over *group* on *profile*.

    Parameters
    ----------
    op : str
        One of :data:`OPS`. ``nbytes`` is the full buffer (all-reduce, reduce, broadcast), the
        gathered / scattered total (all-gather, reduce-scatter), the bytes each rank sends to all
        others together (all-to-all), or the message (p2p: ``ranks_per_node`` pairs of ranks at
        once, each pair on two nodes when ``group.nodes > 1``, else on one node).
    nbytes : float
        Bytes (B).
    group : Group
    profile : Profile
    algorithm : str
        ``auto`` (the fastest priced, as NCCL's tuner), ``mpich`` (MPICH's size-based switch) or
        one of :data:`ALGORITHMS` ``[op]``. ``hierarchical`` on a group that crosses one level is
        the best flat algorithm there.

    Returns
    -------
    CollectiveCost

    Raises
    ------
    ValueError
        Unknown op or algorithm, an algorithm not defined for the group (recursive-halving
        reduce-scatter for a non-power-of-two dimension), negative size.
    ProfileError
        The profile has no network level, or a level's bandwidth is not > 0.
    """
    if op not in OPS:
        raise ValueError(f"collective op must be one of {OPS}, got {op!r}")
    if not nbytes >= 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    named = ALGORITHMS[op] + (NCCL_ALGORITHMS + ("ps",) if op == "allreduce" else ())
    if algorithm not in ("auto", "mpich") and algorithm not in named:
        raise ValueError(f"algorithm for {op}: expected auto, mpich or one of {named}, got {algorithm!r}")
    lv, intra, g, token = _prepare(profile)
    nlev = len(lv)
    dims = _dims(lv, intra, group)
    crossed = dims[-1:] if op == "p2p" else dims  # a pair on two nodes crosses the outermost level only
    library = _nccl.library_of(profile)
    if algorithm in NCCL_ALGORITHMS and library != "nccl":
        raise ValueError(f"algorithm {algorithm!r} for {op}: expected a profile whose collectives run on NCCL, "
                         f"got library {library!r} ([communication] library)")
    if type(profile) is _TrackedView:
        _touch(profile, crossed, op, library)
    if _RECORDERS and nbytes > 0:
        for rec in _RECORDERS:
            rec.levels.update(d.level for d in crossed)
            rec.calls.append((op, nbytes, group, algorithm))
    if not dims or nbytes == 0:
        return CollectiveCost(0.0, "none", (0.0,) * nlev)
    m = float(nbytes)
    p = group.size
    pi = group.ranks_per_node if len(dims) > 1 or dims[0].inter else 1
    if op == "p2p":
        d = dims[-1]
        # concurrent copies share the node's NICs (and a bus) with this one, as for collectives
        v = (_shared(lv, group.concurrent) if group.concurrent > 1 else lv)[d.level]
        pn = group.ranks_per_node if d.inter else 1
        a, bw = _step(v, "single", 2, 1, pn, pn)
        return CollectiveCost(a + m / bw, "p2p", _spread(nlev, (d,), [m]))
    if algorithm == "mpich":
        algorithm = _mpich_choice(op, m, p, dims)
    if algorithm == "ps" or (algorithm == "auto" and library == "ps" and op == "allreduce"):
        push = collective_time("alltoall", m, group, profile, "direct")  # every rank's buffer to the shards
        return CollectiveCost(2 * push.time, "ps", tuple(2 * b for b in push.bytes_per_level))
    if op != "alltoall" and library == "nccl" and (algorithm == "auto" or algorithm in NCCL_ALGORITHMS):
        return _nccl_cost(op, m, group, profile, dims, lv, pi, g, p, token, algorithm)
    if algorithm == "auto" and op == "alltoall" and library == "nccl":
        algorithm = "direct"  # NCCL's all-to-all: every send and receive posted at once
    names = _GLOO[op] if (algorithm == "auto" and library == "gloo") else algorithm
    key = (token, op, group.ranks_per_node, group.nodes, group.ranks, group.concurrent, names)
    lines = _LINES.get(key)
    if lines is None:
        if group.concurrent > 1:
            lv = _shared(lv, group.concurrent)
        lines = _lines(op, names, dims, lv, pi, g, p)
        if len(_LINES) > 100_000:
            _LINES.clear()
        _LINES[key] = lines
    best = None
    for name, pieces, per in lines:
        if len(pieces) == 1:
            t = pieces[0][0] + pieces[0][1] * m
        else:
            t = max(a0 + b0 * m for a0, b0 in pieces)
        if best is None or t < best[0] * (1 - 1e-12):
            best = (t, name, per)
    t, name, per = best
    return CollectiveCost(t, name, _spread(nlev, dims, [x * m for x in per]))


_RECORDERS: list = []

#: link kind of an intra-node level that does not declare one: NVLink by its name, else PCIe
_NVLINK_NAMES = ("nvlink", "nvswitch", "nvl")
#: achieved fraction of a level's bandwidth when the level declares none, per link kind: NCCL's
#: counted per-link NVLink bandwidth over the link's rate (topo.h SM80/SM90 20 / 20.6 of 25 GB/s,
#: SM100 40.1 of 50), its PCIe Gen3 x16 figure (PCI_BW 12 of 15.75 GB/s); NICs at their rate
_LINK_EFFICIENCY = {"nvlink": 0.8, "pcie": 0.76, "net": 1.0}


def _nccl_topo(profile, group: Group, dims, lv) -> "_nccl.Topo":
    """The placed group as suite.perf.nccl sees it (see its module docstring)."""
    net = profile.network
    comm = getattr(profile, "communication", None)
    intra_dim = next((d for d in dims if not d.inter), None)
    inter_dims = [d for d in dims if d.inter]
    nodes = math.prod(d.n for d in inter_dims) if inter_dims else 1
    ppn = intra_dim.n if intra_dim is not None else 1
    intra_bw, link, nvls, intra_lat = math.inf, "net", 0.0, 0.0
    if intra_dim is not None:
        level, v = net[intra_dim.level], lv[intra_dim.level]
        link = level.link or ("nvlink" if any(k in level.name.lower() for k in _NVLINK_NAMES) else "pcie")
        eff = level.efficiency or _LINK_EFFICIENCY[link]
        intra_bw = _step(v, "ring", intra_dim.n, 1, 1, 1)[1] * eff
        intra_lat = float(level.latency)
        if level.reduction == "nvls":
            nvls = float(level.reduction_bandwidth or intra_bw)
    inter_bw, sharp, inter_lat = math.inf, False, 0.0
    for d in inter_dims:
        level, v = net[d.level], lv[d.level]
        inter_lat = max(inter_lat, float(level.latency))
        eff = level.efficiency or _LINK_EFFICIENCY[level.link or "net"]
        inter_bw = min(inter_bw, _step(v, "ring", d.n, 1, 1, 1)[1] * eff)
        sharp = sharp or level.reduction == "sharp"
    launch = float(comm.launch_overhead) if comm is not None else 0.0
    return _nccl.Topo(n=group.size, nodes=nodes, ppn=ppn, intra_link=link, intra_bw=intra_bw, inter_bw=inter_bw,
                      nvls_bw=nvls, sharp=sharp, launch=launch, inter_lat=inter_lat,
                      intra_lat=intra_lat)


def _nccl_cost(op, m, group, profile, dims, lv, pi, g, p, token, algorithm) -> CollectiveCost:
    """The fastest of NCCL's (algorithm, protocol) candidates (suite.perf.nccl); bytes per level
    as the ring (all-reduce, reduce-scatter, all-gather) or the binomial tree (broadcast, reduce)
    over the same placement would move them."""
    key = (token, "nccl", op, group.ranks_per_node, group.nodes, group.ranks, group.concurrent, algorithm)
    hit = _LINES.get(key)
    if hit is None:
        real = profile._v_obj if type(profile) is _TrackedView else profile
        shared = _shared(lv, group.concurrent) if group.concurrent > 1 else lv
        cands = _nccl.candidates(op, _nccl_topo(real, group, dims, shared), algorithm)
        comm = real.communication
        curves = {**_nccl.SIMPLE_EFFICIENCY, **((comm.efficiency or {}) if comm is not None else {})}
        ref = "ring" if op in ("allreduce", "reduce-scatter", "allgather") else "tree"
        per = _lines(op, ref, dims, shared, pi, g, p)[0][2]
        hit = (cands, curves, per)
        _LINES[key] = hit
    cands, curves, per = hit
    t, c = _nccl.best(cands, m, curves)
    return CollectiveCost(t, c.name, _spread(len(lv), dims, [x * m for x in per]))


class Recording:
    """What :class:`record_levels` collected: ``levels`` (set of network level indices crossed
    with bytes to move) and ``calls`` (every ``(op, nbytes, group, algorithm)`` priced)."""

    def __init__(self):
        self.levels: set[int] = set()
        self.calls: list[tuple] = []

    def __contains__(self, level: int) -> bool:
        return level in self.levels

    def __bool__(self) -> bool:
        return bool(self.levels)


class record_levels:
    """Context manager recording the collectives priced inside it (:class:`Recording`): the
    network levels they cross and the calls themselves. Used by the communication conformance
    check (:func:`suite.perf.sensitivity.check_network_sensitivity`).

    >>> with record_levels() as rec:      # doctest: +SKIP
    ...     technique.evaluate(scenario)
    >>> rec.levels
    {0, 1}
    """

    def __enter__(self) -> Recording:
        self._r = Recording()
        _RECORDERS.append(self._r)
        return self._r

    def __exit__(self, *exc) -> None:
        _RECORDERS.remove(self._r)


#: (profile token, op, ranks_per_node, nodes, algorithm) -> affine lines (a token is unique to
#: one profile object, see _prepare)
_LINES: dict[tuple, list] = {}


def _lines(op, algorithm, dims, lv, pi, g, p) -> list:
    """Every candidate's time as a function of the size: the maximum of affine pieces
    ``A_i + B_i m`` (one piece for most algorithms; one per crossed level for a ring through
    several levels, whose step is as slow as its slowest hop), with its bytes per dimension per
    byte of m. All the formulas are latency terms plus bytes over bandwidths plus the gamma
    term, so two evaluations (m = 0 and m = 1) give each piece exactly."""
    auto = algorithm == "auto" or isinstance(algorithm, tuple)
    names = algorithm if isinstance(algorithm, tuple) else ALGORITHMS[op] if algorithm == "auto" else (algorithm,)
    if auto and len(dims) > 1 and any(d.n & (d.n - 1) for d in dims):
        # across levels of non-power-of-two sizes the partner's level is only approximated
        # (by its rank distance): not a candidate the tuner trusts
        names = tuple(n for n in names if n not in ("recursive-doubling", "rabenseifner"))
    out = []
    for name in names:
        if len(dims) > 1 and ((name == "ring" and op in ("allreduce", "reduce-scatter", "allgather"))
                              or (name == "direct" and op == "alltoall")):
            groups = [tuple(range(len(dims)))]  # the slowest level bounds: max of per-level pieces
        else:
            groups = [(s,) for s in _subs(op, name, dims)]
        for group in groups:
            pieces, per = [], None
            try:
                for sub in group:
                    t0, _ = _price(op, name, 0.0, dims, lv, pi, g, p, sub)
                    t1, per = _price(op, name, 1.0, dims, lv, pi, g, p, sub)
                    pieces.append((t0, t1 - t0))
            except KeyError:
                continue
            sub = group[0]
            label = sub if (len(dims) == 1 and name == "hierarchical") else name
            out.append((label, tuple(pieces), per))
    if not out:
        raise ValueError(f"algorithm {algorithm!r} is not defined for {op} over "
                         f"{'x'.join(str(d.n) for d in dims)} ranks")
    return out


def _subs(op, name, dims):
    """The sub-choices of an algorithm (each an affine line): the flat algorithm a one-level
    'hierarchical' stands for, the last level's all-reduce, each level's broadcast."""
    if name != "hierarchical":
        return (None,)
    if len(dims) == 1:
        return tuple(a for a in ALGORITHMS[op] if a != "hierarchical")
    if op == "allreduce":
        return ("ring", "tree", "recursive-doubling", "rabenseifner")
    if op in ("broadcast", "reduce"):
        import itertools

        return tuple(itertools.product(("tree", "scatter-allgather"), repeat=len(dims)))
    return (None,)


def _mpich_choice(op, m, p, dims) -> str:
    pow2 = p & (p - 1) == 0
    if op == "allreduce":
        return "recursive-doubling" if m <= 2048 or m < 4 * p else "rabenseifner"
    if op in ("broadcast", "reduce"):
        return "tree" if m < 12288 or p < 8 else "scatter-allgather"
    if op == "allgather":
        if m < 524288 and len(dims) == 1:
            return "recursive-doubling" if pow2 else "bruck"
        return "ring"
    if op == "reduce-scatter":
        return "recursive-doubling" if pow2 and len(dims) == 1 and m / p < 524288 else "ring"
    if op == "alltoall":
        return "bruck" if m / p <= 256 and p >= 8 else "pairwise"
    return "p2p"  # pragma: no cover


def _price(op, name, m, dims, lv, pi, g, p, sub=None):
    """(time, bytes per dim averaged over the group's ranks) of algorithm *name*."""
    if len(dims) == 1:
        d = dims[0]
        v = lv[d.level]
        pn = pi if d.inter else 1
        n = d.n
        if name == "hierarchical":
            return _price(op, sub, m, dims, lv, pi, g, p)
        if op == "allreduce":
            t = _ar_flat(name, v, d, m, pn, pn, g)
            return t, [_ar_bytes(name, n, m)]
        if op in ("reduce-scatter", "allgather"):
            t = _rs_flat(name, v, d, m, pn, pn, g, reduce=op == "reduce-scatter")
            return t, [(n - 1) / n * m]
        if op in ("broadcast", "reduce"):
            t = _bc_flat(name, v, d, m, pn, pn, g, reduce=op == "reduce")
            return t, [_bc_bytes(name, n, m, v.topo == "bus" and op == "broadcast")]
        t = _a2a_flat(name, v, d, m, pn, pn)
        return t, [m / 2 * _lg(n) if name == "bruck" else (n - 1) / n * m]
    # several levels
    k = len(dims)
    if op == "allreduce":
        if name == "hierarchical":
            t, per, share = 0.0, [0.0] * k, m
            inst = 1
            for i, d in enumerate(dims[:-1]):
                v = lv[d.level]
                pn = pi if d.inter else 1
                pd = inst if d.inter else 1
                t += 2 * _ring_half(v, d, share, pn, pd) + (d.n - 1) / d.n * share * g
                per[i] = 2 * (d.n - 1) / d.n * share
                share /= d.n
                inst *= d.n
            d = dims[-1]
            v = lv[d.level]
            ta = _ar_flat(sub, v, d, share, pi if d.inter else 1, inst, g)
            per[-1] = _ar_bytes(sub, d.n, share)
            return t + ta, per
        if name == "ring":
            return _flat_ring(dims, lv, m, g, p, 2, seg=sub)
        if name == "tree":
            t, per = 0.0, [0.0] * k
            prod = 1
            for i, d in enumerate(dims):
                v = lv[d.level]
                t += _ar_flat("tree", v, d, m, 1, 1, g)
                per[i] = 2 * (d.n - 1) * m * (p // (prod * d.n)) / p  # the leaders of each subtree
                prod *= d.n
            return t, per
        if name in ("recursive-doubling", "rabenseifner"):
            return _flat_xor(name, dims, lv, m, g, p, pi)
    if op in ("reduce-scatter", "allgather"):
        red = op == "reduce-scatter"
        if name == "hierarchical":
            t, per = 0.0, [0.0] * k
            inst = 1
            share = m
            for i in range(k):
                d = dims[i]
                v = lv[d.level]
                pn = pi if d.inter else 1
                pd = inst if d.inter else 1
                t += _rs_flat("ring", v, d, share, pn, pd, g, reduce=red)
                per[i] = (d.n - 1) / d.n * share
                share /= d.n
                inst *= d.n
            return t, per
        if name == "ring":
            return _flat_ring(dims, lv, m, g, p, 1, reduce=red, seg=sub)
        raise KeyError(name)
    if op in ("broadcast", "reduce"):
        red = op == "reduce"
        if name in ("tree", "hierarchical", "scatter-allgather"):
            t, per = 0.0, [0.0] * k
            prod = 1
            for i, d in enumerate(dims):
                v = lv[d.level]
                if name == "hierarchical":
                    a = sub[i]
                    tt = _bc_flat(a, v, d, m, 1, 1, g, red)
                else:
                    tt, a = _bc_flat(name, v, d, m, 1, 1, g, red), name
                t += tt
                inst = p // (prod * d.n)
                per[i] = _bc_bytes(a, d.n, m, v.topo == "bus" and not red) * d.n * inst / p
                prod *= d.n
            return t, per
        raise KeyError(name)
    if op == "alltoall":
        t, per = 0.0, [0.0] * k
        inner = 1
        for i, d in enumerate(dims):
            v = lv[d.level]
            pn = pi if d.inter else 1
            peers = (d.n - 1) * inner
            if name == "pairwise":
                a, bw = _step(v, "shift", d.n, 1, pn, inner if d.inter else 1)
                t += peers * (a + m / p / bw)
                per[i] = peers * m / p
            elif name == "direct":
                if sub is None or sub == i:
                    flows = peers * (pi if d.inter else 1)
                    if v.topo == "bus":
                        tt = v.lat + peers * m / p * flows * (inner if d.inter else 1) / v.medium / max(1, peers)
                    else:
                        a, bw = _step(v, "shift", d.n, max(1, d.n // 2), pn, inner if d.inter else 1)
                        tt = a + peers * m / p / bw
                    t = max(t, tt)
                per[i] = peers * m / p
            elif name == "bruck":
                for s in range(_lg(d.n)):
                    a, bw = _step(v, "shift", d.n, 1 << s, pn, inner if d.inter else 1)
                    t += a + m / 2 / bw
                per[i] = m / 2 * _lg(d.n)
            else:
                raise KeyError(name)
            inner *= d.n
        return t, per
    raise KeyError(name)


def _flat_ring(dims, lv, m, g, p, halves, reduce=True, seg=None):
    """One ring through every rank (hierarchical order). A step ends when every hop's message
    has arrived, so each of the ``halves (p-1)`` steps lasts as long as the slowest hop:
    ``max_j (latency_j + (m/p) / bw_j)`` over the levels j the ring crosses (with *seg* = j,
    level j's term alone; the caller takes the maximum). The ring's inter-node hops use all
    the node's NICs (one channel per NIC, as NCCL's rings do)."""
    fr = _ring_crossings(dims)
    worst = 0.0
    outer = math.prod(d.n for d in dims)
    for j, (d, f) in enumerate(zip(dims, fr)):
        v = lv[d.level]
        outer //= d.n
        if seg is not None and j != seg:
            continue
        a, bw = _step(v, "ring", d.n, 1, 1, 1)
        if v.topo == "bus":
            # the ring's hops on one medium (one per level domain) are on it at once
            bw = v.medium / max(1.0, p * f / max(1, outer))
        worst = max(worst, a + m / p / bw)
    t = halves * (p - 1) * worst
    if reduce:
        t += (p - 1) / p * m * g
    per = [halves * (p - 1) / p * m * f for f in fr]
    return t, per


@functools.lru_cache(maxsize=1024)
def _xor_schedule(name: str, dims: tuple, p: int, pi: int) -> tuple:
    """Where the messages of recursive doubling / Rabenseifner over the p ranks of *dims* go.

    Returns ``(fold, steps)``: ``fold`` is the crossing classes of MPICH's fold (empty when p is
    a power of two) and ``steps`` one ``(distance index, size factor, classes)`` entry per
    exchange, where *classes* is a tuple of ``(dim index, hop distance, senders, per node)``:
    how many ranks send across which dimension, how far along it, and the most of them on one
    node (they share its NICs; *pi* ranks sit on a node).

    Ranks sit on the dims in order (rank x has coordinate ``(x // stride) % n`` in each), the
    last node possibly partly filled. MPICH's fold [Thakur05 §4.5]: with ``r = p - p2``, each
    even rank among the first 2r sends its buffer to the next (odd) rank; the survivors (those odd
    ranks, then ranks 2r..p-1) take new ranks 0..p2-1, and the exchanges pair new ranks
    ``i`` and ``i xor d``. A pair crosses the outermost dimension in which the two real ranks'
    coordinates differ, so after a fold (or with a node size that is not a power of two) a
    partner distance smaller than the node size can still cross nodes.
    """
    import numpy as np

    p2 = 1 << (p.bit_length() - 1)
    steps = p2.bit_length() - 1
    r = p - p2
    surv = np.concatenate([2 * np.arange(r) + 1, np.arange(2 * r, p)]).astype(np.int64)
    strides = np.array([d.stride for d in dims], dtype=np.int64)
    sizes = np.array([d.n for d in dims], dtype=np.int64)

    def classes(a: np.ndarray, b: np.ndarray) -> tuple:
        ca = (a[:, None] // strides) % sizes
        cb = (b[:, None] // strides) % sizes
        diff = ca != cb
        # outermost differing dim (dims are innermost first); pairs of one rank never occur
        rev = diff[:, ::-1]
        k = len(dims) - 1 - np.argmax(rev, axis=1)
        hop = np.abs(ca[np.arange(a.size), k] - cb[np.arange(a.size), k])
        node = a // pi
        out = []
        for kk, hh in np.unique(np.stack([k, hop], axis=1), axis=0):
            sel = (k == kk) & (hop == hh)
            out.append((int(kk), int(hh), int(sel.sum()), int(np.bincount(node[sel]).max())))
        return tuple(out)

    fold = classes(2 * np.arange(r, dtype=np.int64), 2 * np.arange(r, dtype=np.int64) + 1) if r else ()
    if name == "recursive-doubling":
        dists = [1 << s for s in range(steps)]
    else:
        rs = [p2 >> (s + 1) for s in range(steps)]
        dists = rs + rs[::-1]
    idx = np.arange(p2, dtype=np.int64)
    sched = tuple(classes(surv[idx], surv[idx ^ d]) for d in dists)
    return fold, sched


def _flat_xor(name, dims, lv, m, g, p, pi):
    """Recursive doubling / Rabenseifner over all ranks, partners found across the dims (see
    :func:`_xor_schedule`); each exchange takes as long as its slowest crossing."""
    p2 = 1 << (p.bit_length() - 1)
    steps = p2.bit_length() - 1
    fold, sched = _xor_schedule(name, tuple(dims), p, pi)

    def slowest(cls, mm, domain):
        worst = 0.0
        for k, hop, _n, on_node in cls:
            d = dims[k]
            v = lv[d.level]
            a, bw = _step(v, "xor", d.n, max(1, hop), on_node if d.inter else 1, domain(d))
            worst = max(worst, a + mm / bw)
        return worst

    per = [0.0] * len(dims)
    t = 0.0
    if fold:
        t += 2 * slowest(fold, m, lambda d: 1) + m * g
        for k, _hop, n, _on in fold:
            per[k] += 2 * n * m / p  # the buffer there, the result back
    if name == "recursive-doubling":
        sizes = [m] * steps
        t += steps * m * g
    else:
        rs = [m / (2 << s) for s in range(steps)]
        sizes = rs + rs[::-1]
        t += (p2 - 1) / p2 * m * g
    for cls, mm in zip(sched, sizes):
        t += slowest(cls, mm, lambda d: d.stride if d.inter else 1)
        for k, _hop, n, _on in cls:
            per[k] += mm * n / p
    return t, per


def _ar_bytes(name: str, n: int, m: float) -> float:
    """Bytes per rank (averaged) of a flat all-reduce over n ranks."""
    p2 = 1 << (n.bit_length() - 1)
    extra = 2 * (n - p2) * m / n
    if name in ("ring", "tree"):  # the tree's reduce and broadcast move (n-1)/n m each, as the ring
        return ring_allreduce_bytes_per_worker(m, n)
    if name == "recursive-doubling":
        return extra + (p2.bit_length() - 1) * m * p2 / n
    return extra + 2 * (p2 - 1) / p2 * m * p2 / n  # rabenseifner


def _bc_bytes(name: str, n: int, m: float, bus: bool) -> float:
    """Bytes per rank (averaged) of a flat broadcast / reduce over n ranks."""
    if bus and name == "tree":
        return m / n  # one transmission on the medium
    if name == "tree":
        return (n - 1) / n * m
    # scatter-allgather: the binomial scatter's blocks of m/n, then every rank sends (n-1)/n m
    # in the ring all-gather
    return (n - 1) / n * m + m * _scatter_blocks(n) / (n * n)
