"""The Inception family as layer tables: GoogLeNet (Inception-v1), Inception-v3 and Inception-v4,
built with :class:`~suite.workloads.cnn.CNNBuilder` op by op from their published definitions
(re-exported by :mod:`suite.workloads.architectures`, where the other CNNs are).

References
----------
.. [1] torchvision.models source (v0.15+): ``googlenet.py``, ``inception.py``.
.. [4] C. Szegedy et al., "Going Deeper with Convolutions", CVPR 2015 (GoogLeNet), Table 1.
.. [5] C. Szegedy et al., "Rethinking the Inception Architecture", CVPR 2016 (Inception-v3).
.. [11] C. Szegedy et al., "Inception-v4, Inception-ResNet and the Impact of Residual Connections
   on Learning", AAAI 2017; timm's ``inception_v4`` definition.
"""

from __future__ import annotations

from suite.workloads.cnn import TORCHVISION, CNNBuilder, Size, T
from suite.workloads.types import LayerTable

__all__ = ["googlenet", "inception_v3", "inception_v4"]


# ---------------------------------------------------------------------------------------- GoogLeNet
def _inception_v1(b: CNNBuilder, x: T, name: str, c1: int, c3r: int, c3: int, c5r: int, c5: int, pp: int) -> T:
    """torchvision ``Inception``: note that its "5x5" branch uses a 3x3 kernel (kept by torchvision
    for weight compatibility), which is why its count is below the paper's ~7.0M."""
    b1 = b.conv_bn_relu(x, c1, 1, name=f"{name}.branch1", eps=1e-3)
    b2 = b.conv_bn_relu(x, c3r, 1, name=f"{name}.branch2.0", eps=1e-3)
    b2 = b.conv_bn_relu(b2, c3, 3, padding=1, name=f"{name}.branch2.1", eps=1e-3)
    b3 = b.conv_bn_relu(x, c5r, 1, name=f"{name}.branch3.0", eps=1e-3)
    b3 = b.conv_bn_relu(b3, c5, 3, padding=1, name=f"{name}.branch3.1", eps=1e-3)
    b4 = b.maxpool(x, 3, 1, 1, ceil_mode=True, name=f"{name}.branch4.pool")
    b4 = b.conv_bn_relu(b4, pp, 1, name=f"{name}.branch4.1", eps=1e-3)
    return b.concat([b1, b2, b3, b4], name=f"{name}.concat")


def _googlenet_aux(b: CNNBuilder, x: T, name: str, num_classes: int) -> None:
    y = b.adaptive_avgpool(x, 4, name=f"{name}.pool")
    y = b.conv_bn_relu(y, 128, 1, name=f"{name}.conv", eps=1e-3)
    y = b.relu(b.fc(y, 1024, name=f"{name}.fc1"), name=f"{name}.relu")
    y = b.dropout(y, 0.7, name=f"{name}.drop")
    b.fc(y, num_classes, name=f"{name}.fc2")


def googlenet(aux: bool = False, num_classes: int = 1000) -> LayerTable:
    """torchvision GoogLeNet (Inception-v1 with batch norm after every conv, eps 1e-3), 224x224.

    ``aux=False`` (the default, torchvision's inference model): 6,624,904 parameters;
    ``aux=True`` adds the two auxiliary classifiers after inception 4a and 4d (13,004,888).
    """
    name = "googlenet-aux" if aux else "googlenet"
    b = CNNBuilder(name, (3, 224, 224))
    x = b.conv_bn_relu(b.input, 64, 7, 2, 3, name="conv1", eps=1e-3)
    x = b.maxpool(x, 3, 2, ceil_mode=True, name="maxpool1")
    x = b.conv_bn_relu(x, 64, 1, name="conv2", eps=1e-3)
    x = b.conv_bn_relu(x, 192, 3, padding=1, name="conv3", eps=1e-3)
    x = b.maxpool(x, 3, 2, ceil_mode=True, name="maxpool2")
    x = _inception_v1(b, x, "inception3a", 64, 96, 128, 16, 32, 32)
    x = _inception_v1(b, x, "inception3b", 128, 128, 192, 32, 96, 64)
    x = b.maxpool(x, 3, 2, ceil_mode=True, name="maxpool3")
    x = _inception_v1(b, x, "inception4a", 192, 96, 208, 16, 48, 64)
    if aux:
        _googlenet_aux(b, x, "aux1", num_classes)
    x = _inception_v1(b, x, "inception4b", 160, 112, 224, 24, 64, 64)
    x = _inception_v1(b, x, "inception4c", 128, 128, 256, 24, 64, 64)
    x = _inception_v1(b, x, "inception4d", 112, 144, 288, 32, 64, 64)
    if aux:
        _googlenet_aux(b, x, "aux2", num_classes)
    x = _inception_v1(b, x, "inception4e", 256, 160, 320, 32, 128, 128)
    x = b.maxpool(x, 2, 2, ceil_mode=True, name="maxpool4")
    x = _inception_v1(b, x, "inception5a", 256, 160, 320, 32, 128, 128)
    x = _inception_v1(b, x, "inception5b", 384, 192, 384, 48, 128, 128)
    x = b.adaptive_avgpool(x, 1, name="avgpool")
    x = b.dropout(x, 0.2, name="dropout")
    b.fc(x, num_classes, name="fc")
    pub = (13_004_888 if aux else 6_624_904) if num_classes == 1000 else None
    return b.build(source=f"{TORCHVISION} googlenet; Szegedy et al. CVPR 2015 Table 1",
                   description="GoogLeNet (Inception-v1) as torchvision defines it: BN after each conv, "
                               "3x3 kernels in the '5x5' branch" + (", with both auxiliary heads" if aux else
                                                                    ", no auxiliary heads"),
                   published_params=pub)


# ---------------------------------------------------------------------------------------- Inception-v3
def _bc(b: CNNBuilder, x: T, out: int, k: Size, name: str, stride: Size = 1, padding: Size = 0) -> T:
    return b.conv_bn_relu(x, out, k, stride, padding, name=name, eps=1e-3)


def _inc_a(b: CNNBuilder, x: T, name: str, pool_features: int) -> T:
    b1 = _bc(b, x, 64, 1, f"{name}.branch1x1")
    b5 = _bc(b, x, 48, 1, f"{name}.branch5x5_1")
    b5 = _bc(b, b5, 64, 5, f"{name}.branch5x5_2", padding=2)
    b3 = _bc(b, x, 64, 1, f"{name}.branch3x3dbl_1")
    b3 = _bc(b, b3, 96, 3, f"{name}.branch3x3dbl_2", padding=1)
    b3 = _bc(b, b3, 96, 3, f"{name}.branch3x3dbl_3", padding=1)
    bp = b.avgpool(x, 3, 1, 1, name=f"{name}.branch_pool.pool")
    bp = _bc(b, bp, pool_features, 1, f"{name}.branch_pool")
    return b.concat([b1, b5, b3, bp], name=f"{name}.concat")


def _inc_b(b: CNNBuilder, x: T, name: str) -> T:
    b3 = _bc(b, x, 384, 3, f"{name}.branch3x3", stride=2)
    bd = _bc(b, x, 64, 1, f"{name}.branch3x3dbl_1")
    bd = _bc(b, bd, 96, 3, f"{name}.branch3x3dbl_2", padding=1)
    bd = _bc(b, bd, 96, 3, f"{name}.branch3x3dbl_3", stride=2)
    bp = b.maxpool(x, 3, 2, name=f"{name}.branch_pool")
    return b.concat([b3, bd, bp], name=f"{name}.concat")


def _inc_c(b: CNNBuilder, x: T, name: str, c7: int) -> T:
    b1 = _bc(b, x, 192, 1, f"{name}.branch1x1")
    b7 = _bc(b, x, c7, 1, f"{name}.branch7x7_1")
    b7 = _bc(b, b7, c7, (1, 7), f"{name}.branch7x7_2", padding=(0, 3))
    b7 = _bc(b, b7, 192, (7, 1), f"{name}.branch7x7_3", padding=(3, 0))
    bd = _bc(b, x, c7, 1, f"{name}.branch7x7dbl_1")
    bd = _bc(b, bd, c7, (7, 1), f"{name}.branch7x7dbl_2", padding=(3, 0))
    bd = _bc(b, bd, c7, (1, 7), f"{name}.branch7x7dbl_3", padding=(0, 3))
    bd = _bc(b, bd, c7, (7, 1), f"{name}.branch7x7dbl_4", padding=(3, 0))
    bd = _bc(b, bd, 192, (1, 7), f"{name}.branch7x7dbl_5", padding=(0, 3))
    bp = b.avgpool(x, 3, 1, 1, name=f"{name}.branch_pool.pool")
    bp = _bc(b, bp, 192, 1, f"{name}.branch_pool")
    return b.concat([b1, b7, bd, bp], name=f"{name}.concat")


def _inc_d(b: CNNBuilder, x: T, name: str) -> T:
    b3 = _bc(b, x, 192, 1, f"{name}.branch3x3_1")
    b3 = _bc(b, b3, 320, 3, f"{name}.branch3x3_2", stride=2)
    b7 = _bc(b, x, 192, 1, f"{name}.branch7x7x3_1")
    b7 = _bc(b, b7, 192, (1, 7), f"{name}.branch7x7x3_2", padding=(0, 3))
    b7 = _bc(b, b7, 192, (7, 1), f"{name}.branch7x7x3_3", padding=(3, 0))
    b7 = _bc(b, b7, 192, 3, f"{name}.branch7x7x3_4", stride=2)
    bp = b.maxpool(x, 3, 2, name=f"{name}.branch_pool")
    return b.concat([b3, b7, bp], name=f"{name}.concat")


def _inc_e(b: CNNBuilder, x: T, name: str) -> T:
    b1 = _bc(b, x, 320, 1, f"{name}.branch1x1")
    b3 = _bc(b, x, 384, 1, f"{name}.branch3x3_1")
    b3a = _bc(b, b3, 384, (1, 3), f"{name}.branch3x3_2a", padding=(0, 1))
    b3b = _bc(b, b3, 384, (3, 1), f"{name}.branch3x3_2b", padding=(1, 0))
    bd = _bc(b, x, 448, 1, f"{name}.branch3x3dbl_1")
    bd = _bc(b, bd, 384, 3, f"{name}.branch3x3dbl_2", padding=1)
    bda = _bc(b, bd, 384, (1, 3), f"{name}.branch3x3dbl_3a", padding=(0, 1))
    bdb = _bc(b, bd, 384, (3, 1), f"{name}.branch3x3dbl_3b", padding=(1, 0))
    bp = b.avgpool(x, 3, 1, 1, name=f"{name}.branch_pool.pool")
    bp = _bc(b, bp, 192, 1, f"{name}.branch_pool")
    return b.concat([b1, b3a, b3b, bda, bdb, bp], name=f"{name}.concat")


def inception_v3(aux: bool = True, num_classes: int = 1000) -> LayerTable:
    """torchvision Inception-v3, 299x299 input.

    ``aux=True`` (the default, as torchvision builds it for training and as Poseidon trained it):
    27,161,264 parameters; ``aux=False`` (no AuxLogits head after Mixed_6e): 23,834,568.
    """
    name = "inception-v3" if aux else "inception-v3-noaux"
    b = CNNBuilder(name, (3, 299, 299))
    x = _bc(b, b.input, 32, 3, "Conv2d_1a_3x3", stride=2)
    x = _bc(b, x, 32, 3, "Conv2d_2a_3x3")
    x = _bc(b, x, 64, 3, "Conv2d_2b_3x3", padding=1)
    x = b.maxpool(x, 3, 2, name="maxpool1")
    x = _bc(b, x, 80, 1, "Conv2d_3b_1x1")
    x = _bc(b, x, 192, 3, "Conv2d_4a_3x3")
    x = b.maxpool(x, 3, 2, name="maxpool2")
    x = _inc_a(b, x, "Mixed_5b", 32)
    x = _inc_a(b, x, "Mixed_5c", 64)
    x = _inc_a(b, x, "Mixed_5d", 64)
    x = _inc_b(b, x, "Mixed_6a")
    x = _inc_c(b, x, "Mixed_6b", 128)
    x = _inc_c(b, x, "Mixed_6c", 160)
    x = _inc_c(b, x, "Mixed_6d", 160)
    x = _inc_c(b, x, "Mixed_6e", 192)
    if aux:
        y = b.avgpool(x, 5, 3, name="AuxLogits.pool")
        y = _bc(b, y, 128, 1, "AuxLogits.conv0")
        y = _bc(b, y, 768, 5, "AuxLogits.conv1")
        y = b.adaptive_avgpool(y, 1, name="AuxLogits.avgpool")
        b.fc(y, num_classes, name="AuxLogits.fc")
    x = _inc_d(b, x, "Mixed_7a")
    x = _inc_e(b, x, "Mixed_7b")
    x = _inc_e(b, x, "Mixed_7c")
    x = b.adaptive_avgpool(x, 1, name="avgpool")
    x = b.dropout(x, 0.5, name="dropout")
    b.fc(x, num_classes, name="fc")
    pub = (27_161_264 if aux else 23_834_568) if num_classes == 1000 else None
    return b.build(source=f"{TORCHVISION} inception_v3; Szegedy et al. CVPR 2016",
                   description="Inception-v3, 299x299, " + ("with" if aux else "without") + " the auxiliary head",
                   published_params=pub)


# ---------------------------------------------------------------------------------------- Inception-v4
def _iv4_a(b: CNNBuilder, x: T, n: str) -> T:
    b0 = _bc(b, x, 96, 1, f"{n}.branch0")
    b1 = _bc(b, _bc(b, x, 64, 1, f"{n}.branch1.0"), 96, 3, f"{n}.branch1.1", padding=1)
    b2 = _bc(b, x, 64, 1, f"{n}.branch2.0")
    b2 = _bc(b, _bc(b, b2, 96, 3, f"{n}.branch2.1", padding=1), 96, 3, f"{n}.branch2.2", padding=1)
    b3 = _bc(b, b.avgpool(x, 3, 1, 1, name=f"{n}.branch3.pool"), 96, 1, f"{n}.branch3.1")
    return b.concat([b0, b1, b2, b3], name=f"{n}.concat")


def _iv4_b(b: CNNBuilder, x: T, n: str) -> T:
    b0 = _bc(b, x, 384, 1, f"{n}.branch0")
    b1 = _bc(b, x, 192, 1, f"{n}.branch1.0")
    b1 = _bc(b, b1, 224, (1, 7), f"{n}.branch1.1", padding=(0, 3))
    b1 = _bc(b, b1, 256, (7, 1), f"{n}.branch1.2", padding=(3, 0))
    b2 = _bc(b, x, 192, 1, f"{n}.branch2.0")
    b2 = _bc(b, b2, 192, (7, 1), f"{n}.branch2.1", padding=(3, 0))
    b2 = _bc(b, b2, 224, (1, 7), f"{n}.branch2.2", padding=(0, 3))
    b2 = _bc(b, b2, 224, (7, 1), f"{n}.branch2.3", padding=(3, 0))
    b2 = _bc(b, b2, 256, (1, 7), f"{n}.branch2.4", padding=(0, 3))
    b3 = _bc(b, b.avgpool(x, 3, 1, 1, name=f"{n}.branch3.pool"), 128, 1, f"{n}.branch3.1")
    return b.concat([b0, b1, b2, b3], name=f"{n}.concat")


def _iv4_c(b: CNNBuilder, x: T, n: str) -> T:
    b0 = _bc(b, x, 256, 1, f"{n}.branch0")
    b1 = _bc(b, x, 384, 1, f"{n}.branch1_0")
    b1a = _bc(b, b1, 256, (1, 3), f"{n}.branch1_1a", padding=(0, 1))
    b1b = _bc(b, b1, 256, (3, 1), f"{n}.branch1_1b", padding=(1, 0))
    b2 = _bc(b, x, 384, 1, f"{n}.branch2_0")
    b2 = _bc(b, b2, 448, (3, 1), f"{n}.branch2_1", padding=(1, 0))
    b2 = _bc(b, b2, 512, (1, 3), f"{n}.branch2_2", padding=(0, 1))
    b2a = _bc(b, b2, 256, (1, 3), f"{n}.branch2_3a", padding=(0, 1))
    b2b = _bc(b, b2, 256, (3, 1), f"{n}.branch2_3b", padding=(1, 0))
    b3 = _bc(b, b.avgpool(x, 3, 1, 1, name=f"{n}.branch3.pool"), 256, 1, f"{n}.branch3.1")
    return b.concat([b0, b1a, b1b, b2a, b2b, b3], name=f"{n}.concat")


def inception_v4(num_classes: int = 1000) -> LayerTable:
    """Inception-v4 (Szegedy et al., AAAI 2017, Figs. 3-9), 299x299, as timm / Cadene's
    ``pretrainedmodels`` define it (conv without bias + BN eps 1e-3 + ReLU), 1000 classes."""
    b = CNNBuilder("inception-v4", (3, 299, 299))
    x = _bc(b, b.input, 32, 3, "stem.0", stride=2)
    x = _bc(b, x, 32, 3, "stem.1")
    x = _bc(b, x, 64, 3, "stem.2", padding=1)
    x = b.concat([b.maxpool(x, 3, 2, name="mixed_3a.pool"), _bc(b, x, 96, 3, "mixed_3a.conv", stride=2)],
                 name="mixed_3a.concat")
    b0 = _bc(b, _bc(b, x, 64, 1, "mixed_4a.branch0.0"), 96, 3, "mixed_4a.branch0.1")
    b1 = _bc(b, x, 64, 1, "mixed_4a.branch1.0")
    b1 = _bc(b, b1, 64, (1, 7), "mixed_4a.branch1.1", padding=(0, 3))
    b1 = _bc(b, b1, 64, (7, 1), "mixed_4a.branch1.2", padding=(3, 0))
    b1 = _bc(b, b1, 96, 3, "mixed_4a.branch1.3")
    x = b.concat([b0, b1], name="mixed_4a.concat")
    x = b.concat([_bc(b, x, 192, 3, "mixed_5a.conv", stride=2), b.maxpool(x, 3, 2, name="mixed_5a.pool")],
                 name="mixed_5a.concat")
    for i in range(4):
        x = _iv4_a(b, x, f"inception_a{i}")
    r0 = _bc(b, x, 384, 3, "reduction_a.branch0", stride=2)
    r1 = _bc(b, x, 192, 1, "reduction_a.branch1.0")
    r1 = _bc(b, r1, 224, 3, "reduction_a.branch1.1", padding=1)
    r1 = _bc(b, r1, 256, 3, "reduction_a.branch1.2", stride=2)
    x = b.concat([r0, r1, b.maxpool(x, 3, 2, name="reduction_a.pool")], name="reduction_a.concat")
    for i in range(7):
        x = _iv4_b(b, x, f"inception_b{i}")
    r0 = _bc(b, _bc(b, x, 192, 1, "reduction_b.branch0.0"), 192, 3, "reduction_b.branch0.1", stride=2)
    r1 = _bc(b, x, 256, 1, "reduction_b.branch1.0")
    r1 = _bc(b, r1, 256, (1, 7), "reduction_b.branch1.1", padding=(0, 3))
    r1 = _bc(b, r1, 320, (7, 1), "reduction_b.branch1.2", padding=(3, 0))
    r1 = _bc(b, r1, 320, 3, "reduction_b.branch1.3", stride=2)
    x = b.concat([r0, r1, b.maxpool(x, 3, 2, name="reduction_b.pool")], name="reduction_b.concat")
    for i in range(3):
        x = _iv4_c(b, x, f"inception_c{i}")
    x = b.adaptive_avgpool(x, 1, name="avgpool")
    b.fc(x, num_classes, name="fc")
    return b.build(source="Szegedy et al. AAAI 2017 (Inception-v4); timm inception_v4 definition",
                   description="Inception-v4, 299x299, 1000 classes",
                   published_params=42_679_816 if num_classes == 1000 else None)
