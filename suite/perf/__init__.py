"""Shared cost-model primitives (pure functions, SI units), each with its formula's source.

* :mod:`suite.perf.network` -- the network model and its simulation: every collective over all
  the profile's levels (:func:`collective_time`, the one entry point for techniques: topology,
  NICs, placement, algorithm choice per communication library, reduction term), NCCL's tuner,
  the alpha-beta formulas (point-to-point, ring/tree/Rabenseifner/hierarchical all-reduce,
  reduce-scatter, all-gather, broadcast, sharded parameter-server push/pull), alpha and beta of
  a profile's level, and the event-level simulation (:mod:`suite.perf.network.netsim`).
* :mod:`suite.perf.compute` -- roofline, per-layer times, host<->device transfer, 1F1B pipeline.
* :mod:`suite.perf.timeline` -- wait-free backprop (layer-wise and grouped).
* :mod:`suite.perf.sensitivity` -- the communication family's conformance check.
"""

from suite.perf.network import (
    CollectiveCost,
    Group,
    allgather_time,
    allreduce_fit,
    allreduce_lower_bound,
    alpha_beta,
    broadcast_time,
    collective_time,
    dimensions,
    group_of,
    hierarchical_allreduce_time,
    p2p_time,
    ps_push_pull_time,
    rabenseifner_allreduce_time,
    recursive_doubling_allreduce_time,
    reduce_scatter_time,
    reduction_gamma,
    ring_allreduce_bytes_per_worker,
    ring_allreduce_time,
    tree_allreduce_time,
)
from suite.perf.compute import (
    attainable_flops,
    layer_times,
    machine_balance,
    pipeline_1f1b_time,
    pipeline_bubble_fraction,
    roofline_time,
    host_link_time,
    transfer_time,
)
from suite.perf.timeline import Timeline, grouped_wfbp_timeline, sequential_iteration_time, wfbp_timeline
from suite.perf.threads import blas_threads, collector_paused, measurement_clock

__all__ = [
    "p2p_time", "ring_allreduce_time", "tree_allreduce_time", "rabenseifner_allreduce_time",
    "recursive_doubling_allreduce_time", "hierarchical_allreduce_time", "reduce_scatter_time", "allgather_time", "broadcast_time",
    "ps_push_pull_time", "allreduce_lower_bound", "ring_allreduce_bytes_per_worker",
    "roofline_time", "attainable_flops", "machine_balance", "layer_times", "transfer_time", "host_link_time",
    "pipeline_1f1b_time", "pipeline_bubble_fraction",
    "Timeline", "wfbp_timeline", "grouped_wfbp_timeline", "sequential_iteration_time",
    "alpha_beta", "allreduce_fit",
    "collective_time", "Group", "CollectiveCost", "group_of", "dimensions", "reduction_gamma",
    "blas_threads",
    "collector_paused",
    "measurement_clock",
]
