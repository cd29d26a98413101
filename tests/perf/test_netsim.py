"""The simulate fidelity of the collectives (suite.perf.netsim): agreement with the analytic model
where nothing is shared beyond what it counts, contention where links are shared."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from suite.hardware.profile import Profile
from suite.perf import Group, collective_time, dimensions
from suite.perf.network.netsim import simulate_collective
from suite.testing.strategies import profiles

SIMULATED = {
    "allreduce": ("ring", "tree", "recursive-doubling", "rabenseifner", "hierarchical", "auto"),
    "reduce-scatter": ("ring",),
    "allgather": ("ring",),
    "broadcast": ("tree", "auto"),
    "p2p": ("p2p",),
}


def _profile(levels, dpn=1, nodes=1, membw=1e12):
    dev = {"type": "gpu", "name": "g", "memory": 16e9, "memory_bandwidth": membw, "peak_flops": {"fp32": 1e13}}
    return Profile.model_validate({"name": "t", "kind": "cluster", "device": dev,
                                   "node": {"device": "g", "devices_per_node": dpn}, "nodes": nodes,
                                   "network": levels, "communication": {"library": "mpi"}})


def _lvl(name, size, bw, lat, topo="switch", **kw):
    return {"name": name, "topology": topo, "size": size, "bandwidth": bw, "latency": lat, **kw}


@settings(max_examples=30, deadline=None)
@given(prof=profiles(kind="cluster", max_nodes=8), rpn=st.integers(1, 8), nodes=st.integers(1, 8),
       case=st.sampled_from([(op, a) for op, algs in SIMULATED.items() for a in algs]),
       m=st.floats(1.0, 1e9))
def test_contention_free_runs_agree_with_the_model_within_2_percent(prof, rpn, nodes, case, m):
    op, algo = case
    prof = prof.with_overrides({"communication.library": "mpi"})  # netsim simulates MPI's algorithms
    g = Group(min(rpn, prof.devices_per_node), min(nodes, prof.num_nodes))
    dims = dimensions(prof, g)
    assume(dims)
    if algo in ("recursive-doubling", "rabenseifner") and len(dims) > 1:
        # across several levels the model places a partner by its distance: exact for powers of two
        assume(all(d.n & (d.n - 1) == 0 for d in dims))
    if op == "broadcast" and algo == "auto":
        assume(collective_time(op, m, g, prof).algorithm in ("tree", "hierarchical"))
    try:
        model = collective_time(op, m, g, prof, algo)
    except ValueError:
        assume(False)
    sim = simulate_collective(op, m, g, prof, algo)
    assert sim.time == pytest.approx(model.time, rel=0.02)
    assert sim.bytes_per_level == pytest.approx(model.bytes_per_level, rel=1e-6, abs=1e-9 * m)


def test_two_level_ring_waits_for_its_slowest_hop():
    # intra 4 x 100 GB/s at 5 us, inter 10 GB/s at 1 us: the slower hop differs by size
    p = _profile([_lvl("in", 4, 100e9, 5e-6), _lvl("out", 2, 10e9, 1e-6)], dpn=4, nodes=2)
    g = Group(4, 2)
    for m in (1e3, 1e8):
        sim = simulate_collective("allreduce", m, g, p, "ring")
        step = max(5e-6 + m / 8 / 100e9, 1e-6 + m / 8 / 10e9)  # hand: 2(p-1) steps of the slowest hop
        assert sim.time == pytest.approx(14 * step + 7 / 8 * m * 3e-12, rel=1e-6)


def test_a_bus_serialises_what_a_switch_runs_at_once():
    m = 4e6
    bus = _profile([_lvl("bus", 4, 10e9, 1e-6, "bus")], dpn=4)
    sw = _profile([_lvl("sw", 4, 10e9, 1e-6)], dpn=4)
    b = simulate_collective("allreduce", m, Group(4, 1), bus, "ring")
    s = simulate_collective("allreduce", m, Group(4, 1), sw, "ring")
    # hand: 6 steps; on the switch each of the 4 chunks of m/4 moves at B, on the bus 4 share B
    assert s.time == pytest.approx(6 * (1e-6 + 1e5 / 1e9) + 0.75 * m * 3e-12)
    assert b.time == pytest.approx(6 * (1e-6 + 4e5 / 1e9) + 0.75 * m * 3e-12)
    assert b.max_link_flows == 4 and s.max_link_flows == 1


def test_an_oversubscribed_fat_tree_queues_the_traffic_leaving_a_leaf():
    m = 64e6
    full = _profile([_lvl("ft", 32, 10e9, 1e-6, "fat-tree", leaf_size=8)], nodes=32)
    tap = _profile([_lvl("ft", 32, 10e9, 1e-6, "fat-tree", leaf_size=8, oversubscription=4)], nodes=32)
    g = Group(1, 32)
    f = simulate_collective("allreduce", m, g, full, "rabenseifner")
    t = simulate_collective("allreduce", m, g, tap, "rabenseifner")
    # recursive halving at distances 16 and 8 sends every flow of a leaf up its uplink of
    # 8 x B / 4 = 2 B: 8 flows at B/4 instead of B; both halves (m/2 and m/4, RS and AG)
    assert t.time - f.time == pytest.approx(2 * (m / 2 + m / 4) * 3 / 10e9, rel=1e-6)
    assert t.max_link_flows == 8
    # the ring leaves a leaf once per step: no queue on the uplinks
    assert simulate_collective("allreduce", m, g, tap, "ring").time == pytest.approx(
        simulate_collective("allreduce", m, g, full, "ring").time)


def test_unsupported_topology_is_refused():
    p = _profile([_lvl("t", 16, 1e9, 1e-6, "torus")], nodes=16)
    with pytest.raises(ValueError, match="torus"):
        simulate_collective("allreduce", 1e6, Group(1, 16), p, "ring")
