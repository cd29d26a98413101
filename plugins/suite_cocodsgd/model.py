"""Cost model of CoCoD-SGD and its baselines: per-round time, time-to-target, speed-up over S-SGD.

One round is k iterations (k local steps of every worker). With ``t_c`` the compute time of one
iteration (forward + backward of the local mini-batch on the slowest worker) and ``t_AR`` the
all-reduce time of the model (or gradient) vector:

=============  ==========================  ==============================================
variant        round time                  why
=============  ==========================  ==============================================
``s-sgd``      ``k (t_c + t_AR)``          all-reduce of gradients after every iteration
``local-sgd``  ``k t_c + t_AR``            k local steps, then a blocking model average
``pipe-sgd``   ``k max(t_c, t_AR)``        gradient all-reduce overlapped with the next
                                           iteration (staleness 1)
``cocod-sgd``  ``max(k t_c, t_AR)``        the previous average's all-reduce overlapped
                                           with k local steps
=============  ==========================  ==============================================

[Shen19, Fig. 1 caption, from a secondary source: S-SGD and Local-SGD run computation and
communication sequentially, Pipe-SGD and CoCoD-SGD in parallel; Local-SGD and CoCoD-SGD
communicate every k iterations]; the round-time formulas follow from that caption.

``t_c = b * F / (eff * peak)`` with F the forward + backward FLOPs per sample of the workload's
layer table (forward x 3; 2 FLOPs per multiply-add) and one efficiency for every model
(:func:`suite.collectives.dataparallel.compute_seconds`). On heterogeneous workers with relative
times per sample ``s_i``, synchronous variants wait for the slowest (``t_c = b max_i s_i t_0``);
CoCoD-SGD's proportional sampling gives every worker ``b_i ~ 1/s_i`` of the same global batch
``K b`` so all finish together: ``t_c = K b t_0 / sum_i(1/s_i)`` [Shen19 §3].
``t_AR``: ring all-reduce alpha-beta over the profile's levels [Patarasuk09]
(:func:`suite.collectives.dataparallel.allreduce_seconds`).

Time to target = iterations-to-target x iteration time (round time / k). Iterations to target:
the parameter ``steps`` for S-SGD and ``steps * steps_ratio`` for the others; ``steps_ratio``
defaults to 1 (an assumption: the supplement's Corollary 1 gives CoCoD-SGD the same
``O(1/sqrt(T sum M_i))`` iteration rate as S-SGD; the paper's measured
iterations-to-accuracy are (not found in the sources)). So the speed-up over S-SGD is
``k (t_c + t_AR) / round(variant) / steps_ratio``.

References
----------
.. [Shen19] S. Shen, L. Xu, J. Liu, X. Liang, Y. Cheng, IJCAI 2019 (arXiv 1906.12043).
.. [Patarasuk09] P. Patarasuk, X. Yuan, JPDC 69(2), 2009.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from suite.api import (LayerTable, Result, Scenario, allreduce_seconds, compute_seconds, model_case,
                       relative_speeds)

__all__ = ["VARIANTS", "round_time", "Times", "times", "evaluate"]

VARIANTS = ("s-sgd", "local-sgd", "pipe-sgd", "cocod-sgd")


def round_time(variant: str, k: int, t_c: float, t_ar: float) -> float:
    """Time of one round of k iterations (s) of *variant* (see the module table).

    Parameters
    ----------
    variant : {"s-sgd", "local-sgd", "pipe-sgd", "cocod-sgd"}
    k : int
        Iterations per round (>= 1).
    t_c, t_ar : float
        Compute time of one iteration and time of one all-reduce (s, >= 0).

    Raises
    ------
    ValueError
        Unknown variant, k < 1 or a negative time.
    """
    if k < 1 or t_c < 0 or t_ar < 0:
        raise ValueError(f"need k >= 1 and times >= 0, got k={k}, t_c={t_c}, t_ar={t_ar}")
    if variant == "s-sgd":
        return k * (t_c + t_ar)
    if variant == "local-sgd":
        return k * t_c + t_ar
    if variant == "pipe-sgd":
        return k * max(t_c, t_ar)
    if variant == "cocod-sgd":
        return max(k * t_c, t_ar)
    raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")


@dataclass(frozen=True)
class Times:
    """Per-iteration inputs of the model: ``t_c`` of the synchronous variants (slowest worker),
    ``t_c_prop`` under proportional sampling, ``t_ar``, the message size and worker count."""

    t_c: float
    t_c_prop: float
    t_ar: float
    nbytes: float
    workers: int
    flops_per_sample: float


def times(workload: LayerTable, profile, workers: int, batch: int, efficiency: float, dtype: str = "fp32",
          hetero: float = 1.0, algorithm: str = "ring", grad_bytes: int = 4) -> Times:
    """Compute and all-reduce times of one iteration (see the module docstring).

    Parameters
    ----------
    workload : LayerTable
        Forward FLOPs per sample and parameter count.
    profile : Profile
    workers : int
    batch : int
        Per-worker mini-batch (samples); the global batch is ``workers * batch``.
    efficiency : float
        Achieved fraction of peak FLOP/s.
    hetero : float
        Slowest / fastest time per sample (1 = homogeneous).
    grad_bytes : int
        Bytes per parameter on the wire (4: fp32).
    """
    F = 3.0 * workload.fwd_flops
    t0 = compute_seconds(profile, F, efficiency, dtype)
    s = relative_speeds(workers, hetero)
    t_c = batch * float(s.max()) * t0
    t_c_prop = workers * batch * t0 / float(np.sum(1.0 / s))
    nbytes = float(workload.params * grad_bytes)
    t_ar = allreduce_seconds(profile, nbytes, workers, algorithm)
    return Times(t_c, t_c_prop, t_ar, nbytes, workers, F)


def evaluate(scenario: Scenario) -> Result:
    """Model fidelity: round and iteration time, time to target and speed-up over S-SGD."""
    wl, prof, K = model_case(scenario, "resnet-18-cifar")
    p = scenario.params
    k = int(p["k"])
    tm = times(wl, prof, K, int(p["batch"]), float(p["efficiency"]), p["dtype"], float(p["hetero"]),
               p["algorithm"])
    v = scenario.variant
    t_c = tm.t_c_prop if v == "cocod-sgd" else tm.t_c
    rt = round_time(v, k, t_c, tm.t_ar)
    rt_base = round_time("s-sgd", k, tm.t_c, tm.t_ar)
    steps = int(p["steps"])
    ratio = 1.0 if v == "s-sgd" else float(p["steps_ratio"])
    ttt = steps * ratio * rt / k
    ttt_base = steps * rt_base / k
    res = Result()
    res.add("round_time", rt, "s", "lower")
    res.add("iteration_time", rt / k, "s", "lower")
    res.add("compute_time", t_c, "s", "none")
    res.add("allreduce_time", tm.t_ar, "s", "none")
    res.add("time_to_target", ttt, "s", "lower")
    res.add("speedup", ttt_base / ttt, "1", "higher")
    res.add("allreduces_per_iteration", 1.0 if v in ("s-sgd", "pipe-sgd") else 1.0 / k, "1", "lower")
    res.add("throughput", K * int(p["batch"]) * k / rt, "samples/s", "higher")
    res.add("workers_used", K, "1", "none")  # the resolved K: workers=None is every device
    res.artifacts["inputs"] = {"workers": K, "k": k, "t_c_sync": tm.t_c, "t_c_proportional": tm.t_c_prop,
                               "t_ar": tm.t_ar, "allreduce_bytes": tm.nbytes,
                               "flops_per_sample": tm.flops_per_sample, "steps_to_target": steps * ratio}
    return res
