"""Hardware profiles: declarative TOML with units, validated into SI (see DESIGN.md).

Public API::

    from suite.hardware import get_profile, library, Profile
    prof = get_profile("titan-x-maxwell-16n-10gbe")
    prof.device.peak_flops["fp32"]   # FLOP/s
    prof.network[-1].bandwidth       # B/s per direction
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from suite.hardware.profile import Profile, ProfileLibrary, load_file
from suite.hardware.schema import CollectiveFit, Cost, Device, Link, NetworkLevel, Node, Reliability
from suite.hardware.units import format_quantity, parse_quantity

__all__ = [
    "Profile",
    "ProfileLibrary",
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
]

_LIBS: dict[tuple, ProfileLibrary] = {}


def user_profile_dir() -> Path:
    """The per-user profile folder: ``$XDG_CONFIG_HOME/dlsys-suite/profiles`` (default
    ``~/.config/dlsys-suite/profiles``). ``suite hardware calibrate`` writes ``local.toml`` here."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "dlsys-suite" / "profiles"


def clear_cache() -> None:
    """Forget loaded libraries (after a profile file was written, e.g. by calibrate)."""
    _LIBS.clear()


from suite.errors import PluginError  # noqa: E402


def profile_dirs(extra: tuple[str | Path, ...] = ()) -> list[Path]:
    """Folders searched for profiles, in order: the shipped ones, plugin-provided ones, the
    per-user folder (:func:`user_profile_dir`, when it exists), ``SUITE_PROFILES``
    (os.pathsep-separated) and *extra* (``--profiles DIR``)."""
    from suite.resources import builtin_dir

    dirs: list[Path] = [builtin_dir("hardware_profiles")]
    try:
        from suite.registry import get_registry

        dirs += [Path(p) for p in get_registry().hardware_profile_paths()]
    except PluginError:  # --strict-plugins: a broken plugin is an error, never silently skipped
        raise
    except Exception:  # registry not importable yet: shipped profiles still work
        pass
    user = user_profile_dir()
    if user.is_dir():
        dirs.append(user)
    env = os.environ.get("SUITE_PROFILES")
    if env:
        dirs += [Path(p) for p in env.split(os.pathsep) if p]
    dirs += [Path(p) for p in extra]
    return dirs


def library(extra: tuple[str | Path, ...] = ()) -> ProfileLibrary:
    """The profile library (cached per set of folders)."""
    dirs = tuple(str(p) for p in profile_dirs(tuple(extra)))
    if dirs not in _LIBS:
        # a broken file (undecodable, empty, invalid TOML, a duplicate name) costs only itself: it
        # is skipped with one warning naming it; `suite hardware validate` reports it as an error
        lib = ProfileLibrary(dirs, collect_errors=True)
        for msg in lib.file_errors.values():
            print(f"warning: {msg}; skipped", file=sys.stderr)
        _LIBS[dirs] = lib
    return _LIBS[dirs]


def get_profile(name: str, extra: tuple[str | Path, ...] = ()) -> Profile:
    """Resolve a profile by name, or load it from a path ending in ``.toml``.

    Raises
    ------
    ProfileError
        Unknown name (with close matches) or a malformed file (one line: file, field, expected,
        given).
    """
    if name.endswith(".toml"):
        from suite.errors import ProfileError
        from suite.hardware.profile import read_toml

        p = Path(name)
        if not p.exists():
            raise ProfileError(f"{p}: expected an existing profile file, got a path that does not exist")
        lib = library(tuple(extra) + (p,))
        return lib.get((read_toml(p).get("profile") or {}).get("name", ""))
    return library(tuple(extra)).get(name)
