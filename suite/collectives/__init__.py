"""Execute-fidelity substrate: simulated workers holding real arrays, and collectives on them.

Each collective takes one numpy array per worker (rank order), moves real data chunk by chunk
exactly as the algorithm does, records every message in a :class:`Ledger` (source, destination,
bytes), and returns one array per worker. The results are checked in tests against the dense
oracle (``np.sum`` of the stacked inputs); the ledger's totals against the alpha-beta formulas'
byte counts in :mod:`suite.perf.comm`.

Algorithms
----------
* ring all-reduce: reduce-scatter then all-gather around a ring, p-1 steps each [Patarasuk09];
* tree all-reduce: binomial-tree reduce to rank 0, then binomial broadcast [Thakur05 §4.4];
* parameter server: workers push shards to S servers, servers sum, workers pull [Li14];
* broadcast (binomial), reduce-scatter, all-gather (ring).

References are those of :mod:`suite.perf.comm`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Message",
    "Ledger",
    "ring_allreduce",
    "tree_allreduce",
    "allreduce",
    "reduce_scatter",
    "allgather",
    "broadcast",
    "ps_push_pull",
    "send",
]


@dataclass(frozen=True)
class Message:
    src: int
    dst: int
    nbytes: int
    tag: str = ""


@dataclass
class Ledger:
    """A per-link traffic ledger: every message sent between simulated workers.

    ``src``/``dst`` are rank numbers; parameter servers are numbered from ``server_base``
    (default 10_000) so worker and server traffic stay apart when not colocated.
    """

    messages: list[Message] = field(default_factory=list)

    def record(self, src: int, dst: int, nbytes: int, tag: str = "") -> None:
        if src != dst and nbytes > 0:
            self.messages.append(Message(src, dst, int(nbytes), tag))

    @property
    def count(self) -> int:
        return len(self.messages)

    @property
    def total_bytes(self) -> int:
        return sum(m.nbytes for m in self.messages)

    def sent_by(self) -> dict[int, int]:
        out: dict[int, int] = defaultdict(int)
        for m in self.messages:
            out[m.src] += m.nbytes
        return dict(out)

    def received_by(self) -> dict[int, int]:
        out: dict[int, int] = defaultdict(int)
        for m in self.messages:
            out[m.dst] += m.nbytes
        return dict(out)

    def per_link(self) -> dict[tuple[int, int], int]:
        out: dict[tuple[int, int], int] = defaultdict(int)
        for m in self.messages:
            out[(m.src, m.dst)] += m.nbytes
        return dict(out)

    def by_tag(self) -> dict[str, tuple[int, int]]:
        """tag -> (messages, bytes)."""
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for m in self.messages:
            out[m.tag][0] += 1
            out[m.tag][1] += m.nbytes
        return {k: (v[0], v[1]) for k, v in out.items()}

    def summary(self) -> dict:
        return {"messages": self.count, "bytes": self.total_bytes,
                "max_sent_by_one": max(self.sent_by().values(), default=0),
                "max_received_by_one": max(self.received_by().values(), default=0)}


def _check(arrays: Sequence[np.ndarray]) -> None:
    if not arrays:
        raise ValueError("need at least one worker array")
    shape, dtype = arrays[0].shape, arrays[0].dtype
    for a in arrays:
        if a.shape != shape or a.dtype != dtype:
            raise ValueError(f"all workers must hold arrays of one shape and dtype, got {a.shape}/{a.dtype} vs {shape}/{dtype}")


def send(ledger: Ledger | None, src: int, dst: int, array: np.ndarray, tag: str = "") -> np.ndarray:
    """Send a copy of *array* from src to dst, recording it. Returns the received copy."""
    if ledger is not None:
        ledger.record(src, dst, array.nbytes, tag)
    return np.array(array, copy=True)


def _chunks(n: int, p: int) -> list[slice]:
    bounds = np.linspace(0, n, p + 1).round().astype(int)
    return [slice(int(bounds[i]), int(bounds[i + 1])) for i in range(p)]


def reduce_scatter(arrays: Sequence[np.ndarray], ledger: Ledger | None = None, tag: str = "reduce-scatter"
                   ) -> list[np.ndarray]:
    """Ring reduce-scatter: returns, per worker, the flat buffer in which chunk ``(rank+1) % p``
    holds the full sum (other chunks partial). Use :func:`ring_allreduce` for the usual API."""
    _check(arrays)
    p = len(arrays)
    bufs = [np.array(a, copy=True).reshape(-1) for a in arrays]
    if p == 1:
        return bufs
    chunks = _chunks(bufs[0].size, p)
    for step in range(p - 1):
        # worker r sends chunk (r - step) % p to r+1, which adds it into its own copy
        sent = []
        for r in range(p):
            c = (r - step) % p
            sent.append((r, (r + 1) % p, c, send(ledger, r, (r + 1) % p, bufs[r][chunks[c]], tag)))
        for _src, dst, c, data in sent:
            bufs[dst][chunks[c]] += data
    return bufs


def ring_allreduce(arrays: Sequence[np.ndarray], ledger: Ledger | None = None, tag: str = "allreduce"
                   ) -> list[np.ndarray]:
    """Ring all-reduce (sum) [Patarasuk09]: 2(p-1) steps, each worker sends 2(p-1)/p of the data.

    Parameters
    ----------
    arrays : sequence of ndarray, one per worker, same shape and dtype

    Returns
    -------
    list of ndarray
        One array per worker, each equal to the elementwise sum (up to floating-point order).
    """
    _check(arrays)
    p = len(arrays)
    shape = arrays[0].shape
    bufs = reduce_scatter(arrays, ledger, tag)
    if p == 1:
        return [b.reshape(shape) for b in bufs]
    chunks = _chunks(bufs[0].size, p)
    # all-gather: worker r owns the full chunk (r+1) % p; pass complete chunks around
    for step in range(p - 1):
        sent = []
        for r in range(p):
            c = (r + 1 - step) % p
            sent.append(((r + 1) % p, c, send(ledger, r, (r + 1) % p, bufs[r][chunks[c]], tag)))
        for dst, c, data in sent:
            bufs[dst][chunks[c]] = data
    return [b.reshape(shape) for b in bufs]


def allgather(parts: Sequence[np.ndarray], ledger: Ledger | None = None, tag: str = "allgather") -> list[np.ndarray]:
    """Ring all-gather: worker r contributes ``parts[r]`` (1-D, any lengths); every worker ends with
    the concatenation in rank order. Each worker sends p-1 parts."""
    p = len(parts)
    have = [{r: np.array(parts[r], copy=True)} for r in range(p)]
    for step in range(p - 1):
        sent = []
        for r in range(p):
            c = (r - step) % p
            sent.append(((r + 1) % p, c, send(ledger, r, (r + 1) % p, have[r][c], tag)))
        for dst, c, data in sent:
            have[dst][c] = data
    return [np.concatenate([h[r].reshape(-1) for r in range(p)]) for h in have]


def broadcast(array: np.ndarray, p: int, root: int = 0, ledger: Ledger | None = None, tag: str = "broadcast"
              ) -> list[np.ndarray]:
    """Binomial-tree broadcast from *root* to p workers (ceil(log2 p) rounds)."""
    out: dict[int, np.ndarray] = {root: np.array(array, copy=True)}
    have = [0]  # virtual ranks (relative to root) that hold the data
    dist = 1
    while dist < p:
        for v in list(have):
            if v + dist < p:
                src, dst = (v + root) % p, (v + dist + root) % p
                out[dst] = send(ledger, src, dst, out[src], tag)
                have.append(v + dist)
        dist *= 2
    return [out[r] for r in range(p)]


def tree_allreduce(arrays: Sequence[np.ndarray], ledger: Ledger | None = None, tag: str = "allreduce"
                   ) -> list[np.ndarray]:
    """Binomial-tree reduce to rank 0 then binomial broadcast [Thakur05 §4.4]."""
    _check(arrays)
    p = len(arrays)
    bufs = [np.array(a, copy=True) for a in arrays]
    dist = 1
    while dist < p:
        for r in range(0, p, 2 * dist):
            if r + dist < p:
                bufs[r] += send(ledger, r + dist, r, bufs[r + dist], tag)
        dist *= 2
    return broadcast(bufs[0], p, 0, ledger, tag)


def allreduce(arrays: Sequence[np.ndarray], algorithm: str = "ring", ledger: Ledger | None = None,
              tag: str = "allreduce") -> list[np.ndarray]:
    """All-reduce (sum) by ``algorithm`` in {"ring", "tree"}."""
    if algorithm == "ring":
        return ring_allreduce(arrays, ledger, tag)
    if algorithm == "tree":
        return tree_allreduce(arrays, ledger, tag)
    raise ValueError(f"all-reduce algorithm must be 'ring' or 'tree', got {algorithm!r}")


def ps_push_pull(arrays: Sequence[np.ndarray], servers: int, ledger: Ledger | None = None,
                 colocated: bool = True, tag: str = "ps") -> list[np.ndarray]:
    """Parameter-server aggregation [Li14]: the flat gradient is sharded over S servers; every worker
    pushes each shard to its server, servers sum, workers pull the summed shards.

    With ``colocated=True`` server s runs on worker s (s < S <= p) and its own shard does not
    cross the network; otherwise servers are ranks ``10_000 + s``.

    Returns one array per worker, each equal to the sum.
    """
    _check(arrays)
    p = len(arrays)
    if servers < 1 or (colocated and servers > p):
        raise ValueError(f"servers must be in [1, {p if colocated else 'inf'}], got {servers}")
    shape = arrays[0].shape
    flat = [a.reshape(-1) for a in arrays]
    shards = _chunks(flat[0].size, servers)
    srank = (lambda s: s) if colocated else (lambda s: 10_000 + s)
    sums = []
    for s, sl in enumerate(shards):
        acc = None
        for r in range(p):
            part = send(ledger, r, srank(s), flat[r][sl], tag + ":push")
            acc = part if acc is None else acc + part
        sums.append(acc)
    out = []
    for r in range(p):
        pulled = [send(ledger, srank(s), r, sums[s], tag + ":pull") for s in range(servers)]
        out.append(np.concatenate(pulled).reshape(shape))
    return out
