"""PFedDST's constants that the declaration needs at import time, in a module that imports
nothing, so listing the technique does not import the round-time model
(:mod:`suite_pfeddst.model` imports and re-exports them; this is their one definition)."""

from __future__ import annotations

__all__ = ["DEFAULT_EFFICIENCY"]

#: Achieved fraction of fp32 peak for the tiny GEMMs of this MLP when the device has no
#: calibrated ``gemm_fp32`` curve. ASSUMPTION (no measurement on a Jetson Nano or a Pi 4 was
#: found): docs/techniques/pfeddst.md gives the round time's sensitivity to it.
DEFAULT_EFFICIENCY = 0.2
