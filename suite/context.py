"""One explicit context for a command: the plugins, the profile and workload libraries, the options.

The CLI builds one :class:`Context` per command (a library user builds their own with
:meth:`Context.build`) and passes it down explicitly: to the experiment expansion and the
resolver, the runner, reproduce, report, compare and validate. There is no process-global
registry: every hook is called once, when the context's :class:`~suite.registry.Registry` is
built or, for workloads and referenced extension schemas, when first needed (see
:mod:`suite.registry`), and what the plugins return is held here.

The context is the only lookup: a function of the core below the CLI takes it as an argument.
One still given none (a library call written for 0.1.0) builds a fresh one with a
``DeprecationWarning`` (:meth:`Context.given`); from 0.4.0 the argument is required (the runner's
``run_cases`` requires it since 0.3.0).

Example::

    from suite.context import Context
    ctx = Context.build(profile_dirs=["my_profiles"])
    tech = ctx.technique("my-technique")
    prof = ctx.profile("titanx-cluster-10gbe")
    wl = ctx.workload("vgg19-22k")
"""

from __future__ import annotations

import os

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from suite.errors import WorkloadError, close_names

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import Profile, ProfileLibrary
    from suite.registry import Registry
    from suite.technique import Technique
    from suite.workloads import Workload

__all__ = ["Context", "WorkloadLibrary", "default_registry"]


def default_registry(strict: bool | None = None) -> "Registry":
    """The registry :meth:`Context.build` loads when it is given none: every installed plugin
    found through the ``suite.plugins`` entry-point group. (Tests substitute a registry of fake
    plugins by monkeypatching this function; nothing else refers to it.)"""
    from suite.registry import Registry

    return Registry(strict=strict)


#: the deprecated no-context path's contexts (removed with that path in 0.4.0), one per set of inputs
#: a context reads from the environment, so a caller that relies on it loads the plugins once per
#: process (0.4 s each), as the global lookups it replaces did, instead of once per call
_FALLBACK: dict[tuple[Any, ...], "Context"] = {}


def _fallback_context(cls: type["Context"]) -> "Context":
    env = tuple(os.environ.get(k) for k in ("SUITE_STRICT_PLUGINS", "SUITE_PROFILES", "SUITE_CONFIG_DIR",
                                            "XDG_CONFIG_HOME", "HOME", "SUITE_STORE"))
    key = (default_registry, env)  # a test that substitutes default_registry gets its own
    if key not in _FALLBACK:
        _FALLBACK[key] = cls.build()
    return _FALLBACK[key]


class WorkloadLibrary:
    """The workload zoo (:mod:`suite.workloads`) plus the workloads one registry's plugins provide.

    Parameters
    ----------
    plugin_workloads : iterable of (provider, Workload), or a callable returning one
        From :meth:`suite.registry.Registry.plugin_workloads` (the registry quarantines a plugin
        whose workload the zoo already names). Given such a clash directly, looking the name up
        is an error naming both providers (the rest of the library works). A callable (what a
        context passes) is called the first time a name outside the zoo, or the list of names,
        is asked for: resolving a zoo workload builds no plugin's workloads.
    """

    def __init__(self, plugin_workloads: Iterable[tuple[str, "Workload"]] | Any = ()):
        self._source = plugin_workloads
        self._loaded: dict[str, tuple[str, Workload]] | None = None

    @property
    def _plugin(self) -> dict[str, tuple[str, "Workload"]]:
        """The plugins' workloads by name, taken from the source (a callable is called) on first use."""
        if self._loaded is None:
            from suite.frozen import freeze

            src = self._source() if callable(self._source) else self._source
            self._loaded = {}
            for provider, wl in src:
                self._loaded[wl.name] = (provider, freeze(wl, f"workload {wl.name!r}"))
        return self._loaded

    def _clash(self, name: str) -> None:
        import suite.workloads as W

        if name in self._plugin and W.zoo_has(name):
            raise WorkloadError(f"workload {name!r} is provided by both {W.provider_of(name)} and "
                                f"{self._plugin[name][0]}")

    def get(self, name: str) -> "Workload":
        """The workload called *name*.

        A *name* ending in ``.toml`` is a workload file (``suite workloads import`` writes them;
        format in :mod:`suite.workloads.importer.tomlfile`), read from that path.

        Raises
        ------
        WorkloadError
            Unknown name (with close matches), a plugin workload clashing with the zoo, a
            malformed workload file, or a file whose workload name the zoo or a plugin provides.
        """
        import suite.workloads as W

        if name.endswith(".toml"):
            from suite.frozen import freeze
            from suite.workloads.importer import load_workload_file

            wl = load_workload_file(name)
            if wl.name in self._plugin or W.zoo_has(wl.name):
                raise WorkloadError(f"{name}: workload.name: {wl.name!r} is already a workload of "
                                    f"{self.provider(wl.name)}; expected a new name")
            return freeze(wl, f"workload {wl.name!r} ({name})")  # type: ignore[no-any-return]
        if self._loaded is None and callable(self._source) and W.zoo_has(name):
            # a zoo name: the registry quarantines any plugin workload of that name, so the zoo's is
            # the answer and the plugins' workloads need not be built for it
            return W._zoo_get(name)
        self._clash(name)
        if name in self._plugin:
            return self._plugin[name][1]
        try:
            return W._zoo_get(name)
        except WorkloadError:
            close = close_names(name, self.names())
            if any(n in self._plugin for n in close):  # else the zoo's own message (and hint) stands
                raise WorkloadError(f"unknown workload {name!r}; did you mean {', '.join(close)}?") from None
            raise

    def names(self) -> list[str]:
        """Every workload name (families listed by one example)."""
        import suite.workloads as W

        return sorted(set(W.list_workloads()) | set(self._plugin))

    def provider(self, name: str) -> str:
        """Who provides *name*: ``suite`` for the zoo, else the plugin's distribution."""
        import suite.workloads as W

        if name.endswith(".toml"):
            return f"file {name}"
        self._clash(name)
        if name in self._plugin:
            return self._plugin[name][0]
        return W.provider_of(name)


@dataclass
class Context:
    """What one command works with, built once and passed down.

    Attributes
    ----------
    registry : Registry
        The loaded plugins (quarantined ones included, with their reasons).
    profile_dirs : tuple of Path
        Extra profile folders (``--profiles DIR``), searched after the shipped, plugin, per-user
        and ``SUITE_PROFILES`` folders.
    store_path : Path or None
        The results store (None: ``$SUITE_STORE`` or ``results/suite.sqlite``).
    debug : bool
        Show tracebacks.
    """

    registry: "Registry"
    profile_dirs: tuple[Path, ...] = ()
    store_path: Path | None = None
    debug: bool = False
    _profiles: "ProfileLibrary | None" = field(default=None, repr=False)
    _workloads: WorkloadLibrary | None = field(default=None, repr=False)

    @classmethod
    def build(cls, *, registry: "Registry | None" = None, strict: bool | None = None,
              profile_dirs: Iterable[str | Path] = (), store_path: str | Path | None = None,
              debug: bool = False) -> "Context":
        """Load the plugins (unless *registry* is given) and return a new context.

        Raises
        ------
        PluginError
            In strict mode (``strict=True`` or ``SUITE_STRICT_PLUGINS=1``), a plugin that would be
            quarantined.
        """
        reg = registry if registry is not None else default_registry(strict)
        return cls(registry=reg, profile_dirs=tuple(Path(p) for p in profile_dirs),
                   store_path=Path(store_path) if store_path is not None else None, debug=debug)

    @classmethod
    def given(cls, context: "Context | None", where: str, *, registry: "Registry | None" = None) -> "Context":
        """*context*, or (deprecated since 0.2.0, an error from 0.4.0) a new one built with
        *registry*, with a ``DeprecationWarning`` naming *where* (the function called without one)."""
        if context is not None:
            return context
        if registry is not None:  # the caller's loaded plugins: no fresh lookup
            return cls.build(registry=registry)
        import warnings

        warnings.warn(f"{where} without a context is deprecated and will be an error in dlsys-suite 0.4.0: pass "
                      f"context=Context.build() (built once, by the caller)", DeprecationWarning, stacklevel=3)
        return _fallback_context(cls)

    @property
    def strict(self) -> bool:
        return self.registry.strict

    def with_profile_dirs(self, extra: Iterable[str | Path]) -> "Context":
        """The same plugins with more profile folders (a new profile library, the same registry)."""
        more = tuple(Path(p) for p in extra)
        if not more:
            return self
        return Context(registry=self.registry, profile_dirs=self.profile_dirs + more, store_path=self.store_path,
                       debug=self.debug, _workloads=self._workloads)

    # -- techniques
    def technique(self, name: str) -> "Technique":
        return self.registry.technique(name)

    def techniques(self, category: str | None = None) -> list["Technique"]:
        return self.registry.techniques(category)

    # -- hardware profiles
    def search_dirs(self) -> list[Path]:  # noqa: D401
        """Profile folders, in order: shipped, plugin-provided, per-user, ``SUITE_PROFILES``, extra."""
        from suite.hardware import profile_dirs

        return profile_dirs(self.profile_dirs, plugin_paths=tuple(self.registry.hardware_profile_paths()))

    def extensions(self) -> dict[str, type]:
        """``[ext.NAME]`` schemas: the core's and the plugins'."""
        from suite.hardware.extensions import CORE_EXTENSIONS

        return {**self.registry.profile_extensions(), **CORE_EXTENSIONS}

    @property
    def profiles(self) -> "ProfileLibrary":
        """This context's profile library (built on first use). A broken file costs only itself:
        it is skipped with one warning naming it (``suite hardware validate`` reports it)."""
        if self._profiles is None:
            from suite.hardware import _library

            self._profiles = _library(self.profile_dirs, plugin_paths=tuple(self.registry.hardware_profile_paths()),
                                     extensions=self.extensions())
        return self._profiles

    def profile(self, name: str) -> "Profile":
        """A profile by name, or loaded from a path ending in ``.toml``.

        Raises
        ------
        ProfileError
            Unknown name (with close matches), a malformed file, or a file whose profile name
            another profile of the library already has (that one would be used instead).
        """
        if name.endswith(".toml"):
            from suite.errors import ProfileError
            from suite.hardware.profile_library import read_toml

            p = Path(name)
            if not p.exists():
                raise ProfileError(f"{p}: expected an existing profile file, got a path that does not exist")
            declared = (read_toml(p).get("profile") or {}).get("name", "")
            # the library keeps the first file of a name: the one given would be skipped (refused here,
            # before the library is built with it and says "skipped")
            other = self.profiles.path(declared) if declared in self.profiles else None
            if other is not None and Path(other).resolve() != p.resolve():
                raise ProfileError(f"{p}: profile.name: {declared!r} is already a profile of the library ({other}); "
                                   "expected a new name (rename the profile in the file)")
            return self.with_profile_dirs([p]).profiles.get(declared)
        return self.profiles.get(name)

    def clear_profiles(self) -> None:
        """Forget the loaded profiles (after a profile file was written, e.g. by calibrate)."""
        from suite.hardware import clear_cache

        clear_cache()
        self._profiles = None

    # -- workloads
    @property
    def workloads(self) -> WorkloadLibrary:
        if self._workloads is None:
            self._workloads = WorkloadLibrary(self.registry.plugin_workloads)  # built when first needed
        return self._workloads

    def workload(self, name: str) -> "Workload":
        """:meth:`WorkloadLibrary.get`; an unknown name also names any plugin quarantined when its
        workloads were built (a technique whose default workload it provided would otherwise see
        only "unknown workload")."""
        try:
            return self.workloads.get(name)
        except WorkloadError as exc:
            lost = [p for p in self.registry.quarantined() if p.reason.startswith("suite_workloads()")]
            if not lost or not str(exc).startswith("unknown workload"):
                raise
            p = lost[0]
            raise WorkloadError(f"{exc}; plugin {p.name!r} ({p.distribution}), which may provide it, is "
                                f"quarantined: {p.reason}") from None

    def workload_hash(self, name: str) -> str | None:
        """The content hash of workload *name* (a 16-hex-digit string, equal to
        ``self.workload(name).content_hash()``) when it is known without building the workload,
        else None (then build it: :meth:`workload`).

        Known: a zoo workload no plugin provides whose hash the on-disk cache holds
        (:func:`suite.workloads.zoo_hash`). A plugin's workload, a workload file (``*.toml``) or a
        name the zoo and a plugin both claim give None. While the plugins' workloads are not
        built, a zoo name is the zoo's (the registry quarantines a plugin workload the zoo names),
        so asking builds no plugin workload. A fully cached ``suite reproduce`` thus builds none.
        """
        import suite.workloads as W

        if name.endswith(".toml") or not W.zoo_has(name):
            return None
        lib = self.workloads
        if lib._loaded is not None or not callable(lib._source):  # the plugins' workloads are known
            if name in lib._plugin:
                return None
        return W.zoo_hash(name)

    # -- store
    def open_store(self, readonly: bool = False) -> Any:
        from suite.results import Store

        return Store(self.store_path, readonly=readonly)
