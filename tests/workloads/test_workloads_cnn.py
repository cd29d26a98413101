"""CNN layer tables: published parameter counts, shape chaining, hand-checked FLOPs."""

from __future__ import annotations

import math

import pytest

from suite.errors import WorkloadError
from suite.workloads.architectures import resnet_stages
from suite.workloads.cnn import CNNBuilder, conv_out, deconv_out, pool_out
from suite.workloads.types import Workload
from session_context import session_context

# torchvision parameter counts (``sum(p.numel() for p in model.parameters())``), BVLC for alexnet-caffe
PUBLISHED = {
    "vgg19": 143_667_240,
    "googlenet": 6_624_904,  # torchvision GoogLeNet, aux_logits=False
    "googlenet-aux": 13_004_888,  # torchvision GoogLeNet, aux_logits=True
    "inception-v3": 27_161_264,  # torchvision, aux_logits=True (the default)
    "inception-v3-noaux": 23_834_568,
    "resnet-152": 60_192_808,
    "resnet-50": 25_557_032,
    "vgg16": 138_357_544,
    "alexnet": 61_100_840,
    "alexnet-caffe": 60_965_224,  # BVLC bvlc_alexnet
    "vgg11": 132_863_336,
    "vgg13": 133_047_848,
    "resnet-18": 11_689_512,
    "resnet-34": 21_797_672,
    "resnet-101": 44_549_160,
    "densenet-121": 7_978_856,
    "densenet-161": 28_681_000,
    "densenet-169": 14_149_480,
    "densenet-201": 20_013_928,
    "inception-v4": 42_679_816,  # timm inception_v4
    "resnet-18-cifar": 11_173_962,  # kuangliu/pytorch-cifar ResNet18
    "vgg16-cifar": 14_728_266,  # kuangliu/pytorch-cifar VGG('VGG16')
}


@pytest.mark.parametrize("name,count", sorted(PUBLISHED.items()))
def test_published_parameter_counts_exact(name, count):
    t = session_context().workload(name)
    assert t.params == count
    assert t.published_params == count


def test_vgg19_22k_is_vgg19_with_a_21841_class_classifier():
    base, big = session_context().workload("vgg19"), session_context().workload("vgg19-22k")
    # only fc8 changes: 4096 weights + 1 bias per extra class
    assert big.params - base.params == 4097 * (21841 - 1000)
    assert big.params == 229_052_817
    # Poseidon's docs say "229M" (secondary source: petuum-inc/poseidon-release
    # docs/source/index.rst): agree within 0.5%
    assert big.params == pytest.approx(229e6, rel=0.005)
    assert big.layers[-1].grad_shape == (21841, 4096)


def test_resnet50_macs_about_4_1_g():
    # He et al. Table 1: 3.8e9 FLOPs (multiply-adds) for the v1 net; torchvision's v1.5 (stride on
    # the 3x3) is ~4.1 GMACs, the figure commonly quoted. Tolerance 2% (stated before computing).
    t = session_context().workload("resnet-50")
    macs = sum(l.attrs.get("macs", 0) for l in t.layers)
    assert macs == pytest.approx(4.1e9, rel=0.02)
    assert t.fwd_flops >= 2 * macs  # FLOPs = 2 x MACs plus element-wise ops


# torchvision model documentation, weights tables, column "GFLOPS" (it counts multiply-adds, i.e.
# GMACs, at the weights' input size, eval mode: no auxiliary heads). Printed to 2-4 significant
# digits; tolerance 1% (covers the rounding of every entry), fixed before comparing.
TORCHVISION_GMACS = {"alexnet": 0.71, "vgg11": 7.61, "vgg16": 15.47, "vgg19": 19.63, "googlenet": 1.5,
                     "inception-v3-noaux": 5.71, "resnet-18": 1.81, "resnet-34": 3.66, "resnet-50": 4.09,
                     "resnet-101": 7.8, "resnet-152": 11.51, "densenet-121": 2.83,
                     "densenet-161": 7.73, "densenet-169": 3.36, "densenet-201": 4.29}


@pytest.mark.parametrize("name,gmacs", sorted(TORCHVISION_GMACS.items()))
def test_macs_match_torchvision_documentation(name, gmacs):
    t = session_context().workload(name)
    macs = sum(l.attrs.get("macs", 0) for l in t.layers)
    assert macs / 1e9 == pytest.approx(gmacs, rel=0.01)


def _check_chain(t):
    produced = {"input": t.input_shape}
    for l in t.layers:
        ins = l.attrs["inputs"]
        assert all(i in produced for i in ins), f"{l.name} reads a layer not yet produced"
        shapes = [produced[i] for i in ins]
        if l.kind == "concat":
            assert l.input_shape == (sum(s[0] for s in shapes), *shapes[0][1:])
        else:
            assert all(s == l.input_shape for s in shapes), l.name
        assert l.activation_bytes == math.prod(l.output_shape) * t.dtype_bytes
        produced[l.name] = l.output_shape


@pytest.mark.parametrize("name", sorted(PUBLISHED) + ["vgg19-22k", "dcgan-generator", "ebgan-generator",
                                                      "resnet-200", "resnet-1001"])
def test_shapes_chain(name):
    t = session_context().workload(name)
    _check_chain(t)
    names = [l.name for l in t.layers]
    assert len(names) == len(set(names))


def test_output_shapes_of_known_stages():
    t = {l.name: l for l in session_context().workload("resnet-50").layers}
    assert t["conv1.conv"].output_shape == (64, 112, 112)
    assert t["maxpool"].output_shape == (64, 56, 56)
    assert t["layer4.2.relu"].output_shape == (2048, 7, 7)
    inc = {l.name: l for l in session_context().workload("inception-v3").layers}
    assert inc["Mixed_5b.concat"].output_shape == (256, 35, 35)
    assert inc["Mixed_6e.concat"].output_shape == (768, 17, 17)
    assert inc["Mixed_7c.concat"].output_shape == (2048, 8, 8)
    g = {l.name: l for l in session_context().workload("googlenet").layers}
    assert g["inception3a.concat"].output_shape == (256, 28, 28)
    assert g["inception5b.concat"].output_shape == (1024, 7, 7)
    d = {l.name: l for l in session_context().workload("densenet-121").layers}
    assert d["denseblock4.concat"].output_shape == (1024, 7, 7)


def test_alexnet_caffe_conv_outputs_match_superneurons_walkthrough():
    # SuperNeurons Fig. 10 (batch 200, fp32): CONV1..4 forward outputs 221.56, 142.38, 49.51, 49.51 MB
    t = {l.name: l for l in session_context().workload("alexnet-caffe").layers}
    mib = [t[f"conv{i}"].activation_bytes * 200 / 2**20 for i in (1, 2, 3, 4)]
    assert mib == pytest.approx([221.56, 142.38, 49.51, 49.51], abs=0.01)
    assert len(t) == 23  # "23 layers -> 46 steps"


def test_cifar10_quick_by_hand():
    # conv 3->32 5x5 (2432), conv 32->32 (25632), conv 32->64 (51264), ip1 64*4*4 -> 64 (65600), ip2 (650)
    t = session_context().workload("cifar10-quick")
    assert t.params == 2432 + 25632 + 51264 + 65600 + 650
    assert [l.output_shape for l in t.layers if l.kind == "pool"] == [(32, 16, 16), (32, 8, 8), (64, 4, 4)]


def test_small_conv_flops_by_hand():
    b = CNNBuilder("tiny", (3, 8, 8))
    x = b.conv(b.input, 4, 3, stride=1, padding=1, name="c1")  # 4 x 8 x 8 out
    y = b.conv(x, 6, 3, stride=2, padding=0, groups=2, bias=False, name="c2")  # 6 x 3 x 3
    z = b.fc(y, 5, name="fc")
    t = b.build()
    c1, c2, fc = t.layers
    # c1: params 4*3*3*3 + 4 = 112; MACs = 4*8*8 * 3*3*3 = 6912
    assert c1.params == 112 and c1.fwd_flops == 2 * 6912
    assert c1.bwd_data_flops == 0 and c1.bwd_weight_flops == 2 * 6912  # first layer: no data grad
    assert c1.workspace_bytes == 3 * 9 * 64 * 4  # im2col: C*kh*kw x Ho*Wo, fp32
    # c2: out (8-3)//2+1 = 3; per group 2 in-channels; params 6*2*9 = 108; MACs 6*9*2*9 = 972
    assert c2.output_shape == (6, 3, 3) and c2.params == 108
    assert c2.fwd_flops == 2 * 972 and c2.bwd_data_flops == 2 * 972 and c2.bwd_weight_flops == 2 * 972
    # fc: 54 -> 5, params 275, MACs 270, grad (5, 54)
    assert fc.params == 275 and fc.fwd_flops == 540 and fc.grad_shape == (5, 54)
    assert z.shape == (5,)
    assert t.params == 112 + 108 + 275


def test_shape_formulas_by_hand():
    assert conv_out(224, 7, 2, 3) == 112
    assert conv_out(7, 3, 1, 2, 2) == 7  # dilation 2 with padding 2 keeps the size
    assert pool_out(112, 3, 2, 0, ceil_mode=True) == 56  # googlenet maxpool1
    assert pool_out(112, 3, 2, 0, ceil_mode=False) == 55
    assert pool_out(14, 2, 2, 0, ceil_mode=True) == 7
    assert deconv_out(4, 4, 2, 1) == 8
    assert deconv_out(4, 5, 2, 2, 1) == 8


def test_deconv_flops_and_gan_shapes():
    g = session_context().workload("dcgan-generator")
    outs = [l.output_shape for l in g.layers if l.kind == "deconv"]
    assert outs == [(512, 8, 8), (256, 16, 16), (128, 32, 32), (3, 64, 64)]
    d1 = next(l for l in g.layers if l.name == "deconv1")
    # every input element (1024*4*4) scattered through 512 x 5 x 5 weights
    assert d1.attrs["macs"] == 1024 * 16 * 512 * 25
    assert d1.params == 1024 * 512 * 25
    assert d1.attrs["kernel"] == (5, 5) and d1.attrs["output_padding"] == (1, 1)
    e = session_context().workload("ebgan-generator")
    assert [l.output_shape for l in e.layers if l.kind == "deconv"][-1] == (3, 64, 64)


def test_first_layer_has_no_data_gradient_and_bwd_equals_fwd_for_weights():
    t = session_context().workload("vgg16")
    convs = [l for l in t.layers if l.kind in ("conv", "fc")]
    assert convs[0].bwd_data_flops == 0
    for l in convs[1:]:
        assert l.bwd_data_flops == l.fwd_flops == l.bwd_weight_flops
    assert [l.grad_shape for l in t.layers if l.kind == "fc"] == [(4096, 25088), (4096, 4096), (1000, 4096)]


def test_resnet_depth_mapping():
    assert resnet_stages(50) == ("bottleneck", (3, 4, 6, 3), 50)
    assert resnet_stages(18) == ("basic", (2, 2, 2, 2), 18)
    assert resnet_stages(1001) == ("bottleneck", (6, 32, 289, 6), 1001)
    assert resnet_stages(2500) == ("bottleneck", (6, 32, 789, 6), 2501)
    with pytest.raises(WorkloadError, match="resnet-77"):
        session_context().workload("resnet-77")


def test_resnet_2500_builds_and_is_cached():
    t = session_context().workload("resnet-2500")
    assert session_context().workload("resnet-2500") is t
    # 833 bottleneck units, each conv/bn/relu x3 + add + relu = 10 layers; plus stem, shortcuts, head
    assert sum(1 for l in t.layers if l.kind == "add") == 833
    assert len(t.layers) > 8000


def test_content_hash_equals_the_asdict_json_of_every_zoo_workload(shared_context):
    """plain() (the hashing walk) gives exactly the JSON dataclasses.asdict gives, for every
    workload of the zoo: case keys stay what they were before the faster walk (issue 19)."""
    import dataclasses
    import hashlib
    import json

    ctx = shared_context
    checked = 0
    for name in ctx.workloads.names():
        w = ctx.workload(name)
        if type(w).content is not Workload.content:  # e.g. datasets hash their own definition
            continue
        blob = json.dumps(dataclasses.asdict(w), sort_keys=True, default=str, separators=(",", ":"))
        assert w.content_hash() == hashlib.sha256(blob.encode()).hexdigest()[:16], name
        checked += 1
    assert checked >= 50
