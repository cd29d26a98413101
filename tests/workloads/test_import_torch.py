"""Bring your own model from PyTorch: traced torchvision models against the zoo and published counts.

Skipped where torch is absent (CI installs no torch; run locally with the [torch] extra).
Oracles: the zoo's tables (their parameter counts are pinned to torchvision's in
test_workloads_cnn.py, their MACs to torchvision's documentation within 1%), torchvision's
documented figures of models the zoo lacks (ViT-B/16, Swin-T, MobileNetV2), and hand counts
written out below.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (the [torch] extra); CI runs without it")
torchvision = pytest.importorskip("torchvision", reason="torchvision is not installed (the [torch] extra)")

from click.testing import CliRunner  # noqa: E402
from session_context import session_context  # noqa: E402

from suite.cli import main  # noqa: E402
from suite.errors import WorkloadError  # noqa: E402
from suite.workloads.importer import from_torch, load_workload_file, write_workload_file  # noqa: E402

IMG = (1, 3, 224, 224)


def _macs(table) -> int:
    return sum(int(l.attrs.get("macs", 0)) for l in table.layers)


def _weighted(table) -> list[tuple]:
    return sorted((l.kind, l.params, int(l.attrs.get("macs", 0)), l.output_shape)
                  for l in table.layers if l.params)


@pytest.mark.parametrize("factory,zoo_name,count", [
    ("resnet50", "resnet-50", 25_557_032),
    ("vgg16", "vgg16", 138_357_544),
])
@pytest.mark.parametrize("method", ["fx", "hooks"])
def test_torchvision_cnns_match_the_zoo(factory, zoo_name, count, method):
    t = from_torch(getattr(torchvision.models, factory), IMG, name=f"tv-{factory}", method=method)
    zoo = session_context().workload(zoo_name)
    assert t.params == zoo.params == count  # exact
    assert _macs(t) == pytest.approx(_macs(zoo), rel=0.01)
    # layer by layer: every weighted layer (conv, bn, fc) has the zoo's kind, parameters, MACs, output
    assert _weighted(t) == _weighted(zoo)
    assert all(l.attrs["trace"] == method for l in t.layers)
    if method == "fx":  # the whole graph: element-wise layers and bytes too
        assert len(t.layers) == len(zoo.layers)
        assert t.fwd_flops == pytest.approx(zoo.fwd_flops, rel=0.01)
        assert t.activation_bytes == pytest.approx(zoo.activation_bytes, rel=0.01)


def test_resnet50_graph_keeps_the_residual_structure():
    t = from_torch(torchvision.models.resnet50, IMG, method="fx")
    by = {l.name: l for l in t.layers}
    assert by["conv1"].bwd_data_flops == 0 and by["conv1"].attrs["inputs"] == ["input"]
    adds = [l for l in t.layers if l.kind == "add"]
    assert len(adds) == 16  # one per bottleneck unit: 3 + 4 + 6 + 3
    # the first unit adds its main path (bn3) and its projection shortcut (downsample.1)
    assert adds[0].attrs["inputs"] == ["layer1.0.bn3", "layer1.0.downsample.1"]
    assert by["fc"].grad_shape == (1000, 2048) and by["fc"].input_shape == (2048,)


# torchvision's model documentation: parameters and "GFLOPS" (multiply-adds, eval, 224x224)
@pytest.mark.parametrize("factory,params,gmacs", [
    ("vit_b_16", 86_567_656, 17.56),
    ("swin_t", 28_288_354, 4.49),      # its window attention is a function fx keeps opaque: ATen counts
    ("mobilenet_v2", 3_504_872, 0.30),
])
def test_models_outside_the_zoo_match_torchvision_documentation(factory, params, gmacs):
    t = from_torch(getattr(torchvision.models, factory), IMG, method="fx")
    assert t.params == params
    assert _macs(t) / 1e9 == pytest.approx(gmacs, rel=0.01)
    if factory == "vit_b_16":
        attn = [l for l in t.layers if l.kind == "attention"]
        assert len(attn) == 12 and attn[0].attrs["attention_span"] == 197
    if factory == "swin_t":
        opaque = [l for l in t.layers if l.kind == "other"]
        assert opaque and all(l.attrs["macs_from"] == "aten" for l in opaque)


def test_small_vit_by_hand(tmp_path):
    # ViT-Ti/16 (DeiT-Ti: 12 layers, hidden 192, 3 heads, MLP 768), 224x224, 1000 classes.
    # Params: patch conv 3*16*16*192+192 = 147,648; class token 192; positions 197*192 = 37,824;
    # per layer: 2 LayerNorms 768, in-proj 3*192*192+576 = 111,168, out-proj 192*192+192 = 37,056,
    # MLP 192*768+768 + 768*192+192 = 295,872 -> 444,864, x12 = 5,338,368; final LN 384;
    # head 192*1000+1000 = 193,000. Total 5,717,416.
    # MACs: patch 196*192*768 = 28,901,376; per layer: QKV 197*192*576 = 21,786,624, QK^T and AV
    # 2*197*197*192 = 14,902,656, out 197*192*192 = 7,262,208, MLP 2*197*192*768 = 58,097,664
    # -> 102,049,152, x12 = 1,224,589,824; head 192,000. Total 1,253,683,200.
    def vit_ti():
        return torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3,
                                                    hidden_dim=192, mlp_dim=768)

    for method in ("fx", "hooks"):
        t = from_torch(vit_ti, IMG, name=f"vit-ti-{method}", method=method)
        assert t.params == 5_717_416
        back = load_workload_file(write_workload_file(t, tmp_path / f"{method}.toml"))
        assert back.params == 5_717_416 and len(back.layers) == len(t.layers)
        if method == "fx":
            assert _macs(t) == pytest.approx(1_253_683_200, rel=0.01)
        else:  # hooks see every module; the class token and positions are kept as 'param' layers
            params_layers = {l.name for l in t.layers if l.kind == "param"}
            assert params_layers == {"params.class_token", "params.encoder.pos_embedding"}
            assert _macs(t) == pytest.approx(1_253_683_200, rel=0.01)
            pos = next(l for l in t.layers if l.name == "params.encoder.pos_embedding")
            assert pos.params == 197 * 192 and pos.attrs["inputs"] == [] and pos.attrs["shape"] == (1, 197, 192)


class _Branchy(torch.nn.Module):
    """Data-dependent control flow: torch.fx cannot trace it, hooks can (on the CPU)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 4)
        self.b = torch.nn.Linear(4, 2)

    def forward(self, x):
        y = self.a(x)
        if y.sum() >= 0:  # reads a value: not traceable symbolically, not on the meta device
            y = torch.relu(y)
        return self.b(y)


def test_untraceable_model_falls_back_to_hooks():
    t = from_torch(_Branchy, (4, 8))
    assert t.params == 8 * 4 + 4 + 4 * 2 + 2 == 46
    assert [l.name for l in t.layers] == ["a", "b"] and t.layers[0].attrs["trace"] == "hooks"
    assert "forward hooks on cpu" in t.description
    assert _macs(t) == 8 * 4 + 4 * 2  # per sample (batch 4)
    assert t.layers[1].attrs["inputs"] == ["a"]
    with pytest.raises(WorkloadError, match="could not trace the model: fx on meta"):
        from_torch(_Branchy, (4, 8), method="fx")


class _Tied(torch.nn.Module):
    """The same Linear applied twice, and an output layer tied to the embedding."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 16)
        self.mix = torch.nn.Linear(16, 16)
        self.out = torch.nn.Linear(16, 100, bias=False)
        self.out.weight = self.emb.weight

    def forward(self, ids):
        return self.out(self.mix(self.mix(self.emb(ids))))


def test_shared_and_tied_parameters_count_once():
    t = from_torch(_Tied, (2, 10), input_dtype="int64")
    # embedding 100*16 = 1,600 (the tied head adds none); mix 16*16+16 = 272, once
    assert t.params == 1_600 + 272 == sum(p.numel() for p in _Tied().parameters())
    mixes = [l for l in t.layers if l.name.startswith("mix")]
    assert [l.params for l in mixes] == [272, 0]
    assert _macs(t) == 10 * (16 * 16 * 2 + 16 * 100)  # per sequence of 10 tokens


def test_cli_import_torch_factory_with_args(tmp_path, monkeypatch):
    (tmp_path / "my_models.py").write_text(textwrap.dedent("""
        import torchvision
        def small(num_classes=1000):
            return torchvision.models.resnet18(weights=None, num_classes=num_classes)
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "r18.toml"
    r = CliRunner().invoke(main, ["workloads", "import", "--torch", "my_models:small", "--input-shape",
                                  "1,3,224,224", "--arg", "num_classes=10", "-o", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    # resnet-18 (11,689,512) with a 10-class head: fc 512*1000+1000 -> 512*10+10
    assert json.loads(r.output)["params"] == 11_689_512 - 513_000 + 5_130 == 11_181_642
    r = CliRunner().invoke(main, ["workloads", "show", str(out), "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.output)["name"] == "r18"
    r = CliRunner().invoke(main, ["workloads", "import", "--torch", "my_models:nothing", "--input-shape", "1,3,8,8"])
    assert r.exit_code != 0 and "module 'my_models' has no attribute 'nothing'" in r.output
    r = CliRunner().invoke(main, ["workloads", "import", "--torch", "my_models:small", "--input-shape", "1,a"])
    assert r.exit_code != 0 and "--input-shape: expected positive integers" in r.output
    sys.modules.pop("my_models", None)


class _FunctionalMatmul(torch.nn.Module):
    """fx cannot trace it (a value decides a branch); a matmul written in forward, outside modules."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(8, 6))
        self.fc = torch.nn.Linear(6, 3)

    def forward(self, x):
        y = x @ self.w
        if y.sum() >= 0:
            y = y * 2
        return self.fc(y)


def test_hooks_count_matmuls_outside_modules_as_one_functional_layer():
    t = from_torch(_FunctionalMatmul, (5, 8))
    assert t.layers[0].attrs["trace"] == "hooks"
    assert t.params == 8 * 6 + 6 * 3 + 3 == 69
    by = {l.name: l for l in t.layers}
    assert by["params.w"].params == 48 and by["fc"].attrs["macs"] == 6 * 3
    # x @ w, per sample: 8 * 6 MACs, seen by ATen outside every leaf module
    assert by["functional"].attrs["macs"] == 8 * 6 and by["functional"].attrs["macs_from"] == "aten"
    assert _macs(t) == 8 * 6 + 6 * 3
