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


def freeze(value: Any, what: str = "value") -> Any:
    """A deeply read-only version of *value* (mappings, lists, sets, arrays, nested models)."""
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v, f"{what}[{k!r}]") for k, v in value.items()}, what=what)
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v, f"{what}[{i}]") for i, v in enumerate(value))
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    try:
        import numpy as np

        if isinstance(value, np.ndarray):
            if value.flags.writeable:
                value = value.view()
                value.flags.writeable = False
            return value
    except ImportError:  # pragma: no cover
        pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        freeze_fields(value, what)
        return value
    try:
        from pydantic import BaseModel

        if isinstance(value, BaseModel):
            freeze_fields(value, what)
            return value
    except ImportError:  # pragma: no cover
        pass
    return value


def freeze_fields(obj: Any, what: str) -> None:
    """Freeze the mutable fields of a frozen dataclass or frozen pydantic model in place."""
    if getattr(obj, "__suite_frozen__", False):
        return
    if dataclasses.is_dataclass(obj):
        names = [f.name for f in dataclasses.fields(obj)]
    else:
        names = list(type(obj).model_fields)
    for name in names:
        cur = getattr(obj, name, None)
        new = freeze(cur, f"{what}.{name}")
        if new is not cur:
            object.__setattr__(obj, name, new)
    if dataclasses.is_dataclass(obj):
        try:
            object.__setattr__(obj, "__suite_frozen__", True)
        except (AttributeError, TypeError):  # __slots__ classes: fine, freezing is idempotent
            pass
