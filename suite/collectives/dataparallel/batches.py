"""Relative worker speeds and CoCoD-SGD's proportional batch sizes [Shen19 §3], capped by memory
(HetSeq [Ding20]); references in :mod:`suite.collectives.dataparallel`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from suite.errors import ParameterError

__all__ = ['relative_speeds', 'proportional_batches']


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
    hi = None if caps is None else _checked_caps(caps, K, total, minimum)
    if hi is not None:
        ideal = _water_fill(ideal, cap, hi, total)
    return _largest_remainders(ideal, total, minimum, hi)


def _checked_caps(caps: Sequence[int], K: int, total: int, minimum: int) -> np.ndarray:
    """*caps* as int64, one per worker, each >= *minimum*, summing to >= *total*."""
    hi = np.asarray(caps, dtype=np.int64)
    if hi.shape != (K,):
        raise ParameterError(f"proportional_batches: caps: expected {K} values, got {hi.size}")
    if np.any(hi < minimum):
        raise ParameterError(f"proportional_batches: caps: expected every cap >= minimum {minimum}, "
                             f"got {hi.tolist()}")
    if total > hi.sum():
        raise ParameterError(f"proportional_batches: global batch {total} exceeds the sum of the caps "
                             f"({int(hi.sum())})")
    return hi


def _water_fill(ideal: np.ndarray, cap: np.ndarray, hi: np.ndarray, total: int) -> np.ndarray:
    """The real-valued shares under the caps: the shares over their cap are fixed at it and the
    rest of *total* is shared out again in proportion to *cap*, until none is over."""
    fixed = np.zeros(len(hi), bool)
    while True:
        over = ~fixed & (ideal > hi)
        if not over.any():
            return ideal
        fixed |= over
        left = total - hi[fixed].sum()
        ideal = np.where(fixed, hi, left * cap / cap[~fixed].sum() if (~fixed).any() else 0.0)


def _largest_remainders(ideal: np.ndarray, total: int, minimum: int, hi: np.ndarray | None) -> np.ndarray:
    """Integer batches from the real shares *ideal*: floors (at least *minimum*), trimmed from the
    largest down to *total*, then topped up by the largest remainders (never above a cap)."""
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
    return np.asarray(b, np.int64)
