"""Hand-calculated checks of the shared cost-model primitives (suite.perf)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from suite import perf


def test_p2p_alpha_beta_hand_value():
    # 1 MB over 10 Gbit/s (1.25e9 B/s) with 50 us start-up: 50e-6 + 1e6/1.25e9 = 850 us
    assert perf.p2p_time(1e6, 50e-6, 1 / 1.25e9) == pytest.approx(850e-6)
    assert perf.p2p_time(0, 50e-6, 1e-9) == 0.0


def test_ring_allreduce_hand_value():
    # p=4, m=100 MB, alpha=10 us, beta=1 ns/B: 2*3*10us + 2*3/4*1e8*1e-9 = 60 us + 0.15 s
    assert perf.ring_allreduce_time(1e8, 4, 10e-6, 1e-9) == pytest.approx(60e-6 + 0.15)
    assert perf.ring_allreduce_time(1e8, 1, 10e-6, 1e-9) == 0.0


def test_tree_and_rabenseifner_hand_values():
    # tree, p=8: 2*3*(alpha + m beta)
    assert perf.tree_allreduce_time(1e6, 8, 1e-5, 1e-9) == pytest.approx(6 * (1e-5 + 1e-3))
    # Rabenseifner, p=8: 2*3*alpha + 2*7/8*m*beta
    assert perf.rabenseifner_allreduce_time(1e6, 8, 1e-5, 1e-9) == pytest.approx(6e-5 + 1.75e-3)


def test_hierarchical_allreduce_reduces_to_ring_with_one_device_per_node():
    m, p = 5e7, 16
    flat = perf.ring_allreduce_time(m, p, 2e-6, 1 / 25e9)
    hier = perf.hierarchical_allreduce_time(m, 1, p, 1e-6, 1 / 300e9, 2e-6, 1 / 25e9)
    assert hier == pytest.approx(flat)


def test_hierarchical_allreduce_hand_value():
    # 8 devices per node, 4 nodes, m = 800 MB
    m = 8e8
    rs = 7 * 1e-6 + 7 / 8 * m / 300e9
    ar = 2 * 3 * 5e-6 + 2 * 3 / 4 * (m / 8) / 25e9
    assert perf.hierarchical_allreduce_time(m, 8, 4, 1e-6, 1 / 300e9, 5e-6, 1 / 25e9) == pytest.approx(2 * rs + ar)


def test_broadcast_binomial_and_flat():
    assert perf.broadcast_time(1e6, 16, 1e-5, 1e-9) == pytest.approx(4 * (1e-5 + 1e-3))
    assert perf.broadcast_time(1e6, 16, 1e-5, 1e-9, "flat") == pytest.approx(15 * (1e-5 + 1e-3))
    with pytest.raises(ValueError):
        perf.broadcast_time(1e6, 4, 0, 1e-9, "star")


def test_ps_push_pull_colocated_hand_value():
    # P = S = 16 colocated: each phase moves m*(P-1)/P per NIC direction
    m, beta = 1e8, 1 / 1.25e9
    assert perf.ps_push_pull_time(m, 16, 16, 0.0, beta) == pytest.approx(2 * m * 15 / 16 * beta)
    # a single colocated node communicates nothing
    assert perf.ps_push_pull_time(m, 1, 1, 1e-5, beta) == 0.0
    # dedicated servers: the server NIC receives P*m/S
    assert perf.ps_push_pull_time(m, 8, 2, 0.0, beta, colocated=False) == pytest.approx(2 * 4 * m * beta)


@given(m=st.floats(1, 1e10), p=st.integers(2, 512), alpha=st.floats(0, 1e-3), bw=st.floats(1e8, 1e12))
def test_ring_never_beats_the_bandwidth_lower_bound(m, p, alpha, bw):
    beta = 1 / bw
    assert perf.ring_allreduce_time(m, p, alpha, beta) >= perf.allreduce_lower_bound(m, p, beta) * (1 - 1e-12)


def test_roofline_and_balance():
    # 1 TFLOP at 10 TFLOP/s peak, 1 GB at 1 TB/s: compute-bound at 0.1 s
    assert perf.roofline_time(1e12, 1e9, 1e13, 1e12) == pytest.approx(0.1)
    assert perf.roofline_time(1e9, 1e12, 1e13, 1e12) == pytest.approx(1.0)
    assert perf.machine_balance(19.5e12, 1555e9) == pytest.approx(12.54, rel=1e-3)
    assert perf.attainable_flops(4.0, 1e13, 1e12) == 4e12
    with pytest.raises(ValueError):
        perf.roofline_time(1, 1, 1, 1, efficiency=0)


def test_pipeline_1f1b():
    assert perf.pipeline_1f1b_time(1.0, 2.0, 4, 8) == pytest.approx(11 * 3.0)
    assert perf.pipeline_bubble_fraction(4, 8) == pytest.approx(3 / 8)


def test_wfbp_timeline_hand_example():
    # three layers, backward 1,1,1 (s) from the top; comm 2,0.5,0.5 (layer 1..3 in forward order)
    tl = perf.wfbp_timeline(0.5, [1.0, 1.0, 1.0], [2.0, 0.5, 0.5])
    # layer 3 ready at 1, ends 1.5; layer 2 ready at 2, ends 2.5; layer 1 ready at 3, ends 5
    assert tl.end == (1.5, 2.5, 5.0)
    assert tl.iteration_time == pytest.approx(0.5 + 5.0)
    assert tl.exposed_comm == pytest.approx(2.0)
    assert perf.sequential_iteration_time(0.5, [1, 1, 1], [2, 0.5, 0.5]) == pytest.approx(6.5)


@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 10)), min_size=1, max_size=30), st.floats(0, 5))
def test_wfbp_between_max_and_sum(pairs, f):
    bwd = [b for b, _ in pairs]
    comm = [c for _, c in pairs]
    t = perf.wfbp_timeline(f, bwd, comm).iteration_time
    lo = f + max(sum(bwd), sum(comm))
    hi = f + sum(bwd) + sum(comm)
    assert lo - 1e-9 <= t <= hi + 1e-9


def test_grouped_timeline_with_singletons_equals_layerwise():
    bwd, comm = [0.3, 0.2, 0.5, 0.1], [0.4, 0.1, 0.2, 0.3]
    a = perf.wfbp_timeline(0.2, bwd, comm)
    b = perf.grouped_wfbp_timeline(0.2, bwd, comm, [[0], [1], [2], [3]])
    assert a.iteration_time == pytest.approx(b.iteration_time)
    one = perf.grouped_wfbp_timeline(0.2, bwd, [sum(comm)], [[0, 1, 2, 3]])
    assert one.iteration_time == pytest.approx(0.2 + sum(bwd) + sum(comm))
    with pytest.raises(ValueError):
        perf.grouped_wfbp_timeline(0.2, bwd, [1.0], [[0, 1, 2]])


def test_bad_inputs_raise():
    with pytest.raises(ValueError):
        perf.ring_allreduce_time(-1, 4, 0, 1e-9)
    with pytest.raises(ValueError):
        perf.ring_allreduce_time(1, 0, 0, 1e-9)
    assert math.isclose(perf.ring_allreduce_bytes_per_worker(100, 4), 150)


def test_no_communication_exposes_none_to_the_bit():
    """With nothing to communicate nothing is exposed: exactly 0, not a rounding residue. Summed
    from the last layer (as backward runs) 0.1 + 0.2 + 0.3 is 0.6000000000000001 where the forward
    sum is 0.6, and Poseidon at one node reported exposed_comm = 5.55e-17 s."""
    for bwd in ([0.3, 0.2, 0.1], [0.1, 0.2, 0.3]):
        tl = perf.wfbp_timeline(0.0, bwd, [0.0, 0.0, 0.0])
        assert tl.exposed_comm == 0.0 and tl.iteration_time == tl.backward
        g = perf.grouped_wfbp_timeline(0.0, bwd, [0.0, 0.0], [[0, 1], [2]])
        assert g.exposed_comm == 0.0 and g.iteration_time == g.backward
