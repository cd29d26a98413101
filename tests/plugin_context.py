"""A :class:`suite.context.Context` of in-process plugins only (no installed plugin is loaded) and
the shipped profiles: what a test builds around a technique (or an executor plugin) of its own.

``plugin_context(TECH)`` is the one-technique context; ``technique_module(TECH)`` the plugin module
alone (for a registry a fixture installs)."""

from __future__ import annotations

import types
from typing import Any

from suite.context import Context
from suite.hookspecs import hookimpl
from suite.registry import Registry
from suite.technique import Technique


def technique_module(*techniques: Technique, name: str | None = None) -> types.ModuleType:
    """An in-process plugin module whose ``suite_techniques`` hook returns *techniques*; named
    *name*, else ``<first technique's name>_plugin`` (dashes as underscores)."""
    mod = types.ModuleType(name or f"{techniques[0].name.replace('-', '_')}_plugin")
    mod.suite_techniques = hookimpl(lambda: list(techniques))  # type: ignore[attr-defined]
    return mod


def plugin_context(*plugins: Technique | tuple[str, types.ModuleType], **build: Any) -> Context:
    """A context whose registry holds only *plugins*: a :class:`Technique` (in a module of its own,
    :func:`technique_module`, registered under the technique's name) or a ``(name, module)`` pair.
    *build* goes to :meth:`Context.build` (``profile_dirs=...``); profiles are read when it is
    called (set ``SUITE_PROFILES`` before)."""
    modules = [(p.name, technique_module(p)) if isinstance(p, Technique) else p for p in plugins]
    return Context.build(registry=Registry(entry_points_=[], modules=modules), **build)
