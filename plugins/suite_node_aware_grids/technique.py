"""Node-aware processor grids (Irmler et al., arXiv 2307.08829): the technique declaration.

Variants, parameters, fidelities, claims (with where each came from: the paper's abstract, the
only part of the paper that was read, or the authors' CTF code) and the declared properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
import math

from suite.api import Assumption, Claim, Null, Ordered, ScenarioSpec, declare_technique

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "times_by_variant"]


_PROFILE = "perlmutter-cpu"
_MMM = "node-aware-grids-mmm-65536"
_CC = "node-aware-grids-cc-ladder-o64-v512"


def times_by_variant(results):
    """Claim derive function: variant label -> modelled time (s), for an :class:`Ordered` claim."""
    return {label: r["time"] for label, r in results.items()}


def _pair(workload, ranks, ppn):
    prm = {"ranks": ranks, "ranks_per_node": ppn}
    return {v: ScenarioSpec(variant=v, profile=_PROFILE, workload=workload, params=prm)
            for v in ("node-aware", "default-grid")}


_SCEN = ("The paper's machine, sizes and speed-ups were not found (only the abstract was read); this "
         "scenario is ours, fixed before any run: Perlmutter CPU nodes (2x EPYC 7763, one 200 Gb/s "
         "Slingshot-11 NIC), 64 ranks per node, fp64. ")
_INTRA = ("The intra-node level (shared-memory copies at half the DRAM bandwidth, shared by the node's ranks) "
          "is an assumption; docs/techniques/node-aware-grids.md shows how the ordering moves with it. ")

#: the nulls of both orderings: the baseline against itself is a tie (never evidence, docs/verdicts.md); the
#: other node-unaware grid (summa-2d) in node-aware's place is computed and could beat the default grid by
#: the margin too, in which case the ordering would not show what node-awareness adds (issue 42)
_NULLS = (Null("baseline default-grid", variants={"node-aware": "default-grid"}),
          Null("summa-2d (another node-unaware grid) in node-aware's place", variants={"node-aware": "summa-2d"}))
#: the assumption both orderings rest on (docs page, sensitivity table), with each ordering's own flip: the
#: inner bandwidth at which node-aware's speed-up over default-grid crosses the 2% margin, found by bisecting
#: network.0.bandwidth at the claim's scenario (MMM 1.0192 at 6.5 GB/s, 1.0217 at 6.6; CC 1.0198 at 14.1 GB/s,
#: 1.0203 at 14.2; below it the ordering fails, above it holds)
_SHM_NAME = "intra-node level: shared-memory copies at half a socket's DRAM bandwidth (102.4 GB/s)"
_SHM_MMM = Assumption(_SHM_NAME, "102.4 GB/s", flip_at="about 6.53 GB/s (1/15.7 of it): the MMM ordering fails below",
                      sourced=False, note="MMM holds from 1/15 of it upwards (19-30% gain at 1/4 and above)")
_SHM_CC = Assumption(_SHM_NAME, "102.4 GB/s", flip_at="about 14.14 GB/s (1/7.2 of it): the CC ordering fails below",
                     sourced=False, note="the fragile ordering: a 5-10% gain from a quarter of it upwards, 1.02 at 1/7.2")

CLAIMS = [
    Claim(
        "mmm-256n-faster",
        "Node-aware processor grids give 'significantly improved performance' for matrix-matrix multiplication "
        "on up to several hundred nodes compared to implementations without them (read: node-aware faster than "
        "the default grid by more than 2%, square fp64 MMM n = 65,536 on 256 nodes)",
        source="abstract", verified=True,
        cases=_pair(_MMM, 256 * 64, 64), derive=times_by_variant,
        expect=Ordered(("node-aware", "default-grid"), margin=0.02, lower=True),
        nulls=_NULLS, assumptions=(_SHM_MMM,),
        note=_SCEN + _INTRA + "'Significantly' has no number; we test the ordering with the 2% margin of docs/verdicts.md.",
    ),
    Claim(
        "cc-ladder-64n-faster",
        "Node-aware grids improve tensor-contraction performance compared to implementations without them "
        "(read: node-aware faster than the default grid by more than 2% on the CC ladder term abcd,cdij->abij, "
        "o = 64, v = 512, 64 nodes)",
        source="abstract", verified=True,
        cases=_pair(_CC, 64 * 64, 64), derive=times_by_variant,
        expect=Ordered(("node-aware", "default-grid"), margin=0.02, lower=True),
        nulls=_NULLS, assumptions=(_SHM_CC,),
        note=_SCEN + _INTRA + "o and v are ours (Cc4s sizes not found).",
    ),
]


# --------------------------------------------------------------------------- properties


def _fit(scenario, ppn: int | None = None):
    """The scenario with ranks and dtype adjusted to what its (generated) profile offers: at most its
    nodes (a power of two), fp32 when the device has no fp64 peak."""
    prof = scenario.profile
    p = dict(scenario.params)
    ppn = int(ppn if ppn is not None else p["ranks_per_node"])
    have = prof.num_nodes if prof is not None else 1
    from suite_node_aware_grids import model

    want = max(1, model.ranks_of(p, prof) // max(1, int(p["ranks_per_node"])))
    nodes = min(want, 1 << int(math.log2(max(1, have))))
    p.update(ranks=nodes * ppn, ranks_per_node=ppn, grid="auto")
    dev = prof.device if prof is not None else None
    if dev is not None and p["dtype"] not in dev.peak_flops:
        p["dtype"] = "fp32"
    return dataclasses.replace(scenario, params=p, fidelity="model")


def _eval(tech, scenario, **kw):
    sc = dataclasses.replace(scenario, **kw)
    return tech.evaluate(sc)


def check_enumeration(tech, scenario):
    """Every inter-node grid has prod g = N and g | lens, and the tree search equals a brute force."""
    from suite_node_aware_grids import grids

    r = tech.evaluate(_fit(scenario))
    lens, ppn = tuple(r.artifacts["grid"]["lens"]), int(_fit(scenario).params["ranks_per_node"])
    nodes = math.prod(lens) // ppn
    found = grids.inter_node_grids(lens, nodes)
    if not (list(found) == grids.brute_force_inter_node_grids(lens, nodes)):
        raise AssertionError(f"enumeration differs for {lens}, N={nodes}")
    for g in found:
        if not (math.prod(g) == nodes and all(l % x == 0 for l, x in zip(lens, g))):
            raise AssertionError(f"bad inter-node grid {g}")


def check_volume_not_above_default(tech, scenario):
    """node-aware's inter-node volume <= default-grid's; inter + intra equal for both."""
    sc = _fit(scenario)
    na = _eval(tech, sc, variant="node-aware")
    de = _eval(tech, sc, variant="default-grid")
    if not (na["inter_node_bytes"] <= de["inter_node_bytes"] * (1 + 1e-12)):
        raise AssertionError(f"node-aware {na['inter_node_bytes']} B > default {de['inter_node_bytes']} B")
    tot_na = na["inter_node_bytes"] + na["intra_node_bytes"]
    tot_de = de["inter_node_bytes"] + de["intra_node_bytes"]
    if not (math.isclose(tot_na, tot_de, rel_tol=1e-12)):
        raise AssertionError(f"inter + intra changed by renumbering: {tot_na} vs {tot_de}")


def check_ppn1_equals_default(tech, scenario):
    """ranks_per_node = 1: node-aware is exactly default-grid."""
    sc = _fit(scenario, ppn=1)
    na = _eval(tech, sc, variant="node-aware")
    de = _eval(tech, sc, variant="default-grid")
    if not (na["time"] == de["time"] and na["speedup"] == 1.0):
        raise AssertionError(f"ppn=1: {na['time']} vs {de['time']}")


def check_one_node_no_inter(tech, scenario):
    """All ranks on one node: no inter-node bytes."""
    sc = _fit(scenario)
    ppn = int(sc.params["ranks_per_node"])
    sc = dataclasses.replace(sc, params={**sc.params, "ranks": ppn})
    r = tech.evaluate(sc)
    if not (r["inter_node_bytes"] == 0.0):
        raise AssertionError(f"one node moved {r['inter_node_bytes']} B between nodes")


def check_faster_links(tech, scenario):
    """Doubling the outer or the inner level's bandwidth never makes a variant slower; halving the
    outer one changes the time when data crosses nodes, halving the inner one when ppn > 1 and data
    moves inside nodes."""
    sc = _fit(scenario)
    prof = sc.profile
    t0 = tech.evaluate(sc)
    n = len(prof.network)
    for lvl in sorted({0, n - 1}):
        bw = prof.network[lvl].bandwidth
        faster = prof.with_overrides({f"network.{lvl}.bandwidth": f"{2 * bw} B/s"})
        t1 = tech.evaluate(dataclasses.replace(sc, profile=faster))
        if not (t1["time"] <= t0["time"] * (1 + 1e-12)):
            raise AssertionError(f"time rose from {t0['time']} to {t1['time']} s (level {lvl} x2)")
    if t0["inter_node_bytes"] > 0:
        slower = prof.with_overrides({f"network.{n - 1}.bandwidth": f"{prof.network[-1].bandwidth / 2} B/s"})
        t2 = tech.evaluate(dataclasses.replace(sc, profile=slower))
        if not (t2["time"] > t0["time"]):
            raise AssertionError("halving the inter-node bandwidth did not change the time")
    if n > 1 and int(sc.params["ranks_per_node"]) > 1 and t0["intra_node_bytes"] > 0:
        slower = prof.with_overrides({"network.0.bandwidth": f"{prof.network[0].bandwidth / 2} B/s"})
        t3 = tech.evaluate(dataclasses.replace(sc, profile=slower))
        if not (t3["time"] > t0["time"]):
            raise AssertionError("halving the intra-node bandwidth did not change the time (ppn > 1)")


def check_execute_oracle(tech, scenario):
    """Execute: C equals numpy.einsum, and the ledger's inter-node bytes equal the formula."""
    prm = {**scenario.params, "ranks": 16, "ranks_per_node": 4, "grid": "auto", "o": None, "v": None, "n": None}
    from suite_node_aware_grids import execute
    from suite_node_aware_grids.workloads import contraction_workloads

    # the execute scenario is built from the one given, on the shipped Perlmutter CPU profile (an
    # input of every case, Technique.uses: a plugin never calls the runner nor looks a profile up)
    ring = next(w for w in contraction_workloads() if w.name == "node-aware-grids-cc-ring")
    sc = dataclasses.replace(scenario, fidelity="execute", workload=ring, profile=scenario.input(f"profile:{_PROFILE}"),
                             params=tech.validate_params(prm))
    r = execute.evaluate(sc, repeats=1)
    if not (r["oracle_error"] <= 1e-12):
        raise AssertionError(f"oracle error {r['oracle_error']}")
    if not (r["inter_node_bytes"] == r["inter_node_bytes_formula"]):
        raise AssertionError(f"ledger {r['inter_node_bytes']} B != formula {r['inter_node_bytes_formula']} B")


TECHNIQUE = declare_technique(__name__, claims=CLAIMS, uses=(f"profile:{_PROFILE}",))
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
