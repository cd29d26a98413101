"""A workload's content hash is the SHA-256 of its content's JSON; the hash writes that JSON from
the workload without copying what the encoder writes alike (suite.workloads.types._json_ready).
The text must be the one content() gives, for every workload a context knows, or every case key
over it would move."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from suite.workloads.types import Layer, LayerTable, Workload, _json_ready, plain


def _text(x):
    return json.dumps(x, sort_keys=True, default=str, separators=(",", ":"))


@pytest.fixture(scope="module")
def workloads(shared_context):
    ctx = shared_context
    names = ctx.workloads.names() + ["resnet-1001", "vgg19-22k"]
    return [ctx.workload(n) for n in names]


def test_every_workload_writes_the_text_its_content_gives(workloads):
    assert len(workloads) > 100
    for w in workloads:
        if type(w).content is Workload.content:
            assert _text(_json_ready(w)) == _text(w.content()), w.name


#: content hashes dlsys-suite 0.3.1 (6efac7e, which hashed content()'s JSON) gave these workloads: a
#: case key over them must not move
HASHES_0_3_1 = {"alexnet-caffe": "d6be78ec1031be7d", "resnet-50": "6cf1833d14451010",
                "resnet-1001": "ece9a270d617abb1", "vgg19-22k": "aa7ef1e2bbd9e88e", "bert-large": "b47f888acc70af2d"}


@pytest.mark.parametrize("name", sorted(HASHES_0_3_1))
def test_the_hashes_0_3_1_gave(workloads, name):
    w = next(w for w in workloads if w.name == name)
    assert Workload._content_hash.func(w) == HASHES_0_3_1[name]  # (computed now, not the cached value)


@dataclass(frozen=True)
class _Shape:
    c: int
    h: float


def test_tuples_dicts_and_nested_dataclasses_as_plain_writes_them():
    layer = Layer("l", "conv", (3, 224, 224), (64, 112, 112), params=9408, fwd_flops=-0.0, grad_shape=None,
                  attrs={"kernel": (7, 7), "shape": _Shape(1, 2.5), "inputs": ("x",), "pairs": [(1, 2)],
                         "flag": True, "none": None, "nested": {"k": [_Shape(2, 0.0)]}})
    table = LayerTable(name="t", kind="cnn", layers=(layer,), input_shape=(3, 224, 224))
    assert _text(_json_ready(table)) == _text(plain(table))
    assert '"fwd_flops":-0.0' in _text(_json_ready(table)) and '"shape":{"c":1,"h":2.5}' in _text(_json_ready(table))
