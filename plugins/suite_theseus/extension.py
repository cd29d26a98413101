"""The ``[ext.theseus]`` profile table: the storage and host-memory figures the Theseus model needs
beyond the core schema. Registered through the ``suite_profile_extensions`` hook.

Every figure is a string with a unit; each has its source (or the word ASSUMPTION) in the
profile's ``[sources]``. Fields (per node):

host_memory_bandwidth : bandwidth
    DRAM bandwidth of the node's CPUs (spill copies into the pinned host pool are bounded by it
    and by the PCIe link).
nvme_capacity : bytes
    Local NVMe capacity (the disk spill tier, and where the tables are stored when
    ``data_on_nvme``).
nvme_bandwidth : bandwidth
    Sequential read bandwidth of the local NVMe array (spill and, when the data live there, scan).
storage_bandwidth : bandwidth, optional
    Read bandwidth from where the tables live when not on the local NVMe (a storage network);
    absent: the tables are read from the local NVMe at ``nvme_bandwidth``.
data_on_nvme : bool
    Whether the (columnar) tables are stored on the local NVMe; then they take NVMe capacity away
    from the spill tier.
"""

from __future__ import annotations

from suite.api import BandwidthQ, BytesQ, ProfileExtension

__all__ = ["TheseusExt"]


class TheseusExt(ProfileExtension):
    """``[ext.theseus]``: per-node storage and host-memory figures (see the module doc)."""

    host_memory_bandwidth: BandwidthQ  # B/s per node
    nvme_capacity: BytesQ  # B per node
    nvme_bandwidth: BandwidthQ  # B/s per node
    storage_bandwidth: BandwidthQ | None = None  # B/s per node
    data_on_nvme: bool = True
