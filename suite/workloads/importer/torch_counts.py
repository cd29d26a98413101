"""The per-op counts of a PyTorch trace: :class:`_Recorder` turns one module or function call
(shapes batch first) into a :class:`~suite.workloads.types.Layer` with the zoo's per-sample
figures (see :mod:`suite.workloads.importer.torch_trace` for the conventions and sources)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from suite.errors import WorkloadError
from suite.workloads.types import Layer

#: a tensor's shape, batch first
Shape = tuple[int, ...]


def _torch() -> Any:
    try:
        import torch  # noqa: F401
        import torch.fx  # noqa: F401
    except ImportError:  # pragma: no cover - exercised where torch is absent
        raise WorkloadError("importing a PyTorch model needs torch: pip install 'dlsys-suite[torch]' "
                            "(the --hf-config path does not)") from None
    import torch

    return torch


@dataclass(frozen=True)
class _ModuleCall:
    """One leaf-module call as :meth:`_Recorder.module` sees it."""

    name: str
    mod: Any
    inputs: list[str]
    in_shapes: list[Any]
    out_shape: Shape | None
    params: int
    n_out: int  # output elements per sample
    n_in: int   # first input's elements per sample

    @property
    def x(self) -> Shape | None:
        return self.in_shapes[0] if self.in_shapes else None

    @property
    def cls(self) -> str:
        return type(self.mod).__name__


@dataclass(frozen=True)
class _FunctionCall:
    """One function call (an fx node) as :meth:`_Recorder.function` sees it."""

    name: str
    fn: str
    inputs: list[str]
    in_shapes: list[Any]
    out_shape: Shape
    params: int
    n_tensor_args: int
    n_out: int  # output elements per sample


class _Recorder:
    """Accumulates layers with the zoo's per-op counts (see the module docstring)."""

    def __init__(self, batch: int, dtype_bytes: int):
        self.batch = batch
        self.dtype_bytes = dtype_bytes
        self.layers: list[Layer] = []
        self.names: set[str] = set()
        self.counted: set[int] = set()  # id() of parameters already attributed

    def per_sample(self, shape: Sequence[Any]) -> Shape:
        dims = tuple(int(v) for v in shape)
        return dims[1:] if len(dims) > 1 else dims

    def numel(self, shape: Sequence[Any] | None) -> int:
        """Elements per sample of a batched shape."""
        return math.prod(int(v) for v in shape) // self.batch if shape else 0

    def take(self, params: Iterable[Any]) -> int:
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

    def add(self, name: str, kind: str, inputs: list[str], in_shapes: list[Any], out_shape: Shape | None, *, params: int = 0,
            macs: float = 0.0, fwd: float | None = None, bwd_data: float | None = None,
            bwd_weight: float | None = None, workspace: float = 0.0, grad_shape: tuple[int, int] | None = None,
            **attrs: Any) -> str:
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
    def module(self, name: str, mod: Any, inputs: list[str], in_shapes: list[Any], out_shape: Shape | None,
               extra_params: int = 0, aten_flops: float = 0.0) -> str:
        """Record one call of the leaf module *mod* (its class decides the counts); returns the
        layer's name, or ``""`` for a view (no layer)."""
        call = _ModuleCall(name, mod, inputs, in_shapes, out_shape, self.take(mod.parameters()) + extra_params,
                           self.numel(out_shape) if out_shape is not None else 0,
                           self.numel(in_shapes[0]) if in_shapes and in_shapes[0] is not None else 0)
        for step in (self._weighted_module, self._stateless_module):
            got = step(call)
            if got is not None:
                return got
        # any other leaf module: its parameters, and its matmul / convolution MACs as ATen counts
        # them (fx runs only; hooks cannot see inside), else an element-wise cost
        return self._opaque(name, "other", inputs, in_shapes, out_shape, call.params, call.n_out, aten_flops,
                            module=call.cls)

    def _weighted_module(self, c: _ModuleCall) -> str | None:
        """Transpose and plain convolutions, linear, multi-head attention and embedding modules."""
        nn = _torch().nn
        name, mod, inputs, in_shapes, out_shape, params = c.name, c.mod, c.inputs, c.in_shapes, c.out_shape, c.params
        x, n_out, n_in, cls = c.x, c.n_out, c.n_in, c.cls
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
            spatial_out = math.prod(int(v) for v in (out_shape or ())[2:])
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
        return None

    def _stateless_module(self, c: _ModuleCall) -> str | None:
        """Norms, dropout, softmax, pooling, views (``""``: no layer) and activation modules."""
        nn = _torch().nn
        name, mod, inputs, in_shapes, out_shape, params = c.name, c.mod, c.inputs, c.in_shapes, c.out_shape, c.params
        x, n_out, n_in, cls = c.x, c.n_out, c.n_in, c.cls
        norms: tuple[Any, ...] = (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm, nn.LocalResponseNorm)
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
            k = mod.kernel_size if isinstance(mod.kernel_size, tuple) else (mod.kernel_size,) * max(1, len(x or ()) - 2)
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
        return None

    def _opaque(self, name: str, kind: str, inputs: list[str], in_shapes: list[Any], out_shape: Shape | None,
                params: int, n_out: int, aten_flops: float, **attrs: Any) -> str:
        """A layer whose MACs are ATen's count of its matmuls / convolutions, else an element-wise cost."""
        macs = aten_flops / 2.0 / self.batch
        if macs:
            return self.add(name, kind, inputs, in_shapes, out_shape, params=params, macs=macs,
                            bwd_weight=2.0 * macs if params else 0.0, macs_from="aten", **attrs)
        return self.add(name, kind, inputs, in_shapes, out_shape, params=params, fwd=float(n_out),
                        bwd_data=float(n_out), **attrs)

    def _mha(self, name: str, mod: Any, inputs: list[str], in_shapes: list[Any], out_shape: Shape | None,
             params: int) -> str:
        """``nn.MultiheadAttention``: the four projections and the attention core (QK^T and AV)."""
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
    def function(self, name: str, fn_name: str, inputs: list[str], in_shapes: list[Any], out_shape: Shape,
                 params: int, n_tensor_args: int, aten_flops: float = 0.0) -> str:
        """Record one call of the function *fn_name* (an fx ``call_function`` / ``call_method``
        node); returns the layer's name."""
        c = _FunctionCall(name, fn_name, inputs, in_shapes, out_shape, params, n_tensor_args, self.numel(out_shape))
        for step in (self._compute_function, self._layer_function):
            got = step(c)
            if got is not None:
                return got
        if aten_flops:  # an opaque function doing matmuls / convolutions (e.g. torch.fx.wrap'ed)
            return self._opaque(name, "other", inputs, in_shapes, out_shape, params, c.n_out, aten_flops, fn=fn_name)
        # mul, div, pow, exp, ...: element-wise
        return self.add(name, "eltwise", inputs, in_shapes, out_shape, params=params, fwd=float(c.n_out),
                        bwd_data=float(c.n_out), fn=fn_name)

    def _compute_function(self, c: _FunctionCall) -> str | None:
        """Adds, concatenations, matmuls, attention, linear and convolution functions."""
        name, fn_name, inputs, in_shapes, out_shape, params = c.name, c.fn, c.inputs, c.in_shapes, c.out_shape, c.params
        n_out = c.n_out
        if fn_name in ("add", "iadd", "sub", "isub") and c.n_tensor_args >= 2:
            return self.add(name, "add", inputs, in_shapes, out_shape, params=params,
                            fwd=float((c.n_tensor_args - 1) * n_out), bwd_data=0.0, fn=fn_name)
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
        return None

    def _layer_function(self, c: _FunctionCall) -> str | None:
        """Activation, softmax, dropout, norm, pooling / reduction and embedding functions."""
        name, fn_name, inputs, in_shapes, out_shape, params = c.name, c.fn, c.inputs, c.in_shapes, c.out_shape, c.params
        n_out = c.n_out
        x = in_shapes[0] if in_shapes else None
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
        return None
