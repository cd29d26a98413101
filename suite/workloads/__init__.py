"""The workload zoo: model layer tables and datasets, by name.

Public API::

    from suite.workloads import get_workload, list_workloads
    vgg = get_workload("vgg19")          # a LayerTable
    vgg.params, vgg.fwd_flops, vgg.layers[0].output_shape

Built-in workloads are registered in :mod:`suite.workloads.zoo` with :func:`register`
(a name -> zero-argument builder, built lazily, frozen and cached: a workload is immutable, so
sharing it is safe). Plugins add theirs through the ``suite_workloads`` hook; a command sees
them through its context (:class:`suite.context.WorkloadLibrary`), never through this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from suite.errors import WorkloadError
from suite.workloads.types import Dataset, Layer, LayerTable, Workload

__all__ = ["Layer", "LayerTable", "Workload", "Dataset", "register", "register_pattern",
           "get_workload", "list_workloads", "zoo_has", "provider_of"]

_BUILDERS: dict[str, tuple[Callable[[], Workload], str]] = {}
_PATTERNS: list[tuple[re.Pattern, Callable[..., Workload], str, str]] = []
_CACHE: dict[str, Workload] = {}
_PLUGINS_LOADED = False


def register(name: str, builder: Callable[[], Workload], provider: str = "suite") -> None:
    """Register a named workload builder. Raises WorkloadError on a clash (both providers named)."""
    if name in _BUILDERS:
        raise WorkloadError(f"workload {name!r} is provided by both {_BUILDERS[name][1]} and {provider}")
    _BUILDERS[name] = (builder, provider)


def register_pattern(pattern: str, builder: Callable[..., Workload], example: str, provider: str = "suite") -> None:
    """Register a family by regular expression, e.g. ``resnet-(\\d+)`` -> builder(depth)."""
    _PATTERNS.append((re.compile(pattern), builder, example, provider))


def _load_plugins() -> None:
    """Register the zoo's built-in workloads (once; the name is historical: plugins' workloads
    live in a context's :class:`suite.context.WorkloadLibrary`)."""
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from suite.workloads import zoo  # noqa: F401  (registers the built-in workloads)


def zoo_has(name: str) -> bool:
    """True when the zoo itself provides *name* (a registered name or a family pattern)."""
    _load_plugins()
    return name in _BUILDERS or any(pat.fullmatch(name) for pat, _b, _e, _p in _PATTERNS)


def get_workload(name: str) -> Workload:
    """The workload called *name* (built once, then cached).

    Raises
    ------
    WorkloadError
        Unknown name (with close matches).
    """
    _load_plugins()
    if name in _CACHE:
        return _CACHE[name]
    if name in _BUILDERS:
        wl = _BUILDERS[name][0]()
    else:
        for pat, builder, _example, _prov in _PATTERNS:
            m = pat.fullmatch(name)
            if m:
                wl = builder(*m.groups())
                break
        else:
            close = [n for n in _BUILDERS if name.lower().split("-")[0] in n][:6]
            hint = f"; did you mean {', '.join(close)}?" if close else "; see `suite workloads list`"
            raise WorkloadError(f"unknown workload {name!r}{hint}")
    from suite.frozen import freeze

    _CACHE[name] = wl = freeze(wl, f"workload {name!r}")
    return wl


def list_workloads() -> list[str]:
    """Names of every registered workload (families listed by one example)."""
    _load_plugins()
    return sorted(_BUILDERS) + [ex for _p, _b, ex, _prov in _PATTERNS if ex not in _BUILDERS]


def provider_of(name: str) -> str:
    _load_plugins()
    if name in _BUILDERS:
        return _BUILDERS[name][1]
    for pat, _b, _ex, prov in _PATTERNS:
        if pat.fullmatch(name):
            return prov
    raise WorkloadError(f"unknown workload {name!r}")
