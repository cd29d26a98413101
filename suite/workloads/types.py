"""Workload types: layer tables of models, and datasets, as techniques read them.

Conventions (the contract plugins rely on; do not change silently):

* FLOPs count a multiply-add as 2 FLOPs, per sample (one image / one sequence), forward.
* ``bwd_data_flops`` is the gradient w.r.t. the layer input, ``bwd_weight_flops`` w.r.t. its
  parameters (per sample). For conv/fc each equals the forward FLOPs of the layer (2 MACs x 1),
  except that the first layer needs no data gradient (the builder sets it to 0).
* ``activation_bytes`` is the size of the layer's OUTPUT per sample in the workload's
  ``dtype_bytes`` (4 for fp32). ``input_shape``/``output_shape`` exclude the batch dimension,
  as (C, H, W) for CNN layers and (seq, hidden) for transformer layers.
* ``params`` counts trainable parameters (weights and biases, norm scale/shift).
* ``grad_shape`` is the parameter-gradient matrix shape (M, N) of an fc layer (out_features,
  in_features): what sufficient-factor broadcasting factorises. None for other layers.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field, fields  # noqa: F401 - asdict kept for importers
from typing import Any

__all__ = ["Layer", "Workload", "LayerTable", "Dataset"]


@dataclass(frozen=True)
class Layer:
    """One layer of a model (per-sample figures; see the module docstring for conventions)."""

    name: str
    kind: str  # conv, fc, pool, norm, act, add, concat, dropout, softmax, deconv, embedding, attention, mlp, ...
    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    params: int = 0
    fwd_flops: float = 0.0
    bwd_data_flops: float = 0.0
    bwd_weight_flops: float = 0.0
    activation_bytes: float = 0.0
    workspace_bytes: float = 0.0
    grad_shape: tuple[int, int] | None = None
    attrs: dict[str, Any] = field(default_factory=dict)  # kernel, stride, padding, groups, ...

    @property
    def bwd_flops(self) -> float:
        return self.bwd_data_flops + self.bwd_weight_flops

    @property
    def has_params(self) -> bool:
        return self.params > 0


_SCALARS = (str, int, float, bool, type(None))
#: per type: its dataclass field names, or None for a type that is no dataclass (both kept: the
#: walk asks once per type, not once per object)
_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(obj: Any, t: type) -> tuple[str, ...] | None:
    """The field names of the dataclass instance *obj* (of type *t*), kept per type; None when
    *obj* is no dataclass instance (a dataclass itself, the class, has type ``type``)."""
    try:
        return _FIELD_NAMES[t]
    except KeyError:
        names = tuple(f.name for f in fields(obj)) if hasattr(t, "__dataclass_fields__") else None
        _FIELD_NAMES[t] = names
        return names


def plain(obj: Any) -> Any:
    """*obj* as JSON-able plain data, equal to what :func:`dataclasses.asdict` gives it for the
    JSON encoder (dataclasses -> dicts of their fields, lists/tuples/namedtuples -> lists, dicts
    -> dicts, anything else as is) without ``asdict``'s deep copy of every leaf: a workload is
    frozen, so nothing needs copying. Hashing ResNet-152's layer table this way is about 10x
    faster (issue 19: a cached ``suite reproduce`` spent half its time in ``asdict``)."""
    return _walk(obj, False)


def _json_ready(obj: Any) -> Any:
    """*obj* as :func:`plain` gives it to the JSON encoder, copying only what the encoder would
    not write the same way: a tuple or list of scalars is kept as it is (JSON writes a tuple as a
    list). ``json.dumps`` of the two is the same text (tested on every workload); hashing
    ResNet-7502's 25,000 layers this way takes 0.6x the time."""
    return _walk(obj, True)


def _walk(obj: Any, keep_scalar_seqs: bool) -> Any:
    """:func:`plain` (*keep_scalar_seqs* False) or :func:`_json_ready` (True): one traversal, a
    scalar (the leaves of nearly every workload) returned where it is met, without a call."""
    t = type(obj)
    if t in _SCALARS:
        return obj
    names = _field_names(obj, t)
    if names is not None:
        return {n: v if type(v) in _SCALARS else _walk(v, keep_scalar_seqs) for n in names for v in (getattr(obj, n),)}
    if t is tuple or t is list:
        if keep_scalar_seqs:
            for v in obj:
                if type(v) not in _SCALARS:
                    break
            else:
                return obj
        return [v if type(v) in _SCALARS else _walk(v, keep_scalar_seqs) for v in obj]
    if isinstance(obj, (list, tuple)):
        return [_walk(v, keep_scalar_seqs) for v in obj]
    if isinstance(obj, dict):
        return {k if type(k) in _SCALARS else _walk(k, keep_scalar_seqs): v if type(v) in _SCALARS
                else _walk(v, keep_scalar_seqs) for k, v in obj.items()}
    return obj


@dataclass(frozen=True)
class Workload:
    """Base of every workload: a name, a kind and a source."""

    name: str
    kind: str  # "cnn", "transformer", "dataset", "graph", "gan", ...
    source: str = ""
    description: str = ""

    def content(self) -> Any:
        """What defines the workload's results (hashed into every case key): the dataclass's
        fields, recursively, as :func:`dataclasses.asdict` gives them (:func:`plain`)."""
        return plain(self)

    def content_hash(self) -> str:
        """SHA-256 (16 hex chars) of :meth:`content`; computed once per object (workloads are frozen)."""
        return self._content_hash

    @functools.cached_property
    def _content_hash(self) -> str:
        # the content as plain() gives it, or what a subclass's own content() gives
        content = _json_ready(self) if type(self).content is Workload.content else self.content()
        blob = json.dumps(content, sort_keys=True, default=str, separators=(",", ":"))
        h = hashlib.sha256(blob.encode()).hexdigest()[:16]
        remember = self.__dict__.get("_remember_hash")  # a zoo workload's (suite.workloads._recall_hash)
        if remember is not None:
            remember(h)
        return h


@dataclass(frozen=True)
class LayerTable(Workload):
    """A model as an ordered layer table (forward order).

    Attributes
    ----------
    layers : tuple of Layer
    input_shape : tuple of int
        Per-sample input (C, H, W) or (seq,).
    dtype_bytes : int
        Bytes per element of activations and parameters (4 = fp32).
    published_params : int or None
        The published parameter count the builder is tested against.
    """

    layers: tuple[Layer, ...] = ()
    input_shape: tuple[int, ...] = ()
    dtype_bytes: int = 4
    published_params: int | None = None

    @property
    def params(self) -> int:
        return sum(l.params for l in self.layers)

    @property
    def param_bytes(self) -> float:
        return float(self.params * self.dtype_bytes)

    @property
    def fwd_flops(self) -> float:
        return float(sum(l.fwd_flops for l in self.layers))

    @property
    def bwd_flops(self) -> float:
        return float(sum(l.bwd_flops for l in self.layers))

    @property
    def activation_bytes(self) -> float:
        return float(sum(l.activation_bytes for l in self.layers))

    def param_layers(self) -> list[Layer]:
        """Layers that own parameters, in forward order (what gradient sync iterates over)."""
        return [l for l in self.layers if l.params > 0]

    def totals(self) -> dict[str, float]:
        return {
            "params": self.params,
            "fwd_flops": self.fwd_flops,
            "bwd_flops": self.bwd_flops,
            "activation_bytes": self.activation_bytes,
            "layers": len(self.layers),
        }


@dataclass(frozen=True)
class Dataset(Workload):
    """A dataset made locally (bundled with a dependency or generated from a seed).

    ``loader`` is a module-level callable ``loader(**params) -> (X, y)`` (numpy arrays);
    ``params`` its keyword arguments (seed included), so the same id always gives the same data.
    ``n``, ``d``, ``classes`` describe the shape without loading it.
    """

    loader: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    n: int | None = None
    d: int | None = None
    classes: int | None = None

    def load(self) -> Any:
        """What the loader returns for the dataset's parameters (for a classification set: ``(X, y)``)."""
        return self.loader(**self.params)

    def content(self) -> Any:
        fn = self.loader
        ref = f"{fn.__module__}.{fn.__qualname__}" if fn is not None else None
        return {"name": self.name, "kind": self.kind, "loader": ref, "params": self.params,
                "n": self.n, "d": self.d, "classes": self.classes}
