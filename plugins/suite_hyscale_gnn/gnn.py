"""Mini-batch GNN training on real arrays: uniform neighbour sampling, sampled blocks, 2-layer
GraphSAGE-mean and GCN (forward and hand-written backward), in numpy with scipy.sparse CSR.

Sampling (GraphSAGE [Hamilton17] §3.1, Algorithm 2; PyG ``NeighborLoader`` convention: the
first fan-out is the hop from the seeds): every destination node keeps a uniform random subset of
``min(fanout, degree)`` of its neighbours, without replacement. A node of degree <=
fanout keeps all; the others draw their offsets by Floyd's algorithm [Bentley87]. One compiled
loop over the seeds (numba, GIL released), fed with one vector of uniforms per call drawn in
the order of the earlier numpy version, which it reproduces bit for bit.

Blocks (DGL's message-flow-graph convention): a block maps ``n_dst`` destination nodes to
``n_src`` source nodes, the destinations first among the sources, so ``H_src[:n_dst]`` are the
destinations' own rows. ``mean`` holds the aggregation weights: ``1/k_i`` for the k_i sampled
neighbours of row i (GraphSAGE-mean), or ``1/(k_i + 1)`` over the neighbours and the node itself
(GCN with mean normalisation, a simplification: the symmetric ``D^-1/2 A D^-1/2`` of [Kipf17]
has no exact analogue on a sampled block).

Layers (``l = 1, 2``; ReLU after layer 1 only; softmax cross-entropy on layer 2's output):

* GraphSAGE-mean [Hamilton17] eq. 1 with the concatenation written as two matrices:
  ``Z = H_dst W_self + (A_mean H_src) W_neigh + b``;
* GCN [Kipf17] eq. 2: ``Z = (A_hat H_src) W + b``.

References
----------
.. [Hamilton17] W. Hamilton, R. Ying, J. Leskovec, "Inductive Representation Learning on Large
   Graphs", NeurIPS 2017.
.. [Bentley87] J. Bentley, R. Floyd, "Programming Pearls: A Sample of Brilliance", CACM 30(9),
   1987 (Floyd's algorithm for a uniform random subset).
.. [Kipf17] T. Kipf, M. Welling, "Semi-Supervised Classification with Graph Convolutional
   Networks", ICLR 2017.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["sample_neighbors", "Block", "sample_blocks", "restrict", "init_params", "forward", "loss_and_grads",
           "full_graph_forward", "predict", "MODELS"]

MODELS = ("graphsage", "gcn")


def _floyd_count(indptr, seeds, fanout):  # pragma: no cover - compiled by numba, see _compiled
    total = 0
    n_hi = 0
    n = indptr.size - 1
    for i in range(seeds.size):
        if seeds[i] < 0 or seeds[i] >= n:
            return -1, i  # an out-of-range seed: reported by the caller (numba does not bound-check)
        d = indptr[seeds[i] + 1] - indptr[seeds[i]]
        if d > fanout:
            total += fanout
            n_hi += 1
        else:
            total += d
    return total, n_hi


def _floyd_fill(indptr, indices, seeds, fanout, u, n_hi, rows, nbrs):  # pragma: no cover - numba
    # u holds fanout * n_hi uniforms in [0, 1), step-major: u[j * n_hi + h] is step j of the h-th
    # row of degree > fanout -- the order in which the vectorised numpy version draws them.
    # Pass 1 copies the rows of degree <= fanout and notes the others; pass 2 runs Floyd's steps
    # step-major over those rows (the numpy version's order: each step's loops over the rows are
    # independent and vectorise, no chain through one row's picks); pass 3 maps offsets to ids.
    # (Row by row with an early-exit search: 1.8x slower on rmat-graph, fan-out 10.)
    start = np.empty(n_hi, np.int64)
    low = np.empty(n_hi, np.int64)  # degree - fanout: step j draws from [0, low + j]
    at = np.empty(n_hi, np.int64)
    sel = np.empty(n_hi * fanout, np.int64)  # offsets, step-major like u
    r = np.empty(n_hi, np.int64)
    hit = np.empty(n_hi, np.bool_)
    pos = 0
    h = 0
    for i in range(seeds.size):
        s = indptr[seeds[i]]
        d = indptr[seeds[i] + 1] - s
        if d <= fanout:
            for k in range(d):
                rows[pos + k] = i
                nbrs[pos + k] = indices[s + k]
            pos += d
        else:
            start[h] = s
            low[h] = d - fanout
            at[h] = pos
            for k in range(fanout):
                rows[pos + k] = i
            pos += fanout
            h += 1
    for j in range(fanout):
        b = j * n_hi
        for h in range(n_hi):
            r[h] = np.int64(u[b + h] * (low[h] + j + 1))
            hit[h] = False
        for k in range(j):
            c = k * n_hi
            for h in range(n_hi):
                hit[h] |= sel[c + h] == r[h]
        for h in range(n_hi):  # Floyd: a repeat of an earlier pick becomes m = low + j (never picked)
            sel[b + h] = low[h] + j if hit[h] else r[h]
    for h in range(n_hi):
        p = at[h]
        s = start[h]
        for j in range(fanout):
            nbrs[p + j] = indices[s + sel[j * n_hi + h]]
    return pos


_COMPILED = None


def _compiled():
    """The two loops of :func:`sample_neighbors`, compiled on first use (numba, cached on disk,
    GIL released so the sampler thread runs beside the trainer)."""
    global _COMPILED
    if _COMPILED is None:
        import numba

        jit = numba.njit(cache=True, nogil=True)
        _COMPILED = (jit(_floyd_count), jit(_floyd_fill))
    return _COMPILED


def sample_neighbors(indptr: np.ndarray, indices: np.ndarray, seeds: np.ndarray, fanout: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Uniform neighbour sampling without replacement, one compiled loop over the seeds.

    A seed of degree d <= fanout keeps all its neighbours in CSR order; one of degree d > fanout
    keeps ``fanout`` offsets drawn by Floyd's algorithm [Bentley87]: for j = 0..f-1 draw
    ``r = floor(u (m + 1))`` with m = d - f + j and u uniform in [0, 1); keep r unless it was
    picked already, else keep m. The f offsets are a uniform f-subset of range(d).

    Random stream: ``rng.random(f * h)`` once per call, h the number of seeds of degree > f,
    step-major (``u[j * h + k]`` is step j of the k-th such seed). This is exactly the stream of
    the vectorised numpy version (:func:`_sample_neighbors_numpy`, one ``rng.random(h)`` per
    step), so both return bit-identical samples for a given generator state (tested).

    Parameters
    ----------
    indptr, indices : ndarray of int
        CSR structure of the adjacency (n + 1,) and (nnz,).
    seeds : ndarray of int, shape (s,)
        Destination nodes (global ids), each in [0, n).
    fanout : int
        Neighbours kept per seed (>= 1); a seed of degree <= fanout keeps all of them.
    rng : numpy Generator
        Advanced by ``f * h`` doubles (none when no seed has degree > f).

    Returns
    -------
    rows, nbrs : ndarray of int64, shape (sum_i min(f, d_i),)
        Sampled edges: position in *seeds* (non-decreasing) and global neighbour id.

    Raises
    ------
    ValueError
        If *fanout* < 1.
    IndexError
        If a seed is not in [0, n).
    """
    if fanout < 1:
        raise ValueError(f"fanout must be >= 1, got {fanout}")
    count, fill = _compiled()
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    fanout = int(fanout)
    total, n_hi = count(indptr, seeds, fanout)
    if total < 0:
        raise IndexError(f"sample_neighbors: seeds[{n_hi}] = {seeds[n_hi]} is not a node id in [0, {indptr.size - 1})")
    rows = np.empty(total, np.int64)
    nbrs = np.empty(total, np.int64)
    if total:
        u = rng.random(fanout * n_hi) if n_hi else np.zeros(0)
        fill(indptr, indices, seeds, fanout, u, n_hi, rows, nbrs)
    return rows, nbrs


def _sample_neighbors_numpy(indptr: np.ndarray, indices: np.ndarray, seeds: np.ndarray, fanout: int,
                            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sample_neighbors` vectorised in numpy, Floyd's algorithm one step for all rows of
    degree > fanout at once (the execute sampler until the compiled one replaced it, kept as its
    bit-identity reference; 7-10x slower per call: numpy's per-call overhead)."""
    if fanout < 1:
        raise ValueError(f"fanout must be >= 1, got {fanout}")
    seeds = np.asarray(seeds, dtype=np.int64)
    start = indptr[seeds].astype(np.int64)
    deg = (indptr[seeds + 1] - indptr[seeds]).astype(np.int64)
    take = np.minimum(deg, fanout)
    total = int(take.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows = np.repeat(np.arange(seeds.size, dtype=np.int64), take)
    offs = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(take) - take, take)
    hi = np.flatnonzero(deg > fanout)
    if hi.size:
        # Floyd's algorithm [Bentley87], vectorised over the rows of degree > fanout: for
        # j = 0..f-1 draw r uniform in [0, m] with m = deg - f + j; keep r unless it was drawn
        # already, else keep m. The f offsets are a uniform f-subset of range(deg).
        dh = deg[hi]
        sel = np.empty((hi.size, fanout), dtype=np.int64)
        for j in range(fanout):
            m = dh - fanout + j
            r = (rng.random(hi.size) * (m + 1)).astype(np.int64)
            if j:
                r = np.where((sel[:, :j] == r[:, None]).any(axis=1), m, r)
            sel[:, j] = r
        offs[np.repeat(deg > fanout, take)] = sel.ravel()
    return rows, indices[np.repeat(start, take) + offs].astype(np.int64)


@dataclass(frozen=True)
class Block:
    """One sampled layer: ``n_dst`` destinations (the first ``n_dst`` of ``src``), global ``src``
    ids, the 0/1 sampled adjacency ``adj`` (n_dst x n_src CSR) and the aggregation matrix ``agg``
    (mean weights, see the module docstring)."""

    src: np.ndarray
    n_dst: int
    adj: sp.csr_matrix
    agg: sp.csr_matrix

    @property
    def edges(self) -> int:
        return int(self.adj.nnz)


def _agg_matrix(adj: sp.csr_matrix, model: str) -> sp.csr_matrix:
    import scipy.sparse as sp  # here, not at import: scipy.sparse costs ~0.1 s of every command's start-up

    n_dst = adj.shape[0]
    if model == "gcn":
        a = (adj.astype(np.float64) + sp.eye(n_dst, adj.shape[1], dtype=np.float64, format="csr")).tocsr()
    else:
        a = adj.astype(np.float64)
    k = np.asarray(a.sum(axis=1)).ravel()
    inv = np.divide(1.0, k, out=np.zeros_like(k, dtype=np.float64), where=k > 0)
    return sp.csr_matrix(sp.diags(inv) @ a, dtype=np.float64)


def _make_block(dst: np.ndarray, rows: np.ndarray, nbrs: np.ndarray, model: str) -> Block:
    extra = np.setdiff1d(np.unique(nbrs), dst, assume_unique=False)
    src = np.concatenate([dst, extra])
    sorter = np.argsort(src, kind="stable")
    local = sorter[np.searchsorted(src, nbrs, sorter=sorter)]
    import scipy.sparse as sp

    adj = sp.csr_matrix((np.ones(rows.size, np.float32), (rows, local)), shape=(dst.size, src.size))
    adj.sum_duplicates()
    adj.data[:] = 1.0
    return Block(src, int(dst.size), adj, _agg_matrix(adj, model))


def sample_blocks(indptr, indices, seeds, fanouts, rng, model: str = "graphsage") -> list[Block]:
    """The blocks of one mini-batch, input layer first: ``blocks[-1]`` has the seeds as
    destinations and ``fanouts[0]`` neighbours each; ``blocks[l].n_dst == blocks[l+1].src.size``."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    dst = np.asarray(seeds, dtype=np.int64)
    out = []
    for f in fanouts:
        rows, nbrs = sample_neighbors(indptr, indices, dst, int(f), rng)
        blk = _make_block(dst, rows, nbrs, model)
        out.append(blk)
        dst = blk.src
    return out[::-1]


def restrict(blocks: list[Block], rows: np.ndarray, model: str = "graphsage") -> list[Block]:
    """The blocks of the sub-batch whose seeds are ``blocks[-1]``'s destinations at positions
    *rows*: each layer keeps the rows it needs and exactly the sampled neighbours of those rows,
    so a trainer holding the sub-batch computes what the whole batch computes for its seeds."""
    need = np.asarray(rows, dtype=np.int64)  # local ids among the current block's destinations
    out = []
    for blk in blocks[::-1]:
        sub = blk.adj[need]
        cols = np.unique(sub.indices)
        extra = np.setdiff1d(cols, need)
        keep = np.concatenate([need, extra])
        adj = sub[:, keep].tocsr()
        agg = blk.agg[need][:, keep].tocsr()
        out.append(Block(blk.src[keep], int(need.size), adj, agg))
        need = keep  # the previous block's destinations are this block's sources, same order
    return out[::-1]


def init_params(model: str, d_in: int, hidden: int, classes: int, rng: np.random.Generator) -> dict:
    """Glorot-uniform weights, zero biases (float64 for exact gradient checks)."""
    def glorot(a, b):
        lim = np.sqrt(6.0 / (a + b))
        return rng.uniform(-lim, lim, (a, b))

    dims = [(d_in, hidden), (hidden, classes)]
    p = {}
    for l, (a, b) in enumerate(dims, start=1):
        if model == "graphsage":
            p[f"Ws{l}"], p[f"Wn{l}"] = glorot(a, b), glorot(a, b)
        else:
            p[f"W{l}"] = glorot(a, b)
        p[f"b{l}"] = np.zeros(b)
    return p


def forward(params: dict, blocks: list[Block], x_src: np.ndarray, model: str = "graphsage"):
    """Logits of the seeds, shape (n_seeds, classes), and the cache for :func:`loss_and_grads`."""
    h = np.asarray(x_src, dtype=np.float64)
    cache = []
    for l, blk in enumerate(blocks, start=1):
        agg = blk.agg @ h
        if model == "graphsage":
            z = h[:blk.n_dst] @ params[f"Ws{l}"] + agg @ params[f"Wn{l}"] + params[f"b{l}"]
        else:
            z = agg @ params[f"W{l}"] + params[f"b{l}"]
        cache.append((h, agg, z))
        h = np.maximum(z, 0.0) if l < len(blocks) else z
    return h, cache


def loss_and_grads(params: dict, blocks: list[Block], x_src, labels, model: str = "graphsage"):
    """Mean softmax cross-entropy over the seeds and its gradient for every parameter.

    Returns ``(loss, grads, logits)``; ``grads`` has the keys of *params*.
    """
    logits, cache = forward(params, blocks, x_src, model)
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    prob = e / e.sum(axis=1, keepdims=True)
    n = logits.shape[0]
    loss = float(-np.mean(np.log(prob[np.arange(n), labels] + 1e-300)))
    dz = prob
    dz[np.arange(n), labels] -= 1.0
    dz /= n
    grads = {}
    for l in range(len(blocks), 0, -1):
        blk = blocks[l - 1]
        h, agg, z = cache[l - 1]
        if l < len(blocks):
            dz = dz * (z > 0)
        grads[f"b{l}"] = dz.sum(axis=0)
        if model == "graphsage":
            grads[f"Ws{l}"] = h[:blk.n_dst].T @ dz
            grads[f"Wn{l}"] = agg.T @ dz
            if l > 1:
                dh = blk.agg.T @ (dz @ params[f"Wn{l}"].T)
                dh[:blk.n_dst] += dz @ params[f"Ws{l}"].T
        else:
            grads[f"W{l}"] = agg.T @ dz
            if l > 1:
                dh = blk.agg.T @ (dz @ params[f"W{l}"].T)
        if l > 1:
            dz = dh
    return loss, grads, logits


def full_graph_forward(params: dict, adj: sp.csr_matrix, x: np.ndarray, model: str = "graphsage") -> np.ndarray:
    """Dense full-graph forward of the same 2-layer model (the oracle): every node aggregates
    all its neighbours, ``D^-1 A`` (GraphSAGE-mean) or ``(D + I)^-1 (A + I)`` (GCN-mean), as
    dense numpy matrices. Returns logits (n, classes)."""
    a = adj.toarray().astype(np.float64)
    if model == "gcn":
        a = a + np.eye(a.shape[0])
    k = a.sum(axis=1, keepdims=True)
    a = np.divide(a, k, out=np.zeros_like(a), where=k > 0)
    h = np.asarray(x, dtype=np.float64)
    for l in (1, 2):
        if model == "graphsage":
            z = h @ params[f"Ws{l}"] + (a @ h) @ params[f"Wn{l}"] + params[f"b{l}"]
        else:
            z = (a @ h) @ params[f"W{l}"] + params[f"b{l}"]
        h = np.maximum(z, 0.0) if l == 1 else z
    return h


def predict(params, blocks, x_src, model="graphsage") -> np.ndarray:
    return forward(params, blocks, x_src, model)[0].argmax(axis=1)
