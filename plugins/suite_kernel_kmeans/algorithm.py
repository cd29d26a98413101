"""Single-process kernel k-means on real arrays: kernels, the assignment matrix, one iteration.

The formulation is Popcorn's / the distributed paper's linear-algebraic one (Bellavita et al.,
arXiv 2601.17136v2 §II-B, eqs. (1)-(8); Popcorn, PPoPP 2025):

* ``K = kappa(X, X)`` from the Gram matrix ``X X^T`` (GEMM, or SYRK for the symmetric case);
* ``V`` the k x n 0/1 assignment matrix (one nonzero per column, CSR);
* ``E = K V^T`` (SpMM), so ``E[i, c] = sum_{j in c} K_ij``;
* ``z_i = E[i, cl(i)]`` and ``G = V z`` (SpMV), so ``G_c = sum_{i, j in c} K_ij``;
* ``D[i, c] = K_ii - 2 E[i, c] / |c| + G_c / |c|^2`` = the squared feature-space distance of point
  i to the mean of cluster c; empty clusters get ``+inf``; the new label is the row-wise argmin.

The paper's eq. (3) stores ``1/|L_c|`` in V; we keep V 0/1 (as Popcorn's code does) and divide by
the cluster sizes afterwards, which is the same arithmetic.

Tie rule (ours, stated because the distributed layouts must agree label for label): a point keeps
its current cluster if that cluster's distance is within ``TIE_RTOL * (|K_ii| + |min_c D|)`` of
the row minimum; otherwise it takes the smallest cluster index within that band. Values that
differ only by floating-point summation order therefore give the same label in every layout, and
a point's term of the objective never increases (so the objective is monotone for a PSD kernel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from suite.api import ParameterError

from suite_kernel_kmeans.constants import KERNELS  # the kernel names (defined there for the declaration)

__all__ = [
    "KERNELS",
    "TIE_RTOL",
    "resolve_kernel",
    "gram",
    "kernel_matrix",
    "kernel_diag",
    "assignment_matrix",
    "assign_matmul",
    "assign_matmul_kernel",
    "cluster_terms",
    "distances",
    "update_labels",
    "objective",
    "init_labels",
]

TIE_RTOL = 1e-9


def resolve_kernel(kind: str, X: np.ndarray, gamma: float | None = None, coef0: float = 1.0,
                   degree: int = 2) -> dict:
    """Kernel parameters with defaults filled.

    Parameters
    ----------
    kind : {"linear", "polynomial", "gaussian", "sigmoid"}
    X : ndarray, shape (n, d)
        The data (only used for the Gaussian default ``gamma``).
    gamma : float or None
        Polynomial/sigmoid scale (default 1, the paper's value, eq. 2 and §VI-A); Gaussian
        ``exp(-gamma ||x - y||^2)`` with default ``1 / (d * var(X))`` (scikit-learn's "scale").
    coef0 : float
        Additive constant c of the polynomial/sigmoid kernel (paper: 1).
    degree : int
        Polynomial degree (paper: 2).

    Returns
    -------
    dict with keys kind, gamma, coef0, degree.

    Raises
    ------
    ParameterError
        Unknown kernel name.
    """
    if kind not in KERNELS:
        raise ParameterError(f"kernel-kmeans: parameter 'kernel': expected one of {list(KERNELS)}, got {kind!r}")
    if gamma is None:
        if kind == "gaussian":
            var = float(np.var(X)) if X.size else 1.0
            gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        else:
            gamma = 1.0
    return {"kind": kind, "gamma": float(gamma), "coef0": float(coef0), "degree": int(degree)}


def _mirror_lower_loops(A, tile):  # pragma: no cover - compiled by numba, see _mirror
    n = A.shape[0]
    for r0 in range(0, n, tile):
        r1 = min(n, r0 + tile)
        for c0 in range(0, r0 + 1, tile):
            for c in range(c0, min(n, c0 + tile)):
                for r in range(max(r0, c + 1), r1):
                    A[c, r] = A[r, c]
    return A


_MIRROR = None


def _mirror():
    """``f(A)``: copy the strict lower triangle of the square C-ordered *A* onto its upper one in
    place, in 8 x 8 tiles (numba; compiled on first use and cached on disk). Measured on 8,000 x
    8,000: 0.15 s, against 0.4-0.7 s for the numpy block mirror it replaced
    (docs/techniques/kernel-kmeans.md, "Benchmark")."""
    global _MIRROR
    if _MIRROR is None:
        import numba

        compiled = numba.njit(cache=True, nogil=True)(_mirror_lower_loops)
        _MIRROR = lambda A: compiled(A, 8)  # noqa: E731
    return _MIRROR


def gram(X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """The Gram matrix ``X Y^T`` (float64): SYRK when ``Y is None`` (symmetric), else GEMM.

    Popcorn picks GEMM or SYRK at run time to build ``B = P P^T`` (arXiv 2501.05587; paper eq. 1).

    Parameters
    ----------
    X : ndarray, shape (n, d)
    Y : ndarray, shape (m, d), optional

    Returns
    -------
    ndarray, shape (n, n) or (n, m)
    """
    X = np.asarray(X, dtype=np.float64)
    if Y is not None:
        return X @ np.asarray(Y, dtype=np.float64).T
    if X.shape[0] == 0:
        return np.zeros((0, 0))
    from scipy.linalg import blas  # here, not at import: scipy costs every command's start-up

    U = blas.dsyrk(1.0, X)  # upper triangle of X X^T (Fortran order)
    A = U.T  # C-ordered view whose lower triangle holds X X^T
    _mirror()(A)  # lower -> upper, compiled and tiled: no n x n temporary, no Python loop
    return A


def _apply(G: np.ndarray, kp: dict, sq_x: np.ndarray | None = None, sq_y: np.ndarray | None = None) -> np.ndarray:
    """Apply the kernel function to a freshly computed Gram matrix, in place (one n x m buffer)."""
    kind = kp["kind"]
    if kind == "linear":
        return G
    if kind in ("polynomial", "sigmoid"):
        G *= kp["gamma"]
        G += kp["coef0"]
        if kind == "polynomial":
            return np.power(G, kp["degree"], out=G)
        return np.tanh(G, out=G)
    G *= -2.0
    G += sq_x[:, None]
    G += sq_y[None, :]
    np.maximum(G, 0.0, out=G)
    G *= -kp["gamma"]
    return np.exp(G, out=G)


def kernel_matrix(X: np.ndarray, Y: np.ndarray | None = None, kp: dict | None = None) -> np.ndarray:
    """``K = kappa(X, Y)`` (float64) from the Gram matrix (paper eqs. 1-2).

    Kernels: linear ``x.y``; polynomial ``(gamma x.y + c)^degree``; sigmoid ``tanh(gamma x.y + c)``;
    Gaussian ``exp(-gamma (|x|^2 + |y|^2 - 2 x.y))`` (our extension; Popcorn has the first three).

    Parameters
    ----------
    X : ndarray, shape (n, d)
    Y : ndarray, shape (m, d), optional (default X; then the Gram matrix is built by SYRK)
    kp : dict
        From :func:`resolve_kernel`.

    Returns
    -------
    ndarray, shape (n, m)
    """
    X = np.asarray(X, dtype=np.float64)
    Gm = gram(X, Y)
    if kp["kind"] == "gaussian":
        Yv = X if Y is None else np.asarray(Y, dtype=np.float64)
        return _apply(Gm, kp, np.einsum("ij,ij->i", X, X), np.einsum("ij,ij->i", Yv, Yv))
    return _apply(Gm, kp)


def kernel_diag(X: np.ndarray, kp: dict) -> np.ndarray:
    """``K_ii`` for every point without forming K (shape (n,))."""
    X = np.asarray(X, dtype=np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    if kp["kind"] == "gaussian":
        return np.ones(X.shape[0])
    return _apply(np.array(sq, dtype=np.float64), kp)


def assignment_matrix(labels: np.ndarray, k: int) -> sp.csr_matrix:
    """The k x n 0/1 assignment matrix V in CSR (one nonzero per column; paper eq. 3 without the
    1/|c| scaling, which :func:`distances` applies)."""
    labels = np.asarray(labels, dtype=np.int64)
    n = labels.shape[0]
    import scipy.sparse as sp

    return sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))


def _assign_matmul_loops(labels, k, A):  # pragma: no cover - compiled by numba, see assign_matmul
    n, m = A.shape
    out = np.zeros((k, m))
    for j in range(n):
        c = labels[j]
        for i in range(m):
            out[c, i] += A[j, i]
    return out


_ASSIGN_MATMUL = None


def assign_matmul_kernel():
    """The compiled loop behind :func:`assign_matmul` (numba; compiled on first use, cached on disk).
    The solvers fetch it before their timed iterations, so no iteration pays for loading it."""
    global _ASSIGN_MATMUL
    if _ASSIGN_MATMUL is None:
        import numba

        _ASSIGN_MATMUL = numba.njit(cache=True, nogil=True)(_assign_matmul_loops)
    return _ASSIGN_MATMUL


def assign_matmul(labels: np.ndarray, k: int, A: np.ndarray) -> np.ndarray:
    """``V A`` for the k x n 0/1 assignment matrix V of *labels* (the SpMM ``E^T = V K``).

    Row ``c`` of the result is the sum of the rows ``A[j]`` with ``labels[j] == c``, accumulated
    in ascending j: the same additions in the same order as scipy's CSR x dense product
    ``assignment_matrix(labels, k) @ A`` (so the same result bit for bit), but compiled (numba,
    on first use, cached on disk) and reading A once in row order without building the CSR.
    Measured at k = 16 on one thread (load average 2.3-2.8): 16.5 / 22.4 GB/s of A read at
    n = 4,000 / 8,000 against scipy's 9.6 / 13.0 and a pure streaming read (``A.max()``) at
    24.5 / 26.8 (docs/techniques/kernel-kmeans.md, "Performance").

    Parameters
    ----------
    labels : ndarray of int, shape (n,), values in [0, k)
    k : int
    A : ndarray, shape (n, m), float64

    Returns
    -------
    ndarray, shape (k, m)
    """
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    A = np.ascontiguousarray(A, dtype=np.float64)
    if labels.shape[0] != A.shape[0]:
        raise ParameterError(f"kernel-kmeans: {labels.shape[0]} labels for a matrix of {A.shape[0]} rows")
    if labels.size and (labels.min() < 0 or labels.max() >= k):
        raise ParameterError(f"kernel-kmeans: labels must lie in [0, {k}), got [{labels.min()}, {labels.max()}]")
    return assign_matmul_kernel()(labels, int(k), A)


def cluster_terms(E: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Cluster sizes ``|c|`` and ``G_c = sum_{i in c} E[i, c]`` (paper eqs. 5-6: z, then c = V z).

    Parameters
    ----------
    E : ndarray, shape (n, k)
        ``K V^T`` with 0/1 V.
    labels : ndarray of int, shape (n,)

    Returns
    -------
    sizes, G : ndarrays, shape (k,)
    """
    labels = np.asarray(labels, dtype=np.int64)
    z = E[np.arange(labels.shape[0]), labels]
    V = assignment_matrix(labels, k)
    return np.bincount(labels, minlength=k).astype(np.float64), V @ z


def distances(E: np.ndarray, sizes: np.ndarray, G: np.ndarray) -> np.ndarray:
    """``D'[i, c] = -2 E[i, c] / |c| + G_c / |c|^2`` (paper eq. 8, without the per-row constant K_ii).

    Empty clusters (``|c| = 0``) give ``+inf`` (never NaN).

    Returns
    -------
    ndarray, shape (n, k)
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    safe = np.where(sizes > 0, sizes, 1.0)
    D = -2.0 * E / safe[None, :] + (G / safe**2)[None, :]
    D[:, sizes == 0] = np.inf
    return D


def update_labels(D: np.ndarray, diag: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Row-wise argmin of D with the module's tie rule (keep the current label if within tolerance).

    Parameters
    ----------
    D : ndarray, shape (n, k)
        From :func:`distances`.
    diag : ndarray, shape (n,)
        ``K_ii`` (sets the tolerance scale).
    labels : ndarray of int, shape (n,)
        Current labels.
    """
    labels = np.asarray(labels, dtype=np.int64)
    m = D.min(axis=1)
    tol = TIE_RTOL * (np.abs(diag) + np.abs(m))
    cand = D <= (m + tol)[:, None]
    keep = cand[np.arange(D.shape[0]), labels]
    first = np.argmax(cand, axis=1)
    return np.where(keep, labels, first).astype(np.int64)


def objective(D: np.ndarray, diag: np.ndarray, labels: np.ndarray) -> float:
    """Kernel k-means objective of the partition ``labels``: ``sum_i ||phi(x_i) - mu_cl(i)||^2 =
    sum_i (K_ii + D'[i, cl(i)])`` with D' computed from that same partition."""
    labels = np.asarray(labels, dtype=np.int64)
    return float(np.sum(diag + D[np.arange(D.shape[0]), labels]))


def init_labels(X: np.ndarray, k: int, kp: dict, method: str, rng: np.random.Generator) -> np.ndarray:
    """Initial partition.

    ``round-robin``: ``i mod k`` (the paper's initialisation, §V); ``random``: uniform labels
    from *rng*; ``kmeans++``: kernel k-means++ seeding in feature space (distances
    ``K_ii + K_cc - 2 K_ic`` to the chosen seed points; Arthur & Vassilvitskii, SODA 2007),
    then each point joins its nearest seed.

    Raises
    ------
    ParameterError
        Unknown method, or k larger than the number of points.
    """
    n = X.shape[0]
    if k > n:
        raise ParameterError(f"kernel-kmeans: parameter 'k': expected <= number of points {n}, got {k}")
    if method == "round-robin":
        return np.arange(n, dtype=np.int64) % k
    if method == "random":
        return rng.integers(0, k, size=n).astype(np.int64)
    if method == "kmeans++":
        diag = kernel_diag(X, kp)
        seeds = [int(rng.integers(n))]
        best = np.maximum(diag + diag[seeds[0]] - 2.0 * kernel_matrix(X, X[seeds], kp)[:, 0], 0.0)
        for _ in range(1, k):
            total = best.sum()
            nxt = int(rng.choice(n, p=best / total)) if total > 0 else int(rng.integers(n))
            seeds.append(nxt)
            dist = np.maximum(diag + diag[nxt] - 2.0 * kernel_matrix(X, X[[nxt]], kp)[:, 0], 0.0)
            best = np.minimum(best, dist)
        Ks = kernel_matrix(X, X[seeds], kp)
        dseed = diag[None, seeds] - 2.0 * Ks
        lab = np.argmin(dseed, axis=1).astype(np.int64)
        lab[seeds] = np.arange(k)
        return lab
    raise ParameterError(f"kernel-kmeans: parameter 'init': expected one of ['round-robin', 'random', 'kmeans++'], got {method!r}")
