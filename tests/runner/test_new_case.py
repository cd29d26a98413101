"""The resolver builds each Case without the frozen dataclass's __init__ (suite.runner.case._new_case):
what it builds must be what ``Case(**values)`` builds, and a __post_init__ (which it would skip) must
not appear on Case unnoticed."""

from __future__ import annotations

from dataclasses import fields

from suite.runner import expand_entry
from suite.runner.case import Case, _new_case


def test_new_case_builds_what_the_dataclass_builds(shared_context):
    assert not hasattr(Case, "__post_init__")  # _new_case would skip it: build cases with Case(**values) then
    case = expand_entry({"technique": "poseidon", "params": {"nodes": [2, 8]}}, context=shared_context).cases[1]
    values = {f.name: getattr(case, f.name) for f in fields(Case)}
    built, fast = Case(**values), _new_case(dict(values))
    assert vars(fast) == vars(built) and fast == built and fast.key == case.key and fast.scenario is case.scenario


def test_new_scenario_builds_what_the_dataclass_builds_and_freezes_the_same(shared_context):
    """The resolver's scenarios (suite.declaration.results.new_scenario): equal to Scenario(**values),
    params and inputs read-only copies, a missing field a TypeError as the dataclass gives."""
    import pytest

    from suite.declaration.results import Scenario, ScenarioSpec, built_as_dataclass, new_scenario
    from suite.frozen import FrozenDict, ImmutableError

    case = expand_entry({"technique": "poseidon", "params": {"nodes": [2, 8]}}, context=shared_context).cases[1]
    s = case.scenario
    values = {"technique": "poseidon", "variant": "ps", "fidelity": "model", "profile": s.profile,
              "workload": s.workload, "params": {"nodes": 8, "batch_per_node": 32}, "seed": 3,
              "inputs": {"blob": [1, 2]}}
    built, fast = Scenario(**values), new_scenario(dict(values))
    assert vars(fast) == vars(built) and fast == built
    assert type(fast.params) is FrozenDict and fast.inputs == {"blob": (1, 2)}
    with pytest.raises(ImmutableError):
        fast.params["nodes"] = 4  # type: ignore[index]
    with pytest.raises(TypeError, match=r"^Scenario fields: expected \[.*\], got \["):
        new_scenario({k: v for k, v in values.items() if k != "seed"})
    spec = {"variant": "ps", "profile": "dgx-a100", "workload": None, "params": {"nodes": 2}, "fidelity": "model",
            "seed": 0, "overrides": {"network.-1.bandwidth": "7 Gbit/s"}}
    assert built_as_dataclass(ScenarioSpec, dict(spec)) == ScenarioSpec(**spec)
