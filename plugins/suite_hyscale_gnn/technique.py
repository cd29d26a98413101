"""HyScale-GNN (Lin and Prasanna, arXiv 2303.00158, 2023): the technique declaration.

Variants (baselines included), parameters, fidelities, the abstract's three claims with their
nulls, and the declared properties. Only the abstract was read [Lin23]: the hardware, datasets,
models, fan-out and batch of the paper are not known, so every claim scenario is an assumption
(named in each claim's note and on the docs page).

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from suite.api import Assumption, Claim, Gain, Null, Param, ScenarioSpec, declare_technique, with_reasons

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "FanoutParam", "speedup_over_baseline"]


@dataclass(frozen=True)
class FanoutParam(Param):
    """The per-layer fan-out, given as ``"25,10"``: validated to one positive integer per layer."""

    layers: int = 2

    def validate(self, name, value, *, technique=""):
        from suite_hyscale_gnn.fanout import parse_fanout

        out = parse_fanout(value, self.layers)
        return ",".join(str(f) for f in out)


PARAMETERS = {
    "batch": Param(int, default=1024, unit="samples", minimum=1, maximum=1 << 20,
                   help="mini-batch size B (seeds per iteration, all trainers together) of the model fidelity"),
    "fanout": FanoutParam(str, default="25,10", help="neighbours sampled per node per layer, hop from the seeds "
                                                     "first (GraphSAGE's 25,10)"),
    "hidden": Param(int, default=256, unit="features", minimum=1, maximum=8192, help="hidden layer width"),
    "gnn": Param(str, default="graphsage", choices=("graphsage", "gcn"), help="2-layer GNN model"),
    "threads": Param(int, default=None, unit="threads", minimum=1, maximum=4096, optional=True,
                     help="host threads (default: every core of the host's CPUs)"),
    "cpu_share": Param(float, default=None, minimum=0.0, maximum=1.0, optional=True,
                       help="hyscale: fix the CPU's share of each batch instead of searching it"),
    "exec_batch": Param(int, default=128, unit="samples", minimum=1, maximum=4096,
                        help="execute fidelity: mini-batch size on the generated graph"),
    "epochs": Param(int, default=3, unit="epochs", minimum=1, maximum=100, help="execute fidelity: training epochs"),
}

_CPU_GPU, _CPU_FPGA, _DIST = "hyscale-cpu-gpu", "hyscale-cpu-fpga", "hyscale-distdgl-4n"
_PRODUCTS = "hyscale-gnn-ogbn-products"
_POINT = {"batch": 1024, "fanout": "25,10", "gnn": "graphsage", "hidden": 256}


def speedup_over_baseline(results):
    """Epoch time of the baseline case over the technique's (claim derive function)."""
    return results["baseline"]["epoch_time"] / results["hyscale"]["epoch_time"]


_ASSUME = ("Every claim scenario is ours: the abstract names no hardware, dataset, model, fan-out or batch. "
           "Judged at one point: ogbn-products, 2-layer GraphSAGE, fan-out 25,10, hidden 256, batch 1,024; the "
           "'up to' of the abstract is a maximum over the paper's settings, the docs sweep the others. ")

CLAIMS = [
    Claim(
        "cpu-gpu-vs-multi-gpu-pyg",
        "The CPU-GPU design is up to 2.08x faster than a multi-GPU PyTorch-Geometric baseline",
        source="abstract", verified=True,
        cases={"hyscale": ScenarioSpec(variant="hyscale", profile=_CPU_GPU, workload=_PRODUCTS, params=_POINT),
               "baseline": ScenarioSpec(variant="multi-gpu", profile=_CPU_GPU, workload=_PRODUCTS, params=_POINT)},
        derive=speedup_over_baseline, expect=Gain(2.08, rel=0.2),
        nulls=(Null("no gain", value=1.0), Null("ideal bound", variants={"hyscale": "ideal"}),
               Null("prefetch alone", variants={"hyscale": "prefetch"})),
        note=_ASSUME + "Platform hyscale-cpu-gpu (2 x EPYC 7763 + 4 x RTX A5000) is an assumption; PyG is our "
                       "multi-gpu variant (sampling, gathering, copy, training in series).",
    ),
    Claim(
        "cpu-fpga-vs-multi-gpu-pyg",
        "The CPU-FPGA design is up to 12.6x faster than the multi-GPU PyTorch-Geometric baseline",
        source="abstract", verified=True,
        cases={"hyscale": ScenarioSpec(variant="hyscale", profile=_CPU_FPGA, workload=_PRODUCTS, params=_POINT),
               "baseline": ScenarioSpec(variant="multi-gpu", profile=_CPU_GPU, workload=_PRODUCTS, params=_POINT)},
        derive=speedup_over_baseline, expect=Gain(12.6, rel=0.2),
        nulls=(Null("no gain", value=1.0), Null("ideal bound", variants={"hyscale": "ideal"}),
               Null("prefetch alone", variants={"hyscale": "prefetch"})),
        note=_ASSUME + "Rests on the FPGA assumptions: 4 x Alveo U250, 200 MHz design clock, 1 fp32 FLOP per DSP "
                       "per cycle, 0.8 of that peak; the paper's FPGA kernel (and whether it trains in fp32) is not known.",
    ),
    Claim(
        "cpu-fpga-vs-distdgl",
        "Using a single node, the CPU-FPGA design is up to 5.27x faster than the multi-node systems P3 and DistDGL",
        source="abstract", verified=True,
        cases={"hyscale": ScenarioSpec(variant="hyscale", profile=_CPU_FPGA, workload=_PRODUCTS, params=_POINT),
               "baseline": ScenarioSpec(variant="distdgl", profile=_DIST, workload=_PRODUCTS, params=_POINT)},
        derive=speedup_over_baseline, expect=Gain(5.27, rel=0.2),
        nulls=(Null("no gain", value=1.0), Null("ideal bound", variants={"hyscale": "ideal"}),
               Null("prefetch alone", variants={"hyscale": "prefetch"})),
        note=_ASSUME + "DistDGL only (P3 is not modelled); its cluster hyscale-distdgl-4n (4 nodes like "
                       "hyscale-cpu-gpu, 100 Gbit/s Ethernet) is an assumption.",
    ),
]


# --------------------------------------------------------------------------- properties


def _model(tech, scenario, variant=None, profile=None, **params):
    sc = dataclasses.replace(scenario, fidelity="model", variant=variant or scenario.variant,
                             profile=profile if profile is not None else scenario.profile,
                             params={**scenario.params, **params})
    return tech.evaluate(sc)


def check_shares(tech, scenario):
    """hyscale: the CPU share and the accelerators' shares are >= 0 and sum to the batch."""
    res = _model(tech, scenario, variant="hyscale")
    cfg = res.artifacts["config"]
    b = int(scenario.params["batch"])
    total = cfg["b_cpu"] + cfg["b_acc"] * cfg["accelerators"]
    if not (cfg["b_cpu"] >= 0 and cfg["b_acc"] >= 0):
        raise AssertionError(f"negative share: {cfg['b_cpu']}, {cfg['b_acc']}")
    if not (abs(total - b) <= 1e-9 * b):
        raise AssertionError(f"shares sum to {total}, batch is {b}")


def check_ordering(tech, scenario):
    """hyscale <= min(prefetch, cpu-only) and prefetch <= multi-gpu (epoch time)."""
    t = {v: _model(tech, scenario, variant=v)["epoch_time"] for v in ("hyscale", "prefetch", "cpu-only", "multi-gpu")}
    eps = 1e-12
    if not (t["hyscale"] <= min(t["prefetch"], t["cpu-only"]) * (1 + eps)):
        raise AssertionError(f"epoch times {t}")
    if not (t["prefetch"] <= t["multi-gpu"] * (1 + eps)):
        raise AssertionError(f"epoch times {t}")


def check_monotone(tech, scenario):
    """Epoch time does not rise when the host link's bandwidth or the accelerator's peak doubles."""
    prof = scenario.profile
    dev = prof.require_device()
    if dev.type == "cpu" or dev.host_link is None:
        return
    base = _model(tech, scenario)["epoch_time"]
    faster_link = prof.with_overrides({"device.host_link.bandwidth": f"{2 * dev.host_link.bandwidth} B/s"})
    if not (_model(tech, scenario, profile=faster_link)["epoch_time"] <= base * (1 + 1e-12)):
        raise AssertionError("host link x2 slowed it")
    if "fp32" in dev.peak_flops:
        faster = prof.with_overrides({"device.peak_flops.fp32": f"{2 * dev.peak_flops['fp32']} FLOP/s"})
        if not (_model(tech, scenario, profile=faster)["epoch_time"] <= base * (1 + 1e-12)):
            raise AssertionError("peak x2 slowed it")


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_FPGA = Assumption("FPGA kernel: 200 MHz, 1 fp32 FLOP per DSP per cycle at 0.8 of peak", "0.8", flip_at=None,
                   sourced=False, note="the paper's FPGA kernel is not known; the docs sweep it")
_WHY_NOT = {
    "cpu-fpga-vs-multi-gpu-pyg": ("setup unknown", "hardware, dataset, model, fan-out and batch are all ours (the "
                                  "abstract names none); 'up to' is a maximum over the paper's settings, judged here "
                                  "at one point; no flip found over the batch (256-8192: 1.25-1.31x), the hidden size "
                                  "(64-1024: 0.78-1.66x), GCN for GraphSAGE (1.52x) or the baseline's GPU-to-GPU link "
                                  "(0.3-31.5 GB/s: up to 2.47x), against a band from 10.28x"),
    "cpu-fpga-vs-distdgl": ("baseline not modelled", "P3 is not modelled ('up to' is over P3 and DistDGL); DistDGL is, "
                            "but its cluster is not stated: on our "
                            "assumed 4 nodes with 100 Gbit/s Ethernet ours is 1.07x; its inter-node network flips it at "
                            "about 19 Gbit/s (18: 4.55x, inside; 20: 4.14x), out again below 13 Gbit/s (6.14x)"),
}
#: the sampling constant (docs: Calibration history); issue 42: calibrated on a graph that fits in cache
_RATE = Assumption("CPU sampling rate R (edges/s per thread)", "240 M", flip_at=None, sourced=True,
                   source="bench_hyscale.py, median per CPU-second of the execute sampler (a cache-resident graph)",
                   note="ogbn-products does not fit in cache, so its real rate is lower; the hybrid variant equals "
                        "plain prefetching at every rate swept (2-1,920 M: CPU share 0), so the calibration cannot "
                        "show what the CPU-accelerator split adds")
_PYG_POINT = Assumption("the claim's point (batch 1024, fan-out 25,10, GraphSAGE, hidden 256) and the PyG node's "
                        "GPU-to-GPU link (PCIe 4.0 via the host)", "ours", flip_at=None, sourced=False,
                        note="--param batch 256-8192: 1.25-1.31x; hidden 64-1024: 0.78-1.66x; gnn=gcn 1.52x; "
                             "--set network.0.bandwidth on the PyG node 3.15 GB/s: 1.44x, 0.3 GB/s: 2.47x (band "
                             "[10.28, 14.92])")
_DECIDING = {"cpu-gpu-vs-multi-gpu-pyg": (_RATE,), "cpu-fpga-vs-multi-gpu-pyg": (_FPGA, _RATE, _PYG_POINT),
             "cpu-fpga-vs-distdgl": (_FPGA, _RATE, Assumption(
                 "DistDGL cluster's inter-node network (hyscale-distdgl-4n)", "100 Gbit/s", flip_at="about 19 Gbit/s",
                 sourced=False, note="--set network.1.bandwidth on the DistDGL case: 20 Gbit/s gives 4.14x, 18 4.55x "
                                     "(inside [4.416, 6.124]), 15 5.38x, 13 6.14x (above)"))}


TECHNIQUE = declare_technique(__name__, parameters=PARAMETERS,
                              claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING))
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
