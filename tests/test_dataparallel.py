"""Tests of suite.collectives.dataparallel: data split, model gradients, proportional sampling,
the clock's cost model by hand, and the workers' all-reduce against the dense oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
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
)
from suite.errors import ParameterError, ProfileError
from suite.hardware import get_profile


@pytest.fixture(scope="module")
def gtx():
    return get_profile("gtx1080ti-6x3-ib56")


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
def test_proportional_batches(speeds, extra):
    total = len(speeds) + extra
    b = proportional_batches(total, speeds)
    assert b.sum() == total and (b >= 1).all()
    ideal = total * (1 / np.array(speeds)) / np.sum(1 / np.array(speeds))
    # largest remainders: every batch within one sample of its ideal share (unless raised to 1)
    assert np.all((np.abs(b - ideal) < 1 + 1e-9) | (b == 1))


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
    dev = get_profile("nvidia-gtx-1080-ti")
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
