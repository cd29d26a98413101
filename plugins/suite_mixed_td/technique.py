"""Mixed-TD (Yu and Bouganis, FPL 2023): the technique declaration.

Variants, parameters, fidelities, the paper's claims (the abstract's 1.73x-10.29x throughput per
DSP, the only number read in the paper's own text), and the declared properties. The
fidelities are references into :mod:`suite_mixed_td.fidelities`, imported the first time one runs,
so listing the technique imports no model or execute code.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from suite.api import Assumption, Between, Claim, Null, ScenarioSpec, Skip, declare_technique, with_reasons

from suite_mixed_td.workloads import digits_cnn, repvgg_a0

if TYPE_CHECKING:  # the annotation only: the declaration does not import the model at run time
    from suite_mixed_td.model import Resources

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "evaluate_model", "per_dsp_gain", "default_ratio",
           "WORKLOADS"]


#: The search's throughput constraint per model family (``required_compression_ratio`` in the
#: authors' ``search.py``): throughput >= dense / ratio.
RATIOS = {"resnet": 0.65, "repvgg": 0.75}


def WORKLOADS():
    """Workloads this plugin adds (the ``suite_workloads`` hook)."""
    return [repvgg_a0(), digits_cnn()]


def _family(wl) -> str:
    return "repvgg" if "repvgg" in (wl.name if wl is not None else "") else "resnet"


def default_ratio(wl) -> float:
    """0.75 for RepVGG-A0, 0.65 otherwise (ResNet-18's, also used for other workloads)."""
    return RATIOS[_family(wl)]


# --------------------------------------------------------------------------- model fidelity


def evaluate_model(scenario):
    """Model fidelity (:func:`suite_mixed_td.fidelities.evaluate_model`, imported on first call)."""
    from suite_mixed_td.fidelities import evaluate_model as _evaluate

    return _evaluate(scenario)


def per_dsp_gain(results):
    """Throughput per DSP of the ``mixed`` case over the ``dense`` case (claim derive function)."""
    a, b = results["mixed"], results["dense"]
    return a["throughput_per_dsp"] / b["throughput_per_dsp"]


_U250 = "xilinx-alveo-u250"
# the abstract's 1.73x and 10.29x with each end's gain widened by 20% (docs/verdicts.md: speed-ups judged on the gain)
_LO, _HI = 1.0 + 0.73 * 0.8, 1.0 + 9.29 * 1.2
_NOTE = ("The abstract compares Mixed-TD designs with other published accelerators, which are not named in the "
         "sources read (the abstract and the authors' README and code: not found); "
         "ours is the Mixed-TD design over OUR dense design on the same "
         "U250 pipeline model, so the comparison is not like for like. The band is the paper's range with each "
         "end's gain widened by 20%. The search floor (1/ratio) is a null: a design that merely meets the "
         "throughput constraint at equal DSPs lands there. The search ranks designs by a kept-MAC accuracy proxy "
         "(no ImageNet offline), which drives it to the constraint boundary, as the authors' top-1 objective does. ")


def _claim(cid, workload, ratio, family):
    return Claim(
        cid,
        f"Mixed-TD reaches 1.73x to 10.29x throughput per DSP compared to state-of-the-art accelerators "
        f"({family} on a U250)",
        source="abstract", verified=True,
        cases={"mixed": ScenarioSpec(variant="mixed-td", profile=_U250, workload=workload),
               "dense": ScenarioSpec(variant="dense", profile=_U250, workload=workload)},
        derive=per_dsp_gain, expect=Between(_LO, _HI),
        nulls=(Null("dense design", variants={"mixed-td": "dense"}),
               Null(f"search floor 1/ratio = 1/{ratio}", value=1.0 / ratio)),
        note=_NOTE + f"Throughput constraint ratio {ratio} (authors' search.py, secondary source).",
    )


CLAIMS = [
    _claim("resnet18-per-dsp", "resnet-18", 0.65, "ResNet-18"),
    _claim("repvgga0-per-dsp", "mixed-td-repvgg-a0", 0.75, "RepVGG-A0"),
]


# --------------------------------------------------------------------------- properties


def _resources_for(scenario) -> Resources:
    """The profile's FPGA resources, or (a generated profile without [ext.fpga]) resources drawn from
    the seed and the device's memory figures, so a property is checked on any profile."""
    import numpy as np

    from suite_mixed_td import model

    prof = scenario.profile
    if prof is not None and (prof.ext or {}).get("fpga"):
        return model.resources_of(prof)
    dev = prof.device if prof is not None else None
    rng = np.random.default_rng(scenario.seed)
    onchip = float(dev.on_chip_memory) if dev is not None and dev.on_chip_memory else 4e6
    bw = float(dev.memory_bandwidth) if dev is not None else 1e10
    return model.Resources(dsps=int(rng.integers(64, 20000)), on_chip_bytes=onchip, clock=2e8, dram_bw=bw)


def _small_net(scenario):
    from suite.api import LayerTable

    from suite_mixed_td import model

    wl = scenario.workload if isinstance(scenario.workload, LayerTable) else digits_cnn()
    return model.build_network(wl, ("svd", "cpd"))


def _random_designs(net, seed, n=16):
    import numpy as np

    rng = np.random.default_rng(seed)
    d = np.stack([rng.integers(0, k, size=n) for k in net.n_cands], axis=1) if len(net.n_cands) else \
        np.zeros((n, 0), dtype=np.int64)
    d[0] = 0
    return d


def check_dsp_monotone(tech, scenario):
    """Throughput is non-decreasing in the DSP budget (dense and random designs)."""
    from suite_mixed_td import model

    net = _small_net(scenario)
    res = _resources_for(scenario)
    d = _random_designs(net, scenario.seed)
    t1 = model.evaluate_designs(net, d, res)["throughput"]
    t2 = model.evaluate_designs(net, d, dataclasses.replace(res, dsps=res.dsps * 2))["throughput"]
    if not (t2 >= t1 * (1 - 1e-12)).all():
        raise AssertionError(f"throughput fell when the DSP budget doubled: {t1} -> {t2}")


def check_vector_equals_reference(tech, scenario):
    """The vectorised evaluator equals the step-by-step greedy on random designs."""
    from suite_mixed_td import model

    net = _small_net(scenario)
    res = _resources_for(scenario)
    d = _random_designs(net, scenario.seed, n=6)
    ev = model.evaluate_designs(net, d, res)
    for i, row in enumerate(d):
        ref = model.design_metrics(net, row, res)
        if not (abs(ref["throughput"] - ev["throughput"][i]) <= 1e-9 * max(ref["throughput"], 1e-300)):
            raise AssertionError(f"design {list(row)}: vectorised {ev['throughput'][i]} vs greedy {ref['throughput']} images/s")
        if not (int(ref["dsps"]) == int(ev["dsps"][i])):
            raise AssertionError(f"design {list(row)}: DSPs {ev['dsps'][i]} vs {ref['dsps']}")


def check_dram_only_when_spilled(tech, scenario):
    """DRAM bandwidth changes throughput only for designs whose weights spill."""
    import numpy as np

    from suite_mixed_td import model

    net = _small_net(scenario)
    res = _resources_for(scenario)
    d = _random_designs(net, scenario.seed)
    a = model.evaluate_designs(net, d, res)
    b = model.evaluate_designs(net, d, dataclasses.replace(res, dram_bw=res.dram_bw * 4))
    fits = a["spilled_bytes"] == 0
    if not (np.array_equal(a["throughput"][fits], b["throughput"][fits])):
        raise AssertionError("throughput moved with DRAM bandwidth " \
        "although every weight is on chip")
    if not (b["throughput"] >= a["throughput"] * (1 - 1e-12)).all():
        raise AssertionError("more DRAM bandwidth lowered throughput")


def check_search_meets_constraints(tech, scenario):
    """A short search's design meets MACs <= target and throughput >= dense / ratio when it says feasible."""
    import numpy as np

    from suite_mixed_td import model

    net = _small_net(scenario)
    res = _resources_for(scenario)
    L = len(net.candidates)
    d0 = model.evaluate_designs(net, np.zeros((1, L), dtype=np.int64), res)
    if not d0["feasible_fold"][0]:
        raise Skip("DSP budget below the dense design's stage count")
    sr = model.search(net, res, ratio=0.65, macs_target=0.8, generations=4, seed=scenario.seed, prior_mean=0.32)
    if sr.feasible:
        if not (sr.metrics["macs"] <= 0.8 * net.dense_macs * (1 + 1e-12)):
            raise AssertionError("MAC constraint violated")
        if not (sr.metrics["throughput"] >= d0["throughput"][0] / 0.65 * (1 - 1e-12)):
            raise AssertionError("throughput constraint violated")


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
def _objective(flip: str) -> Assumption:
    return Assumption("search objective: a kept-MAC accuracy proxy under the throughput constraint", "kept-MAC proxy",
                      flip_at=f"a per-DSP objective ({flip}, inside the band)", sourced=False,
                      note="the proxy, like the authors' top-1 objective, drives the search to the constraint floor; "
                           "a per-DSP objective is a ceiling of the model, not the paper's objective")


_BASE = ("the paper compares with other published accelerators, not named in the sources read; ours is against our "
         "own dense design on the same model and toolflow")
_WHY_NOT = {
    "resnet18-per-dsp": ("baseline not modelled", _BASE + ": 1.545, at the constraint floor 1.538, under the band's "
                         "1.584 (only a per-DSP objective, not the paper's, lands inside: 3.98)"),
    "repvgga0-per-dsp": ("baseline not modelled", _BASE + ": 1.309, under the floor 1.333 and the band's 1.584 (only a "
                         "per-DSP objective, not the paper's, lands inside: 5.16)"),
}
_DECIDING = {"resnet18-per-dsp": (_objective("ResNet-18: 3.98"),),
             "repvgga0-per-dsp": (_objective("RepVGG-A0: 5.16"),)}


TECHNIQUE = declare_technique(__name__, claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING))
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
