"""The kit's resolver: scenarios resolved as ``suite run`` resolves them, one context per process.

The conformance kit and a plugin's tests resolve a :class:`~suite.technique.ScenarioSpec` into a
case (profile, workload and parameters looked up and validated) through :func:`resolve_case`;
the resolver behind it (the installed plugins' profiles and workloads) is built once per process
and rebuilt when the profile folders or the registry change.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from suite.technique import ScenarioSpec, Technique

if TYPE_CHECKING:  # pragma: no cover
    from suite.runner.case import Case, Resolver

__all__ = ["resolve_case", "smoke_cases"]


#: the caches of this module (emptied when full or on a restore): the load-time tamper check leaves them be
__caches__ = ('_RESOLVER',)
_RESOLVER: dict[tuple[str, str, int, int], Resolver] = {}


def _resolver_key() -> tuple[str, str, int, int]:
    """What the resolver's profiles and workloads depend on: the profile folders named by the
    environment and the registry a test may have substituted."""
    ctx_mod, reg_mod = sys.modules.get("suite.context"), sys.modules.get("suite.registry")
    return (os.environ.get("SUITE_PROFILES", ""), os.environ.get("XDG_CONFIG_HOME", ""),
            id(getattr(ctx_mod, "default_registry", None)), id(getattr(reg_mod, "_REGISTRY", None)))


def _resolver() -> Resolver:
    """One resolver (one context: the installed plugins' profiles and workloads) for the checks
    of this process, rebuilt when the profile folders or the registry change; built before an
    isolated check forks, so each child inherits it loaded."""
    key = _resolver_key()
    if key not in _RESOLVER:
        from suite.context import Context
        from suite.runner.case import Resolver

        _RESOLVER.clear()
        _RESOLVER[key] = Resolver(context=Context.build())  # the kit is user code: it builds its context
    return _RESOLVER[key]


def resolve_case(tech: Technique, spec: ScenarioSpec) -> Case:
    """*spec* resolved for *tech* the way ``suite run`` resolves it (its profile and workload
    looked up among the installed plugins' and the shipped ones, its parameters validated), with
    the kit's one resolver of this process: what a plugin's tests call to get a
    :class:`~suite.api.Scenario` (``resolve_case(TECHNIQUE, spec).scenario``).

    Raises
    ------
    suite.errors.ParameterError, suite.errors.ProfileError, suite.errors.WorkloadError
        The spec names an unknown variant, parameter, profile or workload, or a bad value.
    """
    from suite.runner.case import resolve_case as _resolve_case

    return _resolve_case(tech, spec, resolver=_resolver())


_resolve = resolve_case  # the name the kit used before 0.3.0


def smoke_cases(tech: Technique) -> list[Case]:
    """Every variant x smoke scenario of *tech*, resolved."""
    out = []
    for spec in tech.smoke:
        for v in tech.variant_names:
            out.append(resolve_case(tech, replace(spec, variant=v)))
    return out
