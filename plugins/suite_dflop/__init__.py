"""DFLOP data-aware 3D parallelism (An et al., arXiv 2603.25120, 2026) as a dlsys-suite technique
plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_dflop.technique` (declaration), :mod:`suite_dflop.model` (cost model),
:mod:`suite_dflop.schedule` (LPT / ILP micro-batch scheduler), :mod:`suite_dflop.execute`
(reference implementation on real arrays), :mod:`suite_dflop.workloads` (modules, dataset mixes) and
:mod:`suite_dflop.constants` (the claim's cluster, shared by the declaration and the model).
"""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_dflop.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_dflop.workloads:all_workloads", call=True)
