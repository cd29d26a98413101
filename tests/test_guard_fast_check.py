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
