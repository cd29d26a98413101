"""One collective cost model over a whole hardware profile (all network levels).

The module of the package's entry point; the pieces live beside it: :mod:`.placement` (groups,
dimensions, derived levels), :mod:`.flat` (one step, one-dimension algorithms), :mod:`.multilevel`
(algorithms across levels), :mod:`.nccl` (NCCL's tuner).

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
:func:`suite.perf.network.nccl.library_of`):

* ``nccl``: NCCL's tuner over ring / tree / NVLS / NVLS-tree / CollNet and the LL / LL128 /
  Simple protocols, with per-hop latencies and protocol factors from NCCL's tuning model and a
  size-dependent efficiency (:mod:`suite.perf.network.nccl`); all-to-all and p2p as NCCL's
  point-to-point sends (``direct`` / ``p2p``);
* ``mpi``: every algorithm above, the fastest kept (MPICH's algorithms; ``algorithm="mpich"``
  applies MPICH's switch points instead);
* ``gloo``: Gloo's all-reduce algorithms, ring and halving-doubling (``rabenseifner``), rings
  for reduce-scatter / all-gather, binomial trees for broadcast / reduce, pairwise all-to-all;
* ``ps``: a sharded parameter server [Li14]: an all-reduce is a push of every rank's buffer to
  the server shards and a pull of the result (two ``direct`` all-to-alls of the buffer); the
  other operations as ``mpi``.

A named algorithm is priced as named whatever the library (``nvls``, ``nvls-tree`` and
``collnet`` only under NCCL). The library is read only where it matters, ``auto`` (but for a
p2p) and the NCCL-named algorithms, so a profile recording its reads
(:mod:`suite.hardware.recording`) lists ``communication.library`` only there, and ``suite run``
warns that an override of it was never read elsewhere.

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


from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

import suite.perf.network.nccl as _nccl
from suite.hardware.recording import CASE_SEEN, RECORDED, first_in_case, unrecorded
from suite.hardware.tracking import _ModelView as _TrackedView
from suite.perf.network.flat import _step
from suite.perf.network.multilevel import Dims, Levels, Sub, _price, _spread
from suite.perf.network.placement import (
    CollectiveCost,
    Dim,
    Group,
    _dims,
    _LINES,
    _prepare,
    _real,
    _shared,
    _touch,
    dimensions,
    group_of,
    reduction_gamma,
)

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


#: one candidate: (label, affine pieces (A, B) whose maximum is the time, bytes per dim per byte)
_Line = tuple[str, tuple[tuple[float, float], ...], list[float]]


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
        ``auto`` (the fastest of the library's candidates; NCCL's tuner model under NCCL),
        ``mpich`` (MPICH's size-based switch) or one of :data:`ALGORITHMS` ``[op]``. ``hierarchical`` on a group that crosses one level is
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
    _check_call(op, nbytes, algorithm)
    lv, intra, g, token = _prepare(profile)
    dims = _dims(lv, intra, group)
    # the library (read, and so recorded as read, only here) chooses among auto's candidates and
    # admits an NCCL-named algorithm; a p2p and every other named algorithm are priced alike under
    # each library: "" there, so that an override of it is reported unread
    library = (_library(profile, op, algorithm) if (algorithm == "auto" and op != "p2p")
               or algorithm in NCCL_ALGORITHMS else "")
    # the path the price takes (what it reads): NCCL's model, the parameter server or alpha-beta
    path = ("nccl" if library == "nccl" and op != "alltoall" and op != "p2p" else
            "ps" if algorithm == "ps" or (library == "ps" and op == "allreduce") else "ab")
    _record(profile, dims[-1:] if op == "p2p" else dims, op, nbytes, group, algorithm, path)
    if not dims or nbytes == 0:
        return CollectiveCost(0.0, "none", (0.0,) * len(lv))
    m = float(nbytes)
    if op == "p2p":
        return _p2p_cost(m, group, dims[-1], lv)
    if algorithm == "mpich":
        algorithm = _mpich_choice(op, m, group.size, dims)
    if path == "ps":
        push = collective_time("alltoall", m, group, profile, "direct")  # every rank's buffer to the shards
        return CollectiveCost(2 * push.time, "ps", tuple(2 * b for b in push.bytes_per_level))
    pi = group.ranks_per_node if len(dims) > 1 or dims[0].inter else 1
    if path == "nccl":
        return _nccl_cost(op, m, group, profile, dims, lv, pi, g, token, algorithm)
    if library == "nccl" and op == "alltoall":  # (auto: an NCCL-named algorithm is an all-reduce)
        algorithm = "direct"  # NCCL's all-to-all: every send and receive posted at once
    names: str | tuple[str, ...] = _GLOO[op] if library == "gloo" else algorithm  # (auto: gloo admits no NCCL name)
    return _fastest(_cached_lines(op, names, group, dims, lv, pi, g, token), m, dims, len(lv))


def _cached_lines(op: str, names: str | tuple[str, ...], group: Group, dims: Dims, lv: Levels, pi: int, g: float,
                  token: int) -> list[_Line]:
    """:func:`_lines` for this profile (*token*), placement and algorithm, priced once."""
    key = (token, op, group.ranks_per_node, group.nodes, group.ranks, group.concurrent, names)
    lines: list[_Line] | None = _LINES.get(key)
    if lines is None:
        shared = _shared(lv, group.concurrent) if group.concurrent > 1 else lv
        lines = _lines(op, names, dims, shared, pi, g, group.size)
        if len(_LINES) > 100_000:
            _LINES.clear()
        _LINES[key] = lines
    return lines


def _check_call(op: str, nbytes: float, algorithm: str) -> None:
    """ValueError naming the argument, what it expects and what it got."""
    if op not in OPS:
        raise ValueError(f"collective op must be one of {OPS}, got {op!r}")
    if not nbytes >= 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    named = ALGORITHMS[op] + (NCCL_ALGORITHMS + ("ps",) if op == "allreduce" else ())
    if algorithm not in ("auto", "mpich") and algorithm not in named:
        raise ValueError(f"algorithm for {op}: expected auto, mpich or one of {named}, got {algorithm!r}")


def _library(profile: "Profile", op: str, algorithm: str) -> str:
    """The profile's communication library; ValueError for an NCCL algorithm under another one."""
    library = _nccl.library_of(profile)
    if algorithm in NCCL_ALGORITHMS and library != "nccl":
        raise ValueError(f"algorithm {algorithm!r} for {op}: expected a profile whose collectives run on NCCL, "
                         f"got library {library!r} ([communication] library)")
    return library


def _record(profile: "Profile", crossed: Dims, op: str, nbytes: float, group: Group, algorithm: str,
            path: str) -> None:
    """Report the call to a tracked profile view (the fields read) and to open :class:`record_levels`."""
    # a profile recorded in place (RECORDED, empty otherwise: no call per collective) or a view;
    # what _touch reads follows from the levels crossed (the group's size and placement), the op and
    # the path the price takes (NCCL's model, the parameter server, alpha-beta)
    seen: object = profile
    if (RECORDED and id(profile) in RECORDED) or type(seen) is _TrackedView:
        key = (id(profile), op, path, group.ranks_per_node, group.nodes, group.ranks, group.concurrent)
        if key not in CASE_SEEN and first_in_case(key):  # a repeat is skipped without the call
            _touch(profile, crossed, op, path, group)
    if _RECORDERS and nbytes > 0:
        for rec in _RECORDERS:
            rec.levels.update(d.level for d in crossed)
            rec.calls.append((op, nbytes, group, algorithm))


def _p2p_cost(m: float, group: Group, d: Dim, lv: Levels) -> CollectiveCost:
    """``ranks_per_node`` pairs at once over the outermost crossed level *d* (a pair on two nodes
    crosses that level only); concurrent copies share the node's NICs (and a bus) with them."""
    v = (_shared(lv, group.concurrent) if group.concurrent > 1 else lv)[d.level]
    pn = group.ranks_per_node if d.inter else 1
    a, bw = _step(v, "single", 2, 1, pn, pn)
    return CollectiveCost(a + m / bw, "p2p", _spread(len(lv), (d,), [m]))


def _fastest(lines: list[_Line], m: float, dims: Dims, nlev: int) -> CollectiveCost:
    """The line with the least time at m bytes (the first of equals)."""
    best: tuple[float, str, list[float]] | None = None
    for name, pieces, per in lines:
        if len(pieces) == 1:
            t = pieces[0][0] + pieces[0][1] * m
        else:
            t = max(a0 + b0 * m for a0, b0 in pieces)
        if best is None or t < best[0] * (1 - 1e-12):
            best = (t, name, per)
    assert best is not None  # _lines raises when no algorithm is defined
    t, name, per = best
    return CollectiveCost(t, name, _spread(nlev, dims, [x * m for x in per]))



_RECORDERS: list["Recording"] = []

#: link kind of an intra-node level that does not declare one: NVLink by its name, else PCIe
_NVLINK_NAMES = ("nvlink", "nvswitch", "nvl")
#: achieved fraction of a level's bandwidth when the level declares none, per link kind: NCCL's
#: counted per-link NVLink bandwidth over the link's rate (topo.h SM80/SM90 20 / 20.6 of 25 GB/s,
#: SM100 40.1 of 50), its PCIe Gen3 x16 figure (PCI_BW 12 of 15.75 GB/s); NICs at their rate
_LINK_EFFICIENCY = {"nvlink": 0.8, "pcie": 0.76, "net": 1.0}


def _nccl_topo(profile: "Profile", group: Group, dims: Dims, lv: Levels) -> _nccl.Topo:
    """The placed group as suite.perf.network.nccl sees it (see its module docstring)."""
    net = profile.network
    comm = getattr(profile, "communication", None)
    intra_dim = next((d for d in dims if not d.inter), None)
    inter_dims = [d for d in dims if d.inter]
    nodes = math.prod(d.n for d in inter_dims) if inter_dims else 1
    ppn = intra_dim.n if intra_dim is not None else 1
    intra_bw, link, nvls, intra_lat, transport = math.inf, "net", 0.0, 0.0, "p2p"
    if intra_dim is not None:
        level, v = net[intra_dim.level], lv[intra_dim.level]
        link = level.link or ("nvlink" if any(k in level.name.lower() for k in _NVLINK_NAMES) else "pcie")
        eff = level.efficiency or _LINK_EFFICIENCY[link]
        intra_bw = _step(v, "ring", intra_dim.n, 1, 1, 1)[1] * eff
        path, host = getattr(level, "path", None), _host_vendor(profile)
        if link == "pcie":
            intra_bw = _nccl.pcie_path_bw(intra_bw, path, host)
            transport = _nccl.transport(path, host, profile.devices_per_node)
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
                      intra_lat=intra_lat, transport=transport)


def _host_vendor(profile: "Profile") -> str | None:
    """The host CPU's vendor (``node.cpu``'s device profile), lower case; None without one."""
    cpu = getattr(profile, "cpu", None)
    vendor = getattr(cpu, "vendor", None) if cpu is not None else None
    return str(vendor).lower() if vendor else None


def _nccl_cost(op: str, m: float, group: Group, profile: "Profile", dims: Dims, lv: Levels, pi: int, g: float,
               token: int, algorithm: str) -> CollectiveCost:
    """The fastest of NCCL's (algorithm, protocol) candidates (suite.perf.network.nccl); bytes per level
    as the ring (all-reduce, reduce-scatter, all-gather) or the binomial tree (broadcast, reduce)
    over the same placement would move them."""
    key = (token, "nccl", op, group.ranks_per_node, group.nodes, group.ranks, group.concurrent, algorithm)
    hit = _LINES.get(key)
    if hit is None:
        with unrecorded():  # priced once per profile: _record records what the call depends on
            hit = _nccl_priced(op, group, _real(profile), dims, lv, pi, g, algorithm)
        _LINES[key] = hit
    cands, curves, per = hit
    t, c = _nccl.best(cands, m, curves)
    return CollectiveCost(t, c.name, _spread(len(lv), dims, [x * m for x in per]))


def _nccl_priced(op: str, group: Group, real: "Profile", dims: Dims, lv: Levels, pi: int, g: float,
                 algorithm: str) -> tuple[Any, Any, Any]:
    """:func:`_nccl_cost`'s candidates, efficiency curves and bytes per level, computed."""
    shared = _shared(lv, group.concurrent) if group.concurrent > 1 else lv
    cands = _nccl.candidates(op, _nccl_topo(real, group, dims, shared), algorithm)
    comm = real.communication
    curves = {**_nccl.SIMPLE_EFFICIENCY, **((comm.efficiency or {}) if comm is not None else {})}
    ref = "ring" if op in ("allreduce", "reduce-scatter", "allgather") else "tree"
    per = _lines(op, ref, dims, shared, pi, g, group.size)[0][2]
    return cands, curves, per


class Recording:
    """What :class:`record_levels` collected: ``levels`` (set of network level indices crossed
    with bytes to move) and ``calls`` (every ``(op, nbytes, group, algorithm)`` priced)."""

    def __init__(self) -> None:
        self.levels: set[int] = set()
        self.calls: list[tuple[str, float, Group, str]] = []

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

    def __exit__(self, *exc: object) -> None:
        _RECORDERS.remove(self._r)


def _lines(op: str, algorithm: str | tuple[str, ...], dims: Dims, lv: Levels, pi: int, g: float,
           p: int) -> list[_Line]:
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
    out: list[_Line] = []
    for name in names:
        if len(dims) > 1 and ((name == "ring" and op in ("allreduce", "reduce-scatter", "allgather"))
                              or (name == "direct" and op == "alltoall")):
            groups: list[tuple[Sub, ...]] = [tuple(range(len(dims)))]  # the slowest level bounds: max of per-level pieces
        else:
            groups = [(s,) for s in _subs(op, name, dims)]
        for group in groups:
            pieces: list[tuple[float, float]] = []
            per: list[float] = []
            try:
                for sub in group:
                    t0, _ = _price(op, name, 0.0, dims, lv, pi, g, p, sub)
                    t1, per = _price(op, name, 1.0, dims, lv, pi, g, p, sub)
                    pieces.append((t0, t1 - t0))
            except KeyError:
                continue
            sub = group[0]
            label = str(sub) if (len(dims) == 1 and name == "hierarchical") else name
            out.append((label, tuple(pieces), per))
    if not out:
        raise ValueError(f"algorithm {algorithm!r} is not defined for {op} over "
                         f"{'x'.join(str(d.n) for d in dims)} ranks")
    return out


def _subs(op: str, name: str, dims: Dims) -> tuple[Sub, ...]:
    """The sub-choices of an algorithm (each an affine line): the flat algorithm a one-level
    'hierarchical' stands for, the last level's all-reduce, each level's broadcast."""
    if name != "hierarchical":
        return (None,)
    if len(dims) == 1:
        return tuple(a for a in ALGORITHMS[op] if a != "hierarchical")
    if op == "allreduce":
        return ("ring", "tree", "recursive-doubling", "rabenseifner")
    if op in ("broadcast", "reduce"):
        return tuple(itertools.product(("tree", "scatter-allgather"), repeat=len(dims)))
    return (None,)


def _mpich_choice(op: str, m: float, p: int, dims: Dims) -> str:
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
