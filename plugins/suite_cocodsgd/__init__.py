"""dlsys-suite plugin: CoCoD-SGD, computation and communication decoupled SGD (Shen et al., IJCAI 2019)."""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_cocodsgd.technique:TECHNIQUE", listed=True)
