"""One training-time and memory model of a large transformer under Megatron-style parallelism.

Every technique that prices transformer training (and any third-party one) calls this module;
none keeps its own copy. Pure functions of numpy arrays: every field of a :class:`Plans` may be
an array, so a design-space search prices many plans in one call (:func:`evaluate`), and
:func:`evaluate_plan` is the same model at one plan.

What is modelled
----------------
Parallelism: tensor (``tp``), pipeline (``pp``), data (``dp``), sequence (``sp``, with ``tp``)
and context (``cp``); the 1F1B schedule and the interleaved one (``vpp`` virtual stages per GPU);
no / selective / full activation recomputation; the distributed optimizer / ZeRO stages 0-3.
Rank order is Megatron-LM's: tp innermost, then cp, dp, pp.

Compute, per GPU and micro-batch of ``b`` sequences of ``s`` tokens (``n = b s / cp`` tokens):

* GEMMs of one layer, forward (Narayanan et al. SC'21 §5.1 count; ``q = a d``, ``= h`` unless the
  head width ``d`` is set): QKV ``2 n h (q + 2 h_kv) / t``, scores and context
  ``2 b s^2 q / (t cp)`` each, projection ``2 n q h / t``, MLP ``2 n h f (2 if gated else 1) / t + 2 n f h / t``; backward twice forward.
  Each GEMM runs at ``peak x eta(F)``: ``eta`` is the device's GEMM efficiency curve
  (``device.efficiency["gemm_bf16"]``, fraction of peak against the FLOPs of one GEMM, read by
  :func:`gemm_efficiency`; a batched attention GEMM counts one head's ``2 s^2 d / cp``).
* Memory-bound kernels at the device's memory bandwidth, bytes counted (bf16, 2 B per element;
  ``e = 2 n' h`` with ``n' = n / t`` under sequence parallelism, else ``n``): two layer norms
  (``2 e`` each: read, write), two fused bias-dropout-residual adds (``3.5 e``: two reads, one
  write, a 1-byte mask), the fused bias-GeLU (``2 x 2 n f / t``), and without flash attention the
  fused scale-mask-softmax and the attention dropout (``(2 + 2) + (2 + 2 + 1)`` bytes per score
  element, ``b a s^2 / (t cp)`` elements); backward moves twice the forward bytes.
  Flash attention (Dao et al. 2022) replaces the score kernels by one kernel priced by its FLOPs
  (forward 2, backward 5 GEMM-equivalents of ``2 s^2 d``) at the same curve.
* The LM head on the last stage (``2 n h V / t`` forward) and its fp32 cross-entropy
  (``3 x 4 n V / t`` bytes forward, ``2 x`` backward); the optimizer step streams
  :data:`ADAM_BYTES_PER_PARAM` per local parameter through HBM.
* Recomputation re-runs, during the backward, the whole layer forward (``full``, its TP
  collectives too) or the attention core (``selective``, Korthikanti et al. 2022 §5).

Communication, all through :func:`suite.perf.collective.collective_time` on the profile:

* tensor parallelism: per layer two all-reduces forward and two backward of ``2 n h`` bytes
  (Shoeybi et al. 2019 §3), or with sequence parallelism two all-gathers and two
  reduce-scatters each way (Korthikanti et al. 2022 §4.2.2); two more (or 2 + 2) when the
  forward is recomputed. Not overlapped unless ``tp_overlap`` says what fraction is hidden.
* context parallelism: the layer's K and V all-gathered over the ``cp`` group forward and their
  gradients reduce-scattered backward, overlapped with the attention it feeds (exposed: the
  excess).
* pipeline: one activation forward and one gradient backward per micro-batch, chunk and stage
  boundary, ``2 n h / t`` bytes with the scatter/gather optimisation or sequence parallelism
  (Narayanan et al. SC'21 §4.1), else ``2 n h``; priced as ``p2p`` between neighbours
  ``tp cp dp`` ranks apart.
* data parallelism: the stage's gradients all-reduced (``grad_bytes`` per parameter), or
  reduce-scattered and the parameters all-gathered with the distributed optimizer / ZeRO 1-2
  (ZeRO-3 also all-gathers the parameters forward and backward per micro-batch set), over the
  strided DP group sharing the node's NICs with the other ``tp cp`` groups; ``dp_overlap`` of it
  is hidden behind the last micro-batch's backward (Megatron's ``--overlap-grad-reduce``),
  the rest exposed. The tied embedding's gradient is all-reduced between the first and last
  stage.

Pipeline schedule (Narayanan et al. SC'21 §2.2, eq. for the interleaved schedule in §2.2.2):
with ``c_s`` a stage's forward + backward time of one micro-batch (its TP and PP communication
included) and ``m = B / (dp b)`` micro-batches,
``T_pipe = m max_s c_s + (sum_s c_s - max_s c_s) / v``; for balanced stages this is
``(m + (p - 1) / v) c``, the 1F1B time when ``v = 1``
(:func:`suite.perf.pipeline.pipeline_1f1b_unbalanced_time`). Step time
``T = T_pipe + exposed DP + embedding all-reduce + optimizer``.

Memory per GPU (the busiest of the first and the last stage):

* model states after Rajbhandari et al. (ZeRO, SC'20 §3.1, ``K = 12``): ``(2 + g + 12) P_s``
  bytes, ``2 + g + 12 / dp`` with the distributed optimizer or ZeRO-1, ``2 + (g + 12) / dp``
  with ZeRO-2, ``(2 + g + 12) / dp`` with ZeRO-3 (``g`` = ``grad_bytes``, ``P_s`` the stage's
  parameters per GPU);
* activations per layer and micro-batch, Korthikanti et al. 2022 eqs. (1)-(5) (Table 2):
  ``s b h (34 + 5 a s / h)`` bytes, with TP ``s b h (10 + 24 / t + 5 a s / (h t))``, with TP and
  SP ``s b h (34 / t + 5 a s / (h t))``; selective recomputation or flash attention drop the
  ``5 a s / h`` term; full recomputation keeps ``2 s b h`` (``/ t`` with SP) per layer plus one
  layer's working set; without dropout the masks (``2 s b h`` and ``a s^2 b``) go; ``s`` is
  ``s / cp`` under context parallelism. The first stage holds ``min(m, p)`` micro-batches
  (1F1B), times ``1 + (p - 1) / (p v)`` interleaved (§4.2.3 and Appendix); the input-embedding
  dropout mask ``s b h`` per micro-batch in flight and the output layer's ``4 s b h / t (1 + V / h)``
  (§4.2.3) are added on the first and last stage.

References
----------
.. [Narayanan21] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC'21: §2.2 (1F1B, interleaved), §3 (TP, PP, DP), §4.1
   (scatter/gather), §5.1 eq. (3) (FLOPs).
.. [Shoeybi19] M. Shoeybi et al., "Megatron-LM", arXiv 1909.08053, §3.
.. [Korthikanti22] V. Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
   Models", arXiv 2205.05198 (MLSys 2023): §4 (activation memory, eqs. 1-5, Table 2), §5
   (selective recomputation), §6 (FLOPs). Its Table 5 is not used by this model or its
   validation.
.. [ZeRO20] S. Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
   Parameter Models", SC'20, §3.1 and §5 (``K = 12``; stages 1-3).
.. [Dao22] T. Dao et al., "FlashAttention", NeurIPS 2022 (no ``s^2`` tensors stored; the
   backward recomputes the scores).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from suite.errors import ParameterError, ProfileError
from suite.perf.network import Group, collective_time

__all__ = [
    "RECOMPUTE", "ZERO_STAGES", "ADAM_BYTES_PER_PARAM", "DEFAULT_GEMM_EFFICIENCY", "GEMM_CURVE",
    "TransformerShape", "shape_of", "Plans", "Hardware", "hardware_of", "gemm_efficiency",
    "CommPricer", "evaluate", "evaluate_plan", "layer_kernels", "tp_collectives", "iteration_flops", "layer_activation_bytes",
    "state_bytes_per_param", "check_plan",
]

#: recomputation choices; index = the code in :class:`Plans` arrays
RECOMPUTE = ("none", "selective", "full")
#: 0: none; 1: optimizer states sharded (ZeRO-1, Megatron's distributed optimizer); 2: + gradients; 3: + parameters
ZERO_STAGES = (0, 1, 2, 3)
#: Adam step traffic per local parameter (B): read fp32 master weight, two moments and the fp32 gradient,
#: write the master weight, the moments and the bf16 copy (4 x 4 + 3 x 4 + 2 = 30; Megatron's fused Adam)
ADAM_BYTES_PER_PARAM = 30.0
#: the GEMM efficiency used when the device declares no ``gemm_bf16`` curve (an assumption, reported
#: as such by :func:`hardware_of`: ``Hardware.assumed``)
DEFAULT_GEMM_EFFICIENCY = 0.7
#: name of the device efficiency curve read
GEMM_CURVE = "gemm_bf16"
_ACT = 2.0  # bytes per bf16/fp16 activation element


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class TransformerShape:
    """A decoder-only transformer's hyperparameters.

    Attributes
    ----------
    layers, hidden, heads, seq, vocab : int
        ``l``, ``h``, ``a``, ``s`` (tokens per sequence), ``V``.
    ffn : int
        MLP width ``f`` (default ``4 h``).
    kv_heads : int
        Key/value heads (grouped-query attention; default ``heads``).
    gated : bool
        Gated MLP (SwiGLU: two input projections).
    dropout : bool
        Dropout layers present (their masks are stored and their kernels run).
    tied : bool
        Input embedding and LM head share one matrix (its gradient is all-reduced between the
        first and last stage).
    positions : int
        Learned position embeddings (rows), 0 for rotary / ALiBi.
    name : str
    d_head : int
        Head width (default ``hidden / heads``; Qwen3-like models set a wider one).
    """

    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    ffn: int = 0
    kv_heads: int = 0
    gated: bool = False
    dropout: bool = True
    tied: bool = True
    positions: int = 0
    name: str = "transformer"
    d_head: float = 0

    def __post_init__(self):
        if not self.d_head:  # hidden / heads, kept exact when it is not an integer (GPT-3 1.3B: 2048 / 24)
            object.__setattr__(self, "d_head", self.hidden / self.heads)
        if self.ffn == 0:
            object.__setattr__(self, "ffn", 4 * self.hidden)
        if self.kv_heads == 0:
            object.__setattr__(self, "kv_heads", self.heads)
        for f in ("layers", "hidden", "heads", "seq", "vocab"):
            if int(getattr(self, f)) < 1:
                raise ParameterError(f"training: model {self.name!r}: field {f}: expected >= 1, got {getattr(self, f)}")

    @property
    def kv_hidden(self) -> float:
        """Width of K (and of V): ``kv_heads x d_head``."""
        return self.kv_heads * self.d_head

    @property
    def q_hidden(self) -> float:
        """Width of Q and of the attention output: ``heads x d_head`` (``hidden`` unless ``d_head`` is set)."""
        return self.heads * self.d_head

    @property
    def layer_params(self) -> float:
        """Parameters of one layer (weights and biases, two layer norms)."""
        h, f, hk, q = self.hidden, self.ffn, self.kv_hidden, self.q_hidden
        attn = h * (q + 2 * hk) + (q + 2 * hk) + q * h + h
        mlp = h * f * (2 if self.gated else 1) + f * (2 if self.gated else 1) + f * h + h
        return float(attn + mlp + 4 * h)

    @property
    def embedding_params(self) -> float:
        return float(self.vocab * self.hidden + self.positions * self.hidden)

    @property
    def params(self) -> float:
        """All parameters (the head counted once when tied)."""
        head = 0 if self.tied else self.vocab * self.hidden
        return self.layers * self.layer_params + self.embedding_params + head + 2 * self.hidden


def shape_of(table) -> TransformerShape:
    """The :class:`TransformerShape` of a zoo transformer table (``table.spec``).

    Raises
    ------
    ParameterError
        The workload is not a transformer layer table.
    """
    spec = getattr(table, "spec", None)
    if not spec or "hidden" not in spec:
        raise ParameterError(f"training: workload {getattr(table, 'name', table)!r}: expected a transformer layer "
                             "table (suite workloads list --kind transformer), got none")
    return TransformerShape(layers=int(spec["layers"]), hidden=int(spec["hidden"]), heads=int(spec["heads"]),
                            seq=int(spec["seq"]), vocab=int(spec["vocab"]), ffn=int(spec.get("ffn") or 0),
                            kv_heads=int(spec.get("kv_heads") or 0),
                            gated=str(spec.get("mlp", "gelu")) in ("swiglu", "geglu", "gated"),
                            dropout=bool(spec.get("dropout", True)), tied=bool(spec.get("tied", True)),
                            positions=int(spec.get("positions") or 0), name=str(getattr(table, "name", "transformer")),
                            d_head=int(spec.get("d_head") or 0))


@dataclass(frozen=True)
class Plans:
    """Parallel plans (each field an int / bool or an array of them, broadcast together).

    Attributes
    ----------
    tp, pp, dp, cp : int
        Tensor-, pipeline-, data- and context-parallel degrees (``tp pp dp cp`` GPUs).
    mbs, gbs : int
        Micro-batch and global batch (sequences); ``m = gbs / (dp mbs)`` micro-batches.
    vpp : int
        Virtual stages per GPU (1: 1F1B; > 1: the interleaved schedule).
    sp : bool
        Sequence parallelism (needs ``tp`` > 1 to matter).
    recompute : int
        Index into :data:`RECOMPUTE`.
    zero : int
        ZeRO stage (1 = Megatron's distributed optimizer).
    flash : bool
        Flash attention.
    grad_bytes : int
        Bytes per gradient element (2: bf16/fp16 reduction, 4: fp32 main gradients).
    dp_overlap : float
        Fraction of the DP gradient reduction that may hide behind the last backward (0: none,
        Megatron's ``local`` DDP of 2021; 1: ``--overlap-grad-reduce`` / torch DDP buckets).
    tp_overlap : float
        Fraction of the TP collectives hidden behind GEMMs (0 in Megatron-LM without
        Transformer Engine's user-buffer overlap).
    scatter_gather : bool
        Pipeline sends of ``1/tp`` of the activation (Narayanan et al. §4.1).
    embed_as_layer : bool
        DeepSpeed-style partition counting the embedding and the head as one layer each on the
        first and last stage (``partition-method type:transformer|embedding``); otherwise
        Megatron's ``layers / pp`` on every stage.
    """

    tp: object = 1
    pp: object = 1
    dp: object = 1
    mbs: object = 1
    gbs: object = 1
    cp: object = 1
    vpp: object = 1
    sp: object = False
    recompute: object = 0
    zero: object = 0
    flash: object = False
    grad_bytes: object = 2
    dp_overlap: object = 0.0
    tp_overlap: object = 0.0
    scatter_gather: object = True
    embed_as_layer: object = False

    def arrays(self) -> dict[str, np.ndarray]:
        """Every field as a numpy array, broadcast to one shape."""
        vals = {f.name: np.asarray(getattr(self, f.name)) for f in fields(self)}
        shape = np.broadcast_shapes(*(v.shape for v in vals.values()))
        return {k: np.broadcast_to(v, shape) for k, v in vals.items()}

    @property
    def gpus(self):
        return np.asarray(self.tp) * np.asarray(self.pp) * np.asarray(self.dp) * np.asarray(self.cp)


@dataclass(frozen=True)
class Hardware:
    """What the model reads of a profile (per GPU unless said).

    Attributes
    ----------
    name : str
    profile : Profile
        For :func:`collective_time` (network levels, NICs, node size).
    peak : float
        Mixed-precision tensor peak (FLOP/s).
    memory, memory_bandwidth : float
        HBM capacity (B) and bandwidth (B/s).
    gpn : int
        GPUs per node.
    curve : tuple of (FLOP, fraction)
        The GEMM efficiency curve (one point ``(1, DEFAULT_GEMM_EFFICIENCY)`` when assumed).
    assumed : bool
        True when the device declares no curve and :data:`DEFAULT_GEMM_EFFICIENCY` is used.
    """

    name: str
    profile: object
    peak: float
    memory: float
    memory_bandwidth: float
    gpn: int
    curve: tuple
    assumed: bool = False

    def with_efficiency(self, efficiency: float) -> "Hardware":
        """The same hardware with one flat GEMM efficiency (a sweep or a technique's override)."""
        if not 0.0 < efficiency <= 1.0:
            raise ParameterError(f"training: efficiency: expected a fraction in (0, 1], got {efficiency}")
        return replace(self, curve=((1.0, float(efficiency)),), assumed=False)


def hardware_of(profile, dtype: str = "bf16") -> Hardware:
    """The :class:`Hardware` of a node or cluster profile.

    Parameters
    ----------
    profile : Profile
    dtype : str
        Peak to use; the first of ``dtype``, ``bf16``, ``fp16``, ``fp32`` the device declares.

    Raises
    ------
    ProfileError
        No device, or no matching peak.
    """
    dev = getattr(profile, "device", None)
    if dev is None:
        raise ProfileError(f"training: profile {getattr(profile, 'name', '?')!r}: field device: expected a GPU, got none")
    try:
        _dt, peak = dev.first_peak(dtype, "bf16", "fp16", "fp32")
    except ProfileError:
        raise ProfileError(f"training: profile {profile.name!r}: field device.peak_flops: expected one of "
                           f"['{dtype}', 'bf16', 'fp16', 'fp32'], got none") from None
    pts = (dev.efficiency or {}).get(GEMM_CURVE) if getattr(dev, "efficiency", None) else None
    curve = tuple((float(a), float(b)) for a, b in pts) if pts else ((1.0, DEFAULT_GEMM_EFFICIENCY),)
    return Hardware(name=profile.name, profile=profile, peak=float(peak), memory=float(dev.memory),
                    memory_bandwidth=float(dev.memory_bandwidth), gpn=int(profile.devices_per_node), curve=curve,
                    assumed=not pts)


def gemm_efficiency(hw: Hardware, flops) -> np.ndarray:
    """Achieved fraction of peak of one GEMM of *flops* FLOPs: the device curve, linear in
    ``log F`` between its points and flat outside them (as ``Device.efficiency_at``)."""
    f = np.maximum(np.asarray(flops, dtype=float), 1.0)
    xs = np.log([c[0] for c in hw.curve])
    ys = np.array([c[1] for c in hw.curve])
    return np.interp(np.log(f), xs, ys)


# --------------------------------------------------------------------------- communication


class CommPricer:
    """:func:`collective_time` of many (op, bytes, group) at once, each distinct one priced once.

    One pricer may serve many :func:`evaluate` calls on the same profile (a search); ``calls``
    counts the distinct collectives priced.
    """

    def __init__(self, profile):
        self.profile = profile
        self._memo: dict = {}
        self.calls = 0

    def one(self, op: str, nbytes: float, group: Group) -> float:
        if group.size <= 1 or nbytes <= 0:
            return 0.0
        key = (op, float(nbytes), group)
        t = self._memo.get(key)
        if t is None:
            self.calls += 1
            t = collective_time(op, float(nbytes), group, self.profile).time
            self._memo[key] = t
        return t

    def many(self, op: str, nbytes, groups) -> np.ndarray:
        """Times (s) for arrays *nbytes* and *groups* (an array of the ``Group`` fields
        ``(ranks_per_node, nodes, concurrent)``, shape ``(..., 3)``)."""
        nb = np.asarray(nbytes, dtype=float)
        g = np.asarray(groups, dtype=np.int64)
        shape = np.broadcast_shapes(nb.shape, g.shape[:-1])
        nb = np.broadcast_to(nb, shape).reshape(-1)
        g = np.broadcast_to(g, shape + (3,)).reshape(-1, 3)
        if nb.size == 1:
            return np.full(shape, self.one(op, float(nb[0]), Group(*(int(x) for x in g[0][:2]), concurrent=int(g[0][2]))))
        # one integer key per point (distinct bytes x the three small group fields), sorted once in 1-D
        ub, ib = np.unique(nb, return_inverse=True)
        key = ib.astype(np.int64)
        for col in range(3):
            key = key * (int(g[:, col].max()) + 1) + g[:, col]
        uk, first, inv = np.unique(key, return_index=True, return_inverse=True)
        vals = np.empty(len(uk))
        for i, j in enumerate(first.tolist()):
            r = g[j]
            vals[i] = self.one(op, float(nb[j]), Group(ranks_per_node=int(r[0]), nodes=int(r[1]), concurrent=int(r[2])))
        return vals[np.asarray(inv).reshape(-1)].reshape(shape)


def _tp_group(tp, gpn):
    per = np.minimum(tp, gpn)
    return np.stack([per, -(-tp // per), np.ones_like(tp)], axis=-1)


def _cp_group(tp, cp, gpn):
    # cp ranks are tp apart: per node gpn // tp of them (at least 1)
    per = np.clip(gpn // tp, 1, None)
    per = np.minimum(per, cp)
    nodes = -(-cp // per)
    conc = np.where(nodes > 1, np.minimum(tp, gpn), 1)
    return np.stack([per, nodes, conc], axis=-1)


def _dp_group(tp, cp, dp, gpn):
    inner = tp * cp
    per = np.minimum(np.clip(gpn // inner, 1, None), dp)
    nodes = -(-dp // per)
    conc = np.where(nodes > 1, np.clip(gpn // per, 1, None), 1)
    return np.stack([per, nodes, conc], axis=-1)


def _pp_group(tp, cp, dp, gpn):
    inner = tp * cp * dp
    cross = inner >= gpn
    return np.stack([np.where(cross, gpn, inner), np.where(cross, 2, 1), np.ones_like(inner)], axis=-1)


def tp_collectives(m: TransformerShape, hw: Hardware, tp: int, mbs: int, cp: int = 1,
                   pricer: CommPricer | None = None) -> dict[str, float]:
    """One tensor-parallel collective of a layer (s): ``allreduce``, ``allgather`` and
    ``reduce-scatter`` of the micro-batch's activation ``2 b s h / cp`` bytes over the TP group
    (packed on a node; across ``tp / gpn`` nodes beyond it), by :func:`collective_time`."""
    pricer = pricer or CommPricer(hw.profile)
    act = _ACT * mbs * m.seq / cp * m.hidden
    grp = _tp_group(np.asarray(tp), hw.gpn)
    return {op: float(pricer.many(op, act, grp)) for op in ("allreduce", "allgather", "reduce-scatter")}


# --------------------------------------------------------------------------- counts


def state_bytes_per_param(zero, dp, grad_bytes=2):
    """Model-state bytes per local parameter [ZeRO20 §3.1, §5]: weights 2, gradients ``g``,
    optimizer 12 (fp32 master, two Adam moments), sharded over ``dp`` by the ZeRO stage."""
    zero, dp, g = np.asarray(zero), np.asarray(dp, dtype=float), np.asarray(grad_bytes, dtype=float)
    return np.select([zero == 0, zero == 1, zero == 2],
                     [2 + g + 12, 2 + g + 12 / dp, 2 + (g + 12) / dp], (2 + g + 12) / dp)


def layer_activation_bytes(m: TransformerShape, mbs, tp=1, sp=False, cp=1, recompute=0, flash=False):
    """Bytes one layer keeps for the backward per micro-batch per GPU [Korthikanti22 §4, Table 2].

    Returns
    -------
    (stored, working) : ndarray
        What stays in memory between forward and backward, and the full layer's activations
        (the working set one layer rebuilds during full recomputation).
    """
    tp, cp = np.asarray(tp, dtype=float), np.asarray(cp, dtype=float)
    s = m.seq / cp
    sbh = s * np.asarray(mbs, dtype=float) * m.hidden
    drop = 1.0 if m.dropout else 0.0
    lin = 34.0 - 2.0 * (1 - drop)  # two 1-byte dropout masks
    rep = 10.0 - 2.0 * (1 - drop)  # the part TP does not shard without SP (norm inputs, QKV / FC1 inputs, masks)
    # GQA stores smaller K and V (4 s b h of the 11 are Q and K, 2 of V): scale those by kv/h
    kvr = m.kv_hidden / m.hidden
    lin = lin - (2 + 2) * (1 - kvr)
    # MLP width other than 4h: FC1 output / GeLU input 8 sbh and FC2 input 8 sbh scale with f / 4h (x1.5 gated)
    fr = m.ffn / (4.0 * m.hidden) * (1.5 if m.gated else 1.0)
    lin = lin + 16.0 * (fr - 1.0)
    attn = (2.0 + 3.0 * drop) * m.heads * s / m.hidden  # per sbh: softmax output (+ mask, dropout output)
    sp = np.asarray(sp, dtype=bool) & (tp > 1)
    shard = np.where(sp, lin / tp, rep + (lin - rep) / tp)
    full = sbh * (shard + attn / tp)
    no_attn = sbh * shard
    rc = np.asarray(recompute)
    keep_attn = (rc == 0) & ~np.asarray(flash, dtype=bool)
    stored = np.where(rc == 2, 2.0 * sbh / np.where(sp, tp, 1.0), np.where(keep_attn, full, no_attn))
    working = np.where(np.asarray(flash, dtype=bool), no_attn, full)
    return stored, working


def iteration_flops(m: TransformerShape, gbs, recompute: int | str = "full"):
    """FLOPs of one iteration over all GPUs (matrix multiplications only, causal mask not
    discounted), [Narayanan21 eq. (3)] generalised to GQA / gated MLPs and per recomputation:
    per layer forward ``F_l = 2 s h (h + 2 h_kv) + 4 s^2 h + 2 s h^2 + 2 s h f (g + 1)``
    (``g`` = 2 gated, else 1), training ``3 F_l`` plus the recomputed forward (``F_l`` full,
    ``4 s^2 h`` selective), the LM head ``6 s h V``; times ``gbs``.
    With ``recompute="full"`` and a GPT layer this is eq. (3), ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))``;
    with ``"none"`` it is the model FLOPs of Korthikanti et al. §6.
    """
    rc = RECOMPUTE.index(recompute) if isinstance(recompute, str) else int(recompute)
    s, h, f, hk, q = m.seq, m.hidden, m.ffn, m.kv_hidden, m.q_hidden
    core = 4.0 * s * s * q
    fl = 2.0 * s * h * (q + 2 * hk) + core + 2.0 * s * q * h + 2.0 * s * h * f * ((2 if m.gated else 1) + 1)
    extra = (0.0, core, fl)[rc]
    return float(gbs) * (m.layers * (3 * fl + extra) + 6.0 * s * h * m.vocab)


def check_plan(m: TransformerShape, hw: Hardware, tp: int, pp: int, dp: int, cp: int = 1, mbs: int = 1, gbs: int = 1,
               vpp: int = 1, gpus: int | None = None, who: str = "training") -> None:
    """One-line errors for a plan that cannot apply.

    Raises
    ------
    ParameterError
        ``tp`` not dividing the heads, ``pp`` above the layers, ``vpp`` not dividing the layers
        per stage, the batch not a multiple of ``dp mbs``, or more GPUs than *gpus*.
    """
    if m.heads % tp or m.kv_heads % min(tp, m.kv_heads):
        raise ParameterError(f"{who}: tp={tp} must divide the {m.heads} heads of {m.name}")
    if pp > m.layers:
        raise ParameterError(f"{who}: pp={pp} exceeds the {m.layers} layers of {m.name}")
    if vpp > 1 and m.layers % (pp * vpp):
        raise ParameterError(f"{who}: the interleaved schedule needs layers divisible by pp x vpp, got "
                             f"{m.layers} layers, pp={pp}, vpp={vpp}")
    if gbs % (dp * mbs):
        raise ParameterError(f"{who}: global batch {gbs} must be a multiple of dp x micro-batch = {dp * mbs}")
    if m.seq % cp:
        raise ParameterError(f"{who}: cp={cp} must divide the sequence of {m.seq} tokens")
    if gpus is not None and tp * pp * dp * cp > gpus:
        raise ParameterError(f"{who}: tp x pp x dp x cp = {tp * pp * dp * cp} GPUs, {hw.name} has {gpus}")


# --------------------------------------------------------------------------- the model


def _gemm_time(hw, flops, size):
    return flops / (hw.peak * gemm_efficiency(hw, size))


def layer_kernels(m: TransformerShape, hw: Hardware, a: dict) -> dict[str, tuple]:
    """Forward and backward time (s) of each compute kernel group of one layer, per micro-batch per
    GPU, in execution order: ``qkv`` (first layer norm + QKV GEMM), ``core`` (scores, softmax,
    dropout, context; or one flash kernel), ``proj`` (output projection + bias-dropout-residual),
    ``fc1`` (second layer norm + first MLP GEMM + bias-GeLU), ``fc2`` (second MLP GEMM +
    bias-dropout-residual). Values are ``(forward, backward)`` arrays broadcast over the plans *a*
    (:meth:`Plans.arrays`); see the module docstring for the counts."""
    tp, cp, b = np.asarray(a["tp"], dtype=float), np.asarray(a["cp"], dtype=float), np.asarray(a["mbs"], dtype=float)
    s, h, f, hk, nh, q = m.seq, m.hidden, m.ffn, m.kv_hidden, m.heads, m.q_hidden
    n = b * s / cp
    g = 2.0 if m.gated else 1.0
    bw = hw.memory_bandwidth
    flash = np.asarray(a["flash"]).astype(bool)
    n_el = np.where(np.asarray(a["sp"]).astype(bool) & (tp > 1), n / tp, n)
    e = _ACT * n_el * h  # one hidden-state tensor of the layer's element-wise kernels (B)
    drop = 1.0 if m.dropout else 0.0
    ln, bda = 2 * e, (3.0 + 0.5 * drop) * e
    gelu = 2 * _ACT * n * f * g / tp
    d = m.d_head
    core = 4.0 * b * s * s * q / (tp * cp)  # scores + context FLOPs
    t_core = _gemm_time(hw, core, 2.0 * s * (s / cp) * d)  # one head's GEMM: the batched kernel's unit
    soft = np.where(flash, 0.0, b * nh * s * (s / cp) / tp * (4.0 + 5.0 * drop)) / bw
    out = {}
    for name, fl, el in (("qkv", 2 * n * h * (q + 2 * hk) / tp, ln), ("proj", 2 * n * q * h / tp, bda),
                         ("fc1", 2 * n * h * f * g / tp, ln + gelu), ("fc2", 2 * n * f * h / tp, bda)):
        t = _gemm_time(hw, fl, fl)
        out[name] = (t + el / bw, 2 * t + 2 * el / bw)
        if name == "qkv":
            out["core"] = (t_core + soft, np.where(flash, 2.5, 2.0) * t_core + 2 * soft)
    return out


def _layer_compute(m: TransformerShape, hw: Hardware, a: dict):
    """Forward, backward and recomputed compute of one layer per micro-batch per GPU (s), without
    communication (the sums of :func:`layer_kernels`), and the attention core's forward time."""
    k = layer_kernels(m, hw, a)
    t_f = sum(v[0] for v in k.values())
    t_b = sum(v[1] for v in k.values())
    rc = a["recompute"]
    t_rc = np.where(rc == 2, t_f, np.where(rc == 1, k["core"][0], 0.0))
    return t_f, t_b, t_rc, k["core"][0]


def _head_compute(m: TransformerShape, hw: Hardware, a: dict):
    tp, cp, b = a["tp"].astype(float), a["cp"].astype(float), a["mbs"].astype(float)
    n = b * m.seq / cp
    fl = 2 * n * m.hidden * m.vocab / tp
    ce = 4.0 * n * m.vocab / tp  # fp32 logits
    t = _gemm_time(hw, fl, fl)
    return t + 3 * ce / hw.memory_bandwidth, 2 * t + 2 * ce / hw.memory_bandwidth


def _stage_layers(m: TransformerShape, a: dict):
    """(layers on the first, a middle and the last stage; middle stages count)."""
    pp = a["pp"]
    L = m.layers
    emb = a["embed_as_layer"].astype(bool)
    per_even = -(-L // pp)
    per_emb = -(-(L + 2) // pp)
    first = np.where(emb, np.maximum(per_emb - 1, 0), per_even)
    last_even = L - per_even * (pp - 1)
    mid_emb = np.where(pp > 2, (L - 2 * first) / np.maximum(pp - 2, 1), 0)
    mid = np.where(emb, np.ceil(mid_emb), per_even)
    last = np.where(emb, L - first - mid * np.maximum(pp - 2, 0), last_even)
    single = pp == 1
    first = np.where(single, L, first)
    last = np.where(single, L, np.maximum(last, 0))
    return first.astype(float), mid.astype(float), last.astype(float)


def evaluate(m: TransformerShape, hw: Hardware, plans: Plans, pricer: CommPricer | None = None,
             ignore_memory: bool = False) -> dict[str, np.ndarray]:
    """Step time and memory of every plan (vectorised; see the module docstring for the model).

    Parameters
    ----------
    m : TransformerShape
    hw : Hardware
    plans : Plans
        Arrays broadcast together; integers must be valid (see :func:`check_plan`): an
        invalid combination gives ``nan``, not an error.
    pricer : CommPricer, optional
        Reused across calls on one profile (a search); a fresh one by default.
    ignore_memory : bool
        Price plans that exceed the HBM too (``time`` finite, ``fits`` False); by default their
        ``time`` is ``inf``.

    Returns
    -------
    dict of str -> ndarray
        ``time`` (s per iteration), ``raw_time`` (the same whether it fits or not),
        ``compute``, ``bubble``, ``tp_comm``, ``cp_comm``, ``pp_comm``, ``dp_comm`` (the whole
        reduction), ``dp_exposed``, ``embedding_comm``, ``optimizer`` (s), ``memory``,
        ``states``, ``activations`` (B per GPU, the busiest stage), ``fits`` (bool),
        ``microbatches``, ``model_flops`` (FLOPs per iteration without recomputation) and
        ``hardware_flops`` (with it; Narayanan's eq. (3) under full recomputation).
    """
    a = plans.arrays()
    pricer = pricer or CommPricer(hw.profile)
    tp, pp, dp, cp = a["tp"].astype(np.int64), a["pp"].astype(np.int64), a["dp"].astype(np.int64), a["cp"].astype(np.int64)
    b, vpp, rc = a["mbs"].astype(np.int64), a["vpp"].astype(np.int64), a["recompute"].astype(np.int64)
    gpn = hw.gpn
    mcount = a["gbs"] / (dp * b)
    tpf = tp.astype(float)
    h, s = m.hidden, m.seq
    sp = a["sp"].astype(bool) & (tp > 1)
    t_f, t_b, t_rc, t_core = _layer_compute(m, hw, a)
    # tensor parallelism
    act = _ACT * b * s / cp * h  # the full activation of a micro-batch (what TP moves)
    tpg = _tp_group(tp, gpn)
    ar = pricer.many("allreduce", act, tpg)
    ag = pricer.many("allgather", act, tpg)
    rs = pricer.many("reduce-scatter", act, tpg)
    per_pass = np.where(sp, 2 * (ag + rs), 2 * ar)
    n_pass = 2 + (rc == 2)
    t_tp = per_pass * n_pass * (1 - a["tp_overlap"])
    # context parallelism: K and V gathered forward, their gradients reduce-scattered backward
    kv = 2 * _ACT * b * s * m.kv_hidden / tpf  # all cp shards together
    cpg = _cp_group(tp, cp, gpn)
    t_cp_f = pricer.many("allgather", kv, cpg)
    t_cp_b = pricer.many("reduce-scatter", kv, cpg)
    t_cp = np.maximum(0, t_cp_f - t_core) + np.maximum(0, t_cp_b - 2 * t_core) + np.where(rc == 2, np.maximum(0, t_cp_f - t_core), 0)
    t_layer = t_f + t_b + t_rc + t_tp + t_cp
    # stages
    first, mid, last = _stage_layers(m, a)
    hf, hb = _head_compute(m, hw, a)
    t_head = hf + hb
    ppf = pp.astype(float)
    msg = np.where(a["scatter_gather"].astype(bool) | sp, act / tpf, act)
    p2p = pricer.many("p2p", np.where(pp > 1, msg, 0.0), _pp_group(tp, cp, dp, gpn))
    hand = 2 * vpp * p2p  # forward send and backward send per chunk boundary
    c_first = first * t_layer + hand
    c_last = last * t_layer + t_head + hand
    c_mid = mid * t_layer + hand
    c_max = np.maximum(np.maximum(c_first, c_last), np.where(pp > 2, c_mid, 0))
    c_sum = np.where(pp == 1, m.layers * t_layer + t_head, c_first + c_last + np.maximum(pp - 2, 0) * c_mid)
    vf = vpp.astype(float)
    t_pipe = mcount * c_max + (c_sum - c_max) / vf
    compute_only = mcount * np.maximum(first * (t_f + t_b + t_rc), last * (t_f + t_b + t_rc) + t_head)
    # data parallelism
    lp = m.layer_params
    emb = m.embedding_params
    stage_params = np.maximum(first * lp + emb, last * lp + (emb if not m.tied else m.vocab * h)) / tpf
    stage_params = np.where(pp == 1, (m.layers * lp + emb + (0 if m.tied else m.vocab * h)) / tpf, stage_params)
    g = a["grad_bytes"].astype(float)
    zero = a["zero"]
    dpg = _dp_group(tp, cp, dp * 1, gpn)
    # context-parallel ranks hold the same weights: the gradient reduction spans dp x cp
    dpcp = dp * cp
    dpg = np.where((cp > 1)[..., None], _dp_group(tp, np.ones_like(cp), dpcp, gpn), dpg)
    gbytes = stage_params * g
    t_ar = pricer.many("allreduce", gbytes, dpg)
    t_rs = pricer.many("reduce-scatter", gbytes, dpg)
    t_agp = pricer.many("allgather", stage_params * 2.0, dpg)
    t_dp = np.where(zero == 0, t_ar, t_rs + t_agp)
    t_dp = np.where(zero == 3, t_dp + 2 * t_agp * mcount / np.maximum(mcount, 1), t_dp)  # ZeRO-3 re-gathers per pass
    t_dp = np.where(dpcp > 1, t_dp, 0.0)
    window = (t_b + t_rc) * np.maximum(first, last)
    dp_exposed = np.maximum(0.0, t_dp - a["dp_overlap"] * window)
    # tied embedding gradient between the first and last stage
    emb_bytes = m.vocab * h / tpf * g
    pair = np.stack([np.ones_like(pp), np.full_like(pp, 2), np.ones_like(pp)], -1)  # first and last stage: two nodes
    t_emb = pricer.many("allreduce", np.where((pp > 1) & m.tied, emb_bytes, 0.0), pair)
    # optimizer step
    shard = np.where(zero >= 1, stage_params / dpcp, stage_params)
    t_opt = ADAM_BYTES_PER_PARAM * shard / hw.memory_bandwidth
    time = t_pipe + dp_exposed + t_emb + t_opt
    # memory
    stored, working = layer_activation_bytes(m, b, tp, sp, cp, rc, a["flash"])
    inflight = np.minimum(mcount, ppf)
    inter = np.where(vpp > 1, 1 + (ppf - 1) / (ppf * vf), 1.0)
    act_first = first * stored * inflight * inter + np.where(rc == 2, working - stored, 0.0)
    act_first = act_first + (b * s / cp * h) * inflight / np.where(sp, tpf, 1.0)  # embedding dropout mask (1 B)
    out_layer = 4.0 * b * s / cp * h / tpf * (1 + m.vocab / h)
    act_last = last * stored + np.where(rc == 2, working - stored, 0.0) + out_layer
    act_last = np.where(pp == 1, act_first + out_layer, act_last)
    states = stage_params * state_bytes_per_param(zero, dpcp, g)
    acts = np.maximum(act_first, act_last)
    memory = states + acts
    fits = memory <= hw.memory
    ok = (mcount >= 1) & (np.abs(mcount - np.round(mcount)) < 1e-9)
    raw = np.where(ok, time, np.nan)
    out_time = raw if ignore_memory else np.where(fits, raw, np.inf)
    gbs = a["gbs"].astype(float)
    return {"time": out_time, "raw_time": raw, "compute": compute_only, "bubble": (c_sum - c_max) / vf,
            "tp_comm": mcount * t_tp * np.maximum(first, last), "cp_comm": mcount * t_cp * np.maximum(first, last),
            "pp_comm": mcount * hand, "dp_comm": t_dp, "dp_exposed": dp_exposed, "embedding_comm": t_emb,
            "optimizer": t_opt, "memory": memory, "states": states, "activations": acts, "fits": fits,
            "microbatches": mcount,
            "model_flops": gbs * iteration_flops(m, 1.0, "none"), "hardware_flops": _hw_flops(m, gbs, rc)}


def _hw_flops(m, gbs, rc):
    base = iteration_flops(m, 1.0, "none")
    sel = iteration_flops(m, 1.0, "selective")
    full = iteration_flops(m, 1.0, "full")
    return np.asarray(gbs, dtype=float) * np.choose(np.asarray(rc), [base, sel, full])


def evaluate_plan(m: TransformerShape, hw: Hardware, ignore_memory: bool = False, pricer: CommPricer | None = None,
                  gpus: int | None = None, who: str = "training", **plan) -> dict[str, float]:
    """:func:`evaluate` at one plan, checked first (:func:`check_plan`); scalars out.

    ``recompute`` may be a name of :data:`RECOMPUTE`.

    Raises
    ------
    ParameterError
        The plan cannot apply (one line naming the field).
    """
    rc = plan.get("recompute", 0)
    if isinstance(rc, str):
        if rc not in RECOMPUTE:
            raise ParameterError(f"{who}: recompute: expected one of {list(RECOMPUTE)}, got {rc!r}")
        plan["recompute"] = RECOMPUTE.index(rc)
    zero = int(plan.get("zero", 0))
    if zero not in ZERO_STAGES:
        raise ParameterError(f"{who}: zero: expected one of {list(ZERO_STAGES)}, got {zero}")
    p = Plans(**plan)
    check_plan(m, hw, int(p.tp), int(p.pp), int(p.dp), int(p.cp), int(p.mbs), int(p.gbs), int(p.vpp), gpus, who)
    r = evaluate(m, hw, p, pricer, ignore_memory)
    return {k: (bool(v) if k == "fits" else float(v)) for k, v in r.items()}

