"""Write a resolved :class:`~suite.hardware.Profile` back to TOML (``suite hardware show --format toml``).

The output is a self-contained profile file: references and ``extends`` are resolved inline, and
every quantity is written exactly, as a string in its SI unit (``"85899345920 B"``,
``"1250000000.0 B/s"``), so loading the file gives back the same figures and the same content hash.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel

from suite.hardware.field_errors import _field_at
from suite.hardware.profile import Profile
from suite.hardware.units import dimension_of

__all__ = ["to_toml", "toml_dumps", "SI_SYMBOL"]

#: Unit written for each dimension (parsed back by :func:`suite.hardware.units.parse_quantity`).
SI_SYMBOL = {"bytes": "B", "bandwidth": "B/s", "flop_rate": "FLOP/s", "time": "s", "per_byte_time": "s/B",
             "power": "W", "money": "USD", "frequency": "Hz"}


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            raise ValueError(f"cannot write {v!r} to TOML")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(str(k))} = {_scalar(x)}" for k, x in v.items()) + " }"
    if v is None:
        raise ValueError("cannot write None to TOML")
    return json.dumps(str(v))


def toml_dumps(data: dict[str, Any], _prefix: tuple[str, ...] = ()) -> str:
    """A small TOML writer for plain data (str, int, float, bool, lists, dicts); None is skipped.

    Dicts become ``[tables]``, lists of dicts ``[[arrays of tables]]``; everything else is inline.
    """
    lines: list[str] = []
    tables: list[tuple[str, Any]] = []
    for k, v in data.items():
        if v is None:
            continue
        if isinstance(v, dict) and v and not _prefix == ("__inline__",):
            tables.append((k, v))
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, dict) for x in v):
            tables.append((k, list(v)))
        else:
            lines.append(f"{_key(str(k))} = {_scalar(v)}")
    out = "\n".join(lines)
    for k, v in tables:
        path = _prefix + (str(k),)
        head = ".".join(_key(p) for p in path)
        if isinstance(v, list):
            for item in v:
                simple = {a: b for a, b in item.items() if not (isinstance(b, list) and b and isinstance(b[0], dict))}
                nested = {a: b for a, b in item.items() if a not in simple}
                body = toml_dumps(simple, path)
                out += f"\n\n[[{head}]]\n{body}".rstrip()
                for nk, nv in nested.items():
                    for sub in nv:
                        out += f"\n\n[[{head}.{_key(nk)}]]\n{toml_dumps(sub, path + (nk,))}".rstrip()
        else:
            out += f"\n\n[{head}]\n{toml_dumps(v, path)}".rstrip()
    return out.strip() + "\n" if _prefix == () else out.strip()


def _with_units(obj: Any, model: type[BaseModel], loc: tuple[Any, ...]) -> Any:
    """Replace SI floats by unit strings wherever *model*'s schema declares a quantity."""
    if isinstance(obj, BaseModel):
        obj = obj.model_dump(mode="python")
    if isinstance(obj, dict):
        return {k: _with_units(v, model, loc + (k,)) for k, v in obj.items() if v is not None}
    if isinstance(obj, (list, tuple)):
        return [_with_units(v, model, loc + (i,)) for i, v in enumerate(obj)]
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        walked = _field_at(model, loc)
        dim = None
        if walked is not None:
            _p, ann, meta = walked
            dim = dimension_of(meta) or dimension_of(list(getattr(ann, "__metadata__", ())))
            if dim is None:
                from suite.hardware.field_errors import _unwrap

                for a in _unwrap(ann):
                    if getattr(a, "__metadata__", None) and dimension_of(list(a.__metadata__)):
                        dim = dimension_of(list(a.__metadata__))
        if dim:
            return f"{float(obj)!r} {SI_SYMBOL[dim]}"
    return obj


def to_toml(profile: Profile, extensions: dict[str, type[BaseModel]] | None = None) -> str:
    """Render *profile* (resolved) as a standalone TOML profile file.

    Parameters
    ----------
    profile : Profile
    extensions : dict, optional
        Extension schemas (default: the registry's) used to write ``[ext.NAME]`` quantities with
        units; an extension without a schema is written as stored.
    """
    if extensions is None:
        from suite.hardware.profile import _registry_extensions

        extensions = _registry_extensions()
    meta = {"name": profile.name, "kind": profile.kind, "source": profile.source, "verified": profile.verified,
            "description": profile.description, "vendor": profile.vendor, "tags": list(profile.tags)}
    doc: dict[str, Any] = {}
    if profile.nodes is not None:
        doc["nodes"] = profile.nodes
    doc["profile"] = meta
    body = profile.model_dump(mode="python", include={"device", "node", "network", "communication", "reliability", "cost"})
    body = _with_units(body, Profile, ())
    for key in ("device", "node", "network", "communication", "reliability", "cost"):
        if body.get(key) not in (None, [], ()):
            doc[key] = body[key]
    if profile.ext:
        ext: dict[str, Any] = {}
        for name, table in profile.ext.items():
            schema = extensions.get(name)
            ext[name] = _with_units(table, schema, ()) if schema is not None else table
        doc["ext"] = ext
    if profile.sources:
        doc["sources"] = dict(profile.sources)
    if profile.measured:
        doc["measured"] = profile.measured
    head = f"# {profile.name}: resolved export (content hash {profile.content_hash()})\n"
    if profile.overrides:
        head += f"# overrides applied: {json.dumps(profile.overrides)}\n"
    return head + toml_dumps(doc)
