"""Where and with what a run was made (the provenance of a ``runs`` row), and whether the process
of a run still marked ``running`` is gone."""

from __future__ import annotations

import os
import platform as _platform
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from suite.results.codec import dumps

__all__ = ["provenance", "git_commit", "package_versions", "process_gone"]

#: the packages whose versions a run records
PACKAGES = ("dlsys-suite", "numpy", "scipy", "pandas", "pydantic", "pint", "pluggy", "dask", "distributed")

_GIT: dict[str, str | None] = {}


def _commit_of(where: Path) -> str | None:
    """``git rev-parse HEAD`` of *where* (``-dirty`` appended with uncommitted changes), or None."""
    try:
        out = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5)
        if out.returncode != 0:
            return None
        commit = out.stdout.strip()
        dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5)
        if dirty.returncode == 0 and dirty.stdout.strip():
            commit += "-dirty"
        return commit
    except (OSError, subprocess.SubprocessError):
        return None


def git_commit() -> str | None:
    """The commit of the checkout the suite runs from (or of the CWD), if it is a git checkout
    (asked once per process)."""
    if "c" in _GIT:
        return _GIT["c"]
    commit = None
    for where in (Path(__file__).resolve().parents[2], Path.cwd()):
        if (where / ".git").exists():
            commit = _commit_of(where)
            if commit is not None:
                break
    _GIT["c"] = commit
    return commit


_VERSIONS: dict[str, str] = {}


def package_versions() -> dict[str, str]:
    """name -> installed version of :data:`PACKAGES` (those not installed left out), read once
    per process like :func:`git_commit` (every run of a process records them: 20 ms a run idle,
    0.16 s at load 6, of a run's fixed cost)."""
    from importlib.metadata import PackageNotFoundError, version

    if not _VERSIONS:
        for name in PACKAGES:
            try:
                _VERSIONS[name] = version(name)
            except PackageNotFoundError:
                pass
    return dict(_VERSIONS)


def provenance(command: str | None = None, plugins: Mapping[str, str] | None = None,
               packages: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Where and with what a run was made (the ``runs`` row, without times and counts):
    ``host, platform, python, packages`` (JSON text: :func:`package_versions` and *packages*, the
    libraries the run's plugins declare, as the runner gives them, sorted by name), ``plugins``
    (JSON text: distribution -> version, as the runner's context gives them), ``git_commit,
    command`` (default: ``sys.argv``)."""
    libs = {**package_versions(), **(packages or {})}
    return {
        "host": socket.gethostname(),
        "platform": _platform.platform(),
        "python": sys.version.split()[0],
        "packages": dumps(dict(sorted(libs.items()))),
        "plugins": dumps(dict(plugins or {})),
        "git_commit": git_commit(),
        "command": command if command is not None else " ".join(sys.argv),
    }


def process_gone(host: Any, pid: Any) -> bool:
    """True when a run marked ``running`` cannot be: it was started on this host by a process that
    no longer exists (killed with -9, a power cut). Runs of other hosts are left as they are."""
    if host != socket.gethostname() or pid is None:
        return False
    try:
        pid = int(pid)
    except (TypeError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False
    if pid == os.getpid():
        return False
    try:  # a reused pid of another program: compare its command line
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().decode("utf-8", "replace")
        return "suite" not in cmd and "python" not in cmd and "pytest" not in cmd
    except OSError:
        return False
