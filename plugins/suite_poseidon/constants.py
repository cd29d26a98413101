"""Poseidon's constants that the declaration needs at import time, kept in a module that imports
nothing, so listing the technique does not import the cost model (:mod:`suite_poseidon.model`
re-exports them; this is their one definition)."""

from __future__ import annotations

__all__ = ["DEFAULT_EFFICIENCY"]

#: Achieved fraction of the device's fp32 peak used for every claim and scenario (never per
#: claim). Source: cuDNN-5-era measured training time of VGG-19 on a Maxwell GTX Titan X,
#: batch 16, forward+backward 323.40 ms (J. Johnson, ``jcjohnson/cnn-benchmarks`` README,
#: Torch + cuDNN 5005): with VGG-19's ~117.8 GFLOP per sample for forward+backward (3 x the
#: 39.3 GFLOP forward, FLOP = 2 MAC) that is 5.83 TFLOP/s, i.e. 0.88 of the 6.6 TFLOP/s
#: boost-clock peak (0.95 of the 6.1 TFLOP/s base-clock one). We take 0.85, just under that
#: range, because Caffe / TensorFlow 0.10 (Poseidon's hosts) were not faster than Torch+cuDNN.
#: The docs page shows how the speed-ups move with this constant.
DEFAULT_EFFICIENCY = 0.85
