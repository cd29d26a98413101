"""Constants the Mixed-TD declaration needs at import time, defined here (importing nothing) so that
listing the technique does not import :mod:`suite_mixed_td.model`; the model imports them from here."""

from __future__ import annotations

#: DSP slices per 8-bit MAC of parallelism. Unknown for the authors' 8-bit BFP datapath (not in the
#: sources read); one per-toolflow constant, 1 (a DSP48E2 per multiplier, the fpgaConvNet default
#: for 16-bit data), stated as an assumption, never tuned.
DSP_PER_MAC = 1.0
