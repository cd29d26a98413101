"""The ``[ext.comet]`` profile table: a node's memory-expansion tier (CXL-attached memory), which
COMET's model spills optimizer states to. Registered through the ``suite_profile_extensions`` hook
by reference (``suite_comet.extension:CometExt``), so the declaration loads no pydantic.

Fields (per node; each figure's source, or the word ASSUMPTION, in the profile's ``[sources]``):

capacity : bytes
    Capacity of the tier (>= 0).
bandwidth : bandwidth
    Per direction, shared by the node's GPUs (> 0).
latency : time
    Per access burst (default 0).
"""

from __future__ import annotations

from pydantic import Field

from suite.api import BandwidthQ, BytesQ, ProfileExtension, TimeQ

__all__ = ["CometExt"]


class CometExt(ProfileExtension):
    """``[ext.comet]``: a node's memory-expansion tier (see the module doc)."""

    capacity: BytesQ = Field(ge=0)
    bandwidth: BandwidthQ = Field(gt=0)
    latency: TimeQ = 0.0
