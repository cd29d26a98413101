"""The plugin contract: every hook a dlsys-suite plugin may implement.

This is the page a plugin author reads first. A plugin is any importable module registered
under the entry-point group ``suite.plugins``::

    [project.entry-points."suite.plugins"]
    mytechnique = "suite_mytechnique"

and implementing one or more of the hooks below with :data:`suite.api.hookimpl`::

    from suite.api import hookimpl

    @hookimpl
    def suite_techniques():
        from .technique import TECHNIQUE
        return [TECHNIQUE]

When each hook is called (the registry, :mod:`suite.registry`, calls them):

* ``suite_hardware_profiles``, ``suite_profile_extensions``: once per process, when the
  registry is built;
* ``suite_techniques``: once per process, when the registry is built; or, for a
  :func:`~suite.declaration.hooks.lazy_hook` with ``listed=True`` whose package's
  ``technique.toml`` names the technique, when that technique (or every technique) is first asked
  for (a fault then quarantines the plugin, as at build; ``--strict-plugins`` calls it at build);
* ``suite_workloads``: once per process, the first time plugin workloads are needed;
* ``suite_executor``: each time an executor not built into the suite is asked for by name
  (``suite run --executor NAME``), plugin by plugin until one returns an executor.

A hook that raises or returns the wrong type quarantines its plugin when it is called. A hook
implementation whose name is not one of these is an error (``check_pending``), so a misspelled
hook fails loudly instead of being ignored. Every hook is documented, with an example, in
docs/plugin-api.md.
"""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from suite.outcome import CaseExecutor
    from suite.technique import Technique
    from suite.workloads import Workload

PROJECT = "suite"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def suite_techniques() -> "list[Technique]":
    """Return the techniques this plugin provides.

    Called once per process: when the registry is built, or, for a
    :func:`~suite.declaration.hooks.lazy_hook` with ``listed=True`` whose package's
    ``technique.toml`` names the technique, when that technique (or every technique) is first asked
    for. Each item is a :class:`suite.api.Technique`; a technique name must be unique across all installed
    plugins (a duplicate is an error naming both distributions).
    """
    raise NotImplementedError  # a specification: pluggy never calls its body


@hookspec
def suite_hardware_profiles() -> "list[pathlib.Path]":
    """Return extra hardware-profile files or folders (searched recursively for ``*.toml``).

    Called once per process, when the registry is built. Names must not clash with shipped
    profiles or with another plugin's (a clash is an error naming both files).
    """
    raise NotImplementedError  # a specification: pluggy never calls its body


@hookspec
def suite_workloads() -> "list[Workload]":
    """Return extra workloads (layer tables, datasets, graphs).

    Called once per process, the first time plugin workloads are needed. A name that clashes
    with an existing workload is an error naming both providers.
    """
    raise NotImplementedError  # a specification: pluggy never calls its body


@hookspec(firstresult=True)
def suite_executor(name: str) -> "CaseExecutor | None":
    """Return an executor for ``--executor NAME``, or ``None`` if this plugin has none by that name.

    Called each time an executor not built into the suite is asked for by name; the first
    non-None result wins. The object satisfies :class:`suite.api.CaseExecutor`
    (``map_cases(cases, options)`` yielding one :class:`suite.api.CaseOutcome` per case;
    subclass :class:`suite.api.Executor`); the executor names in :mod:`suite.api` are what it
    builds on. Its own options arrive in ``options.executor_options`` (``-X NAME=VALUE`` or
    ``--NAME-OPTION VALUE`` on the command line); a ``parse_options(mapping)`` method, if it
    has one, validates them before the run starts. Return a new object on each call: the run
    that asked for it by name calls its ``close()`` method, if it has one, when it ends.
    Example: a package ``suite_myexecutor`` returning ``{"mycluster": MyExecutor()}``.
    """
    raise NotImplementedError  # a specification: pluggy never calls its body


@hookspec
def suite_profile_extensions() -> "dict[str, type | str]":
    """Return schemas for namespaced profile tables: ``{"fpga": FpgaExt}`` validates ``[ext.fpga]``.

    Called once per process, when the registry is built. Each value is a reference
    ``"package.module:Class"`` to a :class:`suite.api.ProfileExtension` subclass (the one pattern:
    the class ``NameExt`` in the plugin's ``extension.py``, imported only when a profile is loaded,
    so listing techniques does not import pydantic), or the class itself. A profile's
    ``[ext.NAME]`` table is validated by the schema registered for NAME; a table no installed
    plugin knows is kept and reported.
    """
    raise NotImplementedError  # a specification: pluggy never calls its body
