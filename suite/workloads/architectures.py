"""CNN architecture definitions, built into layer tables with :class:`~suite.workloads.cnn.CNNBuilder`.

Each function mirrors a published definition (torchvision's unless stated) op by op; the
parameter counts pinned in ``tests/workloads`` follow from these definitions.

References
----------
.. [1] torchvision.models source (v0.15+): ``alexnet.py``, ``vgg.py``, ``googlenet.py``,
   ``inception.py``, ``resnet.py``, ``densenet.py``.
.. [2] A. Krizhevsky et al., "ImageNet Classification with Deep CNNs", NIPS 2012; BVLC Caffe
   ``models/bvlc_alexnet/deploy.prototxt`` (the grouped, LRN variant).
.. [3] K. Simonyan, A. Zisserman, "Very Deep Convolutional Networks", ICLR 2015, Table 1.
.. [4] C. Szegedy et al., "Going Deeper with Convolutions", CVPR 2015 (GoogLeNet), Table 1.
.. [5] C. Szegedy et al., "Rethinking the Inception Architecture", CVPR 2016 (Inception-v3).
.. [6] K. He et al., "Deep Residual Learning for Image Recognition", CVPR 2016, Table 1.
.. [7] G. Huang et al., "Densely Connected Convolutional Networks", CVPR 2017, Table 1.
.. [8] A. Radford et al., "Unsupervised Representation Learning with Deep Convolutional
   Generative Adversarial Networks", ICLR 2016, Fig. 1.
.. [9] J. Zhao, M. Mathieu, Y. LeCun, "Energy-based Generative Adversarial Network", ICLR 2017.
.. [10] L. Wang et al., "SuperNeurons: Dynamic GPU Memory Management for Training Deep Neural
   Networks", PPoPP 2018, Section 4.2 and Table 4.
"""

from __future__ import annotations

from suite.errors import WorkloadError
from suite.workloads.cnn import T, CNNBuilder
from suite.workloads.types import LayerTable

__all__ = ["alexnet", "alexnet_caffe", "vgg", "googlenet", "inception_v3", "inception_v4", "resnet",
           "resnet_stages", "densenet", "DENSENET_CFGS", "resnet18_cifar", "vgg16_cifar", "cifar10_quick", "dcgan_generator", "ebgan_generator", "VGG_CFGS", "RESNET_STAGES"]

TORCHVISION = "torchvision.models (v0.15+)"


# ---------------------------------------------------------------------------------------- AlexNet
def alexnet(num_classes: int = 1000) -> LayerTable:
    """torchvision AlexNet ("one weird trick" variant: 64/192/384/256/256 filters, no LRN, no
    groups), 224x224 input. 61,100,840 parameters."""
    b = CNNBuilder("alexnet", (3, 224, 224))
    x = b.relu(b.conv(b.input, 64, 11, 4, 2, name="conv1"), name="relu1")
    x = b.maxpool(x, 3, 2, name="pool1")
    x = b.relu(b.conv(x, 192, 5, padding=2, name="conv2"), name="relu2")
    x = b.maxpool(x, 3, 2, name="pool2")
    x = b.relu(b.conv(x, 384, 3, padding=1, name="conv3"), name="relu3")
    x = b.relu(b.conv(x, 256, 3, padding=1, name="conv4"), name="relu4")
    x = b.relu(b.conv(x, 256, 3, padding=1, name="conv5"), name="relu5")
    x = b.maxpool(x, 3, 2, name="pool5")
    x = b.adaptive_avgpool(x, 6, name="avgpool")
    x = b.dropout(x, name="drop6")
    x = b.relu(b.fc(x, 4096, name="fc6"), name="relu6")
    x = b.dropout(x, name="drop7")
    x = b.relu(b.fc(x, 4096, name="fc7"), name="relu7")
    b.fc(x, num_classes, name="fc8")
    return b.build(source=f"{TORCHVISION} alexnet; Krizhevsky 2014 'one weird trick' layout",
                   description="AlexNet as in torchvision (no LRN, no grouped convs), 224x224",
                   published_params=61_100_840 if num_classes == 1000 else None)


def alexnet_caffe() -> LayerTable:
    """The original AlexNet as BVLC Caffe defines it (``bvlc_alexnet``): 227x227 input,
    96/256/384/384/256 filters, conv2/4/5 in 2 groups, LRN after relu1 and relu2, softmax;
    23 layers (the count SuperNeurons walks through in Fig. 10)."""
    b = CNNBuilder("alexnet-caffe", (3, 227, 227))
    x = b.relu(b.conv(b.input, 96, 11, 4, name="conv1"), name="relu1")
    x = b.lrn(x, 5, name="norm1")
    x = b.maxpool(x, 3, 2, name="pool1")
    x = b.relu(b.conv(x, 256, 5, padding=2, groups=2, name="conv2"), name="relu2")
    x = b.lrn(x, 5, name="norm2")
    x = b.maxpool(x, 3, 2, name="pool2")
    x = b.relu(b.conv(x, 384, 3, padding=1, name="conv3"), name="relu3")
    x = b.relu(b.conv(x, 384, 3, padding=1, groups=2, name="conv4"), name="relu4")
    x = b.relu(b.conv(x, 256, 3, padding=1, groups=2, name="conv5"), name="relu5")
    x = b.maxpool(x, 3, 2, name="pool5")
    x = b.dropout(b.relu(b.fc(x, 4096, name="fc6"), name="relu6"), name="drop6")
    x = b.dropout(b.relu(b.fc(x, 4096, name="fc7"), name="relu7"), name="drop7")
    b.softmax(b.fc(x, 1000, name="fc8"), name="prob")
    return b.build(source="BVLC Caffe models/bvlc_alexnet (Krizhevsky et al., NIPS 2012)",
                   description="original AlexNet: 2-group convs, LRN, 227x227", published_params=60_965_224)


# ---------------------------------------------------------------------------------------- VGG
VGG_CFGS: dict[int, list] = {
    11: [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    13: [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    16: [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    19: [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}
_VGG_PUBLISHED = {(11, 1000): 132_863_336, (13, 1000): 133_047_848, (16, 1000): 138_357_544,
                  (19, 1000): 143_667_240}


def vgg(depth: int, num_classes: int = 1000, name: str | None = None) -> LayerTable:
    """torchvision VGG-``depth`` (configurations A/B/D/E of Simonyan & Zisserman Table 1, no
    batch norm), 224x224 input, classifier 25088-4096-4096-``num_classes``."""
    if depth not in VGG_CFGS:
        raise WorkloadError(f"vgg: depth must be one of {sorted(VGG_CFGS)}, given {depth}")
    b = CNNBuilder(name or f"vgg{depth}", (3, 224, 224))
    x = b.input
    block, idx = 1, 1
    for v in VGG_CFGS[depth]:
        if v == "M":
            x = b.maxpool(x, 2, 2, name=f"pool{block}")
            block, idx = block + 1, 1
        else:
            x = b.relu(b.conv(x, v, 3, padding=1, name=f"conv{block}_{idx}"), name=f"relu{block}_{idx}")
            idx += 1
    x = b.adaptive_avgpool(x, 7, name="avgpool")
    x = b.relu(b.fc(x, 4096, name="fc6"), name="relu6")
    x = b.dropout(x, name="drop6")
    x = b.relu(b.fc(x, 4096, name="fc7"), name="relu7")
    x = b.dropout(x, name="drop7")
    b.fc(x, num_classes, name="fc8")
    return b.build(source=f"{TORCHVISION} vgg{depth}; Simonyan & Zisserman ICLR 2015 Table 1",
                   description=f"VGG-{depth}, {num_classes} classes, 224x224",
                   published_params=_VGG_PUBLISHED.get((depth, num_classes)))


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
def _bc(b: CNNBuilder, x: T, out: int, k, name: str, stride=1, padding=0) -> T:
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


# ---------------------------------------------------------------------------------------- ResNet
#: He et al. Table 1 (and torchvision): depth -> (block, units per stage)
RESNET_STAGES: dict[int, tuple[str, tuple[int, int, int, int]]] = {
    18: ("basic", (2, 2, 2, 2)),
    34: ("basic", (3, 4, 6, 3)),
    50: ("bottleneck", (3, 4, 6, 3)),
    101: ("bottleneck", (3, 4, 23, 3)),
    152: ("bottleneck", (3, 8, 36, 3)),
    200: ("bottleneck", (3, 24, 36, 3)),
}
_RESNET_PUBLISHED = {18: 11_689_512, 34: 21_797_672, 50: 25_557_032, 101: 44_549_160, 152: 60_192_808}
#: SuperNeurons Table 4 caption: depth = 3(n1+n2+n3+n4)+2 with n1=6, n2=32, n4=6 fixed and n3 varied.
SUPERNEURONS_FIXED = (6, 32, 6)


def resnet_stages(depth: int) -> tuple[str, tuple[int, int, int, int], int]:
    """How ``resnet-<depth>`` maps to blocks and units per stage.

    Returns
    -------
    block : {"basic", "bottleneck"}
    units : tuple of 4 int
        Residual units in stages conv2_x .. conv5_x.
    weighted_depth : int
        Conv + fc layers on the main path: ``2*sum(units)+2`` (basic) or ``3*sum(units)+2``.

    Notes
    -----
    * 18, 34, 50, 101, 152, 200: He et al. Table 1 (200 from the pre-activation paper; post-
      activation units here, as torchvision).
    * Any other depth ``d >= 137``: the bottleneck family generalised as SuperNeurons (PPoPP'18,
      Table 4 caption) does: ``(n1, n2, n3, n4) = (6, 32, n3, 6)`` with
      ``n3 = round((d - 2) / 3) - 44``. The weighted depth ``3*sum(units)+2`` equals ``d`` when
      ``d = 2 (mod 3)`` and differs from it by 1 otherwise (the paper's own depths 148, 592, 1920,
      2500 are not of the form 3k+2 either); e.g. resnet-1001 -> (6, 32, 289, 6), 333 units,
      depth 1001; resnet-2500 -> (6, 32, 789, 6), 833 units, weighted depth 2501.

    Raises
    ------
    WorkloadError
        Any other depth (below 137 and not in Table 1).
    """
    if depth in RESNET_STAGES:
        block, units = RESNET_STAGES[depth]
        per = 2 if block == "basic" else 3
        return block, units, per * sum(units) + 2
    total = round((depth - 2) / 3)
    n3 = total - sum(SUPERNEURONS_FIXED)
    if depth < 137 or n3 < 1:
        raise WorkloadError(
            f"resnet-{depth}: depth must be one of {sorted(RESNET_STAGES)} (He et al. Table 1) or >= 137 "
            f"(bottleneck units (6, 32, n3, 6), n3 = round((depth-2)/3) - 44, as SuperNeurons Table 4)")
    n1, n2, n4 = SUPERNEURONS_FIXED
    units = (n1, n2, n3, n4)
    return "bottleneck", units, 3 * sum(units) + 2


def resnet(depth: int, num_classes: int = 1000, image: int = 224,
           units: tuple[int, int, int, int] | None = None) -> LayerTable:
    """torchvision ResNet-``depth`` (v1.5: stride on the 3x3 conv of a bottleneck), ``image`` x
    ``image`` input. Stage widths 64/128/256/512 (x4 outputs for bottlenecks); projection
    shortcuts (1x1 conv + BN) where the shape changes. See :func:`resnet_stages` for depths.

    *units*, when given, are the bottleneck units per stage, and *depth* is ignored: the table is
    named ``resnet-D-(n1,n2,n3,n4)`` with ``D = 3 * sum(units) + 2``. The SuperNeurons family
    ``(6, 32, n3, 6)`` needs it where its depth is also a He et al. depth (n3 = 6 gives 152 and
    n3 = 22 gives 200, which :func:`resnet_stages` maps to He et al.'s layouts)."""
    explicit = units is not None
    if units is not None:
        units = tuple(int(u) for u in units)
        if len(units) != 4 or min(units) < 1:
            raise WorkloadError(f"resnet: units: expected 4 positive bottleneck counts, got {units}")
        block, wdepth = "bottleneck", 3 * sum(units) + 2
        name = f"resnet-{wdepth}-({','.join(map(str, units))})"
    else:
        block, units, wdepth = resnet_stages(int(depth))
        name = f"resnet-{depth}"
    b = CNNBuilder(name, (3, image, image))
    x = b.conv_bn_relu(b.input, 64, 7, 2, 3, name="conv1")
    x = b.maxpool(x, 3, 2, 1, name="maxpool")
    expansion = 1 if block == "basic" else 4
    in_c = 64
    for s, (n, width) in enumerate(zip(units, (64, 128, 256, 512)), start=1):
        for u in range(n):
            stride = 2 if (s > 1 and u == 0) else 1
            nm = f"layer{s}.{u}"
            out_c = width * expansion
            if block == "basic":
                y = b.conv_bn_relu(x, width, 3, stride, 1, name=f"{nm}.1")
                y = b.conv_bn_relu(y, width, 3, 1, 1, name=f"{nm}.2", relu=False)
            else:
                y = b.conv_bn_relu(x, width, 1, name=f"{nm}.1")
                y = b.conv_bn_relu(y, width, 3, stride, 1, name=f"{nm}.2")
                y = b.conv_bn_relu(y, out_c, 1, name=f"{nm}.3", relu=False)
            if stride != 1 or in_c != out_c:
                sc = b.conv_bn_relu(x, out_c, 1, stride, name=f"{nm}.downsample", relu=False)
            else:
                sc = x
            x = b.relu(b.add([y, sc], name=f"{nm}.add"), name=f"{nm}.relu")
            in_c = out_c
    x = b.adaptive_avgpool(x, 1, name="avgpool")
    b.fc(x, num_classes, name="fc")
    he = not explicit and int(depth) in RESNET_STAGES
    pub = _RESNET_PUBLISHED.get(int(depth)) if (num_classes == 1000 and not explicit) else None
    src = (f"{TORCHVISION} resnet{depth}; He et al. CVPR 2016 Table 1" if he else
           "bottleneck ResNet generalised as SuperNeurons PPoPP'18 Table 4 (n1, n2, n4 = 6, 32, 6); "
           "torchvision block definitions")
    t = b.build(source=src, description=f"ResNet-{wdepth if explicit else depth}: {block} units {units}, "
                                        f"weighted depth {wdepth}, {image}x{image}", published_params=pub)
    return t


# ---------------------------------------------------------------------------------------- DenseNet
_DENSENET_PUBLISHED = {"densenet-121": 7_978_856, "densenet-161": 28_681_000, "densenet-169": 14_149_480,
                       "densenet-201": 20_013_928}
#: name -> (growth, blocks, initial features), torchvision
DENSENET_CFGS = {"densenet-121": (32, (6, 12, 24, 16), 64), "densenet-161": (48, (6, 12, 36, 24), 96),
                 "densenet-169": (32, (6, 12, 32, 32), 64), "densenet-201": (32, (6, 12, 48, 32), 64)}

def densenet(growth: int = 32, blocks: tuple[int, ...] = (6, 12, 24, 16), init: int = 64, bn_size: int = 4,
             num_classes: int = 1000, name: str = "densenet-121") -> LayerTable:
    """torchvision DenseNet (BC: bottleneck + compression 0.5). densenet-121: 7,978,856 parameters.

    Each dense layer reads the concatenation of the block input and all earlier layers' outputs;
    that concatenation is an explicit ``concat`` layer (torchvision concatenates per layer too).
    """
    b = CNNBuilder(name, (3, 224, 224))
    x = b.conv(b.input, init, 7, 2, 3, bias=False, name="conv0")
    x = b.relu(b.bn(x, name="norm0"), name="relu0")
    x = b.maxpool(x, 3, 2, 1, name="pool0")
    for bi, n in enumerate(blocks, start=1):
        feats = [x]
        for li in range(1, n + 1):
            nm = f"denseblock{bi}.layer{li}"
            inp = feats[0] if len(feats) == 1 else b.concat(feats, name=f"{nm}.concat")
            y = b.relu(b.bn(inp, name=f"{nm}.norm1"), name=f"{nm}.relu1")
            y = b.conv(y, bn_size * growth, 1, bias=False, name=f"{nm}.conv1")
            y = b.relu(b.bn(y, name=f"{nm}.norm2"), name=f"{nm}.relu2")
            y = b.conv(y, growth, 3, padding=1, bias=False, name=f"{nm}.conv2")
            feats.append(y)
        x = b.concat(feats, name=f"denseblock{bi}.concat")
        if bi != len(blocks):
            nm = f"transition{bi}"
            x = b.relu(b.bn(x, name=f"{nm}.norm"), name=f"{nm}.relu")
            x = b.conv(x, x.shape[0] // 2, 1, bias=False, name=f"{nm}.conv")
            x = b.avgpool(x, 2, 2, name=f"{nm}.pool")
    x = b.relu(b.bn(x, name="norm5"), name="relu5")
    x = b.adaptive_avgpool(x, 1, name="avgpool")
    b.fc(x, num_classes, name="classifier")
    pub = _DENSENET_PUBLISHED.get(name) if num_classes == 1000 else None
    return b.build(source=f"{TORCHVISION} {name.replace('-', '')}; Huang et al. CVPR 2017 Table 1",
                   description=f"DenseNet-BC, growth {growth}, blocks {blocks}, 224x224", published_params=pub)


# ---------------------------------------------------------------------------------------- GAN generators
def dcgan_generator(z: int = 100) -> LayerTable:
    """The DCGAN generator of Radford et al. (ICLR 2016) Fig. 1 for 64x64 images.

    Fig. 1: z (100) -> project and reshape to 4x4x1024 -> four fractionally-strided convolutions
    to 8x8x512, 16x16x256, 32x32x128, 64x64x3, with batch norm and ReLU between (tanh at the
    output, Section 3). Kernel 5x5, stride 2 as drawn in Fig. 1; padding 2 with output_padding
    1 (TensorFlow "SAME", exactly doubling the size). The projection is an fc layer with bias,
    the deconvolutions have no bias (batch norm follows; the last has a bias).
    """
    b = CNNBuilder("dcgan-generator", (z,))
    x = b.fc(b.input, 4 * 4 * 1024, name="project")
    x = b.reshape(x, (1024, 4, 4), name="reshape")
    x = b.relu(b.bn(x, name="project.bn"), name="project.relu")
    for i, out in enumerate((512, 256, 128), start=1):
        x = b.deconv(x, out, 5, 2, 2, output_padding=1, bias=False, name=f"deconv{i}")
        x = b.relu(b.bn(x, name=f"deconv{i}.bn"), name=f"deconv{i}.relu")
    x = b.deconv(x, 3, 5, 2, 2, output_padding=1, bias=True, name="deconv4")
    b.tanh(x, name="tanh")
    return b.build(kind="gan", source="Radford, Metz, Chintala, ICLR 2016, Fig. 1 (64x64 generator)",
                   description="DCGAN generator: z=100 -> 4x4x1024 -> 64x64x3, 5x5 stride-2 transpose convs")


def ebgan_generator(z: int = 100) -> LayerTable:
    """The EB-GAN generator, as ASSUMED here (Zhao, Mathieu, LeCun, ICLR 2017).

    EB-GAN's 64x64 (LSUN/CelebA) generator follows DCGAN's; we do not have its exact
    hyperparameters from the paper text, so we ASSUME the common DCGAN-style PyTorch layout:
    z (100, as 100x1x1) -> transpose conv 4x4 stride 1 padding 0 to 4x4x512 -> three 4x4
    stride-2 padding-1 transpose convs to 8x8x256, 16x16x128, 32x32x64 -> a last one to
    64x64x3; no biases, BN + ReLU between, tanh at the output. The layer shapes are therefore an
    assumption (see docs/workloads.md), not a figure from the paper.
    """
    b = CNNBuilder("ebgan-generator", (z, 1, 1))
    x = b.deconv(b.input, 512, 4, 1, 0, bias=False, name="deconv1")
    x = b.relu(b.bn(x, name="deconv1.bn"), name="deconv1.relu")
    for i, out in enumerate((256, 128, 64), start=2):
        x = b.deconv(x, out, 4, 2, 1, bias=False, name=f"deconv{i}")
        x = b.relu(b.bn(x, name=f"deconv{i}.bn"), name=f"deconv{i}.relu")
    x = b.deconv(x, 3, 4, 2, 1, bias=False, name="deconv5")
    b.tanh(x, name="tanh")
    return b.build(kind="gan", source="Zhao, Mathieu, LeCun, ICLR 2017 (EB-GAN); layer shapes ASSUMED "
                                      "DCGAN-style (see docs/workloads.md)",
                   description="EB-GAN generator (assumed): z=100 -> 4x4x512 -> 64x64x3, 4x4 transpose convs")


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


# ---------------------------------------------------------------------------------------- CIFAR-10 models
def resnet18_cifar(num_classes: int = 10) -> LayerTable:
    """ResNet-18 for 32x32 CIFAR images as kuangliu/pytorch-cifar defines it (the common
    reference): 3x3 stem conv (64, no max pool), basic units (2, 2, 2, 2), 1x1-conv + BN
    projection shortcuts, 4x4 average pool, fc 512 -> 10."""
    b = CNNBuilder("resnet-18-cifar", (3, 32, 32))
    x = b.conv_bn_relu(b.input, 64, 3, 1, 1, name="conv1")
    in_c = 64
    for s, width in enumerate((64, 128, 256, 512), start=1):
        for u in range(2):
            stride = 2 if (s > 1 and u == 0) else 1
            nm = f"layer{s}.{u}"
            y = b.conv_bn_relu(x, width, 3, stride, 1, name=f"{nm}.1")
            y = b.conv_bn_relu(y, width, 3, 1, 1, name=f"{nm}.2", relu=False)
            sc = (b.conv_bn_relu(x, width, 1, stride, name=f"{nm}.shortcut", relu=False)
                  if (stride != 1 or in_c != width) else x)
            x = b.relu(b.add([y, sc], name=f"{nm}.add"), name=f"{nm}.relu")
            in_c = width
    x = b.avgpool(x, 4, name="avgpool")
    b.fc(x, num_classes, name="linear")
    return b.build(source="kuangliu/pytorch-cifar models/resnet.py (ResNet18); He et al. CVPR 2016",
                   description="ResNet-18 for CIFAR-10 (32x32, no max pool)",
                   published_params=11_173_962 if num_classes == 10 else None)


def vgg16_cifar(num_classes: int = 10) -> LayerTable:
    """VGG-16 for 32x32 CIFAR images as kuangliu/pytorch-cifar defines it: configuration D convs
    (with bias) each followed by batch norm and ReLU, five 2x2 max pools to 1x1x512, fc 512 -> 10."""
    b = CNNBuilder("vgg16-cifar", (3, 32, 32))
    x = b.input
    block, idx = 1, 1
    for v in VGG_CFGS[16]:
        if v == "M":
            x = b.maxpool(x, 2, 2, name=f"pool{block}")
            block, idx = block + 1, 1
        else:
            x = b.conv(x, v, 3, padding=1, name=f"conv{block}_{idx}")
            x = b.relu(b.bn(x, name=f"bn{block}_{idx}"), name=f"relu{block}_{idx}")
            idx += 1
    b.fc(x, num_classes, name="classifier")
    return b.build(source="kuangliu/pytorch-cifar models/vgg.py (VGG('VGG16')); Simonyan & Zisserman 2015",
                   description="VGG-16 with batch norm for CIFAR-10 (32x32), one fc layer",
                   published_params=14_728_266 if num_classes == 10 else None)


def cifar10_quick() -> LayerTable:
    """Caffe's ``cifar10_quick`` (examples/cifar10/cifar10_quick_train_test.prototxt), the
    small net Poseidon also ran in Caffe: conv 32-32-64 (5x5, pad 2), 3x3 stride-2 pools (Caffe
    rounds pooled sizes up), fc 64 -> 10. Caffe's pool order: max, relu | relu, avg | relu, avg."""
    b = CNNBuilder("cifar10-quick", (3, 32, 32))
    x = b.conv(b.input, 32, 5, padding=2, name="conv1")
    x = b.relu(b.maxpool(x, 3, 2, ceil_mode=True, name="pool1"), name="relu1")
    x = b.relu(b.conv(x, 32, 5, padding=2, name="conv2"), name="relu2")
    x = b.avgpool(x, 3, 2, ceil_mode=True, name="pool2")
    x = b.relu(b.conv(x, 64, 5, padding=2, name="conv3"), name="relu3")
    x = b.avgpool(x, 3, 2, ceil_mode=True, name="pool3")
    x = b.fc(x, 64, name="ip1")
    b.softmax(b.fc(x, 10, name="ip2"), name="prob")
    return b.build(source="BVLC Caffe examples/cifar10/cifar10_quick_train_test.prototxt",
                   description="Caffe CIFAR-10 quick: 3 conv + 2 fc, 32x32")
