"""A third-party-style plugin whose five claims declare no null (issue 42's fixture).

Every claim's value lands in its band: before issue 42 ``suite reproduce`` counted 5/5 reproduced
with exit 0 while the conformance kit failed the same claims. Its model is ``fakeplugin``'s
closed form (y = x * n * factor * Gbit/s).
"""

from __future__ import annotations

from suite import hookimpl
from suite.technique import Approx, AtLeast, Claim, Exact, Gain, Paper, Param, ScenarioSpec, Technique, Variant

import fakeplugin

SPEC = dict(profile="fake-cluster-a", workload="fake-wl")


def _ratio(results):
    return results["fast"]["y"] / results["base"]["y"]


_PAIR = {"base": ScenarioSpec("base", **SPEC), "fast": ScenarioSpec("fast", **SPEC)}
# y(base, x=1, n=1) on the 10 Gbit/s fixture profile = 10; y(fast) = 20
CLAIMS = [
    Claim("gain-2x", "fast is 2x base", "Table 1", True, Gain(2.0), cases=_PAIR, derive=_ratio),
    Claim("y-10", "y is 10", "Table 2", True, Approx(10.0, rel=0.1), scenario=ScenarioSpec("base", **SPEC),
          metric="y"),
    Claim("y-fast-20", "fast's y is 20", "Table 2", True, Exact(20.0), scenario=ScenarioSpec("fast", **SPEC),
          metric="y"),
    Claim("y-at-least-5", "y at least 5", "Sec. 3", False, AtLeast(5.0), scenario=ScenarioSpec("base", **SPEC),
          metric="y"),
    Claim("ratio-approx", "fast about twice base", "Fig. 4", False, Approx(2.0, rel=0.2), cases=_PAIR,
          derive=_ratio),
]

TECHNIQUE = Technique(
    name="nonull", title="A third-party plugin whose claims declare no null",
    category="communication", paper=Paper(title="Nonull", year=2024),
    variants=[Variant("base", "the baseline", baseline=True), Variant("fast", "twice the metric")],
    fidelities={"model": fakeplugin.evaluate},
    parameters={"x": Param(float, 1.0), "n": Param(int, 1), "mode": Param(str, "ok"), "delay": Param(float, 0.0)},
    claims=CLAIMS,
    default_profile="fake-cluster-a", default_workload="fake-wl", profile_kinds=("cluster",),
    smoke=(ScenarioSpec("base", **SPEC),),
)


@hookimpl
def suite_techniques():
    return [TECHNIQUE]
