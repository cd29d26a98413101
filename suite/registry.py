"""Plugin discovery: entry points, per-plugin quarantine, name conflicts, ``check_pending``.

Every distribution that declares an entry point in the group ``suite.plugins`` is loaded on its
own. A plugin that fails to import, register, pass ``check_pending`` or return valid techniques
is *quarantined*: recorded with its reason (``suite plugins`` shows it) while every other plugin
keeps working. Strict mode (``--strict-plugins`` or ``SUITE_STRICT_PLUGINS=1``) turns any
quarantine into a :class:`~suite.errors.PluginError`. Two techniques with the same name are an
error naming both distributions, in any mode.

The core never imports a plugin by name: this module is the only place plugins enter.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

import pluggy

from suite import hookspecs
from suite.errors import PluginError
from suite.technique import Technique

__all__ = ["GROUP", "PluginInfo", "Registry", "get_registry", "reset_registry", "strict_from_env"]

GROUP = "suite.plugins"


@dataclass
class PluginInfo:
    """What ``suite plugins`` shows about one plugin."""

    name: str  # entry-point name
    module: str  # entry-point value
    distribution: str
    version: str
    status: str = "ok"  # ok | quarantined
    reason: str = ""
    detail: str = ""  # traceback, for --debug
    techniques: list[str] = field(default_factory=list)


def strict_from_env() -> bool:
    return os.environ.get("SUITE_STRICT_PLUGINS", "").strip().lower() in ("1", "true", "yes", "on")


def _dist_of(ep: EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return ("<unknown>", "")
    return (dist.metadata["Name"] or "<unknown>", dist.version or "")


class Registry:
    """The loaded plugins and what they provide.

    Parameters
    ----------
    entry_points_ : iterable of EntryPoint, optional
        Defaults to the installed ``suite.plugins`` entry points. Tests pass their own.
    strict : bool, optional
        Raise instead of quarantining. Defaults to ``SUITE_STRICT_PLUGINS``.
    modules : iterable of (name, module object), optional
        Extra in-process plugins (used by tests and the conformance kit).
    """

    def __init__(self, entry_points_: Iterable[EntryPoint] | None = None, *, strict: bool | None = None,
                 modules: Iterable[tuple[str, Any]] = ()):
        self.strict = strict_from_env() if strict is None else strict
        self.plugins: list[PluginInfo] = []
        self._techniques: dict[str, tuple[Technique, PluginInfo]] = {}
        self._pm_by_plugin: dict[str, pluggy.PluginManager] = {}
        eps = list(entry_points(group=GROUP)) if entry_points_ is None else list(entry_points_)
        seen: set[tuple[str, str]] = set()
        for ep in sorted(eps, key=lambda e: e.name):
            if (ep.name, ep.value) in seen:  # the same distribution visible twice on sys.path
                continue
            seen.add((ep.name, ep.value))
            dist, version = _dist_of(ep)
            info = PluginInfo(ep.name, ep.value, dist, version)
            self._load(info, ep.load)
        for name, module in modules:
            info = PluginInfo(name, getattr(module, "__name__", name), "<in-process>", "")
            self._load(info, lambda m=module: m)

    # -- loading
    def _quarantine(self, info: PluginInfo, reason: str, detail: str = "") -> None:
        info.status = "quarantined"
        info.reason = reason
        info.detail = detail
        if self.strict:
            raise PluginError(f"plugin {info.name!r} ({info.distribution}): {reason}")

    def _load(self, info: PluginInfo, load) -> None:
        self.plugins.append(info)
        try:
            module = load()
        except Exception as exc:  # any import failure quarantines only this plugin
            self._quarantine(info, f"import failed: {type(exc).__name__}: {exc}", traceback.format_exc())
            return
        pm = pluggy.PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs)
        try:
            pm.register(module, name=info.name)
            pm.check_pending()
        except Exception as exc:
            msg = str(exc).replace("\n", " ")
            self._quarantine(info, f"bad hook implementation: {msg}", traceback.format_exc())
            return
        try:
            techs = [t for lst in pm.hook.suite_techniques() for t in (lst or [])]
        except Exception as exc:
            self._quarantine(info, f"suite_techniques() failed: {type(exc).__name__}: {exc}", traceback.format_exc())
            return
        bad = [t for t in techs if not isinstance(t, Technique)]
        if bad:
            self._quarantine(info, f"suite_techniques() returned {type(bad[0]).__name__}, expected Technique")
            return
        for t in techs:
            if t.name in self._techniques:
                other = self._techniques[t.name][1]
                raise PluginError(
                    f"technique {t.name!r} is provided by two distributions: "
                    f"{other.distribution} (plugin {other.name!r}) and {info.distribution} (plugin {info.name!r})"
                )
        for t in techs:
            self._techniques[t.name] = (t, info)
            info.techniques.append(t.name)
        self._pm_by_plugin[info.name] = pm

    # -- queries
    def techniques(self, category: str | None = None) -> list[Technique]:
        ts = [t for t, _ in self._techniques.values()]
        if category:
            ts = [t for t in ts if t.category == category]
        return sorted(ts, key=lambda t: t.name)

    def technique(self, name: str) -> Technique:
        if name not in self._techniques:
            q = [p for p in self.plugins if p.status != "ok"]
            extra = f" ({len(q)} plugin(s) quarantined: see `suite plugins`)" if q else ""
            raise PluginError(f"unknown technique {name!r}; installed: {', '.join(sorted(self._techniques)) or 'none'}{extra}")
        return self._techniques[name][0]

    def plugin_of(self, technique: str) -> PluginInfo:
        self.technique(technique)
        return self._techniques[technique][1]

    def quarantined(self) -> list[PluginInfo]:
        return [p for p in self.plugins if p.status != "ok"]

    def _call(self, hook: str, **kwargs) -> list[tuple[PluginInfo, Any]]:
        out = []
        for info in self.plugins:
            pm = self._pm_by_plugin.get(info.name)
            if pm is None:
                continue
            try:
                for r in getattr(pm.hook, hook)(**kwargs):
                    out.append((info, r))
            except Exception as exc:
                self._quarantine(info, f"{hook}() failed: {type(exc).__name__}: {exc}", traceback.format_exc())
        return out

    def hardware_profile_paths(self) -> list[Path]:
        return [Path(p) for _info, lst in self._call("suite_hardware_profiles") for p in (lst or [])]

    def plugin_workloads(self) -> list[tuple[str, Any]]:
        return [(f"{info.distribution} (plugin {info.name!r})", w)
                for info, lst in self._call("suite_workloads") for w in (lst or [])]

    def profile_extensions(self) -> dict[str, type]:
        out: dict[str, type] = {}
        for _info, d in self._call("suite_profile_extensions"):
            out.update(d or {})
        return out

    def executor(self, name: str) -> Any:
        for info in self.plugins:
            pm = self._pm_by_plugin.get(info.name)
            if pm is None:
                continue
            r = pm.hook.suite_executor(name=name)
            if r is not None:
                return r
        return None

    def distributions(self) -> dict[str, str]:
        """Plugin distribution -> version (run provenance)."""
        return {p.distribution: p.version for p in self.plugins}


_REGISTRY: Registry | None = None


def get_registry(strict: bool | None = None) -> Registry:
    """The process-wide registry, loaded on first use."""
    global _REGISTRY
    if _REGISTRY is None or (strict is not None and strict != _REGISTRY.strict):
        _REGISTRY = Registry(strict=strict)
    return _REGISTRY


def reset_registry(registry: Registry | None = None) -> None:
    """Replace (or drop) the process-wide registry; used by tests."""
    global _REGISTRY
    _REGISTRY = registry
