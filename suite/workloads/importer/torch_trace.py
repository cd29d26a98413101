"""Trace a PyTorch model into a layer table (needs the optional ``[torch]`` extra).

:func:`from_torch` runs the model once on an input of the given shape and records, per layer,
the kind, the per-sample input and output shapes, the trainable parameters, the MACs and the
forward / backward FLOPs and output bytes, with the conventions of :mod:`suite.workloads.types`
and the same per-op counts as the zoo's builder (:mod:`suite.workloads.cnn`), so a traced
torchvision model and the zoo's table of it agree.

How
---
1. **torch.fx** (``torch.fx.symbolic_trace`` + ``ShapeProp``): every ``call_module`` of a leaf
   module, and every tensor-producing function (``add``, ``cat``, ``matmul``, ``relu``,
   ``scaled_dot_product_attention``, ...) becomes a layer; pure views (``flatten``, ``reshape``,
   ``permute``, ``getitem``, ...) are not layers (they allocate nothing) and pass their producer
   on, so ``attrs["inputs"]`` names the real producer layers (the graph is kept).
2. **Forward hooks**, when fx cannot trace the model (data-dependent control flow): a hook on
   every leaf module records its call in execution order. Functions called outside modules
   (residual adds, matmuls in ``forward``) are not seen one by one: the MACs of the matmuls and
   convolutions among them (PyTorch's ATen FLOP counter over the run, less its count inside the
   leaf modules) are one ``functional`` layer (kind ``other``) at the end, position unknown.
   A layer's ``inputs`` are found by tensor identity (falling back to the previous layer);
   ``attrs["trace"]`` says ``"hooks"``.

The model is built and run on PyTorch's ``meta`` device first (no memory, no arithmetic: shapes
only); a model that cannot run there (e.g. it reads a tensor's value) is built again and run
on the CPU. Models are traced in ``eval()`` mode unless ``train=True``.

Per-layer counts (per sample; ``B`` = the batch, the first dimension of the input)
--------------------------------------------------------------------------------
* Conv (1-3 d): MACs = ``numel(out) * C_in/groups * prod(kernel)``; deconv (transpose conv):
  ``numel(in) * C_out/groups * prod(kernel)``; Linear: ``numel(out) * in_features`` (the zoo's
  :meth:`~suite.workloads.cnn.CNNBuilder.conv`, ``deconv``, ``fc``). Bias additions are not
  counted. ``fwd_flops = 2 MACs``, ``bwd_data_flops = bwd_weight_flops = fwd_flops``.
* ``nn.MultiheadAttention`` (kind ``attention``): projections ``L E^2 + S E k_dim + S E v_dim +
  L E^2`` MACs and the attention core ``L S E`` (``Q K^T``) + ``L S E`` (``softmax V``) MACs (the
  core, as in :mod:`suite.workloads.transformer`, has data gradients only: backward data =
  projections + 2 x core forward FLOPs, weight = projections). ``matmul`` / ``bmm`` /
  ``scaled_dot_product_attention`` outside modules count the same way (kind ``matmul``,
  ``attention``).
* Element-wise ops as in :mod:`suite.workloads.cnn`: ReLU and other activations 1 op/element
  forward and backward (tanh, sigmoid: 2 backward), batch/layer/group norm 4 forward,
  4 backward data, 2 backward weight, dropout 1 and 1, softmax 3 and 2, pooling ``prod(kernel)``
  per output element forward and 1 per input element backward (adaptive pooling: 1 per input
  element each way), residual add ``(k - 1)`` per element forward, concat 0.
* A module or function the tracer does not know (kind ``other``; e.g. a function fx keeps
  opaque with ``torch.fx.wrap``) gets its MACs from PyTorch's ATen-level FLOP counter
  (``torch.utils.flop_counter.FlopCounterMode``: matmuls, convolutions, attention) during the fx
  run (``attrs["macs_from"] = "aten"``), else one op per output element. Hooks cannot look inside.
* A layer reading only the model input has ``bwd_data_flops = 0`` (no gradient w.r.t. the input).
* ``params``: each trainable parameter is counted once (shared modules and tied weights too),
  at the first layer that uses it; parameters used directly in ``forward`` (e.g. ViT's class
  token and position embedding) go to the first layer consuming them; parameters of modules
  the trace never ran (heads off in eval mode; with hooks also parameters used directly in
  ``forward``) are kept as layers of kind ``param`` with zero FLOPs, no inputs and empty shapes
  (``attrs["unattributed"] = True``, ``attrs["shape"]`` the parameter's), so the table's total equals
  ``sum(p.numel() for p in model.parameters() if p.requires_grad)``.
* ``activation_bytes``: the layer's output per sample at ``dtype_bytes`` (default: the element
  size of the model's parameters, 4 for fp32).
* Per sample means: every activation is taken to carry the batch as its first dimension, which
  the shapes drop and the counts divide out (a sequence-first ``nn.MultiheadAttention`` is
  counted right, but its recorded shapes keep the batch and drop the sequence).

References
----------
.. [1] PyTorch documentation, ``torch.fx`` (symbolic tracing, ``ShapeProp``) and
   ``torch.nn.Module.register_forward_hook``.
.. [2] torchvision.models documentation, the "GFLOPS" column (multiply-adds at the weights'
   input size, eval mode), against which the zoo's tables and these traces are tested.
"""

from __future__ import annotations

import importlib
import math
import operator
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from suite.errors import WorkloadError
from suite.workloads.types import Layer, LayerTable

__all__ = ["from_torch", "load_factory", "parse_shape"]


def _torch():
    try:
        import torch  # noqa: F401
        import torch.fx  # noqa: F401
    except ImportError:  # pragma: no cover - exercised where torch is absent
        raise WorkloadError("importing a PyTorch model needs torch: pip install 'dlsys-suite[torch]' "
                            "(the --hf-config path does not)") from None
    import torch

    return torch


def parse_shape(text: str) -> tuple[int, ...]:
    """``"1,3,224,224"`` (or ``1x3x224x224``) -> ``(1, 3, 224, 224)``. Raises WorkloadError."""
    parts = [p for p in text.replace("x", ",").replace(" ", "").split(",") if p]
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        shape = ()
    if len(shape) < 1 or any(v <= 0 for v in shape):
        raise WorkloadError(f"--input-shape: expected positive integers separated by commas, batch first "
                            f"(e.g. 1,3,224,224), given {text!r}")
    return shape


def load_factory(ref: str, kwargs: dict | None = None) -> Callable[[], Any]:
    """A zero-argument callable building the model named by ``"package.module:factory"``.

    ``factory`` may be a function or class (called with *kwargs*) or an ``nn.Module`` instance
    (returned as is). The current directory is put on ``sys.path`` (as ``python -m`` does), so
    ``my_models:build`` finds ``./my_models.py``.

    Raises
    ------
    WorkloadError
        Not of the form ``module:attr``, a module that does not import, or a missing attribute.
    """
    torch = _torch()
    mod_name, sep, attr = ref.partition(":")
    if not sep or not mod_name or not attr:
        raise WorkloadError(f"--torch: expected package.module:factory (e.g. torchvision.models:resnet50), given {ref!r}")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        mod = importlib.import_module(mod_name)
    except Exception as e:  # noqa: BLE001 - the user's module: any error is theirs, reported in one line
        raise WorkloadError(f"--torch: cannot import module {mod_name!r}: {type(e).__name__}: {e}") from None
    obj: Any = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise WorkloadError(f"--torch: module {mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    kw = dict(kwargs or {})
    if isinstance(obj, torch.nn.Module):
        if kw:
            raise WorkloadError(f"--torch: {ref} is a module instance; it takes no --arg")
        return lambda: obj
    if not callable(obj):
        raise WorkloadError(f"--torch: {ref} is a {type(obj).__name__}, expected a callable returning an nn.Module")
    return lambda: obj(**kw)


# ------------------------------------------------------------------------------ the recorder
class _Recorder:
    """Accumulates layers with the zoo's per-op counts (see the module docstring)."""

    def __init__(self, batch: int, dtype_bytes: int):
        self.batch = batch
        self.dtype_bytes = dtype_bytes
        self.layers: list[Layer] = []
        self.names: set[str] = set()
        self.counted: set[int] = set()  # id() of parameters already attributed

    def per_sample(self, shape) -> tuple[int, ...]:
        shape = tuple(int(v) for v in shape)
        return shape[1:] if len(shape) > 1 else shape

    def numel(self, shape) -> int:
        """Elements per sample of a batched shape."""
        return math.prod(int(v) for v in shape) // self.batch if shape else 0

    def take(self, params) -> int:
        n = 0
        for p in params:
            if p.requires_grad and id(p) not in self.counted:
                self.counted.add(id(p))
                n += p.numel()
        return n

    def unique(self, name: str) -> str:
        base, i = name or "layer", 1
        while name in self.names or not name:
            i += 1
            name = f"{base}_{i}"
        self.names.add(name)
        return name

    def add(self, name: str, kind: str, inputs: list[str], in_shapes: list, out_shape, *, params: int = 0,
            macs: float = 0.0, fwd: float | None = None, bwd_data: float | None = None,
            bwd_weight: float | None = None, workspace: float = 0.0, grad_shape=None, **attrs) -> str:
        name = self.unique(name)
        inputs = list(dict.fromkeys(inputs)) or ([] if kind == "param" else ["input"])
        if fwd is None:
            fwd = 2.0 * macs
        if bwd_data is None:
            bwd_data = fwd
        if bwd_weight is None:
            bwd_weight = fwd if params else 0.0
        if all(i == "input" for i in inputs):
            bwd_data = 0.0
        if macs:
            attrs["macs"] = int(round(macs))
        attrs["inputs"] = inputs
        ins = [self.per_sample(s) for s in in_shapes if s is not None]
        if len(ins) > 1:
            attrs["input_shapes"] = ins
        out = self.per_sample(out_shape) if out_shape is not None else ()
        self.layers.append(Layer(
            name=name, kind=kind, input_shape=ins[0] if ins else (), output_shape=out, params=int(params),
            fwd_flops=float(fwd), bwd_data_flops=float(bwd_data), bwd_weight_flops=float(bwd_weight),
            activation_bytes=float(math.prod(out) * self.dtype_bytes) if out else 0.0,
            workspace_bytes=float(workspace * self.dtype_bytes), grad_shape=grad_shape,
            attrs={k: v for k, v in attrs.items() if v is not None}))
        return name

    # -- one module call
    def module(self, name: str, mod, inputs: list[str], in_shapes: list, out_shape, extra_params: int = 0,
               aten_flops: float = 0.0) -> str:
        torch = _torch()
        nn = torch.nn
        params = self.take(mod.parameters()) + extra_params
        x = in_shapes[0] if in_shapes else None
        n_out = self.numel(out_shape) if out_shape is not None else 0
        n_in = self.numel(x) if x is not None else 0
        cls = type(mod).__name__
        conv_t = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
        if isinstance(mod, conv_t):
            k = math.prod(mod.kernel_size)
            cout_g = mod.out_channels // mod.groups
            macs = n_in * cout_g * k
            spatial_in = math.prod(int(v) for v in x[2:]) if x is not None else 0
            return self.add(name, "deconv", inputs, in_shapes, out_shape, params=params, macs=macs,
                            workspace=cout_g * k * spatial_in, kernel=tuple(mod.kernel_size),
                            stride=tuple(mod.stride), padding=tuple(mod.padding),
                            output_padding=tuple(mod.output_padding), dilation=tuple(mod.dilation),
                            groups=mod.groups, bias=mod.bias is not None, module=cls)
        if isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            k = math.prod(mod.kernel_size)
            cin_g = mod.in_channels // mod.groups
            macs = n_out * cin_g * k
            spatial_out = math.prod(int(v) for v in out_shape[2:])
            return self.add(name, "conv", inputs, in_shapes, out_shape, params=params, macs=macs,
                            workspace=cin_g * k * spatial_out, kernel=tuple(mod.kernel_size),
                            stride=tuple(mod.stride), padding=tuple(mod.padding) if not isinstance(mod.padding, str)
                            else mod.padding, dilation=tuple(mod.dilation), groups=mod.groups,
                            bias=mod.bias is not None, module=cls)
        if isinstance(mod, nn.Linear):
            macs = n_out * mod.in_features
            return self.add(name, "fc", inputs, in_shapes, out_shape, params=params, macs=macs,
                            grad_shape=(mod.out_features, mod.in_features), in_features=mod.in_features,
                            out_features=mod.out_features, bias=mod.bias is not None, module=cls)
        if isinstance(mod, nn.MultiheadAttention):
            return self._mha(name, mod, inputs, in_shapes, out_shape, params)
        if isinstance(mod, nn.Embedding):
            return self.add(name, "embedding", inputs, in_shapes, out_shape, params=params, fwd=0.0, bwd_data=0.0,
                            bwd_weight=0.0, vocab=mod.num_embeddings, dim=mod.embedding_dim, module=cls)
        norms = (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm, nn.LocalResponseNorm)
        if hasattr(nn, "RMSNorm"):
            norms = norms + (nn.RMSNorm,)
        if isinstance(mod, norms):
            if isinstance(mod, nn.LocalResponseNorm):
                ops = (2 * mod.size + 3) * n_out
                return self.add(name, "lrn", inputs, in_shapes, out_shape, fwd=ops, bwd_data=2 * ops, module=cls)
            return self.add(name, "norm", inputs, in_shapes, out_shape, params=params, fwd=4.0 * n_out,
                            bwd_data=4.0 * n_out, bwd_weight=2.0 * n_out if params else 0.0,
                            norm=cls.lower().replace("norm", "").rstrip("0123456789d") or cls.lower(), module=cls)
        if isinstance(mod, (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout)):
            return self.add(name, "dropout", inputs, in_shapes, out_shape, fwd=float(n_out), bwd_data=float(n_out),
                            p=float(mod.p), module=cls)
        if isinstance(mod, (nn.Softmax, nn.LogSoftmax)):
            return self.add(name, "softmax", inputs, in_shapes, out_shape, fwd=3.0 * n_out, bwd_data=2.0 * n_out,
                            module=cls)
        pools = (nn.modules.pooling._MaxPoolNd, nn.modules.pooling._AvgPoolNd)
        if isinstance(mod, pools):
            k = mod.kernel_size if isinstance(mod.kernel_size, tuple) else (mod.kernel_size,) * max(1, len(x) - 2)
            return self.add(name, "pool", inputs, in_shapes, out_shape, fwd=float(n_out * math.prod(k)),
                            bwd_data=float(n_in), pool="max" if isinstance(mod, pools[0]) else "avg",
                            kernel=tuple(k), module=cls)
        adaptive = (nn.modules.pooling._AdaptiveAvgPoolNd, nn.modules.pooling._AdaptiveMaxPoolNd)
        if isinstance(mod, adaptive):
            return self.add(name, "pool", inputs, in_shapes, out_shape, fwd=float(n_in), bwd_data=float(n_in),
                            pool="adaptive_avg" if isinstance(mod, adaptive[0]) else "adaptive_max", module=cls)
        if isinstance(mod, (nn.Flatten, nn.Unflatten, nn.Identity)):
            return ""  # a view: no layer
        if mod.__class__.__module__.startswith("torch.nn.modules.activation"):
            bwd = 2.0 * n_out if cls in ("Tanh", "Sigmoid") else float(n_out)
            return self.add(name, "act", inputs, in_shapes, out_shape, params=params, fwd=float(n_out), bwd_data=bwd,
                            fn=cls.lower(), module=cls)
        # any other leaf module: its parameters, and its matmul / convolution MACs as ATen counts
        # them (fx runs only; hooks cannot see inside), else an element-wise cost
        return self._opaque(name, "other", inputs, in_shapes, out_shape, params, n_out, aten_flops, module=cls)

    def _opaque(self, name, kind, inputs, in_shapes, out_shape, params, n_out, aten_flops, **attrs) -> str:
        macs = aten_flops / 2.0 / self.batch
        if macs:
            return self.add(name, kind, inputs, in_shapes, out_shape, params=params, macs=macs,
                            bwd_weight=2.0 * macs if params else 0.0, macs_from="aten", **attrs)
        return self.add(name, kind, inputs, in_shapes, out_shape, params=params, fwd=float(n_out),
                        bwd_data=float(n_out), **attrs)

    def _mha(self, name, mod, inputs, in_shapes, out_shape, params) -> str:
        q = in_shapes[0]
        k_ = in_shapes[1] if len(in_shapes) > 1 and in_shapes[1] is not None else q
        bf = getattr(mod, "batch_first", False)
        seq_dim = 1 if bf else 0
        L, S = int(q[seq_dim]), int(k_[seq_dim])
        if len(q) == 2:  # unbatched
            L, S = int(q[0]), int(k_[0])
        E, kd, vd = mod.embed_dim, mod.kdim, mod.vdim
        proj = L * E * E + S * E * kd + S * E * vd + L * E * E
        core = 2 * L * S * E
        # per sample: the counts above are per batch element already
        fwd = 2.0 * (proj + core)
        return self.add(name, "attention", inputs, in_shapes[:1], out_shape, params=params, macs=proj + core,
                        fwd=fwd, bwd_data=2.0 * proj + 4.0 * core, bwd_weight=2.0 * proj, heads=mod.num_heads,
                        d_head=E // mod.num_heads, attention_span=S, core_macs=core,
                        weights=[(E, E), (E, kd), (E, vd), (E, E)], module=type(mod).__name__,
                        per_sample_batch_dim=seq_dim)

    # -- one function call (fx)
    def function(self, name: str, fn_name: str, inputs: list[str], in_shapes: list, out_shape, params: int,
                 n_tensor_args: int, aten_flops: float = 0.0) -> str:
        n_out = self.numel(out_shape)
        x = in_shapes[0] if in_shapes else None
        if fn_name in ("add", "iadd", "sub", "isub") and n_tensor_args >= 2:
            return self.add(name, "add", inputs, in_shapes, out_shape, params=params,
                            fwd=float((n_tensor_args - 1) * n_out), bwd_data=0.0, fn=fn_name)
        if fn_name in ("cat", "concat", "stack"):
            return self.add(name, "concat", inputs, in_shapes, out_shape, params=params, fwd=0.0, bwd_data=0.0)
        if fn_name in ("matmul", "bmm", "mm", "baddbmm", "addmm", "einsum_2") and len(in_shapes) >= 2:
            a = in_shapes[-2] if fn_name in ("baddbmm", "addmm") else in_shapes[0]
            kdim = int(a[-1])
            macs = n_out * kdim
            return self.add(name, "matmul", inputs, in_shapes, out_shape, params=params, macs=macs,
                            bwd_data=4.0 * macs, bwd_weight=4.0 * macs if params else 0.0)
        if fn_name == "scaled_dot_product_attention" and len(in_shapes) >= 3:
            q, k_, v = in_shapes[:3]
            L, S, E, Ev = int(q[-2]), int(k_[-2]), int(q[-1]), int(v[-1])
            heads = math.prod(int(d) for d in q[:-2]) // self.batch
            macs = heads * L * S * (E + Ev)
            return self.add(name, "attention", inputs, in_shapes, out_shape, params=params, macs=macs,
                            bwd_data=4.0 * macs, bwd_weight=0.0, core_macs=macs, attention_span=S)
        if fn_name in ("linear",) and len(in_shapes) >= 2:
            w = in_shapes[1]
            macs = n_out * int(w[-1])
            return self.add(name, "fc", inputs, in_shapes[:1], out_shape, params=params, macs=macs,
                            grad_shape=(int(w[0]), int(w[-1])))
        if fn_name in ("conv1d", "conv2d", "conv3d") and len(in_shapes) >= 2:
            w = in_shapes[1]
            macs = n_out * math.prod(int(v) for v in w[1:])
            return self.add(name, "conv", inputs, in_shapes[:1], out_shape, params=params, macs=macs)
        if fn_name in ("relu", "relu_", "gelu", "silu", "tanh", "sigmoid", "hardswish", "leaky_relu", "elu",
                       "hardtanh", "relu6", "mish", "softplus"):
            bwd = 2.0 * n_out if fn_name in ("tanh", "sigmoid") else float(n_out)
            return self.add(name, "act", inputs, in_shapes, out_shape, params=params, fwd=float(n_out),
                            bwd_data=bwd, fn=fn_name)
        if fn_name in ("softmax", "log_softmax"):
            return self.add(name, "softmax", inputs, in_shapes, out_shape, params=params, fwd=3.0 * n_out,
                            bwd_data=2.0 * n_out)
        if fn_name in ("dropout", "dropout1d", "dropout2d", "dropout3d"):
            return self.add(name, "dropout", inputs, in_shapes, out_shape, params=params, fwd=float(n_out),
                            bwd_data=float(n_out))
        if fn_name in ("layer_norm", "batch_norm", "group_norm", "rms_norm"):
            return self.add(name, "norm", inputs, in_shapes[:1], out_shape, params=params, fwd=4.0 * n_out,
                            bwd_data=4.0 * n_out, bwd_weight=2.0 * n_out if params else 0.0)
        if fn_name.startswith(("adaptive_avg_pool", "adaptive_max_pool")) or fn_name in ("mean", "sum", "amax"):
            n_in = self.numel(x) if x is not None else n_out
            return self.add(name, "pool" if "pool" in fn_name else "reduce", inputs, in_shapes, out_shape,
                            params=params, fwd=float(n_in), bwd_data=float(n_in), fn=fn_name)
        if fn_name.startswith(("max_pool", "avg_pool")):
            n_in = self.numel(x) if x is not None else n_out
            return self.add(name, "pool", inputs, in_shapes, out_shape, params=params, fwd=float(n_in),
                            bwd_data=float(n_in), pool=fn_name)
        if fn_name == "embedding":
            return self.add(name, "embedding", inputs, in_shapes[:1], out_shape, params=params, fwd=0.0,
                            bwd_data=0.0, bwd_weight=0.0)
        if aten_flops:  # an opaque function doing matmuls / convolutions (e.g. torch.fx.wrap'ed)
            return self._opaque(name, "other", inputs, in_shapes, out_shape, params, n_out, aten_flops, fn=fn_name)
        # mul, div, pow, exp, ...: element-wise
        return self.add(name, "eltwise", inputs, in_shapes, out_shape, params=params, fwd=float(n_out),
                        bwd_data=float(n_out), fn=fn_name)


# pure views and metadata: not layers; their producers pass through
_VIEWS = {"flatten", "reshape", "view", "permute", "transpose", "t", "contiguous", "expand", "expand_as",
          "squeeze", "unsqueeze", "getitem", "getattr", "size", "dim", "chunk", "split", "unbind", "narrow",
          "select", "unflatten", "movedim", "type_as", "to", "float", "half", "detach", "clone", "repeat",
          "masked_fill", "_assert", "eq", "floordiv", "numel", "shape"}


def _fn_name(target) -> str:
    if isinstance(target, str):
        return target
    if target in (operator.add, operator.iadd):
        return "add" if target is operator.add else "iadd"
    if target in (operator.sub, operator.isub):
        return "sub"
    if target is operator.matmul:
        return "matmul"
    if target is operator.getitem:
        return "getitem"
    return getattr(target, "__name__", str(target))


def _meta_shape(meta):
    """The (first) tensor shape of an fx node's ``tensor_meta`` (None for non-tensors)."""
    if meta is None:
        return None
    if hasattr(meta, "shape"):
        return tuple(int(v) for v in meta.shape)
    if isinstance(meta, (tuple, list)) and meta:
        return _meta_shape(meta[0])
    if isinstance(meta, dict) and meta:
        return _meta_shape(next(iter(meta.values())))
    return None


def _trace_fx(model, example: Sequence, rec: _Recorder) -> None:
    torch = _torch()
    from torch.fx import symbolic_trace
    from torch.fx.passes.shape_prop import ShapeProp

    from torch.utils.flop_counter import FlopCounterMode

    class _Prop(ShapeProp):
        # also count each node's matmul / convolution FLOPs at the ATen level, for the functions
        # fx keeps opaque (torch.fx.wrap, e.g. torchvision's shifted_window_attention)
        def run_node(self, n):
            with FlopCounterMode(display=False) as fc:
                out = super().run_node(n)
            n.meta["aten_flops"] = fc.get_total_flops()
            return out

    gm = symbolic_trace(model)
    with torch.no_grad():
        _Prop(gm).propagate(*example)
    modules = dict(gm.named_modules())
    params_by_name = dict(model.named_parameters(remove_duplicate=False))
    # what each fx node hands on: (producer layer names, pending parameter elements)
    src: dict[Any, tuple[list[str], int]] = {}

    def gather(node) -> tuple[list[str], int, list, int]:
        prods: list[str] = []
        pending = 0
        shapes: list = []
        n_tensors = 0
        for a in node.all_input_nodes:
            p, pend = src.get(a, ([], 0))
            prods += p
            pending += pend
            shp = _meta_shape(a.meta.get("tensor_meta"))
            if shp is not None and a.op != "get_attr":
                shapes.append(shp)
                n_tensors += 1
            elif shp is not None:
                n_tensors += 1
        return prods, pending, shapes, n_tensors

    for node in gm.graph.nodes:
        if node.op == "placeholder":
            src[node] = (["input"], 0)
            continue
        if node.op == "output":
            continue
        if node.op == "get_attr":
            p = params_by_name.get(node.target)
            src[node] = ([], rec.take([p]) if p is not None else 0)
            continue
        prods, pending, shapes, n_tensors = gather(node)
        out = _meta_shape(node.meta.get("tensor_meta"))
        if node.op == "call_module":
            lname = rec.module(node.target, modules[node.target], prods, shapes, out, extra_params=pending,
                               aten_flops=node.meta.get("aten_flops", 0))
            src[node] = ([lname], 0) if lname else (prods, pending)
            continue
        fn = _fn_name(node.target)
        if out is None or fn in _VIEWS:
            src[node] = (prods, pending)
            continue
        if fn in ("linear", "conv1d", "conv2d", "conv3d", "layer_norm", "embedding", "batch_norm", "group_norm"):
            # weights arrive as get_attr arguments: keep their shapes for the MAC count
            shapes = [_meta_shape(a.meta.get("tensor_meta")) for a in node.all_input_nodes]
            if fn == "embedding":
                shapes = shapes[:1]
        lname = rec.function(node.name, fn, prods, shapes, out, pending, n_tensors,
                             aten_flops=node.meta.get("aten_flops", 0))
        src[node] = ([lname], 0)


def _trace_hooks(model, example: Sequence, rec: _Recorder) -> None:
    torch = _torch()
    nn = torch.nn
    leaves: dict[Any, str] = {}  # module -> layer name
    quals: dict[Any, str] = {}   # module -> qualified name ("" for the root)
    for qual, mod in model.named_modules():
        if any(qual.startswith(q + ".") for q in quals.values() if q):
            continue
        if isinstance(mod, nn.MultiheadAttention) or not any(True for _ in mod.children()):
            leaves[mod] = qual or type(mod).__name__.lower()
            quals[mod] = qual
    producer: dict[int, str] = {}
    keep: list = []  # tensors kept alive so that id() stays unique during the trace
    last = ["input"]

    def first_tensor(obj):
        if isinstance(obj, torch.Tensor):
            return obj
        if isinstance(obj, (tuple, list)):
            for o in obj:
                t = first_tensor(o)
                if t is not None:
                    return t
        return None

    for t in example:
        producer[id(t)] = "input"

    def hook(mod, args, output):
        ins = [a for a in args if isinstance(a, torch.Tensor)]
        names = [producer.get(id(a), last[0]) for a in ins] or [last[0]]
        out_t = first_tensor(output)
        lname = rec.module(leaves[mod], mod, names, [tuple(a.shape) for a in ins],
                           tuple(out_t.shape) if out_t is not None else None)
        if lname:
            last[0] = lname
            if out_t is not None:
                producer[id(out_t)] = lname
                keep.append(out_t)
        elif out_t is not None and ins:
            producer[id(out_t)] = names[0]
            keep.append(out_t)

    from torch.utils.flop_counter import FlopCounterMode

    handles = [m.register_forward_hook(hook) for m in leaves]
    fc = FlopCounterMode(display=False)
    try:
        with torch.no_grad(), fc:
            model(*example)
    finally:
        for h in handles:
            h.remove()
    # matmuls / convolutions run outside every leaf module (in some forward): ATen's count of
    # the whole run less its count inside the leaves, as one layer at the end (position unknown)
    counts = fc.get_flop_counts()
    root = type(model).__name__
    inside = sum(sum(counts.get(f"{root}.{q}" if q else root, {}).values()) for q in set(quals.values()))
    outside = fc.get_total_flops() - inside
    if outside > 0:
        macs = outside / 2.0 / rec.batch
        rec.add("functional", "other", [last[0]], [], None, macs=macs, bwd_data=2.0 * macs, bwd_weight=0.0,
                fn="outside modules", macs_from="aten")


def from_torch(model_or_factory: Any, input_shape: Sequence[int] | Sequence[Sequence[int]], *,
               name: str = "torch-model", input_dtype: str = "float32", dtype_bytes: int | None = None,
               method: str = "auto", train: bool = False, device: str = "auto", kind: str | None = None,
               source: str = "") -> LayerTable:
    """Trace a PyTorch model into a :class:`LayerTable` (per-sample figures; see the module docstring).

    Parameters
    ----------
    model_or_factory : nn.Module or callable
        The model, or a zero-argument callable building it (needed to build it on the ``meta``
        device; see :func:`load_factory`).
    input_shape : sequence of int, or a sequence of them
        The input's shape **with** the batch dimension first, e.g. ``(1, 3, 224, 224)``; several
        shapes for a model taking several inputs.
    name : str
        Workload name.
    input_dtype : {"float32", "float16", "bfloat16", "int64"}
        Element type of the example inputs (``int64`` for token ids).
    dtype_bytes : int, optional
        Bytes per activation / parameter element; default the model's parameter element size.
    method : {"auto", "fx", "hooks"}
        ``auto`` tries torch.fx and falls back to forward hooks.
    train : bool
        Trace in training mode (default eval mode).
    device : {"auto", "meta", "cpu"}
        ``auto`` tries the meta device, then the CPU.
    kind : str, optional
        Workload kind; default ``cnn`` when the table has convolutions and no attention, else
        ``model``.
    source : str
        Where the model comes from (recorded in the table; a default names the trace).

    Returns
    -------
    LayerTable
        ``attrs["trace"]`` of each layer is ``"fx"`` or ``"hooks"``.

    Raises
    ------
    WorkloadError
        torch missing, a bad shape or option, or a model that neither method can run (the
        message gives both errors).
    """
    torch = _torch()
    shapes = [tuple(input_shape)] if input_shape and isinstance(input_shape[0], int) else [tuple(s) for s in input_shape]
    if not shapes or any(not s or any(int(v) <= 0 for v in s) for s in shapes):
        raise WorkloadError(f"input_shape: expected positive integers, batch first, given {input_shape!r}")
    dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "int64": torch.int64}
    if input_dtype not in dtypes:
        raise WorkloadError(f"--input-dtype: expected one of {', '.join(dtypes)}, given {input_dtype!r}")
    if method not in ("auto", "fx", "hooks"):
        raise WorkloadError(f"--method: expected auto, fx or hooks, given {method!r}")
    if device not in ("auto", "meta", "cpu"):
        raise WorkloadError(f"--device: expected auto, meta or cpu, given {device!r}")
    factory = model_or_factory if not isinstance(model_or_factory, torch.nn.Module) else (lambda: model_or_factory)
    batch = shapes[0][0]
    errors: list[str] = []
    for dev in (["meta", "cpu"] if device == "auto" else [device]):
        for meth in (["fx", "hooks"] if method == "auto" else [method]):
            try:
                with torch.device(dev):
                    model = factory()
                if not isinstance(model, torch.nn.Module):
                    raise WorkloadError(f"the factory returned a {type(model).__name__}, expected an nn.Module")
                params = [p for p in model.parameters()]
                where = params[0].device if params else torch.device(dev)
                if dev == "meta" and where.type != "meta":
                    # a ready-made instance: never moved (that would drop its weights); run where it is
                    errors.append(f"{meth} on meta: skipped, the model was built on {where.type}")
                    continue
                model.train(train)
                db = dtype_bytes or (params[0].element_size() if params else 4)
                example = [torch.zeros(s, dtype=dtypes[input_dtype], device=where) for s in shapes]
                rec = _Recorder(batch, db)
                (_trace_fx if meth == "fx" else _trace_hooks)(model, example, rec)
            except WorkloadError:
                raise
            except Exception as e:  # noqa: BLE001 - any failure of the user's model: try the next way
                errors.append(f"{meth} on {dev}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                continue
            return _finish(rec, model, name, shapes, kind, source, meth, dev, train)
    raise WorkloadError("could not trace the model: " + "; ".join(errors))


def _finish(rec: _Recorder, model, name: str, shapes, kind, source, meth, dev, train) -> LayerTable:
    unused = 0
    for qual, p in model.named_parameters():
        if p.requires_grad and id(p) not in rec.counted:
            owner = qual.rsplit(".", 1)[0] if "." in qual else qual
            rec.counted.add(id(p))
            unused += p.numel()
            rec.add(f"params.{qual}", "param", [], [], None, params=p.numel(), fwd=0.0, bwd_data=0.0,
                    bwd_weight=0.0, unattributed=True, owner=owner, shape=tuple(int(v) for v in p.shape))
    layers = [l if l.attrs.get("unattributed") else
              Layer(**{**{f: getattr(l, f) for f in Layer.__dataclass_fields__}, "attrs": {**l.attrs, "trace": meth}})
              for l in rec.layers]
    kinds = {l.kind for l in layers}
    if kind is None:
        kind = "cnn" if kinds & {"conv", "deconv"} and "attention" not in kinds else "model"
    desc = (f"traced with {'torch.fx' if meth == 'fx' else 'forward hooks'} on {dev} "
            f"({'train' if train else 'eval'} mode), input {' + '.join(str(tuple(s)) for s in shapes)}, "
            f"per sample of batch {rec.batch}")
    if unused:
        desc += (f"; {unused:,} parameters no traced layer used (modules the trace did not run"
                 + (", or parameters used directly in forward" if meth == "hooks" else "") + ") kept as 'param' layers")
    if meth == "hooks":
        desc += "; functions outside modules (residual adds, matmuls in forward) not seen"
    return LayerTable(name=name, kind=kind, source=source or f"PyTorch trace ({meth})", description=desc,
                      layers=tuple(layers), input_shape=tuple(shapes[0][1:]) or tuple(shapes[0]),
                      dtype_bytes=rec.dtype_bytes)
