"""collective_time over a profile's levels, against hand calculations written here."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.hardware.profile import Profile
from suite.perf import Group, collective_time, dimensions, rabenseifner_allreduce_time, recursive_doubling_allreduce_time
from suite.perf.network import ALGORITHMS, OPS
from suite.testing.strategies import profiles
from session_context import session_context

A100_GAMMA = 3 / 2039e9  # 3 streams per reduced byte over the A100 80 GB's 2039 GB/s HBM2e
#: the MPICH behaviour (every algorithm priced, the fastest kept) is the ``mpi`` library's
MPI = {"communication.library": "mpi"}


def _selene_mpi():
    return session_context().profile("selene-dgx-a100").with_overrides(MPI)


def _profile(levels, dpn=1, nodes=1, nics=None, membw=1e12, library="mpi"):
    dev = {"type": "gpu", "name": "g", "memory": 16e9, "memory_bandwidth": membw, "peak_flops": {"fp32": 1e13}}
    node = {"device": "g", "devices_per_node": dpn}
    if nics:
        node["nics_per_node"] = nics
    return Profile.model_validate({"name": "t", "kind": "cluster", "device": dev, "node": node, "nodes": nodes,
                                   "network": levels, "communication": {"library": library}})


def _lvl(name, size, bw, lat, topo="switch", **kw):
    return {"name": name, "topology": topo, "size": size, "bandwidth": bw, "latency": lat, **kw}


def test_single_node_ring_allreduce_by_hand():
    p = session_context().profile("selene-dgx-a100")  # NVLink3 level: 300 GB/s, 1 us; A100 80 GB
    c = collective_time("allreduce", 1e9, Group(8, 1), p, algorithm="ring")
    # ring: 2 (p-1) alpha + 2 (p-1)/p m / B + (p-1)/p m gamma
    assert c.time == pytest.approx(14e-6 + 1.75e9 / 3e11 + 0.875e9 * A100_GAMMA)
    assert c.bytes_per_level[0] == pytest.approx(1.75e9) and c.bytes_per_level[-1] == 0.0


def test_auto_picks_rabenseifner_on_eight_gpus_for_large_buffers():
    # Rabenseifner: 2 log2 8 = 6 latencies instead of the ring's 14, the same bytes (mpi library)
    p = _selene_mpi()
    c = collective_time("allreduce", 1e9, Group(8, 1), p)
    assert c.algorithm == "rabenseifner"
    assert c.time == pytest.approx(6e-6 + 1.75e9 / 3e11 + 0.875e9 * A100_GAMMA)


def test_multi_node_flat_ring_runs_at_the_nics_rate():
    # selene: 8 x 200 Gb/s NICs per node = 200 GB/s < NVLink 300 GB/s; p = 32 ranks
    p = session_context().profile("selene-dgx-a100")
    m = 1e9
    c = collective_time("allreduce", m, Group(8, 4), p, algorithm="ring")
    assert c.time == pytest.approx(62 * (1e-6 + m / 32 / 200e9) + 31 / 32 * m * A100_GAMMA)
    # 28 of the ring's 32 hops stay in a node, 4 cross nodes
    assert c.bytes_per_level[0] == pytest.approx(2 * 31 / 32 * m * 28 / 32)
    assert c.bytes_per_level[1] == pytest.approx(2 * 31 / 32 * m * 4 / 32)


def test_hierarchical_allreduce_by_hand():
    p = session_context().profile("selene-dgx-a100")
    m = 8e8
    c = collective_time("allreduce", m, Group(8, 4), p, algorithm="hierarchical")
    rs_in = 7 * (1e-6 + m / 8 / 300e9)  # intra-node ring reduce-scatter (and all-gather)
    # inter-node all-reduce of the m/8 shard over 4 nodes, 8 ranks sharing 8 NICs of 25 GB/s:
    # Rabenseifner over 4 (pow2): 4 latencies + 2 * 3/4 * (m/8) / 25 GB/s
    ar_out = 4e-6 + 1.5 * (m / 8) / 25e9
    gam = 7 / 8 * m * A100_GAMMA + 3 / 4 * (m / 8) * A100_GAMMA
    assert c.time == pytest.approx(2 * rs_in + ar_out + gam)
    assert c.bytes_per_level == pytest.approx((2 * 7 / 8 * m, 1.5 * m / 8))


def test_rabenseifner_folds_non_power_of_two_like_mpich():
    # p = 6: p' = 4, r = 2 folded ranks; 2 log2 4 alpha + 2 (3/4) m beta, plus 2 (alpha + m beta)
    assert rabenseifner_allreduce_time(1e6, 6, 1e-5, 1e-9) == pytest.approx(4e-5 + 1.5e-3 + 2 * (1e-5 + 1e-3))
    assert rabenseifner_allreduce_time(1e6, 8, 1e-5, 1e-9) == pytest.approx(6e-5 + 1.75e-3)  # pow2 unchanged
    # with a reduction term: (p'-1)/p' m gamma + m gamma for the fold
    assert rabenseifner_allreduce_time(1e6, 6, 0, 0, gamma=1e-9) == pytest.approx(0.75e-3 + 1e-3)
    # recursive doubling, p = 5: p' = 4: 2 rounds of (alpha + m beta) + fold 2 (alpha + m beta)
    assert recursive_doubling_allreduce_time(1e6, 5, 1e-5, 1e-9) == pytest.approx(4 * (1e-5 + 1e-3))


def test_rabenseifner_on_a_partly_filled_node_crosses_nodes_after_the_fold():
    """6 ranks, 4 + 2 on two nodes (intra 100 GB/s, inter 10 GB/s, no latency), m = 1.2 GB.

    MPICH's fold pairs ranks (0, 1) and (2, 3): intra-node. The survivors 1, 3, 4, 5 then
    exchange at new-rank distance 2 (1-4, 3-5: across nodes) and 1 (1-3 and 4-5: inside a
    node), in both halves. Bytes per rank, by hand: intra 2 * 2m/6 (fold) + 4 (m/4) / 6 * 2
    = m; inter 4 (m/2) / 6 * 2 = 2m/3. Time: fold 2 m / 100 GB/s; halving m/2 across nodes
    with two senders on each node sharing its one 10 GB/s NIC (5 GB/s each), then m/4 inside;
    the same mirrored.
    """
    p = _profile([_lvl("nvl", 4, 100e9, 0.0), _lvl("ib", 2, 10e9, 0.0)], dpn=4, nodes=2, membw=1e30)
    m = 1.2e9
    c = collective_time("allreduce", m, Group(4, 2, ranks=6), p, algorithm="rabenseifner")
    assert c.bytes_per_level == pytest.approx((m, 2 * m / 3))
    assert c.time == pytest.approx(2 * m / 100e9 + 2 * (m / 2 / 5e9 + m / 4 / 100e9), rel=1e-9)
    # so the inter-node level matters (it did not when partners were found by distance alone)
    slow = _profile([_lvl("nvl", 4, 100e9, 0.0), _lvl("ib", 2, 5e9, 0.0)], dpn=4, nodes=2, membw=1e30)
    assert collective_time("allreduce", m, Group(4, 2, ranks=6), slow, algorithm="rabenseifner").time > c.time


def test_collective_model_agrees_with_comm_formulas_on_a_switch():
    prof = _profile([_lvl("sw", 16, 10e9, 5e-6)], nodes=16, membw=1e12)
    g, m = Group(1, 12), 3e6
    gamma = 3e-12
    assert collective_time("allreduce", m, g, prof, "rabenseifner").time == pytest.approx(
        rabenseifner_allreduce_time(m, 12, 5e-6, 1e-10, gamma))
    assert collective_time("allreduce", m, g, prof, "recursive-doubling").time == pytest.approx(
        recursive_doubling_allreduce_time(m, 12, 5e-6, 1e-10, gamma))


def test_mpich_size_switch():
    p = _selene_mpi()
    assert collective_time("allreduce", 1024, Group(8, 1), p, "mpich").algorithm == "recursive-doubling"
    assert collective_time("allreduce", 1e6, Group(8, 1), p, "mpich").algorithm == "rabenseifner"
    assert collective_time("broadcast", 1e3, Group(8, 1), p, "mpich").algorithm == "tree"
    assert collective_time("broadcast", 1e6, Group(8, 1), p, "mpich").algorithm == "scatter-allgather"


def test_bus_shares_one_medium():
    bus = _profile([_lvl("bus", 4, 10e9, 1e-6, "bus")], dpn=4)
    sw = _profile([_lvl("sw", 4, 10e9, 1e-6, "switch")], dpn=4)
    m = 4e6
    # ring on a bus: 4 flows at once, each at B/4: 2*3*(alpha + (m/4)/(B/4))
    assert collective_time("allreduce", m, Group(4, 1), bus, "ring").time == pytest.approx(
        6 * (1e-6 + m / 10e9) + 0.75 * m * 3e-12)
    assert collective_time("allreduce", m, Group(4, 1), sw, "ring").time == pytest.approx(
        6 * (1e-6 + m / 4 / 10e9) + 0.75 * m * 3e-12)
    # a broadcast on a bus is one transmission
    assert collective_time("broadcast", m, Group(4, 1), bus).time == pytest.approx(1e-6 + m / 10e9)


def test_torus_ring_uses_a_share_of_the_links_and_hops_cost_latency():
    tor = _profile([_lvl("t", 16, 8e9, 1e-6, "torus", dims=(4, 4))], nodes=16)
    m = 16e6
    # 2-D torus: a bidirectional ring uses 2 of the 4 links: B/2
    assert collective_time("allreduce", m, Group(1, 16), tor, "ring").time == pytest.approx(
        30 * (1e-6 + m / 16 / 4e9) + 15 / 16 * m * 3e-12)
    # broadcast, binomial: partners 1, 2, 4, 8 apart -> hops 1, 2, 1 (y), 2 (y); one flow at B/2
    c = collective_time("broadcast", m, Group(1, 16), tor, "tree")
    assert c.time == pytest.approx((1 + 2 + 1 + 2) * 1e-6 + 4 * m / 4e9)


def test_fat_tree_oversubscription_slows_traffic_leaving_a_leaf():
    full = _profile([_lvl("ft", 64, 10e9, 1e-6, "fat-tree", leaf_size=16)], nodes=64)
    tap = _profile([_lvl("ft", 64, 10e9, 1e-6, "fat-tree", leaf_size=16, oversubscription=4)], nodes=64)
    g, m = Group(1, 64), 64e6
    # the ring leaves each leaf once: 16 ports' worth of uplink / 4 still carries one flow at B
    assert collective_time("allreduce", m, g, tap, "ring").time == collective_time("allreduce", m, g, full, "ring").time
    # recursive halving at distances 32 and 16 leaves the leaf with every flow: B/4
    rd = collective_time("allreduce", m, g, tap, "rabenseifner").time
    rd_full = collective_time("allreduce", m, g, full, "rabenseifner").time
    extra = 2 * (m / 2 + m / 4) * (4 - 1) / 10e9  # both halves of the two tapered steps, 3 B^-1 more each
    assert rd - rd_full == pytest.approx(extra)


def test_three_levels_compose_and_each_crossed_level_matters():
    lv = [_lvl("nvl", 4, 100e9, 1e-6), _lvl("leaf", 4, 10e9, 2e-6), _lvl("spine", 4, 10e9, 5e-6)]
    p = _profile(lv, dpn=4, nodes=16, nics=1)
    g = Group(4, 16)
    assert [(d.level, d.n) for d in dimensions(p, g)] == [(0, 4), (1, 4), (2, 4)]
    base = collective_time("allreduce", 1e8, g, p, "hierarchical")
    assert all(b > 0 for b in base.bytes_per_level)
    for i in range(3):
        slow = p.with_overrides({f"network.{i}.bandwidth": lv[i]["bandwidth"] / 10})
        assert collective_time("allreduce", 1e8, g, slow, "hierarchical").time > base.time
    # 4 nodes fit in one leaf: the spine is not crossed
    g4 = Group(4, 4)
    slow = p.with_overrides({"network.2.bandwidth": 1e6})
    assert collective_time("allreduce", 1e8, g4, slow).time == collective_time("allreduce", 1e8, g4, p).time


def test_one_rank_costs_nothing():
    p = session_context().profile("selene-dgx-a100")
    assert collective_time("allreduce", 1e9, Group(1, 1), p).time == 0.0


def test_inner_level_matters_when_the_group_spans_devices_of_a_node():
    p = session_context().profile("selene-dgx-a100")
    slow = p.with_overrides({"network.0.bandwidth": "150 GB/s"})
    g = Group(8, 4)
    assert collective_time("allreduce", 1e8, g, slow).time > collective_time("allreduce", 1e8, g, p).time
    one = Group(1, 4)  # one rank per node: the inner level is not crossed
    assert collective_time("allreduce", 1e8, one, slow).time == collective_time("allreduce", 1e8, one, p).time


def test_bad_input():
    p = session_context().profile("selene-dgx-a100")
    with pytest.raises(ValueError, match="collective op"):
        collective_time("gather", 1, Group(2, 1), p)
    with pytest.raises(ValueError, match="algorithm for allreduce"):
        collective_time("allreduce", 1, Group(2, 1), p, "bogus")
    with pytest.raises(ValueError, match="nbytes"):
        collective_time("allreduce", -1, Group(2, 1), p)
    with pytest.raises(ValueError, match="not defined"):
        collective_time("reduce-scatter", 1e6, Group(6, 1), p, "recursive-doubling")


@settings(max_examples=40, deadline=None)
@given(prof=profiles(kind="cluster", max_nodes=32), rpn=st.integers(1, 8), nodes=st.integers(1, 32),
       op=st.sampled_from(OPS[:-1]), m=st.floats(1.0, 1e10))
def test_auto_is_the_fastest_and_bytes_are_conserved(prof, rpn, nodes, op, m):
    prof = prof.with_overrides(MPI)  # MPI's auto: the fastest of every algorithm priced
    g = Group(min(rpn, prof.devices_per_node), min(nodes, prof.num_nodes))
    auto = collective_time(op, m, g, prof)
    assert auto.time >= 0 and math.isfinite(auto.time)
    dims = dimensions(prof, g)
    for name in ALGORITHMS[op]:
        if name in ("recursive-doubling", "rabenseifner") and len(dims) > 1 and any(d.n & (d.n - 1) for d in dims):
            continue  # left out of auto: their level placement is approximate there
        try:
            c = collective_time(op, m, g, prof, name)
        except ValueError:
            continue
        assert auto.time <= c.time * (1 + 1e-9)
        if op in ("allreduce",) and name in ("ring", "hierarchical") and g.size > 1:
            # any all-reduce moves at least 2 (p-1)/p m per rank [Patarasuk09, Thm 1]
            assert sum(c.bytes_per_level) >= 2 * (g.size - 1) / g.size * m * (1 - 1e-9)


def test_p2p_shares_the_nics_with_its_concurrent_copies():
    """Two concurrent p2p transfers between the same two nodes share the 10 GB/s NIC: each runs at
    5 GB/s (concurrent was ignored for p2p, underpricing plugins that pass it)."""
    p = _profile([_lvl("nvl", 4, 100e9, 0.0), _lvl("ib", 2, 10e9, 0.0)], dpn=4, nodes=2, membw=1e30)
    m = 1e9
    one = collective_time("p2p", m, Group(1, 2), p)
    two = collective_time("p2p", m, Group(1, 2, concurrent=2), p)
    assert one.time == pytest.approx(m / 10e9) and two.time == pytest.approx(m / 5e9)
