"""The wheel ships: build it, install it in a fresh virtual environment, and check that the plugin
loads and finds its own hardware profile there (what an editable install hides). Slow: run with
``pytest -m slow``."""

from __future__ import annotations

import importlib.util
import json
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

_PROBE = """
import json
from suite.context import Context
ctx = Context.build(strict=True)  # a quarantined plugin is an error here
tech = ctx.technique("allreduce-demo")
profile = ctx.profile("allreduce-demo-testbed")
import suite_allreduce_demo
print(json.dumps({"module": suite_allreduce_demo.__file__, "profile": str(profile.path), "claims": len(tech.claims)}))
"""


def _run(cmd, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SUITE_STRICT_PLUGINS")}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, **kw)


def _isolation() -> list[str]:
    """``--no-build-isolation`` when setuptools >= 68 (pyproject.toml's build requirement) and
    wheel are importable here, else nothing (an isolated build)."""
    if importlib.util.find_spec("wheel") is None or importlib.util.find_spec("setuptools") is None:
        return []
    from importlib.metadata import version

    return ["--no-build-isolation"] if int(version("setuptools").split(".")[0]) >= 68 else []


def test_wheel_installs_in_a_fresh_venv(tmp_path):
    # 1. build the wheel: with this environment's setuptools and wheel when it has them (offline),
    #    else in pip's isolated build environment (pip fetches setuptools from your index)
    r = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", *_isolation(), "-w", str(tmp_path / "dist"), str(ROOT)])
    assert r.returncode == 0, r.stdout + r.stderr
    wheel = next((tmp_path / "dist").glob("*.whl"))

    # 2. a fresh venv that sees dlsys-suite and its dependencies from this one (nothing downloaded),
    #    but not this project's source tree
    venv = tmp_path / "venv"
    r = _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)])
    assert r.returncode == 0, r.stderr
    py = venv / "bin" / "python"
    child_site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    parents = dict.fromkeys([sysconfig.get_paths()["purelib"], *site.getsitepackages()])
    (child_site / "_parent_env.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in parents))
    # --ignore-installed: the copy this environment has (editable, say) must not count as installed
    r = _run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "-q", str(wheel)],
             cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr

    # 3. the installed copy loads and finds its profile inside the venv (package data in the wheel)
    r = _run([str(py), "-c", _PROBE], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert Path(got["module"]).is_relative_to(venv), got
    assert Path(got["profile"]).is_relative_to(venv), got
    assert got["claims"] >= 1
