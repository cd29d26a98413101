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
from typing import Any

__all__ = ["snapshot", "undo_changes"]

#: modules (and their submodules) whose top-level names no plugin may rebind
SHARED = ("suite", "numpy", "scipy", "math", "builtins", "functools", "operator", "time", "random")


def _shared(name: str) -> bool:
    return name.split(".")[0] in SHARED or name.startswith("suite_")


def _namespaces() -> list[tuple[str, Any, Mapping[str, Any]]]:
    out: list[tuple[str, Any, Mapping[str, Any]]] = []
    for name, mod in list(sys.modules.items()):
        if mod is None or not _shared(name):
            continue
        d = getattr(mod, "__dict__", None)
        if not isinstance(d, dict):
            continue
        out.append((name, mod, d))
        if name == "suite" or name.startswith("suite."):  # the core's classes (Result.add, Profile...)
            for k, v in list(d.items()):
                if isinstance(v, type) and getattr(v, "__module__", None) == name:
                    out.append((f"{name}.{k}", v, v.__dict__))
    return out


def snapshot() -> list[tuple[str, Any, dict[str, Any]]]:
    """The shared modules' (and core classes') names and what each is bound to."""
    return [(name, obj, dict(d)) for name, obj, d in _namespaces()]


def _same(d: Any, before: dict[str, Any]) -> bool:
    return len(d) == len(before) and list(d) == list(before) and \
        list(map(id, d.values())) == list(map(id, before.values()))


def undo_changes(snap: list[tuple[str, Any, dict[str, Any]]], plugin: str = "") -> list[str]:
    """Names rebound or removed since *snap* (``"numpy.dot"``), each put back as it was, and, in
    a shared module first imported since (numpy imported by the plugin itself), the names bound to
    a function of the package *plugin* (which cannot be put back: the reason says so).

    Returns
    -------
    list of str
        The changed names, sorted; empty when nothing changed. Names added to a module are not
        changes (importing a submodule adds one).
    """
    changed: list[str] = []
    known = set()
    for name, obj, before in snap:
        known.add(name)
        d = obj.__dict__
        if _same(d, before):
            continue
        for k, v in before.items():
            if k not in d or d[k] is not v:
                changed.append(f"{name}.{k}")
                try:
                    setattr(obj, k, v)
                except (AttributeError, TypeError):
                    pass
    top = plugin.split(".")[0].split(":")[0]
    if top:
        fresh = [name for name in list(sys.modules) if _shared(name) and name not in known
                 and name.split(".")[0] != top]
        tainted = False
        for name in fresh:  # (only these: walking every shared module again cost 1-2 ms per plugin)
            d = getattr(sys.modules.get(name), "__dict__", None)
            if not isinstance(d, dict):
                continue
            for k, v in list(d.items()):
                mod = getattr(v, "__module__", None) if isinstance(v, types.FunctionType) else None
                if isinstance(mod, str) and mod.split(".")[0] == top:  # a shared name bound to the plugin's code
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
    return sorted(set(changed))


def _unbind(mod: Any, leaf: str) -> None:
    try:
        delattr(mod, leaf)
    except AttributeError:
        pass
