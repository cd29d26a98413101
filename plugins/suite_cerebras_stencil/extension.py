"""The ``[ext.cerebras]`` profile table: the wafer's processing-element (PE) mesh and its I/O.

Registered through the ``suite_profile_extensions`` hook. Every figure is a string with a unit
(bandwidths, times) or an integer, with its source in the profile's ``[sources]``.

Fields
------
pe_rows, pe_cols : int, optional
    The PE mesh the stencil is laid out on (one (x, y) column, or a block of columns, per PE).
    Cerebras does not publish the usable mesh for every generation; when either is absent the
    mesh is taken as ``device.cores`` PEs.
fabric_bandwidth : bandwidth
    Aggregate on-wafer fabric bandwidth (Cerebras: 100 Pbit/s WSE-1, 220 Pbit/s WSE-2); the
    model gives each PE ``fabric_bandwidth / cores`` for its halo traffic.
hop_latency : time, optional
    Latency of one fabric hop (not published; absent = 0, a bandwidth-only halo).
io_bandwidth : bandwidth, optional
    Ingress (and, separately, egress) bandwidth of the CS system (12 x 100 GbE); needed for
    ``io = "streamed"``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from suite.api import BandwidthQ, TimeQ

__all__ = ["CerebrasExt"]


class CerebrasExt(BaseModel):
    """``[ext.cerebras]``: PE mesh, fabric and I/O figures of a Cerebras wafer (see module doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    pe_rows: int | None = Field(default=None, ge=1)
    pe_cols: int | None = Field(default=None, ge=1)
    fabric_bandwidth: BandwidthQ  # B/s, aggregate over the wafer
    hop_latency: TimeQ | None = None  # s, one fabric hop
    io_bandwidth: BandwidthQ | None = None  # B/s, per direction, whole system
