"""Tests of the theseus plugin: the engine against DuckDB, the memory tiers, the model against the
TPC-H specification and the engine's ledger, the simulation against the closed form, the claims."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_context import session_context
from suite import ScenarioSpec
from suite.errors import ParameterError
from suite.runner.case import Resolver
from suite.runner.case import resolve_case as _resolve_case
from suite_theseus import engine, execute, model, simulate, tpch
from suite_theseus.technique import CLAIMS, TECHNIQUE


_RESOLVER = None


def resolve_case(tech, spec):
    """resolve_case with one shared resolver (profiles and workloads loaded once)."""
    global _RESOLVER
    if _RESOLVER is None:
        _RESOLVER = Resolver(context=session_context())
    return _resolve_case(tech, spec, resolver=_RESOLVER)


@pytest.fixture(scope="session")
def data():
    pytest.importorskip("duckdb", reason="TPC-H needs the [sql] extra")
    pytest.importorskip("duckdb_extension_tpch", reason="TPC-H needs the [sql] extra")
    return tpch.load(0.01)


def run(data, q, **kw):
    out, e = engine.run_query(data, q, **kw)
    ok, err, first = execute.compare(q, execute.to_rows(q, out), tpch.reference_answer(data, q))
    return ok, err, first, e, out


# ----------------------------------------------------------------------------- engine vs DuckDB


@pytest.mark.parametrize("q", tpch.QUERIES)
@pytest.mark.parametrize("k", [1, 4])
def test_engine_equals_duckdb_and_published_answers(data, q, k):
    ok, err, first, e, out = run(data, q, workers=k, batch_rows=4096)
    assert ok, first
    assert err <= execute.FLOAT_RTOL
    # the answer shipped with the extension (tpch_answers(), SF 0.01) too
    assert execute.matches_published(q, execute.to_rows(q, out), data.published_answer(q))
    assert not e.ledger.conservation_problems(require_receipts=True)
    if k == 1:
        assert e.ledger.total_bytes == 0


@pytest.mark.parametrize("allocator", ["fixed-pages", "first-fit"])
@pytest.mark.parametrize("q", [1, 5, 10, 14])
def test_engine_equals_duckdb_when_spilling_to_host_and_disk(data, q, allocator):
    # 2 kB of device memory and a 2 kB host pool: batches go down both tiers and come back
    ok, _, first, e, _ = run(data, q, workers=3, batch_rows=700, hbm_budget=2000, host_pool=2048, page_size=512,
                             allocator=allocator)
    assert ok, first
    s = e.stats
    assert s.to_host > 0 and s.to_host == s.from_host
    assert s.to_disk > 0 and s.to_disk == s.from_disk
    for t in e.tiers:  # everything was brought back and released
        assert t.used == 0 and not t.where and t.pool.held == 0


@settings(max_examples=6, deadline=None)
@given(q=st.sampled_from(tpch.QUERIES), k=st.integers(1, 6), rows=st.integers(64, 20000),
       budget=st.integers(0, 50_000), pool=st.integers(0, 50_000), page=st.integers(8, 4096))
def test_engine_equals_duckdb_for_any_k_batch_and_memory(data, q, k, rows, budget, pool, page):
    ok, _, first, e, _ = run(data, q, workers=k, batch_rows=rows, hbm_budget=budget, host_pool=pool, page_size=page)
    assert ok, first
    assert e.stats.to_host == e.stats.from_host and e.stats.to_disk == e.stats.from_disk


def test_in_memory_runs_out_of_device_memory(data):
    with pytest.raises(engine.OutOfDeviceMemory):
        engine.run_query(data, 5, workers=2, hbm_budget=1000, spill=False)
    r = TECHNIQUE.evaluate(resolve_case(TECHNIQUE, ScenarioSpec(
        variant="in-memory", fidelity="execute", workload="tpch-sf0.01",
        params={"query": 5, "workers": 2, "hbm_budget": 1000})).scenario)
    assert r["feasible"] == 0.0


def test_execute_fidelity_reports_oracle_error_and_ledger(data):
    r = TECHNIQUE.evaluate(resolve_case(TECHNIQUE, ScenarioSpec(
        variant="theseus", fidelity="execute", workload="tpch-sf0.01", params={"query": 14, "workers": 4})).scenario)
    assert r["correct"] == 1.0 and r["max_rel_error"] <= 1e-9 and r["matches_published"] == 1.0
    # every byte the engine routed to another worker is in the ledger (shuffle + broadcast + gather)
    assert r["ledger_bytes"] == r["bytes_shuffled"] + r["bytes_broadcast"] + r["bytes_gathered"]


# ----------------------------------------------------------------------------- memory tiers


def test_first_fit_fragments_where_fixed_pages_do_not():
    # capacity 300 B: three 100 B batches, free the first and the last: 200 B free in two holes of 100 B;
    # a 150 B batch does not fit first fit, but takes 3 of the 4 free 50 B pages of a page pool
    b100, b150 = {"x": np.zeros(100, np.uint8)}, {"x": np.ones(150, np.uint8)}
    ff, pp = engine.FirstFitPool(300), engine.PagePool(50, 6)
    hf = [ff.put(b100) for _ in range(3)]
    hp = [pp.put(b100) for _ in range(3)]
    for pool, hs in ((ff, hf), (pp, hp)):
        pool.free(hs[0])
        pool.free(hs[2])
    assert ff.free_bytes == 200 and ff.largest_hole == 100
    assert ff.put(b150) is None and ff.failures == 1
    h = pp.put(b150)
    assert h is not None and pp.free_pages == 1
    assert np.array_equal(pp.get(h)["x"], b150["x"])


@settings(max_examples=40, deadline=None)
@given(page=st.integers(1, 64), pages=st.integers(0, 40),
       ops=st.lists(st.tuples(st.booleans(), st.integers(0, 300)), max_size=40))
def test_page_pool_invariants(page, pages, ops):
    pool = engine.PagePool(page, pages)
    rng = np.random.default_rng(0)
    held = {}
    for is_put, size in ops:
        if is_put or not held:
            b = {"a": rng.integers(0, 255, size, dtype=np.uint8), "b": rng.random(size % 7)}
            need = pool.pages_for(engine.nbytes(b))
            free_before = pool.free_pages
            h = pool.put(b)
            # never fails while enough pages are free; fails when too few are
            assert (h is None) == (need > free_before)
            if h is not None:
                held[h] = b
        else:
            h = next(iter(held))
            got = pool.get(h)
            for c in got:
                assert np.array_equal(got[c], held[h][c])
            del held[h]
        assert pool.free_pages + pool.used_pages == pool.pages
        assert pool.waste_bytes < page * max(1, pool.held) or pool.held == 0
        assert pool.waste_bytes <= (page - 1) * pool.held


@settings(max_examples=30, deadline=None)
@given(budget=st.integers(0, 2000), sizes=st.lists(st.integers(0, 400), max_size=25), page=st.integers(16, 256),
       pages=st.integers(0, 20))
def test_tiers_never_exceed_capacity_and_return_every_byte(budget, sizes, page, pages, tmp_path_factory):
    stats = engine.Stats()
    t = engine.Tiers(budget, engine.PagePool(page, pages), str(tmp_path_factory.mktemp("spill")), stats)
    handles = []
    for i, s in enumerate(sizes):
        handles.append((t.store({"v": np.full(s, i, np.uint8)}), s, i))
        assert t.used <= t.budget
        assert t.pool.used_pages <= t.pool.pages
    for h, s, i in handles:
        assert np.array_equal(t.take(h)["v"], np.full(s, i, np.uint8))
    assert stats.to_host == stats.from_host and stats.to_disk == stats.from_disk
    assert t.used == 0 and t.pool.used_pages == 0


# ----------------------------------------------------------------------------- model vs specification and ledger


def test_scanned_bytes_per_sf_match_the_specification():
    # TPC-H clause 4.2.5.1: 6,000,000 lineitem rows per SF. Q6 reads l_shipdate (4 B), l_discount,
    # l_quantity, l_extendedprice (8 B each) = 28 B/row -> 168e6 B per SF; Q1 reads those but discount,
    # plus returnflag, linestatus (1 B), tax (8 B): 1+1+8+8+8+8+4 = 38 B/row -> 228e6 B per SF.
    # dbgen's lineitem is 6,001,215 rows at SF 1 (clause 4.2.5.1 gives ~6,000,000): 0.1% slack.
    assert model.query_bytes(6, 1.0)["scanned"] == pytest.approx(168e6, rel=2e-3)
    assert model.query_bytes(1, 1.0)["scanned"] == pytest.approx(228e6, rel=2e-3)
    # Q14 reads the part table whole as a build side: 200,000 rows per SF x (8 + 2) B
    assert model.query_bytes(14, 1.0)["build"] == pytest.approx(2.0e6, rel=1e-6)


def test_spec_derived_bytes_match_the_ledger_coefficients():
    """Bytes per SF derived from the TPC-H specification alone, against the committed coefficients.

    TPC-H 3.0.1 cl. 4.2.3: O_ORDERDATE uniform in [1992-01-01, 1998-12-31 - 151 days] (2,406 days);
    L_SHIPDATE = O_ORDERDATE + [1, 121] days, so a month inside the range holds ~30/2,406 of lineitem;
    C_MKTSEGMENT uniform over 5 segments; 5 of the 25 nations are in ASIA (cl. 4.2.3, nation table).
    """
    days = 2406
    # Q14 routes the September-1995 lineitems to the part owners: (l_partkey, revenue) = 16 B per row
    q14 = 6e6 * 30 / days * 16
    assert model.query_bytes(14, 1.0)["routed"] == pytest.approx(q14, rel=0.05)
    # Q5 routes the 1994 orders (orderkey, custkey: 16 B) to the customer owners, and the fifth of them
    # with an ASIA customer back (orderkey, c_nationkey: 16 B)
    o94 = 1.5e6 * 365 / days
    assert model.query_bytes(5, 1.0)["routed"] == pytest.approx(o94 * 16 + o94 * 0.2 * 16, rel=0.05)
    # Q3 broadcasts the BUILDING customers' keys (8 B): a fifth of 150,000 per SF
    assert model.query_bytes(3, 1.0)["broadcast_table"] == pytest.approx(150_000 / 5 * 8, rel=0.05)
    # Q12 holds orders (orderkey 8 B + priority code 1 B) as its build side: 1.5e6 x 9 B per SF
    assert model.query_bytes(12, 1.0)["build"] == pytest.approx(1.5e6 * 9, rel=1e-6)


def test_ledger_bytes_equal_the_model_at_the_same_sf_and_k(data):
    # shuffle bytes crossing workers: the model's routed x (K-1)/K (uniform hashing) vs the ledger
    for q in (5, 10, 14):
        _, e = engine.run_query(data, q, workers=4, batch_rows=1 << 16)
        m = model.query_bytes(q, 0.01)
        assert e.stats.scanned == pytest.approx(m["scanned"], rel=0.01)
        assert e.ledger.by_tag()["shuffle"][1] == pytest.approx(m["routed"] * 3 / 4, rel=0.05)


def test_bytes_are_linear_in_sf():
    pytest.importorskip("duckdb_extension_tpch", reason="TPC-H needs the [sql] extra")
    # SF 0.03 is not one of the calibration points (0.01, 0.1)
    d = tpch.load(0.03)
    for q in tpch.QUERIES:
        _, e = engine.run_query(d, q, workers=4, batch_rows=1 << 16)
        m = model.query_bytes(q, 0.03)
        assert e.stats.scanned == pytest.approx(m["scanned"], rel=0.01)
        assert e.stats.shuffle_routed == pytest.approx(m["routed"], rel=0.05, abs=2000)
        assert e.stats.build == pytest.approx(m["build"], rel=0.01)


@pytest.mark.slow
def test_bytes_are_linear_up_to_sf_1():
    pytest.importorskip("duckdb_extension_tpch", reason="TPC-H needs the [sql] extra")
    d = tpch.load(1.0)
    for q in tpch.QUERIES:
        _, e = engine.run_query(d, q, workers=4, batch_rows=1 << 18)
        m = model.query_bytes(q, 1.0)
        assert e.stats.scanned == pytest.approx(m["scanned"], rel=0.01)
        assert e.stats.shuffle_routed == pytest.approx(m["routed"], rel=0.05)


def scen(variant="theseus", profile="theseus-dgx-a100-2n", workload="tpch-sf100000", fidelity="model", **params):
    return resolve_case(TECHNIQUE, ScenarioSpec(variant=variant, profile=profile, workload=workload,
                                                fidelity=fidelity, params=params)).scenario


def test_q6_sf100k_storage_term_hand_calculation():
    # 28 B/row x 6e11 lineitem rows = 1.68e13 B read from a 50 GB/s storage network per node (2 nodes):
    # 1.68e13 / 1e11 = 168 s; PCIe 4.0 x16 (16 x 1.969 GB/s = 31.5 GB/s): 1.68e13 / (16 GPUs x 31.5e9) = 33.3 s
    r = TECHNIQUE.evaluate(scen(query=6))
    assert r["t_storage"] == pytest.approx(168.0, rel=2e-3)
    assert r["t_pcie"] == pytest.approx(1.68e13 / (16 * 31.5e9), rel=2e-3)
    # Q6 keeps no build side: nothing spills, and it is storage-bound: theseus ~ the storage term
    assert r["bytes_spilled"] == 0.0
    assert r["query_time"] == pytest.approx(168.0, rel=0.01)


def test_spill_and_in_memory_feasibility_at_sf100k():
    # Q3 holds orders (1.5e5 x 1e5 rows x 24 B = 3.6 TB) + customer keys as build sides: more than
    # 16 x 80 GB = 1.28 TB of HBM, less than HBM + 2 x 2 TB host memory
    r = TECHNIQUE.evaluate(scen(query=3))
    assert r["working_set"] > 16 * 80e9
    assert r["feasible"] == 1.0 and r["bytes_spilled"] == pytest.approx(r["working_set"] - 16 * 80e9, rel=1e-9)
    assert TECHNIQUE.evaluate(scen("in-memory", query=3))["feasible"] == 0.0


def test_serial_is_sum_and_theseus_fill_plus_max_hand_calculation():
    t = {"storage": 4.0, "pcie": 2.0, "compute": 1.0, "network": 3.0, "spill": 0.0, "batches": 10}
    assert model.combine(t, "serial") == 10.0
    assert model.combine(t, "theseus") == pytest.approx(10 / 10 + 4.0 * 9 / 10)  # 4.6 s


def test_halving_infiniband_slows_a_shuffle_query():
    prof = session_context().profile("theseus-dgx-a100-2n")
    slow = prof.with_overrides({"network.1.bandwidth": "100 Gbit/s"})
    kw = {"batch_bytes": float(256 << 20), "page_size": 65536.0}
    a, b = model.terms(5, 1e5, prof, "serial", kw), model.terms(5, 1e5, slow, "serial", kw)
    assert b["network"] > 1.5 * a["network"] > 0  # Q5 shuffles 4.4 MB per SF: the IB share of it doubles
    assert model.combine(b, "serial") > model.combine(a, "serial")


def test_first_fit_host_tier_spills_to_disk_where_pages_do_not():
    # Q3 at SF 100k spills 2.49 TB beyond HBM; with 1.5 TB of host memory per node the page pool
    # holds 3 TB, first fit 2/3 of it (2 TB, Knuth's fifty-percent rule): 0.49 TB more to NVMe
    prof = session_context().profile("theseus-dgx-a100-2n").with_overrides({"node.host_memory": "1.5 TB"})
    kw = {"batch_bytes": float(256 << 20), "page_size": 65536.0}
    th, ff = model.terms(3, 1e5, prof, "theseus", kw), model.terms(3, 1e5, prof, "variable-host-alloc", kw)
    assert th["spill_disk"] == 0.0
    assert ff["spill_disk"] == pytest.approx(th["spill_host"] - 2 * 1.5e12 * 2 / 3, rel=1e-9)
    assert model.combine(ff, "variable-host-alloc") > model.combine(th, "theseus")


def test_tables_on_nvme_take_its_capacity():
    # data_on_nvme: the database (TPC-H clause 4.1.3.1: ~1 GB per SF) lives on the 4 x 8 TB of NVMe
    # of theseus-p4d-4n: SF 30k (30 TB) fits, SF 33k (33 TB) does not; off the NVMe it runs
    prof = session_context().profile("theseus-p4d-4n")
    kw = {"batch_bytes": float(256 << 20), "page_size": 65536.0}
    assert model.terms(6, 30000, prof, "theseus", kw)["feasible"]
    assert not model.terms(6, 33000, prof, "theseus", kw)["feasible"]
    assert model.terms(6, 33000, prof.with_overrides({"ext.theseus.data_on_nvme": False}), "theseus", kw)["feasible"]


def test_cost_parity_node_counts():
    assert model.nodes_for(session_context().profile("theseus-p4d-4n"), 131.08) == 4
    # the claim's budget is read from the GPU cluster's profile: 4 nodes x 32.77 USD/h (the
    # aws-p4d-24xlarge on-demand price) = 131.08 USD/h, which buys all 4 p4d and 26 i3.16xlarge
    from suite_theseus.technique import CLAIMS as _claims

    p4d = session_context().profile("theseus-p4d-4n")
    assert model.budget_usd_per_hour({"parity_with": "theseus-p4d-4n"}, p4d) == pytest.approx(131.08, rel=1e-9)
    with pytest.raises(ParameterError, match="resolved by the runner"):  # never looked up by name
        model.budget_usd_per_hour({"parity_with": "theseus-p4d-4n"})
    specs = next(c for c in _claims if c.id == "cost-parity-4x").specs()
    assert {s.params["parity_with"] for s in specs.values()} == {"theseus-p4d-4n"}
    r = TECHNIQUE.evaluate(scen("cpu-engine", profile="theseus-cpu-i3-64n", workload="tpch-sf1000", query=6,
                                parity_with="theseus-p4d-4n"))
    assert r["nodes"] == 26 and r["usd_per_hour"] == pytest.approx(26 * 4.992, rel=1e-9)
    with pytest.raises(ParameterError, match="parity_with"):
        model.budget_usd_per_hour({"parity_with": "theseus-p4d-4n", "usd_per_hour": 131.08}, p4d)
    assert model.nodes_for(session_context().profile("theseus-cpu-i3-64n"), 131.08) == 26  # floor(131.08 / 4.992)
    with pytest.raises(ParameterError, match="usd_per_hour"):
        model.nodes_for(session_context().profile("theseus-p4d-4n"), 10.0)


# ----------------------------------------------------------------------------- simulate


@pytest.mark.parametrize("variant", ["theseus", "serial"])
def test_simulation_matches_closed_form_on_uniform_batches(variant):
    r = TECHNIQUE.evaluate(scen(variant, fidelity="simulate", query=5, sim_batches=200))
    assert r["query_time"] == pytest.approx(r["closed_form"], rel=0.02)
    assert r["bound_max"] * (1 - 1e-9) <= r["query_time"] <= r["bound_sum"] * (1 + 1e-9)


@settings(max_examples=10, deadline=None)
@given(times=st.lists(st.floats(0.0, 5.0), min_size=5, max_size=5), n=st.integers(1, 40), depth=st.integers(1, 4))
def test_tandem_line_makespan_closed_form(times, n, depth):
    st_ = np.tile(np.array(times), (n, 1))
    ms = simulate.makespan(st_, depth)
    assert ms == pytest.approx(sum(times) + (n - 1) * max(times), rel=1e-9, abs=1e-9)
    assert simulate.makespan(st_, depth, serial=True) == pytest.approx(n * sum(times), rel=1e-9, abs=1e-9)


def _blocking_tandem(st_, b):
    # hand recursion for a tandem line with FIFO queues of b batches and blocking after service:
    # stage j starts batch i when its server is free (D[i-1, j]) and the batch is in its queue
    # (D[i, j-1]); the batch leaves the server when done and, unless j is last, when a slot is free:
    # batch i-b has been taken by stage j+1 (S[i-b, j+1])
    n, k = st_.shape
    S, D = np.zeros((n, k)), np.zeros((n, k))
    for i in range(n):
        for j in range(k):
            S[i, j] = max(D[i - 1, j] if i else 0.0, D[i, j - 1] if j else 0.0)
            c = S[i, j] + st_[i, j]
            D[i, j] = max(c, S[i - b, j + 1]) if (j < k - 1 and i >= b) else c
    return D[-1, -1]


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), depth=st.integers(1, 4), k=st.integers(2, 5))
def test_makespan_equals_blocking_recursion_on_jittered_batches(seed, n, depth, k):
    st_ = np.random.default_rng(seed).uniform(0.0, 2.0, size=(n, k))
    ms = simulate.makespan(st_, depth)
    assert ms == pytest.approx(_blocking_tandem(st_, depth), rel=1e-9, abs=1e-12)
    assert st_.sum(axis=0).max() * (1 - 1e-9) <= ms <= st_.sum() * (1 + 1e-9)


# ----------------------------------------------------------------------------- bad input


def test_unimplemented_query_one_line():
    with pytest.raises(ParameterError) as exc:
        TECHNIQUE.evaluate(scen(query=2))
    assert str(exc.value) == "theseus: query 2 is not implemented; expected one of [1, 3, 5, 6, 10, 12, 14]"


def test_page_size_larger_than_host_memory_one_line():
    with pytest.raises(ParameterError) as exc:
        TECHNIQUE.evaluate(scen(profile="dgx-a100", query=6, page_size="4 TB"))
    assert str(exc.value) == "theseus: parameter 'page_size': expected <= the 2 TB host memory of dgx-a100, got 4 TB"


def test_workloads_registered_with_spec_row_counts():
    ws = {w.name: w for w in tpch.tpch_workloads()}
    w = ws["tpch-sf1000"]
    assert w.n == 6_000_000_000 and tpch.sf_of(w) == 1000.0
    assert ws["tpch-sf0.01"].params == {"sf": 0.01}
    sc = resolve_case(TECHNIQUE, ScenarioSpec(variant="theseus", workload="tpch-sf30000", params={"query": 1})).scenario
    assert model.scale_factor(sc) == 30000.0


# ----------------------------------------------------------------------------- claims and conformance


def _claim(cid):
    return next(c for c in CLAIMS if c.id == cid)


def test_sf100k_claim_and_its_null():
    c = _claim("sf100k-2-dgx")
    res = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for lab, s in c.specs().items()}
    assert c.value(res) is True
    null = c.nulls[0].substitute(c.specs())
    res0 = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for lab, s in null.items()}
    assert c.value(res0) is False  # without a spill tier Q3, Q5, Q10, Q12 do not fit


def test_cost_parity_q6_is_the_nvme_bandwidth_the_budget_buys():
    # Q6 at SF 30k is storage-bound on both sides: 131.08 USD/h buys 4 p4d (4 x 16 GB/s of NVMe)
    # or 26 i3.16xlarge (26 x 16 GB/s), so T(cpu-engine) / T(theseus) = 4 / 26 = 0.1538 (the
    # pipeline fill adds < 0.1% on the GPU side)
    kw = {"query": 6, "usd_per_hour": 131.08}
    gpu = TECHNIQUE.evaluate(scen(profile="theseus-p4d-4n", workload="tpch-sf30000", **kw))
    cpu = TECHNIQUE.evaluate(scen("cpu-engine", profile="theseus-cpu-i3-64n", workload="tpch-sf30000", **kw))
    assert gpu["nodes"] == 4 and cpu["nodes"] == 26
    assert cpu["query_time"] / gpu["query_time"] == pytest.approx(4 / 26, rel=2e-3)


def test_cost_parity_claim_resolves_and_design_gain_is_not_negative():
    c = _claim("cost-parity-4x")
    res = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for lab, s in c.specs().items()}
    ours = c.value(res)
    assert math.isfinite(ours) and ours > 0
    ser = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario)
           for lab, s in c.nulls[1].substitute(c.specs()).items()}
    assert c.value(ser) <= ours * (1 + 1e-12)  # overlapping never loses to serial


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=3)
    assert "properties" in rep.passed
    assert "family:network-sensitivity" in rep.passed


def test_object_store_at_nic_line_rate_gives_the_ratio_of_nic_sums():
    """The cost-parity claim's storage-path assumption (docs/techniques/theseus.md): with the tables
    read from an object store at each instance's NIC line rate, both engines stay storage-bound on
    Q6, so T(cpu) / T(gpu) is the ratio of the NIC sums at cost parity:
    4 p4d x 50 GB/s / (26 i3.16xlarge x 3.125 GB/s) = 200 / 81.25 = 2.4615."""
    from suite_theseus.technique import COST_PARITY_WITH

    t = {}
    for variant, prof, bw in (("theseus", "theseus-p4d-4n", "50 GB/s"), ("cpu-engine", "theseus-cpu-i3-64n",
                                                                           "3.125 GB/s")):
        spec = ScenarioSpec(variant=variant, profile=prof, workload="tpch-sf30000", fidelity="model",
                            params={"query": 6, "parity_with": COST_PARITY_WITH},
                            overrides={"ext.theseus.storage_bandwidth": bw, "ext.theseus.data_on_nvme": False})
        r = TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario)
        t[variant] = r["query_time"]
    assert t["cpu-engine"] / t["theseus"] == pytest.approx(200 / 81.25, rel=2e-3)


def test_workloads_hook_imports_no_numpy_and_keeps_the_hashes():
    """Every command that reads workloads (a cached `suite reproduce` too) calls the hook: it
    imports no numpy (the data is built by TpchData on first use), and the workloads' content
    hashes (inputs of every stored case key) are those of 0.3.0 (2c35d09)."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys; import suite_theseus as p; wl = p.suite_workloads(); "
             "print(json.dumps({'numpy': 'numpy' in sys.modules, 'hashes': {w.name: w.content_hash() for w in wl}}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["numpy"] is False
    assert got["hashes"] == {"tpch-sf0.01": "f83e27966d21359b", "tpch-sf0.1": "a77ae9a4238d28cc",
                             "tpch-sf1": "3cc2080827157c3f", "tpch-sf1000": "439779f4ccad5e2e",
                             "tpch-sf3000": "f243ce789d54be9b", "tpch-sf10000": "7b4166ab0a1ab48a",
                             "tpch-sf30000": "5eedff2ff43a63aa", "tpch-sf100000": "710b16b25e36ef2a"}
