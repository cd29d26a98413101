"""COMET's constants that the declaration needs at import time (parameter defaults and choices,
the grid names, the compute-only null): one definition, imported by :mod:`suite_comet.model` and
:mod:`suite_comet.technique`. Imports nothing, so listing the technique stays cheap.
"""

from __future__ import annotations

__all__ = ["RECOMPUTE", "DEFAULT_EXPANSION_BANDWIDTH", "GRIDS", "COMPUTE_ONLY_SPREAD", "grid_inputs"]


#: recomputation choices, index = the code used in the strategy arrays
RECOMPUTE = ("none", "selective", "full")
#: PCIe 5.0 x16 per direction (PCI-SIG: 32 GT/s x 16 lanes, 128b/130b = 63 GB/s), the link CXL memory
#: uses; COMET's own expansion bandwidth is not found
DEFAULT_EXPANSION_BANDWIDTH = 63e9

#: The fixed grid of clusters (our assumption; COMET's node hardware, network and node counts are not
#: found). Never changed after a verdict is seen.
GRIDS = {
    "comet-v2": {
        "nodes": 128,  # x 8 GPUs = 1,024 GPUs; our choice (no node count is published)
        "devices": (  # (device profile, node profile giving the NVLink level)
            ("nvidia-a100-sxm4-40gb", "dgx-a100"),
            ("nvidia-a100-sxm4-80gb", "dgx-a100"),
            ("nvidia-h100-sxm5-80gb", "dgx-h100"),
            ("nvidia-h200-sxm-141gb", "hgx-h200"),
        ),
        # per GPU: HDR 100 (one port split), HDR 200, NDR 400 Gb/s, as in the shipped clusters
        "network": ("100 Gbit/s", "200 Gbit/s", "400 Gbit/s"),
        # expansion per node: none / 256 GB / 1 TB (our choice), at PCIe 5.0 x16 per direction
        "expansion": (0.0, 256e9, 1e12),
        "expansion_bandwidth": DEFAULT_EXPANSION_BANDWIDTH,
        "batch": 3072,  # the Megatron 1T row's global batch
    },
}


#: peak bf16 FLOP/s of the grid's fastest over its slowest node type (H100/H200 SXM 989.5 TFLOP/s dense,
#: A100 312 TFLOP/s; NVIDIA datasheets via the shipped device profiles): the compute-only null of the
#: spread claim (zero communication, unlimited memory); tests recompute it from the profiles
COMPUTE_ONLY_SPREAD = 989.5 / 312.0


def grid_inputs() -> tuple[str, ...]:
    """The profiles every grid names, as ``Technique.uses`` inputs (``"profile:NAME"``): the runner
    resolves them through the command's context and hashes them into every case key."""
    names = {n for g in GRIDS.values() for pair in g["devices"] for n in pair}
    return tuple(f"profile:{n}" for n in sorted(names))
