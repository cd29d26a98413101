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
* recursive-doubling all-reduce and Rabenseifner's all-reduce (recursive-halving reduce-scatter,
  recursive-doubling all-gather), both with MPICH's fold of the ``p - 2^floor(log2 p)`` extra
  ranks [Thakur05 §4.5];
* parameter server: workers push shards to S servers, servers sum, workers pull [Li14];
* broadcast (binomial), reduce-scatter, all-gather (ring).

Two tallies
-----------
The sender records every message it sends (:func:`send`, :meth:`Ledger.record`); the receiver
records, independently, what it takes in (:func:`recv`, :meth:`Ledger.receive`). Every
collective here does both, so :meth:`Ledger.conservation_problems` can tell a message sent but
never received (lost) or received twice (duplicated) from a correct run. :meth:`Ledger.transfer`
records one message on both tallies at once (cheaper for many small point-to-point messages),
which gives that check up for those messages.

References are those of :mod:`suite.perf.comm`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Message",
    "Ledger",
    "ring_allreduce",
    "tree_allreduce",
    "recursive_doubling_allreduce",
    "rabenseifner_allreduce",
    "allreduce",
    "recv",
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


def _travels(src: int, dst: int, nbytes: int) -> bool:
    """Whether a message is recorded: a rank's data to itself, or nothing, crosses no link."""
    return src != dst and nbytes > 0


@dataclass
class Ledger:
    """A per-link traffic ledger: every message sent between simulated workers, tallied twice.

    ``messages`` is what senders recorded (:meth:`record`); ``receipts`` what receivers recorded
    (:meth:`receive`), each rank for itself, except a :meth:`transfer`, which writes one record
    to both. ``src``/``dst`` are rank numbers; parameter servers
    are numbered from ``server_base`` (default 10_000) so worker and server traffic stay apart
    when not colocated.
    """

    messages: list[Message] = field(default_factory=list)
    receipts: list[Message] = field(default_factory=list)

    def record(self, src: int, dst: int, nbytes: int, tag: str = "") -> None:
        """Sender side: *src* sent *nbytes* to *dst*."""
        if _travels(src, dst, nbytes):
            self.messages.append(Message(src, dst, int(nbytes), tag))

    def receive(self, src: int, dst: int, nbytes: int, tag: str = "") -> None:
        """Receiver side: *dst* took in *nbytes* from *src* (recorded by the receiving rank)."""
        if _travels(src, dst, nbytes):
            self.receipts.append(Message(src, dst, int(nbytes), tag))

    def transfer(self, src: int, dst: int, array: np.ndarray, tag: str = "") -> np.ndarray:
        """One message *src* -> *dst* carrying *array*, tallied on both sides; returns the received
        copy. The same records and the same copy as ``recv(ledger, src, dst, send(ledger, src, dst,
        array, tag), tag)`` (:func:`send`, :func:`recv`) in one call: both tallies hold one
        (immutable) :class:`Message`, so a simulation that moves ~10^5 small messages (a
        federated scoring round) pays one record, not two calls deep on each side.

        Parameters
        ----------
        src, dst : int
            Sending and receiving rank (a message to oneself is not recorded).
        array : ndarray
            The payload; its ``nbytes`` (B) is the message's size (an empty one is not recorded).
        tag : str
            The collective or phase it belongs to.

        Returns
        -------
        ndarray
            A fresh copy of *array* (what the receiver holds).

        Both tallies hold the same record, so :meth:`conservation_problems` cannot find such a
        message lost: use :func:`send` and :func:`recv` where delivery is decided apart."""
        data = np.array(array, copy=True)
        nbytes = data.nbytes
        if _travels(src, dst, nbytes):
            m = Message(src, dst, nbytes, tag)
            self.messages.append(m)
            self.receipts.append(m)
        return data

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
        """Bytes addressed to each rank, from the senders' records."""
        out: dict[int, int] = defaultdict(int)
        for m in self.messages:
            out[m.dst] += m.nbytes
        return dict(out)

    def tallied_by_receivers(self) -> dict[int, int]:
        """Bytes each rank says it took in (its own tally, :meth:`receive`)."""
        out: dict[int, int] = defaultdict(int)
        for m in self.receipts:
            out[m.dst] += m.nbytes
        return dict(out)

    def conservation_problems(self, require_receipts: bool = False) -> list[str]:
        """Compare the senders' and the receivers' tallies, per (source, destination, tag).

        Returns one line per discrepancy: messages lost (sent, never received), duplicated or
        unsent (received more often than sent), or a byte count that differs. Empty when the two
        tallies agree. A ledger whose receivers kept no tally cannot be checked: that is a
        problem only with ``require_receipts=True``.
        """
        if not self.receipts:
            if require_receipts and self.messages:
                return [f"ledger: {len(self.messages)} messages sent but no receiver tallied any "
                        "(receivers must call suite.collectives.recv / Ledger.receive)"]
            return []
        sent: dict[tuple[int, int, str], list[int]] = defaultdict(lambda: [0, 0])
        got: dict[tuple[int, int, str], list[int]] = defaultdict(lambda: [0, 0])
        for m in self.messages:
            sent[(m.src, m.dst, m.tag)][0] += 1
            sent[(m.src, m.dst, m.tag)][1] += m.nbytes
        for m in self.receipts:
            got[(m.src, m.dst, m.tag)][0] += 1
            got[(m.src, m.dst, m.tag)][1] += m.nbytes
        out = []
        for key in sorted(set(sent) | set(got), key=str):
            (ns, bs), (nr, br) = sent.get(key, (0, 0)), got.get(key, (0, 0))
            src, dst, tag = key
            if ns > nr:
                out.append(f"{ns - nr} message(s) {src} -> {dst} tag {tag!r} lost: sent {ns} ({bs} B), received {nr} ({br} B)")
            elif nr > ns:
                out.append(f"{nr - ns} message(s) {src} -> {dst} tag {tag!r} duplicated or never sent: "
                           f"sent {ns} ({bs} B), received {nr} ({br} B)")
            elif bs != br:
                out.append(f"messages {src} -> {dst} tag {tag!r}: sent {bs} B, received {br} B")
        return out

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

    def summary(self) -> dict[str, int]:
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


def recv(ledger: Ledger | None, src: int, dst: int, data: np.ndarray, tag: str = "") -> np.ndarray:
    """The receiving rank *dst* takes in *data* from *src*, tallying it on its own side. Returns
    *data*."""
    if ledger is not None:
        ledger.receive(src, dst, data.nbytes, tag)
    return data


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
        for src, dst, c, data in sent:
            bufs[dst][chunks[c]] += recv(ledger, src, dst, data, tag)
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
            sent.append((r, (r + 1) % p, c, send(ledger, r, (r + 1) % p, bufs[r][chunks[c]], tag)))
        for src, dst, c, data in sent:
            bufs[dst][chunks[c]] = recv(ledger, src, dst, data, tag)
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
            sent.append((r, (r + 1) % p, c, send(ledger, r, (r + 1) % p, have[r][c], tag)))
        for src, dst, c, data in sent:
            have[dst][c] = recv(ledger, src, dst, data, tag)
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
                data = send(ledger, src, dst, out[src], tag)
                out[dst] = recv(ledger, src, dst, data, tag)
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
                data = send(ledger, r + dist, r, bufs[r + dist], tag)
                bufs[r] += recv(ledger, r + dist, r, data, tag)
        dist *= 2
    return broadcast(bufs[0], p, 0, ledger, tag)


def _fold(bufs: list[np.ndarray], ledger: Ledger | None, tag: str) -> list[int]:
    """MPICH's fold [Thakur05 §4.5]: with p' the largest power of two <= p and r = p - p', the
    even ranks among the first 2r send their buffer to the next (odd) rank, which adds it.
    Returns the p' ranks that go on, in order (their new ranks 0..p'-1)."""
    p = len(bufs)
    p2 = 1 << (p.bit_length() - 1)
    r = p - p2
    for i in range(0, 2 * r, 2):
        data = send(ledger, i, i + 1, bufs[i], tag + ":fold")
        bufs[i + 1] += recv(ledger, i, i + 1, data, tag + ":fold")
    return [2 * k + 1 for k in range(r)] + list(range(2 * r, p))


def _unfold(bufs: list[np.ndarray], ledger: Ledger | None, tag: str) -> None:
    p = len(bufs)
    r = p - (1 << (p.bit_length() - 1))
    for i in range(0, 2 * r, 2):
        data = send(ledger, i + 1, i, bufs[i + 1], tag + ":unfold")
        bufs[i] = recv(ledger, i + 1, i, data, tag + ":unfold")


def recursive_doubling_allreduce(arrays: Sequence[np.ndarray], ledger: Ledger | None = None,
                                 tag: str = "allreduce") -> list[np.ndarray]:
    """Recursive-doubling all-reduce with MPICH's fold for non-power-of-two p [Thakur05 §4.5].

    After the fold, log2(p') rounds: new rank j exchanges its whole buffer with ``j xor 2^k``
    and adds what it receives; then the folded ranks get the result back. Bytes on the wire:
    ``p' log2(p') m + 2 r m`` (m the buffer's bytes, r = p - p').

    Returns one array per worker, each equal to the sum (up to floating-point order).
    """
    _check(arrays)
    shape = arrays[0].shape
    bufs = [np.array(a, copy=True).reshape(-1) for a in arrays]
    active = _fold(bufs, ledger, tag)
    p2 = len(active)
    d = 1
    while d < p2:
        sent = [(active[j], active[j ^ d], send(ledger, active[j], active[j ^ d], bufs[active[j]], tag))
                for j in range(p2)]
        for src, dst, data in sent:
            bufs[dst] = bufs[dst] + recv(ledger, src, dst, data, tag)
        d *= 2
    _unfold(bufs, ledger, tag)
    return [b.reshape(shape) for b in bufs]


def rabenseifner_allreduce(arrays: Sequence[np.ndarray], ledger: Ledger | None = None,
                           tag: str = "allreduce") -> list[np.ndarray]:
    """Rabenseifner's all-reduce with MPICH's fold [Thakur05 §4.5]: recursive-halving
    reduce-scatter (round k: partner ``j xor p'/2^(k+1)``; the lower rank keeps the lower half
    of its range and sends the upper, the partner the reverse; each adds what it receives),
    then recursive-doubling all-gather of the reduced pieces in the reverse order.

    Bytes on the wire, for a buffer of m bytes whose length divides by p': ``2 (p'-1) m + 2 r m``.
    """
    _check(arrays)
    shape = arrays[0].shape
    bufs = [np.array(a, copy=True).reshape(-1) for a in arrays]
    active = _fold(bufs, ledger, tag)
    p2 = len(active)
    n = bufs[0].size
    lo, hi = [0] * p2, [n] * p2
    hist = []
    dist = p2 // 2
    while dist >= 1:
        moves: list[tuple[int, int, tuple[int, int], tuple[int, int], np.ndarray]] = []
        for j in range(p2):
            q = j ^ dist
            mid = lo[j] + (hi[j] - lo[j]) // 2
            keep = (lo[j], mid) if j < q else (mid, hi[j])
            give = (mid, hi[j]) if j < q else (lo[j], mid)
            moves.append((j, q, keep, give, send(ledger, active[j], active[q], bufs[active[j]][give[0]:give[1]], tag)))
        # partners hold the same range: what j gives is the half q keeps
        for j, q, _keep, give, data in moves:
            bufs[active[q]][give[0]:give[1]] += recv(ledger, active[j], active[q], data, tag)
        for j, _q, keep, _give, _data in moves:
            lo[j], hi[j] = keep
        hist.append(dist)
        dist //= 2
    for dist in reversed(hist):
        back: list[tuple[int, int, tuple[int, int], np.ndarray]] = []
        for j in range(p2):
            q = j ^ dist
            back.append((j, q, (lo[j], hi[j]), send(ledger, active[j], active[q], bufs[active[j]][lo[j]:hi[j]], tag)))
        for j, q, (a, b), data in back:
            bufs[active[q]][a:b] = recv(ledger, active[j], active[q], data, tag)
        for j, q, (a, b), _data in back:
            lo[q], hi[q] = min(lo[q], a), max(hi[q], b)
    _unfold(bufs, ledger, tag)
    return [b.reshape(shape) for b in bufs]


ALLREDUCE_ALGORITHMS = ("ring", "tree", "recursive-doubling", "rabenseifner")


def allreduce(arrays: Sequence[np.ndarray], algorithm: str = "ring", ledger: Ledger | None = None,
              tag: str = "allreduce") -> list[np.ndarray]:
    """All-reduce (sum) by ``algorithm`` in :data:`ALLREDUCE_ALGORITHMS`."""
    fns: dict[str, Callable[[Sequence[np.ndarray], Ledger | None, str], list[np.ndarray]]] = {
        "ring": ring_allreduce, "tree": tree_allreduce, "recursive-doubling": recursive_doubling_allreduce,
        "rabenseifner": rabenseifner_allreduce}
    fn = fns.get(algorithm)
    if fn is None:
        raise ValueError(f"all-reduce algorithm must be one of {ALLREDUCE_ALGORITHMS}, got {algorithm!r}")
    return fn(arrays, ledger, tag)


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
    def srank(s: int) -> int:
        return s if colocated else 10_000 + s

    sums: list[np.ndarray] = []
    for s, sl in enumerate(shards):
        acc: np.ndarray | None = None
        for r in range(p):
            part = recv(ledger, r, srank(s), send(ledger, r, srank(s), flat[r][sl], tag + ":push"), tag + ":push")
            acc = part if acc is None else acc + part
        assert acc is not None  # _check: at least one worker
        sums.append(acc)
    out = []
    for r in range(p):
        pulled = [recv(ledger, srank(s), r, send(ledger, srank(s), r, sums[s], tag + ":pull"), tag + ":pull")
                  for s in range(servers)]
        out.append(np.concatenate(pulled).reshape(shape))
    return out
