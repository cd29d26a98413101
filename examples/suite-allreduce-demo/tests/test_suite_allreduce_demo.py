"""Tests of allreduce-demo: a hand calculation, the oracle, and the dlsys-suite conformance kit."""

from __future__ import annotations

import pytest

from suite.api import ScenarioSpec
from suite.testing import parametrize_with_checks, resolve_case

from suite_allreduce_demo.technique import TECHNIQUE


@parametrize_with_checks([TECHNIQUE], max_examples=5, timeout=120)
def test_conforms(technique, check):
    """One item per conformance check, each in a forked process with a time-out: a check that
    crashes or hangs fails only its own item, never the test session."""
    check(technique)


def _figure(profile, path):
    """A profile figure the hand calculation below assumes, or one line saying it is missing."""
    value = profile
    for part in path.split("."):
        value = value[int(part)] if part.isdigit() else getattr(value, part, None)
        if value is None:
            pytest.fail(f"profile {profile.name!r}: {path} is not set; the hand calculation needs it "
                        f"({profile.path})", pytrace=False)
    return value


def test_ring_model_hand_value():
    """8 workers, 1000 MB, the shipped testbed (10 Gbit/s = 1.25e9 B/s, 37 us, 336.5 GB/s memory):
    ring T = 2(p-1) alpha + 2(p-1)/p m / bw + (p-1)/p m * 3 / memory_bandwidth (the reduction)
      = 14 * 37e-6 + 1.75e9 / 1.25e9 + 0.875e9 * 3 / 336.5e9 = 1.408319 s."""
    case = resolve_case(TECHNIQUE, ScenarioSpec("ring", params={"workers": 8, "message_size": 1000.0}))
    profile = case.scenario.profile
    assert _figure(profile, "network.0.bandwidth") == 1.25e9 and _figure(profile, "network.0.latency") == 37e-6
    assert _figure(profile, "device.memory_bandwidth") == 336.5e9
    result = TECHNIQUE.evaluate(case.scenario)
    assert result["comm_time"] == pytest.approx(1.408319, rel=1e-6)
    assert result["comm_bytes"] == pytest.approx(1.75e9)


def test_execute_equals_oracle():
    for variant in ("ring", "tree"):
        case = resolve_case(TECHNIQUE, ScenarioSpec(variant, fidelity="execute", params={"workers": 5}))
        assert TECHNIQUE.evaluate(case.scenario)["oracle_error"] < 1e-9
