"""An ``exclude`` rule is checked as an ``include`` rule is, with a warning through 0.3.x (ops14 finding 5: ``exclude = [{variant =
"rng"}]`` and ``exclude = [{profile = "nope"}]`` expanded all 4 cases without a word, so the
combination meant to be left out ran anyway, while ``include = [{variant = "rng"}]`` was refused), and
a misspelt key of ``[defaults]`` is blamed on ``[defaults]``, not on the first entry it was merged into."""

from __future__ import annotations

import pytest

from suite.context import Context
from suite.errors import ExperimentError
from suite.runner.experiment import expand_entry, expand_experiment

WHERE = "x.toml: entry [a]"
# the fake technique: variants base and fast; 2 x 2 = 4 cases
ENTRY = {"technique": "fake", "params": {"x": [1, 2]}}


@pytest.mark.parametrize("rule, fragment", [
    ({"variant": "rng"}, "exclude[0]: key 'variants': fake has no variant 'rng'; expected one of ['base', 'fast']"),
    ({"profile": "nope"}, "exclude[0]: key 'profile': hardware profile: expected a known profile name, got 'nope'"),
    ({"fidelity": "simulate"}, "exclude[0]: key 'fidelities': fake has no fidelity 'simulate'"),
    ({"params": {"zz": 1}}, "exclude[0]: key 'params': fake has no parameter 'zz'"),
    ({"workload": "no-such-wl"}, "exclude[0]: key 'workload': unknown workload 'no-such-wl'"),
])
def test_a_misspelt_exclude_value_is_warned_of_in_one_line(fake_registry, rule, fragment):
    """A warning through 0.3.x (review14: a shared file may name a profile only another site has;
    0.3.11 ran such a sweep), refused from 0.4.0; the 4 cases still expand."""
    exp = expand_entry({**ENTRY, "exclude": [rule]}, where=WHERE, context=Context.build())
    assert len(exp.cases) == 4 and len(exp.warnings) == 1
    (msg,) = exp.warnings
    assert msg.startswith(f"{WHERE}: {fragment}") and msg.endswith("; it removes nothing (refused from dlsys-suite "
                                                                      "0.4.0)"), msg
    assert "\n" not in msg


def test_an_exclude_that_matches_no_case_is_warned_of(fake_registry):
    # fake-gpu is a real profile, of another kind than fake's (cluster): it matches none of the 4 cases;
    # x = 3 is a valid value the sweep does not hold; the third rule removes the 2 fast cases
    exp = expand_entry({**ENTRY, "exclude": [{"profile": "fake-gpu"}, {"x": 3}, {"variant": "fast"}]},
                       where=WHERE, context=Context.build())
    assert sorted((c.variant, c.params["x"]) for c in exp.cases) == [("base", 1.0), ("base", 2.0)]
    assert exp.warnings == [
        f"{WHERE}: exclude[0] matched no case of fake (profile = 'fake-gpu'); it removes nothing",
        f"{WHERE}: exclude[1] matched no case of fake (params.x = 3); it removes nothing"]


def test_a_defaults_typo_names_defaults(fake_registry, tmp_path):
    f = tmp_path / "exp.toml"
    f.write_text('[defaults]\nparms = { x = [1, 2] }\n[a]\ntechnique = "fake"\n')
    with pytest.raises(ExperimentError) as ei:
        expand_experiment(f, context=Context.build())
    assert str(ei.value).startswith(f"{f}: [defaults]: unknown key 'parms'; did you mean 'params'?; expected one of ")
