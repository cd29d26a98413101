"""The network model and its simulation: every collective a technique prices, over every level of
a hardware profile's network.

Start with :func:`collective_time` (the one entry point techniques use) and :func:`group_of`.
The modules, each one job:

* :mod:`suite.perf.network.collective` -- :func:`collective_time`: the algorithm choice per
  communication library (NCCL's tuner, MPICH's switch points, Gloo, a parameter server) and the
  priced lines' cache; the model's rules and references are in its docstring.
* :mod:`suite.perf.network.placement` -- :class:`Group`, :func:`dimensions`, the per-profile
  derived levels and the reduction term.
* :mod:`suite.perf.network.flat` -- one step of a traffic pattern on one level's topology and the
  algorithms over one dimension.
* :mod:`suite.perf.network.multilevel` -- the algorithms across several levels (hierarchical,
  one ring, recursive doubling / Rabenseifner with MPICH's fold, trees, all-to-all).
* :mod:`suite.perf.network.nccl` -- NCCL's (algorithm, protocol) candidates as its tuning model
  prices them.
* :mod:`suite.perf.network.comm` -- the textbook alpha-beta formulas (ring, tree, Rabenseifner,
  ...) on one flat network.
* :mod:`suite.perf.network.levels` -- alpha and beta of one profile level, published fits.
* :mod:`suite.perf.network.netsim` -- the same collectives as event-level runs over per-link
  queues (imports simpy; not re-exported here).

Before 0.3.0 these were ``suite.perf.collective``, ``suite.perf.comm``, ``suite.perf.nccl``,
``suite.perf.netsim`` and ``suite.perf.network`` (now this package); the first four remain as
deprecated aliases until 0.4.0.
"""

from suite.perf.network.collective import (
    ALGORITHMS,
    NCCL_ALGORITHMS,
    OPS,
    Recording,
    collective_time,
    record_levels,
)
import suite.perf.network.comm as _comm
from suite.perf.network.comm import *  # noqa: F403 - the alpha-beta formulas, named in comm.__all__
from suite.perf.network.levels import allreduce_fit, alpha_beta
from suite.perf.network.placement import CollectiveCost, Dim, Group, dimensions, group_of, reduction_gamma

__all__ = [
    "collective_time", "Group", "CollectiveCost", "Dim", "group_of", "dimensions", "reduction_gamma",
    "record_levels", "Recording", "OPS", "ALGORITHMS", "NCCL_ALGORITHMS",
    "alpha_beta", "allreduce_fit",
]
__all__ += _comm.__all__
