"""COMET cluster and parallelisation co-design (Kadiyala et al.) as a dlsys-suite technique plugin (work in progress: provides no technique yet).

Registered through the ``suite.plugins`` entry point like any third-party plugin.
"""

from suite import hookimpl


@hookimpl
def suite_techniques():
    return []
