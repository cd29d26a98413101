"""HetSeq's cost model: step time, fixed-epoch training time and speed-up of synchronous data
parallelism over (possibly heterogeneous) GPUs.

Pure functions from (layer table, hardware profile, parameters) to metrics, built from
:mod:`suite.perf` primitives. SI units throughout (s, B, FLOP, FLOP/s).

Model
-----
* **Ranks and devices.** ``P = nodes x devices_per_node`` ranks fill the profile's nodes in
  order. Rank r's device is the r-th of the profile's ``[ext.mix]`` groups expanded in order
  (:func:`suite.hardware.mix_devices`), or the node's device when there is no mix.
* **Compute.** One sample's forward + backward on rank r takes
  ``t_r = F / (eff * peak_r[dtype])`` (the compute roof of the roofline, [Williams09], through
  :func:`suite.perf.roofline_time`), ``F = fwd_flops + bwd_flops`` of the layer table
  (backward = 2 x forward). ``eff`` is one technique-wide fraction of peak,
  :data:`DEFAULT_EFFICIENCY`, calibrated on the README's 1-node row (:func:`calibrate_readme`).
  It is the whole step's fraction of peak on its FLOPs alone: the memory-bound layers
  (normalisation, activations, residual adds) get no time of their own but are inside ``eff``,
  where a per-layer roofline (:func:`suite.perf.layer_times`) prices each layer at
  ``max(FLOPs / (eff peak), bytes / bandwidth)``. At one ``eff`` this step is the shorter
  (ResNet-50, 32 per GPU, fp32, H100, eff 0.5: 23.34 ms of compute against 29.35 ms, the 6.01 ms
  of 120 memory-bound layers; docs/comparisons.md, `suite run --category communication --workload
  resnet-50 --profile h100-ndr-fat-tree`).
* **Batch split.** A global batch B is split over the ranks: ``ddp-equal-batch`` gives every
  rank ``B/P`` (near-equal, within one sample), PyTorch DDP's usual setting; ``hetseq`` gives
  rank r a batch proportional to its throughput ``1/t_r`` (largest remainders), capped by what
  fits its memory, a rank may get 0 (a dummy batch) [Ding20; papers' batch rule:
  ``b_i ~ peak_i``, capped by memory].
* **Memory.** ``M_r(b) = 16 B x params + b x A x 4/dtype_bytes``: fp32 weights, gradients and
  Adam's two moments (4 x 4 B per parameter, [Rajbhandari20 §3.1] counts the same states) plus
  the activations kept for backward, ``A`` per sample by :func:`suite.workloads.transformer.
  activation_memory` (Korthikanti et al. 2022, eq. 1; stored at the table's ``dtype_bytes``,
  scaled to fp32). CNN tables: ``A`` = the table's activation bytes. The cap is the largest b
  with ``M_r(b) <= memory_r``.
* **Step.** ``T = max_r(b_r t_r) + t_AR`` (no overlap of the gradient all-reduce with the
  backward pass; the formula of the HetSeq notes, ``T_step = max_i(b_i F/peak_i) + T_AR``).
  ``t_AR`` is one all-reduce of the ``grad_bytes x params`` gradient over the P ranks by
  :func:`suite.perf.collective_time` (``group_of(profile, P)``, every network level the group
  crosses, the placement of the node groups; ``ring`` by default, NCCL's ring).
* **Fixed-epoch time** ``T_train = ceil(S / B) x T`` with S the samples of the run (5 epochs
  of the README's corpus: ``267,139 x 128``; the README's step counts are ``ceil(S / B)`` for
  all four rows). **Node speed-up** (``node_speedup``) = ``T_train(1 node) / T_train(n nodes)``
  as the README defines it (its "speedup" column is ``7.19 d / training time``); the 1-node
  reference runs ``batch_per_gpu x devices_per_node`` on the first node; the claims are judged on
  it. **Expansion** (the README's name for scaling efficiency) = node speed-up / (GPUs / GPUs of
  one node).
* **Speed-up** (``speedup``, the data-parallel vocabulary's: aggregate throughput at P devices
  over one device's at the same per-device batch) = ``throughput(n nodes) x t_0``: one device
  alone exchanges no gradient, so its step at any batch b is ``b t_0`` and its throughput
  ``1 / t_0``, with ``t_0`` the per-sample time of rank 0's device (on a mix, the first group's).
  Ideal: P, the GPU count (the node speed-up's ideal is the node count).

References
----------
.. [Ding20] Y. Ding, N. Botzer, T. Weninger, "HetSeq: Distributed GPU Training on Heterogeneous
   Infrastructure", arXiv 2009.14783 (2020), and the authors' README (yifding/hetseq at 02d3107,
   "Performance table"; the run examples use BERT-base ``uncased_L-12_H-768_A-12``, the
   phase-one corpus of sequence length 128, ``--max-sentences 32`` per GPU).
.. [Williams09] S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009.
.. [Rajbhandari20] S. Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
   Parameter Models", SC 2020 (model states: parameters, gradients, Adam momentum and variance).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from suite.api import (ParameterError, Result, collective_time, group_of, proportional_batches, resolve_scale,
                       roofline_time)

from suite_hetseq.constants import DEFAULT_EFFICIENCY, README_SAMPLES

__all__ = ["VARIANTS", "README_ROWS", "README_SAMPLES", "DEFAULT_EFFICIENCY", "rank_devices", "sample_times",
           "memory_bytes", "batch_caps", "split_batch", "Step", "step", "fixed_epoch_steps", "Plan", "plan",
           "calibrate_readme", "PAPER_NODES", "nodes_of", "evaluate"]

VARIANTS = ("ddp-equal-batch", "hetseq")

#: The README's "Performance table" (yifding/hetseq at 02d3107): nodes -> (GPUs, global batch,
#: steps, s/step, training time in days, expansion, speed-up)
README_ROWS = {
    1: (4, 128, 267_139, 2.60, 7.19, 1.0, 1.0),
    2: (8, 256, 133_570, 2.69, 4.19, 0.86, 1.72),
    4: (16, 512, 66_785, 2.794, 2.23, 0.81, 3.22),
    8: (32, 1024, 33_393, 3.126, 1.21, 0.74, 5.94),
}
# README_SAMPLES (samples of the README's 5-epoch run, 267,139 x 128) and DEFAULT_EFFICIENCY
# (0.06907, calibrated by calibrate_readme) are defined, with their sources, in
# suite_hetseq.constants (imported above), which the declaration reads without this model.

_DAY = 86_400.0


# --------------------------------------------------------------------------- devices, batches, memory


def rank_devices(profile, ranks: int) -> list:
    """The device of each of the first *ranks* ranks (see the module docstring).

    Raises
    ------
    ParameterError
        More ranks than the profile's ``[ext.mix]`` groups hold.
    """
    from suite.api import mix_devices

    groups = mix_devices(profile)
    if not groups:
        return [profile.require_device()] * ranks
    devs = [d for _, d, c in groups for _ in range(c)]
    if ranks > len(devs):
        raise ParameterError(f"hetseq: profile {profile.name!r}: {ranks} ranks but its [ext.mix] groups hold "
                             f"{len(devs)} devices")
    return devs[:ranks]


def sample_times(flops_per_sample: float, devices: Sequence, efficiency: float, dtype: str = "fp32") -> np.ndarray:
    """Seconds of one sample's forward + backward on each device, ``F / (eff * peak[dtype])``
    (:func:`suite.perf.roofline_time`, compute roof). Shape (ranks,)."""
    return np.array([roofline_time(flops_per_sample, 0.0, d.flops(dtype), d.memory_bandwidth, efficiency)
                     for d in devices])


def memory_bytes(workload, batch: int) -> float:
    """Device memory of one rank holding *batch* samples (B): ``16 params + batch A_fp32``
    (see the module docstring; [Rajbhandari20 §3.1], Korthikanti et al. 2022 eq. 1)."""
    return 16.0 * workload.params + batch * _act_fp32(workload)


def _act_fp32(workload) -> float:
    a = None
    if getattr(workload, "kind", "") == "transformer":
        from suite.api import WorkloadError, activation_memory

        try:
            a = activation_memory(workload, "none")
        except WorkloadError:  # a table without transformer figures: use its activation bytes
            a = None
    if a is None:
        a = float(workload.activation_bytes)
    return a * 4.0 / float(getattr(workload, "dtype_bytes", 4) or 4)


def batch_caps(workload, devices: Sequence, _per: float | None = None, _params: float | None = None) -> np.ndarray:
    """Largest batch of each device that fits its memory (``memory_bytes(b) <= memory``); 0 when
    not even the model states fit."""
    per = _act_fp32(workload) if _per is None else _per
    states = 16.0 * (workload.params if _params is None else _params)
    return np.array([max(0, int((float(d.memory) - states) // per)) if per > 0 else 2**31 for d in devices],
                    dtype=np.int64)


def split_batch(variant: str, total: int, times: Sequence[float], caps: Sequence[int] | None = None) -> np.ndarray:
    """Per-rank batches of *variant* for a global batch *total* (see the module docstring).

    Parameters
    ----------
    variant : {"ddp-equal-batch", "hetseq"}
    total : int
        Global batch B >= 1.
    times : sequence of float
        Seconds per sample of each rank (> 0).
    caps : sequence of int, optional
        Memory caps (``hetseq`` only; ``ddp-equal-batch`` is checked against them by the caller).

    Returns
    -------
    ndarray of int64, shape (ranks,), summing to *total*.
    """
    P = len(times)
    if variant == "ddp-equal-batch":
        b = np.full(P, total // P, dtype=np.int64)
        b[: total % P] += 1
        return b
    if variant == "hetseq":
        return proportional_batches(total, times, minimum=0, caps=caps)
    raise ParameterError(f"hetseq: unknown variant {variant!r}; expected one of {list(VARIANTS)}")


# --------------------------------------------------------------------------- one step


@dataclass(frozen=True)
class Step:
    """One synchronous step.

    Attributes
    ----------
    batches : ndarray of int64, shape (P,)
    compute : ndarray, shape (P,)
        Seconds of each rank's forward + backward (``b_r t_r``).
    t_compute, t_allreduce, time : float
        ``max(compute)``, the gradient all-reduce, and the step (s).
    algorithm : str
        The all-reduce algorithm priced.
    peak_memory : float
        Largest per-rank memory (B).
    """

    batches: np.ndarray
    compute: np.ndarray
    t_compute: float
    t_allreduce: float
    time: float
    algorithm: str
    peak_memory: float

    @property
    def throughput(self) -> float:
        return float(self.batches.sum()) / self.time


def step(workload, profile, ranks: int, total: int, variant: str, efficiency: float, dtype: str = "fp32",
         algorithm: str = "ring", grad_bytes: float = 4.0) -> Step:
    """Step time of *variant* on the first *ranks* ranks of *profile* with global batch *total*.

    ``T = max_r(b_r t_r) + t_AR`` (module docstring). The all-reduce moves ``grad_bytes x params``
    bytes through :func:`suite.perf.collective_time` over ``group_of(profile, ranks)``.

    Raises
    ------
    suite.Skip
        The batch does not fit the ranks' memory (``hetseq``: the sum of the caps; ``ddp-equal-
        batch``: a rank's equal share).
    """
    from suite.api import Skip

    devs = rank_devices(profile, ranks)
    F = float(workload.fwd_flops + workload.bwd_flops)
    n_params = float(workload.params)
    act = _act_fp32(workload)
    t = sample_times(F, devs, efficiency, dtype)
    caps = batch_caps(workload, devs, act, n_params)
    if variant == "hetseq" and total > caps.sum():
        raise Skip(f"hetseq: global batch {total} does not fit the memory of {ranks} ranks (at most {int(caps.sum())})")
    b = split_batch(variant, total, t, caps if variant == "hetseq" else None)
    if np.any(b > caps):
        i = int(np.argmax(b - caps))
        raise Skip(f"{variant}: rank {i} ({devs[i].name}) gets {int(b[i])} samples but fits at most {int(caps[i])}")
    comp = b * t
    if ranks > 1:
        cost = collective_time("allreduce", grad_bytes * n_params, group_of(profile, ranks), profile, algorithm)
        t_ar, alg = cost.time, cost.algorithm
    else:
        t_ar, alg = 0.0, "none"
    tc = float(comp.max())
    return Step(b, comp, tc, t_ar, tc + t_ar, alg, 16.0 * n_params + int(b.max()) * act)  # = memory_bytes(max b)


def fixed_epoch_steps(samples: int, total: int) -> int:
    """Steps of a run over *samples* samples at global batch *total*: ``ceil(samples / total)``
    (the README's step counts, e.g. 34,193,792 / 512 -> 66,785)."""
    return -(-int(samples) // int(total))


# --------------------------------------------------------------------------- the plan of a scenario


@dataclass(frozen=True)
class Plan:
    """A run of *variant* on ``nodes`` nodes, and its 1-node reference."""

    at_n: Step
    at_1: Step
    ranks: int
    ranks_per_node: int
    steps: int
    steps_1: int
    device_time: float  # t_0: s per sample on rank 0's device, one device's step over its batch

    @property
    def train_time(self) -> float:
        return self.steps * self.at_n.time

    @property
    def one_node_time(self) -> float:
        """The 1-node fixed-epoch time (s): the 1-node run's steps x its step (the README's speed-up
        divides a 1-node time by :attr:`train_time`: this one, or the claim's ``one_node_days``)."""
        return self.steps_1 * self.at_1.time

    @property
    def speedup(self) -> float:
        """Aggregate throughput over one device's (the data-parallel vocabulary's ``speedup``)."""
        return self.at_n.throughput * self.device_time


def _nodes_of(profile, nodes: int) -> tuple[int, int]:
    from suite.api import Skip

    dpn = profile.devices_per_node
    have = profile.num_nodes
    if nodes > have:
        raise Skip(f"hetseq: nodes={nodes} but profile {profile.name!r} has {have}")
    if nodes > 1 and not profile.network:
        raise Skip(f"hetseq: profile {profile.name!r} has no network for {nodes} nodes")
    return nodes * dpn, dpn


def plan(workload, profile, variant: str, nodes: int, batch_per_gpu: int, global_batch: int | None,
         samples: int, efficiency: float, dtype: str = "fp32", algorithm: str = "ring",
         grad_bytes: float = 4.0) -> Plan:
    """The :class:`Plan` of a scenario (module docstring): *nodes* nodes of *profile*, global
    batch *global_batch* (default ``batch_per_gpu x ranks``), the 1-node reference at
    ``batch_per_gpu x devices_per_node``, the one-device reference ``t_0`` of rank 0's device."""
    ranks, dpn = _nodes_of(profile, nodes)
    B = int(global_batch) if global_batch else batch_per_gpu * ranks
    if B < 1:
        raise ParameterError(f"hetseq: global batch must be >= 1, got {B}")
    at_n = step(workload, profile, ranks, B, variant, efficiency, dtype, algorithm, grad_bytes)
    B1 = batch_per_gpu * dpn
    # one node at the reference batch: the reference is this very step (not priced twice)
    at_1 = at_n if (ranks, B) == (dpn, B1) else step(workload, profile, dpn, B1, variant, efficiency, dtype,
                                                     algorithm, grad_bytes)
    t_0 = float(sample_times(float(workload.fwd_flops + workload.bwd_flops), rank_devices(profile, 1), efficiency,
                             dtype)[0])
    return Plan(at_n, at_1, ranks, dpn, fixed_epoch_steps(samples, B), fixed_epoch_steps(samples, B1), t_0)


# --------------------------------------------------------------------------- calibration


def calibrate_readme(workload, profile, rows=README_ROWS, algorithm: str = "ring", grad_bytes: float = 4.0,
                     dtype: str = "fp32") -> tuple[float, float]:
    """The two calibrated figures of the ``hetseq-readme`` profile from the README's rows.

    1. ``efficiency``: the 1-node row (4 GPUs, batch 128, 2.60 s) with its intra-node all-reduce
       (``network[0]``, an assumption) taken out: ``eff = 32 F / (peak (2.60 - t_AR,intra))``.
    2. ``inter-node bandwidth``: the value of ``network[-1].bandwidth`` at which the model's
       2-node step (8 GPUs, batch 256, equal batches) is 2.69 s, by a secant in 1/bandwidth kept
       in a bracket (rows 3-4 are not read).

    Returns
    -------
    (efficiency, bandwidth in B/s)

    Raises
    ------
    ParameterError
        The 1-node row leaves no compute time, or 2.69 s is not reachable.
    """
    g1, b1, _, s1 = rows[1][:4]
    g2, b2, _, s2 = rows[2][:4]
    dev = rank_devices(profile, g1)[0]
    F = float(workload.fwd_flops + workload.bwd_flops)
    t_ar1 = collective_time("allreduce", grad_bytes * workload.params, group_of(profile, g1), profile,
                            algorithm).time
    t_c = s1 - t_ar1
    if t_c <= 0:
        raise ParameterError("hetseq calibration: the intra-node all-reduce alone exceeds the 1-node step")
    eff = (b1 / g1) * F / (dev.flops(dtype) * t_c)

    def t2(x: float) -> float:  # x = 1 / bandwidth (s/B)
        p = profile.with_overrides({"network.-1.bandwidth": f"{1.0 / x!r} B/s"})
        return step(workload, p, g2, b2, "ddp-equal-batch", eff, dtype, algorithm, grad_bytes).time

    # secant in 1/bandwidth (the step is affine in it while the inter-node hop bounds the ring),
    # kept inside a bracket by bisection
    lo, hi = 1e-13, 1e-6
    f_lo, f_hi = t2(lo) - s2, t2(hi) - s2
    if not f_lo <= 0 <= f_hi:
        raise ParameterError(f"hetseq calibration: a 2-node step of {s2} s is not reachable by the inter-node bandwidth")
    x = lo
    for _ in range(100):
        x = lo - f_lo * (hi - lo) / (f_hi - f_lo) if f_hi != f_lo else 0.5 * (lo + hi)
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        f = t2(x) - s2
        if abs(f) <= 1e-12 * s2:
            break
        if f < 0:
            lo, f_lo = x, f
        else:
            hi, f_hi = x, f
    return eff, 1.0 / x


# --------------------------------------------------------------------------- evaluate


#: the default scenario's nodes (the README's 4-node row), when the profile holds them
PAPER_NODES = 4


def nodes_of(params, profile) -> int:
    """``params['nodes']``, or when it is None (unset) the profile's nodes (a device or node
    profile: 1), at most :data:`PAPER_NODES`; :data:`PAPER_NODES` without a profile
    (:func:`suite.api.resolve_scale`)."""
    return resolve_scale(params, "nodes", profile, PAPER_NODES, count="nodes")


def evaluate(scenario):
    """Model fidelity: step time, throughput, fixed-epoch time and speed-up of one variant.

    Reads ``scenario.params`` (``nodes``, ``batch_per_gpu``, ``global_batch``, ``samples``,
    ``efficiency``, ``dtype``, ``algorithm``, ``grad_bytes``, ``one_node_days``: node_speedup's
    1-node reference in days, default the model's own ``one_node_time``), ``scenario.profile`` (each rank's
    device peak and memory, every network level the all-reduce crosses) and
    ``scenario.workload`` (a layer table: FLOPs, parameters, activations).

    Returns
    -------
    suite.Result
        ``iteration_time`` (s), ``throughput`` (samples/s), ``speedup`` (1, aggregate throughput
        over one device's: the data-parallel vocabulary's), ``node_speedup`` (1, fixed-epoch time of
        one node over n nodes': the README's speed-up, the claims'), ``expansion`` (1), ``one_node_time``
        (s, the model's 1-node fixed-epoch time), ``comm_time`` = ``exposed_comm`` (s, the
        all-reduce; not overlapped), ``compute_time`` (s, slowest rank), ``train_time`` (s),
        ``train_days`` (d), ``steps`` (1), ``comm_bytes`` (B, one rank's all-reduce payload when it crosses nodes, else 0),
        ``peak_memory`` (B), ``fits`` (1), ``imbalance`` (1, slowest / fastest busy rank),
        ``dummy_ranks`` (1, ranks with batch 0); artifacts ``batches`` and ``setup``.

    Raises
    ------
    suite.Skip
        No profile or no layer table; nodes beyond the profile; a batch that does not fit.
    """
    from suite.api import LayerTable, Skip

    prof, wl = scenario.profile, scenario.workload
    if prof is None:
        raise Skip("hetseq model fidelity needs a hardware profile")
    if not isinstance(wl, LayerTable):
        raise Skip(f"hetseq model fidelity needs a layer-table workload, got {getattr(wl, 'name', None)!r}")
    p = scenario.params
    nodes = nodes_of(p, prof)
    pl = plan(wl, prof, scenario.variant, nodes, int(p["batch_per_gpu"]), p.get("global_batch"),
              int(p["samples"]), float(p["efficiency"]), p["dtype"], p["algorithm"], float(p["grad_bytes"]))
    return _result(pl, wl, prof, p, nodes)


def _result(pl: Plan, wl, prof, p, nodes: int):
    """The metrics and artifacts of :func:`evaluate` (names and units there) from the plan *pl* of the
    layer table *wl* on *prof*, the scenario's params *p* and the resolved node count *nodes*;
    ``node_speedup`` divides ``p['one_node_days']`` (days) when set, else the plan's own 1-node
    fixed-epoch time (``one_node_time``)."""
    s = pl.at_n
    busy = s.compute[s.batches > 0]
    res = Result()
    res.add("iteration_time", s.time, "s", "lower")
    res.add("throughput", s.throughput, "samples/s", "higher")
    res.add("speedup", pl.speedup, "1", "higher")
    one_node = pl.one_node_time
    ref = one_node if p.get("one_node_days") is None else float(p["one_node_days"]) * _DAY
    res.add("node_speedup", ref / pl.train_time, "1", "higher")
    res.add("expansion", ref / pl.train_time / (pl.ranks / pl.ranks_per_node), "1", "higher")
    res.add("one_node_time", one_node, "s", "none")
    res.add("comm_time", s.t_allreduce, "s", "lower")
    res.add("exposed_comm", s.t_allreduce, "s", "lower")
    res.add("compute_time", s.t_compute, "s", "lower")
    res.add("train_time", pl.train_time, "s", "lower")
    res.add("train_days", pl.train_time / _DAY, "d", "lower")
    res.add("steps", pl.steps, "1", "none")
    res.add("comm_bytes", float(p["grad_bytes"]) * wl.params if nodes > 1 else 0.0, "B", "none")
    res.add("peak_memory", s.peak_memory, "B", "lower")
    res.add("fits", 1.0, "1", "none")
    res.add("imbalance", float(busy.max() / busy.min()) if busy.size else 1.0, "1", "lower")
    res.add("dummy_ranks", int(np.sum(s.batches == 0)), "1", "none")
    res.add("nodes_used", nodes, "1", "none")  # the resolved count: nodes=None is the profile's, at most 4
    res.artifacts["batches"] = [int(x) for x in s.batches]
    res.artifacts["setup"] = _setup(pl, prof, float(p["efficiency"]))
    return res


def _setup(pl: Plan, prof, efficiency: float) -> dict:
    """The ``setup`` artifact: ranks, devices, algorithm, the one-node reference, per-rank compute."""
    s = pl.at_n
    return {
        "ranks": pl.ranks, "ranks_per_node": pl.ranks_per_node, "global_batch": int(s.batches.sum()),
        "devices": [d.name for d in rank_devices(prof, pl.ranks)], "algorithm": s.algorithm,
        "efficiency": efficiency, "single_node_iteration_time": pl.at_1.time, "single_node_steps": pl.steps_1,
        "rank_compute_s": [float(x) for x in s.compute],
    }
