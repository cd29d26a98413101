"""NCCL's collectives as its tuner prices them, on a profile's levels.

:func:`suite.perf.network.collective_time` comes here when the profile's communication library
is ``nccl`` (the default for GPU profiles, see :func:`library_of`) and the algorithm is ``auto``
(or one of NCCL's own names, :data:`ALGORITHMS`). NCCL picks, per call, the (algorithm,
protocol) pair its tuning model predicts fastest [NCCL-tuning]; we re-implement that model from
what its source says, with the bandwidths taken from the profile instead of NCCL's topology
search:

    T(a, p, m) = launch_overhead + lat(a, p) + m / (algbw(a, p) * eff(m / algbw(a, p)))

Algorithms (all-reduce): ``ring``; ``tree`` (NCCL's double binary tree across nodes, a chain
inside a node); ``nvls`` (NVLink SHARP: the NVSwitch reduces, one node) where the intra-node level
declares ``reduction = "nvls"``; ``nvls-tree`` (NVLS inside each node, a tree across nodes);
``collnet`` (in-network reduction, SHARP) where an inter-node level declares
``reduction = "sharp"``. Reduce-scatter, all-gather, broadcast and reduce run as rings (what
NCCL's tuner allows them besides NVLS/CollNet); all-to-all and p2p are NCCL's point-to-point
sends (the generic ``direct`` / ``p2p`` pricing). Protocols ``LL``, ``LL128`` (NVLink only) and
``Simple``; NVLS, NVLS-tree and CollNet use ``Simple`` only.

Latency, as NCCL's ``ncclTopoTuneModel`` composes it [NCCL-tuning]: a base latency per
(algorithm, protocol) (:data:`BASE_LAT`) plus per-hop latencies per link kind (:data:`HW_LAT`,
``nvlink`` / ``pcie`` for the intra-node hops, ``net`` for the inter-node ones):

* ring: ``(nsteps - ninter) * intra + ninter * inter`` with ``nsteps = 2 (n - 1)`` for all-reduce
  (``n - 1`` for reduce-scatter / all-gather, ``n`` for broadcast / reduce) and ``ninter = 2 N``
  (``N - 1``, ``N``) on N > 1 nodes; an LL intra hop costs 1.8x on several nodes, and an intra
  hop is at least NCCL's network post overhead (1 us, 3 us for Simple) there;
* tree: ``2 ((ppn - 1) intra + log2(N) inter)``; nvls: the NVLS hop (+ one inter hop on
  several nodes); nvls-tree: ``intra + 2 log2(N) inter``; collnet: ``2 (ppn - 1) intra + inter``.

A hop costs the larger of NCCL's constant for its link kind and the level's declared
``latency`` (the largest crossed inter-node level's for a network hop), so a link slower to
start a message than NCCL's constants (TCP over 10 GbE: tens of us) keeps its own, and NCCL's
constants stand for any faster one. The profile's software latency is
``[communication] launch_overhead``.

Bandwidth: NCCL's bus bandwidth is its channels times the per-channel bandwidth its topology
search found; here it is the slowest crossed level's effective bandwidth
(``bandwidth * efficiency``, per GPU inside a node, the node's NICs together across nodes), then
NCCL's refinements (a two-node tree is bounded by twice the NICs' rate, since each node's data
crosses once each way: it exceeds the ring's NIC bound, as NCCL's does, only that far): LL carries half its bytes as flags and runs at a quarter of the bus bandwidth
capped at ``llMaxBw`` (87.7 GB/s on one node, 39.0 on two, 20.4 on more: Intel hosts), LL128 at
0.92 of it (ring; tree 7/9 on one node, 120/128 across), tree 0.92 and LL 1/3.8, CollNet 0.9.
Bus to algorithm bandwidth: ``n / nsteps`` for rings, 1/2 for trees and CollNet. NVLS and
NVLS-tree run at the level's ``reduction_bandwidth`` (a measured algorithm bandwidth of the
in-switch all-reduce), NVLS-tree no faster than the node's NICs (half of them beyond two
nodes: the tree's inner nodes send to two children).

PCIe paths and transports: an intra-node PCIe level may declare the ``path`` between its GPUs as
``nvidia-smi topo -m`` names it (``PIX``, ``PXB``, ``PHB`` -- nvidia-smi's ``NODE`` --, ``SYS``).
NCCL uses its P2P transport (direct GPU-to-GPU stores and loads) up to ``NCCL_P2P_LEVEL``, by
default ``PXB`` ("don't use P2P across CPU host bridges"), ``SYS`` on AMD hosts with at most two
GPUs [NCCL-paths]; farther apart, the SHM transport, whose buffers sit in host shared memory: the
sender's GPU writes each chunk there, the receiver's reads it over PCIe [NCCL-shm]
(:func:`transport`). NCCL's tuner prices the path, not the transport: through an Intel CPU's root
complex (``PHB`` / ``SYS`` on an Intel host, :attr:`Topo.host`) its topology search charges each
channel 6/5 of its bandwidth on the PCIe links (``INTEL_P2P_OVERHEAD``: the root complex splits GPU
traffic into 64 B TLPs), so the path carries ``bandwidth * efficiency / 1.2``
(:func:`pcie_path_bw`); NCCL's latencies are those of a PCIe hop either way.

Size-dependent efficiency ``eff``: NCCL's model is a straight line per (algorithm, protocol);
measured transfers reach their bandwidth only for large messages (the pipeline's chunks,
channels and steps must fill). The curve's abscissa is the transfer's ideal duration
``m / algbw`` (s), so a slower network, whose pipeline fills in the same time, reaches a given
fraction at a smaller message (the 3-node A100 anchor of tests/perf/test_nccl_anchor.py misses by
17 %; with a curve in bytes, by 32 %). :data:`SIMPLE_EFFICIENCY` holds one curve per family:
``ring`` (ring and tree on one node, Simple), ``nvls`` (NVLS on one node) and ``multi-node``
(every algorithm across nodes, Simple and LL128: both go through the network proxy's pipeline),
each derived from ONE published nccl-tests table (marked ``calibration = true`` in
``validation/collectives/``, left out of every error figure) by
``eff = (m / algbw) / (T_measured - launch_overhead - lat)``; a profile may declare its own
(``[communication] efficiency.<family>``). LL, and LL128 on one node, keep NCCL's fixed factors.

References
----------
.. [NCCL-tuning] NVIDIA NCCL, ``src/graph/tuning.cc`` (``baseLat``, ``hwLat``, ``llMaxBws``,
   the "model refinements" and the latency composition of ``ncclTopoTuneModel``; v2.19) and
   ``src/graph/topo.h`` (``SM80/SM90/SM100_NVLINK_BW``: the per-link NVLink bandwidth NCCL
   counts, 20 / 20.6 / 40.1 GB/s of a 25 / 25 / 50 GB/s link).
.. [NCCL-paths] NVIDIA NCCL, ``src/graph/paths.cc`` (``ncclTopoCheckP2p``: the default P2P level
   ``PATH_PXB``, ``PATH_SYS`` for AMD hosts with <= 2 GPUs; v2.19 and later; earlier versions took
   ``PATH_PXB`` on Broadwell and ARM hosts) and ``src/graph/search.cc`` (``followPath``: a
   ``PATH_PHB`` path from a GPU through an Intel CPU costs ``INTEL_P2P_OVERHEAD(bw) = bw * 6/5``,
   ``src/graph/topo.h``).
.. [NCCL-shm] NVIDIA NCCL, ``src/transport/shm.cc``: the SHM transport's send and receive buffers
   are host shared memory mapped into both GPUs ("via direct shared memory").
.. [NCCL-309] NVIDIA/nccl-tests issue #309 (2025): 8 H100 + 8 NDR NICs per node; NCCL picks Ring/LL
   up to 1 MB and NVLS/Simple above on one node, NVLS-tree across nodes (K. Iskra, NVIDIA).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from suite.perf.network.levels import floor_log2

__all__ = ["ALGORITHMS", "PROTOCOLS", "BASE_LAT", "HW_LAT", "SIMPLE_EFFICIENCY", "Candidate", "candidates",
           "efficiency_at", "library_of", "LIBRARIES", "PCI_PATHS", "INTEL_P2P_OVERHEAD", "transport", "pcie_path_bw",
           "Topo"]

LIBRARIES = ("nccl", "mpi", "gloo", "ps")
PROTOCOLS = ("LL", "LL128", "Simple")
#: NCCL's algorithm names accepted by collective_time (besides ``auto``)
ALGORITHMS = ("ring", "tree", "nvls", "nvls-tree", "collnet")

_US = 1e-6
#: base latency per (algorithm, protocol), us [NCCL-tuning ``baseLat``]
BASE_LAT = {("tree", "LL"): 6.8, ("tree", "LL128"): 14.0, ("tree", "Simple"): 0.0,
            ("ring", "LL"): 6.6, ("ring", "LL128"): 14.0, ("ring", "Simple"): 8.4,
            ("collnet", "Simple"): 0.0, ("nvls", "Simple"): 0.0, ("nvls-tree", "Simple"): 0.0}
#: per-hop latency per link kind and (algorithm, protocol), us [NCCL-tuning ``hwLat``]
HW_LAT = {
    "nvlink": {("tree", "LL"): .6, ("tree", "LL128"): 1.25, ("tree", "Simple"): 28.0,
               ("ring", "LL"): .6, ("ring", "LL128"): 1.9, ("ring", "Simple"): 3.4,
               ("collnet", "Simple"): 2.8, ("nvls", "Simple"): 23.0, ("nvls-tree", "Simple"): 23.0},
    "pcie": {("tree", "LL"): 1.0, ("tree", "LL128"): 1.9, ("tree", "Simple"): 28.0,
             ("ring", "LL"): 1.0, ("ring", "LL128"): 2.5, ("ring", "Simple"): 5.7,
             ("collnet", "Simple"): 2.8, ("nvls", "Simple"): 0.0, ("nvls-tree", "Simple"): 0.0},
    "net": {("tree", "LL"): 5.0, ("tree", "LL128"): 8.5, ("tree", "Simple"): 28.0,
            ("ring", "LL"): 2.7, ("ring", "LL128"): 4.0, ("ring", "Simple"): 14.0,
            ("collnet", "Simple"): 30.0, ("nvls", "Simple"): 18.0, ("nvls-tree", "Simple"): 14.0},
}
#: PCIe paths between two GPUs, nearest first, as nvidia-smi topo -m and NCCL_P2P_LEVEL name them
#: (nvidia-smi's NODE, across the host bridges of one NUMA node, is NCCL's PHB) [NCCL-paths]
PCI_PATHS = ("PIX", "PXB", "PHB", "SYS")
#: what NCCL's topology search charges a GPU's PCIe path through an Intel root complex, per unit
#: of bandwidth [NCCL-paths: topo.h INTEL_P2P_OVERHEAD(bw) = bw * 6/5, search.cc followPath]
INTEL_P2P_OVERHEAD = 6 / 5
_NET_OVERHEAD = 1.0  # us per network post (Intel hosts) [NCCL-tuning getNetOverhead]
_LL_MAX_BW = (87.7e9, 39.0e9, 20.4e9)  # llMaxBws, Ampere/Hopper on one node; Intel hosts on 2 / >2 nodes

#: Achieved fraction of the bandwidth against the transfer's ideal duration m / algbw (s), per
#: family; log-linear between points, clamped outside. Each from one calibration table
#: (rows marked calibration = true, see validation/collectives/ and docs/validation.md):
#: ``ring`` (ring and tree) from Azure ND A100 v4 (1 x 8 A100, ring/tree; azure-nd-a100-v4.csv),
#: ``nvls`` from Azure ND H100 v5 (1 x 8 H100, NVLS; azure-nd-h100-v5.csv), ``multi-node`` from
#: nccl-tests #309's 2 x 8 H100 table (qoofyk; NVLS-tree). Derived by
#: suite.validate_collectives.derive_efficiency (tests/perf/test_validate_collectives.py re-derives them).
SIMPLE_EFFICIENCY: dict[str, tuple[tuple[float, float], ...]] = {
    "ring": ((0.0001223, 0.668), (0.0004893, 0.791), (0.001957, 0.927), (0.007829, 0.96), (0.03132, 0.963)),
    "nvls": ((3.813e-06, 0.454), (1.525e-05, 0.651), (6.101e-05, 0.666), (0.000244, 0.839), (0.0009761, 0.907),
             (0.003905, 0.977), (0.01562, 0.99)),
    "multi-node": ((3.813e-06, 0.186), (1.525e-05, 0.353), (6.101e-05, 0.459), (0.000244, 0.588),
                   (0.0009761, 0.797), (0.003905, 0.884), (0.01562, 0.906), (0.06247, 0.91)),
}


def library_of(profile: Any) -> str:
    """The communication library a profile's collectives run on: ``[communication] library``
    when declared, else ``nccl`` for a GPU profile and ``mpi`` for any other."""
    comm = getattr(profile, "communication", None)
    if comm is not None and comm.library:
        return str(comm.library)
    dev = profile.device
    return "nccl" if dev is not None and dev.type == "gpu" else "mpi"


def efficiency_at(curve: "Curve", m: float) -> float:
    """The curve's fraction at abscissa *m* (here a duration, s): log-linear between points,
    clamped outside them."""
    if m <= curve[0][0]:
        return float(curve[0][1])
    if m >= curve[-1][0]:
        return float(curve[-1][1])
    for (s0, f0), (s1, f1) in zip(curve, curve[1:]):
        if s0 <= m <= s1:
            w = (math.log(m) - math.log(s0)) / (math.log(s1) - math.log(s0))
            return float(f0 + w * (f1 - f0))
    return float(curve[-1][1])  # pragma: no cover - unreachable for sorted points


@dataclass(frozen=True)
class Candidate:
    """One (algorithm, protocol) NCCL could run: ``time(m) = lat + m / (algbw * eff(m))`` with
    ``eff`` the family's curve (1 without one). ``lat`` in s (launch overhead included),
    ``algbw`` in B/s."""

    algorithm: str
    protocol: str
    lat: float
    algbw: float
    family: str | None

    @property
    def name(self) -> str:
        return f"{self.algorithm}/{self.protocol}"


@dataclass(frozen=True)
class Topo:
    """What the NCCL model needs of a placed group: ranks, nodes, ranks per node, the intra-node
    link kind and effective bandwidth (B/s per GPU), the nodes' effective NIC bandwidth (B/s per
    node, the slowest crossed inter-node level), in-network reduction, launch overhead (s)."""

    n: int
    nodes: int
    ppn: int
    intra_link: str
    intra_bw: float
    inter_bw: float
    nvls_bw: float
    sharp: bool
    launch: float
    inter_lat: float = 0.0  # s, the crossed inter-node levels' declared latency (the largest)
    intra_lat: float = 0.0  # s, the intra-node level's declared latency
    transport: str = "p2p"  # between the node's GPUs: "p2p" or "shm" (host memory), see transport()


def transport(path: str | None, host: str | None, gpus: int) -> str:
    """How NCCL moves data between two GPUs of a node whose PCIe path is *path* (one of
    :data:`PCI_PATHS`; None: NVLink or undeclared) on a host whose CPU vendor is *host* with *gpus*
    GPUs [NCCL-paths, NCCL-shm]: ``"p2p"`` within NCCL's default P2P level (``PXB``; ``SYS`` on an
    AMD host with at most 2 GPUs), else ``"shm"`` (through host shared memory).

    Raises
    ------
    ValueError
        *path* not one of :data:`PCI_PATHS`.
    """
    if path is None:
        return "p2p"
    if path not in PCI_PATHS:
        raise ValueError(f"PCIe path: expected one of {PCI_PATHS}, got {path!r}")
    level = "SYS" if (host == "amd" and gpus <= 2) else "PXB"
    return "p2p" if PCI_PATHS.index(path) <= PCI_PATHS.index(level) else "shm"


def pcie_path_bw(bw: float, path: str | None, host: str | None) -> float:
    """The per-GPU bandwidth (B/s) NCCL's topology search counts on a PCIe path of *bw* B/s: divided
    by :data:`INTEL_P2P_OVERHEAD` when the path crosses an Intel CPU's root complex (``PHB`` or
    ``SYS`` on an Intel host), else *bw* [NCCL-paths, search.cc ``followPath``]."""
    if path in ("PHB", "SYS") and host == "intel":
        return bw / INTEL_P2P_OVERHEAD
    return bw


@dataclass(frozen=True)
class _Call:
    """What every candidate of one call shares: the op, the placed group and the ring's step counts
    (``nsteps`` steps, ``ninter`` of them across nodes) [NCCL-tuning ``ncclTopoTuneModel``]."""

    op: str
    t: Topo
    multi: bool
    intra_kind: str
    ll_max: float
    bus_ring: float
    nsteps: int
    ninter: int

    @classmethod
    def of(cls, op: str, t: Topo) -> "_Call":
        multi = t.nodes > 1
        bus_ring = min(t.intra_bw if t.ppn > 1 else math.inf, t.inter_bw if multi else math.inf)
        if op == "allreduce":
            nsteps, ninter = 2 * (t.n - 1), (2 * t.nodes if multi else 0)
        elif op in ("reduce-scatter", "allgather"):
            nsteps, ninter = t.n - 1, t.nodes - 1
        else:  # broadcast, reduce
            nsteps, ninter = t.n, (t.nodes if multi else 0)
        return cls(op, t, multi, t.intra_link if t.ppn > 1 else "net", _LL_MAX_BW[min(t.nodes, 3) - 1], bus_ring,
                   nsteps, ninter)

    def hop(self, kind: str, a: str, p: str) -> float:
        """One hop's latency (us): NCCL's constant for the link kind, or the level's declared latency
        when that is larger (a link slower to start a message keeps its own)."""
        return max(HW_LAT[kind][(a, p)], (self.t.inter_lat if kind == "net" else self.t.intra_lat) / _US)

    def family(self, p: str, one_node: str) -> str | None:
        """The efficiency curve a candidate's bandwidth follows: across nodes every pipelined protocol
        goes through the network proxy's pipeline; on one node only Simple's chunks ramp up."""
        if self.multi:
            return "multi-node" if p != "LL" else None
        return one_node if p == "Simple" else None

    def intra_hop(self, a: str, p: str) -> float:
        """An intra-node hop (us): LL's costs 1.8x on several nodes [NCCL-tuning]."""
        return self.hop(self.intra_kind, a, p) * (1.8 if (self.multi and p == "LL") else 1.0)


def candidates(op: str, t: Topo, algorithm: str = "auto") -> list[Candidate]:
    """Every (algorithm, protocol) NCCL's tuner weighs for *op* on *t* (only *algorithm*'s when
    one is named). Raises ValueError when none is defined (e.g. ``nvls`` without an NVLS level)."""
    c = _Call.of(op, t)
    if not math.isfinite(c.bus_ring):  # pragma: no cover - a group of one rank never gets here
        return []
    out: list[Candidate] = []
    for p in ("LL", "LL128", "Simple") if t.intra_link == "nvlink" else ("LL", "Simple"):
        if algorithm in ("auto", "ring"):
            out.append(_ring(c, p))
        if op == "allreduce" and algorithm in ("auto", "tree"):
            out.append(_tree(c, p))
    if op == "allreduce":
        out += _in_network(c, algorithm)
    if not out:
        raise ValueError(f"algorithm {algorithm!r} is not defined for {op} under NCCL on this group "
                         f"({t.nodes} node(s) x {t.ppn} rank(s); nvls needs a level with reduction = 'nvls', "
                         f"collnet one with reduction = 'sharp')")
    return out


def _ring(c: _Call, p: str) -> Candidate:
    """The ring with protocol *p*: LL at a quarter (a third on one node, but for reductions) of the
    bus bandwidth capped at llMaxBw, LL128 at 0.92 (0.7 without NVLink peers); latency as the
    module docstring composes it."""
    t = c.t
    bus = c.bus_ring
    if p == "LL":
        bus = min(c.ll_max, bus / (4 if (c.multi or c.op in ("allreduce", "reduce")) else 3))
    elif p == "LL128":
        bus *= 0.92 if t.ppn >= 2 else 0.7
    intra = c.intra_hop("ring", p)
    if c.multi:
        intra = max(intra, _NET_OVERHEAD * (3 if p == "Simple" else 1))
    if c.op in ("broadcast", "reduce"):
        kind = "net" if c.multi else c.intra_kind
        lat = BASE_LAT["ring", p] + c.nsteps * c.hop(kind, "tree" if p == "Simple" else "ring", p)
    else:
        lat = BASE_LAT["ring", p] + max(0, c.nsteps - c.ninter) * intra + c.ninter * c.hop("net", "ring", p)
    return Candidate("ring", p, t.launch + lat * _US, bus * t.n / c.nsteps, c.family(p, "ring"))


def _tree(c: _Call, p: str) -> Candidate:
    """The all-reduce tree with protocol *p*. On two nodes each node sends and receives m once
    across (half the data in each of the two trees), so the tree's algorithm bandwidth (bus / 2)
    is bounded by the node's NICs, the ring's (about bus / 2 too) by half of them; beyond two
    nodes NCCL takes the ring's bound."""
    t = c.t
    bus = min(t.intra_bw if t.ppn > 1 else math.inf, 2 * t.inter_bw) if t.nodes == 2 else c.bus_ring
    bus *= 0.92
    if p == "LL":
        bus = min(bus / 3.8, c.ll_max)
    elif p == "LL128":
        bus *= 7 / 9 if t.nodes == 1 else 120 / 128
    lat = BASE_LAT["tree", p] + 2 * ((t.ppn - 1) * c.intra_hop("tree", p) + floor_log2(t.nodes) * c.hop("net", "tree", p))
    return Candidate("tree", p, t.launch + lat * _US, bus * 0.5, c.family(p, "ring"))


def _in_network(c: _Call, algorithm: str) -> list[Candidate]:
    """NVLS (one node), NVLS-tree (several) and CollNet, where the levels offer in-network reduction."""
    t = c.t
    out: list[Candidate] = []
    if t.nvls_bw > 0 and t.ppn > 1:
        if not c.multi and algorithm in ("auto", "nvls"):
            out.append(Candidate("nvls", "Simple", t.launch + c.hop("nvlink", "nvls", "Simple") * _US, t.nvls_bw, "nvls"))
        if c.multi and algorithm in ("auto", "nvls-tree"):
            bw = min(t.nvls_bw, t.inter_bw * (1.0 if t.nodes <= 2 else 0.5))
            lat = c.hop("nvlink", "nvls-tree", "Simple") + 2 * floor_log2(t.nodes) * c.hop("net", "nvls-tree", "Simple")
            out.append(Candidate("nvls-tree", "Simple", t.launch + lat * _US, bw, "multi-node"))
    if t.sharp and c.multi and algorithm in ("auto", "collnet"):
        bw = 0.5 * 0.9 * min(t.intra_bw if t.ppn > 1 else math.inf, t.inter_bw)
        lat = (BASE_LAT["collnet", "Simple"] + 2 * (t.ppn - 1) * c.hop(c.intra_kind, "collnet", "Simple")
               + c.hop("net", "collnet", "Simple"))
        out.append(Candidate("collnet", "Simple", t.launch + lat * _US, bw, "multi-node"))
    return out


#: an efficiency curve: (ideal duration m / algbw in s, achieved fraction) points, sorted
Curve = Sequence[tuple[float, float]]


def best(cands: list[Candidate], m: float, curves: Mapping[str, Curve]) -> tuple[float, Candidate]:
    """(time in s, candidate) of the fastest candidate for an m-byte message; ValueError for none."""
    out: tuple[float, Candidate] | None = None
    for c in cands:
        eff = efficiency_at(curves[c.family], m / c.algbw) if c.family is not None and c.family in curves else 1.0
        t = c.lat + m / (c.algbw * eff)
        if out is None or t < out[0] * (1 - 1e-12):
            out = (t, c)
    if out is None:
        raise ValueError("best: expected at least one NCCL candidate, got none")
    return out
