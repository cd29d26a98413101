"""Import-time patches: a plugin that rebinds a name in the core, numpy, scipy or another plugin.

A plugin is imported in the coordinating process (its hooks say what it provides), and every
local worker is forked from that process: a plugin that patches ``numpy.dot``, a
``suite.perf`` function or another plugin's model while it loads would change every plugin's
numbers (issue 43: one technique's speed-up x3, stored ``ok``). The registry therefore takes a
:func:`snapshot` of the shared modules' top-level names (and of the core's classes) before each
plugin loads and checks it after (:func:`undo_changes`): a plugin that rebound anything is
quarantined, and what it rebound is put back before the next plugin loads. The contents of the
namespaces' containers (dicts, lists, sets, numpy arrays) are compared too (:class:`Tables`): a
plugin that edits a core table in place (``collective._LINK_EFFICIENCY[k] = 0.25``) changes every
plugin's numbers without rebinding anything; so are the functions' code and defaults and the core's
frozen values' fields (:class:`suite.tamper_attrs.Attrs`: ``Result.add.__code__ = mine.__code__``
keeps the function's identity). An installed plugin's package joins the shared
modules once it has loaded (:func:`checked`'s *share*), so the plugins after it cannot patch it.

This catches rebinding, the way monkeypatching is done; it does not stop a plugin that writes
memory through ``ctypes`` (docs/security.md says what the suite defends against).
"""

from __future__ import annotations

import sys
import types
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterable, Mapping
from itertools import chain, compress
from operator import is_, is_not, methodcaller
from typing import Any

from suite.frozen import Flat, flat_items, same_flat
from suite.frozen import same_items as _same  # the same names bound to the same objects, in order
from suite.tamper_attrs import Attrs

__all__ = ["snapshot", "undo_changes", "checked", "expect_plugins"]

#: modules (and their submodules) whose top-level names no plugin may rebind
SHARED = ("suite", "numpy", "scipy", "math", "builtins", "functools", "operator", "time", "random")

_UNSEEN = object()
_VALUES = methodcaller("values")  # a module's dict and a class's mappingproxy alike


class Snapshot(list[tuple[str, Any, dict[str, Any]]]):
    """The shared namespaces' ``(name, object, copy of its items)``, in ``sys.modules`` order, and
    (built on the first check, kept with the snapshot) the form in which a check compares all of
    them at once and the namespace objects by name, the containers they hold (:class:`Tables`), and
    their functions' code and frozen values' fields (:class:`suite.tamper_attrs.Attrs`, which
    :func:`checked` extends with the namespaces it adds and hands to the snapshot it returns)."""

    __slots__ = ("_fast", "tables", "attrs", "memos")

    def __init__(self, entries: Any = (), tables: Tables | None = None, attrs: Attrs | None = None) -> None:
        super().__init__(entries)
        self._fast: tuple[Flat, dict[str, Any]] | None = None
        self.tables = Tables(self) if tables is None else tables
        #: the functions' code and defaults, and the frozen values' fields, of the same namespaces
        self.attrs = Attrs(_scope(self)) if attrs is None else attrs
        #: the memoised functions the modules name in ``__caches__``, each with how many entries it held
        self.memos: list[tuple[Any, int]] = [(m, m.cache_info().currsize) for m in _memos(self)]

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


#: the largest numpy array (bytes) whose contents the guard copies and compares
ARRAY_LIMIT = 1 << 20


class Tables:
    """The containers bound to a name (not a dunder) of the core's and the plugins' shared namespaces
    of a snapshot (not numpy's, scipy's or the standard library's: their ~5,000 names cost more to
    scan than all the rest): each ``dict``, ``list``, ``set`` (and ``OrderedDict``, ``defaultdict``,
    ``Counter``) with a shallow copy of its contents, each numpy array of at most
    :data:`ARRAY_LIMIT` bytes with a copy of its bytes (the guard's own module is left out). A plugin
    that edits a core table in place (``_LINK_EFFICIENCY[k] = 0.25``, no name rebound) changes every
    plugin's numbers as surely as one that rebinds it.

    The rule (:meth:`changes`): a container may *grow* (a cache filling): a dict whose existing keys
    keep their values and which only gains keys, a list only appended to, a set only added to. A
    dict entry changed or removed, a list element replaced or removed, a set element removed, or
    any byte of an array changed is tampering. "Kept" is identity, or, for a value replaced by
    another, equality of the same type (a cache that recomputes an equal float is not tampering).

    Comparing costs C loops over all containers at once while none changed (lengths, then the
    items' identities); a container whose length or items differ is compared alone, and its copy
    is taken again for the next check (so a growing cache costs one slow compare per plugin that
    grew it)."""

    __slots__ = ("held", "_fast")

    def __init__(self, namespaces: Any = (), held: list[tuple[str, Any, Any]] | None = None) -> None:
        #: (label ``module.NAME``, the container, its copy)
        self.held: list[tuple[str, Any, Any]] = _held(namespaces) if held is None else held
        self._fast: tuple[list[Any], Flat, list[Any], list[int], tuple[Any, ...], list[int]] | None = None

    def moved(self) -> list[int]:
        """The indices of :attr:`held` whose container differs from its copy (grown included)."""
        if self._fast is None:
            dicts = [i for i, h in enumerate(self.held) if isinstance(h[1], dict)]
            seqs = [i for i, h in enumerate(self.held) if isinstance(h[1], (list, set))]
            arrays = [i for i, h in enumerate(self.held) if not isinstance(h[1], (dict, list, set))]
            self._fast = ([self.held[i][1] for i in dicts], flat_items([self.held[i][2] for i in dicts]),
                          [self.held[i][1] for i in seqs], [len(self.held[i][2]) for i in seqs],
                          tuple(chain.from_iterable(self.held[i][2] for i in seqs)), arrays)
        conts, flat, lists, lens, items, arrays = self._fast
        if (same_flat(conts, flat) and list(map(len, lists)) == lens and all(map(is_, chain.from_iterable(lists), items))
                and all(_array_state(self.held[i][1]) == self.held[i][2] for i in arrays)):
            return []
        return [i for i, (_label, now, then) in enumerate(self.held) if not _same_contents(now, then)]

    def changes(self, moved: list[int], top: str, drop_added: bool = True) -> list[str]:
        """The tampered entries of the containers *moved* (``module.NAME['key']``), each put back; a
        container of the package *top* (the plugin's own) is not a change. A module's cache (a dict
        it names in ``__caches__``) may empty itself; one with an entry changed is cleared, and the
        entries added since the snapshot are dropped, silently (a memo is always safe to rebuild,
        and a key reused, an object id, is no proof of tampering): a plugin that wrote a wrong parse
        into the unit cache, changed or new, leaves nothing behind (the unit cache is written to
        disk at exit: a new wrong entry outlived the plugin)."""
        out: list[str] = []
        for i in moved:
            label, now, then = self.held[i]
            if top and label.split(".")[0] == top:
                continue
            if _is_cache(label):
                if any(k in now and not _kept(dict.__getitem__(now, k), v) for k, v in then.items()):
                    dict.clear(now)
                if drop_added and isinstance(now, dict):  # (not in a recheck: the core itself filled it too)
                    for k in [k for k in dict.keys(now) if k not in then]:
                        dict.pop(now, k, None)
                continue
            out += _put_back(label, now, then)
        return out

    def after(self, moved: list[int], dropped: set[str], added: list[Any]) -> Tables:
        """The tables of the next snapshot: the containers *moved* copied again, those of the
        namespaces *dropped* (by name) left out, and those of the namespaces *added* (``(name, obj,
        dict)``) taken; these very tables (with their compared form) when that changes nothing."""
        new = _held(added)
        if not moved and {id(h[1]) for h in new} <= {id(h[1]) for h in self.held}:
            return self  # (a plugin's package that holds no table, a submodule's name added)
        again = set(moved)
        held = [(label, now, _copy(now) if i in again else then) for i, (label, now, then) in enumerate(self.held)
                if label.rpartition(".")[0] not in dropped]
        seen = set(map(id, (now for _label, now, _then in held)))
        return Tables(held=held + [h for h in new if id(h[1]) not in seen])


#: the container types whose contents :class:`Tables` compares, by exact type (a C set look-up per
#: name: ``isinstance`` over ~7,000 names cost 0.9 ms per snapshot); numpy's array joins once loaded
#: (the plain array only: not ``numpy.ma.masked`` or a memmap)
_KINDS: set[type] = {dict, list, set, OrderedDict, defaultdict, Counter}


def _scope(namespaces: Any) -> list[tuple[str, Any, Any]]:
    """The namespaces (``(name, obj, dict)``) of the core and the plugins among *namespaces*: not
    numpy's, scipy's or the standard library's (their ~5,000 names cost more to scan than the rest)."""
    return [e for e in namespaces if e[0].split(".")[0] not in SHARED or e[0].split(".")[0] == "suite"]


def _held(namespaces: Any) -> list[tuple[str, Any, Any]]:
    """The containers of *namespaces* (``(name, obj, dict)``), each once (the first name it has)."""
    np = sys.modules.get("numpy")
    kinds = _KINDS if np is None else _KINDS | {np.ndarray}
    out: list[tuple[str, Any, Any]] = []
    seen: set[int] = set()
    for name, _obj, d in _scope(namespaces):
        if name in _GUARD:  # the guard's own state
            continue
        caches = d.get("__caches__", ())  # tables the module itself empties when full: not inputs
        for k in compress(d, map(kinds.__contains__, map(type, d.values()))):  # (C loops)
            v = d[k]
            if id(v) in seen or (k in caches and type(v) is not dict):  # (every module's __builtins__)
                continue  # a cache dict is held too: an entry changed in it clears it (Tables.changes)
            seen.add(id(v))
            if k[:2] != "__" and (type(v) in _KINDS or v.nbytes <= ARRAY_LIMIT):  # not __all__, __path__
                out.append((f"{name}.{k}", v, _copy(v)))
                if isinstance(v, dict) and len(v) <= NESTED_LIMIT and k not in caches:  # a cache's entries are its own
                    out += _nested(f"{name}.{k}", v, seen)
    return out


#: a table of at most this many entries has its entries that are containers compared too (one level:
#: ``nccl.HW_LAT["net"][("ring", "Simple")]``); a larger one is a cache, whose entries are its business
NESTED_LIMIT = 256


def _nested(label: str, table: dict[Any, Any], seen: set[int]) -> list[tuple[str, Any, Any]]:
    """The containers that are entries of *table* (dicts, lists, sets), each once, as tables of their own."""
    out = []
    for key, v in table.items():
        if type(v) in _KINDS and id(v) not in seen:
            seen.add(id(v))
            out.append((f"{label}[{key!r}]", v, _copy(v)))
    return out


def _copy(v: Any) -> Any:
    """A container's copy: a dict's and a list's shallow copy, a set's elements in its order, an array's
    :func:`_array_state`."""
    if isinstance(v, dict):
        return dict(v)
    if isinstance(v, list):
        return list(v)
    return tuple(v) if isinstance(v, set) else _array_state(v)


def _array_state(a: Any) -> tuple[Any, ...]:
    return (a.dtype, a.shape, a.tobytes())


def _same_contents(now: Any, then: Any) -> bool:
    if isinstance(now, dict):
        return _same(now, then)
    if isinstance(now, list):
        return len(now) == len(then) and all(map(is_, now, then))
    return (len(now) == len(then) and all(map(is_, now, then))) if isinstance(now, set) else _array_state(now) == then


#: modules whose containers are the guard's own state (watched threads, their notes), never compared
_GUARD = frozenset({__name__, "suite.tamper_attrs", "suite.tamper_process"})


def _is_cache(label: str) -> bool:
    """Whether the held container *label* (``module.NAME``) is one its module names in ``__caches__``."""
    mod, _, name = label.rpartition(".")
    return name in getattr(sys.modules.get(mod), "__caches__", ())


def _put_back(label: str, now: Any, then: Any) -> list[str]:
    """The entries of the container *now* changed or removed since its copy *then* (:class:`Tables`'s
    rule), each put back (through the base type's method: a read-only subclass is written too)."""
    if isinstance(now, dict):
        lost = [k for k, v in then.items() if k not in now or not _kept(dict.__getitem__(now, k), v)]
        for k in lost:
            dict.__setitem__(now, k, then[k])
        return [f"{label}[{k!r}]" for k in lost]
    if isinstance(now, list):
        lost = [i for i, v in enumerate(then) if i >= len(now) or not _kept(now[i], v)]
        if lost:  # exactly as it was: what follows a changed element is no append (an insert shifts all)
            list.__setitem__(now, slice(None), then)
        return [f"{label}[{i}]" for i in lost]
    if isinstance(now, set):
        gone = [v for v in then if v not in now]
        set.update(now, gone)
        return [f"{label} (lost {v!r})" for v in gone]
    if _array_state(now) == then:
        return []
    _restore_array(now, then)
    return [label]


def _kept(now: Any, then: Any) -> bool:
    """Whether a container's entry *now* is still its *then*: the same object, or an equal one of
    the same type (a number recomputed; a numpy array by its bytes)."""
    if now is then:
        return True
    if type(now) is not type(then):
        return False
    if hasattr(now, "tobytes") and hasattr(now, "dtype"):
        return bool(_array_state(now) == _array_state(then))
    try:
        return bool(now == then)
    except Exception:  # noqa: BLE001 - an entry that cannot be compared is not known to be kept
        return False


def _restore_array(a: Any, state: tuple[Any, ...]) -> None:
    dtype, shape, data = state
    if a.dtype != dtype or a.shape != shape:
        return  # resized or retyped in place (not possible for an array that owns its data)
    import numpy as np

    writeable = a.flags.writeable
    try:
        a.flags.writeable = True
        a[...] = np.frombuffer(data, dtype=dtype).reshape(shape)
    except (ValueError, AttributeError):  # a view of memory it cannot write
        pass
    finally:
        a.flags.writeable = writeable


#: module name -> whether it is shared (:func:`_shared`), for the names ``sys.modules`` has held
_SHARED_NAMES: dict[str, bool] = {}


#: the packages of the plugins loaded by entry point so far, or about to be (:func:`checked`'s
#: *share*, :func:`expect_plugins`), shared as ``suite_*`` packages are
_SHARED_TOPS: set[str] = set()
def expect_plugins(tops: Iterable[str]) -> None:
    """Share the top-level packages of the plugins about to load (entry points' modules) before
    any loads: a plugin that imports another's module before its owner has loaded (``aaa`` loading
    before ``victim``, ``import victim.model as m; m.TABLE["k"] = 2``) leaves no edited copy for
    the owner (:func:`_forget_other_plugins`), whichever loads first."""
    for top in tops:
        if top:
            _share(top)


def _shared(name: str) -> bool:
    top = name.split(".")[0]
    return top in SHARED or name.startswith("suite_") or top in _SHARED_TOPS


def _share(top: str) -> None:
    """Share the package *top* from now on (the names of its modules already seen included)."""
    if not _shared(top):  # (a suite_* package already is: no walk of the ~1,000 names)
        _SHARED_NAMES.update((n, True) for n in _SHARED_NAMES if n.split(".")[0] == top)
    _SHARED_TOPS.add(top)


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


def checked(snap: Snapshot, plugin: str = "", share: bool = False) -> tuple[list[str], Snapshot]:
    """:func:`undo_changes` of *snap*, and the snapshot :func:`snapshot` would take of what it leaves,
    built from *snap*: only a namespace whose dict differs from *snap*'s (names added, or put back)
    is copied again, and a shared module first imported since (or replaced) is added. A registry
    loading plugins one after another checks each against the snapshot the previous check left
    (one comparison pass per plugin instead of a walk, a copy and a comparison). With *share*, the
    package of *plugin* (an installed plugin's) is shared from now on, as ``suite_*`` packages
    are: the next plugins' checks cover its modules."""
    top = plugin.split(".")[0].split(":")[0]
    if share and top:
        _share(top)
    changed, dirty, fresh, moved = _undo(snap, plugin, built_by_plugin=True)
    if not (dirty or fresh or moved) and isinstance(snap, Snapshot):
        return changed, snap  # what it leaves is what it was given (kept with its fast form)
    entries = [(name, obj, dict(obj.__dict__) if i in dirty else before) for i, (name, obj, before) in enumerate(snap)]
    added = [entries[i] for i in sorted(dirty)]
    seen = {name for name, _obj, _before in entries}
    for i in sorted(dirty):  # a core module that gained a class
        name, obj, _before = snap[i]
        if isinstance(obj, types.ModuleType):
            added += [(n, o, dict(d)) for n, o, d in _entries(name, obj)[1:] if n not in seen]
    for name in fresh:
        if _shared(name):
            added += [(n, o, dict(d)) for n, o, d in _entries(name, sys.modules.get(name)) if n not in seen]
    tables = snap.tables.after(moved, {snap[i][0] for i in dirty}, added)
    return changed, Snapshot(entries + added[len(dirty):], tables, snap.attrs.add(_scope(added)))


def _undo(snap: Snapshot, plugin: str, built_by_plugin: bool = False) -> tuple[list[str], set[int], list[str], list[int]]:
    """(:func:`undo_changes`'s names, the indices of *snap* whose namespace differs from it, the
    shared modules in ``sys.modules`` that *snap* does not hold, the indices of ``snap.tables.held``
    whose container differs from its copy). A module *snap* holds that was replaced in
    ``sys.modules`` is put back and named ``sys.modules['name']``; an entry of a container changed
    or removed (:class:`Tables`) is put back and named ``module.NAME['key']``."""
    changed: list[str] = []
    dirty: set[int] = set()
    snap = snap if isinstance(snap, Snapshot) else Snapshot(snap)
    known = snap.fast()[1]
    for i, (name, obj, before) in enumerate(() if snap.unchanged() else snap):
        d = obj.__dict__
        if _same(d, before):
            continue
        dirty.add(i)
        caches = before.get("__caches__", ())  # names the module itself rebinds (a run's recorder)
        for k, v in before.items():
            if (k not in d or d[k] is not v) and k not in caches:
                changed.append(f"{name}.{k}")
                try:
                    setattr(obj, k, v)
                except (AttributeError, TypeError):
                    pass
            elif built_by_plugin and v is None and k in caches and type(d.get(k)) is dict:
                # a cache table first built while plugin code ran (the unit cache, loaded then
                # written to): every entry of it is that code's; it is built again on next use
                d[k] = None
            elif k in caches and type(v) is dict and d.get(k) is not v:
                # a cache table replaced by another (`units._CACHE = {...forged...}`): the one held
                # before is put back (its entries are compared as a table's are)
                d[k] = v
    top = plugin.split(".")[0].split(":")[0]
    moved = snap.tables.moved()
    changed += snap.tables.changes(moved, top, drop_added=built_by_plugin)
    changed += snap.attrs.changes(top)
    if built_by_plugin:  # (checked(): only plugin code ran since the snapshot; a recheck's window ran the core too)
        _forget_memos(snap)
    for i in sorted(dirty):
        changed += _added(snap[i], top)
    fresh = _fresh_shared(known)
    for name in [n for n in fresh if n in known]:  # a shared module replaced in sys.modules: put back
        sys.modules[name] = known[name]
        changed.append(f"sys.modules[{name!r}]")
        fresh.remove(name)
    if top:
        changed += _fresh_bindings([name for name in fresh if name.split(".")[0] != top], top)
        fresh = _forget_other_plugins(fresh, top)
    return sorted(set(changed)), dirty, fresh, moved


def _memos(entries: Any) -> list[Any]:
    """The memoised functions (``functools.lru_cache``) the modules of *entries* name in ``__caches__``."""
    out = []
    for _name, obj, before in entries:
        for k in before.get("__caches__", ()) if isinstance(obj, types.ModuleType) else ():
            memo = obj.__dict__.get(k)
            if callable(getattr(memo, "cache_info", None)):
                out.append(memo)
    return out


def _forget_memos(snap: Snapshot) -> None:
    """Empty each memoised function a shared module names in ``__caches__`` that holds more entries
    than at *snap*: plugin code built them, perhaps after changing what they are computed from in
    place (``_registry().define("ms = 2 * second")`` then a conversion: the unit registry
    ``suite.hardware.units._registry`` and the conversion factors ``_factor``), which no comparison
    of names or tables sees; they are computed again on their next use. A registry built before
    (that others already hold) is left as it is: two registries' units do not mix."""
    for memo, held in snap.memos:
        if memo.cache_info().currsize > held:
            memo.cache_clear()


def _forget_other_plugins(fresh: list[str], top: str) -> list[str]:
    """*fresh* less the modules of another plugin's package (loaded before the package *top*, or
    about to load after it: :func:`expect_plugins`) that it holds, each forgotten: a module first imported by the plugin that loaded has no earlier
    state to compare with (``import suite_x.model as m; m.TABLE["k"] = 2`` while loading), so its
    owner imports it anew, clean, when it needs it; the plugin that imported it keeps its copy."""
    others = [name for name in fresh if name.split(".")[0] in _SHARED_TOPS - {top}]
    for name in others:
        mod = sys.modules.pop(name, None)
        parent, _, leaf = name.rpartition(".")
        if mod is not None and getattr(sys.modules.get(parent), leaf, None) is mod:
            _unbind(sys.modules[parent], leaf)
    return [name for name in fresh if name not in others]


def _added(entry: tuple[str, Any, dict[str, Any]], top: str) -> list[str]:
    """Names added to the namespace of *entry* since it was taken that the core would not have put
    there, each put back or removed: a name a module exports lazily (its :pep:`562` ``__getattr__``,
    as :mod:`suite.api` does) bound to anything but what that ``__getattr__`` resolves it to (a
    plugin that reads ``suite.api.collective_time``, which adds it, then rebinds it), or a name
    bound to a function of the package *top*, or a name added to a core class (:func:`_shadows`).
    The plugin's own package and submodules imported since are not changes."""
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
        if canon is v or (canon is _UNSEEN and not _of_package(v, top) and not _shadows(obj, k)):
            continue
        changed.append(f"{name}.{k}")
        if canon is _UNSEEN:
            _unbind(obj, k)
        else:
            d[k] = canon
    return changed


def _shadows(obj: Any, k: str) -> bool:
    """Whether name *k*, added to the namespace *obj*, is one added to a core class (not a dunder:
    pydantic keeps its own state in those): ``Device.memory = property(...)`` makes every device's
    ``memory`` what the plugin says."""
    return isinstance(obj, type) and not (k.startswith("__") and k.endswith("__"))


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
    """Whether *v* is a function defined in the package *top*, or wraps one: a
    ``functools.partial`` of it, a bound method of it, or a callable object of a class of *top*
    (``render_text = functools.partial(_forge, render_text)`` passed as the core's own)."""
    import functools

    for _ in range(8):  # a partial of a partial of ... the plugin's function, an lru_cache, a staticmethod
        if isinstance(v, functools.partial):
            v = v.func
        elif isinstance(v, (types.MethodType, staticmethod, classmethod)):
            v = v.__func__
        elif getattr(v, "__wrapped__", None) is not None:
            v = v.__wrapped__
        else:
            break
    if not isinstance(v, (types.FunctionType, type)) and callable(v):
        mod = getattr(v, "__module__", None)  # a callable object: its own module, else its class's
        if isinstance(mod, str):
            return bool(top) and mod.split(".")[0] == top
        v = type(v)
    mod = getattr(v, "__module__", None) if isinstance(v, (types.FunctionType, type)) else None
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

