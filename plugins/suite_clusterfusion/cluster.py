"""ClusterReduce and ClusterGather on N virtual thread blocks holding real arrays.

A thread-block cluster of N = 2^k blocks (k <= 4) exchanges data through distributed shared
memory (DSMEM). The two primitives of ClusterFusion [Luo25, Sec. 3, Alg. 1 and Alg. 2] use the
same cyclic peers, round by round, as the released code (``include/dsm.cuh``):

* **ClusterReduce** (Alg. 1): ``stride = 1; while stride < N: block b sends its buffer D_b to
  block (b + stride) mod N and combines what arrives from (b - stride) mod N: D_b = D_b (+) B_b;
  stride *= 2``. After log2 N rounds every block holds the reduction of all N buffers (for an
  associative, commutative (+): sum, max, the online-softmax merge). Each round every block sends
  one buffer of ``size`` bytes, so the traffic is ``size * log2 N * N`` [Luo25, Eq. 3].
* **ClusterGather** (Alg. 2): the same peers with a doubling message: in the round of stride s
  block b sends the s pieces it holds (``size * s`` bytes) to (b + s) mod N, which places them
  after its own. After log2 N rounds every block holds all N pieces, in the order
  ``b, b-1, ..., b-N+1`` (mod N) relative to itself, rotated back here to block order. Traffic
  ``size * (1 + 2 + ... + N/2) * N = size * (N - 1) * N`` [Luo25, Eq. 3].

Every DSMEM message goes through :func:`suite.collectives.send` into a
:class:`suite.collectives.Ledger`, so the bytes are counted, not computed.

References
----------
.. [Luo25] X. Luo, Z. Liu, Y. Zhou, S. Fang, Z. Huang, Y. Feng, C. Zhang, S. Sun, Z. Zheng,
   J. Leng, M. Guo, "ClusterFusion: Expanding Operator Fusion Scope for LLM Inference via
   Cluster-Level Collective Primitive", NeurIPS 2025 (arXiv 2508.18850): Sec. 3, Alg. 1
   (ClusterReduce), Alg. 2 (ClusterGather), Eq. 3 (traffic); authors' code
   ``xinhao-luo/ClusterFusion`` ``include/dsm.cuh``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from suite.api import Ledger, send

from suite_clusterfusion.constants import CLUSTER_SIZES

__all__ = ["CLUSTER_SIZES", "check_cluster", "cluster_reduce", "cluster_gather", "softmax_merge",
           "reduce_traffic", "gather_traffic", "rounds"]

# CLUSTER_SIZES (N = 2^k, k <= 4 [Luo25, Sec. 3]): suite_clusterfusion.constants


def check_cluster(n: int) -> int:
    """*n* if it is a power of two in [1, 16]; ``ValueError`` naming the expected values otherwise."""
    if int(n) != n or int(n) not in CLUSTER_SIZES:
        raise ValueError(f"cluster size: expected one of {list(CLUSTER_SIZES)}, got {n!r}")
    return int(n)


def rounds(n: int) -> int:
    """``log2 N`` rounds of both primitives."""
    return check_cluster(n).bit_length() - 1


def reduce_traffic(size: float, n: int) -> float:
    """Bytes all blocks send in one ClusterReduce: ``size * log2 N * N`` [Luo25, Eq. 3]."""
    return float(size) * rounds(n) * n


def gather_traffic(size: float, n: int) -> float:
    """Bytes all blocks send in one ClusterGather of ``size``-byte pieces: ``size * (N - 1) * N`` [Luo25, Eq. 3]."""
    check_cluster(n)
    return float(size) * (n - 1) * n


def cluster_reduce(buffers: Sequence, combine: Callable = np.add, ledger: Ledger | None = None,
                   tag: str = "cluster-reduce", base: int = 0) -> list:
    """ClusterReduce [Luo25, Alg. 1] over N virtual blocks.

    Parameters
    ----------
    buffers : sequence of ndarray or tuple of ndarrays
        One buffer per block (block order). A tuple (e.g. the softmax partials ``(m, l, o)``) is
        sent as one message of its arrays' total bytes.
    combine : callable
        ``combine(mine, received) -> combined``; associative and commutative (``np.add``,
        ``np.maximum``, :func:`softmax_merge`).
    ledger : Ledger, optional
        Every round's messages are recorded (src/dst are ``base + block``).
    tag : str
    base : int
        Rank offset of block 0 (one cluster per head: clusters get distinct ranks).

    Returns
    -------
    list
        The reduced buffer on every block (N entries).

    Raises
    ------
    ValueError
        N is not in :data:`CLUSTER_SIZES`.
    """
    n = check_cluster(len(buffers))
    cur = list(buffers)
    stride = 1
    while stride < n:
        arrived = [None] * n
        for b in range(n):
            dst = (b + stride) % n
            arrived[dst] = _send(ledger, base + b, base + dst, cur[b], f"{tag}:s{stride}")
        cur = [combine(cur[b], arrived[b]) for b in range(n)]
        stride *= 2
    return cur


def cluster_gather(pieces: Sequence[np.ndarray], ledger: Ledger | None = None, tag: str = "cluster-gather",
                   base: int = 0, axis: int = -1) -> list[np.ndarray]:
    """ClusterGather [Luo25, Alg. 2]: every block ends with all N pieces concatenated in block order.

    Parameters
    ----------
    pieces : sequence of ndarray
        Block b's piece (equal shapes).
    ledger, tag, base
        As :func:`cluster_reduce`; the message of the stride-s round is ``s`` pieces.
    axis : int
        Concatenation axis.

    Returns
    -------
    list of ndarray
        ``concatenate(pieces, axis)`` on every block.
    """
    n = check_cluster(len(pieces))
    held = [[p] for p in pieces]  # held[b][j] = piece of block (b - j) mod n
    stride = 1
    while stride < n:
        arrived = [None] * n
        for b in range(n):
            dst = (b + stride) % n
            msg = np.stack(held[b], axis=0)  # the stride pieces b holds, as one buffer
            arrived[dst] = _send(ledger, base + b, base + dst, msg, f"{tag}:s{stride}")
        held = [held[b] + list(arrived[b]) for b in range(n)]
        stride *= 2
    out = []
    for b in range(n):
        order = [None] * n
        for j, p in enumerate(held[b]):
            order[(b - j) % n] = p
        out.append(np.concatenate(order, axis=axis))
    return out


def softmax_merge(a: tuple, b: tuple) -> tuple:
    """The online-softmax combine of two flash-decoding partials [Luo25, Sec. 3; Dao23].

    A partial over a key set K is ``(m, l, o)``: ``m`` the row max of the scores, ``l = sum_K
    exp(s - m)``, ``o = sum_K exp(s - m) v`` (un-normalised). Merging::

        m = max(m1, m2);  l = l1 e^(m1 - m) + l2 e^(m2 - m);  o = o1 e^(m1 - m) + o2 e^(m2 - m)

    An empty part has ``m = -inf, l = 0, o = 0`` and is the identity.

    Parameters
    ----------
    a, b : tuple of ndarray
        ``(m, l, o)`` with shapes ``(..., 1)``, ``(..., 1)``, ``(..., d)``.

    Returns
    -------
    tuple of ndarray
    """
    m1, l1, o1 = a
    m2, l2, o2 = b
    m = np.maximum(m1, m2)
    with np.errstate(invalid="ignore"):
        s1 = np.where(np.isneginf(m1), 0.0, np.exp(m1 - np.where(np.isneginf(m), 0.0, m)))
        s2 = np.where(np.isneginf(m2), 0.0, np.exp(m2 - np.where(np.isneginf(m), 0.0, m)))
    s1, s2 = s1.astype(l1.dtype), s2.astype(l1.dtype)
    return m, l1 * s1 + l2 * s2, o1 * s1 + o2 * s2


def _send(ledger, src, dst, payload, tag):
    if isinstance(payload, tuple):
        return tuple(send(ledger, src, dst, x, tag) for x in payload)
    return send(ledger, src, dst, payload, tag)
