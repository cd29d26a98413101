"""Tests of the COMET plugin: the megatron-1t table against its published count, the execute step
against a dense oracle (itself checked by finite differences) and the ledger against the traffic
formulas, hand calculations of memory and compute, the anchor's calibration, the vectorised model
against the scalar one, the properties (hypothesis), bad input, claims and the conformance kit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite import ScenarioSpec
from suite.collectives import Ledger
from suite.errors import ParameterError
from suite.perf.network import Group, collective_time
from suite.testing import resolve_case
from suite_comet import execute, model
from suite_comet.technique import ANCHOR, CLAIMS, TECHNIQUE
from suite_comet.workloads import megatron_1t
from session_context import session_context

W1T = model.consts_of(megatron_1t())
SELENE = session_context().profile("selene-dgx-a100")


def run(variant="comet", profile="selene-dgx-a100", workload="megatron-1t", fidelity="model", overrides=None, **params):
    spec = ScenarioSpec(variant=variant, profile=profile, workload=workload, params=params, fidelity=fidelity,
                        overrides=overrides or {})
    return TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario)


@pytest.fixture(scope="module")
def grid():
    return model.grid_clusters(SELENE, profiles={n.partition(":")[2]: session_context().profile(n.partition(":")[2])
                                                 for n in model.grid_inputs()})


# ----------------------------------------------------------------------------- workload


def test_megatron_1t_parameter_count_by_hand():
    # per block 12 h^2 + 13 h (QKV+proj 4h^2 + 4h biases + 2h norm; MLP 8h^2 + 5h biases + 2h norm),
    # embeddings (V + S) h, final norm 2h: 1,008,038,758,400 ~ Table 1's 1008 billion
    h, V, S, L = 25600, 51200, 2048, 128
    assert megatron_1t().params == L * (12 * h * h + 13 * h) + (V + S) * h + 2 * h == 1_008_038_758_400
    assert abs(megatron_1t().params / 1.008e12 - 1) < 0.005
    assert (W1T.blocks, W1T.hidden, W1T.heads, W1T.seq, W1T.vocab) == (128, 25600, 160, 2048, 51200)


def test_workload_is_registered():
    from suite_comet import suite_workloads

    assert [w.name for w in suite_workloads()] == ["megatron-1t"]
    # and it resolves through the runner's context like any zoo name
    assert resolve_case(TECHNIQUE, ScenarioSpec(variant="comet")).scenario.workload.params == 1_008_038_758_400


# ----------------------------------------------------------------------------- execute


def test_dense_oracle_matches_finite_differences():
    """The dense oracle's gradients equal central differences of the loss sum(out * g)."""
    rng = np.random.default_rng(3)
    W = execute.init_weights(2, 8, 16, seed=3)
    x, g = rng.normal(size=(2, 4, 8)), rng.normal(size=(2, 4, 8))
    _, grads = execute.dense_forward_backward(W, x, g, 2)
    eps = 1e-6
    for blk, name, idx in ((0, "wq", (1, 2)), (0, "wv", (3, 0)), (1, "wo", (2, 5)), (1, "w1", (0, 7)),
                           (0, "w2", (9, 1)), (1, "wk", (4, 4))):
        def loss(delta):
            Wd = [{k: v.copy() for k, v in w.items()} for w in W]
            Wd[blk][name][idx] += delta
            out, _ = execute.dense_forward_backward(Wd, x, g, 2)
            return float(np.sum(out * g))
        fd = (loss(eps) - loss(-eps)) / (2 * eps)
        assert grads[blk][name][idx] == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("tp,pp,dp", [(1, 1, 1), (2, 2, 2), (4, 1, 1), (1, 4, 3), (2, 3, 2), (4, 4, 1)])
def test_parallel_step_equals_dense(tp, pp, dp):
    sh = execute.EXEC_SHAPE
    rng = np.random.default_rng(tp * 100 + pp * 10 + dp)
    W = execute.init_weights(sh["blocks"], sh["hidden"], sh["ffn"], seed=1)
    B = dp * sh["microbatches"] * sh["mbs"]
    x, g = rng.normal(size=(B, sh["seq"], sh["hidden"])), rng.normal(size=(B, sh["seq"], sh["hidden"]))
    led = Ledger()
    out, grads = execute.parallel_forward_backward(W, x, g, sh["heads"], tp, pp, dp, sh["mbs"], led)
    ref, rgrads = execute.dense_forward_backward(W, x, g, sh["heads"])
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    for i in range(len(W)):
        for k in W[i]:
            np.testing.assert_allclose(grads[i][k], rgrads[i][k], rtol=1e-11, atol=1e-12)
    assert led.conservation_problems(require_receipts=True) == []


def test_execute_ledger_bytes_by_hand():
    # tp = pp = dp = 2, 4 blocks, h 16, s 6, mbs 2, m 2, float64: one all-reduced activation is
    # 2*6*16*8 = 1536 B; a ring over 2 ranks sends 2 (2-1) x 1536 B in all; 4 per block and micro-batch:
    # 4 blocks x 2 mb x 2 replicas x 4 x 3072 = 196,608 B. PP: 1 boundary x 2 directions x 4 x 1536 = 12,288 B.
    # DP: every one of the 6 x 4 x 16 x 16 ... parameters all-reduced over 2 replicas: 2 (2-1) P 8 B.
    r = run(fidelity="execute", tp_exec=2, pp_exec=2, dp_exec=2)
    P = 4 * (4 * 16 * 16 + 2 * 16 * 32)
    assert r["bytes_tp"] == 196_608
    assert r["bytes_pp"] == 12_288
    assert r["bytes_pp_gather"] == 12_288  # ring all-gather of 2 slices: (2-1) x 1536 per hand-off
    assert r["bytes_dp"] == 2 * 1 * P * 8 == 131_072
    assert r["traffic_mismatch"] == 0.0 and r["max_rel_error"] < 1e-12


def test_execute_bad_input():
    with pytest.raises(ParameterError, match="tp=3 must divide the 4 heads"):
        run(fidelity="execute", tp_exec=3)


# ----------------------------------------------------------------------------- model by hand


def test_memory_per_gpu_by_hand_megatron_point():
    # tp 8 (sequence parallel), pp 64, full recomputation, mbs 1 on 3,072 GPUs (suite.perf.training):
    # layer params 12 h^2 + 13 h = 7,864,652,800; first stage 2 layers + the (51,200 + 2,048) x h
    # embedding = 17,092,454,400 / tp 8 = 2,136,556,800 params x 16 B = 34,184,908,800 B.
    # Activations (Korthikanti et al. 2022): 2 layers x 2 s h / t = 13,107,200 B x 64 micro-batches in
    # flight = 1,677,721,600; one layer's working set s h (34 / t + 5 a s / (h t)) = 642,252,800 less
    # its stored 13,107,200; the embedding dropout mask s h / t x 64 = 419,430,400.
    r = run(variant="hbm-only", nodes=384, tp=8, pp=64, microbatch=1, recompute="full")
    states = 16 * 2_136_556_800
    acts = 1_677_721_600 + 642_252_800 - 13_107_200 + 419_430_400
    assert r["memory_per_gpu"] == pytest.approx(states + acts, rel=1e-12)
    assert r["memory_per_gpu"] == pytest.approx(36_911_206_400, rel=1e-12)
    assert (r["tp"], r["pp"], r["dp"], r["microbatches"]) == (8, 64, 6, 512)


def test_compute_time_by_hand_single_stage():
    """gpt3-1.3b on one DGX A100 (8 GPUs), tp 1, pp 1, dp 8, mbs 1, no recomputation, batch 64, one flat
    GEMM efficiency 0.657: the pipeline compute is m x (L (t_f + t_b) + t_head), m = 8, with the per-layer
    forward GEMM FLOPs 24 s h^2 + 4 s^2 h at 0.657 x 312 TFLOP/s (backward 2 x), the element-wise
    kernels' forward bytes 38 s h (two layer norms 2 x 4 s h, two bias-dropout-adds 2 x 7 s h, bias-GeLU
    16 s h) and 9 a s^2 (softmax 4, dropout 5 bytes per score) at 2,039 GB/s (backward 2 x); the head
    2 s h V FLOPs forward (x 3 in all) and its fp32 cross-entropy 4 s V bytes x (3 + 2)."""
    r = run(variant="hbm-only", profile="dgx-a100", workload="gpt3-1.3b", global_batch=64, tp=1, pp=1,
            microbatch=1, recompute="none", efficiency=0.657)
    s, h, L, V, a = 2048, 2048, 24, 50257, 24
    rate, bw = 0.657 * 312e12, 2039e9
    layer = 3 * (24 * s * h * h + 4 * s * s * h) / rate + 3 * (38 * s * h + 9 * a * s * s) / bw
    head = 3 * 2 * s * h * V / rate + 5 * 4 * s * V / bw
    assert r["compute_time"] == pytest.approx(8 * (L * layer + head), rel=1e-9)
    assert r["tp_exposed_time"] == 0 and r["pp_exposed_time"] == 0 and r["bubble_time"] == 0


def test_tp_time_uses_shared_collective_model():
    # pp = 1, tp = 8 with sequence parallelism on one DGX A100 node: exposed TP = m x L x (2 all-gathers +
    # 2 reduce-scatters) forward and the same backward, each of 2 s h mbs bytes over Group(8, 1)
    r = run(variant="hbm-only", profile="dgx-a100", workload="gpt3-1.3b", global_batch=64, tp=8, pp=1,
            microbatch=1, recompute="none")
    prof = session_context().profile("dgx-a100")
    ag = collective_time("allgather", 2 * 2048 * 2048, Group(8, 1), prof).time
    rs = collective_time("reduce-scatter", 2 * 2048 * 2048, Group(8, 1), prof).time
    assert r["tp_exposed_time"] == pytest.approx(64 * 24 * 2 * 2 * (ag + rs), rel=1e-9)


def test_anchor_prediction_near_the_calibration_row():
    """The 1T row of Megatron-LM SC'21 Table 1 (163 TFLOP/s per GPU) is a calibration row of the A100's
    gemm_bf16 curve (validation/training), priced there at Table 1's own plan (no sequence parallelism,
    no overlapped DP reduction). COMET prices it with its own choices (sequence parallelism, overlapped
    reduction): within 5%; a lower efficiency moves it (the curve is not ignored)."""
    r = TECHNIQUE.evaluate(resolve_case(TECHNIQUE, ANCHOR["spec"]).scenario)
    assert r["model_flops_per_gpu"] == pytest.approx(ANCHOR["paper_flops_per_gpu"], rel=0.05)
    lower = run(variant="hbm-only", nodes=384, tp=8, pp=64, microbatch=1, recompute="full", efficiency=0.5)
    assert lower["model_flops_per_gpu"] < 0.85 * r["model_flops_per_gpu"]


def test_model_flops_follow_the_recompute_strategy():
    """model_flops_per_gpu counts what the strategy executes: eq. (3) with full recomputation, one
    attention core more than none with selective (4 B s^2 h l), none re-run without."""
    from suite.perf.training import iteration_flops

    fixed = dict(variant="hbm-only", profile="dgx-a100", workload="gpt3-1.3b", global_batch=64, tp=1, pp=1,
                 microbatch=1)
    s, h, L, V = 2048, 2048, 24, 50257
    full = 96 * 64 * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))
    none = 72 * 64 * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))
    sel = none + 4 * 64 * s * s * h * L
    for rc, want in (("full", full), ("none", none), ("selective", sel)):
        r = run(recompute=rc, **fixed)
        assert r["model_flops_per_gpu"] * r["iteration_time"] * 8 == pytest.approx(want, rel=1e-9)


def test_compute_only_null_from_profiles():
    h100 = session_context().profile("nvidia-h100-sxm5-80gb").device.peak_flops["bf16"]
    a100 = session_context().profile("nvidia-a100-sxm4-40gb").device.peak_flops["bf16"]
    assert model.COMPUTE_ONLY_SPREAD == pytest.approx(h100 / a100, rel=1e-12)
    lo, hi = CLAIMS[0].expect.band()
    assert not lo <= model.COMPUTE_ONLY_SPREAD <= hi


def test_megatron_rule_picks_smallest_fitting_pp():
    r = run(variant="megatron-rule", nodes=384)
    assert (r["tp"], r["recompute_code"], r["mbs"]) == (8, 2, 1)
    # every smaller pp of tp 8, full recomputation, micro-batch 1 on the 3,072 GPUs does not fit 80 GB
    c = model.cluster_of(SELENE, nodes=384)
    s = model.enumerate_strategies(W1T, c, 3072, tp=8, mbs=1, recompute="full")
    res = model.evaluate_points(W1T, c, s, 3072, expansion=False)
    smaller = s.pp < r["pp"]
    assert smaller.any() and not res["feasible"][smaller].any()
    assert res["feasible"][s.pp == r["pp"]].all()


def test_search_is_no_worse_than_rule_and_expansion_no_worse_than_hbm(grid):
    cache = model.CollectiveCache()
    for c in grid[::5]:
        times = {}
        for v in ("megatron-rule", "hbm-only", "comet"):
            s, r, i = model.search(W1T, c, 3072, v, cache)
            times[v] = r["time"][i] if i is not None else math.inf
        assert times["hbm-only"] <= times["megatron-rule"] and times["comet"] <= times["hbm-only"]


def test_grid_search_pair_is_two_searches(grid):
    """grid_summary prices each cluster once for the variant and hbm-only: every array and index
    equals what two separate searches give (the unshared path is the oracle)."""
    for c in grid[::7]:
        for v in ("megatron-rule", "hbm-only", "comet"):
            s, (r, i), (r0, i0) = model._search_pair(W1T, c, 3072, v, model.CollectiveCache(), None)
            for got, (sv, rv, iv) in (((r, i), model.search(W1T, c, 3072, v, model.CollectiveCache())),
                                      ((r0, i0), model.search(W1T, c, 3072, "hbm-only", model.CollectiveCache()))):
                assert got[1] == iv and np.array_equal(s.tp, sv.tp) and set(got[0]) == set(rv)
                for k in rv:
                    assert np.array_equal(got[0][k], rv[k]), (c.name, v, k)
        assert model.search(W1T, c, 3072, "comet")[2] is not None  # the grid's clusters have a choice


def test_halving_a_crossed_level_raises_its_exposed_time_only():
    """Megatron's 1T strategy on 384 Selene nodes: TP crosses only NVLink, PP and DP the fabric."""
    fixed = dict(variant="hbm-only", nodes=384, tp=8, pp=64, microbatch=1, recompute="full")
    base = run(**fixed)
    nic = run(overrides={"network.-1.bandwidth": "100 Gbit/s"}, **fixed)
    nvl = run(overrides={"network.0.bandwidth": "150 GB/s"}, **fixed)
    assert nic["pp_exposed_time"] > base["pp_exposed_time"] and nic["dp_allreduce_time"] > base["dp_allreduce_time"]
    # "changes nothing" up to the rounding of T_pipe(with) - T_pipe(without) on ~100 s totals
    assert nic["tp_exposed_time"] == pytest.approx(base["tp_exposed_time"], rel=1e-9, abs=1e-9)
    assert nvl["tp_exposed_time"] > base["tp_exposed_time"]
    assert nvl["pp_exposed_time"] == pytest.approx(base["pp_exposed_time"], rel=1e-9, abs=1e-9)
    assert nvl["dp_allreduce_time"] == base["dp_allreduce_time"]


def test_done_when_network_sweep_changes_dp_and_pp():
    slow = run(overrides={"network.-1.bandwidth": "100 Gbit/s"})
    fast = run(overrides={"network.-1.bandwidth": "400 Gbit/s"})
    assert slow["dp_exposed_time"] > fast["dp_exposed_time"] and slow["pp_exposed_time"] > fast["pp_exposed_time"]


def test_tokens_per_usd_when_cost_is_set():
    assert "tokens_per_usd" not in run(profile="dgx-a100", workload="gpt3-1.3b", global_batch=64)
    r = run(profile="aws-p4d-24xlarge", workload="gpt3-1.3b", global_batch=64)
    assert r["tokens_per_usd"] == pytest.approx(r["tokens_per_s"] * 3600 / 32.77, rel=1e-12)


def test_ext_comet_table_is_read():
    from suite_comet.extension import CometExt

    ext = CometExt(capacity="1 TB", bandwidth="63 GB/s", latency="1 us")
    assert (ext.capacity, ext.bandwidth, ext.latency) == (1e12, 63e9, 1e-6)
    # the shipped what-if profile carries [ext.comet] 1 TB at 63 GB/s per node
    case = resolve_case(TECHNIQUE, ScenarioSpec(variant="comet", profile="comet-h100-ndr-cxl-1tb",
                                                workload="gpt3-175b", params={"global_batch": 1536}))
    c = model.cluster_of(case.scenario.profile)
    assert (c.exp_capacity, c.exp_bandwidth, c.exp_latency) == (1e12, 63e9, 0.0)
    comet = TECHNIQUE.evaluate(case.scenario)
    hbm = run(variant="hbm-only", profile="comet-h100-ndr-cxl-1tb", workload="gpt3-175b", global_batch=1536)
    assert comet["feasible_strategies"] > hbm["feasible_strategies"]
    assert comet["iteration_time"] <= hbm["iteration_time"]
    # no table: no expansion, the PCIe 5.0 x16 default bandwidth
    c0 = model.cluster_of(SELENE, nodes=16)
    assert c0.exp_capacity == 0.0 and c0.exp_bandwidth == model.DEFAULT_EXPANSION_BANDWIDTH == 63e9


# ----------------------------------------------------------------------------- vectorised vs scalar, properties


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 35), st.integers(0, 10_000), st.booleans())
def test_vectorised_equals_scalar(grid, k, j, exp):
    c = grid[k]
    s = model.enumerate_strategies(W1T, c, 3072)
    j = j % len(s)
    r = model.evaluate_points(W1T, c, s, 3072, expansion=exp)
    one = model.evaluate_point(W1T, c, *(int(a[j]) for a in (s.tp, s.pp, s.dp, s.mbs, s.rc)), 3072, expansion=exp)
    assert one["raw_time"] == pytest.approx(r["raw_time"][j], rel=1e-10)
    assert one["memory"] == pytest.approx(r["memory"][j], rel=1e-12)
    assert bool(one["feasible"]) == bool(r["feasible"][j])


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 35))
def test_expansion_never_shrinks_feasible_set(grid, k):
    c = grid[k]
    s = model.enumerate_strategies(W1T, c, 3072)
    hbm = model.evaluate_points(W1T, c, s, 3072, expansion=False)
    exp = model.evaluate_points(W1T, c, s, 3072, expansion=True)
    assert np.all(exp["feasible"] >= hbm["feasible"])
    assert np.all(exp["time"] <= hbm["time"])
    # every feasible point keeps its HBM share within capacity and spills only optimizer states
    f = exp["feasible"]
    assert np.all(exp["memory"][f] - exp["overflow"][f] <= c.hbm * (1 + 1e-12))


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["device.peak_flops.bf16", "device.memory_bandwidth", "network.0.bandwidth",
                        "network.1.bandwidth"]), st.floats(1.1, 4.0))
def test_more_of_anything_never_slows_the_optimum(field, factor):
    base = SELENE.with_overrides({"nodes": 64, "network.-1.size": 64})
    cur = {"device.peak_flops.bf16": base.device.peak_flops["bf16"], "device.memory_bandwidth": base.device.memory_bandwidth,
           "network.0.bandwidth": base.network[0].bandwidth, "network.1.bandwidth": base.network[1].bandwidth}[field]
    unit = "FLOP/s" if "flops" in field else "B/s"
    faster = base.with_overrides({field: f"{cur * factor} {unit}"})
    w = model.consts_of(session_context().workload("gpt3-175b"))
    t = []
    for prof in (base, faster):
        c = model.cluster_of(prof)
        s, r, i = model.search(w, c, 1536, "comet")
        t.append(r["time"][i])
    assert t[1] <= t[0] * (1 + 1e-12)


# ----------------------------------------------------------------------------- bad input


def test_bad_input_lines():
    with pytest.raises(ParameterError, match=r"^comet: tp=3 must divide the 160 heads of megatron-1t$"):
        run(tp=3)
    with pytest.raises(ParameterError, match=r"^comet: tp x pp = 96 exceeds the 64 GPUs of a800-64$"):
        run(profile="a800-64", tp=8, pp=12)
    with pytest.raises(ParameterError, match=r"comet-v2"):
        model.grid_clusters(SELENE, "comet-v9")
    with pytest.raises(ParameterError, match=r"'comet-v2'"):
        TECHNIQUE.validate_params({"grid": "comet-v9"})
    with pytest.raises(ParameterError, match="expected a transformer layer table"):
        run(workload="resnet-50")


# ----------------------------------------------------------------------------- claims and the kit


@pytest.fixture(scope="module")
def comet_v2():
    """The comet-v2 grid at the defaults, variant -> result, for the two tests below, which only read
    them (each grid is ~0.1 s CPU; the flip test patches the grid and evaluates its own)."""
    return {v: run(variant=v, grid="comet-v2") for v in ("comet", "hbm-only")}


def test_claims_resolve_and_nulls_fall_outside(comet_v2):
    """Both claims evaluate on the grid; every null lies outside its band (so a verdict can only be
    'reproduced' or 'not reproduced', never 'not discriminating'). Our values are whatever the fixed
    grid gives (reported in docs/techniques/comet.md), finite and > 1."""
    res = comet_v2["comet"]
    assert res["clusters"] == 36 and res["infeasible_clusters"] == 0
    hbm = comet_v2["hbm-only"]
    assert hbm["expansion_gain"] == 1.0
    for c in CLAIMS:
        ours = float(c.value({"main": res}))
        assert math.isfinite(ours) and ours > 1.0
        lo, hi = c.expect.band()
        for n in c.nulls:
            if n.value is not None:
                assert not lo <= n.value <= hi
    rule = run(variant="megatron-rule", grid="comet-v2")
    lo, hi = CLAIMS[0].expect.band()
    assert not lo <= rule["spread"] <= hi


def test_the_expansion_claims_note_states_what_the_grid_gives(comet_v2):
    """The note of the expansion claim (printed by `suite reproduce comet --format json`) states the
    grid's best gain; it went stale once (it said "at most 1.08x" after issue 41 made it 1.28x), so
    the figure it prints is checked against the grid here."""
    import re

    res = comet_v2["comet"]
    claim = next(c for c in CLAIMS if c.metric == "expansion_gain")
    stated = float(re.search(r"the grid's largest gain, ([0-9.]+)x", claim.note).group(1))
    assert round(res["expansion_gain"], 2) == stated
    # "on the 80 GB parts fewer pipeline stages (pp 64 -> 32, 1.01-1.03x), on the H200 nothing"
    pp_from, pp_to, lo, hi = re.search(r"80 GB parts fewer pipeline stages \(pp (\d+) -> (\d+), ([0-9.]+)-([0-9.]+)x\)",
                                       claim.note).groups()
    hbm = {r["cluster"]: r for r in comet_v2["hbm-only"].artifacts["clusters"]}
    seen = {"80gb": 0, "h200": 0}
    for r in res.artifacts["clusters"]:
        if r["cluster"].endswith("/none"):
            continue
        gain = r["time_hbm_only"] / r["time"]
        if "-80gb/" in r["cluster"]:
            seen["80gb"] += 1
            assert float(lo) <= round(gain, 2) <= float(hi), r["cluster"]
            assert r["strategy"]["pp"] == int(pp_to), r["cluster"]
            assert hbm[r["cluster"]]["strategy"]["pp"] == int(pp_from), r["cluster"]
        elif "h200" in r["cluster"]:
            seen["h200"] += 1
            assert gain == pytest.approx(1.0, abs=1e-12), r["cluster"]
    # 2 devices x 3 NICs x 2 expansions of 80 GB parts, 3 x 2 of the H200: the note's every figure was checked
    assert seen == {"80gb": 12, "h200": 6}


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=3)
    for k in ("properties", "claims-resolve", "claims-nulls", "family:oracle-exact", "family:network-sensitivity",
              "family:memory-capacity"):
        assert k in rep.passed, rep.outcomes


def test_ignore_memory_prices_a_plan_that_does_not_fit():
    """megatron-1t on one DGX A100 fits nowhere; with ignore_memory it is priced and marked fits = 0."""
    from suite import Skip

    with pytest.raises(Skip, match="ignore_memory=true"):
        run(variant="hbm-only", profile="dgx-a100", global_batch=8)
    r = run(variant="hbm-only", profile="dgx-a100", global_batch=8, ignore_memory=True)
    assert r["fits"] == 0.0 and math.isfinite(r["iteration_time"])
    assert r["memory_per_gpu"] > session_context().profile("dgx-a100").device.memory


def test_setup_unknown_claims_flip_where_their_assumptions_say(monkeypatch):
    """Audit 11b B15: the spread reaches [6.36, 9.04] only when the slowest design's network falls to about
    1.6 Gbit/s (1.5: 6.50x, 1.7: 6.14x); the expansion gain enters [1.32, 1.48] at 40 nodes (1.457x) where
    the grid's 128 give 1.28x."""
    from suite_comet import constants

    base = dict(constants.GRIDS["comet-v2"])
    spread, gain = CLAIMS

    def grid(**kw):
        monkeypatch.setitem(constants.GRIDS, "comet-v2", {**base, **kw})
        return run(grid="comet-v2")

    slow = ("200 Gbit/s", "400 Gbit/s")
    assert grid(network=("1.5 Gbit/s", *slow))["spread"] == pytest.approx(6.501, abs=1e-3)
    assert not spread.expect.check(grid(network=("1.7 Gbit/s", *slow))["spread"])
    assert gain.expect.check(grid(nodes=40)["expansion_gain"]) and not gain.expect.check(grid(nodes=32)["expansion_gain"])
    # from the grid's 128 nodes downwards, the verdict first flips between 64 (out) and 48 (in) nodes
    assert not gain.expect.check(grid(nodes=64)["expansion_gain"]) and gain.expect.check(grid(nodes=48)["expansion_gain"])
    assert [a.flip_at for c in TECHNIQUE.claims for a in c.assumptions] == ["about 1.6 Gbit/s", "between 48 and 64 nodes"]


@pytest.mark.parametrize("nodes, verdict", [(128, "not reproduced"), (64, "not reproduced"),
                                            (48, "reproduced (no null)")])
def test_the_expansion_claims_node_count_flip_leads_to_no_evidence(nodes, verdict):
    """Audit 14 #5: the declared flip "between 48 and 64 nodes", bracketed through the scoreboard's judge: at
    the grid's 128 nodes and at 64 the best expansion gain is outside 1.4x +- 20% of the gain, by hand
    [1 + 0.4 x 0.8, 1 + 0.4 x 1.2] = [1.32, 1.48]; at 48 it is inside, but both nulls are 1.0 (hbm-only for
    comet: the baseline against itself; no gain), which the gain band excludes: "reproduced (no null)", as
    flips_to says."""
    from claim_verdict import verdict_at, with_params

    c = next(c for c in TECHNIQUE.claims if c.id == "expansion-gain-1.4x")
    assert c.expect.band() == pytest.approx((1.32, 1.48), rel=1e-12)
    a = c.assumptions[0]
    assert (a.value, a.flip_at, a.flips_to) == (128, "between 48 and 64 nodes", "reproduced (no null)")
    got, ours = verdict_at(TECHNIQUE, c, spec_edit=with_params(nodes=nodes))
    assert got == verdict and c.expect.check(ours) == (nodes == 48)
