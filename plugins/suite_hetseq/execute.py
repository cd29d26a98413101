"""Execute fidelity: HetSeq's synchronous step on simulated heterogeneous ranks with real arrays.

P ranks (:class:`suite.collectives.dataparallel.Workers`: own parameter copies, shards of the
scenario's dataset workload (``digits`` by default), seeded mini-batch streams, a real ring
all-reduce with a traffic ledger) train a softmax classifier
(:class:`suite.collectives.dataparallel.FlatModel`) with plain SGD. Only a dataset workload is
run: a layer table (``bert-base@seq128``, ``resnet-50``) is Skipped, since its numbers would be the
classifier's under the network's name.

* ``hetseq`` [Ding20]: rank r's batch is proportional to its throughput (the profile's device of
  rank r, :func:`suite_hetseq.model.split_batch`); the last ``dummy_ranks`` ranks get a dummy
  batch of 0 samples (HetSeq's ``ignore_grad`` dummy batch: the rank joins the all-reduce but adds
  nothing). Each rank sums its per-sample gradients (over ``update_freq`` sequential
  micro-batches, HetSeq's ``--update-freq`` gradient accumulation), the sums and the sample
  counts travel in ONE all-reduce, and every rank divides by the global count
  (:meth:`Workers.global_gradient`): the gradient of the union of the local batches.
* ``ddp-equal-batch``: equal batches ``B/P``; PyTorch DDP's average of the per-rank mean
  gradients (:meth:`Workers.mean_of_means`), which equals the union's gradient only because the
  batches are equal.

Oracle: single-process SGD on the union of the same mini-batches, with the full-batch gradient
computed here independently of the substrate (per-sample softmax gradients summed in one dense
expression for ``hidden = 0``; :meth:`FlatModel.loss_grad` on the union otherwise):
``oracle_error`` is the largest parameter difference over the run. ``mean_of_means_bias`` shows
what DDP's averaging would have done on the ``hetseq`` split at the first step (relative error
of ``(1/P) sum_r mean_r`` against the union gradient; an empty rank counted as zero, as DDP's
division by the world size does).

The simulated clock advances by ``max_r(b_r s_r t_0) + t_AR`` per step
(:func:`suite.collectives.dataparallel.clock_for`: rank r's relative time per sample
``s_r = peak_0 / peak_r``, the all-reduce of the ``size + 1`` float64 vector over the profile):
``iteration_time`` and ``throughput`` are the classifier's simulated step on the profile, not a
step of the model fidelity's network.

References
----------
.. [Ding20] Y. Ding, N. Botzer, T. Weninger, arXiv 2009.14783, and yifding/hetseq
   (``controller.py``: gradients multiplied by ``world_size / sum of sample sizes`` after DDP's
   average; dummy batches with ``ignore_grad``).
"""

from __future__ import annotations

import numpy as np

from suite.api import (FlatModel, ParameterError, Result, Scenario, Skip, Workers, clock_for, load_problem,
                       require_dataset, require_devices)

__all__ = ["union_gradient", "rank_times", "batches_for", "evaluate"]

_MAX_RANKS = 64


def union_gradient(model: FlatModel, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The single-process full-batch gradient on (X, y) (the oracle).

    ``hidden = 0``: ``[X^T (P - Y) / n + l2 W ; mean(P - Y)]`` with ``P`` the softmax
    probabilities and ``Y`` the one-hot labels, in one dense expression (independent of the
    substrate's batched code); ``hidden > 0``: :meth:`FlatModel.loss_grad` on the whole union.
    """
    if model.hidden > 0:
        return model.loss_grad(theta, X, y)[1]
    d, k = model.d, model.k
    W, b = theta[: d * k].reshape(d, k), theta[d * k:]
    Z = X @ W + b
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    R = P - np.eye(k)[y]
    n = len(y)
    return np.concatenate([(X.T @ R / n + model.l2 * W).ravel(), R.mean(axis=0)])


def rank_times(profile, ranks: int) -> np.ndarray:
    """Relative time per sample of each rank: ``peak_0 / peak_r`` (fp32) from the profile's
    devices (:func:`suite_hetseq.model.rank_devices`); all 1 without a profile."""
    if profile is None or profile.device is None:
        return np.ones(ranks)
    from suite_hetseq.model import rank_devices

    peaks = np.array([d.flops("fp32") for d in rank_devices(profile, ranks)])
    return peaks[0] / peaks


def batches_for(variant: str, total: int, times, dummy_ranks: int = 0) -> np.ndarray:
    """Per-rank batches of one execute run: the model's split (:func:`suite_hetseq.model.split_batch`)
    and, for ``hetseq``, the last *dummy_ranks* ranks on a dummy batch (the batch re-split over
    the others)."""
    from suite_hetseq.model import split_batch

    P = len(times)
    k = int(dummy_ranks) if variant == "hetseq" else 0
    if k >= P:
        raise ParameterError(f"hetseq: parameter 'dummy_ranks': expected fewer than the {P} ranks, got {k}")
    b = split_batch(variant, total, list(times)[: P - k])
    return np.concatenate([b, np.zeros(k, np.int64)])


def evaluate(scenario: Scenario) -> Result:
    """Execute fidelity: train, checking every step against the single-process oracle.

    Reads ``scenario.params`` (``nodes``, ``batch_per_gpu``, ``exec_ranks``, ``dummy_ranks``,
    ``update_freq``, ``steps``, ``lr``, ``hidden``, ``efficiency``), the profile (devices of
    the ranks, network for the clock) and the workload: a :class:`suite.workloads.Dataset` the
    classifier trains on (None: the digits).

    Returns
    -------
    suite.Result
        The common data-parallel metrics (:meth:`Workers.result`: ``final_loss``,
        ``final_accuracy``, ``allreduces``, ``grad_evals``, ``sim_time``, ``bytes_sent``,
        ``bytes_received``) plus ``oracle_error`` (1, largest parameter difference to
        single-process SGD on the union), ``allreduce_error`` (1), ``allreduces_per_step`` (1),
        ``mean_of_means_bias`` (1), ``dummy_ranks`` (1), ``iteration_time`` (s, the classifier's
        simulated step) and ``throughput`` (samples/s, of that step); artifacts ``batches`` and
        ``curve``.

    Raises
    ------
    suite.Skip
        A workload that is not a classification dataset with a local loader (a layer table: the
        model fidelity prices it), more ranks than :data:`_MAX_RANKS` or a profile without a
        network for several ranks.
    """
    wl = require_dataset(scenario.workload, "hetseq execute trains a softmax classifier on a classification "
                                            "dataset workload (e.g. digits)")
    p = scenario.params
    prof = scenario.profile
    K = _ranks(p, prof)
    prob = load_problem(K, "iid", seed=scenario.seed, dataset=wl)
    model = FlatModel(prob.d, prob.classes, int(p["hidden"]))
    s = rank_times(prof if prof is not None and prof.device is not None else None, K)
    b = batches_for(scenario.variant, int(p["batch_per_gpu"]) * K, s, int(p["dummy_ranks"]))
    clock = clock_for(prof, model.flops_per_sample, 8.0 * (model.size + 1), b, s, float(p["efficiency"]))
    w = Workers(prob, model, b, clock, scenario.seed)
    T = int(p["steps"])
    oracle, bias = _train_against_oracle(w, model, prob, scenario.variant, T, float(p["lr"]), int(p["update_freq"]))
    if not w.identical():
        raise AssertionError("hetseq execute: replicas diverged after a synchronous step")
    res = w.result()
    res.add("oracle_error", oracle, "1", "lower")
    res.add("allreduce_error", w.allreduce_error, "1", "lower")
    res.add("allreduces_per_step", w.allreduces / max(T, 1), "1", "none")
    res.add("mean_of_means_bias", bias, "1", "none")
    res.add("dummy_ranks", int(np.sum(b == 0)), "1", "none")
    step = clock.slowest + clock.allreduce
    res.add("iteration_time", step, "s", "lower")
    res.add("throughput", float(b.sum()) / step if step > 0 else 0.0, "samples/s", "higher")
    res.artifacts["batches"] = [int(x) for x in b]
    return res


def _ranks(p, prof) -> int:
    """K: ``exec_ranks``, else ``nodes`` x the profile's devices per node, else 4; Skip when K is
    above :data:`_MAX_RANKS`, needs a network the profile lacks, or exceeds its devices."""
    if p.get("exec_ranks"):
        K = int(p["exec_ranks"])
    elif prof is not None:
        from suite_hetseq.model import nodes_of

        K = nodes_of(p, prof) * prof.devices_per_node
    else:
        K = 4
    if K > _MAX_RANKS:
        raise Skip(f"hetseq execute: {K} ranks > {_MAX_RANKS} (set exec_ranks)")
    if prof is not None and K > prof.devices_per_node and not prof.network:
        raise Skip(f"hetseq execute: profile {prof.name!r} has no network for {K} ranks")
    if prof is not None:
        require_devices(prof, K, "ranks")
    return K


def _train_against_oracle(w: Workers, model: FlatModel, prob, variant: str, T: int, lr: float,
                          v: int) -> tuple[float, float]:
    """T synchronous steps of the variant's gradient rule next to single-process SGD on the union
    of the ranks' mini-batches.

    Returns
    -------
    oracle : float
        Largest |parameter difference| of rank 0 to the single-process reference over the steps.
    bias : float
        ``|mean of per-rank means - union gradient| / |union gradient|`` on the first step's split
        (what DDP's averaging gives on unequal batches).
    """
    K = len(w.params)
    X, y = prob.X_train, prob.y_train
    theta = w.params[0].copy()  # the single-process reference
    oracle, bias = 0.0, float("nan")
    w.record(0)
    for t in range(T):
        idx = [w.minibatch(i) for i in range(K)]
        g_ref = union_gradient(model, theta, X[np.concatenate(idx)], y[np.concatenate(idx)])
        if t == 0:
            bias = _mean_of_means_bias(model, theta, X, y, idx, g_ref)
        g = w.global_gradient(idx=idx, micro=v) if variant == "hetseq" else w.mean_of_means(idx=idx)
        w.params = [w.params[i] - lr * g[i] for i in range(K)]
        theta = theta - lr * g_ref
        oracle = max(oracle, float(np.max(np.abs(w.params[0] - theta))))
        w.advance(w.clock.slowest + w.clock.allreduce)
        w.record(t + 1)
    return oracle, bias


def _mean_of_means_bias(model: FlatModel, theta: np.ndarray, X: np.ndarray, y: np.ndarray,
                        idx: list, g_ref: np.ndarray) -> float:
    """Relative distance of DDP's mean of per-rank mean gradients from the union gradient."""
    means = [union_gradient(model, theta, X[a], y[a]) if len(a) else np.zeros(model.size) for a in idx]
    mom = np.sum(means, axis=0) / len(idx)
    return float(np.linalg.norm(mom - g_ref) / np.linalg.norm(g_ref))
