"""Memory of the training model (:mod:`suite.perf.training`): model states after Rajbhandari et al.
(ZeRO, SC'20) and activations after Korthikanti et al. (2022), per GPU.

Split out of :mod:`suite.perf.training` (which re-exports :func:`state_bytes_per_param` and
:func:`layer_activation_bytes`; its docstring states the model and its sources).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from suite.perf.training_inputs import ACT_BYTES, Array, TransformerShape

__all__ = ["state_bytes_per_param", "activation_terms", "layer_activation_bytes", "output_layer_bytes", "StageMemory",
           "stage_memory", "largest_local_tensor"]


def state_bytes_per_param(zero: npt.ArrayLike, dp: npt.ArrayLike, grad_bytes: npt.ArrayLike = 2,
                          grad_copy: npt.ArrayLike = False) -> Array:
    """Model-state bytes per local parameter [ZeRO20 §3.1, §5]: weights 2, gradients ``g``,
    optimizer 12 (fp32 master, two Adam moments), sharded over ``dp`` by the ZeRO stage
    (1: the optimizer, 2: + gradients, 3: + weights).

    With *grad_copy* (DeepSpeed's ``BF16_Optimizer``, its own ZeRO-1): the bf16 gradients (2)
    stay beside the unsharded fp32 gradient buffer (``g``), only the optimizer is sharded:
    ``2 + 2 + g + 12 / dp`` for any ``zero >= 1``, ``2 + 2 + g + 12`` without ZeRO.
    """
    zero, dp, g = np.asarray(zero), np.asarray(dp, dtype=float), np.asarray(grad_bytes, dtype=float)
    plain = np.select([zero == 0, zero == 1, zero == 2], [2 + g + 12, 2 + g + 12 / dp, 2 + (g + 12) / dp],
                      (2 + g + 12) / dp)
    copy = 4 + g + np.where(zero >= 1, 12 / dp, 12.0)
    return np.asarray(np.where(np.asarray(grad_copy, dtype=bool), copy, plain))


def activation_terms(m: TransformerShape, tp: npt.ArrayLike = 1, sp: npt.ArrayLike = False) -> tuple[Array, Array]:
    """What one layer stores for its backward without recomputation or flash attention
    [Korthikanti22 §4, Table 2], split in two linear terms: bytes per token (``h`` times 34 with
    neither TP nor SP, ``10 + 24 / t`` with TP, ``34 / t`` with TP and SP) and bytes per attention
    score element (``a s^2`` of them per sequence; ``(2 + 3) / t``: the softmax output, the dropout
    mask and output). Without dropout its three masks go (2 B per token, 1 B per score); GQA
    stores smaller K and V; an MLP width other than ``4 h`` scales its 16 per-token bytes.

    Returns
    -------
    (per_token, per_score) : ndarray
        Bytes, broadcast over *tp* and *sp*; a layer stores
        ``tokens x per_token + scores x per_score``.
    """
    tp = np.asarray(tp, dtype=float)
    drop = 1.0 if m.dropout else 0.0
    lin = 34.0 - 2.0 * (1 - drop)  # two 1-byte dropout masks
    rep = 10.0 - 2.0 * (1 - drop)  # the part TP does not shard without SP (norm inputs, QKV / FC1 inputs, masks)
    lin = lin - (2 + 2) * (1 - m.kv_hidden / m.hidden)  # GQA: K (2) and V (2) scale by kv / h
    lin = lin + 16.0 * (m.ffn / (4.0 * m.hidden) * (1.5 if m.gated else 1.0) - 1.0)  # FC1 out / GeLU in, FC2 in
    spa = np.asarray(sp, dtype=bool) & (tp > 1)
    shard = np.where(spa, lin / tp, rep + (lin - rep) / tp)
    return np.asarray(m.hidden * shard), np.asarray((2.0 + 3.0 * drop) / tp)


def layer_activation_bytes(m: TransformerShape, mbs: npt.ArrayLike, tp: npt.ArrayLike = 1, sp: npt.ArrayLike = False,
                           cp: npt.ArrayLike = 1, recompute: npt.ArrayLike = 0,
                           flash: npt.ArrayLike = False) -> tuple[Array, Array]:
    """Bytes one layer keeps for the backward per micro-batch per GPU [Korthikanti22 §4, Table 2]
    (:func:`activation_terms` on ``b s / cp`` tokens and ``b a (s / cp)^2`` scores): all of it
    without recomputation, without the score terms with selective recomputation or flash
    attention, ``2 s b h`` (``/ t`` with SP) with full recomputation.

    Returns
    -------
    (stored, working) : ndarray
        What stays in memory between forward and backward, and the full layer's activations
        (the working set one layer rebuilds during full recomputation).
    """
    tp, cp = np.asarray(tp, dtype=float), np.asarray(cp, dtype=float)
    s = m.seq / cp
    tokens = s * np.asarray(mbs, dtype=float)
    per_token, per_score = activation_terms(m, tp, sp)
    no_attn = tokens * per_token
    full = no_attn + tokens * m.heads * s * per_score
    spa = np.asarray(sp, dtype=bool) & (tp > 1)
    rc = np.asarray(recompute)
    fl = np.asarray(flash, dtype=bool)
    keep_attn = (rc == 0) & ~fl
    stored = np.where(rc == 2, ACT_BYTES * tokens * m.hidden / np.where(spa, tp, 1.0), np.where(keep_attn, full, no_attn))
    return np.asarray(stored), np.asarray(np.where(fl, no_attn, full))


def output_layer_bytes(m: TransformerShape, tokens: npt.ArrayLike, tp: npt.ArrayLike = 1) -> Array:
    """What the output layer and the loss keep on the last stage for *tokens* tokens
    [Korthikanti22 §4.2.3]: ``4 tokens h / t (1 + V / h)`` B (the final norm's input and the fp32
    logits)."""
    return np.asarray(4.0 * np.asarray(tokens, dtype=float) * m.hidden / np.asarray(tp, dtype=float)
                      * (1 + m.vocab / m.hidden))


@dataclass(frozen=True)
class StageMemory:
    """Bytes per GPU of the busiest of the first and the last stage (arrays over the plans)."""

    states: Array
    activations: Array

    @property
    def total(self) -> Array:
        """States plus activations."""
        return np.asarray(self.states + self.activations)


def _first_stage_extra(m: TransformerShape, a: dict[str, Array], tokens_sharded: Array) -> Array:
    """Per micro-batch in flight on the first stage, what sits outside the layers' count: the
    embedding dropout mask (1 B per element), the embedding layer norm's input (2 B) and, when
    the pipeline keeps it, the stage output (2 B)."""
    per = tokens_sharded * m.hidden * ((1.0 if m.dropout else 0.0) + (ACT_BYTES if m.embed_norm else 0.0))
    keep = np.asarray(a["keep_stage_outputs"]).astype(bool) & (np.asarray(a["pp"]) > 1)
    return np.asarray(per + np.where(keep, ACT_BYTES * tokens_sharded * m.hidden, 0.0))


def stage_memory(m: TransformerShape, a: dict[str, Array], first: Array, last: Array, mcount: Array,
                 params: tuple[Array, Array]) -> StageMemory:
    """Memory per GPU of the first and last stage, the larger kept (see :mod:`suite.perf.training`).

    Parameters
    ----------
    a : dict
        :meth:`Plans.arrays`.
    first, last : ndarray
        Layers on the first and last stage.
    mcount : ndarray
        Micro-batches per iteration.
    params : (ndarray, ndarray)
        Parameters per GPU of the first and last stage.
    """
    tp, pp, cp = (np.asarray(a[k]).astype(float) for k in ("tp", "pp", "cp"))
    b, vpp, rc = (np.asarray(a[k]) for k in ("mbs", "vpp", "recompute"))
    sp = np.asarray(a["sp"]).astype(bool) & (tp > 1)
    stored, working = layer_activation_bytes(m, b, tp, sp, cp, rc, a["flash"])
    rebuild = np.where(rc == 2, working - stored, 0.0)
    inflight = np.minimum(mcount, pp)
    inter = np.where(vpp > 1, 1 + (pp - 1) / (pp * vpp), 1.0)
    tokens = b * m.seq / cp
    mb_first = first * stored * inter + _first_stage_extra(m, a, tokens / np.where(sp, tp, 1.0))
    out_layer = output_layer_bytes(m, tokens, tp)
    mb_last = np.where(pp == 1, mb_first + out_layer, last * stored + out_layer)
    act_first = mb_first * inflight + rebuild
    act_last = np.where(pp == 1, act_first + out_layer, mb_last + rebuild)
    copy = np.asarray(a["fp32_grad_copy"]).astype(bool)
    fold = 4.0 * largest_local_tensor(m, tp)  # the fp32 copy update_hp_grads makes of one gradient at a time
    act_first = np.where(copy, np.maximum(act_first, act_first - mb_first - rebuild + fold), act_first)
    act_last = np.where(copy, np.maximum(act_last, act_last - mb_last - rebuild + fold), act_last)
    per_param = state_bytes_per_param(a["zero"], np.asarray(a["dp"]) * np.asarray(a["cp"]), a["grad_bytes"], copy)
    first_total = params[0] * per_param + act_first
    last_total = params[1] * per_param + act_last
    use_first = first_total >= last_total
    return StageMemory(states=np.where(use_first, params[0], params[1]) * per_param,
                       activations=np.where(use_first, act_first, act_last))


def largest_local_tensor(m: TransformerShape, tp: npt.ArrayLike = 1) -> Array:
    """Elements of the largest parameter tensor a first or last stage holds per GPU: the word
    embedding / LM head ``V h / t`` or a layer's largest matrix (fused QKV ``h (q + 2 h_kv)``, the
    first MLP matrix ``h f`` (x2 gated), the second ``f h``), each split ``1 / t``."""
    layer = max(m.hidden * (m.q_hidden + 2 * m.kv_hidden), m.hidden * m.ffn * (2 if m.gated else 1))
    return np.asarray(max(float(m.vocab * m.hidden), float(layer)) / np.asarray(tp, dtype=float))
