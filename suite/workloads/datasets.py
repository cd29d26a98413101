"""Local datasets: scikit-learn's bundled ones, seeded generators, non-IID partitions, graphs.

Nothing is downloaded. Each dataset is a :class:`~suite.workloads.types.Dataset` whose ``loader``
is a module-level function of this module and whose ``params`` include the seed, so the same
name always yields the same arrays: ``content_hash()`` identifies the definition (loader and
parameters) and :func:`data_hash` the arrays themselves.

Factories (``moons(n=..., seed=...)`` etc.) return a :class:`Dataset` for any parameters; the
zoo registers one default instance of each under a short name (``moons``, ``blobs``, ...).

References
----------
.. [1] scikit-learn ``sklearn.datasets``: ``load_digits``, ``load_iris``, ``load_wine``,
   ``load_breast_cancer`` (bundled files), ``make_moons``, ``make_circles``, ``make_blobs``.
.. [2] T.-M. H. Hsu, H. Qi, M. Brown, "Measuring the Effects of Non-Identical Data Distribution
   for Federated Visual Classification", arXiv:1909.06335, 2019 (Dirichlet label partition).
.. [3] B. McMahan et al., "Communication-Efficient Learning of Deep Networks from Decentralized
   Data", AISTATS 2017, Section 3 (pathological non-IID: sort by label, 2 shards per client).
.. [4] A.-L. Barabasi, R. Albert, "Emergence of Scaling in Random Networks", Science 1999
   (preferential attachment; networkx ``barabasi_albert_graph``).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any


class _LazyNumpy:
    """numpy, imported on first attribute access: the zoo registers these builders at import, and
    a command that only resolves cached cases (``suite run`` of a stored sweep) never builds a
    dataset, so it need not import numpy (issue 19: the fixed cost of ``suite run``)."""

    def __getattr__(self, name: str) -> Any:
        import numpy

        globals()["np"] = numpy  # later calls read numpy itself
        return getattr(numpy, name)


if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
else:
    np = _LazyNumpy()

from suite.errors import WorkloadError
from suite.workloads.types import Dataset

__all__ = ["sklearn_dataset", "moons", "circles", "blobs", "gaussian_mixture", "powerlaw_graph",
           "load_sklearn", "load_moons", "load_circles", "load_blobs", "load_gaussian_mixture",
           "load_powerlaw_graph", "data_hash", "partition", "pathological", "label_counts", "SKLEARN_BUNDLED"]

#: name -> (sklearn loader function name, n, d, classes)
SKLEARN_BUNDLED = {
    "digits": ("load_digits", 1797, 64, 10),
    "iris": ("load_iris", 150, 4, 3),
    "wine": ("load_wine", 178, 13, 3),
    "breast-cancer": ("load_breast_cancer", 569, 30, 2),
}


# ------------------------------------------------------------------------------------ loaders
def load_sklearn(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A scikit-learn bundled dataset as ``(X float64 (n, d), y int64 (n,))``; no download."""
    if name not in SKLEARN_BUNDLED:
        raise WorkloadError(f"sklearn dataset must be one of {sorted(SKLEARN_BUNDLED)}, given {name!r}")
    X, y = _read_sklearn(name)
    return X.copy(), y.copy()


@functools.lru_cache(maxsize=None)
def _read_sklearn(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The bundled file read and parsed once per process (digits is a gzipped CSV that costs ~0.1 s a
    read, and one reproduce evaluates dozens of cases on it); callers get copies, so no case can
    change another's data."""
    if name == "digits":
        X, y = _read_digits_file()
    else:
        import sklearn.datasets as skd  # type: ignore[import-untyped]

        X, y = getattr(skd, SKLEARN_BUNDLED[name][0])(return_X_y=True)
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)
    X.flags.writeable = y.flags.writeable = False
    return X, y


def _read_digits_file() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled ``datasets/data/digits.csv.gz`` parsed as ``load_digits`` parses it
    (64 pixel columns, the label last), found without importing scikit-learn: importing
    ``sklearn.datasets`` costs ~1.3 s of CPU per process, the file 0.03 s."""
    import gzip
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise WorkloadError("dataset 'digits': scikit-learn is not installed (it ships the file)")
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data" / "digits.csv.gz"
    with gzip.open(path, "rt") as fh:
        data = np.loadtxt(fh, delimiter=",")
    return data[:, :-1], data[:, -1].astype(np.int64)


def load_moons(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles (``sklearn.datasets.make_moons``)."""
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples=n, noise=noise, random_state=seed)
    return X.astype(np.float64), y.astype(np.int64)


def load_circles(n: int, noise: float, factor: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two concentric circles (``sklearn.datasets.make_circles``)."""
    from sklearn.datasets import make_circles

    X, y = make_circles(n_samples=n, noise=noise, factor=factor, random_state=seed)
    return X.astype(np.float64), y.astype(np.int64)


def load_blobs(n: int, centers: int, d: int, std: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Isotropic Gaussian blobs (``sklearn.datasets.make_blobs``)."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=n, centers=centers, n_features=d, cluster_std=std, random_state=seed)
    return X.astype(np.float64), y.astype(np.int64)


def load_gaussian_mixture(n: int, k: int, d: int, separation: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A mixture of ``k`` Gaussians in ``d`` dimensions with random (anisotropic) covariances.

    Means are drawn ``N(0, separation^2 I)``; component ``j`` has covariance ``A_j A_j^T / d + 0.1 I``
    with ``A_j`` standard normal; weights ``Dirichlet(2, ..., 2)``. Returns ``(X (n, d), y (n,))``
    where ``y`` is the component; the generator is ``numpy.random.default_rng(seed)``.
    """
    if min(n, k, d) <= 0:
        raise WorkloadError(f"gaussian_mixture: n, k, d must be > 0, given n={n}, k={k}, d={d}")
    rng = np.random.default_rng(seed)
    means = rng.normal(0.0, separation, size=(k, d))
    weights = rng.dirichlet(np.full(k, 2.0))
    y = rng.choice(k, size=n, p=weights)
    X = np.empty((n, d))
    for j in range(k):
        A = rng.normal(size=(d, d))
        cov = A @ A.T / d + 0.1 * np.eye(d)
        idx = np.flatnonzero(y == j)
        X[idx] = rng.multivariate_normal(means[j], cov, size=idx.size)
    return X, y.astype(np.int64)


def load_powerlaw_graph(n: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A Barabasi-Albert preferential-attachment graph: ``(edges int64 (E, 2), degree int64 (n,))``.

    Each new node attaches to ``m`` existing nodes, so ``E = (n - m) * m`` and the degree
    distribution has a power-law tail (exponent 3). Undirected; edges sorted, ``u < v``.
    """
    import networkx as nx

    if not (1 <= m < n):
        raise WorkloadError(f"powerlaw_graph: need 1 <= m < n, given n={n}, m={m}")
    g = nx.barabasi_albert_graph(n, m, seed=seed)
    edges = np.array(sorted((min(u, v), max(u, v)) for u, v in g.edges()), dtype=np.int64).reshape(-1, 2)
    deg = np.bincount(edges.ravel(), minlength=n).astype(np.int64)
    return edges, deg


# ------------------------------------------------------------------------------------ factories
def sklearn_dataset(name: str) -> Dataset:
    """The bundled scikit-learn dataset ``name`` (digits, iris, wine, breast-cancer)."""
    if name not in SKLEARN_BUNDLED:
        raise WorkloadError(f"sklearn dataset must be one of {sorted(SKLEARN_BUNDLED)}, given {name!r}")
    fn, n, d, c = SKLEARN_BUNDLED[name]
    return Dataset(name=name, kind="dataset", source=f"scikit-learn sklearn.datasets.{fn} (bundled file)",
                   description=f"{n} samples, {d} features, {c} classes", loader=load_sklearn,
                   params={"name": name}, n=n, d=d, classes=c)


def moons(n: int = 1000, noise: float = 0.1, seed: int = 0, name: str | None = None) -> Dataset:
    """Two interleaving half circles: ``n`` points in 2-D, 2 classes, Gaussian ``noise`` (std).

    Returns a :class:`Dataset` named ``moons-n{n}-s{seed}`` unless ``name`` is given;
    ``load()`` gives ``(X float64 (n, 2), y int64 (n,))``. See :func:`load_moons`.
    """
    return Dataset(name=name or f"moons-n{n}-s{seed}", kind="dataset", source="sklearn.datasets.make_moons",
                   description=f"two moons, noise {noise}", loader=load_moons,
                   params={"n": n, "noise": noise, "seed": seed}, n=n, d=2, classes=2)


def circles(n: int = 1000, noise: float = 0.05, factor: float = 0.5, seed: int = 0, name: str | None = None) -> Dataset:
    """Two concentric circles (inner radius ``factor``): ``n`` points in 2-D, 2 classes.

    ``load()`` gives ``(X float64 (n, 2), y int64 (n,))``. See :func:`load_circles`.
    """
    return Dataset(name=name or f"circles-n{n}-s{seed}", kind="dataset", source="sklearn.datasets.make_circles",
                   description=f"two circles, noise {noise}, factor {factor}", loader=load_circles,
                   params={"n": n, "noise": noise, "factor": factor, "seed": seed}, n=n, d=2, classes=2)


def blobs(n: int = 1000, centers: int = 4, d: int = 2, std: float = 1.0, seed: int = 0,
          name: str | None = None) -> Dataset:
    """``centers`` isotropic Gaussian blobs (std ``std``) in ``d`` dimensions, ``n`` points.

    ``load()`` gives ``(X float64 (n, d), y int64 (n,))``. See :func:`load_blobs`.
    """
    return Dataset(name=name or f"blobs-n{n}-k{centers}-d{d}-s{seed}", kind="dataset",
                   source="sklearn.datasets.make_blobs", description=f"{centers} isotropic blobs, std {std}",
                   loader=load_blobs, params={"n": n, "centers": centers, "d": d, "std": std, "seed": seed},
                   n=n, d=d, classes=centers)


def gaussian_mixture(n: int = 2000, k: int = 5, d: int = 10, separation: float = 3.0, seed: int = 0,
                     name: str | None = None) -> Dataset:
    """A ``k``-component anisotropic Gaussian mixture in ``d`` dimensions (see
    :func:`load_gaussian_mixture` for the exact generator); labels are the components.
    """
    return Dataset(name=name or f"gaussian-mixture-n{n}-k{k}-d{d}-s{seed}", kind="dataset",
                   source="suite.workloads.datasets.load_gaussian_mixture (numpy default_rng)",
                   description=f"{k}-component anisotropic Gaussian mixture, separation {separation}",
                   loader=load_gaussian_mixture, params={"n": n, "k": k, "d": d, "separation": separation, "seed": seed},
                   n=n, d=d, classes=k)


def powerlaw_graph(n: int = 1000, m: int = 3, seed: int = 0, name: str | None = None) -> Dataset:
    """A Barabasi-Albert power-law graph with ``n`` nodes, each new node attaching ``m`` edges
    (``kind = "graph"``); ``load()`` gives ``(edges int64 (E, 2), degree int64 (n,))``.
    """
    return Dataset(name=name or f"powerlaw-graph-n{n}-m{m}-s{seed}", kind="graph",
                   source="networkx.barabasi_albert_graph (Barabasi & Albert 1999)",
                   description=f"preferential attachment, {n} nodes, {(n - m) * m} edges; load() -> (edges, degree)",
                   loader=load_powerlaw_graph, params={"n": n, "m": m, "seed": seed}, n=n, d=None, classes=None)


# ------------------------------------------------------------------------------------ hashing
def data_hash(dataset: Dataset) -> str:
    """SHA-256 (first 16 hex digits) of the loaded arrays (dtype, shape and bytes of each)."""
    h = hashlib.sha256()
    for arr in dataset.load():
        if arr is None:
            h.update(b"none")
            continue
        a = np.ascontiguousarray(arr)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


# ------------------------------------------------------------------------------------ partitions
def partition(y: Any, workers: int, scheme: str = "dirichlet", alpha: float = 0.5, seed: int | Sequence[int] = 0,
              shards_per_worker: int = 2, min_size: int = 0) -> list[np.ndarray]:
    """Split sample indices among ``workers`` (IID or label-skewed non-IID).

    Parameters
    ----------
    y : array_like of int, shape (n,)
        Labels.
    workers : int
        Number of parts (>= 1).
    scheme : {"iid", "dirichlet", "pathological"}
        ``iid``: a random permutation cut into near-equal parts. ``dirichlet`` (Hsu et al. 2019):
        for each class, proportions ``p ~ Dir(alpha * 1_workers)`` and the class's shuffled indices
        cut at ``cumsum(p)``; small ``alpha`` = strong skew. ``pathological`` (McMahan et al. 2017):
        see :func:`pathological`.
    alpha : float
        Dirichlet concentration (> 0).
    seed : int
        ``numpy.random.default_rng(seed)``.
    shards_per_worker : int
        For ``pathological``.
    min_size : int
        For ``dirichlet``: redraw (up to 100 times) until every part has at least this many samples.

    Returns
    -------
    list of ndarray of int64
        ``workers`` sorted index arrays, pairwise disjoint, together covering ``range(n)``.

    Raises
    ------
    WorkloadError
        Unknown scheme, ``workers < 1``, ``alpha <= 0``, or ``min_size`` not reachable.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise WorkloadError(f"partition: y must be 1-D labels, given shape {y.shape}")
    if workers < 1:
        raise WorkloadError(f"partition: workers must be >= 1, given {workers}")
    rng = np.random.default_rng(seed)
    n = y.size
    if scheme == "iid":
        return [np.sort(p).astype(np.int64) for p in np.array_split(rng.permutation(n), workers)]
    if scheme == "pathological":
        return pathological(y, workers, shards_per_worker=shards_per_worker, seed=seed)
    if scheme != "dirichlet":
        raise WorkloadError(f"partition: scheme must be iid, dirichlet or pathological, given {scheme!r}")
    if not alpha > 0:
        raise WorkloadError(f"partition: alpha must be > 0, given {alpha}")
    return _dirichlet(y, workers, alpha, rng, min_size)


def _dirichlet(y: Any, workers: int, alpha: float, rng: Any, min_size: int) -> list[Any]:
    """Hsu et al. (2019): per class, proportions ``Dir(alpha)`` over the workers cut the class's
    shuffled indices; redrawn (up to 100 times) until every part has *min_size* samples."""
    classes = np.unique(y)
    for _attempt in range(100):
        parts: list[list[Any]] = [[] for _ in range(workers)]
        for c in classes:
            idx = rng.permutation(np.flatnonzero(y == c))
            p = rng.dirichlet(np.full(workers, float(alpha)))
            cuts = (np.cumsum(p)[:-1] * idx.size).astype(int)
            for w, chunk in enumerate(np.split(idx, cuts)):
                parts[w].append(chunk)
        out = [np.sort(np.concatenate(ch)).astype(np.int64) for ch in parts]
        if min(o.size for o in out) >= min_size:
            return out
    raise WorkloadError(f"partition: could not give every one of {workers} workers >= {min_size} samples "
                        f"with alpha={alpha} in 100 draws; lower min_size or raise alpha")


def pathological(y: Any, workers: int, shards_per_worker: int = 2, seed: int | Sequence[int] = 0) -> list[np.ndarray]:
    """McMahan et al. (2017) pathological non-IID split.

    Sort the indices by label (stable), cut them into ``workers * shards_per_worker`` near-equal
    shards, and give each worker ``shards_per_worker`` shards chosen by a random permutation, so
    each worker sees at most ``shards_per_worker`` labels when shards do not straddle labels.

    Returns
    -------
    list of ndarray of int64
        Sorted, disjoint, covering ``range(len(y))``.
    """
    y = np.asarray(y)
    if workers < 1 or shards_per_worker < 1:
        raise WorkloadError(f"pathological: workers and shards_per_worker must be >= 1, given {workers}, "
                            f"{shards_per_worker}")
    n_shards = workers * shards_per_worker
    if n_shards > y.size:
        raise WorkloadError(f"pathological: {n_shards} shards for only {y.size} samples")
    rng = np.random.default_rng(seed)
    order = np.argsort(y, kind="stable")
    shards = np.array_split(order, n_shards)
    perm = rng.permutation(n_shards)
    return [np.sort(np.concatenate([shards[s] for s in perm[w * shards_per_worker:(w + 1) * shards_per_worker]]))
            .astype(np.int64) for w in range(workers)]


def label_counts(parts: list[np.ndarray], y: Any, classes: int | None = None) -> np.ndarray:
    """Per-worker label histogram, shape (workers, classes)."""
    y = np.asarray(y)
    k = int(classes if classes is not None else y.max() + 1)
    return np.stack([np.bincount(y[p], minlength=k) for p in parts])
