"""PFedDST, personalized federated learning with decentralized selection training (Fan et al.,
arXiv 2502.07750, 2025), as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_pfeddst.technique` (declaration), :mod:`suite_pfeddst.model` (round-time model) and
:mod:`suite_pfeddst.execute` (the algorithm on real arrays). Adds the workload
``pfeddst-gaussian-mixture-10`` (a 10-component Gaussian mixture; the zoo's has 5).
"""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_pfeddst.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_pfeddst.technique:gaussian_mixture_10", call=True, listed=True)
