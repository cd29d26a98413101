"""Cost model of Theseus (Aramburu et al., arXiv 2508.05029): one TPC-H query at scale factor SF
on a hardware profile.

Bytes per query (all workers; :func:`query_bytes`)
--------------------------------------------------
``value(SF) = a + b * SF`` for each counter of the execute engine's ledger (scanned, routed by
shuffles, broadcast table, join build sides, intermediate bytes kept), from the committed table
``coefficients.json`` that ``python -m suite_theseus.calibrate`` regenerates from the engine at
SF 0.01 and 0.1. Linearity in SF is tested over SF 0.01-1, and the scanned bytes against the
specification's row counts times the column widths (TPC-H 3.0.1 clause 4.2.5.1).

Time per resource (R = N x G workers on N nodes of G GPUs)
----------------------------------------------------------
* storage: ``S / (N B_store)``; ``B_store`` = ``[ext.theseus] storage_bandwidth``, else
  ``nvme_bandwidth`` (tables on the local NVMe), else no storage term (tables in host memory);
* PCIe (``device.host_link``): ``(S + 2 H + 2 D) / (R B_pcie)``, bounded below by the host DRAM
  ``(S + 2 H + 2 D) / (N B_dram)`` (``[ext.theseus] host_memory_bandwidth``); ``H``, ``D``: bytes
  spilled to the host pool and to disk (written once, read back once);
* compute (HBM-bound, the operators stream their inputs): ``PASSES (S + X + W) / (R B_hbm)``
  (:data:`PASSES`);
* network: ``n_b`` all-to-alls of ``X (R-1) / (R^2 n_b)`` bytes per rank plus one all-gather of the
  broadcast tables, both priced by :func:`suite.perf.collective.collective_time` (NVLink inside
  a node, InfiniBand / EFA across);
* disk spill: ``2 D / (N B_nvme)``.

Spill: the working set ``W = build + kept`` beyond the aggregate HBM ``R M_hbm`` goes to the host
pool (``N M_host u``; ``u = 1`` for fixed-size pages, :data:`FIRST_FIT_UTILISATION` for
first-fit variable-size buffers), the rest to the NVMe (``N M_nvme``, less the tables when
``[ext.theseus] data_on_nvme``: :data:`TPCH_BYTES_PER_SF` x SF); beyond that, or when the tables
do not fit the NVMe, the query is infeasible. ``in-memory`` has no spill tier: infeasible when
``W > R M_hbm``.

Variants: ``serial`` = the sum of the five terms (one batch is loaded, computed, shuffled and
spilled before the next starts); ``theseus`` (and ``variable-host-alloc``, ``in-memory``) = pipeline
fill + the largest term, ``sum / n_b + max (n_b - 1) / n_b`` with ``n_b`` batches of
``batch_bytes`` per worker (the tandem-line makespan with uniform batches, which the simulate
fidelity checks). ``cpu-engine`` (the stand-in for Photon): on a CPU cluster,
``max(S / (N c r_q), S / (N B_dram), S / (N B_store), T_net)`` with ``c`` cores per node and
``r_q`` the per-core rate of query ``q`` calibrated by running it in DuckDB (vectorised like
Photon) with one thread on this machine (``coefficients.json``), assumed the same per core on the
target CPU (no clock or IPC scaling: a stated simplification).

Cost parity: with a budget ``U`` (USD/h), a profile with ``cost.node_hour`` uses
``floor(U / node_hour)`` of its nodes. ``U`` is ``usd_per_hour``, or, with ``parity_with`` naming
a profile, what that profile costs per hour: its ``cost.node_hour`` x its nodes
(:func:`budget_usd_per_hour`), so a claim's budget follows the price in the profile.
"""

from __future__ import annotations

import functools
import json
import math

from suite_theseus import tpch

__all__ = ["PASSES", "FIRST_FIT_UTILISATION", "TPCH_BYTES_PER_SF", "coefficients", "query_bytes", "scale_factor",
           "ext_of", "budget_usd_per_hour", "nodes_for", "terms", "evaluate", "combine"]

#: HBM passes per byte of operator input (read the input, write and read back one intermediate,
#: write the output): an ASSUMPTION of the model, per technique (no figure in the abstract)
PASSES = 4.0
#: usable fraction of a first-fit variable-size pool in equilibrium: Knuth's fifty-percent rule
#: (TAOCP vol. 1, section 2.5: about half as many holes as blocks; with holes as large as blocks
#: on average, 1/3 of the memory is unused)
FIRST_FIT_UTILISATION = 2.0 / 3.0

#: bytes of the TPC-H database per unit scale factor, held on the local NVMe when the profile's
#: ``[ext.theseus] data_on_nvme``: TPC-H 3.0.1 clause 4.1.3.1 (SF 1 is about 1 GB of data)
TPCH_BYTES_PER_SF = 1e9

COUNTERS = ("scanned", "routed", "broadcast_table", "build", "kept")


@functools.lru_cache(maxsize=1)
def coefficients() -> dict:
    """The committed coefficient table (``coefficients.json``; regenerate with
    ``python -m suite_theseus.calibrate``), read through :func:`suite.read_data` so that its
    contents are part of every case key."""
    from suite.api import read_data

    return json.loads(read_data(__name__, "coefficients.json"))


def query_bytes(query: int, sf: float) -> dict[str, float]:
    """Bytes of each counter of :data:`COUNTERS` for *query* at scale factor *sf* (all workers):
    ``a + b sf`` from :func:`coefficients`."""
    row = coefficients()["queries"][str(int(query))]
    return {c: max(0.0, row[c]["a"] + row[c]["b"] * float(sf)) for c in COUNTERS}


def scale_factor(scenario) -> float:
    """The scenario's SF: its ``tpch-sf<X>`` workload's, else the ``sf`` parameter."""
    from suite.api import ParameterError

    sf = tpch.sf_of(scenario.workload)
    if sf is None:
        sf = scenario.params.get("sf")
    if sf is None:
        raise ParameterError("theseus: parameter 'sf': expected a scale factor (or a tpch-sf<X> workload), got None")
    return float(sf)


def ext_of(profile) -> dict:
    """``[ext.theseus]`` in SI units (validated by the plugin's schema), or {} when absent."""
    from suite.api import ProfileError

    raw = (profile.ext or {}).get("theseus") if profile is not None else None
    if not raw:
        return {}
    if isinstance(raw, dict) and any(isinstance(v, str) for v in raw.values()):
        from pydantic import ValidationError

        from suite_theseus.extension import TheseusExt

        try:
            raw = TheseusExt(**raw).model_dump()
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise ProfileError(f"theseus: profile {profile.name}: field ext.theseus.{field}: {err['msg']}") from None
    return dict(raw)


def budget_usd_per_hour(params, parity=None) -> float | None:
    """The cost-parity budget (USD/h) of a case: ``usd_per_hour``, or with ``parity_with`` the named
    profile's ``cost.node_hour`` x its node count; None when neither is set.

    *parity* is the profile ``parity_with`` names, resolved by the runner
    (``scenario.input("parity_with")``: a ``Param(..., ref="profile")``, so its price is part of
    the case key).

    Raises
    ------
    suite.errors.ParameterError
        Both set; ``parity_with`` names a profile without a ``[cost]`` price.
    """
    from suite.api import ParameterError

    usd, ref = params.get("usd_per_hour"), params.get("parity_with")
    if ref is None:
        return None if usd is None else float(usd)
    if usd is not None:
        raise ParameterError(f"theseus: parameters 'usd_per_hour' and 'parity_with': expected one of them, got both "
                             f"({usd:g} USD/h and {ref!r})")
    if parity is None:
        raise ParameterError(f"theseus: parameter 'parity_with': expected the profile {ref!r} resolved by the runner "
                             f"(scenario.input('parity_with')), got only its name")
    _ref = parity
    if _ref.cost is None or _ref.cost.node_hour is None:
        raise ParameterError(f"theseus: parameter 'parity_with': expected a profile with a [cost] node_hour price, "
                             f"got {ref!r} (no price)")
    return float(_ref.cost.node_hour) * _ref.num_nodes


def nodes_for(profile, usd_per_hour: float | None) -> int:
    """Nodes of *profile* used: ``floor(usd_per_hour / cost.node_hour)`` at cost parity, else all.

    Raises ParameterError when the budget buys no node or more nodes than the profile has."""
    from suite.api import ParameterError

    have = profile.num_nodes
    price = profile.cost.node_hour if profile.cost is not None else None
    if usd_per_hour is None or price is None:
        return have
    n = int(math.floor(float(usd_per_hour) / price + 1e-9))
    if not 1 <= n <= have:
        raise ParameterError(f"theseus: parameter 'usd_per_hour': {usd_per_hour:g} USD/h buys {n} nodes of "
                             f"{profile.name} at {price:g} USD/h; expected 1 to {have}")
    return n


def _collective(op, nbytes, profile, ranks):
    from suite.api import collective_time, group_of

    if ranks <= 1 or nbytes <= 0 or not profile.network:
        return 0.0
    return collective_time(op, nbytes, group_of(profile, ranks), profile).time


def terms(query: int, sf: float, profile, variant: str, params, parity=None) -> dict:
    """Per-resource times (s), bytes and feasibility of one query (see the module doc).

    Returns a dict with ``storage, pcie, compute, network, spill`` (s), ``batches``,
    ``spill_host``, ``spill_disk``, ``working_set`` (B), ``feasible`` (bool), ``nodes``,
    ``workers``, the byte counters."""
    from suite.api import ParameterError

    b = query_bytes(query, sf)
    S, X, Bt = b["scanned"], b["routed"], b["broadcast_table"]
    W = b["build"] + b["kept"]
    dev = profile.require_device()
    ext = ext_of(profile)
    n = nodes_for(profile, budget_usd_per_hour(params, parity)) if profile.kind == "cluster" else 1
    g = profile.devices_per_node
    r = n * g
    host_mem = profile.node.host_memory if profile.node is not None and profile.node.host_memory else 0.0
    page = float(params.get("page_size") or 0)
    if host_mem and page > host_mem:
        from suite.api import format_quantity

        raise ParameterError(f"theseus: parameter 'page_size': expected <= the {format_quantity(host_mem, 'bytes')} "
                             f"host memory of {profile.name}, got {format_quantity(page, 'bytes')}")
    batch_bytes = float(params["batch_bytes"])
    nb = max(1, math.ceil(S / (r * batch_bytes)))
    hbm_total = r * dev.memory
    util = FIRST_FIT_UTILISATION if variant == "variable-host-alloc" else 1.0
    host_cap = n * host_mem * util
    tables = TPCH_BYTES_PER_SF * float(sf) if ext.get("data_on_nvme") else 0.0
    disk_cap = n * float(ext.get("nvme_capacity") or 0.0) - tables
    over = max(0.0, W - hbm_total)
    spill_host = min(over, host_cap)
    spill_disk = over - spill_host
    if variant == "in-memory":
        feasible = over == 0.0 and disk_cap >= 0.0
        spill_host = spill_disk = 0.0
    else:
        feasible = spill_disk <= disk_cap
    pcie = dev.host_link.bandwidth if dev.host_link is not None else dev.memory_bandwidth
    moved = S + 2 * spill_host + 2 * spill_disk
    t_pcie = moved / (r * pcie)
    if ext.get("host_memory_bandwidth"):
        t_pcie = max(t_pcie, moved / (n * ext["host_memory_bandwidth"]))
    store_bw = ext.get("storage_bandwidth") or ext.get("nvme_bandwidth")
    t_store = S / (n * store_bw) if store_bw else 0.0
    t_compute = PASSES * (S + X + W) / (r * dev.memory_bandwidth)
    per_rank = X * (r - 1) / (r * r * nb) if r > 1 else 0.0
    t_net = nb * _collective("alltoall", per_rank, profile, r) + _collective("allgather", Bt, profile, r)
    nvme_bw = ext.get("nvme_bandwidth")
    t_spill = 2 * spill_disk / (n * nvme_bw) if spill_disk and nvme_bw else (math.inf if spill_disk else 0.0)
    return {"storage": t_store, "pcie": t_pcie, "compute": t_compute, "network": t_net, "spill": t_spill,
            "batches": nb, "spill_host": spill_host, "spill_disk": spill_disk, "working_set": W,
            "feasible": feasible, "nodes": n, "workers": r, "shuffled": X * (r - 1) / r if r > 1 else 0.0,
            "broadcast": Bt * (r - 1), **{f"bytes_{k}": v for k, v in b.items()}}


def combine(t: dict, variant: str) -> float:
    """Query time from the per-resource terms: the sum (``serial``) or pipeline fill + max."""
    parts = [t["storage"], t["pcie"], t["compute"], t["network"], t["spill"]]
    total = sum(parts)
    if variant == "serial":
        return total
    nb = t["batches"]
    return total / nb + max(parts) * (nb - 1) / nb


def cpu_terms(query: int, sf: float, profile, params, parity=None) -> dict:
    """The ``cpu-engine`` baseline's terms on a CPU cluster profile (module doc)."""
    b = query_bytes(query, sf)
    S, X = b["scanned"], b["routed"]
    dev = profile.require_device()
    ext = ext_of(profile)
    n = nodes_for(profile, budget_usd_per_hour(params, parity)) if profile.kind == "cluster" else 1
    cores = (dev.cores or 1) * profile.devices_per_node
    rate = float(coefficients()["queries"][str(int(query))]["duckdb_rate_per_core"])
    dram = ext.get("host_memory_bandwidth") or dev.memory_bandwidth * profile.devices_per_node
    store_bw = ext.get("storage_bandwidth") or ext.get("nvme_bandwidth")
    t_net = 0.0
    if n > 1 and profile.network:
        from suite.api import Group, collective_time

        t_net = collective_time("alltoall", X * (n - 1) / (n * n), Group(ranks_per_node=1, nodes=n), profile).time
    tables = TPCH_BYTES_PER_SF * float(sf) if ext.get("data_on_nvme") else 0.0
    fits = tables <= n * float(ext.get("nvme_capacity") or 0.0)
    return {"compute": S / (n * cores * rate), "dram": S / (n * dram), "storage": S / (n * store_bw) if store_bw else 0.0,
            "network": t_net, "nodes": n, "workers": n * cores, "feasible": fits,
            "shuffled": X * (n - 1) / n if n > 1 else 0.0, **{f"bytes_{k}": v for k, v in b.items()}}


def evaluate(scenario):
    """Model fidelity: the time of one query (``query``) at SF (workload or ``sf``) on the profile.

    Returns
    -------
    suite.Result
        ``query_time`` (s), ``feasible`` (1/0), the terms ``t_storage``, ``t_pcie``, ``t_compute``,
        ``t_network`` (also as ``comm_time``, the name the kit's network-sensitivity check reads),
        ``t_spill`` (s), ``bytes_scanned``, ``bytes_shuffled``, ``bytes_spilled``,
        ``working_set`` (B), ``nodes``, ``usd_per_hour`` (USD/h, when the profile has a price)
        and ``usd_per_query`` (USD), ``pipeline_batches``. An infeasible case has ``feasible = 0``
        and no ``query_time`` (nor ``usd_per_query``).

    Raises
    ------
    suite.errors.ParameterError
        A query not implemented; ``page_size`` above the node's host memory; a ``usd_per_hour``
        that buys no node or more nodes than the profile has (also the budget of ``parity_with``);
        both ``usd_per_hour`` and ``parity_with``, or a ``parity_with`` profile without a price.
    """
    from suite.api import Result

    p = scenario.params
    q = tpch.check_query(p["query"])
    sf = scale_factor(scenario)
    prof = scenario.profile
    res = Result()
    if scenario.variant == "cpu-engine":
        t = cpu_terms(q, sf, prof, p, scenario.input("parity_with"))
        total = max(t["compute"], t["dram"], t["storage"], t["network"]) if t["feasible"] else math.inf
        for k in ("compute", "dram", "storage", "network"):
            res.add(f"t_{k}", t[k], "s", "lower")
        res.add("comm_time", t["network"], "s", "lower")
    else:
        t = terms(q, sf, prof, scenario.variant, p, scenario.input("parity_with"))
        for k in ("storage", "pcie", "compute", "network", "spill"):
            if math.isfinite(t[k]):
                res.add(f"t_{k}", t[k], "s", "lower")
        res.add("comm_time", t["network"], "s", "lower")
        total = combine(t, scenario.variant) if t["feasible"] else math.inf
        res.add("bytes_spilled", t["spill_host"] + t["spill_disk"], "B", "none")
        res.add("working_set", t["working_set"], "B", "none")
        res.add("pipeline_batches", float(t["batches"]), "1", "none")
    res.add("feasible", 1.0 if t["feasible"] and math.isfinite(total) else 0.0, "1", "higher")
    if math.isfinite(total):
        res.add("query_time", total, "s", "lower")
    res.add("bytes_scanned", t["bytes_scanned"], "B", "none")
    res.add("bytes_shuffled", t["shuffled"], "B", "none")
    res.add("nodes", float(t["nodes"]), "1", "none")
    price = prof.cost.node_hour if prof.cost is not None else None
    if price is not None:
        usd = price * t["nodes"]
        res.add("usd_per_hour", usd, "USD/h", "none")
        if math.isfinite(total):
            res.add("usd_per_query", usd * total / 3600.0, "USD", "lower")
    res.artifacts["terms"] = {k: v for k, v in t.items() if isinstance(v, (int, float, bool))}
    return res
