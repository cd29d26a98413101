"""Odyssey / Chameleon (Zhou et al., arXiv 2508.21613): adaptive choice of recovery policy for
fault-tolerant DP x PP training -- a dlsys-suite technique plugin."""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_odyssey.technique:TECHNIQUE", listed=True)
