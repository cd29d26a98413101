"""COMET (Kadiyala et al., arXiv 2211.16648): the technique declaration.

Variants (two baselines and the co-design search), parameters, fidelities, the two verified
abstract claims with their nulls, the declared properties and the ``[ext.comet]`` schema.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
import math

from suite.api import Assumption, Claim, Gain, Null, Param, ScenarioSpec, declare_technique, with_reasons

from suite_comet import constants

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "CometExt", "ANCHOR"]


PARAMETERS = {
    "global_batch": Param(int, default=3072, unit="sequences", minimum=1, maximum=1_000_000,
                          help="sequences per step (3072: the Megatron-LM 1T row, SC'21 Table 1)"),
    "nodes": Param(int, default=None, unit="nodes", minimum=1, optional=True,
                   help="nodes used (default: the profile's; the grid's own count with grid=comet-v2)"),
    "tp": Param(int, default=None, unit="GPUs", minimum=1, maximum=64, optional=True,
                help="fix the tensor-parallel degree (must divide the heads; <= GPUs per node)"),
    "pp": Param(int, default=None, unit="stages", minimum=1, maximum=1024, optional=True,
                help="fix the pipeline-parallel degree"),
    "dp": Param(int, default=None, unit="replicas", minimum=1, maximum=1_000_000, optional=True,
                help="fix the data-parallel degree"),
    "microbatch": Param(int, default=None, unit="sequences", minimum=1, maximum=64, optional=True,
                        help="fix the micro-batch size (searched over 1, 2, 4, 8 otherwise)"),
    "recompute": Param(str, default=None, choices=constants.RECOMPUTE, optional=True,
                       help="fix activation recomputation (Korthikanti et al. 2022)"),
    "expansion": Param(float, default=None, unit="B", minimum=0.0, maximum=1e15, optional=True,
                       help="memory-expansion capacity per node (default: the profile's [ext.comet], else none)"),
    "expansion_bandwidth": Param(float, default=None, unit="B/s", minimum=1e6, maximum=1e13, optional=True,
                                 help="expansion bandwidth per direction per node (default [ext.comet] or "
                                      "63 GB/s, PCIe 5.0 x16)"),
    "efficiency": Param(float, default=None, minimum=0.01, maximum=1.0, optional=True,
                        help="one flat GEMM efficiency (fraction of the bf16 peak) instead of the device's "
                             "gemm_bf16 curve (suite.perf.training)"),
    "ignore_memory": Param(bool, default=False,
                           help="when no strategy fits the memory, price the fastest anyway (metric fits = 0) "
                                "instead of skipping the case"),
    "grid": Param(str, default="none", choices=("none", *sorted(constants.GRIDS)),
                  help="evaluate the fixed cluster grid derived from the profile instead of one cluster"),
    "tp_exec": Param(int, default=2, unit="GPUs", minimum=1, maximum=4,
                     help="execute fidelity: tensor-parallel ranks of the small model"),
    "pp_exec": Param(int, default=2, unit="stages", minimum=1, maximum=4,
                     help="execute fidelity: pipeline stages of the small model"),
    "dp_exec": Param(int, default=2, unit="replicas", minimum=1, maximum=8,
                     help="execute fidelity: data-parallel replicas of the small model"),
}


def __getattr__(name: str):
    # ``CometExt`` lives in suite_comet.extension (loaded on first access: the declaration loads no pydantic)
    if name == "CometExt":
        from suite_comet.extension import CometExt

        return CometExt
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_WL, _BASE = "megatron-1t", "selene-dgx-a100"
_GRID_NOTE = ("The grid is our assumption, fixed before any verdict and never changed after: 128 nodes x 8 GPUs of "
              "A100 40 GB / A100 80 GB / H100 80 GB / H200 141 GB (shipped device profiles), 100 / 200 / 400 Gb/s "
              "per GPU, expansion none / 256 GB / 1 TB per node at 63 GB/s (PCIe 5.0 x16), on the Selene fabric "
              "(fat-tree, one NIC per GPU); Megatron-1T as COMET's Transformer-1T stand-in, batch 3072. COMET's "
              "node hardware, network, node counts and which pair of designs gives 7.7x are not found. ")

_GRID_SPEC = ScenarioSpec(variant="comet", profile=_BASE, workload=_WL, params={"grid": "comet-v2"})

CLAIMS = [
    Claim(
        "cluster-spread-7.7x",
        "Cluster configurations differ in performance by up to 7.7x (best vs worst design, each at its best "
        "parallelisation)",
        source="abstract (v2)", verified=True,
        scenario=_GRID_SPEC, metric="spread", expect=Gain(7.7, rel=0.2),
        nulls=(Null("no difference between designs", value=1.0),
               Null("compute-only predictor (peak bf16 ratio, no communication, unlimited memory)",
                    value=constants.COMPUTE_ONLY_SPREAD),
               Null("Megatron rule instead of the search", variants={"comet": "megatron-rule"})),
        note=_GRID_NOTE + "Our spread (slowest: A100 40 GB, 100 Gb/s, no expansion; fastest: H200, 400 Gb/s, "
             "expansion) comes mostly from the bf16 peak ratio of H100/H200 over A100 (3.17x) plus the memory "
             "that lets the H200 skip full recomputation; the network moves the step time by ~2% (1F1B with "
             "hundreds of micro-batches hides the pipeline and DP traffic, TP stays on NVLink). The paper's grid "
             "must hold slower or more starved designs than ours to reach 7.7x.",
    ),
    Claim(
        "expansion-gain-1.4x",
        "Memory expansion gives optimisation opportunities of up to 1.4x",
        source="abstract (v2)", verified=True,
        scenario=_GRID_SPEC, metric="expansion_gain", expect=Gain(1.4, rel=0.2),
        nulls=(Null("hbm-only at the same cluster", variants={"comet": "hbm-only"}),
               Null("no gain", value=1.0)),
        note=_GRID_NOTE + "Max over the grid's clusters of T(hbm-only) / T(comet), each at its best strategy; "
             "clusters where hbm-only fits nothing are left out of the max (there are none in our grid). "
             "Only the 12 B/param optimizer states may spill (read and written once per step): on the 40 GB "
             "A100 that frees enough HBM for selective instead of full recomputation (the grid's largest "
             "gain, 1.28x at 400 Gb/s), on the 80 GB parts fewer pipeline stages (pp 64 -> 32, 1.01-1.03x), "
             "on the H200 nothing: short of 1.4x; the paper's node (HBM size, expansion bandwidth) and what "
             "it lets spill are not known.",
    ),
]

#: the Megatron-LM anchor (not a claim): SC'21 Table 1 1T row, 3,072 A100 (384 DGX nodes), tp 8, pp 64,
#: batch 3072, full recomputation, 163 TFLOP/s per GPU (52% of peak). The efficiency is calibrated on it.
ANCHOR = {"spec": ScenarioSpec(variant="hbm-only", profile=_BASE, workload=_WL,
                               params={"nodes": 384, "tp": 8, "pp": 64, "microbatch": 1, "recompute": "full"}),
          "paper_flops_per_gpu": 163e12}


# --------------------------------------------------------------------------- properties


def _small(scenario):
    """The scenario on a model-fidelity case small enough for hypothesis (the profile as generated)."""
    return dataclasses.replace(scenario, fidelity="model",
                               params={**scenario.params, "grid": "none", "tp": None, "pp": None, "dp": None,
                                       "microbatch": None, "recompute": None, "nodes": None})


def _time_or_inf(tech, sc):
    from suite.api import Skip

    try:
        return tech.evaluate(sc)["iteration_time"]
    except Skip:
        return math.inf


def _faster(tech, scenario, overrides):
    sc = _small(scenario)
    if sc.profile is None or sc.workload is None:
        return
    t0 = _time_or_inf(tech, sc)
    t1 = _time_or_inf(tech, dataclasses.replace(sc, profile=sc.profile.with_overrides(overrides)))
    if not (t1 <= t0 * (1 + 1e-9)):
        raise AssertionError(f"optimum rose from {t0} to {t1} s with {overrides}")


def check_flops_monotone(tech, scenario):
    """Doubling the bf16 peak never slows the optimum."""
    from suite_comet import model

    dev = scenario.profile.device if scenario.profile is not None else None
    dt = model.compute_dtype(dev) if dev is not None else None
    if dt is None:
        return
    _faster(tech, scenario, {f"device.peak_flops.{dt}": f"{2 * dev.peak_flops[dt]} FLOP/s"})


def check_hbm_bw_monotone(tech, scenario):
    """Doubling the HBM bandwidth never slows the optimum."""
    if scenario.profile is None or scenario.profile.device is None:
        return
    _faster(tech, scenario, {"device.memory_bandwidth": f"{2 * scenario.profile.device.memory_bandwidth} B/s"})


def check_network_monotone(tech, scenario):
    """Doubling any network level's bandwidth never slows the optimum."""
    prof = scenario.profile
    if prof is None:
        return
    for i, lv in enumerate(prof.network):
        _faster(tech, scenario, {f"network.{i}.bandwidth": f"{2 * lv.bandwidth} B/s"})


def check_reported_fits(tech, scenario):
    """Every reported strategy fits: memory minus what spills is within the HBM, spill within the tier."""
    from suite.api import Skip

    sc = _small(scenario)
    if sc.profile is None or sc.workload is None:
        return
    try:
        r = tech.evaluate(sc)
    except Skip:
        return
    hbm = sc.profile.device.memory
    if not (r["memory_per_gpu"] - r["overflow_per_gpu"] <= hbm * (1 + 1e-9)):
        raise AssertionError("reported strategy exceeds HBM")
    if sc.variant != "comet":
        if not (r["overflow_per_gpu"] == 0.0):
            raise AssertionError(f"{sc.variant} spills {r['overflow_per_gpu']} B")


def check_execute_equals_dense(tech, scenario):
    """Execute: outputs and gradients equal the dense oracle; ledger bytes equal the traffic formulas."""
    res = tech.evaluate(dataclasses.replace(scenario, fidelity="execute"))
    if not (res["max_rel_error"] < 1e-12):
        raise AssertionError(f"max relative error {res['max_rel_error']}")
    if not (res["traffic_mismatch"] == 0.0):
        raise AssertionError(f"ledger differs from the traffic formulas by {res['traffic_mismatch']} B")


#: reason class of each claim not reproduced (docs/verdicts.md, Reason classes)
_WHY_NOT = {
    "cluster-spread-7.7x": ("setup unknown", "COMET's grid (node hardware, network, node counts, which two designs "
                            "give 7.7x) is not found; on our assumed grid the spread is the Hopper/Ampere compute "
                            "ratio at each device's GEMM efficiency, with the network moving it by a few percent: the "
                            "slowest design's network flips it only at about 1.6 Gbit/s per GPU (1.5: 6.50x)"),
    "expansion-gain-1.4x": ("setup unknown", "the paper's node (HBM size, expansion bandwidth) and what it lets spill "
                            "are not known; only the 12 B/param optimizer states spill in ours; the grid's node count "
                            "(ours 128) puts ours in the band at 40 nodes (1.457x; 20: 1.405x, 48: 1.437x), but only as "
                            "reproduced (no null): both nulls (hbm-only for comet, no gain) give 1.0, which the gain "
                            "band excludes"),
}
#: measured by setting the claim's grid (constants.GRIDS["comet-v2"]) field by field, everything else as declared
_DECIDING = {
    "cluster-spread-7.7x": (Assumption(
        "network of the grid's slowest design (per GPU)", "100 Gbit/s", flip_at="about 1.6 Gbit/s", sourced=False,
        note="the grid's first network choice: 10 Gbit/s gives 3.91x, 2: 5.74x, 1.7: 6.14x, 1.5: 6.50x (band from "
             "6.36x); a node count of 16-512 moves it within 3.45-3.78x"),),
    "expansion-gain-1.4x": (Assumption(
        "the grid's node count", 128, flip_at="between 48 and 64 nodes", sourced=False,
        flips_to="reproduced (no null)",
        note="not monotone (the search's plan changes): 20 nodes give 1.405x, 32 1.319x, 40 1.457x, 48 1.437x, "
             "64 1.288x (band [1.32, 1.48]); the expansion bandwidth (16-256 GB/s: 1.23-1.29x) does not flip it"),),
}

TECHNIQUE = declare_technique(
    __name__,
    # the grid's device and node profiles (model.grid_clusters)
    uses=constants.grid_inputs(), parameters=PARAMETERS, claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING),
)
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
