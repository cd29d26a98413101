"""Tests of the cocod-sgd plugin: round times by hand, the model's inputs by hand, the issue's
properties (merge identity, reduction to plain SGD, round-time ordering), execute vs oracles,
claims resolve, and the conformance kit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.collectives.dataparallel import Clock, FlatModel, Problem, Workers, load_problem
from suite.testing import resolve_case
from suite.technique import ScenarioSpec
from suite.testing import check_technique
from suite_cocodsgd import execute, model
from suite_cocodsgd.technique import TECHNIQUE


def _eval(variant, fidelity="model", workload=None, **params):
    spec = ScenarioSpec(variant=variant, profile="gtx1080ti-6x3-ib56",
                        workload=workload or ("resnet-18-cifar" if fidelity == "model" else "digits"),
                        params=params, fidelity=fidelity)
    return TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario)


# --------------------------------------------------------------------------- model


def test_round_time_by_hand():
    assert model.round_time("s-sgd", 4, 2.0, 1.0) == 12.0
    assert model.round_time("local-sgd", 4, 2.0, 1.0) == 9.0
    assert model.round_time("pipe-sgd", 4, 2.0, 1.0) == 8.0
    assert model.round_time("cocod-sgd", 4, 2.0, 1.0) == 8.0
    assert model.round_time("cocod-sgd", 4, 2.0, 10.0) == 10.0
    assert model.round_time("pipe-sgd", 4, 2.0, 10.0) == 40.0
    with pytest.raises(ValueError):
        model.round_time("nope", 1, 1.0, 1.0)
    with pytest.raises(ValueError):
        model.round_time("s-sgd", 0, 1.0, 1.0)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 64), st.floats(0.0, 10.0), st.floats(0.0, 10.0))
def test_round_time_ordering(k, t_c, t_ar):
    r = {v: model.round_time(v, k, t_c, t_ar) for v in model.VARIANTS}
    eps = 1e-12 * (1 + r["s-sgd"])
    assert max(k * t_c, t_ar) <= r["cocod-sgd"] + eps
    assert r["cocod-sgd"] <= r["local-sgd"] + eps <= r["s-sgd"] + 2 * eps
    assert r["cocod-sgd"] <= r["pipe-sgd"] + eps <= r["s-sgd"] + 2 * eps


def test_model_values_by_hand_resnet18_cifar():
    from session_context import session_context

    wl = session_context().workload("resnet-18-cifar")
    r = _eval("cocod-sgd", workers=16, hetero=1.0)
    t_c = 128 * 3 * wl.fwd_flops / (0.5 * 11.34e12)
    # ring over 16 workers, slowest hop the 7 GB/s IB; reduction 15/16 m x 3 / (484 GB/s)
    t_ar = 2 * 15 * 1e-6 + 2 * 15 / 16 * wl.params * 4 / 7e9 + 15 / 16 * wl.params * 4 * 3 / 484e9
    assert r["compute_time"] == pytest.approx(t_c, rel=1e-9)
    assert r["allreduce_time"] == pytest.approx(t_ar, rel=1e-9)
    assert r["round_time"] == pytest.approx(max(4 * t_c, t_ar), rel=1e-9)
    assert r["speedup"] == pytest.approx(4 * (t_c + t_ar) / max(4 * t_c, t_ar), rel=1e-9)
    assert r["time_to_target"] == pytest.approx(200 * max(4 * t_c, t_ar) / 4, rel=1e-9)
    base = _eval("s-sgd", workers=16, hetero=1.0)
    assert base["speedup"] == pytest.approx(1.0) and base["round_time"] == pytest.approx(4 * (t_c + t_ar))


def test_model_heterogeneous_proportional_sampling():
    # speeds 1 .. 3 over 4 workers: sync variants wait for s=3; CoCoD's time is K b t0 / sum(1/s)
    r = _eval("cocod-sgd", workers=4, hetero=3.0)
    s = _eval("s-sgd", workers=4, hetero=3.0)
    t0 = s["compute_time"] / (128 * 3.0)
    speeds = np.linspace(1, 3, 4)
    assert r["compute_time"] == pytest.approx(4 * 128 * t0 / np.sum(1 / speeds), rel=1e-9)
    assert r["compute_time"] < s["compute_time"]


def test_model_steps_ratio_scales_time_to_target():
    a = _eval("local-sgd", workers=16, steps_ratio=1.0)
    b = _eval("local-sgd", workers=16, steps_ratio=2.0)
    assert b["time_to_target"] == pytest.approx(2 * a["time_to_target"])
    assert b["speedup"] == pytest.approx(a["speedup"] / 2)


def test_model_skips_without_layer_table():
    from suite.technique import Skip

    with pytest.raises(Skip):
        _eval("cocod-sgd", workload="digits")


# --------------------------------------------------------------------------- execute


SMALL = dict(workers=3, steps=12, batch=8, k=3, lr=0.1, hetero=2.0, split="dirichlet", alpha=0.5, hidden=0,
             efficiency=0.5, dtype="fp32", algorithm="ring", clock_workload="")


def _setup(variant, **over):
    p = dict(SMALL)
    p.update(over)
    return execute.setup(variant, p, None, 0)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.floats(1.0, 4.0), st.integers(0, 100))
def test_merge_identity(K, k, hetero, seed):
    p = dict(SMALL, workers=K, k=k, hetero=hetero, steps=2 * k)
    s = execute.setup("cocod-sgd", p, None, seed)
    w = s.workers
    # one round by hand, checking the merge on the real arrays
    anchors = [x.copy() for x in w.params]
    for _ in range(k):
        for i in range(K):
            w.params[i] = w.params[i] - s.lr * w.gradient(i)
    xbar = w.allreduce_mean(anchors)
    deltas = [w.params[i] - anchors[i] for i in range(K)]
    merged = [xbar[i] + deltas[i] for i in range(K)]
    lhs = np.sum([w.weights[i] * merged[i] for i in range(K)], axis=0)
    rhs = np.sum([w.weights[i] * anchors[i] for i in range(K)], axis=0) + \
        np.sum([w.weights[i] * deltas[i] for i in range(K)], axis=0)
    assert np.allclose(lhs, rhs, rtol=0, atol=1e-10)
    # and the implementation's own check over two rounds
    extra = execute.run(execute.setup("cocod-sgd", p, None, seed))
    assert extra["merge_error"] <= 1e-10


def _plain_sgd(problem, batches_rng_seed, b, lr, T, model, shard):
    rng = np.random.default_rng(batches_rng_seed)
    theta = model.init(np.random.default_rng(0))
    for _ in range(T):
        idx = rng.choice(shard, size=b, replace=False)
        _, g = model.loss_grad(theta, problem.X_train[idx], problem.y_train[idx])
        theta = theta - lr * g
    return theta


@pytest.mark.parametrize("variant", model.VARIANTS)
def test_one_worker_is_plain_sgd(variant):
    s = _setup(variant, workers=1, hetero=1.0)
    execute.run(s)
    w = s.workers
    ref = _plain_sgd(w.problem, [0, 0], 8, 0.1, 12, w.model, w.problem.shards[0])
    assert np.allclose(w.params[0], ref, rtol=0, atol=1e-12)


def _identical_workers(K=3, b=8):
    base = load_problem(1, "iid", seed=0)
    shard = base.shards[0]
    prob = Problem(base.X_train, base.y_train, base.X_test, base.y_test, tuple(shard for _ in range(K)),
                   base.classes)
    w = Workers(prob, FlatModel(prob.d, prob.classes), [b] * K, Clock(np.ones(K), 1.0), 0)
    w._rngs = [np.random.default_rng(7) for _ in range(K)]  # identical data streams
    return w, shard


@pytest.mark.parametrize("variant", ["s-sgd", "local-sgd", "cocod-sgd"])
def test_identical_workers_reduce_to_plain_sgd(variant):
    w, shard = _identical_workers()
    s = execute.Setup(variant, w, 12, 3, 0.1)
    execute.run(s)
    ref = _plain_sgd(w.problem, 7, 8, 0.1, 12, w.model, shard)
    for p in w.params:
        assert np.allclose(p, ref, rtol=0, atol=1e-12)


def test_identical_workers_pipe_sgd_is_delayed_sgd():
    w, shard = _identical_workers()
    execute.run(execute.Setup("pipe-sgd", w, 12, 3, 0.1))
    rng = np.random.default_rng(7)
    theta = w.model.init(np.random.default_rng(0))
    pending = None
    for _ in range(12):
        idx = rng.choice(shard, size=8, replace=False)
        _, g = w.model.loss_grad(theta, w.problem.X_train[idx], w.problem.y_train[idx])
        if pending is not None:
            theta = theta - 0.1 * pending
        pending = g
    theta = theta - 0.1 * pending
    assert np.allclose(w.params[0], theta, rtol=0, atol=1e-12)


def test_ssgd_equals_dense_sgd_on_union_batches():
    s = _setup("s-sgd", hetero=1.0)
    execute.run(s)
    ref = execute.run_dense_sgd(_setup("s-sgd", hetero=1.0))
    assert np.allclose(s.workers.params[0], ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("variant,expected", [("s-sgd", 12), ("pipe-sgd", 12), ("local-sgd", 4), ("cocod-sgd", 4)])
def test_allreduce_and_gradient_counts(variant, expected):
    s = _setup(variant)
    execute.run(s)
    assert s.workers.allreduces == expected
    assert s.workers.grad_evals == 12 * 3


def test_replicas_identical_after_local_sgd_sync():
    s = _setup("local-sgd", steps=6, k=3)
    execute.run(s)
    assert s.workers.identical()


def test_execute_clock_matches_round_formulas():
    for v in model.VARIANTS:
        s = _setup(v, steps=12, k=3)
        c = s.workers.clock
        execute.run(s)
        k, rounds, tc, tar = 3, 4, c.slowest, c.allreduce
        expect = {"s-sgd": 12 * (tc + tar), "local-sgd": rounds * (k * tc + tar),
                  "pipe-sgd": 12 * max(tc, tar) + tar, "cocod-sgd": rounds * max(k * tc, tar)}[v]
        assert s.workers.time == pytest.approx(expect, rel=1e-9), v


def test_execute_result_and_curves():
    r = _eval("cocod-sgd", fidelity="execute", workers=4, steps=40, batch=16, k=4)
    curve = r.artifacts["curve"]
    assert curve["step"][0] == 0 and curve["step"][-1] == 40
    assert all(b >= a for a, b in zip(curve["time"], curve["time"][1:]))
    assert r["allreduces"] == 10 and r["grad_evals"] == 160
    assert r["bytes_sent"] == r["bytes_received"] > 0
    assert r["oracle_error"] <= 1e-10
    assert r["final_loss"] < curve["loss"][0]  # it learns
    assert sum(r.artifacts["batches"]) == 64
    # proportional sampling: the slower workers get smaller batches
    assert r.artifacts["batches"] == sorted(r.artifacts["batches"], reverse=True)


def test_cocod_iid_loss_close_to_ssgd():
    """On an IID split at equal iterations, CoCoD-SGD's loss stays within 10% of S-SGD's (its mean
    follows Local-SGD's update; parity on the toy model)."""
    kw = dict(fidelity="execute", workers=4, steps=120, batch=16, k=4, split="iid", hetero=1.0)
    a, b = _eval("cocod-sgd", **kw), _eval("s-sgd", **kw)
    assert a["final_loss"] <= 1.10 * b["final_loss"]
    assert a["final_accuracy"] >= b["final_accuracy"] - 0.03


def test_clock_workload_uses_layer_table_times():
    from session_context import session_context

    r = _eval("s-sgd", fidelity="execute", workers=4, steps=2, batch=16, hetero=1.0,
              clock_workload="resnet-18-cifar")
    wl = session_context().workload("resnet-18-cifar")
    t_c = 16 * 3 * wl.fwd_flops / (0.5 * 11.34e12)
    # 4 workers span 2 nodes: flat ring over IB, reduction on 3/4 m at 3 / (484 GB/s)
    t_ar = 2 * 3 * 1e-6 + 2 * 3 / 4 * wl.params * 4 / 7e9 + 3 / 4 * wl.params * 4 * 3 / 484e9
    assert r["sim_time"] == pytest.approx(2 * (t_c + t_ar), rel=1e-12)


# --------------------------------------------------------------------------- claims and kit


def _hand_times(workload: str) -> tuple[float, float]:
    """t_c and t_AR of the claims' setting, by hand: 128 samples x 3 x forward FLOPs at half the
    GTX 1080 Ti's 11.34 TFLOP/s; ring all-reduce of the fp32 model over 16 workers whose ring crosses
    the 56 Gb/s (7 GB/s) InfiniBand, latency 1 us per step: 2 (P - 1) a + 2 (P - 1) / P x n / B
    (Patarasuk & Yuan 2009), plus the reduction of (P - 1) / P x n bytes at 3 / (484 GB/s) s/B."""
    from session_context import session_context

    wl = session_context().workload(workload)
    t_c = 128 * 3 * wl.fwd_flops / (0.5 * 11.34e12)
    t_ar = 2 * 15 * 1e-6 + 2 * 15 / 16 * wl.params * 4 / 7e9 + 15 / 16 * wl.params * 4 * 3 / 484e9
    return t_c, t_ar


@pytest.mark.parametrize("workload", ["resnet-18-cifar", "vgg16-cifar"])
def test_claim_speedup_by_hand_from_the_round_times(workload):
    """Speed-up over S-SGD = k (t_c + t_AR) / max(k t_c, t_AR) (Fig. 1: S-SGD computes and
    communicates in sequence every iteration; CoCoD-SGD overlaps one all-reduce with k local steps),
    k = 4, from hand-computed t_c and t_AR, and the verdict's inputs: the band [1.8, 3.4] and the
    Local-SGD null k (t_c + t_AR) / (k t_c + t_AR)."""
    claims = {c.id: c for c in TECHNIQUE.claims}
    c = claims[f"{workload}-16x1080ti-speedup"]
    t_c, t_ar = _hand_times(workload)
    want = 4 * (t_c + t_ar) / max(4 * t_c, t_ar)
    res = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario) for lab, spec in c.specs().items()}
    assert c.value(res) == pytest.approx(want, rel=1e-6)
    assert (c.expect.low, c.expect.high) == (1.8, 3.4)
    assert not c.expect.check(want)  # the model's value is outside the band: not reproduced
    local = 4 * (t_c + t_ar) / (4 * t_c + t_ar)
    assert 1.0 < local < want  # Local SGD gains too, less


def test_faster_than_ssgd_is_not_discriminating_by_construction():
    """max(k t_c, t_AR) <= k t_c + t_AR <= k (t_c + t_AR) for every input: Local SGD, which does not
    decouple, is faster than S-SGD by more than the 2% margin too, so its null is inside the band."""
    c = {c.id: c for c in TECHNIQUE.claims}["vgg16-cifar-16x1080ti-faster-than-ssgd"]
    t_c, t_ar = _hand_times("vgg16-cifar")
    ssgd, local, cocod = 4 * (t_c + t_ar), 4 * t_c + t_ar, max(4 * t_c, t_ar)
    assert c.expect.check({"cocod-sgd": cocod, "s-sgd": ssgd})
    assert c.expect.check({"cocod-sgd": local, "s-sgd": ssgd})  # the Local-SGD null: inside
    assert not c.expect.check({"cocod-sgd": ssgd, "s-sgd": ssgd})  # the S-SGD null: a tie fails
    assert [n.variants for n in c.nulls] == [{"cocod-sgd": "s-sgd"}, {"cocod-sgd": "local-sgd"},
                                             {"cocod-sgd": "pipe-sgd"}]


def test_conformance_kit():
    rep = check_technique(TECHNIQUE, max_examples=3)
    assert rep.outcomes["family:sgd-envelope"] == "passed"
    assert rep.outcomes["family:bytes-conserved"] == "passed"
    assert rep.outcomes["properties"] == "passed"


def test_declared_properties_on_the_shipped_profile():
    scen = resolve_case(TECHNIQUE, TECHNIQUE.smoke[0]).scenario
    for prop in TECHNIQUE.properties:
        prop.check(TECHNIQUE, dataclasses.replace(scen, variant="cocod-sgd"))


@pytest.mark.parametrize("cid, param, at, past", [
    ("resnet-18-cifar-16x1080ti-speedup", "batch", 26, 27), ("vgg16-cifar-16x1080ti-speedup", "batch", 60, 61),
    ("resnet-18-cifar-16x1080ti-speedup", "steps_ratio", 0.645, 0.646),
    ("vgg16-cifar-16x1080ti-speedup", "steps_ratio", 0.766, 0.767)])
def test_speedup_claims_flip_where_declared_to_not_discriminating(cid, param, at, past):
    """Audit 11b B13 / researcher 13 F4, F5: the batch per GPU and steps_ratio each decide both speed-up
    claims. Bracketed through the scoreboard's judge: one step before the declared flip (a batch of 27 or 61,
    steps_ratio 0.646 or 0.767) ours is under [1.8, 3.4] (not reproduced, as at the declared 128 and 1); at
    the declared value it is inside, and the Pipe-SGD null with it (the same speed-up: Pipe-SGD's step equals
    CoCoD-SGD's there), so the flip leads to *not discriminating*, as flips_to says. Local steps k decides
    nothing at batch 128 (k = 1 and 64 give the same) and is not declared."""
    from claim_verdict import verdict_at, with_params

    c = {c.id: c for c in TECHNIQUE.claims}[cid]
    assert [a.name for a in c.assumptions] == ["batch per GPU", "iterations to target / S-SGD's (steps_ratio)"]
    a = c.assumptions[0 if param == "batch" else 1]
    assert (a.flip_at, a.flips_to) == (at, "not discriminating")
    assert c.expect.band() == (1.8, 3.4)
    past_verdict, ours_past = verdict_at(TECHNIQUE, c, spec_edit=with_params(**{param: past}))
    assert past_verdict == "not reproduced" and ours_past < 1.8
    assert verdict_at(TECHNIQUE, c)[0] == "not reproduced"
    verdict, ours = verdict_at(TECHNIQUE, c, spec_edit=with_params(**{param: at}))
    assert verdict == "not discriminating" and 1.8 <= ours <= 3.4

    def speedup(variant, **params):
        s = dataclasses.replace(c.scenario, variant=variant, params={**c.scenario.params, **params})
        return TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario)["speedup"]

    assert speedup("pipe-sgd", **{param: at}) == pytest.approx(ours, rel=1e-12)
    assert speedup("cocod-sgd", k=1) == pytest.approx(speedup("cocod-sgd", k=64), rel=1e-12)
