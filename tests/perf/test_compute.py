"""suite.perf.compute: host <-> device copies over the device's host link, against hand values."""

import pytest

from suite.errors import ProfileError
from suite.perf import host_link_time


def test_host_link_time_over_the_devices_pcie_link(shared_context):
    """A100 SXM4: PCIe 4.0 x16 = 31.5 GB/s per direction, no latency declared; 1 GB at 85% of the
    link: 1e9 / (0.85 * 31.5e9) = 37.35 ms (hand value)."""
    ctx = shared_context
    a100 = ctx.profile("nvidia-a100-sxm4-80gb")
    assert host_link_time(1e9, a100, 0.85) == pytest.approx(0.0373483, rel=1e-5)
    assert host_link_time(0.0, a100) == 0.0
    faster = a100.with_overrides({"device.host_link.bandwidth": "63 GB/s"})
    assert host_link_time(1e9, faster) == pytest.approx(1e9 / 63e9)
    with pytest.raises(ValueError, match="efficiency"):
        host_link_time(1e9, a100, 0.0)
    with pytest.raises(ProfileError, match="device.host_link"):
        host_link_time(1e9, ctx.profile("cerebras-wse-2"))
