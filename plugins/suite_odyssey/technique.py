"""Odyssey / Chameleon (Zhou et al., arXiv 2508.21613; INFOCOM 2026): the technique declaration.

Variants (the baselines first), parameters, fidelities, the abstract's claims (the only figures
read in the paper; the v4 title and venue from a secondary source), their null predictions, and
the declared properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import math

from suite.api import (Assumption, AtLeast, Claim, Gain, Null, ScenarioSpec, SuiteError, declare_technique,
                       with_reasons)

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "CLAIM_PARAMS", "CLAIM_SEEDS",
           "max_ratio_vs_replan", "max_ratio_vs_reroute"]


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
           "60 s, failover 10 s, bubble fill 1, 48 h simulated, exponential failures (the ratios: seeds 0-2; the "
           "bound: seed 0). "
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
             "claim cannot be discriminating. One failure trace, seed 0 (seeds 1 and 2 give 0.915 and 0.929). "
             + _ASSUME,
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


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_WHY_NOT = {
    "avg-throughput-vs-oobleck": ("setup unknown", "the cluster, model, batch and failure rate are not stated in "
                                  "the abstract; under our assumed setting Odyssey gains 1.6% over Oobleck; a global "
                                  "batch of 32 (1.229x) or an Oobleck re-plan of about 1,250 s (ours 60 s) puts ours in the band, "
                                  "but only as reproduced (no null): both nulls give 1.0, which the gain band excludes"),
    "avg-throughput-vs-recycle": ("setup unknown", "as avg-throughput-vs-oobleck: the setting is assumed; ours "
                                  "ties ReCycle (0.998); no flip found over the global batch (16-4096) or ReCycle's "
                                  "failover (0-600 s); an MTBF of 3.48 h or less puts ours in the band at some values "
                                  "(3.47 h 1.358x, 2.6 h 1.367x, 1.8 h 1.335x), but only as reproduced (no null): "
                                  "both nulls give 1.0, which the gain band excludes"),
}


def _swept(name: str, value: object, flip: object, note: str, flips_to: str = "") -> Assumption:
    return Assumption(name, value, flip_at=flip, sourced=False, flips_to=flips_to,
                      note="--param, everything else as declared: " + note)


#: past any such flip the claim's only nulls are "no gain" and the baseline in Odyssey's place (the baseline
#: against itself, 1.0): both excluded by the gain band, so the flip leads to no evidence
_NO_NULL = "reproduced (no null)"


#: the device MTBF of each claim (96 h replaces the profile's sourced 50,000 h, Llama 3 §3.3.4, to match
#: 'interruptions every few hours'; the docs page gives the verdicts at 32 h, 96 h and 50,000 h), swept
#: through the scoreboard's judge: its flip, what it flips to, and what the sweep saw
_MTBF = "device MTBF (device_mtbf)"
_DECIDING = {
    "post-recovery-gap-32dev": (_swept(
        _MTBF, "96 h", "50 h", "ours 0.8900 at 50 h and >= 0.89 above it (every 0.5 h to 200 h, and 250 h to 50,000 h: "
        "not discriminating), 0.8899 at 49.95 h, 0.8894 at 49.5 h, 0.888 at 32 h; below 50 h it goes in and out: "
        "inside again at 32.5, 37.5-38 and 42-44 h (0.5 h steps), under 0.89 from 1 to 32 h", "not reproduced"),),
    "avg-throughput-vs-oobleck": (_swept(_MTBF, "96 h", None, "0.5 to 96 h give 1.012-1.087x (band [1.183, 1.275]; "
                                                  "0.02 h steps to 3 h, 0.5 h to 96 h)"),),
    "avg-throughput-vs-recycle": (_swept(
        _MTBF, "96 h", "about 3.48 h", "3.485 h to 96 h give 0.994-1.107x (0.005 h steps to 5 h, 0.01 h to 10 h, "
        "0.5 h to 96 h); 3.465-3.48 h give 1.354-1.358x (inside [1.284, 1.426]), 2.62-3.46 h 1.021-1.247x, "
        "2.6-2.615 h 1.347-1.367x (inside); below, the ratio goes in and out of the band down to 0.55 h (1.8 h "
        "1.335x, 1.07 h 1.334x, 1.015 h 1.408x inside; 1 h 1.625x, 2.5 h 1.106x outside)", _NO_NULL),),
}
_DECIDING["avg-throughput-vs-oobleck"] += (
    _swept("global batch (global_batch)", 512, 32, "32 gives 1.229x (inside [1.183, 1.275]), 48 1.139x, 64 1.146x, "
                                                   "4096 1.005x", _NO_NULL),
    _swept("Oobleck's re-plan time (reconfigure_time)", "60 s", "about 1,250 s",
           "600 s gives 1.087x, 1200 1.176x, 1300 1.193x, 1700 1.265x, 1800 1.283x (above)", _NO_NULL),
)
_DECIDING["avg-throughput-vs-recycle"] += (
    _swept("global batch (global_batch)", 512, None, "16 to 4096 give 1.000-1.008x (band [1.284, 1.426])"),
    _swept("ReCycle's failover time (failover_time)", "10 s", None, "0 to 600 s give 0.997-1.075x"),
)


TECHNIQUE = declare_technique(__name__, claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING))
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
