"""DHelix's extra workloads: the TWIST blog's Qwen3-like dense models.

* ``dhelix-qwen3-14b-like``: the blog's Fig. 2 model (TWIST blog, "Introducing TWIST", USTC-MLSys
  2026): 40 layers, hidden 5120, FFN 17408, 40 heads, 8 KV heads, head size 128, no RoPE and no
  QK-norm (neither changes the GEMM FLOPs). Built at seq 8192 (the blog's run).
* ``dhelix-qwen3-32b-like``: the blog's H800 table model: hidden 5120, FFN 25600, 64 heads, 8 KV
  heads. ASSUMPTION: the blog gives neither the layer count nor the head size; Qwen3-32B's
  published configuration has 64 layers and head size 128 (so ``heads * d_head = 8192 != hidden``),
  taken here and labelled. Built at seq 4096 (the blog's 4K rows; the model rebuilds it at 8K).

Both: SwiGLU MLP, RMSNorm, no biases, no dropout, untied embeddings and Qwen3's published
vocabulary of 151,936 tokens (ASSUMPTION: the blog does not state the vocabulary).
"""

from __future__ import annotations

import functools

from suite.api import TransformerSpec, transformer

__all__ = ["SPECS", "all_workloads", "QWEN3_VOCAB"]

QWEN3_VOCAB = 151_936
_BLOG = "TWIST blog (USTC-MLSys, 2026), Fig. 2 / H800 table; secondary (authors' blog)"


def _qwen(name, layers, ffn, heads, seq, note):
    return TransformerSpec(
        name=name, layers=layers, hidden=5120, heads=heads, kv_heads=8, ffn=ffn, d_head=128, vocab=QWEN3_VOCAB,
        seq=seq, mlp="swiglu", norm="rmsnorm", tied=False, qkv_bias=False, out_bias=False, mlp_bias=False,
        dropout=False, source=f"{_BLOG}; {note}")


SPECS = {
    "dhelix-qwen3-14b-like": _qwen("dhelix-qwen3-14b-like", 40, 17408, 40, 8192,
                                   "40 layers, hidden 5120, FFN 17408, 40 heads, 8 KV heads, head 128 (blog); "
                                   "vocab 151936 (Qwen3, assumption)"),
    "dhelix-qwen3-32b-like": _qwen("dhelix-qwen3-32b-like", 64, 25600, 64, 4096,
                                   "hidden 5120, FFN 25600, 64 heads, 8 KV heads (blog); 64 layers and head 128 "
                                   "from Qwen3-32B's published config (assumption); vocab 151936 (assumption)"),
}


@functools.lru_cache(maxsize=None)
def all_workloads():
    """The layer tables of :data:`SPECS` (built once)."""
    return [transformer(s) for s in SPECS.values()]
