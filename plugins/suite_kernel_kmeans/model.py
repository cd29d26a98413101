"""Cost model of kernel k-means on GPUs: per-iteration time, K build, memory, by variant and layout.

Pure functions of (n, d, k, P, profile) built from :mod:`suite.perf` primitives. SI units:
seconds, bytes, B/s, FLOP/s. A "word" is one element (``w`` bytes: 4 for fp32, the paper's
precision, §V; labels are 32-bit integers, also 4 bytes).

Model
-----
**Local compute (roofline, [Williams09]; :func:`suite.perf.roofline_time`).**

* K block ``m_i x m_j`` from ``X_i X_j^T`` fused with the kernel function:
  ``F = 2 m_i m_j d + c_kappa m_i m_j`` FLOPs, ``B = (m_i + m_j) d w + m_i m_j w`` bytes
  (paper eq. 1 by GEMM; single device by SYRK, ``F = n (n+1) d``, Popcorn's run-time choice).
  ``c_kappa`` = 0 (linear), 3 (polynomial), 4 (Gaussian), 3 (sigmoid) FLOPs per entry.
* SpMM ``V_i K_ij`` (V one nonzero per column): ``F = 2 m_i m_j``,
  ``B = m_i m_j w + m_i (w + 4) + k m_j w`` -- reading K once dominates, so it is bound by HBM
  bandwidth (Popcorn, PPoPP 2025: ``T_iter ~ 4 n^2 / (P BW)``).
* Dense baseline ``K V^T`` with dense V: ``F = 2 n^2 k``, ``B = n^2 w + 2 n k w``.
* Cluster update on a rank's ``m`` points: ``F = 4 m k``, ``B = 3 m k w`` (E read, D written, read
  for the argmin).
* Sliding window (single GPU, §VI-D): every iteration, for each of ``ceil(n / b)`` block rows,
  the K block (``F = 2 b n d + c_kappa b n``, ``B = (b + n) d w + b n w``) and its product with
  the dense V^T (``F = 2 b n k``, ``B = b n w + n k w``).

**Communication (alpha-beta, [Hockney94]; collectives of [Thakur05] from :mod:`suite.perf.comm`).**
Layouts follow the paper (Bellavita et al., arXiv 2601.17136v2 §IV, Table I) and the
collectives the simulation in :mod:`suite_kernel_kmeans.solvers` performs, so the model's word
counts equal the execute ledger's:

====== ============================================= =========================================================
layout K build (once)                                 each iteration
====== ============================================= =========================================================
1d     ring all-gather of X (n d), eq. 14              ring all-gather of labels (n), eq. 15; all-reduce G (k)
1.5d   all-gather X_j along columns (n d / q),        gather labels on the diagonal + binomial broadcast along
       binomial broadcast X_i along rows (n d / q)    rows (n / q), eq. 23; ring reduce-scatter of k n / q along
       (SUMMA-like, eqs. 9, 16)                       columns, eq. 24; all-reduce sizes and G (2k)
2d     as 1.5d (rows and columns swapped)             transpose (n / P) + all-gather of labels along rows
                                                      (n / q); reduce-scatter of k n / q along columns (eq. 18);
                                                      all-reduce of the group's sizes and G along rows (2k / q);
                                                      min-reduction of (value, code) pairs, 2 x n / q along
                                                      columns (the MPI_MINLOC update, eq. 19)
====== ============================================= =========================================================

with ``q = sqrt(P)``. Every collective is priced by :func:`suite.perf.collective_time` over the
group's placement (:func:`placement`): ranks sit on nodes in order (``devices_per_node``
consecutive ranks per node); a group inside one node crosses the intra-node level only, a group
across nodes every level it spans, and the layout's other groups of the same collective run at
once, sharing each node's NICs (every GPU of a node communicates at once in all layouts) and any
bus. Small all-reduces take the fastest algorithm (``auto``; what NCCL's tuner or an MPI library
selects by size, [Thakur05]); the others run the algorithm the simulation performs.

**Iteration and totals.** ``T_iter = sum of local phases + sum of collectives`` (no overlap;
the paper's implementation runs the phases one after another, Alg. 1-2);
``T_total = T_K + iterations x T_iter`` (100 iterations, §VI-A).

**Memory per GPU.** The K block ``(n^2 / P) w`` plus X blocks, gathered labels, partial and owned
E^T, D (see :func:`memory_per_gpu`). ``fits_memory`` compares it with ``device.memory``.

References
----------
.. [Bellavita26] J. Bellavita, M. Rubino, N. Iyer, A. Chang, A. Devarakonda, F. Vella, G. Guidi,
   "Communication-Avoiding Linear Algebraic Kernel K-Means on GPUs", arXiv 2601.17136v2 (2026):
   §II-B eqs. (1)-(8), §IV Table I and eqs. (9)-(25), §V, §VI-A..D.
.. [Popcorn25] J. Bellavita, T. Pasquali, L. Del Rio Martin, F. Vella, G. Guidi, "Popcorn:
   Accelerating Kernel K-means on GPUs through Sparse Linear Algebra", PPoPP 2025, pp. 426-440.
.. [Williams09] S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009.
.. [Hockney94] R. Hockney, Parallel Computing 20(3), 1994 (alpha-beta model).
.. [Thakur05] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
   Operations in MPICH", IJHPCA 19(1), 2005.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

from suite.api import ParameterError, Skip, require_devices, resolve_scale, roofline_time

from suite_kernel_kmeans.constants import DTYPE_BYTES  # bytes per element (defined there for the declaration)

__all__ = [
    "PAPER_GPUS",
    "gpus_of",
    "KERNEL_FLOPS",
    "Collective",
    "comm_plan",
    "words_per_rank",
    "memory_per_gpu",
    "placement",
    "collective_time",
    "predict",
    "DTYPE_BYTES",
]

KERNEL_FLOPS = {"linear": 0, "polynomial": 3, "gaussian": 4, "sigmoid": 3}
LABEL_BYTES = 4


@dataclass(frozen=True)
class Collective:
    """One collective of a layout, as the model and the simulation perform it.

    ``kind`` in {allgather, broadcast, gather, reduce-scatter, allreduce, allreduce-small, p2p};
    ``words`` is the operation's total size m in elements (an all-gather's gathered vector, a
    broadcast's message, a reduce-scatter's input per rank); ``group`` the number of ranks and
    ``stride`` the rank distance between group members (placement on nodes); ``phase`` is
    ``kernel`` (once) or ``iter`` (every iteration); ``elem`` the element size (data or label).
    """

    name: str
    kind: str
    words: float
    group: int
    stride: int
    phase: str
    elem: str = "data"


def _grid(p: int) -> int:
    q = math.isqrt(p)
    if q * q != p:
        raise ParameterError(f"kernel-kmeans: parameter 'gpus': the 1.5d and 2d layouts need a square number of GPUs, got {p}")
    return q


def comm_plan(variant: str, n: int, d: int, k: int, p: int) -> list[Collective]:
    """The collectives of one layout (see the module table; [Bellavita26] §IV, Table I).

    Parameters
    ----------
    variant : {"dense", "popcorn", "sliding-window", "1d", "1.5d", "2d"}
    n, d, k : int
        Points, features, clusters.
    p : int
        GPUs (ranks).

    Returns
    -------
    list of Collective (empty for single-GPU variants and for p = 1).
    """
    if variant in ("dense", "popcorn", "sliding-window") or p == 1:
        return []
    if variant == "1d":
        return [
            Collective("allgather-X", "allgather", n * d, p, 1, "kernel"),
            Collective("allgather-V", "allgather", n, p, 1, "iter", "label"),
            Collective("allreduce-c", "allreduce-small", k, p, 1, "iter"),
        ]
    q = _grid(p)
    if variant == "1.5d":  # column-major ranks: a column is q consecutive ranks, a row has stride q
        return [
            Collective("allgather-X", "allgather", n * d / q, q, 1, "kernel"),
            Collective("bcast-X", "broadcast", n * d / q, q, q, "kernel"),
            Collective("gather-V", "gather", n / q, q, 1, "iter", "label"),
            Collective("bcast-V", "broadcast", n / q, q, q, "iter", "label"),
            Collective("reduce-scatter-E", "reduce-scatter", k * n / q, q, 1, "iter"),
            Collective("allreduce-c", "allreduce-small", 2 * k, p, 1, "iter"),
        ]
    if variant == "2d":  # row-major ranks: a row is q consecutive ranks, a column has stride q
        return [
            Collective("allgather-X", "allgather", n * d / q, q, 1, "kernel"),
            Collective("bcast-X", "broadcast", n * d / q, q, q, "kernel"),
            Collective("transpose-V", "p2p", n / p, 2, max(q - 1, 1), "iter", "label"),
            Collective("allgather-V", "allgather", n / q, q, 1, "iter", "label"),
            Collective("reduce-scatter-E", "reduce-scatter", k * n / q, q, q, "iter"),
            Collective("allreduce-c", "allreduce-small", 2 * k / q, q, 1, "iter"),
            Collective("minloc-value", "allreduce", n / q, q, q, "iter"),
            Collective("minloc-index", "allreduce", n / q, q, q, "iter"),
        ]
    raise ParameterError(f"kernel-kmeans: unknown variant {variant!r}")


def _received(c: Collective) -> float:
    """Words the busiest rank of the group receives (ring/binomial algorithms of [Thakur05])."""
    g = c.group
    if g <= 1 or c.words == 0:
        return 0.0
    if c.kind in ("allgather", "reduce-scatter", "gather"):
        return (g - 1) / g * c.words
    if c.kind == "broadcast":
        return c.words
    if c.kind in ("allreduce", "allreduce-small"):
        return 2 * (g - 1) / g * c.words
    if c.kind == "p2p":
        return c.words
    raise ValueError(c.kind)


def words_per_rank(plan: list[Collective], phase: str) -> float:
    """Words received by the busiest rank in one phase (``kernel`` or ``iter``), summed over the
    phase's collectives. For 1.5d the busiest rank is off the diagonal (it receives the broadcast
    of n/q labels rather than the gather of (q-1) n/P), so ``gather`` is not added to it;
    for 2d the diagonal rank skips the transpose but every other rank receives it."""
    total = 0.0
    kinds = {c.kind for c in plan if c.phase == phase}
    for c in plan:
        if c.phase != phase:
            continue
        if c.kind == "gather" and "broadcast" in kinds:
            continue
        total += _received(c)
    return total


@functools.lru_cache(maxsize=1024)
def _busiest_group(dpn: int, group: int, stride: int, p: int) -> tuple[int, int, int | None, int]:
    """(ranks_per_node, nodes, ranks, concurrent) of the busiest group of :func:`placement`'s exact
    case (cached: a sweep asks for the same few shapes many times; O(p) each)."""
    block = group * stride
    members: dict[tuple[int, int], dict[int, int]] = {}  # group -> node -> members there
    on_node: dict[int, set[tuple[int, int]]] = {}  # node -> groups with members there
    for r in range(p):
        gid, node = (r // block, r % stride), r // dpn
        members.setdefault(gid, {}).setdefault(node, 0)
        members[gid][node] += 1
        on_node.setdefault(node, set()).add(gid)

    def shape(gid):
        nodes = members[gid]
        return len(nodes), max(nodes.values()), max(len(on_node[n]) for n in nodes)

    nodes, per, conc = max(shape(g) for g in members)
    if group <= per * (nodes - 1):  # uneven (e.g. 1, 2, 1 members): Group has a partial last node only
        nodes = -(-group // per)
    return per, nodes, (group if group != per * nodes else None), conc


def placement(profile, group: int, stride: int, p: int | None = None):
    """The :class:`suite.perf.Group` of one collective over ``group`` ranks spaced ``stride``
    apart in a *p*-GPU layout placed ``devices_per_node`` per node in order, with every other
    group of the same collective running at once (``Group.concurrent``: the groups that share
    a node's NICs or a bus).

    When ``group * stride`` divides *p* the layout's groups are known exactly: rank ``r`` belongs
    to group ``(r // (group stride), r mod stride)`` (consecutive groups for ``stride == 1``, the
    rows or columns of a ``q x q`` grid otherwise) and sits on node ``r // devices_per_node``.
    The group returned is the busiest one (most nodes, then most members on one node, then most
    groups sharing one of its nodes): its members on its fullest node, the nodes it spans, its
    size when the last node is partly filled, and the most groups with members on any of its
    nodes. So a group of 3 consecutive ranks on 4-GPU nodes (ranks 3..5 of a 3 x 3 grid)
    straddles two nodes. A group spread unevenly (1, 2, 1 members on three nodes) is priced as
    its fullest node's count on ``ceil(group / count)`` nodes, the shape :class:`Group` holds.

    Otherwise (the 2d transpose's pairs, spaced ``q - 1``) the approximation by counts:

    * consecutive (``stride == 1``): inside a node when ``group`` divides ``devices_per_node``
      (``dpn / group`` groups per node), else ``devices_per_node`` per node over
      ``group / devices_per_node`` nodes;
    * strided: ``dpn / stride`` members per node when ``stride < dpn`` (``stride`` groups share
      a node), one per node otherwise (``dpn`` groups share each node).
    """
    from suite.api import Group

    dpn = profile.devices_per_node
    p = group * stride if p is None else p
    if p % (group * stride) == 0:
        per, nodes, ranks, conc = _busiest_group(dpn, group, stride, p)
        return Group(per, nodes, ranks=ranks, concurrent=conc)
    if p <= dpn:
        return Group(group, 1, concurrent=max(1, p // group))
    if stride == 1:
        if group <= dpn and dpn % group == 0:
            return Group(group, 1, concurrent=dpn // group)
        per = min(group, dpn)
        nodes = -(-group // per)
        return Group(per, nodes, ranks=group if group != per * nodes else None)
    if stride < dpn:
        per = max(1, min(group, dpn // stride))
        nodes = -(-group // per)
        return Group(per, nodes, ranks=group if group != per * nodes else None, concurrent=min(stride, dpn))
    return Group(1, group, concurrent=dpn)


#: the algorithm each collective of the layouts runs (as the simulation in solvers performs it)
_ALGO = {"allgather": ("allgather", "ring"), "gather": ("allgather", "ring"),
         "reduce-scatter": ("reduce-scatter", "ring"), "broadcast": ("broadcast", "tree"),
         "allreduce": ("allreduce", "ring"), "allreduce-small": ("allreduce", "auto"), "p2p": ("p2p", "p2p")}


def collective_time(c: Collective, profile, w: int, p: int | None = None) -> float:
    """Time (s) of one collective of a *p*-GPU layout on *profile*, data elements of *w* bytes:
    :func:`suite.perf.collective_time` over the group's :func:`placement` (every level it
    crosses, the NICs and media shared with the layout's other groups, the reduction term).
    Ring all-gather (a gather is priced as one), ring reduce-scatter, binomial broadcast, ring
    all-reduce, and for the small all-reduce of the centroid norms the fastest algorithm
    (``auto``); p2p between two nodes when the group spans nodes.

    Raises
    ------
    Skip
        The profile has no network level.
    """
    if c.group <= 1 or c.words == 0:
        return 0.0
    if not profile.network:
        raise Skip(f"profile {profile.name!r} has no [[network]] level; a distributed layout needs one")
    from suite.api import collective_time as price

    m = c.words * (LABEL_BYTES if c.elem == "label" else w)
    op, algo = _ALGO[c.kind]
    g = placement(profile, c.group, c.stride, p)
    if c.kind == "p2p":
        from suite.api import Group

        g = Group(1, 2, concurrent=g.concurrent * g.ranks_per_node) if g.nodes > 1 else Group(2, 1, concurrent=g.concurrent)
    return price(op, m, g, profile, algo).time


def memory_per_gpu(variant: str, n: int, d: int, k: int, p: int, w: int, window: int = 8192) -> float:
    """Bytes one GPU holds (the largest rank): K or its block, X or its blocks, V, E, D.

    * dense: ``n^2 w + n d w + k n w (V) + 2 n k w (E, D)``
    * popcorn: ``n^2 w + n d w + n (w + 4) (V, CSR) + 2 n k w``
    * sliding-window: ``b n w + n d w + k n w (dense V) + 2 n k w``
    * 1d: ``n^2/P w + n d w (X replicated) + n 4 (labels) + 2 k n/P w``
    * 1.5d / 2d: ``n^2/P w + 2 n d/q w + n/q (w + 4) + k n/q w (partial) + 2 k n/P w``
    """
    if variant == "dense":
        return n * n * w + n * d * w + k * n * w + 2 * n * k * w
    if variant == "popcorn":
        return n * n * w + n * d * w + n * (w + 4) + 2 * n * k * w
    if variant == "sliding-window":
        b = min(window, n)
        return b * n * w + n * d * w + k * n * w + 2 * n * k * w
    if variant == "1d":
        return n * n / p * w + n * d * w + n * LABEL_BYTES + 2 * k * n / p * w
    q = _grid(p)
    return n * n / p * w + 2 * n * d / q * w + n / q * (w + 4) + k * n / q * w + 2 * k * n / p * w


def _kblock(mi: float, mj: float, d: int, ck: int, w: int, peak: float, bw: float, syrk: bool = False) -> float:
    flops = (mi * (mi + 1) * d if syrk else 2 * mi * mj * d) + ck * mi * mj
    return roofline_time(flops, (mi + mj) * d * w + mi * mj * w, peak, bw)


def predict(variant: str, profile, n: int, d: int, k: int, p: int = 1, iterations: int = 100,
            dtype: str = "fp32", kernel: str = "polynomial", window: int = 8192) -> dict:
    """Predicted times, traffic and memory of one variant.

    Parameters
    ----------
    variant : str
        ``dense``, ``popcorn``, ``sliding-window`` (one GPU) or ``1d``, ``1.5d``, ``2d`` (p GPUs).
    profile : suite.hardware.Profile
    n, d, k : int
        Points, features, clusters.
    p : int
        GPUs for the layouts (ignored by the single-GPU variants).
    iterations : int
        Clustering iterations (paper: 100).
    dtype : {"fp32", "fp64"}
        Precision of K, X and E (paper: fp32).
    kernel : str
        Sets the kernel function's FLOPs per entry (:data:`KERNEL_FLOPS`).
    window : int
        Sliding-window block rows b (paper: 8192).

    Returns
    -------
    dict with ``time_per_iteration``, ``kernel_time``, ``total_time`` (s), ``comm_time_per_iteration``,
    ``kernel_comm_time`` (s), ``words_per_iteration``, ``words_kernel`` (per busiest rank),
    ``memory_per_gpu`` (B), ``fits_memory`` (bool), ``gpus`` and a per-phase ``breakdown`` (s).

    Raises
    ------
    Skip
        More GPUs than the profile has, or a layout on a profile without a network.
    ParameterError
        A non-square GPU count for 1.5d/2d.
    """
    dev = profile.require_device()
    if dtype not in DTYPE_BYTES:
        raise ParameterError(f"kernel-kmeans: parameter 'dtype': expected one of {list(DTYPE_BYTES)}, got {dtype!r}")
    w = DTYPE_BYTES[dtype]
    peak = dev.flops(dtype)
    bw = dev.memory_bandwidth
    ck = KERNEL_FLOPS.get(kernel, 3)
    P = 1 if variant in ("dense", "popcorn", "sliding-window") else int(p)  # the single-GPU variants
    require_devices(profile, P, "gpus")
    t = _times(variant, profile, n, d, k, P, w, ck, peak, bw, window)
    mem = memory_per_gpu(variant, n, d, k, P, w, window)
    return {
        "time_per_iteration": t.time_per_iteration,
        "kernel_time": t.kernel_time,
        "total_time": t.kernel_time + iterations * t.time_per_iteration,
        "comm_time_per_iteration": t.comm_time_per_iteration,
        "kernel_comm_time": t.kernel_comm_time,
        "words_per_iteration": words_per_rank(t.plan, "iter"),
        "words_kernel": words_per_rank(t.plan, "kernel"),
        "memory_per_gpu": mem,
        "fits_memory": mem <= dev.memory,
        "gpus": P,
        "breakdown": t.breakdown,
    }


class _Times(NamedTuple):
    """What :func:`_times` returns: the collectives of one run (empty on one GPU), the phase times
    (s, by phase name), the kernel-matrix time, the time per iteration, and the communication
    time of the kernel phase and of one iteration (s; 0 on one GPU)."""

    plan: list[Collective]
    breakdown: dict[str, float]
    kernel_time: float
    time_per_iteration: float
    kernel_comm_time: float
    comm_time_per_iteration: float


def _times(variant: str, profile, n: int, d: int, k: int, P: int, w: int, ck: float, peak: float, bw: float,
           window: int) -> _Times:
    """The times of *variant* on *P* GPUs (:class:`_Times`). *w* is the bytes per word, *ck* the
    kernel's FLOPs per entry, *peak* (FLOP/s) and *bw* (B/s) the device's, *window* the
    sliding-window block rows."""
    if variant in ("dense", "popcorn", "sliding-window"):
        bd, kernel_time = _single_gpu_times(variant, n, d, k, w, ck, peak, bw, window)
        return _Times(plan=[], breakdown=bd, kernel_time=kernel_time, time_per_iteration=sum(bd.values()),
                      kernel_comm_time=0.0, comm_time_per_iteration=0.0)
    plan = comm_plan(variant, n, d, k, P)
    bd, comm_k, comm_iter = _layout_times(variant, plan, profile, n, d, k, P, w, ck, peak, bw)
    return _Times(plan=plan, breakdown=bd, kernel_time=bd["kernel_compute"] + comm_k,
                  time_per_iteration=bd["spmm_E"] + bd["update"] + comm_iter, kernel_comm_time=comm_k,
                  comm_time_per_iteration=comm_iter)


def _single_gpu_times(variant: str, n: int, d: int, k: int, w: int, ck: float, peak: float, bw: float,
                      window: int) -> tuple[dict[str, float], float]:
    """Per-iteration phase times (s) of a single-GPU variant, and its kernel-matrix time (0 for
    the sliding window, which recomputes K's block rows every iteration)."""
    if variant == "sliding-window":
        b = min(window, n)
        t_k, t_mm = 0.0, 0.0
        for s in range(math.ceil(n / b)):
            rows = min(b, n - s * b)
            t_k += _kblock(rows, n, d, ck, w, peak, bw)
            t_mm += roofline_time(2 * rows * n * k, rows * n * w + n * k * w, peak, bw)
        bd = {"kernel_recompute": t_k, "gemm_E": t_mm}
        kernel_time = 0.0
    else:
        kernel_time = _kblock(n, n, d, ck, w, peak, bw, syrk=True)
        if variant == "dense":
            bd = {"gemm_E": roofline_time(2 * n * n * k, n * n * w + 2 * n * k * w, peak, bw)}
        else:
            bd = {"spmm_E": roofline_time(2 * n * n, n * n * w + n * (w + 4) + k * n * w, peak, bw)}
    bd["update"] = roofline_time(4 * n * k, 3 * n * k * w, peak, bw)
    return bd, kernel_time


def _layout_times(variant: str, plan: list[Collective], profile, n: int, d: int, k: int, P: int, w: int,
                  ck: float, peak: float, bw: float) -> tuple[dict[str, float], float, float]:
    """Phase times (s) of a multi-GPU layout (local kernel block, SpMM, update, and each
    collective of its plan priced on the profile), the kernel phase's communication time and the
    per-iteration communication time."""
    if variant == "1d":
        mi, mj = n, n / P
        spmm_rows = n  # V (k x n) times K[:, own] (n x n/P)
    else:
        q = _grid(P)
        mi = mj = n / q
        spmm_rows = n / q
    kernel_comp = _kblock(mi, mj, d, ck, w, peak, bw)
    spmm = roofline_time(2 * spmm_rows * mj, spmm_rows * mj * w + spmm_rows * (w + 4) + k * mj * w, peak, bw)
    upd = roofline_time(4 * (n / P) * k, 3 * (n / P) * k * w, peak, bw)
    bd = {"spmm_E": spmm, "update": upd}
    comm_k = comm_iter = 0.0
    for c in plan:
        t = collective_time(c, profile, w, P)
        bd[c.name] = t
        if c.phase == "kernel":
            comm_k += t
        else:
            comm_iter += t
    bd["kernel_compute"] = kernel_comp
    return bd, comm_k, comm_iter


def problem_size(scenario) -> tuple[int, int]:
    """(n, d) of a model scenario: ``n`` from the parameter or the workload, ``d`` from the workload.

    Raises
    ------
    Skip
        The workload is not a dataset described by n and d.
    """
    wl = scenario.workload
    d = getattr(wl, "d", None)
    n = scenario.params.get("n") or getattr(wl, "n", None)
    if not n or not d:
        raise Skip(f"workload {getattr(wl, 'name', None)!r} is not a dataset with n and d; "
                   "the kernel k-means model needs one (e.g. mnist8m, higgs, kdd-sampled, digits)")
    return int(n), int(d)


#: the default scenario's GPUs (a 2 x 2 grid for 1.5d / 2d), when the profile holds them
PAPER_GPUS = 4


def gpus_of(params, profile) -> int:
    """``params['gpus']``, or when it is None (unset) the largest square (1.5d / 2d need one) of at
    most :data:`PAPER_GPUS` and the profile's devices; :data:`PAPER_GPUS` without a profile
    (:func:`suite.api.resolve_scale`)."""
    return resolve_scale(params, "gpus", profile, PAPER_GPUS, count="devices", square=True)


def evaluate(scenario) -> "Result":
    """Model fidelity: :func:`predict` for the scenario's variant, profile, workload and parameters.

    Metrics: ``time_per_iteration``, ``kernel_time``, ``total_time``, ``comm_time_per_iteration``,
    ``kernel_comm_time`` (s); ``words_per_iteration``, ``words_kernel`` (elements the busiest rank
    receives); ``peak_memory`` (B per GPU, :func:`memory_per_gpu`); ``fits`` (1 when it fits the
    device memory, else 0); ``gpus``; ``points``.
    Artifact ``breakdown``: seconds per phase and collective.
    """
    from suite.api import Result

    if scenario.profile is None:
        raise Skip("the model fidelity needs a hardware profile")
    n, d = problem_size(scenario)
    p = scenario.params
    if int(p["k"]) > n:
        raise ParameterError(f"kernel-kmeans: parameter 'k': expected <= number of points {n}, got {p['k']}")
    pr = predict(scenario.variant, scenario.profile, n, d, int(p["k"]), gpus_of(p, scenario.profile), int(p["iterations"]),
                 p["dtype"], p["kernel"], int(p["window"]))
    out = Result()
    for name in ("time_per_iteration", "kernel_time", "total_time", "comm_time_per_iteration", "kernel_comm_time"):
        out.add(name, pr[name], "s", "lower")
    out.add("words_per_iteration", pr["words_per_iteration"], "1", "lower")
    out.add("words_kernel", pr["words_kernel"], "1", "lower")
    out.add("peak_memory", pr["memory_per_gpu"], "B", "lower")
    out.add("fits", float(pr["fits_memory"]), "1", "higher")
    out.add("gpus", pr["gpus"], "1", "none")
    out.add("points", n, "1", "none")
    out.artifacts["breakdown"] = {k: float(v) for k, v in pr["breakdown"].items()}
    return out
