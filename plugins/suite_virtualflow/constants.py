"""VirtualFlow's constants that the declaration needs at import time, in a module that imports
nothing, so listing the technique does not import the model or the trace replay
(:mod:`suite_virtualflow.elastic` imports and re-exports them; this is their one definition)."""

from __future__ import annotations

__all__ = ["GPU_RELEASE_WAIT", "TRACE_NAME"]

#: ``GPU_RELEASE_WAIT_SECONDS`` of the authors' run_medium20_elasticity_experiment.sh.
GPU_RELEASE_WAIT = 10.0

#: Name of the workload :data:`suite_virtualflow.elastic.TRACE` (the authors' medium20_8jph.json).
TRACE_NAME = "virtualflow-medium20-8jph"
