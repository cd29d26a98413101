"""The stencil technique's constants that the declaration needs at import time (the ``kernel`` and
``dtype`` choices): one definition, imported by :mod:`suite_cerebras_stencil.kernels`,
:mod:`suite_cerebras_stencil.model` and :mod:`suite_cerebras_stencil.technique`. Imports
nothing, so listing the technique stays cheap.
"""

from __future__ import annotations

__all__ = ["KERNELS", "DTYPE_BYTES"]

#: the two stencils (:mod:`suite_cerebras_stencil.kernels`)
KERNELS = ("diffusion7", "advection")
#: bytes per field value of each precision
DTYPE_BYTES = {"fp32": 4, "fp16": 2}
