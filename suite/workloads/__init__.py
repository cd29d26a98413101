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
from functools import partial
from pathlib import Path

from suite.errors import WorkloadError, close_names
from suite.workloads.types import Dataset, Layer, LayerTable, Workload

__all__ = ["Layer", "LayerTable", "Workload", "Dataset", "register", "register_pattern",
           "get_workload", "list_workloads", "zoo_has", "zoo_hash", "provider_of"]

_BUILDERS: dict[str, tuple[Callable[[], Workload], str]] = {}
_PATTERNS: list[tuple[re.Pattern[str], Callable[..., Workload], str, str]] = []
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
    from suite.workloads import zoo

    for name, builder in zoo.BUILDERS.items():
        register(name, builder)
    for pattern, family, example in zoo.PATTERNS:
        register_pattern(pattern, family, example)


def zoo_has(name: str) -> bool:
    """True when the zoo itself provides *name* (a registered name or a family pattern)."""
    _load_plugins()
    return name in _BUILDERS or any(pat.fullmatch(name) for pat, _b, _e, _p in _PATTERNS)


def get_workload(name: str) -> Workload:
    """The zoo's workload called *name* (built once, then cached).

    .. deprecated:: 0.2.0
        A global lookup that misses the plugins' workloads and is not part of any case key;
        removed in 0.4.0. A model gets its inputs through its scenario (``scenario.workload``,
        ``Param(..., ref="workload")``, ``Technique(uses=...)``); a command or a script through
        its context (:meth:`suite.context.Context.workload`).

    Raises
    ------
    WorkloadError
        Unknown name (with close matches).
    """
    import warnings

    warnings.warn("suite.workloads.get_workload() is deprecated and will be removed in dlsys-suite 0.4.0: a model "
                  "reads its workloads from its scenario (Param(..., ref='workload'), Technique(uses=...)), other "
                  "code through a Context (Context.build().workload(name))", DeprecationWarning, stacklevel=2)
    return _zoo_get(name)


def _zoo_get(name: str) -> Workload:
    """The zoo's workload called *name* (built once, then cached): what a context's
    :class:`~suite.context.WorkloadLibrary` resolves a zoo name with."""
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
            close = close_names(name, list_workloads())
            hint = f"; did you mean {', '.join(close)}?" if close else "; see `suite workloads list`"
            raise WorkloadError(f"unknown workload {name!r}{hint}")
    from suite.frozen import freeze

    frozen: Workload = freeze(wl, f"workload {name!r}")
    _CACHE[name] = wl = frozen
    _recall_hash(name, builder if name not in _BUILDERS else _BUILDERS[name][0], wl)
    return wl


# ---------------------------------------------------------------------- content hashes, cached
# A workload's content hash is part of every case key; hashing ResNet-7502's 25,000 layers takes
# 0.4 s, every process (issue 19: a cached `suite reproduce`). A zoo workload's content is a
# function of its name, its builder and the zoo's source, so the hash is kept in a JSON file
# under the cache folder (``$SUITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/dlsys-suite``) named by
# the SHA-256 of every file of this package and suite/frozen.py and the Python version, keyed
# by name and builder. Only builders defined in this package are cached (a builder registered
# by anyone else is hashed every time); ``SUITE_NO_WORKLOAD_CACHE=1`` turns it off.
_HASHES: dict[str, str] | None = None
_ZOO_FP: str | None = None
__caches__ = ("_HASHES", "_ZOO_FP", "_PLUGINS_LOADED")  # suite.tamper: rebound by this module, not inputs


def _zoo_fingerprint() -> str:
    global _ZOO_FP
    if _ZOO_FP is None:
        import hashlib
        import sys
        from pathlib import Path

        here = Path(__file__).resolve().parent
        h = hashlib.sha256(sys.version.encode() + b"\0")
        files = sorted(f for f in here.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        for f in files + [here.parent / "frozen.py"]:
            h.update(f.relative_to(here.parent).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
        _ZOO_FP = h.hexdigest()[:16]
    return _ZOO_FP


def _builder_key(name: str, builder: Callable[..., Workload]) -> str | None:
    """``name|module:qualname|args``, or None when the builder is not the zoo's own."""
    f, args = builder, ""
    if isinstance(builder, partial):
        f, args = builder.func, repr((builder.args, sorted(builder.keywords.items())))
    mod = getattr(f, "__module__", None) or ""
    if not (mod == __name__ or mod.startswith(__name__ + ".")) or not hasattr(f, "__qualname__"):
        return None
    return f"{name}|{mod}:{f.__qualname__}|{args}"


def _hash_file() -> Path | None:
    import os

    if os.environ.get("SUITE_NO_WORKLOAD_CACHE"):
        return None
    from suite.cache import cache_dir

    base = cache_dir()
    try:
        return base / f"workload-hashes-{_zoo_fingerprint()}.json"
    except OSError:
        return None


def _hashes() -> dict[str, str]:
    global _HASHES
    if _HASHES is None:
        _HASHES = {}
        path = _hash_file()
        if path is not None:
            from suite.cache import read_json_dict

            _HASHES = {k: v for k, v in read_json_dict(path).items() if isinstance(k, str) and isinstance(v, str)}
    return _HASHES


def _recall_hash(name: str, builder: Callable[..., Workload], wl: Workload) -> None:
    """Give *wl* its cached content hash, or mark it so that the hash, once computed, is kept."""
    key = _builder_key(name, builder)
    if key is None or not hasattr(wl, "__dict__"):
        return
    hit = _hashes().get(key)
    if hit is not None and "_content_hash" not in wl.__dict__:
        wl.__dict__["_content_hash"] = hit
    else:  # the hash, once computed, is handed back to this module (types never imports it)
        wl.__dict__["_remember_hash"] = partial(_remember_hash, key)


def _remember_hash(key: str, value: str) -> None:
    """Called by :meth:`Workload._content_hash` for a zoo workload: keep its hash (merged with what
    other processes wrote; written atomically)."""
    _hashes()[key] = value
    path = _hash_file()
    if path is not None:
        from suite.cache import merge_json_dict

        merge_json_dict(path, {key: value})


def zoo_hash(name: str) -> str | None:
    """The content hash of the zoo's workload *name* as the on-disk cache holds it, without
    building the workload; None when it is not cached (or not the zoo's own builder, or the
    cache is off: ``SUITE_NO_WORKLOAD_CACHE``), in which case build it (:func:`_zoo_get`). Equal
    to ``_zoo_get(name).content_hash()`` whenever it is not None (the same key, see above)."""
    _load_plugins()
    if name in _CACHE:
        return _CACHE[name].content_hash()
    builder: Callable[..., Workload] | None = _BUILDERS[name][0] if name in _BUILDERS else next(
        (b for pat, b, _e, _p in _PATTERNS if pat.fullmatch(name)), None)
    key = None if builder is None else _builder_key(name, builder)
    return None if key is None else _hashes().get(key)


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
