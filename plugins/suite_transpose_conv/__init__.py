"""dlsys-suite plugin: unified kernel-segregated transpose convolution (Tida et al., arXiv 2502.20493).

Technique ``transpose-conv``: variants ``scatter`` and ``zero-insert`` (baselines),
``kernel-segregated`` (2022) and ``unified`` (2025); execute and model fidelities.
"""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_transpose_conv.technique:TECHNIQUE", listed=True)
