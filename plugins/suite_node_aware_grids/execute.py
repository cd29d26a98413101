"""Execute fidelity: a real distributed contraction over P simulated ranks, SUMMA-style.

The einsum operands are grouped as ``C[M, N] = A[M, K] B[K, N]`` (local transposes, as CTF folds
its local blocks into matrices) and block-distributed over the processor grid of the variant's
plan (:func:`suite_node_aware_grids.model.make_plan`). Grid position ``x = (x_M, x_N, x_K)``
owns (its *home* blocks):

* ``A[M-block x_M, panels of chunk x_K owned by x_N]`` and ``B[panels of chunk x_K owned by
  x_M, N-block x_N]``: the contracted extent is cut into P_K chunks and each chunk into
  ``S = lcm(P_M, P_N)`` panels; panel t is owned by ``x_N = t // (S / P_N)`` (A) and
  ``x_M = t // (S / P_M)`` (B).

SUMMA [vdGeijn97]: for every step t the owner of A's panel t broadcasts it along N and the owner
of B's panel t along M; every rank adds ``A_panel @ B_panel`` to its partial C; at the end the
partial C blocks are reduced along K onto ``x_K = 0``. Every broadcast and reduction is
*two-level*: one message per remote node (a binomial :func:`suite.collectives.broadcast` among
one leader per node), then inside each node (another binomial broadcast; a reduction goes the
other way with :func:`suite.collectives.send`). Every message is in a
:class:`suite.collectives.Ledger`; node = physical rank // ppn.

Node-aware placements start from the default layout (rank r holds position r's blocks) and remap
first: the rank that takes position x receives x's home blocks in one message (as
``MPI_Sendrecv_replace`` does in CTF); C's blocks go back to their default owners at the end.

Oracle: ``numpy.einsum`` on the whole tensors (and ``opt_einsum.contract`` when installed), float64,
``allclose``; the ledger's inter-node bytes (remap excluded) against
:func:`suite_node_aware_grids.grids.volume_inter`, exact for divisible sizes.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict

import numpy as np

from suite.api import Ledger, broadcast, send

from suite_node_aware_grids import grids as G
from suite_node_aware_grids import model

__all__ = ["MAX_RANKS", "MAX_ELEMENTS", "oracle", "matricize", "unmatricize", "bcast_two_level",
           "reduce_two_level", "DistributedRun", "run_contraction", "ledger_split", "evaluate"]

#: Beyond these the execute fidelity declines (Skip): simulated ranks, and elements of one operand.
MAX_RANKS = 512
MAX_ELEMENTS = 1 << 22

_NP = {"fp64": np.float64, "fp32": np.float32}


def oracle(spec: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, str]:
    """C by an independent library: ``opt_einsum.contract`` if importable, else ``numpy.einsum``.

    Returns ``(C, name of the library)``.
    """
    try:
        import opt_einsum  # type: ignore[import-not-found]

        return np.asarray(opt_einsum.contract(spec, a, b)), "opt_einsum.contract"
    except ImportError:
        return np.einsum(spec, a, b, optimize=True), "numpy.einsum"


def matricize(groups, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A as an (M, K) and B as a (K, N) matrix: operands transposed to (m, k) / (k, n) index order
    and reshaped (C order)."""
    pa = [groups.a.index(x) for x in groups.m + groups.k]
    pb = [groups.b.index(x) for x in groups.k + groups.n]
    return (np.ascontiguousarray(a.transpose(pa)).reshape(groups.M, groups.K),
            np.ascontiguousarray(b.transpose(pb)).reshape(groups.K, groups.N))


def unmatricize(groups, c: np.ndarray, extents) -> np.ndarray:
    """The (M, N) result back in C's index order."""
    order = groups.m + groups.n
    t = c.reshape(tuple(int(extents[x]) for x in order))
    return np.ascontiguousarray(t.transpose([order.index(x) for x in groups.c]))


def _chunks(n: int, parts: int) -> list[slice]:
    bounds = np.linspace(0, n, parts + 1).round().astype(int)
    return [slice(int(bounds[i]), int(bounds[i + 1])) for i in range(parts)]


def _relay(ledger: Ledger, tmp: Ledger, ranks: list[int], tag: str) -> None:
    for m in tmp.messages:
        ledger.record(ranks[m.src], ranks[m.dst], m.nbytes, tag)


def bcast_two_level(ledger: Ledger, members: list[int], root: int, array: np.ndarray, ppn: int,
                    tag: str) -> dict[int, np.ndarray]:
    """Broadcast *array* from physical rank *root* to *members*: a binomial broadcast among one
    leader per node (the root on its own node, the lowest rank elsewhere), then a binomial
    broadcast inside every node. Returns rank -> received copy.

    Inter-node messages: one per remote node; intra-node: one per other member of each node.
    """
    by_node: dict[int, list[int]] = defaultdict(list)
    for r in members:
        by_node[r // ppn].append(r)
    rn = root // ppn
    leaders = [root] + [min(rs) for nd, rs in sorted(by_node.items()) if nd != rn]
    if len(leaders) > 1:
        tmp = Ledger()
        got = broadcast(array, len(leaders), 0, tmp, tag)
        _relay(ledger, tmp, leaders, tag)
    else:  # one node: no inter-node stage, and no copy of the root's data for it
        got = [array]
    out: dict[int, np.ndarray] = {}
    for lead, arr in zip(leaders, got):
        local = [lead] + sorted(r for r in by_node[lead // ppn] if r != lead)
        if len(local) > 1:
            tmp = Ledger()
            inner = broadcast(arr, len(local), 0, tmp, tag)
            _relay(ledger, tmp, local, tag)
            out.update(zip(local, inner))
        else:
            out[lead] = arr if len(leaders) > 1 else np.array(arr, copy=True)
    return out


def reduce_two_level(ledger: Ledger, members: list[int], root: int, arrays: dict[int, np.ndarray], ppn: int,
                     tag: str, consume: bool = False) -> np.ndarray:
    """Sum ``arrays[r]`` over *members* onto *root*: every member sends to its node's leader (the
    root on its own node, the lowest rank elsewhere), which adds; leaders send to the root.

    With ``consume=True`` each leader adds into its own ``arrays[lead]`` in place (the caller's
    partial sums are scratch), saving one copy per node."""
    by_node: dict[int, list[int]] = defaultdict(list)
    for r in members:
        by_node[r // ppn].append(r)
    rn = root // ppn
    total = None
    for nd, rs in sorted(by_node.items()):
        lead = root if nd == rn else min(rs)
        acc = arrays[lead] if consume else np.array(arrays[lead], copy=True)
        for r in rs:
            if r != lead:
                acc += send(ledger, r, lead, arrays[r], tag)
        if lead != root:
            acc = send(ledger, lead, root, acc, tag)
        if total is None:
            total = acc
        else:
            total += acc
    return total


class DistributedRun:
    """One distributed contraction of a plan (see the module docstring). Call :meth:`run`."""

    def __init__(self, groups, amat: np.ndarray, bmat: np.ndarray, lens, g, ppn: int):
        self.groups, self.amat, self.bmat = groups, amat, bmat
        self.lens = tuple(int(x) for x in lens)
        self.pm, self.pn = self.lens[0], self.lens[1]
        self.pk = self.lens[2] if len(self.lens) > 2 else 1
        self.g, self.ppn = g, int(ppn)
        self.p = self.pm * self.pn * self.pk
        self.s = G.panel_steps(self.lens)
        self.mb = _chunks(groups.M, self.pm)
        self.nb = _chunks(groups.N, self.pn)
        self.panels = []  # panels[xk][t] -> slice of K
        for kc in _chunks(groups.K, self.pk):
            n = kc.stop - kc.start
            self.panels.append([slice(kc.start + s.start, kc.start + s.stop) for s in _chunks(n, self.s)])
        pos = np.arange(self.p)
        self.holder = [int(r) for r in G.rank_of_position(pos, self.lens, g, self.ppn)]

    def pos(self, xm: int, xn: int, xk: int) -> int:
        return xm + self.pm * (xn + self.pn * xk)

    def coords(self, x: int) -> tuple[int, int, int]:
        return x % self.pm, (x // self.pm) % self.pn, x // (self.pm * self.pn)

    def home(self, x: int) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
        """Home blocks of position x: panel t -> A piece, panel t -> B piece."""
        xm, xn, xk = self.coords(x)
        a_t = range(xn * self.s // self.pn, (xn + 1) * self.s // self.pn)
        b_t = range(xm * self.s // self.pm, (xm + 1) * self.s // self.pm)
        pa = {t: self.amat[self.mb[xm], self.panels[xk][t]] for t in a_t}
        pb = {t: self.bmat[self.panels[xk][t], self.nb[xn]] for t in b_t}
        return pa, pb

    def _blocks(self) -> dict[int, np.ndarray]:
        """An uninitialised C block (M-block x N-block of its position) per position, views of one
        allocation."""
        dtype = np.result_type(self.amat, self.bmat)
        shapes = [(self.mb[xm].stop - self.mb[xm].start, self.nb[xn].stop - self.nb[xn].start)
                  for xm, xn, _ in map(self.coords, range(self.p))]
        arena = np.empty(sum(m * n for m, n in shapes), dtype=dtype)
        out, off = {}, 0
        for x, (m, n) in enumerate(shapes):
            out[x] = arena[off:off + m * n].reshape(m, n)
            off += m * n
        return out

    def run(self, ledger: Ledger) -> np.ndarray:
        """Run the contraction; returns C as an (M, N) matrix assembled from the final owners."""
        held_a, held_b = self._initial_layout(ledger)
        recv_a, recv_b = self._broadcast_panels(ledger, held_a, held_b)
        cpart = self._local_products(recv_a, recv_b)
        return self._assemble(ledger, cpart)

    def _initial_layout(self, ledger: Ledger) -> tuple[dict, dict]:
        """Physical rank x holds position x's home blocks; when the grid renumbers ranks, each
        position's blocks move to their holder in one message."""
        held_a: dict[int, dict[int, np.ndarray]] = {}
        held_b: dict[int, dict[int, np.ndarray]] = {}
        for x in range(self.p):
            pa, pb = self.home(x)
            q = self.holder[x]
            if q != x:
                pa, pb = self._remap_home(ledger, x, q, pa, pb)
            held_a[x], held_b[x] = pa, pb
        return held_a, held_b

    def _remap_home(self, ledger: Ledger, x: int, q: int, pa: dict, pb: dict) -> tuple[dict, dict]:
        keys_a, keys_b = sorted(pa), sorted(pb)
        parts = [pa[t] for t in keys_a] + [pb[t] for t in keys_b]
        flat = np.concatenate([v.ravel() for v in parts]) if parts else np.zeros(0, self.amat.dtype)
        recv = send(ledger, x, q, flat, "remap")
        xm, xn, xk = self.coords(x)
        off, pa, pb = 0, {}, {}
        for t in keys_a:
            shp = (self.mb[xm].stop - self.mb[xm].start, self.panels[xk][t].stop - self.panels[xk][t].start)
            pa[t] = recv[off:off + shp[0] * shp[1]].reshape(shp)
            off += shp[0] * shp[1]
        for t in keys_b:
            shp = (self.panels[xk][t].stop - self.panels[xk][t].start, self.nb[xn].stop - self.nb[xn].start)
            pb[t] = recv[off:off + shp[0] * shp[1]].reshape(shp)
            off += shp[0] * shp[1]
        return pa, pb

    def _broadcast_panels(self, ledger: Ledger, held_a: dict, held_b: dict) -> tuple[dict, dict]:
        """Per step t, panel t of A along each grid row and of B along each grid column, by
        two-level broadcasts; every position's received panels, in step order."""
        ppn, hold = self.ppn, self.holder
        a_per, b_per = self.s // self.pn, self.s // self.pm
        recv_a: dict[int, list[np.ndarray]] = {x: [] for x in range(self.p)}
        recv_b: dict[int, list[np.ndarray]] = {x: [] for x in range(self.p)}
        for t in range(self.s):
            on, om = t // a_per, t // b_per
            for xm in range(self.pm):
                for xk in range(self.pk):
                    xs = [self.pos(xm, xn, xk) for xn in range(self.pn)]
                    root = self.pos(xm, on, xk)
                    got = bcast_two_level(ledger, [hold[x] for x in xs], hold[root], held_a[root][t], ppn, "bcast-A")
                    for x in xs:
                        recv_a[x].append(got[hold[x]])
            for xn in range(self.pn):
                for xk in range(self.pk):
                    xs = [self.pos(xm, xn, xk) for xm in range(self.pm)]
                    root = self.pos(om, xn, xk)
                    got = bcast_two_level(ledger, [hold[x] for x in xs], hold[root], held_b[root][t], ppn, "bcast-B")
                    for x in xs:
                        recv_b[x].append(got[hold[x]])
        return recv_a, recv_b

    def _local_products(self, recv_a: dict, recv_b: dict) -> dict[int, np.ndarray]:
        """Each rank's partial C block: its local products over its panels in step order, rank by
        rank, so the block stays in cache across the steps (the same operations in the same
        order per rank as step by step over all ranks). The blocks and their per-step product are
        carved out of arenas: one allocation each instead of one per rank and step (on a VM a
        fresh allocation's page faults cost as much as the GEMM that fills it:
        docs/techniques/node-aware-grids.md)."""
        cpart = self._blocks()
        scratch: dict[tuple[int, int], np.ndarray] = {}
        for x in range(self.p):
            c = cpart[x]
            np.matmul(recv_a[x][0], recv_b[x][0], out=c)
            for ra, rb in zip(recv_a[x][1:], recv_b[x][1:]):
                buf = scratch.get(c.shape)
                if buf is None:
                    buf = scratch[c.shape] = np.empty_like(c)
                np.matmul(ra, rb, out=buf)
                c += buf
            recv_a[x] = recv_b[x] = None  # the panels are consumed
        return cpart

    def _assemble(self, ledger: Ledger, cpart: dict[int, np.ndarray]) -> np.ndarray:
        """Reduce the partial blocks along k (two-level), send each back to its default owner,
        and assemble C."""
        ppn, hold = self.ppn, self.holder
        cmat = np.empty((self.groups.M, self.groups.N), dtype=self.amat.dtype)
        for xm in range(self.pm):
            for xn in range(self.pn):
                xs = [self.pos(xm, xn, xk) for xk in range(self.pk)]
                root = xs[0]
                if self.pk > 1:
                    block = reduce_two_level(ledger, [hold[x] for x in xs], hold[root],
                                             {hold[x]: cpart[x] for x in xs}, ppn, "reduce-C",
                                             consume=True)
                else:
                    block = cpart[root]
                if hold[root] != root:  # back to the default owner
                    block = send(ledger, hold[root], root, block, "remap")
                cmat[self.mb[xm], self.nb[xn]] = block
        return cmat


def ledger_split(ledger: Ledger, ppn: int) -> dict[str, int]:
    """Bytes and messages of a ledger by kind: inter-/intra-node, contraction vs remap."""
    out = defaultdict(int)
    for m in ledger.messages:
        kind = "remap" if m.tag == "remap" else "comm"
        where = "inter" if m.src // ppn != m.dst // ppn else "intra"
        out[f"{kind}_{where}_bytes"] += m.nbytes
        out[f"{kind}_{where}_messages"] += 1
    return dict(out)


def run_contraction(spec_groups, wl, lens, g, ppn: int, dtype: str, seed: int):
    """Random operands (seeded), the distributed result, the oracle and the ledger.

    Returns ``(C_distributed, C_oracle, oracle_name, ledger, DistributedRun, (A, B))``.
    """
    groups = spec_groups
    rng = np.random.default_rng(seed)
    ext = dict(wl.extents)
    a = rng.standard_normal(tuple(int(ext[x]) for x in groups.a)).astype(_NP[dtype])
    b = rng.standard_normal(tuple(int(ext[x]) for x in groups.b)).astype(_NP[dtype])
    amat, bmat = matricize(groups, a, b)
    run = DistributedRun(groups, amat, bmat, lens, g, ppn)
    ledger = Ledger()
    cmat = run.run(ledger)
    c = unmatricize(groups, cmat, ext)
    ref, name = oracle(wl.spec, a.astype(np.float64), b.astype(np.float64))
    return c, ref, name, ledger, run, (a, b)


def _add_traffic(res, ledger: Ledger, plan, ppn: int) -> None:
    """The ledger's bytes and messages (inter- and intra-node, the remap apart) beside the volume
    formulas of the plan."""
    split = ledger_split(ledger, ppn)
    inter = split.get("comm_inter_bytes", 0)
    formula = G.volume_inter(plan.sizes, plan.lens, plan.g, ppn)
    res.add("inter_node_bytes", inter, "B", "lower")
    res.add("intra_node_bytes", split.get("comm_intra_bytes", 0), "B", "lower")
    res.add("inter_node_bytes_formula", formula, "B", "none")
    res.add("total_bytes_formula", G.volume_total(plan.sizes, plan.lens), "B", "none")
    res.add("ledger_formula_error", abs(inter - formula) / formula if formula else float(inter != 0), "1", "lower")
    res.add("remap_bytes", split.get("remap_inter_bytes", 0), "B", "lower")
    res.add("messages", split.get("comm_inter_messages", 0) + split.get("comm_intra_messages", 0), "1", "lower")
    res.add("inter_node_messages", split.get("comm_inter_messages", 0), "1", "lower")
    res.add("remap_messages", split.get("remap_inter_messages", 0) + split.get("remap_intra_messages", 0), "1",
            "lower")
    res.add("bytes_sent", sum(ledger.sent_by().values()), "B", "none")
    res.add("bytes_received", sum(ledger.received_by().values()), "B", "none")


def _oracle_error(c: np.ndarray, ref: np.ndarray, oname: str, dtype: str) -> float:
    """``max |C - C_ref| / max |C_ref|`` of the distributed result *c* against the oracle *ref*.

    Raises
    ------
    suite.api.OracleMismatch
        C not ``allclose`` to the oracle (rtol 1e-10 for fp64, else 1e-4; atol rtol x max |C_ref|).
    """
    from suite.api import OracleMismatch

    scale = float(np.max(np.abs(ref))) or 1.0
    err = float(np.max(np.abs(c.astype(np.float64) - ref))) / scale
    rtol = 1e-10 if dtype == "fp64" else 1e-4
    if not np.allclose(c, ref, rtol=rtol, atol=rtol * scale):
        raise OracleMismatch(f"node-aware-grids execute: distributed C differs from {oname} (max relative error {err:.3g})")
    return err


def _times(run, spec: str, a: np.ndarray, b: np.ndarray, repeats: int) -> tuple[list[float], float]:
    """Wall seconds of *repeats* (at least 1) runs of the contraction on a fresh ledger each, and
    of one call of the oracle on the same operands."""
    samples = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        run.run(Ledger())
        samples.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    oracle(spec, a, b)
    return samples, time.perf_counter() - t0


def evaluate(scenario, repeats: int = 3):
    """Execute fidelity: run the variant's distributed contraction, check C against the oracle and
    the ledger against the volume formula, and time it.

    Returns
    -------
    suite.Result
        ``oracle_error`` (max |C - C_ref| / max |C_ref|), ``inter_node_bytes`` /
        ``intra_node_bytes`` / ``messages`` (ledger, broadcasts and reductions),
        ``inter_node_bytes_formula``, ``total_bytes_formula``, ``ledger_formula_error``
        (relative), ``remap_bytes`` (ledger, crossing nodes), ``remap_messages``, ``bytes_sent`` / ``bytes_received``
        (all messages), ``contraction_time`` (s, median of *repeats*, with samples),
        ``oracle_time`` (s, the oracle on this machine), ``time_ratio``; artifacts ``grid``, ``setup``.

    Raises
    ------
    suite.Skip
        More than :data:`MAX_RANKS` ranks or :data:`MAX_ELEMENTS` elements, or see
        :func:`suite_node_aware_grids.model.resolve`.
    suite.api.OracleMismatch
        C differs from the oracle (a bug).
    """
    from suite.api import Result, Skip

    groups, ranks, ppn, dtype, grid, _eff, wl = model.resolve(scenario)
    if ranks > MAX_RANKS:
        raise Skip(f"node-aware-grids execute: ranks={ranks} > {MAX_RANKS} simulated ranks")
    biggest = max(groups.M * groups.K, groups.K * groups.N, groups.M * groups.N)
    if biggest > MAX_ELEMENTS:
        raise Skip(f"node-aware-grids execute: an operand of {biggest} elements > {MAX_ELEMENTS} "
                   f"(workload {wl.name!r}; use a small contraction or the model fidelity)")
    d = model.DTYPE_BYTES[dtype]
    cap = model.MEMORY_FRACTION * model.node_memory(scenario.profile) / ppn
    try:
        plan = model.make_plan(scenario.variant, groups, ranks, ppn, d, cap, grid)
    except ValueError as exc:
        raise Skip(f"node-aware-grids: {exc}") from None
    c, ref, oname, ledger, run, (a, b) = run_contraction(groups, wl, plan.lens, plan.g, ppn, dtype, scenario.seed)
    err = _oracle_error(c, ref, oname, dtype)
    samples, t_or = _times(run, wl.spec, a, b, repeats)
    res = Result()
    res.add("oracle_error", err, "1", "lower")
    _add_traffic(res, ledger, plan, ppn)
    med = float(np.median(samples))
    res.add("contraction_time", med, "s", "lower", samples=samples)
    res.add("oracle_time", t_or, "s", "none")
    res.add("time_ratio", med / t_or if t_or > 0 else 0.0, "1", "lower")
    res.artifacts["grid"] = {"lens": list(plan.lens), "g": None if plan.g is None else list(plan.g),
                             "steps": run.s}
    res.artifacts["setup"] = {"spec": wl.spec, "extents": dict(wl.extents), "ranks": ranks, "ranks_per_node": ppn,
                              "dtype": dtype, "oracle": oname, "repeats": repeats,
                              "divisible": bool(groups.M % plan.lens[0] == 0 and groups.N % plan.lens[1] == 0
                                                and groups.K % (run.pk * run.s) == 0)}
    return res
