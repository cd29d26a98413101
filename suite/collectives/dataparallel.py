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
* :func:`virtual_node_split` -- a global batch cut into V virtual nodes and handed out to the
  workers, so many virtual nodes per worker (VirtualFlow [Or22]).

Unequal batches, dummy batches, the global-count gradient and virtual nodes
--------------------------------------------------------------------------
Synchronous data parallelism over heterogeneous devices (HetSeq [Ding20], VirtualFlow [Or22])
needs three things the equal-batch loops above do not:

* **Unequal local batches, including 0.** ``Workers(batches=...)`` takes any non-negative
  ``b_i`` with ``sum(b) >= 1``. A worker with ``b_i = 0`` holds a *dummy batch*: it takes part
  in every collective (it sends and receives its share of the ring) but contributes no samples:
  :meth:`Workers.minibatch` gives it an empty index array, :meth:`Workers.gradient_sum` a zero
  vector and a count of 0, and its averaging weight ``b_i / sum(b)`` is 0.
* **The gradient of the union.** :meth:`Workers.global_gradient` is the step's gradient as the
  single process on the union of the local batches would compute it:
  ``g = (sum_i sum_{j in B_i} grad l_j) / (sum_i |B_i|)``, the sum of per-sample gradients over
  the GLOBAL sample count (HetSeq's normalisation by the all-reduced sample count, [Ding20]).
  Each worker all-reduces its *sum* of per-sample gradients with its sample count appended as
  one more element, so the step costs ONE real ring all-reduce of ``size + 1`` floats. The
  biased alternative, DDP's mean of per-rank means ``(1/K) sum_i mean_{j in B_i} grad l_j``
  (an empty rank counted as a zero gradient), is :meth:`Workers.mean_of_means`; the two agree
  when every ``b_i`` is equal. (The existing :meth:`Workers.allreduce_mean` with the default
  weights ``b_i / sum(b)`` of per-rank mean gradients equals the union gradient too, up to
  rounding, but cannot hold an empty rank's undefined mean.)
* **Virtual-node gradient accumulation.** Passing ``micro = v`` (one int, or one per worker)
  makes a worker process its batch as v sequential micro-batches (``numpy.array_split`` of its
  indices; a micro-batch may be empty), summing their per-sample gradient sums before the one
  all-reduce [Or22, §3]; or ``idx`` may hand a worker its micro-batches explicitly, as
  :func:`virtual_node_split` does. Accumulation changes the evaluation order only: the result
  equals the single pass up to rounding (about 1e-15 relative in float64).
  :attr:`Workers.micro_batches` counts the non-empty micro-batches processed,
  :attr:`Workers.samples` the samples.
* **Resizing.** :meth:`Workers.resize` changes the number of workers between steps (elastic
  training, [Or22]): the replicas must be identical (a synchronous step just ended); the new
  workers start from that model, the shards are re-split IID, the clock, ledger and counters
  carry on.

References
----------
.. [Shen19] S. Shen, L. Xu, J. Liu, X. Liang, Y. Cheng, "Faster Distributed Deep Net Training:
   Computation and Communication Decoupled Stochastic Gradient Descent", IJCAI 2019
   (arXiv 1906.12043), and the authors' supplementary material (weighted average, eq. 9).
.. [Patarasuk09] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009: ring all-reduce ``2(p-1) alpha + 2(p-1)/p m beta``.
.. [Williams09] S. Williams et al., "Roofline", CACM 52(4), 2009 (compute roof ``F/(eff peak)``).
.. [Ding20] Y. Ding, N. Botzer, T. Weninger, "HetSeq: Distributed GPU Training on Heterogeneous
   Infrastructure", arXiv 2009.14783, 2020 (gradients summed and divided by the all-reduced
   global sample count, so unequal local batches give the union's gradient).
.. [Or22] A. Or, H. Zhang, M. J. Freedman, "VirtualFlow: Decoupling Deep Learning Models from
   the Underlying Hardware", MLSys 2022 (virtual nodes processed sequentially on a device,
   gradients accumulated before one synchronisation).
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
    "virtual_node_split",
    "reshard",
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
    from suite.workloads.datasets import load_sklearn  # what the zoo's "digits" loads: no lookup by name

    X, y = load_sklearn("digits")
    return np.asarray(X, float), np.asarray(y), "digits"


def load_problem(workers: int, split: str = "iid", alpha: float = 0.5, seed: int = 0,
                 test_fraction: float = 0.2, dataset=None, shards: int = 2) -> Problem:
    """Digits (or *dataset*), standardised, split into train/test and over *workers*.

    Parameters
    ----------
    workers : int
        Number of shards K (>= 1).
    split : {"iid", "dirichlet", "pathological"}
        ``iid``: a random permutation cut into near-equal parts; ``dirichlet``: label-skewed
        non-IID split, per-class proportions ``Dir(alpha)`` (Hsu et al. 2019), every worker
        keeping at least 8 samples; ``pathological``: the training samples sorted by label, cut
        into ``workers * shards`` shards, ``shards`` random ones per worker (McMahan et al. 2017,
        Sec. 3; :func:`suite.workloads.datasets.pathological`).
    alpha : float
        Dirichlet concentration (> 0); small = strong skew.
    seed : int
        Seeds the train/test split and the partition.
    test_fraction : float
        Held-out fraction in (0, 1).
    dataset : suite.workloads.Dataset, optional
        Another local dataset (default: scikit-learn's digits, 1797 x 64, 10 classes).
    shards : int
        Shards per worker of the ``pathological`` split (>= 1).

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
    if split not in ("iid", "dirichlet", "pathological"):
        raise ParameterError(f"load_problem: split must be 'iid', 'dirichlet' or 'pathological', got {split!r}")
    if split == "pathological" and shards < 1:
        raise ParameterError(f"load_problem: shards must be >= 1, got {shards}")
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
    parts = partition(y[train], workers, scheme=split, alpha=alpha, seed=seed, shards_per_worker=shards,
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

    def loss_grad(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray,
                  reduction: str = "mean") -> tuple[float, np.ndarray]:
        """Loss and its exact gradient (flat, same layout as theta) on the batch (X, y).

        ``reduction="mean"`` (default): the mean per-sample loss ``l_j = CE_j + l2/2 ||W||^2``
        and its gradient; ``"sum"``: their sums over the batch, ``sum_j l_j`` and
        ``sum_j grad l_j`` (so the L2 term is counted once per sample). A sum over an empty
        batch is ``(0.0, zeros)``; a mean over one raises :class:`ParameterError`.
        """
        if reduction not in ("mean", "sum"):
            raise ParameterError(f"FlatModel.loss_grad: reduction must be 'mean' or 'sum', got {reduction!r}")
        n = len(y)
        if n == 0:
            if reduction == "sum":
                return 0.0, np.zeros(self.size)
            raise ParameterError("FlatModel.loss_grad: the mean over an empty batch is undefined")
        p = self.unpack(theta)
        if self.hidden == 0:
            z = X @ p[0] + p[1]
        else:
            a = X @ p[0] + p[1]
            h = np.maximum(a, 0.0)
            z = h @ p[2] + p[3]
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        ce = np.log(s[:, 0]) - z[np.arange(n), y]
        delta = e / s
        delta[np.arange(n), y] -= 1.0
        if reduction == "mean":
            loss = float(np.mean(ce)) + self._reg(theta)
            delta /= n
            r = self.l2
        else:
            loss = float(np.sum(ce)) + n * self._reg(theta)
            r = n * self.l2
        if self.hidden == 0:
            gW = X.T @ delta + r * p[0]
            return loss, np.concatenate([gW.ravel(), delta.sum(axis=0)])
        gW2 = h.T @ delta + r * p[2]
        gb2 = delta.sum(axis=0)
        dh = (delta @ p[2].T) * (a > 0)
        gW1 = X.T @ dh + r * p[0]
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


def proportional_batches(total: int, speeds: Sequence[float], *, minimum: int = 1,
                         caps: Sequence[int] | None = None) -> np.ndarray:
    """CoCoD-SGD's proportional sampling [Shen19 §3]: batch ``b_i`` proportional to worker i's
    computation capability ``1/s_i``, summing to *total*, each >= *minimum* (largest
    remainders); with *caps*, each ``b_i <= caps[i]`` (HetSeq's batch proportional to
    throughput, capped by device memory [Ding20]): the shares of capped workers are fixed at
    their cap and the rest of the batch is shared out again in proportion (water filling).

    Parameters
    ----------
    total : int
        Global mini-batch (sum of the workers' batches), >= ``minimum * workers``.
    speeds : sequence of float
        Relative time per sample of each worker (> 0).
    minimum : int, keyword-only
        Smallest batch a worker gets (default 1; 0 allows a dummy batch).
    caps : sequence of int, optional, keyword-only
        Largest batch of each worker (samples that fit its memory), each >= *minimum*, summing
        to >= *total*.

    Returns
    -------
    ndarray of int64, shape (workers,)

    Raises
    ------
    ParameterError
        A speed <= 0, *total* below ``minimum * workers`` or above ``sum(caps)``, a cap below
        *minimum*, or *caps* of the wrong length.
    """
    s = np.asarray(speeds, float)
    if np.any(s <= 0):
        raise ParameterError("speeds must be > 0")
    K = len(s)
    if minimum < 0:
        raise ParameterError(f"proportional_batches: minimum must be >= 0, got {minimum}")
    if total < minimum * K:
        raise ParameterError(f"global batch {total} must be >= workers {K}" if minimum == 1 else
                             f"global batch {total} must be >= minimum {minimum} x workers {K}")
    cap = 1.0 / s
    ideal = total * cap / cap.sum()
    hi = None
    if caps is not None:
        hi = np.asarray(caps, dtype=np.int64)
        if hi.shape != (K,):
            raise ParameterError(f"proportional_batches: caps: expected {K} values, got {hi.size}")
        if np.any(hi < minimum):
            raise ParameterError(f"proportional_batches: caps: expected every cap >= minimum {minimum}, "
                                 f"got {hi.tolist()}")
        if total > hi.sum():
            raise ParameterError(f"proportional_batches: global batch {total} exceeds the sum of the caps "
                                 f"({int(hi.sum())})")
        fixed = np.zeros(K, bool)
        while True:  # water filling: fix the capped shares, share the rest again
            over = ~fixed & (ideal > hi)
            if not over.any():
                break
            fixed |= over
            left = total - hi[fixed].sum()
            ideal = np.where(fixed, hi, left * cap / cap[~fixed].sum() if (~fixed).any() else 0.0)
    b = np.maximum(np.floor(ideal).astype(np.int64), minimum)
    while b.sum() > total:
        b[np.argmax(b)] -= 1
    rem = ideal - b
    while b.sum() < total:
        for i in np.argsort(-rem, kind="stable"):
            if b.sum() >= total:
                break
            if hi is None or b[i] < hi[i]:
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
        Local mini-batch of each worker, each >= 0 (0: a dummy batch that contributes no
        samples), summing to >= 1.
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
        Gradient evaluations (one per worker per local step; one per non-empty micro-batch
        under :meth:`gradient_sum`; none for a dummy batch) and all-reduce calls.
    samples, micro_batches : int
        Per-sample gradients computed, and non-empty (micro-)batches processed by
        :meth:`gradient_sum`.
    resizes : int
        Calls of :meth:`resize`.
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
    samples: int = 0
    micro_batches: int = 0
    resizes: int = 0

    def __post_init__(self):
        K = self.problem.workers
        self._set_batches(self.batches, K)
        theta0 = self.model.init(np.random.default_rng(self.seed))
        self.params = [theta0.copy() for _ in range(K)]
        self._rngs = [np.random.default_rng([self.seed, i]) for i in range(K)]

    def _set_batches(self, batches, K: int) -> None:
        b = np.asarray(batches, dtype=np.int64)
        if b.ndim != 1 or len(b) != K:
            raise ParameterError(f"Workers: {b.size} batch sizes for {K} workers")
        if np.any(b < 0):
            raise ParameterError(f"Workers: batches: expected every batch size >= 0 (0 = dummy batch), "
                                 f"got {b.tolist()}")
        if b.sum() < 1:
            raise ParameterError("Workers: batches: expected at least one sample in total, got all 0")
        self.batches = b
        self.weights = b / b.sum()

    @property
    def K(self) -> int:
        return self.problem.workers

    # -- data and gradients
    def minibatch(self, i: int) -> np.ndarray:
        """Indices of worker i's next mini-batch: ``b_i`` draws from its shard (without
        replacement when the shard is large enough); an empty int64 array for a dummy batch
        (``b_i = 0``, which draws nothing from the worker's stream)."""
        b = int(self.batches[i])
        if b == 0:
            return np.empty(0, np.int64)
        shard = self.problem.shards[i]
        return self._rngs[i].choice(shard, size=b, replace=b > len(shard))

    def gradient(self, i: int, theta: np.ndarray | None = None, idx: np.ndarray | None = None) -> np.ndarray:
        """Worker i's stochastic gradient (the mean over its batch) at *theta* (default: its own
        parameters) on its next mini-batch (or on *idx*). Counts one gradient evaluation; an
        empty batch gives a zero vector and counts none."""
        theta = self.params[i] if theta is None else theta
        idx = self.minibatch(i) if idx is None else idx
        if len(idx) == 0:
            return np.zeros(self.model.size)
        self.grad_evals += 1
        _, g = self.model.loss_grad(theta, self.problem.X_train[idx], self.problem.y_train[idx])
        return g

    def gradient_sum(self, i: int, theta: np.ndarray | None = None, idx=None,
                     micro: int = 1) -> tuple[np.ndarray, int]:
        """Worker i's SUM of per-sample gradients on its batch, accumulated over micro-batches.

        Parameters
        ----------
        i : int
            Worker.
        theta : ndarray, shape (model.size,), optional
            Where the gradient is taken (default: worker i's parameters).
        idx : ndarray of int, or sequence of ndarray of int, optional
            The batch (default: :meth:`minibatch`); a sequence of arrays is taken as the
            micro-batches themselves (e.g. from :func:`virtual_node_split`) and *micro* is then
            ignored.
        micro : int
            v >= 1: the batch is processed as v sequential micro-batches
            (``numpy.array_split``, sizes within one sample; some are empty when v > b) whose
            gradient sums are accumulated (virtual nodes [Or22]; gradient accumulation).

        Returns
        -------
        (ndarray, int)
            ``sum_{j in batch} grad l_j`` (shape (model.size,); zeros for an empty batch) and
            the batch's sample count.

        Raises
        ------
        ParameterError
            ``micro < 1``.
        """
        theta = self.params[i] if theta is None else theta
        idx = self.minibatch(i) if idx is None else idx
        if isinstance(idx, np.ndarray) and idx.ndim == 1:
            if int(micro) < 1:
                raise ParameterError(f"Workers.gradient_sum: micro: expected an integer >= 1, got {micro}")
            parts = np.array_split(idx, int(micro))
        else:
            parts = [np.asarray(a, np.int64) for a in idx]
        acc = np.zeros(self.model.size)
        n = 0
        for part in parts:
            if len(part) == 0:
                continue
            _, g = self.model.loss_grad(theta, self.problem.X_train[part], self.problem.y_train[part], "sum")
            acc += g
            n += len(part)
            self.grad_evals += 1
            self.micro_batches += 1
        self.samples += n
        return acc, n

    def global_gradient(self, thetas: Sequence[np.ndarray] | None = None, idx=None, micro=1,
                        tag: str = "grad") -> list[np.ndarray]:
        """The step's gradient over the union of the local batches, by ONE real all-reduce.

        Each worker computes :meth:`gradient_sum` (with its micro-batches) and appends its
        sample count; the ``size + 1`` vectors are summed by :func:`ring_allreduce` and every
        worker divides by the all-reduced count:
        ``g = sum_i sum_{j in B_i} grad l_j / sum_i |B_i|`` [Ding20]. Dummy batches add zeros.

        Parameters
        ----------
        thetas : sequence of ndarray, optional
            Worker i's parameters (default: :attr:`params`).
        idx : sequence (one per worker) of index array or of a sequence of micro-batch arrays, optional
            Default: each worker's :meth:`minibatch`.
        micro : int or sequence of int
            Micro-batches per worker (one value for all, or one per worker).
        tag : str
            Ledger tag of the all-reduce.

        Returns
        -------
        list of ndarray
            Each worker's copy of g (bit-identical), shape (model.size,).

        Raises
        ------
        ParameterError
            No sample in the whole step (every batch empty), or *micro*/*idx* of the wrong length.
        """
        K = self.K
        v = np.broadcast_to(np.asarray(micro, dtype=np.int64), (K,)) if np.ndim(micro) == 0 else \
            np.asarray(micro, dtype=np.int64)
        if v.shape != (K,):
            raise ParameterError(f"Workers.global_gradient: micro: expected 1 or {K} values, got {v.size}")
        if idx is not None and len(idx) != K:
            raise ParameterError(f"Workers.global_gradient: idx: expected {K} batches, got {len(idx)}")
        sums = []
        for i in range(K):
            g, n = self.gradient_sum(i, None if thetas is None else thetas[i],
                                     None if idx is None else idx[i], int(v[i]))
            sums.append(np.append(g, float(n)))
        out = self.allreduce_sum(sums, tag)
        total = out[0][-1]
        if total < 1:
            raise ParameterError("Workers.global_gradient: no sample in the step (every batch is empty)")
        return [o[:-1] / o[-1] for o in out]

    def mean_of_means(self, thetas: Sequence[np.ndarray] | None = None, idx=None,
                      tag: str = "grad") -> list[np.ndarray]:
        """DDP's averaging: ``(1/K) sum_i mean_{j in B_i} grad l_j`` by one real all-reduce,
        an empty rank counted as a zero gradient (PyTorch DDP divides the summed per-rank mean
        gradients by the world size). Biased towards small batches' samples when the ``b_i``
        differ; equals :meth:`global_gradient` when they are equal. Returns each worker's copy."""
        K = self.K
        grads = [self.gradient(i, None if thetas is None else thetas[i], None if idx is None else idx[i])
                 for i in range(K)]
        return self.allreduce_mean(grads, np.full(K, 1.0 / K), tag)

    def sgd_step(self, lr: float, idx=None, micro=1, tag: str = "grad") -> np.ndarray:
        """One synchronous SGD step on the union gradient (:meth:`global_gradient`):
        ``theta_i <- theta_i - lr g``. Returns g (worker 0's copy). Does not advance the clock."""
        g = self.global_gradient(None, idx, micro, tag)
        self.params = [self.params[i] - lr * g[i] for i in range(self.K)]
        return g[0]

    def resize(self, batches: Sequence[int], clock: Clock | None = None, shards=None) -> None:
        """Change the number of workers to ``len(batches)`` between steps (elastic training).

        The replicas must be identical (call it right after a synchronous step); every new
        worker starts from that model. The training set is re-split IID over the new workers
        (:func:`reshard`, seeded by ``(seed, resizes)``) unless *shards* gives the split; worker
        i then draws from ``default_rng([seed, i, resizes])``. Time, ledger, counters and curve
        carry on; *clock* replaces the clock (default: kept).

        Raises
        ------
        ParameterError
            The replicas differ, or bad *batches* (see the class).
        """
        if not self.identical():
            raise ParameterError("Workers.resize: the replicas differ; resize right after a synchronous step")
        K = len(batches)
        self.resizes += 1
        problem = reshard(self.problem, K, seed=[self.seed, self.resizes]) if shards is None else \
            Problem(self.problem.X_train, self.problem.y_train, self.problem.X_test, self.problem.y_test,
                    tuple(np.asarray(p, np.int64) for p in shards), self.problem.classes, self.problem.name)
        if problem.workers != K:
            raise ParameterError(f"Workers.resize: {problem.workers} shards for {K} workers")
        self._set_batches(batches, K)
        self.problem = problem
        theta = self.params[0]
        self.params = [theta.copy() for _ in range(K)]
        self._rngs = [np.random.default_rng([self.seed, i, self.resizes]) for i in range(K)]
        if clock is not None:
            self.clock = clock

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

    def allreduce_sum(self, arrays: Sequence[np.ndarray], tag: str = "allreduce") -> list[np.ndarray]:
        """Plain sum ``sum_i a_i`` of one array per worker by a real ring all-reduce; checked
        against the dense sum (:attr:`allreduce_error`). Counts one all-reduce; no clock."""
        arrs = [np.asarray(a, float) for a in arrays]
        out = ring_allreduce(arrs, self.ledger, tag)
        dense = np.sum(arrs, axis=0)
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


# --------------------------------------------------------------------------- virtual nodes and resharding


def virtual_node_split(idx: np.ndarray, virtual_nodes: int, counts: Sequence[int]) -> list[list[np.ndarray]]:
    """Cut one global batch into V virtual nodes and hand them out to the workers [Or22, §3].

    Virtual node j holds ``numpy.array_split(idx, V)[j]`` (sizes within one sample); worker i
    gets the next ``counts[i]`` virtual nodes in order (a worker with 0 holds a dummy batch).
    The virtual nodes, and so the step's union gradient, do not depend on how they are spread
    over the workers.

    Parameters
    ----------
    idx : ndarray of int, shape (B,)
        The global batch (sample indices).
    virtual_nodes : int
        V >= 1.
    counts : sequence of int
        Virtual nodes per worker, each >= 0, summing to V.

    Returns
    -------
    list (one per worker) of list of ndarray
        Worker i's micro-batches, for :meth:`Workers.gradient_sum` / :meth:`Workers.global_gradient`.

    Raises
    ------
    ParameterError
        ``V < 1``, a negative count, or counts not summing to V.
    """
    V = int(virtual_nodes)
    c = np.asarray(counts, dtype=np.int64)
    if V < 1:
        raise ParameterError(f"virtual_node_split: virtual_nodes: expected >= 1, got {virtual_nodes}")
    if c.ndim != 1 or np.any(c < 0) or int(c.sum()) != V:
        raise ParameterError(f"virtual_node_split: counts: expected non-negative integers summing to "
                             f"virtual_nodes ({V}), got {c.tolist()}")
    vns = np.array_split(np.asarray(idx, np.int64), V)
    edges = np.concatenate([[0], np.cumsum(c)])
    return [list(vns[edges[i]:edges[i + 1]]) for i in range(len(c))]


def reshard(problem: Problem, workers: int, seed=0) -> Problem:
    """*problem* with its training set re-split IID over *workers* shards (a seeded permutation
    cut into near-equal parts, :func:`suite.workloads.datasets.partition` with ``scheme="iid"``;
    data and test set unchanged).

    Raises
    ------
    ParameterError
        ``workers`` outside [1, training samples].
    """
    n = len(problem.y_train)
    if not 1 <= workers <= n:
        raise ParameterError(f"reshard: workers: expected 1 to {n} (training samples), got {workers}")
    from suite.workloads.datasets import partition

    shards = tuple(partition(problem.y_train, workers, scheme="iid", seed=seed))
    return Problem(problem.X_train, problem.y_train, problem.X_test, problem.y_test, shards, problem.classes,
                   problem.name)
