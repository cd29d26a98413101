"""Transformer layer tables built from hyperparameters (BERT, GPT-2, GPT-3, GPT-Neo, Llama-2/3).

One :class:`TransformerSpec` (layers, hidden size, heads, KV heads, MLP kind and width, vocabulary,
sequence length, norms, biases, tied embeddings) gives a :class:`TransformerTable` whose layers are,
in forward order: ``embedding``, per block ``block{i}.attn`` (kind ``attention``: its norm, the
Q/K/V/output projections and the attention core) and ``block{i}.mlp`` (kind ``mlp``: its norm and
the MLP), ``final_norm`` (absent in post-LN BERT), then ``lm_head`` (kind ``fc``) or, for BERT,
``pooler``. Figures are per sequence (one sample = ``seq`` tokens), 16-bit (``dtype_bytes = 2``).

Formulas
--------
Parameters (``h`` hidden, ``hq = heads*d_head``, ``hkv = kv_heads*d_head``, ``f`` MLP width,
``V`` vocabulary, ``S`` positions): attention ``h*hq + 2*h*hkv + hq*h`` (+ biases), MLP
``2*h*f`` (GeLU, + biases) or ``3*h*f`` (gated SwiGLU), norm ``2h`` (LayerNorm) or ``h``
(RMSNorm), embedding ``V*h`` (+ ``S*h`` learned positions, + token types for BERT), LM head
``V*h`` unless tied to the embedding (then 0: counted once, in the embedding).

FLOPs (matrix multiplications only, as Narayanan et al. SC'21 Section 5.1 count them; norms,
softmax, biases and the embedding gather are not counted): a weight matrix of ``W`` entries costs
``2*s*W`` forward; the attention core (``Q K^T`` and ``softmax * V``) ``4*s*s_att*hq`` with
``s_att = s`` (``min(s, window)`` for local attention; the causal mask is not discounted, as in
Narayanan's formula). Backward: data gradient ``2*s*W`` and weight gradient ``2*s*W`` per weight
matrix, and ``8*s*s_att*hq`` (data gradients only) for the core, i.e. backward = 2 x forward.
With full activation recomputation each block's forward is run again in the backward pass
(``attrs["recompute_flops_full"] = fwd_flops`` of the block; the LM head is not recomputed),
which makes the per-iteration total exactly Narayanan et al.'s eq. (3):
``96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` for a GPT (``f = 4h``, ``hkv = hq = h``).
Selective recomputation (Korthikanti et al.) recomputes only the attention core:
``attrs["recompute_flops_selective"] = 4*s*s_att*hq``.

Activation memory kept for the backward pass, bytes per sequence (Korthikanti et al. 2022,
Section 4.1, eq. (1): ``s b h (34 + 5 a s / h)`` per layer with 16-bit activations and 1-byte
dropout masks, b = 1, no parallelism), generalised to GQA, SwiGLU and dropout-free models:

* attention: ``2sh`` (norm input) + ``2sh`` (QKV input) + ``2s(hq + hkv)`` (Q, K) + ``2 a s s_att``
  (softmax output) [+ ``a s s_att`` (dropout mask) + ``2 a s s_att`` (dropout output) with
  attention dropout] + ``2 s hkv`` (V) + ``2 s hq`` (projection input) [+ ``s h`` dropout mask];
* MLP: ``2sh`` (norm input) + ``2sh`` (first matmul input) + GeLU ``4sf`` (GeLU input, second
  matmul input) or SwiGLU ``6sf`` (gate, up, product) [+ ``s h`` dropout mask].

For GPT-3 (``f = 4h``, dropout) the two add up to Korthikanti's ``34sh + 5as^2``.
``attrs["saved_bytes"]`` holds that figure per layer; ``saved_bytes_selective`` drops the
``a s s_att`` terms (selective recomputation); ``saved_bytes_full`` keeps only each block's input,
``2sh`` (full recomputation). ``activation_bytes`` keeps the table convention: the layer's output
(``2sh``; the logits for the LM head).

References
----------
.. [1] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
   Megatron-LM", SC'21, Section 5.1, eq. (3).
.. [2] V. Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
   arXiv:2205.05198 (MLSys 2023), Section 4.1, eq. (1), Sections 4.2-4.3.
.. [3] T. Brown et al., "Language Models are Few-Shot Learners", NeurIPS 2020, Table 2.1.
.. [4] A. Radford et al., "Language Models are Unsupervised Multitask Learners", 2019, Table 2.
.. [5] J. Devlin et al., "BERT", NAACL 2019, Section 3.
.. [6] H. Touvron et al., "Llama 2", arXiv:2307.09288, Table 1 and Section 2.2 (GQA for 70B).
.. [7] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783, Table 3.
.. [8] S. Black et al., GPT-Neo (EleutherAI, 2021), model config ``gpt-neo-125M``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from suite.errors import WorkloadError
from suite.workloads.types import Layer, LayerTable

__all__ = ["TransformerSpec", "TransformerTable", "transformer", "SPECS", "activation_memory", "encoder_decoder",
           "ENCODER_DECODER", "TRANSFORMER_BASE",
           "training_flops", "narayanan_flops"]


@dataclass(frozen=True)
class TransformerSpec:
    """Hyperparameters of a decoder (or BERT encoder) stack.

    Attributes
    ----------
    layers, hidden, heads : int
    kv_heads : int or None
        Key/value heads (GQA); None = ``heads`` (multi-head attention).
    ffn : int or None
        MLP width ``f``; None = ``4 * hidden``.
    mlp : {"gelu", "swiglu"}
    norm : {"layernorm", "rmsnorm"}
    vocab, seq : int
        Vocabulary and the sequence length the table is built for.
    positions : int
        Learned position embeddings (0 for rotary).
    type_vocab : int
        BERT token-type embeddings.
    tied : bool
        LM head shares the embedding matrix.
    qkv_bias, out_bias, mlp_bias : bool
    dropout : bool
        Dropout in attention and after projections (counts 1-byte masks in activation memory).
    pre_norm : bool
        Pre-LN (GPT, Llama: a final norm follows the stack) or post-LN (BERT: an embedding norm).
    head : {"lm", "pooler"}
    local_window, local_every : int
        GPT-Neo: every ``local_every``-th layer (odd layers) attends within ``local_window`` tokens.
    """

    name: str
    layers: int
    hidden: int
    heads: int
    vocab: int
    seq: int
    kv_heads: int | None = None
    ffn: int | None = None
    d_head: int | None = None
    mlp: str = "gelu"
    norm: str = "layernorm"
    positions: int = 0
    type_vocab: int = 0
    tied: bool = True
    qkv_bias: bool = True
    out_bias: bool = True
    mlp_bias: bool = True
    dropout: bool = True
    pre_norm: bool = True
    head: str = "lm"
    local_window: int = 0
    local_every: int = 0
    source: str = ""
    published_params: int | None = None
    published_rel: float = 0.0  # tolerance of the published figure (0 = exact)
    published_note: str = ""

    def __post_init__(self) -> None:
        for f_ in ("layers", "hidden", "heads", "vocab", "seq"):
            if getattr(self, f_) <= 0:
                raise WorkloadError(f"transformer {self.name}: {f_} must be > 0, given {getattr(self, f_)}")
        if self.mlp not in ("gelu", "swiglu"):
            raise WorkloadError(f"transformer {self.name}: mlp must be 'gelu' or 'swiglu', given {self.mlp!r}")
        if self.norm not in ("layernorm", "rmsnorm"):
            raise WorkloadError(f"transformer {self.name}: norm must be 'layernorm' or 'rmsnorm', given {self.norm!r}")
        if self.heads % self.kvh or (self.kvh != self.heads and self.hq % self.heads):
            raise WorkloadError(f"transformer {self.name}: kv_heads={self.kvh} must divide heads={self.heads}")

    @property
    def kvh(self) -> int:
        return self.kv_heads or self.heads

    @property
    def hq(self) -> int:
        """Width of the queries (and of the attention output): ``heads * d_head``, or ``hidden``
        when ``d_head`` is not given."""
        return self.heads * self.d_head if self.d_head else self.hidden

    @property
    def hkv(self) -> int:
        """Width of the keys and of the values: ``kv_heads * hq / heads``."""
        return self.hq * self.kvh // self.heads

    @property
    def dh(self) -> float:
        return self.hq / self.heads

    @property
    def f(self) -> int:
        return self.ffn or 4 * self.hidden

    @property
    def norm_params(self) -> int:
        return 2 * self.hidden if self.norm == "layernorm" else self.hidden


@dataclass(frozen=True)
class TransformerTable(LayerTable):
    """A :class:`LayerTable` with the hyperparameters it was built from (``spec``, a dict)."""

    spec: dict[str, Any] = field(default_factory=dict)
    published_rel: float = 0.0


def transformer(spec: TransformerSpec, seq: int | None = None) -> TransformerTable:
    """Build the layer table of ``spec`` for sequences of ``seq`` tokens (default ``spec.seq``).

    Returns
    -------
    TransformerTable
        Layers ``embedding``, ``block{i}.attn``, ``block{i}.mlp`` (i = 0..layers-1),
        ``final_norm`` (pre-LN models), ``lm_head`` or ``pooler``; figures per sequence.

    Raises
    ------
    WorkloadError
        Inconsistent hyperparameters (e.g. ``kv_heads`` not dividing ``heads``) or ``seq <= 0``.
    """
    sp = spec
    s = int(seq if seq is not None else sp.seq)
    if s <= 0:
        raise WorkloadError(f"transformer {sp.name}: seq must be > 0, given {s}")
    if sp.positions and s > sp.positions:
        raise WorkloadError(f"transformer {sp.name}: seq={s} exceeds its {sp.positions} learned positions")
    db = 2  # 16-bit activations and parameters
    act = float(s * sp.hidden * db)  # output of every block layer
    layers: list[Layer] = [_embedding_layer(sp, s, act)]
    for i in range(sp.layers):
        layers.append(_attention_layer(sp, i, s, act, prev=layers[-1].name))
        layers.append(_mlp_layer(sp, i, s, act, prev=layers[-1].name))
    layers += _head_layers(sp, s, act, db, prev=layers[-1].name)
    hyper = {k: v for k, v in asdict(sp).items() if k not in ("source", "published_note")}
    hyper["seq"] = s
    return TransformerTable(name=sp.name if seq is None else f"{sp.name}@seq{s}", kind="transformer",
                            source=sp.source, description=_description(sp, s), layers=tuple(layers), input_shape=(s,),
                            dtype_bytes=db, published_params=sp.published_params, spec=hyper,
                            published_rel=sp.published_rel)


def _embedding_layer(sp: TransformerSpec, s: int, act: float) -> Layer:
    """Token (and learned position and token-type) embeddings; a post-LN model's embedding norm."""
    h, V = sp.hidden, sp.vocab
    emb_params = V * h + sp.positions * h + sp.type_vocab * h + (0 if sp.pre_norm else sp.norm_params)
    return Layer(
        name="embedding", kind="embedding", input_shape=(s,), output_shape=(s, h), params=emb_params,
        fwd_flops=0.0, bwd_data_flops=0.0, bwd_weight_flops=0.0, activation_bytes=act,
        attrs={"vocab": V, "positions": sp.positions, "type_vocab": sp.type_vocab, "tied": sp.tied,
               "saved_bytes": float(s * h if sp.dropout else 0), "saved_bytes_selective": float(s * h if sp.dropout else 0),
               "saved_bytes_full": float(s * h if sp.dropout else 0), "inputs": ["input"]})


def _attention_layer(sp: TransformerSpec, i: int, s: int, act: float, prev: str) -> Layer:
    """Block *i*'s attention (QKV and output projections, the core over its span: the whole
    sequence, or the local window on every ``local_every``-th block) with its saved activations
    per recompute policy (Korthikanti et al. 2022, Table 2)."""
    h, a, dh, hq, hkv = sp.hidden, sp.heads, sp.dh, sp.hq, sp.hkv
    local = bool(sp.local_window and sp.local_every and i % sp.local_every == sp.local_every - 1)
    s_att = min(s, sp.local_window) if local else s
    w_att = h * hq + 2 * h * hkv + hq * h
    b_att = (hq + 2 * hkv if sp.qkv_bias else 0) + (h if sp.out_bias else 0)
    p_att = w_att + b_att + sp.norm_params
    core = 4.0 * s * s_att * hq
    fwd = 2.0 * s * w_att + core
    saved = (2 * s * h + 2 * s * h + 2 * s * (hq + hkv) + 2 * a * s * s_att
             + (3 * a * s * s_att if sp.dropout else 0) + 2 * s * hkv + 2 * s * hq + (s * h if sp.dropout else 0))
    sel = saved - 2 * a * s * s_att - (3 * a * s * s_att if sp.dropout else 0)
    return Layer(
        name=f"block{i}.attn", kind="attention", input_shape=(s, h), output_shape=(s, h), params=p_att,
        fwd_flops=fwd, bwd_data_flops=2.0 * s * w_att + 2 * core, bwd_weight_flops=2.0 * s * w_att,
        activation_bytes=act,
        attrs={"heads": a, "kv_heads": sp.kvh, "d_head": dh, "attention_span": s_att, "local": local,
               "weights": [(hq, h), (hkv, h), (hkv, h), (h, hq)], "core_flops": core,
               "saved_bytes": float(saved), "saved_bytes_selective": float(sel),
               "saved_bytes_full": float(2 * s * h), "recompute_flops_full": fwd,
               "recompute_flops_selective": core, "inputs": [prev]})


def _mlp_layer(sp: TransformerSpec, i: int, s: int, act: float, prev: str) -> Layer:
    """Block *i*'s MLP: two matrices (GELU) or three (SwiGLU), with its saved activations."""
    h, f = sp.hidden, sp.f
    if sp.mlp == "swiglu":
        w_mlp = 3 * h * f
        b_mlp = (2 * f + h) if sp.mlp_bias else 0
        m_saved = 2 * s * h + 2 * s * h + 6 * s * f
        weights = [(f, h), (f, h), (h, f)]
    else:
        w_mlp = 2 * h * f
        b_mlp = (f + h) if sp.mlp_bias else 0
        m_saved = 2 * s * h + 2 * s * h + 4 * s * f
        weights = [(f, h), (h, f)]
    m_saved += s * h if sp.dropout else 0
    fwd = 2.0 * s * w_mlp
    return Layer(
        name=f"block{i}.mlp", kind="mlp", input_shape=(s, h), output_shape=(s, h),
        params=w_mlp + b_mlp + sp.norm_params, fwd_flops=fwd, bwd_data_flops=fwd, bwd_weight_flops=fwd,
        activation_bytes=act,
        attrs={"mlp": sp.mlp, "ffn": f, "weights": weights, "saved_bytes": float(m_saved),
               "saved_bytes_selective": float(m_saved), "saved_bytes_full": 0.0,
               "recompute_flops_full": fwd, "recompute_flops_selective": 0.0, "inputs": [prev]})


def _head_layers(sp: TransformerSpec, s: int, act: float, db: int, prev: str) -> list[Layer]:
    """A pre-LN model's final norm, then the LM head (fp32 logits kept for the cross-entropy) or
    BERT's pooler."""
    h, V = sp.hidden, sp.vocab
    out: list[Layer] = []
    if sp.pre_norm:
        out.append(Layer(
            name="final_norm", kind="norm", input_shape=(s, h), output_shape=(s, h), params=sp.norm_params,
            activation_bytes=act, attrs={"norm": sp.norm, "saved_bytes": float(2 * s * h),
                                         "saved_bytes_selective": float(2 * s * h),
                                         "saved_bytes_full": float(2 * s * h), "inputs": [prev]}))
        prev = "final_norm"
    if sp.head == "lm":
        fwd = 2.0 * s * h * V
        logits = 4.0 * s * V  # fp32 logits for the cross-entropy (Korthikanti Section 4.3)
        out.append(Layer(
            name="lm_head", kind="fc", input_shape=(s, h), output_shape=(s, V), params=0 if sp.tied else V * h,
            fwd_flops=fwd, bwd_data_flops=fwd, bwd_weight_flops=fwd, activation_bytes=float(s * V * db),
            grad_shape=(V, h),
            attrs={"tied": sp.tied, "saved_bytes": float(2 * s * h) + logits,
                   "saved_bytes_selective": float(2 * s * h) + logits, "saved_bytes_full": float(2 * s * h) + logits,
                   "inputs": [prev]}))
    else:  # BERT pooler: dense h -> h with tanh on the first ([CLS]) token
        fwd = 2.0 * h * h
        out.append(Layer(
            name="pooler", kind="fc", input_shape=(s, h), output_shape=(h,), params=h * h + h,
            fwd_flops=fwd, bwd_data_flops=fwd, bwd_weight_flops=fwd, activation_bytes=float(h * db),
            grad_shape=(h, h), attrs={"saved_bytes": float(2 * h), "saved_bytes_selective": float(2 * h),
                                      "saved_bytes_full": float(2 * h), "inputs": [prev]}))
    return out


def _description(sp: TransformerSpec, s: int) -> str:
    return (f"{sp.layers} layers, hidden {sp.hidden}, {sp.heads} heads"
            + (f" ({sp.kvh} KV heads, GQA)" if sp.kvh != sp.heads else "")
            + f", {sp.mlp} MLP {sp.f}, vocab {sp.vocab}, seq {s}, {'tied' if sp.tied else 'untied'} embeddings")


def activation_memory(table: LayerTable, recompute: str = "none") -> float:
    """Bytes of activations kept for the backward pass, per sequence.

    Parameters
    ----------
    table : TransformerTable
    recompute : {"none", "selective", "full"}
        Korthikanti et al. 2022: none = eq. (1) ``sh(34 + 5as/h)`` per GPT layer; selective =
        ``34sh``; full = ``2sh`` (the block inputs).

    Raises
    ------
    WorkloadError
        Unknown ``recompute`` or a table without transformer activation figures.
    """
    key = {"none": "saved_bytes", "selective": "saved_bytes_selective", "full": "saved_bytes_full"}.get(recompute)
    if key is None:
        raise WorkloadError(f"recompute must be one of none, selective, full; given {recompute!r}")
    if not table.layers or key not in table.layers[0].attrs:
        raise WorkloadError(f"workload {table.name!r} has no transformer activation figures")
    return float(sum(l.attrs.get(key, 0.0) for l in table.layers))


def training_flops(table: LayerTable, recompute: str = "none") -> float:
    """FLOPs of one training step per sequence: forward + backward (+ recomputation).

    ``recompute`` in {"none", "selective", "full"} adds ``recompute_flops_selective`` or
    ``recompute_flops_full`` of every block (Narayanan et al. SC'21 Section 5.1; Korthikanti
    et al. 2022 Section 5).
    """
    if recompute not in ("none", "selective", "full"):
        raise WorkloadError(f"recompute must be one of none, selective, full; given {recompute!r}")
    extra = 0.0 if recompute == "none" else sum(l.attrs.get(f"recompute_flops_{recompute}", 0.0) for l in table.layers)
    return table.fwd_flops + table.bwd_flops + extra


def narayanan_flops(batch: int, seq: int, layers: int, hidden: int, vocab: int) -> float:
    """Narayanan et al. SC'21 eq. (3): FLOPs per iteration of a GPT with full recomputation,
    ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))``."""
    B, s, l, h, V = batch, seq, layers, hidden, vocab
    return 96.0 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))


# ------------------------------------------------------------------------------------ the specs
_GPT2_SRC = "Radford et al. 2019 Table 2; HF gpt2 configs (n_ctx 1024, vocab 50257, tied)"
_GPT3_SRC = "Brown et al. NeurIPS 2020 Table 2.1 (n_ctx 2048, vocab 50257 as GPT-2, tied)"


def _gpt2(name: str, layers: int, hidden: int, heads: int, count: int) -> TransformerSpec:
    return TransformerSpec(name, layers, hidden, heads, vocab=50257, seq=1024, positions=1024, source=_GPT2_SRC,
                           published_params=count, published_note="HF transformers parameter count")


def _gpt3(name: str, layers: int, hidden: int, heads: int, billions: float, rel: float = 0.03) -> TransformerSpec:
    return TransformerSpec(name, layers, hidden, heads, vocab=50257, seq=2048, positions=2048,
                           source=_GPT3_SRC, published_params=int(round(billions * 1e9)), published_rel=rel,
                           published_note=f"Table 2.1 'n_params' {billions}B, rounded by the paper")


_LLAMA2_SRC = "Touvron et al. 2023 (Llama 2) Table 1, Sec. 2.2; HF config (vocab 32000, RMSNorm, SwiGLU, untied)"
_LLAMA3_SRC = "Grattafiori et al. 2024 (Llama 3) Table 3; HF config (vocab 128256, GQA 8 KV heads, untied)"


def _llama(name: str, layers: int, hidden: int, heads: int, kv: int | None, ffn: int, vocab: int, seq: int,
           count: int, rel: float, src: str, note: str) -> TransformerSpec:
    return TransformerSpec(name, layers, hidden, heads, vocab=vocab, seq=seq, kv_heads=kv, ffn=ffn, mlp="swiglu",
                           norm="rmsnorm", tied=False, qkv_bias=False, out_bias=False, mlp_bias=False,
                           dropout=False, source=src, published_params=count, published_rel=rel,
                           published_note=note)


SPECS: dict[str, TransformerSpec] = {s.name: s for s in [
    TransformerSpec("bert-base", 12, 768, 12, vocab=30522, seq=512, positions=512, type_vocab=2, pre_norm=False,
                    head="pooler", source="Devlin et al. 2019 Sec. 3 (L=12, H=768, A=12); HF bert-base-uncased",
                    published_params=109_482_240, published_note="HF BertModel (with pooler, no MLM head); paper: 110M"),
    TransformerSpec("bert-large", 24, 1024, 16, vocab=30522, seq=512, positions=512, type_vocab=2, pre_norm=False,
                    head="pooler", source="Devlin et al. 2019 Sec. 3 (L=24, H=1024, A=16); HF bert-large-uncased",
                    published_params=335_141_888, published_note="HF BertModel (with pooler, no MLM head); paper: 340M"),
    _gpt2("gpt2", 12, 768, 12, 124_439_808),
    _gpt2("gpt2-medium", 24, 1024, 16, 354_823_168),
    _gpt2("gpt2-large", 36, 1280, 20, 774_030_080),
    _gpt2("gpt2-xl", 48, 1600, 25, 1_557_611_200),
    # Table 2.1 columns n_layers, d_model, n_heads. Attention width = d_model (the table's d_head
    # is inconsistent with d_model for 1.3B, 24 x 128 = 3072, and 13B, 40 x 128 = 5120 vs 5140).
    _gpt3("gpt3-125m", 12, 768, 12, 0.125),
    _gpt3("gpt3-350m", 24, 1024, 16, 0.350),
    _gpt3("gpt3-760m", 24, 1536, 16, 0.760),
    _gpt3("gpt3-1.3b", 24, 2048, 24, 1.3),
    _gpt3("gpt3-2.7b", 32, 2560, 32, 2.7),
    _gpt3("gpt3-6.7b", 32, 4096, 32, 6.7),
    _gpt3("gpt3-13b", 40, 5140, 40, 13.0),
    _gpt3("gpt3-175b", 96, 12288, 96, 175.0, rel=0.01),
    TransformerSpec("gpt-neo-125m", 12, 768, 12, vocab=50257, seq=2048, positions=2048, qkv_bias=False,
                    local_window=256, local_every=2,
                    source="EleutherAI GPT-Neo 125M config (global/local attention alternating, window 256)",
                    published_params=125_198_592, published_note="HF transformers parameter count"),
    _llama("llama2-7b", 32, 4096, 32, None, 11008, 32000, 4096, 6_738_415_616, 0.0, _LLAMA2_SRC,
           "HF parameter count 6,738,415,616 (paper: 7B; commonly 6.74B)"),
    _llama("llama2-13b", 40, 5120, 40, None, 13824, 32000, 4096, 13_015_864_320, 0.0, _LLAMA2_SRC,
           "HF parameter count 13,015,864,320 (13.0B)"),
    _llama("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096, 68_976_648_192, 0.0, _LLAMA2_SRC,
           "HF parameter count 68,976,648,192 (68.98B)"),
    _llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, 8_030_261_248, 0.0, _LLAMA3_SRC,
           "HF parameter count 8,030,261,248 (8.03B)"),
    _llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, 70_553_706_496, 0.0, _LLAMA3_SRC,
           "HF parameter count 70,553,706,496 (70.6B)"),
    _llama("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192, 405_853_388_800, 0.0, _LLAMA3_SRC,
           "HF parameter count 405,853,388,800 (405.9B)"),
]}


# --------------------------------------------------------------------------- encoder-decoder

#: Transformer "base" of Vaswani et al. 2017 ("Attention Is All You Need"), Table 3 row "base":
#: N = 6 encoder and 6 decoder layers, d_model = 512, d_ff = 2048, h = 8 heads (d_k = d_v = 64),
#: 65 x 10^6 parameters; Sec. 3.4: one embedding matrix shared by the encoder and decoder inputs
#: and the pre-softmax projection (tied); Sec. 3.5: sinusoidal positions (no parameters);
#: Sec. 5.1: WMT 2014 EN-DE, a shared source-target BPE vocabulary of "about 37000 tokens".
#: Built as ``layers = 12`` blocks of which the last 6 (the decoder) get a cross-attention layer.
#: The ReLU FFN has the cost of the 2-matrix "gelu" MLP; ``seq = 256`` tokens per side per
#: sample is OUR assumption (the paper batches ~25000 source + 25000 target tokens, Sec. 5.1),
#: and ``pre_norm`` adds one final LayerNorm (1,024 parameters) where the paper is post-LN.
TRANSFORMER_BASE = TransformerSpec(
    "transformer-base", 12, 512, 8, vocab=37000, seq=256, ffn=2048, positions=0, pre_norm=True, tied=True,
    source="Vaswani et al. 2017 Table 3 (base: N=6, d_model=512, d_ff=2048, h=8), Sec. 3.4 (shared embeddings), "
           "Sec. 5.1 (vocabulary ~37000)",
    published_params=65_000_000, published_rel=0.05,
    published_note="Table 3 'params x10^6' = 65 (2 significant digits); the vocabulary is 'about 37000', so "
                   "5% covers the rounding and the vocabulary's uncertainty")
ENCODER_DECODER: dict[str, tuple[TransformerSpec, int]] = {"transformer-base": (TRANSFORMER_BASE, 6)}


def encoder_decoder(spec: TransformerSpec, decoder_layers: int, seq: int | None = None) -> TransformerTable:
    """An encoder-decoder table: :func:`transformer` with ``spec.layers`` blocks, of which the
    last *decoder_layers* are decoder blocks, each with a cross-attention layer
    ``block{i}.cross`` (kind ``attention``) after its self-attention (Vaswani et al. 2017 Sec. 3.1).

    The cross-attention has the self-attention's parameters, FLOPs and saved bytes (queries from
    the target, keys and values from the ``seq``-token encoder output: equal lengths assumed).

    Raises
    ------
    WorkloadError
        ``decoder_layers`` not in ``[1, spec.layers - 1]``.
    """
    import dataclasses

    if not 1 <= decoder_layers < spec.layers:
        raise WorkloadError(f"transformer {spec.name}: decoder_layers must be in [1, {spec.layers - 1}], "
                            f"given {decoder_layers}")
    base = transformer(spec, seq)
    first_dec = spec.layers - decoder_layers
    enc_out = f"block{first_dec - 1}.mlp"
    out: list[Layer] = []
    for layer in base.layers:
        out.append(layer)
        if layer.kind == "attention" and int(layer.name[5:].split(".")[0]) >= first_dec:
            i = layer.name[5:].split(".")[0]
            out.append(dataclasses.replace(layer, name=f"block{i}.cross",
                                           attrs={**layer.attrs, "inputs": [layer.name, enc_out]}))
    for j, layer in enumerate(out):  # the decoder MLP now follows the cross-attention
        if layer.kind == "mlp" and int(layer.name[5:].split(".")[0]) >= first_dec:
            out[j] = dataclasses.replace(layer, attrs={**layer.attrs, "inputs": [out[j - 1].name]})
    desc = (f"encoder-decoder: {first_dec} encoder + {decoder_layers} decoder layers, hidden {spec.hidden}, "
            f"{spec.heads} heads, MLP {spec.f}, vocab {spec.vocab}, seq {base.spec['seq']} per side, tied embeddings")
    return dataclasses.replace(base, layers=tuple(out), description=desc,
                               spec={**base.spec, "decoder_layers": decoder_layers})
