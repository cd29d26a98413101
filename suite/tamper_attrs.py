"""Attributes changed in place: a core function's code and defaults, a frozen value's fields.

:mod:`suite.tamper` compares which object each name of the shared modules is bound to, and the
contents of their tables. Two writes leave every binding and every table entry the same object
(a tryout's plugin did both while it loaded, and stayed ``ok``):

* ``Result.add.__code__ = _add.__code__``: the function keeps its identity, runs the plugin's
  code, and every technique's ``iteration_time`` was stored doubled (4.188 s for 2.094 s); the
  same for ``__defaults__`` and ``__kwdefaults__`` (a default the function falls back on);
* ``object.__setattr__(WORKERS_RESULT_MEANINGS["sim_time"], "unit", "ms")``: a frozen dataclass
  held by a core table, included by three built-ins, rewritten past its freeze.

:class:`Attrs` holds, for the core's and the plugins' shared namespaces (not numpy's, scipy's or
the standard library's, as :class:`suite.tamper.Tables`), each function's ``__code__``,
``__defaults__`` and ``__kwdefaults__`` (the module's functions, and the methods, static and class
methods and properties' accessors of the classes it defines), and each frozen dataclass's fields
(one bound to a name, or held by a table of at most :data:`TABLE_LIMIT` entries), compared by
identity in one C loop.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Iterable, Mapping
from itertools import chain, compress, repeat
from operator import attrgetter, contains, is_, itemgetter
from typing import Any

from suite.frozen import Flat, flat_items, same_flat, same_items

__all__ = ["Attrs", "TABLE_LIMIT"]

#: what a function is compared by (each put back by assignment)
CODE = ("__code__", "__defaults__", "__kwdefaults__")

#: a table of at most this many entries has its frozen dataclass values' fields compared; a larger
#: one is a cache, whose entries are its business (as :data:`suite.tamper.NESTED_LIMIT`)
TABLE_LIMIT = 256

_UNSEEN = object()
_CODE, _DEFAULTS, _KWDEFAULTS = map(attrgetter, CODE)
_ALL = attrgetter(*CODE)
_TABLES = (dict, list, tuple, set, frozenset, types.MappingProxyType)


class Attrs:
    """Objects' attributes, compared by identity (:data:`Entry`: where the object was found, its
    owner's module, the object, the names of its attributes compared), each attribute's value as
    taken, and the items of each function's ``__kwdefaults__`` (a dict written in place keeps its
    identity).

    :meth:`changes` puts back what changed (by ``object.__setattr__``: a frozen dataclass's
    ``__setattr__`` refuses) and names it ``label.attribute``; an object of the package *top* (the
    plugin's own function, by its ``__module__`` when taken) is no change, and is taken again."""

    __slots__ = ("entries", "saved", "kw", "_ids", "_spaces", "_fast", "_kw_flat")

    def __init__(self, namespaces: Iterable[tuple[str, Any, Mapping[str, Any]]] = ()) -> None:
        self.entries: list[Entry] = []
        self.saved: list[tuple[Any, ...]] = []
        #: entry index -> a copy of its function's ``__kwdefaults__`` (those that have any)
        self.kw: dict[int, dict[str, Any]] = {}
        self._ids: set[int] = set()
        self._spaces: set[int] = set()  # (the namespaces taken, by id: held alive by _WALKS)
        #: the attributes as taken, laid out for one C loop each (:meth:`unchanged`), extended as
        #: entries are added: the functions' code; the defaults of those that have any, and the
        #: keyword defaults of those with keyword-only parameters (defaults given to a function
        #: without any only serve a call that would have failed); the frozen values (repeated per
        #: field), their fields' names and values
        self._fast: tuple[list[Any], ...] = ([], [], [], [], [], [], [], [], [])
        self._kw_flat: tuple[list[Mapping[str, Any]], Flat] | None = None
        self.add(namespaces)

    def add(self, namespaces: Iterable[tuple[str, Any, Mapping[str, Any]]]) -> Attrs:
        """Take the functions and frozen values of *namespaces* (``(name, obj, dict)``) not held yet."""
        new = _watched(namespaces, self._ids, self._spaces)
        start = len(self.entries)
        self.entries += new
        self.saved += [_ALL(obj) if names is CODE else tuple(getattr(obj, n, _UNSEEN) for n in names)
                       for _where, _k, _owner, obj, names in new]
        for i in range(start, len(self.entries)):
            self._lay_out(i)
            kw = self.saved[i][2] if self.entries[i][4] is CODE else None
            if type(kw) is dict and kw:
                self.kw[i] = dict(kw)
                self._kw_flat = None
        return self

    def _take(self, i: int) -> None:
        """Take entry *i*'s attributes again, as they are now (its owner changed them)."""
        _where, _k, _owner, obj, names = self.entries[i]
        then = self.saved[i] = tuple(getattr(obj, n, _UNSEEN) for n in names)
        self.kw.pop(i, None)
        if names is CODE and type(then[2]) is dict and then[2]:
            self.kw[i] = dict(then[2])
        self._fast = ([], [], [], [], [], [], [], [], [])  # (rare: every entry laid out again)
        for j in range(len(self.entries)):
            self._lay_out(j)
        self._kw_flat = None

    def _lay_out(self, i: int) -> None:
        funcs, codes, pos, defaults, kwonly, kwdefaults, objs, names, values = self._fast
        _where, _k, _owner, obj, attrs = self.entries[i]
        then = self.saved[i]
        if attrs is not CODE:
            objs += [obj] * len(attrs)
            names += attrs
            values += then
            return
        funcs.append(obj)
        codes.append(then[0])
        code = then[0] if type(then[0]) is types.CodeType else None
        if code is None or then[1] is not None:
            pos.append(obj)
            defaults.append(then[1])
        if code is None or code.co_kwonlyargcount:
            kwonly.append(obj)
            kwdefaults.append(then[2])

    def unchanged(self) -> bool:
        """Whether every attribute is still the object taken, and every ``__kwdefaults__`` holds
        what it held (C loops: ~900 functions and ~10 frozen values in ~0.06 ms)."""
        funcs, codes, pos, defaults, kwonly, kwdefaults, objs, names, values = self._fast
        if self._kw_flat is None:
            self._kw_flat = ([self.saved[i][2] for i in self.kw], flat_items(list(self.kw.values())))
        kw, kw_items = self._kw_flat
        return (all(map(is_, map(_CODE, funcs), codes)) and all(map(is_, map(_DEFAULTS, pos), defaults))
                and all(map(is_, map(_KWDEFAULTS, kwonly), kwdefaults)) and same_flat(kw, kw_items)
                and all(map(is_, map(getattr, objs, names, repeat(_UNSEEN)), values)))

    def changes(self, top: str) -> list[str]:
        """The attributes changed since taken (``suite.x.f.__code__``), each put back; those of an
        object of the package *top* are taken again instead."""
        if self.unchanged():
            return []
        out: list[str] = []
        for i, ((where, k, owner, obj, names), then) in enumerate(zip(self.entries, self.saved)):
            moved = [a for a, v in zip(names, then) if getattr(obj, a, _UNSEEN) is not v]
            kw = self.kw.get(i)
            kw_moved = kw is not None and not same_items(then[2], kw)
            if not (moved or kw_moved):
                continue
            if top and str(owner).split(".")[0] == top:
                self._take(i)
                continue
            out += [f"{where}.{k}.{a}" for a in moved] + [f"{where}.{k}.__kwdefaults__"] * (kw_moved and not moved)
            _put_back(obj, names, then, kw)
        return out


def _put_back(obj: Any, names: tuple[str, ...], then: tuple[Any, ...], kw: dict[Any, Any] | None) -> None:
    for k, v in zip(names, then):
        try:
            if v is _UNSEEN:
                object.__delattr__(obj, k)
            elif getattr(obj, k, _UNSEEN) is not v:
                object.__setattr__(obj, k, v)
        except (AttributeError, TypeError, ValueError):  # (a code object whose free names differ cannot be set)
            pass
    if kw is not None:  # (the dict taken, put back above when rebound)
        dict.clear(then[2])
        dict.update(then[2], kw)


Entry = tuple[str, str, str, Any, tuple[str, ...]]  # (namespace, name in it, owner module, object, attributes)


def _watched(namespaces: Iterable[tuple[str, Any, Mapping[str, Any]]], ids: set[int], spaces: set[int]) -> list[Entry]:
    """:data:`Entry` of each object *namespaces* (``(name, obj, copy of its dict)``) hold that *ids*
    does not (each added to it): :func:`_walk` of each, kept while the namespace holds the same names
    bound to the same objects (a second snapshot of the ~150 shared namespaces walks none of them
    again), and only the names bound since walked when it changed (``suite.api``'s lazy exports); of
    a namespace in *spaces* (the ids of those taken before), only those."""
    out: list[Entry] = []
    for name, obj, d in namespaces:
        held = _WALKS.get(id(obj))
        if held is None or held[0] is not obj or held[1] != name:
            held = (obj, name, {}, [])
        walked = []
        if not same_items(d, held[2]):
            was = held[2]
            walked = _walk(name, obj, {k: v for k, v in d.items() if was.get(k, _UNSEEN) is not v} if was else d,
                           d.get("__caches__", ()))
            held = _WALKS[id(obj)] = (obj, name, dict(d), held[3] + walked)
        out += walked if id(obj) in spaces else held[3]
        spaces.add(id(obj))
    fresh = dict(zip(map(id, map(_OBJ, reversed(out))), reversed(out)))  # (C loops: an object's first entry)
    for i in ids.intersection(fresh):
        del fresh[i]
    ids.update(fresh)
    return list(fresh.values())


#: id of a namespace -> (it, its name, the copy of its dict walked, :func:`_walk`'s entries)
_WALKS: dict[int, tuple[Any, str, dict[str, Any], list[Entry]]] = {}
_OBJ = itemgetter(3)


def _walk(name: str, obj: Any, d: Mapping[str, Any], caches: Any) -> list[Entry]:
    """The functions the namespace *name* holds (an installed plugin's classes' methods too: the
    core's classes are namespaces of their own, :func:`suite.tamper._entries`), and, in the core,
    its frozen dataclass values (a plugin's, once its technique is built, are compared with it:
    :class:`suite.tamper_fields.Fields`); not the names in *caches* (its ``__caches__``)."""
    keys, values = list(d), list(d.values())
    kinds = list(map(_KIND.__getitem__, map(type, values)))  # (C loops: most names are none of these)
    plain = list(map(is_, kinds, repeat(_PLAIN)))
    fkeys, funcs = list(compress(keys, plain)), list(compress(values, plain))
    if caches:
        funcs = [f for k, f in zip(fkeys, funcs) if k not in caches]
    mods = list(map(_MODULE, funcs))  # (C loops: ~900 functions a command)
    out: list[Entry] = list(zip(mods, map(_QUALNAME, funcs), mods, funcs, repeat(CODE)))
    wrapped = [("", f.__wrapped__, _FUNCTION) for f in compress(funcs, map(contains, map(_DICT, funcs),
                                                                          repeat("__wrapped__")))]
    core = name == "suite" or name.startswith("suite.")
    for k, v, kind in chain(wrapped, compress(zip(keys, values, kinds), map(_OTHER.__contains__, kinds))):
        if k in caches:
            continue
        if kind is _FUNCTION:
            out += [(f.__module__, f.__qualname__, f.__module__, f, CODE) for f in _functions(v)]
        elif kind is _CLASS:
            if not core and isinstance(obj, types.ModuleType) and v.__module__ == name:
                out += _walk(f"{name}.{k}", v, v.__dict__, ())
        elif core:
            out += _values(name, k, v)
    return out


#: a function's module (its package is the plugin's own to change) and qualified name, as they are
#: when taken (``suite.declaration.results.Result.add``), and its attributes
_MODULE, _QUALNAME, _DICT = attrgetter("__module__"), attrgetter("__qualname__"), attrgetter("__dict__")


class _Kinds(dict[type, Any]):
    """type -> what :func:`_walk` looks into for a value of it (a function, another function-like
    object, a class, a table, a frozen dataclass), or ``None``: worked out once per type."""

    def __missing__(self, t: type) -> Any:
        if t is types.FunctionType:
            kind: Any = _PLAIN
        elif t in (staticmethod, classmethod, property, functools.cached_property, _LRU):
            kind = _FUNCTION
        elif issubclass(t, type):
            kind = _CLASS
        elif t in _TABLES:
            kind = _TABLE
        elif _fields_of(t):
            kind = _VALUE
        else:
            kind = None
        self[t] = kind
        return kind


_PLAIN, _FUNCTION, _CLASS, _TABLE, _VALUE = "plain", "function", "class", "table", "value"
_OTHER = frozenset({_FUNCTION, _CLASS, _TABLE, _VALUE})


def _values(name: str, k: str, v: Any) -> list[Entry]:
    """*v* (``name.k``) when it is a frozen dataclass, or the frozen dataclasses a table *v* of at
    most :data:`TABLE_LIMIT` entries holds (``dict``, read-only mapping, list, tuple, set)."""
    if _KIND[type(v)] is not _TABLE:
        return [(name, k, name, v, _FIELDS[type(v)])]
    if len(v) > TABLE_LIMIT:
        return []
    keys, values = (list(v), list(v.values())) if isinstance(v, Mapping) else (range(len(v)), list(v))
    kinds = map(_KIND.__getitem__, map(type, values))
    return [(name, f"{k}[{key!r}]", name, x, _FIELDS[type(x)])
            for key, x in compress(zip(keys, values), map(is_, kinds, repeat(_VALUE)))]


def _functions(v: Any) -> list[Any]:
    """The Python functions *v* runs: itself, a static or class method's, a property's accessors,
    a cached property's or a memoised function's (``functools.lru_cache``) own."""
    t = type(v)
    if t is types.FunctionType:
        inner = v.__dict__.get("__wrapped__") if v.__dict__ else None
        return [v, inner] if type(inner) is types.FunctionType else [v]
    if t is staticmethod or t is classmethod:
        fs = [v.__func__]
    elif t is property:
        fs = [v.fget, v.fset, v.fdel]
    elif t is functools.cached_property:
        fs = [v.func]
    elif t is _LRU:
        fs = [v.__wrapped__]
    else:
        return []
    return [f for f in fs if type(f) is types.FunctionType]


_LRU = type(functools.lru_cache(maxsize=None)(lambda: None))

#: dataclass type -> its field names when frozen, else () (one look-up per value after the first)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(t: type) -> tuple[str, ...]:
    params = getattr(t, "__dataclass_params__", None)
    frozen = params is not None and getattr(params, "frozen", False) is True and not issubclass(t, type)
    names = _FIELDS[t] = tuple(f.name for f in dataclasses.fields(t)) if frozen else ()
    return names


_KIND = _Kinds()
