"""collective_time over a profile's levels, against hand calculations."""

import pytest

from suite.hardware import get_profile
from suite.perf import Group, collective_time


def test_single_node_ring_allreduce_by_hand():
    p = get_profile("selene-dgx-a100")  # NVLink3 level: 300 GB/s, 1 us
    c = collective_time("allreduce", 1e9, Group(8, 1), p)
    # ring: 2 (p-1) alpha + 2 (p-1)/p m / B = 14 us + 1.75e9 / 3e11 s
    assert c.time == pytest.approx(14e-6 + 1.75e9 / 3e11)
    assert c.bytes_per_level[0] == pytest.approx(1.75e9) and c.bytes_per_level[-1] == 0.0


def test_one_rank_costs_nothing():
    p = get_profile("selene-dgx-a100")
    assert collective_time("allreduce", 1e9, Group(1, 1), p).time == 0.0


def test_inner_level_matters_when_the_group_spans_devices_of_a_node():
    p = get_profile("selene-dgx-a100")
    slow = p.with_overrides({"network.0.bandwidth": "150 GB/s"})
    g = Group(8, 4)
    assert collective_time("allreduce", 1e8, g, slow).time > collective_time("allreduce", 1e8, g, p).time
    one = Group(1, 4)  # one rank per node: the inner level is not crossed
    assert collective_time("allreduce", 1e8, one, slow).time == collective_time("allreduce", 1e8, one, p).time
