"""Odyssey / Chameleon (Zhou et al., arXiv 2508.21613; INFOCOM 2026): the technique declaration.

Variants (the baselines first), parameters, fidelities, the abstract's claims (the only figures
read in the paper; the v4 title and venue from a secondary source), their null predictions, and
the declared properties.
"""

from __future__ import annotations

import math

from suite.api import (Assumption, AtLeast, Claim, Gain, Null, Paper, Param, Property, ScenarioSpec,
                       SuiteError, Technique, Variant, with_reasons)

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "CLAIM_PARAMS", "CLAIM_SEEDS",
           "max_ratio_vs_replan", "max_ratio_vs_reroute"]

PAPER = Paper(
    title="Odyssey: Adaptive Policy Selection for Resilient Distributed Training "
          "(v4: Chameleon: Adaptive Fault Tolerance for Distributed Training via Real-time Policy Selection)",
    authors=("Yuhang Zhou", "Zhibin Wang", "Peng Jiang", "Haoran Xia", "Junhe Lu", "Qianyu Jiang", "Rong Gu",
             "Hengxi Xu", "Xinjing Huang", "Guanghuan Fang", "Zhiheng Hu", "Jingyi Zhang", "Yongjin Cai",
             "Jian He", "Chen Tian"),
    venue="arXiv (v4 accepted at IEEE INFOCOM 2026, secondary source)",
    year=2025,
    arxiv="2508.21613",
)

VARIANTS = [
    Variant("checkpoint-restart", "classic baseline: periodic blocking checkpoints at the Young/Daly interval; on a "
            "failure, restart from the last checkpoint with a replacement device", baseline=True),
    Variant("redundant", "Bamboo-style redundant computation: each stage also runs its successor's forward and "
            "keeps its state; the predecessor takes over a failed stage", baseline=True),
    Variant("replan", "Oobleck-style dynamic parallelism: a new DP x PP plan and layer partition over the "
            "survivors (and again when a device returns and a better plan exists)", baseline=True),
    Variant("reroute", "ReCycle-style data rerouting: the failed worker's micro-batches go to its data-parallel "
            "peers of the same stage and fill their pipeline bubbles", baseline=True),
    Variant("odyssey", "per failure or repair, the option (reroute/rejoin or re-plan) of least predicted cost "
            "C + (H / T_ref) T over the expected time H to the next failure or repair"),
]

PARAMETERS = {
    # job
    "global_batch": Param(int, default=512, unit="samples", minimum=1,
                          help="sequences per iteration; kept constant through every recovery"),
    "micro_batch": Param(int, default=1, unit="samples", minimum=1, help="sequences per micro-batch"),
    "recompute": Param(str, default="selective", choices=("none", "selective", "full"),
                       help="activation recomputation (Korthikanti et al. 2022), sets the activation stash"),
    "mfu": Param(float, default=0.4, minimum=0.01, maximum=1.0,
                 help="achieved fraction of the device's bf16 peak (ASSUMPTION, one value for every variant)"),
    "tp": Param(int, default=1, choices=(1, 2, 4, 8), help="tensor-parallel degree of every stage"),
    "bubble_fill": Param(float, default=1.0, minimum=0.0, maximum=1.0,
                         help="fraction of a 1F1B bubble that rerouted/redundant work can fill (1 = the "
                              "baselines' best case)"),
    # uniform decoder, when no workload is given
    "layers": Param(int, default=32, minimum=1, help="decoder blocks (no workload given)"),
    "hidden": Param(int, default=4096, minimum=1, help="hidden size (no workload given)"),
    "seq_len": Param(int, default=4096, minimum=1, unit="tokens", help="sequence length (no workload given)"),
    "vocab": Param(int, default=32000, minimum=1, help="vocabulary (no workload given)"),
    "heads": Param(int, default=32, minimum=1, help="attention heads (no workload given)"),
    # reliability (None: the profile's [reliability])
    "device_mtbf": Param(float, default=None, unit="h", minimum=1e-3, optional=True,
                         help="mean time between failures of one device (default: the profile's)"),
    "repair_time": Param(float, default=None, unit="h", minimum=0.0, optional=True,
                         help="mean time to repair a failed device (default: the profile's)"),
    "restart_time": Param(float, default=None, unit="s", minimum=0.0, optional=True,
                          help="checkpoint-restart: time to restart the job (default: the profile's)"),
    "checkpoint_bandwidth": Param(float, default=None, unit="GB/s", minimum=1e-6, optional=True,
                                  help="aggregate bandwidth to checkpoint storage (default: the profile's, "
                                       "else 10 GB/s, an assumption)"),
    "reconfigure_time": Param(float, default=60.0, unit="s", minimum=0.0,
                              help="re-plan: communicator rebuild and restart of the workers, plus the state "
                                   "transfer the model computes (ASSUMPTION)"),
    "failover_time": Param(float, default=10.0, unit="s", minimum=0.0,
                           help="reroute / redundant failover and rejoin: detection and route update (ASSUMPTION)"),
    "checkpoint_rule": Param(str, default="daly", choices=("daly", "young"),
                             help="checkpoint interval: Daly 2006 (higher order) or Young 1974"),
    # simulate
    "horizon": Param(float, default=48.0, unit="h", minimum=0.01, maximum=1e5, help="simulated training time"),
    "failures": Param(str, default="exponential",
                      help="'exponential' (seeded draws from MTBF and repair time), 'none', or a trace file "
                           "path with one 'time,device,event' per line (seconds, index, fail|repair)"),
    # model
    "failed_devices": Param(int, default=1, minimum=0, help="model fidelity: devices that fail (drawn by seed)"),
    # execute
    "exec_dp": Param(int, default=2, minimum=1, maximum=8, help="execute: data-parallel pipelines"),
    "exec_pp": Param(int, default=3, minimum=1, maximum=5, help="execute: pipeline stages (MLP has 5 layers)"),
    "exec_iterations": Param(int, default=6, minimum=1, maximum=200, help="execute: training iterations"),
    "exec_microbatches": Param(int, default=6, minimum=1, maximum=64, help="execute: global micro-batches"),
    "exec_micro_batch": Param(int, default=4, minimum=1, maximum=256, unit="samples",
                              help="execute: samples per micro-batch"),
    "kill_iteration": Param(int, default=2, minimum=0, help="execute: iteration in which a worker dies"),
    "kill_pipeline": Param(int, default=0, minimum=0, help="execute: pipeline of the dying worker"),
    "kill_stage": Param(int, default=1, minimum=0, help="execute: stage of the dying worker"),
    "kill_after": Param(int, default=1, minimum=0,
                        help="execute: the worker dies after this many of its pipeline's micro-batches"),
    "checkpoint_every": Param(int, default=2, minimum=1, help="execute: checkpoint-restart interval (iterations)"),
}

#: the claims' setting, fixed before any of our numbers were seen (see the docs page):
#: a cluster MTBF of 3 h (96 h per device / 32), after "interruptions on average every few hours"
#: (Odyssey §I); everything else at its default. The verdicts depend on this assumption (the
#: shipped ft-32dev profile's sourced figure is 50,000 h per device): see the docs page's sweep
CLAIM_PARAMS = {"device_mtbf": 96.0, "horizon": 48.0}
CLAIM_SEEDS = (0, 1, 2)
_PROFILE, _WORKLOAD = "ft-32dev", "llama2-7b"


def _spec(variant: str, seed: int) -> ScenarioSpec:
    return ScenarioSpec(variant=variant, profile=_PROFILE, workload=_WORKLOAD, params=dict(CLAIM_PARAMS),
                        fidelity="simulate", seed=seed)


def _max_ratio(results, other: str) -> float:
    return max(results[f"odyssey-s{s}"]["average_throughput"] / results[f"{other}-s{s}"]["average_throughput"]
               for s in CLAIM_SEEDS)


def max_ratio_vs_replan(results) -> float:
    """"Up to": the largest odyssey / replan average-throughput ratio over the claim's seeds."""
    return _max_ratio(results, "replan")


def max_ratio_vs_reroute(results) -> float:
    """"Up to": the largest odyssey / reroute average-throughput ratio over the claim's seeds."""
    return _max_ratio(results, "reroute")


_ASSUME = ("ASSUMED setup (the paper's is not stated in the abstract): ft-32dev (4 x 8 A100-80GB, HDR IB; card "
           "type unknown), llama2-7b, global batch 512 x 4096 tokens, micro-batch 1, selective recomputation, "
           "MFU 0.4, device MTBF 96 h (cluster MTBF 3 h), repair 4 h and restart 10 min (profile), reconfiguration "
           "60 s, failover 10 s, bubble fill 1, 48 h simulated, exponential failures with seeds 0-2. "
           "Assumption-dependent: the device MTBF of 96 h replaces the profile's sourced 50,000 h (Llama 3, "
           "section 3.3.4) to match the paper's 'interruptions every few hours'; docs/techniques/odyssey.md gives "
           "the verdicts at 32 h, 96 h and 50,000 h.")

CLAIMS = [
    Claim(
        id="post-recovery-gap-32dev",
        statement="On a 32-card cluster, post-recovery throughput stays within 11.00% of failure-free training",
        source="abstract", verified=True,
        scenario=_spec("odyssey", 0), metric="post_recovery_relative",
        expect=AtLeast(0.89),
        nulls=(Null("ideal: only the failed card's share lost (31/32)", value=31 / 32),
               Null("Oobleck (replan) for Odyssey", variants={"odyssey": "replan"}),
               Null("ReCycle (reroute) for Odyssey", variants={"odyssey": "reroute"})),
        note="A bound, checked as stated (>= 0.89 of failure-free; no extra tolerance). Ours: time-weighted "
             "throughput while a device is down (after the recovery) over the failure-free best plan. An ideal "
             "elastic system that loses exactly the failed card's share (31/32 = 0.969) meets the bound, so the "
             "claim cannot be discriminating. " + _ASSUME,
    ),
    Claim(
        id="avg-throughput-vs-oobleck",
        statement="Up to 1.229x higher average throughput than Oobleck",
        source="abstract", verified=True,
        cases={f"{v}-s{s}": _spec(v, s) for s in CLAIM_SEEDS for v in ("odyssey", "replan")},
        derive=max_ratio_vs_replan, expect=Gain(1.229, rel=0.2),
        nulls=(Null("no gain", value=1.0), Null("Oobleck (replan) for Odyssey", variants={"odyssey": "replan"})),
        note="'Up to 1.229x' judged on the gain (0.229 +- 20%: [1.183, 1.275]). 'Up to' = the largest ratio over "
             "three failure traces. Oobleck = our `replan`. " + _ASSUME,
    ),
    Claim(
        id="avg-throughput-vs-recycle",
        statement="Up to 1.355x higher average throughput than ReCycle",
        source="abstract", verified=True,
        cases={f"{v}-s{s}": _spec(v, s) for s in CLAIM_SEEDS for v in ("odyssey", "reroute")},
        derive=max_ratio_vs_reroute, expect=Gain(1.355, rel=0.2),
        nulls=(Null("no gain", value=1.0), Null("ReCycle (reroute) for Odyssey", variants={"odyssey": "reroute"})),
        note="'Up to 1.355x' judged on the gain (0.355 +- 20%: [1.284, 1.426]). 'Up to' = the largest ratio over "
             "three failure traces. ReCycle = our `reroute`. " + _ASSUME,
    ),
]


# --------------------------------------------------------------------------- properties


def _model_or_skip(scenario):
    from suite.api import Skip

    from suite_odyssey import simulate

    if scenario.profile is None:
        raise Skip("needs a profile")
    try:
        pm, knobs = simulate.build(scenario)
        plan = pm.best_plan(pm.cluster.devices)
    except SuiteError as exc:
        raise Skip(str(exc)) from None
    if plan is None:
        raise Skip("no plan fits the profile's devices")
    return pm, knobs, plan


def _check_adaptive_minimal(tech, scenario):
    """For one failure of each stage of pipeline 0: the chosen option's predicted cost is <= the
    reroute-only and the re-plan-only options' costs."""
    from suite_odyssey.model import choose_policy, expected_window

    pm, knobs, plan = _model_or_skip(scenario)
    n = pm.cluster.devices
    t_ref = plan.iteration_time
    rp = pm.best_plan(n - plan.tp)
    for s in range(plan.pp):
        holes = [0] * plan.pp
        holes[s] = 1
        opts = {"reroute": (knobs.failover_time, pm.reroute_time(plan, holes)),
                "replan": (knobs.reconfigure_time, rp.iteration_time if rp else math.inf)}
        if all(math.isinf(t) for _c, t in opts.values()):
            continue
        window = expected_window(n - 1, 1, pm.cluster.device_mtbf, pm.cluster.repair_time)
        ch = choose_policy(opts, window, t_ref)
        for name, cost in ch.costs.items():
            if not (ch.costs[ch.name] <= cost):
                raise AssertionError(f"chose {ch.name} ({ch.costs[ch.name]:.4g} s) over {name} ({cost:.4g} s)")


def _check_fewer_devices(tech, scenario):
    """The best plan on N - f devices is never faster than the best on N."""
    pm, _k, plan = _model_or_skip(scenario)
    n = pm.cluster.devices
    prev = plan.iteration_time
    for f in range(1, min(4, n)):
        p = pm.best_plan(n - f)
        if p is None:
            break
        if not (p.iteration_time >= prev * (1 - 1e-12)):
            raise AssertionError(f"{n - f} devices ({p.describe()}) faster than {n - f + 1}")
        prev = p.iteration_time


def _check_reroute_conserves(tech, scenario):
    """Rerouting conserves micro-batches: the surviving peers of a stage run all M, once."""
    from suite_odyssey.model import reroute_load

    pm, _k, plan = _model_or_skip(scenario)
    M = pm.job.microbatches
    for f in range(plan.dp):
        load = reroute_load(M, plan.dp, f)
        if not (sum(load) == M and len(load) == plan.dp - f):
            raise AssertionError(f"{f} failed: loads {load} do not sum to {M}")


def _check_no_failure_equal(tech, scenario):
    """With no failures every policy but `redundant` runs at the failure-free best plan's speed."""
    if scenario.variant == "redundant":
        from suite.api import Skip

        raise Skip("redundant computation has a failure-free overhead by design")
    from suite_odyssey import simulate

    pm, knobs, plan = _model_or_skip(scenario)
    knobs.failure_free_mtbf = True
    out = simulate.run_simulation(pm, scenario.variant, [], 3600.0, knobs)
    if not (abs(out["relative_throughput"] - 1.0) < 1e-9):
        raise AssertionError(f"{scenario.variant}: {out['relative_throughput']!r} != 1")


PROPERTIES = [
    Property("adaptive-cost-minimal", "the adaptive choice's predicted cost is <= every fixed option's",
             _check_adaptive_minimal),
    Property("fewer-devices-never-faster", "the best plan on N - f devices is never faster than on N",
             _check_fewer_devices),
    Property("reroute-conserves-microbatches", "rerouted loads sum to the global micro-batch count",
             _check_reroute_conserves),
    Property("no-failure-equal", "without failures all policies but redundant equal the failure-free time",
             _check_no_failure_equal),
]

# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_MTBF = Assumption("device MTBF", "96 h", flip_at=None, sourced=False,
                   note="replaces the profile's sourced 50,000 h (Llama 3, §3.3.4) to match 'interruptions every "
                        "few hours'; the docs page gives the verdicts at 32 h, 96 h and 50,000 h")
_WHY_NOT = {
    "avg-throughput-vs-oobleck": ("setup unknown", "the cluster, model, batch and failure rate are not stated in "
                                  "the abstract; under our assumed setting Odyssey gains 1.6% over Oobleck"),
    "avg-throughput-vs-recycle": ("setup unknown", "as avg-throughput-vs-oobleck: the setting is assumed; ours "
                                  "ties ReCycle (0.998)"),
}
_DECIDING = {c: (_MTBF,) for c in ("post-recovery-gap-32dev", "avg-throughput-vs-oobleck", "avg-throughput-vs-recycle")}


TECHNIQUE = Technique(
    name="odyssey",
    title="Adaptive recovery-policy selection for fault-tolerant LLM training (redundancy, re-plan, reroute)",
    category="fault-tolerance",
    paper=PAPER,
    variants=VARIANTS,
    parameters=PARAMETERS,
    fidelities={"model": "suite_odyssey.simulate:evaluate_model", "simulate": "suite_odyssey.simulate:evaluate",
                "execute": "suite_odyssey.execute:evaluate"},
    claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING),
    properties=PROPERTIES,
    version="0.1.0",
    oracle_tolerance=1e-8,  # largest oracle_error accepted (float64 vs its oracle)
    default_profile=_PROFILE,
    default_workload=_WORKLOAD,
    needs_profile=True,
    needs_workload=False,
    profile_kinds=("cluster",),
    capabilities=frozenset({"recovery-exact", "bytes-conserved"}),
    smoke=[
        ScenarioSpec(variant="odyssey", profile=_PROFILE, workload=_WORKLOAD, fidelity="model"),
        ScenarioSpec(variant="odyssey", profile=_PROFILE, workload=_WORKLOAD, fidelity="simulate",
                     params={"device_mtbf": 96.0, "horizon": 6.0}),
        ScenarioSpec(variant="odyssey", profile=_PROFILE, fidelity="execute"),
    ],
    docs="docs/techniques/odyssey.md",
)
