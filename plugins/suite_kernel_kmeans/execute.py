"""Execute fidelity: kernel k-means for real on a local dataset, timed, with its oracle checks.

``evaluate(scenario)`` loads the scenario's dataset (a :class:`suite.workloads.Dataset` with a
loader: digits, iris, wine, breast-cancer, moons, circles, blobs, ...), optionally subsamples and
standardises it, builds the initial partition from the seed, and runs the scenario's variant
(:mod:`suite_kernel_kmeans.solvers`). It reports the objective per iteration, the clustering
quality against the true labels (adjusted Rand index, NMI), the measured time per iteration
(median of the iterations, raw samples kept), and for the distributed layouts the words each
rank received (ledger) and whether the labels equal the single-process (popcorn) labels.

Oracle check on every run: for n <= ``ORACLE_MAX_N`` the kernel block K is compared with
scikit-learn's ``pairwise_kernels`` (``oracle_error``, max abs difference relative to max |K|).
"""

from __future__ import annotations

import numpy as np

from suite.api import ParameterError, Result, Scenario, Skip

from suite_kernel_kmeans import algorithm as alg
from suite_kernel_kmeans import model
from suite_kernel_kmeans import solvers

__all__ = ["evaluate", "prepare", "sklearn_kernel", "ORACLE_MAX_N"]

ORACLE_MAX_N = 3000


def sklearn_kernel(X: np.ndarray, kp: dict) -> np.ndarray:
    """K by ``sklearn.metrics.pairwise.pairwise_kernels`` (the independent oracle for K)."""
    from sklearn.metrics.pairwise import pairwise_kernels

    kind = kp["kind"]
    if kind == "linear":
        return pairwise_kernels(X, metric="linear")
    if kind == "polynomial":
        return pairwise_kernels(X, metric="poly", gamma=kp["gamma"], coef0=kp["coef0"], degree=kp["degree"])
    if kind == "gaussian":
        return pairwise_kernels(X, metric="rbf", gamma=kp["gamma"])
    return pairwise_kernels(X, metric="sigmoid", gamma=kp["gamma"], coef0=kp["coef0"])


def prepare(scenario: Scenario) -> tuple[np.ndarray, np.ndarray | None, dict, np.ndarray]:
    """Data, true labels, kernel and initial labels of an execute scenario.

    Returns
    -------
    X : ndarray, shape (n, d), float64
    y : ndarray of int, shape (n,), or None
    kp : dict (kernel)
    labels0 : ndarray of int, shape (n,)

    Raises
    ------
    Skip
        The workload has nothing to load (a paper dataset given only by n and d).
    ParameterError
        ``k`` or ``gpus`` larger than the number of points.
    """
    wl = scenario.workload
    if wl is None or getattr(wl, "loader", None) is None:
        name = getattr(wl, "name", None)
        raise Skip(f"workload {name!r} has no data to load; the execute fidelity needs a local dataset "
                   "such as digits, iris, moons or circles")
    X, y = wl.load()
    X = np.asarray(X, dtype=np.float64)
    y = None if y is None else np.asarray(y)
    p = scenario.params
    rng = np.random.default_rng(scenario.seed)
    n = p.get("n")
    if n is not None and n < X.shape[0]:
        idx = np.sort(rng.permutation(X.shape[0])[:n])
        X = X[idx]
        y = y[idx] if y is not None else None
    if p.get("standardize", True):
        mu = X.mean(axis=0)
        sd = X.std(axis=0)
        X = (X - mu) / np.where(sd > 0, sd, 1.0)
    kp = alg.resolve_kernel(p["kernel"], X, p.get("gamma"), p["coef0"], p["degree"])
    k = int(p["k"])
    if k > X.shape[0]:
        raise ParameterError(f"kernel-kmeans: parameter 'k': expected <= number of points {X.shape[0]}, got {k}")
    labels0 = alg.init_labels(X, k, kp, p["init"], rng)
    return X, y, kp, labels0


def evaluate(scenario: Scenario) -> Result:
    """Run the scenario's variant on real data and check it (see the module docstring).

    Metrics: ``objective`` (final partition), ``objective_first``, ``iterations``, ``converged``,
    ``time_per_iteration`` (s, median with samples), ``kernel_time`` (s), ``ari``, ``nmi``
    (when the dataset has labels), ``oracle_error`` (K vs scikit-learn, n <= ORACLE_MAX_N);
    layouts add ``words_per_iteration`` and ``words_kernel`` (most words one rank received) and
    ``labels_equal_single`` (1 when the labels equal the popcorn run's).
    """
    X, y, kp, labels0 = prepare(scenario)
    p = scenario.params
    k = int(p["k"])
    variant = scenario.variant
    P = model.gpus_of(p, None) if variant in solvers.LAYOUTS else 1  # unset: the paper's 4 ranks (no profile read)
    if P > X.shape[0]:
        raise ParameterError(f"kernel-kmeans: parameter 'gpus': expected <= number of points {X.shape[0]}, got {P}")
    with _pinned_threads(1):  # every BLAS/OpenMP pool at 1 thread while the solver times itself
        res = solvers.run(variant, X, k, kp, labels0, int(p["iterations"]), P, int(p["window"]))
    out = Result()
    out.add("objective", res.objectives[-1], "1", "lower")
    out.add("objective_first", res.objectives[0], "1", "lower")
    out.add("iterations", res.iterations, "1", "none")
    out.add("converged", float(res.converged), "1", "higher")
    out.add("time_per_iteration", float(np.median(res.iter_times)), "s", "lower", samples=res.iter_times)
    out.add("kernel_time", res.kernel_time, "s", "lower")
    out.add("points", X.shape[0], "1", "none")
    if y is not None:
        from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

        out.add("ari", adjusted_rand_score(y, res.labels), "1", "higher")
        out.add("nmi", normalized_mutual_info_score(y, res.labels), "1", "higher")
    if X.shape[0] <= ORACLE_MAX_N:
        K = alg.kernel_matrix(X, None, kp)
        Ks = sklearn_kernel(X, kp)
        scale = max(float(np.max(np.abs(Ks))), 1e-300)
        out.add("oracle_error", float(np.max(np.abs(K - Ks))) / scale, "1", "lower")
    artifacts = {
        "kernel": kp,
        "objectives": [float(v) for v in res.objectives],
        "labels": res.labels.tolist(),
        "gpus": P,
    }
    if variant in solvers.LAYOUTS:
        words = [res.words_received(led) for led in res.iter_ledgers]
        out.add("words_per_iteration", float(max(words, default=0)), "1", "lower")
        out.add("words_kernel", float(res.words_received(res.kernel_ledger)), "1", "lower")
        ref = solvers.run_single(X, k, kp, labels0, int(p["iterations"]), "popcorn")
        out.add("labels_equal_single", float(np.array_equal(ref.labels, res.labels)), "1", "higher")
        if res.iter_ledgers:
            artifacts["traffic_first_iteration"] = {t: list(v) for t, v in res.iter_ledgers[0].by_tag().items()}
        artifacts["traffic_kernel"] = {t: list(v) for t, v in res.kernel_ledger.by_tag().items()}
    out.artifacts.update(artifacts)
    return out


def _pinned_threads(n: int = 1):
    """Every BLAS/OpenMP pool at *n* threads while timing (:func:`suite.perf.blas_threads`)."""
    from suite.api import blas_threads

    return blas_threads(n)
