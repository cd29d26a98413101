"""DFLOP's execute fidelity: the scheduler on real per-sample cost lists, checked against brute
force, then a measured mini training step on simulated data-parallel ranks.

1. Sample shapes from the mix's seeded generator; per-sample cost vectors (vision, LLM) from the
   FLOP formulas of :mod:`suite_dflop.model` (SigLIP-6B, Qwen2.5-7B); equal-count, LPT and the
   scheduler (LPT / time-limited ILP) partition them into ``dp x m`` bins. Oracle: the first
   :data:`BRUTE_N` samples into :data:`BRUTE_K` bins by enumerating all assignments
   (:func:`suite_dflop.schedule.brute_force`); the ILP must equal it.
2. A tiny encoder + decoder with random weights (no pretrained weights offline, hence no accuracy
   claims): encoder ``H = tanh(X We)`` on each tile's patches, projector ``E = H Wp``, decoder
   ``Y = tanh([E; T] Wd)`` over the image and text tokens, loss ``0.5 sum Y^2``, gradients by hand.
   Token counts are the samples' scaled by :data:`TOKEN_SCALE`. Each bin is one micro-batch,
   bin j on rank j mod dp; a rank's time is the measured sum over its bins (BLAS pinned to one
   thread). Oracle: the summed gradient of every schedule equals the dense full-batch gradient,
   computed in one pass over all samples' tokens stacked.
"""

from __future__ import annotations

import time

import numpy as np

from suite_dflop import model as M
from suite_dflop import schedule as sched
from suite_dflop.workloads import MixWorkload, Samples, generate

__all__ = ["MiniModel", "evaluate", "BRUTE_N", "BRUTE_K", "MAX_BATCH", "TOKEN_SCALE"]

BRUTE_N, BRUTE_K = 9, 3  #: brute-force oracle size (3^9 = 19,683 assignments)
MAX_BATCH = 64  #: execute-fidelity global batch cap (CPU time)
TOKEN_SCALE = 64  #: one mini-model token per this many real tokens (at least one)
PATCHES_PER_TILE = 4  #: mini-model patches per encoder tile
TIMING_THREADS = 1


def _pinned(n: int):
    """Every BLAS/OpenMP pool at *n* threads while timing (:func:`suite.perf.blas_threads`)."""
    from suite.api import blas_threads

    return blas_threads(n)


class MiniModel:
    """Random-weight encoder (d_in -> dv), projector (dv -> dl), decoder (dl -> dl); float64."""

    def __init__(self, rng: np.random.Generator, d_in: int = 12, dv: int = 16, dl: int = 24):
        self.We = rng.standard_normal((d_in, dv)) / np.sqrt(d_in)
        self.Wp = rng.standard_normal((dv, dl)) / np.sqrt(dv)
        self.Wd = rng.standard_normal((dl, dl)) / np.sqrt(dl)
        self.d_in, self.dl = d_in, dl

    def inputs(self, s: Samples, rng: np.random.Generator):
        """Per-sample (patches (P_i, d_in), text embeddings (T_i, dl)) of the scaled shapes."""
        out = []
        for i in range(len(s)):
            p = int(s.tiles[i]) * PATCHES_PER_TILE
            t = max(1, int(s.text[i]) // TOKEN_SCALE)
            out.append((rng.standard_normal((p, self.d_in)), rng.standard_normal((t, self.dl))))
        return out

    def grads(self, X: np.ndarray, T: np.ndarray):
        """Loss and gradients (dWe, dWp, dWd) on stacked patches X and text tokens T."""
        H = np.tanh(X @ self.We)
        E = H @ self.Wp
        Z = np.vstack([E, T])
        Y = np.tanh(Z @ self.Wd)
        loss = 0.5 * float(np.sum(Y * Y))
        dA = Y * (1 - Y * Y)  # dL/d(Z Wd)
        dWd = Z.T @ dA
        dZ = dA @ self.Wd.T
        dE = dZ[: E.shape[0]]
        dWp = H.T @ dE
        dH = dE @ self.Wp.T
        dWe = X.T @ (dH * (1 - H * H))
        return loss, (dWe, dWp, dWd)


def _stack(data, idx, d_in, dl):
    X = np.vstack([data[i][0] for i in idx] + [np.zeros((0, d_in))])
    T = np.vstack([data[i][1] for i in idx] + [np.zeros((0, dl))])
    return X, T


def evaluate(scenario):
    """Execute fidelity (see the module doc).

    Reads ``params`` ``global_batch`` (capped at :data:`MAX_BATCH`), ``microbatches``, ``dp``
    (``exec_dp``), ``ilp_time_limit``, ``skew``; ``workload`` (a mix); ``seed``; ``variant``
    (which partition is timed: equal-count for the baselines and ``data-aware-plan``, LPT for
    ``dflop-lpt``, the scheduler for ``dflop``).

    Returns
    -------
    suite.Result
        ``makespan_equal`` / ``makespan_lpt`` / ``makespan_sched`` and ``bound`` (s, modelled bin
        costs), ``brute_force_gap`` (scheduler minus brute force on the oracle subproblem, s: 0),
        ``measured_imbalance`` (max / mean rank time of the variant's partition, median of
        repeats), ``measured_imbalance_equal`` (the same for equal-count), ``max_rel_error``
        (summed gradients vs the dense full-batch gradient, worst over schedules), ``lpt_optimal``.

    Raises
    ------
    suite.Skip
        Not a dataset mix.
    suite.api.OracleMismatch
        A gradient differs from the oracle, or the scheduler misses the brute-force optimum (a bug).
    """
    from suite.api import Skip

    wl = scenario.workload
    if not isinstance(wl, MixWorkload):
        raise Skip(f"dflop execute needs a dflop dataset mix workload, got {getattr(wl, 'name', None)!r}")
    p = scenario.params
    tl = float(p["ilp_time_limit"])
    if not tl >= 0:
        raise ValueError(f"dflop: parameter 'ilp_time_limit': expected >= 0 s, got {tl:g}")
    n = min(int(p["global_batch"]), MAX_BATCH)
    dp, m = int(p["exec_dp"]), int(p["microbatches"])
    sched.check_bins(n, dp * m, dp, m)
    seed = int(scenario.seed)
    s = generate(wl, n, seed, float(p["skew"]))
    d = _cost_vectors(scenario, s)
    parts, brute, gap = _schedules(d, dp * m, tl)
    chosen = {"dflop": parts["sched"], "dflop-lpt": parts["lpt"]}.get(scenario.variant, parts["equal"])
    worst, imb = _measured_step(s, seed, dp, {**parts, "chosen": chosen}, int(p.get("repeats", 2)))
    return _result(parts, brute, gap, worst, imb, n, dp * m)


def _cost_vectors(scenario, s: Samples) -> np.ndarray:
    """Per-sample (vision, LLM) times (2, n) of a split plan with one GPU per module at the
    model's achieved rate: the scenario's device (bf16 peak x efficiency, as model fidelity reads
    them), else an A100's 312 TFLOP/s bf16 peak x :data:`suite_dflop.model.DEFAULT_EFFICIENCY`."""
    f = M.features(s)
    if scenario.profile is not None:
        hw = M.hardware(scenario.profile, 1, scenario.params.get("efficiency"))
        thr = hw.eff * hw.peak
    else:
        thr = M.DEFAULT_EFFICIENCY * 312e12
    return np.stack([(f.x[:, 0] * M.SIGLIP.layers + f.x[:, 1]) / thr, (f.x[:, 2] * M.QWEN.layers + f.x[:, 3]) / thr])


def _schedules(d: np.ndarray, k: int, tl: float):
    """Equal-count, LPT and the scheduler into *k* bins, and the brute-force oracle on the first
    :data:`BRUTE_N` samples: ``({"equal", "lpt", "sched"}, brute-force makespan, scheduler gap)``.

    Raises
    ------
    OracleMismatch
        The scheduler misses the brute-force optimum, or a makespan is below its lower bound.
    """
    from suite.api import OracleMismatch

    parts = {"equal": sched.equal_count(d, k), "lpt": sched.lpt(d, k), "sched": sched.schedule(d, k, tl)}
    sub = d[:, :BRUTE_N]
    brute = sched.brute_force(sub, BRUTE_K)
    sub_sched = sched.schedule(sub, BRUTE_K, max(tl, 1.0))
    gap = sub_sched.makespan - brute
    if gap > 1e-9 * brute:
        raise OracleMismatch(f"dflop execute: scheduler {sub_sched.makespan} s above brute force {brute} s")
    for x in parts.values():
        if x.makespan < x.bound * (1 - 1e-12):
            raise OracleMismatch(f"dflop execute: {x.method} makespan below the lower bound")
    return parts, brute, gap


def _measured_step(s: Samples, seed: int, dp: int, parts: dict, repeats: int):
    """The mini model's step under each partition: the worst relative error of the summed
    gradients against the dense full-batch gradient (the checked first pass) and the measured
    imbalance (max / mean rank time, median of *repeats*) per partition.

    Raises
    ------
    OracleMismatch
        A summed gradient differs from the dense one.
    """
    from suite.api import OracleMismatch

    rng = np.random.default_rng(seed + 7)
    mm = MiniModel(rng)
    data = mm.inputs(s, rng)
    _, oracle = mm.grads(*_stack(data, range(len(s)), mm.d_in, mm.dl))
    worst, imb = 0.0, {}
    with _pinned(TIMING_THREADS):
        for label in ("equal", "chosen", "lpt", "sched"):
            meds = []
            for rep in range(repeats + 1):
                rank_t, total = _one_pass(mm, data, parts[label], dp, oracle)
                if rep == 0:  # the checked pass doubles as warm-up
                    worst = max([worst] + [float(np.max(np.abs(a - o)) / max(np.max(np.abs(o)), 1e-300))
                                           for a, o in zip(total, oracle)])
                else:
                    meds.append(rank_t.max() / rank_t.mean())
            imb[label] = float(np.median(meds)) if meds else 1.0
    if worst > 1e-9:
        raise OracleMismatch(f"dflop execute: summed gradient differs from the dense gradient by {worst:.2e}")
    return worst, imb


def _one_pass(mm: MiniModel, data, part, dp: int, oracle):
    """Every bin of *part* as one micro-batch on rank ``j mod dp``: per-rank measured time and the
    summed gradients."""
    rank_t = np.zeros(dp)
    total = [np.zeros_like(g) for g in oracle]
    for j, b in enumerate(part.bins):
        Xb, Tb = _stack(data, b, mm.d_in, mm.dl)
        t0 = time.perf_counter()
        _, g = mm.grads(Xb, Tb)
        rank_t[j % dp] += time.perf_counter() - t0
        for a, gg in zip(total, g):
            a += gg
    return rank_t, total


def _result(parts: dict, brute: float, gap: float, worst: float, imb: dict, n: int, k: int):
    from suite.api import Result

    eq, lp, sc = parts["equal"], parts["lpt"], parts["sched"]
    res = Result()
    res.add("makespan_equal", eq.makespan, "s", "lower")
    res.add("makespan_lpt", lp.makespan, "s", "lower")
    res.add("makespan_sched", sc.makespan, "s", "lower")
    res.add("bound", sc.bound, "s", "none")
    res.add("brute_force_gap", max(gap, 0.0), "s", "lower")
    res.add("measured_imbalance", imb["chosen"], "1", "lower")
    res.add("measured_imbalance_equal", imb["equal"], "1", "lower")
    res.add("max_rel_error", worst, "1", "lower")
    res.add("lpt_optimal", 1.0 if sc.method == "lpt-optimal" else 0.0, "1", "none")
    res.artifacts["schedule"] = {"method": sc.method, "ilp_status": sc.ilp_status, "bins": k, "samples": n,
                                 "brute_force": brute, "threads": TIMING_THREADS}
    return res
