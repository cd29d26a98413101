"""COMET's cost model: a transformer's training step on one cluster, for every parallel strategy.

COMET (Kadiyala et al., arXiv 2211.16648) co-designs a cluster (compute, HBM, memory expansion,
network) and the parallelisation of a training job with roofline- and memory-traffic analytics
(abstract). Only the abstracts were read; the formulas below are the standard ones each piece
names, written here from their sources.

A strategy is ``(tp, pp, dp, mbs, recompute)``: tensor-parallel degree inside a node, pipeline
stages across nodes, data-parallel replicas (``tp * pp * dp`` = the cluster's GPUs, Megatron's
rank order: tp innermost, then dp, then pp), micro-batch size and activation recomputation
(``none`` / ``selective`` / ``full``, Korthikanti et al. 2022).

The training step
-----------------
Every strategy is priced by the shared training model, :func:`suite.perf.training.evaluate`
(vectorised over the strategies of one cluster; its docstring gives the compute, communication,
1F1B schedule and memory formulas and their sources), with sequence parallelism wherever
``tp > 1``, bf16 gradients and the gradient reduction overlapped with the last backward. COMET
keeps no transformer count of its own: what it adds is the design-space search (clusters x
strategies, :func:`search`, :func:`grid_summary`) and the memory-expansion tier.

Memory and the expansion tier
-----------------------------
What exceeds the HBM goes to the node's expansion tier (CXL-attached memory; COMET's figures are
not found), shared by the node's GPUs: it may hold at most the optimizer states (the 12 of the
:data:`BYTES_PER_PARAM` bytes per parameter that only the optimizer touches; Rajbhandari et al.,
ZeRO, SC'20 §3.1) and at most ``capacity / gpn``; it is read and written once per step, each
direction at ``bandwidth / gpn``: ``t_exp = overflow / (bandwidth / gpn) + 2 latency - 2 overflow
/ BW_hbm`` (that share of the optimizer's HBM traffic moves to the tier). A point whose overflow
exceeds that is infeasible.

``T = T_shared + t_exp``; tokens/s ``= B s / T``; model FLOP/s per GPU as Narayanan SC'21 eq. (3)
counts them (:func:`suite.perf.training.iteration_flops` under the strategy's recomputation).

References
----------
.. [Williams09] S. Williams et al., "Roofline", CACM 52(4), 2009.
.. [Narayanan21] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC'21: §2.2 (1F1B), §3.2 and §4.1 (TP traffic, scatter/gather),
   Table 1 (the 1T row), eq. (3) (FLOPs).
.. [Shoeybi19] M. Shoeybi et al., "Megatron-LM", arXiv 1909.08053, §3 (f/g all-reduces).
.. [Korthikanti22] V. Korthikanti et al., "Reducing Activation Recomputation in Large
   Transformer Models", arXiv 2205.05198, §4.1-§4.3.
.. [ZeRO20] S. Rajbhandari et al., "ZeRO", SC'20, §3.1 (16 bytes per parameter).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from suite.api import (CommPricer, Group, ParameterError, Plans, ProfileError, TransformerShape,
                       collective_time, hardware_of, shape_of, training)

from suite_comet.constants import (COMPUTE_ONLY_SPREAD, DEFAULT_EXPANSION_BANDWIDTH, GRIDS,
                                  RECOMPUTE, grid_inputs)

__all__ = [
    "RECOMPUTE", "BYTES_PER_PARAM", "OPT_STATE_BYTES", "WorkloadConsts", "Cluster",
    "Strategies", "consts_of", "cluster_of", "enumerate_strategies", "evaluate_points", "evaluate_point",
    "best_index", "megatron_rule_index", "check_strategy", "grid_clusters", "grid_inputs", "GRIDS", "grid_summary",
    "DEFAULT_EXPANSION_BANDWIDTH", "CollectiveCache",
    "evaluate_many", "search", "traffic_bytes", "model_flops_per_gpu", "COMPUTE_ONLY_SPREAD", "COMPUTE_DTYPES",
    "compute_dtype", "evaluate",
]

# RECOMPUTE, DEFAULT_EXPANSION_BANDWIDTH, GRIDS and COMPUTE_ONLY_SPREAD are defined in
# suite_comet.constants (the declaration reads them without importing this module).

#: mixed-precision Adam bytes per parameter (ZeRO SC'20 §3.1): 2 weights + 2 gradients + 12 fp32 states,
#: the shared model's count without ZeRO
BYTES_PER_PARAM = float(training.state_bytes_per_param(0, 1, 2))
#: of which only the optimizer touches (fp32 master weights, momentum, variance): what may spill
OPT_STATE_BYTES = 12.0


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class WorkloadConsts:
    """What COMET reads of a transformer table besides the shared model's
    :class:`~suite.perf.training.TransformerShape` (``shape``): its name, depth, width, heads,
    sequence, vocabulary and parameter count (for the search's rules and the execute oracle)."""

    name: str
    blocks: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    params: float
    shape: TransformerShape


def consts_of(table) -> WorkloadConsts:
    """Extract :class:`WorkloadConsts` from a zoo transformer table.

    Raises
    ------
    ParameterError
        The workload is not a transformer layer table (:func:`suite.perf.training.shape_of`).
    """
    shape = shape_of(table)
    return WorkloadConsts(name=table.name, blocks=shape.layers, hidden=shape.hidden, heads=shape.heads,
                          seq=shape.seq, vocab=shape.vocab, params=float(table.params), shape=shape)


@dataclass(frozen=True)
class Cluster:
    """One cluster of the design space.

    Attributes
    ----------
    name : str
    profile : Profile
        What :func:`collective_time` prices on (network levels, NICs, node size).
    peak : float
        bf16 peak FLOP/s per GPU.
    hbm, hbm_bw : float
        HBM capacity (B) and bandwidth (B/s) per GPU.
    gpn, nodes : int
        GPUs per node, nodes.
    exp_capacity, exp_bandwidth, exp_latency : float
        Memory-expansion tier per node: capacity (B), bandwidth per direction (B/s), latency (s).
    node_hour : float or None
        USD per node-hour (``cost.node_hour``), if the profile sets it.
    """

    name: str
    profile: object = field(repr=False, compare=False)
    peak: float
    hbm: float
    hbm_bw: float
    gpn: int
    nodes: int
    exp_capacity: float = 0.0
    exp_bandwidth: float = DEFAULT_EXPANSION_BANDWIDTH
    exp_latency: float = 0.0
    node_hour: float | None = None
    hw: object = field(default=None, repr=False, compare=False)

    @property
    def gpus(self) -> int:
        return self.gpn * self.nodes

    def without_expansion(self) -> "Cluster":
        return dataclasses.replace(self, exp_capacity=0.0)


def _ext_comet(profile):
    ext = getattr(profile, "ext", None) or {}
    e = ext.get("comet") if hasattr(ext, "get") else None
    if e is None:
        return None
    from suite.api import parse_quantity

    get = (lambda k: e.get(k)) if hasattr(e, "get") else (lambda k: getattr(e, k, None))
    out = []
    for key, dim in (("capacity", "bytes"), ("bandwidth", "bandwidth"), ("latency", "time")):
        v = get(key)
        # a table no installed schema validated (a plain library) keeps its unit strings
        out.append(None if v is None else parse_quantity(v, dim))
    return tuple(out)


#: the peak used: bf16 (mixed-precision training), else the first of these the device declares
COMPUTE_DTYPES = ("bf16", "fp16", "fp32")


def compute_dtype(device) -> str | None:
    """The first of :data:`COMPUTE_DTYPES` whose peak *device* declares (None if none)."""
    try:
        return device.first_peak(*COMPUTE_DTYPES)[0]
    except ProfileError:
        return None


def cluster_of(profile, nodes: int | None = None, expansion: float | None = None,
               expansion_bandwidth: float | None = None, dtype: str = "bf16") -> Cluster:
    """The :class:`Cluster` of a hardware profile.

    Parameters
    ----------
    profile : Profile
        A cluster or node profile with a device and at least one network level.
    nodes : int, optional
        Nodes used (default: all of the profile's).
    expansion, expansion_bandwidth : float, optional
        Expansion capacity per node (B) and bandwidth per direction (B/s); default the profile's
        ``[ext.comet]`` table, else no expansion (and :data:`DEFAULT_EXPANSION_BANDWIDTH`).
    dtype : str
        Peak to use; when the device lacks it, the first of :data:`COMPUTE_DTYPES` it declares.

    Raises
    ------
    ProfileError
        No device, no bf16 peak, no network level, or more nodes than the profile has.
    """
    dev = profile.device
    if dev is None:
        raise ProfileError(f"comet: profile {profile.name!r}: field device: expected a GPU, got none")
    try:
        _dt, peak = dev.first_peak(dtype, *(d for d in COMPUTE_DTYPES if d != dtype))
    except ProfileError:
        raise ProfileError(f"comet: profile {profile.name!r}: field device.peak_flops: expected one of "
                           f"{list(COMPUTE_DTYPES)}, got none") from None
    if not profile.network and profile.num_devices > 1:
        raise ProfileError(f"comet: profile {profile.name!r}: field network: expected at least one level for "
                           f"{profile.num_devices} devices, got none")
    have = profile.num_nodes
    n = have if nodes is None else int(nodes)
    if n > have:
        raise ParameterError(f"comet: nodes={n} exceeds the {have} nodes of {profile.name}")
    cap, bw, lat = _ext_comet(profile) or (None, None, None)
    cap = expansion if expansion is not None else (cap or 0.0)
    bw = expansion_bandwidth if expansion_bandwidth is not None else (bw or DEFAULT_EXPANSION_BANDWIDTH)
    cost = getattr(profile, "cost", None)
    nh = getattr(cost, "node_hour", None) if cost is not None else None
    return Cluster(name=profile.name, profile=profile, peak=float(peak), hbm=float(dev.memory),
                   hbm_bw=float(dev.memory_bandwidth), gpn=int(profile.devices_per_node), nodes=n,
                   exp_capacity=float(cap), exp_bandwidth=float(bw), exp_latency=float(lat or 0.0),
                   node_hour=float(nh) if nh else None, hw=hardware_of(profile, dtype))


# --------------------------------------------------------------------------- strategies


@dataclass(frozen=True)
class Strategies:
    """Strategy arrays (one entry per point): tp, pp, dp, mbs, recompute code (index of RECOMPUTE)."""

    tp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    mbs: np.ndarray
    rc: np.ndarray

    def __len__(self) -> int:
        return int(self.tp.size)

    def take(self, idx) -> "Strategies":
        return Strategies(self.tp[idx], self.pp[idx], self.dp[idx], self.mbs[idx], self.rc[idx])

    def row(self, i: int) -> dict:
        return {"tp": int(self.tp[i]), "pp": int(self.pp[i]), "dp": int(self.dp[i]), "mbs": int(self.mbs[i]),
                "recompute": RECOMPUTE[int(self.rc[i])]}


def check_strategy(w: WorkloadConsts, c: Cluster, tp: int | None = None, pp: int | None = None) -> None:
    """One-line errors for a fixed tensor / pipeline degree that cannot apply.

    Raises
    ------
    ParameterError
        ``tp`` not dividing the heads, ``tp`` above the GPUs per node, ``tp x pp`` above the GPUs,
        ``pp`` above the blocks + 1 (the head's stage).
    """
    if tp is not None:
        if w.heads % tp:
            raise ParameterError(f"comet: tp={tp} must divide the {w.heads} heads of {w.name}")
        if tp > c.gpn:
            raise ParameterError(f"comet: tp={tp} exceeds the {c.gpn} GPUs per node of {c.name} (TP stays inside a node)")
    if pp is not None and pp > w.blocks + 1:
        raise ParameterError(f"comet: pp={pp} exceeds the {w.blocks} blocks (+ head) of {w.name}")
    if tp is not None and pp is not None and tp * pp > c.gpus:
        raise ParameterError(f"comet: tp x pp = {tp * pp} exceeds the {c.gpus} GPUs of {c.name}")


def enumerate_strategies(w: WorkloadConsts, c: Cluster, batch: int, tp: int | None = None, pp: int | None = None,
                         mbs: int | None = None, recompute: str | None = None,
                         mbs_choices=(1, 2, 4, 8)) -> Strategies:
    """Every strategy using all of the cluster's GPUs: tp | heads, tp <= GPUs per node, pp <= blocks + 1,
    ``tp pp dp = GPUs``, ``dp mbs | batch``; optionally restricted to fixed ``tp``/``pp``/``mbs``/``recompute``.
    """
    check_strategy(w, c, tp, pp)
    N = c.gpus
    tps = [tp] if tp else [t for t in range(1, c.gpn + 1) if w.heads % t == 0 and c.gpn % t == 0]
    out = []
    rcs = [RECOMPUTE.index(recompute)] if recompute else range(3)
    mb = [mbs] if mbs else mbs_choices
    for t in tps:
        if N % t:
            continue
        rest = N // t
        pps = [pp] if pp else [p for p in range(1, min(w.blocks + 1, rest) + 1) if rest % p == 0]
        for p in pps:
            if rest % p:
                continue
            d = rest // p
            for b in mb:
                if batch % (d * b):
                    continue
                for r in rcs:
                    out.append((t, p, d, b, r))
    a = np.array(out, dtype=np.int64).reshape(-1, 5)
    return Strategies(*(a[:, k] for k in range(5)))


def _net_key(profile, inter: bool) -> tuple:
    """What a collective's time depends on: the levels it may cross (level 0 only for a group
    inside one node), the NICs per node and the device's memory bandwidth (reduction term)."""
    levels = profile.network if inter else profile.network[:1]
    lv = tuple((l.topology, l.size, l.bandwidth, l.latency, getattr(l, "oversubscription", None),
                getattr(l, "leaf_size", None)) for l in levels)
    node = profile.node
    return (lv, len(profile.network), getattr(node, "nics_per_node", None) if node is not None else None,
            profile.devices_per_node, profile.device.memory_bandwidth if profile.device is not None else None)


class CollectiveCache:
    """Collective times computed once per distinct (network, op, group, bytes): a group inside one
    node is keyed by the intra-node level alone, so clusters that differ only in their NICs share it."""

    def __init__(self):
        self._d: dict = {}
        self._ids: dict = {}
        self._by_obj: dict = {}  # (id(profile), inter) -> (profile, net id); the profile kept alive
        self._pricers: dict = {}
        self.calls = 0

    def net_id(self, profile, inter: bool) -> int:
        """A small integer naming :func:`_net_key` of *profile* (the same for equal networks)."""
        hit = self._by_obj.get((id(profile), inter))
        if hit is not None and hit[0] is profile:
            return hit[1]
        k = _net_key(profile, inter)
        i = self._ids.setdefault(k, len(self._ids))
        self._by_obj[(id(profile), inter)] = (profile, i)
        return i

    def pricer(self, profile) -> CommPricer:
        """The shared model's :class:`~suite.perf.training.CommPricer` for *profile*, one per
        distinct network (clusters that differ in nothing the collectives read share it)."""
        k = self.net_id(profile, True)
        p = self._pricers.get(k)
        if p is None:
            p = self._pricers[k] = _CountingPricer(profile, self)
        return p

    def __call__(self, op: str, nbytes: float, group: Group, profile) -> float:
        if group.size <= 1 or nbytes == 0:
            return 0.0
        key = (self.net_id(profile, group.nodes > 1), op, group, float(nbytes))
        t = self._d.get(key)
        if t is None:
            self.calls += 1
            t = collective_time(op, nbytes, group, profile).time
            self._d[key] = t
        return t


class _CountingPricer(CommPricer):
    """A :class:`CommPricer` that adds its distinct collectives to the owning cache's ``calls``."""

    def __init__(self, profile, owner: CollectiveCache):
        super().__init__(profile)
        self._owner = owner

    def one(self, op, nbytes, group):
        before = self.calls
        t = super().one(op, nbytes, group)
        self._owner.calls += self.calls - before
        return t


def _dp_group(tp: int, dp: int, gpn: int) -> Group:
    per = max(1, min(dp, gpn // tp))
    nodes = -(-dp // per)
    conc = max(1, gpn // per) if nodes > 1 else 1  # the other shards' DP groups share the NICs
    return Group(ranks_per_node=per, nodes=nodes, concurrent=conc)


def _p2p_group(tp: int, dp: int, gpn: int) -> Group:
    if tp * dp >= gpn:
        return Group(ranks_per_node=gpn, nodes=2)
    return Group(ranks_per_node=tp * dp, nodes=1)


def _lookup(cols: list[np.ndarray], fn) -> np.ndarray:
    """Apply ``fn(tuple of ints)`` once per distinct row of the integer columns; broadcast back."""
    key = np.zeros(cols[0].shape, dtype=np.int64)
    radix = []
    for col in cols:
        r = int(col.max()) + 1 if col.size else 1
        key = key * r + col
        radix.append(r)
    uniq, inv = np.unique(key, return_inverse=True)
    vals = np.empty(uniq.size, dtype=float)
    for n, k in enumerate(uniq.tolist()):
        parts = []
        for r in reversed(radix):
            k, v = divmod(k, r)
            parts.append(v)
        vals[n] = fn(tuple(reversed(parts)))
    return vals[inv.reshape(-1)]


def evaluate_points(w: WorkloadConsts, c: Cluster, s: Strategies, batch: int, efficiency: float | None = None,
                    cache: CollectiveCache | None = None, expansion: bool = True,
                    ignore_memory: bool = False) -> dict[str, np.ndarray]:
    """The model at every strategy of ``s`` on cluster ``c`` (vectorised; see the module docstring).

    Returns
    -------
    dict of str -> ndarray (one entry per point)
        ``time`` (s, inf where infeasible unless *ignore_memory*), ``raw_time`` (the same, feasible
        or not), ``compute`` (pipeline with no communication), ``tp_exposed``, ``pp_exposed`` (bubble
        and sends), ``dp_exposed``, ``dp_allreduce``, ``optimizer``, ``expansion`` (s), ``memory`` (B
        per GPU, before spilling), ``overflow`` (B per GPU to the tier), ``feasible`` (bool),
        ``microbatches``.
    """
    return evaluate_many(w, [c], np.zeros(len(s), dtype=np.int64), s, batch, efficiency, cache, expansion,
                         ignore_memory)


def _hardware(c: Cluster, efficiency: float | None):
    hw = c.hw if c.hw is not None else hardware_of(c.profile)
    return hw if efficiency is None else hw.with_efficiency(float(efficiency))


def evaluate_many(w: WorkloadConsts, clusters: list[Cluster], ci: np.ndarray, s: Strategies, batch: int,
                  efficiency: float | None = None, cache: CollectiveCache | None = None,
                  expansion: bool | np.ndarray = True, ignore_memory: bool = False) -> dict[str, np.ndarray]:
    """:func:`evaluate_points` over points on several clusters at once (``ci``: the cluster index of
    each point; ``expansion``: one flag or one per point).

    Each cluster's points are priced by :func:`suite.perf.training.evaluate` (the shared model) on
    that cluster's hardware; COMET adds its own idea on top: the expansion tier that holds the
    optimizer states which do not fit the HBM.
    """
    priced = _price_many(w, clusters, ci, s, batch, efficiency, cache or CollectiveCache())
    return _with_expansion(priced, expansion, ignore_memory)


def _price_many(w: WorkloadConsts, clusters: list[Cluster], ci: np.ndarray, s: Strategies, batch: int,
                efficiency: float | None, cache: CollectiveCache) -> tuple[dict, dict[str, np.ndarray]]:
    """What :func:`evaluate_many` computes before the expansion tier is applied: each point's
    cluster tier columns and the shared model's outputs (:func:`_price_groups`). Neither depends
    on ``expansion`` or ``ignore_memory``, so one pricing serves a search with and without the
    tier (:func:`grid_summary`)."""
    ci = np.asarray(ci, dtype=np.int64)
    tier, groups = _cluster_columns(clusters, ci, efficiency, cache)
    return tier, _price_groups(w, groups, ci, s, batch, cache)


def _with_expansion(priced: tuple[dict, dict[str, np.ndarray]], expansion: bool | np.ndarray,
                    ignore_memory: bool) -> dict[str, np.ndarray]:
    """:func:`evaluate_many`'s result from :func:`_price_many`'s: the expansion tier (on the points
    whose ``expansion`` flag is set), feasibility and the times."""
    tier, out = priced
    m = out["microbatches"]
    exp_flag = np.broadcast_to(np.asarray(expansion, dtype=bool), m.shape)
    valid = np.isfinite(out["raw_time"]) & (m >= 1)
    over, fits, t_exp = _expansion(out["memory"], out["states"], tier, np.where(exp_flag, tier["cap"], 0.0))
    feasible = fits & valid
    time = out["raw_time"] + t_exp
    return {"time": np.where(feasible | (ignore_memory & valid), time, np.inf), "compute": out["compute"],
            "tp_exposed": out["tp_exposed"], "pp_exposed": out["pp_exposed"], "bubble": out["bubble"], "dp_exposed": out["dp_exposed"],
            "dp_allreduce": out["dp_allreduce"], "optimizer": out["optimizer"], "expansion": t_exp, "memory": out["memory"],
            "overflow": over, "feasible": feasible, "microbatches": m, "raw_time": time}


def _cluster_columns(clusters: list[Cluster], ci: np.ndarray, efficiency: float | None, cache: CollectiveCache):
    """Per point, its cluster's expansion tier and HBM (``cap``, ``exp_bw``, ``exp_lat``, ``hbm``,
    ``hbm_bw``); and the clusters grouped by what the shared model reads (network, device): clusters
    that differ only in their expansion tier price the same training step, once."""
    n = len(ci)
    tier = {k: np.zeros(n) for k in ("cap", "exp_bw", "exp_lat", "hbm", "hbm_bw")}
    groups: dict = {}
    for k, c in enumerate(clusters):
        hw = _hardware(c, efficiency)
        key = (cache.net_id(c.profile, True), hw.peak, hw.memory_bandwidth, hw.memory, hw.curve, hw.gpn)
        groups.setdefault(key, (hw, c.profile, []))[2].append(k)
        sel = np.flatnonzero(ci == k)
        for name, v in (("cap", c.exp_capacity / c.gpn), ("exp_bw", c.exp_bandwidth / c.gpn), ("exp_lat", c.exp_latency),
                        ("hbm", c.hbm), ("hbm_bw", c.hbm_bw)):
            tier[name][sel] = v
    return tier, list(groups.values())


#: the shared model's outputs COMET reports, under COMET's names (several summed)
_SHARED_KEYS = {"raw_time": ("raw_time",), "bubble": ("bubble",), "compute": ("compute",),
                "tp_exposed": ("tp_comm", "cp_comm"), "pp_exposed": ("pp_comm",),
                "dp_exposed": ("dp_exposed", "embedding_comm"), "dp_allreduce": ("dp_comm",),
                "optimizer": ("optimizer",), "memory": ("memory",), "states": ("states",),
                "microbatches": ("microbatches",)}


def _price_groups(w: WorkloadConsts, groups: list, ci: np.ndarray, s: Strategies, batch: int,
                  cache: CollectiveCache) -> dict[str, np.ndarray]:
    """One call of :func:`suite.perf.training.evaluate` per group of clusters, over all its points:
    sequence parallelism with TP, bf16 gradients, the reduction overlapped with the last backward."""
    out = {k: np.zeros(len(s)) for k in _SHARED_KEYS}
    for hw, prof, members in groups:
        sel = np.flatnonzero(np.isin(ci, members))
        if sel.size == 0:
            continue
        st = s.take(sel)
        plans = Plans(tp=st.tp, pp=st.pp, dp=st.dp, mbs=st.mbs, gbs=batch, recompute=st.rc, sp=st.tp > 1,
                      grad_bytes=2, dp_overlap=1.0)
        r = training.evaluate(w.shape, hw, plans, cache.pricer(prof), ignore_memory=True)
        for k, parts in _SHARED_KEYS.items():
            out[k][sel] = sum(r[x] for x in parts)
    return out


def _expansion(mem, states, tier: dict, cap):
    """The expansion tier (module docstring): overflow per GPU (B), whether it fits the tier, and
    its time (s): spilled optimizer states read and written once per step on the tier instead of
    the HBM. Arrays or scalars; *tier* holds ``hbm``, ``hbm_bw``, ``exp_bw``, ``exp_lat``."""
    over = np.maximum(0.0, mem - tier["hbm"])
    fits = over <= np.minimum(cap, states * (OPT_STATE_BYTES / BYTES_PER_PARAM)) + 1e-6
    t_exp = np.where(over > 0, over / tier["exp_bw"] + 2 * tier["exp_lat"] - 2 * over / tier["hbm_bw"], 0.0)
    return over, fits, np.maximum(t_exp, 0.0)


def evaluate_point(w: WorkloadConsts, c: Cluster, tp: int, pp: int, dp: int, mbs: int, rc: int, batch: int,
                   efficiency: float | None = None, expansion: bool = True) -> dict[str, float]:
    """The same model at one strategy (the vectorised path's scalar check): the shared model's
    :func:`suite.perf.training.evaluate_plan` plus the expansion tier."""
    hw = _hardware(c, efficiency)
    r = training.evaluate_plan(w.shape, hw, ignore_memory=True, tp=tp, pp=pp, dp=dp, mbs=mbs, gbs=batch,
                               recompute=rc, sp=tp > 1, grad_bytes=2, dp_overlap=1.0, who="comet")
    tier = {"hbm": c.hbm, "hbm_bw": c.hbm_bw, "exp_bw": c.exp_bandwidth / c.gpn, "exp_lat": c.exp_latency}
    over, fits, t_exp = _expansion(r["memory"], r["states"], tier, c.exp_capacity / c.gpn if expansion else 0.0)
    feasible = bool(fits) and r["microbatches"] >= 1
    t = r["raw_time"] + float(t_exp)
    return {"time": t if feasible else math.inf, "raw_time": t, "memory": r["memory"], "overflow": float(over),
            "feasible": feasible}


def _fastest_regardless_of_memory(s: Strategies, r: dict, gpn: int, heads: int, variant: str) -> int | None:
    """With ``ignore_memory``: the fastest point by ``raw_time`` (the rule's points only for
    ``megatron-rule``), whether it fits or not; None when no point is priced."""
    raw = np.where(np.isfinite(r["raw_time"]), r["raw_time"], np.inf)
    if variant == "megatron-rule":
        tpr = max(t for t in range(1, gpn + 1) if heads % t == 0 and gpn % t == 0)
        raw = np.where((s.tp == tpr) & (s.rc == 2) & (s.mbs == 1), raw, np.inf)
    return int(np.argmin(raw)) if np.isfinite(raw).any() else None


def best_index(r: dict[str, np.ndarray]) -> int | None:
    """Index of the fastest feasible point, or None when nothing fits."""
    t = r["time"]
    if not np.isfinite(t).any():
        return None
    return int(np.argmin(t))


def megatron_rule_index(s: Strategies, r: dict[str, np.ndarray], gpn: int, heads: int) -> int | None:
    """Megatron's rule of thumb (Narayanan SC'21 §5.4 takeaway): TP = GPUs per node (the largest
    divisor of the heads up to it), full recomputation, micro-batch 1, the smallest PP that fits the
    HBM, DP the rest. Index into ``s``, or None when no such point fits."""
    tpr = max(t for t in range(1, gpn + 1) if heads % t == 0 and gpn % t == 0)
    sel = (s.tp == tpr) & (s.rc == 2) & (s.mbs == 1) & r["feasible"]
    if not sel.any():
        return None
    idx = np.flatnonzero(sel)
    return int(idx[np.argmin(s.pp[idx])])


# --------------------------------------------------------------------------- the design-space grid

# GRIDS (the fixed grid of clusters): suite_comet.constants


def grid_clusters(base, grid: str = "comet-v2", nodes: int | None = None, profiles=None) -> list[Cluster]:
    """The grid's clusters, each derived from the *base* cluster profile (its fabric topology,
    latencies and NICs) with the device, the NVLink bandwidth of the device's node profile, the
    per-GPU NIC bandwidth and the node count overridden; expansion from the grid. *profiles*
    maps each device and node profile the grid names to the profile (the scenario's
    :func:`grid_inputs`, resolved by the runner).

    Raises
    ------
    ParameterError
        Unknown grid (lists the known ones), a base profile without two network levels, or a
        profile of the grid missing from *profiles*.
    """
    if grid not in GRIDS:
        raise ParameterError(f"comet: unknown grid {grid!r}; known: {sorted(GRIDS)}")
    g = GRIDS[grid]
    if base is None or len(base.network) < 2:
        raise ParameterError(f"comet: grid {grid!r} needs a cluster profile with an intra- and an inter-node level "
                             f"as its base, got {getattr(base, 'name', None)!r}")
    n = int(nodes or g["nodes"])
    out = []
    profiles = profiles or {}
    for dev_name, node_name in g["devices"]:
        missing = [x for x in (dev_name, node_name) if x not in profiles]
        if missing:
            raise ParameterError(f"comet: grid {grid!r}: expected the profile {missing[0]!r} among the resolved "
                                 f"inputs, got {sorted(profiles)}")
        dev = profiles[dev_name].device
        nv = profiles[node_name].network[0].bandwidth
        for bw in g["network"]:
            prof = base.with_overrides({
                "device.memory": f"{dev.memory} B", "device.memory_bandwidth": f"{dev.memory_bandwidth} B/s",
                "device.peak_flops.bf16": f"{dev.peak_flops['bf16']} FLOP/s", "nodes": n,
                "network.-1.size": n, "network.-1.bandwidth": bw, "network.0.bandwidth": f"{nv} B/s"})
            for e in g["expansion"]:
                label = f"{dev_name}/{bw.replace(' ', '')}/{'none' if not e else f'{e / 1e9:g}GB'}"
                c = cluster_of(prof, nodes=n, expansion=e, expansion_bandwidth=g["expansion_bandwidth"])
                own = hardware_of(profiles[dev_name])  # the grid device's own GEMM curve, not the base's
                out.append(dataclasses.replace(c, name=label, hw=dataclasses.replace(c.hw, curve=own.curve,
                                                                                    assumed=own.assumed)))
    return out


def search(w: WorkloadConsts, c: Cluster, batch: int, variant: str, cache: CollectiveCache | None = None,
           efficiency: float | None = None, **fixed):
    """(strategies, results, chosen index or None) of *variant* on one cluster."""
    s = enumerate_strategies(w, c, batch, **fixed)
    if len(s) == 0:
        return s, None, None
    use_exp = variant == "comet"
    r = evaluate_points(w, c, s, batch, efficiency, cache, expansion=use_exp)
    return s, r, _chosen(w, c, s, r, variant)


def _chosen(w: WorkloadConsts, c: Cluster, s: Strategies, r: dict[str, np.ndarray], variant: str) -> int | None:
    """The index *variant* picks among the priced points *r*: the Megatron rule's, or the fastest."""
    return megatron_rule_index(s, r, c.gpn, w.heads) if variant == "megatron-rule" else best_index(r)


def _search_pair(w: WorkloadConsts, c: Cluster, batch: int, variant: str, cache: CollectiveCache,
                 efficiency: float | None):
    """``(strategies, (results, index) of variant, (results, index) of hbm-only)`` on one cluster:
    :func:`search` of *variant* and of ``hbm-only``, the strategies enumerated and priced once for
    both (only the expansion tier and the choice differ; the same arrays as two searches give)."""
    s = enumerate_strategies(w, c, batch)
    if len(s) == 0:
        return s, (None, None), (None, None)
    priced = _price_many(w, [c], np.zeros(len(s), dtype=np.int64), s, batch, efficiency, cache)
    r0 = _with_expansion(priced, False, False)
    r = _with_expansion(priced, True, False) if variant == "comet" else r0
    return s, (r, _chosen(w, c, s, r, variant)), (r0, best_index(r0))


def grid_summary(w: WorkloadConsts, clusters: list[Cluster], batch: int, variant: str,
                 efficiency: float | None = None) -> dict:
    """Each cluster's best time under *variant* and under ``hbm-only``; the spread (slowest / fastest
    cluster) and the expansion gain (max over clusters of T(hbm-only) / T(variant))."""
    cache = CollectiveCache()
    rows = []
    for c in clusters:
        s, (r, i), (r0, i0) = _search_pair(w, c, batch, variant, cache, efficiency)
        t = float(r["time"][i]) if i is not None else math.inf
        t0 = float(r0["time"][i0]) if i0 is not None else math.inf
        rows.append({"cluster": c.name, "time": t, "time_hbm_only": t0,
                     "strategy": s.row(i) if i is not None else None, "points": len(s)})
    times = np.array([r["time"] for r in rows])
    fin = times[np.isfinite(times)]
    spread = float(fin.max() / fin.min()) if fin.size else math.nan
    # clusters where hbm-only fits nothing have no finite gain: counted apart (``hbm_infeasible``)
    gains = [r["time_hbm_only"] / r["time"] for r in rows if math.isfinite(r["time"]) and math.isfinite(r["time_hbm_only"])]
    return {"rows": rows, "spread": spread, "expansion_gain": float(max(gains)) if gains else math.nan,
            "infeasible": int((~np.isfinite(times)).sum()),
            "hbm_infeasible": int(sum(not math.isfinite(r["time_hbm_only"]) for r in rows)), "collective_calls": cache.calls,
            "points": int(sum(r["points"] for r in rows)) * 2}


def model_flops_per_gpu(w: WorkloadConsts, batch: int, time: float, gpus: int, recompute: str | int = "full") -> float:
    """FLOPs a step executes under *recompute* (:func:`suite.perf.training.iteration_flops`:
    Narayanan SC'21 eq. (3) with full recomputation, the attention core once more with selective,
    none re-run without) over time and GPUs (FLOP/s per GPU)."""
    return training.iteration_flops(w.shape, batch, recompute) / time / gpus


def traffic_bytes(blocks: int, hidden: int, seq: int, params: float, tp: int, pp: int, dp: int, mbs: int,
                  microbatches: int, dtype_bytes: int = 2, recompute: str = "none") -> dict[str, float]:
    """Bytes sent per step over the whole job, by kind, when every collective is a ring
    (:func:`suite.collectives.ring_allreduce` sends ``2 (p - 1) n`` bytes in all for an
    ``n``-byte buffer over ``p`` ranks; Patarasuk & Yuan 2009).

    * ``tp``: ``blocks m dp x n_ar x 2 (tp - 1) x mbs s h b`` (``n_ar`` = 4, 6 with full recomputation);
    * ``pp``: ``(pp - 1) x 2 x m dp x mbs s h b`` (each of the tp ranks sends its ``1/tp`` slice);
    * ``pp-gather``: ``(pp - 1) x 2 x m dp x (tp - 1) mbs s h b`` (the receiving stage's ring all-gather
      of the slices; intra-node, not priced by the model);
    * ``dp``: ``2 (dp - 1) P b`` (every shard's gradient all-reduce).
    """
    n = mbs * seq * hidden * dtype_bytes
    n_ar = 6 if recompute == "full" else 4
    mdp = microbatches * dp
    return {"tp": float(blocks * mdp * n_ar * 2 * (tp - 1) * n), "pp": float((pp - 1) * 2 * mdp * n),
            "pp-gather": float((pp - 1) * 2 * mdp * (tp - 1) * n), "dp": float(2 * (dp - 1) * params * dtype_bytes)}


def evaluate(scenario):
    """Model fidelity.

    One cluster (``grid = none``): the scenario's profile (``nodes`` of it; expansion from the
    ``expansion`` / ``expansion_bandwidth`` parameters or the profile's ``[ext.comet]``); the
    variant picks the strategy (``megatron-rule``, ``hbm-only`` search, ``comet`` search with the
    expansion tier), optionally with ``tp`` / ``pp`` / ``dp`` / ``microbatch`` / ``recompute`` fixed.
    Metrics: ``iteration_time`` and its breakdown (s), the strategy, ``memory_per_gpu`` (B),
    ``fits``, ``tokens_per_s``, ``model_flops_per_gpu`` (FLOP/s, eq. (3)), ``tokens_per_usd`` when
    ``cost.node_hour`` is set.

    A grid (``grid = comet-v2``): every cluster of :data:`GRIDS` derived from the scenario's profile
    (:func:`grid_clusters`); metrics ``spread`` (slowest / fastest cluster, each at the variant's
    choice), ``expansion_gain`` (max over clusters of T(hbm-only) / T(variant)), the compute-only
    null; artifact ``clusters`` (best strategy per cluster).

    Raises
    ------
    Skip
        No workload / profile, or no strategy fits.
    ParameterError
        A fixed degree that cannot apply (one line, e.g. ``comet: tp=3 must divide the 160 heads of
        megatron-1t``).
    """
    from suite.api import Skip

    p = scenario.params
    if scenario.workload is None or scenario.profile is None:
        raise Skip("comet needs a transformer workload and a cluster profile")
    w = consts_of(scenario.workload)
    batch = int(p["global_batch"])
    eff = float(p["efficiency"]) if p.get("efficiency") is not None else None
    if p.get("grid", "none") != "none":
        return _grid_result(scenario, w, batch, eff)
    c = cluster_of(scenario.profile, p.get("nodes"), p.get("expansion"), p.get("expansion_bandwidth"))
    s, r, i, fits = _chosen_strategy(scenario, w, c, batch, eff)
    return _strategy_result(w, c, batch, eff, s, r, i, fits)


def _grid_result(scenario, w: WorkloadConsts, batch: int, eff: float | None):
    """The grid's metrics: spread, expansion gain, the compute-only null, the best time; artifact
    ``clusters``."""
    from suite.api import Result

    p = scenario.params
    clusters = grid_clusters(scenario.profile, p["grid"], p.get("nodes"),
                             {u.partition(":")[2]: scenario.input(u) for u in grid_inputs()})
    g = grid_summary(w, clusters, batch, scenario.variant, eff)
    res = Result()
    res.add("spread", g["spread"], "1", "none")
    res.add("expansion_gain", g["expansion_gain"], "1", "higher")
    res.add("compute_only_spread", COMPUTE_ONLY_SPREAD, "1", "none")
    res.add("clusters", len(clusters), "1", "none")
    res.add("points", g["points"], "1", "none")
    res.add("infeasible_clusters", g["infeasible"], "1", "lower")
    res.add("collective_calls", g["collective_calls"], "1", "none")
    best = min(g["rows"], key=lambda r: r["time"])
    res.add("best_time", best["time"], "s", "lower")
    finite = lambda t: t if math.isfinite(t) else None  # noqa: E731
    res.artifacts["clusters"] = [{**r, "time": finite(r["time"]), "time_hbm_only": finite(r["time_hbm_only"])}
                                 for r in g["rows"]]
    return res


def _chosen_strategy(scenario, w: WorkloadConsts, c: Cluster, batch: int, eff: float | None):
    """The variant's strategy on one cluster, with the scenario's fixed degrees: ``(strategies,
    results, index, fits)``; the fastest regardless of memory with ``ignore_memory``.

    Raises
    ------
    ParameterError
        A fixed ``dp`` that no strategy uses.
    Skip
        Nothing fits (and ``ignore_memory`` is off).
    """
    from suite.api import Skip

    p = scenario.params
    fixed = {k: p.get(k2) for k, k2 in (("tp", "tp"), ("pp", "pp"), ("mbs", "microbatch"), ("recompute", "recompute"))
             if p.get(k2) is not None}
    s, r, i = search(w, c, batch, scenario.variant, None, eff, **fixed)
    if p.get("dp") is not None and len(s):
        keep = np.flatnonzero(s.dp == int(p["dp"]))
        if keep.size == 0:
            raise ParameterError(f"comet: dp={p['dp']} gives no strategy using all {c.gpus} GPUs of {c.name} "
                                 f"with batch {batch}")
        s = s.take(keep)
        r = {k: v[keep] for k, v in r.items()}
        i = megatron_rule_index(s, r, c.gpn, w.heads) if scenario.variant == "megatron-rule" else best_index(r)
    fits = i is not None
    if i is None and p.get("ignore_memory") and len(s):
        i = _fastest_regardless_of_memory(s, r, c.gpn, w.heads, scenario.variant)
    if i is None:
        raise Skip(f"comet: no strategy of {scenario.variant} fits {w.name} on {c.gpus} GPUs of {c.name} "
                   f"({len(s)} tried; ignore_memory=true prices the fastest anyway)")
    return s, r, i, fits


def _strategy_result(w: WorkloadConsts, c: Cluster, batch: int, eff: float | None, s: Strategies, r: dict, i: int,
                     fits: bool):
    """One strategy's metrics: the step time and its breakdown, the strategy, memory, throughput."""
    from suite.api import Result

    res = Result()
    T = float(r["time"][i]) if fits else float(r["raw_time"][i])
    res.add("iteration_time", T, "s", "lower")
    for k in ("compute", "bubble", "tp_exposed", "pp_exposed", "dp_exposed", "optimizer", "expansion"):
        res.add(f"{k}_time", float(r[k][i]), "s", "lower")
    res.add("dp_allreduce_time", float(r["dp_allreduce"][i]), "s", "none")
    row = s.row(i)
    for k in ("tp", "pp", "dp", "mbs"):
        res.add(k, row[k], "1", "none")
    res.add("recompute_code", RECOMPUTE.index(row["recompute"]), "1", "none")
    res.add("microbatches", float(r["microbatches"][i]), "1", "none")
    res.add("memory_per_gpu", float(r["memory"][i]), "B", "none")
    res.add("overflow_per_gpu", float(r["overflow"][i]), "B", "none")
    res.add("peak_memory", float(r["memory"][i] - r["overflow"][i]), "B", "none")  # resident in HBM
    res.add("fits", 1.0 if fits else 0.0, "1", "none")
    res.add("feasible_strategies", int(np.sum(r["feasible"])), "1", "higher")
    res.add("strategies", len(s), "1", "none")
    tok = batch * w.seq / T
    res.add("tokens_per_s", tok, "1/s", "higher")
    res.add("model_flops_per_gpu", model_flops_per_gpu(w, batch, T, c.gpus, row["recompute"]), "FLOP/s", "higher")
    res.add("mfu", 100.0 * model_flops_per_gpu(w, batch, T, c.gpus, "none") / c.peak, "%", "higher")
    res.add("gemm_efficiency_assumed", 1.0 if (eff is None and c.hw.assumed) else 0.0, "1", "none")
    if c.node_hour:
        res.add("tokens_per_usd", tok * 3600.0 / (c.node_hour * c.nodes), "1", "higher")
    res.artifacts["strategy"] = row
    res.artifacts["cluster"] = {"name": c.name, "gpus": c.gpus, "expansion_per_node": c.exp_capacity,
                                "expansion_bandwidth": c.exp_bandwidth}
    return res
