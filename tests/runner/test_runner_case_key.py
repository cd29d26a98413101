"""Case keys: stable, and sensitive to exactly the identity a case key is documented to have."""

from __future__ import annotations

import hashlib
import json

from suite.context import Context
from suite.runner.case import case_key, resolve_case
from suite.technique import ScenarioSpec


def test_key_is_sha256_of_the_identity_by_hand():
    ident = ["poseidon", "1.0", "ps", "abc", "def", {"a": 1, "b": 2.5}, 3, "model"]
    blob = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    assert blob == '["poseidon","1.0","ps","abc","def",{"a":1,"b":2.5},3,"model"]'
    want = hashlib.sha256(blob.encode()).hexdigest()[:20]
    assert case_key("poseidon", "1.0", "ps", "abc", "def", {"b": 2.5, "a": 1}, 3, "model") == want


def test_key_changes_with_every_component():
    base = ("t", "1", "v", "p", "w", {"a": 1}, 0, "model")
    k0 = case_key(*base)
    for i, alt in enumerate(["u", "2", "v2", "p2", "w2", {"a": 2}, 1, "execute"]):
        args = list(base)
        args[i] = alt
        assert case_key(*args) != k0, i


def test_resolved_key_stable_across_resolutions(fake_registry):
    tech, ctx = fake_registry.technique("fake"), Context.build()
    spec = ScenarioSpec("fast", params={"x": "2", "n": 3})
    a = resolve_case(tech, spec, context=ctx)
    b = resolve_case(tech, ScenarioSpec("fast", profile="fake-cluster-a", workload="fake-wl",
                                        params={"n": 3, "x": 2.0, "mode": "ok"}), context=ctx)
    assert a.key == b.key  # defaults filled, types validated, order irrelevant
    c = resolve_case(tech, ScenarioSpec("fast", params={"x": 2, "n": 3},
                                        overrides={"network.-1.bandwidth": "20 Gbit/s"}), context=ctx)
    assert c.key != a.key and c.profile_hash != a.profile_hash
    assert a.identity()["params"] == {"x": 2.0, "n": 3, "mode": "ok", "delay": 0.0}
