"""dlsys-suite plugin: CoCoD-SGD, computation and communication decoupled SGD (Shen et al., IJCAI 2019)."""

from suite.api import hookimpl


@hookimpl
def suite_techniques():
    from suite_cocodsgd.technique import TECHNIQUE

    return [TECHNIQUE]
