"""A plugin's hook implementations in one line each (:func:`lazy_hook`).

Most plugins implement their hooks the same way: import, when the hook is first called, one
object of the plugin (the technique, a function that builds the workloads) and return it, or
what it returns, or a list of it. :func:`lazy_hook` builds that function once, so a plugin's
``__init__.py`` reads ``suite_techniques = lazy_hook("suite_demo.technique:TECHNIQUE",
listed=True)``; a hook written as a function (``@hookimpl def suite_techniques(): ...``) stays
fully supported.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from suite.declaration.vocabulary import is_reference, resolve_reference
from suite.errors import PluginError
from suite.hookspecs import hookimpl

__all__ = ["lazy_hook", "declared_technique", "check_hook_results", "is_model_class"]


def lazy_hook(reference: str, *, call: bool = False, listed: bool = False) -> Callable[[], Any]:
    """A hook implementation (marked with :data:`~suite.hookspecs.hookimpl`) that imports the
    object *reference* names when the hook is called, and returns it: called first when *call*,
    then wrapped in a one-item list when *listed*. The hook is the name it is assigned to in the
    plugin module (pluggy reads the module's attributes), so the assignment's name must be the
    hook's (``suite_techniques = lazy_hook(...)``).

    Parameters
    ----------
    reference : str
        ``"package.module:attribute"`` (:func:`~suite.declaration.vocabulary.resolve_reference`);
        nothing is imported until the hook is called.
    call : bool
        Return ``obj()`` rather than ``obj`` (a function that builds the workloads).
    listed : bool
        Return ``[value]`` (a hook that returns a list, of one technique).

    Returns
    -------
    callable
        The hook implementation, without arguments.

    Raises
    ------
    PluginError
        *reference* is not of the form ``"package.module:attribute"`` (when the plugin module is
        imported, so the plugin is quarantined with this line). An import error of the reference
        is raised when the hook is called, as the function form's would be.
    """
    if not is_reference(reference):
        raise PluginError(f"lazy_hook: reference: expected 'package.module:attribute', got {reference!r}")

    def hook() -> Any:
        value = resolve_reference(reference)
        if call:
            value = value()
        return [value] if listed else value

    hook.__module__ = reference.partition(":")[0].split(".")[0]
    hook.__qualname__ = hook.__name__ = f"lazy_hook({reference!r})"
    # what the hook will return, readable without calling it (the registry defers a technique
    # hook whose package's technique file names its technique: suite.registry)
    setattr(hook, LAZY_ATTRIBUTE, (reference, call, listed))
    return hookimpl(hook)


#: the attribute of a :func:`lazy_hook` function that holds ``(reference, call, listed)``
LAZY_ATTRIBUTE = "_suite_lazy_hook"


def declared_technique(hook: Callable[..., Any]) -> str | None:
    """The name of the technique the hook implementation *hook* will return, read without calling
    it: *hook* is a :func:`lazy_hook` with ``listed=True`` (not ``call``) and the ``technique.toml``
    of its reference's top-level package names the technique on a plain top-level line
    (:func:`suite.hardware.name_scan.scan_top_name`); else None (call the hook to know). The
    registry reserves the name and registers what the hook returns once it calls it
    (:class:`suite.registry.Registry`)."""
    import importlib
    import os

    from suite.declaration.loader import TECHNIQUE_FILE
    from suite.hardware.name_scan import scan_top_name

    lazy = getattr(hook, LAZY_ATTRIBUTE, None)
    if lazy is None or lazy[1] or not lazy[2]:
        return None
    try:  # the file declare_technique reads (read_data), without its checks: the name is only a hint
        top = importlib.import_module(lazy[0].split(".")[0].partition(":")[0])
        for root in getattr(top, "__path__", ()):
            with open(os.path.join(root, TECHNIQUE_FILE), encoding="utf-8") as fh:
                return scan_top_name(fh.read())
    except Exception:  # noqa: BLE001 - no readable file: the hook is called, and says what is wrong
        return None
    return None


def is_model_class(v: Any) -> bool:
    """Whether *v* is a pydantic model class (what an extension schema must be)."""
    try:
        from pydantic import BaseModel
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, type) and issubclass(v, BaseModel)


def _kind(v: Any) -> str:
    """What a hook returned, for an error: its type (and value, for a scalar)."""
    return type(v).__name__ + (f" {v!r}" if isinstance(v, (str, int, float)) else "")


def _list_of(lst: Any, cls: type, hook: str, items: str, item: str) -> str | None:
    """Why *lst* (what one implementation of *hook* returned) is not a list of *cls*, or None."""
    if not isinstance(lst, (list, tuple)):
        return f"{hook}() returned {_kind(lst)}, expected a list of {items}"
    for v in lst:
        if not isinstance(v, cls):
            return f"{hook}() returned {_kind(v)} in its list, expected {item}"
    return None


def check_hook_results(got: dict[str, list[Any]]) -> str | None:
    """One line naming the hook, what it must return and what it returned, or None if all is well:
    *got* maps a hook's name to what each of a plugin's implementations returned (the registry's
    check of ``suite_techniques``, ``suite_hardware_profiles``, ``suite_workloads`` and
    ``suite_profile_extensions``)."""
    from suite.technique import Technique

    for lst in got.get("suite_techniques", ()):
        problem = _list_of(lst, Technique, "suite_techniques", "Technique", "Technique")
        if problem:
            return problem
    for lst in got.get("suite_hardware_profiles", ()):
        if not isinstance(lst, (list, tuple)):
            return f"suite_hardware_profiles() returned {_kind(lst)}, expected a list of paths"
        for p in lst:
            if not isinstance(p, (str, Path)) or not str(p):
                return f"suite_hardware_profiles() returned {_kind(p)} in its list, expected a path (str or Path)"
            if not Path(p).exists():
                return f"suite_hardware_profiles() returned {str(p)!r}, expected an existing file or folder"
    for lst in got.get("suite_workloads", ()):
        from suite.workloads.types import Workload

        problem = _list_of(lst, Workload, "suite_workloads", "Workload", "a Workload")
        if problem:
            return problem
    for d in got.get("suite_profile_extensions", ()):
        if not isinstance(d, dict):
            return f"suite_profile_extensions() returned {_kind(d)}, expected a dict of name -> pydantic model class"
        for k, v in d.items():
            if not isinstance(k, str) or not (is_reference(v) or is_model_class(v)):
                return (f"suite_profile_extensions() returned {k!r}: {_kind(v)}, expected a name -> "
                        f"pydantic model class or a reference 'package.module:Class' to one")
    return None
