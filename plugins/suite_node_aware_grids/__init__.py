"""node-aware-grids: node-aware processor grids for distributed tensor contractions (Irmler et al.,
arXiv 2307.08829, 2023) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_node_aware_grids.technique` for the declaration, :mod:`~suite_node_aware_grids.grids`
for the grid enumeration, rank renumbering and volumes, :mod:`~suite_node_aware_grids.model` for
the cost model, :mod:`~suite_node_aware_grids.execute` for the distributed contraction on real
arrays and :mod:`~suite_node_aware_grids.workloads` for the ``contraction`` workload kind.
"""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_node_aware_grids.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_node_aware_grids.workloads:contraction_workloads", call=True)
