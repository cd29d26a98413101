"""The third-party example plugin, ``examples/suite-allreduce-demo``: exactly what the quickstart of
docs/plugin-authors.md produces (``suite plugin new allreduce-demo``), it passes the conformance
kit from its source tree, and (slow) it builds as a wheel with ``python -m build``, installs in a
fresh virtual environment, reproduces its claim there and passes its own tests there, the
generated wheel test included.

It lives outside ``plugins/`` and is never installed in this environment: only the slow test
installs it, in a throw-away venv.
"""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from suite.scaffold import scaffold_files

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "suite-allreduce-demo"


def test_the_example_is_what_the_quickstart_generates():
    """The quickstart runs `suite plugin new allreduce-demo`: the example is that output, file for
    file, so the scaffold and the example never drift apart."""
    files = scaffold_files("allreduce-demo")
    on_disk = {p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)}
    assert on_disk == set(files)
    def same(text):  # the minimum suite version follows the suite that generates it
        return re.sub(r'"dlsys-suite>=[0-9.]+"', '"dlsys-suite>=X.Y"', text)

    for rel, text in files.items():
        assert same((EXAMPLE / rel).read_text()) == same(text), f"{rel}: differs from `suite plugin new allreduce-demo`"


def test_the_scaffold_ships_what_the_issue_asks():
    files = scaffold_files("allreduce-demo")
    model = files["suite_allreduce_demo/model.py"]
    assert "collective_time(" in model and "group_of(" in model
    assert "outer_network" not in model and "alpha_beta" not in model  # no outer-level-only pricing
    pyproject = files["pyproject.toml"]
    # technique.toml ships in the wheel: without it an installed (not editable) plugin is quarantined
    assert '[tool.setuptools.package-data]\n# ' in pyproject
    assert 'suite_allreduce_demo = ["technique.toml", "profiles/*.toml"]' in pyproject
    # the current way to declare: plain data in technique.toml, claims and checks in Python
    assert "TECHNIQUE = declare_technique(__name__, claims=CLAIMS)" in files["suite_allreduce_demo/technique.py"]
    assert "Technique(" not in files["suite_allreduce_demo/technique.py"]
    assert 'name = "allreduce-demo"' in files["suite_allreduce_demo/technique.toml"]
    assert 'markers = ["slow:' in pyproject
    readme = files["README.md"]
    assert "suite_check" not in readme  # name only what the generated files use
    for cmd in re.findall(r"^(pytest[^#\n]*?)\s*(?:#|$)", readme, flags=re.M):
        assert cmd.strip() in ('pytest -m "not slow"', "pytest -m slow"), cmd
    assert "pytestmark = pytest.mark.slow" in files["tests/test_wheel.py"]


@pytest.fixture
def example_technique(monkeypatch):
    """The example plugin's technique, imported from its source; its modules leave ``sys.modules``
    after the test (a ``monkeypatch.delitem`` there was undone at teardown, so they stayed loaded)."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.setenv("SUITE_PROFILES", str(EXAMPLE / "suite_allreduce_demo" / "profiles"))
    try:
        from suite_allreduce_demo.technique import TECHNIQUE

        yield TECHNIQUE
    finally:
        for name in [m for m in sys.modules if m.startswith("suite_allreduce_demo")]:
            sys.modules.pop(name, None)


def test_the_example_passes_the_kit_from_its_source(example_technique):
    """Every check of the kit passes or skips with a reason; none warns (the quickstart's plugin
    is clean under 0.3's rules too)."""
    from suite.testing import run_checks

    rep = run_checks(example_technique, max_examples=3, timeout=120)
    assert not rep.failed and not rep.warned, rep.outcomes
    assert {"network-sensitivity", "oracle-agreement", "units", "family:alpha-beta-bound",
            "family:bytes-conserved", "claims-nulls", "meanings"} <= set(rep.passed), rep.outcomes


def test_the_example_says_what_each_of_its_metrics_means(example_technique):
    """A fresh `suite plugin new` plugin printed "metrics: no meanings declared" in `suite info`: the
    quickstart showed no `[metric_meanings]`. Every metric its smoke cases report has one, at its fidelity."""
    from suite.testing.resolve import smoke_cases

    for case in smoke_cases(example_technique):
        res = example_technique.evaluate(case.scenario)
        for name, m in res.metrics.items():
            declared = example_technique.meaning(name, case.fidelity)
            assert declared is not None and (declared.unit, declared.direction) == (m.unit, m.direction), name


def test_the_example_takes_a_category_runs_scale(example_technique):
    """A fresh `suite plugin new` plugin was left out of `suite run --category` ("declares no scale
    parameter"): its workers parameter is the scale, one GPU per worker."""
    from suite.runner.category import scale_value

    assert scale_value(example_technique, 256, 8) == ("workers", 256)  # 256 GPUs: 256 workers, whatever the node size


def _run(cmd, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SUITE_STRICT_PLUGINS", "SUITE_PROFILES")}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, **kw)


def _fresh_venv(where: Path) -> Path:
    """A venv that sees this environment's packages through a .pth file (nothing downloaded)."""
    r = _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(where)])
    assert r.returncode == 0, r.stderr
    py = where / "bin" / "python"
    child_site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    parents = dict.fromkeys([sysconfig.get_paths()["purelib"], *site.getsitepackages()])
    (child_site / "_parent_env.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in parents))
    return py


@pytest.mark.slow
def test_the_example_wheel_installs_and_works_in_a_fresh_venv(tmp_path):
    pytest.importorskip("build", reason="`build` is in the [test] extra")
    import shutil

    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist"))
    r = _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(src)])
    assert r.returncode == 0, r.stdout + r.stderr
    wheel = next((tmp_path / "dist").glob("suite_allreduce_demo-0.1.0-*.whl"))
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "suite_allreduce_demo/profiles/allreduce-demo-testbed.toml" in names
    assert "suite_allreduce_demo/technique.toml" in names

    venv = tmp_path / "venv"
    py = _fresh_venv(venv)
    r = _run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)])
    assert r.returncode == 0, r.stdout + r.stderr

    r = _run([str(py), "-m", "suite", "--strict-plugins", "plugins", "--format", "json"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    plugins = {p["plugin"]: p for p in json.loads(r.stdout)}
    assert plugins["allreduce-demo"]["status"] == "ok" and plugins["allreduce-demo"]["distribution"] == "suite-allreduce-demo"
    r = _run([str(py), "-m", "suite", "reproduce", "allreduce-demo", "--store", str(tmp_path / "s.sqlite"),
              "--format", "json"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ring-bandwidth-optimal" in r.stdout and "reproduced" in r.stdout

    # its own tests, against the installed copy (run from outside the source tree, so it is not
    # on the path), the slow wheel test included: the quickstart's last step
    r = _run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error::FutureWarning",
              str(src / "tests")], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " failed" not in r.stdout and re.search(r"\d+ passed", r.stdout), r.stdout


def test_the_example_refuses_a_workload_it_never_reads(example_technique):
    """hostile15 finding 2: a scaffolded plugin (its model reads no workload) stored `--workload
    resnet-50,gpt2` as two `ok` rows with the same figures; its technique.toml now says
    `takes_workload = false`, and the workload is refused before any case runs."""
    from plugin_context import plugin_context

    from suite.errors import ParameterError
    from suite.runner.case import Resolver
    from suite.technique import ScenarioSpec

    assert example_technique.takes_workload is False  # read from technique.toml
    spec = example_technique.smoke[0]
    with pytest.raises(ParameterError, match=r"^allreduce-demo: reads no workload .*got 'resnet-50'$"):
        Resolver(context=plugin_context(example_technique)).resolve(
            example_technique, ScenarioSpec(spec.variant, profile=spec.profile, workload="resnet-50"))
