"""DHelix's technique constants, in a module that imports nothing, so the declaration
(:mod:`suite_dhelix.technique`) can read its defaults without importing the cost model.
:mod:`suite_dhelix.model` imports them from here (one definition)."""

from __future__ import annotations

__all__ = ["SIGMA", "EFFICIENCY"]

#: Co-execution slowdown of compute while the other strand communicates (TWIST blog Fig. 3: layer
#: compute 16.5 -> 18.3 ms, +10.9 %; the authors' blog, secondary). One technique constant.
SIGMA = 0.109
#: Achieved fraction of the bf16 peak for every compute operator (one technique constant):
#: calibration from the TWIST blog Fig. 3, whose perfect-overlap ceiling is 536 TFLOP/s = 54 % of
#: the H800's 989.5 TFLOP/s dense bf16 peak, i.e. the compute-only rate of a whole layer.
EFFICIENCY = 0.54
