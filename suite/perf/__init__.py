"""Shared cost-model primitives (pure functions, SI units), each with its formula's source.

* :mod:`suite.perf.comm` -- alpha-beta point-to-point, ring/tree/Rabenseifner/hierarchical
  all-reduce, reduce-scatter, all-gather, broadcast, sharded parameter-server push/pull.
* :mod:`suite.perf.compute` -- roofline, per-layer times, host<->device transfer, 1F1B pipeline.
* :mod:`suite.perf.timeline` -- wait-free backprop (layer-wise and grouped).
* :mod:`suite.perf.network` -- alpha and beta of a profile's network level.
* :mod:`suite.perf.collective` -- every collective over all the profile's levels (topology,
  NICs, placement, algorithm choice, reduction term); the one entry point for techniques.
* :mod:`suite.perf.netsim` -- the same collectives as event-level runs over per-link queues.
* :mod:`suite.perf.sensitivity` -- the communication family's conformance check.
"""

from suite.perf.comm import (
    allgather_time,
    allreduce_lower_bound,
    broadcast_time,
    hierarchical_allreduce_time,
    p2p_time,
    ps_push_pull_time,
    rabenseifner_allreduce_time,
    recursive_doubling_allreduce_time,
    reduce_scatter_time,
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
from suite.perf.collective import CollectiveCost, Group, collective_time, dimensions, group_of, reduction_gamma
from suite.perf.network import alpha_beta, allreduce_fit
from suite.perf.timeline import Timeline, grouped_wfbp_timeline, sequential_iteration_time, wfbp_timeline
from suite.perf.threads import blas_threads, measurement_clock

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
    "measurement_clock",
]
