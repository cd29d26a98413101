"""VirtualFlow (Or, Zhang, Freedman; MLSys 2022): the technique declaration.

Variants, parameters, fidelities (model, simulate, execute), the abstract's claims with their
null predictions, and the declared properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
import math

from suite.api import Assumption, AtMost, Claim, Gain, Null, ScenarioSpec, declare_technique, with_reasons

from suite_virtualflow.constants import TRACE_NAME

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "hetero_gain", "jct_ratio", "ideal_additive_gain"]


_MIX = "vf-mix"
_DGX = "dgx-1-v100"
_TF_POINT = {"batch": 128, "virtual_nodes": 16}


def ideal_additive_gain(results):
    """Null of the heterogeneous-throughput claim: the ``ideal_gain`` metric of its ``het`` case,
    the model's zero-communication gain of the 4 RTX 2080 Ti added to the 4 V100 of vf-mix at the
    claim's own point (Transformer, B = 128, V = 16; :func:`suite_virtualflow.model.ideal_gain`),
    the best any placement can do (was ``1 + 294/405`` = 1.7259 from the ResNet-50 calibration
    rates). Computed from the case's resolved inputs, so the null is keyed like the case."""
    return results["het"]["ideal_gain"]


def hetero_gain(results):
    """Throughput of ``heterogeneous`` over ``fast-only`` at the same point (claim derive)."""
    return results["het"]["throughput"] / results["fast"]["throughput"]


def jct_ratio(results):
    """Average JCT under ``static`` over ``elastic`` (claim derive): ``1 / (1 - reduction)``."""
    return results["static"]["avg_jct"] / results["elastic"]["avg_jct"]


def _diff_vs_reference(results):
    return results["main"]["trajectory_error"]


CLAIMS = [
    Claim(
        "heterogeneous-42pct-throughput",
        "Up to 42% higher throughput with heterogeneous training",
        source="abstract", verified=True,
        cases={"het": ScenarioSpec(variant="heterogeneous", profile=_MIX, workload="transformer-base",
                                   params=dict(_TF_POINT)),
               "fast": ScenarioSpec(variant="fast-only", profile=_MIX, workload="transformer-base",
                                    params=dict(_TF_POINT))},
        derive=hetero_gain, expect=Gain(1.42, rel=0.2),
        nulls=(Null("no gain", value=1.0),
               Null("ideal additive gain, zero communication (the model's, Transformer B 128 V 16)",
                    derive=ideal_additive_gain)),
        note="The paper's GPU mix, model and batch were not found (abstract only). Fixed point: our vf-mix "
             "(4 V100 + 4 RTX 2080 Ti, PCIe inside a node, 10 GbE between the nodes: assumptions) and the only "
             "heterogeneous hint in the authors' scripts, run_transformer_experiment.sh: Transformer, batch 8 x "
             "4096 tokens = 128 sequences of 256, virtual nodes of 2048 tokens ('2048 for 2080 Ti'), so V = 16. "
             "'Up to' is judged at this point; the docs sweep the network and the model.",
    ),
    Claim(
        "elastic-48pct-jct",
        "Up to 48% lower job completion times with resource elasticity",
        source="abstract", verified=True,
        cases={"elastic": ScenarioSpec(variant="elastic", profile=_DGX, workload=TRACE_NAME,
                                       fidelity="simulate"),
               "static": ScenarioSpec(variant="static", profile=_DGX, workload=TRACE_NAME,
                                      fidelity="simulate")},
        derive=jct_ratio, expect=Gain(1.0 / (1.0 - 0.48), rel=0.2),
        nulls=(Null("0% (no elasticity)", value=1.0),),
        note="Judged on JCT_static / JCT_elastic = 1 / (1 - 0.48) = 1.923, the gain within 20%. The trace is the "
             "authors' medium20_8jph.json (andrewor14/models @ 07a6669, [READ-2nd]) on 8 V100 of a DGX-1 "
             "(assumed: the paper's testbed was not found), with the authors' 10 s GPU-release wait; 'Priority' "
             "is read as the non-elastic policy (its code was not in the versions read); job lengths come "
             "from the model (BERT-base at 128 tokens for GLUE is our assumption).",
    ),
    Claim(
        "same-trajectory-across-hardware",
        "Strong convergence guarantees across different hardware with out-of-the-box hyperparameters: the "
        "trajectory at fixed B and V does not depend on the devices",
        source="abstract", verified=True,
        scenario=ScenarioSpec(variant="virtual", profile=_DGX, workload="digits", fidelity="execute",
                              params={"batch": 128, "virtual_nodes": 16, "devices": 2, "steps": 10}),
        metric="trajectory_error", expect=AtMost(1e-9),
        nulls=(Null("no virtual nodes (batch follows the devices)", variants={"virtual": "physical"}),),
        defect=("an identity: at fixed B and V the virtual nodes' summed gradients are the full-batch gradient of the "
                "oracle whatever the devices, so ours is rounding (2.2e-16) and could not fail, and the null (physical, "
                "P B / V samples a step against that oracle) could not land; the invariance over P = 1, 2, 4, 8 is a "
                "test instead"),
        note="Qualitative in the abstract; the 1e-9 band (max |theta - theta_full_batch| over 10 steps, float64) "
             "is ours. The oracle is plain full-batch gradient descent on the same samples.",
    ),
]


# --------------------------------------------------------------------------- properties


def _fit(scenario):
    """The scenario with devices / V / B adapted to its (generated) profile."""
    from suite_virtualflow import model

    prof = scenario.profile
    slots = model.device_slots(prof)
    p = dict(scenario.params)
    P = max(1, min(model.devices_of(p, prof), slots[0].count))
    V = int(p["virtual_nodes"])
    V = V if V % P == 0 else P * max(1, V // P)
    B = V * max(1, int(p["batch"]) // V)
    p.update(devices=P, virtual_nodes=V, batch=B)
    return dataclasses.replace(scenario, params=p, fidelity="model")


def _eval(tech, scenario, **kw):
    sc = dataclasses.replace(scenario, params={**scenario.params, **kw})
    return tech.evaluate(sc)


def check_plan_bounds(tech, scenario):
    """The heterogeneous plan places exactly V virtual nodes; its compute time lies between the
    continuous balanced bound and fast-only's; its step is no slower than fast-only's."""
    from suite_virtualflow import model

    sc = dataclasses.replace(_fit(scenario), variant="heterogeneous")
    p = sc.params
    ref = sc.input(model.EFFICIENCY_INPUT)
    sm_h = model.step_model(sc.workload, sc.profile, "heterogeneous", p["batch"], p["virtual_nodes"], p["devices"],
                            reference=ref)
    sm_f = model.step_model(sc.workload, sc.profile, "fast-only", p["batch"], p["virtual_nodes"], p["devices"],
                            reference=ref)
    V = int(p["virtual_nodes"])
    if not (sm_h.plan.assigned == V):
        raise AssertionError(f"plan assigns {sm_h.plan.assigned} virtual nodes, expected {V}")
    if not (sum(sum(x) for x in sm_h.plan.per_device()) == V):
        raise AssertionError('failed: sum(sum(x) for x in sm_h.plan.per_device()) == V')
    slots = model.device_slots(sc.profile)
    fin = [(s.count, t) for s, t in zip(slots, sm_h.vn_times) if math.isfinite(t)]
    lo = model.balanced_bound([t for _, t in fin], [c for c, _ in fin], V)
    if not (sm_h.plan.compute >= lo * (1 - 1e-9)):
        raise AssertionError(f"compute {sm_h.plan.compute} below the balanced bound {lo}")
    if not (sm_h.plan.step <= sm_f.plan.step * (1 + 1e-9)):
        raise AssertionError(f"step {sm_h.plan.step} > fast-only {sm_f.plan.step}")


def check_memory_independent_of_devices(tech, scenario):
    """Memory per device of ``virtual`` is the same for every P dividing V (B, V fixed)."""
    from suite_virtualflow import model

    sc = dataclasses.replace(_fit(scenario), variant="virtual")
    V, have = int(sc.params["virtual_nodes"]), model.device_slots(sc.profile)[0].count
    mems = {P: _eval(tech, sc, devices=P)["memory_per_device"] for P in model.divisors(V) if P <= have}
    if not (len(set(mems.values())) == 1):
        raise AssertionError(f"memory per device changes with P: {mems}")


def check_speedup_at_most_device_ratio(tech, scenario):
    """``virtual`` on P devices is at most P times faster than on one (same B, V)."""
    sc = dataclasses.replace(_fit(scenario), variant="virtual")
    P = int(sc.params["devices"])
    t1 = _eval(tech, sc, devices=1)["step_time"]
    tp = _eval(tech, sc)["step_time"]
    if not (t1 / tp <= P * (1 + 1e-9)):
        raise AssertionError(f"speed-up {t1 / tp} on {P} devices exceeds {P}")


class _PinnedPlan:
    """The model fidelity with the placement fixed (no plan search): what the kit's
    network-sensitivity check evaluates for ``heterogeneous``, so that it sees only the chosen
    plan's all-reduce, not the candidates the search priced and rejected."""

    def __init__(self, name, plan):
        self.name, self.plan = name, (tuple(plan["devices"]), tuple(plan["vns"]))

    def evaluate(self, scenario):
        from suite_virtualflow import model

        return model.evaluate(scenario, plan=self.plan)


def check_network_levels(tech, scenario):
    """The kit's network-sensitivity check (``suite.perf.sensitivity``: every level slowed in
    bandwidth, latency and topology) on ``physical``, ``virtual`` and ``fast-only`` (each prices
    only its own all-reduce) and on ``heterogeneous`` with its chosen plan pinned; re-searched on
    a slower level, the ``heterogeneous`` step is never faster (the plan may move off it)."""
    from suite.api import check_network_sensitivity

    sc = _fit(scenario)
    prof = sc.profile
    if not prof.network:
        return
    for variant in ("physical", "virtual", "fast-only", "heterogeneous"):
        s2 = dataclasses.replace(sc, variant=variant)
        if variant == "heterogeneous":
            base = tech.evaluate(s2)
            pinned = _PinnedPlan(f"{tech.name} ({variant}, plan {base.artifacts['plan']['vns']} pinned)",
                                 base.artifacts["plan"])
            problems = check_network_sensitivity(pinned, s2, metric="comm_time")
        else:
            problems = check_network_sensitivity(tech, s2, metric="comm_time")
        if not (not problems):
            raise AssertionError(f"{variant}: {problems[0]}")
    for i, level in enumerate(prof.network):
        slow = prof.with_overrides({f"network.{i}.bandwidth": f"{level.bandwidth / 10!r} B/s"})
        t1 = tech.evaluate(dataclasses.replace(s2, profile=slow))["step_time"]
        if not (t1 >= base["step_time"] * (1 - 1e-12)):
            raise AssertionError(f"heterogeneous: network.{i} 10x slower made the step faster")


def check_wfs_allocations(tech, scenario):
    """WFS allocations are powers of two in [1, demand] summing to <= the GPUs (random jobs)."""
    import numpy as np

    from suite_virtualflow import elastic

    rng = np.random.default_rng(scenario.seed + int(scenario.params["virtual_nodes"]))
    gpus = int(rng.choice([1, 2, 4, 8, 16]))
    k = int(rng.integers(1, gpus + 1))
    jobs = [(i, int(rng.choice([1, 5, 10])), int(rng.choice([1, 2, 4, 8, 16]))) for i in range(k)]
    alloc = elastic.wfs_allocations(jobs, gpus)
    if not (sum(alloc.values()) <= gpus):
        raise AssertionError(f"{alloc} uses more than {gpus} GPUs")
    for key, _, d in jobs:
        a = alloc[key]
        if not (1 <= a <= max(1, d) and a & (a - 1) == 0):
            raise AssertionError(f"job {key}: {a} GPUs for demand {d}")


def check_execute_matches_oracle(tech, scenario):
    """Execute: ``virtual`` with any P dividing V follows the full-batch trajectory (1e-12)."""
    from suite_virtualflow import execute

    V = 8
    for P in (1, 2, 8):
        out = execute.run("virtual", 32, V, P, steps=3, hidden=4, seed=scenario.seed)
        if not (out["trajectory_error"] < 1e-12):
            raise AssertionError(f"P={P}: trajectory error {out['trajectory_error']}")
        if not (out["allreduces"] == 3):
            raise AssertionError('failed: out["allreduces"] == 3')


def _workloads():
    from suite_virtualflow import elastic

    return [elastic.TRACE]


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_WHY_NOT = {
    "heterogeneous-42pct-throughput": ("setup unknown", "the inter-node network of the paper's GPU mix is not "
                                       "stated; at our 10 GbE the all-reduce costs more than the 2080 Ti node saves "
                                       "(1.000); the verdict flips at 87.2 Gbit/s (87: 1.3357, 87.2: 1.3362) to reproduced"),
    "elastic-48pct-jct": ("setup unknown", "the testbed and the arrival rate are assumed (the paper's trace was not "
                          "found; we replay the authors' code's 8 jobs/hour trace); the reduction grows with load and "
                          "ours enters the band at about 14 jobs/hour (1.771 at 14.5; 1.716 at 13.3), but only as reproduced "
                          "(no null): the one null, 0% (no elasticity) = 1, is excluded by the gain band"),
}
_DECIDING = {
    "heterogeneous-42pct-throughput": (Assumption("inter-node bandwidth of vf-mix", "10 Gbit/s", flip_at="87.2 Gbit/s",
                                                  sourced=False, flips_to="reproduced",
                                                  note="25 Gbit/s: 1.127, 60: 1.309, 85: 1.331, 87: 1.3357, 87.2: "
                                                       "1.3362, 90: 1.343, 100 and 400: 1.3555 (band [1.336, 1.504]; "
                                                       "both nulls, 1 and 1.7253, outside)"),),
    "elastic-48pct-jct": (Assumption("job arrivals", "8 jobs/hour (the authors' medium trace)", flip_at="about 14 jobs/hour",
                                     sourced=False, flips_to="reproduced (no null)",
                                     note="the trace is the authors' code's (andrewor14/models @ 07a6669, "
                                          "medium20_8jph.json), but which trace gave the paper's 48% was not found, so "
                                          "its rate is our assumption; arrival times x 0.6 (13.3 jobs/hour) give 1.716, "
                                          "x 0.55 (14.5) 1.771 (inside [1.738, 2.108]), x 0.5 (16) 1.869"),),
}


TECHNIQUE = declare_technique(
    __name__, claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING),
    smoke=[
        ScenarioSpec(variant="heterogeneous", profile=_MIX, workload="transformer-base", params=dict(_TF_POINT)),
        ScenarioSpec(variant="virtual", profile=_DGX, workload="digits", fidelity="execute",
                     params={"batch": 64, "virtual_nodes": 8, "devices": 4, "steps": 5, "resize": "4,2,8"}),
        ScenarioSpec(variant="elastic", profile=_DGX, workload=TRACE_NAME, fidelity="simulate"),
    ],
)
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
