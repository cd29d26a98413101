"""HetSeq's technique constants, in a module that imports nothing, so the declaration
(:mod:`suite_hetseq.technique`) can read its defaults without importing the cost model.
:mod:`suite_hetseq.model` imports them from here (one definition)."""

from __future__ import annotations

__all__ = ["README_SAMPLES", "DEFAULT_EFFICIENCY"]

#: samples of the README's 5-epoch run: its 1-node steps x global batch (267,139 x 128)
README_SAMPLES = 267_139 * 128

#: Fraction of the fp32 peak one BERT-base (sequence 128) training step sustains, technique-wide.
#: Source: calibration (:func:`suite_hetseq.model.calibrate_readme`) on the README's 1-node row (4 GPUs, 32
#: sequences each, 2.60 s/step) on the ``hetseq-readme`` profile (TITAN Xp assumed, PCIe 3.0
#: inside the node): 2.60 s minus the intra-node all-reduce of the fp32 gradient is the compute
#: of 32 x 67.05 GFLOP at this fraction of 12.15 TFLOP/s. The README's step includes data
#: loading and the optimizer, which this fraction absorbs.
DEFAULT_EFFICIENCY = 0.06907
