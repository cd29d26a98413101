"""Odyssey / Chameleon (Zhou et al., arXiv 2508.21613): adaptive choice of recovery policy for
fault-tolerant DP x PP training -- a dlsys-suite technique plugin."""

from suite.api import hookimpl


@hookimpl
def suite_techniques():
    from suite_odyssey.technique import TECHNIQUE

    return [TECHNIQUE]
