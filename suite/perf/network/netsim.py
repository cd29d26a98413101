"""Simulate fidelity of the collectives: an event-level run of an algorithm's messages over the
profile's links.

:func:`simulate_collective` builds the links the group's traffic uses from the profile (a port
per device and direction on a switched intra-node level; the node's NICs per inter-node level
and direction, ``nics_per_node x bandwidth``; a fat-tree leaf's uplink and downlink, ``leaf_size
x bandwidth / oversubscription``; one medium per bus domain), then runs every rank as a
process (simpy) through the algorithm's schedule: in each step a rank sends its messages and
waits until they have been delivered and the messages it expects have arrived (and reduced, at
``gamma`` s/B, :func:`suite.perf.network.placement.reduction_gamma`).

A message waits its level's latency, then flows through its links. Links are shared by the
flows on them at once (per-link queues served fluidly: max-min fair rates by progressive filling,
recomputed whenever a flow starts or ends, [Bertsekas92 §6.5]); a bus multicast is one flow.
Nothing else is assumed, so where the analytic model's per-step shares are exact (no two
flows compete beyond what it counts) the two agree, and where traffic concentrates (a bus, an
oversubscribed fat-tree) the run shows the queueing.

Supported: topologies ``switch``, ``fat-tree`` and ``bus``; all-reduce (ring, tree,
recursive-doubling and Rabenseifner with MPICH's fold, hierarchical with any of these on the
outermost level), reduce-scatter and all-gather (ring, hierarchical), broadcast (tree,
hierarchical), point-to-point. Others raise ``ValueError``.

References
----------
.. [Bertsekas92] D. Bertsekas, R. Gallager, "Data Networks", 2nd ed., 1992 (max-min fairness).
.. [Thakur05] see :mod:`suite.perf.network.collective` (the schedules).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Generator, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

import simpy

from suite.perf.network.collective import ALGORITHMS, _subs, collective_time
from suite.perf.network.multilevel import Sub, _price
from suite.perf.network.placement import Dim, Group, _dims, _prepare

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import Profile

__all__ = ["SimResult", "simulate_collective", "SIM_TOPOLOGIES"]

SIM_TOPOLOGIES = ("switch", "fat-tree", "bus")

# a schedule: per rank, a list of steps; a step: (sends, recvs, reduce_bytes)
# sends: [(dst or tuple of dsts for a bus multicast, nbytes, tag)]; recvs: [(src, tag)]
Tag = Hashable
Send = tuple[Union[int, tuple[int, ...]], float, Tag]
Recv = tuple[int, Tag]
Step = tuple[list[Send], list[Recv], float]
Schedule = list[list[Step]]
#: a link: ("out" / "in" / "nic-out" / "nic-in" / "up" / "down" / "bus", dim index, endpoint or domain, ...)
Link = tuple[Hashable, ...]
#: a simpy process body
Proc = Generator[Any, Any, None]


@dataclass(frozen=True)
class SimResult:
    """What :func:`simulate_collective` returns.

    Attributes
    ----------
    time : float
        Seconds until the last rank finishes.
    algorithm : str
    bytes_per_level : tuple of float
        Bytes sent over each level, averaged over the group's ranks (as
        :class:`suite.perf.network.placement.CollectiveCost`).
    messages : int
    max_link_flows : int
        Most flows ever on one link at once (1: no link was shared).
    """

    time: float
    algorithm: str
    bytes_per_level: tuple[float, ...]
    messages: int
    max_link_flows: int


# --------------------------------------------------------------------------- fluid network


class _Flow:
    __slots__ = ("left", "route", "rate", "done")

    def __init__(self, left: float, route: tuple[Link, ...], done: Any) -> None:
        self.left, self.route, self.rate, self.done = left, route, 0.0, done


class _Net:
    """Links with capacities; active flows share them max-min fairly."""

    def __init__(self, env: Any, caps: dict[Link, float]) -> None:
        self.env, self.caps = env, caps
        self.flows: list[_Flow] = []
        self.last = 0.0
        self.version = 0
        self.dirty = False
        self.max_share = 0

    def flow(self, route: list[Link], nbytes: float) -> Any:
        """A simpy event that succeeds when *nbytes* have crossed every link of *route*."""
        ev = self.env.event()
        if nbytes <= 0 or not route:
            ev.succeed()
            return ev
        self._advance()
        self.flows.append(_Flow(float(nbytes), tuple(route), ev))
        self._schedule()
        return ev

    def _advance(self) -> None:
        dt = self.env.now - self.last
        if dt > 0:
            for f in self.flows:
                f.left -= f.rate * dt
        self.last = self.env.now

    def _schedule(self) -> None:
        if not self.dirty:
            self.dirty = True
            self.env.process(self._recompute())

    def _recompute(self) -> Proc:
        yield self.env.timeout(0)  # batch every flow started at this instant
        self.dirty = False
        self._advance()
        done = [f for f in self.flows if f.left <= 1e-9 * max(1.0, f.rate * 1e-6)]
        for f in done:
            self.flows.remove(f)
            f.done.succeed()
        self._rates()
        self.version += 1
        if self.flows:
            dt = min((f.left / f.rate for f in self.flows if f.rate > 0), default=None)
            if dt is None:  # pragma: no cover - every flow has a link with capacity
                raise RuntimeError("netsim: flows without bandwidth")
            self.env.process(self._wake(self.version, dt))

    def _wake(self, version: int, dt: float) -> Proc:
        yield self.env.timeout(dt)
        if version == self.version:
            self._advance()
            for f in self.flows:  # the flows ending now (rounding aside)
                if f.rate > 0 and f.left / f.rate <= 1e-12 * max(self.env.now, 1e-12):
                    f.left = 0.0
            self._schedule()

    def _rates(self) -> None:
        on: dict[Link, list[_Flow]] = defaultdict(list)
        for f in self.flows:
            for ln in f.route:
                on[ln].append(f)
        self.max_share = max(self.max_share, max((len(v) for v in on.values()), default=0))
        cap = {ln: self.caps[ln] for ln in on}
        free = {ln: list(v) for ln, v in on.items()}
        fixed: set[int] = set()
        while free:
            ln = min(free, key=lambda k: cap[k] / len(free[k]))
            share = cap[ln] / len(free[ln])
            for f in free[ln]:
                if id(f) in fixed:
                    continue
                f.rate = share
                fixed.add(id(f))
                for other in f.route:
                    if other in free:
                        cap[other] -= share
                        free[other] = [g for g in free[other] if g is not f]
                        if not free[other]:
                            del free[other]
            free.pop(ln, None)


# --------------------------------------------------------------------------- placement and routes


class _Place:
    def __init__(self, profile: "Profile", group: Group) -> None:
        lv, intra, gamma, _t = _prepare(profile)
        self.lv, self.gamma = lv, gamma
        self.dims: tuple[Dim, ...] = _dims(lv, intra, group)
        if len(lv) == 1 and self.dims:  # whether the one level is intra-node sets its links (_links): read
            _ = profile.devices_per_node
        self.p = group.size
        self.nlev = len(lv)
        for d in self.dims:
            if lv[d.level].topo not in SIM_TOPOLOGIES:
                raise ValueError(f"netsim: topology {lv[d.level].topo!r} of network.{d.level} is not simulated "
                                 f"(simulated: {SIM_TOPOLOGIES})")
        self.caps: dict[Link, float] = {}

    def coords(self, r: int) -> list[int]:
        out: list[int] = []
        for d in self.dims:
            out.append(r % d.n)
            r //= d.n
        return out

    def crossed(self, a: int, b: int) -> int:
        """Index into dims of the outermost dimension where ranks a and b differ."""
        ca, cb = self.coords(a), self.coords(b)
        for i in range(len(self.dims) - 1, -1, -1):
            if ca[i] != cb[i]:
                return i
        raise ValueError("a message to itself")

    def route(self, a: int, b: int, i: int) -> list[Link]:
        """The links a message from rank a to rank b crossing dim i flows through (their
        capacities recorded in ``caps``)."""
        d = self.dims[i]
        v = self.lv[d.level]
        dom = a // (d.stride * d.n)  # the level domain (all coordinates beyond dim i)
        if v.topo == "bus":
            key: Link = ("bus", i, dom)
            self.caps[key] = v.medium
            return [key]
        if not d.inter:
            ko: Link = ("out", i, a)
            ki: Link = ("in", i, b)
            self.caps[ko] = self.caps[ki] = v.bw
            return [ko, ki]
        na, nb = a // d.stride, b // d.stride  # level-i endpoints (nodes, or domains of them)
        ko, ki = ("nic-out", i, na), ("nic-in", i, nb)
        self.caps[ko] = self.caps[ki] = v.bw
        r: list[Link] = [ko, ki]
        if v.topo == "fat-tree" and v.over > 1:
            la, lb = (na % d.n) // v.leaf, (nb % d.n) // v.leaf
            if la != lb:
                ku: Link = ("up", i, dom, la)
                kd: Link = ("down", i, dom, lb)
                self.caps[ku] = self.caps[kd] = v.leaf * v.bw / v.over
                r = [ko, ku, kd, ki]
        return r


# --------------------------------------------------------------------------- schedules

def _new(p: int) -> Schedule:
    return [[] for _ in range(p)]


def _ring(sched: Schedule, ranks: list[int], m: float, tag: Tag, reduce: bool) -> None:
    n = len(ranks)
    for s in range(n - 1):
        for i, r in enumerate(ranks):
            nxt, prv = ranks[(i + 1) % n], ranks[(i - 1) % n]
            sched[r].append(([(nxt, m / n, (tag, s))], [(prv, (tag, s))], m / n if reduce else 0.0))


def _xchg(sched: Schedule, r: int, partner: int, nbytes: float, tag: Tag, reduce: bool) -> None:
    sched[r].append(([(partner, nbytes, tag)], [(partner, tag)], nbytes if reduce else 0.0))


def _one(sched: Schedule, src: int, dst: int, nbytes: float, tag: Tag, reduce: bool) -> None:
    sched[src].append(([(dst, nbytes, tag)], [], 0.0))
    sched[dst].append(([], [(src, tag)], nbytes if reduce else 0.0))


def _tree_reduce(sched: Schedule, ranks: list[int], m: float, tag: Tag) -> None:
    n = len(ranks)
    d = 1
    while d < n:
        for i in range(0, n, 2 * d):
            if i + d < n:
                _one(sched, ranks[i + d], ranks[i], m, (tag, d), True)
        d *= 2


def _tree_bcast(sched: Schedule, ranks: list[int], m: float, tag: Tag, bus: bool = False) -> None:
    n = len(ranks)
    if bus:
        sched[ranks[0]].append(([(tuple(ranks[1:]), m, tag)], [], 0.0))
        for r in ranks[1:]:
            sched[r].append(([], [(ranks[0], tag)], 0.0))
        return
    d = 1 << max(0, (n - 1).bit_length() - 1)
    while d >= 1:
        for i in range(0, n, 2 * d):
            if i + d < n:
                _one(sched, ranks[i], ranks[i + d], m, (tag, d), False)
        d //= 2


def _xor_allreduce(sched: Schedule, ranks: list[int], m: float, tag: Tag, halving: bool) -> None:
    n = len(ranks)
    p2 = 1 << (n.bit_length() - 1)
    r = n - p2
    for i in range(2 * r):  # MPICH's fold: even ranks of the first 2r hand their buffer over
        if i % 2 == 0:
            _one(sched, ranks[i], ranks[i + 1], m, (tag, "fold"), True)
    active = [ranks[2 * k + 1] for k in range(r)] + ranks[2 * r:]
    steps = p2.bit_length() - 1
    if not halving:
        for k in range(steps):
            for j, rk in enumerate(active):
                _xchg(sched, rk, active[j ^ (1 << k)], m, (tag, "rd", k), True)
    else:
        for k in range(steps):
            dist = p2 >> (k + 1)
            for j, rk in enumerate(active):
                _xchg(sched, rk, active[j ^ dist], m / (2 << k), (tag, "rs", k), True)
        for k in range(steps - 1, -1, -1):
            dist = p2 >> (k + 1)
            for j, rk in enumerate(active):
                _xchg(sched, rk, active[j ^ dist], m / (2 << k), (tag, "ag", k), False)
    for i in range(2 * r):
        if i % 2 == 0:
            _one(sched, ranks[i + 1], ranks[i], m, (tag, "unfold"), False)


def _flat_allreduce(sched: Schedule, ranks: list[int], m: float, name: str | None, tag: Tag) -> None:
    if name == "ring":
        _ring(sched, ranks, m, (tag, "rs"), True)
        _ring(sched, ranks, m, (tag, "ag"), False)
    elif name == "tree":
        _tree_reduce(sched, ranks, m, (tag, "reduce"))
        _tree_bcast(sched, ranks, m, (tag, "bcast"))
    elif name == "recursive-doubling":
        _xor_allreduce(sched, ranks, m, tag, False)
    elif name == "rabenseifner":
        _xor_allreduce(sched, ranks, m, tag, True)
    else:
        raise ValueError(f"netsim: all-reduce algorithm {name!r} not simulated")


def _lines_of(pl: _Place, i: int, fixed: dict[int, int]) -> list[list[int]]:
    """Groups of ranks along dim i whose coordinates in the other dims equal each other and the
    ones fixed in *fixed* ({dim: coordinate})."""
    out: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for r in range(pl.p):
        c = pl.coords(r)
        if any(c[k] != v for k, v in fixed.items()):
            continue
        key = tuple(c[k] for k in range(len(c)) if k != i)
        out[key].append(r)
    return list(out.values())


def _schedule(pl: _Place, op: str, name: str, m: float, sub: Sub) -> Schedule:
    """Every rank's steps for algorithm *name* of *op* on an m-byte buffer (*sub*: the outermost
    level's all-reduce or each level's broadcast of a hierarchical one)."""
    sched = _new(pl.p)
    if op == "p2p":
        _p2p_pairs(pl, sched, m)
    elif len(pl.dims) == 1 or name != "hierarchical":
        _flat_schedule(pl, sched, op, name, m)
    else:
        _hier_schedule(pl, sched, op, m, sub)
    return sched


def _p2p_pairs(pl: _Place, sched: Schedule, m: float) -> None:
    """``ranks_per_node`` pairs at once across the outermost dimension (one pair inside a node)."""
    k = len(pl.dims)
    d = pl.dims[k - 1]
    pairs = (pl.dims[0].n if (k > 1 and not pl.dims[0].inter) else 1) if d.inter else 1
    for r in range(pairs):
        _one(sched, r, r + d.stride if d.inter else 1, m, ("p2p", r), False)


def _flat_schedule(pl: _Place, sched: Schedule, op: str, name: str, m: float) -> None:
    """One algorithm over all the ranks (a multi-level tree all-reduce level by level)."""
    k = len(pl.dims)
    allr = list(range(pl.p))
    if op == "allreduce":
        if k > 1 and name == "tree":
            _hier_tree(pl, sched, m)
        else:
            _flat_allreduce(sched, allr, m, name, "ar")
    elif op in ("reduce-scatter", "allgather"):
        _flat_rs_ag(pl, sched, op == "reduce-scatter", name, m)
    elif op == "broadcast":
        if name == "scatter-allgather" and k == 1:
            _scatter_allgather(sched, allr, m, "bc")
        elif name not in ("tree", "scatter-allgather"):
            raise ValueError(f"netsim: broadcast algorithm {name!r} not simulated")
        elif k == 1:
            _tree_bcast(sched, allr, m, "bc", pl.lv[pl.dims[-1].level].topo == "bus")
        else:
            _hier_bcast(pl, sched, m, (name,) * k)
    else:
        raise ValueError(f"netsim: {op} not simulated")


def _flat_rs_ag(pl: _Place, sched: Schedule, red: bool, name: str, m: float) -> None:
    """Reduce-scatter (*red*) or all-gather: one ring, or recursive halving / doubling on one level."""
    allr = list(range(pl.p))
    if name == "ring":
        _ring(sched, allr, m, "rsag", red)
    elif name == "recursive-doubling" and len(pl.dims) == 1:
        n = pl.p
        for s in range(n.bit_length() - 1):
            dist, nb = (n >> (s + 1), m / (2 << s)) if red else (1 << s, m * (1 << s) / n)
            for r in allr:
                _xchg(sched, r, r ^ dist, nb, ("rd", s), red)
    else:
        raise ValueError(f"netsim: {'reduce-scatter' if red else 'allgather'} algorithm {name!r} not simulated")


def _hier_schedule(pl: _Place, sched: Schedule, op: str, m: float, sub: Sub) -> None:
    """The hierarchical algorithms over several dims: rings inward-out, the outermost level's
    all-reduce by *sub*, rings back; reduce-scatter / all-gather level by level; broadcast by
    each level's ``sub[i]``."""
    k = len(pl.dims)
    share = m
    if op == "allreduce":
        for i in range(k - 1):
            for line in _lines_of(pl, i, {}):
                _ring(sched, line, share, ("h-rs", i), True)
            share /= pl.dims[i].n
        for line in _lines_of(pl, k - 1, {}):
            _flat_allreduce(sched, line, share, sub if isinstance(sub, str) else None, ("h-ar",))
        for i in range(k - 2, -1, -1):
            share *= pl.dims[i].n
            for line in _lines_of(pl, i, {}):
                _ring(sched, line, share, ("h-ag", i), False)
    elif op in ("reduce-scatter", "allgather"):
        for i in range(k):
            for line in _lines_of(pl, i, {}):
                _ring(sched, line, share, ("h", i), op == "reduce-scatter")
            share /= pl.dims[i].n
    elif op == "broadcast":
        _hier_bcast(pl, sched, m, sub if isinstance(sub, tuple) else None)
    else:
        raise ValueError(f"netsim: {op} not simulated")


def _scatter_allgather(sched: Schedule, ranks: list[int], m: float, tag: Tag) -> None:
    """Van de Geijn broadcast: binomial scatter of n blocks from ranks[0], then ring all-gather."""
    n = len(ranks)
    d = 1 << max(0, (n - 1).bit_length() - 1)
    while d >= 1:
        for i in range(0, n, 2 * d):
            if i + d < n:
                blocks = min(i + 2 * d, n) - (i + d)
                _one(sched, ranks[i], ranks[i + d], m * blocks / n, (tag, "sc", d), False)
        d //= 2
    _ring(sched, ranks, m, (tag, "ag"), False)


def _hier_tree(pl: _Place, sched: Schedule, m: float) -> None:
    k = len(pl.dims)
    for i in range(k):  # reduce inward-out among the leaders of each subtree
        for line in _lines_of(pl, i, {j: 0 for j in range(i)}):
            _tree_reduce(sched, line, m, ("t-red", i))
    for i in range(k - 1, -1, -1):
        for line in _lines_of(pl, i, {j: 0 for j in range(i)}):
            _tree_bcast(sched, line, m, ("t-bc", i))


def _hier_bcast(pl: _Place, sched: Schedule, m: float, sub: tuple[str, ...] | None = None) -> None:
    k = len(pl.dims)
    for i in range(k - 1, -1, -1):
        bus = pl.lv[pl.dims[i].level].topo == "bus"
        for line in _lines_of(pl, i, {j: 0 for j in range(i)}):
            if sub is not None and sub[i] == "scatter-allgather":
                _scatter_allgather(sched, line, m, ("hb", i))
            else:
                _tree_bcast(sched, line, m, ("hb", i), bus)


# --------------------------------------------------------------------------- the run


def simulate_collective(op: str, nbytes: float, group: Group, profile: "Profile",
                        algorithm: str = "auto") -> SimResult:
    """Run one collective's messages over the profile's links; see the module docstring.

    Parameters
    ----------
    op, nbytes, group, profile
        As :func:`suite.perf.network.collective_time`.
    algorithm : str
        ``auto`` simulates the algorithm the analytic model chooses (for a hierarchical
        all-reduce, with the same outermost-level algorithm); else one of the simulated ones.

    Returns
    -------
    SimResult

    Raises
    ------
    ValueError
        An op, algorithm or topology that is not simulated (see the module docstring).
    """
    pl = _Place(profile, group)
    if not pl.dims or nbytes == 0:
        return SimResult(0.0, "none", (0.0,) * pl.nlev, 0, 0)
    algorithm, sub = _resolve(op, nbytes, group, profile, algorithm, pl)
    run = _Run(pl, _schedule(pl, op, algorithm, float(nbytes), sub))
    per = run.count if op == "p2p" else pl.p  # p2p: bytes per pair, as the analytic model
    return SimResult(run.finish, algorithm, tuple(b / per for b in run.sent), run.count, run.net.max_share)


def _resolve(op: str, nbytes: float, group: Group, profile: "Profile", algorithm: str,
             pl: _Place) -> tuple[str, Sub]:
    """The algorithm to simulate (``auto``: the analytic model's choice) and its sub-choice;
    ValueError for one that is not simulated."""
    sub: Sub = None
    if algorithm == "auto":
        algorithm = collective_time(op, nbytes, group, profile).algorithm
        if algorithm not in ALGORITHMS.get(op, ()):  # e.g. NCCL's nvls/Simple (suite.perf.network.nccl)
            raise ValueError(f"netsim: the analytic model picks {algorithm!r} for {op} on profile "
                             f"{getattr(profile, 'name', '?')!r}, which is not simulated; expected one of "
                             f"{ALGORITHMS.get(op)} (name one, or use a profile whose [communication] library is mpi)")
    if algorithm not in ALGORITHMS.get(op, ()):
        raise ValueError(f"netsim: algorithm for {op}: expected auto or one of {ALGORITHMS.get(op)}, got {algorithm!r}")
    if algorithm == "hierarchical" and op in ("allreduce", "broadcast") and len(pl.dims) > 1:
        sub = _best_sub(op, nbytes, pl, group, profile)
    if algorithm == "hierarchical" and len(pl.dims) == 1:
        algorithm = collective_time(op, nbytes, group, profile, "hierarchical").algorithm
    return algorithm, sub


class _Run:
    """One simulation: every rank a simpy process through its steps; a message waits for the
    receiver to post the receive (rendezvous), then its level's latency, then flows."""

    def __init__(self, pl: _Place, sched: Schedule) -> None:
        self.pl, self.sched = pl, sched
        self.env = simpy.Environment()
        self.net = _Net(self.env, pl.caps)
        self.box: dict[Hashable, Any] = {}
        self.sent = [0.0] * pl.nlev
        self.count = 0
        self.finish = 0.0
        for r in range(pl.p):
            self.env.process(self.rank(r))
        self.env.run()

    def mail(self, key: Hashable) -> Any:
        """The event of *key* (created on first use by either side)."""
        ev = self.box.get(key)
        if ev is None:
            ev = self.box[key] = self.env.event()
        return ev

    def send(self, src: int, dst: int | tuple[int, ...], nb: float, tag: Tag) -> Proc:
        pl = self.pl
        dsts = dst if isinstance(dst, tuple) else (dst,)
        i = pl.crossed(src, dsts[0]) if len(dsts) == 1 else max(pl.crossed(src, x) for x in dsts)
        route = pl.route(src, dsts[0], i)
        self.count += 1
        self.sent[pl.dims[i].level] += nb
        # rendezvous: the data moves once the receiver has posted the receive (reached the step)
        yield self.env.all_of([self.mail(("ready", src, x, tag)) for x in dsts])
        yield self.env.timeout(pl.lv[pl.dims[i].level].lat)
        yield self.net.flow(route, nb)
        for x in dsts:
            self.mail((src, x, tag)).succeed()

    def rank(self, r: int) -> Proc:
        for sends, recvs, red in self.sched[r]:
            for s, tag in recvs:
                self.mail(("ready", s, r, tag)).succeed()
            evs = [self.env.process(self.send(r, d, nb, tag)) for d, nb, tag in sends]
            evs += [self.mail((s, r, tag)) for s, tag in recvs]
            if evs:
                yield self.env.all_of(evs)
            if red and self.pl.gamma:
                yield self.env.timeout(red * self.pl.gamma)
        self.finish = max(self.finish, self.env.now)


def _best_sub(op: str, nbytes: float, pl: _Place, group: Group, profile: "Profile") -> Sub:
    """The sub-choice of a multi-level hierarchical algorithm the analytic model prices fastest."""
    lv, intra, g, token = _prepare(profile)
    pi = group.ranks_per_node
    best: tuple[float, Sub] | None = None
    for sub in _subs(op, "hierarchical", pl.dims):
        t, _ = _price(op, "hierarchical", float(nbytes), pl.dims, lv, pi, g, pl.p, sub)
        if best is None or t < best[0]:
            best = (t, sub)
    assert best is not None  # _subs gives at least one
    return best[1]
