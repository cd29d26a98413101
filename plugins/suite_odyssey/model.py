"""Odyssey's unified performance model: iteration time of a DP x PP (x TP) plan, of each recovery
policy after failures, their one-shot costs, the plan search and the adaptive choice.

Everything is in SI units (s, B, FLOP/s). The paper's own equations were not readable
(the estimator is Eqs. 9-14 of arXiv v4, the
selection Eq. 8, formulas unseen), so the model below is our own simplified estimator built
from suite.perf primitives; each function names its source.

References
----------
.. [Zhou25] Y. Zhou et al., "Odyssey: Adaptive Policy Selection for Resilient Distributed
   Training", arXiv 2508.21613 v3 (2025); v4 retitled "Chameleon: Adaptive Fault Tolerance for
   Distributed Training via Real-time Policy Selection", IEEE INFOCOM 2026.
.. [Narayanan21] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC 2021: 1F1B (§2.2); transformer-layer FLOPs
   ``24 b s h^2 + 4 b s^2 h`` forward, backward twice the forward (§5.1, Eq. 3 derivation).
.. [Shoeybi19] M. Shoeybi et al., "Megatron-LM: Training Multi-Billion Parameter Language Models
   Using Model Parallelism", arXiv 1909.08053, 2019, §3 (two all-reduces per layer and pass).
.. [Rajbhandari20] S. Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
   Parameter Models", SC 2020, §3.1: mixed-precision Adam keeps 16 bytes of state per parameter.
.. [Thorpe23] J. Thorpe et al., "Bamboo: Making Preemptible Instances Resilient for Affordable
   Training of Large DNNs", NSDI 2023: redundant computation of the successor stage's forward.
.. [Jang23] I. Jang et al., "Oobleck: Resilient Distributed Training of Large Models Using
   Pipeline Templates", SOSP 2023: re-instantiate pipelines over the survivors.
.. [Gandhi24] S. Gandhi et al., "ReCycle: Resilient Training of Large DNNs using Pipeline
   Adaptation", SOSP 2024: a failed worker's micro-batches go to its data-parallel peers of the
   same stage and fill pipeline bubbles.
.. [Young74] J. W. Young, "A first order approximation to the optimum checkpoint interval",
   CACM 17(9), 1974: ``tau = sqrt(2 delta M)``.
.. [Korthikanti22] V. Korthikanti et al., "Reducing Activation Recomputation in Large
   Transformer Models", arXiv 2205.05198 (MLSys 2023), Table 2.
.. [Daly06] J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart
   dumps", Future Generation Computer Systems 22(3), 2006, Eq. 37.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from suite.api import ParameterError, ProfileError, p2p_time, ring_allreduce_time
from suite.api import (partition_layers, pipeline_1f1b_schedule, pipeline_1f1b_unbalanced_time,
                       split_microbatches, stage_sums)

__all__ = [
    "STATE_BYTES_PER_PARAM",
    "LLMJob",
    "ClusterModel",
    "Plan",
    "PerfModel",
    "uniform_transformer",
    "job_from_workload",
    "cluster_from_profile",
    "young_interval",
    "daly_interval",
    "choose_policy",
    "expected_window",
    "reroute_load",
    "Choice",
    "DEFAULT_CHECKPOINT_BANDWIDTH",
]

#: aggregate checkpoint bandwidth to persistent storage when neither the profile
#: (``reliability.checkpoint_bandwidth``) nor the parameter gives one: an ASSUMPTION (10 GB/s),
#: used only by the checkpoint-restart baseline
DEFAULT_CHECKPOINT_BANDWIDTH = 10e9

#: bytes of training state per parameter: fp16 weight + fp16 gradient + fp32 master weight,
#: momentum and variance (2 + 2 + 12) [Rajbhandari20 §3.1]
STATE_BYTES_PER_PARAM = 16
#: bytes per parameter of the gradient that data-parallel replicas all-reduce (bf16/fp16)
GRAD_BYTES_PER_PARAM = 2
#: bytes per element of activations sent between stages (bf16/fp16)
ACT_BYTES = 2
_DTYPES = ("bf16", "fp16", "tf32", "fp32")


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class LLMJob:
    """The training job as the model sees it: per-layer figures per sample (sequence).

    Attributes
    ----------
    fwd, bwd : tuple of float, length L
        Forward / backward FLOPs of each layer for one sample.
    params : tuple of int, length L
        Parameters of each layer.
    act : tuple of float, length L
        Bytes of each layer's output activation for one sample (what crosses a stage boundary).
    saved : tuple of float, length L
        Bytes each layer keeps for its backward pass, per sample (the activation stash; depends
        on activation recomputation [Korthikanti22]).
    global_batch, micro_batch : int
        Samples per iteration and per micro-batch; the global batch is kept constant through every
        recovery, so convergence is unchanged [Zhou25 abstract].
    """

    name: str
    fwd: tuple[float, ...]
    bwd: tuple[float, ...]
    params: tuple[int, ...]
    act: tuple[float, ...]
    saved: tuple[float, ...]
    global_batch: int
    micro_batch: int

    @property
    def layers(self) -> int:
        return len(self.fwd)

    @property
    def microbatches(self) -> int:
        """Global micro-batches per iteration ``M = B / b``."""
        return self.global_batch // self.micro_batch

    @property
    def total_params(self) -> int:
        return int(sum(self.params))


def uniform_transformer(layers: int, hidden: int, seq_len: int, vocab: int, global_batch: int,
                        micro_batch: int, heads: int = 32, recompute: str = "selective", name: str = "") -> LLMJob:
    """A GPT/Llama-style decoder as ``layers`` identical blocks plus embedding and LM head.

    Per block and sequence [Narayanan21 §5.1]: forward ``24 s h^2 + 4 s^2 h`` FLOPs, backward
    twice that, ``12 h^2 + 13 h`` parameters, output ``s h`` elements. Embedding: ``V h``
    parameters, no FLOPs; LM head: ``V h`` parameters, ``2 s h V`` forward FLOPs. Saved
    activations per block and sequence [Korthikanti22, Table 2, 16-bit]: ``s h (34 + 5 a s / h)``
    bytes without recomputation, ``34 s h`` with selective recomputation, ``2 s h`` with full.

    Raises
    ------
    ParameterError
        A non-positive size, or a global batch that is not a multiple of the micro-batch.
    """
    for n, v in (("layers", layers), ("hidden", hidden), ("seq_len", seq_len), ("vocab", vocab),
                 ("global_batch", global_batch), ("micro_batch", micro_batch)):
        if v < 1:
            raise ParameterError(f"odyssey: parameter {n!r}: expected >= 1, got {v}")
    if global_batch % micro_batch:
        raise ParameterError(f"odyssey: parameter 'global_batch': expected a multiple of micro_batch={micro_batch}, got {global_batch}")
    h, s, V = float(hidden), float(seq_len), float(vocab)
    blk_f = 24 * s * h * h + 4 * s * s * h
    fwd = [0.0] + [blk_f] * layers + [2 * s * h * V]
    bwd = [0.0] + [2 * blk_f] * layers + [4 * s * h * V]
    params = [vocab * hidden] + [12 * hidden * hidden + 13 * hidden] * layers + [vocab * hidden]
    act = [s * h * ACT_BYTES] * (layers + 1) + [s * V * ACT_BYTES]
    blk = {"none": s * h * (34 + 5 * heads * s / h), "selective": 34 * s * h, "full": 2 * s * h}
    if recompute not in blk:
        raise ParameterError(f"odyssey: parameter 'recompute': expected one of {list(blk)}, got {recompute!r}")
    saved = [0.0] + [blk[recompute]] * layers + [s * V * ACT_BYTES]
    return LLMJob(name or f"decoder-{layers}x{hidden}", tuple(fwd), tuple(bwd), tuple(int(p) for p in params),
                  tuple(act), tuple(saved), int(global_batch), int(micro_batch))


def job_from_workload(workload, global_batch: int, micro_batch: int, recompute: str = "selective") -> LLMJob:
    """An :class:`LLMJob` from a zoo :class:`~suite.workloads.LayerTable` (per-sample figures).

    Activations are re-expressed in :data:`ACT_BYTES` per element (mixed-precision training),
    whatever the table's ``dtype_bytes``. The stash per layer is the zoo's
    ``attrs["saved_bytes" | "saved_bytes_selective" | "saved_bytes_full"]`` for ``recompute``
    ``none | selective | full`` [Korthikanti22], or the layer's output when the zoo gives none.

    Raises
    ------
    ParameterError
        The workload is not a layer table, or the batch is not a multiple of the micro-batch.
    """
    layers = getattr(workload, "layers", None)
    if not layers:
        raise ParameterError(f"odyssey: workload {getattr(workload, 'name', workload)!r}: expected a model layer table")
    if global_batch % micro_batch:
        raise ParameterError(f"odyssey: parameter 'global_batch': expected a multiple of micro_batch={micro_batch}, got {global_batch}")
    key = {"none": "saved_bytes", "selective": "saved_bytes_selective", "full": "saved_bytes_full"}
    if recompute not in key:
        raise ParameterError(f"odyssey: parameter 'recompute': expected one of {list(key)}, got {recompute!r}")
    scale = ACT_BYTES / float(getattr(workload, "dtype_bytes", 4) or 4)
    saved = tuple(float(l.attrs.get(key[recompute], l.activation_bytes)) * scale for l in layers)
    return LLMJob(workload.name, tuple(float(l.fwd_flops) for l in layers),
                  tuple(float(l.bwd_flops) for l in layers), tuple(int(l.params) for l in layers),
                  tuple(float(l.activation_bytes) * scale for l in layers), saved, int(global_batch), int(micro_batch))


@dataclass(frozen=True)
class ClusterModel:
    """The cluster as the model sees it (SI units).

    ``flops`` is the peak of one device in the training dtype, ``mfu`` the achieved fraction
    (a technique constant, stated in the docs), ``bandwidth``/``latency`` the outermost network
    level per device (used for stage-to-stage sends, gradient all-reduce and state transfer:
    the conservative choice, DP groups span nodes).
    """

    devices: int
    flops: float
    mfu: float
    memory: float
    bandwidth: float
    latency: float
    device_mtbf: float
    repair_time: float
    restart_time: float
    checkpoint_bandwidth: float
    #: the hardware profile whose levels price every transfer through suite.perf.collective_time
    #: (None: the flat ``latency + bytes / bandwidth`` above, for hand-built clusters)
    profile: object = field(default=None, compare=False, hash=False, repr=False)
    profile_key: str = ""  # the profile's content hash: clusters of different profiles differ


def cluster_from_profile(profile, *, mfu: float, device_mtbf_h=None, repair_time_h=None,
                         restart_time_s=None, checkpoint_bandwidth_gbs=None, devices=None) -> ClusterModel:
    """Read a cluster profile; explicit parameters override its ``[reliability]`` figures.

    Raises
    ------
    ProfileError
        The profile lacks a device, a network, or a reliability figure that no parameter gives
        (names the field).
    """
    dev = profile.require_device()
    net = profile.require_network()
    flops = next((dev.peak_flops[d] for d in _DTYPES if d in dev.peak_flops), None)
    if flops is None:
        raise ProfileError(f"profile {profile.name!r}: field device.peak_flops: expected one of {list(_DTYPES)}")
    rel = profile.reliability

    def pick(param, scale, attr):
        if param is not None:
            return float(param) * scale
        val = getattr(rel, attr, None) if rel is not None else None
        if val is None and attr == "checkpoint_bandwidth":
            return DEFAULT_CHECKPOINT_BANDWIDTH
        if val is None:
            raise ProfileError(f"profile {profile.name!r}: field reliability.{attr}: required by odyssey (or give the parameter)")
        return float(val)

    return ClusterModel(
        devices=int(devices or profile.num_devices), flops=float(flops), mfu=float(mfu), memory=float(dev.memory),
        bandwidth=float(net.bandwidth), latency=float(net.latency),
        device_mtbf=pick(device_mtbf_h, 3600.0, "device_mtbf"), repair_time=pick(repair_time_h, 3600.0, "repair_time"),
        restart_time=pick(restart_time_s, 1.0, "restart_time"),
        checkpoint_bandwidth=pick(checkpoint_bandwidth_gbs, 1e9, "checkpoint_bandwidth"),
        profile=profile, profile_key=profile.content_hash(),
    )


# --------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class Plan:
    """An execution plan: ``dp`` pipelines of ``pp`` stages, each stage on ``tp`` devices.

    ``bounds`` are the layer boundaries of the stages; ``tf``/``tb`` the per-micro-batch forward
    and backward time of each stage (s); ``hop`` the stage-to-stage send time (s); ``allreduce``
    the gradient all-reduce time of the slowest stage (s); ``iteration_time`` the whole step (s).
    """

    dp: int
    pp: int
    tp: int
    bounds: tuple[int, ...]
    tf: tuple[float, ...]
    tb: tuple[float, ...]
    hop: float
    allreduce: float
    iteration_time: float

    @property
    def devices(self) -> int:
        return self.dp * self.pp * self.tp

    def positions(self) -> list[tuple[int, int]]:
        """(pipeline, stage) of each group of ``tp`` devices, in device order."""
        return [(j, s) for j in range(self.dp) for s in range(self.pp)]

    def describe(self) -> str:
        return f"DP{self.dp}xPP{self.pp}" + (f"xTP{self.tp}" if self.tp > 1 else "")


class PerfModel:
    """The unified performance model of one job on one cluster [Zhou25 §4.3 (unseen), as
    our simplification].

    Parameters
    ----------
    job : LLMJob
    cluster : ClusterModel
    bubble_fill : float in [0, 1]
        Fraction of a stage's 1F1B bubble ``(p - 1)(t_f + t_b)`` that extra (rerouted or redundant)
        work can fill [Gandhi24; Thorpe23]. 1 is the baselines' best case.
    tp_degrees : sequence of int
        Tensor-parallel degrees the plan search may use.
    """

    def __init__(self, job: LLMJob, cluster: ClusterModel, bubble_fill: float = 1.0,
                 tp_degrees: Sequence[int] = (1,)):
        if not 0.0 <= bubble_fill <= 1.0:
            raise ParameterError(f"odyssey: parameter 'bubble_fill': expected in [0, 1], got {bubble_fill}")
        self.job = job
        self.cluster = cluster
        self.bubble_fill = float(bubble_fill)
        self.tp_degrees = tuple(sorted(set(int(t) for t in tp_degrees)))
        self._rate = cluster.flops * cluster.mfu
        self._cost = np.asarray(job.fwd) + np.asarray(job.bwd)
        self._chain: dict[float, list[Plan | None]] = {}
        self._tpc: dict[int, np.ndarray] = {}
        self._bounds = lru_cache(maxsize=None)(self._partition)

    # -- per stage
    def _partition(self, pp: int) -> tuple[int, ...]:
        return partition_layers(self._cost, pp)

    def stage_times(self, bounds: Sequence[int], tp: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Per-micro-batch forward and backward time of each stage (s):
        ``FLOPs x micro_batch / (tp x peak x mfu)`` (TP divides the compute), plus, with
        ``tp > 1`` and the cluster's profile, tensor parallelism's all-reduces of each layer's
        activation (:meth:`tp_comm`)."""
        mb = self.job.micro_batch
        tf = stage_sums(self.job.fwd, bounds) * mb / (tp * self._rate)
        tb = stage_sums(self.job.bwd, bounds) * mb / (tp * self._rate)
        if tp > 1 and self.cluster.profile is not None:
            c = stage_sums(self.tp_comm(tp), bounds)
            tf, tb = tf + c, tb + c
        return tf, tb

    def tp_comm(self, tp: int) -> np.ndarray:
        """Per layer, the forward (= backward) tensor-parallel communication of one micro-batch
        (s): two all-reduces of the layer's activation over the ``tp`` devices of a stage, as
        Megatron-LM's row/column split does per transformer layer and pass [Shoeybi19 §3], priced by
        :func:`suite.perf.collective_time` (``tp`` consecutive devices; the other stages on the
        node run theirs at once, ``Group.concurrent``)."""
        hit = self._tpc.get(tp)
        if hit is not None:
            return hit
        from suite.api import Group, collective_time

        prof = self.cluster.profile
        dpn = prof.devices_per_node
        g = Group(tp, 1, concurrent=max(1, dpn // tp)) if tp <= dpn else Group(dpn, -(-tp // dpn))
        mb = self.job.micro_batch
        out = np.array([2.0 * collective_time("allreduce", a * mb, g, prof).time for a in self.job.act])
        self._tpc[tp] = out
        return out

    def _pp_intra(self, pp: int, tp: int) -> bool:
        """Whether every pipeline of ``pp`` stages x ``tp`` devices lies inside one node (devices
        are numbered pipeline by pipeline, stage by stage, ``tp`` consecutive per stage)."""
        dpn = self.cluster.profile.devices_per_node
        span = pp * tp
        return span <= dpn and dpn % span == 0

    def hop_time(self, bounds: Sequence[int], tp: int = 1) -> float:
        """Send of one micro-batch's boundary activation (largest boundary; s).

        With the cluster's profile: :func:`suite.perf.collective_time` ``p2p`` inside a node when
        every pipeline fits in one (:meth:`_pp_intra`), else between two nodes (the slowest hop
        sets the pipeline's pace). Without: ``alpha + act x b / BW`` [suite.perf.p2p_time]."""
        if len(bounds) <= 2:
            return 0.0
        act = max(self.job.act[b - 1] for b in bounds[1:-1])
        nbytes = act * self.job.micro_batch
        prof = self.cluster.profile
        if prof is None:
            return p2p_time(nbytes, self.cluster.latency, 1.0 / self.cluster.bandwidth)
        from suite.api import Group, collective_time

        g = Group(2, 1) if self._pp_intra(len(bounds) - 1, tp) and prof.devices_per_node > 1 else Group(1, 2)
        return collective_time("p2p", nbytes, g, prof).time

    def stage_params(self, bounds: Sequence[int]) -> np.ndarray:
        return stage_sums(self.job.params, bounds)

    def dp_group(self, dp: int, pp: int, tp: int):
        """Where the ``dp`` replicas of one stage shard sit: devices ``pp tp`` apart, so
        ``dpn // (pp tp)`` per node when a pipeline is smaller than a node, else one per node;
        the other stages' and shards' all-reduces run at once on the same nodes
        (``Group.concurrent``)."""
        from suite.api import Group

        dpn = self.cluster.profile.devices_per_node
        stride = pp * tp
        if stride < dpn and dpn % stride == 0:
            per = min(dp, dpn // stride)
            nodes = -(-dp // per)
            return Group(per, nodes, ranks=dp if dp != per * nodes else None, concurrent=stride)
        return Group(1, dp, concurrent=min(stride, dpn))

    def allreduce_time(self, bounds: Sequence[int], dp: int, tp: int = 1) -> float:
        """All-reduce of the largest stage's gradient shard over ``dp`` replicas; 0 for
        ``dp = 1``. With the cluster's profile: :func:`suite.perf.collective_time` (``auto``)
        over :meth:`dp_group`; without: ring [Patarasuk09 via suite.perf.ring_allreduce_time]."""
        if dp <= 1:
            return 0.0
        nbytes = float(self.stage_params(bounds).max()) * GRAD_BYTES_PER_PARAM / tp
        prof = self.cluster.profile
        if prof is None:
            return ring_allreduce_time(nbytes, dp, self.cluster.latency, 1.0 / self.cluster.bandwidth)
        from suite.api import collective_time

        pp = len(bounds) - 1
        return collective_time("allreduce", nbytes, self.dp_group(dp, pp, tp), prof).time

    def stage_memory(self, bounds: Sequence[int], tp: int = 1, state_factor: float = 1.0) -> np.ndarray:
        """Bytes per device of each stage: ``16 x params x state_factor / tp`` [Rajbhandari20]
        plus the 1F1B activation stash of ``p - s`` micro-batches on stage ``s`` (the "(N_pp - i)"
        coefficient of Chameleon v4 Eq. 14 as a secondary source cites it), each the stage's
        saved activations (``LLMJob.saved``) for one micro-batch."""
        p = len(bounds) - 1
        act = stage_sums(self.job.saved, bounds) * self.job.micro_batch
        inflight = np.array([min(p - s, self.job.microbatches) for s in range(p)], dtype=float)
        return (STATE_BYTES_PER_PARAM * state_factor * self.stage_params(bounds) + inflight * act) / tp

    def fits(self, bounds: Sequence[int], tp: int = 1, state_factor: float = 1.0) -> bool:
        return bool(np.all(self.stage_memory(bounds, tp, state_factor) <= self.cluster.memory))

    # -- plans
    def plan(self, dp: int, pp: int, tp: int = 1, bounds: Sequence[int] | None = None) -> Plan:
        """Time one plan exactly: 1F1B DAG of the pipeline with the most micro-batches (Eq. 9-11
        as a secondary source cites it) plus the gradient all-reduce."""
        b = tuple(bounds) if bounds is not None else self._bounds(pp)
        tf, tb = self.stage_times(b, tp)
        m = max(split_microbatches(self.job.microbatches, dp))
        hop = self.hop_time(b, tp)
        ar = self.allreduce_time(b, dp, tp)
        t = pipeline_1f1b_schedule(tf, tb, m, hop).makespan + ar if m > 0 else ar
        return Plan(dp, pp, tp, b, tuple(tf), tuple(tb), hop, ar, float(t))

    def best_plan(self, devices: int, state_factor: float = 1.0) -> Plan | None:
        """The fastest plan on at most ``devices`` devices whose stages fit in memory, or None.

        For each device count ``k = 1 .. devices``, the plans using exactly ``k`` devices
        (``dp pp tp = k``, ``dp <= M``, ``pp <= layers``) are scored with the closed form
        ``sum_s c_s + (m - 1) max_s c_s + 2 hop (p - 1) + allreduce``; the three best are timed
        exactly with the 1F1B DAG, and the result is the fastest of those and of the result for
        ``k - 1`` (plan search [Zhou25 §4.1, unseen; Jang23]). So a plan found for fewer devices
        is always a candidate, and the result never gets faster when devices are removed.
        Computed once per device count and cached.
        """
        devices = int(devices)
        chain = self._chain.setdefault(float(state_factor), [None])
        while len(chain) <= devices:
            k = len(chain)
            prev = chain[-1]
            own = self._best_exactly(k, float(state_factor), prev.iteration_time if prev else math.inf)
            if own is None or (prev is not None and prev.iteration_time <= own.iteration_time):
                chain.append(prev)
            else:
                chain.append(own)
        return chain[devices] if devices >= 1 else None

    @staticmethod
    def makespan_lower_bound(stage_times: np.ndarray, microbatches: int, hop: float) -> float:
        """A proven lower bound of the exact 1F1B makespan (s): one micro-batch crosses every stage
        forward and back (``sum_s c_s + 2 (p - 1) hop``), and the slowest stage runs all ``m``
        forward and backward passes (``m max_s c_s``). The plan search times a plan exactly only
        if this bound can beat the best plan so far, so the pruning never drops the optimum (an
        empirical factor of the closed form, 0.8, was used before; random pipelines reach 0.74)."""
        c = np.asarray(stage_times, dtype=float)
        return float(max(c.sum() + 2 * (len(c) - 1) * hop, microbatches * c.max()))

    def _best_exactly(self, devices: int, state_factor: float, bound: float = math.inf) -> Plan | None:
        scored = []
        for tp in self.tp_degrees:
            if devices % tp:
                continue
            for pp in range(1, min(self.job.layers, devices // tp) + 1):
                if (devices // tp) % pp:
                    continue
                dp = devices // (tp * pp)
                if dp > self.job.microbatches:
                    continue
                b = self._bounds(pp)
                if not self.fits(b, tp, state_factor):
                    continue
                tf, tb = self.stage_times(b, tp)
                m = max(split_microbatches(self.job.microbatches, dp))
                hop, ar = self.hop_time(b, tp), self.allreduce_time(b, dp, tp)
                est = pipeline_1f1b_unbalanced_time(tf + tb, m) + 2 * (pp - 1) * hop + ar
                lb = self.makespan_lower_bound(tf + tb, m, hop) + ar
                scored.append((est, lb, dp, pp, tp))
        if not scored:
            return None
        scored.sort()  # the closed form first: the best plan is usually found at once
        best: list[Plan] = []
        for _est, lb, dp, pp, tp in scored:
            if lb >= min([bound] + [q.iteration_time for q in best]):
                continue  # cannot beat the best so far, even at its lower bound
            best.append(self.plan(dp, pp, tp))
        return min(best, key=lambda p: (p.iteration_time, p.devices)) if best else None

    # -- recovery policies
    def reroute_time(self, plan: Plan, holes_per_stage: Sequence[int]) -> float:
        """Iteration time after rerouting (ReCycle-style [Gandhi24]; our simplification).

        With ``f_s`` pipelines missing stage s, the ``M`` global micro-batches of that stage are
        spread over the ``dp - f_s`` surviving peers (:func:`reroute_load`), so the busiest peer
        does ``E_s = max load - m`` extra micro-batches, of which up to ``beta (p - 1)`` fit in
        its 1F1B bubbles:

        ``T = T_plan + max_s max(0, (E_s - beta (p - 1)) (t_f,s + t_b,s))``

        Returns inf when some stage has no surviving replica (``f_s >= dp``).
        """
        f = np.asarray(holes_per_stage, dtype=int)
        if f.shape != (plan.pp,):
            raise ValueError(f"need one hole count per stage ({plan.pp}), got {f.shape}")
        if np.any(f >= plan.dp) or np.any(f < 0):
            return math.inf
        M = self.job.microbatches
        m = max(split_microbatches(M, plan.dp))
        c = np.asarray(plan.tf) + np.asarray(plan.tb)
        extra = np.array([max(reroute_load(M, plan.dp, int(fs))) - m for fs in f], dtype=float)
        fill = self.bubble_fill * (plan.pp - 1)
        return plan.iteration_time + float(np.max(np.maximum(0.0, (extra - fill) * c)))

    def redundant_time(self, plan: Plan, covered: Mapping[int, Sequence[tuple[int, int]]] | None = None) -> float:
        """Iteration time with Bamboo-style redundant computation [Thorpe23].

        Failure-free, stage ``s`` also runs the forward of its successor ``(s + 1) mod p`` for
        each of its ``m`` micro-batches, in its bubbles first:
        ``overhead_s = max(0, m t_f,s+1 - beta (p - 1) c_s)``. ``covered[j]`` lists
        ``(failed_stage, by_stage)`` of pipeline j: ``by_stage`` then also runs the failed stage's
        forward and backward (its duration per micro-batch becomes ``c_by + c_failed``), timed
        exactly with the 1F1B DAG. The step is the slowest pipeline plus the all-reduce.
        With ``p = 1`` there is no neighbour stage and no overhead.
        """
        p = plan.pp
        tf, tb = np.asarray(plan.tf), np.asarray(plan.tb)
        m = max(split_microbatches(self.job.microbatches, plan.dp))
        if p == 1:
            return plan.iteration_time
        c = tf + tb
        nxt = np.roll(tf, -1)
        over = np.maximum(0.0, m * nxt - self.bubble_fill * (p - 1) * c)
        base = plan.iteration_time + float(over.max())
        worst = base
        for _j, pairs in (covered or {}).items():
            if not pairs:
                continue
            f2, b2 = tf.copy(), tb.copy()
            dead = set()
            for failed, by in pairs:
                f2[by] += tf[failed]
                b2[by] += tb[failed]
                dead.add(failed)
            keep = [s for s in range(p) if s not in dead]
            t = pipeline_1f1b_schedule(f2[keep], b2[keep], m, plan.hop).makespan + plan.allreduce
            worst = max(worst, t + float(over.max()))
        return worst

    def state_bytes(self, bounds: Sequence[int], stage: int, tp: int = 1) -> float:
        """Training state one device of ``stage`` holds: ``16 x params / tp`` (B)."""
        return STATE_BYTES_PER_PARAM * float(self.stage_params(bounds)[stage]) / tp

    def transfer_time(self, nbytes: float) -> float:
        """State copy between two nodes (s): :func:`suite.perf.collective_time` ``p2p`` over the
        profile's inter-node levels, or ``alpha + bytes / BW`` [suite.perf.p2p_time] without a profile."""
        if nbytes <= 0:
            return 0.0
        prof = self.cluster.profile
        if prof is None or prof.num_nodes < 2:
            if prof is not None:
                from suite.api import Group, collective_time

                return collective_time("p2p", nbytes, Group(min(2, prof.devices_per_node), 1), prof).time
            return p2p_time(nbytes, self.cluster.latency, 1.0 / self.cluster.bandwidth)
        from suite.api import Group, collective_time

        return collective_time("p2p", nbytes, Group(1, 2), prof).time

    def replan_transfer_time(self, old: Plan | None, old_layers: Mapping[int, tuple[int, int]],
                             new: Plan, new_layers: Mapping[int, tuple[int, int]]) -> float:
        """State moved by a re-plan [Jang23]: each device fetches, from a surviving replica, the
        state of the layers of its new stage it did not hold; transfers run in parallel, so the
        time is that of the device that fetches most. ``*_layers`` map device -> (first, end)
        layer range (absent = held nothing)."""
        params = np.asarray(self.job.params, dtype=float)
        worst = 0.0
        for dev, (a, b) in new_layers.items():
            need = np.zeros(len(params), dtype=bool)
            need[a:b] = True
            if dev in old_layers:
                oa, ob = old_layers[dev]
                need[oa:ob] = False
            nbytes = STATE_BYTES_PER_PARAM * float(params[need].sum()) / new.tp
            worst = max(worst, nbytes)
        return self.transfer_time(worst)

    def checkpoint_time(self) -> float:
        """Blocking checkpoint ``delta``: one replica's full training state over the aggregate
        checkpoint bandwidth: ``16 x params / BW_ckpt`` (s)."""
        return STATE_BYTES_PER_PARAM * self.job.total_params / self.cluster.checkpoint_bandwidth


def reroute_load(microbatches: int, dp: int, failed: int) -> list[int]:
    """Micro-batches of one stage that each surviving data-parallel peer runs when ``failed`` of
    the ``dp`` replicas of that stage are down: all ``M`` spread as evenly as possible over the
    ``dp - failed`` survivors (so none is lost or duplicated: the loads sum to ``M``).

    Raises
    ------
    ValueError
        ``failed`` outside ``[0, dp)``.
    """
    if not 0 <= failed < dp:
        raise ValueError(f"need 0 <= failed < dp, got failed={failed}, dp={dp}")
    return split_microbatches(microbatches, dp - failed)


# --------------------------------------------------------------------------- checkpoint interval


def young_interval(delta: float, mtbf: float) -> float:
    """Young's optimum checkpoint interval ``tau = sqrt(2 delta M)`` (s) [Young74].

    Parameters
    ----------
    delta : float
        Time to write one checkpoint (s), >= 0.
    mtbf : float
        Mean time between failures of the whole job (s), > 0; ``inf`` gives ``inf``.
    """
    if delta < 0 or mtbf <= 0:
        raise ValueError("delta must be >= 0 and mtbf > 0")
    return math.sqrt(2.0 * delta * mtbf)


def daly_interval(delta: float, mtbf: float) -> float:
    """Daly's higher-order optimum interval [Daly06, Eq. 37] (s):

    ``tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (1/9)(delta / 2M)] - delta`` for
    ``delta < 2M``, else ``tau = M``. Tends to Young's as ``delta / M -> 0``.
    """
    if delta < 0 or mtbf <= 0:
        raise ValueError("delta must be >= 0 and mtbf > 0")
    if math.isinf(mtbf):
        return math.inf
    if delta >= 2 * mtbf:
        return mtbf
    x = delta / (2 * mtbf)
    return math.sqrt(2 * delta * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - delta


# --------------------------------------------------------------------------- decision


def expected_window(alive: int, down: int, device_mtbf: float, repair_time: float) -> float:
    """Expected time to the next failure or repair (s), with exponential failures (rate
    ``1/MTBF`` per alive device) and repairs (rate ``1/MTTR`` per failed device):
    ``H = 1 / (alive / MTBF + down / MTTR)``; inf when neither can happen."""
    rate = (alive / device_mtbf if device_mtbf > 0 and math.isfinite(device_mtbf) else 0.0)
    rate += (down / repair_time if repair_time > 0 and math.isfinite(repair_time) else 0.0)
    return math.inf if rate == 0 else 1.0 / rate


@dataclass(frozen=True)
class Choice:
    """Outcome of :func:`choose_policy`: the chosen option and every option's predicted cost (s)."""

    name: str
    costs: dict[str, float] = field(default_factory=dict)


def choose_policy(options: Mapping[str, tuple[float, float]], window: float, t_ref: float) -> Choice:
    """Odyssey's selection (Eq. 8 of v4, unseen; our simplification):

    ``cost(a) = C_a + (H / T_ref) T_a``, the time to do the work the failure-free job does in the
    expected window ``H``, with ``C_a`` the one-shot recovery cost and ``T_a`` the iteration time
    under option ``a``; the option of least cost wins (ties: the first given). An infeasible
    option has ``T_a = inf``. When ``H`` is infinite the iteration time alone decides (cost
    ``T_a``; ties broken by ``C_a``).

    Parameters
    ----------
    options : mapping of name -> (C_a, T_a), seconds
    window : float
        ``H`` (s), >= 0.
    t_ref : float
        Failure-free iteration time (s), > 0.

    Raises
    ------
    ValueError
        No options, or none feasible.
    """
    if not options:
        raise ValueError("no recovery option to choose from")
    if t_ref <= 0 or window < 0:
        raise ValueError("t_ref must be > 0 and window >= 0")
    costs = {}
    for name, (c, t) in options.items():
        if math.isinf(window):
            costs[name] = t if math.isfinite(t) else math.inf
        else:
            costs[name] = c + window / t_ref * t if math.isfinite(t) else math.inf
    best = min(costs, key=lambda n: (costs[n], options[n][0]))
    if math.isinf(costs[best]):
        raise ValueError("no feasible recovery option")
    return Choice(best, costs)
