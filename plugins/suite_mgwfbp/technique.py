"""Declaration of the MG-WFBP technique: paper, variants, parameters, claims, properties.

The claims are the abstract's statements (Shi, Chu & Li, INFOCOM 2019, arXiv 1811.11141):
better scaling than WFBP and SyncEASGD on an 8-node 10GbE cluster, and an optimal solution.
The per-model speed-ups of the paper's figures could not be read; the numbers implied by a
plotting script of the authors' group are code, not paper text, and are not claims here (the docs
page gives them as context).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from suite.api import (Assumption, AtMost, Claim, Null, Ordered, Paper, Param, Property, Result, ScenarioSpec,
                       Technique, Variant, with_reasons)

PAPER = Paper(
    title="MG-WFBP: Efficient Data Communication for Distributed Synchronous SGD Algorithms",
    authors=("Shaohuai Shi", "Xiaowen Chu", "Bo Li"),
    venue="IEEE INFOCOM",
    year=2019,
    arxiv="1811.11141",
    doi="10.1109/INFOCOM.2019.8737367",
    code="https://github.com/HKBU-HPML/MG-WFBP",
)

VARIANTS = [
    Variant("sync", "one all-reduce of all gradients after backward (SyncEASGD-style)", baseline=True),
    Variant("wfbp", "wait-free backprop: one all-reduce per layer as soon as its gradient is ready", baseline=True),
    Variant("bucket", "fixed-size buckets filled from the last layer (PyTorch DDP, bucket_mb = 25 MiB)", baseline=True),
    Variant("mg-wfbp", "merged-gradient WFBP: the paper's merge rule with all-reduce start-up a and per-byte b"),
]

PARAMETERS = {
    "workers": Param(int, default=None, minimum=1, optional=True, unit="workers", role="scale",
                     help="data-parallel workers P; default: every device of the profile (execute: 4)"),
    "batch": Param(int, default=32, minimum=1, unit="samples", help="per-worker mini-batch"),
    "efficiency": Param(float, default=0.5, minimum=1e-3, maximum=1.0, role="efficiency",
                        help="achieved fraction of peak FLOP/s for every layer (roofline compute roof); "
                             "an assumption, not from the paper (see docs/techniques/mg-wfbp.md)"),
    "dtype": Param(str, default="fp32", help="which peak_flops entry of the device to use"),
    "bucket_mb": Param(float, default=25.0, minimum=1e-6, unit="MiB",
                       help="bucket cap of the `bucket` variant (PyTorch DDP default 25 MiB)"),
    "algorithm": Param(str, default="ring", choices=("ring", "tree", "rabenseifner", "hierarchical"),
                       help="all-reduce formula used when the profile has no published fit for P workers"),
    "use_fit": Param(bool, default=True,
                     help="use the profile's published all-reduce fit (a, b) for P workers when present"),
    "comm_model": Param(str, default="profile", choices=("profile", "b-caffe"),
                        help="where the all-reduce a + b m comes from: the profile (its fit or `algorithm`'s "
                             "formula) or the authors' B-Caffe model of their INFOCOM testbed (a = 40 us x n^2, "
                             "b = 2(n-1)/n x 0.8 ns/B; hclhkbu/B-Caffe distributed.cpp)"),
    "steps": Param(int, default=50, minimum=1, maximum=10_000, help="execute: SGD steps"),
    "hidden": Param(int, default=32, minimum=1, maximum=4096, help="execute: MLP hidden width"),
    "depth": Param(int, default=3, minimum=0, maximum=32, help="execute: MLP hidden layers"),
    "lr": Param(float, default=0.1, minimum=0.0, maximum=10.0, help="execute: SGD learning rate"),
}


# --------------------------------------------------------------------------- claims

#: The all-reduce model of the paper's own testbed (the INFOCOM 8-node 10GbE cluster, B-Caffe):
#: every claim on that testbed uses it; the 56 Gb IB claims and the what-if keep the profile's fits.
TESTBED_COMM = "b-caffe"


def _spec(variant: str, workload: str, batch: int, profile: str = "k80-cluster-10gbe", workers: int = 8) -> ScenarioSpec:
    params: dict[str, object] = {"workers": workers, "batch": batch}
    if profile == "k80-cluster-10gbe" and workers == 8:
        params["comm_model"] = TESTBED_COMM
    return ScenarioSpec(variant=variant, profile=profile, workload=workload, params=params, fidelity="model")


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
    "All-reduces are priced by the authors' B-Caffe model of this testbed (comm_model=b-caffe). "
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


def _optimal_claim(wl: str, batch: int, prof: str) -> Claim:
    """MG-WFBP's grouping is the best contiguous one on *prof* at 8 workers."""
    return Claim(
        id=f"{wl}-8n-{prof.rsplit('-', 1)[1]}-mgwfbp-optimal",
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
        for prof in ("k80-cluster-10gbe", "k80-cluster-ib56"):
            out.append(_optimal_claim(wl, batch, prof))
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


PROPERTIES = [
    Property("groups-partition", "groups are contiguous and cover every layer exactly once", check_groups_partition),
    Property("mg-wfbp-not-slower", "T(mg-wfbp) <= T(wfbp) and <= T(sync)", check_not_slower),
    Property("compute-lower-bound", "T >= forward + total backward", check_lower_bound),
]


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_WHY_NOT = {
    "resnet-50-16n-10gbe-fast-device-mgwfbp-optimal": (
        "setup unknown", "a what-if device (4x a K80 in FLOP/s and bandwidth), not the paper's testbed: the merge "
        "rule is 0.74% off the best contiguous grouping there"),
}
_BCAFFE_SOURCE = ("the authors' INFOCOM implementation, hclhkbu/B-Caffe @ fdb5595, src/caffe/distributed.cpp "
                  "(DistManager::allreduce_time, alpha_p = 20 us, beta = 8/10e9 s/B)")


def _startup(flip_at: str, note: str) -> Assumption:
    return Assumption("all-reduce start-up a per message on the 8-node 10GbE testbed (b = 1.4 ns/B)",
                      "2.56 ms (B-Caffe, n = 8)", flip_at=flip_at, sourced=True, source=_BCAFFE_SOURCE,
                      note=note + "; with the PyTorch code's fit (a = 0.523 ms, b = 0.857 ns/B, comm_model=profile) "
                                  "WFBP hides every message and ties MG-WFBP")


_DECIDING = {
    "googlenet-8n-10gbe-mgwfbp-faster-than-wfbp": (_startup(
        "1.58 ms and 1.76 ms", "not reproduced (a tie) below 1.58 ms; reproduced from 1.58 ms; not discriminating "
        "from 1.76 ms, where DDP's 25 MiB buckets also beat WFBP by 2%"),),
    "resnet-50-8n-10gbe-mgwfbp-faster-than-wfbp": (_startup(
        "1.50 ms and 1.73 ms", "not reproduced (a tie) below 1.50 ms; reproduced from 1.50 ms; not discriminating "
        "from 1.73 ms, where DDP's 25 MiB buckets also beat WFBP by 2%"),),
    "googlenet-8n-10gbe-mgwfbp-optimal": (_startup(
        "1.52 ms", "not discriminating below 1.52 ms, where plain WFBP is optimal too"),),
    "resnet-50-8n-10gbe-mgwfbp-optimal": (_startup(
        "1.42 ms", "not discriminating below 1.42 ms, where plain WFBP is optimal too"),),
}


TECHNIQUE = Technique(
    name="mg-wfbp",
    title="Merged-gradient wait-free backpropagation: merge layers' all-reduces when it saves start-up time",
    category="communication", vocabulary="data-parallel",
    paper=PAPER,
    variants=VARIANTS,
    parameters=PARAMETERS,
    fidelities={"model": "suite_mgwfbp.model:evaluate", "execute": "suite_mgwfbp.execute:evaluate"},
    claims=with_reasons(_claims(), _WHY_NOT, _DECIDING),
    properties=PROPERTIES,
    version="0.2.0",
    oracle_tolerance=1e-8,  # largest oracle_error accepted (float64 vs its oracle)
    default_profile="k80-cluster-10gbe",
    default_workload="googlenet",
    profile_kinds=("device", "node", "cluster", "measured"),
    # not "alpha-beta-bound": the authors' published 10GbE fits are faster than the 10 Gbit/s ring
    # bound (docs/techniques/mg-wfbp.md, "The published 10GbE fits")
    capabilities=frozenset({"bytes-conserved", "oracle-exact", "sgd-envelope"}),
    kit_opt_out={"network-sensitivity": "on the K80 clusters the all-reduce a + b m is a published fit (use_fit, "
                                        "the default) or the authors' B-Caffe model (comm_model=b-caffe); either "
                                        "replaces the network model by design and the comm_model artifact says so; "
                                        "use_fit=false with comm_model=profile prices suite.perf.collective_time"},
    smoke=[
        ScenarioSpec(variant="mg-wfbp", profile="k80-cluster-10gbe", workload="googlenet",
                     params={"workers": 8, "batch": 64}, fidelity="model"),
        ScenarioSpec(variant="mg-wfbp", profile="k80-cluster-10gbe", workload="digits",
                     params={"workers": 4, "steps": 5}, fidelity="execute"),
    ],
    docs="docs/techniques/mg-wfbp.md",
)
