"""Compute-time primitives: roofline, layer times, host<->device transfer, pipeline schedules.

References
----------
.. [Williams09] S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual
   performance model for multicore architectures", CACM 52(4), 2009:
   attainable FLOP/s = min(peak FLOP/s, operational intensity x memory bandwidth).
.. [Narayanan21] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC 2021, §2.2: 1F1B pipeline bubble fraction (p-1)/m.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import Device, Profile
    from suite.workloads import Layer

__all__ = [
    "roofline_time",
    "attainable_flops",
    "machine_balance",
    "layer_times",
    "transfer_time",
    "pipeline_1f1b_time",
    "pipeline_bubble_fraction",
]


def attainable_flops(intensity: float, peak_flops: float, mem_bandwidth: float) -> float:
    """Roofline [Williams09]: ``min(peak, I * BW)`` in FLOP/s; intensity in FLOP/B."""
    if intensity < 0 or peak_flops <= 0 or mem_bandwidth <= 0:
        raise ValueError("intensity must be >= 0 and peak/bandwidth > 0")
    return min(peak_flops, intensity * mem_bandwidth)


def machine_balance(peak_flops: float, mem_bandwidth: float) -> float:
    """Ridge point of the roofline (FLOP/B): ``peak / bandwidth`` [Williams09]."""
    return peak_flops / mem_bandwidth


def roofline_time(flops: float, bytes_moved: float, peak_flops: float, mem_bandwidth: float,
                  efficiency: float = 1.0) -> float:
    """Time of a kernel bound by compute or memory [Williams09]:

    ``T = max(F / (eff * peak), B / BW)`` (s). ``efficiency`` in (0, 1] scales the compute roof
    (achieved fraction of peak; its source is the caller's to state).
    """
    _check_efficiency(efficiency)
    if flops < 0 or bytes_moved < 0:
        raise ValueError("flops and bytes must be >= 0")
    return _roof(flops, bytes_moved, efficiency * peak_flops, mem_bandwidth)


def _roof(flops: float, bytes_moved: float, compute_roof: float, mem_bandwidth: float) -> float:
    """The roofline, its inputs checked by the caller: ``max(F / compute_roof, B / BW)`` (s)."""
    return max(flops / compute_roof, bytes_moved / mem_bandwidth)


def _check_efficiency(efficiency: float) -> None:
    if not 0 < efficiency <= 1:
        raise ValueError(f"efficiency must be in (0, 1], got {efficiency}")


def layer_times(layers: "list[Layer]", batch: int, device: "Device", dtype: str = "fp32",
                efficiency: float = 1.0, dtype_bytes: int = 4) -> tuple[list[float], list[float]]:
    """Forward and backward time (s) of each layer for a batch, by roofline.

    Forward moves the input and output activations and the weights once; backward moves them
    about twice (data and weight gradients). ``T_fwd = max(F/(eff*peak), bytes/BW)``.

    Returns
    -------
    (fwd, bwd) : lists of float, one per layer, in forward order.
    """
    peak = device.flops(dtype)
    bw = device.memory_bandwidth
    _check_efficiency(efficiency)
    roof = efficiency * peak  # checked once: layer tables reach 25,000 layers
    fwd, bwd = [], []
    for l in layers:
        in_elems = 1
        for d in l.input_shape:
            in_elems *= d
        act_in = in_elems * dtype_bytes * batch
        act_out = l.activation_bytes * batch
        w = l.params * dtype_bytes
        f_fwd, f_bwd = l.fwd_flops * batch, l.bwd_flops * batch
        b_fwd, b_bwd = act_in + act_out + w, 2 * (act_in + act_out) + 2 * w
        if f_fwd < 0 or f_bwd < 0 or b_fwd < 0:
            raise ValueError("flops and bytes must be >= 0")
        fwd.append(_roof(f_fwd, b_fwd, roof, bw))
        bwd.append(_roof(f_bwd, b_bwd, roof, bw))
    return fwd, bwd


def transfer_time(nbytes: float, bandwidth: float, latency: float = 0.0) -> float:
    """Host<->device copy over a link (PCIe/NVLink-C2C): ``latency + m / bandwidth`` (s)."""
    if nbytes < 0 or bandwidth <= 0:
        raise ValueError("bytes must be >= 0 and bandwidth > 0")
    return 0.0 if nbytes == 0 else latency + nbytes / bandwidth


def host_link_time(nbytes: float, profile: "Profile", efficiency: float = 1.0) -> float:
    """One copy of *nbytes* between host memory and one device over the device's host link
    (PCIe, NVLink-C2C): ``latency + m / (efficiency B_link)`` (s), :func:`transfer_time` on
    ``profile.device.host_link`` (the read is recorded, and ``--set device.host_link.bandwidth``
    moves the time).

    The host is not a rank of any network level, so a host copy is priced here rather than by
    :func:`suite.perf.network.collective_time`; copies of several devices at once each hold
    their own link (one ``host_link`` per device).

    Parameters
    ----------
    nbytes : float
        B.
    profile : Profile
        Its device must declare ``host_link``.
    efficiency : float
        Achieved fraction of the link's bandwidth, in (0, 1] (a technique's sourced constant).

    Raises
    ------
    ProfileError
        No device or no ``device.host_link``.
    ValueError
        Negative bytes or an efficiency outside (0, 1].
    """
    from suite.errors import ProfileError

    dev = getattr(profile, "device", None)
    link = getattr(dev, "host_link", None) if dev is not None else None
    if link is None:
        raise ProfileError(f"profile {getattr(profile, 'name', '?')!r}: field device.host_link: expected the "
                           f"host link (PCIe) of the device, got none")
    if not 0.0 < efficiency <= 1.0:
        raise ValueError(f"efficiency must be in (0, 1], got {efficiency}")
    return transfer_time(nbytes, float(link.bandwidth) * efficiency, float(link.latency))


def pipeline_bubble_fraction(stages: int, microbatches: int) -> float:
    """1F1B / GPipe bubble over ideal time [Narayanan21 §2.2]: ``(p - 1) / m``."""
    if stages < 1 or microbatches < 1:
        raise ValueError("stages and micro-batches must be >= 1")
    return (stages - 1) / microbatches


def pipeline_1f1b_time(t_fwd: float, t_bwd: float, stages: int, microbatches: int) -> float:
    """Time of one iteration of a balanced 1F1B pipeline [Narayanan21 §2.2]:

    ``T = (m + p - 1) (t_f + t_b)`` with t_f, t_b the per-micro-batch forward/backward time of
    one stage (s).
    """
    if stages < 1 or microbatches < 1:
        raise ValueError("stages and micro-batches must be >= 1")
    return (microbatches + stages - 1) * (t_fwd + t_bwd)
