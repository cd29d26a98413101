"""One step of a traffic pattern on one network level, and the flat algorithms on one dimension.

:func:`_step` gives the latency and per-flow bandwidth of one step of a pattern (``ring``,
``xor``, ``tree``, ``single``, ``shift``) on a level's topology (the rules are listed in
:mod:`suite.perf.network.collective`); the ``_*_flat`` functions price an algorithm over one
dimension of a placed group as the sum of its steps, Hockney's ``latency + bytes / bandwidth``
per step plus the reduction term ``gamma`` per reduced byte [Thakur05].

References: those of :mod:`suite.perf.network.collective`.
"""

from __future__ import annotations

from suite.errors import ProfileError
from suite.perf.network.comm import ring_allreduce_bytes_per_worker
from suite.perf.network.levels import ceil_log2
from suite.perf.network.placement import Dim, _Lvl

def _hops_factor(v: _Lvl, d: int) -> int:
    """Hops between endpoints d apart (rank distance within the level) on a ring / torus / mesh."""
    h = 0
    for size in v.shape:
        x = d % size
        d //= size
        h += x if v.topo == "mesh" else min(x, size - x)
    return max(1, h)


def _step(v: _Lvl, pattern: str, n: int, d: int, per_node: int, per_domain: int) -> tuple[float, float]:
    """(latency, bandwidth per flow) of one step of *pattern* on level *v*.

    pattern: ``ring`` (all n send to a neighbour), ``xor`` (all n exchange with a partner d
    apart), ``tree`` (ceil(n / 2d) senders, partner d apart), ``single`` (one flow), ``shift``
    (all n send to the rank d ahead, all-to-all step). ``per_node``: ranks of a node using the
    level at once (share its NICs); ``per_domain``: concurrent instances on one shared medium.
    """
    t = v.topo
    lat = v.lat
    if t == "bus":
        if pattern == "single":
            flows = per_domain
        elif pattern == "tree":
            flows = -(-n // (2 * d)) * per_domain
        else:
            flows = n * per_domain
        return lat, v.medium / max(1, flows)
    bw = v.bw / per_node if v.inter else v.bw
    if t in ("switch",):
        return lat, bw
    if t == "fully-connected":
        if pattern == "ring":
            return lat, bw
        return lat, bw / max(1, v.size - 1)
    if t in ("ring", "torus", "mesh"):
        if pattern == "ring":
            return lat, bw / v.k
        h = _hops_factor(v, d) if pattern != "single" else 1
        if pattern in ("xor", "shift"):
            return lat * h, bw / (v.k * h)
        return lat * h, bw / v.k
    if t == "fat-tree":
        L, o = v.leaf, v.over
        if o <= 1 or n <= L:
            return lat, bw
        if pattern == "ring" or pattern == "single":
            return lat, bw * min(1.0, L / o)
        if pattern == "tree":
            return lat, bw * (min(1.0, L / o) if d >= L else 1.0)
        if pattern == "xor":
            return lat, bw * (1.0 / o if d >= L else 1.0)
        return lat, bw * min(1.0, L / (o * min(d, L)))  # shift
    if t == "dragonfly":
        G, o = v.leaf, v.over
        if n <= G:
            return lat, bw
        if pattern in ("ring", "single", "tree"):
            return lat, bw
        if pattern == "xor":
            return lat, bw / (2.0 * o) if d >= G else bw
        return lat, bw * min(1.0, G / (o * min(d, G)))
    raise ProfileError(f"network topology {t!r}: not priced")  # pragma: no cover - schema forbids


# --------------------------------------------------------------------------- algorithms on one dimension


def _ring_half(v: _Lvl, dim: Dim, m: float, pn: int, pd: int) -> float:
    """One ring reduce-scatter (or all-gather) of an m-byte buffer over dim: (n-1) steps of m/n."""
    n = dim.n
    a, bw = _step(v, "ring", n, 1, pn, pd)
    return (n - 1) * (a + m / n / bw)


def _xor_steps(v: _Lvl, dim: Dim, m_of_step: list[float], dists: list[int], pn: int, pd: int) -> float:
    t = 0.0
    for d, m in zip(dists, m_of_step):
        a, bw = _step(v, "xor", dim.n, d, pn, pd)
        t += a + m / bw
    return t


def _fold(v: _Lvl, dim: Dim, m: float, pn: int, pd: int, g: float) -> float:
    """MPICH's fold for non-power-of-two n: extra ranks send their buffer to a partner before, and
    receive the result after (two messages of m, one reduction of m)."""
    a, bw = _step(v, "xor", dim.n, 1, pn, pd)
    return 2 * (a + m / bw) + m * g


def _ar_flat(name: str, v: _Lvl, dim: Dim, m: float, pn: int, pd: int, g: float) -> float:
    n = dim.n
    if name == "ring":
        return 2 * _ring_half(v, dim, m, pn, pd) + (n - 1) / n * m * g
    if name == "tree":
        t = 0.0
        for k in range(ceil_log2(n)):
            a, bw = _step(v, "tree", n, 1 << k, pn, pd)
            t += 2 * (a + m / bw) + m * g
        return t
    p2 = 1 << (n.bit_length() - 1)
    extra = _fold(v, dim, m, pn, pd, g) if p2 != n else 0.0
    steps = p2.bit_length() - 1
    if name == "recursive-doubling":
        ds = [1 << k for k in range(steps)]
        return extra + _xor_steps(v, dim, [m] * steps, ds, pn, pd) + steps * m * g
    if name == "rabenseifner":
        ds = [p2 >> (k + 1) for k in range(steps)]
        ms = [m / (2 << k) for k in range(steps)]
        rs = _xor_steps(v, dim, ms, ds, pn, pd)
        ag = _xor_steps(v, dim, ms[::-1], ds[::-1], pn, pd)
        return extra + rs + ag + (p2 - 1) / p2 * m * g
    raise KeyError(name)


def _rs_flat(name: str, v: _Lvl, dim: Dim, m: float, pn: int, pd: int, g: float, reduce: bool = True) -> float:
    """Reduce-scatter (reduce=True) or all-gather of an m-byte total over one dimension."""
    n = dim.n
    gg = (n - 1) / n * m * g if reduce else 0.0
    if name == "ring":
        return _ring_half(v, dim, m, pn, pd) + gg
    if name == "recursive-doubling":
        if n & (n - 1):
            raise KeyError(name)
        steps = n.bit_length() - 1
        ds = [n >> (k + 1) for k in range(steps)] if reduce else [1 << k for k in range(steps)]
        ms = [m / (2 << k) for k in range(steps)] if reduce else [m * (1 << k) / n for k in range(steps)]
        return _xor_steps(v, dim, ms, ds, pn, pd) + gg
    if name == "bruck" and not reduce:
        t = 0.0
        for k in range(ceil_log2(n)):
            d = 1 << k
            a, bw = _step(v, "shift", n, d, pn, pd)
            t += a + min(d, n - d) * m / n / bw
        return t
    raise KeyError(name)


def _bc_flat(name: str, v: _Lvl, dim: Dim, m: float, pn: int, pd: int, g: float, reduce: bool = False) -> float:
    n = dim.n
    if v.topo == "bus" and not reduce and name == "tree":
        a, bw = _step(v, "single", n, 1, pn, pd)
        return a + m / bw  # one transmission on the shared medium reaches every endpoint
    if name == "tree":
        t = 0.0
        for k in range(ceil_log2(n)):
            a, bw = _step(v, "tree", n, 1 << k, pn, pd)
            t += a + m / bw + (m * g if reduce else 0.0)
        return t
    if name == "scatter-allgather":
        # binomial scatter of n blocks from the root (rounds at distance d = 2^k descending, the
        # root sending the blocks of its upper half each round), then ring all-gather (reduce:
        # the mirror image, reduce-scatter then gather)
        t = 0.0
        for k in range(ceil_log2(n) - 1, -1, -1):
            d = 1 << k
            a, bw = _step(v, "tree", n, d, pn, pd)
            t += a + m * (min(2 * d, n) - d) / n / bw
        return t + _ring_half(v, dim, m, pn, pd) + ((n - 1) / n * m * g if reduce else 0.0)
    raise KeyError(name)


def _scatter_blocks(n: int) -> int:
    """Blocks a binomial scatter over n ranks moves in all (each non-root rank receives its subtree's)."""
    total = 0
    for k in range(ceil_log2(n)):
        d = 1 << k
        q = -(-(n - d) // (2 * d))  # senders i = 0, 2d, ... with i + d < n
        full = n // (2 * d)
        total += full * d + (q - full) * (n - full * 2 * d - d) if q > full else full * d
    return total


def _a2a_flat(name: str, v: _Lvl, dim: Dim, m: float, pn: int, pd: int) -> float:
    n = dim.n
    if name == "pairwise":
        t = 0.0
        for k in range(1, n):
            a, bw = _step(v, "shift", n, k, pn, pd)
            t += a + m / n / bw
        return t
    if name == "bruck":
        t = 0.0
        for k in range(ceil_log2(n)):
            a, bw = _step(v, "shift", n, 1 << k, pn, pd)
            t += a + m / 2 / bw
        return t
    if name == "direct":
        if v.topo == "bus":
            return v.lat + (n - 1) / n * m * n * pd / v.medium  # every rank's messages on one medium
        a, bw = _step(v, "shift", n, max(1, n // 2), pn, pd)
        if v.topo == "fully-connected":
            bw = v.bw / pn if v.inter else v.bw  # one direct link to each peer, all in use
        return a + (n - 1) / n * m / bw
    raise KeyError(name)


# --------------------------------------------------------------------------- bytes per level


def _ar_bytes(name: str, n: int, m: float) -> float:
    """Bytes per rank (averaged) of a flat all-reduce over n ranks."""
    p2 = 1 << (n.bit_length() - 1)
    extra = 2 * (n - p2) * m / n
    if name in ("ring", "tree"):  # the tree's reduce and broadcast move (n-1)/n m each, as the ring
        return ring_allreduce_bytes_per_worker(m, n)
    if name == "recursive-doubling":
        return extra + (p2.bit_length() - 1) * m * p2 / n
    return extra + 2 * (p2 - 1) / p2 * m * p2 / n  # rabenseifner


def _bc_bytes(name: str, n: int, m: float, bus: bool) -> float:
    """Bytes per rank (averaged) of a flat broadcast / reduce over n ranks."""
    if bus and name == "tree":
        return m / n  # one transmission on the medium
    if name == "tree":
        return (n - 1) / n * m
    # scatter-allgather: the binomial scatter's blocks of m/n, then every rank sends (n-1)/n m
    # in the ring all-gather
    return (n - 1) / n * m + m * _scatter_blocks(n) / (n * n)
