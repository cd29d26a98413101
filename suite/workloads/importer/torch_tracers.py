"""The two ways a PyTorch model is traced into layers: its torch.fx graph with propagated shapes
(:func:`_trace_fx`), or forward hooks on its leaf modules (:func:`_trace_hooks`); both hand each
call to a :class:`~suite.workloads.importer.torch_counts._Recorder` (conventions in
:mod:`suite.workloads.importer.torch_trace`)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from suite.workloads.importer.torch_counts import Shape, _Recorder, _torch


# pure views and metadata: not layers; their producers pass through
_VIEWS = {"flatten", "reshape", "view", "permute", "transpose", "t", "contiguous", "expand", "expand_as",
          "squeeze", "unsqueeze", "getitem", "getattr", "size", "dim", "chunk", "split", "unbind", "narrow",
          "select", "unflatten", "movedim", "type_as", "to", "float", "half", "detach", "clone", "repeat",
          "masked_fill", "_assert", "eq", "floordiv", "numel", "shape"}


def _fn_name(target: Any) -> str:
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


def _meta_shape(meta: Any) -> Shape | None:
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


def _shape_propagated(model: Any, example: Sequence[Any]) -> Any:
    """*model* symbolically traced (torch.fx), every node's ``tensor_meta`` filled by running
    *example* through it, and its ``aten_flops`` counted: the matmul / convolution FLOPs at the
    ATen level, for the functions fx keeps opaque (torch.fx.wrap, e.g. torchvision's
    shifted_window_attention)."""
    torch = _torch()
    from torch.fx import symbolic_trace
    from torch.fx.passes.shape_prop import ShapeProp
    from torch.utils.flop_counter import FlopCounterMode

    class _Prop(ShapeProp):  # type: ignore[misc]  # torch is untyped here
        def run_node(self, n: Any) -> Any:
            with FlopCounterMode(display=False) as fc:
                out = super().run_node(n)
            n.meta["aten_flops"] = fc.get_total_flops()
            return out

    gm = symbolic_trace(model)
    with torch.no_grad():
        _Prop(gm).propagate(*example)
    return gm


def _gather(node: Any, src: dict[Any, tuple[list[str], int]]) -> tuple[list[str], int, list[Shape], int]:
    """What flows into fx *node*: its producer layers, the parameter elements pending from
    ``get_attr`` inputs, the shapes of its tensor inputs (parameters excluded) and how many tensor
    arguments it has (parameters included)."""
    prods: list[str] = []
    pending = 0
    shapes: list[Shape] = []
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


def _trace_fx(model: Any, example: Sequence[Any], rec: _Recorder) -> None:
    """Record *model*'s layers from its fx graph: leaf modules and functions, views passed through."""
    gm = _shape_propagated(model, example)
    modules = dict(gm.named_modules())
    params_by_name = dict(model.named_parameters(remove_duplicate=False))
    # what each fx node hands on: (producer layer names, pending parameter elements)
    src: dict[Any, tuple[list[str], int]] = {}
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
        prods, pending, shapes, n_tensors = _gather(node, src)
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
            weighted: list[Any] = [_meta_shape(a.meta.get("tensor_meta")) for a in node.all_input_nodes]
            shapes = weighted[:1] if fn == "embedding" else weighted
        lname = rec.function(node.name, fn, prods, shapes, out, pending, n_tensors,
                             aten_flops=node.meta.get("aten_flops", 0))
        src[node] = ([lname], 0)


def _leaf_modules(model: Any) -> tuple[dict[Any, str], dict[Any, str]]:
    """The modules a hook trace records: leaves (no children) and multi-head attentions (whose
    children it does not descend into), as (module -> layer name, module -> qualified name)."""
    nn = _torch().nn
    leaves: dict[Any, str] = {}  # module -> layer name
    quals: dict[Any, str] = {}   # module -> qualified name ("" for the root)
    for qual, mod in model.named_modules():
        if any(qual.startswith(q + ".") for q in quals.values() if q):
            continue
        if isinstance(mod, nn.MultiheadAttention) or not any(True for _ in mod.children()):
            leaves[mod] = qual or type(mod).__name__.lower()
            quals[mod] = qual
    return leaves, quals


def _first_tensor(obj: Any) -> Any:
    """The first tensor in *obj* (a tensor, or nested tuples / lists), or None."""
    torch = _torch()
    if isinstance(obj, torch.Tensor):
        return obj
    if isinstance(obj, (tuple, list)):
        for o in obj:
            t = _first_tensor(o)
            if t is not None:
                return t
    return None


def _trace_hooks(model: Any, example: Sequence[Any], rec: _Recorder) -> None:
    """Record *model*'s leaf modules by forward hooks, in call order; the matmuls / convolutions
    run outside every leaf module become one layer at the end."""
    torch = _torch()
    leaves, quals = _leaf_modules(model)
    producer: dict[int, str] = {id(t): "input" for t in example}
    keep: list[Any] = []  # tensors kept alive so that id() stays unique during the trace
    last = ["input"]

    def hook(mod: Any, args: Any, output: Any) -> None:
        ins = [a for a in args if isinstance(a, torch.Tensor)]
        names = [producer.get(id(a), last[0]) for a in ins] or [last[0]]
        out_t = _first_tensor(output)
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
    _add_outside_flops(fc, model, set(quals.values()), rec, last[0])


def _add_outside_flops(fc: Any, model: Any, quals: set[str], rec: _Recorder, last: str) -> None:
    """Matmuls / convolutions run outside every leaf module (in some forward): ATen's count of
    the whole run less its count inside the leaves, as one layer at the end (position unknown)."""
    counts = fc.get_flop_counts()
    root = type(model).__name__
    inside = sum(sum(counts.get(f"{root}.{q}" if q else root, {}).values()) for q in quals)
    outside = fc.get_total_flops() - inside
    if outside > 0:
        macs = outside / 2.0 / rec.batch
        rec.add("functional", "other", [last], [], None, macs=macs, bwd_data=2.0 * macs, bwd_weight=0.0,
                fn="outside modules", macs_from="aten")
