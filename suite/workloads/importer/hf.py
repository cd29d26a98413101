"""A transformer layer table from a Hugging Face-style ``config.json`` (no download, no torch).

The config's hyperparameters are mapped onto a :class:`~suite.workloads.transformer.TransformerSpec`
and built with :func:`~suite.workloads.transformer.transformer`, so the imported table has the
same layers, parameter count, FLOPs and activation memory as a zoo transformer with those
hyperparameters (formulas and sources in :mod:`suite.workloads.transformer`).

Keys read (first one present wins; the names are those of the ``transformers`` configuration
classes ``LlamaConfig``, ``MistralConfig``, ``Qwen2Config``, ``GPT2Config``, ``GPTNeoConfig``,
``BertConfig``):

=================  ==========================================================================
field              config keys
=================  ==========================================================================
hidden             ``hidden_size``, ``n_embd``, ``d_model``
layers             ``num_hidden_layers``, ``n_layer``, ``num_layers``
heads              ``num_attention_heads``, ``n_head``, ``num_heads``
kv_heads           ``num_key_value_heads`` (GQA; default: ``heads``)
ffn                ``intermediate_size``, ``n_inner``, ``ffn_dim`` (default: 4 x hidden)
vocab              ``vocab_size``
seq                ``--seq``, else ``max_position_embeddings``, ``n_positions``, ``n_ctx``
d_head             ``head_dim`` (when it differs from hidden / heads)
tied               ``tie_word_embeddings`` (default: false for ``llama``, ``mistral``,
                   ``qwen2``; true otherwise, as in ``transformers``' config classes)
=================  ==========================================================================

Families, by ``model_type``: ``llama``, ``mistral``, ``qwen2`` (gated SiLU MLP = SwiGLU,
RMSNorm, rotary positions, biases only where the family has them: ``attention_bias`` /
``mlp_bias`` for Llama, Q/K/V biases for Qwen2), ``gpt2`` (learned positions, LayerNorm, GeLU,
biases), ``gpt_neo`` (GPT-2 layout, no Q/K/V bias, local attention on the layers
``attention_types`` marks ``local``, window ``window_size``), ``bert`` / ``roberta`` (post-LN,
token types, pooler head). Any other ``model_type`` is read as a pre-LN decoder: SwiGLU with
RMSNorm when ``hidden_act`` is ``silu``/``swish`` and ``rms_norm_eps`` is present, else GeLU
with LayerNorm; the table's ``source`` says so. Mixture-of-experts configs (``num_local_experts``,
``num_experts``) are refused: the zoo's transformer has dense MLPs only.

Dropout (1-byte masks in activation memory) is on when any of ``attn_pdrop``, ``resid_pdrop``,
``embd_pdrop``, ``hidden_dropout_prob``, ``attention_probs_dropout_prob``, ``attention_dropout``,
``hidden_dropout``, ``dropout`` is above zero.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from suite.errors import WorkloadError
from suite.workloads.transformer import TransformerSpec, TransformerTable, transformer

__all__ = ["spec_from_hf_config", "from_hf_config", "read_config"]

_ALIASES = {
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "heads": ("num_attention_heads", "n_head", "num_heads"),
    "vocab": ("vocab_size",),
    "ffn": ("intermediate_size", "n_inner", "ffn_dim"),
    "positions": ("max_position_embeddings", "n_positions", "n_ctx"),
}
_DROPOUT_KEYS = ("attn_pdrop", "resid_pdrop", "embd_pdrop", "hidden_dropout_prob", "attention_probs_dropout_prob",
                 "attention_dropout", "hidden_dropout", "dropout")
_GATED = {"llama", "mistral", "qwen2"}
_BERT = {"bert", "roberta"}
# The default of tie_word_embeddings when a config omits it: the class defaults of transformers 5.25
# (LlamaConfig, MistralConfig, Qwen2Config: tie_word_embeddings=False; GPT2Config, GPTNeoConfig,
# BertConfig, RobertaConfig and PretrainedConfig: True).
_UNTIED_BY_DEFAULT = {"llama", "mistral", "qwen2"}


def _int(cfg: dict[str, Any], field: str, where: str, required: bool = True) -> int | None:
    for k in _ALIASES[field]:
        v = cfg.get(k)
        if v is None:
            continue
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise WorkloadError(f"{where}: key {k!r}: expected a positive integer, given {v!r}")
        return v
    if required:
        raise WorkloadError(f"{where}: missing the {field} (one of {', '.join(map(repr, _ALIASES[field]))})")
    return None


def _required_int(cfg: dict[str, Any], field: str, where: str) -> int:
    """:func:`_int` of a required hyperparameter (it raises when the key is missing)."""
    v = _int(cfg, field, where)
    assert v is not None
    return v


def read_config(path: str | Path) -> dict[str, Any]:
    """The JSON object in *path*. Raises WorkloadError (one line naming the file) otherwise."""
    p = Path(path)
    if not p.is_file():
        raise WorkloadError(f"{p}: expected an existing config.json, got a path that does not exist")
    try:
        cfg = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise WorkloadError(f"{p}: not valid JSON ({e})") from None
    if not isinstance(cfg, dict):
        raise WorkloadError(f"{p}: expected a JSON object (a model config), given a {type(cfg).__name__}")
    return cfg


def spec_from_hf_config(cfg: dict[str, Any], name: str, seq: int | None = None, where: str = "config") -> TransformerSpec:
    """Map a Hugging Face-style config (a dict) onto a :class:`TransformerSpec`.

    Parameters
    ----------
    cfg : dict
        The parsed ``config.json``.
    name : str
        The workload name.
    seq : int, optional
        Sequence length of the table; default the config's maximum positions.
    where : str
        What to name in error messages (the file).

    Raises
    ------
    WorkloadError
        A missing or non-positive hyperparameter, a mixture-of-experts config, a sequence
        length beyond learned positions, heads that the KV heads do not divide, or a hidden size
        the heads do not divide (no ``head_dim`` given).
    """
    for k in ("num_local_experts", "num_experts", "moe_num_experts"):
        if cfg.get(k):
            raise WorkloadError(f"{where}: key {k!r}: mixture-of-experts configs are not supported "
                                f"(the transformer table has dense MLPs only), given {cfg[k]!r}")
    mtype = str(cfg.get("model_type") or "").lower()
    hidden, layers, heads, vocab = (_required_int(cfg, f, where) for f in ("hidden", "layers", "heads", "vocab"))
    ffn = _int(cfg, "ffn", where, required=False)
    positions = _int(cfg, "positions", where, required=seq is None)
    kv = _kv_heads(cfg, heads, where)
    if seq is not None and (not isinstance(seq, int) or seq <= 0):
        raise WorkloadError(f"{where}: seq: expected a positive integer, given {seq!r}")
    d_head = _head_dim(cfg, heads, hidden, where)
    tied = cfg.get("tie_word_embeddings", mtype not in _UNTIED_BY_DEFAULT)
    if not isinstance(tied, bool):
        raise WorkloadError(f"{where}: key 'tie_word_embeddings': expected true or false, given {tied!r}")
    common: dict[str, Any] = {"name": name, "layers": layers, "hidden": hidden, "heads": heads, "vocab": vocab,
                              "seq": seq if seq is not None else positions, "ffn": ffn, "d_head": d_head, "tied": tied,
                              "kv_heads": kv,
                              "dropout": any(isinstance(v, (int, float)) and v > 0
                                             for v in map(cfg.get, _DROPOUT_KEYS))}
    return _family_spec(cfg, mtype, common, positions, where)


def _kv_heads(cfg: dict[str, Any], heads: int, where: str) -> int | None:
    """``num_key_value_heads`` (grouped-query attention): a positive divisor of *heads*, or None."""
    kv = cfg.get("num_key_value_heads")
    if kv is not None and (not isinstance(kv, int) or isinstance(kv, bool) or kv <= 0):
        raise WorkloadError(f"{where}: key 'num_key_value_heads': expected a positive integer, given {kv!r}")
    if kv is not None and heads % kv:
        raise WorkloadError(f"{where}: key 'num_key_value_heads': expected a divisor of the {heads} attention "
                            f"heads, given {kv!r}")
    return kv


def _head_dim(cfg: dict[str, Any], heads: int, hidden: int, where: str) -> int | None:
    """``head_dim`` when the attention width differs from *hidden*; None (the default) otherwise."""
    d_head = cfg.get("head_dim")
    if d_head is not None and (not isinstance(d_head, int) or d_head <= 0):
        raise WorkloadError(f"{where}: key 'head_dim': expected a positive integer, given {d_head!r}")
    if d_head is None and hidden % heads:  # Hugging Face's own config classes refuse it too
        raise WorkloadError(f"{where}: the {heads} attention heads must divide the hidden size {hidden} (or give "
                            f"'head_dim'), given {hidden} / {heads} = {hidden / heads:.4g} channels a head")
    return None if d_head is None or d_head * heads == hidden else d_head


def _family_spec(cfg: dict[str, Any], mtype: str, common: dict[str, Any], positions: int | None,
                 where: str) -> TransformerSpec:
    """The spec of the model family *mtype* names (or that the activation and norm imply): gated
    SiLU + RMSNorm + rotary (Llama-like), post-LN encoder (BERT), GPT-Neo's local attention, else
    a pre-LN GeLU decoder (GPT-2-like)."""
    note = f"model_type {mtype!r}" if mtype else "no model_type"
    act = str(cfg.get("hidden_act") or cfg.get("activation_function") or "").lower()
    gated_generic = mtype not in _GATED | _BERT | {"gpt2", "gpt_neo"} and act in ("silu", "swish") \
        and "rms_norm_eps" in cfg
    if mtype in _GATED or gated_generic:
        attn_bias = bool(cfg.get("attention_bias", mtype == "qwen2"))
        return TransformerSpec(**common, mlp="swiglu", norm="rmsnorm", positions=0,
                               qkv_bias=attn_bias, out_bias=bool(cfg.get("attention_bias", False)),
                               mlp_bias=bool(cfg.get("mlp_bias", False)),
                               source=f"Hugging Face-style config ({note}): gated SiLU MLP, RMSNorm, rotary positions"
                                      + ("; family assumed from hidden_act and rms_norm_eps" if gated_generic else ""))
    if mtype in _BERT:
        return TransformerSpec(**common, positions=positions or 0,
                               type_vocab=int(cfg.get("type_vocab_size", 2)), pre_norm=False, head="pooler",
                               source=f"Hugging Face-style config ({note}): post-LN encoder, token types, pooler")
    if mtype == "gpt_neo":
        every = _local_every(cfg, where)
        return TransformerSpec(**common, positions=positions or 0, qkv_bias=False,
                               local_window=int(cfg.get("window_size", 256)) if every else 0, local_every=every,
                               source=f"Hugging Face-style config ({note}): GPT-Neo, local attention every "
                                      f"{every or '-'} layers")
    learned = mtype == "gpt2" or bool(cfg.get("n_positions"))
    return TransformerSpec(**common, positions=(positions or 0) if learned else 0,
                           source=f"Hugging Face-style config ({note}): pre-LN decoder, GeLU MLP, LayerNorm"
                                  + ("" if mtype == "gpt2" else "; family assumed (unknown model_type)"))


def _local_every(cfg: dict[str, Any], where: str) -> int:
    """GPT-Neo's ``attention_types`` as "every k-th layer is local" (0: none local); only a regular
    alternation is supported."""
    kinds: list[str] = []
    for pattern, times in cfg.get("attention_types") or []:
        kinds += list(pattern) * int(times)
    if "local" not in kinds:
        return 0
    first = kinds.index("local") + 1
    if not all((k == "local") == ((i + 1) % first == 0) for i, k in enumerate(kinds)):
        raise WorkloadError(f"{where}: key 'attention_types': only a regular local/global alternation "
                            f"is supported, given {cfg.get('attention_types')!r}")
    return first


def from_hf_config(config: str | Path | dict[str, Any], name: str | None = None, seq: int | None = None) -> TransformerTable:
    """Build the layer table of a Hugging Face-style config.

    Parameters
    ----------
    config : path or dict
        A ``config.json`` file or its parsed content.
    name : str, optional
        Workload name; default the config's ``_name_or_path`` (its last path component), else
        the file's folder name, else ``"hf-model"``.
    seq : int, optional
        Sequence length (tokens per sample); default the config's maximum positions.

    Returns
    -------
    TransformerTable
        Per-sequence figures, 16-bit, as :func:`suite.workloads.transformer.transformer` builds
        them; ``table.spec`` holds the hyperparameters (what a workload file stores).

    Raises
    ------
    WorkloadError
        See :func:`spec_from_hf_config`; a missing or invalid file.

    Examples
    --------
    A Llama-2-7B config (hidden 4096, 32 layers, 32 heads, FFN 11008, vocabulary 32000, untied)
    gives 6,738,415,616 parameters, the count of Hugging Face's ``LlamaForCausalLM``.
    """
    where = "config"
    if not isinstance(config, dict):
        where = str(config)
        cfg = read_config(config)
        default = Path(config).resolve().parent.name
    else:
        cfg, default = config, ""
    if name is None:
        raw = str(cfg.get("_name_or_path") or "").rstrip("/").split("/")[-1]
        name = (raw or default or "hf-model").lower().replace(" ", "-")
    spec = spec_from_hf_config(cfg, name, seq, where)
    try:
        return transformer(spec)
    except WorkloadError as e:
        raise WorkloadError(f"{where}: {e}") from None


def spec_fields(table: TransformerTable) -> dict[str, Any]:
    """The :class:`TransformerSpec` fields a workload file stores for *table* (defaults dropped)."""
    defaults = asdict(TransformerSpec("x", 1, 1, 1, 1, 1))
    spec = dict(table.spec)
    out = {k: v for k, v in spec.items() if k in defaults and k != "name" and (
        k in ("layers", "hidden", "heads", "vocab", "seq") or v != defaults[k])}
    if table.source:
        out["source"] = table.source
    return out
