"""The cost model of a distributed contraction on a (node-aware) processor grid.

Pure functions from (contraction, hardware profile, parameters) to metrics, built on
:func:`suite.perf.collective.collective_time` (every communication) and
:func:`suite.perf.roofline_time` (the local GEMM). SI units: seconds, bytes, FLOP/s.

Model
-----
* **Grids** (:mod:`suite_node_aware_grids.grids`). ``default-grid``: the 2-D or 3-D grid with the
  least node-unaware volume ``V = |B|(P_M-1) + |A|(P_N-1) + |C|(P_K-1)`` whose memory per rank
  fits ``0.75 x node memory / ppn`` (CTF's memory cap with ``CTF_PPN`` ranks per node, read in
  the CTF documentation, secondary source), ties to fewer SUMMA steps, then the first in
  ascending order; default placement. ``summa-2d``: the near-square 2-D grid, default
  placement. ``node-aware``: the default-grid's grid with the inter-node grid of least
  inter-node volume, when it beats the default placement, plus the one-time remap.
* **SUMMA** [vdGeijn97]: ``S = lcm(P_M, P_N)`` steps; in each, an A panel of
  ``m_A = |A| / (P_M P_K S)`` bytes is broadcast along N and a B panel of
  ``m_B = |B| / (P_N P_K S)`` along M, then every rank multiplies; after the last step C's partial
  block ``m_C = |C| / (P_M P_N)`` is reduced along K. ``T_comm = S (T_bcast(m_A, N) +
  T_bcast(m_B, M)) + T_reduce(m_C, K)``.
* **Two-level broadcast / reduction** (CTF's inter-node estimate counts one message per remote
  node): a communicator along d spans ``G_d`` nodes with ``h_d = P_d / G_d`` members on each
  (:func:`~suite_node_aware_grids.grids.comm_stats`). Its inter-node phase is
  ``collective_time(op, c_d m, Group(1, G_d))`` on the outer level, where
  ``c_d = ppn G_d / P_d`` communicators share each node's NICs at once (their bandwidth is
  shared: c_d concurrent messages of m bytes are priced as one of c_d m); its intra-node phase is
  ``collective_time(op, k_in m, Group(h_d, 1))`` on the inner level, where
  ``k_in = max(1, ppn / (2 devices_per_node))`` copies share each socket's copy bandwidth (half
  of the node's ranks send in a binomial round). The outer level is ``profile.network[-1]``,
  the inner ``network[0]``.
* **Remap** (node-aware only): every rank whose grid position changes receives that position's
  home blocks of A and B, ``(|A| + |B|) / P`` bytes, and C's final blocks go back to their
  default owners (CTF remaps with ``MPI_Sendrecv_replace``); the inter-node part is
  ``collective_time("p2p", bytes into one node, Group(1, 2))``, the intra-node part the same
  on the inner level.
* **Compute**: ``roofline_time(2 M N K / P, local bytes, peak_rank, bw_rank, eff)`` with
  ``peak_rank = peak(dtype) x devices_per_node / ppn`` and the same share of memory bandwidth;
  ``eff`` the device's ``gemm_<dtype>`` efficiency curve at the local GEMM's FLOPs, else
  :data:`DEFAULT_GEMM_EFFICIENCY`; the ``efficiency`` parameter overrides both.
* ``T = T_remap + T_comm + T_compute`` (CTF's SUMMA does not overlap communication with the
  local GEMM; an assumption of this model).

References
----------
.. [Irmler23] arXiv 2307.08829 (abstract). .. [CTF] ``src/mapping/node_aware_dist``,
   ``src/contraction/ctr_2d_general`` (code, secondary source). .. [vdGeijn97] SUMMA, CPE 9(4),
   1997. See :mod:`suite_node_aware_grids.grids`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from suite.api import Group, collective_time, resolve_scale, roofline_time

from suite_node_aware_grids import grids as G

__all__ = [
    "DTYPE_BYTES",
    "MEMORY_FRACTION",
    "DEFAULT_GEMM_EFFICIENCY",
    "VARIANTS",
    "tensor_bytes",
    "memory_per_rank",
    "grid_fits",
    "default_grid",
    "Plan",
    "make_plan",
    "remap_fractions",
    "Times",
    "times",
    "ranks_of",
    "evaluate",
]

DTYPE_BYTES = {"fp64": 8, "fp32": 4}

#: the paper's processor grid of the default scenario (64 ranks: 8 nodes x 8 ranks per node)
PAPER_RANKS = 64


def ranks_of(params, profile) -> int:
    """``params['ranks']``, or when it is None (unset) ``ranks_per_node`` on every node of *profile*
    (a cluster's nodes; a node profile: 1), at most the whole nodes of :data:`PAPER_RANKS` ranks (64
    at 16 per node, 63 at 3: a count ``ranks_per_node`` divides); that many without a profile
    (:func:`suite.api.resolve_scale`)."""
    ppn = int(params["ranks_per_node"])
    return resolve_scale(params, "ranks", profile, PAPER_RANKS // ppn * ppn or ppn,
                         count=lambda prof: prof.num_nodes * ppn)

#: Fraction of a node's memory the tensors may use, shared by its ranks: CTF sets its memory cap
#: to 0.75 / ppn with ``CTF_PPN`` ranks per node (CTF documentation and source, secondary source).
MEMORY_FRACTION = 0.75

#: GEMM efficiency for a device with no ``gemm_<dtype>`` curve: 0.73, LUMI-C's HPL Rmax (5.63
#: PFLOP/s, LUMI documentation) over its base-clock Rpeak (1536 nodes x 2 x 2.509 TFLOP/s =
#: 7.71 PFLOP/s), the same figure the perlmutter-cpu profile carries for the EPYC 7763.
DEFAULT_GEMM_EFFICIENCY = 0.73

VARIANTS = ("default-grid", "summa-2d", "node-aware")


def tensor_bytes(groups, dtype_bytes: int) -> tuple[float, float, float]:
    """``(|A|, |B|, |C|)`` in bytes: ``M K d``, ``K N d``, ``M N d``."""
    return (float(groups.M * groups.K * dtype_bytes), float(groups.K * groups.N * dtype_bytes),
            float(groups.M * groups.N * dtype_bytes))


def _lens3(lens) -> tuple[int, int, int]:
    return (int(lens[0]), int(lens[1]), int(lens[2]) if len(lens) > 2 else 1)


def memory_per_rank(sizes, lens) -> float:
    """Bytes one rank holds at the peak of the SUMMA loop.

    ``(|A| + |B|) / P`` (home blocks) ``+ |A| / (P_M P_K S) + |B| / (P_N P_K S)`` (one received
    panel each) ``+ |C| / (P_M P_N)`` (the partial C block), ``S = lcm(P_M, P_N)``.
    """
    a, b, c = sizes
    pm, pn, pk = _lens3(lens)
    p, s = pm * pn * pk, G.panel_steps(lens)
    return (a + b) / p + a / (pm * pk * s) + b / (pn * pk * s) + c / (pm * pn)


def grid_fits(groups, lens) -> bool:
    """The grid does not split an extent finer than one element: ``P_M <= M``, ``P_N <= N`` and
    ``K / P_K >= S`` (every SUMMA panel holds at least one column)."""
    pm, pn, pk = _lens3(lens)
    return pm <= groups.M and pn <= groups.N and groups.K // pk >= G.panel_steps(lens)


@functools.lru_cache(maxsize=2048)
def _default_grid(groups, ranks: int, dtype_bytes: int, mem_cap: float) -> tuple[int, ...] | None:
    sizes = tensor_bytes(groups, dtype_bytes)
    best, key = None, None
    for lens in G.all_grids(ranks):
        if not grid_fits(groups, lens) or memory_per_rank(sizes, lens) > mem_cap:
            continue
        k = (G.volume_total(sizes, lens), G.panel_steps(lens), lens)
        if key is None or k < key:
            best, key = lens, k
    return best


def default_grid(groups, ranks: int, dtype_bytes: int, mem_cap: float) -> tuple[int, ...] | None:
    """The default-grid variant's grid (module docstring); None when no grid fits.

    Parameters
    ----------
    groups : suite_node_aware_grids.workloads.Groups
    ranks : int
        P.
    dtype_bytes : int
    mem_cap : float
        Bytes one rank may hold (``0.75 x node memory / ppn``).
    """
    return _default_grid(groups, int(ranks), int(dtype_bytes), float(mem_cap))


@dataclass(frozen=True)
class Plan:
    """A variant's mapping: grid, inter-node grid (None: default placement) and the volumes (B)."""

    variant: str
    lens: tuple[int, ...]
    g: tuple[int, ...] | None
    ppn: int
    sizes: tuple[float, float, float]
    v_inter: float
    v_total: float
    v_default_inter: float  # the default-grid variant's inter-node volume (same contraction)
    candidates: tuple  # (g, V_inter(g)) for the node-aware search

    @property
    def ranks(self) -> int:
        return math.prod(self.lens)

    @property
    def nodes(self) -> int:
        return self.ranks // self.ppn

    @property
    def v_intra(self) -> float:
        return self.v_total - self.v_inter


@functools.lru_cache(maxsize=4096)
def make_plan(variant: str, groups, ranks: int, ppn: int, dtype_bytes: int, mem_cap: float,
              grid: tuple[int, ...] | None = None) -> Plan:
    """The mapping of *variant* (``default-grid``, ``summa-2d``, ``node-aware``).

    Parameters
    ----------
    grid : tuple of int, optional
        Forces the grid of ``default-grid`` and ``node-aware`` (``summa-2d`` keeps its own).

    Raises
    ------
    ValueError
        Unknown variant, ppn not dividing ranks, or no grid fits (message says which).

    Notes
    -----
    Pure and cached (the arguments are hashable: ``groups`` is a frozen dataclass).
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if ppn < 1 or ranks % ppn:
        raise ValueError(f"ranks per node {ppn} must divide ranks {ranks}")
    sizes = tensor_bytes(groups, dtype_bytes)
    base = tuple(grid) if grid is not None else default_grid(groups, ranks, dtype_bytes, mem_cap)
    if base is None:
        raise ValueError(f"no 2-D or 3-D grid of {ranks} ranks fits the contraction (M={groups.M}, N={groups.N}, "
                         f"K={groups.K}) within {mem_cap:.4g} B per rank")
    v_def = G.volume_inter(sizes, base, None, ppn)
    if variant == "summa-2d":
        lens = G.near_square_2d(ranks)
        return Plan(variant, lens, None, ppn, sizes, G.volume_inter(sizes, lens, None, ppn),
                    G.volume_total(sizes, lens), v_def, ())
    if variant == "default-grid":
        return Plan(variant, base, None, ppn, sizes, v_def, G.volume_total(sizes, base), v_def, ())
    g, v, _vd, table = G.best_inter_node_grid(sizes, base, ppn)
    return Plan(variant, base, g, ppn, sizes, v, G.volume_total(sizes, base), v_def, tuple(table))


@functools.lru_cache(maxsize=2048)
def remap_fractions(lens: tuple[int, ...], g: tuple[int, ...] | None, ppn: int) -> tuple[float, float, float, float]:
    """Fractions of grid positions whose data moves in the remap, by enumeration.

    Position x is held by physical rank ``rank_of_position(x)`` after the renumbering and by rank
    x before it. Returns ``(inter_all, intra_all, inter_c, intra_c)``: over all P positions (the
    A and B home blocks) and over the positions with ``x_K = 0`` (C's final blocks), each as a
    fraction of P; "inter" when the two ranks are on different nodes, "intra" when on one node.
    """
    if g is None:
        return (0.0, 0.0, 0.0, 0.0)
    p = math.prod(lens)
    pos = np.arange(p, dtype=np.int64)
    new = G.rank_of_position(pos, lens, g, ppn)
    inter = (new // ppn) != (pos // ppn)
    intra = (~inter) & (new != pos)
    c_rows = pos < (lens[0] * lens[1])  # x_K = 0 (dimension 2 slowest)
    return (float(inter.mean()), float(intra.mean()), float((inter & c_rows).sum() / p),
            float((intra & c_rows).sum() / p))


@dataclass(frozen=True)
class Times:
    """Model times (s) and counts of one plan."""

    compute: float
    bcast_a: float  # all S steps
    bcast_b: float
    reduce_c: float
    remap: float
    steps: int
    efficiency: float
    messages: float  # broadcasts and reductions
    inter_messages: float
    remap_messages: float  # the one-time remap (node-aware)
    remap_bytes_inter: float
    remap_bytes_intra: float

    @property
    def comm(self) -> float:
        return self.bcast_a + self.bcast_b + self.reduce_c

    @property
    def total(self) -> float:
        return self.remap + self.comm + self.compute


def _phase(op: str, m: float, st: "G.CommStats", k_in: float, profile) -> float:
    """Two-level broadcast / reduction of m bytes over one communicator (module docstring)."""
    if m <= 0 or st.length <= 1:
        return 0.0
    t = 0.0
    nodes = math.ceil(st.nodes_mean - 1e-9)
    if nodes > 1:
        t += collective_time(op, st.comms_per_node * m, Group(1, nodes), profile).time
    members = math.ceil(st.members_per_node - 1e-9)
    if members > 1:
        t += collective_time(op, k_in * m, Group(members, 1), profile).time
    return t


def times(plan: Plan, groups, profile, dtype: str, efficiency: float | None = None) -> Times:
    """Time of *plan* on *profile* (module docstring for every term), priced by each case itself.

    Parameters
    ----------
    plan : Plan
    groups : Groups (M, N, K of the contraction)
    profile : suite.hardware.Profile (a device with ``peak_flops[dtype]``, a network level)
    dtype : {"fp64", "fp32"}
    efficiency : float, optional
        GEMM efficiency in (0, 1]; default the device's curve, else :data:`DEFAULT_GEMM_EFFICIENCY`.

    Returns
    -------
    Times

    Raises
    ------
    suite.errors.ProfileError
        The device has no peak for *dtype*, or the profile has no network level.
    """
    dev = profile.require_device()
    dpn = profile.devices_per_node
    ppn, p = plan.ppn, plan.ranks
    a, b, c = plan.sizes
    pm, pn, pk = _lens3(plan.lens)
    s = G.panel_steps(plan.lens)
    st = G.comm_stats(plan.lens, plan.g, ppn)
    k_in = max(1.0, ppn / (2.0 * dpn))
    m_a, m_b, m_c = a / (pm * pk * s), b / (pn * pk * s), c / (pm * pn)
    t_a = s * _phase("broadcast", m_a, st[1], k_in, profile)
    t_b = s * _phase("broadcast", m_b, st[0], k_in, profile)
    t_c = _phase("reduce", m_c, st[2], k_in, profile) if len(st) > 2 else 0.0
    # messages: a broadcast / reduction over L ranks sends L - 1, of which G - 1 cross nodes
    msgs = s * (p / pn) * (pn - 1) + s * (p / pm) * (pm - 1) + (p / pk) * (pk - 1)
    inter = s * (p / pn) * (st[1].nodes_mean - 1) + s * (p / pm) * (st[0].nodes_mean - 1)
    if len(st) > 2:
        inter += (p / pk) * (st[2].nodes_mean - 1)
    # remap (node-aware only)
    f_inter, f_intra, fc_inter, fc_intra = remap_fractions(plan.lens, plan.g, ppn)
    home, cblk = (a + b) / p, c / (pm * pn)
    r_inter = p * (f_inter * home + fc_inter * cblk)
    r_intra = p * (f_intra * home + fc_intra * cblk)
    t_remap = 0.0
    nodes = plan.nodes
    if r_inter > 0 and nodes > 1:
        t_remap += collective_time("p2p", r_inter / nodes, Group(1, 2), profile).time
    if r_intra > 0:
        t_remap += collective_time("p2p", r_intra / nodes / dpn, Group(2, 1), profile).time
    remap_msgs = p * (f_inter + f_intra + fc_inter + fc_intra)
    # compute
    flops = 2.0 * groups.M * groups.N * groups.K / p
    local = a / (pm * pk) + b / (pn * pk) + c / (pm * pn)
    peak = dev.flops(dtype) * dpn / ppn
    bw = dev.memory_bandwidth * dpn / ppn
    eff = efficiency
    if eff is None:
        eff = dev.efficiency_at(f"gemm_{dtype}", flops) or DEFAULT_GEMM_EFFICIENCY
    t_comp = roofline_time(flops, local, peak, bw, eff)
    return Times(t_comp, t_a, t_b, t_c, t_remap, s, float(eff), msgs, inter, remap_msgs, r_inter, r_intra)


# --------------------------------------------------------------------------- evaluate


def node_memory(profile) -> float:
    """Bytes of one node's memory: ``node.host_memory`` for a CPU device, else device memory x
    devices per node."""
    dev = profile.require_device()
    node = profile.node
    if dev.type == "cpu" and node is not None and node.host_memory:
        return float(node.host_memory)
    return float(dev.memory) * profile.devices_per_node


def resolve(scenario):
    """Validated inputs of one scenario: ``(groups, ranks, ppn, dtype, grid, efficiency, wl)``.

    Raises
    ------
    suite.errors.ParameterError
        ``ranks_per_node`` not a divisor of ``ranks``; a bad ``grid``.
    suite.Skip
        Not a contraction workload; an extent parameter the workload has no index for; more nodes
        than the profile has; a profile without a network level or without the dtype's peak.
    """
    from suite.api import ParameterError, Skip, WorkloadError

    from suite_node_aware_grids.workloads import Contraction, with_extents

    p = scenario.params
    ranks, ppn = ranks_of(p, scenario.profile), int(p["ranks_per_node"])
    if ranks % ppn:
        raise ParameterError(f"node-aware-grids: parameter 'ranks_per_node': expected a divisor of ranks ({ranks}), "
                             f"got {ppn}")
    grid = G.parse_grid(p["grid"], ranks)
    wl = scenario.workload
    if not isinstance(wl, Contraction):
        raise Skip(f"node-aware-grids needs a 'contraction' workload (an einsum spec plus extents), got "
                   f"{getattr(wl, 'name', None)!r} of kind {getattr(wl, 'kind', None)!r}")
    try:
        wl = with_extents(wl, o=p.get("o"), v=p.get("v"), n=p.get("n"))
    except WorkloadError as exc:
        raise Skip(str(exc)) from None
    groups = wl.groups()
    prof = scenario.profile
    if prof is None:
        raise Skip("node-aware-grids needs a hardware profile")
    if not prof.network:
        raise Skip(f"node-aware-grids: profile {prof.name!r} has no [[network]] level")
    nodes = ranks // ppn
    have = prof.num_nodes
    if nodes > have:
        raise Skip(f"node-aware-grids: {nodes} nodes (ranks {ranks} / ranks_per_node {ppn}) exceed the {have} "
                   f"nodes of profile {prof.name!r}")
    dev = prof.require_device()
    dtype = p["dtype"]
    if dtype not in dev.peak_flops:
        raise Skip(f"node-aware-grids: device {dev.name!r} of profile {prof.name!r} has no {dtype} peak")
    return groups, ranks, ppn, dtype, grid, p.get("efficiency"), wl


def evaluate(scenario):
    """Model fidelity: time, volumes, messages and memory of one variant.

    Returns
    -------
    suite.Result
        ``time`` (s), ``speedup`` (default-grid's time over this one's), ``compute_time``,
        ``comm_time``, ``remap_time`` (s), ``inter_node_bytes``, ``intra_node_bytes`` (B, all
        ranks, broadcasts and reductions), ``remap_bytes`` (B crossing nodes in the remap),
        ``volume_ratio`` (default-grid's inter-node volume over this variant's), ``messages``,
        ``inter_node_messages`` (counts, broadcasts and reductions), ``remap_messages``, ``mem_per_rank`` (B), ``nodes``; artifacts ``grid``
        (lens, g, h, candidates with their volumes) and ``setup``.

    Raises
    ------
    suite.Skip, suite.errors.ParameterError
        See :func:`resolve`; no grid fits the memory cap (Skip).
    """
    from suite.api import Result, Skip

    groups, ranks, ppn, dtype, grid, eff, wl = resolve(scenario)
    prof = scenario.profile
    d = DTYPE_BYTES[dtype]
    cap = MEMORY_FRACTION * node_memory(prof) / ppn
    try:
        plan = make_plan(scenario.variant, groups, ranks, ppn, d, cap, grid)
        base = plan if scenario.variant == "default-grid" else make_plan("default-grid", groups, ranks, ppn, d, cap, grid)
    except ValueError as exc:
        raise Skip(f"node-aware-grids: {exc}") from None
    t = times(plan, groups, prof, dtype, eff)
    t0 = t if base is plan else times(base, groups, prof, dtype, eff)
    res = Result()
    res.add("time", t.total, "s", "lower")
    res.add("speedup", t0.total / t.total, "1", "higher")
    res.add("compute_time", t.compute, "s", "lower")
    res.add("comm_time", t.comm, "s", "lower")
    res.add("remap_time", t.remap, "s", "lower")
    res.add("inter_node_bytes", plan.v_inter, "B", "lower")
    res.add("intra_node_bytes", plan.v_intra, "B", "lower")
    res.add("remap_bytes", t.remap_bytes_inter, "B", "lower")
    res.add("volume_ratio", plan.v_default_inter / plan.v_inter if plan.v_inter > 0 else 1.0, "1", "higher")
    res.add("messages", t.messages, "1", "lower")
    res.add("inter_node_messages", t.inter_messages, "1", "lower")
    res.add("remap_messages", t.remap_messages, "1", "lower")
    res.add("mem_per_rank", memory_per_rank(plan.sizes, plan.lens), "B", "lower")
    res.add("nodes", plan.nodes, "1", "none")
    res.add("ranks_used", ranks, "1", "none")  # the resolved P: ranks=None is the profile's nodes' worth, <= 64
    h = None if plan.g is None else [a // b for a, b in zip(plan.lens, plan.g)]
    res.artifacts["grid"] = {
        "lens": list(plan.lens), "g": None if plan.g is None else list(plan.g), "h": h,
        "steps": t.steps, "candidates": [{"g": list(gg), "inter_node_bytes": v} for gg, v in plan.candidates],
        "default_inter_node_bytes": plan.v_default_inter,
    }
    res.artifacts["setup"] = {
        "spec": wl.spec, "extents": dict(wl.extents), "M": groups.M, "N": groups.N, "K": groups.K,
        "ranks": ranks, "ranks_per_node": ppn, "dtype": dtype, "gemm_efficiency": t.efficiency,
        "memory_cap_per_rank": cap, "broadcast_a_time": t.bcast_a, "broadcast_b_time": t.bcast_b,
        "reduce_c_time": t.reduce_c,
        "inner_level": prof.network[0].name, "outer_level": prof.network[-1].name,
    }
    return res
