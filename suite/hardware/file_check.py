"""Profile files checked against the library (``suite hardware validate FILE...``): each file
resolved, every problem one line, and profiles of one kind with identical figures flagged."""

from __future__ import annotations

from pathlib import Path
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from suite.errors import ProfileError
from suite.hardware.profile_library import ProfileLibrary

if TYPE_CHECKING:  # pragma: no cover
    from pydantic import BaseModel

    from suite.hardware.profile import Profile

__all__ = ["validate_paths", "figures_key", "identical_profiles"]


def figures_key(profile: Profile) -> str:
    """The profile's figures without its names: :meth:`Profile.normalized` with every ``name``
    (the profile's, the device's, a network level's, the host link's) and the node's device
    reference dropped, as canonical JSON. Two profiles with the same key predict the same
    results under different names."""
    import json

    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()
                    if k != "name" and not (k in ("device", "cpu") and isinstance(v, str))}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return json.dumps(strip(profile.normalized()), sort_keys=True, separators=(",", ":"))


def _declared(lib: ProfileLibrary, a: str, b: str) -> bool:
    """Whether *a* declares it extends or is the same as *b*, or the other way round."""
    for x, y in ((a, b), (b, a)):
        meta = (lib.raw(x).get("profile") or {})
        same = meta.get("same_as") or {}
        if meta.get("extends") == y or (isinstance(same, dict) and same.get("name") == y):
            return True
    return False


def identical_profiles(lib: ProfileLibrary, names: Iterable[str] | None = None,
                       known: dict[str, tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """Pairs (a, b) of profiles of one kind with identical figures (:func:`figures_key`) where
    neither declares ``extends`` or ``same_as`` naming the other, for every profile in *names*
    (default: all) against the whole library. Profiles that do not resolve are left out
    (their errors are reported elsewhere). *known*: ``name -> (kind, figures key)`` of profiles
    already resolved (:func:`_library_keys`), taken as they are instead of resolved again."""
    wanted_names = None if names is None else list(names)
    if wanted_names == []:
        return []  # nothing asked about: no profile needs resolving
    keys = _figure_keys(lib, known)
    wanted = list(keys) if wanted_names is None else [n for n in wanted_names if n in keys]
    pairs: set[tuple[str, str]] = set()
    for a in wanted:
        for b, kb in keys.items():
            if a != b and keys[a] == kb and not _declared(lib, a, b):
                pairs.add((a, b) if a < b else (b, a))
    return sorted(pairs)


def _figure_keys(lib: Any, known: dict[str, tuple[str, str]] | None = None) -> dict[str, tuple[str, str]]:
    """``name -> (kind, figures key)`` of every profile of *lib* that resolves, those in *known*
    taken as they are. One that does not resolve is left out: a broken file is reported by its own
    validation, and a library profile that needs the given files is resolved again with them."""
    keys: dict[str, tuple[str, str]] = {}
    for n in lib.names():
        if known is not None and n in known:
            keys[n] = known[n]
            continue
        try:
            p = lib.get(n)
        except Exception:  # noqa: BLE001 - see the docstring
            continue
        keys[n] = (p.kind, figures_key(p))
    return keys


#: the caches of this module (emptied when full or on a restore): the load-time tamper check leaves them be
__caches__ = ('_KEYS',)
#: (folders, their files' stamps, extensions) -> :func:`_library_keys`, for this process
_KEYS: dict[tuple[Any, ...], dict[str, tuple[str, str]]] = {}


def _library_keys(dirs: list[Path], extensions: dict[str, type[BaseModel]] | None) -> dict[str, tuple[str, str]]:
    """``name -> (kind, figures key)`` of every profile of the library folders *dirs* alone that
    resolves, computed once per process while no file under them changes (each file's stamp:
    path, mtime, size, ctime, inode). A profile that resolves from the folders alone resolves
    the same with more files beside them: a later file naming it is skipped as a duplicate, and
    its ``extends`` chain lies in the folders. ``validate_paths`` resolved all ~80 shipped
    profiles on every call (0.1-0.6 s of CPU each)."""
    import hashlib

    from suite.cache import stamp_dirs

    h = hashlib.sha256()
    stamp_dirs(h, dirs)
    ext = None if extensions is None else tuple(sorted(extensions.items(), key=lambda kv: kv[0]))  # the classes, not their ids
    key = (tuple(str(d) for d in dirs), h.hexdigest(), ext)
    hit = _KEYS.get(key)
    if hit is None:
        hit = _figure_keys(ProfileLibrary(dirs, extensions=extensions, collect_errors=True))
        _KEYS.clear()  # one entry: the folders of this process's calls
        _KEYS[key] = hit
    return hit


def validate_paths(paths: Iterable[str | Path], extra: Iterable[str | Path] = (), *,
                   extensions: dict[str, type[BaseModel]] | None = None,
                   plugin_paths: Iterable[str | Path] = ()) -> dict[str, Any]:
    """Validate each file (or every ``*.toml`` under each folder) in *paths*, resolved against the
    library (shipped profiles, plugin folders, ``$SUITE_PROFILES``, *extra*) plus the given files.

    Returns
    -------
    dict
        ``{"ok": [{"name", "kind", "path", "hash"}], "errors": [one line each], "warnings": [...]}``.
        A file with a problem contributes exactly one error line naming the file, the field path,
        what was expected and what was given.
    """
    from suite.hardware import profile_dirs

    files: list[Path] = []
    errors: list[str] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files += sorted(p.rglob("*.toml"))
        elif p.exists():
            files.append(p)
        else:
            errors.append(f"{p}: expected an existing profile file or folder, got a path that does not exist")
    dirs = [Path(d) for d in profile_dirs(tuple(extra), tuple(plugin_paths))]
    lib = ProfileLibrary([*dirs, *files], extensions=extensions, collect_errors=True)
    # a library file (shipped, plugin, user folder) that failed is reported only when asked about
    # (each file of a refused duplicate name too: lib.get reports the refusal, naming both)
    by_path = {f.resolve(): n for n in lib.names() for f in lib.files(n)}
    ok: list[dict[str, Any]] = []
    for f in files:
        key = f.resolve()
        err = lib.file_errors.get(str(f))
        if err is None:
            err = next((m for q, m in lib.file_errors.items() if Path(q).resolve() == key), None)
        if err is not None:
            errors.append(err)
            continue
        name = by_path.get(key)
        if name is None:  # pragma: no cover - every readable file is either named or an error
            errors.append(f"{f}: field profile.name: expected a profile name, got nothing")
            continue
        try:
            prof = lib.get(name)
        except ProfileError as exc:
            errors.append(str(exc))
            continue
        ok.append({"name": prof.name, "kind": prof.kind, "path": str(f), "hash": prof.content_hash()})
    warnings = list(lib.warnings)
    known = _library_keys(dirs, extensions) if ok else None
    for a, b in identical_profiles(lib, [o["name"] for o in ok], known):
        warnings.append(f"{lib.path(a)} and {lib.path(b)}: profiles {a!r} and {b!r} have identical figures under "
                        f"different names; expected one to declare `extends = \"{b}\"` or `same_as = {{ name = "
                        f"\"{b}\", reason = \"...\" }}` in [profile] (a copy would give the same results twice)")
    return {"ok": ok, "errors": errors, "warnings": warnings}
