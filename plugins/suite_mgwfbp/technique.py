"""Declaration of the MG-WFBP technique: paper, variants, parameters, claims, properties.

The claims are the abstract's statements (Shi, Chu & Li, INFOCOM 2019, arXiv 1811.11141):
better scaling than WFBP and SyncEASGD on an 8-node 10GbE cluster, and an optimal solution.
The per-model speed-ups of the paper's figures could not be read; the numbers implied by a
plotting script of the authors' group are code, not paper text, and are not claims here (the docs
page gives them as context).

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from suite.api import (Assumption, AtMost, Claim, Null, Ordered, Result, ScenarioSpec, Technique,
                       declare_technique, with_reasons)


# --------------------------------------------------------------------------- claims

#: The paper's 8-node 10GbE testbed as its INFOCOM implementation (B-Caffe) drives it: a profile
#: like any other, priced by suite.perf.collective_time (docs/techniques/mg-wfbp.md)
TESTBED = "k80-cluster-bcaffe-10gbe"


def _spec(variant: str, workload: str, batch: int, profile: str = TESTBED) -> ScenarioSpec:
    return ScenarioSpec(variant=variant, profile=profile, workload=workload,
                        params={"workers": 8, "batch": batch}, fidelity="model")


def iteration_times(results: Mapping[str, Result]) -> dict[str, float]:
    """Label -> iteration time (s) of each case: the value an :class:`~suite.Ordered` claim judges."""
    return {label: r["iteration_time"] for label, r in results.items()}


#: Margin of the ordering claims (docs/verdicts.md, Tolerances: orderings with a 2% margin).
ORDER_MARGIN = 0.02

_ORDER_NOTE = (
    "The abstract says 'much better scaling efficiency than existing methods WFBP and SyncEASGD'; "
    "judged as an ordering of iteration times with the 2% margin of docs/verdicts.md (a tie fails). "
    "The null runs the baseline in MG-WFBP's place (a tie, so it always fails the ordering); "
    "against SyncEASGD a second null puts plain WFBP in MG-WFBP's place: if WFBP alone is "
    "faster than SyncEASGD by the margin, the ordering does not show what merging adds. "
    "A last null puts DDP's fixed 25 MiB buckets in MG-WFBP's place (the tie null alone can "
    "never be inside): if any merging of layers beats the baseline by the margin, the ordering "
    "does not show what MG-WFBP's merge rule adds. "
    "The testbed is profile k80-cluster-bcaffe-10gbe (B-Caffe's host-staged MPI over 10GbE, priced by "
    "suite.perf.collective_time). "
    "The per-model workloads and batches are ours: the paper's figures could not be read.")

_OPTIMAL_NOTE = (
    "The abstract says 'we develop an optimal solution'; the theorem and its conditions could "
    "not be read. Our value is T(mg-wfbp)/T(best contiguous grouping) - 1, "
    "the best found exactly by dynamic programming over groupings (O(L^2), checked against "
    "brute force for L <= 12); 1e-9 only absorbs float rounding. The nulls are the same gap of "
    "plain WFBP (every layer alone) and of one all-reduce: where either is optimal too, grouping "
    "does not matter at this point and the claim is not discriminating.")

_GAP_NULLS = (Null("plain WFBP's gap", variants={"mg-wfbp": "wfbp"}),
              Null("SyncEASGD's gap", variants={"mg-wfbp": "sync"}))


def _ordering_claim(wl: str, batch: int, other: str, name: str) -> Claim:
    """MG-WFBP faster than *other* by the margin on the 8-node 10GbE testbed."""
    nulls = (Null(f"{other} for MG-WFBP", variants={"mg-wfbp": other}),)
    if other == "sync":
        nulls += (Null("the better baseline (WFBP) for MG-WFBP", variants={"mg-wfbp": "wfbp"}),)
    nulls += (Null("DDP's fixed buckets for MG-WFBP", variants={"mg-wfbp": "bucket"}),)
    return Claim(
        id=f"{wl}-8n-10gbe-mgwfbp-faster-than-{other}",
        statement=f"MG-WFBP scales much better than {name} on an 8-node 10GbE cluster "
                  f"({wl}, batch {batch} per worker)",
        source="abstract", verified=True,
        expect=Ordered(("mg-wfbp", other), margin=ORDER_MARGIN, lower=True),
        cases={"mg-wfbp": _spec("mg-wfbp", wl, batch), other: _spec(other, wl, batch)},
        derive=iteration_times, nulls=nulls, note=_ORDER_NOTE)


def _optimal_claim(wl: str, batch: int, prof: str, net: str) -> Claim:
    """MG-WFBP's grouping is the best contiguous one on *prof* (network *net*) at 8 workers."""
    return Claim(
        id=f"{wl}-8n-{net}-mgwfbp-optimal",
        statement="MG-WFBP's merged schedule is optimal: no contiguous grouping of the layers "
                  "gives a shorter iteration",
        source="abstract", verified=True,
        expect=AtMost(1e-9),
        scenario=_spec("mg-wfbp", wl, batch, profile=prof),
        metric="optimality_gap", nulls=_GAP_NULLS, note=_OPTIMAL_NOTE)


def _what_if_claim() -> Claim:
    """Optimality beyond the testbed: a device 4x a K80 on the 10GbE fits, 16 workers."""
    return Claim(
        id="resnet-50-16n-10gbe-fast-device-mgwfbp-optimal",
        statement="MG-WFBP's merged schedule is optimal (what-if: a device 4x a K80 GK210 on the 10GbE fits)",
        source="abstract", verified=True,
        expect=AtMost(1e-9),
        scenario=ScenarioSpec(variant="mg-wfbp", profile="k80-cluster-10gbe", workload="resnet-50",
                              params={"workers": 16, "batch": 32}, fidelity="model",
                              overrides={"device.peak_flops.fp32": "17.46 TFLOP/s",
                                         "device.memory_bandwidth": "960 GB/s"}),
        metric="optimality_gap", nulls=_GAP_NULLS,
        note="The optimality statement is general, so it is checked beyond the paper's testbed too: here the "
             "device is 4x a K80 GK210 in fp32 FLOP/s and memory bandwidth (a what-if, not the paper's setup), "
             "so that communication is no longer hidden behind backward. Our value is T(mg-wfbp)/T(best contiguous "
             "grouping) - 1 with the best found exactly by dynamic programming; docs/techniques/mg-wfbp.md also "
             "gives a 3-layer counterexample worked by hand.")


def _claims() -> list[Claim]:
    out: list[Claim] = []
    for wl, batch in (("googlenet", 64), ("resnet-50", 32)):
        for other, name in (("wfbp", "WFBP"), ("sync", "SyncEASGD's single all-reduce")):
            out.append(_ordering_claim(wl, batch, other, name))
        for prof, net in ((TESTBED, "10gbe"), ("k80-cluster-ib56", "ib56")):
            out.append(_optimal_claim(wl, batch, prof, net))
    out.append(_what_if_claim())
    return out


# --------------------------------------------------------------------------- properties


def _model_times(tech: Technique, scenario) -> dict[str, Result]:
    out = {}
    for v in ("sync", "wfbp", "mg-wfbp"):
        out[v] = tech.evaluate(dataclasses.replace(scenario, variant=v, fidelity="model"))
    return out


def check_groups_partition(tech: Technique, scenario) -> None:
    """The variant's groups are contiguous and cover every layer exactly once."""
    res = tech.evaluate(dataclasses.replace(scenario, fidelity="model"))
    groups = res.artifacts["group_layers"]
    L = len(res.artifacts["layers"])
    flat = sorted(l for g in groups for l in g)
    if not (flat == list(range(L))):
        raise AssertionError(f"groups do not cover layers 0..{L - 1} exactly once: {groups}")
    for g in groups:
        if not (list(g) == list(range(min(g), max(g) + 1))):
            raise AssertionError(f"group {g} is not contiguous")


def check_not_slower(tech: Technique, scenario) -> None:
    """T(mg-wfbp) <= T(wfbp) and T(mg-wfbp) <= T(sync) [Shi19 abstract]."""
    r = _model_times(tech, scenario)
    t = {v: r[v]["iteration_time"] for v in r}
    tol = 1e-12 * t["sync"]
    if not (t["mg-wfbp"] <= t["wfbp"] + tol):
        raise AssertionError(f"mg-wfbp {t['mg-wfbp']} s slower than wfbp {t['wfbp']} s")
    if not (t["mg-wfbp"] <= t["sync"] + tol):
        raise AssertionError(f"mg-wfbp {t['mg-wfbp']} s slower than sync {t['sync']} s")


def check_lower_bound(tech: Technique, scenario) -> None:
    """Iteration time >= forward + total backward (communication can only add)."""
    res = tech.evaluate(dataclasses.replace(scenario, fidelity="model"))
    if not (res["iteration_time"] >= res["compute_time"] * (1 - 1e-12)):
        raise AssertionError(f"iteration {res['iteration_time']} s < compute {res['compute_time']} s")


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_WHY_NOT = {
    "resnet-50-16n-10gbe-fast-device-mgwfbp-optimal": (
        "setup unknown", "the conditions of the paper's optimality proof could not be read, and nothing the paper "
        "states decides this point: on our own what-if device (4x a K80 in FLOP/s and bandwidth, not the paper's "
        "testbed) the merge rule is 0.74% off the best contiguous grouping, which disagrees with the proof as the "
        "abstract states it (the docs page's 3-layer counterexample shows the rule is not optimal in general); the "
        "gap opens between 3.5x (0) and 3.75x (1.34%) a K80"),
}
_BCAFFE_SOURCE = ("the authors' INFOCOM implementation, hclhkbu/B-Caffe @ fdb5595, src/caffe/distributed.cpp "
                  "(DistManager::allreduce_time: 2 n alpha + 2(n-1) M beta / n, alpha = alpha_p n, alpha_p = 20 us)")
#: the sweep behind every flip point below: the testbed's latency from 1 to 1000 us, bisected
_SWEPT = "swept 1-1000 us with everything else as declared (efficiency 0.5, ring)"


def _latency(flip_at: str, note: str) -> Assumption:
    return Assumption("per-message latency of the 8-node testbed's host-staged 10GbE (network.0.latency of "
                      "k80-cluster-bcaffe-10gbe; the ring's start-up a = 14 x latency at 8 workers)",
                      "160 us (B-Caffe's alpha = 20 us x 8 ranks)", flip_at=flip_at, sourced=True,
                      source=_BCAFFE_SOURCE, note=f"{note}; {_SWEPT}")


def _ring(flip_to: str) -> Assumption:
    return Assumption("all-reduce algorithm on the 8-node testbed (parameter algorithm)", "ring",
                      flip_at="rabenseifner (6 start-ups instead of 14; MPICH's choice above 2 KiB)", sourced=True,
                      source="B-Caffe's price counts 2n start-ups per all-reduce, a ring's (" + _BCAFFE_SOURCE + ")",
                      note=f"{flip_to} with rabenseifner at 160 us")


_DDP = "DDP's 25 MiB buckets also beat"
_OFF = "where the merge rule is off the best grouping"
#: claim id -> (where the testbed's latency flips the verdict, how, what rabenseifner gives instead of the ring)
_FLIPS = {
    "googlenet-8n-10gbe-mgwfbp-faster-than-wfbp": (
        "113 us and 125 us", f"not reproduced (a tie) below 113 us; reproduced from 113 us; not discriminating from "
        f"125 us, where {_DDP} WFBP by 2%", "not reproduced (a tie)"),
    "resnet-50-8n-10gbe-mgwfbp-faster-than-wfbp": (
        "106 us and 123 us", f"not reproduced (a tie) below 106 us; reproduced from 106 us; not discriminating from "
        f"123 us, where {_DDP} WFBP by 2%", "not reproduced (a tie)"),
    "googlenet-8n-10gbe-mgwfbp-faster-than-sync": (
        "849 us", f"not discriminating below 849 us ({_DDP} SyncEASGD by 2%); reproduced from 849 us", None),
    "resnet-50-8n-10gbe-mgwfbp-faster-than-sync": (
        "484 us", f"not discriminating below 484 us (plain WFBP and {_DDP} SyncEASGD by 2%); not reproduced from "
        "484 us, where MG-WFBP is no longer 2% faster than SyncEASGD", None),
    "googlenet-8n-10gbe-mgwfbp-optimal": (
        "109 us and 642 us", f"not discriminating below 109 us, where plain WFBP is optimal too; not reproduced from "
        f"642 us, {_OFF}", "not discriminating"),
    "resnet-50-8n-10gbe-mgwfbp-optimal": (
        "100 us and 321 us", f"not discriminating below 100 us, where plain WFBP is optimal too; not reproduced from "
        f"321 us, {_OFF}", "not discriminating"),
}
_DECIDING = {cid: (_latency(at, how),) + ((_ring(rab),) if rab else ()) for cid, (at, how, rab) in _FLIPS.items()}
_DECIDING["resnet-50-16n-10gbe-fast-device-mgwfbp-optimal"] = (Assumption(
    "the what-if device's speed (x a K80 GK210 in fp32 FLOP/s and memory bandwidth)", "4x (17.46 TFLOP/s, 960 GB/s)",
    flip_at="between 3.5x and 3.75x", sourced=False,
    note="our what-if, not the paper's; --set device.peak_flops.fp32 and device.memory_bandwidth together: the gap is 0 "
         "from 1x to 3.5x, 1.34% at 3.75x, 0.74% at 4x, 2.3% at 5x"),)


TECHNIQUE = declare_technique(__name__, claims=with_reasons(_claims(), _WHY_NOT, _DECIDING))
