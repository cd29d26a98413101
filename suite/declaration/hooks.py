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
from typing import Any

from suite.declaration.vocabulary import is_reference, resolve_reference
from suite.errors import PluginError
from suite.hookspecs import hookimpl

__all__ = ["lazy_hook", "declared_technique"]


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
    from suite.declaration.loader import TECHNIQUE_FILE
    from suite.declaration.params import read_data
    from suite.hardware.name_scan import scan_top_name

    lazy = getattr(hook, LAZY_ATTRIBUTE, None)
    if lazy is None or lazy[1] or not lazy[2]:
        return None
    try:
        text = read_data(lazy[0].partition(":")[0], TECHNIQUE_FILE)
    except Exception:  # noqa: BLE001 - no readable file: the hook is called, and says what is wrong
        return None
    return scan_top_name(text) if isinstance(text, str) else None
