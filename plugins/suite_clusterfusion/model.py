"""ClusterFusion's cost model: time per output token (TPOT) of LLM decoding, per variant, on one GPU.

Pure functions from (decode shape of a model, hardware profile, parameters) to metrics, built from
:mod:`suite.perf` primitives. SI units: seconds, bytes, B/s, FLOP/s. Weights, KV cache and
activations are 16-bit (2 B), softmax partials fp32 (4 B), as in the authors' kernels.

Model
-----
* **Kernel time** [Williams09 via :func:`suite.perf.roofline_time`]: every kernel of a decode step
  costs ``max(F / peak_fp16, bytes / (eta_hbm BW occ(blocks))) + gap``, where ``eta_hbm`` is the
  ``[ext.hopper] hbm_efficiency`` (measured/peak), ``gap`` the per-kernel launch gap (``[ext.hopper]
  kernel_gap`` or the ``launch_gap`` parameter) and ``occ(blocks) = blocks / (ceil(blocks / SMs)
  SMs)`` the fraction of the GPU's SMs a grid of that many thread blocks keeps busy, wave by wave
  (a kernel with fewer blocks than SMs reads memory at that fraction of the bandwidth:
  an assumption of this model, that the bandwidth scales with the busy SMs).
* **Attention module** per layer, by variant (B batch, S cached tokens, H heads):

  - ``unfused``: QKV GEMV (full GPU) -> attention kernel of ``B H`` blocks over the whole cache ->
    output GEMV; q/k/v and o are written to and read from HBM; 3 kernels;
  - ``flash-decoding`` [Dao23]: the attention kernel split into P parts (FlashAttention-2's split
    heuristic, :func:`flash_splits`), partials ``(m, l, o)`` (fp32) written to HBM and merged by a
    second kernel; 4 kernels;
  - ``fused-global`` and ``clusterfusion`` [Luo25 Sec. 4]: one kernel of ``H N`` blocks (a cluster of
    N blocks per head) reading the weights and the cache once, plus the cluster exchanges of the
    dataflow (below) in series with it: over DSMEM for ``clusterfusion``, through global memory for
    ``fused-global`` (the paper's DSMEM-off ablation).

* **Cluster exchanges** per head and layer. MHA: ClusterReduce of the split-K QKV partials
  (``3 d B`` fp16) and of the softmax partials (``(d + 2) B`` fp32). MLA (absorbed): ClusterReduce of
  the query (``(d_n + d_r) B``) and of the new latent (``(r + d_r) B``), ClusterGather of the
  absorbed query (``r B / N`` per block), ClusterReduce of the softmax partials (``(r + 2) B``
  fp32) and of the up-projected output (``d_v B`` fp32). A ClusterReduce of ``size`` bytes is
  log2 N rounds of one ``size``-byte message per block, a ClusterGather of ``size``-byte pieces
  rounds of ``size 2^r`` [Luo25 Alg. 1, 2], i.e. a recursive-doubling all-reduce / all-gather,
  priced by :func:`suite.perf.collective_time` (``algorithm="recursive-doubling"``) over a
  one-level on-chip network (a switch of N endpoints) built from ``[ext.hopper]``: per-block bandwidth ``dsmem_bandwidth / SMs``, latency
  ``dsmem_latency_cycles(N) / sm_clock`` (DSMEM), or ``eta_hbm BW / SMs / 2`` (each byte written
  then read) and ``global_latency_cycles / sm_clock`` (global memory). Traffic per primitive
  ``size log2 N N`` (Reduce) and ``size (N - 1) N`` (Gather) [Luo25 Eq. 3].
* **FFN / MoE, norms, LM head** are the same kernels in every variant: two RMSNorm kernels per
  layer; a dense SwiGLU FFN as a gate-up GEMV and a down GEMV; a DeepSeekMoE layer as router GEMV,
  top-k, shared-expert gate-up and down, routed-expert (grouped) gate-up and down, reading the
  weights of the ``E (1 - (1 - k/E)^B)`` experts a batch of B tokens is expected to touch (uniform
  routing); the LM head GEMV and a sampling kernel; the embedding gather.
* ``TPOT = sum of all kernels`` (no overlap between kernels).

References
----------
.. [Luo25] X. Luo et al., "ClusterFusion: Expanding Operator Fusion Scope for LLM Inference via
   Cluster-Level Collective Primitive", NeurIPS 2025 (arXiv 2508.18850): Sec. 3 (Alg. 1, 2, Eq. 3),
   Sec. 4 (fused QKV + attention + output projection, one cluster per head).
.. [Dao23] T. Dao, D. Haziza, F. Massa, G. Sizov, "Flash-Decoding for long-context inference",
   PyTorch blog / Stanford CRFM, 2023 (split-KV partials merged by a second kernel).
.. [Williams09] S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009.
.. [DSV2] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, Sec. 2 (MLA, DeepSeekMoE).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from suite.api import Group, collective_time, roofline_time

from suite_clusterfusion.cluster import check_cluster, gather_traffic, reduce_traffic
from suite_clusterfusion.hopper import dsmem_latency_cycles, hopper_of

__all__ = ["VARIANTS", "ELEM", "ACC", "DEFAULT_KERNEL_GAP", "MIN_KEYS_PER_SPLIT", "DecodeShape", "decode_shape",
           "occupancy", "flash_splits", "expected_experts", "Exchange", "exchanges", "Gpu", "gpu_of",
           "exchange_time", "primitive_time", "attention_module", "tpot", "check_cluster_size", "evaluate"]

VARIANTS = ("unfused", "flash-decoding", "fused-global", "clusterfusion")
#: bytes of a 16-bit weight / activation / KV element, and of an fp32 partial
ELEM, ACC = 2, 4
#: per-kernel gap used when the profile's [ext.hopper] has no kernel_gap: an assumption (see docs).
DEFAULT_KERNEL_GAP = 2e-6
#: smallest KV part of a flash-decoding split (keys): the split heuristic of [Dao23]-style kernels.
MIN_KEYS_PER_SPLIT = 256


# --------------------------------------------------------------------------- shapes


@dataclass(frozen=True)
class DecodeShape:
    """What one decode step of a model reads: per-layer weights, KV cache per token, FFN kinds.

    Attributes
    ----------
    layers, hidden, heads : int
    attention : {"mha", "mla"}
    d_head : int
        Query/key width per head (MLA: d_n + d_r).
    d_v : int
        Value width per head.
    kv_heads : int
    w_in, w_absorb, w_out : int
        Weight elements per layer of the input projections (QKV; MLA: q_proj and kv_a), of the
        MLA up-projections (kv_b, absorbed; 0 for MHA) and of the output projection.
    kv_per_token : int
        KV-cache elements per token per layer (MHA ``2 kv_heads d``; MLA ``r + d_r``).
    rank, d_nope, d_rope : int
        MLA latent rank and per-head no-RoPE / RoPE widths (0 for MHA).
    ffn : tuple
        Per layer ``("dense", f)`` or ``("moe", experts, shared, active, f_expert)``.
    vocab : int
    """

    name: str
    layers: int
    hidden: int
    heads: int
    attention: str
    d_head: int
    d_v: int
    kv_heads: int
    w_in: int
    w_absorb: int
    w_out: int
    kv_per_token: int
    rank: int
    d_nope: int
    d_rope: int
    ffn: tuple
    vocab: int


def decode_shape(workload) -> DecodeShape:
    """The decode shape of a transformer layer table (zoo transformers, or DeepSeek-V2-Lite with MLA/MoE).

    Raises
    ------
    ValueError
        The workload has no attention layer (not a transformer layer table).
    """
    key = (workload.name, workload.content_hash())
    got = _SHAPES.get(key)
    if got is None:
        got = _SHAPES[key] = _decode_shape(workload.name, workload)
    return got


_SHAPES: dict = {}  # (name, content hash) -> DecodeShape


def _decode_shape(name, workload) -> DecodeShape:
    layers = list(getattr(workload, "layers", ()) or ())
    attn = [l for l in layers if l.kind == "attention"]
    if not attn:
        raise ValueError(f"workload {name!r}: expected a transformer layer table with attention layers, got none")
    a = attn[0]
    h = a.input_shape[-1]
    heads = int(a.attrs["heads"])
    ffn = []
    for l in layers:
        if l.kind == "mlp":
            ffn.append(("dense", int(l.attrs.get("ffn") or 4 * h), 3 if l.attrs.get("mlp") == "swiglu" else 2))
        elif l.kind == "moe":
            at = l.attrs
            ffn.append(("moe", int(at["experts"]), int(at["shared_experts"]), int(at["active_experts"]),
                        int(at["expert_ffn"])))
    lm = [l for l in layers if l.kind == "fc" and l.name == "lm_head"]
    emb = [l for l in layers if l.kind == "embedding"]
    vocab = lm[0].output_shape[-1] if lm else (int(emb[0].attrs.get("vocab", 0)) if emb else 0)
    w = a.attrs["weights"]
    if "mla" in a.attrs:
        m = a.attrs["mla"]
        r, dn, dr, dv = int(m["kv_lora_rank"]), int(m["qk_nope_head_dim"]), int(m["qk_rope_head_dim"]), int(m["v_head_dim"])
        return DecodeShape(name, len(attn), h, heads, "mla", dn + dr, dv, heads,
                           w_in=w[0][0] * w[0][1] + w[1][0] * w[1][1], w_absorb=w[2][0] * w[2][1],
                           w_out=w[3][0] * w[3][1], kv_per_token=r + dr, rank=r, d_nope=dn, d_rope=dr,
                           ffn=tuple(ffn), vocab=vocab)
    d = int(a.attrs["d_head"])
    kvh = int(a.attrs.get("kv_heads") or heads)
    w_in = sum(x * y for x, y in w[:3])
    return DecodeShape(name, len(attn), h, heads, "mha", d, d, kvh, w_in=w_in, w_absorb=0,
                       w_out=w[3][0] * w[3][1], kv_per_token=2 * kvh * d, rank=0, d_nope=0, d_rope=0,
                       ffn=tuple(ffn), vocab=vocab)


# --------------------------------------------------------------------------- GPU figures


@dataclass(frozen=True)
class Gpu:
    """The figures the model reads from a profile (SI units)."""

    name: str
    sms: int
    peak: float  # FLOP/s, fp16 dense
    bw: float  # B/s achieved HBM bandwidth (eta x datasheet)
    gap: float  # s per kernel
    clock: float  # Hz
    dsmem_bw: float  # B/s aggregate
    lat: tuple  # (cluster sizes, cycles)
    global_cycles: float
    max_cluster: int
    max_cluster_np: int
    waves: bool = True  # scale a kernel's bandwidth by its SM occupancy (False: every kernel at full bandwidth)


def gpu_of(profile, launch_gap=None, occupancy_model: str = "waves") -> Gpu:
    """:class:`Gpu` of a profile with an ``[ext.hopper]`` table.

    Raises
    ------
    suite.Skip
        No ``[ext.hopper]`` table, or no device.
    """
    from suite.api import Skip

    hop = hopper_of(profile)
    if hop is None:
        raise Skip(f"clusterfusion: profile {profile.name!r} has no [ext.hopper] table (thread-block clusters, "
                   f"DSMEM); use nvidia-h100-sxm5-80gb or add the table")
    dev = profile.device
    if dev is None:
        raise Skip(f"clusterfusion: profile {profile.name!r} has no device")
    peak = dev.peak_flops.get("fp16") or dev.peak_flops.get("bf16") or max(dev.peak_flops.values())
    q = lambda key, dim: _quantity(profile, hop, key, dim)  # noqa: E731
    gap = launch_gap if launch_gap is not None else (q("kernel_gap", "time") if hop.get("kernel_gap") is not None
                                                    else DEFAULT_KERNEL_GAP)
    eta = float(hop.get("hbm_efficiency") or 1.0)
    sms = int(dev.cores or 1)
    np_max = hop.get("max_cluster_size_nonportable") or hop["max_cluster_size"]
    return Gpu(profile.name, sms, float(peak), float(dev.memory_bandwidth) * eta, float(gap), q("sm_clock", "frequency"),
               q("dsmem_bandwidth", "bandwidth"),
               (tuple(int(c) for c in hop["dsmem_latency_cluster"]), tuple(float(c) for c in hop["dsmem_latency_cycles"])),
               float(hop["global_latency_cycles"]), int(hop["max_cluster_size"]), int(np_max),
               occupancy_model == "waves")


def _quantity(profile, hop: dict, key: str, dim: str) -> float:
    """An ``[ext.hopper]`` figure in SI units; an override may have left a string with a unit there."""
    from suite.api import ProfileError, parse_quantity

    v = hop[key]
    if isinstance(v, str):
        try:
            return parse_quantity(v, dim)
        except Exception:  # noqa: BLE001 - one line for every parse failure
            raise ProfileError(f"profile {profile.name!r}: field ext.hopper.{key}: expected a {dim} with a unit, "
                               f"got {v!r}") from None
    return float(v)


def check_cluster_size(gpu: Gpu, n: int, non_portable: bool) -> None:
    """Skip when the cluster does not fit the profile: ``cluster_size N exceeds max_cluster_size M of profile X``."""
    from suite.api import Skip

    limit = gpu.max_cluster_np if non_portable else gpu.max_cluster
    if n > limit:
        what = "max_cluster_size_nonportable" if non_portable else "max_cluster_size"
        hint = "" if non_portable or n > gpu.max_cluster_np else " (non_portable=true allows up to " \
                                                                  f"{gpu.max_cluster_np})"
        raise Skip(f"cluster_size {n} exceeds {what} {limit} of profile {gpu.name}{hint}")


# --------------------------------------------------------------------------- kernels


def occupancy(blocks: int, sms: int) -> float:
    """Fraction of the SMs a grid of *blocks* keeps busy, averaged over its waves:
    ``blocks / (ceil(blocks / SMs) SMs)`` (1 for a multiple of the SM count)."""
    if blocks < 1 or sms < 1:
        raise ValueError(f"blocks and SMs must be >= 1, got {blocks}, {sms}")
    return blocks / (math.ceil(blocks / sms) * sms)


def _kernel(gpu: Gpu, flops: float, nbytes: float, blocks: int | None = None) -> float:
    occ = 1.0 if blocks is None or not gpu.waves else occupancy(blocks, gpu.sms)
    return roofline_time(flops, nbytes, gpu.peak, gpu.bw * occ) + gpu.gap


def flash_splits(batch: int, heads: int, seq: int, sms: int, max_splits: int = 128) -> int:
    """Flash-decoding's split count, by the heuristic of FlashAttention-2's split-KV path
    (``num_splits_heuristic``, ``csrc/flash_attn/flash_api.cpp``; re-implemented): no split when the
    ``B H`` blocks already fill 80% of the SMs; otherwise, among ``1 .. min(max_splits, SMs, parts
    of MIN_KEYS_PER_SPLIT keys)``, the smallest count whose wave efficiency
    ``w / ceil(w)`` (``w = B H P / SMs``) is >= 0.85 of the best one."""
    bh = batch * heads
    if bh >= 0.8 * sms:
        return 1
    limit = max(1, min(max_splits, sms, math.ceil((seq + 1) / MIN_KEYS_PER_SPLIT)))

    def eff(p):
        w = bh * p / sms
        return w / math.ceil(w)

    best = max(eff(p) for p in range(1, limit + 1))
    return next(p for p in range(1, limit + 1) if eff(p) >= 0.85 * best)


def expected_experts(experts: int, active: int, batch: int) -> float:
    """Distinct routed experts a batch of B tokens touches, each token picking *active* of *experts*
    uniformly: ``E (1 - (1 - k/E)^B)``."""
    return experts * (1.0 - (1.0 - active / experts) ** batch)


# --------------------------------------------------------------------------- cluster exchanges


@dataclass(frozen=True)
class Exchange:
    """One cluster primitive of the fused dataflow: ``op`` ("reduce"/"gather") of ``size`` bytes per
    block (a Gather's piece), ``what`` it carries."""

    op: str
    size: float
    what: str


def exchanges(shape: DecodeShape, batch: int, n: int) -> tuple[Exchange, ...]:
    """The cluster primitives one head's cluster runs per layer (module docstring, [Luo25 Sec. 4])."""
    b = batch
    if n == 1:
        return ()
    if shape.attention == "mha":
        d = shape.d_head
        return (Exchange("reduce", 3 * d * b * ELEM, "qkv"), Exchange("reduce", (d + 2) * b * ACC, "softmax-merge"))
    r = shape.rank
    return (Exchange("reduce", shape.d_head * b * ELEM, "q"), Exchange("reduce", (r + shape.d_rope) * b * ELEM, "latent"),
            Exchange("gather", r * b * ELEM / n, "q-absorbed"), Exchange("reduce", (r + 2) * b * ACC, "softmax-merge"),
            Exchange("reduce", shape.d_v * b * ACC, "o"))


@lru_cache(maxsize=256)
def _level(bandwidth: float, latency: float, n: int, device_name: str):
    """A one-level on-chip 'network' of N blocks (each block an endpoint of a switch-like SM-to-SM
    fabric, full per-block bandwidth to any peer), for :func:`suite.perf.collective_time`."""
    from suite.api import NetworkLevel, Profile

    lvl = NetworkLevel(name="on-chip", topology="switch", size=n, bandwidth=bandwidth, latency=latency)
    return Profile(name=f"{device_name}/on-chip", kind="device", network=(lvl,))


def path_figures(gpu: Gpu, n: int, dsmem: bool) -> tuple[float, float]:
    """``(per-block bandwidth B/s, latency s)`` of the DSMEM path or of the global-memory path."""
    if dsmem:
        cyc = dsmem_latency_cycles({"dsmem_latency_cluster": gpu.lat[0], "dsmem_latency_cycles": gpu.lat[1]}, n)
        return gpu.dsmem_bw / gpu.sms, cyc / gpu.clock
    return gpu.bw / gpu.sms / 2.0, gpu.global_cycles / gpu.clock


@lru_cache(maxsize=4096)
def primitive_time(op: str, size: float, n: int, gpu: Gpu, dsmem: bool = True) -> float:
    """Time (s) of one ClusterReduce / ClusterGather of ``size`` bytes per block on N blocks.

    ClusterReduce is a recursive-doubling all-reduce of ``size`` bytes, ClusterGather a
    recursive-doubling all-gather of ``N size`` bytes (log2 N rounds; the cyclic peers
    ``(b + 2^r) mod N`` of [Luo25 Alg. 1, 2] cost what MPICH's XOR partners cost on a switch), priced
    by :func:`suite.perf.collective_time` on a one-level on-chip network of the N blocks
    (:func:`path_figures`): ``log2 N (alpha + size / bw)`` and ``log2 N alpha + (N - 1) size / bw``.
    No reduction compute is charged (the on-chip profile has no device; the adds are register work).
    """
    n = check_cluster(n)
    if n == 1 or size <= 0:
        return 0.0
    bw, lat = path_figures(gpu, n, dsmem)
    prof = _level(bw, lat, n, gpu.name)
    grp = Group(ranks_per_node=1, nodes=n)
    if op == "reduce":
        return collective_time("allreduce", size, grp, prof, algorithm="recursive-doubling").time
    if op == "gather":
        return collective_time("allgather", size * n, grp, prof, algorithm="recursive-doubling").time
    raise ValueError(f"primitive: expected 'reduce' or 'gather', got {op!r}")


@lru_cache(maxsize=4096)
def exchange_time(shape: DecodeShape, batch: int, n: int, gpu: Gpu, dsmem: bool) -> tuple[float, float]:
    """``(time s, bytes all blocks of one cluster send)`` of one head's exchanges per layer."""
    t = nbytes = 0.0
    for e in exchanges(shape, batch, n):
        t += primitive_time(e.op, e.size, n, gpu, dsmem)
        nbytes += reduce_traffic(e.size, n) if e.op == "reduce" else gather_traffic(e.size, n)
    return t, nbytes


# --------------------------------------------------------------------------- the step


@dataclass(frozen=True)
class ModuleCost:
    """One layer's attention module under one variant."""

    time: float
    kernels: int
    hbm_bytes: float
    exchange_time: float
    exchange_bytes: float  # all clusters, one layer


def attention_module(shape: DecodeShape, variant: str, batch: int, seq: int, n: int, gpu: Gpu) -> ModuleCost:
    """Time, kernels and HBM bytes of one layer's QKV projection + attention + output projection.

    Parameters
    ----------
    shape : DecodeShape
    variant : one of :data:`VARIANTS`
    batch, seq : int
        B sequences, S cached tokens each.
    n : int
        Blocks per cluster (fused variants).
    gpu : Gpu

    Returns
    -------
    ModuleCost

    Raises
    ------
    ValueError
        Unknown variant.
    """
    b, s = batch, seq
    if shape.attention == "mha":
        attn_flops = 2.0 * b * s * (shape.heads * shape.d_head + shape.heads * shape.d_v)
    else:  # absorbed: scores over [c, k_r] (r + d_r), values c (r)
        attn_flops = 2.0 * b * s * shape.heads * (2 * shape.rank + shape.d_rope)
    if variant in ("unfused", "flash-decoding"):
        return _separate_kernels(shape, variant, b, s, gpu, attn_flops)
    if variant not in ("fused-global", "clusterfusion"):
        raise ValueError(f"variant: expected one of {list(VARIANTS)}, got {variant!r}")
    return _one_fused_kernel(shape, variant == "clusterfusion", b, s, n, gpu, attn_flops)


def _separate_kernels(shape: DecodeShape, variant: str, b: int, s: int, gpu: Gpu, attn_flops: float) -> ModuleCost:
    """The baselines: QKV projection, attention (split-KV plus a combine for flash-decoding) and
    output projection as separate kernels, every intermediate through HBM."""
    hh, h = shape.heads, shape.hidden
    kv = b * s * shape.kv_per_token * ELEM
    kv_new = b * shape.kv_per_token * ELEM
    x_b = b * h * ELEM
    o_width = hh * shape.d_v
    in_out = b * (shape.w_in // h) * ELEM  # the projections' outputs (q, k, v / q, latent)
    t = _kernel(gpu, 2.0 * b * shape.w_in, shape.w_in * ELEM + x_b + in_out)
    nbytes = shape.w_in * ELEM + x_b + in_out
    attn_bytes = in_out + kv + kv_new + shape.w_absorb * ELEM + b * o_width * ELEM
    kernels = 3
    if variant == "unfused":
        t += _kernel(gpu, attn_flops + 2.0 * b * shape.w_absorb, attn_bytes, blocks=b * hh)
        nbytes += attn_bytes
    else:
        p = flash_splits(b, hh, s, gpu.sms)
        width = shape.rank if shape.attention == "mla" else shape.d_v
        partials = b * hh * p * (width + 2) * ACC
        t += _kernel(gpu, attn_flops + 2.0 * b * shape.w_absorb, attn_bytes - b * o_width * ELEM + partials,
                     blocks=b * hh * p)
        t += _kernel(gpu, 0.0, partials + b * o_width * ELEM, blocks=b * hh)
        nbytes += attn_bytes + 2 * partials
        kernels = 4
    t += _kernel(gpu, 2.0 * b * shape.w_out, shape.w_out * ELEM + b * o_width * ELEM + x_b)
    nbytes += shape.w_out * ELEM + b * o_width * ELEM + x_b
    return ModuleCost(t, kernels, nbytes, 0.0, 0.0)


def _one_fused_kernel(shape: DecodeShape, dsmem: bool, b: int, s: int, n: int, gpu: Gpu,
                      attn_flops: float) -> ModuleCost:
    """The fused module: one kernel of ``heads x n`` blocks plus the cluster exchange, over DSMEM
    (clusterfusion) or through global memory (fused-global, each exchanged byte written and read)."""
    hh = shape.heads
    w_bytes = (shape.w_in + shape.w_absorb + shape.w_out) * ELEM
    kv = b * s * shape.kv_per_token * ELEM
    kv_new = b * shape.kv_per_token * ELEM
    x_b = b * shape.hidden * ELEM
    gemv_flops = 2.0 * b * (shape.w_in + shape.w_absorb + shape.w_out)
    ex_t, ex_b = exchange_time(shape, b, n, gpu, dsmem)
    nbytes = w_bytes + kv + kv_new + 2 * x_b
    if not dsmem:
        nbytes += 2 * ex_b * hh  # each exchanged byte written to and read from global memory
    t = _kernel(gpu, gemv_flops + attn_flops, w_bytes + kv + kv_new + 2 * x_b, blocks=hh * n) + ex_t
    return ModuleCost(t, 1, nbytes, ex_t, ex_b * hh)


@dataclass(frozen=True)
class StepCost:
    """One decode step (one output token per sequence)."""

    tpot: float
    attention_time: float
    ffn_time: float
    other_time: float
    kernels: int
    hbm_bytes: float
    exchange_time: float
    exchange_bytes: float


def _ffn(gpu: Gpu, spec: tuple, b: int, h: int) -> tuple[float, int, float]:
    if spec[0] == "dense":
        f, mats = spec[1], spec[2]
        up, down = (mats - 1) * h * f, h * f
        t = _kernel(gpu, 2.0 * b * up, up * ELEM + b * h * ELEM + b * (mats - 1) * f * ELEM)
        t += _kernel(gpu, 2.0 * b * down, down * ELEM + b * f * ELEM + b * h * ELEM)
        return t, 2, (up + down) * ELEM + 2 * b * h * ELEM + b * mats * f * ELEM
    _, e, shared, k, fe = spec
    router = e * h
    touched = expected_experts(e, k, b)
    per = 3 * h * fe
    t = _kernel(gpu, 2.0 * b * router, router * ELEM + b * h * ELEM)  # router GEMV
    t += _kernel(gpu, 0.0, b * e * ACC)  # top-k
    sh_up, sh_down = 2 * shared * h * fe, shared * h * fe
    t += _kernel(gpu, 2.0 * b * sh_up, sh_up * ELEM + b * h * ELEM)
    t += _kernel(gpu, 2.0 * b * sh_down, sh_down * ELEM + b * h * ELEM)
    r_up, r_down = touched * 2 * h * fe, touched * h * fe
    t += _kernel(gpu, 2.0 * b * k * 2 * h * fe, r_up * ELEM + b * k * h * ELEM)
    t += _kernel(gpu, 2.0 * b * k * h * fe, r_down * ELEM + b * k * h * ELEM)
    return t, 6, (router + shared * per + touched * per) * ELEM + 4 * b * h * ELEM


@lru_cache(maxsize=64)
def _ffn_counts(ffn: tuple) -> tuple:
    """``((spec, layers with it), ...)`` in first-seen order."""
    out: dict = {}
    for spec in ffn:
        out[spec] = out.get(spec, 0) + 1
    return tuple(out.items())


def tpot(shape: DecodeShape, variant: str, batch: int, seq: int, n: int, gpu: Gpu) -> StepCost:
    """Time per output token of the whole model (module docstring): embedding + per layer (2 norms,
    attention module, FFN/MoE) + final norm + LM head + sampling."""
    b, h = batch, shape.hidden
    norm_bytes = 3 * b * h * ELEM  # read x and residual, write normalised x
    mod = attention_module(shape, variant, b, seq, n, gpu)
    other = _kernel(gpu, 0.0, 2 * b * h * ELEM) + _kernel(gpu, 0.0, norm_bytes)  # embedding, final norm
    other += _kernel(gpu, 2.0 * b * shape.vocab * h, shape.vocab * h * ELEM + b * shape.vocab * ACC)  # LM head
    other += _kernel(gpu, 0.0, b * shape.vocab * ACC)  # sampling
    norms = 2 * _kernel(gpu, 0.0, norm_bytes)
    ffn_t = 0.0
    kernels = 4 + shape.layers * (2 + mod.kernels)
    hbm = shape.layers * (mod.hbm_bytes + 2 * norm_bytes) + shape.vocab * h * ELEM
    for spec, count in _ffn_counts(shape.ffn):
        t, k, nb = _ffn(gpu, spec, b, h)
        ffn_t += count * t
        kernels += count * k
        hbm += count * nb
    attn_t = shape.layers * mod.time
    total = attn_t + ffn_t + shape.layers * norms + other
    return StepCost(total, attn_t, ffn_t, other + shape.layers * norms, kernels, hbm,
                    shape.layers * mod.exchange_time, shape.layers * mod.exchange_bytes)


# --------------------------------------------------------------------------- evaluate


def evaluate(scenario):
    """Model fidelity: TPOT of one variant for the scenario's model at ``batch``, ``seq_len``, ``cluster_size``.

    Reads ``scenario.profile`` (``device.cores`` SMs, fp16 peak, memory bandwidth; ``[ext.hopper]``)
    and ``scenario.workload`` (a transformer layer table), never ``network``.

    Returns
    -------
    suite.Result
        ``tpot`` (s), ``tokens_per_s`` (B / TPOT), ``attention_time``, ``ffn_time``, ``other_time`` (s,
        per token, all layers), ``kernels`` (per token), ``hbm_bytes`` (B per token), ``exchange_time``
        (s, cluster exchanges, all layers), ``exchange_bytes`` (B, all clusters and layers),
        ``cluster_reduce_time`` / ``cluster_gather_time`` (s, one primitive of ``primitive_bytes`` per
        block at ``cluster_size`` over the variant's path: DSMEM for ``clusterfusion``, global memory
        otherwise).

    Raises
    ------
    suite.Skip
        No ``[ext.hopper]``, a cluster larger than the profile allows, or a workload without attention.
    """
    from suite.api import Result, Skip

    prof, wl = scenario.profile, scenario.workload
    if prof is None:
        raise Skip("clusterfusion model fidelity needs a hardware profile")
    p = scenario.params
    gpu = gpu_of(prof, p.get("launch_gap"), p.get("occupancy", "waves"))
    n, b, s = int(p["cluster_size"]), int(p["batch"]), int(p["seq_len"])
    if scenario.variant == "clusterfusion":
        check_cluster_size(gpu, n, bool(p.get("non_portable", False)))
    try:
        shape = decode_shape(wl)
    except (ValueError, AttributeError) as exc:
        raise Skip(f"clusterfusion: {exc}") from None
    step = tpot(shape, scenario.variant, b, s, n, gpu)
    dsmem = scenario.variant == "clusterfusion"
    size = float(p.get("primitive_bytes", 8192))
    res = Result()
    res.add("tpot", step.tpot, "s", "lower")
    res.add("tokens_per_s", b / step.tpot, "1/s", "higher")
    res.add("attention_time", step.attention_time, "s", "lower")
    res.add("ffn_time", step.ffn_time, "s", "lower")
    res.add("other_time", step.other_time, "s", "lower")
    res.add("kernels", step.kernels, "1", "lower")
    res.add("hbm_bytes", step.hbm_bytes, "B", "lower")
    res.add("exchange_time", step.exchange_time, "s", "lower")
    res.add("exchange_bytes", step.exchange_bytes, "B", "none")
    res.add("cluster_reduce_time", primitive_time("reduce", size, n, gpu, dsmem), "s", "lower")
    res.add("cluster_gather_time", primitive_time("gather", size, n, gpu, dsmem), "s", "lower")
    res.artifacts["setup"] = {"model": shape.name, "attention": shape.attention, "batch": b, "seq_len": s,
                              "cluster_size": n, "sms": gpu.sms, "hbm_bandwidth_Bps": gpu.bw,
                              "kernel_gap_s": gpu.gap, "flash_splits": flash_splits(b, shape.heads, s, gpu.sms)}
    return res
