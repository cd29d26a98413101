"""The workload file: a layer table (or a transformer's hyperparameters) as TOML.

A workload file is what ``suite workloads import`` writes and what ``--workload PATH.toml``
(and ``workloads = ["PATH.toml"]`` in an experiment file) reads. Two forms:

.. code-block:: toml

    format = "dlsys-suite-workload/1"

    [workload]
    name = "my-model"            # the name cases and the store record
    kind = "cnn"
    source = "torch.fx trace of torchvision.models:resnet50, input (1, 3, 224, 224)"
    description = "..."
    input_shape = [3, 224, 224]  # per sample (no batch dimension)
    dtype_bytes = 4

    [[layers]]                   # one per layer, forward order (the LayerTable conventions)
    name = "conv1"
    kind = "conv"
    input_shape = [3, 224, 224]
    output_shape = [64, 112, 112]
    params = 9408
    fwd_flops = 236027904.0
    bwd_data_flops = 0.0
    bwd_weight_flops = 236027904.0
    activation_bytes = 3211264.0
    workspace_bytes = 0.0
    attrs = { macs = 118013952, kernel = [7, 7], inputs = ["input"] }

or, for a transformer built from hyperparameters, a ``[transformer]`` table with the fields of
:class:`suite.workloads.transformer.TransformerSpec` (``layers``, ``hidden``, ``heads``,
``kv_heads``, ``ffn``, ``vocab``, ``seq``, ``mlp``, ``norm``, ...) instead of ``[[layers]]``;
the table is rebuilt with :func:`suite.workloads.transformer.transformer`, so activation memory
and recomputation FLOPs work as for the zoo's transformers.

Conventions are those of :mod:`suite.workloads.types` (per sample, FLOPs = 2 x MACs).
A malformed file is a :class:`~suite.errors.WorkloadError` naming the file, the field, what was
expected and what was given.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from suite.errors import WorkloadError
from suite.workloads.types import Layer, LayerTable

__all__ = ["FORMAT", "load_workload_file", "write_workload_file", "dumps"]

FORMAT = "dlsys-suite-workload/1"

_LAYER_INT = ("params",)
_LAYER_FLOAT = ("fwd_flops", "bwd_data_flops", "bwd_weight_flops", "activation_bytes", "workspace_bytes")
_LAYER_KEYS = {"name", "kind", "input_shape", "output_shape", "grad_shape", "attrs", *_LAYER_INT, *_LAYER_FLOAT}
_WORKLOAD_KEYS = {"name", "kind", "source", "description", "input_shape", "dtype_bytes", "published_params"}


# ------------------------------------------------------------------------------------- writing
def _key(k: str) -> str:
    return k if k and all(c.isalnum() or c in "-_" for c in k) else _str(k)


def _str(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"')
    out = "".join(c if c >= " " or c == "\t" else f"\\u{ord(c):04x}" for c in out)
    return f'"{out}"'


def _value(v: Any, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise WorkloadError(f"{where}: expected a finite number, given {v!r}")
        return repr(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, where) for x in v) + "]"
    if isinstance(v, Mapping):
        items = [f"{_key(str(k))} = {_value(x, f'{where}.{k}')}" for k, x in v.items() if x is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if hasattr(v, "item"):  # numpy / torch scalars
        return _value(v.item(), where)
    raise WorkloadError(f"{where}: cannot write a {type(v).__name__} ({v!r}) to TOML")


def dumps(table: LayerTable, *, transformer_spec: dict[str, Any] | None = None, header: str = "") -> str:
    """The TOML text of *table* (or of *transformer_spec*, the hyperparameters it was built from).

    Parameters
    ----------
    table : LayerTable
    transformer_spec : dict, optional
        Fields of :class:`~suite.workloads.transformer.TransformerSpec`; when given, the file holds
        these instead of the layers.
    header : str
        Comment lines put at the top (without the ``#``).
    """
    lines = [f"# {h}" for h in header.splitlines()] + [f"format = {_str(FORMAT)}", "", "[workload]"]
    head = {"name": table.name, "kind": table.kind, "source": table.source, "description": table.description,
            "input_shape": list(table.input_shape), "dtype_bytes": table.dtype_bytes,
            "published_params": table.published_params}
    lines += [f"{k} = {_value(v, f'workload.{k}')}" for k, v in head.items() if v is not None]
    if transformer_spec is not None:
        lines += ["", "[transformer]"]
        lines += [f"{k} = {_value(v, f'transformer.{k}')}" for k, v in transformer_spec.items()
                  if v is not None and k != "name"]
        return "\n".join(lines) + "\n"
    for i, l in enumerate(table.layers):
        where = f"layers[{i}]"
        lines += ["", "[[layers]]"]
        row = {"name": l.name, "kind": l.kind, "input_shape": list(l.input_shape),
               "output_shape": list(l.output_shape), "params": int(l.params), "fwd_flops": float(l.fwd_flops),
               "bwd_data_flops": float(l.bwd_data_flops), "bwd_weight_flops": float(l.bwd_weight_flops),
               "activation_bytes": float(l.activation_bytes), "workspace_bytes": float(l.workspace_bytes),
               "grad_shape": list(l.grad_shape) if l.grad_shape else None}
        lines += [f"{k} = {_value(v, f'{where}.{k}')}" for k, v in row.items() if v is not None]
        if l.attrs:
            lines.append(f"attrs = {_value(dict(l.attrs), f'{where}.attrs')}")
    return "\n".join(lines) + "\n"


def write_workload_file(table: LayerTable, path: str | Path, *, transformer_spec: dict[str, Any] | None = None,
                        header: str = "") -> Path:
    """Write *table* to *path* as a workload file (see the module docstring); returns the path.

    The file is read back and compared (parameters, FLOPs, layer count) before this returns, so
    a file that would not load the same is never left behind silently.

    Raises
    ------
    WorkloadError
        A value TOML cannot hold (non-finite numbers), or a read-back that differs.
    """
    p = Path(path)
    text = dumps(table, transformer_spec=transformer_spec, header=header)
    p.write_text(text, encoding="utf-8")
    back = load_workload_file(p)
    if (back.params, len(back.layers)) != (table.params, len(table.layers)) or not math.isclose(
            back.fwd_flops, table.fwd_flops, rel_tol=1e-12):
        raise WorkloadError(f"{p}: the written file reads back differently (params {back.params} vs {table.params}, "
                            f"layers {len(back.layers)} vs {len(table.layers)})")
    return p


# ------------------------------------------------------------------------------------- reading
def _shape(v: Any, where: str, allow_empty: bool = True) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v) \
            or (not v and not allow_empty):
        raise WorkloadError(f"{where}: expected a list of positive integers (a shape), given {v!r}")
    return tuple(v)


def _tuples(v: Any) -> Any:
    """Lists in attrs back to tuples (as the zoo's builders store shapes and kernels)."""
    if isinstance(v, list):
        return tuple(_tuples(x) for x in v) if all(not isinstance(x, str) for x in v) else list(v)
    if isinstance(v, Mapping):
        return {k: _tuples(x) for k, x in v.items()}
    return v


def _layer(raw: Any, where: str) -> Layer:
    if not isinstance(raw, dict):
        raise WorkloadError(f"{where}: expected a table, given {raw!r}")
    unknown = sorted(set(raw) - _LAYER_KEYS)
    if unknown:
        raise WorkloadError(f"{where}: unknown key {unknown[0]!r}; expected one of {', '.join(sorted(_LAYER_KEYS))}")
    for k in ("name", "kind", "input_shape", "output_shape"):
        if k not in raw:
            raise WorkloadError(f"{where}: missing key {k!r}")
    for k in ("name", "kind"):
        if not isinstance(raw[k], str) or not raw[k]:
            raise WorkloadError(f"{where}.{k}: expected a non-empty string, given {raw[k]!r}")
    kw: dict[str, Any] = {"name": raw["name"], "kind": raw["kind"],
                          "input_shape": _shape(raw["input_shape"], f"{where}.input_shape"),
                          "output_shape": _shape(raw["output_shape"], f"{where}.output_shape")}
    for k in _LAYER_INT:
        v = raw.get(k, 0)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise WorkloadError(f"{where}.{k}: expected an integer >= 0, given {v!r}")
        kw[k] = v
    for k in _LAYER_FLOAT:
        v = raw.get(k, 0.0)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
            raise WorkloadError(f"{where}.{k}: expected a finite number >= 0, given {v!r}")
        kw[k] = float(v)
    if raw.get("grad_shape") is not None:
        g = _shape(raw["grad_shape"], f"{where}.grad_shape")
        if len(g) != 2:
            raise WorkloadError(f"{where}.grad_shape: expected [out, in] (two integers), given {raw['grad_shape']!r}")
        kw["grad_shape"] = g
    attrs = raw.get("attrs", {})
    if not isinstance(attrs, dict):
        raise WorkloadError(f"{where}.attrs: expected a table, given {attrs!r}")
    kw["attrs"] = _tuples(attrs)
    return Layer(**kw)


def load_workload_file(path: str | Path) -> LayerTable:
    """Read a workload file (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The file. (The context refuses a file whose workload name is also a zoo or plugin
        workload: see :meth:`suite.context.WorkloadLibrary.get`.)

    Returns
    -------
    LayerTable or TransformerTable

    Raises
    ------
    WorkloadError
        Missing file, invalid TOML, a wrong format tag, or a field of the wrong type (the message
        names the file and the field, what was expected and what was given). Layers' ``inputs``
        must name earlier layers (or ``"input"``).
    """
    p = Path(path)
    doc = _read_doc(p)
    name, kind, source, desc, pub, head = _workload_head(doc, p)
    has_layers, has_tf = "layers" in doc, "transformer" in doc
    if has_layers == has_tf:
        raise WorkloadError(f"{p}: expected either [[layers]] or a [transformer] table (exactly one), given "
                            f"{'both' if has_layers else 'neither'}")
    if has_tf:
        return _transformer_from(doc["transformer"], name, source, desc, pub, p)
    dtype_bytes = head.get("dtype_bytes", 4)
    if not isinstance(dtype_bytes, int) or isinstance(dtype_bytes, bool) or dtype_bytes <= 0:
        raise WorkloadError(f"{p}: workload.dtype_bytes: expected a positive integer, given {dtype_bytes!r}")
    layers = _layers(doc["layers"], p)
    in_shape = _shape(head.get("input_shape", list(layers[0].input_shape)), f"{p}: workload.input_shape")
    return LayerTable(name=name, kind=kind, source=source, description=desc, layers=tuple(layers),
                      input_shape=in_shape, dtype_bytes=dtype_bytes, published_params=pub)


def _read_doc(p: Path) -> dict[str, Any]:
    """The TOML document in *p*, with the format tag this module writes."""
    if not p.is_file():
        raise WorkloadError(f"{p}: expected an existing workload file (.toml), got a path that does not exist")
    from suite.limits import TooDeep, loads_toml

    try:
        doc = loads_toml(p.read_text(encoding="utf-8"), str(p))
    except tomllib.TOMLDecodeError as e:
        raise WorkloadError(f"{p}: not valid TOML ({e})") from None
    except TooDeep as e:
        raise WorkloadError(str(e)) from None
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise WorkloadError(f"{p}: key 'format': expected {FORMAT!r}, given {fmt!r}")
    return doc


def _workload_head(doc: dict[str, Any], p: Path) -> tuple[str, str, str, str, int | None, dict[str, Any]]:
    """The ``[workload]`` table checked: (name, kind, source, description, published_params, table)."""
    head = doc.get("workload")
    if not isinstance(head, dict):
        raise WorkloadError(f"{p}: missing the [workload] table")
    unknown = sorted(set(head) - _WORKLOAD_KEYS)
    if unknown:
        raise WorkloadError(f"{p}: workload.{unknown[0]}: unknown key; expected one of {', '.join(sorted(_WORKLOAD_KEYS))}")
    name = head.get("name")
    if not isinstance(name, str) or not name or any(c.isspace() for c in name) or name.endswith(".toml"):
        raise WorkloadError(f"{p}: workload.name: expected a name without spaces (not ending in .toml), given {name!r}")
    kind = head.get("kind", "model")
    source = head.get("source", f"workload file {p.name}")
    desc = head.get("description", "")
    for k, v in (("kind", kind), ("source", source), ("description", desc)):
        if not isinstance(v, str):
            raise WorkloadError(f"{p}: workload.{k}: expected a string, given {v!r}")
    pub = head.get("published_params")
    if pub is not None and (not isinstance(pub, int) or isinstance(pub, bool) or pub < 0):
        raise WorkloadError(f"{p}: workload.published_params: expected an integer >= 0, given {pub!r}")
    return name, kind, source, desc, pub, head


def _layers(raw_layers: Any, p: Path) -> list[Layer]:
    """The ``[[layers]]`` tables as layers, each ``inputs`` naming earlier layers (or ``"input"``)."""
    from suite.limits import check_layer_count

    if not isinstance(raw_layers, list) or not raw_layers:
        raise WorkloadError(f"{p}: layers: expected one or more [[layers]] tables, given {raw_layers!r}")
    try:
        check_layer_count(len(raw_layers), f"{p}: layers")
    except ValueError as e:
        raise WorkloadError(str(e)) from None
    layers = [_layer(r, f"{p}: layers[{i}]") for i, r in enumerate(raw_layers)]
    seen = {"input"}
    for i, l in enumerate(layers):
        if l.name in seen:
            raise WorkloadError(f"{p}: layers[{i}].name: duplicate layer name {l.name!r}")
        for src in l.attrs.get("inputs", ()) or ():
            if src not in seen:
                raise WorkloadError(f"{p}: layers[{i}].attrs.inputs: {src!r} is not an earlier layer "
                                    f"(expected names of layers above, or 'input')")
        seen.add(l.name)
    return layers


def _transformer_from(raw: Any, name: str, source: str, desc: str, pub: int | None, p: Path) -> LayerTable:
    from suite.limits import check_layer_count
    from suite.workloads.transformer import TransformerSpec, transformer

    if not isinstance(raw, dict):
        raise WorkloadError(f"{p}: transformer: expected a table, given {raw!r}")
    allowed = {f.name: f for f in fields(TransformerSpec)}
    allowed.pop("name")
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise WorkloadError(f"{p}: transformer.{unknown[0]}: unknown key; expected one of {', '.join(sorted(allowed))}")
    kw = dict(raw)
    for k, v in kw.items():
        ann = str(allowed[k].type)
        want = bool if ann == "bool" else int if ann.startswith("int") else float if ann == "float" else str
        ok = isinstance(v, want) and (want is bool or not isinstance(v, bool)) if want is not float \
            else isinstance(v, (int, float)) and not isinstance(v, bool)
        if not ok:
            raise WorkloadError(f"{p}: transformer.{k}: expected {want.__name__}, given {v!r}")
    for k in ("layers", "hidden", "heads", "vocab", "seq"):
        if k not in kw:
            raise WorkloadError(f"{p}: transformer: missing key {k!r}")
    try:
        check_layer_count(kw["layers"], f"{p}: transformer.layers")
    except ValueError as e:
        raise WorkloadError(str(e)) from None
    kw.setdefault("source", source)
    if pub is not None:
        kw.setdefault("published_params", pub)
    try:
        spec = TransformerSpec(name=name, **kw)
    except WorkloadError as e:
        raise WorkloadError(f"{p}: {e}") from None
    table = transformer(spec)
    if desc:
        from dataclasses import replace

        table = replace(table, description=desc)
    return table
