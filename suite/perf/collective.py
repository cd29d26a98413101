"""One collective cost model over a whole hardware profile (all network levels).

``collective_time(op, nbytes, group, profile)`` prices a collective for ranks placed on the
profile's hierarchy: an intra-node phase over ``network[0]`` and an inter-node phase over the
outermost level, as NCCL's hierarchical algorithms do. Every technique prices its communication
here, so a profile field (bandwidth, latency, topology, NICs per node) changes every technique
that crosses that level.

This module is the contract techniques build on; the algorithms behind ``algorithm="auto"`` are
documented per function.

References
----------
.. [Thakur05] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
   Operations in MPICH", IJHPCA 19(1), 2005.
.. [Patarasuk09] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from suite.errors import ProfileError
from suite.perf import comm

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import NetworkLevel, Profile

__all__ = ["OPS", "Group", "CollectiveCost", "collective_time", "group_of"]

OPS = ("allreduce", "reduce-scatter", "allgather", "broadcast", "reduce", "alltoall", "p2p")


@dataclass(frozen=True)
class Group:
    """How the ranks of a collective sit on the profile's hierarchy.

    Parameters
    ----------
    ranks_per_node : int
        Ranks of the group on each node (<= the node's devices); traffic between them crosses
        ``network[0]`` (the intra-node level) when the profile has more than one level.
    nodes : int
        Nodes the group spans; traffic between nodes crosses the outermost level.
    """

    ranks_per_node: int = 1
    nodes: int = 1

    def __post_init__(self):
        if self.ranks_per_node < 1 or self.nodes < 1:
            raise ValueError(f"group: ranks_per_node and nodes must be >= 1, got {self.ranks_per_node}, {self.nodes}")

    @property
    def size(self) -> int:
        return self.ranks_per_node * self.nodes


def group_of(profile: "Profile", ranks: int) -> Group:
    """The group of *ranks* ranks packed onto the profile's nodes (fill a node, then the next)."""
    per = max(1, min(ranks, profile.devices_per_node))
    nodes = -(-ranks // per)
    return Group(ranks_per_node=per, nodes=nodes)


@dataclass(frozen=True)
class CollectiveCost:
    """What :func:`collective_time` returns.

    Attributes
    ----------
    time : float
        Seconds.
    algorithm : str
        The algorithm priced (the chosen one under ``auto``).
    bytes_per_level : tuple of float
        Bytes each rank sends on each network level of the profile, innermost first.
    """

    time: float
    algorithm: str
    bytes_per_level: tuple[float, ...]


def _levels(profile: "Profile") -> tuple["NetworkLevel", "NetworkLevel"]:
    if not profile.network:
        raise ProfileError(f"profile {profile.name!r}: has no [[network]] level")
    return profile.network[0], profile.network[-1]


def _ab(level: "NetworkLevel", nics: int = 1) -> tuple[float, float]:
    if level.bandwidth <= 0:
        raise ProfileError(f"network level {level.name!r}: bandwidth must be > 0")
    return level.latency, 1.0 / (level.bandwidth * nics)


def collective_time(op: str, nbytes: float, group: Group, profile: "Profile",
                    algorithm: str = "auto") -> CollectiveCost:
    """Time of one collective of *nbytes* over *group* on *profile*.

    Parameters
    ----------
    op : str
        One of :data:`OPS`. ``nbytes`` is the full buffer (all-reduce, reduce, broadcast), the
        gathered / scattered total (all-gather, reduce-scatter), the bytes each rank sends to all
        others together (all-to-all), or the message (p2p, between two ranks on different nodes
        when ``group.nodes > 1``).
    nbytes : float
        Bytes (B).
    group : Group
    profile : Profile
    algorithm : str
        ``auto`` (the fastest priced), ``ring``, ``tree``, ``hierarchical``.

    Returns
    -------
    CollectiveCost

    Raises
    ------
    ValueError
        Unknown op or algorithm, negative size.
    ProfileError
        The profile has no network level.
    """
    if op not in OPS:
        raise ValueError(f"collective op must be one of {OPS}, got {op!r}")
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    inner, outer = _levels(profile)
    nlev = len(profile.network)
    nics = (profile.node.nics_per_node or 1) if profile.node is not None else 1
    a_in, b_in = _ab(inner)
    a_out, b_out = _ab(outer, nics if nlev > 1 else 1)
    pi, po = group.ranks_per_node, group.nodes
    zero = tuple(0.0 for _ in range(nlev))
    if group.size == 1 or nbytes == 0:
        return CollectiveCost(0.0, "none", zero)

    def per_level(inner_b: float, outer_b: float) -> tuple[float, ...]:
        out = [0.0] * nlev
        out[0] += inner_b if nlev > 1 else inner_b + outer_b
        if nlev > 1:
            out[-1] += outer_b
        return tuple(out)

    if op == "p2p":
        if po > 1:
            return CollectiveCost(comm.p2p_time(nbytes, a_out, b_out), "p2p", per_level(0.0, nbytes))
        return CollectiveCost(comm.p2p_time(nbytes, a_in, b_in), "p2p", per_level(nbytes, 0.0))
    if nlev == 1 or po == 1 or pi == 1:
        a, b = (a_in, b_in) if po == 1 else (a_out, b_out)
        p = group.size
        lvl_inner = po == 1
        if op == "allreduce":
            cands = {"ring": comm.ring_allreduce_time(nbytes, p, a, b),
                     "tree": comm.tree_allreduce_time(nbytes, p, a, b)}
            sent = {"ring": 2 * (p - 1) / p * nbytes, "tree": 2 * nbytes}
        elif op in ("reduce-scatter", "allgather"):
            cands = {"ring": comm.reduce_scatter_time(nbytes, p, a, b)}
            sent = {"ring": (p - 1) / p * nbytes}
        elif op in ("broadcast", "reduce"):
            cands = {"tree": comm.broadcast_time(nbytes, p, a, b)}
            sent = {"tree": nbytes}
        else:  # alltoall: p-1 messages of nbytes/p each
            cands = {"pairwise": (p - 1) * comm.p2p_time(nbytes / p, a, b)}
            sent = {"pairwise": (p - 1) / p * nbytes}
        name = min(cands, key=cands.get) if algorithm in ("auto", "hierarchical") else algorithm
        if name not in cands:
            raise ValueError(f"algorithm {algorithm!r} is not priced for {op}; expected one of {sorted(cands)}")
        s = sent[name]
        return CollectiveCost(cands[name], name, per_level(s, 0.0) if lvl_inner else per_level(0.0, s))
    # two levels: intra-node phase, inter-node phase on 1/pi of the data, intra-node phase
    if op == "allreduce":
        t = comm.hierarchical_allreduce_time(nbytes, pi, po, a_in, b_in, a_out, b_out)
        return CollectiveCost(t, "hierarchical", per_level(2 * (pi - 1) / pi * nbytes, 2 * (po - 1) / po * nbytes / pi))
    if op in ("reduce-scatter", "allgather"):
        t = comm.reduce_scatter_time(nbytes, pi, a_in, b_in) + comm.reduce_scatter_time(nbytes / pi, po, a_out, b_out)
        return CollectiveCost(t, "hierarchical", per_level((pi - 1) / pi * nbytes, (po - 1) / po * nbytes / pi))
    if op in ("broadcast", "reduce"):
        t = comm.broadcast_time(nbytes, po, a_out, b_out) + comm.broadcast_time(nbytes, pi, a_in, b_in)
        return CollectiveCost(t, "hierarchical", per_level(nbytes, nbytes))
    p = group.size
    t = (pi - 1) * comm.p2p_time(nbytes / p, a_in, b_in) + (p - pi) * comm.p2p_time(nbytes / p, a_out, b_out)
    return CollectiveCost(t, "pairwise", per_level((pi - 1) / p * nbytes, (p - pi) / p * nbytes))
