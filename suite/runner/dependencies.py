"""What a case key hashes of the installed distributions beyond the technique's own package.

A technique's result depends on more than the top-level package that defines its evaluate
functions: on the other packages its distribution ships (a plugin with a helper package beside
it) and on the libraries it declares (networkx, simpy, duckdb: a new version may draw another
graph or plan another query). :func:`suite.runner.fingerprint.code_fingerprint` and
:func:`suite.runner.fingerprint.environment_fingerprint` hash what this module finds:

* :func:`requirement_versions`: the installed version of every library a distribution declares
  (its ``Requires-Dist`` lines: the base requirements and those of its extras, except extras
  named for development only, :data:`DEV_EXTRAS`), ``none`` for one not installed;
* :func:`companion_packages`: the top-level packages of a plugin's distribution other than its
  plugin packages (the values of its ``suite.plugins`` entry points), the core (``suite``) and
  its tests (:data:`NOT_RUNTIME`), from the distribution's ``top_level.txt`` or, without one,
  its ``RECORD``.

Both read metadata files only (once per process): no import, no scan of every installed
distribution (``importlib.metadata.packages_distributions`` takes ~0.7 s).

Limits: an editable install whose build backend records neither ``top_level.txt`` nor the
package's files (only a ``.pth`` or a finder) shows no companion package: a plugin keeps its
code in the package its entry point names, or is installed normally (docs/plugin-authors.md).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from fractions import Fraction
from importlib.metadata import Distribution, PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

__all__ = ["DEV_EXTRAS", "NOT_RUNTIME", "requirement_versions", "versions_text", "installed_libraries", "plugin_distribution",
           "companion_packages", "MACHINE_INPUT", "machine_fingerprint", "machine_description", "host_library_versions",
           "cgroup_cpus"]

#: the key of an execute case's ``inputs`` that holds :func:`machine_fingerprint`
MACHINE_INPUT = "machine:this"

#: top-level names left out of the companions: a distribution's test suite, which a ``find_packages()``
#: wheel ships by accident and no model imports (a test imports the model, not the reverse). Hashing
#: it would make the key hang on the folder a command runs in (``python -m`` puts the current
#: folder, and its own ``tests``, first on ``sys.path``) and recompute every case on a test edit.
#: Every other name is hashed: a model may import a helper package whatever it is called
#: (``scripts``, ``testing``, ``examples``, ``docs``: 0.3.7 left those out, and served stale numbers)
NOT_RUNTIME = frozenset({"tests", "test"})

#: extras whose requirements are tools for developing the distribution, not for running it
DEV_EXTRAS = frozenset({"test", "tests", "testing", "dev", "develop", "docs", "doc", "lint", "typing", "type"})

_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _runtime_requirements(dist: Any) -> list[str]:
    """The distribution names *dist* requires to run: each ``Requires-Dist`` without an ``extra``
    marker or with an extra not in :data:`DEV_EXTRAS` (normalised: lower case, ``_`` -> ``-``)."""
    from suite.distributions import metadata_headers

    names = set()
    # the core metadata's header lines; a legacy egg-info keeps them in requires.txt (``dist.requires``)
    for req in metadata_headers(dist).get("Requires-Dist") or list(getattr(dist, "requires", None) or ()):
        extra = _EXTRA.search(req)
        if extra is not None and extra.group(1).lower() in DEV_EXTRAS:
            continue
        m = _NAME.match(req)
        if m:
            names.add(m.group(1).lower().replace("_", "-"))
    return sorted(names)


@functools.lru_cache(maxsize=None)
def requirement_versions(dist_name: str) -> tuple[tuple[str, str], ...]:
    """``((name, version), ...)`` of every library the installed distribution *dist_name* declares
    it runs with (:func:`_runtime_requirements`), sorted by name; ``"none"`` for a library not
    installed; empty when *dist_name* itself is not installed (a technique defined in a test)."""
    from suite.distributions import name_and_version

    try:
        dist = distribution(dist_name)
    except PackageNotFoundError:
        return ()
    out = []
    for name in _runtime_requirements(dist):
        try:
            out.append((name, name_and_version(distribution(name))[1]))
        except PackageNotFoundError:
            out.append((name, "none"))
    return tuple(out)


def versions_text(dist_name: str, *, leave_out: frozenset[str] = frozenset()) -> str:
    """``name=version;...`` of :func:`requirement_versions` (the names in *leave_out* left out)."""
    return ";".join(f"{n}={v}" for n, v in requirement_versions(dist_name) if n not in leave_out)


def installed_libraries(distributions: Iterable[str]) -> dict[str, str]:
    """library -> installed version of every library the suite and each of *distributions*
    declare to run with (those not installed, and the distributions themselves, left out): what a
    run records as its ``packages``, so an upgrade that changed its keys can be seen afterwards."""
    from suite.registry import HOST_DISTRIBUTION

    dists = {HOST_DISTRIBUTION, *distributions}
    out: dict[str, str] = {}
    for d in sorted(dists):
        out.update((n, v) for n, v in requirement_versions(d) if v != "none" and n not in dists)
    return out


@functools.lru_cache(maxsize=1)
def host_library_versions() -> str:
    """:func:`versions_text` of the suite's own distribution; without its metadata (a source tree on
    ``PYTHONPATH``) the numpy and scipy versions, which the key held before 0.3.7, never nothing."""
    from suite.registry import HOST_DISTRIBUTION

    if requirement_versions(HOST_DISTRIBUTION):
        return versions_text(HOST_DISTRIBUTION)
    import numpy
    import scipy

    return f"numpy={numpy.__version__};scipy={scipy.__version__}"


def _top(module: str) -> str:
    return module.split(":", 1)[0].split(".", 1)[0]


@functools.lru_cache(maxsize=None)
def plugin_distribution(top: str) -> tuple[str, tuple[str, ...]] | None:
    """``(distribution name, its plugin packages)`` of the installed distribution whose
    ``suite.plugins`` entry point names the top-level package *top*; None when none does (a
    technique defined in a test module, a notebook or an in-process plugin)."""
    from suite.registry import _discover, _dist_of

    eps = [ep for ep in _discover() if getattr(ep, "dist", None) is not None]
    for ep in eps:
        if _top(ep.value) == top:
            name = _dist_of(ep)[0]
            return name, tuple(sorted({_top(e.value) for e in eps if _dist_of(e)[0] == name}))
    return None


def _top_levels(dist: Distribution) -> list[str]:
    """The top-level packages and modules of *dist*: its ``top_level.txt``, else the first part
    of each ``.py`` file or package folder in its ``RECORD``."""
    text = dist.read_text("top_level.txt")
    if text:
        return sorted({line.strip() for line in text.splitlines() if line.strip()})
    tops = set()
    for f in dist.files or ():
        parts = f.parts
        if len(parts) > 1 and not parts[0].endswith((".dist-info", ".egg-info", ".data")) and parts[0] != "..":
            tops.add(parts[0])
        elif len(parts) == 1 and parts[0].endswith(".py"):
            tops.add(parts[0][:-3])
    return sorted(tops)


@functools.lru_cache(maxsize=None)
def companion_packages(top: str) -> tuple[str, ...]:
    """The other top-level packages of the distribution whose plugin package is *top*: what it
    ships besides its plugin packages, the core (``suite``) and its tests (:data:`NOT_RUNTIME`),
    sorted; empty when *top* is not a plugin package of an installed distribution."""
    found = plugin_distribution(top)
    if found is None:
        return ()
    name, plugins = found
    try:
        dist = distribution(name)
    except PackageNotFoundError:  # pragma: no cover - found through its own entry point
        return ()
    return tuple(t for t in _top_levels(dist) if t not in plugins and t != "suite" and t.isidentifier()
                 and t not in NOT_RUNTIME)


@functools.lru_cache(maxsize=1)
def _machine() -> tuple[str, str, str, str, str]:
    """(architecture, CPU model, logical CPU count, physical memory in bytes, CPUs this process may
    run on) of this machine: a timing taken under ``taskset -c 0``, a slurm allocation or a cgroup
    limit of one core is not one taken on all of them (a 2-thread copy was served to a 1-core run)."""
    import os
    import platform

    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        pass
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 0
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux: the logical count
        usable = os.cpu_count() or 0
    quota = cgroup_cpus()
    if quota is not None:
        usable = min(usable, quota)
    return platform.machine(), model or platform.processor(), str(os.cpu_count()), str(memory), str(usable)


def _cpu_max(path: Path) -> Fraction | None:
    """The CPUs one cgroup's ``cpu.max`` (*path*: quota and period in microseconds) allows, as a
    fraction (``50000 100000`` -> 1/2); None for ``max``, a missing or unreadable file or other text."""
    try:
        fields = path.read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    return Fraction(quota, period) if quota > 0 and period > 0 else None


def cgroup_cpus(root: str = "/sys/fs/cgroup", self_cgroup: str | None = None) -> int | None:
    """The CPUs the cgroup v2 CPU quotas allow this process (``docker --cpus=1``: ``100000 100000``
    -> 1, rounded up): the tightest ``cpu.max`` of its own cgroup and of each parent up to *root*,
    as the kernel applies them all (a systemd slice or a container nested in a limited parent).

    *root* is the cgroup v2 mount; *self_cgroup* the text of ``/proc/self/cgroup`` (read when None),
    whose ``0::/PATH`` line names the process's cgroup under *root*. None when no cgroup on the path
    sets a quota (``max ...``), when there is no v2 line (cgroup v1, not Linux) or nothing is
    readable: a quota slows a timing as surely as an affinity does, and leaves the affinity as it was.
    A path that leaves *root* (``0::/../x``: a cgroup outside this namespace's view) counts *root* only.
    """
    if self_cgroup is None:
        try:
            self_cgroup = Path("/proc/self/cgroup").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    own = next((line[3:].strip() for line in self_cgroup.splitlines() if line.startswith("0::/")), None)
    if own is None:
        return None
    parts = [p for p in own.split("/") if p]
    if ".." in parts or "." in parts:
        parts = []
    base = Path(root)
    limits = [_cpu_max(base.joinpath(*parts[:depth], "cpu.max")) for depth in range(len(parts) + 1)]
    tightest = min((f for f in limits if f is not None), default=None)
    return None if tightest is None else max(1, math.ceil(tightest))


@functools.lru_cache(maxsize=1)
def machine_fingerprint() -> str:
    """SHA-256 (16 hex chars) of the machine an execute case is measured on: its architecture, CPU
    model (``/proc/cpuinfo``'s ``model name``, else :func:`platform.processor`), logical CPU count,
    physical memory and the CPUs this process may run on (its affinity, and a cgroup's CPU quota). An execute result is a timing of this machine, whatever profile the case
    names, so a store shared between machines (a copied file, dask workers on several hosts)
    never serves one machine's timing on another (the host name is left out: a container gets a
    new one each start). Computed once per process."""
    import hashlib

    return hashlib.sha256(";".join(_machine()).encode()).hexdigest()[:16]


def machine_description() -> str:
    """What :func:`machine_fingerprint` hashes, for a message: ``x86_64, <CPU model>, 16 CPUs, 125.8 GiB``."""
    arch, model, cpus, memory, usable = _machine()
    mine = f" ({usable} usable)" if usable != cpus else ""
    return f"{arch}, {model or 'unknown CPU'}, {cpus} CPUs{mine}, {int(memory) / 2**30:.1f} GiB"
