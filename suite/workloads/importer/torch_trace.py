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
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from suite.errors import WorkloadError
from suite.workloads.importer.torch_counts import _Recorder, _torch
from suite.workloads.importer.torch_tracers import _trace_fx, _trace_hooks
from suite.workloads.types import Layer, LayerTable

__all__ = ["from_torch", "load_factory", "parse_shape"]


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


def load_factory(ref: str, kwargs: dict[str, Any] | None = None) -> Callable[[], Any]:
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
    shapes = _example_shapes(input_shape)
    dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "int64": torch.int64}
    _check_options(input_dtype, dtypes, method, device)
    factory = model_or_factory if not isinstance(model_or_factory, torch.nn.Module) else (lambda: model_or_factory)
    rec, model, meth, dev = _first_trace(factory, device, method, shapes, dtypes[input_dtype], dtype_bytes, train)
    return _finish(rec, model, name, shapes, kind, source, meth, dev, train)


def _first_trace(factory: Callable[[], Any], device: str, method: str, shapes: list[tuple[int, ...]], dtype: Any,
                 dtype_bytes: int | None, train: bool) -> tuple[_Recorder, Any, str, str]:
    """The first trace that works, trying the meta device before the CPU and fx before hooks
    (``auto``): (recorder, model, method, device); a WorkloadError giving every failure if none."""
    errors: list[str] = []
    for dev in (["meta", "cpu"] if device == "auto" else [device]):
        for meth in (["fx", "hooks"] if method == "auto" else [method]):
            try:
                traced = _trace_once(factory, dev, meth, shapes, dtype, dtype_bytes, train)
            except WorkloadError:
                raise
            except Exception as e:  # noqa: BLE001 - any failure of the user's model: try the next way
                errors.append(f"{meth} on {dev}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                continue
            if isinstance(traced, str):
                errors.append(traced)
                continue
            return traced[0], traced[1], meth, dev
    raise WorkloadError("could not trace the model: " + "; ".join(errors))


def _example_shapes(input_shape: Sequence[int] | Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """*input_shape* as a list of shapes (one per model input), each batch first and positive."""
    given: list[Any] = list(input_shape)
    shapes: list[tuple[int, ...]] = ([tuple(given)] if given and isinstance(given[0], int)
                                     else [tuple(s) for s in given])
    if not shapes or any(not s or any(int(v) <= 0 for v in s) for s in shapes):
        raise WorkloadError(f"input_shape: expected positive integers, batch first, given {input_shape!r}")
    return shapes


def _check_options(input_dtype: str, dtypes: dict[str, Any], method: str, device: str) -> None:
    """:func:`from_torch`'s ``input_dtype``, ``method`` and ``device``, checked."""
    if input_dtype not in dtypes:
        raise WorkloadError(f"--input-dtype: expected one of {', '.join(dtypes)}, given {input_dtype!r}")
    if method not in ("auto", "fx", "hooks"):
        raise WorkloadError(f"--method: expected auto, fx or hooks, given {method!r}")
    if device not in ("auto", "meta", "cpu"):
        raise WorkloadError(f"--device: expected auto, meta or cpu, given {device!r}")


def _trace_once(factory: Callable[[], Any], dev: str, meth: str, shapes: list[tuple[int, ...]], dtype: Any,
                dtype_bytes: int | None, train: bool) -> tuple[_Recorder, Any] | str:
    """Build the model on *dev* and trace it with *meth*: (recorder, model), or why this way was
    skipped (a ready-made instance is never moved to the meta device: that would drop its weights)."""
    torch = _torch()
    with torch.device(dev):
        model = factory()
    if not isinstance(model, torch.nn.Module):
        raise WorkloadError(f"the factory returned a {type(model).__name__}, expected an nn.Module")
    params = [p for p in model.parameters()]
    where = params[0].device if params else torch.device(dev)
    if dev == "meta" and where.type != "meta":
        # a ready-made instance: never moved (that would drop its weights); run where it is
        return f"{meth} on meta: skipped, the model was built on {where.type}"
    model.train(train)
    db = dtype_bytes or (params[0].element_size() if params else 4)
    example = [torch.zeros(s, dtype=dtype, device=where) for s in shapes]
    rec = _Recorder(shapes[0][0], db)
    (_trace_fx if meth == "fx" else _trace_hooks)(model, example, rec)
    return rec, model


def _finish(rec: _Recorder, model: Any, name: str, shapes: list[tuple[int, ...]], kind: str | None, source: str,
            meth: str, dev: str, train: bool) -> LayerTable:
    """The table of *rec*'s layers, tagged with the trace method, plus one ``param`` layer per
    parameter no traced layer used; kind and description from what was traced."""
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
