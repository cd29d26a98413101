"""Import-time patches: a plugin that rebinds a name in the core, numpy, scipy or another plugin.

A plugin is imported in the coordinating process (its hooks say what it provides), and every
local worker is forked from that process: a plugin that patches ``numpy.dot``, a
``suite.perf`` function or another plugin's model while it loads would change every plugin's
numbers (issue 43: one technique's speed-up x3, stored ``ok``). The registry therefore takes a
:func:`snapshot` of the shared modules' top-level names (and of the core's classes) before each
plugin loads and checks it after (:func:`undo_changes`): a plugin that rebound anything is
quarantined, and what it rebound is put back before the next plugin loads.

This catches rebinding, the way monkeypatching is done; it does not stop a plugin that writes
memory through ``ctypes`` (docs/security.md says what the suite defends against).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping
from itertools import compress
from operator import is_not, methodcaller
from typing import Any

from suite.frozen import Flat, flat_items, same_flat
from suite.frozen import same_items as _same  # the same names bound to the same objects, in order

__all__ = ["snapshot", "undo_changes", "checked"]

#: modules (and their submodules) whose top-level names no plugin may rebind
SHARED = ("suite", "numpy", "scipy", "math", "builtins", "functools", "operator", "time", "random")

_UNSEEN = object()
_VALUES = methodcaller("values")  # a module's dict and a class's mappingproxy alike


class Snapshot(list[tuple[str, Any, dict[str, Any]]]):
    """The shared namespaces' ``(name, object, copy of its items)``, in ``sys.modules`` order, and
    (built on the first check, kept with the snapshot) the form in which a check compares all of
    them at once and the namespace objects by name."""

    __slots__ = ("_fast",)

    def __init__(self, entries: Any = ()) -> None:
        super().__init__(entries)
        self._fast: tuple[Flat, dict[str, Any]] | None = None

    def unchanged(self) -> bool:
        """True when every namespace holds the same names bound to the same objects as snapshot,
        in order (C loops over all of them at once: a test process holds ~1,200 shared namespaces,
        40,000 names, checked twice per plugin); False when any may differ."""
        flat, _known = self.fast()
        return same_flat([obj.__dict__ for _name, obj, _before in self], flat, _VALUES)

    def fast(self) -> tuple[Flat, dict[str, Any]]:
        """(the flat form of the copies, namespace name -> object)."""
        if self._fast is None:
            self._fast = (flat_items([before for _name, _obj, before in self], _VALUES),
                          {name: obj for name, obj, _before in self})
        return self._fast


#: module name -> whether it is shared (:func:`_shared`), for the names ``sys.modules`` has held
_SHARED_NAMES: dict[str, bool] = {}


def _shared(name: str) -> bool:
    return name.split(".")[0] in SHARED or name.startswith("suite_")


def _fresh_shared(known: dict[str, Any]) -> list[str]:
    """The shared modules in ``sys.modules`` (in its order) that *known* does not hold as that very
    object: first imported since, or replaced. One C pass over ``sys.modules``; :func:`_shared` runs
    once per module name a process ever loads."""
    names, mods = list(sys.modules), list(sys.modules.values())
    for name in set(names).difference(_SHARED_NAMES):
        _SHARED_NAMES[name] = _shared(name)
    moved = list(compress(names, map(is_not, map(known.get, names, [_UNSEEN] * len(names)), mods)))
    return list(compress(moved, map(_SHARED_NAMES.__getitem__, moved)))


def _entries(name: str, mod: Any) -> list[tuple[str, Any, Mapping[str, Any]]]:
    """The namespaces of the shared module *name*: the module's, and each core class defined in it."""
    d = getattr(mod, "__dict__", None)
    if mod is None or not isinstance(d, dict):
        return []
    out: list[tuple[str, Any, Mapping[str, Any]]] = [(name, mod, d)]
    if name == "suite" or name.startswith("suite."):  # the core's classes (Result.add, Profile...)
        for k, v in list(d.items()):
            if isinstance(v, type) and getattr(v, "__module__", None) == name:
                out.append((f"{name}.{k}", v, v.__dict__))
    return out


def _namespaces() -> list[tuple[str, Any, Mapping[str, Any]]]:
    return [e for name, mod in list(sys.modules.items()) if _shared(name) for e in _entries(name, mod)]


def snapshot() -> Snapshot:
    """The shared modules' (and core classes') names and what each is bound to."""
    return Snapshot((name, obj, dict(d)) for name, obj, d in _namespaces())


def undo_changes(snap: Snapshot, plugin: str = "") -> list[str]:
    """Names rebound or removed since *snap* (``"numpy.dot"``), each put back as it was, and, in
    a shared module first imported since (numpy imported by the plugin itself), the names bound to
    a function of the package *plugin* (which cannot be put back: the reason says so).

    Returns
    -------
    list of str
        The changed names, sorted; empty when nothing changed. Names added to a namespace are
        changes only when the core would not have added them (:func:`_added`: a rebound lazy
        export, a name bound to the plugin's code); importing a submodule adds one.
    """
    return _undo(snap, plugin)[0]


def checked(snap: Snapshot, plugin: str = "") -> tuple[list[str], Snapshot]:
    """:func:`undo_changes` of *snap*, and the snapshot :func:`snapshot` would take of what it leaves,
    built from *snap*: only a namespace whose dict differs from *snap*'s (names added, or put back)
    is copied again, and a shared module first imported since (or replaced) is added. A registry
    loading plugins one after another checks each against the snapshot the previous check left
    (one comparison pass per plugin instead of a walk, a copy and a comparison)."""
    changed, dirty, fresh = _undo(snap, plugin)
    if not (dirty or fresh) and isinstance(snap, Snapshot):
        return changed, snap  # what it leaves is what it was given (kept with its fast form)
    out = Snapshot((name, obj, dict(obj.__dict__) if i in dirty else before) for i, (name, obj, before) in enumerate(snap))
    seen = {name for name, _obj, _before in out}
    for i in sorted(dirty):  # a core module that gained a class
        name, obj, _before = snap[i]
        if isinstance(obj, types.ModuleType):
            out += [(n, o, dict(d)) for n, o, d in _entries(name, obj)[1:] if n not in seen]
    for name in fresh:
        if _shared(name):
            out += [(n, o, dict(d)) for n, o, d in _entries(name, sys.modules.get(name)) if n not in seen]
    return changed, out


def _undo(snap: Snapshot, plugin: str) -> tuple[list[str], set[int], list[str]]:
    """(:func:`undo_changes`'s names, the indices of *snap* whose namespace differs from it, the
    shared modules in ``sys.modules`` that *snap* does not hold). A module *snap* holds that was
    replaced in ``sys.modules`` is put back and named ``sys.modules['name']``."""
    changed: list[str] = []
    dirty: set[int] = set()
    snap = snap if isinstance(snap, Snapshot) else Snapshot(snap)
    known = snap.fast()[1]
    for i, (name, obj, before) in enumerate(() if snap.unchanged() else snap):
        d = obj.__dict__
        if _same(d, before):
            continue
        dirty.add(i)
        for k, v in before.items():
            if k not in d or d[k] is not v:
                changed.append(f"{name}.{k}")
                try:
                    setattr(obj, k, v)
                except (AttributeError, TypeError):
                    pass
    top = plugin.split(".")[0].split(":")[0]
    for i in sorted(dirty):
        changed += _added(snap[i], top)
    fresh = _fresh_shared(known)
    for name in [n for n in fresh if n in known]:  # a shared module replaced in sys.modules: put back
        sys.modules[name] = known[name]
        changed.append(f"sys.modules[{name!r}]")
        fresh.remove(name)
    if top:
        changed += _fresh_bindings([name for name in fresh if name.split(".")[0] != top], top)
    return sorted(set(changed)), dirty, fresh


def _added(entry: tuple[str, Any, dict[str, Any]], top: str) -> list[str]:
    """Names added to the namespace of *entry* since it was taken that the core would not have put
    there, each put back or removed: a name a module exports lazily (its :pep:`562` ``__getattr__``,
    as :mod:`suite.api` does) bound to anything but what that ``__getattr__`` resolves it to (a
    plugin that reads ``suite.api.collective_time``, which adds it, then rebinds it), or a name
    bound to a function of the package *top*. The plugin's own package and submodules imported
    since are not changes."""
    name, obj, before = entry
    if top and name.split(".")[0] == top:
        return []
    d = obj.__dict__
    lazy = before.get("__getattr__") if isinstance(obj, types.ModuleType) else None
    changed: list[str] = []
    for k in [k for k in d if k not in before]:
        v = d[k]
        if isinstance(v, types.ModuleType) and sys.modules.get(f"{name}.{k}") is v:
            continue
        canon = _resolved(d, k, lazy) if lazy is not None else _UNSEEN
        if canon is v or (canon is _UNSEEN and not _of_package(v, top)):
            continue
        changed.append(f"{name}.{k}")
        if canon is _UNSEEN:
            _unbind(obj, k)
        else:
            d[k] = canon
    return changed


def _resolved(d: dict[str, Any], k: str, lazy: Any) -> Any:
    """What the module ``__getattr__`` *lazy* resolves name *k* to (``_UNSEEN`` when it does not),
    asked with *k* taken out of the module's dict *d* and put back after."""
    import warnings

    v = d.pop(k)
    try:
        with warnings.catch_warnings():  # a deprecated name warned when the plugin read it
            warnings.simplefilter("ignore")
            return lazy(k)
    except Exception:  # noqa: BLE001 - not a lazy export: an ordinary added name
        return _UNSEEN
    finally:
        d[k] = v


def _of_package(v: Any, top: str) -> bool:
    """Whether *v* is a function defined in the package *top*."""
    mod = getattr(v, "__module__", None) if isinstance(v, types.FunctionType) else None
    return bool(top) and isinstance(mod, str) and mod.split(".")[0] == top


def _fresh_bindings(fresh: list[str], top: str) -> list[str]:
    """In the shared modules *fresh* (first imported while the package *top* loaded), the names bound
    to a function of *top*; core modules among them are forgotten when one is (so the next import is
    clean)."""
    changed: list[str] = []
    tainted = False
    for name in fresh:  # (only these: walking every shared module again cost 1-2 ms per plugin)
        d = getattr(sys.modules.get(name), "__dict__", None)
        if not isinstance(d, dict):
            continue
        for k, v in list(d.items()):
            if _of_package(v, top):  # a shared name bound to the plugin's code
                core = name == "suite" or name.startswith("suite.")
                changed.append(f"{name}.{k}" + ("" if core else " (could not be put back)"))
                tainted = tainted or core
    if tainted:  # core modules first imported by the plugin: forgotten, so the next import is clean
        for name in fresh:
            if name.startswith("suite."):
                sys.modules.pop(name, None)
                parent, _, leaf = name.rpartition(".")
                if getattr(sys.modules.get(parent), leaf, None) is not None:
                    _unbind(sys.modules[parent], leaf)
    return changed


def _unbind(mod: Any, leaf: str) -> None:
    try:
        delattr(mod, leaf)
    except AttributeError:
        pass
