"""Deep immutability for what a plugin receives (profiles, workloads, scenarios, parameters).

A plugin that writes to its inputs would change every later case that shares them (one profile
object serves a whole sweep), and the stored results would lie under clean case keys. Everything
handed to ``evaluate`` is therefore frozen all the way down: mappings are :class:`FrozenDict`,
lists become tuples, numpy arrays are read-only, dataclasses and pydantic models are frozen. A
write raises :class:`ImmutableError` naming the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from suite.errors import SuiteError

__all__ = ["FrozenDict", "ImmutableError", "freeze", "freeze_fields"]


class ImmutableError(SuiteError, TypeError):
    """A write to an input a plugin must treat as read-only."""


class FrozenDict(dict):
    """A ``dict`` that refuses writes (``what`` names it in the error). Picklable and JSON-able."""

    __slots__ = ("_what",)

    def __init__(self, *args: Any, what: str = "mapping", **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._what = what

    def _refuse(self, *_a: Any, **_k: Any):
        raise ImmutableError(f"{self._what} is read-only: a plugin must not change its inputs "
                             f"(copy it first, e.g. dict(...))")

    def __setitem__(self, key, value):
        raise ImmutableError(f"{self._what}[{key!r}] is read-only: a plugin must not change its inputs "
                             f"(copy it first, e.g. dict(...))")

    __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self):
        return (_rebuild, (dict(self), self._what))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: repr(kv[0]))))


def _rebuild(d: dict, what: str) -> FrozenDict:
    return FrozenDict(d, what=what)


#: types that are immutable already: returned as they are, with no further check (most leaves
#: of a layer table are these; checking each against Mapping, numpy and pydantic made freezing
#: ResNet-152 half of a cached `suite reproduce`, issue 19)
_IMMUTABLE = frozenset({int, float, str, bool, type(None), bytes, complex, range})


def freeze(value: Any, what: str = "value") -> Any:
    """A deeply read-only version of *value* (mappings, lists, sets, arrays, nested models)."""
    t = type(value)
    if t in _IMMUTABLE or t is FrozenDict:
        return value
    if t is tuple or t is list:
        if t is tuple and all(type(v) in _IMMUTABLE for v in value):
            return value
        return tuple(v if type(v) in _IMMUTABLE else freeze(v, f"{what}[{i}]") for i, v in enumerate(value))
    if t is dict or isinstance(value, Mapping):
        return FrozenDict({k: v if type(v) in _IMMUTABLE else freeze(v, f"{what}[{k!r}]") for k, v in value.items()},
                          what=what)
    if t in _DATACLASSES:  # a dataclass type met before (a layer of a 25,000-layer table): no type tests
        if not getattr(value, "__suite_frozen__", False):
            freeze_fields(value, what)
        return value
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v, f"{what}[{i}]") for i, v in enumerate(value))
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    if getattr(value, "__suite_frozen__", False):
        return value
    np = _numpy()
    if np is not None and isinstance(value, np.ndarray):
        if value.flags.writeable:
            value = value.view()
            value.flags.writeable = False
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        freeze_fields(value, what)
        _DATACLASSES.add(t)
        return value
    if _is_pydantic_model(value):
        freeze_fields(value, what)
        return value
    return value


#: dataclass types :func:`freeze` has met (not Mappings, lists, tuples, sets or arrays: those are
#: tested first), so the next instance goes straight to :func:`freeze_fields`
_DATACLASSES: set[type] = set()


def _numpy():
    import sys

    return sys.modules.get("numpy")  # an array exists only if numpy was imported


def _is_pydantic_model(value: Any) -> bool:
    import sys

    pyd = sys.modules.get("pydantic")  # a model exists only if pydantic was imported
    return pyd is not None and isinstance(value, pyd.BaseModel)


_FIELDS: dict[type, tuple[str, ...]] = {}


def freeze_fields(obj: Any, what: str) -> None:
    """Freeze the mutable fields of a frozen dataclass or frozen pydantic model in place."""
    if getattr(obj, "__suite_frozen__", False):
        return
    t = type(obj)
    names = _FIELDS.get(t)
    if names is None:
        names = (tuple(f.name for f in dataclasses.fields(obj)) if dataclasses.is_dataclass(obj)
                 else tuple(t.model_fields))
        _FIELDS[t] = names
    for name in names:
        cur = getattr(obj, name, None)
        tc = type(cur)
        # what freeze() returns as it is, tested here (a layer's shapes): no call, no label
        if tc in _IMMUTABLE or tc is FrozenDict or (tc is tuple and all(type(v) in _IMMUTABLE for v in cur)):
            continue
        new = freeze(cur, f"{what}.{name}")
        if new is not cur:
            object.__setattr__(obj, name, new)
    if dataclasses.is_dataclass(obj):
        try:
            object.__setattr__(obj, "__suite_frozen__", True)
        except (AttributeError, TypeError):  # __slots__ classes: fine, freezing is idempotent
            pass
