"""Tests of the Computron plugin: OPT parameter counts and the authors' configurations, Gamma
arrivals against an independent loop and scipy's distributions, swap and service times by hand
calculation, the serving engine's scheduler on hand-built traces and under hypothesis, the
shard-parallel copy against its oracle, bad input, claims and the conformance kit."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from suite import ScenarioSpec, Skip
from suite.errors import ParameterError
from suite.hardware import Profile, ProfileLibrary
from suite.testing import resolve_case
from suite_computron import execute, model, simulate
from suite_computron.technique import (BURSTY_SKEWED_CONFIGS, CLAIMS, SEEDS, TECHNIQUE, PcieSwitchExt,
                                       derive_bursty)
from suite_computron.workloads import CONFIGS, OPT_PARAMS, all_workloads, opt_table, serving_workloads
from session_context import session_context

NODE = "perlmutter-gpu-node"
PCIE4 = 31.5e9  # B/s per direction, PCIe 4.0 x16 (the A100 profile's host link)
F = 0.85  # model.LINK_FRACTION, written out: the tests pin the sourced constant


def case(variant="computron", fidelity="model", workload="opt-13b", profile=NODE, seed=0, **params):
    return resolve_case(TECHNIQUE, ScenarioSpec(variant=variant, profile=profile, workload=workload,
                                                params=params, fidelity=fidelity, seed=seed)).scenario


def run(variant="computron", fidelity="model", workload="opt-13b", **params):
    return TECHNIQUE.evaluate(case(variant, fidelity, workload, **params))


# ----------------------------------------------------------------------------- workloads


def test_opt_parameter_counts_match_the_released_checkpoints():
    assert opt_table("opt-1.3b").params == 1_315_758_080
    assert opt_table("opt-13b").params == 12_853_473_280
    assert OPT_PARAMS == {"opt-1.3b": 1_315_758_080, "opt-13b": 12_853_473_280}


def test_opt_prefill_flops_by_hand():
    """Forward FLOPs at s = 8 tokens (matmuls 2 s W, attention core 4 s^2 h, LM head 2 s h V)."""
    s, h, L, V = 8, 2048, 24, 50272
    per_layer = 2 * s * (4 * h * h) + 4 * s * s * h + 2 * s * (8 * h * h)
    assert opt_table("opt-1.3b", seq=s).fwd_flops == L * per_layer + 2 * s * h * V == 20_987_248_640


def test_serving_configs_are_the_authors_list():
    # experiments/sim.py @ 3dce33b, configs[0..17], typed in again here from the file
    expect = []
    for rates, cap in (((1, 1, 1), 2), ((10, 1, 1), 2), ((10, 10, 1), 2), ((1,) * 6, 4),
                       ((10, 10, 1, 1, 1, 1), 4), ((10, 10, 10, 10, 1, 1), 4)):
        expect += [(rates, cv, cap) for cv in (0.25, 1, 4)]
    wls = serving_workloads()
    assert [w.name for w in wls] == [f"computron-c{i:02d}" for i in range(19)]
    for w, (rates, cv, cap) in zip(wls[:18], expect):
        assert (w.rates, w.cv, w.max_loaded) == (tuple(float(r) for r in rates), cv, cap)
        assert (w.model, w.batch, w.duration, w.output_tokens) == ("opt-1.3b", 32, 30.0, 1)
    assert (wls[18].rates, wls[18].max_loaded) == ((1.0, 1.0), 1)
    assert len(CONFIGS) == 19
    # every CV 4 config and every skewed one: 6 CV-4 + 12 skewed - 4 both
    assert BURSTY_SKEWED_CONFIGS == (2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 17)


def test_workloads_hook_registers_them():
    from suite_computron import suite_workloads

    names = [w.name for w in suite_workloads()]
    assert names[:2] == ["opt-1.3b", "opt-13b"] and "computron-c15" in names
    assert {w.name for w in all_workloads()} == set(names)


# ----------------------------------------------------------------------------- arrivals


def alpaserve_loop(rate, cv, duration, seed):
    """AlpaServe's GammaProcess.generate_arrivals as the issue describes it, written as a loop."""
    rs = np.random.RandomState(seed)
    shape, scale = 1 / cv**2, cv**2 / rate
    size = max(int(rate * duration * 1.2), 1)
    iv = rs.gamma(shape, scale, size=size)
    pt, cur, ticks = 0, iv[0], []
    while cur < duration:
        ticks.append(cur)
        pt += 1
        if pt >= size:
            iv = rs.gamma(shape, scale, size=size)
            pt = 0
        cur += iv[pt]
    return np.array(ticks)


@pytest.mark.parametrize("rate,cv,duration,seed", [(10, 0.25, 30, 0), (1, 4, 30, 3), (10, 1, 30, 7), (2, 4, 50, 1)])
def test_gamma_arrivals_equal_the_alpaserve_loop(rate, cv, duration, seed):
    ours = simulate.gamma_arrivals(rate, cv, duration, seed)
    ref = alpaserve_loop(rate, cv, duration, seed)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("rate,cv", [(10.0, 0.25), (5.0, 1.0), (2.0, 4.0)])
def test_gamma_arrivals_match_rate_cv_and_distribution(rate, cv):
    t = simulate.gamma_arrivals(rate, cv, 50_000 / rate, seed=11)
    iv = np.diff(np.concatenate([[0.0], t]))
    n = iv.size
    assert abs(iv.mean() * rate - 1) < 4 * cv / math.sqrt(n)  # 4 standard errors of the mean
    assert abs(iv.std() / iv.mean() - cv) < 0.1 * cv
    # Kolmogorov distance to scipy's Gamma over x >= 1 ns, against the DKW bound at level 0.001
    # (P(D > eps) <= 2 exp(-2 n eps^2)). At CV 4 (shape 1/16) about 16 % of the gaps are below
    # 1e-12 s and vanish in the float sum of the arrival times, as in AlpaServe's loop, so the
    # distance is taken above 1 ns (where the times resolve every gap).
    dist = stats.gamma(a=1 / cv**2, scale=cv**2 / rate)
    x = np.sort(iv)
    pts = np.unique(x[x >= 1e-9])
    d = np.max(np.abs(np.searchsorted(x, pts, side="right") / n - dist.cdf(pts)))
    assert d < math.sqrt(math.log(2 / 0.001) / (2 * n))


def test_gamma_cv1_is_poisson():
    t = simulate.gamma_arrivals(3.0, 1.0, 1000.0, seed=5)
    iv = np.diff(np.concatenate([[0.0], t]))
    assert stats.kstest(iv, stats.expon(scale=1 / 3.0).cdf).pvalue > 0.01


# ----------------------------------------------------------------------------- swap model


def test_opt13b_load_times_by_hand():
    S = 12_853_473_280 * 2
    link = F * PCIE4
    assert run(tp=1)["load_time"] == pytest.approx(S / link, rel=1e-12)  # 0.960 s
    assert run(tp=2)["load_time"] == pytest.approx(S / 2 / link, rel=1e-12)
    assert run(tp=4)["load_time"] == pytest.approx(S / 4 / link, rel=1e-12)  # 0.240 s
    assert run(tp=2, pp=2)["load_time"] == pytest.approx(S / 4 / link, rel=1e-12)
    assert run("mp-serial", tp=4)["load_time"] == pytest.approx(S / link, rel=1e-12)
    assert run("single-device", tp=4)["load_time"] == pytest.approx(S / link, rel=1e-12)
    r = run("resident", tp=4)
    assert r["load_time"] == 0 and r["swap_time"] == 0
    assert run(tp=4)["h2d_rate"] == pytest.approx(4 * link, rel=1e-12)
    # computron overlaps offload and load (separate streams); mp-serial pays both
    assert run(tp=4)["swap_time"] == pytest.approx(S / 4 / link)
    assert run("mp-serial", tp=4)["swap_time"] == pytest.approx(2 * S / link)


def test_host_memory_and_switch_bounds_by_hand():
    S = 25.7e9
    free = model.HostEndpoint(PCIE4, F)
    assert model.swap_time(S, 4, free).time == pytest.approx(S / 4 / (F * PCIE4))
    cpu = model.HostEndpoint(PCIE4, F, host_bandwidth=50e9)
    c = model.swap_time(S, 4, cpu)
    assert c.bound == "host-memory" and c.time == pytest.approx(S / 50e9)
    sw = model.HostEndpoint(PCIE4, F, switch_gpus=2, switch_bandwidth=32e9)
    c = model.swap_time(S, 4, sw)
    assert c.bound == "switch" and c.time == pytest.approx(2 * (S / 4) / 32e9)
    lat = model.HostEndpoint(PCIE4, F, link_latency=10e-6)
    assert model.swap_time(S, 4, lat, parallel=False).time == pytest.approx(4 * (10e-6 + S / 4 / (F * PCIE4)))


def test_perlmutter_cpu_does_not_bind():
    """EPYC 7763: 204.8 GB/s > 4 x 26.8 GB/s, so the links bind at n = 4."""
    ep = model.host_endpoint(session_context().profile(NODE))
    assert ep.host_bandwidth == pytest.approx(204.8e9)
    assert model.swap_time(25.7e9, 4, ep).bound == "link"


def test_pcie_switch_extension_in_a_profile(tmp_path):
    from suite.resources import builtin_dir

    (tmp_path / "sw.toml").write_text("""
[profile]
name = "perlmutter-switched"
kind = "node"
extends = "perlmutter-gpu-node"
[ext.pcie_switch]
gpus_per_switch = 4
uplink_bandwidth = "32 GB/s"
""")
    lib = ProfileLibrary([builtin_dir("hardware_profiles"), tmp_path], extensions={"pcie_switch": PcieSwitchExt})
    prof = lib.get("perlmutter-switched")
    sc = dataclasses.replace(case(tp=4), profile=prof)
    r = TECHNIQUE.evaluate(sc)
    assert r.artifacts["swap"]["bound"] == "switch"
    assert r["load_time"] == pytest.approx(12_853_473_280 * 2 / 32e9, rel=1e-9)


def test_measured_profile_predicts_min_of_threads_and_memory():
    """A CPU-only profile: rate(n) = min(n r1, B / 2), r1 = stream.copy / 2 (STREAM counts 2 x the bytes)."""
    prof = Profile.model_validate({
        "name": "local-test", "kind": "measured",
        "device": {"type": "cpu", "memory": 64e9, "memory_bandwidth": 30e9, "peak_flops": {"fp32": 1e11},
                   "cores": 8},
        "node": {"device": "local-test", "devices_per_node": 1},
        "measured": {"stream.copy": {"value": 20e9}}})
    rates = {}
    for n in (1, 2, 4):
        sc = dataclasses.replace(case(tp=n, workload="opt-1.3b"), profile=prof)
        rates[n] = TECHNIQUE.evaluate(sc)["copy_rate"]
    assert rates[1] == pytest.approx(10e9) and rates[2] == pytest.approx(15e9) and rates[4] == pytest.approx(15e9)


# ----------------------------------------------------------------------------- service model


def test_service_time_by_hand_tp1():
    """OPT-1.3B, 32 prompts of 8 tokens, one A100 40 GB: compute bound at 0.5 x 312 TFLOP/s."""
    r = run(workload="opt-1.3b", tp=1)
    flops = 32 * 20_987_248_640
    assert r["compute_time"] == pytest.approx(flops / (0.5 * 312e12), rel=1e-12)  # 4.3 ms
    assert r["service_time"] == r["compute_time"] and r["tp_comm_time"] == 0 and r["pp_comm_time"] == 0


def test_tensor_parallel_service():
    r1, r4 = run(workload="opt-1.3b", tp=1), run(workload="opt-1.3b", tp=4)
    assert r4["compute_time"] == pytest.approx(r1["compute_time"] / 4, rel=1e-12)
    # two all-reduces of 32 x 8 x 2048 fp16 values per block, 24 blocks: at least the bandwidth
    # lower bound 2 (p-1)/p m / B of each [Patarasuk09] over 300 GB/s NVLink
    m = 32 * 8 * 2048 * 2
    assert r4["tp_comm_time"] >= 48 * 2 * 3 / 4 * m / 300e9
    assert r4["service_time"] == pytest.approx(r4["compute_time"] + r4["tp_comm_time"])


def test_pipeline_service():
    r = run(workload="opt-1.3b", tp=1, pp=4)
    assert r["pp_comm_time"] > 0
    assert r["service_time"] == pytest.approx(4 * r["stage_time"] + r["pp_comm_time"])


# ----------------------------------------------------------------------------- bad input


def test_layout_larger_than_the_node_is_one_line():
    with pytest.raises(ParameterError) as e:
        run(tp=8)
    assert str(e.value) == "computron: tp x pp = 8 exceeds the 4 GPUs of perlmutter-gpu-node"


def test_models_larger_than_the_gpu_is_one_line():
    with pytest.raises(ParameterError) as e:
        run(tp=1, max_loaded=2)
    assert str(e.value) == "computron: max_loaded 2 x 25.7 GB (opt-13b) exceeds the 40 GB of nvidia-a100-sxm4-40gb"
    run(tp=4, max_loaded=2)  # 2 x 6.4 GB per GPU fits


def test_simulate_needs_a_serving_workload():
    with pytest.raises(ParameterError, match="computron-c00 ... computron-c18"):
        run(fidelity="simulate", workload="opt-13b")


# ----------------------------------------------------------------------------- engine by hand


def engine(arrivals, max_loaded=1, stage=0.1, shard=0.5, n=1, parallel=True, pp=1, handoff=0.0, batch=32,
           swaps=True):
    tp = n // pp
    return simulate.Engine([np.array(a, float) for a in arrivals], max_loaded, batch, tp, pp, [0.0] + [stage] * batch,
                           handoff, (shard,) * n, (shard,) * n, parallel, swaps, 1e9).run()


def test_engine_load_then_serve_then_swap():
    e = engine([[1.0], [2.0]], max_loaded=1, stage=0.1, shard=0.5)
    # m0: load 1.0-1.5, batch 1.5-1.6; m1 at 2.0: evict m0 (2.0-2.5) while loading m1 (2.0-2.5), batch 2.5-2.6
    np.testing.assert_allclose(e.done_t, [1.6, 2.6])
    np.testing.assert_allclose(e.start_t, [1.5, 2.5])
    assert (e.loads, e.offloads, e.bytes_loaded, e.bytes_offloaded) == (2, 1, 2e9, 1e9)
    assert [k for _t, k, _m in e.log] == ["load", "loaded", "batch", "evict", "load", "offloaded", "loaded", "batch"]


def test_engine_parallel_vs_serial_shards():
    assert engine([[0.0]], shard=0.25, n=4, parallel=True).done_t[0] == pytest.approx(0.25 + 0.1)
    assert engine([[0.0]], shard=0.25, n=4, parallel=False).done_t[0] == pytest.approx(1.0 + 0.1)


def test_engine_evicts_the_least_recently_used():
    # m0 @1, m1 @2, m0 @3 (hit: m0 becomes MRU), m2 @4 -> evict m1
    e = engine([[1.0, 3.0], [2.0], [4.0]], max_loaded=2, stage=0.01, shard=0.1)
    evicts = [m for _t, k, m in e.log if k == "evict"]
    assert evicts == [1]
    assert e.loads == 3


def test_engine_offload_flushes_in_flight_batches():
    # m0's batch runs 0.5-1.5; m1 arrives at 0.6 and evicts m0: its offload starts at 1.5
    e = engine([[0.0], [0.6]], max_loaded=1, stage=1.0, shard=0.5)
    off = [t for t, k, m in e.log if k == "offloaded" and m == 0]
    assert off == [pytest.approx(2.0)]
    # m1 loads 0.6-1.1 on its own stream, waits for the compute (free at 1.5): 1.5-2.5
    assert e.done_t[1] == pytest.approx(2.5)


def test_engine_pipelines_batches_across_stages():
    # resident model, pp = 2, stage 1.0, hand-off 0.1, batch 1: requests at 0 and 0
    e = engine([[0.0, 0.0]], stage=1.0, n=2, pp=2, handoff=0.1, batch=1, swaps=False)
    # b0: stage0 0-1, hand-off, stage1 1.1-2.1; b1: stage0 1-2, hand-off, stage1 2.1-3.1
    np.testing.assert_allclose(e.done_t, [2.1, 3.1])
    assert e.busy == [2.0, 2.0]


def test_engine_batches_up_to_batch():
    e = engine([[0.0] * 5], stage=0.1, shard=0.0, batch=2, swaps=False)
    np.testing.assert_allclose(e.done_t, [0.1, 0.1, 0.2, 0.2, 0.3])
    assert e.batches == 3


def replay_lru(log, M):
    """An independent LRU bookkeeping over the event log: every evict must pick the loaded model
    (not mid-transfer) with the oldest last use (batch or load decision)."""
    last = {}
    loaded = set()
    for t, kind, m in log:
        if kind in ("batch", "load"):
            last[m] = t
        if kind == "loaded":
            loaded.add(m)
        if kind == "evict":
            assert m in loaded, f"evicted model {m} was not loaded"
            lru = min(loaded, key=lambda v: last[v])
            assert last[m] == last[lru], f"evicted {m} (last use {last[m]}) but {lru} was used at {last[lru]}"
            loaded.discard(m)


# ----------------------------------------------------------------------------- engine under hypothesis


@st.composite
def serving(draw):
    M = draw(st.integers(1, 5))
    rates = [draw(st.sampled_from([0.5, 1.0, 4.0, 10.0])) for _ in range(M)]
    cv = draw(st.sampled_from([0.25, 1.0, 4.0]))
    cap = draw(st.integers(1, M))
    variant = draw(st.sampled_from(["computron", "mp-serial", "single-device", "resident"]))
    tp = draw(st.sampled_from([1, 2, 4]))
    seed = draw(st.integers(0, 1000))
    return M, rates, cv, cap, variant, tp, seed


def _serving_scenario(rates, cv, cap, variant, tp, seed, duration=4.0):
    from suite_computron.workloads import ServingWorkload

    wl = ServingWorkload(name="test-serving", kind="serving", rates=tuple(rates), cv=cv, max_loaded=cap)
    sc = case(variant, "simulate", "computron-c00", seed=seed, tp=tp, duration=duration)
    return dataclasses.replace(sc, workload=wl)


@settings(max_examples=25, deadline=None)
@given(serving())
def test_engine_invariants(params):
    M, rates, cv, cap, variant, tp, seed = params
    eng, stg = simulate.simulate(_serving_scenario(rates, cv, cap, variant, tp, seed))
    assert eng.max_resident <= (cap if eng.swaps else M)
    resident = sum(1 for s in eng.state if s == "loaded")
    if eng.swaps:
        assert eng.bytes_loaded - eng.bytes_offloaded == pytest.approx(resident * eng.S)
        assert eng.loads - eng.offloads == resident
    lat = eng.done_t - np.concatenate(eng.arrivals)
    assert np.all(np.isfinite(lat))
    assert np.all(lat >= eng.service_t - 1e-12)
    for m in range(M):
        a, b = int(eng.offset[m]), int(eng.offset[m + 1])
        assert np.all(np.diff(eng.start_t[a:b]) >= 0) and np.all(np.diff(eng.done_t[a:b]) >= 0)
    replay_lru(eng.log, M)


@settings(max_examples=15, deadline=None)
@given(serving())
def test_few_distinct_models_give_only_compulsory_loads(params):
    M, rates, cv, cap, variant, tp, seed = params
    if variant == "resident":
        variant = "computron"
    eng, _ = simulate.simulate(_serving_scenario(rates, cv, M, variant, tp, seed))
    requested = sum(1 for a in eng.arrivals if len(a))
    assert eng.loads == requested and eng.offloads == 0


# ----------------------------------------------------------------------------- simulate fidelity


def test_simulate_result_and_ordering_of_variants():
    res = {v: run(v, "simulate", "computron-c15", tp=4, duration=10.0) for v in
           ("computron", "mp-serial", "single-device", "resident")}
    assert res["resident"]["loads"] == 0 and res["resident"]["bytes_moved"] == 0
    assert res["computron"]["bytes_moved"] == (res["computron"]["loads"] + res["computron"]["offloads"]) * 2_631_516_160
    for v, r in res.items():
        assert r["requests"] == res["computron"]["requests"]  # same seed, same arrivals
        assert 0 <= r["slo_attainment"] <= 1
        assert r["latency_p99"] >= r["latency_p90"] >= r["latency_p50"]
        assert len(r.metrics["latency_mean"].samples) == r["requests"]
    p90 = {v: r["latency_p90"] for v, r in res.items()}
    assert p90["resident"] < p90["computron"] < p90["mp-serial"] <= p90["single-device"] * 1.05


def test_simulate_is_deterministic_for_a_seed():
    a = run("computron", "simulate", "computron-c05", tp=2, duration=5.0)
    b = run("computron", "simulate", "computron-c05", tp=2, duration=5.0)
    assert {k: m.value for k, m in a.metrics.items()} == {k: m.value for k, m in b.metrics.items()}


# ----------------------------------------------------------------------------- execute


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 300_000), st.integers(1, 6))
def test_shard_bounds_cover_the_bytes(nbytes, n):
    b = execute.shard_bounds(nbytes, n)
    assert len(b) == n and b[0][0] == 0 and b[-1][1] == nbytes
    assert all(x[1] == y[0] and x[0] <= x[1] for x, y in zip(b, b[1:]))


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_shard_copier_copies_every_byte(n):
    rng = np.random.default_rng(n)
    src = rng.integers(0, 256, 1_000_003, dtype=np.uint8)
    dst = np.zeros_like(src)
    with execute.ShardCopier(src, dst, n) as cp:
        assert cp.run() > 0
    assert np.array_equal(dst, src)
    dst[:] = 0
    execute.sequential_shards(src, dst, n)
    assert np.array_equal(dst, src)


def test_execute_reports_the_oracle_and_both_rates():
    r = run("computron", "execute", "opt-1.3b", tp=2, copy_bytes=2 * 2**20)
    assert r["oracle_error"] == 0.0 and r["bytes_copied"] == 2 * 2**20 and r["shards"] == 2
    assert len(r.metrics["copy_rate"].samples) == 5 and len(r.metrics["serial_rate"].samples) == 5
    assert r["copy_rate"] > 0 and r["serial_rate"] > 0
    r = run("mp-serial", "execute", "opt-1.3b", tp=2, copy_bytes=2 * 2**20)
    assert r["oracle_error"] == 0.0


def test_execute_skips():
    with pytest.raises(Skip, match="resident"):
        run("resident", "execute", "opt-1.3b")
    try:
        import torch  # noqa: F401

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if not has_cuda:
        with pytest.raises(Skip, match="gpu"):
            run("computron", "execute", "opt-1.3b", target="gpu", copy_bytes=2**20)


# ----------------------------------------------------------------------------- claims


def _results(**metrics):
    from suite import Result

    r = Result()
    for k, v in metrics.items():
        if isinstance(v, tuple):
            r.add(k, float(np.median(v)), "B/s", samples=v)
        else:
            r.add(k, v, "s")
    return r


def test_derive_bursty_picks_the_closest_configuration():
    res = {}
    for i in BURSTY_SKEWED_CONFIGS:
        for s in SEEDS:
            res[f"computron:c{i:02d}:s{s}"] = _results(latency_p90=0.03 if i != 13 else 0.09)
            res[f"mp-serial:c{i:02d}:s{s}"] = _results(latency_p90=0.1)
    assert derive_bursty(res) == {"computron": pytest.approx(0.09), "mp-serial": pytest.approx(0.1)}
    claim = next(c for c in CLAIMS if c.id == "bursty-skewed")
    assert claim.expect.check(derive_bursty(res))  # 0.09 x 1.02 < 0.1
    res["computron:c13:s0"] = _results(latency_p90=0.1)
    res.update({f"computron:c13:s{s}": _results(latency_p90=0.1) for s in SEEDS})
    assert not claim.expect.check(derive_bursty(res))  # a tie fails


def _claim_value(claim, variants=None):
    results = {}
    for label, spec in claim.specs().items():
        if variants and spec.variant in variants:
            spec = dataclasses.replace(spec, variant=variants[spec.variant])
        results[label] = TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario)
    return claim.value(results)


@pytest.mark.parametrize("cid", ["parallel-swap", "aggregate-bandwidth"])
def test_formula_claims_pass_by_construction_and_are_declared_defects(cid):
    """Issue 42: both follow from the swap-time formula (bytes over n links at once), so they are
    declared claim defects; the model still gives the abstract's ordering and the nulls fail it."""
    claim = next(c for c in CLAIMS if c.id == cid)
    assert claim.verified and claim.nulls and "own swap-time formula" in claim.defect
    assert claim.expect.check(_claim_value(claim))
    for null in claim.nulls:
        assert not claim.expect.check(_claim_value(claim, dict(null.variants)))


def test_bursty_skewed_on_two_configurations():
    """The claim's comparison on c05 (CV 4) and c13 (skewed, CV 1), seed 0 (the whole claim:
    suite reproduce computron)."""
    for cfg in ("computron-c05", "computron-c13"):
        c = run("computron", "simulate", cfg, tp=4)["latency_p90"]
        s = run("mp-serial", "simulate", cfg, tp=4)["latency_p90"]
        assert c * 1.02 < s


def test_bursty_skewed_is_a_declared_formula_defect():
    """audit11 A2: its pass follows from the swap-time formula: computron and mp-serial are the same
    variant but for the parallel-copy flag (model.VARIANTS: layout, parallel, swaps), so the
    claim is a claim defect naming that, not 'reproduced'."""
    claim = next(c for c in CLAIMS if c.id == "bursty-skewed")
    assert "parallel flag" in claim.defect and "could not fail" in claim.defect
    assert model.VARIANTS["computron"] == (True, True, True) and model.VARIANTS["mp-serial"] == (True, False, True)


def test_every_claim_declares_nulls():
    """(Every claim's cases resolve: the conformance kit's claims-resolve check, below.)"""
    for c in CLAIMS:
        assert c.nulls and c.verified and c.source == "abstract", c.id
    assert [c.id for c in CLAIMS if c.measured] == []  # copy-local dropped (issue 42: its null was noise)
    assert len(next(c for c in CLAIMS if c.id == "bursty-skewed").specs()) == 14 * 5 * 2


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=3)
    for check in ("metadata", "parameters", "runs-and-metrics", "determinism", "claims-resolve", "properties"):
        assert rep.outcomes[check] == "passed", check


@settings(max_examples=40, deadline=None)
@given(st.floats(1e8, 1e11), st.floats(4e9, 64e9), st.floats(0.5, 1.0), st.none() | st.floats(10e9, 400e9),
       st.none() | st.integers(1, 8), st.floats(8e9, 64e9), st.floats(0, 1e-5))
def test_swap_time_monotone(S, link, frac, host, gpus, uplink, lat):
    """Non-increasing in n (parallel), non-decreasing in n (serial, latency per shard), and a slower
    link, host memory or switch uplink never lowers it (raises it where that bound binds)."""
    ep = model.HostEndpoint(link, frac, lat, host, gpus, uplink if gpus else None)
    par = [model.swap_time(S, n, ep).time for n in (1, 2, 3, 4, 8)]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(par, par[1:]))
    ser = [model.swap_time(S, n, ep, parallel=False).time for n in (1, 2, 4)]
    assert all(b >= a * (1 - 1e-12) for a, b in zip(ser, ser[1:]))
    for n in (1, 4):
        base = model.swap_time(S, n, ep)
        slower = {"link": dataclasses.replace(ep, link_bandwidth=link / 2),
                  "host-memory": dataclasses.replace(ep, host_bandwidth=host / 2 if host else None),
                  "switch": dataclasses.replace(ep, switch_bandwidth=uplink / 2 if gpus else None)}
        for what, e2 in slower.items():
            t2 = model.swap_time(S, n, e2).time
            assert t2 >= base.time * (1 - 1e-12)
            if base.bound == what:
                assert t2 > base.time
