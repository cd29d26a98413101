"""Hardware profiles: declarative TOML with units, validated into SI (docs/profiles.md).

Public API::

    from suite.context import Context
    prof = Context.build().profile("titan-x-maxwell-16n-10gbe")
    prof.device.peak_flops["fp32"]   # FLOP/s
    prof.network[-1].bandwidth       # B/s per direction

A model never looks a profile up: it reads ``scenario.profile``, and any other profile it needs
through its scenario (``Param(..., ref="profile")``, ``Technique(uses=...)``).
:func:`get_profile` and :func:`library` (global lookups that miss the plugins' profiles and are
in no case key) are deprecated since 0.2.0 and removed in 0.4.0 (announced for 0.3.0; kept one
more minor version while tests and scripts move to the context).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from typing import TYPE_CHECKING, Any

from suite._lazy import lazy_attributes

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware.profile_library import ProfileLibrary, load_file
    from suite.hardware.profile import DeviceGroup, Profile
    from suite.hardware.schema import CollectiveFit, Cost, Device, Link, NetworkLevel, Node, Reliability
    from suite.hardware.units import format_quantity, parse_quantity

#: exported names -> the module defining them, imported on first use (PEP 562), so that the
#: folder functions below (`suite hardware list`'s index, the context's search path) do not
#: import pydantic and pint
_LAZY = {**dict.fromkeys(("DeviceGroup", "Profile"), "suite.hardware.profile"),
         **dict.fromkeys(("ProfileLibrary", "load_file"), "suite.hardware.profile_library"),
         **dict.fromkeys(("CollectiveFit", "Cost", "Device", "Link", "NetworkLevel", "Node", "Reliability"),
                         "suite.hardware.schema"),
         **dict.fromkeys(("format_quantity", "parse_quantity"), "suite.hardware.units")}


_lazy = lazy_attributes(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    return _lazy(name)


__all__ = [
    "Profile",
    "ProfileLibrary",
    "DeviceGroup",
    "Device",
    "Node",
    "Link",
    "NetworkLevel",
    "CollectiveFit",
    "Reliability",
    "Cost",
    "load_file",
    "library",
    "get_profile",
    "profile_dirs",
    "parse_quantity",
    "format_quantity",
    "user_profile_dir",
    "clear_cache",
    "mix_devices",
]

from suite.hardware.reserved import CORE_EXTENSION_NAMES  # noqa: E402  (re-exported: names a plugin may not register)

#: the caches of this module (emptied when full or on a restore): the load-time tamper check leaves them be
__caches__ = ('_LIBS',)
_LIBS: dict[tuple[Any, ...], ProfileLibrary] = {}


def user_profile_dir() -> Path:
    """The per-user profile folder: ``$SUITE_CONFIG_DIR/profiles``, else
    ``$XDG_CONFIG_HOME/dlsys-suite/profiles`` (default ``~/.config/dlsys-suite/profiles``): the
    rule of the cache folder (``$SUITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/dlsys-suite``,
    :func:`suite.cache.cache_dir`), so a sandbox that sets both writes nothing under ``~``.
    ``suite hardware calibrate`` writes ``local.toml`` here unless ``$SUITE_PROFILES`` is set."""
    own = os.environ.get("SUITE_CONFIG_DIR")
    if own:
        return Path(own) / "profiles"
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "dlsys-suite" / "profiles"


def clear_cache() -> None:
    """Forget loaded libraries (after a profile file was written, e.g. by calibrate)."""
    _LIBS.clear()


def profile_dirs(extra: tuple[str | Path, ...] = (), plugin_paths: tuple[str | Path, ...] = ()) -> list[Path]:
    """Folders searched for profiles, in order: the shipped ones, *plugin_paths* (what the
    plugins' ``suite_hardware_profiles`` hooks returned: :meth:`suite.context.Context.search_dirs`
    passes them), the per-user folder (:func:`user_profile_dir`, when it exists),
    ``SUITE_PROFILES`` (os.pathsep-separated) and *extra* (``--profiles DIR``)."""
    from suite.resources import builtin_dir

    dirs: list[Path] = [builtin_dir("hardware_profiles")]
    dirs += [Path(p) for p in plugin_paths]
    user = user_profile_dir()
    if user.is_dir():
        dirs.append(user)
    env = os.environ.get("SUITE_PROFILES")
    if env:
        dirs += [Path(p) for p in env.split(os.pathsep) if p]
    dirs += [Path(p) for p in extra]
    return dirs


def _deprecated(name: str) -> None:
    import warnings

    warnings.warn(f"suite.hardware.{name}() is deprecated and will be removed in dlsys-suite 0.4.0: a model reads "
                  f"its profiles from its scenario (Param(..., ref='profile'), Technique(uses=...)), other code "
                  f"through a Context (Context.build().profile(name))", DeprecationWarning, stacklevel=3)


def library(extra: tuple[str | Path, ...] = (), *, plugin_paths: tuple[str | Path, ...] = (),
            extensions: dict[str, type] | None = None) -> ProfileLibrary:
    """The library of the shipped, *plugin_paths*, per-user, ``SUITE_PROFILES`` and *extra* profiles.

    .. deprecated:: 0.2.0
        Use :attr:`suite.context.Context.profiles`; removed in 0.4.0.
    """
    _deprecated("library")
    return _library(extra, plugin_paths=plugin_paths, extensions=extensions)


def _library(extra: tuple[str | Path, ...] = (), *, plugin_paths: tuple[str | Path, ...] = (),
             extensions: dict[str, type] | None = None) -> ProfileLibrary:
    """The library of the shipped, *plugin_paths*, per-user, ``SUITE_PROFILES`` and *extra*
    profiles, validating ``[ext.NAME]`` tables with *extensions* (default: the core's schemas).

    Libraries are cached per (folders, schemas): profiles are deeply immutable, so one library
    can serve every context that asks for the same folders. Commands reach it through their
    context (:attr:`suite.context.Context.profiles`), which passes the plugins' folders and
    schemas. A broken file (undecodable, empty, invalid TOML, a duplicate name) costs only
    itself: it is skipped with one warning naming it (when it is parsed: a file the library does
    not need may be parsed late or never, :class:`ProfileLibrary`); ``suite hardware validate``
    reports it.
    """
    from suite.hardware.extensions import CORE_EXTENSIONS

    exts = dict(CORE_EXTENSIONS) if extensions is None else dict(extensions)
    dirs = tuple(str(p) for p in profile_dirs(tuple(extra), tuple(plugin_paths)))
    key = (dirs, tuple(sorted((k, id(v)) for k, v in exts.items())))
    if key not in _LIBS:
        from suite.hardware.profile_library import ProfileLibrary

        _LIBS[key] = ProfileLibrary(dirs, extensions=exts, collect_errors=True, warn=_skipped)
    return _LIBS[key]


def _skipped(msg: str) -> None:
    """Say that a profile file was skipped (when the library finds it: some files are parsed late)."""
    print(f"warning: {msg}; skipped", file=sys.stderr)


def get_profile(name: str, extra: tuple[str | Path, ...] = ()) -> Profile:
    """Resolve a profile by name, or load it from a path ending in ``.toml``.

    .. deprecated:: 0.2.0
        A global lookup that misses the plugins' profiles and is part of no case key: use
        :meth:`suite.context.Context.profile`; removed in 0.4.0.

    Raises
    ------
    ProfileError
        Unknown name (with close matches) or a malformed file (one line: file, field, expected,
        given).
    """
    from suite.errors import ProfileError

    _deprecated("get_profile")
    if name.endswith(".toml"):
        from suite.hardware.profile_library import read_toml

        p = Path(name)
        if not p.exists():
            raise ProfileError(f"{p}: expected an existing profile file, got a path that does not exist")
        lib = _library(tuple(extra) + (p,))
        return lib.get((read_toml(p).get("profile") or {}).get("name", ""))
    try:
        return _library(tuple(extra)).get(name)
    except ProfileError as exc:
        raise ProfileError(f"{exc} (this global lookup sees the shipped, per-user and SUITE_PROFILES profiles, not "
                           f"the plugins' own, nor a run's --set: a model reads its profiles from its scenario)") from None


def mix_devices(profile: Profile, lib: ProfileLibrary | None = None) -> tuple[tuple[str, Device, int], ...]:
    """The ``[ext.mix]`` groups of *profile* resolved to devices, in file order.

    Each group's ``device`` names a profile with a ``[device]`` table, resolved as
    ``node.device`` is (the device's ``name`` set to the profile name when it has none).

    Parameters
    ----------
    profile : Profile
    lib : ProfileLibrary, optional
        Where the names are looked up (default: :func:`library`, the shipped, per-user and
        ``SUITE_PROFILES`` profiles).

    Returns
    -------
    tuple of (name, Device, count)
        Empty when the profile has no ``[ext.mix]`` table.

    Raises
    ------
    ProfileError
        A group naming an unknown profile or one without a ``[device]`` table (one line:
        profile file, field ``ext.mix.groups.N.device``, expected, given).
    """

    if profile.groups:  # resolved when the profile loaded, by the library that loaded it
        return tuple((g.name, g.device, g.count) for g in profile.groups)
    mix = (profile.ext or {}).get("mix")
    if not mix:
        return ()
    lib = _library() if lib is None else lib
    groups = lib.mix_groups(profile.name, profile.path or profile.name, mix)
    return tuple((g.name, g.device, g.count) for g in groups)
