"""Poseidon (Zhang et al., USENIX ATC 2017): the technique declaration.

Variants, parameters, fidelities, the paper's claims (each with where in the paper the number is:
the abstract; two from a third-party summary, unverified), their null predictions, and the
declared properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
import math

from suite.api import Assumption, AtMost, Claim, Gain, Null, ScenarioSpec, declare_technique, with_reasons


__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "ratio_poseidon_over_ps"]


_10G, _40G = "titanx-cluster-10gbe", "titanx-cluster-40gbe"


def ratio_poseidon_over_ps(results):
    """Poseidon's speed-up over the `ps` baseline's at the same point (claim derive function)."""
    return results["poseidon"]["speedup"] / results["ps"]["speedup"]


_BW_NOTE = ("Bandwidth is not stated in the abstract for this point; we assume "
            "40 GbE, the testbed's fastest setting in the 40/30/20/10/5/2 GbE sweep (secondary source), because "
            "the abstract singles out 10 GbE only as the 'limited bandwidth' case of the VGG19-22K claim. ")
_TF_NOTE = ("Open-source TensorFlow 0.10 is mapped to our `ps` variant (parameter server, communication after "
            "backward, no SFB): TF's gRPC PS with no layer-wise scheduling is closest to it; TF's serialisation "
            "and gRPC overheads are not modelled, so `ps` is an optimistic stand-in for TF. ")
_SPEEDUP_NOTE = ("Speed-up read as aggregate throughput at N nodes over one node's with the same per-node batch "
                 "(an assumption: the docs frame results as throughput; the paper's definition was not seen). ")

CLAIMS = [
    Claim(
        "vgg19-22k-16n-10gbe",
        "Poseidon-enabled Caffe and TensorFlow reach 15.5x speed-up on 16 single-GPU machines over 10 GbE on VGG19-22K",
        source="abstract", verified=True,
        scenario=ScenarioSpec(variant="poseidon", profile=_10G, workload="vgg19-22k",
                              params={"nodes": 16, "batch_per_node": 32}),
        metric="speedup", expect=Gain(15.5, rel=0.2),
        nulls=(Null("ideal linear scaling (16 nodes)", value=16.0), Null("plain WFBP", variants={"poseidon": "wfbp"}),
               Null("parameter server", variants={"poseidon": "ps"})),
        note=_SPEEDUP_NOTE + "One model stands for both Caffe and TF (framework compute differences not modelled). "
             "15.5x of 16 is 97% scaling efficiency: the band [12.6, 18.4] contains ideal scaling, so this claim "
             "cannot tell Poseidon from a perfect system (not discriminating by construction).",
    ),
    Claim(
        "inception-v3-32n",
        "Poseidon-enabled TensorFlow reaches 31.5x speed-up with 32 single-GPU machines on Inception-V3",
        source="abstract", verified=True,
        scenario=ScenarioSpec(variant="poseidon", profile=_40G, workload="inception-v3",
                              params={"nodes": 32, "batch_per_node": 32}),
        metric="speedup", expect=Gain(31.5, rel=0.2),
        nulls=(Null("ideal linear scaling (32 nodes)", value=32.0), Null("plain WFBP", variants={"poseidon": "wfbp"}),
               Null("parameter server", variants={"poseidon": "ps"})),
        note=_BW_NOTE + _SPEEDUP_NOTE + "31.5x of 32 is 98% scaling efficiency: the band contains ideal scaling, "
             "and WFBP without HybComm already scales near-linearly on Inception-V3 (few fc parameters), so the "
             "claim does not test HybComm.",
    ),
    Claim(
        "inception-v3-32n-tf",
        "Open-source TensorFlow reaches 20x at the same point (32 machines, Inception-V3)",
        source="abstract", verified=True,
        scenario=ScenarioSpec(variant="ps", profile=_40G, workload="inception-v3",
                              params={"nodes": 32, "batch_per_node": 32}),
        metric="speedup", expect=Gain(20.0, rel=0.2),
        nulls=(Null("ideal linear scaling (32 nodes)", value=32.0),),
        note=_TF_NOTE + _BW_NOTE + _SPEEDUP_NOTE,
    ),
    Claim(
        "inception-v3-32n-vs-tf",
        "Poseidon is a 50% improvement over open-source TensorFlow at 32 machines on Inception-V3 (31.5x vs 20x)",
        source="abstract", verified=True,
        cases={
            "poseidon": ScenarioSpec(variant="poseidon", profile=_40G, workload="inception-v3",
                                     params={"nodes": 32, "batch_per_node": 32}),
            "ps": ScenarioSpec(variant="ps", profile=_40G, workload="inception-v3",
                               params={"nodes": 32, "batch_per_node": 32}),
        },
        derive=ratio_poseidon_over_ps, expect=Gain(1.5, rel=0.2),
        nulls=(Null("no gain", value=1.0), Null("plain WFBP for Poseidon", variants={"poseidon": "wfbp"})),
        note="Ratio of speed-ups poseidon / ps; '50% improvement' judged on the gain (0.5 +- 20%: [1.4, 1.6]). "
             + _TF_NOTE + _BW_NOTE,
    ),
    Claim(
        "tf-vgg19-22k-16n-40gbe",
        "With 40 GbE and Titan X, TensorFlow reaches only 8x on 16 machines",
        source="secondary summary", verified=False,
        scenario=ScenarioSpec(variant="ps", profile=_40G, workload="vgg19-22k",
                              params={"nodes": 16, "batch_per_node": 32}),
        metric="speedup", expect=Gain(8.0, rel=0.2),
        nulls=(Null("ideal linear scaling (16 nodes)", value=16.0),),
        note="Read only in a third-party summary of the paper (rajatbisht.net, 'Problem'; "
             "secondary source). The model is not named in the summary; we assume VGG19-22K, the model of the surrounding "
             "motivation. " + _TF_NOTE + _SPEEDUP_NOTE,
    ),
    Claim(
        "tf-vgg19-22k-32n-slower-than-1",
        "Open-source TensorFlow on 32 machines is slower than on 1 machine on VGG19-22K",
        source="secondary summary", verified=False,
        scenario=ScenarioSpec(variant="ps", profile=_40G, workload="vgg19-22k",
                              params={"nodes": 32, "batch_per_node": 32}),
        metric="speedup", expect=AtMost(1.0),
        nulls=(Null("ideal linear scaling (32 nodes)", value=32.0),),
        note="Read only in a third-party summary of the paper (rajatbisht.net, 'Problem'; "
             "secondary source). Bandwidth not given; we assume 40 GbE, the testbed of the companion '8x at 40 GbE' statement. "
             + _TF_NOTE + _SPEEDUP_NOTE,
    ),
]


# --------------------------------------------------------------------------- properties


def _model_result(tech, scenario, **params):
    sc = dataclasses.replace(scenario, fidelity="model", params={**scenario.params, **params})
    return tech.evaluate(sc)


def _fit(scenario):
    """The scenario with ``nodes`` (and ``servers``) clamped to what its profile holds, so that a
    property is checked on any generated profile instead of being skipped."""
    prof = scenario.profile
    from suite_poseidon import model

    have = prof.num_nodes if prof is not None and prof.kind == "cluster" and prof.network else 1
    nodes = min(model.nodes_of(scenario.params, prof), have)
    servers = scenario.params.get("servers")
    servers = None if servers is None else min(int(servers), nodes)
    return dataclasses.replace(scenario, params={**scenario.params, "nodes": nodes, "servers": servers})


def check_hybcomm_argmin(tech, scenario):
    """HybComm picks, per layer, the argmin of the two cost formulas; never SFB for a non-fc layer."""
    from suite_poseidon import model

    sc = dataclasses.replace(_fit(scenario), variant="poseidon", fidelity="model")
    res = tech.evaluate(sc)
    p = sc.params
    nodes = int(p["nodes"])
    servers = nodes if p.get("servers") is None else int(p["servers"])
    k = int(p["batch_per_node"])
    by_name = {l.name: l for l in sc.workload.layers}
    for row in res.artifacts["layers"]:
        layer = by_name[row["layer"]]
        if not model.sfb_eligible(layer):
            if not (row["scheme"] == "ps"):
                raise AssertionError(f"layer {layer.name} ({layer.kind}) uses {row['scheme']}, expected ps")
            continue
        m, n = layer.grad_shape
        sfb = model.sfb_floats_per_node(m, n, nodes, k)
        ps = model.ps_floats_per_node(m, n, nodes, servers)
        want = "sfb" if sfb <= ps else "ps"
        if not (row["scheme"] == want):
            raise AssertionError(f"layer {layer.name}: chose {row['scheme']}, SFB {sfb} vs PS {ps} floats")


def check_wfbp_bounds(tech, scenario):
    """With overlap, f + max(sum b, sum c) <= T <= f + sum b + sum c."""
    from suite_poseidon import model

    scenario = _fit(scenario)
    p = scenario.params
    prof, wl = scenario.profile, scenario.workload
    nodes = int(p["nodes"])
    servers = nodes if p.get("servers") is None else int(p["servers"])
    for variant in ("wfbp", "poseidon"):
        it = model.iteration_model(wl.layers, variant, nodes, int(p["batch_per_node"]), servers, 0.0, 0.0,
                                   prof.require_device(), float(p["efficiency"]), p["dtype"],
                                   prof if prof.network else None)  # priced as evaluate prices it
        b, c = sum(it.backward), it.comm_time
        lo, hi = it.forward + max(b, c), it.forward + b + c
        tol = 1e-9 * hi
        if not (lo - tol <= it.iteration_time <= hi + tol):
            raise AssertionError(f"{variant}: T={it.iteration_time} not in [{lo}, {hi}]")


def check_bandwidth_monotone(tech, scenario):
    """Iteration time does not increase when the outer network's bandwidth doubles."""
    scenario = _fit(scenario)
    prof = scenario.profile
    if not prof.network:
        return
    faster = prof.with_overrides({"network.-1.bandwidth": f"{2 * prof.network[-1].bandwidth} B/s"})
    t0 = tech.evaluate(dataclasses.replace(scenario, fidelity="model"))["iteration_time"]
    t1 = tech.evaluate(dataclasses.replace(scenario, fidelity="model", profile=faster))["iteration_time"]
    if not (t1 <= t0 * (1 + 1e-12)):
        raise AssertionError(f"iteration time rose from {t0} to {t1} s when bandwidth doubled")


def check_speedup_one_node(tech, scenario):
    """speedup(1 node) == 1 for every variant."""
    r = _model_result(tech, scenario, nodes=1, servers=None)
    if not (math.isclose(r["speedup"], 1.0, rel_tol=1e-12)):
        raise AssertionError(f"speedup at 1 node is {r['speedup']}")


def check_sfb_equals_dense(tech, scenario):
    """Execute: SFB and PS aggregates equal the dense sum (the evaluate raises otherwise)."""
    from suite_poseidon import model

    p = {**scenario.params, "nodes": min(model.nodes_of(scenario.params, None), 4),
         "batch_per_node": min(int(scenario.params["batch_per_node"]), 8), "servers": None}
    res = tech.evaluate(dataclasses.replace(scenario, fidelity="execute", params=p))
    if not (res["max_rel_error"] < 1e-4):
        raise AssertionError(f"max relative error {res['max_rel_error']}")


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_TF = ("TensorFlow 0.10 (the paper's baseline) is mapped to our `ps` variant; its gRPC serialisation and "
       "scheduling overheads are not modelled, so `ps` is an optimistic stand-in")
_WHY_NOT = {
    "inception-v3-32n-tf": ("baseline not modelled", _TF),
    "inception-v3-32n-vs-tf": ("baseline not modelled", _TF),
    "tf-vgg19-22k-16n-40gbe": ("baseline not modelled", _TF),
    "tf-vgg19-22k-32n-slower-than-1": ("baseline not modelled", _TF + "; a slowdown below 1x needs those overheads"),
}
#: where each verdict flips as the inter-node bandwidth falls from 40 GbE, found by bisecting this
#: model's speed-ups on the bandwidth (`--set network.-1.bandwidth=...`): the band edge our number (or
#: the derived ratio) crosses there
_FLIPS = {
    "inception-v3-32n": ("7.62 Gbit/s", "Poseidon's speed-up leaves the band (25.4x) below 7.62 Gbit/s: not reproduced"),
    "inception-v3-32n-tf": ("23.25 Gbit/s", "ps's speed-up is inside the band (16.2x-23.8x) between 7.28 and 23.25 "
                                            "Gbit/s, with the ideal-scaling null outside it: reproduced there"),
    "inception-v3-32n-vs-tf": ("19.5 Gbit/s", "the ratio is inside its band (1.4-1.6) between 12.3 and 19.5 Gbit/s, where "
                                              "plain WFBP equals Poseidon: not discriminating there; above it again at "
                                              "10 GbE (1.64): not reproduced; inside again between 5.02 and 9.08 "
                                              "Gbit/s, below it under 5.02"),
    "tf-vgg19-22k-32n-slower-than-1": ("0.64 Gbit/s", "ps's speed-up on VGG19-22K falls below 1x only under 0.64 Gbit/s: "
                                                      "reproduced there (the ideal-scaling null stays outside)"),
}
#: the verdict past each flip (docs/verdicts.md: flips_to)
_FLIPS_TO = {"inception-v3-32n": "not reproduced", "inception-v3-32n-vs-tf": "not discriminating",
             "inception-v3-32n-tf": "reproduced", "tf-vgg19-22k-32n-slower-than-1": "reproduced"}
_DECIDING = {c: (Assumption("inter-node bandwidth", "40 GbE", flip_at=at, sourced=False, flips_to=_FLIPS_TO[c],
                            note="the abstract does not state it for this point; the testbed's fastest setting. " + how),)
             for c, (at, how) in _FLIPS.items()}


TECHNIQUE = declare_technique(__name__, claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING))
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
