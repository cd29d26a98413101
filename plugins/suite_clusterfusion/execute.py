"""ClusterFusion's execute fidelity: the fused decode attention module on N virtual blocks, with real arrays.

One thread-block cluster of N blocks per attention head; the blocks of a cluster hold real
float32 arrays and exchange them only through :func:`suite_clusterfusion.cluster.cluster_reduce` /
:func:`~suite_clusterfusion.cluster.cluster_gather` (every message in a ledger). Dataflow of the
fused kernel [Luo25, Sec. 4; authors' code ``include/H100/{llama,deepseek}``]:

* **MHA (Llama-2-shaped).** Block j computes the K-slice j of the head's QKV GEMV (rows
  ``j h/N .. (j+1) h/N`` of W_q, W_k, W_v); ClusterReduce(sum) gives every block q, k, v; RoPE;
  block j attends over its part of the KV cache (the new token goes to the last part) and keeps
  the flash-decoding partial ``(m, l, o)``; ClusterReduce(online-softmax merge) gives every block
  the head's output; block j computes the column slice j of the output projection and adds it to
  the layer output in global memory (atomicAdd in the paper's kernel).
* **MLA (DeepSeek-V2-Lite-shaped, absorbed).** Split-K GEMV of the head's query and of the new
  token's latent ``[c, k_r]`` (ClusterReduce each); block j absorbs the key up-projection into the
  query for its slice of the latent rank, ``q_lat[j] = W_uk[j] q_n`` (ClusterGather gives the full
  ``q_lat``); split-KV attention over the latent cache, scores ``q_lat . c + q_r . k_r``, partial
  ``(m, l, o_lat)`` (ClusterReduce merge); block j up-projects its latent slice of the output,
  ``o[j] = o_lat[j] W_uv[j]`` (ClusterReduce sum gives o); column slice j of W_o into the output.

The variants run the same arithmetic with another dataflow, and count their HBM bytes:
``unfused`` (QKV GEMV, one attention kernel per head over the whole cache, output GEMV; q/k/v
and o go through HBM), ``flash-decoding`` (the attention split into N parts whose partials
``(m, l, o)`` are written to HBM and merged by a second kernel), ``fused-global`` (the fused
kernel, each exchange written to and read back from global memory), ``clusterfusion`` (the
exchanges over DSMEM: no HBM bytes for them).

Oracle: :mod:`suite_clusterfusion.reference` (float64, explicit K/V, full softmax by
``scipy.special.logsumexp``). Every variant's output must match it within a relative error of
1e-4 (float32 arithmetic); the error is a metric.

References
----------
[Luo25] Sec. 3 (primitives), Sec. 4 (fused decode kernel); see :mod:`suite_clusterfusion.cluster`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from suite.api import Ledger

from suite_clusterfusion.cluster import check_cluster, cluster_gather, cluster_reduce, softmax_merge
from suite_clusterfusion.reference import reference_mha, reference_mla, rope

__all__ = ["EXEC_HEADS", "MAX_SEQ", "MAX_BATCH", "REL_TOL", "HbmCounter", "MhaLayer", "MlaLayer", "make_mha",
           "make_mla", "partition", "split_attention", "fused_mha", "fused_mla", "unfused_mha", "unfused_mla",
           "run_variant", "rel_error", "gemv", "evaluate"]

#: Heads of the execute layers (the models have 32 and 16; fewer keep the CPU run short).
EXEC_HEADS = 4
#: Largest sequence length and batch the execute fidelity runs (Skip beyond).
MAX_SEQ = 16384
MAX_BATCH = 32
#: Relative error (max |ours - ref| / max |ref|) a float32 result may have against the float64 oracle.
REL_TOL = 1e-4
F32 = 4  # bytes


class HbmCounter:
    """Bytes a variant reads from and writes to HBM (global memory), by what they are."""

    def __init__(self):
        self.read: dict[str, int] = {}
        self.written: dict[str, int] = {}

    def r(self, what: str, *arrays) -> None:
        self.read[what] = self.read.get(what, 0) + sum(int(a.nbytes) for a in arrays)

    def w(self, what: str, *arrays) -> None:
        self.written[what] = self.written.get(what, 0) + sum(int(a.nbytes) for a in arrays)

    @property
    def total(self) -> int:
        return sum(self.read.values()) + sum(self.written.values())


def gemv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x @ w`` for a decode GEMV (x: (B, k), w: (k, n)); the kernel whose weight-read rate the benchmark measures."""
    return x @ w


# --------------------------------------------------------------------------- layers


@dataclass(frozen=True)
class MhaLayer:
    """A Llama-shaped attention module (float32): W_q, W_k, W_v (h, H d), W_o (H d, h), KV cache (B, H, S, d)."""

    x: np.ndarray
    wq: np.ndarray
    wk: np.ndarray
    wv: np.ndarray
    wo: np.ndarray
    k_cache: np.ndarray
    v_cache: np.ndarray
    heads: int

    @property
    def d(self) -> int:
        return self.wq.shape[1] // self.heads

    def reference(self) -> np.ndarray:
        return reference_mha(self.x, self.wq, self.wk, self.wv, self.wo, self.k_cache, self.v_cache, self.heads)


@dataclass(frozen=True)
class MlaLayer:
    """A DeepSeek-V2-Lite-shaped MLA module (float32); shapes as :func:`suite_clusterfusion.reference.reference_mla`."""

    x: np.ndarray
    wq: np.ndarray
    wkva: np.ndarray
    wuk: np.ndarray
    wuv: np.ndarray
    wo: np.ndarray
    c_cache: np.ndarray
    kr_cache: np.ndarray
    heads: int
    d_nope: int
    d_rope: int

    @property
    def rank(self) -> int:
        return self.c_cache.shape[2]

    def reference(self) -> np.ndarray:
        return reference_mla(self.x, self.wq, self.wkva, self.wuk, self.wuv, self.wo, self.c_cache,
                             self.kr_cache, self.heads, self.d_nope, self.d_rope)


def make_mha(rng: np.random.Generator, batch: int, seq: int, heads: int = EXEC_HEADS, d: int = 128) -> MhaLayer:
    """Seeded random MHA weights and cache (hidden = heads x d), scaled so scores stay O(1)."""
    h = heads * d
    f = np.float32
    g = lambda *s, sc=1.0: (rng.standard_normal(s) * sc).astype(f)  # noqa: E731
    return MhaLayer(g(batch, h), g(h, h, sc=h ** -0.5), g(h, h, sc=h ** -0.5), g(h, h, sc=h ** -0.5),
                    g(h, h, sc=h ** -0.5), g(batch, heads, seq, d), g(batch, heads, seq, d), heads)


def make_mla(rng: np.random.Generator, batch: int, seq: int, heads: int = EXEC_HEADS, hidden: int = 512,
             rank: int = 512, d_nope: int = 128, d_rope: int = 64, d_v: int = 128) -> MlaLayer:
    """Seeded random MLA weights and latent cache with DeepSeek-V2-Lite's per-head dimensions."""
    f = np.float32
    g = lambda *s, sc=1.0: (rng.standard_normal(s) * sc).astype(f)  # noqa: E731
    return MlaLayer(g(batch, hidden), g(hidden, heads * (d_nope + d_rope), sc=hidden ** -0.5),
                    g(hidden, rank + d_rope, sc=hidden ** -0.5), g(heads, rank, d_nope, sc=rank ** -0.5),
                    g(heads, rank, d_v, sc=rank ** -0.5), g(heads * d_v, hidden, sc=(heads * d_v) ** -0.5),
                    g(batch, seq, rank), g(batch, seq, d_rope), heads, d_nope, d_rope)


# --------------------------------------------------------------------------- split-KV attention


def partition(seq: int, parts: int, bounds=None) -> list[slice]:
    """*parts* contiguous slices of ``range(seq)``: even by default, or at the given inner *bounds*
    (non-decreasing, in [0, seq]; equal bounds make empty parts)."""
    if bounds is None:
        bounds = np.linspace(0, seq, parts + 1).round().astype(int)[1:-1]
    edges = [0, *[int(b) for b in bounds], seq]
    if len(edges) != parts + 1 or any(a > b for a, b in zip(edges, edges[1:])) or edges[-1] > seq:
        raise ValueError(f"partition: expected {parts - 1} non-decreasing bounds in [0, {seq}], got {list(bounds)}")
    return [slice(a, b) for a, b in zip(edges, edges[1:])]


def split_attention(q: np.ndarray, keys: np.ndarray, values: np.ndarray, scale: float) -> tuple:
    """Flash-decoding partial of one part: ``(m, l, o)`` over its keys (B, s, d) for queries (B, d).

    ``m`` (B, 1) the max score, ``l`` (B, 1) ``sum exp(s - m)``, ``o`` (B, d_v) ``sum exp(s - m) v``.
    An empty part gives ``(-inf, 0, 0)``, the identity of :func:`~suite_clusterfusion.cluster.softmax_merge`.
    """
    b = q.shape[0]
    dt = q.dtype
    if keys.shape[1] == 0:
        return (np.full((b, 1), -np.inf, dt), np.zeros((b, 1), dt), np.zeros((b, values.shape[-1]), dt))
    s = np.einsum("bd,bsd->bs", q, keys) * dt.type(scale)
    m = s.max(axis=1, keepdims=True)
    p = np.exp(s - m)
    return m, p.sum(axis=1, keepdims=True), np.einsum("bs,bsd->bd", p, values)


def _finish(part: tuple) -> np.ndarray:
    _m, l, o = part
    return o / l


# --------------------------------------------------------------------------- fused (cluster) dataflow


def fused_mha(layer: MhaLayer, n: int, dsmem: Ledger, hbm: HbmCounter, via_global: bool = False,
              bounds=None) -> np.ndarray:
    """The fused MHA module on one cluster of *n* blocks per head (see the module docstring).

    ``via_global``: each exchange is also written to and read back from global memory (the
    DSMEM-off ablation), counted in *hbm*. Returns the layer output (B, h), float32.
    """
    n = check_cluster(n)
    x, heads, d = layer.x, layer.heads, layer.d
    b, h = x.shape
    s = layer.k_cache.shape[2]
    ks = partition(h, n)
    parts = partition(s + 1, n, bounds)
    out = np.zeros((b, h), np.float32)
    hbm.r("x", x)
    for hd in range(heads):
        cols = slice(hd * d, (hd + 1) * d)
        base = hd * n
        # 1. split-K QKV GEMV, ClusterReduce(sum)
        partial = [np.concatenate([gemv(x[:, k], layer.wq[k, cols]), gemv(x[:, k], layer.wk[k, cols]),
                                   gemv(x[:, k], layer.wv[k, cols])], axis=1) for k in ks]
        for k in ks:
            hbm.r("weights", layer.wq[k, cols], layer.wk[k, cols], layer.wv[k, cols])
        qkv = _reduce(partial, np.add, dsmem, hbm, via_global, f"h{hd}:qkv", base)
        q = rope(qkv[0][:, :d], s)
        k_new = rope(qkv[0][:, d:2 * d], s)
        v_new = qkv[0][:, 2 * d:]
        # 2. split-KV attention; the new token belongs to the last part
        keys = np.concatenate([layer.k_cache[:, hd], k_new[:, None, :]], axis=1)
        vals = np.concatenate([layer.v_cache[:, hd], v_new[:, None, :]], axis=1)
        hbm.r("kv-cache", layer.k_cache[:, hd], layer.v_cache[:, hd])
        hbm.w("kv-cache", k_new, v_new)
        pieces = [split_attention(q, keys[:, p], vals[:, p], d ** -0.5) for p in parts]
        merged = _reduce(pieces, softmax_merge, dsmem, hbm, via_global, f"h{hd}:attn", base)
        # 3. output projection: column slice j per block, added into the output in global memory
        for j, k in enumerate(ks):
            y = gemv(_finish(merged[j]), layer.wo[cols, k])
            hbm.r("weights", layer.wo[cols, k])
            out[:, k] += y  # atomicAdd of the head's contribution: resolved in L2
    hbm.w("output", out)  # the finished output leaves L2 for HBM once
    return out


def fused_mla(layer: MlaLayer, n: int, dsmem: Ledger, hbm: HbmCounter, via_global: bool = False,
              bounds=None) -> np.ndarray:
    """The fused, absorbed MLA module on one cluster of *n* blocks per head (see the module docstring)."""
    n = check_cluster(n)
    x, heads, dn, dr, r = layer.x, layer.heads, layer.d_nope, layer.d_rope, layer.rank
    b, h = x.shape
    s = layer.c_cache.shape[1]
    dq = dn + dr
    dv = layer.wuv.shape[2]
    ks = partition(h, n)
    rs = partition(r, n)
    parts = partition(s + 1, n, bounds)
    out = np.zeros((b, h), np.float32)
    hbm.r("x", x)
    hbm.r("kv-cache", layer.c_cache, layer.kr_cache)  # the latent cache is read once, shared by all heads (L2)
    for hd in range(heads):
        base = hd * n
        cols = slice(hd * dq, (hd + 1) * dq)
        # 1. split-K GEMVs of the query and the new latent, ClusterReduce(sum) each
        qp = [gemv(x[:, k], layer.wq[k, cols]) for k in ks]
        lp = [gemv(x[:, k], layer.wkva[k]) for k in ks]
        for k in ks:
            hbm.r("weights", layer.wq[k, cols])
            if hd == 0:  # W_kva is shared by every head's cluster: read from HBM once, then from L2
                hbm.r("weights", layer.wkva[k])
        q = _reduce(qp, np.add, dsmem, hbm, via_global, f"h{hd}:q", base)[0]
        lat = _reduce(lp, np.add, dsmem, hbm, via_global, f"h{hd}:latent", base)[0]
        qn, qr = q[:, :dn], rope(q[:, dn:], s)
        c_new, kr_new = lat[:, :r], rope(lat[:, r:], s)
        if hd == 0:
            hbm.w("kv-cache", c_new, kr_new)
        # 2. absorbed query, latent slice per block, ClusterGather
        qlat_pieces = [gemv(qn, layer.wuk[hd][rr].T) for rr in rs]
        for rr in rs:
            hbm.r("weights", layer.wuk[hd][rr])
        qlat = _gather(qlat_pieces, dsmem, hbm, via_global, f"h{hd}:qlat", base)[0]
        # 3. split-KV attention over the latent cache (keys [c, k_r], values c)
        cc = np.concatenate([layer.c_cache, c_new[:, None, :]], axis=1)
        kr = np.concatenate([layer.kr_cache, kr_new[:, None, :]], axis=1)
        qcat = np.concatenate([qlat, qr], axis=1)
        kcat = np.concatenate([cc, kr], axis=2)
        pieces = [split_attention(qcat, kcat[:, p], cc[:, p], dq ** -0.5) for p in parts]
        merged = _reduce(pieces, softmax_merge, dsmem, hbm, via_global, f"h{hd}:attn", base)
        olat = _finish(merged[0])
        # 4. value up-projection by latent slice, ClusterReduce(sum); output projection by column slice
        op = [gemv(olat[:, rr], layer.wuv[hd][rr]) for rr in rs]
        for rr in rs:
            hbm.r("weights", layer.wuv[hd][rr])
        o = _reduce(op, np.add, dsmem, hbm, via_global, f"h{hd}:o", base)[0]
        ocols = slice(hd * dv, (hd + 1) * dv)
        for k in ks:
            y = gemv(o, layer.wo[ocols, k])
            hbm.r("weights", layer.wo[ocols, k])
            out[:, k] += y  # atomicAdd, resolved in L2
    hbm.w("output", out)
    return out


def _payload_bytes(buf) -> int:
    return sum(int(a.nbytes) for a in buf) if isinstance(buf, tuple) else int(buf.nbytes)


def _reduce(bufs, combine, dsmem, hbm, via_global, tag, base):
    out = cluster_reduce(bufs, combine, dsmem, tag, base)
    if via_global and len(bufs) > 1:  # every round: each block writes its buffer, its peer reads it
        per = _payload_bytes(bufs[0])
        rounds_ = len(bufs).bit_length() - 1
        hbm.written["exchange"] = hbm.written.get("exchange", 0) + per * rounds_ * len(bufs)
        hbm.read["exchange"] = hbm.read.get("exchange", 0) + per * rounds_ * len(bufs)
    return out


def _gather(pieces, dsmem, hbm, via_global, tag, base):
    out = cluster_gather(pieces, dsmem, tag, base)
    n = len(pieces)
    if via_global and n > 1:
        per = int(pieces[0].nbytes) * (n - 1) * n
        hbm.written["exchange"] = hbm.written.get("exchange", 0) + per
        hbm.read["exchange"] = hbm.read.get("exchange", 0) + per
    return out


# --------------------------------------------------------------------------- unfused baselines


def unfused_mha(layer: MhaLayer, hbm: HbmCounter, splits: int = 1, bounds=None) -> np.ndarray:
    """Separate kernels through HBM: QKV GEMV; attention per head (``splits`` > 1: flash-decoding,
    partials written to HBM and merged by a second kernel); output GEMV."""
    x, heads, d = layer.x, layer.heads, layer.d
    s = layer.k_cache.shape[2]
    hbm.r("x", x)
    hbm.r("weights", layer.wq, layer.wk, layer.wv)
    q_all, k_all, v_all = gemv(x, layer.wq), gemv(x, layer.wk), gemv(x, layer.wv)
    hbm.w("qkv", q_all, k_all, v_all)
    hbm.r("qkv", q_all, k_all, v_all)
    os_ = []
    for hd in range(heads):
        cols = slice(hd * d, (hd + 1) * d)
        q = rope(q_all[:, cols], s)
        kn = rope(k_all[:, cols], s)
        keys = np.concatenate([layer.k_cache[:, hd], kn[:, None, :]], axis=1)
        vals = np.concatenate([layer.v_cache[:, hd], v_all[:, cols][:, None, :]], axis=1)
        hbm.r("kv-cache", layer.k_cache[:, hd], layer.v_cache[:, hd])
        hbm.w("kv-cache", kn, v_all[:, cols])
        os_.append(_attend(q, keys, vals, d ** -0.5, splits, bounds, hbm))
    o = np.concatenate(os_, axis=1)
    hbm.w("o", o)
    hbm.r("o", o)
    hbm.r("weights", layer.wo)
    y = gemv(o, layer.wo)
    hbm.w("output", y)
    return y


def unfused_mla(layer: MlaLayer, hbm: HbmCounter, splits: int = 1, bounds=None) -> np.ndarray:
    """Separate kernels through HBM for MLA (absorbed attention kernel as FlashMLA-style decoders run it)."""
    x, heads, dn, dr, r = layer.x, layer.heads, layer.d_nope, layer.d_rope, layer.rank
    s = layer.c_cache.shape[1]
    dq = dn + dr
    hbm.r("x", x)
    hbm.r("weights", layer.wq, layer.wkva)
    q_all, lat = gemv(x, layer.wq), gemv(x, layer.wkva)
    hbm.w("qkv", q_all, lat)
    hbm.r("qkv", q_all, lat)
    c_new, kr_new = lat[:, :r], rope(lat[:, r:], s)
    cc = np.concatenate([layer.c_cache, c_new[:, None, :]], axis=1)
    kr = np.concatenate([layer.kr_cache, kr_new[:, None, :]], axis=1)
    hbm.w("kv-cache", c_new, kr_new)
    hbm.r("kv-cache", layer.c_cache, layer.kr_cache)
    kcat = np.concatenate([cc, kr], axis=2)
    os_ = []
    for hd in range(heads):
        q = q_all[:, hd * dq:(hd + 1) * dq]
        qn, qr = q[:, :dn], rope(q[:, dn:], s)
        hbm.r("weights", layer.wuk[hd], layer.wuv[hd])
        qlat = gemv(qn, layer.wuk[hd].T)
        olat = _attend(np.concatenate([qlat, qr], axis=1), kcat, cc, dq ** -0.5, splits, bounds, hbm)
        os_.append(gemv(olat, layer.wuv[hd]))
    o = np.concatenate(os_, axis=1)
    hbm.w("o", o)
    hbm.r("o", o)
    hbm.r("weights", layer.wo)
    y = gemv(o, layer.wo)
    hbm.w("output", y)
    return y


def _attend(q, keys, vals, scale, splits, bounds, hbm):
    if splits <= 1:
        return _finish(split_attention(q, keys, vals, scale))
    pieces = [split_attention(q, keys[:, p], vals[:, p], scale) for p in partition(keys.shape[1], splits, bounds)]
    for pc in pieces:  # partials to HBM, read back by the merge kernel
        hbm.w("partials", *pc)
        hbm.r("partials", *pc)
    acc = pieces[0]
    for pc in pieces[1:]:
        acc = softmax_merge(acc, pc)
    return _finish(acc)


# --------------------------------------------------------------------------- variants


def run_variant(variant: str, layer, n: int, bounds=None) -> tuple[np.ndarray, HbmCounter, Ledger]:
    """Run one variant on *layer* (MhaLayer or MlaLayer) with cluster size / split count *n*.

    Returns ``(output (B, h) float32, HBM counter, DSMEM ledger)``; the ledger is empty except for
    ``clusterfusion`` and ``fused-global`` (whose exchanges it also records; their bytes go to HBM
    for ``fused-global``).

    Raises
    ------
    ValueError
        Unknown variant.
    """
    hbm, dsmem = HbmCounter(), Ledger()
    mla = isinstance(layer, MlaLayer)
    if variant in ("clusterfusion", "fused-global"):
        fn = fused_mla if mla else fused_mha
        y = fn(layer, n, dsmem, hbm, via_global=variant == "fused-global", bounds=bounds)
    elif variant in ("unfused", "flash-decoding"):
        fn = unfused_mla if mla else unfused_mha
        y = fn(layer, hbm, splits=1 if variant == "unfused" else max(n, 2), bounds=bounds if variant != "unfused" else None)
    else:
        raise ValueError(f"variant: expected one of ['unfused', 'flash-decoding', 'fused-global', 'clusterfusion'], "
                         f"got {variant!r}")
    return y, hbm, dsmem


def rel_error(y: np.ndarray, ref: np.ndarray) -> float:
    """``max |y - ref| / max |ref|``."""
    scale = float(np.max(np.abs(ref))) or 1.0
    return float(np.max(np.abs(y.astype(np.float64) - ref))) / scale


def _is_mla(workload) -> bool:
    for l in getattr(workload, "layers", ()) or ():
        if l.kind == "attention":
            return "mla" in l.attrs
    return False


def evaluate(scenario, repeats: int = 3):
    """Execute fidelity: one decode step of the attention module of the scenario's model shape
    (MHA for a Llama-like table, MLA for DeepSeek-V2-Lite), :data:`EXEC_HEADS` heads, float32, for
    the variant; checked against the float64 oracle.

    Parameters
    ----------
    scenario : suite.Scenario
        ``params``: ``cluster_size`` (N blocks per head; the split count of ``flash-decoding``),
        ``batch`` (B), ``seq_len`` (S, cached tokens); ``seed``.
    repeats : int
        Timed repetitions (raw samples returned).

    Returns
    -------
    suite.Result
        ``layer_time`` (s, median on this CPU), ``max_rel_error`` (vs float64), ``hbm_bytes``,
        ``hbm_weight_bytes``, ``hbm_kv_bytes``, ``hbm_intermediate_bytes`` (q/k/v, o, partials,
        exchanges), ``dsmem_bytes`` (ledger total), ``dsmem_messages``, ``dsmem_rounds`` (distinct
        rounds per head); artifact ``hbm`` (bytes by kind).

    Raises
    ------
    suite.Skip
        ``seq_len`` > :data:`MAX_SEQ` or ``batch`` > :data:`MAX_BATCH`.
    suite.api.OracleMismatch
        The output differs from the oracle by more than :data:`REL_TOL` (a bug).
    """
    from suite.api import Result, Skip

    p = scenario.params
    n, b, s = int(p["cluster_size"]), int(p["batch"]), int(p["seq_len"])
    if s > MAX_SEQ:
        raise Skip(f"clusterfusion execute: seq_len={s} > {MAX_SEQ} (CPU run)")
    if b > MAX_BATCH:
        raise Skip(f"clusterfusion execute: batch={b} > {MAX_BATCH} (CPU run)")
    rng = np.random.default_rng(scenario.seed)
    mla = _is_mla(scenario.workload)
    layer = make_mla(rng, b, s) if mla else make_mha(rng, b, s)
    y, hbm, dsmem = run_variant(scenario.variant, layer, n)
    err = _checked_error(scenario.variant, y, layer.reference())
    samples = _timed(scenario.variant, layer, n, repeats)
    kinds = {k: hbm.read.get(k, 0) + hbm.written.get(k, 0) for k in sorted(set(hbm.read) | set(hbm.written))}
    inter = sum(v for k, v in kinds.items() if k in ("qkv", "o", "partials", "exchange"))
    cf = scenario.variant == "clusterfusion"
    res = Result()
    res.add("layer_time", float(np.median(samples)), "s", "lower", samples=samples)
    res.add("max_rel_error", err, "1", "lower")
    res.add("hbm_bytes", hbm.total, "B", "lower")
    res.add("hbm_weight_bytes", kinds.get("weights", 0), "B", "lower")
    res.add("hbm_kv_bytes", kinds.get("kv-cache", 0), "B", "lower")
    res.add("hbm_intermediate_bytes", inter, "B", "lower")
    res.add("dsmem_bytes", dsmem.total_bytes if cf else 0, "B", "lower")
    res.add("dsmem_messages", dsmem.count if cf else 0, "1", "none")
    res.add("dsmem_rounds", len({m.tag for m in dsmem.messages}) / layer.heads if cf else 0, "1", "none")
    res.artifacts["hbm"] = kinds
    res.artifacts["setup"] = {"attention": "mla" if mla else "mha", "heads": layer.heads, "batch": b, "seq_len": s,
                              "cluster_size": n, "dtype": "fp32", "oracle": "float64 reference, explicit K/V"}
    return res


def _checked_error(variant: str, y: np.ndarray, ref: np.ndarray) -> float:
    """Relative error of the output against the float64 oracle; OracleMismatch above :data:`REL_TOL`."""
    from suite.api import OracleMismatch

    err = rel_error(y, ref)
    if not err <= REL_TOL:
        raise OracleMismatch(f"clusterfusion execute: variant {variant!r} output differs from the float64 "
                             f"reference by {err:.3g} (relative, > {REL_TOL:g})")
    return err


def _timed(variant: str, layer, n: int, repeats: int) -> list[float]:
    """Wall times (s) of ``max(1, repeats)`` runs of the variant (raw samples)."""
    samples = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        run_variant(variant, layer, n)
        samples.append(time.perf_counter() - t0)
    return samples
