"""Validate profile files against the library (``suite hardware validate FILE...``)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from suite.errors import ProfileError
from suite.hardware.profile import ProfileLibrary

__all__ = ["validate_paths"]


def validate_paths(paths: Iterable[str | Path], extra: Iterable[str | Path] = (), *,
                   extensions: dict | None = None, plugin_paths: Iterable[str | Path] = ()) -> dict:
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
    by_path = {lib.path(n).resolve(): n for n in lib.names()}
    ok: list[dict] = []
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
    return {"ok": ok, "errors": errors, "warnings": list(lib.warnings)}
