"""Graphs for HyScale-GNN: seeded generators for the execute fidelity, size descriptors for the model.

Generated (real inputs, made locally from a seed, nothing downloaded):

* ``sbm-graph``: a stochastic block model (networkx ``stochastic_block_model``); the labels are
  the blocks, the features class-correlated Gaussians (a class mean plus unit noise).
* ``rmat-graph``: an R-MAT graph [Chakrabarti04] with Graph500's quadrant probabilities
  a = 0.57, b = c = 0.19, d = 0.05 [Graph500], symmetrised, self-loops and duplicates removed;
  the planted labels are the two top bits of the node id (R-MAT recurses on the id bits, so an
  edge joins two nodes with the same top bit with probability a + d = 0.62 per level), features
  as for the SBM.

Descriptors (no loader; the model needs only the sizes): ``hyscale-gnn-ogbn-products``,
``hyscale-gnn-ogbn-papers100m`` [Hu20, Table 1] and ``hyscale-gnn-mag240m`` [Hu21, Table 1]
(node, edge, feature and class counts, training-set size). That the HyScale-GNN paper used these
graphs is not verified (its abstract names no dataset).

numpy is imported by the generators when a graph is built, not when this module is: the plugin's
``suite_workloads`` hook imports it to describe its workloads (names, sizes, loaders), which every
command that reads workloads pays (a fully cached ``suite reproduce`` included) and which needs
no array.

References
----------
.. [Chakrabarti04] D. Chakrabarti, Y. Zhan, C. Faloutsos, "R-MAT: A Recursive Model for Graph
   Mining", SDM 2004.
.. [Graph500] Graph500 benchmark specification, Kronecker generator parameters A = 0.57,
   B = C = 0.19 (D = 0.05).
.. [Hu20] W. Hu et al., "Open Graph Benchmark: Datasets for Machine Learning on Graphs",
   NeurIPS 2020, Table 1 and the dataset pages (counts recalled, not re-checked in this session).
.. [Hu21] W. Hu et al., "OGB-LSC: A Large-Scale Challenge for Machine Learning on Graphs",
   NeurIPS 2021 Datasets and Benchmarks, Table 1 (counts recalled, not re-checked).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import scipy.sparse as sp

from suite.api import Dataset

__all__ = ["GRAPH_DESCRIPTORS", "load_sbm_graph", "load_rmat_graph", "rmat_edges", "to_csr", "graph_workloads",
           "descriptor"]

_FEATURE_SEP = 1.5  # distance of the class means (in units of the feature noise), both generators


def to_csr(n: int, src: np.ndarray, dst: np.ndarray) -> sp.csr_matrix:
    """Symmetric, loop-free, 0/1 CSR adjacency (n x n, int32 indices) from an edge list."""
    import numpy as np

    keep = src != dst
    s, d = np.concatenate([src[keep], dst[keep]]), np.concatenate([dst[keep], src[keep]])
    import scipy.sparse as sp  # here, not at import: scipy.sparse costs ~0.1 s of every command's start-up

    a = sp.csr_matrix((np.ones(s.size, dtype=np.float32), (s, d)), shape=(n, n))
    a.sum_duplicates()
    a.data[:] = 1.0
    a.sort_indices()
    return a


def _features(labels: np.ndarray, d: int, classes: int, rng: np.random.Generator) -> np.ndarray:
    import numpy as np

    means = rng.standard_normal((classes, d)).astype(np.float32)
    means *= _FEATURE_SEP / np.linalg.norm(means, axis=1, keepdims=True)
    return (means[labels] + rng.standard_normal((labels.size, d)).astype(np.float32)).astype(np.float32)


def load_sbm_graph(blocks: int = 4, block_size: int = 500, p_in: float = 0.03, p_out: float = 0.003,
                   d: int = 32, seed: int = 0):
    """A stochastic-block-model graph: ``(adj CSR (n, n), features float32 (n, d), labels int64 (n,))``.

    ``n = blocks * block_size``; an edge joins two nodes of one block with probability ``p_in``,
    of two blocks with ``p_out`` (networkx ``stochastic_block_model``, seeded).
    """
    import networkx as nx
    import numpy as np

    sizes = [block_size] * blocks
    probs = [[p_in if i == j else p_out for j in range(blocks)] for i in range(blocks)]
    g = nx.stochastic_block_model(sizes, probs, seed=seed, sparse=True)
    n = blocks * block_size
    e = np.array(g.edges(), dtype=np.int64).reshape(-1, 2)
    adj = to_csr(n, e[:, 0], e[:, 1])
    labels = np.repeat(np.arange(blocks, dtype=np.int64), block_size)
    rng = np.random.default_rng(seed + 1)
    return adj, _features(labels, d, blocks, rng), labels


def rmat_edges(scale: int, edges: int, rng: np.random.Generator, a: float = 0.57, b: float = 0.19,
               c: float = 0.19) -> tuple[np.ndarray, np.ndarray]:
    """R-MAT edge list on ``2**scale`` nodes [Chakrabarti04]: per id bit, the quadrant is
    (0,0) with probability a, (0,1) with b, (1,0) with c, (1,1) with d = 1 - a - b - c.
    Vectorised over the edges; returns ``(src, dst)`` int64 arrays of length *edges*."""
    if not (a > 0 and b >= 0 and c >= 0 and a + b + c < 1):
        raise ValueError(f"rmat: expected a > 0, b, c >= 0 and a + b + c < 1, got a={a}, b={b}, c={c}")
    import numpy as np

    src = np.zeros(edges, dtype=np.int64)
    dst = np.zeros(edges, dtype=np.int64)
    for bit in range(scale):
        u = rng.random(edges)
        right = ((u >= a) & (u < a + b)) | (u >= a + b + c)  # quadrants b and d set the column bit
        down = u >= a + b  # quadrants c and d set the row bit
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    return src, dst


def load_rmat_graph(scale: int = 11, edge_factor: int = 8, d: int = 32, classes: int = 4, seed: int = 0):
    """An R-MAT graph (Graph500 a, b, c) with planted labels: ``(adj, features, labels)`` as
    :func:`load_sbm_graph`. Labels: the top ``log2(classes)`` bits of the node id."""
    if classes < 2 or classes & (classes - 1):
        raise ValueError(f"rmat-graph: classes must be a power of two >= 2, got {classes}")
    import numpy as np

    rng = np.random.default_rng(seed)
    n = 2**scale
    src, dst = rmat_edges(scale, edge_factor * n, rng)
    # R-MAT puts the hubs at low ids in every bit: a random relabelling of the low bits keeps
    # the planted top-bit classes while spreading degrees within each class
    top = int(np.log2(classes))
    perm = np.arange(n, dtype=np.int64)
    block = n // classes
    for k in range(classes):
        perm[k * block:(k + 1) * block] = k * block + rng.permutation(block)
    adj = to_csr(n, perm[src], perm[dst])
    labels = (np.arange(n, dtype=np.int64) >> (scale - top)).astype(np.int64)
    return adj, _features(labels, d, classes, rng), labels


#: name -> (nodes, undirected edges, feature dim, feature bytes per value, classes, training nodes, source)
GRAPH_DESCRIPTORS = {
    "ogbn-products": (2_449_029, 61_859_140, 100, 4, 47, 196_615, "OGB [Hu20] Table 1; sales-rank split"),
    "ogbn-papers100m": (111_059_956, 1_615_685_872, 128, 4, 172, 1_207_179, "OGB [Hu20] Table 1; time split"),
    "mag240m": (244_160_499, 1_728_364_232, 768, 2, 153, 1_112_392,
                "OGB-LSC [Hu21] Table 1 (all node types; fp16 paper features); arXiv papers before 2018 as training"),
}


def descriptor(workload) -> dict:
    """The sizes of a graph workload: ``nodes, edges, d, feature_bytes, classes, train`` (see
    :data:`GRAPH_DESCRIPTORS`; a generated graph gives its generator's nominal sizes)."""
    p = dict(getattr(workload, "params", {}) or {})
    if "edges" in p:
        return {k: p[k] for k in ("nodes", "edges", "d", "feature_bytes", "classes", "train")}
    n = int(workload.n)
    deg = p.get("nominal_degree", 16)
    return {"nodes": n, "edges": int(n * deg / 2), "d": int(workload.d), "feature_bytes": 4,
            "classes": int(workload.classes), "train": n // 2}


def graph_workloads() -> list[Dataset]:
    """The workloads this plugin registers (``suite_workloads`` hook)."""
    out = [
        Dataset(name="sbm-graph", kind="graph", source="networkx.stochastic_block_model (Holland et al. 1983)",
                description="4 blocks x 500 nodes, p_in 0.03, p_out 0.003; labels = blocks; class-correlated "
                            "Gaussian features (d = 32)",
                loader=load_sbm_graph, params={"blocks": 4, "block_size": 500, "p_in": 0.03, "p_out": 0.003,
                                               "d": 32, "seed": 0},
                n=2000, d=32, classes=4),
        Dataset(name="rmat-graph", kind="graph", source="R-MAT (Chakrabarti et al. 2004), Graph500 a=0.57, b=c=0.19",
                description="2^11 nodes, 8 x n sampled edges (symmetrised, deduplicated); labels = top 2 id bits",
                loader=load_rmat_graph, params={"scale": 11, "edge_factor": 8, "d": 32, "classes": 4, "seed": 0},
                n=2048, d=32, classes=4),
    ]
    for name, (n, e, d, fb, c, tr, src) in GRAPH_DESCRIPTORS.items():
        out.append(Dataset(name=f"hyscale-gnn-{name}", kind="graph", source=src,
                           description=f"{name} size descriptor only (not downloadable offline): {n:,} nodes, "
                                       f"{e:,} edges, {d} features, {c} classes, {tr:,} training nodes",
                           loader=None, params={"nodes": n, "edges": e, "d": d, "feature_bytes": fb, "classes": c,
                                                "train": tr},
                           n=n, d=d, classes=c))
    return out
