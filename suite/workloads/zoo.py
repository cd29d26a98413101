"""The built-in workloads, as tables (names are what ``get_workload`` and ``--workload`` accept).

Every builder is lazy (called on first use, then cached by :func:`suite.workloads.get_workload`).
docs/workloads.md lists each workload with its source and pinned figures.
"""

from __future__ import annotations

from functools import partial

from collections.abc import Callable

import suite.workloads.architectures as A
from suite.workloads.types import Workload

#: name -> zero-argument builder; :func:`suite.workloads._load_plugins` registers them (this module
#: fills tables and never imports the registry, so the dependency runs one way)
BUILDERS: dict[str, Callable[[], Workload]] = {}
#: (regular expression, builder of the groups, example name)
PATTERNS: list[tuple[str, Callable[..., Workload], str]] = []


def register(name: str, builder: Callable[[], Workload]) -> None:
    if name in BUILDERS:
        raise ValueError(f"suite/workloads/zoo.py: workload {name!r} is defined twice")
    BUILDERS[name] = builder


def register_pattern(pattern: str, builder: Callable[..., Workload], example: str) -> None:
    PATTERNS.append((pattern, builder, example))


# CNNs (torchvision definitions unless stated)
register("alexnet", A.alexnet)
register("alexnet-caffe", A.alexnet_caffe)
register("vgg11", partial(A.vgg, 11))
register("vgg13", partial(A.vgg, 13))
register("vgg16", partial(A.vgg, 16))
register("vgg19", partial(A.vgg, 19))
register("vgg19-22k", partial(A.vgg, 19, num_classes=21841, name="vgg19-22k"))
register("googlenet", partial(A.googlenet, aux=False))
register("googlenet-aux", partial(A.googlenet, aux=True))
register("inception-v3", partial(A.inception_v3, aux=True))
register("inception-v3-noaux", partial(A.inception_v3, aux=False))
for _d in (18, 34, 50, 101, 152, 200):
    register(f"resnet-{_d}", partial(A.resnet, _d))
def _resnet(depth: str) -> Workload:
    from suite.errors import WorkloadError
    from suite.limits import check_layer_count

    try:  # a depth no one trains (resnet-1000000) is refused before its table is built
        check_layer_count(int(depth), f"workload 'resnet-{depth}': depth")
    except ValueError as e:
        raise WorkloadError(str(e)) from None
    return A.resnet(int(depth))


register_pattern(r"resnet-(\d+)", _resnet, example="resnet-1001")
register("inception-v4", A.inception_v4)
for _name, (_g, _blocks, _init) in A.DENSENET_CFGS.items():
    register(_name, partial(A.densenet, _g, _blocks, _init, name=_name))
register("resnet-18-cifar", A.resnet18_cifar)
register("vgg16-cifar", A.vgg16_cifar)
register("cifar10-quick", A.cifar10_quick)
register("dcgan-generator", A.dcgan_generator)
register("ebgan-generator", A.ebgan_generator)

# Transformers from hyperparameters (suite.workloads.transformer.SPECS)
from suite.workloads.transformer import SPECS as _SPECS, transformer as _transformer  # noqa: E402

for _name, _spec in _SPECS.items():
    register(_name, partial(_transformer, _spec))

# Encoder-decoder transformers (Vaswani et al. 2017 Table 3 "base")
from suite.workloads.transformer import ENCODER_DECODER as _ENCDEC, encoder_decoder as _encdec  # noqa: E402

for _name, (_spec, _dec) in _ENCDEC.items():
    register(_name, partial(_encdec, _spec, _dec))

# Datasets (all local: scikit-learn bundled files and seeded generators)
import suite.workloads.datasets as _D  # noqa: E402

for _name in _D.SKLEARN_BUNDLED:
    register(_name, partial(_D.sklearn_dataset, _name))
register("moons", partial(_D.moons, name="moons"))
register("circles", partial(_D.circles, name="circles"))
register("blobs", partial(_D.blobs, name="blobs"))
register("gaussian-mixture", partial(_D.gaussian_mixture, name="gaussian-mixture"))
register("powerlaw-graph", partial(_D.powerlaw_graph, name="powerlaw-graph"))


def _transformer_at_seq(name: str, seq: str) -> Workload:
    from suite.errors import WorkloadError

    if name not in _SPECS:
        raise WorkloadError(f"unknown transformer {name!r} in {name}@seq{seq}; one of {', '.join(sorted(_SPECS))}")
    return _transformer(_SPECS[name], seq=int(seq))


# Any transformer at another sequence length: e.g. "gpt2@seq512", "llama2-7b@seq2048"
register_pattern(r"([a-z0-9.\-]+)@seq(\d+)", _transformer_at_seq, example="gpt2@seq512")
