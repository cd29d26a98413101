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
    for algo in C.ALLREDUCE_ALGORITHMS:
        led = C.Ledger()
        out = C.allreduce(arrays, algo, led)
        assert led.conservation_problems(require_receipts=True) == []
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


def _model_bytes(algo, p, m):
    """Total bytes of the analytic model's all-reduce over p ranks on one switched level."""
    from suite.hardware.profile import Profile
    from suite.perf import Group, collective_time

    prof = Profile.model_validate({
        "name": "t", "kind": "cluster", "nodes": p,
        "device": {"type": "gpu", "name": "g", "memory": 1e9, "memory_bandwidth": 1e12, "peak_flops": {"fp32": 1e12}},
        "node": {"device": "g", "devices_per_node": 1},
        "network": [{"name": "sw", "topology": "switch", "size": p, "bandwidth": 1e10, "latency": 1e-6}]})
    return sum(collective_time("allreduce", m, Group(1, p), prof, algo).bytes_per_level) * p


@pytest.mark.parametrize("p", [2, 3, 5, 6, 7, 8, 12])
def test_recursive_doubling_and_rabenseifner_bytes_match_the_formulas(p):
    p2 = 1 << (p.bit_length() - 1)
    r = p - p2
    n = 8 * p2  # divisible by p' so every halving is exact
    arrays = [np.ones(n) for _ in range(p)]
    m = arrays[0].nbytes
    led = C.Ledger()
    C.recursive_doubling_allreduce(arrays, led)
    # hand: the fold and the unfold move m for each of the r extra ranks; each of the p' ranks
    # sends its whole buffer in each of log2 p' rounds
    assert led.total_bytes == 2 * r * m + p2 * (p2.bit_length() - 1) * m
    assert led.total_bytes == pytest.approx(_model_bytes("recursive-doubling", p, m))
    led = C.Ledger()
    C.rabenseifner_allreduce(arrays, led)
    # hand: halving sends m/2 + m/4 + ... + m/p' = (p'-1)/p' m per rank, doubling the same
    assert led.total_bytes == 2 * r * m + 2 * (p2 - 1) * m
    assert led.total_bytes == pytest.approx(_model_bytes("rabenseifner", p, m))
    # MPICH's fold: the first 2r ranks pair up, evens hand over
    folds = [(mm.src, mm.dst) for mm in led.messages if mm.tag.endswith(":fold")]
    assert folds == [(i, i + 1) for i in range(0, 2 * r, 2)]


def test_a_lost_or_duplicated_message_is_detected():
    arrays = [np.arange(8.0) for _ in range(4)]
    led = C.Ledger()
    C.ring_allreduce(arrays, led)
    assert led.conservation_problems(require_receipts=True) == []
    assert led.tallied_by_receivers() == led.received_by() == led.sent_by()  # ring: each receives what it sends
    lost = C.Ledger(list(led.messages), list(led.receipts[1:]))
    (msg,) = lost.conservation_problems()
    assert "lost" in msg and f"{led.receipts[0].src} -> {led.receipts[0].dst}" in msg
    dup = C.Ledger(list(led.messages), list(led.receipts) + [led.receipts[3]])
    assert "duplicated" in dup.conservation_problems()[0]
    # a ledger only the senders kept cannot be checked, and says so when asked
    only_sent = C.Ledger(list(led.messages))
    assert only_sent.conservation_problems() == []
    assert "no receiver tallied" in only_sent.conservation_problems(require_receipts=True)[0]


def test_ledger_transfer_records_what_send_then_recv_record():
    """Ledger.transfer (one call per message) keeps the same two tallies and returns the same copy
    as send + recv; a message to oneself or of 0 bytes is not recorded (as with send / recv)."""
    x = np.arange(6.0).reshape(2, 3)[:, 1:]  # a strided view: the copy is the received data
    pair, one = C.Ledger(), C.Ledger()
    moves = [(0, 1, x, "a"), (1, 0, x[:1], "b"), (2, 2, x, "self"), (3, 1, x[:0], "empty")]
    for src, dst, arr, tag in moves:
        got = C.recv(pair, src, dst, C.send(pair, src, dst, arr, tag), tag)
        mine = one.transfer(src, dst, arr, tag)
        assert np.array_equal(mine, got) and mine.dtype == got.dtype and mine.flags.writeable
        assert not np.shares_memory(mine, arr)
    assert one.messages == pair.messages == [C.Message(0, 1, 32, "a"), C.Message(1, 0, 16, "b")]
    assert one.receipts == pair.receipts
    assert one.conservation_problems(require_receipts=True) == []
    assert one.by_tag() == {"a": (1, 32), "b": (1, 16)}
