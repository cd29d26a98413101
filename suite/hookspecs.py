"""The plugin contract: every hook a dlsys-suite plugin may implement.

This is the page a plugin author reads first. A plugin is any importable module registered
under the entry-point group ``suite.plugins``::

    [project.entry-points."suite.plugins"]
    mytechnique = "suite_mytechnique"

and implementing one or more of the hooks below with :data:`suite.hookimpl`::

    from suite import hookimpl

    @hookimpl
    def suite_techniques():
        from .technique import TECHNIQUE
        return [TECHNIQUE]

Hooks are called by the registry (:mod:`suite.registry`) when the suite starts. A hook
implementation whose name is not one of these is an error (``check_pending``), so a misspelled
hook fails loudly instead of being ignored.
"""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from suite.technique import Technique
    from suite.workloads import Workload

PROJECT = "suite"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def suite_techniques() -> "list[Technique]":
    """Return the techniques this plugin provides.

    Called once per process, when the registry loads. Each item is a
    :class:`suite.technique.Technique`; a technique name must be unique across all installed
    plugins (a duplicate is an error naming both distributions).
    """


@hookspec
def suite_hardware_profiles() -> "list[pathlib.Path]":
    """Return extra hardware-profile files or folders (searched recursively for ``*.toml``).

    Called when the profile library is built. Names must not clash with shipped profiles or
    with another plugin's (a clash is an error naming both files).
    """


@hookspec
def suite_workloads() -> "list[Workload]":
    """Return extra workloads (layer tables, datasets, graphs).

    Called when the workload registry is built. A name that clashes with an existing workload is
    an error naming both providers.
    """


@hookspec(firstresult=True)
def suite_executor(name: str) -> Any:
    """Return an executor for ``--executor NAME``, or ``None`` if this plugin has none by that name.

    The first non-None result wins. The object must implement the
    :class:`suite.execution.Executor` interface (``map_cases(cases, options)`` yielding one
    outcome dict per case); :mod:`suite.execution` is the public API an executor builds on. Its
    own options arrive in ``options.executor_options`` (``-X NAME=VALUE`` or
    ``--NAME-OPTION VALUE`` on the command line); a ``parse_options(mapping)`` method, if it has
    one, validates them before the run starts. Example: ``suite_slurm``.
    """


@hookspec
def suite_profile_extensions() -> "dict[str, type | str]":
    """Return schemas for namespaced profile tables: ``{"fpga": FpgaExt}`` validates ``[ext.fpga]``.

    Each value is a pydantic model class, or a reference ``"package.module:Class"`` to one
    (preferred: imported only when a profile is loaded, so listing techniques does not import
    pydantic). A profile's ``[ext.NAME]`` table is validated by the schema registered for NAME;
    a table no installed plugin knows is kept and reported.
    """
