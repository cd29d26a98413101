"""The third-party cycle, for real: scaffold a plugin, pip-install it into a temporary virtual
environment beside this project, discover it, reproduce its claim, run its generated tests; and
a deliberately broken plugin is quarantined while the rest work, and fails under --strict-plugins.

The temporary venv sees this environment's packages (dlsys-suite and its dependencies) through a
``.pth`` file, so nothing is downloaded; the plugin itself is installed with pip.

Both child-venv tests are slow (a venv, two pip installs and seven child processes: 11-34 s). The
same behaviour, in process: the scaffolded plugin passes the kit from its source
(tests/testing/test_example_plugin.py::test_the_example_passes_the_kit_from_its_source, the example
being the scaffold's output, checked file for file there), a registry's plugin is reproduced by the
CLI (tests/runner/test_runner_cli.py::test_reproduce_cli), and an entry point whose module fails to
import is quarantined while an installed one (poseidon's) works, and fails the command under
--strict-plugins or SUITE_STRICT_PLUGINS
(test_broken_entry_point_is_quarantined_and_strict_fails_in_process, below).
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from suite.scaffold import scaffold_plugin


def _run(cmd, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SUITE_STRICT_PLUGINS")}
    env.update(kw.pop("env", {}))
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, **kw)


@pytest.fixture(scope="module")
def child_venv(tmp_path_factory):
    root = tmp_path_factory.mktemp("venv")
    venv = root / "venv"
    base_python = getattr(sys, "_base_executable", sys.executable)
    r = _run([base_python, "-m", "venv", "--without-pip", str(venv)])
    assert r.returncode == 0, r.stderr
    py = venv / "bin" / "python"
    child_site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    parent_sites = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    # addsitedir (not a bare path) so the parent's own .pth files run too: an editable install of
    # dlsys-suite is found through one
    lines = [f"import site; site.addsitedir({p!r})" for p in dict.fromkeys(parent_sites)]
    (child_site / "_parent_env.pth").write_text("\n".join(lines) + "\n")
    return py


def _pip_install(py, path):
    r = _run([str(py), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q", str(path)])
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_scaffold_install_discover_reproduce_and_test(child_venv, tmp_path):
    root = scaffold_plugin("ring-demo", tmp_path)
    _pip_install(child_venv, root)

    r = _run([str(child_venv), "-m", "suite", "techniques", "--format", "json"])
    assert r.returncode == 0, r.stderr
    names = {t["name"] for t in json.loads(r.stdout)}
    assert "ring-demo" in names and "poseidon" in names

    r = _run([str(child_venv), "-m", "suite", "reproduce", "ring-demo", "--store", str(tmp_path / "s.sqlite"),
              "--format", "json"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ring-bandwidth-optimal" in r.stdout

    # the generated slow test (wheel into a fresh venv) is run by tests/testing/test_scaffold_wheel.py
    r = _run([str(child_venv), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", "not slow",
              str(root / "tests")], cwd=tmp_path)
    items = [ln for ln in r.stdout.splitlines() if "::" in ln]
    checks = [ln for ln in items if "test_conforms[" in ln]  # one item per conformance check
    assert any("bytes-conserved" in ln for ln in checks) and len(items) == len(checks) + 2, r.stdout
    r = _run([str(child_venv), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", str(root / "tests")],
             cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    import re

    passed = int(re.search(r"(\d+) passed", r.stdout).group(1))
    skipped = int(m.group(1)) if (m := re.search(r"(\d+) skipped", r.stdout)) else 0
    assert passed + skipped == len(items) and passed >= 3 and " failed" not in r.stdout, r.stdout


def test_broken_entry_point_is_quarantined_and_strict_fails_in_process(tmp_path, monkeypatch):
    """The slow test below without the venv: the CLI over a registry of the installed poseidon
    entry point and one whose module raises ImportError."""
    from importlib.metadata import EntryPoint

    from click.testing import CliRunner

    import suite.context
    from suite.cli import main
    from suite.registry import Registry, _discover

    (tmp_path / "suite_broken_inproc.py").write_text("raise ImportError('this plugin is broken on purpose')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("SUITE_STRICT_PLUGINS", raising=False)
    eps = [ep for ep in _discover() if ep.name == "poseidon"]
    eps.append(EntryPoint(name="broken-demo", value="suite_broken_inproc", group="suite.plugins"))
    monkeypatch.setattr(suite.context, "default_registry", lambda strict=None: Registry(entry_points_=eps,
                                                                                          strict=strict))
    r = CliRunner().invoke(main, ["plugins", "--format", "json"])
    assert r.exit_code == 0, r.output
    plugins = {p["plugin"]: p for p in json.loads(r.output[r.output.index("["):])}
    assert plugins["broken-demo"]["status"] == "quarantined"
    assert "this plugin is broken on purpose" in plugins["broken-demo"]["reason"]
    assert plugins["poseidon"]["status"] == "ok"

    r = CliRunner().invoke(main, ["techniques", "--format", "json"])
    assert r.exit_code == 0 and "poseidon" in r.output

    r = CliRunner().invoke(main, ["--strict-plugins", "techniques"])
    assert r.exit_code != 0
    assert r.output.strip().startswith("error: plugin 'broken-demo'"), r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(main, ["techniques"], env={"SUITE_STRICT_PLUGINS": "1"})
    assert r.exit_code != 0


@pytest.mark.slow
def test_broken_plugin_is_quarantined_and_strict_fails(child_venv, tmp_path):
    pkg = tmp_path / "broken"
    (pkg / "suite_broken_demo").mkdir(parents=True)
    (pkg / "suite_broken_demo" / "__init__.py").write_text("raise ImportError('this plugin is broken on purpose')\n")
    (pkg / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "suite-broken-demo"
        version = "0.0.1"
        [project.entry-points."suite.plugins"]
        broken-demo = "suite_broken_demo"
        [tool.setuptools]
        packages = ["suite_broken_demo"]
        """))
    _pip_install(child_venv, pkg)

    r = _run([str(child_venv), "-m", "suite", "plugins", "--format", "json"])
    assert r.returncode == 0, r.stderr
    plugins = {p["plugin"]: p for p in json.loads(r.stdout)}
    assert plugins["broken-demo"]["status"] == "quarantined"
    assert "this plugin is broken on purpose" in plugins["broken-demo"]["reason"]
    assert plugins["broken-demo"]["distribution"] == "suite-broken-demo"
    assert plugins["poseidon"]["status"] == "ok"

    r = _run([str(child_venv), "-m", "suite", "techniques", "--format", "json"])
    assert r.returncode == 0 and "poseidon" in r.stdout

    r = _run([str(child_venv), "-m", "suite", "--strict-plugins", "techniques"])
    assert r.returncode != 0
    assert r.stderr.strip().startswith("error: plugin 'broken-demo' (suite-broken-demo)")
    assert "Traceback" not in r.stderr
    r = _run([str(child_venv), "-m", "suite", "techniques"], env={"SUITE_STRICT_PLUGINS": "1"})
    assert r.returncode != 0
