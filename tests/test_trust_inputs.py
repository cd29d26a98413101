"""Issue 16, inputs: frozen all the way down, bad files and values named in one line, case keys
that follow the SI value of an override and the plugin's code.

Each test names the defect of issue 16 it pins; each failed on the code before the trust work
(commit d821f04) and passes now.
"""

from __future__ import annotations

import copy
import functools
import importlib
import pickle
import sys
import textwrap

import numpy as np
import pytest

from suite import Paper, Result, ScenarioSpec, Technique, Variant
from suite.frozen import FrozenDict, ImmutableError, freeze
from suite.technique import Param, Scenario


@pytest.fixture
def cli(suite_cli):
    """``cli(*args)``: ``suite ARGS`` on the session's one context (no plugin loading tested here)."""
    return functools.partial(suite_cli, catch_exceptions=False)


# --------------------------------------------------------------------------- immutable inputs


def test_freeze_reaches_every_level_and_names_the_field():
    data = freeze({"peak_flops": {"fp32": 6.1e12}, "levels": [{"size": 16}], "w": np.ones(3)}, "profile 'p'")
    with pytest.raises(ImmutableError, match=r"profile 'p'\['peak_flops'\]\['fp32'\] is read-only"):
        data["peak_flops"]["fp32"] = 1.0
    with pytest.raises(ImmutableError, match=r"profile 'p'\['levels'\]\[0\]\['size'\] is read-only"):
        data["levels"][0]["size"] = 1
    for write in (lambda: data.update(x=1), lambda: data.pop("w"), lambda: data.setdefault("x", 1),
                  lambda: data.clear(), lambda: data.popitem()):
        with pytest.raises(ImmutableError):
            write()
    assert isinstance(data["levels"], tuple)
    with pytest.raises(ValueError, match="read-only"):
        data["w"][0] = 5.0
    assert data["peak_flops"]["fp32"] == 6.1e12 and data["levels"][0]["size"] == 16


def test_frozen_mapping_stays_frozen_through_pickle_and_copy():
    """Workers receive scenarios by pickle (forked pool, dask): still read-only on the other side."""
    d = freeze({"a": {"b": 1}}, "scenario.params")
    for twin in (pickle.loads(pickle.dumps(d)), copy.deepcopy(d), copy.copy(d)):
        assert twin == {"a": {"b": 1}} and isinstance(twin, FrozenDict)
        with pytest.raises(ImmutableError, match=r"scenario.params\['a'\] is read-only"):
            twin["a"] = 2
    assert dict(d) == {"a": {"b": 1}}  # a copy is the way to change it
    mine = dict(d)
    mine["a"] = 2
    assert mine == {"a": 2} and d["a"] == {"b": 1}


def test_scenario_params_and_shared_profile_are_read_only(shared_context):
    prof = shared_context.profile("titanx-cluster-10gbe")
    scen = Scenario(technique="t", variant="v", fidelity="model", profile=prof, params={"nodes": 16})
    with pytest.raises(ImmutableError, match=r"scenario.params\['nodes'\]"):
        scen.params["nodes"] = 1
    with pytest.raises(ImmutableError, match=r"peak_flops\['fp32'\]"):
        scen.profile.device.peak_flops["fp32"] = 1.0
    with pytest.raises(Exception):  # a frozen model: attribute writes refused by pydantic
        scen.profile.device.memory = 1.0
    assert scen.params["nodes"] == 16


# --------------------------------------------------------------------------- profile folders


def _profile_folder(tmp_path, name="profiles"):
    d = tmp_path / name
    d.mkdir()
    (d / "bad-utf8.toml").write_bytes(b"\xff\xfe\x00[profile]\n")
    (d / "empty.toml").write_text("")
    (d / "broken.toml").write_text('[profile\nname = "x"\n')
    (d / "good.toml").write_text('[profile]\nname = "trust-good-gpu"\nkind = "device"\nsource = "test"\n'
                                 '[device]\ntype = "gpu"\nname = "g"\nmemory = "16 GiB"\nmemory_bandwidth = "900 GB/s"\n'
                                 'peak_flops = { fp32 = "10 TFLOP/s" }\n')
    return d


BAD_FILES = {  # file -> the one line that names it
    "bad-utf8.toml": "expected a UTF-8 text file, got undecodable bytes at offset 0",
    "empty.toml": "field profile: expected a [profile] table with name and kind, got nothing (required table missing)",
    "broken.toml": "line 1, column 9: expected valid TOML, got expected ']' at the end of a table declaration",
}


def test_broken_profile_files_are_named_and_skipped_by_list_and_run(tmp_path, cli):
    d = _profile_folder(tmp_path)
    r = cli("hardware", "list", "--profiles", str(d), "--kind", "device", "--format", "json")
    assert r.exit_code == 0, r.output
    import json

    assert "trust-good-gpu" in {p["name"] for p in json.loads(r.stdout)}
    for name, line in BAD_FILES.items():
        assert f"warning: {d / name}: {line}; skipped" in r.stderr.splitlines()
    d = _profile_folder(tmp_path, "for-run")  # a fresh folder: loaded (and warned about) again
    r = cli("run", "--technique", "poseidon", "--variant", "poseidon", "--param", "nodes=2", "--profiles", str(d),
            "--dry-run", "--format", "json")
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.stdout)) == 1
    for name, line in BAD_FILES.items():
        assert f"warning: {d / name}: {line}; skipped" in r.stderr.splitlines()


def test_broken_profile_files_are_errors_in_hardware_validate(tmp_path, cli):
    d = _profile_folder(tmp_path)
    r = cli("hardware", "validate", str(d))
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    for name, line in BAD_FILES.items():
        assert f"error: {d / name}: {line}" in lines
    assert not any("Traceback" in x or "UnicodeDecodeError" in x for x in lines)


def test_cluster_whose_sizes_disagree_is_an_error_naming_both_fields(tmp_path, cli):
    f = tmp_path / "mismatch.toml"
    f.write_text('nodes = 16\n[profile]\nname = "trust-mismatch"\nkind = "cluster"\n[node]\n'
                 'device = "nvidia-a100-sxm4-80gb"\ndevices_per_node = 1\n[[network]]\nname = "eth"\n'
                 'topology = "switch"\nsize = 8\nbandwidth = "10 Gbit/s"\n')
    line = (f"{f}: field network.0.size: expected the node count (field nodes = 16) for the outermost level of "
            f"a cluster, got 8")
    r = cli("hardware", "validate", str(f))
    assert r.exit_code == 2 and f"error: {line}" in r.output.splitlines()
    r = cli("run", "--technique", "poseidon", "--variant", "poseidon", "--profiles", str(tmp_path),
            "--profile", "trust-mismatch", "--dry-run")
    assert r.exit_code == 2  # an error, not a warning and a run
    assert r.output.strip().splitlines()[-1] == (
        f"error: command line: poseidon (variant=poseidon, profile=trust-mismatch): {line}")


# --------------------------------------------------------------------------- parameter values


@pytest.mark.parametrize("param", ["nodes", "batch_per_node"])
def test_huge_integer_parameter_is_refused_with_one_line(param, cli):
    r = cli("run", "--technique", "poseidon", "--variant", "poseidon", "--param", f"{param}=1e308", "--dry-run")
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        f"error: command line: poseidon (variant=poseidon): poseidon: parameter {param!r}: expected int, "
        f"got '1e308'"]


@pytest.mark.parametrize("value", [1e308, "1e308", 2**60, "9" * 30, float("inf"), "nan"])
def test_int_param_rejects_values_no_float_holds_exactly(value):
    from suite.errors import ParameterError

    with pytest.raises(ParameterError, match="parameter 'nodes'") as err:
        Param(int, 1, minimum=1).validate("nodes", value)
    assert "\n" not in str(err.value)


def test_int_param_accepts_integral_spellings():
    p = Param(int, 1, minimum=1)
    assert [p.validate("n", v) for v in ("16", "1e3", 1e3, "1_000", 2**53)] == [16, 1000, 1000, 1000, 2**53]


def test_unit_parameter_accepts_a_quantity():
    p = Param(float, 0.0, unit="B")
    assert p.validate("message_bytes", "64 MiB") == 64 * 2**20
    assert p.validate("message_bytes", "1 kB") == 1000.0
    from suite.errors import ParameterError

    with pytest.raises(ParameterError, match=r"parameter 'message_bytes': expected a number or a quantity "
                                             r"convertible to B, got '3 s'"):
        p.validate("message_bytes", "3 s")


# --------------------------------------------------------------------------- case keys


def test_one_bandwidth_in_two_spellings_is_one_case(cli):
    """10 Gbit/s == 1.25 GB/s (1.25e9 B/s): one case, computed once."""
    r = cli("run", "--technique", "poseidon", "--variant", "poseidon", "--param", "nodes=16",
            "--set", "network.-1.bandwidth=1.25 GB/s,10 Gbit/s,10 GB/s", "--dry-run", "--format", "json")
    assert r.exit_code == 0, r.output
    import json

    rows = json.loads(r.stdout)  # the dry run lists what the run would store: the two spellings are one case
    assert len(rows) == 2 and "1.25 GB/s" in rows[0]["overrides"]["network.-1.bandwidth"]
    assert rows[1]["overrides"]["network.-1.bandwidth"] == "10 GB/s"


SOURCE = '''
from suite import Paper, Result, Technique, Variant


def evaluate(scenario):
    return Result().add("y", {y}, "s", "lower")


TECHNIQUE = Technique(name="trust-fingerprint", title="t", category="communication",
                      paper=Paper("P", year=2024, venue="tests"), variants=[Variant("b", "b", baseline=True)],
                      fidelities={{"model": evaluate}}, needs_profile=False, needs_workload=False, version="1.0")
'''


def test_code_change_without_version_bump_makes_a_new_case_key(tmp_path, monkeypatch):
    import suite.runner.fingerprint as case_mod  # where the code fingerprints are cached
    from session_context import session_context
    from suite.runner.case import resolve_case

    pkg = tmp_path / "trust_fp_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(SOURCE.format(y=1.0)))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(case_mod, "_FINGERPRINTS", {})
    try:
        mod = importlib.import_module("trust_fp_pkg")
        first = resolve_case(mod.TECHNIQUE, ScenarioSpec("b"), context=session_context())
        (pkg / "__init__.py").write_text(textwrap.dedent(SOURCE.format(y=2.0)))  # same name, same version
        monkeypatch.setattr(case_mod, "_FINGERPRINTS", {})  # a new process: nothing cached
        mod = importlib.reload(mod)
        second = resolve_case(mod.TECHNIQUE, ScenarioSpec("b"), context=session_context())
        assert second.technique_version == first.technique_version == "1.0"
        assert second.code != first.code and second.key != first.key
        (pkg / "__init__.py").write_text(textwrap.dedent(SOURCE.format(y=1.0)))  # back to the first source
        monkeypatch.setattr(case_mod, "_FINGERPRINTS", {})
        mod = importlib.reload(mod)
        assert resolve_case(mod.TECHNIQUE, ScenarioSpec("b"), context=session_context()).key == first.key
    finally:
        sys.modules.pop("trust_fp_pkg", None)


def test_scaffold_writes_a_technique_version(tmp_path):
    """The generated technique declares its version (part of every case key), to be bumped."""
    from suite.scaffold import scaffold_plugin

    root = scaffold_plugin("trust-demo", tmp_path)
    text = (root / "suite_trust_demo" / "technique.toml").read_text()
    assert 'version = "0.1.0"' in text.splitlines()


def test_writing_a_profile_field_is_an_immutable_error_naming_it():
    """A write to any profile table raises the suite's ImmutableError naming the field (pydantic's
    frozen-instance error was a ValidationError naming none)."""
    from session_context import session_context

    p = session_context().profile("titanx-cluster-10gbe")
    with pytest.raises(ImmutableError, match=r"NetworkLevel\.bandwidth is read-only"):
        p.outer_network.bandwidth = 1.0
    with pytest.raises(ImmutableError, match=r"profile 'titanx-cluster-10gbe': field nodes is read-only"):
        p.nodes = 3
    with pytest.raises(ImmutableError, match=r"Device\.memory is read-only"):
        p.device.memory = 1.0
    assert p.with_overrides({"nodes": 2}).nodes == 2  # the way to change a figure still works
