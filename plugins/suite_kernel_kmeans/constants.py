"""kernel-kmeans constants the declaration needs (parameter choices), in a module that imports
nothing, so :mod:`suite_kernel_kmeans.technique` can be listed without importing the model or
the solvers. :mod:`suite_kernel_kmeans.algorithm` and :mod:`suite_kernel_kmeans.model` import
them from here (one definition)."""

from __future__ import annotations

__all__ = ["KERNELS", "DTYPE_BYTES"]

#: Kernel functions (paper: polynomial (x.y + 1)^2; the others are our extension).
KERNELS = ("linear", "polynomial", "gaussian", "sigmoid")
#: Bytes per element of X, K and E in the model, by precision name (paper: fp32).
DTYPE_BYTES = {"fp32": 4, "fp64": 8}
