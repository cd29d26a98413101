"""The ``[ext.pcie_switch]`` profile table: GPUs that share one PCIe switch and its uplink.
Registered through the ``suite_profile_extensions`` hook.
"""

from __future__ import annotations

from pydantic import Field

from suite.api import BandwidthQ, ProfileExtension

__all__ = ["PcieSwitchExt"]


class PcieSwitchExt(ProfileExtension):
    """``[ext.pcie_switch]``: GPUs that share one PCIe switch and the switch's uplink to the CPU.

    ``gpus_per_switch`` consecutive GPUs hang off one switch; ``uplink_bandwidth`` (B/s, per
    direction) is what they share on the way to host memory. A node whose GPUs each have their
    own link to the CPU (Perlmutter) declares none.
    """

    gpus_per_switch: int = Field(ge=1)
    uplink_bandwidth: BandwidthQ
