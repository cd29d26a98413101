"""Theseus (Aramburu et al., arXiv 2508.05029, 2025): the technique declaration.

Variants, parameters, fidelities, the two claims of the abstract (the only part of the paper
read: every number is from the abstract), their null predictions, and the declared properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
import math

from suite.api import (Assumption, Claim, Exact, Gain, Null, Param, ScenarioSpec, declare_technique,
                       with_reasons)

from suite_theseus.constants import QUERIES

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "max_cost_parity_speedup", "all_feasible",
           "COST_PARITY_WITH"]


PARAMETERS = {
    "query": Param(int, default=6, minimum=1, maximum=22,
                   help=f"TPC-H query; implemented: {list(QUERIES)}"),
    "sf": Param(float, default=None, optional=True, minimum=1e-4, maximum=1e6, measured=(1000, 100000),
                help="scale factor (default: the tpch-sf<X> workload's)"),
    "workers": Param(int, default=4, unit="workers", minimum=1, maximum=16,
                     help="simulated GPU workers K (execute)"),
    "batch_rows": Param(int, default=8192, unit="rows", minimum=16, maximum=1 << 24,
                        help="rows per scan batch (execute)"),
    "hbm_budget": Param(float, default=float(64 << 20), unit="B", minimum=0, maximum=1e15,
                        help="device bytes per worker for intermediate batches (execute)"),
    "host_pool": Param(float, default=float(64 << 20), unit="B", minimum=0, maximum=1e13,
                       help="pinned host pool bytes per worker (execute)"),
    "page_size": Param(float, default=float(64 << 10), unit="B", minimum=1, maximum=1e15,
                       help="host page bytes (fixed-size pool); <= the node's host memory"),
    "batch_bytes": Param(float, default=float(256 << 20), unit="B", minimum=1, maximum=1e13,
                         help="bytes scanned per batch per worker (model: the pipeline's batch count)"),
    "usd_per_hour": Param(float, default=None, optional=True, unit="USD/h", minimum=0.01, maximum=1e6,
                          help="cost parity: use floor(usd_per_hour / node_hour) nodes of the profile"),
    "parity_with": Param(str, default=None, optional=True, ref="profile",
                         help="cost parity with a profile: the budget is its [cost] node_hour x its nodes "
                              "(instead of usd_per_hour)"),
    "sim_batches": Param(int, default=None, optional=True, minimum=1, maximum=100_000,
                         help="batches simulated (simulate; default: the model's, capped at 1,000)"),
    "queue_depth": Param(int, default=2, minimum=1, maximum=64, help="batches between two executors (simulate)"),
    "jitter": Param(float, default=0.0, minimum=0.0, maximum=0.9,
                    help="per-batch stage-time spread, uniform in [1-j, 1+j] (simulate)"),
}

_GPU, _CPU, _DGX = "theseus-p4d-4n", "theseus-cpu-i3-64n", "theseus-dgx-a100-2n"
#: cost parity: both engines spend what the GPU cluster costs per hour, read by the model from that
#: profile's [cost] (node_hour x nodes: 4 p4d.24xlarge at 32.77 USD/h, inherited from aws-p4d-24xlarge)
COST_PARITY_WITH = _GPU
_SFS = (1000, 3000, 10000, 30000)


def max_cost_parity_speedup(results):
    """The largest T(cpu-engine) / T(theseus) over the implemented queries and SF 1k-30k (claim 1).

    A GPU case that is infeasible counts as no speed-up (0)."""
    best = 0.0
    for q in QUERIES:
        for sf in _SFS:
            g, c = results[f"gpu-q{q}-sf{sf}"], results[f"cpu-q{q}-sf{sf}"]
            if "query_time" in g and "query_time" in c:
                best = max(best, c["query_time"] / g["query_time"])
    return best


def all_feasible(results):
    """Whether every implemented query is feasible (claim 2)."""
    return all(r["feasible"] == 1.0 for r in results.values())


_PARITY_NOTE = (
    "The abstract gives neither instance types, node counts nor what 'cost parity' means. Read here as: "
    "equal USD per hour of on-demand instances: 4 AWS p4d.24xlarge (32.77 USD/h each, 131.08 USD/h) for the GPU "
    "engine against as many i3.16xlarge (4.992 USD/h) as that buys (26) for the CPU engine; Photon is closed, so the "
    "CPU engine is DuckDB's per-core rate measured on this machine (coefficients.json), scaled by cores and bounded by "
    "DRAM and NVMe bandwidth. 'Up to 4x' is read as the largest ratio over our seven queries and the four SFs. ")

CLAIMS = [
    Claim(
        "cost-parity-4x",
        "TPC-H at SF 1k-30k on cloud infrastructure: Theseus outperforms Databricks Photon by up to 4x at cost parity",
        source="abstract", verified=True,
        cases={**{f"gpu-q{q}-sf{sf}": ScenarioSpec(variant="theseus", profile=_GPU, workload=f"tpch-sf{sf}",
                                                   params={"query": q, "parity_with": COST_PARITY_WITH})
                  for q in QUERIES for sf in _SFS},
               **{f"cpu-q{q}-sf{sf}": ScenarioSpec(variant="cpu-engine", profile=_CPU, workload=f"tpch-sf{sf}",
                                                   params={"query": q, "parity_with": COST_PARITY_WITH})
                  for q in QUERIES for sf in _SFS}},
        derive=max_cost_parity_speedup, expect=Gain(4.0, rel=0.2),
        nulls=(Null("no gain", value=1.0), Null("serial GPU engine at the same cost", variants={"theseus": "serial"})),
        note=_PARITY_NOTE + "The 'serial' null asks whether the gain is the design's (overlap) or the hardware's.",
    ),
    Claim(
        "sf100k-2-dgx",
        "All TPC-H queries at SF 100k (100 TB) run on as few as 2 DGX A100 640GB nodes",
        source="abstract", verified=True,
        cases={f"q{q}": ScenarioSpec(variant="theseus", profile=_DGX, workload="tpch-sf100000", params={"query": q})
               for q in QUERIES},
        derive=all_feasible, expect=Exact(True),
        nulls=(Null("no spill tier (in-memory)", variants={"theseus": "in-memory"}),
               Null("the engine without overlap (serial) in Theseus's place", variants={"theseus": "serial"})),
        note="A capacity check (issue 42): feasibility is the working set fitting HBM + host memory + NVMe, which "
             "any engine with a spill tier meets, so the serial engine passes too (not discriminating), and one DGX "
             "node would as well (docs page); it shows what the spill tier adds, not Theseus's design. "
             "Judged on our seven TPC-H queries only (TPC-DS is out of scope). Feasible = the working set (join build "
             "sides + intermediate batches, from the engine's ledger scaled in SF) fits HBM + host memory + local NVMe. "
             "Where the 100 TB live is not in the abstract: assumed a storage network at 2 x 200 Gb/s per node.",
    ),
]


# --------------------------------------------------------------------------- properties


def _model(tech, scenario, **kw):
    sc = dataclasses.replace(scenario, fidelity="model", **kw)
    return tech.evaluate(sc)


def _fit(scenario):
    """Scenario with a valid query, an SF, and no cost-parity budget (generated profiles have no price)."""
    from suite_theseus import tpch

    p = dict(scenario.params)
    if int(p["query"]) not in QUERIES:
        p["query"] = QUERIES[int(p["query"]) % len(QUERIES)]
    if p.get("sf") is None and tpch.sf_of(scenario.workload) is None:
        p["sf"] = 1000.0
    p["usd_per_hour"] = None
    p["parity_with"] = None
    p["page_size"] = 4096.0
    return dataclasses.replace(scenario, params=p)


def check_bounds(tech, scenario):
    """max(term) <= theseus <= serial = sum(terms)."""
    from suite_theseus import model

    sc = _fit(scenario)
    p = sc.params
    t = model.terms(int(p["query"]), model.scale_factor(sc), sc.profile, "theseus", p)
    if not t["feasible"]:
        return
    parts = [t[k] for k in ("storage", "pcie", "compute", "network", "spill")]
    th, se = model.combine(t, "theseus"), model.combine(t, "serial")
    tol = 1e-9 * se
    if not (max(parts) - tol <= th <= se + tol):
        raise AssertionError(f"theseus {th} not in [max {max(parts)}, serial {se}]")
    if not (math.isclose(se, sum(parts), rel_tol=1e-12)):
        raise AssertionError('failed: math.isclose(se, sum(parts), rel_tol=1e-12)')


def check_ib_slower(tech, scenario):
    """Halving the outer network's bandwidth does not speed a query up (and slows a shuffle-bound one)."""
    sc = _fit(scenario)
    prof = sc.profile
    if not prof.network or prof.kind != "cluster":
        return
    slow = prof.with_overrides({f"network.{len(prof.network) - 1}.bandwidth": f"{prof.network[-1].bandwidth / 2} B/s"})
    for v in ("theseus", "serial"):
        a = _model(tech, dataclasses.replace(sc, variant=v))
        b = _model(tech, dataclasses.replace(sc, variant=v, profile=slow))
        if "query_time" in a and "query_time" in b:
            if not (b["query_time"] >= a["query_time"] * (1 - 1e-12)):
                raise AssertionError(f"{v}: {a['query_time']} -> {b['query_time']}")


def check_in_memory_no_more_feasible(tech, scenario):
    """in-memory is feasible only where theseus is (a spill tier never hurts feasibility)."""
    sc = _fit(scenario)
    a = _model(tech, dataclasses.replace(sc, variant="in-memory"))
    b = _model(tech, dataclasses.replace(sc, variant="theseus"))
    if not (a["feasible"] <= b["feasible"]):
        raise AssertionError("in-memory feasible where theseus is not")


def check_execute_equals_duckdb(tech, scenario):
    """Execute: the engine's answer equals DuckDB's (the evaluate raises otherwise); SF 0.01."""
    from suite_theseus import tpch

    if not tpch.available():
        return
    p = {**_fit(scenario).params, "sf": 0.01, "workers": min(int(scenario.params["workers"]), 4)}
    sc = dataclasses.replace(scenario, fidelity="execute", params=p, workload=None,
                             variant="theseus" if scenario.variant == "cpu-engine" else scenario.variant)
    r = tech.evaluate(sc)
    if r["feasible"] == 1.0:
        if not (r["correct"] == 1.0):
            raise AssertionError('failed: r["correct"] == 1.0')


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_WHY_NOT = {
    "cost-parity-4x": ("setup unknown", "'cost parity' is not defined in the abstract; read as equal USD/h of "
                       "on-demand instances, both engines are NVMe-bound and the ratio compares drive counts (26 "
                       "i3.16xlarge against 4 p4d), so overlap, HBM and network change nothing. With the tables in "
                       "an object store read at each instance's NIC line rate (p4d 400 Gbit/s, i3.16xlarge 25 "
                       "Gbit/s) the ratio is 2.46x, still below the band: compression divides both engines' bytes "
                       "alike and CPU decompression (Snappy >= 0.5 GB/s per core) does not bind at 32 cores"),
}
_DECIDING = {"cost-parity-4x": (
    Assumption("instances at cost parity", "4 p4d.24xlarge vs 26 i3.16xlarge", flip_at=None, sourced=False,
               note="both engines storage-bound: the NVMe drive count decides the ratio"),
    Assumption("where both engines read the tables (storage path)", "local NVMe, 16 GB/s per node",
               flip_at="object store, p4d at 50 GB/s and i3.16xlarge at or below 2.26 GB/s per node",
               sourced=False,
               note="object store at both NIC line rates (ext.theseus.storage_bandwidth = 50 and 3.125 GB/s, "
                    "data_on_nvme = false): 2.46x; the ratio is the NIC sums' (4 x 50 / 26 x 3.125) as both stay "
                    "storage-bound; 3.40x at 2.26 GB/s per i3 node (18 Gbit/s, below its 25 Gbit/s line rate)"),
)}


TECHNIQUE = declare_technique(__name__, parameters=PARAMETERS,
                              claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING))
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
