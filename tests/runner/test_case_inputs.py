"""Every input of a case is in its key (issue 39, probes 1 and 2).

* probe 1: a change to the core's source (``suite/perf``) or to the numpy / scipy versions makes
  new cases; on 0.1.0 the key hashed the plugin's own files only, and a doubled ``roofline_time``
  was served from the store;
* probe 2: a profile a parameter names (``Param(..., ref="profile")``), a profile of
  ``Technique(uses=...)``, and a data file of the plugin (``suite.read_data``) are hashed by
  content: halving a referenced price or editing ``coefficients.json`` makes a new key, where
  0.1.0 kept the old one and served the old number.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

import suite.runner.fingerprint as case_mod  # the key's code fingerprints (suite.runner.case uses them)
from suite.context import Context
from suite.errors import ParameterError, TechniqueError
from suite.runner.case import Resolver, environment_fingerprint, package_fingerprint
from suite.technique import Paper, Param, Result, ScenarioSpec, Technique, Variant, read_data

CLUSTER = """\
nodes = 4

[profile]
name = "{name}"
kind = "cluster"
source = "test fixture"

[node]
device = "fake-gpu"
devices_per_node = 1

[[network]]
name = "eth"
topology = "switch"
size = 4
bandwidth = "{gbit} Gbit/s"
latency = "5 us"
"""


def _ref_model(scenario) -> Result:
    ref = scenario.input("other")  # the profile parameter 'other' names, resolved by the runner
    return Result().add("bw", ref.network[-1].bandwidth, "B/s", "higher")


REF_TECH = Technique(
    name="refs", title="reads a referenced profile", category="communication", paper=Paper(title="none"),
    variants=[Variant("base", "baseline", baseline=True)], fidelities={"model": _ref_model},
    parameters={"other": Param(str, default="ref-cluster", ref="profile")}, needs_profile=False,
    needs_workload=False,
)


def _context(tmp_path, fake_registry, sub: str, gbit: float) -> Context:
    d = tmp_path / sub
    d.mkdir()
    (d / "ref-cluster.toml").write_text(CLUSTER.format(name="ref-cluster", gbit=gbit))
    return Context.build(registry=fake_registry, profile_dirs=[d])


# ----------------------------------------------------------------------------- probe 2: referenced inputs


def test_referenced_profile_is_resolved_into_the_scenario_and_hashed(tmp_path, fake_registry):
    a = Resolver(context=_context(tmp_path, fake_registry, "a", 10)).resolve(REF_TECH, ScenarioSpec("base"))
    b = Resolver(context=_context(tmp_path, fake_registry, "b", 5)).resolve(REF_TECH, ScenarioSpec("base"))
    # 10 Gbit/s = 1.25e9 B/s, halved: what the model reads comes from the scenario, not a lookup
    assert REF_TECH.evaluate(a.scenario)["bw"] == pytest.approx(1.25e9)
    assert REF_TECH.evaluate(b.scenario)["bw"] == pytest.approx(0.625e9)
    assert a.key != b.key  # 0.1.0: the same key, so the stored 1.25e9 was served for both
    assert set(a.inputs) == {"other"} and a.inputs["other"] != b.inputs["other"]
    again = Resolver(context=_context(tmp_path, fake_registry, "c", 10)).resolve(REF_TECH, ScenarioSpec("base"))
    assert again.key == a.key  # by content: same figures, same key


def test_referenced_input_is_frozen_and_unknown_names_fail_naming_the_parameter(tmp_path, fake_registry):
    res = Resolver(context=_context(tmp_path, fake_registry, "a", 10))
    case = res.resolve(REF_TECH, ScenarioSpec("base"))
    with pytest.raises(Exception):
        case.scenario.inputs["other"] = None
    with pytest.raises(ParameterError, match="refs: parameter 'other'"):
        res.resolve(REF_TECH, ScenarioSpec("base", params={"other": "no-such-profile"}))


def _writer_model(scenario) -> Result:
    """Reads the profile parameter 'other' names; with ``write`` set, first writes its bandwidth down
    1000-fold past the freeze (``object.__setattr__``)."""
    level = scenario.input("other").network[-1]
    if scenario.params["write"]:
        object.__setattr__(level, "bandwidth", level.bandwidth / 1000)
    return Result().add("bw", level.bandwidth, "B/s", "higher")


WRITER = Technique(
    name="ref-writer", title="writes a referenced profile", category="communication", paper=Paper(title="none"),
    variants=[Variant("base", "baseline", baseline=True)], fidelities={"model": _writer_model},
    parameters={"other": Param(str, default="ref-cluster", ref="profile"), "write": Param(int, 0, minimum=0),
                "x": Param(int, 0, minimum=0)},
    needs_profile=False, needs_workload=False,
)


@pytest.mark.parametrize("isolate", [True, False], ids=["worker", "in-process"])
def test_a_case_that_writes_a_referenced_profile_fails_and_the_next_reads_it_as_loaded(tmp_path, isolate,
                                                                                       monkeypatch):
    """Hostile tryout 15: a write to a profile a parameter names went unseen (the guard held the
    case's own profile, workload and parameters only): stored ok, and the next case read 1.25 MB/s."""
    from plugin_context import plugin_context

    from suite.results import Store
    from suite.runner import ExecOptions, expand_entry, run_cases

    monkeypatch.setenv("SUITE_PROFILES", str(Path(__file__).resolve().parent / "profiles"))  # fake-gpu
    d = tmp_path / "profiles"
    d.mkdir()
    (d / "ref-cluster.toml").write_text(CLUSTER.format(name="ref-cluster", gbit=10))
    ctx = plugin_context(WRITER, profile_dirs=[d])
    cases = [c for w, x in ((0, 1), (1, 2), (0, 3)) for c in expand_entry(
        {"technique": "ref-writer", "params": {"write": [w], "x": [x]}}, context=ctx).cases]
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(isolate=isolate), context=ctx)
        rows = {c.params["x"]: st.case(c.key) for c in cases}
        bw = {x: st.result(c.key)["bw"] for c in cases if (x := c.params["x"]) != 2}
    assert bw == {1: 1.25e9, 3: 1.25e9}  # 10 Gbit/s = 1.25e9 B/s, as loaded, before and after the write
    assert rows[2]["status"] == "failed" and rows[2]["error"].startswith(
        "InputMutated: ref-writer: the case changed its input scenario.input('other')")


def test_a_bare_name_is_never_looked_up():
    from suite.technique import Scenario

    sc = Scenario("refs", "base", "model", params={"other": "ref-cluster"})
    with pytest.raises(ParameterError, match="resolved by the runner"):
        REF_TECH.evaluate(sc)


def test_uses_inputs_are_hashed(tmp_path, fake_registry):
    tech = Technique(
        name="uses", title="reads a fixed profile", category="communication", paper=Paper(title="none"),
        variants=[Variant("base", "baseline", baseline=True)],
        fidelities={"model": lambda sc: Result().add("bw", sc.input("profile:ref-cluster").network[-1].bandwidth,
                                                      "B/s")},
        needs_profile=False, needs_workload=False, uses=("profile:ref-cluster",))
    a = Resolver(context=_context(tmp_path, fake_registry, "a", 10)).resolve(tech, ScenarioSpec("base"))
    b = Resolver(context=_context(tmp_path, fake_registry, "b", 5)).resolve(tech, ScenarioSpec("base"))
    assert a.key != b.key and tech.evaluate(b.scenario)["bw"] == pytest.approx(0.625e9)
    with pytest.raises(TechniqueError, match="uses"):
        Technique(name="bad", title="t", category="communication", paper=Paper(title="none"),
                  variants=[Variant("b", "b", baseline=True)], fidelities={"model": _ref_model}, uses=("gpu",))


def test_param_ref_must_name_a_known_kind():
    with pytest.raises(TechniqueError, match="ref"):
        Param(str, ref="device")
    with pytest.raises(TechniqueError, match="type=str"):
        Param(float, ref="profile")


def test_file_parameter_is_hashed_by_content(tmp_path, fake_registry):
    tech = Technique(
        name="trace", title="reads a trace file", category="communication", paper=Paper(title="none"),
        variants=[Variant("base", "baseline", baseline=True)],
        fidelities={"model": lambda sc: Result().add("lines", len(sc.input("trace").splitlines()), "1")},
        parameters={"trace": Param(str, default=None, optional=True, ref="file")},
        needs_profile=False, needs_workload=False)
    f = tmp_path / "t.csv"
    f.write_text("a\nb\n")
    res = Resolver(context=Context.build(registry=fake_registry))
    a = res.resolve(tech, ScenarioSpec("base", params={"trace": str(f)}))
    f.write_text("a\nb\nc\n")
    b = Resolver(context=Context.build(registry=fake_registry)).resolve(tech, ScenarioSpec("base", params={"trace": str(f)}))
    assert a.key != b.key and tech.evaluate(b.scenario)["lines"] == 3


# ----------------------------------------------------------------------------- probe 2: data files


@pytest.fixture
def data_plugin(tmp_path, monkeypatch):
    """A plugin package ``i39_dataplug`` on sys.path with a data file, read through read_data."""
    pkg = tmp_path / "i39_dataplug"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        import json

        from suite import Result, read_data


        def evaluate(scenario):
            return Result().add("coef", json.loads(read_data(__name__, "coefficients.json"))["a"], "1")
    """))
    (pkg / "coefficients.json").write_text('{"a": 0.223}')
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    sys.modules.pop("i39_dataplug", None)
    case_mod._FINGERPRINTS.pop("i39_dataplug", None)


def test_editing_a_data_file_changes_the_key(data_plugin, fake_registry):
    import importlib

    mod = importlib.import_module("i39_dataplug")
    tech = Technique(name="dataplug", title="reads a data file", category="communication", paper=Paper(title="none"),
                     variants=[Variant("base", "baseline", baseline=True)], fidelities={"model": mod.evaluate},
                     needs_profile=False, needs_workload=False)
    ctx = Context.build(registry=fake_registry)
    a = Resolver(context=ctx).resolve(tech, ScenarioSpec("base"))
    assert tech.evaluate(a.scenario)["coef"] == 0.223
    (data_plugin / "coefficients.json").write_text('{"a": 0.328}')  # same size: the mtime tells
    b = Resolver(context=ctx).resolve(tech, ScenarioSpec("base"))
    assert b.key != a.key and b.code != a.code  # 0.1.0: the same key (only *.py hashed)
    assert tech.evaluate(b.scenario)["coef"] == 0.328


def test_read_data_refuses_a_file_outside_the_package(data_plugin):
    with pytest.raises(TechniqueError, match="inside the package"):
        read_data("i39_dataplug", "../elsewhere.json")
    with pytest.raises(TechniqueError, match="missing.json"):
        read_data("i39_dataplug.sub", "missing.json")


def test_theseus_coefficients_are_part_of_its_fingerprint():
    files, found = case_mod._package_files("suite_theseus")
    assert found and "coefficients.json" in {rel for rel, *_ in files}


# ----------------------------------------------------------------------------- probe 1: the core


def test_a_change_to_the_core_makes_new_keys(tmp_path, monkeypatch, fake_registry):
    """A one-line change in suite/perf (here: a file the core's fingerprint lists, edited between
    two sweeps of one process) changes every key; on 0.1.0 the key held only the plugin's files."""
    perf = tmp_path / "roofline.py"
    perf.write_text("def roofline_time(f, b): return max(f, b)\n")
    real = case_mod._package_files

    def files(top):
        out, found = real(top)
        if top == "suite":
            st = perf.stat()
            out = sorted(out + [("perf/roofline_probe.py", str(perf), st.st_size, st.st_mtime_ns)])
        return out, found

    monkeypatch.setattr(case_mod, "_package_files", files)
    tech = fake_registry.technique("fake")
    ctx = Context.build(registry=fake_registry)
    k0 = Resolver(context=ctx).resolve(tech, ScenarioSpec("fast")).key
    assert Resolver(context=ctx).resolve(tech, ScenarioSpec("fast")).key == k0  # nothing changed: same key
    perf.write_text("def roofline_time(f, b): return 2 * max(f, b)\n")
    k1 = Resolver(context=ctx).resolve(tech, ScenarioSpec("fast")).key
    assert k1 != k0


def test_a_new_core_key_recomputes_in_the_store(tmp_path, monkeypatch, fake_registry, store):
    from suite.runner import run_cases

    tech = fake_registry.technique("fake")
    ctx = Context.build(registry=fake_registry)
    first = run_cases([Resolver(context=ctx).resolve(tech, ScenarioSpec("fast"))], store, context=ctx)
    same = run_cases([Resolver(context=ctx).resolve(tech, ScenarioSpec("fast"))], store, context=ctx)
    assert (first.computed, same.cached) == (1, 1)
    monkeypatch.setattr(case_mod, "_library_versions", lambda: "numpy=999;scipy=999")  # a numpy upgrade
    after = run_cases([Resolver(context=ctx).resolve(tech, ScenarioSpec("fast"))], store, context=ctx)
    assert (after.computed, after.cached) == (1, 0)


def test_environment_fingerprint_names_numpy_and_scipy(monkeypatch):
    import numpy
    import scipy

    libs = case_mod._library_versions()
    assert f"numpy={numpy.__version__};" in libs and f"scipy={scipy.__version__};" in libs
    e0 = environment_fingerprint(refresh=True)
    monkeypatch.setattr(case_mod, "_library_versions", lambda: libs.replace(f"numpy={numpy.__version__};", "numpy=0.0;"))
    assert environment_fingerprint() != e0


def test_package_fingerprint_skips_byte_code_and_hashes_data_and_prose(tmp_path, monkeypatch):
    pkg = tmp_path / "i39_fp"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        f0 = package_fingerprint("i39_fp", refresh=True)
        (pkg / "__pycache__" / "x.pyc").write_bytes(b"junk")
        assert package_fingerprint("i39_fp", refresh=True) == f0
        (pkg / "table.csv").write_text("a,b\n")
        f1 = package_fingerprint("i39_fp", refresh=True)
        assert f1 != f0
        # a model may read a .md or .rst the package ships (read_data): 0.3.7 skipped them and
        # served results computed from the old contents
        (pkg / "README.md").write_text("prose")
        assert package_fingerprint("i39_fp", refresh=True) != f1
    finally:
        sys.modules.pop("i39_fp", None)
        case_mod._FINGERPRINTS.pop("i39_fp", None)
