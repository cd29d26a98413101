"""The conformance kit catches what it claims to catch (each check fails on a deliberately bad
technique) and passes a good one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite import Paper, Param, Property, Result, ScenarioSpec, Technique, Variant
from suite.testing import check_technique
from suite.testing.strategies import layer_tables, perturb, profiles


def _model(s):
    n = s.params["n"]
    return Result().add("t", 1.0 / n, "s", "lower").add("bytes_sent", 10.0 * n, "B").add("bytes_received", 10.0 * n, "B")


def _tech(**kw):
    base = dict(
        name="kit-demo", title="Demo", category="communication",
        paper=Paper("A paper", ("A. Author",), "Venue", 2020),
        variants=[Variant("base", "the baseline", baseline=True), Variant("fast", "the method")],
        fidelities={"model": _model},
        parameters={"n": Param(int, 2, minimum=1, maximum=64)},
        needs_profile=False, needs_workload=False,
        smoke=[ScenarioSpec("base", params={"n": 4})],
        capabilities=frozenset({"bytes-conserved"}),
    )
    base.update(kw)
    return Technique(**base)


def test_good_technique_passes_and_reports_skips():
    rep = check_technique(_tech())
    assert {"metadata", "parameters", "runs-and-metrics", "determinism", "claims-resolve",
            "family:bytes-conserved"} <= set(rep.passed)
    assert rep.skipped["family:sgd-envelope"] == "capability not declared"
    assert rep.skipped["properties"] == "no declared properties"


def test_missing_paper_year_fails_metadata():
    with pytest.raises(AssertionError, match="check 'metadata'.*year"):
        check_technique(_tech(paper=Paper("A paper")))


def test_parameter_that_accepts_out_of_range_values_fails():
    class Lenient(Param):
        def validate(self, name, value, *, technique=""):
            return value  # a broken custom parameter type that validates nothing

    with pytest.raises(AssertionError, match="check 'parameters'.*n=0 was accepted"):
        check_technique(_tech(parameters={"n": Lenient(int, 2, minimum=1, maximum=64)}))


def test_non_finite_metric_fails():
    def bad(s):
        return Result().add("t", float("inf"), "s")

    with pytest.raises(AssertionError, match="not finite"):
        check_technique(_tech(fidelities={"model": bad}, capabilities=frozenset()))


def test_nondeterminism_fails():
    import random

    def noisy(s):
        return Result().add("t", random.random(), "s")

    with pytest.raises(AssertionError, match="determinism"):
        check_technique(_tech(fidelities={"model": noisy}, capabilities=frozenset()))


def test_determinism_names_a_metric_only_the_second_run_reports():
    calls = []

    def grows(s):
        calls.append(1)
        r = Result().add("t", 1.0, "s")
        return r.add("extra", 2.0, "s") if len(calls) > 1 else r

    with pytest.raises(AssertionError, match=r"metrics differ between two runs with one seed: \['extra'\]"):
        check_technique(_tech(fidelities={"model": grows}, capabilities=frozenset()))


def test_family_bytes_conserved_detects_loss():
    def leaky(s):
        return Result().add("t", 1.0, "s").add("bytes_sent", 10.0, "B").add("bytes_received", 9.0, "B")

    with pytest.raises(AssertionError, match="bytes_sent 10.0 != bytes_received 9.0"):
        check_technique(_tech(fidelities={"model": leaky}))


def test_declared_capability_without_metrics_fails():
    def plain(s):
        return Result().add("t", 1.0, "s")

    with pytest.raises(AssertionError, match="capability declared but"):
        check_technique(_tech(fidelities={"model": plain}))


def test_failing_property_is_reported():
    def never(tech, scen):
        raise AssertionError("invariant broken")

    with pytest.raises(AssertionError, match="property always-false.*invariant broken"):
        check_technique(_tech(properties=[Property("always-false", "x", never)]), max_examples=3)


@settings(max_examples=15)
@given(profiles())
def test_generated_profiles_are_valid_and_consistent(p):
    assert p.device is not None and p.device.memory > 0
    if p.kind == "cluster":
        assert p.num_devices == p.nodes * p.node.devices_per_node
        assert p.outer_network.size == p.nodes
    assert len(p.content_hash()) == 16


@settings(max_examples=15)
@given(profiles(kind="cluster"), st.data())
def test_perturb_changes_one_field_and_the_hash(p, data):
    path, factor, new = data.draw(perturb(p))
    assert list(new.overrides) == [path]
    if factor != 1.0:
        assert new.content_hash() != p.content_hash()


@settings(max_examples=10)
@given(layer_tables())
def test_generated_layer_tables(t):
    assert t.params == sum(l.params for l in t.layers) > 0
    for l in t.layers:
        assert l.fwd_flops > 0 and l.bwd_flops == 2 * l.fwd_flops


def test_a_claim_on_a_metric_its_case_does_not_report_fails_claims_resolve():
    from suite import Approx, Claim

    claim = Claim(id="c1", statement="t is 0.25 s", source="test", verified=False, expect=Approx(0.25, rel=0.3),
                  scenario=ScenarioSpec("base", params={"n": 4}), metric="tt", null_reason="a test claim")
    with pytest.raises(AssertionError, match=r"check 'claims'.*metric 'tt' is not among the metrics its case reports "
                                             r"\(bytes_received, bytes_sent, t\)"):
        check_technique(_tech(claims=[claim]))
    ok = Claim(id="c1", statement="t is 0.25 s", source="test", verified=False, expect=Approx(0.25, rel=0.3),
               scenario=ScenarioSpec("base", params={"n": 4}), metric="t", null_reason="a test claim")
    assert "claims-resolve" in check_technique(_tech(claims=[ok])).passed
