"""Kernel k-means runs on real arrays: the single-process variants and the simulated layouts.

Single process (one device):

* ``dense``: K stored, V dense (k x n), ``E = K V^T`` by GEMM (the non-sparse GPU baseline
  Popcorn compares against);
* ``popcorn``: K stored, V sparse (CSR), ``E^T = V K`` by SpMM and ``G = V z`` by SpMV
  (Popcorn, PPoPP 2025);
* ``sliding-window``: K never stored; every iteration recomputes K in b x n block rows and
  multiplies each by the dense V^T (the paper's single-GPU baseline, §VI-D, b = 8192).

Distributed over P simulated ranks (Bellavita et al., arXiv 2601.17136v2 §IV; one Python object
per rank holding its own blocks; every byte that crosses ranks goes through
:func:`suite.collectives.send` into a :class:`suite.collectives.Ledger`):

* ``1d`` (§IV-A, Alg. 1): rank r owns n/P points and the K column block ``K[:, own]``.
  K: all-gather X, local GEMM. Iteration: all-gather the labels (V), local SpMM
  ``E^T[:, own] = V K[:, own]``, all-reduce the k-vector G (sizes come from the gathered labels).
* ``1.5d`` (§IV-C, Alg. 2): a sqrt(P) x sqrt(P) grid, ranks numbered column-major; rank (i, j)
  owns the K block ``K_ij`` (row block i, column block j) and the labels of sub-block i of block j
  (V 1-D). K: all-gather X along the column, broadcast X[block i] from the diagonal along the row.
  Iteration: gather block i's labels on the diagonal (i, i) and broadcast them along row i
  (§V: MPI_Gather + MPI_Bcast), local SpMM ``V_i K_ij``, reduce-scatter the k x n/sqrt(P) partial
  sums along column j split by columns (points), all-reduce sizes and G (2k words). The cluster
  update needs no communication.
* ``2d`` (§IV-B, our reading): same grid, ranks row-major; V 1-D row-major, so rank (i, j) holds
  sub-block j of block i. Iteration: a transpose exchange gives (i, j) its V sub-block from
  (j, i), all-gather along row i (V_i), local SpMM, reduce-scatter along column j split by
  *rows* (cluster groups), all-reduce sizes and G of the group along row i, and the argmin over
  cluster groups by a min-reduction of (value, rule code) pairs along column j -- the
  MPI_MINLOC all-reduce that "doubles the buffer" (§V).

Words are counted per rank as the elements a rank receives (float64 and int64 both 8 bytes here).
The objective and the convergence flag are diagnostics computed outside the ledger.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from suite.api import Ledger, Message, ParameterError, allgather, broadcast, ring_allreduce, send

from suite_kernel_kmeans import algorithm as alg

__all__ = ["RunResult", "run_single", "single_iteration", "run_1d", "run_15d", "run_2d", "run", "LAYOUTS", "SINGLE", "partition"]

SINGLE = ("dense", "popcorn", "sliding-window")
LAYOUTS = ("1d", "1.5d", "2d")
WORD = 8  # bytes per element exchanged in the simulation (float64 / int64)
DENSE_ROWS = 1024
"""Row block of the dense variant's ``E = K V^T``: one GEMM per 1,024 rows of K instead of one
for all n rows. The reduction over K's columns is the same in every block, so E is the same bit
for bit on one BLAS thread (a threaded OpenBLAS rounds the rows at its thread split differently,
1 ulp, as the single call does between thread counts). OpenBLAS's single n x n by n x 16 call ran
at 20.4-21.4 GFLOP/s on one thread here, the blocked calls at 23.2-24.4 (n = 4,000 and 8,000,
k = 16); on two threads of the shared machine neither was faster (16-17 GFLOP/s both;
docs/techniques/kernel-kmeans.md, "Performance")."""


@dataclass
class RunResult:
    """What one run returns.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
    objectives : list of float
        Objective of the partition at the start of each iteration (and of the final partition
        when the run converged).
    iterations : int
    iter_times : list of float
        Wall time of each iteration (s).
    kernel_time : float
        Wall time to build K (s); 0 for the sliding window.
    kernel_ledger, iter_ledgers : Ledger, list of Ledger
        Traffic of the K build and of each iteration (distributed layouts only).
    converged : bool
    """

    labels: np.ndarray
    objectives: list[float]
    iterations: int
    iter_times: list[float]
    kernel_time: float
    converged: bool
    kernel_ledger: Ledger = field(default_factory=Ledger)
    iter_ledgers: list[Ledger] = field(default_factory=list)

    def words_received(self, ledger: Ledger) -> int:
        """Largest number of words one rank received in *ledger*."""
        return max(ledger.received_by().values(), default=0) // WORD


def partition(n: int, p: int) -> list[slice]:
    """Contiguous 1-D partition of n points over p ranks (sizes differ by at most one)."""
    bounds = [(n * r) // p for r in range(p + 1)]
    return [slice(bounds[r], bounds[r + 1]) for r in range(p)]


# --------------------------------------------------------------------------- single process


def run_single(X: np.ndarray, k: int, kp: dict, labels0: np.ndarray, max_iter: int,
               method: str = "popcorn", window: int = 8192) -> RunResult:
    """Kernel k-means on one process by ``dense``, ``popcorn`` or ``sliding-window``.

    Parameters
    ----------
    X : ndarray, shape (n, d)
    k : int
        Clusters.
    kp : dict
        Kernel from :func:`algorithm.resolve_kernel`.
    labels0 : ndarray of int, shape (n,)
        Initial partition.
    max_iter : int
        Iterations at most; stops early when no label changes.
    method : {"dense", "popcorn", "sliding-window"}
    window : int
        Block rows b of the sliding window.

    Returns
    -------
    RunResult

    References
    ----------
    Bellavita et al., arXiv 2601.17136v2, §II-B eqs. (1)-(8) and §VI-D (sliding window).
    """
    if method not in SINGLE:
        raise ParameterError(f"kernel-kmeans: variant {method!r} is not single-process; expected one of {list(SINGLE)}")
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    t0 = time.perf_counter()
    K = kernel = None
    if method != "sliding-window":
        K = alg.kernel_matrix(X, None, kp)
        diag = np.diag(K).copy()
    else:
        diag = alg.kernel_diag(X, kp)
        kernel = kp
    kernel_time = time.perf_counter() - t0 if method != "sliding-window" else 0.0
    labels = np.asarray(labels0, dtype=np.int64).copy()
    objs: list[float] = []
    times: list[float] = []
    converged = False
    b = max(1, min(int(window), n))
    if method == "popcorn":
        alg.assign_matmul_kernel()  # load (or compile) the SpMM before the timed iterations
    for _ in range(max_iter):
        t = time.perf_counter()
        E, sizes, G = single_iteration(method, labels, k, K=K, X=X, kp=kernel, window=b)
        D = alg.distances(E, sizes, G)
        objs.append(alg.objective(D, diag, labels))
        new = alg.update_labels(D, diag, labels)
        times.append(time.perf_counter() - t)
        if np.array_equal(new, labels):
            converged = True
            break
        labels = new
    return RunResult(labels, objs, len(times), times, kernel_time, converged)


def single_iteration(method: str, labels: np.ndarray, k: int, K: np.ndarray | None = None,
                     X: np.ndarray | None = None, kp: dict | None = None, window: int = 8192
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The products of one iteration on one process: ``E = K V^T`` (n x k), sizes and G.

    ``popcorn``: V in CSR, ``E^T = V K`` (SpMM, K symmetric), ``G = V z`` (SpMV);
    ``dense``: V dense, ``E = K V^T`` (GEMM); ``sliding-window``: K never stored, each b x n block
    row ``kappa(X_b, X)`` is recomputed and multiplied by the dense ``V^T`` (needs X and kp).

    Returns
    -------
    E : ndarray, shape (n, k); sizes, G : ndarrays, shape (k,)
    """
    labels = np.asarray(labels, dtype=np.int64)
    n = labels.shape[0]
    if method == "popcorn":
        V = alg.assignment_matrix(labels, k)
        E = alg.assign_matmul(labels, k, K).T  # E^T = V K (SpMM, compiled), K symmetric
        sizes = np.bincount(labels, minlength=k).astype(np.float64)
        z = E[np.arange(n), labels]
        return E, sizes, V @ z  # SpMV
    Vt = np.zeros((n, k))  # dense V^T, stored contiguous so each product is one BLAS GEMM
    Vt[np.arange(n), labels] = 1.0
    if method == "dense":
        E = np.empty((n, k))
        for s in range(0, n, DENSE_ROWS):  # GEMM by row blocks; see DENSE_ROWS
            np.matmul(K[s:s + DENSE_ROWS], Vt, out=E[s:s + DENSE_ROWS])
    elif method == "sliding-window":
        b = max(1, min(int(window), n))
        E = np.empty((n, k))
        for s in range(0, n, b):
            E[s:s + b] = alg.kernel_matrix(X[s:s + b], X, kp) @ Vt
    else:
        raise ParameterError(f"kernel-kmeans: variant {method!r} is not single-process; expected one of {list(SINGLE)}")
    z = E[np.arange(n), labels]
    return E, Vt.sum(axis=0), Vt.T @ z


# --------------------------------------------------------------------------- group helpers


def _into(global_ledger: Ledger, sub: Ledger, members: list[int]) -> None:
    """Copy a group-local ledger (ranks 0..g-1) into the global one (ranks = members)."""
    for m in sub.messages:
        global_ledger.messages.append(Message(members[m.src], members[m.dst], m.nbytes, m.tag))


def _group_allgather(parts: list[np.ndarray], members: list[int], ledger: Ledger, tag: str) -> list[np.ndarray]:
    sub = Ledger()
    out = allgather(parts, sub, tag)
    _into(ledger, sub, members)
    return out


def _group_broadcast(array: np.ndarray, members: list[int], root: int, ledger: Ledger, tag: str) -> list[np.ndarray]:
    sub = Ledger()
    out = broadcast(array, len(members), root, sub, tag)
    _into(ledger, sub, members)
    return out


def _ring_reduce_scatter(arrays: list[np.ndarray], segments: list, members: list[int], ledger: Ledger,
                         tag: str, axis: int) -> list[np.ndarray]:
    """Ring reduce-scatter with explicit segments along *axis* of 2-D arrays [Thakur05 §4.5]:
    member r ends with segment r summed over all members; each member sends p-1 segments."""
    p = len(arrays)
    bufs = [np.array(a, copy=True) for a in arrays]

    def seg(a, c):
        return a[:, segments[c]] if axis == 1 else a[segments[c], :]

    for step in range(p - 1):
        sent = []
        for r in range(p):
            c = (r - step - 1) % p
            dst = (r + 1) % p
            sent.append((dst, c, send(ledger, members[r], members[dst], np.ascontiguousarray(seg(bufs[r], c)), tag)))
        for dst, c, data in sent:
            if axis == 1:
                bufs[dst][:, segments[c]] += data
            else:
                bufs[dst][segments[c], :] += data
    return [np.array(seg(bufs[r], r), copy=True) for r in range(p)]


def _ring_allreduce_min(arrays: list[np.ndarray], members: list[int], ledger: Ledger, tag: str) -> list[np.ndarray]:
    """Ring all-reduce with ``min`` (reduce-scatter then all-gather, [Patarasuk09])."""
    p = len(arrays)
    n = arrays[0].shape[0]
    if p == 1:
        return [np.array(arrays[0], copy=True)]
    segs = partition(n, p)
    bufs = [np.array(a, copy=True) for a in arrays]
    for step in range(p - 1):
        sent = []
        for r in range(p):
            c = (r - step - 1) % p
            dst = (r + 1) % p
            sent.append((dst, c, send(ledger, members[r], members[dst], bufs[r][segs[c]], tag)))
        for dst, c, data in sent:
            np.minimum(bufs[dst][segs[c]], data, out=bufs[dst][segs[c]])
    for step in range(p - 1):
        sent = []
        for r in range(p):
            c = (r - step) % p
            dst = (r + 1) % p
            sent.append((dst, c, send(ledger, members[r], members[dst], bufs[r][segs[c]], tag)))
        for dst, c, data in sent:
            bufs[dst][segs[c]] = data
    return bufs


def _allreduce(arrays: list[np.ndarray], ledger: Ledger, tag: str) -> list[np.ndarray]:
    if len(arrays) == 1:
        return [np.array(arrays[0], copy=True)]
    return ring_allreduce(arrays, ledger, tag)


def _grid(p: int) -> int:
    q = math.isqrt(p)
    if q * q != p:
        raise ParameterError(f"kernel-kmeans: parameter 'gpus': the 1.5d and 2d layouts need a square number of ranks, got {p}")
    return q


def _local_update(Et: np.ndarray, labels: np.ndarray, sizes: np.ndarray, G: np.ndarray, diag: np.ndarray):
    """Distances, objective contribution and new labels of a rank's own points (E^T is k x m)."""
    D = alg.distances(Et.T, sizes, G)
    obj = alg.objective(D, diag, labels)
    return alg.update_labels(D, diag, labels), obj


# --------------------------------------------------------------------------- 1D


def run_1d(X: np.ndarray, k: int, kp: dict, labels0: np.ndarray, max_iter: int, p: int) -> RunResult:
    """The 1-D layout over *p* simulated ranks (paper §IV-A, Alg. 1; eqs. 14-15).

    Returns
    -------
    RunResult
        Labels in global point order, equal to :func:`run_single`'s (same tie rule).
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    _check_gpus(n, p)
    own = partition(n, p)
    t0 = time.perf_counter()
    kled = Ledger()
    xall = allgather([X[s].ravel() for s in own], kled, "allgather-X")
    Kcol = [alg.kernel_matrix(xall[r].reshape(n, d), X[own[r]], kp) for r in range(p)]  # K[:, own_r]
    diag = [np.diag(Kcol[r][own[r], :]).copy() for r in range(p)]
    kernel_time = time.perf_counter() - t0

    def step(lab: list, led: Ledger) -> tuple[list, float]:
        gathered = allgather([lab[r] for r in range(p)], led, "allgather-V")
        Et, Gp = [], []
        for r in range(p):
            Et.append(alg.assign_matmul(gathered[r], k, Kcol[r]))  # k x n_r (SpMM)
            z = Et[r][lab[r], np.arange(lab[r].shape[0])]
            Gp.append(np.bincount(lab[r], weights=z, minlength=k).astype(np.float64))
        Gs = _allreduce(Gp, led, "allreduce-c")
        new, obj = [], 0.0
        for r in range(p):
            sizes = np.bincount(gathered[r], minlength=k).astype(np.float64)
            nl, o = _local_update(Et[r], lab[r], sizes, Gs[r], diag[r])
            new.append(nl)
            obj += o
        return new, obj

    lab0 = [np.asarray(labels0[s], dtype=np.int64).copy() for s in own]
    lab, it = _iterate(lab0, max_iter, step)
    return RunResult(np.concatenate(lab), it.objs, len(it.times), it.times, kernel_time, it.converged, kled,
                     it.ledgers)


def _check_gpus(n: int, p: int) -> None:
    if p > n:
        raise ParameterError(f"kernel-kmeans: parameter 'gpus': expected <= number of points {n}, got {p}")


@dataclass
class _Iterations:
    objs: list[float] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    ledgers: list[Ledger] = field(default_factory=list)
    converged: bool = False


def _iterate(lab, max_iter: int, step) -> tuple:
    """Run ``step(labels, ledger) -> (new labels, objective)`` until no label changes or
    ``max_iter`` iterations, timing each and giving each a fresh ledger. ``lab`` is a list or a
    dict of label pieces (per rank); the final pieces and the iterations' record come back."""
    it = _Iterations()
    alg.assign_matmul_kernel()  # load (or compile) the local SpMM before the timed iterations
    for _ in range(max_iter):
        t = time.perf_counter()
        led = Ledger()
        new, obj = step(lab, led)
        it.objs.append(obj)
        it.times.append(time.perf_counter() - t)
        it.ledgers.append(led)
        pairs = zip(new, lab) if isinstance(lab, list) else ((new[key], lab[key]) for key in lab)
        if all(np.array_equal(x, y) for x, y in pairs):
            it.converged = True
            break
        lab = new
    return lab, it


# --------------------------------------------------------------------------- 1.5D


def run_15d(X: np.ndarray, k: int, kp: dict, labels0: np.ndarray, max_iter: int, p: int) -> RunResult:
    """The 1.5-D layout over a sqrt(p) x sqrt(p) grid (paper §IV-C, Alg. 2, Fig. 1; eqs. 23-25).

    Ranks are column-major: rank ``r = j q + i`` is grid position (i, j) and owns chunk r of the
    1-D partition, which is sub-block i of column block j.
    """
    X = np.asarray(X, dtype=np.float64)
    _check_gpus(X.shape[0], p)
    t0 = time.perf_counter()
    grid = _Grid15D(X.shape[0], k, p)
    kled = Ledger()
    Kb, diag = grid.kernel_blocks(X, kp, kled)
    kernel_time = time.perf_counter() - t0

    def step(lab: dict, led: Ledger) -> tuple[dict, float]:
        Et = grid.reduce_scatter_e(grid.gather_labels(lab, led), Kb, led)
        return grid.update(lab, Et, diag, led)

    q, own = grid.q, grid.own
    lab0 = {(i, j): np.asarray(labels0[own[grid.rank(i, j)]], dtype=np.int64).copy() for i in range(q) for j in range(q)}
    lab, it = _iterate(lab0, max_iter, step)
    labels = np.concatenate([lab[(i, j)] for (i, j) in [(r % q, r // q) for r in range(p)]])
    return RunResult(labels, it.objs, len(it.times), it.times, kernel_time, it.converged, kled, it.ledgers)


class _Grid15D:
    """The sqrt(p) x sqrt(p) grid of the 1.5-D layout: rank ``j q + i`` (column-major) owns chunk
    ``j q + i`` of the 1-D partition, sub-block i of column block j."""

    def __init__(self, n: int, k: int, p: int) -> None:
        self.q = q = _grid(p)
        self.own = own = partition(n, p)
        self.blk = [slice(own[b * q].start, own[b * q + q - 1].stop) for b in range(q)]  # block b = chunks bq..bq+q-1
        self.k = k

    def rank(self, i: int, j: int) -> int:
        return j * self.q + i

    def kernel_blocks(self, X: np.ndarray, kp: dict, kled: Ledger) -> tuple[dict, dict]:
        """K of (block i, block j) at rank (i, j): X[block j] by an all-gather along column j,
        X[block i] broadcast from the diagonal (i, i) along row i (eqs. 23-24); and each rank's
        slice of diag(K)."""
        q, own, blk, rank, d = self.q, self.own, self.blk, self.rank, X.shape[1]
        xcol = {}
        for j in range(q):
            members = [rank(i, j) for i in range(q)]
            out = _group_allgather([X[own[m]].ravel() for m in members], members, kled, "allgather-X")
            for i in range(q):
                xcol[(i, j)] = out[i].reshape(-1, d)
        xrow = {}
        for i in range(q):
            out = _group_broadcast(xcol[(i, i)], [rank(i, j) for j in range(q)], i, kled, "bcast-X")
            for j in range(q):
                xrow[(i, j)] = out[j]
        Kb = {(i, j): alg.kernel_matrix(xrow[(i, j)], xcol[(i, j)], kp) for i in range(q) for j in range(q)}
        diag = {}
        for j in range(q):
            Kjj = Kb[(j, j)]
            for i in range(q):
                s = own[rank(i, j)]
                off = s.start - blk[j].start
                diag[(i, j)] = np.diag(Kjj)[off:off + s.stop - s.start].copy()
        return Kb, diag

    def gather_labels(self, lab: dict, led: Ledger) -> dict:
        """V of block i: column i's labels gathered on the diagonal (i, i), broadcast along row i."""
        q, rank = self.q, self.rank
        vrow = {}
        for i in range(q):
            parts = [send(led, rank(ii, i), rank(i, i), lab[(ii, i)], "gather-V") for ii in range(q)]
            out = _group_broadcast(np.concatenate(parts), [rank(i, j) for j in range(q)], i, led, "bcast-V")
            for j in range(q):
                vrow[(i, j)] = out[j]
        return vrow

    def reduce_scatter_e(self, vrow: dict, Kb: dict, led: Ledger) -> dict:
        """Local SpMM and the column-split reduce-scatter along each process column (eq. 25)."""
        q, own, blk, rank = self.q, self.own, self.blk, self.rank
        Et = {}
        for j in range(q):
            partial = [alg.assign_matmul(vrow[(i, j)], self.k, Kb[(i, j)]) for i in range(q)]
            segs = [slice(own[rank(i, j)].start - blk[j].start, own[rank(i, j)].stop - blk[j].start) for i in range(q)]
            out = _ring_reduce_scatter(partial, segs, [rank(i, j) for i in range(q)], led, "reduce-scatter-E", axis=1)
            for i in range(q):
                Et[(i, j)] = out[i]
        return Et

    def update(self, lab: dict, Et: dict, diag: dict, led: Ledger) -> tuple[dict, float]:
        """Sizes and G by one all-reduce of 2k words over all ranks, then each rank's new labels."""
        q, k = self.q, self.k
        order = [(i, j) for j in range(q) for i in range(q)]  # rank order
        vec = []
        for (i, j) in order:
            l = lab[(i, j)]
            z = Et[(i, j)][l, np.arange(l.shape[0])]
            vec.append(np.concatenate([np.bincount(l, minlength=k).astype(np.float64),
                                       np.bincount(l, weights=z, minlength=k)]))
        tot = _allreduce(vec, led, "allreduce-c")
        new, obj = {}, 0.0
        for r, (i, j) in enumerate(order):
            nl, o = _local_update(Et[(i, j)], lab[(i, j)], tot[r][:k], tot[r][k:], diag[(i, j)])
            new[(i, j)] = nl
            obj += o
        return new, obj


# --------------------------------------------------------------------------- 2D


def run_2d(X: np.ndarray, k: int, kp: dict, labels0: np.ndarray, max_iter: int, p: int) -> RunResult:
    """The 2-D layout over a sqrt(p) x sqrt(p) grid (paper §IV-B, eqs. 18-19; our reading of the
    layout, see the module docstring).

    Ranks are row-major: rank ``r = i q + j`` is grid position (i, j) and owns chunk r, which is
    sub-block j of row block i.
    """
    X = np.asarray(X, dtype=np.float64)
    _check_gpus(X.shape[0], p)
    t0 = time.perf_counter()
    grid = _Grid2D(X.shape[0], k, p)
    kled = Ledger()
    Kb, diagb = grid.kernel_blocks(X, kp, kled)
    kernel_time = time.perf_counter() - t0

    def step(colab: dict, led: Ledger) -> tuple[dict, float]:
        vrow = grid.gather_labels(colab, led)
        Eg = grid.reduce_scatter_e(vrow, Kb, led)
        SG = grid.sizes_and_g(colab, Eg, led)
        new: dict = {}
        obj = 0.0
        for j in range(grid.q):
            obj = grid.assign_column(j, colab[(0, j)], diagb[j], Eg, SG, led, new, obj)
        return new, obj

    # state: every rank of column j knows the labels of block j
    q, blk = grid.q, grid.blk
    colab0 = {(i, j): np.asarray(labels0[blk[j]], dtype=np.int64).copy() for i in range(q) for j in range(q)}
    colab, it = _iterate(colab0, max_iter, step)
    labels = np.concatenate([colab[(0, j)] for j in range(q)])
    return RunResult(labels, it.objs, len(it.times), it.times, kernel_time, it.converged, kled, it.ledgers)


class _Grid2D:
    """The sqrt(p) x sqrt(p) grid of the 2-D layout: rank ``i q + j`` owns chunk ``i q + j``
    (sub-block j of row block i); cluster group g_i is handled along row i."""

    def __init__(self, n: int, k: int, p: int) -> None:
        self.q = q = _grid(p)
        self.own = own = partition(n, p)
        self.blk = [slice(own[b * q].start, own[b * q + q - 1].stop) for b in range(q)]
        self.groups = np.array_split(np.arange(k), q)  # cluster groups g_0..g_{q-1} (may be empty if k < q)
        self.k = k

    def rank(self, i: int, j: int) -> int:
        return i * self.q + j

    def row(self, i: int) -> list[int]:
        return [self.rank(i, j) for j in range(self.q)]

    def col(self, j: int) -> list[int]:
        return [self.rank(i, j) for i in range(self.q)]

    def kernel_blocks(self, X: np.ndarray, kp: dict, kled: Ledger) -> tuple[dict, dict]:
        """K of (block i, block j) at rank (i, j): X[block i] by an all-gather along row i, X[block j]
        broadcast from the diagonal (j, j) along column j (eqs. 18-19)."""
        q, own, d = self.q, self.own, X.shape[1]
        xrow = {}
        for i in range(q):
            out = _group_allgather([X[own[m]].ravel() for m in self.row(i)], self.row(i), kled, "allgather-X")
            for j in range(q):
                xrow[(i, j)] = out[j].reshape(-1, d)
        xcol = {}
        for j in range(q):
            out = _group_broadcast(xrow[(j, j)], self.col(j), j, kled, "bcast-X")
            for i in range(q):
                xcol[(i, j)] = out[i]
        Kb = {(i, j): alg.kernel_matrix(xrow[(i, j)], xcol[(i, j)], kp) for i in range(q) for j in range(q)}
        diagb = {j: np.diag(Kb[(j, j)]).copy() for j in range(q)}  # K_ii of block j (known to column j)
        return Kb, diagb

    def gather_labels(self, colab: dict, led: Ledger) -> dict:
        """Transpose ((i, j) gets sub-block j of block i from (j, i), which knows block i), then
        all-gather V_i along row i."""
        q, own, blk = self.q, self.own, self.blk
        mine = {}
        for i in range(q):
            for j in range(q):
                s = own[self.rank(i, j)]
                piece = colab[(j, i)][s.start - blk[i].start:s.stop - blk[i].start]
                mine[(i, j)] = send(led, self.rank(j, i), self.rank(i, j), piece, "transpose-V")
        vrow = {}
        for i in range(q):
            out = _group_allgather([mine[(i, j)] for j in range(q)], self.row(i), led, "allgather-V")
            for j in range(q):
                vrow[(i, j)] = out[j]
        return vrow

    def reduce_scatter_e(self, vrow: dict, Kb: dict, led: Ledger) -> dict:
        """Local SpMM, then reduce-scatter along column j split by cluster groups (rows of E^T):
        rank (i, j) ends with E of group g_i over block j (|g_i| x n_j)."""
        q = self.q
        segs = [slice(int(g[0]), int(g[-1]) + 1) if g.size else slice(0, 0) for g in self.groups]
        Eg = {}
        for j in range(q):
            partial = [alg.assign_matmul(vrow[(i, j)], self.k, Kb[(i, j)]) for i in range(q)]
            out = _ring_reduce_scatter(partial, segs, self.col(j), led, "reduce-scatter-E", axis=0)
            for i in range(q):
                Eg[(i, j)] = out[i]
        return Eg

    def sizes_and_g(self, colab: dict, Eg: dict, led: Ledger) -> dict:
        """Cluster sizes and G of group g_i: partial over block j, all-reduced along row i."""
        SG = {}
        for i in range(self.q):
            g = self.groups[i]
            base = g[0] if g.size else 0
            vec = []
            for j in range(self.q):
                l = colab[(i, j)]
                ing = np.isin(l, g)
                z = np.zeros(l.shape[0])
                z[ing] = Eg[(i, j)][l[ing] - base, np.nonzero(ing)[0]]
                cnt = np.bincount(l[ing] - base, minlength=g.size).astype(np.float64)
                gs = np.bincount(l[ing] - base, weights=z[ing], minlength=g.size)
                vec.append(np.concatenate([cnt, gs]))
            sub = Ledger()
            out = _allreduce(vec, sub, "allreduce-c") if g.size else vec
            _into(led, sub, self.row(i))
            for j in range(self.q):
                SG[(i, j)] = out[j]
        return SG

    def assign_column(self, j: int, lj: np.ndarray, dj: np.ndarray, Eg: dict, SG: dict, led: Ledger,
                      new: dict, obj: float) -> float:
        """Distances of every group for block j, then the argmin over groups along column j (a
        min-loc in two all-reduces: the value, then the lowest index within the tie tolerance);
        writes the new labels of column j into ``new`` and returns ``obj`` plus block j's objective
        (summed in the order of a single loop, so the float result does not depend on the split)."""
        q, members = self.q, self.col(j)
        Dg = []
        for i in range(q):
            g = self.groups[i]
            if g.size:
                Dg.append(alg.distances(Eg[(i, j)].T, SG[(i, j)][:g.size], SG[(i, j)][g.size:]))
            else:
                Dg.append(np.full((lj.shape[0], 0), np.inf))
        mins = [Dg[i].min(axis=1) if Dg[i].shape[1] else np.full(lj.shape[0], np.inf) for i in range(q)]
        gmin = _ring_allreduce_min(mins, members, led, "minloc-value")
        codes = []
        for i in range(q):
            code, share = self._candidate_code(self.groups[i], Dg[i], gmin[i], lj, dj)
            codes.append(code)
            if share is not None:
                obj += share
        best = _ring_allreduce_min(codes, members, led, "minloc-index")
        for i in range(q):
            new[(i, j)] = np.where(best[i] < 0, lj, best[i]).astype(np.int64)
        return obj

    @staticmethod
    def _candidate_code(g: np.ndarray, D: np.ndarray, m: np.ndarray, lj: np.ndarray,
                        dj: np.ndarray) -> tuple[np.ndarray, float | None]:
        """Per point: -1 if its current label is within the tie tolerance of the minimum (keep it),
        else the lowest candidate cluster of group g (inf: none); and the group's objective share
        (None for an empty group)."""
        tol = alg.TIE_RTOL * (np.abs(dj) + np.abs(m))
        code = np.full(lj.shape[0], np.inf)
        if not g.size:
            return code, None
        cand = D <= (m + tol)[:, None]
        first = g[0] + np.argmax(cand, axis=1)
        code = np.where(cand.any(axis=1), first.astype(np.float64), np.inf)
        ing = np.isin(lj, g)
        keep = np.zeros(lj.shape[0], dtype=bool)
        keep[ing] = cand[np.nonzero(ing)[0], lj[ing] - g[0]]
        code[keep] = -1.0  # the current label is a candidate: keep it
        return code, float(np.sum(dj[ing] + D[np.nonzero(ing)[0], lj[ing] - g[0]]))


def run(variant: str, X: np.ndarray, k: int, kp: dict, labels0: np.ndarray, max_iter: int,
        p: int = 1, window: int = 8192) -> RunResult:
    """Dispatch by variant name (``dense``, ``popcorn``, ``sliding-window``, ``1d``, ``1.5d``, ``2d``)."""
    if variant in SINGLE:
        return run_single(X, k, kp, labels0, max_iter, variant, window)
    if variant == "1d":
        return run_1d(X, k, kp, labels0, max_iter, p)
    if variant == "1.5d":
        return run_15d(X, k, kp, labels0, max_iter, p)
    if variant == "2d":
        return run_2d(X, k, kp, labels0, max_iter, p)
    raise ParameterError(f"kernel-kmeans: unknown variant {variant!r}; expected one of {list(SINGLE + LAYOUTS)}")
