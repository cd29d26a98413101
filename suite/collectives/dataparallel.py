"""Simulated data-parallel workers on real arrays, with a simulated wall clock.

The substrate shared by the distributed-SGD techniques (CoCoD-SGD, PALSGD and their baselines
S-SGD, Local SGD, Pipe-SGD, DiLoCo): K workers, each with its own copy of a flat parameter
vector, its own data shard and its own random stream, a relative speed, and collectives that
really move the arrays through :func:`suite.collectives.ring_allreduce` with every message in a
:class:`suite.collectives.Ledger`. A variant is a loop written against this class; it advances
the simulated clock by the compute and all-reduce times of the cost model (:func:`clock_for`),
and the class records loss and accuracy against both the step and the simulated time.

Pieces
------
* :func:`load_problem` -- scikit-learn's digits (through the workload zoo when it has them),
  standardised, a seeded train/test split, and an IID or label-skewed (Dirichlet) split of the
  training set over the workers (:func:`suite.workloads.datasets.partition`).
* :class:`FlatModel` -- multinomial logistic regression (``hidden=0``) or a one-hidden-layer
  ReLU MLP on a flat parameter vector, with exact gradients (checked against finite differences
  in tests/test_dataparallel.py).
* :func:`proportional_batches` -- CoCoD-SGD's proportional sampling: batch sizes proportional to
  each worker's speed, so all finish a local step at the same time [Shen19, §3].
* :func:`allreduce_seconds` / :func:`compute_seconds` / :func:`clock_for` -- the per-step
  compute time from FLOPs and peak (roofline compute roof, one stated efficiency) and the
  all-reduce time over the profile's levels (:func:`suite.perf.collective_time`).
* :class:`Workers` -- the simulated workers.

References
----------
.. [Shen19] S. Shen, L. Xu, J. Liu, X. Liang, Y. Cheng, "Faster Distributed Deep Net Training:
   Computation and Communication Decoupled Stochastic Gradient Descent", IJCAI 2019
   (arXiv 1906.12043), and the authors' supplementary material (weighted average, eq. 9).
.. [Patarasuk09] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009: ring all-reduce ``2(p-1) alpha + 2(p-1)/p m beta``.
.. [Williams09] S. Williams et al., "Roofline", CACM 52(4), 2009 (compute roof ``F/(eff peak)``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from suite.collectives import Ledger, ring_allreduce
from suite.errors import ParameterError, ProfileError

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import Profile

__all__ = [
    "Problem",
    "load_problem",
    "FlatModel",
    "proportional_batches",
    "relative_speeds",
    "allreduce_seconds",
    "compute_seconds",
    "Clock",
    "clock_for",
    "Workers",
]


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Problem:
    """A classification problem split over workers.

    Attributes
    ----------
    X_train : ndarray, shape (n_train, d)
        Standardised with the training mean and standard deviation.
    y_train : ndarray of int64, shape (n_train,)
    X_test, y_test : ndarrays, shapes (n_test, d) and (n_test,)
    shards : tuple of ndarray of int64
        Indices into the training set, one array per worker, disjoint, covering it.
    classes : int
    name : str
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    shards: tuple
    classes: int
    name: str = "digits"

    @property
    def d(self) -> int:
        return int(self.X_train.shape[1])

    @property
    def workers(self) -> int:
        return len(self.shards)


def _load_xy(dataset=None) -> tuple[np.ndarray, np.ndarray, str]:
    from suite.workloads import Dataset

    if isinstance(dataset, Dataset):
        X, y = dataset.load()
        return np.asarray(X, float), np.asarray(y), dataset.name
    try:
        from suite.workloads import get_workload

        wl = get_workload("digits")
        X, y = wl.load()
    except Exception:  # the zoo may be unavailable; the data are the same file
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
    return np.asarray(X, float), np.asarray(y), "digits"


def load_problem(workers: int, split: str = "iid", alpha: float = 0.5, seed: int = 0,
                 test_fraction: float = 0.2, dataset=None) -> Problem:
    """Digits (or *dataset*), standardised, split into train/test and over *workers*.

    Parameters
    ----------
    workers : int
        Number of shards K (>= 1).
    split : {"iid", "dirichlet"}
        ``iid``: a random permutation cut into near-equal parts; ``dirichlet``: label-skewed
        non-IID split, per-class proportions ``Dir(alpha)`` (Hsu et al. 2019), every worker
        keeping at least 8 samples.
    alpha : float
        Dirichlet concentration (> 0); small = strong skew.
    seed : int
        Seeds the train/test split and the partition.
    test_fraction : float
        Held-out fraction in (0, 1).
    dataset : suite.workloads.Dataset, optional
        Another local dataset (default: scikit-learn's digits, 1797 x 64, 10 classes).

    Returns
    -------
    Problem

    Raises
    ------
    ParameterError
        Unknown split, ``workers`` outside [1, training samples] or a fraction outside (0, 1).
    """
    if workers < 1:
        raise ParameterError(f"load_problem: workers must be >= 1, got {workers}")
    if split not in ("iid", "dirichlet"):
        raise ParameterError(f"load_problem: split must be 'iid' or 'dirichlet', got {split!r}")
    if not 0 < test_fraction < 1:
        raise ParameterError(f"load_problem: test_fraction must be in (0, 1), got {test_fraction}")
    from suite.workloads.datasets import partition

    X, y, name = _load_xy(dataset)
    _, y = np.unique(y, return_inverse=True)
    y = y.astype(np.int64)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    n_test = max(1, int(round(test_fraction * len(y))))
    test, train = perm[:n_test], perm[n_test:]
    if workers > len(train):
        raise ParameterError(f"load_problem: workers must be <= {len(train)} (training samples of {name}), "
                             f"got {workers}")
    mu = X[train].mean(axis=0)
    sd = X[train].std(axis=0)
    sd[sd == 0] = 1.0
    Xs = (X - mu) / sd
    parts = partition(y[train], workers, scheme=split, alpha=alpha, seed=seed,
                      min_size=min(8, len(train) // workers))
    return Problem(Xs[train], y[train], Xs[test], y[test], tuple(np.asarray(p, np.int64) for p in parts),
                   int(y.max() + 1), name)


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class FlatModel:
    """Softmax classifier on a flat parameter vector.

    ``hidden = 0``: multinomial logistic regression, ``theta = [W (d, k), b (k)]``;
    ``hidden = h``: ``softmax(relu(X W1 + b1) W2 + b2)``, ``theta = [W1, b1, W2, b2]`` flattened
    in that order. Loss: mean cross-entropy plus ``l2/2 ||W||^2`` (weights only).
    """

    d: int
    k: int
    hidden: int = 0
    l2: float = 0.0

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        if self.hidden == 0:
            return [(self.d, self.k), (self.k,)]
        return [(self.d, self.hidden), (self.hidden,), (self.hidden, self.k), (self.k,)]

    @property
    def size(self) -> int:
        return int(sum(math.prod(s) for s in self.shapes))

    @property
    def flops_per_sample(self) -> float:
        """Forward + backward FLOPs per sample: 3 x forward, forward = 2 x MACs (workload convention)."""
        macs = self.d * self.k if self.hidden == 0 else self.d * self.hidden + self.hidden * self.k
        return 3.0 * 2.0 * macs

    def init(self, rng: np.random.Generator) -> np.ndarray:
        """He-normal weights (zero for logistic regression), zero biases."""
        parts = []
        for s in self.shapes:
            if len(s) == 2 and self.hidden > 0:
                parts.append(rng.normal(0.0, math.sqrt(2.0 / s[0]), size=s).ravel())
            else:
                parts.append(np.zeros(math.prod(s)))
        return np.concatenate(parts)

    def unpack(self, theta: np.ndarray) -> list[np.ndarray]:
        out, o = [], 0
        for s in self.shapes:
            n = math.prod(s)
            out.append(theta[o:o + n].reshape(s))
            o += n
        return out

    def logits(self, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
        p = self.unpack(theta)
        if self.hidden == 0:
            return X @ p[0] + p[1]
        h = np.maximum(X @ p[0] + p[1], 0.0)
        return h @ p[2] + p[3]

    def _reg(self, theta: np.ndarray) -> float:
        if self.l2 == 0:
            return 0.0
        return 0.5 * self.l2 * sum(float(np.sum(w * w)) for w in self.unpack(theta)[::2])

    def loss_acc(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """(mean cross-entropy + L2 term, accuracy) on (X, y)."""
        z = self.logits(theta, X)
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return (float(-logp[np.arange(len(y)), y].mean()) + self._reg(theta),
                float((z.argmax(axis=1) == y).mean()))

    def loss_grad(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        """Loss and its exact gradient (flat, same layout as theta) on the batch (X, y)."""
        p = self.unpack(theta)
        n = len(y)
        if self.hidden == 0:
            z = X @ p[0] + p[1]
        else:
            a = X @ p[0] + p[1]
            h = np.maximum(a, 0.0)
            z = h @ p[2] + p[3]
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - z[np.arange(n), y])) + self._reg(theta)
        delta = e / s
        delta[np.arange(n), y] -= 1.0
        delta /= n
        if self.hidden == 0:
            gW = X.T @ delta + self.l2 * p[0]
            return loss, np.concatenate([gW.ravel(), delta.sum(axis=0)])
        gW2 = h.T @ delta + self.l2 * p[2]
        gb2 = delta.sum(axis=0)
        dh = (delta @ p[2].T) * (a > 0)
        gW1 = X.T @ dh + self.l2 * p[0]
        return loss, np.concatenate([gW1.ravel(), dh.sum(axis=0), gW2.ravel(), gb2])


# --------------------------------------------------------------------------- speeds and batches


def relative_speeds(workers: int, hetero: float) -> np.ndarray:
    """Relative time per sample of each worker: evenly spaced from 1 (fastest) to *hetero*.

    ``hetero = 1`` is a homogeneous cluster. Shape (workers,).
    """
    if hetero < 1:
        raise ParameterError(f"hetero must be >= 1 (slowest / fastest time per sample), got {hetero}")
    if workers == 1:
        return np.ones(1)
    return np.linspace(1.0, float(hetero), workers)


def proportional_batches(total: int, speeds: Sequence[float]) -> np.ndarray:
    """CoCoD-SGD's proportional sampling [Shen19 §3]: batch ``b_i`` proportional to worker i's
    computation capability ``1/s_i``, summing to *total*, each >= 1 (largest remainders).

    Parameters
    ----------
    total : int
        Global mini-batch (sum of the workers' batches), >= number of workers.
    speeds : sequence of float
        Relative time per sample of each worker (> 0).

    Returns
    -------
    ndarray of int64, shape (workers,)
    """
    s = np.asarray(speeds, float)
    if np.any(s <= 0):
        raise ParameterError("speeds must be > 0")
    K = len(s)
    if total < K:
        raise ParameterError(f"global batch {total} must be >= workers {K}")
    cap = 1.0 / s
    ideal = total * cap / cap.sum()
    b = np.maximum(np.floor(ideal).astype(np.int64), 1)
    while b.sum() > total:
        b[np.argmax(b)] -= 1
    rem = ideal - b
    for i in np.argsort(-rem, kind="stable"):
        if b.sum() >= total:
            break
        b[i] += 1
    return b


# --------------------------------------------------------------------------- cost model


def _levels(profile: "Profile"):
    """(inner, outer) network levels of a profile; either may be None."""
    levels = list(profile.network)
    if not levels:
        return None, None
    if len(levels) >= 2:
        return levels[0], levels[-1]
    if profile.kind == "cluster":
        return (levels[0] if profile.devices_per_node > 1 else None), levels[0]
    return levels[0], None


def allreduce_seconds(profile: "Profile", nbytes: float, workers: int, algorithm: str = "ring") -> float:
    """Time of one all-reduce of *nbytes* over *workers* devices of *profile* (s).

    Workers fill nodes in order (``devices_per_node`` each, :func:`suite.perf.group_of`) and
    the all-reduce is priced by :func:`suite.perf.collective_time` over every level the group
    crosses: ``ring``, one flat ring through all workers (NCCL's ring; each step as slow as its
    slowest hop, the inter-node hops over the node's NICs) [Patarasuk09]; ``hierarchical``:
    reduce-scatter in the node, all-reduce of each shard across nodes, all-gather in the node;
    ``auto``: the fastest priced. Both include the reduction term.

    Parameters
    ----------
    profile : Profile
    nbytes : float
        Message size m (B).
    workers : int
        p >= 1; 1 costs nothing.
    algorithm : {"ring", "hierarchical", "auto"}

    Raises
    ------
    ProfileError
        More than one worker but no network level that connects them.
    """
    from suite.perf import collective_time, group_of

    if workers <= 1 or nbytes <= 0:
        return 0.0
    if algorithm not in ("ring", "hierarchical", "auto"):
        raise ParameterError(f"all-reduce algorithm must be 'ring', 'hierarchical' or 'auto', got {algorithm!r}")
    inner, outer = _levels(profile)
    dpn = profile.devices_per_node
    if workers > dpn and outer is None:
        raise ProfileError(f"profile {profile.name!r}: {workers} workers need more than one node "
                           f"({dpn} devices per node) but the profile has no inter-node network level")
    if inner is None and outer is None:
        raise ProfileError(f"profile {profile.name!r}: {workers} workers but no [[network]] level")
    return collective_time("allreduce", nbytes, group_of(profile, workers), profile, algorithm).time


def compute_seconds(profile: "Profile", flops: float, efficiency: float, dtype: str = "fp32") -> float:
    """Compute time of *flops* FLOPs on the profile's device: ``F / (eff * peak[dtype])`` (s),
    the compute roof of the roofline [Williams09] (:func:`suite.perf.roofline_time` with no
    memory term: a training step of the models used here is compute-bound)."""
    from suite.perf import roofline_time

    dev = profile.require_device()
    return roofline_time(flops, 0.0, dev.flops(dtype), 1.0, efficiency)


@dataclass(frozen=True)
class Clock:
    """Simulated step and all-reduce times.

    Attributes
    ----------
    step : ndarray, shape (K,)
        Seconds one local step (forward + backward + update on its batch) takes on worker i.
    allreduce : float
        Seconds of one all-reduce of the model (or gradient) vector.
    """

    step: np.ndarray
    allreduce: float

    @property
    def slowest(self) -> float:
        return float(np.max(self.step))


def clock_for(profile: "Profile | None", flops_per_sample: float, nbytes: float, batches: Sequence[int],
              speeds: Sequence[float], efficiency: float = 0.5, dtype: str = "fp32",
              algorithm: str = "ring") -> Clock:
    """The :class:`Clock` of K workers: worker i's step takes
    ``b_i * s_i * flops_per_sample / (eff * peak)`` (s_i its relative time per sample, 1 = the
    profile's device) and one all-reduce of *nbytes* takes :func:`allreduce_seconds`.

    With ``profile=None`` the clock counts in units: a step of one sample on the fastest worker
    is 1e-3 s and an all-reduce 1e-3 s per worker hop (for runs without a profile).
    """
    b = np.asarray(batches, float)
    s = np.asarray(speeds, float)
    K = len(b)
    if profile is None:
        return Clock(step=b * s * 1e-3, allreduce=0.0 if K == 1 else 2e-3 * (K - 1))
    t_sample = compute_seconds(profile, flops_per_sample, efficiency, dtype)
    return Clock(step=b * s * t_sample, allreduce=allreduce_seconds(profile, nbytes, K, algorithm))


# --------------------------------------------------------------------------- workers


@dataclass
class Workers:
    """K simulated data-parallel workers holding real parameter vectors.

    Parameters
    ----------
    problem : Problem
        Data and the shard of each worker.
    model : FlatModel
    batches : sequence of int
        Local mini-batch of each worker.
    clock : Clock
        Step and all-reduce times the variants advance ``time`` by.
    seed : int
        Worker i draws its mini-batches from ``default_rng([seed, i])``; the initial model is
        drawn from ``default_rng(seed)`` and is the same on every worker.

    Attributes
    ----------
    params : list of ndarray
        Worker i's parameters.
    weights : ndarray
        ``b_i / sum(b)``: the averaging weights [Shen19, eq. 10 context].
    time : float
        Simulated wall-clock (s).
    grad_evals, allreduces : int
        Gradient evaluations (one per worker per local step) and all-reduce calls.
    allreduce_error : float
        Largest ``|ring result - dense weighted sum|`` over every all-reduce (the oracle check).
    ledger : Ledger
        Every message of every all-reduce.
    curve : dict of lists
        ``step``, ``time``, ``loss`` (training loss of the weighted-average model over the
        whole training set), ``accuracy`` (its test accuracy), appended by :meth:`record`.
    """

    problem: Problem
    model: FlatModel
    batches: Sequence[int]
    clock: Clock
    seed: int = 0
    params: list = field(default_factory=list)
    time: float = 0.0
    grad_evals: int = 0
    allreduces: int = 0
    ledger: Ledger = field(default_factory=Ledger)
    allreduce_error: float = 0.0
    curve: dict = field(default_factory=lambda: {"step": [], "time": [], "loss": [], "accuracy": []})

    def __post_init__(self):
        K = self.problem.workers
        self.batches = np.asarray(self.batches, dtype=np.int64)
        if len(self.batches) != K:
            raise ParameterError(f"Workers: {len(self.batches)} batch sizes for {K} workers")
        if np.any(self.batches < 1):
            raise ParameterError("Workers: every batch size must be >= 1")
        theta0 = self.model.init(np.random.default_rng(self.seed))
        self.params = [theta0.copy() for _ in range(K)]
        self.weights = self.batches / self.batches.sum()
        self._rngs = [np.random.default_rng([self.seed, i]) for i in range(K)]

    @property
    def K(self) -> int:
        return self.problem.workers

    # -- data and gradients
    def minibatch(self, i: int) -> np.ndarray:
        """Indices of worker i's next mini-batch: ``b_i`` draws from its shard (without
        replacement when the shard is large enough)."""
        shard = self.problem.shards[i]
        b = int(self.batches[i])
        return self._rngs[i].choice(shard, size=b, replace=b > len(shard))

    def gradient(self, i: int, theta: np.ndarray | None = None, idx: np.ndarray | None = None) -> np.ndarray:
        """Worker i's stochastic gradient at *theta* (default: its own parameters) on its next
        mini-batch (or on *idx*). Counts one gradient evaluation."""
        theta = self.params[i] if theta is None else theta
        idx = self.minibatch(i) if idx is None else idx
        self.grad_evals += 1
        _, g = self.model.loss_grad(theta, self.problem.X_train[idx], self.problem.y_train[idx])
        return g

    # -- collectives
    def allreduce_mean(self, arrays: Sequence[np.ndarray], weights: Sequence[float] | None = None,
                       tag: str = "allreduce") -> list[np.ndarray]:
        """Weighted mean ``sum_i w_i a_i`` of one array per worker by a real ring all-reduce of
        ``w_i a_i`` (default weights: :attr:`weights`). Returns each worker's copy; counts one
        all-reduce. Does not advance the clock (the variant knows what overlaps)."""
        w = self.weights if weights is None else np.asarray(weights, float)
        scaled = [w[i] * np.asarray(a, float) for i, a in enumerate(arrays)]
        out = ring_allreduce(scaled, self.ledger, tag)
        dense = np.sum(scaled, axis=0)  # oracle: the dense weighted sum
        self.allreduce_error = max(self.allreduce_error, float(np.max(np.abs(out[0] - dense), initial=0.0)))
        self.allreduces += 1
        return out

    def average(self) -> np.ndarray:
        """The weighted average of the workers' parameters (an observer's view; no traffic)."""
        return np.sum([w * p for w, p in zip(self.weights, self.params)], axis=0)

    # -- clock and curves
    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"cannot advance the clock by {seconds} s")
        self.time += float(seconds)

    def evaluate(self, theta: np.ndarray | None = None) -> tuple[float, float]:
        """(training loss on the whole training set, test accuracy) of *theta* (default: the
        weighted average)."""
        theta = self.average() if theta is None else theta
        loss, _ = self.model.loss_acc(theta, self.problem.X_train, self.problem.y_train)
        _, acc = self.model.loss_acc(theta, self.problem.X_test, self.problem.y_test)
        return loss, acc

    def record(self, step: int, theta: np.ndarray | None = None) -> None:
        loss, acc = self.evaluate(theta)
        self.curve["step"].append(int(step))
        self.curve["time"].append(float(self.time))
        self.curve["loss"].append(loss)
        self.curve["accuracy"].append(acc)

    def result(self):
        """The metrics every data-parallel technique reports after training (a
        :class:`suite.technique.Result` to which a plugin adds its own): final_loss,
        final_accuracy, allreduces, grad_evals, sim_time (s), bytes_sent / bytes_received (B,
        from the ledger), and the loss/accuracy curve and step times as artifacts."""
        from suite.technique import Result

        loss, acc = self.evaluate()
        res = Result()
        res.add("final_loss", loss, "1", "lower")
        res.add("final_accuracy", acc, "1", "higher")
        res.add("allreduces", self.allreduces, "1", "lower")
        res.add("grad_evals", self.grad_evals, "1", "none")
        res.add("sim_time", self.time, "s", "lower")
        res.add("bytes_sent", float(sum(self.ledger.sent_by().values())), "B", "lower")
        res.add("bytes_received", float(sum(self.ledger.received_by().values())), "B", "lower")
        res.artifacts["curve"] = self.curve
        res.artifacts["step_times"] = [float(x) for x in self.clock.step]
        return res

    def identical(self) -> bool:
        """Whether every replica is bit-identical to worker 0's."""
        return all(np.array_equal(p, self.params[0]) for p in self.params[1:])
