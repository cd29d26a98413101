"""Transformer layer tables: published parameter counts, Narayanan FLOPs, Korthikanti activations."""

from __future__ import annotations

import pytest

from suite.errors import WorkloadError
from suite.workloads.transformer import (SPECS, TransformerSpec, activation_memory, narayanan_flops,
                                         training_flops, transformer)
from session_context import session_context

# Exact counts: Hugging Face ``sum(p.numel() for p in model.parameters())`` of the matching
# config (tied embeddings counted once for BERT/GPT-2/GPT-Neo; Llama untied).
EXACT = {
    "bert-base": 109_482_240, "bert-large": 335_141_888,
    "gpt2": 124_439_808, "gpt2-medium": 354_823_168, "gpt2-large": 774_030_080, "gpt2-xl": 1_557_611_200,
    "gpt-neo-125m": 125_198_592,
    "llama2-7b": 6_738_415_616, "llama2-13b": 13_015_864_320, "llama2-70b": 68_976_648_192,
    "llama3-8b": 8_030_261_248, "llama3-70b": 70_553_706_496, "llama3-405b": 405_853_388_800,
}
# Rounded figures from papers, with the tolerance each is rounded to (fixed by the rounding):
# Llama-2 paper/model card: 6.74B, 13.0B, 68.98B; Llama-3: 8.03B, 70.6B, 405.9B (half a unit
# in the last printed digit); GPT-3 Table 2.1 names (2 significant digits: 3%; 175B: 1%).
ROUNDED = {
    "llama2-7b": (6.74e9, 0.005e9), "llama2-13b": (13.0e9, 0.05e9), "llama2-70b": (68.98e9, 0.005e9),
    "llama3-8b": (8.03e9, 0.005e9), "llama3-70b": (70.6e9, 0.05e9), "llama3-405b": (405.9e9, 0.05e9),
}
GPT3 = {"gpt3-125m": 125e6, "gpt3-350m": 350e6, "gpt3-760m": 760e6, "gpt3-1.3b": 1.3e9, "gpt3-2.7b": 2.7e9,
        "gpt3-6.7b": 6.7e9, "gpt3-13b": 13e9, "gpt3-175b": 175e9}


@pytest.mark.parametrize("name,count", sorted(EXACT.items()))
def test_exact_parameter_counts(name, count):
    assert session_context().workload(name).params == count


@pytest.mark.parametrize("name,pub", sorted(ROUNDED.items()))
def test_llama_counts_match_the_published_rounded_figures(name, pub):
    value, half_unit = pub
    assert abs(session_context().workload(name).params - value) <= half_unit


@pytest.mark.parametrize("name,value", sorted(GPT3.items()))
def test_gpt3_family_within_rounding(name, value):
    rel = 0.01 if name == "gpt3-175b" else 0.03
    t = session_context().workload(name)
    assert t.params == pytest.approx(value, rel=rel)
    assert t.published_rel == rel


def test_gpt2_parameter_formula_by_hand():
    # 12 layers x (12h^2 + 13h) + V h + S h + 2h (final LN), h = 768, tied head
    h, L, V, S = 768, 12, 50257, 1024
    assert session_context().workload("gpt2").params == L * (12 * h * h + 13 * h) + V * h + S * h + 2 * h


def test_gqa_and_swiglu_shapes_llama2_70b():
    t = session_context().workload("llama2-70b")
    attn = next(l for l in t.layers if l.name == "block0.attn")
    # q, o: 8192x8192; k, v: 8 KV heads x 128 = 1024 wide; RMSNorm 8192
    assert attn.params == 2 * 8192 * 8192 + 2 * 8192 * 1024 + 8192
    assert attn.attrs["weights"] == ((8192, 8192), (1024, 8192), (1024, 8192), (8192, 8192))  # frozen: tuples
    mlp = next(l for l in t.layers if l.name == "block0.mlp")
    assert mlp.params == 3 * 8192 * 28672 + 8192
    assert t.layers[-1].name == "lm_head" and t.layers[-1].params == 32000 * 8192  # untied
    assert session_context().workload("gpt2").layers[-1].params == 0  # tied


def test_full_recompute_flops_equal_narayanan_eq3():
    # Narayanan et al. SC'21 eq. (3) for GPT-3 175B, B=1, s=2048 (matmul FLOPs, full recomputation)
    t = session_context().workload("gpt3-175b")
    ours = training_flops(t, "full")
    assert ours == pytest.approx(narayanan_flops(1, 2048, 96, 12288, 50257), rel=1e-12)
    # without recomputation: 3x forward; fwd+bwd ~ 6 N s (Kaplan) within the s/6h and head terms
    assert training_flops(t) == pytest.approx(3 * t.fwd_flops)
    assert training_flops(t) == pytest.approx(6 * t.params * 2048, rel=0.05)


def test_attention_flops_by_hand_small_model():
    sp = TransformerSpec("toy", layers=1, hidden=8, heads=2, vocab=10, seq=4, positions=4)
    t = transformer(sp)
    attn = t.layers[1]
    # weights 4 h^2 = 256 -> 2*s*256 = 2048; core 4 s^2 h = 4*16*8 = 512
    assert attn.fwd_flops == 2048 + 512
    assert attn.bwd_data_flops == 2048 + 1024 and attn.bwd_weight_flops == 2048
    mlp = t.layers[2]
    assert mlp.fwd_flops == 2 * 4 * (2 * 8 * 32)
    assert t.layers[-1].fwd_flops == 2 * 4 * 8 * 10  # lm head


def test_korthikanti_activation_memory_per_layer():
    # eq. (1): s b h (34 + 5 a s / h) bytes per layer, 16-bit, b = 1
    t = session_context().workload("gpt3-175b")
    s, h, a = 2048, 12288, 96
    block = [l for l in t.layers if l.kind in ("attention", "mlp")]
    per_layer = sum(l.attrs["saved_bytes"] for l in block) / 96
    assert per_layer == s * h * (34 + 5 * a * s / h)
    sel = sum(l.attrs["saved_bytes_selective"] for l in block) / 96
    assert sel == 34 * s * h
    full = sum(l.attrs["saved_bytes_full"] for l in block) / 96
    assert full == 2 * s * h
    assert activation_memory(t, "full") < activation_memory(t, "selective") < activation_memory(t, "none")
    with pytest.raises(WorkloadError, match="recompute"):
        activation_memory(t, "some")


def test_layer_order_and_shapes():
    t = session_context().workload("llama3-8b")
    names = [l.name for l in t.layers]
    assert names[0] == "embedding" and names[-2:] == ["final_norm", "lm_head"]
    assert len(names) == 1 + 2 * 32 + 2
    assert all(l.input_shape == (8192, 4096) for l in t.layers[1:-1])
    assert t.layers[-1].output_shape == (8192, 128256)
    bert = session_context().workload("bert-base")
    assert bert.layers[-1].name == "pooler" and "final_norm" not in [l.name for l in bert.layers]


def test_gpt_neo_local_attention_alternates():
    t = session_context().workload("gpt-neo-125m")
    spans = [l.attrs["attention_span"] for l in t.layers if l.kind == "attention"]
    assert spans == [2048, 256] * 6


def test_bad_spec_is_a_clear_error():
    with pytest.raises(WorkloadError, match="kv_heads"):
        TransformerSpec("bad", 2, 64, 8, vocab=10, seq=4, kv_heads=3)
    with pytest.raises(WorkloadError, match="positions"):
        transformer(SPECS["gpt2"], seq=4096)


def test_other_sequence_lengths_by_name():
    t = session_context().workload("llama2-7b@seq2048")
    assert t.name == "llama2-7b@seq2048" and t.input_shape == (2048,)
    assert t.params == EXACT["llama2-7b"]
    # matmul FLOPs of the blocks are linear in s, the attention core quadratic
    full, half = session_context().workload("llama2-7b"), t
    core = sum(l.attrs["core_flops"] for l in full.layers if l.kind == "attention")
    core_h = sum(l.attrs["core_flops"] for l in half.layers if l.kind == "attention")
    assert core == 4 * core_h
    assert full.fwd_flops - core == pytest.approx(2 * (half.fwd_flops - core_h))
    with pytest.raises(WorkloadError, match="unknown transformer"):
        session_context().workload("resnet-50@seq128")


def test_transformer_base_matches_vaswani_table3():
    # Vaswani et al. 2017 Table 3 "base": 65 x 10^6 parameters. By hand (d = 512, f = 2048,
    # V = 37000 shared BPE vocabulary, tied): attention 4d^2 + 4d + 2d (LN), FFN 2df + f + d + 2d;
    # 6 encoder blocks (attn + FFN), 6 decoder blocks (self-attn + cross-attn + FFN), V d, final LN 2d.
    d, f, V = 512, 2048, 37000
    attn, ffn = 4 * d * d + 4 * d + 2 * d, 2 * d * f + f + d + 2 * d
    t = session_context().workload("transformer-base")
    assert t.params == 6 * (attn + ffn) + 6 * (2 * attn + ffn) + V * d + 2 * d
    assert t.params == pytest.approx(65e6, rel=0.05)
    assert sum(1 for l in t.layers if l.name.endswith(".cross")) == 6
    assert [l.name for l in t.layers][-3:] == ["block11.mlp", "final_norm", "lm_head"]
