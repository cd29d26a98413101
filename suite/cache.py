"""On-disk caches: the cache folder, JSON-object files, and cached listings keyed by file stamps.

The cache folder is ``$SUITE_CACHE_DIR`` or ``$XDG_CACHE_HOME/dlsys-suite``
(``~/.cache/dlsys-suite``); one that cannot be written is not used (what it would hold is
computed, as without a cache). Before 0.3.0 this module was ``suite.hardware.index`` (it began as
the index of ``suite hardware list``); that name is a deprecated shim, removed in 0.4.0.

Listings (``suite hardware list``, ``suite plugin info``): listing ~70 profiles needs each one
validated (pydantic, units), and importing that machinery is most of the command's time. The rows
a listing prints are a pure function of the profile files, the code that validates and formats
them, and the extension schemas in use, so they are cached on disk under a key made of exactly
those: every ``*.toml`` in the search folders by path, modification time (ns) and size; every
source file of the ``suite`` package and of the listing code; the dlsys-suite version and
pydantic's and pint's files; the extension names with the file of the module each is defined in
(and, for a plugin's, every file of that module's top-level package). A file's stamp includes its
ctime and inode, so a copy that keeps mtime and size is an edit. Any change to any of them is a
new key, so a stale row cannot be shown.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "listing_key", "load_listing", "merge_json_dict", "package_files", "read_json_dict",
           "save_listing"]

VERSION = 1  # of the cached document's format


def cache_dir() -> Path:
    """``$SUITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/dlsys-suite`` (default ``~/.cache/dlsys-suite``)."""
    env = os.environ.get("SUITE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dlsys-suite"


def read_json_dict(path: Path) -> dict[str, Any]:
    """The JSON object in *path*, or ``{}`` when it is absent, unreadable, damaged or not an
    object (a cache file is recomputed, never a crash)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def merge_json_dict(path: Path, entries: Mapping[str, Any]) -> None:
    """Add *entries* to the JSON object in *path*, merged with what another process wrote
    meanwhile, and write it atomically (a rename); a folder that cannot be written is skipped."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        have = read_json_dict(path)
        have.update(entries)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(have, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def _stamp(h: "hashlib._Hash", f: Path) -> None:
    try:
        st = f.stat()
        # ctime and inode too: a copy that keeps the old mtime and size (cp -p, rsync -a, tar x)
        # still changes the file's ctime, which no user can set back
        h.update(f"{f}\0{st.st_mtime_ns}\0{st.st_size}\0{st.st_ctime_ns}\0{st.st_ino}\n".encode())
    except OSError:
        h.update(f"{f}\0missing\n".encode())


def _module_file(ref: Any) -> str:
    """The file of the module an extension schema (a class or a ``"module:Class"`` reference) is
    defined in, found without importing it."""
    import importlib.util
    import sys

    module = ref.partition(":")[0] if isinstance(ref, str) else getattr(ref, "__module__", "")
    mod = sys.modules.get(module)
    if mod is not None:
        return getattr(mod, "__file__", "") or module
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return module
    return (spec.origin or module) if spec is not None else module


def package_files(modules: Iterable[str]) -> list[Path]:
    """The ``*.py`` files of the top-level packages of *modules* (a single-module top level: its
    file), found without importing them."""
    import importlib.util

    out: list[Path] = []
    for top in sorted({m.split(".")[0] for m in modules if m}):
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        for root in spec.submodule_search_locations or []:
            out += sorted(Path(root).rglob("*.py"))
        if not spec.submodule_search_locations and spec.origin:
            out.append(Path(spec.origin))
    return out


def _schema_files(ref: Any) -> list[Path]:
    """The files an extension schema's validation can depend on, found without importing it: its
    module's file and, for a plugin's schema, every ``*.py`` of the module's top-level package (a
    validator's limits may live in a sibling module). The core's (``suite.*``): its module's file
    (``suite/hardware`` is stamped whole)."""
    module = ref.partition(":")[0] if isinstance(ref, str) else getattr(ref, "__module__", "")
    files = [Path(_module_file(ref))]
    if (module or "").split(".")[0] not in ("", "suite"):
        files += package_files([module])
    return files


def _library_files() -> list[Path]:
    """The ``__init__.py`` of the libraries validation and unit formatting go through (pydantic,
    pydantic-core, pint), found without importing them: an upgrade rewrites them, so their stamps
    change (reading the installed versions' metadata would cost ~70 ms per command)."""
    import importlib.util

    out = []
    for name in ("pydantic", "pydantic_core", "pint"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        out.append(Path(spec.origin) if spec is not None and spec.origin else Path(f"<no {name}>"))
    return out


def listing_key(dirs: Iterable[Path], extensions: Mapping[str, Any], code: Iterable[Path] = (),
                what: str = "hardware-list") -> str:
    """SHA-256 (24 hex) of everything the listing depends on (see the module docstring)."""
    from suite._version import __version__

    h = hashlib.sha256(f"{what}\0{VERSION}\0{__version__}\n".encode())
    core = Path(__file__).resolve().parent  # the whole suite package: the validating and formatting code
    for f in sorted(core.rglob("*.py")) + _library_files() + [Path(c) for c in code]:
        _stamp(h, f)
    for name in sorted(extensions):
        h.update(f"ext\0{name}\0".encode())
        for f in _schema_files(extensions[name]):
            _stamp(h, f)
    stamp_dirs(h, dirs)
    return h.hexdigest()[:24]


def stamp_dirs(h: Any, dirs: Iterable[Path]) -> None:
    """Feed *h* (a hashlib object) each profile folder's path and the stamp of every TOML file under
    it (a file given instead of a folder: that file): what changes when a profile file is edited,
    added, removed or replaced."""
    for d in dirs:
        d = Path(d)
        h.update(f"dir\0{d}\n".encode())
        for f in sorted(d.rglob("*.toml")) if d.is_dir() else [d]:
            _stamp(h, f)


def load_listing(key: str, what: str = "hardware-list", fields: Iterable[str] = ()) -> dict[str, Any] | None:
    """The cached document for *key*, or None (absent, unreadable, or not a document of kind
    *what* holding every one of *fields*: a damaged cache file is recomputed, not a crash)."""
    try:
        doc = json.loads((cache_dir() / f"{what}-{key}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("what") != what or any(f not in doc for f in fields):
        return None
    return doc


def save_listing(key: str, doc: dict[str, Any], what: str = "hardware-list") -> None:
    """Write *doc* for *key* (atomically; a folder that cannot be written is skipped) and remove
    the older listings of the same kind."""
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{what}-{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, d / f"{what}-{key}.json")
        for old in d.glob(f"{what}-*.json"):
            # only this kind's own files: "fields-read-foo-*" also matches technique foo-bar's
            rest = old.name[len(what) + 1:-len(".json")]
            if old.name != f"{what}-{key}.json" and len(rest) == len(key) and "-" not in rest:
                old.unlink(missing_ok=True)
    except OSError:
        return
