"""DFLOP data-aware 3D parallelism (An et al., 2026) as a dlsys-suite technique plugin (work in
progress: provides no technique yet).

Registered through the ``suite.plugins`` entry point like any third-party plugin.
"""

from suite import hookimpl


@hookimpl
def suite_techniques():
    return []
