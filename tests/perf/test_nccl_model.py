"""The NCCL collective model (suite.perf.network.nccl) against hand calculations from NCCL's tuning
constants (src/graph/tuning.cc, v2.19), and the library choice."""

import math

import pytest

from suite.hardware.profile import Profile
from suite.perf import Group, collective_time
from suite.perf.network.nccl import SIMPLE_EFFICIENCY, efficiency_at, library_of
from session_context import session_context

US = 1e-6


def _profile(levels, dpn=8, nodes=1, nics=None, comm=None, dev_type="gpu"):
    dev = {"type": dev_type, "name": "g", "memory": 16e9, "memory_bandwidth": 1e12, "peak_flops": {"fp32": 1e13}}
    node = {"device": "g", "devices_per_node": dpn}
    if nics:
        node["nics_per_node"] = nics
    doc = {"name": "t", "kind": "cluster", "device": dev, "node": node, "nodes": nodes, "network": levels}
    if comm is not None:
        doc["communication"] = comm
    return Profile.model_validate(doc)


# a hop latency under NCCL's NVLink constants (0.6 us for LL), so NCCL's stand
NVL = {"name": "nvlink", "topology": "switch", "size": 8, "bandwidth": 450e9, "latency": 0.5e-6, "link": "nvlink",
       "efficiency": 0.824}
NVLS = {**NVL, "reduction": "nvls", "reduction_bandwidth": 275e9}
IB = {"name": "ib", "topology": "switch", "size": 4, "bandwidth": 50e9, "latency": 1e-6, "link": "net", "efficiency": 0.97}


def test_library_defaults_and_declared():
    assert library_of(session_context().profile("dgx-h100")) == "nccl"  # a GPU profile
    assert library_of(session_context().profile("xeon-platinum-8280-2s")) == "mpi"  # a CPU one
    assert library_of(session_context().profile("dgx-h100").with_overrides({"communication.library": "gloo"})) == "gloo"


def test_small_message_on_one_node_is_ring_ll_at_nccl_latencies():
    # ring/LL: 6.6 + 14 x 0.6 = 15.0 us; tree/LL: 6.8 + 2 x 7 x 0.6 = 15.2 us. LL's bus bandwidth
    # min(87.7, 370.8 / 4) = 87.7 GB/s, algorithm bandwidth x 8/14
    p = _profile([NVL])
    c = collective_time("allreduce", 1024, Group(8, 1), p)
    assert c.algorithm == "ring/LL"
    assert c.time == pytest.approx(15.0 * US + 1024 / (87.7e9 * 8 / 14))


def test_nvls_for_large_buffers_on_eight_gpus_with_its_curve():
    p = _profile([NVLS])
    m = 2.0**33
    c = collective_time("allreduce", m, Group(8, 1), p)
    assert c.algorithm == "nvls/Simple"
    # NVLS hop 23 us; 275 GB/s; the transfer's ideal 31.2 ms is past the curve's last point (0.99)
    assert c.time == pytest.approx(23 * US + m / (275e9 * 0.99))
    # without NVLS the same buffer runs as a ring at 450 x 0.824 GB/s x 8/14
    ring = collective_time("allreduce", m, Group(8, 1), _profile([NVL]))
    assert ring.algorithm == "ring/Simple"
    eff = efficiency_at(SIMPLE_EFFICIENCY["ring"], m / (370.8e9 * 8 / 14))
    assert ring.time == pytest.approx((8.4 + 14 * 3.4) * US + m / (370.8e9 * 8 / 14 * eff))


def test_two_nodes_tree_ll_latency_and_nvls_tree_bounded_by_the_nics():
    p = _profile([NVLS, {**IB, "size": 2}], nodes=2, nics=8)
    # tree/LL on 2 x 8: 6.8 + 2 (7 x 0.6 x 1.8 + 1 x 5.0) = 31.92 us
    c = collective_time("allreduce", 8, Group(8, 2), p)
    assert c.algorithm == "tree/LL" and c.time == pytest.approx(31.92 * US, rel=1e-3)
    # one slow NIC per node: NVLS-tree (23 + 2 x 14 us) at the node's NIC rate, 0.97 x 5 GB/s
    slow = _profile([NVLS, {**IB, "size": 2, "bandwidth": 5e9}], nodes=2, nics=1)
    m = 2.0**34
    t = collective_time("allreduce", m, Group(8, 2), slow, "nvls-tree").time
    eff = efficiency_at(SIMPLE_EFFICIENCY["multi-node"], m / 4.85e9)
    assert t == pytest.approx(51 * US + m / (4.85e9 * eff))


def test_two_node_allreduce_can_beat_the_ring_only_with_a_tree():
    """NCCL's tree on two nodes is not NIC-bound (nccl-tests #196, S. Jeaugey); the ring is."""
    p = _profile([NVL, {**IB, "size": 2, "bandwidth": 12.5e9}], nodes=2, nics=8)
    m = 2.0**32
    ring = collective_time("allreduce", m, Group(8, 2), p, "ring").time  # generic ring: NIC-bound
    auto = collective_time("allreduce", m, Group(8, 2), p)
    assert auto.algorithm.startswith("tree") and auto.time < ring


def test_named_nccl_algorithms_need_nccl_and_a_level_that_offers_them():
    with pytest.raises(ValueError, match="not defined"):
        collective_time("allreduce", 1e6, Group(8, 1), _profile([NVL]), "nvls")
    with pytest.raises(ValueError, match="NCCL"):
        collective_time("allreduce", 1e6, Group(8, 1), _profile([NVLS], comm={"library": "mpi"}), "nvls")


def test_gloo_and_ps_libraries():
    sw = {"name": "eth", "topology": "switch", "size": 8, "bandwidth": 1.25e9, "latency": 50e-6}
    gloo = _profile([sw], dpn=1, nodes=8, comm={"library": "gloo"})
    g = Group(1, 8)
    c = collective_time("allreduce", 1e8, g, gloo)
    assert c.algorithm in ("ring", "rabenseifner")
    assert c.time == min(collective_time("allreduce", 1e8, g, gloo, a).time for a in ("ring", "rabenseifner"))
    ps = _profile([sw], dpn=1, nodes=8, comm={"library": "ps"})
    push = collective_time("alltoall", 1e8, g, ps, "direct").time
    c = collective_time("allreduce", 1e8, g, ps)
    # push every rank's buffer to the 8 server shards, pull the sums: 2 x (1 latency + 7/8 m / B)
    assert c.algorithm == "ps" and c.time == pytest.approx(2 * push) == pytest.approx(2 * (50e-6 + 7 / 8 * 1e8 / 1.25e9))


def test_launch_overhead_adds_to_every_candidate():
    base = collective_time("allreduce", 4096, Group(8, 1), _profile([NVL]))
    late = collective_time("allreduce", 4096, Group(8, 1), _profile([NVL], comm={"launch_overhead": 10e-6}))
    assert late.time - base.time == pytest.approx(10e-6)


def test_other_ops_are_rings_and_alltoall_is_direct():
    p = _profile([NVL])
    c = collective_time("allgather", 2.0**30, Group(8, 1), p)
    assert c.algorithm == "ring/Simple"
    # all-gather: 7 steps; 8.4 + 7 x 3.4 us; bus 370.8 GB/s x 8/7
    eff = efficiency_at(SIMPLE_EFFICIENCY["ring"], 2.0**30 / (370.8e9 * 8 / 7))
    assert c.time == pytest.approx((8.4 + 7 * 3.4) * US + 2.0**30 / (370.8e9 * 8 / 7 * eff))
    assert collective_time("alltoall", 1e6, Group(8, 1), p).algorithm == "direct"
    assert math.isfinite(collective_time("broadcast", 1e6, Group(8, 1), p).time)


def test_a_slow_network_keeps_its_own_message_latency():
    """TCP over 10 GbE starts a message in tens of us, more than NCCL's InfiniBand-era network
    constants: an inter-node hop costs the larger. 2 nodes x 1 GPU: tree/Simple 0 + 2 x 1 x 37 us
    (its NCCL constant, 28 us, is now under the network's), ahead of tree/LL's 6.8 + 2 x 37 us."""
    eth = {"name": "ethernet-10g", "topology": "switch", "size": 2, "bandwidth": 1.25e9, "latency": 37e-6}
    c = collective_time("allreduce", 8, Group(1, 2), _profile([eth], dpn=1, nodes=2))
    assert c.algorithm == "tree/Simple" and c.time == pytest.approx(2 * 37 * US, rel=2e-3)
    fast = collective_time("allreduce", 8, Group(1, 2), _profile([{**eth, "latency": 1e-6}], dpn=1, nodes=2))
    # tree/LL: 6.8 + 2 x 5.0 us, plus 8 B at 0.5 x 0.92 x (2 x 1.25 GB/s: two nodes) / 3.8
    assert fast.algorithm == "tree/LL" and fast.time == pytest.approx((6.8 + 2 * 5.0) * US + 8 / (0.5 * 0.92 * 2.5e9 / 3.8))


def test_a_two_node_tree_is_bounded_by_twice_the_nics():
    """Two nodes of 4 GPUs on PCIe (16 GB/s x 0.76) with one 10 GbE NIC each: every byte of a
    node's buffer crosses once each way, so the tree runs at most at the NIC's 1.25 GB/s
    (algorithm bandwidth), not at the PCIe rate NCCL's search would see inside the node."""
    pcie = {"name": "pcie3", "topology": "switch", "size": 4, "bandwidth": 16e9, "latency": 1e-6, "link": "pcie"}
    eth = {"name": "ethernet-10g", "topology": "switch", "size": 2, "bandwidth": 1.25e9, "latency": 1e-6}
    p = _profile([pcie, eth], dpn=4, nodes=2, nics=1)
    m = 2.0**30
    t = collective_time("allreduce", m, Group(4, 2), p).time
    assert t >= m / 1.25e9  # no faster than the NIC moving the buffer once


def test_a_slow_intra_node_link_keeps_its_own_hop_latency():
    """A declared NVLink hop latency above NCCL's LL constant (0.6 us) is what the LL hops cost:
    ring/LL on 8 GPUs 6.6 + 14 x 2 us."""
    c = collective_time("allreduce", 8, Group(8, 1), _profile([{**NVL, "latency": 2e-6}]))
    assert c.algorithm == "ring/LL" and c.time == pytest.approx((6.6 + 14 * 2.0) * US, rel=1e-3)


def test_transport_follows_nccls_default_p2p_level():
    from suite.perf.network.nccl import transport

    # paths.cc ncclTopoCheckP2p (2.19+): P2P up to PXB ("don't use P2P across CPU host bridges")
    assert [transport(p, "intel", 2) for p in ("PIX", "PXB", "PHB", "SYS")] == ["p2p", "p2p", "shm", "shm"]
    # ... except AMD hosts with at most two GPUs, which may use P2P up to SYS
    assert [transport(p, "amd", 2) for p in ("PHB", "SYS")] == ["p2p", "p2p"]
    assert transport("PHB", "amd", 4) == "shm"
    assert transport(None, "intel", 8) == "p2p"  # NVLink, or no path declared
    with pytest.raises(ValueError, match="expected one of"):
        transport("NODE", "intel", 2)  # nvidia-smi's NODE is written PHB


def test_an_intel_root_complex_costs_the_path_a_sixth_of_its_bandwidth():
    from suite.perf.network.nccl import pcie_path_bw

    # topo.h PCI_BW = 12 GB/s for a Gen3 x16 path; search.cc followPath charges 12 * 6/5 = 14.4
    # GB/s of link per 12 GB/s channel on a PHB path through an Intel CPU: 10 GB/s fit the link
    assert pcie_path_bw(12e9, "PHB", "intel") == pytest.approx(10e9)
    assert pcie_path_bw(12e9, "SYS", "intel") == pytest.approx(10e9)
    assert pcie_path_bw(12e9, "PXB", "intel") == 12e9  # below the CPU: no charge
    assert pcie_path_bw(12e9, "PHB", "amd") == 12e9
    assert pcie_path_bw(12e9, None, None) == 12e9


def test_a_pcie_path_through_the_intel_root_complex_is_priced_through_collective_time(shared_context):
    nc = shared_context.profile("azure-nc12s-v3")  # 2 x V100 PCIe, path PHB, Intel E5-2690 v4 host
    assert nc.network[0].path == "PHB" and nc.cpu is not None and nc.cpu.vendor == "intel"
    m = 2**31
    # ring/Simple on 2 GPUs: launch 2.9 + base 8.4 + 2 PCIe hops x 5.7 us; m over 16 GB/s x 0.75
    # (PCI_BW) / 1.2 (Intel root complex) x 0.963 (the ring curve at this size)
    lat = (2.9 + 8.4 + 2 * 5.7) * US
    t = collective_time("allreduce", m, Group(2, 1), nc)
    assert t.algorithm == "ring/Simple"
    assert t.time == pytest.approx(lat + m / (16e9 * 0.75 / 1.2 * 0.963), rel=1e-6)
    # the same GPUs behind one PCIe switch (PXB): P2P, no root-complex charge
    near = collective_time("allreduce", m, Group(2, 1), nc.with_overrides({"network.0.path": "PXB"}))
    assert near.time == pytest.approx(lat + m / (16e9 * 0.75 * 0.963), rel=1e-6)


def test_the_pcie_path_and_the_host_vendor_are_recorded_as_read(shared_context):
    """`--set network.0.path` / `cpu.vendor` move a PCIe all-reduce (the test above): a tracked
    profile view must record both as read, and the view must price as the profile does."""
    from suite.hardware.tracking import tracked

    nc = shared_context.profile("azure-nc12s-v3")
    view, reads = tracked(nc)
    t = collective_time("allreduce", 2**24, Group(2, 1), view).time
    assert t == collective_time("allreduce", 2**24, Group(2, 1), nc).time
    assert {"network.0.path", "cpu.vendor"} <= reads
