"""What the training model (:mod:`suite.perf.training`) reads: the transformer, the parallel plans
and the hardware, with the model's constants and their sources.

Split out of :mod:`suite.perf.training` (which re-exports every name here); see its docstring
for the model itself.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from suite.errors import ParameterError, ProfileError

__all__ = [
    "RECOMPUTE", "ZERO_STAGES", "ADAM_BYTES_PER_PARAM", "GRAD_FOLD_BYTES_PER_PARAM", "DEFAULT_GEMM_EFFICIENCY",
    "GEMM_CURVE", "ACT_BYTES", "Array", "TransformerShape", "shape_of", "Plans", "Hardware", "hardware_of",
    "gemm_efficiency",
]

#: a numpy array of any dtype (the model's plans, times and bytes)
Array = npt.NDArray[Any]

#: recomputation choices; index = the code in :class:`Plans` arrays
RECOMPUTE = ("none", "selective", "full")
#: 0: none; 1: optimizer states sharded (ZeRO-1, Megatron's distributed optimizer); 2: + gradients; 3: + parameters
ZERO_STAGES = (0, 1, 2, 3)
#: Adam step traffic per local parameter (B): read fp32 master weight, two moments and the fp32 gradient,
#: write the master weight, the moments and the bf16 copy (4 x 4 + 3 x 4 + 2 = 30; Megatron's fused Adam)
ADAM_BYTES_PER_PARAM = 30.0
#: HBM traffic per local parameter of folding the bf16 gradients into the fp32 buffer after every
#: micro-batch's backward (B): DeepSpeed's ``BF16_Optimizer.update_hp_grads`` runs
#: ``hp_grad.add_(lp_grad.to(float32))`` per parameter (``PipelineEngine._exec_backward_pass``
#: calls it after each micro-batch): read the bf16 gradient (2), write and read its fp32
#: temporary (4 + 4), read and write the fp32 buffer (4 + 4) = 18
GRAD_FOLD_BYTES_PER_PARAM = 18.0
#: the GEMM efficiency used when the device declares no ``gemm_bf16`` curve (an assumption, reported
#: as such by :func:`hardware_of`: ``Hardware.assumed``)
DEFAULT_GEMM_EFFICIENCY = 0.7
#: name of the device efficiency curve read
GEMM_CURVE = "gemm_bf16"
#: bytes per bf16/fp16 activation element
ACT_BYTES = 2.0


@dataclass(frozen=True)
class TransformerShape:
    """A decoder-only transformer's hyperparameters (or an encoder's: ``vocab = 0``).

    Attributes
    ----------
    layers, hidden, heads, seq, vocab : int
        ``l``, ``h``, ``a``, ``s`` (tokens per sequence), ``V`` (0: no embedding or head, an
        encoder priced layer by layer).
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
    d_head : float
        Head width (default ``hidden / heads``; Qwen3-like models set a wider one).
    alibi : bool
        ALiBi position bias (Press et al. 2022) added to the scores the way Megatron-DeepSpeed
        does it: the ``(b a, 1, s)`` bias is broadcast into the score buffer and the QK GEMM adds
        its product to it (``baddbmm``, ``beta = 1``): 2 B written and 2 B read per score element
        in the forward, nothing in the backward.
    embed_norm : bool
        A layer norm after the word embedding (BLOOM's ``--embed-layernorm``): its input is
        stored per micro-batch on the first stage (it sits outside the recomputed layers) and
        its two element-wise kernels run there.
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
    alibi: bool = False
    embed_norm: bool = False

    def __post_init__(self) -> None:
        if not self.d_head:  # hidden / heads, kept exact when it is not an integer (GPT-3 1.3B: 2048 / 24)
            object.__setattr__(self, "d_head", self.hidden / self.heads)
        if self.ffn == 0:
            object.__setattr__(self, "ffn", 4 * self.hidden)
        if self.kv_heads == 0:
            object.__setattr__(self, "kv_heads", self.heads)
        for f, low in (("layers", 1), ("hidden", 1), ("heads", 1), ("seq", 1), ("vocab", 0)):
            if int(getattr(self, f)) < low:
                raise ParameterError(f"training: model {self.name!r}: field {f}: expected >= {low}, "
                                     f"got {getattr(self, f)}")

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
        """Word and position embeddings (and the embedding layer norm)."""
        return float(self.vocab * self.hidden + self.positions * self.hidden + (2 * self.hidden if self.embed_norm else 0))

    @property
    def head_params(self) -> float:
        """Parameters the last stage holds for the LM head: ``V h`` (a copy of the tied embedding)."""
        return float(self.vocab * self.hidden)

    @property
    def params(self) -> float:
        """All parameters (the head counted once when tied)."""
        head = 0.0 if self.tied else self.head_params
        return self.layers * self.layer_params + self.embedding_params + head + 2 * self.hidden


def shape_of(table: Any) -> TransformerShape:
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
    fp32_grad_copy : bool
        DeepSpeed's ``BF16_Optimizer`` gradient layout (with ``grad_bytes = 4``): autograd's bf16
        gradients stay allocated beside an fp32 buffer that is not sharded (2 B per local
        parameter more), are folded into it after every micro-batch's backward
        (:data:`GRAD_FOLD_BYTES_PER_PARAM` of HBM traffic), and the data-parallel reduction
        all-reduces that whole buffer even with ZeRO-1 (each rank then steps its shard and the
        bf16 parameters are all-gathered). Megatron-LM's gradient-accumulation fusion writes the
        weight gradients straight into the fp32 ``main_grad`` and has none of the three.
    keep_stage_outputs : bool
        The pipeline keeps each in-flight micro-batch's stage output until its backward
        (DeepSpeed's ``PipelineEngine`` ``pipe_buffers['outputs']``): ``2 b s h`` B (``/ t`` with
        SP) more per micro-batch in flight on every stage but the last. Megatron-LM frees the
        output's data once it is sent (``deallocate_output_tensor``).
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
    fp32_grad_copy: object = False
    keep_stage_outputs: object = False

    def arrays(self) -> dict[str, Array]:
        """Every field as a numpy array, broadcast to one shape."""
        vals = {f.name: np.asarray(getattr(self, f.name)) for f in fields(self)}
        shape = np.broadcast_shapes(*(v.shape for v in vals.values()))
        return {k: np.broadcast_to(v, shape) for k, v in vals.items()}

    @property
    def gpus(self) -> Array:
        """``tp pp dp cp`` per plan."""
        return np.asarray(np.asarray(self.tp) * np.asarray(self.pp) * np.asarray(self.dp) * np.asarray(self.cp))


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
    profile: Any
    peak: float
    memory: float
    memory_bandwidth: float
    gpn: int
    curve: tuple[tuple[float, float], ...]
    assumed: bool = False

    def with_efficiency(self, efficiency: float) -> Hardware:
        """The same hardware with one flat GEMM efficiency (a sweep or a technique's override).

        Raises
        ------
        ParameterError
            *efficiency* outside (0, 1].
        """
        if not 0.0 < efficiency <= 1.0:
            raise ParameterError(f"training: efficiency: expected a fraction in (0, 1], got {efficiency}")
        return replace(self, curve=((1.0, float(efficiency)),), assumed=False)


def hardware_of(profile: Any, dtype: str = "bf16") -> Hardware:
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


def gemm_efficiency(hw: Hardware, flops: npt.ArrayLike) -> Array:
    """Achieved fraction of peak of one GEMM of *flops* FLOPs: the device curve, linear in
    ``log F`` between its points and flat outside them (as ``Device.efficiency_at``)."""
    f = np.maximum(np.asarray(flops, dtype=float), 1.0)
    xs = np.log([c[0] for c in hw.curve])
    ys = np.array([c[1] for c in hw.curve])
    return np.asarray(np.interp(np.log(f), xs, ys))
