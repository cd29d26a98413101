"""VirtualFlow's cost model: virtual-node step time, memory, and the heterogeneous plan search.

Pure functions from (layer table, hardware profile, parameters) to metrics, built from
:mod:`suite.perf` (roofline :func:`suite.perf.layer_times`; every all-reduce through
:func:`suite.perf.collective_time`). SI units: seconds, bytes, FLOP/s.

Model
-----
* **Virtual nodes** [Or22, abstract; the authors' ``virtual/virtual_helper.py``]: the global batch
  B is split into V virtual nodes of ``b = B / V`` samples. A device holding ``v`` of them runs
  them one after another, accumulating the gradient, and the step ends with one all-reduce of
  the accumulated gradient (M = 4 x params bytes, fp32) over the devices that took part::

      T_step = max_k  v_k * t_k(b)  +  T_AR(M, devices)

  with ``t_k(b)`` one virtual node's forward + backward on device type k by roofline
  (:func:`vn_time`) plus the accumulation of its gradient into the buffer (read two, write one:
  ``12 params / mem_bw``). Homogeneous (``virtual``): ``v = V / P`` on P devices, so
  ``T = (V/P) t(B/V) + T_AR(M, P)``.
* **Physical** (baseline): no virtual nodes; each of the P devices runs one batch of ``b`` (the
  largest that fits it), so the global batch is ``P b`` and changes with the hardware.
* **Memory per device** = model state (weights, gradient, accumulation buffer, optimizer:
  :func:`state_bytes_per_param`) + activations of one virtual node, ``b x act`` (the virtual
  nodes of a device run sequentially): it does not depend on P.
* **Heterogeneous** (the authors' ``virtual/brute_het.py`` searches over device counts and
  per-type batches; here with a fixed virtual-node size): choose, per device type k, how many of
  its ``c_k`` devices take part (``n_k``) and how many virtual nodes each runs (``v_k``), with
  ``sum_k n_k v_k = V``, minimising ``max_k v_k t_k + T_AR(M, n)``. :func:`search_plan` is
  exact and vectorised: for each ``n`` the least feasible makespan is the smallest candidate
  ``T = j t_k`` with capacity ``sum_k n_k floor(T / t_k) >= V``; :func:`brute_force_plan`
  enumerates every ``(n, v)`` (the oracle of the tests).
* **Fast-only** (baseline): only the fastest type, ``ceil(V / c_fast)`` virtual nodes on the
  busiest device.
* **Efficiency** (fraction of the fp32 peak, per device, never per claim): calibrated on the
  measured FP32 ResNet-50 training throughput of each GPU in Lambda Labs' TensorFlow benchmark
  [Lambda19] at the compute roof, ``eff = images/s x F_train / peak_fp32`` with
  ``F_train = 24.44 GFLOP`` (our ``resnet-50`` table, forward + backward). A device missing from
  the table gets the V100's efficiency (:data:`DEFAULT_EFFICIENCY_DEVICE`).

References
----------
.. [Or22] A. Or, H. Zhang, M. J. Freedman, "VirtualFlow: Decoupling Deep Learning Models from
   the Underlying Hardware", MLSys 2022 (abstract; arXiv 2009.09523); the authors' code
   ``andrewor14/models`` (``virtual/``, ``deploy/``).
.. [Lambda19] C. Li (Lambda Labs), "RTX 2080 Ti Deep Learning Benchmarks with TensorFlow", 2019:
   FP32 training throughput table, ResNet-50 images/s (TF 1.12, CUDA 10.0, cuDNN 7.4.1).
.. [He16] K. He et al., "Deep Residual Learning for Image Recognition", CVPR 2016 (SGD with
   momentum: one state per parameter).
.. [Kingma15] D. Kingma, J. Ba, "Adam", ICLR 2015 (two states per parameter; BERT and the
   Transformer train with Adam: Devlin et al. 2019 App. A.2, Vaswani et al. 2017 Sec. 5.3).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from suite.api import Group, collective_time, layer_times, resolve_scale

__all__ = [
    "PAPER_DEVICES",
    "devices_of",
    "LAMBDA_RESNET50_FP32",
    "RESNET50_TRAIN_FLOPS",
    "DEFAULT_EFFICIENCY_DEVICE",
    "DEFAULT_EFFICIENCY_PROFILE",
    "device_efficiency",
    "EFFICIENCY_INPUT",
    "DeviceSlot",
    "device_slots",
    "state_bytes_per_param",
    "activation_bytes_per_sample",
    "memory_per_device",
    "vn_time",
    "allreduce_time",
    "Plan",
    "search_plan",
    "brute_force_plan",
    "fast_only_plan",
    "balanced_bound",
    "StepModel",
    "step_model",
    "divisors",
    "ideal_gain",
    "evaluate",
]

#: Measured FP32 training throughput of ResNet-50 (images/s, one GPU) [Lambda19], keyed by the
#: device's name in its profile (``[device] name``).
LAMBDA_RESNET50_FP32 = {
    "Tesla V100 SXM2 16 GB": 405.0,
    "Tesla V100 SXM2 32 GB": 405.0,
    "GeForce RTX 2080 Ti": 294.0,
    "TITAN Xp": 236.0,
    "GeForce GTX 1080 Ti": 209.0,
}
#: Forward + backward FLOPs of one 224x224 ResNet-50 image in our ``resnet-50`` table
#: (suite.workloads, FLOP = 2 MAC; backward = data + weight gradients).
RESNET50_TRAIN_FLOPS = 24.437764096e9
#: The device whose calibrated efficiency stands in for a device missing from the table.
DEFAULT_EFFICIENCY_DEVICE = "Tesla V100 SXM2 16 GB"
#: The device profile holding that device (its fp32 peak is read from there, not repeated here).
DEFAULT_EFFICIENCY_PROFILE = "nvidia-v100-sxm2-16gb"


#: the input (``Technique.uses``) holding that profile: resolved by the runner, hashed into the key
EFFICIENCY_INPUT = f"profile:{DEFAULT_EFFICIENCY_PROFILE}"


def _default_efficiency(reference) -> float:
    from suite.api import ParameterError

    if reference is None:
        raise ParameterError(f"virtualflow: a device missing from the calibration table needs the reference profile "
                             f"{DEFAULT_EFFICIENCY_PROFILE!r} (scenario.input({EFFICIENCY_INPUT!r})), got none")
    dev = reference.require_device()
    if dev.name != DEFAULT_EFFICIENCY_DEVICE:  # pragma: no cover - a renamed profile
        raise ValueError(f"virtualflow: profile {DEFAULT_EFFICIENCY_PROFILE!r}: expected device "
                         f"{DEFAULT_EFFICIENCY_DEVICE!r}, got {dev.name!r}")
    return min(1.0, LAMBDA_RESNET50_FP32[DEFAULT_EFFICIENCY_DEVICE] * RESNET50_TRAIN_FLOPS / dev.flops("fp32"))


def device_efficiency(device, reference=None) -> float:
    """Achieved fraction of *device*'s fp32 peak: ``thr x F_train / peak`` from [Lambda19].

    Parameters
    ----------
    device : suite.hardware.Device
    reference : suite.hardware.Profile, optional
        The :data:`DEFAULT_EFFICIENCY_PROFILE` profile (``scenario.input(EFFICIENCY_INPUT)``),
        needed only for a device missing from the table.

    Returns
    -------
    float
        In (0, 1]. A device missing from :data:`LAMBDA_RESNET50_FP32` gets the V100's figure,
        with the fp32 peak of the :data:`DEFAULT_EFFICIENCY_PROFILE` profile (405 x 24.44e9 /
        15.7e12 = 0.630).
    """
    thr = LAMBDA_RESNET50_FP32.get(getattr(device, "name", None) or "")
    if thr is None:
        return _default_efficiency(reference)
    return min(1.0, thr * RESNET50_TRAIN_FLOPS / device.flops("fp32"))


# --------------------------------------------------------------------------- devices of a profile


@dataclass(frozen=True)
class DeviceSlot:
    """One device type of a profile: its name, Device, how many, and which node each sits on."""

    name: str
    device: object
    count: int
    nodes: tuple[int, ...]  # node index of each of the `count` devices


def device_slots(profile) -> list[DeviceSlot]:
    """The device types of *profile*, in profile order.

    With ``[ext.mix]``, its groups expanded in order over the nodes (device i on node
    ``i // devices_per_node``); otherwise one type, the profile's device, on every node.

    Raises
    ------
    suite.errors.ProfileError
        The mix names a profile without a device, or holds more devices than the nodes.
    """
    from suite.api import ProfileError

    dpn = max(1, int(profile.devices_per_node or 1))
    nodes = profile.num_nodes
    from suite.api import mix_devices

    mix = mix_devices(profile)
    out: list[DeviceSlot] = []
    if mix:
        i = 0
        for name, dev, count in mix:
            out.append(DeviceSlot(name, dev, int(count), tuple((i + j) // dpn for j in range(int(count)))))
            i += int(count)
        if i > dpn * nodes:
            raise ProfileError(f"profile {profile.name!r}: ext.mix holds {i} devices, expected <= "
                               f"{dpn * nodes} ({nodes} nodes x {dpn})")
    else:
        dev = profile.require_device()
        total = dpn * nodes
        out.append(DeviceSlot(profile.name, dev, total, tuple(j // dpn for j in range(total))))
    return out


# --------------------------------------------------------------------------- memory


def state_bytes_per_param(workload) -> float:
    """Bytes of model state per parameter on every device, fp32: weights 4 + gradient 4 +
    accumulation buffer 4 + optimizer (momentum SGD 4 for a CNN [He16]; Adam 8 for a
    transformer [Kingma15])."""
    return 12.0 + (8.0 if getattr(workload, "kind", "") == "transformer" else 4.0)


def activation_bytes_per_sample(workload) -> float:
    """Activation bytes kept for the backward pass per sample: a transformer's
    :func:`suite.workloads.transformer.activation_memory` (Korthikanti et al. 2022 eq. (1));
    otherwise the sum of every layer's output (``activation_bytes``)."""
    if getattr(workload, "kind", "") == "transformer":
        from suite.api import activation_memory

        try:
            return activation_memory(workload)
        except Exception:  # noqa: BLE001 - a transformer-kind table without the figures
            pass
    return float(sum(l.activation_bytes for l in workload.layers))


def memory_per_device(workload, vn_batch: int) -> float:
    """Peak bytes on one device: ``params x state_bytes_per_param + vn_batch x act``.

    Independent of the number of devices (the virtual nodes of a device run one at a time).
    """
    if vn_batch < 0:
        raise ValueError(f"vn_batch must be >= 0, got {vn_batch}")
    return workload.params * state_bytes_per_param(workload) + vn_batch * activation_bytes_per_sample(workload)


# --------------------------------------------------------------------------- times

def vn_time(workload, vn_batch: int, device, efficiency: float) -> float:
    """Seconds for one virtual node of *vn_batch* samples on *device*: forward + backward of
    every layer by roofline (:func:`suite.perf.layer_times`, fp32, 4-byte elements) plus adding
    its gradient into the accumulation buffer (``12 params`` bytes through device memory).

    Raises
    ------
    ValueError
        ``vn_batch < 1`` or efficiency outside (0, 1].
    """
    if vn_batch < 1:
        raise ValueError(f"vn_batch must be >= 1, got {vn_batch}")
    if not 0.0 < efficiency <= 1.0:
        raise ValueError(f"efficiency must be in (0, 1], got {efficiency}")
    fwd, bwd = layer_times(list(workload.layers), vn_batch, device, dtype="fp32", efficiency=efficiency, dtype_bytes=4)
    return float(sum(fwd) + sum(bwd)) + 12.0 * workload.params / device.memory_bandwidth


def allreduce_time(profile, nbytes: float, per_node: Sequence[int]) -> float:
    """All-reduce of *nbytes* over the devices counted in *per_node* (devices taking part on
    each node), by :func:`suite.perf.collective_time` (``auto``: the fastest algorithm over every
    level the group crosses). The group is priced as ``Group(max per node, nodes used)``: a node
    with fewer ranks than the busiest is priced as full (the slowest node bounds the step).

    Returns 0 for one device or zero bytes.
    """
    used = [int(c) for c in per_node if c > 0]
    if sum(used) <= 1 or nbytes <= 0:
        return 0.0
    g = Group(ranks_per_node=max(used), nodes=len(used))
    return collective_time("allreduce", float(nbytes), g, profile).time


# --------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class Plan:
    """A placement of V virtual nodes on device types.

    ``vns[k]`` virtual nodes go to type k, dealt as evenly as possible over its ``devices[k]``
    devices (0 devices when ``vns[k]`` is 0), so its busiest device runs
    ``ceil(vns[k] / devices[k])`` of them in sequence. ``compute`` is the slowest type's
    ``ceil(vns[k] / devices[k]) t_k`` (s), ``comm`` the all-reduce (s), ``step = compute + comm``.
    """

    devices: tuple[int, ...]
    vns: tuple[int, ...]
    compute: float
    comm: float

    @property
    def step(self) -> float:
        return self.compute + self.comm

    @property
    def assigned(self) -> int:
        return int(sum(self.vns))

    def per_device(self) -> list[list[int]]:
        """Virtual nodes of each device, per type (even split, the remainder on the first ones)."""
        out = []
        for n, w in zip(self.devices, self.vns):
            out.append([w // n + (1 if i < w % n else 0) for i in range(n)] if n else [])
        return out

    @property
    def busiest(self) -> tuple[int, ...]:
        return tuple(-(-w // n) if n else 0 for n, w in zip(self.devices, self.vns))


def balanced_bound(t: Sequence[float], counts: Sequence[int], V: int) -> float:
    """The continuous lower bound of the compute makespan, ``V / sum_k c_k / t_k`` (s)."""
    rate = sum(c / tk for c, tk in zip(counts, t) if c > 0 and math.isfinite(tk))
    return V / rate if rate > 0 else math.inf


def _per_node(slots: Sequence[DeviceSlot], devices: Sequence[int], n_nodes: int) -> list[int]:
    per = [0] * n_nodes
    for s, n in zip(slots, devices):
        for node in s.nodes[:n]:
            per[node] += 1
    return per


def _finish(t, slots, n, w, profile, grad_bytes, n_nodes) -> Plan:
    """The plan of per-type totals *w* on at most *n* devices each (idle devices dropped)."""
    dev = tuple(min(int(a), int(b)) for a, b in zip(n, w))
    comp = max((-(-int(b) // a) * float(tk) for a, b, tk in zip(dev, w, t) if a > 0), default=0.0)
    comm = allreduce_time(profile, grad_bytes, _per_node(slots, dev, n_nodes))
    return Plan(dev, tuple(int(b) for b in w), comp, comm)


def _least_makespans(t: np.ndarray, counts: Sequence[int], V: int):
    """The device-count vectors of :func:`search_plan` and the least makespan each reaches V with.

    *t* is seconds per virtual node per type (``inf``: none fits), *counts* the devices per type.
    Returns ``N`` (C, K) the vectors ``n`` tried (``n_k`` in ``0..c_k`` when the product of
    ``(c_k + 1)`` is at most 4096, else in ``{0, c_k}``; types that fit none stay 0), ``tf`` (K,)
    the seconds per virtual node, ``cand`` (T,) the candidate makespans ``j t_k`` (j = 1..V, s),
    ``per_dev`` (T, K) the virtual nodes one device of each type fits in each candidate, ``has``
    (C,) whether some candidate reaches V and ``first`` (C,) the index of the least one that does.

    Raises
    ------
    ValueError
        No type can hold a virtual node.
    """
    ok = np.isfinite(t)
    if not ok.any():
        raise ValueError("no device type can hold one virtual node")
    if math.prod(c + 1 for c in counts) <= 4096:
        ranges = [range(c + 1) if ok[k] else range(1) for k, c in enumerate(counts)]
    else:
        ranges = [(0, c) if ok[k] else (0,) for k, c in enumerate(counts)]
    N = np.array([n for n in itertools.product(*ranges) if sum(n) > 0], dtype=np.int64)  # (C, K)
    tf = np.where(ok, t, np.inf)
    cand = np.unique((np.arange(1, V + 1)[:, None] * tf[ok][None, :]).ravel())  # makespans j t_k
    per_dev = np.floor(cand[:, None] / tf[None, :] * (1 + 1e-12))  # (T, K) virtual nodes a device fits
    cap = N @ per_dev.T  # (C, T)
    feas = cap >= V
    return N, tf, cand, per_dev, feas.any(axis=1), np.argmax(feas, axis=1)


def search_plan(t: Sequence[float], slots: Sequence[DeviceSlot], V: int, profile, grad_bytes: float,
                n_nodes: int) -> Plan:
    """The best plan over device counts and virtual nodes per type (vectorised, exact).

    For each vector ``n`` of devices taking part (``n_k`` in ``0..c_k``), the least compute
    makespan is the smallest candidate ``T = j t_k`` (j = 1..V) whose capacity
    ``sum_k n_k floor(T / t_k)`` reaches V (all candidates and all ``n`` at once in numpy); the
    V virtual nodes then fill the types fastest first up to ``n_k floor(T / t_k)`` each. The
    all-reduce of the devices used is added and the least ``compute + comm`` kept.

    Parameters
    ----------
    t : sequence of float
        Seconds per virtual node on each device type (``inf``: the type cannot hold one).
    slots : sequence of DeviceSlot
        The profile's device types (counts and nodes).
    V : int
        Virtual nodes to place, >= 1.
    profile : suite.hardware.Profile
        Prices the all-reduce of the devices taking part (:func:`allreduce_time`).
    grad_bytes : float
        Bytes all-reduced per step.
    n_nodes : int

    Returns
    -------
    Plan
        Minimal ``compute + comm``; ties go to fewer devices. Every ``n`` is tried when the
        product of ``(c_k + 1)`` is at most 4096, else ``n_k`` in ``{0, c_k}``.

    Raises
    ------
    ValueError
        V < 1 or no type can hold a virtual node.
    """
    if V < 1:
        raise ValueError(f"V must be >= 1, got {V}")
    t = np.asarray(t, float)
    N, tf, cand, per_dev, has, first = _least_makespans(t, [s.count for s in slots], V)
    best = None
    order = np.argsort(tf, kind="stable")  # fastest first (inf last)
    for i in np.flatnonzero(has):
        n = N[i]
        T = cand[first[i]]
        room = n * per_dev[first[i]]
        w = np.zeros(len(t), dtype=np.int64)
        left = V
        for k in order:
            take = int(min(room[k], left))
            w[k] = take
            left -= take
        plan = _finish(tf, slots, n, w, profile, grad_bytes, n_nodes)
        key = (plan.step * (1 + 1e-12), sum(plan.devices))
        if best is None or key < best[0]:
            best = (key, plan)
    if not (best is not None):
        raise AssertionError('failed: best is not None')
    return best[1]


def brute_force_plan(t: Sequence[float], slots: Sequence[DeviceSlot], V: int, profile, grad_bytes: float,
                     n_nodes: int) -> Plan:
    """Every device-count vector and every split of V over the types (the authors' brute
    force; small V only). Same contract as :func:`search_plan`, exponential cost: the oracle of
    the tests."""
    counts = [s.count for s in slots]
    K = len(counts)
    best = None
    for n in itertools.product(*[range(c + 1) for c in counts]):
        if sum(n) == 0:
            continue
        for cut in itertools.combinations(range(V + K - 1), K - 1):  # compositions of V into K parts
            w = [b - a - 1 for a, b in zip((-1,) + cut, cut + (V + K - 1,))]
            if any(wk > 0 and (nk == 0 or not math.isfinite(tk)) for wk, nk, tk in zip(w, n, t)):
                continue
            plan = _finish(t, slots, n, w, profile, grad_bytes, n_nodes)
            key = (plan.step * (1 + 1e-12), sum(plan.devices))
            if best is None or key < best[0]:
                best = (key, plan)
    if best is None:
        raise ValueError("no plan places every virtual node")
    return best[1]


def fast_only_plan(t: Sequence[float], slots: Sequence[DeviceSlot], V: int, profile, grad_bytes: float,
                   n_nodes: int) -> Plan:
    """Only the fastest type (least seconds per virtual node), all its devices, the V virtual
    nodes dealt evenly: the busiest device runs ``ceil(V / c)`` of them."""
    k = int(np.argmin(np.asarray(t, float)))
    if not math.isfinite(t[k]):
        raise ValueError("no device type can hold one virtual node")
    n = [slots[k].count if j == k else 0 for j in range(len(slots))]
    w = [V if j == k else 0 for j in range(len(slots))]
    return _finish(t, slots, n, w, profile, grad_bytes, n_nodes)


def divisors(n: int) -> list[int]:
    """Positive divisors of n, ascending."""
    return [d for d in range(1, n + 1) if n % d == 0]


# --------------------------------------------------------------------------- one step


@dataclass(frozen=True)
class StepModel:
    """One training step of a variant: times (s), the plan, memory (B), batch (samples)."""

    variant: str
    plan: Plan
    vn_batch: int
    global_batch: int
    vn_times: tuple[float, ...]
    memory: float
    capacity: tuple[float, ...]

    @property
    def step_time(self) -> float:
        return self.plan.step

    @property
    def throughput(self) -> float:
        return self.global_batch / self.plan.step


def _n_nodes(profile) -> int:
    return profile.num_nodes


def _grad_bytes(workload) -> float:
    """Bytes of one fp32 gradient of *workload* (4 B a parameter): what a step all-reduces."""
    return 4.0 * workload.params


@dataclass(frozen=True)
class _Types:
    """The profile's device types as :func:`step_model` prices one virtual node of b samples on
    them: the types, the seconds per virtual node on each (``inf`` where one does not fit), their
    efficiencies, the memory one virtual node needs per device (B) and each type's capacity (B)."""

    slots: Sequence[DeviceSlot]
    vn_times: tuple[float, ...]
    effs: tuple[float, ...]
    mem: float
    caps: tuple[float, ...]


def _first_type_step(workload, profile, variant: str, types: _Types, *, batch: int, virtual_nodes: int,
                     devices: int) -> StepModel:
    """The step of ``physical`` / ``virtual``: P = *devices* devices of the profile's first type.

    ``virtual`` runs V / P virtual nodes of b = B / V samples in sequence on each device and
    keeps the batch B; ``physical`` runs one and its global batch is P b. The first type is
    priced even where one virtual node does not fit it (its ``vn_times`` entry ``inf``).

    Raises
    ------
    suite.api.Skip
        P larger than the first type's count (a sweep past the profile's devices declines those
        cases, as every technique's does: :func:`suite.api.require_devices`).
    suite.errors.ParameterError
        P not dividing V (``virtual``).
    """
    from suite.api import ParameterError, require_devices

    slots, t = types.slots, types.vn_times
    require_devices(profile, devices, "devices", have=slots[0].count)
    if variant == "virtual" and virtual_nodes % devices:
        raise ParameterError(f"virtualflow: parameter 'devices': expected a divisor of virtual_nodes "
                             f"({virtual_nodes}), got {devices}")
    b = batch // virtual_nodes
    per = 1 if variant == "physical" else virtual_nodes // devices
    dev = tuple(devices if j == 0 else 0 for j in range(len(slots)))
    vns = tuple(per * devices if j == 0 else 0 for j in range(len(slots)))
    comm = allreduce_time(profile, _grad_bytes(workload), _per_node(slots, dev, _n_nodes(profile)))
    t0 = t[0] if math.isfinite(t[0]) else vn_time(workload, b, slots[0].device, types.effs[0])
    plan = Plan(dev, vns, per * t0, comm)
    gb = devices * b if variant == "physical" else batch
    return StepModel(variant, plan, b, gb, t, types.mem, types.caps)


def step_model(workload, profile, variant: str, batch: int, virtual_nodes: int, devices: int,
               efficiency: float | None = None, plan: tuple | None = None, reference=None) -> StepModel:
    """The step of *variant* on *profile*.

    Parameters
    ----------
    workload : suite.workloads.LayerTable
    profile : suite.hardware.Profile
    variant : {"physical", "virtual", "fast-only", "heterogeneous"}
    batch : int
        Global batch B (samples); ``physical`` runs ``devices x B / V`` instead.
    virtual_nodes : int
        V, dividing B.
    devices : int
        P for ``physical`` / ``virtual`` (devices of the profile's first type); the other two
        variants use every device of the profile.
    efficiency : float, optional
        Override the per-device calibration (:func:`device_efficiency`).
    reference : suite.hardware.Profile, optional
        :func:`device_efficiency`'s reference profile (``scenario.input(EFFICIENCY_INPUT)``).
    plan : (devices, vns), optional
        ``fast-only`` / ``heterogeneous``: price this placement (devices and virtual nodes per
        type, as a :class:`Plan` holds them) instead of choosing one, so only its all-reduce is
        priced (the chosen plan's network-sensitivity check, ``technique.check_network_levels``).

    Raises
    ------
    suite.errors.ParameterError
        B not a multiple of V; P not dividing V (``virtual``); P larger than the profile.
    """
    from suite.api import ParameterError

    if batch % virtual_nodes:
        raise ParameterError(f"virtualflow: parameter 'batch': expected a multiple of virtual_nodes "
                             f"({virtual_nodes}), got {batch}")
    slots = device_slots(profile)
    n_nodes = _n_nodes(profile)
    b = batch // virtual_nodes
    M = _grad_bytes(workload)
    mem = memory_per_device(workload, b)
    effs = [efficiency if efficiency is not None else device_efficiency(s.device, reference) for s in slots]
    caps = tuple(float(s.device.memory) for s in slots)
    t = [vn_time(workload, b, s.device, e) if mem <= cap else math.inf for s, e, cap in zip(slots, effs, caps)]
    if variant in ("physical", "virtual"):
        types = _Types(slots=slots, vn_times=tuple(t), effs=tuple(effs), mem=mem, caps=caps)
        return _first_type_step(workload, profile, variant, types, batch=batch, virtual_nodes=virtual_nodes,
                                devices=devices)
    if not any(math.isfinite(x) for x in t):
        from suite.api import Skip

        raise Skip(f"virtualflow: one virtual node of {b} samples ({mem:.3g} B) fits no device of profile "
                   f"{profile.name!r}")
    if plan is not None and variant in ("fast-only", "heterogeneous"):
        plan = _finish(t, slots, plan[0], plan[1], profile, M, n_nodes)
    elif variant == "fast-only":
        plan = fast_only_plan(t, slots, virtual_nodes, profile, M, n_nodes)
    elif variant == "heterogeneous":
        plan = search_plan(t, slots, virtual_nodes, profile, M, n_nodes)
    else:
        raise ValueError(f"variant must be one of physical, virtual, fast-only, heterogeneous; got {variant!r}")
    return StepModel(variant, plan, b, batch, tuple(t), mem, caps)


# --------------------------------------------------------------------------- evaluate


def _ideal(slots: Sequence[DeviceSlot], vn_times: Sequence[float]) -> float:
    fin = [(s.count, tk) for s, tk in zip(slots, vn_times) if math.isfinite(tk)]
    if not fin:
        return math.nan
    kf = int(np.argmin(vn_times))
    return sum(c / tk for c, tk in fin) / (slots[kf].count / float(vn_times[kf]))


def ideal_gain(workload, profile, batch: int, virtual_nodes: int, efficiency: float | None = None) -> float:
    """Zero-communication gain of every device of *profile* over its fastest type alone:
    ``sum_k c_k / t_k(b) / (c_fast / t_fast(b))`` with ``t_k(b)`` one virtual node of
    ``b = batch / virtual_nodes`` samples on type k (:func:`vn_time`, the types one fits).

    The best any placement of the virtual nodes can do (continuous, no all-reduce): the
    ``ideal_gain`` result of :func:`evaluate` and the null of the heterogeneous-throughput claim.

    Raises
    ------
    suite.errors.ParameterError
        As :func:`step_model` (batch not a multiple of virtual_nodes).
    """
    sm = step_model(workload, profile, "fast-only", batch, virtual_nodes, 1, efficiency)
    return _ideal(device_slots(profile), sm.vn_times)


def evaluate(scenario, plan: tuple | None = None):
    """Model fidelity: step time, throughput and memory of one variant (*plan*: a fixed
    placement for ``fast-only`` / ``heterogeneous``, see :func:`step_model`).

    Reads ``batch``, ``virtual_nodes``, ``devices``, ``efficiency`` from ``scenario.params``,
    the profile's devices (``[ext.mix]`` groups or its device), memory, fp32 peak, memory
    bandwidth and network levels, and the workload's layer table.

    Returns
    -------
    suite.Result
        ``step_time`` (s), ``throughput`` (samples/s), ``compute_time`` (s), ``comm_time`` (s),
        ``memory_per_device`` (B), ``fits_memory`` (1/0), ``global_batch``, ``devices_used``,
        ``vn_per_device_max``, ``balanced_bound`` (s, continuous compute bound over every device),
        ``ideal_gain`` (1: the sum of every device's virtual-node rate over the fastest type's,
        zero communication); artifact ``plan``.

    Raises
    ------
    suite.Skip
        No profile / layer table; ``elastic`` / ``static`` (simulate fidelity only).
    """
    from suite.api import Result, Skip

    prof, wl = scenario.profile, scenario.workload
    if prof is None:
        raise Skip("virtualflow model fidelity needs a hardware profile")
    if wl is None or not getattr(wl, "layers", None):
        raise Skip(f"virtualflow model fidelity needs a layer-table workload, got {getattr(wl, 'name', None)!r}")
    if scenario.variant in ("elastic", "static"):
        raise Skip(f"virtualflow: variant {scenario.variant!r} is a scheduler: use --fidelity simulate")
    p = scenario.params
    eff = p.get("efficiency")
    ref = scenario.input(EFFICIENCY_INPUT)
    sm = step_model(wl, prof, scenario.variant, int(p["batch"]), int(p["virtual_nodes"]), devices_of(p, prof),
                    None if eff is None else float(eff), plan, reference=ref)
    slots = device_slots(prof)
    used = [k for k, n in enumerate(sm.plan.devices) if n > 0]
    fits = all(sm.memory <= sm.capacity[k] for k in used)
    fin = [(s.count, tk) for s, tk in zip(slots, sm.vn_times) if math.isfinite(tk)]
    ideal = _ideal(slots, sm.vn_times)
    res = Result()
    res.add("step_time", sm.step_time, "s", "lower")
    res.add("throughput", sm.throughput, "samples/s", "higher")
    res.add("compute_time", sm.plan.compute, "s", "lower")
    res.add("comm_time", sm.plan.comm, "s", "lower")
    res.add("memory_per_device", sm.memory, "B", "lower")
    res.add("fits_memory", 1.0 if fits else 0.0, "1", "higher")
    res.add("peak_memory", sm.memory, "B", "lower")  # the memory-capacity family check's names
    res.add("fits", 1.0 if fits else 0.0, "1", "higher")
    res.add("global_batch", sm.global_batch, "samples", "none")
    res.add("devices_used", sum(sm.plan.devices), "1", "none")
    res.add("vn_per_device_max", max(sm.plan.busiest), "1", "none")
    res.add("balanced_bound", balanced_bound([tk for _, tk in fin], [c for c, _ in fin], int(p["virtual_nodes"])),
            "s", "lower")
    res.add("ideal_gain", ideal, "1", "none")
    res.artifacts["plan"] = _plan_artifact(sm, slots, eff, ref)
    return res


#: the default scenario's devices (the authors' scripts run 1, 2, 4, 8 GPUs): when the profile holds them
PAPER_DEVICES = 4


def devices_of(params, profile) -> int:
    """``params['devices']``, or when it is None (unset) the most devices of *profile*'s first type,
    at most :data:`PAPER_DEVICES`, that divide ``virtual_nodes`` (1 divides any);
    :data:`PAPER_DEVICES` without a profile (:func:`suite.api.resolve_scale`)."""
    return resolve_scale(params, "devices", profile, PAPER_DEVICES, count=lambda prof: device_slots(prof)[0].count,
                         divides=int(params["virtual_nodes"]))


def _plan_artifact(sm: StepModel, slots: Sequence[DeviceSlot], eff, ref) -> dict:
    """The ``plan`` artifact of :func:`evaluate`: per type its name, devices used, virtual nodes (in
    all and per device), the virtual-node batch, seconds per virtual node (None: does not fit), the
    efficiency (*eff*, else :func:`device_efficiency` against *ref*) and the memory capacity (B)."""
    return {
        "types": [s.name for s in slots], "devices": list(sm.plan.devices), "vns": list(sm.plan.vns),
        "vns_per_device": sm.plan.per_device(),
        "vn_batch": sm.vn_batch, "vn_times_s": [tk if math.isfinite(tk) else None for tk in sm.vn_times],
        "efficiency": [float(eff) if eff is not None else device_efficiency(s.device, ref) for s in slots],
        "memory_capacity_B": list(sm.capacity),
    }
