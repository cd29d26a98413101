"""Computron (Zou et al., 2023): the technique declaration.

Variants, parameters, fidelities, the paper's claims (the abstract's statements, read in the
paper's abstract; no numbers are published there) and the declared
properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
import math

from suite.api import Claim, Null, Ordered, ParameterError, ScenarioSpec, Skip, declare_technique

from suite_computron.workloads import CONFIGS

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "VARIANTS", "PARAMETERS", "BURSTY_SKEWED_CONFIGS",
           "SEEDS", "PcieSwitchExt"]


def __getattr__(name: str):
    # ``PcieSwitchExt`` (now in suite_computron.extension) is imported on first access (PEP 562), so
    # importing the declaration loads no pydantic
    if name == "PcieSwitchExt":
        from suite_computron.extension import PcieSwitchExt

        return PcieSwitchExt
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_NODE = "perlmutter-gpu-node"
_HW_NOTE = ("Hardware: one Perlmutter GPU node, 1 x EPYC 7763 and 4 x A100 each on its own PCIe 4.0 x16 link "
            "(a secondary quote of the paper; 40 GB A100s assumed, the paper does not say 40 or 80 GB). ")

#: said on both link claims: their verdict is the model's structure, not evidence
_BY_CONSTRUCTION = ("By construction: the model copies the n shards over n links at once (max of the per-link, "
                    "host-memory and switch times), so the ordering holds whenever the links bind before host memory "
                    "does; the verdict checks the profile's figures, not Computron's engine (docs page).")
#: the claim defect both link claims report (issue 42; docs/verdicts.md, "A claim that follows from the model's
#: own formula"): kept on the scoreboard as such, not counted as reproduced
_FORMULA_DEFECT = ("follows from the model's own swap-time formula (bytes over n links at once, Perlmutter's GPUs each "
                   "on their own PCIe link, host memory never binding): it could not fail, so it tests the profile, "
                   "not Computron; the execute fidelity checks the parallel copy against its oracle instead")
#: bursty-skewed's defect (audit11 A2): its two variants differ only in that formula's parallel flag
_BURSTY_DEFECT = ("computron and mp-serial differ only in the swap-time formula's parallel flag (max of the per-link "
                  "and host-memory times against n times the per-link time) on the same traces, layout and compute, "
                  "so computron's p90 is lower wherever a swap happens, calm configurations too: it could not fail, "
                  "so it tests the formula, not tolerance of bursts")


def derive_parallel_swap(results):
    """OPT-13B load time at n = 4, 2, 1 (Ordered: each strictly faster than the next)."""
    return {"n = 4": results["n4"]["load_time"], "n = 2": results["n2"]["load_time"],
            "n = 1": results["n1"]["load_time"]}


def derive_aggregate(results):
    """The n = 4 host-to-GPU rate and one host link's nominal bandwidth."""
    r = results["n4"]
    return {"n = 4": r["h2d_rate"], "one link": r["link_bandwidth"]}


SEEDS = (0, 1, 2, 3, 4)
#: computron-cXX indices judged by bursty-skewed: every CV 4 configuration and every skewed one.
BURSTY_SKEWED_CONFIGS = tuple(i for i, (rates, cv, _cap) in enumerate(CONFIGS[:18])
                              if cv == 4.0 or len(set(rates)) > 1)


def _bursty_cases():
    out = {}
    for i in BURSTY_SKEWED_CONFIGS:
        for s in SEEDS:
            out[f"computron:c{i:02d}:s{s}"] = ScenarioSpec(
                variant="computron", profile=_NODE, workload=f"computron-c{i:02d}", params={"tp": 4},
                fidelity="simulate", seed=s)
            out[f"mp-serial:c{i:02d}:s{s}"] = ScenarioSpec(
                variant="mp-serial", profile=_NODE, workload=f"computron-c{i:02d}", params={"tp": 4},
                fidelity="simulate", seed=s)
    return out


def derive_bursty(results):
    """The configuration where computron's p90 (mean over seeds) comes closest to mp-serial's (the
    same four GPUs swapping their shards one after another): ``{"computron": p90, "mp-serial":
    p90}`` there (Ordered: computron lower in every one)."""
    import numpy as np

    worst, worst_ratio = None, -math.inf
    for i in BURSTY_SKEWED_CONFIGS:
        c = np.mean([results[f"computron:c{i:02d}:s{s}"]["latency_p90"] for s in SEEDS])
        b = np.mean([results[f"mp-serial:c{i:02d}:s{s}"]["latency_p90"] for s in SEEDS])
        ratio = c / b if b > 0 else math.inf
        if ratio > worst_ratio:
            worst, worst_ratio = (float(c), float(b)), ratio
    return {"computron": worst[0], "mp-serial": worst[1]}


_ABSTRACT = "abstract"
CLAIMS = [
    Claim(
        "parallel-swap",
        "Computron parallelizes model swapping over multiple GPUs: OPT-13B loads faster on 2 GPUs than on 1, and "
        "on 4 than on 2",
        source=_ABSTRACT, verified=True,
        cases={f"n{n}": ScenarioSpec(variant="computron", profile=_NODE, workload="opt-13b", params={"tp": n})
               for n in (1, 2, 4)},
        derive=derive_parallel_swap, expect=Ordered(("n = 4", "n = 2", "n = 1"), margin=0.02, lower=True),
        nulls=(Null("mp-serial (shards one after another)", variants={"computron": "mp-serial"}),),
        defect=_FORMULA_DEFECT,
        note=_HW_NOTE + "The abstract gives no number; the ordering is the claim (2 % margin, ties fail). "
                        "Layouts n = 2, 4 are tensor-parallel (tp = n, pp = 1). " + _BY_CONSTRUCTION,
    ),
    Claim(
        "aggregate-bandwidth",
        "Computron uses the aggregate CPU-GPU link bandwidth: at n = 4 the host-to-GPU rate exceeds one link's "
        "bandwidth",
        source=_ABSTRACT, verified=True,
        cases={"n4": ScenarioSpec(variant="computron", profile=_NODE, workload="opt-13b", params={"tp": 4})},
        derive=derive_aggregate, expect=Ordered(("n = 4", "one link"), margin=0.02, lower=False),
        nulls=(Null("single-link bound (one device, one link)", variants={"computron": "single-device"}),),
        defect=_FORMULA_DEFECT,
        note=_HW_NOTE + "One link = PCIe 4.0 x16, 31.5 GB/s per direction (nominal); ours is S / load_time. "
                        + _BY_CONSTRUCTION,
    ),
    Claim(
        "bursty-skewed",
        "Computron tolerates burstiness and skewed request rates: at tp x pp = 4 its p90 latency is lower than "
        "the same four GPUs swapping their shards one after another (mp-serial) in every CV 4 and every skewed "
        "configuration of the authors' 18",
        source=_ABSTRACT, verified=True,
        cases=_bursty_cases(), derive=derive_bursty,
        expect=Ordered(("computron", "mp-serial"), margin=0.02, lower=True),
        nulls=(Null("single-device in computron's place", variants={"computron": "single-device"}),),
        defect=_BURSTY_DEFECT,
        note=_HW_NOTE + "The baseline is mp-serial on the same 4 GPUs (issue 42: it was one GPU of the 4-GPU node, "
                        "a straw man); the null puts the whole model on one device in computron's place, which could "
                        "beat mp-serial if swapping one big model over one link were as good. The ordering does not "
                        "isolate burstiness: the same holds on the calm configurations (docs page). "
                        "Simulate fidelity, 5 seeds per configuration (the authors' client seeds are unseeded, "
                        "so their traces cannot be regenerated); p90 averaged over the seeds; the value shown is "
                        "the configuration where computron comes closest. tp = 4, pp = 1. Configurations "
                        + ", ".join(f"c{i:02d}" for i in BURSTY_SKEWED_CONFIGS) + ".",
    ),
]


# --------------------------------------------------------------------------- properties


def _fit(scenario, **params):
    """The scenario at model fidelity with *params*, tp x pp clamped to the profile's GPUs."""
    p = {**scenario.params, **params}
    have = scenario.profile.devices_per_node if scenario.profile.require_device().type != "cpu" else 1
    tp = min(int(p["tp"]), have)
    pp = min(int(p["pp"]), max(1, have // tp))
    p.update(tp=tp, pp=pp)
    return dataclasses.replace(scenario, fidelity="model", params=p)


def _eval(tech, scenario):
    try:
        return tech.evaluate(scenario)
    except ParameterError as exc:  # a generated GPU too small for the model: not this property's case
        raise Skip(str(exc)) from None


def check_swap_monotone(tech, scenario):
    """computron's load time is non-increasing in n (tp = 1, 2, 4, ... up to the node)."""
    base = _fit(scenario)
    have = base.profile.devices_per_node
    prev = math.inf
    n = 1
    while n <= have:
        sc = dataclasses.replace(base, variant="computron", params={**base.params, "tp": n, "pp": 1})
        t = _eval(tech, sc)["load_time"]
        if not (t <= prev * (1 + 1e-12)):
            raise AssertionError(f"load time rose from {prev} to {t} s at n = {n}")
        prev, n = t, n * 2


def check_slower_link(tech, scenario):
    """Halving the host link's bandwidth never lowers the swap time (raises it where the link binds)."""
    sc = _fit(scenario)
    dev = sc.profile.require_device()
    if dev.host_link is None or sc.variant == "resident":
        return
    slow = sc.profile.with_overrides({"device.host_link.bandwidth": f"{dev.host_link.bandwidth / 2} B/s"})
    a = _eval(tech, sc)
    b = _eval(tech, dataclasses.replace(sc, profile=slow))
    if not (b["load_time"] >= a["load_time"] * (1 - 1e-12)):
        raise AssertionError(f"{a['load_time']} -> {b['load_time']} s")
    if tech.evaluate(sc).artifacts["swap"]["bound"] == "link":
        if not (b["load_time"] > a["load_time"]):
            raise AssertionError("the link binds but halving it did not raise the load time")


def check_nvlink_only_tp(tech, scenario):
    """The intra-node level changes the service time only when tp > 1 (or pp > 1)."""
    sc = _fit(scenario)
    if not sc.profile.network:
        return
    lvl = sc.profile.network[0]
    slow = sc.profile.with_overrides({"network.0.bandwidth": f"{lvl.bandwidth / 10} B/s"})
    one = dataclasses.replace(sc, params={**sc.params, "tp": 1, "pp": 1})
    a, b = _eval(tech, one), _eval(tech, dataclasses.replace(one, profile=slow))
    if not (a["service_time"] == b["service_time"]):
        raise AssertionError("tp = pp = 1 but the NVLink level changed the service time")
    have = sc.profile.devices_per_node
    if have >= 2:
        two = dataclasses.replace(sc, variant="computron", params={**sc.params, "tp": 2, "pp": 1})
        a, b = _eval(tech, two), _eval(tech, dataclasses.replace(two, profile=slow))
        if not (b["service_time"] > a["service_time"]):
            raise AssertionError("tp = 2 but a 10x slower NVLink did not slow the service")


def check_shards_add_up(tech, scenario):
    """n shards of S / n bytes make the model; max_loaded shards fit the GPU (else the case is refused)."""
    r = _eval(tech, _fit(scenario))
    if not (math.isclose(r["shard_bytes"] * r["shards"], r["model_bytes"], rel_tol=1e-12)):
        raise AssertionError('failed: math.isclose(r["shard_bytes"] * r["shards"], r["model_bytes"], rel_tol=1e-12)')
    if not (r["peak_memory"] <= scenario.profile.require_device().memory or scenario.variant == "resident"):
        raise AssertionError('failed: r["peak_memory"] <= scenario.profile.require_device().memory or scenario.variant == "resident"')


def check_serving_invariants(tech, scenario):
    """Simulate (3 s of computron-c13): resident <= max_loaded, loaded - offloaded bytes = resident bytes,
    response >= service, per-model FIFO."""
    import numpy as np

    from suite_computron import simulate
    from suite_computron.workloads import serving_workload

    sc = _fit(scenario)
    wl = serving_workload("computron-c13")
    sim = dataclasses.replace(sc, fidelity="simulate", workload=wl,
                              params={**sc.params, "duration": 3.0, "max_loaded": None})
    try:
        eng, st = simulate.simulate(sim)
    except ParameterError as exc:
        raise Skip(str(exc)) from None
    if not (eng.max_resident <= (st["max_loaded"] if eng.swaps else eng.M)):
        raise AssertionError(f"{eng.max_resident} resident")
    resident = sum(1 for s in eng.state if s == "loaded")
    if eng.swaps:
        if not (math.isclose(eng.bytes_loaded - eng.bytes_offloaded, resident * eng.S, rel_tol=1e-12)):
            raise AssertionError('failed: math.isclose(eng.bytes_loaded - eng.bytes_offloaded, resident * eng.S, rel_tol=1e-12)')
    lat = eng.done_t - np.concatenate(eng.arrivals)
    if not (np.all(lat >= eng.service_t * (1 - 1e-9) - 1e-12)):
        raise AssertionError("a response shorter than its batch's service")
    for m in range(eng.M):
        a, b = int(eng.offset[m]), int(eng.offset[m + 1])
        if not (np.all(np.diff(eng.start_t[a:b]) >= 0)):
            raise AssertionError(f"model {m}: requests started out of arrival order")


TECHNIQUE = declare_technique(
    __name__, claims=CLAIMS,
    validation=[
        ScenarioSpec(variant="computron", fidelity="execute", workload="opt-1.3b", params={"tp": n})
        for n in (1, 2)
    ],
)
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, VARIANTS, PARAMETERS = TECHNIQUE.paper, TECHNIQUE.variants, TECHNIQUE.parameters
PROPERTIES = TECHNIQUE.properties
