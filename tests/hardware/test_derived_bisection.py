"""Bisection bandwidth from the fields the schema records: a fat-tree's / dragonfly's taper and
leaf, a torus's / mesh's dims. Values are counted by hand in each case."""

from __future__ import annotations

import pytest

from suite.hardware import ProfileLibrary
from suite.hardware.derived import bisection_bandwidth, derived
from suite.resources import builtin_dir

LIB = ProfileLibrary([builtin_dir("hardware_profiles")])
# ft-32dev: 4 nodes of 8 devices, 8 NICs of 25 GB/s per node: a node injects 200 GB/s
FT = LIB.get("ft-32dev")


def _formula(prof, i=1):
    return next(d.formula for d in derived(prof) if d.name == f"network.{i}.bisection_bandwidth")


@pytest.mark.parametrize("over,leaf,expected", [
    (1, None, 2 * 200e9),       # 4 nodes: 2 x 200 GB/s cross, non-blocking
    (4, None, 2 * 200e9 / 4),   # down:up 4:1: the halves' uplinks carry a quarter
    (4, 2, 2 * 200e9 / 4),      # two leaves of 2: the cut runs through the tapered uplinks
    (4, 4, 2 * 200e9),          # one leaf holds all 4: the taper is never crossed
])
def test_fat_tree_bisection_divides_by_the_oversubscription(over, leaf, expected):
    ov = {"network.1.oversubscription": over} | ({"network.1.leaf_size": leaf} if leaf else {})
    prof = FT.with_overrides(ov)
    assert bisection_bandwidth(prof, 1) == pytest.approx(expected)
    assert ("non-blocking" in _formula(prof)) == (over == 1)


def test_dragonfly_bisection_divides_by_the_global_taper():
    # 8 nodes in groups of 4, global taper 2: 4 nodes x 200 GB/s / 2 = 400 GB/s
    prof = FT.with_overrides({"network.1.topology": "dragonfly", "network.1.size": 8,
                              "network.1.leaf_size": 4, "network.1.oversubscription": 2})
    assert bisection_bandwidth(prof, 1) == pytest.approx(400e9)


@pytest.mark.parametrize("topo,size,dims,expected", [
    # 4-ary 2-cube: Dally & Towles' 4N/k = 16 channels, 8 per direction, of 200/4 = 50 GB/s
    ("torus", 16, [4, 4], 8 * 50e9),
    ("mesh", 16, [4, 4], 4 * 50e9),             # a mesh has no wrap-around: 2N/k = 8, 4 per direction
    ("torus", 24, [3, 4, 2], 12 * 200e9 / 6),   # cut across the 4: 24/4 = 6 rows x 2 links of 200/6 GB/s
    ("torus", 16, None, 8 * 50e9),              # dims absent: the most square shape, 4 x 4
    ("ring", 6, None, 2 * 100e9),               # 1-D: 2 links of 200/2 GB/s
    ("torus", 12, [4, 4], None),                # dims that do not multiply to size: not derived
])
def test_torus_and_mesh_bisection_from_dims(topo, size, dims, expected):
    ov = {"network.1.topology": topo, "network.1.size": size} | ({"network.1.dims": dims} if dims else {})
    got = bisection_bandwidth(FT.with_overrides(ov), 1)
    assert got == (None if expected is None else pytest.approx(expected))


def test_shipped_mesh_node_now_derived():
    # dgx-1-v100: 8 GPUs as a 2 x 4 mesh of 150 GB/s each: 2 rows x 1 link of 150/4 GB/s
    d = {x.name: x for x in derived(LIB.get("dgx-1-v100"))}
    assert d["network.0.bisection_bandwidth"].value == pytest.approx(75e9)
    assert "2x4" in d["network.0.bisection_bandwidth"].formula
