"""COMET's execute fidelity: a small transformer trained one step on tp x pp x dp simulated ranks.

The strategy COMET prices is run for real on float64 numpy arrays: a stack of transformer blocks
(multi-head attention and a GeLU MLP, each with a residual; no norms, biases or dropout) is split

* by tensor parallelism inside each block, as Megatron-LM does (Shoeybi et al. 2019 §3): Q, K, V
  and the first MLP matrix column-split by heads / hidden units, the attention projection and the
  second MLP matrix row-split; the partial outputs summed by :func:`suite.collectives.ring_allreduce`
  (two all-reduces forward, two backward per block, tag ``tp``);
* by pipeline parallelism over contiguous blocks: each tensor-parallel rank hands its ``1/tp`` slice
  of the activation (forward) or its gradient (backward) to the next stage by
  :func:`suite.collectives.send` (tag ``pp``), the receiving stage all-gathers the slices
  (Narayanan et al. SC'21 §4.1 scatter/gather; tag ``pp-gather``);
* by data parallelism: ``dp`` replicas each take ``m`` micro-batches of ``mbs`` sequences
  (gradient accumulation) and sum every shard's gradient with a ring all-reduce (tag ``dp``).

The loss is ``sum(out * G)`` for a fixed random ``G`` (so ``d out = G``): random weights, no
training claim. The oracle is a dense single-process forward and backward of the same model
written independently (:func:`dense_forward_backward`); the evaluate reports the largest
relative error of the output and of every gradient, and the ledger's bytes per tag beside
:func:`suite_comet.model.traffic_bytes`.
"""

from __future__ import annotations

import numpy as np

from suite.api import Ledger, ParameterError, Result, allgather, recv, ring_allreduce, send

from suite_comet.model import traffic_bytes

__all__ = ["init_weights", "dense_forward_backward", "parallel_forward_backward", "evaluate", "EXEC_SHAPE"]

#: the small model: blocks, hidden, heads, MLP width, sequence, micro-batch size, micro-batches per replica
EXEC_SHAPE = {"blocks": 4, "hidden": 16, "heads": 4, "ffn": 32, "seq": 6, "mbs": 2, "microbatches": 2}

_C = np.sqrt(2.0 / np.pi)


def _gelu(z):
    return 0.5 * z * (1.0 + np.tanh(_C * (z + 0.044715 * z ** 3)))


def _gelu_grad(z):
    t = np.tanh(_C * (z + 0.044715 * z ** 3))
    return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * _C * (1.0 + 3 * 0.044715 * z * z)


def init_weights(blocks: int, hidden: int, ffn: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Random float64 weights per block: ``wq, wk, wv, wo`` (h x h), ``w1`` (h x f), ``w2`` (f x h)."""
    rng = np.random.default_rng(seed)
    sc = 1.0 / np.sqrt(hidden)
    out = []
    for _ in range(blocks):
        out.append({k: rng.normal(0, sc, (hidden, hidden)) for k in ("wq", "wk", "wv", "wo")}
                   | {"w1": rng.normal(0, sc, (hidden, ffn)), "w2": rng.normal(0, 1 / np.sqrt(ffn), (ffn, hidden))})
    return out


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def dense_forward_backward(W, x, g, heads):
    """The oracle: dense forward of every block on ``x`` (B, s, h) and backward of ``sum(out * g)``.

    Returns ``(out, grads)`` with ``grads[i][name]`` the gradient of block ``i``'s weight ``name``.
    Attention: per head ``softmax(Q K^T / sqrt(d)) V`` with the heads concatenated, ``x + O Wo``;
    MLP: ``x + gelu(x W1) W2``.
    """
    B, s, h = x.shape
    d = h // heads
    caches, cur = [], x
    for w in W:
        q, k, v = cur @ w["wq"], cur @ w["wk"], cur @ w["wv"]
        qh, kh, vh = (t.reshape(B, s, heads, d).transpose(0, 2, 1, 3) for t in (q, k, v))
        p = _softmax(qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(d))
        o = (p @ vh).transpose(0, 2, 1, 3).reshape(B, s, h)
        x1 = cur + o @ w["wo"]
        z = x1 @ w["w1"]
        u = _gelu(z)
        x2 = x1 + u @ w["w2"]
        caches.append((cur, qh, kh, vh, p, o, x1, z, u))
        cur = x2
    grads = [None] * len(W)
    dx = g
    for i in range(len(W) - 1, -1, -1):
        w = W[i]
        x0, qh, kh, vh, p, o, x1, z, u = caches[i]
        gr = {"w2": np.einsum("bsf,bsh->fh", u, dx)}
        dz = (dx @ w["w2"].T) * _gelu_grad(z)
        gr["w1"] = np.einsum("bsh,bsf->hf", x1, dz)
        dx1 = dx + dz @ w["w1"].T
        gr["wo"] = np.einsum("bsh,bsk->hk", o, dx1)
        do = (dx1 @ w["wo"].T).reshape(B, s, heads, d).transpose(0, 2, 1, 3)
        dp = do @ vh.transpose(0, 1, 3, 2)
        dvh = p.transpose(0, 1, 3, 2) @ do
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / np.sqrt(d)
        dqh, dkh = ds @ kh, ds.transpose(0, 1, 3, 2) @ qh
        dq, dk, dv = (t.transpose(0, 2, 1, 3).reshape(B, s, h) for t in (dqh, dkh, dvh))
        gr["wq"] = np.einsum("bsh,bsk->hk", x0, dq)
        gr["wk"] = np.einsum("bsh,bsk->hk", x0, dk)
        gr["wv"] = np.einsum("bsh,bsk->hk", x0, dv)
        dx = dx1 + dq @ w["wq"].T + dk @ w["wk"].T + dv @ w["wv"].T
        grads[i] = gr
    return cur, grads


def _shard(W, tp, heads):
    """Per block, per tp rank: the rank's column slices (heads / MLP units) and row slices."""
    h = W[0]["wq"].shape[0]
    f = W[0]["w1"].shape[1]
    hc, fc = h // tp, f // tp
    out = []
    for w in W:
        ranks = []
        for r in range(tp):
            c, cf = slice(r * hc, (r + 1) * hc), slice(r * fc, (r + 1) * fc)
            ranks.append({"wq": w["wq"][:, c], "wk": w["wk"][:, c], "wv": w["wv"][:, c], "wo": w["wo"][c, :],
                          "w1": w["w1"][:, cf], "w2": w["w2"][cf, :]})
        out.append(ranks)
    return out


class _Ranks:
    """The simulated ranks of one tp x pp x dp strategy: the sharded blocks, the stage of each
    block, and the collectives between ranks numbered Megatron's way,
    ``rank = t + tp (d + dp p)`` (tp innermost, then dp, then the stage)."""

    def __init__(self, W, heads, tp, pp, dp, mbs, s, ledger: Ledger):
        self.L, self.tp, self.dp, self.mbs, self.s, self.ledger = len(W), tp, dp, mbs, s, ledger
        self.hl, self.d = heads // tp, W[0]["wq"].shape[0] // heads
        bounds = np.linspace(0, self.L, pp + 1).round().astype(int)
        self.stage_of = np.searchsorted(bounds, np.arange(self.L), side="right") - 1
        self.S = _shard(W, tp, heads)

    def rank(self, t, dd, p):
        return t + self.tp * (dd + self.dp * p)

    def handoff(self, a, src_stage, dst_stage, dd):
        """Each tp rank sends its 1/tp slice to the next stage; the receiving stage all-gathers them."""
        flat = a.reshape(-1)
        cuts = np.linspace(0, flat.size, self.tp + 1).round().astype(int)
        got = []
        for t in range(self.tp):
            src, dst = self.rank(t, dd, src_stage), self.rank(t, dd, dst_stage)
            got.append(recv(self.ledger, src, dst, send(self.ledger, src, dst, flat[cuts[t]:cuts[t + 1]], "pp"), "pp"))
        full = allgather(got, self.ledger, "pp-gather") if self.tp > 1 else got
        return full[0].reshape(a.shape)

    def ar(self, parts):
        """Megatron's f / g operators: the tp ranks' partial outputs summed (every rank gets the sum)."""
        return ring_allreduce(parts, self.ledger, "tp")[0] if self.tp > 1 else parts[0]

    def block_forward(self, i, cur):
        """Block *i* forward on the tp ranks: (output, what its backward needs)."""
        mbs, s, hl, d = self.mbs, self.s, self.hl, self.d
        parts, rc = [], []
        for t in range(self.tp):
            w = self.S[i][t]
            q, k, v = cur @ w["wq"], cur @ w["wk"], cur @ w["wv"]
            qh, kh, vh = (a.reshape(mbs, s, hl, d).transpose(0, 2, 1, 3) for a in (q, k, v))
            p = _softmax(qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(d))
            o = (p @ vh).transpose(0, 2, 1, 3).reshape(mbs, s, hl * d)
            parts.append(o @ w["wo"])
            rc.append((qh, kh, vh, p, o))
        x1 = cur + self.ar(parts)
        zs = [x1 @ self.S[i][t]["w1"] for t in range(self.tp)]
        us = [_gelu(z) for z in zs]
        x2 = x1 + self.ar([us[t] @ self.S[i][t]["w2"] for t in range(self.tp)])
        return x2, (cur, rc, x1, zs, us)

    def block_backward(self, i, dx, cache, A):
        """Block *i* backward: the input gradient; the weight gradients accumulated into *A* (per tp rank)."""
        x0, rc, x1, zs, us = cache
        parts = []
        for t in range(self.tp):
            w = self.S[i][t]
            A[t]["w2"] += np.einsum("bsf,bsh->fh", us[t], dx)
            dz = (dx @ w["w2"].T) * _gelu_grad(zs[t])
            A[t]["w1"] += np.einsum("bsh,bsf->hf", x1, dz)
            parts.append(dz @ w["w1"].T)
        dx1 = dx + self.ar(parts)
        parts = [self._attention_backward(self.S[i][t], rc[t], x0, dx1, A[t]) for t in range(self.tp)]
        return dx1 + self.ar(parts)

    def _attention_backward(self, w, saved, x0, dx1, At):
        mbs, s, hl, d = self.mbs, self.s, self.hl, self.d
        qh, kh, vh, p, o = saved
        At["wo"] += np.einsum("bsh,bsk->hk", o, dx1)
        do = (dx1 @ w["wo"].T).reshape(mbs, s, hl, d).transpose(0, 2, 1, 3)
        dpp = do @ vh.transpose(0, 1, 3, 2)
        dvh = p.transpose(0, 1, 3, 2) @ do
        ds = p * (dpp - (dpp * p).sum(-1, keepdims=True)) / np.sqrt(d)
        dq, dk, dv = (a.transpose(0, 2, 1, 3).reshape(mbs, s, hl * d) for a in (ds @ kh, ds.transpose(0, 1, 3, 2) @ qh, dvh))
        At["wq"] += np.einsum("bsh,bsk->hk", x0, dq)
        At["wk"] += np.einsum("bsh,bsk->hk", x0, dk)
        At["wv"] += np.einsum("bsh,bsk->hk", x0, dv)
        return dq @ w["wq"].T + dk @ w["wk"].T + dv @ w["wv"].T

    def microbatch(self, cur, dx, dd, acc):
        """Forward then backward of one micro-batch through every stage of replica *dd*: its output."""
        caches = []
        for i in range(self.L):
            if i > 0 and self.stage_of[i] != self.stage_of[i - 1]:
                cur = self.handoff(cur, self.stage_of[i - 1], self.stage_of[i], dd)
            cur, c = self.block_forward(i, cur)
            caches.append(c)
        for i in range(self.L - 1, -1, -1):
            if i < self.L - 1 and self.stage_of[i] != self.stage_of[i + 1]:
                dx = self.handoff(dx, self.stage_of[i + 1], self.stage_of[i], dd)
            dx = self.block_backward(i, dx, caches[i], acc[dd][i])
        return cur

    def dp_reduce(self, acc):
        """Data parallelism: each (block, tp shard) gradient summed over the replicas, then the shards
        reassembled into whole matrices."""
        grads = []
        for i in range(self.L):
            full = {}
            for name in ("wq", "wk", "wv", "wo", "w1", "w2"):
                shards = []
                for t in range(self.tp):
                    reps = [acc[dd][i][t][name] for dd in range(self.dp)]
                    shards.append(ring_allreduce(reps, self.ledger, "dp")[0] if self.dp > 1 else reps[0])
                full[name] = np.concatenate(shards, axis=0 if name in ("wo", "w2") else 1)
            grads.append(full)
        return grads


def parallel_forward_backward(W, x, g, heads, tp, pp, dp, mbs, ledger: Ledger):
    """One step of the tp x pp x dp strategy on simulated ranks (:class:`_Ranks`).

    ``x``, ``g`` : (dp * m * mbs, s, h) inputs and output gradients. Ranks are numbered Megatron's
    way, ``rank = t + tp (d + dp p)`` (tp innermost, then dp, then the stage).

    Returns ``(out, grads)`` like :func:`dense_forward_backward`, reassembled from the shards
    after the DP all-reduce.

    Raises
    ------
    ParameterError
        ``tp`` not dividing the heads or the MLP width, ``pp`` above the blocks, a batch not
        divisible by ``dp * mbs``.
    """
    L = len(W)
    B, s, h = x.shape
    f = W[0]["w1"].shape[1]
    if heads % tp or f % tp:
        raise ParameterError(f"comet: tp={tp} must divide the {heads} heads and the {f} MLP units of the execute model")
    if pp > L:
        raise ParameterError(f"comet: pp={pp} exceeds the {L} blocks of the execute model")
    if B % (dp * mbs):
        raise ParameterError(f"comet: batch {B} is not divisible by dp x mbs = {dp * mbs}")
    m = B // (dp * mbs)
    R = _Ranks(W, heads, tp, pp, dp, mbs, s, ledger)
    acc = [[[{k: np.zeros_like(v) for k, v in R.S[i][t].items()} for t in range(tp)] for i in range(L)]
           for _ in range(dp)]
    out = np.empty_like(x)
    for dd in range(dp):
        for mb in range(m):
            sl = slice((dd * m + mb) * mbs, (dd * m + mb + 1) * mbs)
            out[sl] = R.microbatch(x[sl], g[sl], dd, acc)
    return out, R.dp_reduce(acc)


def _rel(a, b):
    den = np.max(np.abs(b))
    return float(np.max(np.abs(a - b)) / den) if den > 0 else float(np.max(np.abs(a - b)))


def evaluate(scenario) -> Result:
    """Execute fidelity: run the strategy on the small model (:data:`EXEC_SHAPE`) and check it.

    Parameters used: ``tp_exec``, ``pp_exec``, ``dp_exec`` (default 2 each). Metrics: the
    largest relative error of output and gradients vs the dense oracle (``max_rel_error``), the
    ledger's bytes per tag and their difference from :func:`suite_comet.model.traffic_bytes`
    (``traffic_mismatch``, bytes; 0 when exact), messages and wall time.
    """
    import time

    p = scenario.params
    tp = int(p.get("tp_exec") or 2)
    pp = int(p.get("pp_exec") or 2)
    dp = int(p.get("dp_exec") or 2)
    sh = EXEC_SHAPE
    if tp > sh["heads"] or sh["heads"] % tp:
        raise ParameterError(f"comet: execute tp={tp} must divide the {sh['heads']} heads of the execute model")
    if pp > sh["blocks"]:
        raise ParameterError(f"comet: execute pp={pp} exceeds the {sh['blocks']} blocks of the execute model")
    if dp > 8:
        raise ParameterError(f"comet: execute dp={dp} exceeds 8 replicas (the execute model is small)")
    rng = np.random.default_rng(scenario.seed)
    W = init_weights(sh["blocks"], sh["hidden"], sh["ffn"], seed=scenario.seed)
    B = dp * sh["microbatches"] * sh["mbs"]
    x = rng.normal(size=(B, sh["seq"], sh["hidden"]))
    g = rng.normal(size=x.shape)
    t0 = time.perf_counter()
    ledger = Ledger()
    out, grads = parallel_forward_backward(W, x, g, sh["heads"], tp, pp, dp, sh["mbs"], ledger)
    wall = time.perf_counter() - t0
    ref_out, ref_grads = dense_forward_backward(W, x, g, sh["heads"])
    err = max([_rel(out, ref_out)] + [_rel(grads[i][k], ref_grads[i][k]) for i in range(len(W)) for k in grads[i]])
    tags = ledger.by_tag()
    params = sum(v.size for w in W for v in w.values())
    want = traffic_bytes(sh["blocks"], sh["hidden"], sh["seq"], params, tp, pp, dp, sh["mbs"], sh["microbatches"],
                         dtype_bytes=8)
    got = {k: float(tags.get(k, (0, 0))[1]) for k in want}
    mismatch = sum(abs(got[k] - want[k]) for k in want)
    r = Result()
    r.add("max_rel_error", err, "1", "lower")
    r.add("oracle_error", err, "1", "lower")
    r.add("traffic_mismatch", mismatch, "B", "lower")
    for k in want:
        r.add(f"bytes_{k.replace('-', '_')}", got[k], "B", "none")
    r.add("messages", ledger.count, "1", "none")
    r.add("wall_time", wall, "s", "lower")
    r.artifacts["strategy"] = {"tp": tp, "pp": pp, "dp": dp, **sh}
    r.artifacts["traffic_model"] = want
    r.artifacts["conservation_problems"] = ledger.conservation_problems()[:5]
    return r
