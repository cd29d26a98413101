"""HetSeq (Ding, Botzer, Weninger; arXiv 2009.14783): the technique declaration.

Variants, parameters, fidelities, the claims (the README's performance table and the abstract),
their null predictions, and the declared properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
import math

from suite.api import Assumption, AtLeast, Claim, Gain, Null, ScenarioSpec, declare_technique, with_reasons


__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "throughput_ratio", "ideal_node_speedup"]


_README = "hetseq-readme"
_MIX = "hetseq-v100-titanxp-4n"
_BERT = "bert-base@seq128"

_README_NOTE = (
    "Model BERT-base at sequence length 128 with 32 sequences per GPU (the README's run examples: "
    "uncased_L-12_H-768_A-12, the phase-one corpus test_128, --max-sentences 32; the table names no model). "
    "Calibration: the 1-node row (2.60 s/step) gives the compute efficiency, the 2-node row (2.69 s/step, "
    "1.72x) the inter-node bandwidth, so 1.72x is shown but not judged. Speed-up as the README defines it, the "
    "1-node training time over n nodes'; our 1-node time is steps x s/step = 8.04 d, while the README lists "
    "7.19 d (steps x s/step disagrees with its own time column), which biases our speed-ups UP against the "
    "README's (with the README's own s/step its speed-ups would read 1.93, 3.72, 6.65). ")

_NOT_REPRODUCED = (
    "NOT reproduced: with the calibrated bandwidth the ring all-reduce of the 438 MB gradient costs about the "
    "same at 2, 4 and 8 nodes (one flow per NIC, 2(P-1)/P of the message), so our s/step stays near 2.70 s "
    "while the README's grows to 2.794 s and 3.126 s; that growth (stragglers, synchronisation, data loading "
    "at scale) is not in the model, and the 7.19 d vs 8.04 d inconsistency adds about 12%. ")


def ideal_node_speedup(results):
    """Null of the README claims: our 1-node time scaled ideally by the node count (zero communication, no
    slower step), against the claim's 1-node reference: ``reference / (one_node_time / nodes)`` (1). It is
    the node count when the reference is ours (the default) and follows ``one_node_days`` when it is not."""
    r = results["main"]
    reference = r["node_speedup"] * r["train_time"]
    return reference / (r["one_node_time"] / r["nodes_used"])


def throughput_ratio(results):
    """Throughput of the larger (mixed) cluster over the smaller (fast-only) one (claim derive)."""
    return results["mix"]["throughput"] / results["fast"]["throughput"]


CLAIMS = [
    Claim(
        "readme-speedup-4n",
        "HetSeq trains BERT 3.22x faster on 4 nodes (16 GPUs) than on 1 node (4 GPUs), 5 epochs",
        source="README 'Performance table', row 4 nodes (yifding/hetseq at 02d3107)", verified=True,
        scenario=ScenarioSpec(variant="hetseq", profile=_README, workload=_BERT, params={"nodes": 4}),
        metric="node_speedup", expect=Gain(3.22, rel=0.2),
        nulls=(Null("ideal scaling of our 1-node time (4 nodes)", derive=ideal_node_speedup),),
        note=_README_NOTE + _NOT_REPRODUCED,
    ),
    Claim(
        "readme-speedup-8n",
        "HetSeq trains BERT 5.94x faster on 8 nodes (32 GPUs) than on 1 node (4 GPUs), 5 epochs",
        source="README 'Performance table', row 8 nodes (yifding/hetseq at 02d3107)", verified=True,
        scenario=ScenarioSpec(variant="hetseq", profile=_README, workload=_BERT, params={"nodes": 8}),
        metric="node_speedup", expect=Gain(5.94, rel=0.2),
        nulls=(Null("ideal scaling of our 1-node time (8 nodes)", derive=ideal_node_speedup),),
        note=_README_NOTE + _NOT_REPRODUCED,
    ),
    Claim(
        "heterogeneous-scaling",
        "HetSeq scales over heterogeneous systems: adding slower nodes (TITAN Xp) to V100 nodes raises training "
        "throughput (by >= 2%)",
        source="abstract ('Experiments with transformer translation and BERT language model shows that HetSeq "
               "scales over heterogeneous systems')", verified=True,
        cases={
            "fast": ScenarioSpec(variant="hetseq", profile=_MIX, workload=_BERT, params={"nodes": 2}),
            "mix": ScenarioSpec(variant="hetseq", profile=_MIX, workload=_BERT, params={"nodes": 4}),
        },
        derive=throughput_ratio, expect=AtLeast(1.02),
        nulls=(Null("ddp-equal-batch on the same mix", variants={"hetseq": "ddp-equal-batch"}),
               Null("no gain", value=1.0)),
        note="The abstract's statement is qualitative; '>= 2% more throughput' is our reading of 'scales', judged "
             "at one fixed point: 2 V100 nodes against the same 2 plus 2 TITAN Xp nodes (our assumed mix, "
             "hetseq-v100-titanxp-4n), 32 sequences per GPU, the README cluster's calibrated network. A TITAN Xp "
             "has 77% of a V100's fp32 peak, so even equal batches (DDP) gain from the slower nodes: the "
             "ddp-equal-batch null lies in the band too and the verdict can only be 'not discriminating'. The "
             "null fails only for slow GPUs under about half the fast one's speed (sweep in the docs page).",
    ),
]


# --------------------------------------------------------------------------- properties


def _fit(scenario):
    """The scenario at model fidelity with ``nodes`` clamped to what its profile holds and a
    batch small enough for any generated device's memory."""
    prof = scenario.profile
    have = prof.num_nodes if prof is not None and prof.kind == "cluster" and prof.network else 1
    from suite_hetseq import model

    nodes = max(1, min(model.nodes_of(scenario.params, prof), have, 8))
    params = {**scenario.params, "nodes": nodes, "batch_per_gpu": min(int(scenario.params["batch_per_gpu"]), 8),
              "global_batch": None}
    return dataclasses.replace(scenario, fidelity="model", params=params)


def _eval(tech, scenario, **kw):
    from suite.api import Skip

    try:
        return tech.evaluate(dataclasses.replace(scenario, **kw))
    except Skip:
        return None


def check_equal_batches(tech, scenario):
    """On a homogeneous profile, ``hetseq`` equals ``ddp-equal-batch`` (same batches, same step)
    and every rank's compute is equal within one sample's time."""
    import numpy as np

    sc = _fit(scenario)
    if sc.profile is None or (sc.profile.ext or {}).get("mix"):
        return
    h = _eval(tech, sc, variant="hetseq")
    d = _eval(tech, sc, variant="ddp-equal-batch")
    if h is None or d is None:
        return
    if not (h.artifacts["batches"] == d.artifacts["batches"]):
        raise AssertionError(f"batches differ: {h.artifacts['batches']} vs " \
                                                             f"{d.artifacts['batches']}")
    if not (math.isclose(h["iteration_time"], d["iteration_time"], rel_tol=1e-12)):
        raise AssertionError('failed: math.isclose(h["iteration_time"], d["iteration_time"], rel_tol=1e-12)')
    comp = np.array(h.artifacts["setup"]["rank_compute_s"])
    b = np.array(h.artifacts["batches"])
    per_sample = float(np.max(comp[b > 0] / b[b > 0]))
    if not (comp.max() - comp.min() <= per_sample * (1 + 1e-9)):
        raise AssertionError(f"rank compute spread {comp.max() - comp.min()} s")


def check_speedup_bound(tech, scenario):
    """On a homogeneous profile: node speed-up <= node ratio (up to the rounding of the step
    counts), so the expansion is <= 1; speed-up over one device <= the GPU count."""
    sc = _fit(scenario)
    if sc.profile is None or (sc.profile.ext or {}).get("mix"):
        return
    for v in ("hetseq", "ddp-equal-batch"):
        r = _eval(tech, sc, variant=v)
        if r is None:
            continue
        st = r.artifacts["setup"]
        ratio = st["ranks"] / st["ranks_per_node"]
        slack = 1.0 + st["global_batch"] / float(sc.params["samples"])
        if not (r["node_speedup"] <= ratio * slack * (1 + 1e-9)):
            raise AssertionError(f"{v}: node speed-up {r['node_speedup']} > node ratio {ratio}")
        if not (r["speedup"] <= st["ranks"] * (1 + 1e-9)):
            raise AssertionError(f"{v}: speed-up {r['speedup']} > {st['ranks']} GPUs")


def check_proportional_no_slower(tech, scenario):
    """``hetseq``'s step is never slower than ``ddp-equal-batch``'s by more than one sample of
    the slowest rank, and never faster than the balanced bound ``B / sum_r(1/t_r) + t_AR``."""
    import numpy as np

    from suite_hetseq import model

    sc = _fit(scenario)
    if sc.profile is None:
        return
    h = _eval(tech, sc, variant="hetseq")
    d = _eval(tech, sc, variant="ddp-equal-batch")
    if h is None or d is None:
        return
    comp = np.array(h.artifacts["setup"]["rank_compute_s"])
    b = np.array(h.artifacts["batches"])
    wl = sc.workload
    devs = model.rank_devices(sc.profile, len(b))
    t = model.sample_times(float(wl.fwd_flops + wl.bwd_flops), devs, float(sc.params["efficiency"]),
                           sc.params["dtype"])
    if not (h["iteration_time"] <= d["iteration_time"] + float(t.max()) * (1 + 1e-9)):
        raise AssertionError('failed: h["iteration_time"] <= d["iteration_time"] + float(t.max()) * (1 + 1e-9)')
    bound = b.sum() / np.sum(1.0 / t) + h["comm_time"]
    if not (h["iteration_time"] >= bound * (1 - 1e-9)):
        raise AssertionError(f"step {h['iteration_time']} below balanced bound {bound}")
    if not (comp.max() == h["compute_time"]):
        raise AssertionError('failed: comp.max() == h["compute_time"]')


def check_union_gradient(tech, scenario):
    """Execute: any split over the ranks, dummy batches included, gives the single-process step on
    the union (``oracle_error`` <= 1e-10), with one all-reduce per step (on the digits: execute
    runs no layer-table workload)."""
    K = 5
    p = {**scenario.params, "exec_ranks": K, "dummy_ranks": min(int(scenario.params["dummy_ranks"]), 2),
         "steps": 3, "batch_per_gpu": 6, "hidden": 0}
    r = tech.evaluate(dataclasses.replace(scenario, fidelity="execute", profile=None, workload=None, params=p))
    if not (r["oracle_error"] <= 1e-10):
        raise AssertionError(f"oracle_error {r['oracle_error']}")
    if not (r["allreduces_per_step"] == 1.0):
        raise AssertionError('failed: r["allreduces_per_step"] == 1.0')


class _StepOnly:
    """The model's n-node step alone, without the 1-node reference the speed-up needs: what the
    kit's network-sensitivity check evaluates in :func:`check_network_levels`, so that the
    collectives it records are exactly the all-reduce inside ``comm_time`` and ``iteration_time``."""

    def __init__(self, name: str):
        self.name = name

    def evaluate(self, scenario):
        from suite.api import Result

        from suite_hetseq import model

        p = scenario.params
        ranks = int(p["nodes"]) * scenario.profile.devices_per_node
        B = int(p["global_batch"] or int(p["batch_per_gpu"]) * ranks)
        s = model.step(scenario.workload, scenario.profile, ranks, B, scenario.variant, float(p["efficiency"]),
                       p["dtype"], p["algorithm"], float(p["grad_bytes"]))
        res = Result()
        res.add("iteration_time", s.time, "s", "lower")
        res.add("comm_time", s.t_allreduce, "s", "lower")
        res.add("compute_time", s.t_compute, "s", "lower")
        res.add("throughput", s.throughput, "samples/s", "higher")
        return res


def check_network_levels(tech, scenario):
    """The kit's network-sensitivity check (:func:`suite.perf.sensitivity.check_network_sensitivity`:
    every level slowed in bandwidth, latency and topology) on the n-node step alone
    (:class:`_StepOnly`); then, on the whole model, a ten-fold slower bandwidth on a level the
    gradient all-reduce crosses never lowers the step time and, on the level that bounds the
    ring, raises it; a level it does not cross (the inter-node level of a 1-node run) changes no
    metric. (The kit's family check is not declared: on the whole model it also records the
    1-node reference's intra-node all-reduce, whose slow-down shows in ``node_speedup``, not in
    ``comm_time``.)"""
    from suite.api import check_network_sensitivity

    sc = _fit(scenario)
    prof = sc.profile
    if prof is None or not prof.network:
        return
    base = _eval(tech, sc)
    if base is None:
        return
    problems = check_network_sensitivity(_StepOnly(f"{tech.name} ({sc.variant}, n-node step)"), sc)
    if not (not problems):
        raise AssertionError(problems[0])
    L = len(prof.network)
    if base.artifacts["setup"]["ranks"] == 1:
        crossed = set()
    elif int(sc.params["nodes"]) == 1 and L >= 2:
        crossed = set(range(L - 1))  # one node: the inter-node level is not crossed
    else:
        crossed = set(range(L))
    for i, level in enumerate(prof.network):
        slow = prof.with_overrides({f"network.{i}.bandwidth": f"{level.bandwidth / 10!r} B/s"})
        got = _eval(tech, sc, profile=slow)
        if got is None:
            continue
        if i in crossed:
            if not (got["iteration_time"] >= base["iteration_time"] * (1 - 1e-12)):
                raise AssertionError(f"network.{i} bandwidth / 10: step fell {base['iteration_time']} -> {got['iteration_time']}")
        else:
            for k in ("iteration_time", "comm_time", "speedup", "node_speedup"):
                if not (math.isclose(got[k], base[k], rel_tol=1e-12)):
                    raise AssertionError(f"network.{i} not crossed but {k} changed")
    if crossed:
        worst = max(crossed)
        lvl = prof.network[worst]
        slow = prof.with_overrides({f"network.{worst}.bandwidth": f"{lvl.bandwidth / 1000!r} B/s"})
        got = _eval(tech, sc, profile=slow)
        if got is not None:
            if not (got["comm_time"] > base["comm_time"]):
                raise AssertionError(f"network.{worst} bandwidth / 1000 left comm_time unchanged")


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_WHY_NOT = {
    "readme-speedup-4n": ("source imprecise", "the README's own seconds per step give 3.72 at 4 nodes (2.60 s x 4 / "
                          "2.794 s), outside the band [2.776, 3.664] built from its training-time column; its 1-node "
                          "time (7.19 d) is not its steps x s/step (8.04 d), and dividing by 7.19 d instead puts ours "
                          "inside (3.445) but also the ideal-scaling null computed on that reference (4 x 7.19 / 8.04 = "
                          "3.577): not discriminating; a reference between 7.37 d and 7.64 d gives reproduced; so do two of "
                          "our assumptions at the 8.04 d reference: the README's unnamed fabric (a link between 0.70 and "
                          "2.94 GB/s per node, not the 5.843 GB/s calibrated on 2 nodes, e.g. 10 GbE: 3.234) and the "
                          "all-reduce algorithm (tree at the calibrated bandwidth: 3.591)"),
    "readme-speedup-8n": ("setup unknown", "the README's own seconds per step give 6.65 at 8 nodes, inside the band: "
                          "what fails is our 8-node step (2.705 s, README 3.126 s), and the README names no fabric: we "
                          "assume a non-blocking one, each node's link at the 5.843 GB/s calibrated on its 2-node row "
                          "at every node count, so the ring all-reduce costs nearly the same at 2, 4 and 8 nodes; a "
                          "fabric tapered below 1.92 GB/s per node at 8 nodes puts ours inside the band (1.91 GB/s: "
                          "6.923 <= 6.928), and so does the README's 1-node time 7.19 d (6.877; the ideal-scaling null "
                          "computed on it, 8 x 7.19 / 8.04 = 7.155, outside)"),
}
_ONE_NODE = "1-node reference time (steps x our 1-node s/step, not the README's time column)"
_ONE_NODE_NOTE = ("both are the README's: its 1-node row's 267,139 steps x 2.60 s/step = 8.04 d (ours, the model "
                  "calibrated on that row) and its time column, 7.19 d; which one the speed-up divides is our choice. "
                  "--param one_node_days=T (the ideal-scaling null, our 1-node time over the node count, moves with "
                  "it: n x T / 8.04 d): ")
_DECIDING = {c: (Assumption("model (BERT-base, seq 128, 32 sequences per GPU)", "bert-base", sourced=True,
                            source="the README's run examples (uncased_L-12_H-768_A-12, test_128, --max-sentences 32)"),
                 Assumption(_ONE_NODE, "8.04 d", flip_at=at, sourced=False,
                            flips_to=f"reproduced (to {last}; not discriminating below)", note=_ONE_NODE_NOTE + how))
             for c, at, last, how in (
                 ("readme-speedup-4n", "about 7.65 d", "7.37 d",
                  "7.65 d gives 3.666 (above [2.776, 3.664]), 7.64 d 3.661 (inside; the null 3.801 outside): "
                  "reproduced to 7.37 d (null 3.667); from 7.36 d the null (3.662) lands inside: not discriminating, "
                  "as at the README's 7.19 d (3.445, null 3.577)"),
                 ("readme-speedup-8n", "about 7.24 d", "6.97 d",
                  "7.25 d gives 6.934 (above [4.952, 6.928]), 7.24 d 6.924 (inside; the null 7.205 outside): "
                  "reproduced, as at the README's 7.19 d (6.877, null 7.155), to 6.97 d; from 6.96 d the null "
                  "(8 x T / 8.04 d = 6.926) lands inside"))}


def _fabric(nodes: int, flip_at: str, note: str, flips_to: str = "") -> Assumption:
    """The README's unnamed inter-node fabric, assumed at *nodes* nodes (our assumption: the profile's
    5.843 GB/s is calibrated on the README's 2-node row, the README names no network)."""
    return Assumption("inter-node fabric: non-blocking, every node's link at the bandwidth calibrated on 2 nodes "
                      f"(network.1.bandwidth at {nodes} nodes)", "5.843 GB/s", flip_at=flip_at, sourced=False,
                      flips_to=flips_to, note="the README names no network; --set network.1.bandwidth at "
                                              f"{nodes} nodes: " + note)


_ALGORITHM = ("all-reduce algorithm (--param algorithm; a modelling choice, the README names none)", "ring")
_ALGORITHM_NOTE = ("the tree prices the same ring-calibrated 5.843 GB/s: 4 nodes 3.5906, 8 nodes 6.8316, each in "
                   "its band with the ideal-scaling null (4, 8) outside; hierarchical (3.833, 7.614) and auto "
                   "(3.856, 7.696) stay above; the tree recalibrated on the README's rows 1-2 (efficiency 0.0711, "
                   "10.0 GB/s) gives 3.741 and 7.247, not reproduced: the flip is the ring's calibration carried "
                   "to the tree")
_DECIDING["readme-speedup-4n"] += (
    _fabric(4, "about 2.94 GB/s", "2.945 GB/s gives 3.6644 (above [2.776, 3.664]), 2.94 GB/s 3.6638 (inside; "
               "the null 4 outside): reproduced down to 0.70 GB/s (2.7865); 0.69 GB/s gives 2.7738, below the band",
            flips_to="reproduced (to 0.70 GB/s; not reproduced below)"),)
_DECIDING["readme-speedup-8n"] += (
    _fabric(8, "1.92 GB/s", "1.92 GB/s gives 6.9287 (outside [4.952, 6.928]), 1.91 GB/s 6.9234 (inside), step "
               "3.00 s (README 3.126 s)"),)
_DECIDING = {c: a + (Assumption(*_ALGORITHM, flip_at="tree", sourced=False, flips_to="reproduced",
                                note=_ALGORITHM_NOTE),) for c, a in _DECIDING.items()}


TECHNIQUE = declare_technique(__name__, claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING))
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
