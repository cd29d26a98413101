"""VirtualFlow (Or, Zhang, Freedman; MLSys 2022) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_virtualflow.technique` for the declaration, :mod:`suite_virtualflow.model` for the
cost model and the heterogeneous plan search, :mod:`suite_virtualflow.elastic` for the weighted
fair-sharing scheduler and the trace replay, and :mod:`suite_virtualflow.execute` for the
reference implementation on real arrays.
"""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_virtualflow.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_virtualflow.elastic:TRACE", listed=True)
