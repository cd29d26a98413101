"""Compute of the training model (:mod:`suite.perf.training`): FLOP counts of a transformer and
the time of its kernels per micro-batch per GPU.

Split out of :mod:`suite.perf.training` (which re-exports :func:`layer_flops`,
:func:`iteration_flops` and :func:`layer_kernels`; its docstring gives the counts and sources).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from suite.perf.training_inputs import ACT_BYTES, RECOMPUTE, Array, Hardware, TransformerShape, gemm_efficiency

__all__ = ["layer_flops", "head_flops", "iteration_flops", "hardware_flops", "layer_kernels", "layer_compute",
           "head_compute", "embedding_compute"]


def layer_flops(m: TransformerShape, seq: npt.ArrayLike | None = None) -> Array:
    """Forward FLOPs of one layer on one sequence of *seq* tokens (default ``m.seq``), matrix
    multiplications only, causal mask not discounted [Narayanan et al. SC'21 §5.1, generalised to
    GQA, gated MLPs and a head width ``d``]:
    ``2 s h (q + 2 h_kv) + 4 s^2 q + 2 s q h + 2 s h f (g + 1)`` with ``q = a d``, ``g`` = 2 gated
    else 1. An encoder layer (no mask) counts the same. Shape: that of *seq*."""
    s = np.asarray(m.seq if seq is None else seq, dtype=float)
    h, f, hk, q = m.hidden, m.ffn, m.kv_hidden, m.q_hidden
    return np.asarray(2.0 * s * h * (q + 2 * hk) + 4.0 * s * s * q + 2.0 * s * q * h
                      + 2.0 * s * h * f * ((2 if m.gated else 1) + 1))


def head_flops(m: TransformerShape, seq: npt.ArrayLike | None = None) -> Array:
    """Forward FLOPs of the LM head on one sequence: ``2 s h V``."""
    s = np.asarray(m.seq if seq is None else seq, dtype=float)
    return np.asarray(2.0 * s * m.hidden * m.vocab)


def _attention_core_flops(m: TransformerShape, seq: npt.ArrayLike | None = None) -> Array:
    s = np.asarray(m.seq if seq is None else seq, dtype=float)
    return np.asarray(4.0 * s * s * m.q_hidden)


def iteration_flops(m: TransformerShape, gbs: float, recompute: int | str = "full") -> float:
    """FLOPs of one iteration over all GPUs: per layer ``3 F_l`` (:func:`layer_flops`: forward,
    backward twice) plus the recomputed forward (``F_l`` full, the ``4 s^2 q`` attention core
    selective), the LM head ``3 x 2 s h V``; times ``gbs``.
    With ``recompute="full"`` and a GPT layer this is Narayanan et al.'s eq. (3),
    ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))``; with ``"none"`` the model FLOPs of Korthikanti et
    al. §6."""
    rc = RECOMPUTE.index(recompute) if isinstance(recompute, str) else int(recompute)
    fl = float(layer_flops(m))
    extra = (0.0, float(_attention_core_flops(m)), fl)[rc]
    return float(gbs) * (m.layers * (3 * fl + extra) + 3 * float(head_flops(m)))


def hardware_flops(m: TransformerShape, gbs: npt.ArrayLike, rc: npt.ArrayLike) -> Array:
    """:func:`iteration_flops` per plan: *gbs* and the recomputation codes *rc* arrays."""
    per = [iteration_flops(m, 1.0, r) for r in range(len(RECOMPUTE))]
    return np.asarray(np.asarray(gbs, dtype=float) * np.choose(np.asarray(rc), per))


def _gemm_time(hw: Hardware, flops: npt.ArrayLike, size: npt.ArrayLike) -> Array:
    return np.asarray(flops) / (hw.peak * gemm_efficiency(hw, size))


def _score_bytes(m: TransformerShape, a: dict[str, Array]) -> tuple[Array, Array]:
    """Forward and backward time (s) of the non-flash score kernels: scale-mask-softmax (2 + 2 B
    per element), attention dropout (2 + 2 + 1), ALiBi's bias written and read (2 + 2, forward
    only); backward twice the softmax and dropout bytes."""
    tp, cp, b = (np.asarray(a[k], dtype=float) for k in ("tp", "cp", "mbs"))
    flash = np.asarray(a["flash"]).astype(bool)
    elements = np.where(flash, 0.0, b * m.heads * m.seq * (m.seq / cp) / tp)
    drop = 1.0 if m.dropout else 0.0
    fwd = elements * (4.0 + 5.0 * drop + (4.0 if m.alibi else 0.0))
    return fwd, 2.0 * elements * (4.0 + 5.0 * drop)


def layer_kernels(m: TransformerShape, hw: Hardware, a: dict[str, Array]) -> dict[str, tuple[Array, Array]]:
    """Forward and backward time (s) of each compute kernel group of one layer, per micro-batch per
    GPU, in execution order: ``qkv`` (first layer norm + QKV GEMM), ``core`` (scores, softmax,
    dropout, context; or one flash kernel), ``proj`` (output projection + bias-dropout-residual),
    ``fc1`` (second layer norm + first MLP GEMM + bias-GeLU), ``fc2`` (second MLP GEMM +
    bias-dropout-residual). Values are ``(forward, backward)`` arrays broadcast over the plans *a*
    (:meth:`Plans.arrays`); see :mod:`suite.perf.training` for the counts."""
    tp, cp, b = (np.asarray(a[k], dtype=float) for k in ("tp", "cp", "mbs"))
    h, f, hk, q = m.hidden, m.ffn, m.kv_hidden, m.q_hidden
    n = b * m.seq / cp
    g = 2.0 if m.gated else 1.0
    bw = hw.memory_bandwidth
    flash = np.asarray(a["flash"]).astype(bool)
    e = ACT_BYTES * np.where(np.asarray(a["sp"]).astype(bool) & (tp > 1), n / tp, n) * h  # one hidden state (B)
    ln, bda = 2 * e, (3.0 + (0.5 if m.dropout else 0.0)) * e
    gelu = 2 * ACT_BYTES * n * f * g / tp
    core = b * np.asarray(_attention_core_flops(m)) / (tp * cp)  # scores + context FLOPs
    t_core = _gemm_time(hw, core, 2.0 * m.seq * (m.seq / cp) * m.d_head)  # one head's GEMM: the batched kernel's unit
    soft_f, soft_b = _score_bytes(m, a)
    out: dict[str, tuple[Array, Array]] = {}
    for name, fl, el in (("qkv", 2 * n * h * (q + 2 * hk) / tp, ln), ("proj", 2 * n * q * h / tp, bda),
                         ("fc1", 2 * n * h * f * g / tp, ln + gelu), ("fc2", 2 * n * f * h / tp, bda)):
        t = _gemm_time(hw, fl, fl)
        out[name] = (t + el / bw, 2 * t + 2 * el / bw)
        if name == "qkv":
            out["core"] = (t_core + soft_f / bw, np.where(flash, 2.5, 2.0) * t_core + soft_b / bw)
    return out


def layer_compute(m: TransformerShape, hw: Hardware, a: dict[str, Array]) -> tuple[Array, Array, Array, Array]:
    """Forward, backward and recomputed compute of one layer per micro-batch per GPU (s), without
    communication (the sums of :func:`layer_kernels`), and the attention core's forward time."""
    k = layer_kernels(m, hw, a)
    t_f = np.asarray(sum(v[0] for v in k.values()))
    t_b = np.asarray(sum(v[1] for v in k.values()))
    rc = a["recompute"]
    t_rc = np.where(rc == 2, t_f, np.where(rc == 1, k["core"][0], 0.0))
    return t_f, t_b, t_rc, k["core"][0]


def head_compute(m: TransformerShape, hw: Hardware, a: dict[str, Array]) -> Array:
    """Forward + backward time (s) of the LM head and its fp32 cross-entropy per micro-batch per
    GPU: the GEMM ``2 n h V / t`` (backward twice) and ``3 x 4 n V / t`` bytes of fp32 logits
    forward, ``2 x 4 n V / t`` backward."""
    tp, cp, b = (np.asarray(a[k], dtype=float) for k in ("tp", "cp", "mbs"))
    n = b * m.seq / cp
    fl = 2 * n * m.hidden * m.vocab / tp
    ce = 4.0 * n * m.vocab / tp  # fp32 logits
    t = _gemm_time(hw, fl, fl)
    return np.asarray(3 * t + 5 * ce / hw.memory_bandwidth)


def embedding_compute(m: TransformerShape, hw: Hardware, a: dict[str, Array]) -> Array:
    """Forward + backward time (s) of the embedding layer norm on the first stage per micro-batch
    (0 without one): ``2 e`` bytes forward, ``4 e`` backward, ``e = 2 n h`` (``/ t`` with SP)."""
    if not m.embed_norm:
        return np.zeros(np.shape(a["tp"]))
    tp, cp, b = (np.asarray(a[k], dtype=float) for k in ("tp", "cp", "mbs"))
    n = b * m.seq / cp
    e = ACT_BYTES * np.where(np.asarray(a["sp"]).astype(bool) & (tp > 1), n / tp, n) * m.hidden
    return np.asarray(6 * e / hw.memory_bandwidth)
