"""Computron's cost model: swap time of a model-parallel layout, and the service time of a batch.

Swapping (load = host -> GPUs, offload = GPUs -> host)
-----------------------------------------------------
A model of ``S`` bytes (fp16 parameters) laid out over ``n = tp x pp`` GPUs is ``n`` shards of
``S / n`` bytes; every GPU keeps its shard in pinned host memory and copies it over its own host
link ([Zou23] abstract: swapping "parallelized" over the "aggregate CPU-GPU link bandwidth"; the
authors' worker calls ``model.to(...)`` on every rank at once, with load and offload on separate
CUDA streams). A load is a host-to-devices scatter and an offload the matching gather:

* ``computron`` (all shards at once, each on its own link)::

      T(n) = max( T_link(S / n),  S / B_host,  g S / (n B_uplink) )

  ``T_link(m) = alpha + m / (f B_link)`` is one shard over one host link
  (:func:`suite.perf.transfer_time`; see :func:`host_link_time`); ``B_host`` the CPU's memory bandwidth (the node's
  ``node.cpu`` profile) bounds the aggregate; a PCIe switch that ``g`` of the group's GPUs share
  (``[ext.pcie_switch]``, optional) bounds it by its uplink ``B_uplink``.
* ``mp-serial`` (the same shards copied one after another): ``T = n T_link(S / n)``.
* ``single-device`` (``tp = pp = 1``): ``T = T_link(S)``.
* ``resident``: no swap (``T = 0``), the bound.

``f`` = :data:`LINK_FRACTION` is the achieved fraction of the link's per-direction bandwidth. On
a CPU-only (``measured``) profile the "link" is one thread's copy rate (``[measured]
stream.copy``, halved because STREAM counts the read and the write) and ``B_host`` is
``memory_bandwidth / 2`` (a host-to-host copy reads and writes every byte): ``rate(n) = min(n r1,
B / 2)``, the prediction ``suite validate computron --profile local`` compares with execute.

Service (one batch of ``k`` prompts of ``s`` tokens, ``max_tokens`` new tokens)
--------------------------------------------------------------------------------
Each GPU holds ``1 / (tp pp)`` of the weights and does ``1 / (tp pp)`` of the FLOPs of the prefill
(forward FLOPs of the layer table at ``seq = s``, times ``k``); its time is a roofline
[Williams09] ``max(F / (eff peak_fp16), bytes / B_hbm)`` with ``bytes`` = its weights plus its
activations. Megatron tensor parallelism adds two all-reduces of the ``k s h`` fp16 activations
per block [Shoeybi19 §3] (``collective_time("allreduce", ..., Group(tp, 1))`` on the node's
intra-node level); a pipeline adds ``pp - 1`` hand-offs of the same size (``p2p``). Every
further token repeats the forward at ``seq = 1`` (KV cache; attention over the cache not
counted). ``stage_time`` is one stage's share; ``service_time = pp stage_time + (pp - 1)
T_handoff`` the batch's latency.

References
----------
.. [Zou23] D. Zou, X. Jin, X. Yu, H. Zhang, J. Demmel, "Computron: Serving Distributed Deep
   Learning Models with Model Parallel Swapping", arXiv 2306.13835, 2023 (abstract).
.. [Williams09] S. Williams et al., "Roofline", CACM 52(4), 2009.
.. [Shoeybi19] M. Shoeybi et al., "Megatron-LM", arXiv 1909.08053, §3 (two all-reduces per
   transformer layer in the forward pass).
.. [Narayanan21] D. Narayanan et al., SC 2021, Table 1 (44-52 % of the A100's peak).
.. [PCIe4] PCI Express Base Specification 4.0 (TLP framing, header and LCRC per packet).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from suite.api import Group, ParameterError, ProfileError, collective_time, roofline_time, transfer_time

from suite_computron.constants import DEFAULT_EFFICIENCY

__all__ = ["LINK_FRACTION", "DEFAULT_EFFICIENCY", "DTYPE_BYTES", "VARIANTS", "HostEndpoint", "SwapCost",
           "ServiceCost", "layout", "host_endpoint", "host_link_time", "swap_time", "service_cost",
           "check_fits", "served_table", "model_bytes", "layer_table_of", "settings", "evaluate"]

#: Achieved fraction of a PCIe link's per-direction bandwidth for large pinned DMA copies.
#: Source: PCIe 4.0 packet overhead [PCIe4] at the usual 256-byte maximum payload -- each TLP
#: carries about 24 B of framing, sequence number, 3-4 DW header and LCRC, 256 / 280 = 0.914 --
#: less data-link-layer ACK and flow-control packets (a few per cent): 0.85, once for every PCIe
#: link (per technique, never per claim). The docs page shows the swap times scale with it.
LINK_FRACTION = 0.85

# DEFAULT_EFFICIENCY (the fp16 GEMM efficiency, its source): suite_computron.constants

DTYPE_BYTES = 2  # fp16 weights and activations (the OPT checkpoints are fp16)

#: variant -> (uses the tp x pp layout, shards copied in parallel, swaps at all)
VARIANTS = {
    "single-device": (False, False, True),
    "mp-serial": (True, False, True),
    "computron": (True, True, True),
    "resident": (True, True, False),
}


# --------------------------------------------------------------------------- layout and endpoint


def layout(variant: str, tp: int, pp: int) -> tuple[int, int]:
    """(tp, pp) a variant runs with: ``single-device`` is always (1, 1)."""
    uses, _par, _swap = VARIANTS[variant]
    return (int(tp), int(pp)) if uses else (1, 1)


@dataclass(frozen=True)
class HostEndpoint:
    """The host side of the swap path, per GPU (SI units).

    Attributes
    ----------
    link_bandwidth : float
        B/s of one shard's path at full rate (host link per direction; one thread's copy rate on
        a CPU-only profile), before :data:`LINK_FRACTION`.
    link_fraction : float
        Achieved fraction of ``link_bandwidth`` (1 for a measured thread rate).
    link_latency : float
        s per copy.
    host_bandwidth : float or None
        B/s bound on the aggregate (CPU memory), None when unknown.
    switch_gpus, switch_bandwidth : int or None, float or None
        GPUs per PCIe switch and its uplink (B/s), from ``[ext.pcie_switch]``; None without one.
    kind : str
        ``"h2d"`` (host to GPU) or ``"h2h"`` (host to host, a CPU-only profile).
    """

    link_bandwidth: float
    link_fraction: float
    link_latency: float = 0.0
    host_bandwidth: float | None = None
    switch_gpus: int | None = None
    switch_bandwidth: float | None = None
    kind: str = "h2d"

    @property
    def effective_link(self) -> float:
        return self.link_bandwidth * self.link_fraction


def host_endpoint(profile) -> HostEndpoint:
    """The swap path of *profile*'s GPUs.

    GPU profiles: the device's ``host_link`` (bandwidth, latency) at :data:`LINK_FRACTION`, the
    CPU's ``memory_bandwidth`` (``node.cpu``) as the aggregate bound, and ``[ext.pcie_switch]``.
    CPU-only profiles (``suite hardware calibrate``): one thread's copy rate ``[measured]
    stream.copy / 2`` (else ``memory_bandwidth / 2``), bounded by ``memory_bandwidth / 2``.

    Raises
    ------
    ProfileError
        A GPU profile without ``device.host_link``.
    """
    dev = profile.require_device()
    if dev.type == "cpu":
        cap = dev.memory_bandwidth / 2.0
        meas = (profile.measured or {}).get("stream.copy")
        r1 = float(meas["value"]) / 2.0 if isinstance(meas, dict) and "value" in meas else cap
        return HostEndpoint(r1, 1.0, 0.0, cap, kind="h2h")
    if dev.host_link is None:
        raise ProfileError(f"profile {profile.name!r}: field device.host_link: expected the host link (PCIe) a "
                           "model is swapped over, got nothing")
    # the host CPU (node.cpu), resolved by the library that loaded the profile
    host = profile.cpu.memory_bandwidth if profile.cpu is not None else None
    sw = (profile.ext or {}).get("pcie_switch")
    gpus = bw = None
    if sw is not None:
        gpus = int(sw["gpus_per_switch"] if isinstance(sw, dict) else sw.gpus_per_switch)
        bw = float(sw["uplink_bandwidth"] if isinstance(sw, dict) else sw.uplink_bandwidth)
    return HostEndpoint(dev.host_link.bandwidth, LINK_FRACTION, dev.host_link.latency, host, gpus, bw)


def host_link_time(nbytes: float, ep: HostEndpoint) -> float:
    """One shard of *nbytes* over one host link: ``alpha + m / (f B_link)`` (s),
    :func:`suite.perf.transfer_time` on the device's host link (a host copy is not a collective:
    the host is not a rank of any network level)."""
    if nbytes <= 0:
        return 0.0
    return transfer_time(float(nbytes), float(ep.effective_link), float(ep.link_latency))


@dataclass(frozen=True)
class SwapCost:
    """One load (or offload) of a model.

    Attributes
    ----------
    time : float
        s, the whole model.
    shard_times : tuple of float
        s each shard's copy holds its link (``computron``: all equal to ``time``, run at once;
        ``mp-serial``: one after another, summing to ``time``).
    bound : str
        What sets ``time``: ``link``, ``host-memory``, ``switch`` or ``none``.
    rate : float
        B/s, ``S / time`` (0 when nothing moves).
    """

    time: float
    shard_times: tuple[float, ...]
    bound: str
    rate: float


def swap_time(nbytes: float, n: int, ep: HostEndpoint, parallel: bool = True) -> SwapCost:
    """Time to copy a model of *nbytes* split into *n* equal shards between host and GPUs.

    ``parallel``: ``max(T_link(S/n), S/B_host, g S/(n B_uplink))`` (module docstring); serial:
    ``n T_link(S/n)``.
    """
    if n < 1:
        raise ValueError(f"shards must be >= 1, got {n}")
    if nbytes <= 0:
        return SwapCost(0.0, tuple(0.0 for _ in range(n)), "none", 0.0)
    shard = nbytes / n
    t_link = host_link_time(shard, ep)
    if not parallel:
        t_one = t_link if ep.host_bandwidth is None else max(t_link, shard / ep.host_bandwidth)
        total = n * t_one
        return SwapCost(total, tuple(t_one for _ in range(n)), "link", nbytes / total)
    cands = {"link": t_link}
    if ep.host_bandwidth:
        cands["host-memory"] = nbytes / ep.host_bandwidth
    if ep.switch_gpus and ep.switch_bandwidth:
        cands["switch"] = min(ep.switch_gpus, n) * shard / ep.switch_bandwidth
    bound = max(cands, key=cands.get)
    t = cands[bound]
    return SwapCost(t, tuple(t for _ in range(n)), bound, nbytes / t)


# --------------------------------------------------------------------------- service


@functools.lru_cache(maxsize=64)
def _table_at(spec_items: tuple, seq: int):
    from suite.api import TransformerSpec, transformer

    spec = dict(spec_items)
    spec.pop("seq", None)
    return transformer(TransformerSpec(seq=max(seq, 1), **spec), seq=seq)


def served_table(workload, seq: int):
    """The layer table of the served model for sequences of *seq* tokens.

    A transformer table is rebuilt at *seq* from its hyperparameters (cached); any other layer
    table is used as given (its per-sample figures).
    """
    spec = getattr(workload, "spec", None)
    if spec:
        items = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in dict(spec).items()))
        return _table_at(items, int(seq))
    return workload


def model_bytes(table) -> float:
    """Bytes of the model's parameters in fp16 (B)."""
    return float(table.params * DTYPE_BYTES)


def _hidden(table) -> float:
    spec = getattr(table, "spec", None)
    if spec and "hidden" in spec:
        return float(spec["hidden"])
    return float(table.layers[0].activation_bytes / DTYPE_BYTES) if table.layers else 0.0


def _blocks(table) -> int:
    spec = getattr(table, "spec", None)
    if spec and "layers" in spec:
        return int(spec["layers"])
    return max(1, len(table.layers))


@dataclass(frozen=True)
class ServiceCost:
    """The service of one batch (s): ``latency`` (arrival at stage 0 to last token),
    ``stage_time`` (one pipeline stage's busy time per batch, compute + TP all-reduces),
    ``compute``, ``tp_comm`` (per stage), ``handoff`` (one PP hand-off)."""

    latency: float
    stage_time: float
    compute: float
    tp_comm: float
    handoff: float


def _forward(table, k: int, tokens: int, tp: int, pp: int, profile, efficiency: float) -> tuple[float, float, float]:
    dev = profile.require_device()
    n = tp * pp
    peak = dev.flops("fp16") if "fp16" in dev.peak_flops else dev.flops("fp32")
    flops = table.fwd_flops * k / n
    nbytes = (model_bytes(table) + k * table.activation_bytes) / n
    compute = roofline_time(flops, nbytes, peak, dev.memory_bandwidth, efficiency)
    act = k * tokens * _hidden(table) * DTYPE_BYTES
    tp_comm = handoff = 0.0
    if (tp > 1 or pp > 1) and not profile.network:
        if dev.type == "cpu":  # threads of one CPU share its memory: nothing crosses a link
            return compute, 0.0, 0.0
        else:
            raise ProfileError(f"profile {profile.name!r}: field network: expected an intra-node level for "
                               f"tp x pp = {n} > 1, got nothing")
    if tp > 1:
        per = collective_time("allreduce", act, Group(ranks_per_node=tp, nodes=1), profile).time
        tp_comm = 2.0 * per * _blocks(table) / pp
    if pp > 1:
        handoff = collective_time("p2p", act, Group(ranks_per_node=2, nodes=1), profile).time
    return compute, tp_comm, handoff


def service_cost(workload, k: int, tp: int, pp: int, profile, *, prompt_tokens: int, output_tokens: int = 1,
                 efficiency: float = DEFAULT_EFFICIENCY) -> ServiceCost:
    """Latency and stage time of one batch of *k* requests (module docstring, Service).

    Parameters
    ----------
    workload : LayerTable
        The served model (a transformer table is rebuilt at the prompt length).
    k : int
        Requests in the batch (>= 1).
    tp, pp : int
        The layout.
    profile : Profile
    prompt_tokens, output_tokens : int
    efficiency : float
        Fraction of the fp16 peak, in (0, 1].
    """
    if k < 1:
        raise ValueError(f"batch must be >= 1, got {k}")
    pre = served_table(workload, prompt_tokens)
    c, a, h = _forward(pre, k, prompt_tokens, tp, pp, profile, efficiency)
    if output_tokens > 1:
        dec = served_table(workload, 1)
        c1, a1, h1 = _forward(dec, k, 1, tp, pp, profile, efficiency)
        steps = output_tokens - 1
        c, a, h = c + steps * c1, a + steps * a1, h + steps * h1
    stage = c + a
    return ServiceCost(pp * stage + (pp - 1) * h, stage, c, a, h)


# --------------------------------------------------------------------------- checks


def _device_ref(profile) -> str:
    if profile.node is not None and profile.node.device:
        return str(profile.node.device)
    return profile.name


def check_fits(profile, workload_name: str, nbytes: float, tp: int, pp: int, max_loaded: int,
               check_memory: bool = True) -> None:
    """The layout fits one node and ``max_loaded`` shards fit one GPU's memory.

    Raises
    ------
    ParameterError
        ``computron: tp x pp = 8 exceeds the 4 GPUs of perlmutter-gpu-node``;
        ``computron: max_loaded 2 x 25.7 GB (opt-13b) exceeds the 40 GB of nvidia-a100-sxm4-40gb``.
    """
    n = tp * pp
    dev = profile.require_device()
    if dev.type == "cpu":  # a CPU-only profile: the shards are copied by threads, one per core
        have, what = int(dev.cores or 1), "core"
    else:
        have, what = profile.devices_per_node, "GPU"
    if n > have:
        raise ParameterError(f"computron: tp x pp = {n} exceeds the {have} {what}{'s' if have != 1 else ''} of "
                             f"{profile.name}")
    if not check_memory:
        return
    shard = nbytes / n
    if max_loaded * shard > dev.memory:
        per = " per GPU" if n > 1 else ""
        raise ParameterError(f"computron: max_loaded {max_loaded} x {shard / 1e9:.1f} GB ({workload_name}{per}) "
                             f"exceeds the {dev.memory / 1e9:.0f} GB of {_device_ref(profile)}")


def layer_table_of(workload):
    """The served model's layer table: the workload itself, or a serving workload's ``model``."""
    if getattr(workload, "kind", "") == "serving":
        from suite_computron.workloads import OPT_PARAMS, cached_opt_table

        if workload.model not in OPT_PARAMS:  # a model is an input of the case only through its own tables
            raise ParameterError(f"computron: workload {workload.name!r}: field model: expected one of "
                                 f"{sorted(OPT_PARAMS)}, got {workload.model!r}")
        return cached_opt_table(workload.model)
    if not hasattr(workload, "layers"):
        raise ParameterError(f"computron: workload {getattr(workload, 'name', workload)!r}: expected a model layer "
                             "table (opt-1.3b, opt-13b) or a serving workload (computron-c00 ... c18)")
    return workload


def settings(scenario) -> dict[str, Any]:
    """Layout, batch and serving settings of a scenario (parameters over the workload's)."""
    p = scenario.params
    wl = scenario.workload
    serving = getattr(wl, "kind", "") == "serving"
    tp, pp = layout(scenario.variant, int(p["tp"]), int(p["pp"]))
    max_loaded = p.get("max_loaded")
    if max_loaded is None:
        max_loaded = int(wl.max_loaded) if serving else 1
    return {
        "tp": tp, "pp": pp, "n": tp * pp, "max_loaded": int(max_loaded), "batch": int(p["batch"]),
        "prompt_tokens": int(p["prompt_tokens"]),
        "output_tokens": int(wl.output_tokens) if serving else 1,
        "efficiency": float(p["efficiency"]), "serving": serving, "copy_bytes": int(p["copy_bytes"]),
    }


# --------------------------------------------------------------------------- evaluate


def _swap_costs(S: float, n: int, ep, parallel: bool, swaps: bool) -> tuple[SwapCost, SwapCost, float]:
    """Load, offload and swap time (s) of S bytes in n shards: offload and load on separate
    streams overlap for the parallel variant (the larger), else add; zero when nothing swaps.
    PCIe is full duplex and symmetric per direction, so the offload costs what the load costs."""
    if not swaps:
        none = SwapCost(0.0, (), "none", 0.0)
        return none, none, 0.0
    load = swap_time(S, n, ep, parallel)
    return load, load, load.time if parallel else 2 * load.time


def _add_swap_metrics(res, load: SwapCost, off: SwapCost, swap: float, copy: SwapCost, link_bandwidth: float) -> None:
    """The swap metrics of :func:`evaluate`: load, offload and swap time, H2D rate, the copy the
    execute fidelity measures, and one host link's nominal bandwidth."""
    for name, value, unit, better in (
            ("load_time", load.time, "s", "lower"), ("offload_time", off.time, "s", "lower"),
            ("swap_time", swap, "s", "lower"), ("h2d_rate", load.rate, "B/s", "higher"),
            ("copy_rate", copy.rate, "B/s", "higher"), ("copy_time", copy.time, "s", "lower"),
            ("link_bandwidth", link_bandwidth, "B/s", "none")):
        res.add(name, value, unit, better)


def evaluate(scenario):
    """Model fidelity: swap and service times of the scenario's layout on its profile.

    Parameters
    ----------
    scenario : suite.Scenario
        ``params``: ``tp``, ``pp``, ``max_loaded`` (default 1, or the serving workload's),
        ``batch``, ``prompt_tokens``, ``efficiency``; ``workload``: a layer table (``opt-13b``)
        or a serving workload (its model is priced).

    Returns
    -------
    suite.Result
        ``load_time``, ``offload_time`` (s), ``swap_time`` (s: offload and load on separate
        streams, so the larger for ``computron``; the sum otherwise), ``h2d_rate`` (B/s, S /
        load_time; 0 for ``resident``), ``copy_rate`` and ``copy_time`` (B/s, s: ``copy_bytes``
        in the same shards, what the execute fidelity measures),
        ``link_bandwidth`` (B/s, one host link's nominal figure), ``shard_bytes``,
        ``model_bytes`` (B), ``shards``, ``service_time``, ``stage_time``, ``compute_time``,
        ``tp_comm_time``, ``pp_comm_time`` (s, batch of ``batch``), ``peak_memory`` (B per GPU,
        ``max_loaded`` shards), ``fits`` (1); artifact ``swap`` (bound per direction).

    Raises
    ------
    suite.errors.ParameterError
        tp x pp larger than the node, or ``max_loaded`` shards larger than a GPU.
    """
    from suite.api import Result

    st = settings(scenario)
    prof = scenario.profile
    table = layer_table_of(scenario.workload)
    S = model_bytes(table)
    tp, pp, n = st["tp"], st["pp"], st["n"]
    _uses, parallel, swaps = VARIANTS[scenario.variant]
    check_fits(prof, table.name, S, tp, pp, st["max_loaded"], check_memory=swaps)
    ep = host_endpoint(prof)
    load, off, swap = _swap_costs(S, n, ep, parallel, swaps)
    svc = service_cost(table, st["batch"], tp, pp, prof, prompt_tokens=st["prompt_tokens"],
                       output_tokens=st["output_tokens"], efficiency=st["efficiency"])
    res = Result()
    copy = swap_time(float(st["copy_bytes"]), n, ep, parallel) if swaps else SwapCost(0.0, (), "none", 0.0)
    _add_swap_metrics(res, load, off, swap, copy, ep.link_bandwidth)
    res.add("shard_bytes", S / n, "B", "none")
    res.add("model_bytes", S, "B", "none")
    res.add("shards", n, "1", "none")
    res.add("service_time", svc.latency, "s", "lower")
    res.add("stage_time", svc.stage_time, "s", "lower")
    res.add("compute_time", svc.compute, "s", "lower")
    res.add("tp_comm_time", svc.tp_comm, "s", "lower")
    res.add("pp_comm_time", svc.handoff * (pp - 1), "s", "lower")
    res.add("peak_memory", st["max_loaded"] * S / n, "B", "lower")
    res.add("fits", 1.0, "1", "none")
    res.artifacts["swap"] = {"bound": load.bound, "endpoint": ep.kind, "tp": tp, "pp": pp,
                             "link_fraction": ep.link_fraction, "host_bandwidth": ep.host_bandwidth}
    if not all(math.isfinite(m.value) for m in res.metrics.values()):  # pragma: no cover - a bug
        raise ValueError("computron model: non-finite metric")
    return res
