"""Tests of suite.collectives.dataparallel: data split, model gradients, proportional sampling,
the clock's cost model by hand, and the workers' all-reduce against the dense oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from suite.collectives.dataparallel import (
    Clock,
    FlatModel,
    Workers,
    allreduce_seconds,
    clock_for,
    compute_seconds,
    load_problem,
    proportional_batches,
    relative_speeds,
    virtual_node_split,
)
from suite.errors import ParameterError, ProfileError
from session_context import session_context


@pytest.fixture(scope="module")
def gtx():
    return session_context().profile("gtx1080ti-6x3-ib56")


def test_problem_split_covers_train_and_is_standardised():
    p = load_problem(5, "dirichlet", alpha=0.3, seed=1)
    assert p.X_train.shape[0] + p.X_test.shape[0] == 1797 and p.d == 64 and p.classes == 10
    allidx = np.concatenate(p.shards)
    assert sorted(allidx.tolist()) == list(range(len(p.y_train)))  # disjoint and covering
    assert np.allclose(p.X_train.mean(axis=0), 0.0, atol=1e-12)
    assert min(len(s) for s in p.shards) >= 8
    # label skew: a Dirichlet(0.3) split is far from IID (some worker lacks at least one class)
    counts = np.stack([np.bincount(p.y_train[s], minlength=10) for s in p.shards])
    assert (counts == 0).any()
    iid = load_problem(5, "iid", seed=1)
    assert max(len(s) for s in iid.shards) - min(len(s) for s in iid.shards) <= 1


def test_problem_errors():
    with pytest.raises(ParameterError, match="split"):
        load_problem(2, "weird")
    with pytest.raises(ParameterError, match="workers"):
        load_problem(0)
    with pytest.raises(ParameterError, match="workers must be <= 1438"):
        load_problem(5000)


@pytest.mark.parametrize("hidden", [0, 7])
def test_gradient_matches_finite_differences(hidden):
    rng = np.random.default_rng(0)
    m = FlatModel(d=5, k=3, hidden=hidden, l2=0.1)
    theta = rng.normal(size=m.size) * 0.5
    X, y = rng.normal(size=(11, 5)), rng.integers(0, 3, 11)
    loss, g = m.loss_grad(theta, X, y)
    assert loss == pytest.approx(m.loss_acc(theta, X, y)[0], rel=1e-12)
    num = np.empty_like(theta)
    for j in range(m.size):
        e = np.zeros_like(theta)
        e[j] = 1e-6
        num[j] = (m.loss_acc(theta + e, X, y)[0] - m.loss_acc(theta - e, X, y)[0]) / 2e-6
    assert np.allclose(g, num, atol=1e-7)


def test_flops_per_sample_by_hand():
    assert FlatModel(64, 10).flops_per_sample == 3 * 2 * 640
    assert FlatModel(64, 10, hidden=32).flops_per_sample == 3 * 2 * (64 * 32 + 32 * 10)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(1.0, 8.0), min_size=1, max_size=8), st.integers(0, 200))
@example([1.0, 4.0, 5.0, 5.0], 1)
def test_proportional_batches(speeds, extra):
    total = len(speeds) + extra
    b = proportional_batches(total, speeds)
    assert b.sum() == total and (b >= 1).all()
    ideal = total * (1 / np.array(speeds)) / np.sum(1 / np.array(speeds))
    # largest remainders: every batch within one sample of its ideal share, except that the
    # samples given to slow workers raised to the minimum of 1 come out of the others' floors:
    # the trim is at most deficit = sum(max(0, 1 - ideal)) (speeds 1, 4, 5, 5 and 5 samples:
    # ideal 3.03, 0.76, 0.61, 0.61, deficit 1.02, batches 2, 1, 1, 1)
    deficit = np.sum(np.maximum(0.0, 1.0 - ideal))
    assert np.all(np.abs(b - ideal) < 1 + deficit + 1e-9)
    assert np.all(b <= np.maximum(np.ceil(ideal - 1e-9), 1))


def test_proportional_batches_raising_slow_workers_takes_from_the_fast_one():
    # ideal shares of 5 samples at speeds 1, 4, 5, 5: 3.03, 0.76, 0.61, 0.61; the three slow
    # workers get their minimum of 1, so the fast one keeps 5 - 3 = 2 (found by hypothesis)
    assert proportional_batches(5, [1.0, 4.0, 5.0, 5.0]).tolist() == [2, 1, 1, 1]


def test_proportional_batches_equal_finish_time():
    s = relative_speeds(4, 3.0)  # 1, 5/3, 7/3, 3
    b = proportional_batches(400, s)
    t = b * s
    assert t.max() - t.min() <= s.max() + 1e-12  # equal within one sample of the slowest
    with pytest.raises(ParameterError):
        proportional_batches(2, s)


def test_allreduce_seconds_by_hand(gtx):
    m = 44_695_848.0
    gam = 3 / 484e9  # reduction: read two operands, write one, at the 1080 Ti's 484 GB/s
    # 16 workers span nodes: flat ring whose slowest hop is the inter-node one, 56 Gbit/s =
    # 7e9 B/s, alpha 1 us (PCIe hops: 2 us + m/16 / 15.75 GB/s, faster); reduction on 15/16 m
    assert allreduce_seconds(gtx, m, 16) == pytest.approx(
        2 * 15 * 1e-6 + 2 * 15 / 16 * m / 7e9 + 15 / 16 * m * gam, rel=1e-9)
    # 3 workers fit in one node: PCIe 3.0 ring (15.75 GB/s, 2 us)
    assert allreduce_seconds(gtx, m, 3) == pytest.approx(2 * 2 * 2e-6 + 2 * 2 / 3 * m / 15.75e9 + 2 / 3 * m * gam,
                                                         rel=1e-9)
    # hierarchical: RS in node + ring over 6 nodes of m/3 + AG in node; across nodes the 3 ranks
    # of a node share its one NIC (7e9 / 3 each)
    rs = (3 - 1) * 2e-6 + 2 / 3 * m / 15.75e9
    ar = 2 * 5 * 1e-6 + 2 * 5 / 6 * (m / 3) / (7e9 / 3)
    assert allreduce_seconds(gtx, m, 18, "hierarchical") == pytest.approx(
        2 * rs + ar + 2 / 3 * m * gam + 5 / 6 * (m / 3) * gam, rel=1e-9)
    assert allreduce_seconds(gtx, m, 1) == 0.0


def test_allreduce_seconds_needs_a_network():
    dev = session_context().profile("nvidia-gtx-1080-ti")
    with pytest.raises(ProfileError, match="no inter-node"):
        allreduce_seconds(dev, 1e6, 2)


def test_compute_and_clock_by_hand(gtx):
    assert compute_seconds(gtx, 11.34e12, 0.5) == pytest.approx(2.0)
    c = clock_for(gtx, 1e9, 4e6, [10, 20], [1.0, 2.0], efficiency=0.5)
    assert np.allclose(c.step, [10 * 1e9 / 5.67e12, 40 * 1e9 / 5.67e12])
    assert c.allreduce == pytest.approx(2 * 1 * 2e-6 + 1 * 4e6 / 15.75e9 + 0.5 * 4e6 * 3 / 484e9)
    assert c.slowest == pytest.approx(c.step[1])


def _workers(K=3, batches=None, seed=0):
    p = load_problem(K, "iid", seed=seed)
    b = batches or [4] * K
    return Workers(p, FlatModel(p.d, p.classes), b, Clock(np.ones(K), 0.5), seed)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 6), st.integers(0, 10_000))
def test_weighted_allreduce_equals_dense_oracle(K, seed):
    rng = np.random.default_rng(seed)
    w = _workers(K, batches=list(rng.integers(1, 9, K)))
    arrays = [rng.normal(size=w.model.size) for _ in range(K)]
    out = w.allreduce_mean(arrays)
    dense = np.sum([w.weights[i] * arrays[i] for i in range(K)], axis=0)
    assert all(np.array_equal(o, out[0]) for o in out)  # every replica bit-identical
    assert np.allclose(out[0], dense, rtol=0, atol=1e-12)
    assert w.allreduce_error <= 1e-12 and w.allreduces == 1
    # ring traffic: each worker sends 2(K-1) chunks, 2(K-1)/K of the bytes in total
    nbytes = arrays[0].nbytes
    assert w.ledger.total_bytes == pytest.approx(2 * (K - 1) * nbytes, rel=0, abs=2 * (K - 1) * 8 * K)


def test_workers_gradients_clock_and_record():
    w = _workers(2)
    assert w.identical() and math.isclose(w.weights.sum(), 1.0)
    g = w.gradient(0)
    assert g.shape == (w.model.size,) and w.grad_evals == 1
    w.advance(1.5)
    w.record(1)
    assert w.curve["time"] == [1.5] and w.curve["step"] == [1]
    assert 0.0 <= w.curve["accuracy"][0] <= 1.0
    with pytest.raises(ValueError):
        w.advance(-1)
    with pytest.raises(ParameterError):
        Workers(w.problem, w.model, [1], w.clock)


def test_minibatches_are_seeded_per_worker():
    a, b = _workers(2, seed=3), _workers(2, seed=3)
    assert np.array_equal(a.minibatch(1), b.minibatch(1))
    assert set(a.minibatch(0)) <= set(a.problem.shards[0].tolist())


# --------------------------------------------------------------------------- unequal / dummy batches,
# the global-count gradient, virtual nodes, resizing (HetSeq, VirtualFlow)


def _per_sample_sum_oracle(theta, X, y, d, k, l2):
    """Independent oracle for logistic regression: sum over samples of
    grad l_j = [x_j (p_j - e_yj)^T + l2 W ; p_j - e_yj], one sample at a time (no batching)."""
    W, b = theta[:d * k].reshape(d, k), theta[d * k:]
    gW, gb = np.zeros((d, k)), np.zeros(k)
    for x, c in zip(X, y):
        z = x @ W + b
        p = np.exp(z - z.max())
        p /= p.sum()
        p[c] -= 1.0
        gW += np.outer(x, p) + l2 * W
        gb += p
    return np.concatenate([gW.ravel(), gb])


def _hetero_workers(batches, seed=0, l2=0.01):
    p = load_problem(len(batches), "iid", seed=seed)
    return Workers(p, FlatModel(p.d, p.classes, l2=l2), batches, Clock(np.ones(len(batches)), 0.5), seed)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=6).filter(lambda b: sum(b) > 0), st.integers(0, 10_000))
def test_global_gradient_of_any_split_is_the_union_gradient(batches, seed):
    w = _hetero_workers(batches, seed)
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=w.model.size) * 0.1
    w.params = [theta.copy() for _ in range(w.K)]
    idx = [w.minibatch(i) for i in range(w.K)]
    assert [len(a) for a in idx] == list(batches)
    g = w.global_gradient(idx=idx)
    union = np.concatenate(idx)
    oracle = _per_sample_sum_oracle(theta, w.problem.X_train[union], w.problem.y_train[union],
                                    w.model.d, w.model.k, w.model.l2) / len(union)
    assert all(np.array_equal(gi, g[0]) for gi in g)  # every replica bit-identical
    assert np.max(np.abs(g[0] - oracle)) <= 1e-12
    assert w.allreduces == 1 and w.samples == sum(batches)  # ONE all-reduce per step
    assert w.grad_evals == sum(1 for b in batches if b > 0)  # dummy batches evaluate nothing


def test_dummy_batch_takes_part_in_the_ring_but_adds_no_samples():
    w = _hetero_workers([5, 0, 3])
    assert w.weights.tolist() == [5 / 8, 0.0, 3 / 8]
    assert len(w.minibatch(1)) == 0
    g, n = w.gradient_sum(1)
    assert n == 0 and not g.any()
    assert not w.gradient(1).any() and w.grad_evals == 0
    w.global_gradient()
    sent = w.ledger.sent_by()
    assert sent[1] > 0 and sent[1] == sent[0]  # the dummy rank still forwards its ring chunks
    # the count travels in the same all-reduce: 2(K-1) chunks of (size + 1) floats in total
    assert w.ledger.total_bytes == pytest.approx(2 * 2 * (w.model.size + 1) * 8, abs=2 * 2 * 8 * 3)
    with pytest.raises(ParameterError, match="batch size >= 0"):
        _hetero_workers([2, -1])
    with pytest.raises(ParameterError, match="at least one sample"):
        _hetero_workers([0, 0])


def test_mean_of_means_is_biased_by_unequal_batches():
    # hand case: two workers, batches 1 and 3. Union: (g_a + g_b + g_c + g_d) / 4;
    # DDP's mean of means: (g_a + (g_b + g_c + g_d) / 3) / 2, which weights sample a 1/2, not 1/4
    w = _hetero_workers([1, 3])
    theta = np.random.default_rng(1).normal(size=w.model.size) * 0.1
    w.params = [theta.copy(), theta.copy()]
    idx = [w.minibatch(0), w.minibatch(1)]
    X, y = w.problem.X_train, w.problem.y_train
    ga = _per_sample_sum_oracle(theta, X[idx[0]], y[idx[0]], w.model.d, w.model.k, w.model.l2)
    gbcd = _per_sample_sum_oracle(theta, X[idx[1]], y[idx[1]], w.model.d, w.model.k, w.model.l2)
    mom = w.mean_of_means(idx=idx)[0]
    assert np.allclose(mom, (ga + gbcd / 3) / 2, atol=1e-12)
    union = w.global_gradient(idx=idx)[0]
    assert np.allclose(union, (ga + gbcd) / 4, atol=1e-12)
    assert np.max(np.abs(mom - union)) > 1e-3  # the bias is not rounding
    # equal batches: the two agree
    e = _hetero_workers([3, 3])
    idx = [e.minibatch(0), e.minibatch(1)]
    assert np.allclose(e.mean_of_means(idx=idx)[0], e.global_gradient(idx=idx)[0], atol=1e-14)


@pytest.mark.parametrize("hidden", [0, 6])
def test_micro_batch_accumulation_equals_one_pass(hidden):
    p = load_problem(2, "iid", seed=2)
    w = Workers(p, FlatModel(p.d, p.classes, hidden, l2=0.05), [13, 7], Clock(np.ones(2), 0.0), 2)
    idx = [w.minibatch(0), w.minibatch(1)]
    one = w.global_gradient(idx=idx)[0]
    evals = w.grad_evals
    acc = w.global_gradient(idx=idx, micro=[4, 9])[0]  # 9 > 7: two micro-batches are empty
    assert w.grad_evals - evals == 4 + 7 and w.allreduces == 2
    assert np.max(np.abs(acc - one)) <= 1e-12 * max(1.0, np.max(np.abs(one)))
    # sum reduction = n x mean reduction; empty batches
    m, X, y = w.model, p.X_train[idx[0]], p.y_train[idx[0]]
    (ls, gs), (lm, gm) = m.loss_grad(w.params[0], X, y, "sum"), m.loss_grad(w.params[0], X, y)
    assert ls == pytest.approx(13 * lm, rel=1e-12) and np.allclose(gs, 13 * gm, atol=1e-12)
    assert m.loss_grad(w.params[0], X[:0], y[:0], "sum")[0] == 0.0
    with pytest.raises(ParameterError, match="empty batch"):
        m.loss_grad(w.params[0], X[:0], y[:0])
    with pytest.raises(ParameterError, match="micro"):
        w.gradient_sum(0, micro=0)


def test_virtual_nodes_spread_over_any_divisor_give_the_same_gradient():
    V, B = 8, 40
    ref = None
    for P in (1, 2, 4, 8):
        w = _hetero_workers([B // P] * P, seed=4)
        idx = np.random.default_rng(9).choice(len(w.problem.y_train), B, replace=False)
        parts = virtual_node_split(idx, V, [V // P] * P)
        assert [len(x) for x in parts] == [V // P] * P
        assert np.array_equal(np.concatenate([np.concatenate(x) for x in parts]), idx)
        g = w.global_gradient(idx=parts)[0]
        assert w.micro_batches == V and w.allreduces == 1
        ref = g if ref is None else ref
        assert np.max(np.abs(g - ref)) <= 1e-12
    # heterogeneous counts, a worker holding none (dummy)
    parts = virtual_node_split(np.arange(10), 4, [3, 0, 1])
    assert [len(x) for x in parts] == [3, 0, 1] and [len(a) for a in parts[0]] == [3, 3, 2]
    with pytest.raises(ParameterError, match=r"summing to virtual_nodes \(4\), got \[3, 0\]"):
        virtual_node_split(np.arange(10), 4, [3, 0])


def test_resize_keeps_the_trajectory_of_the_same_global_batches():
    B, V, lr, steps = 32, 8, 0.3, 6
    rng = np.random.default_rng(5)
    w0 = _hetero_workers([B], seed=5)
    batches = [rng.choice(len(w0.problem.y_train), B, replace=False) for _ in range(steps)]
    for t in range(steps):  # one process, the whole batch
        w0.sgd_step(lr, idx=[batches[t]])
    w = _hetero_workers([B // 4] * 4, seed=5)
    for t, P in enumerate([4, 4, 2, 2, 8, 8]):
        if P != w.K:
            w.resize([B // P] * P)
        w.sgd_step(lr, idx=virtual_node_split(batches[t], V, [V // P] * P))
        assert w.identical()
    assert w.resizes == 2 and w.allreduces == steps  # one all-reduce per step across resizes
    assert np.max(np.abs(w.params[0] - w0.params[0])) <= 1e-12
    assert w.problem.workers == 8 and sorted(np.concatenate(w.problem.shards).tolist()) == \
        list(range(len(w.problem.y_train)))
    w.params[1] = w.params[1] + 1.0
    with pytest.raises(ParameterError, match="replicas differ"):
        w.resize([4, 4])


def test_proportional_batches_minimum_zero_and_caps():
    # caps (memory): speeds 1, 1, 4 -> ideal shares 40, 40, 10 of 90; cap the first at 30:
    # the 10 left over are shared 4:1 between the others -> 30, 48, 12
    assert proportional_batches(90, [1, 1, 4], caps=[30, 100, 100]).tolist() == [30, 48, 12]
    # minimum 0 lets a very slow worker get a dummy batch; the default keeps one sample
    assert proportional_batches(10, [1, 1, 100], minimum=0).tolist() == [5, 5, 0]
    assert proportional_batches(10, [1, 1, 100]).tolist() == [5, 4, 1]
    with pytest.raises(ParameterError, match="exceeds the sum of the caps"):
        proportional_batches(50, [1, 1], caps=[20, 20])
    with pytest.raises(ParameterError, match="caps: expected 2 values"):
        proportional_batches(10, [1, 1], caps=[20])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(1.0, 8.0), min_size=1, max_size=6), st.integers(0, 100), st.integers(0, 2))
def test_capped_proportional_batches_respect_caps_and_total(speeds, extra, minimum):
    K = len(speeds)
    caps = [minimum + 1 + (7 * i) % 13 for i in range(K)]
    total = min(minimum * K + extra, sum(caps))
    b = proportional_batches(total, speeds, minimum=minimum, caps=caps)
    assert b.sum() == total and (b >= minimum).all() and (b <= np.array(caps)).all()


def test_pathological_split_gives_each_worker_its_shards_labels():
    # 20 workers x 2 shards of the label-sorted 1,438 training samples (1,797 x 0.8): 40 shards of
    # 35-36 samples; a digit class has ~144 training samples, so a shard holds 1 or 2 labels and a
    # worker at most 4 (McMahan et al. 2017, Sec. 3: 2 shards per client, most clients 2 labels)
    p = load_problem(20, "pathological", shards=2, seed=3)
    allidx = np.concatenate(p.shards)
    assert sorted(allidx.tolist()) == list(range(len(p.y_train))) == list(range(1438))
    sizes = sorted(len(s) for s in p.shards)
    assert sizes[0] >= 2 * 35 and sizes[-1] <= 2 * 36
    labels = [len(np.unique(p.y_train[s])) for s in p.shards]
    assert max(labels) <= 4 and np.median(labels) <= 3
    # 10 shards of ~144 samples: a shard the size of a class can hold the tail of one class, a
    # smaller class whole and the head of the next, so at most 3 labels
    one = load_problem(10, "pathological", shards=1, seed=3)
    assert max(len(np.unique(one.y_train[s])) for s in one.shards) <= 3
    with pytest.raises(ParameterError, match="shards must be >= 1, got 0"):
        load_problem(4, "pathological", shards=0)


def test_model_case_reads_the_preamble_of_a_data_parallel_model_case(gtx, shared_context):
    """K defaults to every device of the profile (6 nodes x 3 GTX 1080 Ti = 18); a dataset, a
    missing profile, or several workers on a profile without a network are each a Skip naming why."""
    from suite.declaration.results import Scenario, Skip
    from suite.collectives.dataparallel import model_case

    ctx = shared_context
    table = ctx.workload("resnet-18-cifar")
    case = model_case(Scenario("cocod-sgd", "s-sgd", "model", gtx, table, {"workers": None}), "resnet-18-cifar")
    assert (case.workload, case.profile, case.workers) == (table, gtx, 18)
    assert model_case(Scenario("cocod-sgd", "s-sgd", "model", gtx, table, {"workers": 4}), "x").workers == 4
    with pytest.raises(Skip, match=r"^palsgd model fidelity needs a model's layer table \(e.g. resnet-50\), got "
                                   r"Dataset$"):
        model_case(Scenario("palsgd", "palsgd", "model", gtx, ctx.workload("digits"), {"workers": 4}), "resnet-50")
    with pytest.raises(Skip, match=r"^palsgd model fidelity needs a hardware profile$"):
        model_case(Scenario("palsgd", "palsgd", "model", None, table, {"workers": 4}), "resnet-50")
    device = ctx.profile("nvidia-gtx-1080-ti")
    with pytest.raises(Skip, match=r"^profile 'nvidia-gtx-1080-ti' has no network for 2 workers$"):
        model_case(Scenario("palsgd", "palsgd", "model", device, table, {"workers": 2}), "resnet-50")
    # more workers than the profile's 18 devices: group_of invented the missing nodes, and 100 workers
    # on a 3-GPU node priced 78,039 samples/s (a tryout); now a Skip, as other techniques say it
    with pytest.raises(Skip, match=r"^workers=19 but profile 'gtx1080ti-6x3-ib56' has 18 devices$"):
        model_case(Scenario("cocod-sgd", "s-sgd", "model", gtx, table, {"workers": 19}), "x")
    assert model_case(Scenario("cocod-sgd", "s-sgd", "model", gtx, table, {"workers": 18}), "x").workers == 18
