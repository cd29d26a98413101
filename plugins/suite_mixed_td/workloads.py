"""Workloads Mixed-TD needs beyond the zoo: RepVGG-A0 in its deploy (inference) form, and the
geometry of the small digits CNN of the execute fidelity (for the model fidelity)."""

from __future__ import annotations

__all__ = ["repvgg_a0", "digits_cnn", "REPVGG_A0_PUBLISHED_PARAMS_M"]

#: RepVGG-A0 inference-time parameters, 8.30 M (Ding et al., CVPR 2021, Table 4; rounded to 0.01 M
#: as printed there, so the test checks our count to that precision).
REPVGG_A0_PUBLISHED_PARAMS_M = 8.30


def repvgg_a0():
    """RepVGG-A0, deploy form [Ding21]: every block is one 3x3 conv (with bias) + ReLU after the
    structural re-parameterisation. Stem 3->48 (stride 2); stages of 2, 4, 14, 1 convs with 48, 96,
    192, 1280 channels (a = 0.75, b = 2.5: min(64, 64a), 64a, 128a, 256a, 512b), the first conv of
    each stage with stride 2; global average pool; fc 1280 -> 1000. Input 3x224x224.

    References
    ----------
    .. [Ding21] X. Ding, X. Zhang, N. Ma, J. Han, G. Ding, J. Sun, "RepVGG: Making VGG-style
       ConvNets Great Again", CVPR 2021, §4.1 and Table 2 (architecture), Table 4 (8.30 M params).
    """
    from suite.api import CNNBuilder

    b = CNNBuilder("mixed-td-repvgg-a0", (3, 224, 224))
    x = b.relu(b.conv(b.input, 48, 3, 2, 1, bias=True, name="stage0.conv"), name="stage0.relu")
    for s, (n, width) in enumerate(zip((2, 4, 14, 1), (48, 96, 192, 1280)), start=1):
        for u in range(n):
            x = b.conv(x, width, 3, 2 if u == 0 else 1, 1, bias=True, name=f"stage{s}.{u}.conv")
            x = b.relu(x, name=f"stage{s}.{u}.relu")
    x = b.adaptive_avgpool(x, 1, name="avgpool")
    b.fc(x, 1000, name="fc")
    return b.build(source="Ding et al., RepVGG, CVPR 2021 (Table 2 architecture, deploy form)",
                   description="RepVGG-A0 deploy form: 22 3x3 convs, 8.30 M params (Table 4)",
                   published_params=None)


def digits_cnn():
    """The digits CNN of the execute fidelity as a layer table (1x8x8 input): conv 1->8, conv 8->16,
    conv 16->16 stride 2 (3x3, padding 1, bias), global average pool, fc 16->10."""
    from suite.api import CNNBuilder

    b = CNNBuilder("mixed-td-digits-cnn", (1, 8, 8))
    x = b.input
    for i, (f, s) in enumerate(((8, 1), (16, 1), (16, 2)), start=1):
        x = b.relu(b.conv(x, f, 3, s, 1, bias=True, name=f"conv{i}"), name=f"relu{i}")
    x = b.adaptive_avgpool(x, 1, name="avgpool")
    b.fc(x, 10, name="fc")
    return b.build(source="this plugin (execute fidelity's digits CNN)", description="3-conv CNN on 8x8 digits")
