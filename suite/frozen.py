"""Deep immutability for what a plugin receives (profiles, workloads, scenarios, parameters).

A plugin that writes to its inputs would change every later case that shares them (one profile
object serves a whole sweep), and the stored results would lie under clean case keys. Everything
handed to ``evaluate`` is therefore frozen all the way down: mappings are :class:`FrozenDict`,
lists become tuples, numpy arrays are read-only, dataclasses and pydantic models are frozen. A
write raises :class:`ImmutableError` naming the field.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Mapping
from itertools import chain
from operator import is_
from typing import Any

from suite.errors import SuiteError

__all__ = ["FrozenDict", "ImmutableError", "freeze", "freeze_fields"]


class ImmutableError(SuiteError, TypeError):
    """A write to an input a plugin must treat as read-only."""


class FrozenDict(dict[Any, Any]):
    """A ``dict`` that refuses writes (``what`` names it in the error). Picklable and JSON-able."""

    __slots__ = ("_what",)

    def __init__(self, *args: Any, what: str = "mapping", **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._what = what

    def _refuse(self, *_a: Any, **_k: Any) -> Any:
        raise ImmutableError(f"{self._what} is read-only: a plugin must not change its inputs "
                             f"(copy it first, e.g. dict(...))")

    def __setitem__(self, key: Any, value: Any) -> None:
        raise ImmutableError(f"{self._what}[{key!r}] is read-only: a plugin must not change its inputs "
                             f"(copy it first, e.g. dict(...))")

    __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (dict(self), self._what))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: Any) -> FrozenDict:
        return self

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: repr(kv[0]))))


def _rebuild(d: dict[Any, Any], what: str) -> FrozenDict:
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
        out = tuple(v if type(v) in _IMMUTABLE else freeze(v, f"{what}[{i}]") for i, v in enumerate(value))
        if t is tuple and all(a is b for a, b in zip(out, value)):
            return value  # frozen already (a profile's network levels): the same object, so freezing
            # twice changes no identity the per-case input guard compares
        return out
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
    np = loaded_numpy()
    if np is not None and isinstance(value, np.ndarray):
        return _readonly_array(value, np)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        freeze_fields(value, what)
        _DATACLASSES.add(t)
        return value
    if _is_pydantic_model(value):
        freeze_fields(value, what)
        return value
    return value


def _readonly_array(value: Any, np: Any) -> Any:
    """*value* as an array no one can make writeable again: its memory is an immutable ``bytes``
    object (a read-only *view* of a writeable array can be made writeable through
    ``flags.writeable = True`` or its ``.base``). Object arrays are only flagged read-only."""
    base = value
    while isinstance(getattr(base, "base", None), np.ndarray):
        base = base.base
    if not value.flags.writeable and isinstance(getattr(base, "base", None), bytes):
        return value
    if value.dtype.hasobject:
        value = value.view()
        value.flags.writeable = False
        return value
    out = np.frombuffer(np.ascontiguousarray(value).tobytes(), dtype=value.dtype).reshape(value.shape)
    return out


#: dataclass types :func:`freeze` has met (not Mappings, lists, tuples, sets or arrays: those are
#: tested first), so the next instance goes straight to :func:`freeze_fields`
_DATACLASSES: set[type] = set()


def same_items(a: Mapping[Any, Any], b: Mapping[Any, Any]) -> bool:
    """Whether dicts *a* and *b* hold the same keys bound to the same objects (identity), in the
    same order: three C loops, no list built (the input guard's, the read recording's and the
    import-patch guard's test for "nothing changed")."""
    return len(a) == len(b) and all(map(is_, a, b)) and all(map(is_, a.values(), b.values()))


Flat = tuple[list[int], tuple[Any, ...], tuple[Any, ...]]


def flat_items(maps: list[Mapping[Any, Any]], values: Any = dict.values) -> Flat:
    """The lengths, keys and values of the mappings *maps*, in order: what :func:`same_flat`
    compares a later state with. *values* is the C function giving a mapping's values
    (``dict.values``; ``operator.methodcaller("values")`` where a class's mappingproxy is among them)."""
    return (list(map(len, maps)), tuple(chain.from_iterable(maps)), tuple(chain.from_iterable(map(values, maps))))


def same_flat(now: list[Mapping[Any, Any]], flat: Flat, values: Any = dict.values) -> bool:
    """Whether the mappings *now* hold, each in order, the same keys bound to the same objects
    (identity) as those :func:`flat_items` was taken of: :func:`same_items` for all of them at
    once, three C loops in all (no Python step per mapping).

    Raises
    ------
    TypeError
        When an entry of *now* is not a mapping *values* accepts."""
    lens, keys, vals = flat
    return (list(map(len, now)) == lens and all(map(is_, chain.from_iterable(now), keys))
            and all(map(is_, chain.from_iterable(map(values, now)), vals)))


def loaded_numpy() -> Any:
    """The numpy module if this process has imported it, else None: no numpy value (array or
    scalar) can exist before, so a check for one needs no import (a cached command imports none)."""
    import sys

    return sys.modules.get("numpy")


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
        if tc in _IMMUTABLE or tc is FrozenDict or (tc is tuple and all(type(v) in _IMMUTABLE for v in cur or ())):
            continue
        new = freeze(cur, f"{what}.{name}")
        if new is not cur:
            object.__setattr__(obj, name, new)
    if dataclasses.is_dataclass(obj):
        try:
            object.__setattr__(obj, "__suite_frozen__", True)
        except (AttributeError, TypeError):  # __slots__ classes: fine, freezing is idempotent
            pass


# --------------------------------------------------------------------------- the per-case guard


#: one snapshot entry of :func:`guard`: (object, shallow copy of its items, is a mapping, parent
#: entry or None, key in the parent)
_Entry = tuple[Any, dict[Any, Any], bool, Any, Any]


class InputMutated(SuiteError):
    """A case changed one of its inputs through a route the freeze cannot close (``vars()``,
    ``object.__setattr__``, ``__dict__``, ``dict.__setitem__`` on a frozen mapping): the case
    fails, and its inputs are put back before the next case."""


def _state_of(obj: Any) -> dict[str, Any] | None:
    d = getattr(obj, "__dict__", None)
    return d if type(d) is dict else None


class Snapshot(list[_Entry]):
    """What :func:`guard` returns: its entries (a list), and the form :func:`restore_changed`
    checks them in when nothing changed (built on the first check, kept with the snapshot)."""

    __slots__ = ("fast",)

    def __init__(self) -> None:
        super().__init__()
        self.fast: tuple[list[Any], list[Any], Flat] | None = None

    def unchanged(self) -> bool:
        """True when every object holds the same keys and values (the same objects) in the same
        order as snapshot; False when anything may differ (then :func:`restore_changed` looks).
        Each step a C loop over all entries at once."""
        if self.fast is None:
            order = [e for e in self if e[2]] + [e for e in self if not e[2]]
            self.fast = ([e[0] for e in order if e[2]], [e[0] for e in order if not e[2]],
                         flat_items([e[1] for e in order]))
        maps, objs, flat = self.fast
        try:
            return same_flat(maps + list(map(vars, objs)), flat)
        except TypeError:  # an object whose __dict__ is gone or no dict: the full check says
            return False


#: the mapping types of a flat table :func:`guard` snapshots without the walk
_MAPS = frozenset({dict, FrozenDict})


def guard(*inputs: tuple[str, Any], limit: int = 256) -> Snapshot:
    """A snapshot of *inputs* (``(label, value)`` pairs) that :func:`restore_changed` checks.

    For every frozen mapping and every object with a ``__dict__`` (pydantic models, dataclasses)
    reachable from the inputs, breadth first, the snapshot keeps the object and a shallow copy of
    its items, so a change by any route shows as an entry that is no longer the same object, and
    can be undone. Tuples and leaves are walked, not copied; numpy arrays are read-only all the
    way down (:func:`freeze` backs them by immutable bytes). At most *limit* objects per input are
    kept (the top levels: a 500-layer table's layers beyond it are not checked, so a case costs
    one dict copy per object, not per layer field).
    """
    snap = Snapshot()
    if len(inputs) == 1 and limit > 0 and type(inputs[0][1]) in _MAPS and all(map(_IMMUTABLE.__contains__,
                                                                     map(type, inputs[0][1].values()))):
        snap.append((inputs[0][1], dict(inputs[0][1]), True, None, inputs[0][0]))  # a flat table (parameters):
        return snap  # what the walk below would keep, without it
    seen: set[int] = set()
    for label, root in inputs:
        if root is None:
            continue
        kept = 0
        queue: deque[tuple[Any, Any, Any]] = deque([(root, None, label)])
        while queue and kept < limit:
            v, parent, key = queue.popleft()
            t = type(v)
            if t in _IMMUTABLE or id(v) in seen:
                continue
            seen.add(id(v))
            if t is tuple or t is list:
                queue.extend((x, parent, (key, i)) for i, x in enumerate(v) if type(x) not in _IMMUTABLE)
                continue
            is_map = isinstance(v, dict)
            d = v if is_map else _state_of(v)
            if d is None:
                continue
            items = dict(d)
            entry: _Entry = (v, items, is_map, parent, key)
            snap.append(entry)
            kept += 1
            queue.extend((x, entry, k) for k, x in items.items() if type(x) not in _IMMUTABLE)
    return snap


def _label(entry: _Entry | None, key: Any) -> str:
    """The path of field *key* of snapshot *entry* (``profile.network[1].bandwidth``)."""
    parts: list[str] = []
    while True:
        while isinstance(key, tuple):  # (key, index) of an element of a tuple
            parts.append(f"[{key[1]}]")
            key = key[0]
        if entry is None:
            parts.append(str(key))
            break
        parts.append(f"[{key!r}]" if entry[2] else f".{key}")
        entry, key = entry[3], entry[4]
    return "".join(reversed(parts))


def _same(now: dict[Any, Any], then: dict[Any, Any]) -> str | None:
    if len(now) != len(then):
        extra = sorted(set(map(str, now)) ^ set(map(str, then)))
        return extra[0] if extra else "?"
    for k, x in then.items():
        if k not in now or now[k] is not x:
            if type(x) in _IMMUTABLE and k in now and type(now[k]) is type(x) and now[k] == x:
                continue  # an equal small int or string rebuilt: no change
            return str(k)
    return None


def changed_fields(labels: list[str]) -> str | None:
    """The fields of *labels* as one text: ``"a"``, ``"a and b"``, ``"a, b and c"``; past four,
    ``"a, b, c, d and N more"``; None for none."""
    if not labels:
        return None
    shown = labels[:4]
    rest = f"{len(labels) - 4} more" if len(labels) > 4 else shown.pop() if len(shown) > 1 else None
    return ", ".join(shown) + (f" and {rest}" if rest else "")


def restore_changed(snap: list[_Entry]) -> str | None:
    """Check the snapshot of :func:`guard`: put back every changed object and return the changed
    fields, the first found first (``"profile.network[1].bandwidth"``, ``"profile.nodes and
    profile.network[0].bandwidth"``: :func:`changed_fields`), or None when nothing changed."""
    return changed_fields(restore_changed_fields(snap))


def restore_changed_fields(snap: list[_Entry]) -> list[str]:
    """:func:`restore_changed`, the changed fields as a list (empty when nothing changed)."""
    if len(snap) > 2 and isinstance(snap, Snapshot) and snap.unchanged():
        return []  # nothing changed, found in a few C loops (a kept profile's dozen objects)
    labels: list[str] = []
    for entry in snap:
        obj, items, is_map = entry[0], entry[1], entry[2]
        now = obj if is_map else _state_of(obj)
        if now is None:
            continue
        if same_items(now, items):
            continue  # the same keys holding the same objects, in the same order (checked in C: the common case)
        what = _same(now, items)
        if what is None:
            continue
        labels.append(_label(entry, what))
        dict.clear(now)
        dict.update(now, items)
    if labels:
        for forget in _DERIVED:
            forget()
    return labels


#: what drops the core's figures derived from input objects and cached by their identity (a
#: profile's network levels, its priced collectives): called once a case's write to its inputs
#: has been put back, since what was derived during the case came from the written values
_DERIVED: list[Any] = []


def on_inputs_restored(forget: Any) -> Any:
    """Register *forget* (no arguments) to run whenever :func:`restore_changed` puts back a write
    to a case's inputs: a cache keyed by an input object's identity, filled while the case ran,
    holds figures of the written values. Returns *forget* (usable as a decorator)."""
    _DERIVED.append(forget)
    return forget
