"""Poseidon's cost model: per-layer communication (PS, SFB, HybComm) and wait-free backprop.

Pure functions from (layer table, hardware profile, parameters) to metrics, built from the
primitives of :mod:`suite.perf`. Units are SI throughout: seconds, bytes, bytes/s, FLOP/s;
"floats" are fp32 elements (4 bytes).

Model
-----
* **Compute.** Forward and backward time of every layer by roofline
  (:func:`suite.perf.layer_times`): ``max(F * K / (eff * peak_fp32), bytes / mem_bw)`` with K the
  per-node batch and ``eff`` the technique-wide efficiency (see :data:`DEFAULT_EFFICIENCY`).
* **PS** (parameter server, servers colocated on the first S nodes, gradient sharded evenly over
  them): one push and one pull per layer, each a ``direct`` all-to-all priced by
  :func:`suite.perf.collective_time` over the nodes (:func:`suite.perf.ps_push_pull_time`'s
  busiest-NIC bytes on a switch; the topology, NICs and every crossed level otherwise).
* **SFB** (sufficient-factor broadcasting, fc layers): an fc gradient over a batch of K is
  ``sum_k u_k v_k^T`` (u in R^M, v in R^N); every worker sends its K pairs to each of the P-1
  others over its single NIC (:func:`suite.perf.broadcast_time`, ``algorithm="flat"``; given a
  profile, a ring all-gather by :func:`suite.perf.collective_time`, the same cost on a switch), then
  rebuilds the others' gradients: ``2 M N K (P-1)`` extra FLOPs, counted on the layer's
  communication path (serial after the factors arrive). The bias (``params - M N``) goes by PS.
* **HybComm.** Per layer, the cheaper of the two by the cost rule of Poseidon's Table 1 /
  Algorithm 1 as recalled (**unverified** -- the full text was not available; the HybComm cost
  table and BestScheme are not in the abstract)::

      PS  (colocated server+worker, floats per node per iteration): 2 M N (P1 + P2 - 2) / P2
      SFB (worker, floats per node per iteration):                  2 K (P1 - 1) (M + N)
      choose SFB iff SFB <= PS; every non-fc layer (conv, norm, ...) uses PS.

* **Iteration.** Without overlap ``T = f + sum b + sum c``
  (:func:`suite.perf.sequential_iteration_time`); with wait-free backprop the layer-wise timeline
  of :func:`suite.perf.wfbp_timeline`, ``T = f + max(sum b, e_1)``.
* **Speed-up** = aggregate throughput at P nodes over one node's, ``P K / T_P  /  (K / T_1)``.
  That "speed-up" means this is an assumption: the paper's definition was not seen
  (not in the abstract), the TF release docs frame the results as throughput.

References
----------
.. [Zhang17] H. Zhang, Z. Zheng, S. Xu, W. Dai, Q. Ho, X. Liang, Z. Hu, J. Wei, P. Xie,
   E. P. Xing, "Poseidon: An Efficient Communication Architecture for Distributed Deep Learning
   on GPU Clusters", USENIX ATC 2017, pp. 181-193 (arXiv 1706.03292): §3.1 wait-free
   backpropagation, §3.2 HybComm (Table 1, Algorithm 1 -- recalled, unverified).
.. [Xie16] P. Xie, J. K. Kim, Y. Zhou, Q. Ho, A. Kumar, Y. Yu, E. Xing, "Lighter-Communication
   Distributed Machine Learning via Sufficient Factor Broadcasting", UAI 2016.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from suite.api import (Group, broadcast_time, collective_time, layer_times, ps_push_pull_time, resolve_scale,
                       roofline_time, sequential_iteration_time, wfbp_timeline)

# DEFAULT_EFFICIENCY (achieved fraction of the device's fp32 peak, for every claim and scenario) is
# defined with its source in suite_poseidon.constants, so the declaration reads it without this module.
from suite_poseidon.constants import DEFAULT_EFFICIENCY

__all__ = [
    "default_nodes",
    "DEFAULT_EFFICIENCY",
    "DTYPE_BYTES",
    "VARIANTS",
    "ps_floats_per_node",
    "sfb_floats_per_node",
    "best_scheme",
    "sfb_eligible",
    "LayerComm",
    "layer_comm",
    "IterationModel",
    "iteration_model",
    "speedup",
    "PAPER_NODES",
    "workers_of",
    "nodes_of",
    "resolve_nodes",
    "evaluate",
]

#: Bytes per element for the supported dtypes (Poseidon trains in fp32).
DTYPE_BYTES = {"fp32": 4}

#: variant -> (scheme policy, overlap).  Policy: "ps" (every layer PS), "sfb" (fc layers SFB),
#: "hybrid" (per layer by :func:`best_scheme`).
VARIANTS = {
    "ps": ("ps", False),
    "wfbp": ("ps", True),
    "sfb": ("sfb", False),
    "poseidon": ("hybrid", True),
}


# --------------------------------------------------------------------------- cost rule


def ps_floats_per_node(m: int, n: int, workers: int, servers: int) -> float:
    """Floats one colocated server+worker node sends and receives per iteration under PS.

    ``2 M N (P1 + P2 - 2) / P2`` (push then pull of an M x N gradient sharded over P2 servers,
    both directions counted).

    Parameters
    ----------
    m, n : int
        Gradient shape (M outputs, N inputs).
    workers, servers : int
        P1 workers, P2 servers (colocated: 1 <= P2 <= P1).

    Returns
    -------
    float
        Floats per node per iteration (0 for a single node).

    Raises
    ------
    ValueError
        Non-positive shape or counts, or P2 > P1.

    References
    ----------
    [Zhang17] Table 1, "colocated server+worker" column, as recalled in
    (UNVERIFIED: recalled, not read in the paper).
    """
    _check_counts(m, n, workers, servers)
    return 2.0 * m * n * (workers + servers - 2) / servers


def sfb_floats_per_node(m: int, n: int, workers: int, batch: int) -> float:
    """Floats one worker sends and receives per iteration under SFB: ``2 K (P1 - 1) (M + N)``.

    Each worker sends its K factor pairs (u_k in R^M, v_k in R^N) to each of the P1 - 1 other
    workers and receives theirs.

    Parameters
    ----------
    m, n : int
        Gradient shape (M, N).
    workers : int
        P1.
    batch : int
        K, samples per worker per iteration (one factor pair each).

    Returns
    -------
    float
        Floats per node per iteration.

    References
    ----------
    [Zhang17] Table 1 (SFB row) as recalled (UNVERIFIED);
    [Xie16] §3.
    """
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    _check_counts(m, n, workers, 1)
    return 2.0 * batch * (workers - 1) * (m + n)


def _check_counts(m: int, n: int, workers: int, servers: int) -> None:
    if m < 1 or n < 1:
        raise ValueError(f"gradient shape must be positive, got ({m}, {n})")
    if workers < 1 or servers < 1:
        raise ValueError(f"workers and servers must be >= 1, got {workers}, {servers}")
    if servers > workers:
        raise ValueError(f"colocated servers must be <= workers, got {servers} > {workers}")


def sfb_eligible(layer) -> bool:
    """Whether a layer's gradient is a sum of rank-1 factors per sample (an fc layer with a
    ``grad_shape``). Conv layers are not: one sample gives H x W factor pairs [Zhang17 §3.2]."""
    return layer.kind == "fc" and layer.grad_shape is not None


def best_scheme(layer, workers: int, servers: int, batch: int) -> str:
    """HybComm's choice for one layer: ``"sfb"`` iff the layer is an fc layer and
    ``2 K (P1-1)(M+N) <= 2 M N (P1+P2-2) / P2``; otherwise ``"ps"``.

    Parameters
    ----------
    layer : suite.workloads.Layer
    workers, servers, batch : int
        P1, P2 (colocated), K.

    Returns
    -------
    str
        ``"ps"`` or ``"sfb"``.

    References
    ----------
    [Zhang17] Algorithm 1 (BestScheme), as recalled (UNVERIFIED).
    """
    if not sfb_eligible(layer):
        return "ps"
    m, n = layer.grad_shape
    sfb = sfb_floats_per_node(m, n, workers, batch)
    ps = ps_floats_per_node(m, n, workers, servers)
    return "sfb" if sfb <= ps else "ps"


def scheme_for(policy: str, layer, workers: int, servers: int, batch: int) -> str:
    """The scheme a variant's policy uses for one layer: ``"ps"`` always PS, ``"sfb"`` SFB for
    every eligible (fc) layer, otherwise HybComm's :func:`best_scheme` (Poseidon)."""
    if policy == "ps":
        return "ps"
    if policy == "sfb":
        return "sfb" if sfb_eligible(layer) else "ps"
    return best_scheme(layer, workers, servers, batch)


# --------------------------------------------------------------------------- per layer


@dataclass(frozen=True)
class LayerComm:
    """Communication of one layer's gradient in one iteration, for one node.

    ``bytes`` is what one node sends plus receives (the unit of the cost rule, x dtype bytes;
    for PS the figure of a colocated server+worker node); ``time`` the layer's communication
    time on the NIC plus, for SFB, the reconstruction compute (s).
    """

    layer: str
    kind: str
    scheme: str
    bytes: float
    net_time: float
    rebuild_time: float

    @property
    def time(self) -> float:
        return self.net_time + self.rebuild_time

    def as_dict(self) -> dict:
        return {"layer": self.layer, "kind": self.kind, "scheme": self.scheme, "bytes": self.bytes,
                "comm_time": self.time, "net_time": self.net_time, "rebuild_time": self.rebuild_time}


def _ps_time(m: float, p: int, s: int, alpha: float, beta: float, profile=None) -> float:
    """Colocated sharded-PS push + pull of m bytes: :func:`suite.perf.ps_push_pull_time` with
    (alpha, beta), or, given a *profile*, each phase priced by
    :func:`suite.perf.collective_time` as a ``direct`` all-to-all over the P nodes (every shard
    posted at once: one latency, the busiest NIC direction's bytes B = m (P-1)/P for S = P, or
    max(m, (P-1) m / S) for S < P, at the node's share of every level it crosses)."""
    if profile is None:
        return ps_push_pull_time(m, p, s, alpha, beta, colocated=True)
    if p <= 1 or m <= 0:
        return 0.0
    busiest = m * (p - 1) / p if s == p else max(m, (p - 1) * m / s)
    # a direct all-to-all of n bytes per rank sends n (P-1)/P of them: n = busiest P/(P-1)
    return 2.0 * collective_time("alltoall", busiest * p / (p - 1), Group(1, p), profile, "direct").time


def layer_comm(layer, scheme: str, workers: int, servers: int, batch: int, alpha: float, beta: float,
               peak_flops: float, mem_bandwidth: float, efficiency: float, dtype_bytes: int = 4,
               profile=None) -> LayerComm:
    """Communication cost of one layer's gradient under *scheme* (``"ps"`` or ``"sfb"``).

    Parameters
    ----------
    layer : suite.workloads.Layer
    scheme : {"ps", "sfb"}
        ``"sfb"`` needs an fc layer (:func:`sfb_eligible`).
    workers, servers, batch : int
        P1 nodes (one worker each), P2 colocated servers, K samples per worker.
    alpha, beta : float
        Start-up latency (s) and time per byte (s/B) of the node's NIC (outer network level).
    peak_flops, mem_bandwidth, efficiency : float
        Device fp32 peak (FLOP/s), memory bandwidth (B/s), achieved fraction, for SFB's
        reconstruction ``2 M N K (P1-1)`` FLOPs.
    dtype_bytes : int
        Bytes per gradient element.
    profile : suite.hardware.Profile, optional
        When given, the network times come from :func:`suite.perf.collective_time` over the
        P1 nodes (one worker each) on this profile's levels, and ``alpha``/``beta`` are not
        used: PS as two ``direct`` all-to-all phases (:func:`_ps_time`), SFB as a ``ring``
        all-gather of the P1 sufficient-factor messages, whose cost ``(P1-1)(alpha + msg beta)``
        on a switch is exactly the flat broadcast's.

    Returns
    -------
    LayerComm

    Notes
    -----
    PS: ``T = ps_push_pull_time(params * d, P1, P2)`` [Li14 via suite.perf]; bytes per node
    ``2 params (P1+P2-2)/P2 * d``.
    SFB: ``T = (P1-1)(alpha + K (M+N) d beta)`` (flat broadcast over one NIC) + rebuild +
    the bias by PS; bytes per node ``2 K (P1-1)(M+N) d`` + the bias's PS bytes.

    Raises
    ------
    ValueError
        Unknown scheme, or SFB for a layer that is not fc.
    """
    p, s = workers, servers
    if scheme == "ps":
        m = layer.params * dtype_bytes
        t = _ps_time(m, p, s, alpha, beta, profile)
        nbytes = 2.0 * layer.params * (p + s - 2) / s * dtype_bytes
        return LayerComm(layer.name, layer.kind, "ps", nbytes, t, 0.0)
    if scheme != "sfb":
        raise ValueError(f"scheme must be 'ps' or 'sfb', got {scheme!r}")
    if not sfb_eligible(layer):
        raise ValueError(f"layer {layer.name!r} ({layer.kind}) has no sufficient factors; SFB needs an fc layer")
    mm, nn = layer.grad_shape
    msg = batch * (mm + nn) * dtype_bytes
    if profile is None:
        t_net = broadcast_time(msg, p, alpha, beta, algorithm="flat")
    elif p > 1:
        t_net = collective_time("allgather", msg * p, Group(1, p), profile, "ring").time
    else:
        t_net = 0.0
    nbytes = sfb_floats_per_node(mm, nn, p, batch) * dtype_bytes
    extra = max(0, layer.params - mm * nn)  # bias (and anything beyond the weight matrix) by PS
    if extra:
        t_net += _ps_time(extra * dtype_bytes, p, s, alpha, beta, profile)
        nbytes += 2.0 * extra * (p + s - 2) / s * dtype_bytes
    rebuild = 0.0
    if p > 1:
        flops = 2.0 * mm * nn * batch * (p - 1)
        moved = (batch * (p - 1) * (mm + nn) + mm * nn) * dtype_bytes
        rebuild = roofline_time(flops, moved, peak_flops, mem_bandwidth, efficiency)
    return LayerComm(layer.name, layer.kind, "sfb", nbytes, t_net, rebuild)


# --------------------------------------------------------------------------- iteration


@dataclass(frozen=True)
class IterationModel:
    """One iteration of one variant at P nodes (times in s)."""

    variant: str
    nodes: int
    batch: int
    forward: float
    backward: tuple[float, ...]
    comms: tuple[LayerComm | None, ...]  # per layer of the table, None when it has no params
    iteration_time: float
    exposed_comm: float

    @property
    def comm_times(self) -> list[float]:
        return [c.time if c is not None else 0.0 for c in self.comms]

    @property
    def comm_time(self) -> float:
        return float(sum(self.comm_times))

    @property
    def compute_time(self) -> float:
        return self.forward + float(sum(self.backward))

    @property
    def throughput(self) -> float:
        """Samples per second of the whole cluster: ``P K / T``."""
        return self.nodes * self.batch / self.iteration_time

    @property
    def bytes_per_node(self) -> float:
        return float(sum(c.bytes for c in self.comms if c is not None))

    def per_layer(self) -> list[dict]:
        return [c.as_dict() for c in self.comms if c is not None]


def iteration_model(layers: Sequence, variant: str, nodes: int, batch: int, servers: int,
                    alpha: float, beta: float, device, efficiency: float = DEFAULT_EFFICIENCY,
                    dtype: str = "fp32", profile=None) -> IterationModel:
    """Per-iteration time of *variant* on *nodes* single-GPU nodes.

    Parameters
    ----------
    layers : sequence of suite.workloads.Layer
        The model's layer table, forward order.
    variant : {"ps", "wfbp", "sfb", "poseidon"}
    nodes : int
        P1 >= 1 (one GPU worker per node).
    batch : int
        K, samples per node per iteration.
    servers : int
        P2 colocated parameter servers, 1 <= P2 <= P1.
    alpha, beta : float
        Outer network level: latency (s), 1/bandwidth (s/B) per direction; not used when
        *profile* is given (:func:`evaluate` always gives one, or has no network).
    device : suite.hardware.Device
        Its ``peak_flops["fp32"]`` (FLOP/s) and ``memory_bandwidth`` (B/s) give compute time.
    efficiency : float
        Achieved fraction of peak, in (0, 1].
    dtype : str
        ``"fp32"``.
    profile : suite.hardware.Profile, optional
        Price the network over this profile's levels (:func:`layer_comm`) instead of alpha/beta.

    Returns
    -------
    IterationModel

    Raises
    ------
    ValueError
        Unknown variant, nodes/batch/servers out of range, efficiency outside (0, 1].

    References
    ----------
    [Zhang17] §3.1 (WFBP), §3.2 (HybComm); formulas in the module docstring.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {variant!r}")
    if nodes < 1 or batch < 1:
        raise ValueError(f"nodes and batch must be >= 1, got {nodes}, {batch}")
    if not 1 <= servers <= nodes:
        raise ValueError(f"servers must be in [1, nodes={nodes}], got {servers}")
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"dtype must be one of {sorted(DTYPE_BYTES)}, got {dtype!r}")
    d = DTYPE_BYTES[dtype]
    policy, overlap = VARIANTS[variant]
    fwd, bwd = layer_times(list(layers), batch, device, dtype=dtype, efficiency=efficiency, dtype_bytes=d)
    peak = device.flops(dtype)
    comms: list[LayerComm | None] = []
    for layer in layers:
        if layer.params <= 0:
            comms.append(None)
            continue
        scheme = scheme_for(policy, layer, nodes, servers, batch)
        comms.append(layer_comm(layer, scheme, nodes, servers, batch, alpha, beta, peak,
                                device.memory_bandwidth, efficiency, d, profile))
    ctimes = [c.time if c is not None else 0.0 for c in comms]
    f = float(sum(fwd))
    if overlap:
        tl = wfbp_timeline(f, bwd, ctimes)
        t, exposed = tl.iteration_time, tl.exposed_comm
    else:
        t = sequential_iteration_time(f, bwd, ctimes)
        exposed = float(sum(ctimes))
    return IterationModel(variant, nodes, batch, f, tuple(bwd), tuple(comms), t, exposed)


def speedup(layers: Sequence, variant: str, nodes: int, batch: int, servers: int, alpha: float, beta: float,
            device, efficiency: float = DEFAULT_EFFICIENCY, dtype: str = "fp32",
            profile=None) -> tuple[float, IterationModel, IterationModel]:
    """Aggregate throughput at *nodes* over one node's (same variant, same batch per node).

    Returns ``(speedup, model_at_P, model_at_1)``; ``speedup = P T_1 / T_P`` (1 at P = 1).
    """
    at_p = iteration_model(layers, variant, nodes, batch, servers, alpha, beta, device, efficiency, dtype, profile)
    at_1 = iteration_model(layers, variant, 1, batch, 1, alpha, beta, device, efficiency, dtype, profile)
    return at_p.throughput / at_1.throughput, at_p, at_1


# --------------------------------------------------------------------------- evaluate


#: the paper's largest testbed of its headline figures: 16 single-GPU machines (a default run's
#: nodes, when the profile holds as many)
PAPER_NODES = 16


def workers_of(profile) -> int:
    """The single-GPU workers of *profile*, as the paper's machines are: a cluster's nodes; a node
    or device profile with a network level, its devices; one without, 1."""
    if profile.kind == "cluster":
        return profile.num_nodes
    return profile.num_devices if profile.network else 1


def default_nodes(profile) -> int:
    """Deprecated in 0.3.12, removed in 0.4.0: ``nodes_of({}, profile)`` (the capped default)."""
    import warnings

    warnings.warn("suite_poseidon.model.default_nodes(profile) is deprecated and removed in 0.4.0: use "
                  "nodes_of({}, profile)", DeprecationWarning, stacklevel=2)
    return nodes_of({}, profile)


def nodes_of(params, profile) -> int:
    """``params['nodes']``, or when it is None (unset) the ``nodes`` a case runs on: the profile's
    :func:`workers_of`, at most :data:`PAPER_NODES`; :data:`PAPER_NODES` without a profile
    (:func:`suite.api.resolve_scale`)."""
    return resolve_scale(params, "nodes", profile, PAPER_NODES, count=workers_of)


def resolve_nodes(profile, nodes: int) -> None:
    """Check that *nodes* fits the profile; raise :class:`suite.Skip` with the reason if not."""
    from suite.api import Skip

    if profile.kind == "cluster":
        have = profile.num_nodes
        if nodes > have:
            raise Skip(f"poseidon: nodes={nodes} exceeds the {have} nodes of profile {profile.name!r}")
        if not profile.network:
            raise Skip(f"poseidon: profile {profile.name!r} has no [[network]] level")
    elif nodes > 1 and not (profile.network and nodes <= profile.num_devices):
        # one node's devices behind its switch are workers as the paper's machines are (one GPU
        # each, the network between them); a profile without a network level has no such path
        raise Skip(f"poseidon: profile {profile.name!r} is of kind {profile.kind!r}, not a cluster; "
                   f"with no network level only nodes=1 applies, with one up to its {profile.num_devices} devices "
                   f"(got nodes={nodes})")


def _metrics(res, at_p, sp, nodes):
    """*res* with the model's metrics (see :func:`evaluate`) of one iteration *at_p* on *nodes* nodes."""
    res.add("iteration_time", at_p.iteration_time, "s", "lower")
    res.add("throughput", at_p.throughput, "samples/s", "higher")
    res.add("speedup", sp, "1", "higher")
    res.add("comm_time", at_p.comm_time, "s", "lower")
    res.add("exposed_comm", at_p.exposed_comm, "s", "lower")
    res.add("compute_time", at_p.compute_time, "s", "lower")
    res.add("bytes_per_node", at_p.bytes_per_node, "B", "lower")
    res.add("comm_bytes", at_p.bytes_per_node / 2.0, "B", "lower")
    res.add("sfb_layers", sum(1 for c in at_p.comms if c is not None and c.scheme == "sfb"), "1", "none")
    res.add("nodes_used", nodes, "1", "none")  # the resolved count: nodes=None is the profile's, at most 16
    return res


def evaluate(scenario):
    """Model fidelity: iteration time, throughput and speed-up of one variant.

    Reads ``scenario.params`` (``nodes``, ``batch_per_node``, ``servers``, ``efficiency``,
    ``dtype``), ``scenario.profile`` (device fp32 peak and memory bandwidth; outer network level)
    and ``scenario.workload`` (a LayerTable).

    Returns
    -------
    suite.Result
        Metrics ``iteration_time`` (s), ``throughput`` (samples/s), ``speedup`` (1, aggregate
        throughput over one node's), ``comm_time`` (s, sum over layers), ``exposed_comm`` (s),
        ``compute_time`` (s, forward + backward), ``bytes_per_node`` (B per iteration, sent plus
        received), ``comm_bytes`` (B one node sends per iteration: half of ``bytes_per_node``, the
        traffic being symmetric), ``sfb_layers`` (count); artifact ``layers`` (per layer: scheme, bytes, time).

    Raises
    ------
    suite.Skip
        No layer table, nodes beyond the profile, servers > nodes.
    """
    from suite.api import Result, Skip

    prof, wl = scenario.profile, scenario.workload
    if prof is None:
        raise Skip("poseidon model fidelity needs a hardware profile")
    if wl is None or not getattr(wl, "layers", None):
        raise Skip(f"poseidon model fidelity needs a layer-table workload, got {getattr(wl, 'name', None)!r}")
    p = scenario.params
    nodes, batch = nodes_of(p, prof), int(p["batch_per_node"])
    servers = nodes if p.get("servers") is None else int(p["servers"])
    if servers > nodes:
        raise Skip(f"poseidon: servers={servers} > nodes={nodes} (servers are colocated with workers)")
    resolve_nodes(prof, nodes)
    device = prof.require_device()
    # the profile's levels price the network (collective_time), so alpha/beta are not used;
    # without a network (one node) no traffic crosses one
    net = prof.network[-1] if prof.network else None
    sp, at_p, at_1 = speedup(wl.layers, scenario.variant, nodes, batch, servers, 0.0, 0.0, device,
                             float(p["efficiency"]), p["dtype"], prof if prof.network else None)
    res = _metrics(Result(), at_p, sp, nodes)
    res.artifacts["layers"] = at_p.per_layer()
    res.artifacts["setup"] = {
        "nodes": nodes, "servers": servers, "batch_per_node": batch, "efficiency": float(p["efficiency"]),
        "network": net.name if net is not None else None,
        "bandwidth_Bps": net.bandwidth if net is not None else None,
        "latency_s": net.latency if net is not None else None,
        "device": device.name, "peak_fp32_flops": device.flops(p["dtype"]),
        "single_node_iteration_time": at_1.iteration_time,
        "workers_per_node": 1,
    }
    # one GPU per node, as the paper's single-GPU machines (`workers_per_node` above; `suite info poseidon`
    # says a node's other GPUs stay idle): not a sentence per case, 110 B of every stored result
    return res
