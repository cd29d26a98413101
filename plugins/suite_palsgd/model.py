"""Cost model of PALSGD and its baselines: per-step time, time to target, time saved over DDP.

Per optimizer step (one micro-batch of ``batch`` samples, ``grad_accum`` times, per worker):

* compute ``T_c = batch * grad_accum * 3F / (eff * peak[dtype])``, F the layer table's forward
  FLOPs per sample (sequence), backward = 2 x forward (compute roof of the roofline);
* all-reduce ``T_ar``: ring all-reduce of the fp32 gradient / model (4 bytes per parameter) over the
  profile's levels (:func:`suite.collectives.dataparallel.allreduce_seconds`, [Patarasuk09]);
* pseudo-synchronization ``T_ps = 3 * 4P / mem_bw`` (read x_i and x̄, write x_i; memory-bound),
  [Naganuma25, Algorithm 1; authors' code].

Per-step times after the warm-up (Algorithm 1 and the authors' code):

============  =======================================  ============================================
variant       step time                                why
============  =======================================  ============================================
``s-sgd``     ``T_c + (1 - overlap) T_ar``             DDP: gradient all-reduce every step
``local-sgd`` ``T_c + T_ar / H``                       model average every H steps
``diloco``    ``T_c + T_ar / H``                       outer Nesterov every H steps (its update is
                                                       an elementwise op, neglected)
``palsgd``    ``(1-p) T_c + p T_ps + T_ar / H``        a fraction p of steps are pseudo-syncs
                                                       without forward/backward [authors' code]
============  =======================================  ============================================

The first ``warmup`` steps of the local variants are DDP steps [authors' code:
``local_sgd_start_iter``]. Time to target = the step times summed over ``target_steps *
steps_ratio`` steps (``steps_ratio = 1`` for DDP). ``steps_ratio`` defaults to 1: an assumption
(the paper's steps or epochs to the target are not stated in what could be read); with it, PALSGD's
saving comes from the pseudo-sync steps that skip compute and from the all-reduces it avoids.
``time_saving = 1 - T_variant / T_DDP`` is how we read "X% faster than DDP".

References
----------
.. [Naganuma25] H. Naganuma et al., "Pseudo-Asynchronous Local SGD: Robust and Efficient
   Data-Parallel Training", TMLR 2025 (arXiv 2504.18454); authors' code
   Hiroki11x/Pseudo-Asynchronous-LocalSGD @ 2c37c48 ([CODE]).
.. [Douillard23] A. Douillard et al., "DiLoCo: Distributed Low-Communication Training of Language
   Models", arXiv 2311.08455 (inner AdamW, outer Nesterov every H steps).
.. [Patarasuk09] P. Patarasuk, X. Yuan, JPDC 69(2), 2009 (ring all-reduce).
"""

from __future__ import annotations

from dataclasses import dataclass

from suite.api import LayerTable, Result, Scenario, allreduce_seconds, compute_seconds, model_case

__all__ = ["VARIANTS", "peak_dtype", "Times", "times", "step_time", "total_time", "allreduce_count", "evaluate"]

VARIANTS = ("s-sgd", "local-sgd", "diloco", "palsgd")


def peak_dtype(device, dtype: str) -> str:
    """*dtype* when the device lists a peak for it, else the first of bf16 -> fp16 -> fp32 it has
    (mixed precision falls back to fp16 on devices without bf16, and to fp32 on devices without
    16-bit tensor cores). The dtype used is reported in the result's ``inputs`` artifact."""
    for d in (dtype, "bf16", "fp16", "fp32"):
        if d in device.peak_flops:
            return d
    return dtype  # let Device.flops raise its one-line error


@dataclass(frozen=True)
class Times:
    """``t_c`` (compute of one step), ``t_ar`` (one all-reduce), ``t_ps`` (one pseudo-sync), s."""

    t_c: float
    t_ar: float
    t_ps: float
    nbytes: float


def times(workload: LayerTable, profile, workers: int, batch: int, grad_accum: int, efficiency: float,
          dtype: str = "bf16", algorithm: str = "ring") -> Times:
    """Compute, all-reduce and pseudo-sync time of one step (see the module docstring).

    Parameters
    ----------
    workload : LayerTable
    profile : Profile
    workers : int
    batch, grad_accum : int
        Micro-batch per worker (samples or sequences) and micro-batches per step.
    efficiency : float
        Achieved fraction of the peak FLOP/s of *dtype*.
    """
    F = 3.0 * workload.fwd_flops * batch * grad_accum
    t_c = compute_seconds(profile, F, efficiency, dtype)
    nbytes = 4.0 * workload.params
    t_ar = allreduce_seconds(profile, nbytes, workers, algorithm)
    t_ps = 3.0 * nbytes / profile.require_device().memory_bandwidth
    return Times(t_c, t_ar, t_ps, nbytes)


def step_time(variant: str, tm: Times, H: int, p: float, overlap: float = 0.0) -> float:
    """Time of one step after the warm-up (s); see the module table.

    Raises
    ------
    ValueError
        Unknown variant.
    """
    if variant == "s-sgd":
        return tm.t_c + (1.0 - overlap) * tm.t_ar
    if variant in ("local-sgd", "diloco"):
        return tm.t_c + tm.t_ar / H
    if variant == "palsgd":
        return (1.0 - p) * tm.t_c + p * tm.t_ps + tm.t_ar / H
    raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")


def total_time(variant: str, tm: Times, steps: float, H: int, p: float, warmup: int, overlap: float = 0.0) -> float:
    """Time of *steps* steps: ``min(warmup, steps)`` DDP steps, the rest at :func:`step_time`."""
    ddp = step_time("s-sgd", tm, H, p, overlap)
    if variant == "s-sgd":
        return steps * ddp
    w = min(float(warmup), steps)
    return w * ddp + (steps - w) * step_time(variant, tm, H, p, overlap)


def allreduce_count(variant: str, steps: int, H: int, warmup: int) -> int:
    """All-reduces in *steps* steps: every step for DDP; ``warmup + floor((steps - warmup)/H)``
    for the local variants (issue 11's count)."""
    if variant == "s-sgd":
        return steps
    w = min(warmup, steps)
    return w + (steps - w) // H


def evaluate(scenario: Scenario) -> Result:
    """Model fidelity: step time, time to target, speed-up and time saved over DDP."""
    wl, prof, K = model_case(scenario, "resnet-50")
    q = scenario.params
    dtype = peak_dtype(prof.require_device(), q["dtype"])
    tm = times(wl, prof, K, int(q["batch"]), int(q["grad_accum"]), float(q["efficiency"]), dtype,
               q["algorithm"])
    v = scenario.variant
    H, p, warm, ov = int(q["H"]), float(q["p"]), int(q["warmup"]), float(q["overlap"])
    p_eff = p if v == "palsgd" else 0.0
    steps = int(q["target_steps"])
    n = steps * (1.0 if v == "s-sgd" else float(q["steps_ratio"]))
    ttt = total_time(v, tm, n, H, p_eff, warm, ov)
    base = total_time("s-sgd", tm, steps, H, 0.0, warm, ov)
    res = Result()
    res.add("step_time", step_time(v, tm, H, p_eff, ov), "s", "lower")
    res.add("compute_time", tm.t_c, "s", "none")
    res.add("allreduce_time", tm.t_ar, "s", "none")
    res.add("pseudo_sync_time", tm.t_ps, "s", "none")
    res.add("comm_fraction_ddp", (1 - ov) * tm.t_ar / (tm.t_c + (1 - ov) * tm.t_ar) if tm.t_c + tm.t_ar > 0 else 0.0,
            "1", "none")
    res.add("time_to_target", ttt, "s", "lower")
    res.add("speedup", base / ttt, "1", "higher")
    res.add("time_saving", 1.0 - ttt / base, "1", "higher")
    res.add("allreduces", allreduce_count(v, int(round(n)), H, warm), "1", "lower")
    w = min(warm, n) if v != "s-sgd" else n
    res.add("grad_evals", K * (w + (1.0 - p_eff) * (n - w)), "1", "none")
    res.add("ddp_grad_evals", K * steps, "1", "none")  # S-SGD's at the same target: the saving nulls' base
    res.add("workers_used", K, "1", "none")  # the resolved K: workers=None is every device
    res.artifacts["inputs"] = {"dtype": dtype, "workers": K, "H": H, "p": p_eff, "warmup": warm, "steps": n,
                               "t_c": tm.t_c, "t_ar": tm.t_ar, "t_ps": tm.t_ps, "allreduce_bytes": tm.nbytes}
    return res
