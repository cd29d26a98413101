"""Collectives on real arrays against the dense oracle, and ledger byte counts against the
alpha-beta formulas' volumes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from suite import collectives as C


@given(p=st.integers(1, 9), n=st.integers(1, 50), seed=st.integers(0, 10_000))
def test_ring_and_tree_allreduce_equal_dense_sum(p, n, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=n) for _ in range(p)]
    oracle = np.sum(arrays, axis=0)
    for algo in ("ring", "tree"):
        out = C.allreduce(arrays, algo)
        assert len(out) == p
        for o in out:
            np.testing.assert_allclose(o, oracle, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p", [2, 3, 4, 8])
def test_ring_allreduce_ledger_matches_formula(p):
    n = 8 * p * 3  # divisible chunks
    arrays = [np.ones(n) for _ in range(p)]
    led = C.Ledger()
    C.ring_allreduce(arrays, led)
    # 2(p-1) steps, p messages each; each worker sends 2(p-1)/p of the bytes
    assert led.count == 2 * (p - 1) * p
    per_worker = 2 * (p - 1) / p * arrays[0].nbytes
    assert all(v == per_worker for v in led.sent_by().values())


def test_tree_allreduce_message_count():
    p = 8
    led = C.Ledger()
    C.tree_allreduce([np.ones(10) for _ in range(p)], led)
    # reduce: p-1 messages, broadcast: p-1 messages
    assert led.count == 2 * (p - 1)


@pytest.mark.parametrize("p,s", [(4, 4), (4, 2), (5, 1)])
def test_ps_push_pull_sum_and_bytes(p, s):
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(6, 5)) for _ in range(p)]
    led = C.Ledger()
    out = C.ps_push_pull(arrays, s, led)
    for o in out:
        np.testing.assert_allclose(o, np.sum(arrays, axis=0))
    # colocated: a worker's shard on its own server does not cross the network
    per_shard = [len(range(*sl.indices(arrays[0].size))) * 8 for sl in C._chunks(arrays[0].size, s)]
    expected_push = sum(per_shard[j] * (p - 1) for j in range(s))
    push = led.by_tag()["ps:push"][1]
    pull = led.by_tag()["ps:pull"][1]
    assert push == expected_push == pull


def test_broadcast_from_any_root():
    x = np.arange(7.0)
    led = C.Ledger()
    out = C.broadcast(x, 6, root=4, ledger=led)
    assert all(np.array_equal(o, x) for o in out)
    assert led.count == 5


def test_allgather_concatenates_in_rank_order():
    parts = [np.full(r + 1, float(r)) for r in range(4)]
    out = C.allgather(parts)
    expect = np.concatenate(parts)
    assert all(np.array_equal(o, expect) for o in out)


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="one shape"):
        C.ring_allreduce([np.ones(3), np.ones(4)])
