"""K simulated data-parallel workers holding real parameter vectors, moved through real ring
all-reduces (:func:`suite.collectives.ring_allreduce`) on a simulated clock; the semantics of
unequal and dummy batches, the union gradient, virtual nodes and resizing are in
:mod:`suite.collectives.dataparallel`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from suite.collectives import Ledger, ring_allreduce
from suite.collectives.dataparallel.cost import Clock
from suite.collectives.dataparallel.flat_model import FlatModel
from suite.collectives.dataparallel.problem import Problem, reshard
from suite.declaration.vocabulary import WORKERS_RESULT_MEANINGS, MetricMeaning
from suite.errors import ParameterError

if TYPE_CHECKING:  # pragma: no cover
    from suite.technique import Result

#: one worker's batch: an index array, or its micro-batches (index arrays, :func:`virtual_node_split`)
Batch = np.ndarray | Sequence[np.ndarray]

__all__ = ['Workers']


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

    #: what each metric of :meth:`result` means (unit, direction, meaning):
    #: :data:`suite.declaration.vocabulary.WORKERS_RESULT_MEANINGS`, the same mapping (a technique
    #: whose execute fidelity reports them declares ``include = ["suite.api:WORKERS_RESULT_MEANINGS"]``
    #: under ``[metric_meanings.execute]``: resolved when it is built, without importing this module)
    RESULT_MEANINGS: ClassVar[Mapping[str, MetricMeaning]] = WORKERS_RESULT_MEANINGS

    problem: Problem
    model: FlatModel
    batches: Sequence[int] | np.ndarray
    clock: Clock
    seed: int = 0
    params: list[np.ndarray] = field(default_factory=list)
    time: float = 0.0
    grad_evals: int = 0
    allreduces: int = 0
    ledger: Ledger = field(default_factory=Ledger)
    allreduce_error: float = 0.0
    curve: dict[str, list[float]] = field(default_factory=lambda: {"step": [], "time": [], "loss": [], "accuracy": []})
    samples: int = 0
    micro_batches: int = 0
    resizes: int = 0

    def __post_init__(self) -> None:
        K = self.problem.workers
        self._set_batches(self.batches, K)
        theta0 = self.model.init(np.random.default_rng(self.seed))
        self.params = [theta0.copy() for _ in range(K)]
        self._rngs = [np.random.default_rng([self.seed, i]) for i in range(K)]

    def _set_batches(self, batches: Sequence[int] | np.ndarray, K: int) -> None:
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

    def gradient_sum(self, i: int, theta: np.ndarray | None = None, idx: Batch | None = None,
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

    def global_gradient(self, thetas: Sequence[np.ndarray] | None = None, idx: Sequence[Batch] | None = None,
                        micro: int | Sequence[int] = 1,
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

    def mean_of_means(self, thetas: Sequence[np.ndarray] | None = None, idx: Sequence[np.ndarray] | None = None,
                      tag: str = "grad") -> list[np.ndarray]:
        """DDP's averaging: ``(1/K) sum_i mean_{j in B_i} grad l_j`` by one real all-reduce,
        an empty rank counted as a zero gradient (PyTorch DDP divides the summed per-rank mean
        gradients by the world size). Biased towards small batches' samples when the ``b_i``
        differ; equals :meth:`global_gradient` when they are equal. Returns each worker's copy."""
        K = self.K
        grads = [self.gradient(i, None if thetas is None else thetas[i], None if idx is None else idx[i])
                 for i in range(K)]
        return self.allreduce_mean(grads, np.full(K, 1.0 / K), tag)

    def sgd_step(self, lr: float, idx: Sequence[Batch] | None = None, micro: int | Sequence[int] = 1,
                 tag: str = "grad") -> np.ndarray:
        """One synchronous SGD step on the union gradient (:meth:`global_gradient`):
        ``theta_i <- theta_i - lr g``. Returns g (worker 0's copy). Does not advance the clock."""
        g = self.global_gradient(None, idx, micro, tag)
        self.params = [self.params[i] - lr * g[i] for i in range(self.K)]
        return g[0]

    def resize(self, batches: Sequence[int], clock: Clock | None = None,
               shards: Sequence[np.ndarray] | None = None) -> None:
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
    def allreduce_mean(self, arrays: Sequence[np.ndarray], weights: Sequence[float] | np.ndarray | None = None,
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
        return np.asarray(np.sum([w * p for w, p in zip(self.weights, self.params)], axis=0))

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

    def result(self) -> "Result":
        """The metrics every data-parallel technique reports after training (a
        :class:`suite.technique.Result` to which a plugin adds its own): final_loss,
        final_accuracy, allreduces, grad_evals, sim_time (s), bytes_sent / bytes_received (B,
        from the ledger), each with the unit, direction and meaning of :attr:`RESULT_MEANINGS`,
        and the loss/accuracy curve and step times as artifacts."""
        from suite.technique import Result

        loss, acc = self.evaluate()
        res = Result()
        values = {"final_loss": loss, "final_accuracy": acc, "allreduces": self.allreduces,
                  "grad_evals": self.grad_evals, "sim_time": self.time,
                  "bytes_sent": float(sum(self.ledger.sent_by().values())),
                  "bytes_received": float(sum(self.ledger.received_by().values()))}
        for name, m in self.RESULT_MEANINGS.items():
            res.add(name, values[name], m.unit, m.direction)
        res.artifacts["curve"] = self.curve
        res.artifacts["step_times"] = [float(x) for x in self.clock.step]
        return res

    def identical(self) -> bool:
        """Whether every replica is bit-identical to worker 0's."""
        return all(np.array_equal(p, self.params[0]) for p in self.params[1:])
