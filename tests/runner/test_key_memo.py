"""The resolver writes each case key from texts it keeps per sweep (a technique's name and version,
each distinct parameter set, each profile hash): the keys stay those of :func:`case_key`, byte
for byte, and those dlsys-suite 0.3.1 wrote for the same identity (so stored cases stay valid)."""

from __future__ import annotations

import dataclasses

import pytest

from suite.context import Context
from suite.runner.case import Resolver, case_key
from suite.runner.experiment import stream_entry
from suite.technique import ScenarioSpec


@pytest.fixture
def fake(fake_registry):
    """(the fake technique, a resolver of a context of the fake plugins)."""
    ctx = Context.build()
    return ctx.technique("fake"), Resolver(context=ctx)


def _key_of_identity(case) -> str:
    i = case.identity()
    return case_key(i["technique"], i["technique_version"], i["variant"], i["profile_hash"], i["workload_hash"],
                    i["params"], i["seed"], i["fidelity"], i["code"], i["env"], i["inputs"])


def test_case_key_is_the_one_0_3_1_wrote():
    # computed by suite.runner.case.case_key at 6efac7e (0.3.1), which json.dumps-ed the whole list
    args = ("poseidon", "0.3.0", "ps", "abc", "def", {"nodes": 4, "bw": -0.0, "flag": True, "name": "é",
                                                     "sizes": [1, 2.5]}, 3, "model", "c0de", "e1", {"ref": "h1", "a": "h0"})
    assert case_key(*args) == "5ee410089fb026b1c061"
    assert case_key("t", "1", "v", None, None, {}, 0, "model") == "15cfe054658d83078b78"


def test_every_key_of_a_sweep_is_case_key_of_its_identity(fake_registry):
    ctx = Context.build()
    entry = {"technique": "fake", "variants": ["base", "fast"], "params": {"n": [1, 2, 2, 3], "x": [0.5, "0.5", 2]},
             "set": {"network.-1.bandwidth": ["10 Gbit/s", "20 Gbit/s", "10 Gbit/s"]}}
    cases = list(stream_entry(entry, resolver=Resolver(context=ctx)))
    assert len(cases) == 2 * 4 * 3 * 3
    for c in cases:
        assert c.key == _key_of_identity(c), c.describe()
    # equal inputs, one key: n=2 twice, x=0.5 and "0.5", the same bandwidth twice
    assert len({c.key for c in cases}) == 2 * 3 * 2 * 2


def test_values_equal_in_python_but_not_in_the_key_are_not_confused(fake):
    tech, res = fake
    zero = res.resolve(tech, ScenarioSpec("fast", params={"x": 0.0}))
    minus = res.resolve(tech, ScenarioSpec("fast", params={"x": -0.0}))  # == 0.0 and same hash, JSON "-0.0"
    assert minus.params["x"] == 0.0 and str(minus.params["x"]) == "-0.0"
    assert minus.key != zero.key and minus.key == _key_of_identity(minus)
    one = res.resolve(tech, ScenarioSpec("fast", params={"n": 2, "delay": "1 ms"}))
    same = res.resolve(tech, ScenarioSpec("fast", params={"n": 2.0, "delay": 0.001}))
    assert one.key == same.key == _key_of_identity(one)


def test_each_case_owns_its_params(fake):
    tech, res = fake
    a = res.resolve(tech, ScenarioSpec("fast", params={"n": 3}))
    b = res.resolve(tech, ScenarioSpec("fast", params={"n": 3}))
    a.params["n"] = 99  # an in-process evaluation that writes into its params changes no other case
    assert b.params["n"] == 3 and res.resolve(tech, ScenarioSpec("fast", params={"n": 3})).params["n"] == 3


def test_a_resolved_case_is_the_case_its_fields_make(fake_registry):
    from suite.runner.case import Case

    ctx = Context.build()
    res = Resolver(context=ctx)
    case = res.resolve(ctx.technique("fake"), ScenarioSpec("fast", params={"n": 2},
                                                            overrides={"network.-1.bandwidth": "20 Gbit/s"}))
    again = Case(**{f.name: getattr(case, f.name) for f in dataclasses.fields(Case)})
    assert again == case and vars(again) == vars(case)  # every field set, the scenario in its slot
    assert case.scenario is again.scenario and case.scenario.params == {**case.params}
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.key = "x"  # type: ignore[misc]


def test_scenarios_of_one_parameter_set_share_their_read_only_params(fake):
    from suite.frozen import ImmutableError

    tech, res = fake
    a = res.resolve(tech, ScenarioSpec("fast", params={"n": 3}))
    b = res.resolve(tech, ScenarioSpec("base", params={"n": 3}))
    assert a.scenario.params is b.scenario.params  # frozen once for the set, not once per case
    assert dict(a.scenario.params) == a.params == b.params
    with pytest.raises(ImmutableError, match=r"scenario.params\['n'\]"):
        a.scenario.params["n"] = 1  # type: ignore[index]


@pytest.mark.parametrize("name", ["theseus", "cerebras-stencil", "comet", "node-aware-grids"])
def test_keys_with_referenced_inputs_are_case_key_of_their_identity(name):
    """The key's inputs branch (a ``Param(..., ref=...)`` or ``Technique(uses=...)``): the resolver's key
    of every smoke and claim case of the installed techniques that declare inputs is case_key of its
    identity, inputs (name -> content hash) included."""
    from session_context import session_context
    from suite.runner.experiment import expand_entry

    ctx = session_context()  # the installed plugins' context, only read here: built once per session
    tech = ctx.technique(name)
    assert tech.uses or any(p.ref for p in tech.parameters.values())
    cases = [c for e in ({"technique": name, "smoke": True}, {"technique": name, "claims": True})
             for c in expand_entry(e, context=ctx).cases]
    with_inputs = [c for c in cases if c.inputs]
    assert with_inputs, f"{name}: no case with inputs"
    for c in cases:
        assert c.key == _key_of_identity(c), c.describe()


def test_the_resolvers_memos_keep_the_newest_entries_up_to_their_bound(monkeypatch, shared_context):
    """A sweep of more distinct parameter sets than PROFILE_CACHE keeps memory bounded by dropping
    the oldest memo (0.3.7: in O(1); a dict's first entry after many deletions cost ~1 us to find)."""
    import suite.runner.case as case_mod
    from suite.technique import ScenarioSpec

    monkeypatch.setattr(case_mod, "PROFILE_CACHE", 3)
    r = case_mod.Resolver(context=shared_context)
    tech = shared_context.technique("poseidon")
    keys = [r.resolve(tech, ScenarioSpec(variant="ps", params={"nodes": n})).key for n in (1, 2, 4, 8, 16)]
    assert len(set(keys)) == 5
    assert [memo[1][0][2] for memo in r._params] == [4, 8, 16]  # the three newest ("nodes" values)
    # an evicted set resolves again to the same key
    assert r.resolve(tech, ScenarioSpec(variant="ps", params={"nodes": 1})).key == keys[0]
