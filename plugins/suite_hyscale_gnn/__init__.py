"""HyScale-GNN (Lin and Prasanna, arXiv 2303.00158, 2023) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_hyscale_gnn.technique` for the declaration, :mod:`suite_hyscale_gnn.model` for the
cost model, :mod:`suite_hyscale_gnn.execute` (with :mod:`suite_hyscale_gnn.gnn`) for the
reference implementation and :mod:`suite_hyscale_gnn.graphs` for the graphs it registers.
"""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_hyscale_gnn.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_hyscale_gnn.graphs:graph_workloads", call=True)
