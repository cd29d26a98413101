"""An in-process fake technique plugin for the runner tests.

``fake`` computes a closed-form metric so tests can assert exact values:
``y = x * n * factor(variant) * bandwidth_gbit`` with factor 1 (``base``) or 2 (``fast``), where
``bandwidth_gbit`` is the profile's outer network bandwidth in Gbit/s. The ``mode`` parameter
makes one case misbehave: ``raise`` (ValueError), ``hang`` (sleeps 60 s), ``abort`` (os.abort()),
``skip`` (raises Skip). With ``FAKE_GATE=PATH:N`` in the environment (not part of any case key), a
case with ``n > N`` waits until file PATH exists: a run that can be killed after its first N
cases and cannot finish before (test_runner_resume). Claims have known verdicts: one reproduced, one not reproduced, one whose
derive raises, and one whose case fails.
"""

from __future__ import annotations

import os
import time

from suite import hookimpl
from suite.technique import (Approx, Claim, Exact, Paper, Param, Result, ScenarioSpec, Skip, Technique,
                             Variant)
from suite.workloads import Workload, register
from suite.errors import WorkloadError

try:
    register("fake-wl", lambda: Workload(name="fake-wl", kind="synthetic", source="test fixture"), provider="tests")
except WorkloadError:  # already registered by an earlier import
    pass


def y_of(x: float, n: int, variant: str, gbit: float) -> float:
    return x * n * (2.0 if variant == "fast" else 1.0) * gbit


def _wait_at_the_gate(n: int) -> None:
    """Block a case with ``n`` past the ``FAKE_GATE`` count until the gate file exists (see module doc)."""
    gate = os.environ.get("FAKE_GATE")
    if gate:
        path, _, after = gate.rpartition(":")
        while n > int(after) and not os.path.exists(path):
            time.sleep(0.01)


def evaluate(scenario) -> Result:
    p = scenario.params
    mode = p["mode"]
    if mode == "raise":
        raise ValueError("boom from the fake plugin")
    if mode == "hang":
        time.sleep(60)
    if mode == "abort":
        os.abort()
    if mode == "skip":
        raise Skip("fake does not apply here")
    if p["delay"]:
        time.sleep(p["delay"])
    _wait_at_the_gate(p["n"])
    gbit = scenario.profile.network[-1].bandwidth * 8 / 1e9 if scenario.profile and scenario.profile.network else 1.0
    y = y_of(p["x"], p["n"], scenario.variant, gbit)
    r = Result().add("y", y, "s", "lower").add("seed_used", scenario.seed, "1", "none")
    if scenario.fidelity == "execute":
        r.add("t", y, "s", "lower", samples=[y, y * 1.01, y * 0.99])
    r.artifacts["trace"] = [1, 2, 3]
    return r


def _ratio(results):
    return results["fast"]["y"] / results["base"]["y"]


def _bad(results):
    raise ZeroDivisionError("derive exploded")


SPEC = dict(profile="fake-cluster-a", workload="fake-wl")
CLAIMS = [
    Claim("ratio-2x", "fast is 2x base", "Table 1", True, Approx(2.0, rel=0.2),
          cases={"base": ScenarioSpec("base", **SPEC), "fast": ScenarioSpec("fast", **SPEC)}, derive=_ratio),
    Claim("y-abs", "y is 100 at x=1, n=1", "Fig. 2", False, Approx(100.0, rel=0.3),
          scenario=ScenarioSpec("base", **SPEC), metric="y"),  # ours is 10: not reproduced
    Claim("derive-bad", "derive fails", "Sec. 3", False, Exact(1), cases={"b": ScenarioSpec("base", **SPEC)},
          derive=_bad),
    Claim("case-fails", "a failing case", "Sec. 4", True, Exact(1),
          scenario=ScenarioSpec("base", params={"mode": "raise"}, **SPEC), metric="y"),
]

TECHNIQUE = Technique(
    name="fake", title="A fake technique for runner tests", category="communication",
    paper=Paper(title="Fake", year=2024),
    variants=[Variant("base", "the baseline", baseline=True), Variant("fast", "twice the metric")],
    fidelities={"model": evaluate, "execute": evaluate},
    parameters={"x": Param(float, 1.0, minimum=0.0), "n": Param(int, 1, minimum=1),
                "mode": Param(str, "ok", choices=("ok", "raise", "hang", "abort", "skip")),
                "delay": Param(float, 0.0, unit="s", minimum=0.0)},
    claims=CLAIMS,
    default_profile="fake-cluster-a", default_workload="fake-wl",
    profile_kinds=("cluster",),
    smoke=(ScenarioSpec("base", **SPEC), ScenarioSpec("fast", **SPEC)),
)

TECHNIQUE2 = Technique(
    name="fake-two", title="A second fake, without workload", category="sgd", paper=Paper(title="Fake 2"),
    variants=[Variant("only", "the only one", baseline=True)], fidelities={"model": evaluate},
    parameters={"x": Param(float, 3.0), "n": Param(int, 1), "mode": Param(str, "ok"), "delay": Param(float, 0.0)},
    needs_workload=False, default_profile="fake-gpu", profile_kinds=("device",),
)


@hookimpl
def suite_techniques():
    return [TECHNIQUE, TECHNIQUE2]
