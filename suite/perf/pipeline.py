"""Pipeline-parallel plan primitives: layer partition over stages, 1F1B schedules, DP x PP plans.

Shared by techniques that search execution plans over a set of devices (dynamic parallelism,
fault-tolerant re-planning, pipeline schedulers). Pure functions, SI units (seconds).

* :func:`partition_layers` -- contiguous split of a layer sequence into ``p`` stages minimising
  the slowest stage (the bottleneck of a synchronous pipeline), solved exactly by dynamic
  programming.
* :func:`pipeline_1f1b_schedule` -- the exact 1F1B schedule of one pipeline by the DAG recurrence
  ``end(op) = max(end(predecessors)) + duration(op)``, with per-stage (optionally
  per-micro-batch) durations, so unbalanced stages and extra micro-batches are timed exactly.
* :func:`pipeline_1f1b_unbalanced_time` -- the closed form ``sum_s c_s + (m-1) max_s c_s`` that
  equals :func:`suite.perf.pipeline_1f1b_time` for balanced stages.
* :func:`enumerate_plans` -- every (DP, PP, TP) degree triple that fits a device count.

References
----------
.. [Narayanan19] D. Narayanan et al., "PipeDream: Generalized Pipeline Parallelism for DNN
   Training", SOSP 2019: the one-forward-one-backward (1F1B) schedule, and the partition of
   layers into stages that minimises the slowest stage (§3.1, dynamic programming).
.. [Narayanan21] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC 2021, §2.2: 1F1B with ``p`` stages and ``m`` micro-batches,
   warm-up of ``p - s - 1`` forwards on stage ``s``, bubble ``(p - 1)/m``.
.. [Jang23] I. Jang et al., "Oobleck: Resilient Distributed Training of Large Models Using
   Pipeline Templates", SOSP 2023: plans as (pipelines x stages) over the surviving nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "partition_layers",
    "stage_sums",
    "Schedule1F1B",
    "pipeline_1f1b_schedule",
    "pipeline_1f1b_unbalanced_time",
    "enumerate_plans",
    "split_microbatches",
]


def partition_layers(costs: Sequence[float], stages: int) -> tuple[int, ...]:
    """Split layers ``0..L-1`` into ``stages`` contiguous, non-empty stages minimising the
    largest stage cost [Narayanan19 §3.1].

    Parameters
    ----------
    costs : sequence of float, length L
        Cost of each layer (e.g. forward + backward time of one micro-batch, s); >= 0.
    stages : int
        Number of pipeline stages p, ``1 <= p <= L``.

    Returns
    -------
    tuple of int, length p + 1
        Stage boundaries ``b``: stage ``s`` holds layers ``b[s] .. b[s+1]-1``; ``b[0] = 0``,
        ``b[p] = L``. Among optimal splits, the one found by the DP (earliest boundaries on ties).

    Raises
    ------
    ValueError
        ``stages`` outside ``[1, L]`` or a negative cost.

    Notes
    -----
    ``F[k][j] = min_{i<j} max(F[k-1][i], S[j] - S[i])`` with ``S`` the prefix sums and
    ``F[1][j] = S[j]``; O(p L^2), vectorised over ``i`` and ``j`` (:func:`_dp_stage`).
    """
    c = np.asarray(costs, dtype=float)
    L = c.size
    if stages < 1 or stages > L:
        raise ValueError(f"stages must be in [1, {L}] (number of layers), got {stages}")
    if np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ValueError("layer costs must be finite and >= 0")
    S = np.concatenate([[0.0], np.cumsum(c)])
    inf = np.inf
    F = np.full((stages + 1, L + 1), inf)
    arg = np.zeros((stages + 1, L + 1), dtype=int)
    F[1, 1:] = S[1:]
    for k in range(2, stages + 1):
        _dp_stage(F, arg, S, k)
    bounds = [L]
    j = L
    for k in range(stages, 1, -1):
        j = int(arg[k, j])
        bounds.append(j)
    bounds.append(0)
    return tuple(reversed(bounds))


#: rows ``j`` of one block of :func:`_dp_stage` (a block's arrays are rows x (L + 1) floats)
_DP_ROWS = 256


def _dp_stage(F: np.ndarray, arg: np.ndarray, S: np.ndarray, k: int) -> None:
    """Row ``k`` of :func:`partition_layers`' tables, in place: for every ``j >= k``,
    ``F[k, j] = min over k-1 <= i < j of max(F[k-1, i], S[j] - S[i])`` and ``arg[k, j]`` the
    first ``i`` reaching it. Blocks of rows ``j`` at once, every other ``i`` set to +inf: the
    same maxima of the same two numbers as a loop over ``j``, and argmin's first minimum is
    the loop's earliest ``i`` (an allowed candidate is finite: costs are)."""
    L = S.size - 1
    i = np.arange(L + 1)
    for j0 in range(k, L + 1, _DP_ROWS):
        j = np.arange(j0, min(L + 1, j0 + _DP_ROWS))
        cand = np.maximum(F[k - 1][None, :], S[j][:, None] - S[None, :])
        cand[(i[None, :] < k - 1) | (i[None, :] >= j[:, None])] = np.inf
        best = np.argmin(cand, axis=1)
        F[k, j] = cand[np.arange(j.size), best]
        arg[k, j] = best


def stage_sums(costs: Sequence[float], bounds: Sequence[int]) -> np.ndarray:
    """Per-stage sums of layer costs for boundaries from :func:`partition_layers` (shape (p,))."""
    S = np.concatenate([[0.0], np.cumsum(np.asarray(costs, dtype=float))])
    b = np.asarray(bounds, dtype=int)
    out: np.ndarray = S[b[1:]] - S[b[:-1]]
    return out


@dataclass(frozen=True)
class Schedule1F1B:
    """The timed 1F1B schedule of one pipeline (s).

    ``fwd_end[s, i]`` / ``bwd_end[s, i]``: when the forward / backward of micro-batch ``i`` on
    stage ``s`` finishes. ``makespan`` is the iteration time (last backward on stage 0, or
    any later end); ``busy[s]`` the compute time of stage ``s``.
    """

    fwd_end: np.ndarray
    bwd_end: np.ndarray
    makespan: float
    busy: np.ndarray

    @property
    def bubble_fraction(self) -> np.ndarray:
        """Idle fraction of each stage over the makespan."""
        return 1.0 - self.busy / self.makespan if self.makespan > 0 else np.zeros_like(self.busy)


def _per_mb(t: ArrayLike, p: int, m: int, what: str) -> np.ndarray:
    a = np.asarray(t, dtype=float)
    if a.ndim == 1:
        if a.shape[0] != p:
            raise ValueError(f"{what}: need one duration per stage ({p}), got {a.shape[0]}")
        a = np.repeat(a[:, None], m, axis=1)
    elif a.shape != (p, m):
        raise ValueError(f"{what}: expected shape ({p},) or ({p}, {m}), got {a.shape}")
    if np.any(a < 0) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: durations must be finite and >= 0")
    return a


def pipeline_1f1b_schedule(t_fwd: ArrayLike, t_bwd: ArrayLike, microbatches: int, p2p: float = 0.0) -> Schedule1F1B:
    """Exact timing of one iteration of a 1F1B pipeline by the DAG recurrence [Narayanan21 §2.2].

    Parameters
    ----------
    t_fwd, t_bwd : array_like, shape (p,) or (p, m)
        Forward / backward time of one micro-batch on each stage (s); a (p, m) array gives a
        duration per micro-batch (e.g. a stage that also computes another stage's work).
    microbatches : int
        Micro-batches m per iteration, >= 1.
    p2p : float
        Time to send an activation (forward) or its gradient (backward) between adjacent stages
        (s), >= 0.

    Returns
    -------
    Schedule1F1B

    Notes
    -----
    Stage ``s`` of ``p`` runs ``w = min(p - s - 1, m)`` warm-up forwards, then alternates one
    forward and one backward, then drains the remaining backwards. Dependencies:
    ``F(s, i)`` after ``F(s-1, i) + p2p``; ``B(s, i)`` after ``B(s+1, i) + p2p`` (the last stage's
    ``B(p-1, i)`` after its own ``F(p-1, i)``); every op after the previous op of its stage.
    ``end = max(ready, stage free) + duration``. For balanced stages and ``p2p = 0`` the makespan
    is ``(m + p - 1)(t_f + t_b)``, as in :func:`suite.perf.pipeline_1f1b_time`.
    """
    if microbatches < 1:
        raise ValueError(f"microbatches must be >= 1, got {microbatches}")
    if p2p < 0:
        raise ValueError("p2p must be >= 0")
    tf = np.asarray(t_fwd, dtype=float)
    p = tf.shape[0] if tf.ndim >= 1 else 0
    if p < 1:
        raise ValueError("need at least one stage")
    m = int(microbatches)
    F = _per_mb(t_fwd, p, m, "t_fwd")
    B = _per_mb(t_bwd, p, m, "t_bwd")
    fe, be, free = _time_1f1b(_orders_1f1b(p, m), F.tolist(), B.tolist(), p2p)
    return Schedule1F1B(np.array(fe, dtype=float), np.array(be, dtype=float), float(max(free)),
                        F.sum(axis=1) + B.sum(axis=1))


#: a stage's operations in order: ("F" or "B", micro-batch)
_Ops = list[tuple[str, int]]
#: end times per stage and micro-batch, None until computed
_Ends = list[list[float | None]]


def _orders_1f1b(p: int, m: int) -> list[_Ops]:
    """Each stage's 1F1B order [Narayanan21 §2.2]: ``w = min(p - s - 1, m)`` warm-up forwards,
    then one forward and one backward alternately, then the remaining backwards."""
    orders = []
    for s in range(p):
        w = min(p - s - 1, m)
        ops = [("F", i) for i in range(w)]
        for k in range(m - w):
            ops.append(("F", w + k))
            ops.append(("B", k))
        ops += [("B", i) for i in range(m - w, m)]
        orders.append(ops)
    return orders


def _time_1f1b(orders: list[_Ops], F: list[list[float]], B: list[list[float]],
               p2p: float) -> tuple[_Ends, _Ends, list[float]]:
    """The DAG recurrence over the stages' orders: sweep the stages, each running its next
    operations while their inputs have ended, until every operation has an end time.
    Returns (forward ends, backward ends, each stage's last end)."""
    p, m = len(orders), len(F[0])
    fe: _Ends = [[None] * m for _ in range(p)]
    be: _Ends = [[None] * m for _ in range(p)]
    pos = [0] * p
    free = [0.0] * p
    remaining = 2 * p * m
    while remaining:
        progressed = False
        for s in range(p):
            k, free[s] = _advance_stage(s, orders[s], pos[s], free[s], fe, be, F, B, p2p)
            remaining -= k - pos[s]
            progressed = progressed or k > pos[s]
            pos[s] = k
        if not progressed:  # pragma: no cover - the 1F1B order is deadlock-free
            raise RuntimeError("1F1B schedule deadlocked")
    return fe, be, free


def _advance_stage(s: int, ops: _Ops, k: int, free_s: float, fe: _Ends, be: _Ends, F: list[list[float]],
                   B: list[list[float]], p2p: float) -> tuple[int, float]:
    """Run stage *s*'s operations from position *k* while their inputs have ended:
    ``end = max(ready, stage free) + duration``, ``F(s, i)`` ready at ``F(s-1, i) + p2p``,
    ``B(s, i)`` at ``B(s+1, i) + p2p`` (the last stage's at its own ``F``). Returns the new
    position and when the stage is free."""
    p = len(fe)
    fs, bs = fe[s], be[s]
    while k < len(ops):
        kind, i = ops[k]
        if kind == "F":
            up = fe[s - 1][i] if s > 0 else 0.0
            if up is None:
                break
            ready = up + p2p if s > 0 else 0.0
            free_s = (ready if ready > free_s else free_s) + F[s][i]
            fs[i] = free_s
        else:
            down = be[s + 1][i] if s < p - 1 else fs[i]
            if down is None:
                break
            ready = down + p2p if s < p - 1 else down
            free_s = (ready if ready > free_s else free_s) + B[s][i]
            bs[i] = free_s
        k += 1
    return k, free_s


def pipeline_1f1b_unbalanced_time(stage_times: Sequence[float], microbatches: int) -> float:
    """Closed-form iteration time of a 1F1B pipeline with unequal stages (s):

    ``T = sum_s c_s + (m - 1) max_s c_s``, with ``c_s = t_f,s + t_b,s`` the time of one
    micro-batch's forward and backward on stage s.

    The first micro-batch crosses every stage once and the slowest stage then paces the other
    ``m - 1`` [Narayanan19 §3.1; Narayanan21 §2.2]. For balanced stages this is
    ``(m + p - 1) c``, i.e. :func:`suite.perf.pipeline_1f1b_time`; for unbalanced stages it is
    the model's approximation of :func:`pipeline_1f1b_schedule` (tests bound the difference).

    Raises
    ------
    ValueError
        No stages, ``microbatches < 1`` or a negative time.
    """
    c = np.asarray(stage_times, dtype=float)
    if c.size < 1 or microbatches < 1:
        raise ValueError("need >= 1 stage and microbatches >= 1")
    if np.any(c < 0):
        raise ValueError("stage times must be >= 0")
    return float(c.sum() + (microbatches - 1) * c.max())


def split_microbatches(total: int, pipelines: int) -> list[int]:
    """Micro-batches per pipeline when ``total`` are spread over ``pipelines`` data-parallel
    replicas as evenly as possible (the first ``total mod d`` get one more).

    The step time of a DP x PP job is then that of the pipeline with the most micro-batches
    (Chameleon/Odyssey arXiv v4 Eq. 9-10 as a third-party re-implementation's log describes them;
    secondary source, the equations themselves not read).
    """
    if pipelines < 1 or total < 0:
        raise ValueError(f"need pipelines >= 1 and total >= 0, got {pipelines}, {total}")
    q, r = divmod(total, pipelines)
    return [q + (1 if j < r else 0) for j in range(pipelines)]


def enumerate_plans(devices: int, layers: int, tp_degrees: Sequence[int] = (1,),
                    max_pp: int | None = None) -> list[tuple[int, int, int]]:
    """Every (dp, pp, tp) with ``dp * pp * tp <= devices`` and ``1 <= pp <= layers``.

    Devices left over are idle spares. Ordered by pp, then tp, then dp. [Jang23] restricts
    re-planning to such templates over the survivors.

    Raises
    ------
    ValueError
        ``devices < 0`` or ``layers < 1``.
    """
    if devices < 0 or layers < 1:
        raise ValueError(f"need devices >= 0 and layers >= 1, got {devices}, {layers}")
    out = []
    top = min(layers, max_pp or layers)
    for pp in range(1, top + 1):
        for tp in sorted(set(int(t) for t in tp_degrees)):
            if tp < 1 or pp * tp > devices:
                continue
            for dp in range(1, devices // (pp * tp) + 1):
                out.append((dp, pp, tp))
    return out
