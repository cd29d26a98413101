"""Which fields of a hardware profile an evaluation read.

A profile field that changes nothing is a bug or a documented choice (a known complaint about
simulators: a configuration field that silently has no effect). :func:`tracked` wraps a
:class:`~suite.hardware.Profile` in a read-only view that records the dotted path of every
field read through it (``device.peak_flops.fp32``, ``network.1.bandwidth``, ``nodes``). The
runner records every case with the same paths in the profile itself (cheaper than this view:
:mod:`suite.hardware.recording`) and stores them; ``suite info`` lists them, ``suite run --set``
warns about an override of a field the technique never read, and ``suite hardware show --unread`` marks fields nobody reads.

Derived properties (``profile.devices_per_node``, ``profile.num_devices``) are evaluated on the
view, so the fields they read are recorded. Reading a whole table (iterating ``peak_flops``,
``model_dump``) records the table's path, which covers every field under it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["tracked", "ReadSet", "field_paths", "normalize_path", "covers"]

# methods that look at the whole object: delegated to the real profile, recorded as its prefix
_WHOLE = frozenset({"model_dump", "model_dump_json", "normalized", "content_hash", "with_overrides", "show",
                    "__repr__", "__str__", "model_copy", "__eq__", "__hash__"})


class ReadSet(set[str]):
    """The dotted paths read through one tracked view (a ``set`` of ``str``)."""


def _wrap(value: Any, path: str, reads: ReadSet) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return _ModelView(value, path, reads)
    if isinstance(value, Mapping):
        return _MappingView(value, path, reads)
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], BaseModel):
        return _SeqView(value, path, reads)
    reads.add(path)
    return value


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


class _ModelView:
    __slots__ = ("_v_obj", "_v_path", "_v_reads", "__weakref__")

    def __init__(self, obj: Any, path: str, reads: ReadSet):
        object.__setattr__(self, "_v_obj", obj)
        object.__setattr__(self, "_v_path", path)
        object.__setattr__(self, "_v_reads", reads)

    def __getattr__(self, name: str) -> Any:
        obj, path, reads = self._v_obj, self._v_path, self._v_reads
        cls = type(obj)
        if name in getattr(cls, "model_fields", {}):
            return _wrap(getattr(obj, name), _join(path, name), reads)
        attr = getattr(cls, name, None)
        if isinstance(attr, property):  # derived figure: evaluated on the view, so its reads count
            return attr.fget(self) if attr.fget is not None else None
        if name in _WHOLE or name.startswith("model_"):
            reads.add(path or "*")
            return getattr(obj, name)
        if callable(attr):  # a method: bound to the view
            return attr.__get__(self, cls)
        return getattr(obj, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._v_obj, name, value)  # the frozen model raises, naming the field

    def __repr__(self) -> str:
        return f"<tracked {self._v_obj!r}>"

    def __eq__(self, other: Any) -> bool:
        self._v_reads.add(self._v_path or "*")
        return bool(self._v_obj == (other._v_obj if isinstance(other, _ModelView) else other))

    def __hash__(self) -> int:
        return hash(self._v_obj)


class _MappingView(Mapping[Any, Any]):
    __slots__ = ("_v_obj", "_v_path", "_v_reads", "__weakref__")

    def __init__(self, obj: Any, path: str, reads: ReadSet):
        self._v_obj, self._v_path, self._v_reads = obj, path, reads

    def __getitem__(self, key: Any) -> Any:
        return _wrap(self._v_obj[key], _join(self._v_path, str(key)), self._v_reads)

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self._v_obj:
            return self[key]
        self._v_reads.add(_join(self._v_path, str(key)))  # looked for: its absence is a reading too
        return default

    def __contains__(self, key: object) -> bool:
        self._v_reads.add(_join(self._v_path, str(key)))
        return key in self._v_obj

    def __iter__(self) -> Iterator[Any]:
        self._v_reads.add(self._v_path)  # every key seen: the whole table was read
        return iter(self._v_obj)

    def __len__(self) -> int:
        return len(self._v_obj)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._v_obj[key] = value  # the frozen table raises ImmutableError, naming the field

    def __repr__(self) -> str:
        return f"<tracked {dict(self._v_obj)!r}>"


class _SeqView:
    __slots__ = ("_v_obj", "_v_path", "_v_reads", "__weakref__")

    def __init__(self, obj: Any, path: str, reads: ReadSet):
        self._v_obj, self._v_path, self._v_reads = obj, path, reads

    def __len__(self) -> int:  # the structure, not a figure: not a read
        return len(self._v_obj)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            idx = range(len(self._v_obj))[i]
            return tuple(self[j] for j in idx)
        j = i + len(self._v_obj) if i < 0 else i
        return _wrap(self._v_obj[i], _join(self._v_path, str(j)), self._v_reads)

    def __iter__(self) -> Iterator[Any]:
        return (self[j] for j in range(len(self._v_obj)))

    def __bool__(self) -> bool:
        return bool(self._v_obj)

    def __repr__(self) -> str:
        return f"<tracked {self._v_obj!r}>"


def tracked(profile: Any) -> tuple[Any, ReadSet]:
    """A read-recording view of *profile* and the set its reads go into.

    Returns
    -------
    (view, reads)
        ``view`` answers like the profile (attributes, derived properties, tables, network
        levels; writes raise like the frozen profile's); ``reads`` fills with dotted paths.
    """
    reads = ReadSet()
    return _ModelView(profile, "", reads), reads


def field_paths(profile: Any) -> list[str]:
    """Every leaf field of *profile* that has a value, as dotted paths (``network.0.bandwidth``)."""
    from pydantic import BaseModel

    skip = {"name", "kind", "source", "sources", "description", "verified", "tags", "vendor", "path", "overrides",
            "measured", "references", "extends"}
    out: list[str] = []

    def walk(v: Any, path: str) -> None:
        if isinstance(v, BaseModel):
            for k in type(v).model_fields:
                if not path and k in skip:
                    continue
                walk(getattr(v, k), _join(path, k))
        elif isinstance(v, Mapping):
            for k in v:
                walk(v[k], _join(path, str(k)))
        elif isinstance(v, (list, tuple)) and v and isinstance(v[0], BaseModel):
            for i, x in enumerate(v):
                walk(x, _join(path, str(i)))
        elif v is not None and not (isinstance(v, (list, tuple)) and not v):
            out.append(path)

    walk(profile, "")
    return out


def normalize_path(path: str, profile: Any = None) -> str:
    """An override path with negative network indices made positive (``network.-1.x`` ->
    ``network.1.x`` on a two-level profile: :func:`suite.hardware.profile.field_path`)."""
    from suite.hardware.profile import field_path

    return path if profile is None else field_path(path, len(profile.network))


def covers(reads: set[str], path: str) -> bool:
    """True when *reads* include *path*, a table above it, or a field below it."""
    if "*" in reads or path in reads:
        return True
    return any(path.startswith(r + ".") or r.startswith(path + ".") for r in reads)
