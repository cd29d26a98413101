"""dlsys-suite plugin: MG-WFBP, merged-gradient wait-free backpropagation (Shi, Chu, Li, INFOCOM 2019)."""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_mgwfbp.technique:TECHNIQUE", listed=True)
