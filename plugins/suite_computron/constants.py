"""Computron's constants that the declaration needs at import time (parameter defaults and
bounds): one definition, imported by :mod:`suite_computron.model`, :mod:`suite_computron.execute`
and :mod:`suite_computron.technique`. Imports nothing, so listing the technique stays cheap.
"""

from __future__ import annotations

__all__ = ["DEFAULT_EFFICIENCY", "MAX_COPY_BYTES"]

#: Achieved fraction of the device's fp16 tensor peak in the prefill GEMMs: 0.5, the upper end
#: of what Megatron-LM reaches on A100s [Narayanan21, Table 1: 44-52 %]. Small serving batches
#: are below that; service times (ms) are small next to swaps (~100 ms), so the latencies the
#: claims compare hardly move with it (docs page).
DEFAULT_EFFICIENCY = 0.5

#: Largest ``copy_bytes`` the execute fidelity accepts (B): it allocates two pools of that size.
MAX_COPY_BYTES = 4 * 2**30
