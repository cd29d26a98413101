"""The ``[ext.hopper]`` profile table (thread-block clusters and DSMEM of a Hopper-class GPU):
its schema, registered through the ``suite_profile_extensions`` hook. The fields and their
meaning are documented in :mod:`suite_clusterfusion.hopper`, which reads them.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from suite.api import BandwidthQ, FrequencyQ, ProfileExtension, TimeQ

__all__ = ["HopperExt"]


class HopperExt(ProfileExtension):
    """``[ext.hopper]``: thread-block clusters and DSMEM of a Hopper-class GPU (see module docstring)."""

    dsmem_bandwidth: BandwidthQ
    dsmem_latency_cluster: tuple[int, ...] = Field(min_length=1)
    dsmem_latency_cycles: tuple[float, ...] = Field(min_length=1)
    global_latency_cycles: float = Field(gt=0)
    max_cluster_size: int = Field(ge=1)
    max_cluster_size_nonportable: int | None = Field(default=None, ge=1)
    sm_clock: FrequencyQ
    hbm_efficiency: float | None = Field(default=None, gt=0, le=1)
    kernel_gap: TimeQ | None = None

    @model_validator(mode="after")
    def _check(self):
        if len(self.dsmem_latency_cluster) != len(self.dsmem_latency_cycles):
            raise ValueError(f"dsmem_latency_cluster and dsmem_latency_cycles must have equal lengths, got "
                             f"{len(self.dsmem_latency_cluster)} and {len(self.dsmem_latency_cycles)}")
        if list(self.dsmem_latency_cluster) != sorted(set(self.dsmem_latency_cluster)):
            raise ValueError(f"dsmem_latency_cluster must be strictly ascending, got {list(self.dsmem_latency_cluster)}")
        if any(c < 1 for c in self.dsmem_latency_cluster) or any(v <= 0 for v in self.dsmem_latency_cycles):
            raise ValueError("dsmem latency cluster sizes must be >= 1 and cycles > 0")
        if self.max_cluster_size_nonportable is not None and self.max_cluster_size_nonportable < self.max_cluster_size:
            raise ValueError(f"max_cluster_size_nonportable ({self.max_cluster_size_nonportable}) must be >= "
                             f"max_cluster_size ({self.max_cluster_size})")
        return self
