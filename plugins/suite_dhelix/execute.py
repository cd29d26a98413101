"""DHelix's execute fidelity: the pairing DP against brute force, and strand interleaving on real arrays.

1. **The DP** (:func:`suite_dhelix.model.pair_dp`) on random operator times of ``n x n`` segments
   (``n = segments`` <= 6) equals the brute-force minimum over every merge of the two strands
   (:func:`brute_force`: each step runs the next forward op, the next backward op, or both) and
   networkx's shortest path on the grid DAG (:func:`networkx_dp`).
2. **Two micro-batches of a small float64 transformer block** (attention with heads split over
   ``tp`` simulated ranks, a tanh MLP, residuals; Megatron tensor parallelism with sequence
   parallelism: all-gather before QKV and FC1, reduce-scatter after the projection and FC2, the
   mirror in the backward pass) run with real collectives (:mod:`suite.collectives`, every
   message in a ledger). The strands run in the DP's interleaved order (micro-batch 1's forward,
   then micro-batch 2's forward merged with micro-batch 1's backward, then micro-batch 2's
   backward) and sequentially; the weight gradients must be identical, non-zero (the authors
   disclosed a bug that zeroed the backward gradients), and equal to a dense single-device
   oracle (one matrix per weight) and to central finite differences of the dense loss.

On a CPU nothing overlaps (a 2-core trial, GEMM in one thread and a copy in the other, took about
the sum): the interleaved run's time over the sequential one only bounds the interleaving's own
cost (``interleave_ratio``).
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from suite.api import Ledger, Result, allgather, reduce_scatter

from suite_dhelix import model

__all__ = ["brute_force", "networkx_dp", "random_ops", "Block", "run_strands", "dense_grads", "evaluate"]


# --------------------------------------------------------------------------- 1. the DP


def random_ops(n: int, k: int, rng: np.random.Generator):
    """Random forward / backward operator lists: each op compute-only or comm-only, 0.1-2 ms."""
    def one(name):
        t = float(rng.uniform(1e-4, 2e-3))
        return model.Op(name, compute=t) if rng.random() < 0.6 else model.Op(name, comm=t)
    return [one(f"f{i}") for i in range(n)], [one(f"b{j}") for j in range(k)]


def brute_force(fwd, bwd, sigma: float) -> float:
    """Minimum time over every merge of the two strands (exhaustive; fine up to 6 x 6 = 8989 merges)."""
    best = np.inf

    def rec(i, j, t):
        nonlocal best
        if t >= best:
            return
        if i == len(fwd) and j == len(bwd):
            best = t
            return
        if i < len(fwd):
            rec(i + 1, j, t + model.pair_time(fwd[i], None, sigma))
        if j < len(bwd):
            rec(i, j + 1, t + model.pair_time(None, bwd[j], sigma))
        if i < len(fwd) and j < len(bwd):
            rec(i + 1, j + 1, t + model.pair_time(fwd[i], bwd[j], sigma))

    rec(0, 0, 0.0)
    return float(best)


def networkx_dp(fwd, bwd, sigma: float) -> float:
    """Shortest path from (0, 0) to (n, k) on the grid DAG whose edges are the DP's three moves."""
    import networkx as nx

    g = nx.DiGraph()
    n, k = len(fwd), len(bwd)
    for i, j in itertools.product(range(n + 1), range(k + 1)):
        if i < n:
            g.add_edge((i, j), (i + 1, j), weight=model.pair_time(fwd[i], None, sigma))
        if j < k:
            g.add_edge((i, j), (i, j + 1), weight=model.pair_time(None, bwd[j], sigma))
        if i < n and j < k:
            g.add_edge((i, j), (i + 1, j + 1), weight=model.pair_time(fwd[i], bwd[j], sigma))
    if n == 0 and k == 0:
        return 0.0
    return float(nx.shortest_path_length(g, (0, 0), (n, k), weight="weight", method="dijkstra"))


# --------------------------------------------------------------------------- 2. the block


class Block:
    """A float64 transformer block sharded over ``tp`` simulated ranks (sequence parallelism).

    ``h`` hidden, ``heads = 2 tp`` heads of ``h / heads``, MLP width ``2h``, sequence ``s``
    (a multiple of ``tp``). Rank ``r`` holds the columns of Wq, Wk, Wv for its heads and the rows
    of Wo; the columns of W1 and the rows of W2 of its MLP slice (Megatron's split).
    """

    def __init__(self, h: int, s: int, tp: int, seed: int = 0):
        if s % tp or h % (2 * tp):
            raise ValueError(f"dhelix execute: seq {s} and hidden {h} must be multiples of tp={tp} (and 2 tp)")
        self.h, self.s, self.tp = h, s, tp
        self.heads = 2 * tp
        self.d = h // self.heads
        self.f = 2 * h
        rng = np.random.default_rng(seed)
        sc = 1.0 / np.sqrt(h)
        self.W = {n: rng.normal(0, sc, (h, h)) for n in ("q", "k", "v", "o")}
        self.W["1"] = rng.normal(0, sc, (h, self.f))
        self.W["2"] = rng.normal(0, 1.0 / np.sqrt(self.f), (self.f, h))
        self.ledger = Ledger()

    # shards of the full weights
    def cols(self, name, r):
        w = self.W[name]
        n = w.shape[1] // self.tp
        return w[:, r * n:(r + 1) * n]

    def rows(self, name, r):
        w = self.W[name]
        n = w.shape[0] // self.tp
        return w[r * n:(r + 1) * n, :]

    # collectives on real arrays (shard c of the sequence lives on rank c)
    def ag(self, shards, tag):
        full = allgather([x.reshape(-1) for x in shards], self.ledger, tag)
        return [f.reshape(self.s, self.h) for f in full]

    def rs(self, partials, tag):
        p = self.tp
        n = self.s // p
        if p == 1:
            return [partials[0].copy()]
        bufs = reduce_scatter([x.reshape(-1) for x in partials], self.ledger, tag)
        out = [None] * p
        for r in range(p):  # rank r holds the full sum of chunk (r + 1) % p
            c = (r + 1) % p
            out[c] = bufs[r][c * n * self.h:(c + 1) * n * self.h].reshape(n, self.h)
        return out

    def zero_grads(self):
        return {n: np.zeros_like(w) for n, w in self.W.items()}

    def strand(self, x_shards, grads):
        """The forward and backward operator lists of one micro-batch (bound methods of a
        :class:`_Strand` over its state), named as :func:`suite_dhelix.model.layer_ops` names them."""
        sd = _Strand(self, x_shards, grads)
        fwd = [sd.ag_attn, sd.qkv, sd.core, sd.proj, sd.rs_attn, sd.ag_mlp, sd.fc1, sd.fc2, sd.rs_mlp]
        bwd = [sd.ag_mlp_b, sd.fc2_b, sd.fc1_b, sd.rs_mlp_b, sd.ag_attn_b, sd.proj_b, sd.core_b, sd.qkv_b, sd.rs_attn_b]
        return fwd, bwd, sd.st


class _Strand:
    """One micro-batch through a :class:`Block` on its ``tp`` ranks: each operator a method that
    reads and writes the strand's state ``st`` (per-rank lists) and accumulates into ``grads``;
    the loss is ``0.5 * sum(out ** 2)``, so ``dout = out``."""

    def __init__(self, block: "Block", x_shards, grads):
        self.b, self.grads = block, grads
        self.st: dict = {"x": x_shards}
        self.p, self.d, self.hpr = block.tp, block.d, block.heads // block.tp
        self.sq = 1.0 / np.sqrt(block.d)

    # ---- forward
    def ag_attn(self):
        self.st["xg"] = self.b.ag(self.st["x"], "ag_attn")

    def qkv(self):
        st, b = self.st, self.b
        for name in ("q", "k", "v"):
            st[name] = [st["xg"][r] @ b.cols(name, r) for r in range(self.p)]

    def core(self):
        st = self.st
        st["P"], st["att"] = [], []
        for r in range(self.p):
            Ps, outs = [], []
            for j in range(self.hpr):
                sl = slice(j * self.d, (j + 1) * self.d)
                S = st["q"][r][:, sl] @ st["k"][r][:, sl].T * self.sq
                S = np.exp(S - S.max(axis=1, keepdims=True))
                P = S / S.sum(axis=1, keepdims=True)
                Ps.append(P)
                outs.append(P @ st["v"][r][:, sl])
            st["P"].append(Ps)
            st["att"].append(np.concatenate(outs, axis=1))

    def proj(self):
        self.st["o"] = [self.st["att"][r] @ self.b.rows("o", r) for r in range(self.p)]

    def _reduce_add(self, src: str, residual: str, tag: str, out: str):
        """Reduce-scatter the ranks' partial *src* (sequence parallelism) and add the *residual* shard."""
        y = self.b.rs(self.st[src], tag)
        self.st[out] = [self.st[residual][c] + y[c] for c in range(self.p)]

    def rs_attn(self):
        self._reduce_add("o", "x", "rs_attn", "y1")

    def ag_mlp(self):
        self.st["z"] = self.b.ag(self.st["y1"], "ag_mlp")

    def fc1(self):
        self.st["act"] = [np.tanh(self.st["z"][r] @ self.b.cols("1", r)) for r in range(self.p)]

    def fc2(self):
        self.st["u"] = [self.st["act"][r] @ self.b.rows("2", r) for r in range(self.p)]

    def rs_mlp(self):
        self._reduce_add("u", "y1", "rs_mlp", "out")

    # ---- backward
    def ag_mlp_b(self):
        self.st["dout"] = [o.copy() for o in self.st["out"]]
        self.st["du"] = self.b.ag(self.st["dout"], "ag_mlp_b")

    def _linear_b(self, name: str, r: int, x, dy, by_rows: bool):
        """Rank *r*'s share of a linear layer's backward: the gradient of its slice of weight *name*
        (rows of a row-split matrix, else columns) accumulated, the input gradient returned."""
        n = (self.b.f if name in ("1", "2") else self.b.h) // self.p
        sl = slice(r * n, (r + 1) * n)
        if by_rows:
            self.grads[name][sl, :] += x.T @ dy
            return dy @ self.b.rows(name, r).T
        self.grads[name][:, sl] += x.T @ dy
        return dy @ self.b.cols(name, r).T

    def fc2_b(self):
        st = self.st
        st["da1"] = [self._linear_b("2", r, st["act"][r], st["du"][r], True) * (1.0 - st["act"][r] ** 2)
                     for r in range(self.p)]

    def fc1_b(self):
        st = self.st
        st["dz"] = [self._linear_b("1", r, st["z"][r], st["da1"][r], False) for r in range(self.p)]

    def rs_mlp_b(self):
        self._reduce_add("dz", "dout", "rs_mlp_b", "dy1")

    def ag_attn_b(self):
        self.st["do"] = self.b.ag(self.st["dy1"], "ag_attn_b")

    def proj_b(self):
        st = self.st
        st["datt"] = [self._linear_b("o", r, st["att"][r], st["do"][r], True) for r in range(self.p)]

    def core_b(self):
        st = self.st
        st["dq"], st["dk"], st["dv"] = [], [], []
        for r in range(self.p):
            dq, dk, dv = (np.zeros_like(st["q"][r]) for _ in range(3))
            for j in range(self.hpr):
                sl = slice(j * self.d, (j + 1) * self.d)
                P, da = st["P"][r][j], st["datt"][r][:, sl]
                dv[:, sl] = P.T @ da
                dP = da @ st["v"][r][:, sl].T
                dS = P * (dP - (dP * P).sum(axis=1, keepdims=True))
                dq[:, sl] = dS @ st["k"][r][:, sl] * self.sq
                dk[:, sl] = dS.T @ st["q"][r][:, sl] * self.sq
            st["dq"].append(dq)
            st["dk"].append(dk)
            st["dv"].append(dv)

    def qkv_b(self):
        st = self.st
        pairs = (("q", "dq"), ("k", "dk"), ("v", "dv"))
        st["dxg"] = [sum(self._linear_b(name, r, st["xg"][r], st[key][r], False) for name, key in pairs)
                     for r in range(self.p)]

    def rs_attn_b(self):
        self._reduce_add("dxg", "dy1", "rs_attn_b", "dx")


def run_strands(block: Block, xs, plan=None):
    """Two micro-batches ``xs = (x1, x2)`` (each (s, h)); sequential when *plan* is None, else
    F1, then F2 merged with B1 by *plan* (list of (i, j) from :func:`~suite_dhelix.model.pair_dp`),
    then B2. Returns the accumulated weight gradients and the per-strand states."""
    grads = block.zero_grads()
    p, n = block.tp, block.s // block.tp
    strands = [block.strand([x[c * n:(c + 1) * n] for c in range(p)], grads) for x in xs]
    (f1, b1, s1), (f2, b2, s2) = strands
    if plan is None:
        for op in f1 + b1 + f2 + b2:
            op()
    else:
        for op in f1:
            op()
        for i, j in plan:  # a co-executed pair runs one after the other here (no overlap on a CPU)
            if i is not None:
                f2[i]()
            if j is not None:
                b1[j]()
        for op in b2:
            op()
    return grads, (s1, s2)


def _dense_forward(W, x, heads):
    h = x.shape[1]
    d = h // heads
    q, k, v = x @ W["q"], x @ W["k"], x @ W["v"]
    outs = []
    for j in range(heads):
        sl = slice(j * d, (j + 1) * d)
        S = q[:, sl] @ k[:, sl].T / np.sqrt(d)
        S = np.exp(S - S.max(axis=1, keepdims=True))
        outs.append((S / S.sum(axis=1, keepdims=True)) @ v[:, sl])
    y1 = x + np.concatenate(outs, axis=1) @ W["o"]
    return y1 + np.tanh(y1 @ W["1"]) @ W["2"]


def dense_loss(W, xs, heads) -> float:
    """The oracle's loss: ``sum over micro-batches of 0.5 ||block(x)||^2`` on one device."""
    return float(sum(0.5 * np.sum(_dense_forward(W, x, heads) ** 2) for x in xs))


def dense_grads(block: Block, xs):
    """Oracle gradients: the same block on one device (full matrices), two micro-batches, by
    reverse-mode differentiation written out densely."""
    W, heads = block.W, block.heads
    h = block.h
    d = h // heads
    g = {n: np.zeros_like(w) for n, w in W.items()}
    for x in xs:
        q, k, v = x @ W["q"], x @ W["k"], x @ W["v"]
        Ps, outs = [], []
        for j in range(heads):
            sl = slice(j * d, (j + 1) * d)
            S = q[:, sl] @ k[:, sl].T / np.sqrt(d)
            S = np.exp(S - S.max(axis=1, keepdims=True))
            P = S / S.sum(axis=1, keepdims=True)
            Ps.append(P)
            outs.append(P @ v[:, sl])
        att = np.concatenate(outs, axis=1)
        y1 = x + att @ W["o"]
        act = np.tanh(y1 @ W["1"])
        out = y1 + act @ W["2"]
        dout = out
        g["2"] += act.T @ dout
        da1 = (dout @ W["2"].T) * (1 - act ** 2)
        g["1"] += y1.T @ da1
        dy1 = dout + da1 @ W["1"].T
        g["o"] += att.T @ dy1
        datt = dy1 @ W["o"].T
        dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
        for j in range(heads):
            sl = slice(j * d, (j + 1) * d)
            P, da = Ps[j], datt[:, sl]
            dv[:, sl] = P.T @ da
            dP = da @ v[:, sl].T
            dS = P * (dP - (dP * P).sum(axis=1, keepdims=True))
            dq[:, sl] = dS @ k[:, sl] / np.sqrt(d)
            dk[:, sl] = dS.T @ q[:, sl] / np.sqrt(d)
        g["q"] += x.T @ dq
        g["k"] += x.T @ dk
        g["v"] += x.T @ dv
    return g


def finite_difference(block: Block, xs, entries, eps: float = 1e-6):
    """Central differences of :func:`dense_loss` at ``entries`` = [(name, i, j), ...]."""
    out = []
    for name, i, j in entries:
        W = {n: w.copy() for n, w in block.W.items()}
        W[name][i, j] += eps
        up = dense_loss(W, xs, block.heads)
        W[name][i, j] -= 2 * eps
        dn = dense_loss(W, xs, block.heads)
        out.append((up - dn) / (2 * eps))
    return np.array(out)


def _time(fn, repeats: int = 5):
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def evaluate(scenario) -> Result:
    """Execute fidelity (see the module docstring). Metrics: ``dp_error`` (DP vs brute force and
    networkx, seconds), ``grad_mismatch`` (interleaved vs sequential, max abs), ``oracle_error``
    (relative, vs the dense oracle), ``fd_error`` (relative, vs finite differences),
    ``grad_norm`` (> 0), ``interleave_ratio`` (interleaved time / sequential, median of 7
    alternating runs). The block has ``block`` hidden units and ``min(seq, 4 block)`` tokens
    (rounded to a multiple of tp); the SI plan comes from the model's operators of the scenario's
    workload and profile at ``seq``."""
    prm = scenario.params
    sigma = float(prm["sigma"])
    rng = np.random.default_rng(scenario.seed)
    dp_err = _dp_error(int(prm["segments"]), sigma, rng)
    tp = int(prm["tp"])
    h = int(prm["block"])
    h = max(2 * tp, h - h % (2 * tp))
    s = min(int(prm["seq"]), 4 * h)  # the block's sequence: at most 4 x its hidden size (small)
    s = max(tp, s - s % tp)
    block = Block(h, s, tp, seed=scenario.seed)
    xs = [rng.normal(0, 1, (s, h)) for _ in range(2)]
    f_ops, b_ops, si = _si_plan(scenario, sigma)
    g_seq, _ = run_strands(block, xs)
    g_int, _ = run_strands(block, xs, si)
    r = Result()
    r.add("dp_error", dp_err, "s", "lower")
    r.add("grad_mismatch", max(float(np.max(np.abs(g_seq[k] - g_int[k]))) for k in g_seq), "1", "lower")
    _check_gradients(r, block, xs, g_int, rng)
    _time_strands(r, block, xs, si)
    r.add("ledger_bytes", block.ledger.total_bytes, "B", "none")
    r.artifacts["si_plan"] = [[f_ops[i].name if i is not None else None, b_ops[j].name if j is not None else None]
                              for i, j in si]
    return r


def _dp_error(nseg: int, sigma: float, rng) -> float:
    """The pairing DP against brute force and networkx on random operator lists of 1..nseg (s)."""
    err = 0.0
    for n in range(1, nseg + 1):
        fwd, bwd = random_ops(n, n, rng)
        t_dp, _ = model.pair_dp(fwd, bwd, sigma)
        err = max(err, abs(t_dp - brute_force(fwd, bwd, sigma)), abs(t_dp - networkx_dp(fwd, bwd, sigma)))
    return err


def _si_plan(scenario, sigma: float):
    """The SI plan of the real operator costs on the scenario's profile (the model's op list):
    DHelix's pairing, or a baseline's order (micro-batch 2's whole forward, then micro-batch 1's
    backward)."""
    prm = scenario.params
    table = model.rebuilt_table(scenario.workload, int(prm["seq"]))
    plan = model.plan_of({**prm, "pp": 1, "dp": 1, "gbs": int(prm["mbs"])}, table, scenario.profile)
    f_ops, b_ops = model.layer_ops(table, plan, scenario.profile)
    if scenario.variant.startswith("dhelix"):
        _t, si = model.pair_dp(f_ops, b_ops, sigma)
    else:
        si = [(i, None) for i in range(len(f_ops))] + [(None, j) for j in range(len(b_ops))]
    return f_ops, b_ops, si


def _check_gradients(r: Result, block: Block, xs, g_int: dict, rng) -> None:
    """The interleaved gradients against the dense oracle and finite differences (relative errors),
    and their norm."""
    oracle = dense_grads(block, xs)
    scale = max(float(np.max(np.abs(oracle[k]))) for k in oracle)
    r.add("oracle_error", max(float(np.max(np.abs(g_int[k] - oracle[k]))) for k in oracle) / scale, "1", "lower")
    entries = [(n, int(rng.integers(block.W[n].shape[0])), int(rng.integers(block.W[n].shape[1])))
               for n in ("q", "o", "1", "2")]
    fd = finite_difference(block, xs, entries)
    ours = np.array([g_int[n][i, j] for n, i, j in entries])
    r.add("fd_error", float(np.max(np.abs(fd - ours)) / max(float(np.max(np.abs(fd))), 1e-30)), "1", "lower")
    r.add("grad_norm", float(np.sqrt(sum(float(np.sum(v ** 2)) for v in g_int.values()))), "1", "none")


def _time_strands(r: Result, block: Block, xs, si) -> None:
    """Sequential and interleaved runs timed, alternating 7 times so drifts of the machine hit both alike."""
    t_s, t_i = [], []
    for _ in range(7):
        t_s += _time(lambda: run_strands(block, xs), 1)
        t_i += _time(lambda: run_strands(block, xs, si), 1)
    r.add("interleave_ratio", float(np.median(t_i) / np.median(t_s)), "1", "lower",
          samples=[a / b for a, b in zip(t_i, t_s)])
    r.add("sequential_time", float(np.median(t_s)), "s", "lower", samples=t_s)
    r.add("interleaved_time", float(np.median(t_i)), "s", "lower", samples=t_i)
