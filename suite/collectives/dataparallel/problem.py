"""The data of the simulated data-parallel workers: a classification problem split over
workers (:func:`load_problem`, :func:`reshard`) and a global batch cut into virtual nodes
(:func:`virtual_node_split`). References in :mod:`suite.collectives.dataparallel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from suite.errors import ParameterError
from suite.workloads.types import Dataset

__all__ = ['Problem', 'load_problem', 'virtual_node_split', 'reshard']


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
    shards: tuple[np.ndarray, ...]
    classes: int
    name: str = "digits"

    @property
    def d(self) -> int:
        return int(self.X_train.shape[1])

    @property
    def workers(self) -> int:
        return len(self.shards)


def _load_xy(dataset: Dataset | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    if isinstance(dataset, Dataset):
        X, y = dataset.load()
        return np.asarray(X, float), np.asarray(y), dataset.name
    from suite.workloads.datasets import load_sklearn  # what the zoo's "digits" loads: no lookup by name

    X, y = load_sklearn("digits")
    return np.asarray(X, float), np.asarray(y), "digits"


def _check_problem_args(workers: int, split: str, test_fraction: float, shards: int) -> None:
    """:func:`load_problem`'s arguments that do not depend on the data, checked."""
    if workers < 1:
        raise ParameterError(f"load_problem: workers must be >= 1, got {workers}")
    if split not in ("iid", "dirichlet", "pathological"):
        raise ParameterError(f"load_problem: split must be 'iid', 'dirichlet' or 'pathological', got {split!r}")
    if split == "pathological" and shards < 1:
        raise ParameterError(f"load_problem: shards must be >= 1, got {shards}")
    if not 0 < test_fraction < 1:
        raise ParameterError(f"load_problem: test_fraction must be in (0, 1), got {test_fraction}")


def load_problem(workers: int, split: str = "iid", alpha: float = 0.5, seed: int = 0,
                 test_fraction: float = 0.2, dataset: Dataset | None = None, shards: int = 2) -> Problem:
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
    _check_problem_args(workers, split, test_fraction, shards)
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


def reshard(problem: Problem, workers: int, seed: int | Sequence[int] = 0) -> Problem:
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
