"""SuperNeurons' Table 4 ResNet family, as constants the declaration needs at import time; this
module imports nothing, so listing the technique does not import the model (which imports
:data:`FIXED_UNITS` from here: one definition)."""

from __future__ import annotations

__all__ = ["N1", "N2", "N4", "FIXED_UNITS", "RESNET_2500_UNITS_DEPTH"]

#: SuperNeurons Table 4 caption: depth = 3(n1+n2+n3+n4)+2, n1=6, n2=32, n4=6, n3 varied
#: (bottleneck units per stage; the model builds the family's ResNet (N1, N2, n3, N4) from these).
N1, N2, N4 = 6, 32, 6
FIXED_UNITS = N1 + N2 + N4
#: "ResNet with 2500 residual units" (abstract) in that family: 3 x 2500 + 2 layers.
RESNET_2500_UNITS_DEPTH = 3 * 2500 + 2
