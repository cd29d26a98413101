"""The per-case input guard's quick check (suite.frozen.Snapshot.unchanged: a kept profile's
snapshot compared in a few C loops) answers "unchanged" only when every object holds the very
same keys and values in the same order; anything else goes to the full check, which names the
field and puts it back. Each route a plugin could take is tried on a real profile."""
import pytest

from suite.frozen import FrozenDict, Snapshot, guard, restore_changed


@pytest.fixture()
def profile(shared_context):
    """A shipped profile as every context of the process holds it (each test writes to it by a
    route and checks that the guard puts it back)."""
    return shared_context.profile("perlmutter-cpu")


def _snap(profile):
    snap = guard(("profile", profile))
    assert isinstance(snap, Snapshot) and len(snap) > 2  # the quick check applies
    assert restore_changed(snap) is None and snap.unchanged()
    return snap


def test_a_write_by_each_route_is_named_and_put_back(profile):
    snap = _snap(profile)
    level = profile.network[0]
    bw = level.bandwidth
    object.__setattr__(level, "bandwidth", bw * 2)
    assert not snap.unchanged()
    assert restore_changed(snap) == "profile.network[0].bandwidth"
    assert level.bandwidth is bw and snap.unchanged()
    vars(profile.device)["memory_bandwidth"] = 1.0
    assert restore_changed(snap) == "profile.device.memory_bandwidth"
    dict.__setitem__(profile.device.peak_flops, "fp64", 1.0)
    assert restore_changed(snap) == "profile.device.peak_flops['fp64']"
    assert restore_changed(snap) is None  # each put back: the next case starts clean


def test_an_equal_copy_of_a_nested_object_is_a_change(profile):
    snap = _snap(profile)
    table = profile.device.peak_flops
    object.__setattr__(profile.device, "peak_flops", dict(table))  # equal, but a mutable copy
    assert restore_changed(snap) == "profile.device.peak_flops"
    assert profile.device.peak_flops is table


def test_an_equal_number_of_another_type_is_a_change_an_equal_rebuilt_one_is_not(profile):
    snap = _snap(profile)
    nodes = profile.nodes
    object.__setattr__(profile, "nodes", float(nodes))  # 4 -> 4.0: equal, not the same type
    assert restore_changed(snap) == "profile.nodes"
    rebuilt = int(str(nodes))  # an equal int, rebuilt (the same object only for a small cached int)
    object.__setattr__(profile, "nodes", rebuilt)
    assert snap.unchanged() is (rebuilt is nodes)  # not the same object: the full check looks ...
    assert restore_changed(snap) is None  # ... and finds no change (as before the quick check)


def test_a_reordered_or_grown_dict_goes_to_the_full_check(profile):
    snap = _snap(profile)
    d = vars(profile.device)
    items = list(d.items())
    d.clear()
    d.update(reversed(items))  # same keys and values, another order
    assert not snap.unchanged()
    assert restore_changed(snap) is None and list(vars(profile.device)) == [k for k, _ in reversed(items)]
    d["extra"] = 1
    assert restore_changed(snap) == "profile.device.extra"


def test_a_flat_parameter_table_is_snapshot_as_the_walk_would():
    params = FrozenDict({"nodes": 4, "dtype": "fp32", "servers": None, "efficiency": 0.85})
    snap = guard(("scenario.params", params))
    assert len(snap) == 1 and snap[0][0] is params and snap[0][1] == dict(params) and snap[0][4] == "scenario.params"
    dict.__setitem__(params, "nodes", 8)
    assert restore_changed(snap) == "scenario.params['nodes']" and params["nodes"] == 4
    assert guard(("scenario.params", params), limit=0) == []  # a limit of 0 keeps nothing, as the walk


def test_every_field_a_case_changed_is_named_first_found_first(profile):
    """A tryout's case wrote profile.nodes, network[0].bandwidth and a parameter: InputMutated named
    only the first. Every change is named (and put back)."""
    from suite.frozen import changed_fields

    snap = _snap(profile)
    nodes, bw = profile.nodes, profile.network[0].bandwidth
    object.__setattr__(profile, "nodes", 99)
    object.__setattr__(profile.network[0], "bandwidth", 1.0)
    assert restore_changed(snap) == "profile.nodes and profile.network[0].bandwidth"
    assert (profile.nodes, profile.network[0].bandwidth) == (nodes, bw) and snap.unchanged()
    assert changed_fields(["a"]) == "a" and changed_fields(["a", "b", "c"]) == "a, b and c"
    assert changed_fields(list("abcdef")) == "a, b, c, d and 2 more" and changed_fields([]) is None


def _writes_profile_and_params(scenario):
    from suite.technique import Result

    object.__setattr__(scenario.profile, "nodes", 99)
    dict.__setitem__(scenario.params, "x", 3)
    return Result().add("y", 1.0, "s", "lower")


@pytest.mark.parametrize("record", [True, False])
def test_a_case_that_writes_its_profile_and_its_parameters_names_both(shared_context, record):
    from suite.runner.case import resolve_case
    from suite.runner.evaluate import evaluate_outcome
    from suite.technique import Paper, Param, ScenarioSpec, Technique, Variant

    tech = Technique(name="writes-two", title="t", category="communication", paper=Paper("P"),
                     variants=[Variant("base", "b", baseline=True)], fidelities={"model": _writes_profile_and_params},
                     parameters={"x": Param(int, 1)}, needs_workload=False, profile_kinds=("cluster",))
    case = resolve_case(tech, ScenarioSpec(variant="base", profile="titanx-cluster-10gbe"), context=shared_context)
    nodes = case.scenario.profile.nodes
    out = evaluate_outcome(tech, case.scenario, case.key, record_reads=record)
    assert out["status"] == "failed"
    assert out["error"].startswith("InputMutated: writes-two: the case changed its input profile.nodes and "
                                   "scenario.params['x'] (inputs are read-only")
    assert case.scenario.profile.nodes == nodes and case.scenario.params["x"] == 1  # both put back
