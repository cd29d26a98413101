"""DHelix's technique constants, in a module that imports nothing, so the declaration
(:mod:`suite_dhelix.technique`) can read its defaults without importing the cost model.
:mod:`suite_dhelix.model` imports them from here (one definition)."""

from __future__ import annotations

__all__ = ["SIGMA"]

#: Co-execution slowdown of compute while the other strand communicates (TWIST blog Fig. 3: layer
#: compute 16.5 -> 18.3 ms, +10.9 %; the authors' blog, secondary). One technique constant.
SIGMA = 0.109
