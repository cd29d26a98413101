"""DFLOP (An et al., arXiv 2603.25120, 2026): the technique declaration.

Variants (two data-blind baselines, the data-aware plan alone, and the plan with the LPT or the
LPT + ILP scheduler), parameters, fidelities, the abstract's claim with its nulls, and the
declared properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses

from suite.api import Claim, Gain, Null, ScenarioSpec, declare_technique, with_reasons

from suite_dflop.constants import CLAIM_NODES, CLAIM_PROFILE
from suite_dflop.workloads import MIXES

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "CLAIM_PROFILE", "CLAIM_NODES", "max_speedup"]


def _cases(variant: str) -> dict:
    return {f"{variant}@{mix}": ScenarioSpec(variant=variant, profile=CLAIM_PROFILE, workload=mix,
                                             params={"nodes": CLAIM_NODES, "global_batch": 256})
            for mix in MIXES}


def max_speedup(results) -> float:
    """Largest step-time ratio megatron / (the other variant) over the three dataset mixes."""
    out = []
    for mix in MIXES:
        base = [r for k, r in results.items() if k == f"megatron@{mix}"][0]
        other = [r for k, r in results.items() if k == f"dflop@{mix}"][0]
        out.append(base["step_time"] / other["step_time"])
    return float(max(out))


CLAIMS = [
    Claim(
        "speedup-up-to-3.6x",
        "DFLOP trains up to 3.6x faster than state-of-the-art distributed training frameworks on large-scale "
        "multimodal benchmarks",
        source="abstract", verified=True,
        cases={**_cases("megatron"), **_cases("dflop")},
        derive=max_speedup, expect=Gain(3.6, rel=0.2),
        nulls=(Null("no gain", value=1.0),
               Null("tuned data-blind uniform plan", variants={"dflop": "tuned-uniform"})),
        note="Ours is the largest step-time ratio megatron / dflop over our three dataset mixes (LLaVA-OV "
             "single image, M4-Instruct, LLaVA-Video) on 8 Selene-like DGX A100 nodes, SigLIP-6B + Qwen2.5-7B, "
             "global batch 256. The paper's cluster, model pair and per-dataset numbers were not found, and the "
             "mixes are assumed (the datasets cannot be downloaded), so this is the model's answer under declared "
             "assumptions. Each module (encoder, LLM) gets its own data-parallel degree; the null is the tuned "
             "data-blind uniform plan at the same scenario. Our value and the null's are the scoreboard's (the "
             "page gives them per mix; this note quotes none, so it cannot go stale). "
             "Our Megatron baseline fits the whole model in one tp=8 stage (no pipeline bubble, no "
             "encoder/LLM stage imbalance) and we do not model "
             "padding to a fixed sequence length nor a framework's kernel inefficiencies, the likely sources of "
             "a 3.6x gap (see docs/techniques/dflop.md).",
    ),
]


# --------------------------------------------------------------------------- properties


def _model(tech, scenario, variant, **params):
    sc = dataclasses.replace(scenario, fidelity="model", variant=variant,
                             params={**scenario.params, "ilp_time_limit": 0.0, **params})
    return tech.evaluate(sc)


def _fit(scenario):
    """Clamp nodes to the profile and keep the batch able to fill the bins."""
    prof = scenario.profile
    have = prof.num_nodes if prof is not None else 1
    p = dict(scenario.params)
    from suite_dflop import model

    p["nodes"] = max(1, min(model.nodes_of(p, prof), have, 8))
    p["global_batch"] = max(int(p["global_batch"]), 64 * int(p["microbatches"]))
    p["global_batch"] = min(p["global_batch"], 512)
    p["microbatches"] = min(int(p["microbatches"]), p["global_batch"] // 64)
    return dataclasses.replace(scenario, params=p)


def check_bins_and_bound(tech, scenario):
    """Every schedule is a partition with no empty bin and a makespan >= the lower bound."""
    import numpy as np

    from suite_dflop import schedule as sched

    rng = np.random.default_rng(scenario.seed)
    n, k = 40, 8
    d = rng.lognormal(0.0, 1.0, (2, n))
    # the ILP under the model fidelity's deterministic budget (a node limit): under a clock limit it
    # computed until the limit (0.5 s) and its answer depended on the machine's load
    for s in (sched.equal_count(d, k), sched.lpt(d, k), sched.schedule(d, k, node_limit=20)):
        flat = sorted(i for b in s.bins for i in b)
        if not (flat == list(range(n))):
            raise AssertionError(f"{s.method}: not a partition of the samples")
        if not (all(s.bins)):
            raise AssertionError(f"{s.method}: an empty bin")
        if not (s.makespan >= s.bound * (1 - 1e-12)):
            raise AssertionError(f"{s.method}: makespan {s.makespan} < bound {s.bound}")


def check_fits_hbm(tech, scenario):
    """The data-aware planner's plan fits HBM with its expected heavy micro-batch (1.5 x the mean
    bin), by the memory model; none is returned when no plan fits."""
    from suite_dflop import model
    from suite_dflop.workloads import generate

    sc = _fit(scenario)
    prof = sc.profile
    hw = model.hardware(prof, int(sc.params["nodes"]) * prof.devices_per_node)
    mean = model.features(generate(sc.workload, 512, sc.seed + 1)).x.mean(axis=0)
    batch = int(sc.params["global_batch"])
    plan, _t, _f = model.best_split_plan(hw, int(sc.params["microbatches"]), mean, batch)
    if plan is None:
        return
    peak = model.plan_memory(plan, mean * (batch / plan.bins) * 1.5).max()
    if not (peak <= hw.memory):
        raise AssertionError(f"plan {plan.describe()} needs {peak:.3g} B per GPU, HBM {hw.memory:.3g} B")


def check_more_gpus(tech, scenario):
    """The planner's best expected bottleneck is non-increasing in the number of GPUs."""
    import numpy as np

    from suite_dflop import model

    sc = _fit(scenario)
    prof = sc.profile
    wl = sc.workload
    per = prof.devices_per_node
    mean = model.features(__import__("suite_dflop.workloads", fromlist=["generate"]).generate(
        wl, 512, sc.seed + 1)).x.mean(axis=0)
    prev = np.inf
    for nodes in sorted({1, 2, int(sc.params["nodes"])}):
        if nodes > (prof.num_nodes):
            continue
        hw = model.hardware(prof, nodes * per)
        _p, t, _f = model.best_split_plan(hw, 2, mean, 256)
        if not (t <= prev * (1 + 1e-9)):
            raise AssertionError(f"best expected time rose to {t} s at {nodes} nodes (was {prev} s)")
        prev = t


def check_slower_network(tech, scenario):
    """Halving the inter-node bandwidth does not lower the plan's DP communication, and raises
    it when the DP group crosses nodes."""
    from suite_dflop import model

    sc = _fit(scenario)
    prof = sc.profile
    if len(prof.network) < 2:
        return
    try:
        r0 = _model(tech, sc, "data-aware-plan")
    except ValueError as e:
        if not ("fits" in str(e)):
            raise AssertionError(str(e))
        return
    slow = prof.with_overrides({"network.-1.bandwidth": f"{prof.network[-1].bandwidth / 2} B/s"})
    r1 = _model(tech, dataclasses.replace(sc, profile=slow), "data-aware-plan")
    if r1.artifacts["plan"] != r0.artifacts["plan"]:
        return  # the planner moved to another plan: a different traffic pattern
    if not (r1["dp_time"] >= r0["dp_time"] * (1 - 1e-12)):
        raise AssertionError(f"dp_time fell from {r0['dp_time']} to {r1['dp_time']}")
    pl = r0.artifacts["plan"]
    if pl["kind"] != "split":
        return
    # each module's gradient all-reduce, over its own replicas: one whose group spans nodes (the
    # model's placement, Hardware.dp_allreduce) must slow down, and so must the step's DP time
    # when that module's all-reduce is the larger
    plan = model._split_plan(pl["vision"]["tp"], pl["vision"]["pp"], pl["vision"]["dp"], pl["llm"]["tp"],
                             pl["llm"]["pp"], pl["llm"]["dp"], pl["m"])
    gpus = int(sc.params["nodes"]) * prof.devices_per_node
    hw0, hw1 = model.hardware(prof, gpus), model.hardware(slow, gpus)
    per = prof.devices_per_node
    times = []
    for comp, d in ((0, plan.enc_dp), (1, plan.dp)):
        sts = [st for st in plan.stages if st.component == comp]
        stride = sum(st.tp for st in sts)
        nbytes = max(model.BF16 * model._stage_params(st) / st.tp for st in sts)
        t0_, t1_ = hw0.dp_allreduce(nbytes, d, stride), hw1.dp_allreduce(nbytes, d, stride)
        rpn = max(1, min(d, per // max(stride, 1)))
        # a group spanning nodes, every node full: a partly filled last node is left out, because
        # suite.perf.collective prices e.g. Group(4, 2, ranks=6, concurrent=2) by Rabenseifner at
        # a time that does not depend on the inter-node level (reported to the core's owner)
        spans = d > 1 and -(-d // rpn) > 1 and d % rpn == 0
        if spans:
            if not (t1_ > t0_):
                raise AssertionError(f"module {comp}'s DP all-reduce across nodes did not slow down on a slower network")
        times.append((t0_, spans))
    if max(times)[1]:
        if not (r1["dp_time"] > r0["dp_time"]):
            raise AssertionError("the step's DP all-reduce across nodes did not slow down")


#: reason class of the claim not reproduced (docs/verdicts.md, Reason classes)
_WHY_NOT = {
    "speedup-up-to-3.6x": ("baseline not modelled", "the paper's 'state-of-the-art distributed training frameworks' "
                           "(their padding to a fixed length, their shape- and TP-dependent kernel efficiency) are not "
                           "in the sources we have; ours is a Megatron plan that pads nothing and fits in one tp=8 stage "
                           "(1.362x at most over our three mixes)"),
}

TECHNIQUE = declare_technique(__name__, claims=with_reasons(CLAIMS, _WHY_NOT))
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
