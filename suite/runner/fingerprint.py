"""What a case key hashes of the code: a plugin's package and its distribution's other packages
(:func:`code_fingerprint`, :func:`package_fingerprint`), the core's source and its libraries'
versions (:func:`environment_fingerprint`). :mod:`suite.runner.case` puts them into each key.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from suite.technique import Technique

__all__ = ["code_fingerprint", "package_fingerprint", "environment_fingerprint"]


#: top-level package -> (stat signature of its files, fingerprint)
_FINGERPRINTS: dict[str, tuple[tuple[Any, ...], str]] = {}
#: files never hashed: byte code, which the interpreter compiles from a hashed ``.py`` (a cache,
#: not an input). Every other file of a package may be read by a model (``read_data`` of a
#: ``table.rst``, ``files(pkg) / "coef.md"``), so prose is hashed too: a README edit inside a
#: package recomputes its cases, the safe direction
_SKIP_SUFFIXES = frozenset({".pyc", ".pyo"})


def code_fingerprint(tech: Technique, *, refresh: bool = False) -> str:
    """SHA-256 (16 hex chars) of the code *tech*'s results depend on beyond the core.

    The top-level package of the module that defines the technique's evaluate functions
    (:attr:`Technique.package`), hashed by :func:`package_fingerprint`; for a plugin of another
    distribution than the suite's, also every other package that distribution ships (a helper
    package beside the plugin's) and the installed versions of the libraries it declares
    (:mod:`suite.runner.dependencies`). The suite's own plugins' libraries are hashed by
    :func:`environment_fingerprint`.
    """
    from suite.registry import HOST_DISTRIBUTION
    from suite.runner.dependencies import companion_packages, plugin_distribution, versions_text

    top = tech.package
    own = package_fingerprint(top, refresh=refresh)
    found = plugin_distribution(top)
    if found is None or found[0] == HOST_DISTRIBUTION:  # the core's libraries: environment_fingerprint
        return own
    extra = [*(f"{p}={package_fingerprint(p, refresh=refresh)}" for p in companion_packages(top)),
             versions_text(found[0], leave_out=frozenset({HOST_DISTRIBUTION}))]
    if not any(extra):  # nothing beside the plugin package: its fingerprint, wherever it is installed
        return own
    return hashlib.sha256(";".join([own, *extra]).encode()).hexdigest()[:16]


def _package_location(top: str) -> tuple[list[str], str]:
    """(folders, file) of the package or module *top*: a package's folders (its ``__path__``) and
    no file, or a module's file and no folder; neither when it cannot be found. A name not
    imported yet is found by its import spec, without running its code (a helper package named
    ``examples`` or ``benchmarks`` is hashed, not executed)."""
    import importlib.util
    import sys

    mod = sys.modules.get(top)
    if mod is not None:
        roots = list(getattr(mod, "__path__", None) or ())
        return roots, "" if roots else (getattr(mod, "__file__", None) or "")
    try:
        spec = importlib.util.find_spec(top) if top else None
    except (ImportError, ValueError):  # a broken finder or spec: the name is hashed
        return [], ""
    if spec is None:
        return [], ""
    roots = list(spec.submodule_search_locations or ())
    return roots, "" if roots or not spec.has_location else (spec.origin or "")


def _package_files(top: str) -> tuple[list[tuple[str, str, int, int]], bool]:
    """((relative path, path, size, mtime_ns) of every hashed file, sorted; found) of the package
    or module *top* (:func:`_package_location`; found is False when it cannot be found).

    Hashed: every file but byte code (:data:`_SKIP_SUFFIXES`, ``__pycache__``), build metadata
    (``*.egg-info``) and the core's shipped data folder (profiles and workloads are hashed by
    content where a case uses them). A folder linked into the package is walked (a model reads
    it through ``importlib.resources.files``); a link back to a folder already walked is not (a
    cycle ends, and no file is hashed twice)."""
    import os

    roots, single = _package_location(top)
    if not roots:
        if not single:
            return [], False
        st = os.stat(single)
        return [(os.path.basename(single), single, st.st_size, st.st_mtime_ns)], True
    out: list[tuple[str, str, int, int]] = []
    walked: set[tuple[int, int]] = set()
    for root in roots:
        for d, dirs, _files in os.walk(root, followlinks=True):
            st = os.stat(d)
            if (st.st_dev, st.st_ino) in walked:
                dirs[:] = []
                continue
            walked.add((st.st_dev, st.st_ino))
            dirs[:] = [x for x in dirs if x != "__pycache__" and not x.endswith(".egg-info")
                       and not (d == root and top == "suite" and x == "data")]
            with os.scandir(d) as it:
                for e in it:
                    if e.is_file() and os.path.splitext(e.name)[1] not in _SKIP_SUFFIXES:
                        st = e.stat()
                        out.append((os.path.relpath(e.path, root).replace(os.sep, "/"), e.path, st.st_size,
                                    st.st_mtime_ns))
    out.sort()
    return out, True


def package_fingerprint(top: str, *, refresh: bool = False) -> str:
    """SHA-256 (16 hex chars) of the source and data files of the top-level package (or module) *top*.

    Every file under the package (``*.py`` and data files such as ``coefficients.json`` or a
    ``table.rst``, folders linked into it included; not byte code or ``__pycache__``:
    :func:`_package_files`) is hashed (relative path and bytes, sorted); a module that is not a
    package (tests, notebooks) hashes its own file; a name that cannot be found hashes the name.
    Computed once per package and process; with *refresh*, the files are stat-ed again (size and
    modification time) and read again only when one changed, was added or removed (a
    :class:`Resolver` refreshes once per sweep, so an edit between two sweeps of one process is
    seen). ``suite reproduce`` keys its judgement cache by these fingerprints.
    """
    hit = _FINGERPRINTS.get(top)
    if hit is not None and not refresh:
        return hit[1]
    files, found = _package_files(top)
    sig = tuple(files)
    if hit is not None and hit[0] == sig:
        return hit[1]
    h = hashlib.sha256()
    if not found:
        h.update(top.encode())
    for rel, path, _size, _mtime in files:
        try:
            with open(path, "rb") as fh:
                h.update(rel.encode() + b"\0" + fh.read() + b"\0")
        except OSError:
            continue
    fp = h.hexdigest()[:16]
    _FINGERPRINTS[top] = (sig, fp)
    return fp


def environment_fingerprint(*, refresh: bool = False) -> str:
    """SHA-256 (16 hex chars) of what every case's result depends on besides its technique: the
    source of the core (:func:`package_fingerprint` of ``suite``: the cost models of
    :mod:`suite.perf`, the units, the workload zoo) and the installed version of every library
    the suite's distribution declares to run with (numpy, scipy, networkx, simpy, duckdb, ...:
    :func:`_library_versions`).

    A one-line change in ``suite/perf`` thus makes new cases for every technique (the core
    does not know which of its modules an evaluation imports, so it hashes all of them).
    """
    blob = package_fingerprint("suite", refresh=refresh) + ";" + _library_versions()
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _library_versions() -> str:
    """``name=version;...`` of every library the suite's distribution declares to run with (its
    base requirements and its runtime extras', :func:`suite.runner.dependencies.requirement_versions`;
    ``none`` for one not installed), read once per process."""
    from suite.runner.dependencies import host_library_versions

    return host_library_versions()
