"""DeepSeek-V2-Lite as a layer table (the zoo has no MLA / MoE model), and the decode shape the model reads.

DeepSeek-V2-Lite [DSV2]: 27 layers, hidden 2048, 16 attention heads with multi-head latent
attention (MLA: no query compression in the Lite model; KV compressed to a rank-512 latent plus a
64-wide decoupled RoPE key; per head 128 no-RoPE + 64 RoPE query/key dimensions, 128 value
dimensions), the first layer a dense SwiGLU FFN of 10944, every other layer a DeepSeekMoE layer of
2 shared + 64 routed experts of width 1408 with 6 routed experts active per token, vocabulary
102400, untied embedding and LM head, RMSNorm.

Parameter counts (weights only; RMSNorm scales included):

* MLA per layer: ``q_proj`` h x 16(128+64) = 2048 x 3072, ``kv_a_proj`` h x (512+64),
  ``kv_a_norm`` 512, ``kv_b_proj`` 512 x 16(128+128), ``o_proj`` 16*128 x h;
* dense FFN: ``3 h f``; MoE: ``(64 + 2) * 3 h 1408`` + router ``64 h``;
* embedding and LM head ``102400 h`` each; two RMSNorms per layer and a final one.

Total 15,706,498,048 (the model card's 15.7B). Activated per token (6 routed + 2 shared experts,
the input embedding a lookup, so not counted) 2,451,448,832 (the card's 2.4B).

References
----------
.. [DSV2] DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language
   Model", arXiv:2405.04434 (2024), Sec. 2.1 (MLA), Sec. 2.2 (DeepSeekMoE), Appendix B
   (DeepSeek-V2-Lite: 15.7B total, 2.4B activated); Hugging Face model card and config of
   ``deepseek-ai/DeepSeek-V2-Lite``.
"""

from __future__ import annotations

from suite.api import Layer, LayerTable

__all__ = ["DSV2_LITE", "deepseek_v2_lite", "active_params", "WORKLOAD_NAME"]

WORKLOAD_NAME = "clusterfusion-deepseek-v2-lite"

#: DeepSeek-V2-Lite hyperparameters [DSV2, Appendix B; HF config].
DSV2_LITE = {
    "layers": 27, "hidden": 2048, "heads": 16, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "dense_ffn": 10944, "first_dense_layers": 1,
    "moe_ffn": 1408, "shared_experts": 2, "routed_experts": 64, "active_experts": 6, "vocab": 102400,
    "seq": 4096, "published_params": 15_700_000_000, "published_active": 2_400_000_000,
}


def deepseek_v2_lite(seq: int = 4096) -> LayerTable:
    """The DeepSeek-V2-Lite layer table (16-bit weights, per-sequence figures for *seq* tokens).

    Each ``block{i}.attn`` (kind ``attention``) carries ``attrs["mla"]`` with the MLA dimensions and
    ``attrs["weights"]`` with its matrices; ``block{i}.mlp`` is kind ``mlp`` (layer 0, dense) or
    ``moe`` with ``attrs`` ``experts``, ``shared_experts``, ``active_experts`` and ``expert_ffn``.
    FLOPs count ``2 x s x`` the weights a token uses (activated experts only).

    Returns
    -------
    suite.workloads.LayerTable
        Named :data:`WORKLOAD_NAME`; ``published_params`` 15.7e9 (the model card's rounding).
    """
    c = DSV2_LITE
    h, a = c["hidden"], c["heads"]
    dn, dr, dv, r = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"], c["kv_lora_rank"]
    s, d = seq, 2
    weights = ((h, a * (dn + dr)), (h, r + dr), (r, a * (dn + dv)), (a * dv, h))
    attn_params = sum(x * y for x, y in weights) + r + h  # + kv_a_norm + input RMSNorm
    layers = [Layer("embedding", "embedding", (s,), (s, h), params=c["vocab"] * h, activation_bytes=s * h * d,
                    attrs={"vocab": c["vocab"]})]
    expert = 3 * h * c["moe_ffn"]
    for i in range(c["layers"]):
        aw = sum(x * y for x, y in weights)
        layers.append(Layer(
            f"block{i}.attn", "attention", (s, h), (s, h), params=attn_params,
            fwd_flops=2.0 * s * aw + 2.0 * s * s * a * (dn + dr + dv), activation_bytes=s * h * d,
            attrs={"heads": a, "kv_heads": a, "d_head": dn + dr, "weights": weights,
                   "mla": {"kv_lora_rank": r, "qk_nope_head_dim": dn, "qk_rope_head_dim": dr, "v_head_dim": dv}}))
        if i < c["first_dense_layers"]:
            f = c["dense_ffn"]
            layers.append(Layer(f"block{i}.mlp", "mlp", (s, h), (s, h), params=3 * h * f + h,
                                fwd_flops=2.0 * s * 3 * h * f, activation_bytes=s * h * d,
                                attrs={"mlp": "swiglu", "ffn": f, "weights": ((f, h), (f, h), (h, f))}))
        else:
            e, sh, k = c["routed_experts"], c["shared_experts"], c["active_experts"]
            params = (e + sh) * expert + e * h + h
            layers.append(Layer(f"block{i}.mlp", "moe", (s, h), (s, h), params=params,
                                fwd_flops=2.0 * s * ((k + sh) * expert + e * h), activation_bytes=s * h * d,
                                attrs={"mlp": "swiglu", "experts": e, "shared_experts": sh, "active_experts": k,
                                       "expert_ffn": c["moe_ffn"], "router": (e, h)}))
    layers.append(Layer("final_norm", "norm", (s, h), (s, h), params=h, activation_bytes=s * h * d))
    layers.append(Layer("lm_head", "fc", (s, h), (s, c["vocab"]), params=c["vocab"] * h,
                        fwd_flops=2.0 * s * c["vocab"] * h, activation_bytes=s * c["vocab"] * d,
                        grad_shape=(c["vocab"], h)))
    return LayerTable(
        name=WORKLOAD_NAME, kind="transformer",
        source="DeepSeek-AI 2024, DeepSeek-V2 (arXiv:2405.04434) Appendix B; HF deepseek-ai/DeepSeek-V2-Lite config",
        description="DeepSeek-V2-Lite: 27 layers, hidden 2048, 16 MLA heads (KV rank 512, RoPE 64), "
                    "1 dense FFN (10944) then DeepSeekMoE (2 shared + 64 routed experts of 1408, 6 active)",
        layers=tuple(layers), input_shape=(s,), dtype_bytes=d, published_params=c["published_params"])


def active_params(table: LayerTable) -> int:
    """Parameters a token activates: attention, dense FFN, shared + active routed experts, router,
    norms and the LM head (the input embedding is a row lookup, not counted) [DSV2 Appendix B]."""
    n = 0
    for l in table.layers:
        if l.kind == "embedding":
            continue
        if l.kind == "moe":
            a = l.attrs
            h = l.input_shape[-1]
            n += (a["active_experts"] + a["shared_experts"]) * 3 * h * a["expert_ffn"] + a["experts"] * h + h
        else:
            n += l.params
    return n
