"""Every case records the profile fields it read, in the profile's own objects (issue 39, "reads
recorded per case, not probed"): no view object stands between a plugin and its profile, so a
recorded case keeps every isolation guarantee of an unrecorded one (issue 39, item 7), and the
paths recorded are the ones the read-recording view (suite.hardware.tracking.tracked, an
independent mechanism: a proxy around the profile) records for the same evaluation.

The technique ``reader`` returns ``y = x * bandwidth_gbit`` (10 Gbit/s on fake-cluster-a) after
reading or attacking its profile as its ``how`` parameter says.
"""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest

from suite.context import Context
from suite.hardware.profile import Profile
from suite.hardware.schema import Device, NetworkLevel
from suite.hardware.recording import recording
from suite.hardware.tracking import tracked
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.technique import Paper, Param, Result, Technique, Variant

from plugin_context import plugin_context

HERE = Path(__file__).resolve().parent
HOWS = ("bw", "peak", "dump", "copy", "pickle", "eq", "vars_write", "setattr_write", "attr_write", "table_write",
        "field_added")


def _evaluate(scenario) -> Result:
    p, how, x = scenario.profile, scenario.params["how"], scenario.params["x"]
    bw = p.network[-1].bandwidth
    if how == "peak":
        assert p.device.peak_flops["fp32"] > 0
    elif how == "dump":
        assert p.model_dump()["network"][0]["bandwidth"] == bw
    elif how == "copy":
        c = copy.deepcopy(p)
        assert type(c) is Profile and type(c.network[0]) is NetworkLevel and c.network[0].bandwidth == bw
    elif how == "pickle":
        assert pickle.loads(pickle.dumps(p)).network[0].bandwidth == bw
    elif how == "eq":
        assert p.network[0] == p.network[0].model_copy()
    elif how == "vars_write":
        vars(p.network[-1])["bandwidth"] = 1.0
    elif how == "setattr_write":
        object.__setattr__(p.node, "devices_per_node", 99)
    elif how == "attr_write":
        p.device.memory = 1.0
    elif how == "table_write":  # a profile table, written past FrozenDict's refusal
        dict.__setitem__(p.device.peak_flops, "fp32", 1.0)
    elif how == "field_added":
        object.__setattr__(p.device, "extra", 1.0)
    return Result().add("y", x * bw * 8 / 1e9, "s", "lower")


READER = Technique(
    name="reader", title="reads or attacks its profile", category="communication", paper=Paper(title="R", year=2026),
    variants=[Variant("base", "the only variant", baseline=True)], fidelities={"model": _evaluate},
    parameters={"x": Param(int, 1, minimum=0), "how": Param(str, "bw", choices=HOWS)},
    needs_workload=False, default_profile="fake-cluster-a", profile_kinds=("cluster",),
)


@pytest.fixture
def ctx(monkeypatch):
    monkeypatch.setenv("SUITE_PROFILES", str(HERE / "profiles"))
    return plugin_context(READER)


def _cases(ctx, hows):
    """Each *how* between healthy cases (x = 1, 2 before, 3, 4 after): a leak shows in a later case."""
    cases = expand_entry({"technique": "reader", "params": {"x": [1, 2], "how": ["bw"]}}, context=ctx).cases
    for i, how in enumerate(hows):
        cases += expand_entry({"technique": "reader", "params": {"x": [100 + i], "how": [how]}}, context=ctx).cases
    return cases + expand_entry({"technique": "reader", "params": {"x": [3, 4], "how": ["bw"]}}, context=ctx).cases


@pytest.mark.parametrize("isolate", [True, False], ids=["worker", "in-process"])
def test_every_case_stores_the_fields_it_read_and_keeps_its_isolation(ctx, tmp_path, isolate):
    from suite.results import Store

    cases = _cases(ctx, HOWS)
    profile = cases[0].scenario.profile
    before = {id(o): (type(o), list(vars(o).items())) for o in (profile, profile.device, profile.node, profile.network[0])}
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(cases, st, options=ExecOptions(isolate=isolate), context=ctx)
        rows = st.conn.execute("SELECT c.params, r.status, r.error, f.fields FROM results r "
                               "JOIN cases c ON c.key = r.case_key LEFT JOIN field_sets f ON f.id = r.fields_id "
                               "WHERE r.run_id = ?", (s.run_id,)).fetchall()
        own = st.run_fields_read(s.run_id)
    got = {json.loads(p)["how"] if json.loads(p)["x"] >= 100 else f"ok{json.loads(p)['x']}":
           (status, error, json.loads(f) if f else None) for p, status, error, f in rows}
    assert len(got) == len(HOWS) + 4
    for k in ("ok1", "ok2", "ok3", "ok4", "bw"):
        assert got[k] == ("ok", None, ["network.0.bandwidth"]), k
    assert got["peak"][2] == ["device.peak_flops.fp32", "network.0.bandwidth"]
    for how in ("dump", "copy", "pickle"):  # the whole profile was read: "*" covers every field
        assert got[how][0] == "ok" and "*" in got[how][2], (how, got[how])
    assert got["eq"][0] == "ok" and "network.0" in got["eq"][2]  # the whole level (== compares every field)
    assert got["vars_write"][:2] == ("failed", "InputMutated: reader: the case changed its input "
                                     "profile.network[0].bandwidth (inputs are read-only; copy them to change them); "
                                     "put back for the next case")
    assert got["setattr_write"][1].startswith("InputMutated: reader: the case changed its input "
                                              "profile.node.devices_per_node")
    assert got["attr_write"][:2] == ("failed", "ImmutableError: Device.memory is read-only: profiles are immutable "
                                     "(derive one with profile.with_overrides({...}) or model_copy(update=...))")
    # a write to a table, or a field added, fails the case like a write to a field (the check of a
    # recorded case's profile is the recording's own when the case wrote nothing: Recording.stop_checked)
    assert got["table_write"][1].startswith("InputMutated: reader: the case changed its input "
                                            "profile.device.peak_flops['fp32']")
    assert got["field_added"][1].startswith("InputMutated: reader: the case changed its input profile.device.extra")
    assert own == {("reader", cases[0].code or ""): set().union(*(f for _s, _e, f in got.values() if f))}
    assert s.ok == len(cases) - 5
    after = {id(o): (type(o), list(vars(o).items())) for o in (profile, profile.device, profile.node, profile.network[0])}
    assert after == before  # the coordinator's profile: its classes, fields and field order


def test_recorded_reads_are_the_views_and_the_profile_is_given_back_whole():
    """For built-in techniques, recording in place records what the view records (or more: an
    object reachable by two paths is recorded at both, a whole-object read as its path), gives
    the same numbers, and leaves every object of the profile with its own class and fields."""
    import dataclasses

    from suite import ScenarioSpec
    from suite.runner.case import Resolver

    ctx = Context.build()
    res = Resolver(context=ctx)
    for name in ("poseidon", "node-aware-grids", "virtualflow", "cocod-sgd", "mg-wfbp"):
        tech = ctx.technique(name)
        case = res.resolve(tech, ScenarioSpec(tech.variant_names[0], fidelity="model"))
        # a copy no earlier evaluation has seen: a plugin memo keyed by object identity (e.g.
        # virtualflow's vn_time, keyed by id(device)) answers a later evaluation of the same
        # objects without reading them, so after another test evaluated this profile the
        # in-place recording saw fewer reads than the view (a fresh object each time)
        prof = case.scenario.profile.model_copy(deep=True)
        scenario = dataclasses.replace(case.scenario, profile=prof)
        view, seen = tracked(prof)
        a = tech.evaluate(dataclasses.replace(case.scenario, profile=view))
        with recording(prof) as rec:
            b = tech.evaluate(scenario)
        assert {k: m.value for k, m in a.metrics.items()} == {k: m.value for k, m in b.metrics.items()}, name
        assert rec.stop() == set(seen), name
        assert type(prof) is Profile and type(prof.device) is Device and type(prof.network[0]) is NetworkLevel
        assert prof == prof.model_copy() and pickle.loads(pickle.dumps(prof)) == prof


def test_a_recorded_profile_answers_every_whole_object_route_like_the_profile():
    ctx = Context.build()
    prof = ctx.profile("dgx-a100")
    dump, order = prof.model_dump(), list(vars(prof.device))
    with recording(prof) as rec:
        assert prof.device.memory_bandwidth > 0  # one field faulted in, the rest still hidden
        assert prof.model_dump() == dump and vars(prof.device) == vars(ctx.profile("dgx-a100").device)
        assert type(copy.copy(prof.device)) is Device and type(copy.deepcopy(prof)) is Profile
        assert pickle.loads(pickle.dumps(prof)) == prof and prof.device == prof.device.model_copy()
        assert dict(prof.device.peak_flops) == dict(ctx.profile("dgx-a100").device.peak_flops)
    reads = rec.stop()
    assert {"*", "device.memory_bandwidth", "device", "device.peak_flops"} <= reads
    assert list(vars(prof.device)) == order and prof.model_dump() == dump
    with recording(prof) as rec:
        with pytest.raises(ZeroDivisionError):
            _ = prof.device.memory_bandwidth / 0
    assert rec.stop() == {"device.memory_bandwidth"} and prof.model_dump() == dump  # given back after a raise


def test_a_write_to_a_read_only_input_array_names_the_input():
    """The hostile-plugin trial's finding: numpy's refusal said only "assignment destination is
    read-only"; the stored error now names the input and says inputs are read-only."""
    import numpy as np

    from suite.frozen import freeze
    from suite.runner.evaluate import evaluate_outcome
    from suite.technique import Scenario

    def write(scenario):
        w = scenario.params["w"]
        w[0] = 5.0
        return Result().add("y", 1.0, "s", "lower")

    def unlock(scenario):
        view = scenario.params["w"][1:]  # a view of the input: named by its base
        view.flags.writeable = True
        return Result().add("y", 1.0, "s", "lower")

    for fn, msg in ((write, "ValueError: assignment destination is read-only (input params['w'] is read-only"),
                    (unlock, "ValueError: cannot set WRITEABLE flag to True of this array (input params['w'] is")):
        tech = Technique(name="writer", title="t", category="communication", paper=Paper(title="W", year=2026),
                         variants=[Variant("base", "b", baseline=True)], fidelities={"model": fn},
                         parameters={}, needs_workload=False, needs_profile=False)
        sc = Scenario(technique="writer", variant="base", fidelity="model", params=freeze({"w": np.ones(3)}, "params"))
        out = evaluate_outcome(tech, sc, "k")
        assert out["status"] == "failed" and out["error"].startswith(msg), out["error"]


def test_a_kept_parameter_snapshot_puts_a_shared_table_back_for_the_next_case(ctx):
    """The loop keeps one snapshot per parameter table (a sweep's cases share their tables): a case
    that writes its table fails, naming the field, and the next case sharing the table reads it
    as it was (y = 2 * 10 Gbit/s * 8e-9, not 7 * ...)."""
    from suite.runner.evaluate import InputSnapshots, evaluate_outcome

    calls = []

    def writes_once(scenario) -> Result:
        if not calls:
            dict.__setitem__(scenario.params, "x", 7)
        calls.append(scenario.params["x"])
        return Result().add("y", scenario.params["x"] * scenario.profile.network[-1].bandwidth * 8 / 1e9, "s", "lower")

    tech = Technique(name="reader", title="writes its parameters once", category="communication",
                     paper=Paper(title="R", year=2026), variants=[Variant("base", "the only variant", baseline=True)],
                     fidelities={"model": writes_once}, parameters=READER.parameters, needs_workload=False,
                     default_profile="fake-cluster-a", profile_kinds=("cluster",))
    (case,) = expand_entry({"technique": "reader", "params": {"x": [2]}}, context=ctx).cases
    snaps = InputSnapshots()
    first = evaluate_outcome(tech, case.scenario, case.key, record_reads=True, snapshots=snaps)
    kept = snaps._snaps[id(case.scenario.params)][1]  # the first case left its table's snapshot
    second = evaluate_outcome(tech, case.scenario, case.key, record_reads=True, snapshots=snaps)
    assert snaps._snaps[id(case.scenario.params)][1] is kept  # and the second used it
    assert first["status"] == "failed" and first["error"].startswith(
        "InputMutated: reader: the case changed its input scenario.params['x']")
    assert calls == [7, 2] and second["status"] == "ok"
    assert second["metrics"] == [["y", 2 * 10e9 / 8 * 8 / 1e9, "s", "lower"]]
