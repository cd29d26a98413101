"""One training-time and memory model of a large transformer under Megatron-style parallelism.

Every technique that prices transformer training (and any third-party one) calls this module;
none keeps its own copy. Its parts: :mod:`suite.perf.training_inputs` (shape, plans, hardware,
constants), :mod:`suite.perf.training_compute` (FLOPs, kernel times),
:mod:`suite.perf.training_comm` (collectives), :mod:`suite.perf.training_memory` (states,
activations); this module composes them and re-exports their public names. Pure functions of numpy arrays: every field of a :class:`Plans` may be
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
  element, ``b a s^2 / (t cp)`` elements), with ALiBi the bias broadcast into the score buffer
  and read back by the QK GEMM (``2 + 2``, forward only); backward moves twice the forward
  bytes. An embedding layer norm adds ``2 e`` forward and ``4 e`` backward on the first stage.
  Flash attention (Dao et al. 2022) replaces the score kernels by one kernel priced by its FLOPs
  (forward 2, backward 5 GEMM-equivalents of ``2 s^2 d``) at the same curve.
* The LM head on the last stage (``2 n h V / t`` forward) and its fp32 cross-entropy
  (``3 x 4 n V / t`` bytes forward, ``2 x`` backward); the optimizer step streams
  :data:`ADAM_BYTES_PER_PARAM` per local parameter through HBM; with ``fp32_grad_copy`` each
  stage folds its bf16 gradients into the fp32 buffer after every micro-batch's backward,
  :data:`GRAD_FOLD_BYTES_PER_PARAM` per local parameter (DeepSpeed's ``BF16_Optimizer``).
* Recomputation re-runs, during the backward, the whole layer forward (``full``, its TP
  collectives too) or the attention core (``selective``, Korthikanti et al. 2022 §5).

Communication, all through :func:`suite.perf.network.collective_time` on the profile:

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
  reduce-scattered (all-reduced with ``fp32_grad_copy``: the buffer is not sharded) and the
  parameters all-gathered with the distributed optimizer / ZeRO 1-2
  (ZeRO-3 also all-gathers the parameters forward and backward per micro-batch set), over the
  strided DP group sharing the node's NICs with the other ``tp cp`` groups; ``dp_overlap`` of it
  is hidden behind the last micro-batch's backward (Megatron's ``--overlap-grad-reduce``),
  the rest exposed. The tied embedding's gradient is all-reduced between the first and last
  stage.

Pipeline schedule (Narayanan et al. SC'21 §2.2, eq. for the interleaved schedule in §2.2.2):
with ``c_s`` a stage's forward + backward time of one micro-batch (its TP and PP communication
included) and ``m = B / (dp b)`` micro-batches,
``T_pipe = m max_s c_s + (sum_s c_s - max_s c_s) / v`` (``c_s`` with the gradient fold); for balanced stages this is
``(m + (p - 1) / v) c``, the 1F1B time when ``v = 1``
(:func:`suite.perf.pipeline.pipeline_1f1b_unbalanced_time`). Step time
``T = T_pipe + exposed DP + embedding all-reduce + optimizer``.

Memory per GPU (the busiest of the first and the last stage), what the allocator hands out
(``torch.cuda.max_memory_allocated``): not the CUDA context, nor the caching allocator's reserve
that ``nvidia-smi`` shows beside it:

* model states after Rajbhandari et al. (ZeRO, SC'20 §3.1, ``K = 12``): ``(2 + g + 12) P_s``
  bytes, ``2 + g + 12 / dp`` with the distributed optimizer or ZeRO-1, ``2 + (g + 12) / dp``
  with ZeRO-2, ``(2 + g + 12) / dp`` with ZeRO-3 (``g`` = ``grad_bytes``, ``P_s`` the stage's
  parameters per GPU); ``fp32_grad_copy`` keeps the bf16 gradients beside the unsharded fp32
  buffer: ``2 + 2 + g + 12 / dp``;
* activations per layer and micro-batch, Korthikanti et al. 2022 eqs. (1)-(5) (Table 2):
  ``s b h (34 + 5 a s / h)`` bytes, with TP ``s b h (10 + 24 / t + 5 a s / (h t))``, with TP and
  SP ``s b h (34 / t + 5 a s / (h t))``; selective recomputation or flash attention drop the
  ``5 a s / h`` term; full recomputation keeps ``2 s b h`` (``/ t`` with SP) per layer plus one
  layer's working set; without dropout the masks (``2 s b h`` and ``a s^2 b``) go; ``s`` is
  ``s / cp`` under context parallelism. The first stage holds ``min(m, p)`` micro-batches
  (1F1B), times ``1 + (p - 1) / (p v)`` interleaved (§4.2.3 and Appendix); per micro-batch in
  flight the first stage also holds the input-embedding dropout mask ``s b h``, the embedding
  layer norm's input ``2 s b h`` and, with ``keep_stage_outputs``, the stage output ``2 s b h``
  (each ``/ t`` with SP); the last stage the output layer's ``4 s b h / t (1 + V / h)`` (§4.2.3).
  With ``fp32_grad_copy`` the fold after a backward is a second peak: one micro-batch fewer in
  flight, no rebuilt layer, and the fp32 copy of the largest local gradient (``4 V h / t`` B for
  the embedding) that ``update_hp_grads`` makes of one parameter at a time.

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
.. [DeepSpeed] Microsoft DeepSpeed, ``deepspeed/runtime/bf16_optimizer.py`` (``BF16_Optimizer``:
   unsharded fp32 gradient buffer, ``update_hp_grads``) and ``deepspeed/runtime/pipe/engine.py``
   (``_exec_backward_pass``: the fold after every micro-batch; ``pipe_buffers['outputs']``).
.. [Dao22] T. Dao et al., "FlashAttention", NeurIPS 2022 (no ``s^2`` tensors stored; the
   backward recomputes the scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from suite.errors import ParameterError
from suite.perf.training_comm import (CommPricer, cp_group, dp_group, pp_group, tp_collectives, tp_collectives_per_layer,
                                      tp_group)
from suite.perf.training_compute import (embedding_compute, hardware_flops, head_compute, head_flops, iteration_flops,
                                         layer_compute, layer_flops, layer_kernels)
from suite.perf.training_inputs import (ACT_BYTES, ADAM_BYTES_PER_PARAM, DEFAULT_GEMM_EFFICIENCY, GEMM_CURVE,
                                        GRAD_FOLD_BYTES_PER_PARAM, RECOMPUTE, ZERO_STAGES, Array, Hardware, Plans,
                                        TransformerShape, gemm_efficiency, hardware_of, shape_of)
from suite.perf.training_memory import (activation_terms, layer_activation_bytes, output_layer_bytes, stage_memory,
                                        state_bytes_per_param)

__all__ = [
    "RECOMPUTE", "ZERO_STAGES", "ADAM_BYTES_PER_PARAM", "GRAD_FOLD_BYTES_PER_PARAM", "DEFAULT_GEMM_EFFICIENCY",
    "GEMM_CURVE", "TransformerShape", "shape_of", "Plans", "Hardware", "hardware_of", "gemm_efficiency",
    "CommPricer", "evaluate", "evaluate_plan", "layer_kernels", "tp_collectives", "tp_collectives_per_layer",
    "layer_flops", "head_flops", "iteration_flops", "layer_activation_bytes", "activation_terms", "output_layer_bytes",
    "state_bytes_per_param", "check_plan", "ACT_BYTES",
]


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


# --------------------------------------------------------------------------- the steps of evaluate


def _stage_layers(m: TransformerShape, a: dict[str, Array]) -> tuple[Array, Array, Array]:
    """Layers on the first, a middle and the last stage (Megatron's ``ceil(l / p)``, or the
    embedding and head counted as one layer each with ``embed_as_layer``)."""
    pp = a["pp"]
    L = m.layers
    emb = a["embed_as_layer"].astype(bool)
    per_even = -(-L // pp)
    per_emb = -(-(L + 2) // pp)
    first = np.where(emb, np.maximum(per_emb - 1, 0), per_even)
    mid_emb = np.where(pp > 2, (L - 2 * first) / np.maximum(pp - 2, 1), 0)
    mid = np.where(emb, np.ceil(mid_emb), per_even)
    last = np.where(emb, L - first - mid * np.maximum(pp - 2, 0), L - per_even * (pp - 1))
    single = pp == 1
    first = np.where(single, L, first)
    last = np.where(single, L, np.maximum(last, 0))
    return first.astype(float), mid.astype(float), last.astype(float)


def _stage_params(m: TransformerShape, a: dict[str, Array], layers: tuple[Array, Array, Array]) -> tuple[Array, ...]:
    """Parameters per GPU of the first, a middle and the last stage (all the model when ``pp = 1``)."""
    first, mid, last = layers
    tp = a["tp"].astype(float)
    lp = m.layer_params
    whole = m.layers * lp + m.embedding_params + (0.0 if m.tied else m.head_params) + 2 * m.hidden
    single = a["pp"] == 1
    p_first = np.where(single, whole, first * lp + m.embedding_params) / tp
    p_last = np.where(single, whole, last * lp + m.head_params + 2 * m.hidden) / tp
    return p_first, mid * lp / tp, p_last


def _tp_time(m: TransformerShape, hw: Hardware, a: dict[str, Array], pricer: CommPricer) -> Array:
    """Exposed TP communication of one layer per micro-batch (s): 2 all-reduces (SP: 2 all-gathers
    and 2 reduce-scatters) per pass, 2 passes, 3 with full recomputation."""
    tp, rc = a["tp"].astype(np.int64), a["recompute"]
    act = ACT_BYTES * a["mbs"] * m.seq / a["cp"] * m.hidden  # the full activation of a micro-batch
    grp = tp_group(tp, hw.gpn)
    ops = {op: pricer.many(op, act, grp) for op in ("allreduce", "allgather", "reduce-scatter")}
    sp = a["sp"].astype(bool) & (tp > 1)
    each = np.where(sp, ops["allgather"] + ops["reduce-scatter"], ops["allreduce"])
    return np.asarray(each * tp_collectives_per_layer(rc) * (1 - a["tp_overlap"]))


def _cp_time(m: TransformerShape, hw: Hardware, a: dict[str, Array], pricer: CommPricer, t_core: Array) -> Array:
    """Exposed CP communication of one layer per micro-batch (s): K and V all-gathered forward (and
    when recomputed), their gradients reduce-scattered backward, each hidden behind the attention."""
    tp, cp, rc = a["tp"].astype(np.int64), a["cp"].astype(np.int64), a["recompute"]
    kv = 2 * ACT_BYTES * a["mbs"] * m.seq * m.kv_hidden / tp  # all cp shards together
    grp = cp_group(tp, cp, hw.gpn)
    fwd = np.maximum(0, pricer.many("allgather", kv, grp) - t_core)
    bwd = np.maximum(0, pricer.many("reduce-scatter", kv, grp) - 2 * t_core)
    return np.asarray(fwd + bwd + np.where(rc == 2, fwd, 0.0))


def _pipeline(m: TransformerShape, hw: Hardware, a: dict[str, Array], pricer: CommPricer,
              layers: tuple[Array, Array, Array], params: tuple[Array, ...], t_layer: Array) -> dict[str, Array]:
    """Per-micro-batch stage times ``c_s`` and the schedule [Narayanan21 §2.2]: ``c_max``,
    ``c_sum``, the pipeline time, the p2p hand-offs and the gradient fold of the critical stage."""
    first, mid, last = layers
    tp, pp, vpp = a["tp"].astype(np.int64), a["pp"].astype(np.int64), a["vpp"].astype(float)
    sp = a["sp"].astype(bool) & (tp > 1)
    act = ACT_BYTES * a["mbs"] * m.seq / a["cp"] * m.hidden
    msg = np.where(a["scatter_gather"].astype(bool) | sp, act / tp, act)
    p2p = pricer.many("p2p", np.where(pp > 1, msg, 0.0), pp_group(tp, a["cp"], a["dp"], hw.gpn))
    hand = 2 * a["vpp"] * p2p  # forward send and backward send per chunk boundary
    fold = [np.where(a["fp32_grad_copy"].astype(bool), GRAD_FOLD_BYTES_PER_PARAM * p / hw.memory_bandwidth, 0.0)
            for p in params]
    t_head, t_emb = head_compute(m, hw, a), embedding_compute(m, hw, a)
    c_first = first * t_layer + t_emb + hand + fold[0]
    c_mid = mid * t_layer + hand + fold[1]
    c_last = last * t_layer + t_head + hand + fold[2]
    c_one = m.layers * t_layer + t_head + t_emb + fold[0]
    c_max = np.where(pp == 1, c_one, np.maximum(np.maximum(c_first, c_last), np.where(pp > 2, c_mid, 0)))
    c_sum = np.where(pp == 1, c_one, c_first + c_last + np.maximum(pp - 2, 0) * c_mid)
    mcount = a["gbs"] / (a["dp"] * a["mbs"])
    return {"t_pipe": mcount * c_max + (c_sum - c_max) / vpp, "bubble": (c_sum - c_max) / vpp, "hand": hand,
            "t_head": t_head, "grad_fold": mcount * np.maximum(np.maximum(fold[0], fold[2]), fold[1])}


def _dp_time(m: TransformerShape, hw: Hardware, a: dict[str, Array], pricer: CommPricer, stage_params: Array,
             window: Array) -> tuple[Array, Array]:
    """The data-parallel gradient reduction (s) and its part not hidden behind the *window* of the
    last backward: all-reduce (ZeRO-0, or the unsharded buffer of ``fp32_grad_copy``) or
    reduce-scatter, then the bf16 parameters all-gathered (ZeRO >= 1; twice more per pass with
    ZeRO-3); over dp x cp ranks (context-parallel ranks hold the same weights)."""
    tp, cp, dp, zero = (a[k].astype(np.int64) for k in ("tp", "cp", "dp", "zero"))
    dpcp = dp * cp
    grp = np.where((cp > 1)[..., None], dp_group(tp, np.ones_like(cp), dpcp, hw.gpn), dp_group(tp, cp, dp, hw.gpn))
    gbytes = stage_params * a["grad_bytes"].astype(float)
    t_ar = pricer.many("allreduce", gbytes, grp)
    t_rs = pricer.many("reduce-scatter", gbytes, grp)
    t_agp = pricer.many("allgather", stage_params * ACT_BYTES, grp)
    t_dp = np.where(zero == 0, t_ar, np.where(a["fp32_grad_copy"].astype(bool), t_ar, t_rs) + t_agp)
    t_dp = np.where(zero == 3, t_dp + 2 * t_agp, t_dp)
    t_dp = np.where(dpcp > 1, t_dp, 0.0)
    return t_dp, np.maximum(0.0, t_dp - a["dp_overlap"] * window)


def _embedding_time(m: TransformerShape, a: dict[str, Array], pricer: CommPricer) -> Array:
    """The tied embedding's gradient all-reduced between the first and last stage (s)."""
    pp = a["pp"].astype(np.int64)
    nbytes = m.vocab * m.hidden / a["tp"] * a["grad_bytes"].astype(float)
    pair = np.stack([np.ones_like(pp), np.full_like(pp, 2), np.ones_like(pp)], -1)  # two nodes, one rank each
    return pricer.many("allreduce", np.where((pp > 1) & m.tied, nbytes, 0.0), pair)


def evaluate(m: TransformerShape, hw: Hardware, plans: Plans, pricer: CommPricer | None = None,
             ignore_memory: bool = False) -> dict[str, Array]:
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
        reduction), ``dp_exposed``, ``embedding_comm``, ``optimizer``, ``grad_fold`` (s),
        ``memory``, ``states``, ``activations`` (B per GPU, the busiest stage), ``fits`` (bool),
        ``microbatches``, ``model_flops`` (FLOPs per iteration without recomputation) and
        ``hardware_flops`` (with it; Narayanan's eq. (3) under full recomputation).
    """
    a = plans.arrays()
    pricer = pricer or CommPricer(hw.profile)
    mcount = a["gbs"] / (a["dp"] * a["mbs"])
    t_f, t_b, t_rc, t_core = layer_compute(m, hw, a)
    t_tp, t_cp = _tp_time(m, hw, a, pricer), _cp_time(m, hw, a, pricer, t_core)
    layers = _stage_layers(m, a)
    params = _stage_params(m, a, layers)
    pipe = _pipeline(m, hw, a, pricer, layers, params, t_f + t_b + t_rc + t_tp + t_cp)
    busiest = np.maximum(layers[0], layers[2])
    stage_params = np.maximum(np.maximum(params[0], params[2]), params[1])
    t_dp, dp_exposed = _dp_time(m, hw, a, pricer, stage_params, (t_b + t_rc) * busiest)
    t_emb = _embedding_time(m, a, pricer)
    shard = np.where(a["zero"] >= 1, stage_params / (a["dp"] * a["cp"]), stage_params)
    t_opt = ADAM_BYTES_PER_PARAM * shard / hw.memory_bandwidth
    mem = stage_memory(m, a, layers[0], layers[2], mcount, (params[0], params[2]))
    fits = mem.total <= hw.memory
    ok = (mcount >= 1) & (np.abs(mcount - np.round(mcount)) < 1e-9)
    raw = np.where(ok, pipe["t_pipe"] + dp_exposed + t_emb + t_opt, np.nan)
    compute = mcount * np.maximum(layers[0] * (t_f + t_b + t_rc), layers[2] * (t_f + t_b + t_rc) + pipe["t_head"])
    return {"time": raw if ignore_memory else np.where(fits, raw, np.inf), "raw_time": raw, "compute": compute,
            "bubble": pipe["bubble"], "tp_comm": mcount * t_tp * busiest, "cp_comm": mcount * t_cp * busiest,
            "pp_comm": mcount * pipe["hand"], "dp_comm": t_dp, "dp_exposed": dp_exposed, "embedding_comm": t_emb,
            "optimizer": t_opt, "grad_fold": pipe["grad_fold"], "memory": mem.total, "states": mem.states,
            "activations": mem.activations, "fits": fits, "microbatches": mcount,
            "model_flops": a["gbs"].astype(float) * iteration_flops(m, 1.0, "none"),
            "hardware_flops": hardware_flops(m, a["gbs"], a["recompute"])}


def evaluate_plan(m: TransformerShape, hw: Hardware, ignore_memory: bool = False, pricer: CommPricer | None = None,
                  gpus: int | None = None, who: str = "training", **plan: Any) -> dict[str, float]:
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
    i = {k: int(np.asarray(getattr(p, k))) for k in ("tp", "pp", "dp", "cp", "mbs", "gbs", "vpp")}
    check_plan(m, hw, i["tp"], i["pp"], i["dp"], i["cp"], i["mbs"], i["gbs"], i["vpp"], gpus, who)
    r = evaluate(m, hw, p, pricer, ignore_memory)
    return {k: (bool(v) if k == "fits" else float(v)) for k, v in r.items()}
