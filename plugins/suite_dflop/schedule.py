"""DFLOP's online micro-batch scheduler: samples into dp x m bins minimising the largest
per-bin cost of both components (vision, LLM).

The problem (authors' code ``data_scheduling.py``, a secondary source; the paper's README names an
ILP scheduler run asynchronously): given cost vectors ``d[c, i]`` (component c in {vision, LLM},
sample i) and ``k`` bins, choose ``x[i, j] in {0, 1}`` with every sample in exactly one bin and
no bin empty, minimising ``C`` subject to ``sum_i d[c, i] x[i, j] <= C`` for every bin j and
component c. The authors solve it with CP-SAT under 10 s; we use :func:`scipy.optimize.milp`
(HiGHS) with a time limit, after a multi-dimensional LPT greedy, and keep the better of the two.

* :func:`lower_bound` -- ``max_c max(max_i d[c, i], sum_i d[c, i] / k)``: no partition beats it.
* :func:`equal_count` -- the data-blind baseline: consecutive chunks of equal count in arrival order.
* :func:`lpt` -- longest processing time first (Graham 1969, "Bounds on multiprocessing timing
  anomalies", SIAM J. Appl. Math. 17(2)), extended to vectors: samples by decreasing
  largest component, each to the bin whose resulting largest component is smallest.
* :func:`ilp` -- the exact formulation above by HiGHS.
* :func:`schedule` -- LPT; skip the ILP when LPT meets the bound (then optimal), else the better.
  With a hiding budget (seconds of scheduler wall time, all of LPT, building and solving), the
  ILP's limit is cut to what is left of it (see :data:`HIDE_FRACTION`).
* :func:`brute_force` -- every assignment (the test oracle, k^n of them).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["Schedule", "lower_bound", "makespan", "equal_count", "lpt", "ilp", "schedule", "brute_force",
           "check_bins", "HIDE_FRACTION", "local_search", "ILP_MAX_BINARIES"]

#: Share of the modelled step time the scheduler of one global batch may take (a design choice, ours).
#: DFLOP runs the scheduler asynchronously (the authors' README), i.e. batch k+1 is scheduled on the
#: CPU while step k trains, which hides it only if it finishes within that step; the authors' code
#: gives CP-SAT a fixed 10 s, and no figure for the share is in the sources we have. We bound the
#: whole scheduler (LPT + ILP) by 5% of the step, the issue's hiding target, leaving the host CPU to
#: the data loader and the launch path for the rest; the ILP's limit is then
#: min(ilp_time_limit, 0.05 x step - time already spent).
HIDE_FRACTION = 0.05


@dataclass(frozen=True)
class Schedule:
    """A partition of samples into bins.

    Attributes
    ----------
    bins : tuple of tuple of int
        Sample indices of each bin (k bins, none empty).
    makespan : float
        ``max_j max_c`` load (same unit as the costs, s).
    bound : float
        :func:`lower_bound`.
    method : str
        ``equal-count``, ``lpt``, ``ilp`` (the ILP's partition won) or ``lpt-optimal`` (LPT met the
        bound, the ILP was skipped).
    solve_time : float
        Wall time of the scheduler (s).
    ilp_status : str
        What HiGHS reported (``skipped`` when not run).
    """

    bins: tuple
    makespan: float
    bound: float
    method: str
    solve_time: float = 0.0
    ilp_status: str = "skipped"

    @property
    def gap(self) -> float:
        """Relative gap to the lower bound, ``makespan / bound - 1`` (>= 0)."""
        return self.makespan / self.bound - 1.0 if self.bound > 0 else 0.0


def check_bins(n: int, k: int, dp: int | None = None, m: int | None = None) -> None:
    """Raise ``ValueError`` (one line) when *n* samples cannot fill *k* = dp x m bins."""
    if k < 1:
        raise ValueError(f"dflop: need >= 1 bin, got {k}")
    if n < k:
        what = f"dp={dp} x {m} micro-batches" if dp is not None else f"{k} bins"
        raise ValueError(f"dflop: global batch {n} over {what} leaves bins empty (need >= {k} samples)")


def _costs(d) -> np.ndarray:
    a = np.atleast_2d(np.asarray(d, dtype=float))
    if a.ndim != 2 or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError("dflop: costs must be a finite, non-negative (components, samples) array")
    return a


def lower_bound(d, k: int) -> float:
    """``max_c max(max_i d[c, i], sum_i d[c, i] / k)`` for costs *d* of shape (C, n)."""
    a = _costs(d)
    return float(max(np.max(a, axis=1).max(), (a.sum(axis=1) / k).max()))


def makespan(d, bins) -> float:
    """Largest per-bin, per-component load of a partition."""
    a = _costs(d)
    return float(max(a[:, list(b)].sum(axis=1).max() for b in bins))


def equal_count(d, k: int) -> Schedule:
    """Consecutive chunks in arrival order, sizes differing by at most one (Megatron's micro-batches)."""
    a = _costs(d)
    n = a.shape[1]
    check_bins(n, k)
    q, r = divmod(n, k)
    bins, s = [], 0
    for j in range(k):
        e = s + q + (1 if j < r else 0)
        bins.append(tuple(range(s, e)))
        s = e
    return Schedule(tuple(bins), makespan(a, bins), lower_bound(a, k), "equal-count")


def lpt(d, k: int) -> Schedule:
    """Vector LPT: decreasing largest component; each sample to the bin minimising the resulting
    largest component (ties: the smaller summed load, then the lower index). The first k samples
    open the k bins, so none is empty."""
    t0 = time.perf_counter()
    a = _costs(d)
    c, n = a.shape
    check_bins(n, k)
    order = np.lexsort((np.arange(n), -a.sum(axis=0), -a.max(axis=0)))
    load = np.zeros((c, k))
    members: list[list[int]] = [[] for _ in range(k)]
    for r, i in enumerate(order):
        i = int(i)
        if r < k:
            j = r
        else:
            new = load + a[:, i:i + 1]
            worst = new.max(axis=0)
            j = int(np.lexsort((np.arange(k), new.sum(axis=0), worst))[0])
        load[:, j] += a[:, i]
        members[j].append(i)
    bins = tuple(tuple(sorted(b)) for b in members)
    return Schedule(bins, float(load.max()), lower_bound(a, k), "lpt", time.perf_counter() - t0)


def ilp(d, k: int, time_limit: float = 10.0, deadline: float | None = None,
        node_limit: int | None = None) -> Schedule | None:
    """The exact ILP by HiGHS (:func:`scipy.optimize.milp`) under *time_limit* seconds, or, with
    *node_limit*, under that many branch-and-bound nodes and no time limit (a deterministic budget:
    the same answer on any machine and load).

    Variables ``x[i, j]`` (n k binaries, row-major) and ``C``; minimise C. With *deadline* (a
    ``time.perf_counter()`` instant) the solver gets ``min(time_limit, deadline - now)`` after the
    problem is built, and None is returned when nothing is left. Returns None when HiGHS found no
    feasible point within the limit.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix, vstack

    t0 = time.perf_counter()
    a = _costs(d)
    c, n = a.shape
    check_bins(n, k)
    nv = n * k + 1
    obj = np.zeros(nv)
    obj[-1] = 1.0
    idx = np.arange(n * k).reshape(n, k)
    # each sample in exactly one bin
    rows_a = coo_matrix((np.ones(n * k), (np.repeat(np.arange(n), k), idx.ravel())), shape=(n, nv))
    # each bin non-empty
    rows_b = coo_matrix((np.ones(n * k), (np.tile(np.arange(k), n), idx.ravel())), shape=(k, nv))
    # load_c,j - C <= 0
    loads = []
    for comp in range(c):
        r = np.tile(np.arange(k), n)
        v = np.repeat(a[comp], k)
        m = coo_matrix((np.concatenate([v, -np.ones(k)]), (np.concatenate([r, np.arange(k)]),
                                                           np.concatenate([idx.ravel(), np.full(k, nv - 1)]))),
                       shape=(k, nv))
        loads.append(m)
    A = vstack([rows_a, rows_b, *loads]).tocsr()
    lo = np.concatenate([np.ones(n), np.ones(k), np.full(c * k, -np.inf)])
    hi = np.concatenate([np.ones(n), np.full(k, np.inf), np.zeros(c * k)])
    integrality = np.ones(nv)
    integrality[-1] = 0
    ub = np.ones(nv)
    ub[-1] = np.inf
    if node_limit is not None:
        res = milp(obj, integrality=integrality, bounds=Bounds(np.zeros(nv), ub),
                   constraints=LinearConstraint(A, lo, hi), options={"node_limit": int(node_limit), "disp": False})
        return _ilp_result(res, a, n, k, t0)
    limit = float(time_limit)
    if deadline is not None:
        limit = min(limit, deadline - time.perf_counter())
        if limit < 1e-3:
            return None
    res = milp(obj, integrality=integrality, bounds=Bounds(np.zeros(nv), ub),
               constraints=LinearConstraint(A, lo, hi),
               options={"time_limit": max(limit, 1e-3), "disp": False})
    return _ilp_result(res, a, n, k, t0)


def _ilp_result(res, a, n: int, k: int, t0: float) -> Schedule | None:
    if res.x is None:
        return None
    x = res.x[:-1].reshape(n, k) > 0.5
    bins = tuple(tuple(int(i) for i in np.flatnonzero(x[:, j])) for j in range(k))
    if any(not b for b in bins) or int(x.sum()) != n:  # pragma: no cover - HiGHS honours the rows
        return None
    return Schedule(bins, makespan(a, bins), lower_bound(a, k), "ilp", time.perf_counter() - t0,
                    ilp_status=str(res.message))


def schedule(d, k: int, time_limit: float = 10.0, hide_budget: float | None = None,
             node_limit: int | None = None) -> Schedule:
    """DFLOP's scheduler: LPT; when LPT meets :func:`lower_bound` it is optimal and the ILP is
    skipped (``lpt-optimal``); ``time_limit = 0`` is LPT only; otherwise the better of LPT and the
    time-limited ILP (ties to LPT).

    Parameters
    ----------
    d : array, shape (2, n)
        Per-sample costs (s) of the two components.
    k : int
        Bins.
    time_limit : float
        The ILP's limit (s, ``ilp_time_limit``).
    hide_budget : float, optional
        Wall seconds the whole call may take (LPT, building the ILP, solving); the ILP gets
        ``min(time_limit, hide_budget - elapsed)``, and is not run when that is under 1 ms; when
        no ILP answer came within it, ``ilp_status = "hiding budget spent"``. None: no bound. The
        first call's import of the solver's modules (once per process) is kept off that clock.
    node_limit : int, optional
        A deterministic budget instead of the clocks: the ILP gets this many branch-and-bound
        nodes (HiGHS ``node_limit``), no time limit and no hiding budget; ``0`` = LPT only.

    Raises
    ------
    ValueError
        ``time_limit < 0`` (one line), or fewer samples than bins.
    """
    if not time_limit >= 0:
        raise ValueError(f"dflop: parameter 'ilp_time_limit': expected >= 0 s, got {time_limit:g}")
    t0 = time.perf_counter()
    g = lpt(d, k)
    if g.makespan <= g.bound * (1 + 1e-12):
        return Schedule(g.bins, g.makespan, g.bound, "lpt-optimal", time.perf_counter() - t0)
    if time_limit == 0 or node_limit == 0:
        return g
    if node_limit is not None:
        return _schedule_by_nodes(d, k, g, node_limit, t0)
    return _schedule_by_clock(d, k, g, time_limit, hide_budget, t0)


def _schedule_by_nodes(d, k: int, g: Schedule, node_limit: int, t0: float) -> Schedule:
    """The deterministic budget: *node_limit* HiGHS nodes, or :func:`local_search` moves above
    :data:`ILP_MAX_BINARIES`; LPT's partition *g* unless that improves on it."""
    n = _costs(d).shape[1]
    if n * k > ILP_MAX_BINARIES:  # HiGHS's root node alone is unbounded in time at this size
        e = local_search(d, k, g.bins, node_limit)
        if e.makespan < g.makespan * (1 - 1e-12):
            return e
        return Schedule(g.bins, g.makespan, g.bound, "lpt", time.perf_counter() - t0, e.ilp_status)
    e = ilp(d, k, node_limit=node_limit)
    took = time.perf_counter() - t0
    if e is not None and e.makespan < g.makespan * (1 - 1e-12):
        return Schedule(e.bins, e.makespan, e.bound, "ilp", took, e.ilp_status)
    return Schedule(g.bins, g.makespan, g.bound, "lpt", took, e.ilp_status if e is not None else "no solution")


def _schedule_by_clock(d, k: int, g: Schedule, time_limit: float, hide_budget: float | None, t0: float) -> Schedule:
    """The wall-clock budget: the ILP within *time_limit* and what is left of *hide_budget*;
    LPT's partition *g* unless the ILP improves on it."""
    t_imp = time.perf_counter()  # the solver's modules load once per process, not per batch:
    import scipy.optimize  # noqa: F401  kept off the budget's clock
    import scipy.sparse  # noqa: F401

    t0 += time.perf_counter() - t_imp
    deadline = None if hide_budget is None else t0 + float(hide_budget)
    e = ilp(d, k, time_limit, deadline)
    took = time.perf_counter() - t0
    if e is not None and e.makespan < g.makespan * (1 - 1e-12):
        return Schedule(e.bins, e.makespan, e.bound, "ilp", took, e.ilp_status)
    if e is not None:
        status = e.ilp_status
    elif deadline is not None and time.perf_counter() >= deadline - 1e-3:
        status = "hiding budget spent"  # before the solve, or HiGHS found no feasible point within it
    else:
        status = "no solution"
    return Schedule(g.bins, g.makespan, g.bound, "lpt", took, status)


#: Largest ILP (samples x bins binaries) the deterministic budget gives to HiGHS; above it HiGHS's root
#: node (presolve, cuts, heuristics), which a node budget does not bound, takes minutes, so the
#: scheduler improves LPT by :func:`local_search` with the same budget counted in moves instead.
ILP_MAX_BINARIES = 2048


def local_search(d, k: int, bins, moves: int) -> Schedule:
    """Deterministic improvement of a partition: at most *moves* times, move one sample of the
    fullest bin (largest component) to another bin, or swap it with a sample of another bin,
    whichever makes the larger of the two bins' new loads smallest, when that is below the current
    maximum; stops early when no move or swap improves.
    Every bin keeps at least one sample. ``method = "local-search"``."""
    t0 = time.perf_counter()
    a = _costs(d)
    c, n = a.shape
    assign = np.empty(n, dtype=np.int64)
    for j, b in enumerate(bins):
        assign[list(b)] = j
    load = np.zeros((c, k))
    for comp in range(c):
        load[comp] = np.bincount(assign, weights=a[comp], minlength=k)
    done = 0
    while done < moves:
        per_bin = load.max(axis=0)
        j = int(np.argmax(per_bin))
        cur = per_bin[j]
        members = np.flatnonzero(assign == j)
        if members.size < 2:
            break
        # moves: sample i of bin j to bin t
        src = (load[:, j][:, None] - a[:, members]).max(axis=0)  # (m,) bin j without sample i
        dst = (load[:, :, None] + a[:, None, members]).max(axis=0)  # (k, m) bin t with sample i
        dst[j] = np.inf
        worst = np.maximum(dst, src[None, :])
        t, i = np.unravel_index(int(np.argmin(worst)), worst.shape)
        best_move = worst[t, i]
        # swaps: sample i of bin j with sample i2 of another bin
        other = np.flatnonzero(assign != j)
        best_swap = np.inf
        if other.size:
            diff = a[:, other][:, None, :] - a[:, members][:, :, None]  # (c, m, o): a_i2 - a_i
            nj = (load[:, j][:, None, None] + diff).max(axis=0)
            nt = (load[:, assign[other]][:, None, :] - diff).max(axis=0)
            sw = np.maximum(nj, nt)
            si, so = np.unravel_index(int(np.argmin(sw)), sw.shape)
            best_swap = sw[si, so]
        if min(best_move, best_swap) >= cur * (1 - 1e-12):
            break
        if best_move <= best_swap:
            s_ = members[i]
            load[:, j] -= a[:, s_]
            load[:, t] += a[:, s_]
            assign[s_] = t
        else:
            s1, s2 = members[si], other[so]
            t2 = assign[s2]
            load[:, j] += a[:, s2] - a[:, s1]
            load[:, t2] += a[:, s1] - a[:, s2]
            assign[s1], assign[s2] = t2, j
        done += 1
    out = tuple(tuple(int(x) for x in np.flatnonzero(assign == j)) for j in range(k))
    return Schedule(out, makespan(a, out), lower_bound(a, k), "local-search", time.perf_counter() - t0,
                    ilp_status=f"local search, {done} moves of {moves}")


def brute_force(d, k: int) -> float:
    """Optimal makespan by enumerating all k^n assignments with no empty bin (test oracle;
    vectorised over assignments, n <= 10)."""
    a = _costs(d)
    n = a.shape[1]
    check_bins(n, k)
    if n > 10:
        raise ValueError(f"dflop: brute force is for n <= 10 samples, got {n}")
    A = np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int64)  # (k^n, n)
    onehot = A[:, :, None] == np.arange(k)[None, None, :]  # (k^n, n, k)
    full = onehot.any(axis=1).all(axis=1)
    loads = np.einsum("ci,aij->acj", a, onehot[full].astype(float))
    return float(loads.max(axis=(1, 2)).min())
