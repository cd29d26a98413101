"""Algorithms over a group that crosses one or several network levels: time and bytes per level.

:func:`_price` prices algorithm *name* of *op* for an m-byte buffer over the placed group's
dimensions (:func:`suite.perf.network.placement.dimensions`): on one dimension the flat
algorithms of :mod:`suite.perf.network.flat`; across several, the hierarchical compositions
(reduce-scatter inward-out, the shard's all-reduce on the outermost level, all-gather back
[Sanders09]), one ring through every rank (each step as slow as its slowest hop [Patarasuk09]),
recursive doubling / Rabenseifner with MPICH's fold over the real partners [Thakur05 §4.5],
per-level trees, and all-to-all (pairwise, Bruck, direct) [Thakur05 §4.6].

References: those of :mod:`suite.perf.network.collective`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    import numpy as np

from suite.perf.network.flat import _a2a_flat, _ar_bytes, _ar_flat, _bc_bytes, _bc_flat, _ring_half, _rs_flat, _step
from suite.perf.network.levels import ceil_log2
from suite.perf.network.placement import Dim, _Lvl

#: an algorithm's sub-choice (see suite.perf.network.collective._subs): the flat algorithm a
#: one-level "hierarchical" stands for or the outermost level's all-reduce (str), each level's
#: broadcast (tuple), the one level a multi-level ring or direct all-to-all is priced on (int)
Sub = Union[str, int, tuple[str, ...], None]
#: (time in s, bytes per dimension averaged over the group's ranks)
Priced = tuple[float, list[float]]
Dims = tuple[Dim, ...]
Levels = tuple[_Lvl, ...]


def _spread(nlev: int, dims: Sequence[Dim], per_dim: list[float]) -> tuple[float, ...]:
    out = [0.0] * nlev
    for d, b in zip(dims, per_dim):
        out[d.level] += b
    return tuple(out)


def _ring_crossings(dims: Sequence[Dim]) -> list[float]:
    """Fraction of a hierarchical ring's neighbour pairs whose outermost crossed level is each dim."""
    p = 1
    for d in dims:
        p *= d.n
    fr: list[float] = []
    outer_prod = p
    for i, d in enumerate(dims):
        above = outer_prod // d.n  # pairs differing beyond this dim
        fr.append(((outer_prod if outer_prod > 1 else 0) - (above if above > 1 else 0)) / p)
        outer_prod = above
    # the product of the dims outward of dim i counts the pairs crossing at least dim i
    return fr


def _price(op: str, name: str, m: float, dims: Dims, lv: Levels, pi: int, g: float, p: int,
           sub: Sub = None) -> Priced:
    """(time in s, bytes per dim averaged over the group's ranks) of algorithm *name* for *op*
    on an m-byte buffer; ``pi`` ranks per node, ``p`` ranks, ``g`` the reduction term (s/B).
    Raises KeyError when *name* is not defined for *op* on these dims."""
    if len(dims) == 1:
        return _price_one(op, name, m, dims[0], lv, pi, g, p, sub)
    if op == "allreduce":
        return _price_allreduce(name, m, dims, lv, pi, g, p, sub)
    if op in ("reduce-scatter", "allgather"):
        return _price_rs_ag(op == "reduce-scatter", name, m, dims, lv, pi, g, p, sub)
    if op in ("broadcast", "reduce"):
        return _price_bcast(op == "reduce", name, m, dims, lv, g, p, sub)
    if op == "alltoall":
        return _price_alltoall(name, m, dims, lv, pi, p, sub)
    raise KeyError(name)


def _price_one(op: str, name: str, m: float, d: Dim, lv: Levels, pi: int, g: float, p: int,
               sub: Sub) -> Priced:
    """A flat algorithm on the group's one dimension (``hierarchical`` stands for *sub*)."""
    v = lv[d.level]
    pn = pi if d.inter else 1
    n = d.n
    if name == "hierarchical":
        assert isinstance(sub, str)
        return _price_one(op, sub, m, d, lv, pi, g, p, None)
    if op == "allreduce":
        return _ar_flat(name, v, d, m, pn, pn, g), [_ar_bytes(name, n, m)]
    if op in ("reduce-scatter", "allgather"):
        return _rs_flat(name, v, d, m, pn, pn, g, reduce=op == "reduce-scatter"), [(n - 1) / n * m]
    if op in ("broadcast", "reduce"):
        t = _bc_flat(name, v, d, m, pn, pn, g, reduce=op == "reduce")
        return t, [_bc_bytes(name, n, m, v.topo == "bus" and op == "broadcast")]
    t = _a2a_flat(name, v, d, m, pn, pn)
    return t, [m / 2 * ceil_log2(n) if name == "bruck" else (n - 1) / n * m]


def _price_allreduce(name: str, m: float, dims: Dims, lv: Levels, pi: int, g: float, p: int,
                     sub: Sub) -> Priced:
    """All-reduce over several dims: hierarchical, one ring, per-level trees, or recursive
    doubling / Rabenseifner over all ranks."""
    if name == "hierarchical":
        assert isinstance(sub, str)
        return _hier_allreduce(sub, m, dims, lv, pi, g)
    if name == "ring":
        assert sub is None or isinstance(sub, int)
        return _flat_ring(dims, lv, m, g, p, 2, seg=sub)
    if name == "tree":
        t, per = 0.0, [0.0] * len(dims)
        prod = 1
        for i, d in enumerate(dims):
            t += _ar_flat("tree", lv[d.level], d, m, 1, 1, g)
            per[i] = 2 * (d.n - 1) * m * (p // (prod * d.n)) / p  # the leaders of each subtree
            prod *= d.n
        return t, per
    if name in ("recursive-doubling", "rabenseifner"):
        return _flat_xor(name, dims, lv, m, g, p, pi)
    raise KeyError(name)


def _hier_allreduce(outer: str, m: float, dims: Dims, lv: Levels, pi: int, g: float) -> Priced:
    """Ring reduce-scatter level by level inward-out, all-reduce of the shard on the outermost
    level by *outer*, ring all-gather back; each phase after the one before [Sanders09]."""
    t, per, share = 0.0, [0.0] * len(dims), m
    inst = 1
    for i, d in enumerate(dims[:-1]):
        pn = pi if d.inter else 1
        pd = inst if d.inter else 1
        t += 2 * _ring_half(lv[d.level], d, share, pn, pd) + (d.n - 1) / d.n * share * g
        per[i] = 2 * (d.n - 1) / d.n * share
        share /= d.n
        inst *= d.n
    d = dims[-1]
    ta = _ar_flat(outer, lv[d.level], d, share, pi if d.inter else 1, inst, g)
    per[-1] = _ar_bytes(outer, d.n, share)
    return t + ta, per


def _price_rs_ag(red: bool, name: str, m: float, dims: Dims, lv: Levels, pi: int, g: float, p: int,
                 sub: Sub) -> Priced:
    """Reduce-scatter (*red*) or all-gather over several dims: hierarchical rings or one ring."""
    if name == "hierarchical":
        t, per = 0.0, [0.0] * len(dims)
        inst = 1
        share = m
        for i, d in enumerate(dims):
            pn = pi if d.inter else 1
            pd = inst if d.inter else 1
            t += _rs_flat("ring", lv[d.level], d, share, pn, pd, g, reduce=red)
            per[i] = (d.n - 1) / d.n * share
            share /= d.n
            inst *= d.n
        return t, per
    if name == "ring":
        assert sub is None or isinstance(sub, int)
        return _flat_ring(dims, lv, m, g, p, 1, reduce=red, seg=sub)
    raise KeyError(name)


def _price_bcast(red: bool, name: str, m: float, dims: Dims, lv: Levels, g: float, p: int,
                 sub: Sub) -> Priced:
    """Broadcast (or reduce, *red*) level by level among the leaders of each subtree: every
    level by *name*, or by ``sub[i]`` under ``hierarchical``."""
    if name not in ("tree", "hierarchical", "scatter-allgather"):
        raise KeyError(name)
    if name == "hierarchical":
        assert isinstance(sub, tuple)
    algos = sub if isinstance(sub, tuple) and name == "hierarchical" else (name,) * len(dims)
    t, per, prod = 0.0, [], 1
    for d, a in zip(dims, algos):
        v = lv[d.level]
        t += _bc_flat(a, v, d, m, 1, 1, g, red)
        leaders = p // (prod * d.n)  # instances of this level's broadcast
        per.append(_bc_bytes(a, d.n, m, v.topo == "bus" and not red) * d.n * leaders / p)
        prod *= d.n
    return t, per


def _price_alltoall(name: str, m: float, dims: Dims, lv: Levels, pi: int, p: int, sub: Sub) -> Priced:
    """All-to-all over several dims: each level carries the messages to the peers it separates
    (pairwise and Bruck in turn, direct all at once: the slowest level bounds)."""
    if name not in ("pairwise", "direct", "bruck"):
        raise KeyError(name)
    t, per = 0.0, [0.0] * len(dims)
    inner = 1
    for i, d in enumerate(dims):
        v = lv[d.level]
        pn = pi if d.inter else 1
        dom = inner if d.inter else 1
        peers = (d.n - 1) * inner
        if name == "pairwise":
            a, bw = _step(v, "shift", d.n, 1, pn, dom)
            t += peers * (a + m / p / bw)
            per[i] = peers * m / p
        elif name == "direct":
            if sub is None or sub == i:
                t = max(t, _direct_level(v, d, m / p, peers, pi, pn, dom))
            per[i] = peers * m / p
        else:  # bruck
            for s in range(ceil_log2(d.n)):
                a, bw = _step(v, "shift", d.n, 1 << s, pn, dom)
                t += a + m / 2 / bw
            per[i] = m / 2 * ceil_log2(d.n)
        inner *= d.n
    return t, per


def _direct_level(v: _Lvl, d: Dim, block: float, peers: int, pi: int, pn: int, dom: int) -> float:
    """One level's share of a direct all-to-all: *peers* blocks of *block* bytes per rank, all
    posted at once (on a bus, every rank's flows on the one medium)."""
    if v.topo == "bus":
        flows = peers * (pi if d.inter else 1)
        return v.lat + peers * block * flows * dom / v.medium / max(1, peers)
    a, bw = _step(v, "shift", d.n, max(1, d.n // 2), pn, dom)
    return a + peers * block / bw


def _flat_ring(dims: Dims, lv: Levels, m: float, g: float, p: int, halves: int, reduce: bool = True,
               seg: int | None = None) -> Priced:
    """One ring through every rank (hierarchical order). A step ends when every hop's message
    has arrived, so each of the ``halves (p-1)`` steps lasts as long as the slowest hop:
    ``max_j (latency_j + (m/p) / bw_j)`` over the levels j the ring crosses (with *seg* = j,
    level j's term alone; the caller takes the maximum). The ring's inter-node hops use all
    the node's NICs (one channel per NIC, as NCCL's rings do)."""
    fr = _ring_crossings(dims)
    worst = 0.0
    outer = math.prod(d.n for d in dims)
    for j, (d, f) in enumerate(zip(dims, fr)):
        v = lv[d.level]
        outer //= d.n
        if seg is not None and j != seg:
            continue
        a, bw = _step(v, "ring", d.n, 1, 1, 1)
        if v.topo == "bus":
            # the ring's hops on one medium (one per level domain) are on it at once
            bw = v.medium / max(1.0, p * f / max(1, outer))
        worst = max(worst, a + m / p / bw)
    t = halves * (p - 1) * worst
    if reduce:
        t += (p - 1) / p * m * g
    per = [halves * (p - 1) / p * m * f for f in fr]
    return t, per


#: per exchange: (dim index, hop distance, senders, most senders on one node)
_Classes = tuple[tuple[int, int, int, int], ...]


@functools.lru_cache(maxsize=1024)
def _xor_schedule(name: str, dims: Dims, p: int, pi: int) -> tuple[_Classes, tuple[_Classes, ...]]:
    """Where the messages of recursive doubling / Rabenseifner over the p ranks of *dims* go.

    Returns ``(fold, steps)``: ``fold`` is the crossing classes of MPICH's fold (empty when p is
    a power of two) and ``steps`` one ``(distance index, size factor, classes)`` entry per
    exchange, where *classes* is a tuple of ``(dim index, hop distance, senders, per node)``:
    how many ranks send across which dimension, how far along it, and the most of them on one
    node (they share its NICs; *pi* ranks sit on a node).

    Ranks sit on the dims in order (rank x has coordinate ``(x // stride) % n`` in each), the
    last node possibly partly filled. MPICH's fold [Thakur05 §4.5]: with ``r = p - p2``, each
    even rank among the first 2r sends its buffer to the next (odd) rank; the survivors (those odd
    ranks, then ranks 2r..p-1) take new ranks 0..p2-1, and the exchanges pair new ranks
    ``i`` and ``i xor d``. A pair crosses the outermost dimension in which the two real ranks'
    coordinates differ, so after a fold (or with a node size that is not a power of two) a
    partner distance smaller than the node size can still cross nodes.
    """
    import numpy as np  # here: the only numpy of a collective's pricing (a model path imports it otherwise)

    p2 = 1 << (p.bit_length() - 1)
    steps = p2.bit_length() - 1
    r = p - p2
    surv = np.concatenate([2 * np.arange(r) + 1, np.arange(2 * r, p)]).astype(np.int64)
    strides = np.array([d.stride for d in dims], dtype=np.int64)
    sizes = np.array([d.n for d in dims], dtype=np.int64)

    def classes(a: np.ndarray, b: np.ndarray) -> _Classes:
        ca = (a[:, None] // strides) % sizes
        cb = (b[:, None] // strides) % sizes
        diff = ca != cb
        # outermost differing dim (dims are innermost first); pairs of one rank never occur
        rev = diff[:, ::-1]
        k = len(dims) - 1 - np.argmax(rev, axis=1)
        hop = np.abs(ca[np.arange(a.size), k] - cb[np.arange(a.size), k])
        node = a // pi
        out: list[tuple[int, int, int, int]] = []
        for kk, hh in np.unique(np.stack([k, hop], axis=1), axis=0):
            sel = (k == kk) & (hop == hh)
            out.append((int(kk), int(hh), int(sel.sum()), int(np.bincount(node[sel]).max())))
        return tuple(out)

    fold = classes(2 * np.arange(r, dtype=np.int64), 2 * np.arange(r, dtype=np.int64) + 1) if r else ()
    if name == "recursive-doubling":
        dists = [1 << s for s in range(steps)]
    else:
        rs = [p2 >> (s + 1) for s in range(steps)]
        dists = rs + rs[::-1]
    idx = np.arange(p2, dtype=np.int64)
    sched = tuple(classes(surv[idx], surv[idx ^ d]) for d in dists)
    return fold, sched


def _flat_xor(name: str, dims: Dims, lv: Levels, m: float, g: float, p: int, pi: int) -> Priced:
    """Recursive doubling / Rabenseifner over all ranks, partners found across the dims (see
    :func:`_xor_schedule`); each exchange takes as long as its slowest crossing."""
    p2 = 1 << (p.bit_length() - 1)
    steps = p2.bit_length() - 1
    fold, sched = _xor_schedule(name, tuple(dims), p, pi)

    def slowest(cls: _Classes, mm: float, domain: Callable[[Dim], int]) -> float:
        worst = 0.0
        for k, hop, _n, on_node in cls:
            d = dims[k]
            v = lv[d.level]
            a, bw = _step(v, "xor", d.n, max(1, hop), on_node if d.inter else 1, domain(d))
            worst = max(worst, a + mm / bw)
        return worst

    per = [0.0] * len(dims)
    t = 0.0
    if fold:
        t += 2 * slowest(fold, m, lambda d: 1) + m * g
        for k, _hop, n, _on in fold:
            per[k] += 2 * n * m / p  # the buffer there, the result back
    if name == "recursive-doubling":
        sizes = [m] * steps
        t += steps * m * g
    else:
        rs = [m / (2 << s) for s in range(steps)]
        sizes = rs + rs[::-1]
        t += (p2 - 1) / p2 * m * g
    for cls, mm in zip(sched, sizes):
        t += slowest(cls, mm, lambda d: d.stride if d.inter else 1)
        for k, _hop, n, _on in cls:
            per[k] += mm * n / p
    return t, per
