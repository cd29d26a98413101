"""Layer tables of convolutional networks, computed from their architecture definitions.

A :class:`CNNBuilder` walks an architecture op by op (conv, deconv, fc, pooling, norms,
activations, dropout, residual add, concat, softmax), computes every output shape from the
input shape and the op's hyperparameters, and records per layer (per sample): parameters,
forward FLOPs, backward FLOPs split into data and weight gradients, output (activation) bytes
and a workspace hint. Nothing is typed in by hand: the parameter counts the tests pin
(torchvision's) follow from the definitions below.

Conventions (those of :mod:`suite.workloads.types`, plus):

* conv / deconv / fc: ``fwd_flops = 2 * MACs`` (bias additions not counted), ``bwd_data_flops =
  bwd_weight_flops = fwd_flops`` (the two GEMMs of backprop have the forward's MAC count), except
  that a layer reading the model input directly has ``bwd_data_flops = 0``.
  ``attrs["macs"]`` holds the MACs.
* Element-wise layers carry approximate operation counts per element (documented at each op;
  e.g. ReLU 1 forward, 1 backward): they matter to a roofline only through their bytes.
* ``workspace_bytes`` of a conv is its im2col buffer (C_in/groups * kh * kw * H_out * W_out
  elements), of a deconv its col2im buffer (C_out/groups * kh * kw * H_in * W_in elements): the
  GEMM-lowering workspace, a hint rather than what a given cuDNN algorithm asks for.
* Graph structure: ``attrs["inputs"]`` names the producer layers of each layer (``"input"`` is
  the model input). Layers are listed in a valid topological (forward) order; the branches of
  an inception block are listed one branch after the other, each branch's first layer reading
  the block input, followed by a ``concat`` layer whose ``inputs`` are the branch ends in
  concatenation order. A residual ``add`` lists the main path first, then the shortcut.

References
----------
.. [1] torchvision.models (v0.15+), the definitions mirrored here: alexnet, vgg, googlenet,
   inception, resnet, densenet.
.. [2] K. He et al., "Deep Residual Learning for Image Recognition", CVPR 2016, Table 1.
.. [3] A. Radford et al., "Unsupervised Representation Learning with Deep Convolutional GANs",
   ICLR 2016, Fig. 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from suite.errors import WorkloadError
from suite.workloads.types import Layer, LayerTable

__all__ = ["T", "CNNBuilder", "conv_out", "pool_out", "deconv_out", "TORCHVISION"]

#: how the CNN builders cite torchvision's definitions (the version their counts were checked against)
TORCHVISION = "torchvision.models (v0.15+)"

#: a kernel, stride, padding or dilation: one int for both axes, or (height, width)
Size = int | tuple[int, int]


def _pair(v: Size) -> tuple[int, int]:
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise WorkloadError(f"expected an int or a pair, given {v!r}")
        return int(v[0]), int(v[1])
    return int(v), int(v)


def conv_out(size: int, k: int, s: int = 1, p: int = 0, d: int = 1) -> int:
    """Output length of a convolution along one axis: ``floor((n + 2p - d(k-1) - 1)/s) + 1``."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def pool_out(size: int, k: int, s: int, p: int = 0, ceil_mode: bool = False) -> int:
    """Output length of a pooling window along one axis (PyTorch's rule, ceil_mode included)."""
    num = size + 2 * p - (k - 1) - 1
    if ceil_mode:
        out = -(-num // s) + 1
        if (out - 1) * s >= size + p:  # the last window must start inside the input or left padding
            out -= 1
        return out
    return num // s + 1


def deconv_out(size: int, k: int, s: int = 1, p: int = 0, output_padding: int = 0, d: int = 1) -> int:
    """Output length of a transpose convolution: ``(n-1)s - 2p + d(k-1) + output_padding + 1``."""
    return (size - 1) * s - 2 * p + d * (k - 1) + output_padding + 1


@dataclass(frozen=True)
class T:
    """A tensor flowing through the builder: the producing layer's name and the per-sample shape."""

    name: str
    shape: tuple[int, ...]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


class CNNBuilder:
    """Builds a :class:`LayerTable` op by op.

    Parameters
    ----------
    name : str
        Workload name.
    input_shape : tuple of int
        Per-sample input, (C, H, W) for images or (Z,) for a latent vector.
    dtype_bytes : int, optional
        Bytes per element (4 = fp32).

    Examples
    --------
    >>> b = CNNBuilder("tiny", (3, 32, 32))
    >>> x = b.conv(b.input, 8, 3, padding=1)
    >>> x = b.relu(x)
    >>> b.fc(x, 10).shape
    (10,)
    """

    def __init__(self, name: str, input_shape: tuple[int, ...], dtype_bytes: int = 4):
        self.name = name
        self.dtype_bytes = dtype_bytes
        self.input = T("input", tuple(int(v) for v in input_shape))
        self.layers: list[Layer] = []
        self._names: set[str] = set()
        self._count: dict[str, int] = {}

    # ------------------------------------------------------------------ core
    def _name(self, kind: str, name: str | None) -> str:
        if name is None:
            n = self._count.get(kind, 0) + 1
            self._count[kind] = n
            name = f"{kind}{n}"
        if name in self._names:
            raise WorkloadError(f"{self.name}: duplicate layer name {name!r}")
        self._names.add(name)
        return name

    def _add(self, kind: str, name: str | None, inputs: list[T], out_shape: tuple[int, ...], *,
             params: int = 0, fwd: float = 0.0, bwd_data: float = 0.0, bwd_weight: float = 0.0,
             workspace_elems: float = 0.0, grad_shape: tuple[int, int] | None = None, **attrs: Any) -> T:
        name = self._name(kind, name)
        if all(t.name == "input" for t in inputs):
            bwd_data = 0.0  # no gradient is needed w.r.t. the model input
        in_shape = inputs[0].shape if len(inputs) == 1 else _concat_shape([t.shape for t in inputs], attrs)
        attrs["inputs"] = [t.name for t in inputs]
        if len(inputs) > 1:
            attrs["input_shapes"] = [t.shape for t in inputs]
        out_shape = tuple(int(v) for v in out_shape)
        if any(v <= 0 for v in out_shape):
            raise WorkloadError(f"{self.name}: layer {name!r} ({kind}) has an empty output {out_shape} "
                                f"from input {in_shape}; the input is too small for this architecture")
        self.layers.append(Layer(
            name=name, kind=kind, input_shape=in_shape, output_shape=out_shape, params=int(params),
            fwd_flops=float(fwd), bwd_data_flops=float(bwd_data), bwd_weight_flops=float(bwd_weight),
            activation_bytes=float(math.prod(out_shape) * self.dtype_bytes),
            workspace_bytes=float(workspace_elems * self.dtype_bytes), grad_shape=grad_shape, attrs=attrs))
        return T(name, out_shape)

    def build(self, *, kind: str = "cnn", source: str = "", description: str = "",
              published_params: int | None = None) -> LayerTable:
        """The finished table."""
        return LayerTable(name=self.name, kind=kind, source=source, description=description,
                          layers=tuple(self.layers), input_shape=self.input.shape,
                          dtype_bytes=self.dtype_bytes, published_params=published_params)

    # ------------------------------------------------------------------ layers with weights
    def conv(self, x: T, out: int, kernel: Size, stride: Size = 1, padding: Size = 0, dilation: Size = 1, groups: int = 1,
             bias: bool = True, name: str | None = None) -> T:
        """2-D convolution. Params ``out*(C/groups)*kh*kw (+out)``; MACs ``out*Ho*Wo*(C/groups)*kh*kw``."""
        c, h, w = _chw(x, self.name, "conv")
        kh, kw = _pair(kernel)
        sh, sw = _pair(stride)
        ph, pw = _pair(padding)
        dh, dw = _pair(dilation)
        if c % groups or out % groups:
            raise WorkloadError(f"{self.name}: conv groups={groups} must divide in={c} and out={out} channels")
        ho, wo = conv_out(h, kh, sh, ph, dh), conv_out(w, kw, sw, pw, dw)
        cin_g = c // groups
        macs = out * ho * wo * cin_g * kh * kw
        params = out * cin_g * kh * kw + (out if bias else 0)
        return self._add("conv", name, [x], (out, ho, wo), params=params, fwd=2 * macs, bwd_data=2 * macs,
                         bwd_weight=2 * macs, workspace_elems=cin_g * kh * kw * ho * wo, macs=macs,
                         kernel=(kh, kw), stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw),
                         groups=groups, bias=bias)

    def deconv(self, x: T, out: int, kernel: Size, stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
               dilation: Size = 1,
               groups: int = 1, bias: bool = True, name: str | None = None) -> T:
        """Transpose convolution (``kind="deconv"``). MACs ``C*H*W*(out/groups)*kh*kw`` (every input
        element scattered through the kernel; no multiplication by inserted zeros)."""
        c, h, w = _chw(x, self.name, "deconv")
        kh, kw = _pair(kernel)
        sh, sw = _pair(stride)
        ph, pw = _pair(padding)
        oph, opw = _pair(output_padding)
        dh, dw = _pair(dilation)
        if c % groups or out % groups:
            raise WorkloadError(f"{self.name}: deconv groups={groups} must divide in={c} and out={out} channels")
        ho, wo = deconv_out(h, kh, sh, ph, oph, dh), deconv_out(w, kw, sw, pw, opw, dw)
        cout_g = out // groups
        macs = c * h * w * cout_g * kh * kw
        params = c * cout_g * kh * kw + (out if bias else 0)
        return self._add("deconv", name, [x], (out, ho, wo), params=params, fwd=2 * macs, bwd_data=2 * macs,
                         bwd_weight=2 * macs, workspace_elems=cout_g * kh * kw * h * w, macs=macs,
                         kernel=(kh, kw), stride=(sh, sw), padding=(ph, pw), output_padding=(oph, opw),
                         dilation=(dh, dw), groups=groups, bias=bias)

    def fc(self, x: T, out: int, bias: bool = True, name: str | None = None) -> T:
        """Fully connected layer on the flattened input. ``grad_shape = (out, in)``."""
        n_in = x.numel
        macs = n_in * out
        return self._add("fc", name, [x], (out,), params=macs + (out if bias else 0), fwd=2 * macs,
                         bwd_data=2 * macs, bwd_weight=2 * macs, grad_shape=(out, n_in), macs=macs,
                         in_features=n_in, out_features=out, bias=bias)

    def bn(self, x: T, name: str | None = None, eps: float = 1e-5) -> T:
        """Batch norm: 2*C params (scale, shift; running statistics are buffers, not parameters).
        Approx. 4 FLOPs/element forward (normalise, scale, shift), 4 backward (data), 2 (weight)."""
        n = x.numel
        c = x.shape[0]
        return self._add("norm", name, [x], x.shape, params=2 * c, fwd=4 * n, bwd_data=4 * n, bwd_weight=2 * n,
                         norm="batch", eps=eps)

    # ------------------------------------------------------------------ element-wise and pooling
    def relu(self, x: T, name: str | None = None) -> T:
        """ReLU: 1 op/element forward, 1 backward."""
        return self._add("act", name, [x], x.shape, fwd=x.numel, bwd_data=x.numel, fn="relu")

    def tanh(self, x: T, name: str | None = None) -> T:
        """tanh: counted as 1 op/element forward, 2 backward (1 - y^2, times the gradient)."""
        return self._add("act", name, [x], x.shape, fwd=x.numel, bwd_data=2 * x.numel, fn="tanh")

    def lrn(self, x: T, size: int = 5, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0,
            name: str | None = None) -> T:
        """Local response normalisation across channels: approx. ``2*size + 3`` ops/element forward,
        twice that backward."""
        ops = (2 * size + 3) * x.numel
        return self._add("lrn", name, [x], x.shape, fwd=ops, bwd_data=2 * ops, size=size, alpha=alpha,
                         beta=beta, k=k)

    def dropout(self, x: T, p: float = 0.5, name: str | None = None) -> T:
        """Dropout: 1 op/element each way (the mask multiply)."""
        return self._add("dropout", name, [x], x.shape, fwd=x.numel, bwd_data=x.numel, p=p)

    def softmax(self, x: T, name: str | None = None) -> T:
        """Softmax over the classes: approx. 3 ops/element forward (exp, sum, divide), 2 backward."""
        return self._add("softmax", name, [x], x.shape, fwd=3 * x.numel, bwd_data=2 * x.numel)

    def maxpool(self, x: T, kernel: Size, stride: Size | None = None, padding: Size = 0, ceil_mode: bool = False,
                name: str | None = None) -> T:
        return self._pool("max", x, kernel, stride, padding, ceil_mode, name)

    def avgpool(self, x: T, kernel: Size, stride: Size | None = None, padding: Size = 0, ceil_mode: bool = False,
                name: str | None = None) -> T:
        return self._pool("avg", x, kernel, stride, padding, ceil_mode, name)

    def _pool(self, mode: str, x: T, kernel: Size, stride: Size | None, padding: Size, ceil_mode: bool, name: str | None) -> T:
        """Pooling: ``kh*kw`` ops per output element forward; 1 op per input element backward."""
        c, h, w = _chw(x, self.name, f"{mode}pool")
        kh, kw = _pair(kernel)
        sh, sw = _pair(stride if stride is not None else kernel)
        ph, pw = _pair(padding)
        ho, wo = pool_out(h, kh, sh, ph, ceil_mode), pool_out(w, kw, sw, pw, ceil_mode)
        return self._add("pool", name, [x], (c, ho, wo), fwd=c * ho * wo * kh * kw, bwd_data=x.numel,
                         pool=mode, kernel=(kh, kw), stride=(sh, sw), padding=(ph, pw), ceil_mode=ceil_mode)

    def adaptive_avgpool(self, x: T, output_size: Size = 1, name: str | None = None) -> T:
        """Adaptive average pooling to ``output_size``: each input element summed about once
        (exactly once when the size divides), 1 op per input element each way."""
        c, _h, _w = _chw(x, self.name, "adaptive_avgpool")
        oh, ow = _pair(output_size)
        return self._add("pool", name, [x], (c, oh, ow), fwd=x.numel, bwd_data=x.numel, pool="adaptive_avg",
                         output_size=(oh, ow))

    def add(self, xs: list[T], name: str | None = None) -> T:
        """Residual (element-wise) sum of same-shaped tensors: ``(k-1)`` adds/element forward;
        backward passes the gradient through (0 FLOPs)."""
        shapes = {t.shape for t in xs}
        if len(shapes) != 1:
            raise WorkloadError(f"{self.name}: residual add of different shapes {[t.shape for t in xs]}")
        return self._add("add", name, list(xs), xs[0].shape, fwd=(len(xs) - 1) * xs[0].numel, fn="add")

    def concat(self, xs: list[T], name: str | None = None) -> T:
        """Channel concatenation (a copy, 0 FLOPs). ``input_shape`` is the concatenated shape;
        ``attrs["input_shapes"]`` the parts."""
        hw = {t.shape[1:] for t in xs}
        if len(hw) != 1:
            raise WorkloadError(f"{self.name}: concat of different spatial shapes {[t.shape for t in xs]}")
        c = sum(t.shape[0] for t in xs)
        return self._add("concat", name, list(xs), (c, *xs[0].shape[1:]), axis=0)

    def reshape(self, x: T, shape: tuple[int, ...], name: str | None = None) -> T:
        """A view (0 FLOPs), e.g. a latent vector to (C, H, W)."""
        if math.prod(shape) != x.numel:
            raise WorkloadError(f"{self.name}: cannot reshape {x.shape} to {shape}")
        return self._add("reshape", name, [x], tuple(shape))

    # ------------------------------------------------------------------ composites
    def conv_bn_relu(self, x: T, out: int, kernel: Size, stride: Size = 1, padding: Size = 0, name: str = "",
                     eps: float = 1e-5, relu: bool = True, dilation: Size = 1, groups: int = 1) -> T:
        """conv (no bias) -> batch norm -> ReLU, torchvision's ``BasicConv2d`` pattern."""
        x = self.conv(x, out, kernel, stride, padding, dilation, groups, bias=False, name=f"{name}.conv")
        x = self.bn(x, name=f"{name}.bn", eps=eps)
        return self.relu(x, name=f"{name}.relu") if relu else x


def _chw(x: T, model: str, op: str) -> tuple[int, int, int]:
    if len(x.shape) != 3:
        raise WorkloadError(f"{model}: {op} needs a (C, H, W) input, given {x.shape} from layer {x.name!r}")
    return x.shape[0], x.shape[1], x.shape[2]


def _concat_shape(shapes: list[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...]:
    if attrs.get("axis") == 0:
        return (sum(s[0] for s in shapes), *shapes[0][1:])
    return shapes[0]
