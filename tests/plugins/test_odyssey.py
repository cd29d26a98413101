"""Tests of the Odyssey plugin: the unified model by hand calculation, checkpoint intervals,
the decision rule, the failure-trace reader, the SimPy simulation's accounting against a hand
timeline, the execute fidelity against the failure-free run and dense numpy, the issue's
properties (hypothesis), claims resolution and the conformance kit."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite import Result, Scenario
from suite.errors import ParameterError
from suite.hardware import ProfileLibrary
from suite.testing import resolve_case
from suite_odyssey import execute, simulate
from suite_odyssey.model import (
    STATE_BYTES_PER_PARAM,
    ClusterModel,
    LLMJob,
    PerfModel,
    choose_policy,
    daly_interval,
    expected_window,
    reroute_load,
    uniform_transformer,
    young_interval,
)
from suite_odyssey.simulate import TraceEvent, parse_trace
from suite_odyssey.technique import CLAIMS, TECHNIQUE, max_ratio_vs_replan, max_ratio_vs_reroute

# ----------------------------------------------------------------------------- helpers


def toy_job(layers=8, flops=1e12, params=1_000_000, M=16, mb=1) -> LLMJob:
    """Identical layers: fwd F, bwd 2F FLOPs per sample, tiny activations."""
    return LLMJob("toy", (flops,) * layers, (2 * flops,) * layers, (params,) * layers, (8.0,) * layers,
                  (8.0,) * layers, M * mb, mb)


def toy_cluster(n=8, flops=1e12, mem=1e12, bw=1e20, lat=0.0, mtbf=1e5, mttr=1e3, restart=60.0, ckpt=1e9):
    return ClusterModel(n, flops, 1.0, mem, bw, lat, mtbf, mttr, restart, ckpt)


def write_profile(tmp_path, name="ft-test", nodes=2, per_node=4, memory="80 GB", mtbf="96 h"):
    """A small cluster with reliability, as TOML through the profile library (until the shipped
    ft-32dev is used below)."""
    (tmp_path / "dev.toml").write_text("""
[profile]
name = "toy-accel"
kind = "device"
[device]
type = "gpu"
memory = "%s"
memory_bandwidth = "2000 GB/s"
peak_flops = { bf16 = "300 TFLOP/s", fp32 = "20 TFLOP/s" }
""" % memory)
    (tmp_path / f"{name}.toml").write_text(f"""
nodes = {nodes}
[profile]
name = "{name}"
kind = "cluster"
[node]
device = "toy-accel"
devices_per_node = {per_node}
[[network]]
name = "fabric"
topology = "fat-tree"
size = {nodes}
bandwidth = "200 Gbit/s"
latency = "2 us"
[reliability]
device_mtbf = "{mtbf}"
repair_time = "2 h"
restart_time = "5 min"
checkpoint_bandwidth = "20 GB/s"
""")
    return ProfileLibrary([tmp_path]).get(name)


def scenario(variant, profile, fidelity="simulate", workload=None, seed=0, **params):
    p = TECHNIQUE.validate_params({"layers": 8, "hidden": 1024, "seq_len": 1024, "vocab": 8000,
                                   "global_batch": 64, "horizon": 6.0, **params})
    return Scenario("odyssey", variant, fidelity, profile=profile, workload=workload, params=p, seed=seed)


# ----------------------------------------------------------------------------- model: hand calculations


def test_uniform_transformer_counts():
    # L=2, h=4, s=3, V=10: block params 12*16 + 13*4 = 244; embedding and head 40 each
    job = uniform_transformer(2, 4, 3, 10, global_batch=8, micro_batch=2, heads=2, recompute="selective")
    assert job.params == (40, 244, 244, 40)
    assert job.total_params == 568
    # forward per block: 24 s h^2 + 4 s^2 h = 24*3*16 + 4*9*4 = 1152 + 144 = 1296; head 2 s h V = 240
    assert job.fwd == (0.0, 1296.0, 1296.0, 240.0)
    assert job.bwd == (0.0, 2592.0, 2592.0, 480.0)
    # selective recomputation keeps 34 s h bytes per block = 408
    assert job.saved[1] == 408.0
    assert job.microbatches == 4
    with pytest.raises(ParameterError, match="global_batch"):
        uniform_transformer(2, 4, 3, 10, global_batch=7, micro_batch=2)


def test_stage_times_and_plan_by_hand():
    job = toy_job(layers=8, flops=1e12, M=16)
    cl = toy_cluster(n=8, flops=1e12, bw=1e9, lat=1e-3)
    pm = PerfModel(job, cl)
    plan = pm.plan(dp=2, pp=4)
    # 2 layers per stage: forward 2e12 FLOPs / 1e12 FLOP/s = 2 s, backward 4 s
    assert plan.bounds == (0, 2, 4, 6, 8)
    assert plan.tf == pytest.approx((2.0,) * 4) and plan.tb == pytest.approx((4.0,) * 4)
    # hop: latency + 8 B / 1e9 B/s
    assert plan.hop == pytest.approx(1e-3 + 8e-9)
    # ring all-reduce of one stage's 2e6 params x 2 B over 2 replicas: 2(p-1) a + 2(p-1)/p n b
    ar = 2 * 1e-3 + 4e6 / 1e9
    assert plan.allreduce == pytest.approx(ar)
    # the step is the 1F1B DAG of the pipeline (m = 16 / 2 = 8) plus the all-reduce
    from suite.perf.pipeline import pipeline_1f1b_schedule

    assert plan.iteration_time == pytest.approx(pipeline_1f1b_schedule([2.0] * 4, [4.0] * 4, 8, plan.hop).makespan + ar)
    # without network costs: (m + p - 1)(tf + tb) = 11 * 6 = 66 s exactly
    free = PerfModel(job, toy_cluster(n=8, flops=1e12, bw=1e30, lat=0.0)).plan(dp=2, pp=4)
    assert free.iteration_time == pytest.approx(66.0, rel=1e-12)
    assert 66.0 < plan.iteration_time < 66.0 + ar + 2 * 8 * 3 * plan.hop


def test_reroute_time_by_hand():
    job = toy_job(layers=4, flops=1e12, M=16)
    pm = PerfModel(job, toy_cluster(n=8), bubble_fill=0.0)
    plan = pm.plan(dp=4, pp=2)
    c = plan.tf[0] + plan.tb[0]  # 2 layers: 2 s + 4 s
    assert c == pytest.approx(6.0)
    # m = 4 per pipeline; one hole at stage 0: 16 micro-batches over 3 peers -> [6, 5, 5], 2 extra
    assert reroute_load(16, 4, 1) == [6, 5, 5]
    assert pm.reroute_time(plan, [1, 0]) == pytest.approx(plan.iteration_time + 2 * c)
    # with the bubble (p - 1 = 1 slot) filled, one extra micro-batch remains exposed
    pm_fill = PerfModel(job, toy_cluster(n=8), bubble_fill=1.0)
    assert pm_fill.reroute_time(plan, [1, 0]) == pytest.approx(plan.iteration_time + 1 * c)
    # every replica of a stage gone: infeasible
    assert math.isinf(pm.reroute_time(plan, [4, 0]))
    assert pm.reroute_time(plan, [0, 0]) == plan.iteration_time


def test_redundant_time_by_hand():
    job = toy_job(layers=4, flops=1e12, M=8)
    pm = PerfModel(job, toy_cluster(n=4), bubble_fill=0.0)
    plan = pm.plan(dp=2, pp=2)
    m = 4
    # failure-free overhead: each stage also runs its successor's forward for its m micro-batches
    assert pm.redundant_time(plan) == pytest.approx(plan.iteration_time + m * plan.tf[1])
    # stage 1 of pipeline 0 covered by stage 0: one stage doing 2 stages' work, m micro-batches
    merged = m * (plan.tf[0] + plan.tb[0] + plan.tf[1] + plan.tb[1]) + plan.allreduce
    assert pm.redundant_time(plan, {0: [(1, 0)]}) == pytest.approx(merged + m * plan.tf[1])


def test_memory_fit_and_state_bytes():
    job = toy_job(layers=4, params=1_000_000_000, M=8)
    # 4e9 params x 16 B = 64 GB of state; 40 GB devices need >= 2 stages
    pm = PerfModel(job, toy_cluster(n=4, mem=40e9))
    assert not pm.fits((0, 4))
    assert pm.fits((0, 2, 4))
    best = pm.best_plan(4)
    assert best.pp >= 2
    assert pm.state_bytes((0, 2, 4), 0) == STATE_BYTES_PER_PARAM * 2e9
    # redundant computation doubles the state: needs >= 4 stages on the same devices
    assert pm.best_plan(4, state_factor=2.0).pp == 4
    assert pm.checkpoint_time() == pytest.approx(16 * 4e9 / 1e9)


def test_checkpoint_intervals():
    # Young: sqrt(2 * 10 * 5000) = sqrt(100000) = 316.227...
    assert young_interval(10.0, 5000.0) == pytest.approx(316.2277660, rel=1e-9)
    # Daly: x = 10 / 10000 = 0.001 -> 316.2278 * (1 + 0.0105409 + 0.000111) - 10 = 309.5963
    assert daly_interval(10.0, 5000.0) == pytest.approx(316.2277660 * (1 + math.sqrt(0.001) / 3 + 0.001 / 9) - 10)
    assert daly_interval(10.0, 5000.0) == pytest.approx(309.596, abs=1e-3)
    assert daly_interval(30.0, 10.0) == 10.0  # delta >= 2M: tau = M
    assert daly_interval(1e-6, 1e6) / young_interval(1e-6, 1e6) == pytest.approx(1.0, abs=1e-5)
    assert math.isinf(daly_interval(5.0, math.inf))


def test_decision_rule():
    # 31 alive at MTBF 100 s, 1 down at MTTR 10 s: H = 1 / (0.31 + 0.1)
    assert expected_window(31, 1, 100.0, 10.0) == pytest.approx(1 / 0.41)
    assert math.isinf(expected_window(4, 0, math.inf, 10.0))
    opts = {"reroute": (10.0, 1.2), "replan": (60.0, 1.05)}
    # H = 100 s, T_ref = 1: reroute 10 + 120 = 130; replan 60 + 105 = 165 -> reroute
    ch = choose_policy(opts, 100.0, 1.0)
    assert ch.name == "reroute" and ch.costs == {"reroute": 130.0, "replan": 165.0}
    # H = 1000 s: reroute 1210, replan 1110 -> replan
    assert choose_policy(opts, 1000.0, 1.0).name == "replan"
    assert choose_policy(opts, math.inf, 1.0).name == "replan"  # argmin T
    assert choose_policy(opts, 0.0, 1.0).name == "reroute"  # argmin C
    with pytest.raises(ValueError, match="no feasible"):
        choose_policy({"reroute": (1.0, math.inf)}, 10.0, 1.0)


# ----------------------------------------------------------------------------- properties (issue 10)


@settings(max_examples=60)
@given(st.dictionaries(st.sampled_from(["reroute", "replan", "redundant", "rejoin"]),
                       st.tuples(st.floats(0, 1e4), st.floats(0.01, 1e3)), min_size=1),
       st.floats(0, 1e7), st.floats(0.01, 100))
def test_adaptive_cost_never_above_any_fixed_policy(opts, window, t_ref):
    ch = choose_policy(opts, window, t_ref)
    for name, (c, t) in opts.items():
        assert ch.costs[ch.name] <= c + window / t_ref * t + 1e-9 * (1 + abs(c) + window / t_ref * t)


@settings(max_examples=15)
@given(st.integers(2, 20), st.integers(1, 12), st.integers(1, 4), st.integers(4, 32))
def test_best_plan_on_fewer_devices_never_faster(n, layers, f, M):
    job = toy_job(layers=layers, M=M)
    pm = PerfModel(job, toy_cluster(n=n, bw=1e10, lat=1e-5))
    full = pm.best_plan(n)
    fewer = pm.best_plan(max(1, n - f))
    assert fewer.iteration_time >= full.iteration_time * (1 - 1e-12)


@settings(max_examples=50)
@given(st.integers(1, 512), st.integers(1, 32), st.data())
def test_reroute_conserves_microbatches(M, dp, data):
    f = data.draw(st.integers(0, dp - 1))
    load = reroute_load(M, dp, f)
    assert sum(load) == M and len(load) == dp - f and max(load) - min(load) <= 1


@settings(max_examples=40)
@given(st.integers(1, 16), st.integers(1, 64), st.data())
def test_dag_never_below_the_pruning_lower_bound(p, m, data):
    """The plan search skips a plan whose lower bound cannot beat the best so far; that is safe
    because the exact 1F1B makespan is never below max(one micro-batch's round trip, the slowest
    stage's m passes). (An empirical 0.8 x closed-form factor failed on rare draws: this
    pipeline gives 0.744.)"""
    from suite.perf.pipeline import pipeline_1f1b_schedule

    f = np.array(data.draw(st.lists(st.floats(0.05, 3.0), min_size=p, max_size=p)))
    b = np.array(data.draw(st.lists(st.floats(0.05, 6.0), min_size=p, max_size=p)))
    hop = data.draw(st.sampled_from([0.0, 0.01, 0.2]))
    exact = pipeline_1f1b_schedule(f, b, m, hop).makespan
    c = f + b
    assert exact >= max(c.sum() + 2 * (p - 1) * hop, m * c.max()) * (1 - 1e-12)
    assert PerfModel.makespan_lower_bound(c, m, hop) == pytest.approx(max(c.sum() + 2 * (p - 1) * hop,
                                                                          m * c.max()))


def test_pruning_factor_counterexample_is_timed():
    """The pipeline where the exact makespan is 0.744 x the closed form (found by a 3000-draw search):
    the old pruning (skip when 0.8 x estimate >= best) could drop such a plan."""
    from suite.perf.pipeline import pipeline_1f1b_schedule, pipeline_1f1b_unbalanced_time

    f = np.array([2.3896995408163133, 1 / 3, 1.0233861743560488, 0.37005040709210474, 1.2598680270864986,
                  1.2454986084296733, 0.9011339798237249, 1.3763988109939884])
    b = f.copy()
    b[4] = 1.3763988109939884
    exact = pipeline_1f1b_schedule(f, b, 8, 0.0).makespan
    est = pipeline_1f1b_unbalanced_time(f + b, 8)
    assert exact < 0.8 * est
    assert exact >= PerfModel.makespan_lower_bound(f + b, 8, 0.0)


def test_plan_search_is_exhaustive_on_a_small_case():
    """On a small job the chained search equals brute force over every (dp, pp) timed with the DAG."""
    from suite.perf.pipeline import enumerate_plans

    job = toy_job(layers=6, flops=1e12, params=10**9, M=12)
    pm = PerfModel(job, toy_cluster(n=12, mem=40e9, bw=1e10, lat=1e-4))
    for n in range(1, 13):
        plans = [pm.plan(d, p) for d, p, _t in enumerate_plans(n, 6) if d <= 12 and pm.fits(pm._bounds(p))]
        best = pm.best_plan(n)
        if not plans:
            assert best is None
            continue
        assert best.iteration_time == pytest.approx(min(q.iteration_time for q in plans))


@pytest.mark.parametrize("variant", ["checkpoint-restart", "replan", "reroute", "odyssey", "redundant"])
def test_no_failures_all_but_redundant_equal_failure_free(tmp_path, variant):
    prof = write_profile(tmp_path)
    r = TECHNIQUE.evaluate(scenario(variant, prof, failures="none"))
    if variant == "redundant":
        assert r["relative_throughput"] < 1.0  # redundant forward costs something even without failures
    else:
        assert r["relative_throughput"] == pytest.approx(1.0, abs=1e-12)
        assert r["checkpoints"] == 0
    m = TECHNIQUE.evaluate(scenario(variant, prof, fidelity="model", failed_devices=0))
    ff = TECHNIQUE.evaluate(scenario("replan", prof, fidelity="model", failed_devices=0))["iteration_time"]
    if variant != "redundant":
        assert m["iteration_time"] == pytest.approx(ff)
        assert m["post_failure_iteration_time"] == pytest.approx(ff)
    else:
        assert m["iteration_time"] > ff


def test_declared_properties_hold_on_shipped_profile():
    case = resolve_case(TECHNIQUE, TECHNIQUE.smoke[0])
    for prop in TECHNIQUE.properties:
        for v in ("odyssey", "reroute"):
            prop.check(TECHNIQUE, Scenario(**{**case.scenario.__dict__, "variant": v}))


# ----------------------------------------------------------------------------- failure traces


def read_trace(path, devices):
    """A trace file's events, as a scenario's resolved ``failures`` input gives them to the model."""
    return parse_trace(path.read_text(encoding="utf-8"), devices, path)


def test_read_trace_and_errors(tmp_path):
    f = tmp_path / "trace.csv"
    f.write_text("time,device,event\n# a comment\n10, 3, fail\n\n20,3,repair\n20,1,FAIL\n")
    assert read_trace(f, 4) == [TraceEvent(10.0, 3, "fail"), TraceEvent(20.0, 3, "repair"), TraceEvent(20.0, 1, "fail")]
    bad = {
        "10,3\n": "expected 'time,device,event'",
        "x,3,fail\n": "time: expected a number",
        "10,9,fail\n": "device: expected 0..3",
        "10,1,explode\n": "event: expected 'fail' or 'repair'",
        "10,1,fail\n5,2,fail\n": "times must not decrease",
        "10,1,fail\n11,1,fail\n": "already down",
        "10,1,repair\n": "not down",
    }
    for text, msg in bad.items():
        f.write_text(text)
        with pytest.raises(ParameterError, match=msg) as exc:
            read_trace(f, 4)
        assert str(f) in str(exc.value) and ":" + str(text.count("\n")) in str(exc.value)


def test_exponential_trace_deterministic_and_consistent():
    a = simulate.exponential_trace(32, 3600.0, 600.0, 48 * 3600.0, np.random.default_rng(5))
    b = simulate.exponential_trace(32, 3600.0, 600.0, 48 * 3600.0, np.random.default_rng(5))
    assert a == b and len(a) > 100
    down: set[int] = set()
    for e in a:  # alternating fail/repair per device, in time order
        assert (e.device not in down) == (e.event == "fail")
        (down.add if e.event == "fail" else down.discard)(e.device)
    # the mean inter-failure time over all devices is about MTBF + MTTR (renewal process)
    n_fail = sum(e.event == "fail" for e in a)
    assert 0.7 < 32 * 48 * 3600 / n_fail / 4200.0 < 1.3


# ----------------------------------------------------------------------------- simulation accounting


def test_reroute_timeline_matches_hand_accounting(tmp_path):
    """One failure at 1 h, repaired at 2 h, 3 h simulated: the DES must give exactly
    r_ff*3600 - lost + r_rr*(3600 - failover) + r_ff*(3600 - rejoin)."""
    prof = write_profile(tmp_path)
    tr = tmp_path / "one.csv"
    tr.write_text("3600,0,fail\n7200,0,repair\n")
    sc = scenario("reroute", prof, failures=str(tr), horizon=3.0)
    pm, knobs = simulate.build(sc)
    sim = simulate.JobSimulation(pm, "reroute", read_trace(tr, pm.cluster.devices), 3 * 3600.0, knobs)
    out = sim.run()
    plan = sim.ff_plan
    B = pm.job.global_batch
    r_ff = B / plan.iteration_time
    holes = [0] * plan.pp
    holes[0] = 1  # device 0 is pipeline 0, stage 0
    r_rr = B / pm.reroute_time(plan, holes)
    lost = math.fmod(r_ff * 3600, B)
    rejoin = knobs.failover_time + pm.transfer_time(pm.state_bytes(plan.bounds, 0))
    expect = r_ff * 3600 - lost + r_rr * (3600 - knobs.failover_time) + r_ff * (3600 - rejoin)
    assert out["average_throughput"] * 3 * 3600 == pytest.approx(expect, rel=1e-12)
    assert [e["policy"] for e in out["events"]] == ["reroute", "rejoin"]
    assert out["time_lost_per_failure"] == pytest.approx(knobs.failover_time + lost / r_ff)
    # while degraded (after recovery, before the repair), the rerouted rate relative to failure-free
    assert out["post_recovery_relative"] == pytest.approx(r_rr / r_ff)
    json.dumps(out["timeline"]), json.dumps(out["events"])


def test_checkpoint_restart_loses_work_since_checkpoint(tmp_path):
    prof = write_profile(tmp_path)
    tr = tmp_path / "one.csv"
    tr.write_text("5000,2,fail\n")
    sc = scenario("checkpoint-restart", prof, failures=str(tr), horizon=3.0)
    pm, knobs = simulate.build(sc)
    sim = simulate.JobSimulation(pm, "checkpoint-restart", read_trace(tr, pm.cluster.devices), 3 * 3600.0, knobs)
    out = sim.run()
    # Daly interval from the cluster MTBF (96 h / 8 devices) and delta = 16 B x params / 20 GB/s
    delta = 16 * pm.job.total_params / 20e9
    assert out["checkpoint_time"] == pytest.approx(delta)
    assert out["checkpoint_interval"] == pytest.approx(daly_interval(delta, 96 * 3600 / 8))
    ev = out["events"][0]
    assert ev["policy"] == "restart" and ev["cost_s"] == pytest.approx(300.0)
    # cycles of tau running then delta writing; work lost = running time since the last
    # checkpoint (none if the failure hits while a checkpoint is being written)
    tau = out["checkpoint_interval"]
    r = 5000.0 - (5000.0 // (tau + delta)) * (tau + delta)
    assert ev["lost_s"] == pytest.approx(r if r <= tau else 0.0, rel=1e-9, abs=1e-9)
    assert out["checkpoints"] == int(5000.0 // (tau + delta)) + int((3 * 3600 - 5000 - 300.0) // (tau + delta))


def test_simulation_deterministic_and_adaptive_choices(tmp_path):
    prof = write_profile(tmp_path, mtbf="24 h")
    a = TECHNIQUE.evaluate(scenario("odyssey", prof, seed=3, horizon=24.0))
    b = TECHNIQUE.evaluate(scenario("odyssey", prof, seed=3, horizon=24.0))
    assert {k: m.value for k, m in a.metrics.items()} == {k: m.value for k, m in b.metrics.items()}
    assert a["failures"] > 0
    assert set(a.artifacts["choices"]) <= {"reroute", "replan", "none", "stall"}
    t = [p[0] for p in a.artifacts["timeline"]]
    assert t == sorted(t)
    assert 0 < a["relative_throughput"] <= 1.0
    json.dumps(a.artifacts)


def test_redundant_needs_double_state(tmp_path):
    # 8 devices of 20 GB; ~6.6e9 params x 16 B = 105 GB of state: ~13 GB per device on 8 stages
    # fits, twice that (the redundant replica) does not
    prof = write_profile(tmp_path, memory="20 GB")
    sc = scenario("redundant", prof, layers=8, hidden=8192, failures="none")
    with pytest.raises(ParameterError, match="twice the model state"):
        TECHNIQUE.evaluate(sc)
    TECHNIQUE.evaluate(scenario("replan", prof, layers=8, hidden=8192, failures="none"))


# ----------------------------------------------------------------------------- execute fidelity


KW = dict(dp=2, pp=3, iterations=5, microbatches=6, mb_samples=4, seed=0)


def test_failure_free_equals_dense_oracle():
    ref = execute.train(None, **KW)
    dense = execute.dense_train(ref["params0"], ref["X"], ref["Y"], ref["batches"])
    assert execute.max_abs_diff(ref["params"], dense) < 1e-12
    assert ref["violations"] == 0 and ref["divergence"] == 0.0
    # training really moved the parameters
    assert execute.max_abs_diff(ref["params"], ref["params0"]) > 1e-3


@pytest.mark.parametrize("policy", ["checkpoint-restart", "redundant", "replan", "reroute", "odyssey"])
@pytest.mark.parametrize("kill", [(1, 0, 1, 1), (2, 1, 0, 0), (3, 1, 2, 2)])
def test_every_policy_recovers_to_failure_free_parameters(policy, kill):
    ref = execute.train(None, **KW)
    got = execute.train(policy, kill=kill, **KW)
    assert got["violations"] == 0
    assert got["divergence"] == 0.0
    assert execute.max_abs_diff(got["params"], ref["params"]) < 1e-12
    if policy == "replan":
        assert got["plan"] != (2, 3)
    if policy in ("reroute", "redundant", "checkpoint-restart"):
        assert got["plan"] == (2, 3)


def test_broken_recovery_is_caught(monkeypatch):
    """A recovery that forgets to discard the failed pipeline's partial gradients duplicates
    micro-batches: the contribution ledger and the parameters both show it."""
    ref = execute.train(None, **KW)
    monkeypatch.setattr(execute._Job, "reset_all", lambda self, wids=None: None)
    got = execute.train("reroute", kill=(1, 0, 1, 2), **KW)
    assert got["violations"] > 0
    assert execute.max_abs_diff(got["params"], ref["params"]) > 1e-8


def test_execute_errors():
    with pytest.raises(ParameterError, match="reroute needs exec_dp >= 2"):
        execute.train("reroute", kill=(0, 0, 1, 0), **{**KW, "dp": 1})
    with pytest.raises(ParameterError, match="exec_pp"):
        execute.train(None, **{**KW, "pp": 6})
    with pytest.raises(ParameterError, match="outside"):
        execute.train("reroute", kill=(0, 2, 0, 0), **KW)
    # with one pipeline, redundant computation still recovers (the predecessor's replica)
    ref = execute.train(None, **{**KW, "dp": 1})
    got = execute.train("redundant", kill=(1, 0, 2, 1), **{**KW, "dp": 1})
    assert execute.max_abs_diff(got["params"], ref["params"]) < 1e-12


def test_execute_evaluate_metrics():
    case = resolve_case(TECHNIQUE, TECHNIQUE.smoke[2])
    r = TECHNIQUE.evaluate(Scenario(**{**case.scenario.__dict__, "variant": "reroute"}))
    assert r["recovery_error"] < 1e-12 and r["oracle_error"] < 1e-12 and r["microbatch_violations"] == 0
    assert r["bytes_sent"] == r["bytes_received"] > 0
    assert len(r.metrics["wall_time"].samples) == 3
    assert r.artifacts["policy_chosen"] == "reroute"


# ----------------------------------------------------------------------------- claims and conformance


def test_claims_resolve_and_derive():
    for c in CLAIMS:
        for spec in c.specs().values():
            case = resolve_case(TECHNIQUE, spec)
            assert case.profile == "ft-32dev" and case.workload == "llama2-7b"
        assert c.verified  # the abstract's numbers, read in the paper

    def res(v):
        return Result().add("average_throughput", v, "samples/s", "higher")

    fake = {}
    for s, (o, rp, rr) in enumerate([(10.0, 9.0, 8.0), (10.0, 8.0, 9.0), (10.0, 10.0, 10.0)]):
        fake[f"odyssey-s{s}"], fake[f"replan-s{s}"], fake[f"reroute-s{s}"] = res(o), res(rp), res(rr)
    assert max_ratio_vs_replan(fake) == pytest.approx(10 / 8)
    assert max_ratio_vs_reroute(fake) == pytest.approx(10 / 8)


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=3)
    assert "family:recovery-exact" in rep.passed and "family:bytes-conserved" in rep.passed


def test_a_trace_files_content_is_in_the_case_key_and_reaches_the_simulation(tmp_path, shared_context):
    """A tryout rewrote a trace from 1 to 4 failures and `suite run` served the stored 20.11 samples/s
    and failures=1 under the same key (the key held the path; simulate.py opened the file itself).
    `failures` is now a file input: its bytes are in the key and in the scenario."""
    from suite.runner import expand_entry

    trace = tmp_path / "trace.csv"
    entry = {"technique": "odyssey", "variants": ["odyssey"], "fidelities": ["simulate"],
             "params": {"failures": [str(trace)], "horizon": ["10"]}}

    def case():
        (c,) = expand_entry(entry, context=shared_context).cases
        return c

    trace.write_text("time,device,event\n3600,0,fail\n7200,0,repair\n")
    one = case()
    assert one.scenario.input("failures") == trace.read_bytes()
    trace.write_text("time,device,event\n" + "".join(f"{h * 3600},0,fail\n{h * 3600 + 1800},0,repair\n"
                                                     for h in (1, 3, 5, 7)))
    four = case()
    assert four.key != one.key
    assert TECHNIQUE.evaluate(four.scenario)["failures"] == 4.0  # the four fail lines, all before 10 h
    assert TECHNIQUE.evaluate(one.scenario)["failures"] == 1.0
    from suite.errors import SuiteError

    with pytest.raises(SuiteError, match=r"odyssey: parameter 'failures': expected a readable file, got 'no-such-trace.csv'"):
        expand_entry({**entry, "params": {"failures": ["no-such-trace.csv"]}}, context=shared_context).cases


def test_oobleck_claim_flips_at_its_declared_batch_and_replan_time():
    """Audit 11b B16: the vs-Oobleck claim rested only on 'no flip found' (MTBF); the batch and Oobleck's
    re-plan time its reason names flip it: global batch 32 gives 1.229x, inside [1.183, 1.275] (48: 1.139x),
    and a re-plan of 1300 s 1.193x (1200 s: 1.176x)."""
    import dataclasses

    from suite.testing import resolve_case
    from suite_odyssey.technique import TECHNIQUE

    c = {c.id: c for c in TECHNIQUE.claims}["avg-throughput-vs-oobleck"]

    def ratio(**params):
        specs = {k: dataclasses.replace(s, params={**s.params, **params}) for k, s in c.specs().items()}
        return c.value({k: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for k, s in specs.items()})

    assert ratio(global_batch=32) == pytest.approx(1.229, abs=1e-3) and c.expect.check(ratio(global_batch=32))
    assert not c.expect.check(ratio(global_batch=48))
    assert c.expect.check(ratio(reconfigure_time=1300.0)) and not c.expect.check(ratio(reconfigure_time=1200.0))
    assert [a.flip_at for a in c.assumptions[1:]] == [32, "about 1,250 s"]


@pytest.mark.parametrize("param, before, past", [("global_batch", 48, 32), ("reconfigure_time", 1200.0, 1300.0)])
def test_oobleck_flips_lead_to_no_evidence(param, before, past):
    """Audit 14 #5: each declared flip bracketed through the scoreboard's judge. Before it (a global batch of
    48, a re-plan of 1,200 s; and at the declared 512 and 60 s) ours is under 1.229x +- 20% of the gain, by
    hand [1 + 0.229 x 0.8, 1 + 0.229 x 1.2] = [1.1832, 1.2748]; past it (32, 1,300 s) it is inside, but the
    nulls are "no gain" and Oobleck in Odyssey's place (the baseline against itself, 1.0), both excluded
    by the gain band: the flip leads to "reproduced (no null)", which the assumptions say (flips_to)."""
    from claim_verdict import verdict_at, with_params

    c = next(c for c in TECHNIQUE.claims if c.id == "avg-throughput-vs-oobleck")
    assert c.expect.band() == pytest.approx((1 + 0.229 * 0.8, 1 + 0.229 * 1.2), rel=1e-12)
    a = next(a for a in c.assumptions if a.name.endswith(f"({param})"))
    assert a.flips_to == "reproduced (no null)"
    assert verdict_at(TECHNIQUE, c)[0] == "not reproduced"
    got, ours = verdict_at(TECHNIQUE, c, spec_edit=with_params(**{param: before}))
    assert got == "not reproduced" and ours < c.expect.band()[0]
    got, ours = verdict_at(TECHNIQUE, c, spec_edit=with_params(**{param: past}))
    assert got == "reproduced (no null)" and c.expect.check(ours)


@pytest.mark.parametrize("claim, flip, kept, flipped", [
    # by hand: the bound is 0.89 as stated; ours at 50 h is 0.89000 >= 0.89 (the ideal 31/32 = 0.969 and both
    # baselines inside too: not discriminating), at 49.5 h 0.8894 < 0.89
    ("post-recovery-gap-32dev", "50 h", ("not discriminating", 50.0, 0.8900), ("not reproduced", 49.5)),
    # the gain band [1 + 0.355 x 0.8, 1 + 0.355 x 1.2] = [1.284, 1.426]: 3.485 h gives 1.036x (under it),
    # 3.48 h 1.355x (inside); the nulls ("no gain", ReCycle for Odyssey: 1.0) are outside by construction
    ("avg-throughput-vs-recycle", "about 3.48 h", ("not reproduced", 3.485, 1.036), ("reproduced (no null)", 3.48)),
])
def test_mtbf_flips_where_each_claim_declares(claim, flip, kept, flipped):
    """Audit reader15 #1: the three claims shared one MTBF assumption saying no MTBF flips them, but
    post-recovery is not reproduced below 50 h (0.8887 at 48 h) and vs-ReCycle is reproduced (no null)
    at 3.465-3.48 h and at values below. Each claim now declares its own MTBF flip, bracketed here through the
    scoreboard's judge: at 96 h and on the 96 h side of the flip the claim's own verdict, past it *flips_to*."""
    from claim_verdict import verdict_at, with_params

    c = next(c for c in TECHNIQUE.claims if c.id == claim)
    (a,) = [a for a in c.assumptions if a.name == "device MTBF (device_mtbf)"]
    assert (a.value, a.flip_at, a.flips_to) == ("96 h", flip, flipped[0])
    assert verdict_at(TECHNIQUE, c)[0] == kept[0]  # the claims' 96 h
    got, ours = verdict_at(TECHNIQUE, c, spec_edit=with_params(device_mtbf=kept[1]))
    assert got == kept[0] and ours == pytest.approx(kept[2], abs=5e-4)
    assert verdict_at(TECHNIQUE, c, spec_edit=with_params(device_mtbf=flipped[1]))[0] == flipped[0]


def test_oobleck_mtbf_declares_no_flip():
    """The vs-Oobleck claim's MTBF: no value swept (0.5-96 h) puts ours in [1.183, 1.275]; its ends at 1 h and
    96 h stay under the band."""
    from claim_verdict import verdict_at, with_params

    c = next(c for c in TECHNIQUE.claims if c.id == "avg-throughput-vs-oobleck")
    (a,) = [a for a in c.assumptions if a.name == "device MTBF (device_mtbf)"]
    assert a.flip_at is None
    for h in (1.0, 96.0):
        got, ours = verdict_at(TECHNIQUE, c, spec_edit=with_params(device_mtbf=h))
        assert got == "not reproduced" and ours < c.expect.band()[0]
