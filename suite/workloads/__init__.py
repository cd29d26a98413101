"""The workload zoo: model layer tables and datasets, by name.

Public API::

    from suite.workloads import get_workload, list_workloads
    vgg = get_workload("vgg19")          # a LayerTable
    vgg.params, vgg.fwd_flops, vgg.layers[0].output_shape

Built-in workloads are registered in :mod:`suite.workloads.zoo` with :func:`register`
(a name -> zero-argument builder, built lazily and cached); plugins add theirs through the
``suite_workloads`` hook. A name clash is an error naming both providers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from suite.errors import WorkloadError
from suite.workloads.types import Dataset, Layer, LayerTable, Workload

from suite.errors import PluginError  # noqa: E402

__all__ = ["Layer", "LayerTable", "Workload", "Dataset", "register", "register_pattern",
           "get_workload", "list_workloads"]

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
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from suite.workloads import zoo  # noqa: F401  (registers the built-in workloads)

    try:
        from suite.registry import get_registry

        for provider, wl in get_registry().plugin_workloads():
            register(wl.name, (lambda w=wl: w), provider=provider)
    except (WorkloadError, PluginError):  # a clash, or --strict-plugins: never swallowed
        raise
    except Exception:  # pragma: no cover - registry problems are reported by `suite plugins`
        pass


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
