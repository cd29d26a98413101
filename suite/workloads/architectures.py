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
from suite.workloads.cnn import TORCHVISION, CNNBuilder
from suite.workloads.inception import googlenet, inception_v3, inception_v4
from suite.workloads.types import LayerTable

__all__ = ["alexnet", "alexnet_caffe", "vgg", "googlenet", "inception_v3", "inception_v4", "resnet",
           "resnet_stages", "densenet", "DENSENET_CFGS", "resnet18_cifar", "vgg16_cifar", "cifar10_quick", "dcgan_generator", "ebgan_generator", "VGG_CFGS", "RESNET_STAGES"]

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
VGG_CFGS: dict[int, list[int | str]] = {
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
        if isinstance(v, str):  # "M": a max pool
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
        given = tuple(int(u) for u in units)
        if len(given) != 4 or min(given) < 1:
            raise WorkloadError(f"resnet: units: expected 4 positive bottleneck counts, got {given}")
        units = (given[0], given[1], given[2], given[3])
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
        if isinstance(v, str):  # "M": a max pool
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
