"""VirtualFlow plugin: oracle, hand calculations from the mechanism and the authors' scheduler,
property tests of the invariants, and the conformance kit."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.collectives.dataparallel import load_problem
from suite.errors import ParameterError
from suite.testing import resolve_case

from suite_virtualflow import elastic, execute, model
from suite_virtualflow.technique import TECHNIQUE, ideal_additive_gain
from session_context import session_context

MIX = session_context().profile("vf-mix")
DGX = session_context().profile("dgx-1-v100")


def _oracle_softmax_gd(X, y, draws, lr, k):
    """Full-batch gradient descent of multinomial logistic regression, written here: theta = [W, b]
    from zero, grad = X^T (softmax(XW + b) - onehot) / n, no regularisation."""
    d = X.shape[1]
    W, b = np.zeros((d, k)), np.zeros(k)
    for idx in draws:
        Xb, yb = X[idx], y[idx]
        z = Xb @ W + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        p[np.arange(len(yb)), yb] -= 1.0
        W = W - lr * (Xb.T @ p) / len(yb)
        b = b - lr * p.sum(axis=0) / len(yb)
    return np.concatenate([W.ravel(), b])


# --------------------------------------------------------------------------- execute vs oracle


@pytest.mark.parametrize("devices", [1, 2, 4, 8])
def test_virtual_nodes_give_the_full_batch_trajectory(devices):
    out = execute.run("virtual", 64, 8, devices, steps=6, lr=0.5, hidden=0)
    prob = load_problem(workers=1, seed=0)
    ref = _oracle_softmax_gd(prob.X_train, prob.y_train, out["draws"], 0.5, prob.classes)
    assert np.max(np.abs(out["theta"] - ref)) < 1e-12
    assert out["trajectory_error"] < 1e-12
    assert out["allreduces"] == 6  # one all-reduce per step, whatever P
    assert out["identical"]


def test_same_trajectory_claim_is_a_declared_identity_across_devices():
    """audit11 A4: 'the trajectory at fixed B and V does not depend on the devices' is an identity
    of virtual-node averaging, so the claim is a claim defect (was reproduced); what it says is
    checked here, device count against device count at the claim's B = 128, V = 16, 10 steps."""
    claim = next(c for c in TECHNIQUE.claims if c.id == "same-trajectory-across-hardware")
    assert claim.defect.startswith("an identity") and "could not fail" in claim.defect
    thetas = {P: execute.run("virtual", 128, 16, P, steps=10)["theta"] for P in (1, 2, 4, 8)}
    assert max(float(np.max(np.abs(t - thetas[1]))) for t in thetas.values()) < 1e-12
    phys = {P: execute.run("physical", 128, 16, P, steps=10)["theta"] for P in (1, 2)}
    assert float(np.max(np.abs(phys[2] - phys[1]))) > 1e-3  # the baseline's trajectory follows P


def test_resize_4_2_8_changes_nothing_and_one_allreduce_per_step():
    base = execute.run("virtual", 64, 8, 4, steps=9, hidden=0)
    out = execute.run("virtual", 64, 8, 4, steps=9, hidden=0, resize="4,2,8")
    assert out["counts"] == [[2, 2, 2, 2], [4, 4], [1] * 8]
    assert out["resizes"] == 2 and out["allreduces"] == 9
    assert np.max(np.abs(out["theta"] - base["theta"])) < 1e-12
    assert out["trajectory_error"] < 1e-12


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=6).filter(lambda c: 0 < sum(c) <= 12))
def test_any_split_of_virtual_nodes_incl_dummies_matches_the_oracle(counts):
    V = sum(counts)
    out = execute.run("heterogeneous", 4 * V, V, 1, steps=3, hidden=0, vn_counts=",".join(map(str, counts)))
    prob = load_problem(workers=1, seed=0)
    ref = _oracle_softmax_gd(prob.X_train, prob.y_train, out["draws"], 0.5, prob.classes)
    assert np.max(np.abs(out["theta"] - ref)) < 1e-12
    assert out["allreduces"] == 3


def test_physical_batch_follows_the_devices_and_departs_from_the_oracle():
    out = execute.run("physical", 64, 8, 2, steps=5, hidden=0)
    assert out["global_batch"] == 16  # 2 devices x B/V = 2 x 8
    assert out["trajectory_error"] > 1e-3
    same = execute.run("physical", 64, 8, 8, steps=5, hidden=0)  # P = V: one virtual node each
    assert same["trajectory_error"] < 1e-12


def test_ledger_bytes_of_one_ring_allreduce_per_step():
    # ring all-reduce of n floats on P ranks: each rank sends 2 (P-1) n / P floats [Patarasuk09];
    # the gradient (650 floats: 64 x 10 + 10) plus the sample count = 651 floats, 8 bytes each
    P, steps, n = 4, 3, 64 * 10 + 10 + 1
    out = execute.run("virtual", 64, 8, P, steps=steps, hidden=0)
    assert out["bytes_sent"] == pytest.approx(steps * P * 2 * (P - 1) * n / P * 8, rel=0.01)
    assert out["bytes_sent"] == out["bytes_received"]


def test_a_planning_variant_on_a_layer_table_says_it_trained_the_digits():
    """Review: heterogeneous on 'transformer-base' stored the digits MLP's 2,712,640 B (20 steps) under
    the network's name with nothing saying what ran. It does plan with the layer table (a plan per
    device of the profile), and now says so: artifacts ``plan_workload`` and ``dataset``, and the
    bytes are the digits MLP's, counted by hand: 8 devices of the DGX-1 in the ring (those the plan
    leaves idle on a dummy batch), 2 steps, 2 x 7 x (64 x 16 + 16 + 16 x 10 + 10 + 1 = 1211) floats."""
    from suite import ScenarioSpec

    spec = ScenarioSpec(variant="heterogeneous", profile="dgx-1-v100", workload="transformer-base",
                        fidelity="execute", params={"steps": 2})
    r = TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario)
    assert r.artifacts["plan_workload"] == "transformer-base" and r.artifacts["dataset"] == "digits"
    assert len(r.artifacts["counts"][0]) == 8 and sum(r.artifacts["counts"][0]) == 16  # V over the 8 V100s
    assert r["bytes_sent"] == 2 * 2 * 7 * 1211 * 8 == 271_264


def test_the_trained_classifiers_layer_table_is_the_digits_mlp():
    """The layer table the default's plan prices is the MLP that is trained, counted by hand:
    64 x 16 + 16 + 16 x 10 + 10 = 1,210 parameters (logistic regression: 64 x 10 + 10 = 650);
    forward 2 x (64 x 16 + 16 x 10) = 2,368 FLOP a sample for the two fc layers, + 16 (relu) + 30
    (softmax, 3 a class)."""
    t = execute.classifier_table(execute.FlatModel(64, 10, hidden=16), "digits")
    assert (t.name, t.params, [l.kind for l in t.layers]) == ("digits-mlp-64-16-10", 1210,
                                                              ["fc", "act", "fc", "softmax"])
    assert t.fwd_flops == 2368 + 16 + 30
    lr = execute.classifier_table(execute.FlatModel(64, 10), "digits")
    assert (lr.name, lr.params, [l.kind for l in lr.layers]) == ("digits-mlp-64-10", 650, ["fc", "softmax"])


@pytest.mark.parametrize("variant, counts", [
    # the exact search: one V100 runs all 16 virtual nodes of 8 samples of a 1,210-parameter MLP in
    # under 1 us, and any all-reduce over two or more devices costs ~9 us of link latency, so it
    # keeps them on one device; the other 7 join the ring with a dummy batch
    ("heterogeneous", [16, 0, 0, 0, 0, 0, 0, 0]),
    ("fast-only", [2] * 8),  # every device of the fastest type (all 8 V100s): 16 / 8 each
])
def test_a_planning_variant_runs_at_the_default_digits_on_the_mlps_own_plan(variant, counts):
    """Review: `suite run --technique virtualflow --fidelity execute` gave 4 ok when the default was
    transformer-base, then 2 ok and 2 skipped on digits ("needs a layer-table workload ... got
    'digits'"): a default that did not run. Now the plan prices the classifier that is trained
    (artifact plan_workload), so plan and training are one model; 2 steps send 2 x 2 x 7 x 1211 x 8 B
    over the 8-device ring, the same run as the network's plan of the test above."""
    from suite import ScenarioSpec

    spec = ScenarioSpec(variant=variant, profile="dgx-1-v100", fidelity="execute", params={"steps": 2})
    sc = resolve_case(TECHNIQUE, spec).scenario
    assert sc.workload.name == "digits"  # the execute default
    r = TECHNIQUE.evaluate(sc)
    assert r.artifacts["plan_workload"] == "digits-mlp-64-16-10" and r.artifacts["dataset"] == "digits"
    assert r.artifacts["counts"] == [counts]
    assert r["bytes_sent"] == 2 * 2 * 7 * 1211 * 8 == 271_264
    assert r["oracle_error"] < 1e-12


# --------------------------------------------------------------------------- bad input


def test_vn_counts_on_a_layer_table_says_the_workload_is_what_is_trained():
    """Review: fast-only with vn_counts on resnet-50 skipped with "'heterogeneous' and 'fast-only' take
    a layer table to plan their virtual nodes; 'resnet-50' is a cnn", though it was given one: with
    vn_counts no plan reads the table, so the digits would run under the network's name. Its own line."""
    from suite import ScenarioSpec
    from suite.api import Skip

    spec = ScenarioSpec(variant="fast-only", profile="dgx-1-v100", workload="resnet-50", fidelity="execute",
                        params={"steps": 2, "vn_counts": "2,2,2,2,2,2,2,2"})
    with pytest.raises(Skip) as e:
        TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario)
    assert str(e.value) == ("virtualflow: 'vn_counts' replaces the plan of 'fast-only', so the workload is what "
                            "is trained: give a dataset workload (e.g. digits) or drop vn_counts to plan on the "
                            "layer table of 'resnet-50'")


def test_devices_not_dividing_virtual_nodes_is_one_clear_line():
    want = "virtualflow: parameter 'devices': expected a divisor of virtual_nodes (16), got 6"
    with pytest.raises(ParameterError, match=r"^" + want.replace("(", r"\(").replace(")", r"\)") + "$"):
        model.step_model(session_context().workload("resnet-50"), DGX, "virtual", 128, 16, 6)
    with pytest.raises(ParameterError) as e:
        execute.run("virtual", 128, 16, 6, steps=1)
    assert str(e.value) == want
    with pytest.raises(ParameterError, match="'resize': expected a divisor of virtual_nodes \\(8\\), got 3"):
        execute.run("virtual", 64, 8, 4, steps=2, resize="4,3")


def test_more_devices_than_the_profile_holds_is_a_skip_as_for_every_technique():
    """`--param devices=4,8,16` on an 8-GPU node: the 16-device cases failed with a ParameterError
    (the run's exit 1), where every other technique declines a scale past its profile (Skip)."""
    from suite.api import Skip

    with pytest.raises(Skip, match=r"^devices=16 but profile 'dgx-1-v100' has 8 devices$"):
        model.step_model(session_context().workload("resnet-50"), DGX, "physical", 128, 16, 16)


def test_vn_counts_must_sum_to_v():
    with pytest.raises(ParameterError, match="'vn_counts': expected non-negative counts summing to virtual_nodes"):
        execute.run("heterogeneous", 32, 8, 1, steps=1, vn_counts="3,3")


# --------------------------------------------------------------------------- model: hand calculations


def test_device_efficiency_from_lambda_throughput():
    # Lambda (2019) FP32 ResNet-50: V100 405 img/s, RTX 2080 Ti 294 img/s; 24.437764096 GFLOP per
    # image (forward + backward of our resnet-50); peaks 15.7 and 13.45 TFLOP/s
    v100 = session_context().profile("nvidia-v100-sxm2-16gb").device
    ti = session_context().profile("nvidia-rtx-2080-ti").device
    assert model.device_efficiency(v100) == pytest.approx(405 * 24.437764096e9 / 15.7e12, rel=1e-12)
    assert model.device_efficiency(ti) == pytest.approx(294 * 24.437764096e9 / 13.45e12, rel=1e-12)
    assert model.device_efficiency(ti) == pytest.approx(0.5342, abs=1e-4)
    wl = session_context().workload("resnet-50")
    assert sum(l.fwd_flops + l.bwd_flops for l in wl.layers) == pytest.approx(model.RESNET50_TRAIN_FLOPS)


def test_step_is_sequential_virtual_nodes_plus_one_allreduce():
    # T = (V/P) t(B/V) + T_AR(M, P): on one device no all-reduce, so V virtual nodes take V times
    # one (physical at P = 1 runs a single one); at P = V virtual and physical coincide.
    wl = session_context().workload("resnet-50")
    v1 = model.step_model(wl, DGX, "virtual", 256, 8, 1)
    p1 = model.step_model(wl, DGX, "physical", 256, 8, 1)
    assert v1.plan.comm == 0.0
    assert v1.step_time == pytest.approx(8 * p1.step_time, rel=1e-12)
    v8 = model.step_model(wl, DGX, "virtual", 256, 8, 8)
    p8 = model.step_model(wl, DGX, "physical", 256, 8, 8)
    assert v8.step_time == p8.step_time and v8.global_batch == p8.global_batch == 256
    assert p1.global_batch == 32  # physical's batch follows the hardware


def test_memory_is_state_plus_one_virtual_node():
    # resnet-50 (CNN, momentum SGD): 16 bytes per parameter + b x activations of one sample
    wl = session_context().workload("resnet-50")
    act = sum(l.activation_bytes for l in wl.layers)
    for P in (1, 2, 4, 8):
        sm = model.step_model(wl, DGX, "virtual", 256, 8, P)
        assert sm.memory == pytest.approx(25_557_032 * 16 + 32 * act)


def test_ideal_additive_gain_at_the_claim_point():
    # the claim-4 null is the model's zero-communication gain at the claim's own point (Transformer,
    # B 128, V 16 on vf-mix's 4 V100 + 4 RTX 2080 Ti): 1 + t_V100 / t_2080Ti per virtual node.
    # Both efficiencies are calibrated on ResNet-50 at the compute roof (Lambda: 405 and 294
    # images/s), so where a virtual node is compute-bound the ratio is 294/405; the memory-bound
    # parts (the accumulation's 12 params bytes at 900 vs 616 GB/s) move it by < 0.1%
    from suite import ScenarioSpec

    r = TECHNIQUE.evaluate(resolve_case(TECHNIQUE, ScenarioSpec(variant="heterogeneous", profile="vf-mix",
                                                                workload="transformer-base",
                                                                params={"batch": 128, "virtual_nodes": 16})).scenario)
    ideal = ideal_additive_gain({"het": r})  # the claim's null, from its own case
    assert ideal == pytest.approx(1 + 294 / 405, rel=1e-3)
    assert ideal != pytest.approx(1 + 294 / 405, rel=1e-6)  # not the calibration constant
    ctx = session_context()
    assert ideal == pytest.approx(model.ideal_gain(ctx.workload("transformer-base"), ctx.profile("vf-mix"), 128, 16),
                                  rel=1e-12)
    tv, tt = r.artifacts["plan"]["vn_times_s"]
    assert ideal == pytest.approx((4 / tv + 4 / tt) / (4 / tv), rel=1e-12)
    assert r["ideal_gain"] == pytest.approx(ideal, rel=1e-12)


def test_default_efficiency_reads_the_v100_profile():
    # a device missing from Lambda's table gets the V100's 405 x 24.44 GFLOP / 15.7 TFLOP/s (the
    # V100 SXM2 datasheet's fp32 peak), the peak read from the nvidia-v100-sxm2-16gb profile
    from types import SimpleNamespace

    unknown = SimpleNamespace(name="no such GPU")
    v100 = session_context().profile(model.DEFAULT_EFFICIENCY_PROFILE)
    assert model.device_efficiency(unknown, v100) == pytest.approx(405 * 24.437764096e9 / 15.7e12, rel=1e-12)
    with pytest.raises(ParameterError, match="reference profile"):  # never looked up by name
        model.device_efficiency(unknown)
    # the runner resolves the reference into every case (Technique.uses), hashed into its key
    assert model.EFFICIENCY_INPUT in TECHNIQUE.uses
    assert model.DEFAULT_EFFICIENCY_PROFILE == "nvidia-v100-sxm2-16gb"
    assert session_context().profile(model.DEFAULT_EFFICIENCY_PROFILE).device.name == model.DEFAULT_EFFICIENCY_DEVICE


# --------------------------------------------------------------------------- plan search


def _slots(counts, dpn=4):
    out, i = [], 0
    for k, c in enumerate(counts):
        out.append(model.DeviceSlot(f"t{k}", None, c, tuple((i + j) // dpn for j in range(c))))
        i += c
    return out


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=2, max_size=3), st.integers(1, 9), st.data())
def test_vectorised_search_equals_brute_force(t, V, data):
    _check_search_equals_brute_force(t, V, data.draw(st.lists(st.integers(1, 3), min_size=len(t), max_size=len(t))))


def test_vectorised_search_equals_brute_force_on_nine_devices():
    """The example hypothesis found: three types of three devices (it overflowed the profiles)."""
    _check_search_equals_brute_force([1.0, 1.0, 1.0], 3, [3, 3, 3])


def _check_search_equals_brute_force(t, V, counts):
    slots = _slots(counts)
    nodes = -(-sum(counts) // 4)
    prof = MIX if nodes <= 2 else session_context().profile("dgx-1-v100")
    if nodes > 2:  # 9 devices (counts [3, 3, 3]) overflow MIX's two 4-GPU nodes and one 8-GPU DGX-1 node:
        counts = counts[:-1] + [counts[-1] - 1]  # one fewer, on the DGX-1 node (it raised IndexError before)
        slots = _slots(counts, dpn=8)
        nodes = 1
    fast = model.search_plan(t, slots, V, prof, 1e8, nodes)
    brute = model.brute_force_plan(t, slots, V, prof, 1e8, nodes)
    assert fast.step == pytest.approx(brute.step, rel=1e-9)
    assert fast.assigned == V == sum(sum(x) for x in fast.per_device())
    lo = model.balanced_bound(t, counts, V)
    assert fast.compute >= lo * (1 - 1e-9)
    # without communication the makespan is within one virtual node of the continuous bound
    free = model.search_plan(t, slots, V, prof, 0.0, nodes)
    assert lo * (1 - 1e-9) <= free.compute <= lo + max(t) + 1e-12
    assert free.comm == 0.0


def test_search_three_types_v1024_runs():
    t = [0.1, 0.137, 0.21]
    slots = _slots([8, 8, 8], dpn=8)
    plan = model.search_plan(t, slots, 1024, session_context().profile("a800-64"), 4 * 25.5e6, 8)
    assert plan.assigned == 1024
    assert plan.compute >= model.balanced_bound(t, [8, 8, 8], 1024) * (1 - 1e-9)


def test_mix_plan_uses_both_types_when_comm_is_free():
    wl = session_context().workload("resnet-50")
    fast = model.step_model(wl, MIX, "fast-only", 8192, 128, 4)
    het = model.step_model(wl, MIX, "heterogeneous", 8192, 128, 4)
    assert het.plan.devices == (4, 4) and het.plan.assigned == 128
    # 4 V100 at 0.2032 s and 4 2080 Ti at 0.2838 s per virtual node of 64 images: balanced split
    assert het.plan.vns == (76, 52)
    assert fast.plan.vns == (128, 0) and fast.plan.busiest == (32, 0)
    assert 1.0 < het.throughput / fast.throughput < model.ideal_gain(wl, MIX, 8192, 128)


# --------------------------------------------------------------------------- weighted fair sharing


def test_wfs_hand_cases():
    # equal priorities, 8 GPUs: 8 x 1/2 = 4 each
    assert elastic.wfs_allocations([("a", 1, 8), ("b", 1, 8)], 8) == {"a": 4, "b": 4}
    # priorities 10 and 1: shares 8x10/11 = 7.3 -> 4 and 0.73 -> 1 (at least 1); neither covers
    # its demand, so 4 and 1, 3 GPUs left; doubling, highest priority first: a needs 4 > 3 free,
    # b doubles 1 -> 2 -> 4 (free 3 -> 2 -> 0)
    assert elastic.wfs_allocations([("a", 10, 8), ("b", 1, 8)], 8) == {"a": 4, "b": 4}
    # 4 GPUs, priorities 5 and 1: a's share 4x5/6 = 3.3 -> 2 covers its demand 1; round 2 b gets
    # 3 -> 2; 1 GPU left, no doubling fits (b would need 2)
    assert elastic.wfs_allocations([("a", 5, 1), ("b", 1, 4)], 4) == {"a": 1, "b": 2}
    with pytest.raises(ValueError):
        elastic.wfs_allocations([(i, 1, 1) for i in range(3)], 2)


def test_replay_two_jobs_by_hand():
    # 2 GPUs; two jobs of demand 2, 100 steps, 1 s/step on 2 GPUs, 2 s/step on 1.
    # static: job0 0-100, job1 100-200 -> JCT 100 and 190, mean 145.
    # elastic: at t=10 both get 1 GPU; job0 (10 steps done) pauses 10 s, 90 steps x 2 s -> done
    # at 200; job1 starts at 20 (waits for the released GPU), by 200 has 90 steps; it resizes to
    # 2 GPUs, pauses 10 s, 10 x 1 s -> done at 220. JCT 200 and 210, mean 205.
    jobs = [elastic.TraceJob(0, "bert", 1, 2, 8, steps=100), elastic.TraceJob(10, "bert", 1, 2, 8, steps=100)]
    st_ = {1: 2.0, 2: 1.0}
    s = elastic.replay(jobs, 2, lambda i, g: st_[g], "priority")
    assert s.jct == pytest.approx([100.0, 190.0]) and s.resizes == 0
    e = elastic.replay(jobs, 2, lambda i, g: st_[g], "wfs")
    assert e.jct == pytest.approx([200.0, 210.0]) and e.resizes == 2


def test_trace_facts_and_job_lengths():
    jobs = elastic.MEDIUM20_8JPH
    assert len(jobs) == 20
    kinds = [j.workload for j in jobs]
    assert (kinds.count("bert"), kinds.count("transformer"), kinds.count("resnet")) == (13, 3, 4)
    assert jobs[0].arrival == 1 and jobs[-1].arrival == 6505
    assert elastic.job_steps(jobs[0]) == math.ceil(67349 / 4)  # SST-2, batch 4, 1 epoch
    assert elastic.job_steps(jobs[1]) == 20 * math.ceil(8551 / 32)  # CoLA, batch 32, 20 epochs
    assert elastic.job_steps(jobs[2]) == 4000
    assert jobs[2].virtual_nodes == 8


def test_elastic_replay_on_the_trace():
    wls = {u.partition(":")[2]: session_context().workload(u.partition(":")[2]) for u in elastic.TRACE_INPUTS}
    tables = [elastic.step_time_table(j, DGX, workloads=wls) for j in elastic.MEDIUM20_8JPH]
    for pol in ("wfs", "priority"):
        r = elastic.replay(elastic.MEDIUM20_8JPH, 8, lambda i, g: tables[i][g], pol)
        assert all(f >= j.arrival for f, j in zip(r.finish, elastic.MEDIUM20_8JPH))
        for i, hist in enumerate(r.allocations):
            for _, g in hist:
                assert 1 <= g <= elastic.MEDIUM20_8JPH[i].demand and g & (g - 1) == 0


# --------------------------------------------------------------------------- profiles, claims, kit


def test_profiles():
    ti = session_context().profile("nvidia-rtx-2080-ti").device
    assert ti.flops("fp32") == pytest.approx(4352 * 2 * 1545e6, rel=1e-3)  # 13.45 as rounded in the file
    assert ti.memory == 11e9 and ti.memory_bandwidth == 616e9
    assert [s.count for s in model.device_slots(MIX)] == [4, 4]
    assert [s.nodes for s in model.device_slots(MIX)] == [(0, 0, 0, 0), (1, 1, 1, 1)]


def test_claim_cases_resolve_and_evaluate():
    for claim in TECHNIQUE.claims:
        for label, spec in claim.specs().items():
            case = resolve_case(TECHNIQUE, spec)
            if spec.fidelity == "model":
                r = TECHNIQUE.evaluate(case.scenario)
                assert r["step_time"] > 0


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=4)
    assert rep.outcomes["properties"] == "passed"
    assert rep.outcomes["family:oracle-exact"] == "passed"


def test_bad_devices_through_the_scenario():
    spec = dataclasses.replace(TECHNIQUE.smoke[0], variant="virtual", params={"batch": 128, "virtual_nodes": 16,
                                                                              "devices": 3})
    case = resolve_case(TECHNIQUE, spec)
    with pytest.raises(ParameterError, match="expected a divisor of virtual_nodes \\(16\\), got 3"):
        TECHNIQUE.evaluate(case.scenario)


def test_physical_large_batch_does_not_fit_but_virtual_nodes_do():
    # resnet-50, B = 8192 on 8 V100 (16 GB): one batch of B/8 = 1024 images needs ~150 GB of
    # activations; 128 virtual nodes of 64 need 64 x 150 MB + 0.4 GB of state < 16 GB
    wl = session_context().workload("resnet-50")
    phys = TECHNIQUE.evaluate(dataclasses.replace(
        resolve_case(TECHNIQUE, dataclasses.replace(TECHNIQUE.smoke[0], profile="dgx-1-v100", workload="resnet-50",
                                                    variant="physical",
                                                    params={"batch": 8192, "virtual_nodes": 8, "devices": 8})).scenario))
    virt = TECHNIQUE.evaluate(dataclasses.replace(
        resolve_case(TECHNIQUE, dataclasses.replace(TECHNIQUE.smoke[0], profile="dgx-1-v100", workload="resnet-50",
                                                    variant="virtual",
                                                    params={"batch": 8192, "virtual_nodes": 128, "devices": 8})).scenario))
    act = sum(l.activation_bytes for l in wl.layers)
    assert phys["fits_memory"] == 0.0 and phys["memory_per_device"] == pytest.approx(wl.params * 16 + 1024 * act)
    assert virt["fits_memory"] == 1.0 and virt["vn_per_device_max"] == 16


def test_simulated_jct_never_beats_running_at_full_demand():
    # every job's JCT >= its steps x its step time on its full demand (step time falls with g)
    for variant in ("elastic", "static"):
        spec = dataclasses.replace(TECHNIQUE.smoke[2], variant=variant)
        r = TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario)
        for row in r.artifacts["jobs"]:
            assert row["jct"] >= row["steps"] * row["step_time_at_demand"] * (1 - 1e-9)
        assert r["avg_jct"] == pytest.approx(np.mean([row["jct"] for row in r.artifacts["jobs"]]))
    assert r["resizes"] == 0  # static never resizes


@pytest.mark.parametrize("scale, verdict", [(1.0, "not reproduced"), (0.6, "not reproduced"),
                                            (0.55, "reproduced (no null)")])
def test_the_arrival_rate_flip_leads_to_no_evidence(scale, verdict):
    """Audit 11b B17 / audit 14 #5: the paper's trace was not found, so the 8 jobs/hour of the authors' code's
    trace is our assumption (unsourced). The declared flip at about 14 jobs/hour, bracketed through the
    scoreboard's judge: arrival times x 0.6 (8 / 0.6 = 13.3 jobs/hour) leave ours under 48% fewer JCT, a gain
    of 1 / 0.52 = 1.923x +- 20%, by hand [1 + 0.923 x 0.8, 1 + 0.923 x 1.2] = [1.7385, 2.1077]; x 0.55
    (8 / 0.55 = 14.5 jobs/hour) put it inside, but the claim's one null, 0% (no elasticity) = 1, is excluded
    by the gain band: "reproduced (no null)", as flips_to says."""
    from claim_verdict import verdict_at

    c = next(c for c in TECHNIQUE.claims if c.id == "elastic-48pct-jct")
    gain = 1 / 0.52 - 1
    assert c.expect.band() == pytest.approx((1 + 0.8 * gain, 1 + 1.2 * gain), rel=1e-12)
    (a,) = c.assumptions
    assert (a.sourced, a.flip_at, a.flips_to) == (False, "about 14 jobs/hour", "reproduced (no null)")
    # 14 jobs/hour lies between the two scales: 8 / 0.6 = 13.3 and 8 / 0.55 = 14.5

    def busier(sc):
        jobs = tuple(dataclasses.replace(j, arrival=j.arrival * scale) for j in sc.workload.jobs)
        return dataclasses.replace(sc, workload=dataclasses.replace(sc.workload, jobs=jobs))

    got, ours = verdict_at(TECHNIQUE, c, scenario_edit=busier)
    assert got == verdict and c.expect.check(ours) == (scale == 0.55)


@pytest.mark.parametrize("bandwidth, verdict", [
    # each side of the declared flip (reader 15 #5: "87 Gbit/s" was below the band), then the page's sweep
    # (reader 15 #4: the page said 1.347 and 1.386 at 100 and 400 Gbit/s). Ours (the model's, not pinned):
    # 1.3357, 1.3360, 1.3362, 1.1269, 1.3555, 1.3555
    ("87 Gbit/s", "not reproduced"), ("87.1 Gbit/s", "not reproduced"), ("87.2 Gbit/s", "reproduced"),
    ("25 Gbit/s", "not reproduced"), ("100 Gbit/s", "reproduced"), ("400 Gbit/s", "reproduced")])
def test_the_network_flip_is_where_declared_and_what_it_flips_to(bandwidth, verdict):
    """Band by hand 1 + 0.42 x [0.8, 1.2] = [1.336, 1.504]; the nulls (no gain 1, the ideal additive
    gain 1.7253) lie outside, so ours entering the band is 'reproduced', at 87.2 Gbit/s (87.1: 1.33598)."""
    from claim_verdict import verdict_at, with_overrides

    c = next(c for c in TECHNIQUE.claims if c.id == "heterogeneous-42pct-throughput")
    assert c.expect.band() == pytest.approx((1.336, 1.504), abs=1e-12)
    (a,) = c.assumptions
    assert (a.value, a.sourced, a.flip_at, a.flips_to) == ("10 Gbit/s", False, "87.2 Gbit/s", "reproduced")
    got, value = verdict_at(TECHNIQUE, c, spec_edit=with_overrides({"network.1.bandwidth": bandwidth}))
    assert got == verdict and c.expect.check(value) == (verdict != "not reproduced")


def test_the_page_s_network_table_is_the_model_s():
    """Reader 15 #4: docs/techniques/virtualflow.md's network table showed 1.073 / 1.347 / 1.386 for the
    Transformer at 25 / 100 / 400 Gbit/s where the model gives 1.127 / 1.355 / 1.355. Each cell, as
    printed, is heterogeneous over fast-only throughput on vf-mix at the column's workload, batch and V
    (from its header), with the plan (virtual nodes per GPU type) in brackets."""
    from pathlib import Path

    from suite import ScenarioSpec

    page = (Path(__file__).resolve().parents[2] / "docs/techniques/virtualflow.md").read_text(encoding="utf-8")
    lines = page.split("| inter-node bandwidth |", 1)[1].split("\n\n")[0].splitlines()
    cols = [h.split() for h in lines[0].split("|")[:-1]]  # e.g. ['transformer-base', 'B=128', 'V=16']
    assert len(lines) == 6 and [c[0] for c in cols] == ["transformer-base", "resnet-50", "bert-base@seq128"]
    assert all(len(c) == 3 and c[1].startswith("B=") and c[2].startswith("V=") for c in cols), cols
    for line in lines[2:]:
        bw, *cells = [x.strip() for x in line.split("|")[1:-1]]
        assert len(cells) == len(cols), (bw, cells)  # zip below would drop a missing or extra cell
        for (wl, b, v), cell in zip(cols, cells):
            params = {"batch": int(b[2:]), "virtual_nodes": int(v[2:])}
            res = {var: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, ScenarioSpec(
                variant=var, profile="vf-mix", workload=wl, params=params,
                overrides={"network.1.bandwidth": bw.split(" (")[0]})).scenario) for var in ("heterogeneous", "fast-only")}
            fast, slow = res["heterogeneous"].artifacts["plan"]["vns"]
            got = res["heterogeneous"]["throughput"] / res["fast-only"]["throughput"]
            assert cell == f"{got:.3f} ({fast}, {slow})", (bw, wl, got)
