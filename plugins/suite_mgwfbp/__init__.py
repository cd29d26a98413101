"""dlsys-suite plugin: MG-WFBP, merged-gradient wait-free backpropagation (Shi, Chu, Li, INFOCOM 2019)."""

from suite.api import hookimpl


@hookimpl
def suite_techniques():
    from suite_mgwfbp.technique import TECHNIQUE

    return [TECHNIQUE]
