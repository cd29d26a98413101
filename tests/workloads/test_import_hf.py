"""Bring your own model without torch: Hugging Face-style configs and workload files.

Oracles: Hugging Face's parameter counts (``sum(p.numel() for p in model.parameters())`` of the
model class for each config; the same figures the zoo pins in test_workloads_transformer.py),
a hand count for Mistral-7B written out below, and the zoo's own (independently pinned)
tables for the round trips.
"""

from __future__ import annotations

import json

import pytest

from suite.errors import WorkloadError
from suite.workloads.importer import from_hf_config, load_workload_file, write_workload_file
from suite.workloads.importer.hf import spec_fields
from suite.workloads.transformer import activation_memory

# meta-llama/Llama-2-7b-hf config.json, as published (keys the importer does not read included)
LLAMA2_7B = {
    "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 11008, "max_position_embeddings": 4096,
    "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None, "tie_word_embeddings": False,
    "torch_dtype": "float16", "transformers_version": "4.31.0.dev0", "use_cache": True, "vocab_size": 32000,
}
LLAMA2_70B = {**LLAMA2_7B, "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
              "num_hidden_layers": 80, "num_key_value_heads": 8}
GPT2 = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
        "embd_pdrop": 0.1, "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768,
        "n_head": 12, "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1, "vocab_size": 50257}
BERT_BASE = {"architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
             "hidden_dropout_prob": 0.1, "hidden_size": 768, "intermediate_size": 3072,
             "max_position_embeddings": 512, "model_type": "bert", "num_attention_heads": 12,
             "num_hidden_layers": 12, "type_vocab_size": 2, "vocab_size": 30522}
MISTRAL_7B = {"architectures": ["MistralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
              "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
              "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
              "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "vocab_size": 32000}



@pytest.fixture
def ctx(shared_context):
    """The session's context (tests/conftest.py): these tests read workloads and files, not plugin loading."""
    return shared_context

def test_llama2_7b_config_gives_the_hf_parameter_count(tmp_path, ctx):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(LLAMA2_7B))
    t = from_hf_config(p, name="llama-2-7b-hf")
    assert t.params == 6_738_415_616  # HF LlamaForCausalLM, the figure
    zoo = ctx.workload("llama2-7b")  # the same hyperparameters typed in the zoo (pinned there)
    assert t.fwd_flops == zoo.fwd_flops and t.bwd_flops == zoo.bwd_flops
    assert activation_memory(t, "selective") == activation_memory(zoo, "selective")
    assert [l.name for l in t.layers][:3] == ["embedding", "block0.attn", "block0.mlp"] and len(t.layers) == 67


@pytest.mark.parametrize("cfg,count", [
    (LLAMA2_70B, 68_976_648_192),   # HF count; GQA with 8 KV heads
    (GPT2, 124_439_808),            # HF GPT2LMHeadModel (tied head)
    (BERT_BASE, 109_482_240),       # HF BertModel with pooler, no MLM head
], ids=["llama2-70b", "gpt2", "bert-base"])
def test_other_configs_give_hf_counts(cfg, count):
    assert from_hf_config(cfg, name="x").params == count


def test_mistral_7b_by_hand():
    # embeddings 32000*4096 twice (untied) = 262,144,000; per layer: q, o 4096^2 each, k, v 4096*1024 each
    # (8 KV heads of 128) = 41,943,040; SwiGLU 3*4096*14336 = 176,160,768; two RMSNorms 8,192;
    # 32 layers = 6,979,584,000; final norm 4,096. Total 7,241,732,096 (the published "7.24B").
    t = from_hf_config(MISTRAL_7B, name="mistral", seq=4096)
    assert t.params == 262_144_000 + 32 * (41_943_040 + 176_160_768 + 8_192) + 4_096 == 7_241_732_096
    assert t.input_shape == (4096,)


# TinyLlama-1.1B's shape, without tie_word_embeddings: transformers' LlamaConfig defaults it to False
TINYLLAMA_NO_TIE_KEY = {"hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 5632,
                        "max_position_embeddings": 2048, "model_type": "llama", "num_attention_heads": 32,
                        "num_hidden_layers": 22, "num_key_value_heads": 4, "rms_norm_eps": 1e-05, "vocab_size": 32000}


@pytest.mark.parametrize("mtype", ["llama", "mistral", "qwen2"])
def test_llama_family_without_the_tie_key_is_untied_by_hand(mtype):
    # embeddings 32000*2048 twice (untied) = 131,072,000; per layer: q, o 2048^2 each, k, v 2048*256 each
    # (4 KV heads of 64) = 9,437,184; SwiGLU 3*2048*5632 = 34,603,008; two RMSNorms 4,096;
    # 22 layers = 968,974,336; final norm 2,048. Total 1,100,048,384 (tied would be 65,536,000 fewer).
    # Qwen2 adds Q/K/V biases: 22 * (2048 + 256 + 256) = 56,320.
    bias = 22 * (2048 + 2 * 256) if mtype == "qwen2" else 0
    t = from_hf_config({**TINYLLAMA_NO_TIE_KEY, "model_type": mtype}, name="x")
    assert t.params == 131_072_000 + 22 * (9_437_184 + 34_603_008 + 4_096) + 2_048 + bias
    assert from_hf_config({**TINYLLAMA_NO_TIE_KEY, "model_type": mtype, "tie_word_embeddings": True},
                          name="x").params == t.params - 65_536_000


def test_bad_configs_are_one_line_naming_file_and_key(tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({k: v for k, v in LLAMA2_7B.items() if k != "hidden_size"}))
    with pytest.raises(WorkloadError, match=r"config\.json: missing the hidden .*'hidden_size'"):
        from_hf_config(p)
    with pytest.raises(WorkloadError, match=r"'num_local_experts': mixture-of-experts"):
        from_hf_config({**LLAMA2_7B, "num_local_experts": 8})
    with pytest.raises(WorkloadError, match=r"'num_hidden_layers': expected a positive integer, given 0"):
        from_hf_config({**LLAMA2_7B, "num_hidden_layers": 0})
    with pytest.raises(WorkloadError, match=r"key 'num_key_value_heads': expected a divisor of the 32 attention heads, given 5"):
        from_hf_config({**LLAMA2_7B, "num_key_value_heads": 5})
    # 4096 / 30 heads: a head of 136.53 channels was imported (a tryout), as no Hugging Face class would
    with pytest.raises(WorkloadError, match=r"the 30 attention heads must divide the hidden size 4096 \(or give "
                                            r"'head_dim'\), given 4096 / 30 = 136.5 channels a head"):
        from_hf_config({**LLAMA2_7B, "num_attention_heads": 30, "num_key_value_heads": 30})
    assert from_hf_config({**LLAMA2_7B, "num_attention_heads": 30, "num_key_value_heads": 30, "head_dim": 128})
    p.write_text("{not json")
    with pytest.raises(WorkloadError, match=r"config\.json: not valid JSON"):
        from_hf_config(p)


def test_transformer_file_round_trip(tmp_path):
    t = from_hf_config(LLAMA2_70B, name="my-70b", seq=2048)
    p = write_workload_file(t, tmp_path / "my-70b.toml", transformer_spec=spec_fields(t))
    back = load_workload_file(p)
    assert back.name == "my-70b" and back.params == 68_976_648_192
    assert back.content_hash() == t.content_hash()  # the same table, rebuilt from the hyperparameters
    assert back.layers[1].attrs["kv_heads"] == 8 and back.input_shape == (2048,)


def _attrs(l):
    return json.loads(json.dumps(dict(l.attrs), default=list))


def test_layer_table_file_round_trip_of_a_zoo_table(tmp_path, ctx):
    zoo = ctx.workload("googlenet")  # inception branches, concat input_shapes: the graph attributes
    p = tmp_path / "g.toml"
    # a renamed copy (the context refuses a file claiming a zoo name)
    from dataclasses import replace

    write_workload_file(replace(zoo, name="my-googlenet"), p)
    back = ctx.workload(str(p))
    assert back.name == "my-googlenet" and back.params == zoo.params == 6_624_904
    assert len(back.layers) == len(zoo.layers)
    for a, b in zip(back.layers, zoo.layers):
        assert (a.name, a.kind, a.input_shape, a.output_shape, a.params, a.fwd_flops, a.bwd_data_flops,
                a.bwd_weight_flops, a.activation_bytes, a.workspace_bytes, a.grad_shape) == \
               (b.name, b.kind, b.input_shape, b.output_shape, b.params, b.fwd_flops, b.bwd_data_flops,
                b.bwd_weight_flops, b.activation_bytes, b.workspace_bytes, b.grad_shape)
        assert _attrs(a) == _attrs(b)


def test_malformed_files_name_file_and_field(tmp_path, ctx):
    zoo = ctx.workload("cifar10-quick")
    from dataclasses import replace

    p = write_workload_file(replace(zoo, name="quick"), tmp_path / "q.toml")
    text = p.read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("params = 2432", "params = -1", 1))
    with pytest.raises(WorkloadError, match=r"bad\.toml: layers\[0\]\.params: expected an integer >= 0, given -1"):
        load_workload_file(bad)
    bad.write_text(text.replace('format = "dlsys-suite-workload/1"', 'format = "v0"'))
    with pytest.raises(WorkloadError, match=r"bad\.toml: key 'format': expected 'dlsys-suite-workload/1', given 'v0'"):
        load_workload_file(bad)
    bad.write_text(text.replace('inputs = ["input"]', 'inputs = ["nowhere"]', 1))
    with pytest.raises(WorkloadError, match=r"layers\[0\]\.attrs\.inputs: 'nowhere' is not an earlier layer"):
        load_workload_file(bad)
    bad.write_text(text.replace('name = "quick"', 'name = "vgg16"'))
    with pytest.raises(WorkloadError, match=r"bad\.toml: workload\.name: 'vgg16' is already a workload of suite"):
        ctx.workload(str(bad))
    with pytest.raises(WorkloadError, match=r"nope\.toml: expected an existing workload file"):
        ctx.workload(str(tmp_path / "nope.toml"))


def test_cli_import_hf_config_then_show(tmp_path, suite_cli):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA2_7B))
    out = tmp_path / "my-llama.toml"
    r = suite_cli(["workloads", "import", "--hf-config", str(cfg), "-o", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["name"] == "my-llama" and info["params"] == 6_738_415_616
    r = suite_cli(["workloads", "show", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["params"] == 6_738_415_616
    # an existing file is not overwritten without --force; a clashing --name is refused
    r = suite_cli(["workloads", "import", "--hf-config", str(cfg), "-o", str(out)])
    assert r.exit_code != 0 and "already exists" in r.output
    r = suite_cli(["workloads", "import", "--hf-config", str(cfg), "--name", "llama2-7b",
                                  "-o", str(tmp_path / "x.toml")])
    assert r.exit_code != 0 and "'llama2-7b' is already a workload" in r.output
    r = suite_cli(["workloads", "import", "--hf-config", str(cfg), "--torch", "m:f"])
    assert r.exit_code != 0 and "exactly one of --torch" in r.output


def test_run_accepts_a_workload_file_and_matches_the_zoo(tmp_path, ctx, suite_cli):
    """`suite run --workload FILE.toml`: the file written from the zoo's resnet-50 gives the zoo's numbers."""
    from dataclasses import replace

    f = write_workload_file(replace(ctx.workload("resnet-50"), name="my-resnet"), tmp_path / "my-resnet.toml")
    store = tmp_path / "s.sqlite"
    r = suite_cli(["run", "--technique", "poseidon", "--variant", "ps,poseidon", "--workload",
                                  f"{f},resnet-50", "--in-process", "-q", "--store", str(store)])
    assert r.exit_code == 0, r.output
    from suite.results import load

    df = load(store, wide=True)
    got = {(row["variant"], row["workload"]): row["iteration_time"] for _, row in df.iterrows()}
    assert set(got) == {(v, w) for v in ("ps", "poseidon") for w in ("my-resnet", "resnet-50")}
    for v in ("ps", "poseidon"):
        assert got[(v, "my-resnet")] == got[(v, "resnet-50")]
