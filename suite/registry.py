"""Plugin discovery: entry points, per-plugin quarantine, name conflicts, ``check_pending``.

Every distribution that declares an entry point in the group ``suite.plugins`` is loaded on its
own. A plugin that fails to import, register, pass ``check_pending`` or return valid techniques
is *quarantined*: recorded with its reason (``suite plugins`` shows it) while every other plugin
keeps working. Strict mode (``--strict-plugins`` or ``SUITE_STRICT_PLUGINS=1``) turns any
quarantine into a :class:`~suite.errors.PluginError`. Every hook is called once and what it
returns is type-checked: a hook that raises or returns the wrong type, or a technique / workload /
extension / profile name that another plugin already provides, quarantines that plugin (one line naming
plugin, hook, expected and given); this distribution's own plugins load first, so a third-party
plugin cannot take a built-in technique's name, and a profile folder that declares a shipped
profile's name quarantines its plugin (the shipped profile keeps the name).

A ``suite_techniques`` hook that is one :func:`~suite.declaration.hooks.lazy_hook` whose package's
``technique.toml`` names the technique is called when that technique (or every one) is first asked
for, not at load (``suite run --technique T`` imports one technique module, not 21); its name is
reserved at load, and a fault quarantines the plugin when it is called (:meth:`Registry._undefer`).
Strict mode calls every hook at load.

What is cheap is done when the registry is built (techniques, profile folders, extension names);
what is expensive is deferred to its first use, so that `suite techniques` imports no execute
code (issue 19): fidelities and extension schemas given as ``"module:attribute"`` references are
imported when first needed, and ``suite_workloads`` (layer tables, datasets) is called the first
time workloads are asked for. A fault found then quarantines its plugin then (its techniques
leave the registry); :meth:`Registry.load_all` forces everything (``suite plugins`` does). One
exception: when a plugin of another distribution (by entry point) implements ``suite_workloads``,
every plugin's workloads are built with the registry, so a third-party workload that takes a
built-in's name quarantines its plugin in every command (``suite techniques`` included), not only
in those that read workloads.

The core never imports a plugin by name: this module is the only place plugins enter.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

import pluggy

from suite import hookspecs
from suite.declaration.hooks import check_hook_results as _check_hook_results, declared_technique, is_model_class
from suite.distributions import dist_cached as _dist_cached, metadata_headers, name_and_version
from suite.errors import PluginError, TechniqueError, did_you_mean
from suite.technique import Technique, resolve_reference

__all__ = ["GROUP", "PluginInfo", "Registry", "name_and_version", "strict_from_env"]

GROUP = "suite.plugins"
#: the ``[ext.NAME]`` tables the core itself validates, named in the light :mod:`suite.hardware` (loading
#: plugins does not import pydantic; the layering: hardware never imports the registry)
from suite.hardware.reserved import CORE_EXTENSION_NAMES  # noqa: E402
HOST_DISTRIBUTION = "dlsys-suite"
#: shared modules imported before the first third-party plugin loads (see ``Registry.__init__``)
_GUARDED_FIRST = ("numpy", "suite.api", "suite.perf")


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
    import_seconds: float = 0.0  # time to import the plugin module and call its hooks


def strict_from_env() -> bool:
    return os.environ.get("SUITE_STRICT_PLUGINS", "").strip().lower() in ("1", "true", "yes", "on")


def _dist_of(ep: EntryPoint) -> tuple[str, str]:
    """(distribution name, version) of an entry point; reading a distribution's metadata parses
    its METADATA file, so it is done once per distribution (:func:`_dist_cached`)."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return ("<unknown>", "")
    return _dist_cached(str(getattr(dist, "_path", "")) or repr(dist), dist)


_DISCOVERED: list[EntryPoint] | None = None
__caches__ = ("_DISCOVERED",)  # suite.tamper: rebound by this module (scanned once), not an input


def _discover() -> list[EntryPoint]:
    """The ``suite.plugins`` entry points installed (scanning every distribution on sys.path takes
    ~10 ms, and what is installed does not change while the process runs: scanned once). Each
    Registry still imports and calls its plugins itself."""
    global _DISCOVERED
    if _DISCOVERED is None:
        _DISCOVERED = list(entry_points(group=GROUP))
    return list(_DISCOVERED)


def _provider(info: "PluginInfo") -> str:
    """How a plugin's workloads name their provider: ``DIST (plugin 'NAME')``."""
    return f"{info.distribution} (plugin {info.name!r})"


def _declared_name(pm: pluggy.PluginManager) -> str | None:
    """The technique the plugin's ``suite_techniques`` hook will return, known without calling it
    (one :func:`~suite.declaration.hooks.lazy_hook`: :func:`~suite.declaration.hooks.declared_technique`)."""
    impls = pm.hook.suite_techniques.get_hookimpls()
    return declared_technique(impls[0].function) if len(impls) == 1 else None


def _given(module: Any) -> Any:
    """*module* itself: the loader of a plugin module given in process (not by entry point)."""
    return module


def _why(exc: BaseException) -> str:
    """What a plugin's exception says: a :class:`TechniqueError` is already one line naming the
    file and field (``declare_technique``), so its type is not repeated; any other is prefixed
    with its type (``RuntimeError: boom``)."""
    return str(exc) if isinstance(exc, TechniqueError) else f"{type(exc).__name__}: {exc}"



def _name_taken(hook: str, what: str, builtin: str | None, owner: str | None) -> str | None:
    """The one-line reason a plugin's hook *hook* may not provide *what* (``profile 'x' (FILE)``,
    ``workload 'x'``): the name is *builtin*'s (what ships with the suite, said as ``a shipped
    profile (...)``) or *owner*'s (an earlier plugin); None when it is free. The built-in or the
    earlier plugin keeps the name: the newcomer is quarantined (profiles and workloads alike)."""
    if builtin is not None:
        return f"{hook}(): {what} is {builtin}; expected a unique name"
    if owner is not None:
        return f"{hook}(): {what} is already provided by {owner}; expected a unique name"
    return None

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
        #: each built technique's fields as built, with its plugin (suite.tamper_fields.Fields)
        self._built: list[tuple[PluginInfo, Any]] = []
        #: technique name -> the plugin whose deferred suite_techniques hook will return it
        self._deferred: dict[str, PluginInfo] = {}
        #: one line per plugin problem that does not quarantine it (yet): the CLI prints them
        self.notes: list[str] = []
        self._pm_by_plugin: dict[str, pluggy.PluginManager] = {}
        self._profile_paths: list[Path] = []
        #: profile name -> the plugin whose folders declare it; the shipped library's names (read once)
        self._profile_owner: dict[str, tuple[PluginInfo, Path]] = {}  # name -> (plugin, its file, resolved)
        self._shipped_profiles: dict[str, Path] | None = None
        self._workloads: list[tuple[str, Any]] = []
        self._workloads_loaded = False
        #: technique name -> its plugin, for techniques removed when a deferred hook or reference
        #: quarantined the plugin (so looking one up says why, not only "unknown technique")
        self._dropped: dict[str, PluginInfo] = {}
        self._extensions: dict[str, type | str] = {}
        self._ext_owner: dict[str, PluginInfo] = {}
        #: the import-patch guard's snapshot the last check left (suite.tamper.checked), valid while
        #: plugins load one after another with nothing else run between; None: take a new one
        self._snap: Any = None
        eps = _discover() if entry_points_ is None else list(entry_points_)
        from suite.tamper import expect_plugins

        expect_plugins(ep.value.split(":")[0].split(".")[0] for ep in eps)  # whichever loads first
        seen: set[tuple[str, str]] = set()
        # this distribution's own plugins load first, so a third-party plugin that reuses a
        # built-in technique name is the one quarantined (never the other way round)
        dists = [(ep, _dist_of(ep)) for ep in eps]
        for ep, (dist, version) in sorted(dists, key=lambda d: (d[1][0] != HOST_DISTRIBUTION, d[0].name)):
            if (ep.name, ep.value) in seen:  # the same distribution visible twice on sys.path
                continue
            seen.add((ep.name, ep.value))
            if dist != HOST_DISTRIBUTION and not all(m in sys.modules for m in _GUARDED_FIRST):
                # loaded before a third-party plugin, so the guard holds their names: a plugin that
                # imports one first and rebinds it is then undone (suite.tamper), which it cannot be
                # for a module that is new to the guard unless it binds the plugin's own function
                for m in _GUARDED_FIRST:
                    importlib.import_module(m)
                self._snap = None  # their names join the next snapshot
            info = PluginInfo(ep.name, ep.value, dist, version)
            self._load(info, ep.load)
        for name, module in modules:
            info = PluginInfo(name, getattr(module, "__name__", name), "<in-process>", "")
            self._load(info, functools.partial(_given, module))
        self._snap = None
        from suite.declaration.loader import save_parsed

        save_parsed()  # the technique files the plugins declared themselves with, for the next command
        if self._third_party_workloads():
            # a third-party plugin's workload that takes a built-in's name is found (and the plugin
            # quarantined) by every command, not only by those that read workloads
            self.plugin_workloads()

    def _third_party_workloads(self) -> bool:
        """Whether a plugin of another distribution, loaded by entry point, implements
        ``suite_workloads`` (this distribution's hooks are deferred: they build layer tables)."""
        for info in self.plugins:
            pm = self._pm_by_plugin.get(info.name)
            if pm is None or info.status != "ok" or info.distribution in (HOST_DISTRIBUTION, "<in-process>"):
                continue
            if pm.hook.suite_workloads.get_hookimpls():
                return True
        return False

    # -- loading
    def _quarantine(self, info: PluginInfo, reason: str, detail: str = "") -> None:
        info.status = "quarantined"
        info.reason = " ".join(str(reason).split())  # one line, whatever the plugin's message held
        info.detail = detail
        if self.strict:
            raise PluginError(f"plugin {info.name!r} ({info.distribution}): {reason}")

    def _load(self, info: PluginInfo, load: Callable[[], Any]) -> None:
        """Import one plugin, call every hook it implements once, check what each returns, and
        keep its contributions only if all of it is valid (else quarantine it whole)."""
        from suite.tamper import checked, snapshot
        from suite.tamper_process import state

        self.plugins.append(info)
        t0 = time.perf_counter()
        # the shared modules' names: a plugin that rebinds one is quarantined
        before = snapshot() if self._snap is None else self._snap
        process = state()  # and the threads, working directory and SUITE_* variables
        try:
            # what a plugin prints while it loads goes to stderr: stdout is the commands' output
            # (--format json must stay parseable)
            with contextlib.redirect_stdout(sys.stderr):
                self._load_checked(info, load)
        finally:
            info.import_seconds = time.perf_counter() - t0
            # an installed plugin's package is guarded from the next plugins on, as the core is
            patched, self._snap = checked(before, info.module, share=info.distribution != "<in-process>")
            patched += self._others_put_back(info)
        why = self._blame(info, patched)
        why = self._leftovers(info, process) or why  # (always: it puts the directory and variables back)
        if why:
            self._unregister(info)
            self._quarantine(info, why)

    def _blame(self, info: PluginInfo, patched: list[str]) -> str:
        """Why *info* is quarantined for the shared names *patched* while it loaded, or ""
        (:func:`suite.tamper_process.blame`; a note joins :attr:`notes` instead when a watched thread may have made them)."""
        from suite.tamper_process import blame

        return blame(info.name, patched, self.notes)

    def _leftovers(self, info: PluginInfo, process: Any) -> str:
        """Why *info* is quarantined for what its load left (:func:`suite.tamper_process.leftovers`), or ""."""
        from suite.tamper_process import leftovers

        return leftovers(info.name, process, self._snap, self.notes)

    def _load_checked(self, info: PluginInfo, load: Callable[[], Any]) -> None:
        taken = next((p for p in self.plugins if p is not info and p.name == info.name), None)
        if taken is not None:  # this distribution's plugins load first: a newcomer never takes a built-in's name
            self._quarantine(info, f"entry point name {info.name!r} is already taken by {taken.distribution} "
                                   f"(plugin {taken.name!r}); expected a unique plugin name")
            return
        try:
            module = load()
        except Exception as exc:  # any import failure quarantines only this plugin
            self._quarantine(info, f"import failed: {_why(exc)}", traceback.format_exc())
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
        got: dict[str, list[Any]] = {}
        # suite_workloads is called later, the first time workloads are asked for (plugin_workloads):
        # building them (layer tables, datasets) is what listing techniques must not pay for; so is
        # suite_techniques when the plugin's technique file names its technique (_declared_name)
        deferred = None if self.strict else _declared_name(pm)
        hooks = ("suite_techniques",) * (deferred is None) + ("suite_hardware_profiles", "suite_profile_extensions")
        for hook in hooks:
            try:
                got[hook] = list(getattr(pm.hook, hook)())
            except Exception as exc:
                self._quarantine(info, f"{hook}() failed: {_why(exc)}", traceback.format_exc())
                return
        problem = _check_hook_results(got)
        if problem:
            self._quarantine(info, problem)
            return
        techs = [t for lst in got.get("suite_techniques", ()) for t in (lst or [])]
        exts = {k: v for d in got["suite_profile_extensions"] for k, v in (d or {}).items()}
        paths = [Path(p) for lst in got["suite_hardware_profiles"] for p in (lst or [])]
        # a name the core, the shipped library or an earlier plugin has: the newcomer is quarantined
        why = (self._technique_clash(info, [t.name for t in techs] if deferred is None else [deferred])
               or self._extension_clash(exts) or self._profile_clash(info, paths))
        if why:
            self._quarantine(info, why)
            return
        for t in techs:
            self._techniques[t.name] = (t, info)
            self._keep_fields(info, t)
            info.techniques.append(t.name)
        if deferred is not None:
            self._deferred[deferred] = info
            info.techniques.append(deferred)
        self._profile_paths += paths
        self._extensions.update(exts)
        self._ext_owner.update({k: info for k in exts})
        self._pm_by_plugin[info.name] = pm

    def _technique_clash(self, info: PluginInfo, names: list[str]) -> str | None:
        """Why *info* may not provide the techniques *names* (one line), or None: a name another
        plugin provides or has reserved (a deferred hook), or a name twice."""
        for name in names:
            other = self._techniques[name][1] if name in self._techniques else self._deferred.get(name)
            if other is not None and other is not info:
                return (f"suite_techniques(): technique {name!r} is already provided by {other.distribution} "
                        f"(plugin {other.name!r}); expected a unique name, got a duplicate from {info.distribution}")
        if len(set(names)) != len(names):
            return "suite_techniques(): expected unique technique names, got a name twice"
        return None

    def _extension_clash(self, exts: dict[str, Any]) -> str | None:
        """Why a plugin may not register the ``[ext.NAME]`` schemas *exts* (one line), or None."""
        clash = sorted((set(exts) & set(self._extensions)) | (set(exts) & CORE_EXTENSION_NAMES))
        if clash:
            return (f"suite_profile_extensions(): extension {clash[0]!r} is already registered "
                    f"(by the core or another plugin); expected a new name")
        return None

    def _profile_clash(self, info: PluginInfo, paths: list[Path]) -> str | None:
        """Why *info* may not provide the profile files and folders *paths* (one line), or None:
        a profile name the shipped library or an earlier plugin's folders declare. The shipped
        profile (or the earlier plugin's) keeps its name; *info*'s names are recorded when it may."""
        if not paths:
            return None
        from suite.hardware.profile_library import declared_names
        from suite.resources import builtin_dir

        if self._shipped_profiles is None:
            self._shipped_profiles = declared_names([builtin_dir("hardware_profiles")])
        shipped = self._shipped_profiles
        # a shipped file itself (a folder of the shipped library returned) is read once, so no clash
        mine = {n: f for n, f in declared_names(paths).items()
                if n not in shipped or f.resolve() != shipped[n].resolve()}
        for name, f in sorted(mine.items()):
            owner = self._profile_owner.get(name)
            if owner is not None and owner[1] == f.resolve():  # the same file returned again is read once
                owner = None
            taken = _name_taken("suite_hardware_profiles", f"profile {name!r} ({f})",
                                f"a shipped profile (`suite hardware show {name}`)" if name in shipped else None,
                                f"{owner[0].distribution} (plugin {owner[0].name!r})" if owner else None)
            if taken:
                return taken
        for name, f in mine.items():
            self._profile_owner.setdefault(name, (info, f.resolve()))
        return None

    def _undefer(self, name: str | None = None) -> None:
        """Call the deferred ``suite_techniques`` hook of the plugin that reserved technique *name*
        (of every such plugin, in load order, when None; nothing when *name* is not reserved).
        Deferred: a plugin whose hook is one :func:`~suite.declaration.hooks.lazy_hook` and whose
        ``technique.toml`` names its technique (:func:`~suite.declaration.hooks.declared_technique`):
        its name is reserved at load (a duplicate is found then); the hook is called, checked and
        guarded against import-time patches as at load (:meth:`_undefer_plugin`)."""
        todo = ([p for p in self.plugins if any(i is p for i in self._deferred.values())] if name is None
                else [self._deferred[name]] if name in self._deferred else [])
        try:
            for info in todo:
                self._undefer_plugin(info)
        finally:
            self._snap = None  # other code runs next
            if todo:  # the technique files these imports parsed, kept for the next command
                from suite.declaration.loader import save_parsed

                save_parsed()

    def _undefer_plugin(self, info: PluginInfo) -> None:
        """Call *info*'s deferred ``suite_techniques`` hook and register what it returns, as
        :meth:`_load` would have; a fault drops the plugin (:meth:`_drop`: its reserved names then
        say why it is quarantined)."""
        reserved = [n for n, i in self._deferred.items() if i is info]
        for name in reserved:
            del self._deferred[name]
        pm = self._pm_by_plugin.get(info.name)
        if pm is None or info.status != "ok":
            return
        techs, why, detail = self._call_deferred(info, pm)
        why = why or self._technique_clash(info, [t.name for t in techs])
        if why:
            self._drop(info, why, detail)
            return
        got = [t.name for t in techs]
        if sorted(got) != sorted(reserved):
            self.notes.append(f"plugin {info.name!r} ({info.distribution}): its technique.toml names "
                              f"{', '.join(map(repr, reserved))} but suite_techniques() returned "
                              f"{', '.join(map(repr, got)) or 'nothing'}; expected the same name (the registry "
                              f"reserves the technique.toml's name, checked against other plugins' names, until "
                              f"it imports the technique)")
        info.techniques = got
        for t in techs:
            self._techniques[t.name] = (t, info)
            self._keep_fields(info, t)

    def _call_deferred(self, info: PluginInfo, pm: pluggy.PluginManager) -> tuple[list[Technique], str | None, str]:
        """(techniques, None, "") that *info*'s ``suite_techniques`` hook returns, called as :meth:`_load`
        calls hooks (stdout to stderr, its time added to ``import_seconds``, names it rebinds in a
        shared module put back), or ([], the reason to quarantine it, traceback)."""
        from suite.tamper import checked, snapshot
        from suite.tamper_process import state

        t0 = time.perf_counter()
        before = snapshot() if self._snap is None else self._snap
        process = state()
        got: list[Any] = []
        why, detail = None, ""
        try:
            with contextlib.redirect_stdout(sys.stderr):
                got = list(pm.hook.suite_techniques())
        except Exception as exc:  # noqa: BLE001 - a broken hook costs only its plugin
            why, detail = f"suite_techniques() failed: {_why(exc)}", traceback.format_exc()
        finally:
            info.import_seconds += time.perf_counter() - t0
            patched, self._snap = checked(before, info.module)
            patched += self._others_put_back(info)
        left = self._leftovers(info, process)
        why = self._blame(info, patched) or left or why or _check_hook_results({"suite_techniques": got})
        return ([] if why else [t for lst in got for t in (lst or [])]), why, detail

    def _keep_fields(self, info: PluginInfo, tech: Technique) -> None:
        """Take *tech*'s fields as *info* built it (once: each later load compares against them)."""
        from suite.tamper_fields import Fields

        self._built.append((info, Fields([(f"technique {tech.name!r}", tech)], own=tech.changed_by_itself)))

    def _others_put_back(self, info: PluginInfo) -> list[str]:
        """What *info*'s code changed in the techniques other plugins built, each put back."""
        return [c for owner, fields in self._built if owner is not info for c in fields.put_back()]

    def _unregister(self, info: PluginInfo) -> None:
        """Take back what *info* registered while loading (before it was quarantined)."""
        for t in info.techniques:
            self._techniques.pop(t, None)
            self._deferred.pop(t, None)
        info.techniques = []
        for n in [n for n, o in self._ext_owner.items() if o is info]:
            self._extensions.pop(n, None)
            del self._ext_owner[n]
        self._pm_by_plugin.pop(info.name, None)

    # -- queries
    def techniques(self, category: str | None = None) -> list[Technique]:
        self._undefer()
        ts = [t for t, _ in self._techniques.values()]
        if category:
            ts = [t for t in ts if t.category == category]
        return sorted(ts, key=lambda t: t.name)

    def technique(self, name: str) -> Technique:
        self._undefer(name)
        if name not in self._techniques and name not in self._dropped:
            self._undefer()  # a plugin whose technique file names another technique than its hook returns
        if name not in self._techniques:
            q = [p for p in self.plugins if p.status != "ok"]
            extra = f" ({len(q)} plugin(s) quarantined: see `suite plugins`)" if q else ""
            lost = self._dropped.get(name) or self._quarantined_provider(name)
            if lost is not None:
                raise PluginError(f"technique {name!r}: plugin {lost.name!r} ({lost.distribution}) is quarantined: "
                                  f"{lost.reason} (see `suite plugins`)")
            raise PluginError(f"unknown technique {name!r}{did_you_mean(name, self._techniques)}; installed: "
                              f"{', '.join(sorted(self._techniques)) or 'none'}{extra}")
        return self._techniques[name][0]

    def _quarantined_provider(self, name: str) -> PluginInfo | None:
        """The quarantined plugin that would have provided technique *name*: its reason names the
        technique, or its entry point, distribution or package is *name* (``-``/``_`` alike, with or
        without the ``suite`` prefix the scaffold gives); None when no quarantined plugin fits."""
        def norm(text: str) -> str:
            key = text.lower().replace("-", "_").replace(".", "_")
            return key.removeprefix("suite_")

        for info in self.plugins:
            if info.status == "ok":
                continue
            names = {norm(info.name), norm(info.distribution), norm(info.module.split(":")[0].split(".")[0])}
            if norm(name) in names or f"technique {name!r}" in info.reason:
                return info
        return None

    def plugin_of(self, technique: str) -> PluginInfo:
        self.technique(technique)
        return self._techniques[technique][1]

    def load_all(self) -> "Registry":
        """Call the hooks the registry defers (``suite_workloads``) and import every reference
        (profile extensions) now, so every plugin that would be quarantined is (``suite plugins``,
        the conformance kit)."""
        self._undefer()
        self.plugin_workloads()
        self.profile_extensions()
        return self

    def quarantined(self) -> list[PluginInfo]:
        return [p for p in self.plugins if p.status != "ok"]

    def hardware_profile_paths(self) -> list[Path]:
        """Profile files and folders the plugins provide (their hooks were called once, at load)."""
        return list(self._profile_paths)

    def plugin_workloads(self) -> list[tuple[str, Any]]:
        """``(provider, Workload)`` for every workload the plugins provide.

        The plugins' ``suite_workloads`` hooks are called here, once, the first time (in load
        order, this distribution's plugins first). A hook that raises, returns the wrong type, or
        a name the zoo or an earlier plugin already provides quarantines its plugin then: its
        techniques leave the registry (strict mode raises :class:`~suite.errors.PluginError`)."""
        if not self._workloads_loaded:
            self._workloads_loaded = True
            for info in self.plugins:
                pm = self._pm_by_plugin.get(info.name)
                if pm is not None and info.status == "ok":
                    self._load_workloads(info, pm)
        return list(self._workloads)

    def _drop(self, info: PluginInfo, reason: str, detail: str = "") -> None:
        """Quarantine *info* after it loaded (a deferred hook or reference failed): all it gave
        leaves the registry, as for a plugin quarantined while loading (:meth:`_load`): its
        techniques (looking one up then names the reason), its extension schemas, its workloads
        and its hooks (:meth:`executor`). Its profile folders stay (a library may be built)."""
        for t in info.techniques:
            self._techniques.pop(t, None)
            self._deferred.pop(t, None)
            self._dropped[t] = info
        info.techniques = []
        for n in [n for n, o in self._ext_owner.items() if o is info]:
            self._extensions.pop(n, None)
            del self._ext_owner[n]
        where = _provider(info)
        self._workloads = [(p, w) for p, w in self._workloads if p != where]
        self._pm_by_plugin.pop(info.name, None)
        self._quarantine(info, reason, detail)

    def _load_workloads(self, info: PluginInfo, pm: pluggy.PluginManager) -> None:
        drop = functools.partial(self._drop, info)
        try:
            # what the hook prints goes to stderr, as while the plugin loaded (_load): stdout is the
            # commands' output (--format json must stay parseable)
            with contextlib.redirect_stdout(sys.stderr):
                got = {"suite_workloads": list(pm.hook.suite_workloads())}
        except Exception as exc:  # noqa: BLE001 - a broken hook costs only its plugin
            drop(f"suite_workloads() failed: {type(exc).__name__}: {exc}", traceback.format_exc())
            return
        problem = _check_hook_results(got)
        if problem:
            drop(problem)
            return
        from suite.workloads import zoo_has

        names = {getattr(w, "name", None): p for p, w in self._workloads}
        mine = [w for lst in got["suite_workloads"] for w in (lst or [])]
        own: set[str] = set()
        for w in mine:
            if w.name in own:
                drop(f"suite_workloads(): workload {w.name!r} is in the returned list twice; expected unique names")
                return
            # the zoo's (or the earlier plugin's) workload keeps its name; the newcomer is the one quarantined
            taken = _name_taken("suite_workloads", f"workload {w.name!r}",
                                f"a workload of the zoo (`suite workloads show {w.name}`)" if zoo_has(w.name) else None,
                                names.get(w.name))
            if taken:
                drop(taken)
                return
            own.add(w.name)
        self._workloads += [(_provider(info), w) for w in mine]

    def declared_extensions(self) -> dict[str, type | str]:
        """Extension name -> what the plugin's hook returned (a class or a ``"module:Class"``
        reference), importing nothing (:meth:`profile_extensions` resolves the references)."""
        return dict(self._extensions)

    def profile_extensions(self) -> dict[str, type]:
        """Extension name -> pydantic model class, from the plugins' hooks.

        A hook may name its class by reference (``"package.module:Class"``, so that listing
        techniques does not import pydantic); references are imported here, on first use. One
        that does not import, or names no pydantic model class, quarantines its plugin then
        (its techniques leave the registry; strict mode raises)."""
        for name, v in list(self._extensions.items()):
            if not isinstance(v, str) or name not in self._extensions:  # (dropped with its plugin above)
                continue
            info = self._ext_owner.get(name)
            if info is None:  # pragma: no cover - every registered name has its owner
                continue
            try:
                with contextlib.redirect_stdout(sys.stderr):  # an import that prints: stderr (see _load)
                    cls = resolve_reference(v)
                if not is_model_class(cls):
                    raise TypeError(f"{type(cls).__name__}, expected a pydantic model class")
            except Exception as exc:  # noqa: BLE001 - a broken reference costs only its plugin
                self._drop(info, f"suite_profile_extensions(): {name!r}: {v!r}: {type(exc).__name__}: {exc}",
                           traceback.format_exc())
                continue
            self._extensions[name] = cls
        return {k: v for k, v in self._extensions.items() if not isinstance(v, str)}

    def executor(self, name: str) -> Any:
        """The executor a plugin's ``suite_executor`` hook returns for *name* (the first not None),
        or None. A hook that raises quarantines its plugin, like any other broken hook (strict mode
        raises :class:`~suite.errors.PluginError`); the other plugins are still asked."""
        for info in list(self.plugins):
            pm = self._pm_by_plugin.get(info.name)
            if pm is None or info.status != "ok":
                continue
            try:
                with contextlib.redirect_stdout(sys.stderr):  # a hook that prints: stderr (see _load)
                    r = pm.hook.suite_executor(name=name)
            except Exception as exc:  # noqa: BLE001 - a broken hook costs only its plugin
                self._drop(info, f"suite_executor(name={name!r}) failed: {type(exc).__name__}: {exc}",
                           traceback.format_exc())
                continue
            if r is not None:
                return r
        return None

    def executor_plugins(self) -> list[str]:
        """The plugins (entry-point names) with a ``suite_executor`` hook: an executor's name is
        known only to its plugin, so an unknown ``--executor`` names these for the user to read."""
        out = []
        for info in self.plugins:
            pm = self._pm_by_plugin.get(info.name)
            if pm is not None and info.status == "ok" and pm.hook.suite_executor.get_hookimpls():
                out.append(info.name)
        return out

    def distributions(self) -> dict[str, str]:
        """Plugin distribution -> version (run provenance)."""
        return {p.distribution: p.version for p in self.plugins}
