"""Execute fidelity: CoCoD-SGD and its baselines on K simulated workers with real arrays.

Each variant is a loop over :class:`suite.collectives.dataparallel.Workers` (own parameter
copies, data shards, mini-batch streams; averages by a real ring all-reduce with a ledger),
trained on the scenario's dataset workload (``digits`` by default; a layer table is Skipped), IID
or Dirichlet non-IID split, with plain SGD. The simulated clock advances by the times of :mod:`suite_cocodsgd.model`'s table, with ``t_c`` per worker
from the profile (``b_i s_i F / (eff peak)``) and ``t_AR`` the ring all-reduce of the vector:

* ``s-sgd``: every iteration each worker's gradient at the common model on its batch; the
  gradients' weighted mean (weights ``b_i / sum b``, i.e. the mean over the global batch) by
  all-reduce; one SGD step. Clock ``+= max_i t_c,i + t_AR``.
* ``local-sgd``: local SGD steps; every k iterations a blocking weighted average of the models.
  Clock ``+= max_i t_c,i`` per iteration, ``+ t_AR`` per average.
* ``pipe-sgd``: the all-reduce of iteration t's gradient runs during iteration t+1; iteration t+1
  applies it (staleness 1; with one worker there is nothing to hide and no staleness). Clock
  ``+= max(max_i t_c,i, t_AR)`` per iteration, plus the last all-reduce.
* ``cocod-sgd`` [Shen19; supplement eq. (9)]: at the start of a round each
  worker stores its model ``a_i = x_i`` and launches the all-reduce of ``w_i a_i``; meanwhile it
  runs k local SGD steps; then ``x_i <- xbar + (x_i - a_i)``: the (one round stale) weighted
  average plus its own local progress. Batches by proportional sampling (``b_i ~ 1/s_i``).
  Clock ``+= max(max_i k t_c,i, t_AR)`` per round.

The oracle checks: every all-reduce against the dense weighted sum (``allreduce_error``);
S-SGD against single-process SGD on the union of the same mini-batches; CoCoD-SGD's merge
identity ``sum_i w_i x_i' = xbar + sum_i w_i Delta_i`` after every merge (``merge_error``).

References
----------
.. [Shen19] S. Shen et al., IJCAI 2019 (arXiv 1906.12043) and its supplementary material.
.. [Li18] Y. Li et al., "Pipe-SGD: A Decentralized Pipelined SGD Framework for Distributed Deep
   Net Training", NeurIPS 2018 (one-step-stale gradients, communication hidden behind compute).
.. [Lin20] T. Lin et al., "Don't Use Large Mini-Batches, Use Local SGD", ICLR 2020 (Local SGD).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from suite.api import (Clock, FlatModel, Workers, clock_for, load_problem, proportional_batches,
                       relative_speeds)
from suite.api import ParameterError, Result, Scenario, Skip, require_dataset

__all__ = ["Setup", "setup", "run", "run_dense_sgd", "evaluate"]


@dataclass(frozen=True)
class Setup:
    """Everything a run needs (built by :func:`setup` from a scenario's parameters)."""

    variant: str
    workers: Workers
    steps: int
    k: int
    lr: float


def setup(variant: str, params, profile=None, seed: int = 0, dataset=None, clock_workload=None) -> Setup:
    """Build the workers of one execute run.

    Parameters
    ----------
    variant : str
    params : mapping
        ``workers, steps, batch, lr, k, hetero, split, alpha, hidden, efficiency, dtype,
        clock_workload`` (see the technique's parameters).
    profile : Profile or None
        Gives the clock; None counts in the units of :func:`clock_for`.
    seed : int
    dataset : suite.workloads.Dataset, optional
        Data other than the digits, as :func:`suite.api.require_dataset` passes it (the one check
        that it is a dataset with a loader is there, in :func:`evaluate`).
    """
    K = int(params["workers"] or 4)
    prob = load_problem(K, params["split"], float(params["alpha"]), seed, dataset=dataset)
    model = FlatModel(prob.d, prob.classes, int(params["hidden"]))
    speeds = relative_speeds(K, float(params["hetero"]))
    b = int(params["batch"])
    batches = proportional_batches(K * b, speeds) if variant == "cocod-sgd" else np.full(K, b)
    F, nbytes = model.flops_per_sample, 8.0 * model.size
    cw = params.get("clock_workload") or ""
    if cw:  # time the steps as if each were a step of that model (same FLOPs/bytes ratio per sample)
        from suite.api import LayerTable

        wl = clock_workload  # resolved by the runner: scenario.input("clock_workload")
        if wl is None:
            raise ParameterError(f"cocodsgd: parameter 'clock_workload': expected the workload {cw!r} resolved by "
                                 f"the runner (scenario.input('clock_workload')), got only its name")
        if not isinstance(wl, LayerTable):
            raise Skip(f"clock_workload {cw!r} is not a layer table")
        F, nbytes = 3.0 * wl.fwd_flops, float(wl.params * 4)
    if profile is not None and K > 1 and not profile.network:
        raise Skip(f"profile {profile.name!r} has no network for {K} workers")
    clock = clock_for(profile, F, nbytes, batches, speeds, float(params["efficiency"]), params["dtype"],
                      params.get("algorithm", "ring"))
    w = Workers(prob, model, batches, clock, seed)
    return Setup(variant, w, int(params["steps"]), int(params["k"]), float(params["lr"]))


def run(s: Setup) -> dict:
    """Run *s* in place; returns the run's extra figures (``merge_error``, ``oracle_error``)."""
    steps = {"s-sgd": _run_s_sgd, "local-sgd": _run_local_sgd, "pipe-sgd": _run_pipe_sgd,
             "cocod-sgd": _run_cocod_sgd}.get(s.variant)
    if steps is None:
        raise Skip(f"unknown cocod-sgd variant {s.variant!r}")
    extra = {"merge_error": 0.0}
    s.workers.record(0)
    steps(s, extra)
    return extra


def _sgd_all(w, lr: float, grads) -> None:
    for i in range(w.K):
        w.params[i] = w.params[i] - lr * grads[i]


def _run_s_sgd(s: Setup, extra: dict) -> None:
    """Synchronous SGD: every step all-reduces the gradients, then every worker applies them."""
    w, c = s.workers, s.workers.clock
    for t in range(s.steps):
        grads = [w.gradient(i) for i in range(w.K)]
        _sgd_all(w, s.lr, w.allreduce_mean(grads, tag="grad"))
        w.advance(c.slowest + c.allreduce)
        w.record(t + 1)


def _run_local_sgd(s: Setup, extra: dict) -> None:
    """Local SGD: local steps, and every k steps a blocking all-reduce of the models."""
    w, c = s.workers, s.workers.clock
    for t in range(s.steps):
        _sgd_all(w, s.lr, [w.gradient(i) for i in range(w.K)])
        w.advance(c.slowest)
        if (t + 1) % s.k == 0:
            w.params = w.allreduce_mean(w.params, tag="model")
            w.advance(c.allreduce)
        w.record(t + 1)


def _run_pipe_sgd(s: Setup, extra: dict) -> None:
    """Pipe-SGD: each step's gradient all-reduce overlaps the next step's compute; the update uses
    the gradient one step stale."""
    w, c = s.workers, s.workers.clock
    pending = None
    for t in range(s.steps):
        grads = [w.gradient(i) for i in range(w.K)]
        if w.K == 1:  # nothing to overlap: plain SGD
            w.params[0] = w.params[0] - s.lr * grads[0]
            w.advance(c.slowest)
        else:
            if pending is not None:
                _sgd_all(w, s.lr, pending)
            pending = w.allreduce_mean(grads, tag="grad")
            w.advance(max(c.slowest, c.allreduce))
        w.record(t + 1)
    if pending is not None:  # drain: apply the last gradient once its all-reduce ends
        _sgd_all(w, s.lr, pending)
        w.advance(c.allreduce)
        w.record(s.steps)


def _run_cocod_sgd(s: Setup, extra: dict) -> None:
    """CoCoD-SGD: the all-reduce of the round's anchors runs during the round's k local steps;
    at the round's end each worker adds its local progress to the averaged anchor (checked
    against the weighted average: ``merge_error``)."""
    w, c, T, k = s.workers, s.workers.clock, s.steps, s.k
    t = 0
    while t < T:
        steps = min(k, T - t)
        anchors = [p.copy() for p in w.params]
        for j in range(steps):
            _sgd_all(w, s.lr, [w.gradient(i) for i in range(w.K)])
            w.advance(c.slowest)
            if j < steps - 1:
                w.record(t + j + 1)
        t += steps
        if steps == k:  # a complete round: the all-reduce launched at its start has finished
            xbar = w.allreduce_mean(anchors, tag="model")
            deltas = [w.params[i] - anchors[i] for i in range(w.K)]
            w.params = [xbar[i] + deltas[i] for i in range(w.K)]
            lhs = w.average()
            rhs = xbar[0] + np.sum([w.weights[i] * deltas[i] for i in range(w.K)], axis=0)
            extra["merge_error"] = max(extra["merge_error"], float(np.max(np.abs(lhs - rhs))))
            w.advance(max(0.0, c.allreduce - k * c.slowest))  # round = max(k t_c, t_AR)
        w.record(t)


def run_dense_sgd(s: Setup) -> np.ndarray:
    """Oracle for ``s-sgd``: single-process SGD on the concatenation of the same mini-batches
    (a fresh :class:`Workers` with the same seed draws the same indices)."""
    w = s.workers
    theta = w.params[0].copy()
    for _ in range(s.steps):
        idx = np.concatenate([w.minibatch(i) for i in range(w.K)])
        _, g = w.model.loss_grad(theta, w.problem.X_train[idx], w.problem.y_train[idx])
        theta = theta - s.lr * g
    return theta


#: what execute runs, as its Skip line names it (the workload is the data, never the network)
RUNS = ("cocod-sgd execute trains a softmax classifier on a classification dataset workload (e.g. digits); "
        "--param clock_workload=<layer table> times its steps as that network's")


def evaluate(scenario: Scenario) -> Result:
    """Execute fidelity: train with the scenario's variant on the scenario's dataset workload;
    metrics and curves.

    Raises
    ------
    suite.Skip
        A workload that is not a classification dataset with a local loader (a layer table such
        as ``resnet-18-cifar``: its numbers would be the classifier's under the network's name;
        ``clock_workload`` times the steps as that network's), or a profile without a network
        for several workers.
    """
    p = scenario.params
    ds = require_dataset(scenario.workload, RUNS)
    s = setup(scenario.variant, p, scenario.profile, scenario.seed, ds, scenario.input("clock_workload"))
    extra = run(s)
    w = s.workers
    res = w.result()
    oracle = w.allreduce_error
    if scenario.variant == "s-sgd":
        ref = run_dense_sgd(setup("s-sgd", p, scenario.profile, scenario.seed, ds, scenario.input("clock_workload")))
        oracle = max(oracle, float(np.max(np.abs(w.params[0] - ref))))
    if scenario.variant == "cocod-sgd":
        oracle = max(oracle, extra["merge_error"])
    res.add("oracle_error", oracle, "1", "lower")
    res.artifacts["batches"] = [int(b) for b in w.batches]
    res.artifacts["allreduce_time"] = w.clock.allreduce
    return res
