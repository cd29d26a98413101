"""DHelix / DHeLlam (Wang et al., arXiv 2411.15871; ICCD 2025): the technique declaration.

Variants, parameters, fidelities, the paper's claims (the v1 abstract's numbers, read in the
paper's arXiv v1 abstract; the authors' TWIST blog's numbers as unverified ones) and
the declared properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses

from suite.api import (Approx, Assumption, AtMost, Between, Claim, Gain, Null, Ordered, ParameterError, ScenarioSpec,
                       Skip, declare_technique, with_reasons)


__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "VARIANTS", "PARAMETERS", "PLAN_V1", "H800_ROWS",
           "H200_ROWS"]


#: The one plan for the v1 clusters (the paper's per-model plans are not in the text we read).
PLAN_V1 = {"tp": 8, "pp": 2, "dp": 4, "mbs": 1, "seq": 2048, "gbs": 128}
V1_WORKLOADS = ("llama3-8b", "gpt3-6.7b")

#: TWIST blog, 32 x H800, Qwen3-32B-like, GBS 400: (tp, pp, dp, mbs, seq) -> (Megatron MFU, TWIST MFU) %.
H800_ROWS = {
    (2, 4, 4, 1, 4096): (47.27, 55.49),
    (4, 2, 4, 2, 4096): (44.73, 55.81),
    (8, 1, 4, 2, 4096): (36.11, 46.13),
    (4, 2, 4, 1, 8192): (46.08, 52.00),
    (8, 1, 4, 1, 8192): (37.40, 48.09),
}
#: TWIST blog Fig. 2, 8 x H200, Qwen3-14B-like, GBS 100, MBS 4, seq 8192: (tp, pp) -> MFU %.
H200_ROWS = {(4, 2): (46.0, 49.0), (8, 1): (41.0, 47.0)}


def _gain_cases(profile, workload, params):
    return {"dhelix": ScenarioSpec(variant="dhelix", profile=profile, workload=workload, params=params),
            "megatron": ScenarioSpec(variant="megatron", profile=profile, workload=workload, params=params)}


def derive_gain(results):
    """Throughput of dhelix over megatron's (same scenario): ``T_megatron / T_dhelix``."""
    return results["megatron"]["iteration_time"] / results["dhelix"]["iteration_time"]


def derive_max_mfu(results):
    """The largest dhelix MFU (%) over the modelled workloads."""
    return max(r["mfu"] for k, r in results.items() if k.startswith("dhelix"))


def derive_h100(results):
    """{"h100": gain there, "lowest other": the smaller of the A40 and A800 gains} (per workload
    averaged)."""
    def g(prefix):
        vals = [results[f"{prefix}:{w}:megatron"]["iteration_time"] / results[f"{prefix}:{w}:dhelix"]["iteration_time"]
                for w in V1_WORKLOADS]
        return sum(vals) / len(vals)
    return {"h100": g("h100"), "lowest other": min(g("a40"), g("a800"))}


def derive_memory(results):
    """dhelix's peak memory over megatron's."""
    return results["dhelix"]["peak_memory"] / results["megatron"]["peak_memory"]


_NULLS_GAIN = (Null("megatron (no co-execution)", variants={"dhelix": "megatron"}),
               Null("intra-overlap (the better baseline)", variants={"dhelix": "intra-overlap"}))
_V1_NOTE = ("v1 abstract (read). One plan for every v1 case, TP8 PP2 DP4, MBS 1, seq 2048 (GPT-3's context), GBS 128 (the paper's "
            "plans and its model sizes are not in the text we read; the summaries' sizes are AI-generated), on "
            "llama3-8b and gpt3-6.7b. Interconnects from a secondary summary. ")

CLAIMS = []
for _prof, _lo, _hi, _src in (("a40-64", 1.12, 1.40, "12-40%"), ("a800-64", 1.02, 1.29, "2-29%")):
    for _w in V1_WORKLOADS:
        CLAIMS.append(Claim(
            f"gain-{_prof}-{_w}",
            f"DHelix improves training throughput over Megatron-LM by {_src} on the 64-GPU "
            f"{_prof.split('-')[0].upper()} cluster ({_w})",
            source="abstract (v1)", verified=True, cases=_gain_cases(_prof, _w, PLAN_V1), derive=derive_gain,
            expect=Between(_lo, _hi), nulls=_NULLS_GAIN,
            note=_V1_NOTE + "Judged as a band: each modelled workload's gain must lie in the abstract's range."))

for _prof, _val in (("a40-64", 58.0), ("a800-64", 71.0)):
    CLAIMS.append(Claim(
        f"max-mfu-{_prof}",
        f"DHelix reaches up to {_val:g}% MFU on the 64-GPU {_prof.split('-')[0].upper()} cluster",
        source="abstract (v1)", verified=True,
        cases={f"dhelix:{w}": ScenarioSpec(variant="dhelix", profile=_prof, workload=w, params=PLAN_V1)
               for w in V1_WORKLOADS},
        derive=lambda results: max(r["mfu"] for r in results.values()),
        expect=Approx(_val, rel=0.20),
        nulls=(Null("megatron's MFU there", variants={"dhelix": "megatron"}),),
        note=_V1_NOTE + "Compute efficiency is the device's own (the A800 shares the A100's gemm_bf16 curve, "
                        "calibrated on Megatron-LM SC'21 Table 1; the A40 has no curve and uses the shared "
                        "model's assumed 0.7); the profiles' one NIC per node makes the data-parallel "
                        "reduction dominate (see the docs)."))

_H100_CASES = {}
for _tag, _prof in (("a40", "a40-64"), ("a800", "a800-64"), ("h100", "h100-ndr-fat-tree")):
    for _w in V1_WORKLOADS:
        for _v in ("dhelix", "megatron"):
            _H100_CASES[f"{_tag}:{_w}:{_v}"] = ScenarioSpec(variant=_v, profile=_prof, workload=_w, params=PLAN_V1)
CLAIMS.append(Claim(
    "h100-smaller",
    "On the H100 cluster DHelix's margin over Megatron-LM is smaller than on the A40 and A800 clusters",
    source="abstract (v1)", verified=True, cases=_H100_CASES, derive=derive_h100,
    expect=Ordered(("h100", "lowest other"), margin=0.02, lower=True),
    nulls=(Null("equal gains", value={"h100": 1.0, "lowest other": 1.0}),),
    note=_V1_NOTE + "Ours: the mean gain over the two workloads on 64 of the h100-ndr-fat-tree's GPUs, against the "
                    "smaller of the A40 and A800 mean gains; 2% margin."))

#: docs/verdicts.md, "A claim that follows from the model's own formula": our pricing of dhelix's memory decides it
_MEMORY_DEFECT = ("follows from our own pricing (dhelix = megatron + one layer a of one micro-batch): the ratio "
                  "1 + a / (states + pp Ls a) is 1 + 1/32 on the claim's plan with no model states and under 1.03 once "
                  "they pass 1.3 layers' activations (ours: 127), so it could not fail; the abstract gives no figure "
                  "the formula does not fix")
CLAIMS.append(Claim(
    "memory-under-3pct",
    "The two strands share model states and activation space: under 3% extra memory over Megatron-LM",
    source="abstract (v1)", verified=True,
    cases={"dhelix": ScenarioSpec(variant="dhelix", profile="a800-64", workload="llama3-8b", params=PLAN_V1),
           "megatron": ScenarioSpec(variant="megatron", profile="a800-64", workload="llama3-8b", params=PLAN_V1)},
    derive=derive_memory, expect=AtMost(1.03),
    nulls=(Null("two strands with separate activation buffers", variants={"dhelix": "dhelix-separate"}),),
    defect=_MEMORY_DEFECT,
    note="Peak memory per GPU, our accounting (model states (6 + 12/dp) B/param / (tp pp), 1F1B activations; dhelix one "
         "extra layer of one micro-batch). The 'shared' design is the abstract's; the extra layer is our assumption."))

_Q32, _Q14 = "dhelix-qwen3-32b-like", "dhelix-qwen3-14b-like"
_BLOG = "TWIST blog (authors, 2026), H800 table"
for (tp, pp, dp, mbs, seq), (meg, twist) in H800_ROWS.items():
    prm = {"tp": tp, "pp": pp, "dp": dp, "mbs": mbs, "seq": seq, "gbs": 400}
    CLAIMS.append(Claim(
        f"h800-tp{tp}-pp{pp}-mbs{mbs}-{seq // 1024}k",
        f"TWIST on 32 x H800, Qwen3-32B-like, TP{tp} PP{pp} DP{dp} MBS{mbs} seq {seq // 1024}K: MFU "
        f"{meg} -> {twist}%",
        source=_BLOG, verified=False, cases=_gain_cases("h800-4x8", _Q32, prm), derive=derive_gain,
        expect=Gain(round(twist / meg, 4), rel=0.20), nulls=_NULLS_GAIN,
        note="Unverified (the authors' blog, secondary). The gain is the MFU ratio (same FLOP count). The H800 "
             "cluster's inter-node network is an assumption; Qwen3-32B-like's layers and head size are Qwen3-32B's."))
for (tp, pp), (meg, twist) in H200_ROWS.items():
    prm = {"tp": tp, "pp": pp, "dp": 1, "mbs": 4, "seq": 8192, "gbs": 100}
    CLAIMS.append(Claim(
        f"h200-tp{tp}-pp{pp}",
        f"TWIST on 8 x H200, Qwen3-14B-like, TP{tp} PP{pp}, MBS 4, seq 8K: MFU {meg:g} -> {twist:g}%",
        source="TWIST blog (authors, 2026), Fig. 2", verified=False, cases=_gain_cases("hgx-h200", _Q14, prm),
        derive=derive_gain, expect=Gain(round(twist / meg, 4), rel=0.20), nulls=_NULLS_GAIN,
        note="Unverified (the authors' blog, secondary). GBS 100 gives 25 (TP4 PP2) or 25 (TP8) micro-batches."))

_FIG3 = {"tp": 8, "pp": 1, "dp": 4, "mbs": 1, "seq": 8192, "gbs": 400}
CLAIMS.append(Claim(
    "hidden-83pct",
    "TWIST hides 83% of the communication Megatron-LM exposes in a layer",
    source="TWIST blog (authors, 2026), Fig. 3", verified=False,
    scenario=ScenarioSpec(variant="dhelix", profile="h800-4x8", workload=_Q32, params=_FIG3),
    metric="hidden_fraction", expect=Approx(83.0, rel=0.20),
    nulls=(Null("megatron (nothing hidden)", variants={"dhelix": "megatron"}),
           Null("intra-overlap", variants={"dhelix": "intra-overlap"})),
    note="Unverified (blog). The figure's configuration is not stated: we take the TP8 seq-8K H800 row. Ours: the "
         "share of a layer's TP communication not exposed in the co-executed pair.",
    defect="calibrated on itself: the slow-down of co-executed strands (sigma 0.109) that decides it was read off the "
           "same blog figure as the 83%, and our number leaves the band at sigma 0.1295 (ours 67.62% against a band "
           "from 66.4%)"))
CLAIMS.append(Claim(
    "megatron-exposed-25pct",
    "Megatron-LM exposes communication for 25% of the layer time",
    source="TWIST blog (authors, 2026), Fig. 3", verified=False,
    scenario=ScenarioSpec(variant="megatron", profile="h800-4x8", workload=_Q32, params=_FIG3),
    metric="exposed_fraction", expect=Approx(25.0, rel=0.20),
    nulls=(Null("zero communication", value=0.0),),
    note="Unverified (blog); configuration as hidden-83pct (assumed)."))


# --------------------------------------------------------------------------- properties


def _fit(scenario, **params):
    """The scenario at model fidelity with a plan that fits the profile (tp within a node when it
    can, pp = 1 or 2, dp = 1), on a small llama table; Skip when nothing fits."""
    p = dict(scenario.params)
    p.update(params)
    prof = scenario.profile
    dpn = prof.devices_per_node
    heads = int(scenario.workload.spec["heads"])
    tp = int(p.get("tp", 1))
    while tp > 1 and (heads % tp or tp > prof.num_devices):
        tp //= 2
    p.update(tp=max(tp, 1), pp=1, dp=1, gbs=int(p["mbs"]) * 4)
    del dpn
    return dataclasses.replace(scenario, fidelity="model", params=p)


def _eval(tech, scenario):
    try:
        return tech.evaluate(scenario)
    except ParameterError as exc:
        raise Skip(str(exc)) from None


def _ops(scenario):
    from suite_dhelix import model

    sc = _fit(scenario)
    table = model.rebuilt_table(sc.workload, int(sc.params["seq"]))
    try:
        plan = model.plan_of(sc.params, table, sc.profile)
    except ParameterError as exc:
        raise Skip(str(exc)) from None
    return sc, plan, model.layer_ops(table, plan, sc.profile)


def check_valid_merge(tech, scenario):
    """The DP's plan is a merge: each strand's order kept, every operator exactly once."""
    from suite_dhelix import model

    _sc, _plan, (fwd, bwd) = _ops(scenario)
    _t, plan = model.pair_dp(fwd, bwd, float(scenario.params["sigma"]))
    fi = [i for i, _ in plan if i is not None]
    bj = [j for _, j in plan if j is not None]
    if not (fi == list(range(len(fwd)))):
        raise AssertionError(f"forward order {fi}")
    if not (bj == list(range(len(bwd)))):
        raise AssertionError(f"backward order {bj}")


def check_bounds_and_growth(tech, scenario):
    """max(sum compute, sum comm) <= T(dhelix) <= T(megatron) per layer pair, and the difference
    never drops as communication grows (comm x 1, 2, 4)."""
    from suite_dhelix import model

    _sc, _plan, (fwd, bwd) = _ops(scenario)
    sigma = float(scenario.params["sigma"])
    prev = -1.0
    for k in (1.0, 2.0, 4.0):
        f = [model.Op(o.name, o.compute, o.comm * k) for o in fwd]
        b = [model.Op(o.name, o.compute, o.comm * k) for o in bwd]
        t, _ = model.pair_dp(f, b, sigma)
        ser = model.serial_time(f) + model.serial_time(b)
        lo = max(sum(o.compute for o in f + b), sum(o.comm for o in f + b))
        if not (lo * (1 - 1e-12) <= t <= ser * (1 + 1e-12)):
            raise AssertionError(f"bounds {lo} <= {t} <= {ser} fail at comm x{k}")
        if not (ser - t >= prev - 1e-12 * ser):
            raise AssertionError(f"the gain fell from {prev} to {ser - t} at comm x{k}")
        prev = ser - t


def check_folding(tech, scenario):
    """Folding places each layer once, L / G per GPU, for every pp dividing L / 2."""
    from suite_dhelix import model

    L = int(scenario.workload.spec["layers"])
    for g in range(1, L // 2 + 1):
        if L % (2 * g):
            continue
        parts = model.fold(L, g)
        flat = sorted(x for part in parts for x in part)
        if not (flat == list(range(L))):
            raise AssertionError(f"pp={g}: layers {flat}")
        if not (all(len(part) == L // g for part in parts)):
            raise AssertionError(f"pp={g}: {[len(x) for x in parts]}")


def check_tp_level(tech, scenario):
    """Halving the bandwidth of a level the TP group crosses raises megatron's exposed communication."""
    from suite_dhelix import model

    sc = _fit(scenario, )
    sc = dataclasses.replace(sc, variant="megatron")
    if int(sc.params["tp"]) < 2 or not sc.profile.network:
        raise Skip("tp = 1 or no network: the TP group crosses no level")
    grp = model.tp_group(sc.profile, int(sc.params["tp"]))
    level = 0 if grp.nodes == 1 else len(sc.profile.network) - 1
    if grp.nodes == 1 and (len(sc.profile.network) < 2 and sc.profile.devices_per_node < 2):
        raise Skip("no intra-node level")
    lvl = sc.profile.network[level]
    slow = sc.profile.with_overrides({f"network.{level}.bandwidth": f"{lvl.bandwidth / 2!r} B/s"})
    a = _eval(tech, sc)
    b = _eval(tech, dataclasses.replace(sc, profile=slow))
    # strictly only where the level bounds the TP group's collectives (a ring runs at its slowest
    # level: a halved level that is still not the slowest changes nothing, suite.perf.collective)
    from suite.api import collective_time

    fast_t, slow_t = ([collective_time(op, 2.0**24, grp, p).time for op in ("allgather", "reduce-scatter")]
                      for p in (sc.profile, slow))
    if any(s_ > f_ for f_, s_ in zip(fast_t, slow_t)):
        if not (b["exposed_comm"] > a["exposed_comm"]):
            raise AssertionError(f"{a['exposed_comm']} -> {b['exposed_comm']} s")
    if not (b["exposed_comm"] >= a["exposed_comm"]):
        raise AssertionError(f"{a['exposed_comm']} -> {b['exposed_comm']} s")


#: reason class of each claim not reproduced (docs/verdicts.md, Reason classes)
_PLAN = "on the claim's plan (TP8 PP2 DP4, ours: the paper's per-model plans are not in the text we read)"
_WHY_NOT = {
    "max-mfu-a40-64": ("setup unknown", "no single link reaches the band's floor 46.4% " + _PLAN + ": a 100 Tbit/s "
                       "inter-node network gives 33.3%, a 100 Tbit/s intra-node link 32.8%, a flat GEMM efficiency 1.0 "
                       "with 8 NICs per node 35.0%; both links near-free give 65.0%, so TP8 over the assumed PCIe 4.0 "
                       "switch and DP over one 100 Gbit/s NIC cap it together"),
    "max-mfu-a800-64": ("setup unknown", "no NIC count alone reaches the band's floor 56.8% (8 NICs, 1600 Gbit/s: "
                        "43.1%; 100 Tbit/s: 46.5%): the A100 GEMM curve caps it " + _PLAN + "; with 8 NICs per node "
                        "it flips at a flat GEMM efficiency of about 0.82 (0.8: 55.8%, 0.9: 59.7%), with one NIC at "
                        "none (0.9: 32.9%)"),
    "h100-smaller": ("setup unknown", "the H100 cluster's plans and GEMM efficiency are assumptions (h100-ndr-fat-tree, "
                     "the A40/A800 plan): its network does not decide it (100 to 12,800 Gbit/s: H100 mean gain 1.25 to "
                     "1.39 against 1.155)"),
    "h800-tp2-pp4-mbs1-4k": ("setup unknown", "the blog's H800 setup beyond the table row (its kernels, its NCCL) is not "
                             "stated; neither the assumed inter-node network (100 to 3200 Gbit/s: 1.0616 to 1.0617) nor "
                             "sigma (0 gives 1.072) reaches the band's 1.139"),
    "h800-tp4-pp2-mbs2-4k": ("setup unknown", "sigma (0.109, read off the blog's Fig. 3) decides it: only sigma = 0 "
                             "reaches the band (1.1983, from 1.1982); the assumed inter-node network does not (100 to "
                             "3200 Gbit/s: 1.168 to 1.1725)"),
    "h800-tp4-pp2-mbs1-8k": ("setup unknown", "the H800 cluster's inter-node network and NCCL version are "
                             "assumptions: priced with NCCL's latency floors (0.2.0) ours is 1.155, just above the "
                             "band's edge 1.154; it flips at an inter-node network of about 125 Gbit/s"),
    "h200-tp4-pp2": ("missing mechanism", "ours (1.098) is above the widest ratio integer rounding of Fig. 2 allows "
                     "(49.5/45.5 = 1.088), on one NVLink node: the co-execution slow-down sigma read off the H800 "
                     "Fig. 3 (0.109) would have to reach 0.245 to flip it (0.24: 1.0787, 0.25: 1.0774); what makes "
                     "co-executed strands slower on H200 is not modelled"),
    "h200-tp8-pp1": ("missing mechanism", "ours (1.225) is above the widest ratio integer rounding of Fig. 2 allows "
                     "(47.5/40.5 = 1.173), on one NVLink node: sigma (0.109) would have to reach about 0.33 to flip it "
                     "(0.3: 1.182, 0.35: 1.173); what makes co-executed strands slower on H200 is not modelled"),
    "megatron-exposed-25pct": ("setup unknown", "the figure's configuration is not stated (TP8, 8K on H800 assumed): "
                               "TP4 PP2 gives 20.1% (inside), seq 16K 31.8%"),
}

#: claim id -> the assumptions its verdict depends on, with the value at which it flips (swept with
#: `suite run -t dhelix --variant dhelix --profile h800-4x8 --workload dhelix-qwen3-32b-like` at the claim's plan)
def _h800_net(flip, note):
    return Assumption("H800 cluster's inter-node network (assumed NDR)", "400 Gbit/s", flip_at=flip, sourced=False,
                      note="--set network.1.bandwidth: " + note)


_SIGMA_NOTE = "read off the blog's H800 Fig. 3 (compute 16.5 -> 18.3 ms); swept with --param sigma"
_DECIDING = {
    "h200-tp4-pp2": (Assumption("co-execution slow-down sigma (SIGMA)", 0.109, flip_at=0.245, sourced=False,
                                note=_SIGMA_NOTE + ": 0.24 gives 1.0787, 0.25 1.0774 (band to 1.0782); 0.5 leaves it "
                                     "below (1.048)"),),
    "h200-tp8-pp1": (Assumption("co-execution slow-down sigma (SIGMA)", 0.109, flip_at=0.33, sourced=False,
                                note=_SIGMA_NOTE + ": 0.3 gives 1.182, 0.35 1.173 (band to 1.1756)"),),
    "max-mfu-a800-64": (Assumption("GEMM efficiency (the A100's gemm_bf16 curve)", "curve", flip_at="about 0.82 flat",
                                   sourced=False, note="with 8 NICs per node (1600 Gbit/s; 0.8: 55.8%, 0.9: 59.7%); "
                                                       "with the profile's one NIC no efficiency flips it (0.9: 32.9%)"),),
    "max-mfu-a40-64": (Assumption("intra-node link (PCIe 4.0 switch)", "31.5 GB/s", flip_at=None, sourced=False,
                                  note="swept to 100 Tbit/s: 32.8% alone; with a 100 Tbit/s inter-node network as well "
                                       "65.0% (inside)"),),
    "h100-smaller": (Assumption("H100 cluster's inter-node network (h100-ndr-fat-tree)", "400 Gbit/s", flip_at=None,
                                sourced=False, note="swept on the H100 cases only, 100 to 12,800 Gbit/s: H100 mean gain "
                                                    "1.253 to 1.387, lowest other 1.155"),),
    "h800-tp2-pp4-mbs1-4k": (_h800_net(None, "100 to 3200 Gbit/s: 1.0616 to 1.0617; sigma 0 gives 1.072"),),
    "h800-tp4-pp2-mbs2-4k": (_h800_net(None, "100 to 3200 Gbit/s: 1.168 to 1.1725"),
                             Assumption("co-execution slow-down sigma (SIGMA)", 0.109, flip_at=0.0, sourced=False,
                                        note=_SIGMA_NOTE + ": 0 gives 1.1983 (band from 1.1982), 0.05 1.186")),
    "h800-tp4-pp2-mbs1-8k": (_h800_net("about 125 Gbit/s", "125 gives 1.15416 (inside, to 1.1542), 150 1.15449"),),
    "megatron-exposed-25pct": (Assumption("the figure's configuration", "TP8 PP1 DP4 MBS1 seq 8K (H800 table row)",
                                          flip_at="TP4 PP2", sourced=False,
                                          note="Fig. 3 states none; TP4 PP2 gives 20.1% (inside [20, 30]), seq 16K "
                                               "31.8%, MBS2 36.5%"),),
    # a declared claim defect: no value of either assumption changes its verdict (claim defect); the notes
    # say where our number would leave the band
    "hidden-83pct": (
    Assumption("co-execution slow-down sigma (SIGMA)", 0.109, flip_at=None, sourced=False,
               note="read off the same blog Fig. 3 as the claim's 83% (compute 16.5 -> 18.3 ms), so not an "
                    "independent source; the verdict stays claim defect at any sigma (the defect is declared); our "
                    "number leaves the band at 0.1295: --param sigma 0.129 gives 66.43% (inside [66.4, 99.6]), 0.13 "
                    "66.37% (below)"),
    Assumption("the figure's configuration", "TP8 PP1 DP4 MBS1 seq 8K (H800 table row)", flip_at=None,
               sourced=False, note="Fig. 3 states no configuration; the verdict stays claim defect in any (the "
                                   "defect is declared); TP8 seq 4K gives 61.2% (MBS1) and 62.0% (MBS2), below the "
                                   "band; TP8 seq 8K MBS2 gives 67.6%")),
}

TECHNIQUE = declare_technique(__name__, claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING))
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, VARIANTS, PARAMETERS = TECHNIQUE.paper, TECHNIQUE.variants, TECHNIQUE.parameters
PROPERTIES = TECHNIQUE.properties
