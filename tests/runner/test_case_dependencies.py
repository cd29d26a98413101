"""A case key covers the code and libraries a plugin's distribution brings beyond its plugin package.

Before 0.3.7 the key hashed the plugin package alone and numpy/scipy's versions: a helper package
the plugin's distribution ships beside it (``pip install -e`` of a project with two packages)
could change and the stored result was served; so could a networkx or simpy upgrade.
"""

from __future__ import annotations

import importlib.metadata as md
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import suite.registry as registry
from suite.runner import dependencies
from suite.runner.fingerprint import _library_versions, code_fingerprint, package_fingerprint

METADATA = """\
Metadata-Version: 2.1
Name: fake-plugin-dist
Version: 1.0
Requires-Dist: numpy>=1.20
Requires-Dist: networkx ; extra == "graphs"
Requires-Dist: pytest>=7 ; extra == "test"
Requires-Dist: Not_Installed_Lib_XYZ>=2

A plugin with a helper package.
"""


@pytest.fixture
def fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A distribution ``fake-plugin-dist`` installed in *tmp_path*: plugin package ``fakeplug_pkg``
    (its ``suite.plugins`` entry point) and helper package ``fakeplug_helpers``."""
    for pkg in ("fakeplug_pkg", "fakeplug_helpers"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("FACTOR = 1.0\n")
    info = tmp_path / "fake_plugin_dist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(METADATA)
    (info / "top_level.txt").write_text("fakeplug_pkg\nfakeplug_helpers\n")
    (info / "entry_points.txt").write_text("[suite.plugins]\nfake-plugin = fakeplug_pkg\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_DISCOVERED", None)  # scan the entry points with this one installed
    caches = (dependencies.requirement_versions, dependencies.plugin_distribution, dependencies.companion_packages)
    for f in caches:
        f.cache_clear()
    yield tmp_path
    for mod in ("fakeplug_pkg", "fakeplug_helpers"):
        sys.modules.pop(mod, None)
    for f in caches:  # the functions themselves (a test may have patched the module's names)
        f.cache_clear()


def test_an_edit_of_the_distributions_helper_package_changes_the_key(fake_dist):
    tech = SimpleNamespace(package="fakeplug_pkg")  # what code_fingerprint reads of a technique
    before = code_fingerprint(tech, refresh=True)
    helper = fake_dist / "fakeplug_helpers" / "__init__.py"
    helper.write_text("FACTOR = 3.0\n")
    changed = code_fingerprint(tech, refresh=True)
    assert changed != before  # the tryout's stale 90.62 ms: served under the same key before 0.3.7
    helper.write_text("FACTOR = 1.0\n")
    assert code_fingerprint(tech, refresh=True) == before
    assert dependencies.companion_packages("fakeplug_pkg") == ("fakeplug_helpers",)


def test_the_declared_runtime_libraries_are_in_the_key_and_test_extras_are_not(fake_dist):
    assert dependencies.requirement_versions("fake-plugin-dist") == (
        ("networkx", md.version("networkx")), ("not-installed-lib-xyz", "none"), ("numpy", md.version("numpy")))
    assert dependencies.plugin_distribution("fakeplug_pkg") == ("fake-plugin-dist", ("fakeplug_pkg",))


def test_the_suites_own_plugins_key_their_package_and_the_core_keys_their_libraries():
    from suite.context import Context

    tech = Context.build().technique("hyscale-gnn")
    assert code_fingerprint(tech) == package_fingerprint("suite_hyscale_gnn")
    libs = dict(p.split("=", 1) for p in _library_versions().split(";"))
    # hyscale-gnn draws its graphs with networkx, the simulations step with simpy: an upgrade of
    # either makes new keys for every case (before 0.3.7 only numpy and scipy did)
    assert libs["networkx"] == md.version("networkx") and libs["simpy"] == md.version("simpy")
    assert "pytest-benchmark" not in libs and "mypy" not in libs  # the test extra's tools are not


def test_a_technique_outside_any_distribution_keys_its_own_module(tmp_path, monkeypatch):
    (tmp_path / "loose_technique_mod.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    dependencies.plugin_distribution.cache_clear()
    tech = SimpleNamespace(package="loose_technique_mod")
    assert dependencies.plugin_distribution("loose_technique_mod") is None
    assert code_fingerprint(tech, refresh=True) == package_fingerprint("loose_technique_mod", refresh=True)
    sys.modules.pop("loose_technique_mod", None)


def test_an_execute_cases_key_holds_the_machine_and_a_model_cases_does_not(monkeypatch, shared_context):
    """An execute result is a timing of the machine that ran it (a tryout stored 123.4 us timed on an
    Intel VM under `--profile amd-epyc-7763`): a store shared between machines must not serve it
    on another one. A model result depends on the profile only."""
    from suite.runner import expand_entry

    def keys():
        out = {}
        for fid in ("execute", "model"):
            (c,) = expand_entry({"technique": "poseidon", "variants": ["ps"], "fidelities": [fid]},
                                context=shared_context).cases
            out[fid] = (c.key, dict(c.inputs))
        return out

    here = keys()
    assert here["execute"][1] == {"machine:this": dependencies.machine_fingerprint()}
    assert here["model"][1] == {}
    monkeypatch.setattr(dependencies, "machine_fingerprint", lambda: "0" * 16)  # another machine
    there = keys()
    assert there["execute"][0] != here["execute"][0] and there["model"][0] == here["model"][0]


def test_a_declared_librarys_version_is_in_the_plugins_key(fake_dist, monkeypatch):
    tech = SimpleNamespace(package="fakeplug_pkg")
    before = code_fingerprint(tech, refresh=True)
    real = dependencies.requirement_versions
    monkeypatch.setattr(dependencies, "requirement_versions",
                        lambda d: (("networkx", "0.1"),) + real(d)[1:] if d == "fake-plugin-dist" else real(d))
    assert code_fingerprint(tech, refresh=True) != before  # a networkx upgrade makes new keys


def test_a_plugin_shipping_nothing_else_keeps_its_packages_fingerprint_and_tests_are_no_companion(fake_dist):
    info = fake_dist / "fake_plugin_dist-1.0.dist-info"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin-dist\nVersion: 1.0\n")
    (info / "top_level.txt").write_text("fakeplug_pkg\ntests\n")  # a find_packages() wheel's tests
    for f in (dependencies.requirement_versions, dependencies.plugin_distribution, dependencies.companion_packages):
        f.cache_clear()
    tech = SimpleNamespace(package="fakeplug_pkg")
    assert dependencies.companion_packages("fakeplug_pkg") == ()
    # a process that sees this dist-info and one that does not key the same code alike
    assert code_fingerprint(tech, refresh=True) == package_fingerprint("fakeplug_pkg", refresh=True)


def test_without_the_suites_metadata_numpy_and_scipy_still_key_every_case(monkeypatch):
    import numpy
    import scipy

    monkeypatch.setattr(dependencies, "requirement_versions", lambda d: ())
    dependencies.host_library_versions.cache_clear()
    try:
        assert dependencies.host_library_versions() == f"numpy={numpy.__version__};scipy={scipy.__version__}"
    finally:
        dependencies.host_library_versions.cache_clear()


@pytest.mark.parametrize("name", ["scripts", "testing", "examples", "benchmarks", "docs", "doc"])
def test_a_helper_package_named_like_a_tool_folder_is_in_the_key(fake_dist, name):
    """A hostile-plugin tryout shipped ``packages=["suite_stale", "zz_kern", "scripts"]`` and its
    model read ``scripts.K2``: 0.3.7 left ``scripts`` (and ``testing``, ``examples``, ``benchmarks``,
    ``docs``, ``doc``) out of the key and served K2 = 1.0 after it became 8.0. Only ``tests`` and
    ``test`` stay out; the package is hashed without being imported (its code does not run)."""
    (fake_dist / name).mkdir()
    (fake_dist / name / "__init__.py").write_text("K2 = 1.0\n")
    (fake_dist / "fake_plugin_dist-1.0.dist-info" / "top_level.txt").write_text(f"fakeplug_pkg\n{name}\ntests\n")
    dependencies.companion_packages.cache_clear()
    tech = SimpleNamespace(package="fakeplug_pkg")
    try:
        assert dependencies.companion_packages("fakeplug_pkg") == (name,)
        before = code_fingerprint(tech, refresh=True)
        (fake_dist / name / "__init__.py").write_text("K2 = 8.0\n")
        assert code_fingerprint(tech, refresh=True) != before
        assert name not in sys.modules
    finally:
        sys.modules.pop(name, None)
